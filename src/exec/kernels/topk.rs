//! The ops that rank elements by value along an axis: `argmax`, `argmin` and `topk` (with
//! `topk_grad`).
//!
//! Ties: `argmax`/`argmin` return the first extremum, as Paddle 3.3.1 does. `topk` returns its
//! `k` values exactly as Paddle does, but among equal values Paddle's CPU kernel orders the
//! indices as `std::nth_element` and `std::sort` leave them (an order of the C++ library, not of
//! the op); irw takes tied values by increasing index, so that two runs of irw agree. A
//! gradient through `topk` follows the indices the forward returned, so it is exact for either
//! choice. With `sorted` false irw still returns the values sorted (any order is allowed).
//! NaN ranks above every number for `largest` and below for smallest, as in Paddle's
//! comparators.

use crate::exec::dtype::DType;
use crate::exec::error::KResult;
use crate::exec::kernels::pick::pick;
use crate::exec::tensor::{Data, Tensor};
use crate::kbail;

/// `[before, along, after]` of `shape` split at `axis`.
fn split(shape: &[usize], a: usize) -> (usize, usize, usize) {
    (
        shape[..a].iter().product(),
        shape[a],
        shape[a + 1..].iter().product(),
    )
}

/// `argmax`/`argmin`'s attributes.
#[derive(Clone, Copy, Debug)]
pub struct ArgAttrs {
    pub axis: i64,
    pub keepdims: bool,
    pub flatten: bool,
    pub dtype: DType,
}

/// `argmax(x, axis) {keepdims, flatten, dtype}` (`largest`), or `argmin`: the index of the first
/// extremum along `axis`, or in all of `x` (`flatten`).
pub fn arg_extremum(x: &Tensor, at: ArgAttrs, largest: bool) -> KResult<Tensor> {
    let op = if largest { "argmax" } else { "argmin" };
    if !matches!(at.dtype, DType::I32 | DType::I64) {
        kbail!(
            "{}: dtype must be int32 or int64, is {}",
            op,
            at.dtype.attr_name()
        );
    }
    if x.numel() == 0 {
        kbail!("{}: x {:?} has no elements", op, x.shape());
    }
    let s = x.shape();
    let (dims, out_shape) = if at.flatten || s.is_empty() {
        let out = if at.keepdims {
            vec![1; s.len()]
        } else {
            vec![]
        };
        ((1, x.numel(), 1), out)
    } else {
        let a = super::axis_of(at.axis, s.len(), op)?;
        let mut out = s.to_vec();
        if at.keepdims {
            out[a] = 1;
        } else {
            out.remove(a);
        }
        (split(s, a), out)
    };
    let (before, along, after) = dims;
    let v = x.to_f64_vec();
    let mut idx = Vec::with_capacity(before * after);
    for b in 0..before {
        for k in 0..after {
            let at_j = |j: usize| v[(b * along + j) * after + k];
            let mut best = 0;
            for j in 1..along {
                let (c, m) = (at_j(j), at_j(best));
                if (largest && c > m) || (!largest && c < m) {
                    best = j;
                }
            }
            idx.push(best as i64);
        }
    }
    Tensor::new(out_shape, Data::I64(idx).cast(at.dtype))
}

/// `topk`'s attributes.
#[derive(Clone, Copy, Debug)]
pub struct TopkAttrs {
    pub k: i64,
    pub axis: i64,
    pub largest: bool,
}

fn topk_layout(shape: &[usize], at: TopkAttrs, op: &str) -> KResult<(usize, usize, usize, usize)> {
    if shape.is_empty() {
        return Ok((1, 1, 1, 1));
    }
    let a = super::axis_of(at.axis, shape.len(), op)?;
    let (before, along, after) = split(shape, a);
    match usize::try_from(at.k) {
        Ok(k) if k >= 1 && k <= along => Ok((before, along, after, k)),
        _ => kbail!(
            "{}: k {} must be in 1..={} (the length of axis {})",
            op,
            at.k,
            along,
            a
        ),
    }
}

/// The shape of `topk`'s results: `x`'s with `k` along the axis.
fn topk_shape(shape: &[usize], at: TopkAttrs, k: usize) -> Vec<usize> {
    let mut out = shape.to_vec();
    if !shape.is_empty() {
        out[(at.axis.rem_euclid(shape.len() as i64)) as usize] = k;
    }
    out
}

/// `topk(x, k) {axis, largest, sorted}`: `(out, indices)`, indices int64.
pub fn topk(x: &Tensor, at: TopkAttrs) -> KResult<(Tensor, Tensor)> {
    let (before, along, after, k) = topk_layout(x.shape(), at, "topk")?;
    let v = x.to_f64_vec();
    let mut src = Vec::with_capacity(before * k * after);
    let mut ids = vec![0i64; before * k * after];
    let mut order: Vec<usize> = Vec::with_capacity(along);
    for b in 0..before {
        for c in 0..after {
            let off = |j: usize| (b * along + j) * after + c;
            order.clear();
            order.extend(0..along);
            // Stable, so equal values keep increasing index; NaN first for largest, last else.
            order.sort_by(|&i, &j| {
                let (p, q) = (v[off(i)], v[off(j)]);
                let ord = match (p.is_nan(), q.is_nan()) {
                    (true, true) => std::cmp::Ordering::Equal,
                    (true, false) => std::cmp::Ordering::Greater,
                    (false, true) => std::cmp::Ordering::Less,
                    (false, false) => p.partial_cmp(&q).unwrap_or(std::cmp::Ordering::Equal),
                };
                if at.largest {
                    ord.reverse()
                } else {
                    ord
                }
            });
            for (r, &j) in order[..k].iter().enumerate() {
                ids[(b * k + r) * after + c] = j as i64;
            }
        }
    }
    // `src` in the result's row-major order.
    for b in 0..before {
        for r in 0..k {
            for c in 0..after {
                let j = ids[(b * k + r) * after + c] as usize;
                src.push((b * along + j) * after + c);
            }
        }
    }
    let shape = topk_shape(x.shape(), at, k);
    Ok((
        Tensor::new(shape.clone(), pick(x.data(), &src))?,
        Tensor::new(shape, Data::I64(ids))?,
    ))
}

/// `topk_grad(x, indices, out_grad, k) {axis, largest, sorted}`: `out_grad` added into zeros
/// at the positions `indices` names along the axis.
pub fn topk_grad(x: &Tensor, indices: &Tensor, dout: &Tensor, at: TopkAttrs) -> KResult<Tensor> {
    let op = "topk_grad";
    let (before, along, after, k) = topk_layout(x.shape(), at, op)?;
    let shape = topk_shape(x.shape(), at, k);
    for (what, t) in [("indices", indices), ("out_grad", dout)] {
        if t.shape() != shape.as_slice() {
            kbail!(
                "{}: {} has shape {:?}, topk's results have {:?}",
                op,
                what,
                t.shape(),
                shape
            );
        }
    }
    let (ids, g) = (indices.to_i64_vec(), dout.to_f32());
    let mut dx = vec![0.0f32; x.numel()];
    for b in 0..before {
        for r in 0..k {
            for c in 0..after {
                let e = (b * k + r) * after + c;
                let j = match usize::try_from(ids[e]) {
                    Ok(j) if j < along => j,
                    _ => kbail!("{}: index {} is out of range 0..{}", op, ids[e], along),
                };
                dx[(b * along + j) * after + c] += g[e];
            }
        }
    }
    let dt = if x.dtype().is_float() {
        x.dtype()
    } else {
        DType::F32
    };
    Tensor::from_f32_as(x.shape(), dx, dt)
}
