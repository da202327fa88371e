//! Actions resolved: what they act on (an op the rule bound and has not erased, in the
//! straight-line order of the actions), where they insert or move ops, and the builds they
//! place.

use super::*;

impl Resolver<'_> {
    /// The op of `at end of region N of E` / `into region N of E`: an op the rule bound (by a
    /// pattern or a build) that holds regions when its name is known.
    pub(super) fn region_op(&self, e: &Expr) -> Result<compiled::Expr, Diagnostic> {
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
    pub(super) fn region_end(
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
    pub(super) fn op_ref(
        &self,
        v: &ValueRef,
    ) -> Result<(Vec<&'static OpSpec>, compiled::ValueRef), Diagnostic> {
        match self.values.get(&v.name.name) {
            Some((Binding::Op(s, _), _)) if v.field.is_none() => {
                Ok((s.clone(), self.value_ref(v)?))
            }
            Some((Binding::Failed, _)) => Err(self.failed_binding(&v.name)),
            Some(_) => Err(self
                .at(v.span.0, format!("`{}` is a value, not an op", text_of(v)))
                .with_hint("bind the op in the pattern: `match %o = pd_op.cast(%x);`")),
            None => Err(self.unbound(&v.name)),
        }
    }

    /// An action, an independent part of its rule: one that fails still binds the names it
    /// binds, so that the actions after it are checked too. A `let` binds its capture and a
    /// `state` its value, as they would have (neither depends on what failed); an op it builds
    /// may be what failed, so it is bound as [`Binding::Failed`] and what reads it is not
    /// checked. A name bound before the action, which it would bind again, is bound as failed
    /// too; one that a part of it which checked bound (an `if` branch's action) keeps that.
    pub(super) fn action(&mut self, a: &Action) -> Result<compiled::Action, Diagnostic> {
        let mut names = IndexSet::new();
        action_binds(a, &mut names);
        let held: Vec<(String, bool)> = (names.into_iter())
            .map(|n| {
                let held = self.values.contains_key(&n);
                (n, held)
            })
            .collect();
        let r = self.action_checked(a);
        if r.is_ok() {
            return r;
        }
        let state = match a {
            Action::Let { name, .. } => {
                self.bind_capture(&name.name);
                None
            }
            Action::State { bind, .. } => {
                self.bind_value(&bind.name, Binding::Value);
                Some(&bind.name)
            }
            _ => None,
        };
        for (n, held) in held {
            if Some(&n) != state && (held || !self.values.contains_key(&n)) {
                self.bind_value(&n, Binding::Failed);
            }
        }
        r
    }

    fn action_checked(&mut self, a: &Action) -> Result<compiled::Action, Diagnostic> {
        Ok(match a {
            Action::Let { name, value, .. } => {
                if self.captures.contains_key(&name.name) {
                    return Err(names::let_name_taken(self.src, name));
                }
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
                        self.want_value(t, e, "`after`")?;
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
                self.want_value(t, value, "`replace`")?;
                let (t, with_x) = self.expr(with)?;
                self.want_value(t, with, "`replace .. with`")?;
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
                self.want_value(t, value, "an operand")?;
                compiled::Action::SetOperand {
                    op: op_x,
                    target,
                    value: value_x,
                    span: *span,
                }
            }
            Action::AppendOperand { op, value, span } => {
                let (specs, op_x) = self.op_ref(op)?;
                if let Some(s) = specs.iter().find(|s| !s.variadic()) {
                    return Err(self
                        .at(op.span.0, format!("`append` needs an op whose last operand takes any number of values; `{}` can be `{}`, whose operands are fixed", op.name.name, s.name))
                        .with_hint("append to a vector: `%c = builtin.combine(..)`"));
                }
                let (t, value_x) = self.expr(value)?;
                self.want_value(t, value, "`append`")?;
                compiled::Action::AppendOperand {
                    op: op_x,
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
                        self.want_value(t, e, "`move`")?;
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
                // The condition and each action of either branch are independent parts.
                let cond_x = |me: &mut Self| {
                    let (t, x) = me.expr_no_build(cond)?;
                    me.want_bool(t, cond, "`if` needs").map(|_| x)
                };
                // What a branch erases may still exist after the `if` (the engine refuses a
                // later action on it when it was erased).
                let before = self.erased.clone();
                let after_then = before.clone();
                let branches = |me: &mut Self| {
                    let then = |me: &mut Self| {
                        let r = me.actions(then);
                        me.erased = after_then;
                        r
                    };
                    let els = |me: &mut Self| {
                        let r = me.actions(els);
                        me.erased = before;
                        r
                    };
                    me.both(then, els)
                };
                let (cond_x, (then, els)) = self.both(cond_x, branches)?;
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

    pub(super) fn actions(&mut self, v: &[Action]) -> Result<Vec<compiled::Action>, Diagnostic> {
        self.each(v, |me, a| me.action(a))
    }

    /// A state's initializer is built in the startup program, where no value of the main
    /// program exists: its operands (and theirs) must be ops built inline.
    pub(super) fn startup_operands(&self, b: &Build) -> Result<(), Diagnostic> {
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
}
