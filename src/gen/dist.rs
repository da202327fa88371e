//! `irw gen mlp --dist N`: the MLP as an auto-parallel (Engine) data-parallel program on a mesh
//! of N processes.
//!
//! Paddle's Engine hands passes programs typed `pd_dist.tensor<...>` with an `op_dist_attr` on
//! every op, and syncs each parameter gradient with a `pd_op.all_reduce` in the optimize stage
//! (`../shared/fixtures/paddle-dist/mlp3_tanh_sgd_dp2_k2_before.ir`). The only real dumps are
//! 2–5 layer models; this makes such programs of any size from the dense generator's output, in
//! linear time:
//!
//! - data (the batch, dimension 0 dynamic) is `Shard(dim=0)`: each process holds its rows;
//! - parameters, optimizer state and constants are `Replicate()`;
//! - a value with the batch dimension is sharded like the data; a value without it computed
//!   from sharded or partial values is pending a reduction over the processes: the loss (a
//!   mean over each process's rows) an average, `partial(0,AVG)`, and the gradients a sum,
//!   `partial(0,SUM)`;
//! - the loss gradient's seed is 1/N instead of 1 (what Paddle's data parallelism does,
//!   `_insert_scale_loss_grad_ops`), so each process's gradient is its share of the mean's;
//! - each optimizer reads its gradient through `pd_op.all_reduce {reduce_type:0}` (SUM) in the
//!   optimize stage, whose result is replicated and is the full-batch gradient. (SUM, not AVG:
//!   Paddle 3.3.1's CPU/gloo all_reduce kernel has no AVG.)
//! - every op gets the `op_dist_attr` its types imply ([`Context::with_derived_dist_attr`]).
//!
//! With `--allreduce --collective all_reduce` the gradients are synced in the backward stage
//! instead, right after the op that computes each (averaged, not summed): the form
//! `hoist_reduce.rw` moves to the optimize stage.
//!
//! It is built by analogy with the Engine's dumps, which do the same for the loss and gradients
//! with a gather-and-slice the Engine specializes per rank; irw's programs stay the same on
//! every rank, so that `irw check` can run them on simulated ranks.

use crate::dialect::{Dialect, Effect};
use crate::exec::interp::Interp;
use crate::ir::{
    Attr, AttrDict, Context, Module, OpId, OpSyntax, Placement, Program, ReduceKind, TensorDist,
    Type, TypeId, ValueId,
};

/// How a value is laid out over the mesh.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Layout {
    Replicated,
    /// Split along dimension 0 (the batch).
    Sharded,
    /// A pending reduction over the processes: an average in the forward stage (the loss), a
    /// sum in the backward stage (gradients).
    Partial,
}

/// Turns `m` (a dense MLP from [`mod@super::mlp`]) into a data-parallel program on a mesh of
/// `processes` processes.
pub fn distribute(m: &mut Module, processes: usize) -> Result<(), String> {
    if processes == 0 {
        return Err("a mesh needs at least one process".into());
    }
    let ids: Vec<i64> = (0..processes as i64).collect();
    let mesh = TensorDist {
        mesh_shape: vec![processes as i64],
        process_ids: ids,
        dims_mapping: Vec::new(),
        partial: Vec::new(),
        placements: Some(vec![Placement::Replicate]),
    };
    if !Interp::has_collectives(&m.ctx, &m.main) {
        insert_all_reduces(m);
    }
    scale_loss_gradient_seed(m, processes);
    let Module {
        ctx, main, startup, ..
    } = m;
    retype(ctx, main, &mesh, true);
    if let Some(s) = startup {
        retype(ctx, s, &mesh, false);
    }
    Ok(())
}

/// Before each optimizer: `%r = pd_op.all_reduce(%grad) {op_role:2, reduce_type:0, ...}`, and the
/// optimizer reads `%r`.
fn insert_all_reduces(m: &mut Module) {
    let dialect = Dialect::get();
    let top = m.main.top_block();
    let optimizers: Vec<OpId> = m
        .main
        .block_ops(top)
        .filter(|&o| {
            dialect
                .spec(m.ctx.str(m.main.op_name(o)))
                .is_some_and(|s| s.effect == Effect::Optimizer)
        })
        .collect();
    let name = m.ctx.sym("pd_op.all_reduce");
    let mut d = AttrDict::default();
    d.set("op_role", Attr::Int(2));
    d.set("reduce_type", Attr::Int(0));
    d.set("ring_id", Attr::Int(0));
    d.set("stop_gradient", Attr::Array(vec![Attr::Bool(false)]));
    let attrs = m.ctx.intern_attrs(d);
    for o in optimizers {
        let spec = dialect.spec(m.ctx.str(m.main.op_name(o)));
        let Some(gi) = spec.and_then(|s| s.operand_index("grad")) else {
            continue;
        };
        let Some(g) = m.main.operand(o, gi) else {
            continue;
        };
        let ty = m.main.value_type(g);
        let r = m
            .main
            .create_op(name, attrs, &[Some(g)], &[ty], OpSyntax::Plain);
        m.main.insert_before(o, r);
        let rv = m.main.result(r, 0);
        m.main.set_operand(o, gi, Some(rv));
    }
}

/// The seed of the backward pass, `full_like(loss, full() {value:1})`, becomes 1/N: summed
/// over the N processes, the gradients of their mean losses are then the gradient of the mean
/// over the whole batch.
fn scale_loss_gradient_seed(m: &mut Module, processes: usize) {
    let top = m.main.top_block();
    let ops: Vec<OpId> = m.main.block_ops(top).collect();
    for o in ops {
        if m.ctx.str(m.main.op_name(o)) != "pd_op.full_like" {
            continue;
        }
        let Some(seed) = m.main.operand(o, 1).and_then(|v| m.main.defining_op(v)) else {
            continue;
        };
        let attrs = m.ctx.attrs(m.main.op_attrs(seed));
        if m.ctx.str(m.main.op_name(seed)) == "pd_op.full"
            && attrs.get("value").and_then(Attr::as_f64) == Some(1.0)
        {
            let a = m.ctx.with_attr(
                m.main.op_attrs(seed),
                "value",
                Attr::float(1.0 / processes as f64),
            );
            m.main.set_op_attrs(seed, a);
        }
    }
}

/// Gives every value of `p` its distributed type and every op its `op_dist_attr`. Ops are
/// visited in program order, so operands are laid out before their users.
fn retype(ctx: &mut Context, p: &mut Program, mesh: &TensorDist, main: bool) {
    let mut layout: Vec<Option<Layout>> = vec![None; p.value_capacity()];
    let top = p.top_block();
    let ops: Vec<OpId> = p.block_ops(top).collect();
    for op in ops {
        let name = ctx.str(p.op_name(op)).to_string();
        let attrs = ctx.attrs(p.op_attrs(op));
        let kind = if attrs.get("op_role").and_then(Attr::as_i64) == Some(0) {
            ReduceKind::Avg
        } else {
            ReduceKind::Sum
        };
        let persistable = attrs
            .get("persistable")
            .and_then(Attr::as_bool)
            .unwrap_or(false);
        let ins: Vec<Layout> = p
            .operands(op)
            .flatten()
            .filter_map(|v| layout[v.index()])
            .collect();
        let results: Vec<ValueId> = p.results(op).collect();
        for r in results {
            let ty = p.value_type(r);
            let Some(shape) = ctx.ty(ty).shape().map(<[i64]>::to_vec) else {
                continue;
            };
            // Startup values, state, parameters and reduced gradients are the same everywhere.
            let replicated =
                !main || persistable || name == "builtin.parameter" || name == "pd_op.all_reduce";
            let l = if replicated {
                Layout::Replicated
            } else if shape.first() == Some(&-1) {
                Layout::Sharded
            } else if ins.iter().any(|&l| l != Layout::Replicated) {
                Layout::Partial
            } else {
                Layout::Replicated
            };
            layout[r.index()] = Some(l);
            let t = dist_type(ctx, ty, mesh, l, &kind);
            p.set_value_type(r, t);
        }
        let operands: Vec<Option<TypeId>> =
            p.operands(op).map(|v| v.map(|v| p.value_type(v))).collect();
        let results: Vec<TypeId> = p.results(op).map(|v| p.value_type(v)).collect();
        let a = ctx.with_derived_dist_attr(p.op_attrs(op), &operands, &results);
        p.set_op_attrs(op, a);
    }
}

fn dist_type(
    ctx: &mut Context,
    ty: TypeId,
    mesh: &TensorDist,
    l: Layout,
    kind: &ReduceKind,
) -> TypeId {
    let Some((shape, dtype)) = ctx.ty(ty).tensor() else {
        return ty;
    };
    let shape = shape.to_vec();
    let mut dist = mesh.replicated(shape.len());
    match l {
        Layout::Replicated => {}
        Layout::Sharded => {
            if let Some(d) = dist.dims_mapping.first_mut() {
                *d = 0;
            }
            dist.placements = Some(vec![Placement::Shard(0)]);
        }
        Layout::Partial => {
            dist.partial = vec![(0, kind.clone())];
            dist.placements = Some(vec![Placement::Partial(kind.clone())]);
        }
    }
    ctx.intern_type(Type::Dist { shape, dtype, dist })
}
