//! Attributes as Paddle prints them: `{k:v,...}` with ints, floats (text kept: Paddle prints ~6
//! significant digits, so re-formatting would change the program), bools, strings (escapes kept
//! verbatim), arrays, bare words (dtypes such as `float32`) and calls (`Place(cpu)`), and nested
//! dictionaries (`op_dist_attr:{...}` with keys like `operand(0)`).
//!
//! An owned dictionary is an [`AttrDict`]: a short vector in the order the program lists it
//! (Paddle sorts keys; [`AttrDict::set`] inserts new keys in sorted position so rewritten ops
//! print the way Paddle would print them). Dictionaries are interned as [`AttrId`]s in the
//! [`Context`](super::Context)'s attribute store and read through
//! [`Attrs`](super::Attrs) views.

use super::dist::OpDistAttr;
use rustc_hash::FxHashSet;
use std::hash::{Hash, Hasher};
use std::sync::{Mutex, OnceLock};

/// Index of an interned [`AttrDict`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AttrId(pub(crate) u32);

/// One attribute value.
#[derive(Clone, Debug)]
pub enum Attr {
    Int(i64),
    /// A number that is not a plain integer: its value and the text it was written with.
    Float {
        value: f64,
        text: Box<str>,
    },
    Bool(bool),
    /// A string's contents as written between the quotes (escapes not decoded).
    Str(Box<str>),
    Array(Vec<Attr>),
    /// A bare word (`float32`, `Undefined`) or call (`Place(cpu)`), kept as written.
    Word(Box<str>),
    Dict(AttrDict),
    /// `op_dist_attr:{mesh:{..},operand(0):{..},...,chunk_id:-1}` of an auto-parallel op.
    OpDist(Box<OpDistAttr>),
}

impl PartialEq for Attr {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Attr::Int(a), Attr::Int(b)) => a == b,
            (Attr::Float { text: a, .. }, Attr::Float { text: b, .. }) => a == b,
            (Attr::Bool(a), Attr::Bool(b)) => a == b,
            (Attr::Str(a), Attr::Str(b)) => a == b,
            (Attr::Array(a), Attr::Array(b)) => a == b,
            (Attr::Word(a), Attr::Word(b)) => a == b,
            (Attr::Dict(a), Attr::Dict(b)) => a == b,
            (Attr::OpDist(a), Attr::OpDist(b)) => a == b,
            _ => false,
        }
    }
}
impl Eq for Attr {}

impl Hash for Attr {
    fn hash<H: Hasher>(&self, h: &mut H) {
        std::mem::discriminant(self).hash(h);
        match self {
            Attr::Int(i) => i.hash(h),
            Attr::Float { text, .. } => text.hash(h),
            Attr::Bool(b) => b.hash(h),
            Attr::Str(s) | Attr::Word(s) => s.hash(h),
            Attr::Array(a) => a.hash(h),
            Attr::Dict(d) => d.hash(h),
            Attr::OpDist(d) => d.hash(h),
        }
    }
}

impl Attr {
    /// A float attribute irw computed (a rule's `1.0 / k_steps`, a folded constant), printed
    /// with the fewest digits that read back as exactly `value` (`format_float_shortest`:
    /// `0.25`, `2`, `1e-08`, `0.3333333333333333`), so the printed program is the one irw
    /// checked. Parsed floats keep their text as written instead.
    pub fn float(value: f64) -> Attr {
        Attr::Float {
            value,
            text: format_float_shortest(value).into(),
        }
    }

    /// A string attribute from its decoded contents.
    pub fn string(s: &str) -> Attr {
        if !s.bytes().any(|b| matches!(b, b'"' | b'\\' | b'\n')) {
            // The common case (a parameter's name): nothing to escape.
            return Attr::Str(s.into());
        }
        let mut out = String::with_capacity(s.len());
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                _ => out.push(c),
            }
        }
        Attr::Str(out.into())
    }

    /// The numeric value of an int or float attribute.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Attr::Int(i) => Some(*i as f64),
            Attr::Float { value, .. } => Some(*value),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Attr::Int(i) => Some(*i),
            Attr::Float { value, .. } if value.fract() == 0.0 => Some(*value as i64),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Attr::Bool(b) => Some(*b),
            // Paddle wraps some flags in one-element arrays: `stop_gradient:[true]`.
            Attr::Array(a) if a.len() == 1 => a[0].as_bool(),
            _ => None,
        }
    }

    /// A string's decoded contents.
    pub fn as_str(&self) -> Option<std::borrow::Cow<'_, str>> {
        match self {
            Attr::Str(s) if !s.contains('\\') => Some(std::borrow::Cow::Borrowed(s)),
            Attr::Str(s) => {
                let mut out = String::with_capacity(s.len());
                let mut chars = s.chars();
                while let Some(c) = chars.next() {
                    if c == '\\' {
                        match chars.next() {
                            Some('n') => out.push('\n'),
                            Some('t') => out.push('\t'),
                            Some(o) => out.push(o),
                            None => {}
                        }
                    } else {
                        out.push(c);
                    }
                }
                Some(std::borrow::Cow::Owned(out))
            }
            _ => None,
        }
    }

    pub fn as_word(&self) -> Option<&str> {
        match self {
            Attr::Word(w) => Some(w),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Attr]> {
        match self {
            Attr::Array(a) => Some(a),
            _ => None,
        }
    }

    /// Appends the printed form.
    pub fn write_to(&self, out: &mut String) {
        match self {
            Attr::Int(i) => push_i64(out, *i),
            Attr::Float { text, .. } => out.push_str(text),
            Attr::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Attr::Str(s) => {
                out.push('"');
                out.push_str(s);
                out.push('"');
            }
            Attr::Array(items) => {
                out.push('[');
                for (i, a) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    a.write_to(out);
                }
                out.push(']');
            }
            Attr::Word(w) => out.push_str(w),
            Attr::Dict(d) => d.write_to(out),
            Attr::OpDist(d) => d.write_to(out),
        }
    }

    pub fn to_text(&self) -> String {
        let mut s = String::new();
        self.write_to(&mut s);
        s
    }
}

/// Writes `i` in decimal, as `{i}` formats it, without the formatting machinery (integers are
/// the most common attribute values).
fn push_i64(out: &mut String, i: i64) {
    if i < 0 {
        out.push('-');
    }
    super::print::push_decimal(out, i.unsigned_abs());
}

/// Formats a float as C++ `std::ostream << double` does by default (6 significant digits, `%g`),
/// which is how Paddle prints float attributes.
pub fn format_float_like_paddle(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if v == 0.0 {
        return if v.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let exp = v.abs().log10().floor() as i32;
    // %g: scientific when exp < -4 or exp >= precision.
    let sci = format!("{:.5e}", v);
    let (mant, e) = sci.split_once('e').unwrap_or((&sci, "0"));
    let e: i32 = e.parse().unwrap_or(exp);
    if !(-4..6).contains(&e) {
        let mant = trim_zeros(mant);
        let sign = if e < 0 { '-' } else { '+' };
        format!("{mant}e{sign}{:02}", e.abs())
    } else {
        let decimals = (5 - e).max(0) as usize;
        trim_zeros(&format!("{:.*}", decimals, v)).to_string()
    }
}

/// Formats a float with the fewest significant digits that parse back to exactly `v` (Rust's
/// shortest round trip), in the shape Paddle prints: positional for exponents -4 to 15
/// (`0.0001`, `0.3333333333333333`, `2`), else scientific with a signed two-digit exponent
/// (`1e-08`, `1.5e+20`), which both irw's parser and C++'s `strtod` read.
fn format_float_shortest(v: f64) -> String {
    if !v.is_finite() || v == 0.0 {
        return format_float_like_paddle(v);
    }
    let sci = format!("{v:e}");
    let (mant, e) = sci.split_once('e').unwrap_or((&sci, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    if (-4..16).contains(&e) {
        format!("{v}")
    } else {
        let sign = if e < 0 { '-' } else { '+' };
        format!("{mant}e{sign}{:02}", e.abs())
    }
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// An attribute name. Names are interned once per process (a program uses a few dozen), so a
/// dictionary holds no allocation per key.
pub type AttrKey = &'static str;

/// Interns an attribute name. Each distinct name is allocated once and kept for the life of
/// the process; inputs have a few dozen.
pub fn intern_key(name: &str) -> AttrKey {
    static KEYS: OnceLock<Mutex<FxHashSet<&'static str>>> = OnceLock::new();
    let keys = KEYS.get_or_init(|| Mutex::new(FxHashSet::default()));
    let mut set = keys.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(k) = set.get(name) {
        return k;
    }
    let k: &'static str = Box::leak(name.into());
    set.insert(k);
    k
}

/// An attribute dictionary, in print order. A short vector rather than a hash map: ops carry
/// about ten attributes, a large program has hundreds of thousands of distinct dictionaries,
/// and a linear scan over ten keys is as fast as hashing.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct AttrDict {
    pub entries: Vec<(AttrKey, Attr)>,
}

impl AttrDict {
    pub fn get(&self, key: &str) -> Option<&Attr> {
        self.entries.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The entries in print order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Attr)> {
        self.entries.iter().map(|(k, v)| (*k, v))
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Sets `key`, keeping its position if present, else inserting it where sorted order puts
    /// it (Paddle prints keys sorted).
    pub fn set(&mut self, key: &str, value: Attr) {
        if let Some(e) = self.entries.iter_mut().find(|(k, _)| *k == key) {
            e.1 = value;
            return;
        }
        let pos = self
            .entries
            .iter()
            .position(|(k, _)| *k > key)
            .unwrap_or(self.entries.len());
        self.entries.insert(pos, (intern_key(key), value));
    }

    /// Sets `key`, keeping its position if present, else appending it (for dictionaries whose
    /// order is not sorted, such as keyword-argument attributes).
    pub fn push(&mut self, key: &str, value: Attr) {
        if let Some(e) = self.entries.iter_mut().find(|(k, _)| *k == key) {
            e.1 = value;
            return;
        }
        self.entries.push((intern_key(key), value));
    }

    pub fn remove(&mut self, key: &str) -> Option<Attr> {
        let i = self.entries.iter().position(|(k, _)| *k == key)?;
        Some(self.entries.remove(i).1)
    }

    pub fn write_to(&self, out: &mut String) {
        write_dict(self.iter(), out)
    }
}

/// Writes dictionary entries as Paddle prints them (`{k:v,...}`): owned and interned
/// dictionaries alike.
pub(crate) fn write_dict<'a>(entries: impl Iterator<Item = (&'a str, &'a Attr)>, out: &mut String) {
    out.push('{');
    for (i, (k, v)) in entries.enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(k);
        out.push(':');
        v.write_to(out);
    }
    out.push('}');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_print_as_rust_formats_them() {
        for i in [
            0,
            7,
            -7,
            10,
            -10,
            1234567890,
            i64::MAX,
            i64::MIN,
            i64::MIN + 1,
        ] {
            let mut s = String::new();
            push_i64(&mut s, i);
            assert_eq!(s, i.to_string());
        }
    }

    #[test]
    fn floats_print_like_paddle() {
        for (v, t) in [
            (0.25, "0.25"),
            (2.0, "2"),
            (1e-8, "1e-08"),
            (1.0 / 3.0, "0.3333333333333333"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5e20, "1.5e+20"),
            (-1234567.0, "-1234567"),
            (1e300, "1e+300"),
            (-0.0, "-0"),
        ] {
            assert_eq!(format_float_shortest(v), t);
        }
        for v in [
            1.0 / 3.0,
            0.1,
            1e-8 / 3.0,
            6.02e23,
            f64::MIN_POSITIVE,
            123456.789,
        ] {
            assert_eq!(format_float_shortest(v).parse::<f64>(), Ok(v));
        }
        assert_eq!(format_float_like_paddle(0.25), "0.25");
        assert_eq!(format_float_like_paddle(2.0), "2");
        assert_eq!(format_float_like_paddle(1e-8), "1e-08");
        assert_eq!(format_float_like_paddle(0.4330127018922193), "0.433013");
        assert_eq!(format_float_like_paddle(-0.5477225575051661), "-0.547723");
        assert_eq!(format_float_like_paddle(0.999), "0.999");
        assert_eq!(format_float_like_paddle(1000.0), "1000");
        assert_eq!(format_float_like_paddle(1234567.0), "1.23457e+06");
        assert_eq!(format_float_like_paddle(0.0001), "0.0001");
        assert_eq!(format_float_like_paddle(0.00001), "1e-05");
    }

    #[test]
    fn set_inserts_sorted() {
        let mut d = AttrDict::default();
        d.set("op_role", Attr::Int(1));
        d.set("dtype", Attr::Word("float32".into()));
        d.set("stop_gradient", Attr::Bool(true));
        let mut s = String::new();
        d.write_to(&mut s);
        assert_eq!(s, "{dtype:float32,op_role:1,stop_gradient:true}");
    }
}
