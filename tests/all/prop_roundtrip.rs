//! Property: printing a parsed program gives back the same bytes, for random valid programs
//! (random ops, attributes, types, keyword arguments, `if` and `while` regions, startup
//! programs; see `prop_gen`) and random MLP training programs from `irw::generate::mlp`.
//!
//! Both generators write Paddle's text form without the IR, so a difference is a bug in the
//! parser, the printer, or the generator's knowledge of the format. Every generated program must
//! also verify. Case counts keep the whole file under a few seconds in a release build.

use crate::common::prop_gen;

use irw::verify_module;
use irw::SourceFile;
use irw::{parse_module, print_module};
use proptest::prelude::*;

tests![
    random_programs_print_back_to_the_same_bytes,
    random_attribute_dictionaries_print_back_to_the_same_bytes,
    random_mlps_print_back_to_the_same_bytes,
    the_generator_covers_every_construct,
];

fn round_trip(text: &str) -> Result<(), TestCaseError> {
    let m = parse_module(&SourceFile::new("gen.ir", text))
        .map_err(|d| TestCaseError::fail(format!("does not parse:\n{d}\n--- text ---\n{text}")))?;
    if let Err(e) = verify_module(&m) {
        return Err(TestCaseError::fail(format!(
            "does not verify: {e}\n--- text ---\n{text}"
        )));
    }
    let printed = print_module(&m);
    if printed != text {
        let line = printed
            .lines()
            .zip(text.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(printed.lines().count().min(text.lines().count()));
        return Err(TestCaseError::fail(format!(
            "print(parse(text)) != text at line {}:\n  text:    {:?}\n  printed: {:?}",
            line + 1,
            text.lines().nth(line),
            printed.lines().nth(line)
        )));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    fn random_programs_print_back_to_the_same_bytes(p in prop_gen::program()) {
        round_trip(&prop_gen::render(&p))?;
    }

    fn random_attribute_dictionaries_print_back_to_the_same_bytes(d in prop_gen::dict()) {
        let mut text = String::from("{\n    (%0) = \"test.op\" () ");
        prop_gen::dict_text(&d, &mut text);
        text.push_str(" : () -> tensor<f32>\n}\n");
        round_trip(&text)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    fn random_mlps_print_back_to_the_same_bytes(opts in prop_gen::mlp_options(4)) {
        round_trip(&irw::generate::mlp(&opts))?;
    }
}

/// The generator itself: it must produce region ops, nulls, keyword arguments and startup
/// programs often enough that the properties above test them.
fn the_generator_covers_every_construct() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strat = prop_gen::program();
    let mut seen = [0usize; 6];
    for _ in 0..200 {
        let text = prop_gen::render(&strat.new_tree(&mut runner).unwrap().current());
        for (i, needle) in [
            "\"pd_op.if\"",
            "} else {",
            "(cond=",
            "^%arg_",
            "^kw:",
            "startup {",
        ]
        .iter()
        .enumerate()
        {
            seen[i] += text.contains(needle) as usize;
        }
    }
    assert!(seen.iter().all(|&n| n >= 5), "constructs seen: {seen:?}");
}
