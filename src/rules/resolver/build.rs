//! Builds resolved: the op (dialect table, declared, or quoted), its operands by position or
//! name, its attributes against their declared kinds, the defaults Paddle's builder would set,
//! and how its result types are found (given, `like(%o)`, from the declaration, or derived,
//! refused here when nothing can derive them).

use super::*;

/// Where a build is written and what it gives, for [`Resolver::derivable`]: a structural
/// build and an equational right-hand side's op alike.
pub(super) struct BuildSite<'a> {
    /// The op's name as written.
    pub name: &'a Ident,
    pub span: Span,
    /// The first operand written `none`.
    pub first_none: Option<Span>,
    /// Whether the build gives an attribute (written, or copied from a matched op).
    pub written: &'a dyn Fn(&str) -> bool,
}

impl Resolver<'_> {
    pub(super) fn build(&mut self, b: &Build) -> Result<compiled::Build, Diagnostic> {
        let spec = if b.op.quoted {
            if self.faults.ops.contains(&b.op.name.name) {
                return Err(self.unknown_op(&b.op.name, false));
            }
            self.ops.quoted_spec(&b.op.name.name)
        } else {
            match self.ops.spec(&b.op.name.name) {
                Some(s) => Some(s),
                None => {
                    return Err(self.unknown_op(&b.op.name, false).with_hint(format!(
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
            self.want_value(t, &a.value, "an operand")?;
            if !is_none(&a.value) {
                given.push(slot);
            } else if let Some(s) = spec {
                self.none_allowed(s, slot, &a.value)?;
            }
            args.push(compiled::BuildArg { index: slot, value });
        }
        if let Some(s) = spec {
            let named = b.args.iter().any(|a| a.operand.is_some());
            let slots: Vec<usize> = args.iter().map(|a| a.index).collect();
            if let Some(k) = (0..s.operands.len())
                .find(|&k| named && s.operand_required(k) && !slots.contains(&k))
            {
                return Err(self
                    .at(
                        b.span.0,
                        format!(
                            "`{}` requires its operand `{}`, which this build does not give",
                            s.name, s.operands[k]
                        ),
                    )
                    .with_hint(names_hint(
                        format!("operands of {}", s.name),
                        s.operand_names(),
                    )));
            }
            if b.args.iter().all(|a| a.operand.is_none()) {
                self.operand_count(s, b.args.len(), b.span.0)?;
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
                let site = BuildSite {
                    name: &b.op.name,
                    span: b.span,
                    first_none: b
                        .args
                        .iter()
                        .find(|a| is_none(&a.value))
                        .map(|a| a.value.span()),
                    written: &|key| b.attrs.iter().any(|(k, _)| k.name == key),
                };
                self.derivable(&site, spec, &given)?;
                match self.ops.declared(&b.op.name.name) {
                    Some(d) => compiled::ResultTypes::Operands(d.result_like.clone()),
                    None => compiled::ResultTypes::Derived,
                }
            }
        };
        // After the result type: an attribute the type is derived from is named as that.
        if let Some(s) = spec {
            self.no_required_left_out(b.op.name.span.0, s, &|key| {
                attrs.iter().any(|a| a.key == key)
            })?;
        }
        let bind = b.bind.as_ref().map(|bind| {
            self.bind_value(
                &bind.name,
                Binding::Op(spec.into_iter().collect(), spec.is_some()),
            )
        });
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

    /// A build of `spec` gives every attribute that has no value to fall back on: one Paddle's
    /// definition requires, or one whose default irw does not assume. Paddle cannot run the
    /// op without it, the executor refuses it and the JSON writer will not write it, so a rule
    /// that leaves one out is wrong wherever it matches.
    ///
    /// `given` says whether the build gives a key (written, a default, or copied from a matched
    /// op); the error is at `at`, the op's name.
    pub(super) fn no_required_left_out(
        &self,
        at: usize,
        spec: &OpSpec,
        given: &dyn Fn(&str) -> bool,
    ) -> Result<(), Diagnostic> {
        // The dialect's attributes without a value to fall back on, with why; a declared op's
        // are those its declaration gives no default.
        let declared = self.ops.declared(spec.name);
        let missing: Vec<(&str, &str)> = match declared {
            Some(d) => (d.attrs.iter())
                .filter(|a| a.default.is_none() && !given(&a.key))
                .map(|a| (a.key.as_str(), "its declaration gives it no default"))
                .collect(),
            None => (spec.attrs.iter())
                .filter(|a| a.default_value().is_none() && !given(a.name))
                .map(|a| {
                    let why = if a.required() {
                        "Paddle's definition gives it no default"
                    } else {
                        "irw does not assume its default"
                    };
                    (a.name, why)
                })
                .collect(),
        };
        let Some(&(first, why)) = missing.first() else {
            return Ok(());
        };
        let listed: Vec<String> = missing.iter().map(|m| format!("`{}`", m.0)).collect();
        Err(self
            .at(
                at,
                format!(
                    "this build of `{}` leaves out attribute `{first}`, which it must give: {why}",
                    spec.name
                ),
            )
            .with_hint(match declared {
                Some(_) => format!(
                    "`{}` must be built with {}, or declared with a default (`{first}: TYPE = VALUE`)",
                    spec.name,
                    listed.join(", ")
                ),
                None => format!(
                    "`{}` must be built with {}; `irw ops {}` lists its attributes",
                    spec.name,
                    listed.join(", "),
                    spec.name
                ),
            }))
    }

    /// `none` (an absent operand) in operand slot `slot` of a build of `spec`: only where the
    /// op's definition (the dialect's, or the rule file's declaration) makes it optional.
    fn none_allowed(&self, spec: &OpSpec, slot: usize, none: &Expr) -> Result<(), Diagnostic> {
        if !spec.operand_required(slot) {
            return Ok(());
        }
        let name = spec.operands[slot];
        Err(self
            .at(
                none.span().0,
                format!(
                    "operand `{name}` of `{}` is required: `none` is only for an optional operand",
                    spec.name
                ),
            )
            .with_hint(match self.ops.declared(spec.name) {
                Some(_) => format!("declare it optional to leave it absent: `{name}?`"),
                None => format!("`irw ops {}` marks the optional operands", spec.name),
            }))
    }

    /// An attribute value against the type the op's attribute has (declared, or what the
    /// dialect says about the key): `value: "0.5"` on `pd_op.full` is refused.
    pub(super) fn attr_kind(
        &self,
        spec: &OpSpec,
        k: &Ident,
        e: &Expr,
        t: Ty,
    ) -> Result<(), Diagnostic> {
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
                crate::rules::decl::AttrKind::List => "a list is written [1, 2]",
                crate::rules::decl::AttrKind::Place => "a place is written Place(cpu)",
                crate::rules::decl::AttrKind::DType => {
                    "a dtype is written float32 (or f32), or dtype(%x)"
                }
                _ => "write a literal of that type, or compute one: dtype(%x), shape(%x), 1.0 / k",
            }))
    }

    /// An attribute test `{key: e}` of a pattern that may match the ops `specs`: refused when
    /// `e` can equal the attribute on none of them that says what kind the attribute is
    /// (`{transpose_x: 0}` on `pd_op.matmul`, whose `transpose_x` is a bool), since the
    /// pattern could then never match.
    pub(super) fn attr_test_kind(
        &self,
        specs: &[&OpSpec],
        k: &Ident,
        e: &Expr,
        t: Ty,
    ) -> Result<(), Diagnostic> {
        let kinds: Vec<(&OpSpec, crate::rules::decl::AttrKind)> = (specs.iter())
            .map(|s| (*s, self.ops.attr_kind(s, &k.name)))
            .map(|(s, kind)| kind.map(|kind| (s, kind)))
            .collect::<Option<_>>()
            .unwrap_or_default();
        let Some(&(spec, kind)) = kinds.first() else {
            return Ok(());
        };
        if kinds.iter().any(|(_, kind)| kind.ty().can_equal(t)) {
            return Ok(());
        }
        let literal = super::expr::plain_string(e);
        Err(self
            .at(
                e.span().0,
                format!(
                    "`{}` of `{}` is {}, found {}: this test never holds",
                    k.name,
                    spec.name,
                    crate::value::with_article(kind.name()),
                    t.a_name()
                ),
            )
            .with_hint(kind.ty().never_equal_hint(t, literal.as_deref())))
    }

    /// `-> TYPE`: a type (`type(%x)`, `tensor<4xf32>`, `tensor(shape(%x), f32)`), `like(%o)`
    /// (the result types of an op the rule bound), or a list of types and `none`s, one per
    /// result.
    pub(super) fn result_types(
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
    pub(super) fn result_type(&mut self, e: &Expr) -> Result<compiled::Expr, Diagnostic> {
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

    /// A build of `spec` (`None`: an op nobody declared) with `n` positional operands: the
    /// count its definition allows, as for a pattern.
    pub(super) fn operand_count(
        &self,
        spec: &OpSpec,
        n: usize,
        at: usize,
    ) -> Result<(), Diagnostic> {
        if OpSpec::count_fits(spec.operands, n) {
            return Ok(());
        }
        Err(self
            .at(
                at,
                format!(
                    "`{}` takes {} operand(s), {} given",
                    spec.name,
                    spec.operands.len(),
                    n
                ),
            )
            .with_hint(names_hint(
                format!("operands of {}", spec.name),
                spec.operand_names(),
            )))
    }

    /// A build without `-> TYPE` must have a result type the dialect (or the op's declaration)
    /// derives from what the build gives (`given`: the operand slots it fills): refused here,
    /// before anything runs, otherwise.
    pub(super) fn derivable(
        &self,
        b: &BuildSite<'_>,
        spec: Option<&'static OpSpec>,
        given: &[usize],
    ) -> Result<(), Diagnostic> {
        let name = &b.name.name;
        let give = "give the result type after the attributes: `-> type(%x)`, `-> tensor<4xf32>` or `-> like(%o)`";
        let Some(spec) = spec else {
            return Err(self
                .at(
                    b.name.span.0,
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
                                b.name.span.0,
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
        if spec.result_rule == ResultRule::VecOfOperands {
            if let Some(s) = b.first_none {
                return Err(self.at(s.0, crate::dialect::absent_vector_item(name)));
            }
        }
        if spec.result_rule == ResultRule::Explicit {
            return Err(self
                .at(
                    b.name.span.0,
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
            if !(b.written)(key) && !defaults.iter().any(|(k, _)| k == key) {
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
    pub(super) fn no_spread(&self, k: &Ident) -> Result<(), Diagnostic> {
        if k.name == SPREAD_KEY {
            return Err(self.at(k.span.0, "`..%op` (copy an op's attributes) is only allowed on the right-hand side of an equational rule")
                .with_hint("write the attributes out, or copy them one by one with attr(%o, \"key\")"));
        }
        Ok(())
    }
}
