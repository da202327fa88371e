//! Joining tensors along an axis and cutting one apart: `concat`, `stack`, `split`,
//! `split_with_num`, and the grads, which are each other (`concat_grad` splits, `stack_grad`
//! unstacks).
//!
//! Around the axis a tensor is `[outer, axis, inner]`; joining interleaves, for every `outer`
//! index, one contiguous block of each part. Offsets go to [`pick`], so every dtype moves
//! exactly. Negative axes count from the end (for `stack`, of the result's rank).

use crate::exec::error::KResult;
use crate::exec::kernels::pick::{self, pick};
use crate::exec::tensor::{numel, Tensor};
use crate::kbail;

fn norm_axis(axis: i64, rank: usize, op: &str) -> KResult<usize> {
    let r = rank as i64;
    if axis < -r || axis >= r.max(1) {
        kbail!("{}: axis {} out of range for rank {}", op, axis, rank);
    }
    Ok(axis.rem_euclid(r.max(1)) as usize)
}

/// `pd_op.concat(x, axis)`: the parts end to end along `axis`; every other dimension must agree.
pub fn concat(xs: &[&Tensor], axis: i64) -> KResult<Tensor> {
    let Some(first) = xs.first() else {
        kbail!("concat: no operands");
    };
    let rank = first.shape().len();
    let a = norm_axis(axis, rank, "concat")?;
    let mut out_shape = first.shape().to_vec();
    out_shape[a] = 0;
    for x in xs {
        let s = x.shape();
        if s.len() != rank
            || s.iter()
                .zip(first.shape())
                .enumerate()
                .any(|(d, (p, q))| d != a && p != q)
        {
            kbail!(
                "concat: shapes {:?} and {:?} differ outside axis {}",
                first.shape(),
                s,
                a
            );
        }
        out_shape[a] += s[a];
    }
    let outer: usize = first.shape()[..a].iter().product();
    let inners: Vec<usize> = xs.iter().map(|x| x.shape()[a..].iter().product()).collect();
    let mut bases = Vec::with_capacity(xs.len());
    let mut base = 0;
    for x in xs {
        bases.push(base);
        base += x.numel();
    }
    let mut idx = Vec::with_capacity(base);
    for o in 0..outer {
        for (&b, &n) in bases.iter().zip(&inners) {
            idx.extend(b + o * n..b + (o + 1) * n);
        }
    }
    let joined = pick::concat(&xs.iter().map(|x| x.data()).collect::<Vec<_>>())?;
    Tensor::new(out_shape, pick(&joined, &idx))
}

/// Cuts `x` along `axis` into pieces of the given sizes (which must add up to the axis).
fn split_sizes(x: &Tensor, sizes: &[usize], a: usize) -> KResult<Vec<Tensor>> {
    let shape = x.shape();
    let outer: usize = shape[..a].iter().product();
    let unit: usize = shape[a + 1..].iter().product();
    let full = shape[a] * unit;
    let mut out = Vec::with_capacity(sizes.len());
    let mut at = 0;
    for &n in sizes {
        let mut idx = Vec::with_capacity(outer * n * unit);
        for o in 0..outer {
            let start = o * full + at * unit;
            idx.extend(start..start + n * unit);
        }
        let mut s = shape.to_vec();
        s[a] = n;
        out.push(Tensor::new(s, pick(x.data(), &idx))?);
        at += n;
    }
    Ok(out)
}

/// `pd_op.split(x, sections, axis)`: one `-1` section takes what the others leave.
pub fn split(x: &Tensor, sections: &[i64], axis: i64) -> KResult<Vec<Tensor>> {
    let a = norm_axis(axis, x.shape().len(), "split")?;
    let dim = x.shape()[a] as i64;
    let known: i64 = sections.iter().filter(|&&s| s >= 0).sum();
    let inferred = sections.iter().filter(|&&s| s < 0).count();
    if sections.iter().any(|&s| s < -1)
        || inferred > 1
        || known > dim
        || (inferred == 0 && known != dim)
    {
        kbail!(
            "split: sections {:?} do not divide axis {} of size {}",
            sections,
            a,
            dim
        );
    }
    let sizes: Vec<usize> = sections
        .iter()
        .map(|&s| {
            if s < 0 {
                (dim - known) as usize
            } else {
                s as usize
            }
        })
        .collect();
    split_sizes(x, &sizes, a)
}

/// `pd_op.split_with_num(x, axis) {num}`: `num` equal pieces.
pub fn split_with_num(x: &Tensor, num: i64, axis: i64) -> KResult<Vec<Tensor>> {
    let a = norm_axis(axis, x.shape().len(), "split_with_num")?;
    let dim = x.shape()[a];
    if num <= 0 || !dim.is_multiple_of(num as usize) {
        kbail!(
            "split_with_num: axis {} of size {} does not split into {} pieces",
            a,
            dim,
            num
        );
    }
    split_sizes(x, &vec![dim / num as usize; num as usize], a)
}

/// `concat_grad(x, out_grad, axis)`: `out_grad` cut into pieces shaped like the parts.
pub fn concat_grad(xs: &[&Tensor], dout: &Tensor, axis: i64) -> KResult<Vec<Tensor>> {
    let a = norm_axis(axis, dout.shape().len(), "concat_grad")?;
    let sizes: Vec<usize> = xs
        .iter()
        .map(|x| x.shape().get(a).copied().unwrap_or(0))
        .collect();
    if sizes.iter().sum::<usize>() != dout.shape()[a] {
        kbail!(
            "concat_grad: the parts' sizes {:?} do not add up to out_grad's axis {} ({})",
            sizes,
            a,
            dout.shape()[a]
        );
    }
    split_sizes(dout, &sizes, a)
}

/// `pd_op.stack(x, axis)`: same-shape parts joined along a new axis.
pub fn stack(xs: &[&Tensor], axis: i64) -> KResult<Tensor> {
    let Some(first) = xs.first() else {
        kbail!("stack: no operands");
    };
    let a = norm_axis(axis, first.shape().len() + 1, "stack")?;
    let mut unit = first.shape().to_vec();
    unit.insert(a, 1);
    let parts = xs
        .iter()
        .map(|x| {
            if x.shape() != first.shape() {
                kbail!(
                    "stack: shapes {:?} and {:?} differ",
                    first.shape(),
                    x.shape()
                );
            }
            Tensor::new(unit.clone(), x.data().clone())
        })
        .collect::<KResult<Vec<_>>>()?;
    concat(&parts.iter().collect::<Vec<_>>(), a as i64)
}

/// `stack_grad(x, out_grad, axis)`: `out_grad` unstacked along `axis`.
pub fn stack_grad(n: usize, dout: &Tensor, axis: i64) -> KResult<Vec<Tensor>> {
    let a = norm_axis(axis, dout.shape().len(), "stack_grad")?;
    if dout.shape()[a] != n {
        kbail!(
            "stack_grad: out_grad's axis {} has {} entries for {} parts",
            a,
            dout.shape()[a],
            n
        );
    }
    split_sizes(dout, &vec![1; n], a)?
        .into_iter()
        .map(|t| {
            let mut s = t.shape().to_vec();
            s.remove(a);
            debug_assert_eq!(numel(&s), t.numel());
            t.reshaped(s)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::dtype::DType;
    use crate::exec::kernels::cast::cast;

    fn iota(shape: &[usize], from: i64) -> Tensor {
        Tensor::i64(shape, (from..from + numel(shape) as i64).collect())
    }

    /// Scalar reference: the element of the joined tensor at a multi-index.
    fn concat_ref(xs: &[&Tensor], a: usize) -> Vec<i64> {
        let mut out_shape = xs[0].shape().to_vec();
        out_shape[a] = xs.iter().map(|x| x.shape()[a]).sum();
        let mut out = vec![];
        for i in 0..numel(&out_shape) {
            let mut idx = vec![0; out_shape.len()];
            let mut r = i;
            for d in (0..out_shape.len()).rev() {
                idx[d] = r % out_shape[d];
                r /= out_shape[d];
            }
            let mut k = idx[a];
            let mut p = 0;
            while k >= xs[p].shape()[a] {
                k -= xs[p].shape()[a];
                p += 1;
            }
            idx[a] = k;
            let s = xs[p].shape();
            let off = idx.iter().zip(s).fold(0, |acc, (&i, &d)| acc * d + i);
            out.push(xs[p].to_i64_vec()[off]);
        }
        out
    }

    #[test]
    fn concat_and_split_are_inverse() {
        let a = iota(&[2, 3, 4], 0);
        let b = iota(&[2, 1, 4], 100);
        let c = iota(&[2, 2, 4], 200);
        let j = concat(&[&a, &b, &c], 1).unwrap();
        assert_eq!(j.shape(), &[2, 6, 4]);
        assert_eq!(j.to_i64_vec(), concat_ref(&[&a, &b, &c], 1));
        let parts = split(&j, &[3, -1, 2], -2).unwrap();
        assert_eq!(parts, vec![a.clone(), b.clone(), c.clone()]);
        let g = concat_grad(&[&a, &b, &c], &j, 1).unwrap();
        assert_eq!(g, vec![a.clone(), b, c]);
        let j0 = concat(&[&a, &a], 0).unwrap();
        assert_eq!(j0.to_i64_vec(), concat_ref(&[&a, &a], 0));
        let halves = split_with_num(&j0, 2, 0).unwrap();
        assert_eq!(halves, vec![a.clone(), a.clone()]);
        assert!(split(&j, &[4, 4], 1).is_err());
        assert!(split_with_num(&j, 4, 1).is_err());
        assert!(concat(&[&a, &iota(&[3, 3, 4], 0)], 1).is_err());
    }

    #[test]
    fn stack_inserts_an_axis_and_grad_removes_it() {
        let a = cast(&iota(&[2, 3], 0), DType::BF16);
        let b = cast(&iota(&[2, 3], 10), DType::BF16);
        for axis in [0i64, 1, 2, -1] {
            let s = stack(&[&a, &b], axis).unwrap();
            let ax = axis.rem_euclid(3) as usize;
            let mut want = vec![2usize, 3];
            want.insert(ax, 2);
            assert_eq!(s.shape(), want.as_slice());
            assert_eq!(s.dtype(), DType::BF16);
            let back = stack_grad(2, &s, axis).unwrap();
            assert_eq!(back, vec![a.clone(), b.clone()]);
        }
        let s = stack(&[&a, &b], 1).unwrap();
        assert_eq!(
            s.to_i64_vec(),
            vec![0, 1, 2, 10, 11, 12, 3, 4, 5, 13, 14, 15]
        );
        let ones = [Tensor::f32(&[1], vec![1.0]), Tensor::f32(&[1], vec![2.0])];
        let s = stack(&[&ones[0], &ones[1]], 0).unwrap();
        assert_eq!(s.shape(), &[2, 1]);
    }
}
