//! The kernels of convolutional models refuse what does not fit their contract with a message
//! (never a panic): each case calls the kernel as the op table would and asserts the words.

use crate::exec::kernels::batch_norm::{batch_norm, BatchNormAttrs};
use crate::exec::kernels::conv::channels_last_3d;
use crate::exec::kernels::conv::{channels_last, conv2d, ConvAttrs, PaddingAlgorithm};
use crate::exec::kernels::conv3d::{conv3d, conv3d_grad};
use crate::exec::kernels::conv_transpose::{
    conv2d_transpose, conv2d_transpose_grad, ConvTransposeAttrs,
};
use crate::exec::kernels::dropout::{dropout, dropout_grad, DropoutMode};
use crate::exec::kernels::flatten::flatten_shape;
use crate::exec::kernels::maxout::{maxout, maxout_grad, MaxoutAttrs};
use crate::exec::kernels::pixel_shuffle::{pixel_shuffle, pixel_unshuffle, ShuffleAttrs};
use crate::exec::kernels::pool::{
    max_pool2d_with_index, max_pool2d_with_index_grad, pool2d, pool2d_grad, MaxPoolWithIndexAttrs,
    PoolAttrs, PoolKind,
};
use crate::exec::kernels::pool3d::{pool3d, pool3d_grad};
use crate::exec::kernels::unfold::{unfold, unfold_grad, UnfoldAttrs};
use crate::exec::{Data, Tensor};
use crate::test_support::says;

fn conv_attrs() -> ConvAttrs {
    ConvAttrs {
        strides: vec![1, 1],
        paddings: vec![0, 0],
        dilations: vec![1, 1],
        groups: 1,
        padding_algorithm: PaddingAlgorithm::Explicit,
        channels_last: false,
    }
}

#[test]
fn conv_errors() {
    let x = Tensor::f32(&[1, 2, 4, 4], vec![0.0; 32]);
    let w = Tensor::f32(&[2, 2, 3, 3], vec![0.0; 36]);
    says(
        PaddingAlgorithm::parse("FULL"),
        "padding_algorithm `FULL` is not EXPLICIT, SAME or VALID",
    );
    says(
        channels_last("NDHWC"),
        "data_format `NDHWC` is not NCHW or NHWC",
    );
    let at = ConvAttrs {
        paddings: vec![1, 1, 1],
        ..conv_attrs()
    };
    says(
        conv2d(&x, &w, &at),
        "conv2d: paddings has 3 elements, expected 2 or 4",
    );
    let at = ConvAttrs {
        strides: vec![1, 1, 1],
        ..conv_attrs()
    };
    says(conv2d(&x, &w, &at), "strides has 3 elements, expected 2");
    let at = ConvAttrs {
        dilations: vec![0, 1],
        ..conv_attrs()
    };
    says(
        conv2d(&x, &w, &at),
        "dilations must be positive, got [0, 1]",
    );
    let flat = Tensor::f32(&[2, 16], vec![0.0; 32]);
    says(
        conv2d(&flat, &w, &conv_attrs()),
        "conv2d needs a 4-D input and a 4-D filter",
    );
    let at = ConvAttrs {
        groups: 0,
        ..conv_attrs()
    };
    says(conv2d(&x, &w, &at), "groups must be positive, got 0");
    let big = Tensor::f32(&[2, 2, 5, 5], vec![0.0; 100]);
    says(
        conv2d(&x, &big, &conv_attrs()),
        "does not fit the padded input",
    );
    let xi = Tensor::i64(&[1, 2, 4, 4], vec![0; 32]);
    says(
        conv2d(&xi, &w, &conv_attrs()),
        "conv2d computes float tensors, got int64",
    );
}

fn transpose_attrs(output_padding: &[i64], output_size: &[i64]) -> ConvTransposeAttrs {
    ConvTransposeAttrs {
        conv: ConvAttrs {
            strides: vec![2, 2],
            ..conv_attrs()
        },
        output_padding: output_padding.to_vec(),
        output_size: output_size.to_vec(),
    }
}

#[test]
fn conv_transpose_errors() {
    let x = Tensor::f32(&[1, 2, 3, 3], vec![0.0; 18]);
    let w = Tensor::f32(&[2, 3, 3, 3], vec![0.0; 54]);
    says(
        conv2d_transpose(&x, &w, &transpose_attrs(&[2, 0], &[])),
        "conv2d_transpose: output_padding [2, 0] must lie in [0, 2) in dimension 0",
    );
    says(
        conv2d_transpose(&x, &w, &transpose_attrs(&[], &[7, 9])),
        "conv2d_transpose: output_size [7, 9] must lie in [7, 9) in dimension 1",
    );
    says(
        conv2d_transpose(&x, &w, &transpose_attrs(&[], &[7, 7, 7])),
        "output_size has 3 elements, expected 2",
    );
    // output_padding 2 is below the dilation 3, but the convolution from a 5-wide output
    // gives 2 positions, not 3 (Paddle's col2im refuses it too).
    let at = ConvTransposeAttrs {
        conv: ConvAttrs {
            dilations: vec![3, 3],
            ..conv_attrs()
        },
        output_padding: vec![2, 2],
        output_size: vec![],
    };
    let small = Tensor::f32(&[1, 2, 1, 1], vec![0.0; 2]);
    says(
        conv2d_transpose(&small, &w, &at),
        "an output of 9 in dimension 0 does not convolve back to the input's 1 positions",
    );
    // The filter's first dimension is the input's channels.
    let w_oihw = Tensor::f32(&[3, 2, 3, 3], vec![0.0; 54]);
    says(
        conv2d_transpose(&x, &w_oihw, &transpose_attrs(&[], &[])),
        "conv2d_transpose: the input has 2 channels and the filter is [3, 2, 3, 3]",
    );
    let at = ConvTransposeAttrs {
        conv: ConvAttrs {
            groups: 2,
            ..conv_attrs()
        },
        ..transpose_attrs(&[], &[])
    };
    let x3 = Tensor::f32(&[1, 3, 3, 3], vec![0.0; 27]);
    let w3 = Tensor::f32(&[3, 1, 3, 3], vec![0.0; 27]);
    says(
        conv2d_transpose(&x3, &w3, &at),
        "with 3 divisible by groups = 2",
    );
    let at = ConvTransposeAttrs {
        conv: ConvAttrs {
            paddings: vec![3, 3],
            ..conv_attrs()
        },
        ..transpose_attrs(&[], &[])
    };
    says(conv2d_transpose(&small, &w, &at), "has no output positions");
    let dy = Tensor::f32(&[1, 3, 6, 7], vec![0.0; 126]);
    says(
        conv2d_transpose_grad(&x, &w, &dy, &transpose_attrs(&[], &[])),
        "out_grad has shape [1, 3, 6, 7], the transposed convolution's output is [1, 3, 7, 7]",
    );
    let ints = Tensor::i64(&[1, 2, 3, 3], vec![0; 18]);
    says(
        conv2d_transpose(&ints, &w, &transpose_attrs(&[], &[])),
        "computes float tensors",
    );
}

fn pool_attrs() -> PoolAttrs {
    PoolAttrs {
        kind: PoolKind::Max,
        kernel_size: vec![2, 2],
        strides: vec![2, 2],
        paddings: vec![0, 0],
        ceil_mode: false,
        exclusive: true,
        adaptive: false,
        global_pooling: false,
        padding_algorithm: PaddingAlgorithm::Explicit,
        channels_last: false,
    }
}

#[test]
fn pool_errors() {
    let x = Tensor::f32(&[1, 1, 4, 4], vec![0.0; 16]);
    says(
        PoolAttrs::kind_and_layout("lp", "NCHW"),
        "pooling_type `lp` is not max or avg",
    );
    says(
        pool2d(&Tensor::f32(&[4, 4], vec![0.0; 16]), &pool_attrs()),
        "pool2d needs a 4-D input",
    );
    let at = PoolAttrs {
        kernel_size: vec![2, 2, 2],
        ..pool_attrs()
    };
    says(pool2d(&x, &at), "kernel_size has 3 elements, expected 2");
    let at = PoolAttrs {
        kernel_size: vec![0, 2],
        ..pool_attrs()
    };
    says(pool2d(&x, &at), "kernel_size must be positive, got [0, 2]");
    let at = PoolAttrs {
        strides: vec![1, 1, 1],
        ..pool_attrs()
    };
    says(pool2d(&x, &at), "strides has 3 elements, expected 2");
    let at = PoolAttrs {
        strides: vec![0, 1],
        ..pool_attrs()
    };
    says(pool2d(&x, &at), "strides must be positive, got [0, 1]");
    let at = PoolAttrs {
        kernel_size: vec![5, 5],
        ..pool_attrs()
    };
    says(
        pool2d(&x, &at),
        "the pooling window [5, 5] does not fit the padded input",
    );
    let at = PoolAttrs {
        kernel_size: vec![6, 6],
        adaptive: true,
        ..pool_attrs()
    };
    says(
        pool2d(&x, &at),
        "pool2d: adaptive max pooling to [6, 6] from the smaller [1, 1, 4, 4] is not run",
    );
    says(
        pool2d(&Tensor::f32(&[1, 1, 0, 4], vec![]), &at),
        "adaptive pooling to [6, 6] needs a non-empty input, got [1, 1, 0, 4]",
    );
    // An adaptive average larger than the input is no error: windows overlap, as in Paddle.
    let avg = PoolAttrs {
        kind: PoolKind::Avg,
        ..at
    };
    assert_eq!(
        pool2d(&x, &avg).expect("pools").shape()[2..],
        [6, 6],
        "adaptive growth"
    );
    let xi = Tensor::i64(&[1, 1, 4, 4], vec![0; 16]);
    says(
        pool2d(&xi, &pool_attrs()),
        "pool2d computes float tensors, got int64",
    );
    let out = pool2d(&x, &pool_attrs()).expect("pools");
    says(
        pool2d_grad(&x, &out, &x, &pool_attrs()),
        "out and out_grad have shapes [1, 1, 2, 2] and [1, 1, 4, 4], the pooling's output is [1, 1, 2, 2]",
    );
    says(
        flatten_shape(&[2, 3], 1, 0),
        "flatten: start_axis 1 and stop_axis 0 do not name a range",
    );
}

#[test]
fn batch_norm_errors() {
    let at = BatchNormAttrs {
        is_test: false,
        momentum: 0.9,
        epsilon: 1e-5,
        channels_last: false,
        use_global_stats: false,
        trainable_statistics: false,
    };
    let x = Tensor::f32(&[2, 3, 4], vec![0.0; 24]);
    let p3 = Tensor::f32(&[3], vec![1.0; 3]);
    let p2 = Tensor::f32(&[2], vec![1.0; 2]);
    let xi = Tensor::i64(&[2, 3], vec![0; 6]);
    says(
        batch_norm(&xi, &p3, &p3, &p3, &p3, &at),
        "batch_norm computes float tensors, got int64",
    );
    let one = Tensor::f32(&[6], vec![0.0; 6]);
    says(
        batch_norm(&one, &p3, &p3, &p3, &p3, &at),
        "batch_norm needs at least 2 dimensions",
    );
    says(
        batch_norm(&x, &p3, &p3, &p2, &p3, &at),
        "scale has 2 elements, the input has 3 channels",
    );
    let pi = Tensor::i64(&[3], vec![1; 3]);
    says(
        batch_norm(&x, &p3, &p3, &pi, &p3, &at),
        "scale is int64, expected a float tensor",
    );
}

#[test]
fn dropout_errors() {
    let x = Tensor::f32(&[3], vec![1.0, 2.0, 3.0]);
    says(
        DropoutMode::parse("scale"),
        "dropout mode `scale` is not upscale_in_train or downgrade_in_infer",
    );
    says(
        dropout(&x, 1.5, true, DropoutMode::UpscaleInTrain),
        "dropout probability p = 1.5 is not in [0, 1]",
    );
    says(dropout(&x, 0.5, false, DropoutMode::UpscaleInTrain), "in training draws a random mask: two runs (the original and the rewritten program) would drop different elements");
    let xi = Tensor::i64(&[3], vec![1, 2, 3]);
    says(
        dropout(&xi, 0.0, true, DropoutMode::UpscaleInTrain),
        "dropout computes float tensors, got int64",
    );
    let mask = Tensor::new(vec![2], Data::U8(vec![1, 1])).expect("mask");
    says(
        dropout_grad(&mask, &x, -0.5, false, DropoutMode::UpscaleInTrain),
        "dropout probability p = -0.5 is not in [0, 1]",
    );
    says(
        dropout_grad(&mask, &x, 0.0, false, DropoutMode::UpscaleInTrain),
        "mask has shape [2], out_grad [3]",
    );
}

fn max_index_attrs() -> MaxPoolWithIndexAttrs {
    MaxPoolWithIndexAttrs {
        kernel_size: vec![2, 2],
        strides: vec![2, 2],
        paddings: vec![0, 0],
        global_pooling: false,
        adaptive: false,
        ceil_mode: false,
    }
}

#[test]
fn max_pool_with_index_errors() {
    let x = Tensor::f32(&[1, 1, 4, 4], (0..16).map(|v| v as f32).collect());
    let at = MaxPoolWithIndexAttrs {
        paddings: vec![0, 0, 0, 0],
        ..max_index_attrs()
    };
    says(
        max_pool2d_with_index(&x, &at),
        "max_pool2d_with_index takes 2 kernel sizes, strides and paddings",
    );
    says(
        max_pool2d_with_index(&Tensor::f32(&[4, 4], vec![0.0; 16]), &max_index_attrs()),
        "max_pool2d_with_index needs a 4-D (NCHW) input, got [4, 4]",
    );
    let (out, mask) = max_pool2d_with_index(&x, &max_index_attrs()).unwrap();
    assert_eq!(mask.to_i64_vec(), [5, 7, 13, 15]);
    let bad = Tensor::new(vec![1, 1, 2, 2], Data::I32(vec![5, 7, 13, 16])).unwrap();
    says(
        max_pool2d_with_index_grad(&x, &bad, &out, &max_index_attrs()),
        "mask position 16 is outside the 4x4 input plane",
    );
    says(
        max_pool2d_with_index_grad(&x, &out, &out, &max_index_attrs()),
        "the mask must be integer positions, got float32",
    );
    let short = Tensor::f32(&[1, 1, 2, 1], vec![0.0; 2]);
    says(
        max_pool2d_with_index_grad(&x, &mask, &short, &max_index_attrs()),
        "mask and out_grad have shapes [1, 1, 2, 2] and [1, 1, 2, 1]",
    );
    // A window that read nothing (-1) passes no gradient.
    let none = Tensor::new(vec![1, 1, 2, 2], Data::I32(vec![-1, 7, 13, 15])).unwrap();
    let dx = max_pool2d_with_index_grad(&x, &none, &out, &max_index_attrs()).unwrap();
    assert_eq!(dx.to_f64_vec().iter().sum::<f64>(), 7.0 + 13.0 + 15.0);
}

#[test]
fn shuffle_unfold_maxout_errors() {
    says(
        ShuffleAttrs::new(0, "NCHW"),
        "the pixel shuffle factor must be positive, got 0",
    );
    says(
        ShuffleAttrs::new(2, "NDHWC"),
        "data_format `NDHWC` is not NCHW or NHWC",
    );
    let at = ShuffleAttrs::new(2, "NCHW").unwrap();
    let x = Tensor::f32(&[1, 6, 3, 3], vec![0.0; 54]);
    says(
        pixel_shuffle(&x, &at),
        "pixel_shuffle: 6 channels are not a multiple of upscale_factor² = 4",
    );
    says(
        pixel_unshuffle(&x, &at),
        "pixel_unshuffle: the height 3 and width 3 must be multiples of downscale_factor 2",
    );
    says(
        pixel_shuffle(&Tensor::f32(&[4, 2, 2], vec![0.0; 16]), &at),
        "pixel_shuffle needs a 4-D input, got [4, 2, 2]",
    );

    let ua = UnfoldAttrs {
        kernel_sizes: vec![2, 2],
        strides: vec![1, 1],
        paddings: vec![0, 0],
        dilations: vec![1, 1],
    };
    says(
        unfold(&x, &ua),
        "unfold: paddings has 2 elements, expected 4 ([top, left, bottom, right])",
    );
    says(
        unfold(&Tensor::f32(&[6, 3, 3], vec![0.0; 54]), &ua),
        "unfold needs a 4-D (NCHW) input, got [6, 3, 3]",
    );
    let short = UnfoldAttrs {
        dilations: vec![1],
        paddings: vec![0, 0, 0, 0],
        ..ua.clone()
    };
    says(
        unfold(&x, &short),
        "unfold: dilations has 1 elements, expected 2",
    );
    let negative = UnfoldAttrs {
        paddings: vec![0, -1, 0, 0],
        ..ua.clone()
    };
    says(
        unfold(&x, &negative),
        "unfold: paddings must not be negative, got [0, -1, 0, 0]",
    );
    let ua = UnfoldAttrs {
        kernel_sizes: vec![4, 2],
        paddings: vec![0, 0, 0, 0],
        ..ua
    };
    says(
        unfold(&x, &ua),
        "unfold: the window [4, 2] (dilated to 4) does not fit the padded input [1, 6, 3, 3]",
    );
    let ua = UnfoldAttrs {
        kernel_sizes: vec![2, 2],
        strides: vec![0, 1],
        ..ua
    };
    says(unfold(&x, &ua), "strides must be positive, got [0, 1]");
    let ua = UnfoldAttrs {
        strides: vec![1, 1],
        ..ua
    };
    says(
        unfold_grad(&x, &x, &ua),
        "out_grad has shape [1, 6, 3, 3], unfold's output is [1, 24, 4]",
    );

    says(
        maxout(&x, &MaxoutAttrs { groups: 4, axis: 1 }),
        "maxout: groups = 4 must be positive and divide the 6 channels",
    );
    says(
        maxout(
            &Tensor::f32(&[6, 3], vec![0.0; 18]),
            &MaxoutAttrs { groups: 2, axis: 1 },
        ),
        "maxout needs a 4-D input, got [6, 3]",
    );
    says(
        maxout(&x, &MaxoutAttrs { groups: 2, axis: 2 }),
        "maxout: axis must be 1 (NCHW) or -1/3 (NHWC), got 2",
    );
    let at = MaxoutAttrs { groups: 2, axis: 1 };
    says(
        maxout_grad(&x, &x, &x, &at),
        "out and out_grad have shapes [1, 6, 3, 3] and [1, 6, 3, 3], maxout's output is [1, 3, 3, 3]",
    );
    says(
        maxout(&Tensor::i64(&[1, 2, 1, 1], vec![0, 1]), &at),
        "maxout computes float tensors, got int64",
    );
}

#[test]
fn pool3d_errors() {
    let at = PoolAttrs {
        kind: PoolKind::Max,
        kernel_size: vec![2, 2, 2],
        strides: vec![1, 1, 1],
        paddings: vec![0, 0, 0],
        ceil_mode: false,
        exclusive: true,
        adaptive: false,
        global_pooling: false,
        padding_algorithm: PaddingAlgorithm::Explicit,
        channels_last: false,
    };
    let x = Tensor::f32(&[1, 1, 3, 3, 3], vec![0.0; 27]);
    says(
        channels_last_3d("NCHW", "pool3d"),
        "pool3d: data_format `NCHW` is not NCDHW or NDHWC",
    );
    says(
        pool3d(&Tensor::f32(&[1, 1, 3, 3], vec![0.0; 9]), &at),
        "pool3d needs a 5-D input, got [1, 1, 3, 3]",
    );
    let bad = PoolAttrs {
        paddings: vec![0, 0, 0, 0],
        ..at.clone()
    };
    says(
        pool3d(&x, &bad),
        "pool3d: paddings has 4 elements, expected 3 or 6",
    );
    let bad = PoolAttrs {
        kernel_size: vec![2, 2],
        ..at.clone()
    };
    says(
        pool3d(&x, &bad),
        "pool3d: kernel_size has 2 elements, expected 3",
    );
    let bad = PoolAttrs {
        strides: vec![1, 0, 1],
        ..at.clone()
    };
    says(
        pool3d(&x, &bad),
        "pool3d: kernel_size and strides must be positive",
    );
    let bad = PoolAttrs {
        kernel_size: vec![4, 2, 2],
        ..at.clone()
    };
    says(pool3d(&x, &bad), "does not fit the padded input");
    let out = pool3d(&x, &at).unwrap();
    says(
        pool3d_grad(&x, &out, &x, &at),
        "out and out_grad have shapes [1, 1, 2, 2, 2] and [1, 1, 3, 3, 3], the pooling's output is [1, 1, 2, 2, 2]",
    );
    let adaptive = PoolAttrs {
        adaptive: true,
        ..at.clone()
    };
    says(
        pool3d(&Tensor::f32(&[1, 1, 0, 3, 3], vec![]), &adaptive),
        "adaptive pooling to [2, 2, 2] needs a non-empty input, got [1, 1, 0, 3, 3]",
    );
    says(
        pool3d(&Tensor::i64(&[1, 1, 3, 3, 3], vec![0; 27]), &at),
        "pool3d computes float tensors, got int64",
    );
}

#[test]
fn conv3d_errors() {
    let at = ConvAttrs {
        strides: vec![1, 1, 1],
        paddings: vec![0, 0, 0],
        dilations: vec![1, 1, 1],
        ..conv_attrs()
    };
    let x = Tensor::f32(&[1, 2, 3, 3, 3], vec![0.0; 54]);
    let w = Tensor::f32(&[2, 2, 2, 2, 2], vec![0.0; 32]);
    says(
        channels_last_3d("NCHW", "conv3d"),
        "conv3d: data_format `NCHW` is not NCDHW or NDHWC",
    );
    says(
        conv3d(&Tensor::f32(&[1, 2, 3, 3], vec![0.0; 18]), &w, &at),
        "conv3d needs a 5-D input and a 5-D filter",
    );
    let bad = ConvAttrs {
        paddings: vec![0, 0, 0, 0],
        ..at.clone()
    };
    says(
        conv3d(&x, &w, &bad),
        "conv3d: paddings has 4 elements, expected 3 or 6",
    );
    let bad = ConvAttrs {
        strides: vec![1, 0, 1],
        ..at.clone()
    };
    says(
        conv3d(&x, &w, &bad),
        "conv3d: strides must be positive, got [1, 0, 1]",
    );
    let bad = ConvAttrs {
        groups: 0,
        ..at.clone()
    };
    says(
        conv3d(&x, &w, &bad),
        "conv3d: groups must be positive, got 0",
    );
    let bad = ConvAttrs {
        groups: 3,
        ..at.clone()
    };
    says(
        conv3d(&x, &w, &bad),
        "conv3d: the input has 2 channels and the filter [2, 2, 2, 2, 2]: with groups = 3 it must read 0 channels per group and have a multiple of 3 output channels",
    );
    says(
        conv3d(&x, &Tensor::f32(&[2, 2, 4, 2, 2], vec![0.0; 64]), &at),
        "does not fit the padded input",
    );
    says(
        conv3d_grad(&x, &w, &x, &at),
        "conv3d: out_grad has shape [1, 2, 3, 3, 3], the convolution's output is [1, 2, 2, 2, 2]",
    );
    says(
        conv3d(&Tensor::i64(&[1, 2, 3, 3, 3], vec![0; 54]), &w, &at),
        "computes float tensors, got int64",
    );
}
