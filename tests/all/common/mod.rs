//! Helpers shared by the integration tests: locating fixtures and running the real binary.
//!
//! Submodules: `harness` (a module's tests as trials of the one test binary), `prop_gen` (random
//! programs for the property tests).
#![allow(dead_code)]

#[macro_use]
mod harness;
pub mod prop_gen;

pub use harness::{note, trial};

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared/fixtures/paddle`, the real PaddlePaddle dumps (read-only, beside the checkout).
pub fn paddle_fixtures() -> PathBuf {
    root().join("../shared/fixtures/paddle")
}

/// `../shared/fixtures/paddle-dist`, real auto-parallel (Engine) dumps with Paddle's
/// before/after and numerics.
pub fn dist_fixtures() -> PathBuf {
    root().join("../shared/fixtures/paddle-dist")
}

/// The `irw` binary cargo built for this test run.
pub fn irw() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_irw"));
    c.current_dir(root());
    c.stdin(Stdio::null());
    c
}

/// Runs `irw` with `args`.
pub fn run_irw<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    irw().args(args).output().expect("the irw binary runs")
}

/// Files with extension `ext` under `dir`, sorted, recursively.
pub fn files_with_ext(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == ext) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Asserts `got` is within the Paddle fixtures' tolerance of `want`, Paddle's value:
/// `|a − b| ≤ 1e-5·|b| + 1e-5·max|b|` per element, shapes equal.
pub fn assert_close(what: &str, got: &irw::executor::Tensor, want: &irw::executor::Tensor) {
    let (g, w) = (got.to_f64_vec(), want.to_f64_vec());
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    let max = w.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        assert!(
            (a - b).abs() <= 1e-5 * b.abs() + 1e-5 * max,
            "{what}[{i}]: irw {a}, Paddle {b}"
        );
    }
}
