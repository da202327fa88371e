//! Result types after a rule changed an operand (`in %o: x := ..`, `append`). An op's result
//! types were computed from its operands; when one changes type, the results derived from it
//! take their new types, as a freshly built op's would, and so do their readers' in turn, so
//! the program never holds an op whose types disagree. What irw cannot keep consistent is
//! refused at the rule's action: an operand of another type where irw cannot derive the op's
//! result types from it (an op whose result type a rule must give, an unknown op), or one
//! that would change an in-place op's buffer.

use super::builds::vector_type;
use super::*;
use crate::dialect::{OpSpec, Shape};

/// Why an op's result types cannot follow a new operand.
enum Refusal {
    /// The dialect does not derive them from that operand (a type a rule must give, an
    /// unknown op).
    Underivable,
    /// What the derivation refused (shapes that do not broadcast, an in-place buffer's type).
    Other(String),
}

/// Whether `rule` derives result 0's type from operand `i`.
fn reads(rule: ResultRule, i: usize) -> bool {
    match rule {
        ResultRule::SameAs(j)
        | ResultRule::ReducedOf(j)
        | ResultRule::CompareOf(j)
        | ResultRule::CastOf(j)
        | ResultRule::Dim0Times(j, _)
        | ResultRule::Dim0Over(j, _) => j as usize == i,
        ResultRule::Broadcast(a, b) => a as usize == i || b as usize == i,
        ResultRule::VecOfOperands => true,
        ResultRule::FromShapeDtypeAttrs | ResultRule::IntArray | ResultRule::Explicit => false,
    }
}

/// Whether `spec`'s result types are known not to depend on operand `i`'s type: its result rule
/// reads other operands only, or (an optimizer's `outs`) its results are other operands.
fn independent_of(spec: &OpSpec, i: usize) -> bool {
    match (spec.result_rule, spec.shape) {
        (_, Shape::AddN) => false,
        (ResultRule::Explicit, Shape::Outs(g)) => !g.contains(&(i as u8)),
        (ResultRule::Explicit, _) => false,
        (rule, _) => !reads(rule, i),
    }
}

impl Engine<'_> {
    /// After operand `i` of `o` changed from a value of type `old` (`None`: absent, or a new
    /// operand): the results whose types the dialect derives from that operand take their new
    /// types ([`Engine::retyped_results`]), and so on through their readers, as if each had
    /// been built anew: the program's types stay consistent, or the action is refused. Returns
    /// the ops whose results were re-typed (their readers' guards may now decide otherwise).
    pub(super) fn follow_operand_type(
        &mut self,
        o: OpId,
        i: usize,
        old: Option<TypeId>,
    ) -> Result<Vec<OpId>, String> {
        let mut retyped_ops = Vec::new();
        let mut work = vec![(o, i, old)];
        while let Some((op, i, old)) = work.pop() {
            let retyped = self.retyped_results(op, i, old).map_err(|why| {
                let name = self.m.ctx.str(self.m.main.op_name(op));
                let p = &self.m.main;
                let new = p.operand(op, i).map_or(Context::NULL_TYPE, |v| p.value_type(v));
                let (new, was) = (self.m.ctx.type_text(new), old.map(|t| self.m.ctx.type_text(t)));
                match (why, op == o) {
                    (Refusal::Underivable, true) => format!(
                        "the new operand is a `{new}` (the old one was {}), and irw cannot derive `{name}`'s result types from it: they would keep the types computed from the old operand",
                        was.map_or("absent".to_string(), |w| format!("a `{w}`"))
                    ),
                    (Refusal::Underivable, false) => format!(
                        "the new operand re-types a value `{name}` reads (from `{}` to `{new}`), and irw cannot derive `{name}`'s result types from it: they would keep the types computed from the old value",
                        was.unwrap_or_default()
                    ),
                    (Refusal::Other(msg), true) => msg,
                    (Refusal::Other(msg), false) => {
                        format!("the new operand re-types a value `{name}` reads: {msg}")
                    }
                }
            })?;
            for (r, ty) in retyped {
                let res = self.m.main.result(op, r);
                let was = self.m.main.value_type(res);
                if was == ty {
                    continue;
                }
                self.m.main.set_value_type(res, ty);
                retyped_ops.push(op);
                work.extend(
                    self.m
                        .main
                        .uses(res)
                        .map(|u| (u.op, u.index as usize, Some(was))),
                );
            }
        }
        Ok(retyped_ops)
    }

    /// The results of `o` whose types follow operand `i`, which changed from a value of type
    /// `old`, with their types now. Result 0 by the op's result rule (`SameAs`: collectives,
    /// elementwise ops; `ReducedOf`: without the pending reduction; `Dim0*`:
    /// `all_gather`/`reduce_scatter`, an error when it cannot be derived; a
    /// `builtin.combine`'s vector), and every result that is the operand's buffer written in
    /// place ([`OpSpec::buffer_results`]: `sgd_`'s `param_out` takes `param`'s new type). An
    /// in-place result keeps its buffer's type, so a new second operand that would broadcast
    /// it to another shape is an error, and so is an operand of another type where the op's
    /// result types cannot be derived from it (a `matmul`'s, an unknown op's).
    fn retyped_results(
        &mut self,
        o: OpId,
        i: usize,
        old: Option<TypeId>,
    ) -> Result<Vec<(usize, TypeId)>, Refusal> {
        let p = &self.m.main;
        let Some(new) = p.operand(o, i) else {
            return Ok(Vec::new());
        };
        let new_ty = p.value_type(new);
        if old == Some(new_ty) || p.num_results(o) == 0 {
            return Ok(Vec::new());
        }
        let name = self.m.ctx.str(p.op_name(o)).to_string();
        let Some(spec) = self.rules.ops.spec(&name) else {
            return Err(Refusal::Underivable);
        };
        let mut retyped: Vec<(usize, TypeId)> = Vec::new();
        if spec.result_rule == ResultRule::VecOfOperands {
            let ty = vector_type(p, p.operands(o), spec.name).map_err(Refusal::Other)?;
            retyped.push((0, self.m.ctx.intern_type(ty)));
        } else if spec.shape == Shape::AddN {
            // The sum of a vector's items has the first item's type.
            match self.m.ctx.ty(new_ty) {
                Type::Vec(items) if !items.is_empty() => retyped.push((0, items[0])),
                _ => return Err(Refusal::Underivable),
            }
        } else if reads(spec.result_rule, i) {
            retyped.push((0, self.derived_result(o, spec).map_err(Refusal::Other)?));
        }
        for (r, a) in spec.buffer_results() {
            if a == i && r < self.m.main.num_results(o) && !retyped.iter().any(|&(k, _)| k == r) {
                retyped.push((r, new_ty));
            }
        }
        if retyped.is_empty() && !independent_of(spec, i) {
            return Err(Refusal::Underivable);
        }
        // An in-place result keeps its buffer's type.
        if let Some(a) = spec.aliased_operand(0) {
            let buf = self.m.main.operand(o, a).map(|x| self.m.main.value_type(x));
            if let (Some(buf), Some(&(_, ty))) = (buf, retyped.iter().find(|&&(r, _)| r == 0)) {
                if buf != ty {
                    return Err(Refusal::Other(format!(
                        "`{}` writes its operand in place: the new operand would change its type to `{}`",
                        spec.name,
                        self.m.ctx.type_text(ty)
                    )));
                }
            }
        }
        Ok(retyped)
    }

    /// Result 0's type as `spec`'s result rule derives it from `o`'s operands now.
    fn derived_result(&mut self, o: OpId, spec: &OpSpec) -> Result<TypeId, String> {
        let p = &self.m.main;
        let operand_ty = |k: u8| {
            p.operand(o, k as usize)
                .map(|x| self.m.ctx.ty(p.value_type(x)))
        };
        let derived = crate::dialect::result_type(
            spec.result_rule,
            operand_ty,
            self.m.ctx.attrs(self.m.main.op_attrs(o)),
            // Not called: the rules that read an operand make no tensor from attributes alone.
            |shape, dtype| Type::Tensor { shape, dtype },
        );
        match derived {
            Some(t) => Ok(self.m.ctx.intern_type(t)),
            None => Err(match spec.result_rule {
                ResultRule::Broadcast(..) => format!(
                    "cannot derive the result type of `{}` from its new operands: their shapes do not broadcast",
                    spec.name
                ),
                ResultRule::Dim0Times(_, key) | ResultRule::Dim0Over(_, key) => format!(
                    "cannot derive the result type of `{}` from its new operand and `{key}`",
                    spec.name
                ),
                _ => format!(
                    "cannot derive the result type of `{}` from its new operand",
                    spec.name
                ),
            }),
        }
    }
}
