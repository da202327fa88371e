//! The kernels real vision and sequence models need (activations, normalizations, reductions,
//! sequence ops, optimizers), against the numbers Paddle
//! 3.3.1 computed for the same inputs (`tests/exec_fixtures/paddle_model_kernels.json`,
//! recorded once by `paddle_model_kernels.py`, whose inputs sit on every kink of the
//! piecewise activations): forward outputs, gradients for the recorded `out_grad`, and one
//! optimizer step; then the normalizations, activations, reductions, reorders and losses of the
//! second set of models, pad3d in its four modes and two layouts, and nearest and bilinear
//! interpolation, and transposed convolutions (stride, paddings, output_padding, output_size,
//! groups, dilation, SAME/VALID, NHWC, depthwise) and max pooling with its mask (ties, ceil_mode,
//! adaptive, global), pixel_shuffle/unshuffle, unfold, maxout and pool3d, within
//! `|a−b| ≤ 1e-5·|b| + 1e-5·max|b|` (comparisons and integers exactly).

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::exec::feed::tensor_from_json;
use crate::exec::kernels::cumsum::{cumsum, cumsum_grad, CumsumAttrs};
use crate::exec::kernels::{
    activation as act, adaptive, conv, conv_transpose, elementwise as ew, group_norm as gn, index,
    interp, loss, maxout, pad, piecewise as pw, pixel_shuffle, pool, pool3d, prelu, reduce,
    reorder, softmax as sm, unfold,
};
use crate::exec::Tensor;
use serde_json::Value;

pub(super) type Outputs = BTreeMap<&'static str, Tensor>;

/// A unary op's forward and its grad: `out` and `x_grad`.
fn unary(o: &mut Outputs, out: Tensor, x_grad: Tensor) {
    o.insert("out", out);
    o.insert("x_grad", x_grad);
}

pub(super) fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .expect("an integer list")
        .iter()
        .map(|i| i.as_i64().expect("an integer"))
        .collect()
}

fn run_case(name: &str, i: &BTreeMap<String, Tensor>, a: &Value) -> Outputs {
    let t = |k: &str| &i[k];
    let num = |k: &str| a[k].as_f64().expect("number attr") as f32;
    let flag = |k: &str| a[k].as_bool().expect("bool attr");
    let mut o = Outputs::new();
    let (x, g) = (i.get("x"), i.get("out_grad"));
    match name {
        "not_equal" | "greater_equal" | "less_equal" => {
            let f: fn(f64, f64) -> bool = match name {
                "not_equal" => |a, b| a != b,
                "greater_equal" => |a, b| a >= b,
                _ => |a, b| a <= b,
            };
            let (x, y) = (t("x"), t("y"));
            let (s, v) = crate::exec::kernels::broadcast::binary_map(
                &x.to_f64_vec(),
                x.shape(),
                &y.to_f64_vec(),
                y.shape(),
                -1,
                f,
            )
            .unwrap();
            o.insert("out", Tensor::new(s, crate::exec::Data::Bool(v)).unwrap());
        }
        "log" => {
            let (x, g) = (x.unwrap(), g.unwrap());
            unary(&mut o, act::log(x).unwrap(), act::log_grad(x, g).unwrap());
        }
        "exp" => {
            let out = act::exp(x.unwrap()).unwrap();
            let dx = act::exp_grad(&out, g.unwrap()).unwrap();
            unary(&mut o, out, dx);
        }
        "sqrt" => {
            let out = act::sqrt(x.unwrap()).unwrap();
            let dx = act::sqrt_grad(&out, g.unwrap()).unwrap();
            unary(&mut o, out, dx);
        }
        "maximum" | "minimum" => {
            let op = if name == "maximum" {
                ew::BinaryOp::Maximum
            } else {
                ew::BinaryOp::Minimum
            };
            o.insert("out", ew::binary(op, t("x"), t("y"), -1).unwrap());
            let (dx, dy) =
                ew::extremum_grad(t("x"), t("y"), g.unwrap(), -1, name == "maximum").unwrap();
            o.insert("x_grad", dx);
            o.insert("y_grad", dy);
        }
        "leaky_relu" => {
            let s = num("negative_slope");
            let (x, g) = (x.unwrap(), g.unwrap());
            unary(
                &mut o,
                pw::leaky_relu(x, s).unwrap(),
                pw::leaky_relu_grad(x, g, s).unwrap(),
            );
        }
        "relu6" => {
            let out = pw::relu6(x.unwrap()).unwrap();
            let dx = pw::relu6_grad(&out, g.unwrap()).unwrap();
            unary(&mut o, out, dx);
        }
        "hardswish" => {
            let (x, g) = (x.unwrap(), g.unwrap());
            unary(
                &mut o,
                pw::hardswish(x).unwrap(),
                pw::hardswish_grad(x, g).unwrap(),
            );
        }
        "hardsigmoid" => {
            let out = pw::hardsigmoid(x.unwrap(), num("slope"), num("offset")).unwrap();
            let dx = pw::hardsigmoid_grad(&out, g.unwrap(), num("slope")).unwrap();
            unary(&mut o, out, dx);
        }
        "elu" => {
            let x = x.unwrap();
            let out = act::elu(x, num("alpha")).unwrap();
            let dx = act::elu_grad(x, &out, g.unwrap(), num("alpha")).unwrap();
            unary(&mut o, out, dx);
        }
        "selu" => {
            let (s, al) = (num("scale"), num("alpha"));
            let out = act::selu(x.unwrap(), s, al).unwrap();
            let dx = act::selu_grad(&out, g.unwrap(), s, al).unwrap();
            unary(&mut o, out, dx);
        }
        "softplus" => {
            let (b, th) = (num("beta"), num("threshold"));
            let (x, g) = (x.unwrap(), g.unwrap());
            unary(
                &mut o,
                act::softplus(x, b, th).unwrap(),
                act::softplus_grad(x, g, b, th).unwrap(),
            );
        }
        "swish" => {
            let (x, g) = (x.unwrap(), g.unwrap());
            unary(
                &mut o,
                act::swish(x).unwrap(),
                act::swish_grad(x, g).unwrap(),
            );
        }
        "mish" => {
            let (x, g, l) = (x.unwrap(), g.unwrap(), num("lambda"));
            unary(
                &mut o,
                act::mish(x, l).unwrap(),
                act::mish_grad(x, g, l).unwrap(),
            );
        }
        "abs" => {
            let (x, g) = (x.unwrap(), g.unwrap());
            unary(&mut o, pw::abs(x).unwrap(), pw::abs_grad(x, g).unwrap());
        }
        "clip" => {
            let (x, g, lo, hi) = (x.unwrap(), g.unwrap(), num("min"), num("max"));
            unary(
                &mut o,
                pw::clip(x, lo, hi).unwrap(),
                pw::clip_grad(x, g, lo, hi).unwrap(),
            );
        }
        "cumsum" | "cumsum_rev_excl" | "cumsum_flat" => {
            let at = CumsumAttrs {
                axis: a["axis"].as_i64().expect("axis"),
                flatten: flag("flatten"),
                exclusive: flag("exclusive"),
                reverse: flag("reverse"),
            };
            let (x, g) = (x.unwrap(), g.unwrap());
            unary(
                &mut o,
                cumsum(x, &at).unwrap(),
                cumsum_grad(x, g, &at).unwrap(),
            );
        }
        "log_softmax" | "log_softmax_axis1" => {
            let axis = a["axis"].as_i64().expect("axis");
            let out = sm::log_softmax(x.unwrap(), axis).unwrap();
            let dx = sm::log_softmax_grad(&out, g.unwrap(), axis).unwrap();
            unary(&mut o, out, dx);
        }
        "index_select" => {
            let axis = a["axis"].as_i64().expect("axis");
            let (x, g) = (x.unwrap(), g.unwrap());
            o.insert("out", index::gather(x, t("index"), axis).unwrap());
            o.insert(
                "x_grad",
                index::gather_grad(x, t("index"), g, axis).unwrap(),
            );
        }
        "label_smooth" | "label_smooth_prior" => {
            let out = sm::label_smooth(t("label"), i.get("prior_dist"), num("epsilon")).unwrap();
            o.insert("out", out);
        }
        "rmsprop" | "rmsprop_centered" => {
            let at = adaptive::RmspropAttrs {
                epsilon: num("epsilon"),
                decay: num("decay"),
                momentum: num("momentum"),
                centered: flag("centered"),
                multi_precision: false,
            };
            let r = adaptive::rmsprop(
                t("param"),
                t("mean_square"),
                t("grad"),
                t("moment"),
                t("learning_rate"),
                i.get("mean_grad"),
                None,
                at,
            )
            .unwrap();
            o.insert("param_out", r.param);
            o.insert("moment_out", r.moment);
            o.insert("mean_square_out", r.mean_square);
            if let Some(mg) = r.mean_grad {
                o.insert("mean_grad_out", mg);
            }
        }
        "adagrad" => {
            let (p, m, _) = adaptive::adagrad(
                t("param"),
                t("grad"),
                t("moment"),
                t("learning_rate"),
                None,
                num("epsilon"),
                false,
            )
            .unwrap();
            o.insert("param_out", p);
            o.insert("moment_out", m);
        }
        "adamax" => {
            let at = adaptive::AdamaxAttrs {
                beta1: num("beta1"),
                beta2: num("beta2"),
                epsilon: num("epsilon"),
                multi_precision: false,
            };
            let r = adaptive::adamax(
                t("param"),
                t("grad"),
                t("learning_rate"),
                t("moment"),
                t("inf_norm"),
                t("beta1_pow"),
                None,
                at,
            )
            .unwrap();
            o.insert("param_out", r.param);
            o.insert("moment_out", r.moment);
            o.insert("inf_norm_out", r.inf_norm);
        }
        "lamb" | "lamb_no_decay" => {
            let input = adaptive::LambIn {
                param: t("param"),
                grad: t("grad"),
                learning_rate: t("learning_rate"),
                moment1: t("moment1"),
                moment2: t("moment2"),
                beta1_pow: t("beta1_pow"),
                beta2_pow: t("beta2_pow"),
                master_param: None,
                skip_update: None,
            };
            let at = adaptive::LambAttrs {
                weight_decay: num("weight_decay"),
                beta1: num("beta1"),
                beta2: num("beta2"),
                epsilon: num("epsilon"),
                always_adapt: false,
                multi_precision: false,
            };
            let r = adaptive::lamb(&input, at).unwrap();
            o.insert("param_out", r.param);
            o.insert("moment1_out", r.moment1);
            o.insert("moment2_out", r.moment2);
            o.insert("beta1_pow_out", r.beta1_pow);
            o.insert("beta2_pow_out", r.beta2_pow);
        }
        "prelu_all" | "prelu_channel" | "prelu_channel_nhwc" | "prelu_element" => {
            let mode = prelu::Mode::parse(
                a["mode"].as_str().expect("mode"),
                a["data_format"].as_str().expect("data_format"),
            )
            .unwrap();
            let (x, al, g) = (x.unwrap(), t("alpha"), g.unwrap());
            o.insert("out", prelu::prelu(x, al, mode).unwrap());
            let (dx, da) = prelu::prelu_grad(x, al, g, mode).unwrap();
            o.insert("x_grad", dx);
            o.insert("alpha_grad", da);
        }
        "group_norm" | "group_norm_nhwc" | "instance_norm" => {
            let (x, sc, bi, dy) = (x.unwrap(), t("scale"), t("bias"), t("y_grad"));
            let eps = num("epsilon");
            let (out, gr) = if name == "instance_norm" {
                let out = gn::instance_norm(x, Some(sc), Some(bi), eps).unwrap();
                let gr =
                    gn::instance_norm_grad(x, Some(sc), Some(bi), &out.mean, &out.variance, dy)
                        .unwrap();
                (out, gr)
            } else {
                let groups = a["groups"].as_i64().expect("groups");
                let last = a["data_format"] == "NHWC";
                let out = gn::group_norm(x, Some(sc), Some(bi), eps, groups, last).unwrap();
                let gr = gn::group_norm_grad(
                    x,
                    Some(sc),
                    Some(bi),
                    &out.mean,
                    &out.variance,
                    dy,
                    eps,
                    groups,
                    last,
                )
                .unwrap();
                (out, gr)
            };
            o.insert("y", out.y);
            o.insert("x_grad", gr.x_grad);
            o.insert("scale_grad", gr.scale_grad.unwrap());
            o.insert("bias_grad", gr.bias_grad.unwrap());
        }
        "hardtanh" => {
            let (x, g, lo, hi) = (x.unwrap(), g.unwrap(), num("t_min"), num("t_max"));
            unary(
                &mut o,
                pw::hardtanh(x, lo, hi).unwrap(),
                pw::hardtanh_grad(x, g, lo, hi).unwrap(),
            );
        }
        "softshrink" | "hardshrink" => {
            let (x, g, th) = (x.unwrap(), g.unwrap(), num("threshold"));
            let (out, dx) = if name == "softshrink" {
                (pw::softshrink(x, th), pw::softshrink_grad(x, g, th))
            } else {
                (pw::hardshrink(x, th), pw::hardshrink_grad(x, g, th))
            };
            unary(&mut o, out.unwrap(), dx.unwrap());
        }
        "thresholded_relu" => {
            let (x, g, th) = (x.unwrap(), g.unwrap(), num("threshold"));
            unary(
                &mut o,
                pw::thresholded_relu(x, th, num("value")).unwrap(),
                pw::thresholded_relu_grad(x, g, th).unwrap(),
            );
        }
        "softsign" | "logsigmoid" | "tanh_shrink" => {
            type F = fn(&Tensor) -> crate::exec::error::KResult<Tensor>;
            type G = fn(&Tensor, &Tensor) -> crate::exec::error::KResult<Tensor>;
            let (f, df): (F, G) = match name {
                "softsign" => (act::softsign, act::softsign_grad),
                "logsigmoid" => (act::logsigmoid, act::logsigmoid_grad),
                _ => (act::tanh_shrink, act::tanh_shrink_grad),
            };
            let (x, g) = (x.unwrap(), g.unwrap());
            unary(&mut o, f(x).unwrap(), df(x, g).unwrap());
        }
        "celu" => {
            let (x, g, al) = (x.unwrap(), g.unwrap(), num("alpha"));
            unary(
                &mut o,
                act::celu(x, al).unwrap(),
                act::celu_grad(x, g, al).unwrap(),
            );
        }
        "stanh" => {
            let (x, g, sa, sb) = (x.unwrap(), g.unwrap(), num("scale_a"), num("scale_b"));
            unary(
                &mut o,
                act::stanh(x, sa, sb).unwrap(),
                act::stanh_grad(x, g, sa, sb).unwrap(),
            );
        }
        "max" | "max_keep" | "max_all" | "min" | "min_keep" | "min_all" => {
            let axes = ints(&a["axis"]);
            let (x, g) = (x.unwrap(), g.unwrap());
            let out = reduce::extremum(x, &axes, flag("keepdim"), name.starts_with("max")).unwrap();
            let dx = reduce::extremum_grad(x, &out, g, &axes, false).unwrap();
            unary(&mut o, out, dx);
        }
        "logsumexp" | "logsumexp_keep" | "logsumexp_all" => {
            let axes = ints(&a["axis"]);
            let (x, g, all) = (x.unwrap(), g.unwrap(), flag("reduce_all"));
            let out = reduce::logsumexp(x, &axes, flag("keepdim"), all).unwrap();
            let dx = reduce::logsumexp_grad(x, &out, g, &axes, all).unwrap();
            unary(&mut o, out, dx);
        }
        "mean_all" => {
            let (x, g) = (x.unwrap(), g.unwrap());
            unary(
                &mut o,
                reduce::mean_all(x).unwrap(),
                reduce::mean_all_grad(x, g).unwrap(),
            );
        }
        "flip" => {
            let axes = ints(&a["axis"]);
            let (x, g) = (x.unwrap(), g.unwrap());
            unary(
                &mut o,
                reorder::flip(x, &axes).unwrap(),
                reorder::flip(g, &axes).unwrap(),
            );
        }
        "roll" | "roll_flat" => {
            let (shifts, axes) = (ints(&a["shifts"]), ints(&a["axis"]));
            let (x, g) = (x.unwrap(), g.unwrap());
            unary(
                &mut o,
                reorder::roll(x, &shifts, &axes).unwrap(),
                reorder::roll_grad(g, &shifts, &axes).unwrap(),
            );
        }
        "one_hot" => {
            let n = a["num_classes"].as_i64().expect("num_classes");
            o.insert("out", index::one_hot(x.unwrap(), n).unwrap());
        }
        "huber_loss" => {
            let d = num("delta");
            let (out, res) = loss::huber_loss(t("input"), t("label"), d).unwrap();
            let (di, dl) = loss::huber_loss_grad(&res, g.unwrap(), d).unwrap();
            o.insert("out", out);
            o.insert("input_grad", di);
            o.insert("label_grad", dl);
        }
        "sigmoid_ce" | "sigmoid_ce_norm" | "sigmoid_ce_pos_weight" => {
            let at = loss::SigmoidCeAttrs {
                normalize: flag("normalize"),
                ignore_index: a["ignore_index"].as_i64().expect("ignore_index"),
            };
            let (x, l, w) = (x.unwrap(), t("label"), i.get("pos_weight"));
            unary(
                &mut o,
                loss::sigmoid_ce(x, l, w, at).unwrap(),
                loss::sigmoid_ce_grad(x, l, w, g.unwrap(), at).unwrap(),
            );
        }
        n if n.starts_with("pad3d") => {
            let str_of = |k: &str| a[k].as_str().expect("string attr");
            let (mode, channels_last) =
                pad::PadAttrs::mode_and_layout(str_of("mode"), str_of("data_format")).unwrap();
            let at = pad::PadAttrs {
                paddings: ints(&a["paddings"]),
                mode,
                pad_value: a["pad_value"].as_f64().expect("pad_value"),
                channels_last,
            };
            let x = x.unwrap();
            unary(
                &mut o,
                pad::pad3d(x, &at).unwrap(),
                pad::pad3d_grad(x, g.unwrap(), &at).unwrap(),
            );
        }
        n if n.contains("_interp") => {
            let at = interp::InterpAttrs {
                method: interp::InterpAttrs::method(
                    a["interp_method"].as_str().expect("interp_method"),
                    "NCHW",
                )
                .unwrap(),
                out_h: a["out_h"].as_i64().expect("out_h"),
                out_w: a["out_w"].as_i64().expect("out_w"),
                scale: a["scale"]
                    .as_array()
                    .expect("scale")
                    .iter()
                    .map(|v| v.as_f64().expect("a scale") as f32)
                    .collect(),
                align_corners: flag("align_corners"),
                align_mode: a["align_mode"].as_i64().expect("align_mode"),
                out_size: None,
                size_tensor: None,
                scale_tensor: None,
            };
            let x = x.unwrap();
            unary(
                &mut o,
                interp::interp(x, &at).unwrap(),
                interp::interp_grad(x, g.unwrap(), &at).unwrap(),
            );
        }
        n if n.contains("conv2d_transpose") => {
            let str_of = |k: &str| a[k].as_str().expect("string attr");
            let at = conv_transpose::ConvTransposeAttrs {
                conv: conv::ConvAttrs {
                    strides: ints(&a["strides"]),
                    paddings: ints(&a["paddings"]),
                    dilations: ints(&a["dilations"]),
                    groups: a["groups"].as_i64().expect("groups"),
                    padding_algorithm: conv::PaddingAlgorithm::parse(str_of("padding_algorithm"))
                        .unwrap(),
                    channels_last: conv::channels_last(str_of("data_format")).unwrap(),
                },
                output_padding: ints(&a["output_padding"]),
                output_size: ints(&a["output_size"]),
            };
            let (x, w) = (x.unwrap(), t("filter"));
            o.insert("out", conv_transpose::conv2d_transpose(x, w, &at).unwrap());
            let (dx, dw) = conv_transpose::conv2d_transpose_grad(x, w, g.unwrap(), &at).unwrap();
            o.insert("x_grad", dx);
            o.insert("filter_grad", dw);
        }
        n if n.starts_with("max_pool2d_with_index") => {
            let at = pool::MaxPoolWithIndexAttrs {
                kernel_size: ints(&a["kernel_size"]),
                strides: ints(&a["strides"]),
                paddings: ints(&a["paddings"]),
                global_pooling: flag("global_pooling"),
                adaptive: flag("adaptive"),
                ceil_mode: flag("ceil_mode"),
            };
            let x = x.unwrap();
            let (out, mask) = pool::max_pool2d_with_index(x, &at).unwrap();
            let dx = pool::max_pool2d_with_index_grad(x, &mask, g.unwrap(), &at).unwrap();
            o.insert("out", out);
            o.insert("mask", mask);
            o.insert("x_grad", dx);
        }
        n if n.starts_with("pixel_") => {
            let at = pixel_shuffle::ShuffleAttrs::new(
                a["factor"].as_i64().expect("factor"),
                a["data_format"].as_str().expect("data_format"),
            )
            .unwrap();
            let (x, g) = (x.unwrap(), g.unwrap());
            if n.starts_with("pixel_shuffle") {
                unary(
                    &mut o,
                    pixel_shuffle::pixel_shuffle(x, &at).unwrap(),
                    pixel_shuffle::pixel_shuffle_grad(g, &at).unwrap(),
                );
            } else {
                unary(
                    &mut o,
                    pixel_shuffle::pixel_unshuffle(x, &at).unwrap(),
                    pixel_shuffle::pixel_unshuffle_grad(g, &at).unwrap(),
                );
            }
        }
        n if n.starts_with("unfold") => {
            let at = unfold::UnfoldAttrs {
                kernel_sizes: ints(&a["kernel_sizes"]),
                strides: ints(&a["strides"]),
                paddings: ints(&a["paddings"]),
                dilations: ints(&a["dilations"]),
            };
            let x = x.unwrap();
            unary(
                &mut o,
                unfold::unfold(x, &at).unwrap(),
                unfold::unfold_grad(x, g.unwrap(), &at).unwrap(),
            );
        }
        n if n.starts_with("maxout") => {
            let at = maxout::MaxoutAttrs {
                groups: a["groups"].as_i64().expect("groups"),
                axis: a["axis"].as_i64().expect("axis"),
            };
            let x = x.unwrap();
            let out = maxout::maxout(x, &at).unwrap();
            let dx = maxout::maxout_grad(x, &out, g.unwrap(), &at).unwrap();
            unary(&mut o, out, dx);
        }
        n if n.starts_with("pool3d") => {
            let str_of = |k: &str| a[k].as_str().expect("string attr");
            let (kind, _) =
                pool::PoolAttrs::kind_and_layout(str_of("pooling_type"), "NCHW").unwrap();
            let at = pool::PoolAttrs {
                kind,
                kernel_size: ints(&a["kernel_size"]),
                strides: ints(&a["strides"]),
                paddings: ints(&a["paddings"]),
                ceil_mode: flag("ceil_mode"),
                exclusive: flag("exclusive"),
                adaptive: flag("adaptive"),
                global_pooling: flag("global_pooling"),
                padding_algorithm: conv::PaddingAlgorithm::parse(str_of("padding_algorithm"))
                    .unwrap(),
                channels_last: crate::exec::kernels::conv::channels_last_3d(
                    str_of("data_format"),
                    "pool3d",
                )
                .unwrap(),
            };
            let x = x.unwrap();
            let out = pool3d::pool3d(x, &at).unwrap();
            let dx = pool3d::pool3d_grad(x, &out, g.unwrap(), &at).unwrap();
            unary(&mut o, out, dx);
        }
        other => panic!("no runner for recorded case {other}"),
    }
    o
}

#[test]
fn every_recorded_model_kernel_matches_paddle() {
    check_recorded("paddle_model_kernels.json", 81, run_case);
}

/// Runs `run` on every case of `tests/exec_fixtures/<file>` (at least `min_cases` of them) and
/// compares its outputs with Paddle's: the same names, shapes and dtypes, and values within
/// `1e-5·|b| + 1e-5·max|b|`.
pub(super) fn check_recorded(
    file: &str,
    min_cases: usize,
    run: fn(&str, &BTreeMap<String, Tensor>, &Value) -> Outputs,
) {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/exec_fixtures")
        .join(file);
    let j: Value =
        serde_json::from_str(&std::fs::read_to_string(p).expect("readable")).expect("json");
    let cases = j["cases"].as_array().expect("cases");
    assert!(cases.len() >= min_cases);
    for c in cases {
        let name = c["name"].as_str().expect("name");
        let inputs: BTreeMap<String, Tensor> = c["inputs"]
            .as_object()
            .expect("inputs")
            .iter()
            .map(|(k, v)| (k.clone(), tensor_from_json(v).expect("tensor")))
            .collect();
        let got = run(name, &inputs, &c["attrs"]);
        let want = c["outputs"].as_object().expect("outputs");
        assert_eq!(
            got.keys().copied().collect::<Vec<_>>(),
            want.keys().map(String::as_str).collect::<Vec<_>>(),
            "{name}: outputs"
        );
        for (k, w) in want {
            let w = tensor_from_json(w).expect("tensor");
            let g = &got[k.as_str()];
            assert_eq!(g.shape(), w.shape(), "{name} {k}: shape");
            assert_eq!(g.dtype(), w.dtype(), "{name} {k}: dtype");
            let (gv, wv) = (g.to_f64_vec(), w.to_f64_vec());
            let max = wv.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            for (e, (a, b)) in gv.iter().zip(&wv).enumerate() {
                assert!(
                    (a - b).abs() <= 1e-5 * b.abs() + 1e-5 * max,
                    "{name} {k}[{e}]: irw {a}, Paddle {b}"
                );
            }
        }
    }
}
