//! `--max-memory`: the executor's limit on live tensor bytes (src/exec/memory.rs).
//!
//! The messages themselves are checked by the goldens in `tests/golden/exec/`; here:
//! - a program asking for terabytes fails with its message *without trying to allocate*: the
//!   binary runs under an address-space limit (`ulimit -v`) far below what it asks for, so an
//!   attempted allocation would abort it instead;
//! - the flags of `run` and `check` that size the execution are validated (exit code 2);
//! - the live count follows tensors as they are made, cloned and dropped, per thread;
//! - rewriting a program of 10^6 ops stays within a small multiple of its text (`--stats`
//!   reports the peak resident memory), and a large input, which irw maps rather than reads,
//!   prints back the same bytes and reports bad UTF-8 where a read one would;
//! - reading and writing Paddle JSON stays within a small multiple of the file, as the text
//!   form does (a document tree of the whole file would take 30-70×);
//! - `run --dump` streams the state from the tensors: its peak is that of the run without it.

use crate::common::*;

use irw::executor::memory;
use irw::executor::{DType, Tensor};
use std::process::Output;

tests![
    #[cfg(unix)]
    huge_tensors_are_refused_before_they_are_allocated,
    #[cfg(unix)]
    the_default_limit_leaves_ordinary_programs_alone,
    sizing_flags_are_validated,
    the_live_count_follows_tensors,
    runs_in_one_process_have_their_own_limit,
    #[cfg(unix)]
    gen_refuses_a_program_too_large_to_hold_instead_of_aborting,
    #[cfg(unix)]
    gen_reports_a_text_it_cannot_allocate,
    #[cfg(unix)]
    a_million_op_program_is_rewritten_in_under_twice_its_size,
    #[cfg(unix)]
    paddle_json_is_read_and_written_in_a_small_multiple_of_its_size,
    mapped_inputs_read_like_read_ones,
    #[cfg(target_os = "linux")]
    run_dump_needs_no_memory_beyond_the_tensors,
    #[cfg(unix)]
    canonicalize_peaks_under_seven_times_its_input,
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
    // Outside a run, tensors charge their thread's own budget: the other tests of this process,
    // running beside this one, charge theirs, so this test need not run alone.
    {
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
    }
}

/// The limit is an option of the run, and the live count belongs to the run: a run under a
/// tiny limit fails while runs beside it, on other threads and on this one, do not notice.
fn runs_in_one_process_have_their_own_limit() {
    use irw::executor::{run, RunOptions};
    let text = std::fs::read_to_string(root().join("examples/mlp.ir")).expect("example");
    let m = irw::parse_module(&irw::SourceFile::new("mlp.ir", text.as_str())).expect("parses");
    let before = memory::live();
    std::thread::scope(|s| {
        let big = s.spawn(|| {
            (0..8)
                .map(|seed| {
                    run(
                        &m,
                        &RunOptions {
                            seed,
                            micro_batch: Some(4096),
                            ..Default::default()
                        },
                    )
                    .map(|_| ())
                })
                .collect::<Result<Vec<()>, _>>()
        });
        for _ in 0..8 {
            let tiny = run(
                &m,
                &RunOptions {
                    max_memory: 1024,
                    ..Default::default()
                },
            );
            let e = tiny.expect_err("1 KiB is too little").to_string();
            assert!(
                e.contains("over the executor's memory limit of 1 KiB"),
                "{e}"
            );
            assert_eq!(memory::limit(), memory::DEFAULT_MAX_MEMORY);
        }
        big.join()
            .expect("no panic")
            .unwrap_or_else(|d| panic!("{d}"));
    });
    assert_eq!(
        memory::live(),
        before,
        "a run's tensors are not this thread's"
    );
}

#[cfg(unix)]
fn gen_refuses_a_program_too_large_to_hold_instead_of_aborting() {
    // `gen mlp --layers 20000000` is refused with a message, never an allocation abort.
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

/// The peak resident memory `--stats` reports, as a multiple of the input's size.
fn peak_ratio(stderr: &str) -> f64 {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("irw: peak memory"))
        .unwrap_or_else(|| panic!("no peak memory line in:\n{stderr}"));
    let ratio = line
        .split('(')
        .nth(1)
        .and_then(|r| r.split('x').next())
        .and_then(|r| r.parse::<f64>().ok());
    ratio.unwrap_or_else(|| panic!("cannot read the ratio of `{line}`"))
}

/// Whether two files hold the same bytes (read a megabyte at a time).
fn same_bytes(a: &std::path::Path, b: &std::path::Path) -> bool {
    use std::io::Read;
    let (mut fa, mut fb) = (
        std::io::BufReader::new(std::fs::File::open(a).expect("a")),
        std::io::BufReader::new(std::fs::File::open(b).expect("b")),
    );
    let (mut ba, mut bb) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
    loop {
        let na = fa.read(&mut ba).expect("read a");
        let mut nb = 0;
        while nb < na {
            match fb.read(&mut bb[nb..na]).expect("read b") {
                0 => return false,
                n => nb += n,
            }
        }
        if na == 0 {
            return fb.read(&mut bb).expect("read b") == 0;
        }
        if ba[..na] != bb[..na] {
            return false;
        }
    }
}

/// `irw gen mlp --layers LAYERS` written to `dir/mlp.ir`.
fn generated_mlp(dir: &std::path::Path, layers: u32) -> std::path::PathBuf {
    let prog = dir.join("mlp.ir");
    let out = irw()
        .args(["gen", "mlp", "--layers", &layers.to_string(), "-o"])
        .arg(&prog)
        .output()
        .expect("irw runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    prog
}

/// The memory bound at 10^6 ops (`irw gen mlp --layers 60000`: 1.02·10^6 ops, 172 MiB of
/// text): parse+print under 1.5x the input and grad_merge under 2.1x. They take about 1.1x
/// and 1.92-1.96x (grad_merge's output has 2.2x the ops of its input, all held at once). The grad_merge bound
/// leaves 5% for the allocator and the parser threads' timing; see README, Performance.
fn a_million_op_program_is_rewritten_in_under_twice_its_size() {
    let dir = tempfile::tempdir().expect("temp dir");
    let prog = generated_mlp(dir.path(), 60000);
    let printed = dir.path().join("printed.ir");
    let out = irw()
        .arg("--stats")
        .arg(&prog)
        .arg("-o")
        .arg(&printed)
        .output()
        .expect("irw runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        same_bytes(&prog, &printed),
        "the mapped program printed back differently"
    );
    let ratio = peak_ratio(&err);
    note(format!("parse+print: {ratio:.2}x the input"));
    assert!(ratio < 1.5, "parse+print peaked at {ratio:.2}x the input");
    let merged = dir.path().join("merged.ir");
    let out = irw()
        .args([
            "--stats",
            "--rules",
            "rules/grad_merge.rw",
            "--set",
            "k_steps=4",
        ])
        .arg(&prog)
        .arg("-o")
        .arg(&merged)
        .current_dir(root())
        .output()
        .expect("irw runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let ratio = peak_ratio(&err);
    note(format!("grad_merge: {ratio:.2}x the input"));
    assert!(ratio < 2.1, "grad_merge peaked at {ratio:.2}x the input");
}

/// Paddle JSON of a 10^4-layer MLP (170 000 ops): writing it peaks under 5× the program's text
/// (the module, and both JSON texts held until they are written together) and reading it back
/// under 3× the file (the text, the module and one op's tree), not the tens of times a tree of
/// the whole document takes.
#[cfg(unix)]
fn paddle_json_is_read_and_written_in_a_small_multiple_of_its_size() {
    let dir = tempfile::tempdir().expect("temp dir");
    let prog = generated_mlp(dir.path(), 10000);
    let (main, startup) = (
        dir.path().join("main.json"),
        dir.path().join("startup.json"),
    );
    let out = irw()
        .args(["--stats", "--emit", "paddle-json"])
        .arg(&prog)
        .arg("-o")
        .arg(&main)
        .arg("--startup-out")
        .arg(&startup)
        .output()
        .expect("irw runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let ratio = peak_ratio(&err);
    note(format!("--emit paddle-json: {ratio:.2}x the input"));
    assert!(
        ratio < 5.0,
        "--emit paddle-json peaked at {ratio:.2}x the input"
    );
    let back = dir.path().join("back.ir");
    let out = irw()
        .arg("--stats")
        .arg(&main)
        .arg("--startup")
        .arg(&startup)
        .arg("-o")
        .arg(&back)
        .output()
        .expect("irw runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(same_bytes(&prog, &back), "the JSON read back differently");
    let ratio = peak_ratio(&err);
    note(format!("reading Paddle JSON: {ratio:.2}x the input"));
    assert!(
        ratio < 3.0,
        "reading Paddle JSON peaked at {ratio:.2}x the input"
    );
}

/// Inputs of 4 MiB and more are memory-mapped (`irw::source_text`): a byte order mark is
/// dropped and bad UTF-8 is reported at the same line and column as in a small file.
fn mapped_inputs_read_like_read_ones() {
    let dir = tempfile::tempdir().expect("temp dir");
    let prog = generated_mlp(dir.path(), 2000);
    let text = std::fs::read(&prog).expect("generated");
    assert!(
        text.len() >= 4 << 20,
        "the program is large enough to be mapped"
    );
    // A byte order mark is not part of the program.
    let bom = dir.path().join("bom.ir");
    std::fs::write(&bom, [b"\xef\xbb\xbf".as_slice(), &text].concat()).expect("write");
    let out = irw().arg(&bom).output().expect("irw runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stdout == text,
        "a mapped file with a BOM printed back differently"
    );
    // A bad byte on the last line.
    let lines = text.iter().filter(|&&b| b == b'\n').count();
    let mut bad = text.clone();
    let last_line_start = bad[..bad.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    bad[last_line_start] = 0xff;
    let file = dir.path().join("bad.ir");
    std::fs::write(&file, &bad).expect("write");
    let out = irw().arg(&file).output().expect("irw runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(out.stdout.is_empty());
    let want = format!("bad.ir:{lines}:1: error: the file is not valid UTF-8");
    assert!(err.contains(&want), "want `{want}` in:\n{err}");
}

/// Runs irw with `args` and returns its exit code and peak resident set in bytes, measured by
/// `wait4` for this child alone (the other tests of this process run children beside it).
#[cfg(target_os = "linux")]
#[allow(
    clippy::zombie_processes,
    reason = "the child is reaped by wait4, which also reports its peak"
)]
fn exit_and_peak_rss(args: &[&str]) -> (i32, u64) {
    let child = irw()
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("irw runs");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: `rusage` is plain data, written by `wait4` for the child this test spawned and
    // has not waited for.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    assert_eq!(r, pid, "wait4: {}", std::io::Error::last_os_error());
    assert!(libc::WIFEXITED(status), "irw {args:?} ended by a signal");
    (libc::WEXITSTATUS(status), ru.ru_maxrss as u64 * 1024)
}

/// `run --dump` writes the state as a stream from the tensors the run holds: on examples/mlp.ir
/// widened to 1024 hidden units (a 1024x1024 weight, 4 MiB), whose dump is about 30 MB of JSON
/// text, the run's peak grows by less than a quarter of the dump. A dump built in memory (the
/// text, or a JSON tree of it) would add at least the whole dump.
#[cfg(target_os = "linux")]
fn run_dump_needs_no_memory_beyond_the_tensors() {
    let mlp = std::fs::read_to_string(root().join("examples/mlp.ir")).expect("examples/mlp.ir");
    let wide = [
        ("8x16x", "8x1024x"),
        ("16x16x", "1024x1024x"),
        ("<16xf32>", "<1024xf32>"),
        ("-1x16x", "-1x1024x"),
        ("16x4x", "1024x4x"),
        ("shape:[16]", "shape:[1024]"),
        ("value:[8,16]", "value:[8,1024]"),
        ("value:[16,16]", "value:[1024,1024]"),
        ("value:[16,4]", "value:[1024,4]"),
    ]
    .iter()
    .fold(mlp, |t, (a, b)| t.replace(a, b));
    let dir = tempfile::tempdir().expect("temp dir");
    let prog = dir.path().join("wide.ir");
    std::fs::write(&prog, wide).unwrap();
    let dump = dir.path().join("dump.json");
    let p = prog.to_str().unwrap();
    let (code, without) = exit_and_peak_rss(&["run", p]);
    assert_eq!(code, 0, "irw run wide.ir");
    let (code, with) = exit_and_peak_rss(&["run", p, "--dump", dump.to_str().unwrap()]);
    assert_eq!(code, 0, "irw run wide.ir --dump");
    let size = std::fs::metadata(&dump).expect("dump written").len();
    let v: serde_json::Value =
        serde_json::from_reader(std::io::BufReader::new(std::fs::File::open(&dump).unwrap()))
            .expect("the dump is JSON");
    assert_eq!(
        v["state"]["linear_1.w_0"]["shape"],
        serde_json::json!([1024, 1024]),
        "the dump holds the widened weight"
    );
    let grew = with.saturating_sub(without);
    note(format!(
        "run: {without} bytes; run --dump: {with} bytes; dump {size} bytes"
    ));
    assert!(size > 20_000_000, "the dump is only {size} bytes");
    assert!(
        grew < size / 4,
        "--dump added {grew} bytes to the peak ({without} → {with}) for a dump of {size} bytes"
    );
}

/// README, Limits: an e-graph rule set takes up to 7× the input (`canonicalize.rw` on
/// `irw gen mlp --layers 6000`, 10^5 ops and 17 MiB of text: about 5.7×).
#[cfg(unix)]
fn canonicalize_peaks_under_seven_times_its_input() {
    let dir = tempfile::tempdir().expect("temp dir");
    let prog = generated_mlp(dir.path(), 6000);
    let out = irw()
        .args(["--stats", "--rules", "rules/canonicalize.rw"])
        .arg(&prog)
        .arg("-o")
        .arg(dir.path().join("c.ir"))
        .output()
        .expect("irw runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let ratio = peak_ratio(&err);
    note(format!("canonicalize: {ratio:.2}x the input"));
    assert!(ratio < 7.0, "canonicalize peaked at {ratio:.2}x the input");
}
