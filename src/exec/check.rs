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
//! **What a PASS needs.** Every row within tolerance, and:
//! - every compared value finite. A NaN or infinity in the rewritten program's tensors, or in
//!   a reference computed from them, fails the row (the columns say `NaN`/`inf`). When the
//!   *original's own* step is not finite (its loss, its gradients, its parameters after the
//!   step, or its gradient on a micro-batch), nothing can be judged: the report refuses, naming
//!   the tensor and the op that first produced the value, and never blames the rewrite;
//! - every compared gradient non-zero somewhere in the original's step. A gradient that is zero
//!   everywhere (or empty: a 0-size parameter) cannot tell a correct rewrite from one that feeds
//!   the optimizer zeros, so the row is `unchecked` and the result is a refusal too, with a hint
//!   to feed other inputs.
//!
//! **Loss reduction.** The original also runs on each micro-batch alone, which shows how its
//! loss reduces the batch: the full-batch gradient is the mean of the micro-batch gradients for
//! a mean loss and their sum for a sum loss. Gradient merge with `avg` (a 1/k scale) is the
//! full-batch step of a mean loss; without it the merged gradient is the gradient of the loss
//! summed over the k micro-batches, Σᵢ Lᵢ: the full-batch gradient for a sum loss, k times it
//! for a mean loss. The report states the relation it checks; a sum loss merged with `avg` is
//! named as such.
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
//! original's own micro-batch gradients.

use std::fmt;

use indexmap::IndexMap;

use crate::diag::Diagnostic;
use crate::exec::coupling::{self, BatchCoupling};
use crate::exec::dtype::DType;
use crate::exec::feed::Feed;
use crate::exec::interp::{non_finite, Interp, NonFinite, Rank, Sources, Stage};
use crate::exec::run::{
    batch_rows, init_ranks_with_sources, micro_batch_for, micro_feeds, step_batch_with_sources,
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
    /// [`crate::exec::memory`]).
    pub max_memory: u64,
    /// Every pass stops with an error at the first op boundary past this instant (`--timeout`).
    pub deadline: Option<std::time::Instant>,
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
            avg: true,
            feed: None,
            max_memory: crate::exec::memory::DEFAULT_MAX_MEMORY,
            deadline: None,
        }
    }
}

/// A row's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Within tolerance, and the comparison says something.
    Ok,
    /// Outside tolerance, missing, or not finite.
    Fail,
    /// Equal, but the comparison proves nothing: the reference gradient is zero everywhere (or
    /// empty), so a rewrite that fed the optimizer zeros would look the same.
    Unchecked,
    /// Within tolerance of a reference that is mostly rounding noise: the original's own two
    /// computations of it (the full batch, and its micro-batches combined) disagree by about
    /// as much as its largest value, so it is zero in exact arithmetic (a bias in front of a
    /// layer_norm under a mean loss). Judged to that noise level; it does not block a PASS.
    Noise,
}

impl Verdict {
    /// The word the report's verdict column prints.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Fail => "FAIL",
            Verdict::Unchecked => "unchecked",
            Verdict::Noise => "noise",
        }
    }
}

/// One compared tensor.
#[derive(Clone, Debug)]
pub struct Row {
    pub tensor: String,
    /// `grad`, `param`, `state`, `buffer`, `frozen`, `replica`.
    pub kind: &'static str,
    /// `None` where the row has no numbers (`frozen`); NaN when a compared value is NaN.
    pub max_abs: Option<f64>,
    pub max_rel: Option<f64>,
    pub verdict: Verdict,
    /// Why it failed or is unchecked, in words.
    pub note: String,
}

impl Row {
    pub fn ok(&self) -> bool {
        self.verdict == Verdict::Ok
    }
}

/// What a check concluded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every row agrees and means something: exit 0.
    Pass,
    /// Some row differs: the rewrite is wrong (exit 1).
    Fail,
    /// The check cannot judge: the original's own step is not finite, or some gradient is zero
    /// everywhere in it (exit 3).
    NotJudged,
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
    /// Set when the original cannot run on the full batch (its ops fix the batch size): why, at
    /// the op that refused it. The references are then its run micro-batch by micro-batch.
    pub fixed_batch: Option<String>,
    /// The relation between the merged and the original's gradients that the grad rows check.
    pub relation: String,
    /// Why nothing was judged: the original's own step is not finite.
    pub refusal: Option<String>,
    /// What the check did to the inputs it was given (printed under the header).
    pub notes: Vec<String>,
}

impl CheckReport {
    pub fn passed(&self) -> bool {
        self.outcome() == Outcome::Pass
    }

    pub fn outcome(&self) -> Outcome {
        if self.refusal.is_some() {
            Outcome::NotJudged
        } else if self.rows.iter().any(|r| r.verdict == Verdict::Fail) {
            Outcome::Fail
        } else if self.rows.iter().any(|r| r.verdict == Verdict::Unchecked) {
            Outcome::NotJudged
        } else {
            Outcome::Pass
        }
    }

    /// Whether the original is batch-coupled (its own verdict, whether or not the rows passed).
    pub fn batch_coupled(&self) -> bool {
        self.coupling.is_some()
    }

    pub fn failures(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.verdict == Verdict::Fail)
    }

    pub fn unchecked(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.verdict == Verdict::Unchecked)
    }
}

fn sci(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if v.is_nan() => "NaN".into(),
        Some(v) if v.is_infinite() => "inf".into(),
        Some(v) => format!("{v:.2e}"),
    }
}

impl fmt::Display for CheckReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let original = match (&self.coupling, &self.fixed_batch) {
            (Some(_), _) => format!(
                "{} micro-batches of {} rows per rank, one after another (batch-coupled)",
                self.k_steps, self.micro_batch
            ),
            (None, Some(_)) => format!(
                "{} micro-batches of {} rows per rank, one after another (its batch is fixed)",
                self.k_steps, self.micro_batch
            ),
            (None, None) => format!(
                "1 step of {} rows per rank",
                self.k_steps * self.micro_batch
            ),
        };
        writeln!(
            f,
            "irw check: k_steps {}, micro-batch {}, ranks {}; original: {original}",
            self.k_steps, self.micro_batch, self.ranks,
        )?;
        for n in &self.notes {
            writeln!(f, "note: {n}")?;
        }
        if let Some(why) = &self.fixed_batch {
            writeln!(f, "note: {why}")?;
        }
        if let Some(why) = &self.refusal {
            return writeln!(f, "result: NOT JUDGED: {why}");
        }
        writeln!(f, "relation: {}", self.relation)?;
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
                r.verdict.name()
            )?;
        }
        let fails: Vec<&Row> = self.failures().collect();
        let unchecked: Vec<&Row> = self.unchecked().collect();
        if let Some(c) = &self.coupling {
            c.explain(f, self.k_steps, self.micro_batch)?;
        }
        for r in &fails {
            writeln!(f, "FAIL {} ({}): {}", r.tensor, r.kind, r.note)?;
        }
        for r in &unchecked {
            writeln!(f, "UNCHECKED {} ({}): {}", r.tensor, r.kind, r.note)?;
        }
        let noise: Vec<&str> = self
            .rows
            .iter()
            .filter(|r| r.verdict == Verdict::Noise)
            .map(|r| {
                writeln!(f, "NOISE {} ({}): {}", r.tensor, r.kind, r.note)?;
                Ok(r.tensor.as_str())
            })
            .collect::<Result<_, fmt::Error>>()?;
        match self.outcome() {
            Outcome::Pass => match &self.coupling {
                None if self.fixed_batch.is_some() => writeln!(
                    f,
                    "result: PASS ({} tensors; against the original run micro-batch by micro-batch: its batch is fixed)",
                    self.rows.len()
                ),
                None if noise.is_empty() => {
                    writeln!(f, "result: PASS ({} tensors)", self.rows.len())
                }
                None => writeln!(
                    f,
                    "result: PASS ({} tensors; {} within the original's own rounding noise: {})",
                    self.rows.len(),
                    noise.len(),
                    noise.join(", ")
                ),
                Some(c) => c.verdict(f, self.k_steps, self.rows.len()),
            },
            Outcome::Fail => writeln!(
                f,
                "result: FAIL ({} of {} tensors)",
                fails.len(),
                self.rows.len()
            ),
            Outcome::NotJudged => writeln!(
                f,
                "result: NOT JUDGED ({} of {} tensors unchecked: a gradient that is zero everywhere in the original's step cannot tell a right rewrite from a wrong one)",
                unchecked.len(),
                self.rows.len()
            ),
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

fn max_magnitude(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

/// A comparison of a tensor with its reference.
struct Cmp {
    max_abs: f64,
    max_rel: f64,
    ok: bool,
    /// Why it failed before any number was compared (shapes, non-finite values).
    why: Option<String>,
}

/// Compares `a` with the reference `b` (both as f64): `|a − b| ≤ rtol·|b| + atol·S + noise` for
/// every element, `S` = the largest of `b`'s magnitudes and `scale` (the tensor's other
/// reference values), `noise` how far the reference is uncertain (0 but for gradients whose
/// original disagrees with itself by rounding). A non-finite value on either side fails, and
/// the columns say so (`NaN`, `inf`).
fn compare_values(a: &[f64], b: &[f64], rtol: f64, atol: f64, scale: f64, noise: f64) -> Cmp {
    if a.len() != b.len() {
        return Cmp {
            max_abs: f64::INFINITY,
            max_rel: f64::INFINITY,
            ok: false,
            why: Some(format!(
                "has {} elements, the reference {}",
                a.len(),
                b.len()
            )),
        };
    }
    let first_bad = |v: &[f64]| {
        v.iter()
            .position(|x| !x.is_finite())
            .map(|i| (i, if v[i].is_nan() { "NaN" } else { "inf" }))
    };
    let why = match (first_bad(a), first_bad(b)) {
        (Some((i, w)), _) => Some(format!("holds {w} (element {i})")),
        (None, Some((i, w))) => Some(format!(
            "is finite but its reference holds {w} (element {i})"
        )),
        (None, None) => None,
    };
    let max_b = max_magnitude(b).max(scale);
    let (mut max_abs, mut max_rel, mut ok) = (0.0f64, 0.0f64, why.is_none());
    for (x, y) in a.iter().zip(b) {
        let d = (x - y).abs();
        if d.is_nan() {
            max_abs = f64::NAN;
            max_rel = f64::NAN;
            ok = false;
            continue;
        }
        if d > rtol * y.abs() + atol * max_b + noise {
            ok = false;
        }
        if !max_abs.is_nan() {
            max_abs = max_abs.max(d);
        }
        if max_rel.is_nan() {
            continue;
        }
        if *y != 0.0 {
            max_rel = max_rel.max(d / y.abs());
        } else if d > 0.0 {
            max_rel = f64::INFINITY;
        }
    }
    Cmp {
        max_abs,
        max_rel,
        ok,
        why,
    }
}

/// [`compare_values`] of two tensors, which must also have the same shape.
fn compare(got: &Tensor, want: &Tensor, rtol: f64, atol: f64, scale: f64) -> Cmp {
    if got.shape() != want.shape() {
        return Cmp {
            max_abs: f64::INFINITY,
            max_rel: f64::INFINITY,
            ok: false,
            why: Some(format!(
                "has shape {:?}, the reference {:?}",
                got.shape(),
                want.shape()
            )),
        };
    }
    compare_values(
        &got.to_f64_vec(),
        &want.to_f64_vec(),
        rtol,
        atol,
        scale,
        0.0,
    )
}

/// How the original's loss reduces the batch, read off its gradients: the full-batch gradient
/// is the mean of the k micro-batch gradients (a mean loss) or their sum (a sum loss).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reduction {
    Mean,
    Sum,
    /// Neither, measured on gradients that are not all zero, in a forward that does not mix
    /// rows: the loss weighs the micro-batches unequally (a token mean over a mask, when they
    /// hold different token counts). No relation is assumed.
    Uneven,
    /// Not measured (k = 1, a batch-coupled forward, or gradients zero everywhere): no relation
    /// is assumed.
    Unknown,
}

/// The factor `f` for which `full ≈ f · sum` over every gradient (least squares), if they are
/// proportional at all.
fn proportion(full: &[&[f64]], sum: &[&[f64]]) -> Option<f64> {
    let (mut fs, mut ss, mut ff) = (0.0, 0.0, 0.0);
    for (f, s) in full.iter().zip(sum) {
        for (x, y) in f.iter().zip(s.iter()) {
            fs += x * y;
            ss += y * y;
            ff += x * x;
        }
    }
    if ss == 0.0 || !fs.is_finite() || !ss.is_finite() {
        return None;
    }
    let r = fs / ss;
    // residual² = ff − 2r·fs + r²·ss = ff − r·fs
    let resid = (ff - r * fs).max(0.0).sqrt();
    (resid <= 1e-2 * ff.sqrt()).then_some(r)
}

/// Whether `a` is `sum / k` (within 1e-3 of its norm): the mean of the micro-batch gradients.
fn is_mean_of(a: &[f64], sum: Option<&[f64]>, k: f64) -> bool {
    let Some(s) = sum.filter(|s| s.len() == a.len()) else {
        return false;
    };
    let (mut d, mut n) = (0.0, 0.0);
    for (x, y) in a.iter().zip(s) {
        d += (x - y / k).powi(2);
        n += (y / k).powi(2);
    }
    n > 0.0 && d.is_finite() && d.sqrt() <= 1e-3 * n.sqrt()
}

/// A hint for a gradient mismatch: is the rewritten gradient a multiple of the reference?
/// With k = 1 nothing is merged: the words are about the rewritten program's gradient and the
/// original's, and no 1/k scale is suspected. `sum_loss_averaged`: the loss sums over the batch
/// and the merge averaged it (then a ratio of 1/k has that name, not "applied twice").
/// `micro_sum`: the sum of the original's micro-batch gradients, when known; a merged gradient
/// that is their mean, under a loss whose full-batch gradient is not, is named as such.
fn scale_hint(
    a: &[f64],
    b: &[f64],
    k: usize,
    avg: bool,
    reduction: Reduction,
    micro_sum: Option<&[f64]>,
) -> String {
    let bb: f64 = b.iter().map(|v| v * v).sum();
    let aa: f64 = a.iter().map(|v| v * v).sum();
    let single = k == 1;
    let what = if single {
        "the rewritten program's gradient"
    } else {
        "the merged gradient"
    };
    if aa == 0.0 && bb > 0.0 {
        return format!("{what} is zero everywhere (the reference is not): the optimizer was fed a buffer nothing accumulated into?");
    }
    if bb == 0.0 || a.len() != b.len() {
        return if single {
            "the rewritten program's gradient differs from the original's".into()
        } else {
            "the merged gradient differs from the reference".into()
        };
    }
    let ratio = a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>() / bb;
    let resid: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - ratio * y).powi(2))
        .sum::<f64>()
        .sqrt();
    let proportional = resid <= 1e-3 * bb.sqrt() * ratio.abs().max(1e-12);
    let kf = k as f64;
    let near = |r: f64| (ratio - r).abs() <= 1e-3 * r.abs();
    if single {
        return if proportional {
            format!("the rewritten program's gradient is {ratio:.4}× the original's")
        } else {
            "the rewritten program's gradient differs from the original's (not by a constant factor)"
                .into()
        };
    }
    let reference = if avg {
        "the full-batch gradient"
    } else {
        "the gradient of the summed loss"
    };
    match () {
        _ if proportional && near(1.0 / kf) && avg && reduction == Reduction::Sum => format!(
            "the merged gradient is 1/{k} of the full-batch gradient: the loss sums over the batch (the full-batch gradient is the sum of the micro-batch gradients), and a sum loss merged with avg=true is divided by k; merge it with avg=false"
        ),
        _ if proportional && near(kf) && avg => format!(
            "the merged gradient is {k}× the full-batch gradient: the 1/k scale is missing"
        ),
        _ if proportional && near(kf) => format!(
            "the merged gradient is {k}× {reference}: a sum over the micro-batches scaled up again?"
        ),
        _ if proportional && near(1.0 / kf) && avg => format!(
            "the merged gradient is 1/{k} of the full-batch gradient: the 1/k scale is applied twice"
        ),
        _ if proportional && near(1.0 / kf) => format!(
            "the merged gradient is 1/{k} of {reference}: a 1/k scale is applied although avg=false"
        ),
        _ if proportional => format!("the merged gradient is {ratio:.4}× {reference}"),
        _ if avg && reduction == Reduction::Uneven && is_mean_of(a, micro_sum, kf) => format!(
            "the merged gradient is the mean of the {k} micro-batch gradients, but the full-batch gradient is not: the loss does not weigh the micro-batches alike (a token mean, sum(l·mask) / sum(mask), normalizes each micro-batch by its own token count; grad_merge.rw merges it with --set normalize=tokens)"
        ),
        _ => format!("the merged gradient differs from {reference} (not by a constant factor: \
              a scale applied per micro-step, or a missing or misplaced collective?)"),
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
    let mut orig =
        init_ranks_with_sources(original, original_src, "original", opts.seed, state, n)?;
    let notes = randomize_zero_weights(original, &mut orig, state, opts.seed);
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
    let batch = step_batch_with_sources(
        original,
        original_src,
        opts.feed.as_ref(),
        rows_per_step,
        opts.seed,
    )?;

    // A pass of the original on `feeds`; `grads` replace the gradients its optimizers consume
    // when not empty; `track`: record where a non-finite value first appears.
    let pass = |ranks: &mut Vec<Rank>,
                grads: IndexMap<String, Tensor>,
                feeds: &[Feeds],
                stage: Stage,
                track: bool| {
        let mut it = Interp::with_source(
            &original.ctx,
            &original.main,
            original_src.main,
            "original",
            opts.seed,
        )?;
        it.override_optimizer_grads(grads);
        it.set_deadline(opts.deadline);
        if track {
            it.track_non_finite();
        }
        it.run(ranks, feeds, stage)
    };
    let step = |ranks: &mut Vec<Rank>,
                grads: IndexMap<String, Tensor>,
                feeds: &[Feeds],
                track: bool| { pass(ranks, grads, feeds, Stage::Full, track) };
    // The original's own step must be finite, or nothing can be judged: say where it stops
    // being finite (a second run that looks at every op's results).
    let refuse = |ranks_at_start: &Vec<Rank>,
                  feeds: &[Feeds],
                  what: String,
                  value: &'static str,
                  on: &str|
     -> Result<CheckReport, Diagnostic> {
        let mut ranks = ranks_at_start.clone();
        step(&mut ranks, IndexMap::new(), feeds, true)?;
        let nf = ranks
            .iter()
            .find_map(|r| r.observed.first_non_finite.clone());
        Ok(CheckReport {
            rows: Vec::new(),
            k_steps: k,
            ranks: n,
            micro_batch: b,
            relation: String::new(),
            notes: notes.clone(),
            coupling: None,
            fixed_batch: None,
            refusal: Some(format!(
                "the original step is not finite{on}: {value} in {what}{}; the rewrite cannot be judged on these inputs",
                produced_by(&nf)
            )),
        })
    };
    let full_batch = micro_feeds(&batch, n, 1, k * b, 0)?;
    // A batch-coupled original: the references are its run micro-batch by micro-batch.
    let coupled = coupling::find(&original.ctx, &original.main, original_src.main);
    let combine = coupling::Combine::of(&original.ctx, &original.main);
    let micro_reference = |applied: &Vec<Rank>| {
        coupling::micro_reference(applied, k, combine, |ranks, i, stage| {
            pass(
                ranks,
                IndexMap::new(),
                &micro_feeds(&batch, n, k, b, i)?,
                stage,
                false,
            )
        })
    };
    let mut micro_ref = if coupled.is_empty() {
        None
    } else {
        Some(micro_reference(&applied)?)
    };
    // Original: one full step, rank r on rows [r·k·B, (r+1)·k·B). An original that cannot run
    // on k·B rows (its ops fix the batch size) is run micro-batch by micro-batch instead; when
    // that fails too, or the time limit stopped the full step, the full step's error stands.
    let mut fixed_batch = None;
    if micro_ref.is_none() {
        if let Err(e) = step(&mut orig, IndexMap::new(), &full_batch, false) {
            let timed_out = opts
                .deadline
                .is_some_and(|d| std::time::Instant::now() >= d);
            match micro_reference(&applied) {
                Ok(m) if k > 1 && !timed_out => {
                    let at = e.location.as_ref().map_or(String::new(), |l| {
                        format!("{}:{}:{}: ", l.file, l.line, l.col)
                    });
                    fixed_batch = Some(format!(
                        "the original cannot run on the full batch of {} rows per rank ({at}{}), but runs on micro-batches of {b}: its ops fix the batch size, so there is no full-batch step to compare with, and the references are its run micro-batch by micro-batch",
                        k * b,
                        e.message
                    ));
                    micro_ref = Some(m);
                }
                _ => return Err(e),
            }
        }
    }
    let ref_grads = match &micro_ref {
        Some(m) => m.grads.clone(),
        None => {
            for r in &orig {
                if let Some((what, value)) =
                    first_non_finite(r.observed.loss, &r.observed.optimizer_grads, &r.scope)
                {
                    return refuse(&applied, &full_batch, what, value, "");
                }
            }
            orig[0].observed.optimizer_grads.clone()
        }
    };

    // The original's gradient on each micro-batch alone: the merged gradient is a sum of k of
    // them, each rounded (to bf16 in a 16-bit program) before it is added, so a gradient's
    // rounding error scales with the largest of its parts, which cancellation across
    // micro-batches can make far larger than the full-batch gradient. Their sum also says how
    // the loss reduces the batch.
    let mut micro_max: IndexMap<String, f64> = IndexMap::new();
    let mut micro_sum: IndexMap<String, Vec<f64>> = IndexMap::new();
    if k > 1 {
        for i in 0..k {
            let mut ranks = applied.clone();
            let feeds = micro_feeds(&batch, n, k, b, i)?;
            step(&mut ranks, IndexMap::new(), &feeds, false)?;
            for r in &ranks {
                if let Some((what, value)) =
                    first_non_finite(r.observed.loss, &r.observed.optimizer_grads, &Scope::new())
                {
                    return refuse(
                        &applied,
                        &feeds,
                        what,
                        value,
                        &format!(" on micro-batch {} of {k}", i + 1),
                    );
                }
            }
            for (name, g) in &ranks[0].observed.optimizer_grads {
                let v = g.to_f64_vec();
                let m = micro_max.entry(name.clone()).or_insert(0.0);
                *m = m.max(max_magnitude(&v));
                let s = micro_sum
                    .entry(name.clone())
                    .or_insert_with(|| vec![0.0; v.len()]);
                if s.len() == v.len() {
                    s.iter_mut().zip(&v).for_each(|(a, x)| *a += x);
                }
            }
        }
    }
    let ref_f64: IndexMap<&str, Vec<f64>> = ref_grads
        .iter()
        .filter(|(_, t)| t.dtype().is_float())
        .map(|(name, t)| (name.as_str(), t.to_f64_vec()))
        .collect();
    let reduction = if k == 1 {
        Reduction::Unknown
    } else {
        let (full, sum): (Vec<&[f64]>, Vec<&[f64]>) = ref_f64
            .iter()
            .filter_map(|(name, f)| Some((f.as_slice(), micro_sum.get(*name)?.as_slice())))
            .filter(|(f, s)| f.len() == s.len())
            .unzip();
        let kf = k as f64;
        match proportion(&full, &sum) {
            Some(r) if (r - 1.0 / kf).abs() <= 1e-2 / kf => Reduction::Mean,
            Some(r) if (r - 1.0).abs() <= 1e-2 => Reduction::Sum,
            _ if coupled.is_empty() && sum.iter().any(|s| s.iter().any(|x| *x != 0.0)) => {
                Reduction::Uneven
            }
            _ => Reduction::Unknown,
        }
    };
    // The reference of each merged gradient and the relation it stands for.
    let (relation, factor) = match (k, opts.avg, reduction) {
        (1, _, _) => ("gradient = the original's gradient (k_steps 1: nothing is merged)".to_string(), Some(1.0)),
        (_, true, Reduction::Sum) => (format!(
            "merged gradient = full-batch gradient (avg=true; but the loss sums over the batch: the full-batch gradient is the sum of the {k} micro-batch gradients, not their mean)"
        ), Some(1.0)),
        (_, true, Reduction::Uneven) => ("merged gradient = full-batch gradient (avg=true; the full-batch gradient is neither the mean nor the sum of the micro-batch gradients here: the loss does not weigh the micro-batches alike, as a token mean over a mask does when they hold different token counts)".to_string(), Some(1.0)),
        (_, true, _) => ("merged gradient = full-batch gradient (avg=true: the mean of the micro-batch gradients)".to_string(), Some(1.0)),
        (_, false, Reduction::Mean) => (format!(
            "merged gradient = gradient of the loss summed over the {k} micro-batches (avg=false), which for this mean loss is {k} × the full-batch gradient"
        ), Some(k as f64)),
        (_, false, Reduction::Sum) => ("merged gradient = gradient of the loss summed over the micro-batches (avg=false), which for this sum loss is the full-batch gradient".to_string(), Some(1.0)),
        (_, false, Reduction::Uneven | Reduction::Unknown) => ("merged gradient = gradient of the loss summed over the micro-batches (avg=false): the sum of the original's micro-batch gradients".to_string(), None),
    };

    let relation = match (&fixed_batch, opts.avg, combine) {
        (Some(_), true, coupling::Combine::Average) => format!(
            "merged gradient = the mean of the original's {k} micro-batch gradients (avg=true, a mean loss; its batch is fixed, so no full-batch gradient exists)"
        ),
        (Some(_), false, _) => format!(
            "merged gradient = the sum of the original's {k} micro-batch gradients (avg=false; its batch is fixed, so no full-batch gradient exists)"
        ),
        _ => relation,
    };

    // Rewritten: k micro-steps.
    let mut rows = Vec::new();
    let mut it = Interp::with_source(
        &rewritten.ctx,
        &rewritten.main,
        rewritten_src.main,
        "rewritten",
        opts.seed,
    )?;
    it.set_deadline(opts.deadline);
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
            pass(&mut applied, rew_grads.clone(), &last, Stage::Full, false)?;
        }
        None => step(&mut applied, rew_grads.clone(), &full_batch, false)?,
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
    // What a correct merge computes from the original's own micro-batch gradients, where the
    // relation says the reference equals it: their mean (avg=true, a mean loss) or their sum
    // (avg=false). It differs from the reference only by rounding (another order of the same
    // sums), and that difference is how uncertain the reference itself is. It is trusted as
    // rounding only while it is small beside the program's gradients as a whole (1e-5 of the
    // largest): a forward that mixes rows would show far larger differences, and those stay
    // failures.
    let correct_combo = |name: &str| -> Option<Vec<f64>> {
        let s = micro_sum.get(name)?;
        let kf = k as f64;
        match (opts.avg, reduction, factor) {
            (true, Reduction::Mean, Some(_)) => Some(s.iter().map(|x| x / kf).collect()),
            (false, Reduction::Mean | Reduction::Sum, Some(_)) => Some(s.clone()),
            _ => None,
        }
    };
    let program_scale = ref_f64
        .values()
        .map(|v| max_magnitude(v))
        .chain(micro_max.values().copied())
        .fold(0.0f64, f64::max);
    // Gradients consumed by the optimizer, against the relation's reference.
    for (name, full) in &ref_grads {
        let (rt, at) = tol(full.dtype());
        let Some(got) = rew_grads.get(name) else {
            rows.push(Row {
                tensor: name.clone(),
                kind: "grad",
                max_abs: Some(f64::INFINITY),
                max_rel: Some(f64::INFINITY),
                verdict: Verdict::Fail,
                note: "no optimizer op of the rewritten program updated this parameter in the last micro-step".into(),
            });
            continue;
        };
        let full_v = full.to_f64_vec();
        let want: Vec<f64> = match (factor, micro_sum.get(name)) {
            (Some(f), _) => full_v.iter().map(|x| x * f).collect(),
            (None, Some(s)) => s.clone(),
            (None, None) => full_v.clone(),
        };
        let scale = micro_max.get(name).copied().unwrap_or(0.0);
        let noise = correct_combo(name)
            .filter(|c| c.len() == want.len())
            .map(|c| {
                want.iter()
                    .zip(&c)
                    .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
            })
            .filter(|n| n.is_finite() && *n <= at * program_scale)
            .unwrap_or(0.0);
        let a = got.to_f64_vec();
        let c = if got.shape() != full.shape() {
            compare(got, full, rt, at, scale)
        } else {
            compare_values(&a, &want, rt, at, scale, noise)
        };
        let (verdict, note) = if !c.ok {
            let note = match &c.why {
                Some(why) => format!("the rewritten gradient {why}"),
                None => scale_hint(
                    &a,
                    &want,
                    k,
                    opts.avg,
                    reduction,
                    micro_sum.get(name).map(|s| s.as_slice()),
                ),
            };
            (Verdict::Fail, note)
        } else if want.iter().all(|x| *x == 0.0) {
            let what = if want.is_empty() {
                "empty (a 0-size parameter)"
            } else {
                "zero everywhere"
            };
            (Verdict::Unchecked, format!(
                "the original's gradient is {what} on these inputs, and so is the rewritten one: a rewrite that fed this optimizer zeros would look the same; check on inputs that reach this parameter (--seed, --feed)"
            ))
        } else if noise > 0.1 * max_magnitude(&want) {
            (Verdict::Noise, format!(
                "the original's full-batch gradient and its micro-batch gradients combined differ by {}, beside a largest value of {}: this gradient is rounding noise (zero in exact arithmetic), compared to that level",
                sci(Some(noise)),
                sci(Some(max_magnitude(&want)))
            ))
        } else {
            (Verdict::Ok, String::new())
        };
        rows.push(Row {
            tensor: name.clone(),
            kind: "grad",
            max_abs: Some(c.max_abs),
            max_rel: Some(c.max_rel),
            verdict,
            note,
        });
    }
    // Persistables after the original's step on the rewritten gradients, each by its own
    // magnitude.
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
        match rew[0].scope.get(name) {
            Some(got) => {
                let c = compare(got, want, rt, at, 0.0);
                let note = match (&c.why, c.ok) {
                    (_, true) => String::new(),
                    (Some(why), _) => format!("the rewritten program's value {why}"),
                    (None, _) => format!(
                        "differs from the original's step on {} rows given the same gradients",
                        k * b
                    ),
                };
                rows.push(Row {
                    tensor: name.to_string(),
                    kind,
                    max_abs: Some(c.max_abs),
                    max_rel: Some(c.max_rel),
                    verdict: if c.ok { Verdict::Ok } else { Verdict::Fail },
                    note,
                });
            }
            None => rows.push(Row {
                tensor: name.to_string(),
                kind,
                max_abs: Some(f64::INFINITY),
                max_rel: Some(f64::INFINITY),
                verdict: Verdict::Fail,
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
        let c = compare(got, start, 0.0, 0.0, 0.0);
        if got.dtype().is_half() {
            // Accumulating k gradients in a 16-bit buffer loses most of their low bits.
            rows.push(Row {
                tensor: name.to_string(),
                kind: "buffer",
                max_abs: Some(c.max_abs),
                max_rel: Some(c.max_rel),
                verdict: Verdict::Fail,
                note: format!(
                    "is a {} buffer: gradients must be accumulated in float32",
                    got.dtype().attr_name()
                ),
            });
            continue;
        }
        let note = match (&c.why, c.ok) {
            (_, true) => String::new(),
            (Some(why), _) => format!("{why} after the step"),
            (None, _) => {
                format!(
                    "is not back at its initial value after the step (max |value − initial| = {})",
                    sci(Some(c.max_abs))
                ) + ": the buffer is never reset, so the next step would start from stale gradients"
            }
        };
        rows.push(Row {
            tensor: name.to_string(),
            kind: "buffer",
            max_abs: Some(c.max_abs),
            max_rel: Some(c.max_rel),
            verdict: if c.ok { Verdict::Ok } else { Verdict::Fail },
            note,
        });
    }
    // No update before the boundary.
    for (name, step) in &changed_early {
        rows.push(Row {
            tensor: name.clone(),
            kind: "frozen",
            max_abs: None,
            max_rel: None,
            verdict: Verdict::Fail,
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
                    max_abs: Some(
                        rank.scope
                            .get(name)
                            .map_or(f64::INFINITY, |t| compare(t, t0, 0.0, 0.0, 0.0).max_abs),
                    ),
                    max_rel: None,
                    verdict: Verdict::Fail,
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
        relation,
        fixed_batch,
        refusal: None,
        notes,
    })
}
