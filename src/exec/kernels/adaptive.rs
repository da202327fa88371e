//! The adaptive optimizers besides Adam: `rmsprop_`, `adagrad_`, `adamax_`, `lamb_`, with the
//! formulas of Paddle 3.3.1's CPU kernels, where the placement of ε and the handling of the
//! beta powers differ from one optimizer (and from the textbooks) to the next:
//!
//! ```text
//! rmsprop   ms = ρ·ms + (1 − ρ)·g²                 (centered: mg = ρ·mg + (1 − ρ)·g)
//!           mom = μ·mom + lr·g / sqrt(ms + ε)       (centered: sqrt(ms − mg² + ε))
//!           p = p − mom
//! adagrad   m = m + g²;  p = p − lr·g / (sqrt(m) + ε)
//! adamax    m = β1·m + (1 − β1)·g;  u = max(|g|, β2·u + ε)
//!           p = p − lr / (1 − β1^t) · m / u         (β1^t is not advanced here: Paddle's
//!                                                    optimizer scales it with a separate op)
//! lamb      m1 = β1·m1 + (1 − β1)·g;  m2 = β2·m2 + (1 − β2)·g²
//!           r = (m1 / (1 − β1^t)) / (sqrt(m2 / (1 − β2^t)) + ε) + λ·p
//!           trust = ‖p‖ / ‖r‖ when both are positive (and λ > 0 or always_adapt), else 1
//!           p = p − lr·trust·r;  β1^t ← β1^t·β1, β2^t ← β2^t·β2
//! ```
//!
//! All arithmetic is f32 (Paddle's kernels compute in the parameter's type, and the models are
//! f32); the working weight follows `optimizer.rs`: with `multi_precision` and a master weight,
//! the master is updated and the parameter is its rounding. Moments keep the dtype they come in.

use crate::exec::error::KResult;
use crate::exec::kernels::optimizer::{finish_param, same_numel, working_param};
use crate::exec::tensor::Tensor;

fn like(t: &Tensor, v: Vec<f32>) -> KResult<Tensor> {
    Tensor::from_f32_as(t.shape(), v, t.dtype())
}

/// Attributes of `rmsprop_`.
#[derive(Clone, Copy, Debug)]
pub struct RmspropAttrs {
    pub epsilon: f32,
    pub decay: f32,
    pub momentum: f32,
    pub centered: bool,
    pub multi_precision: bool,
}

/// Results of [`rmsprop`], in `rmsprop_`'s result order.
pub struct RmspropOut {
    pub param: Tensor,
    pub moment: Tensor,
    pub mean_square: Tensor,
    pub mean_grad: Option<Tensor>,
    pub master_param: Option<Tensor>,
}

/// `rmsprop_(param, mean_square, grad, moment, learning_rate, mean_grad, master_param)`.
#[allow(clippy::too_many_arguments)]
pub fn rmsprop(
    param: &Tensor,
    mean_square: &Tensor,
    grad: &Tensor,
    moment: &Tensor,
    lr: &Tensor,
    mean_grad: Option<&Tensor>,
    master: Option<&Tensor>,
    at: RmspropAttrs,
) -> KResult<RmspropOut> {
    same_numel("rmsprop_ grad", param, grad)?;
    same_numel("rmsprop_ mean_square", param, mean_square)?;
    same_numel("rmsprop_ moment", param, moment)?;
    let mean_grad = match (at.centered, mean_grad) {
        (true, Some(mg)) => {
            same_numel("rmsprop_ mean_grad", param, mg)?;
            Some(mg)
        }
        (true, None) => crate::kbail!("rmsprop_: centered needs the mean_grad operand"),
        (false, _) => None,
    };
    let lr = lr.scalar_f32()?;
    let (rho, eps, mu) = (at.decay, at.epsilon, at.momentum);
    let (w, uses_master) = working_param(param, master, at.multi_precision)?;
    let (pv, gv, msv, momv) = (
        w.to_f32(),
        grad.to_f32(),
        mean_square.to_f32(),
        moment.to_f32(),
    );
    let mgv = mean_grad.map(|t| t.to_f32());
    let n = pv.len();
    let (mut p, mut ms, mut mom) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    let mut mg = mgv.as_ref().map(|_| Vec::with_capacity(n));
    for k in 0..n {
        let g = gv[k];
        let ms_k = rho * msv[k] + (1.0 - rho) * g * g;
        let denom = match (&mgv, &mut mg) {
            (Some(prev), Some(out)) => {
                let mg_k = rho * prev[k] + (1.0 - rho) * g;
                out.push(mg_k);
                (ms_k - mg_k * mg_k + eps).sqrt()
            }
            _ => (ms_k + eps).sqrt(),
        };
        let mom_k = mu * momv[k] + lr * g / denom;
        p.push(pv[k] - mom_k);
        ms.push(ms_k);
        mom.push(mom_k);
    }
    let mean_grad = match (mg, mean_grad) {
        (Some(v), Some(t)) => Some(like(t, v)?),
        _ => None,
    };
    let (param, master_param) = finish_param(param, master, uses_master, p)?;
    Ok(RmspropOut {
        param,
        moment: like(moment, mom)?,
        mean_square: like(mean_square, ms)?,
        mean_grad,
        master_param,
    })
}

/// Results of [`adagrad`]: (param, moment, master_param).
pub type AdagradOut = (Tensor, Tensor, Option<Tensor>);

/// `adagrad_(param, grad, moment, learning_rate, master_param) {epsilon, multi_precision}`.
pub fn adagrad(
    param: &Tensor,
    grad: &Tensor,
    moment: &Tensor,
    lr: &Tensor,
    master: Option<&Tensor>,
    epsilon: f32,
    multi_precision: bool,
) -> KResult<AdagradOut> {
    same_numel("adagrad_ grad", param, grad)?;
    same_numel("adagrad_ moment", param, moment)?;
    let lr = lr.scalar_f32()?;
    let (w, uses_master) = working_param(param, master, multi_precision)?;
    let (pv, gv, mv) = (w.to_f32(), grad.to_f32(), moment.to_f32());
    let m: Vec<f32> = mv.iter().zip(gv.iter()).map(|(&m, &g)| m + g * g).collect();
    let p: Vec<f32> = (0..pv.len())
        .map(|k| pv[k] - lr * gv[k] / (m[k].sqrt() + epsilon))
        .collect();
    let (param_out, master_out) = finish_param(param, master, uses_master, p)?;
    Ok((param_out, like(moment, m)?, master_out))
}

/// Attributes of `adamax_`.
#[derive(Clone, Copy, Debug)]
pub struct AdamaxAttrs {
    pub beta1: f32,
    pub beta2: f32,
    pub epsilon: f32,
    pub multi_precision: bool,
}

/// Results of [`adamax`], in `adamax_`'s result order.
pub struct AdamaxOut {
    pub param: Tensor,
    pub moment: Tensor,
    pub inf_norm: Tensor,
    pub master_param: Option<Tensor>,
}

/// `adamax_(param, grad, learning_rate, moment, inf_norm, beta1_pow, master_param)`.
#[allow(clippy::too_many_arguments)]
pub fn adamax(
    param: &Tensor,
    grad: &Tensor,
    lr: &Tensor,
    moment: &Tensor,
    inf_norm: &Tensor,
    beta1_pow: &Tensor,
    master: Option<&Tensor>,
    at: AdamaxAttrs,
) -> KResult<AdamaxOut> {
    same_numel("adamax_ grad", param, grad)?;
    same_numel("adamax_ moment", param, moment)?;
    same_numel("adamax_ inf_norm", param, inf_norm)?;
    let lr_t = lr.scalar_f32()? / (1.0 - beta1_pow.scalar_f32()?);
    let (w, uses_master) = working_param(param, master, at.multi_precision)?;
    let (pv, gv, mv, uv) = (
        w.to_f32(),
        grad.to_f32(),
        moment.to_f32(),
        inf_norm.to_f32(),
    );
    let n = pv.len();
    let (mut p, mut m, mut u) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for k in 0..n {
        let g = gv[k];
        let m_k = at.beta1 * mv[k] + (1.0 - at.beta1) * g;
        let u_k = g.abs().max(at.beta2 * uv[k] + at.epsilon);
        p.push(pv[k] - lr_t * (m_k / u_k));
        m.push(m_k);
        u.push(u_k);
    }
    let (param_out, master_param) = finish_param(param, master, uses_master, p)?;
    Ok(AdamaxOut {
        param: param_out,
        moment: like(moment, m)?,
        inf_norm: like(inf_norm, u)?,
        master_param,
    })
}

/// Inputs of [`lamb`] (Paddle's operand order).
pub struct LambIn<'a> {
    pub param: &'a Tensor,
    pub grad: &'a Tensor,
    pub learning_rate: &'a Tensor,
    pub moment1: &'a Tensor,
    pub moment2: &'a Tensor,
    pub beta1_pow: &'a Tensor,
    pub beta2_pow: &'a Tensor,
    pub master_param: Option<&'a Tensor>,
    pub skip_update: Option<&'a Tensor>,
}

/// Attributes of `lamb_`.
#[derive(Clone, Copy, Debug)]
pub struct LambAttrs {
    pub weight_decay: f32,
    pub beta1: f32,
    pub beta2: f32,
    pub epsilon: f32,
    pub always_adapt: bool,
    pub multi_precision: bool,
}

/// Results of [`lamb`], in `lamb_`'s result order.
pub struct LambOut {
    pub param: Tensor,
    pub moment1: Tensor,
    pub moment2: Tensor,
    pub beta1_pow: Tensor,
    pub beta2_pow: Tensor,
    pub master_param: Option<Tensor>,
}

/// `lamb_` (see the module docs). A set `skip_update` leaves everything as it was.
pub fn lamb(i: &LambIn<'_>, at: LambAttrs) -> KResult<LambOut> {
    same_numel("lamb_ grad", i.param, i.grad)?;
    same_numel("lamb_ moment1", i.param, i.moment1)?;
    same_numel("lamb_ moment2", i.param, i.moment2)?;
    if let Some(skip) = i.skip_update {
        if skip.to_f64_vec().first().is_some_and(|&v| v != 0.0) {
            return Ok(LambOut {
                param: i.param.clone(),
                moment1: i.moment1.clone(),
                moment2: i.moment2.clone(),
                beta1_pow: i.beta1_pow.clone(),
                beta2_pow: i.beta2_pow.clone(),
                master_param: i.master_param.cloned(),
            });
        }
    }
    let lr = i.learning_rate.scalar_f32()?;
    let (b1p, b2p) = (i.beta1_pow.scalar_f32()?, i.beta2_pow.scalar_f32()?);
    let (w, uses_master) = working_param(i.param, i.master_param, at.multi_precision)?;
    let (pv, gv, m1v, m2v) = (
        w.to_f32(),
        i.grad.to_f32(),
        i.moment1.to_f32(),
        i.moment2.to_f32(),
    );
    let n = pv.len();
    let (mut m1, mut m2, mut r) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for k in 0..n {
        let g = gv[k];
        let a = at.beta1 * m1v[k] + (1.0 - at.beta1) * g;
        let b = at.beta2 * m2v[k] + (1.0 - at.beta2) * g * g;
        let a_hat = a / (1.0 - b1p);
        let b_hat = b / (1.0 - b2p);
        r.push(a_hat / (b_hat.sqrt() + at.epsilon) + at.weight_decay * pv[k]);
        m1.push(a);
        m2.push(b);
    }
    // The trust ratio: Paddle measures the norms only when they can matter.
    let trust = if at.weight_decay > 0.0 || at.always_adapt {
        let pn = pv.iter().map(|&v| v * v).sum::<f32>().sqrt();
        let rn = r.iter().map(|&v| v * v).sum::<f32>().sqrt();
        if pn > 0.0 && rn > 0.0 {
            pn / rn
        } else {
            1.0
        }
    } else {
        1.0
    };
    let step = lr * trust;
    let p: Vec<f32> = pv.iter().zip(&r).map(|(&p, &r)| p - step * r).collect();
    let (param, master_param) = finish_param(i.param, i.master_param, uses_master, p)?;
    Ok(LambOut {
        param,
        moment1: like(i.moment1, m1)?,
        moment2: like(i.moment2, m2)?,
        beta1_pow: like(i.beta1_pow, vec![b1p * at.beta1])?,
        beta2_pow: like(i.beta2_pow, vec![b2p * at.beta2])?,
        master_param,
    })
}
