//! The integration tests, as one test binary.
//!
//! Each module here was a test binary of its own, compiled and linked against irw and all its
//! dependencies (egg, gemm, clap, ...): a change to the library rebuilt and relinked 34 large
//! binaries. One binary is built once.
//!
//! The binary does not use libtest (`harness = false` in `Cargo.toml`): the file-driven suites
//! (the goldens under `tests/golden/`, the bad-input corpus among them, and the round trips of
//! Paddle's dumps) make one test per file found at run time, which libtest cannot do, so
//! libtest-mimic runs everything. A module lists its test functions with `tests![...]`
//! (`common/harness.rs`) instead of marking them `#[test]`; its `tests()` is called below. The
//! names stay those of libtest (`MODULE::FUNCTION`), and the usual arguments work:
//! `cargo test --release -- golden::exec`, `--exact`, `--ignored`, `--list` (but only one
//! filter). Output is not captured: a test keeps its reports for a failure with `common::note`.
//!
//! proptest keeps the seeds of past failures in `tests/proptest-regressions/MODULE.txt`: its
//! default for a source file below a `main.rs`.
//!
//! All tests share one process, each on a thread: nothing they read is process-wide (the
//! executor counts live tensor bytes per run, or per thread outside a run).

#[macro_use]
mod common;

mod atomic_output;
mod dist;
mod dtype_u8;
mod error_coverage;
mod exec_amp;
mod exec_check;
mod exec_clip;
mod exec_collectives;
mod exec_declared;
mod exec_loss_index;
mod exec_misc;
mod exec_numerics;
mod exec_rnn;
mod exec_zoo;
mod exec_zoo_cnn;
mod gen_ir;
mod gen_mlp;
mod golden;
mod grad_merge_cond;
mod interop_dp2;
mod interop_race;
mod json_read;
mod json_write;
mod output_pairs;
mod parse_paths;
mod prop_check;
mod prop_names;
mod prop_rewrite;
mod prop_roundtrip;
mod prop_verdict;
mod robust_bounds;
mod robust_cli_errors;
mod robust_findings;
mod robust_limits;
mod robust_memory;
mod robust_pipes;
mod roundtrip;
mod rules_canonicalize;
mod rules_errors;
mod rules_grad_merge;

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let mut tests = vec![libtest_mimic::Trial::test("layout", || {
        layout().map_err(Into::into)
    })];
    tests.extend(atomic_output::tests());
    tests.extend(dist::tests());
    tests.extend(dtype_u8::tests());
    tests.extend(error_coverage::tests());
    tests.extend(exec_amp::tests());
    tests.extend(exec_check::tests());
    tests.extend(exec_clip::tests());
    tests.extend(exec_collectives::tests());
    tests.extend(exec_declared::tests());
    tests.extend(exec_loss_index::tests());
    tests.extend(exec_misc::tests());
    tests.extend(exec_numerics::tests());
    tests.extend(exec_rnn::tests());
    tests.extend(exec_zoo::tests());
    tests.extend(exec_zoo_cnn::tests());
    tests.extend(gen_ir::tests());
    tests.extend(gen_mlp::tests());
    tests.extend(golden::tests());
    tests.extend(grad_merge_cond::tests());
    tests.extend(interop_dp2::tests());
    tests.extend(interop_race::tests());
    tests.extend(json_read::tests());
    tests.extend(json_write::tests());
    tests.extend(output_pairs::tests());
    tests.extend(parse_paths::tests());
    tests.extend(prop_check::tests());
    tests.extend(prop_names::tests());
    tests.extend(prop_verdict::tests());
    tests.extend(prop_rewrite::tests());
    tests.extend(prop_roundtrip::tests());
    tests.extend(robust_bounds::tests());
    tests.extend(robust_cli_errors::tests());
    tests.extend(robust_findings::tests());
    tests.extend(robust_limits::tests());
    tests.extend(robust_memory::tests());
    tests.extend(robust_pipes::tests());
    tests.extend(roundtrip::tests());
    tests.extend(rules_canonicalize::tests());
    tests.extend(rules_errors::tests());
    tests.extend(rules_grad_merge::tests());
    libtest_mimic::run(&args, tests).exit();
}

/// What the compiler cannot see: a test file outside `tests/all/` (cargo would build it as a
/// binary of its own), a module file no `mod` line declares (never compiled), a `#[test]`
/// (compiled out without libtest; list the function with `tests![...]` instead), a bad input
/// in `tests/bad/` that no golden case runs.
fn layout() -> Result<(), String> {
    let root = common::root();
    let mut problems = Vec::new();
    for e in std::fs::read_dir(root.join("tests")).map_err(|e| e.to_string())? {
        let p = e.map_err(|e| e.to_string())?.path();
        if p.extension().is_some_and(|x| x == "rs") {
            problems.push(format!(
                "{}: move it to tests/all/ and declare it in tests/all/main.rs",
                p.display()
            ));
        }
    }
    let main =
        std::fs::read_to_string(root.join("tests/all/main.rs")).map_err(|e| e.to_string())?;
    for p in common::files_with_ext(&root.join("tests/all"), "rs") {
        let text = std::fs::read_to_string(&p).map_err(|e| e.to_string())?;
        let stem = p.file_stem().unwrap_or_default().to_string_lossy();
        if p.parent() == Some(&root.join("tests/all"))
            && stem != "main"
            && !main.lines().any(|l| l == format!("mod {stem};"))
        {
            problems.push(format!(
                "{}: not declared with `mod {stem};` in tests/all/main.rs",
                p.display()
            ));
        }
        for (i, l) in text.lines().enumerate() {
            if l.trim() == concat!("#[", "test]") {
                problems.push(format!(
                    "{}:{}: `#[test]` does not run here: list the function in the module's `tests![...]`",
                    p.display(),
                    i + 1
                ));
            }
        }
    }
    // The bad inputs are golden cases now (`tests/golden/bad/NAME.test`); an input without its
    // case, or a case in the old format (`NAME.expect`), would never run.
    for p in common::files_with_ext(&root.join("tests/bad"), "expect") {
        problems.push(format!(
            "{}: write it as tests/golden/bad/NAME.test (see tests/golden/README.md)",
            p.display()
        ));
    }
    for p in common::files_with_ext(&root.join("tests/bad"), "ir") {
        let stem = p.file_stem().unwrap_or_default().to_string_lossy();
        if !root.join(format!("tests/golden/bad/{stem}.test")).is_file() {
            problems.push(format!(
                "{}: no case tests/golden/bad/{stem}.test runs it",
                p.display()
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}
