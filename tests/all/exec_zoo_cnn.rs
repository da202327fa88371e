//! The executor reproduces Paddle's own numbers on the convolutional model of
//! `fixtures/paddle-zoo/` (LeNet: conv2d, max pool2d, relu, flatten, linear; Momentum): the
//! full-batch loss, the gradients the optimizer consumed (`grads_full_batch`), and the
//! parameters and velocities after the step, each within `|a − b| ≤ 1e-5·|b| + 1e-5·max|b|`.
//! The fixtures' README: `irw check` of the shipped gradient merge passes on it.

use std::path::PathBuf;

use crate::common::assert_close;
use irw::executor::{run, RunOptions};
use irw::executor::{tensor_from_json, Feed};
use irw::SourceFile;
use irw::{parse_module, parse_startup_into, Module};
use serde_json::Value;

tests![
    lenet_full_batch_step_matches_paddle,
    convt_generator_step_matches_paddle,
    maxpool_mask_step_matches_paddle,
    shuffle_unfold_maxout_step_matches_paddle,
    pool3d_step_matches_paddle
];

fn zoo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/paddle-zoo")
}

fn read(name: &str) -> String {
    std::fs::read_to_string(zoo().join(name)).expect("fixture readable")
}

fn load(model: &str) -> Module {
    let src = |f: String| SourceFile::new(f.clone(), read(&f));
    let mut m = parse_module(&src(format!("{model}_before.ir"))).expect("parses");
    parse_startup_into(&mut m, &src(format!("{model}_startup_before.ir"))).expect("startup");
    m
}

fn full_batch_case(model: &str) {
    let numerics: Value =
        serde_json::from_str(&read(&format!("{model}.numerics.json"))).expect("json");
    let feed_name = format!("{model}.feed.json");
    let feed = Feed::parse(&feed_name, &read(&feed_name)).expect("feed parses");
    let rep = run(
        &load(model),
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
    assert!(!grads.is_empty());
    for (name, want) in grads {
        let want = tensor_from_json(want).expect("tensor");
        let got = rep.grads.get(name).expect("gradient observed");
        assert_close(&format!("{model} grad {name}"), got, &want);
    }
    for (name, want) in numerics["state_after_full_batch_step"]
        .as_object()
        .expect("state")
    {
        let want = tensor_from_json(want).expect("tensor");
        let got = rep.scopes[0].get(name).expect("in scope");
        assert_close(&format!("{model} state {name}"), got, &want);
    }
}

fn lenet_full_batch_step_matches_paddle() {
    full_batch_case("lenet_momentum");
}

/// The small vision models of `tests/data/paddle_vision/` (made by `tests/data/paddle_vision.py`
/// around conv2d_transpose, max_pool2d_with_index, pixel_shuffle/unshuffle, maxout, unfold and
/// pool3d):
/// one SGD step on the full batch gives every persistable Paddle had after its step.
fn vision_step_matches_paddle(model: &str) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/paddle_vision");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).expect("fixture readable");
    let src = |f: String| SourceFile::new(f.clone(), read(&f));
    let mut m = irw::paddle_json::read_module(&src(format!("{model}.json"))).expect("reads");
    irw::paddle_json::read_startup_into(
        &mut m,
        &src(format!("{model}_startup.json")),
        &mut Default::default(),
    )
    .expect("startup");
    let feed_name = format!("{model}.feed.json");
    let feed = Feed::parse(&feed_name, &read(&feed_name)).expect("feed parses");
    let rep = run(
        &m,
        &RunOptions {
            feed: Some(feed),
            ..Default::default()
        },
    )
    .expect("runs");
    let numerics: Value =
        serde_json::from_str(&read(&format!("{model}.numerics.json"))).expect("json");
    let state = numerics["state_after_full_batch_step"]
        .as_object()
        .expect("state");
    assert!(state.len() >= 4, "{model}: parameters recorded");
    for (name, want) in state {
        let want = tensor_from_json(want).expect("tensor");
        let got = rep.scopes[0].get(name).expect("in scope");
        assert_close(&format!("{model} state {name}"), got, &want);
    }
}

fn convt_generator_step_matches_paddle() {
    vision_step_matches_paddle("convt_gen_sgd");
}

fn maxpool_mask_step_matches_paddle() {
    vision_step_matches_paddle("maxpool_mask_sgd");
}

fn shuffle_unfold_maxout_step_matches_paddle() {
    vision_step_matches_paddle("shuffle_unfold_maxout_sgd");
}

fn pool3d_step_matches_paddle() {
    vision_step_matches_paddle("pool3d_sgd");
}
