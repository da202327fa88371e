//! `unfold` and `unfold_grad` (`nn.Unfold`): the sliding windows of an image as columns.
//!
//! Semantics (Paddle's `UnfoldInferMeta` and CPU kernel): `x` is `[N, C, H, W]`; `kernel_sizes`,
//! `strides` and `dilations` have one value per spatial dimension, `paddings` four, in the
//! order `[top, left, bottom, right]`. An output dimension is
//! `(in + before + after − (d·(k − 1) + 1)) / s + 1` and must be positive; the result is
//! `[N, C·KH·KW, OH·OW]`, row `(c·KH + i)·KW + j` holding input
//! `(c, oy·s − top + i·d, ox·s − left + j·d)` (zero in the padding) at column `oy·OW + ox`.
//!
//! That is exactly one sample's im2col of a convolution with one group, so the kernel is
//! [`conv`](super::conv)'s im2col per sample, and the grad its col2im (each column entry added
//! back to the pixel it was copied from).

use crate::exec::error::KResult;
use crate::exec::kernels::conv::{buffer, col2im, im2col, pair, ConvScalar, Geometry};
use crate::exec::memory;
use crate::exec::tensor::{Data, Tensor};
use crate::kbail;

/// The attributes of an `unfold` (and its grad).
#[derive(Clone, Debug)]
pub struct UnfoldAttrs {
    pub kernel_sizes: Vec<i64>,
    pub strides: Vec<i64>,
    /// `[top, left, bottom, right]`.
    pub paddings: Vec<i64>,
    pub dilations: Vec<i64>,
}

fn geometry(x: &[usize], at: &UnfoldAttrs) -> KResult<Geometry> {
    let &[n, c, h, w] = x else {
        kbail!("unfold needs a 4-D (NCHW) input, got {:?}", x);
    };
    for (key, v) in [
        ("kernel_sizes", &at.kernel_sizes),
        ("strides", &at.strides),
        ("dilations", &at.dilations),
    ] {
        if v.len() != 2 {
            kbail!("unfold: {} has {} elements, expected 2", key, v.len());
        }
    }
    let k = pair(&at.kernel_sizes, "kernel_sizes", 1)?;
    let stride = pair(&at.strides, "strides", 1)?;
    let dilation = pair(&at.dilations, "dilations", 1)?;
    let &[top, left, bottom, right] = at.paddings.as_slice() else {
        kbail!(
            "unfold: paddings has {} elements, expected 4 ([top, left, bottom, right])",
            at.paddings.len()
        );
    };
    if [top, left, bottom, right].iter().any(|&p| p < 0) {
        kbail!(
            "unfold: paddings must not be negative, got {:?}",
            at.paddings
        );
    }
    let mut out = [0; 2];
    for i in 0..2 {
        let (input, before, after) = [(h, top, bottom), (w, left, right)][i];
        let padded = input + before as usize + after as usize;
        let span = dilation[i] * (k[i] - 1) + 1;
        if padded < span {
            kbail!(
                "unfold: the window {:?} (dilated to {}) does not fit the padded input {:?}",
                k,
                span,
                x
            );
        }
        out[i] = (padded - span) / stride[i] + 1;
    }
    Ok(Geometry {
        n,
        c,
        h,
        w,
        o: 1,
        groups: 1,
        kh: k[0],
        kw: k[1],
        oh: out[0],
        ow: out[1],
        stride,
        dilation,
        pad: [top as usize, left as usize],
    })
}

fn float_input(x: &Tensor, op: &str) -> KResult<bool> {
    if !x.dtype().is_float() {
        kbail!(
            "{} computes float tensors, got {}",
            op,
            x.dtype().attr_name()
        );
    }
    Ok(x.dtype() == crate::exec::dtype::DType::F64)
}

fn unfold_buffers<T: ConvScalar>(g: &Geometry, x: &[T]) -> Vec<T> {
    let (plane, rows, cols) = (g.c * g.h * g.w, g.c * g.kh * g.kw, g.oh * g.ow);
    let mut out = vec![T::default(); g.n * rows * cols];
    for (xs, dst) in x.chunks_exact(plane).zip(out.chunks_exact_mut(rows * cols)) {
        im2col(g, xs, dst);
    }
    out
}

fn fold_buffers<T: ConvScalar>(g: &Geometry, dy: &[T]) -> Vec<T> {
    let (plane, rows, cols) = (g.c * g.h * g.w, g.c * g.kh * g.kw, g.oh * g.ow);
    let mut dx = vec![T::default(); g.n * plane];
    for (dxs, src) in dx.chunks_exact_mut(plane).zip(dy.chunks_exact(rows * cols)) {
        col2im(g, src, dxs);
    }
    dx
}

/// `unfold(x)`: `[N, C·KH·KW, OH·OW]` in `x`'s dtype (16-bit floats computed in f32).
pub fn unfold(x: &Tensor, at: &UnfoldAttrs) -> KResult<Tensor> {
    let f64_path = float_input(x, "unfold")?;
    let g = geometry(x.shape(), at)?;
    let shape = vec![g.n, g.c * g.kh * g.kw, g.oh * g.ow];
    memory::reserve(&"unfold's output", &shape, 4)?;
    let data = if f64_path {
        Data::F64(unfold_buffers(&g, &x.to_f64_vec()))
    } else {
        Data::F32(unfold_buffers(&g, &x.to_f32()))
    };
    buffer(shape, data, x.dtype())
}

/// `unfold_grad(x, out_grad)`: each column entry added back to the pixel it was read from.
pub fn unfold_grad(x: &Tensor, out_grad: &Tensor, at: &UnfoldAttrs) -> KResult<Tensor> {
    let f64_path = float_input(x, "unfold_grad")?;
    let g = geometry(x.shape(), at)?;
    let want = [g.n, g.c * g.kh * g.kw, g.oh * g.ow];
    if out_grad.shape() != want {
        kbail!(
            "out_grad has shape {:?}, unfold's output is {:?}",
            out_grad.shape(),
            want
        );
    }
    let data = if f64_path {
        Data::F64(fold_buffers(&g, &out_grad.to_f64_vec()))
    } else {
        Data::F32(fold_buffers(&g, &out_grad.to_f32()))
    };
    buffer(x.shape().to_vec(), data, x.dtype())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::kernels::testdata::seq_x;

    #[test]
    fn columns_are_the_padded_windows() {
        let x = Tensor::f32(&[1, 2, 3, 4], seq_x(24));
        let at = UnfoldAttrs {
            kernel_sizes: vec![2, 3],
            strides: vec![1, 2],
            paddings: vec![1, 0, 0, 2],
            dilations: vec![2, 1],
        };
        let out = unfold(&x, &at).unwrap();
        // H: 3 + 1 + 0 − 3 = 1 → 2 rows; W: 4 + 0 + 2 − 3 = 3 → 2 columns.
        assert_eq!(out.shape(), [1, 12, 4]);
        let (xs, os) = (x.to_f32(), out.to_f32());
        for c in 0..2 {
            for i in 0..2 {
                for j in 0..3 {
                    for (oy, ox) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
                        let (y, xx) = (oy as isize - 1 + 2 * i as isize, 2 * ox + j);
                        let want = if !(0..3).contains(&y) || xx >= 4 {
                            0.0
                        } else {
                            xs[(c * 3 + y as usize) * 4 + xx]
                        };
                        let row = (c * 2 + i) * 3 + j;
                        assert_eq!(os[row * 4 + oy * 2 + ox], want);
                    }
                }
            }
        }
        // The grad is the adjoint: <unfold(x), y> = <x, unfold_grad(y)>.
        let y = Tensor::f32(out.shape(), seq_x(out.numel()));
        let dx = unfold_grad(&x, &y, &at).unwrap();
        let dot = |a: &Tensor, b: &Tensor| -> f64 {
            a.to_f64_vec()
                .iter()
                .zip(b.to_f64_vec())
                .map(|(p, q)| p * q)
                .sum()
        };
        assert!((dot(&out, &y) - dot(&x, &dx)).abs() < 1e-4);
    }
}
