//! Turning an [`EqRule`] into an `egg::Rewrite`: a custom `Searcher` (e-matching with attribute
//! tests and guards) and a custom `Applier` (building the right-hand side with computed
//! attributes and inferred types).
//!
//! Why custom rather than `egg::Pattern`: attributes live inside [`Node::Op`] as an interned
//! [`AttrId`] (see `pattern.rs` for why not as children), so a match must read the node's
//! dictionary; guards need the analysis data; right-hand sides compute attributes.
//!
//! A match is handed from searcher to applier as an `egg::Subst`. Besides the rule's value
//! variables it binds two hidden variables per left-hand-side op: the e-class it matched in,
//! and the matched node's [`AttrId`] (an interned index, stored as an `Id`; only this module
//! reads it back). Captures are re-read from that dictionary, so a match costs no allocation
//! beyond the `Subst`.
//!
//! Search visits candidate e-classes (indexed by `(name, arity)`) in ascending id order, so the
//! order of unions, and with it the output, is deterministic.
//!
//! The steps live in submodules, one concept each: [`compile`] (an [`EqRule`] resolved against a
//! context: names interned, variables and ops numbered), [`search`] (e-matching with attribute
//! tests, guards and the search budget), [`apply`] (building the right-hand side); this file is
//! the egg glue that plugs them into an `egg::Rewrite`.

use super::analysis::{IrEGraph, SearchBudget, SearchStop};
use super::eval::{attr_equals, eval, Env};
use super::lang::{Disc, Node};
use super::pattern::{
    AttrTest, Build, EqRule, Expr, OpBuild, OpPattern, Pattern, TypesBuild, Value,
};
use crate::diag::Diagnostic;
use crate::dialect::{Dialect, Effect, ResultRule};
use crate::ir::{Attr, AttrDict, AttrId, Context, Sym, Type, TypeId};
use egg::{Id, Rewrite, SearchMatches, Subst, Var as EVar};
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

mod apply;
mod compile;
mod search;

use compile::{compile, err, Compiled};
use search::{Meter, State};

/// Per-rule counters, shared by the searcher and the applier of one rule.
#[derive(Debug, Default)]
pub struct RuleCounters {
    /// Matches found (after guards), summed over iterations.
    pub matches: AtomicUsize,
    /// Applications that changed the e-graph.
    pub applied: AtomicUsize,
    /// Applications refused because both sides had different types.
    pub type_rejections: AtomicUsize,
    /// Applications whose right-hand side could not be built (an attribute expression or a
    /// result type was undefined for this match).
    pub build_failures: AtomicUsize,
}

// ---- egg glue ----------------------------------------------------------------------------

struct Searcher {
    rule: Arc<Compiled>,
    counters: Arc<RuleCounters>,
}

struct Applier {
    rule: Arc<Compiled>,
    counters: Arc<RuleCounters>,
}

impl egg::Searcher<Node, super::analysis::IrAnalysis> for Searcher {
    fn search_eclass_with_limit(
        &self,
        eg: &IrEGraph,
        eclass: Id,
        limit: usize,
    ) -> Option<SearchMatches<'_, Node>> {
        let r = &self.rule;
        let init = State {
            vars: vec![None; r.nvars as usize],
            slots: vec![(Id::from(0usize), Context::EMPTY_ATTRS); r.nslots as usize],
            caps: vec![None; r.caps.len()],
        };
        let mut states = Vec::new();
        let mut meter = Meter::new(&eg.analysis.search);
        r.match_pat(eg, &r.lhs, eg.find(eclass), init, &mut states, &mut meter);
        if eg.analysis.search.stop.get().is_some() {
            return None;
        }
        let mut substs = Vec::new();
        for s in &states {
            if r.guards_hold(eg, s) {
                if substs.len() == limit {
                    // One more than the caller's limit: it knows the limit was passed.
                    eg.analysis.search.stop.set(Some(SearchStop::Matches));
                    break;
                }
                substs.push(r.to_subst(s));
            }
        }
        if substs.is_empty() {
            return None;
        }
        self.counters.matches.fetch_add(substs.len(), Relaxed);
        Some(SearchMatches {
            eclass,
            substs,
            ast: None,
        })
    }

    /// Every match, class by class in class order, until `limit` matches: past it the search
    /// stops and records [`SearchStop::Matches`] in the e-graph's [`SearchBudget`] (as it
    /// records a passed deadline), so the caller stops the saturation rather than apply a
    /// truncated, arbitrary subset.
    fn search_with_limit(&self, eg: &IrEGraph, mut limit: usize) -> Vec<SearchMatches<'_, Node>> {
        let mut classes: Vec<Id> = match eg.classes_for_op(&self.rule.root_disc()) {
            Some(it) => it.collect(),
            None => return Vec::new(),
        };
        classes.sort_unstable();
        let mut out = Vec::new();
        for c in classes {
            if eg.analysis.search.stop.get().is_some() {
                break;
            }
            if let Some(m) = self.search_eclass_with_limit(eg, c, limit) {
                limit -= m.substs.len();
                out.push(m);
            }
        }
        out
    }

    fn vars(&self) -> Vec<EVar> {
        Vec::new()
    }
}

impl egg::Applier<Node, super::analysis::IrAnalysis> for Applier {
    fn apply_one(
        &self,
        eg: &mut IrEGraph,
        eclass: Id,
        subst: &Subst,
        _ast: Option<&egg::PatternAst<Node>>,
        _rule_name: egg::Symbol,
    ) -> Vec<Id> {
        let r = &self.rule;
        let m = r.decode(eg, subst);
        let eclass = eg.find(eclass);
        let Some(new) = r.build(eg, &r.rhs, &m) else {
            self.counters.build_failures.fetch_add(1, Relaxed);
            return Vec::new();
        };
        if eg[new].data.types != eg[eclass].data.types {
            self.counters.type_rejections.fetch_add(1, Relaxed);
            return Vec::new();
        }
        if r.subsume {
            if let Some(n) = r.matched_root(eg, eclass, &m) {
                eg.analysis.subsumed.insert(n);
            }
        }
        if eg.union(eclass, new) {
            self.counters.applied.fetch_add(1, Relaxed);
            vec![eclass]
        } else {
            Vec::new()
        }
    }
}

/// An [`EqRule`] ready to run on one module's e-graph.
pub struct PreparedRule {
    pub name: String,
    pub origin: Option<String>,
    pub rewrite: Rewrite<Node, super::analysis::IrAnalysis>,
    pub counters: Arc<RuleCounters>,
}

/// Resolves `rule` against `ctx` (interning its names and types).
pub fn prepare(rule: &EqRule, ctx: &mut Context) -> Result<PreparedRule, Diagnostic> {
    let compiled = Arc::new(compile(rule, ctx)?);
    let counters = Arc::new(RuleCounters::default());
    let rewrite = Rewrite::new(
        compiled.name.clone(),
        Searcher {
            rule: compiled.clone(),
            counters: counters.clone(),
        },
        Applier {
            rule: compiled,
            counters: counters.clone(),
        },
    )
    .map_err(|e| err(rule, e))?;
    Ok(PreparedRule {
        name: rule.name.clone(),
        origin: rule.origin.clone(),
        rewrite,
        counters,
    })
}
