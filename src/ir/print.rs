//! Printing a [`Module`] in Paddle's text form.
//!
//! The output is exactly what Paddle's `print(program)` gives: results are numbered `%0, %1, ...`
//! densely in print order (so a parsed dump prints back byte for byte, and a rewritten program
//! is renumbered the way Paddle would number it), attribute dictionaries and types are copied
//! from the text cached in the [`Context`], and floats keep the text they were written with.
//!
//! Printing is linear. Every value's number is fixed first ([`Numbering`], a walk that only
//! counts); the top block's ops are then printed in chunks, on worker threads when there are
//! several chunks and cores, and the chunks are put together in order on the calling thread.
//! [`print_module_to`] streams the text to a writer a megabyte at a time, and workers run at
//! most a few chunks ahead of it, so a large program's text never exists whole in memory.
//!
//! Dictionaries are stored as value indices, not text (see `attr_store`), and formatting one
//! costs about as much as the rest of its op line. Most ops share their dictionary with others,
//! so a dictionary met a second time is formatted once more into [`DictTexts`] and copied from
//! there afterwards; a dictionary printed once (a parameter's, which holds its name) is never
//! kept, so the cache holds only the shared ones.

use super::program::{BlockId, OpId, OpSyntax, Program, ValueDef, ValueId};
use super::window::{worker_threads, StopOnDrop, Window};
use super::{AttrId, Context, Module};
use std::fmt::Write;

/// Prints a whole module: main, then `startup { ... }` if present, then trailing blank lines.
pub fn print_module(m: &Module) -> String {
    let mut out = String::with_capacity(estimate(&m.main) + m.startup.as_ref().map_or(0, estimate));
    let mut sink = Sink::Memory;
    print_module_into(m, &mut out, &mut sink);
    out
}

/// Prints one program as a bare `{ ... }` (the way Paddle dumps it).
pub fn print_program(ctx: &Context, p: &Program) -> String {
    let mut out = String::with_capacity(estimate(p));
    let mut dicts = DictTexts::new(ctx);
    print_program_into(ctx, p, &mut out, &mut Sink::Memory, &mut dicts);
    out
}

/// [`print_module`] written to `w` as it is printed; returns the number of bytes written.
pub fn print_module_to(m: &Module, w: &mut dyn std::io::Write) -> std::io::Result<u64> {
    print_streamed(w, |out, sink| print_module_into(m, out, sink))
}

/// [`print_program`] written to `w` as it is printed; returns the number of bytes written.
pub fn print_program_to(
    ctx: &Context,
    p: &Program,
    w: &mut dyn std::io::Write,
) -> std::io::Result<u64> {
    print_streamed(w, |out, sink| {
        print_program_into(ctx, p, out, sink, &mut DictTexts::new(ctx))
    })
}

/// Runs `print` with a buffer that is handed to `w` a megabyte at a time, then the rest.
fn print_streamed(
    w: &mut dyn std::io::Write,
    print: impl FnOnce(&mut String, &mut Sink<'_>),
) -> std::io::Result<u64> {
    let mut out = String::with_capacity(2 * FLUSH_AT);
    let mut sink = Sink::Writer {
        w,
        written: 0,
        error: None,
    };
    print(&mut out, &mut sink);
    sink.flush(&mut out);
    sink.finish()
}

fn print_module_into(m: &Module, out: &mut String, sink: &mut Sink<'_>) {
    let mut dicts = DictTexts::new(&m.ctx);
    print_program_into(&m.ctx, &m.main, out, sink, &mut dicts);
    if let Some(s) = &m.startup {
        out.push_str("startup ");
        print_program_into(&m.ctx, s, out, sink, &mut dicts);
    }
    out.push_str(&m.trailing);
}

/// The printed text is handed to the writer whenever this much has accumulated.
const FLUSH_AT: usize = 1 << 20;

/// Where printed text goes: it stays in the string, or is written out and the string reused.
enum Sink<'w> {
    Memory,
    Writer {
        w: &'w mut dyn std::io::Write,
        written: u64,
        /// The first write error; printing goes on without writing.
        error: Option<std::io::Error>,
    },
}

impl Sink<'_> {
    fn flush(&mut self, out: &mut String) {
        if let Sink::Writer { w, written, error } = self {
            if error.is_none() {
                match w.write_all(out.as_bytes()) {
                    Ok(()) => *written += out.len() as u64,
                    Err(e) => *error = Some(e),
                }
            }
            out.clear();
        }
    }

    /// Adds `text` after `out`: onto it in memory, else written (what `out` holds first)
    /// without being copied.
    fn append(&mut self, out: &mut String, text: &str) {
        match self {
            Sink::Memory => out.push_str(text),
            Sink::Writer { w, written, error } => {
                if !out.is_empty() {
                    self.flush(out);
                    return self.append(out, text);
                }
                if error.is_none() {
                    match w.write_all(text.as_bytes()) {
                        Ok(()) => *written += text.len() as u64,
                        Err(e) => *error = Some(e),
                    }
                }
            }
        }
    }

    fn finish(self) -> std::io::Result<u64> {
        match self {
            Sink::Memory => Ok(0),
            Sink::Writer { w, written, error } => match error {
                Some(e) => Err(e),
                None => w.flush().map(|_| written),
            },
        }
    }
}

fn estimate(p: &Program) -> usize {
    p.num_ops() * 200 + 16
}

/// The printed text of the dictionaries met more than once (see the module doc).
struct DictTexts {
    /// Per dictionary id: 0 not printed yet, 1 printed once, `n + 2` cached as `spans[n]`.
    state: Vec<u32>,
    spans: Vec<(usize, usize)>,
    text: String,
}

impl DictTexts {
    fn new(ctx: &Context) -> Self {
        DictTexts {
            state: vec![0; ctx.interned_counts().1],
            spans: Vec::new(),
            text: String::new(),
        }
    }

    /// Writes dictionary `id` onto `out`.
    fn write(&mut self, ctx: &Context, id: AttrId, out: &mut String) {
        let Some(state) = self.state.get_mut(id.0 as usize) else {
            // Interned after the printer started: not possible while it borrows the context,
            // but printing it uncached is right anyway.
            ctx.write_attrs(id, out);
            return;
        };
        match *state {
            0 => {
                *state = 1;
                ctx.write_attrs(id, out);
            }
            1 => {
                let start = out.len();
                ctx.write_attrs(id, out);
                let from = self.text.len();
                self.text.push_str(&out[start..]);
                self.spans.push((from, self.text.len()));
                *state = u32::try_from(self.spans.len() + 1).unwrap_or(u32::MAX);
            }
            n => {
                let (a, b) = self.spans[n as usize - 2];
                out.push_str(&self.text[a..b]);
            }
        }
    }
}

fn print_program_into(
    ctx: &Context,
    p: &Program,
    out: &mut String,
    sink: &mut Sink<'_>,
    dicts: &mut DictTexts,
) {
    let numbering = Numbering::of(p);
    let mut pr = Printer {
        ctx,
        p,
        out,
        sink,
        dicts,
        names: &numbering.names,
        next: 0,
        next_arg: 0,
    };
    pr.out.push_str("{\n");
    pr.block_header(p.top_block(), 1);
    if numbering.chunks.len() < 2 || worker_threads() < 2 {
        for op in p.block_ops(p.top_block()) {
            pr.top_op(op);
        }
    } else {
        pr.chunks_in_parallel(&numbering.chunks);
    }
    pr.out.push_str("}\n");
}

/// Top-level ops per chunk printed by one worker thread.
const CHUNK_OPS: usize = 2048;

/// How many chunks the workers may print ahead of the one being written (see [`Window`]).
const CHUNKS_AHEAD: usize = 8;

/// The print number of every value, fixed before anything is printed so that chunks of the top
/// block can be printed on several threads: results are numbered `%0, %1, ...` and block
/// arguments `%arg_0, ...`, each in print order.
struct Numbering {
    names: Vec<u32>,
    chunks: Vec<Chunk>,
}

/// A run of at most [`CHUNK_OPS`] ops of the top block, with the numbers of the results and
/// block arguments printed before it.
struct Chunk {
    first: OpId,
    ops: usize,
    next: u32,
    next_arg: u32,
}

impl Numbering {
    fn of(p: &Program) -> Numbering {
        let mut n = Numbering {
            names: vec![u32::MAX; p.value_capacity()],
            chunks: Vec::new(),
        };
        let (mut next, mut next_arg) = (0, 0);
        let top = p.top_block();
        n.args(p, top, &mut next_arg);
        for op in p.block_ops(top) {
            match n.chunks.last_mut() {
                Some(c) if c.ops < CHUNK_OPS => c.ops += 1,
                _ => n.chunks.push(Chunk {
                    first: op,
                    ops: 1,
                    next,
                    next_arg,
                }),
            }
            n.op(p, op, &mut next, &mut next_arg);
        }
        n
    }

    fn args(&mut self, p: &Program, b: BlockId, next_arg: &mut u32) {
        for a in p.block_args(b) {
            self.names[a.value.index()] = *next_arg;
            *next_arg += 1;
        }
    }

    fn op(&mut self, p: &Program, op: OpId, next: &mut u32, next_arg: &mut u32) {
        for r in p.results(op) {
            self.names[r.index()] = *next;
            *next += 1;
        }
        for &r in p.regions(op) {
            for &b in p.region_blocks(r) {
                self.args(p, b, next_arg);
                for inner in p.block_ops(b) {
                    self.op(p, inner, next, next_arg);
                }
            }
        }
    }
}

struct Printer<'a, 'w> {
    ctx: &'a Context,
    p: &'a Program,
    out: &'a mut String,
    sink: &'a mut Sink<'w>,
    dicts: &'a mut DictTexts,
    /// Print number of each value (`%N`, or `%arg_N` for block arguments): [`Numbering`].
    names: &'a [u32],
    /// The numbers the next result and block argument printed get. A value whose number is
    /// not below them has not been printed yet: a use before its definition, which only a
    /// program that fails verification has.
    next: u32,
    next_arg: u32,
}

impl Printer<'_, '_> {
    fn indent(&mut self, depth: usize) {
        for _ in 0..depth {
            self.out.push_str("    ");
        }
    }

    /// Prints one op of the top block, handing the text to the sink when enough accumulated.
    fn top_op(&mut self, op: OpId) {
        self.op(op, 1);
        if self.out.len() >= FLUSH_AT {
            self.sink.flush(self.out);
        }
    }

    /// Prints the top block's ops chunk by chunk on worker threads, and hands the chunks to the
    /// sink in order.
    fn chunks_in_parallel(&mut self, chunks: &[Chunk]) {
        let (ctx, p, names) = (self.ctx, self.p, self.names);
        let next_chunk = std::sync::atomic::AtomicUsize::new(0);
        let window = Window::new(CHUNKS_AHEAD);
        std::thread::scope(|scope| {
            let (tx, rx) = std::sync::mpsc::channel();
            for _ in 0..worker_threads() {
                let tx = tx.clone();
                let (next_chunk, window) = (&next_chunk, &window);
                scope.spawn(move || {
                    let mut dicts = DictTexts::new(ctx);
                    loop {
                        let i = next_chunk.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(c) = chunks.get(i) else { break };
                        if !window.wait_for(i) {
                            break;
                        }
                        let mut out = String::with_capacity(c.ops * 200);
                        let mut pr = Printer {
                            ctx,
                            p,
                            out: &mut out,
                            sink: &mut Sink::Memory,
                            dicts: &mut dicts,
                            names,
                            next: c.next,
                            next_arg: c.next_arg,
                        };
                        let mut op = Some(c.first);
                        for _ in 0..c.ops {
                            let Some(o) = op else { break };
                            pr.op(o, 1);
                            op = p.next_op(o);
                        }
                        if tx.send((i, out)).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(tx);
            let _stop = StopOnDrop(&window);
            let mut early = rustc_hash::FxHashMap::default();
            for i in 0..chunks.len() {
                let text = match early.remove(&i) {
                    Some(t) => t,
                    None => loop {
                        // A worker sends every chunk it takes; all chunks are taken.
                        let Ok((j, t)) = rx.recv() else { return };
                        if j == i {
                            break t;
                        }
                        early.insert(j, t);
                    },
                };
                window.set_taken(i + 1);
                self.sink.append(self.out, &text);
            }
        });
    }

    fn block(&mut self, b: BlockId, depth: usize) {
        self.block_header(b, depth);
        for op in self.p.block_ops(b) {
            self.op(op, depth);
            if self.out.len() >= FLUSH_AT {
                self.sink.flush(self.out);
            }
        }
    }

    /// A block's keyword arguments and arguments.
    fn block_header(&mut self, b: BlockId, depth: usize) {
        let p = self.p;
        let kwargs = p.block_kwargs(b);
        if !kwargs.is_empty() {
            self.indent(depth);
            self.out.push_str("^kw:\n");
            for k in kwargs {
                self.indent(depth + 1);
                self.out.push_str("%kwarg_");
                self.out.push_str(self.ctx.str(k.name));
                self.out.push(' ');
                self.dicts.write(self.ctx, k.attrs, self.out);
                self.out.push('\n');
            }
        }
        let args = p.block_args(b);
        if !args.is_empty() {
            self.indent(depth.saturating_sub(1).max(1));
            self.out.push('^');
            for (i, a) in args.iter().enumerate() {
                if i > 0 {
                    self.out.push_str(", ");
                }
                let _ = write!(self.out, "%arg_{}", self.next_arg);
                self.next_arg += 1;
                self.out.push(' ');
                self.dicts.write(self.ctx, a.attrs, self.out);
            }
            self.out.push('\n');
        }
    }

    fn value(&mut self, v: ValueId) {
        match self.p.value_def(v) {
            ValueDef::Result { .. } => {
                let n = self.names[v.index()];
                if n >= self.next {
                    // A use before its definition: only in a program that fails verification.
                    let _ = write!(self.out, "%<undefined:{}>", v.0);
                } else {
                    self.out.push('%');
                    push_u32(self.out, n);
                }
            }
            ValueDef::Arg { .. } => {
                let n = self.names[v.index()];
                // An argument of a block not printed yet shows the number no value has.
                let n = if n < self.next_arg { n } else { u32::MAX };
                let _ = write!(self.out, "%arg_{n}");
            }
            ValueDef::Kwarg { block, index } => {
                self.out.push_str("%kwarg_");
                let k = &self.p.block_kwargs(block)[index as usize];
                self.out.push_str(self.ctx.str(k.name));
            }
        }
    }

    fn operand_list(&mut self, op: OpId, syntax: OpSyntax) {
        self.out.push('(');
        for (i, v) in self.p.operands(op).enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            if syntax == OpSyntax::While {
                match i {
                    0 => self.out.push_str("cond="),
                    1 => self.out.push_str("inputs="),
                    _ => {}
                }
            }
            match v {
                Some(v) => self.value(v),
                None => self.out.push_str("<<NULL VALUE>>"),
            }
        }
        self.out.push(')');
    }

    fn op(&mut self, op: OpId, depth: usize) {
        let p = self.p;
        let d = p.op(op);
        self.indent(depth);
        self.out.push('(');
        for i in 0..p.num_results(op) {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.out.push('%');
            push_u32(self.out, self.next);
            self.next += 1;
        }
        self.out.push_str(") = \"");
        self.out.push_str(self.ctx.str(d.name));
        self.out.push_str("\" ");
        self.operand_list(op, d.syntax());
        match d.syntax() {
            OpSyntax::Plain => {
                self.out.push(' ');
                self.dicts.write(self.ctx, d.attrs, self.out);
                self.out.push_str(" : (");
                for (i, v) in p.operands(op).enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    let t = v.map_or(Context::NULL_TYPE, |v| p.value_type(v));
                    self.out.push_str(self.ctx.type_text(t));
                }
                self.out.push_str(") -> ");
                self.result_types(op);
                self.out.push('\n');
            }
            OpSyntax::Regions => {
                self.out.push(' ');
                self.dicts.write(self.ctx, d.attrs, self.out);
                self.out.push_str(" -> ");
                self.result_types(op);
                self.out.push_str(" {\n");
                for (i, &r) in p.regions(op).iter().enumerate() {
                    if i > 0 {
                        self.indent(depth);
                        self.out.push_str("} else {\n");
                    }
                    for &b in p.region_blocks(r) {
                        self.block(b, depth + 1);
                    }
                }
                self.indent(depth);
                self.out.push_str("}\n");
            }
            OpSyntax::While => {
                self.out.push_str(" { \n");
                for &r in p.regions(op) {
                    for &b in p.region_blocks(r) {
                        self.block(b, depth + 1);
                    }
                }
                self.indent(depth);
                self.out.push_str("}\n");
            }
        }
    }

    fn result_types(&mut self, op: OpId) {
        for (i, r) in self.p.results(op).enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.out.push_str(self.ctx.type_text(self.p.value_type(r)));
        }
    }
}

fn push_u32(out: &mut String, n: u32) {
    push_decimal(out, u64::from(n));
}

/// Writes `n` in decimal (as `{n}` formats it) onto `out`. Value numbers and integer
/// attributes are most of the numbers printed, and going through `fmt` or pushing digit by
/// digit costs several times the digits themselves.
pub(super) fn push_decimal(out: &mut String, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // ASCII digits: validating at most 20 of them costs next to nothing, and keeps this safe.
    if let Ok(digits) = std::str::from_utf8(&buf[i..]) {
        out.push_str(digits);
    }
}
