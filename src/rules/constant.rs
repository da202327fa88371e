//! The loader's constants lowered: a parameter's default or constraint, an import condition, a
//! `require` count or message, evaluated by [`crate::rules::eval`] with the parameters known so
//! far. The walk is [`crate::value::expr::Expr::map`]; [`Constant`] says what each name becomes.
//!
//! Nothing here can fail. What a constant cannot hold (a program value, a capture, a query, an
//! inline build, `exists(...)`) is kept as a node that fails when it is evaluated, in
//! evaluation order, with the evaluator's words ([`crate::rules::eval::Env`]); a name that is
//! no parameter, stage or dtype becomes [`Var::Unknown`]. Rules are resolved elsewhere
//! ([`crate::rules::resolver`]), against what the rule binds.

use crate::rules::ast::{self, Syntax};
use crate::rules::builtins::{Builtin, Query};
use crate::rules::compiled::{
    Build, Callee, Exists, Expr, Lowered, ResultTypes, StrPart, ValueRef, Var,
};
use crate::rules::eval::dtype_name;
use crate::rules::{stage_role, Val};
use crate::value::expr::{map_parts, MapNames};
use crate::value::operators::BinOp;
use std::convert::Infallible;

/// What the names of a constant become: parameters as `params` gives them.
struct Constant<'a> {
    params: &'a dyn Fn(&str) -> Option<Val>,
}

/// A constant expression with the parameters `params` knows so far.
pub fn constant(e: &ast::Expr, params: &dyn Fn(&str) -> Option<Val>) -> Expr {
    match e.map(&mut Constant { params }) {
        Ok(x) => x,
        Err(never) => match never {},
    }
}

/// [`constant`] for an interpolated string.
pub fn constant_str(s: &ast::StrLit, params: &dyn Fn(&str) -> Option<Val>) -> Vec<StrPart> {
    match map_parts(&s.parts, &mut Constant { params }) {
        Ok(x) => x,
        Err(never) => match never {},
    }
}

impl MapNames<Syntax, Lowered> for Constant<'_> {
    type Error = Infallible;

    /// `uses(%v in STAGE)`: its argument is no expression (the stage restricts the count), and
    /// a constant cannot count uses anyway: the call is kept for the evaluator to refuse.
    fn node(&mut self, e: &ast::Expr) -> Option<Result<Expr, Infallible>> {
        let ast::Expr::Call { func, args, span } = e else {
            return None;
        };
        let (
            Some(Builtin::Query(Query::Uses)),
            [ast::Expr::Binary {
                op: BinOp::In,
                l,
                r,
                ..
            }],
        ) = (Builtin::from_name(&func.name), &args[..])
        else {
            return None;
        };
        Some(Ok(Expr::Call {
            func: Callee::UsesIn(func.span),
            args: vec![constant(l, self.params), constant(r, self.params)],
            span: *span,
        }))
    }

    fn var(&mut self, v: &ast::Var) -> Result<Expr, Infallible> {
        Ok(match v {
            // A parameter first, then a stage, then a dtype: as rules resolve them.
            ast::Var::Bare(i) => match (self.params)(&i.name) {
                Some(v) => Expr::Lit(v, i.span),
                None => match stage_role(&i.name) {
                    Some(r) => Expr::Lit(Val::Stage(r), i.span),
                    None => match dtype_name(&i.name) {
                        Some(d) => Expr::Lit(Val::DType(d), i.span),
                        None if i.name == crate::rules::resolver::NONE_NAME => {
                            Expr::Lit(Val::NullValue, i.span)
                        }
                        None => Expr::Var(Var::Unknown(i.name.clone(), i.span)),
                    },
                },
            },
            // A constant has no slots: the evaluator refuses a program value or a capture
            // before it would read one.
            ast::Var::Value(v) => Expr::Var(Var::Value(ValueRef::new(v, 0))),
            ast::Var::Capture(c) => Expr::Var(Var::Capture {
                slot: 0,
                name: c.name.clone(),
                span: c.span,
            }),
        })
    }

    fn callee(&mut self, f: &ast::Ident) -> Result<Callee, Infallible> {
        Ok(match Builtin::from_name(&f.name) {
            Some(b) => Callee::Builtin(b, f.span),
            None => Callee::Unknown(f.name.clone(), f.span),
        })
    }

    /// An inline build: evaluating it is an error at the build, before any of its operands.
    fn build(&mut self, b: &ast::Build) -> Result<Build, Infallible> {
        Ok(Build {
            id: 0,
            bind: None,
            op: b.op.name.name.clone(),
            spec: None,
            args: Vec::new(),
            named_args: false,
            attrs: Vec::new(),
            types: ResultTypes::Derived,
            span: b.span,
        })
    }

    /// `exists(...)`: evaluating it is an error at the `exists`, so its patterns are not kept.
    fn exists(&mut self, x: &ast::Exists) -> Result<Box<Exists>, Infallible> {
        Ok(Box::new(Exists {
            id: 0,
            patterns: Vec::new(),
            plan: Vec::new(),
            span: x.span,
        }))
    }
}
