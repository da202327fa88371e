//! `sum` and `mean` over axes (an `int64` operand, usually from `full_int_array`), with
//! `keepdim`, and their `_grad` ops; `squared_l2_norm` (Σx², the per-parameter term of global-norm
//! gradient clipping) and its grad; `clip_by_norm` (`x` scaled down to L2 norm `max_norm` when
//! it is longer); `max`/`min` (tied extrema share `out_grad` equally, as Paddle 3.3.1's CPU
//! kernel does: the recorded numbers show it, though older Paddle gave each the whole of it),
//! `logsumexp` and `mean_all` with their grads.
//!
//! An empty axis list (or `reduce_all`) reduces every dimension, as in Paddle. The reduction is the
//! broadcasting one from [`reduce_to_shape`] with the reduced axes set to 1, accumulated in f32
//! (f64 for f64); 16-bit inputs are widened first and the result rounded once. Integer and bool
//! `sum`s produce int64 unless `dtype` says otherwise (Paddle's default).

use super::float_dtype;
use crate::exec::dtype::DType;
use crate::exec::error::KResult;
use crate::exec::kernels::broadcast::{expand, reduce_to_shape};
use crate::exec::kernels::cast::cast;
use crate::exec::simd::{combine_lanes, dispatch, LANES};
use crate::exec::tensor::{numel, Data, Tensor};
use crate::kbail;

/// Which dimensions of a rank-`rank` tensor the axis list reduces.
fn reduced_dims(rank: usize, axes: &[i64], reduce_all: bool) -> KResult<Vec<bool>> {
    if reduce_all || axes.is_empty() {
        return Ok(vec![true; rank]);
    }
    let mut dims = vec![false; rank];
    for &a in axes {
        let r = rank as i64;
        // A 0-d tensor accepts axis 0 / -1 (Paddle treats it as reducing nothing).
        if rank == 0 && (a == 0 || a == -1) {
            continue;
        }
        if a < -r || a >= r {
            kbail!("axis {} out of range for a tensor of rank {}", a, rank);
        }
        dims[a.rem_euclid(r.max(1)) as usize] = true;
    }
    Ok(dims)
}

/// Shape after reducing `dims`: 1s when `keepdim`, removed otherwise.
fn reduced_shape(shape: &[usize], dims: &[bool], keepdim: bool) -> Vec<usize> {
    shape
        .iter()
        .zip(dims)
        .filter_map(|(&d, &r)| match (r, keepdim) {
            (false, _) => Some(d),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect()
}

fn kept_shape(shape: &[usize], dims: &[bool]) -> Vec<usize> {
    reduced_shape(shape, dims, true)
}

/// Sum over the reduced dims, in f32 (or f64), as a flat buffer in the kept-dims layout.
fn sum_f64_or_f32(x: &Tensor, kept: &[usize]) -> KResult<Data> {
    if x.dtype() == DType::F64 {
        let v = x.to_f64_vec();
        let mut acc = vec![0.0f64; numel(kept)];
        // f64 sums are rare (no fast path needed): walk with the same odometer as expand.
        let idx = expand(&(0..acc.len()).collect::<Vec<usize>>(), kept, x.shape(), -1)?;
        for (&i, &val) in idx.iter().zip(&v) {
            acc[i] += val;
        }
        return Ok(Data::F64(acc));
    }
    Ok(Data::F32(reduce_to_shape(
        &x.to_f32(),
        x.shape(),
        kept,
        -1,
    )?))
}

/// `pd_op.sum(x, axis, dtype, keepdim)`.
pub fn sum(x: &Tensor, axes: &[i64], keepdim: bool, dtype: Option<DType>) -> KResult<Tensor> {
    let dims = reduced_dims(x.shape().len(), axes, false)?;
    let out_shape = reduced_shape(x.shape(), &dims, keepdim);
    let out_dtype = dtype.unwrap_or(match x.dtype() {
        DType::Bool | DType::I32 | DType::I64 => DType::I64,
        d => d,
    });
    if !out_dtype.is_float() || !x.dtype().is_float() {
        // integer sums are exact in i64
        let v = x.to_i64_vec();
        let kept = kept_shape(x.shape(), &dims);
        let mut acc = vec![0i64; numel(&kept)];
        let idx = expand(
            &(0..acc.len()).collect::<Vec<usize>>(),
            &kept,
            x.shape(),
            -1,
        )?;
        for (&i, &val) in idx.iter().zip(&v) {
            acc[i] = acc[i].wrapping_add(val);
        }
        let t = Tensor::new(out_shape, Data::I64(acc))?;
        return Ok(cast(&t, out_dtype));
    }
    let data = sum_f64_or_f32(x, &kept_shape(x.shape(), &dims))?;
    Ok(cast(&Tensor::new(out_shape, data)?, out_dtype))
}

/// `pd_op.mean(x, axis, keepdim)`: the sum divided by the number of reduced elements.
pub fn mean(x: &Tensor, axes: &[i64], keepdim: bool) -> KResult<Tensor> {
    let dims = reduced_dims(x.shape().len(), axes, false)?;
    let count: usize = x
        .shape()
        .iter()
        .zip(&dims)
        .filter(|(_, &r)| r)
        .map(|(&d, _)| d)
        .product();
    let out_shape = reduced_shape(x.shape(), &dims, keepdim);
    let dt = if x.dtype().is_float() {
        x.dtype()
    } else {
        DType::F32
    };
    match sum_f64_or_f32(x, &kept_shape(x.shape(), &dims))? {
        Data::F64(mut v) => {
            v.iter_mut().for_each(|s| *s /= count as f64);
            Tensor::new(out_shape, Data::F64(v))
        }
        Data::F32(mut v) => {
            let c = count as f32;
            v.iter_mut().for_each(|s| *s /= c);
            Tensor::from_f32_as(&out_shape, v, dt)
        }
        _ => unreachable!("sums are f32 or f64"),
    }
}

/// `sum_grad(x, out_grad, axis, keepdim, reduce_all)`: `out_grad` broadcast back to `x`'s shape.
pub fn sum_grad(x: &Tensor, dout: &Tensor, axes: &[i64], reduce_all: bool) -> KResult<Tensor> {
    grad_impl(x, dout, axes, reduce_all, false)
}

/// `mean_grad(x, out_grad, axis, keepdim, reduce_all)`: `out_grad / count` broadcast back.
pub fn mean_grad(x: &Tensor, dout: &Tensor, axes: &[i64], reduce_all: bool) -> KResult<Tensor> {
    grad_impl(x, dout, axes, reduce_all, true)
}

/// `pd_op.squared_l2_norm(x)`: `Σ x²` as a one-element tensor of shape `[1]` (Paddle's shape),
/// accumulated in f32 in the lane-wise order (f64 for f64).
pub fn squared_l2_norm(x: &Tensor) -> KResult<Tensor> {
    if x.dtype() == DType::F64 {
        let s: f64 = x.to_f64_vec().iter().map(|v| v * v).sum();
        return Tensor::new(vec![1], Data::F64(vec![s]));
    }
    let xs = x.to_f32();
    let s = dispatch(|| sum_squares(&xs));
    let dt = if x.dtype().is_float() {
        x.dtype()
    } else {
        DType::F32
    };
    Tensor::from_f32_as(&[1], vec![s], dt)
}

#[inline(always)]
fn sum_squares(xs: &[f32]) -> f32 {
    let mut acc = [0.0f32; LANES];
    let mut chunks = xs.chunks_exact(LANES);
    for c in &mut chunks {
        for j in 0..LANES {
            acc[j] += c[j] * c[j];
        }
    }
    for (j, &x) in chunks.remainder().iter().enumerate() {
        acc[j] += x * x;
    }
    combine_lanes(acc)
}

/// `squared_l2_norm_grad(x, out_grad)`: `2·x·out_grad` (`out_grad` has one element).
pub fn squared_l2_norm_grad(x: &Tensor, dout: &Tensor) -> KResult<Tensor> {
    let g = dout.scalar_f32()?;
    let xs = x.to_f32();
    let out: Vec<f32> = xs.iter().map(|&v| 2.0 * v * g).collect();
    let dt = if x.dtype().is_float() {
        x.dtype()
    } else {
        DType::F32
    };
    Tensor::from_f32_as(x.shape(), out, dt)
}

/// `pd_op.clip_by_norm(x) {max_norm}`: `x · max_norm / ‖x‖` when `‖x‖ > max_norm`, `x`
/// otherwise. Paddle adds 1e-6 to the norm only when it is below 1e-30 (so an all-zero `x` stays
/// zero).
pub fn clip_by_norm(x: &Tensor, max_norm: f32) -> KResult<Tensor> {
    let norm = squared_l2_norm(x)?.to_f64_vec()[0].sqrt() as f32;
    let eps = if norm <= 1e-30 { 1e-6 } else { 0.0 };
    let scale = if norm <= max_norm {
        1.0
    } else {
        max_norm / (norm + eps)
    };
    crate::exec::kernels::elementwise::unary_f32(x, move |v| v * scale)
}

/// For every element of `x`, the flat index of the output element it reduces into, with the
/// reduced dims and the kept-dims shape.
fn reduction_map(
    x: &Tensor,
    axes: &[i64],
    reduce_all: bool,
) -> KResult<(Vec<bool>, Vec<usize>, Vec<usize>)> {
    let dims = reduced_dims(x.shape().len(), axes, reduce_all)?;
    let kept = kept_shape(x.shape(), &dims);
    let map = expand(
        &(0..numel(&kept)).collect::<Vec<usize>>(),
        &kept,
        x.shape(),
        -1,
    )?;
    Ok((dims, kept, map))
}

/// `pd_op.max(x, axis) {keepdim}` (`is_max`) and `pd_op.min`: the extremum over the axes (every
/// axis when the list is empty). The values are elements of `x`, so the dtype is kept exactly.
pub fn extremum(x: &Tensor, axes: &[i64], keepdim: bool, is_max: bool) -> KResult<Tensor> {
    let (dims, kept, map) = reduction_map(x, axes, false)?;
    if x.numel() == 0 {
        kbail!(
            "{}: the input {:?} is empty",
            if is_max { "max" } else { "min" },
            x.shape()
        );
    }
    let v = x.to_f64_vec();
    let mut best: Vec<Option<f64>> = vec![None; numel(&kept)];
    for (&o, &val) in map.iter().zip(&v) {
        best[o] = Some(match best[o] {
            None => val,
            Some(b) if (is_max && val > b) || (!is_max && val < b) || val.is_nan() => val,
            Some(b) => b,
        });
    }
    let out_shape = reduced_shape(x.shape(), &dims, keepdim);
    let vals = best.into_iter().map(|b| b.unwrap_or(0.0)).collect();
    Tensor::new(out_shape, Data::F64(vals).cast(x.dtype()))
}

/// For the grad of reduction `what` of `x` (whose result `out` and its gradient `dout` are):
/// the index into `out` of each element of `x`, once both are checked to be that reduction's
/// size.
fn grad_map(
    what: &str,
    x: &Tensor,
    out: &Tensor,
    dout: &Tensor,
    axes: &[i64],
    reduce_all: bool,
) -> KResult<Vec<usize>> {
    let (_, kept, map) = reduction_map(x, axes, reduce_all)?;
    let n = numel(&kept);
    if out.numel() != n || dout.numel() != n {
        kbail!(
            "{what}: out {:?} and out_grad {:?} must be the reduction of x {:?}",
            out.shape(),
            dout.shape(),
            x.shape()
        );
    }
    Ok(map)
}

/// `max_grad(x, out, out_grad, axis) {keepdim, reduce_all}` and `min_grad`: `out_grad` divided
/// among the elements equal to the extremum, 0 elsewhere.
pub fn extremum_grad(
    x: &Tensor,
    out: &Tensor,
    dout: &Tensor,
    axes: &[i64],
    reduce_all: bool,
) -> KResult<Tensor> {
    let map = grad_map("max/min grad", x, out, dout, axes, reduce_all)?;
    let n = out.numel();
    let (v, o, g) = (x.to_f64_vec(), out.to_f64_vec(), dout.to_f32());
    let mut ties = vec![0u32; n];
    for (&k, &val) in map.iter().zip(&v) {
        ties[k] += u32::from(val == o[k]);
    }
    let dx = map
        .iter()
        .zip(&v)
        .map(|(&k, &val)| {
            if val == o[k] {
                g[k] / ties[k] as f32
            } else {
                0.0
            }
        })
        .collect();
    Tensor::from_f32_as(x.shape(), dx, float_dtype(x.dtype()))
}

/// `logsumexp(x) {axis, keepdim, reduce_all}`: `m + log Σ e^(x − m)` with `m` the maximum over
/// the reduced elements, so no term overflows. Accumulated in f64, rounded once.
pub fn logsumexp(x: &Tensor, axes: &[i64], keepdim: bool, reduce_all: bool) -> KResult<Tensor> {
    let (dims, kept, map) = reduction_map(x, axes, reduce_all)?;
    let v = x.to_f64_vec();
    let mut m = vec![f64::NEG_INFINITY; numel(&kept)];
    for (&o, &val) in map.iter().zip(&v) {
        m[o] = m[o].max(val);
    }
    let mut s = vec![0.0f64; m.len()];
    for (&o, &val) in map.iter().zip(&v) {
        s[o] += (val - m[o]).exp();
    }
    let out: Vec<f32> = m
        .iter()
        .zip(&s)
        .map(|(&m, &s)| {
            if m.is_finite() {
                (m + s.ln()) as f32
            } else {
                m as f32
            }
        })
        .collect();
    Tensor::from_f32_as(
        &reduced_shape(x.shape(), &dims, keepdim),
        out,
        float_dtype(x.dtype()),
    )
}

/// `logsumexp_grad(x, out, out_grad) {axis, keepdim, reduce_all}`: `dout · e^(x − out)`.
pub fn logsumexp_grad(
    x: &Tensor,
    out: &Tensor,
    dout: &Tensor,
    axes: &[i64],
    reduce_all: bool,
) -> KResult<Tensor> {
    let map = grad_map("logsumexp_grad", x, out, dout, axes, reduce_all)?;
    let (v, o, g) = (x.to_f64_vec(), out.to_f64_vec(), dout.to_f64_vec());
    let dx = map
        .iter()
        .zip(&v)
        .map(|(&k, &val)| (g[k] * (val - o[k]).exp()) as f32)
        .collect();
    Tensor::from_f32_as(x.shape(), dx, float_dtype(x.dtype()))
}

/// `mean_all(x)`: the mean of every element, a 0-d tensor.
pub fn mean_all(x: &Tensor) -> KResult<Tensor> {
    mean(x, &[], false)
}

/// `mean_all_grad(x, out_grad)`: `out_grad / numel` everywhere.
pub fn mean_all_grad(x: &Tensor, dout: &Tensor) -> KResult<Tensor> {
    grad_impl(x, dout, &[], true, true)
}

fn grad_impl(
    x: &Tensor,
    dout: &Tensor,
    axes: &[i64],
    reduce_all: bool,
    divide: bool,
) -> KResult<Tensor> {
    let dims = reduced_dims(x.shape().len(), axes, reduce_all)?;
    let kept = kept_shape(x.shape(), &dims);
    if numel(&kept) != dout.numel() {
        kbail!(
            "out_grad of shape {:?} does not match the reduction of {:?}",
            dout.shape(),
            x.shape()
        );
    }
    let count: usize = x
        .shape()
        .iter()
        .zip(&dims)
        .filter(|(_, &r)| r)
        .map(|(&d, _)| d)
        .product();
    let mut g = expand(&dout.to_f32(), &kept, x.shape(), -1)?;
    if divide {
        let c = count as f32;
        g.iter_mut().for_each(|v| *v /= c);
    }
    let dt = if x.dtype().is_float() {
        x.dtype()
    } else {
        DType::F32
    };
    Tensor::from_f32_as(x.shape(), g, dt)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::kernels::broadcast::tests::unravel;
    use crate::exec::rng::Rng;
    use crate::exec::simd::{with_level, Level};

    #[test]
    fn sum_and_mean_match_reference() {
        let mut rng = Rng::new(9);
        let cases: &[(&[usize], &[i64], bool)] = &[
            (&[37], &[], false),
            (&[5, 19], &[1], false),
            (&[5, 19], &[0], true),
            (&[3, 4, 17], &[0, 2], false),
            (&[3, 4, 17], &[-2], true),
            (&[], &[], false),
            (&[1000, 3], &[], true),
        ];
        for &(shape, axes, keep) in cases {
            let x = Tensor::f32(shape, rng.normal_vec(numel(shape)));
            let s = sum(&x, axes, keep, None).unwrap();
            let m = mean(&x, axes, keep).unwrap();
            let dims = reduced_dims(shape.len(), axes, false).unwrap();
            assert_eq!(s.shape(), reduced_shape(shape, &dims, keep).as_slice());
            let kept = reduced_shape(shape, &dims, true);
            let mut want = vec![0.0f64; numel(&kept)];
            let mut count = vec![0usize; numel(&kept)];
            for (i, &v) in x.as_f32().unwrap().iter().enumerate() {
                let idx = unravel(i, shape);
                let mut j = 0;
                for d in 0..shape.len() {
                    j = j * kept[d] + if dims[d] { 0 } else { idx[d] };
                }
                want[j] += v as f64;
                count[j] += 1;
            }
            for ((a, b), (w, c)) in s
                .to_f64_vec()
                .iter()
                .zip(m.to_f64_vec())
                .zip(want.iter().zip(&count))
            {
                assert!(
                    (a - w).abs() <= 1e-5 * (1.0 + w.abs()),
                    "{shape:?} {axes:?}: {a} vs {w}"
                );
                assert!((b - w / *c as f64).abs() <= 1e-5 * (1.0 + w.abs()));
            }
            let fb = with_level(Level::Scalar, || sum(&x, axes, keep, None).unwrap());
            assert_eq!(fb, s);
        }
    }

    #[test]
    fn grads_broadcast_back() {
        let x = Tensor::f32(&[2, 3], vec![0.0; 6]);
        let g = Tensor::f32(&[2], vec![3.0, 6.0]);
        let d = mean_grad(&x, &g, &[1], false).unwrap();
        assert_eq!(d.as_f32().unwrap(), &[1.0, 1.0, 1.0, 2.0, 2.0, 2.0]);
        let g = Tensor::f32(&[], vec![6.0]);
        let d = mean_grad(&x, &g, &[], false).unwrap();
        assert_eq!(d.as_f32().unwrap(), &[1.0; 6]);
        let d = sum_grad(&x, &Tensor::f32(&[1, 3], vec![1.0, 2.0, 3.0]), &[0], false).unwrap();
        assert_eq!(d.as_f32().unwrap(), &[1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
        assert!(mean_grad(&x, &Tensor::f32(&[4], vec![0.0; 4]), &[1], false).is_err());
    }

    #[test]
    fn squared_l2_norm_and_grad() {
        let mut rng = Rng::new(4);
        let xs = rng.normal_vec(203);
        let x = Tensor::f32(&[7, 29], xs.clone());
        let n = squared_l2_norm(&x).unwrap();
        assert_eq!(n.shape(), &[1]);
        let want: f64 = xs.iter().map(|&v| (v as f64).powi(2)).sum();
        assert!((n.to_f64_vec()[0] - want).abs() <= 1e-5 * want);
        assert_eq!(
            with_level(Level::Scalar, || squared_l2_norm(&x).unwrap()),
            n
        );
        let g = squared_l2_norm_grad(&x, &Tensor::f32(&[1], vec![0.5])).unwrap();
        assert_eq!(g.to_f64_vec()[3], xs[3] as f64);
    }

    #[test]
    fn clip_by_norm_scales_long_vectors_only() {
        let x = Tensor::f32(&[2], vec![3.0, 4.0]);
        assert_eq!(clip_by_norm(&x, 10.0).unwrap(), x);
        let c = clip_by_norm(&x, 1.0).unwrap();
        assert_eq!(c.to_f64_vec(), vec![0.6000000238418579, 0.800000011920929]);
        let z = Tensor::f32(&[2], vec![0.0; 2]);
        assert_eq!(clip_by_norm(&z, 1.0).unwrap(), z);
    }

    #[test]
    fn integer_sum_is_int64() {
        let x = Tensor::new(vec![3], Data::Bool(vec![true, false, true])).unwrap();
        let s = sum(&x, &[], false, None).unwrap();
        assert_eq!(s.dtype(), DType::I64);
        assert_eq!(s.to_i64_vec(), vec![2]);
    }
}
