//! Moving elements without computing on them, for every element type at once: a buffer
//! rearranged by a list of source offsets ([`pick`]), and buffers joined end to end
//! ([`concat`]).
//!
//! Why one mover: the layout ops (stack, concat, split, gather, tile, expand, triu/tril,
//! embedding, slice_grad) differ only in *which* source element lands where. Each computes that
//! as an offset list and lets [`pick`] copy, so no op matches on the seven element types itself
//! and bf16/f16/integer/bool tensors move exactly (no widening).

use crate::exec::error::KResult;
use crate::exec::tensor::Data;
use crate::kbail;

/// An offset meaning "no source element": the result holds zero (false for bool) there.
pub const ZERO: usize = usize::MAX;

fn pick_t<T: Copy + Default>(v: &[T], idx: &[usize]) -> Vec<T> {
    idx.iter()
        .map(|&i| if i == ZERO { T::default() } else { v[i] })
        .collect()
}

/// `out[k] = src[idx[k]]` (zero where `idx[k]` is [`ZERO`]). Every other offset must be in
/// range; callers compute them from shapes they have checked.
pub fn pick(src: &Data, idx: &[usize]) -> Data {
    match src {
        Data::F32(v) => Data::F32(pick_t(v, idx)),
        Data::BF16(v) => Data::BF16(pick_t(v, idx)),
        Data::F16(v) => Data::F16(pick_t(v, idx)),
        Data::F64(v) => Data::F64(pick_t(v, idx)),
        Data::I64(v) => Data::I64(pick_t(v, idx)),
        Data::I32(v) => Data::I32(pick_t(v, idx)),
        Data::Bool(v) => Data::Bool(pick_t(v, idx)),
        Data::U8(v) => Data::U8(pick_t(v, idx)),
    }
}

/// The buffers end to end; all must have the first one's element type.
pub fn concat(parts: &[&Data]) -> KResult<Data> {
    let Some(first) = parts.first() else {
        kbail!("nothing to join");
    };
    macro_rules! join {
        ($variant:ident) => {{
            let mut out = Vec::with_capacity(parts.iter().map(|p| p.len()).sum());
            for p in parts {
                match p {
                    Data::$variant(v) => out.extend_from_slice(v),
                    other => kbail!(
                        "operands of different dtypes ({} and {})",
                        first.dtype().attr_name(),
                        other.dtype().attr_name()
                    ),
                }
            }
            Data::$variant(out)
        }};
    }
    Ok(match first {
        Data::F32(_) => join!(F32),
        Data::BF16(_) => join!(BF16),
        Data::F16(_) => join!(F16),
        Data::F64(_) => join!(F64),
        Data::I64(_) => join!(I64),
        Data::I32(_) => join!(I32),
        Data::Bool(_) => join!(Bool),
        Data::U8(_) => join!(U8),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pick_moves_and_zeroes() {
        let d = Data::I64(vec![10, 11, 12]);
        assert_eq!(pick(&d, &[2, ZERO, 0]), Data::I64(vec![12, 0, 10]));
        let b = Data::Bool(vec![true, false]);
        assert_eq!(pick(&b, &[0, 0, ZERO]), Data::Bool(vec![true, true, false]));
    }

    #[test]
    fn concat_requires_one_dtype() {
        let a = Data::F32(vec![1.0]);
        let b = Data::F32(vec![2.0, 3.0]);
        assert_eq!(concat(&[&a, &b]).unwrap(), Data::F32(vec![1.0, 2.0, 3.0]));
        assert!(concat(&[&a, &Data::I64(vec![1])]).is_err());
        assert!(concat(&[]).is_err());
    }
}
