//! `prelu` and `prelu_grad`: a leaky relu whose negative slope is a learned tensor `alpha`.
//!
//! The one question is which slope an element reads, and it depends on `mode`:
//!
//! - `all`: one slope, `alpha[0]`;
//! - `channel`: one per channel, the channel being axis 1 (`NCHW`) or the last axis (`NHWC`);
//! - `element`: one per element of a sample, `alpha` shaped like `x` without its batch axis.
//!
//! An element uses its slope where `x ≤ 0`, and so gets its gradient there: at `x = 0` exactly
//! Paddle takes the slope side, for both `x_grad` and `alpha_grad`. `alpha_grad` sums
//! `x · dout` over every element that shares a slope, in f32 in element order as Paddle's CPU
//! kernel does.

use crate::exec::error::KResult;
use crate::exec::tensor::Tensor;
use crate::kbail;

/// Which slope of `alpha` an element reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    All,
    Channel { channels_last: bool },
    Element,
}

impl Mode {
    /// `mode` and `data_format` as the op spells them.
    pub fn parse(mode: &str, data_format: &str) -> KResult<Mode> {
        Ok(match mode {
            "all" => Mode::All,
            "element" => Mode::Element,
            "channel" => Mode::Channel {
                channels_last: match data_format {
                    "NCHW" | "NCL" | "NCDHW" => false,
                    "NHWC" | "NLC" | "NDHWC" => true,
                    other => kbail!(
                        "prelu: data_format `{}` is not one the executor runs (NCHW or NHWC)",
                        other
                    ),
                },
            },
            other => kbail!(
                "prelu: mode `{}` is not one of `all`, `channel`, `element`",
                other
            ),
        })
    }
}

/// For each element of `x`, the index of its slope in `alpha`, after checking `alpha`'s size.
fn slope_index(x: &Tensor, alpha: &Tensor, mode: Mode) -> KResult<Box<dyn Fn(usize) -> usize>> {
    let s = x.shape();
    let (want, f): (usize, Box<dyn Fn(usize) -> usize>) = match mode {
        Mode::All => (1, Box::new(|_| 0)),
        Mode::Channel { .. } if s.len() < 2 => {
            kbail!(
                "prelu: channel mode needs an input of rank 2 or more, got {:?}",
                s
            )
        }
        Mode::Channel {
            channels_last: false,
        } => {
            let (c, inner): (usize, usize) = (s[1], s[2..].iter().product());
            (c, Box::new(move |i| (i / inner.max(1)) % c))
        }
        Mode::Channel {
            channels_last: true,
        } => {
            let c = s[s.len() - 1];
            (c, Box::new(move |i| i % c))
        }
        Mode::Element => {
            let per: usize = s.iter().skip(1).product();
            (per, Box::new(move |i| i % per.max(1)))
        }
    };
    if alpha.numel() != want {
        kbail!(
            "prelu: alpha {:?} must hold {} slope(s) for mode {:?} and input {:?}",
            alpha.shape(),
            want,
            mode,
            s
        );
    }
    Ok(f)
}

fn float_like(x: &Tensor) -> crate::exec::dtype::DType {
    if x.dtype().is_float() {
        x.dtype()
    } else {
        crate::exec::dtype::DType::F32
    }
}

/// `prelu(x, alpha) {data_format, mode}`: `x` where `x > 0`, `alpha · x` elsewhere.
pub fn prelu(x: &Tensor, alpha: &Tensor, mode: Mode) -> KResult<Tensor> {
    let slope = slope_index(x, alpha, mode)?;
    let (xs, a) = (x.to_f32(), alpha.to_f32());
    let out = xs
        .iter()
        .enumerate()
        .map(|(i, &v)| if v > 0.0 { v } else { a[slope(i)] * v })
        .collect();
    Tensor::from_f32_as(x.shape(), out, float_like(x))
}

/// `prelu_grad(x, alpha, out_grad) {data_format, mode}`: `(x_grad, alpha_grad)`.
pub fn prelu_grad(
    x: &Tensor,
    alpha: &Tensor,
    dout: &Tensor,
    mode: Mode,
) -> KResult<(Tensor, Tensor)> {
    if x.shape() != dout.shape() {
        kbail!(
            "prelu_grad: out_grad {:?} is not the shape of x {:?}",
            dout.shape(),
            x.shape()
        );
    }
    let slope = slope_index(x, alpha, mode)?;
    let (xs, a, g) = (x.to_f32(), alpha.to_f32(), dout.to_f32());
    let mut dx = vec![0.0f32; xs.len()];
    let mut da = vec![0.0f32; a.len()];
    for i in 0..xs.len() {
        if xs[i] > 0.0 {
            dx[i] = g[i];
        } else {
            let k = slope(i);
            dx[i] = a[k] * g[i];
            da[k] += xs[i] * g[i];
        }
    }
    Ok((
        Tensor::from_f32_as(x.shape(), dx, float_like(x))?,
        Tensor::from_f32_as(alpha.shape(), da, float_like(alpha))?,
    ))
}
