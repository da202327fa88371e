//! `irw run` and `irw check` hold tensors to the types the program declares: a parameter must
//! have its declared dtype and shape, a fed input its declared rank, non-batch dimensions and a
//! batch that is a multiple of the declared one (src/exec/interp.rs, `Conform`). Each mismatch
//! is an error at the op that reads the tensor.

use crate::common::*;

use std::path::Path;

tests![
    a_fed_parameter_of_another_dtype_is_an_error_at_the_parameter,
    a_parameter_made_with_another_shape_and_dtype_is_an_error_at_the_parameter,
    a_feed_contradicting_a_fixed_batch_is_an_error_and_multiples_run,
];

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

fn fails_at(out: std::process::Output, line: usize, fragment: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains(fragment), "want `{fragment}` in:\n{err}");
    assert!(
        err.contains(&format!(".ir:{line}:5: error:")),
        "want line {line} in:\n{err}"
    );
}

/// Reads parameter `w` (declared `w_ty`) and data `x` (declared `[x_rows,4]`), multiplies them.
fn program(w_ty: &str, x_rows: i64, startup: &str) -> String {
    format!(
        "{{\n    (%0) = \"builtin.parameter\" () {{parameter_name:\"w\",persistable:[true],stop_gradient:[false]}} : () -> {w_ty}\n    (%1) = \"pd_op.data\" () {{dtype:float32,name:\"x\",place:Place(undefined:0),shape:[{x_rows},4],stop_gradient:[true]}} : () -> tensor<{x_rows}x4xf32>\n    (%2) = \"pd_op.matmul\" (%1, %0) {{transpose_x:false,transpose_y:false}} : (tensor<{x_rows}x4xf32>, {w_ty}) -> tensor<{x_rows}x4xf32>\n    () = \"builtin.shadow_output\" (%2) {{output_name:\"y\"}} : (tensor<{x_rows}x4xf32>) -> \n}}\nstartup {{\n{startup}}}\n"
    )
}

const W_STARTUP: &str = "    (%0) = \"pd_op.full\" () {dtype:float32,place:Place(cpu),shape:[4,4],stop_gradient:[true],value:0.5} : () -> tensor<4x4xf32>\n    () = \"builtin.set_parameter\" (%0) {parameter_name:\"w\"} : (tensor<4x4xf32>) -> \n";

fn rows(n: usize) -> String {
    let row = "[1, 2, 3, 4]";
    format!("[{}]", vec![row; n].join(", "))
}

fn a_fed_parameter_of_another_dtype_is_an_error_at_the_parameter() {
    // An int64 tensor fed for an f32 parameter must not run as that parameter.
    let dir = tempfile::tempdir().unwrap();
    let ir = write(
        dir.path(),
        "p.ir",
        &program("tensor<4x4xf32>", 2, W_STARTUP),
    );
    let feed = format!(
        "{{\"inputs\": {{\"x\": {}}}, \"state_init\": {{\"w\": {{\"shape\": [4, 4], \"dtype\": \"int64\", \"values\": {}}}}}}}",
        rows(2),
        rows(4)
    );
    let feed = write(dir.path(), "f.json", &feed);
    // The feed's entry is checked against the declaration before anything runs: the error is
    // at the entry, and names the declaration.
    let out = run_irw(&["run", &ir, "--feed", &feed]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("f.json:1:64: error: `state_init.w` is tensor<4x4xi64>, but the program declares tensor<4x4xf32>: the dtypes differ"),
        "{err}"
    );
    assert!(
        err.contains("= note: declared as tensor<4x4xf32> at "),
        "{err}"
    );
    assert!(err.contains("p.ir:2:5"), "{err}");
}

fn a_parameter_made_with_another_shape_and_dtype_is_an_error_at_the_parameter() {
    // A 3x3xi32 tensor must not run as a 16x4 f32 parameter.
    let dir = tempfile::tempdir().unwrap();
    let startup = "    (%0) = \"pd_op.full\" () {dtype:int32,place:Place(cpu),shape:[3,3],stop_gradient:[true],value:1} : () -> tensor<3x3xi32>\n    () = \"builtin.set_parameter\" (%0) {parameter_name:\"w\"} : (tensor<3x3xi32>) -> \n";
    let ir = write(dir.path(), "p.ir", &program("tensor<4x16xf32>", 2, startup));
    fails_at(
        run_irw(&["run", &ir]),
        2,
        "is tensor<3x3xi32> but the op declares tensor<4x16xf32>",
    );
    // The same shape with the right dtype, and a wrong shape alone.
    let startup = startup.replace("int32", "float32").replace("xi32", "xf32");
    let ir = write(
        dir.path(),
        "q.ir",
        &program("tensor<4x16xf32>", 2, &startup),
    );
    fails_at(
        run_irw(&["run", &ir]),
        2,
        "is tensor<3x3xf32> but the op declares tensor<4x16xf32>: dimension 0 is 3, not 4",
    );
}

fn a_feed_contradicting_a_fixed_batch_is_an_error_and_multiples_run() {
    // 3 rows must not run through a data op declaring 8; 8 and 16 rows (a multiple) run.
    let dir = tempfile::tempdir().unwrap();
    let ir = write(
        dir.path(),
        "p.ir",
        &program("tensor<4x4xf32>", 8, W_STARTUP),
    );
    let feed = |n: usize| format!("{{\"inputs\": {{\"x\": {}}}}}", rows(n));
    let f3 = write(dir.path(), "f3.json", &feed(3));
    fails_at(
        run_irw(&["run", &ir, "--feed", &f3]),
        3,
        "a micro-batch of 3 rows, but this `pd_op.data` declares a batch of 8 rows for `x` (a rank's micro-batch must be a multiple of it)",
    );
    // A non-batch dimension must be as declared.
    let f = write(
        dir.path(),
        "f5.json",
        &format!(
            "{{\"inputs\": {{\"x\": [{}]}}}}",
            ["[1, 2, 3, 4, 5]"; 8].join(", ")
        ),
    );
    fails_at(
        run_irw(&["run", &ir, "--feed", &f]),
        3,
        "dimension 1 is 5, not 4",
    );
    // 8 rows and 16 rows (two batches, as Paddle accepts and `irw check` merges) run.
    for n in [8, 16] {
        let f = write(dir.path(), &format!("ok{n}.json"), &feed(n));
        let out = run_irw(&["run", &ir, "--feed", &f]);
        assert!(
            out.status.success(),
            "{n} rows: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
