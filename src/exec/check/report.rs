//! What a check concluded: a row per compared tensor with its verdict, the outcome they add up
//! to, and the table `irw check` prints.

use std::fmt;

use crate::exec::coupling::BatchCoupling;

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
    /// Within tolerance only with the original's own rounding noise allowed for: its two
    /// computations of the reference (the full batch, and its micro-batches combined) disagree
    /// by about as much as its largest value, so it is zero in exact arithmetic (a bias in
    /// front of a layer_norm under a mean loss), or by more than float32 rounding explains in a
    /// program that computes in 16-bit floats (AMP O1). Judged to that measured level; it does
    /// not block a PASS.
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
    /// The check cannot judge: the original's own step is not finite, some gradient is zero
    /// everywhere in it, or there is nothing to compare (exit 4).
    NotJudged,
}

/// The outcome of `check`; `Display` prints the table.
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
    /// Why nothing was judged: the original's own step is not finite, or nothing was compared.
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

pub(super) fn sci(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if v.is_nan() => "NaN".into(),
        Some(v) if v.is_infinite() => "inf".into(),
        Some(v) => format!("{v:.2e}"),
    }
}

/// One line per row of `rows` saying why it got `verdict`: the explanation in full at the first
/// row giving it, and at a later row with the same explanation (every tensor of a wrong loss
/// fails for one reason) a pointer to that row, so a reader is not handed the paragraph once
/// per tensor.
fn explain(f: &mut fmt::Formatter, verdict: &str, rows: &[&Row]) -> fmt::Result {
    // By explanation: the first row that gave it.
    let mut first_of: std::collections::HashMap<&str, &Row> = Default::default();
    for r in rows {
        match first_of.get(r.note.as_str()) {
            Some(first) => writeln!(
                f,
                "{verdict} {} ({}): as {} ({}) above",
                r.tensor, r.kind, first.tensor, first.kind
            )?,
            None => {
                first_of.insert(&r.note, r);
                writeln!(f, "{verdict} {} ({}): {}", r.tensor, r.kind, r.note)?
            }
        }
    }
    Ok(())
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
        explain(f, "FAIL", &fails)?;
        explain(f, "UNCHECKED", &unchecked)?;
        let noise: Vec<&Row> = self
            .rows
            .iter()
            .filter(|r| r.verdict == Verdict::Noise)
            .collect();
        explain(f, "NOISE", &noise)?;
        let noise: Vec<&str> = noise.iter().map(|r| r.tensor.as_str()).collect();
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
