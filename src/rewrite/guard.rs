//! A rule's guards as the matcher tests them: each `where` clause compiled once per run into a
//! [`Test`], whose common shapes are answered straight from the match and the program.
//!
//! A guard is evaluated at every complete match of its rule, hundreds of thousands of times in a
//! large program, and the shipped rules' guards are nearly all built from a few shapes: `and`,
//! `or` and `not` over `%v in STAGE`, `has_attr(%o, "key")`, `uses(%v) == n`,
//! `dtype(%v) in [..]` and `exists(...)`, plus parameter tests (`rank < 0`) that no match can
//! change. The general evaluator ([`crate::rules::eval`]) computes each of those through
//! `Val`s: argument vectors, cloned strings and bindings, every one allocated and dropped per
//! match. A [`Test`] reads the bindings and the program in place instead, and evaluates a
//! sub-expression that needs nothing from the match once, when it is compiled.
//!
//! It never decides differently from the evaluator: each specialised node answers only when the
//! bindings have the form it reads (a bound value or op), and otherwise hands the whole
//! sub-expression to the evaluator, which gives the value or the error it always gave. The
//! connectives decide as the evaluator's `and`, `or` and `not` do (`value::operators::logic`),
//! and a non-bool operand fails through the same operators, with the same message at the same
//! span.

use super::runtime::{as_op, as_value, stage_of, use_count, RtEnv};
use crate::rules::builtins::{Builtin, Query};
use crate::rules::compiled::{Callee, Exists, Expr, StrPart, ValueRef, Var};
use crate::rules::eval::{eval, ConstEnv, Env};
use crate::value::operators::{as_bool, binary_values, unary, BinOp, EvalError, Span, UnOp};
use crate::value::Val;

/// One guard, or a part of one, ready to test a match.
#[derive(Debug)]
pub enum Test<'r> {
    /// A sub-expression that needs nothing from the match (parameters are literals once
    /// lowered: `rank < 0`), evaluated when compiled.
    Const(Val),
    /// `l and r`, `l or r`.
    Logic {
        op: BinOp,
        l: Box<Test<'r>>,
        r: Box<Test<'r>>,
        l_span: Span,
        r_span: Span,
    },
    /// `not e`.
    Not { e: Box<Test<'r>>, span: Span },
    /// `%v in STAGE`: the stage of the op defining `%v` (or of the op `%v` names).
    InStage {
        v: &'r ValueRef,
        stage: i64,
        whole: &'r Expr,
    },
    /// `has_attr(%o, "key")`.
    HasAttr {
        o: &'r ValueRef,
        key: &'r str,
        whole: &'r Expr,
    },
    /// `uses(%v) CMP n` or `uses(%v in STAGE) CMP n`.
    Uses {
        v: &'r ValueRef,
        stage: Option<i64>,
        cmp: BinOp,
        n: i64,
        span: Span,
        whole: &'r Expr,
    },
    /// `dtype(%v) in [d1, d2, ..]` of literal dtypes.
    DTypeIn {
        v: &'r ValueRef,
        items: &'r [Expr],
        whole: &'r Expr,
    },
    /// `exists(...)`.
    Exists(&'r Exists),
    /// Anything else: the evaluator's.
    Eval(&'r Expr),
}

impl<'r> Test<'r> {
    /// The test of guard expression `e`.
    pub fn compile(e: &'r Expr) -> Test<'r> {
        if e.is_fixed() {
            // Needs nothing from a match: its value (or its error, kept for when it is
            // evaluated) is the same at every match.
            if let Ok(v) = eval(&mut ConstEnv, e) {
                return Test::Const(v);
            }
            return Test::Eval(e);
        }
        match e {
            Expr::Binary {
                op: op @ (BinOp::And | BinOp::Or),
                l,
                r,
                ..
            } => Test::Logic {
                op: *op,
                l: Box::new(Test::compile(l)),
                r: Box::new(Test::compile(r)),
                l_span: l.span(),
                r_span: r.span(),
            },
            Expr::Unary {
                op: UnOp::Not,
                e: inner,
                span,
            } => Test::Not {
                e: Box::new(Test::compile(inner)),
                span: *span,
            },
            Expr::Binary {
                op: BinOp::In,
                l,
                r,
                ..
            } => match (&**l, &**r) {
                (Expr::Var(Var::Value(v)), Expr::Lit(Val::Stage(s), _)) if v.field.is_none() => {
                    Test::InStage {
                        v,
                        stage: *s,
                        whole: e,
                    }
                }
                (
                    Expr::Call {
                        func: Callee::Builtin(Builtin::Query(Query::DType), _),
                        args,
                        ..
                    },
                    Expr::List(items, _),
                ) if items.iter().all(|x| matches!(x, Expr::Lit(..))) => match &args[..] {
                    [Expr::Var(Var::Value(v))] if v.field.is_none() => {
                        Test::DTypeIn { v, items, whole: e }
                    }
                    _ => Test::Eval(e),
                },
                _ => Test::Eval(e),
            },
            Expr::Binary {
                op: cmp @ (BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge),
                l,
                r,
                span,
            } => match (&**l, &**r) {
                (Expr::Call { func, args, .. }, Expr::Lit(Val::Int(n), _)) => {
                    let (v, stage) = match (func, &args[..]) {
                        (
                            Callee::Builtin(Builtin::Query(Query::Uses), _),
                            [Expr::Var(Var::Value(v))],
                        ) => (v, None),
                        (
                            Callee::UsesIn(_),
                            [Expr::Var(Var::Value(v)), Expr::Lit(Val::Stage(s), _)],
                        ) => (v, Some(*s)),
                        _ => return Test::Eval(e),
                    };
                    if v.field.is_some() {
                        return Test::Eval(e);
                    }
                    Test::Uses {
                        v,
                        stage,
                        cmp: *cmp,
                        n: *n,
                        span: *span,
                        whole: e,
                    }
                }
                _ => Test::Eval(e),
            },
            Expr::Call {
                func: Callee::Builtin(Builtin::Query(Query::HasAttr), _),
                args,
                ..
            } => match &args[..] {
                [Expr::Var(Var::Value(o)), Expr::Str(parts, _)] if o.field.is_none() => {
                    match &parts[..] {
                        [StrPart::Lit(key)] => Test::HasAttr { o, key, whole: e },
                        _ => Test::Eval(e),
                    }
                }
                _ => Test::Eval(e),
            },
            Expr::Exists(x) => Test::Exists(x),
            _ => Test::Eval(e),
        }
    }

    /// What the guard's expression is at the match `env` holds, as [`eval`] gives it: a bool,
    /// or (`Err`) the value of another kind it evaluated to, which the caller reports.
    pub fn test(&self, env: &mut RtEnv) -> Result<Result<bool, Val>, EvalError> {
        Ok(Ok(match self {
            Test::Const(Val::Bool(b)) => *b,
            Test::Const(v) => return Ok(Err(v.clone())),
            Test::Logic {
                op,
                l,
                r,
                l_span,
                r_span,
            } => {
                // As [`logic`]: the left side decides, or the right side is the answer; either
                // must be a bool.
                let a = match l.test(env)? {
                    Ok(a) => a,
                    Err(v) => as_bool(v, *l_span, op.symbol())?,
                };
                if (*op == BinOp::And && !a) || (*op == BinOp::Or && a) {
                    return Ok(Ok(a));
                }
                match r.test(env)? {
                    Ok(b) => b,
                    Err(v) => as_bool(v, *r_span, op.symbol())?,
                }
            }
            Test::Not { e, span } => match e.test(env)? {
                Ok(b) => !b,
                Err(v) => return Ok(Err(unary(UnOp::Not, v, *span)?)),
            },
            Test::InStage { v, stage, whole } => match env.b.get(v.slot) {
                Some(b @ (Val::Op(_) | Val::Value(_) | Val::NullValue)) => {
                    stage_of(env.m, env.cache, b) == *stage
                }
                _ => return evaluated(env, whole),
            },
            Test::HasAttr { o, key, whole } => {
                let m = &*env.m;
                let Some(op) = env.b.get(o.slot).and_then(|x| as_op(m, x)) else {
                    return evaluated(env, whole);
                };
                m.ctx.attrs(m.main.op_attrs(op)).get(key).is_some()
            }
            Test::Uses {
                v,
                stage,
                cmp,
                n,
                span,
                whole,
            } => {
                let m = &*env.m;
                let Some(Some(x)) = env.b.get(v.slot).and_then(|b| as_value(m, b)) else {
                    return evaluated(env, whole);
                };
                let count = use_count(m, env.cache, x, *stage);
                match binary_values(*cmp, Val::Int(count as i64), Val::Int(*n), *span)? {
                    Val::Bool(b) => b,
                    v => return Ok(Err(v)),
                }
            }
            Test::DTypeIn { v, items, whole } => {
                let m = &*env.m;
                let Some(Some(x)) = env.b.get(v.slot).and_then(|b| as_value(m, b)) else {
                    return evaluated(env, whole);
                };
                let Some((_, d)) = m.ctx.ty(m.main.value_type(x)).tensor() else {
                    return evaluated(env, whole);
                };
                let d = Val::DType(d);
                items
                    .iter()
                    .any(|x| matches!(x, Expr::Lit(v, _) if v.loose_eq(&d)))
            }
            Test::Exists(x) => return classify(env.exists(x)?),
            Test::Eval(e) => return evaluated(env, e),
        }))
    }
}

/// [`Test::test`] of a value: a bool, or the value of another kind.
fn classify(v: Val) -> Result<Result<bool, Val>, EvalError> {
    Ok(match v {
        Val::Bool(b) => Ok(b),
        v => Err(v),
    })
}

/// [`Test::test`] by the evaluator.
fn evaluated(env: &mut RtEnv, e: &Expr) -> Result<Result<bool, Val>, EvalError> {
    classify(eval(env, e)?)
}
