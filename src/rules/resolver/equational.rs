//! Equational rules (`rewrite name: lhs => rhs where guard subsume;`) resolved: checked and
//! lowered to the e-graph's rules ([`egraph::EqRule`]) in one walk, as a structural rule is to
//! its [`CompiledRule`]. The walk returns the e-graph rules the rule stands for, or its errors:
//! the left side, the guard and the right side, and within each every subterm, alternative and
//! attribute, are independent parts ([`super::independent`]), each error reported.
//!
//! # Why the e-graph's form is made here
//! The rule language is written for people (op classes, `(a | b)` sets, `_`, `<=>`, named
//! parameters, one expression language for everything); the e-graph wants small, closed rules
//! (one op name per pattern node, numbered variables, constants already evaluated). Making that
//! form in the walk that checks the rule means each language rule and its message is written
//! once and what runs cannot disagree with what was checked. The mapping:
//!
//! | rule language | e-graph |
//! |---|---|
//! | `%x` on the left | a [`GVar`] |
//! | `_` on the left | a fresh [`GVar`] nobody else names |
//! | `pd_op.scale(..)`, `"q.op"(..)` | an [`GOp`] with that name |
//! | `(a \| b)(..)`, `pure(..)`, `any(..)` | one rule per op (pure ops whose operand count fits), cartesian over nested selectors |
//! | `{k: expr}` / `{k: $c}` / `{k: _}` / `{not k}` | [`AttrTest::Eq`] of the evaluated constant / `Capture` / `Capture` of an unused capture / `Absent` |
//! | `%s = op(..)` on the left | a [`Label`]: `{..%s}` on the right copies `%s`'s attributes, `attr(%s, "k")` reads one |
//! | parameters, stages, dtypes, `1.0 / k_steps` | evaluated once, here, to literals |
//! | `dtype(%x)`, `type(%x)`, `const(%x)` | the e-graph reads [`Read::DType`], [`Read::Type`], [`Read::Const`] |
//! | `lhs <=> rhs` | two rules, `name` and `name<=` (the right side read as a pattern, the left built) |
//!
//! The resolver numbers values and captures in one sequence of slots; the e-graph numbers
//! variables, captures and labels apart ([`Numbering`]). Both directions of a `<=>` rule share
//! one numbering, so its guard means the same in both; the e-graph renumbers densely when it
//! compiles a rule.
//!
//! Expressions are resolved as everywhere else ([`Resolver::expr`]: names, types), and what
//! that returns is made into the e-graph's form here ([`Resolver::eq_expr`]): the constant parts
//! evaluated, so a constant that fails is an error at the rule (the e-graph would only find the
//! guard false), and the queries the e-graph answers (`dtype`, `type`, `const`, `attr`) made
//! reads of the match; anything else is refused.
//!
//! What only the e-graph can refuse (an op that is not pure, a result type it cannot infer) is
//! its own verdict: each rule is prepared against a scratch context, and a refusal is reported
//! at the rule, before any program is read.

use super::build::BuildSite;
use super::independent::Gathered;
use super::*;
use crate::dialect::Effect;
use crate::egraph::{
    self, AttrTest, Build as GBuild, Cap, EqRule as GRule, Expr as GExpr, Label, OpBuild,
    OpPattern as GOp, Pattern, Read, TypesBuild, Value, Var as GVar,
};
use crate::rules::eval::{eval, ConstEnv};
use std::collections::HashSet;

/// More alternatives than this from op classes and `(a | b)` sets is refused: such a rule is
/// almost certainly a mistake, and each alternative is a rule the e-graph searches every
/// iteration.
const MAX_EXPANSION: usize = 64;

/// The e-graph's names for one rule's slots: variables, captures and labels are numbered apart;
/// `_` and `key: _` take fresh ones.
#[derive(Default)]
struct Numbering {
    vars: HashMap<Slot, GVar>,
    caps: HashMap<Slot, Cap>,
    labels: HashMap<Slot, Label>,
    nvars: u32,
    ncaps: u32,
}

impl Numbering {
    fn fresh_var(&mut self) -> GVar {
        self.nvars += 1;
        GVar(self.nvars - 1)
    }

    fn var(&mut self, slot: Slot) -> GVar {
        if let Some(v) = self.vars.get(&slot) {
            return *v;
        }
        let v = self.fresh_var();
        self.vars.insert(slot, v);
        v
    }

    fn fresh_cap(&mut self) -> Cap {
        self.ncaps += 1;
        Cap(self.ncaps - 1)
    }

    fn cap(&mut self, slot: Slot) -> Cap {
        if let Some(c) = self.caps.get(&slot) {
            return *c;
        }
        let c = self.fresh_cap();
        self.caps.insert(slot, c);
        c
    }

    fn label(&mut self, slot: Slot) -> Label {
        let n = self.labels.len() as u32;
        *self.labels.entry(slot).or_insert(Label(n))
    }
}

/// What the walk over one rule keeps besides the e-graph terms it returns.
#[derive(Default)]
struct EqWalk {
    n: Numbering,
    /// `<=>`: the right side is read as a pattern and the left side built too.
    both: bool,
    /// Per op node of the left-hand side, in pre-order, the op names it stands for.
    alts: Vec<Vec<String>>,
    /// With `<=>`: the variables and captures the left side builds from, where first written;
    /// the right side, read as a pattern, must bind each of them.
    built_vars: Vec<(GVar, Ident)>,
    built_caps: Vec<(Cap, Ident)>,
    /// With `<=>`: what the right side, read as a pattern, binds.
    rhs_vars: HashSet<GVar>,
    rhs_caps: HashSet<Cap>,
}

impl Resolver<'_> {
    /// Checks and lowers an equational rule: the e-graph rules it stands for (several when it
    /// uses op classes, sets or `<=>`), each prepared against a scratch context.
    pub(super) fn equational(&mut self, r: &EqRule) -> Result<Vec<GRule>, Diagnostic> {
        let mut q = EqWalk {
            both: r.direction == Direction::Both,
            ..EqWalk::default()
        };
        // The left side, the guard and the right side are independent parts: the left side
        // binds every name even where it fails, so what reads them is checked too. What
        // compares the two sides (`<=>`) is checked only when both are sound.
        let mut g = Gathered::default();
        let lhs = self.eq_lhs(&r.lhs, &mut q);
        let lhs = self.gather(&mut g, lhs);
        let combos = match lhs {
            Some(_) => {
                let c = combinations(&q.alts).ok_or_else(|| {
                    self.at(
                        r.lhs.span.0,
                        format!(
                            "this pattern stands for more than {MAX_EXPANSION} op combinations: name the ops"
                        ),
                    )
                });
                self.gather(&mut g, c)
            }
            None => None,
        };
        let guard = match &r.guard {
            Some(gd) => {
                let x = self.expr_no_build(gd).and_then(|(t, x)| {
                    self.want_bool(t, gd, "a guard must be")?;
                    self.eq_expr(&x, &q)
                });
                self.gather(&mut g, x).map(Some)
            }
            None => Some(None),
        };
        let rhs = if let (true, Term::Var(v)) = (q.both, &r.rhs) {
            let e = self.at(
                v.span.0,
                "with `<=>` the right side is matched too: it must be an op, not a variable",
            );
            self.gather::<()>(&mut g, Err(e));
            None
        } else {
            let x = self.eq_rhs(&r.rhs, &mut q);
            self.gather(&mut g, x)
        };
        // With `<=>` the left side is built from what the right side matched.
        if !g.failed() {
            if let Some((_, v)) = q.built_vars.iter().find(|(v, _)| !q.rhs_vars.contains(v)) {
                return Err(self.at(
                    v.span.0,
                    format!(
                        "with `<=>` the left side is built too: `{}` is not bound by the right side",
                        v.name
                    ),
                ));
            }
            if let Some((_, c)) = q.built_caps.iter().find(|(c, _)| !q.rhs_caps.contains(c)) {
                return Err(self.at(
                    c.span.0,
                    format!("`{}` is not captured by the right side", c.name),
                ));
            }
        }
        self.gathered(g)?;
        // Every part is sound here: the defaults stand for nothing.
        let (lhs, built_lhs) = lhs.unwrap_or((Pattern::Var(GVar(0)), None));
        let (combos, guard) = (combos.unwrap_or_default(), guard.unwrap_or_default());
        let (rhs, rhs_pattern) = rhs.unwrap_or((GBuild::Var(GVar(0)), None));
        let mut out = Vec::with_capacity(combos.len() + 1);
        for (k, names) in combos.iter().enumerate() {
            let mut lhs = lhs.clone();
            name_ops(&mut lhs, &mut names.iter());
            let name = if combos.len() == 1 {
                r.name.name.clone()
            } else {
                format!("{}#{}", r.name.name, k + 1)
            };
            let mut g = GRule::new(&name, lhs, rhs.clone()).subsume(r.subsume);
            g.guards.extend(guard.clone());
            out.push(g);
        }
        if let (Some(p), Some(b)) = (rhs_pattern, built_lhs) {
            let mut g = GRule::new(&format!("{}<=", r.name.name), p, b).subsume(r.subsume);
            g.guards.extend(guard);
            out.push(g);
        }
        // The e-graph's own verdict (an op that is not pure, a result type it cannot infer),
        // reported at the rule.
        let mut ctx = crate::ir::Context::default();
        for g in &out {
            g.check().map_err(|m| self.at(r.span.0, m))?;
            egraph::rewrite::prepare(g, &mut ctx).map_err(|d| self.at(r.span.0, d.message))?;
        }
        Ok(out)
    }

    /// A node of the left-hand side: its pattern (named by the node's first alternative; every
    /// alternative is in [`EqWalk::alts`]) and, with `<=>`, the op that builds it.
    fn eq_lhs(
        &mut self,
        p: &OpPattern,
        q: &mut EqWalk,
    ) -> Result<(Pattern, Option<GBuild>), Diagnostic> {
        // The selector, each attribute test and each operand are independent parts; names are
        // bound whatever fails, so that what reads them is checked too.
        let mut g = Gathered::default();
        let sel = self.eq_sel(&p.op, p.args.len());
        let (specs, names) = self.gather(&mut g, sel).unwrap_or_default();
        let arity = self.pattern_arity(p, &specs);
        self.gather(&mut g, arity);
        if q.both && !matches!(p.op, OpSel::Name(_) | OpSel::Quoted(_)) {
            let e = self.at(
                p.op.span().0,
                "with `<=>` the left side is built too: name one op, not a class or a set",
            );
            self.gather::<()>(&mut g, Err(e));
        }
        let first = names.first().cloned().unwrap_or_default();
        q.alts.push(names);
        let mut op = GOp::new(&first, []);
        let mut built = q.both.then(|| OpBuild::new(&first, []));
        if let Some(b) = &p.bind {
            if self.values.contains_key(&b.name) {
                let e = self.at(b.span.0, format!("`{}` is bound twice", b.name));
                self.gather::<()>(&mut g, Err(e));
            } else {
                let closed = self.sel_closed(&p.op);
                let slot = self.bind_value(&b.name, Binding::Op(specs, closed));
                op = op.label(q.n.label(slot));
            }
        }
        for a in &p.attrs {
            let test = self.eq_attr_test(a, q, &mut built);
            if let Some(test) = self.gather(&mut g, test) {
                op = op.attr(&a.key.name, test);
            }
        }
        for a in &p.args {
            let (pat, b) = match &a.pat {
                ValPat::Var { name, .. } => {
                    let v = q.n.var(self.bind_value(&name.name, Binding::Value));
                    if q.both {
                        q.built_vars.push((v, name.clone()));
                    }
                    (Pattern::Var(v), Some(GBuild::Var(v)))
                }
                ValPat::Wild(s) => {
                    if q.both {
                        let e = self.at(
                            s.0,
                            "`_` cannot be built: with `<=>` every operand needs a name",
                        );
                        self.gather::<()>(&mut g, Err(e));
                    }
                    (Pattern::Var(q.n.fresh_var()), None)
                }
                ValPat::Op(inner) => {
                    let r = self.eq_lhs(inner, q);
                    match self.gather(&mut g, r) {
                        Some(x) => x,
                        None => continue,
                    }
                }
            };
            op.operands.push(pat);
            if let (Some(built), Some(b)) = (&mut built, b) {
                built.operands.push(b);
            }
        }
        self.gathered(g)?;
        Ok((
            Pattern::Op(Box::new(op)),
            built.map(|b| GBuild::Op(Box::new(b))),
        ))
    }

    /// An attribute test of the left-hand side; with `<=>`, the attribute the left side's op is
    /// built with too.
    fn eq_attr_test(
        &mut self,
        a: &AttrPat,
        q: &mut EqWalk,
        built: &mut Option<OpBuild>,
    ) -> Result<AttrTest, Diagnostic> {
        Ok(match &a.val {
            AttrPatVal::Capture(c) => {
                let cap = q.n.cap(self.bind_capture(&c.name));
                if let Some(b) = built.take() {
                    *built = Some(b.set(&a.key.name, GExpr::cap(cap)));
                    q.built_caps.push((cap, c.clone()));
                }
                AttrTest::Capture(cap)
            }
            AttrPatVal::Present(s) => {
                if q.both {
                    return Err(self.at(
                        s.0,
                        "with `<=>` the left side is built too: `key: _` has no value to build",
                    ));
                }
                AttrTest::Capture(q.n.fresh_cap())
            }
            AttrPatVal::Absent(_) => AttrTest::Absent,
            AttrPatVal::Equals(e) => {
                let (_, x) = self.expr_no_build(e)?;
                let v = self.eq_value(&x)?;
                // `eq_value` refuses program values, so only a type could be left without
                // an attribute.
                let attr = v
                    .to_attr()
                    .ok_or_else(|| self.at(e.span().0, "a type is not an attribute"))?;
                if let Some(b) = built.take() {
                    *built = Some(b.set(&a.key.name, GExpr::lit(v)));
                }
                AttrTest::Eq(attr)
            }
        })
    }

    /// The ops a left-hand-side selector can be (for names bound to it) and the op names it
    /// stands for in the e-graph: an op class only by its pure ops that take `arity` operands.
    fn eq_sel(
        &self,
        sel: &OpSel,
        arity: usize,
    ) -> Result<(Vec<&'static OpSpec>, Vec<String>), Diagnostic> {
        let mut specs = Vec::new();
        let mut names = Vec::new();
        self.eq_sel_into(sel, arity, &mut specs, &mut names)?;
        if names.is_empty() {
            return Err(self.at(
                sel.span().0,
                format!("no pure op of the dialect table takes {arity} operand(s) here"),
            ));
        }
        Ok((specs, names))
    }

    fn eq_sel_into(
        &self,
        sel: &OpSel,
        arity: usize,
        specs: &mut Vec<&'static OpSpec>,
        names: &mut Vec<String>,
    ) -> Result<(), Diagnostic> {
        fn add(names: &mut Vec<String>, n: &str) {
            if !names.iter().any(|m| m == n) {
                names.push(n.to_string());
            }
        }
        match sel {
            OpSel::Name(i) => match self.ops.spec(&i.name) {
                Some(s) => {
                    specs.push(s);
                    add(names, &i.name);
                }
                None => return Err(self.unknown_op(i, true)),
            },
            OpSel::Quoted(i) if self.faults.ops.contains(&i.name) => {
                return Err(self.unknown_op(i, true))
            }
            OpSel::Quoted(i) => {
                specs.extend(self.ops.quoted_spec(&i.name));
                add(names, &i.name);
            }
            OpSel::Class(c) => {
                let class = self.op_class(c)?;
                if !matches!(class, OpClass::Any | OpClass::Effect(Effect::Pure)) {
                    return Err(self.at(
                        c.span.0,
                        format!(
                            "op class `{}` has no pure ops: equational rules match pure ops only (use `pure` or name the ops)",
                            c.name
                        ),
                    ));
                }
                for s in self.dialect.all() {
                    if s.effect == Effect::Pure && OpSpec::count_fits(s.operands, arity) {
                        add(names, s.name);
                    }
                }
                if class != OpClass::Any {
                    specs.extend(self.dialect.all().iter().filter(|s| s.effect == Effect::Pure));
                }
            }
            OpSel::OneOf(v, _) => {
                // Each alternative on its own: every faulty one is reported.
                let mut g = Gathered::default();
                for s in v {
                    let r = self.eq_sel_into(s, arity, specs, names);
                    self.gather(&mut g, r);
                }
                self.gathered(g)?;
            }
            OpSel::With { span, .. } => {
                return Err(self.at(
                    span.0,
                    "an alternative with its own attribute tests is for structural rules; in an equational rule write one rule per alternative",
                ))
            }
        }
        Ok(())
    }

    /// The right-hand side: what the e-graph builds and, with `<=>`, the same term read as a
    /// pattern.
    fn eq_rhs(
        &mut self,
        t: &Term,
        q: &mut EqWalk,
    ) -> Result<(GBuild, Option<Pattern>), Diagnostic> {
        match t {
            Term::Var(v) => {
                let var = self.eq_var(v, q)?;
                q.rhs_vars.insert(var);
                Ok((GBuild::Var(var), q.both.then_some(Pattern::Var(var))))
            }
            Term::Op {
                op,
                attrs,
                children,
                ty,
                span,
            } => {
                // The op, its result types, each attribute and each operand are independent
                // parts.
                let mut g = Gathered::default();
                let name = &op.name.name;
                if !op.quoted && self.dialect.spec(name).is_none() {
                    let e = self.unknown_op(&op.name, true);
                    self.gather::<()>(&mut g, Err(e));
                }
                let spec = match op.quoted {
                    true => self.ops.quoted_spec(name),
                    false => self.ops.spec(name),
                };
                if let Some(s) = spec {
                    let r = self.eq_rhs_fits(s, t);
                    self.gather(&mut g, r);
                }
                let mut b = OpBuild::new(name, []);
                let mut pat = q.both.then(|| GOp::new(name, []));
                if let Some(t) = ty {
                    let types = self.eq_types(t, q);
                    if let Some(types) = self.gather(&mut g, types) {
                        b = b.types(types);
                    }
                }
                for (k, e) in attrs {
                    let r = self.eq_rhs_attr(spec, k, e, *span, q, &mut b, &mut pat);
                    self.gather(&mut g, r);
                }
                for c in children {
                    let r = self.eq_rhs(c, q);
                    let Some((cb, cp)) = self.gather(&mut g, r) else {
                        continue;
                    };
                    b.operands.push(cb);
                    if let (Some(p), Some(cp)) = (&mut pat, cp) {
                        p.operands.push(cp);
                    }
                }
                self.gathered(g)?;
                Ok((
                    GBuild::Op(Box::new(b)),
                    pat.map(|p| Pattern::Op(Box::new(p))),
                ))
            }
        }
    }

    /// An attribute of an op the right-hand side builds, set in `b`; with `<=>`, the test of
    /// the same op read as a pattern, set in `pat`.
    #[allow(clippy::too_many_arguments)]
    fn eq_rhs_attr(
        &mut self,
        spec: Option<&'static OpSpec>,
        k: &Ident,
        e: &Expr,
        span: Span,
        q: &mut EqWalk,
        b: &mut OpBuild,
        pat: &mut Option<GOp>,
    ) -> Result<(), Diagnostic> {
        if k.name == SPREAD_KEY {
            let label = match e {
                Expr::Var(Var::Value(v)) if v.field.is_none() => {
                    self.values.get(&v.name.name).and_then(|(b, slot)| match b {
                        Binding::Op(..) => q.n.labels.get(slot).copied(),
                        Binding::Value | Binding::Failed => None,
                    })
                }
                _ => None,
            };
            let Some(label) = label else {
                return Err(self.at(e.span().0, "`..` copies the attributes of an op the left-hand side binds (`%s = pd_op.scale(..)`)"));
            };
            b.attrs_from = Some(label);
            if q.both {
                return Err(self.computed_both_ways(span));
            }
            return Ok(());
        }
        let (t, x) = self.attr_expr(e)?;
        if let Some(s) = spec {
            self.attr_kind(s, k, e, t)?;
        }
        let x = self.eq_expr(&x, q)?;
        if let Some(p) = pat.take() {
            // Read as a pattern, an attribute is a test: a literal or a capture.
            let written = matches!(
                e,
                Expr::Var(Var::Capture(_))
                    | Expr::Lit(Val::Int(_) | Val::Float(_) | Val::Bool(_), _)
            ) || matches!(e, Expr::Str(parts, _) if crate::value::expr::plain(parts).is_some());
            let test = match &x {
                GExpr::Var(Read::Cap(c)) if written => Some(AttrTest::Capture(*c)),
                GExpr::Lit(v, _) if written => v.to_attr().map(AttrTest::Eq),
                _ => None,
            };
            let Some(test) = test else {
                return Err(self.computed_both_ways(span));
            };
            if let AttrTest::Capture(c) = test {
                q.rhs_caps.insert(c);
            }
            *pat = Some(p.attr(&k.name, test));
        }
        b.set.push((k.name.clone(), x));
        Ok(())
    }

    /// An op the right-hand side builds, against its definition as a structural build is
    /// checked ([`Resolver::build`]): its operand count, the attributes it must give (written,
    /// a default, or copied by `{..%s}` from a matched op whose definition has them), and, with
    /// no `-> TYPE`, a result type the dialect derives from what it gives.
    fn eq_rhs_fits(&self, spec: &'static OpSpec, t: &Term) -> Result<(), Diagnostic> {
        let Term::Op {
            op,
            attrs,
            children,
            ty,
            span,
        } = t
        else {
            return Ok(());
        };
        // The ops `{..%s}` copies from; `None`: no spread, an empty list: any op.
        let spread: Option<Vec<&'static OpSpec>> = attrs
            .iter()
            .find(|(k, _)| k.name == SPREAD_KEY)
            .map(|(_, e)| match e {
                Expr::Var(Var::Value(v)) => match self.values.get(&v.name.name) {
                    // Ops the list may not name: any attribute may be copied.
                    Some((Binding::Op(specs, true), _)) => specs.clone(),
                    _ => Vec::new(),
                },
                _ => Vec::new(),
            });
        let written = |key: &str| {
            attrs.iter().any(|(k, _)| k.name == key)
                || spread.as_ref().is_some_and(|from| {
                    from.is_empty() || from.iter().any(|s| s.attr(key).is_some())
                })
        };
        self.operand_count(spec, children.len(), span.0)?;
        if ty.is_none() {
            let site = BuildSite {
                name: &op.name,
                span: *span,
                first_none: None,
                written: &written,
            };
            let given: Vec<usize> = (0..children.len()).collect();
            self.derivable(&site, Some(spec), &given)?;
        }
        // After the result type: an attribute the type is derived from is named as that.
        let defaults = self.ops.defaults(spec.name);
        self.no_required_left_out(op.name.span.0, spec, &|key| {
            written(key) || defaults.iter().any(|(k, _)| k == key)
        })
    }

    fn computed_both_ways(&self, term: Span) -> Diagnostic {
        self.at(
            term.0,
            "`<=>` needs both sides to be patterns: computed attributes are only allowed with `=>`",
        )
    }

    /// The e-graph variable of `%x`, a value the left-hand side binds.
    fn eq_var(&self, v: &Ident, q: &EqWalk) -> Result<GVar, Diagnostic> {
        let slot = self.values.get(&v.name).map(|(_, slot)| slot);
        if let Some(var) = slot.and_then(|s| q.n.vars.get(s)) {
            return Ok(*var);
        }
        if slot.is_some_and(|s| q.n.labels.contains_key(s)) {
            // An op's name where a value is read: the e-graph has the op's class, not a value.
            return Err(self
                .at(
                    v.span.0,
                    format!(
                        "`{}` names an op of the left-hand side; this reads a value",
                        v.name
                    ),
                )
                .with_hint("capture the attribute on that op (`{dtype: $dt}`, then `$dt == float32`), or, where the operand need not be matched as an op, bind it as a value (`pd_op.scale(%v, ..)`, then `dtype(%v)`)"));
        }
        Err(names::not_bound_by_lhs(v).at(self.src))
    }

    /// `-> type(%x)`, `-> like(%s)` or constant types (`tensor<4xf32>`, `[t1, t2]`): how the
    /// e-graph finds a built op's result types.
    fn eq_types(&mut self, t: &Expr, q: &EqWalk) -> Result<TypesBuild, Diagnostic> {
        if let Some(v) = like_arg(t) {
            let label = self
                .values
                .get(&v.name.name)
                .and_then(|(_, slot)| q.n.labels.get(slot).copied());
            return label
                .map(TypesBuild::Of)
                .ok_or_else(|| self.not_a_label(&v.name.name, v.span));
        }
        if let Expr::Call { func, args, .. } = t {
            if Builtin::from_name(&func.name) == Some(Builtin::Query(Query::Type)) {
                let var = match &args[..] {
                    [Expr::Var(Var::Value(v))] if v.field.is_none() => {
                        Some(self.eq_var(&v.name, q)?)
                    }
                    _ => None,
                };
                return var
                    .map(TypesBuild::SameAs)
                    .ok_or_else(|| self.takes_a_value(&func.name, func.span));
            }
        }
        let items: Vec<&Expr> = match t {
            Expr::List(v, _) => v.iter().collect(),
            e => vec![e],
        };
        let mut out = Vec::with_capacity(items.len());
        for e in items {
            out.push(self.eq_const_type(e)?);
        }
        Ok(TypesBuild::Explicit(out))
    }

    /// A constant tensor type: `tensor<4xf32>` (or `tensor([4], f32)` of constants).
    fn eq_const_type(&mut self, e: &Expr) -> Result<crate::ir::Type, Diagnostic> {
        let bad = |me: &Self| {
            me.at(
                e.span().0,
                "an equational right-hand side's result type is type(%x), like(%s) or a constant \
                 type such as tensor<4xf32>",
            )
        };
        let Expr::Call { func, args, .. } = e else {
            return Err(bad(self));
        };
        if Builtin::from_name(&func.name) != Some(Builtin::Query(Query::Tensor)) || args.len() != 2
        {
            return Err(bad(self));
        }
        let constant = |me: &mut Self, a: &Expr| {
            me.expr_no_build(a)
                .ok()
                .and_then(|(_, x)| eval(&mut ConstEnv, &x).ok())
        };
        let shape = match constant(self, &args[0]) {
            Some(Val::List(v)) => v
                .iter()
                .map(|d| match d {
                    Val::Int(i) => Some(*i),
                    _ => None,
                })
                .collect::<Option<Vec<i64>>>(),
            _ => None,
        };
        let dtype = match constant(self, &args[1]) {
            Some(Val::DType(d)) => Some(d),
            _ => None,
        };
        match (shape, dtype) {
            (Some(shape), Some(dtype)) => Ok(crate::ir::Type::Tensor { shape, dtype }),
            _ => Err(bad(self)),
        }
    }

    /// `%x` that is not an op the left-hand side labels (`attr(%x, ..)`, `like(%x)`).
    fn not_a_label(&self, name: &str, span: Span) -> Diagnostic {
        self.at(
            span.0,
            format!("`{name}` is not an op bound by the left-hand side (`%s = op(..)`)"),
        )
    }

    /// A query of a value (`dtype`, `type`, `const`) given something else.
    fn takes_a_value(&self, func: &str, span: Span) -> Diagnostic {
        self.at(
            span.0,
            format!("`{func}` takes a value of the left-hand side: {func}(%x)"),
        )
    }

    /// A resolved expression in the e-graph's form: constant parts evaluated, the queries the
    /// e-graph answers made reads of the match, anything else refused.
    fn eq_expr(&self, x: &compiled::Expr, q: &EqWalk) -> Result<GExpr, Diagnostic> {
        if is_const(x) {
            return self.eq_value(x).map(GExpr::lit);
        }
        Ok(match x {
            compiled::Expr::Var(compiled::Var::Capture { slot, name, span }) => {
                match q.n.caps.get(slot) {
                    Some(c) => GExpr::cap(*c),
                    None => {
                        return Err(self.at(
                            span.0,
                            format!("`{name}` is not captured by the left-hand side"),
                        ))
                    }
                }
            }
            compiled::Expr::Call { func, args, .. } => {
                let (name, fspan, query) = match func {
                    compiled::Callee::Builtin(b, s) => (b.name(), *s, Some(*b)),
                    compiled::Callee::UsesIn(s) => ("uses", *s, None),
                    compiled::Callee::Unknown(n, s) => (n.as_str(), *s, None),
                };
                let value = |me: &Self| match &args[..] {
                    [compiled::Expr::Var(compiled::Var::Value(v))] if v.field.is_none() => {
                        let id = Ident {
                            name: v.name.clone(),
                            span: v.name_span,
                        };
                        me.eq_var(&id, q)
                    }
                    _ => Err(me.takes_a_value(name, fspan)),
                };
                match query {
                    Some(Builtin::Query(Query::DType)) => GExpr::read(Read::DType(value(self)?)),
                    Some(Builtin::Query(Query::Type)) => GExpr::read(Read::Type(value(self)?)),
                    Some(Builtin::Query(Query::Const)) => GExpr::read(Read::Const(value(self)?)),
                    Some(Builtin::Query(Query::Attr)) => match &args[..] {
                        [compiled::Expr::Var(compiled::Var::Value(v)), k] if v.field.is_none() => {
                            if q.both {
                                return Err(self.at(
                                    fspan.0,
                                    "with `<=>` the guard is tested on the right side's match too, which labels no op: `attr` is only allowed with `=>`",
                                ));
                            }
                            let Some(l) = q.n.labels.get(&v.slot).copied() else {
                                return Err(self.not_a_label(&v.name, v.span));
                            };
                            let Value::Str(key) = self.eq_value(k)? else {
                                return Err(self.at(k.span().0, "an attribute name is a string"));
                            };
                            GExpr::read(Read::Attr(l, key))
                        }
                        _ => {
                            return Err(self.at(
                                fspan.0,
                                "`attr` takes a bound op and a name: attr(%s, \"bias\")",
                            ))
                        }
                    },
                    _ => {
                        return Err(self.at(
                            fspan.0,
                            format!(
                                "`{name}` is not available in equational rules (dtype, type, const, attr are)"
                            ),
                        ))
                    }
                }
            }
            compiled::Expr::Unary { op, e, .. } => GExpr::unary(*op, self.eq_expr(e, q)?),
            compiled::Expr::Binary { op, l, r, span } => {
                if matches!(
                    op,
                    BinOp::In | BinOp::Contains | BinOp::StartsWith | BinOp::EndsWith
                ) {
                    return Err(self.at(
                        span.0,
                        format!(
                            "`{}` on program values is not available in equational rules",
                            op.symbol()
                        ),
                    ));
                }
                self.eq_expr(l, q)?.bin(*op, self.eq_expr(r, q)?)
            }
            other => {
                return Err(self.at(
                    other.span().0,
                    "this expression is not available in equational rules: use captures, dtype(%x), type(%x), const(%x), attr(%s, \"k\"), literals, parameters and arithmetic",
                ))
            }
        })
    }

    /// A constant part of an equational rule, evaluated: any value but a program's.
    fn eq_value(&self, x: &compiled::Expr) -> Result<Value, Diagnostic> {
        let v = eval(&mut ConstEnv, x).map_err(|e| self.at(e.span.0, e.message))?;
        match v {
            Val::Value(_) | Val::NullValue | Val::Op(_) | Val::Type(_) => Err(self.at(
                x.span().0,
                format!("{} cannot be used in an equational rule", v.a_kind()),
            )),
            v => Ok(v),
        }
    }
}

/// Whether a resolved expression needs nothing from a match (parameters, stages and dtypes are
/// literals by now).
fn is_const(x: &compiled::Expr) -> bool {
    !x.any(&mut |n| match n {
        compiled::Expr::Var(_) | compiled::Expr::Build(_) | compiled::Expr::Exists(_) => true,
        compiled::Expr::Call { func, .. } => {
            !matches!(func, compiled::Callee::Builtin(b, _) if b.kind() == Kind::Pure)
        }
        _ => false,
    })
}

/// The cartesian product of the per-node alternatives, one list of op names per rule; `None`
/// when it has more than [`MAX_EXPANSION`] entries.
fn combinations(per_node: &[Vec<String>]) -> Option<Vec<Vec<String>>> {
    let mut out: Vec<Vec<String>> = vec![vec![]];
    for alts in per_node {
        if out.len() * alts.len() > MAX_EXPANSION {
            return None;
        }
        out = out
            .into_iter()
            .flat_map(|prefix| {
                alts.iter().map(move |a| {
                    let mut v = prefix.clone();
                    v.push(a.clone());
                    v
                })
            })
            .collect();
    }
    Some(out)
}

/// Names the op nodes of `p`, in pre-order, from `names`.
fn name_ops(p: &mut Pattern, names: &mut std::slice::Iter<'_, String>) {
    if let Pattern::Op(op) | Pattern::Proj { op, .. } = p {
        if let Some(n) = names.next() {
            op.name.clone_from(n);
        }
        for o in &mut op.operands {
            name_ops(o, names);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::load_str;

    fn lowered(text: &str) -> Vec<GRule> {
        let set = load_str("t.rw", text, std::path::Path::new("."), &[]).expect("loads");
        set.phases.into_iter().flat_map(|p| p.equational).collect()
    }

    #[test]
    fn wildcards_are_fresh_and_variables_shared() {
        let r = &lowered("// t\nrewrite r: pd_op.add(%x, pd_op.add(_, %x)) => %x;\n")[0];
        let Pattern::Op(op) = &r.lhs else { panic!() };
        let Pattern::Op(inner) = &op.operands[1] else {
            panic!()
        };
        assert_eq!(op.operands[0], inner.operands[1]);
        assert_ne!(inner.operands[0], inner.operands[1]);
        assert_eq!(r.origin.as_deref(), Some("t.rw:2"));
    }

    #[test]
    fn sets_expand_to_one_rule_per_op_and_both_directions_to_two() {
        let rs = lowered(
            "// t\nrewrite r: (pd_op.relu | pd_op.tanh)((pd_op.exp | pd_op.relu)(%x)) => %x;\n",
        );
        assert_eq!(rs.len(), 4);
        assert_eq!(rs[3].name, "r#4");
        let Pattern::Op(op) = &rs[3].lhs else {
            panic!()
        };
        let Pattern::Op(inner) = &op.operands[0] else {
            panic!()
        };
        assert_eq!(
            (op.name.as_str(), inner.name.as_str()),
            ("pd_op.tanh", "pd_op.relu")
        );
        let rs = lowered("// t\nrewrite r: pd_op.relu(pd_op.relu(%x)) <=> pd_op.relu(%x) {};\n");
        assert_eq!(
            rs.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
            ["r", "r<="]
        );
        // The reverse rule matches the right side and builds the left.
        let Pattern::Op(p) = &rs[1].lhs else { panic!() };
        assert_eq!(p.operands.len(), 1);
        let GBuild::Op(b) = &rs[1].rhs else { panic!() };
        assert!(matches!(&b.operands[0], GBuild::Op(inner) if inner.name == "pd_op.relu"));
    }

    #[test]
    fn parameters_are_evaluated_and_spreads_become_labels() {
        let rs = lowered(
            "param k: int = 4;\n// t\nrewrite r: %s = pd_op.scale(%x, pd_op.full() {value: 1.0 / k}) {bias: 0}\n    => pd_op.scale(%x, pd_op.full() {value: 1.0, shape: [1]}) {..%s};\n",
        );
        let Pattern::Op(op) = &rs[0].lhs else {
            panic!()
        };
        let Pattern::Op(full) = &op.operands[1] else {
            panic!()
        };
        assert_eq!(full.attrs[0].1, AttrTest::Eq(crate::ir::Attr::float(0.25)));
        let GBuild::Op(b) = &rs[0].rhs else { panic!() };
        assert_eq!(b.attrs_from, op.label);
        assert!(b.attrs_from.is_some());
    }

    #[test]
    fn guards_read_the_match_and_constants_are_folded() {
        let rs = lowered(
            "param k: int = 2;\n// t\nrewrite r: pd_op.scale(%x, %y) {bias: $b} => %x where $b == k * 0 and dtype(%x) == float32;\n",
        );
        let guard = &rs[0].guards[0];
        assert!(guard.any(&mut |n| matches!(n, GExpr::Var(Read::Cap(_)))));
        assert!(guard.any(&mut |n| matches!(n, GExpr::Var(Read::DType(_)))));
        assert!(guard.any(&mut |n| matches!(n, GExpr::Lit(Val::Int(0), _))));
    }

    #[test]
    fn pure_class_expands_by_arity() {
        // The dialect has hundreds of pure binary ops, but few of seven operands.
        let rs = lowered(
            "// t\nrewrite r: pure(%a, %b, %c, %d, %e, %f, %g) => %a where dtype(%a) == int64;\n",
        );
        assert!(rs.len() > 5 && rs.len() <= MAX_EXPANSION, "{}", rs.len());
        let set = load_str(
            "t.rw",
            "// t\nrewrite r: pure(pure(%x, %y), pure(%z, %w)) => %x;\n",
            std::path::Path::new("."),
            &[],
        );
        let e = set.unwrap_err();
        assert!(e.message.contains("op combinations"), "{}", e.message);
    }
}
