//! Element-wise losses and their grads: `huber_loss` and `sigmoid_cross_entropy_with_logits`.
//! (The softmax cross entropy, a reduction over classes, is `softmax.rs`.)
//!
//! `huber_loss` returns the residual `label − input` as a second result, and its grad reads only
//! that residual: quadratic within `δ` (`½r²`), linear beyond (`δ·(|r| − ½δ)`), the boundary
//! `|r| = δ` on the quadratic side.
//!
//! `sigmoid_cross_entropy_with_logits` is `max(x, 0) − x·label + log(1 + e^(−|x|))` written so no
//! exponential overflows; elements whose label equals `ignore_index` contribute 0, and
//! `normalize` divides by the number of the others (at least 1). With `pos_weight` `w` the loss
//! is `(1 − label)·x + w·log(1 + e^(−x))` (the log term again written around `m = max(−x, 0)`):
//! `w` weighs the whole positive term, which is how `binary_cross_entropy_with_logits` passes
//! its `1 + (pos_weight − 1)·label` down to the op.

use crate::exec::dtype::DType;
use crate::exec::error::KResult;
use crate::exec::tensor::Tensor;
use crate::kbail;

fn float_dtype(d: DType) -> DType {
    if d.is_float() {
        d
    } else {
        DType::F32
    }
}

fn same_shape(a: &Tensor, b: &Tensor, what: &str, op: &str) -> KResult<()> {
    if a.shape() != b.shape() {
        kbail!(
            "{}: {} {:?} is not the shape of the input {:?}",
            op,
            what,
            b.shape(),
            a.shape()
        );
    }
    Ok(())
}

/// `huber_loss(input, label) {delta}`: `(out, residual)`.
pub fn huber_loss(input: &Tensor, label: &Tensor, delta: f32) -> KResult<(Tensor, Tensor)> {
    same_shape(input, label, "label", "huber_loss")?;
    let (x, y) = (input.to_f32(), label.to_f32());
    let r: Vec<f32> = y.iter().zip(x.iter()).map(|(&y, &x)| y - x).collect();
    let out = r
        .iter()
        .map(|&v| {
            let a = v.abs();
            if a <= delta {
                0.5 * v * v
            } else {
                delta * (a - 0.5 * delta)
            }
        })
        .collect();
    let dt = float_dtype(input.dtype());
    Ok((
        Tensor::from_f32_as(input.shape(), out, dt)?,
        Tensor::from_f32_as(input.shape(), r, dt)?,
    ))
}

/// `huber_loss_grad(residual, out_grad) {delta}`: `(input_grad, label_grad)`, each `±dout` times
/// the residual held to `[−δ, δ]`.
pub fn huber_loss_grad(residual: &Tensor, dout: &Tensor, delta: f32) -> KResult<(Tensor, Tensor)> {
    same_shape(residual, dout, "out_grad", "huber_loss_grad")?;
    let (r, g) = (residual.to_f32(), dout.to_f32());
    let d: Vec<f32> = r
        .iter()
        .zip(g.iter())
        .map(|(&v, &g)| {
            let slope = if v.abs() <= delta {
                v
            } else if v > 0.0 {
                delta
            } else {
                -delta
            };
            slope * g
        })
        .collect();
    let neg = d.iter().map(|v| -v).collect();
    let dt = float_dtype(residual.dtype());
    Ok((
        Tensor::from_f32_as(residual.shape(), neg, dt)?,
        Tensor::from_f32_as(residual.shape(), d, dt)?,
    ))
}

/// `sigmoid_cross_entropy_with_logits`'s attributes.
#[derive(Clone, Copy, Debug)]
pub struct SigmoidCeAttrs {
    pub normalize: bool,
    pub ignore_index: i64,
}

/// The divisor `normalize` asks for: the count of labels other than `ignore_index`, at least 1.
fn norm(label: &[f32], at: SigmoidCeAttrs) -> f32 {
    if !at.normalize {
        return 1.0;
    }
    let ignore = at.ignore_index as f32;
    let n = label.iter().filter(|&&l| (l - ignore).abs() > 1e-6).count();
    n.max(1) as f32
}

fn ignored(label: f32, at: SigmoidCeAttrs) -> bool {
    label as i64 == at.ignore_index
}

fn pos_weights(x: &Tensor, pos_weight: Option<&Tensor>, op: &str) -> KResult<Option<Vec<f32>>> {
    match pos_weight {
        None => Ok(None),
        Some(w) => {
            same_shape(x, w, "pos_weight", op)?;
            Ok(Some(w.to_f32().into_owned()))
        }
    }
}

/// `sigmoid_cross_entropy_with_logits(x, label, pos_weight) {normalize, ignore_index}`.
pub fn sigmoid_ce(
    x: &Tensor,
    label: &Tensor,
    pos_weight: Option<&Tensor>,
    at: SigmoidCeAttrs,
) -> KResult<Tensor> {
    let op = "sigmoid_cross_entropy_with_logits";
    same_shape(x, label, "label", op)?;
    let w = pos_weights(x, pos_weight, op)?;
    let (xs, ls) = (x.to_f32(), label.to_f32());
    let n = norm(&ls, at);
    let out = (0..xs.len())
        .map(|i| {
            let (v, l) = (xs[i], ls[i]);
            if ignored(l, at) {
                return 0.0;
            }
            let loss = match &w {
                None => v.max(0.0) - v * l + (1.0 + (-v.abs()).exp()).ln(),
                Some(w) => {
                    let m = (-v).max(0.0);
                    (1.0 - l) * v + w[i] * (((-m).exp() + (-v - m).exp()).ln() + m)
                }
            };
            loss / n
        })
        .collect();
    Tensor::from_f32_as(x.shape(), out, float_dtype(x.dtype()))
}

/// `sigmoid_cross_entropy_with_logits_grad(x, label, pos_weight, out_grad)`: without
/// `pos_weight`, `dout · (σ(x) − label)` (as Paddle writes it, from `e^(−|x|)`).
pub fn sigmoid_ce_grad(
    x: &Tensor,
    label: &Tensor,
    pos_weight: Option<&Tensor>,
    dout: &Tensor,
    at: SigmoidCeAttrs,
) -> KResult<Tensor> {
    let op = "sigmoid_cross_entropy_with_logits_grad";
    same_shape(x, label, "label", op)?;
    same_shape(x, dout, "out_grad", op)?;
    let w = pos_weights(x, pos_weight, op)?;
    let (xs, ls, g) = (x.to_f32(), label.to_f32(), dout.to_f32());
    let n = norm(&ls, at);
    let dx = (0..xs.len())
        .map(|i| {
            let (v, l) = (xs[i], ls[i]);
            if ignored(l, at) {
                return 0.0;
            }
            let diff = match &w {
                None => {
                    let e = (-v.abs()).exp();
                    let sign = if v >= 0.0 { 1.0 } else { -1.0 };
                    let step = if v > 0.0 { 1.0 } else { 0.0 };
                    step - l - e * sign / (1.0 + e)
                }
                Some(w) => {
                    let m = if v < 0.0 { -v } else { 0.0 };
                    let t1 = if v < 0.0 { -1.0 } else { 0.0 };
                    let (d1, d2) = ((-m).exp(), (-v - m).exp());
                    let t2 = d1 * -t1 + d2 * (-1.0 - t1);
                    w[i] * (t2 / (d1 + d2) + t1) + (1.0 - l)
                }
            };
            g[i] * diff / n
        })
        .collect();
    Tensor::from_f32_as(x.shape(), dx, float_dtype(x.dtype()))
}
