//! Turning an [`EqRule`] into an `egg::Rewrite`: a custom `Searcher` (e-matching with attribute
//! tests and guards) and a custom `Applier` (building the right-hand side with computed
//! attributes and inferred types).
//!
//! Why custom rather than `egg::Pattern`: attributes live inside [`Node::Op`] as an interned
//! [`AttrId`] (see `pattern.rs` for why not as children), so a match must read the node's
//! dictionary; guards need the analysis data; right-hand sides compute attributes.
//!
//! A match is handed from searcher to applier as an `egg::Subst`. Besides the rule's value
//! variables it binds two hidden variables per left-hand-side op: the e-class it matched in,
//! and the matched node's [`AttrId`] (an interned index, stored as an `Id`; only this module
//! reads it back). Captures are re-read from that dictionary, so a match costs no allocation
//! beyond the `Subst`.
//!
//! Search visits candidate e-classes (indexed by `(name, arity)`) in ascending id order, so the
//! order of unions, and with it the output, is deterministic.

use super::analysis::{IrEGraph, SearchBudget, SearchStop};
use super::eval::{attr_equals, eval, Env};
use super::lang::{Disc, Node};
use super::pattern::{
    AttrTest, Build, EqRule, Expr, OpBuild, OpPattern, Pattern, TypesBuild, Value,
};
use crate::diag::Diagnostic;
use crate::dialect::{Dialect, Effect, ResultRule};
use crate::ir::{Attr, AttrDict, AttrId, Attrs, Context, Sym, Type, TypeId};
use egg::{Id, Rewrite, SearchMatches, Subst, Var as EVar};
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

/// Per-rule counters, shared by the searcher and the applier of one rule.
#[derive(Debug, Default)]
pub struct RuleCounters {
    /// Matches found (after guards), summed over iterations.
    pub matches: AtomicUsize,
    /// Applications that changed the e-graph.
    pub applied: AtomicUsize,
    /// Applications refused because both sides had different types.
    pub type_rejections: AtomicUsize,
    /// Applications whose right-hand side could not be built (an attribute expression or a
    /// result type was undefined for this match).
    pub build_failures: AtomicUsize,
}

// ---- compiled form -----------------------------------------------------------------------

#[derive(Debug)]
enum CPat {
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
struct COp {
    name: Sym,
    slot: u32,
    attrs: Vec<(Box<str>, CTest)>,
    children: Vec<CPat>,
}

#[derive(Debug)]
enum CTest {
    Eq(Attr),
    Cap(u32),
    Absent,
}

#[derive(Debug)]
enum CBuild {
    Var(u32),
    Op(CBuildOp),
    Proj { index: u32, op: CBuildOp },
}

#[derive(Debug)]
struct CBuildOp {
    name: Sym,
    rule: ResultRule,
    operands: Vec<CBuild>,
    attrs_from: Option<u32>,
    set: Vec<(Box<str>, Expr)>,
    remove: Vec<Box<str>>,
    types: CTypes,
}

#[derive(Debug)]
enum CTypes {
    Infer,
    SameAs(u32),
    Of(u32),
    Explicit(Box<[TypeId]>),
}

/// A rule resolved against one context: names interned, variables, captures and labels
/// numbered densely (guards and attribute expressions refer to the dense numbers).
#[derive(Debug)]
struct Compiled {
    name: String,
    lhs: CPat,
    guards: Vec<Expr>,
    rhs: CBuild,
    subsume: bool,
    nvars: u32,
    nslots: u32,
    /// Per capture: the slot and key it was first captured from.
    caps: Vec<(u32, Box<str>)>,
    /// Per label: its slot.
    labels: Vec<u32>,
}

#[derive(Default)]
struct Numbering {
    vars: FxHashMap<u32, u32>,
    caps: FxHashMap<u32, u32>,
    cap_src: Vec<(u32, Box<str>)>,
    labels: FxHashMap<u32, u32>,
    label_slots: Vec<u32>,
    nslots: u32,
}

fn err(rule: &EqRule, msg: String) -> Diagnostic {
    let d = Diagnostic::error(format!("equational rule `{}`: {msg}", rule.name));
    match &rule.origin {
        Some(o) => d.with_note(format!("rule defined at {o}")),
        None => d,
    }
}

impl Numbering {
    fn var(&mut self, v: u32) -> u32 {
        let n = self.vars.len() as u32;
        *self.vars.entry(v).or_insert(n)
    }

    fn slot(&mut self) -> u32 {
        self.nslots += 1;
        self.nslots - 1
    }

    fn pattern(&mut self, r: &EqRule, p: &Pattern, ctx: &mut Context) -> Result<CPat, Diagnostic> {
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

    fn op(&mut self, r: &EqRule, op: &OpPattern, ctx: &mut Context) -> Result<COp, Diagnostic> {
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

    fn expr(&self, e: &Expr) -> Expr {
        use super::pattern::{Cap, Label, Var};
        match e {
            Expr::Lit(v) => Expr::Lit(v.clone()),
            Expr::Cap(c) => Expr::Cap(Cap(self.caps[&c.0])),
            Expr::DType(v) => Expr::DType(Var(self.vars[&v.0])),
            Expr::Type(v) => Expr::Type(Var(self.vars[&v.0])),
            Expr::Const(v) => Expr::Const(Var(self.vars[&v.0])),
            Expr::Attr(l, k) => Expr::Attr(Label(self.labels[&l.0]), k.clone()),
            Expr::Neg(a) => Expr::Neg(Box::new(self.expr(a))),
            Expr::Not(a) => Expr::Not(Box::new(self.expr(a))),
            Expr::Bin(op, a, b) => Expr::Bin(*op, Box::new(self.expr(a)), Box::new(self.expr(b))),
        }
    }

    fn build(&self, r: &EqRule, b: &Build, ctx: &mut Context) -> Result<CBuild, Diagnostic> {
        Ok(match b {
            Build::Var(v) => CBuild::Var(self.vars[&v.0]),
            Build::Op(op) => CBuild::Op(self.build_op(r, op, ctx, false)?),
            Build::Proj { index, op } => CBuild::Proj {
                index: *index,
                op: self.build_op(r, op, ctx, true)?,
            },
        })
    }

    fn build_op(
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
                if spec.result_rule == ResultRule::Explicit || tuple {
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
            types,
        })
    }
}

fn compile(rule: &EqRule, ctx: &mut Context) -> Result<Compiled, Diagnostic> {
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

// ---- matching ----------------------------------------------------------------------------

#[derive(Clone)]
struct State {
    vars: Vec<Option<Id>>,
    slots: Vec<(Id, AttrId)>,
    caps: Vec<Option<Attr>>,
}

/// Counts one class's matching work against the e-graph's [`SearchBudget`].
struct Meter<'a> {
    budget: &'a SearchBudget,
    /// States made so far (partial and complete).
    states: usize,
    steps: u32,
}

impl<'a> Meter<'a> {
    fn new(budget: &'a SearchBudget) -> Self {
        Meter {
            budget,
            states: 0,
            steps: 0,
        }
    }

    /// Whether matching may go on (one step, making `made` states); records why not.
    fn step(&mut self, made: usize) -> bool {
        if self.budget.stop.get().is_some() {
            return false;
        }
        self.states = self.states.saturating_add(made);
        if self.states > self.budget.max_matches {
            self.budget.stop.set(Some(SearchStop::Matches));
            return false;
        }
        self.steps = self.steps.wrapping_add(1);
        if self.steps.is_multiple_of(1024)
            && self
                .budget
                .deadline
                .is_some_and(|d| std::time::Instant::now() >= d)
        {
            self.budget.stop.set(Some(SearchStop::Time));
            return false;
        }
        true
    }
}

/// A decoded match: what the guard and the right-hand side may ask about.
struct Bindings {
    vars: Vec<Id>,
    slots: Vec<(Id, AttrId)>,
}

struct MatchEnv<'a> {
    rule: &'a Compiled,
    eg: &'a IrEGraph,
    vars: &'a [Id],
    slots: &'a [(Id, AttrId)],
}

impl Env for MatchEnv<'_> {
    fn ctx(&self) -> &Context {
        &self.eg.analysis.ctx
    }
    fn cap(&self, c: u32) -> Option<Attr> {
        let (slot, key) = self.rule.caps.get(c as usize)?;
        let (_, attrs) = self.slots.get(*slot as usize)?;
        self.ctx().attrs(*attrs).get(key).cloned()
    }
    fn var_type(&self, v: u32) -> Option<TypeId> {
        self.eg[*self.vars.get(v as usize)?].data.ty()
    }
    fn var_const(&self, v: u32) -> Option<f64> {
        self.eg[*self.vars.get(v as usize)?].data.konst
    }
    fn label_attr(&self, l: u32, key: &str) -> Option<Attr> {
        let slot = *self.rule.labels.get(l as usize)?;
        let (_, attrs) = self.slots.get(slot as usize)?;
        self.ctx().attrs(*attrs).get(key).cloned()
    }
}

impl Compiled {
    fn var_id(&self, v: u32) -> EVar {
        EVar::from_u32(v)
    }
    fn slot_class_var(&self, s: u32) -> EVar {
        EVar::from_u32(self.nvars + 2 * s)
    }
    fn slot_attrs_var(&self, s: u32) -> EVar {
        EVar::from_u32(self.nvars + 2 * s + 1)
    }

    fn root_disc(&self) -> Disc {
        match &self.lhs {
            CPat::Op(op) => Disc::Op {
                name: op.name,
                arity: op.children.len() as u32,
            },
            CPat::Proj { index, .. } => Disc::Proj { index: *index },
            CPat::Var(_) => Disc::Leaf, // excluded by `EqRule::check`
        }
    }

    fn is_subsumed(eg: &IrEGraph, n: &Node) -> bool {
        !eg.analysis.subsumed.is_empty() && eg.analysis.subsumed.contains(n)
    }

    fn match_pat(
        &self,
        eg: &IrEGraph,
        p: &CPat,
        class: Id,
        st: State,
        out: &mut Vec<State>,
        meter: &mut Meter,
    ) {
        if !meter.step(1) {
            return;
        }
        match p {
            CPat::Var(v) => {
                let mut st = st;
                match st.vars[*v as usize] {
                    Some(c) if eg.find(c) != class => {}
                    Some(_) => out.push(st),
                    None => {
                        st.vars[*v as usize] = Some(class);
                        out.push(st);
                    }
                }
            }
            CPat::Op(op) => self.match_op(eg, op, class, st, out, meter),
            CPat::Proj { index, slot, op } => {
                for n in &eg[class].nodes {
                    if let Node::Proj { index: i, tuple } = n {
                        if i == index && !Self::is_subsumed(eg, n) {
                            let mut s = st.clone();
                            s.slots[*slot as usize] = (class, Context::EMPTY_ATTRS);
                            self.match_op(eg, op, tuple[0], s, out, meter);
                        }
                    }
                }
            }
        }
    }

    fn match_op(
        &self,
        eg: &IrEGraph,
        op: &COp,
        class: Id,
        st: State,
        out: &mut Vec<State>,
        meter: &mut Meter,
    ) {
        let ctx = &eg.analysis.ctx;
        for n in &eg[class].nodes {
            let Node::Op {
                name,
                attrs,
                children,
                ..
            } = n
            else {
                continue;
            };
            if *name != op.name || children.len() != op.children.len() || Self::is_subsumed(eg, n) {
                continue;
            }
            let mut s = st.clone();
            let dict = ctx.attrs(*attrs);
            let ok = op.attrs.iter().all(|(k, t)| match (t, dict.get(k)) {
                (CTest::Absent, have) => have.is_none(),
                (CTest::Eq(want), Some(have)) => attr_equals(have, want),
                (CTest::Cap(c), Some(have)) => match &s.caps[*c as usize] {
                    Some(prev) => attr_equals(have, prev),
                    None => {
                        s.caps[*c as usize] = Some(have.clone());
                        true
                    }
                },
                (_, None) => false,
            });
            if !ok {
                continue;
            }
            s.slots[op.slot as usize] = (class, *attrs);
            let mut cur = vec![s];
            for (cp, &cid) in op.children.iter().zip(children.iter()) {
                let mut next = Vec::new();
                for s in cur {
                    self.match_pat(eg, cp, cid, s, &mut next, meter);
                }
                if !meter.step(next.len()) {
                    return;
                }
                cur = next;
                if cur.is_empty() {
                    break;
                }
            }
            out.extend(cur);
        }
    }

    fn guards_hold(&self, eg: &IrEGraph, st: &State) -> bool {
        if self.guards.is_empty() {
            return true;
        }
        let vars: Vec<Id> = st
            .vars
            .iter()
            .map(|v| v.unwrap_or(Id::from(0usize)))
            .collect();
        let env = MatchEnv {
            rule: self,
            eg,
            vars: &vars,
            slots: &st.slots,
        };
        self.guards
            .iter()
            .all(|g| matches!(eval(g, &env), Some(Value::Bool(true))))
    }

    fn to_subst(&self, st: &State) -> Subst {
        let mut s = Subst::with_capacity(self.nvars as usize + 2 * self.nslots as usize);
        for (i, v) in st.vars.iter().enumerate() {
            if let Some(v) = v {
                s.insert(self.var_id(i as u32), *v);
            }
        }
        for (i, (c, a)) in st.slots.iter().enumerate() {
            s.insert(self.slot_class_var(i as u32), *c);
            s.insert(self.slot_attrs_var(i as u32), Id::from(a.0 as usize));
        }
        s
    }

    fn decode(&self, eg: &IrEGraph, s: &Subst) -> Bindings {
        let id = |v: EVar| s.get(v).copied().unwrap_or(Id::from(0usize));
        Bindings {
            vars: (0..self.nvars)
                .map(|v| eg.find(id(self.var_id(v))))
                .collect(),
            slots: (0..self.nslots)
                .map(|i| {
                    let c = eg.find(id(self.slot_class_var(i)));
                    let a = AttrId(usize::from(id(self.slot_attrs_var(i))) as u32);
                    (c, a)
                })
                .collect(),
        }
    }
}

// ---- building the right-hand side ---------------------------------------------------------

fn infer_types(
    eg: &mut IrEGraph,
    rule: ResultRule,
    children: &[Id],
    attrs: Attrs<'_>,
) -> Option<Box<[TypeId]>> {
    let child_ty = |eg: &IrEGraph, n: u8| children.get(n as usize).and_then(|c| eg[*c].data.ty());
    let ty = match rule {
        ResultRule::SameAs(n) => child_ty(eg, n)?,
        ResultRule::ReducedOf(n) => {
            let t = crate::dialect::reduced(eg.analysis.ctx.ty(child_ty(eg, n)?));
            eg.analysis.ctx.intern_type(t)
        }
        ResultRule::CastOf(n) => {
            let dtype = crate::ir::DType::from_attr_name(attrs.get("dtype")?.as_word()?)?;
            let t = match eg.analysis.ctx.ty(child_ty(eg, n)?) {
                t @ (Type::Tensor { shape, .. } | Type::Dist { shape, .. }) => {
                    t.with_shape_dtype(shape.clone(), dtype)
                }
                _ => return None,
            };
            eg.analysis.ctx.intern_type(t)
        }
        ResultRule::FromShapeDtypeAttrs => {
            let dtype = crate::ir::DType::from_attr_name(attrs.get("dtype")?.as_word()?)?;
            let shape = attrs
                .get("shape")?
                .as_array()?
                .iter()
                .map(|a| a.as_i64())
                .collect::<Option<Vec<i64>>>()?;
            eg.analysis
                .ctx
                .intern_type(attr_tensor(attrs, shape, dtype))
        }
        ResultRule::IntArray => {
            let n = attrs.get("value")?.as_array()?.len() as i64;
            let t = attr_tensor(attrs, vec![n], crate::ir::DType::I64);
            eg.analysis.ctx.intern_type(t)
        }
        ResultRule::Dim0Times(n, key) | ResultRule::Dim0Over(n, key) => {
            let times = matches!(rule, ResultRule::Dim0Times(..));
            let k = attrs.get(key)?.as_i64()?;
            let t = crate::dialect::dim0_scaled(eg.analysis.ctx.ty(child_ty(eg, n)?), k, times)?;
            eg.analysis.ctx.intern_type(t)
        }
        ResultRule::Explicit => return None,
    };
    Some(Box::new([ty]))
}

/// A tensor made from attributes alone: distributed as its `op_dist_attr` says (the attributes
/// of a dist op it was copied from), else dense.
fn attr_tensor(attrs: Attrs<'_>, shape: Vec<i64>, dtype: crate::ir::DType) -> Type {
    match crate::ir::dist::declared_result_dist(attrs, shape.len()) {
        Some(dist) => Type::Dist { shape, dtype, dist },
        None => Type::Tensor { shape, dtype },
    }
}

impl Compiled {
    fn build(&self, eg: &mut IrEGraph, b: &CBuild, m: &Bindings) -> Option<Id> {
        match b {
            CBuild::Var(v) => Some(m.vars[*v as usize]),
            CBuild::Op(op) => self.build_op(eg, op, m),
            CBuild::Proj { index, op } => {
                let t = self.build_op(eg, op, m)?;
                Some(eg.add(Node::Proj {
                    index: *index,
                    tuple: [t],
                }))
            }
        }
    }

    fn build_op(&self, eg: &mut IrEGraph, op: &CBuildOp, m: &Bindings) -> Option<Id> {
        let children: Vec<Id> = op
            .operands
            .iter()
            .map(|o| self.build(eg, o, m))
            .collect::<Option<_>>()?;
        let mut dict = match op.attrs_from {
            Some(slot) => eg.analysis.ctx.attrs(m.slots[slot as usize].1).to_dict(),
            None => AttrDict::default(),
        };
        {
            let env = MatchEnv {
                rule: self,
                eg,
                vars: &m.vars,
                slots: &m.slots,
            };
            for (k, e) in &op.set {
                dict.set(k, eval(e, &env)?.to_attr()?);
            }
        }
        for k in &op.remove {
            dict.remove(k);
        }
        // An op built without `{..%s}` takes the stage and per-op defaults of the op it
        // replaces (the left-hand side's root, slot 0) for what its block does not give: a
        // rule's `{}` must not make an op Paddle's schedule runs in no stage, and the built op
        // then merges with an identical op the program already has.
        if op.attrs_from.is_none() {
            if let Some((_, root)) = m.slots.first() {
                for &key in crate::dialect::INHERITED_ATTRS {
                    if dict.contains_key(key) || op.remove.iter().any(|k| &**k == key) {
                        continue;
                    }
                    if let Some(v) = eg.analysis.ctx.attrs(*root).get(key) {
                        dict.set(key, v.clone());
                    }
                }
            }
        }
        let types = match &op.types {
            CTypes::Infer => infer_types(eg, op.rule, &children, (&dict).into())?,
            CTypes::SameAs(v) => eg[m.vars[*v as usize]].data.types.clone(),
            CTypes::Of(slot) => eg[m.slots[*slot as usize].0].data.types.clone(),
            CTypes::Explicit(ts) => ts.clone(),
        };
        let attrs = eg.analysis.ctx.intern_attrs(dict);
        Some(eg.add(Node::Op {
            name: op.name,
            attrs,
            types,
            children: children.into(),
            inst: 0,
        }))
    }

    /// The node the left-hand side's root matched, for `subsume`.
    fn matched_root(&self, eg: &IrEGraph, class: Id, m: &Bindings) -> Option<Node> {
        let child_class = |p: &CPat| match p {
            CPat::Var(v) => m.vars[*v as usize],
            CPat::Op(op) => m.slots[op.slot as usize].0,
            CPat::Proj { slot, .. } => m.slots[*slot as usize].0,
        };
        match &self.lhs {
            CPat::Var(_) => None,
            CPat::Proj { index, op, .. } => Some(Node::Proj {
                index: *index,
                tuple: [eg.find(m.slots[op.slot as usize].0)],
            }),
            CPat::Op(op) => {
                let want: Vec<Id> = op
                    .children
                    .iter()
                    .map(|c| eg.find(child_class(c)))
                    .collect();
                let attrs = m.slots[op.slot as usize].1;
                eg[class]
                    .nodes
                    .iter()
                    .find(|n| match n {
                        Node::Op {
                            name,
                            attrs: a,
                            children,
                            ..
                        } => *name == op.name && *a == attrs && children[..] == want[..],
                        _ => false,
                    })
                    .cloned()
            }
        }
    }
}

// ---- egg glue ----------------------------------------------------------------------------

struct Searcher {
    rule: Arc<Compiled>,
    counters: Arc<RuleCounters>,
}

struct Applier {
    rule: Arc<Compiled>,
    counters: Arc<RuleCounters>,
}

impl egg::Searcher<Node, super::analysis::IrAnalysis> for Searcher {
    fn search_eclass_with_limit(
        &self,
        eg: &IrEGraph,
        eclass: Id,
        limit: usize,
    ) -> Option<SearchMatches<'_, Node>> {
        let r = &self.rule;
        let init = State {
            vars: vec![None; r.nvars as usize],
            slots: vec![(Id::from(0usize), Context::EMPTY_ATTRS); r.nslots as usize],
            caps: vec![None; r.caps.len()],
        };
        let mut states = Vec::new();
        let mut meter = Meter::new(&eg.analysis.search);
        r.match_pat(eg, &r.lhs, eg.find(eclass), init, &mut states, &mut meter);
        if eg.analysis.search.stop.get().is_some() {
            return None;
        }
        let mut substs = Vec::new();
        for s in &states {
            if r.guards_hold(eg, s) {
                if substs.len() == limit {
                    // One more than the caller's limit: it knows the limit was passed.
                    eg.analysis.search.stop.set(Some(SearchStop::Matches));
                    break;
                }
                substs.push(r.to_subst(s));
            }
        }
        if substs.is_empty() {
            return None;
        }
        self.counters.matches.fetch_add(substs.len(), Relaxed);
        Some(SearchMatches {
            eclass,
            substs,
            ast: None,
        })
    }

    /// Every match, class by class in class order, until `limit` matches: past it the search
    /// stops and records [`SearchStop::Matches`] in the e-graph's [`SearchBudget`] (as it
    /// records a passed deadline), so the caller stops the saturation rather than apply a
    /// truncated, arbitrary subset.
    fn search_with_limit(&self, eg: &IrEGraph, mut limit: usize) -> Vec<SearchMatches<'_, Node>> {
        let mut classes: Vec<Id> = match eg.classes_for_op(&self.rule.root_disc()) {
            Some(it) => it.collect(),
            None => return Vec::new(),
        };
        classes.sort_unstable();
        let mut out = Vec::new();
        for c in classes {
            if eg.analysis.search.stop.get().is_some() {
                break;
            }
            if let Some(m) = self.search_eclass_with_limit(eg, c, limit) {
                limit -= m.substs.len();
                out.push(m);
            }
        }
        out
    }

    fn vars(&self) -> Vec<EVar> {
        Vec::new()
    }
}

impl egg::Applier<Node, super::analysis::IrAnalysis> for Applier {
    fn apply_one(
        &self,
        eg: &mut IrEGraph,
        eclass: Id,
        subst: &Subst,
        _ast: Option<&egg::PatternAst<Node>>,
        _rule_name: egg::Symbol,
    ) -> Vec<Id> {
        let r = &self.rule;
        let m = r.decode(eg, subst);
        let eclass = eg.find(eclass);
        let Some(new) = r.build(eg, &r.rhs, &m) else {
            self.counters.build_failures.fetch_add(1, Relaxed);
            return Vec::new();
        };
        if eg[new].data.types != eg[eclass].data.types {
            self.counters.type_rejections.fetch_add(1, Relaxed);
            return Vec::new();
        }
        if r.subsume {
            if let Some(n) = r.matched_root(eg, eclass, &m) {
                eg.analysis.subsumed.insert(n);
            }
        }
        if eg.union(eclass, new) {
            self.counters.applied.fetch_add(1, Relaxed);
            vec![eclass]
        } else {
            Vec::new()
        }
    }
}

/// An [`EqRule`] ready to run on one module's e-graph.
pub struct PreparedRule {
    pub name: String,
    pub origin: Option<String>,
    pub rewrite: Rewrite<Node, super::analysis::IrAnalysis>,
    pub counters: Arc<RuleCounters>,
}

/// Resolves `rule` against `ctx` (interning its names and types).
pub fn prepare(rule: &EqRule, ctx: &mut Context) -> Result<PreparedRule, Diagnostic> {
    let compiled = Arc::new(compile(rule, ctx)?);
    let counters = Arc::new(RuleCounters::default());
    let rewrite = Rewrite::new(
        compiled.name.clone(),
        Searcher {
            rule: compiled.clone(),
            counters: counters.clone(),
        },
        Applier {
            rule: compiled,
            counters: counters.clone(),
        },
    )
    .map_err(|e| err(rule, e))?;
    Ok(PreparedRule {
        name: rule.name.clone(),
        origin: rule.origin.clone(),
        rewrite,
        counters,
    })
}
