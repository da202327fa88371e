//! `irw check`: prove numerically that a rewritten program computes the same training step.
//!
//! The original program runs one step on a batch of `k·B` rows (per rank); the rewritten one runs
//! `k` micro-steps of `B` rows with Paddle's gradient-merge schedule, from the same initial
//! persistables (the rewritten scope is overwritten with the original's, so random initializers
//! and feed files agree) and on the same rows. Then, per tensor:
//!
//! - **grad**: the gradient each optimizer op consumed (the merged, scaled buffer in the rewritten
//!   program) against the full-batch gradient — this is where a missing, doubled or misplaced
//!   `1/k` scale, or a dropped all-reduce, shows up;
//! - **param** / **state**: every persistable (parameters, optimizer moments, beta powers,
//!   learning rate) against the original's step run again with its optimizers fed the rewritten
//!   program's gradients. Together with the grad rows this is the full-batch step, but each error
//!   is reported where it arises: a wrong gradient at the gradient, a wrong optimize stage (an
//!   update applied twice, a wrong learning rate) at the parameter, and the optimizer's own
//!   conditioning is not charged to the rewrite (Adam's first step is about lr·sign(g), so a
//!   last-bit difference in a near-zero gradient would move a parameter by lr). Names the step
//!   itself publishes (the loss through `builtin.shadow_output` in an Engine program) are
//!   outputs of the micro-batch they ran on, not state, and are not compared;
//! - **buffer**: state the rewrite introduced must be back at its initial value after the step
//!   (gradient-merge buffers zeroed for the next step), and must not be a 16-bit float
//!   (accumulation belongs in f32);
//! - **frozen**: nothing the original owns may change on micro-steps 1..k−1 (no update before the
//!   boundary);
//! - **replicas**: with several ranks, every rank ends with the same parameters.
//!
//! Tolerance per tensor: `|a − b| ≤ rtol·|b| + atol·S` with rtol = atol = 1e-5 for f32
//! (1e-2 for bf16, 2e-3 for f16, exact for integers), overridable. Float tensors of a program
//! that keeps 16-bit persistables get the 16-bit tolerance (their values went through 16-bit
//! math). `S` is the tensor's largest magnitude, and at least:
//! - for gradients, the largest magnitude of any gradient of the program, full-batch or of one
//!   micro-batch alone (the original run on each micro-batch): a gradient element is a sum whose
//!   rounding error scales with the magnitudes summed, not with the (possibly cancelled, tiny)
//!   result; a one-element bias gradient has no larger element of its own to scale by; and the
//!   merged gradient adds k micro-batch gradients, each rounded before it is added;
//! - for parameters, the largest update of any parameter in the step (a parameter's error is its
//!   gradient's times the learning rate).
//!
//! A wrong scale, a missing term or a skipped update still shows: its error is a fraction of the
//! gradient or update itself. Programs with collectives run on 2 ranks by default, so moving a
//! collective across the accumulation is really exercised.
//!
//! A batch-coupled original (train-mode `batch_norm`: a row's output depends on the other rows of
//! its batch) has no full-batch step a gradient merge could equal ([`super::coupling`]). The report
//! then says so, naming the ops, and the references are the original run micro-batch by
//! micro-batch instead: gradients combined over the k micro-batches, parameters and state after
//! k forward/backward passes and one optimize step, and on micro-steps 1..k−1 the persistables
//! those passes leave (running statistics updated, nothing else changed).

use std::fmt;

use indexmap::IndexMap;

use crate::diag::Diagnostic;
use crate::exec::coupling::{self, BatchCoupling};
use crate::exec::dtype::DType;
use crate::exec::feed::Feed;
use crate::exec::interp::{Interp, Rank, Sources, Stage};
use crate::exec::run::{
    batch_rows, init_ranks_with_sources, micro_feeds, resolve_micro_batch, step_batch,
};
use crate::exec::scope::Scope;
use crate::exec::tensor::Tensor;
use crate::ir::Module;

/// One rank's inputs by `pd_op.data` name.
type Feeds = IndexMap<String, Tensor>;

/// Options of [`check`].
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// Micro-steps of the rewritten program (`--set k_steps=K` / `--k-steps`).
    pub k_steps: usize,
    /// Rows per micro-step and rank (`--micro-batch`); from the feed, or 2.
    pub micro_batch: Option<usize>,
    /// Ranks (`--ranks`); default 2 if either program has collectives, else 1.
    pub ranks: Option<usize>,
    pub seed: u64,
    /// Override of the per-dtype relative tolerance (`--rtol`).
    pub rtol: Option<f64>,
    /// Override of the per-dtype tolerance relative to the tensor's largest value (`--atol`).
    pub atol: Option<f64>,
    /// Inputs and initial state (`--feed`).
    pub feed: Option<Feed>,
    /// The most bytes of tensors both programs' runs hold at once (`--max-memory`;
    /// [`crate::exec::memory`]).
    pub max_memory: u64,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            k_steps: 4,
            micro_batch: None,
            ranks: None,
            seed: 0,
            rtol: None,
            atol: None,
            feed: None,
            max_memory: crate::exec::memory::DEFAULT_MAX_MEMORY,
        }
    }
}

/// One compared tensor.
#[derive(Clone, Debug)]
pub struct Row {
    pub tensor: String,
    /// `grad`, `param`, `state`, `buffer`, `frozen`, `replica`.
    pub kind: &'static str,
    pub max_abs: f64,
    pub max_rel: f64,
    pub ok: bool,
    /// Why it failed, in words.
    pub note: String,
}

/// The outcome of [`check`]; `Display` prints the table.
#[derive(Clone, Debug)]
pub struct CheckReport {
    pub rows: Vec<Row>,
    pub k_steps: usize,
    pub ranks: usize,
    pub micro_batch: usize,
    /// Set when the original is batch-coupled: then the rows compare with the original run
    /// micro-batch by micro-batch, not with the full-batch step.
    pub coupling: Option<BatchCoupling>,
}

impl CheckReport {
    pub fn passed(&self) -> bool {
        self.rows.iter().all(|r| r.ok)
    }

    /// Whether the original is batch-coupled (its own verdict, whether or not the rows passed).
    pub fn batch_coupled(&self) -> bool {
        self.coupling.is_some()
    }

    pub fn failures(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| !r.ok)
    }
}

fn sci(v: f64) -> String {
    if v.is_nan() {
        "-".into()
    } else if v.is_infinite() {
        "inf".into()
    } else {
        format!("{v:.2e}")
    }
}

impl fmt::Display for CheckReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let original = match &self.coupling {
            None => format!(
                "1 step of {} rows per rank",
                self.k_steps * self.micro_batch
            ),
            Some(_) => format!(
                "{} micro-batches of {} rows per rank, one after another (batch-coupled)",
                self.k_steps, self.micro_batch
            ),
        };
        writeln!(
            f,
            "irw check: k_steps {}, micro-batch {}, ranks {}; original: {original}",
            self.k_steps, self.micro_batch, self.ranks,
        )?;
        let w = self
            .rows
            .iter()
            .map(|r| r.tensor.len())
            .max()
            .unwrap_or(6)
            .max(6);
        writeln!(
            f,
            "{:<w$}  {:<7}  {:>11}  {:>11}  verdict",
            "tensor", "kind", "max abs err", "max rel err"
        )?;
        for r in &self.rows {
            writeln!(
                f,
                "{:<w$}  {:<7}  {:>11}  {:>11}  {}",
                r.tensor,
                r.kind,
                sci(r.max_abs),
                sci(r.max_rel),
                if r.ok { "ok" } else { "FAIL" }
            )?;
        }
        let fails: Vec<&Row> = self.failures().collect();
        if let Some(c) = &self.coupling {
            c.explain(f, self.k_steps, self.micro_batch)?;
        }
        if fails.is_empty() {
            match &self.coupling {
                None => writeln!(f, "result: PASS ({} tensors)", self.rows.len()),
                Some(c) => c.verdict(f, self.k_steps, self.rows.len()),
            }
        } else {
            for r in &fails {
                writeln!(f, "FAIL {} ({}): {}", r.tensor, r.kind, r.note)?;
            }
            writeln!(
                f,
                "result: FAIL ({} of {} tensors)",
                fails.len(),
                self.rows.len()
            )
        }
    }
}

fn default_tol(d: DType) -> f64 {
    match d {
        DType::F32 | DType::F64 => 1e-5,
        DType::BF16 => 1e-2,
        DType::F16 => 2e-3,
        _ => 0.0,
    }
}

/// The largest magnitude in `t`.
fn max_abs(t: &Tensor) -> f64 {
    max_magnitude(&t.to_f64_vec())
}

/// The largest magnitude of any float gradient in `grads`.
fn largest_gradient(grads: &IndexMap<String, Tensor>) -> f64 {
    grads
        .values()
        .filter(|t| t.dtype().is_float())
        .map(max_abs)
        .fold(0.0, f64::max)
}

fn max_magnitude(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

/// Compares `got` with the reference `want`: (max abs, max rel, within tolerance). The absolute
/// part of the tolerance scales with `want`'s largest magnitude, or `scale` if larger.
fn compare(got: &Tensor, want: &Tensor, rtol: f64, atol: f64, scale: f64) -> (f64, f64, bool) {
    let (a, b) = (got.to_f64_vec(), want.to_f64_vec());
    if a.len() != b.len() || got.shape() != want.shape() {
        return (f64::INFINITY, f64::INFINITY, false);
    }
    let max_b = max_magnitude(&b).max(scale);
    let (mut max_abs, mut max_rel, mut ok) = (0.0f64, 0.0f64, true);
    for (x, y) in a.iter().zip(&b) {
        let d = (x - y).abs();
        if d.is_nan() || d > rtol * y.abs() + atol * max_b {
            ok = false;
        }
        max_abs = max_abs.max(if d.is_nan() { f64::INFINITY } else { d });
        if *y != 0.0 {
            max_rel = max_rel.max(d / y.abs());
        } else if d > 0.0 {
            max_rel = f64::INFINITY;
        }
    }
    (max_abs, max_rel, ok)
}

/// A hint for a gradient mismatch: is the rewritten gradient a multiple of the reference?
/// With k = 1 nothing is merged: the words are about the rewritten program's gradient and the
/// original's, and no 1/k scale is suspected.
fn scale_hint(got: &Tensor, want: &Tensor, k: usize) -> String {
    let (a, b) = (got.to_f64_vec(), want.to_f64_vec());
    let bb: f64 = b.iter().map(|v| v * v).sum();
    let single = k == 1;
    if bb == 0.0 || a.len() != b.len() {
        return if single {
            "the rewritten program's gradient differs from the original's".into()
        } else {
            "the merged gradient differs from the full-batch gradient".into()
        };
    }
    let ratio = a.iter().zip(&b).map(|(x, y)| x * y).sum::<f64>() / bb;
    let resid: f64 = a
        .iter()
        .zip(&b)
        .map(|(x, y)| (x - ratio * y).powi(2))
        .sum::<f64>()
        .sqrt();
    let proportional = resid <= 1e-3 * bb.sqrt() * ratio.abs().max(1e-12);
    let k = k as f64;
    let near = |r: f64| (ratio - r).abs() <= 1e-3 * r.abs();
    if single {
        return if proportional {
            format!("the rewritten program's gradient is {ratio:.4}× the original's")
        } else {
            "the rewritten program's gradient differs from the original's (not by a constant factor)"
                .into()
        };
    }
    match () {
        _ if proportional && near(k) => format!(
            "the merged gradient is {k}× the full-batch gradient: the 1/k scale is missing"
        ),
        _ if proportional && near(1.0 / k) => format!(
            "the merged gradient is 1/{k} of the full-batch gradient: the 1/k scale is applied twice"
        ),
        _ if proportional => format!("the merged gradient is {ratio:.4}× the full-batch gradient"),
        _ => "the merged gradient differs from the full-batch gradient (not by a constant factor: \
              a scale applied per micro-step, or a missing or misplaced collective?)"
            .into(),
    }
}

/// Checks `rewritten` (k micro-steps) against `original` (one full step).
pub fn check(
    original: &Module,
    rewritten: &Module,
    opts: &CheckOptions,
) -> Result<CheckReport, Diagnostic> {
    check_with_sources(
        original,
        Sources::default(),
        rewritten,
        Sources::default(),
        opts,
    )
}

/// [`check`] on modules read from files: errors at an op show its line.
pub fn check_with_sources(
    original: &Module,
    original_src: Sources<'_>,
    rewritten: &Module,
    rewritten_src: Sources<'_>,
    opts: &CheckOptions,
) -> Result<CheckReport, Diagnostic> {
    // One budget for both programs' runs: they are held at once.
    let _budget = crate::exec::run::enter_budget(opts.max_memory, opts.feed.as_ref());
    let k = opts.k_steps.max(1);
    let collectives = Interp::has_collectives(&original.ctx, &original.main)
        || Interp::has_collectives(&rewritten.ctx, &rewritten.main);
    // An auto-parallel program runs on its mesh: one simulated rank per process.
    let mesh = Interp::mesh_processes(&original.ctx, &original.main).filter(|&m| m > 1);
    if let (Some(m), Some(r)) = (mesh, opts.ranks) {
        if m != r {
            return Err(Diagnostic::error(format!(
                "--ranks {r}, but the program's mesh has {m} processes"
            ))
            .with_hint("leave out --ranks: a pd_dist program runs on one simulated rank per process of its mesh"));
        }
    }
    let n = opts
        .ranks
        .or(mesh)
        .unwrap_or(if collectives { 2 } else { 1 })
        .max(1);
    if n > 1 && !collectives && mesh.is_none() {
        // Each rank would train on its own shard and never combine: the replicas diverge and
        // every gradient differs from the full batch's, whatever the rewrite did.
        return Err(Diagnostic::error(format!(
            "--ranks {n}, but neither program has a collective: the ranks would never combine their gradients, so the comparison with one step on the full batch would fail whatever the rewrite did"
        ))
        .with_hint("leave out --ranks (one rank), or check a data-parallel program (one with c_allreduce_sum, all_reduce, ...)")
        .as_usage());
    }
    let b = resolve_micro_batch(opts.feed.as_ref(), opts.micro_batch, k, n)?;
    let rows_per_step = batch_rows(k, n, b)?;
    let empty = IndexMap::new();
    let state = opts.feed.as_ref().map_or(&empty, |f| &f.state);

    // Same initial persistables for both programs.
    let mut orig =
        init_ranks_with_sources(original, original_src, "original", opts.seed, state, n)?;
    let mut applied = orig.clone();
    let mut rew =
        init_ranks_with_sources(rewritten, rewritten_src, "rewritten", opts.seed, state, n)?;
    let init: Scope = orig[0].scope.clone();
    for r in rew.iter_mut() {
        for (name, t) in init.iter() {
            r.scope.set(name, t.clone());
        }
    }
    let rew_init: Scope = rew[0].scope.clone();
    let batch = step_batch(original, opts.feed.as_ref(), rows_per_step, opts.seed)?;

    // A pass of the original on `feeds`; `grads` replace the gradients its optimizers consume
    // when not empty.
    let pass =
        |ranks: &mut Vec<Rank>, grads: IndexMap<String, Tensor>, feeds: &[Feeds], stage: Stage| {
            let mut it = Interp::with_source(
                &original.ctx,
                &original.main,
                original_src.main,
                "original",
                opts.seed,
            )?;
            it.override_optimizer_grads(grads);
            it.run(ranks, feeds, stage)
        };
    let step = |ranks: &mut Vec<Rank>, grads: IndexMap<String, Tensor>, feeds: &[Feeds]| {
        pass(ranks, grads, feeds, Stage::Full)
    };
    let full_batch = micro_feeds(&batch, n, 1, k * b, 0)?;
    // A batch-coupled original: the references are its run micro-batch by micro-batch.
    let coupled = coupling::find(&original.ctx, &original.main, original_src.main);
    let combine = coupling::Combine::of(&original.ctx, &original.main);
    let mut micro_ref = if coupled.is_empty() {
        None
    } else {
        Some(coupling::micro_reference(
            &applied,
            k,
            combine,
            |ranks, i, stage| {
                pass(
                    ranks,
                    IndexMap::new(),
                    &micro_feeds(&batch, n, k, b, i)?,
                    stage,
                )
            },
        )?)
    };
    let ref_grads = match &micro_ref {
        Some(m) => m.grads.clone(),
        None => {
            // Original: one full step, rank r on rows [r·k·B, (r+1)·k·B).
            step(&mut orig, IndexMap::new(), &full_batch)?;
            orig[0].observed.optimizer_grads.clone()
        }
    };

    // The original's gradient on each micro-batch alone: the merged gradient is a sum of k of
    // them, each rounded (to bf16 in a 16-bit program) before it is added, so its rounding
    // error scales with the largest of them, which cancellation across micro-batches can make
    // far larger than the full-batch gradient.
    let mut micro_grad_scale = micro_ref.as_ref().map_or(0.0, |m| m.grad_scale);
    if k > 1 && micro_ref.is_none() {
        for i in 0..k {
            let mut ranks = applied.clone();
            step(
                &mut ranks,
                IndexMap::new(),
                &micro_feeds(&batch, n, k, b, i)?,
            )?;
            micro_grad_scale =
                micro_grad_scale.max(largest_gradient(&ranks[0].observed.optimizer_grads));
        }
    }

    // Rewritten: k micro-steps.
    let mut rows = Vec::new();
    let mut it = Interp::with_source(
        &rewritten.ctx,
        &rewritten.main,
        rewritten_src.main,
        "rewritten",
        opts.seed,
    )?;
    let mut changed_early: IndexMap<String, usize> = IndexMap::new();
    let mut rew_grads = IndexMap::new();
    let self_scheduled = Interp::schedules_itself(&rewritten.ctx, &rewritten.main);
    for i in 0..k {
        let stage = if i + 1 == k || self_scheduled {
            Stage::Full
        } else {
            Stage::NoOptimize
        };
        it.run(&mut rew, &micro_feeds(&batch, n, k, b, i)?, stage)?;
        if i + 1 < k {
            for (name, t0) in init.iter() {
                // What each rank's persistable must be now: as at the start, or, for a
                // batch-coupled program, as the original's passes on micro-batches 1..=i left it.
                let expected = |r: usize| match &micro_ref {
                    Some(m) => m.after_micro_step[i].get(r).and_then(|s| s.get(name)),
                    None => Some(t0),
                };
                if rew
                    .iter()
                    .enumerate()
                    .any(|(r, rank)| rank.scope.get(name) != expected(r))
                    && !changed_early.contains_key(name)
                {
                    changed_early.insert(name.to_string(), i + 1);
                }
            }
        } else {
            rew_grads = rew[0].observed.optimizer_grads.clone();
        }
    }

    // The original step again, its optimizers fed the rewritten program's gradients: the
    // reference for parameters and optimizer state. The gradients themselves are compared with
    // the full-batch ones above; comparing the update against the full-batch update instead
    // would charge the rewrite with the optimizer's conditioning (Adam's first step is about
    // lr·sign(g): a last-bit difference in a near-zero gradient moves the parameter by lr).
    match micro_ref.as_mut() {
        Some(m) => {
            applied = std::mem::take(&mut m.before_last);
            let last = micro_feeds(&batch, n, k, b, k - 1)?;
            pass(&mut applied, rew_grads.clone(), &last, Stage::Full)?;
        }
        None => step(&mut applied, rew_grads.clone(), &full_batch)?,
    }

    // A tensor is only as precise as the arithmetic that produced it: in a program whose
    // persistables include 16-bit floats (bf16 parameters with f32 master weights, say), the f32
    // master weights and f32-cast gradients carry 16-bit rounding too, so the loosest tolerance
    // among the program's float dtypes applies to every tensor.
    let compute_tol = init
        .iter()
        .map(|(_, t)| default_tol(t.dtype()))
        .fold(0.0f64, f64::max);
    let tol = |d: DType| {
        let t = default_tol(d).max(if d.is_float() { compute_tol } else { 0.0 });
        (opts.rtol.unwrap_or(t), opts.atol.unwrap_or(t))
    };
    // Gradients consumed by the optimizer.
    let grad_scale = largest_gradient(&ref_grads).max(micro_grad_scale);
    for (name, want) in &ref_grads {
        let (rt, at) = tol(want.dtype());
        match rew_grads.get(name) {
            Some(got) => {
                let (ma, mr, ok) = compare(got, want, rt, at, grad_scale);
                let note = if ok { String::new() } else { scale_hint(got, want, k) };
                rows.push(Row { tensor: name.clone(), kind: "grad", max_abs: ma, max_rel: mr, ok, note });
            }
            None => rows.push(Row {
                tensor: name.clone(),
                kind: "grad",
                max_abs: f64::INFINITY,
                max_rel: f64::INFINITY,
                ok: false,
                note: "no optimizer op of the rewritten program updated this parameter in the last micro-step".into(),
            }),
        }
    }
    // Persistables after the original's step on the rewritten gradients. A parameter's error
    // comes from its update (the gradient's error times the learning rate), so the absolute
    // part of its tolerance scales with the program's largest update, as a gradient's with the
    // largest gradient.
    let update_scale = applied[0]
        .scope
        .iter()
        .filter(|(name, t)| ref_grads.contains_key(*name) && t.dtype().is_float())
        .filter_map(|(name, after)| {
            let before = init.get(name)?;
            let (a, b) = (after.to_f64_vec(), before.to_f64_vec());
            (a.len() == b.len()).then(|| {
                a.iter()
                    .zip(&b)
                    .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
            })
        })
        .fold(0.0f64, f64::max);
    for (name, want) in applied[0].scope.iter() {
        if !init.contains(name) {
            // Published by the step itself (the loss, `shadow_output` in main): an output of
            // the micro-batch it ran on, not state carried across steps.
            continue;
        }
        let kind = if ref_grads.contains_key(name) {
            "param"
        } else {
            "state"
        };
        let (rt, at) = tol(want.dtype());
        let scale = if kind == "param" { update_scale } else { 0.0 };
        match rew[0].scope.get(name) {
            Some(got) => {
                let (ma, mr, ok) = compare(got, want, rt, at, scale);
                let note = if ok {
                    String::new()
                } else {
                    format!(
                        "differs from the original's step on {} rows given the same gradients",
                        k * b
                    )
                };
                rows.push(Row {
                    tensor: name.to_string(),
                    kind,
                    max_abs: ma,
                    max_rel: mr,
                    ok,
                    note,
                });
            }
            None => rows.push(Row {
                tensor: name.to_string(),
                kind,
                max_abs: f64::INFINITY,
                max_rel: f64::INFINITY,
                ok: false,
                note: "missing from the rewritten program's scope".into(),
            }),
        }
    }
    // State the rewrite introduced must be back at its initial value.
    for (name, got) in rew[0].scope.iter() {
        if init.contains(name) {
            continue;
        }
        let Some(start) = rew_init.get(name) else {
            continue;
        };
        let (ma, mr, ok) = compare(got, start, 0.0, 0.0, 0.0);
        if got.dtype().is_half() {
            // Accumulating k gradients in a 16-bit buffer loses most of their low bits.
            rows.push(Row {
                tensor: name.to_string(),
                kind: "buffer",
                max_abs: ma,
                max_rel: mr,
                ok: false,
                note: format!(
                    "is a {} buffer: gradients must be accumulated in float32",
                    got.dtype().attr_name()
                ),
            });
            continue;
        }
        let note = if ok {
            String::new()
        } else {
            format!(
                "is not back at its initial value after the step (max |value − initial| = {})",
                sci(ma)
            ) + ": the buffer is never reset, so the next step would start from stale gradients"
        };
        rows.push(Row {
            tensor: name.to_string(),
            kind: "buffer",
            max_abs: ma,
            max_rel: mr,
            ok,
            note,
        });
    }
    // No update before the boundary.
    for (name, step) in &changed_early {
        rows.push(Row {
            tensor: name.clone(),
            kind: "frozen",
            max_abs: f64::NAN,
            max_rel: f64::NAN,
            ok: false,
            note: format!("changed during micro-step {step} of {k}: it must only change at the last micro-step"),
        });
    }
    // Replicas agree.
    for (r, rank) in rew.iter().enumerate().skip(1) {
        for (name, t0) in rew[0].scope.iter() {
            if !rew_init.contains(name) {
                continue; // a step output: each rank's own micro-batch
            }
            if applied.get(r).and_then(|a| a.scope.get(name)) != applied[0].scope.get(name) {
                continue; // the original's ranks differ too (running statistics of their rows)
            }
            if rank.scope.get(name) != Some(t0) {
                rows.push(Row {
                    tensor: name.to_string(),
                    kind: "replica",
                    max_abs: rank
                        .scope
                        .get(name)
                        .map_or(f64::INFINITY, |t| compare(t, t0, 0.0, 0.0, 0.0).0),
                    max_rel: f64::NAN,
                    ok: false,
                    note: format!(
                        "rank {r} ends with a different value than rank 0: the replicas diverged"
                    ),
                });
            }
        }
    }
    Ok(CheckReport {
        rows,
        k_steps: k,
        ranks: n,
        micro_batch: b,
        coupling: (!coupled.is_empty()).then_some(BatchCoupling {
            ops: coupled,
            combine,
        }),
    })
}
