//! Elaboration: writing the extracted e-graph back into the program, in place.
//!
//! The walk follows the block's *original* op order:
//!
//! - at a skeleton op, every pure value its operands (and the ops nested in its regions) need is
//!   emitted first if it is not yet (dependencies first);
//! - at an original pure op `P`, its e-class is emitted there if not yet emitted, using the
//!   chosen node; if the chosen node *is* `P`'s own node, `P` itself is kept (not recreated).
//!   If the class was already emitted (a duplicate merged by CSE), `P`'s uses are redirected to
//!   the earlier value and `P` is erased.
//!
//! So a program with nothing to rewrite comes back unchanged (same ops, same order), merged
//! duplicates stay at their first occurrence, and each pure value is emitted once, before its
//! first use. New ops are inserted just before the op being processed; uses are redirected with
//! `replace_all_uses` (O(uses)); replaced ops are erased (O(1)). Nothing scans the block.
//!
//! # Reads of buffers that are written in place
//! An e-graph leaf `Leaf { value, epoch }` may only be *read* while its buffer is in that epoch
//! (see `build.rs`). Before emitting a class, elaboration checks that every leaf its chosen term
//! reads is available now (defined, and in the right epoch). If not, `P`'s own op is kept
//! instead (always valid at its original place). A class emitted *as* a written buffer's value
//! (`cast(%m) == %m`) is only a valid stand-in while that buffer is unchanged: `P`'s uses are
//! redirected to it only if all of them come before the buffer's next write; otherwise `P` is
//! kept as the snapshot it was.

use super::analysis::IrEGraph;
use super::build::Built;
use super::extract::Choices;
use super::lang::Node;
use crate::diag::Diagnostic;
use crate::ir::{BlockId, OpId, OpSyntax, Program, ValueId};
use egg::{Id, Language};
use rustc_hash::FxHashMap;

const NO_TAG: u32 = u32::MAX;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Emit {
    Value(ValueId),
    Null,
    Tuple(OpId),
}

/// What elaboration did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ElabStats {
    /// Original pure ops kept in place.
    pub kept: usize,
    /// Original pure ops erased (merged into an earlier equal value, or replaced).
    pub erased: usize,
    /// New ops created from rule right-hand sides.
    pub created: usize,
    /// Times a chosen term could not be emitted where needed (a leaf in another epoch) and the
    /// original op was kept instead.
    pub fallbacks: usize,
    /// The ops created, in creation order (their `op_dist_attr` is derived afterwards, when
    /// the context is free to intern it).
    pub created_ops: Vec<OpId>,
}

struct Elab<'a> {
    p: &'a mut Program,
    eg: &'a IrEGraph,
    built: &'a Built,
    ch: &'a Choices,
    /// Per class: how it was emitted, and the buffer epoch the emission is tied to (`NO_TAG`
    /// when the value is an immutable snapshot).
    emitted: Vec<Option<(Emit, u32)>>,
    /// Per original value: defined at the current point of the walk.
    avail: Vec<bool>,
    /// Per buffer root: writes seen so far.
    epoch: Vec<u32>,
    /// Per original op: its position in the top-level block (`u32::MAX` if nested or new).
    pos: Vec<u32>,
    /// Per written buffer: positions of the ops that write it, ascending.
    write_pos: FxHashMap<u32, Vec<u32>>,
    /// Feasibility memo: (stamp, result) per class; the stamp advances at every skeleton op.
    memo: Vec<(u32, bool)>,
    stamp: u32,
    reused: Option<OpId>,
    stats: ElabStats,
}

fn internal(msg: String) -> Diagnostic {
    Diagnostic::error(format!("internal error in e-graph elaboration: {msg}"))
        .with_note("this is a bug in irw; please report it with the input and rules")
}

impl Elab<'_> {
    fn find(&self, c: Id) -> Id {
        self.eg.find(c)
    }

    fn is_written(&self, v: ValueId) -> bool {
        self.built
            .buffer
            .get(v.index())
            .is_some_and(|&r| self.built.written[r as usize])
    }

    fn buffer_epoch(&self, v: ValueId) -> u32 {
        self.epoch[self.built.buffer[v.index()] as usize]
    }

    /// The emission of `c` if it is still valid here.
    fn valid(&self, c: Id) -> Option<Emit> {
        let (e, tag) = self.emitted[usize::from(c)]?;
        if tag == NO_TAG {
            return Some(e);
        }
        match e {
            Emit::Value(v) if self.buffer_epoch(v) == tag => Some(e),
            _ => None,
        }
    }

    fn chosen(&self, c: Id) -> Result<&Node, Diagnostic> {
        self.ch
            .node(c)
            .ok_or_else(|| internal(format!("e-class {c} has no extracted node")))
    }

    fn leaf_ok(&self, v: ValueId, epoch: u32) -> bool {
        self.avail.get(v.index()).copied().unwrap_or(false)
            && (!self.is_written(v) || self.buffer_epoch(v) == epoch)
    }

    /// Whether the chosen term of `c` can be emitted here (iterative, memoized per stamp).
    fn feasible(&mut self, c: Id) -> Result<bool, Diagnostic> {
        let mut stack = vec![(c, false)];
        while let Some((x, expanded)) = stack.pop() {
            if self.valid(x).is_some() || self.memo[usize::from(x)].0 == self.stamp {
                continue;
            }
            let node = self.chosen(x)?;
            if !expanded {
                stack.push((x, true));
                for &k in node.children() {
                    stack.push((self.find(k), false));
                }
                continue;
            }
            let ok = match node {
                Node::Leaf { value, epoch, .. } => self.leaf_ok(*value, *epoch),
                Node::Null => true,
                _ => node.children().iter().all(|&k| {
                    let k = self.find(k);
                    self.valid(k).is_some() || self.memo[usize::from(k)] == (self.stamp, true)
                }),
            };
            self.memo[usize::from(x)] = (self.stamp, ok);
        }
        Ok(self.valid(c).is_some() || self.memo[usize::from(c)] == (self.stamp, true))
    }

    fn operand_of(&self, k: Id) -> Result<Option<ValueId>, Diagnostic> {
        match self.valid(self.find(k)) {
            Some(Emit::Value(v)) => Ok(Some(v)),
            Some(Emit::Null) => Ok(None),
            Some(Emit::Tuple(_)) => Err(internal(format!("tuple e-class {k} used as a value"))),
            None => Err(internal(format!("operand e-class {k} not emitted"))),
        }
    }

    /// Emits the chosen term of a feasible class before `anchor`, reusing `cand` (the original
    /// op being processed) where its own node is chosen.
    fn emit(&mut self, c: Id, anchor: OpId, cand: Option<OpId>) -> Result<Emit, Diagnostic> {
        let cand_node = cand
            .and_then(|op| self.built.op_node.get(&op))
            .map(|(n, _)| n.clone().map_children(|k| self.find(k)));
        let mut stack = vec![(c, false)];
        while let Some((x, expanded)) = stack.pop() {
            if self.valid(x).is_some() {
                continue;
            }
            let node = self.chosen(x)?.clone();
            if !expanded {
                stack.push((x, true));
                for &k in node.children().iter().rev() {
                    let k = self.find(k);
                    if self.valid(k).is_none() {
                        stack.push((k, false));
                    }
                }
                continue;
            }
            let (e, tag) = match &node {
                Node::Leaf { value, .. } => {
                    let tag = if self.is_written(*value) {
                        self.buffer_epoch(*value)
                    } else {
                        NO_TAG
                    };
                    (Emit::Value(*value), tag)
                }
                Node::Null => (Emit::Null, NO_TAG),
                Node::Proj { index, tuple } => match self.valid(self.find(tuple[0])) {
                    Some(Emit::Tuple(op)) => {
                        (Emit::Value(self.p.result(op, *index as usize)), NO_TAG)
                    }
                    _ => return Err(internal(format!("projection of e-class {x} has no tuple"))),
                },
                Node::Op {
                    name,
                    attrs,
                    types,
                    children,
                    ..
                } => {
                    let operands = children
                        .iter()
                        .map(|&k| self.operand_of(k))
                        .collect::<Result<Vec<_>, _>>()?;
                    let op = match (cand, &cand_node) {
                        (Some(p), Some(n)) if self.reused.is_none() && *n == node => {
                            for (i, v) in operands.iter().enumerate() {
                                if self.p.operand(p, i) != *v {
                                    self.p.set_operand(p, i, *v);
                                }
                            }
                            self.reused = Some(p);
                            p
                        }
                        _ => {
                            let op =
                                self.p
                                    .create_op(*name, *attrs, &operands, types, OpSyntax::Plain);
                            self.p.insert_before(anchor, op);
                            self.stats.created += 1;
                            self.stats.created_ops.push(op);
                            op
                        }
                    };
                    if types.len() == 1 {
                        (Emit::Value(self.p.result(op, 0)), NO_TAG)
                    } else {
                        (Emit::Tuple(op), NO_TAG)
                    }
                }
            };
            self.emitted[usize::from(x)] = Some((e, tag));
        }
        self.valid(c)
            .ok_or_else(|| internal(format!("e-class {c} not emitted")))
    }

    /// Keeps the original op `p` as the emission of its own node's class. Unless `force`, an
    /// existing valid emission of that class is used instead. With `force` (the existing
    /// emission is a buffer that changes before `p`'s uses), `p` becomes the class's emission:
    /// an immutable snapshot, valid from here on.
    fn keep_original(&mut self, p: OpId, force: bool) -> Result<Emit, Diagnostic> {
        let Some((_, class)) = self.built.op_node.get(&p) else {
            return Err(internal("original op has no e-node".into()));
        };
        let class = self.find(*class);
        if !force {
            if let Some(e) = self.valid(class) {
                return Ok(e);
            }
        }
        self.reused = Some(p);
        self.stats.fallbacks += 1;
        let e = if self.p.num_results(p) == 1 {
            Emit::Value(self.p.result(p, 0))
        } else {
            Emit::Tuple(p)
        };
        self.emitted[usize::from(class)] = Some((e, NO_TAG));
        Ok(e)
    }

    /// Whether every use of `v` comes before the next write of `buffer` after position `at`.
    fn uses_before_next_write(&self, v: ValueId, buffer: u32, at: u32) -> bool {
        let Some(ws) = self.write_pos.get(&buffer) else {
            return true;
        };
        let next = ws.partition_point(|&w| w <= at);
        let Some(&limit) = ws.get(next) else {
            return true;
        };
        self.p.uses(v).all(|u| {
            let top = self.top_ancestor(u.op);
            let q = self.pos.get(top.index()).copied().unwrap_or(u32::MAX);
            q < limit
        })
    }

    fn top_ancestor(&self, mut op: OpId) -> OpId {
        while let Some(b) = self.p.op_block(op) {
            match self.p.block_parent_op(b) {
                Some(parent) => op = parent,
                None => break,
            }
        }
        op
    }

    /// Processes an original pure op.
    fn pure_op(&mut self, p: OpId) -> Result<(), Diagnostic> {
        self.reused = None;
        let results: Vec<ValueId> = self.p.results(p).collect();
        let at = self.pos[p.index()];
        for (i, &v) in results.iter().enumerate() {
            let c = self
                .built
                .class(v)
                .ok_or_else(|| internal("pure value without e-class".into()))?;
            let c = self.find(c);
            let mut e = match self.valid(c) {
                Some(e) => e,
                None if self.feasible(c)? => self.emit(c, p, Some(p))?,
                None => {
                    let k = self.keep_original(p, false)?;
                    self.project(k, i)?
                }
            };
            // A written buffer's value stands in for `v` only until the buffer's next write.
            if let Emit::Value(w) = e {
                if w != v && self.is_written(w) {
                    let root = self.built.buffer[w.index()];
                    if !self.uses_before_next_write(v, root, at) {
                        let k = self.keep_original(p, true)?;
                        e = self.project(k, i)?;
                        self.emitted[usize::from(c)] = Some((e, NO_TAG));
                    }
                }
            }
            match e {
                Emit::Value(w) if w != v => self.p.replace_all_uses(v, w),
                Emit::Value(_) => {}
                Emit::Null | Emit::Tuple(_) => {
                    return Err(internal("a pure result was emitted as a non-value".into()))
                }
            }
        }
        if self.reused == Some(p) {
            self.stats.kept += 1;
        } else {
            if results.iter().any(|&v| self.p.has_uses(v)) {
                return Err(internal("replaced op still has uses".into()));
            }
            self.p.erase(p);
            self.stats.erased += 1;
        }
        Ok(())
    }

    fn project(&self, e: Emit, i: usize) -> Result<Emit, Diagnostic> {
        Ok(match e {
            Emit::Tuple(op) => Emit::Value(self.p.result(op, i)),
            Emit::Value(_) if i == 0 => e,
            _ => return Err(internal("projection out of range".into())),
        })
    }

    /// Makes sure operand `i` of `op` refers to the emitted value of its class.
    fn fix_operand(&mut self, op: OpId, i: usize, anchor: OpId) -> Result<(), Diagnostic> {
        let Some(u) = self.p.operand(op, i) else {
            return Ok(());
        };
        let Some(c) = self.built.class(u) else {
            return Ok(());
        };
        let c = self.find(c);
        let e = match self.valid(c) {
            Some(e) => e,
            None if self.feasible(c)? => self.emit(c, anchor, None)?,
            None => {
                return Err(internal(format!(
                    "value %{} is needed where its term cannot be emitted",
                    u.0
                )))
            }
        };
        match e {
            Emit::Value(w) if w != u => self.p.set_operand(op, i, Some(w)),
            _ => {}
        }
        Ok(())
    }

    /// Processes a skeleton op.
    fn skeleton_op(&mut self, e: OpId) -> Result<(), Diagnostic> {
        for i in 0..self.p.num_operands(e) {
            self.fix_operand(e, i, e)?;
        }
        if !self.p.regions(e).is_empty() {
            let mut stack: Vec<BlockId> = Vec::new();
            for &r in self.p.regions(e) {
                stack.extend_from_slice(self.p.region_blocks(r));
            }
            while let Some(b) = stack.pop() {
                let ops: Vec<OpId> = self.p.block_ops(b).collect();
                for op in ops {
                    for i in 0..self.p.num_operands(op) {
                        self.fix_operand(op, i, e)?;
                    }
                    for &r in self.p.regions(op) {
                        stack.extend_from_slice(self.p.region_blocks(r));
                    }
                }
            }
        }
        for v in self.p.results(e).collect::<Vec<_>>() {
            if let Some(a) = self.avail.get_mut(v.index()) {
                *a = true;
            }
        }
        if let Some(roots) = self.built.writes.get(&e) {
            for &r in roots {
                self.epoch[r as usize] += 1;
            }
        }
        self.stamp += 1;
        Ok(())
    }
}

/// Writes the extracted e-graph back into `p`'s top-level block (see the module docs).
pub fn elaborate(
    p: &mut Program,
    eg: &IrEGraph,
    built: &Built,
    ch: &Choices,
) -> Result<ElabStats, Diagnostic> {
    let block = built.block;
    let ops: Vec<OpId> = p.block_ops(block).collect();
    let mut pos = vec![u32::MAX; p.op_capacity()];
    for (i, op) in ops.iter().enumerate() {
        pos[op.index()] = i as u32;
    }
    let mut write_pos: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
    for &op in &ops {
        if let Some(roots) = built.writes.get(&op) {
            for &r in roots {
                write_pos.entry(r).or_default().push(pos[op.index()]);
            }
        }
    }
    let nvals = p.value_capacity();
    let mut avail = vec![false; nvals];
    for a in p.block_args(block) {
        avail[a.value.index()] = true;
    }
    for k in p.block_kwargs(block) {
        avail[k.value.index()] = true;
    }
    let n_ids = eg.nodes().len().max(1);
    let mut el = Elab {
        p,
        eg,
        built,
        ch,
        emitted: vec![None; n_ids],
        avail,
        epoch: vec![0; nvals],
        pos,
        write_pos,
        memo: vec![(u32::MAX, false); n_ids],
        stamp: 0,
        reused: None,
        stats: ElabStats::default(),
    };
    for op in ops {
        if built.op_node.contains_key(&op) {
            el.pure_op(op)?;
        } else {
            el.skeleton_op(op)?;
        }
    }
    Ok(el.stats)
}
