//! Work bounded by what names it: the total size of imported rule files, the strings a rule
//! computes, and reads or writes of FIFOs that would block forever (`--timeout`, or a clear
//! refusal).

use crate::common::*;

use std::time::{Duration, Instant};

tests![
    imported_rule_files_are_bounded_in_total,
    one_rule_file_is_bounded,
    interpolated_strings_are_bounded,
    #[cfg(unix)]
    a_fifo_nobody_writes_honours_the_timeout,
    #[cfg(unix)]
    without_a_timeout_a_fifo_read_waits_for_its_writer,
    #[cfg(unix)]
    an_output_fifo_nobody_reads_is_refused,
];

fn fixture(name: &str) -> String {
    paddle_fixtures().join(name).display().to_string()
}

fn imported_rule_files_are_bounded_in_total() {
    let dir = tempfile::tempdir().unwrap();
    // Five files just under the 4 MiB bound of one file: 20 MiB, more than the 16 MiB of all.
    let line = format!("// {}\n", "x".repeat(1000));
    let body = line.repeat((4 << 20) / line.len() - 1);
    let mut root = String::new();
    for i in 0..5 {
        std::fs::write(dir.path().join(format!("big{i}.rw")), &body).unwrap();
        root.push_str(&format!("import \"big{i}.rw\";\n"));
    }
    let r = dir.path().join("root.rw");
    std::fs::write(&r, root).unwrap();
    let t = Instant::now();
    let out = run_irw(&["--rules", r.to_str().unwrap(), &fixture("before.ir")]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the rule files of this run would be larger than 16 MiB together"),
        "{err}"
    );
    assert!(
        err.contains("root.rw:5:8"),
        "the error is at the import: {err}"
    );
    assert!(t.elapsed() < Duration::from_secs(60));
}

/// One rule file over 4 MiB is refused, given with `--rules` or imported (at the import).
fn one_rule_file_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let line = format!("// {}\n", "x".repeat(1000));
    let body = line.repeat((4 << 20) / line.len() + 1);
    std::fs::write(dir.path().join("big.rw"), &body).unwrap();
    std::fs::write(dir.path().join("root.rw"), "import \"big.rw\";\n").unwrap();
    // Given with --rules, the error has no position; imported, it is at the import.
    for (file, at) in [
        ("big.rw", "error: cannot read rule file"),
        ("root.rw", "/root.rw:1:8: error: cannot read rule file"),
    ] {
        let out = run_irw(&[
            "--rules",
            dir.path().join(file).to_str().unwrap(),
            &fixture("before.ir"),
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{file}: {err}");
        let first = err.lines().next().unwrap_or("");
        assert!(
            first.starts_with(at) || first.contains(at) && at.starts_with('/'),
            "{file}: {err}"
        );
        assert!(err.contains("it is larger than 4 MiB"), "{file}: {err}");
    }
}

/// A string computed by interpolation or by `+` is refused above 64 KiB, at the expression.
fn interpolated_strings_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path().join("r.rw");
    std::fs::write(
        &r,
        "param s: string = \"\";\n// Tags every relu with s, twice.\nrule r {\n    match %o = pd_op.relu(%x);\n    where not has_attr(%o, \"tag\");\n    set %o {tag: \"{s}{s}\"};\n}\n",
    )
    .unwrap();
    let plus = dir.path().join("plus.rw");
    std::fs::write(
        &plus,
        "param s: string = \"\";\n// Tags every relu with s, twice.\nrule r {\n    match %o = pd_op.relu(%x);\n    where not has_attr(%o, \"tag\");\n    set %o {tag: s + s};\n}\n",
    )
    .unwrap();
    let big = "y".repeat(40_000);
    // The error is at the relu the rule matched; where the rule computed the string is a note.
    for (rules, at) in [(&r, "r.rw:6:23\n"), (&plus, "plus.rw:6:18\n")] {
        let out = run_irw(&[
            "--rules",
            rules.to_str().unwrap(),
            "--set",
            &format!("s={big}"),
            &fixture("before.ir"),
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains(at), "{err}");
        assert!(
            err.contains(
                "the string would be 80000 bytes long, more than the 64 KiB a rule may compute"
            ),
            "{err}"
        );
    }
    // Under the bound: fine.
    let out = run_irw(&[
        "--rules",
        r.to_str().unwrap(),
        "--set",
        "s=abc",
        &fixture("before.ir"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn mkfifo(p: &std::path::Path) {
    assert!(std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .unwrap()
        .success());
}

fn a_fifo_nobody_writes_honours_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("in.fifo");
    mkfifo(&fifo);
    let f = fifo.to_str().unwrap();
    let before = fixture("before.ir");
    for args in [
        vec!["--timeout", "1", f],
        vec!["--timeout", "1", &before, "--startup", f],
        vec!["--timeout", "1", "--rules", f, &before],
        vec![
            "check",
            "--timeout",
            "1",
            "--rules",
            "rules/grad_merge.rw",
            f,
        ],
    ] {
        let t = Instant::now();
        let out = run_irw(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("stopped by the time limit (--timeout, 1 s) while reading"),
            "{err}"
        );
        assert!(t.elapsed() < Duration::from_secs(20), "{args:?}");
    }
    // An import of a FIFO is refused at once, with or without --timeout.
    let r = dir.path().join("r.rw");
    std::fs::write(&r, "import \"in.fifo\";\n").unwrap();
    let out = run_irw(&["--rules", r.to_str().unwrap(), &fixture("before.ir")]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("r.rw:1:8: error: cannot read rule file"),
        "{err}"
    );
    assert!(err.contains("an import must be a regular file"), "{err}");
}

/// Without `--timeout`, a read of a FIFO waits for its writer, as `cat` would, and the program
/// that arrives is read whole.
fn without_a_timeout_a_fifo_read_waits_for_its_writer() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("in.fifo");
    mkfifo(&fifo);
    let mut child = irw()
        .arg(&fifo)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    if child.try_wait().unwrap().is_some() {
        let out = child.wait_with_output().unwrap();
        panic!(
            "irw ended before the FIFO was written: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // irw is waiting to read the FIFO, so opening it for writing does not block.
    let text = std::fs::read(paddle_fixtures().join("before.ir")).unwrap();
    std::fs::write(&fifo, &text).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        out.stdout, text,
        "the program read from the FIFO prints back"
    );
}

fn an_output_fifo_nobody_reads_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("out.fifo");
    mkfifo(&fifo);
    let out = run_irw(&[&fixture("before.ir"), "-o", fifo.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("it is a FIFO that no process is reading"),
        "{err}"
    );
}
