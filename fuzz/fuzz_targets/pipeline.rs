//! The whole pipeline on arbitrary programs: parse → verify → rewrite with each shipped rule
//! set (grad_merge with k_steps=4, hoist_reduce, master_grad) → verify → print → parse again.
//!
//! A rule set may refuse a program (a diagnostic, as `refuse_without_roles` does); it may not
//! panic, and whatever it returns must verify and round-trip.
#![no_main]

use irw::parse_module;
use irw::verify_module;
use irw::SourceFile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(m) = parse_module(&SourceFile::new("fuzz.ir", text)) else {
        return;
    };
    if verify_module(&m).is_err() {
        return;
    }
    irw_fuzz::assert_round_trip(&m, "pipeline input");
    let opts = irw::RewriteOptions::default();
    for (name, rules) in irw_fuzz::shipped_rules() {
        let mut m2 = m.clone();
        match irw::rewrite(&mut m2, rules, &opts) {
            Err(d) => {
                let _ = d.to_string();
            }
            Ok(_) => {
                if let Err(e) = verify_module(&m2) {
                    panic!(
                        "{name}: the rewritten program does not verify: {e}\n--- input ---\n{text}"
                    );
                }
                irw_fuzz::assert_round_trip(&m2, name);
            }
        }
    }
});
