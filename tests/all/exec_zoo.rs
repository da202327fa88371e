//! The executor reproduces Paddle's numbers on the models of `fixtures/paddle-zoo/` built from
//! Paddle's own layers: the full-batch loss, the gradients, and every parameter and optimizer
//! state after one full-batch step (`M.numerics.json`, read here, never copied). The golden
//! `check/zoo_transformer_grad_merge.test` runs `irw check` on the transformer.
//!
//! `grads_full_batch` holds the backward's gradients, before clipping or weight decay (what
//! Paddle's `append_backward` returns); the optimizer of `mlp_clip_adam` consumes them clipped
//! and decayed. So the test publishes each backward gradient to the scope under `P@GRAD` (a
//! `builtin.shadow_output` after the op that makes it, found by following the optimizer's
//! `grad` operand back through the optimize stage) and compares those.
//!
//! What is compared comes from the JSON too: `compare_state` leaves out the state of
//! `noise_params`, parameters whose gradient is rounding noise (the attention's key bias: softmax
//! cancels it), whose Adam update is the sign of that noise.

use std::path::PathBuf;

use crate::common::assert_close;
use irw::executor::op_role;
use irw::executor::{run, RunOptions};
use irw::executor::{tensor_from_json, Feed};
use irw::SourceFile;
use irw::{
    intern_key, parse_module, parse_startup_into, Attr, AttrDict, Module, OpSyntax, ValueId,
};
use irw::{Dialect, Effect};
use serde_json::Value;

tests![
    transformer_adamw_full_batch_step_matches_paddle,
    mlp_clip_adam_full_batch_step_matches_paddle,
    momentum_rescale_grad_steps_as_paddle_does,
];

fn zoo(f: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/fixtures/paddle-zoo")
        .join(f)
}

fn load(main: &str, startup: &str) -> Module {
    let read = |f: &str| {
        let p = zoo(f);
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
    serde_json::from_str(&std::fs::read_to_string(zoo(name)).expect("json readable"))
        .expect("valid json")
}

fn names(j: &Value, key: &str) -> Vec<String> {
    j[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key} is a list"))
        .iter()
        .map(|v| v.as_str().expect("a name").to_string())
        .collect()
}

/// The value the backward (op_role 1) computed as the gradient the optimizer's `grad` operand
/// `g` is made from: followed back through optimize-stage ops (op_role 2; `builtin.combine`
/// lists flattened) along the one operand of the parameter's type that is neither the
/// parameter nor computed from it directly.
fn backward_grad(m: &Module, mut g: ValueId, param: ValueId) -> ValueId {
    let prog = &m.main;
    let ty = prog.value_type(param);
    while let Some(op) = prog.defining_op(g) {
        if op_role(&m.ctx, prog, op) != Some(2) {
            break;
        }
        let mut candidates = vec![];
        let mut stack: Vec<ValueId> = prog.operands(op).flatten().collect();
        while let Some(v) = stack.pop() {
            match prog.defining_op(v) {
                Some(d) if m.ctx.str(prog.op_name(d)) == "builtin.combine" => {
                    stack.extend(prog.operands(d).flatten())
                }
                // Not the parameter, nor a term made from it (weight decay's `scale(param)`).
                Some(d)
                    if op_role(&m.ctx, prog, d) == Some(2)
                        && prog.operands(d).flatten().any(|o| o == param) => {}
                _ if v != param && prog.value_type(v) == ty => candidates.push(v),
                _ => {}
            }
        }
        assert_eq!(candidates.len(), 1, "one gradient operand");
        g = candidates[0];
    }
    g
}

/// Adds a `builtin.shadow_output` of each parameter's backward gradient, named `P@GRAD`.
fn publish_backward_grads(m: &mut Module) {
    let prog = &m.main;
    let mut found = vec![];
    for op in prog.walk() {
        let name = m.ctx.str(prog.op_name(op));
        let Some(spec) = Dialect::get().spec(name) else {
            continue;
        };
        if spec.effect != Effect::Optimizer {
            continue;
        }
        let param = prog.operand(op, 0).expect("param");
        let grad = prog
            .operand(op, spec.operand_index("grad").expect("grad operand"))
            .expect("grad");
        let def = prog.defining_op(param).expect("made by builtin.parameter");
        let pname = m
            .ctx
            .attrs(prog.op_attrs(def))
            .get("parameter_name")
            .and_then(|a| a.as_str())
            .expect("parameter_name")
            .to_string();
        found.push((pname, backward_grad(m, grad, param)));
    }
    assert!(!found.is_empty());
    let sym = m.ctx.sym("builtin.shadow_output");
    for (pname, g) in found {
        let attrs = m.ctx.intern_attrs(AttrDict {
            entries: vec![
                (
                    intern_key("output_name"),
                    Attr::Str(format!("{pname}@GRAD").into()),
                ),
                (intern_key("op_role"), Attr::Int(1)),
            ],
        });
        let op = m
            .main
            .create_op(sym, attrs, &[Some(g)], &[], OpSyntax::Plain);
        let def = m.main.defining_op(g).expect("made by an op");
        m.main.insert_after(def, op);
    }
}

fn full_batch_case(model: &str) {
    let j = json(&format!("{model}.numerics.json"));
    let feed_name = format!("{model}.feed.json");
    let feed_text = std::fs::read_to_string(zoo(&feed_name)).expect("feed readable");
    let feed = Feed::parse(&feed_name, &feed_text).expect("feed parses");
    let mut m = load(
        &format!("{model}_before.ir"),
        &format!("{model}_startup_before.ir"),
    );
    publish_backward_grads(&mut m);
    let rep = run(
        &m,
        &RunOptions {
            feed: Some(feed),
            ..Default::default()
        },
    )
    .expect("runs");
    let loss = rep.losses[0][0].expect("loss found") as f64;
    let want = j["loss_full_batch"].as_f64().expect("loss");
    assert!(
        (loss - want).abs() <= 1e-5 * want.abs(),
        "{model}: loss {loss} vs Paddle {want}"
    );
    let noise = j["noise_params"].as_object().expect("noise_params");
    let grads = j["grads_full_batch"].as_object().expect("grads");
    assert!(!grads.is_empty());
    for (name, want) in grads {
        if noise.contains_key(name) {
            continue;
        }
        let want = tensor_from_json(want).expect("tensor");
        let got = rep.scopes[0]
            .get(&format!("{name}@GRAD"))
            .unwrap_or_else(|| panic!("{model}: no backward gradient for {name}"));
        assert_close(&format!("{model} grad {name}"), got, &want);
    }
    let state = j["state_after_full_batch_step"].as_object().expect("state");
    let compared = names(&j, "compare_state");
    assert!(compared.len() + 5 * noise.len() >= state.len());
    for name in compared {
        let want = tensor_from_json(&state[&name]).expect("tensor");
        let got = rep.scopes[0]
            .get(&name)
            .unwrap_or_else(|| panic!("{model}: no {name} after the run"));
        assert_close(&format!("{model} state {name}"), got, &want);
    }
}

fn transformer_adamw_full_batch_step_matches_paddle() {
    full_batch_case("transformer_adamw");
}

fn mlp_clip_adam_full_batch_step_matches_paddle() {
    full_batch_case("mlp_clip_adam");
}

/// `Momentum(0.05, 0.9, use_nesterov=True, rescale_grad=0.5)` on an MLP, built and stepped by
/// Paddle 3.3.1 (`tests/data/paddle_momentum/nesterov_rescale_*`): its CPU kernel does not read
/// `rescale_grad`, and irw's takes the same step (scaling the gradient by 0.5 misses Paddle's
/// parameters and velocities by far more than the tolerance).
fn momentum_rescale_grad_steps_as_paddle_does() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/paddle_momentum");
    let read = |f: &str| {
        let p = dir.join(format!("nesterov_rescale_{f}"));
        SourceFile::new(
            p.display().to_string(),
            std::fs::read_to_string(&p).expect("fixture readable"),
        )
    };
    let mut m = parse_module(&read("main.ir")).expect("parses");
    parse_startup_into(&mut m, &read("startup.ir")).expect("startup parses");
    let text = |f: &str| {
        std::fs::read_to_string(dir.join(format!("nesterov_rescale_{f}"))).expect("readable")
    };
    let feed = Feed::parse("nesterov_rescale_feed.json", &text("feed.json")).expect("feed parses");
    let rep = run(
        &m,
        &RunOptions {
            feed: Some(feed),
            ..Default::default()
        },
    )
    .expect("runs");
    let j: Value = serde_json::from_str(&text("numerics.json")).expect("valid json");
    let state = j["state_after_full_batch_step"].as_object().expect("state");
    let compared: Vec<String> = [names(&j, "compare_params"), names(&j, "compare_state")].concat();
    assert!(compared.iter().any(|n| n.ends_with("_velocity_0")));
    for name in compared {
        let want = tensor_from_json(&state[&name]).expect("tensor");
        let got = rep.scopes[0]
            .get(&name)
            .unwrap_or_else(|| panic!("no {name} after the run"));
        assert_close(&format!("momentum rescale_grad: {name}"), got, &want);
    }
}
