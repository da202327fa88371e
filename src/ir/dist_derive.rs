//! Deriving distributions from types: the `op_dist_attr` an op's operand and result types imply
//! ([`Context::with_derived_dist_attr`], the one way every op irw creates gets its
//! distribution), and the distribution an op's own `op_dist_attr` declares for a result
//! ([`declared_result_dist`]).
//!
//! Kept apart from `dist.rs`, which is the data as Paddle prints it: types and attributes hold
//! distributions, and this reads types and attributes, so the data itself depends on neither.

use super::attr::{Attr, AttrId};
use super::context::Context;
use super::dist::{DistSlot, OpDistAttr, SlotType, TensorDist, OP_DIST_ATTR};
use super::types::{Type, TypeId};

/// The distribution `attrs`' `op_dist_attr` gives a result of `rank` dimensions: its
/// `result(0)` slot when that fits the rank, else replicated on the op's mesh. An op built from
/// attributes alone (`full`) whose attributes were copied from a dist op keeps that op's place
/// in the mesh; `None` without an `op_dist_attr`.
pub fn declared_result_dist(attrs: super::Attrs<'_>, rank: usize) -> Option<TensorDist> {
    let Some(Attr::OpDist(a)) = attrs.get(OP_DIST_ATTR) else {
        return None;
    };
    if let Some(DistSlot::Tensor(t)) = a.results.first() {
        if !t.is_empty() && t.dims_mapping.len() == rank {
            return Some(t.clone());
        }
    }
    let mesh = TensorDist {
        mesh_shape: a.mesh_shape.clone(),
        process_ids: a.process_ids.clone(),
        ..TensorDist::default()
    };
    (!mesh.mesh_shape.is_empty()).then(|| mesh.replicated(rank))
}

impl Context {
    /// What type `t` says about a slot's distribution.
    pub fn slot_type(&self, t: TypeId) -> SlotType<'_> {
        match self.ty(t) {
            Type::Dist { dist, .. } => SlotType::Dist(dist),
            Type::Null => SlotType::Absent,
            Type::Vec(items) => SlotType::Vec(items.iter().map(|&i| self.slot_type(i)).collect()),
            _ => SlotType::Dense,
        }
    }

    /// The `op_dist_attr` an op with these operand types (`None`: an absent operand) and result
    /// types has; `None` when nothing is distributed.
    fn derive_op_dist_attr(
        &self,
        operands: &[Option<TypeId>],
        results: &[TypeId],
    ) -> Option<OpDistAttr> {
        let ops: Vec<SlotType<'_>> = operands
            .iter()
            .map(|t| t.map_or(SlotType::Absent, |t| self.slot_type(t)))
            .collect();
        let res: Vec<SlotType<'_>> = results.iter().map(|&t| self.slot_type(t)).collect();
        OpDistAttr::from_types(&ops, &res)
    }

    /// `attrs` with `op_dist_attr` set to what the operand and result types imply (removed
    /// when nothing is distributed): every op irw creates or retypes gets its distribution
    /// this one way.
    pub fn with_derived_dist_attr(
        &mut self,
        attrs: AttrId,
        operands: &[Option<TypeId>],
        results: &[TypeId],
    ) -> AttrId {
        if !self.has_dist_types() && !self.attrs(attrs).contains_key(OP_DIST_ATTR) {
            return attrs; // a dense program: nothing to derive, nothing allocated
        }
        let derived = self.derive_op_dist_attr(operands, results);
        let current = self.attrs(attrs).get(OP_DIST_ATTR);
        match (derived, current) {
            (None, None) => attrs,
            (Some(d), Some(Attr::OpDist(c))) if **c == d => attrs,
            (Some(d), _) => self.with_attr(attrs, OP_DIST_ATTR, Attr::OpDist(Box::new(d))),
            (None, Some(_)) => {
                let mut d = self.attrs(attrs).to_dict();
                d.remove(OP_DIST_ATTR);
                self.intern_attrs(d)
            }
        }
    }
}
