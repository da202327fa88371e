//! irw's kernels against the numbers Paddle 3.3.1 computed for the same inputs
//! (`tests/exec_fixtures/paddle_kernels.json`, recorded once by `paddle_kernels.py`): forward
//! outputs and the gradients for the recorded `out_grad`, within `|a−b| ≤ 1e-5·|b| +
//! 1e-5·max|b|`.

use std::collections::BTreeMap;

use crate::exec::dtype::DType;
use crate::exec::kernels::{
    activation as act, index, join, layer_norm as ln, reduce, repeat, shape,
};
use crate::exec::Tensor;
use serde_json::Value;

use super::kernels_paddle_models::{check_recorded, Outputs};

fn run_case(name: &str, i: &BTreeMap<String, Tensor>, a: &Value) -> Outputs {
    let t = |k: &str| &i[k];
    let int = |k: &str| a[k].as_i64().expect("int attr");
    let ints = |k: &str| -> Vec<i64> {
        a[k].as_array()
            .expect("list attr")
            .iter()
            .map(|v| v.as_i64().expect("int"))
            .collect()
    };
    let num = |k: &str| a[k].as_f64().expect("number attr");
    let mut o = Outputs::new();
    match name {
        "layer_norm" | "layer_norm_noparams" => {
            let (scale, bias) = (i.get("scale"), i.get("bias"));
            let (eps, axis) = (num("epsilon") as f32, int("begin_norm_axis"));
            let (out, mean, var) = ln::layer_norm(t("x"), scale, bias, eps, axis).unwrap();
            let g = ln::layer_norm_grad(t("x"), scale, bias, &mean, &var, t("out_grad"), eps, axis)
                .unwrap();
            o.insert("out", out);
            o.insert("mean", mean);
            o.insert("variance", var);
            o.insert("x_grad", g.x_grad);
            if let Some(s) = g.scale_grad {
                o.insert("scale_grad", s);
            }
            if let Some(b) = g.bias_grad {
                o.insert("bias_grad", b);
            }
        }
        "squared_l2_norm" => {
            o.insert("out", reduce::squared_l2_norm(t("x")).unwrap());
        }
        "clip_by_norm" => {
            o.insert(
                "out",
                reduce::clip_by_norm(t("x"), num("max_norm") as f32).unwrap(),
            );
        }
        "gather" => {
            let ax = int("axis");
            o.insert("out", index::gather(t("x"), t("index"), ax).unwrap());
            o.insert(
                "x_grad",
                index::gather_grad(t("x"), t("index"), t("out_grad"), ax).unwrap(),
            );
        }
        "embedding" => {
            let p = int("padding_idx");
            o.insert("out", index::embedding(t("x"), t("weight"), p).unwrap());
            o.insert(
                "weight_grad",
                index::embedding_grad(t("x"), t("weight"), t("out_grad"), p).unwrap(),
            );
        }
        "where" => {
            o.insert(
                "out",
                index::where_(t("condition"), t("x"), t("y")).unwrap(),
            );
            let (dx, dy) =
                index::where_grad(t("condition"), t("x"), t("y"), t("out_grad")).unwrap();
            o.insert("x_grad", dx);
            o.insert("y_grad", dy);
        }
        "expand" => {
            o.insert("out", repeat::expand(t("x"), &ints("shape")).unwrap());
            o.insert(
                "x_grad",
                repeat::expand_grad(t("x"), t("out_grad")).unwrap(),
            );
        }
        "tile" => {
            let r = ints("repeat_times");
            o.insert("out", repeat::tile(t("x"), &r).unwrap());
            o.insert(
                "x_grad",
                repeat::tile_grad(t("x"), t("out_grad"), &r).unwrap(),
            );
        }
        "triu" | "tril" => {
            o.insert(
                "out",
                index::triangle(t("x"), int("diagonal"), name == "triu").unwrap(),
            );
        }
        "arange" => {
            let s = |k: &str| Tensor::full(&[1], DType::F64, num(k));
            o.insert(
                "out",
                shape::arange(&s("start"), &s("end"), &s("step"), DType::F32).unwrap(),
            );
        }
        "pow" => {
            let y = num("y") as f32;
            o.insert("out", act::pow(t("x"), y).unwrap());
            o.insert("x_grad", act::pow_grad(t("x"), t("out_grad"), y).unwrap());
        }
        "rsqrt" => {
            let out = act::rsqrt(t("x")).unwrap();
            o.insert("x_grad", act::rsqrt_grad(&out, t("out_grad")).unwrap());
            o.insert("out", out);
        }
        "silu" => {
            o.insert("out", act::silu(t("x")).unwrap());
            o.insert("x_grad", act::silu_grad(t("x"), t("out_grad")).unwrap());
        }
        "swiglu" => {
            o.insert("out", act::swiglu(t("x"), Some(t("y"))).unwrap());
            let (dx, dy) = act::swiglu_grad(t("x"), Some(t("y")), t("out_grad")).unwrap();
            o.insert("x_grad", dx);
            o.insert("y_grad", dy.expect("dy"));
        }
        "slice" => {
            let (axes, starts, ends) = (ints("axes"), ints("starts"), ints("ends"));
            o.insert(
                "out",
                shape::slice(t("x"), &axes, &starts, &ends, &[]).unwrap(),
            );
            o.insert(
                "x_grad",
                shape::slice_grad(t("x"), t("out_grad"), &axes, &starts, &ends, &[]).unwrap(),
            );
        }
        "stack" => {
            let ax = int("axis");
            o.insert("out", join::stack(&[t("x0"), t("x1")], ax).unwrap());
            let mut g = join::stack_grad(2, t("out_grad"), ax).unwrap().into_iter();
            o.insert("x0_grad", g.next().expect("x0"));
            o.insert("x1_grad", g.next().expect("x1"));
        }
        other => panic!("no runner for recorded case {other}"),
    }
    o
}

#[test]
fn every_recorded_case_matches_paddle() {
    check_recorded("paddle_kernels.json", 18, run_case);
}
