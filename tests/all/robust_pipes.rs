//! Closed pipes, full devices and closed descriptors, for every command and both streams
//! (src/cli/streams.rs): a reader that went away ends the command quietly (exit code 141 for
//! standard output, the command's own code for standard error), another write error is a
//! one-line error with exit code 1, a standard output closed at start is an error, and nothing
//! panics. Pipes are closed before irw writes (the read end is dropped right after the spawn),
//! so every case is deterministic.

use crate::common::*;

use std::process::{Command, Output, Stdio};

tests![
    #[cfg(unix)]
    a_closed_stdout_pipe_ends_every_command_quietly,
    #[cfg(unix)]
    a_closed_stderr_pipe_never_panics_and_keeps_the_exit_code,
    #[cfg(unix)]
    trace_to_a_closed_pipe_still_writes_the_output_file,
    #[cfg(target_os = "linux")]
    a_full_device_is_a_one_line_error,
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    a_closed_stdout_descriptor_is_an_error,
];

fn fixture(name: &str) -> String {
    paddle_fixtures().join(name).display().to_string()
}

/// Every command, with arguments that make it print to standard output (and standard error).
fn commands() -> Vec<(&'static str, Vec<String>)> {
    let before = fixture("before.ir");
    let startup = fixture("startup_before.ir");
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    vec![
        (
            "rewrite",
            s(&[
                "--rules",
                "rules/grad_merge.rw",
                "--set",
                "k_steps=4",
                "--trace",
                "--stats",
                &before,
            ]),
        ),
        (
            "check",
            s(&[
                "check",
                "--rules",
                "rules/grad_merge.rw",
                "--set",
                "k_steps=4",
                "--trace",
                &before,
                "--startup",
                &startup,
            ]),
        ),
        (
            "run",
            s(&["run", &before, "--startup", &startup, "--steps", "3"]),
        ),
        ("diff", s(&["diff", &before, &fixture("after.ir")])),
        ("gen", s(&["gen", "mlp", "--layers", "200"])),
        // What clap prints on standard output is a result like any other.
        ("help", s(&["help"])),
        ("--help", s(&["--help"])),
        ("gen --help", s(&["gen", "--help"])),
        ("-V", s(&["-V"])),
    ]
}

/// Runs irw with `args`; the read end of standard output (or standard error) is closed before
/// irw writes anything; the other stream is collected.
fn with_closed_reader(args: &[String], close_stdout: bool) -> Output {
    let mut c = irw();
    c.args(args);
    if close_stdout {
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
    } else {
        c.stdout(Stdio::null()).stderr(Stdio::piped());
    }
    let mut child = c.spawn().expect("irw runs");
    let other = if close_stdout {
        drop(child.stdout.take());
        child.stderr.take()
    } else {
        drop(child.stderr.take());
        None
    };
    let mut err = Vec::new();
    if let Some(mut e) = other {
        use std::io::Read;
        e.read_to_end(&mut err).expect("read stderr");
    }
    let status = child.wait().expect("irw ends");
    Output {
        status,
        stdout: Vec::new(),
        stderr: err,
    }
}

fn a_closed_stdout_pipe_ends_every_command_quietly() {
    for (name, args) in commands() {
        // Other tests spawn processes at the same time, and a child forked in that moment holds
        // a copy of every descriptor of this process until it execs, our pipe's read end
        // included: irw's write then fits in the pipe and succeeds, and irw rightly exits 0.
        // A run that saw no closed pipe is tried again; irw mishandling EPIPE fails every try.
        let mut out = with_closed_reader(&args, true);
        for _ in 0..4 {
            if out.status.code() != Some(0) || !out.stderr.is_empty() {
                break;
            }
            out = with_closed_reader(&args, true);
        }
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{name}: {err}");
        assert_eq!(out.status.code(), Some(141), "{name}: {err}");
        assert!(
            !err.contains("error"),
            "{name}: a closed pipe is not an error: {err}"
        );
    }
}

fn a_closed_stderr_pipe_never_panics_and_keeps_the_exit_code() {
    let mut cases = commands();
    cases.push(("lint", vec!["lint".into(), fixture("before.ir")]));
    // Paddle's own gradient-merge output: lint writes a diagnostic per hazard, and exits 1.
    cases.push(("lint hazards", vec!["lint".into(), fixture("after.ir")]));
    for (name, args) in cases {
        let normal = irw().args(&args).output().expect("irw runs");
        let out = with_closed_reader(&args, false);
        assert_ne!(out.status.code(), Some(101), "{name} panicked");
        assert_eq!(out.status.code(), normal.status.code(), "{name}");
    }
}

fn trace_to_a_closed_pipe_still_writes_the_output_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("out.ir");
    let args: Vec<String> = [
        "--rules",
        "rules/grad_merge.rw",
        "--set",
        "k_steps=4",
        "--trace",
        "--stats",
        &fixture("before.ir"),
        "-o",
        f.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // `2>&1 | head`: both streams are the closed pipe.
    let mut c = irw();
    c.args(&args).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    drop(child.stdout.take());
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let expected = run_irw(&args[..7]);
    assert_eq!(std::fs::read(&f).expect("-o file written"), expected.stdout);
}

fn a_full_device_is_a_one_line_error() {
    for (name, args) in commands() {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = irw().args(&args).stdout(full).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        let last = err.lines().last().unwrap_or("");
        assert_eq!(
            last, "error: cannot write standard output: No space left on device (os error 28)",
            "{name}: {err}"
        );
        assert!(!err.contains("panicked"), "{name}: {err}");
    }
}

fn a_closed_stdout_descriptor_is_an_error() {
    for (name, args) in commands() {
        // `irw ARGS >&-`
        let out = Command::new("sh")
            .arg("-c")
            .arg("exec \"$0\" \"$@\" >&-")
            .arg(env!("CARGO_BIN_EXE_irw"))
            .args(&args)
            .current_dir(root())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert!(
            err.contains("error: cannot write standard output: it is closed"),
            "{name}: {err}"
        );
    }
    // Closed, but not written to: `-o FILE` works.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("o.ir");
    let out = Command::new("sh")
        .arg("-c")
        .arg("exec \"$0\" \"$@\" >&-")
        .arg(env!("CARGO_BIN_EXE_irw"))
        .args([&fixture("before.ir"), "-o", f.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(f.exists());
}
