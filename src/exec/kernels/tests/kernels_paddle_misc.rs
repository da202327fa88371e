//! Kernels real programs used and the executor lacked (`increment`, `share_data_`, `norm`,
//! `index_add`, `repeat_interleave`), against the numbers Paddle 3.3.1 computed for the same
//! inputs (`tests/exec_fixtures/paddle_misc_kernels.json`, recorded once by
//! `paddle_misc_kernels.py`): forward outputs and gradients for the recorded `out_grad`, within
//! `|a−b| ≤ 1e-5·|b| + 1e-5·max|b|`.

use std::collections::BTreeMap;

use super::kernels_paddle_models::{check_recorded, Outputs};
use crate::exec::kernels::repeat::Repeats;
use crate::exec::kernels::{elementwise as ew, index, norm, repeat};
use crate::exec::Tensor;
use serde_json::Value;

fn run_case(name: &str, i: &BTreeMap<String, Tensor>, a: &Value) -> Outputs {
    let t = |k: &str| &i[k];
    let int = |k: &str| a[k].as_i64().expect("int attr");
    let mut o = Outputs::new();
    match name {
        n if n.starts_with("increment") => {
            let v = a["value"].as_f64().expect("value");
            o.insert("out", ew::increment(t("x"), v).unwrap());
        }
        n if n.starts_with("share_data") => {
            o.insert("out", t("x").clone());
        }
        n if n.starts_with("norm") => {
            let eps = a["epsilon"].as_f64().expect("epsilon") as f32;
            let (out, nrm) = norm::l2_normalize(t("x"), int("axis"), eps).unwrap();
            let dx = norm::l2_normalize_grad(t("x"), &nrm, t("out_grad"), int("axis")).unwrap();
            o.insert("out", out);
            o.insert("norm", nrm);
            o.insert("x_grad", dx);
        }
        n if n.starts_with("index_add") => {
            let (x, idx, v, g) = (t("x"), t("index"), t("add_value"), t("out_grad"));
            o.insert("out", index::index_add(x, idx, v, int("axis")).unwrap());
            let (dx, dv) = index::index_add_grad(idx, v, g, int("axis")).unwrap();
            o.insert("x_grad", dx);
            o.insert("add_value_grad", dv);
        }
        n if n.starts_with("repeat_interleave_tensor") => {
            let r = Repeats::PerIndex(t("repeats"));
            let (x, g) = (t("x"), t("out_grad"));
            o.insert("out", repeat::repeat_interleave(x, r, int("axis")).unwrap());
            let dx = repeat::repeat_interleave_grad(x, r, g, int("axis")).unwrap();
            o.insert("x_grad", dx);
        }
        n if n.starts_with("repeat_interleave") => {
            let r = Repeats::Each(int("repeats"));
            let (x, g) = (t("x"), t("out_grad"));
            o.insert("out", repeat::repeat_interleave(x, r, int("axis")).unwrap());
            let dx = repeat::repeat_interleave_grad(x, r, g, int("axis")).unwrap();
            o.insert("x_grad", dx);
        }
        other => panic!("no runner for recorded case {other}"),
    }
    o
}

#[test]
fn every_recorded_misc_kernel_matches_paddle() {
    check_recorded("paddle_misc_kernels.json", 22, run_case);
}
