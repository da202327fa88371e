//! `irw gen cnn [--batch-norm]`: the training program of a small convolutional network, in
//! Paddle 3.3.1's text form (main, then `startup { … }`, as `irw gen mlp` writes it).
//!
//! The model: `x [-1, 1, 8, 8]` → `conv2d` (4 filters 3×3, padding 1) + bias → (`--batch-norm`:
//! a train-mode `batch_norm_` instead of the bias, as `paddle.nn.BatchNorm2D` after a
//! `Conv2D(bias_attr=False)`) → `relu` → max `pool2d` 2×2 → `flatten` → `Linear(64, 10)` →
//! `cross_entropy_with_softmax` against an int64 `label [-1, 1]` → `mean`; the backward ops
//! `append_backward` adds, in reverse; one `sgd_` per parameter, learning rate 0.1. The op
//! lines, attributes and their order follow Paddle's own LeNet dump
//! (`fixtures/paddle-zoo/lenet_momentum_before.ir`); the batch norm's follow Paddle's op
//! definition (`pd_op.h`: operands `x, mean, variance, scale, bias`; results `out, mean_out,
//! variance_out, saved_mean, saved_variance, reserve_space`), with its running mean and
//! variance as non-trainable parameters (`batch_norm2d_0.w_1`, `.w_2`) that `batch_norm_`
//! updates in place. Built by analogy: no Paddle dump of this exact model is compared.
//!
//! Why: the batch-norm variant is the smallest program whose forward mixes the rows of its
//! batch, which `irw check` must recognize (its batch-coupled verdict); the plain one is the
//! same network without that coupling, which gradient merge reproduces exactly.

use super::text::{learning_rate, program, sgd, ty, Params, Text, V};

/// What to generate.
#[derive(Clone, Copy, Debug, Default)]
pub struct CnnOptions {
    /// A train-mode `batch_norm_` after the convolution (which then has no bias).
    pub batch_norm: bool,
}

const CONV_ATTRS: &str = "data_format:\"NCHW\",dilations:[1,1],groups:1,op_role:{R},padding_algorithm:\"EXPLICIT\",paddings:[1,1],stop_gradient:[{S}],strides:[1,1]";
const POOL_ATTRS: &str = "adaptive:false,ceil_mode:false,data_format:\"NCHW\",exclusive:true,global_pooling:false,op_role:{R},padding_algorithm:\"EXPLICIT\",paddings:[0,0],pooling_type:\"max\",stop_gradient:[false],strides:[2,2]";
const BN_ATTRS: &str = "data_format:\"NCHW\",epsilon:1e-05,is_test:false,momentum:0.9,op_role:{R},stop_gradient:[{S}],trainable_statistics:false,use_global_stats:false";

fn attrs(template: &str, role: u8, stop: &str) -> String {
    template
        .replace("{R}", &role.to_string())
        .replace("{S}", stop)
}

/// The program's text: main, then `startup { … }`.
pub fn cnn(opts: &CnnOptions) -> String {
    let (c, hw, k, classes) = (4i64, 8i64, 3i64, 10i64);
    let pooled = hw / 2;
    let flat = c * pooled * pooled;
    let conv_w = "conv2d_0.w_0";
    let bn = [
        "batch_norm2d_0.w_0",
        "batch_norm2d_0.b_0",
        "batch_norm2d_0.w_1",
        "batch_norm2d_0.w_2",
    ];
    // Parameters in creation order: conv, (batch norm | conv bias), linear.
    let mut params: Vec<(String, Vec<i64>, bool)> = vec![(conv_w.into(), vec![c, 1, k, k], true)];
    if opts.batch_norm {
        params.push((bn[0].into(), vec![c], true));
        params.push((bn[1].into(), vec![c], true));
        params.push((bn[2].into(), vec![c], false));
        params.push((bn[3].into(), vec![c], false));
    } else {
        params.push(("conv2d_0.b_0".into(), vec![c], true));
    }
    params.push(("linear_0.w_0".into(), vec![flat, classes], true));
    params.push(("linear_0.b_0".into(), vec![classes], true));

    let mut t = Text::new();
    let lr = learning_rate(&mut t);
    let pv = Params::declare(&mut t, &params);
    let p = |name: &str| pv.get(name);
    let img = [-1, c, hw, hw];
    let x = t.one(
        "pd_op.data",
        &[],
        &format!("dtype:float32,name:\"x\",op_role:0,place:Place(undefined:0),shape:[-1,1,{hw},{hw}],stop_gradient:[true]"),
        ty(&[-1, 1, hw, hw]),
    );
    let label = t.one(
        "pd_op.data",
        &[],
        "dtype:int64,name:\"label\",op_role:0,place:Place(undefined:0),shape:[-1,1],stop_gradient:[true]",
        "tensor<-1x1xi64>".into(),
    );
    let w = p(conv_w);
    let conv = t.one(
        "pd_op.conv2d",
        &[Some(&x), Some(&w)],
        &(attrs(CONV_ATTRS, 0, "false") + ",struct_name:\"/CNN/Conv2D/\""),
        ty(&img),
    );
    // Either a batch norm or the conv bias.
    enum Norm {
        Bn { out: Vec<V> },
        Bias { reshaped: V },
    }
    let (norm, act_in) = if opts.batch_norm {
        let (sc, bi, mean, var) = (p(bn[0]), p(bn[1]), p(bn[2]), p(bn[3]));
        let out = t.op(
            "pd_op.batch_norm_",
            &[Some(&conv), Some(&mean), Some(&var), Some(&sc), Some(&bi)],
            &(attrs(BN_ATTRS, 0, "false,false,false,false,false,false")
                + ",struct_name:\"/CNN/BatchNorm2D/\""),
            &[
                Some(ty(&img)),
                Some(ty(&[c])),
                Some(ty(&[c])),
                Some(ty(&[c])),
                Some(ty(&[c])),
                Some("tensor<-1xu8>".into()),
            ],
        );
        let y = out[0].clone();
        (Norm::Bn { out }, y)
    } else {
        let shape = t.one(
            "pd_op.full_int_array",
            &[],
            "dtype:int64,op_role:0,place:Place(cpu),stop_gradient:[true],struct_name:\"/CNN/Conv2D/\",value:[1,-1,1,1]",
            "tensor<4xi64>".into(),
        );
        let b = p("conv2d_0.b_0");
        let reshaped = t.one(
            "pd_op.reshape",
            &[Some(&b), Some(&shape)],
            "op_role:0,stop_gradient:[false],struct_name:\"/CNN/Conv2D/\"",
            ty(&[1, c, 1, 1]),
        );
        let sum = t.one(
            "pd_op.add",
            &[Some(&conv), Some(&reshaped)],
            "op_role:0,stop_gradient:[false],struct_name:\"/CNN/Conv2D/\"",
            ty(&img),
        );
        (Norm::Bias { reshaped }, sum)
    };
    let relu = t.one(
        "pd_op.relu",
        &[Some(&act_in)],
        "op_role:0,stop_gradient:[false],struct_name:\"/CNN/ReLU/\"",
        ty(&img),
    );
    let ks = t.one(
        "pd_op.full_int_array",
        &[],
        "dtype:int64,op_role:0,place:Place(cpu),stop_gradient:[true],struct_name:\"/CNN/MaxPool2D/\",value:[2,2]",
        "tensor<2xi64>".into(),
    );
    let pool_shape = [-1, c, pooled, pooled];
    let pool = t.one(
        "pd_op.pool2d",
        &[Some(&relu), Some(&ks)],
        &(attrs(POOL_ATTRS, 0, "false") + ",struct_name:\"/CNN/MaxPool2D/\""),
        ty(&pool_shape),
    );
    let flat_v = t.one(
        "pd_op.flatten",
        &[Some(&pool)],
        "op_role:0,start_axis:1,stop_axis:3,stop_gradient:[false],struct_name:\"/CNN/\"",
        ty(&[-1, flat]),
    );
    let (lw, lb) = (p("linear_0.w_0"), p("linear_0.b_0"));
    let mm = t.one(
        "pd_op.matmul",
        &[Some(&flat_v), Some(&lw)],
        "op_role:0,stop_gradient:[false],struct_name:\"/CNN/Linear/\",transpose_x:false,transpose_y:false",
        ty(&[-1, classes]),
    );
    let logits = t.one(
        "pd_op.add",
        &[Some(&mm), Some(&lb)],
        "op_role:0,stop_gradient:[false],struct_name:\"/CNN/Linear/\"",
        ty(&[-1, classes]),
    );
    let ce = t.op(
        "pd_op.cross_entropy_with_softmax",
        &[Some(&logits), Some(&label)],
        "axis:-1,ignore_index:-100,numeric_stable_mode:true,op_role:0,soft_label:false,stop_gradient:[false,false],use_softmax:true",
        &[Some(ty(&[-1, classes])), Some(ty(&[-1, 1]))],
    );
    let axes = t.one(
        "pd_op.full_int_array",
        &[],
        "dtype:int64,op_role:0,place:Place(cpu),stop_gradient:[true],value:[]",
        "tensor<0xi64>".into(),
    );
    let loss = t.one(
        "pd_op.mean",
        &[Some(&ce[1]), Some(&axes)],
        "keepdim:false,op_role:0,stop_gradient:[false]",
        "tensor<f32>".into(),
    );
    // Backward.
    let one = t.one(
        "pd_op.full",
        &[],
        "dtype:float32,op_role:1,place:Place(cpu),shape:[1],stop_gradient:[true],value:1",
        ty(&[1]),
    );
    let seed = t.one(
        "pd_op.full_like",
        &[Some(&loss), Some(&one)],
        "dtype:float32,op_role:1,place:Place(undefined:0),stop_gradient:[false]",
        "tensor<f32>".into(),
    );
    let d_rows = t.one(
        "pd_op.mean_grad",
        &[Some(&ce[1]), Some(&seed), Some(&axes)],
        "keepdim:false,op_role:1,reduce_all:false,stop_gradient:[false]",
        ty(&[-1, 1]),
    );
    let d_logits = t.one(
        "pd_op.cross_entropy_with_softmax_grad",
        &[Some(&label), Some(&ce[0]), Some(&d_rows)],
        "axis:-1,ignore_index:-100,numeric_stable_mode:true,op_role:1,soft_label:false,stop_gradient:[false],use_softmax:true",
        ty(&[-1, classes]),
    );
    let g_lin_b = t.op(
        "pd_op.add_grad",
        &[Some(&mm), Some(&lb), Some(&d_logits)],
        "axis:-1,op_role:1,stop_gradient:[false,false]",
        &[Some(ty(&[-1, classes])), Some(ty(&[classes]))],
    );
    let g_lin_w = t.op(
        "pd_op.matmul_grad",
        &[Some(&flat_v), Some(&lw), Some(&g_lin_b[0])],
        "op_role:1,stop_gradient:[false,false],transpose_x:false,transpose_y:false",
        &[Some(ty(&[-1, flat])), Some(ty(&[flat, classes]))],
    );
    let d_pool = t.one(
        "pd_op.flatten_grad",
        &[Some(&pool), Some(&g_lin_w[0])],
        "op_role:1,stop_gradient:[false]",
        ty(&pool_shape),
    );
    let d_relu_out = t.one(
        "pd_op.pool2d_grad",
        &[Some(&relu), Some(&pool), Some(&d_pool), Some(&ks)],
        &attrs(POOL_ATTRS, 1, "false"),
        ty(&img),
    );
    let d_act = t.one(
        "pd_op.relu_grad",
        &[Some(&relu), Some(&d_relu_out)],
        "op_role:1,stop_gradient:[false]",
        ty(&img),
    );
    let mut grads: Vec<(String, V)> = vec![
        ("linear_0.b_0".into(), g_lin_b[1].clone()),
        ("linear_0.w_0".into(), g_lin_w[1].clone()),
    ];
    let d_conv = match norm {
        Norm::Bn { out } => {
            let (sc, bi) = (p(bn[0]), p(bn[1]));
            let g = t.op(
                "pd_op.batch_norm_grad",
                &[
                    Some(&conv),
                    Some(&sc),
                    Some(&bi),
                    Some(&out[1]),
                    Some(&out[2]),
                    Some(&out[3]),
                    Some(&out[4]),
                    Some(&out[5]),
                    Some(&d_act),
                ],
                &attrs(BN_ATTRS, 1, "false,false,false"),
                &[Some(ty(&img)), Some(ty(&[c])), Some(ty(&[c]))],
            );
            grads.push((bn[1].into(), g[2].clone()));
            grads.push((bn[0].into(), g[1].clone()));
            g[0].clone()
        }
        Norm::Bias { reshaped } => {
            let g = t.op(
                "pd_op.add_grad",
                &[Some(&conv), Some(&reshaped), Some(&d_act)],
                "axis:-1,op_role:1,stop_gradient:[false,false]",
                &[Some(ty(&img)), Some(ty(&[1, c, 1, 1]))],
            );
            let b = p("conv2d_0.b_0");
            let db = t.one(
                "pd_op.reshape_grad",
                &[Some(&b), Some(&g[1])],
                "op_role:1,stop_gradient:[false]",
                ty(&[c]),
            );
            grads.push(("conv2d_0.b_0".into(), db));
            g[0].clone()
        }
    };
    let g_conv = t.op(
        "pd_op.conv2d_grad",
        &[Some(&x), Some(&w), Some(&d_conv)],
        &attrs(CONV_ATTRS, 1, "false,false"),
        &[None, Some(ty(&[c, 1, k, k]))],
    );
    grads.push((conv_w.into(), g_conv[1].clone()));
    let grads: Vec<(&str, &V)> = grads.iter().map(|(n, v)| (n.as_str(), v)).collect();
    sgd(&mut t, &params, &pv, &lr, &grads);
    program(t, &params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{parse_module, print_module};
    use crate::SourceFile;

    #[test]
    fn both_variants_parse_verify_and_print_back() {
        for batch_norm in [false, true] {
            let text = cnn(&CnnOptions { batch_norm });
            let m = parse_module(&SourceFile::new("cnn.ir", text.clone())).expect("parses");
            crate::dialect::verify_module(&m).expect("verifies");
            assert_eq!(print_module(&m), text);
            assert_eq!(text.contains("pd_op.batch_norm_"), batch_norm);
        }
    }
}
