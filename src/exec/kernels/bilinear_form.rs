//! `bilinear` (`paddle.nn.Bilinear`, `F.bilinear`) and its grad: for each row `b` and output
//! feature `o`, the bilinear form `out[b, o] = x[b]ᵀ · W[o] · y[b] + bias[o]`, with `x` `[B, M]`,
//! `y` `[B, N]`, `W` `[O, M, N]`, `bias` `[1, O]`. (Not `bilinear_interp`, which is `interp.rs`.)
//!
//! The grads are the three contractions of the same product with the output gradient `g`:
//! `dx[b] = Σ_o g[b, o]·W[o]·y[b]`, `dy[b] = Σ_o g[b, o]·W[o]ᵀ·x[b]`,
//! `dW[o] = Σ_b g[b, o]·x[b]·y[b]ᵀ`, and `dbias[o] = Σ_b g[b, o]`, shaped `[1, O]` as the bias is.
//! Each sum runs in f64 and is rounded once to the operands' dtype.

use super::float_dtype;
use crate::exec::dtype::DType;
use crate::exec::error::KResult;
use crate::exec::tensor::Tensor;
use crate::kbail;

/// `(B, M, N, O)`, checked.
fn dims(x: &Tensor, y: &Tensor, w: &Tensor, op: &str) -> KResult<(usize, usize, usize, usize)> {
    let (&[b, m], &[b2, n], &[o, wm, wn]) = (x.shape(), y.shape(), w.shape()) else {
        kbail!(
            "{}: x {:?} and y {:?} must be 2-D and weight {:?} 3-D",
            op,
            x.shape(),
            y.shape(),
            w.shape()
        );
    };
    if b != b2 || wm != m || wn != n {
        kbail!(
            "{}: x {:?}, y {:?} and weight {:?} do not fit [B, M], [B, N], [O, M, N]",
            op,
            x.shape(),
            y.shape(),
            w.shape()
        );
    }
    Ok((b, m, n, o))
}

fn rounded(shape: &[usize], v: Vec<f64>, dt: DType) -> KResult<Tensor> {
    Tensor::from_f32_as(shape, v.into_iter().map(|v| v as f32).collect(), dt)
}

/// `bilinear(x, y, weight, bias)`: `[B, O]`.
pub fn bilinear(x: &Tensor, y: &Tensor, w: &Tensor, bias: Option<&Tensor>) -> KResult<Tensor> {
    let (b, m, n, o) = dims(x, y, w, "bilinear")?;
    if let Some(bi) = bias {
        if bi.numel() != o {
            kbail!("bilinear: bias {:?} must hold {} values", bi.shape(), o);
        }
    }
    let (xv, yv, wv) = (x.to_f64_vec(), y.to_f64_vec(), w.to_f64_vec());
    let bv = bias.map(|t| t.to_f64_vec());
    let mut out = vec![0.0f64; b * o];
    for r in 0..b {
        for k in 0..o {
            let mut s = 0.0;
            for i in 0..m {
                let wy: f64 = (0..n)
                    .map(|j| wv[(k * m + i) * n + j] * yv[r * n + j])
                    .sum();
                s += xv[r * m + i] * wy;
            }
            out[r * o + k] = s + bv.as_ref().map_or(0.0, |bv| bv[k]);
        }
    }
    rounded(&[b, o], out, float_dtype(x.dtype()))
}

/// `bilinear_grad(x, y, weight, out_grad)`: `(x_grad, y_grad, weight_grad, bias_grad)`.
pub fn bilinear_grad(
    x: &Tensor,
    y: &Tensor,
    w: &Tensor,
    dout: &Tensor,
) -> KResult<(Tensor, Tensor, Tensor, Tensor)> {
    let (b, m, n, o) = dims(x, y, w, "bilinear_grad")?;
    if dout.shape() != [b, o] {
        kbail!(
            "bilinear_grad: out_grad has shape {:?}, the output has [{}, {}]",
            dout.shape(),
            b,
            o
        );
    }
    let (xv, yv, wv, g) = (
        x.to_f64_vec(),
        y.to_f64_vec(),
        w.to_f64_vec(),
        dout.to_f64_vec(),
    );
    let (mut dx, mut dy) = (vec![0.0f64; b * m], vec![0.0f64; b * n]);
    let (mut dw, mut db) = (vec![0.0f64; o * m * n], vec![0.0f64; o]);
    for r in 0..b {
        for k in 0..o {
            let gk = g[r * o + k];
            db[k] += gk;
            for i in 0..m {
                for j in 0..n {
                    let wk = wv[(k * m + i) * n + j];
                    dx[r * m + i] += gk * wk * yv[r * n + j];
                    dy[r * n + j] += gk * wk * xv[r * m + i];
                    dw[(k * m + i) * n + j] += gk * xv[r * m + i] * yv[r * n + j];
                }
            }
        }
    }
    let dt = float_dtype(x.dtype());
    Ok((
        rounded(&[b, m], dx, dt)?,
        rounded(&[b, n], dy, dt)?,
        rounded(&[o, m, n], dw, dt)?,
        rounded(&[1, o], db, dt)?,
    ))
}
