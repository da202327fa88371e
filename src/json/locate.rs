//! Byte offsets in a JSON text, so diagnostics about a JSON program point at the offending
//! object (`main.json:1:4417: error: ...` with a caret) like those about the text form.
//!
//! `serde_json::Value` keeps no positions, and Paddle writes a whole program on one line, so a
//! JSON path alone (`ops[12].I[0]`) would be all a user got. This is a small scanner over text
//! serde has already accepted: [`offset_of`] walks to one path (used only when reporting an
//! error) and [`op_offsets`] lists where every op object starts, in document order (recorded in
//! the program so the verifier's messages point into the JSON too). Both are linear.

use std::fmt;

/// One step of a path into a JSON document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    Key(&'static str),
    Index(usize),
}

/// A path, printed `program.regions[0].blocks[0].ops[3]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JsonPath(pub Vec<Seg>);

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.0.iter().enumerate() {
            match s {
                Seg::Key(k) if i == 0 => write!(f, "{k}")?,
                Seg::Key(k) => write!(f, ".{k}")?,
                Seg::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

struct Scan<'a> {
    b: &'a [u8],
    i: usize,
}

impl Scan<'_> {
    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    /// Skips a string starting at `"`; returns its raw contents.
    fn string(&mut self) -> &[u8] {
        let start = self.i + 1;
        self.i += 1;
        while self.i < self.b.len() {
            match self.b[self.i] {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return &self.b[start..self.i - 1];
                }
                _ => self.i += 1,
            }
        }
        &self.b[start.min(self.b.len())..]
    }

    /// Skips one value; calls `on_op` for each element of an array under the key `ops`.
    fn value(&mut self, ops_array: bool, on_op: &mut dyn FnMut(usize)) {
        self.ws();
        match self.peek() {
            Some(b'"') => {
                self.string();
            }
            Some(b'{') => {
                self.i += 1;
                loop {
                    self.ws();
                    match self.peek() {
                        Some(b'}') => {
                            self.i += 1;
                            return;
                        }
                        Some(b',') => self.i += 1,
                        Some(b'"') => {
                            let is_ops = self.string() == b"ops";
                            self.ws();
                            if self.peek() == Some(b':') {
                                self.i += 1;
                            }
                            self.value(is_ops, on_op);
                        }
                        _ => return,
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                loop {
                    self.ws();
                    match self.peek() {
                        Some(b']') => {
                            self.i += 1;
                            return;
                        }
                        Some(b',') => self.i += 1,
                        Some(_) => {
                            if ops_array {
                                on_op(self.i);
                            }
                            self.value(false, on_op);
                        }
                        None => return,
                    }
                }
            }
            Some(_) => {
                while self.i < self.b.len()
                    && !matches!(
                        self.b[self.i],
                        b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t'
                    )
                {
                    self.i += 1;
                }
            }
            None => {}
        }
    }

    /// Walks to `path`; returns the offset of the value there (or of the deepest step found).
    fn find(&mut self, path: &[Seg]) -> usize {
        let mut noop = |_| {};
        for seg in path {
            self.ws();
            let here = self.i;
            match (seg, self.peek()) {
                (Seg::Key(k), Some(b'{')) => {
                    self.i += 1;
                    let mut found = false;
                    loop {
                        self.ws();
                        match self.peek() {
                            Some(b'"') => {
                                let hit = self.string() == k.as_bytes();
                                self.ws();
                                if self.peek() == Some(b':') {
                                    self.i += 1;
                                }
                                if hit {
                                    found = true;
                                    break;
                                }
                                self.value(false, &mut noop);
                            }
                            Some(b',') => self.i += 1,
                            _ => break,
                        }
                    }
                    if !found {
                        return here;
                    }
                }
                (Seg::Index(n), Some(b'[')) => {
                    self.i += 1;
                    let mut seen = 0;
                    loop {
                        self.ws();
                        match self.peek() {
                            Some(b',') => self.i += 1,
                            Some(b']') | None => return here,
                            Some(_) if seen == *n => break,
                            Some(_) => {
                                self.value(false, &mut noop);
                                seen += 1;
                            }
                        }
                    }
                }
                _ => return here,
            }
        }
        self.ws();
        self.i
    }
}

/// The byte offset of the value at `path` in `text` (or of the deepest part of it that exists).
pub fn offset_of(text: &str, path: &JsonPath) -> usize {
    Scan {
        b: text.as_bytes(),
        i: 0,
    }
    .find(&path.0)
}

/// Start offsets of all op objects (elements of `ops` arrays), in document order: an op comes
/// before the ops of its regions, which is the order the reader creates ops in.
pub fn op_offsets(text: &str) -> Vec<usize> {
    let mut out = Vec::new();
    Scan {
        b: text.as_bytes(),
        i: 0,
    }
    .value(false, &mut |i| out.push(i));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r##"{"a": 1, "program": {"regions": [{"blocks": [{"ops": [{"#": "x", "regions": [{"blocks": [{"ops": [ {"#":"y"} ]}]}]}, {"#": "z", "s": "o\"ps]"}]}]}]}}"##;

    #[test]
    fn finds_paths() {
        let p = JsonPath(vec![
            Seg::Key("program"),
            Seg::Key("regions"),
            Seg::Index(0),
            Seg::Key("blocks"),
            Seg::Index(0),
            Seg::Key("ops"),
            Seg::Index(1),
        ]);
        let at = offset_of(DOC, &p);
        assert!(DOC[at..].starts_with(r##"{"#": "z""##));
        assert_eq!(p.to_string(), "program.regions[0].blocks[0].ops[1]");
        let missing = JsonPath(vec![Seg::Key("program"), Seg::Key("nope")]);
        assert_eq!(&DOC[offset_of(DOC, &missing)..][..1], "{");
    }

    #[test]
    fn lists_ops_in_document_order() {
        let offs = op_offsets(DOC);
        let names: Vec<&str> = offs.iter().map(|&o| &DOC[o..o + 8]).collect();
        assert_eq!(
            names,
            vec![r##"{"#": "x"##, r##"{"#":"y""##, r##"{"#": "z"##]
        );
    }
}
