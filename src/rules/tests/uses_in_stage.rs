//! `uses(%v in STAGE)`: the number of uses of a value by ops of one stage. How it parses, what
//! the engine counts, and that `%v in STAGE` outside `uses` is still a stage test. (Its resolve
//! errors are bad files under `tests/golden/rules/errors/uses_in_*.rw`.)

use crate::dialect::verify_module;
use crate::ir::{parse_module, print_module};
use crate::rules::ast::{BinOp, Clause, Expr, Item, Rule, Var};
use crate::rules::parse::parse_file;
use crate::SourceFile;

/// `%0` is used once in forward (the relu the rule matches), three times in backward (a relu
/// and an add that reads it twice), once in optimize, and once by an op without a stage.
const PROGRAM: &str = r#"{
    (%0) = "pd_op.data" () {dtype:float32,name:"x",op_role:0,place:Place(undefined:0),shape:[4],stop_gradient:[true]} : () -> tensor<4xf32>
    (%1) = "pd_op.relu" (%0) {op_role:0,stop_gradient:[false]} : (tensor<4xf32>) -> tensor<4xf32>
    (%2) = "pd_op.relu" (%0) {op_role:1,stop_gradient:[false]} : (tensor<4xf32>) -> tensor<4xf32>
    (%3) = "pd_op.add" (%0, %0) {op_role:1,stop_gradient:[false]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    (%4) = "pd_op.relu" (%0) {op_role:2,stop_gradient:[false]} : (tensor<4xf32>) -> tensor<4xf32>
    (%5) = "pd_op.relu" (%0) {stop_gradient:[false]} : (tensor<4xf32>) -> tensor<4xf32>
}
"#;

fn rewrite(rules: &str) -> String {
    let rs = crate::rules::load_str("t.rw", rules, std::path::Path::new("rules"), &[])
        .unwrap_or_else(|d| panic!("{d}"));
    let mut m = parse_module(&SourceFile::new("p.ir", PROGRAM)).unwrap_or_else(|d| panic!("{d}"));
    crate::rewrite::apply(&mut m, &rs, &Default::default()).unwrap_or_else(|d| panic!("{d}"));
    verify_module(&m).unwrap_or_else(|e| panic!("{e}"));
    print_module(&m)
}

#[test]
fn parses_as_a_call_on_a_stage_test() {
    let text = "// Test rule.\nrule r { match %c = pd_op.relu(%x); where uses(%x in backward) == 3; erase %c; }\n";
    let f = parse_file(&SourceFile::new("t.rw", text)).unwrap_or_else(|d| panic!("{d}"));
    let Item::Rule(Rule::Structural(r)) = &f.items[0] else {
        panic!("a structural rule: {f:?}")
    };
    let Clause::Where(Expr::Binary {
        op: BinOp::Eq, l, ..
    }) = &r.clauses[1]
    else {
        panic!("a comparison: {:?}", r.clauses[1])
    };
    let Expr::Call { func, args, .. } = l.as_ref() else {
        panic!("a call: {l:?}")
    };
    assert_eq!(func.name, "uses");
    let [Expr::Binary {
        op: BinOp::In,
        l,
        r,
        ..
    }] = args.as_slice()
    else {
        panic!("one `in` argument: {args:?}")
    };
    assert!(matches!(l.as_ref(), Expr::Var(Var::Value(v)) if v.name.name == "%x"));
    assert!(matches!(r.as_ref(), Expr::Var(Var::Bare(i)) if i.name == "backward"));
}

#[test]
fn counts_the_uses_by_ops_of_one_stage() {
    let out = rewrite(
        "// Records the counts on the forward relu.\n\
         rule count {\n\
             match %c = pd_op.relu(%x) in forward;\n\
             set %c {fwd: uses(%x in forward), bwd: uses(%x in backward),\n\
                     opt: uses(%x in optimize), all: uses(%x)};\n\
         }\n",
    );
    let line = out
        .lines()
        .find(|l| l.contains("all:"))
        .unwrap_or_else(|| panic!("{out}"));
    for want in ["all:6", "bwd:3", "fwd:1", "opt:1"] {
        assert!(line.contains(want), "{want} in {line}");
    }
}

#[test]
fn guards_on_the_count() {
    let rule = |guard: &str| {
        format!(
            "// Marks the forward relu when the guard holds.\n\
             rule mark {{ match %c = pd_op.relu(%x) in forward; where {guard}; set %c {{marked: true}}; }}\n"
        )
    };
    assert!(rewrite(&rule("uses(%x in backward) == 3")).contains("marked:true"));
    assert!(!rewrite(&rule("uses(%x in backward) == 1")).contains("marked:true"));
    assert!(rewrite(&rule("uses(%x in optimize) == 1 and uses(%x) == 6")).contains("marked:true"));
    // Outside `uses`, `%v in STAGE` still tests the stage of %v's own op: the data op is forward.
    assert!(rewrite(&rule("%x in forward and not (%x in backward)")).contains("marked:true"));
}

#[test]
fn is_refused_where_there_is_no_program() {
    let bad = "param n: int = 1 where uses(n in backward) == 1;\n";
    let e = crate::rules::load_str("t.rw", bad, std::path::Path::new("rules"), &[])
        .expect_err("refused");
    let shown = e.to_string();
    assert!(
        shown.contains("t.rw:1:24: error: `uses` asks the program; it cannot be used here"),
        "{shown}"
    );
}
