//! `warpctc(logits, label, logits_length, labels_length) {blank, norm_by_times}` — the CTC loss
//! of padded, time-major sequences — and `warpctc_grad`.
//!
//! `logits` is `[T, B, C]` (unnormalized: a softmax over `C` is part of the loss), `label`
//! `[B, L]` padded, the lengths `[B]`. The forward gives the loss `[B, 1]`, `−log p(label | x)`
//! summed over CTC alignments, and, like warp-ctc, the gradient of each sequence's loss with
//! respect to its logits (`warpctcgrad`, `softmax − occupancy`, 0 past a sequence's length),
//! which `warpctc_grad` scales by `loss_grad` (and by `1 / length` with `norm_by_times`). The
//! alignment sums run in log space in f64 (the forward-backward recursions over the label with
//! blanks between and around its symbols); results are rounded once to the logits' dtype.
//! Padded programs carry the lengths; without them (LoD sequences) the op is refused.

use crate::exec::error::KResult;
use crate::exec::tensor::{Data, Tensor};
use crate::kbail;

fn log_add(a: f64, b: f64) -> f64 {
    if a == f64::NEG_INFINITY {
        return b;
    }
    if b == f64::NEG_INFINITY {
        return a;
    }
    let m = a.max(b);
    m + ((a - m).exp() + (b - m).exp()).ln()
}

/// One sequence: its loss and `softmax − occupancy` over its first `t_len` steps (`[t_len, C]`).
fn sequence(lp: &[Vec<f64>], labels: &[usize], blank: usize) -> (f64, Vec<Vec<f64>>) {
    let (t_len, c) = (lp.len(), lp.first().map_or(0, Vec::len));
    let ext: Vec<usize> = std::iter::once(blank)
        .chain(labels.iter().flat_map(|&l| [l, blank]))
        .collect();
    let s_len = ext.len();
    let ninf = f64::NEG_INFINITY;
    let skip = |s: usize| s >= 2 && ext[s] != blank && ext[s] != ext[s - 2];
    let mut alpha = vec![vec![ninf; s_len]; t_len];
    let mut beta = vec![vec![ninf; s_len]; t_len];
    if t_len == 0 {
        return (f64::INFINITY, vec![]);
    }
    alpha[0][0] = lp[0][ext[0]];
    if s_len > 1 {
        alpha[0][1] = lp[0][ext[1]];
    }
    for t in 1..t_len {
        for s in 0..s_len {
            let mut a = alpha[t - 1][s];
            if s >= 1 {
                a = log_add(a, alpha[t - 1][s - 1]);
            }
            if skip(s) {
                a = log_add(a, alpha[t - 1][s - 2]);
            }
            alpha[t][s] = a + lp[t][ext[s]];
        }
    }
    let last = t_len - 1;
    beta[last][s_len - 1] = lp[last][ext[s_len - 1]];
    if s_len > 1 {
        beta[last][s_len - 2] = lp[last][ext[s_len - 2]];
    }
    for t in (0..last).rev() {
        for s in 0..s_len {
            let mut b = beta[t + 1][s];
            if s + 1 < s_len {
                b = log_add(b, beta[t + 1][s + 1]);
            }
            if s + 2 < s_len && skip(s + 2) {
                b = log_add(b, beta[t + 1][s + 2]);
            }
            beta[t][s] = b + lp[t][ext[s]];
        }
    }
    let mut ll = alpha[last][s_len - 1];
    if s_len > 1 {
        ll = log_add(ll, alpha[last][s_len - 2]);
    }
    let mut grad = vec![vec![0.0; c]; t_len];
    if ll == ninf {
        // No alignment fits in the steps given: an infinite loss, and no direction to move in.
        return (f64::INFINITY, grad);
    }
    for t in 0..t_len {
        let mut occ = vec![ninf; c];
        for s in 0..s_len {
            let k = ext[s];
            occ[k] = log_add(occ[k], alpha[t][s] + beta[t][s] - lp[t][k]);
        }
        for k in 0..c {
            grad[t][k] = lp[t][k].exp() - (occ[k] - ll).exp();
        }
    }
    (-ll, grad)
}

/// A length operand as `B` counts, each at most `max`.
fn lengths(t: Option<&Tensor>, b: usize, max: usize, what: &str) -> KResult<Vec<usize>> {
    let Some(t) = t else {
        kbail!(
            "warpctc: {} is absent (LoD sequences are not supported, padded ones need lengths)",
            what
        );
    };
    let v = t.to_i64_vec();
    if v.len() != b {
        kbail!(
            "warpctc: {} holds {} lengths for a batch of {}",
            what,
            v.len(),
            b
        );
    }
    v.iter()
        .map(|&n| {
            if n < 0 || n as usize > max {
                kbail!("warpctc: {} {} is out of range [0, {}]", what, n, max);
            }
            Ok(n as usize)
        })
        .collect()
}

/// `warpctc`'s results: the loss `[B, 1]` and `warpctcgrad` `[T, B, C]`.
pub fn warpctc(
    logits: &Tensor,
    label: &Tensor,
    logits_length: Option<&Tensor>,
    labels_length: Option<&Tensor>,
    blank: i64,
) -> KResult<(Tensor, Tensor)> {
    let &[t_max, b, c] = logits.shape() else {
        kbail!("warpctc: logits must be [T, B, C], is {:?}", logits.shape());
    };
    let &[lb, l_max] = label.shape() else {
        kbail!("warpctc: label must be [B, L], is {:?}", label.shape());
    };
    if lb != b {
        kbail!("warpctc: label has {} rows for a batch of {}", lb, b);
    }
    if blank < 0 || blank as usize >= c {
        kbail!("warpctc: blank {} is not a class of {}", blank, c);
    }
    let tl = lengths(logits_length, b, t_max, "logits_length")?;
    let ll = lengths(labels_length, b, l_max, "labels_length")?;
    let x = logits.to_f64_vec();
    let lab = label.to_i64_vec();
    let mut loss = vec![0.0; b];
    let mut grad = vec![0.0; t_max * b * c];
    for bi in 0..b {
        let labels = lab[bi * l_max..bi * l_max + ll[bi]]
            .iter()
            .map(|&l| {
                if l < 0 || l as usize >= c || l == blank {
                    kbail!(
                        "warpctc: label {} is not a class of {} other than blank",
                        l,
                        c
                    );
                }
                Ok(l as usize)
            })
            .collect::<KResult<Vec<usize>>>()?;
        let lp: Vec<Vec<f64>> = (0..tl[bi])
            .map(|t| {
                let row = &x[(t * b + bi) * c..(t * b + bi + 1) * c];
                let m = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let z = m + row.iter().map(|v| (v - m).exp()).sum::<f64>().ln();
                row.iter().map(|v| v - z).collect()
            })
            .collect();
        let (l, g) = sequence(&lp, &labels, blank as usize);
        loss[bi] = l;
        for (t, row) in g.iter().enumerate() {
            grad[(t * b + bi) * c..(t * b + bi + 1) * c].copy_from_slice(row);
        }
    }
    let dt = logits.dtype();
    Ok((
        Tensor::new(vec![b, 1], Data::F64(loss).cast(dt))?,
        Tensor::new(logits.shape().to_vec(), Data::F64(grad).cast(dt))?,
    ))
}

/// `warpctc_grad(logits, logits_length, warpctcgrad, loss_grad) {norm_by_times}`: each
/// sequence's `warpctcgrad` times its `loss_grad`, divided by its length with `norm_by_times`.
pub fn warpctc_grad(
    logits: &Tensor,
    logits_length: Option<&Tensor>,
    warpctcgrad: &Tensor,
    loss_grad: &Tensor,
    norm_by_times: bool,
) -> KResult<Tensor> {
    let &[t_max, b, c] = logits.shape() else {
        kbail!(
            "warpctc_grad: logits must be [T, B, C], is {:?}",
            logits.shape()
        );
    };
    if warpctcgrad.shape() != logits.shape() || loss_grad.numel() != b {
        kbail!(
            "warpctc_grad: warpctcgrad {:?} must have logits' shape {:?} and loss_grad {:?} one \
             value per sequence",
            warpctcgrad.shape(),
            logits.shape(),
            loss_grad.shape()
        );
    }
    let tl = lengths(logits_length, b, t_max, "logits_length")?;
    let (g, lg) = (warpctcgrad.to_f64_vec(), loss_grad.to_f64_vec());
    let mut out = vec![0.0; g.len()];
    for (e, o) in out.iter_mut().enumerate() {
        let bi = (e / c) % b;
        let scale = if norm_by_times && tl[bi] > 0 {
            lg[bi] / tl[bi] as f64
        } else {
            lg[bi]
        };
        *o = g[e] * scale;
    }
    Tensor::new(logits.shape().to_vec(), Data::F64(out).cast(logits.dtype()))
}
