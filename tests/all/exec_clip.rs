//! `rules/examples/global_norm_clip.rw` is Paddle's `ClipGradByGlobalNorm`: the rule file's clip
//! of an unclipped Adam program takes the step Paddle's own clip takes (parameters and Adam
//! moments), from the same state on the same batch.
//!
//! Paddle is the oracle: `tests/data/paddle_global_norm_clip.py` built the program twice with
//! Paddle 3.3.1 (without a clip, and with `grad_clip=ClipGradByGlobalNorm(0.1)`), ran one
//! full-batch step of each from the state and batch of the zoo's `mlp_clip_adam.feed.json`, and
//! recorded every persistable after it (`tests/data/paddle_clip/numerics.json`, read here). The
//! global norm there is 1.48, so the clip scales every gradient by about 1/15.

use std::path::PathBuf;

use crate::common::assert_close;
use irw::executor::{run, tensor_from_json, Feed, RunOptions, RunReport};
use irw::{parse_module, parse_startup_into, rewrite, Module, RewriteOptions, SourceFile};
use serde_json::Value;

tests![
    global_norm_clip_rule_takes_paddles_clipped_step,
    without_the_rule_the_step_is_paddles_unclipped_one,
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(p: PathBuf) -> SourceFile {
    let text = std::fs::read_to_string(&p).expect("fixture readable");
    SourceFile::new(p.display().to_string(), text)
}

fn unclipped() -> Module {
    let dir = root().join("tests/data/paddle_clip");
    let mut m = parse_module(&read(dir.join("mlp_adam_before.ir"))).expect("parses");
    parse_startup_into(&mut m, &read(dir.join("mlp_adam_startup_before.ir")))
        .expect("startup parses");
    m
}

fn numerics() -> Value {
    let text = read(root().join("tests/data/paddle_clip/numerics.json")).text;
    serde_json::from_str(&text).expect("valid json")
}

fn step(m: &Module) -> RunReport {
    let feed = root().join("../shared/fixtures/paddle-zoo/mlp_clip_adam.feed.json");
    let feed = read(feed);
    let rep = run(
        m,
        &RunOptions {
            feed: Some(Feed::parse(&feed.name, &feed.text).expect("feed parses")),
            ..Default::default()
        },
    )
    .expect("runs");
    assert_eq!(rep.micro_batch, 8, "one full-batch step");
    rep
}

/// Every persistable Paddle recorded under `key` is within the fixtures' tolerance of irw's.
fn assert_state(rep: &RunReport, j: &Value, key: &str) {
    let state = j[key].as_object().expect("state");
    assert_eq!(
        state.len(),
        21,
        "4 parameters, 16 Adam states, the learning rate"
    );
    for (name, want) in state {
        let want = tensor_from_json(want).expect("tensor");
        let got = rep.scopes[0]
            .get(name)
            .unwrap_or_else(|| panic!("no {name} after the step"));
        assert_close(&format!("{key} {name}"), got, &want);
    }
}

fn global_norm_clip_rule_takes_paddles_clipped_step() {
    let j = numerics();
    let clip = j["clip_norm"].as_f64().expect("clip_norm").to_string();
    let rules = irw::load_rules(
        &[root().join("rules/examples/global_norm_clip.rw")],
        &[("clip_norm".to_string(), clip)],
    )
    .expect("rules load");
    let mut m = unclipped();
    rewrite(&mut m, &rules, &RewriteOptions::default()).expect("rewrites");
    assert_state(&step(&m), &j, "state_after_full_batch_step");
}

fn without_the_rule_the_step_is_paddles_unclipped_one() {
    // The clip acts here: the unclipped step is Paddle's unclipped one, and far from the clipped.
    let j = numerics();
    let rep = step(&unclipped());
    assert_state(&rep, &j, "state_after_unclipped_step");
    let clipped = tensor_from_json(&j["state_after_full_batch_step"]["linear_1.w_0_moment2_0"])
        .expect("tensor")
        .to_f64_vec();
    let got = rep.scopes[0]
        .get("linear_1.w_0_moment2_0")
        .expect("moment")
        .to_f64_vec();
    let ratio = got.iter().sum::<f64>() / clipped.iter().sum::<f64>();
    let norm = j["global_norm"].as_f64().expect("norm") / 0.1;
    assert!(
        (ratio / (norm * norm) - 1.0).abs() < 1e-3,
        "the second moment grows by (global norm / clip_norm)^2 without the clip: {ratio}"
    );
}
