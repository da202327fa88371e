//! `--max-memory`: the executor's limit on live tensor bytes (src/exec/memory.rs).
//!
//! The messages themselves are checked by the goldens in `tests/golden/exec/`; here:
//! - a program asking for terabytes fails with its message *without trying to allocate*: the
//!   binary runs under an address-space limit (`ulimit -v`) far below what it asks for, so an
//!   attempted allocation would abort it instead;
//! - the flags of `run` and `check` that size the execution are validated (exit code 2);
//! - the live count follows tensors as they are made, cloned and dropped.

use crate::common::*;

use irw::exec::memory;
use irw::exec::{DType, Tensor};
use std::process::Output;

tests![
    #[cfg(unix)]
    huge_tensors_are_refused_before_they_are_allocated,
    #[cfg(unix)]
    the_default_limit_leaves_ordinary_programs_alone,
    sizing_flags_are_validated,
    the_live_count_follows_tensors,
    #[cfg(unix)]
    gen_refuses_a_program_too_large_to_hold_instead_of_aborting,
    #[cfg(unix)]
    gen_reports_a_text_it_cannot_allocate,
];

fn fixture(name: &str) -> String {
    paddle_fixtures().join(name).to_string_lossy().into_owned()
}

/// Runs irw with at most 2 GiB of address space.
#[cfg(unix)]
fn run_irw_limited(args: &[&str]) -> Output {
    std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 2097152 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_irw"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("sh runs")
}

#[cfg(unix)]
fn huge_tensors_are_refused_before_they_are_allocated() {
    for (file, msg) in [
        ("tests/golden/exec/full_huge.ir", "needs 3.64 TiB"),
        ("tests/golden/exec/broadcast_huge.ir", "needs 37.3 GiB"),
        ("tests/golden/exec/uniform_huge.ir", "needs 37.3 GiB"),
        (
            "tests/golden/exec/full_shape_overflow.ir",
            "more elements than",
        ),
    ] {
        let start = std::time::Instant::now();
        let out = run_irw_limited(&["run", file]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{file}: {err}");
        assert!(err.contains(msg), "{file}: want `{msg}` in:\n{err}");
        assert!(
            !err.contains("panicked") && !err.contains("memory allocation"),
            "{err}"
        );
        assert!(
            start.elapsed().as_secs() < 10,
            "{file} took {:?}",
            start.elapsed()
        );
    }
    // With a limit above what it asks for, the broadcast really is allocated, and the address
    // space limit kills the process without a diagnostic: what the memory limit prevents (and
    // proof that the runs above would have failed differently had they tried).
    let out = run_irw_limited(&[
        "run",
        "tests/golden/exec/broadcast_huge.ir",
        "--max-memory",
        "64G",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(!err.contains("over the executor's memory limit"), "{err}");
}

#[cfg(unix)]
fn the_default_limit_leaves_ordinary_programs_alone() {
    let out = run_irw_limited(&[
        "run",
        &fixture("before.ir"),
        "--startup",
        &fixture("startup_before.ir"),
        "--k-steps",
        "2",
        "--ranks",
        "2",
        "--steps",
        "2",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("step 1: loss"));
}

fn usage_error(out: Output, fragment: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(fragment), "want `{fragment}` in:\n{err}");
}

fn sizing_flags_are_validated() {
    let (main, startup) = (fixture("before.ir"), fixture("startup_before.ir"));
    for (flag, value, msg) in [
        (
            "--max-memory",
            "lots",
            "`lots` is not a size (bytes, or a number with K, M or G)",
        ),
        (
            "--max-memory",
            "4T",
            "`4T`: unknown unit `T` (use K, M or G)",
        ),
        (
            "--max-memory",
            "99999999999G",
            "`99999999999G` is too large",
        ),
        (
            "--ranks",
            "0",
            "`0` is not a number of ranks from 1 to 1024",
        ),
        (
            "--ranks",
            "5000",
            "`5000` is not a number of ranks from 1 to 1024",
        ),
        ("--k-steps", "0", "`0` is not a whole number of at least 1"),
        (
            "--micro-batch",
            "0",
            "`0` is not a whole number of at least 1",
        ),
    ] {
        usage_error(
            run_irw(&["run", &main, "--startup", &startup, flag, value]),
            msg,
        );
        usage_error(
            run_irw(&[
                "check",
                "--rules",
                "rules/grad_merge.rw",
                "--set",
                "k_steps=2",
                &main,
                "--startup",
                &startup,
                flag,
                value,
            ]),
            msg,
        );
    }
    usage_error(
        run_irw(&["run", &main, "--startup", &startup, "--steps", "0"]),
        "`0` is not a whole number of at least 1",
    );
}

fn the_live_count_follows_tensors() {
    // The count is process-wide, and other tests make tensors in this binary's process: run
    // alone, where the count is ours.
    let name = test_name(module_path!(), "the_live_count_follows_tensors");
    alone(&name, || {
        let before = memory::live();
        let a = Tensor::full(&[1000], DType::F32, 1.0);
        assert_eq!(memory::live(), before + 4000);
        let b = a.clone();
        let c = Tensor::full(&[10], DType::I64, 2.0)
            .reshaped(vec![2, 5])
            .unwrap();
        assert_eq!(memory::live(), before + 8080);
        drop(a);
        let data = b.into_data();
        assert_eq!(
            memory::live(),
            before + 80,
            "a buffer taken out is no longer counted"
        );
        drop((c, data));
        assert_eq!(memory::live(), before);
        assert!(Tensor::try_full(&[1 << 40, 1 << 40], DType::F32, 0.0).is_err());
        assert_eq!(memory::live(), before);
    });
}

#[cfg(unix)]
fn gen_refuses_a_program_too_large_to_hold_instead_of_aborting() {
    // Before: `gen mlp --layers 20000000` aborted on allocation (SIGABRT, no message).
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("big.ir");
    for layers in ["20000000", "18446744073709551615"] {
        let out = run_irw_limited(&["gen", "mlp", "--layers", layers, "-o", &o.to_string_lossy()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains(&format!("--layers {layers} would make a program of about"))
                && err.contains("more than irw reads on this machine"),
            "{err}"
        );
        assert!(!o.exists());
    }
    // A size that fits is still generated.
    let out = run_irw_limited(&["gen", "mlp", "--layers", "1000", "-o", &o.to_string_lossy()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(o.exists());
}

#[cfg(unix)]
fn gen_reports_a_text_it_cannot_allocate() {
    // 300 000 layers are about 900 MB of text: under 512 MiB of address space the allocation
    // fails, and that is an error, not an abort.
    let dir = tempfile::tempdir().unwrap();
    let o = dir.path().join("big.ir");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 524288 && exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_irw"))
        .args([
            "gen",
            "mlp",
            "--layers",
            "300000",
            "-o",
            &o.to_string_lossy(),
        ])
        .output()
        .expect("sh runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--layers 300000: cannot allocate the"),
        "{err}"
    );
    assert!(!o.exists());
}
