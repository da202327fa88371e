//! Whether `rules/grad_merge.rw --set normalize=tokens` would merge the original's loss, so that
//! the check recommends it only where it works. A loss that weighs the micro-batches unequally
//! (a token mean) fails a plain merge, and the way out the check names must be one the rule
//! file takes: its `token_mean_loss` rule matches one form only, and `loss_not_token_mean`
//! refuses every other loss. The test here is that rule's pattern and guard, read the same way
//! (`tests/golden/check/token_mean_hint_*.test` hold the two together): the loss every backward
//! seed (`pd_op.full_like` in backward) is shaped after is `divide(sum(multiply(l, mask)),
//! sum(mask))`, all three 0-d, the count float32, `mask` a `pd_op.data` input, and the loss's
//! `divide_grad` computes no gradient for the count; and the program has no collective.

use crate::dialect::{Dialect, Effect};
use crate::exec::interp::op_role;
use crate::ir::{Context, DType, OpId, Program, ValueId};

/// Whether normalize=tokens merges the loss of `prog`.
pub(super) fn normalize_tokens(ctx: &Context, prog: &Program) -> Tokens {
    match token_mean_program(ctx, prog) {
        None => Tokens::Merged,
        Some(why) => Tokens::Refused(why),
    }
}

/// What normalize=tokens does with a program's loss.
#[derive(Clone, Debug)]
pub(super) enum Tokens {
    /// It merges it exactly.
    Merged,
    /// It refuses it: why, and what to do, in words that follow "normalize=tokens takes only
    /// that form, and".
    Refused(String),
}

/// Why normalize=tokens refuses the loss of `prog`, if it does.
fn token_mean_program(ctx: &Context, prog: &Program) -> Option<String> {
    let top = prog.top_block();
    let ops: Vec<OpId> = prog.block_ops(top).collect();
    let name = |op: OpId| ctx.str(prog.op_name(op));
    if ops
        .iter()
        .any(|&op| Dialect::get().effect(name(op)) == Effect::Collective)
    {
        return Some("the program has collectives: each rank would count its own tokens, and grad_merge.rw does not sum the counts over the ranks".into());
    }
    let mut losses: Vec<ValueId> = Vec::new();
    for &op in &ops {
        if name(op) == "pd_op.full_like" && op_role(ctx, prog, op) == Some(1) {
            if let Some(v) = prog.operand(op, 0) {
                let forward = prog
                    .defining_op(v)
                    .is_some_and(|d| op_role(ctx, prog, d).is_none_or(|r| r == 0));
                if forward && !losses.contains(&v) {
                    losses.push(v);
                }
            }
        }
    }
    let Some(&loss) = losses.first() else {
        return Some("no backward seed (`pd_op.full_like` with op_role 1) names the loss".into());
    };
    if let Some(&other) = losses.get(1) {
        let def = |v: ValueId| prog.defining_op(v).map_or("a block argument", name);
        return Some(format!(
            "the backward stage seeds a value besides the loss `{}`: `{}` (as `append_backward` seeds an output nothing uses, an RNN's final state), which normalize=tokens refuses as a second loss",
            def(loss),
            def(other)
        ));
    }
    token_mean(ctx, prog, loss)
}

/// Why `loss` is not the token mean `token_mean_loss` matches, if it is not.
fn token_mean(ctx: &Context, prog: &Program, loss: ValueId) -> Option<String> {
    let name = |op: OpId| ctx.str(prog.op_name(op));
    let def_of = |v: Option<ValueId>| v.and_then(|v| prog.defining_op(v));
    let called = |v: Option<ValueId>| def_of(v).map_or("a block argument", name);
    let rank0 = |v: ValueId| {
        ctx.ty(prog.value_type(v))
            .shape()
            .is_some_and(|s| s.is_empty())
    };
    let Some(div) = def_of(Some(loss)).filter(|&d| name(d) == "pd_op.divide") else {
        return Some(format!(
            "this loss is `{}`, not a division of two sums: write it in that form",
            called(Some(loss))
        ));
    };
    let (num, cnt) = (prog.operand(div, 0), prog.operand(div, 1));
    let num_op = def_of(num).filter(|&d| name(d) == "pd_op.sum");
    let cnt_op = def_of(cnt).filter(|&d| name(d) == "pd_op.sum");
    let (Some(num_op), Some(cnt_op), Some(num), Some(cnt)) = (num_op, cnt_op, num, cnt) else {
        return Some(format!(
            "this loss divides `{}` by `{}`, not a sum by a sum of the mask: write it in that form",
            called(num),
            called(cnt)
        ));
    };
    if !(rank0(loss) && rank0(num) && rank0(cnt)) {
        return Some(
            "its sums are not full reductions to one value (0-d): sum over every axis".into(),
        );
    }
    if ctx.ty(prog.value_type(cnt)).dtype() != Some(DType::F32) {
        return Some("its token count is not float32: feed the mask as float32".into());
    }
    let prod = prog.operand(num_op, 0);
    let Some(prod_op) = def_of(prod).filter(|&d| name(d) == "pd_op.multiply") else {
        return Some(format!(
            "its numerator sums `{}`, not `pd_op.multiply(l, mask)`: write it in that form",
            called(prod)
        ));
    };
    let mask = prog.operand(prod_op, 1);
    if mask.is_none() || prog.operand(cnt_op, 0) != mask {
        return Some(
            "its count is not the sum of the mask the per-token losses are multiplied by (the second operand of the multiply): sum that same mask"
                .into(),
        );
    }
    if def_of(mask).is_none_or(|d| name(d) != "pd_op.data") {
        return Some(format!(
            "its mask is computed in the program (`{}`), not fed as a `pd_op.data` input: feed the mask as its own float32 input (paddle.static.data)",
            called(mask)
        ));
    }
    let divide_grad = prog.uses(loss).map(|u| u.op).find(|&u| {
        name(u) == "pd_op.divide_grad"
            && prog.operand(u, 0) == Some(num)
            && prog.operand(u, 1) == Some(cnt)
            && prog.operand(u, 2) == Some(loss)
    });
    match divide_grad {
        Some(dg) if prog.num_results(dg) > 1 && prog.has_uses(prog.result(dg, 1)) => {
            Some("its `divide_grad` computes a gradient for the count".into())
        }
        Some(_) => None,
        None => Some("its backward has no `pd_op.divide_grad` of the loss".into()),
    }
}
