//! The equational half of the rewrite engine: pure ops in an egg e-graph, effectful ops in an
//! ordered skeleton (the Cranelift aegraph idea).
//!
//! # Bird's-eye view
//! ```text
//! top-level block ──build──▶ skeleton (effectful ops, in order) + e-graph (pure ops)
//!                             │
//!        EqRules ──prepare──▶ egg Runner (node/iteration/time limits) ──▶ saturated e-graph
//!                                                                          │
//!                      extract (acyclic, greedy DAG, deterministic) ◀─────┘
//!                             │
//!                   elaborate in original order ──verify──▶ program
//! ```
//!
//! - [`lang`]: the hand-written `egg::Language` ([`Node`]): ops carry name, interned attributes
//!   and result types; multi-result ops are tuples read through projections; values the e-graph
//!   cannot look into are epoch-stamped leaves.
//! - [`analysis`]: per e-class type and known constant; owns the [`Context`](crate::ir::Context)
//!   while the e-graph runs.
//! - [`build`]: which ops go where; buffers written in place and their epochs.
//! - [`pattern`]: the public rule types ([`EqRule`], [`Pattern`], [`Build`], [`Expr`]) the rule
//!   language compiles to, with builders for rules written in Rust.
//! - [`rewrite`]: rules as egg searchers/appliers (attribute tests, guards, computed attributes).
//! - [`run`]: [`Limits`] and [`Outcome`].
//! - [`extract`], [`elaborate`]: back to the IR.
//!
//! # Design decisions
//! - **Attributes are read from the node, not encoded as children.** Tensat puts attributes in
//!   the e-graph as leaf children; Paddle ops carry many attributes irrelevant to a rule
//!   (`op_role`, `stop_gradient`, `struct_name`), and as children they would multiply the
//!   e-graph and force every pattern to spell them out. Instead an op node holds its interned
//!   dictionary ([`AttrId`](crate::ir::AttrId)); a custom searcher tests or captures the few
//!   attributes a rule names. Hash-consing compares the dictionary id, so CSE only merges ops
//!   whose attributes are all identical (Paddle's six `full 0.25, op_role 2` merge; a
//!   `full_int_array` with `op_role 0` and one with `op_role 2` do not).
//! - **Every pure value of the input is a root.** The e-graph never deletes a value the input
//!   computes (removing dead code is a structural rule); a value disappears only when it is
//!   merged with an equal one, whose first occurrence is kept.
//! - **In-place writes are respected** (see [`build`]): the e-graph never merges or moves reads
//!   across a write, and never replaces a value that is itself written.
//!
//! Architecture invariant: the e-graph knows nothing about text or about any particular pass;
//! it sees the dialect table (which ops are pure, which operands are written) and the rules.
//!
//! # Example
//! [`saturate`] without rules merges duplicates: `tests::saturate_example` (in `tests/mod.rs`)
//! runs it on a program with two equal constants.

pub mod analysis;
pub mod build;
pub mod elaborate;
mod eval;
pub mod extract;
pub mod lang;
pub mod pattern;
pub mod rewrite;
pub mod run;

pub use analysis::{IrAnalysis, IrEGraph};
pub use elaborate::ElabStats;
pub use pattern::{
    AttrTest, Build, Cap, EqRule, Expr, Label, OpBuild, OpPattern, Pattern, Read, TypesBuild,
    Value, Var,
};
pub use run::{Limits, Options, Outcome};

use crate::diag::Diagnostic;
use crate::dialect::verify_program;
use crate::ir::{Module, Which};
use std::fmt;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

/// Per-rule figures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleStats {
    pub name: String,
    pub origin: Option<String>,
    /// Matches found (guards included), summed over iterations.
    pub matches: usize,
    /// Applications that changed the e-graph.
    pub applications: usize,
    /// Applications refused because the two sides had different types.
    pub type_rejections: usize,
    /// Applications whose right-hand side could not be computed for the match.
    pub build_failures: usize,
}

/// Time per phase.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PhaseTimes {
    pub build: Duration,
    pub run: Duration,
    pub extract: Duration,
    pub elaborate: Duration,
    pub verify: Duration,
}

/// What one saturation did (for `--stats`).
#[derive(Clone, Debug, PartialEq)]
pub struct EGraphReport {
    pub outcome: Outcome,
    pub iterations: usize,
    /// The limits this saturation ran under, the node limit resolved for its initial size.
    pub limits: Limits,
    /// Ops of the block that became e-nodes, and ops kept in the skeleton.
    pub pure_ops: usize,
    pub skeleton_ops: usize,
    /// E-graph size after building and after saturation.
    pub initial_nodes: usize,
    pub initial_classes: usize,
    pub nodes: usize,
    pub classes: usize,
    pub ops_before: usize,
    pub ops_after: usize,
    pub rules: Vec<RuleStats>,
    /// Unions whose analysis data disagreed (a rule stating a false equation on constants).
    pub conflicts: usize,
    /// Classes whose extracted node the greedy-DAG pass changed.
    pub extract_improved: usize,
    /// Classes the greedy-DAG pass explored, and its budget (see `extract`).
    pub extract_work: usize,
    pub extract_work_limit: usize,
    pub elab: ElabStats,
    pub times: PhaseTimes,
}

impl fmt::Display for EGraphReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The iteration-limit outcome already says how many iterations ran.
        match &self.outcome {
            Outcome::IterationLimit(_) => write!(f, "e-graph: {}", self.outcome)?,
            o => write!(f, "e-graph: {o} after {} iteration(s)", self.iterations)?,
        }
        writeln!(
            f,
            "; {} pure ops, {} skeleton ops",
            self.pure_ops, self.skeleton_ops
        )?;
        writeln!(
            f,
            "e-graph: limits {} iterations, {} e-nodes, {:.3} s",
            self.limits.iter_limit,
            self.limits.nodes_for(self.initial_nodes),
            self.limits.time_limit.as_secs_f64()
        )?;
        writeln!(
            f,
            "e-graph: {} e-nodes / {} e-classes built, {} / {} after saturation",
            self.initial_nodes, self.initial_classes, self.nodes, self.classes
        )?;
        writeln!(
            f,
            "e-graph: ops {} -> {} (kept {}, erased {}, created {}, fallbacks {})",
            self.ops_before,
            self.ops_after,
            self.elab.kept,
            self.elab.erased,
            self.elab.created,
            self.elab.fallbacks
        )?;
        for r in &self.rules {
            writeln!(
                f,
                "rule {}{}: {} matches, {} applications{}{}",
                r.name,
                r.origin
                    .as_ref()
                    .map(|o| format!(" ({o})"))
                    .unwrap_or_default(),
                r.matches,
                r.applications,
                if r.type_rejections > 0 {
                    format!(", {} refused (type mismatch)", r.type_rejections)
                } else {
                    String::new()
                },
                if r.build_failures > 0 {
                    format!(", {} not buildable", r.build_failures)
                } else {
                    String::new()
                }
            )?;
        }
        if self.conflicts > 0 {
            writeln!(
                f,
                "e-graph: warning: {} union(s) of classes with different constants or types",
                self.conflicts
            )?;
        }
        let t = &self.times;
        write!(
            f,
            "e-graph time: build {:.3} ms, run {:.3} ms, extract {:.3} ms, elaborate {:.3} ms, verify {:.3} ms",
            t.build.as_secs_f64() * 1e3,
            t.run.as_secs_f64() * 1e3,
            t.extract.as_secs_f64() * 1e3,
            t.elaborate.as_secs_f64() * 1e3,
            t.verify.as_secs_f64() * 1e3
        )
    }
}

/// Saturates the top-level block of one program of `module` with `rules` and writes the result
/// back in place.
///
/// Pure ops of the block become e-nodes (identical ones merge unless [`Options::cse`] is off:
/// CSE needs no rule); effectful
/// ops, unknown ops and region ops (with everything inside them) stay in order. The rules run
/// under [`Options::limits`]; hitting one is reported in [`EGraphReport::outcome`], not an error. The
/// result is extracted (shared sub-terms counted once, never a cycle, deterministic) and
/// elaborated in the original op order, then verified.
///
/// With no rules and CSE off (or nothing to merge), the program is left exactly as it was.
///
/// # Errors
/// A rule that cannot be resolved (an op that is not pure, a result type that cannot be
/// inferred, an unbound variable, a duplicate rule name), or a program that fails verification
/// afterwards (a bug, reported as such). On a rule error the module is unchanged.
pub fn saturate(
    module: &mut Module,
    which: Which,
    rules: &[EqRule],
    opts: &Options,
) -> Result<EGraphReport, Diagnostic> {
    let ctx = std::mem::take(&mut module.ctx);
    let prog = match which {
        Which::Main => &mut module.main,
        Which::Startup => match module.startup.as_mut() {
            Some(p) => p,
            None => {
                module.ctx = ctx;
                return Err(Diagnostic::error(
                    "the module has no startup program to saturate",
                ));
            }
        },
    };
    let (ctx, result) = saturate_program(prog, ctx, rules, opts);
    module.ctx = ctx;
    let mut report = result?;
    let t = Instant::now();
    let prog = match which {
        Which::Main => &module.main,
        Which::Startup => module.startup.as_ref().unwrap_or(&module.main),
    };
    verify_program(&module.ctx, prog).map_err(|(_, msg)| {
        Diagnostic::error(format!(
            "the program no longer verifies after e-graph rewriting: {msg}"
        ))
        .with_note("this is a bug in irw or an unsound rule")
    })?;
    report.times.verify = t.elapsed();
    Ok(report)
}

/// [`saturate`] on a program whose context has been moved out; always gives the context back.
fn saturate_program(
    prog: &mut crate::ir::Program,
    mut ctx: crate::ir::Context,
    rules: &[EqRule],
    opts: &Options,
) -> (crate::ir::Context, Result<EGraphReport, Diagnostic>) {
    let mut prepared = Vec::with_capacity(rules.len());
    let mut names = std::collections::BTreeSet::new();
    for r in rules {
        if !names.insert(r.name.as_str()) {
            let d = Diagnostic::error(format!("two equational rules are named `{}`", r.name));
            return (ctx, Err(d));
        }
        match rewrite::prepare(r, &mut ctx) {
            Ok(p) => prepared.push(p),
            Err(d) => return (ctx, Err(d)),
        }
    }
    let mut times = PhaseTimes::default();
    let ops_before = prog.num_ops();

    let t = Instant::now();
    let mut eg = IrEGraph::new(IrAnalysis::new(ctx));
    let built = build::build(&mut eg, prog, opts.cse);
    eg.rebuild();
    let (initial_nodes, initial_classes) = (eg.total_size(), eg.number_of_classes());
    times.build = t.elapsed();

    let t = Instant::now();
    let (eg, outcome, iterations) = run::run(eg, &prepared, &opts.limits);
    times.run = t.elapsed();

    let t = Instant::now();
    let choices = extract::extract(&eg);
    times.extract = t.elapsed();

    let t = Instant::now();
    let elab = elaborate::elaborate(prog, &eg, &built, &choices);
    times.elaborate = t.elapsed();

    let (nodes, classes) = (eg.total_size(), eg.number_of_classes());
    let conflicts = eg.analysis.conflicts;
    let mut ctx = eg.analysis.ctx;
    let elab = match elab {
        Ok(e) => e,
        Err(d) => return (ctx, Err(d)),
    };
    // New ops of a dist program get the `op_dist_attr` their types imply.
    for &op in &elab.created_ops {
        let operands: Vec<_> = prog
            .operands(op)
            .map(|v| v.map(|v| prog.value_type(v)))
            .collect();
        let results: Vec<_> = prog.results(op).map(|v| prog.value_type(v)).collect();
        let attrs = ctx.with_derived_dist_attr(prog.op_attrs(op), &operands, &results);
        prog.set_op_attrs(op, attrs);
    }
    let rules = prepared
        .iter()
        .map(|p| RuleStats {
            name: p.name.clone(),
            origin: p.origin.clone(),
            matches: p.counters.matches.load(Relaxed),
            applications: p.counters.applied.load(Relaxed),
            type_rejections: p.counters.type_rejections.load(Relaxed),
            build_failures: p.counters.build_failures.load(Relaxed),
        })
        .collect();
    let limits = Limits {
        node_limit: Some(opts.limits.nodes_for(initial_nodes)),
        ..opts.limits.clone()
    };
    let report = EGraphReport {
        outcome,
        iterations,
        limits,
        pure_ops: built.num_pure,
        skeleton_ops: built.num_skeleton,
        initial_nodes,
        initial_classes,
        nodes,
        classes,
        ops_before,
        ops_after: prog.num_ops(),
        rules,
        conflicts,
        extract_improved: choices.improved,
        extract_work: choices.work,
        extract_work_limit: choices.work_limit,
        elab,
        times,
    };
    (ctx, Ok(report))
}

#[cfg(test)]
mod tests;
