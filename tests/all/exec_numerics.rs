//! The executor reproduces Paddle's own numbers (`fixtures/paddle/*.numerics.json`): parameters
//! after one full-batch step, the gradients the optimizer consumed, the loss, and the gradient-
//! merge reference (k = 4 micro-steps of `after*.ir`).

use std::path::PathBuf;

use irw::executor::Tensor;
use irw::executor::{run, RunOptions};
use irw::executor::{tensor_from_json, Feed};
use irw::SourceFile;
use irw::{parse_module, parse_startup_into, Module};
use serde_json::Value;

tests![
    sgd_full_batch_step_matches_paddle,
    adam_full_batch_step_matches_paddle,
    sgd_gradient_merge_matches_paddle_engine,
    adam_gradient_merge_matches_paddle_engine,
];

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/paddle")
}

fn load(main: &str, startup: &str) -> Module {
    let read = |f: &str| {
        let p = fixtures().join(f);
        SourceFile::new(
            p.display().to_string(),
            std::fs::read_to_string(&p).expect("fixture readable"),
        )
    };
    let mut m = parse_module(&read(main)).expect("parses");
    parse_startup_into(&mut m, &read(startup)).expect("startup parses");
    m
}

fn json(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixtures().join(name)).expect("json readable"))
        .expect("valid json")
}

/// `|a − b| ≤ rtol·|b| + atol·max|b|` per element.
fn assert_close(what: &str, got: &Tensor, want: &[f64], tol: f64) {
    let g = got.to_f64_vec();
    assert_eq!(g.len(), want.len(), "{what}: size");
    let max = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for (i, (a, b)) in g.iter().zip(want).enumerate() {
        assert!(
            (a - b).abs() <= tol * b.abs() + tol * max,
            "{what}[{i}]: got {a}, Paddle {b}"
        );
    }
}

fn flat(v: &Value) -> Vec<f64> {
    match v {
        Value::Object(o) => flat(&o["values"]),
        Value::Array(a) => a.iter().flat_map(flat).collect(),
        Value::Number(n) => vec![n.as_f64().expect("number")],
        _ => panic!("unexpected json {v}"),
    }
}

fn full_batch_case(json_name: &str, main: &str, startup: &str) {
    let j = json(json_name);
    let feed = Feed::parse(json_name, &j.to_string()).expect("feed parses");
    let m = load(main, startup);
    let rep = run(
        &m,
        &RunOptions {
            feed: Some(feed),
            ..Default::default()
        },
    )
    .expect("runs");
    let scope = &rep.scopes[0];
    for (name, want) in j["params_after_full_batch_step"]
        .as_object()
        .expect("params")
    {
        assert_close(
            &format!("{json_name} param {name}"),
            scope.get(name).expect("param in scope"),
            &flat(want),
            1e-5,
        );
    }
    for (name, want) in j["state_after_full_batch_step"].as_object().expect("state") {
        let t = tensor_from_json(want).expect("tensor");
        assert_close(
            &format!("{json_name} state {name}"),
            scope.get(name).expect("state in scope"),
            &t.to_f64_vec(),
            1e-5,
        );
    }
    for (name, want) in j["grads_full_batch"].as_object().expect("grads") {
        assert_close(
            &format!("{json_name} grad {name}"),
            rep.grads.get(name).expect("grad observed"),
            &flat(want),
            1e-5,
        );
    }
    let loss = rep.losses[0][0].expect("loss found") as f64;
    let want = j["loss_full_batch"].as_f64().expect("loss");
    assert!(
        (loss - want).abs() <= 1e-5 * want.abs(),
        "loss {loss} vs {want}"
    );
}

fn sgd_full_batch_step_matches_paddle() {
    full_batch_case("sgd.numerics.json", "before.ir", "startup_before.ir");
}

fn adam_full_batch_step_matches_paddle() {
    full_batch_case(
        "adam.numerics.json",
        "before_adam.ir",
        "startup_before_adam.ir",
    );
}

fn gradient_merge_case(json_name: &str, main: &str, startup: &str) {
    let j = json(json_name);
    let gm = &j["gradient_merge_reference"];
    let feed = Feed::parse(json_name, &j.to_string()).expect("feed parses");
    let m = load(main, startup);
    let rep = run(
        &m,
        &RunOptions {
            feed: Some(feed),
            k_steps: 4,
            ..Default::default()
        },
    )
    .expect("runs");
    let scope = &rep.scopes[0];
    for (name, want) in gm["params_after_gm_step"].as_object().expect("params") {
        assert_close(
            &format!("{json_name} gm param {name}"),
            scope.get(name).expect("param"),
            &flat(want),
            1e-5,
        );
    }
    for (name, want) in gm["merge_buffers_after_gm_step"]
        .as_object()
        .expect("buffers")
    {
        let got = scope
            .get(&format!("{name}@GRAD@MERGE"))
            .expect("buffer in scope");
        assert_close(&format!("{json_name} buffer {name}"), got, &flat(want), 0.0);
    }
    // The optimizer consumed the merged buffer scaled by 1/k.
    for (name, want) in gm["merge_buffers_after_k_micro_fwd_bwd"]
        .as_object()
        .expect("merged")
    {
        let want: Vec<f64> = flat(want).iter().map(|v| v / 4.0).collect();
        assert_close(
            &format!("{json_name} merged grad {name}"),
            rep.grads.get(name).expect("grad observed"),
            &want,
            1e-5,
        );
    }
    if let Some(state) = gm["state_after_gm_step"].as_object() {
        for (name, want) in state {
            let t = tensor_from_json(want).expect("tensor");
            assert_close(
                &format!("{json_name} gm state {name}"),
                scope.get(name).expect("state"),
                &t.to_f64_vec(),
                1e-5,
            );
        }
    }
}

fn sgd_gradient_merge_matches_paddle_engine() {
    gradient_merge_case("sgd.numerics.json", "after.ir", "startup_after.ir");
}

fn adam_gradient_merge_matches_paddle_engine() {
    gradient_merge_case(
        "adam.numerics.json",
        "after_adam.ir",
        "startup_after_adam.ir",
    );
}
