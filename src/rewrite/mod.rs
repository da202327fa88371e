//! The structural rewrite engine: runs the structural rules of a [`RuleSet`](crate::rules::RuleSet) on a [`Module`](crate::ir::Module),
//! phase by phase, each phase to a fixpoint.
//!
//! ```text
//! for phase in rules.phases:                      (in order)
//!     worklist = every op of main some rule of the phase can be rooted at, in
//!                program order (from an index of the ops by name, kept while no op
//!                is placed or taken out)
//!     while op = worklist.pop():
//!         for rule in phase (in file order) whose first pattern accepts op:
//!             find a match rooted at op (backtracking over the other patterns,
//!             reached through operands and use lists), guards true, not applied before
//!             apply its actions; push every op they touched (and op again)
//! ```
//!
//! Why this shape:
//! - **Generic primitives only.** The engine knows patterns, guards and the actions of the rule
//!   language (build, rewire, replace, erase, move, set attributes, create state); the dialect
//!   table tells it operand names, effect classes and result types. Which ops a pass touches,
//!   the names of its buffers and its parameters live in `.rw` files.
//! - **A rule fires at most once on the same ops.** Each application is remembered by the tuple
//!   of ops its patterns matched, so a rule that adds something without removing its match
//!   (zero a buffer at the end of a stage) terminates. A rule whose actions change nothing is
//!   reported as a rule bug, never retried.
//! - **O(1) insertion points.** `at end of optimize` / `at start of optimize` use per-stage
//!   markers (the last/first op of the stage), found once and kept up to date; an op is never
//!   placed by rescanning the block. Only when a marker op itself is moved or erased is it
//!   looked up again.
//! - **Bounded.** The number of applications per phase is capped (`Options::max_applications`);
//!   hitting the cap is an error naming the rules that fired most.
//!
//! The engine runs rules in their lowered form, computed once when the rule files were loaded
//! (`rules::resolver`): structural rules as `rules::compiled::CompiledRule`s (a match's bindings
//! are a vector indexed by the rule's slots; selectors, stages and builtins already resolved;
//! only op names are interned here, once per run), never the syntax tree. Equational rules
//! (`rewrite a: lhs => rhs;`), lowered to the e-graph's rules, are run by [`equational`] and
//! saturated in the e-graph at the start of their phase, before the phase's structural rules
//! run; [`Stats`] keeps the e-graph's report per phase and program.
//!
//! How a caller runs it (the CLI does exactly this):
//!
//! ```ignore
//! let rules = irw::load_rules(&paths, &sets)?;           // parse, resolve, --set
//! // The rewritten program verifies, or this fails naming the rule that broke it.
//! let stats = irw::rewrite(&mut module, &rules, &RewriteOptions { trace, ..Default::default() })?;
//! if stats_flag { eprint!("{}", stats.render()); }
//! for line in &stats.trace { eprintln!("{line}"); }      // with --trace
//! ```

mod engine;
pub mod equational;
mod guard;
mod marked;
mod matcher;
mod runtime;

pub use engine::{apply, apply_recording};

use std::fmt::Write;
use std::time::Duration;

/// How to run the engine.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Record one line per application in [`Stats::trace`].
    pub trace: bool,
    /// Cap on the applications of one rule in a phase (`--max-applications`); 0 means
    /// `16 × ops + 1000`, ops counted when the phase starts.
    pub max_applications: usize,
    /// Wall-clock deadline (`--timeout`): checked before each worklist item; passing it is an
    /// error, so a runaway rule set cannot keep a CI job busy forever. An e-graph saturation
    /// stops at it too (its own time limit shortened to what is left).
    pub deadline: Option<std::time::Instant>,
    /// Limits of each e-graph saturation (`--egraph-iters`, `--egraph-nodes`, `--egraph-time`).
    pub egraph: crate::egraph::Limits,
}

/// What the engine did.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    pub rules: Vec<RuleStats>,
    pub phases: Vec<PhaseStats>,
    /// With [`Options::trace`]: one entry per application, in order (see [`Stats::trace_lines`]).
    pub trace: Vec<TraceEntry>,
    /// Equational rules seen (run through the e-graph, see `equational`).
    pub equational_rules: usize,
    /// One entry per e-graph saturation (phase × program).
    pub egraph: Vec<equational::PhaseEGraph>,
    /// Which structural rule last built, moved or changed each main-program op (see
    /// `EditedBy`). An invalid rewritten program names it.
    pub edited_by: EditedBy,
}

/// Per main-program op (arena index), the structural rule that last built, moved or changed it,
/// as an index into [`Stats::rules`]. A vector by op rather than a map: a large program's rules
/// record hundreds of thousands of edits, and an indexed store is one write each where a hash
/// map would rehash as it grows. Cleared when an e-graph rebuilds the program (op ids then
/// name other ops).
#[derive(Debug, Clone, Default)]
pub struct EditedBy {
    /// By op index: the rule index plus one; 0 for an op no rule edited.
    rule: Vec<u32>,
}

impl EditedBy {
    /// Records that rule `rule` edited `op`.
    pub fn set(&mut self, op: crate::ir::OpId, rule: usize) {
        let i = op.index();
        if i >= self.rule.len() {
            self.rule.resize((i + 1).max(self.rule.len() * 2), 0);
        }
        self.rule[i] = u32::try_from(rule + 1).unwrap_or(0);
    }

    /// The rule that last edited `op`, if one did.
    pub fn get(&self, op: crate::ir::OpId) -> Option<usize> {
        match self.rule.get(op.index()) {
            Some(&r) if r > 0 => Some(r as usize - 1),
            _ => None,
        }
    }

    /// Forgets every edit.
    pub fn clear(&mut self) {
        self.rule.clear();
    }
}

impl Stats {
    /// Applications so far of the rule named `name` that command-line rule file `root` brought
    /// in: a structural rule's, or an equational rule's over every e-graph rule it stands for
    /// and every saturation. A file given twice is two roots, each counting its own run.
    pub fn applications_of(&self, root: usize, name: &str) -> u64 {
        let structural: u64 = self
            .rules
            .iter()
            .filter(|r| r.root == root && r.name == name)
            .map(|r| r.applications)
            .sum();
        let equational: u64 = self
            .egraph
            .iter()
            .filter(|e| e.root == root)
            .flat_map(|e| &e.report.rules)
            .filter(|r| {
                let base = r.name.split('#').next().unwrap_or(&r.name);
                base.strip_suffix("<=").unwrap_or(base) == name
            })
            .map(|r| r.applications as u64)
            .sum();
        structural + equational
    }

    /// `rule `r` (file:line)` for the rule that last edited main op `op`, if a structural rule
    /// did (see [`Stats::edited_by`]).
    pub fn editor_of(&self, op: crate::ir::OpId) -> Option<String> {
        let r = self.rules.get(self.edited_by.get(op)?)?;
        Some(format!("rule `{}` ({})", r.name, r.location))
    }
}

/// One rule application, for `--trace`.
#[derive(Debug, Clone)]
pub struct TraceEntry {
    pub rule: String,
    /// `file:line` of the rule.
    pub location: String,
    /// The ops the rule's patterns matched, first pattern first.
    pub ops: Vec<TracedOp>,
    /// For an equational rule, what it did in one e-graph saturation instead: the e-graph
    /// rewrites classes of terms, not ops, so there is one summary line per rule and
    /// saturation rather than one line per match.
    pub egraph: Option<String>,
}

impl TraceEntry {
    /// The entry as one line; see [`Stats::trace_lines`].
    pub fn render(&self, input: Option<&crate::SourceFile>) -> String {
        if let Some(summary) = &self.egraph {
            return format!("{}: rewrite {} {summary}", self.location, self.rule);
        }
        let ops: Vec<String> = self
            .ops
            .iter()
            .map(|o| match (o.offset, input) {
                (Some(off), Some(src)) => {
                    let (line, _) = src.line_col(off);
                    let text = src.line_text(off).trim();
                    let text = text.split(" {").next().unwrap_or(text);
                    format!("{}:{line}: {text}", src.name)
                }
                (Some(off), None) => {
                    format!("main op #{} \"{}\" (input byte {off})", o.index, o.name)
                }
                (None, _) => format!("main op #{} \"{}\" (built by a rule)", o.index, o.name),
            })
            .collect();
        format!(
            "{}: rule {} matched {}",
            self.location,
            self.rule,
            ops.join("; ")
        )
    }
}

impl std::fmt::Display for TraceEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render(None))
    }
}

/// A matched op as it was when the rule matched.
#[derive(Debug, Clone)]
pub struct TracedOp {
    pub name: String,
    /// Its index in the main program's arena (creation order: parsed ops first, in file order).
    pub index: u32,
    /// Its byte offset in the input, for an op that was parsed (not built by a rule).
    pub offset: Option<usize>,
}

#[derive(Debug, Clone)]
pub struct RuleStats {
    pub name: String,
    /// Index into [`crate::rules::RuleSet::roots`]: the command-line rule file that brought the
    /// rule in (a rule's name is unique within one such file and its imports).
    pub root: usize,
    /// `file:line` of the rule.
    pub location: String,
    /// Complete matches (patterns and guards), including ones applied before.
    pub matches: u64,
    pub applications: u64,
}

#[derive(Debug, Clone)]
pub struct PhaseStats {
    pub name: String,
    /// Structural rule applications.
    pub applications: u64,
    /// Ops the phase's e-graph saturations erased or created (0: they changed nothing).
    pub egraph_changes: u64,
    pub time: Duration,
}

impl Stats {
    /// The `--trace` report, one line per application:
    ///
    /// ```text
    /// rules/grad_merge.rw:36: rule accumulate matched prog.ir:37: (%43, %44) = "pd_op.sgd_" (%1, %0, %30, <<NULL VALUE>>)
    /// rules/grad_merge.rw:96: rule zero_scaled_buffer matched main op #41 "pd_op.add_" (built by a rule); main op #43 "pd_op.scale_" (built by a rule)
    /// rules/canonicalize.rw:20: rewrite fold_scale applied 2 time(s) in the e-graph (2 match(es); phase `canon`, main program)
    /// ```
    ///
    /// With the input's source, a parsed op is shown as `file:line:` and its line up to the
    /// attribute dictionary; without it, by byte offset.
    pub fn trace_lines(&self, input: Option<&crate::SourceFile>) -> Vec<String> {
        self.trace.iter().map(|t| t.render(input)).collect()
    }

    /// The `--stats` report.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "rewrite: {} phase(s)", self.phases.len());
        for p in &self.phases {
            let _ = writeln!(
                s,
                "  phase {:<16} {:>8} applications {:>10.3} ms",
                p.name,
                p.applications,
                p.time.as_secs_f64() * 1e3
            );
        }
        for r in &self.rules {
            let _ = writeln!(
                s,
                "  rule {:<28} {:>8} matches {:>8} applications  ({})",
                r.name, r.matches, r.applications, r.location
            );
        }
        equational::render(&mut s, &self.egraph);
        s
    }
}
