//! `-o` with `--startup-out`: two names of one file are refused, and the pair is replaced
//! together or not at all, under an injected failure or SIGKILL at every step of the commit
//! protocol (`IRW_TEST_FAULT`, src/cli/pair.rs) and with concurrent writers.

use crate::common::*;

use std::path::Path;

tests![
    #[cfg(unix)]
    two_names_of_one_file_are_refused,
    json_pair_on_standard_output_is_refused,
    #[cfg(unix)]
    a_failed_rename_leaves_both_old_files,
    #[cfg(unix)]
    a_kill_at_any_step_is_completed_by_the_next_run,
    #[cfg(unix)]
    concurrent_writers_never_leave_a_mixed_pair,
];

const OLD: &str = "the old program\n";
const OLD_STARTUP: &str = "the old startup program\n";

fn fixture(name: &str) -> String {
    paddle_fixtures().join(name).display().to_string()
}

fn s(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

/// Files in `dir` besides `keep`.
fn others(dir: &Path, keep: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !keep.contains(&n.as_str()))
        .collect();
    v.sort();
    v
}

fn two_names_of_one_file_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("sub")).unwrap();
    for exists in [false, true] {
        let target = d.join("s.ir");
        let _ = std::fs::remove_file(&target);
        if exists {
            std::fs::write(&target, OLD).unwrap();
        }
        let link = d.join("link.ir");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink("s.ir", &link).unwrap();
        for other in [
            "./s.ir".to_string(),
            s(&target),
            "sub/../s.ir".to_string(),
            "link.ir".to_string(),
        ] {
            let r = irw()
                .current_dir(d)
                .args([
                    &fixture("before.ir"),
                    "--startup",
                    &fixture("startup_before.ir"),
                    "-o",
                    "s.ir",
                    "--startup-out",
                    &other,
                ])
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&r.stderr);
            assert_eq!(r.status.code(), Some(2), "s.ir and {other}: {err}");
            assert!(
                err.contains("the startup program needs its own file"),
                "{err}"
            );
            assert_eq!(target.exists(), exists, "s.ir and {other}");
            if exists {
                assert_eq!(std::fs::read_to_string(&target).unwrap(), OLD);
            }
        }
    }
}

fn json_pair_on_standard_output_is_refused() {
    let r = run_irw(&[
        &fixture("before.ir"),
        "--startup",
        &fixture("startup_before.ir"),
        "--emit",
        "paddle-json",
        "-o",
        "-",
        "--startup-out",
        "-",
    ]);
    assert_eq!(
        r.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    assert!(r.stdout.is_empty());
}

/// Writes the pair of before.ir (+ its startup) to `dir/m.ir`, `dir/st.ir`, with `fault`.
fn write_pair(dir: &Path, fault: Option<&str>) -> std::process::Output {
    let mut c = irw();
    c.args([
        &fixture("before.ir"),
        "--startup",
        &fixture("startup_before.ir"),
        "-o",
        &s(&dir.join("m.ir")),
        "--startup-out",
        &s(&dir.join("st.ir")),
    ]);
    if let Some(f) = fault {
        c.env("IRW_TEST_FAULT", f);
    }
    c.output().unwrap()
}

fn new_pair() -> (Vec<u8>, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let r = write_pair(dir.path(), None);
    assert!(r.status.success());
    (
        std::fs::read(dir.path().join("m.ir")).unwrap(),
        std::fs::read(dir.path().join("st.ir")).unwrap(),
    )
}

fn a_failed_rename_leaves_both_old_files() {
    for step in ["journal-1", "journals", "rename-1", "rename-2"] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("m.ir"), OLD).unwrap();
        std::fs::write(d.join("st.ir"), OLD_STARTUP).unwrap();
        let r = write_pair(d, Some(&format!("fail:{step}")));
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(1), "{step}: {err}");
        assert!(err.contains("injected failure"), "{step}: {err}");
        assert!(
            err.contains("none of the output files was replaced"),
            "{step}: {err}"
        );
        assert_eq!(
            std::fs::read_to_string(d.join("m.ir")).unwrap(),
            OLD,
            "{step}"
        );
        assert_eq!(
            std::fs::read_to_string(d.join("st.ir")).unwrap(),
            OLD_STARTUP,
            "{step}"
        );
        assert_eq!(
            others(d, &["m.ir", "st.ir"]),
            Vec::<String>::new(),
            "{step}"
        );
    }
    // A new pair, where neither file existed: a failed second rename removes the first file.
    let dir = tempfile::tempdir().unwrap();
    let r = write_pair(dir.path(), Some("fail:rename-2"));
    assert_eq!(r.status.code(), Some(1));
    assert_eq!(others(dir.path(), &[]), Vec::<String>::new());
}

fn a_kill_at_any_step_is_completed_by_the_next_run() {
    let (new_main, new_startup) = new_pair();
    for (step, committed) in [
        ("journal-1", false),
        ("journals", true),
        ("rename-1", true),
        ("rename-2", true),
        ("cleanup", true),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("m.ir"), OLD).unwrap();
        std::fs::write(d.join("st.ir"), OLD_STARTUP).unwrap();
        let r = write_pair(d, Some(&format!("kill:{step}")));
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(r.status.signal(), Some(libc::SIGKILL), "{step}");
        let (m, st) = (
            std::fs::read(d.join("m.ir")).unwrap(),
            std::fs::read(d.join("st.ir")).unwrap(),
        );
        let journal =
            d.join(".irw-pair-m.ir.tmp").exists() || d.join(".irw-pair-st.ir.tmp").exists();
        let old = m == OLD.as_bytes() && st == OLD_STARTUP.as_bytes();
        let new = m == new_main && st == new_startup;
        assert!(old || new || journal, "{step}: a mixed pair and no journal");
        // The next run writing one of the files completes the pair first.
        let r = run_irw(&[&fixture("before_adam.ir"), "-o", &s(&d.join("m.ir"))]);
        assert!(
            r.status.success(),
            "{step}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        let st = std::fs::read(d.join("st.ir")).unwrap();
        if committed {
            assert_eq!(
                st, new_startup,
                "{step}: the committed pair was not rolled forward"
            );
        } else {
            assert_eq!(
                st,
                OLD_STARTUP.as_bytes(),
                "{step}: the uncommitted pair was not rolled back"
            );
        }
        assert_eq!(
            others(d, &["m.ir", "st.ir"]),
            Vec::<String>::new(),
            "{step}"
        );
    }
}

fn concurrent_writers_never_leave_a_mixed_pair() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let inputs = [
        ("before.ir", "startup_before.ir"),
        ("before_adam.ir", "startup_before_adam.ir"),
    ];
    let run = |(main, startup): (&str, &str), m: &Path, st: &Path| {
        irw()
            .args([
                &fixture(main),
                "--startup",
                &fixture(startup),
                "-o",
                &s(m),
                "--startup-out",
                &s(st),
            ])
            .output()
            .unwrap()
    };
    let expected: Vec<(Vec<u8>, Vec<u8>)> = inputs
        .iter()
        .enumerate()
        .map(|(i, &inp)| {
            let (m, st) = (d.join(format!("e{i}.ir")), d.join(format!("e{i}s.ir")));
            assert!(run(inp, &m, &st).status.success());
            (std::fs::read(m).unwrap(), std::fs::read(st).unwrap())
        })
        .collect();
    assert_ne!(expected[0], expected[1]);
    let (m, st) = (d.join("m.ir"), d.join("st.ir"));
    for round in 0..40 {
        std::thread::scope(|sc| {
            for &inp in &inputs {
                let (m, st) = (&m, &st);
                sc.spawn(move || assert!(run(inp, m, st).status.success()));
            }
        });
        let now = (std::fs::read(&m).unwrap(), std::fs::read(&st).unwrap());
        assert!(expected.contains(&now), "round {round}: a mixed pair");
    }
}
