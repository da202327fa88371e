//! Bracket nesting, checked before pest recurses into a line: deep nesting is refused with a
//! position, a truncated op points at its unclosed bracket, and the scan finds the attribute
//! dictionary of an op line for the fast path.

use super::*;

/// Rejects lines whose brackets nest deeper than [`MAX_NESTING`] before pest recurses into them,
/// and lines that end before a `(`, `[` or `{` is closed (a truncated op), with a message that
/// points at the unclosed bracket.
///
/// Returns the byte range of the first top-level `{...}` closed on the line: on an op line that
/// is the attribute dictionary, if the line parses.
pub(super) fn check_nesting(
    src: &SourceFile,
    l: &Line<'_>,
) -> Result<Option<(usize, usize)>, Diagnostic> {
    let mut depth = 0usize;
    // Open `(`, `[`, `{` not yet closed: (byte, position). Angle brackets are not tracked for
    // balance (`->` holds a lone `>`), only for depth.
    let mut open = OpenStack::default();
    let mut dict: Option<(usize, usize)> = None;
    let mut dict_start = None;
    let text = l.text.trim_end();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        // Skip what the scan ignores; most of a line.
        i = next_scan_stop(bytes, i);
        let Some(&b) = bytes.get(i) else { break };
        match b {
            b'"' => {
                // A string: skip to its closing quote, past escapes.
                i += 1;
                loop {
                    match memchr::memchr2(b'"', b'\\', &bytes[i..]) {
                        Some(n) if bytes[i + n] == b'\\' => {
                            i = (i + n + 2).min(bytes.len());
                        }
                        Some(n) => {
                            i += n;
                            break;
                        }
                        None => {
                            i = bytes.len();
                            break;
                        }
                    }
                }
                if i >= bytes.len() {
                    let q = text.rfind('"').unwrap_or(0);
                    return Err(Diagnostic::at(
                        src,
                        l.offset + q,
                        "this string is not terminated on its line",
                    ));
                }
            }
            b'{' | b'[' | b'(' | b'<' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(Diagnostic::at(
                        src,
                        l.offset + i,
                        format!("brackets nested deeper than {MAX_NESTING} levels"),
                    )
                    .with_hint("irw bounds nesting so that no input can exhaust its stack"));
                }
                if b == b'{' && open.is_empty() && dict.is_none() {
                    dict_start = Some(i);
                }
                if b != b'<' {
                    open.push((b, i));
                }
            }
            _ => {
                // `}`, `]`, `)`, `>`
                depth = depth.saturating_sub(1);
                if b != b'>' {
                    open.pop();
                    if open.is_empty() {
                        if let Some(s) = dict_start.take() {
                            dict = Some((s, i + 1));
                        }
                    }
                }
            }
        }
        i += 1;
    }
    let region_open = open.len() == 1 && open.last().0 == b'{' && text.ends_with('{');
    if !open.is_empty() && !region_open {
        let (b, at) = open.last();
        let close = match b {
            b'(' => ')',
            b'[' => ']',
            _ => '}',
        };
        return Err(Diagnostic::at(
            src,
            l.offset + text.len(),
            format!(
                "the line ends before `{close}` closes the `{}` at column {}",
                b as char,
                at + 1 + (l.offset - src.text[..l.offset].rfind('\n').map_or(0, |n| n + 1))
            ),
        )
        .with_hint("is the op line truncated?"));
    }
    Ok(dict)
}

/// The bytes [`check_nesting`] stops at: quotes and brackets. (`next_scan_stop` finds the same
/// set with SIMD; a unit test checks the two agree on every byte.)
pub(super) static SCAN_STOP: [bool; 256] = {
    let mut t = [false; 256];
    let stops = b"\"{}[]()<>";
    let mut i = 0;
    while i < stops.len() {
        t[stops[i] as usize] = true;
        i += 1;
    }
    t
};

/// The index of the first byte at or after `i` that [`check_nesting`] stops at (`bytes.len()`
/// if none). Sixteen bytes at a time with SSE2, which every x86-64 processor has.
pub(super) fn next_scan_stop(bytes: &[u8], mut i: usize) -> usize {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    // SAFETY: SSE2 is enabled for this target (the cfg), and every load reads 16 bytes at `i`
    // with `i + 16 <= bytes.len()`, inside `bytes`; the loads need no alignment.
    unsafe {
        use std::arch::x86_64::*;
        // `(`/`)` are 0x28/0x29, `<`/`>` 0x3c/0x3e, and `[`/`]` 0x5b/0x5d differ from
        // `{`/`}` only in bit 0x20: five comparisons cover the nine stop bytes.
        let (paren, angle, open, close, quote) = (
            _mm_set1_epi8(0x29),
            _mm_set1_epi8(0x3e),
            _mm_set1_epi8(0x5b),
            _mm_set1_epi8(0x5d),
            _mm_set1_epi8(0x22),
        );
        let (one, two, not_20) = (_mm_set1_epi8(1), _mm_set1_epi8(2), _mm_set1_epi8(!0x20));
        while i + 16 <= bytes.len() {
            let v = _mm_loadu_si128(bytes.as_ptr().add(i).cast());
            let folded = _mm_and_si128(v, not_20);
            let hits = _mm_or_si128(
                _mm_or_si128(
                    _mm_cmpeq_epi8(_mm_or_si128(v, one), paren),
                    _mm_cmpeq_epi8(_mm_or_si128(v, two), angle),
                ),
                _mm_or_si128(
                    _mm_or_si128(_mm_cmpeq_epi8(folded, open), _mm_cmpeq_epi8(folded, close)),
                    _mm_cmpeq_epi8(v, quote),
                ),
            );
            let mask = _mm_movemask_epi8(hits);
            if mask != 0 {
                return i + mask.trailing_zeros() as usize;
            }
            i += 16;
        }
    }
    while i < bytes.len() && !SCAN_STOP[bytes[i] as usize] {
        i += 1;
    }
    i
}

/// The open brackets of one line, at most [`MAX_NESTING`] (deeper lines are rejected first):
/// a fixed array, so scanning a line allocates nothing.
pub(super) struct OpenStack {
    pub(super) items: [(u8, usize); MAX_NESTING],
    pub(super) len: usize,
}

impl Default for OpenStack {
    fn default() -> Self {
        OpenStack {
            items: [(0, 0); MAX_NESTING],
            len: 0,
        }
    }
}

impl OpenStack {
    pub(super) fn push(&mut self, item: (u8, usize)) {
        if self.len < MAX_NESTING {
            self.items[self.len] = item;
            self.len += 1;
        }
    }

    pub(super) fn pop(&mut self) {
        self.len = self.len.saturating_sub(1);
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The innermost open bracket; `(0, 0)` when none is open.
    pub(super) fn last(&self) -> (u8, usize) {
        self.len.checked_sub(1).map_or((0, 0), |i| self.items[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(super) fn the_simd_scan_stops_at_exactly_the_table_bytes() {
        for b in 0..=255u8 {
            for at in [0, 5, 15, 16, 17, 31, 38] {
                let mut buf = vec![b'a'; 40];
                buf[at] = b;
                let want = if SCAN_STOP[b as usize] { at } else { 40 };
                assert_eq!(next_scan_stop(&buf, 0), want, "byte {b:#x} at {at}");
                assert_eq!(next_scan_stop(&buf, at), want, "byte {b:#x} at {at}");
                assert_eq!(next_scan_stop(&buf, at + 1), 40, "byte {b:#x} at {at}");
            }
        }
    }
}
