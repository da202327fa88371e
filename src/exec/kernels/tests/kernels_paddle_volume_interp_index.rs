//! The volume, upsampling and indexing kernels the tested models lacked (conv3d, bicubic_interp, put_along_axis's mean/amin/amax, index_put, pool2d's adaptive average to a larger output), against the
//! numbers Paddle 3.3.1 computed for the same inputs
//! (`tests/exec_fixtures/paddle_volume_interp_index_kernels.json`, recorded once by
//! `paddle_volume_interp_index_kernels.py`): forward outputs and the gradients for the recorded
//! `out_grad`, within `|a−b| ≤ 1e-5·|b| + 1e-5·max|b|`.

use std::collections::BTreeMap;

use super::kernels_paddle_models::{check_recorded, Outputs};
use crate::exec::kernels::{conv, conv3d, gather_scatter as gs, index_put, interp, pool};
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
                channels_last: crate::exec::kernels::conv::channels_last_3d(
                    word("data_format"),
                    "conv3d",
                )
                .unwrap(),
            };
            let (x, w) = (t("input"), t("filter"));
            o.insert("out", conv3d::conv3d(x, w, &at).unwrap());
            let (dx, dw) = conv3d::conv3d_grad(x, w, t("out_grad"), &at).unwrap();
            o.insert("input_grad", dx);
            o.insert("filter_grad", dw);
        }
        n if n.starts_with("bicubic") => {
            let at = interp::InterpAttrs {
                method: interp::InterpAttrs::method("bicubic", "NCHW").unwrap(),
                out_h: a["out_h"].as_i64().expect("out_h"),
                out_w: a["out_w"].as_i64().expect("out_w"),
                scale: a["scale"]
                    .as_array()
                    .expect("scale")
                    .iter()
                    .map(|v| v.as_f64().expect("a number") as f32)
                    .collect(),
                align_corners: a["align_corners"].as_bool().expect("align_corners"),
                align_mode: a["align_mode"].as_i64().expect("align_mode"),
                out_size: None,
                size_tensor: None,
                scale_tensor: None,
            };
            let x = t("x");
            o.insert("output", interp::interp(x, &at).unwrap());
            o.insert(
                "x_grad",
                interp::interp_grad(x, t("out_grad"), &at).unwrap(),
            );
        }
        n if n.starts_with("put_along_axis") => {
            let at = gs::PutAttrs {
                axis: a["axis"].as_i64().expect("axis"),
                reduce: gs::PutReduce::parse(word("reduce")).unwrap(),
                include_self: a["include_self"].as_bool().expect("include_self"),
            };
            let (arr, idx, v) = (t("arr"), t("indices"), t("values"));
            o.insert("out", gs::put_along_axis(arr, idx, v, at).unwrap());
            let (da, dv) = gs::put_along_axis_grad(arr, idx, v, t("out_grad"), at).unwrap();
            o.insert("arr_grad", da);
            o.insert("values_grad", dv);
        }
        n if n.starts_with("index_put") => {
            let acc = a["accumulate"].as_bool().expect("accumulate");
            let idx: Vec<&Tensor> = (0..).map_while(|k| i.get(&format!("index{k}"))).collect();
            let (x, v) = (t("x"), t("value"));
            o.insert("out", index_put::index_put(x, &idx, v, acc).unwrap());
            let (dx, dv) = index_put::index_put_grad(x, &idx, v, t("out_grad"), acc).unwrap();
            o.insert("x_grad", dx);
            o.insert("value_grad", dv);
        }
        n if n.starts_with("pool2d_adaptive") => {
            let (kind, channels_last) =
                pool::PoolAttrs::kind_and_layout(word("pooling_type"), word("data_format"))
                    .unwrap();
            let at = pool::PoolAttrs {
                kind,
                kernel_size: ints(a, "kernel_size"),
                strides: vec![1, 1],
                paddings: vec![0, 0],
                ceil_mode: false,
                exclusive: true,
                adaptive: true,
                global_pooling: false,
                padding_algorithm: conv::PaddingAlgorithm::Explicit,
                channels_last,
            };
            let x = t("x");
            let out = pool::pool2d(x, &at).unwrap();
            let dx = pool::pool2d_grad(x, &out, t("out_grad"), &at).unwrap();
            o.insert("out", out);
            o.insert("x_grad", dx);
        }
        other => panic!("no runner for recorded case {other}"),
    }
    o
}

#[test]
fn every_recorded_volume_interp_index_kernel_matches_paddle() {
    check_recorded("paddle_volume_interp_index_kernels.json", 53, run_case);
}
