//! Batch-coupled programs: where gradient merge over micro-batches cannot be the full-batch step,
//! and what `irw check` compares instead.
//!
//! Gradient merge rests on one identity: the gradient of a loss averaged (or summed) over the
//! rows of a batch is the average (or sum) of the gradients of its parts, because each row's
//! loss depends on that row alone. An op whose output on a row depends on the *other* rows of
//! its batch breaks it: train-mode `batch_norm` normalizes every row with the statistics of the
//! whole batch, so k micro-batches of B rows see k different statistics where one step on k·B
//! rows sees one. No rewrite can make the merged step equal the full-batch step then, and
//! comparing the two would fail a correct gradient merge.
//!
//! Which ops couple rows, and when, is data ([`COUPLING`]): an op name, the condition on its
//! attributes (and operand type) under which it mixes rows, and why in words. Only forward ops
//! count (op_role 0, or none): a backward op of a coupled forward is coupled because of it.
//!
//! Reductions over the batch dimension (dimension 0 of an operand whose dimension 0 is the
//! dynamic batch, `-1`, computed from the parameters: a reduction of data alone, such as a
//! token count, changes no gradient of a row) are told apart by what they are:
//! - one that is not linear in the rows (`max`, `min`, `prod`, `logsumexp`, `var`, a norm) couples
//!   them wherever its result goes: which row wins, or how much one counts, depends on the others;
//! - a linear one (`mean`, `sum`) couples them only when a later forward op combines its result
//!   with the rows again (`h - mean(h, axis=0)`, batch centering). The loss's own `mean` over the
//!   batch is one too, and is not coupling: its result is the loss, and the gradient of a mean
//!   splits over the rows. Its result divided by a count (a token mean) is not either: it weighs
//!   the micro-batches unequally, which the check reads off the gradients and names.
//!
//! Not detected: a linear reduction over the batch followed by a nonlinear op that never meets
//! the rows (`sqrt(mean(e²))`), rows paired by broadcasting, `expand` or `einsum`
//! (`a.unsqueeze(1) * b.unsqueeze(0)`: shapes alone do not say which dynamic dimension is the
//! batch), and any reduction in a program whose batch dimension is fixed. Their full-batch
//! gradient is neither the mean nor the sum of the micro-batch gradients, which the check
//! measures and fails.
//!
//! What still holds, and what `irw check` then checks ([`micro_reference`]): the merged program
//! equals the *original run micro-batch by micro-batch*. The original runs forward and backward
//! on micro-batch 1, 2, …, k in turn (so its running statistics are updated k times, as the
//! merged program's are), its gradients on those micro-batches are combined as the loss
//! combines rows (averaged for a `mean` loss, summed for a `sum` loss), and its optimizers
//! applied once, on the last micro-batch, to the rewritten program's merged gradients.

use indexmap::IndexMap;

use crate::diag::{Diagnostic, SourceFile};
use crate::exec::interp::{op_role, Rank, Stage};
use crate::exec::scope::Scope;
use crate::exec::tensor::Tensor;
use crate::ir::{Attr, Attrs, Context, OpId, Program, Type, ValueId};

/// When an op of [`COUPLING`] mixes the rows of its batch.
#[derive(Clone, Copy, Debug)]
pub enum When {
    /// It normalizes with statistics of the batch: unless it uses its running statistics
    /// (`use_global_stats`, or `is_test` without `trainable_statistics`).
    BatchStatistics,
    /// It normalizes or accumulates along one axis, and that axis is dimension 0 (the batch)
    /// of its first operand.
    AlongBatchAxis(Axes),
    /// A matrix product one of whose matrices holds the batch (rank 2, a dynamic dimension)
    /// used other than row by row: `x` with its batch dimension contracted (`xᵀ @ ..`), or `y`
    /// whichever way it holds the batch (its rows or columns are the product's columns, or are
    /// summed over), as an in-batch contrastive loss's `a @ bᵀ` does, with `transpose_y` or a
    /// `transpose` of `b`. A rank-3 or higher operand's dimension 0 is a batch of matrices,
    /// which a product keeps apart.
    MatrixOfBatchRows,
    /// It moves values along one axis (`roll`, `flip`), and that axis is the batch dimension
    /// (or every axis, flattened): a row's output is another row's input.
    MovesAlongBatch(Axes),
    /// A reduction not linear in the rows over the batch dimension of a batch of rows computed
    /// from the parameters (see the module docs).
    ReducesBatch(Axes),
    /// A linear reduction over the batch dimension of a batch of rows computed from the
    /// parameters, whose result a later forward op combines with a batch of rows again.
    ReducesBatchIntoRows(Axes),
}

/// Where an op's axes are: an integer (or integer list) attribute, an operand a
/// `pd_op.full_int_array` or `pd_op.full` makes, or every axis. Reductions also honour
/// `reduce_all` (and `p_norm` its `asvector`), and an empty list means every axis, as in Paddle.
#[derive(Clone, Copy, Debug)]
pub enum Axes {
    Attr(&'static str),
    Operand(usize),
    All,
}

/// An op that couples the rows of its batch, when it does, and why.
struct CouplingRule {
    pub op: &'static str,
    pub when: When,
    pub why: &'static str,
}

/// The ops whose output on a row can depend on the other rows of the batch.
static COUPLING: &[CouplingRule] = &[
    CouplingRule {
        op: "pd_op.batch_norm_",
        when: When::BatchStatistics,
        why: "normalizes with the mean and variance of its batch (training mode)",
    },
    CouplingRule {
        op: "pd_op.batch_norm",
        when: When::BatchStatistics,
        why: "normalizes with the mean and variance of its batch (training mode)",
    },
    CouplingRule {
        op: "pd_op.sync_batch_norm_",
        when: When::BatchStatistics,
        why: "normalizes with the mean and variance of its batch across ranks (training mode)",
    },
    CouplingRule {
        op: "pd_op.softmax",
        when: When::AlongBatchAxis(Axes::Attr("axis")),
        why: "normalizes along the batch dimension",
    },
    CouplingRule {
        op: "pd_op.log_softmax",
        when: When::AlongBatchAxis(Axes::Attr("axis")),
        why: "normalizes along the batch dimension",
    },
    CouplingRule {
        op: "pd_op.norm",
        when: When::AlongBatchAxis(Axes::Attr("axis")),
        why: "normalizes along the batch dimension",
    },
    CouplingRule {
        op: "pd_op.cumsum",
        when: When::AlongBatchAxis(Axes::Operand(1)),
        why: "accumulates along the batch dimension",
    },
    CouplingRule {
        op: "pd_op.cumprod",
        when: When::AlongBatchAxis(Axes::Attr("dim")),
        why: "accumulates along the batch dimension",
    },
    CouplingRule {
        op: "pd_op.logcumsumexp",
        when: When::AlongBatchAxis(Axes::Attr("axis")),
        why: "accumulates along the batch dimension",
    },
    CouplingRule {
        op: "pd_op.cummax",
        when: When::AlongBatchAxis(Axes::Attr("axis")),
        why: "accumulates along the batch dimension",
    },
    CouplingRule {
        op: "pd_op.cummin",
        when: When::AlongBatchAxis(Axes::Attr("axis")),
        why: "accumulates along the batch dimension",
    },
    CouplingRule {
        op: "pd_op.max",
        when: When::ReducesBatch(Axes::Operand(1)),
        why: "takes the max over the batch dimension",
    },
    CouplingRule {
        op: "pd_op.min",
        when: When::ReducesBatch(Axes::Operand(1)),
        why: "takes the min over the batch dimension",
    },
    CouplingRule {
        op: "pd_op.amax",
        when: When::ReducesBatch(Axes::Attr("axis")),
        why: "takes the max over the batch dimension",
    },
    CouplingRule {
        op: "pd_op.amin",
        when: When::ReducesBatch(Axes::Attr("axis")),
        why: "takes the min over the batch dimension",
    },
    CouplingRule {
        op: "pd_op.prod",
        when: When::ReducesBatch(Axes::Operand(1)),
        why: "multiplies over the batch dimension",
    },
    CouplingRule {
        op: "pd_op.logsumexp",
        when: When::ReducesBatch(Axes::Attr("axis")),
        why: "takes the log-sum-exp over the batch dimension",
    },
    CouplingRule {
        op: "pd_op.var",
        when: When::ReducesBatch(Axes::Attr("axis")),
        why: "takes the variance over the batch dimension",
    },
    CouplingRule {
        op: "pd_op.std",
        when: When::ReducesBatch(Axes::Attr("axis")),
        why: "takes the standard deviation over the batch dimension",
    },
    CouplingRule {
        op: "pd_op.p_norm",
        when: When::ReducesBatch(Axes::Attr("axis")),
        why: "takes a norm over the batch dimension",
    },
    CouplingRule {
        op: "pd_op.frobenius_norm",
        when: When::ReducesBatch(Axes::Operand(1)),
        why: "takes a norm over the batch dimension",
    },
    CouplingRule {
        op: "pd_op.mean",
        when: When::ReducesBatchIntoRows(Axes::Operand(1)),
        why: "averages over the batch dimension",
    },
    CouplingRule {
        op: "pd_op.sum",
        when: When::ReducesBatchIntoRows(Axes::Operand(1)),
        why: "sums over the batch dimension",
    },
    CouplingRule {
        op: "pd_op.mean_all",
        when: When::ReducesBatchIntoRows(Axes::All),
        why: "averages over the batch dimension",
    },
    CouplingRule {
        op: "pd_op.matmul",
        when: When::MatrixOfBatchRows,
        why: "multiplies across the rows of its batch",
    },
    CouplingRule {
        op: "pd_op.roll",
        when: When::MovesAlongBatch(Axes::Attr("axis")),
        why: "shifts rows along the batch dimension",
    },
    CouplingRule {
        op: "pd_op.flip",
        when: When::MovesAlongBatch(Axes::Attr("axis")),
        why: "reverses the rows of the batch",
    },
];

/// One op of a program that couples rows.
#[derive(Clone, Debug)]
pub struct Coupled {
    pub name: String,
    /// `file:line:col`, or `op #i` for a program without a source.
    pub at: String,
    pub why: String,
}

impl Coupled {
    /// `batch-coupled: AT: OP WHY: a row's output depends on the other rows of its batch, so
    /// CONSEQUENCE`: the line that names this op, for any verdict.
    pub fn line(&self, consequence: &str) -> String {
        format!(
            "batch-coupled: {}: {} {}: a row's output depends on the other rows of its batch, so {consequence}",
            self.at, self.name, self.why
        )
    }
}

fn flag(a: Attrs<'_>, key: &str) -> bool {
    a.get(key).and_then(|v| v.as_bool()).unwrap_or(false)
}

/// An operand's shape, when it is a tensor.
fn shape_of(t: Option<&Type>) -> Option<&[i64]> {
    match t? {
        Type::Tensor { shape, .. } | Type::Dist { shape, .. } => Some(shape),
        _ => None,
    }
}

/// Whether `t` carries the batch: a tensor of rank 1 or more whose dimension 0 is dynamic.
fn carries_batch(t: Option<&Type>) -> bool {
    shape_of(t).is_some_and(|s| s.first().is_some_and(|&d| d < 0))
}

/// The integers `v` holds when a `pd_op.full_int_array` or `pd_op.full` makes it.
fn constant_ints(ctx: &Context, prog: &Program, v: ValueId) -> Option<Vec<i64>> {
    let def = prog.defining_op(v)?;
    let a = ctx.attrs(prog.op_attrs(def));
    match ctx.str(prog.op_name(def)) {
        "pd_op.full_int_array" => a
            .get("value")?
            .as_array()?
            .iter()
            .map(|x| x.as_i64())
            .collect(),
        "pd_op.full" => Some(vec![a.get("value")?.as_f64()? as i64]),
        _ => None,
    }
}

/// The axes `axes` names on `op`: `Some(empty)` for every axis, `None` when they are not known
/// (an operand computed at run time).
fn axes_of(ctx: &Context, prog: &Program, op: OpId, axes: Axes) -> Option<Vec<i64>> {
    let a = ctx.attrs(prog.op_attrs(op));
    if flag(a, "reduce_all") || flag(a, "asvector") {
        return Some(Vec::new());
    }
    match axes {
        Axes::All => Some(Vec::new()),
        Axes::Operand(i) => constant_ints(ctx, prog, prog.operand(op, i)?),
        Axes::Attr(key) => match a.get(key) {
            Some(v) => match v.as_array() {
                Some(items) => items.iter().map(|x| x.as_i64()).collect(),
                None => Some(vec![v.as_i64()?]),
            },
            // An op without the attribute takes its default: every axis for a reduction.
            None => Some(Vec::new()),
        },
    }
}

/// Whether the result of `op` is differentiable (`stop_gradient` false, or not said).
fn differentiable(a: Attrs<'_>) -> bool {
    match a.get("stop_gradient") {
        Some(Attr::Array(items)) => items.first().and_then(|x| x.as_bool()) != Some(true),
        Some(x) => x.as_bool() != Some(true),
        None => true,
    }
}

/// Whether a forward op reads a value derived from `op`'s results together with a batch of
/// rows that is not: the first such op. The derived values are followed through their uses.
fn meets_rows(ctx: &Context, prog: &Program, op: OpId) -> Option<OpId> {
    let top = prog.top_block();
    let mut derived: std::collections::HashSet<ValueId> = prog.results(op).collect();
    let mut todo: Vec<ValueId> = derived.iter().copied().collect();
    while let Some(v) = todo.pop() {
        for u in prog.uses(v) {
            let user = u.op;
            // Backward reads the forward's values beside the rows by design; in a program
            // without op roles it is told by Paddle's names (the seed, `*_grad` ops).
            let name = ctx.str(prog.op_name(user));
            if prog.op_block(user) != Some(top)
                || op_role(ctx, prog, user).is_some_and(|r| r != 0)
                || name == "pd_op.full_like"
                || name.ends_with("_grad")
                || name.ends_with("_grad_")
            {
                continue;
            }
            let rows = prog
                .operands(user)
                .flatten()
                .any(|w| !derived.contains(&w) && carries_batch(Some(ctx.ty(prog.value_type(w)))));
            if rows {
                return Some(user);
            }
            for r in prog.results(user) {
                if derived.insert(r) {
                    todo.push(r);
                }
            }
        }
    }
    None
}

/// Why `op` (of `rule`) couples the rows of its batch, if it does; `at` names an op's place.
fn couples(
    rule: &CouplingRule,
    ctx: &Context,
    prog: &Program,
    op: OpId,
    at: &dyn Fn(OpId) -> String,
) -> Option<String> {
    let a = ctx.attrs(prog.op_attrs(op));
    let operands: Vec<Option<&Type>> = prog
        .operands(op)
        .map(|v| v.map(|v| ctx.ty(prog.value_type(v))))
        .collect();
    let first_operand = operands.first().copied().flatten();
    match rule.when {
        When::BatchStatistics => {
            let global = flag(a, "use_global_stats")
                || (flag(a, "is_test") && !flag(a, "trainable_statistics"));
            (!global).then(|| {
                format!(
                    "{} (is_test {}, use_global_stats {})",
                    rule.why,
                    flag(a, "is_test"),
                    flag(a, "use_global_stats")
                )
            })
        }
        When::AlongBatchAxis(axes) => {
            let rank = shape_of(first_operand)?.len() as i64;
            let axis = match axes_of(ctx, prog, op, axes)?.as_slice() {
                [] => -1,
                [axis] => *axis,
                _ => return None,
            };
            let key = match axes {
                Axes::Attr(key) => key,
                Axes::Operand(_) | Axes::All => "axis",
            };
            (rank >= 2 && (axis == 0 || axis == -rank))
                .then(|| format!("{} ({key} {axis} of a rank-{rank} operand)", rule.why))
        }
        When::MatrixOfBatchRows => {
            // x's contracted dimension: its rows when transposed, else its columns.
            let contracted = usize::from(!flag(a, "transpose_x"));
            let x = match shape_of(first_operand) {
                Some(s) if s.len() == 2 => s[contracted] < 0,
                _ => false,
            };
            let y = shape_of(operands.get(1).copied().flatten())
                .filter(|s| s.len() == 2)
                .map(|s| (s[0] < 0, s[1] < 0));
            let which = match (x, y) {
                (true, _) if contracted == 0 => "x transposed is a batch of rows",
                (true, _) => "x's columns are the batch",
                (false, Some((true, _))) => "y is a batch of rows",
                (false, Some((false, true))) => "y is a batch of rows, transposed",
                (false, _) => return None,
            };
            Some(format!(
                "{} ({which}: each result row depends on every row)",
                rule.why
            ))
        }
        When::MovesAlongBatch(axes) => {
            if !carries_batch(first_operand) {
                return None;
            }
            let rank = shape_of(first_operand)?.len() as i64;
            let axes = axes_of(ctx, prog, op, axes)?;
            (axes.is_empty() || axes.iter().any(|&x| x == 0 || x == -rank)).then(|| {
                let which = if axes.is_empty() {
                    "every axis, flattened".to_string()
                } else {
                    format!("axis {axes:?}")
                };
                format!("{} ({which} of a rank-{rank} batch)", rule.why)
            })
        }
        When::ReducesBatch(axes) | When::ReducesBatchIntoRows(axes) => {
            if !carries_batch(first_operand) || !differentiable(a) {
                return None;
            }
            let rank = shape_of(first_operand)?.len() as i64;
            let axes = axes_of(ctx, prog, op, axes)?;
            if !(axes.is_empty() || axes.iter().any(|&x| x == 0 || x == -rank)) {
                return None;
            }
            let which = if axes.is_empty() {
                "every axis".to_string()
            } else {
                format!("axis {axes:?}")
            };
            match rule.when {
                When::ReducesBatchIntoRows(_) => {
                    let meet = meets_rows(ctx, prog, op)?;
                    Some(format!(
                        "{} ({which} of a rank-{rank} batch), and `{}` at {} combines the result with the rows again",
                        rule.why,
                        ctx.str(prog.op_name(meet)),
                        at(meet)
                    ))
                }
                _ => Some(format!(
                    "{} ({which} of a rank-{rank} batch): how much each row counts depends on the others",
                    rule.why
                )),
            }
        }
    }
}

/// The forward ops of `prog` that couple the rows of the batch, in program order.
pub fn find(ctx: &Context, prog: &Program, src: Option<&SourceFile>) -> Vec<Coupled> {
    let mut out = Vec::new();
    // `file:line:col`, or `op #i` (its index in the top block) without a source.
    let at = |op: OpId| match (src, prog.position(op)) {
        (Some(s), Some(off)) => {
            let (l, c) = s.line_col(off);
            format!("{}:{l}:{c}", s.name)
        }
        _ => {
            let i = prog.block_ops(prog.top_block()).position(|o| o == op);
            format!("op #{}", i.unwrap_or(0))
        }
    };
    for op in prog.block_ops(prog.top_block()) {
        if op_role(ctx, prog, op).is_some_and(|r| r != 0) {
            continue;
        }
        let name = ctx.str(prog.op_name(op));
        let Some(rule) = COUPLING.iter().find(|r| r.op == name) else {
            continue;
        };
        let Some(why) = couples(rule, ctx, prog, op, &at) else {
            continue;
        };
        out.push(Coupled {
            name: name.to_string(),
            at: at(op),
            why,
        });
    }
    out
}

/// The verdict on a batch-coupled original: its coupling ops and how its loss combines rows.
#[derive(Clone, Debug)]
pub struct BatchCoupling {
    pub ops: Vec<Coupled>,
    pub combine: Combine,
}

impl BatchCoupling {
    /// Why the merged step is not the full-batch step, one line per op.
    pub fn explain(&self, f: &mut std::fmt::Formatter<'_>, k: usize, b: usize) -> std::fmt::Result {
        for c in &self.ops {
            let consequence = format!(
                "{k} micro-batches of {b} rows are not one step on {} rows",
                k * b
            );
            writeln!(f, "{}", c.line(&consequence))?;
        }
        Ok(())
    }

    /// The result line when every row passed.
    pub fn verdict(
        &self,
        f: &mut std::fmt::Formatter<'_>,
        k: usize,
        rows: usize,
    ) -> std::fmt::Result {
        writeln!(
            f,
            "result: BATCH-COUPLED: gradient merge cannot equal the full-batch step here; what holds does: the rewritten program equals the original run micro-batch by micro-batch (gradients {} over {k} micro-batches, running statistics updated {k} times) ({rows} tensors)",
            self.combine.words()
        )
    }
}

/// How the loss combines the rows of its batch, which says how micro-batch gradients combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combine {
    /// A `mean` loss: the step's gradient is the average of the micro-batches'.
    Average,
    /// A `sum` loss: their sum.
    Sum,
}

impl Combine {
    /// From the op that computes the loss (the value the backward seed `full_like` with op_role 1
    /// is shaped after): `sum` sums, anything else (`mean`, the usual case) averages.
    pub fn of(ctx: &Context, prog: &Program) -> Combine {
        let ops: Vec<OpId> = prog.block_ops(prog.top_block()).collect();
        let loss = ops
            .iter()
            .find(|&&op| {
                ctx.str(prog.op_name(op)) == "pd_op.full_like" && op_role(ctx, prog, op) == Some(1)
            })
            .and_then(|&op| prog.operand(op, 0));
        let def = loss.and_then(|v| {
            ops.iter()
                .find(|&&op| prog.results(op).any(|r| r == v))
                .copied()
        });
        match def.map(|op| ctx.str(prog.op_name(op))) {
            Some("pd_op.sum") => Combine::Sum,
            _ => Combine::Average,
        }
    }

    pub fn words(self) -> &'static str {
        match self {
            Combine::Average => "averaged",
            Combine::Sum => "summed",
        }
    }
}

/// The original run micro-batch by micro-batch.
pub struct MicroReference {
    /// The gradients of the k micro-batches, combined as the loss combines rows.
    pub grads: IndexMap<String, Tensor>,
    /// Every rank after micro-steps 1..k−1 (forward and backward, no optimizer): where the
    /// optimize step of micro-step k starts from.
    pub before_last: Vec<Rank>,
    /// Each rank's scope after micro-step i, for i in 1..k−1 (what the merged program's
    /// persistables must be then: running statistics updated, nothing else changed).
    pub after_micro_step: Vec<Vec<Scope>>,
}

/// Runs the original micro-batch by micro-batch: `run(ranks, feeds of micro-batch i, stage)`
/// runs one pass of the original; the gradients each optimizer would consume come from a
/// copy of the ranks run with [`Stage::Full`] (the optimizers update the copy, which is
/// dropped), the state carried to the next micro-batch from a [`Stage::NoOptimize`] pass.
pub fn micro_reference(
    init: &[Rank],
    k: usize,
    combine: Combine,
    mut run: impl FnMut(&mut Vec<Rank>, usize, Stage) -> Result<(), Diagnostic>,
) -> Result<MicroReference, Diagnostic> {
    let mut carried: Vec<Rank> = init.to_vec();
    let mut sum: IndexMap<String, Vec<f64>> = IndexMap::new();
    let mut like: IndexMap<String, Tensor> = IndexMap::new();
    let mut after_micro_step = Vec::new();
    for i in 0..k {
        let mut probe = carried.clone();
        run(&mut probe, i, Stage::Full)?;
        for (name, g) in &probe[0].observed.optimizer_grads {
            let v = g.to_f64_vec();
            let acc = sum
                .entry(name.clone())
                .or_insert_with(|| vec![0.0; v.len()]);
            if acc.len() == v.len() {
                for (a, x) in acc.iter_mut().zip(&v) {
                    *a += x;
                }
            }
            like.entry(name.clone()).or_insert_with(|| g.clone());
        }
        if i + 1 < k {
            run(&mut carried, i, Stage::NoOptimize)?;
            after_micro_step.push(carried.iter().map(|r| r.scope.clone()).collect());
        }
    }
    let div = match combine {
        Combine::Average => k as f64,
        Combine::Sum => 1.0,
    };
    let mut grads = IndexMap::new();
    for (name, acc) in sum {
        let t = &like[&name];
        let vals: Vec<f32> = acc.iter().map(|a| (a / div) as f32).collect();
        let g = Tensor::from_f32_as(t.shape(), vals, t.dtype())
            .map_err(|e| e.into_diagnostic("the micro-batch reference: "))?;
        grads.insert(name, g);
    }
    Ok(MicroReference {
        grads,
        before_last: carried,
        after_micro_step,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::parse_module;

    fn program(bn_attrs: &str, softmax_axis: i64) -> String {
        format!(
            "{{\n    (%0) = \"pd_op.data\" () {{dtype:float32,name:\"x\",op_role:0,shape:[-1,3,4,4],stop_gradient:[true]}} : () -> tensor<-1x3x4x4xf32>\n    (%1) = \"pd_op.full\" () {{dtype:float32,op_role:0,place:Place(cpu),shape:[3],stop_gradient:[true],value:0}} : () -> tensor<3xf32>\n    (%2, %3, %4, %5, %6, %7) = \"pd_op.batch_norm_\" (%0, %1, %1, %1, %1) {{{bn_attrs}data_format:\"NCHW\",epsilon:1e-05,momentum:0.9,op_role:0,stop_gradient:[false]}} : (tensor<-1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<-1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<-1xu8>\n    (%8) = \"pd_op.softmax\" (%2) {{axis:{softmax_axis},op_role:0,stop_gradient:[false]}} : (tensor<-1x3x4x4xf32>) -> tensor<-1x3x4x4xf32>\n}}\n"
        )
    }

    fn names(text: &str) -> Vec<String> {
        let src = SourceFile::new("p.ir", text.to_string());
        let m = parse_module(&src).expect("parses");
        find(&m.ctx, &m.main, Some(&src))
            .into_iter()
            .map(|c| format!("{} at {}", c.name, c.at))
            .collect()
    }

    #[test]
    fn train_mode_batch_norm_couples_and_global_stats_do_not() {
        assert_eq!(
            names(&program(
                "is_test:false,trainable_statistics:false,use_global_stats:false,",
                -1
            )),
            vec!["pd_op.batch_norm_ at p.ir:4:5"]
        );
        assert!(names(&program(
            "is_test:false,trainable_statistics:false,use_global_stats:true,",
            -1
        ))
        .is_empty());
        assert!(names(&program(
            "is_test:true,trainable_statistics:false,use_global_stats:false,",
            -1
        ))
        .is_empty());
        assert_eq!(
            names(&program(
                "is_test:true,trainable_statistics:true,use_global_stats:false,",
                -1
            ))
            .len(),
            1
        );
    }

    #[test]
    fn an_axis_is_coupling_only_when_it_is_the_batch() {
        let global = "is_test:true,trainable_statistics:false,use_global_stats:false,";
        assert_eq!(
            names(&program(global, 0)),
            vec!["pd_op.softmax at p.ir:5:5"]
        );
        assert_eq!(names(&program(global, -4)).len(), 1);
        assert!(names(&program(global, 1)).is_empty());
    }

    /// A forward of `x` (a batch of rows, `-1x4`) through `ops` (Paddle's text, `%1` = `x * w`
    /// computed from a parameter, `%2` = the axis list `axis`), ending with the loss `%9`.
    fn reduction_program(axis: &str, ops: &str) -> String {
        format!(
            "{{\n    (%0) = \"pd_op.data\" () {{dtype:float32,name:\"x\",op_role:0,shape:[-1,4],stop_gradient:[true]}} : () -> tensor<-1x4xf32>\n    (%20) = \"builtin.parameter\" () {{op_role:0,parameter_name:\"w\",persistable:[true],stop_gradient:[false]}} : () -> tensor<4xf32>\n    (%1) = \"pd_op.multiply\" (%0, %20) {{op_role:0,stop_gradient:[false]}} : (tensor<-1x4xf32>, tensor<4xf32>) -> tensor<-1x4xf32>\n    (%2) = \"pd_op.full_int_array\" () {{dtype:int64,op_role:0,place:Place(cpu),stop_gradient:[true],value:{axis}}} : () -> tensor<1xi64>\n{ops}    (%21) = \"pd_op.full\" () {{dtype:float32,op_role:1,place:Place(cpu),shape:[1],stop_gradient:[true],value:1}} : () -> tensor<1xf32>\n    (%22) = \"pd_op.full_like\" (%9, %21) {{dtype:float32,op_role:1,place:Place(undefined:0),stop_gradient:[false]}} : (tensor<f32>, tensor<1xf32>) -> tensor<f32>\n}}\n"
        )
    }

    fn op(text: &str) -> String {
        format!("    {text}\n")
    }

    /// The loss: the mean of `%v` (a `-1x4` batch) over every axis.
    fn mean_loss(v: &str) -> String {
        op("(%8) = \"pd_op.full_int_array\" () {dtype:int64,op_role:0,place:Place(cpu),stop_gradient:[true],value:[]} : () -> tensor<0xi64>")
            + &op(&format!("(%9) = \"pd_op.mean\" ({v}, %8) {{keepdim:false,op_role:0,stop_gradient:[false]}} : (tensor<-1x4xf32>, tensor<0xi64>) -> tensor<f32>"))
    }

    /// `h - red(h, axis)` (keepdim), then the mean loss.
    fn centered(red: &str, axis: &str, kept: &str) -> String {
        reduction_program(
            axis,
            &(op(&format!("(%3) = \"pd_op.{red}\" (%1, %2) {{keepdim:true,op_role:0,stop_gradient:[false]}} : (tensor<-1x4xf32>, tensor<1xi64>) -> tensor<{kept}xf32>"))
                + &op(&format!("(%4) = \"pd_op.subtract\" (%1, %3) {{op_role:0,stop_gradient:[false]}} : (tensor<-1x4xf32>, tensor<{kept}xf32>) -> tensor<-1x4xf32>"))
                + &mean_loss("%4")),
        )
    }

    #[test]
    fn a_reduction_over_the_batch_couples_when_it_meets_the_rows_again() {
        assert_eq!(
            names(&centered("mean", "[0]", "1x4")),
            vec!["pd_op.mean at p.ir:6:5"]
        );
        assert_eq!(
            names(&centered("sum", "[-2]", "1x4")),
            vec!["pd_op.sum at p.ir:6:5"]
        );
        // Over the features: each row is centered by its own values.
        assert!(names(&centered("mean", "[1]", "-1x1")).is_empty());
        assert!(names(&centered("mean", "[-1]", "-1x1")).is_empty());
        // The loss's own mean over the batch reduces to the loss and meets nothing.
        assert!(names(&reduction_program("[0]", &mean_loss("%1"))).is_empty());
    }

    #[test]
    fn a_nonlinear_reduction_over_the_batch_couples_wherever_it_goes() {
        let max_loss = |axis: &str, kept: &str| {
            reduction_program(
                axis,
                &(op(&format!("(%3) = \"pd_op.max\" (%1, %2) {{keepdim:true,op_role:0,stop_gradient:[false]}} : (tensor<-1x4xf32>, tensor<1xi64>) -> tensor<{kept}xf32>"))
                    + &op("(%8) = \"pd_op.full_int_array\" () {dtype:int64,op_role:0,place:Place(cpu),stop_gradient:[true],value:[]} : () -> tensor<0xi64>")
                    + &op(&format!("(%9) = \"pd_op.sum\" (%3, %8) {{keepdim:false,op_role:0,stop_gradient:[false]}} : (tensor<{kept}xf32>, tensor<0xi64>) -> tensor<f32>"))),
            )
        };
        assert_eq!(
            names(&max_loss("[0]", "1x4")),
            vec!["pd_op.max at p.ir:6:5"]
        );
        assert!(names(&max_loss("[1]", "-1x1")).is_empty());
    }

    /// A token mean, sum(l·mask) / sum(mask): the count is a reduction of data alone (it changes
    /// no row's gradient), and the numerator's sum over the batch is the loss's.
    #[test]
    fn a_token_mean_is_not_coupling() {
        let text = reduction_program(
            "[]",
            &(op("(%5) = \"pd_op.data\" () {dtype:float32,name:\"mask\",op_role:0,shape:[-1,4],stop_gradient:[true]} : () -> tensor<-1x4xf32>")
                + &op("(%6) = \"pd_op.multiply\" (%1, %5) {op_role:0,stop_gradient:[false]} : (tensor<-1x4xf32>, tensor<-1x4xf32>) -> tensor<-1x4xf32>")
                + &op("(%7) = \"pd_op.sum\" (%6, %2) {keepdim:false,op_role:0,stop_gradient:[false]} : (tensor<-1x4xf32>, tensor<1xi64>) -> tensor<f32>")
                + &op("(%8) = \"pd_op.sum\" (%5, %2) {keepdim:false,op_role:0,stop_gradient:[true]} : (tensor<-1x4xf32>, tensor<1xi64>) -> tensor<f32>")
                + &op("(%9) = \"pd_op.divide\" (%7, %8) {op_role:0,stop_gradient:[false]} : (tensor<f32>, tensor<f32>) -> tensor<f32>")),
        );
        assert!(names(&text).is_empty());
    }

    /// `cumsum`'s axis is an operand in Paddle's programs.
    #[test]
    fn cumsum_along_the_batch_couples() {
        let cumsum = |axis: &str| {
            reduction_program(
                "[]",
                &(op(&format!("(%3) = \"pd_op.full\" () {{dtype:int32,op_role:0,place:Place(cpu),shape:[1],stop_gradient:[true],value:{axis}}} : () -> tensor<1xi32>"))
                    + &op("(%4) = \"pd_op.cumsum\" (%1, %3) {exclusive:false,flatten:false,op_role:0,reverse:false,stop_gradient:[false]} : (tensor<-1x4xf32>, tensor<1xi32>) -> tensor<-1x4xf32>")
                    + &mean_loss("%4")),
            )
        };
        assert_eq!(names(&cumsum("0")), vec!["pd_op.cumsum at p.ir:7:5"]);
        assert!(names(&cumsum("1")).is_empty());
    }
}
