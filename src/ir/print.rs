//! Printing a [`Module`] in Paddle's text form.
//!
//! The output is exactly what Paddle's `print(program)` gives: results are numbered `%0, %1, ...`
//! densely in print order (so a parsed dump prints back byte for byte, and a rewritten program
//! is renumbered the way Paddle would number it), attribute dictionaries and types are copied
//! from the text cached in the [`Context`], and floats keep the text they were written with.
//!
//! Printing is one linear pass writing into a `String`; [`print_module_to`] streams that string
//! to a writer a megabyte at a time, so a large program's text never exists whole in memory.
//!
//! Dictionaries are stored as value indices, not text (see `attr_store`), and formatting one
//! costs about as much as the rest of its op line. Most ops share their dictionary with others,
//! so a dictionary met a second time is formatted once more into [`DictTexts`] and copied from
//! there afterwards; a dictionary printed once (a parameter's, which holds its name) is never
//! kept, so the cache holds only the shared ones.

use super::program::{BlockId, OpId, OpSyntax, Program, ValueDef, ValueId};
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
    let mut pr = Printer {
        ctx,
        p,
        out,
        sink,
        dicts,
        names: vec![u32::MAX; p.value_capacity()],
        next: 0,
        next_arg: 0,
    };
    pr.out.push_str("{\n");
    pr.block(p.top_block(), 1);
    pr.out.push_str("}\n");
}

struct Printer<'a, 'w> {
    ctx: &'a Context,
    p: &'a Program,
    out: &'a mut String,
    sink: &'a mut Sink<'w>,
    dicts: &'a mut DictTexts,
    /// Print number of each value (`%N`, or `%arg_N` for block arguments).
    names: Vec<u32>,
    next: u32,
    next_arg: u32,
}

impl Printer<'_, '_> {
    fn indent(&mut self, depth: usize) {
        for _ in 0..depth {
            self.out.push_str("    ");
        }
    }

    fn block(&mut self, b: BlockId, depth: usize) {
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
                self.names[a.value.index()] = self.next_arg;
                let _ = write!(self.out, "%arg_{}", self.next_arg);
                self.next_arg += 1;
                self.out.push(' ');
                self.dicts.write(self.ctx, a.attrs, self.out);
            }
            self.out.push('\n');
        }
        for op in p.block_ops(b) {
            self.op(op, depth);
            if self.out.len() >= FLUSH_AT {
                self.sink.flush(self.out);
            }
        }
    }

    fn value(&mut self, v: ValueId) {
        match self.p.value_def(v) {
            ValueDef::Result { .. } => {
                let n = self.names[v.index()];
                if n == u32::MAX {
                    // A use before its definition: only in a program that fails verification.
                    let _ = write!(self.out, "%<undefined:{}>", v.0);
                } else {
                    self.out.push('%');
                    push_u32(self.out, n);
                }
            }
            ValueDef::Arg { .. } => {
                let _ = write!(self.out, "%arg_{}", self.names[v.index()]);
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
        for (i, r) in p.results(op).enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.names[r.index()] = self.next;
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
