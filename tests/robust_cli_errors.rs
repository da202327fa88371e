//! The command line's own error messages, the ones the `tests/bad/` corpus (one bad file run as
//! `irw FILE`) cannot reach: missing files, directories, `--startup` mistakes, unreadable
//! standard input, unwritable standard output. Each must exit with code 1, print its message
//! and nothing on standard output, and never panic.

mod common;
use common::*;

use std::process::{Output, Stdio};

fn fails_with(out: Output, fragment: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(fragment), "want `{fragment}` in:\n{err}");
}

fn fixture(name: &str) -> String {
    paddle_fixtures().join(name).to_string_lossy().into_owned()
}

#[test]
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

#[test]
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
#[test]
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
