//! The distribution check: an op's `op_dist_attr` must agree with its operand and result types.
//!
//! Paddle's `OperationDistAttribute` holds one slot per operand and per result; a slot of a
//! `pd_dist.tensor` value must be that type's distribution, and every slot's mesh must be the
//! op's. Paddle's own gradient-merge pass breaks this (it copies the gradient's defining op's
//! attribute onto the new `add_`: a 2-D `dims_mappings` on a 1-D buffer, operands `add_` does
//! not have), so a program read from Paddle may already disagree. irw keeps such input as
//! written and reports it ([`dist_mismatches`]); what a rewrite makes must agree, so
//! [`new_dist_mismatches`] fails a rewrite that leaves a disagreement the input did not have.
//!
//! A program without any `pd_dist` type is not walked (its ops' slots have nothing to agree
//! with). Values that are not `pd_dist.tensor` (absent values, dense tensors, vectors) are not
//! compared: Paddle gives absent results a full slot on some ops and `<#AttrNull>` on others.
//! An op may have fewer operand slots than operands (Paddle's `slice` has none for the starts
//! and ends it reads as tensors), never more.

use super::dist::{DistSlot, OP_DIST_ATTR};
use super::program::{OpId, Program};
use super::verify::VerifyError;
use super::{Attr, Context, Module, Type, Which};
use rustc_hash::FxHashSet;

/// Every op of `m` whose `op_dist_attr` disagrees with its types, in program order.
pub fn dist_mismatches(m: &Module) -> Vec<VerifyError> {
    let mut out = Vec::new();
    if !m.ctx.has_dist_types() {
        return out;
    }
    for which in [Which::Main, Which::Startup] {
        if let Some(p) = m.program(which) {
            program_mismatches(&m.ctx, p, which, &mut out);
        }
    }
    out
}

/// The mismatches of `after` that `before` (the same module before a rewrite) did not have:
/// ops are compared by identity, which a rewrite keeps for the ops it does not erase.
pub fn new_dist_mismatches(before: &FxHashSet<(Which, OpId)>, after: &Module) -> Vec<VerifyError> {
    dist_mismatches(after)
        .into_iter()
        .filter(|e| e.op.is_none_or(|op| !before.contains(&(e.which, op))))
        .collect()
}

/// The ops of `mismatches` (from [`dist_mismatches`]), to compare with after a rewrite.
pub fn mismatched_ops(mismatches: &[VerifyError]) -> FxHashSet<(Which, OpId)> {
    mismatches
        .iter()
        .filter_map(|e| Some((e.which, e.op?)))
        .collect()
}

fn program_mismatches(ctx: &Context, p: &Program, which: Which, out: &mut Vec<VerifyError>) {
    let mut stack = vec![p.top_block()];
    while let Some(b) = stack.pop() {
        for op in p.block_ops(b) {
            for &r in p.regions(op) {
                stack.extend(p.region_blocks(r).iter().copied());
            }
            if let Some(msg) = op_mismatch(ctx, p, op) {
                let name = ctx.str(p.op_name(op));
                out.push(VerifyError {
                    which,
                    op: Some(op),
                    message: format!("`{name}`: op_dist_attr {msg}"),
                });
            }
        }
    }
}

/// What is wrong with `op`'s `op_dist_attr`, if anything.
fn op_mismatch(ctx: &Context, p: &Program, op: OpId) -> Option<String> {
    let Some(Attr::OpDist(a)) = ctx.attrs(p.op_attrs(op)).get(OP_DIST_ATTR) else {
        return None;
    };
    // Fewer operand slots than operands is Paddle's own form for ops whose trailing operands
    // are attributes given as tensors (`slice`'s starts and ends have none); more is wrong.
    if a.operands.len() > p.num_operands(op) {
        return Some(format!(
            "has {} operand slots but the op has {} operands",
            a.operands.len(),
            p.num_operands(op)
        ));
    }
    if a.results.len() != p.num_results(op) {
        return Some(format!(
            "has {} result slots but the op has {} results",
            a.results.len(),
            p.num_results(op)
        ));
    }
    let values = p
        .operands(op)
        .enumerate()
        .map(|(i, v)| ("operand", i, v))
        .chain(
            p.results(op)
                .enumerate()
                .map(|(i, v)| ("result", i, Some(v))),
        );
    let n = a.operands.len();
    let values = values.filter(|(kind, i, _)| *kind == "result" || *i < n);
    let slots = a.operands.iter().chain(&a.results);
    for ((kind, i, v), slot) in values.zip(slots) {
        if let DistSlot::Tensor(t) = slot {
            if !t.is_empty() && (t.mesh_shape != a.mesh_shape || t.process_ids != a.process_ids) {
                return Some(format!("{kind}({i}) is on another mesh than the op"));
            }
        }
        let Some(Type::Dist { dist, .. }) = v.map(|v| ctx.ty(p.value_type(v))) else {
            continue;
        };
        match slot {
            DistSlot::Tensor(t) if t == dist => {}
            DistSlot::Tensor(t) => {
                return Some(format!(
                    "{kind}({i}) says `{}` but the value is `{}`",
                    t.to_text(),
                    dist.to_text()
                ))
            }
            _ => {
                return Some(format!(
                    "{kind}({i}) is not a tensor's distribution but the value is `{}`",
                    dist.to_text()
                ))
            }
        }
    }
    None
}
