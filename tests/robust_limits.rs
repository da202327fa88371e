//! Resource limits: every input that could exhaust the stack, memory or time is refused with a
//! clear message (never a crash), and inputs right at a limit still work.
//!
//! - bracket nesting on a line (`MAX_NESTING`) and region nesting (`MAX_REGION_DEPTH`) in
//!   programs, far beyond the limits (100 000 levels) and exactly at them;
//! - operator chains and bracket nesting in rule files (`rules::limits`), and interpolations in
//!   rule-file strings (linear time);
//! - `--max-input-size` for files and standard input;
//! - `--timeout` for rewriting.
//!
//! These run in test threads, whose stack (2 MiB) is a quarter of the binary's main thread's.

mod common;
use common::*;

use irw::ir::parse::{MAX_NESTING, MAX_REGION_DEPTH};
use irw::ir::{parse_module, print_module, verify_module};
use irw::SourceFile;
use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn parse_err(text: &str) -> String {
    match parse_module(&SourceFile::new("t.ir", text)) {
        Ok(_) => panic!("parsed:\n{}", &text[..text.len().min(300)]),
        Err(d) => d.to_string(),
    }
}

#[test]
fn bracket_nesting_far_beyond_the_limit_is_refused_on_every_kind_of_line() {
    let deep =
        |open: &str, close: &str| format!("{}1{}", open.repeat(100_000), close.repeat(100_000));
    let cases = [
        format!(
            "{{\n    (%0) = \"t.op\" () {{a:{}}} : () -> tensor<f32>\n}}\n",
            deep("[", "]")
        ),
        format!(
            "{{\n    (%0) = \"t.op\" () {{}} : () -> {}\n}}\n",
            deep("vec[", "]")
        ),
        format!(
            "{{\n    ^kw:\n        %kwarg_x {{a:{}}}\n}}\n",
            deep("{b:", "}")
        ),
        format!(
            "{{\n    (%0) = \"t.op\" () {{}} : () -> tensor<b>\n    () = \"pd_op.while\" (cond=%0) {{ \n    ^%arg_0 {{a:{}}}\n    }}\n}}\n",
            deep("[", "]")
        ),
    ];
    for text in &cases {
        let e = parse_err(text);
        assert!(
            e.contains(&format!("nested deeper than {MAX_NESTING} levels")),
            "{e}"
        );
    }
}

/// `depth` nested `pd_op.if` ops, each reading the condition defined at the top, indented as
/// the printer indents them up to `indent_cap` levels (the parser ignores indentation; a
/// 100 000-level program indented in full would be 20 GB).
fn nested_ifs(depth: usize, indent_cap: usize) -> String {
    let mut s = String::from(
        "{\n    (%0) = \"pd_op.full\" () {dtype:bool,place:Place(cpu),shape:[1],stop_gradient:[true],value:1} : () -> tensor<1xb>\n",
    );
    for d in 0..depth {
        let ind = "    ".repeat((d + 1).min(indent_cap));
        s.push_str(&format!("{ind}() = \"pd_op.if\" (%0) {{}} ->  {{\n"));
    }
    for d in (0..depth).rev() {
        let ind = "    ".repeat((d + 1).min(indent_cap));
        s.push_str(&format!("{ind}}}\n"));
    }
    s.push_str("}\n");
    s
}

#[test]
fn region_nesting_beyond_the_limit_is_refused() {
    let e = parse_err(&nested_ifs(100_000, 1));
    assert!(
        e.contains(&format!(
            "regions nested deeper than {MAX_REGION_DEPTH} levels"
        )),
        "{e}"
    );
    let e = parse_err(&nested_ifs(MAX_REGION_DEPTH, usize::MAX));
    assert!(e.contains("regions nested deeper"), "{e}");
}

#[test]
fn the_deepest_accepted_program_parses_verifies_prints_and_rewrites() {
    let depth = MAX_REGION_DEPTH - 1;
    let text = nested_ifs(depth, usize::MAX);
    let m =
        parse_module(&SourceFile::new("deep.ir", text.as_str())).unwrap_or_else(|d| panic!("{d}"));
    verify_module(&m).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(print_module(&m), text);
    let sets = [("k_steps".to_string(), "4".to_string())];
    for f in ["grad_merge.rw", "hoist_reduce.rw", "master_grad.rw"] {
        let rs = irw::rules::load(
            &[format!("rules/{f}").into()],
            &sets[..usize::from(f == "grad_merge.rw")],
        )
        .unwrap_or_else(|d| panic!("{d}"));
        let mut m2 = m.clone();
        irw::rewrite::apply(&mut m2, &rs, &Default::default()).unwrap_or_else(|d| panic!("{d}"));
        verify_module(&m2).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            print_module(&m2),
            text,
            "{f} changed a program without training ops"
        );
    }
}

#[test]
fn rule_files_with_long_operator_chains_are_refused_not_overflowed() {
    for text in [
        format!("param k: int = 1{};", "+1".repeat(100_000)),
        format!("param k: int = {}1;", "-".repeat(100_000)),
        format!("param k: bool = {}true;", "not ".repeat(100_000)),
        format!(
            "param k: int = {}1{};",
            "(".repeat(100_000),
            ")".repeat(100_000)
        ),
        format!("param k: string = \"{{{}1}}\";", "-".repeat(100_000)),
    ] {
        let e = irw::rules::load_str("t.rw", &text, std::path::Path::new("rules"), &[])
            .err()
            .map(|d| d.to_string())
            .unwrap_or_default();
        assert!(
            e.contains("more than 256 operators") || e.contains("nested deeper than 64"),
            "{e}"
        );
    }
}

#[test]
fn interpolations_in_rule_files_cost_linear_time() {
    // 40 000 interpolations in a 1.4 MB file: linear, well under a second; the former
    // implementation re-lexed the whole file before each one (hours).
    let rule = "// r\nrule rN { match %o = optimizer(param: %p, grad: %g); where \"{name(%p)}{name(%g)}\" == \"x\"; erase %o; }\n";
    let mut text = String::from("phase p {\n");
    for i in 0..20_000 {
        text.push_str(&rule.replace("rN", &format!("r{i}")));
    }
    text.push_str("}\n");
    let t = Instant::now();
    let rs = irw::rules::load_str("big.rw", &text, std::path::Path::new("rules"), &[])
        .unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(rs.num_rules(), 20_000);
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "took {:?}",
        t.elapsed()
    );
    // Spans inside interpolations still point into the file.
    let bad = "phase p {\n// r\nrule r { match %o = optimizer(param: %p); where \"{nme(%p)}\" == \"x\"; erase %o; }\n}\n";
    let e = irw::rules::load_str("bad.rw", bad, std::path::Path::new("rules"), &[])
        .err()
        .map(|d| d.to_string())
        .unwrap_or_default();
    let col = bad.lines().nth(2).unwrap().find("nme").unwrap() + 1;
    assert!(e.starts_with(&format!("bad.rw:3:{col}: error:")), "{e}");
}

// ---- command-line limits -------------------------------------------------------------------

fn fixture(name: &str) -> String {
    paddle_fixtures().join(name).to_string_lossy().into_owned()
}

#[test]
fn max_input_size_refuses_larger_files_and_accepts_one_at_the_limit() {
    let f = fixture("before.ir");
    let len = std::fs::metadata(&f).unwrap().len();
    let out = run_irw(&["--max-input-size", &(len - 1).to_string(), &f]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(out.stdout.is_empty());
    assert!(
        err.contains(&format!(
            "is larger than the input size limit of {} bytes",
            len - 1
        )),
        "{err}"
    );
    let out = run_irw(&["--max-input-size", &len.to_string(), &f]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Suffixes, and the flag after a subcommand.
    let out = run_irw(&["diff", "--max-input-size", "1K", &f, &f]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("limit of 1 KiB"), "{err}");
    let out = run_irw(&["--max-input-size", "12Q", &f]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn max_input_size_bounds_standard_input() {
    let text = std::fs::read(fixture("before.ir")).unwrap();
    let mut child = irw()
        .args(["--max-input-size", "4K", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // irw stops reading at the limit: a closed pipe is fine here.
    let _ = stdin.write_all(&text);
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("<stdin> is larger than the input size limit of 4 KiB"),
        "{err}"
    );
}

#[test]
fn timeout_stops_rewriting_with_an_error_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("out.ir");
    std::fs::write(&out_path, "old\n").unwrap();
    let f = fixture("before.ir");
    let o = out_path.to_string_lossy().into_owned();
    let args = ["--rules", "rules/grad_merge.rw", "--set", "k_steps=4"];
    let out = run_irw(&[&args[..], &["--timeout", "0", &f, "-o", &o]].concat());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("stopped by the time limit (--timeout)"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&out_path).unwrap(), "old\n");
    let out = run_irw(&[&args[..], &["--timeout", "600", &f, "-o", &o]].concat());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::read_to_string(&out_path)
        .unwrap()
        .contains("@GRAD@MERGE"));
    let out = run_irw(&["--timeout", "soon", &f]);
    assert_eq!(out.status.code(), Some(2));
}
