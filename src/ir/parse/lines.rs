//! Step 1 of parsing: the text split into lines, each classified by its first characters.
//! A mapped file's text is released as the scan passes it (`SourceText::release`).

use super::*;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Blank,
    Comment,
    Open,
    StartupOpen,
    Close,
    Else,
    KwHeader,
    Kwarg,
    Args,
    Op,
    Other,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Line<'a> {
    /// Byte offset of `text` in the file.
    pub(super) offset: usize,
    /// The line without indentation and line break.
    pub(super) text: &'a str,
    pub(super) kind: Kind,
}

pub(super) fn split_lines(src: &SourceFile) -> Result<Vec<Line<'_>>, Diagnostic> {
    let text = src.text.as_str();
    let mut lines = Vec::with_capacity(text.len() / 120 + 8);
    let mut start = 0;
    // A mapped file's pages are handed back as the scan passes them (see `SourceText`).
    let mut released = 0;
    for raw in text.split('\n') {
        let line_start = start;
        start += raw.len() + 1;
        if line_start - released >= RELEASE_STEP {
            src.text.release(released..line_start);
            released = line_start;
        }
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        let body = raw.trim_start_matches([' ', '\t']);
        let offset = line_start + (raw.len() - body.len());
        let trimmed = body.trim_end_matches([' ', '\t']);
        let kind = match trimmed.as_bytes().first() {
            None => Kind::Blank,
            Some(b'(') => Kind::Op,
            Some(b'%') if trimmed.starts_with("%kwarg_") => Kind::Kwarg,
            Some(b'^') if trimmed == "^kw:" => Kind::KwHeader,
            Some(b'^') => Kind::Args,
            Some(b'/') if trimmed.starts_with("//") => Kind::Comment,
            _ => match trimmed {
                "{" => Kind::Open,
                "}" => Kind::Close,
                "} else {" => Kind::Else,
                "startup {" => Kind::StartupOpen,
                _ => Kind::Other,
            },
        };
        lines.push(Line {
            offset,
            text: body,
            kind,
        });
    }
    // `split` yields an empty last piece after a final newline.
    if text.ends_with('\n') {
        lines.pop();
    }
    src.text.release(released..text.len());
    Ok(lines)
}

/// How much text the line scan passes before it releases it.
pub(super) const RELEASE_STEP: usize = 1 << 23;

pub(super) fn skip_trivia(lines: &[Line<'_>], mut i: usize) -> usize {
    while i < lines.len() && matches!(lines[i].kind, Kind::Blank | Kind::Comment) {
        i += 1;
    }
    i
}
