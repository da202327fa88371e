//! Properties of rewriting with the shipped rule files (`rules/*.rw`):
//!
//! - **The verifier stays happy.** On random MLP training programs (every optimizer and dtype,
//!   with or without all-reduce and op roles, random widths), with random `k_steps` in 1..=8 and
//!   random `avg` / `gradient_sync_after_accumulate`, and with random extra ops that read
//!   random values (an unknown op is effectful: rules must work around it, not break it),
//!   every rule set either refuses with a diagnostic (only gradient merge on a program without
//!   op roles may) or returns a program that verifies and prints back to itself.
//! - **Rewriting is deterministic.** The same input parsed twice and rewritten twice prints the
//!   same bytes (each run's hash maps have their own random seeds).
//! - **Programs without training ops are left alone.** On random programs of unknown ops and
//!   regions (`prop_gen`) no rule applies.

use crate::common::prop_gen;

use irw::verify_module;
use irw::RuleSet;
use irw::SourceFile;
use irw::{parse_module, print_module, Attr, AttrDict, Module, OpSyntax};
use proptest::collection::vec;
use proptest::prelude::*;
use std::path::PathBuf;

tests![
    shipped_rules_keep_the_verifier_happy_and_are_deterministic,
    shipped_rules_leave_programs_without_training_ops_alone,
];

fn rules(file: &str, sets: &[(&str, String)]) -> RuleSet {
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(a, b)| (a.to_string(), b.clone()))
        .collect();
    irw::load_rules(&[PathBuf::from("rules").join(file)], &sets)
        .unwrap_or_else(|d| panic!("{file} does not load:\n{d}"))
}

/// Parses `text` and inserts after op `a % n` (of the top-level ops) an unknown op reading one
/// of its results (`b` picks which), with the anchor's `op_role`.
fn parse_with_observers(text: &str, observers: &[(usize, usize)]) -> Module {
    let mut m = parse_module(&SourceFile::new("gen.ir", text)).expect("generated text parses");
    let name = m.ctx.sym("test.observe");
    for &(a, b) in observers {
        let ops: Vec<_> = m.main.block_ops(m.main.top_block()).collect();
        let with_results: Vec<_> = ops
            .into_iter()
            .filter(|&op| m.main.num_results(op) > 0)
            .collect();
        if with_results.is_empty() {
            continue;
        }
        let anchor = with_results[a % with_results.len()];
        let v = m.main.result(anchor, b % m.main.num_results(anchor));
        let mut d = AttrDict::default();
        if let Some(role) = m.ctx.attrs(m.main.op_attrs(anchor)).get("op_role").cloned() {
            d.set("op_role", role);
        }
        d.set("observer", Attr::Int(a as i64 % 1000));
        let attrs = m.ctx.intern_attrs(d);
        let op = m
            .main
            .create_op(name, attrs, &[Some(v)], &[], OpSyntax::Plain);
        m.main.insert_after(anchor, op);
    }
    verify_module(&m).expect("observers keep the program valid");
    m
}

/// Rewrites `m` with `rs`; `Ok(None)` when the rules refused with a diagnostic.
fn rewrite(mut m: Module, rs: &RuleSet) -> Result<Option<String>, TestCaseError> {
    match irw::rewrite(&mut m, rs, &irw::RewriteOptions::default()) {
        Err(d) => {
            let _ = d.to_string();
            Ok(None)
        }
        Ok(_) => {
            if let Err(e) = verify_module(&m) {
                return Err(TestCaseError::fail(format!(
                    "the rewritten program does not verify: {e}\n--- program ---\n{}",
                    print_module(&m)
                )));
            }
            let text = print_module(&m);
            let again = parse_module(&SourceFile::new("out.ir", text.as_str())).map_err(|d| {
                TestCaseError::fail(format!("the rewritten program does not parse:\n{d}"))
            })?;
            prop_assert_eq!(
                print_module(&again),
                text.clone(),
                "round trip after rewriting"
            );
            Ok(Some(text))
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    fn shipped_rules_keep_the_verifier_happy_and_are_deterministic(
        opts in prop_gen::mlp_options(3),
        k in 1i64..=8,
        avg in any::<bool>(),
        sync in any::<bool>(),
        observers in vec((any::<usize>(), any::<usize>()), 0..4),
    ) {
        let text = irw::generate::mlp(&opts);
        let sets = [
            ("k_steps", k.to_string()),
            ("avg", avg.to_string()),
            ("gradient_sync_after_accumulate", sync.to_string()),
        ];
        let sets_list: [(&str, RuleSet); 3] = [
            ("grad_merge.rw", rules("grad_merge.rw", &sets)),
            ("hoist_reduce.rw", rules("hoist_reduce.rw", &[])),
            ("master_grad.rw", rules("master_grad.rw", &[])),
        ];
        for (name, rs) in &sets_list {
            let first = rewrite(parse_with_observers(&text, &observers), rs)?;
            let second = rewrite(parse_with_observers(&text, &observers), rs)?;
            prop_assert_eq!(&first, &second, "{} is not deterministic", name);
            match &first {
                None => prop_assert!(
                    *name == "grad_merge.rw" && !opts.roles,
                    "{} refused a program ({:?})", name, opts
                ),
                // Gradient merge did its job: every parameter has its buffer.
                Some(out) if *name == "grad_merge.rw" => prop_assert_eq!(
                    out.matches("@GRAD@MERGE\"").count(),
                    text.matches("\"pd_op.sgd_\"").count()
                        + text.matches("\"pd_op.momentum_\"").count()
                        + text.matches("\"pd_op.adam_\"").count()
                        + text.matches("\"pd_op.adamw_\"").count(),
                    "buffers for {:?}", opts
                ),
                Some(_) => {}
            }
        }
    }

    fn shipped_rules_leave_programs_without_training_ops_alone(p in prop_gen::program()) {
        let text = prop_gen::render(&p);
        let sets = [("k_steps", "4".to_string())];
        for rs in [rules("grad_merge.rw", &sets), rules("hoist_reduce.rw", &[]), rules("master_grad.rw", &[])] {
            let m = parse_module(&SourceFile::new("gen.ir", text.as_str())).expect("parses");
            let out = rewrite(m, &rs)?;
            prop_assert_eq!(out.as_deref(), Some(text.as_str()));
        }
    }
}
