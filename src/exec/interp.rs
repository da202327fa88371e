//! The interpreter: runs one pass of a program over simulated data-parallel ranks.
//!
//! A pass walks the top block in program order. Each rank has its own [`Scope`] (a replica) and
//! its own value slots; the ranks advance in lock step, one op at a time, so a collective sees
//! every rank's operand and combines them in rank order ([`super::kernels::collective`]).
//!
//! Values live in slots: a local tensor, a reference to a scope entry (parameters, persistable
//! `pd_op.data`, keyword arguments), a `builtin.combine` list, or an alias of another value. An
//! in-place op (the dialect table says which result aliases which operand) writes through the
//! alias chain: the operand's storage is replaced, so every value that names the same buffer —
//! including a scope entry — sees the update, as in Paddle.
//!
//! Which ops run is decided per pass by a [`Stage`]; the rule for ops without `op_role` is in
//! [`Stage`]'s docs, and holds inside regions too. Region ops run their regions in place:
//! `pd_op.if` runs the ops of its true or its false region (every rank must agree on the
//! condition: the ranks run in lock step), and its results are what that region's `cf.yield`
//! yields; `pd_op.while` binds its inputs to the body's arguments and runs the body while the
//! condition its `cf.yield` yields first holds (at most [`MAX_WHILE_ITERATIONS`] times). Values
//! defined outside a region are read inside it as in Paddle; persistables written in place
//! inside a region are written in the scope.

use indexmap::IndexMap;

use crate::diag::{Diagnostic, SourceFile};
use crate::dialect::protocol::scope_writer_name_attr;
use crate::dialect::{Dialect, Effect};
use crate::exec::dtype::DType;
use crate::exec::error::{KResult, KernelError};
use crate::exec::kernels::{cast::cast, collective};
use crate::exec::memory;
use crate::exec::ops::{exec_of, ContextOp, Exec, Input, OpCall, Out};
use crate::exec::rng::Rng;
use crate::exec::scope::Scope;
use crate::exec::tensor::{numel, Data, Tensor};
use crate::ir::{Attr, Attrs, Context, OpId, Program, ValueId};
use crate::kbail;

/// The most iterations one `pd_op.while` runs before the run stops with an error (a loop whose
/// condition never turns false would otherwise hang `irw run` and `irw check`).
const MAX_WHILE_ITERATIONS: usize = 1 << 20;

/// Which ops of a program run in a pass.
///
/// Ops with `op_role` 0 (forward) and 1 (backward) run in every pass; ops with `op_role` 2
/// (optimize) run only in [`Stage::Full`] passes — the last micro-step of a gradient-merge step,
/// or an ordinary full step. **An op without `op_role` runs in every pass, unless one of its
/// operands comes from an op skipped in this pass: then it is skipped as well** (it belongs to the
/// optimize stage by data dependence). This makes role-less programs run as Paddle's executor
/// would run them without a gradient-merge schedule, which is exactly what exposes a rewrite that
/// forgot to set roles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Every op (a full training step, or the last micro-step).
    Full,
    /// Forward and backward only (micro-steps 1..k−1 of a gradient-merge step).
    NoOptimize,
}

/// What a pass observed, for reports and checks.
#[derive(Clone, Debug, Default)]
pub struct Observed {
    /// The gradient each optimizer op consumed, by parameter name, at the moment it ran.
    pub optimizer_grads: IndexMap<String, Tensor>,
    /// The loss (the value the backward seed `full_like` is shaped after), if found and computed.
    pub loss: Option<f32>,
    /// The first op of the pass whose result holds a NaN or an infinity, when the pass was asked
    /// to look ([`Interp::track_non_finite`]).
    pub first_non_finite: Option<NonFinite>,
    /// The float values the backward stage hands the optimize stage, as backward computed them,
    /// when the pass was asked to look ([`Interp::observe_backward_grads`]).
    pub backward_grads: IndexMap<ValueId, Tensor>,
}

/// Where a pass first produced a value that is not finite.
#[derive(Clone, Debug)]
pub struct NonFinite {
    /// `NaN` or `inf`.
    pub what: &'static str,
    /// The op's name and its index in the program.
    pub op: String,
    pub index: usize,
    /// The op's line, when its source is known.
    pub location: Option<crate::diag::Location>,
}

/// `NaN`, `inf` or nothing: whether a tensor holds a value that is not a finite number.
pub fn non_finite(t: &Tensor) -> Option<&'static str> {
    t.data().non_finite()
}

#[derive(Clone, Debug)]
enum Slot {
    Empty,
    Skipped,
    Local(Tensor),
    Persist(String),
    List(Vec<ValueId>),
    /// A vector of tensors a kernel made (`split`'s `out`, `stack_grad`'s `x_grad`).
    Tensors(Vec<Tensor>),
    Alias(ValueId),
}

/// One data-parallel replica: its scope, value slots and observations.
#[derive(Clone, Debug, Default)]
pub struct Rank {
    pub scope: Scope,
    slots: Vec<Slot>,
    pub observed: Observed,
}

impl Rank {
    pub fn new(scope: Scope) -> Rank {
        Rank {
            scope,
            slots: Vec::new(),
            observed: Observed::default(),
        }
    }

    fn root(&self, mut v: ValueId) -> ValueId {
        while let Some(Slot::Alias(w)) = self.slots.get(v.index()) {
            v = *w;
        }
        v
    }

    fn tensor(&self, v: ValueId) -> KResult<&Tensor> {
        let r = self.root(v);
        match &self.slots[r.index()] {
            Slot::Local(t) => Ok(t),
            Slot::Persist(name) => match self.scope.get(name) {
                Some(t) => Ok(t),
                None => kbail!("persistable `{}` is not in the scope", name),
            },
            Slot::List(_) | Slot::Tensors(_) => {
                kbail!("value %{} is a vector, expected a tensor", v.0)
            }
            Slot::Skipped => kbail!(
                "value %{} comes from an op that did not run in this micro-step",
                v.0
            ),
            Slot::Empty | Slot::Alias(_) => {
                kbail!("value %{} has no value (an absent result?)", v.0)
            }
        }
    }

    fn input(&self, v: Option<ValueId>) -> KResult<Input<'_>> {
        let Some(v) = v else { return Ok(Input::Absent) };
        let r = self.root(v);
        match &self.slots[r.index()] {
            Slot::List(items) => Ok(Input::List(
                items
                    .iter()
                    .map(|&i| self.tensor(i))
                    .collect::<KResult<_>>()?,
            )),
            Slot::Tensors(ts) => Ok(Input::List(ts.iter().collect())),
            _ => Ok(Input::Tensor(self.tensor(v)?)),
        }
    }

    /// The scope name a value is bound to, if it is (an alias of) a persistable.
    fn persist_name(&self, v: ValueId) -> Option<&str> {
        match &self.slots[self.root(v).index()] {
            Slot::Persist(n) => Some(n),
            _ => None,
        }
    }

    /// Writes `t` into the storage `v` names (in-place semantics), keeping the storage's dtype.
    fn write_through(&mut self, v: ValueId, t: Tensor) -> KResult<()> {
        let r = self.root(v);
        let old_dtype = self.tensor(r)?.dtype();
        let t = if t.dtype() == old_dtype {
            t
        } else {
            cast(&t, old_dtype)
        };
        match &mut self.slots[r.index()] {
            Slot::Local(old) => *old = t,
            Slot::Persist(name) => {
                let name = name.clone();
                self.scope.set(&name, t);
            }
            _ => kbail!("value %{} cannot be written in place", v.0),
        }
        Ok(())
    }

    /// Writes a vector result in place into the vector `v` names: each tensor into its element
    /// of a `builtin.combine` (a `check_finite_and_unscale_` writes the gradients it was given),
    /// or over a vector a kernel made.
    fn write_through_list(&mut self, v: ValueId, ts: Vec<Tensor>) -> KResult<()> {
        let r = self.root(v);
        let len = match &self.slots[r.index()] {
            Slot::List(items) => items.len(),
            Slot::Tensors(old) => old.len(),
            _ => kbail!(
                "value %{} is not a vector: a vector result cannot go into it in place",
                v.0
            ),
        };
        if len != ts.len() {
            kbail!(
                "writes {} tensors in place into a vector of {}",
                ts.len(),
                len
            );
        }
        match &mut self.slots[r.index()] {
            Slot::List(items) => {
                for (item, t) in items.clone().into_iter().zip(ts) {
                    self.write_through(item, t)?;
                }
            }
            slot => *slot = Slot::Tensors(ts),
        }
        Ok(())
    }
}

/// Where a module's programs were read from, so that an error at an op shows the op's line
/// (ops keep their byte offset in the file they were parsed from; ops a rule built have none).
#[derive(Clone, Copy, Debug, Default)]
pub struct Sources<'a> {
    pub main: Option<&'a SourceFile>,
    /// The startup program's file: the main file when both were in it.
    pub startup: Option<&'a SourceFile>,
}

/// Runs passes of one program.
pub struct Interp<'p> {
    ctx: &'p Context,
    prog: &'p Program,
    /// The file `prog` was parsed from, for diagnostics at an op.
    src: Option<&'p SourceFile>,
    /// Name used in diagnostics ("main", "startup", a file name).
    label: String,
    ops: Vec<OpId>,
    loss_value: Option<ValueId>,
    /// The backward seeds, `full_like(loss, 1)` with op_role 1 of a loss of one element: one
    /// per loss a backward pass starts from (two for a GAN's generator and discriminator).
    seed_ops: Vec<OpId>,
    /// What the seed's value is multiplied by ([`Interp::scale_loss_seed`]).
    seed_scale: Option<f64>,
    rng: Rng,
    /// Gradients to give optimizer ops instead of the ones the program computed, by parameter
    /// name (see [`Interp::override_optimizer_grads`]).
    grad_override: IndexMap<String, Tensor>,
    /// Record the first op whose result is not finite ([`Observed::first_non_finite`]).
    track_non_finite: bool,
    /// The values backward hands the optimize stage: results of top-block ops with op_role 1
    /// that top-block ops with op_role 2 read ([`Interp::observe_backward_grads`]).
    handed_over: std::collections::HashSet<ValueId>,
    /// Record [`Observed::backward_grads`].
    observe_backward: bool,
    /// Per rank, values to hand the optimize stage instead of what backward computed
    /// ([`Interp::override_backward_grads`]).
    backward_override: Vec<IndexMap<ValueId, Tensor>>,
    /// A pass stops with an error at the first op boundary past this instant (`--timeout`).
    deadline: Option<std::time::Instant>,
}

fn attr_str(d: Attrs<'_>, key: &str) -> Option<String> {
    d.get(key).and_then(|a| a.as_str()).map(|s| s.into_owned())
}

fn first_bool(d: Attrs<'_>, key: &str) -> bool {
    match d.get(key) {
        Some(Attr::Array(items)) => items.first().and_then(|a| a.as_bool()).unwrap_or(false),
        Some(a) => a.as_bool().unwrap_or(false),
        None => false,
    }
}

/// An optimizer op's parameter (its first operand) and gradient (operand `gi`), when present.
fn param_and_grad(operands: &[Option<ValueId>], gi: usize) -> Option<(ValueId, ValueId)> {
    Some(((*operands.first()?)?, (*operands.get(gi)?)?))
}

/// `t` in `like`'s dtype, or `None` when the shapes differ.
fn converted_like(t: &Tensor, like: &Tensor) -> KResult<Option<Tensor>> {
    if t.shape() != like.shape() {
        return Ok(None);
    }
    if t.dtype() == like.dtype() || !t.dtype().is_float() || !like.dtype().is_float() {
        return Ok((t.dtype() == like.dtype()).then(|| t.clone()));
    }
    Tensor::from_f32_as(t.shape(), t.to_f32().into_owned(), like.dtype()).map(Some)
}

/// `op_role` of an op (`None` when absent or -1).
pub fn op_role(ctx: &Context, prog: &Program, op: OpId) -> Option<i64> {
    ctx.attrs(prog.op_attrs(op))
        .get(crate::dialect::ROLE_ATTR)
        .and_then(|a| a.as_i64())
        .filter(|&r| r >= 0)
}

impl<'p> Interp<'p> {
    /// Prepares `prog`; `seed` drives `pd_op.uniform`/`gaussian`.
    pub fn new(
        ctx: &'p Context,
        prog: &'p Program,
        label: &str,
        seed: u64,
    ) -> Result<Interp<'p>, Diagnostic> {
        Interp::with_source(ctx, prog, None, label, seed)
    }

    /// [`Interp::new`] for a program read from `src`: errors at an op show its line.
    pub fn with_source(
        ctx: &'p Context,
        prog: &'p Program,
        src: Option<&'p SourceFile>,
        label: &str,
        seed: u64,
    ) -> Result<Interp<'p>, Diagnostic> {
        let top = prog.top_block();
        let ops: Vec<OpId> = prog.block_ops(top).collect();
        for (i, op) in prog.walk().into_iter().enumerate() {
            let name = ctx.str(prog.op_name(op));
            if !prog.regions(op).is_empty() && name != "pd_op.if" && name != "pd_op.while" {
                return Err(Diagnostic::at_if_known(
                    src,
                    prog.position(op),
                    format!(
                        "{label}: op #{i} `{name}` holds regions; the executor runs only those of `pd_op.if` and `pd_op.while`"
                    ),
                ));
            }
        }
        // The loss is what the backward seed (`full_like(loss, 1)` with op_role 1) is shaped after.
        let seed_ops: Vec<OpId> = ops
            .iter()
            .copied()
            .filter(|&op| {
                ctx.str(prog.op_name(op)) == "pd_op.full_like"
                    && op_role(ctx, prog, op) == Some(1)
                    && prog.operand(op, 0).is_some_and(|l| {
                        ctx.ty(prog.value_type(l))
                            .tensor()
                            .is_some_and(|(shape, _)| shape.iter().product::<i64>() == 1)
                    })
            })
            .collect();
        let loss_value = seed_ops.first().and_then(|&op| prog.operand(op, 0));
        let handed_over = ops
            .iter()
            .filter(|&&op| op_role(ctx, prog, op) == Some(2))
            .flat_map(|&op| prog.operands(op).flatten())
            .filter(|&v| {
                prog.defining_op(v).is_some_and(|d| {
                    prog.op_block(d) == Some(top) && op_role(ctx, prog, d) == Some(1)
                })
            })
            .collect();
        Ok(Interp {
            ctx,
            prog,
            src,
            label: label.to_string(),
            ops,
            loss_value,
            seed_ops,
            seed_scale: None,
            rng: Rng::new(seed),
            grad_override: IndexMap::new(),
            track_non_finite: false,
            handed_over,
            observe_backward: false,
            backward_override: Vec::new(),
            deadline: None,
        })
    }

    /// Makes each optimizer op whose parameter is named in `grads` consume that gradient instead
    /// of the one the program computed (converted to the computed one's dtype; ignored where the
    /// shapes differ). `irw check` uses it to apply the original optimizer stage to the rewritten
    /// program's gradient, which separates the optimizer's conditioning (Adam's first step is
    /// about lr·sign(g), so a rounding difference in a near-zero gradient moves a parameter by lr)
    /// from the rewrite's correctness.
    pub fn override_optimizer_grads(&mut self, grads: IndexMap<String, Tensor>) {
        self.grad_override = grads;
    }

    /// Multiplies the backward seeds (`full_like(loss, 1)`, one per loss) by `factor`, so that a
    /// pass computes the gradients of `factor` × each loss through every op after it, the
    /// optimize stage's included. Returns whether the program has such a seed. `irw check` uses it for a merge
    /// without averaging (avg=false) of a mean loss: its merged gradient is that of the loss
    /// summed over the k micro-batches, k × the full-batch loss, and an optimize stage that is
    /// not linear in the gradients (a global-norm clip: clip(k·g) ≠ k·clip(g)) must see k·g.
    pub fn scale_loss_seed(&mut self, factor: f64) -> bool {
        self.seed_scale = Some(factor);
        !self.seed_ops.is_empty()
    }

    /// Makes every pass record the float values its backward stage hands the optimize stage
    /// ([`Observed::backward_grads`]): the gradients before the optimize stage transforms them
    /// (a global-norm clip, weight decay), which is what a gradient merge accumulates. `irw
    /// check` reads how the loss reduces the batch from them: the gradients an optimizer
    /// consumes after a clip are not a mean or a sum of anything.
    pub fn observe_backward_grads(&mut self) {
        self.observe_backward = true;
    }

    /// Makes the optimize stage of every pass read, on rank r, `values[r]` instead of what
    /// backward computed (converted to the computed value's dtype; ignored where the shapes
    /// differ). `irw check` uses it to apply the original's optimize stage to gradients
    /// combined from its micro-batches: what a correct merge consumes, whatever that stage does
    /// with them.
    pub fn override_backward_grads(&mut self, values: Vec<IndexMap<ValueId, Tensor>>) {
        self.backward_override = values;
    }

    /// Stops every pass with an error at the first op boundary after `deadline` (`--timeout`).
    /// A kernel is never interrupted: the bound is one op's time past the deadline.
    pub fn set_deadline(&mut self, deadline: Option<std::time::Instant>) {
        self.deadline = deadline;
    }

    /// Makes every pass look at each op's results and record, per rank, the first op that made
    /// a NaN or an infinity (`irw check` asks, to say where a non-finite step comes from).
    pub fn track_non_finite(&mut self) {
        self.track_non_finite = true;
    }

    /// Records op `i` as the first to produce a non-finite value on a rank, if it is.
    fn note_non_finite(&self, i: usize, op: OpId, ranks: &mut [Rank]) {
        for rank in ranks.iter_mut() {
            if rank.observed.first_non_finite.is_some() {
                continue;
            }
            let what = self
                .prog
                .results(op)
                .find_map(|v| rank.tensor(v).ok().and_then(non_finite));
            if let Some(what) = what {
                let name = self.ctx.str(self.prog.op_name(op)).to_string();
                let location =
                    Diagnostic::at_if_known(self.src, self.prog.position(op), String::new())
                        .location;
                rank.observed.first_non_finite = Some(NonFinite {
                    what,
                    op: name,
                    index: i,
                    location: location.map(|l| *l),
                });
            }
        }
    }

    /// The gradient to give the optimizer op with `operands` (its parameter first, its gradient
    /// at `gi`) instead of the computed one, if [`Interp::override_optimizer_grads`] names its
    /// parameter and the shapes agree.
    fn overridden_grad(
        &self,
        rank: &Rank,
        operands: &[Option<ValueId>],
        gi: usize,
    ) -> KResult<Option<Tensor>> {
        let Some((p, g)) = param_and_grad(operands, gi) else {
            return Ok(None);
        };
        match rank.persist_name(p).and_then(|n| self.grad_override.get(n)) {
            Some(t) => converted_like(t, rank.tensor(g)?),
            None => Ok(None),
        }
    }

    /// Whether the program has collective ops (then checks run 2 ranks by default).
    /// The number of processes of an auto-parallel program's mesh (the most `process_ids` any
    /// `pd_dist` value lists); `None` for a dense program.
    pub fn mesh_processes(ctx: &Context, prog: &Program) -> Option<usize> {
        prog.walk()
            .into_iter()
            .flat_map(|op| prog.results(op).chain(prog.operands(op).flatten()))
            .filter_map(|v| ctx.ty(prog.value_type(v)).dist())
            .map(|d| d.process_ids.len())
            .max()
    }

    /// Whether the program schedules its own optimizer step: no op of its top block has
    /// `op_role` 2, but ops inside a region do (the optimize stage under a `pd_op.if`, as
    /// `grad_merge.rw --set schedule=cond` makes it). Such a program runs whole at every
    /// micro-step ([`Stage::Full`]); the region decides when the optimizer steps.
    pub fn schedules_itself(ctx: &Context, prog: &Program) -> bool {
        let top = prog.top_block();
        let optimize = |op: OpId| op_role(ctx, prog, op) == Some(2);
        !prog.block_ops(top).any(optimize)
            && prog
                .walk()
                .into_iter()
                .any(|op| prog.op_block(op) != Some(top) && optimize(op))
    }

    pub fn has_collectives(ctx: &Context, prog: &Program) -> bool {
        prog.walk()
            .into_iter()
            .any(|op| Dialect::get().effect(ctx.str(prog.op_name(op))) == Effect::Collective)
    }

    /// A kernel's error as a diagnostic at op `i` (at its line, when the source is known).
    fn err(&self, i: usize, op: OpId, e: KernelError) -> Diagnostic {
        let msg = format!(
            "{}: op #{} `{}`: {}",
            self.label,
            i,
            self.ctx.str(self.prog.op_name(op)),
            e.message
        );
        let d = Diagnostic::at_if_known(self.src, self.prog.position(op), msg);
        match e.hint {
            Some(h) => d.with_hint(h),
            None => d,
        }
    }

    /// Runs one pass on every rank. `feeds[r]` holds rank r's inputs by `pd_op.data` name.
    pub fn run(
        &mut self,
        ranks: &mut [Rank],
        feeds: &[IndexMap<String, Tensor>],
        stage: Stage,
    ) -> Result<(), Diagnostic> {
        let nvals = self.prog.value_capacity();
        for r in ranks.iter_mut() {
            r.slots.clear();
            r.slots.resize(nvals, Slot::Empty);
            r.observed = Observed::default();
            for kw in self.prog.block_kwargs(self.prog.top_block()) {
                let name = self.ctx.str(kw.name).to_string();
                if !r.scope.contains(&name) {
                    // Keyword arguments carry no recorded position; their line is found by name.
                    let offset = self
                        .src
                        .and_then(|src| src.text.find(&format!("%kwarg_{name} ")));
                    return Err(Diagnostic::at_if_known(
                        self.src,
                        offset,
                        format!(
                            "{}: keyword argument `{}` names a persistable that nothing initialized",
                            self.label, name
                        ),
                    )
                    .with_hint("the startup program should create it (builtin.shadow_output), or the feed file should hold it"));
                }
                r.slots[kw.value.index()] = Slot::Persist(name);
            }
        }
        let ops = std::mem::take(&mut self.ops);
        let result = (|| {
            for (i, &op) in ops.iter().enumerate() {
                if self
                    .deadline
                    .is_some_and(|d| std::time::Instant::now() >= d)
                {
                    return Err(Diagnostic::at_if_known(
                        self.src,
                        self.prog.position(op),
                        format!(
                            "{}: stopped by the time limit (--timeout) before op #{i} `{}`",
                            self.label,
                            self.ctx.str(self.prog.op_name(op))
                        ),
                    )
                    .with_hint("raise --timeout, or run fewer steps (--steps, --k-steps)"));
                }
                self.step(op, ranks, feeds, stage)
                    .and_then(|()| memory::check_live())
                    .map_err(|e| self.err(i, op, e))?;
                if self.track_non_finite {
                    self.note_non_finite(i, op, ranks);
                }
            }
            Ok(())
        })();
        self.ops = ops;
        result
    }

    /// Runs the ops of `block` in order (a region's block); an error names the op inside.
    fn run_block(
        &mut self,
        block: crate::ir::BlockId,
        ranks: &mut [Rank],
        feeds: &[IndexMap<String, Tensor>],
        stage: Stage,
    ) -> KResult<Vec<Option<ValueId>>> {
        let ops: Vec<OpId> = self.prog.block_ops(block).collect();
        let mut yielded = Vec::new();
        for op in ops {
            let name = self.ctx.str(self.prog.op_name(op));
            if name == "cf.yield" {
                yielded = self.prog.operands(op).collect();
            }
            self.step(op, ranks, feeds, stage)
                .and_then(|()| memory::check_live())
                .map_err(|e| KernelError {
                    message: format!("in its region, op `{name}`: {}", e.message),
                    hint: e.hint,
                })?;
        }
        Ok(yielded)
    }

    /// The one value of a bool condition tensor, the same on every rank.
    fn condition(&self, ranks: &[Rank], c: Option<ValueId>) -> KResult<bool> {
        let Some(c) = c else {
            kbail!("has no condition operand")
        };
        let mut seen = None;
        for rank in ranks {
            let t = rank.tensor(c)?;
            if t.numel() != 1 {
                kbail!("the condition has {} elements; it must have one", t.numel());
            }
            let v = t.scalar_f32()? != 0.0;
            if seen.is_some_and(|s| s != v) {
                kbail!("the ranks disagree on the condition; the executor runs ranks in lock step");
            }
            seen = Some(v);
        }
        Ok(seen.unwrap_or(false))
    }

    /// Binds `results` to the values a region yielded.
    fn bind_yielded(
        ranks: &mut [Rank],
        results: &[ValueId],
        yielded: &[Option<ValueId>],
    ) -> KResult<()> {
        if yielded.len() != results.len() {
            kbail!(
                "its region yields {} value(s) for {} result(s)",
                yielded.len(),
                results.len()
            );
        }
        for rank in ranks.iter_mut() {
            for (&res, y) in results.iter().zip(yielded) {
                rank.slots[res.index()] = match y {
                    Some(y) => Slot::Alias(*y),
                    None => Slot::Empty,
                };
            }
        }
        Ok(())
    }

    fn run_if(
        &mut self,
        op: OpId,
        operands: &[Option<ValueId>],
        results: &[ValueId],
        ranks: &mut [Rank],
        feeds: &[IndexMap<String, Tensor>],
        stage: Stage,
    ) -> KResult<()> {
        let cond = self.condition(ranks, operands.first().copied().flatten())?;
        let regions = self.prog.regions(op);
        let Some(&region) = regions.get(usize::from(!cond)) else {
            kbail!(
                "has {} region(s); an if needs a true and a false region",
                regions.len()
            )
        };
        let Some(&block) = self.prog.region_blocks(region).first() else {
            return Self::bind_yielded(ranks, results, &[]);
        };
        let yielded = self.run_block(block, ranks, feeds, stage)?;
        Self::bind_yielded(ranks, results, &yielded)
    }

    fn run_while(
        &mut self,
        op: OpId,
        operands: &[Option<ValueId>],
        results: &[ValueId],
        ranks: &mut [Rank],
        feeds: &[IndexMap<String, Tensor>],
        stage: Stage,
    ) -> KResult<()> {
        let Some(&region) = self.prog.regions(op).first() else {
            kbail!("has no body region")
        };
        let Some(&body) = self.prog.region_blocks(region).first() else {
            kbail!("has no body block")
        };
        let args: Vec<ValueId> = self.prog.block_args(body).iter().map(|a| a.value).collect();
        let inputs = &operands[1.min(operands.len())..];
        if inputs.len() != args.len() || results.len() != args.len() {
            kbail!(
                "has {} input(s), {} body argument(s) and {} result(s); they must agree",
                inputs.len(),
                args.len(),
                results.len()
            );
        }
        let mut cond = self.condition(ranks, operands.first().copied().flatten())?;
        // The loop variables, copied at each iteration's end: the body's values are overwritten
        // by the next iteration.
        for rank in ranks.iter_mut() {
            for (&a, i) in args.iter().zip(inputs) {
                let Some(i) = i else {
                    kbail!("an input of the loop is absent")
                };
                rank.slots[a.index()] = Slot::Local(rank.tensor(*i)?.clone());
            }
        }
        let mut n = 0;
        while cond {
            n += 1;
            if n > MAX_WHILE_ITERATIONS {
                kbail!(
                    "ran {} iterations without its condition turning false",
                    MAX_WHILE_ITERATIONS
                );
            }
            let yielded = self.run_block(body, ranks, feeds, stage)?;
            if yielded.len() != args.len() + 1 {
                kbail!(
                    "its body yields {} value(s); it must yield the condition and {} loop value(s)",
                    yielded.len(),
                    args.len()
                );
            }
            cond = self.condition(ranks, yielded[0])?;
            for rank in ranks.iter_mut() {
                let next = yielded[1..]
                    .iter()
                    .map(|y| match y {
                        Some(y) => rank.tensor(*y).cloned(),
                        None => kbail!("the body yields an absent value"),
                    })
                    .collect::<KResult<Vec<Tensor>>>()?;
                for (&a, t) in args.iter().zip(next) {
                    rank.slots[a.index()] = Slot::Local(t);
                }
            }
        }
        for rank in ranks.iter_mut() {
            for (&res, &a) in results.iter().zip(&args) {
                rank.slots[res.index()] = Slot::Local(rank.tensor(a)?.clone());
            }
        }
        Ok(())
    }

    fn step(
        &mut self,
        op: OpId,
        ranks: &mut [Rank],
        feeds: &[IndexMap<String, Tensor>],
        stage: Stage,
    ) -> KResult<()> {
        let (ctx, prog) = (self.ctx, self.prog);
        let name = ctx.str(prog.op_name(op));
        let attrs = ctx.attrs(prog.op_attrs(op));
        let operands: Vec<Option<ValueId>> = prog.operands(op).collect();
        let results: Vec<ValueId> = prog.results(op).collect();
        // Schedule.
        let role = op_role(ctx, prog, op);
        let skipped_input = operands
            .iter()
            .flatten()
            .any(|v| matches!(ranks[0].slots[ranks[0].root(*v).index()], Slot::Skipped));
        let skip = match role {
            Some(2) => stage == Stage::NoOptimize,
            None => skipped_input,
            Some(_) => false,
        };
        if skip {
            for r in ranks.iter_mut() {
                for &v in &results {
                    r.slots[v.index()] = Slot::Skipped;
                }
            }
            return Ok(());
        }
        if skipped_input {
            kbail!("runs in every micro-step but uses a value of the optimize stage (op_role 2)");
        }
        let spec = Dialect::get().spec(name);
        let Some(exec) = exec_of(name) else {
            kbail!("the executor has no kernel for this op");
        };
        match exec {
            // Its operands are the region's results: the op holding the region reads them.
            Exec::Context(ContextOp::Yield) => {}
            Exec::Context(ContextOp::If) => {
                self.run_if(op, &operands, &results, ranks, feeds, stage)?
            }
            Exec::Context(ContextOp::While) => {
                self.run_while(op, &operands, &results, ranks, feeds, stage)?
            }
            Exec::Context(ContextOp::Feed) => {
                let Some(var) = attr_str(attrs, "name") else {
                    kbail!("has no `name` attribute")
                };
                let dtype = attrs
                    .get("dtype")
                    .and_then(|a| a.as_word())
                    .and_then(crate::exec::dtype::parse);
                for (r, rank) in ranks.iter_mut().enumerate() {
                    if first_bool(attrs, "persistable")
                        || (rank.scope.contains(&var) && !feeds[r].contains_key(&var))
                    {
                        if !rank.scope.contains(&var) {
                            kbail!("persistable `{}` is not initialized (no startup op or feed writes it)", var);
                        }
                        rank.slots[results[0].index()] = Slot::Persist(var.clone());
                    } else {
                        let Some(t) = feeds[r].get(&var) else {
                            kbail!("no input fed for `{}`", var);
                        };
                        let t = match dtype {
                            Some(d) if d != t.dtype() => cast(t, d),
                            _ => t.clone(),
                        };
                        if let Err(why) = conforms(ctx, prog, results[0], &t, Conform::Batch) {
                            kbail!("the input fed for `{}` {}", var, why);
                        }
                        rank.slots[results[0].index()] = Slot::Local(t);
                    }
                }
            }
            Exec::Context(ContextOp::Parameter) => {
                let Some(var) = attr_str(attrs, "parameter_name") else {
                    kbail!("has no `parameter_name`")
                };
                for rank in ranks.iter_mut() {
                    let Some(t) = rank.scope.get(&var) else {
                        kbail!(
                            "parameter `{}` is not initialized (no startup op or feed writes it)",
                            var
                        );
                    };
                    if let Err(why) = conforms(ctx, prog, results[0], t, Conform::Exact) {
                        kbail!(
                            "parameter `{}` (as the startup program or the feed's `state_init` made it) {}",
                            var,
                            why
                        );
                    }
                    rank.slots[results[0].index()] = Slot::Persist(var.clone());
                }
            }
            // A writer of the scope (`builtin.set_parameter`, `builtin.shadow_output`): the
            // protocol says which attribute names the variable.
            Exec::Context(ContextOp::ScopeWrite) => {
                let key = scope_writer_name_attr(name).unwrap_or_default();
                let Some(var) = attr_str(attrs, key) else {
                    kbail!("has no `{}`", key)
                };
                let Some(v) = operands.first().copied().flatten() else {
                    kbail!("has no operand")
                };
                for rank in ranks.iter_mut() {
                    let t = rank.tensor(v)?.clone();
                    rank.scope.set(&var, t);
                }
            }
            Exec::Context(ContextOp::Fetch) => {
                let Some(v) = operands.first().copied().flatten() else {
                    kbail!("has no operand")
                };
                for rank in ranks.iter_mut() {
                    let t = rank.tensor(v)?.clone();
                    if let Some(&res) = results.first() {
                        rank.slots[res.index()] = Slot::Local(t);
                    }
                }
            }
            Exec::Context(ContextOp::Combine) => {
                let items: Vec<ValueId> = operands.iter().flatten().copied().collect();
                for rank in ranks.iter_mut() {
                    rank.slots[results[0].index()] = Slot::List(items.clone());
                }
            }
            Exec::Context(ContextOp::Split) => {
                let Some(v) = operands.first().copied().flatten() else {
                    kbail!("has no operand")
                };
                for rank in ranks.iter_mut() {
                    let items = match &rank.slots[rank.root(v).index()] {
                        Slot::List(items) => items.clone(),
                        Slot::Tensors(ts) => {
                            if ts.len() != results.len() {
                                kbail!("splits {} values into {} results", ts.len(), results.len());
                            }
                            let ts = ts.clone();
                            for (&res, t) in results.iter().zip(ts) {
                                rank.slots[res.index()] = Slot::Local(t);
                            }
                            continue;
                        }
                        _ => kbail!("operand is not a vector"),
                    };
                    if items.len() != results.len() {
                        kbail!(
                            "splits {} values into {} results",
                            items.len(),
                            results.len()
                        );
                    }
                    for (&res, &it) in results.iter().zip(&items) {
                        rank.slots[res.index()] = Slot::Alias(it);
                    }
                }
            }
            Exec::Context(ContextOp::Random) => {
                let t = self.random(name, attrs, &ranks[0], &operands)?;
                for rank in ranks.iter_mut() {
                    rank.slots[results[0].index()] = Slot::Local(t.clone());
                }
            }
            Exec::Context(ContextOp::Collective) => {
                let Some(v) = operands.first().copied().flatten() else {
                    kbail!("has no operand")
                };
                let which = collective::Collective::of(name, attrs)?;
                let inputs: Vec<&Tensor> =
                    ranks.iter().map(|r| r.tensor(v)).collect::<KResult<_>>()?;
                let outs = which.run(&inputs)?;
                for (rank, t) in ranks.iter_mut().zip(outs) {
                    self.store(rank, spec, &operands, &results, vec![Some(Out::Tensor(t))])?;
                }
            }
            Exec::Kernel(kernel) => {
                let is_optimizer = spec.is_some_and(|s| s.effect == Effect::Optimizer);
                let grad_index = spec.and_then(|s| s.operand_index("grad"));
                for rank in ranks.iter_mut() {
                    let grad_override = match grad_index {
                        Some(gi) if is_optimizer && !self.grad_override.is_empty() => {
                            self.overridden_grad(rank, &operands, gi)?.map(|t| (gi, t))
                        }
                        _ => None,
                    };
                    let outs = {
                        let mut inputs = operands
                            .iter()
                            .map(|&v| rank.input(v))
                            .collect::<KResult<Vec<_>>>()?;
                        if let Some((gi, t)) = &grad_override {
                            inputs[*gi] = Input::Tensor(t);
                        }
                        let call = OpCall {
                            attrs,
                            spec,
                            inputs,
                            n_results: results.len(),
                        };
                        let mut outs = kernel.call(&call)?;
                        if let (Some(f), true) = (self.seed_scale, self.seed_ops.contains(&op)) {
                            if let Some(Some(Out::Tensor(t))) = outs.first_mut() {
                                let scaled: Vec<f32> = t
                                    .to_f32()
                                    .iter()
                                    .map(|&x| (f64::from(x) * f) as f32)
                                    .collect();
                                *t = Tensor::from_f32_as(t.shape(), scaled, t.dtype())?;
                            }
                        }
                        outs
                    };
                    if let Some((p, g)) = grad_index
                        .filter(|_| is_optimizer)
                        .and_then(|gi| param_and_grad(&operands, gi))
                    {
                        if let Some(pname) = rank.persist_name(p).map(str::to_string) {
                            let gt = rank.tensor(g)?.clone();
                            rank.observed.optimizer_grads.insert(pname, gt);
                        }
                    }
                    self.store(rank, spec, &operands, &results, outs)?;
                }
            }
        }
        if (self.observe_backward || !self.backward_override.is_empty())
            && role == Some(1)
            && results.iter().any(|v| self.handed_over.contains(v))
        {
            self.hand_over(&results, ranks)?;
        }
        if let Some(lv) = self.loss_value {
            if results.contains(&lv) {
                for rank in ranks.iter_mut() {
                    if let Ok(t) = rank.tensor(lv) {
                        let v = t.to_f64_vec();
                        rank.observed.loss =
                            Some((v.iter().sum::<f64>() / v.len().max(1) as f64) as f32);
                    }
                }
            }
        }
        Ok(())
    }

    /// Records or replaces the results of a backward op that the optimize stage reads
    /// ([`Interp::observe_backward_grads`], [`Interp::override_backward_grads`]). A replaced
    /// value is the op's own result from then on (an in-place result no longer aliases its
    /// operand): the optimize stage reads the replacement, the buffer keeps what backward wrote.
    fn hand_over(&self, results: &[ValueId], ranks: &mut [Rank]) -> KResult<()> {
        for (r, rank) in ranks.iter_mut().enumerate() {
            for &v in results.iter().filter(|v| self.handed_over.contains(v)) {
                let Ok(t) = rank.tensor(v) else {
                    continue; // a vector, or nothing: not a gradient
                };
                if !t.dtype().is_float() {
                    continue;
                }
                let replaced = match self.backward_override.get(r).and_then(|o| o.get(&v)) {
                    Some(new) => converted_like(new, t)?,
                    None => None,
                };
                if self.observe_backward {
                    rank.observed.backward_grads.insert(v, t.clone());
                }
                if let Some(new) = replaced {
                    rank.slots[v.index()] = Slot::Local(new);
                }
            }
        }
        Ok(())
    }

    /// Stores an op's results on one rank, writing through aliases for in-place results.
    fn store(
        &self,
        rank: &mut Rank,
        spec: Option<&crate::dialect::OpSpec>,
        operands: &[Option<ValueId>],
        results: &[ValueId],
        outs: Vec<Option<Out>>,
    ) -> KResult<()> {
        for (i, out) in outs.into_iter().enumerate() {
            let Some(&res) = results.get(i) else { break };
            let Some(out) = out else { continue };
            let aliased = spec
                .and_then(|s| s.aliased_operand(i))
                .and_then(|o| operands.get(o).copied().flatten());
            rank.slots[res.index()] = match (out, aliased) {
                (Out::Tensor(t), Some(v)) => {
                    rank.write_through(v, t)?;
                    Slot::Alias(v)
                }
                (Out::List(ts), Some(v)) => {
                    rank.write_through_list(v, ts)?;
                    Slot::Alias(v)
                }
                (Out::Tensor(t), None) => Slot::Local(t),
                (Out::List(ts), None) => Slot::Tensors(ts),
            };
        }
        Ok(())
    }

    fn random(
        &mut self,
        name: &str,
        attrs: Attrs<'_>,
        rank: &Rank,
        operands: &[Option<ValueId>],
    ) -> KResult<Tensor> {
        let shape_t = match operands.first().copied().flatten() {
            Some(v) => rank.tensor(v)?.to_i64_vec(),
            None => match attrs.get("shape").and_then(|a| a.as_array()) {
                Some(items) => items.iter().filter_map(|a| a.as_i64()).collect(),
                None => kbail!("has no shape"),
            },
        };
        let shape = crate::exec::kernels::shape::dims(&shape_t)?;
        memory::reserve(&"a float32 tensor", &shape, 4)?;
        let n = numel(&shape);
        let dtype = attrs
            .get("dtype")
            .and_then(|a| a.as_word())
            .and_then(crate::exec::dtype::parse)
            .unwrap_or(DType::F32);
        let scalar = |i: usize, key: &str, default: f64| -> KResult<f64> {
            match operands.get(i).copied().flatten() {
                Some(v) => Ok(rank.tensor(v)?.scalar_f32()? as f64),
                None => Ok(attrs.get(key).and_then(|a| a.as_f64()).unwrap_or(default)),
            }
        };
        let values: Vec<f32> = if name == "pd_op.uniform" {
            let (lo, hi) = (
                scalar(1, "min", -1.0)? as f32,
                scalar(2, "max", 1.0)? as f32,
            );
            (0..n).map(|_| self.rng.range(lo, hi)).collect()
        } else {
            let (mean, std) = (
                scalar(1, "mean", 0.0)? as f32,
                scalar(2, "std", 1.0)? as f32,
            );
            (0..n).map(|_| mean + std * self.rng.normal()).collect()
        };
        let t = Tensor::new(shape, Data::F32(values))?;
        Ok(cast(&t, dtype))
    }
}

/// How a tensor must agree with the type the program declares for the value it becomes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Conform {
    /// A parameter: the declared dtype, and every dimension the type fixes (`-1` is free).
    Exact,
    /// A fed `pd_op.data` input (already cast to the op's `dtype`): the declared rank, every
    /// fixed dimension after the first, and a fixed first dimension (the batch, B) as a
    /// positive multiple of B. Paddle runs a data op declared `[4,6]` on 8 rows, and
    /// `irw check` runs the original program on k micro-batches at once (k·B rows); a number
    /// of rows that is not a multiple of B contradicts the program.
    Batch,
}

/// Whether `t` agrees with the declared type of `v` (see [`Conform`]); the reason if not.
/// Distributed types declare the global shape, which a rank's shard need not have: only their
/// dtype is compared.
fn conforms(
    ctx: &Context,
    prog: &Program,
    v: ValueId,
    t: &Tensor,
    mode: Conform,
) -> Result<(), String> {
    let ty = ctx.ty(prog.value_type(v));
    let (shape, dtype, dist) = match ty {
        crate::ir::Type::Tensor { shape, dtype } => (shape, *dtype, false),
        crate::ir::Type::Dist { shape, dtype, .. } => (shape, *dtype, true),
        _ => return Ok(()),
    };
    let have = || {
        let elem = t.dtype().short_name();
        let mut dims: String = t.shape().iter().map(|d| format!("{d}x")).collect();
        dims.push_str(elem);
        format!("tensor<{dims}>")
    };
    let declared = || ctx.type_text(prog.value_type(v));
    if mode == Conform::Exact {
        // A declared dtype the executor does not compute with is not compared (the tensor
        // cannot have it).
        if crate::exec::dtype::computable(dtype) && dtype != t.dtype() {
            return Err(format!(
                "is {} but the op declares {}: the dtypes differ",
                have(),
                declared()
            ));
        }
    }
    if dist {
        return Ok(());
    }
    let got = t.shape();
    if got.len() != shape.len() {
        return Err(format!(
            "is {} but the op declares {}: {} dimensions instead of {}",
            have(),
            declared(),
            got.len(),
            shape.len()
        ));
    }
    for (i, (&want, &g)) in shape.iter().zip(got).enumerate() {
        let Ok(want) = usize::try_from(want) else {
            continue; // -1: dynamic
        };
        let ok = if i == 0 && mode == Conform::Batch && want > 0 {
            g > 0 && g.is_multiple_of(want)
        } else {
            g == want
        };
        if !ok {
            let rule = if i == 0 && mode == Conform::Batch && want > 0 {
                format!(" (the batch: {want} rows or a multiple of {want})")
            } else {
                String::new()
            };
            return Err(format!(
                "is {} but the op declares {}: dimension {i} is {g}, not {want}{rule}",
                have(),
                declared(),
            ));
        }
    }
    Ok(())
}
