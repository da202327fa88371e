//! Checking a parsed rule file against the dialect table before anything runs: every name a
//! rule uses means something, and every expression has a kind that fits where it is used.
//!
//! What is checked (each failure is a [`Diagnostic`] at `file:line:col` with the source line, a
//! caret and, where one helps, a hint):
//! - rules: a one-line `//` comment right above every rule; unique rule names in the file;
//!   clause order (`match`, then `where`, then actions);
//! - patterns: op names in the dialect table (quoted generic names excepted), op classes that
//!   exist, operand names the op (or some op of the class) has, stage names;
//! - expressions: names that are parameters, stages or dtypes; values and captures bound before
//!   use; known functions with the right number of arguments; operand kinds that fit
//!   (`1.0 / avg` with a bool `avg` is an error, so is `where 3;`);
//! - actions: erase/move/set/rewire apply to ops a pattern or build bound; rewired operand
//!   names exist; ops are built only where an action places them;
//! - equational rules: the right-hand side uses only variables the left binds, and the rule
//!   translates to e-graph rules.
//!
//! A file is checked on its own, with the parameters' final values; which files are included
//! and in what order is the loader's business ([`super::load`]).

use super::ast::*;
use super::builtins::{Builtin, Kind, Query};
use super::compiled::{self, CompiledRule, Field, Slot};
use super::decl::{rule_attrs, rule_operands, OpTable};
use super::eval::dtype_name;
use super::load::line_starts;
use super::parse::comment_above;
use super::plan::{self, Bound, BoundSlots, Unreached};
use super::require::loaded_require;
use super::resolve;
use super::suggest::{closest, did_you_mean};
use super::ty::Ty;
use super::{stage_role, OpClass, Param, ParamType, STAGES};
use crate::diag::{Diagnostic, SourceFile};
use crate::dialect::{Dialect, OpSpec, ResultRule};
use crate::value::Val;
use indexmap::{IndexMap, IndexSet};
use std::collections::HashMap;

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

/// What a `%name` is bound to in a rule.
#[derive(Debug, Clone)]
enum Binding {
    /// An op matched by a pattern or built by an action; `ops` lists the op names it can be
    /// (empty when any op of a class or a quoted name).
    Op(Vec<&'static OpSpec>),
    /// A value (an operand variable, a state buffer).
    Value,
}

pub(super) struct Checker<'a> {
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
    /// The e-graph rules each equational rule of the file stands for, by the rule's offset:
    /// translating is how they are checked, and the loader keeps the translation.
    pub(super) translated: HashMap<usize, Vec<crate::egraph::EqRule>>,
    /// Each structural rule of the file, resolved, by the rule's offset.
    pub(super) resolved: HashMap<usize, CompiledRule>,
    /// The file's index among the loaded files (a resolved rule's origin).
    file: usize,
    /// The ids the next resolved rule's builds and `exists` take.
    pub(super) ids: Ids,
}

impl<'a> Checker<'a> {
    /// A checker of the file `src`, the `file`th loaded, whose rules' builds and `exists` are
    /// numbered from `ids` on.
    pub(super) fn new(
        src: &'a SourceFile,
        file: usize,
        params: &'a IndexMap<String, Param>,
        ops: &'a OpTable,
        ids: Ids,
    ) -> Self {
        Checker {
            src,
            params,
            dialect: Dialect::get(),
            ops,
            erased: IndexMap::new(),
            values: IndexMap::new(),
            captures: IndexMap::new(),
            slots: 0,
            equational: false,
            translated: HashMap::new(),
            resolved: HashMap::new(),
            file,
            ids,
        }
    }

    fn at(&self, offset: usize, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::at(self.src, offset, msg)
    }

    /// Checks every item of `f`. After an error it goes on with the next item (a rule, a
    /// parameter's constraint, an import's condition, a `require`), so every faulty rule of the
    /// file is reported, each with its first error, in source order.
    pub(super) fn check_file(&mut self, f: &File) -> Vec<Diagnostic> {
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
                        errors.extend(self.expr(c).err());
                    }
                }
                Item::Import(im) => {
                    if let Some(c) = &im.cond {
                        let r = self
                            .expr(c)
                            .and_then(|(t, _)| self.want_bool(t, c, "an import condition must be"));
                        errors.extend(r.err());
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
                        errors.extend(self.rule(r, &mut rule_names, &line_starts).err());
                    }
                    for q in &p.requires {
                        errors.extend(self.require(q).err());
                    }
                }
                Item::Rule(r) => errors.extend(self.rule(r, &mut rule_names, &line_starts).err()),
                Item::Require(q) => errors.extend(self.require(q).err()),
                Item::Op(_) => {}
            }
        }
        errors
    }

    /// Checks a `require`'s count and message (every file is checked, included or not).
    fn require(&self, q: &Require) -> Result<(), Diagnostic> {
        let params = |n: &str| self.params.get(n).map(|p| p.value.clone());
        loaded_require(self.src, 0, &params, q).map(|_| ())
    }

    /// Checks `r` and keeps what it resolves to ([`Checker::resolved`], [`Checker::translated`]).
    fn rule<'r>(
        &mut self,
        r: &'r Rule,
        names: &mut IndexMap<&'r str, Span>,
        line_starts: &[usize],
    ) -> Result<(), Diagnostic> {
        let name = r.name();
        if comment_above(self.src, r.span().0).is_none_or(|c| c.is_empty()) {
            return Err(self
                .at(r.span().0, format!("rule `{}` has no comment", name.name))
                .with_hint(
                    "write a one-line `//` comment right above every rule saying why it is sound",
                ));
        }
        if let Some(&first) = names.get(name.name.as_str()) {
            return Err(resolve::rule_defined_twice(self.src, name, self.src, first));
        }
        names.insert(&name.name, name.span);
        self.values.clear();
        self.captures.clear();
        self.slots = 0;
        self.erased.clear();
        self.equational = matches!(r, Rule::Equational(_));
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
            Rule::Equational(e) => self.equational(e),
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
        // Bind everything the patterns name first: patterns are one conjunction.
        let mut resolved = Vec::with_capacity(patterns.len());
        for p in &patterns {
            resolved.push(self.bind_pattern(p)?);
        }
        for (p, rp) in patterns.iter().zip(&mut resolved) {
            self.pattern_exprs(p, rp)?;
        }
        let (mut guards, mut actions) = (Vec::new(), Vec::new());
        for c in &r.clauses {
            match c {
                Clause::Where(e) => {
                    let (t, g) = self.expr_no_build(e)?;
                    self.want_bool(t, e, "a `where` guard must be")?;
                    guards.push(g);
                }
                Clause::Action(a) => actions.push(self.action(a)?),
                Clause::Match(_) => {}
            }
        }
        if actions.is_empty() {
            return Err(self
                .at(
                    r.name.span.0,
                    format!("rule `{}` has no action", r.name.name),
                )
                .with_hint("a rule that changes nothing is a bug; add an action after `where`"));
        }
        let plan = plan::of_match(&resolved).map_err(|j| {
            Unreached::Match {
                offset: resolved[j].span.0,
                rule: r.name.name.clone(),
            }
            .diagnostic(self.src)
        })?;
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

    /// The ops `sel` can be (none listed: any op of a class, or a quoted name nobody declared)
    /// and the selector the matcher tests.
    fn op_sel(&self, sel: &OpSel) -> Result<(Vec<&'static OpSpec>, compiled::OpSel), Diagnostic> {
        Ok(match sel {
            OpSel::Name(i) => match self.ops.spec(&i.name) {
                Some(s) => (vec![s], compiled::OpSel::Name(i.name.clone())),
                None => return Err(resolve::unknown_op_in_pattern(i).at(self.src)),
            },
            OpSel::Quoted(i) => (
                self.ops.quoted_spec(&i.name).into_iter().collect(),
                compiled::OpSel::Name(i.name.clone()),
            ),
            OpSel::Class(c) => {
                let class = resolve::op_class(c).map_err(|p| p.at(self.src))?;
                let specs = match &class {
                    OpClass::Any => vec![],
                    OpClass::Effect(e) => self
                        .dialect
                        .all()
                        .iter()
                        .filter(|s| s.effect == *e)
                        .collect(),
                };
                (specs, compiled::OpSel::Class(class))
            }
            OpSel::OneOf(v, _) => {
                let mut specs = Vec::new();
                let mut alts = Vec::with_capacity(v.len());
                for s in v {
                    let (sp, alt) = self.op_sel(s)?;
                    specs.extend(sp);
                    alts.push(alt);
                }
                (specs, compiled::OpSel::OneOf(alts))
            }
            OpSel::With { sel, attrs, .. } => {
                let mut tests = Vec::with_capacity(attrs.len());
                for a in attrs {
                    let t = resolve::alt_test(a).map_err(|p| p.at(self.src))?;
                    tests.push((a.key.name.clone(), t));
                }
                let (specs, inner) = self.op_sel(sel)?;
                (specs, compiled::OpSel::With(Box::new(inner), tests))
            }
        })
    }

    /// An operand name `n` that `op` (as written: a name, a class, a set) does not have; the
    /// hint lists the operands of `spec`, one op it can be.
    fn no_operand(&self, n: &Ident, op: &str, spec: &OpSpec) -> Diagnostic {
        self.at(n.span.0, format!("`{op}` has no operand `{}`", n.name))
            .with_hint(names_hint(
                format!("operands of {}", spec.name),
                spec.operand_names(),
            ))
    }

    /// `e`, of type `t`, where a bool is needed; `needs` says where ("a guard must be").
    fn want_bool(&self, t: Ty, e: &Expr, needs: &str) -> Result<(), Diagnostic> {
        if t.is(Ty::Bool) {
            return Ok(());
        }
        Err(self.at(e.span().0, format!("{needs} a bool, found {}", t.a_name())))
    }

    /// The op role of the stage `i` names.
    fn stage(&self, i: &Ident) -> Result<i64, Diagnostic> {
        resolve::stage(i).map_err(|p| p.at(self.src))
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
                Binding::Op(_) => Bound::Op,
                Binding::Value => Bound::Value,
            };
            b.set(*slot, held);
        }
        b
    }

    /// `%x` or `%x.field`, of a name the rule bound.
    fn value_ref(&self, v: &ValueRef) -> Result<compiled::ValueRef, Diagnostic> {
        let Some((_, slot)) = self.values.get(&v.name.name) else {
            return Err(self.unbound(&v.name));
        };
        Ok(compiled::ValueRef {
            slot: *slot,
            name: v.name.name.clone(),
            name_span: v.name.span,
            field: v.field.as_ref().map(|f| Field {
                text: f.name.clone(),
                index: f.name.parse().ok(),
            }),
            span: v.span,
        })
    }

    /// A pattern, its names bound; the expressions its attributes are compared with come after
    /// every pattern of the conjunction is bound ([`Checker::pattern_exprs`]).
    fn bind_pattern(&mut self, p: &OpPattern) -> Result<compiled::Pattern, Diagnostic> {
        let (specs, op) = self.op_sel(&p.op)?;
        let stage = p.stage.as_ref().map(|s| self.stage(s)).transpose()?;
        let mut bind = None;
        if let Some(b) = &p.bind {
            if matches!(self.values.get(&b.name), Some((Binding::Op(_), _))) {
                return Err(self.at(b.span.0, format!("`{}` names two ops in this rule", b.name)));
            }
            bind = Some(self.bind_value(&b.name, Binding::Op(specs.clone())));
        }
        let named_known = !specs.is_empty();
        let mut args = Vec::with_capacity(p.args.len());
        for a in &p.args {
            if let Some(o) = &a.operand {
                if named_known && !specs.iter().any(|s| s.operand_index(&o.name).is_some()) {
                    return Err(self.no_operand(o, &sel_text(&p.op), specs[0]));
                }
                if !named_known {
                    return Err(self
                        .at(
                            o.span.0,
                            format!(
                                "operand names need a known op; `{}` has no operand list",
                                sel_text(&p.op)
                            ),
                        )
                        .with_hint("use positional operands for quoted ops and `any`"));
                }
            }
            let pat = match &a.pat {
                ValPat::Var { name, ty } => compiled::ValPat::Var {
                    slot: self.operand_value(&name.name),
                    ty: ty.as_ref().map(|t| self.bind_capture(&t.name)),
                },
                ValPat::Wild(_) => compiled::ValPat::Wild,
                ValPat::Op(inner) if inner.some => {
                    return Err(self
                        .at(inner.span.0, "`(.., %v, ..)` is allowed in a top-level pattern only")
                        .with_hint("write the nested op as a pattern of its own: `%x = any(.., %v, ..), %o = op(%x)`"));
                }
                ValPat::Op(inner) => compiled::ValPat::Op(Box::new(self.bind_pattern(inner)?)),
            };
            args.push(compiled::ArgPat {
                operand: a.operand.as_ref().map(|o| o.name.clone()),
                pat,
            });
        }
        if !p.rest
            && named_known
            && p.args.iter().all(|a| a.operand.is_none())
            && !p.args.is_empty()
        {
            let n = p.args.len();
            if !specs.iter().any(|s| OpSpec::count_fits(s.operands, n)) {
                return Err(self
                    .at(
                        p.span.0,
                        format!("`{}` does not take {n} operand(s)", sel_text(&p.op)),
                    )
                    .with_hint("end the list with `..` to match a prefix, or name the operands"));
            }
        }
        let mut attrs = Vec::with_capacity(p.attrs.len());
        for a in &p.attrs {
            let test = match &a.val {
                AttrPatVal::Capture(c) => compiled::AttrTest::Capture(self.bind_capture(&c.name)),
                AttrPatVal::Present(_) => compiled::AttrTest::Present,
                AttrPatVal::Absent(_) => compiled::AttrTest::Absent,
                // Resolved by `pattern_exprs`.
                AttrPatVal::Equals(e) => {
                    compiled::AttrTest::Equals(compiled::Expr::Lit(Val::Bool(false), e.span()))
                }
            };
            attrs.push(compiled::AttrPat {
                key: a.key.name.clone(),
                test,
            });
        }
        Ok(compiled::Pattern {
            bind,
            op,
            stage,
            positional: p.args.iter().all(|a| a.operand.is_none()),
            args,
            rest: p.rest,
            some: p.some,
            attrs,
            span: p.span,
        })
    }

    /// The attribute values `p` (resolved as `rp`) and its nested patterns compare with.
    fn pattern_exprs(
        &mut self,
        p: &OpPattern,
        rp: &mut compiled::Pattern,
    ) -> Result<(), Diagnostic> {
        for (a, ra) in p.attrs.iter().zip(&mut rp.attrs) {
            if let AttrPatVal::Equals(e) = &a.val {
                ra.test = compiled::AttrTest::Equals(self.expr_no_build(e)?.1);
            }
        }
        for (a, ra) in p.args.iter().zip(&mut rp.args) {
            if let (ValPat::Op(inner), compiled::ValPat::Op(rinner)) = (&a.pat, &mut ra.pat) {
                self.pattern_exprs(inner, rinner)?;
            }
        }
        Ok(())
    }

    /// The op of `at end of region N of E` / `into region N of E`: an op the rule bound (by a
    /// pattern or a build) that holds regions when its name is known.
    fn region_op(&self, e: &Expr) -> Result<compiled::Expr, Diagnostic> {
        let Expr::Var(Var::Value(v)) = e else {
            return Err(self.at(
                e.span().0,
                "`region N of` needs an op the rule bound, such as `%if`",
            ));
        };
        let (specs, op) = self.op_ref(v)?;
        if !specs.is_empty()
            && specs
                .iter()
                .all(|s| crate::dialect::region_count(s.name) == 0)
        {
            return Err(self
                .at(v.span.0, format!("`{}` holds no regions", text_of(v)))
                .with_hint("region ops: `pd_op.if` (regions 0 and 1), `pd_op.while` (region 0)"));
        }
        Ok(compiled::Expr::Var(compiled::Var::Value(op)))
    }

    /// `at end of region N of %op`.
    fn region_end(
        &self,
        op: &Expr,
        index: u32,
        span: Span,
    ) -> Result<compiled::InsertPoint, Diagnostic> {
        Ok(compiled::InsertPoint::RegionEnd {
            op: self.region_op(op)?,
            index,
            span,
        })
    }

    /// An op the rule bound (by a pattern or a build) and not erased yet: the ops it can be,
    /// and the reference to it.
    fn op_ref(
        &self,
        v: &ValueRef,
    ) -> Result<(Vec<&'static OpSpec>, compiled::ValueRef), Diagnostic> {
        if let Some(at) = self.erased.get(&v.name.name) {
            let (line, col) = self.src.line_col(at.0);
            return Err(self
                .at(
                    v.name.span.0,
                    format!(
                        "`{}` is erased above ({line}:{col}): nothing can be done to it after",
                        v.name.name
                    ),
                )
                .with_hint("put this action before the `erase`"));
        }
        match self.values.get(&v.name.name) {
            Some((Binding::Op(s), _)) if v.field.is_none() => Ok((s.clone(), self.value_ref(v)?)),
            Some(_) => Err(self
                .at(v.span.0, format!("`{}` is a value, not an op", text_of(v)))
                .with_hint("bind the op in the pattern: `match %o = pd_op.cast(%x);`")),
            None => Err(self.unbound(&v.name)),
        }
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

    fn action(&mut self, a: &Action) -> Result<compiled::Action, Diagnostic> {
        Ok(match a {
            Action::Let { name, value, .. } => {
                let (_, value) = self.expr_no_build(value)?;
                compiled::Action::Let {
                    slot: self.bind_capture(&name.name),
                    value,
                }
            }
            Action::State {
                bind,
                name,
                ty,
                init,
                span,
            } => {
                let (t, name_x) = self.expr_no_build(name)?;
                if !t.is(Ty::Str) {
                    return Err(self.at(
                        name.span().0,
                        format!("a state's name must be a string, found {}", t.a_name()),
                    ));
                }
                let (t, ty_x) = self.expr_no_build(ty)?;
                if !t.is(Ty::Type) {
                    return Err(self
                        .at(
                            ty.span().0,
                            format!(
                                "a state's type must be a type (like type(%g)), found {}",
                                t.a_name()
                            ),
                        )
                        .with_hint("type(%g) or tensor(shape(%g), float32)"));
                }
                let slot = self.bind_value(&bind.name, Binding::Value);
                self.startup_operands(init)?;
                compiled::Action::State {
                    bind: slot,
                    name: name_x,
                    ty: ty_x,
                    init: self.build(init)?,
                    span: *span,
                }
            }
            Action::Insert { at, build, .. } => {
                let at = match at {
                    InsertPoint::After(e) => {
                        let (t, x) = self.expr_no_build(e)?;
                        if !t.valueish() {
                            return Err(self.at(
                                e.span().0,
                                format!("`after` needs a value or an op, found {}", t.a_name()),
                            ));
                        }
                        compiled::InsertPoint::After(x)
                    }
                    InsertPoint::Before(e) => {
                        let (t, x) = self.expr_no_build(e)?;
                        if !t.is(Ty::Op) {
                            return Err(self.at(
                                e.span().0,
                                format!(
                                    "`before` needs an op bound by a pattern, found {}",
                                    t.a_name()
                                ),
                            ));
                        }
                        compiled::InsertPoint::Before(x)
                    }
                    InsertPoint::StageEnd(s) => compiled::InsertPoint::StageEnd(self.stage(s)?),
                    InsertPoint::StageStart(s) => compiled::InsertPoint::StageStart(self.stage(s)?),
                    InsertPoint::RegionEnd { op, index, span } => {
                        self.region_end(op, *index, *span)?
                    }
                };
                compiled::Action::Insert {
                    at,
                    build: self.build(build)?,
                }
            }
            Action::Replace {
                value,
                with,
                only_in_stage,
                span,
            } => {
                let (t, value_x) = self.expr_no_build(value)?;
                if !t.valueish() {
                    return Err(self.at(
                        value.span().0,
                        format!("`replace` needs a value, found {}", t.a_name()),
                    ));
                }
                let (t, with_x) = self.expr(with)?;
                if !t.valueish() {
                    return Err(self.at(
                        with.span().0,
                        format!(
                            "a value can only be replaced by a value, found {}",
                            t.a_name()
                        ),
                    ));
                }
                compiled::Action::Replace {
                    value: value_x,
                    with: with_x,
                    only_in_stage: only_in_stage.as_ref().map(|s| self.stage(s)).transpose()?,
                    span: *span,
                }
            }
            Action::SetOperand {
                op,
                target,
                value,
                span,
            } => {
                let (specs, op_x) = self.op_ref(op)?;
                let target = match target {
                    OperandSel::Name(n) => {
                        if specs.is_empty() {
                            return Err(self.at(
                                n.span.0,
                                format!(
                                    "operand names need a known op; `{}` may be any op",
                                    op.name.name
                                ),
                            ));
                        }
                        if !specs.iter().any(|s| s.operand_index(&n.name).is_some()) {
                            return Err(self.no_operand(n, &op.name.name, specs[0]));
                        }
                        compiled::OperandSel::Name(n.name.clone(), n.span)
                    }
                    OperandSel::Value(v) => {
                        self.expr_no_build(&Expr::Var(Var::Value(v.clone())))?;
                        compiled::OperandSel::Value(self.value_ref(v)?)
                    }
                };
                let (t, value_x) = self.expr(value)?;
                if !t.valueish() {
                    return Err(self.at(
                        value.span().0,
                        format!("an operand must be a value, found {}", t.a_name()),
                    ));
                }
                compiled::Action::SetOperand {
                    op: op_x,
                    target,
                    value: value_x,
                    span: *span,
                }
            }
            Action::Erase { op, span } => {
                let (_, op_x) = self.op_ref(op)?;
                self.erased.insert(op.name.name.clone(), *span);
                compiled::Action::Erase {
                    op: op_x,
                    span: *span,
                }
            }
            Action::Move { op, to, span } => {
                let (_, op_x) = self.op_ref(op)?;
                let to = match to {
                    InsertPoint::After(e) | InsertPoint::Before(e) => {
                        let (t, x) = self.expr_no_build(e)?;
                        if !t.valueish() {
                            return Err(self.at(
                                e.span().0,
                                format!(
                                    "an op can only move next to a value or an op, not {}",
                                    t.a_name()
                                ),
                            ));
                        }
                        match to {
                            InsertPoint::After(_) => compiled::InsertPoint::After(x),
                            _ => compiled::InsertPoint::Before(x),
                        }
                    }
                    InsertPoint::StageEnd(s) => compiled::InsertPoint::StageEnd(self.stage(s)?),
                    InsertPoint::StageStart(s) => compiled::InsertPoint::StageStart(self.stage(s)?),
                    InsertPoint::RegionEnd { op, index, span } => {
                        self.region_end(op, *index, *span)?
                    }
                };
                compiled::Action::Move {
                    op: op_x,
                    to,
                    span: *span,
                }
            }
            Action::MoveStage { stage, to, span } => {
                let role = self.stage(stage)?;
                let to = match to {
                    InsertPoint::RegionEnd { op, index, span } => {
                        self.region_end(op, *index, *span)?
                    }
                    _ => {
                        return Err(self.at(
                            stage.span.0,
                            "the ops of a stage can only move into a region: `move optimize ops into region 0 of %if;`",
                        ))
                    }
                };
                compiled::Action::MoveStage {
                    stage: role,
                    to,
                    span: *span,
                }
            }
            Action::SetAttrs { op, attrs, .. } => {
                let (specs, op_x) = self.op_ref(op)?;
                let mut set = Vec::with_capacity(attrs.len());
                for (k, e) in attrs {
                    self.no_spread(k)?;
                    let (t, x) = self.attr_expr(e)?;
                    if let [spec] = specs[..] {
                        self.attr_kind(spec, k, e, t)?;
                    }
                    set.push((k.name.clone(), x));
                }
                compiled::Action::SetAttrs {
                    op: op_x,
                    attrs: set,
                }
            }
            Action::If {
                cond, then, els, ..
            } => {
                let (t, cond_x) = self.expr_no_build(cond)?;
                self.want_bool(t, cond, "`if` needs")?;
                // What a branch erases may still exist after the `if` (the engine refuses a
                // later action on it when it was erased).
                let before = self.erased.clone();
                let then = self.actions(then)?;
                self.erased = before.clone();
                let els = self.actions(els)?;
                self.erased = before;
                compiled::Action::If {
                    cond: cond_x,
                    then,
                    els,
                }
            }
            Action::Error { message, span } => compiled::Action::Error {
                message: self.str_parts(&message.parts)?,
                span: *span,
            },
        })
    }

    fn actions(&mut self, v: &[Action]) -> Result<Vec<compiled::Action>, Diagnostic> {
        v.iter().map(|a| self.action(a)).collect()
    }

    /// A state's initializer is built in the startup program, where no value of the main
    /// program exists: its operands (and theirs) must be ops built inline.
    fn startup_operands(&self, b: &Build) -> Result<(), Diagnostic> {
        for a in &b.args {
            match &a.value {
                Expr::Build(inner) => self.startup_operands(inner)?,
                e if is_none(e) => {}
                e => {
                    return Err(self
                        .at(
                            e.span().0,
                            "a state's initializer runs in the startup program: its operands \
                             must be ops built inline, not values of the main program",
                        )
                        .with_hint(
                            "pd_op.full() {..} builds a constant of a given shape and dtype",
                        ))
                }
            }
        }
        Ok(())
    }

    fn build(&mut self, b: &Build) -> Result<compiled::Build, Diagnostic> {
        let spec = if b.op.quoted {
            self.ops.quoted_spec(&b.op.name.name)
        } else {
            match self.ops.spec(&b.op.name.name) {
                Some(s) => Some(s),
                None => {
                    return Err(resolve::unknown_op(&b.op.name).at(self.src).with_hint(format!(
                        "an op outside the dialect table is written quoted (\"{}\"), or declared: `op {}(x) -> (out);`",
                        b.op.name.name, b.op.name.name
                    )));
                }
            }
        };
        // The operand slots the build fills with a value (not `none`).
        let mut given: Vec<usize> = Vec::new();
        let mut args = Vec::with_capacity(b.args.len());
        for (i, a) in b.args.iter().enumerate() {
            let mut slot = i;
            if let Some(n) = &a.operand {
                match spec.and_then(|s| s.operand_index(&n.name).map(|k| (s, k))) {
                    Some((_, k)) => slot = k,
                    None => match spec {
                        Some(s) => {
                            return Err(self.no_operand(n, s.name, s));
                        }
                        None => {
                            return Err(self.at(
                                n.span.0,
                                "a quoted op has no operand names: use positional operands",
                            ))
                        }
                    },
                }
            }
            let (t, value) = self.expr(&a.value)?;
            if !t.valueish() {
                return Err(self.at(
                    a.value.span().0,
                    format!("an operand must be a value, found {}", t.a_name()),
                ));
            }
            if !is_none(&a.value) {
                given.push(slot);
            }
            args.push(compiled::BuildArg {
                index: Ok(slot),
                value,
            });
        }
        if let Some(s) = spec {
            if b.args.iter().all(|a| a.operand.is_none())
                && !OpSpec::count_fits(s.operands, b.args.len())
            {
                return Err(self.at(
                    b.span.0,
                    format!(
                        "`{}` takes {} operand(s), {} given",
                        s.name,
                        s.operands.len(),
                        b.args.len()
                    ),
                ));
            }
        }
        let mut attrs = Vec::with_capacity(b.attrs.len());
        for (k, e) in &b.attrs {
            self.no_spread(k)?;
            let (t, value) = self.attr_expr(e)?;
            if let Some(s) = spec {
                self.attr_kind(s, k, e, t)?;
            }
            attrs.push(compiled::BuildAttr {
                key: k.name.clone(),
                fixed: value.is_fixed(),
                value,
            });
        }
        // What the rule leaves out, Paddle's builder would have set (`dialect::default_attrs`);
        // the engine places every key where Paddle's sorted order puts it.
        if spec.is_some() {
            for (key, d) in self.ops.defaults(&b.op.name.name) {
                if !attrs.iter().any(|a| a.key == key) {
                    attrs.push(compiled::BuildAttr {
                        key,
                        value: compiled::Expr::Lit(d, b.span),
                        fixed: true,
                    });
                }
            }
        }
        let types = match &b.ty {
            Some(t) => self.result_types(t, spec)?,
            None => {
                self.derivable(b, spec, &given)?;
                match self.ops.declared(&b.op.name.name) {
                    Some(d) => compiled::ResultTypes::Operands(d.result_like.clone()),
                    None => compiled::ResultTypes::Derived,
                }
            }
        };
        let bind = b
            .bind
            .as_ref()
            .map(|bind| self.bind_value(&bind.name, Binding::Op(spec.into_iter().collect())));
        Ok(compiled::Build {
            id: self.ids.take_build(),
            bind,
            op: b.op.name.name.clone(),
            spec,
            types,
            named_args: b.args.iter().any(|a| a.operand.is_some()),
            args,
            attrs,
            span: b.span,
        })
    }

    /// An attribute value against the type the op's attribute has (declared, or what the
    /// dialect says about the key): `value: "0.5"` on `pd_op.full` is refused.
    fn attr_kind(&self, spec: &OpSpec, k: &Ident, e: &Expr, t: Ty) -> Result<(), Diagnostic> {
        let Some(kind) = self.ops.attr_kind(spec, &k.name) else {
            return Ok(());
        };
        if kind.accepts(t) {
            return Ok(());
        }
        Err(self
            .at(
                e.span().0,
                format!(
                    "`{}` of `{}` is {}, found {}",
                    k.name,
                    spec.name,
                    crate::value::with_article(kind.name()),
                    t.a_name()
                ),
            )
            .with_hint(match kind {
                super::decl::AttrKind::List => "a list is written [1, 2]",
                super::decl::AttrKind::Place => "a place is written Place(cpu)",
                super::decl::AttrKind::DType => "a dtype is written float32 (or f32), or dtype(%x)",
                _ => "write a literal of that type, or compute one: dtype(%x), shape(%x), 1.0 / k",
            }))
    }

    /// `-> TYPE`: a type (`type(%x)`, `tensor<4xf32>`, `tensor(shape(%x), f32)`), `like(%o)`
    /// (the result types of an op the rule bound), or a list of types and `none`s, one per
    /// result.
    fn result_types(
        &mut self,
        t: &Expr,
        spec: Option<&'static OpSpec>,
    ) -> Result<compiled::ResultTypes, Diagnostic> {
        if let Some(v) = like_arg(t) {
            let (_, op) = self.op_ref(v)?;
            return Ok(compiled::ResultTypes::Like(op));
        }
        let (count, given) = match t {
            Expr::List(v, s) => {
                let items = v
                    .iter()
                    .map(|e| self.result_type(e))
                    .collect::<Result<_, _>>()?;
                (v.len(), compiled::Expr::List(items, *s))
            }
            e => (1, self.result_type(e)?),
        };
        if let Some(s) = spec {
            if !OpSpec::count_fits(s.results, count) {
                return Err(self
                    .at(
                        t.span().0,
                        format!(
                            "`{}` has {} result(s), {} type(s) given",
                            s.name,
                            s.results.len(),
                            count
                        ),
                    )
                    .with_hint(names_hint("results", s.result_names())));
            }
        }
        Ok(compiled::ResultTypes::Given(given))
    }

    /// One result's type, or `none`.
    fn result_type(&mut self, e: &Expr) -> Result<compiled::Expr, Diagnostic> {
        if is_none(e) {
            return Ok(compiled::Expr::Lit(Val::NullValue, e.span()));
        }
        let (ty, x) = self.expr_no_build(e)?;
        if !ty.is(Ty::Type) {
            return Err(self
                .at(e.span().0, format!("a result type must be a type, found {}", ty.a_name()))
                .with_hint("type(%x), tensor<4xf32>, tensor(shape(%x), float32), like(%o), or [t1, none] for several results"));
        }
        Ok(x)
    }

    /// A build without `-> TYPE` must have a result type the dialect (or the op's declaration)
    /// derives from what the build gives: refused here, before anything runs, otherwise.
    fn derivable(
        &self,
        b: &Build,
        spec: Option<&'static OpSpec>,
        given: &[usize],
    ) -> Result<(), Diagnostic> {
        let name = &b.op.name.name;
        let give = "give the result type after the attributes: `-> type(%x)`, `-> tensor<4xf32>` or `-> like(%o)`";
        let Some(spec) = spec else {
            return Err(self
                .at(
                    b.op.name.span.0,
                    format!("irw cannot derive the result type of `{name}`: it is not in the dialect table"),
                )
                .with_hint(give)
                .with_hint(format!("or declare the op in the rule file: `op \"{name}\"(x) -> (out: like(x));`")));
        };
        if !spec.results.iter().any(|r| !r.starts_with('?')) {
            return Ok(());
        }
        let missing_operand = |i: usize| -> Diagnostic {
            let o = spec.operand_names().nth(i).unwrap_or("?");
            self.at(
                b.span.0,
                format!("`{name}` takes its result type from operand `{o}`, which this build does not give"),
            )
            .with_hint(give)
        };
        if let Some(d) = self.ops.declared(spec.name) {
            for (r, like) in d.result_like.iter().enumerate() {
                match like {
                    Some(i) if !given.contains(i) => return Err(missing_operand(*i)),
                    Some(_) => {}
                    None if spec.results[r].starts_with(['?', '*']) => {}
                    None => {
                        let rn = spec.result_names().nth(r).unwrap_or("?");
                        return Err(self
                            .at(
                                b.op.name.span.0,
                                format!(
                                    "the declaration of `{name}` gives no type for result `{rn}`"
                                ),
                            )
                            .with_hint(give));
                    }
                }
            }
            return Ok(());
        }
        if spec.result_rule == ResultRule::Explicit {
            return Err(self
                .at(
                    b.op.name.span.0,
                    format!("irw cannot derive the result type of `{name}`"),
                )
                .with_hint(give));
        }
        for i in rule_operands(spec.result_rule) {
            if !given.contains(&i) {
                return Err(missing_operand(i));
            }
        }
        let defaults = self.ops.defaults(spec.name);
        for key in rule_attrs(spec.result_rule) {
            let written = b.attrs.iter().any(|(k, _)| k.name == key);
            if !written && !defaults.iter().any(|(k, _)| k == key) {
                return Err(self
                    .at(
                        b.span.0,
                        format!("`{name}` needs the attribute `{key}` to derive its result type"),
                    )
                    .with_hint(format!(
                        "write `{key}: ...` in its attribute block, or {}",
                        &give[5..]
                    )));
            }
        }
        Ok(())
    }

    /// `..%s` copies a matched op's attributes: only an equational right-hand side has one.
    fn no_spread(&self, k: &Ident) -> Result<(), Diagnostic> {
        if k.name == SPREAD_KEY {
            return Err(self.at(k.span.0, "`..%op` (copy an op's attributes) is only allowed on the right-hand side of an equational rule")
                .with_hint("write the attributes out, or copy them one by one with attr(%o, \"key\")"));
        }
        Ok(())
    }

    fn attr_expr(&mut self, e: &Expr) -> Result<(Ty, compiled::Expr), Diagnostic> {
        let (t, x) = self.expr_no_build(e)?;
        if matches!(t, Ty::Value | Ty::Op | Ty::Type) {
            return Err(self
                .at(
                    e.span().0,
                    format!("an attribute cannot hold {}", t.a_name()),
                )
                .with_hint(
                    "use dtype(%x), shape(%x) or name(%x) to get an attribute from a value",
                ));
        }
        Ok((t, x))
    }

    fn expr_no_build(&mut self, e: &Expr) -> Result<(Ty, compiled::Expr), Diagnostic> {
        if let Some(b) = find_build(e) {
            return Err(self.at(b.span.0, "an op can only be built where an action places it").with_hint("build ops in `after`/`before`/`at end of` actions or as the new operand in `in %o: x := ...`"));
        }
        self.expr(e)
    }

    fn str_parts(&mut self, parts: &[StrPart]) -> Result<Vec<compiled::StrPart>, Diagnostic> {
        let mut out = Vec::with_capacity(parts.len());
        for p in parts {
            out.push(match p {
                StrPart::Lit(l) => compiled::StrPart::Lit(l.clone()),
                StrPart::Expr(e) => compiled::StrPart::Expr(self.expr_no_build(e)?.1),
            });
        }
        Ok(out)
    }

    fn expr(&mut self, e: &Expr) -> Result<(Ty, compiled::Expr), Diagnostic> {
        Ok(match e {
            Expr::Lit(v, s) => {
                let t = match v {
                    Val::Int(_) => Ty::Int,
                    Val::Float(_) => Ty::Float,
                    Val::Bool(_) => Ty::Bool,
                    Val::Place(_) => Ty::Place,
                    Val::Str(_) => Ty::Str,
                    _ => Ty::Any,
                };
                (t, compiled::Expr::Lit(v.clone(), *s))
            }
            Expr::Str(parts, s) => (Ty::Str, compiled::Expr::Str(self.str_parts(parts)?, *s)),
            Expr::Var(Var::Bare(i)) => {
                // A parameter first, then a stage, then a dtype; each is a constant from here on.
                let (t, v) = if let Some(p) = self.params.get(&i.name) {
                    (p.ty.ty(), p.value.clone())
                } else if let Some(role) = stage_role(&i.name) {
                    (Ty::Stage, Val::Stage(role))
                } else if let Some(d) = dtype_name(&i.name) {
                    (Ty::DType, Val::DType(d))
                } else if i.name == NONE_NAME {
                    (Ty::Value, Val::NullValue)
                } else {
                    let mut d = self.at(i.span.0, format!("unknown name `{}`", i.name));
                    d = if self.values.contains_key(&format!("%{}", i.name)) {
                        d.with_hint(format!("values are written with `%`: %{}", i.name))
                    } else if self.captures.contains_key(&format!("${}", i.name)) {
                        d.with_hint(format!("captures are written with `$`: ${}", i.name))
                    } else {
                        let ps: Vec<&str> = self.params.keys().map(|s| s.as_str()).collect();
                        // Dtypes by their long forms: the short ones are a few letters, close
                        // to everything.
                        let names = ps
                            .iter()
                            .copied()
                            .chain(STAGES.iter().map(|(n, _)| *n))
                            .chain(crate::ir::DType::ALL.iter().map(|d| d.attr_name()));
                        if let Some(h) = did_you_mean(&closest(&i.name, names, 2)) {
                            d = d.with_hint(h);
                        }
                        d.with_hint(format!(
                            "a bare name is a parameter ({}), a stage ({}) or a dtype (float32, bf16, ...)",
                            if ps.is_empty() { "none declared".to_string() } else { ps.join(", ") },
                            STAGES.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
                        ))
                    };
                    return Err(d);
                };
                (t, compiled::Expr::Lit(v, i.span))
            }
            Expr::Var(Var::Value(v)) => {
                let t = self.value_ty(v)?;
                (
                    t,
                    compiled::Expr::Var(compiled::Var::Value(self.value_ref(v)?)),
                )
            }
            Expr::Var(Var::Capture(c)) => {
                let Some(&slot) = self.captures.get(&c.name) else {
                    return Err(self.unbound(c));
                };
                let var = compiled::Var::Capture {
                    slot,
                    name: c.name.clone(),
                    span: c.span,
                };
                (Ty::Any, compiled::Expr::Var(var))
            }
            Expr::List(items, s) => {
                let mut xs = Vec::with_capacity(items.len());
                for i in items {
                    xs.push(self.expr(i)?.1);
                }
                (Ty::List, compiled::Expr::List(xs, *s))
            }
            Expr::Unary { op, e, span } => {
                let (t, x) = self.expr(e)?;
                let t = match op {
                    UnOp::Neg if t.numeric() => t,
                    UnOp::Not if t.is(Ty::Bool) => Ty::Bool,
                    UnOp::Neg => {
                        return Err(self.at(span.0, format!("cannot negate {}", t.a_name())))
                    }
                    UnOp::Not => {
                        return Err(
                            self.at(span.0, format!("`not` needs a bool, found {}", t.a_name()))
                        )
                    }
                };
                let x = compiled::Expr::Unary {
                    op: *op,
                    e: Box::new(x),
                    span: *span,
                };
                (t, x)
            }
            Expr::Binary { op, l, r, span } => {
                let (a, lx) = self.expr(l)?;
                let (b, rx) = self.expr(r)?;
                let bad = |me: &Self| {
                    me.at(
                        span.0,
                        format!(
                            "cannot apply `{}` to {} and {}",
                            op.symbol(),
                            a.a_name(),
                            b.a_name()
                        ),
                    )
                };
                let t = match op {
                    BinOp::Add if a.is(Ty::Str) && b.is(Ty::Str) => Ty::Str,
                    BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div => {
                        if !a.numeric() || !b.numeric() {
                            return Err(bad(self));
                        }
                        if *op == BinOp::Div || a == Ty::Float || b == Ty::Float {
                            Ty::Float
                        } else if a == Ty::Any || b == Ty::Any {
                            Ty::Any
                        } else {
                            Ty::Int
                        }
                    }
                    BinOp::And | BinOp::Or => {
                        if !a.is(Ty::Bool) || !b.is(Ty::Bool) {
                            return Err(bad(self));
                        }
                        Ty::Bool
                    }
                    BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                        let ok = (a.numeric() && b.numeric()) || (a.is(Ty::Str) && b.is(Ty::Str));
                        if !ok {
                            return Err(bad(self));
                        }
                        Ty::Bool
                    }
                    BinOp::Eq | BinOp::Ne => Ty::Bool,
                    BinOp::In => {
                        let ok = match b {
                            Ty::Stage => a.valueish(),
                            Ty::List | Ty::Any => true,
                            Ty::Str => a.is(Ty::Str),
                            _ => false,
                        };
                        if !ok {
                            return Err(bad(self).with_hint(
                                "`x in [a, b]` tests membership, `%v in backward` tests a stage",
                            ));
                        }
                        Ty::Bool
                    }
                    BinOp::Contains | BinOp::StartsWith | BinOp::EndsWith => {
                        if !(a.is(Ty::Str) && b.is(Ty::Str)
                            || a == Ty::List && *op == BinOp::Contains)
                        {
                            return Err(bad(self).with_hint(
                                "name tests work on strings: name(%x) contains \"@RENAME\"",
                            ));
                        }
                        Ty::Bool
                    }
                };
                let x = compiled::Expr::Binary {
                    op: *op,
                    l: Box::new(lx),
                    r: Box::new(rx),
                    span: *span,
                };
                (t, x)
            }
            Expr::If { c, t, e, span } => {
                let (ct, cx) = self.expr(c)?;
                self.want_bool(ct, c, "`if` needs")?;
                let (a, tx) = self.expr(t)?;
                let (b, ex) = self.expr(e)?;
                let x = compiled::Expr::If {
                    c: Box::new(cx),
                    t: Box::new(tx),
                    e: Box::new(ex),
                    span: *span,
                };
                (if a == b { a } else { Ty::Any }, x)
            }
            Expr::Call { func, args, span } => {
                let builtin = Builtin::from_name(&func.name);
                if let (
                    Some(Builtin::Query(Query::Uses)),
                    [Expr::Binary {
                        op: BinOp::In,
                        l,
                        r,
                        ..
                    }],
                ) = (builtin, &args[..])
                {
                    return self.uses_in_stage(func, l, r, *span);
                }
                let mut tys = Vec::with_capacity(args.len());
                let mut xs = Vec::with_capacity(args.len());
                for a in args {
                    let (t, x) = self.expr(a)?;
                    tys.push(t);
                    xs.push(x);
                }
                let Some(f) = builtin else {
                    let all: Vec<&str> = Builtin::names().collect();
                    let mut d = self.at(func.span.0, format!("unknown function `{}`", func.name));
                    if let Some(h) = did_you_mean(&closest(&func.name, all.iter().copied(), 2)) {
                        d = d.with_hint(h);
                    } else {
                        d = d.with_hint(format!("functions: {}", all.join(", ")));
                    }
                    return Err(d);
                };
                let call = compiled::Expr::Call {
                    func: compiled::Callee::Builtin(f, func.span),
                    args: xs,
                    span: *span,
                };
                let info = f.info();
                if f.kind() == Kind::Pure {
                    // Pure functions report bad arguments when they are evaluated.
                    return Ok((info.result, call));
                }
                if f == Builtin::Query(Query::Const) && !self.equational {
                    return Err(self.at(func.span.0, "`const(%x)` (the scalar a value is known to equal) is only available in equational rules"));
                }
                let arity = info.arity;
                if tys.len() != arity {
                    return Err(self.at(
                        span.0,
                        format!(
                            "`{}` takes {arity} argument(s), {} given",
                            func.name,
                            tys.len()
                        ),
                    ));
                }
                let first_ok = match f {
                    Builtin::Query(Query::Tensor) => tys[0].is(Ty::List),
                    _ => tys[0].valueish(),
                };
                if !first_ok {
                    return Err(self
                        .at(
                            args[0].span().0,
                            format!(
                                "`{}` needs a value or op, found {}",
                                func.name,
                                tys[0].a_name()
                            ),
                        )
                        .with_hint("program queries take %values: name(%p), dtype(%g)"));
                }
                if matches!(f, Builtin::Query(Query::HasAttr | Query::Attr)) && !tys[1].is(Ty::Str)
                {
                    return Err(self.at(
                        args[1].span().0,
                        format!(
                            "`{}` needs an attribute name string, found {}",
                            func.name,
                            tys[1].a_name()
                        ),
                    ));
                }
                (info.result, call)
            }
            Expr::Build(b) => (Ty::Op, compiled::Expr::Build(Box::new(self.build(b)?))),
            Expr::Exists(x) => (Ty::Bool, compiled::Expr::Exists(self.exists(x)?)),
        })
    }

    /// `exists(patterns)`: the patterns are checked like a `match`; what they bind is local to
    /// the `exists`. Each pattern must be reachable from what the rule's match bound, through
    /// an operand variable (a value bound by the match or by an earlier pattern of the
    /// `exists`), so the engine finds candidates through use lists and never scans the program.
    fn exists(&mut self, x: &Exists) -> Result<Box<compiled::Exists>, Diagnostic> {
        let (pats, span) = (&x.patterns, x.span);
        if self.equational {
            return Err(self.at(
                span.0,
                "`exists(...)` asks about ops around a match: it is for structural rules",
            ));
        }
        if pats.is_empty() {
            return Err(self
                .at(span.0, "`exists()` needs at least one op pattern")
                .with_hint("exists(pd_op.scale_(%m, _) in optimize)"));
        }
        // Whether each pattern is reachable from what is bound is decided where the patterns
        // are planned (`super::plan`).
        let before = self.bound_slots();
        let (values, captures) = (self.values.clone(), self.captures.clone());
        let r = (|| {
            let mut resolved = Vec::with_capacity(pats.len());
            for p in pats {
                resolved.push(self.bind_pattern(p)?);
            }
            for (p, rp) in pats.iter().zip(&mut resolved) {
                self.pattern_exprs(p, rp)?;
            }
            Ok(resolved)
        })();
        self.values = values;
        self.captures = captures;
        let patterns = r?;
        let plan = plan::of_exists(&patterns, before).map_err(|j| {
            Unreached::Exists {
                offset: patterns[j].span.0,
            }
            .diagnostic(self.src)
        })?;
        Ok(Box::new(compiled::Exists {
            id: self.ids.take_exists(),
            patterns,
            plan,
            span,
        }))
    }

    /// What `%x` or `%x.field` is: a value, or the op a pattern or build bound.
    fn value_ty(&self, v: &ValueRef) -> Result<Ty, Diagnostic> {
        Ok(match self.values.get(&v.name.name) {
            None => return Err(self.unbound(&v.name)),
            Some((Binding::Value, _)) => {
                if let Some(f) = &v.field {
                    return Err(self.at(
                        f.span.0,
                        format!("`{}` is a value; only an op has result fields", v.name.name),
                    ));
                }
                Ty::Value
            }
            Some((Binding::Op(specs), _)) => {
                if let Some(f) = &v.field {
                    if f.name.parse::<usize>().is_err()
                        && !specs.is_empty()
                        && !specs.iter().any(|s| s.result_index(&f.name).is_some())
                    {
                        return Err(self
                            .at(
                                f.span.0,
                                format!("`{}` has no result `{}`", v.name.name, f.name),
                            )
                            .with_hint(names_hint(
                                format!("results of {}", specs[0].name),
                                specs[0].result_names(),
                            )));
                    }
                    Ty::Value
                } else {
                    Ty::Op
                }
            }
        })
    }

    /// `uses(%v in STAGE)`: `%v` a value or op, `STAGE` a stage name (not a parameter, a list or
    /// any other expression: the stage is what restricts the count).
    fn uses_in_stage(
        &mut self,
        func: &Ident,
        v: &Expr,
        stage: &Expr,
        span: Span,
    ) -> Result<(Ty, compiled::Expr), Diagnostic> {
        let (t, vx) = self.expr(v)?;
        if !t.valueish() {
            return Err(self
                .at(
                    v.span().0,
                    format!("`uses` needs a value or op, found {}", t.a_name()),
                )
                .with_hint("uses(%v in backward) counts the uses of %v by backward ops"));
        }
        let role =
            match stage {
                Expr::Var(Var::Bare(i)) if !self.params.contains_key(&i.name) => self.stage(i)?,
                e => return Err(self
                    .at(
                        e.span().0,
                        "`uses(%v in STAGE)` restricts the count to a stage: write a stage name",
                    )
                    .with_hint(resolve::stages_hint())),
            };
        let call = compiled::Expr::Call {
            func: compiled::Callee::UsesIn(func.span),
            args: vec![vx, compiled::Expr::Lit(Val::Stage(role), stage.span())],
            span,
        };
        Ok((Ty::Int, call))
    }

    fn equational(&mut self, r: &EqRule) -> Result<(), Diagnostic> {
        self.eq_lhs(&r.lhs)?;
        if let Some(g) = &r.guard {
            let (t, _) = self.expr_no_build(g)?;
            self.want_bool(t, g, "a guard must be")?;
        }
        self.eq_rhs(&r.rhs)?;
        if r.direction == Direction::Both {
            if let Term::Op { attrs, span, .. } = &r.rhs {
                if attrs.iter().any(|(_, e)| {
                    !matches!(
                        e,
                        Expr::Var(Var::Capture(_))
                            | Expr::Lit(Val::Int(_) | Val::Float(_) | Val::Bool(_), _)
                            | Expr::Str(..)
                    )
                }) {
                    return Err(self.at(span.0, "`<=>` needs both sides to be patterns: computed attributes are only allowed with `=>`"));
                }
            }
        }
        // Translate to the e-graph's rules now, so that what only the e-graph can refuse (an
        // op that is not pure, a result type it cannot infer, an expression it cannot
        // evaluate) is reported here, at the rule, before any program is read.
        let rules =
            super::lower::check(r, self.params).map_err(|(offset, msg)| self.at(offset, msg))?;
        self.translated.insert(r.span.0, rules);
        Ok(())
    }

    fn eq_lhs(&mut self, p: &OpPattern) -> Result<(), Diagnostic> {
        let (specs, _) = self.op_sel(&p.op)?;
        if let Some(b) = &p.bind {
            if self.values.contains_key(&b.name) {
                return Err(self.at(b.span.0, format!("`{}` is bound twice", b.name)));
            }
            self.bind_value(&b.name, Binding::Op(specs));
        }
        for a in &p.attrs {
            match &a.val {
                AttrPatVal::Capture(c) => {
                    self.bind_capture(&c.name);
                }
                AttrPatVal::Equals(e) => {
                    self.expr_no_build(e)?;
                }
                _ => {}
            }
        }
        for a in &p.args {
            match &a.pat {
                ValPat::Var { name, .. } => {
                    self.bind_value(&name.name, Binding::Value);
                }
                ValPat::Wild(_) => {}
                ValPat::Op(inner) => self.eq_lhs(inner)?,
            }
        }
        Ok(())
    }

    fn eq_rhs(&mut self, t: &Term) -> Result<(), Diagnostic> {
        match t {
            Term::Var(v) => {
                if !self.values.contains_key(&v.name) {
                    return Err(resolve::not_bound_by_lhs(v).at(self.src));
                }
            }
            Term::Op {
                op,
                attrs,
                children,
                ..
            } => {
                if !op.quoted && self.dialect.spec(&op.name.name).is_none() {
                    return Err(resolve::unknown_op_in_pattern(&op.name).at(self.src));
                }
                for (k, e) in attrs {
                    if k.name == SPREAD_KEY {
                        let ok = matches!(e, Expr::Var(Var::Value(v)) if v.field.is_none()
                            && matches!(self.values.get(&v.name.name), Some((Binding::Op(_), _))));
                        if !ok {
                            return Err(self.at(e.span().0, "`..` copies the attributes of an op the left-hand side binds (`%s = pd_op.scale(..)`)"));
                        }
                        continue;
                    }
                    self.attr_expr(e)?;
                }
                for c in children {
                    self.eq_rhs(c)?;
                }
            }
        }
        Ok(())
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
