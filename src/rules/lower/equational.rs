//! Equational rules (`rewrite name: lhs => rhs where guard subsume;`) lowered to the e-graph's
//! rule type ([`egraph::EqRule`]), stored in [`crate::rules::Phase::equational`].
//!
//! # Why a translation step
//! The rule language is written for people (op classes, `(a | b)` sets, `_`, `<=>`, named
//! parameters, one expression language for everything); the e-graph wants small, closed rules
//! (one op name per pattern node, numbered variables, constants already evaluated). The mapping:
//!
//! | rule language | e-graph |
//! |---|---|
//! | `%x` on the left | a [`Var`], numbered by first occurrence |
//! | `_` on the left | a fresh [`Var`] nobody else names |
//! | `pd_op.scale(..)`, `"q.op"(..)` | an [`OpPattern`] with that name |
//! | `(a \| b)(..)`, `pure(..)`, `any(..)` | one rule per op (pure ops whose operand count fits), cartesian over nested selectors |
//! | `{k: expr}` / `{k: $c}` / `{k: _}` / `{not k}` | [`AttrTest::Eq`] of the evaluated constant / `Capture` / `Capture` of an unused capture / `Absent` |
//! | `%s = op(..)` on the left | a [`Label`]: `{..%s}` on the right copies `%s`'s attributes, `attr(%s, "k")` reads one |
//! | parameters, stages, dtypes, `1.0 / k_steps` | evaluated once, here, to literals |
//! | `dtype(%x)`, `type(%x)`, `const(%x)` | the e-graph reads [`Read::DType`], [`Read::Type`], [`Read::Const`] |
//! | `lhs <=> rhs` | two rules, `name` and `name<=` (the right side read as a pattern) |
//!
//! Everything here is checked when the rule file is loaded ([`check`], called by the resolver),
//! including the e-graph's own preparation against a scratch context, so a rule the e-graph
//! would refuse is reported at its `file:line:col` before any program is read.

use crate::dialect::{Dialect, Effect, OpSpec};
use crate::egraph::{
    self, AttrTest, Build as GBuild, Cap, EqRule as GRule, Expr as GExpr, Label, OpBuild,
    OpPattern, Pattern, Read, TypesBuild, Value, Var,
};
use crate::ir::Attr;
use crate::rules::ast::Var as AVar;
use crate::rules::ast::{
    AttrPatVal, BinOp, Direction, EqRule, Expr, Ident, OpPattern as LhsOp, OpSel, Term, ValPat,
    ValueRef, SPREAD_KEY,
};
use crate::rules::builtins::{Builtin, Kind, Query};
use crate::rules::eval::{dtype_name, eval_const};
use crate::rules::resolver::names;
use crate::rules::{stage_role, Param, Val};
use indexmap::IndexMap;
use std::collections::HashMap;

/// A translation error: byte offset in the rule file and message.
pub type Error = (usize, String);

/// More alternatives than this from op classes and `(a | b)` sets is refused: such a rule is
/// almost certainly a mistake, and each alternative is a rule the e-graph searches every
/// iteration.
const MAX_EXPANSION: usize = 64;

/// Checks an equational rule as the resolver sees it: translates it with the parameters'
/// values and prepares every resulting rule against a scratch context.
pub fn check(r: &EqRule, params: &IndexMap<String, Param>) -> Result<Vec<GRule>, Error> {
    let rules = translate(r, params, "")?;
    let mut ctx = crate::ir::Context::default();
    for g in &rules {
        g.check().map_err(|m| (r.span.0, m))?;
        egraph::rewrite::prepare(g, &mut ctx).map_err(|d| (r.span.0, d.message))?;
    }
    Ok(rules)
}

/// Translates one equational rule into the e-graph rules it stands for (several when it uses op
/// classes, sets or `<=>`). `origin` (`rules/x.rw:12`) is recorded for statistics.
pub fn translate(
    r: &EqRule,
    params: &IndexMap<String, Param>,
    origin: &str,
) -> Result<Vec<GRule>, Error> {
    let mut out = Vec::new();
    let lhs_alts = alternatives(&r.lhs)?;
    for (k, choice) in lhs_alts.iter().enumerate() {
        let mut t = Tr::new(params);
        let mut choice = choice.iter();
        let lhs = t.pattern(&r.lhs, &mut choice)?;
        let guards = match &r.guard {
            Some(g) => vec![t.expr(g)?],
            None => vec![],
        };
        let rhs = t.build(&r.rhs)?;
        let name = if lhs_alts.len() == 1 {
            r.name.name.clone()
        } else {
            format!("{}#{}", r.name.name, k + 1)
        };
        let mut g = GRule::new(&name, lhs, rhs).subsume(r.subsume);
        g.guards = guards;
        if !origin.is_empty() {
            g = g.origin(origin);
        }
        out.push(g);
    }
    if r.direction == Direction::Both {
        // The right side read as a pattern, the left side built.
        let mut t = Tr::new(params);
        let lhs = t.term_pattern(&r.rhs)?;
        let guards = match &r.guard {
            Some(g) => vec![t.expr(g)?],
            None => vec![],
        };
        let rhs = t.pat_build(&r.lhs)?;
        let mut g = GRule::new(&format!("{}<=", r.name.name), lhs, rhs).subsume(r.subsume);
        g.guards = guards;
        if !origin.is_empty() {
            g = g.origin(origin);
        }
        out.push(g);
    }
    Ok(out)
}

/// Per op node of the left-hand side (pre-order), the op names it stands for; the cartesian
/// product of the lists, one entry per rule.
fn alternatives(p: &LhsOp) -> Result<Vec<Vec<String>>, Error> {
    let mut per_node: Vec<Vec<String>> = Vec::new();
    collect_alts(p, &mut per_node)?;
    let mut out: Vec<Vec<String>> = vec![vec![]];
    for alts in per_node {
        if out.len() * alts.len() > MAX_EXPANSION {
            return Err((
                p.span.0,
                format!(
                    "this pattern stands for more than {MAX_EXPANSION} op combinations: name the ops"
                ),
            ));
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
    Ok(out)
}

fn collect_alts(p: &LhsOp, out: &mut Vec<Vec<String>>) -> Result<(), Error> {
    let mut names = Vec::new();
    sel_names(&p.op, p.args.len(), &mut names)?;
    if names.is_empty() {
        return Err((
            p.op.span().0,
            format!(
                "no pure op of the dialect table takes {} operand(s) here",
                p.args.len()
            ),
        ));
    }
    out.push(names);
    for a in &p.args {
        if let ValPat::Op(inner) = &a.pat {
            collect_alts(inner, out)?;
        }
    }
    Ok(())
}

fn fits(s: &OpSpec, arity: usize) -> bool {
    s.effect == Effect::Pure && OpSpec::count_fits(s.operands, arity)
}

fn sel_names(sel: &OpSel, arity: usize, out: &mut Vec<String>) -> Result<(), Error> {
    let d = Dialect::get();
    match sel {
        OpSel::Name(i) | OpSel::Quoted(i) => {
            if !out.contains(&i.name) {
                out.push(i.name.clone());
            }
        }
        OpSel::Class(c) => {
            let pure_class = c.name == "any" || c.name == "pure";
            if !pure_class {
                return Err((
                    c.span.0,
                    format!(
                        "op class `{}` has no pure ops: equational rules match pure ops only (use `pure` or name the ops)",
                        c.name
                    ),
                ));
            }
            for s in d.all().iter().filter(|s| fits(s, arity)) {
                if !out.iter().any(|n| n == s.name) {
                    out.push(s.name.to_string());
                }
            }
        }
        OpSel::OneOf(v, _) => {
            for s in v {
                sel_names(s, arity, out)?;
            }
        }
        OpSel::With { span, .. } => {
            return Err((
                span.0,
                "an alternative with its own attribute tests is for structural rules; in an equational rule write one rule per alternative".into(),
            ))
        }
    }
    Ok(())
}

/// Numbering of one rule's variables, captures and labels, and expression translation.
struct Tr<'a> {
    params: &'a IndexMap<String, Param>,
    vars: HashMap<String, Var>,
    nvars: u32,
    caps: HashMap<String, Cap>,
    ncaps: u32,
    labels: HashMap<String, Label>,
}

impl<'a> Tr<'a> {
    fn new(params: &'a IndexMap<String, Param>) -> Self {
        Tr {
            params,
            vars: HashMap::new(),
            nvars: 0,
            caps: HashMap::new(),
            ncaps: 0,
            labels: HashMap::new(),
        }
    }

    fn fresh_var(&mut self) -> Var {
        self.nvars += 1;
        Var(self.nvars - 1)
    }

    fn var(&mut self, name: &str) -> Var {
        if let Some(v) = self.vars.get(name) {
            return *v;
        }
        let v = self.fresh_var();
        self.vars.insert(name.to_string(), v);
        v
    }

    fn fresh_cap(&mut self) -> Cap {
        self.ncaps += 1;
        Cap(self.ncaps - 1)
    }

    fn cap(&mut self, name: &str) -> Cap {
        if let Some(c) = self.caps.get(name) {
            return *c;
        }
        let c = self.fresh_cap();
        self.caps.insert(name.to_string(), c);
        c
    }

    fn label(&mut self, b: &Ident) -> Label {
        let n = self.labels.len() as u32;
        *self.labels.entry(b.name.clone()).or_insert(Label(n))
    }

    fn bound_var(&self, i: &Ident) -> Result<Var, Error> {
        self.vars
            .get(&i.name)
            .copied()
            .ok_or_else(|| names::not_bound_by_lhs(i).into())
    }

    /// The label of the op `%s` the left-hand side binds (`%s = op(..)`).
    fn bound_label(&self, v: &ValueRef) -> Result<Label, Error> {
        self.labels.get(&v.name.name).copied().ok_or_else(|| {
            (
                v.span.0,
                format!(
                    "`{}` is not an op bound by the left-hand side (`%s = op(..)`)",
                    v.name.name
                ),
            )
        })
    }

    // ---- left-hand side

    fn pattern(
        &mut self,
        p: &LhsOp,
        choice: &mut std::slice::Iter<'_, String>,
    ) -> Result<Pattern, Error> {
        let name = choice.next().ok_or((
            p.span.0,
            "internal: op alternatives out of step".to_string(),
        ))?;
        let mut op = OpPattern::new(name, []);
        if let Some(b) = &p.bind {
            op = op.label(self.label(b));
        }
        for a in &p.attrs {
            let test = match &a.val {
                AttrPatVal::Capture(c) => AttrTest::Capture(self.cap(&c.name)),
                AttrPatVal::Present(_) => AttrTest::Capture(self.fresh_cap()),
                AttrPatVal::Absent(_) => AttrTest::Absent,
                AttrPatVal::Equals(e) => AttrTest::Eq(self.const_attr(e)?),
            };
            op = op.attr(&a.key.name, test);
        }
        for a in &p.args {
            op.operands.push(match &a.pat {
                ValPat::Var { name, .. } => Pattern::Var(self.var(&name.name)),
                ValPat::Wild(_) => Pattern::Var(self.fresh_var()),
                ValPat::Op(inner) => self.pattern(inner, choice)?,
            });
        }
        Ok(Pattern::Op(Box::new(op)))
    }

    /// The right side of `<=>` read as a pattern.
    fn term_pattern(&mut self, t: &Term) -> Result<Pattern, Error> {
        Ok(match t {
            Term::Var(v) => Pattern::Var(self.var(&v.name)),
            Term::Op {
                op,
                attrs,
                children,
                ..
            } => {
                let mut p = OpPattern::new(&op.name.name, []);
                for (k, e) in attrs {
                    let test = match e {
                        Expr::Var(AVar::Capture(c)) => AttrTest::Capture(self.cap(&c.name)),
                        e => AttrTest::Eq(self.const_attr(e)?),
                    };
                    p = p.attr(&k.name, test);
                }
                for c in children {
                    p.operands.push(self.term_pattern(c)?);
                }
                Pattern::Op(Box::new(p))
            }
        })
    }

    /// The left side of `<=>` built (only names, captures and constants can be built).
    fn pat_build(&mut self, p: &LhsOp) -> Result<GBuild, Error> {
        let name = match &p.op {
            OpSel::Name(i) | OpSel::Quoted(i) => i.name.clone(),
            other => {
                return Err((
                    other.span().0,
                    "with `<=>` the left side is built too: name one op, not a class or a set"
                        .into(),
                ))
            }
        };
        let mut b = OpBuild::new(&name, []);
        for a in &p.attrs {
            match &a.val {
                AttrPatVal::Capture(c) => {
                    let cap = self.caps.get(&c.name).copied().ok_or((
                        c.span.0,
                        format!("`{}` is not captured by the right side", c.name),
                    ))?;
                    b = b.set(&a.key.name, GExpr::cap(cap));
                }
                AttrPatVal::Equals(e) => {
                    let v = self.const_val(e)?;
                    b = b.set(&a.key.name, GExpr::lit(v));
                }
                AttrPatVal::Absent(_) => {}
                AttrPatVal::Present(s) => {
                    return Err((
                        s.0,
                        "with `<=>` the left side is built too: `key: _` has no value to build"
                            .into(),
                    ))
                }
            }
        }
        for a in &p.args {
            b.operands.push(match &a.pat {
                ValPat::Var { name, .. } => GBuild::Var(self.bound_var(name)?),
                ValPat::Wild(s) => {
                    return Err((
                        s.0,
                        "`_` cannot be built: with `<=>` every operand needs a name".into(),
                    ))
                }
                ValPat::Op(inner) => self.pat_build(inner)?,
            });
        }
        Ok(GBuild::Op(Box::new(b)))
    }

    // ---- right-hand side

    fn build(&mut self, t: &Term) -> Result<GBuild, Error> {
        Ok(match t {
            Term::Var(v) => GBuild::Var(self.bound_var(v)?),
            Term::Op {
                op,
                attrs,
                children,
                ty,
                ..
            } => {
                let mut b = OpBuild::new(&op.name.name, []);
                if let Some(t) = ty {
                    b = b.types(self.types(t)?);
                }
                for (k, e) in attrs {
                    if k.name == SPREAD_KEY {
                        let Expr::Var(AVar::Value(v)) = e else {
                            return Err((e.span().0, "`..` takes a bound op: `..%s`".into()));
                        };
                        b = b.attrs_from(self.bound_label(v)?);
                    } else {
                        let x = self.expr(e)?;
                        b = b.set(&k.name, x);
                    }
                }
                for c in children {
                    b.operands.push(self.build(c)?);
                }
                GBuild::Op(Box::new(b))
            }
        })
    }

    /// `-> type(%x)`, `-> like(%s)` or constant types (`tensor<4xf32>`, `[t1, t2]`): how the
    /// e-graph finds a built op's result types.
    fn types(&self, t: &Expr) -> Result<TypesBuild, Error> {
        if let Some(v) = crate::rules::resolver::like_arg(t) {
            return Ok(TypesBuild::Of(self.bound_label(v)?));
        }
        if let Expr::Call { func, args, .. } = t {
            if Builtin::from_name(&func.name) == Some(Builtin::Query(Query::Type)) {
                return Ok(TypesBuild::SameAs(self.value_var(args, func)?));
            }
        }
        let items: Vec<&Expr> = match t {
            Expr::List(v, _) => v.iter().collect(),
            e => vec![e],
        };
        let mut out = Vec::with_capacity(items.len());
        for e in items {
            out.push(self.const_type(e)?);
        }
        Ok(TypesBuild::Explicit(out))
    }

    /// A constant tensor type: `tensor<4xf32>` (or `tensor([4], f32)` of constants).
    fn const_type(&self, e: &Expr) -> Result<crate::ir::Type, Error> {
        let bad = || {
            (
                e.span().0,
                "an equational right-hand side's result type is type(%x), like(%s) or a constant \
                 type such as tensor<4xf32>"
                    .to_string(),
            )
        };
        let Expr::Call { func, args, .. } = e else {
            return Err(bad());
        };
        if Builtin::from_name(&func.name) != Some(Builtin::Query(Query::Tensor)) || args.len() != 2
        {
            return Err(bad());
        }
        let params = |n: &str| self.params.get(n).map(|p| p.value.clone());
        let shape = match eval_const(&args[0], &params) {
            Ok(Val::List(v)) => v
                .iter()
                .map(|d| match d {
                    Val::Int(i) => Some(*i),
                    _ => None,
                })
                .collect::<Option<Vec<i64>>>()
                .ok_or_else(bad)?,
            _ => return Err(bad()),
        };
        let dtype = match eval_const(&args[1], &params) {
            Ok(Val::DType(d)) => d,
            _ => return Err(bad()),
        };
        Ok(crate::ir::Type::Tensor { shape, dtype })
    }

    // ---- expressions

    fn const_val(&self, e: &Expr) -> Result<Value, Error> {
        let params = |n: &str| self.params.get(n).map(|p| p.value.clone());
        let v = eval_const(e, &params).map_err(|er| (er.span.0, er.message))?;
        val_to_value(&v).ok_or((
            e.span().0,
            format!("{} cannot be used in an equational rule", v.a_kind()),
        ))
    }

    fn const_attr(&self, e: &Expr) -> Result<Attr, Error> {
        // `const_val` refuses program values, so only a type could be left without an attribute.
        self.const_val(e)?
            .to_attr()
            .ok_or((e.span().0, "a type is not an attribute".into()))
    }

    fn value_var(&self, args: &[Expr], func: &Ident) -> Result<Var, Error> {
        match args {
            [Expr::Var(AVar::Value(v))] if v.field.is_none() => self.bound_var(&v.name),
            _ => Err((
                func.span.0,
                format!(
                    "`{}` takes a value of the left-hand side: {}(%x)",
                    func.name, func.name
                ),
            )),
        }
    }

    fn expr(&mut self, e: &Expr) -> Result<GExpr, Error> {
        if is_const(e) {
            return Ok(GExpr::lit(self.const_val(e)?));
        }
        Ok(match e {
            Expr::Var(AVar::Capture(c)) => GExpr::cap(*self.caps.get(&c.name).ok_or((
                c.span.0,
                format!("`{}` is not captured by the left-hand side", c.name),
            ))?),
            Expr::Var(AVar::Bare(i)) => {
                // Constant names are handled by `is_const`; anything left is unknown.
                return Err((i.span.0, format!("unknown name `{}`", i.name)));
            }
            Expr::Call { func, args, .. } => match Builtin::from_name(&func.name) {
                Some(Builtin::Query(Query::DType)) => GExpr::read(Read::DType(self.value_var(args, func)?)),
                Some(Builtin::Query(Query::Type)) => GExpr::read(Read::Type(self.value_var(args, func)?)),
                Some(Builtin::Query(Query::Const)) => GExpr::read(Read::Const(self.value_var(args, func)?)),
                Some(Builtin::Query(Query::Attr)) => match args.as_slice() {
                    [Expr::Var(AVar::Value(v)), k] if v.field.is_none() => {
                        let l = self.bound_label(v)?;
                        let Value::Str(key) = self.const_val(k)? else {
                            return Err((k.span().0, "an attribute name is a string".into()));
                        };
                        GExpr::read(Read::Attr(l, key))
                    }
                    _ => {
                        return Err((
                            func.span.0,
                            "`attr` takes a bound op and a name: attr(%s, \"bias\")".into(),
                        ))
                    }
                },
                _ => {
                    return Err((
                        func.span.0,
                        format!(
                            "`{}` is not available in equational rules (dtype, type, const, attr are)",
                            func.name
                        ),
                    ))
                }
            },
            Expr::Unary { op, e, .. } => GExpr::unary(*op, self.expr(e)?),
            Expr::Binary { op, l, r, span } => {
                if matches!(
                    op,
                    BinOp::In | BinOp::Contains | BinOp::StartsWith | BinOp::EndsWith
                ) {
                    return Err((
                        span.0,
                        format!(
                            "`{}` on program values is not available in equational rules",
                            op.symbol()
                        ),
                    ));
                }
                self.expr(l)?.bin(*op, self.expr(r)?)
            }
            other => {
                return Err((
                    other.span().0,
                    "this expression is not available in equational rules: use captures, dtype(%x), type(%x), const(%x), attr(%s, \"k\"), literals, parameters and arithmetic".into(),
                ))
            }
        })
    }
}

/// Whether an expression needs nothing from a match (parameters, stages, dtypes, literals).
fn is_const(e: &Expr) -> bool {
    !e.any(&mut |x| match x {
        Expr::Var(AVar::Bare(i)) => stage_role(&i.name).is_none() && dtype_name(&i.name).is_none(),
        Expr::Call { func, .. } => {
            !Builtin::from_name(&func.name).is_some_and(|b| b.kind() == Kind::Pure)
        }
        Expr::Var(_) | Expr::Build(_) | Expr::Exists(_) => true,
        _ => false,
    })
}

/// A constant as an e-graph literal: any value but a program's (values, ops, types).
fn val_to_value(v: &Val) -> Option<Value> {
    match v {
        Val::Value(_) | Val::NullValue | Val::Op(_) | Val::Type(_) => None,
        v => Some(v.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::ast::Rule;
    use crate::rules::load_str;

    fn translated(text: &str) -> Vec<GRule> {
        let set = load_str("t.rw", text, std::path::Path::new("."), &[]).expect("loads");
        let mut out = Vec::new();
        for lr in &set.phases[0].rules {
            if let Rule::Equational(r) = &lr.rule {
                out.extend(translate(r, &set.params, "t.rw:1").expect("translates"));
            }
        }
        out
    }

    #[test]
    fn wildcards_are_fresh_and_variables_shared() {
        let r = &translated("// t\nrewrite r: pd_op.add(%x, pd_op.add(_, %x)) => %x;\n")[0];
        let Pattern::Op(op) = &r.lhs else { panic!() };
        let Pattern::Op(inner) = &op.operands[1] else {
            panic!()
        };
        assert_eq!(op.operands[0], inner.operands[1]);
        assert_ne!(inner.operands[0], inner.operands[1]);
        assert_eq!(r.origin.as_deref(), Some("t.rw:1"));
    }

    #[test]
    fn sets_expand_to_one_rule_per_op_and_both_directions_to_two() {
        let rs = translated(
            "// t\nrewrite r: (pd_op.relu | pd_op.tanh)((pd_op.exp | pd_op.relu)(%x)) => %x;\n",
        );
        assert_eq!(rs.len(), 4);
        assert_eq!(rs[3].name, "r#4");
        let rs = translated("// t\nrewrite r: pd_op.relu(pd_op.relu(%x)) <=> pd_op.relu(%x) {};\n");
        assert_eq!(
            rs.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
            ["r", "r<="]
        );
    }

    #[test]
    fn parameters_are_evaluated_and_spreads_become_labels() {
        let rs = translated(
            "param k: int = 4;\n// t\nrewrite r: %s = pd_op.scale(%x, pd_op.full() {value: 1.0 / k}) {bias: 0}\n    => pd_op.scale(%x, pd_op.full() {value: 1.0}) {..%s};\n",
        );
        let Pattern::Op(op) = &rs[0].lhs else {
            panic!()
        };
        let Pattern::Op(full) = &op.operands[1] else {
            panic!()
        };
        assert_eq!(full.attrs[0].1, AttrTest::Eq(Attr::float(0.25)));
        let GBuild::Op(b) = &rs[0].rhs else { panic!() };
        assert_eq!(b.attrs_from, op.label);
        assert!(b.attrs_from.is_some());
    }

    #[test]
    fn pure_class_expands_by_arity() {
        // The dialect has hundreds of pure binary ops, but few of seven operands.
        let rs = translated(
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
