//! `rules/canonicalize.rw` through the real binary on Paddle's own dumps: effectful ops are all
//! kept (same names, same counts), duplicate constants merge, published values never merge,
//! the output verifies, the bytes are the same on every run, and the canonicalized gradient
//! merge still passes `irw check` against the original program.

use crate::common::*;
use irw::SourceFile;
use irw::{parse_module, Module, Program};
use irw::{Dialect, Effect};
use std::collections::BTreeMap;

tests![
    after_ir_keeps_effects_and_merges_constants,
    canonicalize_is_deterministic,
    published_initializers_never_merge,
    master_grad_casts_written_in_place_are_kept,
    canonicalized_gradient_merge_still_checks,
    stats_report_each_saturation,
];

fn canonicalize(args: &[&str]) -> String {
    let mut all = vec!["--rules", "rules/canonicalize.rw"];
    all.extend_from_slice(args);
    let out = run_irw(&all);
    assert!(
        out.status.success(),
        "irw failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

fn fixture(name: &str) -> String {
    paddle_fixtures().join(name).to_string_lossy().into_owned()
}

fn parse(name: &str, text: &str) -> Module {
    parse_module(&SourceFile::new(name, text)).expect("output parses")
}

/// Op name -> count, for the ops of `prog` that are not pure (effectful, unknown, regions).
fn effectful(m: &Module, prog: &Program) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for op in prog.walk() {
        let name = m.ctx.str(prog.op_name(op)).to_string();
        if Dialect::get().effect(&name) != Effect::Pure {
            *out.entry(name).or_default() += 1;
        }
    }
    out
}

fn count_lines(text: &str, needle: &str) -> usize {
    text.lines().filter(|l| l.contains(needle)).count()
}

fn after_ir_keeps_effects_and_merges_constants() {
    let input = std::fs::read_to_string(fixture("after.ir")).unwrap();
    let out = canonicalize(&[&fixture("after.ir")]);
    let before = parse("after.ir", &input);
    let after = parse("out.ir", &out);
    irw::verify_module(&after).expect("output verifies");
    assert_eq!(
        effectful(&before, &before.main),
        effectful(&after, &after.main)
    );
    let quarter = "\"pd_op.full\" () {dtype:float32,op_role:2,place:Place(cpu),shape:[1],stop_gradient:[true],value:0.25}";
    assert_eq!(count_lines(&input, quarter), 6);
    assert_eq!(count_lines(&out, quarter), 1);
    assert!(out.num_ops_hint() < input.num_ops_hint());
}

trait OpsHint {
    fn num_ops_hint(&self) -> usize;
}

impl OpsHint for String {
    /// Lines that define or run an op.
    fn num_ops_hint(&self) -> usize {
        self.lines().filter(|l| l.contains(") = \"")).count()
    }
}

fn canonicalize_is_deterministic() {
    let a = canonicalize(&[&fixture("after_256.ir")]);
    let b = canonicalize(&[&fixture("after_256.ir")]);
    assert_eq!(a, b);
    let c = canonicalize(&[
        &fixture("after.ir"),
        "--startup",
        &fixture("startup_after.ir"),
    ]);
    let d = canonicalize(&[
        &fixture("after.ir"),
        "--startup",
        &fixture("startup_after.ir"),
    ]);
    assert_eq!(c, d);
}

fn published_initializers_never_merge() {
    // linear_0.b_0 and linear_1.b_0 start as the same `full 0 : tensor<16xf32>`; Paddle renames
    // a published value to its name, so one value cannot stand for both.
    let input = std::fs::read_to_string(fixture("startup_after.ir")).unwrap();
    let out = canonicalize(&[
        &fixture("after.ir"),
        "--startup",
        &fixture("startup_after.ir"),
    ]);
    let m = parse("out.ir", &out);
    let startup = m.startup.as_ref().expect("startup kept");
    let mut published = Vec::new();
    for op in startup.walk() {
        let name = m.ctx.str(startup.op_name(op));
        if name == "builtin.set_parameter" || name == "builtin.shadow_output" {
            published.push(startup.operand(op, 0).expect("published value"));
        }
    }
    let n = published.len();
    published.sort();
    published.dedup();
    assert_eq!(published.len(), n, "a value is published twice");
    assert_eq!(
        count_lines(&input, "builtin.set_parameter") + count_lines(&input, "builtin.shadow_output"),
        n
    );
    assert!(!out.contains("__irw_published"));
}

fn master_grad_casts_written_in_place_are_kept() {
    // Paddle's master-grad gradient merge leaves `cast(buffer) {dtype: float32}` on f32 buffers,
    // and scales the cast's result in place: removing the cast would scale the buffer itself.
    let input = std::fs::read_to_string(fixture("master_grad_after.ir")).unwrap();
    let out = canonicalize(&[&fixture("master_grad_after.ir")]);
    let m = parse("out.ir", &out);
    irw::verify_module(&m).expect("output verifies");
    assert_eq!(
        count_lines(&input, "master_grad_cast:true"),
        count_lines(&out, "master_grad_cast:true")
    );
    assert!(count_lines(&out, "master_grad_cast:true") > 0);
}

fn canonicalized_gradient_merge_still_checks() {
    let dir = std::env::temp_dir().join(format!("irw-canon-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rewritten = dir.join("canon.ir");
    let out = run_irw(&[
        "--rules",
        "rules/canonicalize.rw",
        &fixture("after.ir"),
        "--startup",
        &fixture("startup_after.ir"),
        "-o",
        &rewritten.to_string_lossy(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run_irw(&[
        "check",
        &fixture("before.ir"),
        "--startup",
        &fixture("startup_before.ir"),
        "--rewritten",
        &rewritten.to_string_lossy(),
        "--k-steps",
        "4",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("result: PASS"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn stats_report_each_saturation() {
    let out = run_irw(&[
        "--rules",
        "rules/canonicalize.rw",
        "--stats",
        &fixture("after.ir"),
        "--startup",
        &fixture("startup_after.ir"),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    for want in [
        "e-graph phase canonicalize (main):",
        "e-graph phase canonicalize (startup):",
        "e-nodes /",
        "saturated after",
        "e-graph time: build",
    ] {
        assert!(err.contains(want), "--stats lacks `{want}`:\n{err}");
    }
}
