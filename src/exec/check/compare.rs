//! The tolerance policy and the rows: each compared tensor against its reference, by its own
//! magnitude (see the module docs of [`super`]).

use indexmap::IndexMap;

use super::plan::Plan;
use super::relation::{scale_hint, Reduction};
use super::report::{sci, Row, Verdict};
use super::runs::{Merged, Reference};
use crate::exec::dtype::DType;
use crate::exec::interp::Rank;
use crate::exec::scope::Scope;
use crate::exec::tensor::Tensor;

/// How close a tensor must be to its reference: `|a − b| ≤ rtol·|b| + atol·S` with rtol and
/// atol by dtype (1e-5 for f32 and f64, 1e-2 for bf16, 2e-3 for f16, exact for integers),
/// every float loosened to the loosest float dtype among the program's persistables (a program
/// that keeps 16-bit persistables computes its f32 master weights and gradients from 16-bit
/// math too), unless `--rtol`/`--atol` say otherwise.
pub(super) struct Tolerance {
    /// The loosest float tolerance among the program's persistables.
    compute: f64,
    rtol: Option<f64>,
    atol: Option<f64>,
}

impl Tolerance {
    pub fn new(init: &Scope, rtol: Option<f64>, atol: Option<f64>) -> Tolerance {
        let compute = init
            .iter()
            .map(|(_, t)| by_dtype(t.dtype()))
            .fold(0.0f64, f64::max);
        Tolerance {
            compute,
            rtol,
            atol,
        }
    }

    /// `(rtol, atol)` for a tensor of dtype `d`.
    pub fn of(&self, d: DType) -> (f64, f64) {
        let t = by_dtype(d).max(if d.is_float() { self.compute } else { 0.0 });
        (self.rtol.unwrap_or(t), self.atol.unwrap_or(t))
    }
}

/// How many times the rounding measured on a gradient (the full step against the same step
/// on reversed rows) its two references may differ by and still be called rounding: two
/// orders of the same sums round differently, by amounts of one order of magnitude, so a
/// factor of 100 admits every reordering while a forward that mixes rows, whose effect is of
/// the order of the gradient itself (10^5 and more times float32 rounding), is never admitted.
const ROUNDING_SPREAD: f64 = 100.0;

/// Units in the last place of the program's largest gradient (on the full batch or any
/// micro-batch) that a gradient's two references may differ by and still be called rounding,
/// where reordering the rows rounded alike (a gradient zero in exact arithmetic made of values
/// that add exactly in any order, whose two references differ by where the batch's 1/k scale
/// is applied: a few hundredths of one unit in the fixtures). A part of the program whose rows
/// meet differs by its own magnitude, which another part would have to exceed 10^7-fold to
/// hide.
const PROGRAM_ULPS: f64 = 1.0;

fn by_dtype(d: DType) -> f64 {
    match d {
        DType::F32 | DType::F64 => 1e-5,
        DType::BF16 => 1e-2,
        DType::F16 => 2e-3,
        _ => 0.0,
    }
}

/// The gradients each optimizer consumed, against the relation's reference (`tokens`: what the
/// rule files said of normalize=tokens, for the hint of a token-mean loss).
pub(super) fn gradients(
    plan: &Plan<'_>,
    reference: &Reference,
    merged: &Merged,
    tol: &Tolerance,
    avg: bool,
    tokens: Option<&super::Tokens>,
) -> Vec<Row> {
    let k = plan.k;
    let ref_f64: IndexMap<&str, Vec<f64>> = reference
        .grads
        .iter()
        .filter(|(_, t)| t.dtype().is_float())
        .map(|(name, t)| (name.as_str(), t.to_f64_vec()))
        .collect();
    // What a correct merge computes from the original's own micro-batch gradients, where the
    // relation says the reference equals it: their mean (avg=true, a mean loss) or their sum
    // (avg=false), through the original's optimize stage (`combined`), or, where that is not
    // known, the consumed micro-batch gradients combined. It differs from the reference only by
    // rounding (another order of the same sums), and that difference is how uncertain the
    // reference itself is. It is trusted as rounding only where it is of the order of the
    // rounding measured on the same tensor, by the same step on the rows in reverse order
    // ([`Reference::reordered`]: within [`ROUNDING_SPREAD`] times it), and small beside the
    // program's gradients as a whole (the float32 tolerance of the largest, or, in a program
    // that computes in 16-bit floats, that dtype's tolerance: AMP O1 rounds the products of its
    // matmuls and convolutions to 16 bits, on the full batch and on each micro-batch
    // differently). A forward that mixes rows differs far more than its rounding, however
    // large other gradients are, and stays a failure. The allowance is what was measured on the
    // original, never a bound.
    let kf = k as f64;
    let fallback_combo = |name: &str, div: f64| -> Option<Vec<f64>> {
        match reference.combined.get(name) {
            Some(c) => Some(c.clone()),
            None => Some(
                reference
                    .micro_sum
                    .get(name)?
                    .iter()
                    .map(|x| x / div)
                    .collect(),
            ),
        }
    };
    let correct_combo = |name: &str| -> Option<Vec<f64>> {
        match (avg, reference.reduction, reference.factor) {
            (true, Reduction::Mean, Some(_)) => fallback_combo(name, kf),
            (false, Reduction::Mean | Reduction::Sum, Some(_)) => fallback_combo(name, 1.0),
            _ => None,
        }
    };
    // What a merge of the original's micro-batch gradients (their mean, or their sum with
    // avg=false) makes the optimizer consume, for a hint.
    let micro_merge = |name: &str| fallback_combo(name, if avg { kf } else { 1.0 });
    let program_scale = ref_f64
        .values()
        .map(|v| max_magnitude(v))
        .chain(reference.micro_max.values().copied())
        .fold(0.0f64, f64::max);
    let mut rows = Vec::new();
    for (name, full) in &reference.grads {
        let (rt, at) = tol.of(full.dtype());
        let noise_bound = reference.computes_in.map_or(at, |d| at.max(by_dtype(d)));
        let Some(got) = merged.grads.get(name) else {
            rows.push(Row {
                tensor: name.clone(),
                kind: "grad",
                max_abs: Some(f64::INFINITY),
                max_rel: Some(f64::INFINITY),
                verdict: Verdict::Fail,
                note: "no optimizer op of the rewritten program updated this parameter in the last micro-step".into(),
            });
            continue;
        };
        let full_v = full.to_f64_vec();
        let want: Vec<f64> = match (reference.factor, fallback_combo(name, 1.0)) {
            (Some(f), _) => full_v.iter().map(|x| x * f).collect(),
            (None, Some(s)) => s,
            (None, None) => full_v.clone(),
        };
        let scale = reference.micro_max.get(name).copied().unwrap_or(0.0);
        let rounding = reference
            .reordered
            .get(name.as_str())
            .filter(|r| r.len() == full_v.len())
            .map_or(0.0, |r| {
                let f = reference.factor.unwrap_or(1.0).abs();
                full_v
                    .iter()
                    .zip(r)
                    .fold(0.0f64, |m, (x, y)| m.max(f * (x - y).abs()))
            });
        let noise = correct_combo(name)
            .filter(|c| c.len() == want.len())
            .map(|c| {
                want.iter()
                    .zip(&c)
                    .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
            })
            .filter(|n| {
                let rounding_level = match reference.computes_in {
                    // A 16-bit computation rounds each micro-batch's products to 16 bits,
                    // which no reordering of a float32 sum reproduces: a 16-bit rounding of
                    // the tensor's own magnitude.
                    Some(d) => *n <= by_dtype(d) * max_magnitude(&want).max(scale),
                    // Float32: of the order of the rounding the reordered step showed on this
                    // tensor, or one unit in the last place of the program's largest
                    // gradient (where the reordering happened to round alike).
                    None => {
                        *n <= ROUNDING_SPREAD * rounding
                            || *n <= PROGRAM_ULPS * f64::from(f32::EPSILON) * program_scale
                    }
                };
                n.is_finite() && *n <= noise_bound * program_scale && rounding_level
            })
            .unwrap_or(0.0);
        let a = got.to_f64_vec();
        let c = if got.shape() != full.shape() {
            compare(got, full, rt, at, scale)
        } else {
            compare_values(&a, &want, rt, at, scale, noise)
        };
        let (verdict, note) = if !c.ok {
            let note = match &c.why {
                Some(why) => format!("the rewritten gradient {why}"),
                None => scale_hint(
                    &a,
                    &want,
                    k,
                    avg,
                    reference.reduction,
                    micro_merge(name).as_deref(),
                    tokens,
                ),
            };
            (Verdict::Fail, note)
        } else if want.iter().all(|x| *x == 0.0) {
            let what = if want.is_empty() {
                "empty (a 0-size parameter)"
            } else {
                "zero everywhere"
            };
            (Verdict::Unchecked, format!(
                "the original's gradient is {what} on these inputs, and so is the rewritten one: a rewrite that fed this optimizer zeros would look the same; check on inputs that reach this parameter (--seed, --feed)"
            ))
        } else if noise > 0.1 * max_magnitude(&want) {
            (Verdict::Noise, format!(
                "the original's full-batch gradient and its micro-batch gradients combined differ by {}, beside a largest value of {}: this gradient is rounding noise (zero in exact arithmetic), compared to that level",
                sci(Some(noise)),
                sci(Some(max_magnitude(&want)))
            ))
        } else if let Some(d) = reference.computes_in.filter(|_| noise > at * program_scale) {
            (Verdict::Noise, format!(
                "the original computes in {} (AMP): its full-batch gradient and its micro-batch gradients combined differ by {}, beside a largest value of {}, more than float32 rounding explains; this gradient is compared to that measured level of {} rounding",
                d.attr_name(),
                sci(Some(noise)),
                sci(Some(max_magnitude(&want))),
                d.attr_name()
            ))
        } else {
            (Verdict::Ok, String::new())
        };
        rows.push(Row {
            tensor: name.clone(),
            kind: "grad",
            max_abs: Some(c.max_abs),
            max_rel: Some(c.max_rel),
            verdict,
            note,
        });
    }
    rows
}

/// Persistables after the original's step on the rewritten gradients, each by its own
/// magnitude.
pub(super) fn persistables(
    plan: &Plan<'_>,
    reference: &Reference,
    applied: &[Rank],
    merged: &Merged,
    tol: &Tolerance,
) -> Vec<Row> {
    let mut rows = Vec::new();
    for (name, want) in applied[0].scope.iter() {
        if !plan.init.contains(name) {
            // Published by the step itself (the loss, `shadow_output` in main): an output of
            // the micro-batch it ran on, not state carried across steps.
            continue;
        }
        let kind = if reference.grads.contains_key(name) {
            "param"
        } else {
            "state"
        };
        let (rt, at) = tol.of(want.dtype());
        match merged.ranks[0].scope.get(name) {
            Some(got) => {
                let c = compare(got, want, rt, at, 0.0);
                let note = match (&c.why, c.ok) {
                    (_, true) => String::new(),
                    (Some(why), _) => format!("the rewritten program's value {why}"),
                    (None, _) => format!(
                        "differs from the original's step on {} rows given the same gradients",
                        plan.k * plan.micro_batch
                    ),
                };
                rows.push(Row {
                    tensor: name.to_string(),
                    kind,
                    max_abs: Some(c.max_abs),
                    max_rel: Some(c.max_rel),
                    verdict: if c.ok { Verdict::Ok } else { Verdict::Fail },
                    note,
                });
            }
            None => rows.push(Row {
                tensor: name.to_string(),
                kind,
                max_abs: Some(f64::INFINITY),
                max_rel: Some(f64::INFINITY),
                verdict: Verdict::Fail,
                note: "missing from the rewritten program's scope".into(),
            }),
        }
    }
    rows
}

/// Persistables both programs have must start alike: the rewritten startup program may add
/// state, never initialize the original's otherwise (every run starts from the original's
/// values, so a changed learning rate or initial moment would otherwise go unjudged).
pub(super) fn initial_values(plan: &Plan<'_>) -> Vec<Row> {
    plan.startup_differs
        .iter()
        .map(|(name, got, want)| {
            let c = compare(got, want, 0.0, 0.0, 0.0);
            let why = match &c.why {
                Some(why) => format!("the rewritten startup program's value {why}"),
                None => format!(
                    "the rewritten startup program initializes it otherwise than the original's (max |difference| = {}): the rewritten program would train from another start",
                    sci(Some(c.max_abs))
                ),
            };
            Row {
                tensor: name.clone(),
                kind: "init",
                max_abs: Some(c.max_abs),
                max_rel: Some(c.max_rel),
                verdict: Verdict::Fail,
                note: why,
            }
        })
        .collect()
}

/// State the rewrite introduced must be back at its initial value, and not be a 16-bit float.
pub(super) fn buffers(plan: &Plan<'_>, merged: &Merged) -> Vec<Row> {
    let mut rows = Vec::new();
    for (name, got) in merged.ranks[0].scope.iter() {
        if plan.init.contains(name) {
            continue;
        }
        let Some(start) = plan.rewritten_init.get(name) else {
            continue;
        };
        let c = compare(got, start, 0.0, 0.0, 0.0);
        if got.dtype().is_half() {
            // Accumulating k gradients in a 16-bit buffer loses most of their low bits.
            rows.push(Row {
                tensor: name.to_string(),
                kind: "buffer",
                max_abs: Some(c.max_abs),
                max_rel: Some(c.max_rel),
                verdict: Verdict::Fail,
                note: format!(
                    "is a {} buffer: gradients must be accumulated in float32",
                    got.dtype().attr_name()
                ),
            });
            continue;
        }
        let note = match (&c.why, c.ok) {
            (_, true) => String::new(),
            (Some(why), _) => format!("{why} after the step"),
            (None, _) => {
                format!(
                    "is not back at its initial value after the step (max |value − initial| = {})",
                    sci(Some(c.max_abs))
                ) + ": the buffer is never reset, so the next step would start from stale gradients"
            }
        };
        rows.push(Row {
            tensor: name.to_string(),
            kind: "buffer",
            max_abs: Some(c.max_abs),
            max_rel: Some(c.max_rel),
            verdict: if c.ok { Verdict::Ok } else { Verdict::Fail },
            note,
        });
    }
    rows
}

/// Nothing the original owns may change before the last micro-step.
pub(super) fn frozen(plan: &Plan<'_>, merged: &Merged) -> Vec<Row> {
    merged
        .changed_early
        .iter()
        .map(|(name, step)| Row {
            tensor: name.clone(),
            kind: "frozen",
            max_abs: None,
            max_rel: None,
            verdict: Verdict::Fail,
            note: format!(
                "changed during micro-step {step} of {}: it must only change at the last micro-step",
                plan.k
            ),
        })
        .collect()
}

/// Every rank ends with rank 0's persistables, where the original's ranks agree too.
pub(super) fn replicas(plan: &Plan<'_>, applied: &[Rank], merged: &Merged) -> Vec<Row> {
    let mut rows = Vec::new();
    let first = &merged.ranks[0].scope;
    for (r, rank) in merged.ranks.iter().enumerate().skip(1) {
        for (name, t0) in first.iter() {
            if !plan.rewritten_init.contains(name) {
                continue; // a step output: each rank's own micro-batch
            }
            if applied.get(r).and_then(|a| a.scope.get(name)) != applied[0].scope.get(name) {
                continue; // the original's ranks differ too (running statistics of their rows)
            }
            if rank.scope.get(name) != Some(t0) {
                rows.push(Row {
                    tensor: name.to_string(),
                    kind: "replica",
                    max_abs: Some(
                        rank.scope
                            .get(name)
                            .map_or(f64::INFINITY, |t| compare(t, t0, 0.0, 0.0, 0.0).max_abs),
                    ),
                    max_rel: None,
                    verdict: Verdict::Fail,
                    note: format!(
                        "rank {r} ends with a different value than rank 0: the replicas diverged"
                    ),
                });
            }
        }
    }
    rows
}

pub(super) fn max_magnitude(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

/// A comparison of a tensor with its reference.
struct Cmp {
    max_abs: f64,
    max_rel: f64,
    ok: bool,
    /// Why it failed before any number was compared (shapes, non-finite values).
    why: Option<String>,
}

/// Compares `a` with the reference `b` (both as f64): `|a − b| ≤ rtol·|b| + atol·S + noise` for
/// every element, `S` = the largest of `b`'s magnitudes and `scale` (the tensor's other
/// reference values), `noise` how far the reference is uncertain (0 but for gradients whose
/// original disagrees with itself by rounding). A non-finite value on either side fails, and
/// the columns say so (`NaN`, `inf`). So does a NaN anywhere in the bound (a NaN tolerance
/// from the library's options, or `inf·0`): an element counts as close only when
/// `|a − b| ≤ bound` holds, and every comparison with NaN is false.
fn compare_values(a: &[f64], b: &[f64], rtol: f64, atol: f64, scale: f64, noise: f64) -> Cmp {
    if a.len() != b.len() {
        return Cmp {
            max_abs: f64::INFINITY,
            max_rel: f64::INFINITY,
            ok: false,
            why: Some(format!(
                "has {} elements, the reference {}",
                a.len(),
                b.len()
            )),
        };
    }
    let first_bad = |v: &[f64]| {
        v.iter()
            .position(|x| !x.is_finite())
            .map(|i| (i, if v[i].is_nan() { "NaN" } else { "inf" }))
    };
    let why = match (first_bad(a), first_bad(b)) {
        (Some((i, w)), _) => Some(format!("holds {w} (element {i})")),
        (None, Some((i, w))) => Some(format!(
            "is finite but its reference holds {w} (element {i})"
        )),
        (None, None) => None,
    };
    let max_b = max_magnitude(b).max(scale);
    let (mut max_abs, mut max_rel, mut ok) = (0.0f64, 0.0f64, why.is_none());
    for (x, y) in a.iter().zip(b) {
        let d = (x - y).abs();
        if d.is_nan() {
            max_abs = f64::NAN;
            max_rel = f64::NAN;
            ok = false;
            continue;
        }
        let within = d <= rtol * y.abs() + atol * max_b + noise;
        if !within {
            ok = false;
        }
        if !max_abs.is_nan() {
            max_abs = max_abs.max(d);
        }
        if max_rel.is_nan() {
            continue;
        }
        if *y != 0.0 {
            max_rel = max_rel.max(d / y.abs());
        } else if d > 0.0 {
            max_rel = f64::INFINITY;
        }
    }
    Cmp {
        max_abs,
        max_rel,
        ok,
        why,
    }
}

/// [`compare_values`] of two tensors, which must also have the same shape.
fn compare(got: &Tensor, want: &Tensor, rtol: f64, atol: f64, scale: f64) -> Cmp {
    if got.shape() != want.shape() {
        return Cmp {
            max_abs: f64::INFINITY,
            max_rel: f64::INFINITY,
            ok: false,
            why: Some(format!(
                "has shape {:?}, the reference {:?}",
                got.shape(),
                want.shape()
            )),
        };
    }
    compare_values(
        &got.to_f64_vec(),
        &want.to_f64_vec(),
        rtol,
        atol,
        scale,
        0.0,
    )
}

#[cfg(test)]
mod tests {
    use super::compare_values;

    /// A NaN in the bound (a tolerance, or `inf·0`) never admits a difference.
    #[test]
    fn a_nan_bound_admits_nothing() {
        let (a, b) = ([1.0, 5.0], [1.0, 2.0]);
        assert!(!compare_values(&a, &b, f64::NAN, 1e-5, 0.0, 0.0).ok);
        assert!(!compare_values(&a, &b, 1e-5, f64::NAN, 0.0, 0.0).ok);
        assert!(!compare_values(&a, &b, 1e-5, 1e-5, 0.0, f64::NAN).ok);
        assert!(!compare_values(&[1.0], &[0.0], f64::INFINITY, 0.0, 0.0, 0.0).ok);
        assert!(compare_values(&b, &b, 1e-5, 1e-5, 0.0, 0.0).ok);
    }
}
