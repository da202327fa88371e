//! Patterns resolved: the op a pattern selects (a name, a quoted name, an op class, a set, an
//! alternative with its own attribute tests) against the dialect table and the file's declared
//! ops, its operands against the op's operand names and count, and every `%x`/`$x` it binds
//! given its slot. A rule's `match` is one conjunction, so its patterns are all bound
//! ([`Resolver::bind_pattern`]) before the expressions their attributes are compared with are
//! resolved ([`Resolver::pattern_exprs`]): those may name what a later pattern binds.

use super::*;

impl Resolver<'_> {
    /// The ops `sel` can be (none listed: any op of a class, or a quoted name nobody declared)
    /// and the selector the matcher tests.
    pub(super) fn op_sel(
        &self,
        sel: &OpSel,
    ) -> Result<(Vec<&'static OpSpec>, compiled::OpSel), Diagnostic> {
        Ok(match sel {
            OpSel::Name(i) => match self.ops.spec(&i.name) {
                Some(s) => (vec![s], compiled::OpSel::Name(i.name.clone())),
                None => return Err(self.unknown_op(i, true)),
            },
            OpSel::Quoted(i) if self.faults.ops.contains(&i.name) => {
                return Err(self.unknown_op(i, true))
            }
            OpSel::Quoted(i) => (
                self.ops.quoted_spec(&i.name).into_iter().collect(),
                compiled::OpSel::Name(i.name.clone()),
            ),
            OpSel::Class(c) => {
                let class = self.op_class(c)?;
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
                    let t = names::alt_test(a).map_err(|p| p.at(self.src))?;
                    tests.push((a.key.name.clone(), t));
                }
                let (specs, inner) = self.op_sel(sel)?;
                (specs, compiled::OpSel::With(Box::new(inner), tests))
            }
        })
    }

    /// Whether the ops [`Resolver::op_sel`] lists for `sel` are all it can match: names, declared
    /// quoted names, and classes of an effect irw's table gives (an op it does not know is
    /// `unknown`); not `any`, `unknown` or an undeclared quoted name.
    pub(super) fn sel_closed(&self, sel: &OpSel) -> bool {
        match sel {
            OpSel::Name(_) => true,
            OpSel::Quoted(i) => self.ops.quoted_spec(&i.name).is_some(),
            OpSel::Class(c) => matches!(
                names::op_class(c),
                Ok(OpClass::Effect(e)) if e != crate::dialect::Effect::Unknown
            ),
            OpSel::OneOf(v, _) => v.iter().all(|s| self.sel_closed(s)),
            OpSel::With { sel, .. } => self.sel_closed(sel),
        }
    }

    /// The op class `c` names. An unknown one may be an op set of an import that failed.
    pub(super) fn op_class(&self, c: &Ident) -> Result<OpClass, Diagnostic> {
        names::op_class(c).map_err(|p| self.cascade_if(self.faults.incomplete, p.at(self.src)))
    }

    /// An operand name `n` that `op` (as written: a name, a class, a set) does not have; the
    /// hint lists the operands of `spec`, one op it can be.
    pub(super) fn no_operand(&self, n: &Ident, op: &str, spec: &OpSpec) -> Diagnostic {
        self.at(n.span.0, format!("`{op}` has no operand `{}`", n.name))
            .with_hint(names_hint(
                format!("operands of {}", spec.name),
                spec.operand_names(),
            ))
    }

    /// A positional operand list of `p` (no `..`, no names) must fit one of the ops `specs` it
    /// can match: a pattern no op can have never matches. Structural and equational patterns
    /// alike.
    pub(super) fn pattern_arity(
        &self,
        p: &OpPattern,
        specs: &[&'static OpSpec],
    ) -> Result<(), Diagnostic> {
        let n = p.args.len();
        if p.rest
            || specs.is_empty()
            || n == 0
            || p.args.iter().any(|a| a.operand.is_some())
            || specs.iter().any(|s| OpSpec::count_fits(s.operands, n))
        {
            return Ok(());
        }
        Err(self
            .at(
                p.span.0,
                format!("`{}` does not take {n} operand(s)", sel_text(&p.op)),
            )
            .with_hint("end the list with `..` to match a prefix, or name the operands"))
    }

    /// A pattern, its names bound; the expressions its attributes are compared with come after
    /// every pattern of the conjunction is bound ([`Resolver::pattern_exprs`]).
    pub(super) fn bind_pattern(&mut self, p: &OpPattern) -> Result<compiled::Pattern, Diagnostic> {
        let (specs, op) = self.op_sel(&p.op)?;
        let stage = p.stage.as_ref().map(|s| self.stage(s)).transpose()?;
        let mut bind = None;
        if let Some(b) = &p.bind {
            if matches!(self.values.get(&b.name), Some((Binding::Op(..), _))) {
                return Err(self.at(b.span.0, format!("`{}` names two ops in this rule", b.name)));
            }
            bind =
                Some(self.bind_value(&b.name, Binding::Op(specs.clone(), self.sel_closed(&p.op))));
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
            if let ValPat::Var { name, .. } = &a.pat {
                // In an `exists` after an `erase`, as anywhere else.
                self.not_erased(name)?;
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
        self.pattern_arity(p, &specs)?;
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

    /// Binds the names of a pattern that failed to resolve, as [`Resolver::bind_pattern`] would
    /// have, so that what reads them is checked: operand variables as values, captures as
    /// captures, and the op's own name, when the pattern failed before binding it, as
    /// [`Binding::Failed`].
    pub(super) fn bind_failed_pattern(&mut self, p: &OpPattern) {
        if let Some(b) = &p.bind {
            if !self.values.contains_key(&b.name) {
                self.bind_value(&b.name, Binding::Failed);
            }
        }
        for a in &p.args {
            match &a.pat {
                ValPat::Var { name, ty } => {
                    self.operand_value(&name.name);
                    if let Some(t) = ty {
                        self.bind_capture(&t.name);
                    }
                }
                ValPat::Wild(_) => {}
                ValPat::Op(inner) => self.bind_failed_pattern(inner),
            }
        }
        for a in &p.attrs {
            if let AttrPatVal::Capture(c) = &a.val {
                self.bind_capture(&c.name);
            }
        }
    }

    /// The attribute values `p` (resolved as `rp`) and its nested patterns compare with.
    pub(super) fn pattern_exprs(
        &mut self,
        p: &OpPattern,
        rp: &mut compiled::Pattern,
    ) -> Result<(), Diagnostic> {
        // The ops the pattern may match, to check each test against the attribute's kind.
        let specs = match p.attrs.is_empty() {
            false => self
                .op_sel(&p.op)
                .map(|(specs, _)| specs)
                .unwrap_or_default(),
            true => Vec::new(),
        };
        if !matches!(p.op, OpSel::Class(_)) {
            for a in &p.attrs {
                self.attr_key_misspelled(&specs, &a.key)?;
            }
        }
        for (a, ra) in p.attrs.iter().zip(&mut rp.attrs) {
            if let AttrPatVal::Equals(e) = &a.val {
                let (t, x) = self.expr_no_build(e)?;
                self.attr_test_kind(&specs, &a.key, e, t)?;
                ra.test = compiled::AttrTest::Equals(x);
            }
        }
        for (a, ra) in p.args.iter().zip(&mut rp.args) {
            if let (ValPat::Op(inner), compiled::ValPat::Op(rinner)) = (&a.pat, &mut ra.pat) {
                self.pattern_exprs(inner, rinner)?;
            }
        }
        Ok(())
    }

    /// A test of a key none of `specs` (the ops a named pattern can be) defines, one edit from
    /// a key one of them does (two for a key of 7 characters or more): a misspelled attribute
    /// (`{is_tset: true}` on `pd_op.dropout`), whose test could never hold. A key of one's own
    /// (a pass's marker, such as `grad_merge_add` or `done`) is still free, as long as it does
    /// not look like the op's own.
    fn attr_key_misspelled(&self, specs: &[&OpSpec], k: &Ident) -> Result<(), Diagnostic> {
        let own = |s: &&OpSpec| s.attr(&k.name).is_some();
        let len = k.name.chars().count();
        if specs.is_empty() || specs.iter().any(own) || len < 4 {
            return Ok(());
        }
        let names = specs.iter().flat_map(|s| s.attrs.iter().map(|a| a.name));
        let close = crate::suggest::closest(&k.name, names, if len >= 7 { 2 } else { 1 });
        let Some(hint) = crate::suggest::did_you_mean(&close) else {
            return Ok(());
        };
        Err(self
            .at(
                k.span.0,
                format!(
                    "`{}` has no attribute `{}`, and one it has is spelled alike: this test never holds",
                    specs[0].name, k.name
                ),
            )
            .with_hint(format!(
                "{hint} (a marker key of a pass's own must not look like one of the op's attributes)"
            )))
    }
}
