//! A structural rule's `match` must be connected: every pattern after the first reachable from
//! the others through shared values, exactly as the matcher reaches it.
//!
//! Why at load: the matcher (`rewrite/matcher.rs`, `Searcher::pick`) matches the first pattern
//! at the worklist's op and finds each later pattern from what is bound, either as the defining
//! op of a bound value (the pattern's `%r =` name is an operand of a matched pattern) or among
//! the users of a bound value (one of the pattern's own operands, not a nested pattern's, is a
//! bound name). A pattern neither way reaches is tried against every op of the program, for
//! every partial match: a product search that is quadratic in the program size and, worse,
//! usually not what the author meant (a typo in a shared variable silently makes it). The rule
//! is refused instead, at the pattern nothing reaches.
//!
//! The check mirrors `pick` rule by rule. It is a fixpoint (a pattern may become reachable
//! through one matched after it in the text); `pick` takes the first reachable pattern each
//! time, which reaches the same set.

use super::ast::{File, Item, OpPattern, Rule, StructRule, ValPat};
use crate::diag::{Diagnostic, SourceFile};
use indexmap::IndexSet;

/// Refuses the first structural rule of a (desugared, resolved) file whose `match` patterns are
/// not connected. Run after the resolver's checks of the file, so that a rule with a plainer
/// mistake (`%o` naming two ops) gets that error instead.
pub fn check_file(src: &SourceFile, f: &File) -> Result<(), Diagnostic> {
    for item in &f.items {
        let rules: &[Rule] = match item {
            Item::Phase(p) => &p.rules,
            Item::Rule(r) => std::slice::from_ref(r),
            _ => continue,
        };
        for r in rules {
            if let Rule::Structural(s) = r {
                check(src, s)?;
            }
        }
    }
    Ok(())
}

/// Refuses a structural rule whose `match` patterns are not connected.
pub fn check(src: &SourceFile, r: &StructRule) -> Result<(), Diagnostic> {
    let pats: Vec<&OpPattern> = r
        .clauses
        .iter()
        .filter_map(|c| match c {
            super::ast::Clause::Match(ps) => Some(ps.iter()),
            _ => None,
        })
        .flatten()
        .collect();
    if pats.len() < 2 {
        return Ok(());
    }
    // Names bound to a value (operand variables) and to anything (values and op names).
    let mut values: IndexSet<&str> = IndexSet::new();
    let mut all: IndexSet<&str> = IndexSet::new();
    let mut reached = vec![false; pats.len()];
    reached[0] = true;
    bind(pats[0], &mut values, &mut all);
    loop {
        let mut progress = false;
        for (j, p) in pats.iter().enumerate() {
            if reached[j] {
                continue;
            }
            let by_def = p
                .bind
                .as_ref()
                .is_some_and(|b| values.contains(b.name.as_str()));
            let by_use = p.args.iter().any(
                |a| matches!(&a.pat, ValPat::Var { name, .. } if all.contains(name.name.as_str())),
            );
            if by_def || by_use {
                reached[j] = true;
                progress = true;
                bind(p, &mut values, &mut all);
            }
        }
        if !progress {
            break;
        }
    }
    match reached.iter().position(|r| !r) {
        None => Ok(()),
        Some(j) => Err(Diagnostic::at(
            src,
            pats[j].span.0,
            format!(
                "this pattern of rule `{}` shares no value with the rule's other patterns",
                r.name.name
            ),
        )
        .with_note("patterns after the first are found through what is bound: the op defining a bound value, or the users of one; this one would be tried against every op")
        .with_hint("give it an operand another pattern binds (`pd_op.add_(%m, %r)` after `%r = ...`), or name it with a value another pattern reads (`%r = pd_op.c_allreduce_sum(..)`)")),
    }
}

/// Adds what a matched pattern binds: its operand variables (nested patterns included) as
/// values, its op names as names.
fn bind<'a>(p: &'a OpPattern, values: &mut IndexSet<&'a str>, all: &mut IndexSet<&'a str>) {
    if let Some(b) = &p.bind {
        all.insert(&b.name);
    }
    for a in &p.args {
        match &a.pat {
            ValPat::Var { name, .. } => {
                values.insert(&name.name);
                all.insert(&name.name);
            }
            ValPat::Wild(_) => {}
            ValPat::Op(inner) => bind(inner, values, all),
        }
    }
}
