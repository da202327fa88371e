//! Equational rules run, phase by phase, through [`egraph::saturate`]: the rules were lowered to
//! the e-graph's rule type ([`egraph::EqRule`]) once, when the rule files were loaded
//! (by the rule resolver, `rules::resolver`; stored in [`Phase::equational`]).
//!
//! # How a phase runs
//! [`run_phase`] saturates the phase's equational rules on the main program, then on the startup
//! program when there is one, each under [`egraph::Limits`] (a limit being hit is reported in
//! `--stats`, never an error), before the phase's structural rules run to their fixpoint. The
//! e-graph also merges identical pure ops (hash-consing): a phase with equational rules gets
//! common-subexpression elimination for free. It never deletes a value the input computes
//! (see [`crate::egraph`]); dead pure ops are a structural rule's job (`rules/canonicalize.rw`).
//!
//! # Values published under a name
//! Paddle's executor gives a value published by `builtin.set_parameter` / `builtin.shadow_output`
//! the published name (it renames the variable), so one value published twice would give one of
//! the names nothing. In a startup program every zero bias initializer of one shape is the same
//! `pd_op.full`; merging them would be wrong. So, before saturating, the op defining each
//! published value gets a distinct marker attribute ([`PUBLISH_MARK`]) that keeps hash-consing
//! from merging it with anything, and the marker is removed afterwards.

use crate::diag::Diagnostic;
use crate::dialect::protocol::SCOPE_WRITERS;
use crate::egraph::{self, EGraphReport};
use crate::ir::{Attr, Module, OpId, Which};
use crate::rules::Phase;
use std::fmt::Write;

/// The attribute that keeps a published value's defining op from merging (see module docs).
const PUBLISH_MARK: &str = "__irw_published";

/// What one saturation of one phase did, for `--stats`.
#[derive(Debug, Clone)]
pub struct PhaseEGraph {
    pub phase: String,
    /// The phase's command-line rule file ([`crate::rules::Phase::root`]).
    pub root: usize,
    /// `main` or `startup`.
    pub program: &'static str,
    pub report: EGraphReport,
}

/// Runs the equational rules of `phase` (if it has any) on the main program and then on the
/// startup program under `opts.egraph` (and `opts.deadline`), appending what each saturation
/// did to `stats.egraph`, and with `opts.trace` one trace entry per rule that changed the
/// e-graph.
pub fn run_phase(
    module: &mut Module,
    phase: &Phase,
    opts: &crate::rewrite::Options,
    stats: &mut crate::rewrite::Stats,
) -> Result<(), Diagnostic> {
    let eq = &phase.equational;
    if eq.is_empty() {
        return Ok(());
    }
    let programs: &[(Which, &'static str)] = if module.startup.is_some() {
        &[(Which::Main, "main"), (Which::Startup, "startup")]
    } else {
        &[(Which::Main, "main")]
    };
    for &(which, program) in programs {
        let mut limits = opts.egraph.clone();
        if let Some(d) = opts.deadline {
            let left = d.saturating_duration_since(std::time::Instant::now());
            limits.time_limit = limits.time_limit.min(left);
        }
        let eg_opts = egraph::Options::default().with_limits(limits);
        mark_published(module, which);
        let result = egraph::saturate(module, which, eq, &eg_opts);
        unmark(module, which);
        let report = result.map_err(|d| {
            let msg = format!("phase `{}`, {program} program: {}", phase.name, d.message);
            Diagnostic { message: msg, ..d }
        })?;
        if opts
            .deadline
            .is_some_and(|d| std::time::Instant::now() >= d)
        {
            return Err(Diagnostic::error(format!(
                "rewriting stopped by the time limit (--timeout) in phase `{}` (e-graph of the {program} program: {})",
                phase.name, report.outcome
            ))
            .with_hint("raise --timeout, or lower --egraph-time or --egraph-nodes; --stats shows what the e-graph did"));
        }
        if opts.trace {
            for r in report.rules.iter().filter(|r| r.applications > 0) {
                stats.trace.push(crate::rewrite::TraceEntry {
                    rule: r.name.clone(),
                    location: r.origin.clone().unwrap_or_default(),
                    ops: vec![],
                    egraph: Some(format!(
                        "applied {} time(s) in the e-graph ({} match(es); phase `{}`, {program} program)",
                        r.applications, r.matches, phase.name
                    )),
                });
            }
        }
        stats.egraph.push(PhaseEGraph {
            phase: phase.name.clone(),
            root: phase.root,
            program,
            report,
        });
    }
    Ok(())
}

/// Gives the op defining each published value a distinct [`PUBLISH_MARK`] so that no two
/// published values merge.
fn mark_published(module: &mut Module, which: Which) {
    let ctx = &mut module.ctx;
    let Some(prog) = program_mut_split(which, &mut module.main, module.startup.as_mut()) else {
        return;
    };
    // The ops that publish a value under a name (Paddle's persistable state and fetches).
    let publish: Vec<_> = SCOPE_WRITERS.iter().map(|(n, _)| ctx.sym(n)).collect();
    let block = prog.top_block();
    let mut marked = rustc_hash::FxHashSet::default();
    let ops: Vec<OpId> = prog.block_ops(block).collect();
    for op in ops {
        if !publish.contains(&prog.op_name(op)) {
            continue;
        }
        let defs: Vec<OpId> = prog
            .operands(op)
            .flatten()
            .filter_map(|v| prog.defining_op(v))
            .collect();
        for d in defs {
            if !marked.insert(d) {
                continue;
            }
            let mut attrs = ctx.attrs(prog.op_attrs(d)).to_dict();
            attrs.set(PUBLISH_MARK, Attr::Int(marked.len() as i64));
            let id = ctx.intern_attrs(attrs);
            prog.set_op_attrs(d, id);
        }
    }
}

/// Removes the marks [`mark_published`] set, from the marked ops and from any op the rules
/// built by copying a marked op's attributes.
fn unmark(module: &mut Module, which: Which) {
    let ctx = &mut module.ctx;
    let Some(prog) = program_mut_split(which, &mut module.main, module.startup.as_mut()) else {
        return;
    };
    let block = prog.top_block();
    let ops: Vec<OpId> = prog.block_ops(block).collect();
    for op in ops {
        let d = ctx.attrs(prog.op_attrs(op));
        if d.get(PUBLISH_MARK).is_none() {
            continue;
        }
        let mut attrs = d.to_dict();
        attrs.remove(PUBLISH_MARK);
        let id = ctx.intern_attrs(attrs);
        prog.set_op_attrs(op, id);
    }
}

fn program_mut_split<'p>(
    which: Which,
    main: &'p mut crate::ir::Program,
    startup: Option<&'p mut crate::ir::Program>,
) -> Option<&'p mut crate::ir::Program> {
    match which {
        Which::Main => Some(main),
        Which::Startup => startup,
    }
}

/// The `--stats` lines for the e-graph saturations.
pub fn render(out: &mut String, runs: &[PhaseEGraph]) {
    for r in runs {
        let _ = writeln!(out, "  e-graph phase {} ({}):", r.phase, r.program);
        for line in r.report.to_string().lines() {
            let _ = writeln!(out, "    {line}");
        }
    }
}
