//! Smooth activations and their `_grad` ops: relu, tanh (and `tanh_double_grad`), sigmoid, gelu (exact and
//! tanh-approximate), silu, swiglu, square, pow, exp, log, sqrt, rsqrt, elu, selu, softplus,
//! swish, mish, softsign, logsigmoid, tanh_shrink, celu, stanh. (The piecewise-linear ones, whose gradients are conventions at their kinks, are
//! `piecewise.rs`.)
//!
//! Paddle's grad ops take the *forward output* where the derivative is cheaper from it
//! (`relu_grad(out, out_grad)`, `tanh_grad(out, …)`, `sigmoid_grad(out, …)`) and the *input*
//! otherwise (`gelu_grad(x, …)`, `square_grad(x, …)`); the signatures here follow that. Formulas
//! are Paddle's activation functors. Functions that call libm (`tanh`, `exp`, `erf`) are not
//! vectorized: they run once per element of small activations, and matching libm's rounding
//! matters more than their speed here.

use crate::exec::error::KResult;
use crate::exec::kernels::elementwise::{unary_f32, zip_f32};
use crate::exec::kernels::join::{concat, split_with_num};
use crate::exec::tensor::Tensor;

extern "C" {
    // The C library's erf (glibc's on Linux): what Paddle's `std::erf` calls, and absent from Rust's std.
    fn erff(x: f32) -> f32;
}

/// The error function (C library `erff`).
fn erf(x: f32) -> f32 {
    // SAFETY: `erff` is a pure C function with no preconditions.
    unsafe { erff(x) }
}

pub fn relu(x: &Tensor) -> KResult<Tensor> {
    unary_f32(x, |v| if v > 0.0 { v } else { 0.0 })
}

/// `relu_grad(out, out_grad)`: passes the gradient where the output is positive.
pub fn relu_grad(out: &Tensor, dout: &Tensor) -> KResult<Tensor> {
    zip_f32(out, dout, |o, g| if o > 0.0 { g } else { 0.0 })
}

pub fn tanh(x: &Tensor) -> KResult<Tensor> {
    unary_f32(x, f32::tanh)
}

/// `tanh_grad(out, out_grad)`: `dout · (1 − out²)`.
pub fn tanh_grad(out: &Tensor, dout: &Tensor) -> KResult<Tensor> {
    zip_f32(out, dout, |o, g| g * (1.0 - o * o))
}

/// `tanh_double_grad(out, grad_out, grad_x_grad)`: `(out_grad, grad_out_grad)`, the grads of
/// `tanh_grad`'s operands `out` and `out_grad` for `ddx`, the grad of its result (a gradient
/// penalty differentiates a gradient): `−2 · out · dout · ddx` and `ddx · (1 − out²)`.
pub fn tanh_double_grad(out: &Tensor, dout: &Tensor, ddx: &Tensor) -> KResult<(Tensor, Tensor)> {
    let out_dout = zip_f32(out, dout, |o, g| -2.0 * o * g)?;
    Ok((
        zip_f32(&out_dout, ddx, |od, dd| od * dd)?,
        zip_f32(out, ddx, |o, dd| dd * (1.0 - o * o))?,
    ))
}

pub fn sigmoid(x: &Tensor) -> KResult<Tensor> {
    unary_f32(x, |v| 1.0 / (1.0 + (-v).exp()))
}

/// `sigmoid_grad(out, out_grad)`: `dout · out · (1 − out)`.
pub fn sigmoid_grad(out: &Tensor, dout: &Tensor) -> KResult<Tensor> {
    zip_f32(out, dout, |o, g| g * o * (1.0 - o))
}

const SQRT1_2: f32 = std::f32::consts::FRAC_1_SQRT_2;
/// sqrt(2/π) = M_2_SQRTPI · M_SQRT1_2, Paddle's kAlpha.
const K_ALPHA: f32 = std::f32::consts::FRAC_2_SQRT_PI * std::f32::consts::FRAC_1_SQRT_2;
const GELU_C: f32 = 0.044715;

/// `gelu(x, approximate)`: exact `x·Φ(x)` via erf, or the tanh approximation.
pub fn gelu(x: &Tensor, approximate: bool) -> KResult<Tensor> {
    if approximate {
        unary_f32(x, |v| {
            0.5 * v * (1.0 + (K_ALPHA * (v + GELU_C * v * v * v)).tanh())
        })
    } else {
        unary_f32(x, |v| v * 0.5 * (1.0 + erf(v * SQRT1_2)))
    }
}

/// `gelu_grad(x, out_grad, approximate)` (Paddle's `GeluGradFunctor`).
pub fn gelu_grad(x: &Tensor, dout: &Tensor, approximate: bool) -> KResult<Tensor> {
    if approximate {
        let k_beta = K_ALPHA * GELU_C * 3.0;
        zip_f32(x, dout, move |v, g| {
            let t = (K_ALPHA * v * (1.0 + GELU_C * v * v)).tanh();
            let temp = (1.0 - t * t) * (K_ALPHA + k_beta * v * v);
            g * 0.5 * (1.0 + t + v * temp)
        })
    } else {
        zip_f32(x, dout, |v, g| {
            let first = 0.5 * (1.0 + erf(v * SQRT1_2));
            let second =
                0.5 * std::f32::consts::FRAC_2_SQRT_PI * SQRT1_2 * v * (-0.5 * v * v).exp();
            g * (first + second)
        })
    }
}

pub fn square(x: &Tensor) -> KResult<Tensor> {
    unary_f32(x, |v| v * v)
}

/// `square_grad(x, out_grad)`: `dout · 2x`.
pub fn square_grad(x: &Tensor, dout: &Tensor) -> KResult<Tensor> {
    zip_f32(x, dout, |v, g| g * 2.0 * v)
}

pub fn exp(x: &Tensor) -> KResult<Tensor> {
    unary_f32(x, f32::exp)
}

pub fn log(x: &Tensor) -> KResult<Tensor> {
    unary_f32(x, f32::ln)
}

pub fn sqrt(x: &Tensor) -> KResult<Tensor> {
    unary_f32(x, f32::sqrt)
}

/// `exp_grad(out, out_grad)`: `dout · out`.
pub fn exp_grad(out: &Tensor, dout: &Tensor) -> KResult<Tensor> {
    zip_f32(out, dout, |o, g| g * o)
}

/// `log_grad(x, out_grad)`: `dout · (1 / x)`.
pub fn log_grad(x: &Tensor, dout: &Tensor) -> KResult<Tensor> {
    zip_f32(x, dout, |v, g| g * (1.0 / v))
}

/// `sqrt_grad(out, out_grad)`: `0.5 · dout / out`.
pub fn sqrt_grad(out: &Tensor, dout: &Tensor) -> KResult<Tensor> {
    zip_f32(out, dout, |o, g| 0.5 * g / o)
}

/// `elu(x) {alpha}`: `x` where `x ≥ 0`, else `alpha · (eˣ − 1)`.
pub fn elu(x: &Tensor, alpha: f32) -> KResult<Tensor> {
    unary_f32(
        x,
        move |v| if v < 0.0 { alpha * (v.exp() - 1.0) } else { v },
    )
}

/// `elu_grad(x, out, out_grad) {alpha}`. For `alpha ≥ 0` Paddle reads the output: `dout` where
/// `out > 0`, else `dout · (out + alpha)` (so `x = 0` takes the `alpha` side); for a negative
/// `alpha`, where `out` no longer tells the branch, the input: `dout · alpha · eˣ` where `x ≤ 0`.
pub fn elu_grad(x: &Tensor, out: &Tensor, dout: &Tensor, alpha: f32) -> KResult<Tensor> {
    if alpha >= 0.0 {
        zip_f32(
            out,
            dout,
            move |o, g| if o > 0.0 { g } else { g * (o + alpha) },
        )
    } else {
        zip_f32(
            x,
            dout,
            move |v, g| if v > 0.0 { g } else { g * alpha * v.exp() },
        )
    }
}

/// `selu(x) {scale, alpha}`: `scale · x` where `x > 0`, else `scale · alpha · (eˣ − 1)`.
pub fn selu(x: &Tensor, scale: f32, alpha: f32) -> KResult<Tensor> {
    unary_f32(x, move |v| {
        if v > 0.0 {
            scale * v
        } else {
            scale * (alpha * v.exp() - alpha)
        }
    })
}

/// `selu_grad(out, out_grad) {scale, alpha}`: `dout · scale` where `out > 0`, else
/// `dout · (out + scale · alpha)`.
pub fn selu_grad(out: &Tensor, dout: &Tensor, scale: f32, alpha: f32) -> KResult<Tensor> {
    let la = scale * alpha;
    zip_f32(
        out,
        dout,
        move |o, g| if o > 0.0 { g * scale } else { g * (o + la) },
    )
}

/// `softplus(x) {beta, threshold}`: `ln(1 + e^(βx)) / β`, or `x` itself where `βx` exceeds the
/// threshold (where the logarithm would only round to it).
pub fn softplus(x: &Tensor, beta: f32, threshold: f32) -> KResult<Tensor> {
    unary_f32(x, move |v| {
        let xb = beta * v;
        if xb > threshold {
            v
        } else {
            (1.0 + xb.exp()).ln() / beta
        }
    })
}

/// `softplus_grad(x, out_grad) {beta, threshold}`: `dout / (1 + e^(−βx))`, `dout` past the
/// threshold.
pub fn softplus_grad(x: &Tensor, dout: &Tensor, beta: f32, threshold: f32) -> KResult<Tensor> {
    zip_f32(x, dout, move |v, g| {
        let xb = beta * v;
        if xb > threshold {
            g
        } else {
            g / (1.0 + (-xb).exp())
        }
    })
}

/// `swish(x)`: `x / (1 + e^(−x))` (Paddle's swish op has β = 1).
pub fn swish(x: &Tensor) -> KResult<Tensor> {
    unary_f32(x, |v| v / (1.0 + (-v).exp()))
}

/// `swish_grad(x, out_grad)`: `dout · (out + s · (1 − out))`, `s = 1 / (1 + e^(−x))`,
/// `out = x·s`, as Paddle's functor forms it.
pub fn swish_grad(x: &Tensor, dout: &Tensor) -> KResult<Tensor> {
    zip_f32(x, dout, |v, g| {
        let s = 1.0 / (1.0 + (-v).exp());
        let out = v * s;
        g * (out + s * (1.0 - out))
    })
}

/// Softplus as mish uses it: `x` above the threshold, else `ln(1 + eˣ)`.
fn mish_softplus(v: f32, threshold: f32) -> f32 {
    if v > threshold {
        v
    } else {
        (1.0 + v.exp()).ln()
    }
}

/// `mish(x) {lambda}`: `x · tanh(softplus(x))`, softplus cut off at `lambda`.
pub fn mish(x: &Tensor, threshold: f32) -> KResult<Tensor> {
    unary_f32(x, move |v| v * mish_softplus(v, threshold).tanh())
}

/// `mish_grad(x, out_grad) {lambda}`: `dout · (tanh(sp) + x · (1 − tanh²(sp)) · (1 − e^(−sp)))`.
pub fn mish_grad(x: &Tensor, dout: &Tensor, threshold: f32) -> KResult<Tensor> {
    zip_f32(x, dout, move |v, g| {
        let sp = mish_softplus(v, threshold);
        let t = sp.tanh();
        g * (t + v * (1.0 - t * t) * (1.0 - (-sp).exp()))
    })
}

/// `pow(x) {y}`: `x^y` (a float exponent attribute).
pub fn pow(x: &Tensor, y: f32) -> KResult<Tensor> {
    unary_f32(x, move |v| v.powf(y))
}

/// `pow_grad(x, out_grad) {y}`: `dout · y · x^(y−1)`.
pub fn pow_grad(x: &Tensor, dout: &Tensor, y: f32) -> KResult<Tensor> {
    zip_f32(x, dout, move |v, g| g * y * v.powf(y - 1.0))
}

pub fn rsqrt(x: &Tensor) -> KResult<Tensor> {
    unary_f32(x, |v| 1.0 / v.sqrt())
}

/// `rsqrt_grad(out, out_grad)`: `−½ · dout · out³`.
pub fn rsqrt_grad(out: &Tensor, dout: &Tensor) -> KResult<Tensor> {
    zip_f32(out, dout, |o, g| -0.5 * g * o * o * o)
}

fn sigmoid_f32(v: f32) -> f32 {
    1.0 / (1.0 + (-v).exp())
}

/// `silu(x)`: `x · sigmoid(x)`.
pub fn silu(x: &Tensor) -> KResult<Tensor> {
    unary_f32(x, |v| v * sigmoid_f32(v))
}

/// `silu_grad(x, out, out_grad)`: `dout · s · (1 + x·(1 − s))`, `s = sigmoid(x)`.
pub fn silu_grad(x: &Tensor, dout: &Tensor) -> KResult<Tensor> {
    zip_f32(x, dout, |v, g| {
        let s = sigmoid_f32(v);
        g * s * (1.0 + v * (1.0 - s))
    })
}

/// The halves of `x` along its last axis (`swiglu` without `y`): (first, second).
fn halves(x: &Tensor) -> KResult<(Tensor, Tensor)> {
    let rank = x.shape().len();
    if rank == 0 || !x.shape()[rank - 1].is_multiple_of(2) {
        crate::kbail!(
            "swiglu: without y, x's last dimension must be even, x is {:?}",
            x.shape()
        );
    }
    let mut parts = split_with_num(x, 2, -1)?.into_iter();
    match (parts.next(), parts.next()) {
        (Some(a), Some(b)) => Ok((a, b)),
        _ => unreachable!("split_with_num(2) gives two parts"),
    }
}

/// `swiglu(x, y)`: `silu(x) · y`; with `y` absent, `x`'s last axis is cut in half and the
/// halves play `x` and `y` (Paddle's fused form).
pub fn swiglu(x: &Tensor, y: Option<&Tensor>) -> KResult<Tensor> {
    let (a, b) = match y {
        Some(y) => (x.clone(), y.clone()),
        None => halves(x)?,
    };
    zip_f32(&a, &b, |u, w| u * sigmoid_f32(u) * w)
}

/// `swiglu_grad(x, y, out_grad)`: (dx, dy); without `y`, dx covers both halves of `x` and dy
/// is absent.
pub fn swiglu_grad(
    x: &Tensor,
    y: Option<&Tensor>,
    dout: &Tensor,
) -> KResult<(Tensor, Option<Tensor>)> {
    let (a, b) = match y {
        Some(y) => (x.clone(), y.clone()),
        None => halves(x)?,
    };
    if dout.shape() != a.shape() {
        crate::kbail!(
            "swiglu_grad: out_grad {:?} does not match the output {:?}",
            dout.shape(),
            a.shape()
        );
    }
    let (da, db) = {
        let ab = zip_f32(&a, &b, |u, w| w * silu_derivative(u))?;
        let da = zip_f32(&ab, dout, |d, g| d * g)?;
        let sa = silu(&a)?;
        let db = zip_f32(&sa, dout, |s, g| s * g)?;
        (da, db)
    };
    match y {
        Some(_) => Ok((da, Some(db))),
        None => Ok((concat(&[&da, &db], -1)?, None)),
    }
}

fn silu_derivative(v: f32) -> f32 {
    let s = sigmoid_f32(v);
    s * (1.0 + v * (1.0 - s))
}

/// `softsign(x)`: `x / (1 + |x|)`.
pub fn softsign(x: &Tensor) -> KResult<Tensor> {
    unary_f32(x, |v| v / (1.0 + v.abs()))
}

/// `softsign_grad(x, out_grad)`: `dout / (1 + |x|)²`.
pub fn softsign_grad(x: &Tensor, dout: &Tensor) -> KResult<Tensor> {
    zip_f32(x, dout, |v, g| {
        let d = 1.0 + v.abs();
        g / (d * d)
    })
}

/// `logsigmoid(x)`: `−log(1 + e^(−x))`, with `m = max(−x, 0)` factored out of both exponentials
/// so a large `|x|` neither overflows nor loses the result (Paddle's `LogSigmoidFunctor`).
pub fn logsigmoid(x: &Tensor) -> KResult<Tensor> {
    unary_f32(x, |v| {
        let m = (-v).max(0.0);
        -m - ((-m).exp() + (-v - m).exp()).ln()
    })
}

/// `logsigmoid_grad(x, out_grad)`: `dout · e^(−x) / (1 + e^(−x))`, scaled by `e^(−m)` as the
/// forward.
pub fn logsigmoid_grad(x: &Tensor, dout: &Tensor) -> KResult<Tensor> {
    zip_f32(x, dout, |v, g| {
        let m = (-v).max(0.0);
        let e = (-v - m).exp();
        g * e / ((-m).exp() + e)
    })
}

/// `tanh_shrink(x)`: `x − tanh(x)`.
pub fn tanh_shrink(x: &Tensor) -> KResult<Tensor> {
    unary_f32(x, |v| v - v.tanh())
}

/// `tanh_shrink_grad(x, out_grad)`: `dout · tanh(x)²`.
pub fn tanh_shrink_grad(x: &Tensor, dout: &Tensor) -> KResult<Tensor> {
    zip_f32(x, dout, |v, g| {
        let t = v.tanh();
        g * t * t
    })
}

/// `celu(x) {alpha}`: `max(0, x) + min(0, α·(e^(x/α) − 1))`.
pub fn celu(x: &Tensor, alpha: f32) -> KResult<Tensor> {
    unary_f32(x, move |v| {
        v.max(0.0) + (alpha * ((v / alpha).exp() - 1.0)).min(0.0)
    })
}

/// `celu_grad(x, out_grad) {alpha}`: `dout` for `x > 0`, `dout · e^(x/α)` otherwise.
pub fn celu_grad(x: &Tensor, dout: &Tensor, alpha: f32) -> KResult<Tensor> {
    zip_f32(
        x,
        dout,
        move |v, g| if v > 0.0 { g } else { g * (v / alpha).exp() },
    )
}

/// `stanh(x) {scale_a, scale_b}`: `b · tanh(a·x)`.
pub fn stanh(x: &Tensor, a: f32, b: f32) -> KResult<Tensor> {
    unary_f32(x, move |v| b * (a * v).tanh())
}

/// `stanh_grad(x, out_grad) {scale_a, scale_b}`: `dout · a·b · (1 − tanh²(a·x))`.
pub fn stanh_grad(x: &Tensor, dout: &Tensor, a: f32, b: f32) -> KResult<Tensor> {
    zip_f32(x, dout, move |v, g| {
        let t = (a * v).tanh();
        g * a * b * (1.0 - t * t)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::dtype::DType;
    use crate::exec::kernels::cast::cast;
    use crate::exec::rng::Rng;
    use crate::exec::simd::{with_level, Level};

    /// Central finite difference in f64 of a scalar function.
    fn numeric_grad(f: impl Fn(f64) -> f64, x: f64) -> f64 {
        let h = 1e-5;
        (f(x + h) - f(x - h)) / (2.0 * h)
    }

    extern "C" {
        #[link_name = "erf"]
        fn c_erf(x: f64) -> f64;
    }

    fn erf64(x: f64) -> f64 {
        // SAFETY: pure C function.
        unsafe { c_erf(x) }
    }

    #[test]
    fn forward_values_and_grads_agree_with_calculus() {
        let mut rng = Rng::new(21);
        let xs: Vec<f32> = (0..67).map(|_| rng.normal() * 2.0).collect();
        let x = Tensor::f32(&[67], xs.clone());
        let ones = Tensor::f32(&[67], vec![1.0; 67]);
        type F = fn(f64) -> f64;
        let cases: Vec<(&str, Tensor, Tensor, F)> = vec![
            (
                "tanh",
                tanh(&x).unwrap(),
                tanh_grad(&tanh(&x).unwrap(), &ones).unwrap(),
                f64::tanh,
            ),
            (
                "sigmoid",
                sigmoid(&x).unwrap(),
                sigmoid_grad(&sigmoid(&x).unwrap(), &ones).unwrap(),
                |v| 1.0 / (1.0 + (-v).exp()),
            ),
            (
                "square",
                square(&x).unwrap(),
                square_grad(&x, &ones).unwrap(),
                |v| v * v,
            ),
            (
                "silu",
                silu(&x).unwrap(),
                silu_grad(&x, &ones).unwrap(),
                |v| v / (1.0 + (-v).exp()),
            ),
            (
                "pow3",
                pow(&x, 3.0).unwrap(),
                pow_grad(&x, &ones, 3.0).unwrap(),
                |v| v * v * v,
            ),
            (
                "gelu",
                gelu(&x, false).unwrap(),
                gelu_grad(&x, &ones, false).unwrap(),
                |v| v * 0.5 * (1.0 + erf64(v / 2f64.sqrt())),
            ),
            (
                "gelu_tanh",
                gelu(&x, true).unwrap(),
                gelu_grad(&x, &ones, true).unwrap(),
                |v| {
                    0.5 * v
                        * (1.0
                            + ((2.0 / std::f64::consts::PI).sqrt() * (v + 0.044715 * v * v * v))
                                .tanh())
                },
            ),
        ];
        for (name, fwd, grad, f) in cases {
            for ((&v, y), g) in xs.iter().zip(fwd.to_f64_vec()).zip(grad.to_f64_vec()) {
                let want = f(v as f64);
                assert!(
                    (y - want).abs() <= 1e-6 * (1.0 + want.abs()),
                    "{name}({v}) = {y}, want {want}"
                );
                let dg = numeric_grad(f, v as f64);
                assert!(
                    (g - dg).abs() <= 1e-3 * (1.0 + dg.abs()),
                    "{name}'({v}) = {g}, want {dg}"
                );
            }
        }
    }

    #[test]
    fn rsqrt_and_swiglu() {
        let x = Tensor::f32(&[3], vec![0.25, 1.0, 4.0]);
        let r = rsqrt(&x).unwrap();
        assert_eq!(r.as_f32().unwrap(), &[2.0, 1.0, 0.5]);
        let g = rsqrt_grad(&r, &Tensor::f32(&[3], vec![1.0; 3])).unwrap();
        // d/dx x^-1/2 = -1/2 x^-3/2
        assert_eq!(g.as_f32().unwrap(), &[-4.0, -0.5, -0.0625]);
        let mut rng = Rng::new(6);
        let xy = Tensor::f32(&[2, 6], rng.normal_vec(12));
        let (a, b) = halves(&xy).unwrap();
        let fused = swiglu(&xy, None).unwrap();
        assert_eq!(fused, swiglu(&a, Some(&b)).unwrap());
        let want: Vec<f64> = a
            .to_f64_vec()
            .iter()
            .zip(b.to_f64_vec())
            .map(|(&u, w)| u / (1.0 + (-u).exp()) * w)
            .collect();
        for (g, w) in fused.to_f64_vec().iter().zip(&want) {
            assert!((g - w).abs() <= 1e-6 * (1.0 + w.abs()));
        }
        let dout = Tensor::f32(&[2, 3], rng.normal_vec(6));
        let (dxy, none) = swiglu_grad(&xy, None, &dout).unwrap();
        assert!(none.is_none());
        let (da, db) = swiglu_grad(&a, Some(&b), &dout).unwrap();
        assert_eq!(dxy, concat(&[&da, &db.unwrap()], -1).unwrap());
        // dy = silu(x)·dout; dx by finite differences of Σ swiglu·dout
        let h = 1e-3f32;
        let (av, bv, gv) = (a.to_f64_vec(), b.to_f64_vec(), dout.to_f64_vec());
        for i in 0..6 {
            let f = |d: f32| {
                let u = av[i] as f32 + d;
                (u / (1.0 + (-u).exp()) * bv[i] as f32 * gv[i] as f32) as f64
            };
            let fd = (f(h) - f(-h)) / (2.0 * h as f64);
            assert!((da.to_f64_vec()[i] - fd).abs() <= 1e-2 * (1.0 + fd.abs()));
        }
        assert!(swiglu(&Tensor::f32(&[3], vec![0.0; 3]), None).is_err());
    }

    #[test]
    fn relu_and_fallback() {
        let x = Tensor::f32(&[5], vec![-1.0, 0.0, 2.0, -0.5, 3.0]);
        let r = relu(&x).unwrap();
        assert_eq!(r.as_f32().unwrap(), &[0.0, 0.0, 2.0, 0.0, 3.0]);
        let g = relu_grad(&r, &Tensor::f32(&[5], vec![1.0, 2.0, 3.0, 4.0, 5.0])).unwrap();
        assert_eq!(g.as_f32().unwrap(), &[0.0, 0.0, 3.0, 0.0, 5.0]);
        let mut rng = Rng::new(2);
        let big = Tensor::f32(&[1003], rng.normal_vec(1003));
        for f in [relu, square] {
            let v = f(&big).unwrap();
            let s = with_level(Level::Scalar, || f(&big).unwrap());
            assert_eq!(v, s);
        }
        let hb = cast(&big, DType::BF16);
        let r = relu(&hb).unwrap();
        assert_eq!(r.dtype(), DType::BF16);
        assert_eq!(cast(&r, DType::F32), relu(&cast(&hb, DType::F32)).unwrap());
    }
}
