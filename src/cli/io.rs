//! Reading inputs and writing outputs for the command line.
//!
//! Inputs are read whole and checked to be UTF-8 (an invalid byte is reported with its line and
//! column). Outputs given with `-o` are written to a temporary file in the same directory and
//! renamed over the target only when complete, so a failed or interrupted run never leaves a
//! partial file and never clobbers the previous one.

use crate::diag::{Diagnostic, SourceFile};
use std::io::{Read, Write};
use std::path::Path;

/// Largest input irw reads (bytes). A program of 10^6 ops is about 200 MB.
pub const MAX_INPUT_BYTES: u64 = 4 << 30;

/// Reads `path` (`-` for standard input) as a [`SourceFile`].
pub fn read_source(path: &str) -> Result<SourceFile, Diagnostic> {
    let mut bytes = Vec::new();
    if path == "-" {
        std::io::stdin()
            .lock()
            .take(MAX_INPUT_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| Diagnostic::error(format!("cannot read standard input: {e}")))?;
    } else {
        let f = std::fs::File::open(path)
            .map_err(|e| Diagnostic::error(format!("cannot read {path}: {}", io_reason(&e))))?;
        if f.metadata().map(|m| m.is_dir()).unwrap_or(false) {
            return Err(Diagnostic::error(format!(
                "cannot read {path}: it is a directory"
            )));
        }
        f.take(MAX_INPUT_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| Diagnostic::error(format!("cannot read {path}: {}", io_reason(&e))))?;
    }
    let name = if path == "-" {
        "<stdin>".to_string()
    } else {
        path.to_string()
    };
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(Diagnostic::error(format!(
            "{name} is larger than {} GiB",
            MAX_INPUT_BYTES >> 30
        )));
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(SourceFile::new(name, text)),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let lossy = String::from_utf8_lossy(e.as_bytes()).into_owned();
            // The lossy text has the same prefix, so `at` is a valid offset into it.
            let src = SourceFile::new(name, lossy);
            Err(Diagnostic::at(&src, at, "the file is not valid UTF-8")
                .with_hint("Paddle prints programs as UTF-8 text"))
        }
    }
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// Writes `text` to `path` atomically (`-` for standard output).
pub fn write_output(path: &str, text: &str) -> Result<(), Diagnostic> {
    if path == "-" {
        let mut out = std::io::stdout().lock();
        return out
            .write_all(text.as_bytes())
            .and_then(|_| out.flush())
            .or_else(|e| {
                if e.kind() == std::io::ErrorKind::BrokenPipe {
                    Ok(())
                } else {
                    Err(e)
                }
            })
            .map_err(|e| Diagnostic::error(format!("cannot write standard output: {e}")));
    }
    let target = Path::new(path);
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let fail =
        |e: std::io::Error| Diagnostic::error(format!("cannot write {path}: {}", io_reason(&e)));
    let mut tmp = tempfile::Builder::new()
        .prefix(".irw-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(fail)?;
    tmp.write_all(text.as_bytes()).map_err(fail)?;
    tmp.as_file().sync_all().map_err(fail)?;
    tmp.persist(target).map_err(|e| fail(e.error))?;
    Ok(())
}
