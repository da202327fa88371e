//! Gradient merge, reduce hoisting and master-grad rules on Paddle's own dumps
//! (`/work/shared/fixtures/paddle`, mirrored by `IRW_FIXTURES`), compared with what Paddle 3.3.1's
//! `auto_parallel_gradient_merge_pass` produced.
//!
//! Deliberate differences from Paddle, checked below and explained:
//! - keyword arguments are listed in the order the buffers are created (optimizer order);
//!   Paddle's order comes from a hash map, so only the set is compared;
//! - data-parallel collectives run once per k steps on the buffer, at the start of the optimize
//!   stage (Paddle 3.3.1 leaves them in every micro-step: its hoisting is an empty stub);
//! - each buffer is zeroed through the `scale_` result the optimizer read, not through its
//!   keyword argument: Paddle's form races in its own multi-threaded executor;
//! - master-grad casts run in the backward stage (with an op_role, which Paddle omits) and no
//!   f32 -> f32 cast is left on the buffers (Paddle leaves one per buffer).
use irw::SourceFile;
use irw::{parse_module, parse_startup_into, print_module, Module};
use irw::{rewrite as apply, RewriteOptions as Options};
use std::path::{Path, PathBuf};

tests![
    sgd_matches_paddle,
    adam_matches_paddle,
    rewriting_is_deterministic,
    collectives_are_hoisted_to_the_optimize_stage_and_read_the_buffers,
    bf16_collectives_are_hoisted_and_reduce_the_f32_buffer,
    dp_scale_after_a_sum_is_hoisted_with_it,
    a_rewrite_that_breaks_the_program_is_an_error,
    without_sync_after_accumulate_collectives_stay,
    renamed_inputs_are_not_hoisted,
    master_grad_accumulates_in_f32_without_noop_casts,
    noop_casts_of_buffers_scaled_in_place_stay,
    programs_without_roles_are_refused,
    avg_false_emits_no_scale,
    k_steps_one_still_gives_a_correct_program,
    bad_k_steps_is_a_usage_error,
    a_gradient_no_optimizer_reads_is_left_alone,
    a_variant_rule_file_needs_no_rust_change,
    all_reduce_sum_and_avg_are_hoisted_like_the_c_ops,
    all_reduce_max_min_prod_are_never_hoisted,
    dp_scale_after_an_all_reduce_sum_is_hoisted_with_it,
    reduce_sum_and_avg_are_hoisted_max_is_not,
];

fn fixtures() -> PathBuf {
    std::env::var("IRW_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from("/work/shared/fixtures/paddle"))
}

fn read(p: &Path) -> SourceFile {
    SourceFile::new(
        p.display().to_string(),
        std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
    )
}

fn module(main: &str, startup: Option<&str>) -> Module {
    let mut m = parse_module(&read(&fixtures().join(main))).unwrap_or_else(|d| panic!("{d}"));
    if let Some(s) = startup {
        parse_startup_into(&mut m, &read(&fixtures().join(s))).unwrap_or_else(|d| panic!("{d}"));
    }
    m
}

fn sets(kv: &[(&str, &str)]) -> Vec<(String, String)> {
    kv.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Runs a rule file on a module; returns (main text, startup text).
fn run(rules: &str, mut m: Module, kv: &[(&str, &str)]) -> Result<(String, String), String> {
    let rs = irw::load_rules(&[rules.into()], &sets(kv)).map_err(|d| d.to_string())?;
    apply(&mut m, &rs, &Options::default()).map_err(|d| d.to_string())?;
    irw::verify_module(&m).map_err(|e| format!("the rewritten program does not verify: {e}"))?;
    let text = print_module(&m);
    let (main, startup) = match text.find("\nstartup ") {
        Some(i) => (
            text[..i + 1].to_string(),
            text[i + "\nstartup ".len()..].to_string(),
        ),
        None => (text, String::new()),
    };
    Ok((main, startup))
}

fn kwargs_sorted(text: &str) -> Vec<String> {
    let mut v: Vec<String> = text
        .lines()
        .filter(|l| l.trim_start().starts_with("%kwarg_"))
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

fn without_kwargs(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim_start().starts_with("%kwarg_"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// irw's main program equals Paddle's line by line (same numbering), except for one deliberate
/// difference: where Paddle zeroes a buffer with `set_value_with_tensor_(%kwarg_B)`,
/// irw zeroes the value the optimizer read, `%s = scale_(%kwarg_B, ..)`, because Paddle's form
/// races in its multi-threaded executor. Every buffer must be zeroed, through its own scale_.
fn same_but_zeroing_operand(irw: &str, paddle: &str) {
    let (a, b): (Vec<&str>, Vec<&str>) = (irw.lines().collect(), paddle.lines().collect());
    assert_eq!(a.len(), b.len(), "same number of lines");
    let mut zeroings = 0;
    for (x, y) in a.iter().zip(&b) {
        if x == y {
            continue;
        }
        let op = "= \"pd_op.set_value_with_tensor_\" (";
        let (Some(i), Some(j)) = (x.find(op), y.find(op)) else {
            panic!("only zeroings may differ:\n irw:    {x}\n paddle: {y}");
        };
        let (xs, ys) = (&x[i + op.len()..], &y[j + op.len()..]);
        let (xv, xrest) = xs.split_once(',').expect("an operand list");
        let (yv, yrest) = ys.split_once(',').expect("an operand list");
        assert_eq!(xrest, yrest, "zeroings differ only in what they write");
        assert!(yv.starts_with("%kwarg_"), "Paddle zeroes the buffer: {y}");
        let scale = format!("({xv}) = \"pd_op.scale_\" ({yv}, ");
        assert!(
            a.iter().any(|l| l.trim_start().starts_with(&scale)),
            "irw zeroes {xv}, which must be the scale_ of {yv}: {x}"
        );
        zeroings += 1;
    }
    let buffers = b
        .iter()
        .filter(|l| l.contains("\"pd_op.set_value_with_tensor_\" (%kwarg_"))
        .count();
    assert!(buffers > 0, "Paddle zeroes its buffers");
    assert_eq!(
        zeroings, buffers,
        "every buffer is zeroed through its scale_ result"
    );
}

fn check_same_as_paddle(before: &str, startup_before: &str, after: &str, startup_after: &str) {
    let (main, startup) = run(
        "rules/grad_merge.rw",
        module(before, Some(startup_before)),
        &[("k_steps", "4")],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let want = std::fs::read_to_string(fixtures().join(after)).unwrap();
    assert_eq!(
        kwargs_sorted(&main),
        kwargs_sorted(&want),
        "same keyword arguments"
    );
    same_but_zeroing_operand(&without_kwargs(&main), &without_kwargs(&want));
    let want_startup = std::fs::read_to_string(fixtures().join(startup_after)).unwrap();
    assert_eq!(startup, want_startup, "startup byte for byte");
}

fn sgd_matches_paddle() {
    check_same_as_paddle(
        "before.ir",
        "startup_before.ir",
        "after.ir",
        "startup_after.ir",
    );
}

fn adam_matches_paddle() {
    check_same_as_paddle(
        "before_adam.ir",
        "startup_before_adam.ir",
        "after_adam.ir",
        "startup_after_adam.ir",
    );
}

fn rewriting_is_deterministic() {
    let a = run(
        "rules/grad_merge.rw",
        module("allreduce_sync1_before.ir", None),
        &[("k_steps", "4")],
    )
    .unwrap();
    let b = run(
        "rules/grad_merge.rw",
        module("allreduce_sync1_before.ir", None),
        &[("k_steps", "4")],
    )
    .unwrap();
    assert_eq!(a, b);
}

/// The op lines of a printed program whose op name is `name`.
fn ops<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    let q = format!("\"{name}\"");
    text.lines().filter(|l| l.contains(&q)).collect()
}

fn result_of(line: &str) -> &str {
    line.trim_start()
        .trim_start_matches('(')
        .split(')')
        .next()
        .unwrap_or("")
}

fn operands_of(line: &str) -> Vec<&str> {
    let after = line.split("\" (").nth(1).unwrap_or("");
    let inner = after.split(')').next().unwrap_or("");
    inner.split(", ").filter(|s| !s.is_empty()).collect()
}

/// The six `c_allreduce_sum` of a rewritten 3-layer program, each asserted to run in the optimize
/// stage on a gradient-merge buffer (a keyword argument).
fn hoisted_collectives(main: &str) -> Vec<&str> {
    let coll = ops(main, "pd_op.c_allreduce_sum");
    assert_eq!(
        coll.len(),
        6,
        "one collective per gradient, none added or lost:\n{main}"
    );
    for c in &coll {
        assert!(
            c.contains("op_role:2"),
            "collective left in a micro-step: {c}"
        );
        let o = operands_of(c);
        assert!(
            o.len() == 1 && o[0].starts_with("%kwarg_") && o[0].ends_with("@GRAD@MERGE"),
            "collective must read the buffer: {c}"
        );
    }
    coll
}

fn collectives_are_hoisted_to_the_optimize_stage_and_read_the_buffers() {
    let (main, _) = run(
        "rules/grad_merge.rw",
        module("allreduce_sync1_before.ir", None),
        &[("k_steps", "4")],
    )
    .unwrap();
    let coll = hoisted_collectives(&main);
    // The micro-step accumulates the raw gradient, and the scale reads the reduced buffer.
    let coll_results: Vec<&str> = coll.iter().map(|c| result_of(c)).collect();
    for a in ops(&main, "pd_op.add_") {
        assert!(
            !coll_results.contains(&operands_of(a)[1]),
            "accumulating a reduced gradient: {a}"
        );
    }
    for s in ops(&main, "pd_op.scale_") {
        assert!(
            coll_results.contains(&operands_of(s)[0]),
            "scale must read the reduced buffer: {s}"
        );
    }
    // Collectives come before every optimizer op.
    let first_coll = main.find("c_allreduce_sum").unwrap();
    assert!(main.find("\"pd_op.sgd_\"").unwrap() > first_coll);
}

/// bf16 gradients with master weights and data-parallel all-reduce (no Paddle fixture has both;
/// `irw gen mlp --dtype bf16 --allreduce` makes one): the collective sits between the gradient
/// and its master-grad cast, and hoist_reduce's `widen_before_collective` commutes the two so
/// that the collective, too, runs once per k steps, on the f32 buffer. `irw check` on this
/// family runs in tests/all/prop_check.rs.
fn bf16_collectives_are_hoisted_and_reduce_the_f32_buffer() {
    let opts = irw::generate::MlpOptions {
        dtype: irw::generate::Dtype::Bf16,
        allreduce: true,
        ..irw::generate::MlpOptions::with_layers(std::num::NonZeroUsize::new(3).unwrap())
    };
    let src = SourceFile::new("bf16_allreduce.ir", irw::generate::mlp(&opts));
    let m = parse_module(&src).unwrap_or_else(|d| panic!("{d}"));
    let (main, _) = run("rules/grad_merge.rw", m, &[("k_steps", "4")]).unwrap();
    for c in hoisted_collectives(&main) {
        assert!(c.ends_with("xf32>"), "the buffer is f32: {c}");
    }
    for a in ops(&main, "pd_op.add_") {
        assert!(a.contains("xf32>, tensor<"), "accumulates in f32: {a}");
    }
}

/// A data-parallel `scale` after a sum (averaging over ranks) between the collective and the
/// optimizer: hoist_reduce's `hoist_collective_with_dp_scale` moves it to the optimize stage with
/// the collective, right after it, where it scales the reduced buffer, and k=4 micro-steps on 2
/// ranks compute the original step. Paddle's fixtures have no such scale, so one is put after
/// linear_2.b_0's all-reduce. (Two rules, each moving its op to the start of the optimize stage,
/// would put the scale before the collective it reads.)
fn dp_scale_after_a_sum_is_hoisted_with_it() {
    let text = read(&fixtures().join("allreduce_sync1_before.ir")).text;
    let coll = text
        .lines()
        .find(|l| l.starts_with("    (%31) = \"pd_op.c_allreduce_sum\" (%30)"))
        .expect("linear_2.b_0's all-reduce");
    let scaled = format!(
        "{coll}\n    (%900) = \"pd_op.full\" () {{dtype:float32,op_role:1,place:Place(cpu),\
         shape:[1],stop_gradient:[true],value:0.5}} : () -> tensor<1xf32>\n    (%901) = \
         \"pd_op.scale\" (%31, %900) {{bias:0,bias_after_scale:false,op_role:1,\
         stop_gradient:[false]}} : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>"
    );
    let text = text.replace(coll, &scaled).replace(
        "\"pd_op.sgd_\" (%1, %0, %31,",
        "\"pd_op.sgd_\" (%1, %0, %901,",
    );
    let mut original = parse_module(&SourceFile::new("dp_scale.ir", text)).unwrap();
    let startup = read(&fixtures().join("startup_before.ir"));
    parse_startup_into(&mut original, &startup).unwrap_or_else(|d| panic!("{d}"));
    let (main, _) = run("rules/grad_merge.rw", original.clone(), &[("k_steps", "4")]).unwrap();
    let coll = hoisted_collectives(&main);
    let reduced = result_of(coll[0]);
    let dp_scale: Vec<&str> = ops(&main, "pd_op.scale")
        .into_iter()
        .filter(|l| operands_of(l).first() == Some(&reduced))
        .collect();
    assert_eq!(
        dp_scale.len(),
        1,
        "the dp scale reads the reduced buffer:\n{main}"
    );
    assert!(dp_scale[0].contains("op_role:2"), "{}", dp_scale[0]);

    let rules = irw::load_rules(&["rules/grad_merge.rw".into()], &sets(&[("k_steps", "4")]))
        .unwrap_or_else(|d| panic!("{d}"));
    let mut rewritten = original.clone();
    apply(&mut rewritten, &rules, &Options::default()).unwrap_or_else(|d| panic!("{d}"));
    let opts = irw::executor::CheckOptions {
        k_steps: 4,
        ..Default::default()
    };
    let report = irw::executor::check(&original, &rewritten, &opts).unwrap();
    assert_eq!(report.ranks, 2);
    assert!(report.passed(), "{report}");
}

/// The library never hands back an invalid program. The golden `dp_scale_above_its_factor.ir`
/// is `dp_scale_hoisted.ir` with the loss-gradient seed (`full_like`) marked optimize: the
/// optimize stage starts above the backward, and moving the collective and its data-parallel
/// scale there puts the scale above the `full` it reads. `rewrite` fails, naming the rule,
/// instead of returning the broken program.
fn a_rewrite_that_breaks_the_program_is_an_error() {
    let path = "tests/golden/grad_merge/dp_scale_above_its_factor.ir";
    let text = std::fs::read_to_string(path).expect("the golden program");
    let mut m = parse_module(&SourceFile::new(path, text)).unwrap_or_else(|d| panic!("{d}"));
    let rs = irw::load_rules(&["rules/grad_merge.rw".into()], &sets(&[("k_steps", "4")]))
        .unwrap_or_else(|d| panic!("{d}"));
    let err = match apply(&mut m, &rs, &Options::default()) {
        Ok(_) => panic!("an invalid program was returned:\n{}", print_module(&m)),
        Err(d) => d.to_string(),
    };
    assert!(
        err.contains("before it is defined")
            && err.contains("rule `hoist_collective_with_dp_scale` (rules/hoist_reduce.rw:"),
        "{err}"
    );
}

fn without_sync_after_accumulate_collectives_stay() {
    let (main, _) = run(
        "rules/grad_merge.rw",
        module("allreduce_sync1_before.ir", None),
        &[
            ("k_steps", "4"),
            ("gradient_sync_after_accumulate", "false"),
        ],
    )
    .unwrap();
    for c in ops(&main, "pd_op.c_allreduce_sum") {
        assert!(c.contains("op_role:1"), "{c}");
    }
}

fn renamed_inputs_are_not_hoisted() {
    // Synthetic: give the first gradient a name with @RENAME (a shared parameter's gradient).
    let p = fixtures().join("allreduce_sync1_before.ir");
    let text = std::fs::read_to_string(&p).unwrap().replacen(
        "{axis:-1,op_role:1,stop_gradient:[false,false]} : (tensor<-1x4xf32>, tensor<4xf32>, tensor<-1x4xf32>)",
        "{axis:-1,name:\"linear_2.b_0@GRAD@RENAME@0\",op_role:1,stop_gradient:[false,false]} : (tensor<-1x4xf32>, tensor<4xf32>, tensor<-1x4xf32>)",
        1,
    );
    assert!(text.contains("@RENAME"));
    let m = parse_module(&SourceFile::new("renamed.ir", text)).unwrap();
    let (main, _) = run("rules/grad_merge.rw", m, &[("k_steps", "4")]).unwrap();
    let coll = ops(&main, "pd_op.c_allreduce_sum");
    assert_eq!(
        coll.iter().filter(|c| c.contains("op_role:1")).count(),
        1,
        "the @RENAME one stays"
    );
    assert_eq!(coll.iter().filter(|c| c.contains("op_role:2")).count(), 5);
}

fn master_grad_accumulates_in_f32_without_noop_casts() {
    let (main, startup) = run(
        "rules/grad_merge.rw",
        module(
            "master_grad_before.ir",
            Some("master_grad_startup_before.ir"),
        ),
        &[("k_steps", "4")],
    )
    .unwrap();
    let casts = ops(&main, "pd_op.cast");
    assert_eq!(casts.len(), 4);
    for c in &casts {
        assert!(c.contains("op_role:1"), "cast in the backward stage: {c}");
        assert!(
            c.contains("xbf16>) -> tensor<") && c.trim_end().ends_with("xf32>"),
            "bf16 -> f32 only: {c}"
        );
    }
    for a in ops(&main, "pd_op.add_") {
        assert!(
            a.contains("xf32>, tensor<") && !a.contains("bf16"),
            "f32 accumulation: {a}"
        );
    }
    let want = std::fs::read_to_string(fixtures().join("master_grad_startup_after.ir")).unwrap();
    assert_eq!(startup, want);
}

/// Paddle 3.3.1 leaves an f32 -> f32 cast on every merge buffer, and scales the copy in place:
/// dropping the cast would scale the buffer itself, so `drop_noop_cast` keeps it (the rule
/// cannot see that the buffer is zeroed after the optimizer reads it).
fn noop_casts_of_buffers_scaled_in_place_stay() {
    let (main, _) = run(
        "rules/master_grad.rw",
        module("master_grad_after.ir", None),
        &[],
    )
    .unwrap();
    let casts = ops(&main, "pd_op.cast");
    assert_eq!(casts.len(), 8, "{casts:#?}");
    assert_eq!(
        casts.iter().filter(|c| c.contains("@GRAD@MERGE")).count(),
        4
    );
}

fn programs_without_roles_are_refused() {
    let e = run(
        "rules/grad_merge.rw",
        module("before_noroles.ir", None),
        &[("k_steps", "4")],
    )
    .unwrap_err();
    assert!(
        e.contains("grad_merge.rw:") && e.contains("no op_role"),
        "{e}"
    );
}

fn avg_false_emits_no_scale() {
    let (main, _) = run(
        "rules/grad_merge.rw",
        module("before.ir", None),
        &[("k_steps", "4"), ("avg", "false")],
    )
    .unwrap();
    assert!(ops(&main, "pd_op.scale_").is_empty());
    for s in ops(&main, "pd_op.sgd_") {
        assert!(
            operands_of(s)[2].ends_with("@GRAD@MERGE"),
            "optimizer reads the buffer: {s}"
        );
    }
}

fn k_steps_one_still_gives_a_correct_program() {
    let (main, _) = run(
        "rules/grad_merge.rw",
        module("before.ir", None),
        &[("k_steps", "1")],
    )
    .unwrap();
    assert_eq!(ops(&main, "pd_op.scale_").len(), 6);
    assert_eq!(
        main.matches("value:1}").count(),
        7,
        "six 1/1 scales plus the loss seed"
    );
    assert_eq!(ops(&main, "pd_op.set_value_with_tensor_").len(), 6);
}

fn bad_k_steps_is_a_usage_error() {
    for (v, want) in [
        ("0", "must be at least 1"),
        ("-3", "must be at least 1"),
        ("four", "is not a valid int"),
    ] {
        let e = run(
            "rules/grad_merge.rw",
            module("before.ir", None),
            &[("k_steps", v)],
        )
        .unwrap_err();
        assert!(e.contains("k_steps") && e.contains(want), "{e}");
    }
    let e = run("rules/grad_merge.rw", module("before.ir", None), &[]).unwrap_err();
    assert!(e.contains("missing required parameter `k_steps`"), "{e}");
}

fn a_gradient_no_optimizer_reads_is_left_alone() {
    let p = fixtures().join("before.ir");
    let text: String = std::fs::read_to_string(&p)
        .unwrap()
        .lines()
        .filter(|l| !(l.contains("sgd_") && l.contains("(%1, %0, %30")))
        .map(|l| format!("{l}\n"))
        .collect();
    let m = parse_module(&SourceFile::new("unread.ir", text)).unwrap();
    let (main, _) = run("rules/grad_merge.rw", m, &[("k_steps", "4")]).unwrap();
    assert_eq!(kwargs_sorted(&main).len(), 5);
    assert!(!main.contains("linear_2.b_0@GRAD@MERGE"));
}

fn a_variant_rule_file_needs_no_rust_change() {
    let (main, startup) = run(
        "tests/golden/rules/variant_grad_acc.rw",
        module("before.ir", Some("startup_before.ir")),
        &[],
    )
    .unwrap();
    assert_eq!(kwargs_sorted(&main).len(), 6);
    assert!(kwargs_sorted(&main).iter().all(|k| k.contains("@GRAD@ACC")));
    assert!(!main.contains("@GRAD@MERGE") && !main.contains("set_value_with_tensor_"));
    // One scale_ per buffer, all zeroing at the end; optimizers read the buffer directly.
    let scales = ops(&main, "pd_op.scale_");
    assert_eq!(scales.len(), 6);
    let last_sgd = main.rfind("\"pd_op.sgd_\"").unwrap();
    assert!(scales.iter().all(|s| main.find(s).unwrap() > last_sgd));
    for s in ops(&main, "pd_op.sgd_") {
        assert!(operands_of(s)[2].ends_with("@GRAD@ACC"), "{s}");
    }
    assert_eq!(startup.matches("@GRAD@ACC").count(), 6);
}

/// Paddle's `allreduce_sync1_before.ir` with every `c_allreduce_sum` written as the modern
/// `pd_op.all_reduce` with `reduce_type` `t` (what Paddle's CPU executor runs; the Engine's
/// programs use it too), plus the plain startup program.
fn all_reduce_program(t: i64) -> Module {
    collective_program("pd_op.all_reduce", &format!("reduce_type:{t},"))
}

/// [`all_reduce_program`] with collective `op` and attributes `attrs` (`key:value,` each, sorted
/// around `op_role` and `ring_id` as Paddle prints them).
fn collective_program(op: &str, attrs: &str) -> Module {
    let text = read(&fixtures().join("allreduce_sync1_before.ir")).text;
    let old = "\"pd_op.c_allreduce_sum\" (";
    assert_eq!(text.matches(old).count(), 6);
    let text = text.replace(old, &format!("\"{op}\" (")).replace(
        "{op_role:1,ring_id:0,stop_gradient:[false],use_calc_stream:true,use_model_parallel:false}",
        &format!("{{op_role:1,{attrs}ring_id:0,stop_gradient:[false]}}"),
    );
    assert!(
        !text.contains("use_calc_stream"),
        "every collective rewritten"
    );
    let mut m =
        parse_module(&SourceFile::new("all_reduce.ir", text)).unwrap_or_else(|d| panic!("{d}"));
    parse_startup_into(&mut m, &read(&fixtures().join("startup_before.ir")))
        .unwrap_or_else(|d| panic!("{d}"));
    m
}

fn check_k4(original: &Module) -> irw::executor::CheckReport {
    let rules = irw::load_rules(&["rules/grad_merge.rw".into()], &sets(&[("k_steps", "4")]))
        .unwrap_or_else(|d| panic!("{d}"));
    let mut rewritten = original.clone();
    apply(&mut rewritten, &rules, &Options::default()).unwrap_or_else(|d| panic!("{d}"));
    let opts = irw::executor::CheckOptions {
        k_steps: 4,
        ..Default::default()
    };
    irw::executor::check(original, &rewritten, &opts).unwrap_or_else(|d| panic!("{d}"))
}

/// `pd_op.all_reduce` with reduce_type 0 (SUM) or 4 (AVG) is hoisted exactly as
/// `c_allreduce_sum`/`c_allreduce_avg`: once per k steps, on the buffer, before every optimizer
/// op; and k=4 micro-steps on 2 simulated ranks compute the original step.
fn all_reduce_sum_and_avg_are_hoisted_like_the_c_ops() {
    for t in [0, 4] {
        let original = all_reduce_program(t);
        let (main, _) = run("rules/grad_merge.rw", original.clone(), &[("k_steps", "4")]).unwrap();
        let coll = ops(&main, "pd_op.all_reduce");
        assert_eq!(coll.len(), 6, "reduce_type {t}:\n{main}");
        for c in &coll {
            assert!(
                c.contains("op_role:2"),
                "reduce_type {t}: left in a micro-step: {c}"
            );
            assert!(c.contains(&format!("reduce_type:{t},")), "{c}");
            let o = operands_of(c);
            assert!(
                o.len() == 1 && o[0].starts_with("%kwarg_") && o[0].ends_with("@GRAD@MERGE"),
                "reduce_type {t}: must read the buffer: {c}"
            );
        }
        let first = main.find("\"pd_op.all_reduce\"").unwrap();
        assert!(main.find("\"pd_op.sgd_\"").unwrap() > first);
        let report = check_k4(&original);
        assert_eq!(report.ranks, 2);
        assert!(report.passed(), "reduce_type {t}: {report}");
    }
}

/// MAX (1), MIN (2) and PROD (3) are not linear: the sum over micro-steps of a per-step maximum
/// is not the maximum of the sums. Those all-reduces stay in the backward stage, each reading
/// its micro-step gradient, and the buffers accumulate their results.
fn all_reduce_max_min_prod_are_never_hoisted() {
    for t in [1, 2, 3] {
        let (main, _) = run(
            "rules/grad_merge.rw",
            all_reduce_program(t),
            &[("k_steps", "4")],
        )
        .unwrap();
        let coll = ops(&main, "pd_op.all_reduce");
        assert_eq!(coll.len(), 6, "reduce_type {t}:\n{main}");
        let results: Vec<&str> = coll.iter().map(|c| result_of(c)).collect();
        for c in &coll {
            assert!(c.contains("op_role:1"), "reduce_type {t}: hoisted: {c}");
            assert!(
                !operands_of(c)[0].starts_with("%kwarg_"),
                "reduce_type {t}: {c}"
            );
        }
        let adds = ops(&main, "pd_op.add_");
        assert_eq!(adds.len(), 6);
        for a in adds {
            assert!(results.contains(&operands_of(a)[1]), "reduce_type {t}: {a}");
        }
    }
}

/// The data-parallel scale after an all-reduce SUM moves with it (hoist_collective_with_dp_scale),
/// right after it; an AVG all-reduce followed by a scale is not that pattern and stays (the
/// scale rule covers sums only), but is still correct.
fn dp_scale_after_an_all_reduce_sum_is_hoisted_with_it() {
    let original = all_reduce_program(0);
    let text = print_module(&original);
    let coll = text
        .lines()
        .find(|l| l.starts_with("    (%31) = \"pd_op.all_reduce\" (%30)"))
        .expect("linear_2.b_0's all-reduce")
        .to_string();
    let scaled = format!(
        "{coll}\n    (%900) = \"pd_op.full\" () {{dtype:float32,op_role:1,place:Place(cpu),\
         shape:[1],stop_gradient:[true],value:0.5}} : () -> tensor<1xf32>\n    (%901) = \
         \"pd_op.scale\" (%31, %900) {{bias:0,bias_after_scale:false,op_role:1,\
         stop_gradient:[false]}} : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>"
    );
    let text = text.replacen(&coll, &scaled, 1).replace(
        "\"pd_op.sgd_\" (%1, %0, %31,",
        "\"pd_op.sgd_\" (%1, %0, %901,",
    );
    let original = parse_module(&SourceFile::new("dp_scale_all_reduce.ir", text))
        .unwrap_or_else(|d| panic!("{d}"));
    let (main, _) = run("rules/grad_merge.rw", original.clone(), &[("k_steps", "4")]).unwrap();
    let lines: Vec<&str> = main.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.contains("\"pd_op.all_reduce\" (%kwarg_linear_2.b_0@GRAD@MERGE)"))
        .unwrap_or_else(|| panic!("hoisted:\n{main}"));
    assert!(lines[i].contains("op_role:2"), "{}", lines[i]);
    let reduced = result_of(lines[i]);
    let scale = lines[i + 1];
    assert!(
        scale.contains("\"pd_op.scale\"") && operands_of(scale)[0] == reduced,
        "the scale right after the collective reads it: {scale}"
    );
    assert!(scale.contains("op_role:2"), "{scale}");
    let report = check_k4(&original);
    assert!(report.passed(), "{report}");
}

/// `pd_op.reduce` (to a root rank) is linear with reduce_type 0 or 4 too, as `c_reduce_sum` is:
/// the root's buffer sums the reduced micro-step gradients, which is the reduce of the summed
/// ones; the other ranks keep their own sums either way. MAX is never hoisted.
fn reduce_sum_and_avg_are_hoisted_max_is_not() {
    for t in [0, 1, 4] {
        let m = collective_program("pd_op.reduce", &format!("reduce_type:{t},"));
        let (main, _) = run("rules/grad_merge.rw", m, &[("k_steps", "4")]).unwrap();
        let coll = ops(&main, "pd_op.reduce");
        assert_eq!(coll.len(), 6, "reduce_type {t}:\n{main}");
        for c in &coll {
            let on_buffer = operands_of(c)[0].ends_with("@GRAD@MERGE");
            let hoisted = c.contains("op_role:2");
            assert_eq!(on_buffer, hoisted, "{c}");
            assert_eq!(hoisted, t != 1, "reduce_type {t}: {c}");
        }
    }
}
