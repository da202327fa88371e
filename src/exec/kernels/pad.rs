//! `pad3d` and `pad3d_grad`: a 5-D tensor grown along its three spatial axes (depth, height,
//! width), the new border filled by one of four rules (`mode`):
//!
//! - `constant`: `pad_value`;
//! - `reflect`: the input mirrored about its edge element, which is not repeated (a border of
//!   `p` needs an axis longer than `p`, as Paddle requires);
//! - `replicate`: the edge element repeated;
//! - `circular`: the input continued periodically.
//!
//! `paddings` is `[left, right, top, bottom, front, back]`: width first, then height, then
//! depth, the reverse of the axis order. Under every rule an output element either reads one
//! input element or none (a constant border), and each axis decides that on its own, so the
//! kernel builds one source map per axis and combines them. The forward copies through
//! [`pick`], exact for every dtype; the grad adds each `out_grad` element to the input element
//! it was read from, in output order, which is what makes a reflected or replicated edge
//! collect several gradients.

use crate::exec::error::KResult;
use crate::exec::kernels::pick::{concat, pick};
use crate::exec::tensor::Tensor;
use crate::kbail;

/// The border rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Constant,
    Reflect,
    Replicate,
    Circular,
}

/// `pad3d`'s attributes (the paddings come from an operand).
#[derive(Clone, Debug, PartialEq)]
pub struct PadAttrs {
    pub paddings: Vec<i64>,
    pub mode: Mode,
    pub pad_value: f64,
    pub channels_last: bool,
}

impl PadAttrs {
    /// `mode` and `data_format` as the op spells them.
    pub fn mode_and_layout(mode: &str, data_format: &str) -> KResult<(Mode, bool)> {
        let m = match mode {
            "constant" => Mode::Constant,
            "reflect" => Mode::Reflect,
            "replicate" => Mode::Replicate,
            "circular" => Mode::Circular,
            other => kbail!(
                "pad3d: mode `{}` is not one of `constant`, `reflect`, `replicate`, `circular`",
                other
            ),
        };
        let last = match data_format {
            "NCDHW" => false,
            "NDHWC" => true,
            other => kbail!(
                "pad3d: data_format `{}` is not one the executor runs (NCDHW or NDHWC)",
                other
            ),
        };
        Ok((m, last))
    }
}

/// Per output axis, the input index each position reads (`None`: the constant border).
type AxisMaps = Vec<Vec<Option<usize>>>;

/// The output's shape and its [`AxisMaps`], after checking the input and paddings against
/// Paddle's contract.
fn source_maps(shape: &[usize], at: &PadAttrs) -> KResult<(Vec<usize>, AxisMaps)> {
    if shape.len() != 5 {
        kbail!("pad3d: input must have rank 5, has shape {:?}", shape);
    }
    let p = &at.paddings;
    if p.len() != 6 {
        kbail!("pad3d: paddings must hold 6 values, holds {:?}", p);
    }
    if p.iter().any(|&v| v < 0) {
        kbail!("pad3d: paddings {:?} must not be negative", p);
    }
    // The (before, after) padding of each axis; the batch and channel axes get none.
    let spatial = if at.channels_last { 1 } else { 2 };
    let mut pads = [(0i64, 0i64); 5];
    pads[spatial] = (p[4], p[5]);
    pads[spatial + 1] = (p[2], p[3]);
    pads[spatial + 2] = (p[0], p[1]);
    let volume: usize = shape[spatial..spatial + 3].iter().product();
    if volume == 0 && matches!(at.mode, Mode::Replicate | Mode::Circular) {
        kbail!(
            "pad3d: an input with no spatial elements ({:?}) cannot be padded in {:?} mode",
            shape,
            at.mode
        );
    }
    let mut out_shape = Vec::with_capacity(5);
    for (&n, &(before, after)) in shape.iter().zip(&pads) {
        let out = (n as u64)
            .checked_add(before as u64)
            .and_then(|o| o.checked_add(after as u64))
            .and_then(|o| usize::try_from(o).ok());
        let Some(out) = out else {
            kbail!("pad3d: paddings {:?} overflow the output's size", p);
        };
        out_shape.push(out);
    }
    // The offset list the kernel builds holds one word per output element.
    crate::exec::memory::reserve(&"pad3d's result", &out_shape, size_of::<usize>())?;
    let mut maps = Vec::with_capacity(5);
    for ((&n, &(before, after)), &out) in shape.iter().zip(&pads).zip(&out_shape) {
        let len = n as i64;
        if at.mode == Mode::Reflect && (before >= len || after >= len) && before + after > 0 {
            kbail!(
                "pad3d: reflect padding ({}, {}) must be smaller than the axis it pads ({})",
                before,
                after,
                n
            );
        }
        let map = (0..out as i64)
            .map(|o| {
                let i = o - before;
                match at.mode {
                    Mode::Constant => (0..len).contains(&i).then_some(i),
                    // Mirrored about 0, then about the last index.
                    Mode::Reflect => {
                        let i = i.abs();
                        Some(i.min(2 * len - i - 2))
                    }
                    Mode::Replicate => Some(i.clamp(0, len - 1)),
                    Mode::Circular => Some(i.rem_euclid(len)),
                }
                .map(|i| i as usize)
            })
            .collect();
        maps.push(map);
    }
    Ok((out_shape, maps))
}

/// For each output element in order, the offset of the input element it reads (`None`: the
/// constant border).
fn sources(shape: &[usize], at: &PadAttrs) -> KResult<(Vec<usize>, Vec<Option<usize>>)> {
    let (out_shape, maps) = source_maps(shape, at)?;
    let mut in_strides = [1usize; 5];
    for d in (0..4).rev() {
        in_strides[d] = in_strides[d + 1] * shape[d + 1];
    }
    let n: usize = out_shape.iter().product();
    let mut src = Vec::with_capacity(n);
    let mut at_idx = [0usize; 5];
    for _ in 0..n {
        let mut off = Some(0usize);
        for d in 0..5 {
            off = match (off, maps[d][at_idx[d]]) {
                (Some(o), Some(i)) => Some(o + i * in_strides[d]),
                _ => None,
            };
        }
        src.push(off);
        // The next output index, last axis fastest.
        for d in (0..5).rev() {
            at_idx[d] += 1;
            if at_idx[d] < out_shape[d] {
                break;
            }
            at_idx[d] = 0;
        }
    }
    Ok((out_shape, src))
}

/// `pd_op.pad3d(x, paddings) {mode, pad_value, data_format}`.
pub fn pad3d(x: &Tensor, at: &PadAttrs) -> KResult<Tensor> {
    let (out_shape, src) = sources(x.shape(), at)?;
    // The border value, converted to x's dtype, sits one past x's elements so that one pick
    // moves both.
    let fill = Tensor::try_full(&[1], x.dtype(), at.pad_value)?;
    let border = x.numel();
    let data = concat(&[x.data(), fill.data()])?;
    let idx: Vec<usize> = src.iter().map(|s| s.unwrap_or(border)).collect();
    Tensor::new(out_shape, pick(&data, &idx))
}

/// `pd_op.pad3d_grad(x, out_grad, paddings) {mode, pad_value, data_format}`: each `out_grad`
/// element added to the `x` element its output read; the constant border's gradient is dropped.
pub fn pad3d_grad(x: &Tensor, dout: &Tensor, at: &PadAttrs) -> KResult<Tensor> {
    let (out_shape, src) = sources(x.shape(), at)?;
    if dout.shape() != out_shape.as_slice() {
        kbail!(
            "pad3d_grad: out_grad {:?} is not the shape of the output {:?}",
            dout.shape(),
            out_shape
        );
    }
    let g = dout.to_f32();
    let mut dx = vec![0f32; x.numel()];
    for (s, v) in src.iter().zip(g.iter()) {
        if let Some(s) = s {
            dx[*s] += v;
        }
    }
    Tensor::from_f32_as(x.shape(), dx, dout.dtype())
}
