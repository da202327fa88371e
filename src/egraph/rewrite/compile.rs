//! Compiling an [`EqRule`] against one module's context: op names and types interned, value
//! variables numbered densely, one slot per left-hand-side op (its matched e-class and
//! attribute dictionary), labels and captures mapped to slots. Done once per saturation, so the
//! search and the applier work with integers only.

use super::*;

#[derive(Debug)]
pub(super) enum CPat {
    Var(u32),
    Op(COp),
    /// `slot` records the projection's own e-class.
    Proj {
        index: u32,
        slot: u32,
        op: COp,
    },
}

#[derive(Debug)]
pub(super) struct COp {
    pub(super) name: Sym,
    pub(super) slot: u32,
    pub(super) attrs: Vec<(Box<str>, CTest)>,
    pub(super) children: Vec<CPat>,
}

#[derive(Debug)]
pub(super) enum CTest {
    Eq(Attr),
    Cap(u32),
    Absent,
}

#[derive(Debug)]
pub(super) enum CBuild {
    Var(u32),
    Op(CBuildOp),
    Proj { index: u32, op: CBuildOp },
}

#[derive(Debug)]
pub(super) struct CBuildOp {
    pub(super) name: Sym,
    pub(super) rule: ResultRule,
    pub(super) operands: Vec<CBuild>,
    pub(super) attrs_from: Option<u32>,
    pub(super) set: Vec<(Box<str>, Expr)>,
    pub(super) remove: Vec<Box<str>>,
    /// The dialect's default attributes of the op (`dialect::default_attrs`), for the keys
    /// nothing else gives.
    pub(super) defaults: Vec<(&'static str, Attr)>,
    pub(super) types: CTypes,
}

#[derive(Debug)]
pub(super) enum CTypes {
    Infer,
    SameAs(u32),
    Of(u32),
    Explicit(Box<[TypeId]>),
}

/// A rule resolved against one context: names interned, variables, captures and labels
/// numbered densely (guards and attribute expressions refer to the dense numbers).
#[derive(Debug)]
pub(super) struct Compiled {
    pub(super) name: String,
    pub(super) lhs: CPat,
    pub(super) guards: Vec<Expr>,
    pub(super) rhs: CBuild,
    pub(super) subsume: bool,
    pub(super) nvars: u32,
    pub(super) nslots: u32,
    /// Per capture: the slot and key it was first captured from.
    pub(super) caps: Vec<(u32, Box<str>)>,
    /// Per label: its slot.
    pub(super) labels: Vec<u32>,
}

#[derive(Default)]
pub(super) struct Numbering {
    pub(super) vars: FxHashMap<u32, u32>,
    pub(super) caps: FxHashMap<u32, u32>,
    pub(super) cap_src: Vec<(u32, Box<str>)>,
    pub(super) labels: FxHashMap<u32, u32>,
    pub(super) label_slots: Vec<u32>,
    pub(super) nslots: u32,
}

pub(super) fn err(rule: &EqRule, msg: String) -> Diagnostic {
    let d = Diagnostic::error(format!("equational rule `{}`: {msg}", rule.name));
    match &rule.origin {
        Some(o) => d.with_note(format!("rule defined at {o}")),
        None => d,
    }
}

impl Numbering {
    pub(super) fn var(&mut self, v: u32) -> u32 {
        let n = self.vars.len() as u32;
        *self.vars.entry(v).or_insert(n)
    }

    pub(super) fn slot(&mut self) -> u32 {
        self.nslots += 1;
        self.nslots - 1
    }

    pub(super) fn pattern(
        &mut self,
        r: &EqRule,
        p: &Pattern,
        ctx: &mut Context,
    ) -> Result<CPat, Diagnostic> {
        Ok(match p {
            Pattern::Var(v) => CPat::Var(self.var(v.0)),
            Pattern::Op(op) => CPat::Op(self.op(r, op, ctx)?),
            Pattern::Proj { index, op } => {
                let slot = self.slot();
                CPat::Proj {
                    index: *index,
                    slot,
                    op: self.op(r, op, ctx)?,
                }
            }
        })
    }

    pub(super) fn op(
        &mut self,
        r: &EqRule,
        op: &OpPattern,
        ctx: &mut Context,
    ) -> Result<COp, Diagnostic> {
        if Dialect::get().effect(&op.name) != Effect::Pure {
            return Err(err(
                r,
                format!(
                    "`{}` is not a pure op in the dialect table; only pure ops live in the e-graph",
                    op.name
                ),
            ));
        }
        let slot = self.slot();
        if let Some(l) = op.label {
            let n = self.label_slots.len() as u32;
            self.labels.insert(l.0, n);
            self.label_slots.push(slot);
        }
        let mut attrs = Vec::new();
        for (k, t) in &op.attrs {
            let t = match t {
                AttrTest::Eq(a) => CTest::Eq(a.clone()),
                AttrTest::Absent => CTest::Absent,
                AttrTest::Capture(c) => {
                    let n = self.caps.len() as u32;
                    let n = *self.caps.entry(c.0).or_insert(n);
                    if n as usize == self.cap_src.len() {
                        self.cap_src.push((slot, k.as_str().into()));
                    }
                    CTest::Cap(n)
                }
            };
            attrs.push((k.as_str().into(), t));
        }
        let children = op
            .operands
            .iter()
            .map(|o| self.pattern(r, o, ctx))
            .collect::<Result<_, _>>()?;
        Ok(COp {
            name: ctx.sym(&op.name),
            slot,
            attrs,
            children,
        })
    }

    /// `e` with its variables, captures and labels renumbered to this rule's slots.
    pub(super) fn expr(&self, e: &Expr) -> Expr {
        use crate::egraph::pattern::{Cap, Label, Read, Var};
        let mut e = e.clone();
        e.visit_mut(&mut |x| {
            if let Expr::Var(r) = x {
                *r = match r {
                    Read::Cap(c) => Read::Cap(Cap(self.caps[&c.0])),
                    Read::DType(v) => Read::DType(Var(self.vars[&v.0])),
                    Read::Type(v) => Read::Type(Var(self.vars[&v.0])),
                    Read::Const(v) => Read::Const(Var(self.vars[&v.0])),
                    Read::Attr(l, k) => Read::Attr(Label(self.labels[&l.0]), std::mem::take(k)),
                }
            }
        });
        e
    }

    pub(super) fn build(
        &self,
        r: &EqRule,
        b: &Build,
        ctx: &mut Context,
    ) -> Result<CBuild, Diagnostic> {
        Ok(match b {
            Build::Var(v) => CBuild::Var(self.vars[&v.0]),
            Build::Op(op) => CBuild::Op(self.build_op(r, op, ctx, false)?),
            Build::Proj { index, op } => CBuild::Proj {
                index: *index,
                op: self.build_op(r, op, ctx, true)?,
            },
        })
    }

    pub(super) fn build_op(
        &self,
        r: &EqRule,
        op: &OpBuild,
        ctx: &mut Context,
        tuple: bool,
    ) -> Result<CBuildOp, Diagnostic> {
        let spec = Dialect::get()
            .spec(&op.name)
            .filter(|s| s.effect == Effect::Pure);
        let Some(spec) = spec else {
            return Err(err(
                r,
                format!(
                    "the right-hand side builds `{}`, which is not a pure op in the dialect table",
                    op.name
                ),
            ));
        };
        let types = match &op.types {
            TypesBuild::Infer => {
                // A `vec[...]` names interned item types: the e-graph does not derive one.
                if matches!(
                    spec.result_rule,
                    ResultRule::Explicit | ResultRule::VecOfOperands
                ) || tuple
                {
                    return Err(err(
                        r,
                        format!(
                            "the result types of `{}` cannot be inferred; copy them from a \
                             labelled op or a variable, or give them",
                            op.name
                        ),
                    ));
                }
                CTypes::Infer
            }
            TypesBuild::SameAs(v) => CTypes::SameAs(self.vars[&v.0]),
            TypesBuild::Of(l) => CTypes::Of(self.label_slots[self.labels[&l.0] as usize]),
            TypesBuild::Explicit(ts) => {
                CTypes::Explicit(ts.iter().map(|t| ctx.intern_type(t.clone())).collect())
            }
        };
        let operands = op
            .operands
            .iter()
            .map(|o| self.build(r, o, ctx))
            .collect::<Result<_, _>>()?;
        Ok(CBuildOp {
            name: ctx.sym(&op.name),
            rule: spec.result_rule,
            operands,
            attrs_from: op
                .attrs_from
                .map(|l| self.label_slots[self.labels[&l.0] as usize]),
            set: op
                .set
                .iter()
                .map(|(k, e)| (k.as_str().into(), self.expr(e)))
                .collect(),
            remove: op.remove.iter().map(|k| k.as_str().into()).collect(),
            defaults: crate::dialect::default_attrs(&op.name)
                .into_iter()
                .map(|(k, a)| (k, a.clone()))
                .collect(),
            types,
        })
    }
}

pub(super) fn compile(rule: &EqRule, ctx: &mut Context) -> Result<Compiled, Diagnostic> {
    rule.check().map_err(|m| {
        let d = Diagnostic::error(m);
        match &rule.origin {
            Some(o) => d.with_note(format!("rule defined at {o}")),
            None => d,
        }
    })?;
    let mut n = Numbering::default();
    let lhs = n.pattern(rule, &rule.lhs, ctx)?;
    let guards = rule.guards.iter().map(|g| n.expr(g)).collect();
    let rhs = n.build(rule, &rule.rhs, ctx)?;
    Ok(Compiled {
        name: rule.name.clone(),
        lhs,
        guards,
        rhs,
        subsume: rule.subsume,
        nvars: n.vars.len() as u32,
        nslots: n.nslots,
        caps: n.cap_src,
        labels: n.label_slots,
    })
}
