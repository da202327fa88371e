//! Which rule is tried where, and in what order (egg's scheduler, for a worklist): a phase's
//! rules indexed by the op name their first pattern can match ([`RootIndex`]), the program's
//! ops indexed by name ([`OpOrder`]), and the worklist of ops still to try ([`Worklist`]).

use std::collections::VecDeque;

use super::super::matcher::Compiled;
use super::super::runtime::Caches;
use crate::ir::{BlockId, Module, OpId, Sym};
use crate::rules::compiled::CompiledRule;
use rustc_hash::FxHashMap;

/// A phase's rules indexed by the op names their first pattern may match (MLIR's
/// `FrozenRewritePatternSet`): the worklist tries at an op only the rules that can be rooted at
/// its name, instead of every rule of the phase. Built lazily, one entry per op name the phase
/// meets, because rules intern names the program does not have and the program gains names
/// as rules build ops.
pub(super) struct RootIndex {
    /// By op name (`Sym` index): the indices into the phase's compiled rules, in rule order.
    by_name: Vec<Option<Box<[usize]>>>,
    /// By compiled rule: whether it can fire at all ([`CompiledRule::never_fires`]).
    fires: Vec<bool>,
}

impl RootIndex {
    pub fn new(compiled: &[(&CompiledRule, Compiled)]) -> RootIndex {
        RootIndex {
            by_name: Vec::new(),
            fires: compiled.iter().map(|(r, _)| !r.never_fires()).collect(),
        }
    }

    #[inline]
    pub fn candidates(
        &mut self,
        m: &Module,
        cache: &mut Caches,
        compiled: &[(&CompiledRule, Compiled)],
        op: OpId,
    ) -> &[usize] {
        self.candidates_named(m, cache, compiled, m.main.op_name(op))
    }

    /// [`RootIndex::candidates`] at ops named `name`.
    pub fn candidates_named(
        &mut self,
        m: &Module,
        cache: &mut Caches,
        compiled: &[(&CompiledRule, Compiled)],
        name: Sym,
    ) -> &[usize] {
        let i = name.0 as usize;
        if i >= self.by_name.len() {
            self.by_name.resize(i + 1, None);
        }
        let fires = &self.fires;
        self.by_name[i].get_or_insert_with(|| {
            (0..compiled.len())
                .filter(|&k| fires[k] && compiled[k].1.root_may_accept_name(m, cache, name))
                .collect()
        })
    }
}

/// The main program's ops in print order, and the positions in that order of the ops of each
/// name: one walk of the program, which every phase seeds its worklist from while the
/// program's layout is unchanged ([`crate::ir::Program::layout_edits`]). A phase that applies
/// nothing, or only sets attributes, leaves it as it was, so a rule file of many checking
/// phases walks a large program a few times rather than once per phase, and a phase visits
/// only the ops of the names its rules can be rooted at.
pub(super) struct OpOrder {
    layout_edits: u64,
    ops: Vec<OpId>,
    /// Per op name met, the positions in `ops` of its ops, increasing.
    by_name: Vec<(Sym, Vec<u32>)>,
}

impl OpOrder {
    /// The order of `m`'s main program.
    pub fn of(m: &Module) -> OpOrder {
        let mut ops = Vec::with_capacity(m.main.num_ops());
        let mut slot: FxHashMap<Sym, usize> = FxHashMap::default();
        let mut by_name: Vec<(Sym, Vec<u32>)> = Vec::new();
        walk_block(m, m.main.top_block(), &mut |op| {
            let name = m.main.op_name(op);
            let k = *slot.entry(name).or_insert_with(|| {
                by_name.push((name, Vec::new()));
                by_name.len() - 1
            });
            by_name[k].1.push(ops.len() as u32);
            ops.push(op);
        });
        OpOrder {
            layout_edits: m.main.layout_edits(),
            ops,
            by_name,
        }
    }

    /// Whether this is still the order of `m`'s main program (made from it, and no op placed
    /// or taken out since).
    pub fn holds_for(&self, m: &Module) -> bool {
        self.layout_edits == m.main.layout_edits()
    }
}

/// The ops still to try, each at most once at a time, in the order they were queued: first
/// every op some rule of the phase can be rooted at, in program order, then each op an
/// application built, changed or matched.
pub(super) struct Worklist {
    /// By op (arena index): whether it is on the list.
    queued: Vec<bool>,
    work: VecDeque<OpId>,
}

impl Worklist {
    /// Every op of `m`'s main program that some rule of the phase accepts as its root, in
    /// program order (`order`, which must hold for `m`). (Not filtered by the roots' attribute
    /// tests: an op a rule of the phase gives the attributes later must keep its place in the
    /// order.)
    pub fn seed(
        m: &Module,
        order: &OpOrder,
        cache: &mut Caches,
        index: &mut RootIndex,
        compiled: &[(&CompiledRule, Compiled)],
    ) -> Worklist {
        debug_assert!(order.holds_for(m));
        let mut list = Worklist {
            queued: vec![false; m.main.op_capacity()],
            work: VecDeque::new(),
        };
        if !index.fires.contains(&true) {
            // No rule of the phase can fire (its guards are false by the parameters alone):
            // no op would be queued.
            return list;
        }
        let mut roots: Vec<u32> = Vec::new();
        for (name, positions) in &order.by_name {
            let cands = index.candidates_named(m, cache, compiled, *name);
            if cands.is_empty() {
                continue;
            }
            for &at in positions {
                let op = order.ops[at as usize];
                if cands
                    .iter()
                    .any(|&k| compiled[k].1.root_accepts(m, cache, op))
                {
                    roots.push(at);
                }
            }
        }
        roots.sort_unstable();
        for at in roots {
            let op = order.ops[at as usize];
            list.queued[op.index()] = true;
            list.work.push_back(op);
        }
        list
    }

    pub fn pop(&mut self) -> Option<OpId> {
        let op = self.work.pop_front()?;
        self.queued[op.index()] = false;
        Some(op)
    }

    /// Queues each live op of `ops` not queued already.
    pub fn push(&mut self, m: &Module, ops: impl IntoIterator<Item = OpId>) {
        if self.queued.len() < m.main.op_capacity() {
            self.queued.resize(m.main.op_capacity(), false);
        }
        for t in ops {
            if m.main.is_live(t) && !self.queued[t.index()] {
                self.queued[t.index()] = true;
                self.work.push_back(t);
            }
        }
    }
}

/// Calls `f` with every op of `block` and of the blocks nested in its ops, in print order
/// (pre-order), as [`crate::ir::Program::walk`] lists them, without collecting them first.
fn walk_block(m: &Module, block: BlockId, f: &mut impl FnMut(OpId)) {
    let p = &m.main;
    for op in p.block_ops(block) {
        f(op);
        for &r in p.regions(op) {
            for &b in p.region_blocks(r) {
                walk_block(m, b, f);
            }
        }
    }
}

/// [`Compiled::root_attrs_may_pass_dict`] of `op`'s dictionary (true for a root without
/// attribute tests), remembered by dictionary in `known` (0: not asked yet, 1: may pass, 2:
/// fails): ops share dictionaries, and an interned dictionary never changes, so each rule tests
/// each dictionary once rather than each op it is tried at.
pub(super) fn root_attrs_pass(known: &mut Vec<u8>, c: &Compiled, m: &Module, op: OpId) -> bool {
    if !c.root_has_attr_tests() {
        return true;
    }
    let id = m.main.op_attrs(op);
    let i = id.0 as usize;
    if i >= known.len() {
        known.resize(i + 1, 0);
    }
    if known[i] == 0 {
        known[i] = if c.root_attrs_may_pass_dict(m, id) {
            1
        } else {
            2
        };
    }
    known[i] == 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::parse_module;
    use crate::rules::RuleSet;
    use crate::SourceFile;

    /// The rules of `rules` and the program `program`.
    fn load(rules: &str, program: &str) -> (RuleSet, Module) {
        let rs = crate::rules::load_str("t.rw", rules, std::path::Path::new("."), &[])
            .unwrap_or_else(|d| panic!("{d}"));
        let m = parse_module(&SourceFile::new("p.ir", program)).unwrap_or_else(|d| panic!("{d}"));
        (rs, m)
    }

    /// The first phase's structural rules, compiled against `m`.
    fn compile<'r>(rs: &'r RuleSet, m: &mut Module) -> Vec<(&'r CompiledRule, Compiled<'r>)> {
        rs.phases[0]
            .structural
            .iter()
            .map(|r| (r, Compiled::new(m, r)))
            .collect()
    }

    /// A rule is a candidate at an op only when its root can match the op's name: a name, an
    /// alternative of names, an op class, or `any`.
    #[test]
    fn rules_are_indexed_by_what_their_root_accepts() {
        let rules = "// t\nrule name { match %x = pd_op.relu(%y); erase %x; }\n\
                     // t\nrule alternatives { match %x = (pd_op.add | pd_op.multiply)(%a, %b); erase %x; }\n\
                     // t\nrule class { match %x = pure(%y, ..); erase %x; }\n\
                     // t\nrule anything { match %x = any(.., %v, ..); erase %x; }\n";
        let (rs, mut m) = load(
            rules,
            r#"{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",op_role:0,place:Place(undefined:0),shape:[4],stop_gradient:[true]} : () -> tensor<4xf32>
    (%1) = "pd_op.relu" (%0) {op_role:0,stop_gradient:[false]} : (tensor<4xf32>) -> tensor<4xf32>
    (%2) = "pd_op.add" (%0, %1) {op_role:0,stop_gradient:[false]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
}
"#,
        );
        let compiled = compile(&rs, &mut m);
        let mut cache = Caches::new(rs.exists);
        let mut index = RootIndex::new(&compiled);
        let ops = m.main.walk();
        let at: Vec<Vec<usize>> = ops
            .iter()
            .map(|&op| index.candidates(&m, &mut cache, &compiled, op).to_vec())
            .collect();
        assert_eq!(at, [vec![3], vec![0, 2, 3], vec![1, 2, 3]]);
    }

    /// A phase seeds from the op order in program order, only with ops some rule can be rooted
    /// at; the order is kept while no op is placed or taken out, and is stale after either.
    #[test]
    fn the_worklist_is_seeded_in_program_order_from_a_kept_op_order() {
        let rules = "// t\nrule relus { match %x = pd_op.relu(%y); erase %x; }\n\
                     // t\nrule adds { match %x = pd_op.add(%a, %b); erase %x; }\n";
        let (rs, mut m) = load(
            rules,
            r#"{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",op_role:0,place:Place(undefined:0),shape:[4],stop_gradient:[true]} : () -> tensor<4xf32>
    (%1) = "pd_op.relu" (%0) {op_role:0,stop_gradient:[false]} : (tensor<4xf32>) -> tensor<4xf32>
    (%2) = "pd_op.add" (%0, %1) {op_role:0,stop_gradient:[false]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    (%3) = "pd_op.relu" (%2) {op_role:0,stop_gradient:[false]} : (tensor<4xf32>) -> tensor<4xf32>
}
"#,
        );
        let compiled = compile(&rs, &mut m);
        let mut cache = Caches::new(rs.exists);
        let mut index = RootIndex::new(&compiled);
        let order = OpOrder::of(&m);
        let mut seeded = |m: &Module, order: &OpOrder| -> Vec<OpId> {
            let mut work = Worklist::seed(m, order, &mut cache, &mut index, &compiled);
            std::iter::from_fn(|| work.pop()).collect()
        };
        assert_eq!(seeded(&m, &order), m.main.walk()[1..]);
        // Attributes may change: the order holds. An op placed or erased: it does not.
        let ops = m.main.walk();
        let attrs = m.main.op_attrs(ops[0]);
        m.main.set_op_attrs(ops[1], attrs);
        assert!(order.holds_for(&m));
        m.main.move_before(ops[3], ops[1]);
        assert!(!order.holds_for(&m));
        assert_eq!(seeded(&m, &OpOrder::of(&m)), [ops[3], ops[1], ops[2]]);
    }

    /// A root's leading attribute tests that need no evaluation rule out an op by presence;
    /// a computed test ends the prefix (the op is then searched, and the test evaluated there).
    #[test]
    fn a_root_is_ruled_out_by_its_leading_attribute_tests() {
        let rules = "// t\nrule present { match %x = any(.., %v, ..) {tag: _}; erase %x; }\n\
                     // t\nrule absent { match %x = any(..) {not tag}; erase %x; }\n\
                     // t\nrule literal { match %x = any(..) {tag: true}; erase %x; }\n\
                     // t\nrule computed { match %x = any(..) {op_role: 1 - 1, tag: _}; erase %x; }\n";
        let (rs, mut m) = load(
            rules,
            r#"{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",op_role:0,place:Place(undefined:0),shape:[4],stop_gradient:[true]} : () -> tensor<4xf32>
    (%1) = "pd_op.relu" (%0) {op_role:0,stop_gradient:[false],tag:false} : (tensor<4xf32>) -> tensor<4xf32>
}
"#,
        );
        let compiled = compile(&rs, &mut m);
        let at: Vec<Vec<bool>> = m
            .main
            .walk()
            .iter()
            .map(|&op| {
                compiled
                    .iter()
                    .map(|(_, c)| c.root_attrs_may_pass_dict(&m, m.main.op_attrs(op)))
                    .collect()
            })
            .collect();
        assert_eq!(
            at,
            [
                vec![false, true, false, true],
                vec![true, false, true, true]
            ]
        );
    }
}
