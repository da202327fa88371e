//! Extraction: choosing one node per e-class, counting shared sub-terms once, never creating a
//! cycle, deterministically.
//!
//! Two passes:
//!
//! 1. **Acyclic base choice** (Knuth's generalization of Dijkstra): a node's height is
//!    `1 + max(height of its children)` (a subsumed node pays a large penalty). Classes are
//!    *finalized* in increasing height; a class is finalized with the first node whose children
//!    are all finalized. The finalization index `order` is a topological numbering of the
//!    chosen graph: every chosen child is finalized before its parent, so there is no cycle.
//!    Ties break on (height, class id, node position), all deterministic.
//! 2. **Greedy DAG improvement** (extraction-gym's greedy-DAG idea): in finalization order, each
//!    class with several eligible nodes picks the one whose term has the smallest *DAG* cost:
//!    the sum of node costs over the set of e-classes it reaches, so a sub-term shared twice is
//!    counted once. A node is eligible only if all its children come earlier in `order`, which
//!    keeps the chosen graph acyclic by construction (no cycle check at run time). The reachable
//!    set is explored up to [`DAG_BUDGET`] classes: terms that reach further than that compare
//!    as equal and fall back to height, which keeps extraction linear on long training programs
//!    whose every value reaches thousands of classes. Ties: height, then node position.
//!    The whole pass explores at most [`PASS2_WORK_PER_NODE`] classes per e-node of the e-graph
//!    (plus [`PASS2_WORK_BASE`]): an e-graph stopped by a limit can hold hundreds of thousands of
//!    equivalent nodes, each reaching [`DAG_BUDGET`] classes. Classes left when the work runs
//!    out keep their pass-1 choice, which is correct and acyclic; the budget counts work, not
//!    time, so the choice is the same on every run.

use super::analysis::IrEGraph;
use super::lang::Node;
use egg::{Id, Language};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// How many e-classes the DAG cost of one candidate explores before it is considered "large".
const DAG_BUDGET: usize = 1024;

/// Classes pass 2 may explore per e-node of the e-graph (see the module docs).
pub(crate) const PASS2_WORK_PER_NODE: usize = 64;

/// Classes pass 2 may explore besides [`PASS2_WORK_PER_NODE`] per e-node: a small e-graph is
/// never cut short.
pub(crate) const PASS2_WORK_BASE: usize = 1 << 20;

const SUBSUMED_PENALTY: u32 = 1 << 20;

/// The chosen node of every e-class (indexed by class id).
#[derive(Debug)]
pub struct Choices {
    best: Vec<Option<Node>>,
    /// Classes whose choice pass 2 changed (for statistics).
    pub improved: usize,
    /// Classes pass 2 explored, and the most it may explore ([`PASS2_WORK_PER_NODE`] per e-node
    /// plus [`PASS2_WORK_BASE`]): `work == work_limit` when the budget ran out.
    pub work: usize,
    pub work_limit: usize,
}

impl Choices {
    /// The chosen node of canonical class `c`.
    pub fn node(&self, c: Id) -> Option<&Node> {
        self.best.get(usize::from(c)).and_then(|n| n.as_ref())
    }
}

fn node_cost(n: &Node) -> u64 {
    match n {
        Node::Op { .. } => 1,
        Node::Proj { .. } | Node::Leaf { .. } | Node::Null => 0,
    }
}

/// Chooses a node for every e-class of a rebuilt e-graph.
pub fn extract(eg: &IrEGraph) -> Choices {
    let n_ids = eg.nodes().len().max(1);
    let subsumed = |n: &Node| !eg.analysis.subsumed.is_empty() && eg.analysis.subsumed.contains(n);

    // ---- pass 1 ----
    // parents[child] = (class, node position) of every node that has `child` as a child.
    let mut parents: Vec<Vec<(Id, u32)>> = vec![Vec::new(); n_ids];
    // pending[class][pos]: distinct children not yet finalized.
    let mut pending: Vec<Vec<u32>> = vec![Vec::new(); n_ids];
    let mut heap: BinaryHeap<Reverse<(u32, Id, u32)>> = BinaryHeap::new();
    let mut ids: Vec<Id> = eg.classes().map(|c| c.id).collect();
    ids.sort_unstable();
    let mut kids: Vec<Id> = Vec::new();
    for &c in &ids {
        let nodes = &eg[c].nodes;
        pending[usize::from(c)] = vec![0; nodes.len()];
        for (pos, n) in nodes.iter().enumerate() {
            kids.clear();
            kids.extend(n.children().iter().map(|&k| eg.find(k)));
            kids.sort_unstable();
            kids.dedup();
            pending[usize::from(c)][pos] = kids.len() as u32;
            if kids.is_empty() {
                let h = 1 + if subsumed(n) { SUBSUMED_PENALTY } else { 0 };
                heap.push(Reverse((h, c, pos as u32)));
            }
            for &k in &kids {
                parents[usize::from(k)].push((c, pos as u32));
            }
        }
    }
    let mut height: Vec<u32> = vec![u32::MAX; n_ids];
    let mut order: Vec<u32> = vec![u32::MAX; n_ids];
    let mut chosen: Vec<Option<u32>> = vec![None; n_ids];
    let mut finalized: Vec<Id> = Vec::with_capacity(ids.len());
    while let Some(Reverse((h, c, pos))) = heap.pop() {
        let ci = usize::from(c);
        if chosen[ci].is_some() {
            continue;
        }
        chosen[ci] = Some(pos);
        height[ci] = h;
        order[ci] = finalized.len() as u32;
        finalized.push(c);
        for &(p, ppos) in &parents[ci] {
            let pi = usize::from(p);
            if chosen[pi].is_some() {
                continue;
            }
            let left = &mut pending[pi][ppos as usize];
            *left -= 1;
            if *left == 0 {
                let n = &eg[p].nodes[ppos as usize];
                let hmax = n
                    .children()
                    .iter()
                    .map(|&k| height[usize::from(eg.find(k))])
                    .max()
                    .unwrap_or(0);
                let pen = if subsumed(n) { SUBSUMED_PENALTY } else { 0 };
                heap.push(Reverse((
                    hmax.saturating_add(1).saturating_add(pen),
                    p,
                    ppos,
                )));
            }
        }
    }

    // ---- pass 2 ----
    let mut seen: Vec<u32> = vec![0; n_ids];
    let mut stamp = 0u32;
    let mut stack: Vec<Id> = Vec::new();
    let mut improved = 0;
    let work_limit = eg
        .total_size()
        .saturating_mul(PASS2_WORK_PER_NODE)
        .saturating_add(PASS2_WORK_BASE);
    let mut work_left = work_limit;
    for &c in &finalized {
        if work_left == 0 {
            break;
        }
        let ci = usize::from(c);
        let nodes = &eg[c].nodes;
        if nodes.len() < 2 {
            continue;
        }
        let mut best: Option<(u64, u32, usize)> = None;
        for (pos, n) in nodes.iter().enumerate() {
            if subsumed(n) {
                continue;
            }
            let eligible = n
                .children()
                .iter()
                .all(|&k| order[usize::from(eg.find(k))] < order[ci]);
            if !eligible {
                continue;
            }
            // DAG cost: this node plus every class its children reach through current choices.
            stamp += 1;
            let mut cost = node_cost(n);
            let mut visited = 0usize;
            stack.clear();
            stack.extend(n.children().iter().map(|&k| eg.find(k)));
            while let Some(k) = stack.pop() {
                let ki = usize::from(k);
                if seen[ki] == stamp {
                    continue;
                }
                seen[ki] = stamp;
                visited += 1;
                work_left = work_left.saturating_sub(1);
                if visited > DAG_BUDGET || work_left == 0 {
                    cost = u64::MAX;
                    break;
                }
                if let Some(kp) = chosen[ki] {
                    let kn = &eg[k].nodes[kp as usize];
                    cost += node_cost(kn);
                    stack.extend(kn.children().iter().map(|&g| eg.find(g)));
                }
            }
            let h = n
                .children()
                .iter()
                .map(|&k| height[usize::from(eg.find(k))])
                .max()
                .unwrap_or(0)
                .saturating_add(1);
            let key = (cost, h, pos);
            if best.is_none_or(|b| key < b) {
                best = Some(key);
            }
        }
        if let Some((_, _, pos)) = best {
            if chosen[ci] != Some(pos as u32) {
                chosen[ci] = Some(pos as u32);
                improved += 1;
            }
        }
    }

    let mut best = vec![None; n_ids];
    for &c in &ids {
        if let Some(pos) = chosen[usize::from(c)] {
            best[usize::from(c)] = Some(eg[c].nodes[pos as usize].clone());
        }
    }
    Choices {
        best,
        improved,
        work: work_limit - work_left,
        work_limit,
    }
}
