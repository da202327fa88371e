//! Parsing Paddle's program text into a [`Module`].
//!
//! The grammar is `grammar/pir.pest`. Paddle prints one op per line, so parsing runs in three
//! steps, each linear:
//!
//! 1. **Lines.** The text is split into lines and each line is classified by its first
//!    characters (`{`, `}`, `} else {`, `^kw:`, `%kwarg_...`, `^%arg...`, `(` for an op).
//! 2. **Op lines**, the bulk of the work, are parsed into [`RawOp`]s that borrow slices of the
//!    text. Lines are independent, so chunks of lines are parsed on worker threads while the
//!    builder (step 3) consumes the chunks before them.
//!
//!    The *fast path* does not run pest over every character. A bracket scan finds the
//!    attribute dictionary, and the line is taken in three pieces, each parsed by the grammar
//!    once per distinct text in the chunk: the head through its *shape* (value numbers
//!    collapsed: `(%0) = "pd_op.relu" (%0) `), the dictionary entry by entry through entry
//!    shapes (strings collapsed: `parameter_name:""`), and the tail (`: (types) -> types`) as
//!    it is. A program has a few dozen shapes, so pest parses a few hundred short texts
//!    instead of every line. Each collapse keeps the language (see [`HeadShape`] and
//!    [`split_dict`]); where anything fails, the line goes through the grammar's `op_line`
//!    rule whole, which is also the *reference path* ([`parse_module_reference`]). Tests and
//!    the `ir_parse` fuzz target check that both paths give the same module or diagnostic.
//! 3. **Building** walks the lines in order with a stack of open blocks, resolves `%N` names,
//!    and interns names, types and dictionaries, each distinct one once per chunk (the chunk
//!    numbered them while parsing). Errors are reported in file order.
//!
//! Every failure is a [`Diagnostic`] pointing at the offending character. The parser never
//! panics on any input: deep nesting is bounded before pest recurses
//! ([`MAX_NESTING`], [`MAX_REGION_DEPTH`]).

use super::attr::{intern_key, Attr, AttrDict, AttrId, AttrKey};
use super::dist::{DistSlot, OpDistAttr, Placement, ReduceKind, TensorDist};
use super::program::{BlockId, OpId, OpSyntax, Program, ValueId};
use super::types::{DType, Type, TypeId};
use super::{Context, Module};
use crate::diag::{Diagnostic, SourceFile};
use pest::iterators::Pair;
use pest::Parser as _;
use rustc_hash::FxHashMap;

#[derive(pest_derive::Parser)]
#[grammar = "../grammar/pir.pest"]
struct PirParser;

/// Deepest bracket nesting accepted inside one line (attributes, types).
pub const MAX_NESTING: usize = 64;
/// Deepest nesting of regions (`pd_op.if` inside `pd_op.while` inside ...).
pub const MAX_REGION_DEPTH: usize = 256;

/// Whether `name` can follow `%kwarg_` in a program: letters, digits and `_ . @ - /` (the
/// grammar's `kwarg_name`). A rewrite that names new state must check it, or it would print a
/// program that cannot be read back.
pub fn is_kwarg_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.@-/".contains(&b))
}

/// Parses a file holding a main program and optionally `startup { ... }`.
pub fn parse_module(src: &SourceFile) -> Result<Module, Diagnostic> {
    parse_module_with(src, Path::Fast)
}

/// [`parse_module`] without the fast path for op lines: every op line goes through the
/// grammar's `op_line` rule and every dictionary through `attr_dict_full`. The result must be
/// the same as [`parse_module`]'s, diagnostics included; tests and the fuzzer check that.
#[doc(hidden)]
pub fn parse_module_reference(src: &SourceFile) -> Result<Module, Diagnostic> {
    parse_module_with(src, Path::Reference)
}

/// How op lines are parsed (see [`parse_op_line`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Path {
    Fast,
    Reference,
}

fn parse_module_with(src: &SourceFile, path: Path) -> Result<Module, Diagnostic> {
    let lines = split_lines(src)?;
    with_op_lines(src, &lines, path, |feed| {
        let mut module = Module::default();
        let mut b = Builder::new(src, &mut module.ctx, feed);
        // Main program.
        let mut cur = skip_trivia(&lines, 0);
        let Some(first) = lines.get(cur) else {
            return Err(Diagnostic::in_file(&src.name, "the file holds no program")
                .with_hint("a Paddle program dump starts with a line `{`"));
        };
        if first.kind != Kind::Open {
            return Err(Diagnostic::at(
                src,
                first.offset,
                "expected `{` to start the main program",
            )
            .with_hint("a Paddle program dump starts with a line `{`"));
        }
        let (main, next) = b.program(&lines, cur)?;
        module.main = main;
        cur = skip_trivia(&lines, next);
        if let Some(l) = lines.get(cur) {
            if l.kind != Kind::StartupOpen {
                return Err(Diagnostic::at(
                    src,
                    l.offset,
                    "expected `startup {` or the end of the file",
                ));
            }
            let (startup, next) = b.program(&lines, cur)?;
            module.startup = Some(startup);
            cur = skip_trivia(&lines, next);
            if let Some(l) = lines.get(cur) {
                return Err(Diagnostic::at(
                    src,
                    l.offset,
                    "expected the end of the file after the startup program",
                ));
            }
        }
        module.trailing = trailing_blank_lines(src);
        Ok(module)
    })
}

/// Parses a separate file holding only a startup program (`--startup FILE`, a bare `{ ... }`
/// as Paddle dumps it) into `module`, sharing its context.
pub fn parse_startup_into(module: &mut Module, src: &SourceFile) -> Result<(), Diagnostic> {
    let lines = split_lines(src)?;
    let startup = with_op_lines(src, &lines, Path::Fast, |feed| {
        let mut b = Builder::new(src, &mut module.ctx, feed);
        let cur = skip_trivia(&lines, 0);
        let Some(first) = lines.get(cur) else {
            return Err(Diagnostic::in_file(
                &src.name,
                "the startup file holds no program",
            ));
        };
        if first.kind != Kind::Open && first.kind != Kind::StartupOpen {
            return Err(Diagnostic::at(
                src,
                first.offset,
                "expected `{` to start the startup program",
            ));
        }
        let (startup, next) = b.program(&lines, cur)?;
        let next = skip_trivia(&lines, next);
        if let Some(l) = lines.get(next) {
            return Err(Diagnostic::at(
                src,
                l.offset,
                "expected the end of the file after the startup program",
            ));
        }
        Ok(startup)
    })?;
    module.startup = Some(startup);
    Ok(())
}

fn trailing_blank_lines(src: &SourceFile) -> String {
    let t = &src.text;
    let end = t.trim_end_matches([' ', '\t', '\r', '\n']).len();
    // Keep what follows the final `}` line's newline.
    let after = &t[end..];
    match after.find('\n') {
        Some(i) => after[i + 1..].to_string(),
        None => String::new(),
    }
}

// ---- step 1: lines ---------------------------------------------------------------------------

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Kind {
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
struct Line<'a> {
    /// Byte offset of `text` in the file.
    offset: usize,
    /// The line without indentation and line break.
    text: &'a str,
    kind: Kind,
}

fn split_lines(src: &SourceFile) -> Result<Vec<Line<'_>>, Diagnostic> {
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
const RELEASE_STEP: usize = 1 << 23;

fn skip_trivia(lines: &[Line<'_>], mut i: usize) -> usize {
    while i < lines.len() && matches!(lines[i].kind, Kind::Blank | Kind::Comment) {
        i += 1;
    }
    i
}

// ---- step 2: op lines --------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
struct RawOperand<'a> {
    label: Option<&'a str>,
    /// `None` for `<<NULL VALUE>>`.
    value: Option<&'a str>,
}

type Range32 = (u32, u32);

#[derive(Clone, Debug)]
struct RawOp<'a> {
    results: Range32,
    name: &'a str,
    operands: Range32,
    /// Index into the chunk's `dict_list`.
    attrs: Option<u32>,
    operand_types: Option<Range32>,
    result_types: Option<Range32>,
    region_open: bool,
}

#[derive(Default)]
struct RawChunk<'a> {
    ops: Vec<RawOp<'a>>,
    /// Each distinct attribute dictionary text of the chunk, parsed (in the parallel phase),
    /// by first appearance; ops refer to them by index.
    dict_list: Vec<ChunkDict>,
    dicts: FxHashMap<&'a str, u32>,
    /// Each distinct type text of the chunk, by first appearance; `type_ids` gives the index of
    /// each entry of `types`.
    type_list: Vec<&'a str>,
    type_index: FxHashMap<&'a str, u32>,
    type_ids: Vec<u32>,
    /// Each distinct dictionary entry shape of the chunk, parsed (see [`split_dict`]).
    entries: EntryCache<'a>,
    /// Each distinct op-line tail (the text after the dictionary), parsed.
    tails: FxHashMap<&'a str, Tail>,
    /// Each distinct head shape (see [`HeadShape`]), parsed.
    heads: FxHashMap<Box<str>, HeadShape>,
    /// Scratch for the shape of the current head and its collapsed value numbers.
    shape: String,
    runs: Vec<Run>,
    values: Vec<&'a str>,
    operands: Vec<RawOperand<'a>>,
    types: Vec<&'a str>,
    /// The error of the op line after the last of `ops`, if one failed.
    error: Option<Diagnostic>,
}

struct ChunkDict {
    /// Taken by the builder when it interns the dictionary.
    dict: Option<AttrDict>,
}

impl<'a> RawChunk<'a> {
    /// The index of dictionary `text`, parsing it with `parse` if the chunk has not seen it.
    fn dict_index(
        &mut self,
        text: &'a str,
        parse: impl FnOnce(&mut Self) -> Option<AttrDict>,
    ) -> Option<u32> {
        if let Some(&i) = self.dicts.get(text) {
            return Some(i);
        }
        let dict = parse(self)?;
        let i = self.dict_list.len() as u32;
        self.dict_list.push(ChunkDict { dict: Some(dict) });
        self.dicts.insert(text, i);
        Some(i)
    }

    /// The chunk-local index of type text `t`.
    fn type_index(&mut self, t: &'a str) -> u32 {
        if let Some(&i) = self.type_index.get(t) {
            return i;
        }
        let i = self.type_list.len() as u32;
        self.type_list.push(t);
        self.type_index.insert(t, i);
        i
    }

    fn push_type(&mut self, t: &'a str) {
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
struct HeadShape {
    results: usize,
    name: (u32, u32),
    /// Label and value of each operand; a value is `None` for `<<NULL VALUE>>`.
    operands: Vec<(Option<Span32>, Option<ShapeValue>)>,
}

/// A byte range in a head shape.
type Span32 = (u32, u32);

#[derive(Clone, Copy)]
enum ShapeValue {
    /// `%<digits>`: the next collapsed run.
    Numbered,
    /// `%arg_N`, `%kwarg_name`: this span of the shape.
    Named(u32, u32),
}

/// A value number collapsed in a head shape: where `%0` is in the shape, and where `%<digits>`
/// is in the line.
#[derive(Clone, Copy)]
struct Run {
    shape_at: u32,
    start: u32,
    end: u32,
}

/// The parse of an op-line tail (`: (types) -> types` and maybe ` {`), valid for every line
/// with the same tail text.
struct Tail {
    /// Byte ranges of the types in the tail: the operand types, then the result types.
    types: Vec<(u32, u32)>,
    /// How many of `types` are operand types; `None` without `: (...)`.
    operand_types: Option<usize>,
    /// Whether `->` is present (it may be followed by no type).
    result_types: bool,
    region_open: bool,
    /// The chunk-local index of each type (see `RawChunk::type_list`).
    ids: Vec<u32>,
}

/// Parsed op lines, in file order, as the builder asks for them: chunks of lines are parsed on
/// worker threads while the builder consumes the ones before, so parsing and building overlap
/// and only the chunks in flight are held in raw form.
enum ChunkFeed<'a> {
    Inline(std::collections::VecDeque<RawChunk<'a>>),
    Threaded {
        rx: std::sync::mpsc::Receiver<(usize, RawChunk<'a>)>,
        /// Chunks that arrived before their turn.
        early: FxHashMap<usize, RawChunk<'a>>,
        next: usize,
        total: usize,
        window: std::sync::Arc<Window>,
        /// The file and the byte offset where each chunk starts: taking chunk `i` releases
        /// the text before chunk `i - 1` (see `SourceText::release`).
        src: &'a SourceFile,
        starts: Vec<usize>,
    },
}

/// How far the workers may run ahead of the builder: a worker parses chunk `i` only once the
/// builder has taken chunk `i − AHEAD`. Without it, workers that outpace the builder (on a busy
/// machine, say) hold every parsed chunk of the file at once, and peak memory depends on the
/// scheduler.
struct Window {
    /// Chunks the builder has taken.
    taken: std::sync::Mutex<usize>,
    moved: std::sync::Condvar,
    /// Set when the builder is done (early on an error): waiting workers stop.
    stop: std::sync::atomic::AtomicBool,
}

impl Window {
    const AHEAD: usize = 8;

    /// Blocks until chunk `i` may be parsed; false when the builder has stopped.
    fn wait_for(&self, i: usize) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        let mut taken = self.taken.lock().unwrap_or_else(|e| e.into_inner());
        while i >= *taken + Self::AHEAD && !self.stop.load(Relaxed) {
            taken = self.moved.wait(taken).unwrap_or_else(|e| e.into_inner());
        }
        !self.stop.load(Relaxed)
    }

    fn set_taken(&self, n: usize) {
        *self.taken.lock().unwrap_or_else(|e| e.into_inner()) = n;
        self.moved.notify_all();
    }

    fn stop(&self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        // Under the lock, so that no worker misses the wake-up between its check and its wait.
        let _taken = self.taken.lock().unwrap_or_else(|e| e.into_inner());
        self.moved.notify_all();
    }
}

impl<'a> ChunkFeed<'a> {
    /// The next chunk in file order; `None` after the last.
    fn next(&mut self) -> Option<RawChunk<'a>> {
        match self {
            ChunkFeed::Inline(q) => q.pop_front(),
            ChunkFeed::Threaded {
                rx,
                early,
                next,
                total,
                window,
                src,
                starts,
            } => {
                if *next == *total {
                    return None;
                }
                if *next >= 2 {
                    src.text.release(starts[*next - 2]..starts[*next - 1]);
                }
                let c = match early.remove(next) {
                    Some(c) => c,
                    None => loop {
                        // A worker never drops its sender before sending all its chunks.
                        let (i, c) = rx.recv().ok()?;
                        if i == *next {
                            break c;
                        }
                        early.insert(i, c);
                    },
                };
                *next += 1;
                window.set_taken(*next);
                Some(c)
            }
        }
    }
}

/// Lines per chunk: small enough that workers and builder overlap, large enough that the
/// per-chunk caches (heads, tails, dictionaries) pay off.
const CHUNK_LINES: usize = 4_096;

/// Runs `build` with a feed of the file's op lines, parsed on all cores for large files.
fn with_op_lines<'a, T>(
    src: &'a SourceFile,
    lines: &[Line<'a>],
    path: Path,
    build: impl FnOnce(ChunkFeed<'a>) -> Result<T, Diagnostic>,
) -> Result<T, Diagnostic> {
    let pieces: Vec<&[Line<'a>]> = lines.chunks(CHUNK_LINES).collect();
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8);
    if pieces.len() <= 1 || threads == 1 {
        let chunks = pieces.iter().map(|p| parse_chunk(src, p, path)).collect();
        return build(ChunkFeed::Inline(chunks));
    }
    let next_piece = std::sync::atomic::AtomicUsize::new(0);
    let window = std::sync::Arc::new(Window {
        taken: std::sync::Mutex::new(0),
        moved: std::sync::Condvar::new(),
        stop: std::sync::atomic::AtomicBool::new(false),
    });
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::channel();
        for _ in 0..threads {
            let tx = tx.clone();
            let (pieces, next_piece, window) = (&pieces, &next_piece, &window);
            scope.spawn(move || loop {
                let i = next_piece.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(p) = pieces.get(i) else { break };
                if !window.wait_for(i) || tx.send((i, parse_chunk(src, p, path))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let feed = ChunkFeed::Threaded {
            rx,
            early: FxHashMap::default(),
            next: 0,
            total: pieces.len(),
            window: window.clone(),
            src,
            starts: pieces.iter().map(|p| p[0].offset).collect(),
        };
        // When the builder is done, even by an early error or a panic, waiting workers stop
        // (the scope joins them: a worker left waiting would hang it).
        struct StopOnDrop<'w>(&'w Window);
        impl Drop for StopOnDrop<'_> {
            fn drop(&mut self) {
                self.0.stop();
            }
        }
        let _stop = StopOnDrop(&window);
        build(feed)
    })
}

/// Parses the op lines among `lines`. A line that fails ends the chunk: the error is kept in
/// `error` and reported by the builder when it reaches that line, so errors come in file order.
fn parse_chunk<'a>(src: &'a SourceFile, lines: &[Line<'a>], path: Path) -> RawChunk<'a> {
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

fn range(start: usize, end: usize) -> Range32 {
    (start as u32, end as u32)
}

const EMPTY_RAW_OP: RawOp<'static> = RawOp {
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
fn parse_op_line<'a>(
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
            op.attrs = c.dict_index(text, |_| {
                parse_dict_text(src, text).map_err(|e| err = Some(e)).ok()
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
fn parse_op_line_split<'a>(
    src: &'a SourceFile,
    text: &'a str,
    ds: usize,
    de: usize,
    c: &mut RawChunk<'a>,
) -> Option<RawOp<'a>> {
    let mut op = EMPTY_RAW_OP;
    parse_head(&text[..ds], &mut op, c)?;
    let dict = &text[ds..de];
    op.attrs = Some(c.dict_index(dict, |c| split_dict(src, dict, &mut c.entries))?);
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
fn parse_head<'a>(text: &'a str, op: &mut RawOp<'a>, c: &mut RawChunk<'a>) -> Option<()> {
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

fn parse_head_shape(shape: &str) -> Option<HeadShape> {
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

fn parse_tail(text: &str) -> Option<Tail> {
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
fn split_dict<'a>(src: &SourceFile, text: &'a str, cache: &mut EntryCache<'a>) -> Option<AttrDict> {
    let body = text.strip_prefix('{')?.strip_suffix('}')?;
    let bytes = body.as_bytes();
    let mut d = AttrDict::default();
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
                    if i == bytes.len() && d.is_empty() && !body.contains(',') {
                        break; // `{}` or `{ }`
                    }
                    return None;
                }
                let shape = cache.shape.trim_matches(' ');
                let (k, template) = match cache.entries.get(shape) {
                    Some(e) => e,
                    None => {
                        let e = parse_entry(src, shape)?;
                        cache.entries.insert(shape.into(), e);
                        cache.entries.get(shape)?
                    }
                };
                if d.contains_key(k) {
                    return None;
                }
                let mut strings = cache.strings.iter();
                let v = if cache.strings.is_empty() {
                    template.clone()
                } else {
                    fill_strings(template, &mut strings)?
                };
                if strings.next().is_some() {
                    return None;
                }
                d.entries.push((k, v));
                cache.shape.clear();
                cache.strings.clear();
            }
            _ => {}
        }
        i += 1;
    }
    (depth == 0).then_some(d)
}

/// The per-chunk state of [`split_dict`]: parsed entry shapes, and scratch space.
#[derive(Default)]
struct EntryCache<'a> {
    entries: FxHashMap<Box<str>, (AttrKey, Attr)>,
    shape: String,
    strings: Vec<&'a str>,
}

/// `template` with its strings (all empty) replaced, in order, by `strings`.
fn fill_strings(template: &Attr, strings: &mut std::slice::Iter<'_, &str>) -> Option<Attr> {
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

fn parse_entry(src: &SourceFile, text: &str) -> Option<(AttrKey, Attr)> {
    let pairs = PirParser::parse(Rule::entry_full, text).ok()?;
    let entry = pairs.flatten().find(|p| p.as_rule() == Rule::entry)?;
    let mut it = entry.into_inner();
    let (k, v) = (it.next()?, it.next()?);
    Some((intern_key(k.as_str()), attr_value(src, v).ok()?))
}

/// Takes one part of a parsed op line (or head or tail) into `op`; dictionaries are handled by
/// the callers.
fn take_part<'a>(p: Pair<'a, Rule>, op: &mut RawOp<'a>, c: &mut RawChunk<'a>) {
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

/// Rejects lines whose brackets nest deeper than [`MAX_NESTING`] before pest recurses into them,
/// and lines that end before a `(`, `[` or `{` is closed (a truncated op), with a message that
/// points at the unclosed bracket.
///
/// Returns the byte range of the first top-level `{...}` closed on the line: on an op line that
/// is the attribute dictionary, if the line parses.
fn check_nesting(src: &SourceFile, l: &Line<'_>) -> Result<Option<(usize, usize)>, Diagnostic> {
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
static SCAN_STOP: [bool; 256] = {
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
fn next_scan_stop(bytes: &[u8], mut i: usize) -> usize {
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
struct OpenStack {
    items: [(u8, usize); MAX_NESTING],
    len: usize,
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
    fn push(&mut self, item: (u8, usize)) {
        if self.len < MAX_NESTING {
            self.items[self.len] = item;
            self.len += 1;
        }
    }

    fn pop(&mut self) {
        self.len = self.len.saturating_sub(1);
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn len(&self) -> usize {
        self.len
    }

    /// The innermost open bracket; `(0, 0)` when none is open.
    fn last(&self) -> (u8, usize) {
        self.len.checked_sub(1).map_or((0, 0), |i| self.items[i])
    }
}

fn describe(rule: &Rule) -> &'static str {
    match rule {
        Rule::results => "a result list like `(%0)` or `()`",
        Rule::value_def => "a result name like `%3`",
        Rule::op_name => "a quoted op name like \"pd_op.add\"",
        Rule::operands => "an operand list like `(%0, %1)`",
        Rule::operand_label
        | Rule::null_value
        | Rule::value_ref
        | Rule::arg_ref
        | Rule::kwarg_ref => "a value like `%3`, `%arg_0`, `%kwarg_<name>` or `<<NULL VALUE>>`",
        Rule::attr_dict | Rule::dict => "an attribute dictionary like `{op_role:1}`",
        Rule::attr_key => "an attribute name",
        Rule::operand_types => "operand types like `(tensor<4xf32>)`",
        Rule::result_types | Rule::type_ | Rule::ty => "a type like `tensor<-1x8xf32>`",
        Rule::region_open => "`{`",
        Rule::dim | Rule::dtype | Rule::tensor_type => "a tensor type like `tensor<4xf32>`",
        Rule::EOI => "the end of the line",
        Rule::block_arg => "a block argument like `%arg_0 {attrs}`",
        _ => "",
    }
}

fn pest_error(src: &SourceFile, l: &Line<'_>, e: pest::error::Error<Rule>) -> Diagnostic {
    let pos = match e.location {
        pest::error::InputLocation::Pos(p) => p,
        pest::error::InputLocation::Span((s, _)) => s,
    };
    let mut expected: Vec<&str> = match &e.variant {
        pest::error::ErrorVariant::ParsingError { positives, .. } => positives
            .iter()
            .map(describe)
            .filter(|s| !s.is_empty())
            .collect(),
        pest::error::ErrorVariant::CustomError { .. } => vec![],
    };
    expected.dedup();
    let rest = &l.text[pos.min(l.text.len())..];
    let found = match rest.chars().next() {
        None => "the end of the line".to_string(),
        Some(c) => format!(
            "`{}`",
            rest.split([' ', ',', ')'])
                .next()
                .filter(|s| !s.is_empty())
                .unwrap_or(&c.to_string())
        ),
    };
    let msg = if expected.is_empty() {
        format!("unexpected {found} in op line")
    } else {
        format!("expected {}, found {found}", expected.join(" or "))
    };
    let mut d = Diagnostic::at(src, l.offset + pos, msg);
    if rest.starts_with('<') && !rest.contains('>') {
        d = d.with_hint("this `<` is not closed by `>`: a type reads like `tensor<4xf32>`");
    } else if rest.starts_with('"') && !rest[1..].contains('"') {
        d = d.with_hint("this string is not terminated on its line");
    } else {
        d = d.with_hint(
            "an op line reads `(%0) = \"dialect.op\" (%1, %2) {attrs} : (types) -> types`",
        );
    }
    d
}

// ---- step 3: building ----------------------------------------------------------------------

struct Frame {
    block: BlockId,
    /// The op owning this block, for regions.
    owner: Option<OpId>,
    offset: usize,
    kw_open: bool,
    seen_op: bool,
}

struct Builder<'a, 'c> {
    src: &'a SourceFile,
    ctx: &'c mut Context,
    /// Parsed op lines not yet built, by chunk. A chunk is dropped as soon as it is built, so
    /// the raw form of a large file never lives beside all of its IR.
    feed: ChunkFeed<'a>,
    /// The chunk being built and the index of its next op.
    cur: RawChunk<'a>,
    cur_idx: usize,
    attr_cache: FxHashMap<&'a str, AttrId>,
    type_cache: FxHashMap<&'a str, TypeId>,
    /// Global ids of the current chunk's dictionaries and types, by chunk-local index, resolved
    /// on first use ([`UNRESOLVED`] until then) so that errors come in line order.
    chunk_attrs: Vec<AttrId>,
    chunk_types: Vec<TypeId>,
    vals: Vec<Option<ValueId>>,
    rtys: Vec<TypeId>,
}

const UNRESOLVED: u32 = u32::MAX;

/// Maps `%N` to values: a dense vector for the usual dense numbering, a hash map beyond.
#[derive(Default)]
struct Names<'a> {
    dense: Vec<u32>,
    sparse: FxHashMap<u64, ValueId>,
    named: FxHashMap<&'a str, ValueId>,
}

const DENSE_LIMIT: u64 = 1 << 24;

impl<'a> Names<'a> {
    fn get_num(&self, n: u64) -> Option<ValueId> {
        if n < self.dense.len() as u64 {
            let v = self.dense[n as usize];
            (v != u32::MAX).then_some(ValueId(v))
        } else {
            self.sparse.get(&n).copied()
        }
    }

    /// Returns false if `n` was already defined.
    fn define_num(&mut self, n: u64, v: ValueId) -> bool {
        if self.get_num(n).is_some() {
            return false;
        }
        if n < DENSE_LIMIT {
            if n >= self.dense.len() as u64 {
                self.dense
                    .resize((n as usize + 1).max(self.dense.len() * 2), u32::MAX);
            }
            self.dense[n as usize] = v.0;
        } else {
            self.sparse.insert(n, v);
        }
        true
    }
}

impl<'a, 'c> Builder<'a, 'c> {
    fn new(src: &'a SourceFile, ctx: &'c mut Context, feed: ChunkFeed<'a>) -> Self {
        Builder {
            src,
            ctx,
            feed,
            cur: RawChunk::default(),
            cur_idx: 0,
            attr_cache: FxHashMap::default(),
            type_cache: FxHashMap::default(),
            chunk_attrs: Vec::new(),
            chunk_types: Vec::new(),
            vals: Vec::new(),
            rtys: Vec::new(),
        }
    }

    fn err(&self, at: &str, msg: impl Into<String>) -> Diagnostic {
        err_at(self.src, at, msg)
    }

    /// Builds the program whose opening line is `lines[start]`; returns it and the index of
    /// the line after its closing `}`.
    fn program(
        &mut self,
        lines: &[Line<'a>],
        start: usize,
    ) -> Result<(Program, usize), Diagnostic> {
        let mut prog = Program::new();
        prog.reserve(lines.len().saturating_sub(start));
        let mut names = Names::default();
        let mut stack = vec![Frame {
            block: prog.top_block(),
            owner: None,
            offset: lines[start].offset,
            kw_open: false,
            seen_op: false,
        }];
        let mut i = start + 1;
        while i < lines.len() {
            let l = lines[i];
            i += 1;
            let Some(top) = stack.last_mut() else { break };
            match l.kind {
                Kind::Blank | Kind::Comment => {}
                Kind::Close => {
                    stack.pop();
                    if stack.is_empty() {
                        return Ok((prog, i));
                    }
                }
                Kind::Else => {
                    let owner = top.owner;
                    match owner {
                        Some(op) if prog.op(op).syntax == OpSyntax::Regions => {
                            stack.pop();
                            let b = prog.add_region(op);
                            stack.push(Frame {
                                block: b,
                                owner: Some(op),
                                offset: l.offset,
                                kw_open: false,
                                seen_op: false,
                            });
                        }
                        _ => {
                            return Err(Diagnostic::at(
                                self.src,
                                l.offset,
                                "`} else {` outside the region of a `pd_op.if`-style op",
                            ))
                        }
                    }
                }
                Kind::KwHeader => {
                    if top.seen_op || top.kw_open || !prog.block_kwargs(top.block).is_empty() {
                        return Err(Diagnostic::at(
                            self.src,
                            l.offset,
                            "`^kw:` must come first in a block, once",
                        )
                        .with_hint("keyword arguments are listed before the block's ops"));
                    }
                    top.kw_open = true;
                }
                Kind::Kwarg => {
                    if !top.kw_open || top.seen_op {
                        return Err(Diagnostic::at(
                            self.src,
                            l.offset,
                            "keyword argument outside a `^kw:` list",
                        ));
                    }
                    let block = top.block;
                    self.kwarg(&mut prog, &mut names, block, l)?;
                }
                Kind::Args => {
                    if top.seen_op || top.kw_open || !prog.block_args(top.block).is_empty() {
                        return Err(Diagnostic::at(
                            self.src,
                            l.offset,
                            "block arguments must be the first line of a block",
                        ));
                    }
                    let block = top.block;
                    self.block_args(&mut prog, &mut names, block, l)?;
                }
                Kind::Op => {
                    top.seen_op = true;
                    top.kw_open = false;
                    let block = top.block;
                    let (op, opens) = self.op(&mut prog, &mut names, block, l)?;
                    if opens {
                        if stack.len() >= MAX_REGION_DEPTH {
                            return Err(Diagnostic::at(
                                self.src,
                                l.offset,
                                format!("regions nested deeper than {MAX_REGION_DEPTH} levels"),
                            ));
                        }
                        let b = prog.add_region(op);
                        stack.push(Frame {
                            block: b,
                            owner: Some(op),
                            offset: l.offset,
                            kw_open: false,
                            seen_op: false,
                        });
                    }
                }
                Kind::Open | Kind::StartupOpen | Kind::Other => {
                    let msg = if l.text.starts_with('{') || l.text.starts_with("startup") {
                        "a program cannot start inside another program"
                    } else {
                        "expected an op line `(%0) = \"dialect.op\" (...) ...`, `}` or `^kw:`"
                    };
                    return Err(Diagnostic::at(self.src, l.offset, msg));
                }
            }
        }
        let open = stack.last().map_or(lines[start].offset, |f| f.offset);
        Err(Diagnostic::at(self.src, open, "this `{` is never closed")
            .with_hint("the file ends before the matching `}`"))
    }

    fn kwarg(
        &mut self,
        prog: &mut Program,
        names: &mut Names<'a>,
        block: BlockId,
        l: Line<'a>,
    ) -> Result<(), Diagnostic> {
        check_nesting(self.src, &l)?;
        let pairs =
            PirParser::parse(Rule::kwarg_line, l.text).map_err(|e| pest_error(self.src, &l, e))?;
        let mut name = "";
        let mut attrs = Context::EMPTY_ATTRS;
        for p in pairs.flatten().take(1).flat_map(|p| p.into_inner()) {
            match p.as_rule() {
                Rule::kwarg_ref => name = p.as_str(),
                Rule::attr_dict => attrs = self.attrs(p.as_str())?,
                _ => {}
            }
        }
        if names.named.contains_key(name) {
            return Err(self.err(name, format!("duplicate definition of {name}")));
        }
        let sym = self.ctx.sym(&name["%kwarg_".len()..]);
        let v = prog.add_kwarg(block, sym, Context::UNKNOWN_TYPE, attrs);
        names.named.insert(name, v);
        Ok(())
    }

    fn block_args(
        &mut self,
        prog: &mut Program,
        names: &mut Names<'a>,
        block: BlockId,
        l: Line<'a>,
    ) -> Result<(), Diagnostic> {
        check_nesting(self.src, &l)?;
        let pairs = PirParser::parse(Rule::block_args_line, l.text)
            .map_err(|e| pest_error(self.src, &l, e))?;
        for arg in pairs.flatten().take(1).flat_map(|p| p.into_inner()) {
            if arg.as_rule() != Rule::block_arg {
                continue;
            }
            let mut name = "";
            let mut attrs = Context::EMPTY_ATTRS;
            for p in arg.into_inner() {
                match p.as_rule() {
                    Rule::arg_ref => name = p.as_str(),
                    Rule::attr_dict => attrs = self.attrs(p.as_str())?,
                    _ => {}
                }
            }
            if names.named.contains_key(name) {
                return Err(self.err(name, format!("duplicate definition of {name}")));
            }
            let v = prog.add_block_arg(block, Context::UNKNOWN_TYPE, attrs);
            names.named.insert(name, v);
        }
        Ok(())
    }

    fn op(
        &mut self,
        prog: &mut Program,
        names: &mut Names<'a>,
        block: BlockId,
        l: Line<'a>,
    ) -> Result<(OpId, bool), Diagnostic> {
        while self.cur_idx == self.cur.ops.len() {
            if let Some(e) = self.cur.error.take() {
                return Err(e);
            }
            let Some(next) = self.feed.next() else {
                break;
            };
            self.cur = next;
            self.cur_idx = 0;
            self.chunk_attrs.clear();
            self.chunk_attrs
                .resize(self.cur.dict_list.len(), AttrId(UNRESOLVED));
            self.chunk_types.clear();
            self.chunk_types
                .resize(self.cur.type_list.len(), TypeId(UNRESOLVED));
        }
        let mut c = std::mem::take(&mut self.cur);
        let Some(r) = c.ops.get(self.cur_idx).cloned() else {
            return Err(Diagnostic::at(
                self.src,
                l.offset,
                "internal: op line without a parse",
            ));
        };
        self.cur_idx += 1;
        let operands = &c.operands[r.operands.0 as usize..r.operands.1 as usize];
        let results = &c.values[r.results.0 as usize..r.results.1 as usize];
        let labeled = operands.iter().any(|o| o.label.is_some());

        // Which of the three printed forms this is.
        let syntax = if labeled {
            let ok = operands.first().is_some_and(|o| o.label == Some("cond"))
                && operands.get(1).is_none_or(|o| o.label == Some("inputs"))
                && operands.iter().skip(2).all(|o| o.label.is_none());
            if !ok {
                let at = operands.iter().find_map(|o| o.label).unwrap_or(l.text);
                return Err(self.err(
                    at,
                    "labelled operands are only understood as `(cond=%c, inputs=%a, ...)`",
                ));
            }
            if !r.region_open || r.operand_types.is_some() || r.result_types.is_some() {
                return Err(Diagnostic::at(
                    self.src,
                    l.offset,
                    "a `while`-style op is written `(...) = \"op\" (cond=%c, inputs=...) {`",
                ));
            }
            OpSyntax::While
        } else if r.operand_types.is_some() {
            if r.region_open {
                return Err(self.err(
                    l.text
                        .trim_end()
                        .get(l.text.trim_end().len() - 1..)
                        .unwrap_or(l.text),
                    "an op with a `: (types) -> types` signature cannot open a region",
                ));
            }
            if r.result_types.is_none() {
                return Err(Diagnostic::at(
                    self.src,
                    l.offset + l.text.trim_end().len(),
                    "expected `->` and the result types",
                ));
            }
            OpSyntax::Plain
        } else if r.region_open && r.result_types.is_some() {
            OpSyntax::Regions
        } else {
            return Err(Diagnostic::at(
                self.src,
                l.offset + l.text.trim_end().len(),
                "expected ` : (operand types) -> result types`",
            )
            .with_hint(
                "an op line reads `(%0) = \"dialect.op\" (%1, %2) {attrs} : (types) -> types`",
            ));
        };

        // Operands.
        // Scratch vectors kept across ops: no allocation per op.
        let mut vals = std::mem::take(&mut self.vals);
        vals.clear();
        for o in operands {
            match o.value {
                None => vals.push(None),
                Some(name) => {
                    let v = if name.starts_with("%arg_") || name.starts_with("%kwarg_") {
                        names.named.get(name).copied()
                    } else {
                        let n = self.value_number(name)?;
                        names.get_num(n)
                    };
                    match v {
                        Some(v) => vals.push(Some(v)),
                        None => {
                            return Err(self.err(name, format!("unknown value {name}")).with_hint(
                                "a value must be defined on an earlier line before it is used",
                            ))
                        }
                    }
                }
            }
        }

        // Operand types: check against the values' types, and learn types not printed where
        // a value is defined (keyword and block arguments, while results).
        if let Some((s, e)) = r.operand_types {
            let tys = &c.types[s as usize..e as usize];
            if tys.len() != vals.len() {
                let at = tys.first().copied().unwrap_or(l.text);
                return Err(self.err(
                    at,
                    format!("{} operand types for {} operands", tys.len(), vals.len()),
                ));
            }
            for (i, (&t, &v)) in tys.iter().zip(&vals).enumerate() {
                let tid = self.chunk_type(&c, s as usize + i)?;
                match v {
                    None => {
                        if tid != Context::NULL_TYPE {
                            return Err(self
                                .err(
                                    t,
                                    format!("operand {i} is <<NULL VALUE>> but its type is {t}"),
                                )
                                .with_hint("an absent operand has type <<NULL TYPE>>"));
                        }
                    }
                    Some(v) => {
                        let have = prog.value_type(v);
                        if have == Context::UNKNOWN_TYPE {
                            prog.set_value_type(v, tid);
                        } else if have != tid {
                            let name = operands[i].value.unwrap_or("");
                            return Err(self.err(
                                t,
                                format!(
                                    "type mismatch: {name} has type {} but is used here as {t}",
                                    self.ctx.type_text(have)
                                ),
                            ));
                        }
                    }
                }
            }
        }

        // Result types.
        let mut rtys = std::mem::take(&mut self.rtys);
        rtys.clear();
        match r.result_types {
            Some((s, e)) => {
                let tys = &c.types[s as usize..e as usize];
                if tys.len() != results.len() {
                    let at = tys.first().copied().unwrap_or(l.text);
                    return Err(self.err(
                        at,
                        format!("{} result types for {} results", tys.len(), results.len()),
                    ));
                }
                for i in s..e {
                    rtys.push(self.chunk_type(&c, i as usize)?);
                }
            }
            None => rtys.resize(results.len(), Context::UNKNOWN_TYPE),
        }

        let name = self.ctx.sym(r.name);
        let attrs = match r.attrs {
            Some(i) => self.chunk_attrs(&mut c.dict_list, i as usize),
            None => Context::EMPTY_ATTRS,
        };
        let op = prog.create_op(name, attrs, &vals, &rtys, syntax);
        self.vals = vals;
        self.rtys = rtys;
        prog.append(block, op);
        prog.set_position(op, l.offset);
        for (i, &res) in results.iter().enumerate() {
            let n = self.value_number(res)?;
            if !names.define_num(n, prog.result(op, i)) {
                return Err(self
                    .err(res, format!("duplicate definition of {res}"))
                    .with_hint("every value is defined once"));
            }
        }
        self.cur = c;
        Ok((op, r.region_open))
    }

    fn value_number(&self, name: &str) -> Result<u64, Diagnostic> {
        name[1..]
            .parse::<u64>()
            .ok()
            .filter(|&n| n < u32::MAX as u64)
            .ok_or_else(|| self.err(name, format!("value number {name} is too large")))
    }

    /// Interns the dictionary written `text`, parsing it unless the same text was seen before.
    fn attrs(&mut self, text: &'a str) -> Result<AttrId, Diagnostic> {
        if let Some(&id) = self.attr_cache.get(text) {
            return Ok(id);
        }
        let dict = parse_dict_text(self.src, text)?;
        let id = self.ctx.intern_attrs(dict);
        self.attr_cache.insert(text, id);
        Ok(id)
    }

    /// The global id of the chunk's dictionary `i` (parsed in the parallel phase).
    fn chunk_attrs(&mut self, dicts: &mut [ChunkDict], i: usize) -> AttrId {
        let id = self.chunk_attrs[i];
        if id.0 != UNRESOLVED {
            return id;
        }
        // Interned by structure, not looked up by text in a file-wide cache: comparing with
        // text seen chunks ago would read back pages of a mapped file already released.
        let dict = dicts[i].dict.take().unwrap_or_default();
        let id = self.ctx.intern_attrs(dict);
        self.chunk_attrs[i] = id;
        id
    }

    /// The global type of entry `i` of chunk `c`'s `types`.
    fn chunk_type(&mut self, c: &RawChunk<'a>, i: usize) -> Result<TypeId, Diagnostic> {
        let local = c.type_ids[i] as usize;
        let id = self.chunk_types[local];
        if id.0 != UNRESOLVED {
            return Ok(id);
        }
        let id = self.ty(c.types[i])?;
        self.chunk_types[local] = id;
        Ok(id)
    }

    fn ty(&mut self, text: &'a str) -> Result<TypeId, Diagnostic> {
        if let Some(&id) = self.type_cache.get(text) {
            return Ok(id);
        }
        let pairs = PirParser::parse(Rule::type_full, text)
            .map_err(|_| self.err(text, format!("malformed type `{text}`")))?;
        let Some(p) = pairs.flatten().find(|p| p.as_rule() == Rule::ty) else {
            return Err(self.err(text, format!("malformed type `{text}`")));
        };
        let ty = self.type_of(p)?;
        let id = self.ctx.intern_type(ty);
        self.type_cache.insert(text, id);
        Ok(id)
    }

    fn type_of(&mut self, ty: Pair<'a, Rule>) -> Result<Type, Diagnostic> {
        let text = ty.as_str();
        let Some(p) = ty.into_inner().next() else {
            return Err(self.err(text, format!("malformed type `{text}`")));
        };
        Ok(match p.as_rule() {
            Rule::null_type => Type::Null,
            Rule::vec_type => {
                let mut items = Vec::new();
                for q in p.into_inner() {
                    let t = self.type_of(q)?;
                    items.push(self.ctx.intern_type(t));
                }
                Type::Vec(items)
            }
            Rule::tensor_type | Rule::dist_type => {
                let dist = p.as_rule() == Rule::dist_type;
                let mut shape = Vec::new();
                let mut dtype = None;
                let mut dist_attr = None;
                for q in p.into_inner() {
                    match q.as_rule() {
                        Rule::dim => shape.push(q.as_str().parse::<i64>().map_err(|_| self.err(q.as_str(), format!("dimension {} is too large", q.as_str())))?),
                        Rule::dtype => {
                            dtype = Some(DType::from_short_name(q.as_str()).ok_or_else(|| {
                                self.err(q.as_str(), format!("unknown element type `{}`", q.as_str()))
                                    .with_hint("element types are f32, f64, f16, bf16, i64, i32, i16, i8, ui8, b, c64, c128")
                            })?)
                        }
                        Rule::tensor_dist => {
                            dist_attr = Some(tensor_dist(q).map_err(|at| {
                                self.err(at, format!("malformed distribution in `{text}`"))
                            })?)
                        }
                        _ => {}
                    }
                }
                let Some(dtype) = dtype else {
                    return Err(self.err(text, format!("malformed type `{text}`")));
                };
                if dist {
                    Type::Dist {
                        shape,
                        dtype,
                        dist: dist_attr.unwrap_or_default(),
                    }
                } else {
                    Type::Tensor { shape, dtype }
                }
            }
            _ => Type::Opaque(p.as_str().to_string()),
        })
    }
}

// ---- attribute dictionaries ---------------------------------------------------------------

fn err_at(src: &SourceFile, at: &str, msg: impl Into<String>) -> Diagnostic {
    let offset = (at.as_ptr() as usize).wrapping_sub(src.text.as_ptr() as usize);
    Diagnostic::at(src, offset.min(src.text.len()), msg)
}

/// Parses one dictionary (`{k:v,...}`, a slice of `src`) into an [`AttrDict`].
fn parse_dict_text(src: &SourceFile, text: &str) -> Result<AttrDict, Diagnostic> {
    let pairs = PirParser::parse(Rule::attr_dict_full, text).map_err(|e| {
        let pos = match e.location {
            pest::error::InputLocation::Pos(p) => p,
            pest::error::InputLocation::Span((s, _)) => s,
        };
        err_at(
            src,
            &text[pos.min(text.len())..],
            "malformed attribute dictionary",
        )
    })?;
    match pairs.flatten().find(|p| p.as_rule() == Rule::dict) {
        Some(p) => dict(src, p),
        None => Ok(AttrDict::default()),
    }
}

fn dict(src: &SourceFile, p: Pair<'_, Rule>) -> Result<AttrDict, Diagnostic> {
    let mut d = AttrDict::default();
    for entry in p.into_inner() {
        let mut it = entry.into_inner();
        let (Some(k), Some(v)) = (it.next(), it.next()) else {
            continue;
        };
        if d.contains_key(k.as_str()) {
            return Err(err_at(
                src,
                k.as_str(),
                format!("duplicate attribute `{}`", k.as_str()),
            ));
        }
        let value = attr_value(src, v)?;
        d.push(k.as_str(), value);
    }
    Ok(d)
}

fn attr_value(src: &SourceFile, p: Pair<'_, Rule>) -> Result<Attr, Diagnostic> {
    let s = p.as_str();
    Ok(match p.as_rule() {
        Rule::dict => Attr::Dict(dict(src, p)?),
        Rule::op_dist => Attr::OpDist(Box::new(
            op_dist(p).map_err(|at| err_at(src, at, "malformed op_dist_attr"))?,
        )),
        Rule::array => Attr::Array(
            p.into_inner()
                .map(|q| attr_value(src, q))
                .collect::<Result<_, _>>()?,
        ),
        Rule::string => Attr::Str(s[1..s.len() - 1].into()),
        Rule::number => {
            let is_int = !s.contains(['.', 'e', 'E', 'i', 'n']);
            if is_int {
                match s.parse::<i64>() {
                    Ok(i) if i.to_string() == s => Attr::Int(i),
                    Ok(i) => Attr::Float {
                        value: i as f64,
                        text: s.into(),
                    },
                    Err(_) => {
                        return Err(err_at(
                            src,
                            s,
                            format!("integer {s} does not fit in 64 bits"),
                        ))
                    }
                }
            } else {
                let value = s
                    .parse::<f64>()
                    .map_err(|_| err_at(src, s, format!("malformed number {s}")))?;
                Attr::Float {
                    value,
                    text: s.into(),
                }
            }
        }
        Rule::word => match s {
            "true" => Attr::Bool(true),
            "false" => Attr::Bool(false),
            _ => Attr::Word(s.into()),
        },
        _ => Attr::Word(s.into()),
    })
}

// ---- distribution attributes ------------------------------------------------------------

/// An integer of the distribution grammar; the error is the text it failed at.
fn dist_int(p: Pair<'_, Rule>) -> Result<i64, &str> {
    p.as_str().parse().map_err(|_| p.as_str())
}

fn int_list(p: Pair<'_, Rule>) -> Result<Vec<i64>, &str> {
    p.into_inner().map(dist_int).collect()
}

/// `mesh_shape:[..],process_ids:[..],dims_mappings:[..], partial(..), placements:[..]`.
fn tensor_dist(p: Pair<'_, Rule>) -> Result<TensorDist, &str> {
    let mut lists = Vec::with_capacity(3);
    let mut t = TensorDist::default();
    for q in p.into_inner() {
        match q.as_rule() {
            Rule::int_list => lists.push(int_list(q)?),
            Rule::partial_status => {
                let mut it = q.into_inner();
                let (Some(dim), Some(r)) = (it.next(), it.next()) else {
                    continue;
                };
                t.partial
                    .push((dist_int(dim)?, ReduceKind::from_name(r.as_str())));
            }
            Rule::placements => {
                t.placements = Some(
                    q.into_inner()
                        .map(|x| Placement::parse(x.as_str()))
                        .collect(),
                )
            }
            _ => {}
        }
    }
    let mut lists = lists.into_iter();
    t.mesh_shape = lists.next().unwrap_or_default();
    t.process_ids = lists.next().unwrap_or_default();
    t.dims_mapping = lists.next().unwrap_or_default();
    Ok(t)
}

fn dist_slot_value(p: Pair<'_, Rule>) -> Result<DistSlot, &str> {
    match p.as_rule() {
        Rule::attr_null => Ok(DistSlot::Null),
        Rule::tensor_dist => Ok(DistSlot::Tensor(tensor_dist(p)?)),
        _ => Err(p.as_str()),
    }
}

/// `{mesh:{shape:[..],process_ids:[..]},operand(0):{..},result(0):{..},chunk_id:-1}`. Slots
/// must be numbered densely, operands before results, as Paddle prints them.
fn op_dist(p: Pair<'_, Rule>) -> Result<OpDistAttr, &str> {
    let mut a = OpDistAttr {
        mesh_shape: Vec::new(),
        process_ids: Vec::new(),
        operands: Vec::new(),
        results: Vec::new(),
        chunk_id: -1,
    };
    let mut lists = 0;
    for q in p.into_inner() {
        match q.as_rule() {
            Rule::int_list if lists == 0 => {
                a.mesh_shape = int_list(q)?;
                lists = 1;
            }
            Rule::int_list => a.process_ids = int_list(q)?,
            Rule::dist_slot => {
                let at = q.as_str();
                let mut it = q.into_inner();
                let (Some(kind), Some(index), Some(value)) = (it.next(), it.next(), it.next())
                else {
                    return Err(at);
                };
                let value = if value.as_str().starts_with('[') {
                    DistSlot::Array(
                        value
                            .into_inner()
                            .map(dist_slot_value)
                            .collect::<Result<_, _>>()?,
                    )
                } else {
                    dist_slot_value(value.into_inner().next().ok_or(at)?)?
                };
                let slots = if kind.as_str() == "operand" {
                    if !a.results.is_empty() {
                        return Err(at);
                    }
                    &mut a.operands
                } else {
                    &mut a.results
                };
                if dist_int(index)? != slots.len() as i64 {
                    return Err(at);
                }
                slots.push(value);
            }
            Rule::int => a.chunk_id = dist_int(q)?,
            _ => {}
        }
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_simd_scan_stops_at_exactly_the_table_bytes() {
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
