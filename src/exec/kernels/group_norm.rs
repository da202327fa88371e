//! `group_norm` and `instance_norm` (normalization of each sample over groups of channels) and
//! their `_grad` ops.
//!
//! Both normalize each sample's elements in a group of channels by that group's mean and
//! variance, then apply a per-channel scale and bias: `group_norm` splits the `C` channels into
//! `groups` groups, `instance_norm` is the case of one channel per group. They differ in what
//! they save for the backward pass, and the executor writes what Paddle does since a program may
//! read them:
//!
//! - `group_norm` returns `mean` and `variance` (the biased variance itself), each `[N, groups]`;
//! - `instance_norm` returns `saved_mean` and `saved_variance`, each `[N·C]`, the latter being
//!   `1/√(var + ε)`, the inverse standard deviation.
//!
//! Statistics are accumulated in f64 and rounded once; Paddle accumulates in f32, so the two
//! differ by the f32 rounding of a sum, far inside the executor's tolerance. `group_norm` takes
//! `NCHW` or `NHWC` (channels last); `instance_norm` is channels-first only, as in Paddle.
//!
//! The grads follow from `y = x̂·γ + β` with `x̂ = (x − μ)·r`, `r = 1/√(σ² + ε)`, over the `m`
//! elements of a group: `dβ = Σ dy`, `dγ = Σ dy·x̂` (per channel, over samples and positions),
//! and `dx = r·(dx̂ − mean(dx̂) − x̂·mean(dx̂·x̂))` with `dx̂ = dy·γ`. `x̂` is recomputed from `x` and
//! the saved statistics (Paddle's `group_norm_grad` recovers it from `y`, which divides by `γ`;
//! the two agree wherever `γ ≠ 0`).

use super::float_dtype;
use crate::exec::error::KResult;
use crate::exec::tensor::Tensor;
use crate::kbail;

/// How a tensor's elements map onto (sample, channel, position).
struct Layout {
    n: usize,
    c: usize,
    /// Positions per channel (the product of the spatial dims).
    hw: usize,
    channels_last: bool,
}

impl Layout {
    fn of(x: &Tensor, channels_last: bool, op: &str) -> KResult<Layout> {
        let s = x.shape();
        if s.len() < 2 {
            kbail!(
                "{}: input must have a batch and a channel axis, is {:?}",
                op,
                s
            );
        }
        let c = if channels_last { s[s.len() - 1] } else { s[1] };
        let hw = s.iter().product::<usize>() / (s[0] * c).max(1);
        Ok(Layout {
            n: s[0],
            c,
            hw,
            channels_last,
        })
    }

    fn offset(&self, n: usize, c: usize, p: usize) -> usize {
        if self.channels_last {
            (n * self.hw + p) * self.c + c
        } else {
            (n * self.c + c) * self.hw + p
        }
    }
}

/// A per-channel parameter (`scale`, `bias`) as f64, checked to hold `c` values; `fill` when
/// absent.
fn param(t: Option<&Tensor>, c: usize, what: &str, op: &str, fill: f64) -> KResult<Vec<f64>> {
    match t {
        None => Ok(vec![fill; c]),
        Some(t) if t.numel() == c => Ok(t.to_f64_vec()),
        Some(t) => kbail!(
            "{}: {} {:?} must hold one value per channel ({})",
            op,
            what,
            t.shape(),
            c
        ),
    }
}

/// The groups: `groups` groups of `c / groups` channels in each sample.
fn group_count(l: &Layout, groups: i64, op: &str) -> KResult<usize> {
    match usize::try_from(groups) {
        Ok(g) if g >= 1 && l.c.is_multiple_of(g) => Ok(g),
        _ => kbail!(
            "{}: groups {} must be positive and divide the {} channels",
            op,
            groups,
            l.c
        ),
    }
}

/// Mean and biased variance of every (sample, group), in f64.
fn stats(x: &[f64], l: &Layout, groups: usize) -> (Vec<f64>, Vec<f64>) {
    let cg = l.c / groups;
    let m = (cg * l.hw).max(1) as f64;
    let mut mean = vec![0.0; l.n * groups];
    let mut var = vec![0.0; l.n * groups];
    for n in 0..l.n {
        for g in 0..groups {
            let idx = || {
                (g * cg..(g + 1) * cg).flat_map(move |c| (0..l.hw).map(move |p| l.offset(n, c, p)))
            };
            let mu = idx().map(|i| x[i]).sum::<f64>() / m;
            let v = idx().map(|i| (x[i] - mu) * (x[i] - mu)).sum::<f64>() / m;
            mean[n * groups + g] = mu;
            var[n * groups + g] = v;
        }
    }
    (mean, var)
}

/// `y = (x − μ)·r·γ + β` over every group, `r` from `rstd`.
fn normalize(
    x: &[f64],
    l: &Layout,
    groups: usize,
    mean: &[f64],
    rstd: &[f64],
    scale: &[f64],
    bias: &[f64],
) -> Vec<f32> {
    let cg = l.c / groups;
    let mut y = vec![0.0f32; x.len()];
    for n in 0..l.n {
        for c in 0..l.c {
            let k = n * groups + c / cg;
            for p in 0..l.hw {
                let i = l.offset(n, c, p);
                y[i] = ((x[i] - mean[k]) * rstd[k] * scale[c] + bias[c]) as f32;
            }
        }
    }
    y
}

/// The three gradients of a group normalization, given each group's mean and `r`.
struct Grads {
    dx: Vec<f32>,
    dscale: Vec<f32>,
    dbias: Vec<f32>,
}

fn backward(
    x: &[f64],
    dy: &[f64],
    l: &Layout,
    groups: usize,
    mean: &[f64],
    rstd: &[f64],
    scale: &[f64],
) -> Grads {
    let cg = l.c / groups;
    let m = (cg * l.hw).max(1) as f64;
    let mut dx = vec![0.0f32; x.len()];
    let (mut dscale, mut dbias) = (vec![0.0f64; l.c], vec![0.0f64; l.c]);
    for n in 0..l.n {
        for g in 0..groups {
            let k = n * groups + g;
            let (mut s_dxh, mut s_dxh_xh) = (0.0, 0.0);
            for c in g * cg..(g + 1) * cg {
                for p in 0..l.hw {
                    let i = l.offset(n, c, p);
                    let xh = (x[i] - mean[k]) * rstd[k];
                    dscale[c] += dy[i] * xh;
                    dbias[c] += dy[i];
                    s_dxh += dy[i] * scale[c];
                    s_dxh_xh += dy[i] * scale[c] * xh;
                }
            }
            let (a, b) = (s_dxh / m, s_dxh_xh / m);
            for (c, &sc) in scale.iter().enumerate().skip(g * cg).take(cg) {
                for p in 0..l.hw {
                    let i = l.offset(n, c, p);
                    let xh = (x[i] - mean[k]) * rstd[k];
                    dx[i] = (rstd[k] * (dy[i] * sc - a - xh * b)) as f32;
                }
            }
        }
    }
    let f = |v: Vec<f64>| v.into_iter().map(|x| x as f32).collect();
    Grads {
        dx,
        dscale: f(dscale),
        dbias: f(dbias),
    }
}

/// Statistics read back from a forward op's results, checked to hold one value per group.
fn saved(t: &Tensor, want: usize, what: &str, op: &str) -> KResult<Vec<f64>> {
    if t.numel() != want {
        kbail!(
            "{}: {} {:?} must hold {} values, one per sample and group",
            op,
            what,
            t.shape(),
            want
        );
    }
    Ok(t.to_f64_vec())
}

/// What a normalization's forward op returns.
pub struct NormOut {
    pub y: Tensor,
    /// `group_norm`'s `mean`, `instance_norm`'s `saved_mean`.
    pub mean: Tensor,
    /// `group_norm`'s `variance`, `instance_norm`'s `saved_variance` (the inverse std).
    pub variance: Tensor,
}

/// What a normalization's grad op returns; a parameter's gradient is `None` when the op has no
/// such parameter.
pub struct NormGrads {
    pub x_grad: Tensor,
    pub scale_grad: Option<Tensor>,
    pub bias_grad: Option<Tensor>,
}

fn grads_out(
    g: Grads,
    x: &Tensor,
    scale: Option<&Tensor>,
    bias: Option<&Tensor>,
) -> KResult<NormGrads> {
    let dt = float_dtype(x.dtype());
    let param_grad = |p: Option<&Tensor>, v: Vec<f32>| {
        p.map(|p| Tensor::from_f32_as(p.shape(), v, float_dtype(p.dtype())))
            .transpose()
    };
    Ok(NormGrads {
        x_grad: Tensor::from_f32_as(x.shape(), g.dx, dt)?,
        scale_grad: param_grad(scale, g.dscale)?,
        bias_grad: param_grad(bias, g.dbias)?,
    })
}

fn check_dy(x: &Tensor, dy: &Tensor, op: &str) -> KResult<()> {
    if x.shape() != dy.shape() {
        kbail!(
            "{}: y_grad {:?} is not the shape of x {:?}",
            op,
            dy.shape(),
            x.shape()
        );
    }
    Ok(())
}

/// `group_norm(x, scale, bias) {epsilon, groups, data_format}`: `(y, mean, variance)`.
pub fn group_norm(
    x: &Tensor,
    scale: Option<&Tensor>,
    bias: Option<&Tensor>,
    epsilon: f32,
    groups: i64,
    channels_last: bool,
) -> KResult<NormOut> {
    let op = "group_norm";
    let l = Layout::of(x, channels_last, op)?;
    let g = group_count(&l, groups, op)?;
    let (sc, bi) = (
        param(scale, l.c, "scale", op, 1.0)?,
        param(bias, l.c, "bias", op, 0.0)?,
    );
    let xs = x.to_f64_vec();
    let (mean, var) = stats(&xs, &l, g);
    let rstd: Vec<f64> = var
        .iter()
        .map(|v| 1.0 / (v + epsilon as f64).sqrt())
        .collect();
    let y = normalize(&xs, &l, g, &mean, &rstd, &sc, &bi);
    let dt = float_dtype(x.dtype());
    let stat =
        |v: Vec<f64>| Tensor::from_f32_as(&[l.n, g], v.iter().map(|&x| x as f32).collect(), dt);
    Ok(NormOut {
        y: Tensor::from_f32_as(x.shape(), y, dt)?,
        mean: stat(mean)?,
        variance: stat(var)?,
    })
}

/// `group_norm_grad(x, scale, bias, y, mean, variance, y_grad) {epsilon, groups, data_format}`.
#[allow(clippy::too_many_arguments)]
pub fn group_norm_grad(
    x: &Tensor,
    scale: Option<&Tensor>,
    bias: Option<&Tensor>,
    mean: &Tensor,
    variance: &Tensor,
    dy: &Tensor,
    epsilon: f32,
    groups: i64,
    channels_last: bool,
) -> KResult<NormGrads> {
    let op = "group_norm_grad";
    let l = Layout::of(x, channels_last, op)?;
    let g = group_count(&l, groups, op)?;
    check_dy(x, dy, op)?;
    let sc = param(scale, l.c, "scale", op, 1.0)?;
    let mean = saved(mean, l.n * g, "mean", op)?;
    let rstd: Vec<f64> = saved(variance, l.n * g, "variance", op)?
        .iter()
        .map(|v| 1.0 / (v + epsilon as f64).sqrt())
        .collect();
    let gr = backward(&x.to_f64_vec(), &dy.to_f64_vec(), &l, g, &mean, &rstd, &sc);
    grads_out(gr, x, scale, bias)
}

/// `instance_norm(x, scale, bias) {epsilon}`: `(y, saved_mean, saved_variance)`.
pub fn instance_norm(
    x: &Tensor,
    scale: Option<&Tensor>,
    bias: Option<&Tensor>,
    epsilon: f32,
) -> KResult<NormOut> {
    let op = "instance_norm";
    let l = Layout::of(x, false, op)?;
    let (sc, bi) = (
        param(scale, l.c, "scale", op, 1.0)?,
        param(bias, l.c, "bias", op, 0.0)?,
    );
    let xs = x.to_f64_vec();
    let (mean, var) = stats(&xs, &l, l.c);
    let rstd: Vec<f64> = var
        .iter()
        .map(|v| 1.0 / (v + epsilon as f64).sqrt())
        .collect();
    let y = normalize(&xs, &l, l.c, &mean, &rstd, &sc, &bi);
    let dt = float_dtype(x.dtype());
    let stat =
        |v: &[f64]| Tensor::from_f32_as(&[l.n * l.c], v.iter().map(|&x| x as f32).collect(), dt);
    Ok(NormOut {
        y: Tensor::from_f32_as(x.shape(), y, dt)?,
        mean: stat(&mean)?,
        variance: stat(&rstd)?,
    })
}

/// `instance_norm_grad(x, scale, bias, saved_mean, saved_variance, y_grad) {epsilon}`, the saved
/// variance being the inverse standard deviation.
pub fn instance_norm_grad(
    x: &Tensor,
    scale: Option<&Tensor>,
    bias: Option<&Tensor>,
    saved_mean: &Tensor,
    saved_inv_std: &Tensor,
    dy: &Tensor,
) -> KResult<NormGrads> {
    let op = "instance_norm_grad";
    let l = Layout::of(x, false, op)?;
    check_dy(x, dy, op)?;
    let sc = param(scale, l.c, "scale", op, 1.0)?;
    let mean = saved(saved_mean, l.n * l.c, "saved_mean", op)?;
    let rstd = saved(saved_inv_std, l.n * l.c, "saved_variance", op)?;
    let gr = backward(
        &x.to_f64_vec(),
        &dy.to_f64_vec(),
        &l,
        l.c,
        &mean,
        &rstd,
        &sc,
    );
    grads_out(gr, x, scale, bias)
}
