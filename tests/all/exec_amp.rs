//! The executor reproduces Paddle's own steps of a program under dynamic loss scaling
//! (`tests/exec_fixtures/amp/mlp_loss_scaling.ir`: the loss times a persistable `loss_scaling`,
//! `check_finite_and_unscale_` and `update_loss_scaling_` on the gradients in place, then SGD).
//! Four steps, each from the state Paddle had before it: two finite steps (the second doubles
//! the scale), a third, and one whose scaled gradients overflow (the gradients are zeroed, the
//! parameters stay, the scale halves). Every persistable after each step is compared with
//! Paddle's, within `|a − b| ≤ 1e-5·|b| + 1e-5·max|b|` (the counters and the scale exactly).
//!
//! Then the gradient merge of that program (`rules/grad_merge.rw`, k_steps=4) on the overflowing
//! batch: the window's merged gradient is not finite, so the window leaves the parameters, halves
//! the scale once, and its buffers are zero again afterwards (`irw check` cannot judge this: it
//! refuses an original whose step is not finite).

use std::path::PathBuf;

use crate::common::assert_close;
use irw::executor::{run, tensor_from_json, Feed, RunOptions};
use irw::{parse_module, rewrite, RewriteOptions, SourceFile};
use serde_json::Value;

tests![
    loss_scaled_steps_match_paddle,
    merged_window_that_overflows_skips_the_step
];

fn read(name: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/exec_fixtures/amp");
    std::fs::read_to_string(dir.join(name)).expect("fixture readable")
}

fn loss_scaled_steps_match_paddle() {
    let name = "mlp_loss_scaling.ir";
    let module = parse_module(&SourceFile::new(name.to_string(), read(name))).expect("parses");
    let mut scales = Vec::new();
    for step in 0..4 {
        let file = format!("mlp_loss_scaling.step{step}.json");
        let text = read(&file);
        let feed = Feed::parse(&file, &text).expect("feed parses");
        let recorded: Value = serde_json::from_str(&text).expect("json");
        let rep = run(
            &module,
            &RunOptions {
                feed: Some(feed),
                ..Default::default()
            },
        )
        .expect("runs");
        let after = recorded["state_after"].as_object().expect("state_after");
        assert_eq!(
            after.len(),
            8,
            "4 parameters, the learning rate, scale, 2 counters"
        );
        for (n, want) in after {
            let want = tensor_from_json(want).expect("tensor");
            let got = rep.scopes[0].get(n).expect("in scope");
            if n == "loss_scaling" || n.starts_with("num_") {
                assert_eq!(got.to_f64_vec(), want.to_f64_vec(), "step {step} {n}");
            }
            assert_close(&format!("step {step} {n}"), got, &want);
        }
        scales.push(
            rep.scopes[0]
                .get("loss_scaling")
                .expect("scale")
                .to_f64_vec()[0],
        );
        if step == 3 {
            let before = recorded["state_init"].as_object().expect("state_init");
            let w = tensor_from_json(&before["linear_0.w_0"]).expect("tensor");
            let got = rep.scopes[0].get("linear_0.w_0").expect("in scope");
            assert_eq!(
                got.to_f64_vec(),
                w.to_f64_vec(),
                "an overflowing step moves nothing"
            );
        }
    }
    assert_eq!(scales, vec![1024.0, 2048.0, 2048.0, 1024.0]);
}

fn merged_window_that_overflows_skips_the_step() {
    let name = "mlp_loss_scaling.ir";
    let mut m = parse_module(&SourceFile::new(name.to_string(), read(name))).expect("parses");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let sets = vec![("k_steps".to_string(), "4".to_string())];
    let rules = irw::load_rules(&[root.join("rules/grad_merge.rw")], &sets).expect("rules load");
    rewrite(&mut m, &rules, &RewriteOptions::default()).expect("rewrites");
    let file = "mlp_loss_scaling.step3.json";
    let text = read(file);
    let recorded: Value = serde_json::from_str(&text).expect("json");
    let rep = run(
        &m,
        &RunOptions {
            k_steps: 4,
            feed: Some(Feed::parse(file, &text).expect("feed parses")),
            ..Default::default()
        },
    )
    .expect("runs");
    assert_eq!(rep.micro_batch, 2);
    let scope = &rep.scopes[0];
    let before = recorded["state_init"].as_object().expect("state_init");
    assert_eq!(
        tensor_from_json(&before["loss_scaling"])
            .expect("t")
            .to_f64_vec(),
        [2048.0]
    );
    for p in [
        "linear_0.w_0",
        "linear_0.b_0",
        "linear_1.w_0",
        "linear_1.b_0",
    ] {
        let want = tensor_from_json(&before[p]).expect("tensor").to_f64_vec();
        assert_eq!(scope.get(p).expect("param").to_f64_vec(), want, "{p} moved");
        let buf = scope.get(&format!("{p}@GRAD@MERGE")).expect("buffer");
        assert!(
            buf.to_f64_vec().iter().all(|&v| v == 0.0),
            "{p}'s buffer not zeroed"
        );
    }
    let get = |n: &str| scope.get(n).expect("state").to_f64_vec();
    assert_eq!(get("loss_scaling"), [1024.0]);
    assert_eq!(get("num_good_steps"), [0.0]);
    assert_eq!(get("num_bad_steps"), [0.0]);
}
