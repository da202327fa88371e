//! `irw check` cannot be fooled: for random generated programs (`irw gen mlp` variants, every
//! optimizer, f32), merged by `rules/grad_merge.rw` and then corrupted at one optimizer's
//! gradient by a rule written for this test (scaled by 1.01, zeroed, or pushed to infinity),
//! on inputs scaled by 1e-3 up to 1e30, the verdict is FAIL or a refusal (NOT JUDGED), never
//! PASS. The two findings behind it are goldens of their own (tests/golden/check/): a bias
//! stepping on zeros beside large weight gradients, and inputs of 1e30 with a rewrite that fed
//! every optimizer zeros.

use crate::common::prop_gen;

use irw::executor::step_batch;
use irw::executor::Feed;
use irw::executor::Tensor;
use irw::executor::{check, CheckOptions, Outcome};
use irw::generate::Dtype;
use irw::parse_module;
use irw::SourceFile;
use proptest::prelude::*;

tests![a_corrupted_gradient_never_passes];

/// A rule that replaces the gradient of parameter `param`'s optimizer with `scale(g, c)`,
/// twice for `times` = 2 (3e38·3e38 overflows every non-zero element to infinity).
fn corruption(param: &str, c: f64, times: usize) -> String {
    let mut g = "%g".to_string();
    for _ in 0..times {
        g = format!(
            "pd_op.scale({g}, pd_op.full() {{dtype: float32, op_role: optimize, place: Place(cpu), shape: [1], stop_gradient: [true], value: {c:.2}}}) {{bias: 0.0, bias_after_scale: false, op_role: optimize, stop_gradient: [true]}}"
        );
    }
    format!(
        "phase corrupt {{
    // Unsound on purpose: one optimizer reads a corrupted gradient.
    rule corrupt_one_gradient {{
        match %o = optimizer(param: %p, grad: %g) in optimize;
        where name(%p) == \"{param}\";
        in %o: grad := {g};
    }}
}}
"
    )
}

fn a_corrupted_gradient_never_passes() {
    let config = ProptestConfig {
        cases: 96,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x07e4_d1c7),
        ..ProptestConfig::default()
    };
    let cases = (
        prop_gen::mlp_options(3),
        2usize..=4,
        0usize..3,
        0usize..6,
        prop::sample::select(vec![-3i32, 0, 2, 5, 15, 30]),
        0u64..1 << 16,
    );
    proptest::test_runner::TestRunner::new(config)
        .run(&cases, |(mut opts, k, how, which, exp, seed)| {
            opts.roles = true;
            opts.dtype = Dtype::F32;
            opts.allreduce = false;
            let original = parse_module(&SourceFile::new("gen.ir", irw::generate::mlp(&opts)))
                .expect("generated text parses");
            let params: Vec<String> = (0..opts.layers.get())
                .flat_map(|l| {
                    let i = opts.first_layer_index + l;
                    [format!("linear_{i}.w_0"), format!("linear_{i}.b_0")]
                })
                .collect();
            let param = &params[which % params.len()];
            let (c, times) = match how {
                0 => (1.01, 1),
                1 => (0.0, 1),
                _ => (3e38, 2),
            };
            let dir = tempfile::tempdir().unwrap();
            let bad = dir.path().join("corrupt.rw");
            std::fs::write(&bad, corruption(param, c, times)).unwrap();
            let rules = irw::load_rules(
                &["rules/grad_merge.rw".into(), bad],
                &[("k_steps".to_string(), k.to_string())],
            )
            .unwrap_or_else(|d| panic!("{d}"));
            let mut rewritten = original.clone();
            let stats = irw::rewrite(&mut rewritten, &rules, &Default::default())
                .unwrap_or_else(|d| panic!("{d}"));
            // The corruption is the second rule file given.
            prop_assert!(stats.applications_of(1, "corrupt_one_gradient") == 1);
            // The generated inputs, scaled.
            let scale = 10f32.powi(exp);
            let inputs = step_batch(&original, None, 2 * k, seed)
                .unwrap()
                .into_iter()
                .map(|(name, t)| {
                    let t = match t.as_f32() {
                        Some(v) => Tensor::f32(t.shape(), v.iter().map(|x| x * scale).collect()),
                        None => t,
                    };
                    (name, t)
                })
                .collect();
            let feed = Feed {
                inputs,
                has_inputs: true,
                ..Default::default()
            };
            let report = check(
                &original,
                &rewritten,
                &CheckOptions {
                    k_steps: k,
                    seed,
                    feed: Some(feed),
                    ..Default::default()
                },
            )
            .map_err(|d| TestCaseError::fail(format!("check could not run:\n{d}")))?;
            prop_assert!(
                report.outcome() != Outcome::Pass,
                "{opts:?} k={k} corruption of {param} by {c}^{times}, inputs ×1e{exp}, seed {seed}: PASS\n{report}"
            );
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}
