//! Printing a [`Module`] in Paddle's text form.
//!
//! The output is exactly what Paddle's `print(program)` gives: results are numbered `%0, %1, ...`
//! densely in print order (so a parsed dump prints back byte for byte, and a rewritten program
//! is renumbered the way Paddle would number it), attribute dictionaries and types are copied
//! from the text cached in the [`Context`], and floats keep the text they were written with.
//!
//! Printing is one linear pass writing into a `String`; [`print_module_to`] streams that string
//! to a writer a megabyte at a time, so a large program's text never exists whole in memory.

use super::program::{BlockId, OpId, OpSyntax, Program, ValueDef, ValueId};
use super::{Context, Module};
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
    print_program_into(ctx, p, &mut out, &mut Sink::Memory);
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
    print_streamed(w, |out, sink| print_program_into(ctx, p, out, sink))
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
    print_program_into(&m.ctx, &m.main, out, sink);
    if let Some(s) = &m.startup {
        out.push_str("startup ");
        print_program_into(&m.ctx, s, out, sink);
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

fn print_program_into(ctx: &Context, p: &Program, out: &mut String, sink: &mut Sink<'_>) {
    let mut pr = Printer {
        ctx,
        p,
        out,
        sink,
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
                self.ctx.write_attrs(k.attrs, self.out);
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
                self.ctx.write_attrs(a.attrs, self.out);
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
                self.ctx.write_attrs(d.attrs, self.out);
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
                self.ctx.write_attrs(d.attrs, self.out);
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

fn push_u32(out: &mut String, mut n: u32) {
    let mut buf = [0u8; 10];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // The bytes are ASCII digits.
    out.push_str(std::str::from_utf8(&buf[i..]).unwrap_or("0"));
}
