//! `softmax`, `softmax_grad`, `log_softmax`, `log_softmax_grad`, `cross_entropy_with_softmax`
//! and its grad.
//!
//! A tensor is viewed as `[outer, n, inner]` around the softmax axis, so the last-axis case (the
//! common one) is contiguous rows. Softmax subtracts the row maximum before `exp` (Paddle's
//! numerically stable form); the loss is `−log softmax[label]` (hard labels, `ignore_index` rows
//! give 0) or `−Σ label·log softmax` (soft labels). Everything computes in f32 and rounds once.

use super::float_dtype;
use crate::exec::error::KResult;
use crate::exec::tensor::Tensor;
use crate::kbail;

fn norm_axis(axis: i64, rank: usize) -> KResult<usize> {
    let r = rank.max(1) as i64;
    if axis < -r || axis >= r {
        kbail!("axis {} out of range for rank {}", axis, rank);
    }
    Ok(axis.rem_euclid(r) as usize)
}

/// (outer, n, inner) around `axis`.
fn split(shape: &[usize], axis: usize) -> (usize, usize, usize) {
    if shape.is_empty() {
        return (1, 1, 1);
    }
    (
        shape[..axis].iter().product(),
        shape[axis],
        shape[axis + 1..].iter().product(),
    )
}

fn softmax_f32(x: &[f32], (outer, n, inner): (usize, usize, usize)) -> Vec<f32> {
    let mut out = vec![0.0f32; x.len()];
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| o * n * inner + k * inner + i;
            let max = (0..n).map(|k| x[at(k)]).fold(f32::NEG_INFINITY, f32::max);
            let mut sum = 0.0f32;
            for k in 0..n {
                let e = (x[at(k)] - max).exp();
                out[at(k)] = e;
                sum += e;
            }
            for k in 0..n {
                out[at(k)] /= sum;
            }
        }
    }
    out
}

/// `pd_op.softmax(x, axis)`.
pub fn softmax(x: &Tensor, axis: i64) -> KResult<Tensor> {
    let a = norm_axis(axis, x.shape().len())?;
    let out = softmax_f32(&x.to_f32(), split(x.shape(), a));
    Tensor::from_f32_as(x.shape(), out, float_dtype(x.dtype()))
}

/// The split of an axis and two tensors as f32 ([`grad_lanes`]).
type Lanes<'t> = (
    (usize, usize, usize),
    std::borrow::Cow<'t, [f32]>,
    std::borrow::Cow<'t, [f32]>,
);

/// What the grad of softmax or log_softmax (`what`) reads: the `(outer, n, inner)` split of
/// `out` at the axis, and `out` and `dout` as f32, once they are checked to be of one shape.
fn grad_lanes<'t>(what: &str, out: &'t Tensor, dout: &'t Tensor, axis: i64) -> KResult<Lanes<'t>> {
    if out.shape() != dout.shape() {
        kbail!(
            "{what}: out {:?} and out_grad {:?} differ in shape",
            out.shape(),
            dout.shape()
        );
    }
    let a = norm_axis(axis, out.shape().len())?;
    Ok((split(out.shape(), a), out.to_f32(), dout.to_f32()))
}

/// `pd_op.softmax_grad(out, out_grad, axis)`: `out · (dout − Σ dout·out)` along the axis.
pub fn softmax_grad(out: &Tensor, dout: &Tensor, axis: i64) -> KResult<Tensor> {
    let ((outer, n, inner), y, g) = grad_lanes("softmax_grad", out, dout, axis)?;
    let mut dx = vec![0.0f32; y.len()];
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| o * n * inner + k * inner + i;
            let dot: f32 = (0..n).map(|k| g[at(k)] * y[at(k)]).sum();
            for k in 0..n {
                dx[at(k)] = y[at(k)] * (g[at(k)] - dot);
            }
        }
    }
    Tensor::from_f32_as(out.shape(), dx, float_dtype(out.dtype()))
}

/// `pd_op.log_softmax(x) {axis}`: `x − max − ln Σ e^(x − max)` along the axis.
pub fn log_softmax(x: &Tensor, axis: i64) -> KResult<Tensor> {
    let a = norm_axis(axis, x.shape().len())?;
    let (outer, n, inner) = split(x.shape(), a);
    let v = x.to_f32();
    let mut out = vec![0.0f32; v.len()];
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| o * n * inner + k * inner + i;
            let max = (0..n).map(|k| v[at(k)]).fold(f32::NEG_INFINITY, f32::max);
            let sum: f32 = (0..n).map(|k| (v[at(k)] - max).exp()).sum();
            let log_sum = sum.ln();
            for k in 0..n {
                out[at(k)] = v[at(k)] - max - log_sum;
            }
        }
    }
    Tensor::from_f32_as(x.shape(), out, float_dtype(x.dtype()))
}

/// `pd_op.log_softmax_grad(out, out_grad) {axis}`: `dout − e^out · Σ dout` along the axis.
pub fn log_softmax_grad(out: &Tensor, dout: &Tensor, axis: i64) -> KResult<Tensor> {
    let ((outer, n, inner), y, g) = grad_lanes("log_softmax_grad", out, dout, axis)?;
    let mut dx = vec![0.0f32; y.len()];
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| o * n * inner + k * inner + i;
            let sum: f32 = (0..n).map(|k| g[at(k)]).sum();
            for k in 0..n {
                dx[at(k)] = g[at(k)] - y[at(k)].exp() * sum;
            }
        }
    }
    Tensor::from_f32_as(out.shape(), dx, float_dtype(out.dtype()))
}

/// `pd_op.label_smooth(label, prior_dist) {epsilon}`: `(1 − ε)·label + ε·prior`, the prior
/// uniform (`1/K` over the last dimension's K classes) when absent.
pub fn label_smooth(label: &Tensor, prior: Option<&Tensor>, epsilon: f32) -> KResult<Tensor> {
    let k = label.shape().last().copied().unwrap_or(1);
    if k == 0 {
        kbail!(
            "label_smooth: the label has no classes, shape {:?}",
            label.shape()
        );
    }
    let l = label.to_f32();
    let out: Vec<f32> = match prior {
        None => {
            let u = epsilon / k as f32;
            l.iter().map(|&v| (1.0 - epsilon) * v + u).collect()
        }
        Some(p) => {
            if p.numel() != k {
                kbail!(
                    "label_smooth: prior_dist {:?} must hold one value per class ({})",
                    p.shape(),
                    k
                );
            }
            let pv = p.to_f32();
            l.iter()
                .enumerate()
                .map(|(i, &v)| (1.0 - epsilon) * v + epsilon * pv[i % k])
                .collect()
        }
    };
    Tensor::from_f32_as(label.shape(), out, float_dtype(label.dtype()))
}

/// Attributes of `cross_entropy_with_softmax` and its grad.
#[derive(Clone, Copy, Debug)]
pub struct CrossEntropyAttrs {
    pub soft_label: bool,
    pub use_softmax: bool,
    pub ignore_index: i64,
    pub axis: i64,
}

impl Default for CrossEntropyAttrs {
    fn default() -> Self {
        CrossEntropyAttrs {
            soft_label: false,
            use_softmax: true,
            ignore_index: -100,
            axis: -1,
        }
    }
}

fn loss_shape(shape: &[usize], axis: usize) -> Vec<usize> {
    let mut s = shape.to_vec();
    if !s.is_empty() {
        s[axis] = 1;
    }
    s
}

fn check_label(input: &[usize], label: &Tensor, a: usize, soft: bool) -> KResult<()> {
    let want = if soft {
        input.to_vec()
    } else {
        loss_shape(input, a)
    };
    if label.shape() != want.as_slice() {
        kbail!(
            "{} label of shape {:?} does not fit logits of shape {:?} (expected {:?})",
            if soft { "soft" } else { "hard" },
            label.shape(),
            input,
            want
        );
    }
    Ok(())
}

/// `pd_op.cross_entropy_with_softmax(input, label)` → (softmax, loss).
pub fn cross_entropy_with_softmax(
    input: &Tensor,
    label: &Tensor,
    at: CrossEntropyAttrs,
) -> KResult<(Tensor, Tensor)> {
    let a = norm_axis(at.axis, input.shape().len())?;
    check_label(input.shape(), label, a, at.soft_label)?;
    let dims = split(input.shape(), a);
    let (outer, n, inner) = dims;
    let sm = if at.use_softmax {
        softmax_f32(&input.to_f32(), dims)
    } else {
        input.to_f32().into_owned()
    };
    let mut loss = vec![0.0f32; outer * inner];
    if at.soft_label {
        let l = label.to_f32();
        for o in 0..outer {
            for i in 0..inner {
                let at_ = |k: usize| o * n * inner + k * inner + i;
                loss[o * inner + i] = -(0..n).map(|k| l[at_(k)] * sm[at_(k)].ln()).sum::<f32>();
            }
        }
    } else {
        let l = label.to_i64_vec();
        for o in 0..outer {
            for i in 0..inner {
                let lab = l[o * inner + i];
                if lab == at.ignore_index {
                    continue;
                }
                if lab < 0 || lab as usize >= n {
                    kbail!("label {} out of range [0, {})", lab, n);
                }
                loss[o * inner + i] = -sm[o * n * inner + lab as usize * inner + i].ln();
            }
        }
    }
    let dt = float_dtype(input.dtype());
    Ok((
        Tensor::from_f32_as(input.shape(), sm, dt)?,
        Tensor::from_f32_as(&loss_shape(input.shape(), a), loss, dt)?,
    ))
}

/// `pd_op.cross_entropy_with_softmax_grad(label, softmax, loss_grad)` → input_grad.
pub fn cross_entropy_with_softmax_grad(
    label: &Tensor,
    softmax: &Tensor,
    loss_grad: &Tensor,
    at: CrossEntropyAttrs,
) -> KResult<Tensor> {
    let a = norm_axis(at.axis, softmax.shape().len())?;
    check_label(softmax.shape(), label, a, at.soft_label)?;
    let (outer, n, inner) = split(softmax.shape(), a);
    if loss_grad.numel() != outer * inner {
        kbail!(
            "loss_grad of shape {:?} does not fit softmax {:?}",
            loss_grad.shape(),
            softmax.shape()
        );
    }
    let (sm, dl) = (softmax.to_f32(), loss_grad.to_f32());
    let mut dx = vec![0.0f32; sm.len()];
    let soft = at.soft_label.then(|| label.to_f32().into_owned());
    let hard = (!at.soft_label).then(|| label.to_i64_vec());
    for o in 0..outer {
        for i in 0..inner {
            let r = o * inner + i;
            let g = dl[r];
            let at_ = |k: usize| o * n * inner + k * inner + i;
            match (&soft, &hard) {
                (Some(l), _) => {
                    for k in 0..n {
                        let p = sm[at_(k)];
                        dx[at_(k)] = if at.use_softmax {
                            (p - l[at_(k)]) * g
                        } else {
                            -l[at_(k)] / p * g
                        };
                    }
                }
                (None, Some(l)) => {
                    let lab = l[r];
                    if lab == at.ignore_index {
                        continue; // the row's gradient stays 0
                    }
                    if lab < 0 || lab as usize >= n {
                        kbail!("label {} out of range [0, {})", lab, n);
                    }
                    let lab = lab as usize;
                    for k in 0..n {
                        let p = sm[at_(k)];
                        dx[at_(k)] = if at.use_softmax {
                            (p - if k == lab { 1.0 } else { 0.0 }) * g
                        } else if k == lab {
                            -g / p
                        } else {
                            0.0
                        };
                    }
                }
                (None, None) => unreachable!("a label is soft or hard"),
            }
        }
    }
    Tensor::from_f32_as(softmax.shape(), dx, float_dtype(softmax.dtype()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::rng::Rng;
    use crate::exec::tensor::numel;

    fn close(a: f64, b: f64, tol: f64, what: &str) {
        assert!((a - b).abs() <= tol * (1.0 + b.abs()), "{what}: {a} vs {b}");
    }

    #[test]
    fn softmax_rows_sum_to_one_on_any_axis() {
        let mut rng = Rng::new(12);
        for (shape, axis) in [(vec![4, 7], -1i64), (vec![3, 5, 2], 1), (vec![6], 0)] {
            let x = Tensor::f32(
                &shape,
                rng.normal_vec(numel(&shape))
                    .iter()
                    .map(|v| v * 5.0)
                    .collect(),
            );
            let y = softmax(&x, axis).unwrap();
            let a = norm_axis(axis, shape.len()).unwrap();
            let (outer, n, inner) = split(&shape, a);
            let (yv, xv) = (y.to_f64_vec(), x.to_f64_vec());
            for o in 0..outer {
                for i in 0..inner {
                    let idx = |k: usize| o * n * inner + k * inner + i;
                    let denom: f64 = (0..n).map(|k| xv[idx(k)].exp()).sum();
                    for k in 0..n {
                        close(yv[idx(k)], xv[idx(k)].exp() / denom, 1e-6, "softmax");
                    }
                }
            }
        }
    }

    #[test]
    fn softmax_grad_matches_jacobian() {
        let mut rng = Rng::new(13);
        let x = Tensor::f32(&[2, 5], rng.normal_vec(10));
        let g = Tensor::f32(&[2, 5], rng.normal_vec(10));
        let y = softmax(&x, -1).unwrap();
        let dx = softmax_grad(&y, &g, -1).unwrap().to_f64_vec();
        let (yv, gv) = (y.to_f64_vec(), g.to_f64_vec());
        for r in 0..2 {
            for j in 0..5 {
                // dL/dx_j = Σ_k g_k · y_k (δ_kj − y_j)
                let want: f64 = (0..5)
                    .map(|k| {
                        gv[r * 5 + k]
                            * yv[r * 5 + k]
                            * (if k == j { 1.0 } else { 0.0 } - yv[r * 5 + j])
                    })
                    .sum();
                close(dx[r * 5 + j], want, 1e-6, "softmax_grad");
            }
        }
    }

    #[test]
    fn cross_entropy_hard_and_soft() {
        let mut rng = Rng::new(14);
        let x = Tensor::f32(&[3, 4], rng.normal_vec(12));
        let label = Tensor::i64(&[3, 1], vec![2, 0, -100]);
        let at = CrossEntropyAttrs::default();
        let (sm, loss) = cross_entropy_with_softmax(&x, &label, at).unwrap();
        assert_eq!(loss.shape(), &[3, 1]);
        let (s, l) = (sm.to_f64_vec(), loss.to_f64_vec());
        close(l[0], -s[2].ln(), 1e-6, "loss0");
        close(l[1], -s[4].ln(), 1e-6, "loss1");
        assert_eq!(l[2], 0.0);
        let dl = Tensor::f32(&[3, 1], vec![1.0, 0.5, 1.0]);
        let dx = cross_entropy_with_softmax_grad(&label, &sm, &dl, at)
            .unwrap()
            .to_f64_vec();
        close(dx[2], s[2] - 1.0, 1e-6, "dx");
        close(dx[3], s[3], 1e-6, "dx");
        close(dx[4], 0.5 * (s[4] - 1.0), 1e-6, "dx");
        assert!(dx[8..].iter().all(|&v| v == 0.0));
        // a one-hot soft label gives the same loss and grad
        let mut onehot = vec![0.0f32; 12];
        onehot[2] = 1.0;
        onehot[4] = 1.0;
        let soft = Tensor::f32(&[3, 4], onehot);
        let at_s = CrossEntropyAttrs {
            soft_label: true,
            ..at
        };
        let (_, ls) = cross_entropy_with_softmax(&x, &soft, at_s).unwrap();
        close(ls.to_f64_vec()[0], l[0], 1e-6, "soft loss");
        let dxs = cross_entropy_with_softmax_grad(&soft, &sm, &dl, at_s)
            .unwrap()
            .to_f64_vec();
        close(dxs[4], dx[4], 1e-6, "soft dx");
        assert!(cross_entropy_with_softmax(&x, &Tensor::i64(&[3, 1], vec![9, 0, 0]), at).is_err());
    }
}
