//! E-matching a compiled left-hand side: candidate e-classes by `(name, arity)`, attribute tests
//! read from each node's interned dictionary, guards evaluated on the match, and the search
//! budget ([`SearchBudget`]: deadline and match limit) checked as matches are made, so one rule
//! cannot run away inside one iteration.

use super::compile::{COp, CPat, CTest};
use super::*;

#[derive(Clone)]
pub(super) struct State {
    pub(super) vars: Vec<Option<Id>>,
    pub(super) slots: Vec<(Id, AttrId)>,
    pub(super) caps: Vec<Option<Attr>>,
}

/// Counts one class's matching work against the e-graph's [`SearchBudget`].
pub(super) struct Meter<'a> {
    pub(super) budget: &'a SearchBudget,
    /// States made so far (partial and complete).
    pub(super) states: usize,
    pub(super) steps: u32,
}

impl<'a> Meter<'a> {
    pub(super) fn new(budget: &'a SearchBudget) -> Self {
        Meter {
            budget,
            states: 0,
            steps: 0,
        }
    }

    /// Whether matching may go on (one step, making `made` states); records why not.
    pub(super) fn step(&mut self, made: usize) -> bool {
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
pub(super) struct Bindings {
    pub(super) vars: Vec<Id>,
    pub(super) slots: Vec<(Id, AttrId)>,
}

pub(super) struct MatchEnv<'a> {
    pub(super) rule: &'a Compiled,
    pub(super) eg: &'a IrEGraph,
    pub(super) vars: &'a [Id],
    pub(super) slots: &'a [(Id, AttrId)],
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
    pub(super) fn var_id(&self, v: u32) -> EVar {
        EVar::from_u32(v)
    }
    pub(super) fn slot_class_var(&self, s: u32) -> EVar {
        EVar::from_u32(self.nvars + 2 * s)
    }
    pub(super) fn slot_attrs_var(&self, s: u32) -> EVar {
        EVar::from_u32(self.nvars + 2 * s + 1)
    }

    pub(super) fn root_disc(&self) -> Disc {
        match &self.lhs {
            CPat::Op(op) => Disc::Op {
                name: op.name,
                arity: op.children.len() as u32,
            },
            CPat::Proj { index, .. } => Disc::Proj { index: *index },
            CPat::Var(_) => Disc::Leaf, // excluded by `EqRule::check`
        }
    }

    pub(super) fn is_subsumed(eg: &IrEGraph, n: &Node) -> bool {
        !eg.analysis.subsumed.is_empty() && eg.analysis.subsumed.contains(n)
    }

    pub(super) fn match_pat(
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

    pub(super) fn match_op(
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

    pub(super) fn guards_hold(&self, eg: &IrEGraph, st: &State) -> bool {
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

    pub(super) fn to_subst(&self, st: &State) -> Subst {
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

    pub(super) fn decode(&self, eg: &IrEGraph, s: &Subst) -> Bindings {
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
