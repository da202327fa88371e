//! The worklist driver of structural rules: runs each phase to its fixpoint, matching rules at
//! the ops of a worklist and applying the first match not applied before. See the module docs of
//! [`crate::rewrite`] for the algorithm and its invariants.
//!
//! The engine's state ([`Engine`]) is shared by everything an application does; what it does
//! is split by concept, each a submodule adding methods to `Engine`:
//! - [`actions`]: one action of a rule (`replace`, `erase`, `move`, `set`, `in %o: x := ..`,
//!   `state`, `error`, ...);
//! - [`markers`]: insertion points (`at end of optimize`, `after %o`), kept up to date as ops
//!   are built and erased, never found by a rescan;
//! - [`builds`]: ops built by a rule, their attributes and result types;
//! - [`dist`]: the distribution an op built in an auto-parallel program takes;
//! - [`state`]: persistable state (a keyword argument of main plus its startup initializer).

use super::matcher::{Compiled, Match, Memo, Searcher};
use super::runtime::{as_op, as_value, Bindings, Caches, RtEnv};
use super::{Options, PhaseStats, RuleStats, Stats, TraceEntry, TracedOp};
use crate::diag::Diagnostic;
use crate::dialect::{Dialect, OpSpec, ResultRule};
use crate::ir::dist::OP_DIST_ATTR;
use crate::ir::{
    Attr, AttrDict, AttrId, BlockId, Context, Module, OpId, OpSyntax, Program, SlotType, Sym,
    TensorDist, Type, TypeId, ValueDef, ValueId, Which,
};
use crate::rules::compiled::{Action, Build, CompiledRule, InsertPoint, OperandSel};
use crate::rules::compiled::{Expr, ValueRef};
use crate::rules::eval::{eval, eval_str};
use crate::rules::{RuleSet, Span, Val, ROLE_ATTR};
use crate::value::operators::EvalError;
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::VecDeque;
use std::time::Instant;

mod actions;
mod builds;
mod dist;
mod markers;
mod state;

use builds::BuildInfo;
use dist::DistContext;
use markers::Cursor;

/// The error of a run stopped by `--timeout`.
fn timeout(phase: &str, applied: u64) -> Diagnostic {
    Diagnostic::error(format!(
        "rewriting stopped by the time limit (--timeout) in phase `{phase}` after {applied} rule applications"
    ))
    .with_hint("raise --timeout, or look for a rule that keeps firing with --stats")
}

/// Runs every phase of `rules` on `module`. Errors are diagnostics pointing at the rule file
/// (an `error` action, a guard that fails to evaluate, a rule that changed nothing, the
/// application cap).
pub fn apply(module: &mut Module, rules: &RuleSet, opts: &Options) -> Result<Stats, Diagnostic> {
    let mut stats = Stats::default();
    let mut eng = Engine::new(module, rules);
    eng.cache.deadline = opts.deadline;
    for phase in &rules.phases {
        let start = Instant::now();
        // Equational rules first (the e-graph rebuilds the program: markers found after).
        let saturations = stats.egraph.len();
        super::equational::run_phase(eng.m, phase, opts, &mut stats)?;
        if stats.egraph.len() > saturations {
            // The program was rebuilt: op ids no longer say which rule edited what.
            stats.edited_by.clear();
        }
        eng.find_markers();
        stats.equational_rules += phase.rules.len() - phase.structural.len();
        let compiled: Vec<(&CompiledRule, Compiled)> = phase
            .structural
            .iter()
            .map(|r| (r, Compiled::new(eng.m, r)))
            .collect();
        let first_stat = stats.rules.len();
        for r in &phase.structural {
            stats.rules.push(RuleStats {
                name: r.name.clone(),
                location: format!("{}:{}", rules.sources[r.file].name, r.line),
                matches: 0,
                applications: 0,
            });
        }
        let ops_at_start = eng.m.main.num_ops();
        let (cap, why_cap) = if opts.max_applications == 0 {
            (
                16 * ops_at_start + 1000,
                format!("16 × {ops_at_start} ops + 1000"),
            )
        } else {
            (opts.max_applications, "--max-applications".to_string())
        };
        // The worklist starts with every op some rule of the phase can be rooted at, in program
        // order; `queued` (indexed by op) keeps an op on it at most once.
        let mut index = RootIndex::new(&compiled);
        let mut queued = vec![false; eng.m.main.op_capacity()];
        let mut work: VecDeque<OpId> = VecDeque::new();
        for op in eng.m.main.walk() {
            let cands = index.candidates(eng.m, &mut eng.cache, &compiled, op);
            if cands
                .iter()
                .any(|&k| compiled[k].1.root_accepts(eng.m, &mut eng.cache, op))
            {
                queued[op.index()] = true;
                work.push_back(op);
            }
        }
        let mut memo = Memo::default();
        let mut applied: u64 = 0;
        while let Some(op) = work.pop_front() {
            if opts.deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(timeout(&phase.name, applied));
            }
            queued[op.index()] = false;
            if !eng.m.main.is_live(op) {
                continue;
            }
            let cands = index.candidates(eng.m, &mut eng.cache, &compiled, op);
            for &k in cands.iter() {
                let (lr, c) = &compiled[k];
                if !eng.m.main.is_live(op) || !c.root_accepts(eng.m, &mut eng.cache, op) {
                    continue;
                }
                let ri = lr.index;
                let mut s = Searcher {
                    m: eng.m,
                    rules,
                    c,
                    memo: &memo,
                    cache: &mut eng.cache,
                    rule_index: ri,
                    matches: 0,
                };
                let found = s.find(op).map_err(|e| eval_diag(rules, lr, e))?;
                stats.rules[first_stat + k].matches += s.matches;
                if eng.cache.timed_out {
                    return Err(timeout(&phase.name, applied).with_note(format!(
                        "the time ran out while matching rule `{}` ({}:{})",
                        stats.rules[first_stat + k].name,
                        rules.sources[lr.file].name,
                        lr.line
                    )));
                }
                let Some(mt) = found else { continue };
                if opts.trace {
                    stats.trace.push(trace_entry(eng.m, rules, lr, &mt.ops));
                }
                memo.insert(mt.key.clone());
                let matched_ops = mt.ops.clone();
                let touched = eng.run(lr, mt)?;
                stats.rules[first_stat + k].applications += 1;
                applied += 1;
                for t in &touched {
                    stats.edited_by.insert(t.0, first_stat + k);
                }
                // The cap is per rule: independent rules that each apply once per op never
                // reach it together, a rule that applies more than 16 times per op does.
                if stats.rules[first_stat + k].applications as usize > cap {
                    let mut top: Vec<usize> = (0..compiled.len()).collect();
                    top.sort_by_key(|&j| {
                        std::cmp::Reverse(stats.rules[first_stat + j].applications)
                    });
                    const SHOWN: usize = 10;
                    let mut list: Vec<String> = top
                        .iter()
                        .take(SHOWN)
                        .map(|&j| {
                            let r = &stats.rules[first_stat + j];
                            format!("{} {} ({})", r.name, r.applications, r.location)
                        })
                        .collect();
                    if top.len() > SHOWN {
                        list.push(format!("{} more", top.len() - SHOWN));
                    }
                    return Err(Diagnostic::at(
                        &rules.sources[lr.file],
                        lr.name_span.0,
                        format!(
                            "phase `{}` stopped: rule `{}` applied more than {cap} times ({why_cap}): it may be looping",
                            phase.name,
                            lr.name,
                        ),
                    )
                    .with_note(format!("applications per rule so far: {}", list.join("; ")))
                    .with_hint("a rule should remove what it matches, or add something its pattern then excludes; --max-applications N raises the cap"));
                }
                if queued.len() < eng.m.main.op_capacity() {
                    queued.resize(eng.m.main.op_capacity(), false);
                }
                for t in touched
                    .into_iter()
                    .chain(matched_ops)
                    .chain(std::iter::once(op))
                {
                    if eng.m.main.is_live(t) && !queued[t.index()] {
                        queued[t.index()] = true;
                        work.push_back(t);
                    }
                }
            }
        }
        stats.phases.push(PhaseStats {
            name: phase.name.clone(),
            applications: applied,
            egraph_changes: stats.egraph[saturations..]
                .iter()
                .map(|e| (e.report.elab.erased + e.report.elab.created) as u64)
                .sum(),
            time: start.elapsed(),
        });
        for q in &phase.requires {
            let n = stats.applications_of(&q.rule);
            if !q.met(n) {
                let msg = match &q.message {
                    Some(m) => m.clone(),
                    None => format!(
                        "required rule `{}` applied {n} time(s), this phase requires {}",
                        q.rule,
                        q.wanted()
                    ),
                };
                let mut d = Diagnostic::at(&rules.sources[q.file], q.span.0, msg);
                if q.message.is_some() {
                    d = d.with_note(format!(
                        "rule `{}` applied {n} time(s); required: {}",
                        q.rule,
                        q.wanted()
                    ));
                }
                let hint = if n == 0 {
                    format!("no op of the program matches `{}`, or its guard refused every match: `--trace` and `--stats` show what each rule matched", q.rule)
                } else {
                    "`--stats` shows each rule's matches and applications; an equational rule's count is of e-graph applications".to_string()
                };
                return Err(d.with_hint(hint));
            }
        }
    }
    Ok(stats)
}

/// A phase's rules indexed by the op names their first pattern may match (MLIR's
/// `FrozenRewritePatternSet`): the worklist tries at an op only the rules that can be rooted at
/// its name, instead of every rule of the phase. Built lazily, one entry per op name the phase
/// meets, because rules intern names the program does not have and the program gains names
/// as rules build ops.
struct RootIndex {
    /// By op name (`Sym` index): the indices into the phase's compiled rules, in rule order.
    by_name: Vec<Option<std::rc::Rc<[usize]>>>,
    /// By compiled rule: whether it can fire at all ([`CompiledRule::never_fires`]).
    fires: Vec<bool>,
}

impl RootIndex {
    fn new(compiled: &[(&CompiledRule, Compiled)]) -> RootIndex {
        RootIndex {
            by_name: Vec::new(),
            fires: compiled.iter().map(|(r, _)| !r.never_fires()).collect(),
        }
    }

    fn candidates(
        &mut self,
        m: &Module,
        cache: &mut Caches,
        compiled: &[(&CompiledRule, Compiled)],
        op: OpId,
    ) -> std::rc::Rc<[usize]> {
        let name = m.main.op_name(op);
        let i = name.0 as usize;
        if i >= self.by_name.len() {
            self.by_name.resize(i + 1, None);
        }
        let fires = &self.fires;
        self.by_name[i]
            .get_or_insert_with(|| {
                (0..compiled.len())
                    .filter(|&k| fires[k] && compiled[k].1.root_may_accept_name(m, cache, name))
                    .collect()
            })
            .clone()
    }
}

/// One `--trace` entry: the rule, where it is written, and the op(s) it matched, recorded
/// before the rule's actions change them.
fn trace_entry(m: &Module, rules: &RuleSet, lr: &CompiledRule, ops: &[OpId]) -> TraceEntry {
    TraceEntry {
        rule: lr.name.clone(),
        location: format!("{}:{}", rules.sources[lr.file].name, lr.line),
        ops: ops
            .iter()
            .map(|&o| TracedOp {
                name: m.ctx.str(m.main.op_name(o)).to_string(),
                index: o.0,
                offset: m.main.position(o),
            })
            .collect(),
        egraph: None,
    }
}

fn eval_diag(rules: &RuleSet, lr: &CompiledRule, e: EvalError) -> Diagnostic {
    Diagnostic::at(&rules.sources[lr.file], e.span.0, e.message)
}

struct Engine<'a> {
    m: &'a mut Module,
    rules: &'a RuleSet,
    /// Per stage: the first and last op of the top block with that role (markers).
    stage_first: FxHashMap<i64, OpId>,
    stage_last: FxHashMap<i64, OpId>,
    /// Keyword arguments of main by name.
    kwargs: FxHashMap<Sym, ValueId>,
    /// States the rules created in this run, with their types: a `state` action naming one
    /// again reuses it when the type agrees and is an error otherwise.
    states: FxHashMap<Sym, TypeId>,
    /// Names of the persistables the input already had (keyword arguments of main, parameters,
    /// what the startup program publishes), hashed at the first `state` action: a state named
    /// after one would silently alias it.
    persistables: Option<rustc_hash::FxHashSet<u64>>,
    /// Roles and effect classes by interned id.
    cache: Caches,
    /// Per op a rule builds: its name, dialect entry, and the attributes that do not depend on
    /// the match (evaluated once).
    builds: FxHashMap<*const Build, BuildInfo>,
    /// Interned attribute dictionaries of built ops by (build, match-dependent attributes): a
    /// rule applied 10^4 times builds the same few dictionaries, so they are made and hashed
    /// once, not once per application.
    dicts: FxHashMap<(*const Build, Vec<Attr>), AttrId>,
    /// `{place:Place(cpu),persistable:true}` of a state's keyword argument, once interned.
    kwarg_attrs: Option<AttrId>,
    /// The op the current application's first pattern matched (for `error` messages).
    matched: Option<OpId>,
    /// Distributions that ops built without distributed operands take: pushed by a build whose
    /// other operands are distributed (`scale_(%m, full())`: a constant replicated on their
    /// mesh) and by a state's declared type for its initializer (`exact`: the initializer is
    /// the state, a pending sum included).
    dist_ctx: Vec<DistContext>,
}

#[derive(Default)]
struct Effects {
    edits: usize,
    touched: Vec<OpId>,
}

impl<'a> Engine<'a> {
    fn new(m: &'a mut Module, rules: &'a RuleSet) -> Self {
        let top = m.main.top_block();
        let kwargs = m
            .main
            .block_kwargs(top)
            .iter()
            .map(|k| (k.name, k.value))
            .collect();
        Engine {
            m,
            rules,
            stage_first: FxHashMap::default(),
            stage_last: FxHashMap::default(),
            kwargs,
            states: FxHashMap::default(),
            persistables: None,
            cache: Caches::default(),
            builds: FxHashMap::default(),
            dicts: FxHashMap::default(),
            kwarg_attrs: None,
            matched: None,
            dist_ctx: Vec::new(),
        }
    }

    fn role(&mut self, op: OpId) -> Option<i64> {
        self.cache.role(self.m, op)
    }

    fn run(&mut self, lr: &'a CompiledRule, mt: Match) -> Result<Vec<OpId>, Diagnostic> {
        let mut b = mt.bindings;
        self.matched = mt.ops.first().copied();
        let mut fx = Effects::default();
        for a in &lr.actions {
            self.action(lr, a, &mut b, &mut fx)?;
        }
        if fx.edits == 0 {
            let src = &self.rules.sources[lr.file];
            let name = self.m.ctx.str(self.m.main.op_name(mt.ops[0])).to_string();
            return Err(Diagnostic::at(src, lr.name_span.0, format!("rule `{}` matched but changed nothing", lr.name))
                .with_note(format!("matched main op #{} \"{name}\"", mt.ops[0].0))
                .with_hint("this is a bug in the rule: it would match again forever; make its actions change the program or its guard exclude this case"));
        }
        Ok(fx.touched)
    }

    fn eval(
        &mut self,
        lr: &'a CompiledRule,
        b: &mut Bindings,
        e: &Expr,
    ) -> Result<Val, Diagnostic> {
        let mut env = RtEnv {
            m: self.m,
            rules: self.rules,
            b,
            cache: &mut self.cache,
        };
        eval(&mut env, e).map_err(|er| eval_diag(self.rules, lr, er))
    }

    fn err(&self, lr: &'a CompiledRule, span: Span, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::at(&self.rules.sources[lr.file], span.0, msg)
    }

    fn value_of(
        &mut self,
        lr: &'a CompiledRule,
        b: &mut Bindings,
        e: &Expr,
    ) -> Result<Option<ValueId>, Diagnostic> {
        let v = self.eval(lr, b, e)?;
        as_value(self.m, &v).ok_or_else(|| {
            self.err(
                lr,
                e.span(),
                format!("expected a value, found {}", v.a_kind()),
            )
        })
    }

    /// The op `%o` names in an action (its field, if any, is not read).
    fn op_of(
        &mut self,
        lr: &'a CompiledRule,
        b: &mut Bindings,
        r: &ValueRef,
    ) -> Result<OpId, Diagnostic> {
        let v = b
            .get(r.slot)
            .cloned()
            .ok_or_else(|| self.err(lr, r.name_span, format!("`{}` is not bound", r.name)))?;
        let o = as_op(self.m, &v).ok_or_else(|| {
            self.err(
                lr,
                r.name_span,
                format!("`{}` is not defined by an op", r.name),
            )
        })?;
        if !self.m.main.is_live(o) {
            return Err(self
                .err(
                    lr,
                    r.name_span,
                    format!("`{}` was erased by this rule", r.name),
                )
                .with_hint("an action on an op must come before its `erase`"));
        }
        Ok(o)
    }
}
