//! "The bad-input corpus covers every error message irw can print", checked.
//!
//! **Messages.** Every string literal in `src/` (outside `#[cfg(test)]` modules and the unit
//! tests' own files, [`is_unit_test_file`]) that is the
//! message of an error: a literal argument of an error constructor ([`CONSTRUCTORS`]:
//! `Diagnostic::error`/`at`/`in_file`, `kbail!`, `KernelError::new`, `Failure::Usage`, the
//! modules' `err`/`err_at`/`bad`/`fail` helpers, `Err(..)`, `ok_or(..)`, `map_err(..)`), or the
//! format string of a `format!` that is such an argument. Hints and notes (`with_hint`,
//! `with_note`) are not messages. The sources are read with a small tokenizer (strings, raw
//! strings, chars, comments, brackets), not with regular expressions, so nesting and escapes are
//! handled. A message built in a variable first (`let msg = format!(..)`) is not seen: keep
//! messages at their constructor.
//!
//! **Expectations.** What the tests assert about standard error: the `CHECK-ERR`/`EXPECT`/`CHECK`
//! lines of every golden case under `tests/golden/` (the bad-input corpus included), and every
//! string literal of the integration tests (`tests/**/*.rs`) and of the unit tests that have
//! files of their own (the fragments they assert).
//!
//! **Covered.** A message is split at its `{...}` placeholders. An expectation covers it when it
//! holds two of its pieces of 6 characters or more in order (the one piece of a one-piece
//! message), or its first piece
//! when that is distinctive (two words, ten characters: `type mismatch:` asserted as
//! `type mismatch: %0 has type ...`), or when the expectation (at least 12 characters, or the
//! whole piece) lies inside its longest piece. One generic piece (`is not supported`) is not
//! enough. Messages with no literal piece of 4 characters (`"{e}"`: a
//! message passed through) are skipped.
//!
//! **Allowed.** [`ALLOW`] lists the messages no input can produce (internal invariants, checks
//! a caller already made) with the reason. An entry that matches no message, or a message the
//! corpus covers after all, fails the test: the list only shrinks.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::*;

tests![
    the_extractor_sees_what_it_should,
    every_error_message_is_exercised_by_a_test,
];

/// Calls whose literal arguments are error messages.
const CONSTRUCTORS: &[&str] = &[
    "error",
    "at",
    "in_file",
    "kbail!",
    "new",
    "Usage",
    "err",
    "err_at",
    "bad",
    "fail",
    "Err",
    "ok_or",
    "ok_or_else",
    "map_err",
];

/// Calls whose arguments are not messages even inside a constructor.
const NOT_MESSAGES: &[&str] = &["with_hint", "with_note"];

/// `(file, start of the message literal as written in the source, why no input reaches it)`.
///
/// Internal invariants (a bug if ever printed) and checks another layer always makes first.
/// Each reason names that layer; re-check it when the layer changes.
const ALLOW: &[(&str, &str, &str)] = &[
    ("src/exec/interp.rs", "writes {} tensors in place into a vector of {}", "internal: a vector kernel writes in place as many tensors as the vector it read holds"),
    // ---- the dialect's data files: compiled in (include_str!), so the only input these parse
    // errors can come from is a broken data/dialect/*.ops in the source tree; dialect::table's
    // unit tests load the shipped files ----
    ("src/dialect/data.rs", "`{name}` is patched but not defined", "internal: the compiled-in data/dialect files, which dialect::table's tests load"),
    ("src/dialect/data.rs", "`{name}`: `->` expected after the operands", "internal: the compiled-in data/dialect files, which dialect::table's tests load"),
    ("src/dialect/data.rs", "`{name}`: `}}` expected", "internal: the compiled-in data/dialect files, which dialect::table's tests load"),
    ("src/dialect/data.rs", "`(` expected", "internal: the compiled-in data/dialect files, which dialect::table's tests load"),
    ("src/dialect/data.rs", "`)` expected", "internal: the compiled-in data/dialect files, which dialect::table's tests load"),
    ("src/dialect/data.rs", "attribute `{s}`: `name: type` expected", "internal: the compiled-in data/dialect files, which dialect::table's tests load"),
    ("src/dialect/data.rs", "attribute `{name}`: type `{ty}`", "internal: the compiled-in data/dialect files, which dialect::table's tests load"),
    ("src/dialect/data.rs", "`{entry}`: {key} pairs are {form}", "internal: the compiled-in data/dialect files, which dialect::table's tests load"),
    ("src/dialect/data.rs", "`{}`: `key=value` expected at `{}`", "internal: the compiled-in data/dialect files, which dialect::table's tests load"),
    ("src/dialect/data.rs", "`{}`: unknown effect `{v}`", "internal: the compiled-in data/dialect files, which dialect::table's tests load"),
    ("src/dialect/data.rs", "`{}`: given({g}) names no attribute", "internal: the compiled-in data/dialect files, which dialect::table's tests load"),
    ("src/dialect/data.rs", "`{}`: ranks({a}={range}) is not OPERAND=LOW..HIGH of an operand", "internal: the compiled-in data/dialect files, which dialect::table's tests load"),
    ("src/dialect/data.rs", "`{}`: unknown key `{k}`", "internal: the compiled-in data/dialect files, which dialect::table's tests load"),
    ("src/dialect/data.rs", "`{}`: inplace({r}={o}) names no result/operand", "internal: the compiled-in data/dialect files, which dialect::table's tests load"),
    ("src/dialect/data.rs", "`{}`: same_shape({a}={b}) names no operand", "internal: the compiled-in data/dialect files, which dialect::table's tests load"),
    ("src/dialect/data.rs", "`{}`: unset({r}) names no result", "internal: the compiled-in data/dialect files, which dialect::table's tests load"),
    ("src/dialect/data.rs", "`{}`: shape family `{s}`", "internal: the compiled-in data/dialect files, which dialect::table's tests load"),
    // ---- control flow and region actions: checked by the verifier, the parser or the resolver ----
    ("src/exec/interp.rs", "has no condition operand", "the verifier checks a pd_op.if's operands against the dialect table (`cond`) first, and a while is written `(cond=%c, ...)`"),
    ("src/exec/interp.rs", "its region yields {} value(s) for {} result(s)", "the verifier (ir/verify.rs, region_yields) checks every pd_op.if block's cf.yield count first"),
    ("src/exec/kernels/shape.rs", "set_value: `x` has rank {rank}; Paddle's kernel takes ranks 1 to 6", "the verifier checks set_value's `x` against the dialect's ranks(x=1..6) first; the kernel keeps its check because the executor never trusts the program"),
    ("src/exec/interp.rs", "its body yields {} value(s); it must yield the condition and {} loop value(s)", "the verifier (ir/verify.rs, region_yields) checks a pd_op.while body's cf.yield count first"),
    ("src/exec/interp.rs", "has no body block", "the text parser and the JSON reader give every region exactly one block"),
    ("src/rewrite/engine/markers.rs", "`region {index} of` needs an op, found {}", "the resolver refuses a `region N of` operand that is not an op the rule bound (`%c` is a value, not an op)"),
    ("src/rewrite/engine/markers.rs", "this region has no block", "Program::add_region makes every region with its block, and the readers accept exactly one"),
    // ---- internal invariants ----
    ("src/json/write.rs", "Paddle's parameter form needs attribute", "internal: every flag the parameter form reads has a loader default in dialect::paddle_json"),
    ("src/egraph/elaborate.rs", "internal error in e-graph elaboration", "internal: elaboration of an extracted e-graph"),
    ("src/egraph/mod.rs", "the program no longer verifies after e-graph rewriting", "internal: a bug in irw or an unsound rule, reported as such"),
    ("src/ir/parse/builder.rs", "internal: op line without a parse", "internal: parser fast-path bookkeeping"),
    ("src/value/operators.rs", "internal: logical operator evaluated eagerly", "internal: `and`/`or` short-circuit before `binary`"),
    ("src/exec/kernels/collective.rs", "the executor does not run the {} reduction", "internal: reduce_kind_of and the legacy c_* names give only SUM, AVG, MAX, MIN, PRODUCT"),
    ("src/rules/eval.rs", "`exists(...)` asks about the program: it is only available in a rule", "the resolver refuses `exists` outside a rule first: nothing is bound there, so its patterns share no operand with a match"),
    // ---- the e-graph's own Rust API checks: rule files are checked by the resolver first ----
    ("src/egraph/pattern.rs", "rule `{}`: the left-hand side must be an op", "the rule parser requires an op on the left (`unexpected `=>`, expected `=``)"),
    ("src/egraph/pattern.rs", "label {} is used twice", "the resolver refuses it first (`%s` is bound twice)"),
    ("src/egraph/pattern.rs", "variable {} is not bound on the left-hand side", "the resolver refuses it first (`%y` is not bound by the left-hand side)"),
    ("src/egraph/pattern.rs", "label {} is not defined on the left-hand side", "the resolver refuses it first (`..` copies the attributes of an op the left-hand side binds)"),
    ("src/egraph/pattern.rs", "capture {} is not bound on the left-hand side", "the resolver refuses it first (`$c` is not bound)"),
    // ---- equational rules: the parser or resolver refuses first ----
    ("src/rules/resolver/equational.rs", "no pure op of the dialect table takes", "`pure`/`any` include variadic pure ops (builtin.combine), which take any number of operands"),
    ("src/rewrite/equational.rs", "phase `{}`, {program} program", "wraps e-graph errors: rule errors are refused when the rule file is loaded (equational::check), what remains is internal"),
    ("src/rules/resolver/equational.rs", "{} cannot be used in an equational rule", "constant expressions only evaluate to numbers, strings, bools, dtypes and lists"),
    ("src/rules/resolver/mod.rs", "`{}` is built by an action that failed", "a cascade, never shown: the failed action's own error is reported, and the resolver drops this one"),
    ("src/rules/resolver/expr.rs", "a faulty part of a predicate body", "a cascade, never shown: the expander reported the subterm's own error, and the resolver drops this one"),
    ("src/rules/resolver/equational.rs", "a type is not an attribute", "the resolver refuses a type in an attribute first (an attribute cannot hold a type)"),
    ("src/rules/resolver/equational.rs", "`{name}` is not captured by the left-hand side", "the resolver refuses an unbound capture first (`$d` is not bound)"),
    // ---- structural rules: the resolver or the matcher makes these impossible ----
    ("src/rewrite/engine.rs", "`{}` is not defined by an op", "the resolver requires an op binding there (`%x` is a value, not an op)"),
    ("src/rewrite/engine/actions.rs", "cannot replace an absent operand", "pattern variables never bind an absent operand (only `_` matches one) and no expression makes one"),
    ("src/rewrite/engine/actions.rs", "cannot replace by an absent operand", "pattern variables never bind an absent operand (only `_` matches one) and no expression makes one"),
    ("src/rewrite/runtime.rs", "`{name}` of an absent operand", "pattern variables never bind an absent operand (only `_` matches one) and no expression makes one"),
    ("src/rewrite/runtime.rs", "`{name}` is a value; it has no result", "the resolver refuses result fields of values first (`%x` is a value; only an op has result fields)"),
    ("src/rules/eval.rs", "stages are only known while matching a program", "outside a match a program value is refused before `in` is evaluated (`%x` is a program value)"),
    ("src/rules/eval.rs", "`uses(%v in STAGE)` needs a stage", "the resolver requires a stage name there (`uses(%v in STAGE)` restricts the count to a stage)"),
    // ---- the IR and JSON readers refuse first ----
    ("src/ir/parse/builder.rs", "an op with more than {MAX_RESULTS} results", "needs an op line of over a gigabyte"),
    ("src/ir/parse/values.rs", "malformed number {s}", "the grammar's `number` admits only what f64 parses"),
    ("src/ir/verify.rs", "duplicate keyword argument", "the text parser (duplicate definition) and the JSON reader (given twice) refuse it first"),
    ("src/ir/verify.rs", "uses {} whose type is not known", "the text parser gives a value the type of its first use; JSON values always have one"),
    ("src/json/read.rs", "an attribute entry must be an object", "an entry that is not an object has no \"N\" and is reported as such first"),
    ("src/json/write.rs", "operand {i} is not defined before this op", "json::check refuses the program first (a result of `..`, which comes later)"),
    ("src/json/write.rs", "internal error: the JSON writer produced invalid UTF-8", "every byte comes from serde_json's writer, which writes UTF-8, or from ASCII punctuation"),
    ("src/json/write.rs", "a parameter op has no operands and one result", "the verifier checks builtin.parameter's operand and result counts against the dialect table first"),
    // ---- the executor: checked by its callers ----
    ("src/exec/feed.rs", "input `{name}` has {rows} rows; rows {start}..{} were requested", "the feed's rows are checked against k·ranks·B at the data op before any micro-batch is cut"),
    ("src/exec/interp.rs", "persistable `{}` is not in the scope", "a slot is bound to a scope name only after the scope is checked to hold it"),
    ("src/exec/interp.rs", "value %{} comes from an op that did not run", "the schedule skips or refuses an op with a skipped operand before any kernel reads it"),
    ("src/exec/interp.rs", "value %{} cannot be written in place", "the alias root is read as a tensor first, which refuses any other slot"),
    ("src/exec/kernels/collective.rs", "collective `{}` is not supported by the executor", "the interpreter asks only about ops the dialect table calls collective, and each has an entry (unit test every_table_collective_has_semantics)"),
    ("src/exec/kernels/collective.rs", "ranks disagree on the gathered operand: {:?} {} vs {:?} {}", "ranks run one program on equal shards, so a gathered operand has one shape and dtype on every rank (a guard for library callers)"),
    ("src/exec/kernels/collective.rs", "ranks disagree on the gathered operand's dtype", "checked just before, with the shapes (a guard inside the copy)"),
    ("src/exec/kernels/collective.rs", "cannot split a 0-d tensor along axis 0", "reduce_scatter refuses a 0-d tensor before it splits"),
    ("src/exec/kernels/collective.rs", "rows {}..{} of a tensor with {} rows", "reduce_scatter's blocks divide axis 0 exactly, so every block is in range"),
    ("src/exec/kernels/collective.rs", "a collective needs at least one rank", "the executor always runs at least one rank"),
    ("src/exec/kernels/pool.rs", "max_pool2d_with_index: a {}x{} plane has positions past the int32 mask", "reaching it takes an input plane of 2^31 elements (8 GiB of f32 in one channel), past any test's memory"),
    ("src/gen/dist.rs", "a mesh needs at least one process", "the command line limits --dist to 1..1024 first (a guard for library callers)"),
    ("src/cli/mod.rs", "<irw gen mlp>", "the name of generated text, shown only if irw's own generator printed a program irw cannot parse"),
    ("src/exec/run.rs", "{n} ranks requested", "the command line limits --ranks to 1..1024 first (a guard for library callers)"),
    ("src/exec/tensor.rs", "shape {:?} needs {} elements, buffer has {}", "every caller sizes the buffer from the shape (feeds check the value count first)"),
];

/// A string literal with the calls enclosing it, innermost last: (name, index of the argument).
struct Literal {
    line: usize,
    /// The format string of a formatting macro (`{..}` are placeholders), not a plain string.
    text: String,
    raw: bool,
    calls: Vec<(String, usize)>,
}

impl Literal {
    /// Whether the literal is the format string of `format!`, `kbail!`, ...
    fn is_format(&self) -> bool {
        self.calls
            .iter()
            .rev()
            .find(|(n, _)| !n.is_empty())
            .is_some_and(|(n, arg)| n.ends_with('!') && *arg == 0)
    }
}

/// The source up to its `#[cfg(test)]` module (irw keeps unit tests at the end of each file).
fn without_tests(src: &str) -> &str {
    src.find("#[cfg(test)]").map_or(src, |i| &src[..i])
}

/// String literals of Rust source `src`, with their enclosing calls.
fn literals(src: &str) -> Vec<Literal> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    // One frame per open bracket: the name before a `(` (or "" for other brackets and
    // anonymous parentheses) and the number of top-level commas so far.
    let mut stack: Vec<(String, usize)> = Vec::new();
    let mut i = 0;
    // Line of byte `i`, kept up to date incrementally.
    let (mut line, mut counted) = (1, 0);
    let ident_before = |end: usize| -> String {
        let mut j = end;
        while j > 0 && b[j - 1] == b' ' {
            j -= 1;
        }
        let stop = j;
        while j > 0 && (b[j - 1].is_ascii_alphanumeric() || b[j - 1] == b'_' || b[j - 1] == b'!') {
            j -= 1;
        }
        src[j..stop].to_string()
    };
    let ident_char = |k: usize| k > 0 && (b[k - 1].is_ascii_alphanumeric() || b[k - 1] == b'_');
    while i < b.len() {
        let c = b[i];
        if src[i..].starts_with("//") {
            i = src[i..].find('\n').map_or(b.len(), |j| i + j);
            continue;
        }
        if src[i..].starts_with("/*") {
            i = src[i..].find("*/").map_or(b.len(), |j| i + j + 2);
            continue;
        }
        line += b[counted..i].iter().filter(|&&x| x == b'\n').count();
        counted = i;
        if c == b'r' && !ident_char(i) {
            let hashes = src[i + 1..].bytes().take_while(|&x| x == b'#').count();
            if b.get(i + 1 + hashes) == Some(&b'"') {
                let start = i + 2 + hashes;
                let close = format!("\"{}", "#".repeat(hashes));
                let end = src[start..].find(&close).map_or(b.len(), |j| start + j);
                out.push(Literal {
                    line,
                    text: src[start..end].to_string(),
                    raw: true,
                    calls: stack.clone(),
                });
                i = end + close.len();
                continue;
            }
        }
        if c == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            out.push(Literal {
                line,
                text: src[i + 1..j.min(b.len())].to_string(),
                raw: false,
                calls: stack.clone(),
            });
            i = j + 1;
            continue;
        }
        if c == b'\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a): skip a char literal whole.
            let rest = &src[i..];
            if let Some(end) = rest[1..].find('\'') {
                let inner = &rest[1..1 + end];
                if inner.chars().count() == 1 || inner.starts_with('\\') {
                    i += end + 2;
                    continue;
                }
            }
            i += 1;
            continue;
        }
        match c {
            b'(' => stack.push((ident_before(i), 0)),
            b'[' | b'{' => stack.push((String::new(), 0)),
            b')' | b']' | b'}' => {
                stack.pop();
            }
            b',' => {
                if let Some(top) = stack.last_mut() {
                    top.1 += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Whether a literal is an error message, by its enclosing calls.
fn is_message(l: &Literal) -> bool {
    let named: Vec<&(String, usize)> = l.calls.iter().filter(|(n, _)| !n.is_empty()).collect();
    let Some(&&(ref inner, arg)) = named.last() else {
        return false;
    };
    // In a formatting macro (`format!`, `kbail!`) only the format string is the message;
    // later arguments are values.
    if inner.ends_with('!') && arg != 0 {
        return false;
    }
    let ctx = if inner == "format!" {
        match named.len().checked_sub(2).map(|k| named[k]) {
            Some((n, _)) => n,
            None => return false,
        }
    } else {
        inner
    };
    !NOT_MESSAGES.contains(&ctx.as_str()) && CONSTRUCTORS.contains(&ctx.as_str())
}

/// The text a literal stands for (escapes resolved, `\` line continuations removed).
fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('\n') => {
                while it.peek().is_some_and(|c| c.is_whitespace()) {
                    it.next();
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// The literal pieces of a format string (split at `{...}` placeholders; `{{` is a brace).
fn pieces(fmt: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut it = fmt.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '{' if it.peek() == Some(&'{') => {
                it.next();
                out.last_mut().unwrap().push('{');
            }
            '}' if it.peek() == Some(&'}') => {
                it.next();
                out.last_mut().unwrap().push('}');
            }
            '{' => {
                for d in it.by_ref() {
                    if d == '}' {
                        break;
                    }
                }
                out.push(String::new());
            }
            _ => out.last_mut().unwrap().push(c),
        }
    }
    out.into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| p.chars().count() >= 4)
        .collect()
}

/// A plain string as one piece (when long enough to count).
fn plain(s: &str) -> Vec<String> {
    let t = s.trim();
    if t.chars().count() >= 4 {
        vec![t.to_string()]
    } else {
        vec![]
    }
}

struct Message {
    file: String,
    line: usize,
    /// As written in the source.
    source: String,
    pieces: Vec<String>,
}

fn rs_files(dir: &Path) -> Vec<PathBuf> {
    files_with_ext(dir, "rs")
}

/// A unit test module in a file of its own (`src/**/tests/*.rs`, `src/**/*_tests.rs`), or their
/// shared helpers (`src/test_support.rs`): tests of internals, which call kernels and engines
/// directly, live beside the code.
fn is_unit_test_file(path: &Path) -> bool {
    let Ok(rel) = path.strip_prefix(root().join("src")) else {
        return false;
    };
    let name = rel.file_name().unwrap_or_default().to_string_lossy();
    rel.components().any(|c| c.as_os_str() == "tests")
        || name.ends_with("_tests.rs")
        || name == "test_support.rs"
}

fn messages() -> Vec<Message> {
    let mut out = Vec::new();
    for path in rs_files(&root().join("src")) {
        if is_unit_test_file(&path) {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let file = path
            .strip_prefix(root())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        for l in literals(without_tests(&text)) {
            if !is_message(&l) {
                continue;
            }
            let unesc = if l.raw {
                l.text.clone()
            } else {
                unescape(&l.text)
            };
            out.push(Message {
                file: file.clone(),
                line: l.line,
                pieces: pieces(&unesc),
                source: l.text,
            });
        }
    }
    out
}

/// Every expectation piece of the test suite.
fn expectations() -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root().join("tests/golden")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            // Expected outputs, and the README's examples.
            if p.extension().is_some_and(|x| x == "expected" || x == "md") {
                continue;
            }
            let Ok(bytes) = std::fs::read(&p) else {
                continue;
            };
            // The header: a case's embedded files (`//--- NAME`) may be invalid UTF-8 on
            // purpose, and say nothing about what is expected.
            let text = String::from_utf8_lossy(&bytes);
            for line in text.lines().take_while(|l| !l.starts_with("//--- ")) {
                let Some(rest) = line.trim_start().strip_prefix("//") else {
                    continue;
                };
                let Some((key, val)) = rest.trim_start().split_once(':') else {
                    continue;
                };
                if key.starts_with("CHECK") || key == "EXPECT" {
                    // `$(name=regex)` and `$NAME` are variables: the text between them counts.
                    out.extend(split_variables(val));
                }
            }
        }
    }
    let unit_tests = rs_files(&root().join("src"))
        .into_iter()
        .filter(|p| is_unit_test_file(p));
    for p in rs_files(&root().join("tests"))
        .into_iter()
        .chain(unit_tests)
    {
        // This file's own literals (the extractor's test, ALLOW) are not expectations.
        if p.ends_with("error_coverage.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        for l in literals(&text) {
            if l.raw {
                out.push(l.text);
            } else if l.is_format() {
                out.extend(pieces(&unescape(&l.text)));
            } else {
                out.extend(plain(&unescape(&l.text)));
            }
        }
    }
    out.into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| s.chars().count() >= 4)
        .collect()
}

fn split_variables(s: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c != '$' {
            out.last_mut().unwrap().push(c);
            continue;
        }
        if it.peek() == Some(&'(') {
            let mut depth = 0;
            for d in it.by_ref() {
                match d {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
            }
        } else {
            while it.peek().is_some_and(|c| c.is_alphanumeric() || *c == '_') {
                it.next();
            }
        }
        out.push(String::new());
    }
    out
}

fn covered(m: &Message, exp: &[String]) -> bool {
    let Some(best) = m.pieces.iter().max_by_key(|p| p.chars().count()) else {
        return true;
    };
    let n = best.chars().count();
    // Two pieces in order (one when the message has one): a fragment may start or stop
    // anywhere in the message, but one generic piece (`is not supported`) is not enough.
    let significant: Vec<&String> = match m.pieces.iter().filter(|p| p.len() >= 6).collect() {
        v if Vec::is_empty(&v) => m.pieces.iter().collect(),
        v => v,
    };
    let need = significant.len().min(2);
    let in_order = |e: &str| {
        let (mut pos, mut found) = (0, 0);
        for p in &significant {
            if let Some(i) = e[pos..].find(p.as_str()) {
                pos += i + p.len();
                found += 1;
            }
        }
        found >= need
    };
    // A distinctive opening (`type mismatch:`) asserted with what follows it.
    let first = m.pieces.first().filter(|p| {
        let words = p
            .split_whitespace()
            .filter(|w| w.chars().any(char::is_alphanumeric));
        p.chars().count() >= 10 && words.count() >= 2
    });
    exp.iter().any(|e| {
        in_order(e)
            || first.is_some_and(|f| e.contains(f.as_str()))
            || (e.chars().count() >= n.min(12) && best.contains(e.as_str()))
    })
}

fn the_extractor_sees_what_it_should() {
    let src = r#"
        fn f() {
            let a = Diagnostic::error(format!("cannot read {path}: {}", why(x, "not me")));
            let b = Diagnostic::at(src, 3, "plain").with_hint("a hint");
            kbail!("bad {} here", if x { "soft" } else { "hard" });
            let c = format!("not an error {x}");
            let d = x.ok_or_else(|| format!("missing `{key}`"))?;
            let e = '"'; let f = "after a char";
            Err((span, format!("{{braces}} {n} \
                 continued")))
        }
        #[cfg(test)]
        mod tests { fn g() { Diagnostic::error("test only"); } }
    "#;
    let lits: Vec<Literal> = literals(without_tests(src))
        .into_iter()
        .filter(is_message)
        .collect();
    let formats: Vec<bool> = lits.iter().map(Literal::is_format).collect();
    assert_eq!(formats, [true, false, true, true, true]);
    let found: Vec<String> = lits.iter().map(|l| unescape(&l.text)).collect();
    assert_eq!(
        found,
        [
            "cannot read {path}: {}",
            "plain",
            "bad {} here",
            "missing `{key}`",
            "{{braces}} {n} continued"
        ]
    );
    assert_eq!(
        pieces("{{braces}} {n} continued"),
        ["{braces}", "continued"]
    );
    assert_eq!(
        split_variables(" error: op #$(=[0-9]+) `$(x=[a-z]+)`: x $NAME y"),
        [" error: op #", " `", "`: x ", " y"]
    );
}

fn every_error_message_is_exercised_by_a_test() {
    let msgs = messages();
    assert!(msgs.len() > 300, "only {} messages found", msgs.len());
    let exp = expectations();
    let mut allow_used: BTreeMap<usize, usize> = BTreeMap::new();
    let mut missing = Vec::new();
    let mut allowed_but_covered = Vec::new();
    for m in &msgs {
        let allowed = ALLOW
            .iter()
            .position(|(f, start, _)| *f == m.file && m.source.starts_with(start));
        if let Some(k) = allowed {
            *allow_used.entry(k).or_default() += 1;
        }
        match (covered(m, &exp), allowed) {
            (true, Some(k)) => allowed_but_covered.push(format!(
                "{}:{}: allowed as \"{}\" but covered: remove it from ALLOW",
                m.file, m.line, ALLOW[k].1
            )),
            (false, None) => missing.push(format!("{}:{}: {}", m.file, m.line, m.source)),
            _ => {}
        }
    }
    let stale: Vec<String> = ALLOW
        .iter()
        .enumerate()
        .filter(|(k, _)| !allow_used.contains_key(k))
        .map(|(_, (f, s, _))| format!("{f}: \"{s}\" matches no message: remove it from ALLOW"))
        .collect();
    let mut problems = missing.clone();
    problems.extend(allowed_but_covered);
    problems.extend(stale);
    assert!(
        problems.is_empty(),
        "{} of {} error messages are not exercised by any test (add a bad input that \
         produces each, or an ALLOW entry saying why none can):\n{}",
        missing.len(),
        msgs.len(),
        problems.join("\n")
    );
}
