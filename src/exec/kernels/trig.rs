//! `cos` and `sin` (the rotary position tables of LLaMA-style models) and their `_grad` ops.
//!
//! Both grads take the forward *input* (`cos_grad(x, out_grad)`: `−dout · sin x`;
//! `sin_grad(x, out_grad)`: `dout · cos x`), as Paddle's functors do. A float64 tensor is
//! computed in f64: a rotary table at large positions holds angles of hundreds of radians, whose
//! range reduction in f32 would lose digits Paddle keeps. Other dtypes go through f32 (integers
//! give float32, like the other unary kernels).

use crate::exec::error::KResult;
use crate::exec::kernels::elementwise::{unary_f32, zip_f32};
use crate::exec::tensor::{Data, Tensor};
use crate::kbail;

/// `f` on every element: in f64 for a float64 tensor, through [`unary_f32`] otherwise.
fn map(x: &Tensor, f32_fn: fn(f32) -> f32, f64_fn: fn(f64) -> f64) -> KResult<Tensor> {
    match x.data() {
        Data::F64(v) => Tensor::new(
            x.shape().to_vec(),
            Data::F64(v.iter().map(|&e| f64_fn(e)).collect()),
        ),
        _ => unary_f32(x, f32_fn),
    }
}

/// `f(x, dout)` element-wise, in f64 when `x` is float64 (the result takes `x`'s dtype).
fn zip(
    x: &Tensor,
    dout: &Tensor,
    f32_fn: fn(f32, f32) -> f32,
    f64_fn: fn(f64, f64) -> f64,
) -> KResult<Tensor> {
    match (x.data(), dout.data()) {
        (Data::F64(a), Data::F64(b)) => {
            if x.shape() != dout.shape() {
                kbail!(
                    "operands must have the same shape, got {:?} and {:?}",
                    x.shape(),
                    dout.shape()
                );
            }
            let v = a.iter().zip(b).map(|(&u, &g)| f64_fn(u, g)).collect();
            Tensor::new(x.shape().to_vec(), Data::F64(v))
        }
        _ => zip_f32(x, dout, f32_fn),
    }
}

pub fn cos(x: &Tensor) -> KResult<Tensor> {
    map(x, f32::cos, f64::cos)
}

pub fn sin(x: &Tensor) -> KResult<Tensor> {
    map(x, f32::sin, f64::sin)
}

/// `cos_grad(x, out_grad)`: `−dout · sin x`.
pub fn cos_grad(x: &Tensor, dout: &Tensor) -> KResult<Tensor> {
    zip(x, dout, |v, g| -g * v.sin(), |v, g| -g * v.sin())
}

/// `sin_grad(x, out_grad)`: `dout · cos x`.
pub fn sin_grad(x: &Tensor, dout: &Tensor) -> KResult<Tensor> {
    zip(x, dout, |v, g| g * v.cos(), |v, g| g * v.cos())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::dtype::DType;

    #[test]
    fn float64_stays_f64_and_integers_give_float32() {
        let x = Tensor::new(vec![2], Data::F64(vec![1e3, -0.5])).unwrap();
        let c = cos(&x).unwrap();
        assert_eq!(c.dtype(), DType::F64);
        assert_eq!(c.to_f64_vec(), vec![1e3f64.cos(), (-0.5f64).cos()]);
        let i = Tensor::i64(&[2], vec![0, 1]);
        let s = sin(&i).unwrap();
        assert_eq!(s.dtype(), DType::F32);
        assert_eq!(s.as_f32().unwrap(), &[0.0, 1f32.sin()]);
        let g = Tensor::new(vec![3], Data::F64(vec![1.0; 3])).unwrap();
        assert!(cos_grad(&x, &g).is_err());
    }
}
