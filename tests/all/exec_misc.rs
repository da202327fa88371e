//! The executor reproduces Paddle's own numbers on the program of `tests/exec_fixtures/misc/`,
//! which reaches the kernels real programs used and the executor lacked (`norm`, `index_add`,
//! `repeat_interleave` with an int and with a tensor of repeats, `share_data_`, and
//! `increment_` of a persistable step counter) and is trained one step by `sgd_`: the
//! full-batch loss, every gradient and every persistable after the step (the counter
//! included), each within `|a − b| ≤ 1e-5·|b| + 1e-5·max|b|`.

use crate::exec_rnn::full_batch_case_in;

tests![misc_full_batch_step_matches_paddle];

/// The Linear layer's weight and bias, and the rows index_add adds.
fn misc_full_batch_step_matches_paddle() {
    full_batch_case_in("misc", "misc_sgd", 3);
}
