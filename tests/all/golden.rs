//! Golden tests: each `.ir`, `.rw` or `.test` file under `tests/golden/` is one case, run through
//! the real binary. This is the one format for tests of the binary: programs that rewrite, runs
//! that check, and inputs that must fail with a given message at a given place (the bad-input
//! corpus: `tests/golden/bad/*.test` over the inputs in `tests/bad/`). `tests/golden/README.md`
//! says the same with examples.
//!
//! Header lines in the case file (`//` comments; irw reads them as comments in `.ir` and `.rw`):
//! - `// RUN: irw ARGS` — the command, run in the repository root (so paths are relative to it):
//!   `%s` is the case file, `%S` its directory, `%t` a fresh temporary directory for the case,
//!   `%fixtures` the shared Paddle fixtures (`../shared/fixtures`: `%fixtures/paddle/before.ir`).
//!   A case may have several RUN lines: they run in order, every one but the last must exit
//!   with 0 (write what the next one reads with `-o %t/NAME`), and everything below applies to
//!   the last one.
//! - `//--- NAME` — in a `.test` case, after the header: an embedded file, up to the next such
//!   line or the end of the case, written byte for byte to `%t`. A case with embedded files
//!   runs in `%t` (messages name the files as written: `r.rw:3:11`), and its `%fixtures`, `%s`
//!   and `%S` are absolute paths. The bad rule files, flags, executor inputs, feed files and
//!   Paddle JSON are such cases (`tests/golden/bad/{rules,exec,feed,json,cli}/`).
//! - `// EXIT: N` — the expected exit code (default 0). A run that exits with another code than
//!   0 must print nothing on standard output unless the case says what it prints (`CHECK`
//!   lines or a `NAME.expected`): a failing irw prints no partial program.
//! - `// CHECK: text`, `// CHECK-NEXT: text`, `// CHECK-SAME: text`, `// CHECK-NOT: text`,
//!   `// CHECK-UNORDERED: text` — FileCheck-style directives (the `filecheck` crate) matched
//!   against standard output; `// CHECK-ERR: text` (and `CHECK-ERR-NEXT` and so on) the same
//!   against standard error. `// REGEX: NAME=regex` defines `$NAME` for the patterns of both
//!   (`$(x=$NAME)` binds `$x`); `$$` is a literal `$`.
//! - `// ERROR-AT: POS` — standard error starts with a diagnostic at `POS` (`FILE:LINE:COL`, the
//!   whole position, or a prefix such as `FILE:LINE:`; `%fixtures` is substituted): its first
//!   line starts with `POS`, and when it shows a source
//!   line (the second line is neither empty nor a `  = ` note), the third line is the caret line
//!   (it ends with `^`). `// ERROR-AT: -` — the first line is an error without a position
//!   (`error: ...`). CHECK-ERR says what the message is; ERROR-AT pins where it is, which
//!   CHECK-ERR cannot (it matches anywhere after what it matched before).
//! - `// EXPECT: text` — standard error contains `text`: a CHECK-ERR line that stands alone
//!   (EXPECT lines match independently of each other and of the CHECK-ERR lines, literally:
//!   no variables). Older cases use it; new cases use CHECK-ERR.
//! - A `.rw` case without a RUN line is a bad rule file: it runs as
//!   `irw --rules %s %fixtures/paddle/before.ir` and must exit with code 1 (unless `EXIT` says
//!   otherwise).
//! - An optional `NAME.expected` beside the case holds the whole expected standard output;
//!   `IRW_BLESS=1 cargo test --release -- golden::` rewrites the existing ones from the current
//!   output (an empty `NAME.expected` starts one; cases checked by `CHECK` lines get none).
//!
//! Every case also fails if irw panics.

use crate::common::*;
use libtest_mimic::{Failed, Trial};
use std::path::{Path, PathBuf};

/// What `%fixtures` stands for: the shared Paddle fixtures, relative to the repository root.
const FIXTURES: &str = "../shared/fixtures";

struct Case {
    /// One argument list per RUN line; the last one is checked.
    runs: Vec<Vec<String>>,
    /// The files a `.test` case embeds (`//--- NAME` sections), byte for byte. A case with
    /// files runs in its temporary directory, where they are written.
    files: Vec<Embedded>,
    exit: Option<i32>,
    expect: Vec<String>,
    /// `ERROR-AT`: where standard error's first diagnostic is (`-`: without a position).
    error_at: Option<String>,
    out_checks: Vec<String>,
    err_checks: Vec<String>,
}

fn directive(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "CHECK" => "check:",
        "CHECK-NEXT" => "nextln:",
        "CHECK-SAME" => "sameln:",
        "CHECK-NOT" => "not:",
        "CHECK-UNORDERED" => "unordered:",
        _ => return None,
    })
}

/// A file a case embeds: its name and bytes.
type Embedded = (String, Vec<u8>);

/// The line that starts an embedded file: `//--- NAME` (LLVM's `split-file` convention).
const FILE_MARK: &[u8] = b"//--- ";

/// Splits a case into its header and its embedded files. A file runs from the line after its
/// `//--- NAME` to the line before the next one, or to the end of the case (where it may lack
/// a final newline); bytes are kept as they are, so a file may be invalid UTF-8 on purpose.
fn split_files(bytes: &[u8]) -> Result<(&[u8], Vec<Embedded>), Failed> {
    let mut starts = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let end = bytes[at..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| at + i + 1);
        if bytes[at..].starts_with(FILE_MARK) {
            starts.push((at, end));
        }
        at = end;
    }
    let header = &bytes[..starts.first().map_or(bytes.len(), |s| s.0)];
    let mut files = Vec::new();
    for (i, &(mark, body)) in starts.iter().enumerate() {
        let name = String::from_utf8_lossy(&bytes[mark + FILE_MARK.len()..body])
            .trim()
            .to_string();
        if name.is_empty() || name.contains('/') || files.iter().any(|(n, _)| *n == name) {
            return Err(format!("bad embedded file name `{name}`").into());
        }
        let end = starts.get(i + 1).map_or(bytes.len(), |s| s.0);
        files.push((name, bytes[body..end].to_vec()));
    }
    Ok((header, files))
}

fn parse_case(path: &Path) -> Result<Case, Failed> {
    let bytes = std::fs::read(path)?;
    let (header, files) = split_files(&bytes)?;
    let text = std::str::from_utf8(header).map_err(|_| "the header is not UTF-8")?;
    // A case with embedded files runs in its temporary directory: its paths are absolute.
    let (rel, fixtures) = if files.is_empty() {
        (path.strip_prefix(root()).unwrap_or(path), FIXTURES.into())
    } else {
        (path, root().join(FIXTURES).to_string_lossy().into_owned())
    };
    let dir = rel.parent().unwrap_or(Path::new("."));
    let mut case = Case {
        files,
        runs: vec![],
        exit: None,
        expect: vec![],
        error_at: None,
        out_checks: vec![],
        err_checks: vec![],
    };
    for line in text.lines() {
        let Some(rest) = line.trim_start().strip_prefix("//") else {
            continue;
        };
        let rest = rest.trim_start();
        let Some((key, val)) = rest.split_once(':') else {
            continue;
        };
        let val = val.strip_prefix(' ').unwrap_or(val);
        match key {
            "RUN" => {
                let mut words = val.split_whitespace();
                if words.next() != Some("irw") {
                    return Err("RUN must start with `irw`".into());
                }
                case.runs.push(
                    words
                        .map(|w| {
                            w.replace("%fixtures", &fixtures)
                                .replace("%s", &rel.to_string_lossy())
                                .replace("%S", &dir.to_string_lossy())
                        })
                        .collect(),
                );
            }
            "EXIT" => case.exit = Some(val.trim().parse().map_err(|_| "bad EXIT")?),
            "EXPECT" => case.expect.push(val.trim().to_string()),
            "ERROR-AT" => {
                if case.error_at.is_some() {
                    return Err("more than one ERROR-AT line".into());
                }
                case.error_at = Some(val.trim().replace("%fixtures", &fixtures));
            }
            "REGEX" => {
                let d = format!("regex: {}", val.trim());
                case.out_checks.push(d.clone());
                case.err_checks.push(d);
            }
            k => {
                if let Some(d) = directive(k) {
                    case.out_checks.push(format!("{d} {val}"));
                } else if let Some(d) = k
                    .strip_prefix("CHECK-ERR")
                    .and_then(|s| directive(&format!("CHECK{s}")))
                {
                    case.err_checks.push(format!("{d} {val}"));
                }
            }
        }
    }
    if case.runs.is_empty() && path.extension().is_some_and(|e| e == "rw") {
        case.runs = vec![vec![
            "--rules".into(),
            rel.to_string_lossy().into_owned(),
            format!("{fixtures}/paddle/before.ir"),
        ]];
        case.exit.get_or_insert(1);
    }
    if case.runs.is_empty() {
        return Err("no `// RUN: irw ...` line".into());
    }
    Ok(case)
}

fn filecheck(directives: &[String], text: &str, what: &str) -> Result<(), Failed> {
    if directives.is_empty() {
        return Ok(());
    }
    let mut b = filecheck::CheckerBuilder::new();
    for d in directives {
        b.directive(d)
            .map_err(|e| format!("bad directive `{d}`: {e}"))?;
    }
    let checker = b.finish();
    let (ok, explain) = checker
        .explain(text, filecheck::NO_VARIABLES)
        .map_err(|e| e.to_string())?;
    if !ok {
        return Err(format!("{what} does not match:\n{explain}\n--- {what} ---\n{text}").into());
    }
    Ok(())
}

/// `ERROR-AT: at` against standard error (see the module doc).
fn error_at(at: &str, stderr: &str) -> Result<(), Failed> {
    let mut lines = stderr.lines();
    let first = lines.next().unwrap_or("");
    if at == "-" {
        if !first.starts_with("error:") {
            return Err(format!("want an error without a position, got:\n{stderr}").into());
        }
        return Ok(());
    }
    // A whole position (`FILE:LINE:COL`) must end where the line's position does: `r.rw:1:8`
    // is not `r.rw:1:80`.
    let whole = at.ends_with(|c: char| c.is_ascii_digit());
    if !first.starts_with(at) || (whole && !first[at.len()..].starts_with(':')) {
        return Err(format!("want the error at {at}, got:\n{stderr}").into());
    }
    let second = lines.next().unwrap_or("");
    let shows_line = !second.trim().is_empty() && !second.starts_with("  = ");
    if shows_line && !lines.next().is_some_and(|l| l.trim_end().ends_with('^')) {
        return Err(format!("no caret under the source line:\n{stderr}").into());
    }
    Ok(())
}

fn run_case(path: PathBuf) -> Result<(), Failed> {
    let case = parse_case(&path)?;
    let tmp = tempfile::tempdir()?;
    let tmp_path = tmp.path().to_string_lossy().into_owned();
    for (name, bytes) in &case.files {
        std::fs::write(tmp.path().join(name), bytes)?;
    }
    let n = case.runs.len();
    let mut out = None;
    for (i, args) in case.runs.iter().enumerate() {
        let args: Vec<String> = args.iter().map(|a| a.replace("%t", &tmp_path)).collect();
        let mut cmd = irw();
        if !case.files.is_empty() {
            cmd.current_dir(tmp.path());
        }
        let o = cmd.args(&args).output()?;
        if i + 1 < n && !o.status.success() {
            return Err(format!(
                "RUN line {} (`irw {}`) failed with {:?}:\n{}",
                i + 1,
                args.join(" "),
                o.status.code(),
                String::from_utf8_lossy(&o.stderr)
            )
            .into());
        }
        out = Some(o);
    }
    let out = out.ok_or("no RUN line")?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("panicked") {
        return Err(format!("irw panicked:\n{stderr}").into());
    }
    let exit = case.exit.unwrap_or(0);
    if out.status.code() != Some(exit) {
        return Err(format!(
            "exit code {:?}, want {exit}; stderr:\n{stderr}",
            out.status.code()
        )
        .into());
    }
    for e in &case.expect {
        if !stderr.contains(e.as_str()) {
            return Err(format!("stderr lacks `{e}`:\n{stderr}").into());
        }
    }
    let expected = path.with_extension("expected");
    if exit != 0 && !out.stdout.is_empty() && case.out_checks.is_empty() && !expected.exists() {
        return Err(format!("a failing run printed on standard output:\n{stdout}").into());
    }
    if let Some(at) = &case.error_at {
        error_at(at, &stderr)?;
    }
    filecheck(&case.out_checks, &stdout, "stdout")?;
    filecheck(&case.err_checks, &stderr, "stderr")?;
    if std::env::var_os("IRW_BLESS").is_some() && expected.exists() {
        std::fs::write(&expected, out.stdout.as_slice())?;
    } else if expected.exists() {
        let want = std::fs::read_to_string(&expected)?;
        if want != stdout {
            let line = stdout
                .lines()
                .zip(want.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            return Err(format!(
                "stdout differs from {} at line {} (IRW_BLESS=1 to update):\n  want: {}\n  got:  {}",
                expected.display(),
                line + 1,
                want.lines().nth(line).unwrap_or("<end>"),
                stdout.lines().nth(line).unwrap_or("<end>")
            )
            .into());
        }
    }
    Ok(())
}

pub(crate) fn tests() -> Vec<Trial> {
    let dir = root().join("tests/golden");
    let mut files = files_with_ext(&dir, "ir");
    files.extend(files_with_ext(&dir, "rw"));
    files.extend(files_with_ext(&dir, "test"));
    files.sort();
    files
        .into_iter()
        .map(|f| {
            let rel = f.strip_prefix(&dir).unwrap_or(&f).with_extension("");
            let name = format!("golden::{}", rel.to_string_lossy().replace('/', "::"));
            Trial::test(name, move || run_case(f))
        })
        .collect()
}
