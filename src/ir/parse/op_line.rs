//! Step 2 of parsing: op lines into [`RawOp`]s that borrow the text, on worker threads.
//!
//! The fast path takes a line in three pieces (head shape, dictionary entries, tail), each
//! parsed by the grammar once per distinct text in the chunk; anything it cannot take goes
//! through the grammar's `op_line` rule whole, which is also the reference path. See the
//! module doc of `ir::parse`.

use super::*;

#[derive(Clone, Copy, Debug)]
pub(super) struct RawOperand<'a> {
    pub(super) label: Option<&'a str>,
    /// `None` for `<<NULL VALUE>>`.
    pub(super) value: Option<&'a str>,
}

pub(super) type Range32 = (u32, u32);

#[derive(Clone, Debug)]
pub(super) struct RawOp<'a> {
    pub(super) results: Range32,
    pub(super) name: &'a str,
    pub(super) operands: Range32,
    /// Index of the dictionary in the chunk's `attrs`.
    pub(super) attrs: Option<u32>,
    pub(super) operand_types: Option<Range32>,
    pub(super) result_types: Option<Range32>,
    pub(super) region_open: bool,
}

#[derive(Default)]
pub(super) struct RawChunk<'a> {
    pub(super) ops: Vec<RawOp<'a>>,
    /// Each distinct attribute dictionary text of the chunk, parsed (in the parallel phase),
    /// by first appearance; ops refer to them by index. `dicts` gives the index of a text.
    pub(super) attrs: LocalDicts,
    pub(super) dicts: FxHashMap<&'a str, u32>,
    /// Each distinct type text of the chunk, by first appearance; `type_ids` gives the index of
    /// each entry of `types`.
    pub(super) type_list: Vec<&'a str>,
    pub(super) type_index: FxHashMap<&'a str, u32>,
    pub(super) type_ids: Vec<u32>,
    /// Each distinct dictionary entry shape of the chunk, parsed (see [`split_dict`]).
    pub(super) entries: EntryCache<'a>,
    /// Each distinct op-line tail (the text after the dictionary), parsed.
    pub(super) tails: FxHashMap<&'a str, Tail>,
    /// Each distinct head shape (see [`HeadShape`]), parsed.
    pub(super) heads: FxHashMap<Box<str>, HeadShape>,
    /// Scratch for the shape of the current head and its collapsed value numbers.
    pub(super) shape: String,
    pub(super) runs: Vec<Run>,
    pub(super) values: Vec<&'a str>,
    pub(super) operands: Vec<RawOperand<'a>>,
    pub(super) types: Vec<&'a str>,
    /// The error of the op line after the last of `ops`, if one failed.
    pub(super) error: Option<Diagnostic>,
}

impl<'a> RawChunk<'a> {
    /// The index of dictionary `text`, parsing it into `attrs` with `parse` if the chunk has
    /// not seen it.
    pub(super) fn dict_index(
        &mut self,
        text: &'a str,
        parse: impl FnOnce(&mut Self) -> Option<u32>,
    ) -> Option<u32> {
        if let Some(&i) = self.dicts.get(text) {
            return Some(i);
        }
        let i = parse(self)?;
        self.dicts.insert(text, i);
        Some(i)
    }

    /// The chunk-local index of type text `t`.
    pub(super) fn type_index(&mut self, t: &'a str) -> u32 {
        if let Some(&i) = self.type_index.get(t) {
            return i;
        }
        let i = self.type_list.len() as u32;
        self.type_list.push(t);
        self.type_index.insert(t, i);
        i
    }

    pub(super) fn push_type(&mut self, t: &'a str) {
        let i = self.type_index(t);
        self.types.push(t);
        self.type_ids.push(i);
    }
}

/// The parse of an op-line head (`(%5, %6) = "pd_op.op" (%1, %arg_0, <<NULL VALUE>>) `) with
/// every value number collapsed to `0` (`(%0, %0) = "pd_op.op" (%0, %arg_0, <<NULL VALUE>>) `):
/// a program has few distinct shapes. Collapsing keeps the language: `value_def` and
/// `value_ref` are `%` and one or more digits, and no other `%` is followed by a digit (op
/// names, the only strings in a head, are left as they are). Spans are byte ranges in the shape.
pub(super) struct HeadShape {
    pub(super) results: usize,
    pub(super) name: (u32, u32),
    /// Label and value of each operand; a value is `None` for `<<NULL VALUE>>`.
    pub(super) operands: Vec<(Option<Span32>, Option<ShapeValue>)>,
}

/// A byte range in a head shape.
pub(super) type Span32 = (u32, u32);

#[derive(Clone, Copy)]
pub(super) enum ShapeValue {
    /// `%<digits>`: the next collapsed run.
    Numbered,
    /// `%arg_N`, `%kwarg_name`: this span of the shape.
    Named(u32, u32),
}

/// A value number collapsed in a head shape: where `%0` is in the shape, and where `%<digits>`
/// is in the line.
#[derive(Clone, Copy)]
pub(super) struct Run {
    pub(super) shape_at: u32,
    pub(super) start: u32,
    pub(super) end: u32,
}

/// The parse of an op-line tail (`: (types) -> types` and maybe ` {`), valid for every line
/// with the same tail text.
pub(super) struct Tail {
    /// Byte ranges of the types in the tail: the operand types, then the result types.
    pub(super) types: Vec<(u32, u32)>,
    /// How many of `types` are operand types; `None` without `: (...)`.
    pub(super) operand_types: Option<usize>,
    /// Whether `->` is present (it may be followed by no type).
    pub(super) result_types: bool,
    pub(super) region_open: bool,
    /// The chunk-local index of each type (see `RawChunk::type_list`).
    pub(super) ids: Vec<u32>,
}

/// Parses the op lines among `lines`. A line that fails ends the chunk: the error is kept in
/// `error` and reported by the builder when it reaches that line, so errors come in file order.
pub(super) fn parse_chunk<'a>(src: &'a SourceFile, lines: &[Line<'a>], path: Path) -> RawChunk<'a> {
    let n = lines.len();
    let mut c = RawChunk {
        ops: Vec::with_capacity(n),
        values: Vec::with_capacity(n),
        operands: Vec::with_capacity(n * 2),
        types: Vec::with_capacity(n * 3),
        type_ids: Vec::with_capacity(n * 3),
        ..RawChunk::default()
    };
    for l in lines.iter().filter(|l| l.kind == Kind::Op) {
        match parse_op_line(src, l, &mut c, path) {
            Ok(op) => c.ops.push(op),
            Err(d) => {
                c.error = Some(d);
                break;
            }
        }
    }
    c
}

pub(super) fn range(start: usize, end: usize) -> Range32 {
    (start as u32, end as u32)
}

pub(super) const EMPTY_RAW_OP: RawOp<'static> = RawOp {
    results: (0, 0),
    name: "",
    operands: (0, 0),
    attrs: None,
    operand_types: None,
    result_types: None,
    region_open: false,
};

/// Parses one op line. The fast path splits the line at its dictionary (found by the bracket
/// pre-scan) and parses each piece through a cache of distinct pieces; where any piece fails it
/// falls back to parsing the whole line with `op_line`, which is also the reference path.
pub(super) fn parse_op_line<'a>(
    src: &'a SourceFile,
    l: &Line<'a>,
    c: &mut RawChunk<'a>,
    path: Path,
) -> Result<RawOp<'a>, Diagnostic> {
    let dict = check_nesting(src, l)?;
    if let (Some((ds, de)), Path::Fast) = (dict, path) {
        let (nv, no, nt) = (c.values.len(), c.operands.len(), c.types.len());
        if let Some(op) = parse_op_line_split(src, l.text, ds, de, c) {
            return Ok(op);
        }
        c.values.truncate(nv);
        c.operands.truncate(no);
        c.types.truncate(nt);
        c.type_ids.truncate(nt);
    }
    let pairs = PirParser::parse(Rule::op_line, l.text).map_err(|e| pest_error(src, l, e))?;
    let mut op = EMPTY_RAW_OP;
    for p in pairs.flatten().take(1).flat_map(|p| p.into_inner()) {
        if p.as_rule() == Rule::attr_dict {
            let text = p.as_str();
            let mut err = None;
            op.attrs = c.dict_index(text, |c| {
                let dict = parse_dict_text(src, text).map_err(|e| err = Some(e)).ok()?;
                Some(c.attrs.dict_of(dict))
            });
            if let Some(e) = err {
                return Err(e);
            }
        } else {
            take_part(p, &mut op, c);
        }
    }
    Ok(op)
}

/// The fast path: parses the line as head, dictionary `text[ds..de]` and tail, the last two
/// through the chunk's caches. Returns `None` when any piece does not parse (the caller then
/// parses the whole line with `op_line` for the error); what it pushed onto `c` is then
/// truncated by the caller.
pub(super) fn parse_op_line_split<'a>(
    src: &'a SourceFile,
    text: &'a str,
    ds: usize,
    de: usize,
    c: &mut RawChunk<'a>,
) -> Option<RawOp<'a>> {
    let mut op = EMPTY_RAW_OP;
    parse_head(&text[..ds], &mut op, c)?;
    let dict = &text[ds..de];
    op.attrs = Some(c.dict_index(dict, |c| {
        split_dict(src, dict, &mut c.entries, &mut c.attrs)
    })?);
    let tail_text = &text[de..];
    if !c.tails.contains_key(tail_text) {
        let mut t = parse_tail(tail_text)?;
        t.ids = t
            .types
            .iter()
            .map(|&(a, b)| c.type_index(&tail_text[a as usize..b as usize]))
            .collect();
        c.tails.insert(tail_text, t);
    }
    let tail = c.tails.get(tail_text)?;
    let s = c.types.len();
    c.types.extend(
        tail.types
            .iter()
            .map(|&(a, b)| &tail_text[a as usize..b as usize]),
    );
    c.type_ids.extend_from_slice(&tail.ids);
    let mid = s + tail.operand_types.unwrap_or(0);
    op.operand_types = tail.operand_types.map(|_| range(s, mid));
    op.result_types = tail.result_types.then(|| range(mid, c.types.len()));
    op.region_open = tail.region_open;
    Some(op)
}

/// Parses an op-line head through its shape (see [`HeadShape`]).
pub(super) fn parse_head<'a>(
    text: &'a str,
    op: &mut RawOp<'a>,
    c: &mut RawChunk<'a>,
) -> Option<()> {
    c.shape.clear();
    c.runs.clear();
    let b = text.as_bytes();
    let (mut i, mut last, mut in_str) = (0, 0, false);
    while i < b.len() {
        match b[i] {
            b'"' => in_str = !in_str,
            b'%' if !in_str && b.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                let mut j = i + 1;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                c.shape.push_str(&text[last..i]);
                c.runs.push(Run {
                    shape_at: c.shape.len() as u32,
                    start: i as u32,
                    end: j as u32,
                });
                c.shape.push_str("%0");
                last = j;
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    c.shape.push_str(&text[last..]);
    if !c.heads.contains_key(c.shape.as_str()) {
        let h = parse_head_shape(&c.shape)?;
        c.heads.insert(c.shape.as_str().into(), h);
    }
    let h = c.heads.get(c.shape.as_str())?;
    let runs = &c.runs;
    // Maps a shape position (not inside a collapsed run) to the line.
    let orig = |p: u32| -> usize {
        let shift: u32 = runs
            .iter()
            .take_while(|r| r.shape_at < p)
            .map(|r| r.end - r.start - 2)
            .sum();
        (p + shift) as usize
    };
    let mut next_run = runs.iter();
    let mut numbered = || {
        next_run
            .next()
            .map(|r| &text[r.start as usize..r.end as usize])
    };
    let s = c.values.len();
    for _ in 0..h.results {
        c.values.push(numbered()?);
    }
    op.results = range(s, c.values.len());
    op.name = text.get(orig(h.name.0) + 1..orig(h.name.1) - 1)?;
    let s = c.operands.len();
    for &(label, value) in &h.operands {
        let label = label.map(|(a, b)| &text[orig(a)..orig(b)]);
        let value = match value {
            None => None,
            Some(ShapeValue::Numbered) => Some(numbered()?),
            Some(ShapeValue::Named(a, b)) => Some(&text[orig(a)..orig(b)]),
        };
        c.operands.push(RawOperand { label, value });
    }
    op.operands = range(s, c.operands.len());
    numbered().is_none().then_some(())
}

pub(super) fn parse_head_shape(shape: &str) -> Option<HeadShape> {
    let pairs = PirParser::parse(Rule::op_head, shape).ok()?;
    let mut h = HeadShape {
        results: 0,
        name: (0, 0),
        operands: Vec::new(),
    };
    let span = |p: &Pair<'_, Rule>| {
        let s = p.as_span();
        (s.start() as u32, s.end() as u32)
    };
    for p in pairs.flatten().take(1).flat_map(|p| p.into_inner()) {
        match p.as_rule() {
            Rule::results => h.results = p.into_inner().count(),
            Rule::op_name => h.name = span(&p),
            Rule::operands => {
                let mut label = None;
                for q in p.into_inner() {
                    match q.as_rule() {
                        Rule::operand_label => label = Some(span(&q)),
                        Rule::null_value => h.operands.push((label.take(), None)),
                        Rule::value_ref => {
                            h.operands.push((label.take(), Some(ShapeValue::Numbered)))
                        }
                        _ => {
                            let (a, b) = span(&q);
                            h.operands
                                .push((label.take(), Some(ShapeValue::Named(a, b))));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    Some(h)
}

pub(super) fn parse_tail(text: &str) -> Option<Tail> {
    let pairs = PirParser::parse(Rule::op_tail, text).ok()?;
    let mut t = Tail {
        types: Vec::new(),
        operand_types: None,
        result_types: false,
        region_open: false,
        ids: Vec::new(),
    };
    let span = |p: Pair<'_, Rule>| {
        let s = p.as_span();
        (s.start() as u32, s.end() as u32)
    };
    for p in pairs.flatten().take(1).flat_map(|p| p.into_inner()) {
        match p.as_rule() {
            Rule::operand_types => {
                t.types.extend(p.into_inner().map(span));
                t.operand_types = Some(t.types.len());
            }
            Rule::result_types => {
                t.types.extend(p.into_inner().map(span));
                t.result_types = true;
            }
            Rule::region_open => t.region_open = true,
            _ => {}
        }
    }
    Some(t)
}

/// Parses a dictionary entry by entry: `text` is split at its top-level commas, and each entry
/// is parsed through its *shape*, the entry with every string's contents removed (`name:""`):
/// the few distinct shapes are parsed once, and an entry's strings are then put back into the
/// parsed shape. Collapsing keeps the language, because the scan delimits strings exactly as
/// the grammar's `string` does (it refuses quotes inside parentheses, where the grammar's
/// `call` does not read strings). Returns `None` where the split might not be the grammar's or
/// any entry fails; the caller then parses the whole line on the reference path.
pub(super) fn split_dict<'a>(
    src: &SourceFile,
    text: &'a str,
    cache: &mut EntryCache<'a>,
    local: &mut LocalDicts,
) -> Option<u32> {
    let body = text.strip_prefix('{')?.strip_suffix('}')?;
    let bytes = body.as_bytes();
    cache.dict.clear();
    let mut stack = [0u8; MAX_NESTING];
    let mut depth = 0;
    let (mut start, mut last) = (0, 0);
    cache.shape.clear();
    cache.strings.clear();
    let mut i = 0;
    while i <= bytes.len() {
        let b = bytes.get(i).copied().unwrap_or(b',');
        match b {
            b'"' if stack[..depth].contains(&b')') => return None,
            b'"' => {
                // Keep the quotes, drop the contents.
                cache.shape.push_str(&body[last..=i]);
                let from = i + 1;
                i = from;
                loop {
                    match bytes.get(i) {
                        None => return None,
                        Some(b'\\') => i += 2,
                        Some(b'"') => break,
                        Some(_) => i += 1,
                    }
                }
                cache.strings.push(body.get(from..i)?);
                last = i;
            }
            b'(' | b'[' | b'{' => {
                if depth == MAX_NESTING {
                    return None;
                }
                stack[depth] = match b {
                    b'(' => b')',
                    b'[' => b']',
                    _ => b'}',
                };
                depth += 1;
            }
            b')' | b']' | b'}' => {
                if depth == 0 || stack[depth - 1] != b {
                    return None;
                }
                depth -= 1;
            }
            b',' if depth == 0 => {
                cache.shape.push_str(&body[last..i]);
                last = i + 1;
                let piece = body[start..i].trim_matches(' ');
                start = i + 1;
                if piece.is_empty() {
                    if i == bytes.len() && cache.dict.is_empty() && !body.contains(',') {
                        break; // `{}` or `{ }`
                    }
                    return None;
                }
                let pair = match cache.pieces.get(piece) {
                    Some(&pair) => pair,
                    None => {
                        let shape = cache.shape.trim_matches(' ');
                        let (k, template) = match cache.entries.get(shape) {
                            Some(e) => e,
                            None => {
                                let e = parse_entry(src, shape)?;
                                cache.entries.insert(shape.into(), e);
                                cache.entries.get(shape)?
                            }
                        };
                        let mut strings = cache.strings.iter();
                        let v = if cache.strings.is_empty() {
                            template.clone()
                        } else {
                            fill_strings(template, &mut strings)?
                        };
                        if strings.next().is_some() {
                            return None;
                        }
                        let pair = local.pair(k, v);
                        cache.pieces.insert(piece, pair);
                        pair
                    }
                };
                // A key written twice sends the line to the reference path, which reports it.
                // Keys are interned: one pointer per name. A long dictionary is checked with a
                // set, so that an op of 10^5 attributes is read in linear time.
                let k = local.pair_key(pair).as_ptr() as usize;
                if cache.dict.len() < LINEAR_KEY_SCAN {
                    if cache
                        .dict
                        .iter()
                        .any(|&q| local.pair_key(q).as_ptr() as usize == k)
                    {
                        return None;
                    }
                } else {
                    if cache.dict.len() == LINEAR_KEY_SCAN {
                        cache.keys.clear();
                        let known = cache
                            .dict
                            .iter()
                            .map(|&q| local.pair_key(q).as_ptr() as usize);
                        cache.keys.extend(known);
                    }
                    if !cache.keys.insert(k) {
                        return None;
                    }
                }
                cache.dict.push(pair);
                cache.shape.clear();
                cache.strings.clear();
            }
            _ => {}
        }
        i += 1;
    }
    (depth == 0).then(|| local.dict(&cache.dict))
}

/// Up to this many pairs, a dictionary is searched for a repeated key pair by pair (every op's
/// few attributes); past it, through a set.
const LINEAR_KEY_SCAN: usize = 16;

/// The per-chunk state of [`split_dict`]: parsed entry shapes, the pair each distinct entry
/// text became, and scratch space.
#[derive(Default)]
pub(super) struct EntryCache<'a> {
    pub(super) entries: FxHashMap<Box<str>, (AttrKey, Attr)>,
    pub(super) pieces: FxHashMap<&'a str, u32>,
    /// The pairs of the dictionary being split.
    pub(super) dict: Vec<u32>,
    /// The keys of `dict` (interned pointers), once it has [`LINEAR_KEY_SCAN`] pairs.
    pub(super) keys: rustc_hash::FxHashSet<usize>,
    pub(super) shape: String,
    pub(super) strings: Vec<&'a str>,
}

/// `template` with its strings (all empty) replaced, in order, by `strings`.
pub(super) fn fill_strings(
    template: &Attr,
    strings: &mut std::slice::Iter<'_, &str>,
) -> Option<Attr> {
    Some(match template {
        Attr::Str(_) => Attr::Str((*strings.next()?).into()),
        Attr::Array(items) => Attr::Array(
            items
                .iter()
                .map(|a| fill_strings(a, strings))
                .collect::<Option<_>>()?,
        ),
        Attr::Dict(d) => Attr::Dict(AttrDict {
            entries: d
                .entries
                .iter()
                .map(|(k, a)| Some((*k, fill_strings(a, strings)?)))
                .collect::<Option<_>>()?,
        }),
        other => other.clone(),
    })
}

pub(super) fn parse_entry(src: &SourceFile, text: &str) -> Option<(AttrKey, Attr)> {
    let pairs = PirParser::parse(Rule::entry_full, text).ok()?;
    let entry = pairs.flatten().find(|p| p.as_rule() == Rule::entry)?;
    let mut it = entry.into_inner();
    let (k, v) = (it.next()?, it.next()?);
    Some((intern_key(k.as_str()), attr_value(src, v).ok()?))
}

/// Takes one part of a parsed op line (or head or tail) into `op`; dictionaries are handled by
/// the callers.
pub(super) fn take_part<'a>(p: Pair<'a, Rule>, op: &mut RawOp<'a>, c: &mut RawChunk<'a>) {
    match p.as_rule() {
        Rule::results => {
            let s = c.values.len();
            c.values.extend(p.into_inner().map(|v| v.as_str()));
            op.results = range(s, c.values.len());
        }
        Rule::op_name => {
            let s = p.as_str();
            op.name = &s[1..s.len() - 1];
        }
        Rule::operands => {
            let s = c.operands.len();
            let mut label = None;
            for q in p.into_inner() {
                match q.as_rule() {
                    Rule::operand_label => label = Some(q.as_str()),
                    Rule::null_value => c.operands.push(RawOperand {
                        label: label.take(),
                        value: None,
                    }),
                    _ => c.operands.push(RawOperand {
                        label: label.take(),
                        value: Some(q.as_str()),
                    }),
                }
            }
            op.operands = range(s, c.operands.len());
        }
        Rule::operand_types => {
            let s = c.types.len();
            for t in p.into_inner() {
                c.push_type(t.as_str());
            }
            op.operand_types = Some(range(s, c.types.len()));
        }
        Rule::result_types => {
            let s = c.types.len();
            for t in p.into_inner() {
                c.push_type(t.as_str());
            }
            op.result_types = Some(range(s, c.types.len()));
        }
        Rule::region_open => op.region_open = true,
        _ => {}
    }
}
