//! Match plans: the order in which the matcher finds a structural rule's `match` patterns (and
//! an `exists(...)`'s), and how it reaches each one, decided once when the rule is lowered.
//!
//! The first pattern of a rule is matched at the op the worklist offers. Every later pattern is
//! reached from what is already bound: as the op defining a bound value (its `%r =` name is an
//! operand an earlier pattern bound), or among the users of a bound value (one of its own
//! operands, not a nested pattern's, is bound). A pattern that shares no value with what is
//! bound is reached through a marker: one of its attribute tests with a literal value
//! (`{global_norm_end: true}`), looked up in an index of the ops carrying it
//! (`rewrite/marked.rs`). That is how a fold finds where it stands: the op an earlier
//! application tagged. An `exists(...)` starts from everything the rule bound where it is
//! evaluated, and reaches all its patterns these ways.
//!
//! Why decide it here: the order only depends on which names are bound, never on the program,
//! so the matcher executes the steps ([`Step`]) instead of re-deriving them for every partial
//! match (MLIR freezes its pattern set the same way; egg compiles a pattern into a machine).
//! It is also the one place that knows whether a pattern is reachable at all. A pattern no step
//! reaches would have to be tried against every op of the program for every partial match: a
//! product search, quadratic in the program's size and usually not what the author meant (a typo
//! in a shared variable silently makes one). The rule is refused, at that pattern.
//!
//! The order: at each step, the first pattern (in the text) whose name is a bound value, found
//! through its defining op (one candidate); else the first pattern with a bound operand, found
//! through the users of its first bound operand (write the operand with the fewest users
//! first); else the first pattern with a literal attribute test, through its first such test.
//! Which patterns are reachable does not depend on this choice (binding more never makes a
//! pattern unreachable); which match is found first does, so the order is part of what a rule
//! means.

use super::compiled::{AttrTest, Expr, Pattern, Reach, Slot, Step, ValPat};
use crate::diag::{Diagnostic, SourceFile};

/// What a `%x` slot holds at a point of a rule: nothing yet, a value (an operand, a state) or
/// an op (a pattern's or a build's `%o =`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Bound {
    #[default]
    No,
    Value,
    Op,
}

/// What each slot holds, indexed by slot (slots past the end hold nothing).
#[derive(Debug, Clone, Default)]
pub struct BoundSlots(Vec<Bound>);

impl BoundSlots {
    pub fn get(&self, s: Slot) -> Bound {
        self.0.get(s as usize).copied().unwrap_or_default()
    }

    pub fn set(&mut self, s: Slot, b: Bound) {
        let i = s as usize;
        if i >= self.0.len() {
            self.0.resize(i + 1, Bound::No);
        }
        self.0[i] = b;
    }

    /// Adds what matching `p` binds: its name as an op, its operand variables (nested patterns
    /// included) as values unless bound already.
    pub fn bind_pattern(&mut self, p: &Pattern) {
        if let Some(b) = p.bind {
            self.set(b, Bound::Op);
        }
        for a in &p.args {
            match &a.pat {
                ValPat::Var { slot, .. } => {
                    if self.get(*slot) == Bound::No {
                        self.set(*slot, Bound::Value);
                    }
                }
                ValPat::Wild => {}
                ValPat::Op(inner) => self.bind_pattern(inner),
            }
        }
    }
}

/// The plan of a rule's `match`: the first pattern at the root, then every other one reached
/// from what the steps before bound. `Err` is the index of the first pattern nothing reaches.
pub fn of_match(patterns: &[Pattern]) -> Result<Vec<Step>, usize> {
    let mut bound = BoundSlots::default();
    let mut steps = Vec::with_capacity(patterns.len());
    if let Some(root) = patterns.first() {
        steps.push(Step {
            pattern: 0,
            reach: Reach::Root,
        });
        bound.bind_pattern(root);
    }
    extend(patterns, bound, steps)
}

/// The plan of an `exists(...)`'s patterns, starting from what is `bound` where it is evaluated.
pub fn of_exists(patterns: &[Pattern], bound: BoundSlots) -> Result<Vec<Step>, usize> {
    extend(patterns, bound, Vec::with_capacity(patterns.len()))
}

fn extend(
    patterns: &[Pattern],
    mut bound: BoundSlots,
    mut steps: Vec<Step>,
) -> Result<Vec<Step>, usize> {
    let mut done = vec![false; patterns.len()];
    for s in &steps {
        done[s.pattern] = true;
    }
    while steps.len() < patterns.len() {
        let Some(step) = next(patterns, &done, &bound) else {
            return Err(done.iter().position(|d| !d).unwrap_or(0));
        };
        done[step.pattern] = true;
        bound.bind_pattern(&patterns[step.pattern]);
        steps.push(step);
    }
    Ok(steps)
}

/// The next step: the first pattern not `done` named by a bound value, else the first with a
/// bound operand, else the first with a literal attribute test (a marker).
fn next(patterns: &[Pattern], done: &[bool], bound: &BoundSlots) -> Option<Step> {
    let open = || patterns.iter().enumerate().filter(|(j, _)| !done[*j]);
    let by_def = open().find_map(|(j, p)| {
        let s = p.bind.filter(|&s| bound.get(s) == Bound::Value)?;
        Some(Step {
            pattern: j,
            reach: Reach::Def(s),
        })
    });
    by_def
        .or_else(|| {
            open().find_map(|(j, p)| {
                p.args.iter().enumerate().find_map(|(i, a)| match &a.pat {
                    ValPat::Var { slot, .. } if bound.get(*slot) != Bound::No => Some(Step {
                        pattern: j,
                        reach: Reach::Users {
                            slot: *slot,
                            at: (!p.some && a.operand.is_none()).then_some(i as u32),
                        },
                    }),
                    _ => None,
                })
            })
        })
        .or_else(|| {
            open().find_map(|(j, p)| {
                let k = p
                    .attrs
                    .iter()
                    .position(|a| matches!(a.test, AttrTest::Equals(Expr::Lit(..))))?;
                Some(Step {
                    pattern: j,
                    reach: Reach::Marked(k),
                })
            })
        })
}

/// A pattern no step of its plan reaches, found while resolving: what the loader reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unreached {
    /// A pattern of the rule's `match` (its offset; the rule's name).
    Match { offset: usize, rule: String },
    /// A pattern of an `exists(...)` (its offset).
    Exists { offset: usize },
}

impl Unreached {
    pub fn diagnostic(&self, src: &SourceFile) -> Diagnostic {
        match self {
            Unreached::Match { offset, rule } => Diagnostic::at(
                src,
                *offset,
                format!("this pattern of rule `{rule}` shares no value with the rule's other patterns"),
            )
            .with_note("patterns after the first are found through what is bound (the op defining a bound value, or the users of one) or through a marker (an attribute test with a literal value); this one would be tried against every op")
            .with_hint("give it an operand another pattern binds (`pd_op.add_(%m, %r)` after `%r = ...`), name it with a value another pattern reads (`%r = pd_op.c_allreduce_sum(..)`), or test a marker attribute an earlier rule sets (`{sum_end: true}`)"),
            Unreached::Exists { offset } => Diagnostic::at(
                src,
                *offset,
                "this pattern of `exists(...)` shares no operand with what is already bound, nor names a bound value's defining op, nor tests a marker",
            )
            .with_hint("give it an operand the rule's match (or an earlier pattern of the `exists`) binds, e.g. exists(pd_op.scale_(%m, _)) after `match pd_op.add_(%m, _)`, or test a marker attribute an earlier rule sets (`{sum_end: true}`)"),
        }
    }
}
