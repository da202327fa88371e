//! Losses and their grads: the element-wise `huber_loss`, `sigmoid_cross_entropy_with_logits`,
//! `bce_loss` and `kldiv_loss`, and `nll_loss`, which picks one log-probability per row. (The
//! softmax cross entropy, a reduction over classes, is `softmax.rs`.)
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

//!
//! `bce_loss` is `−(l·ln x + (1 − l)·ln(1 − x))` with each log held at −100 or above, so a
//! probability of exactly 0 or 1 costs at most 100 (inputs outside `[0, 1]` are refused, as
//! Paddle refuses them); its grad divides by `max(x·(1 − x), 1e-12)`.
//!
//! `nll_loss` reads `−w[c]·input[n, c]` for each row's label `c` (of a `[N, C]` input, or of each
//! pixel of a `[N, C, H, W]` one); a label equal to `ignore_index` contributes 0 and no weight.
//! Its second result `total_weight` is the sum of the weights read under `mean` and `sum`, and 0
//! under `none` (Paddle computes it only for a reduction); `mean` divides by it unless it is 0,
//! so a batch of ignored labels gives loss 0 and gradient 0, not NaN.
//!
//! `kldiv_loss` is `l·(ln l − x)` where `l > 0` and 0 elsewhere (`log_target`: `eᴸ·(L − x)`), then
//! reduced: `none`, `sum`, `mean` (by the element count) or `batchmean` (by dimension 0).

use super::float_dtype;
use crate::exec::dtype::DType;
use crate::exec::error::KResult;
use crate::exec::tensor::Tensor;
use crate::kbail;

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

/// The reduction a loss applies to its element-wise terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    None,
    Mean,
    Sum,
    /// `kldiv_loss` only: the sum divided by dimension 0.
    BatchMean,
}

impl Reduction {
    /// Paddle's spelling; `batchmean` only where `op` takes it.
    pub fn parse(s: &str, op: &str) -> KResult<Reduction> {
        Ok(match s {
            "none" => Reduction::None,
            "mean" => Reduction::Mean,
            "sum" => Reduction::Sum,
            "batchmean" if op == "kldiv_loss" => Reduction::BatchMean,
            other => kbail!("{}: reduction {:?} is not one of Paddle's", op, other),
        })
    }
}

/// `bce_loss(input, label)`.
pub fn bce_loss(input: &Tensor, label: &Tensor) -> KResult<Tensor> {
    same_shape(input, label, "label", "bce_loss")?;
    let (x, l) = (input.to_f32(), label.to_f32());
    if let Some(v) = x.iter().find(|v| !(0.0..=1.0).contains(*v)) {
        kbail!("bce_loss: input {} is not a probability in [0, 1]", v);
    }
    let out = x
        .iter()
        .zip(l.iter())
        .map(|(&x, &l)| -(l * x.ln().max(-100.0) + (1.0 - l) * (1.0 - x).ln().max(-100.0)))
        .collect();
    Tensor::from_f32_as(input.shape(), out, float_dtype(input.dtype()))
}

/// `bce_loss_grad(input, label, out_grad)`: `dout · (x − l) / max(x·(1 − x), 1e-12)`.
pub fn bce_loss_grad(input: &Tensor, label: &Tensor, dout: &Tensor) -> KResult<Tensor> {
    same_shape(input, label, "label", "bce_loss_grad")?;
    same_shape(input, dout, "out_grad", "bce_loss_grad")?;
    let (x, l, g) = (input.to_f32(), label.to_f32(), dout.to_f32());
    let dx = (0..x.len())
        .map(|i| g[i] * (x[i] - l[i]) / ((1.0 - x[i]) * x[i]).max(1e-12))
        .collect();
    Tensor::from_f32_as(input.shape(), dx, float_dtype(input.dtype()))
}

/// `nll_loss`'s attributes.
#[derive(Clone, Copy, Debug)]
pub struct NllAttrs {
    pub ignore_index: i64,
    pub reduction: Reduction,
}

/// One label read: `(offset into input, weight)`, or `None` for an ignored label.
type Pick = Option<(usize, f32)>;

/// Each label's element of `input` and its weight, checked: `[N, C]` with labels `[N]`, or
/// `[N, C, H, W]` with labels `[N, H, W]`.
fn nll_picks(
    input: &Tensor,
    label: &Tensor,
    weight: Option<&Tensor>,
    at: NllAttrs,
    op: &str,
) -> KResult<Vec<Pick>> {
    let s = input.shape();
    let (n, c, plane) = match s {
        [n, c] => (*n, *c, 1),
        [n, c, h, w] => (*n, *c, h * w),
        _ => kbail!("{}: input must be [N, C] or [N, C, H, W], is {:?}", op, s),
    };
    let want: Vec<usize> = if s.len() == 2 {
        vec![n]
    } else {
        vec![n, s[2], s[3]]
    };
    if label.shape() != want.as_slice() {
        kbail!(
            "{}: label has shape {:?}, input {:?} needs {:?}",
            op,
            label.shape(),
            s,
            want
        );
    }
    if label.dtype().is_float() || label.dtype() == DType::Bool {
        kbail!(
            "{}: label must be an integer tensor, is {}",
            op,
            label.dtype().attr_name()
        );
    }
    let w = match weight {
        Some(w) if w.shape() != [c] => {
            kbail!("{}: weight has shape {:?}, expected [{}]", op, w.shape(), c)
        }
        Some(w) => Some(w.to_f32()),
        None => None,
    };
    label
        .to_i64_vec()
        .into_iter()
        .enumerate()
        .map(|(k, cls)| {
            if cls == at.ignore_index {
                return Ok(None);
            }
            let Some(ci) = usize::try_from(cls).ok().filter(|&ci| ci < c) else {
                kbail!("{}: label {} is out of range 0..{}", op, cls, c);
            };
            let (row, pix) = (k / plane, k % plane);
            let wv = w.as_ref().map_or(1.0, |w| w[ci]);
            Ok(Some(((row * c + ci) * plane + pix, wv)))
        })
        .collect()
}

/// The total weight `nll_loss` reports and the divisor of its `mean`.
fn total_weight(picks: &[Pick], reduction: Reduction) -> f32 {
    if reduction == Reduction::None {
        return 0.0;
    }
    picks.iter().flatten().map(|&(_, w)| w).sum()
}

/// `nll_loss(input, label, weight) {ignore_index, reduction}`: `(out, total_weight)`.
pub fn nll_loss(
    input: &Tensor,
    label: &Tensor,
    weight: Option<&Tensor>,
    at: NllAttrs,
) -> KResult<(Tensor, Tensor)> {
    let picks = nll_picks(input, label, weight, at, "nll_loss")?;
    let x = input.to_f32();
    let terms: Vec<f32> = picks
        .iter()
        .map(|p| p.map_or(0.0, |(e, w)| -w * x[e]))
        .collect();
    let tw = total_weight(&picks, at.reduction);
    let dt = float_dtype(input.dtype());
    let out = match at.reduction {
        Reduction::None => Tensor::from_f32_as(label.shape(), terms, dt)?,
        r => {
            let sum: f32 = terms.iter().sum();
            let v = if r == Reduction::Mean && tw != 0.0 {
                sum / tw
            } else {
                sum
            };
            Tensor::from_f32_as(&[], vec![v], dt)?
        }
    };
    Ok((out, Tensor::from_f32_as(&[], vec![tw], dt)?))
}

/// `nll_loss_grad(input, label, weight, total_weight, out_grad) {ignore_index, reduction}`.
pub fn nll_loss_grad(
    input: &Tensor,
    label: &Tensor,
    weight: Option<&Tensor>,
    total_weight: &Tensor,
    dout: &Tensor,
    at: NllAttrs,
) -> KResult<Tensor> {
    let op = "nll_loss_grad";
    let picks = nll_picks(input, label, weight, at, op)?;
    let g = dout.to_f32();
    let per_label = at.reduction == Reduction::None;
    if (per_label && dout.shape() != label.shape()) || (!per_label && g.len() != 1) {
        kbail!(
            "{}: out_grad has shape {:?}, not that of the loss",
            op,
            dout.shape()
        );
    }
    let tw = total_weight.scalar_f32()?;
    let scale = if at.reduction == Reduction::Mean && tw != 0.0 {
        1.0 / tw
    } else {
        1.0
    };
    let mut dx = vec![0.0f32; input.numel()];
    for (k, p) in picks.iter().enumerate() {
        if let Some((e, w)) = *p {
            let gv = if per_label { g[k] } else { g[0] };
            dx[e] = -w * gv * scale;
        }
    }
    Tensor::from_f32_as(input.shape(), dx, float_dtype(input.dtype()))
}

/// `kldiv_loss`'s attributes.
#[derive(Clone, Copy, Debug)]
pub struct KldivAttrs {
    pub reduction: Reduction,
    pub log_target: bool,
}

/// The divisor of `kldiv_loss`'s reduction.
fn kldiv_divisor(x: &Tensor, r: Reduction) -> f32 {
    match r {
        Reduction::Mean => x.numel().max(1) as f32,
        Reduction::BatchMean => x.shape().first().copied().unwrap_or(1).max(1) as f32,
        Reduction::None | Reduction::Sum => 1.0,
    }
}

/// `kldiv_loss(x, label) {reduction, log_target}`.
pub fn kldiv_loss(x: &Tensor, label: &Tensor, at: KldivAttrs) -> KResult<Tensor> {
    same_shape(x, label, "label", "kldiv_loss")?;
    let (xs, ls) = (x.to_f32(), label.to_f32());
    let terms: Vec<f32> = xs
        .iter()
        .zip(ls.iter())
        .map(|(&x, &l)| {
            if at.log_target {
                l.exp() * (l - x)
            } else if l > 0.0 {
                l * (l.ln() - x)
            } else {
                0.0
            }
        })
        .collect();
    let dt = float_dtype(x.dtype());
    if at.reduction == Reduction::None {
        return Tensor::from_f32_as(x.shape(), terms, dt);
    }
    let sum: f32 = terms.iter().sum();
    Tensor::from_f32_as(&[], vec![sum / kldiv_divisor(x, at.reduction)], dt)
}

/// `kldiv_loss_grad(x, label, out_grad) {reduction, log_target}`: `−l·dout` where `l > 0`
/// (`log_target`: `−eᴸ·dout`), divided as the forward divides.
pub fn kldiv_loss_grad(
    x: &Tensor,
    label: &Tensor,
    dout: &Tensor,
    at: KldivAttrs,
) -> KResult<Tensor> {
    let op = "kldiv_loss_grad";
    same_shape(x, label, "label", op)?;
    let per_element = at.reduction == Reduction::None;
    if per_element {
        same_shape(x, dout, "out_grad", op)?;
    } else if dout.numel() != 1 {
        kbail!(
            "{}: out_grad has shape {:?}, the reduced loss has one element",
            op,
            dout.shape()
        );
    }
    let (ls, g) = (label.to_f32(), dout.to_f32());
    let div = kldiv_divisor(x, at.reduction);
    let dx = ls
        .iter()
        .enumerate()
        .map(|(i, &l)| {
            let gv = if per_element { g[i] } else { g[0] } / div;
            if at.log_target {
                -l.exp() * gv
            } else if l > 0.0 {
                -l * gv
            } else {
                0.0
            }
        })
        .collect();
    Tensor::from_f32_as(x.shape(), dx, float_dtype(x.dtype()))
}
