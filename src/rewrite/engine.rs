//! The worklist driver and the actions of structural rules. See the module docs of
//! [`crate::rewrite`] for the algorithm and its invariants.

use super::matcher::{memo_key, Compiled, Match, Memo, Searcher};
use super::runtime::{as_op, as_value, Bindings, Caches, RtEnv};
use super::{Options, PhaseStats, RuleStats, Stats, TraceEntry, TracedOp};
use crate::diag::Diagnostic;
use crate::dialect::{Dialect, OpSpec, ResultRule};
use crate::ir::dist::OP_DIST_ATTR;
use crate::ir::{
    Attr, AttrDict, AttrId, BlockId, Context, Module, OpId, OpSyntax, Program, SlotType, Sym,
    TensorDist, Type, TypeId, ValueDef, ValueId, Which,
};
use crate::rules::ast::{Action, Build, Expr, Ident, InsertPoint, OperandSel, Rule, Span, StrPart};
use crate::rules::eval::{eval, eval_str, EvalError};
use crate::rules::{LoadedRule, RuleSet, Val, ROLE_ATTR, STAGES};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::VecDeque;
use std::time::Instant;

/// The op that publishes a persistable value of the startup program under a name (Paddle's
/// `builtin.shadow_output {output_name}`), and the attributes of a persistable keyword argument
/// of main. Both are how the Paddle dialect represents persistable state, not choices of a pass.
const PUBLISH_OP: &str = "builtin.shadow_output";
const PUBLISH_NAME_ATTR: &str = "output_name";
const KWARG_ATTRS: &[(&str, &str)] = &[("place", "Place(cpu)"), ("persistable", "true")];

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
        let mut compiled = Vec::new();
        for (i, lr) in phase.rules.iter().enumerate() {
            match &lr.rule {
                Rule::Structural(r) => compiled.push((i, Compiled::new(eng.m, r))),
                Rule::Equational(_) => stats.equational_rules += 1,
            }
        }
        let first_stat = stats.rules.len();
        for lr in &phase.rules {
            if let Rule::Structural(r) = &lr.rule {
                stats.rules.push(RuleStats {
                    name: r.name.name.clone(),
                    phase: phase.name.clone(),
                    location: format!("{}:{}", rules.sources[lr.file].name, lr.line),
                    matches: 0,
                    applications: 0,
                });
            }
        }
        let cap = if opts.max_applications == 0 {
            16 * eng.m.main.num_ops() + 1000
        } else {
            opts.max_applications
        };
        // The worklist starts with every op some rule of the phase can be rooted at, in program
        // order; `queued` (indexed by op) keeps an op on it at most once.
        let mut queued = vec![false; eng.m.main.op_capacity()];
        let mut work: VecDeque<OpId> = VecDeque::new();
        for op in eng.m.main.walk() {
            if compiled
                .iter()
                .any(|(_, c)| c.root_accepts(eng.m, &mut eng.cache, op))
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
            for (k, (ri, c)) in compiled.iter().enumerate() {
                if !eng.m.main.is_live(op) || !c.root_accepts(eng.m, &mut eng.cache, op) {
                    continue;
                }
                let lr = &phase.rules[*ri];
                let mut s = Searcher {
                    m: eng.m,
                    rules,
                    c,
                    memo: &memo,
                    cache: &mut eng.cache,
                    rule_index: *ri,
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
                memo.insert(memo_key(*ri, &mt.ops));
                let matched_ops = mt.ops.clone();
                let touched = eng.run(
                    lr,
                    c.clauses.iter().filter_map(|cl| match cl {
                        crate::rules::ast::Clause::Action(a) => Some(a),
                        _ => None,
                    }),
                    mt,
                )?;
                stats.rules[first_stat + k].applications += 1;
                applied += 1;
                for t in &touched {
                    stats.edited_by.insert(t.0, first_stat + k);
                }
                if applied as usize > cap {
                    // Point at the rule that fired most: the likeliest to loop.
                    let mut top: Vec<usize> = (0..compiled.len()).collect();
                    top.sort_by_key(|&j| {
                        std::cmp::Reverse(stats.rules[first_stat + j].applications)
                    });
                    let list: Vec<String> = top
                        .iter()
                        .take(3)
                        .map(|&j| {
                            let r = &stats.rules[first_stat + j];
                            format!(
                                "{} ({} applications, {})",
                                r.name, r.applications, r.location
                            )
                        })
                        .collect();
                    let worst = &phase.rules[compiled[top[0]].0];
                    return Err(Diagnostic::at(
                        &rules.sources[worst.file],
                        worst.rule.name().span.0,
                        format!(
                            "phase `{}` stopped after {cap} rule applications: rule `{}` may be looping",
                            phase.name,
                            worst.rule.name().name
                        ),
                    )
                    .with_note(format!("most applied: {}", list.join("; ")))
                    .with_hint("a rule should remove what it matches, or add something its pattern then excludes"));
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

/// One `--trace` entry: the rule, where it is written, and the op(s) it matched, recorded
/// before the rule's actions change them.
fn trace_entry(m: &Module, rules: &RuleSet, lr: &LoadedRule, ops: &[OpId]) -> TraceEntry {
    TraceEntry {
        rule: lr.rule.name().name.clone(),
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

fn eval_diag(rules: &RuleSet, lr: &LoadedRule, e: EvalError) -> Diagnostic {
    Diagnostic::at(&rules.sources[lr.file], e.span.0, e.message)
}

/// Where the next built op goes.
#[derive(Debug, Clone, Copy)]
enum Cursor {
    After(OpId),
    Before(OpId),
    BlockStart(BlockId),
    BlockEnd(BlockId),
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
    /// what the startup program publishes), collected at the first `state` action: a state
    /// named after one would silently alias it.
    persistables: Option<rustc_hash::FxHashSet<String>>,
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

/// See [`Engine::dist_ctx`].
struct DistContext {
    dist: TensorDist,
    exact: bool,
}

struct BuildInfo {
    sym: Sym,
    spec: Option<&'static OpSpec>,
    /// Per attribute of the build: its value when it does not depend on the match.
    fixed: Vec<Option<Attr>>,
}

/// Whether an expression's value is the same for every match: no program values, captures,
/// queries or builds in it (parameters are fixed for a run).
fn is_fixed(e: &Expr) -> bool {
    match e {
        Expr::Int(..) | Expr::Float(..) | Expr::Bool(..) | Expr::Place(..) | Expr::Ident(_) => true,
        Expr::Str(s) => s.parts.iter().all(|p| match p {
            StrPart::Lit(_) => true,
            StrPart::Expr(e) => is_fixed(e),
        }),
        Expr::List(v, _) => v.iter().all(is_fixed),
        Expr::Unary { e, .. } => is_fixed(e),
        Expr::Binary { l, r, .. } => is_fixed(l) && is_fixed(r),
        Expr::If { c, t, e, .. } => is_fixed(c) && is_fixed(t) && is_fixed(e),
        Expr::Value(_)
        | Expr::Capture(_)
        | Expr::Call { .. }
        | Expr::Build(_)
        | Expr::Exists(..) => false,
    }
}

/// What an application did, for the worklist and the rule-bug check.
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

    /// Finds the first and last op of each stage (once per phase: one pass over the block).
    fn find_markers(&mut self) {
        self.stage_first.clear();
        self.stage_last.clear();
        let top = self.m.main.top_block();
        let mut cur = self.m.main.first_op(top);
        while let Some(op) = cur {
            if let Some(r) = self.cache.role(self.m, op) {
                self.stage_first.entry(r).or_insert(op);
                self.stage_last.insert(r, op);
            }
            cur = self.m.main.next_op(op);
        }
    }

    fn role(&mut self, op: OpId) -> Option<i64> {
        self.cache.role(self.m, op)
    }

    fn run(
        &mut self,
        lr: &'a LoadedRule,
        actions: impl Iterator<Item = &'a Action>,
        mt: Match<'a>,
    ) -> Result<Vec<OpId>, Diagnostic> {
        let mut b = mt.bindings;
        self.matched = mt.ops.first().copied();
        let mut fx = Effects::default();
        for a in actions {
            self.action(lr, a, &mut b, &mut fx)?;
        }
        if fx.edits == 0 {
            let src = &self.rules.sources[lr.file];
            let name = self.m.ctx.str(self.m.main.op_name(mt.ops[0])).to_string();
            return Err(Diagnostic::at(src, lr.rule.name().span.0, format!("rule `{}` matched but changed nothing", lr.rule.name().name))
                .with_note(format!("matched main op #{} \"{name}\"", mt.ops[0].0))
                .with_hint("this is a bug in the rule: it would match again forever; make its actions change the program or its guard exclude this case"));
        }
        Ok(fx.touched)
    }

    fn eval(
        &mut self,
        lr: &'a LoadedRule,
        b: &mut Bindings<'a>,
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

    fn err(&self, lr: &'a LoadedRule, span: Span, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::at(&self.rules.sources[lr.file], span.0, msg)
    }

    fn value_of(
        &mut self,
        lr: &'a LoadedRule,
        b: &mut Bindings<'a>,
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

    fn op_of(
        &mut self,
        lr: &'a LoadedRule,
        b: &mut Bindings<'a>,
        name: &Ident,
    ) -> Result<OpId, Diagnostic> {
        let v = b
            .value(&name.name)
            .cloned()
            .ok_or_else(|| self.err(lr, name.span, format!("`{}` is not bound", name.name)))?;
        as_op(self.m, &v).ok_or_else(|| {
            self.err(
                lr,
                name.span,
                format!("`{}` is not defined by an op", name.name),
            )
        })
    }

    fn action(
        &mut self,
        lr: &'a LoadedRule,
        a: &'a Action,
        b: &mut Bindings<'a>,
        fx: &mut Effects,
    ) -> Result<(), Diagnostic> {
        match a {
            Action::Let { name, value, .. } => {
                let v = self.eval(lr, b, value)?;
                b.set_capture(&name.name, v);
            }
            Action::If {
                cond, then, els, ..
            } => {
                let branch = match self.eval(lr, b, cond)? {
                    Val::Bool(true) => then,
                    Val::Bool(false) => els,
                    v => {
                        return Err(self.err(
                            lr,
                            cond.span(),
                            format!("`if` needs a bool, found {}", v.a_kind()),
                        ))
                    }
                };
                for a in branch {
                    self.action(lr, a, b, fx)?;
                }
            }
            Action::Error { message, span } => {
                let mut env = RtEnv {
                    m: self.m,
                    rules: self.rules,
                    b,
                    cache: &mut self.cache,
                };
                let msg = eval_str(&mut env, message).map_err(|e| eval_diag(self.rules, lr, e))?;
                let on = match self.matched {
                    Some(o) => format!(
                        " on main op #{} \"{}\"{}",
                        o.0,
                        self.m.ctx.str(self.m.main.op_name(o)),
                        match self.m.main.position(o) {
                            Some(off) => format!(" (input byte {off})"),
                            None => String::new(),
                        }
                    ),
                    None => String::new(),
                };
                return Err(self
                    .err(lr, *span, msg)
                    .with_note(format!("raised by rule `{}`{on}", lr.rule.name().name)));
            }
            Action::State {
                bind,
                name,
                ty,
                init,
                span,
            } => {
                let n = match self.eval(lr, b, name)? {
                    Val::Str(s) => s,
                    v => {
                        return Err(self.err(
                            lr,
                            name.span(),
                            format!("a state name must be a string, found {}", v.a_kind()),
                        ))
                    }
                };
                let t = match self.eval(lr, b, ty)? {
                    Val::Type(t) => t,
                    v => {
                        return Err(self.err(
                            lr,
                            ty.span(),
                            format!("a state type must be a type, found {}", v.a_kind()),
                        ))
                    }
                };
                let sym = self.m.ctx.syms.lookup(&n);
                let v = match sym.and_then(|s| Some((*self.states.get(&s)?, *self.kwargs.get(&s)?))) {
                    Some((made, v)) if made == t => v,
                    Some((made, _)) => {
                        return Err(self.err(
                            lr,
                            ty.span(),
                            format!(
                                "state `{n}` was created as a `{}`; here it is declared a `{}`",
                                self.m.ctx.type_text(made),
                                self.m.ctx.type_text(t)
                            ),
                        ).with_hint("one name is one buffer: give states of different types different names"))
                    }
                    None => {
                        if self.existing_persistables().contains(n.as_str()) {
                            return Err(self.err(
                                lr,
                                name.span(),
                                format!("state `{n}` is named after a persistable the program already has"),
                            ).with_hint("a state is a new buffer: writing it would overwrite the existing one; choose another name"));
                        }
                        let v = self.create_state(lr, b, &n, t, init, *span)?;
                        let sym = self.m.ctx.sym(&n);
                        self.states.insert(sym, t);
                        fx.edits += 1;
                        v
                    }
                };
                b.set_value(&bind.name, Val::Value(v));
            }
            Action::Insert { at, build, .. } => {
                let stage = match at {
                    InsertPoint::StageEnd(s) => Some(stage_of(s)),
                    _ => None,
                };
                let mut cur = self.cursor(lr, b, at)?;
                let op = self.build(lr, b, build, &mut cur, fx)?;
                if let (Some(s), Cursor::After(last)) = (stage, cur) {
                    if self.cache.role(self.m, last) == Some(s) {
                        self.stage_last.insert(s, last);
                    }
                }
                let _ = op;
            }
            Action::Replace {
                value,
                with,
                only_in_stage,
                span,
            } => {
                let Some(old) = self.value_of(lr, b, value)? else {
                    return Err(self.err(lr, *span, "cannot replace an absent operand"));
                };
                let before = fx.touched.len();
                let new = match with {
                    Expr::Build(bd) => {
                        let mut cur = match self.m.main.value_def(old) {
                            ValueDef::Result { op, .. } => Cursor::After(op),
                            ValueDef::Arg { block, .. } | ValueDef::Kwarg { block, .. } => {
                                Cursor::BlockStart(block)
                            }
                        };
                        let op = self.build(lr, b, bd, &mut cur, fx)?;
                        self.first_result(lr, op, bd.span)?
                    }
                    e => self.value_of(lr, b, e)?.ok_or_else(|| {
                        self.err(lr, e.span(), "cannot replace by an absent operand")
                    })?,
                };
                let created = &fx.touched[before..];
                let stage = only_in_stage.as_ref().map(stage_of);
                let users: Vec<OpId> = self.m.main.uses(old).map(|u| u.op).collect();
                let mut keep: FxHashSet<OpId> = FxHashSet::default();
                for u in users {
                    if !created.contains(&u)
                        && stage.is_none_or(|s| self.cache.role(self.m, u) == Some(s))
                    {
                        keep.insert(u);
                    }
                }
                let mut n = 0;
                self.m.main.replace_uses_where(old, new, |u| {
                    let k = keep.contains(&u.op);
                    n += usize::from(k);
                    k
                });
                fx.edits += n;
                fx.touched.extend(keep);
            }
            Action::SetOperand {
                op,
                target,
                value,
                span,
            } => {
                let o = self.op_of(lr, b, &op.name)?;
                let new = match value {
                    Expr::Build(bd) => {
                        let mut cur = Cursor::Before(o);
                        let nb = self.build(lr, b, bd, &mut cur, fx)?;
                        Some(self.first_result(lr, nb, bd.span)?)
                    }
                    e => self.value_of(lr, b, e)?,
                };
                let idxs: Vec<usize> = match target {
                    OperandSel::Name(n) => {
                        let name = self.m.ctx.str(self.m.main.op_name(o)).to_string();
                        match Dialect::get()
                            .spec(&name)
                            .and_then(|s| s.operand_index(&n.name))
                        {
                            Some(i) if i < self.m.main.num_operands(o) => vec![i],
                            _ => {
                                return Err(self.err(
                                    lr,
                                    n.span,
                                    format!("`{name}` has no operand `{}` here", n.name),
                                ))
                            }
                        }
                    }
                    OperandSel::Value(v) => {
                        let old = self.value_of(lr, b, &Expr::Value(v.clone()))?;
                        self.m
                            .main
                            .operands(o)
                            .enumerate()
                            .filter(|(_, x)| *x == old)
                            .map(|(i, _)| i)
                            .collect()
                    }
                };
                for i in idxs {
                    if self.m.main.operand(o, i) != new {
                        if let Some(d) = self
                            .m
                            .main
                            .operand(o, i)
                            .and_then(|v| self.m.main.defining_op(v))
                        {
                            fx.touched.push(d);
                        }
                        self.m.main.set_operand(o, i, new);
                        if let Err(msg) = self.follow_operand_type(o, i) {
                            return Err(self.err(lr, *span, msg));
                        }
                        self.refresh_dist_slots(o, i);
                        fx.edits += 1;
                    }
                }
                fx.touched.push(o);
            }
            Action::Erase { op, span } => {
                let o = self.op_of(lr, b, &op.name)?;
                if self.m.main.results(o).any(|r| self.m.main.has_uses(r)) {
                    return Err(self
                        .err(
                            lr,
                            *span,
                            format!("cannot erase `{}`: its result is still used", op.name.name),
                        )
                        .with_hint("replace its uses first: `replace %c with %x;`"));
                }
                let defs: Vec<OpId> = self
                    .m
                    .main
                    .operands(o)
                    .flatten()
                    .filter_map(|v| self.m.main.defining_op(v))
                    .collect();
                self.forget_marker(o);
                self.m.main.erase(o);
                fx.touched.extend(defs);
                fx.edits += 1;
            }
            Action::Move { op, to, span } => {
                let o = self.op_of(lr, b, &op.name)?;
                let stage = match to {
                    InsertPoint::StageEnd(s) | InsertPoint::StageStart(s) => Some(stage_of(s)),
                    _ => None,
                };
                self.forget_marker(o);
                let cur = self.cursor(lr, b, to)?;
                match cur {
                    Cursor::After(a) | Cursor::Before(a) if a == o => {
                        return Err(self.err(lr, *span, "an op cannot move next to itself"));
                    }
                    _ => {}
                }
                self.m.main.detach(o);
                let mut cur = cur;
                self.place(&mut cur, o);
                if let Some(s) = stage {
                    let id = self
                        .m
                        .ctx
                        .with_attr(self.m.main.op_attrs(o), ROLE_ATTR, Attr::Int(s));
                    self.m.main.set_op_attrs(o, id);
                    if matches!(to, InsertPoint::StageEnd(_)) {
                        self.stage_last.insert(s, o);
                    }
                }
                fx.edits += 1;
                fx.touched.push(o);
            }
            Action::SetAttrs { op, attrs, .. } => {
                let o = self.op_of(lr, b, &op.name)?;
                let old = self.m.main.op_attrs(o);
                let mut d = self.m.ctx.attrs(old).clone();
                for (k, e) in attrs {
                    let v = self.eval(lr, b, e)?;
                    let a = v.to_attr().ok_or_else(|| {
                        self.err(
                            lr,
                            e.span(),
                            format!("an attribute cannot hold {}", v.a_kind()),
                        )
                    })?;
                    d.set(&k.name, a);
                }
                let new = self.m.ctx.intern_attrs(d);
                if new != old {
                    self.forget_marker(o);
                    self.m.main.set_op_attrs(o, new);
                    fx.edits += 1;
                }
                fx.touched.push(o);
            }
        }
        Ok(())
    }

    fn first_result(
        &self,
        lr: &'a LoadedRule,
        op: OpId,
        span: Span,
    ) -> Result<ValueId, Diagnostic> {
        if self.m.main.num_results(op) == 0 {
            return Err(self.err(lr, span, "this op has no result to use as a value"));
        }
        Ok(self.m.main.result(op, 0))
    }

    /// A marker that is moved, erased or re-roled is looked up again when next needed.
    fn forget_marker(&mut self, op: OpId) {
        self.stage_first.retain(|_, o| *o != op);
        self.stage_last.retain(|_, o| *o != op);
    }

    fn marker_ok(&mut self, op: OpId, stage: i64) -> bool {
        let p = &self.m.main;
        p.is_live(op)
            && p.op_block(op) == Some(p.top_block())
            && self.cache.role(self.m, op) == Some(stage)
    }

    fn cursor(
        &mut self,
        lr: &'a LoadedRule,
        b: &mut Bindings<'a>,
        at: &InsertPoint,
    ) -> Result<Cursor, Diagnostic> {
        let top = self.m.main.top_block();
        Ok(match at {
            InsertPoint::After(e) => match self.eval(lr, b, e)? {
                Val::Op(o) => Cursor::After(o),
                Val::Value(v) => match self.m.main.value_def(v) {
                    ValueDef::Result { op, .. } => Cursor::After(op),
                    ValueDef::Arg { block, .. } | ValueDef::Kwarg { block, .. } => {
                        Cursor::BlockStart(block)
                    }
                },
                v => {
                    return Err(self.err(
                        lr,
                        e.span(),
                        format!("`after` needs a value or an op, found {}", v.a_kind()),
                    ))
                }
            },
            InsertPoint::Before(e) => match self.eval(lr, b, e)? {
                Val::Op(o) => Cursor::Before(o),
                Val::Value(v) => match self.m.main.defining_op(v) {
                    Some(o) => Cursor::Before(o),
                    None => Cursor::BlockStart(top),
                },
                v => {
                    return Err(self.err(
                        lr,
                        e.span(),
                        format!("`before` needs an op, found {}", v.a_kind()),
                    ))
                }
            },
            InsertPoint::StageEnd(s) => {
                let st = stage_of(s);
                let mut mk = self.stage_last.get(&st).copied();
                if mk.is_none_or(|o| !self.marker_ok(o, st)) {
                    // Rare: the marker moved away. Find the last op of the stage again.
                    mk = None;
                    let mut cur = self.m.main.last_op(top);
                    while let Some(o) = cur {
                        if self.role(o) == Some(st) {
                            mk = Some(o);
                            break;
                        }
                        cur = self.m.main.prev_op(o);
                    }
                }
                match mk {
                    Some(o) => {
                        self.stage_last.insert(st, o);
                        Cursor::After(o)
                    }
                    None => Cursor::BlockEnd(top),
                }
            }
            InsertPoint::StageStart(s) => {
                let st = stage_of(s);
                let mut mk = self.stage_first.get(&st).copied();
                if mk.is_none_or(|o| !self.marker_ok(o, st)) {
                    mk = None;
                    let mut cur = self.m.main.first_op(top);
                    while let Some(o) = cur {
                        if self.role(o) == Some(st) {
                            mk = Some(o);
                            break;
                        }
                        cur = self.m.main.next_op(o);
                    }
                }
                match mk {
                    Some(o) => {
                        self.stage_first.insert(st, o);
                        Cursor::Before(o)
                    }
                    None => Cursor::BlockEnd(top),
                }
            }
        })
    }

    fn place(&mut self, cur: &mut Cursor, op: OpId) {
        let p = &mut self.m.main;
        match *cur {
            Cursor::After(a) => {
                p.insert_after(a, op);
                *cur = Cursor::After(op);
            }
            Cursor::Before(a) => p.insert_before(a, op),
            Cursor::BlockStart(bk) => {
                p.prepend(bk, op);
                *cur = Cursor::After(op);
            }
            Cursor::BlockEnd(bk) => p.append(bk, op),
        }
    }

    /// Builds an op (and, first, the ops nested in its operands) at `cur`, in main.
    fn build(
        &mut self,
        lr: &'a LoadedRule,
        b: &mut Bindings<'a>,
        bd: &'a Build,
        cur: &mut Cursor,
        fx: &mut Effects,
    ) -> Result<OpId, Diagnostic> {
        let (sym, operands, attrs) = self.build_parts(lr, b, bd, Which::Main, cur, fx)?;
        let types = self.result_types(lr, bd, &operands, attrs, Which::Main)?;
        let attrs = self.dist_attrs(Which::Main, attrs, &operands, &types);
        let op = self
            .m
            .main
            .create_op(sym, attrs, &operands, &types, OpSyntax::Plain);
        self.place(cur, op);
        if let Some(r) = self.role(op) {
            // Keep the stage markers right when a build lands at a stage's edge.
            if let Some(&last) = self.stage_last.get(&r) {
                if self.m.main.prev_op(op) == Some(last) {
                    self.stage_last.insert(r, op);
                }
            }
        }
        if let Some(bind) = &bd.bind {
            b.set_value(&bind.name, Val::Op(op));
        }
        fx.edits += 1;
        fx.touched.push(op);
        Ok(op)
    }

    /// The name, dialect entry and match-independent attributes of a build, computed on its
    /// first use.
    fn build_info(
        &mut self,
        lr: &'a LoadedRule,
        b: &mut Bindings<'a>,
        bd: &'a Build,
    ) -> Result<&BuildInfo, Diagnostic> {
        let key: *const Build = bd;
        if !self.builds.contains_key(&key) {
            let sym = self.m.ctx.sym(&bd.op.name.name);
            let spec = if bd.op.quoted {
                None
            } else {
                Dialect::get().spec(&bd.op.name.name)
            };
            let mut fixed = Vec::with_capacity(bd.attrs.len());
            for (_, e) in &bd.attrs {
                fixed.push(if is_fixed(e) {
                    Some(self.attr_value(lr, b, e)?)
                } else {
                    None
                });
            }
            self.builds.insert(key, BuildInfo { sym, spec, fixed });
        }
        Ok(&self.builds[&key])
    }

    fn attr_value(
        &mut self,
        lr: &'a LoadedRule,
        b: &mut Bindings<'a>,
        e: &'a Expr,
    ) -> Result<Attr, Diagnostic> {
        let v = self.eval(lr, b, e)?;
        v.to_attr().ok_or_else(|| {
            self.err(
                lr,
                e.span(),
                format!("an attribute cannot hold {}", v.a_kind()),
            )
        })
    }

    fn build_parts(
        &mut self,
        lr: &'a LoadedRule,
        b: &mut Bindings<'a>,
        bd: &'a Build,
        which: Which,
        cur: &mut Cursor,
        fx: &mut Effects,
    ) -> Result<(Sym, Vec<Option<ValueId>>, AttrId), Diagnostic> {
        let info = self.build_info(lr, b, bd)?;
        let (sym, spec) = (info.sym, info.spec);
        let name = &bd.op.name.name;
        let mut operands: Vec<Option<ValueId>> = Vec::with_capacity(bd.args.len());
        // Operands the match gives first: nested builds take their distribution.
        let mut given = Vec::with_capacity(bd.args.len());
        for a in &bd.args {
            given.push(match &a.value {
                Expr::Build(_) => None,
                e => Some(self.value_of(lr, b, e)?),
            });
        }
        let pushed = match self.dist_of_values(which, given.iter().flatten().flatten().copied()) {
            Some(dist) => {
                self.dist_ctx.push(DistContext { dist, exact: false });
                true
            }
            None => false,
        };
        let built = self.build_operands(lr, b, bd, which, cur, fx, &mut given);
        if pushed {
            self.dist_ctx.pop();
        }
        built?;
        for (i, (a, v)) in bd.args.iter().zip(given).enumerate() {
            let v = v.flatten();
            let idx = match (&a.operand, spec) {
                (Some(n), Some(s)) => s.operand_index(&n.name).ok_or_else(|| {
                    self.err(lr, n.span, format!("`{name}` has no operand `{}`", n.name))
                })?,
                _ => i,
            };
            if operands.len() <= idx {
                operands.resize(idx + 1, None);
            }
            operands[idx] = v;
        }
        if let Some(s) = spec {
            let declared = s.operands.iter().filter(|o| !o.starts_with('*')).count();
            if bd.args.iter().any(|a| a.operand.is_some()) && operands.len() < declared {
                operands.resize(declared, None);
            }
        }
        // The attributes that depend on the match, then the dictionary (made and interned
        // only the first time these values occur for this build).
        let mut varying = Vec::new();
        for (k, (_, e)) in bd.attrs.iter().enumerate() {
            if self.builds[&(bd as *const Build)].fixed[k].is_none() {
                varying.push(self.attr_value(lr, b, e)?);
            }
        }
        let key = (bd as *const Build, varying);
        if let Some(&id) = self.dicts.get(&key) {
            return Ok((sym, operands, id));
        }
        let info = &self.builds[&key.0];
        let mut d = AttrDict::default();
        let mut var = key.1.iter();
        for ((k, _), fixed) in bd.attrs.iter().zip(&info.fixed) {
            let a = match fixed {
                Some(a) => a.clone(),
                None => var.next().cloned().unwrap_or(Attr::Bool(false)),
            };
            d.set(&k.name, a);
        }
        let id = self.m.ctx.intern_attrs(d);
        self.dicts.insert(key, id);
        Ok((sym, operands, id))
    }

    /// Builds the nested ops among `bd`'s operands, filling their slots of `given`.
    #[allow(clippy::too_many_arguments)]
    fn build_operands(
        &mut self,
        lr: &'a LoadedRule,
        b: &mut Bindings<'a>,
        bd: &'a Build,
        which: Which,
        cur: &mut Cursor,
        fx: &mut Effects,
        given: &mut [Option<Option<ValueId>>],
    ) -> Result<(), Diagnostic> {
        for (a, slot) in bd.args.iter().zip(given.iter_mut()) {
            if let Expr::Build(inner) = &a.value {
                *slot = Some(match which {
                    Which::Main => {
                        let o = self.build(lr, b, inner, cur, fx)?;
                        Some(self.first_result(lr, o, inner.span)?)
                    }
                    Which::Startup => Some(self.build_startup(lr, b, inner)?),
                });
            }
        }
        Ok(())
    }

    /// The distribution of the first distributed value among `vals` in program `which`.
    fn dist_of_values(
        &self,
        which: Which,
        vals: impl Iterator<Item = ValueId>,
    ) -> Option<TensorDist> {
        let prog = self.program(which);
        vals.filter_map(|v| self.m.ctx.ty(prog.value_type(v)).dist())
            .find(|d| !d.is_empty())
            .cloned()
    }

    fn program(&self, which: Which) -> &Program {
        match which {
            Which::Main => &self.m.main,
            Which::Startup => self.m.startup.as_ref().unwrap_or(&self.m.main),
        }
    }

    /// The distribution a tensor built from attributes alone takes: the enclosing build's, else
    /// the matched op's mesh (dense programs: none).
    /// A tensor of `rank` dimensions built from attributes alone: the state's distribution for
    /// its initializer, else replicated on the enclosing build's mesh, else on the matched op's
    /// (dense programs: none).
    fn dist_context(&self, rank: usize) -> Option<TensorDist> {
        if let Some(c) = self.dist_ctx.last() {
            return Some(if c.exact && c.dist.dims_mapping.len() == rank {
                c.dist.clone()
            } else {
                c.dist.replicated(rank)
            });
        }
        let op = self.matched?;
        let p = &self.m.main;
        self.dist_of_values(Which::Main, p.operands(op).flatten().chain(p.results(op)))
            .map(|d| d.replicated(rank))
    }

    /// `attrs` with the `op_dist_attr` the operand and result types imply.
    fn dist_attrs(
        &mut self,
        which: Which,
        attrs: AttrId,
        operands: &[Option<ValueId>],
        types: &[TypeId],
    ) -> AttrId {
        let prog = self.program(which);
        let otys: Vec<Option<TypeId>> = operands
            .iter()
            .map(|v| v.map(|v| prog.value_type(v)))
            .collect();
        self.m.ctx.with_derived_dist_attr(attrs, &otys, types)
    }

    fn result_types(
        &mut self,
        lr: &'a LoadedRule,
        bd: &'a Build,
        operands: &[Option<ValueId>],
        attrs: AttrId,
        which: Which,
    ) -> Result<Vec<TypeId>, Diagnostic> {
        let name = &bd.op.name.name;
        let spec = self.builds.get(&(bd as *const Build)).and_then(|i| i.spec);
        let Some(spec) = spec else {
            return Err(self.err(
                lr,
                bd.span,
                format!(
                    "irw cannot derive the result type of `{name}`: it is not in the dialect table"
                ),
            ));
        };
        let n_results = spec.results.iter().filter(|r| !r.starts_with('?')).count();
        if n_results == 0 {
            return Ok(vec![]);
        }
        let prog = match which {
            Which::Main => &self.m.main,
            Which::Startup => self.m.startup.as_ref().unwrap_or(&self.m.main),
        };
        let operand_ty = |i: u8| {
            operands
                .get(i as usize)
                .copied()
                .flatten()
                .map(|v| prog.value_type(v))
        };
        let dist_tensor = |shape: Vec<i64>, dtype| match self.dist_context(shape.len()) {
            Some(dist) => Type::Dist { dist, shape, dtype },
            None => Type::Tensor { shape, dtype },
        };
        let ctx = &self.m.ctx;
        let d = ctx.attrs(attrs);
        let dtype_attr = || {
            d.get("dtype")
                .and_then(|a| a.as_word())
                .and_then(crate::ir::DType::from_attr_name)
        };
        // An in-place result has its operand's (already interned) type.
        let id = match spec.result_rule {
            ResultRule::SameAs(i) => operand_ty(i),
            ResultRule::ReducedOf(i) => operand_ty(i).map(|t| {
                let r = crate::dialect::reduced(self.m.ctx.ty(t));
                self.m.ctx.intern_type(r)
            }),
            rule => {
                let ty: Option<Type> = match rule {
                    ResultRule::FromShapeDtypeAttrs => {
                        let shape: Option<Vec<i64>> = d
                            .get("shape")
                            .and_then(|a| a.as_array())
                            .and_then(|v| v.iter().map(Attr::as_i64).collect());
                        match (shape, dtype_attr()) {
                            (Some(shape), Some(dtype)) => Some(dist_tensor(shape, dtype)),
                            _ => None,
                        }
                    }
                    ResultRule::CastOf(i) => {
                        let from = operand_ty(i).map(|t| ctx.ty(t));
                        match (from.and_then(|t| t.shape()), dtype_attr()) {
                            (Some(shape), Some(dtype)) => {
                                from.map(|t| t.with_shape_dtype(shape.to_vec(), dtype))
                            }
                            _ => None,
                        }
                    }
                    ResultRule::IntArray => d
                        .get("value")
                        .and_then(|a| a.as_array())
                        .map(|v| dist_tensor(vec![v.len() as i64], crate::ir::DType::I64)),
                    ResultRule::Dim0Times(i, key) | ResultRule::Dim0Over(i, key) => {
                        let times = matches!(rule, ResultRule::Dim0Times(..));
                        let n = d.get(key).and_then(Attr::as_i64);
                        match (operand_ty(i), n) {
                            (Some(t), Some(n)) => crate::dialect::dim0_scaled(ctx.ty(t), n, times),
                            _ => None,
                        }
                    }
                    ResultRule::SameAs(_) | ResultRule::ReducedOf(_) | ResultRule::Explicit => None,
                };
                ty.map(|t| self.m.ctx.intern_type(t))
            }
        };
        let Some(id) = id else {
            return Err(self.err(lr, bd.span, format!("cannot derive the result type of `{name}` from its operands and attributes"))
                .with_hint("check the operands (an in-place op's type comes from its first operand) and the shape/dtype attributes"));
        };
        let mut v = vec![id];
        v.resize(n_results, Context::NULL_TYPE);
        Ok(v)
    }

    /// After operand `i` of `o` changed: if the dialect table says `o`'s result has that
    /// operand's type (`SameAs(i)`: collectives, elementwise and in-place ops), the result takes
    /// the new operand's type, as a freshly built op would (`ReducedOf(i)`: without its pending
    /// reduction); for `Dim0Times(i, ..)`/`Dim0Over(i, ..)` (`all_gather`, `reduce_scatter`)
    /// the result type is derived again from the new operand (an error when it cannot be). A rule that commutes a widening cast with a
    /// collective (`reduce(cast(g))`) relies on it; the users of the result are the rule's to keep
    /// consistent (hoist_reduce's guards allow exactly one).
    fn follow_operand_type(&mut self, o: OpId, i: usize) -> Result<(), String> {
        let name = self.m.ctx.str(self.m.main.op_name(o));
        let Some(spec) = Dialect::get().spec(name) else {
            return Ok(());
        };
        let (Some(v), Some(r)) = (self.m.main.operand(o, i), self.m.main.results(o).next()) else {
            return Ok(());
        };
        let ty = match spec.result_rule {
            ResultRule::SameAs(j) if j as usize == i => self.m.main.value_type(v),
            ResultRule::ReducedOf(j) if j as usize == i => {
                let t = crate::dialect::reduced(self.m.ctx.ty(self.m.main.value_type(v)));
                self.m.ctx.intern_type(t)
            }
            ResultRule::Dim0Times(j, key) | ResultRule::Dim0Over(j, key) if j as usize == i => {
                let times = matches!(spec.result_rule, ResultRule::Dim0Times(..));
                let n = self
                    .m
                    .ctx
                    .attrs(self.m.main.op_attrs(o))
                    .get(key)
                    .and_then(Attr::as_i64);
                let t = n.and_then(|n| {
                    crate::dialect::dim0_scaled(self.m.ctx.ty(self.m.main.value_type(v)), n, times)
                });
                match t {
                    Some(t) => self.m.ctx.intern_type(t),
                    None => {
                        return Err(format!(
                        "cannot derive the result type of `{}` from its new operand and `{key}`",
                        spec.name
                    ))
                    }
                }
            }
            _ => return Ok(()),
        };
        self.m.main.set_value_type(r, ty);
        Ok(())
    }

    /// After operand `i` of `o` changed: an `op_dist_attr` that `o` carries describes the new
    /// operand (and a result whose type followed it), so the attribute stays true to the
    /// types; the other slots are kept as they were.
    fn refresh_dist_slots(&mut self, o: OpId, i: usize) {
        let p = &self.m.main;
        let attrs = p.op_attrs(o);
        let Some(Attr::OpDist(cur)) = self.m.ctx.attrs(attrs).get(OP_DIST_ATTR) else {
            return;
        };
        let mut new = (**cur).clone();
        let slot_of = |v: Option<ValueId>| {
            v.map_or(SlotType::Absent, |v| self.m.ctx.slot_type(p.value_type(v)))
                .slot()
        };
        if let (Some(s), Some(slot)) = (slot_of(p.operand(o, i)), new.operands.get_mut(i)) {
            *slot = s;
        }
        if let (Some(s), Some(slot)) = (slot_of(p.results(o).next()), new.results.get_mut(0)) {
            *slot = s;
        }
        if new != **cur {
            let id = self
                .m
                .ctx
                .with_attr(attrs, OP_DIST_ATTR, Attr::OpDist(Box::new(new)));
            self.m.main.set_op_attrs(o, id);
        }
    }

    /// Builds an op at the end of the startup program (for state initializers).
    fn build_startup(
        &mut self,
        lr: &'a LoadedRule,
        b: &mut Bindings<'a>,
        bd: &'a Build,
    ) -> Result<ValueId, Diagnostic> {
        self.m.startup_mut();
        let mut dummy = Cursor::BlockEnd(self.m.main.top_block());
        let mut fx = Effects::default();
        let (sym, operands, attrs) =
            self.build_parts(lr, b, bd, Which::Startup, &mut dummy, &mut fx)?;
        let types = self.result_types(lr, bd, &operands, attrs, Which::Startup)?;
        let attrs = self.dist_attrs(Which::Startup, attrs, &operands, &types);
        let sp = self.m.startup_mut();
        let top = sp.top_block();
        let op = sp.create_op(sym, attrs, &operands, &types, OpSyntax::Plain);
        sp.append(top, op);
        if sp.num_results(op) == 0 {
            return Err(self.err(lr, bd.span, "a state initializer must produce a value"));
        }
        Ok(sp.result(op, 0))
    }

    /// See [`Engine::persistables`].
    fn existing_persistables(&mut self) -> &rustc_hash::FxHashSet<String> {
        let m = &*self.m;
        let kwargs = &self.kwargs;
        self.persistables.get_or_insert_with(|| {
            let mut names: rustc_hash::FxHashSet<String> =
                kwargs.keys().map(|s| m.ctx.str(*s).to_string()).collect();
            let progs = std::iter::once(&m.main).chain(m.startup.as_ref());
            for p in progs {
                for op in p.walk() {
                    let key = match m.ctx.str(p.op_name(op)) {
                        "builtin.parameter" | "builtin.set_parameter" => "parameter_name",
                        PUBLISH_OP => PUBLISH_NAME_ATTR,
                        _ => continue,
                    };
                    if let Some(crate::ir::Attr::Str(n)) = m.ctx.attrs(p.op_attrs(op)).get(key) {
                        names.insert(n.to_string());
                    }
                }
            }
            names
        })
    }

    fn create_state(
        &mut self,
        lr: &'a LoadedRule,
        b: &mut Bindings<'a>,
        name: &str,
        ty: TypeId,
        init: &'a Build,
        span: Span,
    ) -> Result<ValueId, Diagnostic> {
        if !crate::ir::parse::is_kwarg_name(name) {
            return Err(self
                .err(
                    lr,
                    span,
                    format!("the state name `{name}` cannot be a keyword argument name"),
                )
                .with_hint("keyword argument names hold only letters, digits and `_ . @ - /`: is a parameter name unusual?"));
        }
        let state_dist = self.m.ctx.ty(ty).dist().cloned();
        let pushed = state_dist
            .map(|dist| self.dist_ctx.push(DistContext { dist, exact: true }))
            .is_some();
        let init_v = self.build_startup(lr, b, init);
        if pushed {
            self.dist_ctx.pop();
        }
        let init_v = init_v?;
        let sp = self
            .m
            .startup
            .as_ref()
            .ok_or_else(|| self.err(lr, span, "no startup program"))?;
        let init_ty = sp.value_type(init_v);
        if init_ty != ty {
            return Err(self.err(
                lr,
                init.span,
                format!(
                    "the initializer makes a `{}` but the state is a `{}`",
                    self.m.ctx.type_text(init_ty),
                    self.m.ctx.type_text(ty)
                ),
            ));
        }
        let publish = self.m.ctx.sym(PUBLISH_OP);
        let mut d = AttrDict::default();
        d.set(PUBLISH_NAME_ATTR, Attr::string(name));
        let attrs = self.m.ctx.intern_attrs(d);
        let attrs = self.dist_attrs(Which::Startup, attrs, &[Some(init_v)], &[]);
        let sp = self.m.startup_mut();
        let top = sp.top_block();
        let op = sp.create_op(publish, attrs, &[Some(init_v)], &[], OpSyntax::Plain);
        sp.append(top, op);
        // The keyword argument, with its attributes in Paddle's order.
        let kattrs = match self.kwarg_attrs {
            Some(id) => id,
            None => {
                let mut kd = AttrDict::default();
                for (k, v) in KWARG_ATTRS {
                    let a = if *v == "true" {
                        Attr::Bool(true)
                    } else {
                        Attr::Word((*v).into())
                    };
                    kd.push(k, a);
                }
                *self.kwarg_attrs.insert(self.m.ctx.intern_attrs(kd))
            }
        };
        let sym = self.m.ctx.sym(name);
        let top = self.m.main.top_block();
        let v = self.m.main.add_kwarg(top, sym, ty, kattrs);
        self.kwargs.insert(sym, v);
        Ok(v)
    }
}

fn stage_of(s: &Ident) -> i64 {
    STAGES
        .iter()
        .find(|(n, _)| *n == s.name)
        .map_or(-1, |(_, r)| *r)
}
