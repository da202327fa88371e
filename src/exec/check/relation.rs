//! What the merged gradient must equal. The original's gradients on the full batch and on each
//! micro-batch alone say how its loss reduces the batch ([`Reduction`]); with the merge's `avg`
//! that gives the relation the grad rows check, and, when a row fails, a hint at what went
//! wrong (a missing or doubled 1/k scale, a sum loss averaged, a token mean).

use super::Tokens;
use crate::exec::coupling::Combine;

/// How the original's loss reduces the batch, read off its gradients: the full-batch gradient
/// is the mean of the k micro-batch gradients (a mean loss) or their sum (a sum loss).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Reduction {
    Mean,
    Sum,
    /// Neither, measured on gradients that are not all zero, in a forward that does not mix
    /// rows: the loss weighs the micro-batches unequally (a token mean over a mask, when they
    /// hold different token counts). No relation is assumed.
    Uneven,
    /// Not measured (k = 1, a batch-coupled forward, or gradients zero everywhere): no relation
    /// is assumed.
    Unknown,
}

/// The factor `f` for which `full ≈ f · sum` over every gradient (least squares), if they are
/// proportional at all.
fn proportion(full: &[&[f64]], sum: &[&[f64]]) -> Option<f64> {
    let (mut fs, mut ss, mut ff) = (0.0, 0.0, 0.0);
    for (f, s) in full.iter().zip(sum) {
        for (x, y) in f.iter().zip(s.iter()) {
            fs += x * y;
            ss += y * y;
            ff += x * x;
        }
    }
    if ss == 0.0 || !fs.is_finite() || !ss.is_finite() {
        return None;
    }
    let r = fs / ss;
    // residual² = ff − 2r·fs + r²·ss = ff − r·fs
    let resid = (ff - r * fs).max(0.0).sqrt();
    (resid <= 1e-2 * ff.sqrt()).then_some(r)
}

/// Whether `a` is `mean` (within 1e-3 of its norm): what a merge averaging the micro-batch
/// gradients makes the optimizer consume.
fn is_mean_of(a: &[f64], mean: Option<&[f64]>) -> bool {
    let Some(m) = mean.filter(|m| m.len() == a.len()) else {
        return false;
    };
    let (mut d, mut n) = (0.0, 0.0);
    for (x, y) in a.iter().zip(m) {
        d += (x - y).powi(2);
        n += y.powi(2);
    }
    n > 0.0 && d.is_finite() && d.sqrt() <= 1e-3 * n.sqrt()
}

/// A hint for a gradient mismatch: is the rewritten gradient a multiple of the reference?
/// With k = 1 nothing is merged: the words are about the rewritten program's gradient and the
/// original's, and no 1/k scale is suspected. `sum_loss_averaged`: the loss sums over the batch
/// and the merge averaged it (then a ratio of 1/k has that name, not "applied twice").
/// `micro_merge`: what a merge of the original's own micro-batch gradients makes the optimizer
/// consume (their mean, or their sum with avg=false), when known; a merged gradient that is it,
/// under a loss whose full-batch gradient is neither their mean nor their sum, is named as
/// such, with the merge that fixes it when `tokens` says whether grad_merge.rw's
/// normalize=tokens takes the loss, and why not, when the rule files were asked.
pub(super) fn scale_hint(
    a: &[f64],
    b: &[f64],
    k: usize,
    avg: bool,
    reduction: Reduction,
    micro_merge: Option<&[f64]>,
    tokens: Option<&Tokens>,
) -> String {
    let bb: f64 = b.iter().map(|v| v * v).sum();
    let aa: f64 = a.iter().map(|v| v * v).sum();
    let single = k == 1;
    let what = if single {
        "the rewritten program's gradient"
    } else {
        "the merged gradient"
    };
    if aa == 0.0 && bb > 0.0 {
        return format!("{what} is zero everywhere (the reference is not): the optimizer was fed a buffer nothing accumulated into?");
    }
    if bb == 0.0 || a.len() != b.len() {
        return if single {
            "the rewritten program's gradient differs from the original's".into()
        } else {
            "the merged gradient differs from the reference".into()
        };
    }
    let ratio = a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>() / bb;
    let resid: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - ratio * y).powi(2))
        .sum::<f64>()
        .sqrt();
    let proportional = resid <= 1e-3 * bb.sqrt() * ratio.abs().max(1e-12);
    let kf = k as f64;
    let near = |r: f64| (ratio - r).abs() <= 1e-3 * r.abs();
    // A factor of 1 is no factor: the gradients differ by a little everywhere.
    let close = |reference: &str| {
        format!("{what} is {reference} up to small differences (within 0.1%, beyond the tolerance): a change of precision, such as a cast added or removed, or of the order of a sum?")
    };
    if single {
        return if proportional && near(1.0) {
            close("the original's")
        } else if proportional {
            format!("the rewritten program's gradient is {ratio:.4}× the original's")
        } else {
            "the rewritten program's gradient differs from the original's (not by a constant factor)"
                .into()
        };
    }
    let reference = if avg {
        "the full-batch gradient"
    } else {
        "the gradient of the summed loss"
    };
    match () {
        _ if proportional && near(1.0 / kf) && avg && reduction == Reduction::Sum => format!(
            "the merged gradient is 1/{k} of the full-batch gradient: the loss sums over the batch (the full-batch gradient is the sum of the micro-batch gradients), and a sum loss merged with avg=true is divided by k; merge it with avg=false"
        ),
        _ if proportional && near(kf) && avg => format!(
            "the merged gradient is {k}× the full-batch gradient: the 1/k scale is missing"
        ),
        _ if proportional && near(kf) => format!(
            "the merged gradient is {k}× {reference}: a sum over the micro-batches scaled up again?"
        ),
        _ if proportional && near(1.0 / kf) && avg => format!(
            "the merged gradient is 1/{k} of the full-batch gradient: the 1/k scale is applied twice"
        ),
        _ if proportional && near(1.0 / kf) => format!(
            "the merged gradient is 1/{k} of {reference}: a 1/k scale is applied although avg=false"
        ),
        _ if proportional && near(1.0) => close(reference),
        _ if proportional => format!("the merged gradient is {ratio:.4}× {reference}"),
        _ if is_mean_of(a, micro_merge) => {
            let uneven = if avg {
                format!("the merged gradient is the mean of the {k} micro-batch gradients, but the full-batch gradient is not: the loss does not weigh the micro-batches alike")
            } else {
                format!("the merged gradient is the sum of the {k} micro-batch gradients (avg=false), but the full-batch gradient is neither their sum nor their mean: the loss does not weigh the micro-batches alike")
            };
            let with = if avg { "" } else { " (and avg=true)" };
            match tokens {
                Some(Tokens::Merged) => format!(
                    "{uneven} (a token mean, sum(l·mask) / sum(mask), normalizes each micro-batch by its own token count; the rule files merge it with --set normalize=tokens{with})"
                ),
                Some(Tokens::Refused(why)) => format!(
                    "{uneven} (a normalization by a count taken from the batch, as a token mean, divides each micro-batch by its own count; or the forward lets rows meet in a way irw does not detect, as an in-batch contrastive loss built by broadcasting does); the rule files cannot merge it exactly: with --set normalize=tokens they refuse it: {why}"
                ),
                None => format!(
                    "{uneven} (a normalization by a count taken from the batch, as a token mean, divides each micro-batch by its own count; or the forward lets rows meet in a way irw does not detect, as an in-batch contrastive loss built by broadcasting does)"
                ),
            }
        }
        _ => format!("the merged gradient differs from {reference} (not by a constant factor: \
              a scale applied per micro-step, or a missing or misplaced collective?)"),
    }
}

/// How the loss reduces the batch, from pairs of a reference gradient and the sum of the same
/// gradient over the micro-batches: the reference is 1/k of the sum (a mean), the sum itself (a
/// sum), or neither (measured only where the forward does not mix rows and some gradient is
/// not zero).
pub(super) fn reduction(
    k: usize,
    pairs: &[(Vec<f64>, Vec<f64>)],
    rows_independent: bool,
) -> Reduction {
    if k == 1 {
        return Reduction::Unknown;
    }
    let (full, sum): (Vec<&[f64]>, Vec<&[f64]>) = pairs
        .iter()
        .map(|(f, s)| (f.as_slice(), s.as_slice()))
        .unzip();
    let kf = k as f64;
    match proportion(&full, &sum) {
        Some(r) if (r - 1.0 / kf).abs() <= 1e-2 / kf => Reduction::Mean,
        Some(r) if (r - 1.0).abs() <= 1e-2 => Reduction::Sum,
        _ if rows_independent && sum.iter().any(|s| s.iter().any(|x| *x != 0.0)) => {
            Reduction::Uneven
        }
        _ => Reduction::Unknown,
    }
}

/// Whether the original's loss is a mean over the batch, told by its values: the full batch's
/// loss is the mean of the micro-batches' (a sum loss is their sum, a token mean over a mask
/// with uneven counts neither). Unknown losses say no.
pub(super) fn is_mean_loss(full: Option<f32>, micro: &[Option<f32>]) -> bool {
    let Some(full) = full.map(f64::from) else {
        return false;
    };
    let Some(micro) = micro
        .iter()
        .map(|l| l.map(f64::from))
        .collect::<Option<Vec<f64>>>()
    else {
        return false;
    };
    if micro.is_empty() {
        return false;
    }
    let mean = micro.iter().sum::<f64>() / micro.len() as f64;
    let scale = full
        .abs()
        .max(micro.iter().fold(0.0_f64, |a, x| a.max(x.abs())));
    scale > 0.0 && (full - mean).abs() <= 1e-4 * scale
}

/// The relation the grad rows check, in words, and the factor `f` for which the merged
/// gradient must be `f` × the reference gradient (`None`: the sum of the original's
/// micro-batch gradients). `fixed_batch`: the reference is the original's micro-batch
/// gradients combined, because no full-batch step exists. `summed_loss`: the reference is the
/// full-batch step with the loss taken k times (avg=false, a mean loss). `mean_loss`: the
/// losses say the loss is a mean ([`is_mean_loss`]).
pub(super) fn relation(
    k: usize,
    avg: bool,
    reduction: Reduction,
    fixed_batch: bool,
    summed_loss: bool,
    mean_loss: bool,
    combine: Combine,
) -> (String, Option<f64>) {
    let (relation, factor) = match (k, avg, reduction) {
        (1, _, _) => ("gradient = the original's gradient (k_steps 1: nothing is merged)".to_string(), Some(1.0)),
        (_, false, _) if summed_loss => (format!(
            "merged gradient = gradient of the loss summed over the {k} micro-batches (avg=false): for this mean loss, the full-batch gradient of {k} × the loss"
        ), Some(1.0)),
        (_, true, Reduction::Sum) => (format!(
            "merged gradient = full-batch gradient (avg=true; but the loss sums over the batch: the full-batch gradient is the sum of the {k} micro-batch gradients, not their mean)"
        ), Some(1.0)),
        (_, true, Reduction::Uneven) if mean_loss => ("merged gradient = full-batch gradient (avg=true, a mean loss; the gradients the optimizers consume are not the mean of the micro-batch ones because the optimize stage is not linear in the gradients, as a global-norm clip is not)".to_string(), Some(1.0)),
        (_, true, Reduction::Uneven) => ("merged gradient = full-batch gradient (avg=true; the full-batch gradient is neither the mean nor the sum of the micro-batch gradients here: the loss does not weigh the micro-batches alike, as a token mean over a mask does when they hold different token counts)".to_string(), Some(1.0)),
        (_, true, _) => ("merged gradient = full-batch gradient (avg=true: the mean of the micro-batch gradients)".to_string(), Some(1.0)),
        (_, false, Reduction::Mean) => (format!(
            "merged gradient = gradient of the loss summed over the {k} micro-batches (avg=false), which for this mean loss is {k} × the full-batch gradient"
        ), Some(k as f64)),
        (_, false, Reduction::Sum) => ("merged gradient = gradient of the loss summed over the micro-batches (avg=false), which for this sum loss is the full-batch gradient".to_string(), Some(1.0)),
        // No merge of micro-batch gradients is the full-batch step then: the rows judge it
        // against that step, as with avg=true, never against the sum the merge computes.
        (_, false, Reduction::Uneven) => ("merged gradient = full-batch gradient (avg=false: the sum of the micro-batch gradients; but the full-batch gradient is neither their sum nor their mean here: the loss does not weigh the micro-batches alike, as a token mean over a mask does when they hold different token counts)".to_string(), Some(1.0)),
        (_, false, Reduction::Unknown) => ("merged gradient = gradient of the loss summed over the micro-batches (avg=false): the sum of the original's micro-batch gradients".to_string(), None),
    };
    let relation = match (fixed_batch, avg, combine) {
        (true, true, Combine::Average) => format!(
            "merged gradient = the mean of the original's {k} micro-batch gradients (avg=true, a mean loss; its batch is fixed, so no full-batch gradient exists)"
        ),
        (true, false, _) => format!(
            "merged gradient = the sum of the original's {k} micro-batch gradients (avg=false; its batch is fixed, so no full-batch gradient exists)"
        ),
        _ => relation,
    };
    (relation, factor)
}

#[cfg(test)]
mod tests {
    use super::is_mean_loss;

    /// A mean loss's full-batch value is the mean of the micro-batches'; a sum loss's is their
    /// sum; an unknown loss or none at all is not called a mean.
    #[test]
    fn a_mean_loss_is_told_by_its_values() {
        let micro = [Some(1.0), Some(2.0), Some(3.0), Some(6.0)];
        assert!(is_mean_loss(Some(3.0), &micro));
        assert!(!is_mean_loss(Some(12.0), &micro));
        assert!(!is_mean_loss(Some(3.01), &micro));
        assert!(!is_mean_loss(None, &micro));
        assert!(!is_mean_loss(Some(3.0), &[Some(3.0), None]));
        assert!(!is_mean_loss(Some(0.0), &[Some(0.0), Some(0.0)]));
        assert!(!is_mean_loss(Some(1.0), &[]));
    }
}
