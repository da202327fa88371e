//! The kernels added for the hunters' models refuse inputs that break their contract with a
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
