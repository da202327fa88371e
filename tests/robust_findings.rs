//! Open findings of the fuzzers in code this branch does not own, kept as failing regression
//! tests (ignored so that CI stays green; run with `cargo test --test robust_findings --
//! --ignored`). Remove the `ignore` when the owner fixes the bug.

use irw::ir::{parse_module, verify_module};
use irw::SourceFile;

/// fuzz/pipeline: in `allreduce_sync1_after.ir` (already gradient-merged, data parallel), let
/// two `add_` ops accumulate into the same buffer (`linear_1.b_0@GRAD@MERGE`, line 52).
/// hoist_reduce.rw then moves a `c_allreduce_sum` before the op defining its operand: the
/// verifier rejects the result ("uses result 0 of a `pd_op.c_allreduce_sum` before it is
/// defined"). irw reports it as a bug and writes nothing, but a rule must never produce it.
#[test]
#[ignore = "open: hoist_reduce moves a collective before its operand's definition"]
fn hoist_reduce_keeps_dominance_when_two_accumulations_share_a_buffer() {
    let path = "../shared/fixtures/paddle/allreduce_sync1_after.ir";
    let text = std::fs::read_to_string(path).unwrap();
    let text: String = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let l = if i == 51 {
                l.replace(
                    "kwarg_linear_0.b_0@GRAD@MERGE",
                    "kwarg_linear_1.b_0@GRAD@MERGE",
                )
            } else {
                l.to_string()
            };
            l + "\n"
        })
        .collect();
    let mut m = parse_module(&SourceFile::new("in.ir", text)).unwrap();
    verify_module(&m).unwrap();
    let rs = irw::rules::load(&["rules/hoist_reduce.rw".into()], &[]).unwrap();
    match irw::rewrite::apply(&mut m, &rs, &Default::default()) {
        Err(d) => println!("refused: {d}"),
        Ok(_) => verify_module(&m).unwrap_or_else(|e| panic!("{e}")),
    }
}
