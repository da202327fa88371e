//! Repeating a tensor: `expand` (broadcast to a shape, `-1` keeping a dimension) and `tile`
//! (whole copies along each axis), and their grads, which sum the copies back.
//!
//! Both forward ops are offset lists for [`pick`] (every dtype exact); the grads accumulate in
//! f32 through [`reduce_to_shape`] (expand) or by adding each copy (tile) and round once.

use super::float_dtype;
use crate::exec::error::KResult;
use crate::exec::kernels::broadcast::{expand as broadcast, reduce_to_shape};
use crate::exec::kernels::pick::pick;
use crate::exec::tensor::{numel, Tensor};
use crate::kbail;

/// The shape `expand(shape)` gives `x_shape` (right-aligned; `-1` keeps `x`'s dimension).
fn expand_shape(x_shape: &[usize], shape: &[i64]) -> KResult<Vec<usize>> {
    if shape.len() < x_shape.len() {
        kbail!(
            "expand: shape {:?} has fewer dimensions than x {:?}",
            shape,
            x_shape
        );
    }
    let lead = shape.len() - x_shape.len();
    shape
        .iter()
        .enumerate()
        .map(|(i, &d)| {
            let have = if i >= lead { x_shape[i - lead] } else { 1 };
            match d {
                -1 if i >= lead => Ok(have),
                d if d >= 0 && (have == 1 || have == d as usize) => Ok(d as usize),
                _ => kbail!("expand: cannot expand x {:?} to {:?}", x_shape, shape),
            }
        })
        .collect()
}

/// `pd_op.expand(x, shape)`.
pub fn expand(x: &Tensor, shape: &[i64]) -> KResult<Tensor> {
    let out = expand_shape(x.shape(), shape)?;
    let idx = broadcast(&(0..x.numel()).collect::<Vec<_>>(), x.shape(), &out, -1)?;
    Tensor::new(out, pick(x.data(), &idx))
}

/// `expand_grad(x, out_grad, shape)`: `out_grad` summed back to `x`'s shape.
pub fn expand_grad(x: &Tensor, dout: &Tensor) -> KResult<Tensor> {
    let g = reduce_to_shape(&dout.to_f32(), dout.shape(), x.shape(), -1)?;
    Tensor::from_f32_as(x.shape(), g, float_dtype(x.dtype()))
}

/// `x`'s shape and the repeats, both padded with leading 1s to one rank.
fn tile_dims(x_shape: &[usize], repeats: &[i64]) -> KResult<(Vec<usize>, Vec<usize>)> {
    let rank = x_shape.len().max(repeats.len());
    let mut xs = vec![1usize; rank - x_shape.len()];
    xs.extend_from_slice(x_shape);
    let mut rs = vec![1usize; rank - repeats.len()];
    for &r in repeats {
        match usize::try_from(r) {
            Ok(r) => rs.push(r),
            Err(_) => kbail!("tile: negative repeat in {:?}", repeats),
        }
    }
    Ok((xs, rs))
}

/// For every element of the tiled tensor, the offset of its source in `x`.
fn tile_offsets(xs: &[usize], rs: &[usize]) -> KResult<(Vec<usize>, Vec<usize>)> {
    let out: Vec<usize> = xs.iter().zip(rs).map(|(&a, &b)| a * b).collect();
    crate::exec::memory::reserve(&"the tiled tensor", &out, 8)?;
    let n = numel(&out);
    let mut idx = Vec::with_capacity(n);
    let mut pos = vec![0usize; out.len()];
    for _ in 0..n {
        let mut off = 0;
        for d in 0..out.len() {
            off = off * xs[d] + pos[d] % xs[d];
        }
        idx.push(off);
        let mut d = out.len();
        while d > 0 {
            d -= 1;
            pos[d] += 1;
            if pos[d] < out[d] {
                break;
            }
            pos[d] = 0;
        }
    }
    Ok((out, idx))
}

/// `pd_op.tile(x, repeat_times)`.
pub fn tile(x: &Tensor, repeats: &[i64]) -> KResult<Tensor> {
    let (xs, rs) = tile_dims(x.shape(), repeats)?;
    let (out, idx) = tile_offsets(&xs, &rs)?;
    Tensor::new(out, pick(x.data(), &idx))
}

/// `tile_grad(x, out_grad, repeat_times)`: every copy's gradient added into `x`'s shape.
pub fn tile_grad(x: &Tensor, dout: &Tensor, repeats: &[i64]) -> KResult<Tensor> {
    let (xs, rs) = tile_dims(x.shape(), repeats)?;
    let (out, idx) = tile_offsets(&xs, &rs)?;
    if numel(&out) != dout.numel() {
        kbail!(
            "tile_grad: out_grad has shape {:?}, the tiled tensor {:?}",
            dout.shape(),
            out
        );
    }
    sum_copies(x, &idx, dout)
}

/// The grad of an op that copied `x`'s elements to the offsets `idx` lists: each element of
/// `dout` added back into the element of `x` it is a copy of.
fn sum_copies(x: &Tensor, idx: &[usize], dout: &Tensor) -> KResult<Tensor> {
    let g = dout.to_f32();
    let mut acc = vec![0.0f32; x.numel()];
    for (&o, &v) in idx.iter().zip(g.iter()) {
        acc[o] += v;
    }
    Tensor::from_f32_as(x.shape(), acc, float_dtype(x.dtype()))
}

/// `repeat_interleave`'s offsets: each slice `i` of `axis` taken `counts[i]` times in place, and
/// the output shape.
fn interleave_offsets(
    shape: &[usize],
    counts: &[usize],
    axis: usize,
    elem: usize,
) -> KResult<(Vec<usize>, Vec<usize>)> {
    let (outer, n, inner): (usize, usize, usize) = (
        shape[..axis].iter().product(),
        shape[axis],
        shape[axis + 1..].iter().product(),
    );
    let Some(total) = counts.iter().try_fold(0usize, |t, &c| t.checked_add(c)) else {
        kbail!(
            "repeat_interleave: the repeat counts add up to more than a 64-bit machine can count"
        );
    };
    let mut out = shape.to_vec();
    out[axis] = total;
    crate::exec::memory::reserve(&"repeat_interleave's result", &out, elem)?;
    let mut idx = Vec::with_capacity(outer * total * inner);
    for o in 0..outer {
        for (i, &c) in counts.iter().enumerate().take(n) {
            let base = (o * n + i) * inner;
            for _ in 0..c {
                idx.extend(base..base + inner);
            }
        }
    }
    Ok((out, idx))
}

/// The axis of `repeat_interleave` and the repeat count of each of its slices: one count for
/// every slice (`repeats` an int), or one per slice (`repeats` a 1-D integer tensor).
fn interleave_counts(x: &Tensor, repeats: Repeats<'_>, axis: i64) -> KResult<(usize, Vec<usize>)> {
    let a = super::axis_of(axis, x.shape().len(), "repeat_interleave")?;
    let n = x.shape()[a];
    let counts = match repeats {
        Repeats::Each(k) => match usize::try_from(k) {
            Ok(k) => vec![k; n],
            Err(_) => kbail!("repeat_interleave: repeats is {}, it must be 0 or more", k),
        },
        Repeats::PerIndex(t) => {
            if t.dtype().is_float() || t.shape().len() != 1 || t.shape()[0] != n {
                kbail!(
                    "repeat_interleave: repeats must be a 1-D integer tensor of length {} (x's dimension {}), is a {} of shape {:?}",
                    n,
                    a,
                    t.dtype().attr_name(),
                    t.shape()
                );
            }
            t.to_i64_vec()
                .into_iter()
                .map(|k| match usize::try_from(k) {
                    Ok(k) => Ok(k),
                    Err(_) => kbail!(
                        "repeat_interleave: a repeat count is {}, it must be 0 or more",
                        k
                    ),
                })
                .collect::<KResult<_>>()?
        }
    };
    Ok((a, counts))
}

/// How many times `repeat_interleave` repeats each slice.
#[derive(Clone, Copy)]
pub enum Repeats<'a> {
    /// `repeats` the attribute: every slice as many times.
    Each(i64),
    /// `repeat_interleave_with_tensor_index`'s operand: slice `i` `repeats[i]` times.
    PerIndex(&'a Tensor),
}

/// `pd_op.repeat_interleave(x) {repeats, axis}` and `repeat_interleave_with_tensor_index(x,
/// repeats) {axis}`: each slice of `axis` repeated in place (`[a, b]` twice: `[a, a, b, b]`).
pub fn repeat_interleave(x: &Tensor, repeats: Repeats<'_>, axis: i64) -> KResult<Tensor> {
    let (a, counts) = interleave_counts(x, repeats, axis)?;
    let (out, idx) = interleave_offsets(x.shape(), &counts, a, x.dtype().size())?;
    Tensor::new(out, pick(x.data(), &idx))
}

/// The grad of [`repeat_interleave`]: each slice's copies in `out_grad` added.
pub fn repeat_interleave_grad(
    x: &Tensor,
    repeats: Repeats<'_>,
    dout: &Tensor,
    axis: i64,
) -> KResult<Tensor> {
    let (a, counts) = interleave_counts(x, repeats, axis)?;
    let (out, idx) = interleave_offsets(x.shape(), &counts, a, 4)?;
    if out != dout.shape() {
        kbail!(
            "repeat_interleave_grad: out_grad has shape {:?}, the repeated tensor {:?}",
            dout.shape(),
            out
        );
    }
    sum_copies(x, &idx, dout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expand_and_grad() {
        let x = Tensor::f32(&[3, 1], vec![1.0, 2.0, 3.0]);
        let e = expand(&x, &[2, -1, 2]).unwrap();
        assert_eq!(e.shape(), &[2, 3, 2]);
        assert_eq!(
            e.to_f64_vec(),
            [1., 1., 2., 2., 3., 3., 1., 1., 2., 2., 3., 3.]
        );
        let g = expand_grad(&x, &Tensor::f32(&[2, 3, 2], vec![1.0; 12])).unwrap();
        assert_eq!(g.to_f64_vec(), [4., 4., 4.]);
        assert!(expand(&x, &[2, 2]).is_err());
        assert!(expand(&x, &[-1, 2]).is_ok());
    }

    #[test]
    fn tile_and_grad() {
        let x = Tensor::i64(&[2], vec![7, 8]);
        let t = tile(&x, &[2, 2]).unwrap();
        assert_eq!(t.shape(), &[2, 4]);
        assert_eq!(t.to_i64_vec(), vec![7, 8, 7, 8, 7, 8, 7, 8]);
        let xf = Tensor::f32(&[2, 1], vec![1.0, 2.0]);
        let t = tile(&xf, &[3]).unwrap();
        assert_eq!(t.to_f64_vec(), [1., 1., 1., 2., 2., 2.]);
        let g = tile_grad(
            &xf,
            &Tensor::f32(&[2, 3], vec![1., 2., 3., 4., 5., 6.]),
            &[3],
        )
        .unwrap();
        assert_eq!(g.to_f64_vec(), [6., 15.]);
        assert!(tile(&x, &[-1]).is_err());
    }
}
