//! `irw gen lm`: the training program of a tiny language-model head with a padded, masked token
//! loss, in Paddle 3.3.1's text form (main, then `startup { … }`, as `irw gen cnn` writes it).
//!
//! The model: per row (a sequence) `T` = 4 token positions, `x [-1, 4, 8]` → `Linear(8, 8)` →
//! `relu` → `Linear(8, 5)` → `cross_entropy_with_softmax` against an int64 `label [-1, 4, 1]`
//! (reduction none: one loss per token, `[-1, 4, 1]`) → times a float `mask [-1, 4, 1]` (1 for a
//! real token, 0 for padding) → `loss = sum(l·mask) / sum(mask)`, the mean over the batch's real
//! tokens (`(loss * mask).sum() / mask.sum()` in Paddle); the backward ops `append_backward`
//! adds, in reverse (`divide_grad`, `sum_grad`, `multiply_grad` with no gradient for the mask);
//! one `sgd_` per parameter, learning rate 0.1. The op lines follow the forms of Paddle's own
//! dumps (`fixtures/paddle-zoo/`; `sum` with `dtype:Undefined` as its clip ops print it); the
//! masked loss's ops follow their definitions in `pd_op.h`. Built by analogy: no Paddle dump of
//! this exact model is compared.
//!
//! Why: a token-mean loss is where gradient merge with a constant 1/k is wrong. Each
//! micro-batch's gradient is normalized by its own token count, so averaging k of them is the
//! full batch's token mean only when every micro-batch holds as many tokens; `grad_merge.rw
//! --set normalize=tokens` divides by the window's count instead, and `irw check` feeds this
//! program masks with uneven counts (its generated `mask` inputs are 0/1 with the first token
//! of every row real, [`crate::exec::feed`]).

use super::text::{learning_rate, program, sgd, ty, Params, Text, V};

/// The program's text: main, then `startup { … }`.
pub fn lm() -> String {
    let (t_len, d, h, vocab) = (4i64, 8i64, 8i64, 5i64);
    let params: Vec<(String, Vec<i64>, bool)> = vec![
        ("linear_0.w_0".into(), vec![d, h], true),
        ("linear_0.b_0".into(), vec![h], true),
        ("linear_1.w_0".into(), vec![h, vocab], true),
        ("linear_1.b_0".into(), vec![vocab], true),
    ];
    let mut t = Text::new();
    let lr = learning_rate(&mut t);
    let pv = Params::declare(&mut t, &params);
    let p = |name: &str| pv.get(name);
    let x = t.one(
        "pd_op.data",
        &[],
        &format!("dtype:float32,name:\"x\",op_role:0,place:Place(undefined:0),shape:[-1,{t_len},{d}],stop_gradient:[true]"),
        ty(&[-1, t_len, d]),
    );
    let label = t.one(
        "pd_op.data",
        &[],
        &format!("dtype:int64,name:\"label\",op_role:0,place:Place(undefined:0),shape:[-1,{t_len},1],stop_gradient:[true]"),
        format!("tensor<-1x{t_len}x1xi64>"),
    );
    let mask = t.one(
        "pd_op.data",
        &[],
        &format!("dtype:float32,name:\"mask\",op_role:0,place:Place(undefined:0),shape:[-1,{t_len},1],stop_gradient:[true]"),
        ty(&[-1, t_len, 1]),
    );
    let (w0, b0, w1, b1) = (
        p("linear_0.w_0"),
        p("linear_0.b_0"),
        p("linear_1.w_0"),
        p("linear_1.b_0"),
    );
    let hid = [-1, t_len, h];
    let out = [-1, t_len, vocab];
    let tok = [-1, t_len, 1];
    let mm0 = t.one(
        "pd_op.matmul",
        &[Some(&x), Some(&w0)],
        "op_role:0,stop_gradient:[false],struct_name:\"/LM/Linear/\",transpose_x:false,transpose_y:false",
        ty(&hid),
    );
    let a0 = t.one(
        "pd_op.add",
        &[Some(&mm0), Some(&b0)],
        "op_role:0,stop_gradient:[false],struct_name:\"/LM/Linear/\"",
        ty(&hid),
    );
    let r = t.one(
        "pd_op.relu",
        &[Some(&a0)],
        "op_role:0,stop_gradient:[false],struct_name:\"/LM/ReLU/\"",
        ty(&hid),
    );
    let mm1 = t.one(
        "pd_op.matmul",
        &[Some(&r), Some(&w1)],
        "op_role:0,stop_gradient:[false],struct_name:\"/LM/Linear_1/\",transpose_x:false,transpose_y:false",
        ty(&out),
    );
    let logits = t.one(
        "pd_op.add",
        &[Some(&mm1), Some(&b1)],
        "op_role:0,stop_gradient:[false],struct_name:\"/LM/Linear_1/\"",
        ty(&out),
    );
    let ce = t.op(
        "pd_op.cross_entropy_with_softmax",
        &[Some(&logits), Some(&label)],
        "axis:-1,ignore_index:-100,numeric_stable_mode:true,op_role:0,soft_label:false,stop_gradient:[false,false],use_softmax:true",
        &[Some(ty(&out)), Some(ty(&tok))],
    );
    let masked = t.one(
        "pd_op.multiply",
        &[Some(&ce[1]), Some(&mask)],
        "op_role:0,stop_gradient:[false]",
        ty(&tok),
    );
    let all_axes = |t: &mut Text| {
        t.one(
            "pd_op.full_int_array",
            &[],
            "dtype:int64,op_role:0,place:Place(cpu),stop_gradient:[true],value:[]",
            "tensor<0xi64>".into(),
        )
    };
    let num_axes = all_axes(&mut t);
    let num = t.one(
        "pd_op.sum",
        &[Some(&masked), Some(&num_axes)],
        "dtype:Undefined,keepdim:false,op_role:0,stop_gradient:[false]",
        "tensor<f32>".into(),
    );
    let cnt_axes = all_axes(&mut t);
    let cnt = t.one(
        "pd_op.sum",
        &[Some(&mask), Some(&cnt_axes)],
        "dtype:Undefined,keepdim:false,op_role:0,stop_gradient:[true]",
        "tensor<f32>".into(),
    );
    let loss = t.one(
        "pd_op.divide",
        &[Some(&num), Some(&cnt)],
        "op_role:0,stop_gradient:[false]",
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
    let d_num = t.op(
        "pd_op.divide_grad",
        &[Some(&num), Some(&cnt), Some(&loss), Some(&seed)],
        "axis:-1,op_role:1,stop_gradient:[false,true]",
        &[Some("tensor<f32>".into()), None],
    );
    let d_masked = t.one(
        "pd_op.sum_grad",
        &[Some(&masked), Some(&d_num[0]), Some(&num_axes)],
        "keepdim:false,op_role:1,reduce_all:false,stop_gradient:[false]",
        ty(&tok),
    );
    let d_tok = t.op(
        "pd_op.multiply_grad",
        &[Some(&ce[1]), Some(&mask), Some(&d_masked)],
        "axis:-1,op_role:1,stop_gradient:[false,true]",
        &[Some(ty(&tok)), None],
    );
    let d_logits = t.one(
        "pd_op.cross_entropy_with_softmax_grad",
        &[Some(&label), Some(&ce[0]), Some(&d_tok[0])],
        "axis:-1,ignore_index:-100,numeric_stable_mode:true,op_role:1,soft_label:false,stop_gradient:[false],use_softmax:true",
        ty(&out),
    );
    let g_b1 = t.op(
        "pd_op.add_grad",
        &[Some(&mm1), Some(&b1), Some(&d_logits)],
        "axis:-1,op_role:1,stop_gradient:[false,false]",
        &[Some(ty(&out)), Some(ty(&[vocab]))],
    );
    let g_w1 = t.op(
        "pd_op.matmul_grad",
        &[Some(&r), Some(&w1), Some(&g_b1[0])],
        "op_role:1,stop_gradient:[false,false],transpose_x:false,transpose_y:false",
        &[Some(ty(&hid)), Some(ty(&[h, vocab]))],
    );
    let d_a0 = t.one(
        "pd_op.relu_grad",
        &[Some(&r), Some(&g_w1[0])],
        "op_role:1,stop_gradient:[false]",
        ty(&hid),
    );
    let g_b0 = t.op(
        "pd_op.add_grad",
        &[Some(&mm0), Some(&b0), Some(&d_a0)],
        "axis:-1,op_role:1,stop_gradient:[false,false]",
        &[Some(ty(&hid)), Some(ty(&[h]))],
    );
    let g_w0 = t.op(
        "pd_op.matmul_grad",
        &[Some(&x), Some(&w0), Some(&g_b0[0])],
        "op_role:1,stop_gradient:[false,false],transpose_x:false,transpose_y:false",
        &[None, Some(ty(&[d, h]))],
    );
    let grads: [(&str, &V); 4] = [
        ("linear_1.b_0", &g_b1[1]),
        ("linear_1.w_0", &g_w1[1]),
        ("linear_0.b_0", &g_b0[1]),
        ("linear_0.w_0", &g_w0[1]),
    ];
    sgd(&mut t, &params, &pv, &lr, &grads);
    program(t, &params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{parse_module, print_module};
    use crate::SourceFile;

    #[test]
    fn parses_verifies_and_prints_back() {
        let text = lm();
        let m = parse_module(&SourceFile::new("lm.ir", text.clone())).expect("parses");
        crate::dialect::verify_module(&m).expect("verifies");
        assert_eq!(print_module(&m), text);
        assert!(text.contains("\"pd_op.divide\""));
    }
}
