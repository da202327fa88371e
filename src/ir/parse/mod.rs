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
use super::attr_store::{LocalDicts, LocalIds};
use super::dist::{DistSlot, OpDistAttr, Placement, ReduceKind, TensorDist};
use super::program::{BlockId, OpId, OpSyntax, Program, ValueId, MAX_RESULTS};
use super::types::{DType, Type, TypeId};
use super::{Context, Module};
use crate::diag::{Diagnostic, SourceFile};
use pest::iterators::Pair;
use pest::Parser as _;
use rustc_hash::FxHashMap;

mod builder;
mod errors;
mod feed;
mod lines;
mod nesting;
mod op_line;
mod values;

use builder::*;
use errors::*;
use feed::*;
use lines::*;
use nesting::*;
use op_line::*;
use values::*;

#[derive(pest_derive::Parser)]
#[grammar = "../grammar/pir.pest"]
pub(super) struct PirParser;

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
pub(super) enum Path {
    Fast,
    Reference,
}

pub(super) fn parse_module_with(src: &SourceFile, path: Path) -> Result<Module, Diagnostic> {
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

pub(super) fn trailing_blank_lines(src: &SourceFile) -> String {
    let t = &src.text;
    let end = t.trim_end_matches([' ', '\t', '\r', '\n']).len();
    // Keep what follows the final `}` line's newline.
    let after = &t[end..];
    match after.find('\n') {
        Some(i) => after[i + 1..].to_string(),
        None => String::new(),
    }
}
