//! The bad-input corpus: every `tests/bad/NAME.ir` is fed to the real binary, which must fail
//! with exit code 1, print nothing on standard output, never panic, and report
//! `NAME.ir:LINE:COL: error: ...` containing the fragment in `NAME.expect`.
//!
//! `NAME.expect`: first line `LINE:COL` (a prefix such as `2:` is allowed; `-` for a message
//! without a position, empty for any position), then the message fragment.

use crate::common::*;
use libtest_mimic::{Failed, Trial};

fn check(ir: std::path::PathBuf) -> Result<(), Failed> {
    let expect = std::fs::read_to_string(ir.with_extension("expect"))?;
    let mut lines = expect.lines();
    let loc = lines.next().unwrap_or("").trim().to_string();
    let frag = lines.next().unwrap_or("").trim().to_string();
    let rel = ir.strip_prefix(root()).unwrap_or(&ir).to_path_buf();
    let out = run_irw(&[rel.as_os_str()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("panicked") {
        return Err(format!("irw panicked:\n{stderr}").into());
    }
    if out.status.code() != Some(1) {
        return Err(format!(
            "exit code {:?}, want 1; stderr:\n{stderr}",
            out.status.code()
        )
        .into());
    }
    if !out.stdout.is_empty() {
        return Err("irw printed output for a bad input".into());
    }
    let header = stderr.lines().next().unwrap_or("");
    match loc.as_str() {
        "-" => {
            if !header.starts_with("error:") {
                return Err(format!("want an error without position, got: {header}").into());
            }
        }
        "" => {}
        l => {
            let want = format!("{}:{l}", rel.display());
            if !header.starts_with(&want) {
                return Err(format!("want the error at {want}, got: {header}").into());
            }
            // The source line and a caret follow a positioned error (unless the line is empty).
            let second = stderr.lines().nth(1).unwrap_or("");
            let has_line = !second.is_empty() && !second.starts_with("  = ");
            if has_line && !stderr.lines().any(|s| s.trim_end().ends_with('^')) {
                return Err(format!("no caret line in:\n{stderr}").into());
            }
        }
    }
    if !stderr.contains(&frag) {
        return Err(format!("message lacks `{frag}`:\n{stderr}").into());
    }
    Ok(())
}

pub(crate) fn tests() -> Vec<Trial> {
    let files = files_with_ext(&root().join("tests/bad"), "ir");
    assert!(
        files.len() >= 25,
        "the bad-input corpus has {} files",
        files.len()
    );
    files
        .into_iter()
        .map(|f| {
            let name = format!(
                "bad::{}",
                f.file_stem().unwrap_or_default().to_string_lossy()
            );
            Trial::test(name, move || check(f))
        })
        .collect()
}
