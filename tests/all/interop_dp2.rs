//! Data parallelism on 2 real Paddle processes (`tests/interop/dp2.sh`, see
//! `tests/interop/README.md`), run by `cargo test` only when a Paddle 3.3.1 venv is already
//! there: `IRW_INTEROP_VENV`, else `target/interop-venv` (what `tests/interop/dp2.sh` creates).
//! Without one the case is reported as ignored, with the reason on standard error; nothing is
//! downloaded or installed (`IRW_INTEROP_NO_INSTALL=1`). With one it runs the quick set (SGD,
//! k=2, about 40 s on 2 cores); `IRW_INTEROP_FULL=1` runs everything (SGD and Adam, k=2 and 4).

use crate::common::root;
use libtest_mimic::{Failed, Trial};
use std::path::{Path, PathBuf};
use std::process::Command;

fn venv() -> PathBuf {
    std::env::var_os("IRW_INTEROP_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/interop-venv"))
}

/// Why the venv cannot run the interop, if it cannot: no interpreter, or no paddlepaddle 3.3.1
/// installed in it (its dist-info directory; importing Paddle takes seconds, dp2.sh does that).
fn missing(venv: &Path) -> Option<String> {
    if !venv.join("bin/python").exists() {
        return Some(format!("no Python venv at {}", venv.display()));
    }
    let lib = venv.join("lib");
    let found = std::fs::read_dir(&lib)
        .into_iter()
        .flatten()
        .flatten()
        .any(|d| {
            d.path()
                .join("site-packages/paddlepaddle-3.3.1.dist-info")
                .is_dir()
        });
    (!found).then(|| format!("paddlepaddle 3.3.1 is not installed in {}", venv.display()))
}

fn run_dp2(venv: PathBuf) -> Result<(), Failed> {
    let mut cmd = Command::new("bash");
    cmd.arg(root().join("tests/interop/dp2.sh"))
        .current_dir(root())
        .env("IRW_INTEROP_VENV", &venv)
        .env("IRW_INTEROP_NO_INSTALL", "1")
        .env("IRW_BIN", env!("CARGO_BIN_EXE_irw"));
    if std::env::var_os("IRW_INTEROP_FULL").is_none() {
        cmd.arg("--quick");
    }
    let out = cmd
        .output()
        .map_err(|e| format!("bash tests/interop/dp2.sh: {e}"))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() {
        return Err(format!("tests/interop/dp2.sh failed ({}):\n{text}", out.status).into());
    }
    if !text.lines().any(|l| l == "PASS") {
        return Err(format!("tests/interop/dp2.sh printed no PASS:\n{text}").into());
    }
    eprintln!("{text}");
    Ok(())
}

pub(crate) fn tests() -> Vec<Trial> {
    let venv = venv();
    let name = "interop::dp2_two_paddle_processes_equal_one";
    let trial = match missing(&venv) {
        None => Trial::test(name, move || run_dp2(venv)),
        Some(why) => {
            eprintln!(
                "{name}: skipped: {why}. Run tests/interop/dp2.sh once (it creates the venv and \
                 installs paddlepaddle 3.3.1 from PyPI), or set IRW_INTEROP_VENV to a venv with it."
            );
            Trial::test(name, || Ok(())).with_ignored_flag(true)
        }
    };
    vec![trial]
}
