//! Running equational rules to saturation under limits.
//!
//! egg's `Runner` does the work; it checks the node and time limits between rules inside an
//! iteration and the iteration limit between iterations, so a rule set that grows the e-graph
//! without bound stops with an explicit [`Outcome`] instead of hanging. Whatever the outcome,
//! the e-graph is rebuilt (congruence-closed) before extraction, and every union in it is a
//! consequence of the rules, so extracting from a partially saturated e-graph is still correct.
//!
//! The scheduler ([`Bounded`]) runs every rule every iteration, as egg's `SimpleScheduler` does:
//! rules are meant to simplify (rules/README.md: the right-hand side is never worse than the
//! left; no general commutativity or associativity), so backing off a rule that matches often
//! would only delay rewrites, and it would make the iteration count depend on match counts.
//! Unlike egg's schedulers it bounds each search itself: egg checks its limits only *between*
//! rules, and one search of a deep pattern over classes with several equivalent nodes can
//! enumerate millions of matches (gigabytes, minutes). The searcher stops at the saturation's
//! deadline, and at the node limit's number of matches of one rule in one iteration (applying
//! more would pass the node limit anyway); the saturation then stops with
//! [`Outcome::TimeLimit`] or [`Outcome::MatchLimit`] without applying that iteration's matches.
//! The match limit depends only on the e-graph, so a run stopped by it (or by the node or
//! iteration limit) gives the same output every time; only a time limit depends on the
//! machine.

use super::analysis::{IrAnalysis, IrEGraph, SearchBudget, SearchStop};
use super::lang::Node;
use super::rewrite::PreparedRule;
use crate::ir::Context;
use std::fmt;
use std::time::{Duration, Instant};

/// Termination limits for one saturation.
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    /// Maximum number of e-nodes; `None`: four times the initial size plus 10 000.
    pub node_limit: Option<usize>,
    pub iter_limit: usize,
    pub time_limit: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            node_limit: None,
            iter_limit: 30,
            time_limit: Duration::from_secs(10),
        }
    }
}

impl Limits {
    pub fn with_node_limit(mut self, n: usize) -> Self {
        self.node_limit = Some(n);
        self
    }
    pub fn with_iter_limit(mut self, n: usize) -> Self {
        self.iter_limit = n;
        self
    }
    pub fn with_time_limit(mut self, t: Duration) -> Self {
        self.time_limit = t;
        self
    }

    /// The node limit for an e-graph that starts with `initial` nodes.
    pub fn nodes_for(&self, initial: usize) -> usize {
        self.node_limit
            .unwrap_or_else(|| initial.saturating_mul(4).saturating_add(10_000))
    }
}

/// Everything [`saturate`](super::saturate) can be told.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    pub limits: Limits,
    /// Whether identical pure ops merge (hash-consing). On by default; off, a program with no
    /// rules comes back exactly as it was, duplicates included.
    pub cse: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            limits: Limits::default(),
            cse: true,
        }
    }
}

impl Options {
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }
}

/// Why saturation stopped.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// No rule changed the e-graph in the last iteration (or there were no rules).
    Saturated,
    /// The iteration limit was reached.
    IterationLimit(usize),
    /// The e-graph grew past the node limit (the size when it stopped).
    NodeLimit(usize),
    /// The time limit passed (seconds elapsed when it stopped).
    TimeLimit(f64),
    /// A rule had more matches in one iteration than the node limit (the rule, the limit).
    MatchLimit(String, usize),
    Other(String),
}

impl Outcome {
    /// Whether a limit was hit (the result is correct but may be less simplified).
    pub fn hit_limit(&self) -> bool {
        !matches!(self, Outcome::Saturated)
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Saturated => write!(f, "saturated"),
            Outcome::IterationLimit(n) => write!(f, "iteration limit hit after {n} iterations"),
            Outcome::NodeLimit(n) => write!(f, "node limit hit ({n} e-nodes)"),
            Outcome::TimeLimit(s) => write!(f, "time limit hit after {s:.3} s"),
            Outcome::MatchLimit(rule, n) => write!(
                f,
                "match limit hit (rule `{rule}` has more than {n} matches in one iteration)"
            ),
            Outcome::Other(s) => write!(f, "stopped: {s}"),
        }
    }
}

/// egg's `SimpleScheduler` with bounded searches (see the module docs).
struct Bounded {
    start: Instant,
    /// Set when a search passed the match limit: the rule and the limit (shared with [`run`]:
    /// egg's runner keeps its scheduler).
    match_limit_hit: std::rc::Rc<std::cell::RefCell<Option<(String, usize)>>>,
}

impl egg::RewriteScheduler<Node, IrAnalysis> for Bounded {
    fn search_rewrites<'a>(
        &mut self,
        iteration: usize,
        egraph: &IrEGraph,
        rewrites: &[&'a egg::Rewrite<Node, IrAnalysis>],
        limits: &egg::RunnerLimits,
    ) -> egg::RunnerResult<Vec<Vec<egg::SearchMatches<'a, Node>>>> {
        let budget = &egraph.analysis.search;
        let mut matches = Vec::with_capacity(rewrites.len());
        for rw in rewrites {
            budget.stop.set(None);
            let ms = rw.search_with_limit(egraph, budget.max_matches);
            match budget.stop.take() {
                Some(SearchStop::Time) => {
                    return Err(egg::StopReason::TimeLimit(
                        self.start.elapsed().as_secs_f64(),
                    ))
                }
                Some(SearchStop::Matches) => {
                    *self.match_limit_hit.borrow_mut() =
                        Some((rw.name.to_string(), budget.max_matches));
                    return Err(egg::StopReason::Other("match limit".into()));
                }
                None => {}
            }
            matches.push(ms);
            limits.check_limits(iteration, egraph)?;
        }
        Ok(matches)
    }
}

/// Runs `rules` on `eg` and returns the rebuilt e-graph, the outcome and the iteration count.
pub fn run(eg: IrEGraph, rules: &[PreparedRule], limits: &Limits) -> (IrEGraph, Outcome, usize) {
    if rules.is_empty() {
        let mut eg = eg;
        eg.rebuild();
        return (eg, Outcome::Saturated, 0);
    }
    let mut eg = eg;
    let node_limit = limits.nodes_for(eg.total_size());
    let start = Instant::now();
    eg.analysis.search = SearchBudget {
        deadline: start.checked_add(limits.time_limit),
        max_matches: node_limit,
        stop: Default::default(),
    };
    let match_limit_hit: std::rc::Rc<std::cell::RefCell<Option<(String, usize)>>> =
        std::rc::Rc::default();
    let runner: egg::Runner<Node, IrAnalysis> =
        egg::Runner::new(IrAnalysis::new(Context::default()))
            .with_egraph(eg)
            .with_node_limit(node_limit)
            .with_iter_limit(limits.iter_limit)
            .with_time_limit(limits.time_limit)
            .with_scheduler(Bounded {
                start,
                match_limit_hit: match_limit_hit.clone(),
            })
            .with_hook(|r| {
                IrAnalysis::canonicalize_subsumed(&mut r.egraph);
                Ok(())
            });
    let rewrites: Vec<&egg::Rewrite<Node, IrAnalysis>> = rules.iter().map(|r| &r.rewrite).collect();
    let mut runner = runner.run(rewrites);
    let outcome = match runner.stop_reason.take() {
        Some(egg::StopReason::Saturated) | None => Outcome::Saturated,
        Some(egg::StopReason::IterationLimit(n)) => Outcome::IterationLimit(n),
        Some(egg::StopReason::NodeLimit(n)) => Outcome::NodeLimit(n),
        Some(egg::StopReason::TimeLimit(s)) => Outcome::TimeLimit(s),
        Some(egg::StopReason::Other(s)) => match match_limit_hit.take() {
            Some((rule, n)) => Outcome::MatchLimit(rule, n),
            None => Outcome::Other(s),
        },
    };
    let iterations = runner.iterations.len();
    let mut eg = runner.egraph;
    eg.analysis.search = SearchBudget::default();
    eg.rebuild();
    IrAnalysis::canonicalize_subsumed(&mut eg);
    (eg, outcome, iterations)
}

#[cfg(test)]
impl Options {
    pub fn with_cse(mut self, cse: bool) -> Self {
        self.cse = cse;
        self
    }
}
