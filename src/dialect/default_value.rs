//! A definition's default as the attribute value Paddle's builder gives an op that is built
//! without it (`full`'s `place = cpu` is `Place(cpu)`, `dtype = undefined` is `Undefined`).
//!
//! Why: Paddle's loader does not fill defaults in. An op read without an attribute its
//! definition has fails in Paddle's executor (`[place] MUST in attribute map`), so the JSON
//! writer writes the default, and the executor computes with the same value: both take it from
//! here ([`super::AttrSpec::default_value`]), so what `irw run` computed is what Paddle runs.
//!
//! A default this cannot read as a value of its type (`quant_round_type: i32 = true`) has no
//! value, and neither has one irw does not assume (a `given(..)` of the dialect data,
//! [`super::data`]): the writer refuses an op lacking it rather than guess, as the executor does.

use super::data::{AttrType, ScalarType};
use super::paddle_json::{DTYPE_NAMES, PLACES};
use crate::ir::Attr;

/// The value of default `text` of an attribute of type `ty`, as Paddle prints it.
pub fn of(ty: AttrType, text: &str) -> Option<Attr> {
    let text = text.trim();
    match ty {
        AttrType::Bool => scalar(ScalarType::Bool, text),
        AttrType::I32 => scalar(ScalarType::I32, text),
        AttrType::I64 => scalar(ScalarType::I64, text),
        AttrType::F32 => scalar(ScalarType::F32, text),
        AttrType::F64 => scalar(ScalarType::F64, text),
        AttrType::Str => scalar(ScalarType::Str, text),
        AttrType::Scalar(s) => scalar(s, text),
        AttrType::DType => {
            let word = if text.eq_ignore_ascii_case("undefined") {
                "Undefined"
            } else {
                DTYPE_NAMES.iter().find(|(_, p)| *p == text)?.1
            };
            Some(Attr::Word(word.into()))
        }
        AttrType::Place => {
            let p = PLACES.iter().find(|p| p.name == text)?;
            let word = if p.prints_device {
                format!("Place({}:0)", p.name)
            } else {
                format!("Place({})", p.name)
            };
            Some(Attr::Word(word.into()))
        }
        AttrType::IntArray => list(ScalarType::I64, text),
        AttrType::Array(s) => list(s, text),
    }
}

fn list(s: ScalarType, text: &str) -> Option<Attr> {
    let inner = text.strip_prefix('[')?.strip_suffix(']')?.trim();
    if inner.is_empty() {
        return Some(Attr::Array(Vec::new()));
    }
    inner
        .split(',')
        .map(|item| scalar(s, item.trim()))
        .collect::<Option<Vec<_>>>()
        .map(Attr::Array)
}

fn scalar(s: ScalarType, text: &str) -> Option<Attr> {
    match s {
        ScalarType::Bool => match text {
            "true" => Some(Attr::Bool(true)),
            "false" => Some(Attr::Bool(false)),
            _ => None,
        },
        ScalarType::I32 => {
            let i: i64 = text.parse().ok()?;
            i32::try_from(i).is_ok().then_some(Attr::Int(i))
        }
        ScalarType::I64 => text.parse().ok().map(Attr::Int),
        ScalarType::F32 | ScalarType::F64 | ScalarType::Any => {
            let v: f64 = text.trim_end_matches('f').parse().ok()?;
            // Paddle prints an integral float without a fraction (`1`, not `1.0`).
            if v.fract() == 0.0 && v.abs() < 1e15 {
                Some(Attr::Int(v as i64))
            } else {
                Some(Attr::float(v))
            }
        }
        ScalarType::Str => {
            let inner = text.strip_prefix('"')?.strip_suffix('"')?;
            Some(Attr::string(inner))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Dialect;
    use super::*;

    fn default_of(op: &str, attr: &str) -> Option<String> {
        let spec = Dialect::get().spec(op).expect("op in the table");
        let a = spec.attrs.iter().find(|a| a.name == attr).expect("attr");
        a.default_value().map(|v| v.to_text())
    }

    #[test]
    fn defaults_are_values_as_paddle_prints_them() {
        assert_eq!(
            default_of("pd_op.full", "place").as_deref(),
            Some("Place(cpu)")
        );
        assert_eq!(
            default_of("pd_op.full", "dtype").as_deref(),
            Some("float32")
        );
        assert_eq!(default_of("pd_op.full", "value"), None);
        assert_eq!(
            default_of("pd_op.adam_", "min_row_size_to_use_multithread").as_deref(),
            Some("1000")
        );
        assert_eq!(
            default_of("pd_op.adam_", "lazy_mode").as_deref(),
            Some("false")
        );
        assert_eq!(
            of(AttrType::F32, "1e-5").map(|a| a.to_text()).as_deref(),
            Some("1e-05")
        );
        assert_eq!(
            of(AttrType::F32, ".5").map(|a| a.to_text()).as_deref(),
            Some("0.5")
        );
        assert_eq!(
            of(AttrType::Str, "\"NCHW\"")
                .map(|a| a.to_text())
                .as_deref(),
            Some("\"NCHW\"")
        );
        assert_eq!(
            of(AttrType::DType, "undefined")
                .map(|a| a.to_text())
                .as_deref(),
            Some("Undefined")
        );
        assert_eq!(
            of(AttrType::Place, "undefined")
                .map(|a| a.to_text())
                .as_deref(),
            Some("Place(undefined:0)")
        );
        assert_eq!(
            of(AttrType::Array(ScalarType::I32), "[1, 1]")
                .map(|a| a.to_text())
                .as_deref(),
            Some("[1,1]")
        );
        assert_eq!(of(AttrType::I32, "true"), None);
        assert_eq!(default_of("pd_op.all_reduce", "reduce_type"), None);
        assert_eq!(
            default_of("pd_op.all_reduce", "ring_id").as_deref(),
            Some("0")
        );
    }

    /// Every default of the table either reads as a value that fits its type, or is one of the
    /// few the writer refuses to guess.
    #[test]
    fn table_defaults_fit_their_types() {
        let mut unreadable = Vec::new();
        for spec in Dialect::get().all() {
            for a in spec.attrs {
                let Some(text) = a.default else { continue };
                match a.default_value() {
                    Some(v) => assert!(
                        super::super::verify::fits(v, a.ty),
                        "{}.{} = {text}",
                        spec.name,
                        a.name
                    ),
                    None => unreadable.push(format!("{}.{} = {text}", spec.name, a.name)),
                }
            }
        }
        assert!(unreadable.len() < 10, "{unreadable:#?}");
    }
}
