//! `irw gen mlp` against Paddle 3.3.1's own dumps (`fixtures/paddle/`): for every fixture whose
//! configuration the generator can express, main and startup must be byte-identical.
//!
//! The fixtures live outside the repository (`../shared/fixtures/paddle` from the crate root,
//! or `$IRW_FIXTURES`). When they are missing the comparisons fail rather than pass silently.

use std::num::NonZeroUsize;
use std::path::PathBuf;

use irw::generate::{mlp, Dtype, MlpOptions, Optimizer};

tests![
    sgd_f32_3_layers_is_before_ir,
    default_options_are_before_ir,
    adam_f32_3_layers_is_before_adam_ir,
    sgd_bf16_2_layers_is_master_grad_before_ir,
    allreduce_is_allreduce_sync1_before_ir,
    without_roles_is_before_noroles_ir,
    forward_and_backward_of_256_layers_occur_in_after_256_ir,
    one_layer_has_no_relu_and_a_null_input_gradient,
    main_op_count_matches_paddle,
    value_ids_are_dense_in_every_configuration,
    momentum_and_adamw_have_their_own_optimizer_ops_and_state,
    loss_scaling_is_what_paddle_printed,
];

fn fixtures_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("IRW_FIXTURES") {
        return PathBuf::from(dir);
    }
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    for candidate in [
        manifest.join("../shared/fixtures/paddle"),
        PathBuf::from("/work/shared/fixtures/paddle"),
    ] {
        if candidate.is_dir() {
            return candidate;
        }
    }
    panic!("fixtures/paddle not found; set IRW_FIXTURES");
}

fn fixture(name: &str) -> String {
    let path = fixtures_dir().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn layers(n: usize) -> NonZeroUsize {
    NonZeroUsize::new(n).expect("test layer counts are positive")
}

/// Splits the generator's output into (main, startup), the startup re-wrapped in a bare
/// `{ … }` block the way Paddle prints a startup program on its own.
fn split(text: &str) -> (String, String) {
    let at = text
        .find("}\nstartup {\n")
        .expect("output has a `startup {` block after main");
    let main = &text[..at + 2];
    let startup = &text[at + 2..];
    let body = startup
        .strip_prefix("startup {\n")
        .expect("startup block header");
    (main.to_string(), format!("{{\n{body}"))
}

/// Asserts byte equality and, on failure, shows the first differing line.
fn assert_same(what: &str, got: &str, want: &str) {
    if got == want {
        return;
    }
    let (g, w): (Vec<_>, Vec<_>) = (got.lines().collect(), want.lines().collect());
    for (i, (a, b)) in g.iter().zip(w.iter()).enumerate() {
        if a != b {
            panic!(
                "{what}: first difference at line {}\n  got:  {a}\n  want: {b}",
                i + 1
            );
        }
    }
    panic!(
        "{what}: {} lines generated, {} expected (or a difference in line endings)",
        g.len(),
        w.len()
    );
}

fn check(opts: &MlpOptions, main_fixture: &str, startup_fixture: Option<&str>) {
    let text = mlp(opts);
    let (main, startup) = split(&text);
    assert_same(main_fixture, &main, &fixture(main_fixture));
    if let Some(name) = startup_fixture {
        assert_same(name, &startup, &fixture(name));
    }
}

fn sgd_f32_3_layers_is_before_ir() {
    check(
        &MlpOptions::with_layers(layers(3)),
        "before.ir",
        Some("startup_before.ir"),
    );
}

fn default_options_are_before_ir() {
    assert_eq!(MlpOptions::default(), MlpOptions::with_layers(layers(3)));
}

fn adam_f32_3_layers_is_before_adam_ir() {
    let opts = MlpOptions {
        optimizer: Optimizer::Adam,
        ..MlpOptions::with_layers(layers(3))
    };
    check(&opts, "before_adam.ir", Some("startup_before_adam.ir"));
}

fn sgd_bf16_2_layers_is_master_grad_before_ir() {
    let opts = MlpOptions {
        dtype: Dtype::Bf16,
        ..MlpOptions::with_layers(layers(2))
    };
    check(
        &opts,
        "master_grad_before.ir",
        Some("master_grad_startup_before.ir"),
    );
}

fn allreduce_is_allreduce_sync1_before_ir() {
    // The data-parallel dump comes without a startup dump of its own; its startup program is
    // the plain one (all-reduce adds no state).
    let opts = MlpOptions {
        allreduce: true,
        ..MlpOptions::with_layers(layers(3))
    };
    check(
        &opts,
        "allreduce_sync1_before.ir",
        Some("startup_before.ir"),
    );
}

fn without_roles_is_before_noroles_ir() {
    let opts = MlpOptions {
        roles: false,
        ..MlpOptions::with_layers(layers(3))
    };
    check(&opts, "before_noroles.ir", Some("startup_before.ir"));
}

/// `after_256.ir` is Paddle's gradient-merge output for a 256-layer MLP built in a process
/// whose name counters had already reached `linear_72` and `learning_rate_2`. Every op of the
/// generated program with those counters must occur in it unchanged but for value ids (the pass
/// only adds ops and re-reads gradients), in the same order.
fn forward_and_backward_of_256_layers_occur_in_after_256_ir() {
    let opts = MlpOptions {
        first_layer_index: 72,
        lr_index: 2,
        ..MlpOptions::with_layers(layers(256))
    };
    let (main, _) = split(&mlp(&opts));
    let after = fixture("after_256.ir");
    let strip = |line: &str| -> String {
        // Drop `%N` ids (not `%kwarg_…` names): the pass renumbers values.
        let mut out = String::with_capacity(line.len());
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            out.push(c);
            if c == '%' && chars.peek().is_some_and(char::is_ascii_digit) {
                while chars.peek().is_some_and(char::is_ascii_digit) {
                    chars.next();
                }
            }
        }
        out
    };
    let after_lines: Vec<String> = after.lines().map(strip).collect();
    let mut pos = 0;
    let mut matched = 0;
    for line in main
        .lines()
        .filter(|l| l.contains("op_role:0") || l.contains("op_role:1"))
    {
        let want = strip(line);
        match after_lines[pos..].iter().position(|l| *l == want) {
            Some(k) => {
                pos += k + 1;
                matched += 1;
            }
            None => panic!("not found in order in after_256.ir: {line}"),
        }
    }
    // 2 data + 512 parameters + 1 lr + forward (3 per layer - 1 + 5) + backward.
    assert!(matched > 2_000, "only {matched} lines compared");
}

fn one_layer_has_no_relu_and_a_null_input_gradient() {
    let text = mlp(&MlpOptions::with_layers(layers(1)));
    assert!(!text.contains("relu"));
    assert!(text.contains(
        "\"pd_op.matmul_grad\" (%3, %2, %19) {op_role:1,stop_gradient:[false,false],\
         transpose_x:false,transpose_y:false} : (tensor<-1x8xf32>, tensor<8x4xf32>, \
         tensor<-1x4xf32>) -> <<NULL TYPE>>, tensor<8x4xf32>"
    ));
    // Xavier bound of an 8x4 weight: sqrt(6/12), printed with 6 significant digits.
    assert!(text.contains("value:0.707107}"));
    assert!(text.contains("value:-0.707107}"));
}

/// Ops per layer as the anchors count them (`../shared/anchors.md`: 8 layers → 91 ops,
/// 2 048 layers → 20 491 ops in main, SGD).
fn main_op_count_matches_paddle() {
    for (n, ops) in [(8, 91), (2048, 20_491)] {
        let (main, _) = split(&mlp(&MlpOptions::with_layers(layers(n))));
        assert_eq!(main.lines().count() - 2, ops, "{n} layers");
    }
}

/// Value ids are dense and in print order in both programs, for every option combination.
fn value_ids_are_dense_in_every_configuration() {
    for optimizer in [
        Optimizer::Sgd,
        Optimizer::Momentum,
        Optimizer::Adam,
        Optimizer::AdamW,
    ] {
        for dtype in [Dtype::F32, Dtype::Bf16] {
            for allreduce in [false, true] {
                for roles in [false, true] {
                    for n in [1, 2, 5] {
                        let opts = MlpOptions {
                            optimizer,
                            dtype,
                            allreduce,
                            roles,
                            ..MlpOptions::with_layers(layers(n))
                        };
                        let (main, startup) = split(&mlp(&opts));
                        for program in [&main, &startup] {
                            check_dense_ids(program, &opts);
                        }
                        assert_eq!(main.contains("op_role"), roles, "{opts:?}");
                    }
                }
            }
        }
    }
}

/// Every defined id is the next one; every used id is defined before its use.
fn check_dense_ids(program: &str, opts: &MlpOptions) {
    let mut next = 0u64;
    for line in program.lines().filter(|l| l.starts_with("    (")) {
        let (results, rest) = line[4..].split_once(" = ").expect("op line has ` = `");
        let operands = rest
            .split_once("\" (")
            .and_then(|(_, r)| r.split_once(')'))
            .map(|(o, _)| o)
            .expect("operand list");
        for id in ids(operands) {
            assert!(id < next, "{opts:?}: %{id} used before definition: {line}");
        }
        for id in ids(results) {
            assert_eq!(id, next, "{opts:?}: ids not dense at {line}");
            next += 1;
        }
    }
}

fn ids(list: &str) -> impl Iterator<Item = u64> + '_ {
    list.split([',', '(', ')', ' '])
        .filter_map(|t| t.strip_prefix('%'))
        .map(|t| t.parse().expect("numeric id"))
}

fn momentum_and_adamw_have_their_own_optimizer_ops_and_state() {
    let momentum = mlp(&MlpOptions {
        optimizer: Optimizer::Momentum,
        ..MlpOptions::with_layers(layers(2))
    });
    assert_eq!(momentum.matches("\"pd_op.momentum_\"").count(), 4);
    // One velocity per parameter: a data op in main, a zero fill in startup.
    assert_eq!(momentum.matches("_velocity_0\"").count(), 8);
    let adamw = mlp(&MlpOptions {
        optimizer: Optimizer::AdamW,
        dtype: Dtype::Bf16,
        ..MlpOptions::with_layers(layers(2))
    });
    assert_eq!(adamw.matches("\"pd_op.adamw_\"").count(), 4);
    assert!(adamw.contains("name:\"linear_0.w_0_fp32_master_0_moment1_0\""));
    assert!(adamw.contains("multi_precision:true"));
    assert!(!adamw.contains("multi_precision:false"));
}

/// `loss_scaling` against `tests/exec_fixtures/amp/mlp_loss_scaling.ir`, which Paddle 3.3.1
/// printed for a 6 → 8 → 3 MLP: byte-identical once the four numbers that script chose instead
/// of the decorator's defaults are put back (initial scale 1024, `incr_every_n_steps` 2,
/// `decr_every_n_nan_or_inf` 1, `decr_ratio` 0.5).
fn loss_scaling_is_what_paddle_printed() {
    let opts = MlpOptions {
        loss_scaling: true,
        in_features: layers(6),
        hidden: layers(8),
        out_features: layers(3),
        ..MlpOptions::with_layers(layers(2))
    };
    let text = mlp(&opts)
        .replace(
            "decr_every_n_nan_or_inf:2,decr_ratio:0.8,incr_every_n_steps:1000,",
            "decr_every_n_nan_or_inf:1,decr_ratio:0.5,incr_every_n_steps:2,",
        )
        .replace("value:32768}", "value:1024}");
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/exec_fixtures/amp/mlp_loss_scaling.ir");
    let want = std::fs::read_to_string(&path).expect("fixture readable");
    assert_same("mlp_loss_scaling.ir", &text, &want);
}
