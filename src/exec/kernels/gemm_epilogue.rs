//! `fused_gemm_epilogue` and its grad: cuBLASLt's GEMM whose epilogue adds a bias and applies
//! an activation, as Paddle's fusion pass makes it from `matmul` + `add` (+ `relu`) and their
//! gradients.
//!
//! A fused op means what the ops it replaces mean, so each is computed here by the kernels of
//! those ops, in their order: the fused program runs to the same numbers as the unfused one, and
//! `irw check` comparing the two tests the rewrite, not a second implementation of a GEMM. The
//! shape rules are Paddle's (`FusedGemmEpilogueInferMeta`, `FusedGemmEpilogueGradInferMeta`): `y`
//! is a matrix, `x` has rank 2 or more (its leading dims are a batch, as for `matmul`), `bias` is
//! one value per output column.
//!
//! `reserve_space` is what the grad needs of the forward's epilogue. For `relu`, cuBLASLt keeps
//! a bit mask of the positive outputs; here it is the output itself (the dtype and shape Paddle's
//! InferMeta gives it), whose sign is the same mask. The GELU epilogue is not run: cuBLASLt's
//! GELU is its own approximation, which no kernel here reproduces.

use super::broadcast::reduce_to_shape;
use super::{activation as act, elementwise as ew, float_dtype, matmul};
use crate::exec::error::KResult;
use crate::exec::Tensor;
use crate::kbail;

/// The epilogue's activation (`activation` / `activation_grad`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activation {
    None,
    Relu,
}

impl Activation {
    /// `activation` of the forward op (`"none"`, `"relu"`).
    pub fn forward(name: &str) -> KResult<Activation> {
        match name {
            "none" => Ok(Activation::None),
            "relu" => Ok(Activation::Relu),
            other => unsupported(other),
        }
    }

    /// `activation_grad` of the grad op (`"none"`, `"relu_grad"`).
    pub fn grad(name: &str) -> KResult<Activation> {
        match name {
            "none" => Ok(Activation::None),
            "relu_grad" => Ok(Activation::Relu),
            other => unsupported(other),
        }
    }
}

fn unsupported<T>(name: &str) -> KResult<T> {
    if name.starts_with("gelu") {
        kbail!(
            "the `{}` epilogue is cuBLASLt's own GELU approximation, which the executor does not run (it runs `none` and `relu`)",
            name
        );
    }
    kbail!(
        "unknown epilogue activation `{}` (Paddle's are none, relu and gelu)",
        name
    )
}

/// The operand shapes Paddle's InferMeta accepts; `n` is the output width.
fn check_shapes(x: &Tensor, y: &Tensor, ty: bool) -> KResult<usize> {
    if y.shape().len() != 2 {
        kbail!("y must be a matrix, it has shape {:?}", y.shape());
    }
    if x.shape().len() < 2 {
        kbail!("x must have rank 2 or more, it has shape {:?}", x.shape());
    }
    Ok(if ty { y.shape()[0] } else { y.shape()[1] })
}

/// `fused_gemm_epilogue(x, y, bias) {trans_x, trans_y, activation}` → (out, reserve_space):
/// `act(matmul(x, y) + bias)`; `reserve_space` only with an activation.
pub fn fused_gemm_epilogue(
    x: &Tensor,
    y: &Tensor,
    bias: &Tensor,
    tx: bool,
    ty: bool,
    activation: Activation,
) -> KResult<(Tensor, Option<Tensor>)> {
    let n = check_shapes(x, y, ty)?;
    if bias.shape() != [n] {
        kbail!(
            "bias must have shape [{}] (one value per output column), it has {:?}",
            n,
            bias.shape()
        );
    }
    let product = matmul::matmul(x, y, tx, ty)?;
    let sum = ew::binary(ew::BinaryOp::Add, &product, bias, -1)?;
    Ok(match activation {
        Activation::None => (sum, None),
        Activation::Relu => {
            let out = act::relu(&sum)?;
            (out.clone(), Some(out))
        }
    })
}

/// `fused_gemm_epilogue_grad(x, y, reserve_space, out_grad) {trans_x, trans_y,
/// activation_grad}` → (x_grad, y_grad, bias_grad): the activation's grad through
/// `reserve_space`, then `matmul_grad` and the bias's column sums, as `relu_grad`, `add_grad`
/// and `matmul_grad` compute them.
pub fn fused_gemm_epilogue_grad(
    x: &Tensor,
    y: &Tensor,
    reserve_space: Option<&Tensor>,
    dout: &Tensor,
    tx: bool,
    ty: bool,
    activation: Activation,
) -> KResult<(Tensor, Tensor, Tensor)> {
    let n = check_shapes(x, y, ty)?;
    if dout.shape().len() != x.shape().len() || dout.shape().last() != Some(&n) {
        kbail!(
            "out_grad has shape {:?}: it must have x's rank ({}) and {} columns",
            dout.shape(),
            x.shape().len(),
            n
        );
    }
    let relu_grad;
    let d = match activation {
        Activation::None => dout,
        Activation::Relu => {
            let Some(mask) = reserve_space else {
                kbail!("activation_grad relu_grad needs reserve_space, which is absent");
            };
            if mask.shape() != dout.shape() {
                kbail!(
                    "reserve_space has shape {:?}, out_grad {:?}: they must be equal",
                    mask.shape(),
                    dout.shape()
                );
            }
            relu_grad = act::relu_grad(mask, dout)?;
            &relu_grad
        }
    };
    let (dx, dy) = matmul::matmul_grad(x, y, d, tx, ty)?;
    // add_grad's y_grad: the gradient summed over every dim the bias broadcast along, in the
    // bias's shape, with y's dtype (Paddle's InferMeta gives bias_grad y's dtype).
    let sums = reduce_to_shape(&d.to_f32(), d.shape(), &[n], -1)?;
    let dbias = Tensor::from_f32_as(&[n], sums, float_dtype(y.dtype()))?;
    Ok((dx, dy, dbias))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::dtype::DType;

    fn t(shape: &[usize], v: &[f32]) -> Tensor {
        Tensor::from_f32_as(shape, v.to_vec(), DType::F32).expect("tensor")
    }

    #[test]
    fn the_forward_is_matmul_plus_bias_then_the_activation() {
        let x = t(&[2, 2], &[1.0, 2.0, 3.0, 4.0]);
        let y = t(&[2, 2], &[1.0, -1.0, 0.0, -2.0]);
        let b = t(&[2], &[0.5, 1.0]);
        // x·y = [[1, -5], [3, -11]]; + b = [[1.5, -4], [3.5, -10]].
        let (out, reserve) =
            fused_gemm_epilogue(&x, &y, &b, false, false, Activation::None).expect("none");
        assert_eq!(out.to_f32().to_vec(), vec![1.5, -4.0, 3.5, -10.0]);
        assert!(reserve.is_none());
        let (out, reserve) =
            fused_gemm_epilogue(&x, &y, &b, false, false, Activation::Relu).expect("relu");
        assert_eq!(out.to_f32().to_vec(), vec![1.5, 0.0, 3.5, 0.0]);
        assert_eq!(
            reserve.expect("reserve").to_f32().to_vec(),
            vec![1.5, 0.0, 3.5, 0.0]
        );
    }

    #[test]
    fn the_grad_masks_by_the_reserve_then_is_matmul_grad_and_column_sums() {
        let x = t(&[2, 2], &[1.0, 2.0, 3.0, 4.0]);
        let y = t(&[2, 2], &[1.0, -1.0, 0.0, -2.0]);
        let reserve = t(&[2, 2], &[1.5, 0.0, 3.5, 0.0]);
        let dout = t(&[2, 2], &[1.0, 1.0, 2.0, 2.0]);
        let (dx, dy, db) = fused_gemm_epilogue_grad(
            &x,
            &y,
            Some(&reserve),
            &dout,
            false,
            false,
            Activation::Relu,
        )
        .expect("grad");
        // Masked dout d = [[1, 0], [2, 0]]; dx = d·yᵀ, dy = xᵀ·d, db = column sums of d.
        assert_eq!(dx.to_f32().to_vec(), vec![1.0, 0.0, 2.0, 0.0]);
        assert_eq!(dy.to_f32().to_vec(), vec![7.0, 0.0, 10.0, 0.0]);
        assert_eq!(db.to_f32().to_vec(), vec![3.0, 0.0]);
        assert_eq!(db.shape(), &[2]);
    }

    #[test]
    fn shapes_paddle_refuses_are_errors() {
        let x = t(&[2, 2], &[0.0; 4]);
        let y = t(&[2, 2], &[0.0; 4]);
        let b3 = t(&[3], &[0.0; 3]);
        assert!(fused_gemm_epilogue(&x, &y, &b3, false, false, Activation::None).is_err());
        let v = t(&[2], &[0.0; 2]);
        assert!(fused_gemm_epilogue(&v, &y, &v, false, false, Activation::None).is_err());
        let dout = t(&[2, 2], &[0.0; 4]);
        assert!(
            fused_gemm_epilogue_grad(&x, &y, None, &dout, false, false, Activation::Relu).is_err()
        );
        assert!(Activation::forward("gelu").is_err());
        assert!(Activation::grad("gelu_grad").is_err());
    }
}
