//! The kernels the GPT, LLaMA, MoE, WGAN-GP, spectral-norm and CTC models lacked, against the numbers Paddle 3.3.1
//! computed for the same inputs (`tests/exec_fixtures/paddle_rope_moe_kernels.json`, recorded
//! once by `paddle_rope_moe_kernels.py`): forward outputs and gradients for the recorded
//! `out_grad`, within `|a−b| ≤ 1e-5·|b| + 1e-5·max|b|`.

use std::collections::BTreeMap;

use super::kernels_paddle_models::{check_recorded, Outputs};
use crate::exec::kernels::{
    activation as act, ctc, elementwise as ew, gather_scatter as gs, index, matmul, shape,
    spectral_norm as sn, trig,
};
use crate::exec::Tensor;
use serde_json::Value;

fn run_case(name: &str, i: &BTreeMap<String, Tensor>, a: &Value) -> Outputs {
    let t = |k: &str| &i[k];
    let flag = |k: &str| a[k].as_bool().expect("bool attr");
    let mut o = Outputs::new();
    match name {
        n if n.starts_with("cos") || n.starts_with("sin") => {
            let (x, g) = (t("x"), t("out_grad"));
            let (out, dx) = if n.starts_with("cos") {
                (trig::cos(x).unwrap(), trig::cos_grad(x, g).unwrap())
            } else {
                (trig::sin(x).unwrap(), trig::sin_grad(x, g).unwrap())
            };
            o.insert("out", out);
            o.insert("x_grad", dx);
        }
        n if n.starts_with("masked_fill") => {
            let (x, m, v, g) = (t("x"), t("mask"), t("value"), t("out_grad"));
            o.insert("out", index::masked_fill(x, m, v).unwrap());
            let (dx, dv) = index::masked_fill_grad(x, m, v, g).unwrap();
            o.insert("x_grad", dx);
            o.insert("value_grad", dv);
        }
        n if n.starts_with("nonzero") => {
            o.insert("out", index::nonzero(t("condition")).unwrap());
        }
        n if n.starts_with("numel") => {
            o.insert("out", shape::numel_of(t("x")));
        }
        n if n.starts_with("scatter_nd_add") => {
            let (x, idx, up, g) = (t("x"), t("index"), t("updates"), t("out_grad"));
            o.insert("out", gs::scatter_nd_add(x, idx, up).unwrap());
            let (dx, du) = gs::scatter_nd_add_grad(idx, up, g).unwrap();
            o.insert("x_grad", dx);
            o.insert("updates_grad", du);
        }
        n if n.starts_with("spectral_norm") => {
            let at = sn::SpectralNormAttrs {
                dim: a["dim"].as_i64().expect("dim"),
                power_iters: a["power_iters"].as_i64().expect("power_iters"),
                eps: a["eps"].as_f64().expect("eps") as f32,
            };
            let (w, u, v, g) = (t("weight"), t("u"), t("v"), t("out_grad"));
            o.insert("out", sn::spectral_norm(w, u, v, at).unwrap());
            o.insert(
                "weight_grad",
                sn::spectral_norm_grad(w, u, v, g, at).unwrap(),
            );
        }
        n if n.starts_with("warpctc") => {
            let (x, lab) = (t("logits"), t("label"));
            let (tl, ll) = (i.get("logits_length"), i.get("labels_length"));
            let blank = a["blank"].as_i64().expect("blank");
            let (loss, g) = ctc::warpctc(x, lab, tl, ll, blank).unwrap();
            let dx = ctc::warpctc_grad(x, tl, &g, t("loss_grad"), flag("norm_by_times")).unwrap();
            o.insert("loss", loss);
            o.insert("warpctcgrad", g);
            o.insert("logits_grad", dx);
        }
        n if n.starts_with("tanh_double_grad") => {
            let (dout, ddout) =
                act::tanh_double_grad(t("out"), t("grad_out"), t("grad_x_grad")).unwrap();
            o.insert("out_grad", dout);
            o.insert("grad_out_grad", ddout);
        }
        n if n.starts_with("add_double_grad") => {
            let ddx = Some(t("grad_x_grad"));
            let ddy = Some(t("grad_y_grad"));
            let axis = a["axis"].as_i64().expect("axis");
            let ddout = ew::add_double_grad(t("grad_out"), ddx, ddy, axis).unwrap();
            o.insert("grad_out_grad", ddout.expect("a result"));
        }
        n if n.starts_with("matmul_double_grad") => {
            let (x, y, dout) = (t("x"), t("y"), t("grad_out"));
            let (ddx, ddy) = (Some(t("grad_x_grad")), Some(t("grad_y_grad")));
            let (tx, ty) = (flag("transpose_x"), flag("transpose_y"));
            let (dx, dy, ddout) = matmul::matmul_double_grad(x, y, dout, ddx, ddy, tx, ty).unwrap();
            o.insert("x_grad", dx);
            o.insert("y_grad", dy);
            o.insert("grad_out_grad", ddout);
        }
        other => panic!("no runner for recorded case {other}"),
    }
    o
}

#[test]
fn every_recorded_rope_and_moe_kernel_matches_paddle() {
    check_recorded("paddle_rope_moe_kernels.json", 43, run_case);
}
