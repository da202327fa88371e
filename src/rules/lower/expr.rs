//! Lowering expressions: names resolved, variables numbered, calls bound to builtins. The walk is
//! [`crate::value::expr::Expr::map`]; a [`Scope`] says what each name becomes.
//!
//! A [`Scope`] is one rule's numbering: each `%x` and each `$x` gets the next [`Slot`] the
//! first time the rule names it, so the engine's bindings are a vector. Parameters are looked up
//! once, here, and become literals (their values are final when rules are lowered), as do stage
//! and dtype names. A constant expression of the loader is lowered in a scope of its own whose
//! `exists(...)` keeps no patterns: evaluating it is an error anyway ([`crate::rules::eval::Env`]).

use super::structural::Ids;
use super::Error;
use crate::rules::ast;
use crate::rules::ast::Syntax;
use crate::rules::builtins::{Builtin, Query};
use crate::rules::compiled::{
    Build, Callee, Exists, Expr, Field, Lowered, Slot, StrPart, ValueRef, Var,
};
use crate::rules::eval::dtype_name;
use crate::rules::plan::{self, BoundSlots, Unreached};
use crate::rules::{stage_role, Val};
use crate::value::expr::{map_parts, MapNames};
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
        map_parts(parts, self)
    }

    pub(super) fn expr(&mut self, e: &ast::Expr) -> Result<Expr, Error> {
        e.map(self)
    }
}

impl MapNames<Syntax, Lowered> for Scope<'_> {
    type Error = Error;

    /// `uses(%v in STAGE)`: the one call whose argument is not evaluated as an expression: the
    /// stage restricts the count, it is not a stage test.
    fn node(&mut self, e: &ast::Expr) -> Option<Result<Expr, Error>> {
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
        Some((|| {
            Ok(Expr::Call {
                func: Callee::UsesIn(func.span),
                args: vec![self.expr(l)?, self.expr(r)?],
                span: *span,
            })
        })())
    }

    fn var(&mut self, v: &ast::Var) -> Result<Expr, Error> {
        Ok(match v {
            // A parameter first, then a stage, then a dtype: as the checker resolves them.
            ast::Var::Bare(i) => match (self.params)(&i.name) {
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
            ast::Var::Value(v) => Expr::Var(Var::Value(self.value_ref(v))),
            ast::Var::Capture(c) => Expr::Var(Var::Capture {
                slot: self.capture_slot(&c.name),
                name: c.name.clone(),
                span: c.span,
            }),
        })
    }

    fn callee(&mut self, f: &ast::Ident) -> Result<Callee, Error> {
        Ok(match Builtin::from_name(&f.name) {
            Some(b) => Callee::Builtin(b, f.span),
            None => Callee::Unknown(f.name.clone(), f.span),
        })
    }

    fn build(&mut self, b: &ast::Build) -> Result<Build, Error> {
        Scope::build(self, b)
    }

    fn exists(&mut self, x: &ast::Exists) -> Result<Box<Exists>, Error> {
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
        Ok(Box::new(Exists {
            id: self.next.take_exists(),
            patterns,
            plan,
            span: x.span,
        }))
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
