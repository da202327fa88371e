//! Rule expressions as they are evaluated: lowered once from the syntax tree ([`super::lower`]).
//!
//! Lowering resolves what the text leaves to be looked up: a parameter becomes its value, a
//! stage or dtype name its constant ([`Expr::Lit`]); a `%x` or `$x` becomes a numbered
//! [`Slot`] of the match's bindings; a call names a [`Builtin`]. What cannot be resolved (a
//! name or function that is not one, only possible in a parameter's own default or constraint,
//! which are evaluated before the checker runs) stays an explicit node that fails with the
//! message the rule language has always given, in evaluation order. Every node keeps the
//! [`Span`] of its text, so an error at run time points at the rule exactly.
//!
//! The operators ([`BinOp`], [`UnOp`]) are shared with the syntax tree and with the e-graph's
//! compiled guards, which evaluate them with [`super::eval`]'s functions.

use super::builtins::Builtin;
use super::compiled::{Build, Exists};
use super::value::Val;

/// Byte offsets `[start, end)` into the file a node came from.
pub type Span = (usize, usize);

/// The index of a `%x` or `$x` in a rule's bindings (see [`super::compiled::CompiledRule`]).
pub type Slot = u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    /// `%v in backward` (stage test) or `x in [a, b]` (membership).
    In,
    Contains,
    StartsWith,
    EndsWith,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "and",
            BinOp::Or => "or",
            BinOp::In => "in",
            BinOp::Contains => "contains",
            BinOp::StartsWith => "starts_with",
            BinOp::EndsWith => "ends_with",
        }
    }
}

/// `%x` or `%x.field`: the slot, and the name as written (for messages).
#[derive(Debug, Clone, PartialEq)]
pub struct ValueRef {
    pub slot: Slot,
    pub name: String,
    /// Where the name alone is written (`erase %o;` points there).
    pub name_span: Span,
    pub field: Option<Field>,
    pub span: Span,
}

/// `.1` or `.out`: a numbered or named result of the op bound to a variable. Named results are
/// looked up in the dialect table under the bound op's name, which only the match knows.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// As written (messages quote it).
    pub text: String,
    /// The number, when the field is one.
    pub index: Option<usize>,
}

/// A piece of an interpolated string.
#[derive(Debug, Clone)]
pub enum StrPart {
    Lit(String),
    Expr(Expr),
}

#[derive(Debug, Clone)]
pub enum Expr {
    /// A literal, or a parameter, stage or dtype resolved at load.
    Lit(Val, Span),
    /// A string with `{expr}` interpolations.
    Str(Vec<StrPart>, Span),
    Value(ValueRef),
    /// `$x`; the name as written is kept for messages.
    Capture {
        slot: Slot,
        name: String,
        span: Span,
    },
    List(Vec<Expr>, Span),
    /// A builtin applied to its evaluated arguments. `func_span` is the function's name.
    Call {
        func: Builtin,
        args: Vec<Expr>,
        func_span: Span,
        span: Span,
    },
    /// `uses(%v in STAGE)`: the stage restricts the count; it is not a stage test.
    UsesIn {
        value: Box<Expr>,
        stage: Box<Expr>,
        func_span: Span,
        span: Span,
    },
    Unary {
        op: UnOp,
        e: Box<Expr>,
        span: Span,
    },
    Binary {
        op: BinOp,
        l: Box<Expr>,
        r: Box<Expr>,
        span: Span,
    },
    If {
        c: Box<Expr>,
        t: Box<Expr>,
        e: Box<Expr>,
        span: Span,
    },
    /// An op built inline (an operand of an action's build, a replacement).
    Build(Box<Build>),
    /// `exists(...)`: whether ops matching the patterns exist around the match.
    Exists(Box<Exists>),
    /// A name that is no parameter, stage or dtype: `unknown name` when evaluated.
    UnknownName(String, Span),
    /// A call of a function that is no builtin: its arguments are evaluated, then `unknown
    /// function`.
    UnknownCall {
        name: String,
        args: Vec<Expr>,
        func_span: Span,
    },
}

impl Expr {
    pub fn span(&self) -> Span {
        match self {
            Expr::Lit(_, s) | Expr::Str(_, s) | Expr::List(_, s) | Expr::UnknownName(_, s) => *s,
            Expr::Value(v) => v.span,
            Expr::Capture { span, .. }
            | Expr::Call { span, .. }
            | Expr::UsesIn { span, .. }
            | Expr::Unary { span, .. }
            | Expr::Binary { span, .. }
            | Expr::If { span, .. } => *span,
            Expr::Build(b) => b.span,
            Expr::Exists(x) => x.span,
            Expr::UnknownCall { func_span, .. } => *func_span,
        }
    }

    /// Whether the value is the same for every match: no program values, captures, calls,
    /// builds or `exists` in it (parameters were resolved when the rule was lowered).
    pub fn is_fixed(&self) -> bool {
        match self {
            Expr::Lit(..) | Expr::UnknownName(..) => true,
            Expr::Str(parts, _) => parts.iter().all(|p| match p {
                StrPart::Lit(_) => true,
                StrPart::Expr(e) => e.is_fixed(),
            }),
            Expr::List(v, _) => v.iter().all(Expr::is_fixed),
            Expr::Unary { e, .. } => e.is_fixed(),
            Expr::Binary { l, r, .. } => l.is_fixed() && r.is_fixed(),
            Expr::If { c, t, e, .. } => c.is_fixed() && t.is_fixed() && e.is_fixed(),
            Expr::Value(_)
            | Expr::Capture { .. }
            | Expr::Call { .. }
            | Expr::UsesIn { .. }
            | Expr::UnknownCall { .. }
            | Expr::Build(_)
            | Expr::Exists(_) => false,
        }
    }
}
