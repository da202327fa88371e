//! Element types the executor computes with, and their names in Paddle's text.
//!
//! Paddle spells a dtype two ways: as an attribute value (`float32`, `bfloat16`, `int64`) and as
//! a tensor-type suffix (`f32`, `bf16`, `i64`, `b`). Both parse to [`DType`].

use std::fmt;

/// The element type of a [`Tensor`](super::Tensor).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    F32,
    BF16,
    F16,
    F64,
    I64,
    I32,
    Bool,
}

impl DType {
    /// Parses an attribute spelling (`float32`) or a type suffix (`f32`). `Undefined` and unknown
    /// names give `None`.
    pub fn parse(s: &str) -> Option<DType> {
        Some(match s {
            "float32" | "f32" => DType::F32,
            "bfloat16" | "bf16" => DType::BF16,
            "float16" | "f16" => DType::F16,
            "float64" | "f64" => DType::F64,
            "int64" | "i64" => DType::I64,
            "int32" | "i32" => DType::I32,
            "bool" | "b" => DType::Bool,
            _ => return None,
        })
    }

    /// Paddle's attribute spelling (`float32`), also used in the `*.numerics.json` files.
    pub fn paddle_name(self) -> &'static str {
        match self {
            DType::F32 => "float32",
            DType::BF16 => "bfloat16",
            DType::F16 => "float16",
            DType::F64 => "float64",
            DType::I64 => "int64",
            DType::I32 => "int32",
            DType::Bool => "bool",
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::F64 | DType::I64 => 8,
            DType::F32 | DType::I32 => 4,
            DType::BF16 | DType::F16 => 2,
            DType::Bool => 1,
        }
    }

    /// True for the floating-point types.
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::BF16 | DType::F16 | DType::F64)
    }

    /// True for the 16-bit floats, whose arithmetic is done in f32.
    pub fn is_half(self) -> bool {
        matches!(self, DType::BF16 | DType::F16)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.paddle_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_spellings_parse() {
        for d in [
            DType::F32,
            DType::BF16,
            DType::F16,
            DType::F64,
            DType::I64,
            DType::I32,
            DType::Bool,
        ] {
            assert_eq!(DType::parse(d.paddle_name()), Some(d));
        }
        assert_eq!(DType::parse("bf16"), Some(DType::BF16));
        assert_eq!(DType::parse("b"), Some(DType::Bool));
        assert_eq!(DType::parse("Undefined"), None);
    }
}
