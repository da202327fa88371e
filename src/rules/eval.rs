//! The one evaluator of rule expressions, for constants (parameter defaults and constraints,
//! import conditions) and for guards and computed attributes during matching.
//!
//! What a name means and what the program says about a value come from an [`Env`]: the
//! constant environment knows only parameters; the engine's environment also knows the match's
//! bindings and the module. Keeping one evaluator means a guard and a parameter constraint can
//! never disagree about what `1 / k_steps` or `x in [a, b]` means.
//!
//! The operators themselves ([`unary`], [`binary_values`], [`logic`], [`pure_function`]) take
//! values, not syntax, so the e-graph's compiled guards (`egraph::eval`) evaluate with exactly
//! these semantics too: integer arithmetic is checked (an overflow is an error at the operator,
//! never a wrapped result), `/` is the real quotient, strings concatenate and compare the same way
//! in both engines.

use super::ast::{BinOp, Expr, Span, StrLit, StrPart, UnOp};
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

/// What an expression can ask about its surroundings.
pub trait Env {
    /// A parameter's value.
    fn param(&self, name: &str) -> Option<Val>;
    /// A stage's op-role number (`backward` → 1).
    fn stage(&self, name: &str) -> Option<i64>;
    /// `%x` or `%x.field`.
    fn value(&mut self, name: &str, field: Option<&str>, span: Span) -> EvalResult;
    /// `$x`.
    fn capture(&self, name: &str) -> Option<Val>;
    /// A built-in function over program values (`name`, `dtype`, `uses`, ...). `None` when the
    /// function is not one of the program queries.
    fn query(&mut self, func: &str, args: &[Val], span: Span) -> Option<EvalResult>;
    /// Builds an op inline; only the engine can.
    fn build(&mut self, b: &super::ast::Build) -> EvalResult {
        err(b.span, "an op can only be built in an action")
    }
    /// `exists(patterns)`: whether ops matching the patterns exist; only the engine can say.
    fn exists(&mut self, _pats: &[super::ast::OpPattern], span: Span) -> EvalResult {
        err(
            span,
            "`exists(...)` asks about the program: it is only available in a rule",
        )
    }
}

pub fn eval(env: &mut dyn Env, e: &Expr) -> EvalResult {
    match e {
        Expr::Int(i, _) => Ok(Val::Int(*i)),
        Expr::Float(f, _) => Ok(Val::Float(*f)),
        Expr::Bool(b, _) => Ok(Val::Bool(*b)),
        Expr::Str(s) => eval_str(env, s).map(Val::Str),
        Expr::Place(p, _) => Ok(Val::Place(p.clone())),
        Expr::Ident(i) => {
            if let Some(v) = env.param(&i.name) {
                Ok(v)
            } else if let Some(r) = env.stage(&i.name) {
                Ok(Val::Stage(r))
            } else if let Some(d) = dtype_name(&i.name) {
                Ok(Val::DType(d))
            } else {
                err(i.span, format!("unknown name `{}`", i.name))
            }
        }
        Expr::Value(v) => env.value(
            &v.name.name,
            v.field.as_ref().map(|f| f.name.as_str()),
            v.span,
        ),
        Expr::Capture(c) => env
            .capture(&c.name)
            .map_or_else(|| err(c.span, format!("`{}` is not bound", c.name)), Ok),
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
        Expr::Call { func, args, span } => {
            if let Some((v, stage)) = uses_in_stage(&func.name, args) {
                // `uses(%v in STAGE)`: the stage restricts the count; it is not a stage test.
                let v = eval(env, v)?;
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
                return match env.query(&func.name, &[v, s], *span) {
                    Some(r) => r,
                    None => err(func.span, format!("unknown function `{}`", func.name)),
                };
            }
            let vals: Vec<Val> = args
                .iter()
                .map(|a| eval(env, a))
                .collect::<Result<_, _>>()?;
            if let Some(r) = pure_function(&func.name, &vals, *span) {
                return r;
            }
            match env.query(&func.name, &vals, *span) {
                Some(r) => r,
                None => err(func.span, format!("unknown function `{}`", func.name)),
            }
        }
        Expr::Build(b) => env.build(b),
        Expr::Exists(p, span) => env.exists(p, *span),
    }
}

pub fn eval_str(env: &mut dyn Env, s: &StrLit) -> Result<String, EvalError> {
    let mut out = String::new();
    for p in &s.parts {
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

/// `uses(%v in STAGE)`: the one call whose argument is not evaluated as an expression. `%v in
/// STAGE` alone tests `%v`'s own stage; inside `uses` it restricts the count to the uses by ops
/// of that stage. Returns the value and stage expressions.
pub fn uses_in_stage<'e>(func: &str, args: &'e [Expr]) -> Option<(&'e Expr, &'e Expr)> {
    match (func, args) {
        (
            "uses",
            [Expr::Binary {
                op: BinOp::In,
                l,
                r,
                ..
            }],
        ) => Some((l, r)),
        _ => None,
    }
}

/// The functions that need nothing but their arguments.
pub const PURE_FUNCTIONS: &[&str] = &["len", "int", "float", "str", "min", "max"];

/// The functions that ask the program (implemented by the engine's environment), with arity.
pub const QUERY_FUNCTIONS: &[(&str, usize)] = &[
    ("name", 1),
    ("dtype", 1),
    ("shape", 1),
    ("rank", 1),
    ("type", 1),
    // `uses(%v)`: every use; `uses(%v in STAGE)`: the uses by ops of that stage.
    ("uses", 1),
    ("role", 1),
    ("op_name", 1),
    ("has_attr", 2),
    ("attr", 2),
    ("tensor", 2),
    // Whether no result of an op (or the op defining a value) has a use.
    ("unused", 1),
    // The scalar a value is known to equal (a `pd_op.full`); equational rules only.
    ("const", 1),
    // A `pd_dist.tensor` value's distribution (empty lists for a dense value):
    // `process_ids(%g)`, `mesh_shape(%g)`, `dims_mapping(%g)`, and `placements(%g)` as written
    // (`["Replicate()"]`, `["Shard(dim=0)"]`, `["Partial(reduce_type=SUM)"]`).
    ("process_ids", 1),
    ("mesh_shape", 1),
    ("dims_mapping", 1),
    ("placements", 1),
];

/// A function of [`PURE_FUNCTIONS`] applied to evaluated arguments; `None` when `f` is not one.
pub fn pure_function(f: &str, a: &[Val], span: Span) -> Option<EvalResult> {
    Some(match (f, a) {
        ("len", [Val::List(v)]) => Ok(Val::Int(v.len() as i64)),
        ("len", [Val::Str(s)]) => Ok(Val::Int(s.chars().count() as i64)),
        ("int", [Val::Float(x)]) => Ok(Val::Int(*x as i64)),
        ("int", [Val::Int(x)]) => Ok(Val::Int(*x)),
        ("float", [Val::Int(x)]) => Ok(Val::Float(*x as f64)),
        ("float", [Val::Float(x)]) => Ok(Val::Float(*x)),
        ("str", [v]) => Ok(Val::Str(v.display())),
        ("min" | "max", [x, y]) => {
            let (Some(p), Some(q)) = (num(x), num(y)) else {
                return Some(err(span, format!("`{f}` needs numbers")));
            };
            let pick_first = if f == "min" { p <= q } else { p >= q };
            Ok(if pick_first { x.clone() } else { y.clone() })
        }
        ("len" | "int" | "float" | "str" | "min" | "max", _) => err(
            span,
            format!(
                "bad arguments to `{f}`: {}",
                a.iter().map(|v| v.kind()).collect::<Vec<_>>().join(", ")
            ),
        ),
        _ => return None,
    })
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
        let r = match env.query("role", std::slice::from_ref(&a), span) {
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

/// An environment with parameters only (defaults, constraints, import conditions).
pub struct ConstEnv<'a> {
    pub params: &'a dyn Fn(&str) -> Option<Val>,
    pub stages: &'a [(&'a str, i64)],
}

impl Env for ConstEnv<'_> {
    fn param(&self, name: &str) -> Option<Val> {
        (self.params)(name)
    }
    fn stage(&self, name: &str) -> Option<i64> {
        self.stages
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, r)| *r)
    }
    fn value(&mut self, name: &str, _field: Option<&str>, span: Span) -> EvalResult {
        err(
            span,
            format!("`{name}` is a program value; it has no value here"),
        )
    }
    fn capture(&self, _name: &str) -> Option<Val> {
        None
    }
    fn query(&mut self, func: &str, _args: &[Val], span: Span) -> Option<EvalResult> {
        QUERY_FUNCTIONS.iter().any(|(f, _)| *f == func).then(|| {
            err(
                span,
                format!("`{func}` asks the program; it cannot be used here"),
            )
        })
    }
}
