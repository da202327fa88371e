//! Expressions resolved: each is checked (names a parameter, stage, dtype or something the
//! rule bound; known functions with fitting arguments; operand kinds that fit the operator) and
//! lowered in the same walk, which returns its type and its [`compiled::Expr`]: parameters,
//! stages and dtypes become constants, `%x`/`$x` their slots, calls their builtins. An
//! `exists(...)` is resolved like a `match` whose names are its own, and planned here.

use super::*;

impl Resolver<'_> {
    /// `e`, of type `t`, where a bool is needed; `needs` says where ("a guard must be").
    pub(super) fn want_bool(&self, t: Ty, e: &Expr, needs: &str) -> Result<(), Diagnostic> {
        if t.is(Ty::Bool) {
            return Ok(());
        }
        Err(self.at(e.span().0, format!("{needs} a bool, found {}", t.a_name())))
    }

    /// `t`, the type of `e`, must name a value or an op: `{what} needs a value or an op`.
    pub(super) fn want_value(&self, t: Ty, e: &Expr, what: &str) -> Result<(), Diagnostic> {
        if t.valueish() {
            return Ok(());
        }
        Err(self.at(
            e.span().0,
            format!("{what} needs a value or an op, found {}", t.a_name()),
        ))
    }

    pub(super) fn attr_expr(&mut self, e: &Expr) -> Result<(Ty, compiled::Expr), Diagnostic> {
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

    pub(super) fn expr_no_build(&mut self, e: &Expr) -> Result<(Ty, compiled::Expr), Diagnostic> {
        if let Some(b) = find_build(e) {
            return Err(self.at(b.span.0, "an op can only be built where an action places it").with_hint("build ops in `after`/`before`/`at end of` actions or as the new operand in `in %o: x := ...`"));
        }
        self.expr(e)
    }

    pub(super) fn str_parts(
        &mut self,
        parts: &[StrPart],
    ) -> Result<Vec<compiled::StrPart>, Diagnostic> {
        let mut out = Vec::with_capacity(parts.len());
        for p in parts {
            out.push(match p {
                StrPart::Lit(l) => compiled::StrPart::Lit(l.clone()),
                StrPart::Expr(e) => compiled::StrPart::Expr(self.expr_no_build(e)?.1),
            });
        }
        Ok(out)
    }

    pub(super) fn expr(&mut self, e: &Expr) -> Result<(Ty, compiled::Expr), Diagnostic> {
        if self.faults.exprs.contains(&e.span()) {
            let d = self.at(e.span().0, "a faulty part of a predicate body");
            return Err(self.cascade_if(true, d));
        }
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
                let faulty = self.faults.params.contains(&i.name);
                let (t, v) = if let Some(p) = self.params.get(&i.name) {
                    (p.ty.ty(), p.value.clone())
                } else if faulty {
                    // A parameter whose own error is reported: nothing it is used in is checked.
                    let d = self.at(i.span.0, format!("unknown name `{}`", i.name));
                    return Err(self.cascade_if(true, d));
                } else if let Some(role) = stage_role(&i.name) {
                    (Ty::Stage, Val::Stage(role))
                } else if let Some(d) = dtype_name(&i.name) {
                    (Ty::DType, Val::DType(d))
                } else if i.name == NONE_NAME {
                    (Ty::Value, Val::NullValue)
                } else {
                    // Perhaps a parameter an import that failed declares: that error says it.
                    let mut d = self.cascade_if(
                        self.faults.incomplete,
                        self.at(i.span.0, format!("unknown name `{}`", i.name)),
                    );
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
                let xs = self.each(items, |me, i| me.expr(i).map(|(_, x)| x))?;
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
                let ((a, lx), (b, rx)) = self.both(|me| me.expr(l), |me| me.expr(r))?;
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
                    // A string when one side is known to be one (two values of unknown kind,
                    // such as captures, may be numbers: the sum's kind is unknown too).
                    BinOp::Add
                        if (a == Ty::Str || b == Ty::Str) && a.is(Ty::Str) && b.is(Ty::Str) =>
                    {
                        Ty::Str
                    }
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
                    BinOp::Eq | BinOp::Ne => {
                        if !a.can_equal(b) {
                            let hint = match (plain_string(l), plain_string(r)) {
                                (Some(s), _) => b.never_equal_hint(a, Some(&s)),
                                (_, s) => a.never_equal_hint(b, s.as_deref()),
                            };
                            return Err(bad(self).with_hint(hint));
                        }
                        Ty::Bool
                    }
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
                let cond = |me: &mut Self| {
                    let (ct, cx) = me.expr(c)?;
                    me.want_bool(ct, c, "`if` needs").map(|_| cx)
                };
                let (cx, ((a, tx), (b, ex))) =
                    self.both(cond, |me| me.both(|me| me.expr(t), |me| me.expr(e)))?;
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
                // The function and its arguments are independent parts.
                let known = |me: &mut Self| {
                    builtin.ok_or_else(|| {
                        let all: Vec<&str> = Builtin::names().collect();
                        let d = me.at(func.span.0, format!("unknown function `{}`", func.name));
                        match did_you_mean(&closest(&func.name, all.iter().copied(), 2)) {
                            Some(h) => d.with_hint(h),
                            None => d.with_hint(format!("functions: {}", all.join(", "))),
                        }
                    })
                };
                let (f, typed) = self.both(known, |me| me.each(args, |me, a| me.expr(a)))?;
                let (tys, xs): (Vec<Ty>, Vec<compiled::Expr>) = typed.into_iter().unzip();
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
                    return Err(self.at(func.span.0, "`const(...)` (the scalar a value is known to equal) is only available in equational rules")
                        .with_hint("in a structural rule, match the op that makes the constant: `%p = pd_op.full() {value: 0.0}` as a pattern, or `exists(%p = pd_op.full() {value: 0.0})` in the guard"));
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
                if f == Builtin::Query(Query::Tensor) {
                    if !tys[0].is(Ty::List) {
                        return Err(self
                            .at(
                                args[0].span().0,
                                format!(
                                    "`tensor` needs a list of dimensions, found {}",
                                    tys[0].a_name()
                                ),
                            )
                            .with_hint("tensor([4, 8], float32)"));
                    }
                } else {
                    self.want_value(tys[0], &args[0], &format!("`{}`", func.name))
                        .map_err(|d| {
                            d.with_hint("program queries take %values: name(%p), dtype(%g)")
                        })?;
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
    pub(super) fn exists(&mut self, x: &Exists) -> Result<Box<compiled::Exists>, Diagnostic> {
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
        // are planned (`crate::rules::plan`).
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
    pub(super) fn value_ty(&self, v: &ValueRef) -> Result<Ty, Diagnostic> {
        Ok(match self.values.get(&v.name.name) {
            None => return Err(self.unbound(&v.name)),
            Some((Binding::Failed, _)) => return Err(self.failed_binding(&v.name)),
            Some((Binding::Value, _)) => {
                if let Some(f) = &v.field {
                    return Err(self.at(
                        f.span.0,
                        format!("`{}` is a value; only an op has result fields", v.name.name),
                    ));
                }
                Ty::Value
            }
            Some((Binding::Op(specs, closed), _)) => {
                if let Some(f) = &v.field {
                    // A result is refused only when every op the pattern can be is known and
                    // none has it: by name, or by index (a variadic result takes any index).
                    let has = |s: &OpSpec| match f.name.parse::<usize>() {
                        Ok(i) => {
                            i < s.results.len() || s.results.iter().any(|r| r.starts_with('*'))
                        }
                        Err(_) => s.result_index(&f.name).is_some(),
                    };
                    if *closed && !specs.is_empty() && !specs.iter().any(|s| has(s)) {
                        let numbered = if f.name.parse::<usize>().is_ok() {
                            " (numbered from 0)"
                        } else {
                            ""
                        };
                        let hint = names_hint(
                            format!("results of {}{numbered}", specs[0].name),
                            specs[0].result_names(),
                        );
                        return Err(self
                            .at(
                                f.span.0,
                                format!("`{}` has no result `{}`", v.name.name, f.name),
                            )
                            .with_hint(hint));
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
    pub(super) fn uses_in_stage(
        &mut self,
        func: &Ident,
        v: &Expr,
        stage: &Expr,
        span: Span,
    ) -> Result<(Ty, compiled::Expr), Diagnostic> {
        let (t, vx) = self.expr(v)?;
        self.want_value(t, v, "`uses`").map_err(|d| {
            d.with_hint("uses(%v in backward) counts the uses of %v by backward ops")
        })?;
        let role =
            match stage {
                Expr::Var(Var::Bare(i)) if !self.params.contains_key(&i.name) => self.stage(i)?,
                e => return Err(self
                    .at(
                        e.span().0,
                        "`uses(%v in STAGE)` restricts the count to a stage: write a stage name",
                    )
                    .with_hint(names::stages_hint())),
            };
        let call = compiled::Expr::Call {
            func: compiled::Callee::UsesIn(func.span),
            args: vec![vx, compiled::Expr::Lit(Val::Stage(role), stage.span())],
            span,
        };
        Ok((Ty::Int, call))
    }
}

/// The text of `e` when it is a string literal without interpolation.
pub(super) fn plain_string(e: &Expr) -> Option<String> {
    match e {
        Expr::Str(parts, _) => crate::value::expr::plain(parts),
        _ => None,
    }
}
