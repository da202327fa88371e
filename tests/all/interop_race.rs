//! irw's gradient-merged Adam and SGD programs, trained 20 times each by Paddle 3.3.1's
//! default (multi-threaded) executor, never lose an update (`tests/interop/race.sh`).
//!
//! Runs only when a Paddle venv is present: `IRW_INTEROP_VENV`, else `target/interop-venv` (what
//! `tests/interop/race.sh` and `paddle.sh` create). Without one it prints why it is skipped and
//! passes: CI has no Paddle, and this test never downloads anything (`RACE_NO_INSTALL=1`).
//! `IRW_RACE_RUNS` changes the number of runs per program (default 20).
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

tests![paddle_default_executor_never_loses_an_update];

/// Says why the test is skipped on the real standard error: libtest captures `eprintln!` of a
/// passing test, and a skip must be visible in a plain `cargo test`.
fn skip(why: String) {
    let _ = writeln!(std::io::stderr(), "interop_race: SKIPPED: {why}");
}

fn paddle_default_executor_never_loses_an_update() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let venv = std::env::var_os("IRW_INTEROP_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo.join("target/interop-venv"));
    let python = venv.join("bin/python");
    let has_paddle = Command::new(&python)
        .args([
            "-c",
            "import paddle, sys; sys.exit(paddle.__version__ != '3.3.1')",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_paddle {
        skip(format!(
            "no paddlepaddle 3.3.1 in {} (set IRW_INTEROP_VENV, or run tests/interop/race.sh \
             once to create it; see tests/interop/README.md)",
            venv.display()
        ));
        return;
    }
    let fixtures = std::env::var_os("IRW_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo.join("../shared/fixtures"));
    if !fixtures.join("paddle/before_adam.ir").is_file() {
        skip(format!(
            "Paddle fixtures not found in {} (set IRW_FIXTURES)",
            fixtures.display()
        ));
        return;
    }
    let runs = std::env::var("IRW_RACE_RUNS").unwrap_or_else(|_| "20".into());
    let out = Command::new(repo.join("tests/interop/race.sh"))
        .arg(&runs)
        .env("IRW_INTEROP_VENV", &venv)
        .env("IRW_FIXTURES", &fixtures)
        .env("IRW", env!("CARGO_BIN_EXE_irw"))
        .env("RACE_NO_INSTALL", "1")
        .output()
        .expect("tests/interop/race.sh runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stdout}{stderr}");
    assert!(
        out.status.success(),
        "Paddle's default executor lost updates on irw's merged programs (or the harness failed)"
    );
    for prog in ["adam", "sgd"] {
        let line = format!(
            "race: {prog}: irw grad_merge.rw, default executor: wrong 0/{runs}, harness errors 0"
        );
        assert!(stdout.contains(&line), "missing `{line}`");
    }
}
