//! Ops that move elements along axes without computing on them: `flip` (reversal) and `roll`
//! (cyclic shift), and their grads, which are the same moves undone (a flip is its own inverse;
//! a roll's inverse is the roll by the negated shifts).
//!
//! Each computes, for every output element, the offset of its source element and lets
//! [`pick`] copy, so every dtype moves exactly.

use crate::exec::error::KResult;
use crate::exec::kernels::pick::pick;
use crate::exec::tensor::Tensor;
use crate::kbail;

fn axis_index(a: i64, rank: usize, op: &str) -> KResult<usize> {
    let r = rank as i64;
    if a < -r || a >= r {
        kbail!("{}: axis {} out of range for rank {}", op, a, rank);
    }
    Ok(a.rem_euclid(r) as usize)
}

/// The offsets of `shape`'s elements after each coordinate `d` is replaced by `f(d, i)`.
fn remap(shape: &[usize], f: impl Fn(usize, usize) -> usize) -> Vec<usize> {
    let n: usize = shape.iter().product();
    let mut strides = vec![1usize; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    (0..n)
        .map(|k| {
            let mut src = 0;
            for d in 0..shape.len() {
                let i = (k / strides[d]) % shape[d];
                src += f(d, i) * strides[d];
            }
            src
        })
        .collect()
}

/// `pd_op.flip(x) {axis}` and `flip_grad(out_grad) {axis}`: `x` reversed along each listed axis.
pub fn flip(x: &Tensor, axes: &[i64]) -> KResult<Tensor> {
    let s = x.shape();
    let mut rev = vec![false; s.len()];
    for &a in axes {
        rev[axis_index(a, s.len(), "flip")?] = true;
    }
    let idx = remap(s, |d, i| if rev[d] { s[d] - 1 - i } else { i });
    Tensor::new(s.to_vec(), pick(x.data(), &idx))
}

/// `pd_op.roll(x, shifts) {axis}`: element `i` of each listed axis moves to `i + shift` (mod the
/// axis's size). With no axis, `x` is rolled as one flat sequence by `shifts[0]`.
pub fn roll(x: &Tensor, shifts: &[i64], axes: &[i64]) -> KResult<Tensor> {
    let s = x.shape();
    if axes.is_empty() {
        let [shift] = shifts else {
            kbail!(
                "roll: without an axis, shifts must hold one value, holds {:?}",
                shifts
            );
        };
        let n = x.numel();
        let flat = [n];
        let idx = remap(&flat, |_, i| shifted(i, -shift, n));
        return Tensor::new(s.to_vec(), pick(x.data(), &idx));
    }
    if shifts.len() != axes.len() {
        kbail!(
            "roll: shifts {:?} and axis {:?} must have the same length",
            shifts,
            axes
        );
    }
    let mut by = vec![0i64; s.len()];
    for (&a, &sh) in axes.iter().zip(shifts) {
        by[axis_index(a, s.len(), "roll")?] += sh;
    }
    let idx = remap(s, |d, i| shifted(i, -by[d], s[d]));
    Tensor::new(s.to_vec(), pick(x.data(), &idx))
}

/// `(i + shift) mod n`, for any sign of `shift`.
fn shifted(i: usize, shift: i64, n: usize) -> usize {
    if n == 0 {
        return 0;
    }
    (i as i64 + shift).rem_euclid(n as i64) as usize
}

/// `roll_grad(x, out_grad, shifts) {axis}`: `out_grad` rolled back.
pub fn roll_grad(dout: &Tensor, shifts: &[i64], axes: &[i64]) -> KResult<Tensor> {
    let back: Vec<i64> = shifts.iter().map(|s| -s).collect();
    roll(dout, &back, axes)
}
