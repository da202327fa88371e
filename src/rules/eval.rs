//! The one evaluator of rule expressions, for constants (parameter defaults and constraints,
//! import conditions) and for guards and computed attributes during matching.
//!
//! It walks lowered expressions ([`super::compiled::Expr`]): parameters, stages and dtypes are
//! already constants, variables are slots, calls name a [`Builtin`]. What the match and the
//! program say comes from an [`Env`]: the constant environment ([`ConstEnv`]) has neither; the
//! engine's environment knows the match's bindings and the module. Keeping one evaluator means
//! a guard and a parameter constraint can never disagree about what `1 / k_steps` or
//! `x in [a, b]` means.
//!
//! The operators themselves ([`unary`], [`binary_values`], [`logic`], [`pure_function`]) take
//! values, not syntax, so the e-graph's compiled guards (`egraph::eval`) evaluate with exactly
//! these semantics too: integer arithmetic is checked (an overflow is an error at the operator,
//! never a wrapped result), `/` is the real quotient, strings concatenate and compare the same way
//! in both engines.

use super::builtins::{Builtin, Kind};
use super::compiled::{Build, Exists, Expr, Slot, StrPart, ValueRef};
use super::operators::{BinOp, Span, UnOp};
use super::value::Val;
use crate::ir::DType;

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

/// What an expression can ask about its surroundings. Parameters, stages and dtypes were
/// resolved when the expression was lowered; what is left is the match and the program.
pub trait Env {
    /// `%x` or `%x.field`.
    fn value(&mut self, v: &ValueRef) -> EvalResult;
    /// `$x`.
    fn capture(&self, slot: Slot) -> Option<Val>;
    /// A program query ([`Kind::Query`]). `None` when this environment does not know it.
    fn query(&mut self, func: Builtin, args: &[Val], span: Span) -> Option<EvalResult>;
    /// Builds an op inline; only the engine can.
    fn build(&mut self, b: &Build) -> EvalResult {
        err(b.span, "an op can only be built in an action")
    }
    /// `exists(patterns)`: whether ops matching the patterns exist; only the engine can say.
    fn exists(&mut self, x: &Exists) -> EvalResult {
        err(
            x.span,
            "`exists(...)` asks about the program: it is only available in a rule",
        )
    }
}

pub fn eval(env: &mut dyn Env, e: &Expr) -> EvalResult {
    match e {
        Expr::Lit(v, _) => Ok(v.clone()),
        Expr::Str(parts, _) => eval_str(env, parts).map(Val::Str),
        Expr::UnknownName(name, span) => err(*span, format!("unknown name `{name}`")),
        Expr::Value(v) => env.value(v),
        Expr::Capture { slot, name, span } => env
            .capture(*slot)
            .map_or_else(|| err(*span, format!("`{name}` is not bound")), Ok),
        Expr::List(items, _) => Ok(Val::List(
            items
                .iter()
                .map(|x| eval(env, x))
                .collect::<Result<_, _>>()?,
        )),
        Expr::Unary { op, e, span } => unary(*op, eval(env, e)?, *span),
        Expr::Binary { op, l, r, span } => {
            // `and`/`or` short-circuit, so a guard can test before it queries.
            if matches!(op, BinOp::And | BinOp::Or) {
                return logic(*op, (eval(env, l)?, l.span()), || {
                    Ok((eval(env, r)?, r.span()))
                });
            }
            let a = eval(env, l)?;
            let b = eval(env, r)?;
            binary(env, *op, a, b, *span)
        }
        Expr::If { c, t, e, .. } => {
            if as_bool(eval(env, c)?, c.span(), "if")? {
                eval(env, t)
            } else {
                eval(env, e)
            }
        }
        Expr::UsesIn {
            value,
            stage,
            func_span,
            span,
        } => {
            // `uses(%v in STAGE)`: the stage restricts the count; it is not a stage test.
            let v = eval(env, value)?;
            let s = match eval(env, stage)? {
                Val::Stage(s) => Val::Stage(s),
                other => {
                    return err(
                        stage.span(),
                        format!(
                            "`uses(%v in STAGE)` needs a stage, found {}",
                            other.a_kind()
                        ),
                    )
                }
            };
            match env.query(Builtin::Uses, &[v, s], *span) {
                Some(r) => r,
                None => unknown_function(Builtin::Uses.name(), *func_span),
            }
        }
        Expr::Call {
            func,
            args,
            func_span,
            span,
        } => {
            let vals: Vec<Val> = args
                .iter()
                .map(|a| eval(env, a))
                .collect::<Result<_, _>>()?;
            match func.kind() {
                Kind::Pure => pure_function(*func, &vals, *span),
                Kind::Query => match env.query(*func, &vals, *span) {
                    Some(r) => r,
                    None => unknown_function(func.name(), *func_span),
                },
            }
        }
        Expr::UnknownCall {
            name,
            args,
            func_span,
        } => {
            for a in args {
                eval(env, a)?;
            }
            unknown_function(name, *func_span)
        }
        Expr::Build(b) => env.build(b),
        Expr::Exists(x) => env.exists(x),
    }
}

fn unknown_function(name: &str, func_span: Span) -> EvalResult {
    err(func_span, format!("unknown function `{name}`"))
}

/// An interpolated string's pieces, evaluated and joined.
pub fn eval_str(env: &mut dyn Env, parts: &[StrPart]) -> Result<String, EvalError> {
    let mut out = String::new();
    for p in parts {
        match p {
            StrPart::Lit(l) => out.push_str(l),
            StrPart::Expr(e) => out.push_str(&eval(env, e)?.display()),
        }
    }
    Ok(out)
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

fn as_bool(v: Val, span: Span, what: &str) -> Result<bool, EvalError> {
    match v {
        Val::Bool(b) => Ok(b),
        v => err(span, format!("`{what}` needs a bool, found {}", v.a_kind())),
    }
}

/// Dtype names a rule may write: the long attribute forms (`float32`) and the short type forms
/// (`f32`).
pub fn dtype_name(s: &str) -> Option<DType> {
    DType::parse(s)
}

/// A pure builtin ([`Kind::Pure`]) applied to evaluated arguments.
pub fn pure_function(f: Builtin, a: &[Val], span: Span) -> EvalResult {
    use Builtin as B;
    match (f, a) {
        (B::Len, [Val::List(v)]) => Ok(Val::Int(v.len() as i64)),
        (B::Len, [Val::Str(s)]) => Ok(Val::Int(s.chars().count() as i64)),
        (B::Int, [Val::Float(x)]) => Ok(Val::Int(*x as i64)),
        (B::Int, [Val::Int(x)]) => Ok(Val::Int(*x)),
        (B::Float, [Val::Int(x)]) => Ok(Val::Float(*x as f64)),
        (B::Float, [Val::Float(x)]) => Ok(Val::Float(*x)),
        (B::Str, [v]) => Ok(Val::Str(v.display())),
        (B::Min | B::Max, [x, y]) => {
            let (Some(p), Some(q)) = (num(x), num(y)) else {
                return err(span, format!("`{}` needs numbers", f.name()));
            };
            let pick_first = if f == B::Min { p <= q } else { p >= q };
            Ok(if pick_first { x.clone() } else { y.clone() })
        }
        _ => err(
            span,
            format!(
                "bad arguments to `{}`: {}",
                f.name(),
                a.iter().map(|v| v.kind()).collect::<Vec<_>>().join(", ")
            ),
        ),
    }
}

fn num(v: &Val) -> Option<f64> {
    match v {
        Val::Int(i) => Some(*i as f64),
        Val::Float(f) => Some(*f),
        _ => None,
    }
}

fn binary(env: &mut dyn Env, op: BinOp, a: Val, b: Val, span: Span) -> EvalResult {
    // `%v in STAGE` asks the program for `%v`'s stage; every other operator needs only values.
    if let (BinOp::In, Val::Stage(s), Val::Value(_) | Val::Op(_) | Val::NullValue) = (op, &b, &a) {
        let r = match env.query(Builtin::Role, std::slice::from_ref(&a), span) {
            Some(r) => r?,
            None => return err(span, "stages are only known while matching a program"),
        };
        return Ok(Val::Bool(r.loose_eq(&Val::Int(*s))));
    }
    binary_values(op, a, b, span)
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
            (Val::Str(x), Val::Str(y)) if op == Add => Ok(Val::Str(format!("{x}{y}"))),
            _ => match (num(&a), num(&b)) {
                (Some(x), Some(y)) => Ok(Val::Float(match op {
                    Add => x + y,
                    Sub => x - y,
                    Mul => x * y,
                    _ if y == 0.0 => return err(span, "division by zero"),
                    _ => x / y,
                })),
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

/// The environment of constants (parameter defaults and constraints, import conditions,
/// `require` counts): nothing is bound and there is no program.
pub struct ConstEnv;

impl Env for ConstEnv {
    fn value(&mut self, v: &ValueRef) -> EvalResult {
        err(
            v.span,
            format!("`{}` is a program value; it has no value here", v.name),
        )
    }
    fn capture(&self, _slot: Slot) -> Option<Val> {
        None
    }
    fn query(&mut self, func: Builtin, _args: &[Val], span: Span) -> Option<EvalResult> {
        Some(err(
            span,
            format!("`{}` asks the program; it cannot be used here", func.name()),
        ))
    }
}

/// Evaluates a constant expression of the syntax tree: lowered with the parameters' values
/// (`params`), then evaluated in the [`ConstEnv`].
pub fn eval_const(e: &super::ast::Expr, params: &dyn Fn(&str) -> Option<Val>) -> EvalResult {
    let x = super::lower::constant(e, params).map_err(lowering)?;
    eval(&mut ConstEnv, &x)
}

/// [`eval_const`] for an interpolated string.
pub fn eval_const_str(
    s: &super::ast::StrLit,
    params: &dyn Fn(&str) -> Option<Val>,
) -> Result<String, EvalError> {
    let parts = super::lower::constant_str(s, params).map_err(lowering)?;
    eval_str(&mut ConstEnv, &parts)
}

fn lowering((offset, message): super::lower::Error) -> EvalError {
    EvalError {
        span: (offset, offset),
        message,
    }
}
