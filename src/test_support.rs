//! What the unit tests that read fixtures or check a kernel's refusal share.

use std::path::{Path, PathBuf};

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

/// Asserts that a kernel refused its operands with a message containing `words`.
pub fn says<T>(r: Result<T, crate::exec::KernelError>, words: &str) {
    match r {
        Ok(_) => panic!("expected an error saying {words:?}"),
        Err(e) => assert!(e.message.contains(words), "{:?} lacks {words:?}", e.message),
    }
}
