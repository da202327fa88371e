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
use super::compiled::CompiledRule;
use super::decl::{rule_attrs, rule_operands, OpTable};
use super::eval::dtype_name;
use super::load::line_starts;
use super::lower::structural::{Ids, Origin};
use super::parse::comment_above;
use super::require::loaded_require;
use super::resolve;
use super::suggest::{closest, did_you_mean};
use super::ty::Ty;
use super::{OpClass, Param, ParamType, STAGES};
use crate::diag::{Diagnostic, SourceFile};
use crate::dialect::{Dialect, OpSpec, ResultRule};
use crate::value::Val;
use indexmap::{IndexMap, IndexSet};
use std::collections::HashMap;

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
    values: IndexMap<String, Binding>,
    captures: IndexSet<String>,
    /// Checking an equational rule (`const(%x)` is an e-graph query).
    equational: bool,
    /// The e-graph rules each equational rule of the file stands for, by the rule's offset:
    /// translating is how they are checked, and the loader keeps the translation.
    pub(super) translated: HashMap<usize, Vec<crate::egraph::EqRule>>,
    /// Each structural rule of the file that checked, lowered, by the rule's offset; lowering
    /// refuses what only a match plan finds (a pattern no step reaches).
    pub(super) lowered: HashMap<usize, CompiledRule>,
    /// The file's index among the loaded files (a lowered rule's origin).
    file: usize,
    /// The ids the next lowered rule's builds and `exists` take.
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
            captures: IndexSet::new(),
            equational: false,
            translated: HashMap::new(),
            lowered: HashMap::new(),
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
                            .and_then(|t| self.want_bool(t, c, "an import condition must be"));
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

    /// Checks `r` and keeps what it lowers to ([`Checker::lowered`], [`Checker::translated`]).
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
        self.erased.clear();
        self.equational = matches!(r, Rule::Equational(_));
        match r {
            Rule::Structural(s) => {
                self.structural(s)?;
                let origin = Origin {
                    file: self.file,
                    line: line_starts.partition_point(|&s| s <= r.span().0),
                    index: 0,
                };
                let lookup = |n: &str| self.params.get(n).map(|p| p.value.clone());
                let c = super::lower::structural(s, &lookup, origin, self.ops, &mut self.ids)
                    .map_err(|e| e.diagnostic(self.src))?;
                self.lowered.insert(r.span().0, c);
                Ok(())
            }
            Rule::Equational(e) => self.equational(e),
        }
    }

    fn structural(&mut self, r: &StructRule) -> Result<(), Diagnostic> {
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
        for p in &patterns {
            self.bind_pattern(p)?;
        }
        for p in &patterns {
            self.pattern_exprs(p)?;
        }
        let mut has_action = false;
        for c in &r.clauses {
            match c {
                Clause::Where(e) => {
                    let t = self.expr_no_build(e)?;
                    self.want_bool(t, e, "a `where` guard must be")?;
                }
                Clause::Action(a) => {
                    self.action(a)?;
                    has_action = true;
                }
                Clause::Match(_) => {}
            }
        }
        if !has_action {
            return Err(self
                .at(
                    r.name.span.0,
                    format!("rule `{}` has no action", r.name.name),
                )
                .with_hint("a rule that changes nothing is a bug; add an action after `where`"));
        }
        Ok(())
    }

    fn op_sel(&self, sel: &OpSel) -> Result<Vec<&'static OpSpec>, Diagnostic> {
        match sel {
            OpSel::Name(i) => match self.ops.spec(&i.name) {
                Some(s) => Ok(vec![s]),
                None => Err(resolve::unknown_op_in_pattern(i).at(self.src)),
            },
            OpSel::Quoted(i) => Ok(self.ops.quoted_spec(&i.name).into_iter().collect()),
            OpSel::Class(c) => match resolve::op_class(c).map_err(|p| p.at(self.src))? {
                OpClass::Any => Ok(vec![]),
                OpClass::Effect(e) => Ok(self
                    .dialect
                    .all()
                    .iter()
                    .filter(|s| s.effect == e)
                    .collect()),
            },
            OpSel::OneOf(v, _) => {
                let mut out = Vec::new();
                for s in v {
                    out.extend(self.op_sel(s)?);
                }
                Ok(out)
            }
            OpSel::With { sel, attrs, .. } => {
                for a in attrs {
                    resolve::alt_test(a).map_err(|p| p.at(self.src))?;
                }
                self.op_sel(sel)
            }
        }
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

    fn stage_name(&self, i: &Ident) -> Result<(), Diagnostic> {
        resolve::stage(i).map(|_| ()).map_err(|p| p.at(self.src))
    }

    fn bind_pattern(&mut self, p: &OpPattern) -> Result<(), Diagnostic> {
        let specs = self.op_sel(&p.op)?;
        if let Some(s) = &p.stage {
            self.stage_name(s)?;
        }
        if let Some(b) = &p.bind {
            if matches!(self.values.get(&b.name), Some(Binding::Op(_))) {
                return Err(self.at(b.span.0, format!("`{}` names two ops in this rule", b.name)));
            }
            self.values
                .insert(b.name.clone(), Binding::Op(specs.clone()));
        }
        let named_known = !specs.is_empty();
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
            match &a.pat {
                ValPat::Var { name, ty } => {
                    self.values
                        .entry(name.name.clone())
                        .or_insert(Binding::Value);
                    if let Some(t) = ty {
                        self.captures.insert(t.name.clone());
                    }
                }
                ValPat::Wild(_) => {}
                ValPat::Op(inner) if inner.some => {
                    return Err(self
                        .at(inner.span.0, "`(.., %v, ..)` is allowed in a top-level pattern only")
                        .with_hint("write the nested op as a pattern of its own: `%x = any(.., %v, ..), %o = op(%x)`"));
                }
                ValPat::Op(inner) => self.bind_pattern(inner)?,
            }
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
        for a in &p.attrs {
            if let AttrPatVal::Capture(c) = &a.val {
                self.captures.insert(c.name.clone());
            }
        }
        Ok(())
    }

    fn pattern_exprs(&mut self, p: &OpPattern) -> Result<(), Diagnostic> {
        for a in &p.attrs {
            if let AttrPatVal::Equals(e) = &a.val {
                self.expr_no_build(e)?;
            }
        }
        for a in &p.args {
            if let ValPat::Op(inner) = &a.pat {
                self.pattern_exprs(inner)?;
            }
        }
        Ok(())
    }

    /// The op of `at end of region N of E` / `into region N of E`: an op the rule bound (by a
    /// pattern or a build) that holds regions when its name is known.
    fn region_op(&self, e: &Expr) -> Result<(), Diagnostic> {
        let Expr::Var(Var::Value(v)) = e else {
            return Err(self.at(
                e.span().0,
                "`region N of` needs an op the rule bound, such as `%if`",
            ));
        };
        let specs = self.op_ref(v)?;
        if !specs.is_empty()
            && specs
                .iter()
                .all(|s| crate::dialect::region_count(s.name) == 0)
        {
            return Err(self
                .at(v.span.0, format!("`{}` holds no regions", text_of(v)))
                .with_hint("region ops: `pd_op.if` (regions 0 and 1), `pd_op.while` (region 0)"));
        }
        Ok(())
    }

    fn op_ref(&self, v: &ValueRef) -> Result<Vec<&'static OpSpec>, Diagnostic> {
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
            Some(Binding::Op(s)) if v.field.is_none() => Ok(s.clone()),
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

    fn action(&mut self, a: &Action) -> Result<(), Diagnostic> {
        match a {
            Action::Let { name, value, .. } => {
                self.expr_no_build(value)?;
                self.captures.insert(name.name.clone());
            }
            Action::State {
                bind,
                name,
                ty,
                init,
                ..
            } => {
                let t = self.expr_no_build(name)?;
                if !t.is(Ty::Str) {
                    return Err(self.at(
                        name.span().0,
                        format!("a state's name must be a string, found {}", t.a_name()),
                    ));
                }
                let t = self.expr_no_build(ty)?;
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
                self.values.insert(bind.name.clone(), Binding::Value);
                self.startup_operands(init)?;
                self.build(init)?;
            }
            Action::Insert { at, build, .. } => {
                match at {
                    InsertPoint::After(e) => {
                        let t = self.expr_no_build(e)?;
                        if !t.valueish() {
                            return Err(self.at(
                                e.span().0,
                                format!("`after` needs a value or an op, found {}", t.a_name()),
                            ));
                        }
                    }
                    InsertPoint::Before(e) => {
                        let t = self.expr_no_build(e)?;
                        if !t.is(Ty::Op) {
                            return Err(self.at(
                                e.span().0,
                                format!(
                                    "`before` needs an op bound by a pattern, found {}",
                                    t.a_name()
                                ),
                            ));
                        }
                    }
                    InsertPoint::StageEnd(s) | InsertPoint::StageStart(s) => self.stage_name(s)?,
                    InsertPoint::RegionEnd { op, .. } => self.region_op(op)?,
                }
                self.build(build)?;
            }
            Action::Replace {
                value,
                with,
                only_in_stage,
                ..
            } => {
                let t = self.expr_no_build(value)?;
                if !t.valueish() {
                    return Err(self.at(
                        value.span().0,
                        format!("`replace` needs a value, found {}", t.a_name()),
                    ));
                }
                let t = self.expr(with)?;
                if !t.valueish() {
                    return Err(self.at(
                        with.span().0,
                        format!(
                            "a value can only be replaced by a value, found {}",
                            t.a_name()
                        ),
                    ));
                }
                if let Some(s) = only_in_stage {
                    self.stage_name(s)?;
                }
            }
            Action::SetOperand {
                op, target, value, ..
            } => {
                let specs = self.op_ref(op)?;
                match target {
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
                    }
                    OperandSel::Value(v) => {
                        self.expr_no_build(&Expr::Var(Var::Value(v.clone())))?;
                    }
                }
                let t = self.expr(value)?;
                if !t.valueish() {
                    return Err(self.at(
                        value.span().0,
                        format!("an operand must be a value, found {}", t.a_name()),
                    ));
                }
            }
            Action::Erase { op, span } => {
                self.op_ref(op)?;
                self.erased.insert(op.name.name.clone(), *span);
            }
            Action::Move { op, to, .. } => {
                self.op_ref(op)?;
                match to {
                    InsertPoint::After(e) | InsertPoint::Before(e) => {
                        let t = self.expr_no_build(e)?;
                        if !t.valueish() {
                            return Err(self.at(
                                e.span().0,
                                format!(
                                    "an op can only move next to a value or an op, not {}",
                                    t.a_name()
                                ),
                            ));
                        }
                    }
                    InsertPoint::StageEnd(s) | InsertPoint::StageStart(s) => self.stage_name(s)?,
                    InsertPoint::RegionEnd { op, .. } => self.region_op(op)?,
                }
            }
            Action::MoveStage { stage, to, .. } => {
                self.stage_name(stage)?;
                match to {
                    InsertPoint::RegionEnd { op, .. } => self.region_op(op)?,
                    _ => {
                        return Err(self.at(
                            stage.span.0,
                            "the ops of a stage can only move into a region: `move optimize ops into region 0 of %if;`",
                        ))
                    }
                }
            }
            Action::SetAttrs { op, attrs, .. } => {
                let specs = self.op_ref(op)?;
                for (k, e) in attrs {
                    self.no_spread(k)?;
                    let t = self.attr_expr(e)?;
                    if let [spec] = specs[..] {
                        self.attr_kind(spec, k, e, t)?;
                    }
                }
            }
            Action::If {
                cond, then, els, ..
            } => {
                let t = self.expr_no_build(cond)?;
                self.want_bool(t, cond, "`if` needs")?;
                // What a branch erases may still exist after the `if` (the engine refuses a
                // later action on it when it was erased).
                let before = self.erased.clone();
                for a in then {
                    self.action(a)?;
                }
                self.erased = before.clone();
                for a in els {
                    self.action(a)?;
                }
                self.erased = before;
            }
            Action::Error { message, .. } => {
                self.str_lit(message)?;
            }
        }
        Ok(())
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

    fn build(&mut self, b: &Build) -> Result<Ty, Diagnostic> {
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
            let t = self.expr(&a.value)?;
            if !t.valueish() {
                return Err(self.at(
                    a.value.span().0,
                    format!("an operand must be a value, found {}", t.a_name()),
                ));
            }
            if !is_none(&a.value) {
                given.push(slot);
            }
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
        for (k, e) in &b.attrs {
            self.no_spread(k)?;
            let t = self.attr_expr(e)?;
            if let Some(s) = spec {
                self.attr_kind(s, k, e, t)?;
            }
        }
        match &b.ty {
            Some(t) => self.result_types(t, spec)?,
            None => self.derivable(b, spec, &given)?,
        }
        if let Some(bind) = &b.bind {
            self.values
                .insert(bind.name.clone(), Binding::Op(spec.into_iter().collect()));
        }
        Ok(Ty::Op)
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
    fn result_types(&mut self, t: &Expr, spec: Option<&'static OpSpec>) -> Result<(), Diagnostic> {
        if let Some(v) = like_arg(t) {
            self.op_ref(v)?;
            return Ok(());
        }
        let items: Vec<&Expr> = match t {
            Expr::List(v, _) => v.iter().collect(),
            e => vec![e],
        };
        for e in &items {
            if is_none(e) {
                continue;
            }
            let ty = self.expr_no_build(e)?;
            if !ty.is(Ty::Type) {
                return Err(self
                    .at(e.span().0, format!("a result type must be a type, found {}", ty.a_name()))
                    .with_hint("type(%x), tensor<4xf32>, tensor(shape(%x), float32), like(%o), or [t1, none] for several results"));
            }
        }
        if let Some(s) = spec {
            if !OpSpec::count_fits(s.results, items.len()) {
                return Err(self
                    .at(
                        t.span().0,
                        format!(
                            "`{}` has {} result(s), {} type(s) given",
                            s.name,
                            s.results.len(),
                            items.len()
                        ),
                    )
                    .with_hint(names_hint("results", s.result_names())));
            }
        }
        Ok(())
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

    fn attr_expr(&mut self, e: &Expr) -> Result<Ty, Diagnostic> {
        let t = self.expr_no_build(e)?;
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
        Ok(t)
    }

    fn expr_no_build(&mut self, e: &Expr) -> Result<Ty, Diagnostic> {
        if let Some(b) = find_build(e) {
            return Err(self.at(b.span.0, "an op can only be built where an action places it").with_hint("build ops in `after`/`before`/`at end of` actions or as the new operand in `in %o: x := ...`"));
        }
        self.expr(e)
    }

    fn str_lit(&mut self, s: &StrLit) -> Result<(), Diagnostic> {
        self.str_parts(&s.parts)
    }

    fn str_parts(&mut self, parts: &[StrPart]) -> Result<(), Diagnostic> {
        for p in parts {
            if let StrPart::Expr(e) = p {
                self.expr_no_build(e)?;
            }
        }
        Ok(())
    }

    fn expr(&mut self, e: &Expr) -> Result<Ty, Diagnostic> {
        Ok(match e {
            Expr::Lit(v, _) => match v {
                Val::Int(_) => Ty::Int,
                Val::Float(_) => Ty::Float,
                Val::Bool(_) => Ty::Bool,
                Val::Place(_) => Ty::Place,
                Val::Str(_) => Ty::Str,
                _ => Ty::Any,
            },
            Expr::Str(parts, _) => {
                self.str_parts(parts)?;
                Ty::Str
            }
            Expr::Var(Var::Bare(i)) => {
                if let Some(p) = self.params.get(&i.name) {
                    p.ty.ty()
                } else if STAGES.iter().any(|(n, _)| *n == i.name) {
                    Ty::Stage
                } else if dtype_name(&i.name).is_some() {
                    Ty::DType
                } else if i.name == NONE_NAME {
                    Ty::Value
                } else {
                    let mut d = self.at(i.span.0, format!("unknown name `{}`", i.name));
                    d = if self.values.contains_key(&format!("%{}", i.name)) {
                        d.with_hint(format!("values are written with `%`: %{}", i.name))
                    } else if self.captures.contains(&format!("${}", i.name)) {
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
                }
            }
            Expr::Var(Var::Value(v)) => match self.values.get(&v.name.name) {
                None => return Err(self.unbound(&v.name)),
                Some(Binding::Value) => {
                    if let Some(f) = &v.field {
                        return Err(self.at(
                            f.span.0,
                            format!("`{}` is a value; only an op has result fields", v.name.name),
                        ));
                    }
                    Ty::Value
                }
                Some(Binding::Op(specs)) => {
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
            },
            Expr::Var(Var::Capture(c)) => {
                if !self.captures.contains(&c.name) {
                    return Err(self.unbound(c));
                }
                Ty::Any
            }
            Expr::List(items, _) => {
                for i in items {
                    self.expr(i)?;
                }
                Ty::List
            }
            Expr::Unary { op, e, span } => {
                let t = self.expr(e)?;
                match op {
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
                }
            }
            Expr::Binary { op, l, r, span } => {
                let a = self.expr(l)?;
                let b = self.expr(r)?;
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
                match op {
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
                }
            }
            Expr::If { c, t, e, .. } => {
                let ct = self.expr(c)?;
                self.want_bool(ct, c, "`if` needs")?;
                let a = self.expr(t)?;
                let b = self.expr(e)?;
                if a == b {
                    a
                } else {
                    Ty::Any
                }
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
                    return self.uses_in_stage(l, r);
                }
                let tys: Vec<Ty> = args
                    .iter()
                    .map(|a| self.expr(a))
                    .collect::<Result<_, _>>()?;
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
                let info = f.info();
                if f.kind() == Kind::Pure {
                    // Pure functions report bad arguments when they are evaluated.
                    return Ok(info.result);
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
                info.result
            }
            Expr::Build(b) => self.build(b)?,
            Expr::Exists(x) => self.exists(&x.patterns, x.span)?,
        })
    }

    /// `exists(patterns)`: the patterns are checked like a `match`; what they bind is local to
    /// the `exists`. Each pattern must be reachable from what the rule's match bound, through
    /// an operand variable (a value bound by the match or by an earlier pattern of the
    /// `exists`), so the engine finds candidates through use lists and never scans the program.
    fn exists(&mut self, pats: &[OpPattern], span: Span) -> Result<Ty, Diagnostic> {
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
        let (values, captures) = (self.values.clone(), self.captures.clone());
        let r = (|| {
            for p in pats {
                self.bind_pattern(p)?;
            }
            for p in pats {
                self.pattern_exprs(p)?;
            }
            Ok(())
        })();
        self.values = values;
        self.captures = captures;
        r.map(|()| Ty::Bool)
    }

    /// `uses(%v in STAGE)`: `%v` a value or op, `STAGE` a stage name (not a parameter, a list or
    /// any other expression: the stage is what restricts the count).
    fn uses_in_stage(&mut self, v: &Expr, stage: &Expr) -> Result<Ty, Diagnostic> {
        let t = self.expr(v)?;
        if !t.valueish() {
            return Err(self
                .at(
                    v.span().0,
                    format!("`uses` needs a value or op, found {}", t.a_name()),
                )
                .with_hint("uses(%v in backward) counts the uses of %v by backward ops"));
        }
        match stage {
            Expr::Var(Var::Bare(i)) if !self.params.contains_key(&i.name) => self.stage_name(i)?,
            e => {
                return Err(self
                    .at(
                        e.span().0,
                        "`uses(%v in STAGE)` restricts the count to a stage: write a stage name",
                    )
                    .with_hint(resolve::stages_hint()))
            }
        }
        Ok(Ty::Int)
    }

    fn equational(&mut self, r: &EqRule) -> Result<(), Diagnostic> {
        self.eq_lhs(&r.lhs)?;
        if let Some(g) = &r.guard {
            let t = self.expr_no_build(g)?;
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
        let specs = self.op_sel(&p.op)?;
        if let Some(b) = &p.bind {
            if self.values.contains_key(&b.name) {
                return Err(self.at(b.span.0, format!("`{}` is bound twice", b.name)));
            }
            self.values.insert(b.name.clone(), Binding::Op(specs));
        }
        for a in &p.attrs {
            match &a.val {
                AttrPatVal::Capture(c) => {
                    self.captures.insert(c.name.clone());
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
                    self.values.insert(name.name.clone(), Binding::Value);
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
                            && matches!(self.values.get(&v.name.name), Some(Binding::Op(_))));
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
