//! From rule-file text to the syntax tree ([`crate::rules::ast`]), with parse errors as
//! [`Diagnostic`]s that point at the offending token.
//!
//! The grammar lives in `grammar/rules.lalrpop`; this file holds what the grammar's actions call
//! (literals, string interpolation, the conversions that give equational rules their tree
//! types) and the translation of LALRPOP's errors into messages a rule author can act on: the
//! expected tokens are named in words (`a value like %x`, not `VALUE`) and common slips get a
//! hint (a missing `;`, an unclosed `{`, a build without its attribute block).

use crate::diag::{Diagnostic, SourceFile};
use crate::rules::ast::*;
use crate::rules::grammar;
use crate::value::Val;
use lalrpop_util::ParseError;

/// An error raised inside a grammar action: a byte offset and a message.
#[derive(Debug, Clone, PartialEq)]
pub struct UserError {
    pub offset: usize,
    pub message: String,
    pub hint: Option<String>,
}

type PErr<T> = ParseError<usize, T, UserError>;

fn user<T>(offset: usize, message: impl Into<String>) -> PErr<T> {
    ParseError::User {
        error: UserError {
            offset,
            message: message.into(),
            hint: None,
        },
    }
}

/// Parses a whole rule file.
pub fn parse_file(src: &SourceFile) -> Result<File, Diagnostic> {
    super::limits::check(src)?;
    file_parser()
        .parse(&src.text)
        .map_err(|e| to_diagnostic(src, e))
}

fn to_diagnostic<T: std::fmt::Display>(src: &SourceFile, e: PErr<T>) -> Diagnostic {
    match e {
        ParseError::InvalidToken { location } => {
            let ch = src.text[location..].chars().next().unwrap_or(' ');
            // A quote the lexer cannot take opens a string that its line does not close (a
            // string is one line; `\"` is a quote inside it).
            if ch == '"' {
                return Diagnostic::at(src, location, "this string is not terminated")
                    .with_hint("a string ends with `\"` on the line it starts on; write `\\\"` for a quote inside it");
            }
            Diagnostic::at(src, location, format!("unexpected character `{ch}`")).with_hint(
                "values are written %name, captures $name, strings in double quotes, comments start with //",
            )
        }
        ParseError::UnrecognizedEof { location, expected } => {
            let mut d = Diagnostic::at(
                src,
                location,
                format!(
                    "unexpected end of file, expected {}",
                    describe_expected(&expected)
                ),
            );
            if expected.iter().any(|t| t == "\"}\"") {
                d = d.with_hint("a `{` is not closed");
            } else if expected.iter().any(|t| t == "\";\"") {
                d = d.with_hint("every declaration and clause ends with `;`");
            }
            d
        }
        ParseError::UnrecognizedToken {
            token: (l, tok, _),
            expected,
        } => {
            let tok = tok.to_string();
            let shown = token_text(&tok);
            // `none` where a pattern takes an operand reads as an op name (`none(..)`) or an
            // operand name (`none: %x`): say what a pattern writes instead.
            let before = src.text[..l].trim_end();
            if before.ends_with("none")
                && !before[..before.len() - 4]
                    .ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.')
                && expected.iter().any(|t| t == "\"(\"")
            {
                return Diagnostic::at(src, before.len() - 4, "`none` is not a pattern")
                    .with_hint("an absent operand is matched with `_`, which matches any operand, absent ones included; `none` is what a build writes for one");
            }
            let mut d = Diagnostic::at(
                src,
                l,
                format!(
                    "unexpected {shown}, expected {}",
                    describe_expected(&expected)
                ),
            );
            let line_start = src.text[..l].rfind('\n').map_or(0, |i| i + 1);
            let in_import = src.text[line_start..l].trim_start().starts_with("import ");
            if expected.iter().any(|t| t == "\"{\"") && expected.len() == 1 {
                d = d.with_hint("an op a rule builds lists its attributes, even when empty: `pd_op.relu(%x) {}`");
            } else if shown == "`with`" && in_import {
                d = d.with_hint("an import writes `with {...}` before its `if`: `import \"x.rw\" with {k: v} if c;`");
            } else if ends_inside_interpolation(before) {
                d = d.with_hint("a string literal cannot appear inside a `{...}` interpolation (the string ends at its `\"`): name the value first, `let $v = attr(%p, \"value\");`, then write `{$v}`");
            } else if expected.iter().any(|t| t == "\";\"") {
                d = d.with_hint("every declaration and clause ends with `;`");
            } else if expected.iter().any(|t| t == "\"rule\"") && tok.contains("match") {
                d = d.with_hint("`match` goes inside `rule name { ... }`");
            }
            if let Some(h) = misspelt_keyword(&shown, &expected) {
                d = d.with_hint(h);
            }
            d
        }
        ParseError::ExtraToken { token: (l, tok, _) } => Diagnostic::at(
            src,
            l,
            format!("unexpected {}", token_text(&tok.to_string())),
        ),
        ParseError::User { error } => {
            let d = Diagnostic::at(src, error.offset, error.message);
            match error.hint {
                Some(h) => d.with_hint(h),
                None => d,
            }
        }
    }
}

/// "did you mean `rule`?" when the unexpected token is a name close to a keyword the grammar
/// expected there (`rul`, `mach`, `eras`).
fn misspelt_keyword(shown: &str, expected: &[String]) -> Option<String> {
    let word = shown.trim_matches('`');
    if word.is_empty() || !word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let keywords = expected.iter().filter_map(|t| {
        let k = t.strip_prefix('"')?.strip_suffix('"')?;
        (k.chars().all(|c| c.is_ascii_lowercase() || c == '_') && k != word).then_some(k)
    });
    super::suggest::did_you_mean(&super::suggest::closest(word, keywords, 2))
}

/// LALRPOP prints a token as `Token(id, "text")`; show the text.
/// Whether `before` (the text up to an unexpected token) ends with a string whose last `{` is
/// not closed: a string literal written inside an interpolation, which ended the string early.
fn ends_inside_interpolation(before: &str) -> bool {
    let Some(body) = before.strip_suffix('"') else {
        return false;
    };
    let Some(open) = body.rfind('"') else {
        return false;
    };
    let s = &body[open + 1..];
    s.rfind('{').is_some_and(|i| !s[i..].contains('}'))
}

fn token_text(tok: &str) -> String {
    match (tok.find('"'), tok.rfind('"')) {
        (Some(a), Some(b)) if b > a => {
            let inner = &tok[a + 1..b];
            format!("`{}`", inner.replace("\\\"", "\""))
        }
        _ => format!("`{tok}`"),
    }
}

/// Names the expected tokens in words, shortest useful list first.
fn describe_expected(expected: &[String]) -> String {
    let mut words: Vec<String> = Vec::new();
    for t in expected {
        let w = match t.as_str() {
            "IDENT" => "a name".to_string(),
            "DOTTED" => "an op name like pd_op.add".to_string(),
            "VALUE" => "a value like %x".to_string(),
            "CAPTURE" => "a capture like $x".to_string(),
            "INT" => "an integer".to_string(),
            "FLOAT" => "a number".to_string(),
            "STR" => "a string".to_string(),
            "PLACE" => "a place".to_string(),
            other => format!("`{}`", other.trim_matches('"').replace("\\\"", "\"")),
        };
        if !words.contains(&w) {
            words.push(w);
        }
    }
    // An expression can start with a dozen tokens; say so instead of listing them.
    let expr_starts = ["a value like %x", "an integer", "a string", "`[`"];
    if words.len() > 8 && expr_starts.iter().all(|s| words.iter().any(|w| w == s)) {
        return "an expression".to_string();
    }
    match words.len() {
        0 => "nothing more".to_string(),
        1 => words.remove(0),
        _ => {
            let last = words.pop().unwrap_or_default();
            format!("{} or {}", words.join(", "), last)
        }
    }
}

// ------------------------------------------------------------------ helpers used by the grammar

pub fn int_lit<T>(s: &str, l: usize, r: usize) -> Result<Expr, PErr<T>> {
    s.parse::<i64>()
        .map(|v| Expr::Lit(Val::Int(v), (l, r)))
        .map_err(|_| user(l, format!("integer `{s}` does not fit in 64 bits")))
}

/// Refuses a key written twice in one list: an attribute of a block (`{z: 1, z: 2}` in a
/// pattern, a build, `set` or `with`) or a named operand (`relu(x: %a, x: %b)`). Which was meant
/// is unknowable, so the second is an error where it is written, as the program parser's
/// duplicate attribute is; `what` names the key's kind.
pub fn unique_keys<'k, T>(
    keys: impl IntoIterator<Item = &'k Ident>,
    what: &str,
) -> Result<(), PErr<T>> {
    let mut seen: Vec<&str> = Vec::new();
    for k in keys {
        if k.name == SPREAD_KEY {
            continue;
        }
        if seen.contains(&k.name.as_str()) {
            return Err(ParseError::User {
                error: UserError {
                    offset: k.span.0,
                    message: format!("{what} `{}` is given twice", k.name),
                    hint: Some(format!("give each {what} once")),
                },
            });
        }
        seen.push(&k.name);
    }
    Ok(())
}

/// A float literal (`0.5`, `1.0e-3`, `1e30`). One beyond f64's range is refused: it would
/// otherwise be an infinity no rule author wrote.
pub fn float_lit<T>(s: &str, l: usize, r: usize) -> Result<Expr, PErr<T>> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(Expr::Lit(Val::Float(v), (l, r))),
        Ok(_) => Err(user(
            l,
            format!("number `{s}` is beyond the range of a float"),
        )),
        Err(_) => Err(user(l, format!("bad number `{s}`"))),
    }
}

/// A literal tensor type as Paddle prints it (`tensor<4x3xf32>`, `tensor<-1x4xbf16>`,
/// `tensor<f32>`) as the call `tensor([4, 3], f32)`; the dtype is checked like any bare name.
pub fn type_lit<T>(s: &str, l: usize, r: usize) -> Result<Expr, PErr<T>> {
    let inner = &s["tensor<".len()..s.len() - 1];
    // Dimensions are the leading `N x` pieces; the rest is the dtype (which may hold an `x`).
    let mut rest = inner;
    let mut dims = Vec::new();
    while rest.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
        let Some((d, tail)) = rest.split_once('x') else {
            break;
        };
        match d.parse::<i64>() {
            Ok(n) if n >= -1 => dims.push(Expr::Lit(Val::Int(n), (l, r))),
            _ => {
                return Err(user(
                    l,
                    format!("`{s}`: a dimension is a size or -1, not `{d}`"),
                ))
            }
        }
        rest = tail;
    }
    let dtype = rest;
    let dtype_at = r - 1 - dtype.len();
    Ok(Expr::Call {
        func: Ident {
            name: "tensor".into(),
            span: (l, r),
        },
        args: vec![
            Expr::List(dims, (l, r)),
            Expr::Var(Var::Bare(Ident {
                name: dtype.to_string(),
                span: (dtype_at, r - 1),
            })),
        ],
        span: (l, r),
    })
}

/// `%x` or `%x.field`.
pub fn value_ref(s: &str, l: usize, r: usize) -> ValueRef {
    match s.find('.') {
        Some(dot) => ValueRef {
            name: Ident {
                name: s[..dot].to_string(),
                span: (l, l + dot),
            },
            field: Some(Ident {
                name: s[dot + 1..].to_string(),
                span: (l + dot + 1, r),
            }),
            span: (l, r),
        },
        None => ValueRef {
            name: Ident {
                name: s.to_string(),
                span: (l, r),
            },
            field: None,
            span: (l, r),
        },
    }
}

/// A string token (with its quotes) starting at byte `l`: unescapes `\"`, `\\`, `\n`, `\t` and
/// parses `{expr}` interpolations with the expression grammar, keeping their offsets in the file.
pub fn string_lit<T>(tok: &str, l: usize) -> Result<StrLit, PErr<T>> {
    let body = &tok[1..tok.len() - 1];
    let base = l + 1;
    let mut parts = Vec::new();
    let mut lit = String::new();
    let bytes = body.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = body[i..].chars().next().unwrap_or('\0');
        match c {
            '\\' => {
                let n = body[i + 1..].chars().next().unwrap_or('\\');
                match n {
                    '"' => lit.push('"'),
                    '\\' => lit.push('\\'),
                    'n' => lit.push('\n'),
                    't' => lit.push('\t'),
                    '{' => lit.push('{'),
                    '}' => lit.push('}'),
                    other => return Err(user(base + i, format!("unknown escape `\\{other}`"))),
                }
                i += 1 + n.len_utf8();
            }
            '{' if body[i + 1..].starts_with('{') => {
                lit.push('{');
                i += 2;
            }
            '}' if body[i + 1..].starts_with('}') => {
                lit.push('}');
                i += 2;
            }
            '{' => {
                let close = match body[i..].find('}') {
                    Some(c) => i + c,
                    None => {
                        return Err(user(
                            base + i,
                            "`{` in a string starts an interpolation that is not closed",
                        )
                        .map_user_hint("write `{{` for a literal brace"))
                    }
                };
                let inner = &body[i + 1..close];
                if inner.trim().is_empty() {
                    return Err(user(base + i, "empty interpolation `{}` in a string"));
                }
                // Parse the inner text alone, then move every offset to its place in the file.
                // (Padding the text with `start` spaces instead costs O(file) per
                // interpolation: quadratic on a large generated rule file.)
                let start = base + i + 1;
                let mut e = expr_parser().parse(inner).map_err(|e| {
                    let (off, msg) = match e {
                        ParseError::User { error } => {
                            return ParseError::User {
                                error: UserError {
                                    offset: error.offset + start,
                                    ..error
                                },
                            }
                        }
                        ParseError::InvalidToken { location } => (
                            start + location,
                            "unexpected character in interpolation".into(),
                        ),
                        ParseError::UnrecognizedEof { .. } => (
                            start + inner.len(),
                            "incomplete expression in interpolation".into(),
                        ),
                        ParseError::UnrecognizedToken {
                            token: (o, t, _), ..
                        }
                        | ParseError::ExtraToken { token: (o, t, _) } => (
                            start + o,
                            format!("unexpected {} in interpolation", token_text(&t.to_string())),
                        ),
                    };
                    let e = user::<T>(off, msg);
                    if inner.contains('\\') {
                        // An escaped quote: a string literal the interpolation cannot hold.
                        e.map_user_hint("a string literal cannot appear inside a `{...}` interpolation: name the value first, `let $v = attr(%p, \"value\");`, then write `{$v}`")
                    } else {
                        e
                    }
                })?;
                shift_expr(&mut e, start);
                if !lit.is_empty() {
                    parts.push(StrPart::Lit(std::mem::take(&mut lit)));
                }
                parts.push(StrPart::Expr(e));
                i = close + 1;
            }
            '}' => {
                return Err(user(base + i, "unmatched `}` in a string")
                    .map_user_hint("write `}}` for a literal brace"))
            }
            c => {
                lit.push(c);
                i += c.len_utf8();
            }
        }
    }
    if !lit.is_empty() || parts.is_empty() {
        parts.push(StrPart::Lit(lit));
    }
    Ok(StrLit {
        parts,
        span: (l, l + tok.len()),
    })
}

/// The file parser, built once per process: building one compiles the lexer's regular
/// expressions (about a millisecond), more than parsing a shipped rule file takes, and a run
/// parses every imported file.
fn file_parser() -> &'static grammar::FileParser {
    static P: std::sync::OnceLock<grammar::FileParser> = std::sync::OnceLock::new();
    P.get_or_init(grammar::FileParser::new)
}

/// The expression parser for interpolations, built once: building one compiles the lexer's
/// regular expressions (about a millisecond), which per interpolation dominated loading a large
/// rule file.
fn expr_parser() -> &'static grammar::ExprParser {
    static P: std::sync::OnceLock<grammar::ExprParser> = std::sync::OnceLock::new();
    P.get_or_init(grammar::ExprParser::new)
}

/// Moves the spans of an op pattern by `by` bytes (an `exists(...)` inside an interpolation).
/// The expressions its attributes test are moved with the rest of the expression tree
/// ([`shift_expr`] visits them), those of an alternative's literal tests here.
fn shift_pattern(p: &mut OpPattern, by: usize) {
    let sh = |s: &mut Span| *s = (s.0 + by, s.1 + by);
    sh(&mut p.span);
    if let Some(b) = &mut p.bind {
        sh(&mut b.span);
    }
    shift_sel(&mut p.op, by);
    for a in &mut p.args {
        if let Some(o) = &mut a.operand {
            sh(&mut o.span);
        }
        match &mut a.pat {
            ValPat::Var { name, ty } => {
                sh(&mut name.span);
                if let Some(t) = ty {
                    sh(&mut t.span);
                }
            }
            ValPat::Wild(s) => sh(s),
            ValPat::Op(inner) => shift_pattern(inner, by),
        }
    }
    for a in &mut p.attrs {
        shift_attr(a, by, false);
    }
    if let Some(s) = &mut p.stage {
        sh(&mut s.span);
    }
}

fn shift_sel(sel: &mut OpSel, by: usize) {
    match sel {
        OpSel::Name(i) | OpSel::Quoted(i) | OpSel::Class(i) => {
            i.span = (i.span.0 + by, i.span.1 + by)
        }
        OpSel::OneOf(v, s) => {
            *s = (s.0 + by, s.1 + by);
            v.iter_mut().for_each(|x| shift_sel(x, by));
        }
        OpSel::With { sel, attrs, span } => {
            *span = (span.0 + by, span.1 + by);
            shift_sel(sel, by);
            for a in attrs {
                shift_attr(a, by, true);
            }
        }
    }
}

/// Moves an attribute test's spans, and its expression's when `with_expr`.
fn shift_attr(a: &mut AttrPat, by: usize, with_expr: bool) {
    let sh = |s: &mut Span| *s = (s.0 + by, s.1 + by);
    sh(&mut a.key.span);
    match &mut a.val {
        AttrPatVal::Capture(c) => sh(&mut c.span),
        AttrPatVal::Present(s) | AttrPatVal::Absent(s) => sh(s),
        AttrPatVal::Equals(e) if with_expr => shift_expr(e, by),
        AttrPatVal::Equals(_) => {}
    }
}

/// Moves every span in `e` by `by` bytes (an expression parsed out of its file).
fn shift_expr(e: &mut Expr, by: usize) {
    let sh = |s: &mut Span| *s = (s.0 + by, s.1 + by);
    e.visit_mut(&mut |e| match e {
        Expr::Lit(_, s) | Expr::Str(_, s) | Expr::List(_, s) => sh(s),
        Expr::Var(Var::Bare(i) | Var::Capture(i)) => sh(&mut i.span),
        Expr::Var(Var::Value(v)) => {
            sh(&mut v.span);
            sh(&mut v.name.span);
            if let Some(f) = &mut v.field {
                sh(&mut f.span);
            }
        }
        Expr::Call { func, span, .. } => {
            sh(span);
            sh(&mut func.span);
        }
        Expr::Unary { span, .. } | Expr::Binary { span, .. } | Expr::If { span, .. } => sh(span),
        Expr::Exists(x) => {
            sh(&mut x.span);
            x.patterns.iter_mut().for_each(|p| shift_pattern(p, by));
        }
        Expr::Build(b) => {
            sh(&mut b.span);
            sh(&mut b.op.name.span);
            if let Some(i) = &mut b.bind {
                sh(&mut i.span);
            }
            for a in &mut b.args {
                if let Some(i) = &mut a.operand {
                    sh(&mut i.span);
                }
            }
            for (k, _) in &mut b.attrs {
                sh(&mut k.span);
            }
        }
    });
}

trait UserHint {
    fn map_user_hint(self, hint: &str) -> Self;
}

impl<T> UserHint for PErr<T> {
    fn map_user_hint(self, hint: &str) -> Self {
        match self {
            ParseError::User { error } => ParseError::User {
                error: UserError {
                    hint: Some(hint.to_string()),
                    ..error
                },
            },
            e => e,
        }
    }
}

/// The left-hand side of an equational rule is a plain tree of op patterns: positional operands
/// only, no `..`, no stage (the e-graph holds pure values, which have no stage), no type
/// captures. It is the pattern tree of a structural `match`, restricted; this refuses the rest.
pub fn eq_lhs<T>(p: OpPattern) -> Result<OpPattern, PErr<T>> {
    fn check<T>(p: &OpPattern) -> Result<(), PErr<T>> {
        if p.rest {
            return Err(user(
                p.span.0,
                "`..` is not allowed in an equational rule: list every operand",
            ));
        }
        if let Some(s) = &p.stage {
            return Err(user(
                s.span.0,
                "an equational rule works on pure values, which have no stage",
            ));
        }
        for a in &p.args {
            if let Some(o) = &a.operand {
                return Err(user(
                    o.span.0,
                    "operands of an equational rule are positional: drop the name",
                ));
            }
            match &a.pat {
                ValPat::Var { ty: Some(t), .. } => {
                    return Err(user(t.span.0, "type captures are not allowed in an equational rule; use dtype(%x) in the guard"));
                }
                ValPat::Var { ty: None, .. } | ValPat::Wild(_) => {}
                ValPat::Op(inner) => check(inner)?,
            }
        }
        Ok(())
    }
    check(&p)?;
    Ok(p)
}

/// The right-hand side of an equational rule: a variable or an op built from right-hand sides.
pub fn expr_to_term<T>(e: Expr) -> Result<Term, PErr<T>> {
    match e {
        Expr::Var(Var::Value(v)) => {
            if let Some(f) = &v.field {
                return Err(user(
                    f.span.0,
                    "an equational rule names whole values, not result fields",
                ));
            }
            Ok(Term::Var(v.name))
        }
        Expr::Build(b) => {
            let b = *b;
            let mut children = Vec::with_capacity(b.args.len());
            for a in b.args {
                if let Some(o) = &a.operand {
                    return Err(user(
                        o.span.0,
                        "operands of an equational rule are positional: drop the name",
                    ));
                }
                children.push(expr_to_term(a.value)?);
            }
            Ok(Term::Op {
                op: b.op,
                attrs: b.attrs,
                children,
                ty: b.ty,
                span: b.span,
            })
        }
        other => Err(user(
            other.span().0,
            "the right-hand side of an equational rule is a value (%x) or an op built from values",
        )),
    }
}

/// The text of the `//` comment on the line right above `offset`'s line, if any.
pub fn comment_above(src: &SourceFile, offset: usize) -> Option<String> {
    let line_start = src.text[..offset].rfind('\n').map_or(0, |i| i + 1);
    if line_start == 0 {
        return None;
    }
    let prev_end = line_start - 1;
    let prev_start = src.text[..prev_end].rfind('\n').map_or(0, |i| i + 1);
    let prev = src.text[prev_start..prev_end].trim();
    prev.strip_prefix("//").map(|c| c.trim().to_string())
}
