//! Random valid programs for the property tests (`tests/prop_*.rs`), written in Paddle's exact
//! text form, so that parsing and printing one must give back the same bytes.
//!
//! A program is a tree of [`Item`]s: plain ops with random names, operands (including
//! `<<NULL VALUE>>`), result types (tensors of every dtype, `vec[...]`, distributed tensors,
//! opaque dialect types) and attribute dictionaries (ints, floats in Paddle's spellings, bools,
//! strings with escapes and brackets, words, calls, arrays, nested dictionaries); `pd_op.if`-style
//! ops with one to three regions; `pd_op.while`-style ops with block arguments; keyword
//! arguments (`^kw:`) in the top block; optionally a startup program.
//!
//! Operands are drawn as raw indices and resolved when the text is rendered against the values
//! visible at that point (earlier in the block or in an enclosing block, never inside a closed
//! region), so every generated program satisfies the verifier by construction. Values whose
//! type is not printed where they are defined (keyword and block arguments, `while` results) get
//! a fixed type that every later use prints.
//!
//! The generator is independent of `irw::print`: it knows the format from Paddle's dumps
//! (`regions.ir`, the MLP fixtures), not from the printer it is used to test.
#![allow(dead_code)]

use irw::format_float_like_paddle;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use std::fmt::Write;

/// An attribute value.
#[derive(Debug, Clone)]
pub enum AttrV {
    Int(i64),
    /// The number as written (`0.5`, `1e-08`, `-inf`, `nan`).
    Float(String),
    Bool(bool),
    /// The text between the quotes, escapes as written.
    Str(String),
    Array(Vec<AttrV>),
    Word(&'static str),
    Call(&'static str),
    Dict(Vec<(String, AttrV)>),
}

pub type Dict = Vec<(String, AttrV)>;

/// A type.
#[derive(Debug, Clone)]
pub enum Ty {
    Tensor(Vec<i64>, &'static str),
    Vec(Vec<Ty>),
    Dist(Vec<i64>, &'static str, &'static str),
    Other(&'static str),
}

/// One line (or region op) of a block.
#[derive(Debug, Clone)]
pub enum Item {
    Plain {
        name: &'static str,
        /// `None` is `<<NULL VALUE>>`; `Some(i)` picks a visible value (modulo their number).
        operands: Vec<Option<usize>>,
        attrs: Dict,
        results: Vec<Ty>,
    },
    If {
        cond: usize,
        attrs: Dict,
        results: Vec<Ty>,
        regions: Vec<Vec<Item>>,
    },
    While {
        cond: usize,
        inputs: Vec<usize>,
        /// Types of the results (not printed at the op; learned from later uses).
        results: Vec<Ty>,
        /// Block arguments: attributes and type.
        args: Vec<(Dict, Ty)>,
        body: Vec<Item>,
    },
}

/// A whole file: keyword arguments and ops of main, and optionally a startup program.
#[derive(Debug, Clone)]
pub struct ProgSpec {
    pub kwargs: Vec<(String, Dict, Ty)>,
    pub main: Vec<Item>,
    pub startup: Option<Vec<Item>>,
    pub trailing_blank_lines: usize,
}

const DTYPES: &[&str] = &[
    "f32", "f64", "f16", "bf16", "i64", "i32", "i16", "i8", "u8", "b", "c64", "c128",
];
const WORDS: &[&str] = &[
    "float32",
    "bfloat16",
    "Undefined",
    "int64",
    "NCHW",
    "_x",
    "a.b_c",
];
const CALLS: &[&str] = &[
    "Place(cpu)",
    "Place(undefined:0)",
    "Place(gpu:0)",
    "Replicate()",
    "Shard(0)",
    "Partial(sum)",
];
const KEYS: &[&str] = &[
    "op_role",
    "dtype",
    "stop_gradient",
    "persistable",
    "place",
    "value",
    "shape",
    "name",
    "struct_name",
    "operand(0)",
    "result(1)",
    "x.y",
    "k@GRAD",
    "a-b",
    "p/q",
    "_z",
];
const OP_NAMES: &[&str] = &[
    "test.op",
    "test.other_op",
    "custom.relu2",
    "my_dialect.op-1",
    "t.unicodé",
    "a b.with space",
    "pd_op.my_custom_op",
    "x",
];
const OTHER_TYPES: &[&str] = &[
    "pd_op.tensor_array<f32>",
    "!foo.bar",
    "pd_op.selected_rows<4x8xf32>",
    "custom.ty<a<b>,c>",
];
const DIST_RESTS: &[&str] = &[
    "mesh_shape:[1],dims_mapping:[-1,-1],placements:[Replicate()]",
    " mesh_shape:[2,2],dims_mapping:[0],partial(1)",
];
const KWARG_NAMES: &[&str] = &[
    "linear_0.w_0",
    "linear_0.b_0",
    "x",
    "learning_rate_0",
    "a@GRAD@MERGE",
    "w-1/part",
    "_",
];
/// Pieces of string contents: plain text, escapes, brackets that must not confuse the scanners.
const STR_PIECES: &[&str] = &[
    "a",
    "Z",
    "0",
    " ",
    "_",
    "/Linear_0/",
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    "<",
    ">",
    ",",
    ":",
    "=",
    "->",
    "%0",
    "é",
    "中",
    "\\\"",
    "\\\\",
    "\\n",
    "\\t",
    "'",
    "^kw:",
    "<<NULL VALUE>>",
    "//",
];

fn dims() -> impl Strategy<Value = Vec<i64>> {
    vec(prop_oneof![Just(-1i64), 0i64..4096], 0..4)
}

pub fn ty() -> impl Strategy<Value = Ty> {
    let leaf = prop_oneof![
        4 => (dims(), select(DTYPES)).prop_map(|(d, t)| Ty::Tensor(d, t)),
        1 => (dims(), select(DTYPES), select(DIST_RESTS)).prop_map(|(d, t, r)| Ty::Dist(d, t, r)),
        1 => select(OTHER_TYPES).prop_map(Ty::Other),
    ];
    leaf.prop_recursive(2, 6, 3, |inner| vec(inner, 0..3).prop_map(Ty::Vec))
}

fn float_text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => any::<f64>().prop_map(format_float_like_paddle),
        1 => select(&["inf", "-inf", "nan", "-nan", "0.5", "1e-08", "-0", "1.5e+300", "0.1"][..])
            .prop_map(str::to_string),
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => select(KEYS).prop_map(str::to_string),
        1 => (
            select(&b"abcxyz_"[..]),
            vec(select(&b"abz019_"[..]), 0..6)
        )
            .prop_map(|(c, rest)| {
                let mut k = String::from(c as char);
                k.extend(rest.into_iter().map(char::from));
                k
            }),
    ]
}

fn str_body() -> impl Strategy<Value = String> {
    vec(select(STR_PIECES), 0..8).prop_map(|v| v.concat())
}

/// Keys of one dictionary must be distinct: later duplicates are dropped.
fn dedup(d: Dict) -> Dict {
    let mut out: Dict = Vec::with_capacity(d.len());
    for (k, v) in d {
        if !out.iter().any(|(k2, _)| *k2 == k) {
            out.push((k, v));
        }
    }
    out
}

pub fn attr_value() -> impl Strategy<Value = AttrV> {
    let leaf = prop_oneof![
        any::<i64>().prop_map(AttrV::Int),
        float_text().prop_map(AttrV::Float),
        any::<bool>().prop_map(AttrV::Bool),
        str_body().prop_map(AttrV::Str),
        select(WORDS).prop_map(AttrV::Word),
        select(CALLS).prop_map(AttrV::Call),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(AttrV::Array),
            vec((key(), inner), 0..4).prop_map(|d| AttrV::Dict(dedup(d))),
        ]
    })
}

pub fn dict() -> impl Strategy<Value = Dict> {
    vec((key(), attr_value()), 0..5).prop_map(dedup)
}

fn plain() -> impl Strategy<Value = Item> {
    (
        select(OP_NAMES),
        vec(
            prop_oneof![1 => Just(None), 6 => any::<usize>().prop_map(Some)],
            0..4,
        ),
        dict(),
        vec(ty(), 0..3),
    )
        .prop_map(|(name, operands, attrs, results)| Item::Plain {
            name,
            operands,
            attrs,
            results,
        })
}

/// A block: mostly plain ops, some region ops nested up to `depth` levels.
pub fn items(depth: u32) -> BoxedStrategy<Vec<Item>> {
    if depth == 0 {
        return vec(plain(), 0..6).boxed();
    }
    let item = prop_oneof![
        8 => plain(),
        1 => (any::<usize>(), dict(), vec(ty(), 0..3), vec(items(depth - 1), 1..4)).prop_map(
            |(cond, attrs, results, regions)| Item::If { cond, attrs, results, regions }
        ),
        1 => (
            any::<usize>(),
            vec(any::<usize>(), 0..3),
            vec(ty(), 0..3),
            vec((dict(), ty()), 0..3),
            items(depth - 1),
        )
            .prop_map(|(cond, inputs, results, args, body)| Item::While {
                cond,
                inputs,
                results,
                args,
                body
            }),
    ];
    vec(item, 0..8).boxed()
}

pub fn program() -> impl Strategy<Value = ProgSpec> {
    (
        vec(
            (select(KWARG_NAMES), dict(), ty()).prop_map(|(n, d, t)| (n.to_string(), d, t)),
            0..4,
        ),
        items(2),
        proptest::option::weighted(0.3, items(1)),
        0usize..3,
    )
        .prop_map(|(kwargs, main, startup, trailing_blank_lines)| {
            // Keyword-argument names are unique within a block.
            let mut seen = Vec::new();
            let kwargs = kwargs
                .into_iter()
                .filter(|(n, _, _)| {
                    let fresh = !seen.contains(n);
                    seen.push(n.clone());
                    fresh
                })
                .collect();
            ProgSpec {
                kwargs,
                main,
                startup,
                trailing_blank_lines,
            }
        })
}

// ---- rendering -------------------------------------------------------------------------

pub fn attr_text(v: &AttrV, out: &mut String) {
    match v {
        AttrV::Int(i) => {
            let _ = write!(out, "{i}");
        }
        AttrV::Float(s) => out.push_str(s),
        AttrV::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        AttrV::Str(s) => {
            out.push('"');
            out.push_str(s);
            out.push('"');
        }
        AttrV::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                attr_text(x, out);
            }
            out.push(']');
        }
        AttrV::Word(w) | AttrV::Call(w) => out.push_str(w),
        AttrV::Dict(d) => dict_text(d, out),
    }
}

pub fn dict_text(d: &Dict, out: &mut String) {
    out.push('{');
    for (i, (k, v)) in d.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(k);
        out.push(':');
        attr_text(v, out);
    }
    out.push('}');
}

pub fn ty_text(t: &Ty) -> String {
    fn dims(s: &mut String, d: &[i64], dt: &str) {
        for x in d {
            let _ = write!(s, "{x}x");
        }
        s.push_str(dt);
    }
    let mut s = String::new();
    match t {
        Ty::Tensor(d, dt) => {
            s.push_str("tensor<");
            dims(&mut s, d, dt);
            s.push('>');
        }
        Ty::Dist(d, dt, rest) => {
            s.push_str("pd_dist.tensor<");
            dims(&mut s, d, dt);
            s.push(',');
            s.push_str(rest);
            s.push('>');
        }
        Ty::Vec(items) => {
            s.push_str("vec[");
            let parts: Vec<String> = items.iter().map(ty_text).collect();
            s.push_str(&parts.join(","));
            s.push(']');
        }
        Ty::Other(o) => s.push_str(o),
    }
    s
}

/// A visible value: its printed name and its type.
#[derive(Clone)]
struct Val {
    name: String,
    ty: String,
}

struct Renderer {
    out: String,
    next: usize,
    next_arg: usize,
}

impl Renderer {
    fn indent(&mut self, depth: usize) {
        for _ in 0..depth {
            self.out.push_str("    ");
        }
    }

    fn pick(scope: &[Val], i: usize) -> Option<Val> {
        if scope.is_empty() {
            None
        } else {
            Some(scope[i % scope.len()].clone())
        }
    }

    /// Renders `items` at `depth`; `scope` holds the values visible at the start and receives
    /// those the block defines.
    fn block(&mut self, items: &[Item], depth: usize, scope: &mut Vec<Val>) {
        for it in items {
            match it {
                Item::Plain {
                    name,
                    operands,
                    attrs,
                    results,
                } => {
                    let ops: Vec<Option<Val>> = operands
                        .iter()
                        .map(|o| o.and_then(|i| Self::pick(scope, i)))
                        .collect();
                    self.indent(depth);
                    let res = self.results(results.len());
                    let _ = write!(self.out, "({}) = \"{name}\" (", res.join(", "));
                    let names: Vec<&str> = ops
                        .iter()
                        .map(|o| o.as_ref().map_or("<<NULL VALUE>>", |v| v.name.as_str()))
                        .collect();
                    self.out.push_str(&names.join(", "));
                    self.out.push_str(") ");
                    dict_text(attrs, &mut self.out);
                    let tys: Vec<&str> = ops
                        .iter()
                        .map(|o| o.as_ref().map_or("<<NULL TYPE>>", |v| v.ty.as_str()))
                        .collect();
                    let rtys: Vec<String> = results.iter().map(ty_text).collect();
                    let _ = writeln!(self.out, " : ({}) -> {}", tys.join(", "), rtys.join(", "));
                    scope.extend(res.into_iter().zip(rtys).map(|(name, ty)| Val { name, ty }));
                }
                Item::If {
                    cond,
                    attrs,
                    results,
                    regions,
                } => {
                    let Some(c) = Self::pick(scope, *cond) else {
                        continue;
                    };
                    // Each block yields values of the outer scope (visible in every block),
                    // and the results take their types, as the verifier requires.
                    let yields: Vec<Val> = (0..results.len())
                        .filter_map(|i| Self::pick(scope, c.name.len() + i))
                        .collect();
                    self.indent(depth);
                    let res = self.results(yields.len());
                    let _ = write!(
                        self.out,
                        "({}) = \"pd_op.if\" ({}) ",
                        res.join(", "),
                        c.name
                    );
                    dict_text(attrs, &mut self.out);
                    let rtys: Vec<String> = yields.iter().map(|v| v.ty.clone()).collect();
                    let _ = writeln!(self.out, " -> {} {{", rtys.join(", "));
                    for (i, r) in regions.iter().enumerate() {
                        if i > 0 {
                            self.indent(depth);
                            self.out.push_str("} else {\n");
                        }
                        let mut inner = scope.clone();
                        self.block(r, depth + 1, &mut inner);
                        if !yields.is_empty() {
                            self.yield_line(depth + 1, &yields);
                        }
                    }
                    self.indent(depth);
                    self.out.push_str("}\n");
                    scope.extend(res.into_iter().zip(rtys).map(|(name, ty)| Val { name, ty }));
                }
                Item::While {
                    cond,
                    inputs,
                    results,
                    args,
                    body,
                } => {
                    let Some(c) = Self::pick(scope, *cond) else {
                        continue;
                    };
                    let ins: Vec<Val> = inputs
                        .iter()
                        .filter_map(|&i| Self::pick(scope, i))
                        .collect();
                    let yields: Vec<Val> = (0..results.len())
                        .filter_map(|i| Self::pick(scope, c.name.len() + i))
                        .collect();
                    self.indent(depth);
                    let res = self.results(yields.len());
                    let _ = write!(
                        self.out,
                        "({}) = \"pd_op.while\" (cond={}",
                        res.join(", "),
                        c.name
                    );
                    for (i, v) in ins.iter().enumerate() {
                        self.out.push_str(if i == 0 { ", inputs=" } else { ", " });
                        self.out.push_str(&v.name);
                    }
                    self.out.push_str(") { \n");
                    let mut inner = scope.clone();
                    if !args.is_empty() {
                        self.indent(depth);
                        self.out.push('^');
                        for (i, (d, t)) in args.iter().enumerate() {
                            if i > 0 {
                                self.out.push_str(", ");
                            }
                            let name = format!("%arg_{}", self.next_arg);
                            self.next_arg += 1;
                            self.out.push_str(&name);
                            self.out.push(' ');
                            dict_text(d, &mut self.out);
                            inner.push(Val {
                                name,
                                ty: ty_text(t),
                            });
                        }
                        self.out.push('\n');
                    }
                    self.block(body, depth + 1, &mut inner);
                    // The body yields the next condition, then one value per result.
                    let mut ys = vec![c.clone()];
                    ys.extend(yields.iter().cloned());
                    self.yield_line(depth + 1, &ys);
                    self.indent(depth);
                    self.out.push_str("}\n");
                    scope.extend(
                        res.into_iter()
                            .zip(yields)
                            .map(|(name, v)| Val { name, ty: v.ty }),
                    );
                }
            }
        }
    }

    /// `() = "cf.yield" (vals) {} : (types) -> ` at `depth`.
    fn yield_line(&mut self, depth: usize, vals: &[Val]) {
        self.indent(depth);
        let names: Vec<&str> = vals.iter().map(|v| v.name.as_str()).collect();
        let tys: Vec<&str> = vals.iter().map(|v| v.ty.as_str()).collect();
        let _ = writeln!(
            self.out,
            "() = \"cf.yield\" ({}) {{}} : ({}) -> ",
            names.join(", "),
            tys.join(", ")
        );
    }

    fn results(&mut self, n: usize) -> Vec<String> {
        (0..n)
            .map(|_| {
                self.next += 1;
                format!("%{}", self.next - 1)
            })
            .collect()
    }

    fn program(&mut self, kwargs: &[(String, Dict, Ty)], items: &[Item]) {
        self.next = 0;
        self.next_arg = 0;
        self.out.push_str("{\n");
        let mut scope = Vec::new();
        if !kwargs.is_empty() {
            self.out.push_str("    ^kw:\n");
            for (n, d, t) in kwargs {
                let _ = write!(self.out, "        %kwarg_{n} ");
                dict_text(d, &mut self.out);
                self.out.push('\n');
                scope.push(Val {
                    name: format!("%kwarg_{n}"),
                    ty: ty_text(t),
                });
            }
        }
        self.block(items, 1, &mut scope);
        self.out.push_str("}\n");
    }
}

/// The text of a generated program.
pub fn render(p: &ProgSpec) -> String {
    let mut r = Renderer {
        out: String::new(),
        next: 0,
        next_arg: 0,
    };
    r.program(&p.kwargs, &p.main);
    if let Some(s) = &p.startup {
        r.out.push_str("startup ");
        r.program(&[], s);
    }
    for _ in 0..p.trailing_blank_lines {
        r.out.push('\n');
    }
    r.out
}

// ---- MLP-like programs -------------------------------------------------------------------

/// Random options for `irw::generate::mlp`: every optimizer and dtype, with or without all-reduce
/// (either collective) and roles, random widths, name indices and learning rate.
pub fn mlp_options(max_layers: usize) -> impl Strategy<Value = irw::generate::MlpOptions> {
    use irw::generate::{Collective, Dtype, MlpOptions, Optimizer};
    use std::num::NonZeroUsize;
    let nz = |n: usize| NonZeroUsize::new(n).unwrap_or(NonZeroUsize::MIN);
    (
        1..=max_layers,
        select(&Optimizer::ALL[..]),
        select(&Dtype::ALL[..]),
        any::<bool>(),
        prop_oneof![3 => Just(true), 1 => Just(false)],
        (1usize..=12, 1usize..=24, 1usize..=8),
        (0usize..200, 0usize..4),
        proptest::option::of(prop_oneof![Just(0.1f64), Just(1e-3), 1e-6f64..1.0]),
        select(&Collective::ALL[..]),
        any::<bool>(),
    )
        .prop_map(
            move |(
                layers,
                optimizer,
                dtype,
                allreduce,
                roles,
                (i, h, o),
                (fli, lri),
                lr,
                collective,
                loss_scaling,
            )| {
                MlpOptions {
                    layers: nz(layers),
                    optimizer,
                    dtype,
                    allreduce,
                    collective,
                    roles,
                    in_features: nz(i),
                    hidden: nz(h),
                    out_features: nz(o),
                    first_layer_index: fli,
                    lr_index: lri,
                    learning_rate: lr,
                    // Dynamic loss scaling is f32 only (Paddle's AMP turns it off for bf16).
                    loss_scaling: loss_scaling && dtype == Dtype::F32,
                }
            },
        )
}
