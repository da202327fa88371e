//! Gradient merge computes the large-batch step: for random small MLP training programs
//! (1 to 3 layers of random widths, every optimizer, data parallel or not, random learning rate
//! and names), random `k_steps` in 1..=8, random `avg` and `gradient_sync_after_accumulate`,
//! `rules/grad_merge.rw` gives a program that `irw check` accepts: k micro-steps of it (on 2
//! simulated ranks when the program has collectives) equal one step of the original on the
//! k-times-larger batch, for every gradient, parameter, optimizer state and buffer, within the
//! check's default tolerances. Rewriting and checking run through the library, not the binary.
//!
//! - **avg = false** sums the k micro-batch mean gradients: the gradient of the loss summed over
//!   the micro-batches, k times the mean gradient of the large batch. `irw check` is told
//!   (`CheckOptions::avg`), reads the loss's reduction off the original's micro-batch gradients
//!   and checks that relation.
//! - **Zero gradients.** A tiny hidden layer can be dead on a batch (relu of one unit): its
//!   gradients are zero in both programs and the check refuses to judge them instead of passing.
//!   Such a case is checked again on other seeds (other inputs and initial weights) until the
//!   check judges it; it must never FAIL.
//! - **bf16 programs** are checked like f32 ones, at the check's bf16 tolerance. Parameters and
//!   optimizer state are compared with the original optimizer applied to the merged gradients
//!   (src/exec/check.rs), so Adam's first step, about lr·sign(g), does not turn a last-bit
//!   difference in a near-zero gradient into a parameter error of lr; before that, the check
//!   failed in 1 to 21 of 84 bf16 configurations per optimizer
//!   ([`bf16_check_failures_are_rounding_of_the_comparison`] now counts 0 of 84 for each).
//! - **Cancellation across micro-batches.** Before the check's gradient tolerance also scaled
//!   with the largest single-micro-batch gradient, runs restricted to bf16 programs
//!   (`PROP_CHECK_BF16=1`) failed about once in 2 000 cases (6 times in about 11 500, over 14
//!   seeds), always at a gradient of a narrow layer: a bias gradient whose micro-batch parts
//!   cancel, so each part, rounded to bf16 before it is added, is far larger than the sum.
//!   Since then 14 seeds × 1 000 bf16-only
//!   cases and 4 seeds × 3 000 mixed cases ran clean, and a 1/(k + 0.1) scale still fails the
//!   first case. An f32 reference was tried first and is not the cure: it failed within 6 to 63
//!   bf16 cases per seed, because both bf16 programs round the forward pass the same way (an MSE
//!   residual y − t that cancels in bf16 is off by tens of percent from f32) and agree with each
//!   other far better than with f32.

use crate::common::prop_gen;

use irw::executor::{check, CheckOptions, Outcome};
use irw::generate::{Dtype, MlpOptions};
use irw::verify_module;
use irw::SourceFile;
use irw::{parse_module, print_module, Module};
use proptest::prelude::*;

tests![
    grad_merge_passes_irw_check,
    bf16_gradient_merge_is_bit_identical_to_paddles_pass,
    #[ignore = "a survey (1 s in release, 17 s in debug); see the module docs"]
    bf16_check_failures_are_rounding_of_the_comparison,
];

fn apply(m: &mut Module, rules: irw::RuleSet) -> Result<(), TestCaseError> {
    irw::rewrite(m, &rules, &Default::default())
        .map_err(|d| TestCaseError::fail(format!("rewrite failed:\n{d}")))?;
    verify_module(m).map_err(|e| TestCaseError::fail(format!("does not verify: {e}")))?;
    Ok(())
}

/// A program, k_steps, avg, gradient_sync_after_accumulate and a seed. A quarter of the programs
/// are bf16, every one with `PROP_CHECK_BF16=1`.
fn case() -> impl Strategy<Value = (MlpOptions, usize, bool, bool, u64)> {
    (
        prop_gen::mlp_options(3),
        if std::env::var_os("PROP_CHECK_BF16").is_some() {
            Just(Dtype::Bf16).boxed()
        } else {
            prop_oneof![3 => Just(Dtype::F32), 1 => Just(Dtype::Bf16)].boxed()
        },
        1usize..=8,
        any::<bool>(),
        any::<bool>(),
        0u64..1 << 16,
    )
        .prop_map(|(mut opts, dtype, k, avg, sync, seed)| {
            opts.roles = true;
            opts.dtype = dtype;
            opts.loss_scaling &= dtype == Dtype::F32;
            (opts, k, avg, sync, seed)
        })
}

/// A fixed seed and 256 cases, so CI runs the same cases every time; `PROPTEST_RNG_SEED` and
/// `PROPTEST_CASES` explore others (`PROPTEST_RNG_SEED=7 PROPTEST_CASES=5000 cargo test
/// --release -- prop_check`, with `PROP_CHECK_BF16=1` for bf16 programs only).
fn config() -> ProptestConfig {
    let env = ProptestConfig::default();
    ProptestConfig {
        cases: if std::env::var_os("PROPTEST_CASES").is_some() {
            env.cases
        } else {
            256
        },
        rng_seed: if std::env::var_os("PROPTEST_RNG_SEED").is_some() {
            env.rng_seed
        } else {
            proptest::test_runner::RngSeed::Fixed(0x1a2b_3c4d)
        },
        ..env
    }
}

proptest! {
    #![proptest_config(config())]

    fn grad_merge_passes_irw_check((opts, k, avg, sync, seed) in case()) {
        let text = irw::generate::mlp(&opts);
        let original =
            parse_module(&SourceFile::new("gen.ir", text.as_str())).expect("generated text parses");
        let mut rewritten = original.clone();
        let sets = vec![
            ("k_steps".to_string(), k.to_string()),
            ("avg".to_string(), avg.to_string()),
            ("gradient_sync_after_accumulate".to_string(), sync.to_string()),
        ];
        let rules = irw::load_rules(&["rules/grad_merge.rw".into()], &sets)
            .unwrap_or_else(|d| panic!("{d}"));
        apply(&mut rewritten, rules)?;
        let mut tries = 0u64;
        let report = loop {
            let report = check(
                &original,
                &rewritten,
                &CheckOptions { k_steps: k, seed: seed + tries, avg, ..Default::default() },
            )
            .map_err(|d| TestCaseError::fail(format!("check could not run:\n{d}")))?;
            prop_assert!(
                report.outcome() != Outcome::Fail,
                "{:?} k_steps={} avg={} sync={} seed={}:\n{}", opts, k, avg, sync, seed + tries, report
            );
            tries += 1;
            if report.outcome() == Outcome::Pass || tries == 16 {
                break report;
            }
        };
        prop_assert!(report.passed(), "{:?} k_steps={} avg={} sync={}: not judged on 16 seeds from {}:\n{}", opts, k, avg, sync, seed, report);
        // Data-parallel f32 programs communicate once per k steps: no gradient collective is left
        // in the backward stage. (In bf16 programs the master-grad cast between the collective
        // and the accumulation keeps it there.)
        if opts.allreduce && sync && opts.dtype == Dtype::F32 {
            let out = print_module(&rewritten);
            prop_assert!(
                !out.lines().any(|l| l.contains("= \"pd_op.c_allreduce_sum\" (") && l.contains("op_role:1,")),
                "a collective stayed in the backward stage:\n{}", out
            );
        }
        // The check compared what it must: every optimizer's gradient, and the buffers.
        let params = 2 * opts.layers.get();
        prop_assert_eq!(report.rows.iter().filter(|r| r.kind == "grad").count(), params);
        prop_assert_eq!(report.rows.iter().filter(|r| r.kind == "buffer").count(), params);
    }
}

const FIXTURES: &str = "../shared/fixtures/paddle";

fn fixture(main: &str, startup: &str) -> Module {
    let read = |f: &str| {
        let p = format!("{FIXTURES}/{f}");
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"));
        SourceFile::new(p, text)
    };
    let mut m = parse_module(&read(main)).unwrap_or_else(|d| panic!("{d}"));
    irw::parse_startup_into(&mut m, &read(startup)).unwrap_or_else(|d| panic!("{d}"));
    m
}

/// The module docs' claim that irw's bf16 gradient merge computes what Paddle's pass does: on
/// Paddle's bf16 fixture (master weights and master-grad casts, k_steps = 4), irw's rewrite of
/// `master_grad_before.ir` and Paddle's `master_grad_after.ir` end one merged step (4 micro-steps)
/// with bit-identical persistables: parameters, master weights, learning rate and buffers.
fn bf16_gradient_merge_is_bit_identical_to_paddles_pass() {
    let mut ours = fixture("master_grad_before.ir", "master_grad_startup_before.ir");
    let rules = irw::load_rules(
        &["rules/grad_merge.rw".into()],
        &[("k_steps".to_string(), "4".to_string())],
    )
    .unwrap_or_else(|d| panic!("{d}"));
    irw::rewrite(&mut ours, &rules, &Default::default()).unwrap_or_else(|d| panic!("{d}"));
    let paddle = fixture("master_grad_after.ir", "master_grad_startup_after.ir");
    for seed in 0..4 {
        let opts = irw::executor::RunOptions {
            k_steps: 4,
            ranks: 1,
            steps: 1,
            micro_batch: None,
            seed,
            feed: None,
            ..Default::default()
        };
        let a = irw::executor::run(&ours, &opts).unwrap_or_else(|d| panic!("{d}"));
        let b = irw::executor::run(&paddle, &opts).unwrap_or_else(|d| panic!("{d}"));
        let names: Vec<&str> = b.scopes[0].names().collect();
        assert!(names.len() >= 12, "{names:?}");
        assert!(names.iter().any(|n| n.ends_with("@GRAD@MERGE")));
        for name in names {
            assert_eq!(
                a.scopes[0].get(name),
                b.scopes[0].get(name),
                "seed {seed}: {name}"
            );
        }
        assert_eq!(a.scopes[0].len(), b.scopes[0].len());
    }
}

/// How bf16 programs fare under `irw check` (module docs), as a survey over every optimizer, with and
/// without all-reduce, layers 1..=3, k 2..=8 and 4 seeds: where `irw check` fails, the full-batch
/// gradients of the original and the merged gradients of the rewrite are both within bf16
/// tolerance of an f32 run of the same program from the same bf16 values. Prints how often the
/// check fails and which of the two is closer to f32. Slow in debug builds: run with
/// `cargo test --release -- prop_check --ignored`.
fn bf16_check_failures_are_rounding_of_the_comparison() {
    use indexmap::IndexMap;
    use irw::executor::Tensor;
    use irw::executor::{init_ranks, micro_feeds, step_batch};
    use irw::executor::{Interp, Stage};
    use irw::generate::Optimizer;

    let parse = |o: &MlpOptions| {
        parse_module(&SourceFile::new("gen.ir", irw::generate::mlp(o).as_str())).expect("parses")
    };
    // Within the check's bf16 tolerance of the f32 oracle.
    let within = |g: &Tensor, oracle: &Tensor| {
        let (g, o) = (g.to_f64_vec(), oracle.to_f64_vec());
        let max = o.iter().fold(0f64, |m, v| m.max(v.abs()));
        g.iter()
            .zip(&o)
            .all(|(a, b)| (a - b).abs() <= 1e-2 * b.abs() + 1e-2 * max)
    };
    let dist = |g: &Tensor, oracle: &Tensor| {
        let (g, o) = (g.to_f64_vec(), oracle.to_f64_vec());
        g.iter().zip(&o).map(|(a, b)| (a - b).abs()).sum::<f64>()
    };
    for optimizer in Optimizer::ALL {
        for allreduce in [false, true] {
            let (mut cases, mut failed, mut merged_closer) = (0, 0, 0);
            for layers in 1..=3 {
                let opts = MlpOptions {
                    layers: std::num::NonZeroUsize::new(layers).unwrap(),
                    optimizer,
                    dtype: Dtype::Bf16,
                    allreduce,
                    ..Default::default()
                };
                let original = parse(&opts);
                let m32 = parse(&MlpOptions {
                    dtype: Dtype::F32,
                    ..opts.clone()
                });
                for k in 2..=8usize {
                    let mut rewritten = original.clone();
                    let rules = irw::load_rules(
                        &["rules/grad_merge.rw".into()],
                        &[("k_steps".to_string(), k.to_string())],
                    )
                    .unwrap_or_else(|d| panic!("{d}"));
                    irw::rewrite(&mut rewritten, &rules, &Default::default())
                        .unwrap_or_else(|d| panic!("{d}"));
                    for seed in 0..4 {
                        cases += 1;
                        let opt = CheckOptions {
                            k_steps: k,
                            seed,
                            ..Default::default()
                        };
                        let report = check(&original, &rewritten, &opt).expect("runs");
                        // The check's own runs, repeated to read the gradients.
                        let (n, b) = (report.ranks, report.micro_batch);
                        let none = IndexMap::new();
                        let mut full = init_ranks(&original, "o", seed, &none, n).unwrap();
                        let mut merged = init_ranks(&rewritten, "r", seed, &none, n).unwrap();
                        let init = full[0].scope.clone();
                        for r in merged.iter_mut() {
                            for (name, t) in init.iter() {
                                r.scope.set(name, t.clone());
                            }
                        }
                        let batch = step_batch(&original, None, k * n * b, seed).unwrap();
                        Interp::new(&original.ctx, &original.main, "o", seed)
                            .unwrap()
                            .run(
                                &mut full,
                                &micro_feeds(&batch, n, 1, k * b, 0).unwrap(),
                                Stage::Full,
                            )
                            .unwrap();
                        let mut it =
                            Interp::new(&rewritten.ctx, &rewritten.main, "r", seed).unwrap();
                        for i in 0..k {
                            let stage = if i + 1 == k {
                                Stage::Full
                            } else {
                                Stage::NoOptimize
                            };
                            it.run(
                                &mut merged,
                                &micro_feeds(&batch, n, k, b, i).unwrap(),
                                stage,
                            )
                            .unwrap();
                        }
                        // The f32 oracle: the same program in f32 from the same bf16 values.
                        let mut oracle = init_ranks(&m32, "f", seed, &none, n).unwrap();
                        for r in oracle.iter_mut() {
                            let names: Vec<String> = r.scope.names().map(str::to_string).collect();
                            for name in names {
                                if let Some(t) = init.get(&name) {
                                    r.scope
                                        .set(&name, Tensor::f32(t.shape(), t.to_f32().to_vec()));
                                }
                            }
                        }
                        let batch32: IndexMap<String, Tensor> = batch
                            .iter()
                            .map(|(k, t)| (k.clone(), Tensor::f32(t.shape(), t.to_f32().to_vec())))
                            .collect();
                        Interp::new(&m32.ctx, &m32.main, "f", seed)
                            .unwrap()
                            .run(
                                &mut oracle,
                                &micro_feeds(&batch32, n, 1, k * b, 0).unwrap(),
                                Stage::Full,
                            )
                            .unwrap();
                        let (mut d_full, mut d_merged) = (0.0, 0.0);
                        for (name, want) in &oracle[0].observed.optimizer_grads {
                            let f = &full[0].observed.optimizer_grads[name];
                            let m = &merged[0].observed.optimizer_grads[name];
                            d_full += dist(f, want);
                            d_merged += dist(m, want);
                            if !report.passed() {
                                assert!(
                                    within(f, want),
                                    "{opts:?} k={k} seed={seed}: {name} full-batch"
                                );
                                assert!(
                                    within(m, want),
                                    "{opts:?} k={k} seed={seed}: {name} merged"
                                );
                            }
                        }
                        merged_closer += usize::from(d_merged <= d_full);
                        failed += usize::from(!report.passed());
                    }
                }
            }
            println!(
                "{optimizer:?} bf16 allreduce={allreduce}: irw check fails {failed} of {cases}; \
                 the merged gradients are the closer to f32 in {merged_closer} of {cases}"
            );
        }
    }
}
