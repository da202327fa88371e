//! The transformer, clipping and layout kernels refuse inputs that do not fit their contract
//! with a message saying what is wrong (never a panic or a read out of bounds). Each case calls
//! the kernel as the op table would, with one thing wrong, and checks the message.

use crate::exec::dtype::DType;
use crate::exec::kernels::{activation as act, index, join, layer_norm as ln, pick, repeat};
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
    let idx = Tensor::i64(&[1], vec![5]);
    expect_err(
        "swiglu odd",
        act::swiglu(&x23, None),
        "x's last dimension must be even",
    );
    expect_err(
        "swiglu_grad shape",
        act::swiglu_grad(&x23, Some(&x23), &x3),
        "does not match the output",
    );
    expect_err(
        "gather float index",
        index::gather(&x23, &x3, 0),
        "index must be an integer tensor",
    );
    expect_err(
        "gather range",
        index::gather(&x23, &idx, 0),
        "is out of range 0..",
    );
    expect_err(
        "gather axis",
        index::gather(&x23, &idx, 2),
        "gather: axis 2 out of range",
    );
    expect_err(
        "gather_grad shape",
        index::gather_grad(&x23, &Tensor::i64(&[1], vec![0]), &x23, 0),
        "not that of the gathered slices",
    );
    expect_err(
        "embedding 1-D weight",
        index::embedding(&idx, &x3, -1),
        "weight must be 2-D [vocabulary, width]",
    );
    expect_err(
        "embedding_grad shape",
        index::embedding_grad(&Tensor::i64(&[1], vec![0]), &x23, &x23, -1),
        "embedding_grad: out_grad has shape",
    );
    let c = Tensor::new(vec![3], Data::Bool(vec![true; 3])).unwrap();
    expect_err(
        "where dtypes",
        index::where_(&c, &x3, &Tensor::i64(&[3], vec![0; 3])),
        "where: x is float32 and y is int64",
    );
    expect_err(
        "triu 1-D",
        index::triangle(&x3, 0, true),
        "must have at least 2 dimensions",
    );
    expect_err("concat none", join::concat(&[], 0), "concat: no operands");
    expect_err(
        "concat shapes",
        join::concat(&[&x23, &f(&[3, 3])], 1),
        "differ outside axis",
    );
    expect_err(
        "split sections",
        join::split(&x23, &[2, 2], 1),
        "do not divide axis",
    );
    expect_err(
        "split_with_num",
        join::split_with_num(&x23, 2, 1),
        "does not split into 2 pieces",
    );
    expect_err(
        "concat_grad sizes",
        join::concat_grad(&[&x3], &x23, 0),
        "do not add up to out_grad's axis",
    );
    expect_err("stack none", join::stack(&[], 0), "stack: no operands");
    expect_err(
        "stack shapes",
        join::stack(&[&x23, &x3], 0),
        "stack: shapes",
    );
    expect_err(
        "stack_grad count",
        join::stack_grad(3, &x23, 0),
        "stack_grad: out_grad's axis",
    );
    expect_err(
        "layer_norm axis",
        ln::layer_norm(&x23, None, None, 1e-5, 2),
        "out of range for rank",
    );
    expect_err(
        "layer_norm scale",
        ln::layer_norm(&x23, Some(&f(&[2])), None, 1e-5, 1),
        "the normalized dimensions have",
    );
    let (m, v) = (f(&[2]), f(&[2]));
    expect_err(
        "layer_norm_grad out_grad",
        ln::layer_norm_grad(&x23, None, None, &m, &v, &x3, 1e-5, 1),
        "layer_norm_grad: out_grad",
    );
    expect_err(
        "layer_norm_grad statistics",
        ln::layer_norm_grad(&x23, None, None, &x3, &x3, &x23, 1e-5, 1),
        "layer_norm_grad: mean and variance need",
    );
    expect_err(
        "rms_norm normalized_shape",
        ln::rms_norm(&x23, &x3, &[2], 1e-5),
        "is not the trailing dimensions of",
    );
    expect_err(
        "rms_norm_grad invvar",
        ln::rms_norm_grad(&x23, &x3, &x3, &x23, &[3]),
        "rms_norm_grad: y_grad",
    );
    expect_err("pick none", pick::concat(&[]), "nothing to join");
    expect_err(
        "pick dtypes",
        pick::concat(&[x3.data(), &Data::I64(vec![1])]),
        "operands of different dtypes",
    );
    expect_err(
        "expand rank",
        repeat::expand(&x23, &[3]),
        "has fewer dimensions than x",
    );
    expect_err(
        "expand size",
        repeat::expand(&x23, &[4, 3]),
        "expand: cannot expand x",
    );
    expect_err(
        "tile negative",
        repeat::tile(&x3, &[-2]),
        "tile: negative repeat",
    );
    expect_err(
        "tile_grad shape",
        repeat::tile_grad(&x3, &x3, &[2]),
        "tile_grad: out_grad has shape",
    );
    let _ = DType::F32;
}
