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
//! - **init**: every run starts from the original's persistables, so a persistable of the
//!   original that the rewritten startup program initializes otherwise (another learning rate,
//!   another initial moment; a value a random initializer draws is compared by dtype and shape
//!   only) is a failure of its own: the rewritten program would train from another start;
//! - **buffer**: state the rewrite introduced must be back at its initial value after the step
//!   (gradient-merge buffers zeroed for the next step), and must not be a 16-bit float
//!   (accumulation belongs in f32);
//! - **frozen**: nothing the original owns may change on micro-steps 1..k−1 (no update before the
//!   boundary);
//! - **replicas**: with several ranks, every rank ends with the same parameters.
//!
//! **Tolerance, per tensor** (the fixtures' rule): `|a − b| ≤ rtol·|b| + atol·S`, rtol = atol =
//! 1e-5 for f32 (1e-2 for bf16, 2e-3 for f16, exact for integers), overridable. Float tensors
//! of a program that keeps 16-bit persistables get the 16-bit tolerance (their values went
//! through 16-bit math). `S` is the largest magnitude among *that tensor's own* reference values:
//! for a parameter or state, the reference after the step; for a gradient, the full-batch
//! gradient and the same parameter's gradient on each micro-batch alone (the original run on
//! each micro-batch: the merged gradient adds k of them, each rounded before it is added, and
//! cancellation across micro-batches can make the sum far smaller than its parts). Never a
//! scale borrowed from another tensor: a one-element bias gradient beside a large weight
//! gradient is judged by its own magnitude, so a bias stepping on a zero buffer fails.
//!
//! **Noise allowance.** Where the relation says the reference equals what a correct merge makes
//! of the original's own micro-batch gradients, the difference between the two, measured on
//! the original alone, is added to a gradient's tolerance: it is rounding (another order of the
//! same sums), and a row that passes only with it is marked `noise`. It is trusted as rounding
//! only where it is of the order of that tensor's own rounding: within 100 times what the same
//! full step on the rows in reverse order changes in it (the same sums in another order), or
//! one unit in the last place of the program's largest gradient (a gradient zero in exact
//! arithmetic whose parts add exactly in any order); in a program whose forward or backward
//! computes in 16-bit floats (AMP O1: float32 parameters, bfloat16 matmuls), within that
//! dtype's tolerance of the tensor's own magnitude, since its gradients are rounded to 16 bits
//! on the full batch and on each micro-batch differently. And never beyond the float32 (or
//! 16-bit) tolerance of the program's largest gradient. A tensor whose rows meet differs by
//! its own magnitude, however large other tensors' gradients are, and fails. The allowance is
//! what was measured, never the bound, so a rewrite's error larger than the original's own
//! rounding still fails.
//!
//! **What a PASS needs.** Every row within tolerance, and:
//! - every compared value finite. A NaN or infinity in the rewritten program's tensors, or in
//!   a reference computed from them, fails the row (the columns say `NaN`/`inf`). When the
//!   *original's own* step is not finite (its loss, its gradients, its parameters after the
//!   step, or its gradient on a micro-batch), nothing can be judged: the report refuses, naming
//!   the tensor and the op that first produced the value, and never blames the rewrite;
//! - every compared gradient non-zero somewhere in the original's step. A gradient that is zero
//!   everywhere (or empty: a 0-size parameter) cannot tell a correct rewrite from one that feeds
//!   the optimizer zeros, so the row is `unchecked` and the result is a refusal too, with a hint
//!   to feed other inputs;
//! - at least one row. A program with nothing to compare (no parameter, optimizer or other
//!   persistable) is refused as well: a pass of zero tensors would pass any rewrite.
//!
//! **Loss reduction.** The original also runs on each micro-batch alone, which shows how its
//! loss reduces the batch: the full-batch gradient is the mean of the micro-batch gradients for
//! a mean loss and their sum for a sum loss. These are read off the gradients as backward hands
//! them to the optimize stage (what a merge accumulates), not as the optimizers consume them: a
//! global-norm clip scales each batch's gradients by a factor of its own, so the clipped
//! gradients of a mean loss are neither a mean nor a sum of anything. For the same reason what
//! a correct merge makes the optimizers consume is measured by running the original's optimize
//! stage on its own micro-batch gradients combined (averaged, or summed for avg=false): that
//! is the reference of a merge without averaging whose loss is neither a mean nor a sum, and
//! it is how far the reference is uncertain by rounding (see the noise allowance). Gradient merge with `avg` (a 1/k scale) is the
//! full-batch step of a mean loss; without it the merged gradient is the gradient of the loss
//! summed over the k micro-batches, Σᵢ Lᵢ: the full-batch gradient for a sum loss, and for a
//! mean loss (told by the loss values, which an optimize stage cannot disguise) the full-batch
//! step with its backward seed scaled by k. Not k times the full-batch gradient the optimizers
//! consume: an optimize stage that is not linear in the gradients (a global-norm clip) turns k·g
//! into something else than k times what it makes of g. The report states the relation it
//! checks; a sum loss merged with `avg` is named as such.
//!
//! Programs with collectives run on 2 ranks by default, so moving a collective across the
//! accumulation is really exercised.
//!
//! A batch-coupled original (train-mode `batch_norm`: a row's output depends on the other rows of
//! its batch) has no full-batch step a gradient merge could equal ([`super::coupling`]). The report
//! then says so, naming the ops, and the references are the original run micro-batch by
//! micro-batch instead: gradients combined over the k micro-batches, parameters and state after
//! k forward/backward passes and one optimize step, and on micro-steps 1..k−1 the persistables
//! those passes leave (running statistics updated, nothing else changed).
//!
//! An original that fixes its batch size in its ops (Paddle's Engine programs slice a gathered
//! tensor at constant offsets, sized for one micro-batch) cannot run on the full batch of k·B
//! rows at all. There is no full-batch step to compare with; the references are then the
//! original run micro-batch by micro-batch, as for a batch-coupled program, and the report says
//! so in its header, a note naming the op that refused the full batch, and its relation line:
//! the merged gradient is checked against the mean (or, for a sum loss, the sum) of the
//! original's own micro-batch gradients. Any merge of any loss matches that, so whether the
//! rows of a micro-batch meet is measured too (the coupling detection needs a dynamic batch
//! dimension to know which dimension is the batch): with the first row of each micro-batch
//! moved to another, a row-independent loss's gradients summed over the micro-batches stay as
//! they are, and a change beyond rounding makes the original batch-coupled.
//!
//! The module is laid out as the check runs: [`plan`] fixes ranks, micro-batches, inputs and the
//! initial persistables; [`runs`] runs the original (its references) and the rewritten program
//! (its k micro-steps); [`relation`] reads how the loss reduces the batch and what the merged
//! gradient must therefore equal (a hint names grad_merge.rw's normalize=tokens for a
//! token-mean loss only when the caller found the rule files take it, [`Tokens`]); [`compare`]
//! holds the tolerance
//! policy and turns the runs into rows; [`report`] is what the command prints.

mod compare;
mod plan;
mod relation;
mod report;
mod runs;

use indexmap::IndexMap;

use crate::diag::Diagnostic;
use crate::exec::feed::Feed;
use crate::exec::interp::Sources;
use crate::exec::tensor::Tensor;
use crate::exec::unrunnable::{malformed_roles, missing_kernels, random_draws};
use crate::ir::Module;

pub use report::{CheckReport, Outcome};

/// One rank's inputs by `pd_op.data` name.
type Feeds = IndexMap<String, Tensor>;

/// Options of [`check`].
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// Micro-steps of the rewritten program (`--set k_steps=K` / `--k-steps`).
    pub k_steps: usize,
    /// Rows per micro-step and rank (`--micro-batch`); from the feed, the data ops' fixed
    /// batch, or 2.
    pub micro_batch: Option<usize>,
    /// Ranks (`--ranks`); default 2 if either program has collectives, else 1.
    pub ranks: Option<usize>,
    pub seed: u64,
    /// Override of the per-dtype relative tolerance (`--rtol`).
    pub rtol: Option<f64>,
    /// Override of the per-dtype tolerance relative to the tensor's largest value (`--atol`).
    pub atol: Option<f64>,
    /// Whether the merge averages the k micro-batch gradients (grad_merge.rw's `avg`): then the
    /// merged gradient is compared with the full-batch gradient; without it, with the gradient
    /// of the loss summed over the k micro-batches (see the module docs).
    pub avg: bool,
    /// Inputs and initial state (`--feed`).
    pub feed: Option<Feed>,
    /// The most bytes of tensors both programs' runs hold at once (`--max-memory`;
    /// `crate::exec::memory`).
    pub max_memory: u64,
    /// Every pass stops with an error at the first op boundary past this instant (`--timeout`).
    pub deadline: Option<std::time::Instant>,
    /// What the rule files do with the original under `--set normalize=tokens`, when the caller
    /// asked them: a failed merge of a token-mean loss names that setting only where it works.
    pub tokens: Option<Tokens>,
}

/// What grad_merge.rw's `--set normalize=tokens` does with the original, as the rule files
/// answered when applied to it. The rule files are asked, never imitated: which losses they
/// merge is theirs to say.
#[derive(Clone, Debug)]
pub enum Tokens {
    /// They merge it.
    Merged,
    /// They refuse it, with this message.
    Refused(String),
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
            tokens: None,
            avg: true,
            feed: None,
            max_memory: crate::exec::memory::DEFAULT_MAX_MEMORY,
            deadline: None,
        }
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

/// [`check`], with the files the programs were read from, so that an error at an op shows its
/// line.
pub fn check_with_sources(
    original: &Module,
    original_src: Sources<'_>,
    rewritten: &Module,
    rewritten_src: Sources<'_>,
    opts: &CheckOptions,
) -> Result<CheckReport, Diagnostic> {
    // Nothing runs when either program holds an op the executor cannot run, or a step that
    // draws random numbers.
    let programs = [
        (original, original_src, "original"),
        (rewritten, rewritten_src, "rewritten"),
    ];
    if let Some(d) = malformed_roles(&programs)
        .or_else(|| missing_kernels(&programs))
        .or_else(|| random_draws(&programs))
    {
        return Err(d);
    }
    // One budget for both programs' runs: they are held at once.
    let _budget = crate::exec::run::enter_budget(opts.max_memory, opts.feed.as_ref());
    let plan = plan::Plan::new(original, original_src, rewritten, rewritten_src, opts)?;
    let runner = runs::Original::new(original, original_src, opts);
    let mut reference = match runs::Reference::measure(&plan, &runner, opts.avg)? {
        Ok(r) => r,
        Err(refusal) => return Ok(plan.refused(refusal)),
    };
    let merged = runs::Merged::run(&plan, rewritten, rewritten_src, opts, &reference)?;
    let applied = reference.apply(&plan, &runner, &merged.grads)?;

    let tol = compare::Tolerance::new(&plan.init, opts.rtol, opts.atol);
    let mut rows = compare::gradients(
        &plan,
        &reference,
        &merged,
        &tol,
        opts.avg,
        opts.tokens.as_ref(),
    );
    rows.extend(compare::persistables(
        &plan, &reference, &applied, &merged, &tol,
    ));
    rows.extend(compare::initial_values(&plan));
    rows.extend(compare::buffers(&plan, &merged));
    rows.extend(compare::frozen(&plan, &merged));
    rows.extend(compare::replicas(&plan, &applied, &merged));
    // No row at all (an empty program, one without parameters or optimizers) proves nothing
    // about the rewrite: a PASS of zero tensors would let any rewrite through.
    let refusal = rows.is_empty().then(|| {
        "nothing to compare: the original program has no parameter, optimizer or other persistable state (no gradient, parameter or buffer to check)".to_string()
    });
    Ok(CheckReport {
        rows,
        k_steps: plan.k,
        ranks: plan.ranks,
        micro_batch: plan.micro_batch,
        coupling: reference.coupling(opts.avg),
        relation: reference.relation,
        fixed_batch: reference.fixed_batch,
        refusal,
        notes: plan.notes,
    })
}
