//! The adaptive optimizers besides Adam: `rmsprop_`, `adagrad_`, `adamax_`, `lamb_`,
//! `adadelta_`, `nadam_`, `radam_` and `rprop_`, with the formulas of Paddle 3.3.1's CPU kernels,
//! where the placement of ε and the handling of the beta powers differ from one optimizer (and
//! from the textbooks) to the next:
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
//! adadelta  E[g²] = ρ·E[g²] + (1 − ρ)·g²;  u = −sqrt(E[u²] + ε) / sqrt(E[g²] + ε) · g
//!           p = p + lr·u;  E[u²] = ρ·E[u²] + (1 − ρ)·u²
//! nadam     d = 0.96^t (advanced first: d ← 0.96·d), β2^t ← β2^t·β2
//!           μ = β1·(1 − ½·d^ψ);  μ' = β1·(1 − ½·d^ψ·0.96^ψ);  Πμ ← Πμ·μ
//!           m1, m2 as Adam's;  m̂ = μ'·m1 / (1 − Πμ·μ') + (1 − μ)·g / (1 − Πμ)
//!           p = p − lr·m̂ / (sqrt(m2 / (1 − β2^t)) + ε)
//! radam     β1^t, β2^t advanced first;  ρ∞ = 2 / (1 − β2) − 1
//!           ρ ← (ρ·(β2 − β2^t) + β2^t) / (1 − β2^t);  ρt = ρ∞ − 2ρ  (Paddle's running state)
//!           m1, m2 as Adam's;  m̂ = m1 / (1 − β1^t)
//!           ρt > 5: p = p − lr·m̂·r·sqrt(1 − β2^t) / (sqrt(m2) + ε),
//!                   r = sqrt((ρt − 4)(ρt − 2)ρ∞ / ((ρ∞ − 4)(ρ∞ − 2)ρt));  else p = p − lr·m̂
//! rprop     per element: g·prev > 0 → η+, = 0 → 1, < 0 → η− and g ← 0
//!           lr = clamp(lr·η, lr_min, lr_max);  p = p − sign(g)·lr;  prev = g
//! ```
//!
//! `nadam_`, `radam_` and `rprop_` have no multi-precision path in Paddle's CPU kernels (the
//! master weight is not read), so irw refuses `multi_precision` for them rather than guess.
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

fn refuse_multi_precision(op: &str, multi_precision: bool) -> KResult<()> {
    if multi_precision {
        crate::kbail!(
            "{}: multi_precision is not supported by the executor (Paddle's CPU kernel has no \
             master-weight path)",
            op
        );
    }
    Ok(())
}

/// Results of [`adadelta`], in `adadelta_`'s result order.
pub struct AdadeltaOut {
    pub param: Tensor,
    pub avg_squared_grad: Tensor,
    pub avg_squared_update: Tensor,
    pub master_param: Option<Tensor>,
}

/// `adadelta_(param, grad, avg_squared_grad, avg_squared_update, learning_rate, master_param)
/// {rho, epsilon, multi_precision}`.
#[allow(clippy::too_many_arguments)]
pub fn adadelta(
    param: &Tensor,
    grad: &Tensor,
    avg_squared_grad: &Tensor,
    avg_squared_update: &Tensor,
    lr: &Tensor,
    master: Option<&Tensor>,
    rho: f32,
    epsilon: f32,
    multi_precision: bool,
) -> KResult<AdadeltaOut> {
    same_numel("adadelta_ grad", param, grad)?;
    same_numel("adadelta_ avg_squared_grad", param, avg_squared_grad)?;
    same_numel("adadelta_ avg_squared_update", param, avg_squared_update)?;
    let lr = lr.scalar_f32()?;
    let (w, uses_master) = working_param(param, master, multi_precision)?;
    let (pv, gv, sg, su) = (
        w.to_f32(),
        grad.to_f32(),
        avg_squared_grad.to_f32(),
        avg_squared_update.to_f32(),
    );
    let n = pv.len();
    let (mut p, mut sg_out, mut su_out) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for k in 0..n {
        let g = gv[k];
        let sg_k = rho * sg[k] + (1.0 - rho) * g * g;
        let update = -((su[k] + epsilon).sqrt() / (sg_k + epsilon).sqrt() * g);
        p.push(pv[k] + lr * update);
        sg_out.push(sg_k);
        su_out.push(rho * su[k] + (1.0 - rho) * update * update);
    }
    let (param, master_param) = finish_param(param, master, uses_master, p)?;
    Ok(AdadeltaOut {
        param,
        avg_squared_grad: like(avg_squared_grad, sg_out)?,
        avg_squared_update: like(avg_squared_update, su_out)?,
        master_param,
    })
}

/// Adam's two moments after one step: `(m1, m2)`.
fn adam_moments(m1: &[f32], m2: &[f32], g: &[f32], beta1: f32, beta2: f32) -> (Vec<f32>, Vec<f32>) {
    let m1 = m1
        .iter()
        .zip(g)
        .map(|(&m, &g)| beta1 * m + (1.0 - beta1) * g)
        .collect();
    let m2 = m2
        .iter()
        .zip(g)
        .map(|(&m, &g)| beta2 * m + (1.0 - beta2) * g * g)
        .collect();
    (m1, m2)
}

/// Operands of `nadam_` (no master weight: see the module doc).
pub struct NadamIn<'a> {
    pub param: &'a Tensor,
    pub grad: &'a Tensor,
    pub learning_rate: &'a Tensor,
    pub momentum_decay_pow: &'a Tensor,
    pub beta2_pow: &'a Tensor,
    pub mu_product: &'a Tensor,
    pub moment1: &'a Tensor,
    pub moment2: &'a Tensor,
}

/// Attributes of `nadam_`.
#[derive(Clone, Copy, Debug)]
pub struct NadamAttrs {
    pub beta1: f32,
    pub beta2: f32,
    pub epsilon: f32,
    pub momentum_decay: f32,
    pub multi_precision: bool,
}

/// Results of [`nadam`], in `nadam_`'s result order (without the master weight).
pub struct NadamOut {
    pub param: Tensor,
    pub momentum_decay_pow: Tensor,
    pub beta2_pow: Tensor,
    pub mu_product: Tensor,
    pub moment1: Tensor,
    pub moment2: Tensor,
}

/// `nadam_(param, grad, learning_rate, momentum_decay_pow, beta2_pow, mu_product, moment1,
/// moment2, master_param) {beta1, beta2, epsilon, momentum_decay, multi_precision}`.
pub fn nadam(i: &NadamIn<'_>, at: NadamAttrs) -> KResult<NadamOut> {
    refuse_multi_precision("nadam_", at.multi_precision)?;
    same_numel("nadam_ grad", i.param, i.grad)?;
    same_numel("nadam_ moment1", i.param, i.moment1)?;
    same_numel("nadam_ moment2", i.param, i.moment2)?;
    let lr = i.learning_rate.scalar_f32()?;
    let n = i.param.numel();
    let decay_pow = running("nadam_", "momentum_decay_pow", i.momentum_decay_pow, n)?;
    let beta2_pow = running("nadam_", "beta2_pow", i.beta2_pow, n)?;
    let mu_product = running("nadam_", "mu_product", i.mu_product, n)?;
    let (b1, b2, psi) = (at.beta1, at.beta2, at.momentum_decay);
    // The running values after this step, each computed once per state element: one, or
    // one per element of the parameter when some state has that many.
    let len = (decay_pow.len()).max(beta2_pow.len()).max(mu_product.len());
    let decay: Vec<f32> = (0..len).map(|j| at_elem(&decay_pow, j) * 0.96).collect();
    let mu: Vec<f32> = decay
        .iter()
        .map(|d| b1 * (1.0 - 0.5 * d.powf(psi)))
        .collect();
    let mu_next: Vec<f32> = (decay.iter())
        .map(|d| b1 * (1.0 - 0.5 * d.powf(psi) * 0.96f32.powf(psi)))
        .collect();
    let mu_prod: Vec<f32> = (0..len).map(|j| at_elem(&mu_product, j) * mu[j]).collect();
    let b2p: Vec<f32> = (0..len).map(|j| at_elem(&beta2_pow, j) * b2).collect();
    let (pv, gv) = (i.param.to_f32(), i.grad.to_f32());
    let (m1, m2) = adam_moments(&i.moment1.to_f32(), &i.moment2.to_f32(), &gv, b1, b2);
    let p = (0..pv.len())
        .map(|k| {
            let (mu, mu_next, mu_product) =
                (at_elem(&mu, k), at_elem(&mu_next, k), at_elem(&mu_prod, k));
            let mu_product_next = mu_product * mu_next;
            let m1_hat =
                mu_next * m1[k] / (1.0 - mu_product_next) + (1.0 - mu) * gv[k] / (1.0 - mu_product);
            let m2_hat = m2[k] / (1.0 - at_elem(&b2p, k));
            pv[k] - lr * m1_hat / (m2_hat.sqrt() + at.epsilon)
        })
        .collect();
    Ok(NadamOut {
        param: like(i.param, p)?,
        momentum_decay_pow: advanced(i.momentum_decay_pow, &decay)?,
        beta2_pow: advanced(i.beta2_pow, &b2p)?,
        mu_product: advanced(i.mu_product, &mu_prod)?,
        moment1: like(i.moment1, m1)?,
        moment2: like(i.moment2, m2)?,
    })
}

/// The values of an optimizer's running state `name` (a beta power, a product): one, or one
/// per element of the parameter (`n`), as Paddle's `NAdam` and `RAdam` classes create them
/// (the parameter's shape, every element alike); the kernel computes element by element.
fn running(op: &str, name: &str, t: &Tensor, n: usize) -> KResult<Vec<f32>> {
    let v = t.to_f32();
    if v.len() != 1 && v.len() != n {
        crate::kbail!(
            "{op}: {name} has shape {:?}: one element, or one per element of the parameter ({n}), expected",
            t.shape()
        );
    }
    Ok(v.to_vec())
}

/// State `t` after the step: its element j's new value from `v` (one value, or one per
/// element), in `t`'s own size.
fn advanced(t: &Tensor, v: &[f32]) -> KResult<Tensor> {
    like(t, (0..t.numel()).map(|j| at_elem(v, j)).collect())
}

/// Element `k` of a running state's values (its one value when it has one).
fn at_elem<T: Copy>(v: &[T], k: usize) -> T {
    if v.len() == 1 {
        v[0]
    } else {
        v[k]
    }
}

/// Operands of `radam_` (no master weight: see the module doc).
pub struct RadamIn<'a> {
    pub param: &'a Tensor,
    pub grad: &'a Tensor,
    pub learning_rate: &'a Tensor,
    pub beta1_pow: &'a Tensor,
    pub beta2_pow: &'a Tensor,
    pub rho: &'a Tensor,
    pub moment1: &'a Tensor,
    pub moment2: &'a Tensor,
}

/// Attributes of `radam_`.
#[derive(Clone, Copy, Debug)]
pub struct RadamAttrs {
    pub beta1: f32,
    pub beta2: f32,
    pub epsilon: f32,
    pub multi_precision: bool,
}

/// Results of [`radam`], in `radam_`'s result order (without the master weight).
pub struct RadamOut {
    pub param: Tensor,
    pub beta1_pow: Tensor,
    pub beta2_pow: Tensor,
    pub rho: Tensor,
    pub moment1: Tensor,
    pub moment2: Tensor,
}

/// `radam_(param, grad, learning_rate, beta1_pow, beta2_pow, rho, moment1, moment2,
/// master_param) {beta1, beta2, epsilon, multi_precision}`.
pub fn radam(i: &RadamIn<'_>, at: RadamAttrs) -> KResult<RadamOut> {
    refuse_multi_precision("radam_", at.multi_precision)?;
    same_numel("radam_ grad", i.param, i.grad)?;
    same_numel("radam_ moment1", i.param, i.moment1)?;
    same_numel("radam_ moment2", i.param, i.moment2)?;
    let lr = i.learning_rate.scalar_f32()?;
    let n = i.param.numel();
    let beta1_pow = running("radam_", "beta1_pow", i.beta1_pow, n)?;
    let beta2_pow = running("radam_", "beta2_pow", i.beta2_pow, n)?;
    let rho_state = running("radam_", "rho", i.rho, n)?;
    let (b1, b2) = (at.beta1, at.beta2);
    let rho_inf = 2.0 / (1.0 - b2) - 1.0;
    // The running values after this step, each computed once per state element.
    let len = (beta1_pow.len()).max(beta2_pow.len()).max(rho_state.len());
    let b1p: Vec<f32> = (0..len).map(|j| at_elem(&beta1_pow, j) * b1).collect();
    let b2p: Vec<f32> = (0..len).map(|j| at_elem(&beta2_pow, j) * b2).collect();
    let rho: Vec<f32> = (0..len)
        .map(|j| (at_elem(&rho_state, j) * (b2 - b2p[j]) + b2p[j]) / (1.0 - b2p[j]))
        .collect();
    let (pv, gv) = (i.param.to_f32(), i.grad.to_f32());
    let (m1, m2) = adam_moments(&i.moment1.to_f32(), &i.moment2.to_f32(), &gv, b1, b2);
    // The rectification of each state element: `None` while the variance is not tractable.
    let rectify: Vec<Option<f32>> = (rho.iter())
        .map(|&r| {
            let rho_t = rho_inf - 2.0 * r;
            (rho_t > 5.0).then(|| {
                ((rho_t - 4.0) * (rho_t - 2.0) * rho_inf
                    / ((rho_inf - 4.0) * (rho_inf - 2.0) * rho_t))
                    .sqrt()
            })
        })
        .collect();
    let p = (0..pv.len())
        .map(|k| {
            let m1_hat = m1[k] / (1.0 - at_elem(&b1p, k));
            match at_elem(&rectify, k) {
                Some(r) => {
                    let l = (1.0 - at_elem(&b2p, k)).sqrt() / (m2[k].sqrt() + at.epsilon);
                    pv[k] - lr * m1_hat * r * l
                }
                None => pv[k] - lr * m1_hat,
            }
        })
        .collect();
    Ok(RadamOut {
        param: like(i.param, p)?,
        beta1_pow: advanced(i.beta1_pow, &b1p)?,
        beta2_pow: advanced(i.beta2_pow, &b2p)?,
        rho: advanced(i.rho, &rho)?,
        moment1: like(i.moment1, m1)?,
        moment2: like(i.moment2, m2)?,
    })
}

/// Results of [`rprop`]: `(param, prev, learning_rate)`.
pub type RpropOut = (Tensor, Tensor, Tensor);

/// `rprop_(param, grad, prev, learning_rate, master_param, learning_rate_range, etas)
/// {multi_precision}`: `learning_rate` is per element; `learning_rate_range` is `[min, max]`,
/// `etas` `[η−, η+]`.
pub fn rprop(
    param: &Tensor,
    grad: &Tensor,
    prev: &Tensor,
    lr: &Tensor,
    lr_range: &Tensor,
    etas: &Tensor,
    multi_precision: bool,
) -> KResult<RpropOut> {
    refuse_multi_precision("rprop_", multi_precision)?;
    same_numel("rprop_ grad", param, grad)?;
    same_numel("rprop_ prev", param, prev)?;
    same_numel("rprop_ learning_rate", param, lr)?;
    let pair = |t: &Tensor, what: &str| -> KResult<(f32, f32)> {
        match t.to_f32().as_ref() {
            &[a, b] => Ok((a, b)),
            _ => crate::kbail!(
                "rprop_: {} must hold two values, has shape {:?}",
                what,
                t.shape()
            ),
        }
    };
    let (lr_min, lr_max) = pair(lr_range, "learning_rate_range")?;
    let (eta_neg, eta_pos) = pair(etas, "etas")?;
    let (pv, gv, prv, lrv) = (param.to_f32(), grad.to_f32(), prev.to_f32(), lr.to_f32());
    let n = pv.len();
    let (mut p, mut g_out, mut lr_out) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for k in 0..n {
        let product = gv[k] * prv[k];
        let (g, eta) = if product > 0.0 {
            (gv[k], eta_pos)
        } else if product < 0.0 {
            (0.0, eta_neg)
        } else {
            (gv[k], 1.0)
        };
        let mut step = lrv[k] * eta;
        if step > lr_max {
            step = lr_max;
        } else if step < lr_min {
            step = lr_min;
        }
        let sign = if g > 0.0 {
            1.0
        } else if g < 0.0 {
            -1.0
        } else {
            0.0
        };
        p.push(pv[k] - sign * step);
        g_out.push(g);
        lr_out.push(step);
    }
    Ok((like(param, p)?, like(prev, g_out)?, like(lr, lr_out)?))
}
