//! Checks before writing Paddle JSON: what Paddle 3.3.1's loader accepts silently but its
//! executor then fails on, or computes wrongly with (SPEC.md §4, §10b, §11).
//!
//! - **Definition before use.** Paddle resolves operand ids in file order and makes an unknown
//!   one a null operand without a word (E2b, E3c). Every operand must be written before its use.
//! - **Persistable values.** A value the startup program stores into the scope
//!   (`set_parameter`, `shadow_output`) must be marked `persistable:[true]`, and so must every
//!   main-program value bound by name to such a variable (`builtin.parameter`, a `pd_op.data`
//!   named like it); otherwise the executor treats it as a temporary (E5b, E5c).
//! - **Keyword arguments** become persistable ops bound by name ([`super::write`]): each needs a
//!   variable of that name created by the startup program (else `Tensor holds no memory` at run
//!   time), and must not share its name with another value of the main program.
//!
//! Attribute tags are checked as they are written ([`super::attrs`]). Which ops store and which
//! bind by name is data in the dialect table (`SCOPE_WRITERS`, `SCOPE_READERS`).

use super::refusal::Refusal;
use crate::dialect::paddle_json::{KWARG_AS_OP, PARAMETER, SCOPE_READERS, SCOPE_WRITERS};
use crate::ir::{BlockId, Context, Module, OpId, Program, ValueDef, Which};
use rustc_hash::FxHashSet;
use std::collections::BTreeSet;

/// Runs every check on the module; the first problem is the error.
pub fn check_module(m: &Module) -> Result<(), Refusal> {
    check_order(&m.ctx, &m.main, Which::Main)?;
    if let Some(s) = &m.startup {
        check_order(&m.ctx, s, Which::Startup)?;
    }
    check_persistable(m)
}

fn refuse(which: Which, op: Option<OpId>, msg: String) -> Refusal {
    Refusal {
        which,
        op,
        message: format!(
            "refusing to write the {} program as Paddle JSON: {msg}",
            which.name()
        ),
    }
}

/// Every operand is defined earlier in write order (the order [`super::write`] uses).
fn check_order(ctx: &Context, p: &Program, which: Which) -> Result<(), Refusal> {
    let mut defined = vec![false; p.value_capacity()];
    let mut n = 0usize;
    order_block(ctx, p, p.top_block(), &mut defined, &mut n)
        .map_err(|(op, m)| refuse(which, Some(op), m))
}

fn order_block(
    ctx: &Context,
    p: &Program,
    b: BlockId,
    defined: &mut [bool],
    n: &mut usize,
) -> Result<(), (OpId, String)> {
    for a in p.block_args(b) {
        defined[a.value.index()] = true;
    }
    for k in p.block_kwargs(b) {
        defined[k.value.index()] = true;
    }
    for op in p.block_ops(b) {
        *n += 1;
        for (i, v) in p.operands(op).enumerate() {
            if let Some(v) = v {
                if !defined[v.index()] {
                    let what = match p.value_def(v) {
                        ValueDef::Result { op: d, .. }
                            if p.is_live(d) && p.op_block(d).is_some() =>
                        {
                            format!("a result of `{}`, which comes later", ctx.str(p.op_name(d)))
                        }
                        ValueDef::Result { .. } => {
                            "a result of an op that is not in the program".into()
                        }
                        _ => "an argument of another block".into(),
                    };
                    return Err((
                        op,
                        format!(
                            "operand {i} of `{}` (op {n}) is {what}; Paddle's loader would \
                             silently make it <<NULL VALUE>> and the program would fail at run \
                             time",
                            ctx.str(p.op_name(op))
                        ),
                    ));
                }
            }
        }
        for r in p.results(op) {
            defined[r.index()] = true;
        }
        for &r in p.regions(op) {
            for &rb in p.region_blocks(r) {
                order_block(ctx, p, rb, defined, n)?;
            }
        }
    }
    Ok(())
}

fn lookup<'t>(table: &'t [(&str, &str)], op: &str) -> Option<&'t str> {
    table.iter().find(|(o, _)| *o == op).map(|(_, a)| *a)
}

/// The scope name an op stores or binds, given `(op, attribute)` lines.
fn scope_name(ctx: &Context, p: &Program, op: OpId, table: &[(&str, &str)]) -> Option<String> {
    let attr = lookup(table, ctx.str(p.op_name(op)))?;
    ctx.attrs(p.op_attrs(op))
        .get(attr)
        .and_then(|a| a.as_str().map(|s| s.into_owned()))
}

/// Whether result `index` of `op` carries `persistable:[..., true, ...]` at its position.
fn is_persistable(ctx: &Context, p: &Program, op: OpId, index: usize) -> bool {
    ctx.attrs(p.op_attrs(op))
        .get("persistable")
        .and_then(|a| a.as_array())
        .and_then(|a| a.get(index))
        .is_some_and(|b| matches!(b, crate::ir::Attr::Bool(true)))
}

fn check_persistable(m: &Module) -> Result<(), Refusal> {
    let ctx = &m.ctx;
    // Startup: what it stores must be persistable; collect the names it creates.
    let mut created = BTreeSet::new();
    if let Some(s) = &m.startup {
        for op in s.walk() {
            let Some(name) = scope_name(ctx, s, op, SCOPE_WRITERS) else {
                continue;
            };
            if let Some(Some(v)) = s.operands(op).next() {
                if let ValueDef::Result { op: d, index } = s.value_def(v) {
                    if !is_persistable(ctx, s, d, index as usize) {
                        return Err(refuse(
                            Which::Startup,
                            Some(op),
                            format!(
                                "`{}` stores `{name}`, but the `{}` computing it does not mark \
                                 its result persistable:[true]; Paddle's executor would drop it \
                                 from the scope",
                                ctx.str(s.op_name(op)),
                                ctx.str(s.op_name(d))
                            ),
                        ));
                    }
                }
            }
            created.insert(name);
        }
    }
    // Main: parameters always, and values bound to a startup-created name, must be persistable.
    let p = &m.main;
    let mut bound = FxHashSet::default();
    for op in p.walk() {
        let Some(name) = scope_name(ctx, p, op, SCOPE_READERS) else {
            continue;
        };
        let op_name = ctx.str(p.op_name(op));
        let must = op_name == PARAMETER.op || created.contains(&name);
        if must && p.num_results(op) == 1 && !is_persistable(ctx, p, op, 0) {
            return Err(refuse(
                Which::Main,
                Some(op),
                format!(
                    "`{op_name}` binds `{name}`, which the startup program creates, but is not \
                     marked persistable:[true]; Paddle's executor would read an uninitialized \
                     temporary instead"
                ),
            ));
        }
        bound.insert(name);
    }
    // Keyword arguments become persistable ops bound by name.
    let top = p.top_block();
    for k in p.block_kwargs(top) {
        let name = ctx.str(k.name);
        if bound.contains(name) {
            return Err(refuse(
                Which::Main,
                None,
                format!(
                    "keyword argument `{name}` would be written as a `{}` named `{name}`, but \
                     another op of the program already binds that name",
                    KWARG_AS_OP.op
                ),
            ));
        }
        if m.startup.is_some() && !created.contains(name) {
            return Err(refuse(
                Which::Main,
                None,
                format!(
                    "keyword argument `{name}` is not created by the startup program (no \
                     {} of that name); Paddle would fail with `Tensor holds no memory`",
                    SCOPE_WRITERS
                        .iter()
                        .map(|(o, _)| format!("`{o}`"))
                        .collect::<Vec<_>>()
                        .join(" or ")
                ),
            ));
        }
    }
    for b in nested_blocks(p) {
        if let Some(k) = p.block_kwargs(b).first() {
            return Err(refuse(
                Which::Main,
                None,
                format!(
                    "keyword argument `{}` belongs to a nested block; only the top block's can \
                     be written",
                    ctx.str(k.name)
                ),
            ));
        }
    }
    Ok(())
}

fn nested_blocks(p: &Program) -> Vec<BlockId> {
    let mut out = Vec::new();
    for op in p.walk() {
        for &r in p.regions(op) {
            out.extend_from_slice(p.region_blocks(r));
        }
    }
    out
}
