//! Optimizer update kernels: `sgd_`, `asgd_`, `momentum_`, `adam_`, `adamw_`, with Paddle's
//! formulas.
//!
//! All arithmetic is in f32. With `multi_precision` and a master weight, the master (f32) is
//! updated and the parameter is the master rounded to the parameter's dtype (how Paddle keeps
//! bf16/f16 parameters); without one, a 16-bit parameter is widened, updated and rounded once.
//! Moments keep the dtype they come in.
//!
//! Adam follows Paddle's CPU kernel (`AdamDenseKernel`, jit `Adam` reference): the bias
//! corrections are folded into the step and the epsilon,
//!
//! ```text
//! lr_t  = lr · sqrt(1 − β2^t) / (1 − β1^t)        eps_t = ε · sqrt(1 − β2^t)
//! m1    = β1·m1 + (1 − β1)·g                      m2    = β2·m2 + (1 − β2)·g·g
//! p     = p − lr_t · m1 / (sqrt(m2) + eps_t)      β1^t ← β1^t·β1, β2^t ← β2^t·β2
//! ```
//!
//! which differs from the textbook form only in rounding. AdamW first decays
//! `p ← p − lr·lr_ratio·coeff·p` (decoupled weight decay), then takes the Adam step with
//! `lr·lr_ratio`.
//!
//! The other adaptive optimizers (RMSProp, Adagrad, Adamax, LAMB) are `adaptive.rs`, on the
//! same working-weight helpers.

use crate::exec::dtype::DType;
use crate::exec::error::KResult;
use crate::exec::kernels::cast::cast;
use crate::exec::tensor::Tensor;
use crate::kbail;

pub(crate) fn same_numel(what: &str, a: &Tensor, b: &Tensor) -> KResult<()> {
    if a.numel() != b.numel() {
        kbail!("{what}: {:?} and {:?} differ in size", a.shape(), b.shape());
    }
    Ok(())
}

/// The f32 working copy of the weights: the master weight when multi-precision applies.
pub(crate) fn working_param<'a>(
    param: &'a Tensor,
    master: Option<&'a Tensor>,
    multi_precision: bool,
) -> KResult<(&'a Tensor, bool)> {
    match master {
        Some(m) if multi_precision => {
            same_numel("master_param", param, m)?;
            Ok((m, true))
        }
        _ => Ok((param, false)),
    }
}

/// Writes the updated f32 weights back: (param_out, master_out).
pub(crate) fn finish_param(
    param: &Tensor,
    master: Option<&Tensor>,
    uses_master: bool,
    p: Vec<f32>,
) -> KResult<(Tensor, Option<Tensor>)> {
    let fdt = |d: DType| if d.is_float() { d } else { DType::F32 };
    if uses_master {
        let m = master.map(|m| m.dtype()).unwrap_or(DType::F32);
        let master_out = Tensor::from_f32_as(param.shape(), p, fdt(m))?;
        let param_out = cast(&master_out, param.dtype());
        Ok((param_out, Some(master_out)))
    } else {
        Ok((
            Tensor::from_f32_as(param.shape(), p, fdt(param.dtype()))?,
            None,
        ))
    }
}

/// Results of [`sgd`].
pub struct SgdOut {
    pub param: Tensor,
    pub master_param: Option<Tensor>,
}

/// `sgd_(param, learning_rate, grad, master_param)`: `p − lr·g`.
pub fn sgd(
    param: &Tensor,
    lr: &Tensor,
    grad: &Tensor,
    master: Option<&Tensor>,
    multi_precision: bool,
) -> KResult<SgdOut> {
    same_numel("sgd_ grad", param, grad)?;
    let lr = lr.scalar_f32()?;
    let (w, uses_master) = working_param(param, master, multi_precision)?;
    let g = grad.to_f32();
    let p: Vec<f32> = w
        .to_f32()
        .iter()
        .zip(g.iter())
        .map(|(&p, &g)| p - lr * g)
        .collect();
    let (param, master_param) = finish_param(param, master, uses_master, p)?;
    Ok(SgdOut {
        param,
        master_param,
    })
}

/// Results of [`asgd`]: `(param, d, y)`.
pub type AsgdOut = (Tensor, Tensor, Tensor);

/// `asgd_(param, grad, learning_rate, d, y, n, master_param) {multi_precision}`: stochastic
/// average gradient, as Paddle 3.3.1's CPU kernel computes it: `d = d − y + g`, `y = g`,
/// `p = p − (lr / n)·d`, where `y` is this parameter's gradient from its last step and `n` the
/// number of gradients `d` sums. The kernel reads no master weight, so `multi_precision` is
/// refused rather than guessed.
#[allow(clippy::too_many_arguments)]
pub fn asgd(
    param: &Tensor,
    grad: &Tensor,
    lr: &Tensor,
    d: &Tensor,
    y: &Tensor,
    n: &Tensor,
    multi_precision: bool,
) -> KResult<AsgdOut> {
    if multi_precision {
        kbail!(
            "asgd_: multi_precision is not supported by the executor (Paddle's CPU kernel has no \
             master-weight path)"
        );
    }
    same_numel("asgd_ grad", param, grad)?;
    same_numel("asgd_ d", param, d)?;
    same_numel("asgd_ y", param, y)?;
    let (lr, count) = (lr.scalar_f32()?, n.scalar_f32()?);
    let (pv, gv, dv, yv) = (param.to_f32(), grad.to_f32(), d.to_f32(), y.to_f32());
    let d_out: Vec<f32> = (0..pv.len()).map(|k| dv[k] - yv[k] + gv[k]).collect();
    let p: Vec<f32> = (0..pv.len())
        .map(|k| pv[k] - (lr / count) * d_out[k])
        .collect();
    let like = |t: &Tensor, v: Vec<f32>| Tensor::from_f32_as(t.shape(), v, t.dtype());
    Ok((like(param, p)?, like(d, d_out)?, like(y, gv.into_owned())?))
}

/// Attributes of `momentum_`.
#[derive(Clone, Copy, Debug)]
pub struct MomentumAttrs {
    pub mu: f32,
    pub use_nesterov: bool,
    /// L2 regularization coefficient (0 when `regularization_method` is not `l2_decay`).
    pub l2_coeff: f32,
    pub multi_precision: bool,
}

/// Results of [`momentum`].
pub struct MomentumOut {
    pub param: Tensor,
    pub velocity: Tensor,
    pub master_param: Option<Tensor>,
}

/// `momentum_(param, grad, velocity, learning_rate, master_param)`:
/// `g' = g + l2·p; v = μ·v + g'; p −= lr·v` (Nesterov: `p −= lr·(g' + μ·v)`). Paddle 3.3.1's
/// CPU kernel does not read `rescale_grad` (`Momentum(rescale_grad=0.5)` steps as with 1), so
/// neither does this one: the executor takes the step Paddle takes.
pub fn momentum(
    param: &Tensor,
    grad: &Tensor,
    velocity: &Tensor,
    lr: &Tensor,
    master: Option<&Tensor>,
    at: MomentumAttrs,
) -> KResult<MomentumOut> {
    same_numel("momentum_ grad", param, grad)?;
    same_numel("momentum_ velocity", param, velocity)?;
    let lr = lr.scalar_f32()?;
    let (w, uses_master) = working_param(param, master, at.multi_precision)?;
    let (pv, gv, vv) = (w.to_f32(), grad.to_f32(), velocity.to_f32());
    let mut p = Vec::with_capacity(pv.len());
    let mut v_out = Vec::with_capacity(pv.len());
    for ((&p0, &g0), &v0) in pv.iter().zip(gv.iter()).zip(vv.iter()) {
        let g = g0 + at.l2_coeff * p0;
        let v = v0 * at.mu + g;
        p.push(if at.use_nesterov {
            p0 - (g + v * at.mu) * lr
        } else {
            p0 - lr * v
        });
        v_out.push(v);
    }
    let velocity = Tensor::from_f32_as(velocity.shape(), v_out, velocity.dtype())?;
    let (param, master_param) = finish_param(param, master, uses_master, p)?;
    Ok(MomentumOut {
        param,
        velocity,
        master_param,
    })
}

/// Inputs of [`adam`] (Paddle's operand order).
pub struct AdamIn<'a> {
    pub param: &'a Tensor,
    pub grad: &'a Tensor,
    pub learning_rate: &'a Tensor,
    pub moment1: &'a Tensor,
    pub moment2: &'a Tensor,
    pub moment2_max: Option<&'a Tensor>,
    pub beta1_pow: &'a Tensor,
    pub beta2_pow: &'a Tensor,
    pub master_param: Option<&'a Tensor>,
    pub skip_update: Option<&'a Tensor>,
    pub beta1: f32,
    pub beta2: f32,
    pub epsilon: f32,
}

/// Attributes of [`adam`]; `weight_decay` is `Some((lr_ratio, coeff))` for `adamw_` with decay.
#[derive(Clone, Copy, Debug, Default)]
pub struct AdamAttrs {
    pub multi_precision: bool,
    pub use_global_beta_pow: bool,
    pub amsgrad: bool,
    pub weight_decay: Option<(f32, f32)>,
    pub lr_ratio: Option<f32>,
}

/// Results of [`adam`], in `adam_`'s result order.
pub struct AdamOut {
    pub param: Tensor,
    pub moment1: Tensor,
    pub moment2: Tensor,
    pub moment2_max: Option<Tensor>,
    pub beta1_pow: Tensor,
    pub beta2_pow: Tensor,
    pub master_param: Option<Tensor>,
}

/// `adam_` / `adamw_` (see the module docs for the formulas).
pub fn adam(i: &AdamIn<'_>, at: AdamAttrs) -> KResult<AdamOut> {
    same_numel("adam grad", i.param, i.grad)?;
    same_numel("adam moment1", i.param, i.moment1)?;
    same_numel("adam moment2", i.param, i.moment2)?;
    if let Some(skip) = i.skip_update {
        if skip.to_f64_vec().first().is_some_and(|&v| v != 0.0) {
            return Ok(AdamOut {
                param: i.param.clone(),
                moment1: i.moment1.clone(),
                moment2: i.moment2.clone(),
                moment2_max: i.moment2_max.cloned(),
                beta1_pow: i.beta1_pow.clone(),
                beta2_pow: i.beta2_pow.clone(),
                master_param: i.master_param.cloned(),
            });
        }
    }
    let lr_ratio = at.lr_ratio.unwrap_or(1.0);
    let lr = i.learning_rate.scalar_f32()? * lr_ratio;
    let (b1p, b2p) = (i.beta1_pow.scalar_f32()?, i.beta2_pow.scalar_f32()?);
    let (b1, b2) = (i.beta1, i.beta2);
    let lr_t = lr * ((1.0 - b2p).sqrt() / (1.0 - b1p));
    let eps_t = i.epsilon * (1.0 - b2p).sqrt();
    let (w, uses_master) = working_param(i.param, i.master_param, at.multi_precision)?;
    let (pv, gv, m1v, m2v) = (
        w.to_f32(),
        i.grad.to_f32(),
        i.moment1.to_f32(),
        i.moment2.to_f32(),
    );
    let m2max_in = if at.amsgrad {
        i.moment2_max.map(|t| t.to_f32().into_owned())
    } else {
        None
    };
    let n = pv.len();
    let (mut p, mut m1, mut m2) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    let mut m2max = m2max_in.as_ref().map(|_| Vec::with_capacity(n));
    let decay = at.weight_decay.map(|(_, coeff)| lr * coeff);
    for k in 0..n {
        let g = gv[k];
        let mut p0 = pv[k];
        if let Some(d) = decay {
            p0 -= d * p0;
        }
        let a = b1 * m1v[k] + (1.0 - b1) * g;
        let b = b2 * m2v[k] + (1.0 - b2) * g * g;
        let denom_m2 = match (&m2max_in, &mut m2max) {
            (Some(prev), Some(out)) => {
                let mx = prev[k].max(b);
                out.push(mx);
                mx
            }
            _ => b,
        };
        p.push(p0 - lr_t * (a / (denom_m2.sqrt() + eps_t)));
        m1.push(a);
        m2.push(b);
    }
    let (b1p_out, b2p_out) = if at.use_global_beta_pow {
        (b1p, b2p)
    } else {
        (b1p * b1, b2p * b2)
    };
    let moment1 = Tensor::from_f32_as(i.moment1.shape(), m1, i.moment1.dtype())?;
    let moment2 = Tensor::from_f32_as(i.moment2.shape(), m2, i.moment2.dtype())?;
    let moment2_max = match (m2max, i.moment2_max) {
        (Some(v), Some(t)) => Some(Tensor::from_f32_as(t.shape(), v, t.dtype())?),
        _ => None,
    };
    let beta1_pow = Tensor::from_f32_as(i.beta1_pow.shape(), vec![b1p_out], i.beta1_pow.dtype())?;
    let beta2_pow = Tensor::from_f32_as(i.beta2_pow.shape(), vec![b2p_out], i.beta2_pow.dtype())?;
    let (param, master_param) = finish_param(i.param, i.master_param, uses_master, p)?;
    Ok(AdamOut {
        param,
        moment1,
        moment2,
        moment2_max,
        beta1_pow,
        beta2_pow,
        master_param,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::rng::Rng;

    #[test]
    fn sgd_plain_and_master() {
        let p = Tensor::f32(&[3], vec![1.0, 2.0, 3.0]);
        let g = Tensor::f32(&[3], vec![0.5, -1.0, 2.0]);
        let lr = Tensor::f32(&[], vec![0.1]);
        let out = sgd(&p, &lr, &g, None, false).unwrap();
        assert_eq!(
            out.param.as_f32().unwrap(),
            &[1.0 - 0.1 * 0.5, 2.0 + 0.1, 3.0 - 0.1 * 2.0]
        );
        let pb = cast(&p, DType::BF16);
        let out = sgd(&pb, &lr, &g, Some(&p), true).unwrap();
        let m = out.master_param.unwrap();
        assert_eq!(
            m.as_f32().unwrap(),
            &[1.0 - 0.1 * 0.5, 2.0 + 0.1, 3.0 - 0.1 * 2.0]
        );
        assert_eq!(out.param, cast(&m, DType::BF16));
    }

    #[test]
    fn momentum_matches_formula() {
        let mut rng = Rng::new(3);
        let (p, g, v) = (rng.normal_vec(9), rng.normal_vec(9), rng.normal_vec(9));
        let t = |v: &Vec<f32>| Tensor::f32(&[9], v.clone());
        let lr = Tensor::f32(&[1], vec![0.05]);
        for nesterov in [false, true] {
            let at = MomentumAttrs {
                mu: 0.9,
                use_nesterov: nesterov,
                l2_coeff: 1e-3,
                multi_precision: false,
            };
            let out = momentum(&t(&p), &t(&g), &t(&v), &lr, None, at).unwrap();
            for k in 0..9 {
                let gg = g[k] as f64 + 1e-3 * p[k] as f64;
                let vv = 0.9 * v[k] as f64 + gg;
                let pp = if nesterov {
                    p[k] as f64 - 0.05 * (gg + 0.9 * vv)
                } else {
                    p[k] as f64 - 0.05 * vv
                };
                assert!((out.velocity.to_f64_vec()[k] - vv).abs() < 1e-5);
                assert!((out.param.to_f64_vec()[k] - pp).abs() < 1e-5);
            }
        }
    }

    #[test]
    fn adam_matches_textbook_within_rounding() {
        let mut rng = Rng::new(4);
        let n = 37;
        let (p, g, m1, m2) = (
            rng.normal_vec(n),
            rng.normal_vec(n),
            rng.normal_vec(n),
            rng.normal_vec(n),
        );
        let m2: Vec<f32> = m2.iter().map(|v| v * v).collect();
        let t = |v: &Vec<f32>| Tensor::f32(&[n], v.clone());
        let (pt, gt, m1t, m2t) = (t(&p), t(&g), t(&m1), t(&m2));
        let (lr, b1p, b2p) = (
            Tensor::f32(&[], vec![0.01]),
            Tensor::f32(&[1], vec![0.9f32.powi(3)]),
            Tensor::f32(&[1], vec![0.999f32.powi(3)]),
        );
        let input = AdamIn {
            param: &pt,
            grad: &gt,
            learning_rate: &lr,
            moment1: &m1t,
            moment2: &m2t,
            moment2_max: None,
            beta1_pow: &b1p,
            beta2_pow: &b2p,
            master_param: None,
            skip_update: None,
            beta1: 0.9,
            beta2: 0.999,
            epsilon: 1e-8,
        };
        for decay in [None, Some((1.0, 0.01))] {
            let out = adam(
                &input,
                AdamAttrs {
                    weight_decay: decay,
                    ..Default::default()
                },
            )
            .unwrap();
            let (b1t, b2t) = (0.9f64.powi(3), 0.999f64.powi(3));
            for k in 0..n {
                let mut p0 = p[k] as f64;
                if let Some((_, c)) = decay {
                    p0 -= 0.01 * c as f64 * p0;
                }
                let a = 0.9 * m1[k] as f64 + 0.1 * g[k] as f64;
                let b = 0.999 * m2[k] as f64 + 0.001 * (g[k] as f64).powi(2);
                let want = p0 - 0.01 * (a / (1.0 - b1t)) / ((b / (1.0 - b2t)).sqrt() + 1e-8);
                let got = out.param.to_f64_vec()[k];
                assert!(
                    (got - want).abs() <= 1e-5 * (1.0 + want.abs()),
                    "{got} vs {want}"
                );
                assert!((out.moment1.to_f64_vec()[k] - a).abs() < 1e-6);
            }
            assert!((out.beta1_pow.to_f64_vec()[0] - 0.9f64.powi(4)).abs() < 1e-7);
        }
        let skip = Tensor::new(vec![1], crate::exec::Data::Bool(vec![true])).unwrap();
        let out = adam(
            &AdamIn {
                skip_update: Some(&skip),
                ..input
            },
            AdamAttrs::default(),
        )
        .unwrap();
        assert_eq!(out.param, pt);
    }
}
