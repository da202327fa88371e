//! The combine step of the collectives, for simulated data-parallel ranks: `c_allreduce_sum`,
//! `c_allreduce_avg`, `c_reduce_sum` (and `c_allreduce_max/min`).
//!
//! The interpreter runs the ranks in lock step and, at a collective, hands the per-rank tensors
//! here. Sums are accumulated in rank order 0, 1, …, N−1 in f32 (f64 for f64), so results are
//! deterministic; the average divides the sum by N. Every rank receives the same result for the
//! all-reduce; for `c_reduce_sum` only the root gets it (the others keep their input, as in NCCL).

use crate::exec::dtype::DType;
use crate::exec::error::KResult;
use crate::exec::kernels::elementwise::{add_n, binary, BinaryOp};
use crate::exec::tensor::Tensor;
use crate::kbail;

/// How per-rank values are combined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceKind {
    Sum,
    Avg,
    Max,
    Min,
}

fn check(xs: &[&Tensor]) -> KResult<()> {
    let Some(first) = xs.first() else {
        kbail!("a collective needs at least one rank");
    };
    for x in xs {
        if x.shape() != first.shape() || x.dtype() != first.dtype() {
            kbail!(
                "ranks disagree on the collective's operand: {:?} {} vs {:?} {}",
                first.shape(),
                first.dtype(),
                x.shape(),
                x.dtype()
            );
        }
    }
    Ok(())
}

/// Combines the per-rank tensors (in rank order).
pub fn combine(xs: &[&Tensor], kind: ReduceKind) -> KResult<Tensor> {
    check(xs)?;
    match kind {
        ReduceKind::Sum => add_n(xs),
        ReduceKind::Avg => {
            let s = add_n(xs)?;
            let n = Tensor::full(
                &[],
                if s.dtype() == DType::F64 {
                    DType::F64
                } else {
                    DType::F32
                },
                xs.len() as f64,
            );
            let avg = binary(BinaryOp::Divide, &s, &n, -1)?;
            Ok(crate::exec::kernels::cast::cast(&avg, s.dtype()))
        }
        ReduceKind::Max | ReduceKind::Min => {
            let op = if kind == ReduceKind::Max {
                BinaryOp::Maximum
            } else {
                BinaryOp::Minimum
            };
            let mut acc = xs[0].clone();
            for x in &xs[1..] {
                acc = binary(op, &acc, x, -1)?;
            }
            Ok(acc)
        }
    }
}

/// All-reduce: every rank gets the combined value.
pub fn all_reduce(xs: &[&Tensor], kind: ReduceKind) -> KResult<Vec<Tensor>> {
    let r = combine(xs, kind)?;
    Ok(vec![r; xs.len()])
}

/// Reduce to `root`: the root gets the combined value, the others keep theirs.
pub fn reduce(xs: &[&Tensor], kind: ReduceKind, root: usize) -> KResult<Vec<Tensor>> {
    if root >= xs.len() {
        kbail!("reduce root {} out of range for {} ranks", root, xs.len());
    }
    let r = combine(xs, kind)?;
    Ok(xs
        .iter()
        .enumerate()
        .map(|(i, x)| if i == root { r.clone() } else { (*x).clone() })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sum_avg_in_rank_order() {
        let a = Tensor::f32(&[2], vec![1.0, 1e8]);
        let b = Tensor::f32(&[2], vec![2.0, 1.0]);
        let c = Tensor::f32(&[2], vec![3.0, -1e8]);
        let s = combine(&[&a, &b, &c], ReduceKind::Sum).unwrap();
        // rank order: (1e8 + 1) - 1e8 = 0 in f32, which a different order would not give
        assert_eq!(s.as_f32().unwrap(), &[6.0, ((1e8f32 + 1.0) - 1e8)]);
        let m = combine(&[&a, &b], ReduceKind::Avg).unwrap();
        assert_eq!(m.as_f32().unwrap()[0], 1.5);
        let r = reduce(&[&a, &b], ReduceKind::Sum, 1).unwrap();
        assert_eq!(r[0], a);
        assert_eq!(r[1].as_f32().unwrap()[0], 3.0);
        assert!(combine(&[&a, &Tensor::f32(&[3], vec![0.0; 3])], ReduceKind::Sum).is_err());
        assert_eq!(
            all_reduce(&[&a, &b], ReduceKind::Max).unwrap()[0]
                .as_f32()
                .unwrap(),
            &[2.0, 1e8]
        );
    }
}
