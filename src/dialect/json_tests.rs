//! The dialect against Paddle's own JSON: every `.ir` dump that has the JSON Paddle 3.3.1 wrote
//! for the same program beside it (the paddle-zoo models, the held-out models of
//! `tests/json_fixtures/heldout`, the scheduler and collectives probes, the `paddle`/`paddle-json`
//! pairs before and after Paddle's gradient-merge pass, and the `paddle-dist` programs of
//! `tests/paddle_dist_json`) is written by irw and
//! compared op by op: every attribute Paddle writes is written with the same tag (element tags
//! of arrays included), and every result type is the same. irw may write an attribute Paddle's
//! writer drops only when it is not in the op's definition (a pass's marker such as
//! `grad_merge_add`). The tags come from the attribute types of the dialect data, so this is
//! the check of the derived type → tag mapping against what Paddle itself writes.
//!
//! Also: every op of those dumps has a result-type family, and where the family derives a type
//! it is the type Paddle printed.

use crate::dialect::shape_family::{infer, ProgramOp, Shape};
use crate::dialect::Dialect;
use crate::json::{write_module, TagHints};
use crate::test_support::*;
use crate::{ir, SourceFile};
use serde_json::Value;
use std::path::PathBuf;

/// `(main .ir, startup .ir, main .json, startup .json)`.
fn pairs() -> Vec<(PathBuf, Option<PathBuf>, PathBuf, Option<PathBuf>)> {
    let zoo = root().join("../shared/fixtures/paddle-zoo");
    let held = root().join("tests/json_fixtures/heldout");
    let probes = root().join("tests/json_fixtures");
    let mut out = Vec::new();
    for m in ["lenet_momentum", "transformer_adamw", "mlp_clip_adam"] {
        for s in ["before", "after"] {
            out.push((
                zoo.join(format!("{m}_{s}.ir")),
                Some(zoo.join(format!("{m}_startup_{s}.ir"))),
                zoo.join(format!("{m}_{s}.paddle.json")),
                Some(zoo.join(format!("{m}_startup_{s}.paddle.json"))),
            ));
        }
    }
    for m in ["bn_cnn", "lstm_embed", "amp_mlp"] {
        out.push((
            held.join(format!("{m}_main.ir")),
            Some(held.join(format!("{m}_startup.ir"))),
            held.join(format!("{m}_main.json")),
            Some(held.join(format!("{m}_startup.json"))),
        ));
    }
    for p in ["lr_scheduler", "collectives", "shape_families"] {
        out.push((
            probes.join(format!("{p}.ir")),
            None,
            probes.join(format!("{p}.json")),
            None,
        ));
    }
    out.push((
        paddle_fixtures().join("before.ir"),
        Some(paddle_fixtures().join("startup_before.ir")),
        root().join("../shared/fixtures/paddle-json/main.json"),
        Some(root().join("../shared/fixtures/paddle-json/startup.json")),
    ));
    // Paddle's gradient-merge output of the same MLP, as Paddle wrote it (its block kwargs lost,
    // which `compare` skips).
    out.push((
        paddle_fixtures().join("after.ir"),
        Some(paddle_fixtures().join("startup_after.ir")),
        root().join("../shared/fixtures/paddle-json/main_gm.json"),
        Some(root().join("../shared/fixtures/paddle-json/startup_gm.json")),
    ));
    let dj = root().join("tests/paddle_dist_json");
    for m in [
        "mlp2_adam_k2",
        "mlp3_tanh_sgd_dp2_k2",
        "mlp5_gelu_momentum_k4",
    ] {
        let startup = dj.join(format!("{m}_startup_before.json"));
        let has_startup = startup.exists();
        out.push((
            dist_fixtures().join(format!("{m}_before.ir")),
            has_startup.then(|| dist_fixtures().join(format!("{m}_startup_before.ir"))),
            dj.join(format!("{m}_before.json")),
            has_startup.then_some(startup),
        ));
    }
    out
}

fn read(p: &PathBuf) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn ops(v: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    fn walk(region: &Value, out: &mut Vec<Value>) {
        for b in region["blocks"].as_array().into_iter().flatten() {
            for o in b["ops"].as_array().into_iter().flatten() {
                out.push(o.clone());
                for r in o["regions"].as_array().into_iter().flatten() {
                    walk(r, out);
                }
            }
        }
    }
    for r in v["program"]["regions"].as_array().into_iter().flatten() {
        walk(r, &mut out);
    }
    out
}

/// The tag structure of an attribute value: its tag, and for an array its elements' tags.
fn tags(at: &Value) -> String {
    match at["#"].as_str() {
        Some("0.a_array") => {
            let items: Vec<String> = at["D"].as_array().into_iter().flatten().map(tags).collect();
            format!("array[{}]", items.join(","))
        }
        Some(t) => t.to_string(),
        None => format!("?{at}"),
    }
}

/// `name -> tags` of an op's named attribute lists.
fn named(o: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for key in ["A", "DA", "QA"] {
        for e in o[key].as_array().into_iter().flatten() {
            if let (Some(n), Some(_)) = (e["N"].as_str(), e.get("AT")) {
                out.push((n.to_string(), tags(&e["AT"])));
            }
        }
    }
    out
}

fn results(o: &Value) -> Vec<Value> {
    match &o["O"] {
        Value::Array(a) => a.iter().map(|r| r["TT"].clone()).collect(),
        r => vec![r["TT"].clone()],
    }
}

fn op_name(key: &str) -> String {
    let (id, name) = key.split_once('.').unwrap_or(("", key));
    let dialect = match id {
        "0" => "builtin",
        "1" => "pd_op",
        "2" => "cf",
        "4" => "pd_dist",
        _ => "?",
    };
    if key == "p" {
        return "builtin.parameter".into();
    }
    format!("{dialect}.{name}")
}

/// Compares irw's program JSON with Paddle's; the differences, as lines.
fn compare(label: &str, ours: &Value, paddle: &Value, kwargs: usize, out: &mut Vec<String>) {
    // irw writes each keyword argument as a `pd_op.data` first in its block (Paddle cannot load
    // block kwargs); Paddle's own JSON of such a program has none.
    let ours: Vec<Value> = ops(ours).into_iter().skip(kwargs).collect();
    let theirs = ops(paddle);
    if ours.len() != theirs.len() {
        out.push(format!(
            "{label}: {} ops, Paddle {}",
            ours.len(),
            theirs.len()
        ));
        return;
    }
    for (k, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        let (ka, kb) = (
            a["#"].as_str().unwrap_or("?"),
            b["#"].as_str().unwrap_or("?"),
        );
        if ka != kb {
            out.push(format!("{label} op {k}: {ka}, Paddle {kb}"));
            continue;
        }
        let name = op_name(ka);
        let spec = Dialect::get().spec(&name);
        let (na, nb) = (named(a), named(b));
        for (n, t) in &nb {
            match na.iter().find(|(m, _)| m == n) {
                Some((_, u)) if u == t => {}
                Some((_, u)) => out.push(format!("{label} op {k} {name} `{n}`: {u}, Paddle {t}")),
                None => out.push(format!("{label} op {k} {name} `{n}`: missing")),
            }
        }
        for (n, _) in &na {
            let in_definition = spec.is_some_and(|s| s.attr(n).is_some());
            if in_definition && !nb.iter().any(|(m, _)| m == n) {
                out.push(format!(
                    "{label} op {k} {name} `{n}`: written, Paddle has none"
                ));
            }
        }
        if results(a) != results(b) {
            out.push(format!(
                "{label} op {k} {name}: results {:?}, Paddle {:?}",
                results(a),
                results(b)
            ));
        }
    }
}

#[test]
fn every_fixture_is_written_with_paddles_tags_and_types() {
    let mut diffs = Vec::new();
    let mut compared = 0;
    for (main, startup, jmain, jstartup) in pairs() {
        let mut m = ir::parse_module(&SourceFile::new(main.display().to_string(), read(&main)))
            .unwrap_or_else(|d| panic!("{d}"));
        if let Some(s) = &startup {
            ir::parse_startup_into(&mut m, &SourceFile::new(s.display().to_string(), read(s)))
                .unwrap_or_else(|d| panic!("{d}"));
        }
        // Mesh dimension names are not in the text form: irw writes those of an input JSON
        // (here Paddle's own), as it does for a program read from JSON.
        let mut hints = TagHints::default();
        let _ = crate::json::read_module_with_hints(
            &SourceFile::new(jmain.display().to_string(), read(&jmain)),
            &mut hints,
        );
        let out = write_module(&m, &hints).unwrap_or_else(|d| panic!("{}: {d}", main.display()));
        let kwargs = m.main.block_kwargs(m.main.top_block()).len();
        let parse = |s: &str| -> Value { serde_json::from_str(s).expect("valid JSON") };
        let label = main
            .file_name()
            .map_or(String::new(), |f| f.to_string_lossy().into());
        compare(
            &label,
            &parse(&out.main),
            &parse(&read(&jmain)),
            kwargs,
            &mut diffs,
        );
        compared += 1;
        if let (Some(js), Some(s)) = (&jstartup, &out.startup) {
            let skw = m
                .startup
                .as_ref()
                .map_or(0, |p| p.block_kwargs(p.top_block()).len());
            compare(
                &format!("{label} (startup)"),
                &parse(s),
                &parse(&read(js)),
                skw,
                &mut diffs,
            );
            compared += 1;
        }
    }
    assert!(compared >= 25, "{compared} programs compared");
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}

/// Every op of the dumps has a family (or is one whose types irw never derives: feeds,
/// parameters, control flow, combine); where the family derives a type, it is Paddle's.
#[test]
fn shape_families_give_paddles_result_types() {
    let mut files: Vec<PathBuf> = Vec::new();
    for d in ["paddle", "paddle-zoo", "paddle-dist"] {
        files.extend(files_with_ext(
            &root().join("../shared/fixtures").join(d),
            "ir",
        ));
    }
    files.extend(files_with_ext(&root().join("tests/json_fixtures"), "ir"));
    // Ops whose result types come from outside the op (a feed's declaration, the scope, a
    // region) or that have no results: no family.
    let exempt = |n: &str| {
        n.starts_with("builtin.")
            || n.starts_with("cf.")
            || matches!(
                n,
                "pd_op.data" | "pd_op.if" | "pd_op.while" | "pd_op.uniform" | "pd_op.gaussian"
            )
    };
    let (mut derived, mut wrong, mut missing) = (0, Vec::new(), Vec::new());
    for f in &files {
        let text = read(f);
        let Ok(m) = ir::parse_module(&SourceFile::new(f.display().to_string(), text)) else {
            continue;
        };
        for p in std::iter::once(&m.main).chain(m.startup.as_ref()) {
            for op in p.walk() {
                let name = m.ctx.str(p.op_name(op));
                let Some(spec) = Dialect::get().spec(name) else {
                    continue;
                };
                if spec.shape == Shape::Unknown {
                    if !exempt(name) && !missing.contains(&name.to_string()) {
                        missing.push(name.to_string());
                    }
                    continue;
                }
                let view = ProgramOp {
                    ctx: &m.ctx,
                    prog: p,
                    op,
                };
                let Some(types) = infer(spec.shape, &view, p.num_results(op)) else {
                    continue;
                };
                for (i, t) in types.into_iter().enumerate() {
                    let (Some(t), Some(r)) = (t, p.results(op).nth(i)) else {
                        continue;
                    };
                    let printed = m.ctx.ty(p.value_type(r));
                    if *printed == ir::Type::Unknown || *printed == ir::Type::Null {
                        continue;
                    }
                    derived += 1;
                    // A family derives shape and dtype; an auto-parallel value's distribution
                    // comes from the program's mesh, not from the op.
                    let same = match printed {
                        ir::Type::Dist { .. } => {
                            t.shape() == printed.shape() && t.dtype() == printed.dtype()
                        }
                        _ => &t == printed,
                    };
                    if !same {
                        wrong.push(format!(
                            "{}: {name} result {i}: derived {t:?}, Paddle printed {}",
                            f.display(),
                            m.ctx.type_text(p.value_type(r))
                        ));
                    }
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "ops of the fixtures without a family: {missing:?}"
    );
    assert!(derived > 2000, "only {derived} result types derived");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// An op the dialect does not know, not read from JSON: its attributes have no known type,
/// and guessing one can crash Paddle.
#[test]
fn unknown_op_attributes_are_refused() {
    let main = "{\n    (%0) = \"pd_op.data\" () {dtype:float32,name:\"x\",place:Place(undefined:0),shape:[2],stop_gradient:[true]} : () -> tensor<2xf32>\n    (%1) = \"pd_op.foo\" (%0) {eps:0.5,op_role:0} : (tensor<2xf32>) -> tensor<2xf32>\n}\n";
    let m = ir::parse_module(&SourceFile::new("m.ir", main)).unwrap_or_else(|d| panic!("{d}"));
    let e = write_module(&m, &TagHints::default())
        .expect_err("refused")
        .to_string();
    assert!(
        e.contains("`pd_op.foo` attribute `eps`: Paddle's type for it is unknown (the op is not in the dialect table); declare the op in the rule file"),
        "{e}"
    );
}
