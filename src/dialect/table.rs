//! The op table of the Paddle dialect, as data. Operand and result names follow Paddle's
//! `ops.yaml`/`backward.yaml` (PaddlePaddle 3.x), so a rule can say `grad:` or `param:`.
//!
//! To teach irw a new op, add a line here; nothing else needs to change for the parser,
//! verifier or rule engine. (The executor additionally needs a kernel.)

use super::Effect::{self, *};
use super::OpSpec;
use super::ResultRule::{self, *};

const fn op(
    name: &'static str,
    operands: &'static [&'static str],
    results: &'static [&'static str],
    aliases: &'static [(u8, u8)],
    effect: Effect,
    result_rule: ResultRule,
) -> OpSpec {
    OpSpec {
        name,
        operands,
        results,
        aliases,
        effect,
        result_rule,
    }
}

const XY: &[&str] = &["x", "y"];
const XY_GRAD: &[&str] = &["x", "y", "out_grad"];
const GRADS2: &[&str] = &["x_grad", "y_grad"];
const OUT: &[&str] = &["out"];
const X: &[&str] = &["x"];
const X_GRAD: &[&str] = &["x_grad"];
const NONE: &[&str] = &[];
const ADAM_IN: &[&str] = &[
    "param",
    "grad",
    "learning_rate",
    "moment1",
    "moment2",
    "moment2_max",
    "beta1_pow",
    "beta2_pow",
    "master_param",
    "skip_update",
    "beta1",
    "beta2",
    "epsilon",
];
const ADAM_OUT: &[&str] = &[
    "param_out",
    "moment1_out",
    "moment2_out",
    "moment2_max_out",
    "beta1_pow_out",
    "beta2_pow_out",
    "master_param_out",
];
const ADAM_ALIAS: &[(u8, u8)] = &[(0, 0), (1, 3), (2, 4), (3, 5), (4, 6), (5, 7), (6, 8)];

pub static OPS: &[OpSpec] = &[
    // ---- elementwise and linear algebra (pure) ----
    op("pd_op.matmul", XY, OUT, &[], Pure, Explicit),
    op("pd_op.matmul_grad", XY_GRAD, GRADS2, &[], Pure, Explicit),
    op("pd_op.add", XY, OUT, &[], Pure, SameAs(0)),
    op("pd_op.add_grad", XY_GRAD, GRADS2, &[], Pure, Explicit),
    op("pd_op.subtract", XY, OUT, &[], Pure, SameAs(0)),
    op("pd_op.subtract_grad", XY_GRAD, GRADS2, &[], Pure, Explicit),
    op("pd_op.multiply", XY, OUT, &[], Pure, SameAs(0)),
    op("pd_op.multiply_grad", XY_GRAD, GRADS2, &[], Pure, Explicit),
    op("pd_op.divide", XY, OUT, &[], Pure, SameAs(0)),
    op(
        "pd_op.divide_grad",
        &["x", "y", "out", "out_grad"],
        GRADS2,
        &[],
        Pure,
        Explicit,
    ),
    op("pd_op.elementwise_pow", XY, OUT, &[], Pure, SameAs(0)),
    op(
        "pd_op.elementwise_pow_grad",
        XY_GRAD,
        GRADS2,
        &[],
        Pure,
        Explicit,
    ),
    op("pd_op.maximum", XY, OUT, &[], Pure, SameAs(0)),
    op("pd_op.remainder", XY, OUT, &[], Pure, SameAs(0)),
    op("pd_op.minimum", XY, OUT, &[], Pure, SameAs(0)),
    op("pd_op.scale", &["x", "scale"], OUT, &[], Pure, SameAs(0)),
    op("pd_op.relu", X, OUT, &[], Pure, SameAs(0)),
    op(
        "pd_op.relu_grad",
        &["out", "out_grad"],
        X_GRAD,
        &[],
        Pure,
        SameAs(1),
    ),
    op("pd_op.tanh", X, OUT, &[], Pure, SameAs(0)),
    op(
        "pd_op.tanh_grad",
        &["out", "out_grad"],
        X_GRAD,
        &[],
        Pure,
        SameAs(1),
    ),
    op("pd_op.sigmoid", X, OUT, &[], Pure, SameAs(0)),
    op(
        "pd_op.sigmoid_grad",
        &["out", "out_grad"],
        X_GRAD,
        &[],
        Pure,
        SameAs(1),
    ),
    op("pd_op.gelu", X, OUT, &[], Pure, SameAs(0)),
    op(
        "pd_op.gelu_grad",
        &["x", "out_grad"],
        X_GRAD,
        &[],
        Pure,
        SameAs(0),
    ),
    op("pd_op.square", X, OUT, &[], Pure, SameAs(0)),
    op(
        "pd_op.square_grad",
        &["x", "out_grad"],
        X_GRAD,
        &[],
        Pure,
        SameAs(0),
    ),
    op("pd_op.exp", X, OUT, &[], Pure, SameAs(0)),
    op("pd_op.sqrt", X, OUT, &[], Pure, SameAs(0)),
    op("pd_op.softmax", X, OUT, &[], Pure, SameAs(0)),
    op(
        "pd_op.softmax_grad",
        &["out", "out_grad"],
        X_GRAD,
        &[],
        Pure,
        SameAs(0),
    ),
    op(
        "pd_op.cross_entropy_with_softmax",
        &["input", "label"],
        &["softmax", "loss"],
        &[],
        Pure,
        Explicit,
    ),
    op(
        "pd_op.cross_entropy_with_softmax_grad",
        &["label", "softmax", "loss_grad"],
        &["input_grad"],
        &[],
        Pure,
        SameAs(1),
    ),
    op("pd_op.cast", X, OUT, &[], Pure, CastOf(0)),
    op(
        "pd_op.reshape",
        &["x", "shape"],
        &["out", "?xshape"],
        &[],
        Pure,
        Explicit,
    ),
    op(
        "pd_op.reshape_grad",
        &["x", "out_grad"],
        X_GRAD,
        &[],
        Pure,
        SameAs(0),
    ),
    op("pd_op.transpose", X, OUT, &[], Pure, Explicit),
    op(
        "pd_op.slice",
        &["input", "starts", "ends"],
        OUT,
        &[],
        Pure,
        Explicit,
    ),
    op(
        "pd_op.transpose_grad",
        &["out_grad"],
        X_GRAD,
        &[],
        Pure,
        Explicit,
    ),
    // ---- reductions (axes come from a full_int_array operand) ----
    op("pd_op.mean", &["x", "axis"], OUT, &[], Pure, Explicit),
    op(
        "pd_op.mean_grad",
        &["x", "out_grad", "axis"],
        X_GRAD,
        &[],
        Pure,
        SameAs(0),
    ),
    op("pd_op.sum", &["x", "axis"], OUT, &[], Pure, Explicit),
    op(
        "pd_op.sum_grad",
        &["x", "out_grad", "axis"],
        X_GRAD,
        &[],
        Pure,
        SameAs(0),
    ),
    op("pd_op.add_n", &["inputs"], OUT, &[], Pure, Explicit),
    // ---- comparisons ----
    op("pd_op.greater_than", XY, OUT, &[], Pure, Explicit),
    op("pd_op.less_than", XY, OUT, &[], Pure, Explicit),
    op("pd_op.equal", XY, OUT, &[], Pure, CompareOf(0)),
    // ---- constants ----
    op("pd_op.full", NONE, OUT, &[], Pure, FromShapeDtypeAttrs),
    op(
        "pd_op.full_like",
        &["x", "value"],
        OUT,
        &[],
        Pure,
        SameAs(0),
    ),
    op("pd_op.full_int_array", NONE, OUT, &[], Pure, IntArray),
    op("builtin.combine", &["*inputs"], OUT, &[], Pure, Explicit),
    op(
        "builtin.split",
        &["inputs"],
        &["*outputs"],
        &[],
        Pure,
        Explicit,
    ),
    // ---- in-place ----
    op("pd_op.add_", XY, OUT, &[(0, 0)], InPlace, SameAs(0)),
    op(
        "pd_op.scale_",
        &["x", "scale"],
        OUT,
        &[(0, 0)],
        InPlace,
        SameAs(0),
    ),
    op("pd_op.cast_", X, OUT, &[(0, 0)], InPlace, CastOf(0)),
    op(
        "pd_op.assign_out_",
        &["x", "output"],
        OUT,
        &[(0, 1)],
        InPlace,
        SameAs(1),
    ),
    op(
        "pd_op.set_value_with_tensor_",
        &["x", "values", "starts", "ends", "steps"],
        OUT,
        &[(0, 0)],
        InPlace,
        SameAs(0),
    ),
    // ---- optimizers ----
    op(
        "pd_op.sgd_",
        &["param", "learning_rate", "grad", "master_param"],
        &["param_out", "master_param_out"],
        &[(0, 0), (1, 3)],
        Optimizer,
        Explicit,
    ),
    op(
        "pd_op.momentum_",
        &["param", "grad", "velocity", "learning_rate", "master_param"],
        &["param_out", "velocity_out", "master_param_out"],
        &[(0, 0), (1, 2), (2, 4)],
        Optimizer,
        Explicit,
    ),
    op(
        "pd_op.adam_",
        ADAM_IN,
        ADAM_OUT,
        ADAM_ALIAS,
        Optimizer,
        Explicit,
    ),
    op(
        "pd_op.adamw_",
        ADAM_IN,
        ADAM_OUT,
        ADAM_ALIAS,
        Optimizer,
        Explicit,
    ),
    // ---- collectives ----
    op(
        "pd_op.c_allreduce_sum",
        X,
        OUT,
        &[],
        Collective,
        ReducedOf(0),
    ),
    op(
        "pd_op.c_allreduce_avg",
        X,
        OUT,
        &[],
        Collective,
        ReducedOf(0),
    ),
    op(
        "pd_op.c_allreduce_max",
        X,
        OUT,
        &[],
        Collective,
        ReducedOf(0),
    ),
    op("pd_op.c_reduce_sum", X, OUT, &[], Collective, SameAs(0)),
    op("pd_op.c_reduce_avg", X, OUT, &[], Collective, SameAs(0)),
    op(
        "pd_op.c_allreduce_sum_",
        X,
        OUT,
        &[(0, 0)],
        Collective,
        SameAs(0),
    ),
    op(
        "pd_op.c_allreduce_avg_",
        X,
        OUT,
        &[(0, 0)],
        Collective,
        SameAs(0),
    ),
    op(
        "pd_op.c_reduce_sum_",
        X,
        OUT,
        &[(0, 0)],
        Collective,
        SameAs(0),
    ),
    op(
        "pd_op.c_reduce_avg_",
        X,
        OUT,
        &[(0, 0)],
        Collective,
        SameAs(0),
    ),
    op("pd_op.c_broadcast", X, OUT, &[], Collective, SameAs(0)),
    // Modern collectives (Paddle 3.x `ops.yaml`; names, attributes and JSON tags checked with
    // Paddle 3.3.1): `all_reduce`/`reduce` {ring_id, reduce_type: 0 SUM, 1 MAX, 2 MIN, 3 PROD,
    // 4 AVG} (`reduce` also root_id), `broadcast` {ring_id, root}, `all_gather` and
    // `reduce_scatter` {ring_id, nranks}.
    op("pd_op.all_reduce", X, OUT, &[], Collective, ReducedOf(0)),
    op(
        "pd_op.all_reduce_",
        X,
        OUT,
        &[(0, 0)],
        Collective,
        SameAs(0),
    ),
    op("pd_op.reduce", X, OUT, &[], Collective, SameAs(0)),
    op("pd_op.reduce_", X, OUT, &[(0, 0)], Collective, SameAs(0)),
    op("pd_op.broadcast", X, OUT, &[], Collective, SameAs(0)),
    op("pd_op.broadcast_", X, OUT, &[(0, 0)], Collective, SameAs(0)),
    op(
        "pd_op.all_gather",
        X,
        OUT,
        &[],
        Collective,
        Dim0Times(0, "nranks"),
    ),
    op(
        "pd_op.reduce_scatter",
        X,
        OUT,
        &[],
        Collective,
        Dim0Over(0, "nranks"),
    ),
    // ---- named state and feeds ----
    op("pd_op.data", NONE, OUT, &[], Io, Explicit),
    op("pd_op.feed", NONE, OUT, &[], Io, Explicit),
    op("pd_op.fetch", X, OUT, &[], Io, SameAs(0)),
    op("builtin.parameter", NONE, OUT, &[], Io, Explicit),
    op(
        "builtin.set_parameter",
        &["parameter"],
        NONE,
        &[],
        Io,
        Explicit,
    ),
    op("builtin.shadow_output", X, NONE, &[], Io, Explicit),
    // ---- random ----
    op(
        "pd_op.uniform",
        &["shape", "min", "max"],
        OUT,
        &[],
        Random,
        Explicit,
    ),
    op("pd_op.gaussian", &["shape"], OUT, &[], Random, Explicit),
    // ---- control flow ----
    op("pd_op.if", &["cond"], &["*outputs"], &[], Control, Explicit),
    op(
        "pd_op.while",
        &["cond", "*inputs"],
        &["*outputs"],
        &[],
        Control,
        Explicit,
    ),
    op("cf.yield", &["*inputs"], NONE, &[], Control, Explicit),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_aliases_in_range() {
        let mut seen = std::collections::BTreeSet::new();
        for s in OPS {
            assert!(seen.insert(s.name), "duplicate {}", s.name);
            for &(r, o) in s.aliases {
                assert!(
                    (r as usize) < s.results.len() && (o as usize) < s.operands.len(),
                    "{}",
                    s.name
                );
            }
            if s.name.ends_with('_') && !s.name.ends_with("_grad") {
                assert!(
                    !s.aliases.is_empty() || s.effect == Collective,
                    "{} is in-place but aliases nothing",
                    s.name
                );
            }
        }
    }

    #[test]
    fn count_conventions() {
        assert!(OpSpec::count_fits(&["x", "?xshape"], 1));
        assert!(OpSpec::count_fits(&["x", "?xshape"], 2));
        assert!(!OpSpec::count_fits(&["x", "?xshape"], 3));
        assert!(OpSpec::count_fits(&["cond", "*inputs"], 1));
        assert!(OpSpec::count_fits(&["cond", "*inputs"], 5));
        assert!(!OpSpec::count_fits(&["cond", "*inputs"], 0));
    }
}
