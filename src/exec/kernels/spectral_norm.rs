//! `spectral_norm(weight, u, v) {dim, power_iters, eps}` and its grad: the weight divided by its
//! largest singular value, estimated by power iteration from `u` and `v`.
//!
//! The weight is read as a matrix `[h, w]`: dimension `dim` first (`h` = its size), the others
//! flattened in order. `power_iters` rounds of `v = Wᵀu / (‖Wᵀu‖ + eps)`,
//! `u = Wv / (‖Wv‖ + eps)` run on copies (the op does not update `u` and `v`), then
//! `σ = uᵀWv` and `out = W / σ`.
//!
//! The grad is Paddle 3.3.1's kernel (`SpectralNormGradKernel`), not the calculus: it treats `u`,
//! `v` as constants and forms `out_grad · (1 − u·vᵀ · S) / σ` with `S` the sum of all elements of
//! `W / σ`, where the derivative would have `Σ out_grad ⊙ W/σ` in place of `out_grad · S`. The
//! recorded cases (`paddle_rope_moe_kernels.json`) hold Paddle's numbers, which a training
//! step with this op follows. Both compute in f64 and round once to the weight's dtype.

use crate::exec::error::KResult;
use crate::exec::tensor::{Data, Tensor};
use crate::kbail;

/// `spectral_norm`'s attributes.
#[derive(Clone, Copy, Debug)]
pub struct SpectralNormAttrs {
    pub dim: i64,
    pub power_iters: i64,
    pub eps: f32,
}

/// The weight as an `[h, w]` matrix (row `i` = index `i` along `dim`), with `σ`, `u` and `v`
/// after the power iteration.
struct Normed {
    h: usize,
    w: usize,
    mat: Vec<f64>,
    sigma: f64,
    u: Vec<f64>,
    v: Vec<f64>,
}

/// Where the element at row `i`, column `c` of the matrix view lives in the weight: `(before,
/// after)` are the products of the dimensions before and after `dim`.
fn flat(i: usize, c: usize, h: usize, after: usize) -> usize {
    let (b, a) = (c / after, c % after);
    (b * h + i) * after + a
}

fn dims(weight: &Tensor, at: SpectralNormAttrs, op: &str) -> KResult<(usize, usize, usize)> {
    let s = weight.shape();
    if !(2..=5).contains(&s.len()) {
        kbail!("{}: weight must have rank 2 to 5, has shape {:?}", op, s);
    }
    if at.dim < 0 || at.dim as usize >= s.len() {
        kbail!("{}: dim {} is out of range for weight {:?}", op, at.dim, s);
    }
    if at.power_iters < 0 {
        kbail!(
            "{}: power_iters must be 0 or more, is {}",
            op,
            at.power_iters
        );
    }
    let d = at.dim as usize;
    let h = s[d];
    let after: usize = s[d + 1..].iter().product();
    let w = weight.numel().checked_div(h).unwrap_or(0);
    Ok((h, w, after))
}

fn normed(
    weight: &Tensor,
    u: &Tensor,
    v: &Tensor,
    at: SpectralNormAttrs,
    op: &str,
) -> KResult<Normed> {
    let (h, w, after) = dims(weight, at, op)?;
    if u.numel() != h || v.numel() != w {
        kbail!(
            "{}: u {:?} must hold {} values and v {:?} {} (weight {:?} at dim {})",
            op,
            u.shape(),
            h,
            v.shape(),
            w,
            weight.shape(),
            at.dim
        );
    }
    let src = weight.to_f64_vec();
    let mut mat = vec![0.0; h * w];
    for i in 0..h {
        for c in 0..w {
            mat[i * w + c] = src[flat(i, c, h, after)];
        }
    }
    let (mut u, mut v) = (u.to_f64_vec(), v.to_f64_vec());
    let eps = at.eps as f64;
    let normalize = |x: &mut Vec<f64>| {
        let n = x.iter().map(|e| e * e).sum::<f64>().sqrt() + eps;
        x.iter_mut().for_each(|e| *e /= n);
    };
    let times_v = |mat: &[f64], v: &[f64]| -> Vec<f64> {
        (0..h)
            .map(|i| (0..w).map(|c| mat[i * w + c] * v[c]).sum())
            .collect()
    };
    for _ in 0..at.power_iters {
        v = (0..w)
            .map(|c| (0..h).map(|i| mat[i * w + c] * u[i]).sum())
            .collect();
        normalize(&mut v);
        u = times_v(&mat, &v);
        normalize(&mut u);
    }
    let sigma = u.iter().zip(times_v(&mat, &v)).map(|(a, b)| a * b).sum();
    Ok(Normed {
        h,
        w,
        mat,
        sigma,
        u,
        v,
    })
}

/// The matrix view `m` written back in the weight's layout and dtype.
fn unview(weight: &Tensor, n: &Normed, m: &[f64], after: usize) -> KResult<Tensor> {
    let mut out = vec![0.0; m.len()];
    for i in 0..n.h {
        for c in 0..n.w {
            out[flat(i, c, n.h, after)] = m[i * n.w + c];
        }
    }
    Tensor::new(weight.shape().to_vec(), Data::F64(out).cast(weight.dtype()))
}

pub fn spectral_norm(
    weight: &Tensor,
    u: &Tensor,
    v: &Tensor,
    at: SpectralNormAttrs,
) -> KResult<Tensor> {
    let op = "spectral_norm";
    let n = normed(weight, u, v, at, op)?;
    let (_, _, after) = dims(weight, at, op)?;
    let out: Vec<f64> = n.mat.iter().map(|e| e / n.sigma).collect();
    unview(weight, &n, &out, after)
}

/// `spectral_norm_grad(weight, u, v, out_grad)`: Paddle's formula (see the module docs).
pub fn spectral_norm_grad(
    weight: &Tensor,
    u: &Tensor,
    v: &Tensor,
    dout: &Tensor,
    at: SpectralNormAttrs,
) -> KResult<Tensor> {
    let op = "spectral_norm_grad";
    if dout.shape() != weight.shape() {
        kbail!(
            "{}: out_grad {:?} must have weight's shape {:?}",
            op,
            dout.shape(),
            weight.shape()
        );
    }
    let n = normed(weight, u, v, at, op)?;
    let (_, _, after) = dims(weight, at, op)?;
    let s: f64 = n.mat.iter().map(|e| e / n.sigma).sum();
    let g = dout.to_f64_vec();
    let mut grad = vec![0.0; n.h * n.w];
    for i in 0..n.h {
        for c in 0..n.w {
            let d = g[flat(i, c, n.h, after)];
            grad[i * n.w + c] = d * (1.0 - n.u[i] * n.v[c] * s) / n.sigma;
        }
    }
    unview(weight, &n, &grad, after)
}
