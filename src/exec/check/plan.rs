//! What both programs of a check run on: how many ranks, how many rows a micro-batch has, the
//! rows themselves, and the persistables every run starts from.

use std::borrow::Cow;

use indexmap::IndexMap;

use super::{CheckOptions, CheckReport, Feeds};
use crate::diag::Diagnostic;
use crate::exec::interp::{Interp, Rank, Sources};
use crate::exec::run::{
    batch_rows, init_ranks_with_sources, micro_batch_for, micro_feeds, step_batch_with_sources,
};
use crate::exec::scope::Scope;
use crate::exec::tensor::Tensor;
use crate::ir::Module;

pub(super) struct Plan<'f> {
    /// Micro-steps of the rewritten program.
    pub k: usize,
    /// Simulated ranks: the program's mesh, `--ranks`, or 2 for a program with collectives.
    pub ranks: usize,
    /// Rows per micro-step and rank.
    pub micro_batch: usize,
    /// Every rank's rows of every micro-step, in rank-major order.
    batch: Cow<'f, IndexMap<String, Tensor>>,
    /// The original's ranks before its step: the start of every run of the original.
    pub original_start: Vec<Rank>,
    /// The rewritten program's ranks before its first micro-step: the original's persistables,
    /// and the state the rewrite introduced (its buffers) from the rewritten startup program.
    pub rewritten_start: Vec<Rank>,
    /// The original's persistables at the start (rank 0).
    pub init: Scope,
    /// The rewritten program's persistables at the start (rank 0).
    pub rewritten_init: Scope,
    /// The persistables both programs have that the rewritten startup program initializes
    /// otherwise than the original's (another dtype, shape or value; a value a random
    /// initializer draws is compared by dtype and shape only), with the rewritten startup's
    /// value and the original's: every run starts from the original's, so what the rewritten
    /// startup does to them is judged here.
    pub startup_differs: Vec<(String, Tensor, Tensor)>,
    /// What the check did to the inputs it was given (printed under the header).
    pub notes: Vec<String>,
}

impl<'f> Plan<'f> {
    pub fn new(
        original: &Module,
        original_src: Sources<'_>,
        rewritten: &Module,
        rewritten_src: Sources<'_>,
        opts: &'f CheckOptions,
    ) -> Result<Plan<'f>, Diagnostic> {
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
        let b = micro_batch_for(
            original,
            original_src,
            opts.feed.as_ref(),
            opts.micro_batch,
            k,
            n,
        )?;
        let rows_per_step = batch_rows(k, n, b)?;
        let empty = IndexMap::new();
        let state = opts.feed.as_ref().map_or(&empty, |f| &f.state);

        // Same initial persistables for both programs.
        let mut original_start =
            init_ranks_with_sources(original, original_src, "original", opts.seed, state, n)?;
        let mut rewritten_start =
            init_ranks_with_sources(rewritten, rewritten_src, "rewritten", opts.seed, state, n)?;
        let startup_differs =
            startup_differences(&original_start[0].scope, &rewritten_start[0].scope, || {
                Ok(init_ranks_with_sources(
                    original,
                    original_src,
                    "original",
                    opts.seed ^ 1,
                    state,
                    1,
                )?
                .remove(0)
                .scope)
            })?;
        let notes = randomize_zero_weights(original, &mut original_start, state, opts.seed);
        let init: Scope = original_start[0].scope.clone();
        for r in rewritten_start.iter_mut() {
            for (name, t) in init.iter() {
                r.scope.set(name, t.clone());
            }
        }
        let rewritten_init: Scope = rewritten_start[0].scope.clone();
        let batch = step_batch_with_sources(
            original,
            original_src,
            opts.feed.as_ref(),
            rows_per_step,
            opts.seed,
        )?;
        Ok(Plan {
            k,
            ranks: n,
            micro_batch: b,
            batch,
            original_start,
            rewritten_start,
            init,
            rewritten_init,
            startup_differs,
            notes,
        })
    }

    /// Each rank's rows of micro-step `i` (rank r on rows [r·k·B + i·B, r·k·B + (i+1)·B)).
    pub fn micro(&self, i: usize) -> Result<Vec<Feeds>, Diagnostic> {
        micro_feeds(&self.batch, self.ranks, self.k, self.micro_batch, i)
    }

    /// Each rank's rows of the whole step (rank r on rows [r·k·B, (r+1)·k·B)).
    pub fn full(&self) -> Result<Vec<Feeds>, Diagnostic> {
        micro_feeds(&self.batch, self.ranks, 1, self.k * self.micro_batch, 0)
    }

    /// [`Plan::micro`] with the first row of every input taken from micro-step `i + 1`'s (the
    /// first row of the last micro-step from the first's): over the k micro-steps, the same
    /// rows in other micro-batches.
    pub fn micro_with_first_row_moved(&self, i: usize) -> Result<Vec<Feeds>, Diagnostic> {
        let mut feeds = self.micro(i)?;
        let next = self.micro((i + 1) % self.k)?;
        for (rank, donor) in feeds.iter_mut().zip(&next) {
            for (name, t) in rank.iter_mut() {
                let rows = t.shape().first().copied().unwrap_or(1);
                let Some(d) = donor.get(name) else { continue };
                if rows < 2 || t.shape() != d.shape() {
                    continue;
                }
                let row = t.numel() / rows;
                let first = d.data().range(0, row);
                t.data_mut().overwrite(0, &first);
            }
        }
        Ok(feeds)
    }

    /// [`Plan::full`] with each rank's rows in reverse order: the same step on the same rows,
    /// its sums over the batch taken in another order.
    pub fn full_reversed(&self) -> Result<Vec<Feeds>, Diagnostic> {
        let mut feeds = self.full()?;
        for rank in &mut feeds {
            for t in rank.values_mut() {
                let rows = t.shape().first().copied().unwrap_or(1);
                if rows > 1 {
                    let row = t.numel() / rows;
                    let data = t.data().reverse_blocks(row.max(1));
                    *t = Tensor::new(t.shape().to_vec(), data)
                        .map_err(|e| Diagnostic::error(e.message))?;
                }
            }
        }
        Ok(feeds)
    }

    /// The report of a check that judged nothing, and why.
    pub fn refused(self, why: String) -> CheckReport {
        CheckReport {
            rows: Vec::new(),
            k_steps: self.k,
            ranks: self.ranks,
            micro_batch: self.micro_batch,
            relation: String::new(),
            notes: self.notes,
            coupling: None,
            fixed_batch: None,
            refusal: Some(why),
        }
    }
}

/// The persistables of `original` (what the original startup made) that `rewritten` also
/// has but holds otherwise ([`Plan::startup_differs`]). `reseeded` runs the original startup
/// with another seed, once, and only when some value differs: a value it changes is drawn by a
/// random initializer, which another order of the startup's ops draws otherwise too.
fn startup_differences(
    original: &Scope,
    rewritten: &Scope,
    reseeded: impl FnOnce() -> Result<Scope, Diagnostic>,
) -> Result<Vec<(String, Tensor, Tensor)>, Diagnostic> {
    let mut differs = Vec::new();
    let mut reseeded = Some(reseeded);
    let mut random: Option<Scope> = None;
    for (name, want) in original.iter() {
        let Some(got) = rewritten.get(name) else {
            continue;
        };
        if got == want {
            continue;
        }
        let alike = got.dtype() == want.dtype() && got.shape() == want.shape();
        if alike {
            if let Some(again) = reseeded.take() {
                random = Some(again()?);
            }
            if random
                .as_ref()
                .and_then(|r| r.get(name))
                .is_some_and(|other| other != want)
            {
                continue;
            }
        }
        differs.push((name.to_string(), got.clone(), want.clone()));
    }
    Ok(differs)
}

/// Gives every weight (a float parameter of two or more dimensions) that the startup program
/// leaves zero everywhere, and the feed does not set, seeded normal values scaled by
/// 1/sqrt(rows) (its fan-in). From zero weights every gradient before the last layer is zero
/// (Paddle's Engine zeroes the parameters of its startup program and sets them from the
/// dygraph layer), and a zero gradient proves nothing about a rewrite. Any initial state is a
/// valid start for comparing two programs, as generated inputs are. Returns a note naming them.
fn randomize_zero_weights(
    module: &Module,
    ranks: &mut [Rank],
    state: &IndexMap<String, Tensor>,
    seed: u64,
) -> Vec<String> {
    let (ctx, prog) = (&module.ctx, &module.main);
    let mut rng = crate::exec::rng::Rng::new(seed ^ 0x0057_E16B);
    let mut names = Vec::new();
    for op in prog.block_ops(prog.top_block()) {
        if ctx.str(prog.op_name(op)) != "builtin.parameter" {
            continue;
        }
        let attrs = ctx.attrs(prog.op_attrs(op));
        let Some(name) = attrs.get("parameter_name").and_then(|a| a.as_str()) else {
            continue;
        };
        if state.contains_key(name.as_ref()) || names.iter().any(|n: &String| n == name.as_ref()) {
            continue;
        }
        let Some(t) = ranks.first().and_then(|r| r.scope.get(&name)) else {
            continue;
        };
        if !t.dtype().is_float()
            || t.shape().len() < 2
            || t.numel() == 0
            || t.to_f64_vec().iter().any(|x| *x != 0.0)
        {
            continue;
        }
        let fan_in = t.shape()[0].max(1) as f32;
        let values: Vec<f32> = rng
            .normal_vec(t.numel())
            .into_iter()
            .map(|x| x / fan_in.sqrt())
            .collect();
        let Ok(new) = Tensor::from_f32_as(t.shape(), values, t.dtype()) else {
            continue;
        };
        for r in ranks.iter_mut() {
            r.scope.set(&name, new.clone());
        }
        names.push(name.into_owned());
    }
    if names.is_empty() {
        return Vec::new();
    }
    let shown: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    vec![format!(
        "the startup program sets {} to zero; they start from seeded random values (from zero weights every other gradient is zero and proves nothing)",
        shown.join(", ")
    )]
}
