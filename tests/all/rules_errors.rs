//! Bad rule files: each `tests/golden/rules/errors/*.rw` starts with `// EXPECT: <text>` lines;
//! loading the file must fail with a diagnostic that contains every expected text. The first
//! expectation of most files pins `file:line:col: error: message`.
use std::path::Path;

tests![bad_rule_files_report_their_errors];

fn bad_rule_files_report_their_errors() {
    let dir = Path::new("tests/golden/rules/errors");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "rw"))
        .collect();
    files.sort();
    assert!(files.len() >= 15, "at least 15 bad rule files");
    let mut failures = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let expects: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("// EXPECT: "))
            .collect();
        assert!(!expects.is_empty(), "{}: no // EXPECT: line", f.display());
        let sets = vec![];
        match irw::load_rules(std::slice::from_ref(f), &sets) {
            Ok(_) => failures.push(format!("{}: loaded without error", f.display())),
            Err(d) => {
                let shown = d.to_string();
                // Diagnostics name the file as given; compare from the file name on.
                let shown = shown.replace(&format!("{}/", dir.display()), "");
                for e in &expects {
                    if !shown.contains(e) {
                        failures.push(format!("{}: expected `{e}` in:\n{shown}", f.display()));
                    }
                }
                assert!(
                    shown.contains('^') || !shown.contains(".rw:"),
                    "{}: located error without a caret:\n{shown}",
                    f.display()
                );
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
