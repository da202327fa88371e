//! The e-graph with no rules: identity on programs with nothing to merge, CSE on the real
//! Paddle dump, effectful ops kept in order, determinism, and in-place writes respected.

use crate::egraph::{saturate, Options};
use crate::ir::{parse_module, print_module, Module, Which};
use crate::test_support::*;
use crate::SourceFile;

fn load(name: &str) -> (String, Module) {
    let path = paddle_fixtures().join(name);
    let text = std::fs::read_to_string(&path).expect("fixture is readable");
    let m = parse_module(&SourceFile::new(path.display().to_string(), text.clone()))
        .expect("fixture parses");
    (text, m)
}

fn parse(text: &str) -> Module {
    parse_module(&SourceFile::new("t.ir", text)).expect("test input parses")
}

/// The op lines of a printed program with `%N` names erased (names are renumbered on print).
fn op_names(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let s = l.find('"')?;
            let e = l[s + 1..].find('"')? + s + 1;
            Some(l[s + 1..e].to_string())
        })
        .collect()
}

fn effectful(names: &[String]) -> Vec<String> {
    let d = crate::dialect::Dialect::get();
    names
        .iter()
        .filter(|n| !d.effect(n).is_pure())
        .cloned()
        .collect()
}

#[test]
fn no_rules_without_cse_is_the_identity_on_every_fixture() {
    let mut files = files_with_ext(&paddle_fixtures(), "ir");
    files.retain(|f| !f.ends_with("after_256.ir")); // covered by perf.rs
    assert!(files.len() > 10);
    for path in files {
        let text = std::fs::read_to_string(&path).expect("fixture is readable");
        let mut m = parse_module(&SourceFile::new(path.display().to_string(), text.clone()))
            .expect("fixture parses");
        for which in [Which::Main, Which::Startup] {
            if m.program(which).is_none() {
                continue;
            }
            let opts = Options::default().with_cse(false);
            let r = saturate(&mut m, which, &[], &opts).expect("saturates");
            assert_eq!(
                (r.elab.erased, r.elab.created),
                (0, 0),
                "{}",
                path.display()
            );
        }
        assert_eq!(print_module(&m), text, "{} changed", path.display());
    }
}

#[test]
fn regions_ir_has_nothing_to_merge_at_top_level_and_comes_back_unchanged() {
    let (text, mut m) = load("regions.ir");
    let r = saturate(&mut m, Which::Main, &[], &Options::default()).expect("saturates");
    assert_eq!(r.elab.erased, 0);
    assert_eq!(print_module(&m), text);
    // The region ops (and everything in them) are skeleton ops.
    assert!(r.skeleton_ops >= 3);
}

#[test]
fn after_ir_cse_merges_duplicate_constants_and_keeps_effects_in_order() {
    let (text, mut m) = load("after.ir");
    let before_names = op_names(&text);
    let r = saturate(&mut m, Which::Main, &[], &Options::default()).expect("saturates");
    let out = print_module(&m);
    let after_names = op_names(&out);

    // Every effectful op is still there, in the same order.
    assert_eq!(effectful(&before_names), effectful(&after_names));

    // The six `full 0.25` (op_role 2) became one.
    let quarter = |t: &str| {
        t.lines()
            .filter(|l| l.contains("\"pd_op.full\"") && l.contains("value:0.25"))
            .count()
    };
    assert_eq!(quarter(&text), 6);
    assert_eq!(quarter(&out), 1);

    // The 18 op_role-2 `full_int_array` became one; the op_role-0 one stays separate
    // (attributes differ).
    let fia = |t: &str, role: &str| {
        t.lines()
            .filter(|l| l.contains("\"pd_op.full_int_array\"") && l.contains(role))
            .count()
    };
    assert_eq!(fia(&text, "op_role:2"), 18);
    assert_eq!(fia(&out, "op_role:2"), 1);
    assert_eq!(fia(&out, "op_role:0"), 1);
    // The five `full 0` (op_role 2) merge too.
    let zero = |t: &str| {
        t.lines()
            .filter(|l| l.contains("\"pd_op.full\"") && l.contains("value:0}"))
            .count()
    };
    assert_eq!(zero(&text), 6);
    assert_eq!(zero(&out), 1);

    assert_eq!(r.elab.created, 0);
    assert_eq!(r.ops_before - r.ops_after, r.elab.erased);
    assert_eq!(r.elab.erased, 5 + 17 + 5);
    // Merged duplicates stay at their first occurrence: the single `full 0.25` is still the
    // line right before the first `scale_`, as in the input.
    let lines: Vec<&str> = out.lines().collect();
    let first_scale = lines
        .iter()
        .position(|l| l.contains("\"pd_op.scale_\""))
        .expect("scale_ kept");
    assert!(lines[first_scale - 1].contains("value:0.25"));
}

#[test]
fn saturation_is_deterministic() {
    let (_, mut a) = load("after.ir");
    let (_, mut b) = load("after.ir");
    saturate(&mut a, Which::Main, &[], &Options::default()).expect("saturates");
    saturate(&mut b, Which::Main, &[], &Options::default()).expect("saturates");
    assert_eq!(print_module(&a), print_module(&b));
}

#[test]
fn reads_across_an_in_place_write_do_not_merge() {
    // %2 and %4 read %kwarg_m before and after `add_` writes it: they are different values.
    let text = "{\n    ^kw:\n        %kwarg_m {persistable:true}\n    (%0) = \"pd_op.full\" () {dtype:float32,place:Place(cpu),shape:[4],value:1} : () -> tensor<4xf32>\n    (%1) = \"pd_op.relu\" (%kwarg_m) {} : (tensor<4xf32>) -> tensor<4xf32>\n    (%2) = \"pd_op.add_\" (%kwarg_m, %0) {} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n    (%3) = \"pd_op.relu\" (%kwarg_m) {} : (tensor<4xf32>) -> tensor<4xf32>\n    () = \"builtin.shadow_output\" (%1) {output_name:\"a\"} : (tensor<4xf32>) -> \n    () = \"builtin.shadow_output\" (%3) {output_name:\"b\"} : (tensor<4xf32>) -> \n}\n";
    let mut m = parse(text);
    let r = saturate(&mut m, Which::Main, &[], &Options::default()).expect("saturates");
    assert_eq!(r.elab.erased, 0);
    assert_eq!(print_module(&m), text);
}

#[test]
fn a_pure_op_whose_result_is_written_in_place_stays_put() {
    // Two identical `full 0` buffers, one of which is then accumulated into in place: merging
    // them would make the other one change too.
    let text = "{\n    (%0) = \"pd_op.full\" () {dtype:float32,place:Place(cpu),shape:[4],value:0} : () -> tensor<4xf32>\n    (%1) = \"pd_op.full\" () {dtype:float32,place:Place(cpu),shape:[4],value:0} : () -> tensor<4xf32>\n    (%2) = \"pd_op.add_\" (%0, %1) {} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n    () = \"builtin.shadow_output\" (%0) {output_name:\"a\"} : (tensor<4xf32>) -> \n    () = \"builtin.shadow_output\" (%1) {output_name:\"b\"} : (tensor<4xf32>) -> \n}\n";
    let mut m = parse(text);
    let r = saturate(&mut m, Which::Main, &[], &Options::default()).expect("saturates");
    assert_eq!(
        r.skeleton_ops, 4,
        "the written `full` is kept in the skeleton"
    );
    assert_eq!(print_module(&m), text);
}

#[test]
fn startup_program_saturates_too() {
    let (_, mut m) = load("startup_after.ir");
    let before = m.main.num_ops();
    saturate(&mut m, Which::Main, &[], &Options::default()).expect("saturates");
    assert!(m.main.num_ops() <= before);
    let mut none = parse("{\n}\n");
    assert!(saturate(&mut none, Which::Startup, &[], &Options::default()).is_err());
}

#[test]
fn duplicate_multi_result_ops_merge_through_projections() {
    let text = "{
    (%0) = \"pd_op.data\" () {dtype:float32,name:\"x\",place:Place(undefined:0),shape:[2,4],stop_gradient:[true]} : () -> tensor<2x4xf32>
    (%1) = \"pd_op.data\" () {dtype:float32,name:\"b\",place:Place(undefined:0),shape:[4],stop_gradient:[true]} : () -> tensor<4xf32>
    (%2) = \"pd_op.data\" () {dtype:float32,name:\"g\",place:Place(undefined:0),shape:[2,4],stop_gradient:[true]} : () -> tensor<2x4xf32>
    (%3, %4) = \"pd_op.add_grad\" (%0, %1, %2) {axis:-1} : (tensor<2x4xf32>, tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>, tensor<4xf32>
    (%5, %6) = \"pd_op.add_grad\" (%0, %1, %2) {axis:-1} : (tensor<2x4xf32>, tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>, tensor<4xf32>
    () = \"builtin.shadow_output\" (%6) {output_name:\"db\"} : (tensor<4xf32>) -> 
    () = \"builtin.shadow_output\" (%5) {output_name:\"dx\"} : (tensor<2x4xf32>) -> 
}
";
    let mut m = parse(text);
    let r = saturate(&mut m, Which::Main, &[], &Options::default()).expect("saturates");
    assert_eq!(r.elab.erased, 1);
    let out = print_module(&m);
    assert_eq!(out.matches("add_grad").count(), 1);
    assert!(out.contains("\"builtin.shadow_output\" (%4)"), "{out}");
    assert!(out.contains("\"builtin.shadow_output\" (%3)"), "{out}");
}
