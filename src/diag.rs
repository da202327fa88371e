//! Diagnostics: every error irw reports about a user's file (IR, rule file, feed JSON) is a
//! [`Diagnostic`] that knows the file, the byte offset it points at, and how to render itself as
//!
//! ```text
//! prog.ir:3:17: error: unknown value %9
//!     (%2) = "pd_op.relu" (%9) {} : (tensor<4xf32>) -> tensor<4xf32>
//!                          ^
//!   = hint: values must be defined before they are used
//! ```
//!
//! The format is the one compilers (`rustc --error-format=short`, clang, gcc) use, so editors and
//! CI log scrapers pick it up. Rendering is done here rather than with a snippet crate because the
//! required layout is a single `file:line:col: error:` header, which those crates do not produce.

pub use crate::source_text::SourceText;
use std::fmt;

/// A source file held in memory, used to turn byte offsets into line/column and to show the
/// offending line.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The name shown in messages (a path, or `<stdin>`).
    pub name: String,
    /// The text. Invalid UTF-8 is rejected before a `SourceFile` is made.
    pub text: SourceText,
    /// The byte offset of each line's start, found when a first position is asked for: a
    /// program with a warning on each of its 10^5 ops asks 10^5 times, and counting the
    /// newlines before each offset would read the file once per warning.
    line_starts: std::sync::OnceLock<Vec<usize>>,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<SourceText>) -> Self {
        SourceFile {
            name: name.into(),
            text: text.into(),
            line_starts: std::sync::OnceLock::new(),
        }
    }

    /// 1-based line and column (in characters) of a byte offset; offsets past the end point
    /// just after the last character.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = floor_char_boundary(&self.text, offset.min(self.text.len()));
        let starts = self.line_starts.get_or_init(|| {
            std::iter::once(0)
                .chain(memchr::memchr_iter(b'\n', self.text.as_bytes()).map(|i| i + 1))
                .collect()
        });
        // The last line starting at or before the offset.
        let line = starts.partition_point(|&s| s <= offset);
        let line_start = starts[line - 1];
        let col = self.text[line_start..offset].chars().count() + 1;
        (line, col)
    }

    /// The text of the line holding `offset`, without its newline.
    pub fn line_text(&self, offset: usize) -> &str {
        let offset = floor_char_boundary(&self.text, offset.min(self.text.len()));
        let start = self.text[..offset].rfind('\n').map_or(0, |i| i + 1);
        let end = self.text[offset..]
            .find('\n')
            .map_or(self.text.len(), |i| offset + i);
        self.text[start..end].trim_end_matches('\r')
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Where a diagnostic points: a file name and a position in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub file: String,
    pub line: usize,
    pub col: usize,
    /// The source line, shown under the header with a caret at `col`.
    pub source_line: String,
}

/// A user-facing error about some input. Carries everything needed to render it; no further
/// access to the source is needed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub message: String,
    /// Boxed to keep `Result<_, Diagnostic>` small.
    pub location: Option<Box<Location>>,
    pub hints: Vec<String>,
    pub notes: Vec<String>,
    /// The error is about how irw was invoked (a flag, a `--set` value), not about an input
    /// file: the command line exits with code 2 instead of 1.
    pub usage: bool,
    /// The error is about the program op at this byte of the input (a rule's `error` action):
    /// the command line, which holds the input, reports it there ([`Diagnostic::at_input`]).
    pub input_offset: Option<usize>,
    /// The errors found after this one by the same check, in the order found (the other
    /// faulty rules of the rule files): the author fixes them all in one round. Each prints
    /// after this one, as it would alone.
    pub more: Box<[Diagnostic]>,
}

impl Diagnostic {
    /// An error without a position (a missing file, a bad flag value).
    pub fn error(message: impl Into<String>) -> Self {
        Diagnostic {
            message: message.into(),
            location: None,
            hints: vec![],
            notes: vec![],
            usage: false,
            input_offset: None,
            more: Box::default(),
        }
    }

    /// An error at byte `offset` of `src` when both are known (an op parsed from a file), else
    /// without a position (an op a rewrite built, a program given in memory).
    pub fn at_if_known(
        src: Option<&SourceFile>,
        offset: Option<usize>,
        message: impl Into<String>,
    ) -> Self {
        match (src, offset) {
            (Some(src), Some(offset)) => Diagnostic::at(src, offset, message),
            _ => Diagnostic::error(message),
        }
    }

    /// An error at byte `offset` of `src`.
    pub fn at(src: &SourceFile, offset: usize, message: impl Into<String>) -> Self {
        let (line, col) = src.line_col(offset);
        Diagnostic {
            message: message.into(),
            location: Some(Box::new(Location {
                file: src.name.clone(),
                line,
                col,
                source_line: src.line_text(offset).to_string(),
            })),
            hints: vec![],
            notes: vec![],
            usage: false,
            input_offset: None,
            more: Box::default(),
        }
    }

    /// An error for a whole file (no line), e.g. "file is empty".
    pub fn in_file(file: &str, message: impl Into<String>) -> Self {
        Diagnostic {
            message: message.into(),
            location: Some(Box::new(Location {
                file: file.to_string(),
                line: 1,
                col: 1,
                source_line: String::new(),
            })),
            hints: vec![],
            notes: vec![],
            usage: false,
            input_offset: None,
            more: Box::default(),
        }
    }

    /// Every error of `all`, in order, as one: the first, followed by the others. `None` when
    /// there is none.
    pub fn list(all: Vec<Diagnostic>) -> Option<Diagnostic> {
        let mut all = all.into_iter().flat_map(|mut d| {
            let more = std::mem::take(&mut d.more);
            std::iter::once(d).chain(more.into_vec())
        });
        let mut first = all.next()?;
        first.more = all.collect();
        Some(first)
    }

    /// Marks the error as bad usage (exit code 2).
    pub fn as_usage(mut self) -> Self {
        self.usage = true;
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// An error about a program op (`input_offset`) moved to that op in `input`: the op's
    /// `file:line:col`, line and caret; where it was located before (the rule that raised it)
    /// becomes a note. Unchanged without an offset.
    pub fn at_input(self, input: &SourceFile) -> Self {
        let Some(off) = self.input_offset else {
            return self;
        };
        if off > input.text.len() {
            return self;
        }
        let mut d = Diagnostic::at(input, off, self.message);
        if let Some(loc) = self.location {
            d.notes
                .push(format!("raised at {}:{}:{}", loc.file, loc.line, loc.col));
        }
        d.notes.extend(self.notes);
        d.hints = self.hints;
        d.usage = self.usage;
        d.more = self.more;
        d
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.location {
            Some(loc) => {
                writeln!(
                    f,
                    "{}:{}:{}: error: {}",
                    loc.file, loc.line, loc.col, self.message
                )?;
                if !loc.source_line.is_empty() {
                    // Long generated lines are cut around the caret so the message stays readable.
                    let (shown, caret_col) = clip_line(&loc.source_line, loc.col);
                    writeln!(f, "{shown}")?;
                    writeln!(f, "{}^", caret_indent(&shown, caret_col))?;
                }
            }
            None => writeln!(f, "error: {}", self.message)?,
        }
        for h in &self.hints {
            writeln!(f, "  = hint: {h}")?;
        }
        for n in &self.notes {
            writeln!(f, "  = note: {n}")?;
        }
        for d in &self.more {
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostic {}

/// What goes before the caret under `line` for it to stand under character `col` (1-based),
/// whatever the terminal does with the characters before it: a tab is copied (it moves to the
/// same tab stop as above), a wide character (CJK, emoji: two columns in a terminal) becomes two
/// spaces, anything else one.
fn caret_indent(line: &str, col: usize) -> String {
    let mut indent = String::new();
    for c in line.chars().take(col.saturating_sub(1)) {
        match c {
            '\t' => indent.push('\t'),
            c if is_wide(c) => indent.push_str("  "),
            _ => indent.push(' '),
        }
    }
    indent
}

/// Whether a terminal shows `c` two columns wide (the East Asian Wide and Fullwidth blocks and
/// the emoji planes, Unicode's `EastAsianWidth` W and F in broad strokes).
fn is_wide(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x115F
        | 0x2E80..=0x303E
        | 0x3041..=0x33FF
        | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF
        | 0xA000..=0xA4CF
        | 0xAC00..=0xD7A3
        | 0xF900..=0xFAFF
        | 0xFE30..=0xFE4F
        | 0xFF00..=0xFF60
        | 0xFFE0..=0xFFE6
        | 0x1F300..=0x1F64F
        | 0x1F900..=0x1F9FF
        | 0x20000..=0x3FFFD)
}

/// Shows at most ~160 characters of a line, keeping the caret column visible.
fn clip_line(line: &str, col: usize) -> (String, usize) {
    const WIDTH: usize = 160;
    let chars: Vec<char> = line.chars().collect();
    if chars.len() <= WIDTH {
        return (line.to_string(), col);
    }
    let start = col
        .saturating_sub(WIDTH / 2)
        .min(chars.len().saturating_sub(WIDTH));
    let end = (start + WIDTH).min(chars.len());
    let mut s: String = chars[start..end].iter().collect();
    let mut caret = col - start;
    if start > 0 {
        s.insert_str(0, "...");
        caret += 3;
    }
    if end < chars.len() {
        s.push_str("...");
    }
    (s, caret)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_header_line_and_caret() {
        let src = SourceFile::new("a.ir", "{\n  (%0) = bad\n}\n");
        let d = Diagnostic::at(&src, 10, "expected a string").with_hint("op names are quoted");
        let s = d.to_string();
        assert_eq!(s, "a.ir:2:9: error: expected a string\n  (%0) = bad\n        ^\n  = hint: op names are quoted\n");
    }

    #[test]
    fn a_list_prints_every_error_in_order() {
        let src = SourceFile::new("r.rw", "a\nb\n");
        let all = vec![
            Diagnostic::at(&src, 0, "first"),
            Diagnostic::at(&src, 2, "second").with_hint("h"),
        ];
        let d = Diagnostic::list(all).expect("two errors");
        assert_eq!(
            d.to_string(),
            "r.rw:1:1: error: first\na\n^\nr.rw:2:1: error: second\nb\n^\n  = hint: h\n"
        );
        assert!(Diagnostic::list(Vec::new()).is_none());
    }

    #[test]
    fn offsets_past_the_end_and_inside_chars_do_not_panic() {
        let src = SourceFile::new("u.ir", "é");
        assert_eq!(src.line_col(1), (1, 1));
        assert_eq!(src.line_col(99), (1, 2));
    }

    #[test]
    fn caret_copies_tabs_and_widens_wide_characters() {
        let src = SourceFile::new("t.rw", "\tab x\n\u{65e5}\u{672c} y\n");
        let tab = Diagnostic::at(&src, 5, "m").to_string();
        assert_eq!(tab, "t.rw:1:6: error: m\n\tab x\n\t    ^\n");
        let wide = Diagnostic::at(&src, "\tab x\n\u{65e5}\u{672c} ".len(), "m").to_string();
        assert_eq!(wide, "t.rw:2:4: error: m\n\u{65e5}\u{672c} y\n     ^\n");
    }
}
