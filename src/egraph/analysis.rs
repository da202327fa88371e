//! The e-class analysis: what every e-class knows about its value.
//!
//! - its result types (one for a value, several for a multi-result op's tuple), so guards can
//!   test `dtype(%x) == d` and the applier can refuse an equation between values of different
//!   types;
//! - its scalar constant when known (a `pd_op.full` with a numeric `value`), so rules can fold
//!   constants.
//!
//! The analysis also owns the module's [`Context`] while the e-graph runs: matching reads
//! attribute dictionaries through it and right-hand sides intern new ones (computed attributes).
//! Moving the context in and back out keeps one owner at a time and avoids any locking.

use super::lang::Node;
use crate::ir::{Context, Sym, TypeId};
use egg::{DidMerge, EGraph, Id};
use rustc_hash::FxHashSet;

/// The e-graph type irw uses.
pub type IrEGraph = EGraph<Node, IrAnalysis>;

/// What an e-class knows about its value.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassData {
    /// Result types: one entry for a value, one per result for a tuple.
    pub types: Box<[TypeId]>,
    /// The scalar every element equals, when known (`pd_op.full {value:..}`).
    pub konst: Option<f64>,
}

impl ClassData {
    /// The type of a single value (`None` for a tuple).
    pub fn ty(&self) -> Option<TypeId> {
        match &*self.types {
            [t] => Some(*t),
            _ => None,
        }
    }
}

/// The analysis state (see the module docs).
#[derive(Debug)]
pub struct IrAnalysis {
    /// The module's context, owned by the e-graph while it runs.
    pub ctx: Context,
    /// `pd_op.full`, whose `value` attribute is a known constant.
    full: Sym,
    /// Nodes a subsuming rule replaced: never matched again and never extracted. Keys are
    /// re-canonicalized after every rebuild (see `run.rs`).
    pub subsumed: FxHashSet<Node>,
    /// Unions between classes whose analysis data disagreed (types or constants). The applier
    /// refuses type-changing equations, so this stays 0 unless a rule states a false equation
    /// about constants; it is reported.
    pub conflicts: usize,
    /// The bounds every rule search of the running saturation works under (see `run.rs`).
    pub search: SearchBudget,
}

/// Bounds on one rule's search, set by `run.rs` before saturation: the searcher enumerates
/// matches class by class and stops, recording why in `stop`, as soon as one bound is passed,
/// instead of first collecting every match (a deep pattern over classes with several equivalent
/// nodes has exponentially many).
#[derive(Debug, Default)]
pub struct SearchBudget {
    /// The saturation's deadline (`--egraph-time`, never past `--timeout`), checked every few
    /// thousand matching steps.
    pub deadline: Option<std::time::Instant>,
    /// Most matches (partial or complete) one rule may have in one iteration: the node limit,
    /// since applying more would grow the e-graph past it anyway.
    pub max_matches: usize,
    /// Why the last search stopped early, if it did.
    pub stop: std::cell::Cell<Option<SearchStop>>,
}

/// Why a rule's search stopped before it had every match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchStop {
    /// More than [`SearchBudget::max_matches`] matches.
    Matches,
    /// The deadline passed.
    Time,
}

impl IrAnalysis {
    pub fn new(mut ctx: Context) -> Self {
        let full = ctx.sym("pd_op.full");
        IrAnalysis {
            ctx,
            full,
            subsumed: FxHashSet::default(),
            conflicts: 0,
            search: SearchBudget {
                max_matches: usize::MAX,
                ..SearchBudget::default()
            },
        }
    }

    /// Re-canonicalizes the subsumed set after unions.
    pub fn canonicalize_subsumed(egraph: &mut IrEGraph) {
        if egraph.analysis.subsumed.is_empty() {
            return;
        }
        let old = std::mem::take(&mut egraph.analysis.subsumed);
        let new = old
            .into_iter()
            .map(|n| {
                let mut n = n;
                for c in egg::Language::children_mut(&mut n) {
                    *c = egraph.find(*c);
                }
                n
            })
            .collect();
        egraph.analysis.subsumed = new;
    }
}

impl egg::Analysis<Node> for IrAnalysis {
    type Data = ClassData;

    fn make(egraph: &mut IrEGraph, enode: &Node, _id: Id) -> ClassData {
        match enode {
            Node::Op {
                name, attrs, types, ..
            } => {
                let konst = if *name == egraph.analysis.full {
                    egraph
                        .analysis
                        .ctx
                        .attrs(*attrs)
                        .get("value")
                        .and_then(|a| a.as_f64())
                } else {
                    None
                };
                ClassData {
                    types: types.clone(),
                    konst,
                }
            }
            Node::Proj { index, tuple } => {
                let t = egraph[tuple[0]]
                    .data
                    .types
                    .get(*index as usize)
                    .copied()
                    .unwrap_or(Context::NULL_TYPE);
                ClassData {
                    types: Box::new([t]),
                    konst: None,
                }
            }
            Node::Leaf { ty, .. } => ClassData {
                types: Box::new([*ty]),
                konst: None,
            },
            Node::Null => ClassData {
                types: Box::new([Context::NULL_TYPE]),
                konst: None,
            },
        }
    }

    fn merge(&mut self, a: &mut ClassData, b: ClassData) -> DidMerge {
        if a.types != b.types {
            self.conflicts += 1;
        }
        match (a.konst, b.konst) {
            (None, Some(k)) => {
                a.konst = Some(k);
                DidMerge(true, a.types != b.types)
            }
            (Some(x), Some(y)) if x.to_bits() != y.to_bits() => {
                self.conflicts += 1;
                DidMerge(false, true)
            }
            (Some(_), None) => DidMerge(false, true),
            _ => DidMerge(false, a.types != b.types),
        }
    }
}
