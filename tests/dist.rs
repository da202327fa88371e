//! Auto-parallel (pd_dist) programs from `irw gen mlp --dist N`, through the real binary: the
//! generated data-parallel program is a correct one (N simulated processes train exactly as one
//! process on the whole batch), it is consistent (every op's `op_dist_attr` agrees with its
//! types), and gradient merge keeps it so while syncing once per k micro-steps.

mod common;
use common::*;
use std::path::Path;

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
fn dist_equals_dense(optimizer: &str, processes: usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let n = processes.to_string();
    let dense = gen(
        dir.path(),
        "dense.ir",
        &["--layers", "3", "--optimizer", optimizer],
    );
    let dist = gen(
        dir.path(),
        "dist.ir",
        &["--layers", "3", "--optimizer", optimizer, "--dist", &n],
    );
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

#[test]
fn sgd_on_two_processes_equals_the_full_batch() {
    dist_equals_dense("sgd", 2);
}

#[test]
fn adam_on_four_processes_equals_the_full_batch() {
    dist_equals_dense("adam", 4);
}

#[test]
fn a_dist_program_without_its_all_reduce_does_not() {
    // The control: summing nothing across the processes (each trains on its own rows) must
    // differ from the full batch, or the comparison above proves nothing.
    let dir = tempfile::tempdir().expect("tempdir");
    let dist = gen(dir.path(), "dist.ir", &["--layers", "2", "--dist", "2"]);
    let text = std::fs::read_to_string(&dist).expect("read");
    let broken = text.replace("reduce_type:4", "reduce_type:1"); // AVG → MAX
    assert_ne!(text, broken);
    let p = dir.path().join("broken.ir");
    std::fs::write(&p, broken).expect("write");
    let dense = gen(dir.path(), "dense.ir", &["--layers", "2"]);
    let want = dumped_state(&dense, &["--micro-batch", "4"], &dir.path().join("a.json"));
    let got = dumped_state(&p, &["--micro-batch", "2"], &dir.path().join("b.json"));
    let differs = want.iter().any(|(k, w)| values(w) != values(&got[k]));
    assert!(differs, "a MAX reduction trained like the full batch");
}

#[test]
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

#[test]
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

#[test]
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
