//! What stops a phase of structural rules before its fixpoint, each with the error it gives:
//! the per-rule application cap (`--max-applications`), the time limit (`--timeout`), and a
//! `require` clause the phase did not meet (egg's `Runner` limits, as errors: a rewrite that
//! stopped early is never written).

use crate::diag::Diagnostic;
use crate::rewrite::{RuleStats, Stats};
use crate::rules::{Phase, RuleSet};

/// The most items `append` grows a vector to. Each append makes the vector's type anew (a
/// `vec[...]` names every item's type, and types are interned), so a vector of k items costs
/// O(k²) time and memory over its appends: 1024 items take about 15 MiB.
pub(super) const MAX_APPENDED_ITEMS: usize = 1024;

/// The error of a run stopped by `--timeout`.
pub(super) fn timeout(phase: &str, applied: u64) -> Diagnostic {
    Diagnostic::error(format!(
        "rewriting stopped by the time limit (--timeout) in phase `{phase}` after {applied} rule applications"
    ))
    .with_hint("raise --timeout, or look for a rule that keeps firing with --stats")
}

/// How many times one rule may apply in one phase. It is per rule: independent rules that each
/// apply once per op never reach it together, a rule that applies more than 16 times per op
/// does.
pub(super) struct ApplicationCap {
    cap: usize,
    /// Where the number comes from, for the error.
    why: String,
}

impl ApplicationCap {
    /// `--max-applications N`, or 16 × the ops the phase starts with + 1000 when it is 0.
    pub fn new(max_applications: usize, ops_at_start: usize) -> ApplicationCap {
        if max_applications == 0 {
            ApplicationCap {
                cap: 16 * ops_at_start + 1000,
                why: format!("16 × {ops_at_start} ops + 1000"),
            }
        } else {
            ApplicationCap {
                cap: max_applications,
                why: "--max-applications".to_string(),
            }
        }
    }

    /// An error at rule `rule` of the phase whose statistics are `phase_rules` when it applied
    /// more often than the cap, listing the rules that applied most.
    pub fn check(
        &self,
        rules: &RuleSet,
        phase: &Phase,
        phase_rules: &[RuleStats],
        rule: usize,
    ) -> Result<(), Diagnostic> {
        if phase_rules[rule].applications as usize <= self.cap {
            return Ok(());
        }
        let mut top: Vec<usize> = (0..phase_rules.len()).collect();
        top.sort_by_key(|&j| std::cmp::Reverse(phase_rules[j].applications));
        const SHOWN: usize = 10;
        let mut list: Vec<String> = top
            .iter()
            .take(SHOWN)
            .map(|&j| {
                let r = &phase_rules[j];
                format!("{} {} ({})", r.name, r.applications, r.location)
            })
            .collect();
        if top.len() > SHOWN {
            list.push(format!("{} more", top.len() - SHOWN));
        }
        let lr = &phase.structural[rule];
        Err(Diagnostic::at(
            &rules.sources[lr.file],
            lr.name_span.0,
            format!(
                "phase `{}` stopped: rule `{}` applied more than {} times ({}): it may be looping",
                phase.name, lr.name, self.cap, self.why,
            ),
        )
        .with_note(format!("applications per rule so far: {}", list.join("; ")))
        .with_hint("a rule should remove what it matches, or add something its pattern then excludes; --max-applications N raises the cap"))
    }
}

/// The first `require` clause of `phase` that the applications counted in `stats` do not meet.
pub(super) fn requires(rules: &RuleSet, phase: &Phase, stats: &Stats) -> Result<(), Diagnostic> {
    for q in &phase.requires {
        let n: u64 = (q.rules.iter())
            .map(|r| stats.applications_of(phase.root, &r.name))
            .sum();
        if q.met(n) {
            continue;
        }
        // `rule `a``, or `rules `a` + `b``: what was counted.
        let names = q
            .rules
            .iter()
            .map(|r| format!("`{}`", r.name))
            .collect::<Vec<_>>()
            .join(" + ");
        let counted = match q.rules.len() {
            1 => format!("rule {names}"),
            _ => format!("rules {names}"),
        };
        let msg = match &q.message {
            Some(m) => m.clone(),
            None => format!(
                "required {counted} applied {n} time(s), this phase requires {}",
                q.wanted()
            ),
        };
        let mut d = Diagnostic::at(&rules.sources[q.file], q.span.0, msg);
        if q.message.is_some() {
            d = d.with_note(format!(
                "{counted} applied {n} time(s); required: {}",
                q.wanted()
            ));
        }
        let hint = if n == 0 {
            let its = if q.rules.len() == 1 {
                "its guard"
            } else {
                "their guards"
            };
            format!("no op of the program matches {names}, or {its} refused every match: `--trace` and `--stats` show what each rule matched")
        } else {
            "`--stats` shows each rule's matches and applications; an equational rule's count is of e-graph applications".to_string()
        };
        return Err(d.with_hint(hint));
    }
    Ok(())
}
