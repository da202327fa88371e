//! The e-graph's tests, and the equational rules written in Rust that they share (the same
//! rules `rules/canonicalize.rw` states in the rule language).

mod cse;
mod perf;
mod rules;

use crate::egraph::{saturate, Options};
use crate::ir::{parse_module, print_module, Which};
use crate::SourceFile;

#[test]
fn saturate_example() {
    let text = "{\n    (%0) = \"pd_op.full\" () {dtype:float32,place:Place(cpu),shape:[1],value:2} : () -> tensor<1xf32>\n    (%1) = \"pd_op.full\" () {dtype:float32,place:Place(cpu),shape:[1],value:2} : () -> tensor<1xf32>\n    () = \"builtin.shadow_output\" (%1) {output_name:\"y\"} : (tensor<1xf32>) -> \n}\n";
    let mut m = parse_module(&SourceFile::new("ex.ir", text)).unwrap();
    let report = saturate(&mut m, Which::Main, &[], &Options::default()).unwrap();
    assert_eq!(m.main.num_ops(), 2); // the duplicate `full` merged into the first
    assert!(print_module(&m).contains("\"builtin.shadow_output\" (%0)"));
    assert_eq!(report.elab.erased, 1);
}

#[test]
fn a_rule_written_in_rust_checks() {
    assert!(cast_same_dtype().check().is_ok());
}

use crate::egraph::{
    AttrTest, Build, Cap, EqRule, Expr, Label, OpBuild, OpPattern, TypesBuild, Var,
};
use crate::ir::Attr;

/// `pd_op.cast(%x) {dtype: d} where dtype(%x) == d => %x`
pub fn cast_same_dtype() -> EqRule {
    let (x, d) = (Var(0), Cap(0));
    EqRule::new(
        "cast_same_dtype",
        OpPattern::new("pd_op.cast", [x.into()]).attr("dtype", AttrTest::Capture(d)),
        Build::Var(x),
    )
    .guard(Expr::dtype(x).eq(Expr::cap(d)))
    .subsume(true)
}

/// `pd_op.scale(%x, %s) {bias: 0} where const(%s) == 1 => %x`
pub fn scale_by_one() -> EqRule {
    let (x, s) = (Var(0), Var(1));
    EqRule::new(
        "scale_by_one",
        OpPattern::new("pd_op.scale", [x.into(), s.into()])
            .attr("bias", AttrTest::Eq(Attr::Int(0))),
        Build::Var(x),
    )
    .guard(Expr::konst(s).eq(Expr::int(1)))
}

/// `scale(scale(%x, full{value: a} as F), full{value: b}) (both bias 0) as S
///   => scale(%x, full{..F, value: a * b}) {..S}`
pub fn fold_scales() -> EqRule {
    let x = Var(0);
    let (a, b) = (Cap(0), Cap(1));
    let (f, s) = (Label(0), Label(1));
    let full_a = OpPattern::new("pd_op.full", [])
        .attr("value", AttrTest::Capture(a))
        .label(f);
    let full_b = OpPattern::new("pd_op.full", []).attr("value", AttrTest::Capture(b));
    let inner = OpPattern::new("pd_op.scale", [x.into(), full_a.into()])
        .attr("bias", AttrTest::Eq(Attr::Int(0)));
    let outer = OpPattern::new("pd_op.scale", [inner.into(), full_b.into()])
        .attr("bias", AttrTest::Eq(Attr::Int(0)))
        .label(s);
    let full_ab = OpBuild::new("pd_op.full", [])
        .attrs_from(f)
        .set("value", Expr::cap(a).mul(Expr::cap(b)));
    let rhs = OpBuild::new("pd_op.scale", [x.into(), full_ab.into()])
        .attrs_from(s)
        .types(TypesBuild::SameAs(x));
    EqRule::new("fold_scales", outer, rhs)
}

/// The three canonicalization rules above.
pub fn all_rules() -> Vec<EqRule> {
    vec![cast_same_dtype(), scale_by_one(), fold_scales()]
}
