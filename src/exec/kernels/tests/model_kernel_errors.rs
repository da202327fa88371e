//! The kernels of real vision, sequence and transformer models (`kernels_paddle_models`,
//! `kernels_paddle_rope_moe`) refuse inputs that break their contract with a
//! message saying what is wrong (never a panic or a read out of bounds).

use crate::exec::kernels::cumsum::{cumsum, cumsum_grad, CumsumAttrs};
use crate::exec::kernels::{adaptive, shape, softmax as sm};
use crate::exec::tensor::Data;
use crate::exec::{KernelError, Tensor};

fn f(shape: &[usize]) -> Tensor {
    Tensor::f32(shape, vec![0.5; shape.iter().product()])
}

fn expect_err<T>(what: &str, r: Result<T, KernelError>, fragment: &str) {
    match r {
        Ok(_) => panic!("{what}: accepted"),
        Err(e) => assert!(
            e.message.contains(fragment),
            "{what}: message {:?} lacks {fragment:?}",
            e.message
        ),
    }
}

#[test]
fn every_bad_input_is_named() {
    let (x23, x3) = (f(&[2, 3]), f(&[3]));
    let at = CumsumAttrs {
        axis: 2,
        ..Default::default()
    };
    expect_err(
        "cumsum axis",
        cumsum(&x23, &at),
        "cumsum: axis 2 out of range for rank 2",
    );
    expect_err(
        "cumsum_grad shape",
        cumsum_grad(&x23, &x3, &CumsumAttrs::default()),
        "cumsum_grad: out_grad [3] is not the shape of the output [2, 3]",
    );
    expect_err(
        "log_softmax_grad shape",
        sm::log_softmax_grad(&x23, &x3, -1),
        "log_softmax_grad: out [2, 3] and out_grad [3] differ in shape",
    );
    expect_err(
        "label_smooth no classes",
        sm::label_smooth(&f(&[2, 0]), None, 0.1),
        "label_smooth: the label has no classes",
    );
    expect_err(
        "label_smooth prior",
        sm::label_smooth(&x23, Some(&f(&[2])), 0.1),
        "label_smooth: prior_dist [2] must hold one value per class (3)",
    );
    expect_err(
        "assign_value count",
        shape::assign_value(&[2, 2], Data::F64(vec![1.0; 3])),
        "assign_value: 3 values for shape [2, 2] (4 elements)",
    );
    let lr = Tensor::f32(&[1], vec![0.1]);
    let at = adaptive::RmspropAttrs {
        epsilon: 1e-6,
        decay: 0.9,
        momentum: 0.0,
        centered: true,
        multi_precision: false,
    };
    expect_err(
        "rmsprop_ centered without mean_grad",
        adaptive::rmsprop(&x3, &x3, &x3, &x3, &lr, None, None, at),
        "rmsprop_: centered needs the mean_grad operand",
    );
    expect_err(
        "lamb_ moment size",
        adaptive::lamb(
            &adaptive::LambIn {
                param: &x3,
                grad: &x3,
                learning_rate: &lr,
                moment1: &x23,
                moment2: &x3,
                beta1_pow: &lr,
                beta2_pow: &lr,
                master_param: None,
                skip_update: None,
            },
            adaptive::LambAttrs {
                weight_decay: 0.01,
                beta1: 0.9,
                beta2: 0.999,
                epsilon: 1e-6,
                always_adapt: false,
                multi_precision: false,
            },
        ),
        "lamb_ moment1: [3] and [2, 3] differ in size",
    );
}

#[test]
fn every_bad_input_of_the_second_set_is_named() {
    use crate::exec::kernels::{group_norm as gn, index, loss, prelu, reduce, reorder};
    let (x23, x3, x2) = (f(&[2, 3]), f(&[3]), f(&[2]));
    expect_err(
        "prelu layout",
        prelu::Mode::parse("channel", "NDHW"),
        "prelu: data_format `NDHW` is not one the executor runs (NCHW or NHWC)",
    );
    expect_err(
        "prelu mode",
        prelu::Mode::parse("row", "NCHW"),
        "prelu: mode `row` is not one of `all`, `channel`, `element`",
    );
    let channel = prelu::Mode::Channel {
        channels_last: false,
    };
    expect_err(
        "prelu rank",
        prelu::prelu(&x3, &x3, channel),
        "prelu: channel mode needs an input of rank 2 or more, got [3]",
    );
    expect_err(
        "prelu alpha size",
        prelu::prelu(&x23, &x2, channel),
        "prelu: alpha [2] must hold 3 slope(s) for mode Channel { channels_last: false } and input [2, 3]",
    );
    expect_err(
        "prelu_grad shape",
        prelu::prelu_grad(&x23, &f(&[1]), &x3, prelu::Mode::All),
        "prelu_grad: out_grad [3] is not the shape of x [2, 3]",
    );
    expect_err(
        "group_norm rank",
        gn::group_norm(&x3, None, None, 1e-5, 1, false),
        "group_norm: input must have a batch and a channel axis, is [3]",
    );
    expect_err(
        "group_norm groups",
        gn::group_norm(&x23, None, None, 1e-5, 2, false),
        "group_norm: groups 2 must be positive and divide the 3 channels",
    );
    expect_err(
        "instance_norm scale",
        gn::instance_norm(&x23, Some(&x2), None, 1e-5),
        "instance_norm: scale [2] must hold one value per channel (3)",
    );
    expect_err(
        "instance_norm_grad saved",
        gn::instance_norm_grad(&x23, None, None, &x2, &f(&[6]), &x23),
        "instance_norm_grad: saved_mean [2] must hold 6 values, one per sample and group",
    );
    expect_err(
        "group_norm_grad y_grad",
        gn::group_norm_grad(&x23, None, None, &x2, &x2, &x3, 1e-5, 1, false),
        "group_norm_grad: y_grad [3] is not the shape of x [2, 3]",
    );
    expect_err(
        "max empty",
        reduce::extremum(&f(&[0, 3]), &[], false, true),
        "max: the input [0, 3] is empty",
    );
    expect_err(
        "max_grad shape",
        reduce::extremum_grad(&x23, &x3, &x2, &[1], false),
        "max/min grad: out [3] and out_grad [2] must be the reduction of x [2, 3]",
    );
    expect_err(
        "logsumexp_grad shape",
        reduce::logsumexp_grad(&x23, &x3, &x3, &[1], false),
        "logsumexp_grad: out [3] and out_grad [3] must be the reduction of x [2, 3]",
    );
    expect_err(
        "flip axis",
        reorder::flip(&x23, &[2]),
        "flip: axis 2 out of range for rank 2",
    );
    expect_err(
        "roll flat shifts",
        reorder::roll(&x23, &[1, 2], &[]),
        "roll: without an axis, shifts must hold one value, holds [1, 2]",
    );
    expect_err(
        "roll lengths",
        reorder::roll(&x23, &[1, 2], &[0]),
        "roll: shifts [1, 2] and axis [0] must have the same length",
    );
    expect_err(
        "one_hot depth",
        index::one_hot(&Tensor::i64(&[2], vec![0, 1]), 0),
        "one_hot: num_classes 0 must be positive",
    );
    expect_err(
        "one_hot index",
        index::one_hot(&Tensor::i64(&[2], vec![0, 4]), 4),
        "one_hot: index 4 is out of range 0..4",
    );
    expect_err(
        "huber_loss label",
        loss::huber_loss(&x23, &x3, 1.0),
        "huber_loss: label [3] is not the shape of the input [2, 3]",
    );
    let at = loss::SigmoidCeAttrs {
        normalize: false,
        ignore_index: -100,
    };
    expect_err(
        "sigmoid_ce pos_weight",
        loss::sigmoid_ce(&x23, &x23, Some(&x3), at),
        "sigmoid_cross_entropy_with_logits: pos_weight [3] is not the shape of the input [2, 3]",
    );
}

#[test]
fn pad3d_refuses_what_paddle_refuses() {
    use crate::exec::kernels::pad::{pad3d, pad3d_grad, Mode, PadAttrs};
    let at = |paddings: Vec<i64>, mode| PadAttrs {
        paddings,
        mode,
        pad_value: 0.0,
        channels_last: false,
    };
    let x = f(&[1, 1, 2, 2, 2]);
    expect_err(
        "pad3d mode",
        PadAttrs::mode_and_layout("edge", "NCDHW"),
        "pad3d: mode `edge` is not one of `constant`, `reflect`, `replicate`, `circular`",
    );
    expect_err(
        "pad3d layout",
        PadAttrs::mode_and_layout("constant", "NCHW"),
        "pad3d: data_format `NCHW` is not one the executor runs (NCDHW or NDHWC)",
    );
    expect_err(
        "pad3d rank",
        pad3d(&f(&[2, 2]), &at(vec![0; 6], Mode::Constant)),
        "pad3d: input must have rank 5, has shape [2, 2]",
    );
    expect_err(
        "pad3d paddings length",
        pad3d(&x, &at(vec![1, 1], Mode::Constant)),
        "pad3d: paddings must hold 6 values, holds [1, 1]",
    );
    expect_err(
        "pad3d negative",
        pad3d(&x, &at(vec![0, 0, -1, 0, 0, 0], Mode::Constant)),
        "pad3d: paddings [0, 0, -1, 0, 0, 0] must not be negative",
    );
    expect_err(
        "pad3d overflow",
        pad3d(
            &x,
            &at(vec![i64::MAX, i64::MAX, 0, 0, 0, 0], Mode::Constant),
        ),
        "overflow the output's size",
    );
    expect_err(
        "pad3d empty replicate",
        pad3d(&f(&[1, 1, 0, 2, 2]), &at(vec![1; 6], Mode::Replicate)),
        "pad3d: an input with no spatial elements ([1, 1, 0, 2, 2]) cannot be padded in Replicate mode",
    );
    expect_err(
        "pad3d reflect",
        pad3d(&x, &at(vec![0, 2, 0, 0, 0, 0], Mode::Reflect)),
        "pad3d: reflect padding (0, 2) must be smaller than the axis it pads (2)",
    );
    expect_err(
        "pad3d_grad shape",
        pad3d_grad(&x, &x, &at(vec![1, 0, 0, 0, 0, 0], Mode::Constant)),
        "pad3d_grad: out_grad [1, 1, 2, 2, 2] is not the shape of the output [1, 1, 2, 2, 3]",
    );
}

#[test]
fn interp_refuses_what_it_cannot_size() {
    use crate::exec::kernels::interp::{interp, interp_grad, InterpAttrs, Method};
    let base = InterpAttrs {
        method: Method::Bilinear,
        out_h: 4,
        out_w: 4,
        scale: vec![],
        align_corners: false,
        align_mode: 0,
        out_size: None,
        size_tensor: None,
        scale_tensor: None,
    };
    let x = f(&[1, 1, 2, 2]);
    expect_err(
        "interp layout",
        InterpAttrs::method("bilinear", "NHWC"),
        "interp: data_format `NHWC` is not one the executor runs (NCHW)",
    );
    expect_err(
        "interp method",
        InterpAttrs::method("area", "NCHW"),
        "interp: interp_method `area` is not one the executor runs (nearest, bilinear or bicubic)",
    );
    expect_err(
        "interp rank",
        interp(&f(&[2, 2]), &base),
        "interp: input must have rank 4 (NCHW), has shape [2, 2]",
    );
    let sized = InterpAttrs {
        size_tensor: Some(vec![3]),
        ..base.clone()
    };
    expect_err(
        "interp size_tensor",
        interp(&x, &sized),
        "interp: size_tensor must hold 2 values, holds 1",
    );
    let scaled = InterpAttrs {
        scale: vec![2.0, -1.0],
        ..base.clone()
    };
    expect_err(
        "interp scale",
        interp(&x, &scaled),
        "interp: scale (2, -1) must be positive",
    );
    let empty = InterpAttrs {
        out_h: 0,
        ..base.clone()
    };
    expect_err(
        "interp size",
        interp(&x, &empty),
        "interp: output size (0, 4) must be positive",
    );
    // A scale's ratio (1/2) with a larger out_size points past the input.
    let beyond = InterpAttrs {
        scale: vec![2.0, 2.0],
        out_size: Some(vec![8, 8]),
        ..base.clone()
    };
    expect_err(
        "interp beyond",
        interp(&x, &beyond),
        "interp: output index 5 reads input index 2, outside 0..2",
    );
    expect_err(
        "interp_grad shape",
        interp_grad(&x, &x, &base),
        "interp_grad: output_grad [1, 1, 2, 2] is not the shape of the output [1, 1, 4, 4]",
    );
}

#[test]
fn norm_loss_index_and_optimizer_refusals_are_named() {
    use crate::exec::kernels::{gather_scatter as gs, loss, norm, optimizer, topk};
    let (x23, x3) = (f(&[2, 3]), f(&[3]));
    let ids = |shape: &[usize], v: Vec<i64>| Tensor::i64(shape, v);
    let pn = norm::PNormAttrs {
        porder: 2.0,
        axis: 2,
        epsilon: 1e-12,
        keepdim: false,
        asvector: false,
    };
    expect_err(
        "p_norm axis",
        norm::p_norm(&x23, &pn),
        "p_norm: axis 2 is out of range for rank 2",
    );
    let pn = norm::PNormAttrs { axis: 1, ..pn };
    expect_err(
        "p_norm_grad out",
        norm::p_norm_grad(&x23, &x3, &f(&[2]), &pn),
        "p_norm_grad: out has shape [3], the norm of [2, 3] has shape [2]",
    );
    expect_err(
        "bce_loss range",
        loss::bce_loss(&Tensor::f32(&[2], vec![0.5, 1.5]), &f(&[2])),
        "bce_loss: input 1.5 is not a probability in [0, 1]",
    );
    let nll = loss::NllAttrs {
        ignore_index: -100,
        reduction: loss::Reduction::Mean,
    };
    expect_err(
        "nll_loss label range",
        loss::nll_loss(&x23, &ids(&[2], vec![0, 3]), None, nll),
        "nll_loss: label 3 is out of range 0..3",
    );
    expect_err(
        "nll_loss rank",
        loss::nll_loss(&x3, &ids(&[3], vec![0, 0, 0]), None, nll),
        "nll_loss: input must be [N, C] or [N, C, H, W], is [3]",
    );
    expect_err(
        "nll_loss weight",
        loss::nll_loss(&x23, &ids(&[2], vec![0, 1]), Some(&f(&[2])), nll),
        "nll_loss: weight has shape [2], expected [3]",
    );
    expect_err(
        "kldiv reduction",
        loss::Reduction::parse("batchmean", "nll_loss"),
        "nll_loss: reduction \"batchmean\" is not one of Paddle's",
    );
    expect_err(
        "gather_nd range",
        gs::gather_nd(&x23, &ids(&[1, 2], vec![1, 3])),
        "gather_nd: index 3 is out of range [-3, 3)",
    );
    expect_err(
        "gather_nd depth",
        gs::gather_nd(&x23, &ids(&[1, 3], vec![0, 0, 0])),
        "gather_nd: index rows of length 3 address more dimensions than x [2, 3] has",
    );
    expect_err(
        "take_along_axis float index",
        gs::take_along_axis(&x23, &f(&[2, 1]), 1),
        "take_along_axis: index must be an integer tensor, is float32",
    );
    expect_err(
        "take_along_axis shapes",
        gs::take_along_axis(&f(&[2, 3, 4]), &ids(&[2, 1, 2], vec![0; 4]), 1),
        "take_along_axis: indices [2, 1, 2] and arr [2, 3, 4] differ off the axis 1",
    );
    expect_err(
        "put_along_axis mode",
        gs::PutReduce::parse("median"),
        "put_along_axis: reduce \"median\" is not supported by the executor",
    );
    let put = gs::PutAttrs {
        axis: 1,
        reduce: gs::PutReduce::Add,
        include_self: true,
    };
    expect_err(
        "put_along_axis values",
        gs::put_along_axis(&x23, &ids(&[2, 1], vec![0, 1]), &f(&[2, 2]), put),
        "put_along_axis: values [2, 2] must have the shape of indices [2, 1]",
    );
    expect_err(
        "scatter updates",
        gs::scatter(&x23, &ids(&[2], vec![0, 1]), &f(&[2, 2]), true),
        "scatter: updates [2, 2] must be [2] + the row shape [3] of x",
    );
    expect_err(
        "scatter range",
        gs::scatter(&x23, &ids(&[1], vec![-3]), &f(&[1, 3]), false),
        "scatter: index -3 is out of range [-2, 2)",
    );
    let arg = topk::ArgAttrs {
        axis: 0,
        keepdims: false,
        flatten: false,
        dtype: crate::exec::dtype::DType::F32,
    };
    expect_err(
        "argmax dtype",
        topk::arg_extremum(&x23, arg, true),
        "argmax: dtype must be int32 or int64, is float32",
    );
    let tk = topk::TopkAttrs {
        k: 4,
        axis: -1,
        largest: true,
    };
    expect_err(
        "topk k",
        topk::topk(&x23, tk),
        "topk: k 4 must be in 1..=3 (the length of axis 1)",
    );
    let tk = topk::TopkAttrs { k: 1, ..tk };
    expect_err(
        "topk_grad index",
        topk::topk_grad(&x23, &ids(&[2, 1], vec![0, 5]), &f(&[2, 1]), tk),
        "topk_grad: index 5 is out of range 0..3",
    );
    let one = f(&[1]);
    expect_err(
        "rprop etas",
        adaptive::rprop(&x3, &x3, &x3, &x3, &f(&[2]), &x3, false),
        "rprop_: etas must hold two values, has shape [3]",
    );
    expect_err(
        "asgd multi_precision",
        optimizer::asgd(&x3, &x3, &one, &x3, &x3, &one, true),
        "asgd_: multi_precision is not supported by the executor",
    );
    expect_err(
        "bilinear shapes",
        crate::exec::kernels::bilinear_form::bilinear(&x23, &f(&[2, 4]), &f(&[1, 3, 5]), None),
        "bilinear: x [2, 3], y [2, 4] and weight [1, 3, 5] do not fit [B, M], [B, N], [O, M, N]",
    );
    use crate::exec::kernels::einsum::{einsum, einsum_grad};
    expect_err(
        "einsum ellipsis",
        einsum(&[&x23, &x3], "...j,j->..."),
        "einsum: equation \"...j,j->...\" has an ellipsis",
    );
    expect_err(
        "einsum sizes",
        einsum(&[&x23, &f(&[2])], "ij,j->i"),
        "einsum: label 'j' has size 3 and 2",
    );
    expect_err(
        "einsum operands",
        einsum(&[&x23], "ij,jk->ik"),
        "einsum: equation \"ij,jk->ik\" names 2 operands, 1 are given",
    );
    expect_err(
        "einsum output label",
        einsum(&[&x23, &x3], "ij,j->k"),
        "einsum: output label 'k' is in no operand",
    );
    expect_err(
        "einsum_grad shape",
        einsum_grad(&[&x23, &x3], &x3, "ij,j->i"),
        "einsum_grad: out_grad has shape [3], the output has [2]",
    );
    expect_err(
        "adadelta grad",
        adaptive::adadelta(&x3, &f(&[2]), &x3, &x3, &one, None, 0.95, 1e-6, false),
        "adadelta_ grad: [3] and [2] differ in size",
    );
}

#[test]
fn shape_and_rank_refusals_of_the_new_kernels_are_named() {
    use crate::exec::kernels::{
        adaptive, bilinear_form, einsum, gather_scatter as gs, loss, norm, topk,
    };
    let (x23, x3) = (f(&[2, 3]), f(&[3]));
    expect_err(
        "rprop multi_precision",
        adaptive::rprop(&x3, &x3, &x3, &x3, &f(&[2]), &f(&[2]), true),
        "rprop_: multi_precision is not supported by the executor (Paddle's CPU kernel has no \
         master-weight path)",
    );
    expect_err(
        "bilinear rank",
        bilinear_form::bilinear(&x3, &x23, &f(&[1, 3, 3]), None),
        "bilinear: x [3] and y [2, 3] must be 2-D and weight [1, 3, 3] 3-D",
    );
    expect_err(
        "bilinear_grad out_grad",
        bilinear_form::bilinear_grad(&x23, &x23, &f(&[4, 3, 3]), &x23),
        "bilinear_grad: out_grad has shape [2, 3], the output has [2, 4]",
    );
    expect_err(
        "einsum term rank",
        einsum::einsum(&[&x23], "ijk->i"),
        "einsum: term \"ijk\" has 3 labels, its operand [2, 3] has rank 2",
    );
    expect_err(
        "einsum label",
        einsum::einsum(&[&x23], "i1->i"),
        "einsum: '1' is not a label in \"i1->i\"",
    );
    expect_err(
        "gather_nd 0-d index",
        gs::gather_nd(&x23, &Tensor::i64(&[], vec![0])),
        "gather_nd: index must have rank 1 or more, is 0-d",
    );
    expect_err(
        "take_along_axis rank",
        gs::take_along_axis(&x23, &Tensor::i64(&[2], vec![0, 1]), 1),
        "take_along_axis: indices [2] must have the rank of arr [2, 3]",
    );
    expect_err(
        "scatter index shape",
        gs::scatter(&x23, &Tensor::i64(&[1, 2], vec![0, 1]), &x23, true),
        "scatter: index must be [N] or [N, 1], is [1, 2]",
    );
    expect_err(
        "scatter 0-d x",
        gs::scatter(
            &Tensor::f32(&[], vec![1.0]),
            &Tensor::i64(&[1], vec![0]),
            &x3,
            true,
        ),
        "scatter: x must have rank 1 or more, is 0-d",
    );
    let nll = loss::NllAttrs {
        ignore_index: -100,
        reduction: loss::Reduction::Sum,
    };
    expect_err(
        "nll_loss label shape",
        loss::nll_loss(&x23, &Tensor::i64(&[3], vec![0, 1, 2]), None, nll),
        "nll_loss: label has shape [3], input [2, 3] needs [2]",
    );
    expect_err(
        "nll_loss label dtype",
        loss::nll_loss(&x23, &f(&[2]), None, nll),
        "nll_loss: label must be an integer tensor, is float32",
    );
    let pn = norm::PNormAttrs {
        porder: 2.0,
        axis: 1,
        epsilon: 1e-12,
        keepdim: false,
        asvector: false,
    };
    expect_err(
        "p_norm empty axis",
        norm::p_norm(&f(&[2, 0]), &pn),
        "p_norm: the reduced axis of [2, 0] is empty",
    );
    let tk = topk::TopkAttrs {
        k: 1,
        axis: -1,
        largest: true,
    };
    expect_err(
        "topk_grad shapes",
        topk::topk_grad(&x23, &Tensor::i64(&[2, 2], vec![0; 4]), &f(&[2, 1]), tk),
        "topk_grad: indices has shape [2, 2], topk's results have [2, 1]",
    );
}

#[test]
fn bicubic_interp_errors() {
    use crate::exec::kernels::interp::{interp, interp_grad, InterpAttrs, Method};
    let at = InterpAttrs {
        method: Method::Bicubic,
        out_h: 3,
        out_w: 3,
        scale: vec![],
        align_corners: false,
        align_mode: 0,
        out_size: None,
        size_tensor: None,
        scale_tensor: None,
    };
    let x = Tensor::f32(&[1, 1, 2, 2], vec![0.0; 4]);
    expect_err(
        "bicubic rank",
        interp(&Tensor::f32(&[2, 2], vec![0.0; 4]), &at),
        "interp: input must have rank 4 (NCHW), has shape [2, 2]",
    );
    expect_err(
        "bicubic grad shape",
        interp_grad(&x, &x, &at),
        "interp_grad: output_grad [1, 1, 2, 2] is not the shape of the output [1, 1, 3, 3]",
    );
    let zero = InterpAttrs { out_h: 0, ..at };
    expect_err(
        "bicubic size",
        interp(&x, &zero),
        "interp: output size (0, 3) must be positive",
    );
}

#[test]
fn index_put_errors() {
    use crate::exec::kernels::index_put::{index_put, index_put_grad};
    let x = f(&[3, 4]);
    let i = Tensor::i64(&[2], vec![0, 2]);
    let v = f(&[4]);
    expect_err(
        "index_put no indices",
        index_put(&x, &[], &v, false),
        "index_put: indices is empty",
    );
    expect_err(
        "index_put range",
        index_put(&x, &[&Tensor::i64(&[1], vec![3])], &v, false),
        "index_put: index 3 is out of range [-3, 3) for dimension 0",
    );
    expect_err(
        "index_put too many",
        index_put(&x, &[&i, &i, &i], &v, false),
        "index_put: 3 index tensors for x of rank 2",
    );
    expect_err(
        "index_put float index",
        index_put(&x, &[&f(&[2])], &v, false),
        "index_put: indices must be int32, int64 or bool, got float32",
    );
    expect_err(
        "index_put indices broadcast",
        index_put(&x, &[&i, &Tensor::i64(&[3], vec![0, 1, 2])], &v, false),
        "index_put: indices:",
    );
    expect_err(
        "index_put value",
        index_put(&x, &[&i], &f(&[3]), false),
        "index_put: value [3] does not broadcast to the indexed shape [2, 4]",
    );
    let mask = Tensor::new(vec![4], Data::Bool(vec![true; 4])).unwrap();
    expect_err(
        "index_put mask shape",
        index_put(&x, &[&mask], &v, false),
        "index_put: the bool index [4] is not a prefix of x's shape [3, 4]",
    );
    expect_err(
        "index_put mask and ints",
        index_put(&x, &[&mask, &i], &v, false),
        "index_put: a bool index must be the only index, got 2 indices",
    );
    expect_err(
        "index_put value dtype",
        index_put(&x, &[&i], &Tensor::i64(&[4], vec![1; 4]), false),
        "index_put: value is int64, x is float32",
    );
    expect_err(
        "index_put bool x",
        index_put(&mask, &[&Tensor::i64(&[1], vec![0])], &mask, false),
        "index_put: x is bool, the executor puts numbers",
    );
    expect_err(
        "index_put_grad shape",
        index_put_grad(&x, &[&i], &v, &f(&[4, 3]), true),
        "index_put_grad: out_grad has shape [4, 3], x has [3, 4]",
    );
}

#[test]
fn rope_mask_moe_and_double_grad_refusals_are_named() {
    use crate::exec::kernels::{
        activation as act, elementwise as ew, gather_scatter as gs, index, matmul, trig,
    };
    let (x23, x3, x2) = (f(&[2, 3]), f(&[3]), f(&[2]));
    let v64 = Tensor::new(vec![], Data::F64(vec![1.0])).unwrap();
    expect_err(
        "masked_fill value count",
        index::masked_fill(&x23, &x3, &x2),
        "masked_fill: value must hold one element, has shape [2]",
    );
    expect_err(
        "masked_fill value dtype",
        index::masked_fill(&x23, &x3, &v64),
        "masked_fill: value is float64 and x is float32",
    );
    expect_err(
        "masked_fill_grad out_grad",
        index::masked_fill_grad(&x23, &x3, &f(&[]), &x3),
        "masked_fill_grad: out_grad has shape [3], the forward's out has [2, 3]",
    );
    expect_err(
        "nonzero 0-d",
        index::nonzero(&f(&[])),
        "nonzero: condition must have rank 1 or more, is 0-d",
    );
    let sn_at = |dim, power_iters| crate::exec::kernels::spectral_norm::SpectralNormAttrs {
        dim,
        power_iters,
        eps: 1e-12,
    };
    use crate::exec::kernels::spectral_norm as sn;
    expect_err(
        "spectral_norm rank",
        sn::spectral_norm(&x3, &x3, &f(&[1]), sn_at(0, 1)),
        "spectral_norm: weight must have rank 2 to 5, has shape [3]",
    );
    expect_err(
        "spectral_norm dim",
        sn::spectral_norm(&x23, &x2, &x3, sn_at(2, 1)),
        "spectral_norm: dim 2 is out of range for weight [2, 3]",
    );
    expect_err(
        "spectral_norm u",
        sn::spectral_norm(&x23, &x3, &x3, sn_at(0, 1)),
        "spectral_norm: u [3] must hold 2 values and v [3] 3 (weight [2, 3] at dim 0)",
    );
    expect_err(
        "spectral_norm power_iters",
        sn::spectral_norm(&x23, &x2, &x3, sn_at(0, -1)),
        "spectral_norm: power_iters must be 0 or more, is -1",
    );
    expect_err(
        "spectral_norm_grad out_grad",
        sn::spectral_norm_grad(&x23, &x2, &x3, &x3, sn_at(0, 1)),
        "spectral_norm_grad: out_grad [3] must have weight's shape [2, 3]",
    );
    use crate::exec::kernels::ctc;
    let (logits, lab) = (f(&[3, 2, 4]), Tensor::i64(&[2, 1], vec![1, 2]));
    let (tl, ll) = (Tensor::i64(&[2], vec![3, 2]), Tensor::i64(&[2], vec![1, 1]));
    expect_err(
        "warpctc no lengths",
        ctc::warpctc(&logits, &lab, None, Some(&ll), 0),
        "warpctc: logits_length is absent (LoD sequences are not supported, padded ones need lengths)",
    );
    expect_err(
        "warpctc logits rank",
        ctc::warpctc(&x23, &lab, Some(&tl), Some(&ll), 0),
        "warpctc: logits must be [T, B, C], is [2, 3]",
    );
    expect_err(
        "warpctc length range",
        ctc::warpctc(
            &logits,
            &lab,
            Some(&Tensor::i64(&[2], vec![4, 1])),
            Some(&ll),
            0,
        ),
        "warpctc: logits_length 4 is out of range [0, 3]",
    );
    expect_err(
        "warpctc label is blank",
        ctc::warpctc(&logits, &lab, Some(&tl), Some(&ll), 2),
        "warpctc: label 2 is not a class of 4 other than blank",
    );
    expect_err(
        "warpctc length count",
        ctc::warpctc(&logits, &lab, Some(&tl), Some(&x3), 0),
        "warpctc: labels_length holds 3 lengths for a batch of 2",
    );
    expect_err(
        "warpctc label rank",
        ctc::warpctc(&logits, &x3, Some(&tl), Some(&ll), 0),
        "warpctc: label must be [B, L], is [3]",
    );
    expect_err(
        "warpctc label rows",
        ctc::warpctc(
            &logits,
            &Tensor::i64(&[1, 1], vec![1]),
            Some(&tl),
            Some(&ll),
            0,
        ),
        "warpctc: label has 1 rows for a batch of 2",
    );
    expect_err(
        "warpctc_grad logits rank",
        ctc::warpctc_grad(&x23, Some(&tl), &x23, &x3, false),
        "warpctc_grad: logits must be [T, B, C], is [2, 3]",
    );
    expect_err(
        "warpctc blank",
        ctc::warpctc(&logits, &lab, Some(&tl), Some(&ll), 4),
        "warpctc: blank 4 is not a class of 4",
    );
    expect_err(
        "warpctc_grad loss_grad",
        ctc::warpctc_grad(&logits, Some(&tl), &logits, &x3, false),
        "warpctc_grad: warpctcgrad [3, 2, 4] must have logits' shape [3, 2, 4] and loss_grad [3]",
    );
    expect_err(
        "cos_grad shapes",
        trig::cos_grad(&x23, &x3),
        "operands must have the same shape",
    );
    let rows = Tensor::i64(&[2, 1], vec![0, 1]);
    expect_err(
        "scatter_nd_add updates",
        gs::scatter_nd_add(&x23, &rows, &f(&[2, 2])),
        "scatter_nd_add: updates [2, 2] must be index's leading shape + x's trailing shape, [2, 3]",
    );
    expect_err(
        "scatter_nd_add index range",
        gs::scatter_nd_add(
            &x23,
            &Tensor::i64(&[1, 1], vec![2]),
            &x3.clone().reshaped(vec![1, 3]).unwrap(),
        ),
        "scatter_nd_add: index 2 is out of range [-2, 2)",
    );
    expect_err(
        "scatter_nd_add float index",
        gs::scatter_nd_add(&x23, &f(&[1, 1]), &f(&[1, 3])),
        "scatter_nd_add: index must be an integer tensor",
    );
    expect_err(
        "scatter_nd_add_grad updates",
        gs::scatter_nd_add_grad(&Tensor::i64(&[1, 1], vec![0]), &x23, &x23),
        "scatter_nd_add_grad: updates [2, 3] must be index's leading shape + out_grad's trailing shape, [1, 3]",
    );
    expect_err(
        "tanh_double_grad shapes",
        act::tanh_double_grad(&x23, &x23, &x3),
        "operands must have the same shape",
    );
    expect_err(
        "add_double_grad broadcast",
        ew::add_double_grad(&x3, Some(&x23), None, -1),
        "add_double_grad: a grad of shape [2, 3] does not broadcast to out_grad's [3]",
    );
    expect_err(
        "matmul_double_grad ddx",
        matmul::matmul_double_grad(
            &x23,
            &f(&[3, 4]),
            &f(&[2, 4]),
            Some(&x3),
            None,
            false,
            false,
        ),
        "matmul_double_grad: grad_x_grad has shape [3], its operand [2, 3]",
    );
}

/// An absent grad of a double-grad op's result counts as zero: `add_double_grad` gives the other
/// broadcast to `out_grad` (none without either), `matmul_double_grad` zeros for the operand
/// the absent one would have reached.
#[test]
fn absent_double_grad_operands_count_as_zero() {
    use crate::exec::kernels::{elementwise as ew, matmul};
    let dout = f(&[2, 3]);
    assert!(ew::add_double_grad(&dout, None, None, -1)
        .unwrap()
        .is_none());
    let ddy = Tensor::f32(&[3], vec![1.0, 2.0, 3.0]);
    let got = ew::add_double_grad(&dout, None, Some(&ddy), -1)
        .unwrap()
        .unwrap();
    assert_eq!(got.shape(), &[2, 3]);
    assert_eq!(got.as_f32().unwrap(), &[1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
    let (x, y, g) = (f(&[2, 3]), f(&[3, 4]), f(&[2, 4]));
    let ddy = Tensor::f32(&[3, 4], (0..12).map(|v| v as f32).collect());
    let (dx, dy, ddout) =
        matmul::matmul_double_grad(&x, &y, &g, None, Some(&ddy), false, false).unwrap();
    assert_eq!(
        dx,
        matmul::matmul_grad(&x, &ddy, &g, false, false).unwrap().0
    );
    assert_eq!(dy, Tensor::f32(&[3, 4], vec![0.0; 12]));
    assert_eq!(ddout, matmul::matmul(&x, &ddy, false, false).unwrap());
    let (dx, dy, ddout) = matmul::matmul_double_grad(&x, &y, &g, None, None, false, false).unwrap();
    assert_eq!(dx, Tensor::f32(&[2, 3], vec![0.0; 6]));
    assert_eq!(dy, Tensor::f32(&[3, 4], vec![0.0; 12]));
    assert_eq!(ddout, Tensor::f32(&[2, 4], vec![0.0; 8]));
}

/// Paddle's `NAdam` and `RAdam` classes create their running states (beta powers, products) in
/// the parameter's shape, every element alike: the kernels step such states element by element,
/// to what a one-element state gives; a state of another size is refused, naming it.
#[test]
fn nadam_and_radam_take_states_of_the_parameters_shape() {
    let p = Tensor::f32(&[3], vec![0.5, -1.0, 2.0]);
    let g = Tensor::f32(&[3], vec![0.1, 0.2, -0.3]);
    let m = f(&[3]);
    let lr = Tensor::f32(&[1], vec![0.01]);
    let state = |v: f32, n: usize| Tensor::f32(&[n], vec![v; n]);
    let nadam = |n: usize| {
        let (d, b2, mu) = (state(0.96, n), state(0.999, n), state(0.9, n));
        let input = adaptive::NadamIn {
            param: &p,
            grad: &g,
            learning_rate: &lr,
            momentum_decay_pow: &d,
            beta2_pow: &b2,
            mu_product: &mu,
            moment1: &m,
            moment2: &m,
        };
        let at = adaptive::NadamAttrs {
            beta1: 0.9,
            beta2: 0.999,
            epsilon: 1e-8,
            momentum_decay: 0.004,
            multi_precision: false,
        };
        adaptive::nadam(&input, at).map(|o| (o.param.to_f32().to_vec(), o.mu_product))
    };
    let (one, mu1) = nadam(1).expect("one-element states");
    let (each, mu3) = nadam(3).expect("states of the parameter's shape");
    assert_eq!(one, each);
    assert_eq!(mu3.shape(), &[3]);
    assert_eq!(mu3.to_f32().to_vec(), vec![mu1.to_f32()[0]; 3]);
    expect_err(
        "nadam_ state size",
        nadam(2),
        "nadam_: momentum_decay_pow has shape [2]: one element, or one per element of the parameter (3), expected",
    );
    let radam = |n: usize| {
        let (b1, b2, rho) = (state(0.9, n), state(0.999, n), state(0.0, n));
        let input = adaptive::RadamIn {
            param: &p,
            grad: &g,
            learning_rate: &lr,
            beta1_pow: &b1,
            beta2_pow: &b2,
            rho: &rho,
            moment1: &m,
            moment2: &m,
        };
        let at = adaptive::RadamAttrs {
            beta1: 0.9,
            beta2: 0.999,
            epsilon: 1e-8,
            multi_precision: false,
        };
        adaptive::radam(&input, at).map(|o| o.param.to_f32().to_vec())
    };
    assert_eq!(radam(1).expect("one"), radam(3).expect("each"));
    expect_err(
        "radam_ state size",
        radam(2),
        "radam_: beta1_pow has shape [2]",
    );
}
