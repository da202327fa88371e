//! Reading Paddle's PIR JSON (`serialize_pir_program`, Paddle 3.3.1; SPEC.md) into the IR.
//!
//! The result is the IR the text parser builds from Paddle's `print(program)` of the same
//! program: op names with their dialect (`"1.matmul"` → `pd_op.matmul`), `"A"` and `"OA"`
//! merged into one attribute dictionary sorted by key, the compressed parameter op `"p"`
//! expanded, and attribute values held as Paddle prints them (see [`super::attrs`]). So
//! `main.json` prints exactly as `before.ir`.
//!
//! Unknown ops and attributes are kept (the dialect ids must be Paddle's, as its own loader
//! requires). Where Paddle's loader is silently lenient irw refuses with a diagnostic instead:
//! an operand id not defined earlier (Paddle makes it a null operand and fails at run time), an
//! id defined twice (Paddle rebinds later uses), more than one region or block at the top.
//!
//! The document is read lazily: serde_json first checks the syntax of the whole file, so a
//! malformed file is refused, at the same place, before any op is read. The skeleton (the root,
//! regions, blocks, the `ops` arrays) is then split into maps and lists of raw slices of the
//! text with the document's [`Layout`] (one scan finds where each op and each large container
//! ends), and each op becomes a `serde_json` value only while it is converted. A document tree
//! of the whole file would take about 30× the file's size; this way reading takes the text, the
//! program being built and one op's tree.

use super::attrs::{attr_from_json, TagHints};
use super::dist::op_dist_from_json;
use super::locate::{layout, offset_of, Elements, JsonPath, Layout, Seg};
use super::recent::Recent;
use super::types::type_from_json;
use crate::diag::{Diagnostic, SourceFile};
use crate::dialect::paddle_json::{DIALECT_IDS, MAGIC, OP_DIST_TAG, PARAMETER, WHILE_SYNTAX_OPS};
use crate::ir::parse::MAX_REGION_DEPTH;
use crate::ir::{
    Attr, AttrDict, AttrId, BlockId, Context, Module, OpSyntax, Program, Sym, TypeId, ValueId,
};
use rustc_hash::FxHashMap;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// An error at a path in the document (built innermost first while unwinding).
#[derive(Debug)]
pub(crate) struct JErr {
    rev_path: Vec<Seg>,
    msg: String,
    hint: Option<String>,
    /// Where in memory the error is, when it is known more exactly than by its path: serde's
    /// position in a slice of the file's text ([`parse`]). An address, not an offset, because
    /// the slice does not know where in the file it starts; [`JErr::into_diagnostic`] turns it
    /// into the file offset.
    at_address: Option<usize>,
}

impl JErr {
    pub(crate) fn new(msg: impl Into<String>) -> Self {
        JErr {
            rev_path: Vec::new(),
            msg: msg.into(),
            hint: None,
            at_address: None,
        }
    }

    fn hint(mut self, h: impl Into<String>) -> Self {
        self.hint = Some(h.into());
        self
    }

    fn into_diagnostic(self, src: &SourceFile) -> Diagnostic {
        let path = JsonPath(self.rev_path.into_iter().rev().collect());
        let start = src.text.as_ptr() as usize;
        let off = match self.at_address {
            Some(a) if (start..=start + src.text.len()).contains(&a) => a - start,
            _ => offset_of(&src.text, &path),
        };
        let d = Diagnostic::at(src, off, self.msg);
        let d = if path.0.is_empty() {
            d
        } else {
            d.with_note(format!("at {path}"))
        };
        match self.hint {
            Some(h) => d.with_hint(h),
            None => d,
        }
    }
}

/// Adds path steps (outermost first) to an error from a nested call.
fn within<T>(r: Result<T, JErr>, segs: &[Seg]) -> Result<T, JErr> {
    r.map_err(|mut e| {
        e.rev_path.extend(segs.iter().rev().cloned());
        e
    })
}

fn field<'v>(o: &'v Map<String, Value>, key: &'static str) -> Result<&'v Value, JErr> {
    o.get(key).ok_or_else(|| missing_key(key))
}

fn missing_key(key: &'static str) -> JErr {
    JErr::new(format!("missing key \"{key}\""))
}

fn object<'v>(v: &'v Value, what: &str) -> Result<&'v Map<String, Value>, JErr> {
    v.as_object()
        .ok_or_else(|| JErr::new(format!("{what} must be a JSON object")))
}

fn array<'v>(v: &'v Value, what: &str) -> Result<&'v Vec<Value>, JErr> {
    v.as_array()
        .ok_or_else(|| JErr::new(format!("{what} must be a JSON array")))
}

/// An object whose members are still unparsed slices of the text.
type RawMap<'t> = BTreeMap<String, &'t str>;

/// Parses a slice of the (already syntax-checked) text. Depth is bounded by [`too_deep`], so
/// serde_json's own recursion limit is off, as for the whole document.
fn parse<'t, T: Deserialize<'t>>(raw: &'t str) -> Result<T, JErr> {
    let mut de = serde_json::Deserializer::from_str(raw);
    de.disable_recursion_limit();
    T::deserialize(&mut de).map_err(|e| {
        let at = offset_of_line_col(raw, e.line(), e.column());
        let mut err = JErr::new(malformed(&e));
        err.at_address = Some(raw.as_ptr() as usize + at);
        err
    })
}

/// serde_json's message without its "at line L column C", which counts from where the parsed
/// slice starts: the diagnostic's own position says where in the file.
fn malformed(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let bare = match text.rfind(" at line ") {
        Some(i) if e.line() > 0 => &text[..i],
        _ => &text,
    };
    format!("malformed JSON: {bare}")
}

/// An object read in one pass, member by member, into `Self`: the one visitor of
/// [`read_members`] hands each key (decoded) and its value to [`Members::member`].
trait Members<'t>: Default {
    /// What the object is, for serde's "invalid type" message.
    const WHAT: &'static str;
    /// Takes the value of `key` from `a` (a repeated key is taken again: the last one stays).
    fn member<A: serde::de::MapAccess<'t>>(
        &mut self,
        key: String,
        a: &mut A,
    ) -> Result<(), A::Error>;
}

/// Reads an object into `T` with [`Members::member`].
fn read_members<'t, T: Members<'t>, D: serde::Deserializer<'t>>(d: D) -> Result<T, D::Error> {
    struct Visit<T>(std::marker::PhantomData<T>);
    impl<'t, T: Members<'t>> serde::de::Visitor<'t> for Visit<T> {
        type Value = T;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str(T::WHAT)
        }
        fn visit_map<A: serde::de::MapAccess<'t>>(self, mut a: A) -> Result<T, A::Error> {
            let mut t = T::default();
            while let Some(k) = a.next_key::<String>()? {
                t.member(k, &mut a)?;
            }
            Ok(t)
        }
    }
    d.deserialize_map(Visit(std::marker::PhantomData))
}

/// An op object read in one pass: its members as values, except four kept as text: `regions`,
/// until its blocks are read (an op's own members are small; its regions hold ops), the
/// attribute lists `A` and `OA`, which ops of one kind mostly repeat word for word, so a pair
/// seen recently is not converted again ([`Reader::attrs`]), and the results `O`, whose types
/// repeat too ([`Reader::result_type`]). A repeated key keeps its last value, as for any
/// object read here.
#[derive(Default)]
struct OpMembers<'t> {
    members: Map<String, Value>,
    a: Option<&'t RawValue>,
    oa: Option<&'t RawValue>,
    o: Option<&'t RawValue>,
    regions: Option<&'t RawValue>,
}

impl<'t> Members<'t> for OpMembers<'t> {
    const WHAT: &'static str = "an op object";
    fn member<A: serde::de::MapAccess<'t>>(
        &mut self,
        key: String,
        a: &mut A,
    ) -> Result<(), A::Error> {
        match key.as_str() {
            "regions" => self.regions = Some(a.next_value()?),
            "A" => self.a = Some(a.next_value()?),
            "OA" => self.oa = Some(a.next_value()?),
            "O" => self.o = Some(a.next_value()?),
            _ => {
                let v: Value = a.next_value()?;
                self.members.insert(key, v);
            }
        }
        Ok(())
    }
}

impl<'t> Deserialize<'t> for OpMembers<'t> {
    fn deserialize<D: serde::Deserializer<'t>>(d: D) -> Result<Self, D::Error> {
        read_members(d)
    }
}

/// One entry of an op's `O`: its id as a value, and the text of its type `TT`. Other keys are
/// passed over; a repeated key keeps its last value.
#[derive(Default)]
struct ResultMembers<'t> {
    id: Option<Value>,
    tt: Option<&'t RawValue>,
}

impl<'t> Members<'t> for ResultMembers<'t> {
    const WHAT: &'static str = "a result object";
    fn member<A: serde::de::MapAccess<'t>>(
        &mut self,
        key: String,
        a: &mut A,
    ) -> Result<(), A::Error> {
        match key.as_str() {
            "%" => self.id = Some(a.next_value()?),
            "TT" => self.tt = Some(a.next_value()?),
            _ => {
                a.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

impl<'t> Deserialize<'t> for ResultMembers<'t> {
    fn deserialize<D: serde::Deserializer<'t>>(d: D) -> Result<Self, D::Error> {
        read_members(d)
    }
}

fn raw_field<'t>(o: &RawMap<'t>, key: &'static str) -> Result<&'t str, JErr> {
    o.get(key).copied().ok_or_else(|| missing_key(key))
}

/// The text `v` when it is an object, or an error naming `what`.
fn object_text<'t>(v: &'t str, what: &str) -> Result<&'t str, JErr> {
    if !v.trim_start().starts_with('{') {
        return Err(JErr::new(format!("{what} must be a JSON object")));
    }
    Ok(v)
}

/// The object `v` (a slice of `doc`) as a map of its members' texts, or an error naming `what`
/// when `v` is no object. A repeated key keeps its last value, as serde reads one.
fn raw_object<'t>(doc: &Doc<'t>, v: &'t str, what: &str) -> Result<RawMap<'t>, JErr> {
    let mut map = RawMap::new();
    for (key, value) in doc.layout.members(doc.text, object_text(v, what)?) {
        // Quoted as written: an escape is decoded as serde decodes it (or refused, as serde
        // refuses a lone surrogate).
        let key = match key.strip_prefix('"').and_then(|k| k.strip_suffix('"')) {
            Some(bare) if !bare.contains('\\') => bare.to_string(),
            _ => parse::<String>(key)?,
        };
        map.insert(key, value);
    }
    Ok(map)
}

/// The array `v` (a slice of `doc`) as its elements' texts, or an error naming `what` when `v`
/// is no array.
fn raw_array<'l, 't>(doc: &'l Doc<'t>, v: &'t str, what: &str) -> Result<Elements<'l, 't>, JErr> {
    if !v.trim_start().starts_with('[') {
        return Err(JErr::new(format!("{what} must be a JSON array")));
    }
    Ok(doc.layout.elements(doc.text, v))
}

/// The text being read and its [`Layout`].
struct Doc<'t> {
    text: &'t str,
    layout: Layout,
}

/// Whether `text` is Paddle JSON rather than the text form: both start with `{`, but only JSON
/// continues with a quoted key.
pub fn looks_like_json(text: &str) -> bool {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    t.strip_prefix('{')
        .is_some_and(|rest| rest.trim_start().starts_with('"'))
}

/// Reads a JSON program file into a module whose main program it is.
pub fn read_module(src: &SourceFile) -> Result<Module, Diagnostic> {
    read_module_with_hints(src, &mut TagHints::default())
}

/// [`read_module`], also recording the tags of attributes the dialect table does not know (so
/// [`super::write_module`] can write them back).
pub fn read_module_with_hints(
    src: &SourceFile,
    hints: &mut TagHints,
) -> Result<Module, Diagnostic> {
    let mut m = Module::default();
    m.main = read_program(&mut m.ctx, src, hints)?;
    Ok(m)
}

/// Reads a JSON startup program (`--startup FILE`) into `module`.
pub fn read_startup_into(
    module: &mut Module,
    src: &SourceFile,
    hints: &mut TagHints,
) -> Result<(), Diagnostic> {
    let p = read_program(&mut module.ctx, src, hints)?;
    module.startup = Some(p);
    Ok(())
}

/// Reads one program (a whole JSON file) with names, types and attributes interned in `ctx`.
fn read_program(
    ctx: &mut Context,
    src: &SourceFile,
    hints: &mut TagHints,
) -> Result<Program, Diagnostic> {
    if let Some(off) = too_deep(src.text.as_bytes()) {
        return Err(Diagnostic::at(
            src,
            off,
            format!("JSON nested deeper than {MAX_JSON_DEPTH} levels"),
        )
        .with_hint(format!(
            "irw reads regions nested up to {MAX_REGION_DEPTH} deep, as in its text form"
        )));
    }
    // The depth is bounded above, so serde_json's own limit (128, less than the JSON irw
    // writes for 20 nested regions) is not needed.
    let mut de = serde_json::Deserializer::from_str(&src.text);
    de.disable_recursion_limit();
    let mut docs = de.into_iter::<&RawValue>();
    let malformed = |e: serde_json::Error| {
        let off = offset_of_line_col(&src.text, e.line(), e.column());
        Diagnostic::at(src, off, malformed(&e))
    };
    let doc = match docs.next() {
        Some(r) => r.map_err(malformed)?,
        None => return Err(Diagnostic::at(src, 0, "malformed JSON: the file is empty")),
    };
    match docs.next() {
        None => {}
        Some(Err(e)) => return Err(malformed(e)),
        Some(Ok(_)) => {
            return Err(Diagnostic::at(
                src,
                docs.byte_offset(),
                "malformed JSON: a second document follows the program",
            ))
        }
    }
    let doc_layout = layout(&src.text);
    // The scan counted the ops: the arena is sized once rather than doubled as it fills, which
    // would leave room for up to twice the program at the peak of a large file.
    let mut prog = Program::new();
    prog.reserve(doc_layout.op_count());
    let outline = Doc {
        text: &src.text,
        layout: doc_layout,
    };
    let mut r = Reader {
        ctx,
        hints,
        prog,
        ids: FxHashMap::default(),
        doc: &outline,
        dicts: Recent::new(),
        types: Recent::new(),
        next_op: 0,
        depth: 0,
    };
    r.document(doc).map_err(|e| e.into_diagnostic(src))?;
    Ok(r.prog)
}

/// The deepest JSON irw reads: what it writes for [`MAX_REGION_DEPTH`] nested regions (six
/// levels each: op, `regions`, region, `blocks`, block, `ops`), with room for attributes.
const MAX_JSON_DEPTH: usize = 8 * MAX_REGION_DEPTH + 64;

/// The offset of the first bracket nested deeper than [`MAX_JSON_DEPTH`], if any: a linear scan
/// (strings skipped) before anything recurses.
fn too_deep(text: &[u8]) -> Option<usize> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (i, &b) in text.iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_JSON_DEPTH {
                    return Some(i);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

fn offset_of_line_col(text: &str, line: usize, col: usize) -> usize {
    let start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    (start + col.saturating_sub(1)).min(text.len())
}

struct Reader<'a> {
    ctx: &'a mut Context,
    hints: &'a mut TagHints,
    prog: Program,
    /// JSON value id → value; one map for the whole program, as in Paddle's loader.
    ids: FxHashMap<i64, ValueId>,
    doc: &'a Doc<'a>,
    /// Recent dictionaries by op name and attribute list texts ([`Reader::attrs`]).
    dicts: Recent<(Sym, &'a str, Option<&'a str>), AttrId>,
    /// Recent result types by their text ([`Reader::result_type`]).
    types: Recent<&'a str, TypeId>,
    next_op: usize,
    /// Region ops around the op being read: the text form holds at most
    /// [`MAX_REGION_DEPTH`] nested regions, so a deeper program is refused here, where it is
    /// read, rather than printed as text irw cannot parse.
    depth: usize,
}

impl<'a> Reader<'a> {
    fn document(&mut self, doc: &'a RawValue) -> Result<(), JErr> {
        let root = raw_object(self.doc, doc.get(), "a Paddle program file").map_err(|e| {
            e.hint(
                "Paddle's `serialize_pir_program` writes {\"base_code\":{...},\"program\":{...}}",
            )
        })?;
        let base: Value = parse(raw_field(&root, "base_code")?)?;
        let base = within(object(&base, "base_code"), &[Seg::Key("base_code")])?;
        let magic = base.get("magic").and_then(Value::as_str);
        if magic != Some(MAGIC) {
            return Err(JErr::new(format!(
                "not a Paddle PIR program: base_code.magic is not \"{MAGIC}\""
            ))
            .hint("irw reads files written by paddle.base.core.serialize_pir_program")
            .at_key("base_code"));
        }
        match base.get("version") {
            None => {
                return Err(
                    JErr::new("base_code.version (the PIR version, an integer) is missing")
                        .at_key("base_code"),
                )
            }
            Some(v) if !v.is_u64() => {
                return Err(JErr::new(format!(
                    "base_code.version is {v}: the PIR version is a non-negative integer"
                ))
                .at_path(&[Seg::Key("base_code"), Seg::Key("version")]))
            }
            Some(_) => {}
        }
        let program = within(
            raw_object(self.doc, raw_field(&root, "program")?, "program"),
            &[Seg::Key("program")],
        )?;
        within(self.top(&program), &[Seg::Key("program")])
    }

    fn top(&mut self, program: &RawMap<'a>) -> Result<(), JErr> {
        let regions = within(
            raw_array(self.doc, raw_field(program, "regions")?, "regions").map(Vec::from_iter),
            &[Seg::Key("regions")],
        )?;
        if regions.len() != 1 {
            return Err(JErr::new(format!(
                "a program has exactly one top-level region, this one has {}",
                regions.len()
            ))
            .at_key("regions"));
        }
        let top = self.prog.top_block();
        let segs = [Seg::Key("regions"), Seg::Index(0)];
        let region = within(raw_object(self.doc, regions[0], "a region"), &segs)?;
        let blocks = within(
            raw_array(self.doc, raw_field(&region, "blocks")?, "blocks").map(Vec::from_iter),
            &[Seg::Key("regions"), Seg::Index(0), Seg::Key("blocks")],
        )?;
        if blocks.len() != 1 {
            return Err(JErr::new(format!(
                "the top-level region has exactly one block, this one has {}",
                blocks.len()
            ))
            .at_path(&segs));
        }
        within(
            self.block(blocks[0], top),
            &[
                Seg::Key("regions"),
                Seg::Index(0),
                Seg::Key("blocks"),
                Seg::Index(0),
            ],
        )
    }

    fn define(&mut self, id: i64, v: ValueId) -> Result<(), JErr> {
        if id == 0 {
            return Err(JErr::new("value id 0 is reserved for the null value"));
        }
        if self.ids.insert(id, v).is_some() {
            return Err(JErr::new(format!("value id {id} is defined twice")).hint(
                "Paddle's loader would silently rebind later uses to the second definition",
            ));
        }
        Ok(())
    }

    fn value_id(v: &Value) -> Result<i64, JErr> {
        Self::id_of(v.get("%"))
    }

    /// An object's value id, given its `%` member.
    fn id_of(v: Option<&Value>) -> Result<i64, JErr> {
        v.ok_or_else(|| JErr::new("missing key \"%\" (a value id)"))?
            .as_i64()
            .ok_or_else(|| JErr::new("a value id must be an integer"))
    }

    fn block(&mut self, v: &'a str, block: BlockId) -> Result<(), JErr> {
        let b = raw_object(self.doc, v, "a block")?;
        let args: Value = parse(raw_field(&b, "args")?)?;
        let args = within(array(&args, "args"), &[Seg::Key("args")])?;
        for (i, a) in args.iter().enumerate() {
            within(
                self.block_arg(a, block, None),
                &[Seg::Key("args"), Seg::Index(i)],
            )?;
        }
        if let Some(kw) = b.get("kwargs") {
            let kw: Value = parse(kw)?;
            let kw = within(array(&kw, "kwargs"), &[Seg::Key("kwargs")])?;
            for (i, a) in kw.iter().enumerate() {
                let key = a
                    .get("key")
                    .and_then(Value::as_str)
                    .ok_or_else(|| JErr::new("a keyword argument needs a string \"key\""))
                    .and_then(|k| {
                        printable_name("a keyword argument name", k, kwarg_name_char)
                            .map_err(|e| e.at_key("key"))
                            .map(|_| k)
                    })
                    .map_err(|e| e.at_path(&[Seg::Key("kwargs"), Seg::Index(i)]))?;
                within(
                    self.block_arg(a, block, Some(key)),
                    &[Seg::Key("kwargs"), Seg::Index(i)],
                )?;
            }
        }
        let ops = within(
            raw_array(self.doc, raw_field(&b, "ops")?, "ops"),
            &[Seg::Key("ops")],
        )?;
        for (i, op) in ops.enumerate() {
            within(self.op(op, block), &[Seg::Key("ops"), Seg::Index(i)])?;
        }
        Ok(())
    }

    fn block_arg(&mut self, v: &Value, block: BlockId, key: Option<&str>) -> Result<(), JErr> {
        let a = object(v, "a block argument")?;
        let id = field(a, "#")?
            .as_i64()
            .ok_or_else(|| JErr::new("a block argument's \"#\" must be an integer id"))?;
        let ty = type_from_json(self.ctx, field(a, "TT")?, &mut self.hints.meshes)
            .map_err(|m| JErr::new(m).at_key("TT"))?;
        let value = match key {
            Some(k) => {
                let sym = self.ctx.sym(k);
                if self.prog.find_kwarg(block, sym).is_some() {
                    return Err(JErr::new(format!("keyword argument `{k}` is given twice")));
                }
                self.prog.add_kwarg(block, sym, ty, Context::EMPTY_ATTRS)
            }
            None => self.prog.add_block_arg(block, ty, Context::EMPTY_ATTRS),
        };
        self.define(id, value)
    }

    /// Reads `{"N":name,"AT":attr}` entries into `out`, learning tags the table lacks.
    fn named_attrs(
        &mut self,
        op: &str,
        list: &Value,
        out: &mut Vec<(String, Attr)>,
    ) -> Result<(), JErr> {
        for (i, e) in array(list, "an attribute list")?.iter().enumerate() {
            let at = |err: JErr| err.at_path(&[Seg::Index(i)]);
            let name = e
                .get("N")
                .and_then(Value::as_str)
                .ok_or_else(|| at(JErr::new("an attribute needs a string \"N\" (its name)")))?;
            attribute_name(name).map_err(|e| at(e.at_key("N")))?;
            let at_v = field(
                e.as_object()
                    .ok_or_else(|| at(JErr::new("an attribute entry must be an object")))?,
                "AT",
            )
            .map_err(at)?;
            let bad = |m: String| at(JErr::new(format!("attribute `{name}`: {m}")).at_key("AT"));
            if at_v.get("#").and_then(Value::as_str) == Some(OP_DIST_TAG) {
                let d = op_dist_from_json(at_v, &mut self.hints.meshes).map_err(bad)?;
                out.push((name.to_string(), Attr::OpDist(Box::new(d))));
                continue;
            }
            let (attr, tag) = attr_from_json(at_v).map_err(bad)?;
            self.hints.learn(op, name, tag);
            out.push((name.to_string(), attr));
        }
        Ok(())
    }

    /// The dictionary of an op named `name` (`sym`) whose attribute lists are the texts `a`
    /// and `oa`: found in the cache of recent ones, else converted and interned. Converting the
    /// same texts for the same op gives the same dictionary and teaches `hints` nothing new, so
    /// a hit is what a conversion would give.
    fn attrs(
        &mut self,
        sym: Sym,
        name: &str,
        a: &'a str,
        oa: Option<&'a str>,
    ) -> Result<AttrId, JErr> {
        if let Some(&id) = self.dicts.get(&(sym, a, oa)) {
            return Ok(id);
        }
        let mut entries = Vec::new();
        within(
            self.named_attrs(name, &parse(a)?, &mut entries),
            &[Seg::Key("A")],
        )?;
        if let Some(oa) = oa {
            within(
                self.named_attrs(name, &parse(oa)?, &mut entries),
                &[Seg::Key("OA")],
            )?;
        }
        let id = self.dict(entries)?;
        self.dicts.insert((sym, a, oa), id);
        Ok(id)
    }

    /// The type whose JSON is the text `tt`: found in the cache of recent ones, else converted.
    fn result_type(&mut self, tt: &'a str) -> Result<TypeId, String> {
        if let Some(&ty) = self.types.get(&tt) {
            return Ok(ty);
        }
        let v: Value = parse(tt).map_err(|e| e.msg)?;
        let ty = type_from_json(self.ctx, &v, &mut self.hints.meshes)?;
        self.types.insert(tt, ty);
        Ok(ty)
    }

    fn dict(&mut self, mut entries: Vec<(String, Attr)>) -> Result<AttrId, JErr> {
        // Paddle prints attributes sorted by name; the text parser keeps that order.
        // Sorted, a name given twice is next to itself: found in linear time however many
        // attributes an op has.
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        if let Some(w) = entries.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(JErr::new(format!("attribute `{}` is given twice", w[0].0)));
        }
        let map = AttrDict {
            entries: entries
                .into_iter()
                .map(|(k, v)| (crate::ir::intern_key(&k), v))
                .collect(),
        };
        Ok(self.ctx.intern_attrs(map))
    }

    fn place(&mut self, op: crate::ir::OpId, block: BlockId) {
        self.prog.append(block, op);
        if let Some(off) = self.doc.layout.op_start(self.next_op) {
            self.prog.set_position(op, off);
        }
        self.next_op += 1;
    }

    /// One op: its members become values (small) but for `regions`, which stay raw until
    /// their blocks are read, and the attribute lists, read through [`Reader::attrs`].
    fn op(&mut self, v: &'a str, block: BlockId) -> Result<(), JErr> {
        let OpMembers {
            mut members,
            a: raw_a,
            oa: raw_oa,
            o: raw_o,
            regions: raw_regions,
        } = parse(object_text(v, "an op")?)?;
        let key = field(&members, "#")?
            .as_str()
            .ok_or_else(|| JErr::new("an op's \"#\" must be a string (\"<dialect id>.<name>\")"))?;
        if key == PARAMETER.key {
            // Its attribute lists are not Paddle's usual ones (SPEC.md §3.1).
            for (k, raw) in [("A", raw_a), ("OA", raw_oa), ("O", raw_o)] {
                if let Some(raw) = raw {
                    members.insert(k.to_string(), parse(raw.get())?);
                }
            }
            return self.parameter(&members, block);
        }
        let o = &members;
        let name = op_name(key).map_err(|e| e.at_key("#"))?;
        printable_name("an op name", &name, op_name_char).map_err(|e| e.at_key("#"))?;
        let mut operands = Vec::new();
        let ins = within(array(field(o, "I")?, "\"I\""), &[Seg::Key("I")])?;
        for (i, x) in ins.iter().enumerate() {
            let id = Self::value_id(x).map_err(|e| e.at_path(&[Seg::Key("I"), Seg::Index(i)]))?;
            if id == 0 {
                operands.push(None);
                continue;
            }
            let v = self.ids.get(&id).copied().ok_or_else(|| {
                JErr::new(format!("value id {id} is used before it is defined"))
                    .hint("Paddle's loader would silently make this operand <<NULL VALUE>> and fail at run time")
                    .at_path(&[Seg::Key("I"), Seg::Index(i)])
            })?;
            operands.push(Some(v));
        }
        let raw_o = raw_o.ok_or_else(|| missing_key("O"))?;
        let outs = within(raw_array(self.doc, raw_o.get(), "\"O\""), &[Seg::Key("O")])?;
        let mut ids = Vec::new();
        let mut tys = Vec::new();
        for (i, x) in outs.enumerate() {
            let here = [Seg::Key("O"), Seg::Index(i)];
            // What is no object has neither key, as `Value::get` finds none in it.
            let x: ResultMembers = match object_text(x, "a result") {
                Ok(x) => parse(x)?,
                Err(_) => ResultMembers::default(),
            };
            ids.push(Self::id_of(x.id.as_ref()).map_err(|e| e.at_path(&here))?);
            let tt = x
                .tt
                .ok_or_else(|| JErr::new("missing key \"TT\" (the result type)").at_path(&here))?;
            let ty = self.result_type(tt.get()).map_err(|m| {
                JErr::new(m).at_path(&[Seg::Key("O"), Seg::Index(i), Seg::Key("TT")])
            })?;
            let unset = crate::dialect::Dialect::get()
                .spec(&name)
                .is_some_and(|s| s.result_unset(i));
            tys.push(if unset {
                super::types::with_unset_dims(self.ctx, ty)
            } else {
                ty
            });
        }
        let sym = self.ctx.sym(&name);
        let raw_a = raw_a.ok_or_else(|| missing_key("A"))?;
        let attrs = self.attrs(sym, &name, raw_a.get(), raw_oa.map(RawValue::get))?;
        let regions = match raw_regions {
            Some(r) => within(
                raw_array(self.doc, r.get(), "regions").map(Vec::from_iter),
                &[Seg::Key("regions")],
            )?,
            None => Vec::new(),
        };
        // As the text parser counts: the top block and each enclosing region op's block.
        if !regions.is_empty() && self.depth + 1 >= MAX_REGION_DEPTH {
            return Err(JErr::new(format!(
                "regions nested deeper than {MAX_REGION_DEPTH} levels"
            ))
            .hint(format!(
                "irw reads regions nested up to {MAX_REGION_DEPTH} deep, as in its text form"
            ))
            .at_key("regions"));
        }
        let syntax = if regions.is_empty() {
            OpSyntax::Plain
        } else if WHILE_SYNTAX_OPS.contains(&name.as_str()) {
            OpSyntax::While
        } else {
            OpSyntax::Regions
        };
        let op = self.prog.create_op(sym, attrs, &operands, &tys, syntax);
        self.place(op, block);
        for (i, &id) in ids.iter().enumerate() {
            let r = self.prog.result(op, i);
            self.define(id, r)
                .map_err(|e| e.at_path(&[Seg::Key("O"), Seg::Index(i)]))?;
        }
        for (ri, region) in regions.iter().enumerate() {
            let here = [Seg::Key("regions"), Seg::Index(ri)];
            let blocks = within(
                raw_object(self.doc, region, "a region")
                    .and_then(|r| raw_array(self.doc, raw_field(&r, "blocks")?, "blocks"))
                    .map(Vec::from_iter),
                &here,
            )?;
            if blocks.len() != 1 {
                return Err(JErr::new(format!(
                    "irw supports regions of exactly one block, this one has {}",
                    blocks.len()
                ))
                .at_path(&here));
            }
            let b = self.prog.add_region(op);
            self.depth += 1;
            within(
                self.block(blocks[0], b),
                &[
                    Seg::Key("regions"),
                    Seg::Index(ri),
                    Seg::Key("blocks"),
                    Seg::Index(0),
                ],
            )?;
            self.depth -= 1;
        }
        Ok(())
    }

    /// The compressed `builtin.parameter` (SPEC.md §3.1).
    fn parameter(&mut self, o: &Map<String, Value>, block: BlockId) -> Result<(), JErr> {
        let f = &PARAMETER;
        let mut entries = Vec::new();
        let flag = |v: &Value| match v.as_i64() {
            Some(0) => Some(Attr::Array(vec![Attr::Bool(false)])),
            Some(1) => Some(Attr::Array(vec![Attr::Bool(true)])),
            _ => None,
        };
        let a = within(array(field(o, "A")?, "\"A\""), &[Seg::Key("A")])?;
        if a.len() != f.a_flags.len() + 1 {
            return Err(JErr::new(format!(
                "a parameter op's \"A\" is [{}, {}], {} entries; this one has {}",
                f.a_flags.join(", "),
                f.a_name,
                f.a_flags.len() + 1,
                a.len()
            ))
            .at_key("A"));
        }
        for (i, name) in f.a_flags.iter().enumerate() {
            let attr = flag(&a[i]).ok_or_else(|| {
                JErr::new(format!("`{name}` must be 0 or 1"))
                    .at_path(&[Seg::Key("A"), Seg::Index(i)])
            })?;
            entries.push((name.to_string(), attr));
        }
        let pname = a[f.a_flags.len()].as_str().ok_or_else(|| {
            JErr::new(format!("`{}` must be a string", f.a_name))
                .at_path(&[Seg::Key("A"), Seg::Index(f.a_flags.len())])
        })?;
        entries.push((f.a_name.to_string(), Attr::string(pname)));
        if let Some(oa) = o.get("OA") {
            let oa = within(array(oa, "\"OA\""), &[Seg::Key("OA")])?;
            if oa.len() != f.oa_flags.len() {
                return Err(JErr::new(format!(
                    "a parameter op's \"OA\" is [{}]; this one has {} entries",
                    f.oa_flags.join(", "),
                    oa.len()
                ))
                .at_key("OA"));
            }
            for (i, name) in f.oa_flags.iter().enumerate() {
                let attr = flag(&oa[i]).ok_or_else(|| {
                    JErr::new(format!("`{name}` must be 0 or 1"))
                        .at_path(&[Seg::Key("OA"), Seg::Index(i)])
                })?;
                entries.push((name.to_string(), attr));
            }
        }
        for key in ["DA", "QA"] {
            if let Some(list) = o.get(key) {
                let seg = if key == "DA" {
                    Seg::Key("DA")
                } else {
                    Seg::Key("QA")
                };
                within(self.named_attrs(f.op, list, &mut entries), &[seg])?;
            }
        }
        let attrs = self.dict(entries)?;
        let out = within(
            object(field(o, "O")?, "a parameter op's \"O\""),
            &[Seg::Key("O")],
        )?;
        let id = Self::value_id(&Value::Object(out.clone())).map_err(|e| e.at_key("O"))?;
        let ty = type_from_json(
            self.ctx,
            field(out, "TT").map_err(|e| e.at_key("O"))?,
            &mut self.hints.meshes,
        )
        .map_err(|m| JErr::new(m).at_path(&[Seg::Key("O"), Seg::Key("TT")]))?;
        let sym = self.ctx.sym(f.op);
        let op = self.prog.create_op(sym, attrs, &[], &[ty], OpSyntax::Plain);
        self.place(op, block);
        let r = self.prog.result(op, 0);
        self.define(id, r).map_err(|e| e.at_key("O"))
    }
}

impl JErr {
    fn at_key(self, k: &'static str) -> Self {
        self.at_path(&[Seg::Key(k)])
    }

    fn at_path(mut self, segs: &[Seg]) -> Self {
        self.rev_path.extend(segs.iter().rev().cloned());
        self
    }
}

/// Names are printed bare in Paddle's text (attribute keys, `%kwarg_NAME`) or between quotes
/// with no escapes (op names), so a name the text grammar (`grammar/pir.pest`) cannot hold is
/// refused where the JSON has it: printed, it would read back as another program
/// (`op_role:2,zz` as `op_role:2`).
fn printable_name(what: &str, name: &str, ok: fn(char) -> bool) -> Result<(), JErr> {
    match name.chars().find(|&c| !ok(c)) {
        _ if name.is_empty() => Err(JErr::new(format!("{what} is empty"))),
        None => Ok(()),
        Some(c) => Err(JErr::new(format!(
            "{what} `{}` holds {c:?}, which Paddle's program text cannot print in it",
            name.escape_debug()
        ))
        .hint(match what {
            "an op name" => {
                "an op name may hold any character but a quote, a backslash or a control character"
            }
            _ => "letters, digits and `_ . @ - /` (and `( )` in attribute names)",
        })),
    }
}

/// An attribute name the text can print bare: its characters, and its parentheses paired.
fn attribute_name(name: &str) -> Result<(), JErr> {
    printable_name("an attribute name", name, attr_key_char)?;
    if !parens_balanced(name) {
        return Err(JErr::new(format!(
            "an attribute name `{}` has parentheses that do not pair up: printed, they would unbalance the brackets of its op's line",
            name.escape_debug()
        )));
    }
    Ok(())
}

/// Whether every `(` of `name` is closed by a later `)` and every `)` closes one. The text's
/// bracket check counts the parentheses of attribute keys (Paddle's keys such as `result(0)` pair
/// them), so a key that does not pair them prints a line that cannot be read back.
fn parens_balanced(name: &str) -> bool {
    let mut depth = 0usize;
    for c in name.chars() {
        match c {
            '(' => depth += 1,
            ')' => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return false,
            },
            _ => {}
        }
    }
    depth == 0
}

/// `grammar/pir.pest`'s `op_name`: between quotes, no quote, backslash or control character.
fn op_name_char(c: char) -> bool {
    !c.is_control() && c != '"' && c != '\\'
}

/// `grammar/pir.pest`'s `attr_key`.
fn attr_key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_.@()-/".contains(c)
}

/// `grammar/pir.pest`'s `kwarg_name`.
fn kwarg_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_.@-/".contains(c)
}

/// `"1.matmul"` → `pd_op.matmul` (split at the first dot, as Paddle does).
fn op_name(key: &str) -> Result<String, JErr> {
    let Some((id, rest)) = key.split_once('.') else {
        return Err(JErr::new(format!(
            "op `{key}` has no dialect id (expected \"<dialect id>.<name>\", e.g. \"1.matmul\")"
        )));
    };
    let dialect = DIALECT_IDS
        .iter()
        .find(|(i, _)| *i == id)
        .map(|(_, d)| *d)
        .ok_or_else(|| {
            JErr::new(format!("unknown dialect id `{id}` in op `{key}`")).hint(format!(
                "Paddle 3.3.1 knows the ids {}",
                DIALECT_IDS
                    .iter()
                    .map(|(i, d)| format!("{i} ({d})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
    Ok(format!("{dialect}.{rest}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_json_by_content() {
        assert!(looks_like_json("{\"base_code\":{}}"));
        assert!(looks_like_json("\n  {\n    \"program\": 1}"));
        assert!(!looks_like_json(
            "{\n    (%0) = \"pd_op.full\" () {} : () -> tensor<f32>\n}\n"
        ));
        assert!(!looks_like_json("{\n}\n"));
        assert!(!looks_like_json(""));
    }

    const ONE_OP: &str = r##"{"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[
      {"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":[
        {"#":"1.full","I":[],"O":[{"%":1,"TT":{"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[],"NCHW",[],0]}}],
         "A":[{"N":"shape","AT":{"#":"1.a_intarray","D":[]}},{"N":"value","AT":{"#":"0.a_f64","D":2.0}},
              {"N":"dtype","AT":{"#":"1.a_dtype","D":"float32"}},{"N":"place","AT":{"#":"1.a_place","D":[1,0,""]}}]}]}]}]}}"##;

    fn read_text(text: &str) -> Result<String, Diagnostic> {
        read_module(&SourceFile::new("p.json", text)).map(|m| crate::ir::print_module(&m))
    }

    #[test]
    fn keys_of_the_levels_above_the_ops_are_decoded_as_serde_decodes_them() {
        let plain = read_text(ONE_OP).unwrap();
        let escaped = ONE_OP
            .replacen(r#""program""#, r#""\u0070rogram""#, 1)
            .replacen(r#""ops""#, r#""o\u0070s""#, 1);
        assert_eq!(read_text(&escaped).unwrap(), plain);
        // serde accepts a lone surrogate while checking the syntax, and refuses it as a key.
        let lone = ONE_OP.replacen(r#""program""#, r#""\ud800""#, 1);
        let e = read_text(&lone).unwrap_err();
        assert!(e.message.starts_with("malformed JSON: "), "{}", e.message);
    }

    #[test]
    fn attribute_lists_read_once_are_found_again_by_op_and_both_lists() {
        let op = |name: &str, a: &str, oa: &str, id: u32| {
            format!(
                r##"{{"#":"1.{name}","I":[],"O":[{{"%":{id},"TT":{{"#":"0.t_dtensor","D":[{{"#":"0.t_f32"}},[],"NCHW",[],0]}}}}],"A":[{a}],"OA":[{oa}]}}"##
            )
        };
        let k = r##"{"N":"k","AT":{"#":"0.a_i64","D":3}}"##;
        let sg = |b: bool| {
            format!(
                r##"{{"N":"stop_gradient","AT":{{"#":"0.a_array","D":[{{"#":"0.a_bool","D":{b}}}]}}}}"##
            )
        };
        let ops = [
            op("my_op_a", k, &sg(true), 1),
            op("my_op_a", k, &sg(false), 2),
            op("my_op_b", k, &sg(true), 3),
            op("my_op_a", k, &sg(true), 4),
        ];
        let text = format!(
            r##"{{"base_code":{{"magic":"pir","trainable":true,"version":4}},"program":{{"regions":[{{"#":"region_0","blocks":[{{"#":"block_0","args":[],"ops":[{}]}}]}}]}}}}"##,
            ops.join(",")
        );
        let mut hints = TagHints::default();
        let m = read_module_with_hints(&SourceFile::new("p.json", &text), &mut hints).unwrap();
        let printed = crate::ir::print_module(&m);
        let dicts: Vec<&str> = printed
            .lines()
            .filter_map(|l| Some(l.split_once(") {")?.1.split_once('}')?.0))
            .collect();
        assert_eq!(
            dicts,
            [
                "k:3,stop_gradient:[true]",
                "k:3,stop_gradient:[false]",
                "k:3,stop_gradient:[true]",
                "k:3,stop_gradient:[true]",
            ]
        );
        // Each op learns the tags of its own attributes, though the lists are the same text.
        for name in ["pd_op.my_op_a", "pd_op.my_op_b"] {
            assert_eq!(
                hints.get(name, "k"),
                Some(crate::dialect::paddle_json::AttrTag::One(
                    crate::dialect::paddle_json::Tag::I64
                )),
                "{name}"
            );
        }
    }

    #[test]
    fn result_types_read_once_are_found_again_by_their_text() {
        let op = |id: u32, dims: &str| {
            format!(
                r##"{{"#":"1.my_op","I":[],"A":[],"O":[{{"%":{id},"TT":{{"#":"0.t_dtensor","D":[{{"#":"0.t_f32"}},[{dims}],"NCHW",[],0]}}}}]}}"##
            )
        };
        let text = |ops: &[String]| {
            format!(
                r##"{{"base_code":{{"magic":"pir","trainable":true,"version":4}},"program":{{"regions":[{{"#":"region_0","blocks":[{{"#":"block_0","args":[],"ops":[{}]}}]}}]}}}}"##,
                ops.join(",")
            )
        };
        let printed = read_text(&text(&[op(1, "2"), op(2, "3"), op(3, "2")])).unwrap();
        let types: Vec<&str> = printed
            .lines()
            .filter_map(|l| l.rsplit_once("-> ").map(|(_, t)| t))
            .collect();
        assert_eq!(types, ["tensor<2xf32>", "tensor<3xf32>", "tensor<2xf32>"]);
        // A result that is no object has no id, as before its type is read.
        let e = read_text(&text(&[op(1, "2").replace(r#""O":[{"#, r#""O":[7,{"#)])).unwrap_err();
        assert_eq!(e.message, "missing key \"%\" (a value id)");
    }

    #[test]
    fn op_names_take_the_first_dot() {
        assert_eq!(op_name("1.matmul").ok(), Some("pd_op.matmul".into()));
        assert_eq!(op_name("0.a.b").ok(), Some("builtin.a.b".into()));
        assert!(op_name("9.relu").is_err());
        assert!(op_name("relu").is_err());
    }
}
