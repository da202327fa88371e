//! Evaluating guard and computed-attribute [`Expr`]s against one match.
//!
//! Evaluation is total: anything that cannot be computed (an unknown constant, a missing
//! attribute, arithmetic on a string) is `None`, which makes a guard false and makes a
//! right-hand side that needs the value not apply. Numbers mix freely (`Int op Float` is
//! `Float`; `/` is always `Float`, so `1 / 4` is `0.25`, as a rule author expects).

use super::pattern::{BinOp, Expr, Value};
use crate::ir::{Attr, Context, DType, TypeId};

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

impl Value {
    /// The value of an attribute: numbers, booleans, strings and dtype words become scalars.
    pub fn from_attr(a: &Attr) -> Value {
        match a {
            Attr::Int(i) => Value::Int(*i),
            Attr::Float { value, .. } => Value::Float(*value),
            Attr::Bool(b) => Value::Bool(*b),
            Attr::Str(_) => Value::Str(a.as_str().map(|s| s.into_owned()).unwrap_or_default()),
            Attr::Word(w) => match DType::from_attr_name(w) {
                Some(d) => Value::DType(d),
                None => Value::Attr(a.clone()),
            },
            _ => Value::Attr(a.clone()),
        }
    }

    /// The attribute that stores this value (`None` for a type).
    pub fn to_attr(&self) -> Option<Attr> {
        Some(match self {
            Value::Int(i) => Attr::Int(*i),
            Value::Float(f) => Attr::float(*f),
            Value::Bool(b) => Attr::Bool(*b),
            Value::Str(s) => Attr::string(s),
            Value::DType(d) => Attr::Word(d.attr_name().into()),
            Value::Type(_) => return None,
            Value::Attr(a) => a.clone(),
        })
    }

    fn num(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// Equality across kinds: numbers by value, a dtype equals its attribute word.
    fn equals(&self, other: &Value) -> bool {
        if let (Some(a), Some(b)) = (self.num(), other.num()) {
            return a == b;
        }
        match (self, other) {
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::DType(a), Value::DType(b)) => a == b,
            (Value::Type(a), Value::Type(b)) => a == b,
            (Value::Attr(a), Value::Attr(b)) => a == b,
            _ => false,
        }
    }
}

/// Whether an attribute passes an equality test against a constant (numbers by value).
pub(crate) fn attr_equals(have: &Attr, want: &Attr) -> bool {
    Value::from_attr(have).equals(&Value::from_attr(want))
}

pub(crate) fn eval(e: &Expr, env: &dyn Env) -> Option<Value> {
    Some(match e {
        Expr::Lit(v) => v.clone(),
        Expr::Cap(c) => Value::from_attr(&env.cap(c.0)?),
        Expr::DType(v) => Value::DType(env.ctx().ty(env.var_type(v.0)?).dtype()?),
        Expr::Type(v) => Value::Type(env.ctx().ty(env.var_type(v.0)?).clone()),
        Expr::Const(v) => Value::Float(env.var_const(v.0)?),
        Expr::Attr(l, key) => Value::from_attr(&env.label_attr(l.0, key)?),
        Expr::Neg(a) => match eval(a, env)? {
            Value::Int(i) => Value::Int(i.checked_neg()?),
            Value::Float(f) => Value::Float(-f),
            _ => return None,
        },
        Expr::Not(a) => match eval(a, env)? {
            Value::Bool(b) => Value::Bool(!b),
            _ => return None,
        },
        Expr::Bin(op, a, b) => {
            let (a, b) = (eval(a, env)?, eval(b, env)?);
            binary(*op, &a, &b)?
        }
    })
}

fn binary(op: BinOp, a: &Value, b: &Value) -> Option<Value> {
    use BinOp::*;
    match op {
        Eq => return Some(Value::Bool(a.equals(b))),
        Ne => return Some(Value::Bool(!a.equals(b))),
        And | Or => {
            let (Value::Bool(x), Value::Bool(y)) = (a, b) else {
                return None;
            };
            return Some(Value::Bool(if op == And { *x && *y } else { *x || *y }));
        }
        _ => {}
    }
    if let (Value::Int(x), Value::Int(y)) = (a, b) {
        match op {
            Add => return x.checked_add(*y).map(Value::Int),
            Sub => return x.checked_sub(*y).map(Value::Int),
            Mul => return x.checked_mul(*y).map(Value::Int),
            _ => {}
        }
    }
    let (x, y) = (a.num()?, b.num()?);
    Some(match op {
        Add => Value::Float(x + y),
        Sub => Value::Float(x - y),
        Mul => Value::Float(x * y),
        Div if y != 0.0 => Value::Float(x / y),
        Div => return None,
        Lt => Value::Bool(x < y),
        Le => Value::Bool(x <= y),
        Gt => Value::Bool(x > y),
        Ge => Value::Bool(x >= y),
        Eq | Ne | And | Or => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
