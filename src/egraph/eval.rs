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

use super::pattern::{BinOp, Expr, Read, Value, NO_SPAN};
use crate::ir::{Attr, Context, TypeId};
use crate::value::expr::StrPart;
use crate::value::operators::{binary_values, logic, unary};

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
        Expr::Lit(v, _) => v.clone(),
        Expr::Var(Read::Cap(c)) => Value::from_attr(&env.cap(c.0)?),
        Expr::Var(Read::DType(v)) => Value::DType(env.ctx().ty(env.var_type(v.0)?).dtype()?),
        Expr::Var(Read::Type(v)) => Value::Type(env.var_type(v.0)?),
        Expr::Var(Read::Const(v)) => Value::Float(env.var_const(v.0)?),
        Expr::Var(Read::Attr(l, key)) => Value::from_attr(&env.label_attr(l.0, key)?),
        Expr::Unary { op, e, .. } => unary(*op, eval(e, env)?, NO_SPAN).ok()?,
        Expr::Binary {
            op: op @ (BinOp::And | BinOp::Or),
            l,
            r,
            ..
        } => {
            let r = || eval(r, env).map(|v| (v, NO_SPAN)).ok_or_else(undefined);
            logic(*op, (eval(l, env)?, NO_SPAN), r).ok()?
        }
        Expr::Binary { op, l, r, .. } => {
            binary_values(*op, eval(l, env)?, eval(r, env)?, NO_SPAN).ok()?
        }
        Expr::If { c, t, e, .. } => match eval(c, env)? {
            Value::Bool(true) => eval(t, env)?,
            Value::Bool(false) => eval(e, env)?,
            _ => return None,
        },
        Expr::List(items, _) => {
            Value::List(items.iter().map(|x| eval(x, env)).collect::<Option<_>>()?)
        }
        Expr::Str(parts, _) => {
            let mut out = String::new();
            for p in parts {
                match p {
                    StrPart::Lit(l) => out.push_str(l),
                    StrPart::Expr(x) => out.push_str(&eval(x, env)?.display()),
                }
            }
            Value::Str(out)
        }
        Expr::Call { func: n, .. } | Expr::Exists(n) => match *n {},
        Expr::Build(n) => match **n {},
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
        let e = Expr::int(1).bin(BinOp::Div, Expr::int(4));
        assert_eq!(eval(&e, &env), Some(Value::Float(0.25)));
        let e = Expr::cap(super::super::pattern::Cap(0)).eq(Expr::lit(Value::DType(DType::F32)));
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
        let e = Expr::unary(crate::value::operators::UnOp::Neg, Expr::int(i64::MIN));
        assert_eq!(eval(&e, &env), None);
    }

    #[test]
    fn strings_concatenate_as_in_structural_rules() {
        let env = NoEnv(Context::default());
        let s = |t: &str| Expr::lit(Value::Str(t.into()));
        let e = s("a").add(s("b")).eq(s("ab"));
        assert_eq!(eval(&e, &env), Some(Value::Bool(true)));
    }
}
