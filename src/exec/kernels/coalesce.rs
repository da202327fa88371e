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
