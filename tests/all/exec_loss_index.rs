//! The executor reproduces Paddle's own numbers on the programs of
//! `tests/exec_fixtures/loss_index/`, which reach the norm, loss, indexing and ranking kernels
//! through Paddle's Python API (two einsums, p_norm from `F.normalize` and `paddle.linalg.norm`, nll_loss with
//! class weights and an ignored label, bce_loss, kldiv_loss, topk, argmax, take_along_axis,
//! put_along_axis, gather_nd) and are trained one step by `adadelta_` with an L1 regularizer
//! (`sign`) and by `rprop_`: the full-batch loss, every gradient and every persistable after the
//! step, each within `|a − b| ≤ 1e-5·|b| + 1e-5·max|b|`.

use crate::exec_rnn::full_batch_case_in;

tests![
    adadelta_l1_full_batch_step_matches_paddle,
    rprop_full_batch_step_matches_paddle
];

/// The Linear layer's weight and bias, and the einsum's matrix.
fn adadelta_l1_full_batch_step_matches_paddle() {
    full_batch_case_in("loss_index", "adadelta_l1", 3);
}

fn rprop_full_batch_step_matches_paddle() {
    full_batch_case_in("loss_index", "rprop", 3);
}
