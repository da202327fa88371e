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
//! The operators themselves are [`crate::value::operators`]'s: they take values, not syntax, so
//! the e-graph's compiled guards (`egraph::eval`) evaluate with exactly the same semantics.

use super::builtins::{Builtin, Pure, Query};
use super::compiled::{Build, Callee, Exists, Expr, Slot, StrPart, ValueRef, Var};
use crate::ir::DType;
use crate::value::operators::{
    as_bool, binary_values, err, logic, num, unary, BinOp, EvalError, EvalResult, Span,
};
use crate::value::Val;

/// What an expression can ask about its surroundings. Parameters, stages and dtypes were
/// resolved when the expression was lowered; what is left is the match and the program.
pub trait Env {
    /// `%x` or `%x.field`.
    fn value(&mut self, v: &ValueRef) -> EvalResult;
    /// `$x`.
    fn capture(&self, slot: Slot) -> Option<Val>;
    /// A program query. `None` when this environment does not know it.
    fn query(&mut self, func: Query, args: &[Val], span: Span) -> Option<EvalResult>;
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
    /// How `v` reads in `str(v)` and in an interpolated string. A type or an op is a number
    /// into the program: only an environment that has the program can print what it stands for.
    fn text(&self, v: &Val) -> String {
        v.display()
    }
}

pub fn eval(env: &mut dyn Env, e: &Expr) -> EvalResult {
    match e {
        Expr::Lit(v, _) => Ok(v.clone()),
        Expr::Str(parts, _) => eval_str(env, parts).map(Val::Str),
        Expr::Var(Var::Unknown(name, span)) => err(*span, format!("unknown name `{name}`")),
        Expr::Var(Var::Value(v)) => env.value(v),
        Expr::Var(Var::Capture { slot, name, span }) => env
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
            if let (BinOp::In, Expr::List(items, _)) = (op, &**r) {
                // `x in [a, b]` of literals (`dtype(%g) in [float32, float64]`) is compared
                // item by item: a guard need not build the list at every match.
                if items.iter().all(|x| matches!(x, Expr::Lit(..))) {
                    let a = eval(env, l)?;
                    return Ok(Val::Bool(
                        items
                            .iter()
                            .any(|x| matches!(x, Expr::Lit(v, _) if v.loose_eq(&a))),
                    ));
                }
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
            let vals: Vec<Val> = args
                .iter()
                .map(|a| eval(env, a))
                .collect::<Result<_, _>>()?;
            match func {
                Callee::Builtin(Builtin::Pure(f), _) => pure_function(env, *f, &vals, *span),
                Callee::Builtin(Builtin::Query(q), func_span) => {
                    match env.query(*q, &vals, *span) {
                        Some(r) => r,
                        None => unknown_function(q.name(), *func_span),
                    }
                }
                // `uses(%v in STAGE)`: the stage restricts the count; it is not a stage test.
                Callee::UsesIn(func_span) => match &vals[..] {
                    [_, Val::Stage(_)] => match env.query(Query::Uses, &vals, *span) {
                        Some(r) => r,
                        None => unknown_function(Query::Uses.name(), *func_span),
                    },
                    _ => err(
                        args.last().map_or(*span, Expr::span),
                        format!(
                            "`uses(%v in STAGE)` needs a stage, found {}",
                            vals.last()
                                .map_or_else(|| "nothing".to_string(), Val::a_kind)
                        ),
                    ),
                },
                Callee::Unknown(name, func_span) => unknown_function(name, *func_span),
            }
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
            StrPart::Expr(e) => {
                let piece = match eval(env, e)? {
                    Val::Str(s) => s,
                    v => env.text(&v),
                };
                if out.len() + piece.len() > crate::value::operators::MAX_STRING_BYTES {
                    return err(
                        e.span(),
                        crate::value::operators::string_too_long(out.len() + piece.len()),
                    );
                }
                out.push_str(&piece);
            }
        }
    }
    Ok(out)
}

/// Dtype names a rule may write: the long attribute forms (`float32`) and the short type forms
/// (`f32`).
pub fn dtype_name(s: &str) -> Option<DType> {
    DType::parse(s)
}

/// A pure builtin applied to evaluated arguments (`env` only says how a value reads, for `str`).
fn pure_function(env: &dyn Env, f: Pure, a: &[Val], span: Span) -> EvalResult {
    use Pure as B;
    match (f, a) {
        (B::Len, [Val::List(v)]) => Ok(Val::Int(v.len() as i64)),
        (B::Index, [Val::List(v), Val::Int(i)]) => {
            let at = if *i < 0 { v.len() as i64 + i } else { *i };
            match usize::try_from(at).ok().and_then(|k| v.get(k)) {
                Some(x) => Ok(x.clone()),
                None => crate::value::operators::err(
                    span,
                    format!(
                        "index {i} is out of range for a list of {} element(s)",
                        v.len()
                    ),
                ),
            }
        }
        (B::Len, [Val::Str(s)]) => Ok(Val::Int(s.chars().count() as i64)),
        // -2^63 ≤ x < 2^63: the floats that truncate to an int (a cast would saturate).
        (B::Int, [Val::Float(x)])
            if (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(x) =>
        {
            Ok(Val::Int(*x as i64))
        }
        (B::Int, [Val::Float(x)]) => err(
            span,
            format!(
                "int({}): out of the range of an int",
                Val::Float(*x).display()
            ),
        ),
        (B::Int, [Val::Int(x)]) => Ok(Val::Int(*x)),
        (B::Float, [Val::Int(x)]) => Ok(Val::Float(*x as f64)),
        (B::Float, [Val::Float(x)]) => Ok(Val::Float(*x)),
        (B::Str, [v]) => Ok(Val::Str(env.text(v))),
        (B::Prod, [Val::List(v)]) => v.iter().try_fold(Val::Int(1), |acc, x| {
            binary_values(BinOp::Mul, acc, x.clone(), span)
        }),
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
                "bad arguments to `{}`: {}; it takes {}",
                f.name(),
                match a {
                    [] => "none".to_string(),
                    a => a.iter().map(|v| v.a_kind()).collect::<Vec<_>>().join(", "),
                },
                f.takes()
            ),
        ),
    }
}

fn binary(env: &mut dyn Env, op: BinOp, a: Val, b: Val, span: Span) -> EvalResult {
    // `%v in STAGE` asks the program for `%v`'s stage; every other operator needs only values.
    if let (BinOp::In, Val::Stage(s), Val::Value(_) | Val::Op(_) | Val::NullValue) = (op, &b, &a) {
        let r = match env.query(Query::Role, std::slice::from_ref(&a), span) {
            Some(r) => r?,
            None => return err(span, "stages are only known while matching a program"),
        };
        return Ok(Val::Bool(r.loose_eq(&Val::Int(*s))));
    }
    binary_values(op, a, b, span)
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
    fn query(&mut self, func: Query, _args: &[Val], span: Span) -> Option<EvalResult> {
        Some(err(
            span,
            format!("`{}` asks the program; it cannot be used here", func.name()),
        ))
    }
}

/// Evaluates a constant expression of the syntax tree: lowered with the parameters' values
/// (`params`), then evaluated in the [`ConstEnv`].
pub fn eval_const(e: &super::ast::Expr, params: &dyn Fn(&str) -> Option<Val>) -> EvalResult {
    eval(&mut ConstEnv, &super::constant::constant(e, params))
}

/// Whether a constant of the syntax tree names (as a bare name) something `named` holds: a
/// parameter whose declaration or value is faulty, whose own error is reported, so the constant
/// is not evaluated.
pub fn mentions(e: &super::ast::Expr, named: &dyn Fn(&str) -> bool) -> bool {
    bare_name(e, named).is_some()
}

/// The first bare name of a constant of the syntax tree that `named` holds.
pub fn bare_name(e: &super::ast::Expr, named: &dyn Fn(&str) -> bool) -> Option<super::ast::Ident> {
    let mut found = None;
    e.any(&mut |x| match x {
        super::ast::Expr::Var(super::ast::Var::Bare(i)) if named(&i.name) => {
            found = Some(i.clone());
            true
        }
        _ => false,
    });
    found
}

/// [`eval_const`] for an interpolated string.
pub fn eval_const_str(
    s: &super::ast::StrLit,
    params: &dyn Fn(&str) -> Option<Val>,
) -> Result<String, EvalError> {
    eval_str(&mut ConstEnv, &super::constant::constant_str(s, params))
}
