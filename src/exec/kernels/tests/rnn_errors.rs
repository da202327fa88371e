//! The recurrent and buffer-fusing kernels refuse what does not fit their contract with a
//! message (never a panic): each case calls the kernel as the op table would and asserts the
//! words.

use crate::exec::kernels::coalesce::{coalesce_tensor, CoalesceAttrs};
use crate::exec::kernels::rnn::{rnn, rnn_grad, Mode, RnnAttrs};
use crate::exec::{DType, Tensor};
use crate::test_support::says;

/// A one-layer LSTM: time 2, batch 2, input 3, hidden 2 (4 gates: 8 rows per weight).
fn lstm() -> RnnAttrs {
    RnnAttrs {
        mode: Mode::Lstm,
        input_size: 3,
        hidden_size: 2,
        num_layers: 1,
        is_bidirec: false,
        dropout_prob: 0.0,
        is_test: false,
    }
}

struct Operands {
    x: Tensor,
    state: Vec<Tensor>,
    weights: Vec<Tensor>,
}

fn operands() -> Operands {
    Operands {
        x: Tensor::f32(&[2, 2, 3], vec![0.5; 12]),
        state: vec![Tensor::f32(&[1, 2, 2], vec![0.0; 4]); 2],
        weights: vec![
            Tensor::f32(&[8, 3], vec![0.1; 24]),
            Tensor::f32(&[8, 2], vec![0.1; 16]),
            Tensor::f32(&[8], vec![0.0; 8]),
            Tensor::f32(&[8], vec![0.0; 8]),
        ],
    }
}

fn refs(v: &[Tensor]) -> Vec<&Tensor> {
    v.iter().collect()
}

#[test]
fn rnn_errors() {
    let o = operands();
    let (s, w) = (refs(&o.state), refs(&o.weights));
    assert!(rnn(&o.x, &s, &w, None, &lstm()).is_ok());
    says(
        Mode::parse("LSTMP"),
        "rnn mode `LSTMP` is not LSTM, GRU, RNN_TANH or RNN_RELU",
    );
    let xi = Tensor::i64(&[2, 2, 3], vec![0; 12]);
    says(
        rnn(&xi, &s, &w, None, &lstm()),
        "rnn computes float tensors; x is i64",
    );
    let flat = Tensor::f32(&[4, 3], vec![0.0; 12]);
    says(
        rnn(&flat, &s, &w, None, &lstm()),
        "rnn's x must be [time, batch, input], has shape [4, 3]",
    );
    let at = RnnAttrs {
        hidden_size: 0,
        ..lstm()
    };
    says(
        rnn(&o.x, &s, &w, None, &at),
        "rnn's hidden_size is 0, must be positive",
    );
    let at = RnnAttrs {
        input_size: 4,
        ..lstm()
    };
    says(
        rnn(&o.x, &s, &w, None, &at),
        "rnn's input_size is 4 but x has 3 features (shape [2, 2, 3])",
    );
    let at = RnnAttrs {
        dropout_prob: 1.5,
        ..lstm()
    };
    says(
        rnn(&o.x, &s, &w, None, &at),
        "rnn's dropout_prob 1.5 is not in [0, 1]",
    );
    says(
        rnn(&o.x, &s[..1], &w, None, &lstm()),
        "takes 2 initial state tensor(s), pre_state has 1",
    );
    says(
        rnn(&o.x, &s, &w[..3], None, &lstm()),
        "rnn's weight_list has 3 tensors; 1 layer(s) × 1 direction(s) need 4 (w_ih, w_hh per layer and direction, then b_ih, b_hh)",
    );
    let lens = Tensor::i64(&[3], vec![2, 2, 2]);
    says(
        rnn(&o.x, &s, &w, Some(&lens), &lstm()),
        "rnn's sequence_length has shape [3], expected [2] (one length per row)",
    );
    let lens = Tensor::i64(&[2], vec![2, 3]);
    says(
        rnn(&o.x, &s, &w, Some(&lens), &lstm()),
        "rnn's sequence_length[1] is 3, not in [0, 2]",
    );
}

#[test]
fn rnn_grad_errors() {
    let o = operands();
    let (s, w) = (refs(&o.state), refs(&o.weights));
    let f = match rnn(&o.x, &s, &w, None, &lstm()) {
        Ok(f) => f,
        Err(e) => panic!("{}", e.message),
    };
    let og = Tensor::f32(&[2, 2, 2], vec![1.0; 8]);
    let ok = rnn_grad(&o.x, &s, &w, None, &f.reserve, Some(&og), &[], &lstm());
    assert!(ok.is_ok());
    let short = Tensor::f32(&[3], vec![0.0; 3]);
    says(
        rnn_grad(&o.x, &s, &w, None, &short, Some(&og), &[], &lstm()),
        "rnn_grad's reserve has 3 elements; the rnn of these operands writes",
    );
    let bad = Tensor::f32(&[2, 2, 3], vec![1.0; 12]);
    says(
        rnn_grad(&o.x, &s, &w, None, &f.reserve, Some(&bad), &[], &lstm()),
        "rnn_grad's out_grad has shape [2, 2, 3], the output is [2, 2, 2]",
    );
    let g = Tensor::f32(&[1, 2, 2], vec![0.0; 4]);
    says(
        rnn_grad(
            &o.x,
            &s,
            &w,
            None,
            &f.reserve,
            Some(&og),
            &[Some(&g), Some(&g), Some(&g)],
            &lstm(),
        ),
        "rnn_grad's state_grad has 3 tensors, the op has 2 state(s)",
    );
    let g1 = Tensor::f32(&[2, 2, 2], vec![0.0; 8]);
    says(
        rnn_grad(
            &o.x,
            &s,
            &w,
            None,
            &f.reserve,
            Some(&og),
            &[Some(&g), Some(&g1)],
            &lstm(),
        ),
        "rnn_grad's state_grad[1] has shape [2, 2, 2], the state is [1, 2, 2]",
    );
}

fn coalesce() -> CoalesceAttrs {
    CoalesceAttrs {
        dtype: DType::F32,
        copy_data: true,
        set_constant: false,
        persist_output: false,
        constant: 0.0,
        use_align: true,
        align_size: -1,
        size_of_dtype: -1,
    }
}

#[test]
fn coalesce_errors() {
    let a = Tensor::f32(&[2], vec![1.0, 2.0]);
    assert!(coalesce_tensor(&[&a], &coalesce()).is_ok());
    says(
        coalesce_tensor(&[], &coalesce()),
        "coalesce_tensor has no input",
    );
    let at = CoalesceAttrs {
        align_size: 0,
        ..coalesce()
    };
    says(
        coalesce_tensor(&[&a], &at),
        "coalesce_tensor's align_size is 0, must be positive or -1",
    );
    let at = CoalesceAttrs {
        size_of_dtype: -3,
        ..coalesce()
    };
    says(
        coalesce_tensor(&[&a], &at),
        "coalesce_tensor's size_of_dtype is -3, must be positive or -1",
    );
    let at = CoalesceAttrs {
        size_of_dtype: i64::MAX,
        ..coalesce()
    };
    says(
        coalesce_tensor(&[&a], &at),
        "coalesce_tensor: a tensor of 2 elements is too large to align",
    );
    let empty = Tensor::f32(&[0, 3], Vec::new());
    says(
        coalesce_tensor(&[&a, &empty], &coalesce()),
        "coalesce_tensor: input 1 has no elements (shape [0, 3])",
    );
}
