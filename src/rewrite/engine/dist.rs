//! Distributions of ops a rule builds in an auto-parallel (Engine) program: an op built from
//! distributed operands lives on their mesh, a constant combined with them is replicated on it,
//! and a state's initializer is the state (see [`Engine::dist_ctx`]). Kept apart so that dense
//! programs never pay for it and the dist rules are read in one place.

use super::*;

/// See [`Engine::dist_ctx`].
pub(super) struct DistContext {
    pub(super) dist: TensorDist,
    pub(super) exact: bool,
}

impl<'a> Engine<'a> {
    /// The distribution of the first distributed value among `vals` in program `which`.
    pub(super) fn dist_of_values(
        &self,
        which: Which,
        vals: impl Iterator<Item = ValueId>,
    ) -> Option<TensorDist> {
        if !self.m.ctx.has_dist_types() {
            // A dense program: no value has a distribution.
            return None;
        }
        let prog = self.program(which);
        vals.filter_map(|v| self.m.ctx.ty(prog.value_type(v)).dist())
            .find(|d| !d.is_empty())
            .cloned()
    }

    pub(super) fn program(&self, which: Which) -> &Program {
        match which {
            Which::Main => &self.m.main,
            Which::Startup => self.m.startup.as_ref().unwrap_or(&self.m.main),
        }
    }

    /// The distribution a tensor built from attributes alone takes: the enclosing build's, else
    /// the matched op's mesh (dense programs: none).
    /// A tensor of `rank` dimensions built from attributes alone: the state's distribution for
    /// its initializer, else replicated on the enclosing build's mesh, else on the matched op's
    /// (dense programs: none).
    pub(super) fn dist_context(&self, rank: usize) -> Option<TensorDist> {
        if let Some(c) = self.dist_ctx.last() {
            return Some(if c.exact && c.dist.dims_mapping.len() == rank {
                c.dist.clone()
            } else {
                c.dist.replicated(rank)
            });
        }
        let op = self.matched?;
        let p = &self.m.main;
        self.dist_of_values(Which::Main, p.operands(op).flatten().chain(p.results(op)))
            .map(|d| d.replicated(rank))
    }

    /// `attrs` with the `op_dist_attr` the operand and result types imply.
    pub(super) fn dist_attrs(
        &mut self,
        which: Which,
        attrs: AttrId,
        operands: &[Option<ValueId>],
        types: &[TypeId],
    ) -> AttrId {
        let prog = self.program(which);
        let otys: Vec<Option<TypeId>> = operands
            .iter()
            .map(|v| v.map(|v| prog.value_type(v)))
            .collect();
        self.m.ctx.with_derived_dist_attr(attrs, &otys, types)
    }

    /// After operand `i` of `o` changed: an `op_dist_attr` that `o` carries describes the new
    /// operand (and a result whose type followed it), so the attribute stays true to the
    /// types; the other slots are kept as they were.
    pub(super) fn refresh_dist_slots(&mut self, o: OpId, i: usize) {
        let p = &self.m.main;
        let attrs = p.op_attrs(o);
        let Some(Attr::OpDist(cur)) = self.m.ctx.attrs(attrs).get(OP_DIST_ATTR) else {
            return;
        };
        let mut new = (**cur).clone();
        let slot_of = |v: Option<ValueId>| {
            v.map_or(SlotType::Absent, |v| self.m.ctx.slot_type(p.value_type(v)))
                .slot()
        };
        if let (Some(s), Some(slot)) = (slot_of(p.operand(o, i)), new.operands.get_mut(i)) {
            *slot = s;
        }
        if let (Some(s), Some(slot)) = (slot_of(p.results(o).next()), new.results.get_mut(0)) {
            *slot = s;
        }
        if new != **cur {
            let id = self
                .m
                .ctx
                .with_attr(attrs, OP_DIST_ATTR, Attr::OpDist(Box::new(new)));
            self.m.main.set_op_attrs(o, id);
        }
    }
}
