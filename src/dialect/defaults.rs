//! Per-op default attributes: what Paddle's op builders set when the caller leaves an argument
//! out (`ops.yaml`: `full(shape, value, dtype=float32, place=CPUPlace())`,
//! `scale(x, scale=1.0, bias=0.0, bias_after_scale=true)`).
//!
//! Why: a Paddle program never lacks these attributes, because Paddle's builders always write
//! them, so an op a rule builds must carry them too. With the defaults here a rule writes only
//! what differs: `pd_op.scale_(%m, %k) {op_role: optimize}` gets `bias: 0.0` and
//! `bias_after_scale: true` as Paddle's builder would give them. What a rule writes always
//! wins; only absent keys are filled, so a rule that spells every attribute builds exactly what
//! it wrote. Both engines fill them: the structural engine when a rule is lowered, the e-graph
//! when a right-hand side is built.
//!
//! A default is listed only where it cannot contradict the op's result type: `full_int_array`'s
//! builder defaults `dtype` to float32, but irw types its result int64 (it is an index list),
//! so a rule must say `dtype: int64` itself.

use crate::ir::DType;
use crate::value::Val;

/// A default value, as a rule would write it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DefaultAttr {
    Float(f64),
    Bool(bool),
    DType(DType),
    /// `Place(...)`'s inner text.
    Place(&'static str),
}

impl DefaultAttr {
    /// The value a rule writing it would give.
    pub fn to_val(self) -> Val {
        match self {
            DefaultAttr::Float(f) => Val::Float(f),
            DefaultAttr::Bool(b) => Val::Bool(b),
            DefaultAttr::DType(d) => Val::DType(d),
            DefaultAttr::Place(p) => Val::Place(p.to_string()),
        }
    }
}

use DefaultAttr::*;

const FULL: &[(&str, DefaultAttr)] = &[
    ("dtype", DType(crate::ir::DType::F32)),
    ("place", Place("cpu")),
];
const PLACE_CPU: &[(&str, DefaultAttr)] = &[("place", Place("cpu"))];
const SCALE: &[(&str, DefaultAttr)] = &[("bias", Float(0.0)), ("bias_after_scale", Bool(true))];

/// The default attributes of `op` (empty for an op without any, or not in the table).
pub fn default_attrs(op: &str) -> &'static [(&'static str, DefaultAttr)] {
    match op {
        "pd_op.full" => FULL,
        "pd_op.full_int_array" => PLACE_CPU,
        "pd_op.scale" | "pd_op.scale_" => SCALE,
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_name_ops_of_the_table() {
        for op in [
            "pd_op.full",
            "pd_op.full_int_array",
            "pd_op.scale",
            "pd_op.scale_",
        ] {
            assert!(super::super::Dialect::get().spec(op).is_some(), "{op}");
            assert!(!default_attrs(op).is_empty(), "{op}");
        }
        assert!(default_attrs("pd_op.relu").is_empty());
        assert_eq!(default_attrs("pd_op.scale")[0].1.to_val(), Val::Float(0.0));
    }
}
