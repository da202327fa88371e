//! The e-graph on the 6 667-op `after_256.ir`: CSE plus the canonicalization rules, timed per
//! phase; the bound is only asserted in release builds (`cargo test --release`).

use super::all_rules;
use crate::egraph::{saturate, Options, Outcome};
use crate::ir::{parse_module, print_module, Which};
use crate::SourceFile;
use std::time::Instant;

#[test]
fn after_256_saturates_quickly_and_deterministically() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/fixtures/paddle/after_256.ir");
    let text = std::fs::read_to_string(&path).expect("fixture is readable");
    let run = || {
        let mut m = parse_module(&SourceFile::new("after_256.ir", text.clone())).expect("parses");
        let t = Instant::now();
        let r = saturate(&mut m, Which::Main, &all_rules(), &Options::default()).expect("ok");
        (t.elapsed(), r, print_module(&m))
    };
    let (elapsed, r, out) = run();
    println!(
        "after_256.ir: saturate {:.1} ms\n{r}",
        elapsed.as_secs_f64() * 1e3
    );
    assert_eq!(r.outcome, Outcome::Saturated);
    assert_eq!(r.ops_before, 6667);
    assert!(r.ops_after < r.ops_before, "duplicates merge");
    assert_eq!(r.elab.created, 0, "nothing in this program needs a new op");
    if !cfg!(debug_assertions) {
        assert!(elapsed.as_secs_f64() < 0.5, "took {elapsed:?}");
    }
    let (_, _, again) = run();
    assert!(out == again, "two runs print different bytes");
}
