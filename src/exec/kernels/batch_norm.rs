//! `batch_norm` / `batch_norm_` and `batch_norm_grad` with Paddle's semantics.
//!
//! Semantics (Paddle's CPU `BatchNormKernel` / `BatchNormGradKernel`), per channel `c` over the
//! `M = N·H·W` elements of the batch:
//! - the running statistics are used (*global stats*) when `use_global_stats`, or when
//!   `is_test` and not `trainable_statistics`; then `y = (x − mean)·scale/√(variance + ε) +
//!   bias`, the running statistics are left as they are, and the saved statistics are not
//!   written (Paddle leaves them uninitialized; irw gives zeros);
//! - otherwise (*training*) the batch's mean and **biased** variance (divided by M) normalize
//!   `x`; the running statistics become `running·momentum + batch·(1 − momentum)` (results
//!   `mean_out`/`variance_out`, which `batch_norm_` writes into its `mean`/`variance` operands);
//!   `saved_mean` is the batch mean and `saved_variance` the **inverse standard deviation**
//!   `1/√(var + ε)`, which is what the backward reads; with `M = 1` the output is `x` and no
//!   statistic is touched;
//! - `reserve_space` is a `uint8` tensor that only cuDNN fills: on the CPU it is empty (shape
//!   `[0]`), and the backward ignores it;
//! - backward: `bias_grad = Σ dy`, `scale_grad = Σ dy·(x − mean)·inv_std`, and `x_grad =
//!   scale·inv_std/M · (M·dy − Σdy − (x − mean)·inv_std·scale_grad)` in training, `scale·inv_std
//!   ·dy` with global stats (`is_test` counts as global stats in the backward).
//!
//! Training mode mixes the rows of the batch: every output depends on every row through the
//! statistics. That is why gradient merge over micro-batches is not the full-batch step for such
//! a program ([`crate::exec::coupling`]).
//!
//! Computed in f32 for f32 and 16-bit inputs (16-bit widened and rounded once; the statistics
//! and parameters keep their own dtypes), in f64 for f64; channel sums run in lanes
//! ([`crate::exec::simd::sum_lanes`]-style) so they vectorize. NHWC runs as NCHW between two
//! transposes.

use crate::exec::dtype::DType;
use crate::exec::error::KResult;
use crate::exec::kernels::conv::channels_last;
use crate::exec::kernels::shape::transpose;
use crate::exec::simd::dispatch;
use crate::exec::tensor::{Data, Tensor};
use crate::kbail;

/// The attributes of a `batch_norm` (and its `_grad`).
#[derive(Clone, Copy, Debug)]
pub struct BatchNormAttrs {
    pub is_test: bool,
    pub momentum: f64,
    pub epsilon: f64,
    pub channels_last: bool,
    pub use_global_stats: bool,
    pub trainable_statistics: bool,
}

impl BatchNormAttrs {
    /// Whether the forward normalizes with the running statistics (see the module doc).
    fn global_stats(&self) -> bool {
        self.use_global_stats || (self.is_test && !self.trainable_statistics)
    }

    /// Whether the backward treats the statistics as constants.
    fn global_stats_in_grad(&self) -> bool {
        self.use_global_stats || self.is_test
    }

    /// `data_format` as Paddle spells it.
    pub fn layout(data_format: &str) -> KResult<bool> {
        channels_last(data_format)
    }
}

/// The outputs of the forward.
pub struct BatchNormOut {
    pub out: Tensor,
    /// `None` when the running statistics are unchanged (global stats, or `M = 1`).
    pub mean_out: Option<Tensor>,
    pub variance_out: Option<Tensor>,
    pub saved_mean: Tensor,
    pub saved_variance: Tensor,
    pub reserve_space: Tensor,
}

/// Element types the kernel computes in.
trait Real:
    Copy
    + Default
    + PartialEq
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::AddAssign
{
    fn of(v: f64) -> Self;
    fn sqrt(self) -> Self;
}

impl Real for f32 {
    fn of(v: f64) -> f32 {
        v as f32
    }
    fn sqrt(self) -> f32 {
        f32::sqrt(self)
    }
}

impl Real for f64 {
    fn of(v: f64) -> f64 {
        v
    }
    fn sqrt(self) -> f64 {
        f64::sqrt(self)
    }
}

const LANES: usize = 16;

/// Σ f(x) over `xs` in [`LANES`] partial sums (so the loop vectorizes), combined pairwise.
#[inline(always)]
fn lane_sum<T: Real>(xs: &[T], f: impl Fn(T) -> T) -> T {
    let mut acc = [T::default(); LANES];
    let mut chunks = xs.chunks_exact(LANES);
    for c in &mut chunks {
        for j in 0..LANES {
            acc[j] += f(c[j]);
        }
    }
    for (j, &x) in chunks.remainder().iter().enumerate() {
        acc[j] += f(x);
    }
    let mut width = LANES / 2;
    while width > 0 {
        for j in 0..width {
            acc[j] += acc[j + width];
        }
        width /= 2;
    }
    acc[0]
}

/// Σ f(x, dy) over two slices, in lanes.
#[inline(always)]
fn lane_sum2<T: Real>(xs: &[T], ys: &[T], f: impl Fn(T, T) -> T) -> T {
    let mut acc = [T::default(); LANES];
    let (mut cx, mut cy) = (xs.chunks_exact(LANES), ys.chunks_exact(LANES));
    for (a, b) in (&mut cx).zip(&mut cy) {
        for j in 0..LANES {
            acc[j] += f(a[j], b[j]);
        }
    }
    for (j, (&a, &b)) in cx.remainder().iter().zip(cy.remainder()).enumerate() {
        acc[j] += f(a, b);
    }
    let mut width = LANES / 2;
    while width > 0 {
        for j in 0..width {
            acc[j] += acc[j + width];
        }
        width /= 2;
    }
    acc[0]
}

/// An NCHW buffer's sizes: `n` samples, `c` channels, `hw` elements per plane.
#[derive(Clone, Copy)]
struct Dims {
    n: usize,
    c: usize,
    hw: usize,
}

impl Dims {
    fn plane(&self, n: usize, c: usize) -> std::ops::Range<usize> {
        let s = (n * self.c + c) * self.hw;
        s..s + self.hw
    }
}

/// Per channel: (mean, biased variance) of the batch.
fn batch_stats<T: Real>(d: Dims, x: &[T]) -> (Vec<T>, Vec<T>) {
    let m = T::of((d.n * d.hw) as f64);
    let mut mean = vec![T::default(); d.c];
    let mut var = vec![T::default(); d.c];
    for c in 0..d.c {
        let mut s = T::default();
        for n in 0..d.n {
            s += lane_sum(&x[d.plane(n, c)], |v| v);
        }
        let mu = s / m;
        let mut q = T::default();
        for n in 0..d.n {
            q += lane_sum(&x[d.plane(n, c)], |v| (v - mu) * (v - mu));
        }
        mean[c] = mu;
        var[c] = q / m;
    }
    (mean, var)
}

/// `y = x·(inv_std·scale) + (bias − mean·inv_std·scale)` per channel.
fn normalize<T: Real>(
    d: Dims,
    x: &[T],
    mean: &[T],
    inv_std: &[T],
    scale: &[T],
    bias: &[T],
) -> Vec<T> {
    let mut y = vec![T::default(); x.len()];
    for c in 0..d.c {
        let a = inv_std[c] * scale[c];
        let b = bias[c] - mean[c] * a;
        for n in 0..d.n {
            let r = d.plane(n, c);
            for (o, &v) in y[r.clone()].iter_mut().zip(&x[r]) {
                *o = v * a + b;
            }
        }
    }
    y
}

struct Forward<T> {
    y: Vec<T>,
    /// Running statistics after the update (training with `M > 1`).
    running: Option<(Vec<T>, Vec<T>)>,
    saved_mean: Vec<T>,
    saved_inv_std: Vec<T>,
}

#[allow(clippy::too_many_arguments)]
fn forward<T: Real>(
    d: Dims,
    x: &[T],
    run_mean: &[T],
    run_var: &[T],
    scale: &[T],
    bias: &[T],
    at: &BatchNormAttrs,
) -> Forward<T> {
    let eps = T::of(at.epsilon);
    let one = T::of(1.0);
    if at.global_stats() {
        let inv: Vec<T> = run_var.iter().map(|&v| one / (v + eps).sqrt()).collect();
        return Forward {
            y: normalize(d, x, run_mean, &inv, scale, bias),
            running: None,
            saved_mean: vec![T::default(); d.c],
            saved_inv_std: vec![T::default(); d.c],
        };
    }
    if d.n * d.hw == 1 {
        return Forward {
            y: x.to_vec(),
            running: None,
            saved_mean: vec![T::default(); d.c],
            saved_inv_std: vec![T::default(); d.c],
        };
    }
    let (mean, var) = batch_stats(d, x);
    let mom = T::of(at.momentum);
    let keep = one - mom;
    let rm = run_mean
        .iter()
        .zip(&mean)
        .map(|(&r, &b)| r * mom + b * keep)
        .collect();
    let rv = run_var
        .iter()
        .zip(&var)
        .map(|(&r, &b)| r * mom + b * keep)
        .collect();
    // Paddle's form: (var + ε)⁻¹ then the square root.
    let inv: Vec<T> = var.iter().map(|&v| (one / (v + eps)).sqrt()).collect();
    Forward {
        y: normalize(d, x, &mean, &inv, scale, bias),
        running: Some((rm, rv)),
        saved_mean: mean,
        saved_inv_std: inv,
    }
}

/// (x_grad, scale_grad, bias_grad) given the mean and inverse standard deviation used.
fn backward<T: Real>(
    d: Dims,
    x: &[T],
    dy: &[T],
    mean: &[T],
    inv_std: &[T],
    scale: &[T],
    global: bool,
) -> (Vec<T>, Vec<T>, Vec<T>) {
    let m = T::of((d.n * d.hw) as f64);
    let mut dx = vec![T::default(); x.len()];
    let mut dscale = vec![T::default(); d.c];
    let mut dbias = vec![T::default(); d.c];
    for c in 0..d.c {
        let (mu, inv) = (mean[c], inv_std[c]);
        let (mut sdy, mut sdyx) = (T::default(), T::default());
        for n in 0..d.n {
            let r = d.plane(n, c);
            sdy += lane_sum(&dy[r.clone()], |v| v);
            sdyx += lane_sum2(&x[r.clone()], &dy[r], |a, g| g * (a - mu));
        }
        let ds = sdyx * inv;
        dscale[c] = ds;
        dbias[c] = sdy;
        for n in 0..d.n {
            let r = d.plane(n, c);
            let (xs, gs) = (&x[r.clone()], &dy[r.clone()]);
            let out = &mut dx[r];
            if global {
                let a = scale[c] * inv;
                for (o, &g) in out.iter_mut().zip(gs) {
                    *o = g * a;
                }
            } else {
                let a = scale[c] * inv / m;
                for ((o, &g), &v) in out.iter_mut().zip(gs).zip(xs) {
                    *o = a * (g * m - sdy - (v - mu) * inv * ds);
                }
            }
        }
    }
    (dx, dscale, dbias)
}

/// The layout of `x` in NCHW terms, and `x` transposed to NCHW when it is NHWC.
fn nchw(x: &Tensor, last: bool) -> KResult<(Dims, std::borrow::Cow<'_, Tensor>)> {
    if !x.dtype().is_float() {
        kbail!(
            "batch_norm computes float tensors, got {}",
            x.dtype().attr_name()
        );
    }
    let s = x.shape();
    if s.len() < 2 {
        kbail!("batch_norm needs at least 2 dimensions, got {:?}", s);
    }
    let t = if last && s.len() > 2 {
        let mut perm: Vec<i64> = vec![0, s.len() as i64 - 1];
        perm.extend(1..s.len() as i64 - 1);
        std::borrow::Cow::Owned(transpose(x, &perm)?)
    } else {
        std::borrow::Cow::Borrowed(x)
    };
    let ts = t.shape();
    let d = Dims {
        n: ts[0],
        c: ts[1],
        hw: ts[2..].iter().product(),
    };
    Ok((d, t))
}

fn back_to_layout(t: Tensor, last: bool) -> KResult<Tensor> {
    let r = t.shape().len();
    if last && r > 2 {
        let mut perm: Vec<i64> = vec![0];
        perm.extend(2..r as i64);
        perm.push(1);
        transpose(&t, &perm)
    } else {
        Ok(t)
    }
}

fn channel_vec(t: &Tensor, c: usize, what: &str) -> KResult<()> {
    if t.numel() != c {
        kbail!(
            "{} has {} elements, the input has {} channels",
            what,
            t.numel(),
            c
        );
    }
    if !t.dtype().is_float() {
        kbail!(
            "{} is {}, expected a float tensor",
            what,
            t.dtype().attr_name()
        );
    }
    Ok(())
}

/// Values of `t` in the compute type.
fn vals<T: Real>(t: &Tensor) -> Vec<T> {
    t.to_f64_vec().into_iter().map(T::of).collect()
}

/// A result of shape `shape` in dtype `like`, from the compute type.
fn tensor_of(shape: &[usize], v: Vec<f32>, like: DType) -> KResult<Tensor> {
    Tensor::from_f32_as(shape, v, like)
}

fn tensor_of64(shape: &[usize], v: Vec<f64>, like: DType) -> KResult<Tensor> {
    let t = Tensor::new(shape.to_vec(), Data::F64(v))?;
    Ok(crate::exec::kernels::cast::cast(&t, like))
}

/// `batch_norm(x, mean, variance, scale, bias)`.
pub fn batch_norm(
    x: &Tensor,
    mean: &Tensor,
    variance: &Tensor,
    scale: &Tensor,
    bias: &Tensor,
    at: &BatchNormAttrs,
) -> KResult<BatchNormOut> {
    let (d, xc) = nchw(x, at.channels_last)?;
    for (t, what) in [
        (mean, "mean"),
        (variance, "variance"),
        (scale, "scale"),
        (bias, "bias"),
    ] {
        channel_vec(t, d.c, what)?;
    }
    let cshape = [d.c];
    macro_rules! finish {
        ($f:expr, $mk:ident) => {{
            let f = $f;
            let out = back_to_layout($mk(xc.shape(), f.y, x.dtype())?, at.channels_last)?;
            let (mean_out, variance_out) = match f.running {
                Some((rm, rv)) => (
                    Some($mk(mean.shape(), rm, mean.dtype())?),
                    Some($mk(variance.shape(), rv, variance.dtype())?),
                ),
                None => (None, None),
            };
            BatchNormOut {
                out,
                mean_out,
                variance_out,
                saved_mean: $mk(&cshape, f.saved_mean, mean.dtype())?,
                saved_variance: $mk(&cshape, f.saved_inv_std, variance.dtype())?,
                reserve_space: Tensor::new(vec![0], Data::U8(Vec::new()))?,
            }
        }};
    }
    Ok(if x.dtype() == DType::F64 {
        let xs = xc.to_f64_vec();
        finish!(
            forward::<f64>(
                d,
                &xs,
                &vals(mean),
                &vals(variance),
                &vals(scale),
                &vals(bias),
                at
            ),
            tensor_of64
        )
    } else {
        let xs = xc.to_f32();
        finish!(
            dispatch(|| forward::<f32>(
                d,
                &xs,
                &vals(mean),
                &vals(variance),
                &vals(scale),
                &vals(bias),
                at
            )),
            tensor_of
        )
    })
}

/// `batch_norm_grad(x, scale, bias, mean_out, variance_out, saved_mean, saved_variance,
/// reserve_space, out_grad)`: (x_grad, scale_grad, bias_grad).
#[allow(clippy::too_many_arguments)]
pub fn batch_norm_grad(
    x: &Tensor,
    scale: &Tensor,
    mean_out: &Tensor,
    variance_out: &Tensor,
    saved_mean: &Tensor,
    saved_variance: &Tensor,
    out_grad: &Tensor,
    at: &BatchNormAttrs,
) -> KResult<(Tensor, Tensor, Tensor)> {
    let (d, xc) = nchw(x, at.channels_last)?;
    let (_, gc) = nchw(out_grad, at.channels_last)?;
    if gc.shape() != xc.shape() {
        kbail!(
            "out_grad has shape {:?}, x has {:?}",
            out_grad.shape(),
            x.shape()
        );
    }
    let global = at.global_stats_in_grad();
    let (mean_t, stat_t) = if global {
        (mean_out, variance_out)
    } else {
        (saved_mean, saved_variance)
    };
    for (t, what) in [
        (scale, "scale"),
        (mean_t, if global { "mean_out" } else { "saved_mean" }),
        (
            stat_t,
            if global {
                "variance_out"
            } else {
                "saved_variance"
            },
        ),
    ] {
        channel_vec(t, d.c, what)?;
    }
    macro_rules! run {
        ($t:ty, $xs:expr, $gs:expr, $mk:ident) => {{
            let mean: Vec<$t> = vals(mean_t);
            let stat: Vec<$t> = vals(stat_t);
            let one = <$t as Real>::of(1.0);
            let eps = <$t as Real>::of(at.epsilon);
            let inv: Vec<$t> = if global {
                stat.iter().map(|&v| one / (v + eps).sqrt()).collect()
            } else {
                stat
            };
            let sc: Vec<$t> = vals(scale);
            let (dx, ds, db) = dispatch(|| backward::<$t>(d, &$xs, &$gs, &mean, &inv, &sc, global));
            (
                back_to_layout($mk(xc.shape(), dx, x.dtype())?, at.channels_last)?,
                $mk(scale.shape(), ds, scale.dtype())?,
                $mk(scale.shape(), db, scale.dtype())?,
            )
        }};
    }
    Ok(if x.dtype() == DType::F64 {
        run!(f64, xc.to_f64_vec(), gc.to_f64_vec(), tensor_of64)
    } else {
        run!(f32, xc.to_f32(), gc.to_f32(), tensor_of)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::kernels::testdata::{floats, paddle_case, seq_by, seq_d, seq_x, Close};

    struct Case {
        x: Tensor,
        mean: Tensor,
        var: Tensor,
        scale: Tensor,
        bias: Tensor,
        at: BatchNormAttrs,
        json: serde_json::Value,
    }

    fn case(name: &str) -> Case {
        let json = paddle_case(name);
        let xs: Vec<usize> = json["x"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as usize)
            .collect();
        let last = json["data_format"] == "NHWC";
        let c = if last { xs[3] } else { xs[1] };
        let training = json["training"].as_bool().unwrap();
        let v = |f: fn(f64) -> f64| Tensor::f32(&[c], seq_by(c, f));
        Case {
            x: Tensor::f32(&xs, seq_x(xs.iter().product())),
            scale: v(|i| 1.0 + 0.1 * i),
            bias: v(|i| 0.2 - 0.05 * i),
            mean: v(|i| 0.01 * i),
            var: v(|i| 1.0 + 0.2 * i),
            at: BatchNormAttrs {
                is_test: !training,
                momentum: json["momentum"].as_f64().unwrap(),
                epsilon: json["epsilon"].as_f64().unwrap(),
                channels_last: last,
                use_global_stats: json["use_global_stats"].as_bool().unwrap(),
                trainable_statistics: false,
            },
            json,
        }
    }

    #[test]
    fn matches_paddle() {
        for name in [
            "bn_train_nchw",
            "bn_train_nhwc",
            "bn_global_stats",
            "bn_eval",
        ] {
            let k = case(name);
            let o = batch_norm(&k.x, &k.mean, &k.var, &k.scale, &k.bias, &k.at).unwrap();
            let tol = Close::new(1e-5);
            tol.paddle(name, "out", &o.out, &k.json);
            let running = |t: Option<Tensor>, init: &Tensor| t.unwrap_or_else(|| init.clone());
            tol.paddle(name, "mean_out", &running(o.mean_out, &k.mean), &k.json);
            tol.paddle(
                name,
                "variance_out",
                &running(o.variance_out, &k.var),
                &k.json,
            );
            if !k.at.global_stats() {
                // With global stats Paddle leaves the saved statistics uninitialized.
                tol.paddle(name, "saved_mean", &o.saved_mean, &k.json);
                tol.paddle(name, "saved_variance", &o.saved_variance, &k.json);
            }
            assert_eq!(o.reserve_space.dtype(), DType::U8);
            let dy = Tensor::f32(k.x.shape(), seq_d(k.x.numel()));
            // The backward reads the running statistics after the forward's update (Paddle
            // hands it mean_out/variance_out), and the saved ones.
            let rm = Tensor::f32(
                &[k.mean.numel()],
                floats(&k.json, "mean_out")
                    .iter()
                    .map(|&v| v as f32)
                    .collect(),
            );
            let rv = Tensor::f32(
                &[k.var.numel()],
                floats(&k.json, "variance_out")
                    .iter()
                    .map(|&v| v as f32)
                    .collect(),
            );
            let (dx, ds, db) = batch_norm_grad(
                &k.x,
                &k.scale,
                &rm,
                &rv,
                &o.saved_mean,
                &o.saved_variance,
                &dy,
                &k.at,
            )
            .unwrap();
            tol.paddle(name, "x_grad", &dx, &k.json);
            tol.paddle(name, "scale_grad", &ds, &k.json);
            tol.paddle(name, "bias_grad", &db, &k.json);
        }
    }

    /// The definition in f64 against the kernel's f32, on a batch that is not a multiple of the
    /// lane count; and the x gradient against central differences of Σ y·dy.
    #[test]
    fn training_matches_the_definition() {
        let (n, c, hw) = (3usize, 2usize, 7usize);
        let x: Vec<f64> = seq_x(n * c * hw);
        let dy: Vec<f64> = seq_d(n * c * hw);
        let scale = [1.5, -0.5];
        let bias = [0.1, 0.2];
        let at = BatchNormAttrs {
            is_test: false,
            momentum: 0.9,
            epsilon: 1e-5,
            channels_last: false,
            use_global_stats: false,
            trainable_statistics: false,
        };
        let d = Dims { n, c, hw };
        let f = |x: &[f64]| forward::<f64>(d, x, &[0.0; 2], &[1.0; 2], &scale, &bias, &at);
        let fx = f(&x);
        for ch in 0..c {
            let vals: Vec<f64> = (0..n).flat_map(|s| x[d.plane(s, ch)].to_vec()).collect();
            let mu = vals.iter().sum::<f64>() / vals.len() as f64;
            let var = vals.iter().map(|v| (v - mu).powi(2)).sum::<f64>() / vals.len() as f64;
            assert!((fx.saved_mean[ch] - mu).abs() < 1e-12);
            assert!((fx.saved_inv_std[ch] - 1.0 / (var + 1e-5).sqrt()).abs() < 1e-9);
            let (rm, rv) = fx.running.as_ref().unwrap();
            assert!((rm[ch] - 0.1 * mu).abs() < 1e-12);
            assert!((rv[ch] - (0.9 + 0.1 * var)).abs() < 1e-12);
        }
        let (dx, _, _) = backward(d, &x, &dy, &fx.saved_mean, &fx.saved_inv_std, &scale, false);
        let loss = |x: &[f64]| f(x).y.iter().zip(&dy).map(|(a, b)| a * b).sum::<f64>();
        let h = 1e-6;
        for k in 0..x.len() {
            let (mut p, mut m) = (x.clone(), x.clone());
            p[k] += h;
            m[k] -= h;
            let num = (loss(&p) - loss(&m)) / (2.0 * h);
            assert!(
                (dx[k] - num).abs() < 1e-6,
                "x_grad[{k}]: {} vs {num}",
                dx[k]
            );
        }
        // f32 through the tensor entry agrees with the f64 definition.
        let xt = Tensor::f32(&[n, c, hw], x.iter().map(|&v| v as f32).collect());
        let p = |v: &[f64]| Tensor::f32(&[c], v.iter().map(|&v| v as f32).collect());
        let o = batch_norm(
            &xt,
            &p(&[0.0; 2]),
            &p(&[1.0; 2]),
            &p(&scale),
            &p(&bias),
            &at,
        )
        .unwrap();
        Close::new(1e-6).all("y", &o.out.to_f64_vec(), &fx.y);
    }

    #[test]
    fn bf16_input_keeps_f32_statistics() {
        let x = crate::exec::kernels::cast::cast(&Tensor::f32(&[4, 3, 5], seq_x(60)), DType::BF16);
        let p = |v: f32| Tensor::f32(&[3], vec![v; 3]);
        let at = BatchNormAttrs {
            is_test: false,
            momentum: 0.9,
            epsilon: 1e-5,
            channels_last: false,
            use_global_stats: false,
            trainable_statistics: false,
        };
        let o = batch_norm(&x, &p(0.0), &p(1.0), &p(1.0), &p(0.0), &at).unwrap();
        assert_eq!(o.out.dtype(), DType::BF16);
        assert_eq!(o.mean_out.unwrap().dtype(), DType::F32);
        let xf = crate::exec::kernels::cast::cast(&x, DType::F32);
        let of = batch_norm(&xf, &p(0.0), &p(1.0), &p(1.0), &p(0.0), &at).unwrap();
        assert_eq!(
            o.out,
            crate::exec::kernels::cast::cast(&of.out, DType::BF16)
        );
    }

    #[test]
    fn bad_shapes_are_errors() {
        let at = BatchNormAttrs {
            is_test: false,
            momentum: 0.9,
            epsilon: 1e-5,
            channels_last: false,
            use_global_stats: false,
            trainable_statistics: false,
        };
        let x = Tensor::f32(&[2, 3, 4], vec![0.0; 24]);
        let p3 = Tensor::f32(&[3], vec![1.0; 3]);
        let p2 = Tensor::f32(&[2], vec![1.0; 2]);
        assert!(batch_norm(&x, &p3, &p3, &p2, &p3, &at).is_err());
        assert!(batch_norm(&Tensor::f32(&[6], vec![0.0; 6]), &p3, &p3, &p3, &p3, &at).is_err());
    }
}
