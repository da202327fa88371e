//! The collectives, for simulated data-parallel ranks: the legacy `c_allreduce_{sum,avg,max,min}`,
//! `c_reduce_{sum,avg}`, `c_broadcast`, and the ops modern Paddle programs use: `all_reduce`
//! and `reduce` (the reduction is the `reduce_type` attribute, [`reduce_kind_of`]),
//! `broadcast`, `all_gather` and `reduce_scatter` (each also in its in-place `_` form).
//!
//! The interpreter runs the ranks in lock step and, at a collective, hands the per-rank tensors
//! here ([`Collective::of`] says which collective an op is, [`Collective::run`] runs it). Sums
//! and products are accumulated in rank order 0, 1, …, N−1 in f32 (f64 for f64), so results are
//! deterministic; the average divides the sum by N. Every rank receives the same result for the
//! all-reduce; for a reduce only the root gets it (the others keep their input, as in NCCL).
//! `all_gather` concatenates the rank-local tensors along axis 0 in rank order;
//! `reduce_scatter` sums them and gives rank r the r-th of N equal row blocks of the sum.

use crate::dialect::paddle_json::REDUCE_TYPES;
use crate::exec::dtype::DType;
use crate::exec::error::KResult;
use crate::exec::kernels::elementwise::{add_n, binary, BinaryOp};
use crate::exec::tensor::{Data, Tensor};
use crate::ir::Attrs;
use crate::kbail;

/// How per-rank values are combined: the IR's reduction (`phi::ReduceType`, also a pending
/// partial status), of which the executor runs SUM, AVG, MAX, MIN and PRODUCT.
pub use crate::ir::ReduceKind;

/// The reduction a `reduce_type` attribute value names (`phi::ReduceType`,
/// `paddle.distributed.ReduceOp`, the dialect's codes), when the executor runs it:
/// 0 SUM, 1 MAX, 2 MIN, 3 PROD, 4 AVG.
fn reduce_kind_of(code: i64) -> Option<ReduceKind> {
    REDUCE_TYPES
        .iter()
        .find(|(c, _)| *c == code)
        .map(|(_, name)| ReduceKind::from_name(name))
        .filter(|k| {
            matches!(
                k,
                ReduceKind::Sum
                    | ReduceKind::Avg
                    | ReduceKind::Max
                    | ReduceKind::Min
                    | ReduceKind::Prod
            )
        })
}

/// What a collective op does across the ranks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Collective {
    /// Every rank gets the combined value.
    AllReduce(ReduceKind),
    /// Rank `root` gets the combined value; the others keep theirs.
    Reduce(ReduceKind, usize),
    /// Every rank gets rank `root`'s value.
    Broadcast(usize),
    /// Every rank gets the rank-local tensors concatenated along axis 0; the op says `nranks`.
    AllGather(i64),
    /// The sum, split along axis 0 into `nranks` blocks: rank r gets block r.
    ReduceScatter(i64),
}

fn int_attr(attrs: Attrs<'_>, key: &str) -> KResult<Option<i64>> {
    match attrs.get(key) {
        None => Ok(None),
        Some(a) => match a.as_i64() {
            Some(v) => Ok(Some(v)),
            None => kbail!("attribute `{}` is not an integer", key),
        },
    }
}

fn root_attr(attrs: Attrs<'_>, keys: &[&str]) -> KResult<usize> {
    for k in keys {
        if let Some(r) = int_attr(attrs, k)? {
            if r < 0 {
                kbail!("`{}` is {}: a root rank cannot be negative", k, r);
            }
            return Ok(r as usize);
        }
    }
    Ok(0)
}

fn reduce_type(attrs: Attrs<'_>) -> KResult<ReduceKind> {
    let Some(t) = int_attr(attrs, "reduce_type")? else {
        kbail!("has no `reduce_type` attribute (0 SUM, 1 MAX, 2 MIN, 3 PROD, 4 AVG)");
    };
    match reduce_kind_of(t) {
        Some(k) => Ok(k),
        None => kbail!(
            "`reduce_type` is {}; Paddle's reductions are 0 SUM, 1 MAX, 2 MIN, 3 PROD, 4 AVG",
            t
        ),
    }
}

fn nranks_attr(attrs: Attrs<'_>) -> KResult<i64> {
    match int_attr(attrs, "nranks")? {
        Some(n) => Ok(n),
        None => kbail!("has no `nranks` attribute"),
    }
}

impl Collective {
    /// The collective op `name` (a dialect name; the in-place `_` form behaves the same) with
    /// attributes `attrs`; an error for an op this module does not know or a bad attribute.
    pub fn of<'a>(name: &str, attrs: impl Into<Attrs<'a>>) -> KResult<Collective> {
        let attrs = attrs.into();
        let base = name.strip_suffix('_').unwrap_or(name);
        Ok(match base {
            "pd_op.all_reduce" => Collective::AllReduce(reduce_type(attrs)?),
            "pd_op.reduce" => {
                Collective::Reduce(reduce_type(attrs)?, root_attr(attrs, &["root_id"])?)
            }
            "pd_op.broadcast" | "pd_op.c_broadcast" => {
                Collective::Broadcast(root_attr(attrs, &["root"])?)
            }
            "pd_op.all_gather" => Collective::AllGather(nranks_attr(attrs)?),
            "pd_op.reduce_scatter" => Collective::ReduceScatter(nranks_attr(attrs)?),
            "pd_op.c_allreduce_sum" => Collective::AllReduce(ReduceKind::Sum),
            "pd_op.c_allreduce_avg" => Collective::AllReduce(ReduceKind::Avg),
            "pd_op.c_allreduce_max" => Collective::AllReduce(ReduceKind::Max),
            "pd_op.c_allreduce_min" => Collective::AllReduce(ReduceKind::Min),
            "pd_op.c_allreduce_prod" => Collective::AllReduce(ReduceKind::Prod),
            "pd_op.c_reduce_sum" => {
                Collective::Reduce(ReduceKind::Sum, root_attr(attrs, &["root_id", "root"])?)
            }
            "pd_op.c_reduce_avg" => {
                Collective::Reduce(ReduceKind::Avg, root_attr(attrs, &["root_id", "root"])?)
            }
            _ => kbail!("collective `{}` is not supported by the executor", name),
        })
    }

    /// Runs the collective on the per-rank operands (in rank order); one result per rank.
    pub fn run(&self, xs: &[&Tensor]) -> KResult<Vec<Tensor>> {
        match *self {
            Collective::AllReduce(ref kind) => all_reduce(xs, kind.clone()),
            Collective::Reduce(ref kind, root) => reduce(xs, kind.clone(), root),
            Collective::Broadcast(root) => {
                let Some(src) = xs.get(root) else {
                    kbail!(
                        "broadcast root {} out of range for {} ranks",
                        root,
                        xs.len()
                    )
                };
                Ok(vec![(*src).clone(); xs.len()])
            }
            Collective::AllGather(n) => {
                check_nranks(n, xs.len())?;
                let g = concat_rows(xs)?;
                Ok(vec![g; xs.len()])
            }
            Collective::ReduceScatter(n) => {
                check_nranks(n, xs.len())?;
                reduce_scatter(xs)
            }
        }
    }
}

fn check_nranks(n: i64, ranks: usize) -> KResult<()> {
    if n != ranks as i64 {
        kbail!(
            "the op says `nranks:{}` but the program runs on {} ranks (set --ranks {})",
            n,
            ranks,
            n.max(1)
        );
    }
    Ok(())
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
                first.dtype().attr_name(),
                x.shape(),
                x.dtype().attr_name()
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
        ReduceKind::Max | ReduceKind::Min | ReduceKind::Prod => {
            let op = match kind {
                ReduceKind::Max => BinaryOp::Maximum,
                ReduceKind::Min => BinaryOp::Minimum,
                _ => BinaryOp::Multiply,
            };
            let mut acc = xs[0].clone();
            for x in &xs[1..] {
                acc = binary(op, &acc, x, -1)?;
            }
            Ok(acc)
        }
        ReduceKind::Any | ReduceKind::All | ReduceKind::Other(_) => {
            kbail!("the executor does not run the {} reduction", kind.name())
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

/// The tensors concatenated along axis 0, in order (they must agree in dtype and in every
/// other dimension; a 0-d tensor counts as one row).
fn concat_rows(xs: &[&Tensor]) -> KResult<Tensor> {
    let Some(first) = xs.first() else {
        kbail!("a collective needs at least one rank");
    };
    let rest_dims = |t: &Tensor| t.shape().get(1..).unwrap_or(&[]).to_vec();
    let mut rows = 0usize;
    for x in xs {
        if x.dtype() != first.dtype() || rest_dims(x) != rest_dims(first) {
            kbail!(
                "ranks disagree on the gathered operand: {:?} {} vs {:?} {}",
                first.shape(),
                first.dtype().attr_name(),
                x.shape(),
                x.dtype().attr_name()
            );
        }
        rows = rows.saturating_add(x.shape().first().copied().unwrap_or(1));
    }
    let mut shape = first.shape().to_vec();
    match shape.first_mut() {
        Some(d) => *d = rows,
        None => shape.push(rows),
    }
    crate::exec::memory::reserve(&"the gathered tensor", &shape, first.dtype().size())?;
    macro_rules! cat {
        ($v:ident) => {{
            let mut out = Vec::with_capacity(xs.iter().map(|x| x.numel()).sum());
            for x in xs {
                match x.data() {
                    Data::$v(d) => out.extend_from_slice(d),
                    _ => kbail!("ranks disagree on the gathered operand's dtype"),
                }
            }
            Data::$v(out)
        }};
    }
    let data = match first.data() {
        Data::F32(_) => cat!(F32),
        Data::BF16(_) => cat!(BF16),
        Data::F16(_) => cat!(F16),
        Data::F64(_) => cat!(F64),
        Data::I64(_) => cat!(I64),
        Data::I32(_) => cat!(I32),
        Data::Bool(_) => cat!(Bool),
        Data::U8(_) => cat!(U8),
    };
    Tensor::new(shape, data)
}

/// Rows `[start, start + len)` of `t` (along axis 0).
fn rows(t: &Tensor, start: usize, len: usize) -> KResult<Tensor> {
    let Some(&n) = t.shape().first() else {
        kbail!("cannot split a 0-d tensor along axis 0");
    };
    if start + len > n {
        kbail!(
            "rows {}..{} of a tensor with {} rows",
            start,
            start + len,
            n
        );
    }
    let row = t.numel() / n.max(1);
    let (a, b) = (start * row, (start + len) * row);
    let data = t.data().range(a, b);
    let mut shape = t.shape().to_vec();
    shape[0] = len;
    Tensor::new(shape, data)
}

/// Reduce-scatter: the sum of the per-rank tensors (rank order), split along axis 0 into
/// `xs.len()` equal blocks; rank r gets block r. Axis 0 must divide evenly, as in NCCL.
pub fn reduce_scatter(xs: &[&Tensor]) -> KResult<Vec<Tensor>> {
    let s = combine(xs, ReduceKind::Sum)?;
    let n = xs.len();
    let Some(&d0) = s.shape().first() else {
        kbail!("reduce_scatter needs a tensor of rank at least 1, got a 0-d one");
    };
    if d0 % n != 0 {
        kbail!(
            "reduce_scatter splits axis 0 ({} rows) into {} equal blocks: it does not divide",
            d0,
            n
        );
    }
    let len = d0 / n;
    (0..n).map(|r| rows(&s, r * len, len)).collect()
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

    fn attrs(kv: &[(&str, i64)]) -> crate::ir::AttrDict {
        let mut d = crate::ir::AttrDict::default();
        for (k, v) in kv {
            d.push(k, crate::ir::Attr::Int(*v));
        }
        d
    }

    /// Three ranks' f32 operands of shape [4, 3] with distinct values of both signs.
    fn ranks3() -> Vec<Tensor> {
        (0..3)
            .map(|r| {
                let v = (0..12)
                    .map(|i| ((i * 7 + r * 5) % 11) as f32 * 0.37 - 1.5 + r as f32 * 0.01)
                    .collect();
                Tensor::f32(&[4, 3], v)
            })
            .collect()
    }

    /// `all_reduce` with every `reduce_type`, against a scalar loop over the ranks in order.
    #[test]
    fn all_reduce_each_reduce_type_matches_scalar_reference() {
        let xs = ranks3();
        let refs: Vec<&Tensor> = xs.iter().collect();
        let vals: Vec<&[f32]> = xs.iter().map(|t| t.as_f32().unwrap()).collect();
        type Fold = fn(f32, f32) -> f32;
        let cases: [(i64, Fold, bool); 5] = [
            (0, |a, b| a + b, false),
            (1, f32::max, false),
            (2, f32::min, false),
            (3, |a, b| a * b, false),
            (4, |a, b| a + b, true),
        ];
        for (t, f, avg) in cases {
            let c = Collective::of(
                "pd_op.all_reduce",
                &attrs(&[("ring_id", 0), ("reduce_type", t)]),
            )
            .unwrap();
            let outs = c.run(&refs).unwrap();
            assert_eq!(outs.len(), 3);
            for i in 0..12 {
                let mut acc = vals[0][i];
                for v in &vals[1..] {
                    acc = f(acc, v[i]);
                }
                if avg {
                    acc /= 3.0;
                }
                for o in &outs {
                    assert_eq!(o.shape(), &[4, 3]);
                    assert_eq!(o.as_f32().unwrap()[i], acc, "reduce_type {t} element {i}");
                }
            }
        }
        // The in-place form is the same collective.
        assert_eq!(
            Collective::of("pd_op.all_reduce_", &attrs(&[("reduce_type", 3)])).unwrap(),
            Collective::AllReduce(ReduceKind::Prod)
        );
        // A reduce_type Paddle does not have, or none at all, is an error, not a guess.
        assert!(Collective::of("pd_op.all_reduce", &attrs(&[("reduce_type", 5)])).is_err());
        assert!(Collective::of("pd_op.all_reduce", &attrs(&[("ring_id", 0)])).is_err());
    }

    #[test]
    fn all_gather_concatenates_rank_local_tensors_in_rank_order() {
        let xs = ranks3();
        let refs: Vec<&Tensor> = xs.iter().collect();
        let c =
            Collective::of("pd_op.all_gather", &attrs(&[("ring_id", 0), ("nranks", 3)])).unwrap();
        let outs = c.run(&refs).unwrap();
        let mut want = Vec::new();
        for x in &xs {
            want.extend_from_slice(x.as_f32().unwrap());
        }
        for o in &outs {
            assert_eq!(o.shape(), &[12, 3]);
            assert_eq!(o.as_f32().unwrap(), want.as_slice());
        }
        // nranks must be the number of ranks the program runs on.
        let c2 = Collective::of("pd_op.all_gather", &attrs(&[("nranks", 2)])).unwrap();
        assert!(c2.run(&refs).is_err());
        // Other dimensions must agree.
        let odd = Tensor::f32(&[4, 2], vec![0.0; 8]);
        assert!(c.run(&[&xs[0], &xs[1], &odd]).is_err());
    }

    #[test]
    fn reduce_scatter_gives_rank_r_its_block_of_the_sum() {
        let xs: Vec<Tensor> = (0..2)
            .map(|r| Tensor::f32(&[4, 3], (0..12).map(|i| (i * 3 + r) as f32 * 0.5).collect()))
            .collect();
        let refs: Vec<&Tensor> = xs.iter().collect();
        let c = Collective::of("pd_op.reduce_scatter", &attrs(&[("nranks", 2)])).unwrap();
        let outs = c.run(&refs).unwrap();
        let (a, b) = (xs[0].as_f32().unwrap(), xs[1].as_f32().unwrap());
        for (r, o) in outs.iter().enumerate() {
            assert_eq!(o.shape(), &[2, 3]);
            for j in 0..6 {
                let i = r * 6 + j;
                assert_eq!(o.as_f32().unwrap()[j], a[i] + b[i], "rank {r} element {j}");
            }
        }
        // Axis 0 must split evenly.
        let three = Tensor::f32(&[3, 1], vec![1.0; 3]);
        assert!(c.run(&[&three, &three]).is_err());
    }

    #[test]
    fn reduce_and_broadcast_follow_their_root() {
        let xs = ranks3();
        let refs: Vec<&Tensor> = xs.iter().collect();
        let c = Collective::of(
            "pd_op.reduce",
            &attrs(&[("root_id", 2), ("reduce_type", 1)]),
        )
        .unwrap();
        let outs = c.run(&refs).unwrap();
        assert_eq!(outs[0], xs[0]);
        assert_eq!(outs[1], xs[1]);
        for i in 0..12 {
            let m = refs
                .iter()
                .map(|t| t.as_f32().unwrap()[i])
                .fold(f32::MIN, f32::max);
            assert_eq!(outs[2].as_f32().unwrap()[i], m);
        }
        let b = Collective::of("pd_op.broadcast_", &attrs(&[("root", 1)])).unwrap();
        assert!(b.run(&refs).unwrap().iter().all(|t| *t == xs[1]));
        let far = Collective::of("pd_op.broadcast", &attrs(&[("root", 3)])).unwrap();
        assert!(far.run(&refs).is_err());
        assert!(Collective::of(
            "pd_op.reduce",
            &attrs(&[("root_id", -1), ("reduce_type", 0)])
        )
        .is_err());
    }

    /// Every op the dialect table calls collective has executor semantics (so the interpreter,
    /// which asks only about those, never meets an unknown one).
    #[test]
    fn every_table_collective_has_semantics() {
        use crate::dialect::{Dialect, Effect};
        let a = attrs(&[
            ("reduce_type", 0),
            ("nranks", 2),
            ("root", 0),
            ("root_id", 0),
        ]);
        let mut n = 0;
        for s in Dialect::get()
            .all()
            .iter()
            .filter(|s| s.effect == Effect::Collective)
        {
            assert!(Collective::of(s.name, &a).is_ok(), "{}", s.name);
            n += 1;
        }
        assert!(n >= 17, "{n} collectives");
        assert!(Collective::of("pd_op.c_concat", &a).is_err());
    }
}
