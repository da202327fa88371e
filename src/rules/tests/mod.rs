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

/// `--set` gives a string parameter its value as written, blanks included, and reads a number
/// or a bool without the blanks around it.
#[test]
fn set_values_keep_string_blanks() {
    let text = "param sep: string = \"-\";\nparam n: int = 1;\nparam on: bool = false;\n";
    let sets: Vec<(String, String)> = ["sep= / ", "n= 2 ", " on = true"]
        .iter()
        .map(|a| crate::rules::parse_set(a).unwrap())
        .collect();
    let set = load_str("ex.rw", text, std::path::Path::new("."), &sets).unwrap();
    assert_eq!(set.params["sep"].value, Val::Str(" / ".into()));
    assert_eq!(set.params["n"].value, Val::Int(2));
    assert_eq!(set.params["on"].value, Val::Bool(true));
}
