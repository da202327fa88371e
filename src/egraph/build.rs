//! Building the e-graph from a program's top-level block, and the skeleton that stays outside.
//!
//! Every op of the top-level block is either an *e-graph op* (pure per the dialect table, no
//! regions, at least one result, not defining a buffer that is written in place: see below) or
//! a *skeleton op*: everything else, including unknown ops and region ops with everything inside
//! their regions. Skeleton ops keep their order; elaboration (`elaborate.rs`) walks them.
//!
//! # Buffers and epochs: why in-place ops need care
//!
//! Paddle programs write values in place: `add_(%kwarg_m, %g)` changes `%kwarg_m`,
//! `sgd_(%param, ...)` changes `%param`, and in PIR the same SSA value is read before and after
//! the write. A pure op reading such a value computes something different before and after the
//! write, so two textually identical reads must not merge across it. Therefore:
//!
//! - values are grouped into *buffers*: an in-place result and the operand it aliases (dialect
//!   table `aliases`) are one buffer;
//! - a buffer is *written* by every op that names it as an aliased operand, by every op with
//!   unknown effects that takes it as an operand (unknown ops may write anything they see), and
//!   by a region op whose nested ops write it;
//! - a read of a value becomes `Leaf { value, epoch }` where `epoch` counts the writes to its
//!   buffer that precede the read, so reads in different epochs are different e-classes;
//! - a pure op whose result belongs to a written buffer (`%c = cast(%m); scale_(%c, ..)`) is
//!   kept in the skeleton: merging or replacing it would merge or drop a buffer.
//!
//! Architecture invariant: the e-graph never sees a value that is written in place as anything
//! but an opaque, epoch-stamped leaf; CSE and rules can therefore never move a read across a
//! write.

use super::analysis::IrEGraph;
use super::lang::Node;
use crate::dialect::{Dialect, Effect};
use crate::ir::{BlockId, Context, OpId, Program, ValueId};
use egg::Id;
use rustc_hash::FxHashMap;

/// What building found: the e-class of every pure value, the node of every e-graph op, and the
/// buffer information elaboration needs to replay epochs.
#[derive(Debug)]
pub struct Built {
    /// The block that was built.
    pub block: BlockId,
    /// Per value index: the e-class of a value defined by an e-graph op.
    pub class_of: Vec<Option<Id>>,
    /// Per e-graph op: the node as built (children as they were when built) and its e-class
    /// (the value's class, or the tuple's for a multi-result op). Elaboration reuses the
    /// original op when its class chooses this node.
    pub op_node: FxHashMap<OpId, (Node, Id)>,
    /// Per value index: the root of its buffer.
    pub buffer: Vec<u32>,
    /// Per buffer root: whether anything writes it.
    pub written: Vec<bool>,
    /// Per skeleton op that writes buffers: the buffer roots it writes (deduplicated).
    pub writes: FxHashMap<OpId, Vec<u32>>,
    /// Number of e-graph ops and skeleton ops.
    pub num_pure: usize,
    pub num_skeleton: usize,
}

impl Built {
    /// The e-class of a value defined by an e-graph op.
    pub fn class(&self, v: ValueId) -> Option<Id> {
        self.class_of.get(v.index()).copied().flatten()
    }
}

fn find(uf: &mut [u32], mut x: u32) -> u32 {
    while uf[x as usize] != x {
        let p = uf[uf[x as usize] as usize];
        uf[x as usize] = p;
        x = p;
    }
    x
}

fn union(uf: &mut [u32], a: u32, b: u32) {
    let (ra, rb) = (find(uf, a), find(uf, b));
    if ra != rb {
        // The smaller index wins: deterministic and independent of visiting order.
        let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
        uf[hi as usize] = lo;
    }
}

/// The operands `op` writes (aliased operands; every operand of an unknown op).
fn written_operands(ctx: &Context, p: &Program, op: OpId, out: &mut Vec<ValueId>) {
    let d = Dialect::get();
    let name = ctx.str(p.op_name(op));
    match d.spec(name) {
        Some(spec) => {
            for &(_, o) in spec.aliases {
                if (o as usize) < p.num_operands(op) {
                    if let Some(v) = p.operand(op, o as usize) {
                        out.push(v);
                    }
                }
            }
        }
        None => out.extend(p.operands(op).flatten()),
    }
}

/// Whether `op` (in the top-level block) becomes an e-node, before the buffer check.
fn is_pure_candidate(ctx: &Context, p: &Program, op: OpId) -> bool {
    p.regions(op).is_empty()
        && p.num_results(op) > 0
        && Dialect::get().effect(ctx.str(p.op_name(op))) == Effect::Pure
}

/// Adds the top-level block of `p` to `egraph` (whose analysis owns the context). With `cse`
/// off, identical ops get distinct nodes (see [`Node::Op`]'s `inst`).
pub fn build(egraph: &mut IrEGraph, p: &Program, cse: bool) -> Built {
    let nvals = p.value_capacity();
    let block = p.top_block();

    // 1. Buffers: union in-place results with the operands they alias (nested ops included).
    let mut uf: Vec<u32> = (0..nvals as u32).collect();
    let all_ops = p.walk();
    {
        let ctx = &egraph.analysis.ctx;
        let d = Dialect::get();
        for &op in &all_ops {
            if let Some(spec) = d.spec(ctx.str(p.op_name(op))) {
                for &(r, o) in spec.aliases {
                    let (r, o) = (r as usize, o as usize);
                    if r < p.num_results(op) && o < p.num_operands(op) {
                        if let Some(v) = p.operand(op, o) {
                            union(&mut uf, p.result(op, r).0, v.0);
                        }
                    }
                }
            }
        }
    }

    // 2. Writes, attributed to the top-level op that contains the writer.
    let mut written = vec![false; nvals];
    let mut writes: FxHashMap<OpId, Vec<u32>> = FxHashMap::default();
    {
        let ctx = &egraph.analysis.ctx;
        let mut scratch = Vec::new();
        let mut stack = Vec::new();
        for top in p.block_ops(block) {
            scratch.clear();
            stack.clear();
            stack.push(top);
            while let Some(op) = stack.pop() {
                written_operands(ctx, p, op, &mut scratch);
                for &r in p.regions(op) {
                    for &b in p.region_blocks(r) {
                        stack.extend(p.block_ops(b));
                    }
                }
            }
            if scratch.is_empty() {
                continue;
            }
            let mut roots: Vec<u32> = scratch.iter().map(|v| find(&mut uf, v.0)).collect();
            roots.sort_unstable();
            roots.dedup();
            for &r in &roots {
                written[r as usize] = true;
            }
            writes.insert(top, roots);
        }
    }
    let buffer: Vec<u32> = (0..nvals as u32).map(|v| find(&mut uf, v)).collect();

    // 3. Walk the block in order: e-graph ops become nodes; skeleton ops advance epochs.
    let mut class_of: Vec<Option<Id>> = vec![None; nvals];
    let mut op_node = FxHashMap::default();
    let mut epoch: Vec<u32> = vec![0; nvals];
    let mut null: Option<Id> = None;
    let (mut num_pure, mut num_skeleton) = (0, 0);
    let mut children = Vec::new();
    for op in p.block_ops(block) {
        let pure = is_pure_candidate(&egraph.analysis.ctx, p, op)
            && p.results(op).all(|r| !written[buffer[r.index()] as usize]);
        if !pure {
            num_skeleton += 1;
            if let Some(roots) = writes.get(&op) {
                for &r in roots {
                    epoch[r as usize] += 1;
                }
            }
            continue;
        }
        num_pure += 1;
        children.clear();
        for v in p.operands(op) {
            let id = match v {
                None => *null.get_or_insert_with(|| egraph.add(Node::Null)),
                Some(v) => match class_of[v.index()] {
                    Some(c) => c,
                    None => {
                        let root = buffer[v.index()] as usize;
                        egraph.add(Node::Leaf {
                            value: v,
                            epoch: epoch[root],
                            ty: p.value_type(v),
                        })
                    }
                },
            };
            children.push(id);
        }
        let types: Box<[_]> = p.results(op).map(|r| p.value_type(r)).collect();
        let node = Node::Op {
            name: p.op_name(op),
            attrs: p.op_attrs(op),
            types,
            children: children.as_slice().into(),
            inst: if cse { 0 } else { op.0 + 1 },
        };
        let id = egraph.add(node.clone());
        if p.num_results(op) == 1 {
            class_of[p.result(op, 0).index()] = Some(id);
        } else {
            for (i, r) in p.results(op).enumerate() {
                let pid = egraph.add(Node::Proj {
                    index: i as u32,
                    tuple: [id],
                });
                class_of[r.index()] = Some(pid);
            }
        }
        op_node.insert(op, (node, id));
    }
    Built {
        block,
        class_of,
        op_node,
        buffer,
        written,
        writes,
        num_pure,
        num_skeleton,
    }
}
