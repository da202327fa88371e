//! `irw run`: execute a program with Paddle's schedule and report the loss per micro-step.
//!
//! Schedule (Paddle's static Engine): the startup program runs once (on one replica, then copied
//! to every rank, so the replicas start identical); the feed file's `state_init` then replaces
//! what it computed. Each step runs `k` micro-steps; micro-steps 1..k−1 run the forward and
//! backward ops, the last one runs every op (see [`Stage`] for ops without `op_role`).
//!
//! Data layout: a step consumes a batch of `k·N·B` rows (N ranks, micro-batch B). Rank r owns rows
//! `[r·k·B, (r+1)·k·B)`, and in micro-step i it takes rows `r·k·B + i·B ..+B` of them. So with
//! one rank, micro-step i takes rows `i·B..(i+1)·B`, and a full-batch run (k = 1) of the same
//! batch gives each rank the same rows its k micro-steps cover.
//!
//! The micro-batch B comes from `--micro-batch`, else the feed's rows / (k·N), else the fixed
//! batch the program's data ops declare (Paddle's Engine always fixes it: `shape:[4,6]`; a
//! sharded data op of a mesh declares the global rows, so a rank's B is those over the shards),
//! else 2. Generated inputs then have k·N·B rows. A micro-batch that is not a multiple of a data
//! op's fixed batch is refused at that op.

use std::borrow::Cow;
use std::fmt;

use indexmap::IndexMap;

use crate::diag::Diagnostic;
use crate::exec::feed::{at_data_op, fed_inputs, generate_batch, slice_rows, DataOp, Feed};
use crate::exec::interp::{Interp, Rank, Sources, Stage};
use crate::exec::memory;
use crate::exec::scope::Scope;
use crate::exec::tensor::Tensor;
use crate::exec::unrunnable::{malformed_roles, missing_kernels};
use crate::ir::Module;

/// Options of [`run`].
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Micro-steps per step (`--k-steps`).
    pub k_steps: usize,
    /// Simulated data-parallel ranks (`--ranks`).
    pub ranks: usize,
    /// Training steps (`--steps`).
    pub steps: usize,
    /// Rows per micro-step and rank; by default the feed's rows / (k·N), or 2 for generated data.
    pub micro_batch: Option<usize>,
    /// Seed of generated inputs and random initializers (`--seed`).
    pub seed: u64,
    /// Inputs and initial state (`--feed`).
    pub feed: Option<Feed>,
    /// The most bytes of tensors the run holds at once (`--max-memory`; `memory`).
    pub max_memory: u64,
    /// Every pass stops with an error at the first op boundary past this instant (`--timeout`).
    pub deadline: Option<std::time::Instant>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            k_steps: 1,
            ranks: 1,
            steps: 1,
            micro_batch: None,
            seed: 0,
            feed: None,
            max_memory: memory::DEFAULT_MAX_MEMORY,
            deadline: None,
        }
    }
}

/// What a run produced.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// Loss of each micro-step of each step (mean over ranks), when the program has a loss.
    pub losses: Vec<Vec<Option<f32>>>,
    /// Each rank's scope at the end.
    pub scopes: Vec<Scope>,
    /// Gradients the optimizer ops consumed in the last optimize pass (rank 0), by parameter.
    pub grads: IndexMap<String, Tensor>,
    pub k_steps: usize,
    pub ranks: usize,
    pub micro_batch: usize,
}

impl fmt::Display for RunReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "ranks {}, k_steps {}, micro-batch {}",
            self.ranks, self.k_steps, self.micro_batch
        )?;
        for (s, micro) in self.losses.iter().enumerate() {
            let shown: Vec<String> = micro
                .iter()
                .map(|l| l.map_or("-".into(), |v| format!("{v:.6}")))
                .collect();
            let known: Vec<f32> = micro.iter().flatten().copied().collect();
            if known.is_empty() {
                writeln!(f, "step {s}: no loss found")?;
            } else {
                let mean = known.iter().map(|&v| v as f64).sum::<f64>() / known.len() as f64;
                writeln!(
                    f,
                    "step {s}: loss {mean:.6}  (micro-steps: {})",
                    shown.join(", ")
                )?;
            }
        }
        Ok(())
    }
}

/// Most simulated ranks (`--ranks`): each is a full replica of the scope.
pub const MAX_RANKS: usize = 1024;

/// Runs the startup program (if any) once and returns `n` identical replicas, with `state`
/// (e.g. a feed file's `state_init`) replacing what the startup computed. The replicas are
/// counted against the memory limit before they are made.
pub fn init_ranks(
    module: &Module,
    label: &str,
    seed: u64,
    state: &IndexMap<String, Tensor>,
    n: usize,
) -> Result<Vec<Rank>, Diagnostic> {
    init_ranks_with_sources(module, Sources::default(), label, seed, state, n)
}

/// [`init_ranks`] for a module read from `sources`: errors at an op show its line.
pub fn init_ranks_with_sources(
    module: &Module,
    sources: Sources<'_>,
    label: &str,
    seed: u64,
    state: &IndexMap<String, Tensor>,
    n: usize,
) -> Result<Vec<Rank>, Diagnostic> {
    let n = n.max(1);
    if n > MAX_RANKS {
        return Err(Diagnostic::error(format!(
            "{n} ranks requested; the executor simulates at most {MAX_RANKS}"
        )));
    }
    let mut ranks = vec![Rank::new(Scope::new())];
    if let Some(startup) = &module.startup {
        let mut it = Interp::with_source(
            &module.ctx,
            startup,
            sources.startup,
            &format!("{label} (startup)"),
            seed,
        )?;
        it.run(&mut ranks, &[IndexMap::new()], Stage::Full)?;
    }
    for (k, t) in state {
        ranks[0].scope.set(k, t.clone());
    }
    let scope = ranks[0].scope.clone();
    let replica: u64 = scope.iter().map(|(_, t)| t.data().bytes()).sum();
    memory::reserve_bytes(
        &format_args!("{label}: {n} replicas of the scope (one per rank)"),
        replica.checked_mul(n as u64),
    )
    .map_err(|e| e.into_diagnostic(""))?;
    Ok((0..n).map(|_| Rank::new(scope.clone())).collect())
}

/// The batch for one step: the feed's inputs, or seeded data of `rows` rows.
pub fn step_batch(
    module: &Module,
    feed: Option<&Feed>,
    rows: usize,
    seed: u64,
) -> Result<IndexMap<String, Tensor>, Diagnostic> {
    step_batch_with_sources(module, Sources::default(), feed, rows, seed).map(Cow::into_owned)
}

/// [`step_batch`] for a module read from `sources`: errors at a data op show its line. A feed's
/// inputs are borrowed, not copied: the run already holds them (and is charged for them).
pub fn step_batch_with_sources<'f>(
    module: &Module,
    sources: Sources<'_>,
    feed: Option<&'f Feed>,
    rows: usize,
    seed: u64,
) -> Result<Cow<'f, IndexMap<String, Tensor>>, Diagnostic> {
    match feed {
        Some(f) if f.has_inputs || !f.inputs.is_empty() => Ok(Cow::Borrowed(&f.inputs)),
        _ => generate_batch(&module.ctx, &module.main, sources.main, rows, seed).map(Cow::Owned),
    }
}

/// The micro-batch for `k` micro-steps on `n` ranks (see the module docs): `explicit`, the
/// feed's, or the data ops' fixed batch; refused at a data op whose fixed batch it is not a
/// multiple of, and at a fed data op of rank 0 when the step's batch has more than one row.
pub fn micro_batch_for(
    module: &Module,
    sources: Sources<'_>,
    feed: Option<&Feed>,
    explicit: Option<usize>,
    k: usize,
    n: usize,
) -> Result<usize, Diagnostic> {
    let data = fed_inputs(&module.ctx, &module.main);
    let b = micro_batch_of_data(module, sources, &data, feed, explicit, k, n)?;
    // A fed input's first dimension is its rows, which the step splits over micro-steps and
    // ranks: a scalar has one row, which cannot be split. It is refused here, at its op, before
    // the first micro-batch is cut.
    if batch_rows(k, n, b)? > 1 {
        let scalar = data.iter().find(|d| d.shape.is_empty());
        if let Some(d) = scalar {
            return Err(at_data_op(
                sources.main,
                &module.main,
                d.op,
                format!(
                    "input `{}` is a scalar (shape []), but a fed input's first dimension is its rows: a step of {} rows (k_steps {k} × ranks {n} × micro-batch {b}) cannot be cut from it",
                    d.name,
                    k * n * b
                ),
            )
            .with_hint(
                "a value every row shares (a learning rate) is state: make the `pd_op.data` persistable (`persistable:[true]`); an input read per row needs a batch dimension",
            ));
        }
    }
    Ok(b)
}

/// [`micro_batch_for`] before the check of scalar inputs; `data` are the program's fed inputs.
fn micro_batch_of_data(
    module: &Module,
    sources: Sources<'_>,
    data: &[DataOp],
    feed: Option<&Feed>,
    explicit: Option<usize>,
    k: usize,
    n: usize,
) -> Result<usize, Diagnostic> {
    let first_fed = || {
        feed.and_then(|f| f.inputs.keys().next())
            .and_then(|name| data.iter().find(|d| &d.name == name))
    };
    let at_first = |d: Diagnostic| match first_fed() {
        Some(op) => match at_data_op(sources.main, &module.main, op.op, String::new()).location {
            Some(l) => Diagnostic {
                location: Some(l),
                ..d
            }
            .with_note(format!("the feed's batch is `{}`'s rows", op.name)),
            None => d,
        },
        None => d,
    };
    let fed = feed.is_some_and(|f| f.batch_rows().is_some());
    let b = match explicit {
        None if !fed => {
            // The data ops' fixed batch: the least common multiple (each must divide it).
            let mut b: Option<usize> = None;
            for d in data {
                if let Some(db) = d.batch {
                    let l = match b {
                        None => Some(db),
                        Some(b) => (b / gcd(b, db)).checked_mul(db),
                    };
                    b = Some(l.ok_or_else(|| {
                        at_data_op(sources.main, &module.main, d.op, format!(
                            "the fixed batches of the program's data ops have no common multiple a 64-bit machine can count (`{}` declares {db} rows)", d.name
                        ))
                    })?);
                }
            }
            return Ok(b.unwrap_or(2));
        }
        _ => resolve_micro_batch(feed, explicit, k, n).map_err(at_first)?,
    };
    for d in data {
        if let Some(db) = d.batch {
            if b % db != 0 {
                return Err(at_data_op(
                    sources.main,
                    &module.main,
                    d.op,
                    format!(
                        "a micro-batch of {b} rows, but this `pd_op.data` declares a batch of {db} rows for `{}` (a rank's micro-batch must be a multiple of it)",
                        d.name
                    ),
                )
                .with_hint(match explicit {
                    Some(_) => format!(
                        "leave out --micro-batch (irw then uses {db}), or give a multiple of {db}"
                    ),
                    // The feed's rows, split over k micro-steps and n ranks, made `b`.
                    None => format!(
                        "the feed's rows split into {k} micro-step(s) of {b} rows per rank; feed {}{k} × {n} rank(s) × {db} rows, or a multiple, for micro-batches of this fixed batch",
                        k.checked_mul(n)
                            .and_then(|x| x.checked_mul(db))
                            .map_or(String::new(), |rows| format!("{rows} = "))
                    ),
                }));
            }
        }
    }
    Ok(b)
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Rows of one step's batch: `k_steps × ranks × micro-batch`, refused when it overflows.
pub fn batch_rows(k: usize, n: usize, b: usize) -> Result<usize, Diagnostic> {
    k.checked_mul(n)
        .and_then(|kn| kn.checked_mul(b))
        .ok_or_else(|| {
            Diagnostic::error(format!(
                "k_steps {k} × ranks {n} × micro-batch {b} rows is more than a 64-bit machine can count"
            ))
        })
}

/// Micro-batch size for `k` micro-steps on `n` ranks.
fn resolve_micro_batch(
    feed: Option<&Feed>,
    explicit: Option<usize>,
    k: usize,
    n: usize,
) -> Result<usize, Diagnostic> {
    let from_feed = feed.and_then(Feed::batch_rows);
    match (explicit, from_feed) {
        (Some(b), Some(rows)) if batch_rows(k, n, b)? != rows => Err(Diagnostic::error(format!(
            "the feed has {rows} rows, but k_steps {k} × ranks {n} × micro-batch {b} = {}",
            b * k * n
        ))),
        (Some(0), _) => Err(Diagnostic::error("the micro-batch must be at least 1")),
        (Some(b), _) => Ok(b),
        (None, Some(rows)) if rows % batch_rows(k, n, 1)? == 0 && rows > 0 => Ok(rows / (k * n)),
        (None, Some(rows)) => Err(Diagnostic::error(format!(
            "the feed's {rows} rows do not split into k_steps {k} × ranks {n} equal micro-batches"
        ))),
        (None, None) => Ok(2),
    }
}

/// Feeds of micro-step `i` for every rank (see the module docs for the layout). The rows are
/// copies, counted against the memory limit here: over it, the error names the feed's rows,
/// not the first op that happens to run next.
pub fn micro_feeds(
    batch: &IndexMap<String, Tensor>,
    n: usize,
    k: usize,
    b: usize,
    i: usize,
) -> Result<Vec<IndexMap<String, Tensor>>, Diagnostic> {
    let feeds = (0..n)
        .map(|r| slice_rows(batch, r * k * b + i * b, b))
        .collect::<Result<Vec<_>, _>>()?;
    memory::check_live().map_err(|e| {
        Diagnostic::error(format!(
            "the inputs of micro-step {} of {k} ({b} rows per rank, copied from the batch): {}",
            i + 1,
            e.message
        ))
        .with_hint("raise --max-memory, or feed fewer rows")
    })?;
    Ok(feeds)
}

/// A fresh memory budget of `limit` bytes for one run (or check), in force until the guard is
/// dropped. The feed's tensors, made before the run, are charged to it: the run holds them.
pub(crate) fn enter_budget(limit: u64, feed: Option<&Feed>) -> memory::Entered {
    let budget = memory::Budget::new(limit);
    if let Some(f) = feed {
        budget.charge(
            f.inputs
                .values()
                .chain(f.state.values())
                .map(|t| t.data().bytes())
                .sum(),
        );
    }
    budget.enter()
}

/// Executes `module` with the options' schedule.
pub fn run(module: &Module, opts: &RunOptions) -> Result<RunReport, Diagnostic> {
    run_with_sources(module, Sources::default(), opts)
}

/// [`run`] on a module read from `sources`: errors at an op show its line.
pub fn run_with_sources(
    module: &Module,
    sources: Sources<'_>,
    opts: &RunOptions,
) -> Result<RunReport, Diagnostic> {
    let programs = [(module, sources, "main")];
    if let Some(d) = malformed_roles(&programs).or_else(|| missing_kernels(&programs)) {
        return Err(d);
    }
    let _budget = enter_budget(opts.max_memory, opts.feed.as_ref());
    let (k, n) = (opts.k_steps.max(1), opts.ranks.max(1));
    let b = micro_batch_for(module, sources, opts.feed.as_ref(), opts.micro_batch, k, n)?;
    let rows = batch_rows(k, n, b)?;
    let empty = IndexMap::new();
    let state = opts.feed.as_ref().map_or(&empty, |f| &f.state);
    let mut ranks = init_ranks_with_sources(module, sources, "main", opts.seed, state, n)?;
    let mut interp =
        Interp::with_source(&module.ctx, &module.main, sources.main, "main", opts.seed)?;
    interp.set_deadline(opts.deadline);
    let mut losses = Vec::new();
    let mut grads = IndexMap::new();
    for s in 0..opts.steps.max(1) {
        let batch = step_batch_with_sources(
            module,
            sources,
            opts.feed.as_ref(),
            rows,
            opts.seed.wrapping_add(s as u64),
        )?;
        let mut step_losses = Vec::new();
        for i in 0..k {
            let feeds = micro_feeds(&batch, n, k, b, i)?;
            let stage = if i + 1 == k || Interp::schedules_itself(&module.ctx, &module.main) {
                Stage::Full
            } else {
                Stage::NoOptimize
            };
            interp.run(&mut ranks, &feeds, stage)?;
            let ls: Vec<f32> = ranks.iter().filter_map(|r| r.observed.loss).collect();
            step_losses.push(
                (!ls.is_empty())
                    .then(|| (ls.iter().map(|&v| v as f64).sum::<f64>() / ls.len() as f64) as f32),
            );
            if stage == Stage::Full {
                grads = ranks[0].observed.optimizer_grads.clone();
            }
        }
        losses.push(step_losses);
    }
    Ok(RunReport {
        losses,
        scopes: ranks.into_iter().map(|r| r.scope).collect(),
        grads,
        k_steps: k,
        ranks: n,
        micro_batch: b,
    })
}
