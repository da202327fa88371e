//! Names from Paddle JSON (op names, attribute names, keyword-argument names, strings) survive
//! JSON → text → JSON exactly, or are refused when read, with an error at their JSON position:
//! the text is never a different program (`op_role:2,zz` read back as `op_role:2`).

use irw::paddle_json::{read_module_with_hints, write_module, TagHints};
use irw::SourceFile;
use proptest::prelude::*;
use serde_json::{json, Value};

tests![
    plain_names_are_read_and_survive,
    names_survive_json_text_json_or_are_refused_at_their_position,
    json_as_deep_as_irw_writes_is_read,
];

/// Characters that matter to the text form: its delimiters, escapes, controls, non-ASCII.
const CHARS: &[char] = &[
    'a', 'z', 'Q', '0', '9', '_', '.', '@', '-', '/', '(', ')', ' ', ',', ':', '"', '\\', '{', '}',
    '[', ']', '%', '\n', '\t', '\r', 'é', '中', '=', '#', '^',
];

fn name() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(CHARS), 1..7).prop_map(|v| v.into_iter().collect())
}

fn doc(op: &str, key: &str, text: &str, kw: &str) -> Value {
    let tt = json!({"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[],"NCHW",[],0]});
    json!({"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[
        {"#":"region_0","blocks":[{"#":"block_0","args":[],
          "kwargs":[{"key":kw,"#":2,"TT":tt}],
          "ops":[{"#":format!("1.{op}"),"I":[{"%":2}],"O":[{"%":1,"TT":tt}],
                  "A":[{"N":key,"AT":{"#":"0.a_str","D":text}}]}]}]}]}})
}

/// The names as the JSON holds them: op key, attribute name and string, kwarg key (the JSON irw
/// writes has a keyword argument as a `pd_op.data` op named after it, which Paddle loads).
fn names_of(v: &Value) -> (String, String, String, String) {
    let b = &v["program"]["regions"][0]["blocks"][0];
    let ops: Vec<&Value> = b["ops"].as_array().into_iter().flatten().collect();
    let op = ops
        .iter()
        .find(|o| o["#"] != "1.data")
        .copied()
        .unwrap_or(&Value::Null);
    let attrs = |o: &Value| -> Vec<Value> {
        o["A"]
            .as_array()
            .into_iter()
            .flatten()
            .chain(o["OA"].as_array().into_iter().flatten())
            .cloned()
            .collect()
    };
    let attr = attrs(op)
        .into_iter()
        .find(|a| a["AT"]["#"] == "0.a_str")
        .unwrap_or(Value::Null);
    let kw = match b["kwargs"][0]["key"].as_str() {
        Some(k) => k.to_string(),
        None => ops
            .iter()
            .find(|o| o["#"] == "1.data")
            .and_then(|d| attrs(d).into_iter().find(|a| a["N"] == "name"))
            .and_then(|a| a["AT"]["D"].as_str().map(str::to_string))
            .unwrap_or_default(),
    };
    (
        op["#"].as_str().unwrap_or("").to_string(),
        attr["N"].as_str().unwrap_or("").to_string(),
        attr["AT"]["D"].as_str().unwrap_or("").to_string(),
        kw,
    )
}

/// Ok(true): read and survived; Ok(false): refused at its position.
fn check(op: &str, key: &str, text: &str, kw: &str) -> Result<bool, TestCaseError> {
    let input = doc(op, key, text, kw);
    let src = SourceFile::new("p.json", input.to_string());
    let mut hints = TagHints::default();
    let m = match read_module_with_hints(&src, &mut hints) {
        Ok(m) => m,
        Err(d) => {
            let msg = d.to_string();
            // Refused: at a position in the file, naming what.
            prop_assert!(msg.starts_with("p.json:1:"), "no position: {msg}");
            prop_assert!(msg.contains("= note: at program"), "no JSON path: {msg}");
            // Refused only for a name the text cannot hold.
            let bare = |n: &str, extra: &str| {
                n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_.@-/".contains(c) || extra.contains(c))
            };
            let op_ok = op.chars().all(|c| !c.is_control() && c != '"' && c != '\\');
            // A key's parentheses must pair up: the text's bracket check counts them.
            let paired = key.chars().try_fold(0usize, |d, c| match c {
                '(' => Some(d + 1),
                ')' => d.checked_sub(1),
                _ => Some(d),
            }) == Some(0);
            prop_assert!(
                !(op_ok && bare(key, "()") && paired && bare(kw, "")),
                "printable names refused: {msg}"
            );
            return Ok(false);
        }
    };
    let printed = irw::print_module(&m);
    let back = irw::parse_module(&SourceFile::new("p.ir", printed.clone())).map_err(|d| {
        TestCaseError::fail(format!(
            "the text irw printed does not parse:\n{d}\n{printed}"
        ))
    })?;
    // The op is unknown to the dialect: its attributes' tags are the ones the input JSON gave
    // (what `--emit paddle-json` of a JSON input uses), carried across the text by name.
    let out = write_module(&back, &hints)
        .map_err(|d| TestCaseError::fail(format!("cannot write JSON: {d}")))?;
    let again: Value = serde_json::from_str(&out.main).unwrap();
    prop_assert_eq!(
        names_of(&again),
        (
            format!("1.{op}"),
            key.to_string(),
            text.to_string(),
            kw.to_string()
        ),
        "text:\n{}",
        printed
    );
    Ok(true)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    fn names_survive_json_text_json_or_are_refused_at_their_position(
        op in name(), key in name(), text in name(), kw in name()
    ) {
        check(&op, &key, &text, &kw)?;
    }
}

/// The document of the property, with names the text can hold, is read and survives: the
/// property above is not passing by refusing everything.
fn plain_names_are_read_and_survive() {
    assert!(check("my_op", "my.key@GRAD", "any \"text\" \\ at\nall, é", "kw_0").unwrap());
}

/// 20 nested regions (JSON nested ~130 deep) are read: irw writes such files. So is the JSON of
/// the deepest program the text form holds; one region deeper is refused where it is read,
/// not printed as text irw cannot parse.
fn json_as_deep_as_irw_writes_is_read() {
    // An unknown op with one region per level: what the reader and writer see of any region op.
    fn nest(level: usize) -> Value {
        let tt = json!({"#":"0.t_dtensor","D":[{"#":"0.t_f32"},[],"NCHW",[],0]});
        if level == 0 {
            json!([])
        } else {
            json!([{"#":"1.my_region_op","I":[],"O":[{"%":level,"TT":tt}],"A":[],
                    "regions":[{"#":"region_x","blocks":[{"#":"block_x","args":[],"ops":nest(level - 1)}]}]}])
        }
    }
    let doc = |levels: usize| {
        let d = json!({"base_code":{"magic":"pir","trainable":true,"version":4},"program":{"regions":[
            {"#":"region_0","blocks":[{"#":"block_0","args":[],"ops":nest(levels)}]}]}});
        SourceFile::new("deep.json", d.to_string())
    };
    let deepest = irw::MAX_REGION_DEPTH - 1;
    for levels in [20, deepest] {
        let m =
            irw::paddle_json::read_module(&doc(levels)).unwrap_or_else(|d| panic!("{levels}: {d}"));
        let text = irw::print_module(&m);
        irw::parse_module(&SourceFile::new("deep.ir", text))
            .unwrap_or_else(|d| panic!("{levels}: irw cannot parse the text it printed: {d}"));
        let out = write_module(&m, &TagHints::default()).unwrap_or_else(|d| panic!("{d}"));
        let again = SourceFile::new("again.json", out.main);
        irw::paddle_json::read_module(&again)
            .unwrap_or_else(|d| panic!("{levels}: irw cannot read what it wrote: {d}"));
    }
    let err = match irw::paddle_json::read_module(&doc(deepest + 1)) {
        Ok(_) => panic!("{} nested regions were read", deepest + 1),
        Err(d) => d.to_string(),
    };
    assert!(
        err.starts_with("deep.json:1:")
            && err.contains(&format!(
                "regions nested deeper than {} levels",
                irw::MAX_REGION_DEPTH
            )),
        "{err}"
    );
}
