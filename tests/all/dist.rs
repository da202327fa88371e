//! Auto-parallel (pd_dist) programs from `irw gen mlp --dist N`, through the real binary: the
//! generated data-parallel program is a correct one (N simulated processes train exactly as one
//! process on the whole batch), it is consistent (every op's `op_dist_attr` agrees with its
//! types), and gradient merge keeps it so while syncing once per k micro-steps.

use crate::common::*;
use std::path::Path;

tests![
    sgd_on_two_processes_equals_the_full_batch,
    backward_stage_averaging_on_two_processes_equals_the_full_batch,
    adam_on_four_processes_equals_the_full_batch,
    a_dist_program_with_a_max_instead_of_a_sum_does_not,
    generated_dist_programs_are_consistent_and_print_back,
    gradient_merge_on_a_dist_program_syncs_the_buffer_once_per_k_steps,
    check_refuses_a_rank_count_that_is_not_the_mesh,
    backward_collectives_of_a_dist_program_are_hoisted,
    the_engines_two_process_program_merged_by_irw_computes_the_full_batch_step,
];

fn gen(dir: &Path, name: &str, args: &[&str]) -> std::path::PathBuf {
    let p = dir.join(name);
    let mut a: Vec<&str> = vec!["gen", "mlp"];
    a.extend_from_slice(args);
    a.push("-o");
    let ps = p.to_string_lossy().to_string();
    a.push(&ps);
    let out = run_irw(&a);
    assert!(
        out.status.success(),
        "irw gen failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    p
}

/// Every float of every persistable after `irw run ... --dump`.
fn dumped_state(
    prog: &Path,
    extra: &[&str],
    dump: &Path,
) -> serde_json::Map<String, serde_json::Value> {
    let mut a = vec![
        "run".to_string(),
        prog.to_string_lossy().to_string(),
        "--dump".into(),
        dump.to_string_lossy().to_string(),
    ];
    a.extend(extra.iter().map(|s| s.to_string()));
    let out = run_irw(&a);
    assert!(
        out.status.success(),
        "irw run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dump).expect("dump written")).expect("json");
    v["state"].as_object().expect("state").clone()
}

fn values(v: &serde_json::Value) -> Vec<f64> {
    v["values"]
        .as_array()
        .map(|a| a.iter().filter_map(|x| x.as_f64()).collect())
        .unwrap_or_default()
}

/// N processes of the dist program on B rows each train exactly as the dense program does on
/// N·B rows: the data-parallel program computes the full-batch step.
fn dist_equals_dense(optimizer: &str, processes: usize, extra: &[&str]) {
    let dir = tempfile::tempdir().expect("tempdir");
    let n = processes.to_string();
    let dense = gen(
        dir.path(),
        "dense.ir",
        &["--layers", "3", "--optimizer", optimizer],
    );
    let mut args = vec!["--layers", "3", "--optimizer", optimizer, "--dist", &n];
    args.extend_from_slice(extra);
    let dist = gen(dir.path(), "dist.ir", &args);
    let b = 2;
    let full = (b * processes).to_string();
    let want = dumped_state(
        &dense,
        &["--micro-batch", &full, "--steps", "3"],
        &dir.path().join("dense.json"),
    );
    let got = dumped_state(
        &dist,
        &["--micro-batch", "2", "--steps", "3"],
        &dir.path().join("dist.json"),
    );
    assert_eq!(want.len(), got.len(), "same persistables");
    let mut worst = 0.0f64;
    for (k, w) in &want {
        let g = got
            .get(k)
            .unwrap_or_else(|| panic!("{k} missing from the dist run"));
        let (w, g) = (values(w), values(g));
        assert_eq!(w.len(), g.len(), "{k}: same size");
        for (x, y) in w.iter().zip(&g) {
            worst = worst.max((x - y).abs());
        }
    }
    assert!(
        worst <= 1e-6,
        "{optimizer} on {processes} processes: max |dist − dense| = {worst}"
    );
}

fn sgd_on_two_processes_equals_the_full_batch() {
    dist_equals_dense("sgd", 2, &[]);
}

fn backward_stage_averaging_on_two_processes_equals_the_full_batch() {
    dist_equals_dense(
        "momentum",
        2,
        &["--allreduce", "--collective", "all_reduce"],
    );
}

fn adam_on_four_processes_equals_the_full_batch() {
    dist_equals_dense("adam", 4, &[]);
}

fn a_dist_program_with_a_max_instead_of_a_sum_does_not() {
    // The control: the same program reducing the gradients with MAX instead of a sum must
    // differ from the full batch, or the comparisons above prove nothing.
    let dir = tempfile::tempdir().expect("tempdir");
    let dist = gen(dir.path(), "dist.ir", &["--layers", "2", "--dist", "2"]);
    let text = std::fs::read_to_string(&dist).expect("read");
    let broken = text.replace("reduce_type:0", "reduce_type:1"); // SUM → MAX
    assert_ne!(text, broken);
    let p = dir.path().join("broken.ir");
    std::fs::write(&p, broken).expect("write");
    let dense = gen(dir.path(), "dense.ir", &["--layers", "2"]);
    let want = dumped_state(&dense, &["--micro-batch", "4"], &dir.path().join("a.json"));
    let got = dumped_state(&p, &["--micro-batch", "2"], &dir.path().join("b.json"));
    let differs = want.iter().any(|(k, w)| values(w) != values(&got[k]));
    assert!(differs, "a MAX reduction trained like the full batch");
}

fn generated_dist_programs_are_consistent_and_print_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = gen(
        dir.path(),
        "d.ir",
        &[
            "--layers",
            "4",
            "--optimizer",
            "momentum",
            "--dtype",
            "bf16",
            "--dist",
            "2",
        ],
    );
    let text = std::fs::read_to_string(&p).expect("read");
    assert!(
        text.contains("placements:[Shard(dim=0)]"),
        "data is sharded"
    );
    assert!(text.contains("partial(0,AVG), placements:[Partial(reduce_type=AVG)]"));
    assert_eq!(
        text.matches("tensor<").count(),
        text.matches("pd_dist.tensor<").count(),
        "every tensor type is distributed"
    );
    // Printing it back changes nothing; rewriting with a rule file reports no op_dist_attr
    // disagreement on the input.
    let out = run_irw(&[
        p.as_os_str(),
        "--rules".as_ref(),
        "rules/canonicalize.rw".as_ref(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("op_dist_attr"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run_irw(&[p.as_os_str()]);
    assert_eq!(out.stdout, text.as_bytes());
}

fn gradient_merge_on_a_dist_program_syncs_the_buffer_once_per_k_steps() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = gen(
        dir.path(),
        "d.ir",
        &["--layers", "3", "--optimizer", "adam", "--dist", "2"],
    );
    let out = run_irw(&[
        p.as_os_str(),
        "--rules".as_ref(),
        "rules/grad_merge.rw".as_ref(),
        "--set".as_ref(),
        "k_steps=4".as_ref(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let reduces: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("\"pd_op.all_reduce\""))
        .collect();
    assert_eq!(reduces.len(), 6, "one all_reduce per parameter");
    for l in &reduces {
        assert!(
            l.contains("@GRAD@MERGE)"),
            "the all_reduce reads the buffer: {l}"
        );
        assert!(l.contains("op_role:2"), "once per optimizer step: {l}");
    }
    // And the rewrite computes the full-batch step on the mesh's 2 simulated processes.
    let out = run_irw(&[
        "check".as_ref(),
        "--rules".as_ref(),
        "rules/grad_merge.rw".as_ref(),
        "--set".as_ref(),
        "k_steps=4".as_ref(),
        p.as_os_str(),
    ]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{report}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(report.contains("ranks 2"), "{report}");
    assert!(report.contains("result: PASS"), "{report}");
}

fn check_refuses_a_rank_count_that_is_not_the_mesh() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = gen(dir.path(), "d.ir", &["--layers", "2", "--dist", "4"]);
    let out = run_irw(&[
        "check".as_ref(),
        "--rules".as_ref(),
        "rules/grad_merge.rw".as_ref(),
        "--set".as_ref(),
        "k_steps=2".as_ref(),
        "--ranks".as_ref(),
        "2".as_ref(),
        p.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("--ranks 2, but the program's mesh has 4 processes"));
}

fn backward_collectives_of_a_dist_program_are_hoisted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = gen(
        dir.path(),
        "d.ir",
        &[
            "--layers",
            "3",
            "--dist",
            "2",
            "--allreduce",
            "--collective",
            "all_reduce",
        ],
    );
    let before = std::fs::read_to_string(&p).expect("read");
    let in_backward = |t: &str| {
        t.lines()
            .filter(|l| l.contains("\"pd_op.all_reduce\"") && l.contains("op_role:1"))
            .count()
    };
    assert_eq!(in_backward(&before), 6, "the input syncs every micro-step");
    let out = run_irw(&[
        p.as_os_str(),
        "--rules".as_ref(),
        "rules/grad_merge.rw".as_ref(),
        "--set".as_ref(),
        "k_steps=2".as_ref(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        in_backward(&after),
        0,
        "no collective left in the micro-steps"
    );
    let hoisted: Vec<&str> = after
        .lines()
        .filter(|l| l.contains("\"pd_op.all_reduce\" (%kwarg_") && l.contains("op_role:2"))
        .collect();
    assert_eq!(
        hoisted.len(),
        6,
        "each buffer reduced once per optimizer step"
    );
    // The reduced buffer is replicated: the all_reduce's result slot says so.
    assert!(hoisted[0].contains("result(0):{mesh_shape:[2],process_ids:[0,1],dims_mappings:[-1], placements:[Replicate()]}"), "{}", hoisted[0]);
}

/// Max |a − b| over the parameters Paddle's numerics file lists after its full-batch step.
fn max_param_error(state: &serde_json::Map<String, serde_json::Value>, numerics: &Path) -> f64 {
    fn flat(v: &serde_json::Value, out: &mut Vec<f64>) {
        match v {
            serde_json::Value::Array(a) => a.iter().for_each(|x| flat(x, out)),
            x => out.extend(x.as_f64()),
        }
    }
    let n: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(numerics).expect("numerics")).expect("json");
    let want = n["params_after_full_batch_step"]
        .as_object()
        .expect("params");
    assert!(!want.is_empty());
    let mut worst = 0.0f64;
    for (k, w) in want {
        let mut a = Vec::new();
        flat(w, &mut a);
        let b = values(state.get(k).unwrap_or_else(|| panic!("{k} missing")));
        assert_eq!(a.len(), b.len(), "{k}");
        for (x, y) in a.iter().zip(&b) {
            worst = worst.max((x - y).abs());
        }
    }
    worst
}

fn the_engines_two_process_program_merged_by_irw_computes_the_full_batch_step() {
    // Paddle's own data-parallel Engine program (mesh [0,1], Shard(0) data, all_gather, slice,
    // all_reduce in the optimize stage), merged over 2 micro-batches by grad_merge.rw, run on 2
    // simulated processes: its parameters equal the full-batch step the fixture records.
    let d = dist_fixtures();
    let dir = tempfile::tempdir().expect("tempdir");
    let (main, startup) = (dir.path().join("m.ir"), dir.path().join("s.ir"));
    let out = run_irw(&[
        d.join("mlp3_tanh_sgd_dp2_k2_before.ir").as_os_str(),
        "--startup".as_ref(),
        d.join("mlp3_tanh_sgd_dp2_k2_startup_before.ir").as_os_str(),
        "--rules".as_ref(),
        "rules/grad_merge.rw".as_ref(),
        "--set".as_ref(),
        "k_steps=2".as_ref(),
        "-o".as_ref(),
        main.as_os_str(),
        "--startup-out".as_ref(),
        startup.as_os_str(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let numerics = d.join("mlp3_tanh_sgd_dp2_k2.numerics.json");
    let feed = numerics.to_string_lossy().to_string();
    let s = startup.to_string_lossy().to_string();
    let args = [
        "--startup",
        s.as_str(),
        "--k-steps",
        "2",
        "--feed",
        feed.as_str(),
    ];
    let merged = dumped_state(&main, &args, &dir.path().join("merged.json"));
    let err = max_param_error(&merged, &numerics);
    assert!(err <= 1e-6, "merged program vs full-batch step: {err}");
    // The control: the unmerged program on the same schedule steps on the last micro-batch only.
    let original = d.join("mlp3_tanh_sgd_dp2_k2_before.ir");
    let s0 = d.join("mlp3_tanh_sgd_dp2_k2_startup_before.ir");
    let s0 = s0.to_string_lossy().to_string();
    let args0 = [
        "--startup",
        s0.as_str(),
        "--k-steps",
        "2",
        "--feed",
        feed.as_str(),
    ];
    let unmerged = dumped_state(&original, &args0, &dir.path().join("unmerged.json"));
    let err0 = max_param_error(&unmerged, &numerics);
    assert!(
        err0 > 1e-4,
        "the unmerged program also matched ({err0}): the check proves nothing"
    );
}
