//! The text of an input file: read into memory, or memory-mapped when it is a large regular
//! file.
//!
//! Why: a program of 10^7 ops is gigabytes of text, and the IR built from it is about as big.
//! Read into a `String`, the text would sit in irw's memory beside the IR until parsing ends.
//! Mapped, its pages belong to the kernel's page cache: the parser reads the text front to back
//! and hands each stretch back once it is past it ([`SourceText::release`]), so at any time only
//! the stretch being parsed is resident in irw. A page handed back is read again from the cache
//! (or the file) if anything looks at it later, such as a diagnostic showing a line: releasing
//! never changes what the text says.
//!
//! As with every tool that maps its input, the file must not be changed while irw reads it.
//! Standard input and small files are read into memory.

use memmap2::{Mmap, UncheckedAdvice};
use std::fmt;
use std::ops::Deref;

/// The UTF-8 byte order mark, dropped from the start of every file irw reads (programs and rule
/// files alike).
pub const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

/// Files at least this large are mapped rather than read.
pub const MAP_AT_LEAST: u64 = 1 << 22;

/// Text in memory or mapped; derefs to `str`. Always valid UTF-8.
pub enum SourceText {
    Owned(String),
    /// A mapped file whose bytes from `start` on are the text (`start` skips a byte order
    /// mark); checked to be UTF-8 when it was made.
    Mapped {
        map: Mmap,
        start: usize,
    },
}

/// Bytes checked for UTF-8 (and then released) at a time when a mapped file is opened.
const CHECK_STEP: usize = 1 << 23;

impl SourceText {
    /// The text of a mapped file from byte `start` on; `None` if it is not UTF-8. The file is
    /// checked a stretch at a time and each stretch released after it.
    pub fn mapped(map: Mmap, start: usize) -> Option<SourceText> {
        let bytes = &map[start..];
        let _ = map.advise(memmap2::Advice::Sequential);
        let mut at = 0;
        while at < bytes.len() {
            let mut end = (at + CHECK_STEP).min(bytes.len());
            // Stop at a character boundary (not inside a multi-byte sequence).
            while end < bytes.len() && end > at && (bytes[end] & 0xC0) == 0x80 {
                end -= 1;
            }
            std::str::from_utf8(&bytes[at..end]).ok()?;
            release_pages(&map, start + at..start + end);
            at = end;
        }
        Some(SourceText::Mapped { map, start })
    }

    pub fn as_str(&self) -> &str {
        self
    }

    /// Hands the pages wholly inside `range` (byte offsets into the text) back to the kernel
    /// when the text is mapped: the parser is done with them. A no-op for text in memory. The
    /// text is unchanged; released pages are read again if used.
    pub fn release(&self, range: std::ops::Range<usize>) {
        if let SourceText::Mapped { map, start } = self {
            release_pages(
                map,
                start + range.start..start + range.end.min(map.len() - start),
            );
        }
    }
}

fn release_pages(map: &Mmap, range: std::ops::Range<usize>) {
    const PAGE: usize = 4096;
    let lo = range.start.div_ceil(PAGE) * PAGE;
    let hi = range.end / PAGE * PAGE;
    if hi > lo {
        // SAFETY: the mapping is read-only and backed by the file. `DontNeed` drops the pages
        // from this process; later reads fault them in again from the page cache or the file
        // with the same contents (the file must not change while mapped, as for any read of
        // the map). No reference sees different bytes.
        unsafe {
            let _ = map.unchecked_advise_range(UncheckedAdvice::DontNeed, lo, hi - lo);
        }
    }
}

impl Deref for SourceText {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            SourceText::Owned(s) => s,
            // SAFETY: checked to be UTF-8 in `SourceText::mapped`; the mapping is read-only.
            SourceText::Mapped { map, start } => unsafe {
                std::str::from_utf8_unchecked(&map[*start..])
            },
        }
    }
}

impl AsRef<str> for SourceText {
    fn as_ref(&self) -> &str {
        self
    }
}

impl Clone for SourceText {
    fn clone(&self) -> Self {
        SourceText::Owned(self.to_string())
    }
}

impl fmt::Debug for SourceText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl fmt::Display for SourceText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self)
    }
}

impl From<String> for SourceText {
    fn from(s: String) -> Self {
        SourceText::Owned(s)
    }
}

impl From<&str> for SourceText {
    fn from(s: &str) -> Self {
        SourceText::Owned(s.to_string())
    }
}

impl From<&String> for SourceText {
    fn from(s: &String) -> Self {
        SourceText::Owned(s.clone())
    }
}

impl PartialEq for SourceText {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl PartialEq<str> for SourceText {
    fn eq(&self, other: &str) -> bool {
        &**self == other
    }
}

impl PartialEq<&str> for SourceText {
    fn eq(&self, other: &&str) -> bool {
        &**self == *other
    }
}

impl PartialEq<String> for SourceText {
    fn eq(&self, other: &String) -> bool {
        **self == **other
    }
}

impl PartialEq<SourceText> for String {
    fn eq(&self, other: &SourceText) -> bool {
        **self == **other
    }
}

impl PartialEq<SourceText> for &str {
    fn eq(&self, other: &SourceText) -> bool {
        *self == &**other
    }
}
