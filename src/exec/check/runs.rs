//! The runs of a check: the original's (its gradients on the full batch, or micro-batch by
//! micro-batch where there is no full-batch step; its gradient on each micro-batch alone; its
//! step fed the rewritten program's gradients) and the rewritten program's k micro-steps.

use indexmap::IndexMap;

use super::plan::Plan;
use super::relation::{self, Reduction};
use super::{CheckOptions, Feeds};
use crate::diag::Diagnostic;
use crate::exec::coupling::{self, BatchCoupling, Combine, Coupled, MicroReference};
use crate::exec::dtype::DType;
use crate::exec::interp::{non_finite, Interp, NonFinite, Rank, Sources, Stage};
use crate::exec::scope::Scope;
use crate::exec::tensor::Tensor;
use crate::ir::{Module, ValueId};

/// The gradients the optimizers of a step consumed, by parameter, and the step's loss.
type Consumed = (IndexMap<String, Tensor>, Option<f32>);

/// The original program's passes, on ranks the caller holds.
pub(super) struct Original<'a> {
    module: &'a Module,
    sources: Sources<'a>,
    opts: &'a CheckOptions,
}

impl<'a> Original<'a> {
    pub fn new(module: &'a Module, sources: Sources<'a>, opts: &'a CheckOptions) -> Self {
        Original {
            module,
            sources,
            opts,
        }
    }

    /// A pass on `feeds`; `grads` replace the gradients its optimizers consume when not empty;
    /// `track`: record where a non-finite value first appears.
    fn pass(
        &self,
        ranks: &mut [Rank],
        grads: IndexMap<String, Tensor>,
        feeds: &[Feeds],
        stage: Stage,
        track: bool,
    ) -> Result<(), Diagnostic> {
        let mut it = self.interp()?;
        it.override_optimizer_grads(grads);
        it.set_deadline(self.opts.deadline);
        if track {
            it.track_non_finite();
        }
        it.run(ranks, feeds, stage)
    }

    fn interp(&self) -> Result<Interp<'a>, Diagnostic> {
        Interp::with_source(
            &self.module.ctx,
            &self.module.main,
            self.sources.main,
            "original",
            self.opts.seed,
        )
    }

    /// One whole step on `feeds`, recording what its backward stage hands the optimize stage
    /// ([`Observed::backward_grads`](crate::exec::interp::Observed)).
    fn step(&self, ranks: &mut [Rank], feeds: &[Feeds]) -> Result<(), Diagnostic> {
        let mut it = self.interp()?;
        it.observe_backward_grads();
        it.set_deadline(self.opts.deadline);
        it.run(ranks, feeds, Stage::Full)
    }

    /// The gradients its optimizers consume in one whole step on `feeds` from `start` whose
    /// optimize stage reads, on rank r, `handed[r]` instead of what its backward computed.
    fn step_on(
        &self,
        start: &[Rank],
        feeds: &[Feeds],
        handed: Vec<IndexMap<ValueId, Tensor>>,
    ) -> Result<IndexMap<String, Tensor>, Diagnostic> {
        let mut it = self.interp()?;
        it.override_backward_grads(handed);
        it.set_deadline(self.opts.deadline);
        let mut ranks = start.to_vec();
        it.run(&mut ranks, feeds, Stage::Full)?;
        Ok(std::mem::take(&mut ranks[0].observed.optimizer_grads))
    }

    /// The gradients its optimizers consume, and its loss, in one whole step on `feeds` from
    /// `start`, with the loss taken `times` times (its backward seed scaled; `None`: as the
    /// program computes it); `None` when the program has no backward seed to scale.
    fn consumed(
        &self,
        start: &[Rank],
        feeds: &[Feeds],
        times: Option<f64>,
    ) -> Result<Option<Consumed>, Diagnostic> {
        let mut it = self.interp()?;
        if let Some(factor) = times {
            if !it.scale_loss_seed(factor) {
                return Ok(None);
            }
        }
        it.set_deadline(self.opts.deadline);
        let mut ranks = start.to_vec();
        it.run(&mut ranks, feeds, Stage::Full)?;
        let rank = &mut ranks[0];
        Ok(Some((
            std::mem::take(&mut rank.observed.optimizer_grads),
            rank.observed.loss,
        )))
    }

    /// The original run micro-batch by micro-batch from `start`.
    fn micro_reference(
        &self,
        plan: &Plan<'_>,
        combine: Combine,
    ) -> Result<MicroReference, Diagnostic> {
        coupling::micro_reference(&plan.original_start, plan.k, combine, |ranks, i, stage| {
            self.pass(ranks, IndexMap::new(), &plan.micro(i)?, stage, false)
        })
    }

    /// Why nothing can be judged: the original's own step on `feeds` from `start` is not
    /// finite. A second run looks at every op's results to say where it stops being finite.
    fn refusal(
        &self,
        start: &[Rank],
        feeds: &[Feeds],
        what: String,
        value: &'static str,
        on: &str,
    ) -> Result<String, Diagnostic> {
        let mut ranks = start.to_vec();
        self.pass(&mut ranks, IndexMap::new(), feeds, Stage::Full, true)?;
        let nf = ranks
            .iter()
            .find_map(|r| r.observed.first_non_finite.clone());
        Ok(format!(
            "the original step is not finite{on}: {value} in {what}{}; the rewrite cannot be judged on these inputs",
            produced_by(&nf)
        ))
    }
}

/// What the rewritten program is judged against.
pub(super) struct Reference {
    /// The gradient each optimizer of the original consumed: on the full batch, or combined
    /// over the micro-batches when the original runs micro-batch by micro-batch.
    pub grads: IndexMap<String, Tensor>,
    /// Set when the original runs micro-batch by micro-batch (batch-coupled, or its batch is
    /// fixed): the references of the persistables come from it.
    pub micro: Option<MicroReference>,
    /// The ops that mix the rows of a batch.
    pub coupled: Vec<Coupled>,
    pub combine: Combine,
    /// Why the original cannot run on the full batch, when its ops fix the batch size.
    pub fixed_batch: Option<String>,
    /// The largest magnitude of each gradient on any one micro-batch alone.
    pub micro_max: IndexMap<String, f64>,
    /// The sum of each gradient over the micro-batches, each run alone.
    pub micro_sum: IndexMap<String, Vec<f64>>,
    /// What a correct merge makes the optimizers consume, from the original's own runs: its
    /// optimize stage applied to its micro-batch gradients as backward computed them, averaged
    /// (avg=true) or summed (avg=false). Empty where the original runs micro-batch by
    /// micro-batch, or its backward hands the optimize stage nothing (a program without op
    /// roles): then the consumed micro-batch gradients stand in for it, which is right only
    /// for an optimize stage linear in the gradients.
    pub combined: IndexMap<String, Vec<f64>>,
    /// The gradients the optimizers consume in the same full step on the same rows in reverse
    /// order (the loss taken k times where `grads` is): how far `grads` is uncertain by
    /// rounding, tensor by tensor. Empty where not measured: no full step, k = 1, or a loss
    /// that changes with the order of the rows.
    pub reordered: IndexMap<String, Vec<f64>>,
    pub reduction: Reduction,
    /// The relation the grad rows check, in words.
    pub relation: String,
    /// The 16-bit float dtype the original's forward or backward computes in (AMP O1: float32
    /// parameters, bfloat16 matmuls and convolutions), if any: the loosest.
    pub computes_in: Option<DType>,
    /// The merged gradient must be `factor` × the reference gradient; `None`: the sum of the
    /// micro-batch gradients.
    pub factor: Option<f64>,
}

impl Reference {
    /// Runs the original for its references. `Ok(Err(why))` when its own step is not finite,
    /// so nothing can be judged.
    pub fn measure(
        plan: &Plan<'_>,
        original: &Original<'_>,
        avg: bool,
    ) -> Result<Result<Reference, String>, Diagnostic> {
        let (k, b) = (plan.k, plan.micro_batch);
        let module = original.module;
        let full_batch = plan.full()?;
        // A batch-coupled original: the references are its run micro-batch by micro-batch.
        let mut coupled = coupling::find(&module.ctx, &module.main, original.sources.main);
        let combine = Combine::of(&module.ctx, &module.main);
        let computes = computes_in(module);
        let mut micro = if coupled.is_empty() {
            None
        } else {
            Some(original.micro_reference(plan, combine)?)
        };
        // Otherwise one full step, rank r on rows [r·k·B, (r+1)·k·B). An original that cannot
        // run on k·B rows (its ops fix the batch size) is run micro-batch by micro-batch
        // instead; when that fails too, or the time limit stopped the full step, the full
        // step's error stands.
        let mut fixed_batch = None;
        let mut full_loss = None;
        // What backward handed the optimize stage on the full batch, per rank.
        let mut raw_full: Vec<IndexMap<ValueId, Tensor>> = Vec::new();
        let grads = if let Some(m) = &micro {
            m.grads.clone()
        } else {
            let mut full = plan.original_start.clone();
            match original.step(&mut full, &full_batch) {
                Ok(()) => {
                    for r in &full {
                        if let Some((what, value)) =
                            first_non_finite(r.observed.loss, &r.observed.optimizer_grads, &r.scope)
                        {
                            return Ok(Err(original.refusal(
                                &plan.original_start,
                                &full_batch,
                                what,
                                value,
                                "",
                            )?));
                        }
                    }
                    full_loss = full[0].observed.loss;
                    raw_full = full
                        .iter_mut()
                        .map(|r| std::mem::take(&mut r.observed.backward_grads))
                        .collect();
                    full[0].observed.optimizer_grads.clone()
                }
                Err(e) => {
                    let timed_out = original
                        .opts
                        .deadline
                        .is_some_and(|d| std::time::Instant::now() >= d);
                    if k == 1 || timed_out {
                        return Err(e);
                    }
                    let Ok(m) = original.micro_reference(plan, combine) else {
                        return Err(e);
                    };
                    let at = e.location.as_ref().map_or(String::new(), |l| {
                        format!("{}:{}:{}: ", l.file, l.line, l.col)
                    });
                    fixed_batch = Some(format!(
                        "the original cannot run on the full batch of {} rows per rank ({at}{}), but runs on micro-batches of {b}: its ops fix the batch size, so there is no full-batch step to compare with, and the references are its run micro-batch by micro-batch",
                        k * b,
                        e.message
                    ));
                    let grads = m.grads.clone();
                    micro = Some(m);
                    grads
                }
            }
        };

        // The original's gradient on each micro-batch alone: the merged gradient is a sum of k
        // of them, each rounded (to bf16 in a 16-bit program) before it is added, so a
        // gradient's rounding error scales with the largest of its parts, which cancellation
        // across micro-batches can make far larger than the full-batch gradient. Their sum
        // also says how the loss reduces the batch.
        let mut micro_max: IndexMap<String, f64> = IndexMap::new();
        let mut micro_sum: IndexMap<String, Vec<f64>> = IndexMap::new();
        let mut micro_losses = Vec::new();
        // The same before the optimize stage, per rank: what a merge accumulates.
        let mut raw_sum: Vec<IndexMap<ValueId, Vec<f64>>> = vec![IndexMap::new(); plan.ranks];
        if k > 1 {
            for i in 0..k {
                let mut ranks = plan.original_start.clone();
                let feeds = plan.micro(i)?;
                original.step(&mut ranks, &feeds)?;
                for r in &ranks {
                    if let Some((what, value)) = first_non_finite(
                        r.observed.loss,
                        &r.observed.optimizer_grads,
                        &Scope::new(),
                    ) {
                        return Ok(Err(original.refusal(
                            &plan.original_start,
                            &feeds,
                            what,
                            value,
                            &format!(" on micro-batch {} of {k}", i + 1),
                        )?));
                    }
                }
                micro_losses.push(ranks[0].observed.loss);
                for (sums, rank) in raw_sum.iter_mut().zip(&ranks) {
                    add_into(sums, &rank.observed.backward_grads);
                }
                for (name, g) in &ranks[0].observed.optimizer_grads {
                    let v = g.to_f64_vec();
                    let m = micro_max.entry(name.clone()).or_insert(0.0);
                    *m = m.max(super::compare::max_magnitude(&v));
                    let s = micro_sum
                        .entry(name.clone())
                        .or_insert_with(|| vec![0.0; v.len()]);
                    if s.len() == v.len() {
                        s.iter_mut().zip(&v).for_each(|(a, x)| *a += x);
                    }
                }
            }
        }
        // An original whose ops fix the batch size has no full-batch step to show whether its
        // rows meet, and the coupling detection needs a dynamic batch dimension to know which
        // dimension is the batch: moving one row of each micro-batch to another leaves the sum
        // of a row-independent loss's gradients over the micro-batches as it is (the same
        // rows, in other micro-batches), and changes it where the rows of a micro-batch meet.
        if fixed_batch.is_some() && k > 1 && b >= 2 {
            let raw0 = raw_sum.first().cloned().unwrap_or_default();
            if let Some(c) = moved_rows_coupling(plan, original, &raw0, &micro_sum, computes) {
                coupled.push(c);
            }
        }
        // How the loss reduces the batch, read before the optimize stage where the program
        // says where that stage starts: after it, a global-norm clip scales every gradient by
        // a factor of its own batch, and weight decay adds the parameter, so the consumed
        // gradients of a mean loss are neither a mean nor a sum of the micro-batches'.
        let before_optimize =
            k > 1 && micro.is_none() && raw_full.first().is_some_and(|r| !r.is_empty());
        let reduction = if before_optimize {
            relation::reduction(k, &paired(&raw_full[0], &raw_sum[0]), coupled.is_empty())
        } else {
            relation::reduction(k, &paired(&grads, &micro_sum), coupled.is_empty())
        };
        let combined = if before_optimize {
            let div = if avg { k as f64 } else { 1.0 };
            let handed = raw_full
                .iter()
                .zip(&raw_sum)
                .map(|(full, sums)| combine_like(full, sums, div))
                .collect::<Result<Vec<_>, Diagnostic>>()?;
            original
                .step_on(&plan.original_start, &full_batch, handed)?
                .iter()
                .map(|(name, t)| (name.clone(), t.to_f64_vec()))
                .collect()
        } else {
            IndexMap::new()
        };
        // Without averaging, the merged gradient is that of the loss summed over the k
        // micro-batches. For a mean loss (told by the losses: the full batch's is the mean of
        // the micro-batches'; the gradients cannot tell it behind an optimize stage that is
        // not linear in them, such as a global-norm clip) that is the full-batch step with the
        // loss taken k times, whatever the optimize stage does to the gradients.
        let mut grads = grads;
        let mut summed_loss = false;
        let mean_loss = relation::is_mean_loss(full_loss, &micro_losses);
        if !avg && k > 1 && micro.is_none() && mean_loss {
            if let Some((g, _)) =
                original.consumed(&plan.original_start, &full_batch, Some(k as f64))?
            {
                grads = g;
                summed_loss = true;
            }
        }
        // The same step on the same rows in reverse order: the same sums taken in another
        // order, so what differs between the two is the original's own rounding, measured
        // tensor by tensor (a gradient zero in exact arithmetic is all rounding, and its level
        // depends on the values its own computation meets, not on other tensors). A loss that
        // changes with the order of the rows beyond its own rounding mixes them: then the
        // difference is not rounding, and nothing is measured.
        let reordered = if k > 1 && micro.is_none() {
            let times = summed_loss.then_some(k as f64);
            match original.consumed(&plan.original_start, &plan.full_reversed()?, times)? {
                Some((g, loss)) if loss_unchanged(full_loss, loss, computes) => g
                    .iter()
                    .map(|(name, t)| (name.clone(), t.to_f64_vec()))
                    .collect(),
                _ => IndexMap::new(),
            }
        } else {
            IndexMap::new()
        };
        let (relation, factor) = relation::relation(
            k,
            avg,
            reduction,
            fixed_batch.is_some(),
            summed_loss,
            mean_loss,
            combine,
        );
        Ok(Ok(Reference {
            grads,
            micro,
            coupled,
            combine,
            fixed_batch,
            micro_max,
            micro_sum,
            combined,
            reordered,
            reduction,
            relation,
            computes_in: computes,
            factor,
        }))
    }

    /// The original's step again, its optimizers fed the rewritten program's gradients: the
    /// reference for parameters and optimizer state. The gradients themselves are compared
    /// with the reference gradients; comparing the update against the full-batch update
    /// instead would charge the rewrite with the optimizer's conditioning (Adam's first step is
    /// about lr·sign(g): a last-bit difference in a near-zero gradient moves the parameter by
    /// lr). From micro-batch by micro-batch references, the step is the last micro-batch's,
    /// from where the k−1 before it left the persistables.
    pub fn apply(
        &mut self,
        plan: &Plan<'_>,
        original: &Original<'_>,
        grads: &IndexMap<String, Tensor>,
    ) -> Result<Vec<Rank>, Diagnostic> {
        match self.micro.as_mut() {
            Some(m) => {
                let mut ranks = std::mem::take(&mut m.before_last);
                let last = plan.micro(plan.k - 1)?;
                original.pass(&mut ranks, grads.clone(), &last, Stage::Full, false)?;
                Ok(ranks)
            }
            None => {
                let mut ranks = plan.original_start.clone();
                original.pass(&mut ranks, grads.clone(), &plan.full()?, Stage::Full, false)?;
                Ok(ranks)
            }
        }
    }

    /// The batch-coupled verdict's facts, when the original mixes the rows of a batch: how the
    /// merge combines the micro-batch gradients is the loss's way with `avg`, and their sum
    /// without it (`avg`: the merge's).
    pub fn coupling(&self, avg: bool) -> Option<BatchCoupling> {
        (!self.coupled.is_empty()).then(|| BatchCoupling {
            ops: self.coupled.clone(),
            combine: if avg { self.combine } else { Combine::Sum },
        })
    }
}

/// The rewritten program's k micro-steps.
pub(super) struct Merged {
    /// Every rank after the last micro-step.
    pub ranks: Vec<Rank>,
    /// The gradients its optimizers consumed in the last micro-step.
    pub grads: IndexMap<String, Tensor>,
    /// Persistables of the original that changed before the last micro-step, with the
    /// micro-step that changed them first.
    pub changed_early: IndexMap<String, usize>,
}

impl Merged {
    pub fn run(
        plan: &Plan<'_>,
        rewritten: &Module,
        sources: Sources<'_>,
        opts: &CheckOptions,
        reference: &Reference,
    ) -> Result<Merged, Diagnostic> {
        let k = plan.k;
        let mut it = Interp::with_source(
            &rewritten.ctx,
            &rewritten.main,
            sources.main,
            "rewritten",
            opts.seed,
        )?;
        it.set_deadline(opts.deadline);
        let mut ranks = plan.rewritten_start.clone();
        let mut changed_early: IndexMap<String, usize> = IndexMap::new();
        let mut grads = IndexMap::new();
        let self_scheduled = Interp::schedules_itself(&rewritten.ctx, &rewritten.main);
        for i in 0..k {
            let stage = if i + 1 == k || self_scheduled {
                Stage::Full
            } else {
                Stage::NoOptimize
            };
            it.run(&mut ranks, &plan.micro(i)?, stage)?;
            if i + 1 < k {
                for (name, t0) in plan.init.iter() {
                    // What each rank's persistable must be now: as at the start, or, run
                    // micro-batch by micro-batch, as the original's passes on micro-batches
                    // 1..=i left it.
                    let expected = |r: usize| match &reference.micro {
                        Some(m) => m.after_micro_step[i].get(r).and_then(|s| s.get(name)),
                        None => Some(t0),
                    };
                    if ranks
                        .iter()
                        .enumerate()
                        .any(|(r, rank)| rank.scope.get(name) != expected(r))
                        && !changed_early.contains_key(name)
                    {
                        changed_early.insert(name.to_string(), i + 1);
                    }
                }
            } else {
                grads = ranks[0].observed.optimizer_grads.clone();
            }
        }
        Ok(Merged {
            ranks,
            grads,
            changed_early,
        })
    }
}

/// The coupling [`Reference::measure`] finds by moving the first row of each micro-batch to
/// the one before it ([`Plan::micro_with_first_row_moved`]): `raw` and `consumed`, the sums
/// over the micro-batches of what backward handed the optimize stage and of what the
/// optimizers consumed, change beyond rounding (the former where the program says where its
/// optimize stage starts: a global-norm clip makes the latter change anyway). `None` when
/// nothing changed, or the moved micro-batches cannot run.
fn moved_rows_coupling(
    plan: &Plan<'_>,
    original: &Original<'_>,
    raw: &IndexMap<ValueId, Vec<f64>>,
    consumed: &IndexMap<String, Vec<f64>>,
    computes_in: Option<DType>,
) -> Option<Coupled> {
    let mut moved_raw: IndexMap<ValueId, Vec<f64>> = IndexMap::new();
    let mut moved_consumed: IndexMap<String, Vec<f64>> = IndexMap::new();
    for i in 0..plan.k {
        let mut ranks = plan.original_start.clone();
        original
            .step(&mut ranks, &plan.micro_with_first_row_moved(i).ok()?)
            .ok()?;
        add_into(&mut moved_raw, &ranks[0].observed.backward_grads);
        add_into(&mut moved_consumed, &ranks[0].observed.optimizer_grads);
    }
    // Rounding of the same sums in other micro-batches stays near float32's (or the 16-bit
    // dtype's) resolution of each tensor; rows that meet move a gradient by its own order.
    let rel = if computes_in.is_some() { 5e-2 } else { 1e-3 };
    let (change, beside) = if raw.is_empty() {
        largest_change(consumed, &moved_consumed, rel)
    } else {
        largest_change(raw, &moved_raw, rel)
    }?;
    Some(Coupled {
        name: "the original's gradients".into(),
        at: "micro-batches with one row moved to another".into(),
        why: format!(
            "summed over the micro-batches change by {} (largest value {}) when one row of each micro-batch moves to another",
            super::report::sci(Some(change)),
            super::report::sci(Some(beside))
        ),
    })
}

/// Adds each tensor of `grads` into `sums`, by key.
fn add_into<K: std::hash::Hash + Eq + Clone>(
    sums: &mut IndexMap<K, Vec<f64>>,
    grads: &IndexMap<K, Tensor>,
) {
    for (key, g) in grads {
        let x = g.to_f64_vec();
        let s = sums
            .entry(key.clone())
            .or_insert_with(|| vec![0.0; x.len()]);
        if s.len() == x.len() {
            s.iter_mut().zip(&x).for_each(|(a, b)| *a += b);
        }
    }
}

/// The largest change from `before` to `after` of a tensor that changed by more than `rel`
/// of its own largest magnitude, with that magnitude.
fn largest_change<K: std::hash::Hash + Eq>(
    before: &IndexMap<K, Vec<f64>>,
    after: &IndexMap<K, Vec<f64>>,
    rel: f64,
) -> Option<(f64, f64)> {
    let mut worst: Option<(f64, f64)> = None;
    for (key, b) in before {
        let Some(a) = after.get(key).filter(|a| a.len() == b.len()) else {
            continue;
        };
        let scale = super::compare::max_magnitude(b).max(super::compare::max_magnitude(a));
        let change = a
            .iter()
            .zip(b)
            .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
        if change.is_finite() && change > rel * scale && worst.is_none_or(|(w, _)| change > w) {
            worst = Some((change, scale));
        }
    }
    worst
}

/// Whether the loss of the step on reversed rows, `reversed`, is the loss of the step on the
/// rows in order, `full`, but for the rounding of a sum taken in another order: 64 units in
/// the last place of the dtype the forward computes in (float32, or the 16-bit dtype of AMP).
fn loss_unchanged(full: Option<f32>, reversed: Option<f32>, computes_in: Option<DType>) -> bool {
    let (Some(a), Some(b)) = (full, reversed) else {
        return false;
    };
    let eps = match computes_in {
        Some(DType::BF16) => 2f64.powi(-8),
        Some(DType::F16) => 2f64.powi(-11),
        _ => f64::from(f32::EPSILON),
    };
    let (a, b) = (f64::from(a), f64::from(b));
    a.is_finite() && b.is_finite() && (a - b).abs() <= 64.0 * eps * a.abs().max(b.abs())
}

/// The loosest 16-bit float dtype among the results of the forward and backward ops of
/// `module`'s top block: what its gradients are rounded to on the way.
fn computes_in(module: &Module) -> Option<DType> {
    let (ctx, prog) = (&module.ctx, &module.main);
    let mut loosest = None;
    for op in prog.block_ops(prog.top_block()) {
        if crate::exec::interp::op_role(ctx, prog, op).is_some_and(|r| r == 2) {
            continue;
        }
        for v in prog.results(op) {
            match ctx.ty(prog.value_type(v)).dtype() {
                Some(DType::BF16) => return Some(DType::BF16),
                Some(DType::F16) => loosest = Some(DType::F16),
                _ => {}
            }
        }
    }
    loosest
}

/// Each float reference paired with the sum over the micro-batches of the same value, where both
/// are known and agree in length: what [`relation::reduction`] reads.
fn paired<K: std::hash::Hash + Eq>(
    full: &IndexMap<K, Tensor>,
    sums: &IndexMap<K, Vec<f64>>,
) -> Vec<(Vec<f64>, Vec<f64>)> {
    full.iter()
        .filter(|(_, t)| t.dtype().is_float())
        .filter_map(|(key, t)| {
            let s = sums.get(key)?;
            let f = t.to_f64_vec();
            (f.len() == s.len()).then(|| (f, s.clone()))
        })
        .collect()
}

/// The micro-batch sums `sums`, divided by `div`, as tensors shaped like the full step's values.
fn combine_like(
    full: &IndexMap<ValueId, Tensor>,
    sums: &IndexMap<ValueId, Vec<f64>>,
    div: f64,
) -> Result<IndexMap<ValueId, Tensor>, Diagnostic> {
    let mut out = IndexMap::new();
    for (&v, like) in full {
        let Some(s) = sums.get(&v).filter(|s| s.len() == like.numel()) else {
            continue;
        };
        let vals: Vec<f32> = s.iter().map(|x| (x / div) as f32).collect();
        let t = Tensor::from_f32_as(like.shape(), vals, like.dtype())
            .map_err(|e| e.into_diagnostic("the micro-batch gradients combined: "))?;
        out.insert(v, t);
    }
    Ok(out)
}

/// The first non-finite value of the original's step, by what holds it.
fn first_non_finite<'a>(
    loss: Option<f32>,
    grads: &'a IndexMap<String, Tensor>,
    scope: &'a Scope,
) -> Option<(String, &'static str)> {
    if let Some(l) = loss.filter(|l| !l.is_finite()) {
        return Some(("the loss".into(), if l.is_nan() { "NaN" } else { "inf" }));
    }
    for (name, t) in grads {
        if let Some(w) = non_finite(t) {
            return Some((format!("the gradient of `{name}`"), w));
        }
    }
    for (name, t) in scope.iter() {
        if let Some(w) = non_finite(t) {
            return Some((format!("`{name}` after the step"), w));
        }
    }
    None
}

/// "(first produced by op #i `name` at file:line:col)".
fn produced_by(nf: &Option<NonFinite>) -> String {
    match nf {
        Some(nf) => {
            let at = nf
                .location
                .as_ref()
                .map(|l| format!(" at {}:{}:{}", l.file, l.line, l.col))
                .unwrap_or_default();
            format!(
                " (first produced by op #{} `{}`{at}: {})",
                nf.index, nf.op, nf.what
            )
        }
        None => String::new(),
    }
}
