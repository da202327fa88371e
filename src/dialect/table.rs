//! The op table of the Paddle dialect: the data files of [`super::data`], parsed once.
//!
//! To teach irw a new op, add a line to `data/dialect/irw.ops` (or regenerate
//! `data/dialect/pd_op.ops` from a newer Paddle with `tools/dialect/derive.py`); nothing else
//! needs to change for the parser, verifier, rule engine or JSON writer. (The executor
//! additionally needs a kernel.)

use super::data::{load, SOURCES};
use super::OpSpec;
use std::sync::OnceLock;

/// Every op of the dialect, in name order.
pub fn ops() -> &'static [OpSpec] {
    static OPS: OnceLock<Vec<OpSpec>> = OnceLock::new();
    OPS.get_or_init(|| match load(SOURCES) {
        Ok(ops) => ops,
        // The data is compiled in; the unit test below fails on any error first.
        Err(e) => panic!("irw's dialect data is malformed: {e}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::{Effect, ResultRule};

    #[test]
    fn data_loads_and_names_are_unique() {
        let ops = load(SOURCES).expect("dialect data parses");
        assert!(ops.len() > 1500, "{} ops", ops.len());
        for w in ops.windows(2) {
            assert!(w[0].name < w[1].name, "duplicate or unsorted {}", w[1].name);
        }
        for s in &ops {
            for &(r, o) in s.aliases {
                assert!(
                    (r as usize) < s.results.len() && (o as usize) < s.operands.len(),
                    "{}",
                    s.name
                );
            }
        }
    }

    #[test]
    fn facts_the_engines_rely_on() {
        let d = crate::dialect::Dialect::get();
        let sgd = d.spec("pd_op.sgd_").expect("sgd_");
        assert_eq!(sgd.effect, Effect::Optimizer);
        assert_eq!(sgd.aliases, &[(0, 0), (1, 3)]);
        assert_eq!(
            d.spec("pd_op.adam_").map(|s| s.aliases),
            Some(&[(0, 0), (1, 3), (2, 4), (3, 5), (4, 6), (5, 7), (6, 8)][..])
        );
        assert_eq!(
            d.spec("pd_op.assign_out_").map(|s| (s.aliases, s.effect)),
            Some((&[(0u8, 1u8)][..], Effect::InPlace))
        );
        let rule = |n: &str| d.spec(n).map(|s| s.result_rule);
        assert_eq!(rule("pd_op.relu_grad"), Some(ResultRule::SameAs(1)));
        assert_eq!(rule("pd_op.gelu_grad"), Some(ResultRule::SameAs(0)));
        assert_eq!(rule("pd_op.cast"), Some(ResultRule::CastOf(0)));
        assert_eq!(rule("pd_op.full"), Some(ResultRule::FromShapeDtypeAttrs));
        assert_eq!(rule("pd_op.full_int_array"), Some(ResultRule::IntArray));
        assert_eq!(rule("pd_op.add_"), Some(ResultRule::Broadcast(0, 1)));
        assert_eq!(rule("pd_op.matmul"), Some(ResultRule::Explicit));
        assert_eq!(
            rule("pd_op.c_allreduce_sum"),
            Some(ResultRule::ReducedOf(0))
        );
        assert_eq!(d.effect("pd_op.uniform"), Effect::Random);
        assert_eq!(d.effect("builtin.shadow_output"), Effect::Io);
        assert_eq!(d.effect("pd_op.while"), Effect::Control);
        assert_eq!(d.effect("pd_op.relu"), Effect::Pure);
    }

    #[test]
    fn count_conventions() {
        assert!(OpSpec::count_fits(&["x", "?xshape"], 1));
        assert!(OpSpec::count_fits(&["x", "?xshape"], 2));
        assert!(!OpSpec::count_fits(&["x", "?xshape"], 3));
        assert!(OpSpec::count_fits(&["cond", "*inputs"], 1));
        assert!(OpSpec::count_fits(&["cond", "*inputs"], 5));
        assert!(!OpSpec::count_fits(&["cond", "*inputs"], 0));
    }

    #[test]
    fn given_attributes_have_no_default_value() {
        let text = "pd_op.c(x) -> (out) {kind: i32 = 0, ring: i32 = 0} given(kind)\n";
        let ops = load(&[("t.ops", text)]).expect("parses");
        let value = |n: &str| {
            ops[0]
                .attrs
                .iter()
                .find(|a| a.name == n)
                .map(|a| a.default_value())
        };
        assert_eq!(value("kind"), Some(None));
        assert!(value("ring").is_some_and(|v| v.is_some()));
        let bad = load(&[("t.ops", "pd_op.c(x) -> (out) {ring: i32 = 0} given(kind)\n")]);
        assert!(bad.is_err_and(|e| e.contains("given(kind) names no attribute")));
        let ranked = load(&[("t.ops", "pd_op.s(x, v) -> (out) ranks(x=1..6)\n")]).expect("parses");
        assert_eq!(ranked[0].ranks, &[(0, 1, 6)]);
        for bad in ["ranks(y=1..6)", "ranks(x=6..1)", "ranks(x=1-6)"] {
            let text = format!("pd_op.s(x, v) -> (out) {bad}\n");
            let e = load(&[("t.ops", Box::leak(text.into_boxed_str()))]);
            assert!(
                e.is_err_and(|e| e.contains("is not OPERAND=LOW..HIGH")),
                "{bad}"
            );
        }
    }
}
