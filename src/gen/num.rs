//! Number formatting exactly as Paddle's PIR printer writes numbers.
//!
//! Paddle prints integer attributes and value ids with `std::ostream <<` (plain decimal) and
//! float/double attributes with `std::ostream <<` at the default precision, which is C's `%g`
//! with 6 significant digits: `0.433013`, `0.547723`, `1e-08`, `2`, `-0.5`. The fixtures under
//! `fixtures/paddle/` pin these forms (`value:1e-08` in `before_adam.ir`, `value:-0.433013` in
//! `startup_before.ir`), so the generator reproduces `%g` bit for bit instead of using Rust's
//! shortest-round-trip `Display`, which would print `0.4330127018922193`.
//!
//! Integers are formatted by hand because the generator writes millions of value ids and the
//! `fmt` machinery costs several times more per number than copying digits from a table.

use std::fmt::Write as _;

/// The numbers 0000 to 9999, four digits each, so that a number is written as slices of one
/// string: no per-digit division, no UTF-8 validation at run time.
static QUADS: &str = match std::str::from_utf8(&QUAD_BYTES) {
    Ok(s) => s,
    Err(_) => panic!("ASCII digits are UTF-8"),
};

static QUAD_BYTES: [u8; 40_000] = quad_bytes();

const fn quad_bytes() -> [u8; 40_000] {
    let mut t = [0u8; 40_000];
    let mut i = 0;
    while i < 10_000 {
        // Each quotient is below 10, so the narrowing casts are exact.
        t[4 * i] = b'0' + (i / 1000) as u8;
        t[4 * i + 1] = b'0' + (i / 100 % 10) as u8;
        t[4 * i + 2] = b'0' + (i / 10 % 10) as u8;
        t[4 * i + 3] = b'0' + (i % 10) as u8;
        i += 1;
    }
    t
}

/// Appends `v` in decimal.
pub fn push_uint(out: &mut String, v: u64) {
    if v >= 10_000 {
        push_uint(out, v / 10_000);
        let k = (v % 10_000) as usize * 4;
        out.push_str(&QUADS[k..k + 4]);
    } else {
        let k = v as usize * 4;
        let skip = match v {
            0..=9 => 3,
            10..=99 => 2,
            100..=999 => 1,
            _ => 0,
        };
        // Pushing the 1 to 4 bytes one by one beats a `memcpy` call of a variable length.
        for &b in &QUADS.as_bytes()[k + skip..k + 4] {
            out.push(char::from(b));
        }
    }
}

/// Appends `v` in decimal, with a leading `-` when negative.
pub fn push_int(out: &mut String, v: i64) {
    if v < 0 {
        out.push('-');
    }
    push_uint(out, v.unsigned_abs());
}

/// Appends `v` as C's `printf("%g", v)` does (6 significant digits, trailing zeros removed,
/// exponent form below 1e-4 and from 1e6 on, exponent with a sign and at least two digits).
pub fn push_g(out: &mut String, v: f64) {
    const PRECISION: i32 = 6;
    if v.is_nan() {
        out.push_str(if v.is_sign_negative() { "-nan" } else { "nan" });
        return;
    }
    if v.is_infinite() {
        out.push_str(if v < 0.0 { "-inf" } else { "inf" });
        return;
    }
    if v == 0.0 {
        out.push_str(if v.is_sign_negative() { "-0" } else { "0" });
        return;
    }
    // The exponent `%g` decides on is the one of the value *after* rounding to 6 significant
    // digits (999999.7 prints as 1e+06), which is exactly what `{:e}` with 5 decimals yields.
    let sci = format!("{:.*e}", (PRECISION - 1) as usize, v);
    let Some((mantissa, exp)) = sci.split_once('e') else {
        out.push_str(&sci);
        return;
    };
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..PRECISION).contains(&exp) {
        let decimals = (PRECISION - 1 - exp) as usize;
        let mut fixed = String::with_capacity(24);
        let _ = write!(fixed, "{v:.decimals$}");
        out.push_str(strip_fraction_zeros(&fixed));
    } else {
        out.push_str(strip_fraction_zeros(mantissa));
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let abs = exp.unsigned_abs();
        if abs < 10 {
            out.push('0');
        }
        push_uint(out, u64::from(abs));
    }
}

/// `1.500000` → `1.5`, `2.000` → `2`, `120` → `120` (only a fraction loses its zeros).
fn strip_fraction_zeros(s: &str) -> &str {
    if !s.contains('.') {
        return s;
    }
    let s = s.trim_end_matches('0');
    s.strip_suffix('.').unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(v: f64) -> String {
        let mut s = String::new();
        push_g(&mut s, v);
        s
    }

    #[test]
    fn g_matches_printf_on_fixture_values() {
        // Values that appear in fixtures/paddle/*.ir.
        assert_eq!(g((6.0f64 / 32.0).sqrt()), "0.433013");
        assert_eq!(g((6.0f64 / 20.0).sqrt()), "0.547723");
        assert_eq!(g(-(6.0f64 / 24.0).sqrt()), "-0.5");
        assert_eq!(g(1e-8), "1e-08");
        assert_eq!(g(f64::from(0.1f32)), "0.1");
        assert_eq!(g(0.999), "0.999");
        assert_eq!(g(2.0), "2");
        assert_eq!(g(0.0), "0");
    }

    #[test]
    fn g_matches_printf_at_the_edges() {
        // Reference strings are what glibc's printf("%g") prints for these doubles.
        assert_eq!(g(100000.0), "100000");
        assert_eq!(g(1000000.0), "1e+06");
        assert_eq!(g(999999.7), "1e+06");
        assert_eq!(g(123456.7), "123457");
        assert_eq!(g(0.0001), "0.0001");
        assert_eq!(g(0.00001234), "1.234e-05");
        assert_eq!(g(1.5e300), "1.5e+300");
        assert_eq!(g(-2.5e-7), "-2.5e-07");
        assert_eq!(g(0.5f64.sqrt()), "0.707107");
        assert_eq!(g(f64::INFINITY), "inf");
    }

    #[test]
    fn uint_matches_display() {
        let mut s = String::new();
        let samples = (0..20_001u64).chain([99_999, 100_000, 12_340_000, 10u64.pow(12) + 7]);
        for v in samples {
            s.clear();
            push_uint(&mut s, v);
            assert_eq!(s, v.to_string());
        }
    }

    #[test]
    fn integers() {
        let mut s = String::new();
        push_uint(&mut s, 0);
        s.push(' ');
        push_uint(&mut s, u64::MAX);
        s.push(' ');
        push_int(&mut s, -1);
        s.push(' ');
        push_int(&mut s, i64::MIN);
        assert_eq!(s, "0 18446744073709551615 -1 -9223372036854775808");
    }
}
