//! Atomic outputs: `-o FILE` is written to a temporary file beside FILE and renamed over it
//! when complete (src/cli/io.rs). An interrupted or failed run must leave the old FILE
//! untouched, and no partial file under FILE's name.
//!
//! `-o` with `--startup-out` is one output: both files are written in full to temporary files
//! before either is renamed, so a run that fails (bad input, a failing rule, the time limit, an
//! unwritable second file) or is killed while writing leaves both old files as they were.
//!
//! A run killed with SIGKILL while writing cannot clean up: its `.irw-XXXXXX.tmp` file may
//! remain in the directory (documented in src/cli/io.rs). That is the only thing it may leave.

use crate::common::*;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

tests![
    #[cfg(unix)]
    sigkill_while_writing_leaves_the_old_file_untouched,
    a_failed_run_leaves_the_old_file_and_nothing_else,
    #[cfg(unix)]
    outputs_keep_the_permissions_of_the_file_they_replace_or_get_the_usual_ones,
    a_failed_run_leaves_both_files_of_a_startup_out_pair_untouched,
    #[cfg(unix)]
    sigkill_while_writing_a_startup_out_pair_leaves_both_old_files,
    #[cfg(unix)]
    a_fifo_or_device_target_is_written_in_place,
    #[cfg(unix)]
    sigterm_or_sigint_while_writing_removes_the_temporary_file,
    #[cfg(unix)]
    output_through_a_symlink_writes_the_file_it_points_to,
];

const OLD: &str = "the old program\n";

/// Names in `dir` other than `keep`.
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

/// Waits (at most `limit`) until `child` has created a file in `dir` besides `keep`, its
/// temporary output, then SIGKILLs it. Returns its exit status and whether that file was seen.
#[cfg(unix)]
fn kill_while_writing(
    mut child: std::process::Child,
    dir: &Path,
    keep: &[&str],
    limit: Duration,
) -> (std::process::ExitStatus, bool) {
    let start = Instant::now();
    let mut saw_tmp = false;
    while start.elapsed() < limit {
        if !others(dir, keep).is_empty() {
            saw_tmp = true;
            break;
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    let _ = child.kill(); // SIGKILL
    (child.wait().unwrap(), saw_tmp)
}

/// Besides `keep`, a killed run may leave only its temporary files.
#[cfg(unix)]
fn assert_only_temporaries_left(dir: &Path, keep: &[&str]) {
    for name in others(dir, keep) {
        assert!(
            name.starts_with(".irw-") && name.ends_with(".tmp"),
            "unexpected file left behind: {name}"
        );
    }
}

#[cfg(unix)]
fn sigkill_while_writing_leaves_the_old_file_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.ir");
    let o = out.to_string_lossy().into_owned();
    let mut killed_mid_write = false;
    // A program of ~90 MB (30 000 layers) takes a few hundred milliseconds to write and sync;
    // larger ones if this machine is fast enough to finish before the kill lands.
    for layers in [30_000usize, 60_000, 120_000] {
        std::fs::write(&out, OLD).unwrap();
        let child = irw()
            .args(["gen", "mlp", "--layers", &layers.to_string(), "-o", &o])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Kill as soon as the temporary file exists: irw is then writing it.
        let (status, saw_tmp) =
            kill_while_writing(child, dir.path(), &["out.ir"], Duration::from_secs(60));
        let content = std::fs::read(&out).unwrap();
        if status.success() {
            // Finished before the kill: the new program, complete.
            let text = String::from_utf8(content).unwrap();
            assert!(
                text.starts_with("{\n") && text.ends_with("}\n"),
                "a partial output"
            );
            continue;
        }
        assert!(saw_tmp, "irw failed before writing: {status:?}");
        assert_eq!(
            content,
            OLD.as_bytes(),
            "the old file changed after SIGKILL mid-write"
        );
        assert_only_temporaries_left(dir.path(), &["out.ir"]);
        killed_mid_write = true;
        break;
    }
    assert!(
        killed_mid_write,
        "every run finished before it could be killed: the test proved nothing"
    );
}

fn a_failed_run_leaves_the_old_file_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.ir");
    std::fs::write(&out, OLD).unwrap();
    let o = out.to_string_lossy().into_owned();
    for args in [
        vec!["tests/bad/truncated_op.ir", "-o", &o],
        vec![
            "--rules",
            "rules/grad_merge.rw",
            "--set",
            "k_steps=0",
            "../shared/fixtures/paddle/before.ir",
            "-o",
            &o,
        ],
        vec![
            "--rules",
            "rules/grad_merge.rw",
            "--set",
            "k_steps=2",
            "../shared/fixtures/paddle/before_noroles.ir",
            "-o",
            &o,
        ],
    ] {
        let r = run_irw(&args);
        assert_ne!(r.status.code(), Some(0), "{args:?} succeeded");
        assert!(r.stdout.is_empty());
        assert_eq!(std::fs::read_to_string(&out).unwrap(), OLD, "{args:?}");
        assert!(others(dir.path(), &["out.ir"]).is_empty(), "{args:?}");
    }
    // An output directory that does not exist: a message, nothing written.
    let missing = dir.path().join("no/such/dir/out.ir");
    let r = run_irw(&[
        "../shared/fixtures/paddle/before.ir",
        "-o",
        &missing.to_string_lossy(),
    ]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot write"), "{err}");
}

#[cfg(unix)]
fn outputs_keep_the_permissions_of_the_file_they_replace_or_get_the_usual_ones() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    // A new file gets what any new file gets here (0666 less the umask), not 0600.
    let plain = dir.path().join("plain");
    std::fs::write(&plain, "x").unwrap();
    let out = dir.path().join("new.ir");
    let r = run_irw(&["gen", "mlp", "--layers", "1", "-o", &out.to_string_lossy()]);
    assert!(r.status.success());
    assert_eq!(mode(&out), mode(&plain));
    // A replaced file keeps its mode.
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o640)).unwrap();
    let r = run_irw(&["gen", "mlp", "--layers", "2", "-o", &out.to_string_lossy()]);
    assert!(r.status.success());
    assert_eq!(mode(&out), 0o640);
}

const OLD_STARTUP: &str = "the old startup program\n";

fn fixture(name: &str) -> String {
    paddle_fixtures().join(name).to_string_lossy().into_owned()
}

fn a_failed_run_leaves_both_files_of_a_startup_out_pair_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let (out, sout) = (dir.path().join("out.ir"), dir.path().join("startup_out.ir"));
    let (o, so) = (
        out.to_string_lossy().into_owned(),
        sout.to_string_lossy().into_owned(),
    );
    let (main, startup) = (fixture("before.ir"), fixture("startup_before.ir"));
    let missing = dir.path().join("no/such/dir/startup_out.ir");
    let missing = missing.to_string_lossy().into_owned();
    let noroles = fixture("before_noroles.ir");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        // Bad input.
        (
            vec![
                "tests/bad/truncated_op.ir",
                "--startup",
                &startup,
                "-o",
                &o,
                "--startup-out",
                &so,
            ],
            "truncated_op.ir",
        ),
        // A rule that refuses the program (no op_role).
        (
            vec![
                "--rules",
                "rules/grad_merge.rw",
                "--set",
                "k_steps=2",
                &noroles,
                "--startup",
                &startup,
                "-o",
                &o,
                "--startup-out",
                &so,
            ],
            "optimizer op has no op_role",
        ),
        // The time limit.
        (
            vec![
                "--rules",
                "rules/grad_merge.rw",
                "--set",
                "k_steps=2",
                "--timeout",
                "0",
                &main,
                "--startup",
                &startup,
                "-o",
                &o,
                "--startup-out",
                &so,
            ],
            "time limit",
        ),
        // The main file could be written, the startup file cannot: neither is replaced.
        (
            vec![
                &main,
                "--startup",
                &startup,
                "-o",
                &o,
                "--startup-out",
                &missing,
            ],
            "cannot write",
        ),
        // The other way round.
        (
            vec![
                &main,
                "--startup",
                &startup,
                "-o",
                &missing,
                "--startup-out",
                &so,
            ],
            "cannot write",
        ),
        // A target that is a directory.
        (
            vec![
                &main,
                "--startup",
                &startup,
                "-o",
                &o,
                "--startup-out",
                dir.path().to_str().unwrap(),
            ],
            "it is a directory",
        ),
    ];
    for (args, msg) in cases {
        std::fs::write(&out, OLD).unwrap();
        std::fs::write(&sout, OLD_STARTUP).unwrap();
        let r = run_irw(&args);
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(msg), "{args:?}: want `{msg}` in {err}");
        assert!(r.stdout.is_empty(), "{args:?}");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), OLD, "{args:?}");
        assert_eq!(
            std::fs::read_to_string(&sout).unwrap(),
            OLD_STARTUP,
            "{args:?}"
        );
        assert!(
            others(dir.path(), &["out.ir", "startup_out.ir"]).is_empty(),
            "{args:?} left files behind"
        );
    }
    // And a run that succeeds replaces both.
    let r = run_irw(&[&main, "--startup", &startup, "-o", &o, "--startup-out", &so]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert!(std::fs::read_to_string(&out).unwrap().starts_with("{\n"));
    assert!(std::fs::read_to_string(&sout).unwrap().starts_with("{\n"));
}

#[cfg(unix)]
fn sigkill_while_writing_a_startup_out_pair_leaves_both_old_files() {
    let dir = tempfile::tempdir().unwrap();
    let (out, sout) = (dir.path().join("out.ir"), dir.path().join("startup_out.ir"));
    let (o, so) = (
        out.to_string_lossy().into_owned(),
        sout.to_string_lossy().into_owned(),
    );
    let mut killed_mid_write = false;
    for layers in [30_000usize, 60_000, 120_000] {
        // A large program with its startup program in the same file.
        let big = dir.path().join("big.ir");
        let r = run_irw(&[
            "gen",
            "mlp",
            "--layers",
            &layers.to_string(),
            "-o",
            big.to_str().unwrap(),
        ]);
        assert!(r.status.success());
        std::fs::write(&out, OLD).unwrap();
        std::fs::write(&sout, OLD_STARTUP).unwrap();
        let child = irw()
            .args([big.to_str().unwrap(), "-o", &o, "--startup-out", &so])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let keep = ["out.ir", "startup_out.ir", "big.ir"];
        let (status, saw_tmp) =
            kill_while_writing(child, dir.path(), &keep, Duration::from_secs(120));
        let (main_now, startup_now) = (std::fs::read(&out).unwrap(), std::fs::read(&sout).unwrap());
        if status.success() {
            // Finished before the kill: both new, complete.
            for t in [main_now, startup_now] {
                let t = String::from_utf8(t).unwrap();
                assert!(
                    t.starts_with("{\n") && t.ends_with("}\n"),
                    "a partial output"
                );
            }
            continue;
        }
        assert!(saw_tmp, "irw failed before writing: {status:?}");
        // The main program's temporary file is the large one: the kill lands while it is being
        // written, before either rename.
        assert_eq!(main_now, OLD.as_bytes(), "the old -o file changed");
        assert_eq!(
            startup_now,
            OLD_STARTUP.as_bytes(),
            "the old --startup-out file changed"
        );
        assert_only_temporaries_left(dir.path(), &keep);
        killed_mid_write = true;
        break;
    }
    assert!(
        killed_mid_write,
        "every run finished before it could be killed: the test proved nothing"
    );
}

/// A target that is not a regular file (a FIFO here; `/dev/null` or `/dev/stdout` alike) is
/// written in place: renaming the temporary file over it would replace the device or pipe
/// itself (`irw -o /dev/null` run as root once turned this machine's /dev/null into a regular
/// file, which broke every later `cargo` run that reads it).
#[cfg(unix)]
fn a_fifo_or_device_target_is_written_in_place() {
    use std::io::Read;
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("out.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    // The read end is opened first and without blocking, so irw's open for writing does not
    // wait, and a broken irw that renames over the FIFO makes this test fail, not hang. The
    // program (7 KB) fits in the pipe's buffer.
    let mut read_end = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
            .unwrap()
    };
    let r = run_irw(&[&fixture("before.ir"), "-o", fifo.to_str().unwrap()]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let mut text = String::new();
    read_end.read_to_string(&mut text).unwrap();
    assert_eq!(
        text,
        std::fs::read_to_string(fixture("before.ir")).unwrap(),
        "the program printed back through the FIFO"
    );
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(others(dir.path(), &["out.fifo"]), Vec::<String>::new());
}

/// Waits (at most `limit`) until `child` has created its temporary output in `dir`, sends it
/// `sig`, and waits for it. Returns its exit status and whether the temporary file was seen.
#[cfg(unix)]
fn signal_while_writing(
    mut child: std::process::Child,
    dir: &Path,
    keep: &[&str],
    sig: i32,
) -> (std::process::ExitStatus, bool) {
    let start = Instant::now();
    let mut saw_tmp = false;
    while start.elapsed() < Duration::from_secs(60) {
        if !others(dir, keep).is_empty() {
            saw_tmp = true;
            break;
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    // SAFETY: kill(2) on the pid of a child this test spawned and has not yet reaped.
    unsafe {
        libc::kill(child.id() as i32, sig);
    }
    (child.wait().unwrap(), saw_tmp)
}

#[cfg(unix)]
fn sigterm_or_sigint_while_writing_removes_the_temporary_file() {
    use std::os::unix::process::ExitStatusExt;
    // Only SIGKILL may leave the `.irw-XXXXXX.tmp` file behind; a catchable signal removes it.
    for sig in [libc::SIGTERM, libc::SIGINT] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.ir");
        let o = out.to_string_lossy().into_owned();
        let mut interrupted = false;
        for layers in [30_000usize, 60_000, 120_000] {
            std::fs::write(&out, OLD).unwrap();
            let child = irw()
                .args(["gen", "mlp", "--layers", &layers.to_string(), "-o", &o])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let (status, saw_tmp) = signal_while_writing(child, dir.path(), &["out.ir"], sig);
            if status.success() {
                continue;
            }
            assert!(saw_tmp, "irw failed before writing: {status:?}");
            assert_eq!(status.signal(), Some(sig), "{status:?}");
            assert_eq!(others(dir.path(), &["out.ir"]), Vec::<String>::new());
            let content = std::fs::read(&out).unwrap();
            if content != OLD.as_bytes() {
                // The signal landed after the rename: the new program, complete.
                assert!(content.ends_with(b"}\n"), "a partial output");
                continue;
            }
            interrupted = true;
            break;
        }
        assert!(interrupted, "every run finished before the signal landed");
    }
}

#[cfg(unix)]
fn output_through_a_symlink_writes_the_file_it_points_to() {
    // The link stays a link, and the file it points to gets the new text (a rename onto the
    // link would replace the link with a regular file and leave the target stale).
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("real");
    std::fs::create_dir(&sub).unwrap();
    let target = sub.join("target.ir");
    std::fs::write(&target, OLD).unwrap();
    let link = dir.path().join("link.ir");
    std::os::unix::fs::symlink("real/target.ir", &link).unwrap();
    // A link to a link, and a dangling link (its target is created).
    let link2 = dir.path().join("link2.ir");
    std::os::unix::fs::symlink(&link, &link2).unwrap();
    let dangling = dir.path().join("dangling.ir");
    std::os::unix::fs::symlink("real/new.ir", &dangling).unwrap();
    for (l, t) in [
        (&link, &target),
        (&link2, &target),
        (&dangling, &sub.join("new.ir")),
    ] {
        let out = run_irw(&["gen", "mlp", "--layers", "1", "-o", &l.to_string_lossy()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(std::fs::symlink_metadata(l)
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(std::fs::read_to_string(t).unwrap().contains("pd_op.matmul"));
    }
    assert_eq!(others(&sub, &["target.ir", "new.ir"]), Vec::<String>::new());
}
