//! The op → kernel table: for each Paddle op the executor computes, a function that reads the
//! op's operands and attributes and calls a kernel.
//!
//! This is the single place that knows how an op's operands and attributes map onto a kernel's
//! arguments (operand *positions* follow the dialect table, `src/dialect/table.rs`, which names
//! them after Paddle's `ops.yaml`). Ops that touch named state, feeds, random generators, lists or
//! other ranks (`pd_op.data`, `builtin.parameter`, `builtin.combine`, `pd_op.uniform`, the
//! collectives) are the interpreter's business and are not in this table.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::exec::dtype::DType;
use crate::exec::error::{KResult, KernelError};
use crate::exec::kernels::{
    activation as act, broadcast, cast, elementwise as ew, matmul, optimizer as opt, reduce, shape,
    softmax as sm,
};
use crate::exec::tensor::{Data, Tensor};
use crate::ir::{Attr, Attrs};
use crate::kbail;

/// One operand as the kernel sees it.
pub enum Input<'a> {
    /// `<<NULL VALUE>>`.
    Absent,
    Tensor(&'a Tensor),
    /// A `builtin.combine` vector.
    List(Vec<&'a Tensor>),
}

/// An op about to run: its operands, attributes and number of results.
pub struct OpCall<'a> {
    pub name: &'a str,
    pub attrs: Attrs<'a>,
    pub inputs: Vec<Input<'a>>,
    pub n_results: usize,
}

/// A kernel entry: computes the op's results (`None` for a result it does not produce).
pub type KernelFn = fn(&OpCall<'_>) -> KResult<Vec<Option<Tensor>>>;

impl<'a> OpCall<'a> {
    /// Operand `i`, which must be present and a tensor.
    pub fn t(&self, i: usize) -> KResult<&'a Tensor> {
        match self.inputs.get(i) {
            Some(Input::Tensor(t)) => Ok(t),
            Some(Input::List(_)) => kbail!("operand {} is a vector, expected a tensor", i),
            _ => kbail!("operand {} is missing", i),
        }
    }

    /// Operand `i` if present.
    pub fn opt(&self, i: usize) -> Option<&'a Tensor> {
        match self.inputs.get(i) {
            Some(Input::Tensor(t)) => Some(t),
            _ => None,
        }
    }

    /// Operand `i` as a vector of tensors (a single tensor counts as a vector of one).
    pub fn list(&self, i: usize) -> KResult<Vec<&'a Tensor>> {
        match self.inputs.get(i) {
            Some(Input::List(v)) => Ok(v.clone()),
            Some(Input::Tensor(t)) => Ok(vec![t]),
            _ => kbail!("operand {} is missing", i),
        }
    }

    pub fn attr(&self, key: &str) -> Option<&'a Attr> {
        self.attrs.get(key)
    }

    pub fn f64_or(&self, key: &str, default: f64) -> KResult<f64> {
        match self.attr(key) {
            None => Ok(default),
            Some(a) => a
                .as_f64()
                .ok_or_else(|| KernelError::new(format!("attribute {key} is not a number"))),
        }
    }

    pub fn bool_or(&self, key: &str, default: bool) -> KResult<bool> {
        match self.attr(key) {
            None => Ok(default),
            Some(a) => a
                .as_bool()
                .ok_or_else(|| KernelError::new(format!("attribute {key} is not a bool"))),
        }
    }

    pub fn i64_or(&self, key: &str, default: i64) -> KResult<i64> {
        match self.attr(key) {
            None => Ok(default),
            Some(a) => a
                .as_i64()
                .ok_or_else(|| KernelError::new(format!("attribute {key} is not an integer"))),
        }
    }

    pub fn i64s(&self, key: &str) -> KResult<Vec<i64>> {
        match self.attr(key) {
            None => Ok(vec![]),
            Some(a) => match a.as_array() {
                Some(items) => items
                    .iter()
                    .map(|v| {
                        v.as_i64().ok_or_else(|| {
                            KernelError::new(format!("attribute {key} holds a non-integer"))
                        })
                    })
                    .collect(),
                None => kbail!("attribute {} is not an array", key),
            },
        }
    }

    /// A dtype attribute; `None` when absent or `Undefined`.
    pub fn dtype(&self, key: &str) -> KResult<Option<DType>> {
        match self.attr(key).and_then(|a| a.as_word()) {
            None | Some("Undefined") => Ok(None),
            Some(w) => match crate::exec::dtype::parse(w) {
                Some(d) => Ok(Some(d)),
                None => kbail!("dtype {} is not supported by the executor", w),
            },
        }
    }
}

fn one(t: Tensor) -> KResult<Vec<Option<Tensor>>> {
    Ok(vec![Some(t)])
}

fn two((a, b): (Tensor, Tensor)) -> KResult<Vec<Option<Tensor>>> {
    Ok(vec![Some(a), Some(b)])
}

fn binary(c: &OpCall<'_>, op: ew::BinaryOp) -> KResult<Vec<Option<Tensor>>> {
    one(ew::binary(op, c.t(0)?, c.t(1)?, c.i64_or("axis", -1)?)?)
}

fn axes_operand(c: &OpCall<'_>, i: usize) -> KResult<Vec<i64>> {
    match c.opt(i) {
        Some(t) => Ok(t.to_i64_vec()),
        None => c.i64s("axis"),
    }
}

fn compare(c: &OpCall<'_>, f: fn(f64, f64) -> bool) -> KResult<Vec<Option<Tensor>>> {
    let (x, y) = (c.t(0)?, c.t(1)?);
    let (s, v) = broadcast::binary_map(
        &x.to_f64_vec(),
        x.shape(),
        &y.to_f64_vec(),
        y.shape(),
        -1,
        f,
    )?;
    one(Tensor::new(s, Data::Bool(v))?)
}

fn scalar_operand_or_attr(c: &OpCall<'_>, i: usize, key: &str, default: f64) -> KResult<f32> {
    match c.opt(i) {
        Some(t) => t.scalar_f32(),
        None => Ok(c.f64_or(key, default)? as f32),
    }
}

fn ce_attrs(c: &OpCall<'_>) -> KResult<sm::CrossEntropyAttrs> {
    Ok(sm::CrossEntropyAttrs {
        soft_label: c.bool_or("soft_label", false)?,
        use_softmax: c.bool_or("use_softmax", true)?,
        ignore_index: c.i64_or("ignore_index", -100)?,
        axis: c.i64_or("axis", -1)?,
    })
}

fn adam_like(c: &OpCall<'_>, w: bool) -> KResult<Vec<Option<Tensor>>> {
    let input = opt::AdamIn {
        param: c.t(0)?,
        grad: c.t(1)?,
        learning_rate: c.t(2)?,
        moment1: c.t(3)?,
        moment2: c.t(4)?,
        moment2_max: c.opt(5),
        beta1_pow: c.t(6)?,
        beta2_pow: c.t(7)?,
        master_param: c.opt(8),
        skip_update: c.opt(9),
        beta1: scalar_operand_or_attr(c, 10, "beta1", 0.9)?,
        beta2: scalar_operand_or_attr(c, 11, "beta2", 0.999)?,
        epsilon: scalar_operand_or_attr(c, 12, "epsilon", 1e-8)?,
    };
    let lr_ratio = c.f64_or("lr_ratio", 1.0)? as f32;
    let at = opt::AdamAttrs {
        multi_precision: c.bool_or("multi_precision", false)?,
        use_global_beta_pow: c.bool_or("use_global_beta_pow", false)?,
        amsgrad: c.bool_or("amsgrad", false)?,
        weight_decay: (w && c.bool_or("with_decay", true)?)
            .then_some((lr_ratio, c.f64_or("coeff", 0.01)? as f32)),
        lr_ratio: w.then_some(lr_ratio),
    };
    let o = opt::adam(&input, at)?;
    Ok(vec![
        Some(o.param),
        Some(o.moment1),
        Some(o.moment2),
        o.moment2_max,
        Some(o.beta1_pow),
        Some(o.beta2_pow),
        o.master_param,
    ])
}

fn inverse_perm(perm: &[i64]) -> Vec<i64> {
    let r = perm.len() as i64;
    let mut inv = vec![0i64; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        let p = p.rem_euclid(r.max(1)) as usize;
        if p < inv.len() {
            inv[p] = i as i64;
        }
    }
    inv
}

/// The table: op name → kernel entry.
pub static KERNELS: &[(&str, KernelFn)] = &[
    ("pd_op.add", |c| binary(c, ew::BinaryOp::Add)),
    ("pd_op.add_", |c| binary(c, ew::BinaryOp::Add)),
    ("pd_op.subtract", |c| binary(c, ew::BinaryOp::Subtract)),
    ("pd_op.multiply", |c| binary(c, ew::BinaryOp::Multiply)),
    ("pd_op.divide", |c| binary(c, ew::BinaryOp::Divide)),
    ("pd_op.elementwise_pow", |c| binary(c, ew::BinaryOp::Pow)),
    ("pd_op.maximum", |c| binary(c, ew::BinaryOp::Maximum)),
    ("pd_op.minimum", |c| binary(c, ew::BinaryOp::Minimum)),
    ("pd_op.remainder", |c| binary(c, ew::BinaryOp::Remainder)),
    ("pd_op.add_grad", |c| {
        two(ew::add_sub_grad(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            c.i64_or("axis", -1)?,
            false,
        )?)
    }),
    ("pd_op.subtract_grad", |c| {
        two(ew::add_sub_grad(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            c.i64_or("axis", -1)?,
            true,
        )?)
    }),
    ("pd_op.multiply_grad", |c| {
        two(ew::multiply_grad(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            c.i64_or("axis", -1)?,
        )?)
    }),
    ("pd_op.divide_grad", |c| {
        two(ew::divide_grad(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            c.t(3)?,
            c.i64_or("axis", -1)?,
        )?)
    }),
    ("pd_op.elementwise_pow_grad", |c| {
        two(ew::pow_grad(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            c.i64_or("axis", -1)?,
        )?)
    }),
    ("pd_op.scale", scale),
    ("pd_op.scale_", scale),
    ("pd_op.relu", |c| one(act::relu(c.t(0)?)?)),
    ("pd_op.relu_grad", |c| {
        one(act::relu_grad(c.t(0)?, c.t(1)?)?)
    }),
    ("pd_op.tanh", |c| one(act::tanh(c.t(0)?)?)),
    ("pd_op.tanh_grad", |c| {
        one(act::tanh_grad(c.t(0)?, c.t(1)?)?)
    }),
    ("pd_op.sigmoid", |c| one(act::sigmoid(c.t(0)?)?)),
    ("pd_op.sigmoid_grad", |c| {
        one(act::sigmoid_grad(c.t(0)?, c.t(1)?)?)
    }),
    ("pd_op.gelu", |c| {
        one(act::gelu(c.t(0)?, c.bool_or("approximate", false)?)?)
    }),
    ("pd_op.gelu_grad", |c| {
        one(act::gelu_grad(
            c.t(0)?,
            c.t(1)?,
            c.bool_or("approximate", false)?,
        )?)
    }),
    ("pd_op.square", |c| one(act::square(c.t(0)?)?)),
    ("pd_op.square_grad", |c| {
        one(act::square_grad(c.t(0)?, c.t(1)?)?)
    }),
    ("pd_op.exp", |c| one(act::exp(c.t(0)?)?)),
    ("pd_op.log", |c| one(act::log(c.t(0)?)?)),
    ("pd_op.sqrt", |c| one(act::sqrt(c.t(0)?)?)),
    ("pd_op.softmax", |c| {
        one(sm::softmax(c.t(0)?, c.i64_or("axis", -1)?)?)
    }),
    ("pd_op.softmax_grad", |c| {
        one(sm::softmax_grad(c.t(0)?, c.t(1)?, c.i64_or("axis", -1)?)?)
    }),
    ("pd_op.cross_entropy_with_softmax", |c| {
        two(sm::cross_entropy_with_softmax(
            c.t(0)?,
            c.t(1)?,
            ce_attrs(c)?,
        )?)
    }),
    ("pd_op.cross_entropy_with_softmax_grad", |c| {
        one(sm::cross_entropy_with_softmax_grad(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            ce_attrs(c)?,
        )?)
    }),
    ("pd_op.matmul", |c| {
        one(matmul::matmul(
            c.t(0)?,
            c.t(1)?,
            c.bool_or("transpose_x", false)?,
            c.bool_or("transpose_y", false)?,
        )?)
    }),
    ("pd_op.matmul_grad", |c| {
        two(matmul::matmul_grad(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            c.bool_or("transpose_x", false)?,
            c.bool_or("transpose_y", false)?,
        )?)
    }),
    ("pd_op.mean", |c| {
        one(reduce::mean(
            c.t(0)?,
            &axes_operand(c, 1)?,
            c.bool_or("keepdim", false)?,
        )?)
    }),
    ("pd_op.sum", |c| {
        one(reduce::sum(
            c.t(0)?,
            &axes_operand(c, 1)?,
            c.bool_or("keepdim", false)?,
            c.dtype("dtype")?,
        )?)
    }),
    ("pd_op.mean_grad", |c| {
        one(reduce::mean_grad(
            c.t(0)?,
            c.t(1)?,
            &axes_operand(c, 2)?,
            c.bool_or("reduce_all", false)?,
        )?)
    }),
    ("pd_op.sum_grad", |c| {
        one(reduce::sum_grad(
            c.t(0)?,
            c.t(1)?,
            &axes_operand(c, 2)?,
            c.bool_or("reduce_all", false)?,
        )?)
    }),
    ("pd_op.add_n", |c| one(ew::add_n(&c.list(0)?)?)),
    ("pd_op.greater_than", |c| compare(c, |a, b| a > b)),
    ("pd_op.less_than", |c| compare(c, |a, b| a < b)),
    ("pd_op.equal", |c| compare(c, |a, b| a == b)),
    ("pd_op.cast", |c| cast_op(c)),
    ("pd_op.cast_", |c| cast_op(c)),
    ("pd_op.assign_out_", |c| {
        one(cast::cast(c.t(0)?, c.t(1)?.dtype()))
    }),
    ("pd_op.full", |c| {
        let dt = c.dtype("dtype")?.unwrap_or(DType::F32);
        one(shape::full(&c.i64s("shape")?, c.f64_or("value", 0.0)?, dt)?)
    }),
    ("pd_op.full_like", |c| {
        let value = match c.opt(1) {
            Some(v) => v.scalar_f32()? as f64,
            None => c.f64_or("value", 0.0)?,
        };
        one(shape::full_like(c.t(0)?, value, c.dtype("dtype")?))
    }),
    ("pd_op.full_int_array", |c| {
        one(shape::full_int_array(
            &c.i64s("value")?,
            c.dtype("dtype")?.unwrap_or(DType::I64),
        ))
    }),
    ("pd_op.reshape", |c| {
        let s = match c.opt(1) {
            Some(t) => t.to_i64_vec(),
            None => c.i64s("shape")?,
        };
        let out = shape::reshape(c.t(0)?, &s)?;
        let mut r = vec![Some(out)];
        r.resize_with(c.n_results.max(1), || None);
        Ok(r)
    }),
    ("pd_op.reshape_grad", |c| {
        let x = c.t(0)?;
        let shape: Vec<i64> = x.shape().iter().map(|&d| d as i64).collect();
        one(shape::reshape(c.t(1)?, &shape)?)
    }),
    ("pd_op.transpose", |c| {
        one(shape::transpose(c.t(0)?, &c.i64s("perm")?)?)
    }),
    ("pd_op.transpose_grad", |c| {
        one(shape::transpose(c.t(0)?, &inverse_perm(&c.i64s("perm")?))?)
    }),
    ("pd_op.slice", |c| {
        let vec_of = |i: usize, key: &str| -> KResult<Vec<i64>> {
            match c.opt(i) {
                Some(t) => Ok(t.to_i64_vec()),
                None => c.i64s(key),
            }
        };
        one(shape::slice(
            c.t(0)?,
            &c.i64s("axes")?,
            &vec_of(1, "starts")?,
            &vec_of(2, "ends")?,
            &c.i64s("decrease_axis").unwrap_or_default(),
        )?)
    }),
    ("pd_op.set_value_with_tensor_", |c| {
        let vec_of = |i: usize, key: &str| -> KResult<Vec<i64>> {
            match c.opt(i) {
                Some(t) => Ok(t.to_i64_vec()),
                None => c.i64s(key),
            }
        };
        let spec = shape::SliceSpec {
            axes: c.i64s("axes")?,
            starts: vec_of(2, "starts")?,
            ends: vec_of(3, "ends")?,
            steps: vec_of(4, "steps")?,
        };
        one(shape::set_value_with_tensor(c.t(0)?, c.t(1)?, &spec)?)
    }),
    ("pd_op.sgd_", |c| {
        let o = opt::sgd(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            c.opt(3),
            c.bool_or("multi_precision", false)?,
        )?;
        Ok(vec![Some(o.param), o.master_param])
    }),
    ("pd_op.momentum_", |c| {
        let l2 = match c.attr("regularization_method").and_then(|a| a.as_str()) {
            Some(m) if m == "l2_decay" => c.f64_or("regularization_coeff", 0.0)? as f32,
            _ => 0.0,
        };
        let at = opt::MomentumAttrs {
            mu: c.f64_or("mu", 0.9)? as f32,
            use_nesterov: c.bool_or("use_nesterov", false)?,
            l2_coeff: l2,
            multi_precision: c.bool_or("multi_precision", false)?,
            rescale_grad: c.f64_or("rescale_grad", 1.0)? as f32,
        };
        let o = opt::momentum(c.t(0)?, c.t(1)?, c.t(2)?, c.t(3)?, c.opt(4), at)?;
        Ok(vec![Some(o.param), Some(o.velocity), o.master_param])
    }),
    ("pd_op.adam_", |c| adam_like(c, false)),
    ("pd_op.adamw_", |c| adam_like(c, true)),
];

fn scale(c: &OpCall<'_>) -> KResult<Vec<Option<Tensor>>> {
    let s = scalar_operand_or_attr(c, 1, "scale", 1.0)?;
    one(ew::scale(
        c.t(0)?,
        s,
        c.f64_or("bias", 0.0)? as f32,
        c.bool_or("bias_after_scale", true)?,
    )?)
}

fn cast_op(c: &OpCall<'_>) -> KResult<Vec<Option<Tensor>>> {
    let x = c.t(0)?;
    one(cast::cast(x, c.dtype("dtype")?.unwrap_or(x.dtype())))
}

/// The kernel for an op name, if the executor has one.
pub fn kernel(name: &str) -> Option<KernelFn> {
    static MAP: OnceLock<HashMap<&'static str, KernelFn>> = OnceLock::new();
    MAP.get_or_init(|| KERNELS.iter().copied().collect())
        .get(name)
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::Dialect;

    #[test]
    fn every_kernel_names_an_op_in_the_dialect_table() {
        for (name, _) in KERNELS {
            assert!(
                Dialect::get().spec(name).is_some() || *name == "pd_op.log",
                "{name} is not in the dialect table"
            );
        }
    }
}
