//! The executor reproduces Paddle's own numbers on the recurrent programs of
//! `tests/exec_fixtures/rnn/` (`paddle.nn.LSTM`, 2 bidirectional layers, with Adam; and
//! `paddle.nn.GRU`, 2 layers with a per-row `sequence_length`, with SGD; `coalesce_tensor` of
//! their weights): the full-batch loss, every gradient the optimizer consumed
//! (`grads_full_batch`) and every persistable after the step (`state_after_full_batch_step`),
//! each within `|a − b| ≤ 1e-5·|b| + 1e-5·max|b|`.

use std::path::PathBuf;

use crate::common::assert_close;
use irw::executor::{run, RunOptions};
use irw::executor::{tensor_from_json, Feed};
use irw::SourceFile;
use irw::{parse_module, parse_startup_into, Module};
use serde_json::Value;

tests![
    lstm_full_batch_step_matches_paddle,
    gru_full_batch_step_matches_paddle
];

fn read(dir: &str, name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/exec_fixtures")
        .join(dir)
        .join(name);
    std::fs::read_to_string(path).expect("fixture readable")
}

fn load(dir: &str, model: &str) -> Module {
    let src = |f: String| SourceFile::new(f.clone(), read(dir, &f));
    let mut m = parse_module(&src(format!("{model}.ir"))).expect("parses");
    parse_startup_into(&mut m, &src(format!("{model}_startup.ir"))).expect("startup");
    m
}

fn full_batch_case(model: &str, n_grads: usize) {
    full_batch_case_in("rnn", model, n_grads);
}

/// Runs `tests/exec_fixtures/<dir>/<model>.ir` on its recorded feed and compares the loss, the
/// gradients and the persistables after the step with Paddle's (`<model>.numerics.json`).
pub(crate) fn full_batch_case_in(dir: &str, model: &str, n_grads: usize) {
    let numerics: Value =
        serde_json::from_str(&read(dir, &format!("{model}.numerics.json"))).expect("json");
    let feed_name = format!("{model}.feed.json");
    let feed = Feed::parse(&feed_name, &read(dir, &feed_name)).expect("feed parses");
    let rep = run(
        &load(dir, model),
        &RunOptions {
            feed: Some(feed),
            ..Default::default()
        },
    )
    .expect("runs");
    let loss = rep.losses[0][0].expect("loss found") as f64;
    let want = numerics["loss_full_batch"].as_f64().expect("loss");
    assert!(
        (loss - want).abs() <= 1e-5 * want.abs(),
        "loss {loss} vs Paddle {want}"
    );
    let grads = numerics["grads_full_batch"].as_object().expect("grads");
    assert_eq!(grads.len(), n_grads, "{model}: gradients recorded");
    for (name, want) in grads {
        let want = tensor_from_json(want).expect("tensor");
        let got = rep.grads.get(name).expect("gradient observed");
        assert_close(&format!("{model} grad {name}"), got, &want);
    }
    let state = numerics["state_after_full_batch_step"]
        .as_object()
        .expect("state");
    assert!(!state.is_empty());
    for (name, want) in state {
        let want = tensor_from_json(want).expect("tensor");
        let got = rep.scopes[0].get(name).expect("in scope");
        assert_close(&format!("{model} state {name}"), got, &want);
    }
}

/// 16 LSTM weights (2 layers × 2 directions × w_ih, w_hh, b_ih, b_hh) and the head's 2.
fn lstm_full_batch_step_matches_paddle() {
    full_batch_case("lstm_adam", 18);
}

/// 8 GRU weights (2 layers × w_ih, w_hh, b_ih, b_hh) and the head's 2.
fn gru_full_batch_step_matches_paddle() {
    full_batch_case("gru_sgd", 10);
}
