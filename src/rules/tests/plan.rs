//! Match plans ([`crate::rules::plan`]): the order a rule's `match` patterns and an `exists`'s
//! are found in, how each is reached, the refusal of a pattern nothing reaches, and the ids of
//! builds and `exists`.

use crate::rules::compiled::{CompiledRule, Expr, Pattern, Reach, Slot, Step, ValPat};
use crate::rules::{load_str, RuleSet};

fn load(text: &str) -> RuleSet {
    load_str("t.rw", text, std::path::Path::new("."), &[]).unwrap_or_else(|d| panic!("{d}"))
}

fn rule(set: &RuleSet, i: usize) -> &CompiledRule {
    &set.phases[0].structural[i]
}

/// The slot of the `k`th operand variable of `p`.
fn arg(p: &Pattern, k: usize) -> Slot {
    match p.args[k].pat {
        ValPat::Var { slot, .. } => slot,
        _ => panic!("operand {k} is not a variable"),
    }
}

fn step(pattern: usize, reach: Reach) -> Step {
    Step { pattern, reach }
}

/// The users of `slot` that use it at operand `at`.
fn users(slot: Slot, at: u32) -> Reach {
    Reach::Users { slot, at: Some(at) }
}

#[test]
fn later_patterns_are_reached_by_def_before_users_whatever_the_text_order() {
    let set = load(
        "// t\n\
         rule r {\n\
             match %s = pd_op.scale(%b, _),\n\
                   pd_op.multiply(%x, %w),\n\
                   %b = pd_op.relu(%x);\n\
             erase %s;\n\
         }\n",
    );
    let r = rule(&set, 0);
    let b = arg(&r.patterns[0], 0);
    let x = arg(&r.patterns[1], 0);
    // The relu names `%b`, a value the root bound: its defining op, found before the multiply,
    // which is reached only once `%x` is bound, among the users of `%x`.
    assert_eq!(
        r.plan,
        [
            step(0, Reach::Root),
            step(2, Reach::Def(b)),
            step(1, users(x, 0))
        ]
    );
}

#[test]
fn users_follow_the_first_bound_operand_of_the_first_reachable_pattern() {
    let set = load(
        "// t\n\
         rule r {\n\
             match %a = pd_op.add(%x, %y),\n\
                   %m = pd_op.multiply(%z, %y),\n\
                   pd_op.relu(%m);\n\
             erase %a;\n\
         }\n",
    );
    let r = rule(&set, 0);
    let y = arg(&r.patterns[0], 1);
    let Some(m) = r.patterns[1].bind else {
        panic!("%m names the multiply")
    };
    // `%z` is not bound when the multiply is found: its second operand `%y` is followed. The
    // relu reads `%m`, an op: its users.
    assert_eq!(
        r.plan,
        [
            step(0, Reach::Root),
            step(1, users(y, 1)),
            step(2, users(m, 0))
        ]
    );
}

#[test]
fn an_exists_starts_from_what_the_match_bound() {
    let set = load(
        "// t\n\
         rule r {\n\
             match %w = pd_op.add(%x, %y);\n\
             where exists(pd_op.multiply(%q, _), %q = pd_op.relu(%w));\n\
             where exists(%x = pd_op.relu(_));\n\
             erase %w;\n\
         }\n",
    );
    let r = rule(&set, 0);
    let (Expr::Exists(first), Expr::Exists(second)) = (&r.guards[0], &r.guards[1]) else {
        panic!("two exists guards")
    };
    let (Some(w), Some(q)) = (r.patterns[0].bind, first.patterns[1].bind) else {
        panic!("%w and %q are names")
    };
    assert_eq!(first.plan, [step(1, users(w, 0)), step(0, users(q, 0))]);
    let x = arg(&r.patterns[0], 0);
    assert_eq!(second.plan, [step(0, Reach::Def(x))]);
}

#[test]
fn a_pattern_sharing_no_value_is_reached_by_its_first_literal_attribute_test() {
    let set = load(
        "// t\n\
         rule r {\n\
             match %o = pd_op.relu(%x),\n\
                   %e = pd_op.add(_, %q) {op_role: $r, end: true, kind: 1},\n\
                   %n = pd_op.scale(%x, _);\n\
             where not exists(pd_op.sum(..) {done: true});\n\
             erase %o;\n\
         }\n",
    );
    let r = rule(&set, 0);
    let x = arg(&r.patterns[0], 0);
    // The scale reads `%x`: its users come first, although the add is first in the text. The
    // add shares no value with the others, and is reached by `end: true` (the capture of
    // `op_role` is not a literal).
    assert_eq!(
        r.plan,
        [
            step(0, Reach::Root),
            step(2, users(x, 0)),
            step(1, Reach::Marked(1))
        ]
    );
    let Expr::Unary { e: inner, .. } = &r.guards[0] else {
        panic!("a `not` guard: {:?}", r.guards[0])
    };
    let Expr::Exists(e) = &**inner else {
        panic!("an exists")
    };
    assert_eq!(e.plan, [step(0, Reach::Marked(0))]);
}

#[test]
fn a_pattern_no_step_reaches_is_refused_where_the_plan_is_made() {
    let text = "// t\n\
                rule r {\n\
                    match %a = pd_op.add(%x, %y),\n\
                          pd_op.relu(%z);\n\
                    erase %a;\n\
                }\n";
    let Err(d) = load_str("t.rw", text, std::path::Path::new("."), &[]) else {
        panic!("refused")
    };
    let shown = d.to_string();
    assert!(
        shown.contains("t.rw:4:")
            && shown.contains(
                "this pattern of rule `r` shares no value with the rule's other patterns"
            ),
        "{shown}"
    );
    let text = "// t\n\
                rule r {\n\
                    match %a = pd_op.add(%x, %y);\n\
                    where exists(pd_op.relu(%x), pd_op.relu(%z));\n\
                    erase %a;\n\
                }\n";
    let Err(d) = load_str("t.rw", text, std::path::Path::new("."), &[]) else {
        panic!("refused")
    };
    assert!(
        d.to_string()
            .contains("this pattern of `exists(...)` shares no operand with what is already bound"),
        "{d}"
    );
}

#[test]
fn builds_and_exists_are_numbered_densely_over_the_rule_set() {
    let set = load(
        "// t\n\
         rule one {\n\
             match %a = pd_op.add(%x, %y);\n\
             where exists(pd_op.relu(%x));\n\
             after %a: %r = pd_op.relu(pd_op.relu(%a) {}) {};\n\
             erase %a;\n\
         }\n\
         // t\n\
         rule two {\n\
             match %m = pd_op.multiply(%x, %y);\n\
             where exists(pd_op.relu(%x)) or exists(pd_op.relu(%y));\n\
             after %m: %r = pd_op.relu(%m) {};\n\
             erase %m;\n\
         }\n",
    );
    assert_eq!((set.builds, set.exists), (3, 3));
    let ids = |r: &CompiledRule| -> Vec<usize> {
        r.guards
            .iter()
            .flat_map(|g| match g {
                Expr::Exists(x) => vec![x.id],
                Expr::Binary { l, r, .. } => [l, r]
                    .iter()
                    .filter_map(|e| match &***e {
                        Expr::Exists(x) => Some(x.id),
                        _ => None,
                    })
                    .collect(),
                _ => vec![],
            })
            .collect()
    };
    assert_eq!(ids(rule(&set, 0)), [0]);
    assert_eq!(ids(rule(&set, 1)), [1, 2]);
}

#[test]
fn users_are_narrowed_to_a_fixed_operand_position_only() {
    let set = load(
        "// t\n\
         rule r {\n\
             match %o = pd_op.relu(%x),\n\
                   any(.., %x, ..),\n\
                   optimizer(param: %x);\n\
             erase %o;\n\
         }\n",
    );
    let r = rule(&set, 0);
    let x = arg(&r.patterns[0], 0);
    // `(.., %x, ..)` may hold it anywhere, and a named operand's position depends on the op.
    assert_eq!(
        r.plan,
        [
            step(0, Reach::Root),
            step(1, Reach::Users { slot: x, at: None }),
            step(2, Reach::Users { slot: x, at: None })
        ]
    );
}
