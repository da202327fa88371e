//! `irw check` accepts Paddle's own gradient-merge rewrites and rejects deliberately broken ones,
//! naming the tensors that go wrong (library API and the real binary).

use crate::common::note;
use std::path::PathBuf;
use std::process::Command;

use irw::command::{load_feed, Limits};
use irw::executor::{check, CheckOptions, CheckReport};
use irw::SourceFile;
use irw::{parse_module, parse_startup_into, Module};

tests![
    paddles_rewrites_pass,
    paddles_roleless_rewrite_fails,
    scale_missing_is_named,
    scale_twice_is_named,
    scale_per_microstep_is_named,
    buffer_never_zeroed_is_named,
    allreduce_dropped_is_named,
    update_before_the_boundary_is_caught,
    update_applied_twice_is_caught_at_the_parameter,
    cli_check_exit_codes_and_table,
    cli_run_prints_loss_and_dumps,
    bf16_accumulation_buffer_is_named,
];

fn paddle(f: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/fixtures/paddle")
        .join(f)
}

fn ours(f: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/exec_fixtures")
        .join(f)
}

fn load(main: PathBuf, startup: PathBuf) -> Module {
    let read = |p: &PathBuf| {
        SourceFile::new(
            p.display().to_string(),
            std::fs::read_to_string(p).expect("readable"),
        )
    };
    let mut m = parse_module(&read(&main)).expect("parses");
    parse_startup_into(&mut m, &read(&startup)).expect("startup parses");
    m
}

fn run_check(orig: (&str, &str), rewritten: (PathBuf, &str), feed: Option<&str>) -> CheckReport {
    let original = load(paddle(orig.0), paddle(orig.1));
    let rew = load(rewritten.0, paddle(rewritten.1));
    let feed = feed.map(|f| {
        load_feed(
            &paddle(f).display().to_string(),
            &Limits::default(),
            u64::MAX,
            &original,
            Default::default(),
        )
        .expect("feed")
    });
    let report = check(
        &original,
        &rew,
        &CheckOptions {
            k_steps: 4,
            feed,
            ..Default::default()
        },
    )
    .expect("runs");
    note(&report);
    report
}

fn failing<'a>(r: &'a CheckReport, kind: &str) -> Vec<&'a str> {
    r.failures()
        .filter(|row| row.kind == kind)
        .map(|row| row.tensor.as_str())
        .collect()
}

const PARAMS: [&str; 6] = [
    "linear_2.b_0",
    "linear_2.w_0",
    "linear_1.b_0",
    "linear_1.w_0",
    "linear_0.b_0",
    "linear_0.w_0",
];

/// A (main, startup) pair of fixture names.
type Pair = (&'static str, &'static str);

fn paddles_rewrites_pass() {
    let cases: &[(Pair, Pair, Option<&str>)] = &[
        (
            ("before.ir", "startup_before.ir"),
            ("after.ir", "startup_after.ir"),
            None,
        ),
        (
            ("before.ir", "startup_before.ir"),
            ("after.ir", "startup_after.ir"),
            Some("sgd.numerics.json"),
        ),
        (
            ("before_adam.ir", "startup_before_adam.ir"),
            ("after_adam.ir", "startup_after_adam.ir"),
            Some("adam.numerics.json"),
        ),
        (
            ("allreduce_sync1_before.ir", "startup_before.ir"),
            ("allreduce_sync1_after.ir", "startup_after.ir"),
            None,
        ),
        (
            ("allreduce_sync1_before.ir", "startup_before.ir"),
            ("allreduce_sync1_rawgrad_after.ir", "startup_after.ir"),
            None,
        ),
        (
            ("master_grad_before.ir", "master_grad_startup_before.ir"),
            ("master_grad_after.ir", "master_grad_startup_after.ir"),
            None,
        ),
    ];
    for &(orig, (main, startup), feed) in cases {
        let r = run_check(orig, (paddle(main), startup), feed);
        assert!(r.passed(), "{main} should pass:\n{r}");
        assert!(
            r.rows.iter().filter(|row| row.kind == "grad").count() >= 4,
            "{main}: grads compared"
        );
        assert!(
            r.rows.iter().any(|row| row.kind == "buffer"),
            "{main}: buffers checked"
        );
    }
    // programs with collectives run on 2 ranks by default
    let r = run_check(
        ("allreduce_sync1_before.ir", "startup_before.ir"),
        (paddle("allreduce_sync1_after.ir"), "startup_after.ir"),
        None,
    );
    assert_eq!(r.ranks, 2);
}

fn paddles_roleless_rewrite_fails() {
    // Without op_role attributes Paddle's pass reports success but emits a wrong program.
    let r = run_check(
        ("before_noroles.ir", "startup_before.ir"),
        (paddle("after_noroles.ir"), "startup_after.ir"),
        None,
    );
    assert!(!r.passed());
    assert_eq!(failing(&r, "grad").len(), 6);
}

fn scale_missing_is_named() {
    let r = run_check(
        ("before.ir", "startup_before.ir"),
        (ours("after_scale_missing.ir"), "startup_after.ir"),
        None,
    );
    assert_eq!(failing(&r, "grad"), PARAMS);
    assert!(r
        .failures()
        .filter(|row| row.kind == "grad")
        .all(|row| row.note.contains("4×") && row.note.contains("missing")));
    assert!(failing(&r, "buffer").is_empty());
}

fn scale_twice_is_named() {
    let r = run_check(
        ("before.ir", "startup_before.ir"),
        (ours("after_scale_twice.ir"), "startup_after.ir"),
        None,
    );
    assert_eq!(failing(&r, "grad"), PARAMS);
    assert!(r
        .failures()
        .filter(|row| row.kind == "grad")
        .all(|row| row.note.contains("applied twice")));
}

fn scale_per_microstep_is_named() {
    let r = run_check(
        ("before.ir", "startup_before.ir"),
        (ours("after_scale_per_microstep.ir"), "startup_after.ir"),
        None,
    );
    assert_eq!(failing(&r, "grad"), PARAMS);
    assert!(r
        .failures()
        .filter(|row| row.kind == "grad")
        .all(|row| row.note.contains("not by a constant factor")));
}

fn buffer_never_zeroed_is_named() {
    let r = run_check(
        ("before.ir", "startup_before.ir"),
        (ours("after_never_zeroed.ir"), "startup_after.ir"),
        None,
    );
    let want: Vec<String> = PARAMS.iter().map(|p| format!("{p}@GRAD@MERGE")).collect();
    assert_eq!(
        failing(&r, "buffer"),
        want.iter().map(String::as_str).collect::<Vec<_>>()
    );
    // the step itself is right: only the reset is missing
    assert!(failing(&r, "grad").is_empty() && failing(&r, "param").is_empty());
}

fn allreduce_dropped_is_named() {
    let r = run_check(
        ("allreduce_sync1_before.ir", "startup_before.ir"),
        (ours("allreduce_dropped_after.ir"), "startup_after.ir"),
        None,
    );
    assert_eq!(r.ranks, 2);
    assert_eq!(failing(&r, "grad"), PARAMS);
    assert!(
        !failing(&r, "replica").is_empty(),
        "the replicas diverge without the all-reduce"
    );
    // with one rank the all-reduce is the identity and the program is right
    let original = load(
        paddle("allreduce_sync1_before.ir"),
        paddle("startup_before.ir"),
    );
    let rew = load(
        ours("allreduce_dropped_after.ir"),
        paddle("startup_after.ir"),
    );
    let one = check(
        &original,
        &rew,
        &CheckOptions {
            ranks: Some(1),
            ..Default::default()
        },
    )
    .expect("runs");
    assert!(one.passed(), "{one}");
}

/// `irw check` of `text` (an edited copy of Paddle's after.ir, with its startup program) against
/// before.ir, with the default options.
fn check_edited_after(name: &str, text: String) -> CheckReport {
    let mut rew = parse_module(&SourceFile::new(name, text)).expect("parses");
    let s = paddle("startup_after.ir");
    let st = SourceFile::new(
        s.display().to_string(),
        std::fs::read_to_string(&s).expect("readable"),
    );
    parse_startup_into(&mut rew, &st).expect("startup parses");
    let original = load(paddle("before.ir"), paddle("startup_before.ir"));
    let r = check(&original, &rew, &CheckOptions::default()).expect("runs");
    note(&r);
    r
}

fn update_before_the_boundary_is_caught() {
    // The optimize stage marked as backward: the optimizer steps on every micro-step.
    let text = std::fs::read_to_string(paddle("after.ir"))
        .expect("readable")
        .replace("op_role:2", "op_role:1");
    let r = check_edited_after("early.ir", text);
    let mut frozen = failing(&r, "frozen");
    frozen.sort();
    let mut want = PARAMS.to_vec();
    want.sort();
    assert_eq!(frozen, want);
    assert!(r
        .failures()
        .filter(|row| row.kind == "frozen")
        .all(|row| row.note.contains("micro-step 1 of 4")));
}

/// Parameters are compared with the original optimizer applied to the rewritten program's
/// gradients; an optimize stage that goes wrong on a right gradient still fails, at the
/// parameter. Here one `sgd_` runs twice.
fn update_applied_twice_is_caught_at_the_parameter() {
    let text = std::fs::read_to_string(paddle("after.ir")).expect("readable");
    let line = text
        .lines()
        .find(|l| l.contains("\"pd_op.sgd_\" (%1, %0, %50,"))
        .expect("the first sgd_ of after.ir");
    let twice = format!("{line}\n{}", line.replace("(%51, %52)", "(%900, %901)"));
    let r = check_edited_after("twice.ir", text.replace(line, &twice));
    assert!(failing(&r, "grad").is_empty());
    assert_eq!(failing(&r, "param"), ["linear_2.b_0"]);
}

fn irw(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_irw"))
        .args(args)
        .output()
        .expect("irw runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn p(path: PathBuf) -> String {
    path.display().to_string()
}

fn cli_check_exit_codes_and_table() {
    let (before, sb, sa) = (
        p(paddle("before.ir")),
        p(paddle("startup_before.ir")),
        p(paddle("startup_after.ir")),
    );
    let (code, out, err) = irw(&[
        "check",
        "--rewritten",
        &p(paddle("after.ir")),
        "--rewritten-startup",
        &sa,
        &before,
        "--startup",
        &sb,
        "--set",
        "k_steps=4",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("max abs err") && out.contains("result: PASS"),
        "{out}"
    );
    let bad = p(ours("after_scale_missing.ir"));
    let (code, out, err) = irw(&[
        "check",
        "--rewritten",
        &bad,
        "--rewritten-startup",
        &sa,
        &before,
        "--startup",
        &sb,
        "--set",
        "k_steps=4",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("FAIL linear_0.w_0 (grad)") && err.contains("linear_0.w_0 (grad)"),
        "{out}{err}"
    );
    let (code, _, err) = irw(&["check", &before]);
    assert_eq!(code, 2, "{err}");
}

fn cli_run_prints_loss_and_dumps() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dump = dir.path().join("dump.json");
    let (code, out, err) = irw(&[
        "run",
        &p(paddle("after.ir")),
        "--startup",
        &p(paddle("startup_after.ir")),
        "--feed",
        &p(paddle("sgd.numerics.json")),
        "--k-steps",
        "4",
        "--dump",
        &dump.display().to_string(),
    ]);
    assert_eq!(code, 0, "{err}");
    // Paddle's micro-batch losses (loss_micro in sgd.numerics.json)
    for l in ["2.008502", "0.827574", "1.035676", "2.838252"] {
        assert!(out.contains(l), "{out}");
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&dump).expect("dump written")).expect("json");
    assert_eq!(
        v["state"]["linear_0.w_0@GRAD@MERGE"]["shape"],
        serde_json::json!([8, 16])
    );
    // Control flow runs: pd_op.if and pd_op.while execute their regions.
    let (code, out, err) = irw(&["run", &p(paddle("regions.ir"))]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("step 0"), "{out}");
}

fn bf16_accumulation_buffer_is_named() {
    // master_grad_after.ir with its merge buffers created as bfloat16 instead of float32.
    let s = paddle("master_grad_startup_after.ir");
    let lines: Vec<String> = std::fs::read_to_string(&s)
        .expect("readable")
        .lines()
        .map(str::to_string)
        .collect();
    let startup: Vec<String> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| match lines.get(i + 1) {
            Some(next) if next.contains("@GRAD@MERGE") => {
                l.replace("dtype:float32", "dtype:bfloat16")
            }
            _ => l.clone(),
        })
        .collect();
    let m = paddle("master_grad_after.ir");
    let mut rew = parse_module(&SourceFile::new(
        m.display().to_string(),
        std::fs::read_to_string(&m).expect("readable"),
    ))
    .expect("parses");
    parse_startup_into(
        &mut rew,
        &SourceFile::new("bf16_startup.ir", startup.join("\n") + "\n"),
    )
    .expect("startup parses");
    let original = load(
        paddle("master_grad_before.ir"),
        paddle("master_grad_startup_before.ir"),
    );
    let r = check(&original, &rew, &CheckOptions::default()).expect("runs");
    note(&r);
    let bufs = failing(&r, "buffer");
    assert_eq!(bufs.len(), 4, "{r}");
    assert!(bufs.iter().all(|b| b.ends_with("@GRAD@MERGE")));
    assert!(r
        .failures()
        .filter(|row| row.kind == "buffer")
        .all(|row| row.note.contains("float32")));
}
