//! Ops built by a rule (`pd_op.scale(%g, ..) {..}` in an action or a guard): their names,
//! attributes and result types. Attributes that do not depend on the match are evaluated once per
//! build ([`BuildInfo`]), and attribute dictionaries are interned once per distinct value, so a
//! rule applied 10^4 times does not rebuild the same dictionaries. Result types follow the
//! dialect table's result rule; a rewired operand re-derives the op's result types here too.

use super::super::runtime::as_value;
use super::*;
use crate::rules::builtins::{Builtin, Query};
use crate::rules::compiled::{Callee, ResultTypes, Slot};

/// What a build is in this run: its name interned, and its fixed attributes evaluated.
pub(super) struct BuildInfo {
    pub(super) sym: Sym,
    /// Per attribute of the build: its value when it does not depend on the match.
    pub(super) fixed: Vec<Option<Attr>>,
    /// When every attribute that depends on the match is a query of a bound value's type
    /// (`dtype(%g)`, `shape(%g)`, `rank(%g)`, `type(%g)`): the slots of those values. The
    /// dictionary is then a function of their types ([`Engine::dicts_by_types`]).
    pub(super) type_slots: Option<Vec<Slot>>,
}

/// A built op's final attributes and result types ([`Engine::signature`]).
pub(super) type Signature = (AttrId, Box<[TypeId]>);

/// The slot of `%v` when `e` is `dtype(%v)`, `shape(%v)`, `rank(%v)` or `type(%v)`: a value
/// that depends on the match only through `%v`'s type.
fn type_query_slot(e: &Expr) -> Option<Slot> {
    match e {
        Expr::Call {
            func:
                Callee::Builtin(
                    Builtin::Query(Query::DType | Query::Shape | Query::Rank | Query::Type),
                    _,
                ),
            args,
            ..
        } => match &args[..] {
            [Expr::Var(Var::Value(v))] if v.field.is_none() => Some(v.slot),
            _ => None,
        },
        _ => None,
    }
}

/// The type of a `builtin.combine` (result rule [`ResultRule::VecOfOperands`]) of `operands`
/// in `prog`: the vector of their types; an error when one is absent.
pub(super) fn vector_type(
    prog: &Program,
    operands: impl IntoIterator<Item = Option<ValueId>>,
    op: &str,
) -> Result<Type, String> {
    let items: Option<Vec<TypeId>> = operands
        .into_iter()
        .map(|v| v.map(|v| prog.value_type(v)))
        .collect();
    items
        .map(Type::Vec)
        .ok_or_else(|| crate::dialect::absent_vector_item(op))
}

impl<'a> Engine<'a> {
    /// Builds an op (and, first, the ops nested in its operands) at `cur`, in main.
    pub(super) fn build(
        &mut self,
        lr: &'a CompiledRule,
        b: &mut Bindings,
        bd: &'a Build,
        cur: &mut Cursor,
        fx: &mut Effects,
    ) -> Result<OpId, Diagnostic> {
        let (sym, operands, attrs) = self.build_parts(lr, b, bd, Which::Main, cur, fx)?;
        let (attrs, types) = self.signature(lr, b, bd, &operands, attrs, Which::Main)?;
        let regions = crate::dialect::region_count(&bd.op);
        let syntax = match regions {
            0 => OpSyntax::Plain,
            _ if crate::dialect::paddle_json::WHILE_SYNTAX_OPS.contains(&bd.op.as_str()) => {
                OpSyntax::While
            }
            _ => OpSyntax::Regions,
        };
        let op = self.m.main.create_op(sym, attrs, &operands, &types, syntax);
        self.given_types_agree(lr, bd, op)?;
        self.operand_lists.push(operands);
        for _ in 0..regions {
            self.m.main.add_region(op);
        }
        self.place(cur, op);
        if let Some(r) = self.role(op) {
            // Keep the stage markers right when a build lands at a stage's edge.
            if let Some(&last) = self.stage_last.get(&r) {
                if self.m.main.prev_op(op) == Some(last) {
                    self.stage_last.insert(r, op);
                }
            }
        }
        if let Some(bind) = bd.bind {
            b.set(bind, Val::Op(op));
        }
        fx.edits += 1;
        fx.touched.push(op);
        Ok(op)
    }

    /// A type the rule gives (`-> T`) where the op's shape family derives one from the built
    /// op's operands and attributes must be that type: Paddle recomputes it when it loads the
    /// program (a `matmul` of 4x8 by 8x16 is 4x16, whatever a rule says).
    fn given_types_agree(
        &self,
        lr: &'a CompiledRule,
        bd: &'a Build,
        op: OpId,
    ) -> Result<(), Diagnostic> {
        let (ResultTypes::Given(_), Some(spec)) = (&bd.types, bd.spec) else {
            return Ok(());
        };
        let p = &self.m.main;
        let view = crate::dialect::shape_family::ProgramOp {
            ctx: &self.m.ctx,
            prog: p,
            op,
        };
        let n = p.num_results(op);
        let Some(derived) = crate::dialect::shape_family::infer(spec.shape, &view, n) else {
            return Ok(());
        };
        for (r, want) in derived.into_iter().enumerate().take(n) {
            let Some(want) = want else { continue };
            let given = self.m.ctx.ty(p.value_type(p.result(op, r)));
            if matches!(want, Type::Tensor { .. })
                && matches!(given, Type::Tensor { .. })
                && *given != want
            {
                let rn = spec.result_names().nth(r).unwrap_or("?");
                return Err(self
                    .err(
                        lr,
                        bd.span,
                        format!(
                            "this build gives `{}`'s result `{rn}` the type `{}`, but its operands and attributes make it `{}` ({})",
                            bd.op,
                            self.m.ctx.type_text(p.value_type(p.result(op, r))),
                            crate::ir::format_type(&want, &|t| self.m.ctx.type_text(t).to_string()),
                            spec.shape.infer_meta()
                        ),
                    )
                    .with_hint("leave the type to irw where `irw ops NAME` names a result-type family, or give the type Paddle computes"));
            }
        }
        Ok(())
    }

    /// The interned name of a build; on its first use in this run, its [`BuildInfo`] is
    /// computed too.
    pub(super) fn build_info(
        &mut self,
        lr: &'a CompiledRule,
        b: &mut Bindings,
        bd: &'a Build,
    ) -> Result<Sym, Diagnostic> {
        if bd.id >= self.builds.len() {
            self.builds.resize_with(bd.id + 1, || None);
        }
        if let Some(info) = &self.builds[bd.id] {
            return Ok(info.sym);
        }
        let sym = self.m.ctx.sym(&bd.op);
        let mut fixed = Vec::with_capacity(bd.attrs.len());
        for a in &bd.attrs {
            fixed.push(if a.fixed {
                Some(self.attr_value(lr, b, &a.value)?)
            } else {
                None
            });
        }
        let type_slots = bd
            .attrs
            .iter()
            .filter(|a| !a.fixed)
            .map(|a| type_query_slot(&a.value))
            .collect();
        self.builds[bd.id] = Some(BuildInfo {
            sym,
            fixed,
            type_slots,
        });
        Ok(sym)
    }

    /// The key of [`Engine::dicts_by_types`] for build `bd` at the match `b`: the build and the
    /// types of the values its attributes query, when it has such a key and each of those
    /// slots holds a value.
    fn types_key(&self, bd: &Build, b: &Bindings, key: &mut Vec<u32>) -> bool {
        let Some(Some(slots)) = self
            .builds
            .get(bd.id)
            .map(|i| i.as_ref().map(|i| &i.type_slots))
        else {
            return false;
        };
        let Some(slots) = slots else { return false };
        key.clear();
        key.push(bd.id as u32);
        for &s in slots {
            match b.get(s).and_then(|x| as_value(self.m, x)) {
                Some(Some(v)) => key.push(self.m.main.value_type(v).0),
                _ => return false,
            }
        }
        true
    }

    /// The attributes (with the `op_dist_attr` they imply) and result types of an op built by
    /// `bd` from `operands` with the dictionary `attrs`. In a dense program these depend only
    /// on the build, the dictionary and the operands' types, so they are derived once per
    /// distinct combination ([`Engine::signatures`]) rather than once per op built.
    pub(super) fn signature(
        &mut self,
        lr: &'a CompiledRule,
        b: &mut Bindings,
        bd: &'a Build,
        operands: &[Option<ValueId>],
        attrs: AttrId,
        which: Which,
    ) -> Result<(AttrId, Vec<TypeId>), Diagnostic> {
        // `Like` and `Given` read the match; a distributed program's derivation reads the
        // distribution context.
        let memo = !self.m.ctx.has_dist_types()
            && matches!(bd.types, ResultTypes::Derived | ResultTypes::Operands(_));
        let mut key = std::mem::take(&mut self.signature_key);
        if memo {
            let prog = self.program(which);
            key.clear();
            key.extend([bd.id as u32, attrs.0, which as u32]);
            key.extend(
                operands
                    .iter()
                    .map(|v| v.map_or(u32::MAX, |v| prog.value_type(v).0)),
            );
            if let Some((a, t)) = self.signatures.get(&key[..]) {
                let found = (*a, t.to_vec());
                self.signature_key = key;
                return Ok(found);
            }
        }
        let derived = self.result_types(lr, b, bd, operands, attrs, which);
        let types = match derived {
            Ok(t) => t,
            Err(e) => {
                self.signature_key = key;
                return Err(e);
            }
        };
        let attrs = self.dist_attrs(which, attrs, operands, &types);
        if memo {
            self.signatures
                .insert(key[..].into(), (attrs, types.clone().into_boxed_slice()));
        }
        self.signature_key = key;
        Ok((attrs, types))
    }

    pub(super) fn attr_value(
        &mut self,
        lr: &'a CompiledRule,
        b: &mut Bindings,
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

    pub(super) fn build_parts(
        &mut self,
        lr: &'a CompiledRule,
        b: &mut Bindings,
        bd: &'a Build,
        which: Which,
        cur: &mut Cursor,
        fx: &mut Effects,
    ) -> Result<(Sym, Vec<Option<ValueId>>, AttrId), Diagnostic> {
        let sym = self.build_info(lr, b, bd)?;
        let spec = bd.spec;
        // Lists from the run's pools (every application builds ops; nested builds take their
        // own): `build` returns `operands` once the op is made.
        let mut operands = self.operand_lists.pop().unwrap_or_default();
        operands.clear();
        // Operands the match gives first: nested builds take their distribution.
        let mut given = self.given_lists.pop().unwrap_or_default();
        given.clear();
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
        for (a, v) in bd.args.iter().zip(given.iter()) {
            let v = v.flatten();
            let idx = a.index;
            if v.is_none() && spec.is_some_and(|s| s.operand_required(idx)) {
                let s = spec.map_or("?", |s| s.operand_names().nth(idx).unwrap_or("?"));
                return Err(self.err(
                    lr,
                    a.value.span(),
                    format!(
                        "operand `{s}` of `{}` is required, and this value is absent",
                        bd.op
                    ),
                ));
            }
            if operands.len() <= idx {
                operands.resize(idx + 1, None);
            }
            operands[idx] = v;
        }
        self.given_lists.push(given);
        if let Some(s) = spec {
            let declared = s.operands.iter().filter(|o| !o.starts_with('*')).count();
            if bd.named_args && operands.len() < declared {
                operands.resize(declared, None);
            }
        }
        // Attributes that are functions of values' types: the dictionary made for the same
        // types before.
        let mut types_key = std::mem::take(&mut self.types_key);
        let by_types = self.types_key(bd, b, &mut types_key);
        if by_types {
            if let Some(&id) = self.dicts_by_types.get(&types_key[..]) {
                self.types_key = types_key;
                return Ok((sym, operands, id));
            }
        }
        let id = self.build_dict(lr, b, bd);
        if let (true, Ok(id)) = (by_types, &id) {
            self.dicts_by_types.insert(types_key[..].into(), *id);
        }
        self.types_key = types_key;
        Ok((sym, operands, id?))
    }

    /// The dictionary of an op built by `bd` at the match `b`: its fixed attributes and those
    /// that depend on the match, made and interned only the first time these values occur for
    /// this build.
    fn build_dict(
        &mut self,
        lr: &'a CompiledRule,
        b: &mut Bindings,
        bd: &'a Build,
    ) -> Result<AttrId, Diagnostic> {
        let mut varying = Vec::new();
        for a in &bd.attrs {
            if !a.fixed {
                varying.push(self.attr_value(lr, b, &a.value)?);
            }
        }
        if bd.id >= self.dicts.len() {
            self.dicts.resize_with(bd.id + 1, FxHashMap::default);
        }
        if let Some(&id) = self.dicts[bd.id].get(&varying) {
            return Ok(id);
        }
        let fixed = self.builds[bd.id].as_ref().map_or(&[][..], |i| &i.fixed);
        let mut d = AttrDict::default();
        let mut var = varying.iter();
        for (k, attr) in bd.attrs.iter().enumerate() {
            let a = match fixed.get(k) {
                Some(Some(a)) => a.clone(),
                _ => var.next().cloned().unwrap_or(Attr::Bool(false)),
            };
            d.set(&attr.key, a);
        }
        let id = self.m.ctx.intern_attrs(d);
        // A string among the values is most often a name, which no other build repeats:
        // remembering it would cost memory in proportion to the program for no hit.
        if !varying.iter().any(|a| matches!(a, Attr::Str(_))) {
            self.dicts[bd.id].insert(varying, id);
        }
        Ok(id)
    }

    /// Builds the nested ops among `bd`'s operands, filling their slots of `given`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn build_operands(
        &mut self,
        lr: &'a CompiledRule,
        b: &mut Bindings,
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

    pub(super) fn result_types(
        &mut self,
        lr: &'a CompiledRule,
        b: &mut Bindings,
        bd: &'a Build,
        operands: &[Option<ValueId>],
        attrs: AttrId,
        which: Which,
    ) -> Result<Vec<TypeId>, Diagnostic> {
        let types = self.result_types_unchecked(lr, b, bd, operands, attrs, which)?;
        // An in-place result is its operand's buffer: it keeps that operand's type (a write
        // that broadcast or cast it would change a persistable's shape or dtype).
        if let Some(spec) = bd.spec {
            let prog = match which {
                Which::Main => &self.m.main,
                Which::Startup => self.m.startup.as_ref().unwrap_or(&self.m.main),
            };
            for &(r, o) in spec.aliases {
                let (Some(&t), Some(Some(v))) = (types.get(r as usize), operands.get(o as usize))
                else {
                    continue;
                };
                let want = prog.value_type(*v);
                if t != want && t != Context::NULL_TYPE {
                    let rn = spec.result_names().nth(r as usize).unwrap_or("?");
                    let on = spec.operand_names().nth(o as usize).unwrap_or("?");
                    return Err(self
                        .err(
                            lr,
                            bd.span,
                            format!(
                                "`{}` writes its operand `{on}` in place, so its result `{rn}` has `{on}`'s type `{}`, not `{}`",
                                bd.op,
                                self.m.ctx.type_text(want),
                                self.m.ctx.type_text(t)
                            ),
                        )
                        .with_hint("an in-place op cannot change its buffer's shape or dtype: build the out-of-place op instead"));
                }
            }
        }
        Ok(types)
    }

    fn result_types_unchecked(
        &mut self,
        lr: &'a CompiledRule,
        b: &mut Bindings,
        bd: &'a Build,
        operands: &[Option<ValueId>],
        attrs: AttrId,
        which: Which,
    ) -> Result<Vec<TypeId>, Diagnostic> {
        let name = &bd.op;
        fn prog(m: &Module, which: Which) -> &Program {
            match which {
                Which::Main => &m.main,
                Which::Startup => m.startup.as_ref().unwrap_or(&m.main),
            }
        }
        match &bd.types {
            ResultTypes::Derived => {}
            ResultTypes::Operands(like) => {
                let mut v = Vec::with_capacity(like.len());
                for (r, l) in like.iter().enumerate() {
                    v.push(match l.and_then(|i| operands.get(i).copied().flatten()) {
                        Some(x) => prog(self.m, which).value_type(x),
                        None if l.is_none() => Context::NULL_TYPE,
                        None => {
                            let rn = bd.spec.and_then(|s| s.result_names().nth(r)).unwrap_or("?");
                            return Err(self.err(
                                lr,
                                bd.span,
                                format!("`{name}`'s result `{rn}` takes the type of an operand that is absent"),
                            ));
                        }
                    });
                }
                return Ok(v);
            }
            ResultTypes::Like(r) => {
                let o = self.op_of(lr, b, r)?;
                let p = &self.m.main;
                return Ok(p.results(o).map(|v| p.value_type(v)).collect());
            }
            ResultTypes::Given(e) => {
                let v = self.eval(lr, b, e)?;
                let items = match v {
                    Val::List(items) => items,
                    v => vec![v],
                };
                let mut out = Vec::with_capacity(items.len());
                for it in items {
                    out.push(match it {
                        Val::Type(t) => t,
                        Val::NullValue => Context::NULL_TYPE,
                        other => {
                            return Err(self.err(
                                lr,
                                e.span(),
                                format!("a result type must be a type, found {}", other.a_kind()),
                            ))
                        }
                    });
                }
                return Ok(out);
            }
        }
        let Some(spec) = bd.spec else {
            return Err(self.err(
                lr,
                bd.span,
                format!(
                    "irw cannot derive the result type of `{name}`: it is not in the dialect table"
                ),
            ));
        };
        let n_results = spec.results.iter().filter(|r| !r.starts_with('?')).count();
        // A region op a rule builds has no results: its regions start empty, so they yield
        // nothing for results to take.
        if n_results == 0 || crate::dialect::region_count(name) > 0 {
            return Ok(vec![]);
        }
        let prog = prog(self.m, which);
        if spec.result_rule == ResultRule::VecOfOperands {
            let ty = vector_type(prog, operands.iter().copied(), name)
                .map_err(|msg| self.err(lr, bd.span, msg))?;
            return Ok(vec![self.m.ctx.intern_type(ty)]);
        }
        let ctx = &self.m.ctx;
        let operand_ty = |i: u8| {
            operands
                .get(i as usize)
                .copied()
                .flatten()
                .map(|v| ctx.ty(prog.value_type(v)))
        };
        // A tensor made from attributes alone lives where the values the rule combines it
        // with live (replicated), or is dense.
        let from_attrs = |shape: Vec<i64>, dtype| match self.dist_context(shape.len()) {
            Some(dist) => Type::Dist { dist, shape, dtype },
            None => Type::Tensor { shape, dtype },
        };
        let ty =
            crate::dialect::result_type(spec.result_rule, operand_ty, ctx.attrs(attrs), from_attrs);
        let id = ty.map(|t| self.m.ctx.intern_type(t));
        let Some(id) = id else {
            return Err(self.err(lr, bd.span, format!("cannot derive the result type of `{name}` from its operands and attributes"))
                .with_hint("check the operands (an in-place op's type comes from its first operand) and the shape/dtype attributes"));
        };
        let mut v = vec![id];
        v.resize(n_results, Context::NULL_TYPE);
        Ok(v)
    }
}
