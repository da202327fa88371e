//! `coalesce_tensor`: the tensors of a list laid out in one contiguous ("fused") buffer, as
//! Paddle does to hand cuDNN an RNN's weights or to fuse gradient all-reduces.
//!
//! Semantics (Paddle's `CoalesceTensorKernel`): `fused_output` is 1-D of dtype `dtype`; tensor
//! `i` occupies `len_i` elements from the sum of the previous lengths, where `len_i` is its
//! element count, or with `use_align` its byte size rounded up to `align_size` bytes (4096, the
//! CPU allocator's chunk, when `align_size` is −1) divided by `size_of_dtype` (the dtype's size
//! when −1). With `copy_data` (or `persist_output`, whose outputs are its inputs in Paddle) each
//! input is copied to its place; with `set_constant` the whole buffer is `constant`; otherwise
//! Paddle leaves the buffer uninitialized, and irw writes zeros (so runs are deterministic), as
//! it does in the alignment padding. `output[i]` is tensor `i`'s place in the buffer, with the
//! input's shape.
//!
//! In Paddle the outputs share the fused buffer's memory: a write to one is seen in the other.
//! Here they are copies; the programs Paddle builds read either the fused buffer or the
//! outputs, which hold the same values.

use crate::exec::dtype::DType;
use crate::exec::error::KResult;
use crate::exec::kernels::cast::cast;
use crate::exec::kernels::join::concat;
use crate::exec::memory;
use crate::exec::tensor::Tensor;
use crate::kbail;

/// The CPU allocator's chunk: the alignment when `align_size` is −1.
const CPU_ALIGNMENT: usize = 4096;

/// The op's attributes.
#[derive(Clone, Debug)]
pub struct CoalesceAttrs {
    pub dtype: DType,
    pub copy_data: bool,
    pub set_constant: bool,
    pub persist_output: bool,
    pub constant: f32,
    pub use_align: bool,
    pub align_size: i64,
    pub size_of_dtype: i64,
}

/// The elements tensor `numel` occupies in the fused buffer.
fn slot_len(numel: usize, at: &CoalesceAttrs, elem: usize) -> KResult<usize> {
    if !at.use_align {
        return Ok(numel);
    }
    let align = match at.align_size {
        -1 => CPU_ALIGNMENT,
        a => match usize::try_from(a) {
            Ok(a) if a > 0 => a,
            _ => kbail!(
                "coalesce_tensor's align_size is {}, must be positive or -1",
                a
            ),
        },
    };
    let bytes = numel.checked_mul(elem);
    let padded = bytes.and_then(|b| b.div_ceil(align).checked_mul(align));
    match padded {
        Some(p) => Ok(p / elem),
        None => kbail!(
            "coalesce_tensor: a tensor of {} elements is too large to align",
            numel
        ),
    }
}

/// `coalesce_tensor(input)`: `(output, fused_output)`.
pub fn coalesce_tensor(input: &[&Tensor], at: &CoalesceAttrs) -> KResult<(Vec<Tensor>, Tensor)> {
    if input.is_empty() {
        kbail!("coalesce_tensor has no input");
    }
    let elem = match at.size_of_dtype {
        -1 => at.dtype.size(),
        s => match usize::try_from(s) {
            Ok(s) if s > 0 => s,
            _ => kbail!(
                "coalesce_tensor's size_of_dtype is {}, must be positive or -1",
                s
            ),
        },
    };
    let mut offsets = Vec::with_capacity(input.len());
    let mut total = 0usize;
    for (i, t) in input.iter().enumerate() {
        if t.numel() == 0 {
            kbail!(
                "coalesce_tensor: input {} has no elements (shape {:?})",
                i,
                t.shape()
            );
        }
        offsets.push(total);
        total = match total.checked_add(slot_len(t.numel(), at, elem)?) {
            Some(n) => n,
            None => kbail!(
                "coalesce_tensor: the fused buffer has more elements than a machine can address"
            ),
        };
    }
    memory::reserve(&"coalesce_tensor's fused buffer", &[total], at.dtype.size())?;
    let copy = at.copy_data || at.persist_output;
    let fill = if !copy && at.set_constant {
        at.constant as f64
    } else {
        0.0
    };
    // Each place is the tensor (or the fill), flattened, then its padding.
    let mut outputs = Vec::with_capacity(input.len());
    let mut parts = Vec::with_capacity(2 * input.len());
    for (i, t) in input.iter().enumerate() {
        let out = if copy {
            cast(t, at.dtype)
        } else {
            Tensor::try_full(t.shape(), at.dtype, fill)?
        };
        let end = offsets.get(i + 1).copied().unwrap_or(total);
        parts.push(out.clone().reshaped(vec![t.numel()])?);
        let pad = end - offsets[i] - t.numel();
        if pad > 0 {
            parts.push(Tensor::try_full(&[pad], at.dtype, fill)?);
        }
        outputs.push(out);
    }
    let refs: Vec<&Tensor> = parts.iter().collect();
    Ok((outputs, concat(&refs, 0)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(copy_data: bool, set_constant: bool, use_align: bool, align_size: i64) -> CoalesceAttrs {
        CoalesceAttrs {
            dtype: DType::F32,
            copy_data,
            set_constant,
            persist_output: false,
            constant: 1.5,
            use_align,
            align_size,
            size_of_dtype: -1,
        }
    }

    /// The layouts Paddle 3.3.1's CPU kernel made of `a = [1, 2, 3]`, `b = [[4, 5], [6, 7]]`
    /// (its fused buffer's length, and where each tensor starts), with `constant` 1.5.
    #[test]
    fn layouts_match_paddle() {
        let a = Tensor::f32(&[3], vec![1.0, 2.0, 3.0]);
        let b = Tensor::f32(&[2, 2], vec![4.0, 5.0, 6.0, 7.0]);
        // (attributes, fused length, where b starts)
        for (attrs, len, b_at) in [
            (at(true, false, true, -1), 2048, 1024),
            (at(true, false, false, -1), 7, 3),
            (at(true, false, true, 40), 20, 10),
        ] {
            let (outs, fused) = coalesce_tensor(&[&a, &b], &attrs).expect("runs");
            assert_eq!(fused.shape(), [len]);
            let f = fused.to_f64_vec();
            assert_eq!(f[..3], [1.0, 2.0, 3.0]);
            assert_eq!(f[b_at..b_at + 4], [4.0, 5.0, 6.0, 7.0]);
            assert_eq!(outs[0].to_f64_vec(), a.to_f64_vec());
            assert_eq!(outs[1].shape(), [2, 2]);
            assert_eq!(outs[1].to_f64_vec(), b.to_f64_vec());
        }
        let (outs, fused) = coalesce_tensor(&[&a, &b], &at(false, true, true, 64)).expect("runs");
        assert_eq!(fused.shape(), [32]);
        assert!(fused.to_f64_vec().iter().all(|&v| v == 1.5));
        assert!(outs
            .iter()
            .all(|o| o.to_f64_vec().iter().all(|&v| v == 1.5)));
    }

    #[test]
    fn dtype_and_refusals() {
        let a = Tensor::i64(&[2], vec![1 << 60, -3]);
        let mut attrs = at(true, false, false, -1);
        attrs.dtype = DType::I64;
        let (outs, fused) = coalesce_tensor(&[&a], &attrs).expect("runs");
        assert_eq!(
            fused.to_i64_vec(),
            [1 << 60, -3],
            "integers are laid out exactly"
        );
        assert_eq!(outs[0].dtype(), DType::I64);
        let empty = Tensor::f32(&[0], vec![]);
        let e = coalesce_tensor(&[&empty], &at(true, false, true, -1)).err();
        assert!(e.expect("refused").message.contains("has no elements"));
        assert!(coalesce_tensor(&[], &at(true, false, true, -1)).is_err());
        assert!(coalesce_tensor(&[&a], &at(true, false, true, 0)).is_err());
    }
}
