//! What the executor adds to the IR's [`DType`]: which element types it holds and computes with.
//!
//! Why no dtype of its own: a dtype is one concept, and two enums for it had to be translated
//! (through their names) wherever the executor read a program's types. The executor uses
//! [`crate::ir::DType`] directly; its element size, its float-ness and Paddle's attribute
//! spelling (`float32`, also the `*.numerics.json` spelling) are the IR's.
//!
//! The executor computes with eight of the IR's twelve dtypes: f32, bf16, f16, f64, i64, i32,
//! bool and u8 (dropout's mask, batch_norm's reserve space), the element types of
//! [`Data`](super::data::Data). i16, i8, c64 and c128 have no buffer. Every dtype the executor
//! reads from an attribute or a feed goes through [`parse`], which gives `None` for those four
//! exactly as for an unknown name, so each reader refuses them
//! (`dtype int8 is not supported by the executor` at the op) or falls back as it does for an
//! unknown one; a declared type's dtype is only compared with a tensor's when it is
//! [`computable`]. So every dtype that reaches a kernel is computable, which the kernels that
//! build a buffer of a given dtype (`cast`, `Tensor::full`) rely on.

pub use crate::ir::DType;

/// Whether the executor holds and computes with `d` (see the module doc).
pub const fn computable(d: DType) -> bool {
    matches!(
        d,
        DType::F32
            | DType::BF16
            | DType::F16
            | DType::F64
            | DType::I64
            | DType::I32
            | DType::Bool
            | DType::U8
    )
}

/// Parses an attribute spelling (`float32`) or a type suffix (`f32`) ([`DType::parse`]) of a
/// dtype the executor computes with. `Undefined`, unknown names and the dtypes the executor
/// cannot compute with give `None`.
pub fn parse(s: &str) -> Option<DType> {
    DType::parse(s).filter(|&d| computable(d))
}

/// The message of a kernel asked to make a buffer of a dtype the executor does not hold: not
/// reached from a program (see the module doc), but a library caller may pass one.
pub(crate) fn not_held(d: DType) -> String {
    format!("dtype {} is not supported by the executor", d.attr_name())
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
            DType::U8,
        ] {
            assert!(computable(d));
            assert_eq!(parse(d.attr_name()), Some(d));
            assert_eq!(parse(d.short_name()), Some(d));
        }
        assert_eq!(parse("bf16"), Some(DType::BF16));
        assert_eq!(parse("b"), Some(DType::Bool));
        assert_eq!(parse("Undefined"), None);
    }

    #[test]
    fn dtypes_without_a_buffer_do_not_parse() {
        for d in [DType::I16, DType::I8, DType::C64, DType::C128] {
            assert!(!computable(d));
            assert_eq!(parse(d.attr_name()), None);
            assert_eq!(parse(d.short_name()), None);
            assert_eq!(DType::parse(d.attr_name()), Some(d));
        }
    }
}
