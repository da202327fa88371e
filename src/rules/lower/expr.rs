//! Lowering expressions: names resolved, variables numbered, calls bound to builtins.
//!
//! A [`Scope`] is one rule's numbering: each `%x` and each `$x` gets the next [`Slot`] the
//! first time the rule names it, so the engine's bindings are a vector. Parameters are looked up
//! once, here, and become literals (their values are final when rules are lowered), as do stage
//! and dtype names. A constant expression of the loader is lowered in a scope of its own whose
//! `exists(...)` keeps no patterns: evaluating it is an error anyway ([`crate::rules::eval::Env`]).

use super::structural::Ids;
use super::Error;
use crate::rules::ast;
use crate::rules::builtins::{Builtin, Query};
use crate::rules::compiled::Exists;
use crate::rules::compiled::{Callee, Expr, Field, Slot, StrPart, ValueRef, Var};
use crate::rules::eval::dtype_name;
use crate::rules::plan::{self, BoundSlots, Unreached};
use crate::rules::{stage_role, Val};
use crate::value::operators::BinOp;
use std::collections::HashMap;

/// One rule's slots and the parameters' values.
pub(super) struct Scope<'a> {
    params: &'a dyn Fn(&str) -> Option<Val>,
    /// Declared ops, then the dialect table (builds look their op up here).
    pub(super) ops: crate::rules::decl::OpTable,
    /// Whether patterns (of `exists`) are lowered: false for the loader's constants.
    program: bool,
    values: HashMap<String, Slot>,
    captures: HashMap<String, Slot>,
    /// What each `%x` holds at the point being lowered (an `exists` is planned from it).
    pub(super) bound: BoundSlots,
    /// The ids the next build and `exists` get.
    pub(super) next: Ids,
    /// The pattern an `exists`'s plan does not reach (lowering stops there).
    pub(super) unreached: Option<Unreached>,
}

impl<'a> Scope<'a> {
    pub(super) fn new(params: &'a dyn Fn(&str) -> Option<Val>, program: bool) -> Self {
        Scope {
            params,
            ops: Default::default(),
            program,
            values: HashMap::new(),
            captures: HashMap::new(),
            bound: BoundSlots::default(),
            next: Ids::default(),
            unreached: None,
        }
    }

    /// Slots numbered so far (values and captures share one numbering).
    pub(super) fn slots(&self) -> usize {
        self.values.len() + self.captures.len()
    }

    /// The slot of `%name`.
    pub(super) fn value_slot(&mut self, name: &str) -> Slot {
        let next = self.slots() as Slot;
        slot_of(&mut self.values, name, next)
    }

    /// The slot of `$name`.
    pub(super) fn capture_slot(&mut self, name: &str) -> Slot {
        let next = self.slots() as Slot;
        slot_of(&mut self.captures, name, next)
    }

    pub(super) fn value_ref(&mut self, v: &ast::ValueRef) -> ValueRef {
        ValueRef {
            slot: self.value_slot(&v.name.name),
            name: v.name.name.clone(),
            name_span: v.name.span,
            field: v.field.as_ref().map(|f| Field {
                text: f.name.clone(),
                index: f.name.parse().ok(),
            }),
            span: v.span,
        }
    }

    pub(super) fn str_parts(&mut self, parts: &[ast::StrPart]) -> Result<Vec<StrPart>, Error> {
        parts
            .iter()
            .map(|p| {
                Ok(match p {
                    ast::StrPart::Lit(l) => StrPart::Lit(l.clone()),
                    ast::StrPart::Expr(e) => StrPart::Expr(self.expr(e)?),
                })
            })
            .collect()
    }

    fn boxed(&mut self, e: &ast::Expr) -> Result<Box<Expr>, Error> {
        Ok(Box::new(self.expr(e)?))
    }

    fn exprs(&mut self, es: &[ast::Expr]) -> Result<Vec<Expr>, Error> {
        es.iter().map(|e| self.expr(e)).collect()
    }

    pub(super) fn expr(&mut self, e: &ast::Expr) -> Result<Expr, Error> {
        use ast::Expr as A;
        Ok(match e {
            A::Lit(v, s) => Expr::Lit(v.clone(), *s),
            A::Str(parts, s) => Expr::Str(self.str_parts(parts)?, *s),
            // A parameter first, then a stage, then a dtype: as the checker resolves them.
            A::Var(ast::Var::Bare(i)) => match (self.params)(&i.name) {
                Some(v) => Expr::Lit(v, i.span),
                None => match stage_role(&i.name) {
                    Some(r) => Expr::Lit(Val::Stage(r), i.span),
                    None => match dtype_name(&i.name) {
                        Some(d) => Expr::Lit(Val::DType(d), i.span),
                        None if i.name == crate::rules::check::NONE_NAME => {
                            Expr::Lit(Val::NullValue, i.span)
                        }
                        None => Expr::Var(Var::Unknown(i.name.clone(), i.span)),
                    },
                },
            },
            A::Var(ast::Var::Value(v)) => Expr::Var(Var::Value(self.value_ref(v))),
            A::Var(ast::Var::Capture(c)) => Expr::Var(Var::Capture {
                slot: self.capture_slot(&c.name),
                name: c.name.clone(),
                span: c.span,
            }),
            A::List(items, s) => Expr::List(self.exprs(items)?, *s),
            A::Call { func, args, span } => match (Builtin::from_name(&func.name), &args[..]) {
                // `uses(%v in STAGE)`: the one call whose argument is not evaluated as an
                // expression: the stage restricts the count, it is not a stage test.
                (
                    Some(Builtin::Query(Query::Uses)),
                    [A::Binary {
                        op: BinOp::In,
                        l,
                        r,
                        ..
                    }],
                ) => Expr::Call {
                    func: Callee::UsesIn(func.span),
                    args: vec![self.expr(l)?, self.expr(r)?],
                    span: *span,
                },
                (Some(b), _) => Expr::Call {
                    func: Callee::Builtin(b, func.span),
                    args: self.exprs(args)?,
                    span: *span,
                },
                (None, _) => Expr::Call {
                    func: Callee::Unknown(func.name.clone(), func.span),
                    args: self.exprs(args)?,
                    span: *span,
                },
            },
            A::Unary { op, e, span } => Expr::Unary {
                op: *op,
                e: self.boxed(e)?,
                span: *span,
            },
            A::Binary { op, l, r, span } => Expr::Binary {
                op: *op,
                l: self.boxed(l)?,
                r: self.boxed(r)?,
                span: *span,
            },
            A::If { c, t, e, span } => Expr::If {
                c: self.boxed(c)?,
                t: self.boxed(t)?,
                e: self.boxed(e)?,
                span: *span,
            },
            A::Build(b) => Expr::Build(Box::new(self.build(b)?)),
            A::Exists(x) => {
                let (patterns, plan) = if self.program {
                    let before = self.bound.clone();
                    let patterns: Vec<_> = x
                        .patterns
                        .iter()
                        .map(|p| self.pattern(p))
                        .collect::<Result<_, _>>()?;
                    let plan = plan::of_exists(&patterns, before.clone()).map_err(|j| {
                        let offset = patterns[j].span.0;
                        self.unreached = Some(Unreached::Exists { offset });
                        (offset, String::new())
                    })?;
                    self.bound = before;
                    (patterns, plan)
                } else {
                    (Vec::new(), Vec::new())
                };
                Expr::Exists(Box::new(Exists {
                    id: self.next.take_exists(),
                    patterns,
                    plan,
                    span: x.span,
                }))
            }
        })
    }
}

/// A constant expression of the loader (a parameter's default or constraint, an import
/// condition, a `require` count) lowered with the parameters `params` knows so far. What a
/// constant cannot be (a program value, a query, a build, `exists`) fails when evaluated, in
/// evaluation order; lowering itself fails only on patterns, which a
/// constant scope does not lower.
pub fn constant(e: &ast::Expr, params: &dyn Fn(&str) -> Option<Val>) -> Result<Expr, Error> {
    Scope::new(params, false).expr(e)
}

/// [`constant`] for an interpolated string.
pub fn constant_str(
    s: &ast::StrLit,
    params: &dyn Fn(&str) -> Option<Val>,
) -> Result<Vec<StrPart>, Error> {
    Scope::new(params, false).str_parts(&s.parts)
}

/// `name`'s slot in `names`, numbered `next` the first time it is asked for.
fn slot_of(names: &mut HashMap<String, Slot>, name: &str, next: Slot) -> Slot {
    if let Some(&s) = names.get(name) {
        return s;
    }
    names.insert(name.to_string(), next);
    next
}
