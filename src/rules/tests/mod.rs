//! The rule language on the shipped rule files, on `uses_in_stage` and on a small example.

mod parse;
mod plan;
mod readme_examples;
mod uses_in_stage;

use crate::rules::{load_str, Val};

#[test]
fn load_str_example() {
    let text = "param k: int = 2 where k >= 1;\n\
                // A cast to the dtype its input already has is the identity.\n\
                rule drop_cast {\n\
                    match %c = pd_op.cast(%x) {dtype: $d};\n\
                    where dtype(%x) == $d;\n\
                    replace %c with %x;\n\
                    erase %c;\n\
                }\n";
    let set = load_str(
        "ex.rw",
        text,
        std::path::Path::new("."),
        &[("k".into(), "3".into())],
    )
    .unwrap();
    assert_eq!(set.params["k"].value, Val::Int(3));
    assert_eq!(set.phases[0].name, "ex");
}
