//! Evaluating a compiled guard or computed attribute ([`Expr`]) against one e-graph match.
//!
//! This is glue, not a second evaluator: the leaves (captures, `dtype(%x)`, `type(%x)`,
//! `const(%x)`, attributes of labelled ops) are read from the match, and every operator is the
//! rule language's own (`value::operators`: [`unary`], [`binary_values`], [`logic`]), so a guard means
//! the same in an equational rule as in a structural one: checked integer arithmetic, `/` as the
//! real quotient, the same string operators and the same equality.
//!
//! What differs is what an error means. A structural rule's guard that cannot be evaluated stops
//! the rewrite with an error at the rule; an e-graph search cannot stop mid-saturation, so here
//! anything that cannot be computed (a constant that is not known, a missing attribute, a string
//! times a number, an integer overflow) is `None`: the guard is false and a right-hand side that
//! needs the value does not apply.

use super::pattern::{BinOp, Expr, Value};
use crate::ir::{Attr, Context, TypeId};
use crate::value::operators::UnOp;
use crate::value::operators::{binary_values, logic, unary};

/// The span given to the shared operators: compiled e-graph expressions have none, and their
/// errors are never shown (see the module docs).
const NO_SPAN: (usize, usize) = (0, 0);

/// What an expression can ask about the match it is evaluated in.
pub(crate) trait Env {
    fn ctx(&self) -> &Context;
    /// The captured attribute `c`.
    fn cap(&self, c: u32) -> Option<Attr>;
    /// The type of the value bound to variable `v`.
    fn var_type(&self, v: u32) -> Option<TypeId>;
    /// The scalar constant of the value bound to variable `v`.
    fn var_const(&self, v: u32) -> Option<f64>;
    /// Attribute `key` of the op labelled `l`.
    fn label_attr(&self, l: u32, key: &str) -> Option<Attr>;
}

/// Whether an attribute passes an equality test against a constant: the rule language's
/// equality (numbers by value, a dtype equals its attribute word).
pub(crate) fn attr_equals(have: &Attr, want: &Attr) -> bool {
    Value::from_attr(have).loose_eq(&Value::from_attr(want))
}

pub(crate) fn eval(e: &Expr, env: &dyn Env) -> Option<Value> {
    Some(match e {
        Expr::Lit(v) => v.clone(),
        Expr::Cap(c) => Value::from_attr(&env.cap(c.0)?),
        Expr::DType(v) => Value::DType(env.ctx().ty(env.var_type(v.0)?).dtype()?),
        Expr::Type(v) => Value::Type(env.var_type(v.0)?),
        Expr::Const(v) => Value::Float(env.var_const(v.0)?),
        Expr::Attr(l, key) => Value::from_attr(&env.label_attr(l.0, key)?),
        Expr::Neg(a) => unary(UnOp::Neg, eval(a, env)?, NO_SPAN).ok()?,
        Expr::Not(a) => unary(UnOp::Not, eval(a, env)?, NO_SPAN).ok()?,
        Expr::Bin(op @ (BinOp::And | BinOp::Or), a, b) => {
            let r = || eval(b, env).map(|v| (v, NO_SPAN)).ok_or_else(undefined);
            logic(*op, (eval(a, env)?, NO_SPAN), r).ok()?
        }
        Expr::Bin(op, a, b) => binary_values(*op, eval(a, env)?, eval(b, env)?, NO_SPAN).ok()?,
    })
}

/// The error standing for an undefined operand of `and`/`or` (never shown).
fn undefined() -> crate::value::operators::EvalError {
    crate::value::operators::EvalError {
        span: NO_SPAN,
        message: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::DType;

    struct NoEnv(Context);
    impl Env for NoEnv {
        fn ctx(&self) -> &Context {
            &self.0
        }
        fn cap(&self, c: u32) -> Option<Attr> {
            (c == 0).then(|| Attr::Word("float32".into()))
        }
        fn var_type(&self, _: u32) -> Option<TypeId> {
            None
        }
        fn var_const(&self, _: u32) -> Option<f64> {
            None
        }
        fn label_attr(&self, _: u32, _: &str) -> Option<Attr> {
            None
        }
    }

    #[test]
    fn arithmetic_and_comparisons() {
        let env = NoEnv(Context::default());
        let e = Expr::int(1).mul(Expr::float(0.25));
        assert_eq!(eval(&e, &env), Some(Value::Float(0.25)));
        let e = Expr::Bin(BinOp::Div, Box::new(Expr::int(1)), Box::new(Expr::int(4)));
        assert_eq!(eval(&e, &env), Some(Value::Float(0.25)));
        let e = Expr::Cap(super::super::pattern::Cap(0)).eq(Expr::Lit(Value::DType(DType::F32)));
        assert_eq!(eval(&e, &env), Some(Value::Bool(true)));
        // An unknown constant makes the whole guard undefined.
        let e = Expr::konst(super::super::pattern::Var(0)).eq(Expr::int(1));
        assert_eq!(eval(&e, &env), None);
        assert!(attr_equals(&Attr::Int(0), &Attr::float(0.0)));
        assert!(!attr_equals(&Attr::Int(0), &Attr::Bool(false)));
    }

    #[test]
    fn integer_overflow_is_undefined_not_wrapped() {
        let env = NoEnv(Context::default());
        let e = Expr::int(i64::MAX).add(Expr::int(1));
        assert_eq!(eval(&e, &env), None);
        let e = Expr::Neg(Box::new(Expr::int(i64::MIN)));
        assert_eq!(eval(&e, &env), None);
    }

    #[test]
    fn strings_concatenate_as_in_structural_rules() {
        let env = NoEnv(Context::default());
        let s = |t: &str| Expr::Lit(Value::Str(t.into()));
        let e = s("a").add(s("b")).eq(s("ab"));
        assert_eq!(eval(&e, &env), Some(Value::Bool(true)));
    }
}
