//! Every real Paddle dump in `../shared/fixtures/paddle/` and `../shared/fixtures/paddle-dist/`
//! (auto-parallel programs: `pd_dist.tensor` types, `op_dist_attr`) prints back byte for byte
//! through the real binary (one test per file), and so does a main+startup file.

use crate::common::*;
use libtest_mimic::{Failed, Trial};

fn roundtrip(path: std::path::PathBuf) -> Result<(), Failed> {
    let want = std::fs::read(&path)?;
    let out = run_irw(&[path.as_os_str()]);
    if !out.status.success() {
        return Err(format!("irw failed: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    if out.stdout != want {
        let got = String::from_utf8_lossy(&out.stdout);
        let want = String::from_utf8_lossy(&want);
        let line = got
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        return Err(format!(
            "output differs from the input at line {}:\n  want: {}\n  got:  {}",
            line + 1,
            want.lines().nth(line).unwrap_or("<end>"),
            got.lines().nth(line).unwrap_or("<end>")
        )
        .into());
    }
    Ok(())
}

pub(crate) fn tests() -> Vec<Trial> {
    let mut trials = Vec::new();
    let fixtures = files_with_ext(&paddle_fixtures(), "ir");
    assert!(
        fixtures.len() >= 19,
        "the Paddle fixtures are missing from ../shared/fixtures/paddle"
    );
    let dist = files_with_ext(&dist_fixtures(), "ir");
    assert!(
        dist.len() >= 12,
        "the dist fixtures are missing from ../shared/fixtures/paddle-dist"
    );
    for f in fixtures.into_iter().chain(dist) {
        let name = format!(
            "roundtrip::{}",
            f.file_name().unwrap_or_default().to_string_lossy()
        );
        trials.push(Trial::test(name, move || roundtrip(f)));
    }
    trials.push(Trial::test(
        "roundtrip::main_and_startup_in_one_file",
        || {
            let dir = tempfile::tempdir()?;
            let main = std::fs::read_to_string(paddle_fixtures().join("before.ir"))?;
            let startup = std::fs::read_to_string(paddle_fixtures().join("startup_before.ir"))?;
            let both = format!("{main}startup {startup}");
            let p = dir.path().join("both.ir");
            std::fs::write(&p, &both)?;
            let out = run_irw(&[p.as_os_str()]);
            if !out.status.success() || out.stdout != both.as_bytes() {
                return Err("main+startup file did not print back unchanged".into());
            }
            // --startup FILE gives the same text.
            let out = run_irw(&[
                paddle_fixtures().join("before.ir").as_os_str(),
                "--startup".as_ref(),
                paddle_fixtures().join("startup_before.ir").as_os_str(),
            ]);
            if !out.status.success() || out.stdout != both.as_bytes() {
                return Err(format!(
                    "--startup did not give main then startup: {}",
                    String::from_utf8_lossy(&out.stderr)
                )
                .into());
            }
            Ok(())
        },
    ));
    trials
}
