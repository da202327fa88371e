//! What the fuzz targets share: the round-trip check every parsed program must pass, and the
//! shipped rule sets, loaded once per process.
//!
//! The invariant checked here is the one the CLI relies on: a program that parses and verifies
//! prints to text that parses and verifies again, and printing that gives the same bytes (the
//! printer is a fixpoint after one round). A failure is a bug in the parser, the printer or the
//! verifier, so it panics and libFuzzer keeps the input.

use irw::verify_module;
use irw::RuleSet;
use irw::SourceFile;
use irw::{parse_module, print_module, Module};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The repository's `rules/` directory.
pub fn rules_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../rules")
}

/// Prints a verified module, parses the text again, verifies it, prints it again: the two texts
/// must be equal. Returns the printed text.
pub fn assert_round_trip(m: &Module, what: &str) -> String {
    let text = print_module(m);
    let again = match parse_module(&SourceFile::new("printed.ir", text.as_str())) {
        Ok(a) => a,
        Err(d) => {
            panic!("{what}: the printed program does not parse:\n{d}\n--- printed ---\n{text}")
        }
    };
    if let Err(e) = verify_module(&again) {
        panic!("{what}: the printed program does not verify: {e}\n--- printed ---\n{text}");
    }
    let text2 = print_module(&again);
    assert!(
        text == text2,
        "{what}: printing is not a fixpoint\n--- first ---\n{text}\n--- second ---\n{text2}"
    );
    text
}

/// The shipped rule sets the pipeline target applies: grad_merge (k_steps=4, which imports
/// master_grad and hoist_reduce), hoist_reduce alone, master_grad alone.
pub fn shipped_rules() -> &'static [(&'static str, RuleSet)] {
    static RULES: OnceLock<Vec<(&'static str, RuleSet)>> = OnceLock::new();
    RULES.get_or_init(|| {
        let dir = rules_dir();
        let load = |file: &str, sets: &[(&str, &str)]| {
            let sets: Vec<(String, String)> = sets
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect();
            irw::load_rules(&[dir.join(file)], &sets)
                .unwrap_or_else(|d| panic!("shipped rule file {file} does not load:\n{d}"))
        };
        vec![
            (
                "grad_merge.rw k_steps=4",
                load("grad_merge.rw", &[("k_steps", "4")]),
            ),
            ("hoist_reduce.rw", load("hoist_reduce.rw", &[])),
            ("master_grad.rw", load("master_grad.rw", &[])),
        ]
    })
}
