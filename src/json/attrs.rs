//! Attribute values between the IR and Paddle's JSON (`{"#":"0.a_f64","D":2.0}`).
//!
//! Reading turns each tagged value into the [`Attr`] the text parser would build from what
//! Paddle prints for it (`1.a_dtype "float32"` → the word `float32`, `1.a_place [1,0,""]` →
//! `Place(cpu)`, an integral `a_f64` → `2`), so a JSON program prints exactly like Paddle's
//! dump of it. Writing goes the other way with the tag the attribute's type in the op's
//! definition gives ([`crate::dialect::paddle_json::tag_of_type`]; [`write_tag`] says what
//! happens without one), and refuses a value that does not fit the tag: Paddle's loader would
//! accept it and its executor crash on it (SPEC.md §5, E5f).
//!
//! [`TagHints`] remembers the tags an input file used for attributes the table does not know,
//! so an unknown op read from JSON is written back with its own tags instead of being refused.

use super::dist::MeshNames;
use crate::dialect::paddle_json::{
    tag_of_type, AttrTag, Tag, ANY_OP, ARRAY_TAG, ATTR_TAGS, DTYPE_NAMES, NULL_TAG, PLACES,
    TAG_NAMES,
};
use crate::dialect::Dialect;
use crate::ir::{format_float_like_paddle, Attr};
use rustc_hash::FxHashMap;
use serde_json::{json, Value};
use std::sync::OnceLock;

/// What an input file says that the IR does not keep, for writing it back: tags seen for
/// `(op, attribute)` pairs the dialect table does not list, and process mesh dimension names
/// (`super::dist::MeshNames`).
#[derive(Clone, Debug, Default)]
pub struct TagHints {
    seen: FxHashMap<(String, String), AttrTag>,
    /// Attributes of ops a rule file declares with a kind that names no Paddle type (`float`),
    /// with that kind: what the error for such an attribute says.
    untyped: FxHashMap<(String, String), &'static str>,
    pub meshes: MeshNames,
}

impl TagHints {
    /// Records the tag an input used; the table's own lines are not overridden by inputs.
    pub fn learn(&mut self, op: &str, attr: &str, tag: AttrTag) {
        if table_tag(op, attr).is_some() {
            return;
        }
        let slot = self
            .seen
            .entry((op.to_string(), attr.to_string()))
            .or_insert(tag);
        // An empty array says less than a typed one.
        if *slot == AttrTag::Array {
            *slot = tag;
        }
    }

    /// Records the Paddle type a rule file's declaration of an op outside the table gives one
    /// of its attributes (`op "my.act"(x) {alpha: f32}`): its values are written with that
    /// type's tag.
    pub fn declare(&mut self, op: &str, attr: &str, ty: crate::dialect::data::AttrType) {
        if let Some(tag) = tag_of_type(ty) {
            self.learn(op, attr, tag);
        }
    }

    /// Records that a rule file declares `attr` of `op` with `kind` (`int`, `float`, `list`),
    /// which says no Paddle type.
    pub fn declare_untyped(&mut self, op: &str, attr: &str, kind: &'static str) {
        self.untyped
            .insert((op.to_string(), attr.to_string()), kind);
    }

    pub fn get(&self, op: &str, attr: &str) -> Option<AttrTag> {
        self.seen.get(&(op.to_string(), attr.to_string())).copied()
    }
}

fn table() -> &'static FxHashMap<(&'static str, &'static str), AttrTag> {
    static T: OnceLock<FxHashMap<(&'static str, &'static str), AttrTag>> = OnceLock::new();
    T.get_or_init(|| ATTR_TAGS.iter().map(|&(o, a, t)| ((o, a), t)).collect())
}

/// The dialect's tag for `attr` of `op`: from the attribute's type in the op's definition
/// ([`tag_of_type`]), else a line of [`ATTR_TAGS`] (the op's own, then the any-op line).
fn table_tag(op: &str, attr: &str) -> Option<AttrTag> {
    if let Some(a) = Dialect::get().spec(op).and_then(|s| s.attr(attr)) {
        if let Some(t) = tag_of_type(a.ty) {
            return Some(t);
        }
    }
    let t = table();
    t.get(&(op, attr))
        .or_else(|| t.get(&(ANY_OP, attr)))
        .copied()
}

/// The tag to write `attr` of `op` with: the dialect's, else one learned from the input.
fn tag_for(op: &str, attr: &str, hints: &TagHints) -> Option<AttrTag> {
    table_tag(op, attr).or_else(|| hints.get(op, attr))
}

/// The tag to write `attr` (value `a`) of `op` with, or why there is none. After the dialect
/// and the input's own tags: an attribute a known op's definition does not have (a pass's
/// marker such as `grad_merge_add`, which Paddle's reader keeps and no kernel reads) gets the
/// tag of its value ([`infer_tag`]); an attribute of an op the dialect does not know is
/// refused, since Paddle's executor crashes on a wrong tag.
pub fn write_tag(op: &str, attr: &str, a: &Attr, hints: &TagHints) -> Result<AttrTag, String> {
    if let Some(t) = tag_for(op, attr, hints) {
        return Ok(t);
    }
    match Dialect::get().spec(op) {
        Some(_) => infer_tag(a).ok_or_else(|| {
            format!(
                "no JSON type tag is known for attribute `{attr}` of `{op}`, and its value \
                 `{}` has none of its own (a bool, number, string, dtype, place, or an array \
                 of one kind of them): give the attribute such a value",
                a.to_text()
            )
        }),
        None => match hints.untyped.get(&(op.to_string(), attr.to_string())) {
            Some(kind) => Err(format!(
                "`{op}` attribute `{attr}` is declared `{kind}` in the rule file, which names no \
                 Paddle type (Paddle has i32 and i64, f32 and f64, and arrays of them): declare it \
                 with Paddle's own type (`{attr}: f32`, `i64`, `i64[]`, ...)"
            )),
            None => Err(format!(
                "`{op}` attribute `{attr}`: Paddle's type for it is unknown (the op is not in the \
             dialect table); declare the op in the rule file with Paddle's attribute types \
             (`{attr}: f32`, `i64`, `i64[]`, ...), or read the program from Paddle's JSON, \
             which carries them"
            )),
        },
    }
}

/// The tag an attribute neither the table nor the input knows (a rule's own marker, such as
/// `grad_merge_add: true`) is written with, from its value: `true` a bool, an int an i32 (an
/// i64 beyond i32), any other number an f64 (exact), a string a str, a dtype word a dtype,
/// `Place(..)` a place, an array the array of its elements' common tag (an int array of i64
/// when one needs it; empty: an empty array). Paddle keeps such attributes and no kernel reads
/// them. `None` for values with no single tag (dictionaries, mixed arrays).
fn infer_tag(a: &Attr) -> Option<AttrTag> {
    fn one(a: &Attr) -> Option<Tag> {
        Some(match a {
            Attr::Bool(_) => Tag::Bool,
            Attr::Int(i) if i32::try_from(*i).is_ok() => Tag::I32,
            Attr::Int(_) => Tag::I64,
            Attr::Float { .. } => Tag::F64,
            Attr::Str(_) => Tag::Str,
            Attr::Word(w) if w.starts_with("Place(") => {
                place_to_json(w)?;
                Tag::Place
            }
            Attr::Word(w) if DTYPE_NAMES.iter().any(|(_, p)| p == &&**w) => Tag::DType,
            _ => return None,
        })
    }
    match a {
        Attr::Array(items) if items.is_empty() => Some(AttrTag::Array),
        Attr::Array(items) => {
            let mut tag = one(&items[0])?;
            for x in &items[1..] {
                tag = match (tag, one(x)?) {
                    (t, u) if t == u => t,
                    (Tag::I32, Tag::I64) | (Tag::I64, Tag::I32) => Tag::I64,
                    _ => return None,
                };
            }
            Some(AttrTag::ArrayOf(tag))
        }
        _ => one(a).map(AttrTag::One),
    }
}

fn tag_name(t: Tag) -> &'static str {
    TAG_NAMES
        .iter()
        .find(|(u, _)| *u == t)
        .map_or("?", |(_, n)| n)
}

fn tag_by_name(name: &str) -> Option<Tag> {
    TAG_NAMES.iter().find(|(_, n)| *n == name).map(|(t, _)| *t)
}

/// How a tag is spelled in messages: `0.a_bool`, `0.a_array of 0.a_i64`.
pub fn describe(t: AttrTag) -> String {
    match t {
        AttrTag::One(t) => tag_name(t).to_string(),
        AttrTag::ArrayOf(t) => format!("{ARRAY_TAG} of {}", tag_name(t)),
        AttrTag::Array => format!("{ARRAY_TAG} (empty)"),
    }
}

// ---- reading ------------------------------------------------------------------------------

/// A float the way the text parser would hold what Paddle prints for it: an integer when
/// Paddle prints an integer (`value:2`), else the value with Paddle's 6-digit text.
fn float_attr(v: f64) -> Attr {
    let text = format_float_like_paddle(v);
    // -0.0 stays a float: the integer 0 would lose its sign.
    if v.fract() == 0.0 && v.abs() < 1e15 && !(v == 0.0 && v.is_sign_negative()) {
        if let Ok(i) = text.parse::<i64>() {
            return Attr::Int(i);
        }
    }
    Attr::Float {
        value: v,
        text: text.into(),
    }
}

/// Reads one `{"#":tag,"D":payload}` into an attribute and its tag.
pub fn attr_from_json(v: &Value) -> Result<(Attr, AttrTag), String> {
    let Some(obj) = v.as_object() else {
        return Err("an attribute must be an object {\"#\":tag,\"D\":value}".into());
    };
    let Some(tag) = obj.get("#").and_then(Value::as_str) else {
        return Err("an attribute needs a string \"#\" (its type tag)".into());
    };
    if tag == NULL_TAG {
        return Err("null attributes ({\"#\":\"NULL\"}) are not supported".into());
    }
    if tag == ARRAY_TAG {
        let items = obj
            .get("D")
            .and_then(Value::as_array)
            .ok_or("an 0.a_array attribute needs an array \"D\"")?;
        let mut out = Vec::with_capacity(items.len());
        let mut elem = None;
        for it in items {
            let (a, t) = attr_from_json(it)?;
            let AttrTag::One(t) = t else {
                return Err("arrays of arrays are not supported".into());
            };
            if elem.is_some_and(|e| e != t) {
                return Err("arrays mixing element tags are not supported".into());
            }
            elem = Some(t);
            out.push(a);
        }
        let tag = elem.map_or(AttrTag::Array, AttrTag::ArrayOf);
        return Ok((Attr::Array(out), tag));
    }
    let t = tag_by_name(tag).ok_or_else(|| format!("attribute tag `{tag}` is not supported"))?;
    if let Some(vd) = obj.get("VD") {
        // NaN and infinities are written as {"VD":"NaN"|"INF"|"-INF"} (SPEC.md §5).
        if !matches!(t, Tag::F32 | Tag::F64) {
            return Err(format!("\"VD\" on a {tag} attribute"));
        }
        let f = match vd.as_str() {
            Some("NaN") | Some("NAN") => f64::NAN,
            Some("INF") => f64::INFINITY,
            Some("-INF") => f64::NEG_INFINITY,
            _ => return Err(format!("unknown special float {vd}")),
        };
        return Ok((Attr::float(f), AttrTag::One(t)));
    }
    let d = obj
        .get("D")
        .ok_or_else(|| format!("a {tag} attribute needs a \"D\" value"))?;
    let a = match t {
        Tag::Bool => Attr::Bool(d.as_bool().ok_or("0.a_bool needs true or false")?),
        Tag::I32 | Tag::I64 => Attr::Int(
            d.as_i64()
                .ok_or_else(|| format!("{tag} needs an integer"))?,
        ),
        Tag::F32 | Tag::F64 => {
            float_attr(d.as_f64().ok_or_else(|| format!("{tag} needs a number"))?)
        }
        Tag::Str => Attr::string(d.as_str().ok_or("0.a_str needs a string")?),
        Tag::IntArray => Attr::Array(
            d.as_array()
                .ok_or("1.a_intarray needs an array of integers")?
                .iter()
                .map(|x| x.as_i64().map(Attr::Int))
                .collect::<Option<_>>()
                .ok_or("1.a_intarray needs an array of integers")?,
        ),
        Tag::DType => {
            let s = d.as_str().ok_or("1.a_dtype needs a string")?;
            let word = DTYPE_NAMES
                .iter()
                .find(|(j, _)| *j == s)
                .map(|(_, w)| *w)
                .ok_or_else(|| format!("unknown data type `{s}`"))?;
            Attr::Word(word.into())
        }
        Tag::Place => Attr::Word(place_from_json(d)?.into()),
    };
    Ok((a, AttrTag::One(t)))
}

fn place_from_json(d: &Value) -> Result<String, String> {
    let bad = || "1.a_place needs [allocation type, device id, device type]".to_string();
    let arr = d.as_array().filter(|a| a.len() == 3).ok_or_else(bad)?;
    let alloc = arr[0].as_i64().ok_or_else(bad)?;
    let dev = arr[1].as_i64().ok_or_else(bad)?;
    let kind = PLACES
        .iter()
        .find(|p| p.alloc == alloc)
        .ok_or_else(|| format!("place allocation type {alloc} is not known to irw"))?;
    Ok(if kind.prints_device {
        format!("Place({}:{dev})", kind.name)
    } else {
        format!("Place({})", kind.name)
    })
}

// ---- writing ------------------------------------------------------------------------------

/// Writes `a` with tag `t`; the error says why the value does not fit.
pub fn attr_to_json(a: &Attr, t: AttrTag) -> Result<Value, String> {
    match t {
        AttrTag::One(t) => one_to_json(a, t),
        AttrTag::ArrayOf(e) => {
            let items = a
                .as_array()
                .ok_or_else(|| format!("`{}` is not an array", a.to_text()))?;
            let d = items
                .iter()
                .map(|x| one_to_json(x, e))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(json!({"#": ARRAY_TAG, "D": d}))
        }
        AttrTag::Array => match a.as_array() {
            Some([]) => Ok(json!({"#": ARRAY_TAG, "D": []})),
            _ => Err(format!(
                "`{}`: the element tag of this array is not known (only seen empty)",
                a.to_text()
            )),
        },
    }
}

fn one_to_json(a: &Attr, t: Tag) -> Result<Value, String> {
    // An integer beyond 2^53, which an f64 may not hold exactly, is written as Paddle's int64
    // attribute (a scalar attribute such as `full`'s `value` takes one), not rounded.
    if let (Tag::F64, Attr::Int(i)) = (t, a) {
        if i.unsigned_abs() > 1 << 53 {
            return Ok(json!({"#": tag_name(Tag::I64), "D": i}));
        }
    }
    let name = tag_name(t);
    let misfit = || format!("`{}` is not a {name} value", a.to_text());
    let d = match t {
        Tag::Bool => match a {
            Attr::Bool(b) => json!(b),
            _ => return Err(misfit()),
        },
        Tag::I32 => match a {
            Attr::Int(i) if i32::try_from(*i).is_ok() => json!(i),
            _ => return Err(misfit()),
        },
        Tag::I64 => match a {
            Attr::Int(i) => json!(i),
            _ => return Err(misfit()),
        },
        Tag::F32 | Tag::F64 => {
            let f = match a {
                Attr::Int(_) | Attr::Float { .. } => a.as_f64().ok_or_else(misfit)?,
                _ => return Err(misfit()),
            };
            if !f.is_finite() {
                return Err(format!(
                    "`{}`: Paddle 3.3.1 does not read NaN or infinite floats back exactly",
                    a.to_text()
                ));
            }
            json!(f)
        }
        Tag::Str => match a {
            Attr::Str(_) => json!(a.as_str().ok_or_else(misfit)?),
            _ => return Err(misfit()),
        },
        Tag::IntArray => {
            let items = a.as_array().ok_or_else(misfit)?;
            let ints = items
                .iter()
                .map(|x| match x {
                    Attr::Int(i) => Some(*i),
                    _ => None,
                })
                .collect::<Option<Vec<i64>>>()
                .ok_or_else(misfit)?;
            json!(ints)
        }
        Tag::DType => {
            let w = a.as_word().ok_or_else(misfit)?;
            let j = DTYPE_NAMES
                .iter()
                .find(|(_, p)| *p == w)
                .map(|(j, _)| *j)
                .ok_or_else(misfit)?;
            json!(j)
        }
        Tag::Place => place_to_json(a.as_word().ok_or_else(misfit)?).ok_or_else(misfit)?,
    };
    Ok(json!({"#": name, "D": d}))
}

/// `Place(cpu)` → `[1,0,""]`, `Place(undefined:0)` → `[0,0,""]`.
fn place_to_json(word: &str) -> Option<Value> {
    let inner = word.strip_prefix("Place(")?.strip_suffix(')')?;
    let (name, dev) = match inner.split_once(':') {
        Some((n, d)) => (n, Some(d.parse::<i64>().ok()?)),
        None => (inner, None),
    };
    let kind = PLACES.iter().find(|p| p.name == name)?;
    if kind.prints_device != dev.is_some() {
        return None;
    }
    Some(json!([kind.alloc, dev.unwrap_or(0), ""]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(v: Value) -> (String, AttrTag) {
        let (a, t) = attr_from_json(&v).expect("reads");
        (a.to_text(), t)
    }

    #[test]
    fn reads_like_paddle_prints() {
        assert_eq!(read(json!({"#":"0.a_f64","D":2.0})).0, "2");
        assert_eq!(
            read(json!({"#":"0.a_f64","D":-0.4330126941204071})).0,
            "-0.433013"
        );
        assert_eq!(
            read(json!({"#":"1.a_place","D":[0,0,""]})).0,
            "Place(undefined:0)"
        );
        assert_eq!(read(json!({"#":"1.a_place","D":[1,0,""]})).0, "Place(cpu)");
        assert_eq!(
            read(json!({"#":"1.a_dtype","D":"Undefined(ALL_DTYPE)"})).0,
            "Undefined"
        );
        assert_eq!(read(json!({"#":"0.a_str","D":"a\"b"})).0, "\"a\\\"b\"");
        let (text, tag) = read(json!({"#":"0.a_array","D":[{"#":"0.a_i64","D":8}]}));
        assert_eq!((text.as_str(), tag), ("[8]", AttrTag::ArrayOf(Tag::I64)));
        assert_eq!(read(json!({"#":"0.a_array","D":[]})).1, AttrTag::Array);
    }

    #[test]
    fn round_trips_through_the_table_tag() {
        for v in [
            json!({"#":"0.a_f64","D":2.0}),
            json!({"#":"0.a_f64","D":-0.4330126941204071}),
            json!({"#":"0.a_f32","D":0.8999999761581421}),
            json!({"#":"1.a_place","D":[1,0,""]}),
            json!({"#":"1.a_intarray","D":[-1,8]}),
            json!({"#":"0.a_str","D":"x\\y\n"}),
            json!({"#":"0.a_array","D":[{"#":"0.a_i64","D":8},{"#":"0.a_i64","D":16}]}),
        ] {
            let (a, t) = attr_from_json(&v).expect("reads");
            assert_eq!(attr_to_json(&a, t).expect("writes"), v);
        }
    }

    #[test]
    fn refuses_values_that_do_not_fit_the_tag() {
        assert!(attr_to_json(&Attr::Int(1), AttrTag::One(Tag::Bool)).is_err());
        assert!(attr_to_json(&Attr::Int(1 << 40), AttrTag::One(Tag::I32)).is_err());
        assert!(attr_to_json(&Attr::Word("float99".into()), AttrTag::One(Tag::DType)).is_err());
        assert!(
            attr_to_json(&Attr::Word("Place(cpu:0)".into()), AttrTag::One(Tag::Place)).is_err()
        );
        assert!(attr_to_json(&Attr::float(f64::NAN), AttrTag::One(Tag::F32)).is_err());
        assert!(attr_to_json(&Attr::Array(vec![Attr::Int(1)]), AttrTag::Array).is_err());
    }

    #[test]
    fn table_lines_win_over_any_op_lines_and_hints() {
        use crate::dialect::paddle_json::AttrTag::One;
        assert_eq!(table_tag("pd_op.full", "value"), Some(One(Tag::F64)));
        assert_eq!(table_tag("pd_op.whatever", "op_role"), Some(One(Tag::I32)));
        let mut h = TagHints::default();
        h.learn("pd_op.full", "value", One(Tag::I32));
        h.learn("x.op", "k", AttrTag::Array);
        h.learn("x.op", "k", AttrTag::ArrayOf(Tag::I32));
        assert_eq!(tag_for("pd_op.full", "value", &h), Some(One(Tag::F64)));
        assert_eq!(tag_for("x.op", "k", &h), Some(AttrTag::ArrayOf(Tag::I32)));
    }
}
