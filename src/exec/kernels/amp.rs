//! Dynamic loss scaling (AMP): `check_finite_and_unscale_` and `update_loss_scaling_`.
//!
//! Under loss scaling the backward stage differentiates `loss · S` (S a persistable
//! `loss_scaling`), so every gradient is S times too large; the optimize stage divides them by S
//! and, when one of them overflowed, skips the step and shrinks S. Both ops work on the list of
//! every gradient at once, in place.
//!
//! `check_finite_and_unscale_(xs, scale) -> (outs, found_infinite)`, Paddle's CPU kernel: the
//! reciprocal `1 / scale` is computed in f64 and rounded to the gradient's precision once, and
//! each gradient is multiplied by it. The tensors are visited in order; from the first one that
//! holds an infinity or a NaN on (that one included), each is multiplied by 0 instead (so its
//! non-finite elements become NaN and its negative ones −0), and `found_infinite` (bool `[1]`)
//! is true. Paddle registers the CPU kernel for f32 and f64; for bf16 and f16 gradients irw
//! follows Paddle's GPU kernel, which multiplies in f32 (the scale's precision) and rounds the
//! f32 product to the gradient's dtype.
//!
//! `update_loss_scaling_(xs, found_infinite, prev_loss_scaling, in_good_steps, in_bad_steps,
//! stop_update) -> (outs, loss_scaling, out_good_steps, out_bad_steps)`: when `found_infinite`
//! every gradient becomes zeros (the optimizers then step by nothing). Unless `stop_update`, the
//! counters of consecutive finite and non-finite steps (int32) move: a finite step zeroes the bad
//! count and increments the good one, which on reaching `incr_every_n_steps` restarts at 0 and
//! multiplies the scale by `incr_ratio` (kept unchanged if the product is not finite); a
//! non-finite step does the mirror with `decr_every_n_nan_or_inf` and `decr_ratio`, the scale
//! never falling below 1. The scale is multiplied in its own dtype (f32, or f64).

use crate::exec::dtype::DType;
use crate::exec::error::KResult;
use crate::exec::tensor::{Data, Tensor};
use crate::kbail;

/// `x · factor` in the tensor's working precision: f64 for f64, f32 otherwise (rounded once to
/// a 16-bit dtype).
fn times(x: &Tensor, factor: f64) -> KResult<Tensor> {
    match x.data() {
        Data::F64(v) => Tensor::new(
            x.shape().to_vec(),
            Data::F64(v.iter().map(|e| e * factor).collect()),
        ),
        _ => {
            let f = factor as f32;
            let v = x.to_f32().iter().map(|e| e * f).collect();
            Tensor::from_f32_as(x.shape(), v, x.dtype())
        }
    }
}

fn float_grad(what: &str, x: &Tensor) -> KResult<()> {
    match x.dtype() {
        DType::F32 | DType::F64 | DType::BF16 | DType::F16 => Ok(()),
        d => kbail!(
            "{what}: gradient of dtype {} (expected a float dtype)",
            d.attr_name()
        ),
    }
}

/// The single element of a one-element tensor.
fn single(what: &str, t: &Tensor) -> KResult<f64> {
    match t.to_f64_vec().as_slice() {
        [v] => Ok(*v),
        _ => kbail!("{what} must hold one element, has shape {:?}", t.shape()),
    }
}

/// `check_finite_and_unscale_(xs, scale)`: `(outs, found_infinite)`.
pub fn check_finite_and_unscale(xs: &[&Tensor], scale: &Tensor) -> KResult<(Vec<Tensor>, Tensor)> {
    let s = single("check_finite_and_unscale_'s scale", scale)?;
    let inverse = 1.0 / s;
    let mut found = false;
    let mut outs = Vec::with_capacity(xs.len());
    for x in xs {
        float_grad("check_finite_and_unscale_", x)?;
        found = found || x.data().non_finite().is_some();
        outs.push(times(x, if found { 0.0 } else { inverse })?);
    }
    Ok((outs, Tensor::new(vec![1], Data::Bool(vec![found]))?))
}

/// `update_loss_scaling_`'s attributes.
#[derive(Clone, Copy, Debug)]
pub struct LossScalingAttrs {
    pub incr_every_n_steps: i32,
    pub decr_every_n_nan_or_inf: i32,
    pub incr_ratio: f32,
    pub decr_ratio: f32,
}

/// `update_loss_scaling_`'s results.
pub struct LossScalingUpdate {
    pub outs: Vec<Tensor>,
    pub loss_scaling: Tensor,
    pub good_steps: Tensor,
    pub bad_steps: Tensor,
}

fn counter(what: &str, t: &Tensor) -> KResult<i32> {
    match t.data() {
        Data::I32(v) if v.len() == 1 => Ok(v[0]),
        _ => kbail!(
            "update_loss_scaling_'s {what} must be an int32 tensor of one element, is {} {:?}",
            t.dtype().attr_name(),
            t.shape()
        ),
    }
}

/// `prev · ratio` in the scale's dtype.
fn scaled(prev: &Tensor, ratio: f32) -> KResult<Tensor> {
    match prev.data() {
        Data::F32(v) if v.len() == 1 => Tensor::new(vec![1], Data::F32(vec![v[0] * ratio]))
            .and_then(|t| t.reshaped(prev.shape().to_vec())),
        Data::F64(v) if v.len() == 1 => Tensor::new(vec![1], Data::F64(vec![v[0] * ratio as f64]))
            .and_then(|t| t.reshaped(prev.shape().to_vec())),
        _ => kbail!(
            "update_loss_scaling_'s prev_loss_scaling must be an f32 or f64 tensor of one element, is {} {:?}",
            prev.dtype().attr_name(),
            prev.shape()
        ),
    }
}

/// `update_loss_scaling_(xs, found_infinite, prev_loss_scaling, in_good_steps, in_bad_steps,
/// stop_update)`.
pub fn update_loss_scaling(
    xs: &[&Tensor],
    found_infinite: &Tensor,
    prev: &Tensor,
    good: &Tensor,
    bad: &Tensor,
    stop_update: bool,
    at: &LossScalingAttrs,
) -> KResult<LossScalingUpdate> {
    let found = single("update_loss_scaling_'s found_infinite", found_infinite)? != 0.0;
    let mut outs = Vec::with_capacity(xs.len());
    for x in xs {
        float_grad("update_loss_scaling_", x)?;
        outs.push(if found {
            Tensor::try_full(x.shape(), x.dtype(), 0.0)?
        } else {
            (*x).clone()
        });
    }
    let (good_in, bad_in) = (
        counter("in_good_steps", good)?,
        counter("in_bad_steps", bad)?,
    );
    // Checked even when the update is stopped, so a malformed scale is refused on every step.
    scaled(prev, 1.0)?;
    let mut loss_scaling = prev.clone();
    let (mut good_out, mut bad_out) = (good_in, bad_in);
    if !stop_update {
        if found {
            good_out = 0;
            bad_out = bad_in.wrapping_add(1);
            if bad_out == at.decr_every_n_nan_or_inf {
                let s = scaled(prev, at.decr_ratio)?;
                if single("loss_scaling", &s)? >= 1.0 {
                    loss_scaling = s;
                } else {
                    loss_scaling = Tensor::try_full(prev.shape(), prev.dtype(), 1.0)?;
                }
                bad_out = 0;
            }
        } else {
            bad_out = 0;
            good_out = good_in.wrapping_add(1);
            if good_out == at.incr_every_n_steps {
                let s = scaled(prev, at.incr_ratio)?;
                if single("loss_scaling", &s)?.is_finite() {
                    loss_scaling = s;
                }
                good_out = 0;
            }
        }
    }
    let int = |v: i32, like: &Tensor| Tensor::new(like.shape().to_vec(), Data::I32(vec![v]));
    Ok(LossScalingUpdate {
        outs,
        loss_scaling,
        good_steps: int(good_out, good)?,
        bad_steps: int(bad_out, bad)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(t: &Tensor) -> Vec<f32> {
        t.to_f32().to_vec()
    }

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    // The cases and values below are Paddle 3.3.1's CPU results
    // (tests/exec_fixtures/amp/make_amp.py prints them).

    #[test]
    fn unscale_finite_multiplies_by_the_rounded_reciprocal() {
        let a = Tensor::f32(&[4], vec![1.5, -3.0, 0.0, 1e-3]);
        let b = Tensor::f32(&[2, 2], vec![2048.0, -7.25, 3.0, 1e30]);
        let (outs, found) =
            check_finite_and_unscale(&[&a, &b], &Tensor::f32(&[1], vec![3.0])).unwrap();
        assert_eq!(found.to_f64_vec(), vec![0.0]);
        assert_eq!(found.shape(), &[1]);
        // 1/3 rounded to f32 once, then each product rounded: 1e-3 · (1/3)f32 is
        // 0.0003333333588670939, not 1e-3 / 3 = 0.00033333333 (whose f32 is 0.00033333332).
        assert_eq!(f32s(&outs[0]), vec![0.5, -1.0, 0.0, 0.000_333_333_36]);
        assert_eq!(
            f32s(&outs[0])[3].to_bits(),
            (1e-3f32 * (1.0f64 / 3.0) as f32).to_bits()
        );
        assert_eq!(
            f32s(&outs[1]),
            vec![682.666_7, -2.416_666_7, 1.0, 3.333_333_4e29]
        );
        assert_eq!(outs[1].shape(), &[2, 2]);
    }

    #[test]
    fn unscale_zeroes_from_the_first_non_finite_tensor_on() {
        let a = Tensor::f32(&[4], vec![1.5, -3.0, 0.0, 1e-3]);
        let b = Tensor::f32(&[2, 2], vec![1.0, f32::INFINITY, -2.0, 4.0]);
        let c = Tensor::f32(&[2], vec![5.0, -6.0]);
        let (outs, found) =
            check_finite_and_unscale(&[&a, &b, &c], &Tensor::f32(&[1], vec![1024.0])).unwrap();
        assert_eq!(found.to_f64_vec(), vec![1.0]);
        // Before the infinity: unscaled.
        assert_eq!(
            f32s(&outs[0]),
            vec![0.001_464_843_8, -0.002_929_687_5, 0.0, 9.765_625e-7]
        );
        // The tensor holding it and every later one: times 0 (inf · 0 is NaN, −x · 0 is −0).
        let b_out = f32s(&outs[1]);
        assert!(b_out[1].is_nan());
        assert_eq!(
            bits(&[b_out[0], b_out[2], b_out[3]]),
            bits(&[0.0, -0.0, 0.0])
        );
        assert_eq!(bits(&f32s(&outs[2])), bits(&[0.0, -0.0]));
    }

    #[test]
    fn unscale_nan_in_the_first_tensor_zeroes_all() {
        let a = Tensor::f32(&[2], vec![f32::NAN, 2.0]);
        let b = Tensor::f32(&[4], vec![1.5, -3.0, 0.0, 1e-3]);
        let (outs, found) =
            check_finite_and_unscale(&[&a, &b], &Tensor::f32(&[1], vec![0.5])).unwrap();
        assert_eq!(found.to_f64_vec(), vec![1.0]);
        assert!(f32s(&outs[0])[0].is_nan());
        assert_eq!(f32s(&outs[0])[1], 0.0);
        assert_eq!(bits(&f32s(&outs[1])), bits(&[0.0, -0.0, 0.0, 0.0]));
    }

    #[test]
    fn unscale_bf16_computes_in_f32_and_rounds_once() {
        // 3 · (1/3)f32 = 1.0000000298, 1.0 in f32; 5 · (1/3)f32 = 1.6666667 → bf16 1.6640625
        // (its neighbours are 1.6640625 and 1.671875); −0.5 · (1/3)f32 = −0.16666667 → bf16
        // −0.1669921875 (step 2^-10 there).
        let g = Tensor::from_f32_as(&[3], vec![3.0, 5.0, -0.5], DType::BF16).unwrap();
        let (outs, found) = check_finite_and_unscale(&[&g], &Tensor::f32(&[1], vec![3.0])).unwrap();
        assert_eq!(found.to_f64_vec(), vec![0.0]);
        assert_eq!(outs[0].dtype(), DType::BF16);
        assert_eq!(outs[0].to_f64_vec(), vec![1.0, 1.6640625, -0.1669921875]);
        let inf = Tensor::from_f32_as(&[2], vec![f32::INFINITY, 1.0], DType::BF16).unwrap();
        let (outs, found) =
            check_finite_and_unscale(&[&g, &inf], &Tensor::f32(&[1], vec![3.0])).unwrap();
        assert_eq!(found.to_f64_vec(), vec![1.0]);
        assert!(outs[1].to_f64_vec()[0].is_nan());
        assert_eq!(outs[1].to_f64_vec()[1], 0.0);
    }

    #[test]
    fn unscale_refuses_a_scale_of_several_elements_and_integer_gradients() {
        let g = Tensor::f32(&[1], vec![1.0]);
        let e = check_finite_and_unscale(&[&g], &Tensor::f32(&[2], vec![1.0, 2.0]));
        assert!(e.err().unwrap().to_string().contains("one element"));
        let i = Tensor::i64(&[1], vec![1]);
        let e = check_finite_and_unscale(&[&i], &Tensor::f32(&[1], vec![1.0]));
        assert!(e.err().unwrap().to_string().contains("int64"));
    }

    const AT: LossScalingAttrs = LossScalingAttrs {
        incr_every_n_steps: 2,
        decr_every_n_nan_or_inf: 2,
        incr_ratio: 2.0,
        decr_ratio: 0.5,
    };

    /// (outs, loss_scaling, good, bad) for grads [1, −2], [[3]].
    fn update(
        found: bool,
        prev: f32,
        good: i32,
        bad: i32,
        stop: bool,
    ) -> (Vec<Vec<f64>>, f32, i32, i32) {
        let a = Tensor::f32(&[2], vec![1.0, -2.0]);
        let b = Tensor::f32(&[1, 1], vec![3.0]);
        let r = update_loss_scaling(
            &[&a, &b],
            &Tensor::new(vec![1], Data::Bool(vec![found])).unwrap(),
            &Tensor::f32(&[1], vec![prev]),
            &Tensor::new(vec![1], Data::I32(vec![good])).unwrap(),
            &Tensor::new(vec![1], Data::I32(vec![bad])).unwrap(),
            stop,
            &AT,
        )
        .unwrap();
        assert_eq!(r.outs[1].shape(), &[1, 1]);
        (
            r.outs.iter().map(|t| t.to_f64_vec()).collect(),
            r.loss_scaling.scalar_f32().unwrap(),
            r.good_steps.to_i64_vec()[0] as i32,
            r.bad_steps.to_i64_vec()[0] as i32,
        )
    }

    #[test]
    fn update_counts_finite_steps_and_grows_the_scale() {
        let kept = vec![vec![1.0, -2.0], vec![3.0]];
        assert_eq!(
            update(false, 1024.0, 0, 3, false),
            (kept.clone(), 1024.0, 1, 0)
        );
        assert_eq!(
            update(false, 1024.0, 1, 0, false),
            (kept.clone(), 2048.0, 0, 0)
        );
        // 3e38 · 2 overflows f32: the scale stays (Paddle: 3.0000000054977558e38, 3e38 as f32).
        assert_eq!(update(false, 3e38, 1, 0, false), (kept, 3e38, 0, 0));
    }

    #[test]
    fn update_zeroes_the_gradients_and_shrinks_the_scale_on_overflow() {
        let zeros = vec![vec![0.0, 0.0], vec![0.0]];
        assert_eq!(
            update(true, 1024.0, 5, 0, false),
            (zeros.clone(), 1024.0, 0, 1)
        );
        assert_eq!(
            update(true, 1024.0, 0, 1, false),
            (zeros.clone(), 512.0, 0, 0)
        );
        // 1.5 · 0.5 = 0.75 is below the floor of 1.
        assert_eq!(update(true, 1.5, 0, 1, false), (zeros.clone(), 1.0, 0, 0));
        // stop_update: the gradients are still zeroed, the scale and counters stay.
        assert_eq!(update(true, 1024.0, 0, 1, true), (zeros, 1024.0, 0, 1));
    }

    #[test]
    fn update_refuses_bad_counters_and_scales() {
        let g = Tensor::f32(&[1], vec![1.0]);
        let no = Tensor::new(vec![1], Data::Bool(vec![false])).unwrap();
        let one = Tensor::new(vec![1], Data::I32(vec![0])).unwrap();
        let e = update_loss_scaling(
            &[&g],
            &no,
            &Tensor::f32(&[1], vec![1.0]),
            &Tensor::i64(&[1], vec![0]),
            &one,
            false,
            &AT,
        );
        assert!(e.err().unwrap().to_string().contains("in_good_steps"));
        let e = update_loss_scaling(
            &[&g],
            &no,
            &Tensor::i64(&[1], vec![1]),
            &one,
            &one,
            false,
            &AT,
        );
        assert!(e.err().unwrap().to_string().contains("prev_loss_scaling"));
        let two = Tensor::new(vec![2], Data::Bool(vec![false, true])).unwrap();
        let e = update_loss_scaling(
            &[&g],
            &two,
            &Tensor::f32(&[1], vec![1.0]),
            &one,
            &one,
            false,
            &AT,
        );
        assert!(e.err().unwrap().to_string().contains("found_infinite"));
    }
}
