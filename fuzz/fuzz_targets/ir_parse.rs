//! The IR parser on arbitrary bytes: it must never panic, hang or exhaust memory; its errors
//! must render; whatever parses and verifies must round-trip (see `irw_fuzz::assert_round_trip`).
//! The same text is also parsed as a separate startup file (`--startup FILE`), and through the
//! parser's reference path, which must give the same module or the same diagnostic.
#![no_main]

use irw::verify_module;
use irw::SourceFile;
use irw::{parse_module, parse_module_reference, parse_startup_into, Module};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let src = SourceFile::new("fuzz.ir", text);
    let fast = parse_module(&src);
    match (&fast, parse_module_reference(&src)) {
        (Ok(a), Ok(b)) => assert!(
            format!("{a:?}") == format!("{b:?}"),
            "fast and reference parses differ"
        ),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
        (a, b) => panic!(
            "fast parse ok: {}, reference parse ok: {}",
            a.is_ok(),
            b.is_ok()
        ),
    }
    match fast {
        Err(d) => {
            let _ = d.to_string();
        }
        Ok(m) => match verify_module(&m) {
            Err(e) => {
                let _ = e.to_diagnostic(&m, Some(&src)).to_string();
            }
            Ok(()) => {
                irw_fuzz::assert_round_trip(&m, "ir_parse");
            }
        },
    }
    let mut m = Module::default();
    match parse_startup_into(&mut m, &src) {
        Err(d) => {
            let _ = d.to_string();
        }
        Ok(()) => {
            if verify_module(&m).is_ok() {
                irw_fuzz::assert_round_trip(&m, "ir_parse (startup file)");
            }
        }
    }
});
