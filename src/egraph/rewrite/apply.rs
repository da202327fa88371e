//! Building a compiled right-hand side into the e-graph: new ops with their attributes (copied
//! from a matched op, computed, inherited from the root) and result types (inferred from the
//! dialect table's result rule, copied, or given), and the matched root node for `subsume`.

use super::compile::{CBuild, CBuildOp, CPat, CTypes};
use super::search::{Bindings, MatchEnv};
use super::*;

pub(super) fn infer_types(
    eg: &mut IrEGraph,
    rule: ResultRule,
    children: &[Id],
    attrs: &AttrDict,
) -> Option<Box<[TypeId]>> {
    let eg_ref: &IrEGraph = eg;
    let child_ty = |n: u8| {
        let ty = children
            .get(n as usize)
            .and_then(|c| eg_ref[*c].data.ty())?;
        Some(eg_ref.analysis.ctx.ty(ty))
    };
    let t = crate::dialect::result_type(rule, child_ty, attrs.into(), |shape, dtype| {
        attr_tensor(attrs, shape, dtype)
    })?;
    Some(Box::new([eg.analysis.ctx.intern_type(t)]))
}

/// A tensor made from attributes alone: distributed as its `op_dist_attr` says (the attributes
/// of a dist op it was copied from), else dense.
pub(super) fn attr_tensor(attrs: &AttrDict, shape: Vec<i64>, dtype: crate::ir::DType) -> Type {
    match crate::ir::declared_result_dist(attrs.into(), shape.len()) {
        Some(dist) => Type::Dist { shape, dtype, dist },
        None => Type::Tensor { shape, dtype },
    }
}

impl Compiled {
    pub(super) fn build(&self, eg: &mut IrEGraph, b: &CBuild, m: &Bindings) -> Option<Id> {
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

    pub(super) fn build_op(&self, eg: &mut IrEGraph, op: &CBuildOp, m: &Bindings) -> Option<Id> {
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
        // Then what Paddle's builder would set for what is still missing (an op built from
        // `{..%s}` of another kind, or from `{}`); a key the rule removes stays removed.
        for (key, a) in &op.defaults {
            if !dict.contains_key(key) && !op.remove.iter().any(|k| &**k == *key) {
                dict.set(key, a.clone());
            }
        }
        let types = match &op.types {
            CTypes::Infer => infer_types(eg, op.rule, &children, &dict)?,
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
    pub(super) fn matched_root(&self, eg: &IrEGraph, class: Id, m: &Bindings) -> Option<Node> {
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
