//! Standard output and standard error as every command writes them: the one place that knows
//! what a closed pipe, a full device or a closed descriptor means, so no command prints with
//! `print!` or `eprint!` (which panic when a write fails).
//!
//! - Standard output carries a command's result (a program, `check`'s table, `run`'s losses,
//!   `diff`'s report). A reader that went away (EPIPE: `irw check … | head -c 1`) ends the
//!   command quietly with exit code 141, as a coreutils program killed by SIGPIPE ends; any
//!   other write error (`> /dev/full`) is a one-line error with exit code 1. A standard output
//!   that was closed when irw started (`irw prog >&-`) is an error as soon as a command writes
//!   a result to it: the Rust runtime puts `/dev/null` on a closed descriptor before `main`
//!   runs, so the binary records which descriptors were closed before that (`src/main.rs`) and
//!   hands it to [`set_closed_at_start`].
//! - Standard error carries diagnostics, warnings, `--trace` and `--stats`. When it cannot be
//!   written (a closed pipe, a full device, a closed descriptor), the lines are dropped and the
//!   command goes on: `--trace -o F 2>&1 | head` still writes F, and the exit code is the
//!   command's own.
//!
//! The Rust runtime ignores SIGPIPE, so a write to a closed pipe fails with EPIPE instead of
//! killing the process; [`Stdout`] turns that into [`Failure::BrokenPipe`].

use super::io::Content;
use super::Failure;
use crate::diag::Diagnostic;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
static STDERR_UNWRITABLE: AtomicBool = AtomicBool::new(false);

/// Records which standard descriptors were closed when the process started (before the Rust
/// runtime reopened them on `/dev/null`).
pub fn set_closed_at_start(stdout: bool, stderr: bool) {
    STDOUT_CLOSED.store(stdout, Ordering::Relaxed);
    STDERR_UNWRITABLE.store(stderr, Ordering::Relaxed);
}

/// The exit code of a command whose standard output was closed by its reader: that of a
/// process killed by SIGPIPE, as a shell reports it (128 + 13).
pub const BROKEN_PIPE_EXIT: i32 = 141;

/// The error of a result written to a standard output closed at the start.
fn refuse_closed_stdout() -> Result<(), Failure> {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return Err(Failure::Input(Diagnostic::error(
            "cannot write standard output: it is closed (give -o FILE, or redirect it)",
        )));
    }
    Ok(())
}

/// Writes a command's result to standard output and flushes it; returns the bytes written.
pub fn write_stdout(content: Content<'_>) -> Result<u64, Failure> {
    refuse_closed_stdout()?;
    let mut out = std::io::stdout().lock();
    content
        .write_to(&mut out)
        .and_then(|n| out.flush().map(|_| n))
        .map_err(|e| stdout_failure(&e))
}

/// [`write_stdout`] of a text.
pub fn print(text: &str) -> Result<(), Failure> {
    write_stdout(Content::Text(text)).map(|_| ())
}

/// Writes what clap prints on standard output (`--help`, `help`, `-V`), in color where clap
/// would use it, and flushes it: that text is the command's result, and a write error ends it
/// as any other result's does.
pub fn print_clap(e: &clap::Error) -> Result<(), Failure> {
    refuse_closed_stdout()?;
    e.print()
        .and_then(|()| std::io::stdout().flush())
        .map_err(|e| stdout_failure(&e))
}

/// What a failed write to standard output ends the command with.
fn stdout_failure(e: &std::io::Error) -> Failure {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Failure::BrokenPipe
    } else {
        Failure::Input(Diagnostic::error(format!(
            "cannot write standard output: {}",
            super::io::io_reason(e)
        )))
    }
}

/// Writes `text` to standard error; once a write has failed, the rest is dropped.
pub fn eprint(text: &str) {
    if STDERR_UNWRITABLE.load(Ordering::Relaxed) {
        return;
    }
    let mut err = std::io::stderr().lock();
    if err
        .write_all(text.as_bytes())
        .and_then(|_| err.flush())
        .is_err()
    {
        STDERR_UNWRITABLE.store(true, Ordering::Relaxed);
    }
}

/// [`eprint`] of `text` and a newline.
pub fn eprintln(text: &str) {
    let mut line = String::with_capacity(text.len() + 1);
    line.push_str(text);
    line.push('\n');
    eprint(&line);
}
