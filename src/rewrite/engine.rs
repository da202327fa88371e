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
//!
//! The driver itself is split as egg's is: [`apply`] runs the phases (the e-graph's equational
//! rules, then the structural ones, then the phase's `require` clauses), [`schedule`] decides
//! which rule is tried at which op and in what order, and [`limits`] stops a phase that runs
//! away.

use super::matcher::{Compiled, Match, Memo, Searcher};
use super::runtime::{as_op, as_value, Bindings, Caches, RtEnv};
use super::{Options, PhaseStats, RuleStats, Stats, TraceEntry, TracedOp};
use crate::diag::Diagnostic;
use crate::dialect::ResultRule;
use crate::ir::dist::OP_DIST_ATTR;
use crate::ir::{
    Attr, AttrDict, AttrId, BlockId, Context, Module, OpId, OpSyntax, Program, SlotType, Sym,
    TensorDist, Type, TypeId, ValueDef, ValueId, Which,
};
use crate::rules::compiled::{Action, Build, CompiledRule, InsertPoint, OperandSel};
use crate::rules::compiled::{Expr, ValueRef, Var};
use crate::rules::eval::{eval, eval_str};
use crate::rules::{Phase, RuleSet, Span, Val, ROLE_ATTR};
use crate::value::operators::EvalError;
use rustc_hash::{FxHashMap, FxHashSet};
use std::time::Instant;

mod actions;
mod builds;
mod dist;
mod limits;
mod markers;
mod retype;
mod schedule;
mod state;

use builds::BuildInfo;
use dist::DistContext;
use limits::ApplicationCap;
use markers::Cursor;
use schedule::{root_attrs_pass, OpOrder, RootIndex, Worklist};

/// Runs every phase of `rules` on `module`. Errors are diagnostics pointing at the rule file
/// (an `error` action, a guard that fails to evaluate, a rule that changed nothing, a limit,
/// a `require` not met). The rewritten program verifies ([`crate::dialect::verify_module`]), or
/// `apply` fails with the rule that broke it: no caller is handed an invalid program.
pub fn apply(module: &mut Module, rules: &RuleSet, opts: &Options) -> Result<Stats, Diagnostic> {
    let mut stats = Stats::default();
    apply_recording(module, rules, opts, &mut stats)?;
    Ok(stats)
}

/// [`apply`], recording into `stats` as it goes, so that what a failed run did (the
/// applications that led to an `error` action, a limit or an invalid program) is there for
/// `--trace` and `--stats` too.
pub fn apply_recording(
    module: &mut Module,
    rules: &RuleSet,
    opts: &Options,
    stats: &mut Stats,
) -> Result<(), Diagnostic> {
    let mut eng = Engine::new(module, rules);
    eng.cache.deadline = opts.deadline;
    for phase in &rules.phases {
        let start = Instant::now();
        // Equational rules first (the e-graph rebuilds the program: markers found after).
        let saturations = stats.egraph.len();
        super::equational::run_phase(eng.m, phase, opts, stats)?;
        if stats.egraph.len() > saturations {
            // The program was rebuilt: op ids no longer say which rule edited what, and its
            // layout count starts anew.
            stats.edited_by.clear();
            eng.order = None;
        }
        eng.markers_stale = true;
        eng.cache.marked.clear();
        stats.equational_rules += phase.rules.len() - phase.structural.len();
        let first_rule = stats.rules.len();
        let ran = eng.run_phase(phase, opts, stats);
        stats.phases.push(PhaseStats {
            name: phase.name.clone(),
            // The rules' own counts: a phase that failed still shows what it applied.
            applications: applications_since(stats, first_rule),
            egraph_changes: stats.egraph[saturations..]
                .iter()
                .map(|e| (e.report.elab.erased + e.report.elab.created) as u64)
                .sum(),
            time: start.elapsed(),
        });
        ran?;
        limits::requires(rules, phase, stats)?;
    }
    crate::dialect::verify_module(module).map_err(|e| invalid_result(module, &e, stats))?;
    Ok(())
}

/// The applications of the rules from `first_rule` on in `stats.rules` (one phase's rules).
fn applications_since(stats: &Stats, first_rule: usize) -> u64 {
    stats.rules[first_rule..]
        .iter()
        .map(|r| r.applications)
        .sum()
}

/// The error for a rewritten program that does not verify: a rule whose actions, on a program
/// its guards admit, break the program (an op moved above the definition of an operand, say).
/// It names the rule that last edited the op or the ops defining its operands, so the rule
/// author knows where to look; the program is never returned.
fn invalid_result(module: &Module, e: &crate::ir::VerifyError, stats: &Stats) -> Diagnostic {
    let d = e.to_diagnostic(module, None);
    let mut editors: Vec<String> = Vec::new();
    if let (Which::Main, Some(op)) = (e.which, e.op) {
        let defs = module
            .main
            .operands(op)
            .flatten()
            .filter_map(|v| module.main.defining_op(v));
        for r in std::iter::once(op)
            .chain(defs)
            .filter_map(|o| stats.editor_of(o))
        {
            if !editors.contains(&r) {
                editors.push(r);
            }
        }
    }
    if editors.is_empty() {
        d.with_note("the rewritten program is invalid: this is a bug in a rule or in irw")
    } else {
        d.with_note(format!(
            "made by {}: the rewritten program is invalid, a bug in that rule or in irw",
            editors.join(" and ")
        ))
    }
}

impl<'a> Engine<'a> {
    /// Runs the structural rules of `phase` to their fixpoint: at each op of the worklist, the
    /// rules rooted at its name, in rule order, each applied to its first match not applied
    /// before; the ops an application touched are tried again. Each application is counted in
    /// its rule's [`RuleStats`] as it is made.
    fn run_phase(
        &mut self,
        phase: &'a Phase,
        opts: &Options,
        stats: &mut Stats,
    ) -> Result<(), Diagnostic> {
        let rules = self.rules;
        let compiled: Vec<(&CompiledRule, Compiled)> = phase
            .structural
            .iter()
            .map(|r| (r, Compiled::new(self.m, r)))
            .collect();
        let first_stat = stats.rules.len();
        for r in &phase.structural {
            stats.rules.push(RuleStats {
                name: r.name.clone(),
                root: phase.root,
                location: format!("{}:{}", rules.sources[r.file].name, r.line),
                matches: 0,
                applications: 0,
            });
        }
        let cap = ApplicationCap::new(opts.max_applications, self.m.main.num_ops());
        let mut index = RootIndex::new(&compiled);
        let mut attr_pass: Vec<Vec<u8>> = vec![Vec::new(); compiled.len()];
        let order = match self.order.take() {
            Some(o) if o.holds_for(self.m) => o,
            _ => OpOrder::of(self.m),
        };
        let mut work = Worklist::seed(self.m, &order, &mut self.cache, &mut index, &compiled);
        self.order = Some(order);
        let mut memo = Memo::default();
        while let Some(op) = work.pop() {
            if opts.deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(limits::timeout(
                    &phase.name,
                    applications_since(stats, first_stat),
                ));
            }
            if !self.m.main.is_live(op) {
                continue;
            }
            let cands = index.candidates(self.m, &mut self.cache, &compiled, op);
            for &k in cands.iter() {
                let (lr, c) = &compiled[k];
                if !self.m.main.is_live(op)
                    || !c.root_accepts(self.m, &mut self.cache, op)
                    || !root_attrs_pass(&mut attr_pass[k], c, self.m, op)
                {
                    continue;
                }
                let mut s = Searcher {
                    m: self.m,
                    rules,
                    c,
                    memo: &memo,
                    cache: &mut self.cache,
                    rule_index: lr.index,
                    matches: 0,
                };
                let found = s.find(op, &mut self.scratch);
                stats.rules[first_stat + k].matches += s.matches;
                let found = found.map_err(|e| eval_diag(self.m, rules, lr, Some(op), e))?;
                if self.cache.timed_out {
                    return Err(limits::timeout(
                        &phase.name,
                        applications_since(stats, first_stat),
                    )
                    .with_note(format!(
                        "the time ran out while matching rule `{}` ({}:{})",
                        stats.rules[first_stat + k].name,
                        rules.sources[lr.file].name,
                        lr.line
                    )));
                }
                let Some(Match {
                    bindings,
                    ops: matched_ops,
                    key,
                }) = found
                else {
                    continue;
                };
                if opts.trace {
                    stats
                        .trace
                        .push(trace_entry(self.m, rules, lr, &matched_ops));
                }
                memo.insert(key);
                let touched = self.run(lr, bindings, &matched_ops)?;
                stats.rules[first_stat + k].applications += 1;
                for t in &touched {
                    stats.edited_by.set(*t, first_stat + k);
                }
                cap.check(rules, phase, &stats.rules[first_stat..], k)?;
                work.push(
                    self.m,
                    touched
                        .into_iter()
                        .chain(matched_ops)
                        .chain(std::iter::once(op)),
                );
            }
        }
        Ok(())
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

/// An expression of `lr` that failed while the rule was tried on, or applied to, `matched`:
/// an error at the expression, moved to the op ([`on_matched_op`]).
fn eval_diag(
    m: &Module,
    rules: &RuleSet,
    lr: &CompiledRule,
    matched: Option<OpId>,
    e: EvalError,
) -> Diagnostic {
    let d = Diagnostic::at(&rules.sources[lr.file], e.span.0, e.message);
    on_matched_op(m, lr, matched, d)
}

/// An error a rule raised on the op its first pattern matched (an `error` action, an
/// expression that cannot be computed for this op): what is wrong is that op of the program,
/// so the command line reports it at the op's line in the input
/// ([`Diagnostic::input_offset`]), with where the rule raised it as a note. An op a rule built
/// has no input position: the note names it, and the error stays at the rule.
fn on_matched_op(
    m: &Module,
    lr: &CompiledRule,
    matched: Option<OpId>,
    d: Diagnostic,
) -> Diagnostic {
    let Some(o) = matched else {
        return d;
    };
    let at = m.main.position(o);
    let mut d = d.with_note(format!(
        "raised by rule `{}` on main op #{} \"{}\"{}",
        lr.name,
        o.0,
        m.ctx.str(m.main.op_name(o)),
        match at {
            Some(off) => format!(" (input byte {off})"),
            None => String::new(),
        }
    ));
    d.input_offset = at;
    d
}

struct Engine<'a> {
    m: &'a mut Module,
    rules: &'a RuleSet,
    /// Per stage: the first and last op of the top block with that role (markers).
    stage_first: FxHashMap<i64, OpId>,
    stage_last: FxHashMap<i64, OpId>,
    /// The markers are to be found before they are next used: set at the start of each phase
    /// (an e-graph may have rebuilt the program), cleared by the scan at the phase's first
    /// application. A phase that applies nothing (most of them) does not scan the program.
    markers_stale: bool,
    /// Keyword arguments main had when the run started, by name.
    kwargs: FxHashMap<Sym, ValueId>,
    /// States the rules created in this run, with their types and keyword arguments: a `state`
    /// action naming one again reuses it when the type agrees and is an error otherwise.
    states: FxHashMap<Sym, (TypeId, ValueId)>,
    /// Names of the persistables the input already had (keyword arguments of main, parameters,
    /// what the startup program publishes), hashed at the first `state` action: a state named
    /// after one would silently alias it.
    persistables: Option<rustc_hash::FxHashSet<u64>>,
    /// Roles and effect classes by interned id.
    cache: Caches,
    /// The bindings a match is searched with (a complete match takes a copy).
    scratch: Bindings,
    /// By build id ([`Build::id`]), once the build ran: its name, dialect entry, and the
    /// attributes that do not depend on the match (evaluated once).
    builds: Vec<Option<BuildInfo>>,
    /// By build id: the interned attribute dictionaries of its ops by their match-dependent
    /// attributes. A rule applied 10^4 times builds the same few dictionaries, so they are made
    /// and hashed once, not once per application.
    dicts: Vec<FxHashMap<Vec<Attr>, AttrId>>,
    /// Dictionaries of builds whose match-dependent attributes are all queries of values'
    /// types ([`builds::BuildInfo::type_slots`]), by the build id and those types: such a
    /// dictionary is found without evaluating its attributes.
    dicts_by_types: FxHashMap<Box<[u32]>, AttrId>,
    /// The key of `dicts_by_types` being looked up (reused).
    types_key: Vec<u32>,
    /// Built ops' final attributes and result types in a dense program, by build id,
    /// dictionary, program and operand types ([`Engine::signature`]).
    signatures: FxHashMap<Box<[u32]>, builds::Signature>,
    /// The key of `signatures` being looked up (reused).
    signature_key: Vec<u32>,
    /// `if` conditions by address (rules outlive the run): the value of one that needs nothing
    /// from the match, `None` for one that must be evaluated at each application.
    fixed_conditions: FxHashMap<usize, Option<bool>>,
    /// Operand lists of ops being built, reused ([`Engine::build_parts`]).
    operand_lists: Vec<Vec<Option<ValueId>>>,
    /// The operands a build's match gives, reused ([`Engine::build_parts`]).
    given_lists: Vec<Vec<Option<Option<ValueId>>>>,
    /// `{place:Place(cpu),persistable:true}` of a state's keyword argument, once interned.
    kwarg_attrs: Option<AttrId>,
    /// The op the current application's first pattern matched (for `error` messages).
    matched: Option<OpId>,
    /// Distributions that ops built without distributed operands take: pushed by a build whose
    /// other operands are distributed (`scale_(%m, full())`: a constant replicated on their
    /// mesh) and by a state's declared type for its initializer (`exact`: the initializer is
    /// the state, a pending sum included).
    dist_ctx: Vec<DistContext>,
    /// The main program's ops in order, by name, kept from phase to phase while the layout
    /// is unchanged ([`OpOrder`]); dropped when an e-graph rebuilds the program.
    order: Option<OpOrder>,
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
            markers_stale: true,
            kwargs,
            states: FxHashMap::default(),
            persistables: None,
            cache: Caches::new(rules.exists),
            scratch: Bindings::new(0),
            builds: std::iter::repeat_with(|| None).take(rules.builds).collect(),
            dicts: vec![FxHashMap::default(); rules.builds],
            dicts_by_types: FxHashMap::default(),
            types_key: Vec::new(),
            signatures: FxHashMap::default(),
            signature_key: Vec::new(),
            fixed_conditions: FxHashMap::default(),
            operand_lists: Vec::new(),
            given_lists: Vec::new(),
            kwarg_attrs: None,
            matched: None,
            dist_ctx: Vec::new(),
            order: None,
        }
    }

    fn role(&mut self, op: OpId) -> Option<i64> {
        self.cache.role(self.m, op)
    }

    /// Applies `lr`'s actions to its match (bindings `b`, matched ops `ops`); returns the ops
    /// they touched.
    fn run(
        &mut self,
        lr: &'a CompiledRule,
        mut b: Bindings,
        ops: &[OpId],
    ) -> Result<Vec<OpId>, Diagnostic> {
        if self.markers_stale {
            // Matching does not move ops or change roles: the scan finds what it would have
            // found at the start of the phase.
            self.find_markers();
            self.markers_stale = false;
        }
        self.matched = ops.first().copied();
        let mut fx = Effects::default();
        for a in &lr.actions {
            self.action(lr, a, &mut b, &mut fx)?;
        }
        if fx.edits == 0 {
            let src = &self.rules.sources[lr.file];
            let name = self.m.ctx.str(self.m.main.op_name(ops[0])).to_string();
            return Err(Diagnostic::at(src, lr.name_span.0, format!("rule `{}` matched but changed nothing", lr.name))
                .with_note(format!("matched main op #{} \"{name}\"", ops[0].0))
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
        let matched = self.matched;
        eval(&mut env, e).map_err(|er| eval_diag(self.m, self.rules, lr, matched, er))
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
        let value = as_value(self.m, &v).ok_or_else(|| {
            self.err(
                lr,
                e.span(),
                format!("expected a value, found {}", v.a_kind()),
            )
        })?;
        // A result of an op this rule erased (in an `if` branch, which the loader's check does
        // not follow past the `if`) is defined nowhere.
        let erased = value
            .and_then(|v| self.m.main.defining_op(v))
            .is_some_and(|o| !self.m.main.is_live(o));
        if erased {
            return Err(self
                .err(lr, e.span(), "this value's op was erased by this rule")
                .with_hint(
                    "an action that reads a result must come before the `erase` of its op",
                ));
        }
        Ok(value)
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
