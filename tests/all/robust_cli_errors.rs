//! The command line's own error messages, the ones the `tests/bad/` corpus (one bad file run as
//! `irw FILE`) cannot reach: missing files, directories, `--startup` mistakes, unreadable
//! standard input, unwritable standard output. Each must exit with code 1, print its message
//! and nothing on standard output, and never panic.

use crate::common::*;

use std::process::{Output, Stdio};

tests![
    missing_files_and_directories,
    startup_file_mistakes,
    #[cfg(unix)]
    unreadable_standard_input_and_unwritable_standard_output,
    egraph_limit_flags_are_validated_as_usage_errors,
    check_has_no_output_flags,
    startup_out_and_output_must_differ,
    limits_are_offered_where_they_apply,
    a_repeated_set_is_a_usage_error,
];

fn fails_with(out: Output, fragment: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(fragment), "want `{fragment}` in:\n{err}");
}

fn fixture(name: &str) -> String {
    paddle_fixtures().join(name).to_string_lossy().into_owned()
}

fn missing_files_and_directories() {
    fails_with(
        run_irw(&["no/such/prog.ir"]),
        "cannot read no/such/prog.ir: no such file",
    );
    fails_with(
        run_irw(&["tests/bad"]),
        "cannot read tests/bad: it is a directory",
    );
    let f = fixture("before.ir");
    fails_with(
        run_irw(&[f.as_str(), "--startup", "no/such/startup.ir"]),
        "cannot read no/such/startup.ir: no such file",
    );
}

fn startup_file_mistakes() {
    let dir = tempfile::tempdir().unwrap();
    let main = fixture("before.ir");
    let empty = dir.path().join("empty.ir");
    std::fs::write(&empty, "\n\n").unwrap();
    fails_with(
        run_irw(&[main.as_str(), "--startup", &empty.to_string_lossy()]),
        "the startup file holds no program",
    );
    let garbage = dir.path().join("garbage.ir");
    std::fs::write(&garbage, "hello\n").unwrap();
    let out = run_irw(&[main.as_str(), "--startup", &garbage.to_string_lossy()]);
    fails_with(
        out,
        "garbage.ir:1:1: error: expected `{` to start the startup program",
    );
    // A file that already holds `startup { ... }`, given a second startup program.
    let both = dir.path().join("both.ir");
    let text = std::fs::read_to_string(&main).unwrap()
        + "startup "
        + &std::fs::read_to_string(fixture("startup_before.ir")).unwrap();
    std::fs::write(&both, text).unwrap();
    fails_with(
        run_irw(&[
            both.to_string_lossy().as_ref(),
            "--startup",
            &fixture("startup_before.ir"),
        ]),
        "already holds a startup program; --startup",
    );
}

#[cfg(unix)]
fn unreadable_standard_input_and_unwritable_standard_output() {
    // Standard input that is a directory: read(2) fails with EISDIR.
    let out = irw()
        .arg("-")
        .stdin(std::fs::File::open("/").unwrap())
        .output()
        .unwrap();
    fails_with(out, "cannot read standard input");
    // Standard output on a full device.
    if let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") {
        let out = irw()
            .arg(fixture("before.ir"))
            .stdout(Stdio::from(full))
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        fails_with(out, "cannot write standard output");
    }
}

fn usage_error(out: Output, fragment: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(out.stdout.is_empty());
    assert!(err.contains(fragment), "want `{fragment}` in:\n{err}");
}

fn egraph_limit_flags_are_validated_as_usage_errors() {
    let f = fixture("before.ir");
    for (flag, value, msg) in [
        (
            "--egraph-iters",
            "0",
            "`0` is not a whole number of at least 1",
        ),
        (
            "--egraph-iters",
            "1.5",
            "`1.5` is not a whole number of at least 1",
        ),
        (
            "--egraph-nodes",
            "many",
            "`many` is not a whole number of at least 1",
        ),
        ("--egraph-nodes", "-3", "unexpected argument '-3'"),
        (
            "--egraph-time",
            "0",
            "`0` is not a positive number of seconds",
        ),
        (
            "--egraph-time",
            "inf",
            "`inf` is not a positive number of seconds",
        ),
        (
            "--egraph-time",
            "1e400",
            "`1e400` is not a positive number of seconds",
        ),
    ] {
        usage_error(
            run_irw(&["--rules", "rules/canonicalize.rw", flag, value, f.as_str()]),
            msg,
        );
        usage_error(
            run_irw(&[
                "check",
                "--rules",
                "rules/canonicalize.rw",
                flag,
                value,
                f.as_str(),
            ]),
            msg,
        );
    }
}

fn check_has_no_output_flags() {
    let out = run_irw(&["check", "--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for gone in ["--output", "--emit", "--startup-out"] {
        assert!(
            !help.contains(gone),
            "`irw check --help` offers {gone}:\n{help}"
        );
    }
    for kept in ["--rules", "--set", "--stats", "--trace", "--egraph-nodes"] {
        assert!(
            help.contains(kept),
            "`irw check --help` lacks {kept}:\n{help}"
        );
    }
    let f = fixture("before.ir");
    usage_error(
        run_irw(&[
            "check",
            "--rules",
            "rules/canonicalize.rw",
            "-o",
            "x.ir",
            f.as_str(),
        ]),
        "unexpected argument '-o'",
    );
}

fn startup_out_and_output_must_differ() {
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("same.ir");
    let o = o.to_string_lossy();
    usage_error(
        run_irw(&[
            fixture("before.ir").as_str(),
            "--startup",
            &fixture("startup_before.ir"),
            "-o",
            &o,
            "--startup-out",
            &o,
        ]),
        "-o and --startup-out both name",
    );
    assert!(!dir.path().join("same.ir").exists());
}

/// Each command offers the limits that apply to it: `--max-input-size` where it reads files,
/// `--timeout` where it rewrites or executes.
fn limits_are_offered_where_they_apply() {
    for (cmd, input, timeout) in [
        (&[][..], true, true),
        (&["check"][..], true, true),
        (&["run"][..], true, true),
        (&["diff"][..], true, false),
        (&["gen", "mlp"][..], false, false),
    ] {
        let out = run_irw(&[cmd, &["--help"]].concat());
        assert!(out.status.success());
        let help = String::from_utf8_lossy(&out.stdout);
        assert_eq!(help.contains("--max-input-size"), input, "{cmd:?}:\n{help}");
        assert_eq!(
            help.contains("--timeout <SECONDS>"),
            timeout,
            "{cmd:?}:\n{help}"
        );
    }
    let f = fixture("before.ir");
    let out = run_irw(&["run", "--max-input-size", "10", f.as_str()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("larger than"));
}

fn a_repeated_set_is_a_usage_error() {
    // Two values for one parameter: neither may silently win.
    let f = fixture("before.ir");
    let args = [
        "--rules",
        "rules/grad_merge.rw",
        "--set",
        "k_steps=4",
        "--set",
        "k_steps=8",
    ];
    usage_error(
        run_irw(&[&args[..], &[f.as_str()]].concat()),
        "--set k_steps given twice (`k_steps=4` and `k_steps=8`)",
    );
    usage_error(
        run_irw(&[&["check"], &args[..], &[f.as_str()]].concat()),
        "--set k_steps given twice",
    );
}
