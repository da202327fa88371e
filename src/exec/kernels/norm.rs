//! `p_norm` and its grad: the vector p-norm of `x` along one axis (or of all of `x`, `asvector`),
//! what `F.normalize`, `F.pairwise_distance` and `paddle.linalg.norm` lower to.
//!
//! ```text
//! porder 0      out = #{x ≠ 0}                    dx = 0
//! porder ±inf   out = max |x| (min |x| for −inf)  dx = dout · sign(x) where |x| = out
//! otherwise     out = (Σ |x|^p)^(1/p)              dx = dout · sign(x) · |x|^(p−1) / (out^(p−1) + ε)
//! ```
//!
//! The conventions are Paddle 3.3.1's CPU kernel's, recorded in
//! `tests/exec_fixtures/paddle_loss_index_kernels.json`: ε appears only in the grad (so the grad
//! of a zero vector is 0, not NaN, and the forward is the exact norm); every element tied for
//! the ±inf extremum gets the whole gradient, not a share of it; `sign(0) = 0`, so a zero
//! element gets no gradient, even under porder 1.
//!
//! `norm` and its grad: the l2 normalization along one axis, `out = x / ‖x‖` with
//! `‖x‖ = sqrt(Σ x² + ε)` (ε inside the root, so a zero vector normalizes to 0), `norm` that
//! root with the axis kept as 1; `dx = (dout − x·Σ(x·dout)/‖x‖²) / ‖x‖`. Paddle 3.3.1's CPU
//! kernels, recorded in `tests/exec_fixtures/paddle_misc_kernels.json`.

use super::float_dtype;
use crate::exec::error::KResult;
use crate::exec::tensor::Tensor;
use crate::kbail;

/// `p_norm`'s attributes.
#[derive(Clone, Copy, Debug)]
pub struct PNormAttrs {
    pub porder: f32,
    pub axis: i64,
    pub epsilon: f32,
    pub keepdim: bool,
    pub asvector: bool,
}

/// The reduction as `[pre, n, post]` (the norm runs over `n`, `post` apart) and the out shape.
fn layout(shape: &[usize], at: &PNormAttrs, op: &str) -> KResult<([usize; 3], Vec<usize>)> {
    if at.asvector {
        let n = shape.iter().product();
        let out = if at.keepdim {
            vec![1; shape.len()]
        } else {
            vec![]
        };
        return Ok(([1, n, 1], out));
    }
    let a = super::axis_of(at.axis, shape.len(), op)?;
    let dims = [
        shape[..a].iter().product(),
        shape[a],
        shape[a + 1..].iter().product(),
    ];
    let mut out = shape.to_vec();
    if at.keepdim {
        out[a] = 1;
    } else {
        out.remove(a);
    }
    Ok((dims, out))
}

fn sign(v: f32) -> f32 {
    if v > 0.0 {
        1.0
    } else if v < 0.0 {
        -1.0
    } else {
        0.0
    }
}

/// The norm of one strided run of `n` values.
fn norm_of(x: &[f32], start: usize, n: usize, stride: usize, p: f32) -> f32 {
    let vals = (0..n).map(|j| x[start + j * stride].abs());
    if p == 0.0 {
        vals.filter(|&a| a != 0.0).count() as f32
    } else if p == f32::INFINITY {
        vals.fold(0.0f32, f32::max)
    } else if p == f32::NEG_INFINITY {
        vals.fold(f32::INFINITY, f32::min)
    } else {
        let s: f64 = vals.map(|a| (a as f64).powf(p as f64)).sum();
        s.powf(1.0 / p as f64) as f32
    }
}

/// `p_norm(x) {porder, axis, epsilon, keepdim, asvector}`.
pub fn p_norm(x: &Tensor, at: &PNormAttrs) -> KResult<Tensor> {
    let ([pre, n, post], out_shape) = layout(x.shape(), at, "p_norm")?;
    if n == 0 {
        kbail!("p_norm: the reduced axis of {:?} is empty", x.shape());
    }
    let xs = x.to_f32();
    let mut out = Vec::with_capacity(pre * post);
    for i in 0..pre {
        for k in 0..post {
            out.push(norm_of(&xs, i * n * post + k, n, post, at.porder));
        }
    }
    Tensor::from_f32_as(&out_shape, out, float_dtype(x.dtype()))
}

/// `p_norm_grad(x, out, out_grad) {porder, axis, epsilon, keepdim, asvector}`.
pub fn p_norm_grad(x: &Tensor, out: &Tensor, dout: &Tensor, at: &PNormAttrs) -> KResult<Tensor> {
    let ([pre, n, post], out_shape) = layout(x.shape(), at, "p_norm_grad")?;
    let reduced = pre * post;
    for (what, t) in [("out", out), ("out_grad", dout)] {
        if t.numel() != reduced {
            kbail!(
                "p_norm_grad: {} has shape {:?}, the norm of {:?} has shape {:?}",
                what,
                t.shape(),
                x.shape(),
                out_shape
            );
        }
    }
    let (xs, norms, g) = (x.to_f32(), out.to_f32(), dout.to_f32());
    let p = at.porder;
    let mut dx = vec![0.0f32; xs.len()];
    if p != 0.0 {
        for i in 0..pre {
            for k in 0..post {
                let (norm, gv) = (norms[i * post + k], g[i * post + k]);
                let scale = if p.is_infinite() {
                    0.0
                } else {
                    gv / (norm.powf(p - 1.0) + at.epsilon)
                };
                for j in 0..n {
                    let e = (i * n + j) * post + k;
                    let v = xs[e];
                    dx[e] = if p.is_infinite() {
                        if v.abs() == norm {
                            sign(v) * gv
                        } else {
                            0.0
                        }
                    } else {
                        v.abs().powf(p - 1.0) * scale * sign(v)
                    };
                }
            }
        }
    }
    Tensor::from_f32_as(x.shape(), dx, float_dtype(x.dtype()))
}

/// `norm`'s reduction as `[pre, n, post]` and its `norm` shape (the axis kept as 1).
fn l2_layout(shape: &[usize], axis: i64, op: &str) -> KResult<([usize; 3], Vec<usize>)> {
    let at = PNormAttrs {
        porder: 2.0,
        axis,
        epsilon: 0.0,
        keepdim: true,
        asvector: false,
    };
    layout(shape, &at, op)
}

/// `norm(x) {axis, epsilon}` → (out, norm): `x` divided by its l2 norm along `axis`.
pub fn l2_normalize(x: &Tensor, axis: i64, epsilon: f32) -> KResult<(Tensor, Tensor)> {
    let ([pre, n, post], norm_shape) = l2_layout(x.shape(), axis, "norm")?;
    let xv = x.to_f32();
    let mut out = vec![0.0f32; xv.len()];
    let mut norms = vec![0.0f32; pre * post];
    for p in 0..pre {
        for q in 0..post {
            let start = p * n * post + q;
            let sum: f32 = (0..n).map(|j| xv[start + j * post].powi(2)).sum();
            let root = (sum + epsilon).sqrt();
            norms[p * post + q] = root;
            for j in 0..n {
                out[start + j * post] = xv[start + j * post] / root;
            }
        }
    }
    let dt = float_dtype(x.dtype());
    Ok((
        Tensor::from_f32_as(x.shape(), out, dt)?,
        Tensor::from_f32_as(&norm_shape, norms, dt)?,
    ))
}

/// `norm_grad(x, norm, out_grad) {axis}`: `(dout − x·Σ(x·dout)/norm²) / norm` along `axis`.
pub fn l2_normalize_grad(x: &Tensor, norm: &Tensor, dout: &Tensor, axis: i64) -> KResult<Tensor> {
    let ([pre, n, post], norm_shape) = l2_layout(x.shape(), axis, "norm_grad")?;
    if norm.shape() != norm_shape.as_slice() || dout.shape() != x.shape() {
        kbail!(
            "norm_grad: norm has shape {:?} and out_grad {:?}, for an x of shape {:?} they must be {:?} and x's",
            norm.shape(),
            dout.shape(),
            x.shape(),
            norm_shape
        );
    }
    let (xv, nv, g) = (x.to_f32(), norm.to_f32(), dout.to_f32());
    let mut dx = vec![0.0f32; xv.len()];
    for p in 0..pre {
        for q in 0..post {
            let start = p * n * post + q;
            let root = nv[p * post + q];
            let dot: f32 = (0..n)
                .map(|j| xv[start + j * post] * g[start + j * post])
                .sum();
            for j in 0..n {
                let i = start + j * post;
                dx[i] = (g[i] - xv[i] * dot / (root * root)) / root;
            }
        }
    }
    Tensor::from_f32_as(x.shape(), dx, float_dtype(x.dtype()))
}
