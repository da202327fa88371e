//! Paddle's broadcasting: how two shapes combine, how a binary kernel walks them, and how a
//! gradient is summed back to an operand's shape.
//!
//! Paddle's rule (`axis = -1`, the only value PIR programs use) is NumPy's: align shapes on the
//! right, each dimension pair must be equal or contain a 1. The legacy `axis = k` form aligns the
//! shorter shape at dimension `k` of the longer one; both are handled by padding the shorter shape
//! with 1s ([`align`]).
//!
//! Walking a broadcast: dimensions of size 1 are dropped and adjacent dimensions that are
//! contiguous for every operand are merged ([`Plan`]), so the innermost loop is one long run where
//! each operand either advances (stride 1) or stays (stride 0). That inner run is what gets
//! vectorized; the outer dimensions are walked with an odometer, never with division.

use crate::exec::error::KResult;
use crate::exec::simd::{dispatch, sum_lanes};
use crate::exec::tensor::numel;
use crate::kbail;

/// Pads `small` with 1s to the rank of `big`, aligning it at dimension `axis` (-1: on the right).
pub fn align(small: &[usize], big_rank: usize, axis: i64) -> KResult<Vec<usize>> {
    if small.len() > big_rank {
        kbail!("cannot align shape {:?} to rank {}", small, big_rank);
    }
    let start = if axis < 0 {
        big_rank - small.len()
    } else {
        axis as usize
    };
    if start + small.len() > big_rank {
        kbail!(
            "axis {} out of range for shapes of rank {} and {}",
            axis,
            big_rank,
            small.len()
        );
    }
    let mut out = vec![1; big_rank];
    out[start..start + small.len()].copy_from_slice(small);
    Ok(out)
}

/// Both shapes padded to a common rank (the shorter one aligned at `axis`).
fn align_pair(a: &[usize], b: &[usize], axis: i64) -> KResult<(Vec<usize>, Vec<usize>)> {
    if a.len() >= b.len() {
        Ok((a.to_vec(), align(b, a.len(), axis)?))
    } else {
        Ok((align(a, b.len(), axis)?, b.to_vec()))
    }
}

/// The broadcast result shape of `a` and `b`.
pub fn broadcast_shape(a: &[usize], b: &[usize], axis: i64) -> KResult<Vec<usize>> {
    let (pa, pb) = align_pair(a, b, axis)?;
    pa.iter()
        .zip(&pb)
        .map(|(&x, &y)| match (x, y) {
            _ if x == y => Ok(x),
            (1, _) => Ok(y),
            (_, 1) => Ok(x),
            _ => Err(crate::exec::KernelError::new(format!(
                "shapes {a:?} and {b:?} do not broadcast (dimension {x} vs {y})"
            ))),
        })
        .collect()
}

fn contiguous_strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![0; shape.len()];
    let mut acc = 1;
    for i in (0..shape.len()).rev() {
        s[i] = acc;
        acc *= shape[i];
    }
    s
}

/// Strides of an operand of (padded) shape `shape` read as the broadcast shape `out`: 0 on the
/// dimensions it broadcasts along.
fn broadcast_strides(shape: &[usize], out: &[usize]) -> Vec<usize> {
    let s = contiguous_strides(shape);
    shape
        .iter()
        .zip(out)
        .zip(s)
        .map(|((&d, &o), s)| if d == 1 && o != 1 { 0 } else { s })
        .collect()
}

/// A collapsed iteration space over an output and some broadcast operands.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Collapsed dimensions, outermost first (at least one, possibly of size 1).
    pub dims: Vec<usize>,
    /// Per operand, its stride along each collapsed dimension.
    pub strides: Vec<Vec<usize>>,
}

impl Plan {
    /// Plans a walk over `out` with operands of the given padded shapes (same rank as `out`).
    pub fn new(out: &[usize], operands: &[&[usize]]) -> Plan {
        let all: Vec<Vec<usize>> = operands.iter().map(|s| broadcast_strides(s, out)).collect();
        let mut dims: Vec<usize> = Vec::new();
        let mut strides: Vec<Vec<usize>> = vec![Vec::new(); operands.len()];
        for (i, &d) in out.iter().enumerate() {
            if d == 1 {
                continue;
            }
            // Merge with the previous kept dimension if every operand is contiguous across both.
            let mergeable = !dims.is_empty()
                && all.iter().zip(&strides).all(|(s, kept)| {
                    let prev = *kept.last().unwrap_or(&0);
                    prev == s[i] * d
                });
            if mergeable {
                let last = dims.len() - 1;
                dims[last] *= d;
                for (k, s) in all.iter().enumerate() {
                    strides[k][last] = s[i];
                }
            } else {
                dims.push(d);
                for (k, s) in all.iter().enumerate() {
                    strides[k].push(s[i]);
                }
            }
        }
        if dims.is_empty() {
            dims.push(1);
            for s in &mut strides {
                s.push(1);
            }
        }
        Plan { dims, strides }
    }

    /// Length of the innermost run.
    pub fn inner(&self) -> usize {
        *self.dims.last().unwrap_or(&1)
    }

    /// Calls `f(offsets)` for each innermost run, in row-major order, with each operand's
    /// element offset at the run's start. Outer dimensions advance like an odometer.
    #[inline(always)]
    pub fn for_each_run(&self, mut f: impl FnMut(&[usize])) {
        let outer_rank = self.dims.len() - 1;
        let n_ops = self.strides.len();
        let outer: usize = self.dims[..outer_rank].iter().product();
        let mut idx = vec![0usize; outer_rank];
        let mut off = vec![0usize; n_ops];
        for _ in 0..outer {
            f(&off);
            // advance the odometer
            let mut d = outer_rank;
            while d > 0 {
                d -= 1;
                idx[d] += 1;
                for (k, o) in off.iter_mut().enumerate() {
                    *o += self.strides[k][d];
                }
                if idx[d] < self.dims[d] {
                    break;
                }
                for (k, o) in off.iter_mut().enumerate() {
                    *o -= self.strides[k][d] * self.dims[d];
                }
                idx[d] = 0;
            }
        }
    }
}

#[inline(always)]
fn binary_loop<T: Copy, U: Copy>(
    plan: &Plan,
    a: &[T],
    b: &[T],
    out: &mut [U],
    f: impl Fn(T, T) -> U + Copy,
) {
    let n = plan.inner();
    let (sa, sb) = (
        plan.strides[0][plan.dims.len() - 1],
        plan.strides[1][plan.dims.len() - 1],
    );
    let mut o = 0;
    plan.for_each_run(|off| {
        let dst = &mut out[o..o + n];
        match (sa, sb) {
            (0, 0) => {
                let (x, y) = (a[off[0]], b[off[1]]);
                dst.iter_mut().for_each(|d| *d = f(x, y));
            }
            (0, _) => {
                let x = a[off[0]];
                for (d, &y) in dst.iter_mut().zip(&b[off[1]..off[1] + n]) {
                    *d = f(x, y);
                }
            }
            (_, 0) => {
                let y = b[off[1]];
                for (d, &x) in dst.iter_mut().zip(&a[off[0]..off[0] + n]) {
                    *d = f(x, y);
                }
            }
            _ => {
                let (ra, rb) = (&a[off[0]..off[0] + n], &b[off[1]..off[1] + n]);
                for ((d, &x), &y) in dst.iter_mut().zip(ra).zip(rb) {
                    *d = f(x, y);
                }
            }
        }
        o += n;
    });
}

/// `out[i] = f(a[ia], b[ib])` over the broadcast of `a_shape` and `b_shape`; returns the output
/// shape and buffer. Vectorized along the innermost run.
pub fn binary_map<T: Copy, U: Copy + Default>(
    a: &[T],
    a_shape: &[usize],
    b: &[T],
    b_shape: &[usize],
    axis: i64,
    f: impl Fn(T, T) -> U + Copy,
) -> KResult<(Vec<usize>, Vec<U>)> {
    let out_shape = broadcast_shape(a_shape, b_shape, axis)?;
    let (pa, pb) = align_pair(a_shape, b_shape, axis)?;
    // The broadcast of two small operands can be huge ([N, 1] against [1, N]).
    crate::exec::memory::reserve(&"the broadcast result", &out_shape, size_of::<U>())?;
    let mut out = vec![U::default(); numel(&out_shape)];
    if !out.is_empty() {
        let plan = Plan::new(&out_shape, &[&pa, &pb]);
        dispatch(|| binary_loop(&plan, a, b, &mut out, f));
    }
    Ok((out_shape, out))
}

#[inline(always)]
fn reduce_loop(plan: &Plan, g: &[f32], acc: &mut [f32]) {
    let n = plan.inner();
    let s = plan.strides[0][plan.dims.len() - 1];
    let mut o = 0;
    plan.for_each_run(|off| {
        let row = &g[o..o + n];
        if s == 0 {
            acc[off[0]] += sum_lanes(row);
        } else {
            for (a, &x) in acc[off[0]..off[0] + n].iter_mut().zip(row) {
                *a += x;
            }
        }
        o += n;
    });
}

/// Sums `g` (of shape `g_shape`) down to `target` — a shape that broadcasts to `g_shape` when
/// aligned at `axis`. This is how every `*_grad` of a broadcasting op, and every `sum`/`mean`
/// (with the reduced axes set to 1), reduces.
pub fn reduce_to_shape(
    g: &[f32],
    g_shape: &[usize],
    target: &[usize],
    axis: i64,
) -> KResult<Vec<f32>> {
    let padded = align(target, g_shape.len(), axis)?;
    for (&t, &d) in padded.iter().zip(g_shape) {
        if t != d && t != 1 {
            kbail!("cannot reduce shape {:?} to {:?}", g_shape, target);
        }
    }
    let mut acc = vec![0.0f32; numel(target)];
    if g.is_empty() {
        return Ok(acc);
    }
    if padded == g_shape {
        acc.copy_from_slice(g);
        return Ok(acc);
    }
    let plan = Plan::new(g_shape, &[&padded]);
    dispatch(|| reduce_loop(&plan, g, &mut acc));
    Ok(acc)
}

/// Broadcasts `x` (shape `x_shape`, aligned at `axis`) to `out_shape` (materialized).
pub fn expand<T: Copy + Default>(
    x: &[T],
    x_shape: &[usize],
    out_shape: &[usize],
    axis: i64,
) -> KResult<Vec<T>> {
    let padded = align(x_shape, out_shape.len(), axis)?;
    for (&t, &d) in padded.iter().zip(out_shape) {
        if t != d && t != 1 {
            kbail!("cannot broadcast shape {:?} to {:?}", x_shape, out_shape);
        }
    }
    crate::exec::memory::reserve(&"the expanded tensor", out_shape, size_of::<T>())?;
    Ok(expand_walk(x, &padded, out_shape))
}

fn expand_walk<T: Copy + Default>(x: &[T], padded: &[usize], out_shape: &[usize]) -> Vec<T> {
    let mut out = vec![T::default(); numel(out_shape)];
    if out.is_empty() {
        return out;
    }
    let plan = Plan::new(out_shape, &[padded]);
    let n = plan.inner();
    let s = plan.strides[0][plan.dims.len() - 1];
    let mut o = 0;
    plan.for_each_run(|off| {
        if s == 0 {
            out[o..o + n].iter_mut().for_each(|d| *d = x[off[0]]);
        } else {
            out[o..o + n].copy_from_slice(&x[off[0]..off[0] + n]);
        }
        o += n;
    });
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Reference: multi-index walk with explicit index arithmetic.
    pub fn unravel(mut i: usize, shape: &[usize]) -> Vec<usize> {
        let mut idx = vec![0; shape.len()];
        for d in (0..shape.len()).rev() {
            idx[d] = i % shape[d];
            i /= shape[d];
        }
        idx
    }

    pub fn ravel_broadcast(idx: &[usize], shape: &[usize]) -> usize {
        // shape is right-aligned to idx
        let off = idx.len() - shape.len();
        let mut i = 0;
        for d in 0..shape.len() {
            let v = if shape[d] == 1 { 0 } else { idx[off + d] };
            i = i * shape[d] + v;
        }
        i
    }

    #[test]
    fn shapes_broadcast_like_numpy() {
        assert_eq!(
            broadcast_shape(&[5, 1, 3], &[4, 1], -1).unwrap(),
            vec![5, 4, 3]
        );
        assert_eq!(broadcast_shape(&[], &[2, 3], -1).unwrap(), vec![2, 3]);
        assert!(broadcast_shape(&[2, 3], &[4], -1).is_err());
        // legacy axis: y [3] aligned at dim 1 of x [2,3,4]
        assert_eq!(broadcast_shape(&[2, 3, 4], &[3], 1).unwrap(), vec![2, 3, 4]);
    }

    #[test]
    fn binary_map_matches_reference() {
        let cases: &[(&[usize], &[usize])] = &[
            (&[7, 33], &[33]),
            (&[7, 33], &[7, 1]),
            (&[3, 1, 17], &[1, 5, 1]),
            (&[2, 3, 4, 5], &[3, 1, 5]),
            (&[19], &[]),
            (&[], &[]),
            (&[1, 1], &[4, 1, 1]),
            (&[0, 3], &[3]),
        ];
        for &(sa, sb) in cases {
            let a: Vec<f32> = (0..numel(sa)).map(|i| i as f32 * 0.5).collect();
            let b: Vec<f32> = (0..numel(sb)).map(|i| i as f32 * 3.0 + 1.0).collect();
            let (shape, out) = binary_map(&a, sa, &b, sb, -1, |x, y| x * 10.0 - y).unwrap();
            for (i, &o) in out.iter().enumerate() {
                let idx = unravel(i, &shape);
                let want = a[ravel_broadcast(&idx, sa)] * 10.0 - b[ravel_broadcast(&idx, sb)];
                assert_eq!(o, want, "{sa:?} {sb:?} at {idx:?}");
            }
        }
    }

    #[test]
    fn reduce_to_shape_matches_reference() {
        let cases: &[(&[usize], &[usize])] = &[
            (&[7, 33], &[33]),
            (&[7, 33], &[7, 1]),
            (&[3, 4, 17], &[1, 4, 1]),
            (&[2, 3, 4, 5], &[3, 1, 5]),
            (&[19], &[]),
            (&[5, 6], &[1]),
            (&[5, 6], &[5, 6]),
        ];
        for &(sg, st) in cases {
            let g: Vec<f32> = (0..numel(sg))
                .map(|i| ((i * 7) % 11) as f32 - 5.0)
                .collect();
            let got = reduce_to_shape(&g, sg, st, -1).unwrap();
            let mut want = vec![0.0f32; numel(st)];
            for (i, &x) in g.iter().enumerate() {
                want[ravel_broadcast(&unravel(i, sg), st)] += x;
            }
            assert_eq!(got, want, "{sg:?} -> {st:?}");
        }
        assert!(reduce_to_shape(&[0.0; 6], &[2, 3], &[2], -1).is_err());
    }

    #[test]
    fn expand_materializes() {
        let x = [1.0f32, 2.0, 3.0];
        let out = expand(&x, &[3, 1], &[2, 3, 2], -1).unwrap();
        assert_eq!(
            out,
            vec![1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0]
        );
    }
}
