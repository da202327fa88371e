//! Reading and writing elements at positions a tensor of indices names: `gather_nd`,
//! `scatter_nd_add`, `take_along_axis`, `put_along_axis`, `scatter`, and their grads.
//!
//! Every op here first turns its indices into element offsets ([`Positions`]), checked once, so
//! the forward and the grad of an op agree on where each element went and no index reads past a
//! buffer. Indices may be negative and count from the end (`−n ≤ i < n`), as Paddle 3.3.1 takes
//! them; anything else is an error naming the op. The forward ops that only move elements go
//! through [`pick`] and keep the dtype; the writes and the grads compute in f32.
//!
//! Where a position is written twice, Paddle's order decides (recorded in
//! `tests/exec_fixtures/paddle_loss_index_kernels.json`): the writes happen in index order, so
//! `scatter` (overwrite) and `put_along_axis` (assign) keep the last. The grads then differ:
//! `put_along_axis_grad` gives the value that landed the gradient and the overwritten ones 0,
//! while `scatter_grad` gives every update row the gradient of its target row. Under `mean`,
//! `amin` and `amax` the order does not matter ([`put_reduced`]).

use super::float_dtype;
use crate::exec::dtype::DType;
use crate::exec::error::KResult;
use crate::exec::kernels::pick::pick;
use crate::exec::tensor::Tensor;
use crate::kbail;

fn check_index_dtype(index: &Tensor, op: &str) -> KResult<()> {
    if index.dtype().is_float() || index.dtype() == DType::Bool {
        kbail!(
            "{}: index must be an integer tensor, is {}",
            op,
            index.dtype().attr_name()
        );
    }
    Ok(())
}

/// `i` as a position in `0..n`, counting a negative `i` from the end.
fn wrap(i: i64, n: usize, op: &str) -> KResult<usize> {
    let m = n as i64;
    if i < -m || i >= m {
        kbail!("{}: index {} is out of range [{}, {})", op, i, -m, m);
    }
    Ok(if i < 0 { (i + m) as usize } else { i as usize })
}

fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * shape[d + 1];
    }
    s
}

/// Offsets into the indexed tensor, one per index element (or per slice for `gather_nd` and
/// `scatter`, each slice `inner` contiguous elements long).
struct Positions {
    offsets: Vec<usize>,
    inner: usize,
}

impl Positions {
    /// Every element offset, slice by slice.
    fn elements(&self) -> impl Iterator<Item = usize> + '_ {
        self.offsets.iter().flat_map(move |&o| o..o + self.inner)
    }
}

/// `gather_nd`'s slices: the last dimension of `index` addresses the leading dimensions of `x`.
fn nd_positions(x: &Tensor, index: &Tensor, op: &str) -> KResult<(Positions, Vec<usize>)> {
    check_index_dtype(index, op)?;
    let (xs, is) = (x.shape(), index.shape());
    let Some((&k, lead)) = is.split_last() else {
        kbail!("{}: index must have rank 1 or more, is 0-d", op);
    };
    if k > xs.len() {
        kbail!(
            "{}: index rows of length {} address more dimensions than x {:?} has",
            op,
            k,
            xs
        );
    }
    let st = strides(xs);
    let inner: usize = xs[k..].iter().product();
    let rows: usize = lead.iter().product();
    let ids = index.to_i64_vec();
    let mut offsets = Vec::with_capacity(rows);
    for r in 0..rows {
        let mut o = 0;
        for d in 0..k {
            o += wrap(ids[r * k + d], xs[d], op)? * st[d];
        }
        offsets.push(o);
    }
    let mut out_shape = lead.to_vec();
    out_shape.extend_from_slice(&xs[k..]);
    Ok((Positions { offsets, inner }, out_shape))
}

/// `gather_nd(x, index)`: shape `index.shape[:-1] + x.shape[k:]`, `k` the last index dimension.
pub fn gather_nd(x: &Tensor, index: &Tensor) -> KResult<Tensor> {
    let (pos, out_shape) = nd_positions(x, index, "gather_nd")?;
    let idx: Vec<usize> = pos.elements().collect();
    Tensor::new(out_shape, pick(x.data(), &idx))
}

/// `out_grad`'s elements added into zeros of `shape` at `offsets` (a repeated offset sums).
fn add_at(
    shape: &[usize],
    dtype: DType,
    offsets: impl Iterator<Item = usize>,
    dout: &Tensor,
) -> KResult<Tensor> {
    let g = dout.to_f32();
    let mut acc = vec![0.0f32; shape.iter().product()];
    for (o, &v) in offsets.zip(g.iter()) {
        acc[o] += v;
    }
    Tensor::from_f32_as(shape, acc, float_dtype(dtype))
}

fn check_grad_shape(dout: &Tensor, want: &[usize], op: &str) -> KResult<()> {
    if dout.shape() != want {
        kbail!(
            "{}: out_grad has shape {:?}, the forward's out has {:?}",
            op,
            dout.shape(),
            want
        );
    }
    Ok(())
}

/// `gather_nd_grad(x, index, out_grad)`: `out_grad` added into zeros at the gathered slices.
pub fn gather_nd_grad(x: &Tensor, index: &Tensor, dout: &Tensor) -> KResult<Tensor> {
    let op = "gather_nd_grad";
    let (pos, out_shape) = nd_positions(x, index, op)?;
    check_grad_shape(dout, &out_shape, op)?;
    add_at(x.shape(), x.dtype(), pos.elements(), dout)
}

/// `scatter_nd_add(x, index, updates)`: `x` with each of `updates`' slices added at the slice of
/// `x` that `index` names as `gather_nd` reads it (`updates` has `gather_nd`'s output shape; a
/// repeated index adds every update, an index of length 0 adds each update to all of `x`).
pub fn scatter_nd_add(x: &Tensor, index: &Tensor, updates: &Tensor) -> KResult<Tensor> {
    let op = "scatter_nd_add";
    let (pos, want) = nd_positions(x, index, op)?;
    if updates.shape() != want.as_slice() {
        kbail!(
            "{}: updates {:?} must be index's leading shape + x's trailing shape, {:?}",
            op,
            updates.shape(),
            want
        );
    }
    let mut out = x.to_f32().into_owned();
    for (o, &u) in pos.elements().zip(updates.to_f32().iter()) {
        out[o] += u;
    }
    Tensor::from_f32_as(x.shape(), out, float_dtype(x.dtype()))
}

/// `scatter_nd_add_grad(index, updates, out_grad)`: `(x_grad, updates_grad)`: `out_grad` itself,
/// and `out_grad` gathered at `index` (each update's target slice, a repeated index included).
pub fn scatter_nd_add_grad(
    index: &Tensor,
    updates: &Tensor,
    dout: &Tensor,
) -> KResult<(Tensor, Tensor)> {
    let op = "scatter_nd_add_grad";
    let (pos, want) = nd_positions(dout, index, op)?;
    if updates.shape() != want.as_slice() {
        kbail!(
            "{}: updates {:?} must be index's leading shape + out_grad's trailing shape, {:?}",
            op,
            updates.shape(),
            want
        );
    }
    let g = dout.to_f32();
    let du: Vec<f32> = pos.elements().map(|o| g[o]).collect();
    let dt = float_dtype(dout.dtype());
    Ok((
        Tensor::from_f32_as(dout.shape(), g.into_owned(), dt)?,
        Tensor::from_f32_as(updates.shape(), du, float_dtype(updates.dtype()))?,
    ))
}

/// The element of `arr` each element of `indices` names along `axis`. Paddle walks `indices`
/// as `[before, along, after]` and reads `arr` with `indices`' `after` length, so `indices` may
/// be narrower than `arr` only on dimension 0 off the axis; elsewhere the two must agree.
fn along_positions(arr: &Tensor, indices: &Tensor, axis: i64, op: &str) -> KResult<Positions> {
    check_index_dtype(indices, op)?;
    let (s, is) = (arr.shape(), indices.shape());
    if s.len() != is.len() {
        kbail!("{}: indices {:?} must have the rank of arr {:?}", op, is, s);
    }
    let a = super::axis_of(axis, s.len(), op)?;
    for d in (0..s.len()).filter(|&d| d != a) {
        if is[d] != s[d] && !(d == 0 && is[d] < s[d]) {
            kbail!(
                "{}: indices {:?} and arr {:?} differ off the axis {} (only dimension 0 may be \
                 narrower)",
                op,
                is,
                s,
                a
            );
        }
    }
    let (before, along, after): (usize, usize, usize) = (
        is[..a].iter().product(),
        is[a],
        is[a + 1..].iter().product(),
    );
    let ids = indices.to_i64_vec();
    let mut offsets = Vec::with_capacity(ids.len());
    let mut e = 0;
    for b in 0..before {
        for _ in 0..along {
            for k in 0..after {
                let i = wrap(ids[e], s[a], op)?;
                offsets.push((b * s[a] + i) * after + k);
                e += 1;
            }
        }
    }
    Ok(Positions { offsets, inner: 1 })
}

/// `take_along_axis(arr, indices) {axis}`: shape of `indices`.
pub fn take_along_axis(arr: &Tensor, indices: &Tensor, axis: i64) -> KResult<Tensor> {
    let pos = along_positions(arr, indices, axis, "take_along_axis")?;
    Tensor::new(indices.shape().to_vec(), pick(arr.data(), &pos.offsets))
}

/// `take_along_axis_grad(arr, indices, out_grad) {axis}`.
pub fn take_along_axis_grad(
    arr: &Tensor,
    indices: &Tensor,
    dout: &Tensor,
    axis: i64,
) -> KResult<Tensor> {
    let op = "take_along_axis_grad";
    let pos = along_positions(arr, indices, axis, op)?;
    check_grad_shape(dout, indices.shape(), op)?;
    add_at(arr.shape(), arr.dtype(), pos.offsets.into_iter(), dout)
}

/// How `put_along_axis` combines a value with what its position holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PutReduce {
    Assign,
    Add,
    Mul,
    Mean,
    Amin,
    Amax,
}

impl PutReduce {
    pub fn parse(s: &str) -> KResult<PutReduce> {
        Ok(match s {
            "assign" => PutReduce::Assign,
            "add" => PutReduce::Add,
            "mul" | "multiply" => PutReduce::Mul,
            "mean" => PutReduce::Mean,
            "amin" => PutReduce::Amin,
            "amax" => PutReduce::Amax,
            other => kbail!(
                "put_along_axis: reduce {:?} is not supported by the executor (assign, add, mul, \
                 mean, amin, amax)",
                other
            ),
        })
    }
}

/// `put_along_axis`'s attributes.
#[derive(Clone, Copy, Debug)]
pub struct PutAttrs {
    pub axis: i64,
    pub reduce: PutReduce,
    pub include_self: bool,
}

fn put_positions(
    arr: &Tensor,
    indices: &Tensor,
    values: &Tensor,
    at: PutAttrs,
    op: &str,
) -> KResult<Positions> {
    let pos = along_positions(arr, indices, at.axis, op)?;
    if values.shape() != indices.shape() {
        kbail!(
            "{}: values {:?} must have the shape of indices {:?}",
            op,
            values.shape(),
            indices.shape()
        );
    }
    Ok(pos)
}

/// Which positions a put writes, and for each the last index element writing it.
fn last_writers(n: usize, offsets: &[usize]) -> Vec<Option<usize>> {
    let mut last = vec![None; n];
    for (p, &o) in offsets.iter().enumerate() {
        last[o] = Some(p);
    }
    last
}

/// `put_along_axis(arr, indices, values) {axis, reduce, include_self}`.
pub fn put_along_axis(
    arr: &Tensor,
    indices: &Tensor,
    values: &Tensor,
    at: PutAttrs,
) -> KResult<Tensor> {
    let pos = put_positions(arr, indices, values, at, "put_along_axis")?;
    let v = values.to_f32();
    if let PutReduce::Mean | PutReduce::Amin | PutReduce::Amax = at.reduce {
        let out = put_reduced(&arr.to_f32(), &pos.offsets, &v, at);
        return Tensor::from_f32_as(arr.shape(), out, float_dtype(arr.dtype()));
    }
    let mut out = arr.to_f32().into_owned();
    if !at.include_self && at.reduce != PutReduce::Assign {
        let start = if at.reduce == PutReduce::Mul {
            1.0
        } else {
            0.0
        };
        for &o in &pos.offsets {
            out[o] = start;
        }
    }
    for (&o, &val) in pos.offsets.iter().zip(v.iter()) {
        match at.reduce {
            PutReduce::Assign => out[o] = val,
            PutReduce::Add => out[o] += val,
            PutReduce::Mul => out[o] *= val,
            PutReduce::Mean | PutReduce::Amin | PutReduce::Amax => {}
        }
    }
    Tensor::from_f32_as(arr.shape(), out, float_dtype(arr.dtype()))
}

/// How many values each position of `a` receives.
fn counts(n: usize, offsets: &[usize]) -> Vec<usize> {
    let mut c = vec![0usize; n];
    for &o in offsets {
        c[o] += 1;
    }
    c
}

/// `put_along_axis` under `mean`, `amin` or `amax`: a written position holds the mean (sum over
/// the count), minimum or maximum of its values, and of `arr`'s element with `include_self`.
fn put_reduced(a: &[f32], offsets: &[usize], v: &[f32], at: PutAttrs) -> Vec<f32> {
    let count = counts(a.len(), offsets);
    let mut out = a.to_vec();
    let mut seen = vec![at.include_self; a.len()];
    for (&o, &val) in offsets.iter().zip(v) {
        out[o] = match (at.reduce, seen[o]) {
            (_, false) => val,
            (PutReduce::Amin, true) => out[o].min(val),
            (PutReduce::Amax, true) => out[o].max(val),
            (_, true) => out[o] + val,
        };
        seen[o] = true;
    }
    if at.reduce == PutReduce::Mean {
        for (o, &c) in count.iter().enumerate().filter(|(_, &c)| c > 0) {
            out[o] /= (c + usize::from(at.include_self)) as f32;
        }
    }
    out
}

/// The gradients of [`put_reduced`]: a mean gives each term `out_grad / count`; an extremum
/// shares `out_grad` evenly among the terms equal to it. Paddle 3.3.1 counts `arr`'s element
/// among those ties even without `include_self` (it then gets no share itself), so a value tied
/// with the element it replaces gets `out_grad / (ties + 1)`; the recorded cases show it.
fn put_reduced_grad(
    a: &[f32],
    offsets: &[usize],
    v: &[f32],
    g: &[f32],
    at: PutAttrs,
) -> (Vec<f32>, Vec<f32>) {
    let out = put_reduced(a, offsets, v, at);
    let count = counts(a.len(), offsets);
    let incl = usize::from(at.include_self);
    let mut da = g.to_vec();
    let mut dv = vec![0.0f32; v.len()];
    if at.reduce == PutReduce::Mean {
        for (o, &c) in count.iter().enumerate().filter(|(_, &c)| c > 0) {
            da[o] = if at.include_self {
                g[o] / (c + incl) as f32
            } else {
                0.0
            };
        }
        for (p, &o) in offsets.iter().enumerate() {
            dv[p] = g[o] / (count[o] + incl) as f32;
        }
        return (da, dv);
    }
    let mut ties = vec![0usize; a.len()];
    for (o, _) in count.iter().enumerate().filter(|(_, &c)| c > 0) {
        ties[o] = usize::from(a[o] == out[o]);
    }
    for (&o, &val) in offsets.iter().zip(v) {
        ties[o] += usize::from(val == out[o]);
    }
    for (o, _) in count.iter().enumerate().filter(|(_, &c)| c > 0) {
        da[o] = if at.include_self && a[o] == out[o] {
            g[o] / ties[o] as f32
        } else {
            0.0
        };
    }
    for (p, (&o, &val)) in offsets.iter().zip(v).enumerate() {
        if val == out[o] {
            dv[p] = g[o] / ties[o] as f32;
        }
    }
    (da, dv)
}

/// `put_along_axis_grad(arr, indices, values, out, out_grad) {axis, reduce, include_self}`:
/// `(arr_grad, values_grad)`. Under `mul` each factor's gradient is `out_grad` times the product
/// of the other factors at its position (no division, so a zero factor is exact).
pub fn put_along_axis_grad(
    arr: &Tensor,
    indices: &Tensor,
    values: &Tensor,
    dout: &Tensor,
    at: PutAttrs,
) -> KResult<(Tensor, Tensor)> {
    let op = "put_along_axis_grad";
    let pos = put_positions(arr, indices, values, at, op)?;
    check_grad_shape(dout, arr.shape(), op)?;
    let g = dout.to_f32();
    let (a, v) = (arr.to_f32(), values.to_f32());
    let last = last_writers(a.len(), &pos.offsets);
    let mut da = g.to_vec();
    let mut dv = vec![0.0f32; v.len()];
    match at.reduce {
        PutReduce::Mean | PutReduce::Amin | PutReduce::Amax => {
            (da, dv) = put_reduced_grad(&a, &pos.offsets, &v, &g, at);
        }
        PutReduce::Assign | PutReduce::Add => {
            if at.reduce == PutReduce::Assign || !at.include_self {
                for &o in &pos.offsets {
                    da[o] = 0.0;
                }
            }
            for (p, &o) in pos.offsets.iter().enumerate() {
                if at.reduce == PutReduce::Add || last[o] == Some(p) {
                    dv[p] = g[o];
                }
            }
        }
        PutReduce::Mul => {
            // The factors at each written position, in write order: arr's (if included) first.
            let mut factors: Vec<Vec<(Option<usize>, f32)>> = vec![Vec::new(); a.len()];
            for (o, l) in last.iter().enumerate() {
                if l.is_some() && at.include_self {
                    factors[o].push((None, a[o]));
                }
            }
            for (p, &o) in pos.offsets.iter().enumerate() {
                factors[o].push((Some(p), v[p]));
            }
            for (o, fs) in factors.iter().enumerate().filter(|(_, f)| !f.is_empty()) {
                da[o] = 0.0;
                for (i, &(who, _)) in fs.iter().enumerate() {
                    let others: f32 = fs
                        .iter()
                        .enumerate()
                        .filter(|&(j, _)| j != i)
                        .map(|(_, &(_, f))| f)
                        .product();
                    match who {
                        None => da[o] = g[o] * others,
                        Some(p) => dv[p] = g[o] * others,
                    }
                }
            }
        }
    }
    Ok((
        Tensor::from_f32_as(arr.shape(), da, float_dtype(arr.dtype()))?,
        Tensor::from_f32_as(values.shape(), dv, float_dtype(values.dtype()))?,
    ))
}

/// `scatter`'s rows: `index` (`[N]`, or `[N, 1]`) names rows of `x`, `updates` is `[N, ...]`
/// with `x`'s row shape.
fn scatter_rows(
    x_shape: &[usize],
    index: &Tensor,
    updates: &Tensor,
    op: &str,
) -> KResult<Positions> {
    check_index_dtype(index, op)?;
    let n = match index.shape() {
        [n] | [n, 1] => *n,
        s => kbail!("{}: index must be [N] or [N, 1], is {:?}", op, s),
    };
    let Some((&rows, row_shape)) = x_shape.split_first() else {
        kbail!("{}: x must have rank 1 or more, is 0-d", op);
    };
    let us = updates.shape();
    if us.first() != Some(&n) || &us[1..] != row_shape {
        kbail!(
            "{}: updates {:?} must be [{}] + the row shape {:?} of x",
            op,
            us,
            n,
            row_shape
        );
    }
    let inner: usize = row_shape.iter().product();
    let offsets = index
        .to_i64_vec()
        .into_iter()
        .map(|i| Ok(wrap(i, rows, op)? * inner))
        .collect::<KResult<Vec<usize>>>()?;
    Ok(Positions { offsets, inner })
}

/// `scatter(x, index, updates) {overwrite}`: rows replaced in index order (`overwrite`), or
/// the indexed rows zeroed and every update added.
pub fn scatter(x: &Tensor, index: &Tensor, updates: &Tensor, overwrite: bool) -> KResult<Tensor> {
    let pos = scatter_rows(x.shape(), index, updates, "scatter")?;
    let mut out = x.to_f32().into_owned();
    let u = updates.to_f32();
    if !overwrite {
        for o in pos.elements() {
            out[o] = 0.0;
        }
    }
    for (o, &val) in pos.elements().zip(u.iter()) {
        if overwrite {
            out[o] = val;
        } else {
            out[o] += val;
        }
    }
    Tensor::from_f32_as(x.shape(), out, float_dtype(x.dtype()))
}

/// `scatter_grad(index, updates, out_grad) {overwrite}`: `(x_grad, updates_grad)`: `out_grad`
/// with the indexed rows zeroed, and each update row's target row of `out_grad` (in both modes,
/// a repeated index included).
pub fn scatter_grad(index: &Tensor, updates: &Tensor, dout: &Tensor) -> KResult<(Tensor, Tensor)> {
    let pos = scatter_rows(dout.shape(), index, updates, "scatter_grad")?;
    let g = dout.to_f32();
    let mut dx = g.to_vec();
    for o in pos.elements() {
        dx[o] = 0.0;
    }
    let du: Vec<f32> = pos.elements().map(|o| g[o]).collect();
    let dt = float_dtype(dout.dtype());
    Ok((
        Tensor::from_f32_as(dout.shape(), dx, dt)?,
        Tensor::from_f32_as(updates.shape(), du, float_dtype(updates.dtype()))?,
    ))
}
