//! Activations and their `_grad` ops: relu, tanh, sigmoid, gelu (exact and tanh-approximate),
//! square, exp, log, sqrt.
//!
//! Paddle's grad ops take the *forward output* where the derivative is cheaper from it
//! (`relu_grad(out, out_grad)`, `tanh_grad(out, …)`, `sigmoid_grad(out, …)`) and the *input*
//! otherwise (`gelu_grad(x, …)`, `square_grad(x, …)`); the signatures here follow that. Formulas
//! are Paddle's activation functors. Functions that call libm (`tanh`, `exp`, `erf`) are not
//! vectorized: they run once per element of small activations, and matching libm's rounding
//! matters more than their speed here.

use crate::exec::error::KResult;
use crate::exec::kernels::elementwise::{unary_f32, zip_f32};
use crate::exec::tensor::Tensor;

extern "C" {
    // The C library's erf (glibc's on Linux): what Paddle's `std::erf` calls, and absent from Rust's std.
    fn erff(x: f32) -> f32;
}

/// The error function (C library `erff`).
pub fn erf(x: f32) -> f32 {
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
