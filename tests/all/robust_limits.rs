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

use crate::common::*;

use irw::verify_module;
use irw::SourceFile;
use irw::{parse_module, print_module};
use irw::{MAX_NESTING, MAX_REGION_DEPTH};
use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

tests![
    bracket_nesting_far_beyond_the_limit_is_refused_on_every_kind_of_line,
    region_nesting_beyond_the_limit_is_refused,
    the_deepest_accepted_program_parses_verifies_prints_and_rewrites,
    rule_files_with_long_operator_chains_are_refused_not_overflowed,
    interpolations_in_rule_files_cost_linear_time,
    max_input_size_refuses_larger_files_and_accepts_one_at_the_limit,
    max_input_size_bounds_standard_input,
    timeout_stops_rewriting_with_an_error_and_writes_nothing,
    a_deep_equational_pattern_stops_at_the_match_limit_deterministically,
    timeout_and_egraph_time_stop_a_search_that_is_still_enumerating,
    timeout_stops_a_structural_match_over_a_value_with_800_readers,
];

fn parse_err(text: &str) -> String {
    match parse_module(&SourceFile::new("t.ir", text)) {
        Ok(_) => panic!("parsed:\n{}", &text[..text.len().min(300)]),
        Err(d) => d.to_string(),
    }
}

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

fn the_deepest_accepted_program_parses_verifies_prints_and_rewrites() {
    let depth = MAX_REGION_DEPTH - 1;
    let text = nested_ifs(depth, usize::MAX);
    let m =
        parse_module(&SourceFile::new("deep.ir", text.as_str())).unwrap_or_else(|d| panic!("{d}"));
    verify_module(&m).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(print_module(&m), text);
    let sets = [("k_steps".to_string(), "4".to_string())];
    for f in ["grad_merge.rw", "hoist_reduce.rw", "master_grad.rw"] {
        let rs = irw::load_rules(
            &[format!("rules/{f}").into()],
            &sets[..usize::from(f == "grad_merge.rw")],
        )
        .unwrap_or_else(|d| panic!("{d}"));
        let mut m2 = m.clone();
        irw::rewrite(&mut m2, &rs, &Default::default()).unwrap_or_else(|d| panic!("{d}"));
        verify_module(&m2).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            print_module(&m2),
            text,
            "{f} changed a program without training ops"
        );
    }
}

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
        let e = irw::load_rules_str("t.rw", &text, std::path::Path::new("rules"), &[])
            .err()
            .map(|d| d.to_string())
            .unwrap_or_default();
        assert!(
            e.contains("more than 256 operators") || e.contains("nested deeper than 64"),
            "{e}"
        );
    }
}

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
    let rs = irw::load_rules_str("big.rw", &text, std::path::Path::new("rules"), &[])
        .unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(rs.num_rules(), 20_000);
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "took {:?}",
        t.elapsed()
    );
    // Spans inside interpolations still point into the file.
    let bad = "phase p {\n// r\nrule r { match %o = optimizer(param: %p); where \"{nme(%p)}\" == \"x\"; erase %o; }\n}\n";
    let e = irw::load_rules_str("bad.rw", bad, std::path::Path::new("rules"), &[])
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
    // Paddle JSON (14 KB) is bounded as text is.
    let json = root().join("../shared/fixtures/paddle-json/main.json");
    let out = run_irw(&["--max-input-size", "1K", json.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("main.json is larger than the input size limit of 1 KiB"),
        "{err}"
    );
    let out = run_irw(&["--max-input-size", "12Q", &f]);
    assert_eq!(out.status.code(), Some(2));
}

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

// ---- limits inside matching ------------------------------------------------------------------

/// `x`, two `scale(x, full(1))` that differ only in the constant's place, and rules that make
/// `x`'s class hold both scales (x * 1 = x, not subsuming): a pattern of `depth` nested scales
/// then has 2^depth matches in that one class. `deep` never fires (its guard is false).
fn deep_scales(dir: &std::path::Path, depth: usize) -> (String, String) {
    let ir = "{\n    (%0) = \"pd_op.data\" () {dtype:float32,name:\"x\",place:Place(undefined:0),shape:[4,4],stop_gradient:[true]} : () -> tensor<4x4xf32>\n    (%1) = \"pd_op.full\" () {dtype:float32,place:Place(cpu),shape:[1],value:1} : () -> tensor<1xf32>\n    (%2) = \"pd_op.full\" () {dtype:float32,place:Place(undefined:0),shape:[1],value:1} : () -> tensor<1xf32>\n    (%3) = \"pd_op.scale\" (%0, %1) {bias:0,bias_after_scale:true} : (tensor<4x4xf32>, tensor<1xf32>) -> tensor<4x4xf32>\n    (%4) = \"pd_op.scale\" (%0, %2) {bias:0,bias_after_scale:true} : (tensor<4x4xf32>, tensor<1xf32>) -> tensor<4x4xf32>\n    () = \"builtin.shadow_output\" (%3) {output_name:\"a\"} : (tensor<4x4xf32>) -> \n    () = \"builtin.shadow_output\" (%4) {output_name:\"b\"} : (tensor<4x4xf32>) -> \n}\n";
    let mut pat = String::from("%x");
    for i in 0..depth {
        pat = format!("pd_op.scale({pat}, %a{i})");
    }
    let rw = format!(
        "// deep\nphase p {{\n    // x * 1 = x\n    rewrite one: pd_op.scale(%x, %s) {{bias: 0}} => %x where const(%s) == 1;\n    // never holds\n    rewrite deep: {pat} => %x where const(%a0) == 7;\n}}\n"
    );
    let (i, r) = (dir.join("deep.ir"), dir.join("deep.rw"));
    std::fs::write(&i, ir).unwrap();
    std::fs::write(&r, rw).unwrap();
    (
        i.to_string_lossy().into_owned(),
        r.to_string_lossy().into_owned(),
    )
}

fn a_deep_equational_pattern_stops_at_the_match_limit_deterministically() {
    // Unbounded, this pattern collects 16M matches (70 s, 8.9 GB): the match limit stops it
    // early, at the same point on every run.
    let dir = tempfile::tempdir().unwrap();
    let (ir, rw) = deep_scales(dir.path(), 24);
    let t = Instant::now();
    let first = run_irw(&["--rules", &rw, "--stats", "--timeout", "60", &ir]);
    let err = String::from_utf8_lossy(&first.stderr);
    assert_eq!(first.status.code(), Some(0), "{err}");
    assert!(
        err.contains("match limit hit (rule `deep` has more than 10020 matches in one iteration)"),
        "{err}"
    );
    assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
    let second = run_irw(&["--rules", &rw, "--timeout", "60", &ir]);
    assert_eq!(first.stdout, second.stdout);
    assert!(String::from_utf8_lossy(&first.stdout).contains("(%0) {output_name:\"b\"}"));
}

fn timeout_and_egraph_time_stop_a_search_that_is_still_enumerating() {
    let dir = tempfile::tempdir().unwrap();
    let (ir, rw) = deep_scales(dir.path(), 40);
    let huge = ["--rules", &rw, "--egraph-nodes", "1000000000", "--stats"];
    let t = Instant::now();
    let out = run_irw(&[&huge[..], &["--timeout", "1", &ir]].concat());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("rewriting stopped by the time limit (--timeout) in phase `p`")
            && err.contains("time limit hit"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
    // --egraph-time alone: the saturation stops, the program is still written.
    let t = Instant::now();
    let out = run_irw(&[&huge[..], &["--egraph-time", "1", &ir]].concat());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("e-graph: time limit hit"), "{err}");
    assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
}

fn timeout_stops_a_structural_match_over_a_value_with_800_readers() {
    // Four patterns through one value's 800 readers: 800^3 candidates per root, each refused
    // by a guard on the match (a guard false by the parameters alone would skip the rule).
    let dir = tempfile::tempdir().unwrap();
    let mut ir = String::from("{\n    (%0) = \"pd_op.data\" () {dtype:float32,name:\"x\",place:Place(undefined:0),shape:[4,4],stop_gradient:[true]} : () -> tensor<4x4xf32>\n");
    for i in 1..=800 {
        ir.push_str(&format!(
            "    (%{i}) = \"pd_op.relu\" (%0) {{}} : (tensor<4x4xf32>) -> tensor<4x4xf32>\n"
        ));
    }
    for i in 1..=800 {
        ir.push_str(&format!("    () = \"builtin.shadow_output\" (%{i}) {{output_name:\"o{i}\"}} : (tensor<4x4xf32>) -> \n"));
    }
    ir.push_str("}\n");
    let rw = "// four readers\nphase p {\n    // never fires: every candidate has rank 2\n    rule four {\n        match %a = pd_op.relu(%x), %b = pd_op.relu(%x), %c = pd_op.relu(%x), %d = pd_op.relu(%x);\n        where rank(%d) == 5;\n        erase %a;\n    }\n}\n";
    let (i, r) = (dir.path().join("r.ir"), dir.path().join("r.rw"));
    std::fs::write(&i, ir).unwrap();
    std::fs::write(&r, rw).unwrap();
    let t = Instant::now();
    let out = run_irw(&[
        "--rules",
        &r.to_string_lossy(),
        "--timeout",
        "1",
        &i.to_string_lossy(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("stopped by the time limit (--timeout)")
            && err.contains("while matching rule `four`"),
        "{err}"
    );
    assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
}
