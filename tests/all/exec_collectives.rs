//! The collectives on simulated ranks, end to end through the real binary: a program that
//! routes each gradient through `all_gather` and `reduce_scatter` (built by
//! `tests/golden/rules/build_gather_scatter.rw`) trains exactly like one that doubles each
//! gradient, because on every rank the gathered tensor is `[g0; g1]` and the reduce-scatter of
//! two copies gives rank r `2 * g_r`. `irw run --dump` holds rank 0's state and every rank's
//! losses. (The kernels themselves are checked against scalar references in
//! `src/exec/kernels/collective.rs`.)

use crate::common::*;
use std::path::PathBuf;

tests![gather_then_scatter_trains_like_a_doubled_gradient_on_2_ranks];

/// A rule file that makes every SGD step read twice its gradient (no collectives).
const DOUBLE: &str = r#"// double.rw: each optimizer reads twice its gradient.
phase d {
    // Test rule: grad := 2 * grad.
    rule double {
        match %o = pd_op.sgd_(param: %p, grad: %g) in optimize;
        where %g in backward;
        in %o: grad := pd_op.scale(%g, pd_op.full() {dtype: float32, op_role: optimize,
                place: Place(cpu), shape: [1], stop_gradient: [true], value: 2.0})
            {bias: 0.0, bias_after_scale: false, op_role: optimize, stop_gradient: [false]};
    }
}
"#;

fn tmp() -> PathBuf {
    let d = std::env::temp_dir().join(format!("irw-exec-collectives-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn ok(args: &[&str]) {
    let out = run_irw(args);
    assert!(
        out.status.success(),
        "irw {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn gather_then_scatter_trains_like_a_doubled_gradient_on_2_ranks() {
    let dir = tmp();
    let fx = paddle_fixtures();
    let (before, startup) = (fx.join("before.ir"), fx.join("startup_before.ir"));
    let (before, startup) = (before.to_str().unwrap(), startup.to_str().unwrap());
    let p = |n: &str| dir.join(n).to_string_lossy().into_owned();
    std::fs::write(p("double.rw"), DOUBLE).expect("write rule file");
    let gs_rules = "tests/golden/rules/build_gather_scatter.rw";
    ok(&[
        "--rules",
        gs_rules,
        before,
        "--startup",
        startup,
        "-o",
        &p("gs.ir"),
    ]);
    ok(&[
        "--rules",
        &p("double.rw"),
        before,
        "--startup",
        startup,
        "-o",
        &p("double.ir"),
    ]);
    let gs = std::fs::read_to_string(p("gs.ir")).unwrap();
    assert_eq!(gs.matches("\"pd_op.all_gather\"").count(), 6);
    assert_eq!(gs.matches("\"pd_op.reduce_scatter\"").count(), 6);
    for (prog, dump) in [
        ("gs.ir", "gs.json"),
        ("double.ir", "double.json"),
        ("plain", "plain.json"),
    ] {
        let prog = if prog == "plain" {
            before.to_string()
        } else {
            p(prog)
        };
        let mut args = vec!["run", "--ranks", "2", "--steps", "2", "--dump"];
        let dump = p(dump);
        args.push(&dump);
        args.push(&prog);
        if prog == before {
            args.extend(["--startup", startup]);
        }
        ok(&args);
    }
    let read = |n: &str| std::fs::read_to_string(p(n)).expect("dump written");
    assert_eq!(
        read("gs.json"),
        read("double.json"),
        "gather+scatter == doubled gradient"
    );
    assert_ne!(
        read("gs.json"),
        read("plain.json"),
        "the comparison can fail: plain SGD differs"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
