//! Writing Paddle's PIR JSON: JSON → IR → JSON gives Paddle's own files back (up to the order
//! of attribute lists, which Paddle itself does not keep), text → JSON gives what Paddle writes,
//! keyword arguments are encoded so Paddle 3.3.1 loads them, and the pre-write checks refuse
//! files Paddle would load and then crash on.

use crate::common::*;
use irw::paddle_json::{read_module, read_startup_into, write_module, TagHints};
use irw::SourceFile;
use serde_json::Value;

tests![
    json_ir_json_gives_paddles_files_back,
    startup_gm_round_trips,
    text_main_program_is_written_as_paddle_writes_it,
    collectives_are_written_and_read_as_paddle_does,
    kwargs_become_persistable_data_ops_bound_by_name,
    attribute_values_must_fit_the_table_tag,
    unknown_attributes_take_the_tag_of_their_value,
    persistable_values_must_be_marked,
    kwargs_need_an_initializer_and_a_free_name,
    uses_before_definitions_are_refused,
    cli_writes_both_programs_and_requires_startup_out,
    dist_text_is_written_as_paddle_writes_it,
    every_dist_fixture_round_trips_through_json,
];

fn json_fixture(name: &str) -> SourceFile {
    let p = root().join("../shared/fixtures/paddle-json").join(name);
    SourceFile::new(name, std::fs::read_to_string(&p).expect("fixture present"))
}

fn text_fixture(name: &str) -> SourceFile {
    let p = paddle_fixtures().join(name);
    SourceFile::new(name, std::fs::read_to_string(&p).expect("fixture present"))
}

/// Sorts the named-attribute lists of every op (Paddle writes them in hash-map order).
fn normalize(v: &mut Value) {
    match v {
        Value::Object(o) => {
            for k in ["A", "OA", "DA", "QA"] {
                if let Some(Value::Array(items)) = o.get_mut(k) {
                    if items.iter().all(|i| i.get("N").is_some()) {
                        items.sort_by(|a, b| a["N"].as_str().cmp(&b["N"].as_str()));
                    }
                }
            }
            o.values_mut().for_each(normalize);
        }
        Value::Array(a) => a.iter_mut().for_each(normalize),
        _ => {}
    }
}

fn parse(s: &str) -> Value {
    let mut v: Value = serde_json::from_str(s).expect("irw writes valid JSON");
    normalize(&mut v);
    v
}

fn first_difference(a: &Value, b: &Value) -> String {
    let (ao, bo) = (
        &a["program"]["regions"][0]["blocks"][0]["ops"],
        &b["program"]["regions"][0]["blocks"][0]["ops"],
    );
    for i in 0..ao
        .as_array()
        .map_or(0, |x| x.len())
        .max(bo.as_array().map_or(0, |x| x.len()))
    {
        if ao[i] != bo[i] {
            return format!("op {i}:\n  got  {}\n  want {}", ao[i], bo[i]);
        }
    }
    "header".into()
}

fn json_ir_json_gives_paddles_files_back() {
    let mut m = read_module(&json_fixture("main.json")).unwrap_or_else(|d| panic!("{d}"));
    read_startup_into(
        &mut m,
        &json_fixture("startup.json"),
        &mut TagHints::default(),
    )
    .unwrap_or_else(|d| panic!("{d}"));
    let out = write_module(&m, &TagHints::default()).unwrap_or_else(|d| panic!("{d}"));
    for (got, want) in [
        (&out.main, "main.json"),
        (out.startup.as_ref().expect("startup"), "startup.json"),
    ] {
        let (g, w) = (parse(got), parse(&json_fixture(want).text));
        assert!(g == w, "{want}: {}", first_difference(&g, &w));
    }
    // Output is compact and deterministic, like Paddle's.
    assert!(!out.main.contains('\n'));
    assert_eq!(
        write_module(&m, &TagHints::default()).map(|o| o.main).ok(),
        Some(out.main)
    );
}

fn startup_gm_round_trips() {
    let m = read_module(&json_fixture("startup_gm.json")).unwrap_or_else(|d| panic!("{d}"));
    let out = write_module(&m, &TagHints::default()).unwrap_or_else(|d| panic!("{d}"));
    let (g, w) = (
        parse(&out.main),
        parse(&json_fixture("startup_gm.json").text),
    );
    assert!(g == w, "{}", first_difference(&g, &w));
}

fn text_main_program_is_written_as_paddle_writes_it() {
    // before.ir has no float that 6 printed digits would round, so the JSON is Paddle's exactly.
    let m = irw::parse_module(&text_fixture("before.ir")).unwrap_or_else(|d| panic!("{d}"));
    let out = write_module(&m, &TagHints::default()).unwrap_or_else(|d| panic!("{d}"));
    let (g, w) = (parse(&out.main), parse(&json_fixture("main.json").text));
    assert!(g == w, "{}", first_difference(&g, &w));
}

/// The modern collectives (`all_reduce`, `reduce`, `broadcast` and their `_` forms, `all_gather`,
/// `reduce_scatter`): Paddle's print, written by irw, is the JSON Paddle 3.3.1 wrote for the same
/// program (`tests/json_fixtures/make_collectives.py`): every attribute tag from the table, and
/// read back it prints as Paddle printed it.
fn collectives_are_written_and_read_as_paddle_does() {
    let dir = root().join("tests/json_fixtures");
    let read = |n: &str| {
        let p = dir.join(n);
        SourceFile::new(
            p.display().to_string(),
            std::fs::read_to_string(&p).expect("fixture"),
        )
    };
    let (text, json) = (read("collectives.ir"), read("collectives.json"));
    let m = irw::parse_module(&text).unwrap_or_else(|d| panic!("{d}"));
    let out = write_module(&m, &TagHints::default()).unwrap_or_else(|d| panic!("{d}"));
    let (g, w) = (parse(&out.main), parse(&json.text));
    assert!(g == w, "{}", first_difference(&g, &w));
    let back = read_module(&json).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(irw::print_module(&back), text.text);
}

fn ops(v: &Value) -> &Vec<Value> {
    v["program"]["regions"][0]["blocks"][0]["ops"]
        .as_array()
        .expect("ops")
}

fn kwargs_become_persistable_data_ops_bound_by_name() {
    let mut m = irw::parse_module(&text_fixture("after.ir")).unwrap_or_else(|d| panic!("{d}"));
    irw::parse_startup_into(&mut m, &text_fixture("startup_after.ir"))
        .unwrap_or_else(|d| panic!("{d}"));
    let out = write_module(&m, &TagHints::default()).unwrap_or_else(|d| panic!("{d}"));
    let v = parse(&out.main);
    assert_eq!(
        v["base_code"],
        serde_json::json!({"magic": "pir", "trainable": true, "version": 4})
    );
    let ops = ops(&v);
    let top = m.main.top_block();
    let kwargs = m.main.block_kwargs(top);
    assert_eq!(kwargs.len(), 6);
    for (i, k) in kwargs.iter().enumerate() {
        let op = &ops[i];
        let name = m.ctx.str(k.name);
        assert_eq!(op["#"], "1.data", "op {i}");
        assert_eq!(op["O"][0]["%"], i as i64 + 1);
        let a: Vec<(&str, &Value)> = op["A"]
            .as_array()
            .expect("A")
            .iter()
            .map(|e| (e["N"].as_str().unwrap_or(""), &e["AT"]))
            .collect();
        assert_eq!(
            a[0],
            (
                "dtype",
                &serde_json::json!({"#": "1.a_dtype", "D": "float32"})
            )
        );
        assert_eq!(
            a[1],
            ("name", &serde_json::json!({"#": "0.a_str", "D": name}))
        );
        assert_eq!(
            a[2],
            (
                "place",
                &serde_json::json!({"#": "1.a_place", "D": [1, 0, ""]})
            )
        );
        assert_eq!(a[3].0, "shape");
        assert_eq!(
            op["OA"][0],
            serde_json::json!({"N": "persistable", "AT": {"#": "0.a_array", "D": [{"#": "0.a_bool", "D": true}]}})
        );
    }
    // Every use of a kwarg now names its op's result: the first add_ accumulates into
    // linear_2.b_0@GRAD@MERGE (the 6th kwarg, id 6).
    let add = ops.iter().find(|o| o["#"] == "1.add_").expect("an add_");
    assert_eq!(add["I"][0]["%"], 6);
    assert_eq!(add["A"][0]["N"], "grad_merge_add");
    // No value id is used before it is defined, and none is defined twice.
    let mut defined = std::collections::BTreeSet::new();
    for op in ops {
        for i in op["I"].as_array().map_or(&[][..], |x| x.as_slice()) {
            let id = i["%"].as_i64().expect("id");
            assert!(
                id == 0 || defined.contains(&id),
                "id {id} used before definition in {op}"
            );
        }
        let outs: Vec<&Value> = match &op["O"] {
            Value::Array(a) => a.iter().collect(),
            o => vec![o],
        };
        for o in outs {
            assert!(
                defined.insert(o["%"].as_i64().expect("id")),
                "duplicate id in {op}"
            );
        }
    }
}

fn refusal(main: &str, startup: Option<&str>) -> String {
    let mut m = irw::parse_module(&SourceFile::new("m.ir", main)).unwrap_or_else(|d| panic!("{d}"));
    if let Some(s) = startup {
        irw::parse_startup_into(&mut m, &SourceFile::new("s.ir", s))
            .unwrap_or_else(|d| panic!("{d}"));
    }
    write_module(&m, &TagHints::default())
        .expect_err("irw refuses to write this")
        .to_string()
}

fn attribute_values_must_fit_the_table_tag() {
    // Paddle loads `transpose_x` as a_i32 and then segfaults (SPEC.md E5f).
    let main = "{\n    (%0) = \"pd_op.data\" () {dtype:float32,name:\"x\",place:Place(undefined:0),shape:[2,2],stop_gradient:[true]} : () -> tensor<2x2xf32>\n    (%1) = \"pd_op.matmul\" (%0, %0) {stop_gradient:[false],transpose_x:1,transpose_y:false} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>\n}\n";
    let s = refusal(main, None);
    assert!(
        s.contains("`pd_op.matmul` (op 2 of the main program)"),
        "{s}"
    );
    assert!(
        s.contains("attribute `transpose_x` must be 0.a_bool"),
        "{s}"
    );
    // One flag per result.
    let s = refusal(
        &main
            .replace("transpose_x:1", "transpose_x:true")
            .replace("stop_gradient:[false]", "stop_gradient:[false,true]"),
        None,
    );
    assert!(
        s.contains("attribute `stop_gradient` has 2 entries for 1 results"),
        "{s}"
    );
    // Unknown attribute of a known op whose value has no single tag: refused.
    let s = refusal(
        &main.replace("transpose_x:1", "transpose_x:true,fancy:[1,\"a\"]"),
        None,
    );
    assert!(
        s.contains("no JSON type tag is known for attribute `fancy` of `pd_op.matmul`, and its value `[1,\"a\"]` has none of its own"),
        "{s}"
    );
}

fn unknown_attributes_take_the_tag_of_their_value() {
    // A rule's own marker attributes (`grad_merge_add: true`, `loss_scaled: true`, ...) are
    // not in the table: their tag follows from the value, so a rule file
    // can introduce a marker without a change to irw.
    let main = "{\n    (%0) = \"pd_op.data\" () {dtype:float32,name:\"x\",place:Place(undefined:0),shape:[2,2],stop_gradient:[true]} : () -> tensor<2x2xf32>\n    (%1) = \"pd_op.relu\" (%0) {big:3000000000,flag:true,ints:[1,2],mark:\"m\",n:3,p:Place(cpu),t:bfloat16,x:0.5,none:[]} : (tensor<2x2xf32>) -> tensor<2x2xf32>\n}\n";
    let m = irw::parse_module(&SourceFile::new("m.ir", main)).unwrap_or_else(|d| panic!("{d}"));
    let out = write_module(&m, &TagHints::default()).unwrap_or_else(|d| panic!("{d}"));
    let v: serde_json::Value = serde_json::from_str(&out.main).expect("valid JSON");
    let ops = v["program"]["regions"][0]["blocks"][0]["ops"]
        .as_array()
        .expect("ops");
    let relu = ops.iter().find(|o| o["#"] == "1.relu").expect("relu");
    let tag = |n: &str| -> serde_json::Value {
        relu["A"]
            .as_array()
            .and_then(|a| a.iter().find(|x| x["N"] == n))
            .map(|x| x["AT"].clone())
            .unwrap_or_else(|| panic!("attribute {n} missing in {relu}"))
    };
    assert_eq!(tag("flag"), serde_json::json!({"#": "0.a_bool", "D": true}));
    assert_eq!(tag("n"), serde_json::json!({"#": "0.a_i32", "D": 3}));
    assert_eq!(
        tag("big"),
        serde_json::json!({"#": "0.a_i64", "D": 3000000000i64})
    );
    assert_eq!(tag("x"), serde_json::json!({"#": "0.a_f64", "D": 0.5}));
    assert_eq!(tag("mark"), serde_json::json!({"#": "0.a_str", "D": "m"}));
    assert_eq!(tag("t")["#"], "1.a_dtype");
    assert_eq!(tag("p")["#"], "1.a_place");
    assert_eq!(
        tag("ints"),
        serde_json::json!({"#": "0.a_array", "D": [{"#": "0.a_i32", "D": 1}, {"#": "0.a_i32", "D": 2}]})
    );
    assert_eq!(tag("none"), serde_json::json!({"#": "0.a_array", "D": []}));
}

const STARTUP: &str = "{\n    (%0) = \"pd_op.full\" () {dtype:float32,persistable:[true],place:Place(undefined:0),shape:[],stop_gradient:[true],value:0.1} : () -> tensor<f32>\n    () = \"builtin.shadow_output\" (%0) {output_name:\"lr\"} : (tensor<f32>) -> \n}\n";
const MAIN: &str = "{\n    (%0) = \"pd_op.data\" () {dtype:float32,name:\"lr\",persistable:[true],place:Place(undefined:0),shape:[],stop_gradient:[true]} : () -> tensor<f32>\n    (%1) = \"pd_op.relu\" (%0) {stop_gradient:[true]} : (tensor<f32>) -> tensor<f32>\n}\n";

fn persistable_values_must_be_marked() {
    // The pair as given is fine.
    let mut m = irw::parse_module(&SourceFile::new("m.ir", MAIN)).unwrap_or_else(|d| panic!("{d}"));
    irw::parse_startup_into(&mut m, &SourceFile::new("s.ir", STARTUP))
        .unwrap_or_else(|d| panic!("{d}"));
    assert!(write_module(&m, &TagHints::default()).is_ok());
    // Startup stores a value not marked persistable (SPEC.md E5c).
    let s = refusal(MAIN, Some(&STARTUP.replace("persistable:[true],", "")));
    assert!(s.contains("startup program"), "{s}");
    assert!(s.contains("`builtin.shadow_output` stores `lr`"), "{s}");
    // Main binds the startup's variable without the flag (SPEC.md E5b).
    let s = refusal(&MAIN.replace("persistable:[true],", ""), Some(STARTUP));
    assert!(s.contains("`pd_op.data` binds `lr`"), "{s}");
}

fn kwargs_need_an_initializer_and_a_free_name() {
    let main = "{\n    ^kw:\n        %kwarg_buf {place:Place(cpu),persistable:true}\n    (%0) = \"pd_op.relu\" (%kwarg_buf) {stop_gradient:[true]} : (tensor<4xf32>) -> tensor<4xf32>\n}\n";
    let s = refusal(main, Some(STARTUP));
    assert!(
        s.contains("keyword argument `buf` is not created by the startup program"),
        "{s}"
    );
    let clash = main.replace("%kwarg_buf", "%kwarg_lr");
    let clash = clash.replace("    (%0) = \"pd_op.relu\"", "    (%9) = \"pd_op.data\" () {dtype:float32,name:\"lr\",persistable:[true],place:Place(undefined:0),shape:[],stop_gradient:[true]} : () -> tensor<f32>\n    (%0) = \"pd_op.relu\"");
    let s = refusal(&clash, Some(STARTUP));
    assert!(
        s.contains("another op of the program already binds that name"),
        "{s}"
    );
}

fn uses_before_definitions_are_refused() {
    let mut m = irw::parse_module(&SourceFile::new("m.ir", MAIN)).unwrap_or_else(|d| panic!("{d}"));
    let top = m.main.top_block();
    let ops: Vec<_> = m.main.block_ops(top).collect();
    m.main.move_before(ops[1], ops[0]);
    let s = write_module(&m, &TagHints::default())
        .expect_err("refused")
        .to_string();
    assert!(
        s.contains(
            "operand 0 of `pd_op.relu` (op 1) is a result of `pd_op.data`, which comes later"
        ),
        "{s}"
    );
}

fn cli_writes_both_programs_and_requires_startup_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mo, so) = (dir.path().join("m.json"), dir.path().join("s.json"));
    let fx = root().join("../shared/fixtures/paddle-json");
    let out = run_irw(&[
        fx.join("main.json").as_os_str(),
        "--startup".as_ref(),
        fx.join("startup.json").as_os_str(),
        "--emit".as_ref(),
        "paddle-json".as_ref(),
        "-o".as_ref(),
        mo.as_os_str(),
        "--startup-out".as_ref(),
        so.as_os_str(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let g = parse(&std::fs::read_to_string(&so).expect("startup written"));
    assert_eq!(g, parse(&json_fixture("startup.json").text));
    // Reading irw's own output gives the same text again.
    let again = run_irw(&[mo.as_os_str()]);
    assert_eq!(
        String::from_utf8_lossy(&again.stdout),
        std::fs::read_to_string(paddle_fixtures().join("before.ir")).expect("fixture")
    );

    let out = run_irw(&[
        fx.join("main.json").as_os_str(),
        "--startup".as_ref(),
        fx.join("startup.json").as_os_str(),
        "--emit".as_ref(),
        "paddle-json".as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--startup-out FILE"));
}

// ---- auto-parallel (pd_dist) programs -----------------------------------------------------

/// Paddle 3.3.1's own `serialize_pir_program` of the Engine programs (tests/paddle_dist_json).
fn paddle_dist_json(name: &str) -> SourceFile {
    let p = root().join("tests/paddle_dist_json").join(name);
    SourceFile::new(
        name,
        std::fs::read_to_string(&p).expect("measured JSON present"),
    )
}

fn dist_text(name: &str) -> SourceFile {
    let p = dist_fixtures().join(name);
    SourceFile::new(
        name,
        std::fs::read_to_string(&p).expect("paddle-dist fixture present"),
    )
}

/// Paddle's own writer drops pd_op attributes outside the op's yaml (SPEC.md §3); the dp2
/// fixture's `mean_grad` has one.
const DROPPED_BY_PADDLE: &str = "replace_all_uses_with_reshard_var";

fn without_dropped(mut v: Value) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(o) => {
                if let Some(Value::Array(a)) = o.get_mut("A") {
                    a.retain(|e| e.get("N").and_then(Value::as_str) != Some(DROPPED_BY_PADDLE));
                }
                o.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut v);
    v
}

/// Every non-integer number rounded to f32: the text form prints Adam's `beta1` as `0.9`, Paddle's
/// JSON has the float32 it holds widened (`0.8999999761581421`); both are the same float32.
fn as_f32(v: Value) -> Value {
    match v {
        Value::Number(n) if !(n.is_i64() || n.is_u64()) => {
            serde_json::json!(n.as_f64().map(|f| f as f32))
        }
        Value::Array(a) => Value::Array(a.into_iter().map(as_f32).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, v)| (k, as_f32(v))).collect()),
        v => v,
    }
}

fn dist_text_is_written_as_paddle_writes_it() {
    for (json, text) in [
        ("mlp2_adam_k2_before.json", "mlp2_adam_k2_before.ir"),
        (
            "mlp2_adam_k2_startup_before.json",
            "mlp2_adam_k2_startup_before.ir",
        ),
        (
            "mlp3_tanh_sgd_dp2_k2_before.json",
            "mlp3_tanh_sgd_dp2_k2_before.ir",
        ),
        (
            "mlp5_gelu_momentum_k4_before.json",
            "mlp5_gelu_momentum_k4_before.ir",
        ),
    ] {
        // Reading Paddle's file teaches irw the mesh dimension names ("dp"), which the text
        // form does not print; with them, irw's JSON of the text is Paddle's JSON.
        let mut hints = TagHints::default();
        irw::paddle_json::read_module_with_hints(&paddle_dist_json(json), &mut hints)
            .unwrap_or_else(|d| panic!("{json}: {d}"));
        let m = irw::parse_module(&dist_text(text)).unwrap_or_else(|d| panic!("{d}"));
        let out = write_module(&m, &hints).unwrap_or_else(|d| panic!("{text}: {d}"));
        let (g, w) = (
            as_f32(without_dropped(parse(&out.main))),
            as_f32(parse(&paddle_dist_json(json).text)),
        );
        assert!(g == w, "{text}: {}", first_difference(&g, &w));

        // Without an input JSON, meshes get Python's default names d0, d1, ...
        let plain = write_module(&m, &TagHints::default()).unwrap_or_else(|d| panic!("{d}"));
        assert!(!plain.main.contains("\"dp\"") && plain.main.contains("[\"d0\"]"));
        assert_eq!(
            plain.main.replace("[\"d0\"]", "[\"dp\"]"),
            out.main,
            "{text}: the names are the only difference"
        );
    }
}

/// JSON → irw text, through the binary.
fn json_to_text(json: &std::path::Path) -> String {
    let o = run_irw(&[json.as_os_str()]);
    assert!(
        o.status.success(),
        "irw {}: {}",
        json.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("utf-8")
}

fn every_dist_fixture_round_trips_through_json() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mains: Vec<_> = files_with_ext(&dist_fixtures(), "ir")
        .into_iter()
        .filter(|p| {
            let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            !n.contains("_startup_")
        })
        .collect();
    assert_eq!(mains.len(), 6, "3 models x before/after: {mains:?}");
    for main in mains {
        let name = main.file_name().and_then(|n| n.to_str()).unwrap_or("?");
        let (model, stage) = name
            .trim_end_matches(".ir")
            .rsplit_once('_')
            .expect("NAME_before.ir or NAME_after.ir");
        let startup = dist_fixtures().join(format!("{model}_startup_{stage}.ir"));
        let (mj, sj) = (
            dir.path().join(format!("{model}_{stage}.json")),
            dir.path().join(format!("{model}_startup_{stage}.json")),
        );
        let o = run_irw(&[
            main.as_os_str(),
            "--startup".as_ref(),
            startup.as_os_str(),
            "--emit".as_ref(),
            "paddle-json".as_ref(),
            "-o".as_ref(),
            mj.as_os_str(),
            "--startup-out".as_ref(),
            sj.as_os_str(),
        ]);
        assert!(
            o.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let (main_text, startup_text) = (json_to_text(&mj), json_to_text(&sj));
        let original = std::fs::read_to_string(&main).expect("fixture");
        assert!(main_text.contains("pd_dist.tensor<") && main_text.contains("op_dist_attr:{"));
        assert_eq!(
            startup_text,
            std::fs::read_to_string(&startup).expect("fixture"),
            "{model}_startup_{stage}.ir: JSON -> text differs"
        );
        if stage == "before" {
            assert!(
                main_text == original,
                "{name}: JSON -> text differs at line {:?}",
                main_text
                    .lines()
                    .zip(original.lines())
                    .position(|(a, b)| a != b)
            );
        } else {
            // The merge buffers (kwargs) come back as the persistable pd_op.data ops they are
            // written as; the rest is the same program, and a second write is the same JSON.
            assert!(original.contains("^kw:") && !main_text.contains("^kw:"));
            let again = dir.path().join("again.json");
            let o = run_irw(&[
                mj.as_os_str(),
                "--emit".as_ref(),
                "paddle-json".as_ref(),
                "-o".as_ref(),
                again.as_os_str(),
            ]);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let read = |p: &std::path::Path| parse(&std::fs::read_to_string(p).expect("written"));
            assert!(
                read(&again) == read(&mj),
                "{name}: JSON -> irw -> JSON changed"
            );
        }
    }
}
