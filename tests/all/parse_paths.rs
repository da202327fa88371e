//! The parser's fast path for op lines (split at the dictionary, each distinct piece parsed
//! once) must give exactly what the reference path gives (every line through the grammar's
//! `op_line`): the same module, or the same diagnostic. Checked on every shipped program text,
//! on the bad-input corpus, on random programs, and on random corruptions of real op lines.

use crate::common::prop_gen;

use irw::SourceFile;
use irw::{parse_module, parse_module_reference};
use proptest::prelude::*;
use std::path::Path;

tests![
    every_program_in_the_repository_parses_the_same_on_both_paths,
    corrupted_op_lines_parse_the_same_on_both_paths,
    random_programs_parse_the_same_on_both_paths,
    random_dictionaries_parse_the_same_on_both_paths,
    a_large_program_parses_the_same_on_both_paths,
    errors_in_a_large_program_are_reported_in_file_order,
    control_characters_in_a_call_parse_the_same_on_both_paths,
    every_one_byte_edit_of_a_dist_op_line_parses_the_same_on_both_paths,
];

/// Both paths on `text`; `Err` describes the first difference.
fn same(text: &str) -> Result<(), String> {
    let src = SourceFile::new("t.ir", text);
    match (parse_module(&src), parse_module_reference(&src)) {
        (Ok(a), Ok(b)) => {
            let (a, b) = (format!("{a:?}"), format!("{b:?}"));
            if a == b {
                Ok(())
            } else {
                Err(format!("modules differ\n--- text ---\n{text}"))
            }
        }
        (Err(a), Err(b)) if a.to_string() == b.to_string() => Ok(()),
        (a, b) => Err(format!(
            "fast: {}\nreference: {}\n--- text ---\n{text}",
            a.map_or_else(|d| d.to_string(), |_| "ok".into()),
            b.map_or_else(|d| d.to_string(), |_| "ok".into()),
        )),
    }
}

fn ir_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            ir_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "ir") {
            out.push(p);
        }
    }
}

fn every_program_in_the_repository_parses_the_same_on_both_paths() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for d in [
        "tests",
        "examples",
        "../shared/fixtures/paddle",
        "../shared/fixtures/paddle-dist",
    ] {
        ir_files(&root.join(d), &mut files);
    }
    assert!(files.len() > 50, "found only {} .ir files", files.len());
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue; // not UTF-8: a bad input for another test
        };
        if let Err(e) = same(&text) {
            panic!("{}: {e}", f.display());
        }
    }
}

/// Op lines of real programs, one per distinct op name and form.
fn real_lines() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut lines = Vec::new();
    for f in [
        "examples/mlp.ir",
        "../shared/fixtures/paddle/allreduce_sync1_after.ir",
        "../shared/fixtures/paddle/master_grad_after.ir",
        "../shared/fixtures/paddle/regions.ir",
    ] {
        if let Ok(t) = std::fs::read_to_string(root.join(f)) {
            lines.extend(
                t.lines()
                    .map(str::trim_start)
                    .filter(|l| l.starts_with('('))
                    .map(String::from),
            );
        }
    }
    lines.push(
        r#"(%9) = "pd_op.if" (%8) {op_role:0,a:"x, {y}",b:Place(a,b)} -> tensor<f32> {"#.into(),
    );
    lines.push(r#"(%3) = "test.op" (%1, <<NULL VALUE>>) {a:[1, 2],b:{c:"}"}} : (tensor<f32>, <<NULL TYPE>>) -> tensor<f32>"#.into());
    lines.sort();
    lines.dedup();
    assert!(lines.len() > 100, "found only {} op lines", lines.len());
    lines
}

/// Characters that matter to the grammar or the pre-scan.
const NOISE: &[char] = &[
    '{', '}', '(', ')', '[', ']', '<', '>', '"', '\\', ',', ':', '%', '0', '7', ' ', '=', 'x', '-',
    '#', '@', '_',
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Corrupts a real op line at up to three places; the definitions the line uses are
    /// supplied, so most corruptions reach the line's own parse.
    fn corrupted_op_lines_parse_the_same_on_both_paths(
        pick in any::<prop::sample::Index>(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0..3u8, prop::sample::select(NOISE)), 0..4),
    ) {
        let lines = real_lines();
        let mut line: Vec<char> = pick.get(&lines).chars().collect();
        for (at, kind, ch) in edits {
            let i = at.index(line.len() + 1);
            match kind {
                0 => line.insert(i, ch),
                1 if i < line.len() => { line.remove(i); }
                _ if i < line.len() => line[i] = ch,
                _ => line.push(ch),
            }
        }
        let line: String = line.into_iter().collect();
        let mut text = String::from("{\n");
        for n in 0..10 {
            text.push_str(&format!("    (%{n}) = \"pd_op.full\" () {{}} : () -> tensor<f32>\n"));
        }
        text.push_str("    ");
        text.push_str(&line);
        text.push_str("\n}\n");
        if let Err(e) = same(&text) {
            return Err(TestCaseError::fail(e));
        }
    }

    fn random_programs_parse_the_same_on_both_paths(p in prop_gen::program()) {
        if let Err(e) = same(&prop_gen::render(&p)) {
            return Err(TestCaseError::fail(e));
        }
    }

    fn random_dictionaries_parse_the_same_on_both_paths(d in prop_gen::dict()) {
        let mut text = String::from("{\n    (%0) = \"test.op\" () ");
        prop_gen::dict_text(&d, &mut text);
        text.push_str(" : () -> tensor<f32>\n}\n");
        if let Err(e) = same(&text) {
            return Err(TestCaseError::fail(e));
        }
    }
}

/// A program large enough to be parsed in many chunks on worker threads.
fn large_program() -> String {
    let opts = irw::generate::MlpOptions {
        layers: std::num::NonZeroUsize::new(1500).unwrap(),
        ..Default::default()
    };
    irw::generate::mlp(&opts)
}

fn a_large_program_parses_the_same_on_both_paths() {
    let text = large_program();
    assert!(
        text.lines().count() > 4 * 4096,
        "too small to need several chunks"
    );
    same(&text).unwrap();
}

/// Chunks are parsed in parallel, but errors are reported in file order: an early error in
/// building (more results than result types) wins over a later syntax error in another chunk,
/// and a syntax
/// error late in the file is found.
fn errors_in_a_large_program_are_reported_in_file_order() {
    let text = large_program();
    let lines: Vec<&str> = text.lines().collect();
    let late = lines.len() - 40;
    let early = 20;
    assert!(
        lines[late].trim_start().starts_with('(') && lines[early].trim_start().starts_with('(')
    );
    let edit = |at: &[(usize, &str)]| -> String {
        let mut out = String::new();
        for (i, l) in lines.iter().enumerate() {
            match at.iter().find(|(j, _)| *j == i) {
                Some((_, r)) => out.push_str(r),
                None => out.push_str(l),
            }
            out.push('\n');
        }
        out
    };
    let syntax = "    (%999999) = \"pd_op.relu\" (%0";
    let unknown = lines[early].replacen("(%", "(%77777777, %", 2);
    for (edits, want_line) in [
        (vec![(late, syntax)], late + 1),
        (vec![(early, unknown.as_str()), (late, syntax)], early + 1),
    ] {
        let t = edit(&edits);
        same(&t).unwrap();
        let d = parse_module(&SourceFile::new("t.ir", t.as_str())).unwrap_err();
        let msg = d.to_string();
        assert!(
            msg.starts_with(&format!("t.ir:{want_line}:")),
            "want an error on line {want_line}, got:\n{msg}"
        );
    }
}

/// fuzz/ir_parse finding: the reference path's dictionary scan refused control characters that
/// the dictionary grammar (and so the fast path) accepts inside a call such as `Place(...)`.
fn control_characters_in_a_call_parse_the_same_on_both_paths() {
    let text = "{\n    (%0) = \"pd_op.full\" () {place:Place(cpu\0\u{1}\u{1f}),shape:[1]} : () -> tensor<1xf32>\n}\n";
    same(text).unwrap();
    assert!(parse_module(&SourceFile::new("t.ir", text)).is_ok());
}

/// Single-byte deletions and duplications all along a real auto-parallel op line (a `pd_dist` type,
/// an `op_dist_attr` with a partial status and an absent-operand slot, and `<#AttrNull>`): both
/// paths agree, and printing what parses is a fixed point.
fn every_one_byte_edit_of_a_dist_op_line_parses_the_same_on_both_paths() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/paddle-dist");
    // (the program up to the line, the line): the lines before define the line's operands.
    let cases: Vec<(String, String)> = [
        ("mlp3_tanh_sgd_dp2_k2_before.ir", "\"pd_op.mean\""),
        ("mlp3_tanh_sgd_dp2_k2_before.ir", "\"pd_op.sgd_\""),
        ("mlp5_gelu_momentum_k4_before.ir", "\"pd_op.momentum_\""),
    ]
    .iter()
    .filter_map(|(f, op)| {
        let text = std::fs::read_to_string(root.join(f)).ok()?;
        let at = text.lines().position(|l| l.contains(op))?;
        let before: String = text.lines().take(at).map(|l| format!("{l}\n")).collect();
        Some((before, text.lines().nth(at)?.to_string()))
    })
    .collect();
    assert_eq!(cases.len(), 3, "the dist fixtures are missing");
    let mut printed = 0;
    for (before, line) in cases {
        let b = line.as_bytes();
        // At every position one edit: a deletion at even positions, a duplication at odd ones.
        for i in 0..b.len() {
            let edit = if i % 2 == 0 {
                [&b[..i], &b[i + 1..]].concat()
            } else {
                [&b[..=i], &b[i..]].concat()
            };
            let Ok(l) = String::from_utf8(edit) else {
                continue;
            };
            let text = format!("{before}{l}\n}}\n");
            if let Err(e) = same(&text) {
                panic!("{e}");
            }
            let src = SourceFile::new("t.ir", text.as_str());
            if let Ok(m) = parse_module(&src) {
                // Printing is canonical (indentation, value numbers): what it prints
                // prints back unchanged, and most edits are reproduced exactly.
                let once = irw::print_module(&m);
                let again = parse_module(&SourceFile::new("p.ir", once.as_str()))
                    .map(|m| irw::print_module(&m));
                assert_eq!(again.as_ref(), Ok(&once), "printing is not a fixed point");
                printed += usize::from(once == text);
            }
        }
    }
    // Many edits still parse and print back byte for byte (a digit changed in a shape or a
    // process id, a placement spelled differently).
    assert!(
        printed > 50,
        "only {printed} edited lines printed back exactly"
    );
}
