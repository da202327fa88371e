//! Byte offsets in a JSON text, so diagnostics about a JSON program point at the offending
//! object (`main.json:1:4417: error: ...` with a caret) like those about the text form, and the
//! outline of the document the reader walks down to its ops with.
//!
//! `serde_json::Value` keeps no positions, and Paddle writes a whole program on one line, so a
//! JSON path alone (`ops[12].I[0]`) would be all a user got. This is a small scanner over text
//! serde has already accepted: [`offset_of`] walks to one path (used only when reporting an
//! error), and [`layout`] notes in one pass where every op object starts and ends, in document
//! order (the starts are recorded in the program so the verifier's messages point into the JSON
//! too), and where every large container ends. The reader splits an object or array into its
//! members with the layout ([`Layout::members`], [`Layout::elements`]), stepping over an op or a
//! large container at once: each level above the ops (program, region, block, `ops`) spans
//! nearly the whole file, and splitting each by a scan, or by serde, would read the file once
//! per level. All of it is linear.

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
    /// What [`layout`] records as it scans (`None` for the other scans).
    record: Option<Layout>,
}

/// The size from which [`layout`] records a container's end: the levels above the ops (the
/// program, its region, block and `ops` array) and the few large ops (those holding regions),
/// small enough that the fuzzer's inputs (up to 64 KiB) have such containers.
const LARGE: usize = 1 << 12;

impl<'a> Scan<'a> {
    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    /// Skips a string starting at `"`; returns its raw contents (escapes undecoded).
    fn string(&mut self) -> &'a [u8] {
        let start = self.i + 1;
        let mut i = start;
        while let Some(k) = self
            .b
            .get(i..)
            .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
        {
            i += k;
            if self.b[i] == b'\\' {
                i += 2;
                continue;
            }
            self.i = i + 1;
            return &self.b[start..i];
        }
        self.i = self.b.len();
        &self.b[start.min(self.b.len())..]
    }

    /// Skips one value; when recording, notes where each element of an array under the key
    /// `ops` starts and ends.
    fn value(&mut self, ops_array: bool) {
        self.ws();
        match self.peek() {
            Some(b'"') => {
                self.string();
            }
            Some(b'{') => {
                let start = self.i;
                self.i += 1;
                loop {
                    self.ws();
                    match self.peek() {
                        Some(b'}') => {
                            self.i += 1;
                            self.closed(start);
                            return;
                        }
                        Some(b',') => self.i += 1,
                        Some(b'"') => {
                            let is_ops = self.string() == b"ops";
                            self.ws();
                            if self.peek() == Some(b':') {
                                self.i += 1;
                            }
                            self.value(is_ops);
                        }
                        _ => return,
                    }
                }
            }
            Some(b'[') => {
                let start = self.i;
                self.i += 1;
                loop {
                    self.ws();
                    match self.peek() {
                        Some(b']') => {
                            self.i += 1;
                            self.closed(start);
                            return;
                        }
                        Some(b',') => self.i += 1,
                        Some(_) => match &mut self.record {
                            Some(r) if ops_array => {
                                let k = r.ops.len();
                                r.ops.push((self.i, self.i));
                                self.value(false);
                                if let Some(r) = &mut self.record {
                                    r.ops[k].1 = self.i;
                                }
                            }
                            _ => self.value(false),
                        },
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

    /// Records the container from `start` to here if it is large and recording is on.
    fn closed(&mut self, start: usize) {
        if let Some(r) = &mut self.record {
            if self.i - start >= LARGE {
                r.large.push((start, self.i));
            }
        }
    }

    /// Walks to `path`; returns the offset of the value there (or of the deepest step found).
    fn find(&mut self, path: &[Seg]) -> usize {
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
                                self.value(false);
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
                                self.value(false);
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

/// The elements of an array, in order ([`Layout::elements`]).
pub struct Elements<'l, 't> {
    layout: &'l Layout,
    doc: &'t str,
    /// Inside the array, before the next element; `None` once past its end.
    scan: Option<Scan<'t>>,
}

impl<'t> Iterator for Elements<'_, 't> {
    type Item = &'t str;

    fn next(&mut self) -> Option<&'t str> {
        let s = self.scan.as_mut()?;
        loop {
            s.ws();
            match s.peek() {
                Some(b',') => s.i += 1,
                Some(b']') | None => {
                    self.scan = None;
                    return None;
                }
                Some(_) => return Some(self.layout.skip(s, self.doc)),
            }
        }
    }
}

/// The byte offset of the value at `path` in `text` (or of the deepest part of it that exists).
pub fn offset_of(text: &str, path: &JsonPath) -> usize {
    Scan {
        b: text.as_bytes(),
        i: 0,
        record: None,
    }
    .find(&path.0)
}

/// The outline of a document serde has accepted, found in one pass: where each op object and
/// each large container starts and ends, so that splitting the levels above the ops into their
/// members, and an `ops` array into its ops, does not scan the file again at each level.
#[derive(Default)]
pub struct Layout {
    /// (start, end) of each element of an `ops` array, in document order: an op comes before
    /// the ops of its regions, which is the order the reader creates ops in.
    ops: Vec<(usize, usize)>,
    /// (start, end) of each container of at least [`LARGE`] bytes, sorted by start.
    large: Vec<(usize, usize)>,
}

/// The [`Layout`] of `text`.
pub fn layout(text: &str) -> Layout {
    let mut scan = Scan {
        b: text.as_bytes(),
        i: 0,
        record: Some(Layout::default()),
    };
    scan.value(false);
    let mut l = scan.record.unwrap_or_default();
    l.large.sort_unstable();
    l
}

impl Layout {
    /// How many op objects the document holds.
    pub fn op_count(&self) -> usize {
        self.ops.len()
    }

    /// Where the `k`-th op object of the document (in document order) starts.
    pub fn op_start(&self, k: usize) -> Option<usize> {
        self.ops.get(k).map(|&(start, _)| start)
    }

    /// The members of the object `v` (a slice of `doc`, the text this layout is of, starting at
    /// its `{`), in document order: each key as written, quotes and escapes included, and the
    /// text of its value.
    pub fn members<'t>(&self, doc: &'t str, v: &'t str) -> Vec<(&'t str, &'t str)> {
        let mut out = Vec::new();
        let Some(mut s) = self.scan_of(doc, v, b'{') else {
            return out;
        };
        loop {
            s.ws();
            match s.peek() {
                Some(b',') => s.i += 1,
                Some(b'"') => {
                    let key_start = s.i;
                    s.string();
                    let key = &doc[key_start..s.i];
                    s.ws();
                    if s.peek() == Some(b':') {
                        s.i += 1;
                    }
                    let value = self.skip(&mut s, doc);
                    out.push((key, value));
                }
                _ => return out,
            }
        }
    }

    /// The elements of the array `v` (a slice of `doc`, starting at its `[`), as the texts of
    /// its values in order, found as they are taken (an `ops` array is not held as a list).
    pub fn elements<'l, 't>(&'l self, doc: &'t str, v: &'t str) -> Elements<'l, 't> {
        Elements {
            layout: self,
            doc,
            scan: self.scan_of(doc, v, b'['),
        }
    }

    /// A scan of `doc` just inside `v`'s opening `open`, if `v` is a slice of `doc` that starts
    /// with it.
    fn scan_of<'t>(&self, doc: &'t str, v: &'t str, open: u8) -> Option<Scan<'t>> {
        let start = (v.as_ptr() as usize).checked_sub(doc.as_ptr() as usize)?;
        let end = start.checked_add(v.len())?;
        let b = doc.as_bytes().get(..end)?;
        let mut s = Scan {
            b,
            i: start,
            record: None,
        };
        s.ws();
        (s.peek() == Some(open)).then(|| {
            s.i += 1;
            s
        })
    }

    /// Skips the value at the scan's position, in one step when it is an op or a large
    /// container; returns its text.
    fn skip<'t>(&self, s: &mut Scan<'t>, doc: &'t str) -> &'t str {
        s.ws();
        let start = s.i;
        let end = [&self.ops, &self.large].into_iter().find_map(|spans| {
            let k = spans.binary_search_by_key(&start, |&(from, _)| from).ok()?;
            Some(spans[k].1)
        });
        match end {
            Some(end) if end > start && end <= s.b.len() => s.i = end,
            _ => s.value(false),
        }
        &doc[start..s.i]
    }
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
        let l = layout(DOC);
        let offs: Vec<usize> = (0..l.op_count()).filter_map(|k| l.op_start(k)).collect();
        let names: Vec<&str> = offs.iter().map(|&o| &DOC[o..o + 8]).collect();
        assert_eq!(
            names,
            vec![r##"{"#": "x"##, r##"{"#":"y""##, r##"{"#": "z"##]
        );
    }

    /// A document whose `ops` array is larger than [`LARGE`], with an op holding a region, keys
    /// with escapes and strings holding brackets.
    fn large_doc() -> String {
        let ops: Vec<String> = (0..2000)
            .map(|i| {
                format!(r##"{{"#": "op{i}", "A": [{{"N": "s", "AT": "]}}\"["}}], "O": [{i}]}}"##)
            })
            .chain(std::iter::once(
                r##"{"#": "if", "regions": [{"blocks": [{"ops": [{"#": "inner"}]}]}]}"##
                    .to_string(),
            ))
            .collect();
        format!(
            r#"{{"base_code": {{"magic": "pir"}}, "pro\u0067ram": {{"regions": [{{"blocks": [ {{"args": [], "ops": [{}] , "z": 1}} ]}}]}}}}"#,
            ops.join(", ")
        )
    }

    #[test]
    fn splits_each_level_as_serde_does() {
        use serde_json::value::RawValue;
        use std::collections::BTreeMap;
        let doc = large_doc();
        let doc = doc.as_str();
        let l = layout(doc);
        assert!(
            !l.large.is_empty(),
            "the test document has large containers"
        );
        // Decoded keys and raw values, as the reader builds them from `members`.
        let ours = |v: &str| -> BTreeMap<String, String> {
            l.members(doc, v)
                .into_iter()
                .map(|(k, v)| (serde_json::from_str(k).unwrap(), v.to_string()))
                .collect()
        };
        let serde = |v: &str| -> BTreeMap<String, String> {
            serde_json::from_str::<BTreeMap<String, &RawValue>>(v)
                .unwrap()
                .into_iter()
                .map(|(k, v)| (k, v.get().to_string()))
                .collect()
        };
        fn elements_as_serde<'t>(l: &Layout, doc: &'t str, v: &'t str) -> Vec<&'t str> {
            let serde: Vec<&str> = serde_json::from_str::<Vec<&RawValue>>(v)
                .unwrap()
                .into_iter()
                .map(RawValue::get)
                .collect();
            assert_eq!(l.elements(doc, v).collect::<Vec<_>>(), serde);
            serde
        }
        let root = l.members(doc, doc);
        assert_eq!(ours(doc), serde(doc));
        let program = root[1].1;
        assert_eq!(ours(program), serde(program));
        let regions = elements_as_serde(&l, doc, l.members(doc, program)[0].1);
        let blocks = elements_as_serde(&l, doc, l.members(doc, regions[0])[0].1);
        let block = l.members(doc, blocks[0]);
        assert_eq!(ours(blocks[0]), serde(blocks[0]));
        let ops = elements_as_serde(&l, doc, block[1].1);
        assert_eq!(ops.len(), 2001);
        assert!(ops[2000].ends_with(r#""inner"}]}]}]}"#));
        // The op spans are the ops: the last top-level op, then the op of its region.
        assert_eq!(l.op_count(), 2002);
        assert_eq!(
            l.op_start(2001).map(|o| &doc[o..o + 14]),
            Some(r##"{"#": "inner"}"##)
        );
    }

    #[test]
    fn splits_a_slice_of_another_text_by_scanning() {
        // Not a slice of the laid-out document: no recorded span applies, the scan splits it.
        let l = layout(&large_doc());
        let other = r#"{"a": [1, {"b": "]"}], "c": "x"}"#;
        assert_eq!(
            l.members(other, other),
            vec![(r#""a""#, r#"[1, {"b": "]"}]"#), (r#""c""#, r#""x""#)]
        );
        assert_eq!(
            l.elements(other, &other[6..21]).collect::<Vec<_>>(),
            vec!["1", r#"{"b": "]"}"#]
        );
    }
}
