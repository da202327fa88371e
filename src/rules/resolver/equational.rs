//! Equational rules checked: the left-hand side's names, the guard, the right-hand side's
//! variables and attributes; then the rule is translated to the e-graph's rules
//! ([`crate::rules::lower::equational`]), which is how what only the e-graph can refuse is
//! reported at the rule, and the translation is kept.

use super::*;

impl Resolver<'_> {
    pub(super) fn equational(&mut self, r: &EqRule) -> Result<(), Diagnostic> {
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
        let rules = crate::rules::lower::check(r, self.params)
            .map_err(|(offset, msg)| self.at(offset, msg))?;
        self.translated.insert(r.span.0, rules);
        Ok(())
    }

    pub(super) fn eq_lhs(&mut self, p: &OpPattern) -> Result<(), Diagnostic> {
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

    pub(super) fn eq_rhs(&mut self, t: &Term) -> Result<(), Diagnostic> {
        match t {
            Term::Var(v) => {
                if !self.values.contains_key(&v.name) {
                    return Err(names::not_bound_by_lhs(v).at(self.src));
                }
            }
            Term::Op {
                op,
                attrs,
                children,
                ..
            } => {
                if !op.quoted && self.dialect.spec(&op.name.name).is_none() {
                    return Err(names::unknown_op_in_pattern(&op.name).at(self.src));
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
