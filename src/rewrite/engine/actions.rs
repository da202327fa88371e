//! One action of a structural rule applied to a match: `replace`, `erase`, `move`, `set`,
//! rewiring an operand (`in %o: x := ..`), `state`, `error` and the rest. Split from the driver
//! because it is the one place that edits the program on a rule's behalf: every edit is counted
//! in [`Effects`] and every op it touches goes back on the worklist.

use super::*;

impl<'a> Engine<'a> {
    pub(super) fn action(
        &mut self,
        lr: &'a CompiledRule,
        a: &'a Action,
        b: &mut Bindings,
        fx: &mut Effects,
    ) -> Result<(), Diagnostic> {
        match a {
            Action::Let { slot, value } => {
                let v = self.eval(lr, b, value)?;
                b.set(*slot, v);
            }
            Action::If { cond, then, els } => {
                let branch = match self.condition(lr, b, cond)? {
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
                let msg = eval_str(&mut env, message);
                let d = match msg {
                    Ok(msg) => self.err(lr, *span, msg),
                    Err(e) => return Err(eval_diag(self.m, self.rules, lr, self.matched, e)),
                };
                let d = on_matched_op(self.m, lr, self.matched, d);
                return Err(d);
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
                let v = match sym.and_then(|s| self.states.get(&s).copied()) {
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
                        if self.is_existing_persistable(&n) {
                            return Err(self.err(
                                lr,
                                name.span(),
                                format!("state `{n}` is named after a persistable the program already has"),
                            ).with_hint("a state is a new buffer: writing it would overwrite the existing one; choose another name"));
                        }
                        let v = self.create_state(lr, b, &n, t, init, *span)?;
                        fx.edits += 1;
                        v
                    }
                };
                b.set(*bind, Val::Value(v));
            }
            Action::Insert { at, build } => {
                let stage = match at {
                    InsertPoint::StageEnd(s) => Some(*s),
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
                let (from, to) = (self.m.main.value_type(old), self.m.main.value_type(new));
                if from != to {
                    return Err(self
                        .err(
                            lr,
                            *span,
                            format!(
                                "`replace` needs a value of the replaced value's type: it is a `{}`, the new value a `{}`",
                                self.m.ctx.type_text(from),
                                self.m.ctx.type_text(to)
                            ),
                        )
                        .with_hint("its readers were made for the old type; rewire one reader (`in %o: x := ..`), whose result type follows where the dialect derives it, or convert the value (`pd_op.cast`)"));
                }
                let created = &fx.touched[before..];
                // The op computing the new value keeps reading the old one (`after %s: %t =
                // scale(%s); replace %s with %t;`): rewired, it would read itself.
                let new_def = self.m.main.defining_op(new);
                let stage = *only_in_stage;
                let users: Vec<OpId> = self.m.main.uses(old).map(|u| u.op).collect();
                let mut keep: FxHashSet<OpId> = FxHashSet::default();
                for u in users {
                    if !created.contains(&u)
                        && Some(u) != new_def
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
                let o = self.op_of(lr, b, op)?;
                let new = self.operand_value(lr, b, value, o, fx)?;
                let idxs: Vec<usize> = match target {
                    OperandSel::Name(n, n_span) => {
                        let name = self.m.ctx.str(self.m.main.op_name(o)).to_string();
                        match self.rules.ops.spec(&name).and_then(|s| s.operand_index(n)) {
                            Some(i) if i < self.m.main.num_operands(o) => vec![i],
                            _ => {
                                return Err(self.err(
                                    lr,
                                    *n_span,
                                    format!("`{name}` has no operand `{n}` here"),
                                ))
                            }
                        }
                    }
                    OperandSel::Value(v) => {
                        let old = self.value_of(lr, b, &Expr::Var(Var::Value(v.clone())))?;
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
                    let was = self.m.main.operand(o, i);
                    if was != new {
                        if let Some(d) = was.and_then(|v| self.m.main.defining_op(v)) {
                            fx.touched.push(d);
                        }
                        let old = was.map(|v| self.m.main.value_type(v));
                        self.m.main.set_operand(o, i, new);
                        match self.follow_operand_type(o, i, old) {
                            Ok(retyped) => fx.touched.extend(retyped),
                            Err(msg) => return Err(self.err(lr, *span, msg)),
                        }
                        self.refresh_dist_slots(o, i);
                        fx.edits += 1;
                    }
                }
                fx.touched.push(o);
            }
            Action::AppendOperand { op, value, span } => {
                let o = self.op_of(lr, b, op)?;
                let name = self.m.ctx.str(self.m.main.op_name(o)).to_string();
                if !self.rules.ops.spec(&name).is_some_and(|s| s.variadic()) {
                    return Err(self.err(lr, op.name_span, format!("`append` needs an op whose last operand takes any number of values; `{}` is `{name}`", op.name)));
                }
                if self
                    .m
                    .ctx
                    .attrs(self.m.main.op_attrs(o))
                    .get(OP_DIST_ATTR)
                    .is_some()
                {
                    return Err(self.err(lr, *span, format!("`append` to an op with an `op_dist_attr` (`{name}` of an auto-parallel program) is not supported: its distribution would not describe the new operand")));
                }
                let new = self.operand_value(lr, b, value, o, fx)?;
                if new.is_none() {
                    return Err(self.err(
                        lr,
                        value.span(),
                        "`append` needs a value, not an absent operand: a vector's items are values",
                    ));
                }
                if self.m.main.num_operands(o) >= limits::MAX_APPENDED_ITEMS {
                    return Err(self.err(lr, *span, format!("`append` would grow `{name}` past {} items: each append makes the vector's type anew, so larger gathers are refused", limits::MAX_APPENDED_ITEMS))
                        .with_hint("gather in groups (one vector per group), or sum as you go: a chain of `add` found through a marker is linear"));
                }
                // A reader whose results follow the vector's length (`stack`, `concat`, a
                // `split` into its items) would keep the types of the shorter vector.
                let p = &self.m.main;
                let reader = p.results(o).flat_map(|r| p.uses(r)).find(|u| {
                    let user = self.m.ctx.str(p.op_name(u.op));
                    !self
                        .rules
                        .ops
                        .spec(user)
                        .is_some_and(|s| s.shape == crate::dialect::Shape::AddN)
                });
                if let Some(u) = reader {
                    let user = self.m.ctx.str(p.op_name(u.op)).to_string();
                    return Err(self.err(lr, *span, format!("`append` to a vector that `{user}` reads: its result types may follow the vector's length, and would not follow the new item"))
                        .with_hint("append to the vector before building what reads it (an `add_n` may read it already: its result is one item's type)"));
                }
                // The value gains a reader: what matched its uses may match again.
                if let Some(d) = new.and_then(|v| self.m.main.defining_op(v)) {
                    fx.touched.push(d);
                }
                self.m.main.append_operand(o, new);
                let i = self.m.main.num_operands(o) - 1;
                match self.follow_operand_type(o, i, None) {
                    Ok(retyped) => fx.touched.extend(retyped),
                    Err(msg) => return Err(self.err(lr, *span, msg)),
                }
                fx.edits += 1;
                fx.touched.push(o);
            }
            Action::Erase { op, span } => {
                let o = self.op_of(lr, b, op)?;
                if self.m.main.results(o).any(|r| self.m.main.has_uses(r)) {
                    return Err(self
                        .err(
                            lr,
                            *span,
                            format!("cannot erase `{}`: its result is still used", op.name),
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
                let o = self.op_of(lr, b, op)?;
                let stage = match to {
                    InsertPoint::StageEnd(s) | InsertPoint::StageStart(s) => Some(*s),
                    _ => None,
                };
                // Where it goes is found first: an op that is its stage's edge and is sent to
                // that edge is already there.
                let cur = self.cursor(lr, b, to)?;
                if self.inside(cur, o) {
                    return Err(self.moved_into_itself(lr, *span, o));
                }
                self.forget_marker(o);
                // Next to itself, an op is already where it is asked to be: only a stage move
                // still gives it the stage's role.
                let in_place = matches!(cur, Cursor::After(a) | Cursor::Before(a) if a == o);
                if !in_place {
                    self.m.main.detach(o);
                    let mut cur = cur;
                    self.place(&mut cur, o);
                    fx.edits += 1;
                } else if let (InsertPoint::StageStart(s), Some(next)) =
                    (to, self.m.main.next_op(o))
                {
                    // The stage's first op sent to its start has arrived there: later arrivals
                    // go after it, before the op that follows it.
                    self.stage_first.insert(*s, next);
                }
                if let Some(s) = stage {
                    let old = self.m.main.op_attrs(o);
                    let id = self.m.ctx.with_attr(old, ROLE_ATTR, Attr::Int(s));
                    if id != old {
                        self.m.main.set_op_attrs(o, id);
                        fx.edits += usize::from(in_place);
                    }
                    if matches!(to, InsertPoint::StageEnd(_)) {
                        self.stage_last.insert(s, o);
                    }
                }
                fx.touched.push(o);
            }
            Action::MoveStage { stage, to, span } => {
                let mut cur = self.cursor(lr, b, to)?;
                let target = match cur {
                    Cursor::BlockEnd(bk) => self.m.main.block_parent_op(bk),
                    _ => None,
                };
                let top = self.m.main.top_block();
                let all: Vec<OpId> = self.m.main.block_ops(top).collect();
                let ops: Vec<OpId> = all
                    .into_iter()
                    .filter(|&o| Some(o) != target && self.role(o) == Some(*stage))
                    .collect();
                if ops.is_empty() {
                    return Err(self.err(lr, *span, "the stage has no op to move"));
                }
                if let Some(&o) = ops.iter().find(|&&o| self.inside(cur, o)) {
                    return Err(self.moved_into_itself(lr, *span, o));
                }
                for o in ops {
                    self.forget_marker(o);
                    self.m.main.detach(o);
                    self.place(&mut cur, o);
                    fx.edits += 1;
                    fx.touched.push(o);
                }
            }
            Action::SetAttrs { op, attrs } => {
                let o = self.op_of(lr, b, op)?;
                let old = self.m.main.op_attrs(o);
                let mut d = self.m.ctx.attrs(old).to_dict();
                for (k, e) in attrs {
                    let v = self.eval(lr, b, e)?;
                    let a = v.to_attr().ok_or_else(|| {
                        self.err(
                            lr,
                            e.span(),
                            format!("an attribute cannot hold {}", v.a_kind()),
                        )
                    })?;
                    d.set(k, a);
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

    /// The value of an `if`'s condition. One that needs nothing from the match (`if avg`,
    /// `if normalize == "tokens"`: parameters are literals once lowered) is evaluated once per
    /// run ([`Engine::fixed_conditions`]).
    fn condition(
        &mut self,
        lr: &'a CompiledRule,
        b: &mut Bindings,
        cond: &'a Expr,
    ) -> Result<Val, Diagnostic> {
        let key = cond as *const Expr as usize;
        let fixed = match self.fixed_conditions.get(&key) {
            Some(&known) => known,
            None => {
                let known = match cond.is_fixed() {
                    true => match crate::rules::eval::eval(&mut crate::rules::eval::ConstEnv, cond)
                    {
                        Ok(Val::Bool(c)) => Some(c),
                        _ => None,
                    },
                    false => None,
                };
                self.fixed_conditions.insert(key, known);
                known
            }
        };
        match fixed {
            Some(c) => Ok(Val::Bool(c)),
            None => self.eval(lr, b, cond),
        }
    }

    /// The value `e` gives as a new operand of `o`: an op it builds goes right before `o`.
    fn operand_value(
        &mut self,
        lr: &'a CompiledRule,
        b: &mut Bindings,
        e: &'a Expr,
        o: OpId,
        fx: &mut Effects,
    ) -> Result<Option<ValueId>, Diagnostic> {
        match e {
            Expr::Build(bd) => {
                let mut cur = Cursor::Before(o);
                let nb = self.build(lr, b, bd, &mut cur, fx)?;
                Ok(Some(self.first_result(lr, nb, bd.span)?))
            }
            e => self.value_of(lr, b, e),
        }
    }

    /// A move whose destination lies inside a region of the op moved (its own region, or next
    /// to an op nested in it): the op would hold itself.
    fn moved_into_itself(&self, lr: &'a CompiledRule, span: Span, o: OpId) -> Diagnostic {
        let name = self.m.ctx.str(self.m.main.op_name(o)).to_string();
        self.err(
            lr,
            span,
            format!(
                "rule `{}` moves `{name}` (main op #{}) into one of its own regions: an op cannot hold itself",
                lr.name, o.0
            ),
        )
        .with_hint("move the op next to or into a region of an op outside it")
    }

    pub(super) fn first_result(
        &self,
        lr: &'a CompiledRule,
        op: OpId,
        span: Span,
    ) -> Result<ValueId, Diagnostic> {
        if self.m.main.num_results(op) == 0 {
            return Err(self.err(lr, span, "this op has no result to use as a value"));
        }
        Ok(self.m.main.result(op, 0))
    }
}
