//! The operators of rule expressions and what they mean, once for every place that evaluates
//! them: the rule language's evaluator (`rules::eval`: constants, structural guards) and the
//! e-graph's compiled guards (`egraph::eval`). Integer arithmetic is checked (an overflow is an
//! error at the operator, never a wrapped result), `/` is the real quotient, strings concatenate
//! and compare the same way everywhere.
//!
//! The syntax tree (`rules::ast`) and the lowered form (`rules::compiled`) name the operators
//! and spans defined here.

/// Byte offsets `[start, end)` into the rule file an expression came from.
pub type Span = (usize, usize);

use super::Val;

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

/// The longest string a rule computes (by `+` or an interpolation `"{...}"`): 64 KiB. Op and
/// attribute names are short; a bound keeps a large string parameter, interpolated in every
/// match, from building gigabytes.
pub const MAX_STRING_BYTES: usize = 64 << 10;

/// The error for a computed string of `len` bytes, longer than [`MAX_STRING_BYTES`].
pub fn string_too_long(len: usize) -> String {
    format!(
        "the string would be {len} bytes long, more than the {} KiB a rule may compute",
        MAX_STRING_BYTES >> 10
    )
}

/// An evaluation error: where in the rule file, and what.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalError {
    pub span: Span,
    pub message: String,
}

pub type EvalResult = Result<Val, EvalError>;

pub fn err<T>(span: Span, message: impl Into<String>) -> Result<T, EvalError> {
    Err(EvalError {
        span,
        message: message.into(),
    })
}

/// `-x` and `not x`. Negating the smallest int overflows: an error, not a wrap.
pub fn unary(op: UnOp, v: Val, span: Span) -> EvalResult {
    match (op, v) {
        (UnOp::Neg, Val::Int(i)) => match i.checked_neg() {
            Some(n) => Ok(Val::Int(n)),
            None => err(span, format!("integer overflow: -({i}) is not an int")),
        },
        (UnOp::Neg, Val::Float(f)) => Ok(Val::Float(-f)),
        (UnOp::Not, Val::Bool(b)) => Ok(Val::Bool(!b)),
        (UnOp::Neg, v) => err(span, format!("cannot negate {}", v.a_kind())),
        (UnOp::Not, v) => err(span, format!("`not` needs a bool, found {}", v.a_kind())),
    }
}

/// `l and r` / `l or r` given the left operand (value and span) and a way to evaluate the right
/// one, which is only called when the left does not decide the result.
pub fn logic(
    op: BinOp,
    (l, l_span): (Val, Span),
    r: impl FnOnce() -> Result<(Val, Span), EvalError>,
) -> EvalResult {
    let a = as_bool(l, l_span, op.symbol())?;
    if (op == BinOp::And && !a) || (op == BinOp::Or && a) {
        return Ok(Val::Bool(a));
    }
    let (r, r_span) = r()?;
    Ok(Val::Bool(as_bool(r, r_span, op.symbol())?))
}

/// `v` as a bool, or an error saying that `what` (an operator, `if`) needs one.
pub fn as_bool(v: Val, span: Span, what: &str) -> Result<bool, EvalError> {
    match v {
        Val::Bool(b) => Ok(b),
        v => err(span, format!("`{what}` needs a bool, found {}", v.a_kind())),
    }
}

/// `v` as a number (an int widened), if it is one.
pub fn num(v: &Val) -> Option<f64> {
    match v {
        Val::Int(i) => Some(*i as f64),
        Val::Float(f) => Some(*f),
        _ => None,
    }
}

/// A binary operator other than `and`/`or` (see [`logic`]) applied to two values. Integer `+`,
/// `-` and `*` are checked: an overflow is an error at `span`.
pub fn binary_values(op: BinOp, a: Val, b: Val, span: Span) -> EvalResult {
    use BinOp::*;
    let mismatch = |a: &Val, b: &Val| {
        err(
            span,
            format!(
                "cannot apply `{}` to {} and {}",
                op.symbol(),
                a.a_kind(),
                b.a_kind()
            ),
        )
    };
    match op {
        Add | Sub | Mul | Div => match (&a, &b) {
            (Val::Int(x), Val::Int(y)) => match op {
                Add | Sub | Mul => {
                    let r = match op {
                        Add => x.checked_add(*y),
                        Sub => x.checked_sub(*y),
                        _ => x.checked_mul(*y),
                    };
                    match r {
                        Some(r) => Ok(Val::Int(r)),
                        None => err(
                            span,
                            format!("integer overflow: {x} {} {y} is not an int", op.symbol()),
                        ),
                    }
                }
                _ if *y == 0 => err(span, "division by zero"),
                // Integer division would make `1 / k_steps` zero; rules mean the real quotient.
                _ => Ok(Val::Float(*x as f64 / *y as f64)),
            },
            (Val::Str(x), Val::Str(y)) if op == Add => {
                if x.len() + y.len() > MAX_STRING_BYTES {
                    return err(span, string_too_long(x.len() + y.len()));
                }
                Ok(Val::Str(format!("{x}{y}")))
            }
            _ => match (num(&a), num(&b)) {
                (Some(x), Some(y)) => {
                    let r = match op {
                        Add => x + y,
                        Sub => x - y,
                        Mul => x * y,
                        _ if y == 0.0 => return err(span, "division by zero"),
                        _ => x / y,
                    };
                    // Like integer overflow: a finite computation that leaves the floats is an
                    // error, never an `inf` or `NaN` that a guard or an attribute would carry on.
                    if !r.is_finite() && x.is_finite() && y.is_finite() {
                        return err(
                            span,
                            format!(
                                "float overflow: {} {} {} is not a finite float",
                                a.display(),
                                op.symbol(),
                                b.display()
                            ),
                        );
                    }
                    Ok(Val::Float(r))
                }
                _ => mismatch(&a, &b),
            },
        },
        Eq => Ok(Val::Bool(a.loose_eq(&b))),
        Ne => Ok(Val::Bool(!a.loose_eq(&b))),
        Lt | Le | Gt | Ge => {
            let ord = match (num(&a), num(&b)) {
                (Some(x), Some(y)) => x.partial_cmp(&y),
                _ => match (&a, &b) {
                    (Val::Str(x), Val::Str(y)) => Some(x.cmp(y)),
                    _ => return mismatch(&a, &b),
                },
            };
            let Some(o) = ord else {
                return Ok(Val::Bool(false));
            };
            Ok(Val::Bool(match op {
                Lt => o.is_lt(),
                Le => o.is_le(),
                Gt => o.is_gt(),
                _ => o.is_ge(),
            }))
        }
        In => match &b {
            Val::List(items) => Ok(Val::Bool(items.iter().any(|x| x.loose_eq(&a)))),
            Val::Str(s) => match &a {
                Val::Str(x) => Ok(Val::Bool(s.contains(x.as_str()))),
                _ => mismatch(&a, &b),
            },
            _ => mismatch(&a, &b),
        },
        Contains | StartsWith | EndsWith => match (&a, &b) {
            (Val::Str(x), Val::Str(y)) => Ok(Val::Bool(match op {
                Contains => x.contains(y.as_str()),
                StartsWith => x.starts_with(y.as_str()),
                _ => x.ends_with(y.as_str()),
            })),
            (Val::List(x), y) if op == Contains => Ok(Val::Bool(x.iter().any(|i| i.loose_eq(y)))),
            _ => mismatch(&a, &b),
        },
        And | Or => unreachable_logic(span),
    }
}

fn unreachable_logic(span: Span) -> EvalResult {
    // `and`/`or` are evaluated (short-circuit) before `binary` is called.
    err(span, "internal: logical operator evaluated eagerly")
}
