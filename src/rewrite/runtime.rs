//! What a rule sees of the program while it is matched and applied: bindings, program queries
//! (`name`, `dtype`, `uses`, ...), and the [`Env`] the shared expression evaluator uses.

use crate::dialect::Dialect;
use crate::ir::{Attr, Module, OpId, Type, ValueDef, ValueId};
use crate::rules::ast::Span;
use crate::rules::eval::{err, Env, EvalResult};
use crate::rules::{RuleSet, Val, ROLE_ATTR, STAGES};
use std::collections::HashMap;

/// Names a match bound: `%x` to values or ops, `$x` to constants.
#[derive(Debug, Clone, Default)]
pub struct Bindings {
    pub values: HashMap<String, Val>,
    pub captures: HashMap<String, Val>,
}

/// Attributes that give a value its name: a parameter's, a feed's, a published output's.
const NAME_ATTRS: &[&str] = &["parameter_name", "name", "output_name"];

/// The op role of `op`, if it has one.
pub fn op_role(m: &Module, op: OpId) -> Option<i64> {
    m.ctx
        .attrs(m.main.op_attrs(op))
        .get(ROLE_ATTR)
        .and_then(Attr::as_i64)
}

/// The value a `Val` denotes in operand position: an op means its first result.
pub fn as_value(m: &Module, v: &Val) -> Option<Option<ValueId>> {
    match v {
        Val::Value(v) => Some(Some(*v)),
        Val::NullValue => Some(None),
        Val::Op(o) if m.main.num_results(*o) > 0 => Some(Some(m.main.result(*o, 0))),
        _ => None,
    }
}

/// The op a `Val` denotes in op position: a value means its defining op.
pub fn as_op(m: &Module, v: &Val) -> Option<OpId> {
    match v {
        Val::Op(o) => Some(*o),
        Val::Value(v) => m.main.defining_op(*v),
        _ => None,
    }
}

/// The evaluator's view of one match.
pub struct RtEnv<'a> {
    pub m: &'a mut Module,
    pub rules: &'a RuleSet,
    pub b: &'a mut Bindings,
}

impl Env for RtEnv<'_> {
    fn param(&self, name: &str) -> Option<Val> {
        self.rules.params.get(name).map(|p| p.value.clone())
    }

    fn stage(&self, name: &str) -> Option<i64> {
        STAGES.iter().find(|(n, _)| *n == name).map(|(_, r)| *r)
    }

    fn value(&mut self, name: &str, field: Option<&str>, span: Span) -> EvalResult {
        let Some(v) = self.b.values.get(name) else {
            return err(span, format!("`{name}` is not bound"));
        };
        match (v, field) {
            (v, None) => Ok(v.clone()),
            (Val::Op(o), Some(f)) => {
                let o = *o;
                let idx = match f.parse::<usize>() {
                    Ok(i) => Some(i),
                    Err(_) => {
                        let n = self.m.ctx.str(self.m.main.op_name(o)).to_string();
                        Dialect::get().spec(&n).and_then(|s| s.result_index(f))
                    }
                };
                match idx {
                    Some(i) if i < self.m.main.num_results(o) => {
                        Ok(Val::Value(self.m.main.result(o, i)))
                    }
                    _ => err(
                        span,
                        format!("the op bound to `{name}` has no result `{f}`"),
                    ),
                }
            }
            (_, Some(f)) => err(span, format!("`{name}` is a value; it has no result `{f}`")),
        }
    }

    fn capture(&self, name: &str) -> Option<Val> {
        self.b.captures.get(name).cloned()
    }

    fn query(&mut self, func: &str, args: &[Val], span: Span) -> Option<EvalResult> {
        query(self.m, func, args, span)
    }
}

fn query(m: &mut Module, func: &str, args: &[Val], span: Span) -> Option<EvalResult> {
    let value_arg = |m: &Module| -> Result<ValueId, crate::rules::eval::EvalError> {
        match args.first().and_then(|a| as_value(m, a)) {
            Some(Some(v)) => Ok(v),
            Some(None) => err(span, format!("`{func}` of an absent operand")),
            None => err(span, format!("`{func}` needs a value")),
        }
    };
    let op_arg = |m: &Module| -> Result<OpId, crate::rules::eval::EvalError> {
        match args.first().and_then(|a| as_op(m, a)) {
            Some(o) => Ok(o),
            None => err(
                span,
                format!("`{func}` needs an op (or a value an op defines)"),
            ),
        }
    };
    let r: EvalResult = (|| match func {
        "name" => {
            let v = value_arg(m)?;
            Ok(Val::Str(value_name(m, v)))
        }
        "dtype" | "shape" | "rank" => {
            let v = value_arg(m)?;
            let ty = m.ctx.ty(m.main.value_type(v)).clone();
            let Some((shape, dtype)) = ty.tensor() else {
                return err(
                    span,
                    format!(
                        "`{func}`: the value's type `{}` is not a tensor",
                        m.ctx.type_text(m.main.value_type(v))
                    ),
                );
            };
            Ok(match func {
                "dtype" => Val::DType(dtype),
                "shape" => Val::List(shape.iter().map(|d| Val::Int(*d)).collect()),
                _ => Val::Int(shape.len() as i64),
            })
        }
        "type" => Ok(Val::Type(m.main.value_type(value_arg(m)?))),
        "uses" => Ok(Val::Int(m.main.num_uses(value_arg(m)?) as i64)),
        "role" => Ok(Val::Int(match args.first() {
            Some(Val::Op(o)) => op_role(m, *o).unwrap_or(-1),
            Some(Val::Value(v)) => m
                .main
                .defining_op(*v)
                .and_then(|o| op_role(m, o))
                .unwrap_or(-1),
            _ => -1,
        })),
        "unused" => {
            let o = op_arg(m)?;
            Ok(Val::Bool(!m.main.results(o).any(|r| m.main.has_uses(r))))
        }
        "op_name" => {
            let o = op_arg(m)?;
            Ok(Val::Str(m.ctx.str(m.main.op_name(o)).to_string()))
        }
        "has_attr" | "attr" => {
            let o = op_arg(m)?;
            let Some(Val::Str(key)) = args.get(1) else {
                return err(span, format!("`{func}` needs an attribute name"));
            };
            let a = m.ctx.attrs(m.main.op_attrs(o)).get(key).cloned();
            if func == "has_attr" {
                return Ok(Val::Bool(a.is_some()));
            }
            match a {
                Some(a) => Ok(Val::from_attr(&a)),
                None => err(span, format!("the op has no attribute `{key}`")),
            }
        }
        "tensor" => {
            let (Some(Val::List(dims)), Some(Val::DType(d))) = (args.first(), args.get(1)) else {
                return err(span, "`tensor` takes a shape list and a dtype");
            };
            let shape: Option<Vec<i64>> = dims
                .iter()
                .map(|x| if let Val::Int(i) = x { Some(*i) } else { None })
                .collect();
            let Some(shape) = shape else {
                return err(span, "`tensor`: the shape must be a list of ints");
            };
            Ok(Val::Type(
                m.ctx.intern_type(Type::Tensor { shape, dtype: *d }),
            ))
        }
        _ => err(span, "not a query"),
    })();
    match func {
        "name" | "dtype" | "shape" | "rank" | "type" | "uses" | "role" | "op_name" | "has_attr"
        | "attr" | "tensor" | "unused" => Some(r),
        _ => None,
    }
}

/// The name a value is known by: a keyword argument's name, or the name attribute of the op
/// that defines it (`builtin.parameter` → its `parameter_name`); empty for anonymous values.
pub fn value_name(m: &Module, v: ValueId) -> String {
    match m.main.value_def(v) {
        ValueDef::Kwarg { block, index } => m
            .ctx
            .str(m.main.block_kwargs(block)[index as usize].name)
            .to_string(),
        ValueDef::Result { op, .. } => {
            let d = m.ctx.attrs(m.main.op_attrs(op));
            NAME_ATTRS
                .iter()
                .find_map(|k| d.get(k).and_then(|a| a.as_str().map(|s| s.into_owned())))
                .unwrap_or_default()
        }
        ValueDef::Arg { .. } => String::new(),
    }
}
