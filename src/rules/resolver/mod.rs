//! The resolver: a parsed rule file checked against the dialect table and lowered, in one pass
//! per rule, to what the engines run. Checking a pattern binds its names to slots, checking an
//! expression returns its [`compiled::Expr`], checking a build its [`compiled::Build`], and a
//! structural rule that checks comes out as its [`CompiledRule`], match plan included, an
//! equational rule as the e-graph rules it stands for ([`equational`]). Each rule of the
//! language and its message live here once, so what a rule compiles to cannot disagree with
//! what was checked, and no later pass can refuse it (ISLE's `TermEnv::from_ast` is the model);
//! only the e-graph's own verdict on an equational rule comes from elsewhere, and it is asked
//! here, at the rule.
//!
//! What is refused (each a [`Diagnostic`] at `file:line:col` with the source line, a caret and,
//! where one helps, a hint):
//! - rules: a one-line `//` comment right above every rule; unique rule names in the file;
//!   clause order (`match`, then `where`, then actions); a `match` pattern its match plan does
//!   not reach ([`super::plan`]);
//! - patterns ([`pattern`]): op names in the dialect table (quoted generic names excepted), op
//!   classes that exist, operand names the op (or some op of the class) has, stage names;
//! - expressions ([`expr`]): names that are parameters, stages or dtypes; values and captures
//!   bound before use; known functions with the right number of arguments; operand kinds that
//!   fit (`1.0 / avg` with a bool `avg` is an error, so is `where 3;`); `exists` patterns
//!   reachable from what the rule bound;
//! - actions ([`action`]) and builds ([`build`]): erase/move/set/rewire apply to ops a pattern
//!   or build bound; rewired operand names exist; ops are built only where an action places
//!   them, with result types something gives or derives;
//! - equational rules ([`equational`]): pure op classes and sets of a bounded product, the
//!   right-hand side built from what the left binds, expressions the e-graph can evaluate,
//!   `<=>` only between two patterns, and what the e-graph itself accepts.
//!
//! A file is resolved on its own, with the parameters' final values, and every faulty rule of
//! it is reported (each with the errors of its independent parts: each faulty pattern of its
//! `match`, then each `where` clause and each action, each operand of an expression, each side
//! and subterm of an equational rule;
//! [`independent`]), except where the error may only follow from one reported before ([`Faults`]: a
//! faulty parameter or op declaration, an import that failed); which files are included and in
//! what order is the loader's business ([`super::load`]). [`names`] holds what an op class, a
//! stage and an alternative's attribute test resolve to, which the expander asks too.

mod action;
mod build;
mod equational;
mod expr;
mod independent;
pub mod names;
mod pattern;

use super::ast::*;
use super::builtins::{Builtin, Kind, Query};
use super::compiled::{self, CompiledRule, Slot};
use super::decl::{rule_attrs, rule_operands, OpTable};
use super::eval::{dtype_name, mentions};
use super::expand::UncalledPred;
use super::let_build::action_binds;
use super::load::line_starts;
use super::parse::comment_above;
use super::plan::{self, Bound, BoundSlots, Unreached};
use super::require::loaded_require;
use super::suggest::{closest, did_you_mean};
use super::ty::Ty;
use super::{stage_role, OpClass, Param, ParamType, STAGES};
use crate::diag::{Diagnostic, SourceFile};
use crate::dialect::{Dialect, OpSpec, ResultRule};
use crate::value::Val;
use independent::Gathered;
use indexmap::{IndexMap, IndexSet};
use std::cell::Cell;
use std::collections::{HashMap, HashSet};

/// Where a rule is, for [`CompiledRule`]'s metadata.
pub struct Origin {
    pub file: usize,
    pub line: usize,
    /// Its index among its phase's rules (the loader, which resolves a file's rules before it
    /// lays out phases, sets it when it places the rule).
    pub index: usize,
}

/// The ids of a rule set's builds and `exists` ([`compiled::Build::id`],
/// [`compiled::Exists::id`]): each resolved rule takes the next ones, so that the engine keeps
/// its per-run state of them in vectors.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ids {
    pub builds: usize,
    pub exists: usize,
}

impl Ids {
    fn take_build(&mut self) -> usize {
        self.builds += 1;
        self.builds - 1
    }

    fn take_exists(&mut self) -> usize {
        self.exists += 1;
        self.exists - 1
    }
}

/// What failed before the resolver ran, so that an error that only follows from it is not
/// reported again: the earlier error says what is wrong.
#[derive(Clone, Copy)]
pub(super) struct Faults<'a> {
    /// Parameters whose declaration or value is faulty (left out of the parameters).
    pub params: &'a HashSet<String>,
    /// Ops declared with an error (left out of the op table).
    pub ops: &'a HashSet<String>,
    /// An import of the file failed: a name it does not know may be one that import brings.
    pub incomplete: bool,
    /// The offsets of the file's rules whose definitions could not be substituted.
    pub unexpanded: &'a HashSet<usize>,
    /// The subterms of predicate bodies whose errors the expander reported: wherever a body is
    /// substituted, they are not checked again.
    pub exprs: &'a HashSet<Span>,
}

/// What a `%name` is bound to in a rule.
#[derive(Debug, Clone)]
enum Binding {
    /// An op matched by a pattern or built by an action: the ops it can be (empty when any op
    /// of a class or a quoted name), and whether that list is all it can be ([`Closed`]).
    Op(Vec<&'static OpSpec>, Closed),
    /// A value (an operand variable, a state buffer).
    Value,
    /// What an op built by an action that failed, or matched by a pattern that failed, would
    /// be: unknown, so what reads it is not checked (its error could only follow from theirs).
    Failed,
}

/// Whether the ops a [`Binding::Op`] lists are every op it can be: false for a selector that
/// also takes ops irw knows nothing of (a quoted name nobody declared, the `unknown` and `any`
/// classes, a predicate's parameter). Only then is a result the listed ops lack an error: an
/// unlisted op may have it.
type Closed = bool;

/// Resolves the rules of one file: what each name is bound to and its slot, rule by rule, and
/// what the file's rules resolved to.
pub(super) struct Resolver<'a> {
    src: &'a SourceFile,
    params: &'a IndexMap<String, Param>,
    dialect: &'static Dialect,
    /// Declared ops, then the dialect table.
    ops: &'a OpTable,
    /// Ops this rule's actions erased so far, in straight-line order (an `if` branch's
    /// erasures are not carried past it): a later action on one is refused.
    erased: IndexMap<String, Span>,
    /// Each `%name` the rule bound so far, and its slot.
    values: IndexMap<String, (Binding, Slot)>,
    /// Each `$name` the rule bound so far, and its slot.
    captures: IndexMap<String, Slot>,
    /// Slots numbered so far in this rule: values and captures share one numbering, and the
    /// names an `exists` binds keep theirs after it (they are its own).
    slots: Slot,
    /// Checking an equational rule (`const(%x)` is an e-graph query).
    equational: bool,
    /// The e-graph rules each equational rule of the file stands for, by the rule's offset.
    pub(super) lowered: HashMap<usize, Vec<crate::egraph::EqRule>>,
    /// Each structural rule of the file, resolved, by the rule's offset.
    pub(super) resolved: HashMap<usize, CompiledRule>,
    /// The file's index among the loaded files (a resolved rule's origin).
    file: usize,
    /// The ids the next resolved rule's builds and `exists` take.
    pub(super) ids: Ids,
    /// What failed before the file was resolved.
    faults: Faults<'a>,
    /// Set by an error that may only follow from an earlier one ([`Faults`]): the item being
    /// resolved is dropped without its error.
    cascade: Cell<bool>,
}

impl<'a> Resolver<'a> {
    /// A resolver of the file `src`, the `file`th loaded, whose rules' builds and `exists` are
    /// numbered from `ids` on.
    pub(super) fn new(
        src: &'a SourceFile,
        file: usize,
        params: &'a IndexMap<String, Param>,
        ops: &'a OpTable,
        ids: Ids,
        faults: Faults<'a>,
    ) -> Self {
        Resolver {
            src,
            params,
            dialect: Dialect::get(),
            ops,
            erased: IndexMap::new(),
            values: IndexMap::new(),
            captures: IndexMap::new(),
            slots: 0,
            equational: false,
            lowered: HashMap::new(),
            resolved: HashMap::new(),
            file,
            ids,
            faults,
            cascade: Cell::new(false),
        }
    }

    fn at(&self, offset: usize, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::at(self.src, offset, msg)
    }

    /// An unknown name as an import's whole condition (`import "x.rw" if nope;`) can only have
    /// meant a bool parameter: the hints offer those, not the stages and dtypes a bare name
    /// elsewhere may be.
    fn condition_hints(&self, c: &Expr, mut d: Diagnostic) -> Diagnostic {
        let Expr::Var(Var::Bare(i)) = c else { return d };
        if d.message != format!("unknown name `{}`", i.name) {
            return d;
        }
        let bools: Vec<&str> = (self.params.iter())
            .filter(|(_, p)| p.ty == super::ParamType::Bool)
            .map(|(n, _)| n.as_str())
            .collect();
        d.hints.clear();
        if let Some(h) = did_you_mean(&closest(&i.name, bools.iter().copied(), 2)) {
            d.hints.push(h);
        }
        d.hints.push(if bools.is_empty() {
            "an import condition names a bool parameter, and the loaded files declare none: `param NAME: bool = false;`".to_string()
        } else {
            format!("an import condition names a bool parameter: {}", bools.join(", "))
        });
        d
    }

    /// Resolves every item of `f`. After an error it goes on with the next item (a rule, a
    /// parameter's constraint, an import's condition, a `require`), so every faulty rule of the
    /// file is reported, each with the errors of its independent parts (`independent.rs`), in
    /// source order. An item whose error only follows from an earlier one ([`Faults`]) is
    /// dropped silently.
    pub(super) fn resolve_file(&mut self, f: &File) -> Vec<Diagnostic> {
        let mut errors = Vec::new();
        let mut phase_names: IndexSet<&str> = IndexSet::new();
        let mut rule_names: IndexMap<&str, Span> = IndexMap::new();
        let line_starts = line_starts(self.src);
        for item in &f.items {
            match item {
                Item::Param(p) => {
                    // That it is a bool is the loader's to say: it evaluates every constraint
                    // when parameters get their values, before any file is checked.
                    if let Some(c) = &p.constraint {
                        let r = self.expr(c);
                        self.keep(&mut errors, r);
                    }
                }
                Item::Import(im) => {
                    if let Some(c) = &im.cond {
                        let r = self
                            .expr(c)
                            .map_err(|d| self.condition_hints(c, d))
                            .and_then(|(t, _)| self.want_bool(t, c, "an import condition must be"));
                        self.keep(&mut errors, r);
                    }
                }
                Item::Phase(p) => {
                    if !phase_names.insert(&p.name.name) {
                        errors.push(self.at(
                            p.name.span.0,
                            format!("phase `{}` is declared twice in this file", p.name.name),
                        ));
                    }
                    for r in &p.rules {
                        let r = self.rule(r, &mut rule_names, &line_starts);
                        self.keep(&mut errors, r);
                    }
                    for q in &p.requires {
                        let r = self.require(q);
                        self.keep(&mut errors, r);
                    }
                }
                Item::Rule(r) => {
                    let r = self.rule(r, &mut rule_names, &line_starts);
                    self.keep(&mut errors, r);
                }
                Item::Require(q) => {
                    let r = self.require(q);
                    self.keep(&mut errors, r);
                }
                Item::Op(_) => {}
            }
        }
        errors
    }

    /// Checks the body of each predicate nothing calls, as a rule calling it would, with its
    /// parameters standing for any value or op; its errors follow `found` (the file's), less
    /// those already among them (a body that calls a predicate a rule calls too).
    pub(super) fn check_uncalled(
        &mut self,
        preds: &[UncalledPred],
        mut found: Vec<Diagnostic>,
    ) -> Vec<Diagnostic> {
        fn key(d: &Diagnostic) -> (Option<(usize, usize)>, String) {
            (
                d.location.as_ref().map(|l| (l.line, l.col)),
                d.message.clone(),
            )
        }
        let mut seen: HashSet<_> = found
            .iter()
            .flat_map(|d| std::iter::once(d).chain(d.more.iter()))
            .map(key)
            .collect();
        for p in preds {
            self.start_scope(false);
            for param in &p.params {
                self.bind_value(&param.name, Binding::Op(Vec::new(), false));
            }
            let mut errors = Vec::new();
            let r = self.expr(&p.body);
            self.keep(&mut errors, r);
            for mut d in errors {
                let more = std::mem::take(&mut d.more);
                for d in std::iter::once(d).chain(more.into_vec()) {
                    if seen.insert(key(&d)) {
                        found.push(d);
                    }
                }
            }
        }
        found
    }

    /// Forgets what the last rule (or predicate body) bound: a new one starts with no names and
    /// no slots.
    fn start_scope(&mut self, equational: bool) {
        self.values.clear();
        self.captures.clear();
        self.slots = 0;
        self.erased.clear();
        self.equational = equational;
    }

    /// Keeps the error of an item unless it only follows from an earlier one.
    fn keep<T>(&self, errors: &mut Vec<Diagnostic>, r: Result<T, Diagnostic>) {
        let cascade = self.cascade.replace(false);
        if let Err(d) = r {
            if !cascade {
                errors.push(d);
            }
        }
    }

    /// Marks the error being made as one that may only follow from an earlier error when
    /// `maybe` holds (see [`Faults`]); returns the error.
    fn cascade_if(&self, maybe: bool, d: Diagnostic) -> Diagnostic {
        if maybe {
            self.cascade.set(true);
        }
        d
    }

    /// An op name the table does not know, in a pattern or a build. Unknown because its
    /// declaration is faulty, or perhaps declared by an import that failed, it is not reported
    /// again.
    fn unknown_op(&self, i: &Ident, in_pattern: bool) -> Diagnostic {
        let p = if in_pattern {
            names::unknown_op_in_pattern(i)
        } else {
            names::unknown_op(i)
        };
        let maybe = self.faults.ops.contains(&i.name) || self.faults.incomplete;
        self.cascade_if(maybe, p.at(self.src))
    }

    /// Checks a `require`'s count and message (every file is checked, included or not).
    fn require(&self, q: &Require) -> Result<(), Diagnostic> {
        // A count or message that names a faulty parameter: the parameter's error says it.
        let faulty = |n: &str| {
            self.faults.params.contains(n) || self.faults.incomplete && !self.params.contains_key(n)
        };
        let in_message = |m: &StrLit| {
            m.parts
                .iter()
                .any(|p| matches!(p, StrPart::Expr(e) if mentions(e, &faulty)))
        };
        if q.count.as_ref().is_some_and(|(_, e)| mentions(e, &faulty))
            || q.message.as_ref().is_some_and(in_message)
        {
            return Ok(());
        }
        let params = |n: &str| self.params.get(n).map(|p| p.value.clone());
        loaded_require(self.src, 0, &params, q).map(|_| ())
    }

    /// Checks `r` and keeps what it resolves to ([`Resolver::resolved`], [`Resolver::lowered`]).
    fn rule<'r>(
        &mut self,
        r: &'r Rule,
        names: &mut IndexMap<&'r str, Span>,
        line_starts: &[usize],
    ) -> Result<(), Diagnostic> {
        let name = r.name();
        if self.faults.unexpanded.contains(&r.span().0) {
            // The expander reported why its definitions could not be substituted.
            names.entry(&name.name).or_insert(name.span);
            return Ok(());
        }
        if comment_above(self.src, r.span().0).is_none_or(|c| c.is_empty()) {
            return Err(self
                .at(r.span().0, format!("rule `{}` has no comment", name.name))
                .with_hint(
                    "write a one-line `//` comment right above every rule saying why it is sound",
                ));
        }
        if let Some(&first) = names.get(name.name.as_str()) {
            return Err(names::rule_defined_twice(self.src, name, self.src, first));
        }
        names.insert(&name.name, name.span);
        self.start_scope(matches!(r, Rule::Equational(_)));
        match r {
            Rule::Structural(s) => {
                let origin = Origin {
                    file: self.file,
                    line: line_starts.partition_point(|&s| s <= r.span().0),
                    index: 0,
                };
                let c = self.structural(s, origin)?;
                self.resolved.insert(r.span().0, c);
                Ok(())
            }
            Rule::Equational(e) => {
                let rules = self.equational(e)?;
                self.lowered.insert(r.span().0, rules);
                Ok(())
            }
        }
    }

    fn structural(&mut self, r: &StructRule, at: Origin) -> Result<CompiledRule, Diagnostic> {
        // 0 = matching, 1 = guards, 2 = actions.
        let mut stage = 0;
        let mut patterns = Vec::new();
        for c in &r.clauses {
            match c {
                Clause::Match(ps) => {
                    if stage > 0 {
                        return Err(self.at(
                            ps.first().map_or(r.span.0, |p| p.span.0),
                            "`match` must come before `where` and the actions",
                        ));
                    }
                    patterns.extend(ps.iter());
                }
                Clause::Where(_) => {
                    if stage > 1 {
                        return Err(self.at(
                            clause_start(c, r.span.0),
                            "`where` must come before the actions",
                        ));
                    }
                    stage = 1;
                }
                Clause::Action(_) => stage = 2,
            }
        }
        if patterns.is_empty() {
            return Err(self
                .at(
                    r.name.span.0,
                    format!("rule `{}` has no `match`", r.name.name),
                )
                .with_hint("a structural rule starts with `match <pattern>;`"));
        }
        // Bind everything the patterns name first: patterns are one conjunction. Each pattern's
        // error is its own, so each is reported; a pattern that fails still binds its names
        // (its op's name as failed: what reads it is a cascade), so the guards and actions
        // after it are checked too.
        let mut g = Gathered::default();
        let mut resolved = Vec::with_capacity(patterns.len());
        for p in &patterns {
            let r = self.bind_pattern(p);
            match self.gather(&mut g, r) {
                Some(rp) => resolved.push((*p, rp)),
                None => self.bind_failed_pattern(p),
            }
        }
        let all_bound = resolved.len() == patterns.len();
        // Then the independent parts that read them: each pattern's attribute values, the
        // plan (of every pattern, so only when each resolved), each `where` clause and each
        // action (one that fails still binds its names: `Resolver::action`).
        for (p, rp) in &mut resolved {
            let r = self.pattern_exprs(p, rp);
            self.gather(&mut g, r);
        }
        let resolved: Vec<_> = resolved.into_iter().map(|(_, rp)| rp).collect();
        let plan = if all_bound {
            let plan = plan::of_match(&resolved).map_err(|j| {
                Unreached::Match {
                    offset: resolved[j].span.0,
                    rule: r.name.name.clone(),
                }
                .diagnostic(self.src)
            });
            self.gather(&mut g, plan)
        } else {
            None
        };
        let (mut guards, mut actions) = (Vec::new(), Vec::new());
        for c in &r.clauses {
            match c {
                Clause::Where(e) => {
                    let x = self.expr_no_build(e).and_then(|(t, x)| {
                        self.want_bool(t, e, "a `where` guard must be").map(|_| x)
                    });
                    guards.extend(self.gather(&mut g, x));
                }
                Clause::Action(a) => {
                    let x = self.action(a);
                    actions.extend(self.gather(&mut g, x));
                }
                Clause::Match(_) => {}
            }
        }
        if stage < 2 {
            let e = self
                .at(
                    r.name.span.0,
                    format!("rule `{}` has no action", r.name.name),
                )
                .with_hint("a rule that changes nothing is a bug; add an action after `where`");
            self.gather::<()>(&mut g, Err(e));
        }
        self.gathered(g)?;
        // Every part checked: the plan is there.
        let plan = plan.unwrap_or_default();
        Ok(CompiledRule {
            name: r.name.name.clone(),
            name_span: r.name.span,
            file: at.file,
            line: at.line,
            index: at.index,
            slots: self.slots as usize,
            patterns: resolved,
            plan,
            guards,
            actions,
        })
    }

    /// The op role of the stage `i` names.
    fn stage(&self, i: &Ident) -> Result<i64, Diagnostic> {
        names::stage(i).map_err(|p| p.at(self.src))
    }

    /// Binds `%name` to `b`, in the slot the rule gave it if it named it before, else in the
    /// next one.
    fn bind_value(&mut self, name: &str, b: Binding) -> Slot {
        if let Some((old, slot)) = self.values.get_mut(name) {
            *old = b;
            return *slot;
        }
        let slot = self.next_slot();
        self.values.insert(name.to_string(), (b, slot));
        slot
    }

    /// The slot of an operand variable `%name`: the one it is bound in, else a new value.
    fn operand_value(&mut self, name: &str) -> Slot {
        match self.values.get(name) {
            Some((_, slot)) => *slot,
            None => self.bind_value(name, Binding::Value),
        }
    }

    /// Binds `$name` (an attribute capture, a type capture, a `let`).
    fn bind_capture(&mut self, name: &str) -> Slot {
        if let Some(slot) = self.captures.get(name) {
            return *slot;
        }
        let slot = self.next_slot();
        self.captures.insert(name.to_string(), slot);
        slot
    }

    fn next_slot(&mut self) -> Slot {
        self.slots += 1;
        self.slots - 1
    }

    /// What each slot holds at this point of the rule (an `exists` is planned from it).
    fn bound_slots(&self) -> BoundSlots {
        let mut b = BoundSlots::default();
        for (binding, slot) in self.values.values() {
            let held = match binding {
                // Only builds are bound as failed.
                Binding::Op(..) | Binding::Failed => Bound::Op,
                Binding::Value => Bound::Value,
            };
            b.set(*slot, held);
        }
        b
    }

    /// `%x` or `%x.field`, of a name the rule bound and has not erased.
    fn value_ref(&self, v: &ValueRef) -> Result<compiled::ValueRef, Diagnostic> {
        let Some((_, slot)) = self.values.get(&v.name.name) else {
            return Err(self.unbound(&v.name));
        };
        self.not_erased(&v.name)?;
        Ok(compiled::ValueRef::new(v, *slot))
    }

    /// Refuses `%name` where an action above erased its op: whatever names it after the
    /// `erase` (an action on it, an insertion point next to it, one of its results read as a
    /// value) would act on an op that is no longer in the program. Every reference to a
    /// bound name an action makes comes through here.
    fn not_erased(&self, i: &Ident) -> Result<(), Diagnostic> {
        let Some(at) = self.erased.get(&i.name) else {
            return Ok(());
        };
        let (line, col) = self.src.line_col(at.0);
        Err(self
            .at(
                i.span.0,
                format!(
                    "`{}` is erased above ({line}:{col}): no later action may name it",
                    i.name
                ),
            )
            .with_hint("put this action before the `erase`"))
    }

    /// `%name`, read where an action that failed bound it ([`Binding::Failed`]): a cascade.
    fn failed_binding(&self, i: &Ident) -> Diagnostic {
        let d = self.at(
            i.span.0,
            format!("`{}` is built by an action that failed", i.name),
        );
        self.cascade_if(true, d)
    }

    /// A `%value` or `$capture` used where nothing binds it.
    fn unbound(&self, i: &Ident) -> Diagnostic {
        let mut d = self.at(i.span.0, format!("`{}` is not bound", i.name));
        if i.name.starts_with('$') {
            return d.with_hint("a capture is bound by an attribute pattern (`{dtype: $d}`), a type pattern (`%x: $t`) or `let`");
        }
        if let Some(h) = did_you_mean(&closest(&i.name, self.values.keys().map(|k| k.as_str()), 2))
        {
            d = d.with_hint(h);
        } else {
            d = d.with_hint("a value is bound by a pattern (`match pd_op.relu(%x);`), a `state`, or a built op (`%a = pd_op.add(...) {}`)");
        }
        d
    }
}

fn clause_start(c: &Clause, default: usize) -> usize {
    match c {
        Clause::Match(p) => p.first().map_or(default, |p| p.span.0),
        Clause::Where(e) => e.span().0,
        Clause::Action(a) => a.span().0,
    }
}

/// Whether an operand of a build is `none` (an absent optional operand).
fn is_none(e: &Expr) -> bool {
    matches!(e, Expr::Var(Var::Bare(i)) if i.name == NONE_NAME)
}

/// `like(%o)` in a result-type position: the op `%o`.
pub(super) fn like_arg(e: &Expr) -> Option<&ValueRef> {
    match e {
        Expr::Call { func, args, .. } if func.name == "like" => match &args[..] {
            [Expr::Var(Var::Value(v))] => Some(v),
            _ => None,
        },
        _ => None,
    }
}

/// The name of an absent optional operand in a build (`<<NULL VALUE>>`).
pub const NONE_NAME: &str = "none";

/// The value variables an op pattern binds (its own name and its operands, nested included).
pub(super) fn pattern_vars(p: &OpPattern, out: &mut IndexSet<String>) {
    if let Some(b) = &p.bind {
        out.insert(b.name.clone());
    }
    for a in &p.args {
        match &a.pat {
            ValPat::Var { name, .. } => {
                out.insert(name.name.clone());
            }
            ValPat::Wild(_) => {}
            ValPat::Op(inner) => pattern_vars(inner, out),
        }
    }
}

/// The first build of an expression, outside interpolations and `exists` (which check their
/// own expressions).
fn find_build(e: &Expr) -> Option<&Build> {
    match e {
        Expr::Build(b) => Some(b),
        Expr::Str(..) | Expr::Exists(_) => None,
        _ => {
            let mut found = None;
            e.children(&mut |c| {
                if found.is_none() {
                    found = find_build(c)
                }
            });
            found
        }
    }
}

fn sel_text(s: &OpSel) -> String {
    match s {
        OpSel::Name(i) | OpSel::Class(i) => i.name.clone(),
        OpSel::Quoted(i) => format!("\"{}\"", i.name),
        OpSel::OneOf(v, _) => v.iter().map(sel_text).collect::<Vec<_>>().join(" | "),
        OpSel::With { sel, .. } => format!("{} {{..}}", sel_text(sel)),
    }
}

fn text_of(v: &ValueRef) -> String {
    match &v.field {
        Some(f) => format!("{}.{}", v.name.name, f.name),
        None => v.name.name.clone(),
    }
}

impl ParamType {
    fn ty(self) -> Ty {
        match self {
            ParamType::Int => Ty::Int,
            ParamType::Float => Ty::Float,
            ParamType::Bool => Ty::Bool,
            ParamType::Str => Ty::Str,
        }
    }
}

/// The hint after "has no operand/result `x`": `label` (`operands of pd_op.sgd_`) and the names
/// the op does have.
fn names_hint<'a>(label: impl std::fmt::Display, names: impl Iterator<Item = &'a str>) -> String {
    format!("{label}: {}", names.collect::<Vec<_>>().join(", "))
}

#[cfg(test)]
mod tests {
    use crate::rules::builtins::{Builtin, Query};
    use crate::rules::compiled::{Action, AttrTest, OpSel, ValPat};
    use crate::rules::compiled::{Callee, Expr};
    use crate::rules::{load_str, stage_role, OpClass, Val};

    #[test]
    fn names_become_slots_and_stages_roles() {
        let text = "param k: int = 4;\n\
                    // t\n\
                    rule r {\n\
                        match %c = pd_op.cast(%x) {dtype: $d} in backward;\n\
                        where dtype(%x) == $d and k > 1;\n\
                        replace %c with %x for users in optimize;\n\
                        erase %c;\n\
                    }\n";
        let set = load_str("t.rw", text, std::path::Path::new("."), &[]).expect("loads");
        let r = &set.phases[0].structural[0];
        assert_eq!((r.name.as_str(), r.index, r.line), ("r", 0, 3));
        // %c, %x, $d: one slot each, shared by every mention.
        assert_eq!(r.slots, 3);
        let p = &r.patterns[0];
        assert!(matches!(&p.op, OpSel::Name(n) if n == "pd_op.cast"));
        assert_eq!(p.stage, stage_role("backward"));
        let Some(c) = p.bind else { panic!("bound") };
        let ValPat::Var { slot: x, .. } = p.args[0].pat else {
            panic!("a variable")
        };
        let AttrTest::Capture(d) = p.attrs[0].test else {
            panic!("a capture")
        };
        assert_eq!([c, x, d].iter().filter(|s| **s < 3).count(), 3);
        assert!(c != x && x != d && c != d);
        // The guard's call names a builtin; the parameter is a literal.
        let Expr::Binary { l, r: k_test, .. } = &r.guards[0] else {
            panic!("a conjunction")
        };
        let Expr::Binary { l: call, .. } = &**l else {
            panic!("a comparison")
        };
        assert!(matches!(
            &**call,
            Expr::Call {
                func: Callee::Builtin(Builtin::Query(Query::DType), _),
                ..
            }
        ));
        let Expr::Binary { l: k, .. } = &**k_test else {
            panic!("a comparison")
        };
        assert!(matches!(&**k, Expr::Lit(Val::Int(4), _)));
        let Action::Replace { only_in_stage, .. } = &r.actions[0] else {
            panic!("a replace")
        };
        assert_eq!(*only_in_stage, stage_role("optimize"));
        let Action::Erase { op, .. } = &r.actions[1] else {
            panic!("an erase")
        };
        assert_eq!(op.slot, c);
    }

    #[test]
    fn op_classes_and_alternatives_are_resolved() {
        let text = "// t\n\
                    rule r {\n\
                        match %o = optimizer(param: %p, ..);\n\
                        match %r = (pd_op.c_allreduce_sum | pd_op.all_reduce {reduce_type: 0})(%p);\n\
                        set %o {tag: true};\n\
                    }\n";
        let set = load_str("t.rw", text, std::path::Path::new("."), &[]).expect("loads");
        let r = &set.phases[0].structural[0];
        assert!(matches!(r.patterns[0].op, OpSel::Class(OpClass::Effect(_))));
        assert!(!r.patterns[0].positional);
        let OpSel::OneOf(alts) = &r.patterns[1].op else {
            panic!("a set")
        };
        assert!(matches!(&alts[1], OpSel::With(_, tests) if tests.len() == 1));
    }
}
