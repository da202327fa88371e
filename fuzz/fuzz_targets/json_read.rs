//! Paddle's PIR JSON and feed files on arbitrary bytes: reading must never panic, hang or
//! exhaust memory, and its errors must render. A program read from JSON that verifies must
//! round-trip as text (see `irw_fuzz::assert_round_trip`), and as JSON: what irw writes for it
//! (unless it refuses, with a diagnostic) reads back to a program that verifies, and writing and
//! reading that again gives it back. The same bytes are also read as a feed (`--feed FILE`).
#![no_main]

use irw::paddle_json::{read_module_with_hints, write_module, TagHints};
use irw::SourceFile;
use irw::{verify_module, Module};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(d) = irw::executor::Feed::parse("fuzz.feed.json", text) {
        let _ = d.to_string();
    }
    let mut hints = TagHints::default();
    let m = match read_module_with_hints(&SourceFile::new("fuzz.json", text), &mut hints) {
        Ok(m) => m,
        Err(d) => {
            let _ = d.to_string();
            return;
        }
    };
    if let Err(e) = verify_module(&m) {
        let _ = e.to_string();
        return;
    }
    irw_fuzz::assert_round_trip(&m, "json input");
    // irw writes a keyword argument of main as the persistable `pd_op.data` Paddle's loader binds
    // by name, so the first JSON irw writes may read back in that form: from there on, writing and
    // reading again gives the same program (as printing and parsing text does after one round).
    let Some((first, hints)) = write_and_read(&m, &hints, text) else {
        return;
    };
    let once = irw::print_module(&first);
    let Some((second, _)) = write_and_read(&first, &hints, text) else {
        panic!("irw refused to write the program it read from its own JSON\n--- program ---\n{once}\n--- input ---\n{text}");
    };
    let twice = irw::print_module(&second);
    assert!(
        once == twice,
        "writing irw's JSON is not a fixpoint\n--- read back once ---\n{once}\n--- read back twice ---\n{twice}\n--- input ---\n{text}"
    );
});

/// Writes `m` as Paddle JSON and reads the main program back, verified; `None` when irw refuses
/// to write it (a diagnostic: JSON Paddle would crash on is refused, never written).
fn write_and_read(m: &Module, hints: &TagHints, input: &str) -> Option<(Module, TagHints)> {
    let written = match write_module(m, hints) {
        Ok(j) => j,
        Err(d) => {
            let _ = d.to_string();
            return None;
        }
    };
    let mut hints = TagHints::default();
    let src = SourceFile::new("written.json", written.main.as_str());
    let back = read_module_with_hints(&src, &mut hints).unwrap_or_else(|d| {
        panic!("the JSON irw wrote does not read back:\n{d}\n--- written ---\n{}\n--- input ---\n{input}", written.main)
    });
    if let Err(e) = verify_module(&back) {
        panic!("the JSON irw wrote reads back to a program that does not verify: {e}\n--- written ---\n{}\n--- input ---\n{input}", written.main);
    }
    Some((back, hints))
}
