//! `cumsum` and `cumsum_grad`: running sums along an axis.
//!
//! A tensor is viewed as `[outer, n, inner]` around the axis (with `flatten`, as one row of all
//! its elements, and the result is 1-D). `reverse` sums from the end, `exclusive` leaves each
//! element out of its own sum. The gradient of a running sum is the running sum of the
//! gradient the other way round (`reverse` flipped, `exclusive` kept): each input element
//! feeds exactly the outputs after it (or before it, reversed). Sums are f32 (f64 for f64
//! tensors, i64 for integers), accumulated in order as Paddle's CPU kernel does, and rounded
//! once.

use crate::exec::dtype::DType;
use crate::exec::error::KResult;
use crate::exec::tensor::{Data, Tensor};
use crate::kbail;

/// Attributes of `cumsum` and its grad.
#[derive(Clone, Copy, Debug, Default)]
pub struct CumsumAttrs {
    pub axis: i64,
    pub flatten: bool,
    pub exclusive: bool,
    pub reverse: bool,
}

/// `(outer, n, inner)` of `shape` around the axis, and the shape of the result.
fn layout(shape: &[usize], at: &CumsumAttrs) -> KResult<((usize, usize, usize), Vec<usize>)> {
    let numel: usize = shape.iter().product();
    if at.flatten || shape.is_empty() {
        return Ok(((1, numel, 1), vec![numel]));
    }
    let r = shape.len() as i64;
    if at.axis < -r || at.axis >= r {
        kbail!("cumsum: axis {} out of range for rank {}", at.axis, r);
    }
    let a = at.axis.rem_euclid(r) as usize;
    let outer = shape[..a].iter().product();
    let inner = shape[a + 1..].iter().product();
    Ok(((outer, shape[a], inner), shape.to_vec()))
}

fn scan<T: Copy + Default + std::ops::AddAssign>(
    x: &[T],
    (outer, n, inner): (usize, usize, usize),
    exclusive: bool,
    reverse: bool,
) -> Vec<T> {
    let mut out = vec![T::default(); x.len()];
    for o in 0..outer {
        for i in 0..inner {
            let mut acc = T::default();
            for step in 0..n {
                let k = if reverse { n - 1 - step } else { step };
                let at = o * n * inner + k * inner + i;
                if exclusive {
                    out[at] = acc;
                    acc += x[at];
                } else {
                    acc += x[at];
                    out[at] = acc;
                }
            }
        }
    }
    out
}

fn cumsum_to(x: &Tensor, at: &CumsumAttrs, shape: Vec<usize>) -> KResult<Tensor> {
    let (dims, out_shape) = layout(x.shape(), at)?;
    let shape = if at.flatten { out_shape } else { shape };
    match x.dtype() {
        DType::F64 => {
            let v = scan(&x.to_f64_vec(), dims, at.exclusive, at.reverse);
            Tensor::new(shape, Data::F64(v))
        }
        d if d.is_float() => {
            let v = scan(&x.to_f32(), dims, at.exclusive, at.reverse);
            Tensor::from_f32_as(&shape, v, d)
        }
        d => {
            let v = scan(&x.to_i64_vec(), dims, at.exclusive, at.reverse);
            Tensor::new(shape, Data::I64(v).cast(d))
        }
    }
}

/// `cumsum(x, axis) {flatten, exclusive, reverse}`.
pub fn cumsum(x: &Tensor, at: &CumsumAttrs) -> KResult<Tensor> {
    cumsum_to(x, at, x.shape().to_vec())
}

/// `cumsum_grad(x, out_grad, axis) {flatten, exclusive, reverse}`: the running sum of
/// `out_grad` the other way, in the shape of `x`.
pub fn cumsum_grad(x: &Tensor, dout: &Tensor, at: &CumsumAttrs) -> KResult<Tensor> {
    let (_, out_shape) = layout(x.shape(), at)?;
    if dout.shape() != out_shape.as_slice() {
        kbail!(
            "cumsum_grad: out_grad {:?} is not the shape of the output {:?}",
            dout.shape(),
            out_shape
        );
    }
    let back = CumsumAttrs {
        reverse: !at.reverse,
        // The running sum runs over out_grad laid out as x: along the axis, or flat.
        axis: if at.flatten { 0 } else { at.axis },
        flatten: at.flatten,
        exclusive: at.exclusive,
    };
    let flat;
    let g = if at.flatten {
        flat = dout.clone().reshaped(vec![dout.numel()])?;
        &flat
    } else {
        dout
    };
    let dx = cumsum_to(g, &back, out_shape)?;
    dx.reshaped(x.shape().to_vec())
}
