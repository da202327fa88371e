//! `dropout` and `dropout_grad` where they are deterministic, with Paddle's semantics.
//!
//! Semantics (Paddle's `DropoutRawKernel`): with `is_test`, `out = x·(1 − p)` under
//! `downgrade_in_infer` (Python's `downscale_in_infer`) and `out = x` under
//! `upscale_in_train`, and no mask is made; in training a `uint8` mask keeps each element with
//! probability `1 − p`, `out = x·mask` (`downgrade_in_infer`) or `x·mask/(1 − p)`
//! (`upscale_in_train`), and `p = 1` drops everything. The backward multiplies `out_grad` by the
//! same factors (`is_test`: by `1 − p` or 1).
//!
//! Why training with `0 < p < 1` is refused: the mask is random, and `irw check` compares two
//! programs' runs; two masks drawn independently would make every comparison fail (and one
//! drawn the same way in both would still differ from Paddle's generator). With `p = 0` or
//! `p = 1` the mask is all ones or all zeros, which is what this kernel computes.

use crate::exec::error::{KResult, KernelError};
use crate::exec::tensor::{Data, Tensor};
use crate::kbail;

/// How the kept elements are scaled (`mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropoutMode {
    /// `upscale_in_train`: training divides by `1 − p`, inference is the identity.
    UpscaleInTrain,
    /// `downgrade_in_infer`: training keeps values, inference multiplies by `1 − p`.
    DowngradeInInfer,
}

impl DropoutMode {
    pub fn parse(s: &str) -> KResult<DropoutMode> {
        Ok(match s {
            "upscale_in_train" => DropoutMode::UpscaleInTrain,
            "downgrade_in_infer" | "downscale_in_infer" => DropoutMode::DowngradeInInfer,
            other => kbail!(
                "dropout mode `{}` is not upscale_in_train or downgrade_in_infer",
                other
            ),
        })
    }
}

/// The factor `out = x · factor` (in training: for a kept element).
fn factor(p: f32, is_test: bool, mode: DropoutMode) -> f32 {
    match (is_test, mode) {
        (true, DropoutMode::DowngradeInInfer) => 1.0 - p,
        (true, DropoutMode::UpscaleInTrain) => 1.0,
        (false, DropoutMode::DowngradeInInfer) => 1.0,
        (false, DropoutMode::UpscaleInTrain) if p < 1.0 => 1.0 / (1.0 - p),
        (false, DropoutMode::UpscaleInTrain) => 0.0,
    }
}

fn check_p(p: f32, is_test: bool) -> KResult<()> {
    if !(0.0..=1.0).contains(&p) {
        kbail!("dropout probability p = {} is not in [0, 1]", p);
    }
    if !is_test && p > 0.0 && p < 1.0 {
        return Err(KernelError::new(format!(
            "dropout with p = {p} in training draws a random mask: two runs (the original and the rewritten program) would drop different elements, so irw does not execute it"
        ))
        .with_hint("check the program with dropout p = 0 (or is_test: true); a rewrite that leaves the forward alone is exercised all the same"));
    }
    Ok(())
}

fn scaled(x: &Tensor, f: f32) -> KResult<Tensor> {
    if !x.dtype().is_float() {
        kbail!(
            "dropout computes float tensors, got {}",
            x.dtype().attr_name()
        );
    }
    let v: Vec<f32> = x.to_f32().iter().map(|&a| a * f).collect();
    Tensor::from_f32_as(x.shape(), v, x.dtype())
}

/// `dropout(x)`: (out, mask); the mask is `None` with `is_test`.
pub fn dropout(
    x: &Tensor,
    p: f32,
    is_test: bool,
    mode: DropoutMode,
) -> KResult<(Tensor, Option<Tensor>)> {
    check_p(p, is_test)?;
    let keep = p < 1.0;
    let f = if is_test || keep {
        factor(p, is_test, mode)
    } else {
        0.0
    };
    let out = scaled(x, f)?;
    let mask = (!is_test)
        .then(|| Tensor::new(x.shape().to_vec(), Data::U8(vec![keep as u8; x.numel()])))
        .transpose()?;
    Ok((out, mask))
}

/// `dropout_grad(mask, out_grad)`.
pub fn dropout_grad(
    mask: &Tensor,
    out_grad: &Tensor,
    p: f32,
    is_test: bool,
    mode: DropoutMode,
) -> KResult<Tensor> {
    if !(0.0..=1.0).contains(&p) {
        kbail!("dropout probability p = {} is not in [0, 1]", p);
    }
    if is_test {
        return scaled(out_grad, factor(p, true, mode));
    }
    if mask.shape() != out_grad.shape() {
        kbail!(
            "mask has shape {:?}, out_grad {:?}",
            mask.shape(),
            out_grad.shape()
        );
    }
    let f = factor(p, false, mode);
    let m = mask.to_f32();
    let v: Vec<f32> = out_grad
        .to_f32()
        .iter()
        .zip(m.iter())
        .map(|(&g, &k)| g * k * f)
        .collect();
    Tensor::from_f32_as(out_grad.shape(), v, out_grad.dtype())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::kernels::testdata::{paddle_case, seq_d, seq_x, Close};

    #[test]
    fn matches_paddle() {
        for name in [
            "dropout_p0_train",
            "dropout_test_downgrade",
            "dropout_test_upscale",
        ] {
            let case = paddle_case(name);
            let p = case["p"].as_f64().unwrap() as f32;
            let is_test = case["is_test"].as_bool().unwrap();
            let mode = DropoutMode::parse(case["mode"].as_str().unwrap()).unwrap();
            let x = Tensor::f32(&[2, 5], seq_x(10));
            let (out, mask) = dropout(&x, p, is_test, mode).unwrap();
            Close::new(1e-6).paddle(name, "out", &out, &case);
            let mask = mask.unwrap_or_else(|| Tensor::new(vec![0], Data::U8(vec![])).unwrap());
            let dy = Tensor::f32(&[2, 5], seq_d(10));
            let dx = dropout_grad(&mask, &dy, p, is_test, mode).unwrap();
            Close::new(1e-6).paddle(name, "x_grad", &dx, &case);
        }
    }

    #[test]
    fn random_masks_are_refused_and_p1_drops_everything() {
        let x = Tensor::f32(&[3], vec![1.0, 2.0, 3.0]);
        let e = dropout(&x, 0.5, false, DropoutMode::UpscaleInTrain).unwrap_err();
        assert!(e.message.contains("random mask"), "{}", e.message);
        assert!(dropout(&x, 1.5, true, DropoutMode::UpscaleInTrain).is_err());
        let (out, mask) = dropout(&x, 1.0, false, DropoutMode::UpscaleInTrain).unwrap();
        assert_eq!(out.to_f64_vec(), vec![0.0; 3]);
        assert_eq!(mask.unwrap().data(), &Data::U8(vec![0; 3]));
    }
}
