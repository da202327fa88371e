//! The dialect's data format: one op a line, parsed once into [`OpSpec`]s.
//!
//! Why a text format of irw's own: Paddle defines its ops as data (`ops.yaml`, the PIR headers
//! generated from it), and irw's dialect is the same kind of thing. `data/dialect/pd_op.ops` is
//! derived from Paddle 3.3.1 by `tools/dialect/derive.py` (every PIR op: operands, results,
//! attributes with the C++ types PIR stores them as, defaults, in-place pairs);
//! `data/dialect/irw.ops` is written by hand and holds what Paddle's definitions cannot say:
//! effect classes of optimizers, collectives, I/O and random ops, result-type families, and the
//! ops Paddle does not generate (`builtin.*`, `cf.*`, control flow). Both are compiled in with
//! `include_str!` and parsed on first use; names point into the text, so nothing is copied.
//!
//! A full entry:
//!
//! ```text
//! pd_op.layer_norm(x, scale?, bias?) -> (out, mean, variance) {epsilon: f32 = 1e-5, begin_norm_axis: i32 = 1}
//! pd_op.add_(x, y) -> (out) inplace(out=x) effect=inplace shape=elementwise
//! ```
//!
//! - operands and results: `name?` is optional in Paddle's sense (a `<<NULL VALUE>>` when
//!   absent; the slot is always there); irw's own count conventions prefix a name: `*name` takes
//!   all remaining items, `?name` may be missing at the end.
//! - attributes: `name: TYPE [= DEFAULT]`, TYPE one of `bool i32 i64 f32 f64 str dtype place
//!   intarray`, `scalar(T)` (a Paddle `Scalar` stored as T) or `T[]` (an array of T).
//! - `unset(RESULT, ...)`: results whose dimensions Paddle's `infer_meta` leaves unset (an rnn's
//!   `reserve`): Paddle prints them `tensor<0xf32>` but stores no dimensions in its JSON.
//! - `same_shape(OPERAND=OPERAND, ...)`: the first operand has the second's shape, which
//!   Paddle's `infer_meta` enforces (an optimizer's `grad=param`). Shapes only: a
//!   mixed-precision optimizer reads a 16-bit parameter with float32 moments, or a float32
//!   gradient (master grad).
//! - `ranks(OPERAND=LOW..HIGH, ...)`: the ranks an operand may have, where Paddle's kernels
//!   take fewer than its definition admits (set_value's take 1 to 6: a 0-d tensor fails at
//!   run time, not when the program is built).
//! - `given(ATTRIBUTE, ...)`: attributes whose Paddle default is a placeholder rather than
//!   intent, which irw does not assume: a collective's `reduce_type` (`0`, SUM) decides what
//!   every rank computes. Such an attribute has no [`AttrSpec::default_value`]: the executor
//!   and the JSON writer refuse an op lacking it, and a rule's build must write it.
//! - `inplace(RESULT=OPERAND, ...)`; `effect=CLASS` (an [`Effect`] class name; default: `pure`,
//!   or `inplace` with an `inplace(..)`); `shape=FAMILY` (a [`Shape`] family, see
//!   [`Shape::parse`]).
//!
//! A patch line names a known op and only sets keys: `pd_op.sgd_ effect=optimizer`. Later
//! lines win, so `irw.ops` (read second) refines `pd_op.ops`.

use super::shape_family::Shape;
use super::{Effect, OpSpec};
use crate::ir::Attr;
use rustc_hash::FxHashMap;

/// The kind of value an attribute holds, as Paddle's op definition types it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AttrType {
    Bool,
    I32,
    I64,
    F32,
    F64,
    Str,
    DType,
    Place,
    /// `paddle::dialect::IntArrayAttribute` (`1.a_intarray`).
    IntArray,
    /// A Paddle `Scalar` stored as this scalar type.
    Scalar(ScalarType),
    /// `pir::ArrayAttribute` of this scalar type.
    Array(ScalarType),
}

/// The scalar element types attributes are built from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ScalarType {
    Bool,
    I32,
    I64,
    F32,
    F64,
    Str,
    /// A `phi::Scalar` of any type (`std::vector<phi::Scalar>`).
    Any,
}

impl ScalarType {
    fn parse(s: &str) -> Option<ScalarType> {
        Some(match s {
            "bool" => ScalarType::Bool,
            "i32" => ScalarType::I32,
            "i64" => ScalarType::I64,
            "f32" => ScalarType::F32,
            "f64" => ScalarType::F64,
            "str" => ScalarType::Str,
            "scalar" => ScalarType::Any,
            _ => return None,
        })
    }

    /// How `irw ops` says it: Paddle's C++ spelling.
    fn paddle_name(self) -> &'static str {
        match self {
            ScalarType::Bool => "bool",
            ScalarType::I32 => "int32",
            ScalarType::I64 => "int64",
            ScalarType::F32 => "float32",
            ScalarType::F64 => "float64",
            ScalarType::Str => "string",
            ScalarType::Any => "Scalar",
        }
    }
}

impl AttrType {
    pub fn parse(s: &str) -> Option<AttrType> {
        if let Some(e) = s.strip_suffix("[]") {
            return ScalarType::parse(e).map(AttrType::Array);
        }
        if let Some(e) = s.strip_prefix("scalar(").and_then(|e| e.strip_suffix(')')) {
            return ScalarType::parse(e).map(AttrType::Scalar);
        }
        Some(match s {
            "dtype" => AttrType::DType,
            "place" => AttrType::Place,
            "intarray" => AttrType::IntArray,
            _ => match ScalarType::parse(s)? {
                ScalarType::Bool => AttrType::Bool,
                ScalarType::I32 => AttrType::I32,
                ScalarType::I64 => AttrType::I64,
                ScalarType::F32 => AttrType::F32,
                ScalarType::F64 => AttrType::F64,
                ScalarType::Str => AttrType::Str,
                ScalarType::Any => AttrType::Scalar(ScalarType::Any),
            },
        })
    }

    /// How a user reads it: `float32`, `int64[]`, `IntArray`, `Scalar (float32)`.
    pub fn describe(self) -> String {
        match self {
            AttrType::Bool => "bool".into(),
            AttrType::I32 => "int32".into(),
            AttrType::I64 => "int64".into(),
            AttrType::F32 => "float32".into(),
            AttrType::F64 => "float64".into(),
            AttrType::Str => "string".into(),
            AttrType::DType => "DataType".into(),
            AttrType::Place => "Place".into(),
            AttrType::IntArray => "IntArray".into(),
            AttrType::Scalar(t) => format!("Scalar ({})", t.paddle_name()),
            AttrType::Array(t) => format!("{}[]", t.paddle_name()),
        }
    }
}

/// One attribute of an op's definition.
#[derive(Debug, Clone, Copy)]
pub struct AttrSpec {
    pub name: &'static str,
    pub ty: AttrType,
    /// The builder's default, as the data file writes it (`1e-5`, `[1, 1]`, `"NCHW"`, `cpu`).
    pub default: Option<&'static str>,
    /// That default as the value Paddle's builder gives ([`super::default_value`]); `None` when
    /// there is no default, it does not read as a value of the type, or irw does not assume it
    /// (the entry's `given(..)`).
    value: Option<&'static Attr>,
    /// Whether the entry lists it in `given(..)`: its default is not assumed.
    given: bool,
}

impl AttrSpec {
    /// The value an op built without this attribute gets: what the JSON writer writes and the
    /// executor computes with when an op lacks it.
    pub fn default_value(&self) -> Option<&'static Attr> {
        self.value
    }

    /// Whether Paddle's definition gives no default: an op without it cannot run.
    pub fn required(&self) -> bool {
        self.default.is_none()
    }

    /// Whether Paddle's default is a placeholder irw does not assume (`given(..)`): an op must
    /// carry the attribute, as if it had no default.
    pub fn given(&self) -> bool {
        self.given
    }
}

/// The two data files, in the order they are read.
pub static SOURCES: &[(&str, &str)] = &[
    (
        "data/dialect/pd_op.ops",
        include_str!("../../data/dialect/pd_op.ops"),
    ),
    (
        "data/dialect/irw.ops",
        include_str!("../../data/dialect/irw.ops"),
    ),
];

/// An op while the files are read: names, and keys set by later lines.
struct Entry {
    name: &'static str,
    operands: Vec<&'static str>,
    optional_operands: u64,
    results: Vec<&'static str>,
    optional_results: u64,
    attrs: Vec<AttrSpec>,
    inplace: Pairs,
    same_shape: Pairs,
    /// Attributes whose default irw does not assume (`given(..)`).
    given: Vec<&'static str>,
    ranks: Pairs,
    effect: Option<Effect>,
    shape: Option<&'static str>,
    unset: Vec<&'static str>,
}

/// Parses the data files into specs, in name order. An error names the file and line: the
/// files are compiled in, so an error is a bug in them, caught by the table's unit tests.
pub fn load(sources: &[(&'static str, &'static str)]) -> Result<Vec<OpSpec>, String> {
    let mut entries: Vec<Entry> = Vec::new();
    let mut index: FxHashMap<&'static str, usize> = FxHashMap::default();
    for &(file, text) in sources {
        for (n, line) in text.lines().enumerate() {
            let at = |m: String| format!("{file}:{}: {m}", n + 1);
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let name_end = line.find(['(', ' ']).unwrap_or(line.len());
            let name = &line[..name_end];
            let mut rest = &line[name_end..];
            if rest.starts_with('(') {
                let (e, r) = full_entry(name, rest).map_err(at)?;
                rest = r;
                match index.get(name) {
                    Some(&i) => entries[i] = e,
                    None => {
                        index.insert(name, entries.len());
                        entries.push(e);
                    }
                }
            }
            let Some(&i) = index.get(name) else {
                return Err(at(format!("`{name}` is patched but not defined")));
            };
            keys(&mut entries[i], rest).map_err(at)?;
        }
    }
    default_grad_shapes(&mut entries, &index);
    entries.sort_by_key(|e| e.name);
    entries.into_iter().map(finish).collect()
}

/// A `_grad` op without a family of its own: each result `N_grad` has operand `N`'s type
/// (`grad`, Paddle's `GeneralUnaryGradInferMeta`/`GeneralBinaryGradInferMeta`), or, when no
/// result is named after an operand, its forward op keeps its input's type (`unchanged`) and it
/// has one result, `out_grad`'s (`relu_grad(out, out_grad)`).
fn default_grad_shapes(entries: &mut [Entry], index: &FxHashMap<&'static str, usize>) {
    for i in 0..entries.len() {
        let e = &entries[i];
        let Some(fwd) = e.name.strip_suffix("_grad") else {
            continue;
        };
        if e.shape.is_some() {
            continue;
        }
        let fwd_unchanged = index
            .get(fwd)
            .and_then(|&f| entries[f].shape)
            .is_some_and(|s| s == "unchanged");
        let named = e.results.iter().any(|r| {
            r.strip_suffix("_grad").is_some_and(|f| {
                e.operands
                    .iter()
                    .any(|o| o.trim_start_matches(['*', '?']) == f)
            })
        });
        let shape = if !named
            && fwd_unchanged
            && e.results.len() == 1
            && e.operands.contains(&"out_grad")
        {
            "unchanged(out_grad)"
        } else {
            "grad"
        };
        entries[i].shape = Some(shape);
    }
}

/// `(a, b?) -> (c) {k: t = d}` and what follows it.
fn full_entry(name: &'static str, s: &'static str) -> Result<(Entry, &'static str), String> {
    let (operands, s) = list(s)?;
    let s = s
        .trim_start()
        .strip_prefix("->")
        .ok_or_else(|| format!("`{name}`: `->` expected after the operands"))?
        .trim_start();
    let (results, mut s) = list(s)?;
    let mut attrs = Vec::new();
    s = s.trim_start();
    if let Some(body) = s.strip_prefix('{') {
        let end = body
            .find('}')
            .ok_or_else(|| format!("`{name}`: `}}` expected"))?;
        for a in split_top(&body[..end]) {
            attrs.push(attr(a).map_err(|m| format!("`{name}`: {m}"))?);
        }
        s = &body[end + 1..];
    }
    let (operands, optional_operands) = optional_marks(operands);
    let (results, optional_results) = optional_marks(results);
    Ok((
        Entry {
            name,
            operands,
            optional_operands,
            results,
            optional_results,
            attrs,
            inplace: Vec::new(),
            same_shape: Vec::new(),
            given: Vec::new(),
            ranks: Vec::new(),
            effect: None,
            shape: None,
            unset: Vec::new(),
        },
        s,
    ))
}

/// `(a, b)` → the names and the rest of the line.
fn list(s: &'static str) -> Result<(Vec<&'static str>, &'static str), String> {
    let s = s.strip_prefix('(').ok_or("`(` expected")?;
    let end = s.find(')').ok_or("`)` expected")?;
    let items = s[..end]
        .split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .collect();
    Ok((items, &s[end + 1..]))
}

/// Splits at commas outside brackets and quotes.
fn split_top(s: &'static str) -> Vec<&'static str> {
    let mut out = Vec::new();
    let (mut depth, mut quoted, mut start) = (0i32, false, 0);
    for (i, c) in s.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '[' | '(' if !quoted => depth += 1,
            ']' | ')' if !quoted => depth -= 1,
            ',' if depth == 0 && !quoted => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !s[start..].trim().is_empty() {
        out.push(s[start..].trim());
    }
    out
}

fn attr(s: &'static str) -> Result<AttrSpec, String> {
    let (name, rest) = s
        .split_once(':')
        .ok_or_else(|| format!("attribute `{s}`: `name: type` expected"))?;
    let (ty, default) = match rest.split_once('=') {
        Some((t, d)) => (t.trim(), Some(d.trim())),
        None => (rest.trim(), None),
    };
    let ty = AttrType::parse(ty).ok_or_else(|| format!("attribute `{name}`: type `{ty}`"))?;
    let value = default
        .and_then(|d| super::default_value::of(ty, d))
        .map(|v| &*Box::leak(Box::new(v)));
    Ok(AttrSpec {
        name: name.trim(),
        ty,
        default,
        value,
        given: false,
    })
}

/// Strips the `name?` (optional) marks: the names and a bit per marked position.
fn optional_marks(items: Vec<&'static str>) -> (Vec<&'static str>, u64) {
    let mut mask = 0;
    let names = items
        .into_iter()
        .enumerate()
        .map(|(i, n)| match n.strip_suffix('?') {
            Some(n) => {
                if i < 64 {
                    mask |= 1 << i;
                }
                n
            }
            None => n,
        })
        .collect();
    (names, mask)
}

/// The name pairs of an `inplace(..)` or `same_shape(..)`.
type Pairs = Vec<(&'static str, &'static str)>;

/// The `a=b, ..)` of a `key(` (`inplace(`, `same_shape(`) of entry `entry`, each pair trimmed,
/// and what follows the `)`; `form` says how a pair is written, for the error.
fn pairs(
    r: &'static str,
    key: &str,
    entry: &str,
    form: &str,
) -> Result<(Pairs, &'static str), String> {
    let end = r.find(')').ok_or(format!("`)` expected after {key}("))?;
    let list = r[..end]
        .split(',')
        .map(|pair| {
            let (a, b) = pair
                .split_once('=')
                .ok_or_else(|| format!("`{entry}`: {key} pairs are {form}"))?;
            Ok((a.trim(), b.trim()))
        })
        .collect::<Result<Pairs, String>>()?;
    Ok((list, &r[end + 1..]))
}

/// The `a, b, ..)` of a `key(` (`unset(`, `given(`), each name trimmed, and what follows the `)`.
fn names(r: &'static str, key: &str) -> Result<(Vec<&'static str>, &'static str), String> {
    let end = r.find(')').ok_or(format!("`)` expected after {key}("))?;
    Ok((r[..end].split(',').map(str::trim).collect(), &r[end + 1..]))
}

/// `inplace(a=b, ..) effect=x shape=y` after an entry or on a patch line.
fn keys(e: &mut Entry, mut s: &'static str) -> Result<(), String> {
    loop {
        s = s.trim_start();
        if s.is_empty() {
            return Ok(());
        }
        if let Some(r) = s.strip_prefix("unset(") {
            (e.unset, s) = names(r, "unset")?;
            continue;
        }
        if let Some(r) = s.strip_prefix("ranks(") {
            (e.ranks, s) = pairs(r, "ranks", e.name, "OPERAND=LOW..HIGH")?;
            continue;
        }
        if let Some(r) = s.strip_prefix("given(") {
            (e.given, s) = names(r, "given")?;
            continue;
        }
        if let Some(r) = s.strip_prefix("same_shape(") {
            (e.same_shape, s) = pairs(r, "same_shape", e.name, "OPERAND=OPERAND")?;
            continue;
        }
        if let Some(r) = s.strip_prefix("inplace(") {
            (e.inplace, s) = pairs(r, "inplace", e.name, "RESULT=OPERAND")?;
            continue;
        }
        let end = word_end(s);
        let (k, v) = s[..end]
            .split_once('=')
            .ok_or_else(|| format!("`{}`: `key=value` expected at `{}`", e.name, &s[..end]))?;
        match k {
            "effect" => {
                e.effect = Some(
                    Effect::from_class_name(v)
                        .ok_or_else(|| format!("`{}`: unknown effect `{v}`", e.name))?,
                )
            }
            "shape" => e.shape = Some(v),
            _ => return Err(format!("`{}`: unknown key `{k}`", e.name)),
        }
        s = &s[end..];
    }
}

/// The end of `key=value`, where the value may hold a parenthesized list with spaces.
fn word_end(s: &str) -> usize {
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ' ' if depth == 0 => return i,
            _ => {}
        }
    }
    s.len()
}

fn finish(e: Entry) -> Result<OpSpec, String> {
    // The position of a name among operands or results (their `*`/`?` marks stripped).
    let index = |names: &[&str], n: &str| {
        names
            .iter()
            .position(|x| x.trim_start_matches(['*', '?']) == n)
            .map(|i| i as u8)
    };
    let (operand, result) = (|n| index(&e.operands, n), |n| index(&e.results, n));
    let mut aliases = Vec::new();
    for &(r, o) in &e.inplace {
        let pair = result(r).zip(operand(o));
        aliases.push(
            pair.ok_or_else(|| format!("`{}`: inplace({r}={o}) names no result/operand", e.name))?,
        );
    }
    let mut same_shape = Vec::new();
    for &(a, b) in &e.same_shape {
        let pair = operand(a).zip(operand(b));
        same_shape.push(
            pair.ok_or_else(|| format!("`{}`: same_shape({a}={b}) names no operand", e.name))?,
        );
    }
    let mut ranks = Vec::new();
    for &(a, range) in &e.ranks {
        let bounds = range
            .split_once("..")
            .and_then(|(lo, hi)| Some((lo.parse::<u8>().ok()?, hi.parse::<u8>().ok()?)));
        match (operand(a), bounds) {
            (Some(ai), Some((lo, hi))) if lo <= hi => ranks.push((ai, lo, hi)),
            _ => {
                return Err(format!(
                    "`{}`: ranks({a}={range}) is not OPERAND=LOW..HIGH of an operand",
                    e.name
                ))
            }
        }
    }
    let mut unset_results = 0u64;
    for &r in &e.unset {
        match result(r) {
            Some(i) if i < 64 => unset_results |= 1 << i,
            _ => return Err(format!("`{}`: unset({r}) names no result", e.name)),
        }
    }
    let effect = e.effect.unwrap_or(if aliases.is_empty() {
        Effect::Pure
    } else {
        Effect::InPlace
    });
    let shape = match e.shape {
        Some(s) => Shape::parse(s, &e.operands, &e.results)
            .ok_or_else(|| format!("`{}`: shape family `{s}`", e.name))?,
        None => Shape::Unknown,
    };
    let mut attrs = e.attrs;
    for &g in &e.given {
        let a = attrs
            .iter_mut()
            .find(|a| a.name == g)
            .ok_or_else(|| format!("`{}`: given({g}) names no attribute", e.name))?;
        a.value = None;
        a.given = true;
    }
    Ok(OpSpec {
        name: e.name,
        operands: Box::leak(e.operands.into_boxed_slice()),
        results: Box::leak(e.results.into_boxed_slice()),
        aliases: Box::leak(aliases.into_boxed_slice()),
        same_shape: Box::leak(same_shape.into_boxed_slice()),
        ranks: Box::leak(ranks.into_boxed_slice()),
        effect,
        result_rule: shape.engine_rule(),
        optional_operands: e.optional_operands,
        optional_results: e.optional_results,
        unset_results,
        attrs: Box::leak(attrs.into_boxed_slice()),
        shape,
    })
}
