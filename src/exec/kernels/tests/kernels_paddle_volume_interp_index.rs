//! The volume, upsampling and indexing kernels the tested models lacked (conv3d), against the
//! numbers Paddle 3.3.1 computed for the same inputs
//! (`tests/exec_fixtures/paddle_volume_interp_index_kernels.json`, recorded once by
//! `paddle_volume_interp_index_kernels.py`): forward outputs and the gradients for the recorded
//! `out_grad`, within `|a−b| ≤ 1e-5·|b| + 1e-5·max|b|`.

use std::collections::BTreeMap;

use super::kernels_paddle_models::{check_recorded, Outputs};
use crate::exec::kernels::{conv, conv3d};
use crate::exec::Tensor;
use serde_json::Value;

fn ints(a: &Value, k: &str) -> Vec<i64> {
    a[k].as_array()
        .unwrap_or_else(|| panic!("{k} is an array"))
        .iter()
        .map(|v| v.as_i64().expect("an integer"))
        .collect()
}

fn run_case(name: &str, i: &BTreeMap<String, Tensor>, a: &Value) -> Outputs {
    let t = |k: &str| &i[k];
    let word = |k: &str| a[k].as_str().expect("string attr");
    let mut o = Outputs::new();
    match name {
        n if n.starts_with("conv3d") => {
            let at = conv::ConvAttrs {
                strides: ints(a, "strides"),
                paddings: ints(a, "paddings"),
                dilations: ints(a, "dilations"),
                groups: a["groups"].as_i64().expect("groups"),
                padding_algorithm: conv::PaddingAlgorithm::parse(word("padding_algorithm"))
                    .unwrap(),
                channels_last: conv3d::channels_last_3d(word("data_format")).unwrap(),
            };
            let (x, w) = (t("input"), t("filter"));
            o.insert("out", conv3d::conv3d(x, w, &at).unwrap());
            let (dx, dw) = conv3d::conv3d_grad(x, w, t("out_grad"), &at).unwrap();
            o.insert("input_grad", dx);
            o.insert("filter_grad", dw);
        }
        other => panic!("no runner for recorded case {other}"),
    }
    o
}

#[test]
fn every_recorded_volume_interp_index_kernel_matches_paddle() {
    check_recorded("paddle_volume_interp_index_kernels.json", 7, run_case);
}
