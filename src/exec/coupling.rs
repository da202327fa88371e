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
//! count (op_role 0, or none): a backward op of a coupled forward is coupled because of it. A
//! reduction over the batch that is linear (the loss's `mean`) does not couple in this sense:
//! its gradient splits over the rows. Not detected: a hand-written normalization out of linear
//! reductions over the batch followed by a nonlinear op.
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
use crate::ir::{Attrs, Context, OpId, Program, Type};

/// When an op of [`COUPLING`] mixes the rows of its batch.
#[derive(Clone, Copy, Debug)]
pub enum When {
    /// It normalizes with statistics of the batch: unless it uses its running statistics
    /// (`use_global_stats`, or `is_test` without `trainable_statistics`).
    BatchStatistics,
    /// It normalizes or accumulates along the integer attribute's axis, and that axis is
    /// dimension 0 (the batch) of its first operand.
    AlongBatchAxis(&'static str),
    /// A matrix product one of whose matrices is a batch of rows (rank 2, dimension 0 the
    /// dynamic batch) used other than row by row: `x` transposed (`transpose_x`), or `y` (its
    /// rows are the product's columns, or are summed over), as an in-batch contrastive loss's
    /// `a @ bᵀ` does. A rank-3 or higher operand's dimension 0 is a batch of matrices, which a
    /// product keeps apart.
    MatrixOfBatchRows,
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
        when: When::AlongBatchAxis("axis"),
        why: "normalizes along the batch dimension",
    },
    CouplingRule {
        op: "pd_op.log_softmax",
        when: When::AlongBatchAxis("axis"),
        why: "normalizes along the batch dimension",
    },
    CouplingRule {
        op: "pd_op.cumsum",
        when: When::AlongBatchAxis("axis"),
        why: "accumulates along the batch dimension",
    },
    CouplingRule {
        op: "pd_op.matmul",
        when: When::MatrixOfBatchRows,
        why: "multiplies across the rows of its batch",
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

fn flag(a: Attrs<'_>, key: &str) -> bool {
    a.get(key).and_then(|v| v.as_bool()).unwrap_or(false)
}

/// Whether `t` is a matrix whose rows are the batch: rank 2, dimension 0 dynamic.
fn batch_rows(t: Option<&Type>) -> bool {
    match t {
        Some(Type::Tensor { shape, .. } | Type::Dist { shape, .. }) => {
            shape.len() == 2 && shape[0] < 0
        }
        _ => false,
    }
}

fn couples(rule: &CouplingRule, a: Attrs<'_>, operands: &[Option<&Type>]) -> Option<String> {
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
        When::AlongBatchAxis(key) => {
            let rank = match first_operand? {
                Type::Tensor { shape, .. } | Type::Dist { shape, .. } => shape.len() as i64,
                _ => return None,
            };
            let axis = a.get(key).and_then(|v| v.as_i64()).unwrap_or(-1);
            (rank >= 2 && (axis == 0 || axis == -rank))
                .then(|| format!("{} ({key} {axis} of a rank-{rank} operand)", rule.why))
        }
        When::MatrixOfBatchRows => {
            let x = batch_rows(first_operand) && flag(a, "transpose_x");
            let y = batch_rows(operands.get(1).copied().flatten());
            let which = match (x, y) {
                (true, _) => "x transposed",
                (false, true) => "y",
                (false, false) => return None,
            };
            Some(format!(
                "{} ({which} is a batch of rows: each result row depends on every row)",
                rule.why
            ))
        }
    }
}

/// The forward ops of `prog` that couple the rows of the batch, in program order.
pub fn find(ctx: &Context, prog: &Program, src: Option<&SourceFile>) -> Vec<Coupled> {
    let mut out = Vec::new();
    for (i, op) in prog.block_ops(prog.top_block()).enumerate() {
        if op_role(ctx, prog, op).is_some_and(|r| r != 0) {
            continue;
        }
        let name = ctx.str(prog.op_name(op));
        let Some(rule) = COUPLING.iter().find(|r| r.op == name) else {
            continue;
        };
        let operands: Vec<Option<&Type>> = prog
            .operands(op)
            .map(|v| v.map(|v| ctx.ty(prog.value_type(v))))
            .collect();
        let Some(why) = couples(rule, ctx.attrs(prog.op_attrs(op)), &operands) else {
            continue;
        };
        let at = match (src, prog.position(op)) {
            (Some(s), Some(off)) => {
                let (l, c) = s.line_col(off);
                format!("{}:{l}:{c}", s.name)
            }
            _ => format!("op #{i}"),
        };
        out.push(Coupled {
            name: name.to_string(),
            at,
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
            writeln!(
                f,
                "batch-coupled: {}: {} {}: a row's output depends on the other rows of its batch, so {k} micro-batches of {b} rows are not one step on {} rows",
                c.at,
                c.name,
                c.why,
                k * b
            )?;
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
}
