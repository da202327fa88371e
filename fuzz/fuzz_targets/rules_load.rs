//! The rule-file parser and resolver on arbitrary text, resolved against the shipped `rules/`
//! directory (so imports of the shipped files resolve) with `k_steps=4` set: it must never
//! panic, hang or exhaust memory, and its errors must render.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let sets = [("k_steps".to_string(), "4".to_string())];
    match irw::load_rules_str("fuzz.rw", text, &irw_fuzz::rules_dir(), &sets) {
        Err(d) => {
            let _ = d.to_string();
        }
        Ok(rs) => {
            let _ = rs.num_rules();
        }
    }
});
