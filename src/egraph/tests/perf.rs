//! The e-graph on the 6 667-op `after_256.ir`: CSE plus the canonicalization rules, timed per
//! phase; the bound is only asserted in release builds (`cargo test --release`).

use super::all_rules;
use crate::egraph::{saturate, Options, Outcome};
use crate::ir::{parse_module, print_module, Which};
use crate::SourceFile;
use std::time::Instant;

#[test]
fn after_256_saturates_quickly_and_deterministically() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/fixtures/paddle/after_256.ir");
    let text = std::fs::read_to_string(&path).expect("fixture is readable");
    let run = || {
        let mut m = parse_module(&SourceFile::new("after_256.ir", text.clone())).expect("parses");
        let t = Instant::now();
        let r = saturate(&mut m, Which::Main, &all_rules(), &Options::default()).expect("ok");
        (t.elapsed(), r, print_module(&m))
    };
    let (elapsed, r, out) = run();
    println!(
        "after_256.ir: saturate {:.1} ms\n{r}",
        elapsed.as_secs_f64() * 1e3
    );
    assert_eq!(r.outcome, Outcome::Saturated);
    assert_eq!(r.ops_before, 6667);
    assert!(r.ops_after < r.ops_before, "duplicates merge");
    assert_eq!(r.elab.created, 0, "nothing in this program needs a new op");
    if !cfg!(debug_assertions) {
        assert!(elapsed.as_secs_f64() < 0.5, "took {elapsed:?}");
    }
    let (_, _, again) = run();
    assert!(out == again, "two runs print different bytes");
}

/// README, Limits: extraction does at most 64 steps of work per e-node (plus a fixed 2^20). A
/// chain of 5000 `add`s, each also written commuted by a rule: every class has two nodes whose
/// DAG costs each explore up to 1024 classes below, about 9·10^6 steps unbounded. The budget
/// of 64 × 10^4 e-nodes + 2^20 is used up, not passed, and the program is still written.
#[test]
fn extraction_work_is_bounded_per_e_node() {
    use crate::egraph::extract::{PASS2_WORK_BASE, PASS2_WORK_PER_NODE};
    let mut text = String::from(
        "{\n    (%0) = \"pd_op.data\" () {dtype:float32,name:\"x\",place:Place(undefined:0),shape:[4],stop_gradient:[true]} : () -> tensor<4xf32>\n    (%1) = \"pd_op.data\" () {dtype:float32,name:\"c\",place:Place(undefined:0),shape:[4],stop_gradient:[true]} : () -> tensor<4xf32>\n",
    );
    let n = 5000;
    for i in 0..n {
        let prev = if i == 0 { 0 } else { i + 1 };
        text.push_str(&format!(
            "    (%{}) = \"pd_op.add\" (%{prev}, %1) {{}} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n",
            i + 2
        ));
    }
    text.push_str(&format!(
        "    () = \"builtin.shadow_output\" (%{}) {{output_name:\"y\"}} : (tensor<4xf32>) -> \n}}\n",
        n + 1
    ));
    let dir = tempfile::tempdir().unwrap();
    let rw = dir.path().join("comm.rw");
    std::fs::write(
        &rw,
        "phase p {\n    // add commutes\n    rewrite comm: pd_op.add(%a, %b) => pd_op.add(%b, %a) {};\n}\n",
    )
    .unwrap();
    let rules = crate::rules::load(&[rw], &[]).unwrap_or_else(|d| panic!("{d}"));
    let mut m = crate::ir::parse_module(&crate::SourceFile::new("chain.ir", text))
        .unwrap_or_else(|d| panic!("{d}"));
    let stats = crate::rewrite::apply(&mut m, &rules, &Default::default())
        .unwrap_or_else(|d| panic!("{d}"));
    let r = &stats.egraph[0].report;
    assert_eq!(
        r.extract_work_limit,
        r.nodes * PASS2_WORK_PER_NODE + PASS2_WORK_BASE
    );
    assert_eq!((PASS2_WORK_PER_NODE, PASS2_WORK_BASE), (64, 1 << 20));
    assert!(r.nodes > 2 * n, "{} e-nodes", r.nodes);
    assert_eq!(
        r.extract_work, r.extract_work_limit,
        "the budget was not used up: {} of {}",
        r.extract_work, r.extract_work_limit
    );
    crate::dialect::verify_module(&m).unwrap_or_else(|e| panic!("{}", e.message));
    assert_eq!(m.main.num_ops(), n + 3);
}
