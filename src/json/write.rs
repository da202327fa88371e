//! Writing the IR as Paddle PIR JSON that Paddle 3.3.1's `deserialize_pir_program` loads and
//! its executor runs (SPEC.md §11).
//!
//! - Header `{"magic":"pir","trainable":true,"version":4}`, one region, one block.
//! - Ops `"<dialect id>.<name>"`; `builtin.parameter` in Paddle's compressed `"p"` form.
//! - Value ids as Paddle numbers them: results `1, 2, ...` in write order over the whole program
//!   (an op's results before the ops of its regions), block arguments `-1, -2, ...`, `0` for an
//!   absent operand.
//! - Every attribute with the tag the dialect table gives ([`super::attrs`]); `persistable` and
//!   `stop_gradient` in `"OA"`.
//! - Keyword arguments (the `@GRAD@MERGE` buffers): Paddle 3.3.1 cannot load block kwargs back
//!   and the format cannot mark them persistable (SPEC.md §7), so each becomes the op
//!   [`KWARG_AS_OP`] describes, named after it, persistable, first in the block, and its uses
//!   refer to that op's result. Paddle's executor binds it by name to the variable the startup
//!   program creates. In a dist program the op has the kwarg's `pd_dist` type and the
//!   `op_dist_attr` of its result, as Paddle's own persistable `pd_op.data` ops there do.
//! - Dist types and `op_dist_attr` as [`super::dist`] describes.
//!
//! The program's skeleton (regions, blocks, ops) is written straight into the output text, op by
//! op, with each object's keys in sorted order, as Paddle's own writer (nlohmann) sorts them;
//! only the small leaves of one op (an attribute, a type) are built as `serde_json` values,
//! whose maps sort their keys too. An op's attribute lists (by op name, dictionary and result
//! count) and a result's type are converted once and then copied while a fixed-size cache
//! ([`super::recent`]) holds them: ops of one kind mostly share them. So memory beyond the text
//! is one op's worth and that cache, however large the program. The output is compact, as
//! Paddle's is by default. Nothing is written anywhere until both programs have been converted,
//! so a refusal leaves no partial file.

use super::attrs::{attr_to_json, describe, write_tag, TagHints};
use super::check::check_module;
use super::dist::op_dist_to_json;
use super::recent::Recent;
use super::refusal::{Origins, Refusal};
use super::types::type_to_json;
use crate::diag::Diagnostic;
use crate::dialect::paddle_json::{
    AttrTag, Tag, ARRAY_TAG, DIALECT_IDS, KWARG_AS_OP, MAGIC, PARAMETER, PIR_VERSION, RESULT_ATTRS,
};
use crate::ir::dist::OP_DIST_ATTR;
use crate::ir::{
    Attr, AttrId, BlockId, Context, Module, OpDistAttr, OpId, Program, SlotType, Sym, Type, TypeId,
    ValueId, Which,
};
use serde_json::{json, Value};
use std::rc::Rc;

/// The JSON texts of a module: main, and startup if the module has one.
#[derive(Debug, Clone)]
pub struct JsonModule {
    pub main: String,
    pub startup: Option<String>,
}

/// Checks the module (`super::check`) and writes both programs; a refusal without a position
/// ([`write_module_from`] shows it in the input files).
pub fn write_module(m: &Module, hints: &TagHints) -> Result<JsonModule, Diagnostic> {
    write_module_from(m, hints, Origins::default())
}

/// [`write_module`], a refusal shown at the op's position in the file it was read from
/// (`origins`), or naming the rule that built it.
pub fn write_module_from(
    m: &Module,
    hints: &TagHints,
    origins: Origins<'_>,
) -> Result<JsonModule, Diagnostic> {
    write_both(m, hints).map_err(|r| r.to_diagnostic(m, origins))
}

fn write_both(m: &Module, hints: &TagHints) -> Result<JsonModule, Refusal> {
    check_module(m)?;
    let main = write_program(&m.ctx, &m.main, hints, Which::Main)?;
    let startup = match &m.startup {
        Some(s) => Some(write_program(&m.ctx, s, hints, Which::Startup)?),
        None => None,
    };
    Ok(JsonModule { main, startup })
}

/// Writes one program. `which` only names it in messages.
fn write_program(
    ctx: &Context,
    p: &Program,
    hints: &TagHints,
    which: Which,
) -> Result<String, Refusal> {
    let mut w = Writer {
        ctx,
        p,
        hints,
        out: Vec::new(),
        ids: vec![0; p.value_capacity()],
        next_result: 1,
        next_arg: -1,
        regions: 0,
        blocks: 0,
        op_index: 0,
        attr_texts: Recent::new(),
        type_texts: Recent::new(),
    };
    w.out.extend_from_slice(b"{\"base_code\":");
    let header = json!({"magic": MAGIC, "trainable": true, "version": PIR_VERSION});
    w.value(&header);
    w.out.extend_from_slice(b",\"program\":{\"regions\":[");
    w.region(&[p.top_block()]).map_err(|(op, msg)| {
        let prog = which.name();
        let message = match op {
            Some((op, n)) => format!(
                "cannot write the {prog} program as Paddle JSON: `{}` (op {n} of the {prog} program): {msg}",
                ctx.str(p.op_name(op))
            ),
            None => format!("cannot write the {prog} program as Paddle JSON: {msg}"),
        };
        Refusal {
            which,
            op: op.map(|(op, _)| op),
            message,
        }
    })?;
    w.out.extend_from_slice(b"]}}");
    // Every byte came from serde_json's writer or from the ASCII punctuation above.
    String::from_utf8(w.out).map_err(|_| Refusal {
        which,
        op: None,
        message: "internal error: the JSON writer produced invalid UTF-8".into(),
    })
}

/// `pd_op.matmul` → `1.matmul`.
pub(crate) fn compressed_name(name: &str) -> Result<String, String> {
    let (dialect, rest) = name
        .split_once('.')
        .ok_or_else(|| format!("op name `{name}` has no dialect"))?;
    let id = DIALECT_IDS
        .iter()
        .find(|(_, d)| *d == dialect)
        .map(|(i, _)| *i)
        .ok_or_else(|| format!("Paddle 3.3.1 cannot load ops of dialect `{dialect}`"))?;
    Ok(format!("{id}.{rest}"))
}

/// An error: the op it is about (with its 1-based index in write order) and why.
type WErr = (Option<(OpId, usize)>, String);

struct Writer<'a> {
    ctx: &'a Context,
    p: &'a Program,
    hints: &'a TagHints,
    /// The text written so far.
    out: Vec<u8>,
    /// JSON id of each value (0 = not written yet).
    ids: Vec<i64>,
    next_result: i64,
    next_arg: i64,
    regions: usize,
    blocks: usize,
    op_index: usize,
    /// By op name, attribute dictionary and result count: the op's `"A"` and `"OA"` lists as
    /// written. Ops of one kind mostly share a dictionary, so most are converted once.
    attr_texts: Recent<(Sym, AttrId, usize), Rc<AttrLists>>,
    /// By type and whether its dimensions are written unset: a result's `"TT"` as written.
    type_texts: Recent<(TypeId, bool), Rc<str>>,
}

/// An op's attribute lists as written: `"A"`, and `"OA"` (the per-result flags).
struct AttrLists {
    a: Box<str>,
    oa: Box<str>,
}

fn named(name: &str, at: Value) -> Value {
    json!({"N": name, "AT": at})
}

fn bool_array(items: &[bool]) -> Value {
    let d: Vec<Value> = items
        .iter()
        .map(|b| json!({"#": "0.a_bool", "D": b}))
        .collect();
    json!({"#": ARRAY_TAG, "D": d})
}

impl Writer<'_> {
    fn push(&mut self, text: &str) {
        self.out.extend_from_slice(text.as_bytes());
    }

    /// Appends a small value; serde_json sorts its maps' keys and escapes its strings.
    fn value(&mut self, v: &Value) {
        // Serializing a `Value` into a `Vec` cannot fail: no I/O, and its keys are strings.
        let _ = serde_json::to_writer(&mut self.out, v);
    }

    /// Appends a JSON string.
    fn string(&mut self, s: &str) {
        let _ = serde_json::to_writer(&mut self.out, s);
    }

    fn values(&mut self, items: &[Value]) {
        self.out.push(b'[');
        for (i, v) in items.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            self.value(v);
        }
        self.out.push(b']');
    }

    /// `{"#":"region_N","blocks":[...]}`.
    fn region(&mut self, blocks: &[BlockId]) -> Result<(), WErr> {
        let label = format!("region_{}", self.regions);
        self.regions += 1;
        self.push("{\"#\":");
        self.string(&label);
        self.push(",\"blocks\":[");
        for (i, &b) in blocks.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            self.block(b)?;
        }
        self.push("]}");
        Ok(())
    }

    /// `{"#":"block_N","args":[...],"ops":[...]}`.
    fn block(&mut self, b: BlockId) -> Result<(), WErr> {
        let label = format!("block_{}", self.blocks);
        self.blocks += 1;
        let mut args = Vec::new();
        for a in self.p.block_args(b) {
            let id = self.next_arg;
            self.next_arg -= 1;
            self.ids[a.value.index()] = id;
            let tt = type_to_json(self.ctx, self.p.value_type(a.value), &self.hints.meshes)
                .map_err(|m| (None, format!("a block argument: {m}")))?;
            args.push(json!({"#": id, "TT": tt}));
        }
        self.push("{\"#\":");
        self.string(&label);
        self.push(",\"args\":");
        self.values(&args);
        self.push(",\"ops\":[");
        let mut first = true;
        for k in self.p.block_kwargs(b) {
            let v = self.kwarg_op(k)?;
            if !std::mem::take(&mut first) {
                self.out.push(b',');
            }
            self.value(&v);
        }
        for op in self.p.block_ops(b) {
            self.op_index += 1;
            if !std::mem::take(&mut first) {
                self.out.push(b',');
            }
            self.op(op)?;
        }
        self.push("]}");
        Ok(())
    }

    fn define(&mut self, v: ValueId) -> i64 {
        let id = self.next_result;
        self.next_result += 1;
        self.ids[v.index()] = id;
        id
    }

    fn attr(&self, op: &str, key: &str, a: &Attr) -> Result<Value, String> {
        Ok(named(key, self.attr_value(op, key, a)?))
    }

    /// The `"AT"` of an attribute.
    fn attr_value(&self, op: &str, key: &str, a: &Attr) -> Result<Value, String> {
        if let Attr::OpDist(d) = a {
            return op_dist_to_json(d, &self.hints.meshes)
                .map_err(|why| format!("attribute `{key}`: {why}"));
        }
        let tag = write_tag(op, key, a, self.hints)?;
        attr_to_json(a, tag).map_err(|why| {
            format!(
                "attribute `{key}` must be {} for Paddle (dialect table): {why}",
                describe(tag)
            )
        })
    }

    /// A keyword argument as a persistable op bound by name (module docs).
    fn kwarg_op(&mut self, k: &crate::ir::Kwarg) -> Result<Value, WErr> {
        let kop = &KWARG_AS_OP;
        let name = self.ctx.str(k.name);
        let fail = |m: String| (None, format!("keyword argument `{name}`: {m}"));
        let ty = self.p.value_type(k.value);
        let (shape, dtype, dist) = match self.ctx.ty(ty) {
            Type::Tensor { shape, dtype } => (shape, dtype, None),
            Type::Dist { shape, dtype, dist } => (shape, dtype, Some(dist)),
            _ => {
                return Err(fail(format!(
                    "its type `{}` is not a tensor",
                    self.ctx.type_text(ty)
                )))
            }
        };
        let place = self
            .ctx
            .attrs(k.attrs)
            .get(kop.place_attr)
            .cloned()
            .unwrap_or_else(|| Attr::Word(kop.default_place.into()));
        let attrs = [
            (kop.name_attr, Attr::string(name)),
            (
                kop.shape_attr,
                Attr::Array(shape.iter().map(|&d| Attr::Int(d)).collect()),
            ),
            (kop.dtype_attr, Attr::Word(dtype.attr_name().into())),
            (kop.place_attr, place),
        ];
        let mut a = Vec::with_capacity(attrs.len() + 1);
        for (key, v) in &attrs {
            a.push(self.attr(kop.op, key, v).map_err(fail)?);
        }
        // A dist program's data ops carry the op_dist_attr of their result, as Paddle's do (none
        // when the distribution has no mesh).
        if let Some(d) = dist.and_then(|d| OpDistAttr::from_types(&[], &[SlotType::Dist(d)])) {
            a.push(
                self.attr(kop.op, OP_DIST_ATTR, &Attr::OpDist(Box::new(d)))
                    .map_err(fail)?,
            );
        }
        let tt = type_to_json(self.ctx, ty, &self.hints.meshes).map_err(fail)?;
        let id = self.define(k.value);
        Ok(json!({
            "#": compressed_name(kop.op).map_err(fail)?,
            "I": [],
            "O": [{"%": id, "TT": tt}],
            "A": a,
            "OA": [named("persistable", bool_array(&[true])), named("stop_gradient", bool_array(&[true]))],
        }))
    }

    fn operand_ids(&self, op: OpId) -> Result<Vec<i64>, String> {
        let mut out = Vec::with_capacity(self.p.num_operands(op));
        for (i, v) in self.p.operands(op).enumerate() {
            let id = match v {
                None => 0,
                Some(v) => match self.ids[v.index()] {
                    0 => {
                        return Err(format!(
                            "operand {i} is not defined before this op (Paddle would make it a \
                             null operand and fail at run time)"
                        ))
                    }
                    id => id,
                },
            };
            out.push(id);
        }
        Ok(out)
    }

    /// An op: `{"#":..,"A":[..],"I":[..],"O":[..],"OA":[..]}` and its `"regions"` if it has
    /// any, written as they are converted.
    fn op(&mut self, op: OpId) -> Result<(), WErr> {
        let here = Some((op, self.op_index));
        let sym = self.p.op_name(op);
        let name = self.ctx.str(sym);
        if name == PARAMETER.op {
            let v = self.parameter(op).map_err(|m| (here, m))?;
            self.value(&v);
            return Ok(());
        }
        let key = compressed_name(name).map_err(|m| (here, m))?;
        let operands = self.operand_ids(op).map_err(|m| (here, m))?;
        let n_results = self.p.num_results(op);
        let spec = crate::dialect::Dialect::get().spec(name);
        let mut results = Vec::with_capacity(n_results);
        for (i, r) in self.p.results(op).enumerate() {
            let ty = (
                self.p.value_type(r),
                spec.is_some_and(|s| s.result_unset(i)),
            );
            let text = match self.type_texts.get(&ty) {
                Some(text) => text.clone(),
                None => {
                    let text: Rc<str> = self
                        .type_text(ty.0, ty.1)
                        .map_err(|m| (here, format!("result {i}: {m}")))?;
                    self.type_texts.insert(ty, text.clone());
                    text
                }
            };
            results.push((self.define(r), text));
        }
        let key_lists = (sym, self.p.op_attrs(op), n_results);
        let lists = match self.attr_texts.get(&key_lists) {
            Some(lists) => lists.clone(),
            None => {
                let lists = Rc::new(
                    self.attr_lists(name, key_lists.1, n_results)
                        .map_err(|m| (here, m))?,
                );
                self.attr_texts.insert(key_lists, lists.clone());
                lists
            }
        };
        self.push("{\"#\":");
        self.string(&key);
        self.push(",\"A\":");
        self.push(&lists.a);
        self.push(",\"I\":[");
        for (i, id) in operands.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            self.push("{\"%\":");
            self.push(&id.to_string());
            self.out.push(b'}');
        }
        self.push("],\"O\":[");
        for (i, (id, tt)) in results.iter().enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            self.push("{\"%\":");
            self.push(&id.to_string());
            self.push(",\"TT\":");
            self.push(tt);
            self.out.push(b'}');
        }
        self.push("],\"OA\":");
        self.push(&lists.oa);
        let regions = self.p.regions(op);
        if !regions.is_empty() {
            self.push(",\"regions\":[");
            for (i, &r) in regions.iter().enumerate() {
                if i > 0 {
                    self.out.push(b',');
                }
                self.region(self.p.region_blocks(r))?;
            }
            self.out.push(b']');
        }
        self.out.push(b'}');
        Ok(())
    }

    /// The `"TT"` of a result of type `ty`, its dimensions written unset when `unset`.
    fn type_text(&self, ty: TypeId, unset: bool) -> Result<Rc<str>, String> {
        let mut tt = type_to_json(self.ctx, ty, &self.hints.meshes)?;
        if unset {
            super::types::unset_dims(&mut tt);
        }
        Ok(tt.to_string().into())
    }

    /// The `"A"` and `"OA"` lists of an op named `name` with attributes `attrs` and
    /// `n_results` results: `persistable` and `stop_gradient` (one flag a result) in `"OA"`,
    /// every other attribute in `"A"`, each list in sorted order.
    ///
    /// Paddle's loader takes the attributes as written and its executor fails on one the op's
    /// definition has and the op lacks (`[place] MUST in attribute map`; a `set_parameter`
    /// without `parameter_name` crashes it). So an attribute with a default is written with
    /// it, the value irw's executor computes with too ([`crate::dialect::AttrSpec::default_value`]),
    /// and an op lacking a required one is refused.
    fn attr_lists(&self, name: &str, attrs: AttrId, n_results: usize) -> Result<AttrLists, String> {
        let dict = self.ctx.attrs(attrs);
        let mut a = Vec::new();
        let mut oa = Vec::new();
        for (k, v) in dict.iter() {
            if RESULT_ATTRS.contains(&k) {
                let flags =
                    result_flags(v, n_results).map_err(|m| format!("attribute `{k}` {m}"))?;
                oa.push(named(k, bool_array(&flags)));
            } else {
                a.push((k.to_string(), self.attr_value(name, k, v)?));
            }
        }
        let definition = crate::dialect::Dialect::get().spec(name);
        let mut filled = false;
        for d in definition.map_or(&[][..], |s| s.attrs) {
            if dict.get(d.name).is_some() {
                continue;
            }
            let Some(v) = d.default_value() else {
                return Err(format!(
                    "{}; Paddle cannot run an op without it",
                    crate::dialect::missing_message(d)
                ));
            };
            a.push((d.name.to_string(), self.attr_value(name, d.name, v)?));
            filled = true;
        }
        if filled {
            a.sort_by(|x, y| x.0.cmp(&y.0));
        }
        let a = a.into_iter().map(|(k, v)| named(&k, v)).collect();
        Ok(AttrLists {
            a: Value::Array(a).to_string().into(),
            oa: Value::Array(oa).to_string().into(),
        })
    }

    /// `builtin.parameter` in the compressed form (SPEC.md §3.1).
    fn parameter(&mut self, op: OpId) -> Result<Value, String> {
        let f = &PARAMETER;
        if self.p.num_operands(op) != 0 || self.p.num_results(op) != 1 {
            return Err("a parameter op has no operands and one result".into());
        }
        let dict = self.ctx.attrs(self.p.op_attrs(op));
        let flag = |name: &str| -> Result<i64, String> {
            let Some(v) = dict.get(name) else {
                // A parameter without the flag (a scheduler's learning rate): what Paddle's
                // own writer gives it.
                return f
                    .flag_defaults
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|&(_, b)| i64::from(b))
                    .ok_or_else(|| format!("Paddle's parameter form needs attribute `{name}`"));
            };
            let b = v.as_bool().ok_or_else(|| {
                format!(
                    "attribute `{name}` must be [true] or [false], not `{}`",
                    v.to_text()
                )
            })?;
            Ok(i64::from(b))
        };
        let mut a = Vec::with_capacity(f.a_flags.len() + 1);
        for name in f.a_flags {
            a.push(json!(flag(name)?));
        }
        let pname = dict
            .get(f.a_name)
            .and_then(|v| v.as_str().map(|s| s.into_owned()))
            .ok_or_else(|| format!("Paddle's parameter form needs a string `{}`", f.a_name))?;
        a.push(json!(pname));
        let mut oa = Vec::with_capacity(f.oa_flags.len());
        for name in f.oa_flags {
            oa.push(json!(flag(name)?));
        }
        let mut da = Vec::new();
        let mut qa = Vec::new();
        for (k, v) in dict.iter() {
            let k: &str = k;
            if f.a_flags.contains(&k) || f.oa_flags.contains(&k) || k == f.a_name {
                continue;
            }
            if f.da.contains(&k) {
                da.push(self.attr(f.op, k, v)?);
            } else if f.qa.contains(&k) {
                qa.push(self.attr(f.op, k, v)?);
            } else {
                return Err(format!(
                    "Paddle's parameter form has no place for attribute `{k}` (Paddle's own \
                     writer refuses it too)"
                ));
            }
        }
        let r = self.p.result(op, 0);
        let tt = type_to_json(self.ctx, self.p.value_type(r), &self.hints.meshes)?;
        let id = self.define(r);
        Ok(json!({
            "#": f.key, "A": a, "OA": oa, "DA": da, "QA": qa,
            "O": {"%": id, "TT": tt},
        }))
    }
}

/// `persistable:[true,false]` → one flag per result.
fn result_flags(v: &Attr, n_results: usize) -> Result<Vec<bool>, String> {
    let tag = AttrTag::ArrayOf(Tag::Bool);
    let items = v.as_array().ok_or_else(|| {
        format!(
            "must be {} (one per result), not `{}`",
            describe(tag),
            v.to_text()
        )
    })?;
    if items.len() != n_results {
        return Err(format!(
            "has {} entries for {n_results} results: `{}`",
            items.len(),
            v.to_text()
        ));
    }
    items
        .iter()
        .map(|b| match b {
            Attr::Bool(b) => Ok(*b),
            _ => Err(format!("must hold only true/false, not `{}`", v.to_text())),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `main` (JSON read with its tags learned) and returns the written ops.
    fn written_ops(main: &str) -> Result<Vec<Value>, Diagnostic> {
        let mut hints = TagHints::default();
        let src = crate::diag::SourceFile::new("p.json", main);
        let m = super::super::read::read_module_with_hints(&src, &mut hints)?;
        let out = write_module(&m, &hints)?;
        let v: Value = serde_json::from_str(&out.main).expect("irw writes JSON");
        Ok(v["program"]["regions"][0]["blocks"][0]["ops"]
            .as_array()
            .cloned()
            .unwrap_or_default())
    }

    fn program_of(ops: &[String]) -> String {
        format!(
            r##"{{"base_code":{{"magic":"pir","trainable":true,"version":4}},"program":{{"regions":[{{"#":"region_0","blocks":[{{"#":"block_0","args":[],"ops":[{}]}}]}}]}}}}"##,
            ops.join(",")
        )
    }

    fn unknown_op(name: &str, k_tag: &str, results: &[u32]) -> String {
        let outs: Vec<String> = results
            .iter()
            .map(|id| format!(r##"{{"%":{id},"TT":{{"#":"0.t_dtensor","D":[{{"#":"0.t_f32"}},[],"NCHW",[],0]}}}}"##))
            .collect();
        format!(
            r##"{{"#":"1.{name}","I":[],"O":[{}],"A":[{{"N":"k","AT":{{"#":"{k_tag}","D":3}}}}],"OA":[{{"N":"stop_gradient","AT":{{"#":"0.a_array","D":[{{"#":"0.a_bool","D":true}}]}}}}]}}"##,
            outs.join(",")
        )
    }

    #[test]
    fn each_op_writes_its_own_tags_for_a_shared_dictionary() {
        // Read, both ops hold the one dictionary {k:3,stop_gradient:[true]}; each was given its
        // own tag for `k`, and gets it back.
        let ops = written_ops(&program_of(&[
            unknown_op("my_op_a", "0.a_i64", &[1]),
            unknown_op("my_op_b", "0.a_i32", &[2]),
            unknown_op("my_op_a", "0.a_i64", &[3]),
        ]))
        .unwrap();
        let tags: Vec<&str> = ops
            .iter()
            .filter_map(|o| o["A"][0]["AT"]["#"].as_str())
            .collect();
        assert_eq!(tags, ["0.a_i64", "0.a_i32", "0.a_i64"]);
    }

    #[test]
    fn result_flags_are_checked_against_each_op_s_results() {
        // The same op and dictionary with one result, then two: one flag for two results.
        let e = written_ops(&program_of(&[
            unknown_op("my_op", "0.a_i64", &[1]),
            unknown_op("my_op", "0.a_i64", &[2, 3]),
        ]))
        .unwrap_err();
        assert!(
            e.message.contains("has 1 entries for 2 results"),
            "{}",
            e.message
        );
    }

    #[test]
    fn names_compress_to_dialect_ids() {
        assert_eq!(
            compressed_name("pd_op.matmul").ok(),
            Some("1.matmul".into())
        );
        assert_eq!(
            compressed_name("builtin.set_parameter").ok(),
            Some("0.set_parameter".into())
        );
        assert!(compressed_name("onednn_op.matmul").is_err());
    }

    #[test]
    fn result_flags_must_match_the_results() {
        let a = Attr::Array(vec![Attr::Bool(true), Attr::Bool(false)]);
        assert_eq!(result_flags(&a, 2).ok(), Some(vec![true, false]));
        assert!(result_flags(&a, 1).is_err());
        assert!(result_flags(&Attr::Bool(true), 1).is_err());
    }
}
