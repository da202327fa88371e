//! The op table: how the executor runs each op it runs, looked up once by name ([`exec_of`]).
//!
//! Most ops are kernels: a function of the op's operands and attributes on one rank
//! ([`Exec::Kernel`]; [`Kernel::Vectors`] for ops with a vector among their results). This file is
//! the single place that knows how an op's operands and attributes map onto a kernel's arguments
//! (operand *positions* follow the dialect table, `src/dialect/table.rs`, which names them after
//! Paddle's `ops.yaml`). The others act on the run's context rather than on their operands alone
//! ([`Exec::Context`]): the scope of persistables (`pd_op.data`, `builtin.parameter`, the
//! protocol's scope writers), the feeds, the random generator (`pd_op.uniform`), every rank at
//! once (the collectives), vectors of values (`builtin.combine`, `builtin.split`) and regions
//! (`pd_op.if`, `pd_op.while`). The table names them too; the interpreter, which holds that
//! context, runs them.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::dialect::protocol::scope_writer_name_attr;
use crate::dialect::{Dialect, Effect};
use crate::exec::dtype::DType;
use crate::exec::error::{KResult, KernelError};
use crate::exec::kernels::{
    activation as act, adaptive, amp, batch_norm as bn, bilinear_form, broadcast, cast, coalesce,
    conv, conv3d, conv_transpose, ctc, cumsum, dropout, einsum, elementwise as ew, flatten,
    gather_scatter as gs, gemm_epilogue, group_norm as gn, index, index_put, interp, join,
    layer_norm as ln, loss, matmul, maxout, norm, optimizer as opt, pad, piecewise as pw,
    pixel_shuffle, pool, pool3d, prelu, reduce, reorder, repeat, rnn, shape, softmax as sm,
    spectral_norm as sn, topk, trig, unfold,
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
    pub attrs: Attrs<'a>,
    /// The op's definition: an attribute the op lacks reads as the definition's default.
    pub spec: Option<&'static crate::dialect::OpSpec>,
    pub inputs: Vec<Input<'a>>,
    pub n_results: usize,
}

/// A kernel entry: computes the op's results (`None` for a result it does not produce).
type KernelFn = fn(&OpCall<'_>) -> KResult<Vec<Option<Tensor>>>;

/// One result of an op some of whose results are vectors of tensors (`split`'s `out`).
pub enum Out {
    Tensor(Tensor),
    List(Vec<Tensor>),
}

/// A kernel entry of [`VECTOR_KERNELS`]: like [`KernelFn`], for ops with vector results.
type VectorKernelFn = fn(&OpCall<'_>) -> KResult<Vec<Option<Out>>>;

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

    /// Attribute `key`, or, when the op lacks it, its definition's default: the value Paddle's
    /// builder gives and irw's JSON writer writes ([`crate::dialect::AttrSpec::default_value`]),
    /// so a run computes what Paddle will.
    pub fn attr(&self, key: &str) -> Option<&'a Attr> {
        self.attrs
            .get(key)
            .or_else(|| self.definition(key)?.default_value())
    }

    fn definition(&self, key: &str) -> Option<&'static crate::dialect::AttrSpec> {
        self.spec?.attrs.iter().find(|a| a.name == key)
    }

    /// What a kernel reading attribute `key`, which [`Self::attr`] does not have, gets: its own
    /// `fallback` for an attribute outside the op's definition, and an error for one the
    /// definition requires (no default): Paddle cannot run the op, and irw does not guess.
    fn lacking<T>(&self, key: &str, fallback: T) -> KResult<T> {
        match self.definition(key) {
            Some(a) if a.required() => Err(KernelError::new(crate::dialect::missing_message(a))),
            _ => Ok(fallback),
        }
    }

    fn f64_or(&self, key: &str, default: f64) -> KResult<f64> {
        match self.attr(key) {
            None => self.lacking(key, default),
            Some(a) => a
                .as_f64()
                .ok_or_else(|| KernelError::new(format!("attribute {key} is not a number"))),
        }
    }

    fn bool_or(&self, key: &str, default: bool) -> KResult<bool> {
        match self.attr(key) {
            None => self.lacking(key, default),
            Some(a) => a
                .as_bool()
                .ok_or_else(|| KernelError::new(format!("attribute {key} is not a bool"))),
        }
    }

    fn i64_or(&self, key: &str, default: i64) -> KResult<i64> {
        match self.attr(key) {
            None => self.lacking(key, default),
            Some(a) => a
                .as_i64()
                .ok_or_else(|| KernelError::new(format!("attribute {key} is not an integer"))),
        }
    }

    pub fn i64s(&self, key: &str) -> KResult<Vec<i64>> {
        match self.attr(key) {
            None => self.lacking(key, vec![]),
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
        match self.attr(key).map(|a| a.as_word()) {
            None => self.lacking(key, None),
            Some(None | Some("Undefined")) => Ok(None),
            Some(Some(w)) => match crate::exec::dtype::parse(w) {
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

fn vector(ts: Vec<Tensor>) -> KResult<Vec<Option<Out>>> {
    Ok(vec![Some(Out::List(ts))])
}

/// An integer given as operand `i` (a one-element tensor, e.g. `concat`'s `axis` from a
/// `full`) or, when the operand is absent, as attribute `key`.
fn int_operand_or_attr(c: &OpCall<'_>, i: usize, key: &str, default: i64) -> KResult<i64> {
    match c.opt(i) {
        Some(t) if t.numel() == 1 => Ok(t.to_i64_vec()[0]),
        Some(t) => kbail!(
            "operand {} ({}) must have one element, has shape {:?}",
            i,
            key,
            t.shape()
        ),
        None => c.i64_or(key, default),
    }
}

/// An integer list given as operand `i` (an int tensor, e.g. from `full_int_array`) or, when
/// the operand is absent, as attribute `key`.
fn ints_operand_or_attr(c: &OpCall<'_>, i: usize, key: &str) -> KResult<Vec<i64>> {
    match c.opt(i) {
        Some(t) => Ok(t.to_i64_vec()),
        None => c.i64s(key),
    }
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

/// The kernels: op name → kernel entry.
static KERNELS: &[(&str, KernelFn)] = &[
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
    ("pd_op.add_double_grad", |c| {
        Ok(vec![ew::add_double_grad(
            c.t(1)?,
            c.opt(2),
            c.opt(3),
            c.i64_or("axis", -1)?,
        )?])
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
    ("pd_op.maximum_grad", |c| {
        two(ew::extremum_grad(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            c.i64_or("axis", -1)?,
            true,
        )?)
    }),
    ("pd_op.minimum_grad", |c| {
        two(ew::extremum_grad(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            c.i64_or("axis", -1)?,
            false,
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
    ("pd_op.cos", |c| one(trig::cos(c.t(0)?)?)),
    ("pd_op.cos_grad", |c| one(trig::cos_grad(c.t(0)?, c.t(1)?)?)),
    ("pd_op.sin", |c| one(trig::sin(c.t(0)?)?)),
    ("pd_op.sin_grad", |c| one(trig::sin_grad(c.t(0)?, c.t(1)?)?)),
    ("pd_op.tanh_double_grad", |c| {
        two(act::tanh_double_grad(c.t(0)?, c.t(1)?, c.t(2)?)?)
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
    ("pd_op.exp_grad", |c| one(act::exp_grad(c.t(0)?, c.t(1)?)?)),
    ("pd_op.log", |c| one(act::log(c.t(0)?)?)),
    ("pd_op.log_grad", |c| one(act::log_grad(c.t(0)?, c.t(1)?)?)),
    ("pd_op.sqrt", |c| one(act::sqrt(c.t(0)?)?)),
    ("pd_op.sqrt_grad", |c| {
        one(act::sqrt_grad(c.t(0)?, c.t(1)?)?)
    }),
    ("pd_op.elu", |c| {
        one(act::elu(c.t(0)?, c.f64_or("alpha", 1.0)? as f32)?)
    }),
    ("pd_op.elu_grad", |c| {
        one(act::elu_grad(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            c.f64_or("alpha", 1.0)? as f32,
        )?)
    }),
    ("pd_op.selu", |c| {
        let (scale, alpha) = selu_attrs(c)?;
        one(act::selu(c.t(0)?, scale, alpha)?)
    }),
    ("pd_op.selu_grad", |c| {
        let (scale, alpha) = selu_attrs(c)?;
        one(act::selu_grad(c.t(0)?, c.t(1)?, scale, alpha)?)
    }),
    ("pd_op.softplus", |c| {
        let (beta, threshold) = softplus_attrs(c)?;
        one(act::softplus(c.t(0)?, beta, threshold)?)
    }),
    ("pd_op.softplus_grad", |c| {
        let (beta, threshold) = softplus_attrs(c)?;
        one(act::softplus_grad(c.t(0)?, c.t(1)?, beta, threshold)?)
    }),
    ("pd_op.swish", |c| one(act::swish(c.t(0)?)?)),
    ("pd_op.swish_grad", |c| {
        one(act::swish_grad(c.t(0)?, c.t(1)?)?)
    }),
    ("pd_op.mish", |c| {
        one(act::mish(c.t(0)?, c.f64_or("lambda", 20.0)? as f32)?)
    }),
    ("pd_op.mish_grad", |c| {
        one(act::mish_grad(
            c.t(0)?,
            c.t(1)?,
            c.f64_or("lambda", 20.0)? as f32,
        )?)
    }),
    ("pd_op.leaky_relu", |c| {
        one(pw::leaky_relu(
            c.t(0)?,
            c.f64_or("negative_slope", 0.02)? as f32,
        )?)
    }),
    ("pd_op.leaky_relu_grad", |c| {
        one(pw::leaky_relu_grad(
            c.t(0)?,
            c.t(1)?,
            c.f64_or("negative_slope", 0.02)? as f32,
        )?)
    }),
    ("pd_op.relu6", |c| one(pw::relu6(c.t(0)?)?)),
    ("pd_op.relu6_grad", |c| {
        one(pw::relu6_grad(c.t(0)?, c.t(1)?)?)
    }),
    ("pd_op.hardswish", |c| one(pw::hardswish(c.t(0)?)?)),
    ("pd_op.hardswish_grad", |c| {
        one(pw::hardswish_grad(c.t(0)?, c.t(1)?)?)
    }),
    ("pd_op.hardsigmoid", |c| {
        one(pw::hardsigmoid(
            c.t(0)?,
            c.f64_or("slope", 0.2)? as f32,
            c.f64_or("offset", 0.5)? as f32,
        )?)
    }),
    ("pd_op.hardsigmoid_grad", |c| {
        one(pw::hardsigmoid_grad(
            c.t(0)?,
            c.t(1)?,
            c.f64_or("slope", 0.2)? as f32,
        )?)
    }),
    ("pd_op.abs", |c| one(pw::abs(c.t(0)?)?)),
    ("pd_op.abs_grad", |c| one(pw::abs_grad(c.t(0)?, c.t(1)?)?)),
    ("pd_op.clip", |c| {
        let (min, max) = clip_bounds(c, 1)?;
        one(pw::clip(c.t(0)?, min, max)?)
    }),
    ("pd_op.clip_grad", |c| {
        let (min, max) = clip_bounds(c, 2)?;
        one(pw::clip_grad(c.t(0)?, c.t(1)?, min, max)?)
    }),
    ("pd_op.prelu", |c| {
        one(prelu::prelu(c.t(0)?, c.t(1)?, prelu_mode(c)?)?)
    }),
    ("pd_op.prelu_grad", |c| {
        two(prelu::prelu_grad(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            prelu_mode(c)?,
        )?)
    }),
    ("pd_op.group_norm", |c| {
        let o = gn::group_norm(
            c.t(0)?,
            c.opt(1),
            c.opt(2),
            c.f64_or("epsilon", 1e-5)? as f32,
            c.i64_or("groups", -1)?,
            conv::channels_last(&str_attr(c, "data_format", "NCHW")?)?,
        )?;
        Ok(vec![Some(o.y), Some(o.mean), Some(o.variance)])
    }),
    ("pd_op.group_norm_grad", |c| {
        let g = gn::group_norm_grad(
            c.t(0)?,
            c.opt(1),
            c.opt(2),
            c.t(4)?,
            c.t(5)?,
            c.t(6)?,
            c.f64_or("epsilon", 1e-5)? as f32,
            c.i64_or("groups", -1)?,
            conv::channels_last(&str_attr(c, "data_format", "NCHW")?)?,
        )?;
        Ok(vec![Some(g.x_grad), g.scale_grad, g.bias_grad])
    }),
    ("pd_op.instance_norm", |c| {
        let o = gn::instance_norm(
            c.t(0)?,
            c.opt(1),
            c.opt(2),
            c.f64_or("epsilon", 1e-5)? as f32,
        )?;
        Ok(vec![Some(o.y), Some(o.mean), Some(o.variance)])
    }),
    ("pd_op.instance_norm_grad", |c| {
        let g = gn::instance_norm_grad(c.t(0)?, c.opt(1), c.opt(2), c.t(3)?, c.t(4)?, c.t(5)?)?;
        Ok(vec![Some(g.x_grad), g.scale_grad, g.bias_grad])
    }),
    ("pd_op.hardtanh", |c| {
        let (lo, hi) = hardtanh_bounds(c)?;
        one(pw::hardtanh(c.t(0)?, lo, hi)?)
    }),
    ("pd_op.hardtanh_grad", |c| {
        let (lo, hi) = hardtanh_bounds(c)?;
        one(pw::hardtanh_grad(c.t(0)?, c.t(1)?, lo, hi)?)
    }),
    ("pd_op.softshrink", |c| {
        one(pw::softshrink(c.t(0)?, c.f64_or("threshold", 0.5)? as f32)?)
    }),
    ("pd_op.softshrink_grad", |c| {
        one(pw::softshrink_grad(
            c.t(0)?,
            c.t(1)?,
            c.f64_or("threshold", 0.5)? as f32,
        )?)
    }),
    ("pd_op.hardshrink", |c| {
        one(pw::hardshrink(c.t(0)?, c.f64_or("threshold", 0.5)? as f32)?)
    }),
    ("pd_op.hardshrink_grad", |c| {
        one(pw::hardshrink_grad(
            c.t(0)?,
            c.t(1)?,
            c.f64_or("threshold", 0.5)? as f32,
        )?)
    }),
    ("pd_op.thresholded_relu", |c| {
        one(pw::thresholded_relu(
            c.t(0)?,
            c.f64_or("threshold", 1.0)? as f32,
            c.f64_or("value", 0.0)? as f32,
        )?)
    }),
    ("pd_op.thresholded_relu_grad", |c| {
        one(pw::thresholded_relu_grad(
            c.t(0)?,
            c.t(1)?,
            c.f64_or("threshold", 1.0)? as f32,
        )?)
    }),
    ("pd_op.softsign", |c| one(act::softsign(c.t(0)?)?)),
    ("pd_op.softsign_grad", |c| {
        one(act::softsign_grad(c.t(0)?, c.t(1)?)?)
    }),
    ("pd_op.logsigmoid", |c| one(act::logsigmoid(c.t(0)?)?)),
    ("pd_op.logsigmoid_grad", |c| {
        one(act::logsigmoid_grad(c.t(0)?, c.t(1)?)?)
    }),
    ("pd_op.tanh_shrink", |c| one(act::tanh_shrink(c.t(0)?)?)),
    ("pd_op.tanh_shrink_grad", |c| {
        one(act::tanh_shrink_grad(c.t(0)?, c.t(1)?)?)
    }),
    ("pd_op.celu", |c| {
        one(act::celu(c.t(0)?, c.f64_or("alpha", 1.0)? as f32)?)
    }),
    ("pd_op.celu_grad", |c| {
        one(act::celu_grad(
            c.t(0)?,
            c.t(1)?,
            c.f64_or("alpha", 1.0)? as f32,
        )?)
    }),
    ("pd_op.stanh", |c| {
        let (a, b) = stanh_scales(c)?;
        one(act::stanh(c.t(0)?, a, b)?)
    }),
    ("pd_op.stanh_grad", |c| {
        let (a, b) = stanh_scales(c)?;
        one(act::stanh_grad(c.t(0)?, c.t(1)?, a, b)?)
    }),
    ("pd_op.max", |c| {
        one(reduce::extremum(
            c.t(0)?,
            &axes_operand(c, 1)?,
            c.bool_or("keepdim", false)?,
            true,
        )?)
    }),
    ("pd_op.min", |c| {
        one(reduce::extremum(
            c.t(0)?,
            &axes_operand(c, 1)?,
            c.bool_or("keepdim", false)?,
            false,
        )?)
    }),
    ("pd_op.max_grad", extremum_grad),
    ("pd_op.min_grad", extremum_grad),
    ("pd_op.logsumexp", |c| {
        one(reduce::logsumexp(
            c.t(0)?,
            &c.i64s("axis")?,
            c.bool_or("keepdim", false)?,
            c.bool_or("reduce_all", false)?,
        )?)
    }),
    ("pd_op.logsumexp_grad", |c| {
        one(reduce::logsumexp_grad(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            &c.i64s("axis")?,
            c.bool_or("reduce_all", false)?,
        )?)
    }),
    ("pd_op.mean_all", |c| one(reduce::mean_all(c.t(0)?)?)),
    ("pd_op.mean_all_grad", |c| {
        one(reduce::mean_all_grad(c.t(0)?, c.t(1)?)?)
    }),
    ("pd_op.flip", |c| {
        one(reorder::flip(c.t(0)?, &c.i64s("axis")?)?)
    }),
    ("pd_op.flip_grad", |c| {
        one(reorder::flip(c.t(0)?, &c.i64s("axis")?)?)
    }),
    ("pd_op.roll", |c| {
        one(reorder::roll(
            c.t(0)?,
            &ints_operand_or_attr(c, 1, "shifts")?,
            &c.i64s("axis")?,
        )?)
    }),
    ("pd_op.roll_grad", |c| {
        one(reorder::roll_grad(
            c.t(1)?,
            &ints_operand_or_attr(c, 2, "shifts")?,
            &c.i64s("axis")?,
        )?)
    }),
    ("pd_op.one_hot", |c| {
        one(index::one_hot(
            c.t(0)?,
            int_operand_or_attr(c, 1, "num_classes", -1)?,
        )?)
    }),
    ("pd_op.huber_loss", |c| {
        two(loss::huber_loss(
            c.t(0)?,
            c.t(1)?,
            c.f64_or("delta", 1.0)? as f32,
        )?)
    }),
    ("pd_op.huber_loss_grad", |c| {
        two(loss::huber_loss_grad(
            c.t(0)?,
            c.t(1)?,
            c.f64_or("delta", 1.0)? as f32,
        )?)
    }),
    ("pd_op.sigmoid_cross_entropy_with_logits", |c| {
        one(loss::sigmoid_ce(
            c.t(0)?,
            c.t(1)?,
            c.opt(2),
            sigmoid_ce_attrs(c)?,
        )?)
    }),
    ("pd_op.sigmoid_cross_entropy_with_logits_grad", |c| {
        one(loss::sigmoid_ce_grad(
            c.t(0)?,
            c.t(1)?,
            c.opt(2),
            c.t(3)?,
            sigmoid_ce_attrs(c)?,
        )?)
    }),
    ("pd_op.cumsum", |c| {
        one(cumsum::cumsum(c.t(0)?, &cumsum_attrs(c, 1)?)?)
    }),
    ("pd_op.cumsum_grad", |c| {
        one(cumsum::cumsum_grad(c.t(0)?, c.t(1)?, &cumsum_attrs(c, 2)?)?)
    }),
    ("pd_op.softmax", |c| {
        one(sm::softmax(c.t(0)?, c.i64_or("axis", -1)?)?)
    }),
    ("pd_op.softmax_grad", |c| {
        one(sm::softmax_grad(c.t(0)?, c.t(1)?, c.i64_or("axis", -1)?)?)
    }),
    ("pd_op.log_softmax", |c| {
        one(sm::log_softmax(c.t(0)?, c.i64_or("axis", -1)?)?)
    }),
    ("pd_op.log_softmax_grad", |c| {
        one(sm::log_softmax_grad(
            c.t(0)?,
            c.t(1)?,
            c.i64_or("axis", -1)?,
        )?)
    }),
    ("pd_op.label_smooth", |c| {
        one(sm::label_smooth(
            c.t(0)?,
            c.opt(1),
            c.f64_or("epsilon", 0.0)? as f32,
        )?)
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
    ("pd_op.warpctc", |c| {
        two(ctc::warpctc(
            c.t(0)?,
            c.t(1)?,
            c.opt(2),
            c.opt(3),
            c.i64_or("blank", 0)?,
        )?)
    }),
    ("pd_op.warpctc_grad", |c| {
        one(ctc::warpctc_grad(
            c.t(0)?,
            c.opt(1),
            c.t(2)?,
            c.t(3)?,
            c.bool_or("norm_by_times", false)?,
        )?)
    }),
    ("pd_op.spectral_norm", |c| {
        one(sn::spectral_norm(c.t(0)?, c.t(1)?, c.t(2)?, sn_attrs(c)?)?)
    }),
    ("pd_op.spectral_norm_grad", |c| {
        one(sn::spectral_norm_grad(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            c.t(3)?,
            sn_attrs(c)?,
        )?)
    }),
    ("pd_op.increment", increment),
    ("pd_op.increment_", increment),
    ("pd_op.share_data", |c| one(c.t(0)?.clone())),
    ("pd_op.share_data_", |c| one(c.t(0)?.clone())),
    ("pd_op.norm", |c| {
        two(norm::l2_normalize(
            c.t(0)?,
            c.i64_or("axis", 1)?,
            c.f64_or("epsilon", 1e-10)? as f32,
        )?)
    }),
    ("pd_op.norm_grad", |c| {
        one(norm::l2_normalize_grad(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            c.i64_or("axis", 1)?,
        )?)
    }),
    ("pd_op.index_add", |c| {
        one(index::index_add(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            c.i64_or("axis", 0)?,
        )?)
    }),
    ("pd_op.index_add_grad", |c| {
        two(index::index_add_grad(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            c.i64_or("axis", 0)?,
        )?)
    }),
    ("pd_op.repeat_interleave", |c| {
        one(repeat::repeat_interleave(
            c.t(0)?,
            repeat::Repeats::Each(c.i64_or("repeats", 1)?),
            c.i64_or("axis", 0)?,
        )?)
    }),
    ("pd_op.repeat_interleave_grad", |c| {
        one(repeat::repeat_interleave_grad(
            c.t(0)?,
            repeat::Repeats::Each(c.i64_or("repeats", 1)?),
            c.t(1)?,
            c.i64_or("axis", 0)?,
        )?)
    }),
    ("pd_op.repeat_interleave_with_tensor_index", |c| {
        one(repeat::repeat_interleave(
            c.t(0)?,
            repeat::Repeats::PerIndex(c.t(1)?),
            c.i64_or("axis", 0)?,
        )?)
    }),
    ("pd_op.repeat_interleave_with_tensor_index_grad", |c| {
        one(repeat::repeat_interleave_grad(
            c.t(0)?,
            repeat::Repeats::PerIndex(c.t(1)?),
            c.t(2)?,
            c.i64_or("axis", 0)?,
        )?)
    }),
    ("pd_op.fused_gemm_epilogue", |c| {
        let (out, reserve_space) = gemm_epilogue::fused_gemm_epilogue(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            c.bool_or("trans_x", false)?,
            c.bool_or("trans_y", false)?,
            gemm_epilogue::Activation::forward(&str_attr(c, "activation", "none")?)?,
        )?;
        Ok(vec![Some(out), reserve_space])
    }),
    ("pd_op.fused_gemm_epilogue_grad", |c| {
        let (dx, dy, dbias) = gemm_epilogue::fused_gemm_epilogue_grad(
            c.t(0)?,
            c.t(1)?,
            c.opt(2),
            c.t(3)?,
            c.bool_or("trans_x", false)?,
            c.bool_or("trans_y", false)?,
            gemm_epilogue::Activation::grad(&str_attr(c, "activation_grad", "none")?)?,
        )?;
        Ok(vec![Some(dx), Some(dy), Some(dbias)])
    }),
    ("pd_op.matmul_double_grad", |c| {
        let (dx, dy, ddout) = matmul::matmul_double_grad(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            c.opt(3),
            c.opt(4),
            c.bool_or("transpose_x", false)?,
            c.bool_or("transpose_y", false)?,
        )?;
        Ok(vec![Some(dx), Some(dy), Some(ddout)])
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
    ("pd_op.not_equal", |c| compare(c, |a, b| a != b)),
    ("pd_op.greater_equal", |c| compare(c, |a, b| a >= b)),
    ("pd_op.less_equal", |c| compare(c, |a, b| a <= b)),
    ("pd_op.cast", |c| cast_op(c)),
    ("pd_op.cast_", |c| cast_op(c)),
    ("pd_op.assign_out_", |c| {
        one(cast::cast(c.t(0)?, c.t(1)?.dtype()))
    }),
    ("pd_op.full", |c| {
        let dt = c.dtype("dtype")?.unwrap_or(DType::F32);
        one(shape::full(&c.i64s("shape")?, c.f64_or("value", 0.0)?, dt)?)
    }),
    // In place: the result is written to `output`'s variable (a refill of a buffer).
    ("pd_op.full_", |c| {
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
    ("pd_op.assign_value", assign_value),
    ("pd_op.assign_value_", assign_value),
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
        };
        let o = opt::momentum(c.t(0)?, c.t(1)?, c.t(2)?, c.t(3)?, c.opt(4), at)?;
        Ok(vec![Some(o.param), Some(o.velocity), o.master_param])
    }),
    ("pd_op.rmsprop_", |c| {
        let at = adaptive::RmspropAttrs {
            epsilon: c.f64_or("epsilon", 1e-10)? as f32,
            decay: c.f64_or("decay", 0.9)? as f32,
            momentum: c.f64_or("momentum", 0.0)? as f32,
            centered: c.bool_or("centered", false)?,
            multi_precision: c.bool_or("multi_precision", false)?,
        };
        let o = adaptive::rmsprop(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            c.t(3)?,
            c.t(4)?,
            c.opt(5),
            c.opt(6),
            at,
        )?;
        // An uncentered step leaves a mean_grad operand as it was.
        let mean_grad = o.mean_grad.or_else(|| c.opt(5).cloned());
        Ok(vec![
            Some(o.param),
            Some(o.moment),
            Some(o.mean_square),
            mean_grad,
            o.master_param,
        ])
    }),
    ("pd_op.adagrad_", |c| {
        let (p, m, master) = adaptive::adagrad(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            c.t(3)?,
            c.opt(4),
            c.f64_or("epsilon", 1e-6)? as f32,
            c.bool_or("multi_precision", false)?,
        )?;
        Ok(vec![Some(p), Some(m), master])
    }),
    ("pd_op.adamax_", |c| {
        let at = adaptive::AdamaxAttrs {
            beta1: c.f64_or("beta1", 0.9)? as f32,
            beta2: c.f64_or("beta2", 0.999)? as f32,
            epsilon: c.f64_or("epsilon", 1e-8)? as f32,
            multi_precision: c.bool_or("multi_precision", false)?,
        };
        let o = adaptive::adamax(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            c.t(3)?,
            c.t(4)?,
            c.t(5)?,
            c.opt(6),
            at,
        )?;
        Ok(vec![
            Some(o.param),
            Some(o.moment),
            Some(o.inf_norm),
            o.master_param,
        ])
    }),
    ("pd_op.lamb_", |c| {
        let input = adaptive::LambIn {
            param: c.t(0)?,
            grad: c.t(1)?,
            learning_rate: c.t(2)?,
            moment1: c.t(3)?,
            moment2: c.t(4)?,
            beta1_pow: c.t(5)?,
            beta2_pow: c.t(6)?,
            master_param: c.opt(7),
            skip_update: c.opt(8),
        };
        let at = adaptive::LambAttrs {
            weight_decay: c.f64_or("weight_decay", 0.0)? as f32,
            beta1: c.f64_or("beta1", 0.9)? as f32,
            beta2: c.f64_or("beta2", 0.999)? as f32,
            epsilon: c.f64_or("epsilon", 1e-6)? as f32,
            always_adapt: c.bool_or("always_adapt", false)?,
            multi_precision: c.bool_or("multi_precision", false)?,
        };
        let o = adaptive::lamb(&input, at)?;
        Ok(vec![
            Some(o.param),
            Some(o.moment1),
            Some(o.moment2),
            Some(o.beta1_pow),
            Some(o.beta2_pow),
            o.master_param,
        ])
    }),
    ("pd_op.adam_", |c| adam_like(c, false)),
    ("pd_op.adamw_", |c| adam_like(c, true)),
    ("pd_op.layer_norm", |c| {
        let (o, m, v) = ln::layer_norm(
            c.t(0)?,
            c.opt(1),
            c.opt(2),
            c.f64_or("epsilon", 1e-5)? as f32,
            c.i64_or("begin_norm_axis", 1)?,
        )?;
        Ok(vec![Some(o), Some(m), Some(v)])
    }),
    ("pd_op.layer_norm_grad", |c| {
        let g = ln::layer_norm_grad(
            c.t(0)?,
            c.opt(1),
            c.opt(2),
            c.t(3)?,
            c.t(4)?,
            c.t(5)?,
            c.f64_or("epsilon", 1e-5)? as f32,
            c.i64_or("begin_norm_axis", 1)?,
        )?;
        Ok(vec![Some(g.x_grad), g.scale_grad, g.bias_grad])
    }),
    ("pd_op.squared_l2_norm", |c| {
        one(reduce::squared_l2_norm(c.t(0)?)?)
    }),
    ("pd_op.squared_l2_norm_grad", |c| {
        one(reduce::squared_l2_norm_grad(c.t(0)?, c.t(1)?)?)
    }),
    ("pd_op.stack", |c| {
        one(join::stack(&c.list(0)?, c.i64_or("axis", 0)?)?)
    }),
    ("pd_op.concat", |c| {
        one(join::concat(
            &c.list(0)?,
            int_operand_or_attr(c, 1, "axis", 0)?,
        )?)
    }),
    ("pd_op.rms_norm", |c| {
        two(ln::rms_norm(
            c.t(0)?,
            c.t(1)?,
            &c.i64s("normalized_shape")?,
            c.f64_or("epsilon", 1e-5)? as f32,
        )?)
    }),
    ("pd_op.rms_norm_grad", |c| {
        two(ln::rms_norm_grad(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            c.t(3)?,
            &c.i64s("normalized_shape")?,
        )?)
    }),
    ("pd_op.clip_by_norm", |c| {
        one(reduce::clip_by_norm(
            c.t(0)?,
            c.f64_or("max_norm", 1.0)? as f32,
        )?)
    }),
    ("pd_op.slice_grad", |c| {
        one(shape::slice_grad(
            c.t(0)?,
            c.t(1)?,
            &c.i64s("axes")?,
            &ints_operand_or_attr(c, 2, "starts")?,
            &ints_operand_or_attr(c, 3, "ends")?,
            &c.i64s("decrease_axis")?,
        )?)
    }),
    ("pd_op.gather", |c| {
        one(index::gather(
            c.t(0)?,
            c.t(1)?,
            int_operand_or_attr(c, 2, "axis", 0)?,
        )?)
    }),
    // index_select is gather with a 1-D index.
    ("pd_op.index_select", |c| {
        one(index::gather(c.t(0)?, c.t(1)?, c.i64_or("axis", 0)?)?)
    }),
    ("pd_op.index_select_grad", |c| {
        one(index::gather_grad(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            c.i64_or("axis", 0)?,
        )?)
    }),
    ("pd_op.gather_grad", |c| {
        one(index::gather_grad(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            int_operand_or_attr(c, 3, "axis", 0)?,
        )?)
    }),
    ("pd_op.embedding", |c| {
        one(index::embedding(
            c.t(0)?,
            c.t(1)?,
            c.i64_or("padding_idx", -1)?,
        )?)
    }),
    ("pd_op.embedding_grad", |c| {
        one(index::embedding_grad(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            c.i64_or("padding_idx", -1)?,
        )?)
    }),
    ("pd_op.where", |c| {
        one(index::where_(c.t(0)?, c.t(1)?, c.t(2)?)?)
    }),
    ("pd_op.where_grad", |c| {
        two(index::where_grad(c.t(0)?, c.t(1)?, c.t(2)?, c.t(3)?)?)
    }),
    ("pd_op.nonzero", |c| one(index::nonzero(c.t(0)?)?)),
    ("pd_op.masked_fill", |c| {
        one(index::masked_fill(c.t(0)?, c.t(1)?, c.t(2)?)?)
    }),
    ("pd_op.masked_fill_grad", |c| {
        two(index::masked_fill_grad(c.t(0)?, c.t(1)?, c.t(2)?, c.t(3)?)?)
    }),
    ("pd_op.triu", |c| {
        one(index::triangle(c.t(0)?, c.i64_or("diagonal", 0)?, true)?)
    }),
    ("pd_op.tril", |c| {
        one(index::triangle(c.t(0)?, c.i64_or("diagonal", 0)?, false)?)
    }),
    ("pd_op.triu_grad", |c| {
        one(index::triangle(c.t(0)?, c.i64_or("diagonal", 0)?, true)?)
    }),
    ("pd_op.tril_grad", |c| {
        one(index::triangle(c.t(0)?, c.i64_or("diagonal", 0)?, false)?)
    }),
    ("pd_op.assign", |c| one(c.t(0)?.clone())),
    ("pd_op.expand", |c| {
        one(repeat::expand(
            c.t(0)?,
            &ints_operand_or_attr(c, 1, "shape")?,
        )?)
    }),
    ("pd_op.expand_grad", |c| {
        one(repeat::expand_grad(c.t(0)?, c.t(1)?)?)
    }),
    ("pd_op.tile", |c| {
        one(repeat::tile(
            c.t(0)?,
            &ints_operand_or_attr(c, 1, "repeat_times")?,
        )?)
    }),
    ("pd_op.tile_grad", |c| {
        one(repeat::tile_grad(
            c.t(0)?,
            c.t(1)?,
            &ints_operand_or_attr(c, 2, "repeat_times")?,
        )?)
    }),
    ("pd_op.squeeze", |c| {
        let out = shape::squeeze(c.t(0)?, &ints_operand_or_attr(c, 1, "axis")?)?;
        let mut r = vec![Some(out)];
        r.resize_with(c.n_results.max(1), || None);
        Ok(r)
    }),
    ("pd_op.unsqueeze", |c| {
        let out = shape::unsqueeze(c.t(0)?, &ints_operand_or_attr(c, 1, "axis")?)?;
        let mut r = vec![Some(out)];
        r.resize_with(c.n_results.max(1), || None);
        Ok(r)
    }),
    ("pd_op.squeeze_grad", |c| {
        one(shape::reshape_like(c.t(1)?, c.t(0)?.shape())?)
    }),
    ("pd_op.unsqueeze_grad", |c| {
        one(shape::reshape_like(c.t(1)?, c.t(0)?.shape())?)
    }),
    ("pd_op.arange", |c| {
        let dt = c.dtype("dtype")?.unwrap_or(DType::F64);
        one(shape::arange(c.t(0)?, c.t(1)?, c.t(2)?, dt)?)
    }),
    ("pd_op.full_with_tensor", |c| {
        let dt = c.dtype("dtype")?.unwrap_or(DType::F32);
        one(shape::full_with_tensor(
            c.t(0)?,
            &ints_operand_or_attr(c, 1, "shape")?,
            dt,
        )?)
    }),
    ("pd_op.numel", |c| one(shape::numel_of(c.t(0)?))),
    ("pd_op.shape", |c| one(shape::shape_of(c.t(0)?, DType::I32))),
    ("pd_op.shape64", |c| {
        one(shape::shape_of(c.t(0)?, DType::I64))
    }),
    ("pd_op.pow", |c| {
        one(act::pow(c.t(0)?, c.f64_or("y", 1.0)? as f32)?)
    }),
    ("pd_op.pow_grad", |c| {
        one(act::pow_grad(
            c.t(0)?,
            c.t(1)?,
            c.f64_or("y", -1.0)? as f32,
        )?)
    }),
    ("pd_op.rsqrt", |c| one(act::rsqrt(c.t(0)?)?)),
    ("pd_op.rsqrt_grad", |c| {
        one(act::rsqrt_grad(c.t(0)?, c.t(1)?)?)
    }),
    ("pd_op.silu", |c| one(act::silu(c.t(0)?)?)),
    ("pd_op.silu_grad", |c| {
        one(act::silu_grad(c.t(0)?, c.t(2)?)?)
    }),
    ("pd_op.swiglu", |c| one(act::swiglu(c.t(0)?, c.opt(1))?)),
    ("pd_op.swiglu_grad", |c| {
        let (dx, dy) = act::swiglu_grad(c.t(0)?, c.opt(1), c.t(2)?)?;
        Ok(vec![Some(dx), dy])
    }),
    // ---- convolutional models ----
    ("pd_op.conv2d", conv2d),
    ("pd_op.depthwise_conv2d", conv2d),
    ("pd_op.conv2d_grad", conv2d_grad),
    ("pd_op.depthwise_conv2d_grad", conv2d_grad),
    ("pd_op.conv3d", |c| {
        one(conv3d::conv3d(c.t(0)?, c.t(1)?, &conv3d_attrs(c)?)?)
    }),
    ("pd_op.conv3d_grad", |c| {
        let (dx, dw) = conv3d::conv3d_grad(c.t(0)?, c.t(1)?, c.t(2)?, &conv3d_attrs(c)?)?;
        Ok(vec![Some(dx), Some(dw)])
    }),
    ("pd_op.conv2d_transpose", conv2d_transpose),
    ("pd_op.depthwise_conv2d_transpose", conv2d_transpose),
    ("pd_op.conv2d_transpose_grad", conv2d_transpose_grad),
    (
        "pd_op.depthwise_conv2d_transpose_grad",
        conv2d_transpose_grad,
    ),
    ("pd_op.pool2d", |c| {
        one(pool::pool2d(c.t(0)?, &pool_attrs(c, 1)?)?)
    }),
    ("pd_op.pool2d_grad", |c| {
        one(pool::pool2d_grad(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            &pool_attrs(c, 3)?,
        )?)
    }),
    ("pd_op.pool3d", |c| {
        one(pool3d::pool3d(c.t(0)?, &pool3d_attrs(c)?)?)
    }),
    ("pd_op.pool3d_grad", |c| {
        one(pool3d::pool3d_grad(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            &pool3d_attrs(c)?,
        )?)
    }),
    ("pd_op.max_pool2d_with_index", |c| {
        let (out, mask) = pool::max_pool2d_with_index(c.t(0)?, &max_pool_index_attrs(c)?)?;
        Ok(vec![Some(out), Some(mask)])
    }),
    ("pd_op.max_pool2d_with_index_grad", |c| {
        one(pool::max_pool2d_with_index_grad(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            &max_pool_index_attrs(c)?,
        )?)
    }),
    ("pd_op.pixel_shuffle", |c| {
        one(pixel_shuffle::pixel_shuffle(
            c.t(0)?,
            &shuffle_attrs(c, "upscale_factor")?,
        )?)
    }),
    ("pd_op.pixel_shuffle_grad", |c| {
        one(pixel_shuffle::pixel_shuffle_grad(
            c.t(0)?,
            &shuffle_attrs(c, "upscale_factor")?,
        )?)
    }),
    ("pd_op.pixel_unshuffle", |c| {
        one(pixel_shuffle::pixel_unshuffle(
            c.t(0)?,
            &shuffle_attrs(c, "downscale_factor")?,
        )?)
    }),
    ("pd_op.pixel_unshuffle_grad", |c| {
        one(pixel_shuffle::pixel_unshuffle_grad(
            c.t(0)?,
            &shuffle_attrs(c, "downscale_factor")?,
        )?)
    }),
    ("pd_op.unfold", |c| {
        one(unfold::unfold(c.t(0)?, &unfold_attrs(c)?)?)
    }),
    ("pd_op.unfold_grad", |c| {
        one(unfold::unfold_grad(c.t(0)?, c.t(1)?, &unfold_attrs(c)?)?)
    }),
    ("pd_op.maxout", |c| {
        one(maxout::maxout(c.t(0)?, &maxout_attrs(c)?)?)
    }),
    ("pd_op.maxout_grad", |c| {
        one(maxout::maxout_grad(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            &maxout_attrs(c)?,
        )?)
    }),
    ("pd_op.pad3d", |c| {
        one(pad::pad3d(c.t(0)?, &pad_attrs(c, 1)?)?)
    }),
    ("pd_op.pad3d_grad", |c| {
        one(pad::pad3d_grad(c.t(0)?, c.t(1)?, &pad_attrs(c, 2)?)?)
    }),
    ("pd_op.nearest_interp", |c| {
        one(interp::interp(c.t(0)?, &interp_attrs(c)?)?)
    }),
    ("pd_op.bilinear_interp", |c| {
        one(interp::interp(c.t(0)?, &interp_attrs(c)?)?)
    }),
    ("pd_op.bicubic_interp", |c| {
        one(interp::interp(c.t(0)?, &interp_attrs(c)?)?)
    }),
    ("pd_op.bicubic_interp_grad", |c| {
        one(interp::interp_grad(c.t(0)?, c.t(4)?, &interp_attrs(c)?)?)
    }),
    ("pd_op.nearest_interp_grad", |c| {
        one(interp::interp_grad(c.t(0)?, c.t(4)?, &interp_attrs(c)?)?)
    }),
    ("pd_op.bilinear_interp_grad", |c| {
        one(interp::interp_grad(c.t(0)?, c.t(4)?, &interp_attrs(c)?)?)
    }),
    ("pd_op.flatten", |c| {
        let x = c.t(0)?;
        let shape = flatten::flatten_shape(
            x.shape(),
            c.i64_or("start_axis", 1)?,
            c.i64_or("stop_axis", 1)?,
        )?;
        let mut r = vec![Some(x.clone().reshaped(shape)?)];
        r.resize_with(c.n_results.max(1), || None);
        Ok(r)
    }),
    ("pd_op.flatten_grad", |c| {
        one(c.t(1)?.clone().reshaped(c.t(0)?.shape().to_vec())?)
    }),
    ("pd_op.batch_norm", batch_norm),
    ("pd_op.batch_norm_", batch_norm),
    ("pd_op.batch_norm_grad", |c| {
        let at = bn_attrs(c)?;
        let x = c.t(0)?;
        let mean = c.t(3)?;
        let ones;
        let scale = match c.opt(1) {
            Some(s) => s,
            None => {
                ones = Tensor::full(&[mean.numel()], mean.dtype(), 1.0);
                &ones
            }
        };
        let (dx, ds, db) =
            bn::batch_norm_grad(x, scale, mean, c.t(4)?, c.t(5)?, c.t(6)?, c.t(8)?, &at)?;
        Ok(vec![Some(dx), Some(ds), Some(db)])
    }),
    ("pd_op.dropout", |c| {
        let is_test = c.bool_or("is_test", false)?;
        let (out, mask) = dropout::dropout(
            c.t(0)?,
            scalar_operand_or_attr(c, 2, "p", 0.5)?,
            is_test,
            dropout::DropoutMode::parse(&str_attr(c, "mode", "downgrade_in_infer")?)?,
        )?;
        // With is_test Paddle makes no mask; an empty one keeps a reader of it runnable.
        let mask = match mask {
            Some(m) => m,
            None => Tensor::new(vec![0], Data::U8(Vec::new()))?,
        };
        Ok(vec![Some(out), Some(mask)])
    }),
    ("pd_op.dropout_grad", |c| {
        one(dropout::dropout_grad(
            c.t(0)?,
            c.t(1)?,
            scalar_operand_or_attr(c, 2, "p", 0.5)?,
            c.bool_or("is_test", false)?,
            dropout::DropoutMode::parse(&str_attr(c, "mode", "downgrade_in_infer")?)?,
        )?)
    }),
    // ---- norms, losses, indexing, ranking and optimizers the tested models lacked ----
    ("pd_op.p_norm", |c| {
        one(norm::p_norm(c.t(0)?, &p_norm_attrs(c)?)?)
    }),
    ("pd_op.p_norm_grad", |c| {
        one(norm::p_norm_grad(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            &p_norm_attrs(c)?,
        )?)
    }),
    ("pd_op.sign", |c| one(pw::sign(c.t(0)?)?)),
    ("pd_op.sign_grad", |c| one(pw::sign_grad(c.t(0)?)?)),
    ("pd_op.bce_loss", |c| one(loss::bce_loss(c.t(0)?, c.t(1)?)?)),
    ("pd_op.bce_loss_grad", |c| {
        one(loss::bce_loss_grad(c.t(0)?, c.t(1)?, c.t(2)?)?)
    }),
    ("pd_op.bce_loss_grad_", |c| {
        one(loss::bce_loss_grad(c.t(0)?, c.t(1)?, c.t(2)?)?)
    }),
    ("pd_op.nll_loss", |c| {
        two(loss::nll_loss(c.t(0)?, c.t(1)?, c.opt(2), nll_attrs(c)?)?)
    }),
    ("pd_op.nll_loss_grad", |c| {
        one(loss::nll_loss_grad(
            c.t(0)?,
            c.t(1)?,
            c.opt(2),
            c.t(3)?,
            c.t(4)?,
            nll_attrs(c)?,
        )?)
    }),
    ("pd_op.kldiv_loss", |c| {
        one(loss::kldiv_loss(c.t(0)?, c.t(1)?, kldiv_attrs(c)?)?)
    }),
    ("pd_op.kldiv_loss_grad", |c| {
        one(loss::kldiv_loss_grad(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            kldiv_attrs(c)?,
        )?)
    }),
    ("pd_op.scatter_nd_add", |c| {
        one(gs::scatter_nd_add(c.t(0)?, c.t(1)?, c.t(2)?)?)
    }),
    ("pd_op.scatter_nd_add_grad", |c| {
        two(gs::scatter_nd_add_grad(c.t(0)?, c.t(1)?, c.t(2)?)?)
    }),
    ("pd_op.gather_nd", |c| one(gs::gather_nd(c.t(0)?, c.t(1)?)?)),
    ("pd_op.gather_nd_grad", |c| {
        one(gs::gather_nd_grad(c.t(0)?, c.t(1)?, c.t(2)?)?)
    }),
    ("pd_op.take_along_axis", |c| {
        one(gs::take_along_axis(c.t(0)?, c.t(1)?, c.i64_or("axis", 0)?)?)
    }),
    ("pd_op.take_along_axis_grad", |c| {
        one(gs::take_along_axis_grad(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            c.i64_or("axis", 0)?,
        )?)
    }),
    ("pd_op.index_put", index_put),
    ("pd_op.index_put_", index_put),
    ("pd_op.index_put_grad", |c| {
        two(index_put::index_put_grad(
            c.t(0)?,
            &c.list(1)?,
            c.t(2)?,
            c.t(3)?,
            c.bool_or("accumulate", false)?,
        )?)
    }),
    ("pd_op.put_along_axis", |c| {
        one(gs::put_along_axis(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            put_attrs(c)?,
        )?)
    }),
    ("pd_op.put_along_axis_grad", |c| {
        two(gs::put_along_axis_grad(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            c.t(4)?,
            put_attrs(c)?,
        )?)
    }),
    ("pd_op.scatter", |c| {
        one(gs::scatter(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            c.bool_or("overwrite", true)?,
        )?)
    }),
    ("pd_op.scatter_grad", |c| {
        two(gs::scatter_grad(c.t(0)?, c.t(1)?, c.t(2)?)?)
    }),
    ("pd_op.argmax", |c| {
        one(topk::arg_extremum(c.t(0)?, arg_attrs(c)?, true)?)
    }),
    ("pd_op.argmin", |c| {
        one(topk::arg_extremum(c.t(0)?, arg_attrs(c)?, false)?)
    }),
    ("pd_op.topk", |c| {
        two(topk::topk(c.t(0)?, topk_attrs(c, 1)?)?)
    }),
    ("pd_op.topk_grad", |c| {
        one(topk::topk_grad(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            topk_attrs(c, 3)?,
        )?)
    }),
    // fmax/fmin ignore a NaN operand, as irw's maximum/minimum kernels do.
    ("pd_op.fmax", |c| binary(c, ew::BinaryOp::Maximum)),
    ("pd_op.fmin", |c| binary(c, ew::BinaryOp::Minimum)),
    ("pd_op.fmax_grad", |c| {
        two(ew::fextremum_grad(c.t(0)?, c.t(1)?, c.t(2)?, true)?)
    }),
    ("pd_op.fmin_grad", |c| {
        two(ew::fextremum_grad(c.t(0)?, c.t(1)?, c.t(2)?, false)?)
    }),
    ("pd_op.bilinear", |c| {
        one(bilinear_form::bilinear(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            c.opt(3),
        )?)
    }),
    ("pd_op.bilinear_grad", |c| {
        let (dx, dy, dw, db) = bilinear_form::bilinear_grad(c.t(0)?, c.t(1)?, c.t(2)?, c.t(3)?)?;
        Ok(vec![Some(dx), Some(dy), Some(dw), Some(db)])
    }),
    ("pd_op.adadelta_", |c| {
        let o = adaptive::adadelta(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            c.t(3)?,
            c.t(4)?,
            c.opt(5),
            c.f64_or("rho", 0.95)? as f32,
            c.f64_or("epsilon", 1e-6)? as f32,
            c.bool_or("multi_precision", false)?,
        )?;
        Ok(vec![
            Some(o.param),
            Some(o.avg_squared_grad),
            Some(o.avg_squared_update),
            o.master_param,
        ])
    }),
    ("pd_op.nadam_", |c| {
        let input = adaptive::NadamIn {
            param: c.t(0)?,
            grad: c.t(1)?,
            learning_rate: c.t(2)?,
            momentum_decay_pow: c.t(3)?,
            beta2_pow: c.t(4)?,
            mu_product: c.t(5)?,
            moment1: c.t(6)?,
            moment2: c.t(7)?,
        };
        let at = adaptive::NadamAttrs {
            beta1: c.f64_or("beta1", 0.9)? as f32,
            beta2: c.f64_or("beta2", 0.999)? as f32,
            epsilon: c.f64_or("epsilon", 1e-8)? as f32,
            momentum_decay: c.f64_or("momentum_decay", 0.004)? as f32,
            multi_precision: c.bool_or("multi_precision", false)?,
        };
        let o = adaptive::nadam(&input, at)?;
        Ok(vec![
            Some(o.param),
            Some(o.momentum_decay_pow),
            Some(o.beta2_pow),
            Some(o.mu_product),
            Some(o.moment1),
            Some(o.moment2),
            None,
        ])
    }),
    ("pd_op.radam_", |c| {
        let input = adaptive::RadamIn {
            param: c.t(0)?,
            grad: c.t(1)?,
            learning_rate: c.t(2)?,
            beta1_pow: c.t(3)?,
            beta2_pow: c.t(4)?,
            rho: c.t(5)?,
            moment1: c.t(6)?,
            moment2: c.t(7)?,
        };
        let at = adaptive::RadamAttrs {
            beta1: c.f64_or("beta1", 0.9)? as f32,
            beta2: c.f64_or("beta2", 0.999)? as f32,
            epsilon: c.f64_or("epsilon", 1e-8)? as f32,
            multi_precision: c.bool_or("multi_precision", false)?,
        };
        let o = adaptive::radam(&input, at)?;
        Ok(vec![
            Some(o.param),
            Some(o.beta1_pow),
            Some(o.beta2_pow),
            Some(o.rho),
            Some(o.moment1),
            Some(o.moment2),
            None,
        ])
    }),
    ("pd_op.rprop_", |c| {
        let (p, prev, lr) = adaptive::rprop(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            c.t(3)?,
            c.t(5)?,
            c.t(6)?,
            c.bool_or("multi_precision", false)?,
        )?;
        Ok(vec![Some(p), Some(prev), Some(lr), None])
    }),
    ("pd_op.asgd_", |c| {
        let (p, d, y) = opt::asgd(
            c.t(0)?,
            c.t(1)?,
            c.t(2)?,
            c.t(3)?,
            c.t(4)?,
            c.t(5)?,
            c.bool_or("multi_precision", false)?,
        )?;
        Ok(vec![Some(p), Some(d), Some(y), None])
    }),
];

fn p_norm_attrs(c: &OpCall<'_>) -> KResult<norm::PNormAttrs> {
    Ok(norm::PNormAttrs {
        porder: c.f64_or("porder", 2.0)? as f32,
        axis: c.i64_or("axis", -1)?,
        epsilon: c.f64_or("epsilon", 1e-12)? as f32,
        keepdim: c.bool_or("keepdim", false)?,
        asvector: c.bool_or("asvector", false)?,
    })
}

fn nll_attrs(c: &OpCall<'_>) -> KResult<loss::NllAttrs> {
    Ok(loss::NllAttrs {
        ignore_index: c.i64_or("ignore_index", -100)?,
        reduction: loss::Reduction::parse(&str_attr(c, "reduction", "mean")?, "nll_loss")?,
    })
}

fn kldiv_attrs(c: &OpCall<'_>) -> KResult<loss::KldivAttrs> {
    Ok(loss::KldivAttrs {
        reduction: loss::Reduction::parse(&str_attr(c, "reduction", "mean")?, "kldiv_loss")?,
        log_target: c.bool_or("log_target", false)?,
    })
}

fn put_attrs(c: &OpCall<'_>) -> KResult<gs::PutAttrs> {
    Ok(gs::PutAttrs {
        axis: c.i64_or("axis", 0)?,
        reduce: gs::PutReduce::parse(&str_attr(c, "reduce", "assign")?)?,
        include_self: c.bool_or("include_self", true)?,
    })
}

/// `argmax`/`argmin`: the axis is operand 1 (a one-element tensor).
fn sn_attrs(c: &OpCall<'_>) -> KResult<sn::SpectralNormAttrs> {
    Ok(sn::SpectralNormAttrs {
        dim: c.i64_or("dim", 0)?,
        power_iters: c.i64_or("power_iters", 1)?,
        eps: c.f64_or("eps", 1e-12)? as f32,
    })
}

fn arg_attrs(c: &OpCall<'_>) -> KResult<topk::ArgAttrs> {
    Ok(topk::ArgAttrs {
        axis: int_operand_or_attr(c, 1, "axis", 0)?,
        keepdims: c.bool_or("keepdims", false)?,
        flatten: c.bool_or("flatten", false)?,
        dtype: c.dtype("dtype")?.unwrap_or(DType::I64),
    })
}

/// `topk` and `topk_grad`: `k` is operand `k_at` (a one-element tensor).
fn topk_attrs(c: &OpCall<'_>, k_at: usize) -> KResult<topk::TopkAttrs> {
    Ok(topk::TopkAttrs {
        k: int_operand_or_attr(c, k_at, "k", 1)?,
        axis: c.i64_or("axis", -1)?,
        largest: c.bool_or("largest", true)?,
    })
}

/// The kernels of ops with vector results: op name → kernel entry.
static VECTOR_KERNELS: &[(&str, VectorKernelFn)] = &[
    ("pd_op.stack_grad", |c| {
        vector(join::stack_grad(
            c.list(0)?.len(),
            c.t(1)?,
            c.i64_or("axis", 0)?,
        )?)
    }),
    ("pd_op.concat_grad", |c| {
        vector(join::concat_grad(
            &c.list(0)?,
            c.t(1)?,
            int_operand_or_attr(c, 2, "axis", 0)?,
        )?)
    }),
    ("pd_op.split", |c| {
        vector(join::split(
            c.t(0)?,
            &ints_operand_or_attr(c, 1, "sections")?,
            int_operand_or_attr(c, 2, "axis", 0)?,
        )?)
    }),
    ("pd_op.rnn", |c| {
        let o = rnn::rnn(c.t(0)?, &c.list(1)?, &c.list(2)?, c.opt(3), &rnn_attrs(c)?)?;
        // The dropout state is only read by a random mask, which the kernel refuses.
        let dropout_state = match c.opt(4) {
            Some(t) => t.clone(),
            None => Tensor::new(vec![0], Data::U8(Vec::new()))?,
        };
        Ok(vec![
            Some(Out::Tensor(o.out)),
            Some(Out::Tensor(dropout_state)),
            Some(Out::List(o.state)),
            Some(Out::Tensor(o.reserve)),
        ])
    }),
    ("pd_op.rnn_grad", |c| {
        let state_grad: Vec<Option<&Tensor>> = match c.inputs.get(8) {
            Some(Input::List(v)) => v.iter().map(|&t| Some(t)).collect(),
            Some(Input::Tensor(t)) => vec![Some(*t)],
            _ => Vec::new(),
        };
        let g = rnn::rnn_grad(
            c.t(0)?,
            &c.list(1)?,
            &c.list(2)?,
            c.opt(3),
            c.t(6)?,
            c.opt(7),
            &state_grad,
            &rnn_attrs(c)?,
        )?;
        Ok(vec![
            Some(Out::Tensor(g.x_grad)),
            Some(Out::List(g.pre_state_grad)),
            Some(Out::List(g.weight_list_grad)),
        ])
    }),
    ("pd_op.coalesce_tensor", |c| {
        let first = c.list(0)?;
        let at = coalesce::CoalesceAttrs {
            dtype: match c.dtype("dtype")? {
                Some(d) => d,
                None => first.first().map_or(DType::F32, |t| t.dtype()),
            },
            copy_data: c.bool_or("copy_data", false)?,
            set_constant: c.bool_or("set_constant", false)?,
            persist_output: c.bool_or("persist_output", false)?,
            constant: c.f64_or("constant", 0.0)? as f32,
            use_align: c.bool_or("use_align", true)?,
            align_size: c.i64_or("align_size", -1)?,
            size_of_dtype: c.i64_or("size_of_dtype", -1)?,
        };
        let (outs, fused) = coalesce::coalesce_tensor(&first, &at)?;
        Ok(vec![Some(Out::List(outs)), Some(Out::Tensor(fused))])
    }),
    ("pd_op.check_finite_and_unscale_", |c| {
        let (outs, found) = amp::check_finite_and_unscale(&c.list(0)?, c.t(1)?)?;
        Ok(vec![Some(Out::List(outs)), Some(Out::Tensor(found))])
    }),
    ("pd_op.update_loss_scaling_", |c| {
        let at = amp::LossScalingAttrs {
            incr_every_n_steps: required_i32(c, "incr_every_n_steps")?,
            decr_every_n_nan_or_inf: required_i32(c, "decr_every_n_nan_or_inf")?,
            incr_ratio: required_f64(c, "incr_ratio")? as f32,
            decr_ratio: required_f64(c, "decr_ratio")? as f32,
        };
        // `stop_update` is a Scalar in Paddle's API: an operand here, false when absent.
        let stop_update = match c.opt(5) {
            Some(t) => t.scalar_f32()? != 0.0,
            None => false,
        };
        let u = amp::update_loss_scaling(
            &c.list(0)?,
            c.t(1)?,
            c.t(2)?,
            c.t(3)?,
            c.t(4)?,
            stop_update,
            &at,
        )?;
        Ok(vec![
            Some(Out::List(u.outs)),
            Some(Out::Tensor(u.loss_scaling)),
            Some(Out::Tensor(u.good_steps)),
            Some(Out::Tensor(u.bad_steps)),
        ])
    }),
    ("pd_op.split_with_num", |c| {
        vector(join::split_with_num(
            c.t(0)?,
            c.i64_or("num", 1)?,
            int_operand_or_attr(c, 1, "axis", 0)?,
        )?)
    }),
    // ---- einsum (one or two operands, no ellipsis) ----
    ("pd_op.einsum", |c| {
        let x = c.list(0)?;
        let out = einsum::einsum(&x, &str_attr(c, "equation", "")?)?;
        // As Paddle declares them: `xshape` holds the operands (einsum_grad reads them there),
        // `inner_cache` one empty tensor per operand.
        let operands: Vec<Tensor> = x.iter().map(|&t| t.clone()).collect();
        let cache = x
            .iter()
            .map(|t| Tensor::new(vec![0], Data::F32(Vec::new())).map(|e| cast::cast(&e, t.dtype())))
            .collect::<KResult<Vec<Tensor>>>()?;
        Ok(vec![
            Some(Out::Tensor(out)),
            Some(Out::List(cache)),
            Some(Out::List(operands)),
        ])
    }),
    ("pd_op.einsum_grad", |c| {
        vector(einsum::einsum_grad(
            &c.list(0)?,
            c.t(2)?,
            &str_attr(c, "equation", "")?,
        )?)
    }),
];

/// An attribute the op cannot run without (Paddle gives it no default).
fn required_f64(c: &OpCall<'_>, key: &str) -> KResult<f64> {
    match c.attr(key) {
        None => kbail!("has no `{}` attribute", key),
        Some(_) => c.f64_or(key, 0.0),
    }
}

/// An int32 attribute the op cannot run without.
fn required_i32(c: &OpCall<'_>, key: &str) -> KResult<i32> {
    match c.attr(key) {
        None => kbail!("has no `{}` attribute", key),
        Some(_) => match i32::try_from(c.i64_or(key, 0)?) {
            Ok(v) => Ok(v),
            Err(_) => kbail!("attribute {} is beyond int32", key),
        },
    }
}

/// A string attribute, `default` when absent.
fn str_attr(c: &OpCall<'_>, key: &str, default: &str) -> KResult<String> {
    match c.attr(key) {
        None => c.lacking(key, default.to_string()),
        Some(a) => match a.as_str() {
            Some(s) => Ok(s.into_owned()),
            None => kbail!("attribute {} is not a string", key),
        },
    }
}

fn rnn_attrs(c: &OpCall<'_>) -> KResult<rnn::RnnAttrs> {
    Ok(rnn::RnnAttrs {
        mode: rnn::Mode::parse(&str_attr(c, "mode", "RNN_TANH")?)?,
        input_size: c.i64_or("input_size", 10)?,
        hidden_size: c.i64_or("hidden_size", 100)?,
        num_layers: c.i64_or("num_layers", 1)?,
        is_bidirec: c.bool_or("is_bidirec", false)?,
        dropout_prob: c.f64_or("dropout_prob", 0.0)? as f32,
        is_test: c.bool_or("is_test", false)?,
    })
}

fn conv_attrs(c: &OpCall<'_>) -> KResult<conv::ConvAttrs> {
    conv_attrs_in(c, "NCHW", conv::channels_last)
}

/// `conv3d`'s attributes: `conv2d`'s, with a 3-D `data_format`.
fn conv3d_attrs(c: &OpCall<'_>) -> KResult<conv::ConvAttrs> {
    conv_attrs_in(c, "NCDHW", |f| conv::channels_last_3d(f, "conv3d"))
}

/// A convolution's attributes, its `data_format` (absent: `default`) read by `layout`.
fn conv_attrs_in(
    c: &OpCall<'_>,
    default: &str,
    layout: impl Fn(&str) -> KResult<bool>,
) -> KResult<conv::ConvAttrs> {
    Ok(conv::ConvAttrs {
        strides: c.i64s("strides")?,
        paddings: c.i64s("paddings")?,
        dilations: c.i64s("dilations")?,
        groups: c.i64_or("groups", 1)?,
        padding_algorithm: conv::PaddingAlgorithm::parse(&str_attr(
            c,
            "padding_algorithm",
            "EXPLICIT",
        )?)?,
        channels_last: layout(&str_attr(c, "data_format", default)?)?,
    })
}

fn index_put(c: &OpCall<'_>) -> KResult<Vec<Option<Tensor>>> {
    one(index_put::index_put(
        c.t(0)?,
        &c.list(1)?,
        c.t(2)?,
        c.bool_or("accumulate", false)?,
    )?)
}

fn conv2d(c: &OpCall<'_>) -> KResult<Vec<Option<Tensor>>> {
    one(conv::conv2d(c.t(0)?, c.t(1)?, &conv_attrs(c)?)?)
}

fn conv2d_grad(c: &OpCall<'_>) -> KResult<Vec<Option<Tensor>>> {
    let (dx, dw) = conv::conv2d_grad(c.t(0)?, c.t(1)?, c.t(2)?, &conv_attrs(c)?, true)?;
    Ok(vec![dx, Some(dw)])
}

/// A `conv2d_transpose`'s attributes; its `output_size` is operand `os` (an int array, empty
/// when the output size is inferred).
fn conv_transpose_attrs(c: &OpCall<'_>, os: usize) -> KResult<conv_transpose::ConvTransposeAttrs> {
    Ok(conv_transpose::ConvTransposeAttrs {
        conv: conv_attrs(c)?,
        output_padding: c.i64s("output_padding")?,
        output_size: c.opt(os).map(|t| t.to_i64_vec()).unwrap_or_default(),
    })
}

fn conv2d_transpose(c: &OpCall<'_>) -> KResult<Vec<Option<Tensor>>> {
    one(conv_transpose::conv2d_transpose(
        c.t(0)?,
        c.t(1)?,
        &conv_transpose_attrs(c, 2)?,
    )?)
}

fn conv2d_transpose_grad(c: &OpCall<'_>) -> KResult<Vec<Option<Tensor>>> {
    let (dx, dw) = conv_transpose::conv2d_transpose_grad(
        c.t(0)?,
        c.t(1)?,
        c.t(2)?,
        &conv_transpose_attrs(c, 3)?,
    )?;
    Ok(vec![Some(dx), Some(dw)])
}

/// `pool2d`'s attributes; its kernel size is operand `ks` (an int array) or the attribute.
fn pool_attrs(c: &OpCall<'_>, ks: usize) -> KResult<pool::PoolAttrs> {
    let (kind, channels_last) = pool::PoolAttrs::kind_and_layout(
        &str_attr(c, "pooling_type", "max")?,
        &str_attr(c, "data_format", "NCHW")?,
    )?;
    Ok(pool::PoolAttrs {
        kind,
        kernel_size: match c.opt(ks) {
            Some(t) => t.to_i64_vec(),
            None => c.i64s("kernel_size")?,
        },
        strides: c.i64s("strides")?,
        paddings: c.i64s("paddings")?,
        ceil_mode: c.bool_or("ceil_mode", false)?,
        exclusive: c.bool_or("exclusive", true)?,
        adaptive: c.bool_or("adaptive", false)?,
        global_pooling: c.bool_or("global_pooling", false)?,
        padding_algorithm: conv::PaddingAlgorithm::parse(&str_attr(
            c,
            "padding_algorithm",
            "EXPLICIT",
        )?)?,
        channels_last,
    })
}

fn pool3d_attrs(c: &OpCall<'_>) -> KResult<pool::PoolAttrs> {
    let (kind, _) = pool::PoolAttrs::kind_and_layout(&str_attr(c, "pooling_type", "max")?, "NCHW")?;
    Ok(pool::PoolAttrs {
        kind,
        kernel_size: c.i64s("kernel_size")?,
        strides: c.i64s("strides")?,
        paddings: c.i64s("paddings")?,
        ceil_mode: c.bool_or("ceil_mode", false)?,
        exclusive: c.bool_or("exclusive", true)?,
        adaptive: c.bool_or("adaptive", false)?,
        global_pooling: c.bool_or("global_pooling", false)?,
        padding_algorithm: conv::PaddingAlgorithm::parse(&str_attr(
            c,
            "padding_algorithm",
            "EXPLICIT",
        )?)?,
        channels_last: conv::channels_last_3d(&str_attr(c, "data_format", "NCDHW")?, "pool3d")?,
    })
}

fn max_pool_index_attrs(c: &OpCall<'_>) -> KResult<pool::MaxPoolWithIndexAttrs> {
    Ok(pool::MaxPoolWithIndexAttrs {
        kernel_size: c.i64s("kernel_size")?,
        strides: c.i64s("strides")?,
        paddings: c.i64s("paddings")?,
        global_pooling: c.bool_or("global_pooling", false)?,
        adaptive: c.bool_or("adaptive", false)?,
        ceil_mode: c.bool_or("ceil_mode", false)?,
    })
}

/// A pixel shuffle's factor (attribute `factor`) and layout.
fn shuffle_attrs(c: &OpCall<'_>, factor: &str) -> KResult<pixel_shuffle::ShuffleAttrs> {
    pixel_shuffle::ShuffleAttrs::new(c.i64_or(factor, 1)?, &str_attr(c, "data_format", "NCHW")?)
}

fn unfold_attrs(c: &OpCall<'_>) -> KResult<unfold::UnfoldAttrs> {
    Ok(unfold::UnfoldAttrs {
        kernel_sizes: c.i64s("kernel_sizes")?,
        strides: c.i64s("strides")?,
        paddings: c.i64s("paddings")?,
        dilations: c.i64s("dilations")?,
    })
}

fn maxout_attrs(c: &OpCall<'_>) -> KResult<maxout::MaxoutAttrs> {
    Ok(maxout::MaxoutAttrs {
        groups: c.i64_or("groups", 1)?,
        axis: c.i64_or("axis", 1)?,
    })
}

/// `pad3d`'s attributes; its paddings are operand `p` (an int array).
fn pad_attrs(c: &OpCall<'_>, p: usize) -> KResult<pad::PadAttrs> {
    let (mode, channels_last) = pad::PadAttrs::mode_and_layout(
        &str_attr(c, "mode", "constant")?,
        &str_attr(c, "data_format", "NCDHW")?,
    )?;
    Ok(pad::PadAttrs {
        paddings: ints_operand_or_attr(c, p, "paddings")?,
        mode,
        pad_value: c.f64_or("pad_value", 0.0)?,
        channels_last,
    })
}

/// An `*_interp` op's attributes and its optional size operands (`out_size`, the
/// `size_tensor` list of one-element tensors, `scale_tensor`).
fn interp_attrs(c: &OpCall<'_>) -> KResult<interp::InterpAttrs> {
    let size_tensor = match c.inputs.get(2) {
        Some(Input::List(_) | Input::Tensor(_)) => Some(
            c.list(2)?
                .iter()
                .flat_map(|t| t.to_i64_vec())
                .collect::<Vec<_>>(),
        ),
        _ => None,
    };
    let scale = match c.attr("scale") {
        None => c.lacking("scale", vec![])?,
        Some(a) => match a.as_array() {
            Some(items) => items
                .iter()
                .map(|v| {
                    v.as_f64()
                        .map(|f| f as f32)
                        .ok_or_else(|| KernelError::new("attribute scale holds a non-number"))
                })
                .collect::<KResult<Vec<f32>>>()?,
            None => kbail!("attribute scale is not an array"),
        },
    };
    Ok(interp::InterpAttrs {
        method: interp::InterpAttrs::method(
            &str_attr(c, "interp_method", "bilinear")?,
            &str_attr(c, "data_format", "NCHW")?,
        )?,
        out_h: c.i64_or("out_h", 0)?,
        out_w: c.i64_or("out_w", 0)?,
        scale,
        align_corners: c.bool_or("align_corners", true)?,
        align_mode: c.i64_or("align_mode", 1)?,
        out_size: c.opt(1).map(|t| t.to_i64_vec()),
        size_tensor,
        scale_tensor: c
            .opt(3)
            .map(|t| t.to_f64_vec().iter().map(|&v| v as f32).collect()),
    })
}

fn bn_attrs(c: &OpCall<'_>) -> KResult<bn::BatchNormAttrs> {
    Ok(bn::BatchNormAttrs {
        is_test: c.bool_or("is_test", false)?,
        momentum: c.f64_or("momentum", 0.9)?,
        epsilon: c.f64_or("epsilon", 1e-5)?,
        channels_last: bn::BatchNormAttrs::layout(&str_attr(c, "data_format", "NCHW")?)?,
        use_global_stats: c.bool_or("use_global_stats", false)?,
        trainable_statistics: c.bool_or("trainable_statistics", false)?,
    })
}

/// `batch_norm(_)`: out, mean_out, variance_out, saved_mean, saved_variance, reserve_space. The
/// running statistics come back unchanged when the op does not update them, so that
/// `batch_norm_`'s aliased results always hold a value.
fn batch_norm(c: &OpCall<'_>) -> KResult<Vec<Option<Tensor>>> {
    let at = bn_attrs(c)?;
    let (mean, variance) = (c.t(1)?, c.t(2)?);
    let (ones, zeros);
    let scale = match c.opt(3) {
        Some(s) => s,
        None => {
            ones = Tensor::full(&[mean.numel()], mean.dtype(), 1.0);
            &ones
        }
    };
    let bias = match c.opt(4) {
        Some(b) => b,
        None => {
            zeros = Tensor::full(&[mean.numel()], mean.dtype(), 0.0);
            &zeros
        }
    };
    let o = bn::batch_norm(c.t(0)?, mean, variance, scale, bias, &at)?;
    Ok(vec![
        Some(o.out),
        Some(o.mean_out.unwrap_or_else(|| mean.clone())),
        Some(o.variance_out.unwrap_or_else(|| variance.clone())),
        Some(o.saved_mean),
        Some(o.saved_variance),
        Some(o.reserve_space),
    ])
}

fn increment(c: &OpCall<'_>) -> KResult<Vec<Option<Tensor>>> {
    one(ew::increment(c.t(0)?, c.f64_or("value", 1.0)?)?)
}

fn scale(c: &OpCall<'_>) -> KResult<Vec<Option<Tensor>>> {
    let s = scalar_operand_or_attr(c, 1, "scale", 1.0)?;
    one(ew::scale(
        c.t(0)?,
        s,
        c.f64_or("bias", 0.0)? as f32,
        c.bool_or("bias_after_scale", true)?,
    )?)
}

fn prelu_mode(c: &OpCall<'_>) -> KResult<prelu::Mode> {
    prelu::Mode::parse(
        &str_attr(c, "mode", "all")?,
        &str_attr(c, "data_format", "NCHW")?,
    )
}

fn hardtanh_bounds(c: &OpCall<'_>) -> KResult<(f32, f32)> {
    Ok((
        c.f64_or("t_min", 0.0)? as f32,
        c.f64_or("t_max", 24.0)? as f32,
    ))
}

fn stanh_scales(c: &OpCall<'_>) -> KResult<(f32, f32)> {
    Ok((
        c.f64_or("scale_a", 0.67)? as f32,
        c.f64_or("scale_b", 1.7159)? as f32,
    ))
}

/// `max_grad`/`min_grad(x, out, out_grad, axis)`.
fn extremum_grad(c: &OpCall<'_>) -> KResult<Vec<Option<Tensor>>> {
    one(reduce::extremum_grad(
        c.t(0)?,
        c.t(1)?,
        c.t(2)?,
        &axes_operand(c, 3)?,
        c.bool_or("reduce_all", false)?,
    )?)
}

fn sigmoid_ce_attrs(c: &OpCall<'_>) -> KResult<loss::SigmoidCeAttrs> {
    Ok(loss::SigmoidCeAttrs {
        normalize: c.bool_or("normalize", false)?,
        ignore_index: c.i64_or("ignore_index", -100)?,
    })
}

fn selu_attrs(c: &OpCall<'_>) -> KResult<(f32, f32)> {
    Ok((
        c.f64_or("scale", 1.050_700_987_355_480_5)? as f32,
        c.f64_or("alpha", 1.673_263_242_354_377_3)? as f32,
    ))
}

fn softplus_attrs(c: &OpCall<'_>) -> KResult<(f32, f32)> {
    Ok((
        c.f64_or("beta", 1.0)? as f32,
        c.f64_or("threshold", 20.0)? as f32,
    ))
}

/// `clip`'s bounds: operands `i` and `i + 1` (Scalars, given as tensors), unbounded when absent.
fn clip_bounds(c: &OpCall<'_>, i: usize) -> KResult<(f32, f32)> {
    Ok((
        scalar_operand_or_attr(c, i, "min", f32::MIN as f64)?,
        scalar_operand_or_attr(c, i + 1, "max", f32::MAX as f64)?,
    ))
}

/// `cumsum`'s attributes, its axis operand `i` (a Scalar) or, absent, -1.
fn cumsum_attrs(c: &OpCall<'_>, i: usize) -> KResult<cumsum::CumsumAttrs> {
    Ok(cumsum::CumsumAttrs {
        axis: int_operand_or_attr(c, i, "axis", -1)?,
        flatten: c.bool_or("flatten", false)?,
        exclusive: c.bool_or("exclusive", false)?,
        reverse: c.bool_or("reverse", false)?,
    })
}

/// `assign_value(_)`: the `values` attribute in the op's dtype (integers read exactly, not
/// through a float).
fn assign_value(c: &OpCall<'_>) -> KResult<Vec<Option<Tensor>>> {
    let key = "values";
    let dtype = c.dtype("dtype")?.unwrap_or(DType::F32);
    let items = match c.attr(key) {
        None => c.lacking(key, &[][..])?,
        Some(a) => match a.as_array() {
            Some(items) => items,
            None => kbail!("attribute {} is not an array", key),
        },
    };
    let data = if dtype.is_float() {
        let v = items
            .iter()
            .map(|a| a.as_f64().or_else(|| a.as_bool().map(f64::from)))
            .collect::<Option<Vec<f64>>>()
            .ok_or_else(|| KernelError::new(format!("attribute {key} is not a number")))?;
        Data::F64(v).cast(dtype)
    } else {
        let v = items
            .iter()
            .map(|a| a.as_i64().or_else(|| a.as_bool().map(i64::from)))
            .collect::<Option<Vec<i64>>>()
            .ok_or_else(|| KernelError::new(format!("attribute {key} holds a non-integer")))?;
        Data::I64(v).cast(dtype)
    };
    one(shape::assign_value(&c.i64s("shape")?, data)?)
}

fn cast_op(c: &OpCall<'_>) -> KResult<Vec<Option<Tensor>>> {
    let x = c.t(0)?;
    one(cast::cast(x, c.dtype("dtype")?.unwrap_or(x.dtype())))
}

/// How the executor runs an op.
#[derive(Clone, Copy)]
pub enum Exec {
    /// A kernel of the op's operands and attributes, run on each rank.
    Kernel(Kernel),
    /// An op that acts on the run's context; the interpreter runs it.
    Context(ContextOp),
}

/// A kernel entry of the table.
#[derive(Clone, Copy)]
pub enum Kernel {
    Tensors(KernelFn),
    /// For an op with a vector of tensors among its results.
    Vectors(VectorKernelFn),
}

impl Kernel {
    /// The op's results on one rank.
    pub fn call(self, c: &OpCall<'_>) -> KResult<Vec<Option<Out>>> {
        match self {
            Kernel::Tensors(k) => Ok(k(c)?.into_iter().map(|o| o.map(Out::Tensor)).collect()),
            Kernel::Vectors(k) => k(c),
        }
    }
}

/// The ops that act on the run's context rather than on their operands alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContextOp {
    /// `cf.yield`: its operands are the region's results, read by the op holding the region.
    Yield,
    /// `pd_op.if`: runs one of its regions.
    If,
    /// `pd_op.while`: runs its body while its condition holds.
    While,
    /// `pd_op.data`, `pd_op.feed`: a fed input, or a persistable of the scope.
    Feed,
    /// `builtin.parameter`: a parameter of the scope, held to its declared type.
    Parameter,
    /// A writer of the scope (`builtin.set_parameter`, `builtin.shadow_output`): the protocol
    /// names the attribute that names the variable.
    ScopeWrite,
    /// `pd_op.fetch`: its operand, as a result.
    Fetch,
    /// `builtin.combine`: a vector of values.
    Combine,
    /// `builtin.split`: a vector's elements.
    Split,
    /// `pd_op.uniform`, `pd_op.gaussian`: the run's random generator, one draw for every rank.
    Random,
    /// A collective (the dialect's effect class): every rank's operand at once.
    Collective,
}

/// The ops of [`ContextOp`] known by name (scope writers and collectives are known by class).
static CONTEXT_OPS: &[(&str, ContextOp)] = &[
    ("cf.yield", ContextOp::Yield),
    ("pd_op.if", ContextOp::If),
    ("pd_op.while", ContextOp::While),
    ("pd_op.data", ContextOp::Feed),
    ("pd_op.feed", ContextOp::Feed),
    ("builtin.parameter", ContextOp::Parameter),
    ("pd_op.fetch", ContextOp::Fetch),
    ("builtin.combine", ContextOp::Combine),
    ("builtin.split", ContextOp::Split),
    ("pd_op.uniform", ContextOp::Random),
    ("pd_op.gaussian", ContextOp::Random),
];

/// How the executor runs `name`, or `None` when it cannot: the ops the table names, then the
/// protocol's scope writers and the dialect's collectives (no kernel is either, so the order
/// never hides one).
pub fn exec_of(name: &str) -> Option<Exec> {
    static MAP: OnceLock<HashMap<&'static str, Exec>> = OnceLock::new();
    let map = MAP.get_or_init(|| {
        let tensors = KERNELS
            .iter()
            .map(|&(n, k)| (n, Exec::Kernel(Kernel::Tensors(k))));
        let vectors = VECTOR_KERNELS
            .iter()
            .map(|&(n, k)| (n, Exec::Kernel(Kernel::Vectors(k))));
        let context = CONTEXT_OPS.iter().map(|&(n, c)| (n, Exec::Context(c)));
        tensors.chain(vectors).chain(context).collect()
    });
    if let Some(e) = map.get(name) {
        return Some(*e);
    }
    if scope_writer_name_attr(name).is_some() {
        Some(Exec::Context(ContextOp::ScopeWrite))
    } else if is_collective(name) {
        Some(Exec::Context(ContextOp::Collective))
    } else {
        None
    }
}

fn is_collective(name: &str) -> bool {
    Dialect::get()
        .spec(name)
        .is_some_and(|s| s.effect == Effect::Collective)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_names_an_op_in_the_dialect_table() {
        let vector = VECTOR_KERNELS.iter().map(|(n, _)| n);
        for name in KERNELS.iter().map(|(n, _)| n).chain(vector) {
            assert!(
                Dialect::get().spec(name).is_some() || *name == "pd_op.log",
                "{name} is not in the dialect table"
            );
        }
    }

    /// An optimizer kernel returns its results in the op's result order and the interpreter
    /// writes each into the operand the dialect pairs it with: for `rmsprop_`, whose operands
    /// and results are in different orders, each result must be paired with the operand named
    /// after it (as Paddle runs it), or the moment and the mean square trade places.
    #[test]
    fn rmsprop_results_write_the_operands_named_after_them() {
        let spec = Dialect::get().spec("pd_op.rmsprop_").expect("rmsprop_");
        let operand = |n: &str| spec.operands.iter().position(|o| *o == n);
        let result = |n: &str| spec.results.iter().position(|r| *r == n).expect(n);
        for (r, o) in [
            ("param_out", "param"),
            ("moment_out", "moment"),
            ("mean_square_out", "mean_square"),
            ("mean_grad_out", "mean_grad"),
        ] {
            assert_eq!(spec.aliased_operand(result(r)), operand(o), "{r}");
        }
    }

    /// Every name is in the table once, and no named op is also a scope writer or a collective
    /// (which [`exec_of`] finds by class, after the names).
    #[test]
    fn each_op_runs_one_way() {
        let names: Vec<&str> = KERNELS
            .iter()
            .map(|(n, _)| *n)
            .chain(VECTOR_KERNELS.iter().map(|(n, _)| *n))
            .chain(CONTEXT_OPS.iter().map(|(n, _)| *n))
            .collect();
        let mut seen = std::collections::HashSet::new();
        for n in &names {
            assert!(seen.insert(*n), "{n} is in the table twice");
        }
        for n in &names {
            assert!(
                scope_writer_name_attr(n).is_none() && !is_collective(n),
                "{n} is named in the table but is also a scope writer or a collective"
            );
        }
        assert!(matches!(
            exec_of("builtin.shadow_output"),
            Some(Exec::Context(ContextOp::ScopeWrite))
        ));
        assert!(matches!(
            exec_of("pd_op.all_reduce"),
            Some(Exec::Context(ContextOp::Collective))
        ));
        assert!(exec_of("pd_op.sdg_").is_none());
    }
}
