//! Piecewise-linear activations and their `_grad` ops: leaky_relu, relu6, hardswish,
//! hardsigmoid, abs, clip, hardtanh, softshrink, hardshrink, thresholded_relu; and `sign`, the
//! piecewise-constant slope of `abs` (what an `L1Decay` regularizer adds to the gradient).
//!
//! Their derivatives are undefined at the kinks, and each Paddle kernel picks a side there;
//! a gradient that took the other side would differ from Paddle's by a whole `dout` wherever an
//! input sits exactly on a kink (a `relu6` of a clipped value, an integer-valued feature). The
//! sides below are those Paddle 3.3.1 computes (recorded in
//! `tests/exec_fixtures/paddle_model_kernels.json`, whose inputs sit on every kink):
//!
//! | op | kinks | gradient there |
//! | --- | --- | --- |
//! | leaky_relu | x = 0 | 1 (the `x ≥ 0` side) |
//! | relu6 | out = 0, out = 6 | 0 (read from the output: `0 < out < 6`) |
//! | hardswish | x = −3, x = 3 | 0 at −3, 1 at 3 |
//! | hardsigmoid | out = 0, out = 1 | 0 (`0 < out < 1`) |
//! | abs | x = 0 | 0 (the sign of 0) |
//! | clip | x = min, x = max | 1 (`min ≤ x ≤ max`) |
//! | hardtanh | x = t_min, x = t_max | 0 (`t_min < x < t_max`) |
//! | softshrink | x = ±λ | 0 (`|x| > λ`) |
//! | hardshrink | x = ±t | 1, and `x` kept (`|x| ≥ t`, unlike softshrink) |
//! | thresholded_relu | x = threshold | 0 (`x > threshold`) |
//! | sign | x = 0 | 0 everywhere (`sign_grad` is zeros); `sign(0) = 0`, `sign(−0) = 0` |

use crate::exec::error::KResult;
use crate::exec::kernels::elementwise::{unary_f32, zip_f32};
use crate::exec::tensor::{Data, Tensor};

/// `leaky_relu(x) {negative_slope}`: `x` where `x ≥ 0`, else `slope · x`.
pub fn leaky_relu(x: &Tensor, slope: f32) -> KResult<Tensor> {
    unary_f32(x, move |v| if v >= 0.0 { v } else { slope * v })
}

/// `leaky_relu_grad(x, out_grad) {negative_slope}`.
pub fn leaky_relu_grad(x: &Tensor, dout: &Tensor, slope: f32) -> KResult<Tensor> {
    zip_f32(x, dout, move |v, g| if v >= 0.0 { g } else { g * slope })
}

/// `relu6(x)`: `min(max(x, 0), 6)`.
pub fn relu6(x: &Tensor) -> KResult<Tensor> {
    unary_f32(x, |v| v.clamp(0.0, 6.0))
}

/// `relu6_grad(out, out_grad)`.
pub fn relu6_grad(out: &Tensor, dout: &Tensor) -> KResult<Tensor> {
    zip_f32(out, dout, |o, g| if o > 0.0 && o < 6.0 { g } else { 0.0 })
}

/// `hardswish(x)`: `x · min(max(x + 3, 0), 6) / 6`.
pub fn hardswish(x: &Tensor) -> KResult<Tensor> {
    unary_f32(x, |v| (v + 3.0).clamp(0.0, 6.0) * v / 6.0)
}

/// `hardswish_grad(x, out_grad)`: `dout · (2x + 3) / 6` on `−3 < x < 3`, `dout` from 3 up.
pub fn hardswish_grad(x: &Tensor, dout: &Tensor) -> KResult<Tensor> {
    zip_f32(x, dout, |v, g| {
        let shifted = v + 3.0;
        if shifted >= 6.0 {
            g
        } else if shifted > 0.0 {
            g * (2.0 * v + 3.0) / 6.0
        } else {
            0.0
        }
    })
}

/// `hardsigmoid(x) {slope, offset}`: `min(max(slope · x + offset, 0), 1)`.
pub fn hardsigmoid(x: &Tensor, slope: f32, offset: f32) -> KResult<Tensor> {
    unary_f32(x, move |v| (v * slope + offset).clamp(0.0, 1.0))
}

/// `hardsigmoid_grad(out, out_grad) {slope, offset}`.
pub fn hardsigmoid_grad(out: &Tensor, dout: &Tensor, slope: f32) -> KResult<Tensor> {
    zip_f32(
        out,
        dout,
        move |o, g| {
            if o > 0.0 && o < 1.0 {
                g * slope
            } else {
                0.0
            }
        },
    )
}

/// `abs(x)`.
pub fn abs(x: &Tensor) -> KResult<Tensor> {
    unary_f32(x, f32::abs)
}

/// `sign(x)`: −1, 0 or 1, in `x`'s dtype (integers stay integers, as Paddle's kernel keeps them).
pub fn sign(x: &Tensor) -> KResult<Tensor> {
    let s = |v: f64| {
        if v > 0.0 {
            1.0
        } else if v < 0.0 {
            -1.0
        } else {
            0.0
        }
    };
    if x.dtype().is_float() {
        return unary_f32(x, move |v| s(v as f64) as f32);
    }
    let v: Vec<f64> = x.to_f64_vec().into_iter().map(s).collect();
    Tensor::new(x.shape().to_vec(), Data::F64(v).cast(x.dtype()))
}

/// `sign_grad(out_grad)`: zeros (the slope is 0 wherever it is defined).
pub fn sign_grad(dout: &Tensor) -> KResult<Tensor> {
    Tensor::try_full(dout.shape(), dout.dtype(), 0.0)
}

/// `abs_grad(x, out_grad)`: `dout · sign(x)`, 0 at 0.
pub fn abs_grad(x: &Tensor, dout: &Tensor) -> KResult<Tensor> {
    zip_f32(x, dout, |v, g| {
        if v > 0.0 {
            g
        } else if v < 0.0 {
            -g
        } else {
            0.0
        }
    })
}

/// `clip(x, min, max)`: `x` held to `[min, max]`.
pub fn clip(x: &Tensor, min: f32, max: f32) -> KResult<Tensor> {
    unary_f32(x, move |v| {
        if v < min {
            min
        } else if v > max {
            max
        } else {
            v
        }
    })
}

/// `clip_grad(x, out_grad, min, max)`: `dout` on `[min, max]`, bounds included.
pub fn clip_grad(x: &Tensor, dout: &Tensor, min: f32, max: f32) -> KResult<Tensor> {
    zip_f32(
        x,
        dout,
        move |v, g| if v >= min && v <= max { g } else { 0.0 },
    )
}

/// `hardtanh(x) {t_min, t_max}`: `x` held to `[t_min, t_max]`.
pub fn hardtanh(x: &Tensor, t_min: f32, t_max: f32) -> KResult<Tensor> {
    unary_f32(x, move |v| v.max(t_min).min(t_max))
}

/// `hardtanh_grad(x, out_grad) {t_min, t_max}`: `dout` strictly inside the bounds.
pub fn hardtanh_grad(x: &Tensor, dout: &Tensor, t_min: f32, t_max: f32) -> KResult<Tensor> {
    zip_f32(
        x,
        dout,
        move |v, g| if v > t_min && v < t_max { g } else { 0.0 },
    )
}

/// `softshrink(x) {threshold}`: `x ∓ λ` beyond `±λ`, 0 between.
pub fn softshrink(x: &Tensor, lambda: f32) -> KResult<Tensor> {
    unary_f32(x, move |v| {
        if v > lambda {
            v - lambda
        } else if v < -lambda {
            v + lambda
        } else {
            0.0
        }
    })
}

/// `softshrink_grad(x, out_grad) {threshold}`: `dout` where `|x| > λ`.
pub fn softshrink_grad(x: &Tensor, dout: &Tensor, lambda: f32) -> KResult<Tensor> {
    zip_f32(
        x,
        dout,
        move |v, g| {
            if v > lambda || v < -lambda {
                g
            } else {
                0.0
            }
        },
    )
}

/// `hardshrink(x) {threshold}`: `x` where `|x| ≥ t`, 0 elsewhere.
pub fn hardshrink(x: &Tensor, t: f32) -> KResult<Tensor> {
    unary_f32(x, move |v| if v >= t || v <= -t { v } else { 0.0 })
}

/// `hardshrink_grad(x, out_grad) {threshold}`: `dout` where `|x| ≥ t`.
pub fn hardshrink_grad(x: &Tensor, dout: &Tensor, t: f32) -> KResult<Tensor> {
    zip_f32(x, dout, move |v, g| if v >= t || v <= -t { g } else { 0.0 })
}

/// `thresholded_relu(x) {threshold, value}`: `x` above the threshold, `value` elsewhere.
pub fn thresholded_relu(x: &Tensor, threshold: f32, value: f32) -> KResult<Tensor> {
    unary_f32(x, move |v| if v > threshold { v } else { value })
}

/// `thresholded_relu_grad(x, out_grad) {threshold, value}`: `dout` above the threshold.
pub fn thresholded_relu_grad(x: &Tensor, dout: &Tensor, threshold: f32) -> KResult<Tensor> {
    zip_f32(x, dout, move |v, g| if v > threshold { g } else { 0.0 })
}
