//! `layer_norm`, `layer_norm_grad`, `rms_norm` and `rms_norm_grad`: normalization over the
//! trailing dimensions of each row.
//!
//! A tensor is viewed as `[left, right]` with `left` the product of the dimensions before
//! `begin_norm_axis` and `right` the product of the rest; `scale` and `bias` (each optional) have
//! `right` elements. Paddle's `layer_norm` returns, besides `out`, the row `mean` and the biased
//! row `variance` (shape `x.shape[..begin_norm_axis]`), and its grad recomputes the normalized
//! input from them rather than from the forward output. For 16-bit inputs the statistics are f32
//! (Paddle's parameter type for f16/bf16 is float), everything is computed in f32 and each output
//! is rounded once.
//!
//! `rms_norm(x, scale) {normalized_shape, epsilon}` normalizes the trailing
//! `normalized_shape` dimensions by `invvar = 1/√(mean(x²) + ε)` (no centring, no bias) and
//! returns `invvar` (f32, shape of the leading dimensions) for its grad. Paddle 3.3.1 registers
//! this op's kernel for GPUs only; the formulas are its CUDA kernel's.
//!
//! The rows are contiguous, so each row is a few slice loops: the sums use the fixed lane-wise
//! order of [`sum_lanes`] and the element-wise parts are plain zips, all inside one
//! [`dispatch`], so they vectorize and agree bit for bit with the scalar fallback.

use super::float_dtype;
use crate::exec::dtype::DType;
use crate::exec::error::KResult;
use crate::exec::simd::{combine_lanes, dispatch, sum_lanes, LANES};
use crate::exec::tensor::Tensor;
use crate::kbail;

/// `(left, right)` of `shape` split at `axis` (negative counts from the end).
fn split_rows(shape: &[usize], axis: i64, op: &str) -> KResult<(usize, usize, usize)> {
    let rank = shape.len() as i64;
    let a = if axis < 0 { axis + rank } else { axis };
    if a < 0 || a > rank || (rank > 0 && a == rank) {
        kbail!(
            "{}: begin_norm_axis {} out of range for rank {}",
            op,
            axis,
            rank
        );
    }
    let a = a as usize;
    Ok((a, shape[..a].iter().product(), shape[a..].iter().product()))
}

/// The statistics' dtype: f32 for 16-bit inputs, the input's otherwise.
fn stat_dtype(d: DType) -> DType {
    match d {
        DType::BF16 | DType::F16 => DType::F32,
        d => float_dtype(d),
    }
}

/// A `right`-element parameter widened to f32, or `None` when absent.
fn param(t: Option<&Tensor>, right: usize, what: &str, op: &str) -> KResult<Option<Vec<f32>>> {
    match t {
        None => Ok(None),
        Some(t) if t.numel() == right => Ok(Some(t.to_f32().into_owned())),
        Some(t) => kbail!(
            "{}: {} has {} elements, the normalized dimensions have {}",
            op,
            what,
            t.numel(),
            right
        ),
    }
}

/// Σ (x − mean)² in the lane-wise order.
#[inline(always)]
fn sum_sq_dev(xs: &[f32], mean: f32) -> f32 {
    let mut acc = [0.0f32; LANES];
    let mut chunks = xs.chunks_exact(LANES);
    for c in &mut chunks {
        for j in 0..LANES {
            let d = c[j] - mean;
            acc[j] += d * d;
        }
    }
    for (j, &x) in chunks.remainder().iter().enumerate() {
        let d = x - mean;
        acc[j] += d * d;
    }
    combine_lanes(acc)
}

/// Σ a·b in the lane-wise order.
#[inline(always)]
fn dot_lanes(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0.0f32; LANES];
    let mut ca = a.chunks_exact(LANES);
    let mut cb = b.chunks_exact(LANES);
    for (x, y) in (&mut ca).zip(&mut cb) {
        for j in 0..LANES {
            acc[j] += x[j] * y[j];
        }
    }
    for (j, (&x, &y)) in ca.remainder().iter().zip(cb.remainder()).enumerate() {
        acc[j] += x * y;
    }
    combine_lanes(acc)
}

/// The f32 forward over `[left, right]` rows: (out, mean, variance).
#[inline(always)]
fn layer_norm_rows(
    x: &[f32],
    right: usize,
    scale: Option<&[f32]>,
    bias: Option<&[f32]>,
    eps: f32,
) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let left = x.len().checked_div(right).unwrap_or(0);
    let mut out = vec![0.0f32; x.len()];
    let mut means = vec![0.0f32; left];
    let mut vars = vec![0.0f32; left];
    if right == 0 {
        return (out, means, vars);
    }
    let n = right as f32;
    for (r, (xr, or)) in x
        .chunks_exact(right)
        .zip(out.chunks_exact_mut(right))
        .enumerate()
    {
        let mean = sum_lanes(xr) / n;
        let var = sum_sq_dev(xr, mean) / n;
        let inv = 1.0 / (var + eps).sqrt();
        means[r] = mean;
        vars[r] = var;
        for (o, &v) in or.iter_mut().zip(xr) {
            *o = (v - mean) * inv;
        }
        if let Some(s) = scale {
            for (o, &g) in or.iter_mut().zip(s) {
                *o *= g;
            }
        }
        if let Some(b) = bias {
            for (o, &g) in or.iter_mut().zip(b) {
                *o += g;
            }
        }
    }
    (out, means, vars)
}

/// `pd_op.layer_norm(x, scale, bias) {epsilon, begin_norm_axis}` → `(out, mean, variance)`.
pub fn layer_norm(
    x: &Tensor,
    scale: Option<&Tensor>,
    bias: Option<&Tensor>,
    epsilon: f32,
    begin_norm_axis: i64,
) -> KResult<(Tensor, Tensor, Tensor)> {
    let (a, _, right) = split_rows(x.shape(), begin_norm_axis, "layer_norm")?;
    let s = param(scale, right, "scale", "layer_norm")?;
    let b = param(bias, right, "bias", "layer_norm")?;
    let xs = x.to_f32();
    let (out, mean, var) =
        dispatch(|| layer_norm_rows(&xs, right, s.as_deref(), b.as_deref(), epsilon));
    let stat_shape = &x.shape()[..a];
    let sd = stat_dtype(x.dtype());
    Ok((
        Tensor::from_f32_as(x.shape(), out, float_dtype(x.dtype()))?,
        Tensor::from_f32_as(stat_shape, mean, sd)?,
        Tensor::from_f32_as(stat_shape, var, sd)?,
    ))
}

/// The gradients of [`layer_norm`]: `x_grad`, and `scale_grad`/`bias_grad` for the parameters
/// that were given.
pub struct LayerNormGrad {
    pub x_grad: Tensor,
    pub scale_grad: Option<Tensor>,
    pub bias_grad: Option<Tensor>,
}

#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn layer_norm_grad_rows(
    x: &[f32],
    dy: &[f32],
    mean: &[f32],
    var: &[f32],
    scale: Option<&[f32]>,
    right: usize,
    eps: f32,
    dscale: &mut [f32],
    dbias: &mut [f32],
) -> Vec<f32> {
    let mut dx = vec![0.0f32; x.len()];
    if right == 0 {
        return dx;
    }
    let n = right as f32;
    let mut xhat = vec![0.0f32; right];
    let mut dxhat = vec![0.0f32; right];
    for (r, ((xr, gr), dr)) in x
        .chunks_exact(right)
        .zip(dy.chunks_exact(right))
        .zip(dx.chunks_exact_mut(right))
        .enumerate()
    {
        let (m, inv) = (mean[r], 1.0 / (var[r] + eps).sqrt());
        for (h, &v) in xhat.iter_mut().zip(xr) {
            *h = (v - m) * inv;
        }
        for ((ds, &g), &h) in dscale.iter_mut().zip(gr).zip(&xhat) {
            *ds += g * h;
        }
        for (db, &g) in dbias.iter_mut().zip(gr) {
            *db += g;
        }
        match scale {
            Some(s) => {
                for ((d, &g), &w) in dxhat.iter_mut().zip(gr).zip(s) {
                    *d = g * w;
                }
            }
            None => dxhat.copy_from_slice(gr),
        }
        let mean_d = sum_lanes(&dxhat) / n;
        let mean_dh = dot_lanes(&dxhat, &xhat) / n;
        for ((o, &d), &h) in dr.iter_mut().zip(&dxhat).zip(&xhat) {
            *o = (d - mean_d - h * mean_dh) * inv;
        }
    }
    dx
}

/// `pd_op.layer_norm_grad(x, scale, bias, mean, variance, out_grad) {epsilon, begin_norm_axis}`.
#[allow(clippy::too_many_arguments)]
pub fn layer_norm_grad(
    x: &Tensor,
    scale: Option<&Tensor>,
    bias: Option<&Tensor>,
    mean: &Tensor,
    variance: &Tensor,
    dout: &Tensor,
    epsilon: f32,
    begin_norm_axis: i64,
) -> KResult<LayerNormGrad> {
    let (_, left, right) = split_rows(x.shape(), begin_norm_axis, "layer_norm_grad")?;
    if dout.shape() != x.shape() {
        kbail!(
            "layer_norm_grad: out_grad {:?} and x {:?} differ in shape",
            dout.shape(),
            x.shape()
        );
    }
    if mean.numel() != left || variance.numel() != left {
        kbail!(
            "layer_norm_grad: mean and variance need {} elements, have {} and {}",
            left,
            mean.numel(),
            variance.numel()
        );
    }
    let s = param(scale, right, "scale", "layer_norm_grad")?;
    let (xs, gs, ms, vs) = (x.to_f32(), dout.to_f32(), mean.to_f32(), variance.to_f32());
    let mut dscale = vec![0.0f32; right];
    let mut dbias = vec![0.0f32; right];
    let dx = dispatch(|| {
        layer_norm_grad_rows(
            &xs,
            &gs,
            &ms,
            &vs,
            s.as_deref(),
            right,
            epsilon,
            &mut dscale,
            &mut dbias,
        )
    });
    let like = |t: Option<&Tensor>, v: Vec<f32>| -> KResult<Option<Tensor>> {
        t.map(|t| Tensor::from_f32_as(t.shape(), v, float_dtype(t.dtype())))
            .transpose()
    };
    Ok(LayerNormGrad {
        x_grad: Tensor::from_f32_as(x.shape(), dx, float_dtype(x.dtype()))?,
        scale_grad: like(scale, dscale)?,
        bias_grad: like(bias, dbias)?,
    })
}

/// `(left, right)` of `x` for `rms_norm`'s `normalized_shape` (the trailing dimensions).
fn rms_rows(shape: &[usize], normalized: &[i64], op: &str) -> KResult<(usize, usize, usize)> {
    let k = normalized.len();
    let tail_ok = k <= shape.len()
        && shape[shape.len() - k..]
            .iter()
            .zip(normalized)
            .all(|(&d, &n)| d as i64 == n);
    if !tail_ok {
        kbail!(
            "{}: normalized_shape {:?} is not the trailing dimensions of {:?}",
            op,
            normalized,
            shape
        );
    }
    let a = shape.len() - k;
    Ok((a, shape[..a].iter().product(), shape[a..].iter().product()))
}

#[inline(always)]
fn rms_rows_fwd(x: &[f32], right: usize, scale: &[f32], eps: f32) -> (Vec<f32>, Vec<f32>) {
    let left = x.len().checked_div(right).unwrap_or(0);
    let mut out = vec![0.0f32; x.len()];
    let mut invvar = vec![0.0f32; left];
    if right == 0 {
        return (out, invvar);
    }
    for (r, (xr, or)) in x
        .chunks_exact(right)
        .zip(out.chunks_exact_mut(right))
        .enumerate()
    {
        let inv = 1.0 / (dot_lanes(xr, xr) / right as f32 + eps).sqrt();
        invvar[r] = inv;
        for ((o, &v), &g) in or.iter_mut().zip(xr).zip(scale) {
            *o = v * inv * g;
        }
    }
    (out, invvar)
}

/// `pd_op.rms_norm(x, scale) {normalized_shape, epsilon}` → `(y, invvar)`.
pub fn rms_norm(
    x: &Tensor,
    scale: &Tensor,
    normalized_shape: &[i64],
    epsilon: f32,
) -> KResult<(Tensor, Tensor)> {
    let (a, _, right) = rms_rows(x.shape(), normalized_shape, "rms_norm")?;
    let s = param(Some(scale), right, "scale", "rms_norm")?.unwrap_or_default();
    let xs = x.to_f32();
    let (y, inv) = dispatch(|| rms_rows_fwd(&xs, right, &s, epsilon));
    Ok((
        Tensor::from_f32_as(x.shape(), y, float_dtype(x.dtype()))?,
        Tensor::from_f32_as(&x.shape()[..a], inv, DType::F32)?,
    ))
}

#[inline(always)]
fn rms_rows_bwd(
    x: &[f32],
    dy: &[f32],
    invvar: &[f32],
    scale: &[f32],
    right: usize,
    dscale: &mut [f32],
) -> Vec<f32> {
    let mut dx = vec![0.0f32; x.len()];
    if right == 0 {
        return dx;
    }
    let mut xhat = vec![0.0f32; right];
    let mut dxhat = vec![0.0f32; right];
    for (r, ((xr, gr), dr)) in x
        .chunks_exact(right)
        .zip(dy.chunks_exact(right))
        .zip(dx.chunks_exact_mut(right))
        .enumerate()
    {
        let inv = invvar[r];
        for (h, &v) in xhat.iter_mut().zip(xr) {
            *h = v * inv;
        }
        for ((ds, &g), &h) in dscale.iter_mut().zip(gr).zip(&xhat) {
            *ds += g * h;
        }
        for ((d, &g), &w) in dxhat.iter_mut().zip(gr).zip(scale) {
            *d = g * w;
        }
        let mean_dh = dot_lanes(&dxhat, &xhat) / right as f32;
        for ((o, &d), &h) in dr.iter_mut().zip(&dxhat).zip(&xhat) {
            *o = (d - h * mean_dh) * inv;
        }
    }
    dx
}

/// `rms_norm_grad(x, scale, invvar, y_grad) {normalized_shape, epsilon}` → `(x_grad,
/// scale_grad)`.
pub fn rms_norm_grad(
    x: &Tensor,
    scale: &Tensor,
    invvar: &Tensor,
    dy: &Tensor,
    normalized_shape: &[i64],
) -> KResult<(Tensor, Tensor)> {
    let (_, left, right) = rms_rows(x.shape(), normalized_shape, "rms_norm_grad")?;
    if dy.shape() != x.shape() || invvar.numel() != left {
        kbail!(
            "rms_norm_grad: y_grad {:?} / invvar {:?} do not fit x {:?}",
            dy.shape(),
            invvar.shape(),
            x.shape()
        );
    }
    let s = param(Some(scale), right, "scale", "rms_norm_grad")?.unwrap_or_default();
    let (xs, gs, is) = (x.to_f32(), dy.to_f32(), invvar.to_f32());
    let mut dscale = vec![0.0f32; right];
    let dx = dispatch(|| rms_rows_bwd(&xs, &gs, &is, &s, right, &mut dscale));
    Ok((
        Tensor::from_f32_as(x.shape(), dx, float_dtype(x.dtype()))?,
        Tensor::from_f32_as(scale.shape(), dscale, float_dtype(scale.dtype()))?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::kernels::cast::cast;
    use crate::exec::rng::Rng;
    use crate::exec::simd::{with_level, Level};

    /// Scalar f64 reference of the forward: (out, mean, var).
    fn reference(
        x: &[f32],
        right: usize,
        s: Option<&[f32]>,
        b: Option<&[f32]>,
        eps: f64,
    ) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let (mut out, mut ms, mut vs) = (vec![], vec![], vec![]);
        for row in x.chunks(right) {
            let n = right as f64;
            let m = row.iter().map(|&v| v as f64).sum::<f64>() / n;
            let var = row.iter().map(|&v| (v as f64 - m).powi(2)).sum::<f64>() / n;
            for (j, &v) in row.iter().enumerate() {
                let mut y = (v as f64 - m) / (var + eps).sqrt();
                if let Some(s) = s {
                    y *= s[j] as f64;
                }
                if let Some(b) = b {
                    y += b[j] as f64;
                }
                out.push(y);
            }
            ms.push(m);
            vs.push(var);
        }
        (out, ms, vs)
    }

    /// Σ out·w of the reference, for finite differences.
    fn loss(x: &[f32], right: usize, s: &[f32], b: &[f32], w: &[f32]) -> f64 {
        let (o, _, _) = reference(x, right, Some(s), Some(b), 1e-5);
        o.iter().zip(w).map(|(a, &b)| a * b as f64).sum()
    }

    fn close(got: &[f64], want: &[f64], tol: f64, what: &str) {
        assert_eq!(got.len(), want.len(), "{what}: length");
        for (i, (a, b)) in got.iter().zip(want).enumerate() {
            assert!(
                (a - b).abs() <= tol * (1.0 + b.abs()),
                "{what}[{i}]: {a} vs {b}"
            );
        }
    }

    #[test]
    fn forward_matches_the_scalar_reference() {
        let mut rng = Rng::new(5);
        let shape = [3usize, 4, 37];
        let x: Vec<f32> = rng.normal_vec(3 * 4 * 37);
        let s: Vec<f32> = rng.normal_vec(37);
        let b: Vec<f32> = rng.normal_vec(37);
        let xt = Tensor::f32(&shape, x.clone());
        let (st, bt) = (Tensor::f32(&[37], s.clone()), Tensor::f32(&[37], b.clone()));
        let (o, m, v) = layer_norm(&xt, Some(&st), Some(&bt), 1e-5, 2).unwrap();
        assert_eq!(m.shape(), &[3, 4]);
        let (ro, rm, rv) = reference(&x, 37, Some(&s), Some(&b), 1e-5);
        close(&o.to_f64_vec(), &ro, 1e-5, "out");
        close(&m.to_f64_vec(), &rm, 1e-6, "mean");
        close(&v.to_f64_vec(), &rv, 1e-5, "variance");
        // begin_norm_axis 1 and no parameters
        let (o, m, _) = layer_norm(&xt, None, None, 1e-5, 1).unwrap();
        assert_eq!(m.shape(), &[3]);
        let (ro, _, _) = reference(&x, 4 * 37, None, None, 1e-5);
        close(&o.to_f64_vec(), &ro, 1e-5, "out, axis 1");
        // the vector path and the fallback agree bit for bit
        let sc = with_level(Level::Scalar, || {
            layer_norm(&xt, Some(&st), Some(&bt), 1e-5, 2).unwrap()
        });
        assert_eq!(
            sc.0,
            layer_norm(&xt, Some(&st), Some(&bt), 1e-5, 2).unwrap().0
        );
    }

    #[test]
    fn grad_matches_finite_differences() {
        let mut rng = Rng::new(8);
        let (rows, right) = (3usize, 19usize);
        let x: Vec<f32> = rng.normal_vec(rows * right);
        let s: Vec<f32> = rng.normal_vec(right);
        let b: Vec<f32> = rng.normal_vec(right);
        let w: Vec<f32> = rng.normal_vec(rows * right);
        let xt = Tensor::f32(&[rows, right], x.clone());
        let (st, bt) = (
            Tensor::f32(&[right], s.clone()),
            Tensor::f32(&[right], b.clone()),
        );
        let (_, m, v) = layer_norm(&xt, Some(&st), Some(&bt), 1e-5, 1).unwrap();
        let g = layer_norm_grad(
            &xt,
            Some(&st),
            Some(&bt),
            &m,
            &v,
            &Tensor::f32(&[rows, right], w.clone()),
            1e-5,
            1,
        )
        .unwrap();
        let h = 1e-2f32;
        let fd = |f: &dyn Fn(f32) -> f64| (f(h) - f(-h)) / (2.0 * h as f64);
        let mut want_dx = vec![];
        for i in 0..x.len() {
            want_dx.push(fd(&|d| {
                let mut xp = x.clone();
                xp[i] += d;
                loss(&xp, right, &s, &b, &w)
            }));
        }
        close(&g.x_grad.to_f64_vec(), &want_dx, 2e-3, "x_grad");
        let mut want_ds = vec![];
        let mut want_db = vec![];
        for j in 0..right {
            want_ds.push(fd(&|d| {
                let mut sp = s.clone();
                sp[j] += d;
                loss(&x, right, &sp, &b, &w)
            }));
            want_db.push(fd(&|d| {
                let mut bp = b.clone();
                bp[j] += d;
                loss(&x, right, &s, &bp, &w)
            }));
        }
        close(
            &g.scale_grad.unwrap().to_f64_vec(),
            &want_ds,
            2e-3,
            "scale_grad",
        );
        close(
            &g.bias_grad.unwrap().to_f64_vec(),
            &want_db,
            2e-3,
            "bias_grad",
        );
    }

    #[test]
    fn bf16_computes_in_f32_with_f32_statistics() {
        let mut rng = Rng::new(3);
        let x = cast(&Tensor::f32(&[4, 8], rng.normal_vec(32)), DType::BF16);
        let (o, m, v) = layer_norm(&x, None, None, 1e-5, 1).unwrap();
        assert_eq!(
            (o.dtype(), m.dtype(), v.dtype()),
            (DType::BF16, DType::F32, DType::F32)
        );
        let (of, _, _) = layer_norm(&cast(&x, DType::F32), None, None, 1e-5, 1).unwrap();
        assert_eq!(o, cast(&of, DType::BF16));
    }

    #[test]
    fn bad_shapes_are_errors() {
        let x = Tensor::f32(&[2, 3], vec![0.0; 6]);
        let s = Tensor::f32(&[2], vec![1.0; 2]);
        assert!(layer_norm(&x, Some(&s), None, 1e-5, 1).is_err());
        assert!(layer_norm(&x, None, None, 1e-5, 3).is_err());
    }

    #[test]
    fn rms_norm_matches_reference_and_finite_differences() {
        let mut rng = Rng::new(12);
        let (rows, right) = (3usize, 21usize);
        let x: Vec<f32> = rng.normal_vec(rows * right);
        let s: Vec<f32> = rng.normal_vec(right);
        let w: Vec<f32> = rng.normal_vec(rows * right);
        let fwd = |x: &[f32], s: &[f32]| -> Vec<f64> {
            let mut out = vec![];
            for row in x.chunks(right) {
                let ms = row.iter().map(|&v| (v as f64).powi(2)).sum::<f64>() / right as f64;
                let inv = 1.0 / (ms + 1e-6).sqrt();
                out.extend(row.iter().zip(s).map(|(&v, &g)| v as f64 * inv * g as f64));
            }
            out
        };
        let xt = Tensor::f32(&[rows, right], x.clone());
        let st = Tensor::f32(&[right], s.clone());
        let (y, inv) = rms_norm(&xt, &st, &[right as i64], 1e-6).unwrap();
        assert_eq!(inv.shape(), &[rows]);
        close(&y.to_f64_vec(), &fwd(&x, &s), 1e-5, "y");
        let (dx, ds) = rms_norm_grad(
            &xt,
            &st,
            &inv,
            &Tensor::f32(&[rows, right], w.clone()),
            &[right as i64],
        )
        .unwrap();
        let loss = |x: &[f32], s: &[f32]| -> f64 {
            fwd(x, s).iter().zip(&w).map(|(a, &b)| a * b as f64).sum()
        };
        let h = 1e-2f32;
        let want_dx: Vec<f64> = (0..x.len())
            .map(|i| {
                let (mut p, mut m) = (x.clone(), x.clone());
                p[i] += h;
                m[i] -= h;
                (loss(&p, &s) - loss(&m, &s)) / (2.0 * h as f64)
            })
            .collect();
        close(&dx.to_f64_vec(), &want_dx, 2e-3, "x_grad");
        let want_ds: Vec<f64> = (0..right)
            .map(|j| {
                let (mut p, mut m) = (s.clone(), s.clone());
                p[j] += h;
                m[j] -= h;
                (loss(&x, &p) - loss(&x, &m)) / (2.0 * h as f64)
            })
            .collect();
        close(&ds.to_f64_vec(), &want_ds, 2e-3, "scale_grad");
        assert!(rms_norm(&xt, &st, &[4], 1e-6).is_err());
    }
}
