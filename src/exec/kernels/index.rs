//! Ops that select elements by an index or a mask: `gather`, `embedding`, `where`,
//! `masked_fill`, `triu`, `tril`, and their grads; `nonzero` (a mask's coordinates); `one_hot` (an index spelled out as a row of zeros with one 1).
//!
//! The forward ops only move elements, so they build an offset list for [`pick`] and keep the
//! dtype exactly. The grads add: `gather_grad` and `embedding_grad` scatter-add `out_grad` rows
//! into zeros (an index that repeats gets the sum), in f32 and rounded once to the parameter's
//! dtype. `embedding`'s `padding_idx` row (−1: none, Paddle's `kNoPadding`) reads as zeros and
//! gets no gradient. Indices out of range are errors, never a read past the table.

use super::float_dtype;
use crate::exec::dtype::DType;
use crate::exec::error::KResult;
use crate::exec::kernels::broadcast::{broadcast_shape, expand, reduce_to_shape};
use crate::exec::kernels::pick::{pick, ZERO};
use crate::exec::tensor::{numel, Data, Tensor};
use crate::kbail;

/// The index values, each checked to be in `0..n`.
fn indices(index: &Tensor, n: usize, op: &str) -> KResult<Vec<usize>> {
    if index.dtype().is_float() || index.dtype() == DType::Bool {
        kbail!(
            "{}: index must be an integer tensor, is {}",
            op,
            index.dtype().attr_name()
        );
    }
    index
        .to_i64_vec()
        .into_iter()
        .map(|i| match usize::try_from(i) {
            Ok(u) if u < n => Ok(u),
            _ => kbail!("{}: index {} is out of range 0..{}", op, i, n),
        })
        .collect()
}

fn gather_axis(x: &Tensor, axis: i64) -> KResult<usize> {
    let r = x.shape().len() as i64;
    if r == 0 || axis < -r || axis >= r {
        kbail!("gather: axis {} out of range for rank {}", axis, r);
    }
    Ok(axis.rem_euclid(r) as usize)
}

/// `pd_op.gather(x, index, axis)`: the slices `index[k]` of `axis` (a 0-d index drops the axis).
pub fn gather(x: &Tensor, index: &Tensor, axis: i64) -> KResult<Tensor> {
    let a = gather_axis(x, axis)?;
    let s = x.shape();
    let ids = indices(index, s[a], "gather")?;
    let (outer, inner): (usize, usize) = (s[..a].iter().product(), s[a + 1..].iter().product());
    let mut idx = Vec::with_capacity(outer * ids.len() * inner);
    for o in 0..outer {
        for &i in &ids {
            let base = (o * s[a] + i) * inner;
            idx.extend(base..base + inner);
        }
    }
    let mut out_shape = s[..a].to_vec();
    if !index.shape().is_empty() {
        out_shape.push(ids.len());
    }
    out_shape.extend_from_slice(&s[a + 1..]);
    Tensor::new(out_shape, pick(x.data(), &idx))
}

/// `gather_grad(x, index, out_grad, axis)`: `out_grad`'s slices added into zeros at `index`.
pub fn gather_grad(x: &Tensor, index: &Tensor, dout: &Tensor, axis: i64) -> KResult<Tensor> {
    let a = gather_axis(x, axis)?;
    let s = x.shape();
    let ids = indices(index, s[a], "gather_grad")?;
    let (outer, inner): (usize, usize) = (s[..a].iter().product(), s[a + 1..].iter().product());
    if dout.numel() != outer * ids.len() * inner {
        kbail!(
            "gather_grad: out_grad has shape {:?}, not that of the gathered slices",
            dout.shape()
        );
    }
    let g = dout.to_f32();
    let mut acc = vec![0.0f32; x.numel()];
    let mut k = 0;
    for o in 0..outer {
        for &i in &ids {
            let base = (o * s[a] + i) * inner;
            for (d, &v) in acc[base..base + inner].iter_mut().zip(&g[k..k + inner]) {
                *d += v;
            }
            k += inner;
        }
    }
    Tensor::from_f32_as(s, acc, float_dtype(x.dtype()))
}

/// `index_add`'s layout: the axis, `[outer, n, inner]` of `x`, and the indices, checked
/// against `add_value`'s shape (`x`'s with `len(index)` at the axis).
fn index_add_layout(
    x_shape: &[usize],
    index: &Tensor,
    value_shape: &[usize],
    axis: i64,
    op: &str,
) -> KResult<([usize; 3], Vec<usize>)> {
    let a = super::axis_of(axis, x_shape.len(), op)?;
    if index.shape().len() != 1 {
        kbail!("{}: index must be 1-D, has shape {:?}", op, index.shape());
    }
    let ids = indices(index, x_shape[a], op)?;
    let mut want = x_shape.to_vec();
    want[a] = ids.len();
    if value_shape != want.as_slice() {
        kbail!(
            "{}: add_value has shape {:?}, it must be {:?} (x's, with the index's length at axis {})",
            op,
            value_shape,
            want,
            a
        );
    }
    let dims = [
        x_shape[..a].iter().product(),
        x_shape[a],
        x_shape[a + 1..].iter().product(),
    ];
    Ok((dims, ids))
}

/// `pd_op.index_add(x, index, add_value) {axis}`: `x` with slice `k` of `add_value` added to
/// slice `index[k]` along `axis`, in order (a repeated index gets every slice).
pub fn index_add(x: &Tensor, index: &Tensor, value: &Tensor, axis: i64) -> KResult<Tensor> {
    let ([outer, n, inner], ids) =
        index_add_layout(x.shape(), index, value.shape(), axis, "index_add")?;
    let mut acc = x.to_f32().into_owned();
    let v = value.to_f32();
    let m = ids.len();
    for o in 0..outer {
        for (k, &i) in ids.iter().enumerate() {
            let (dst, src) = ((o * n + i) * inner, (o * m + k) * inner);
            for (d, &s) in acc[dst..dst + inner].iter_mut().zip(&v[src..src + inner]) {
                *d += s;
            }
        }
    }
    Tensor::from_f32_as(x.shape(), acc, float_dtype(x.dtype()))
}

/// `index_add_grad(index, add_value, out_grad) {axis}` → (x_grad, add_value_grad): `out_grad`
/// itself, and its slices at `index`.
pub fn index_add_grad(
    index: &Tensor,
    value: &Tensor,
    dout: &Tensor,
    axis: i64,
) -> KResult<(Tensor, Tensor)> {
    index_add_layout(dout.shape(), index, value.shape(), axis, "index_add_grad")?;
    let dv = gather(dout, index, axis)?;
    let dv = Tensor::from_f32_as(
        dv.shape(),
        dv.to_f32().into_owned(),
        float_dtype(value.dtype()),
    )?;
    Ok((dout.clone(), dv))
}

fn embedding_table(weight: &Tensor, op: &str) -> KResult<(usize, usize)> {
    match weight.shape() {
        &[v, d] => Ok((v, d)),
        s => kbail!("{}: weight must be 2-D [vocabulary, width], is {:?}", op, s),
    }
}

/// The row of `padding_idx` (−1 means none; other negatives count from the end).
fn padding_row(padding_idx: i64, vocab: usize) -> Option<usize> {
    match padding_idx {
        -1 => None,
        p if p < 0 => usize::try_from(p + vocab as i64).ok(),
        p => usize::try_from(p).ok(),
    }
}

/// `pd_op.embedding(x, weight) {padding_idx}`: row `x[k]` of `weight` for every id; shape
/// `x.shape + [width]`.
pub fn embedding(x: &Tensor, weight: &Tensor, padding_idx: i64) -> KResult<Tensor> {
    let (vocab, width) = embedding_table(weight, "embedding")?;
    let ids = indices(x, vocab, "embedding")?;
    let pad = padding_row(padding_idx, vocab);
    let mut idx = Vec::with_capacity(ids.len() * width);
    for &i in &ids {
        if Some(i) == pad {
            idx.extend(std::iter::repeat_n(ZERO, width));
        } else {
            idx.extend(i * width..(i + 1) * width);
        }
    }
    let mut shape = x.shape().to_vec();
    shape.push(width);
    Tensor::new(shape, pick(weight.data(), &idx))
}

/// `embedding_grad(x, weight, out_grad) {padding_idx}`: `out_grad`'s rows added into zeros at
/// their ids (the padding row stays zero).
pub fn embedding_grad(
    x: &Tensor,
    weight: &Tensor,
    dout: &Tensor,
    padding_idx: i64,
) -> KResult<Tensor> {
    let (vocab, width) = embedding_table(weight, "embedding_grad")?;
    let ids = indices(x, vocab, "embedding_grad")?;
    if dout.numel() != ids.len() * width {
        kbail!(
            "embedding_grad: out_grad has shape {:?}, expected {} rows of {}",
            dout.shape(),
            ids.len(),
            width
        );
    }
    let pad = padding_row(padding_idx, vocab);
    let g = dout.to_f32();
    let mut acc = vec![0.0f32; vocab * width];
    for (k, &i) in ids.iter().enumerate() {
        if Some(i) == pad {
            continue;
        }
        for (d, &v) in acc[i * width..(i + 1) * width]
            .iter_mut()
            .zip(&g[k * width..(k + 1) * width])
        {
            *d += v;
        }
    }
    Tensor::from_f32_as(weight.shape(), acc, float_dtype(weight.dtype()))
}

/// The condition as booleans broadcast to `shape`.
fn mask(cond: &Tensor, shape: &[usize]) -> KResult<Vec<bool>> {
    let c: Vec<bool> = match cond.data() {
        Data::Bool(v) => v.clone(),
        _ => cond.to_f64_vec().iter().map(|&v| v != 0.0).collect(),
    };
    expand(&c, cond.shape(), shape, -1)
}

/// `pd_op.where(condition, x, y)`: `x` where the condition holds, `y` elsewhere (all three
/// broadcast together).
pub fn where_(cond: &Tensor, x: &Tensor, y: &Tensor) -> KResult<Tensor> {
    if x.dtype() != y.dtype() {
        kbail!(
            "where: x is {} and y is {}",
            x.dtype().attr_name(),
            y.dtype().attr_name()
        );
    }
    let shape = broadcast_shape(
        &broadcast_shape(cond.shape(), x.shape(), -1)?,
        y.shape(),
        -1,
    )?;
    let m = mask(cond, &shape)?;
    let n = numel(&shape);
    let xi = expand(&(0..x.numel()).collect::<Vec<_>>(), x.shape(), &shape, -1)?;
    let yi = expand(&(0..y.numel()).collect::<Vec<_>>(), y.shape(), &shape, -1)?;
    // Both operands as one buffer: y's offsets follow x's.
    let joined = crate::exec::kernels::pick::concat(&[x.data(), y.data()])?;
    let idx: Vec<usize> = (0..n)
        .map(|k| if m[k] { xi[k] } else { x.numel() + yi[k] })
        .collect();
    Tensor::new(shape, pick(&joined, &idx))
}

/// `where_grad(condition, x, y, out_grad)`: `out_grad` where the condition holds (for `x`) or
/// does not (for `y`), each summed back to its operand's shape.
pub fn where_grad(
    cond: &Tensor,
    x: &Tensor,
    y: &Tensor,
    dout: &Tensor,
) -> KResult<(Tensor, Tensor)> {
    let shape = dout.shape();
    let m = mask(cond, shape)?;
    let g = dout.to_f32();
    let gx: Vec<f32> = g
        .iter()
        .zip(&m)
        .map(|(&v, &c)| if c { v } else { 0.0 })
        .collect();
    let gy: Vec<f32> = g
        .iter()
        .zip(&m)
        .map(|(&v, &c)| if c { 0.0 } else { v })
        .collect();
    let dx = reduce_to_shape(&gx, shape, x.shape(), -1)?;
    let dy = reduce_to_shape(&gy, shape, y.shape(), -1)?;
    Ok((
        Tensor::from_f32_as(x.shape(), dx, float_dtype(x.dtype()))?,
        Tensor::from_f32_as(y.shape(), dy, float_dtype(y.dtype()))?,
    ))
}

/// `nonzero(condition)`: the coordinates of the elements that are true (nonzero, NaN included),
/// one int64 row of `rank` coordinates per element in row-major order (MoE dispatch finds each
/// expert's tokens with it). Like Paddle, a 0-d condition is refused.
pub fn nonzero(cond: &Tensor) -> KResult<Tensor> {
    let s = cond.shape();
    if s.is_empty() {
        kbail!("nonzero: condition must have rank 1 or more, is 0-d");
    }
    let set: Vec<bool> = match cond.data() {
        Data::Bool(v) => v.clone(),
        _ => cond.to_f64_vec().iter().map(|&v| v != 0.0).collect(),
    };
    let mut coords = Vec::new();
    for (k, _) in set.iter().enumerate().filter(|(_, &b)| b) {
        let mut rest = k;
        let start = coords.len();
        for &d in s.iter().rev() {
            coords.push((rest % d) as i64);
            rest /= d;
        }
        coords[start..].reverse();
    }
    Ok(Tensor::i64(&[coords.len() / s.len(), s.len()], coords))
}

/// `value` (one element, 0-d or `[1]`) as a 0-d tensor of `x`'s dtype, so that
/// `masked_fill`'s output takes the broadcast of `x` and `mask` alone.
fn fill_value(x: &Tensor, value: &Tensor, op: &str) -> KResult<Tensor> {
    if value.numel() != 1 {
        kbail!(
            "{}: value must hold one element, has shape {:?}",
            op,
            value.shape()
        );
    }
    if value.dtype() != x.dtype() {
        kbail!(
            "{}: value is {} and x is {}",
            op,
            value.dtype().attr_name(),
            x.dtype().attr_name()
        );
    }
    value.clone().reshaped(vec![])
}

/// `masked_fill(x, mask, value)`: `value` where the mask holds, `x` elsewhere, over the broadcast
/// of `x` and `mask` (a causal `[s, s]` mask under `[b, h, s, s]` scores).
pub fn masked_fill(x: &Tensor, mask: &Tensor, value: &Tensor) -> KResult<Tensor> {
    let v = fill_value(x, value, "masked_fill")?;
    where_(mask, &v, x)
}

/// `masked_fill_grad(x, mask, value, out_grad)`: `(x_grad, value_grad)`: `out_grad` where the
/// mask does not hold, summed back to `x`'s shape, and the sum of `out_grad` where it does, in
/// `value`'s shape (what Paddle 3.3.1's grad kernel computes; its autograd reports 0 for
/// `value`, whose gradient Paddle-built programs leave unused).
pub fn masked_fill_grad(
    x: &Tensor,
    mask: &Tensor,
    value: &Tensor,
    dout: &Tensor,
) -> KResult<(Tensor, Tensor)> {
    let v = fill_value(x, value, "masked_fill_grad")?;
    let want = broadcast_shape(x.shape(), mask.shape(), -1)?;
    if dout.shape() != want.as_slice() {
        kbail!(
            "masked_fill_grad: out_grad has shape {:?}, the forward's out has {:?}",
            dout.shape(),
            want
        );
    }
    let (dv, dx) = where_grad(mask, &v, x, dout)?;
    Ok((dx, dv.reshaped(value.shape().to_vec())?))
}

/// `triu(x) {diagonal}` (`upper`) and `tril`: the last two axes' elements with `col − row ≥
/// diagonal` (triu) or `≤ diagonal` (tril) kept, the others zero. Also their grads, applied to
/// `out_grad`.
pub fn triangle(x: &Tensor, diagonal: i64, upper: bool) -> KResult<Tensor> {
    let s = x.shape();
    if s.len() < 2 {
        kbail!(
            "{}: x must have at least 2 dimensions, has shape {:?}",
            if upper { "triu" } else { "tril" },
            s
        );
    }
    let (rows, cols) = (s[s.len() - 2], s[s.len() - 1]);
    let idx: Vec<usize> = (0..x.numel())
        .map(|k| {
            let (r, c) = ((k / cols) % rows, k % cols);
            let d = c as i64 - r as i64;
            let keep = if upper { d >= diagonal } else { d <= diagonal };
            if keep {
                k
            } else {
                ZERO
            }
        })
        .collect();
    Tensor::new(s.to_vec(), pick(x.data(), &idx))
}

/// `pd_op.one_hot(x, num_classes)`: a float32 tensor of shape `x.shape + [num_classes]`, 1 at
/// each index and 0 elsewhere. An index outside `0..num_classes` is an error, as in Paddle.
pub fn one_hot(x: &Tensor, num_classes: i64) -> KResult<Tensor> {
    let depth = match usize::try_from(num_classes) {
        Ok(d) if d > 0 => d,
        _ => kbail!("one_hot: num_classes {} must be positive", num_classes),
    };
    let ids = indices(x, depth, "one_hot")?;
    let mut shape = x.shape().to_vec();
    shape.push(depth);
    crate::exec::memory::reserve(&"one_hot's result", &shape, 4)?;
    let mut out = vec![0.0f32; ids.len() * depth];
    for (row, &i) in ids.iter().enumerate() {
        out[row * depth + i] = 1.0;
    }
    Tensor::new(shape, Data::F32(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::kernels::cast::cast;

    fn iota(shape: &[usize]) -> Tensor {
        Tensor::f32(shape, (0..numel(shape)).map(|v| v as f32).collect())
    }

    #[test]
    fn gather_picks_slices_and_grad_adds_them_back() {
        let x = iota(&[3, 4]);
        let idx = Tensor::i64(&[3], vec![2, 0, 2]);
        let g = gather(&x, &idx, 0).unwrap();
        assert_eq!(g.shape(), &[3, 4]);
        assert_eq!(
            g.to_f64_vec(),
            [8., 9., 10., 11., 0., 1., 2., 3., 8., 9., 10., 11.]
        );
        let g1 = gather(&x, &Tensor::i64(&[2], vec![3, 1]), 1).unwrap();
        assert_eq!(g1.to_f64_vec(), [3., 1., 7., 5., 11., 9.]);
        let scalar = gather(&x, &Tensor::i64(&[], vec![1]), 0).unwrap();
        assert_eq!(scalar.shape(), &[4]);
        let d = gather_grad(&x, &idx, &Tensor::f32(&[3, 4], vec![1.0; 12]), 0).unwrap();
        assert_eq!(
            d.to_f64_vec(),
            [1., 1., 1., 1., 0., 0., 0., 0., 2., 2., 2., 2.]
        );
        assert!(gather(&x, &Tensor::i64(&[1], vec![3]), 0).is_err());
        assert!(gather(&x, &Tensor::f32(&[1], vec![0.0]), 0).is_err());
    }

    #[test]
    fn embedding_with_padding() {
        let w = cast(&iota(&[4, 2]), DType::BF16);
        let ids = Tensor::i64(&[2, 2], vec![3, 1, 1, 0]);
        let e = embedding(&ids, &w, 1).unwrap();
        assert_eq!(e.shape(), &[2, 2, 2]);
        assert_eq!(e.dtype(), DType::BF16);
        assert_eq!(e.to_f64_vec(), [6., 7., 0., 0., 0., 0., 0., 1.]);
        let none = embedding(&ids, &w, -1).unwrap();
        assert_eq!(none.to_f64_vec(), [6., 7., 2., 3., 2., 3., 0., 1.]);
        let dg = embedding_grad(&ids, &w, &Tensor::f32(&[2, 2, 2], vec![1.0; 8]), 1).unwrap();
        assert_eq!(dg.to_f64_vec(), [1., 1., 0., 0., 0., 0., 1., 1.]);
        let dg = embedding_grad(&ids, &w, &Tensor::f32(&[2, 2, 2], vec![1.0; 8]), -1).unwrap();
        assert_eq!(dg.to_f64_vec(), [1., 1., 2., 2., 0., 0., 1., 1.]);
        assert!(embedding(&Tensor::i64(&[1], vec![4]), &w, -1).is_err());
    }

    #[test]
    fn where_broadcasts_and_grad_splits() {
        let c = Tensor::new(vec![2, 1], Data::Bool(vec![true, false])).unwrap();
        let x = iota(&[2, 3]);
        let y = Tensor::f32(&[3], vec![-1.0, -2.0, -3.0]);
        let w = where_(&c, &x, &y).unwrap();
        assert_eq!(w.to_f64_vec(), [0., 1., 2., -1., -2., -3.]);
        let (dx, dy) = where_grad(&c, &x, &y, &Tensor::f32(&[2, 3], vec![1.0; 6])).unwrap();
        assert_eq!(dx.to_f64_vec(), [1., 1., 1., 0., 0., 0.]);
        assert_eq!(dy.to_f64_vec(), [1., 1., 1.]);
    }

    #[test]
    fn triangles() {
        let x = iota(&[2, 3, 3]);
        let u = triangle(&x, 0, true).unwrap();
        assert_eq!(&u.to_f64_vec()[..9], &[0., 1., 2., 0., 4., 5., 0., 0., 8.]);
        let l = triangle(&x, -1, false).unwrap();
        assert_eq!(
            &l.to_f64_vec()[9..],
            &[0., 0., 0., 12., 0., 0., 15., 16., 0.]
        );
        assert!(triangle(&iota(&[3]), 0, true).is_err());
    }
}
