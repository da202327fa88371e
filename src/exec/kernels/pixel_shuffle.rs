//! `pixel_shuffle` and `pixel_unshuffle` (and their grads): moving `r×r` blocks of channels into
//! `r×r` blocks of pixels and back.
//!
//! Semantics (Paddle's `PixelShuffleInferMeta` and CPU kernel): `pixel_shuffle` with factor `r`
//! takes `[N, C·r², H, W]` to `[N, C, H·r, W·r]`, output pixel `(h·r + i, w·r + j)` of channel
//! `c` being input channel `c·r² + i·r + j` at `(h, w)`; NHWC is the same with the channels
//! last. `pixel_unshuffle` is its inverse, `[N, C, H, W]` to `[N, C·r², H/r, W/r]` (the
//! height and width must be multiples of `r`). Each is a pure permutation, so the grad of one
//! is the other applied to `out_grad`.
//!
//! Why a reshape and a transpose: in both layouts the move is the permutation `[0, 1, 4, 2, 5,
//! 3]` of a 6-D view (`[N, C, r, r, H, W]` for NCHW, `[N, H, W, C, r, r]` for NHWC), and its
//! inverse `[0, 1, 3, 5, 2, 4]` of `[N, C, H/r, r, W/r, r]` (or `[N, H/r, r, W/r, r, C]`);
//! `transpose` already moves any dtype's elements by such a permutation.

use crate::exec::error::KResult;
use crate::exec::kernels::conv::channels_last;
use crate::exec::kernels::shape::transpose;
use crate::exec::tensor::Tensor;
use crate::kbail;

/// The factor and layout of a pixel shuffle (`upscale_factor`/`downscale_factor`,
/// `data_format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShuffleAttrs {
    pub factor: i64,
    pub channels_last: bool,
}

impl ShuffleAttrs {
    /// Paddle's factor and `data_format` (NCHW or NHWC).
    pub fn new(factor: i64, data_format: &str) -> KResult<ShuffleAttrs> {
        if factor < 1 {
            kbail!("the pixel shuffle factor must be positive, got {}", factor);
        }
        Ok(ShuffleAttrs {
            factor,
            channels_last: channels_last(data_format)?,
        })
    }
}

/// `[N, C, H, W]` (whatever the layout) and the factor, checked for a 4-D input.
fn dims(x: &Tensor, op: &str, at: &ShuffleAttrs) -> KResult<([usize; 4], usize)> {
    let &[n, a, b, c] = x.shape() else {
        kbail!("{} needs a 4-D input, got {:?}", op, x.shape());
    };
    let (ch, h, w) = if at.channels_last {
        (c, a, b)
    } else {
        (a, b, c)
    };
    Ok(([n, ch, h, w], at.factor as usize))
}

fn permuted(x: &Tensor, view: Vec<usize>, perm: &[i64], out: Vec<usize>) -> KResult<Tensor> {
    transpose(&x.clone().reshaped(view)?, perm)?.reshaped(out)
}

/// `pixel_shuffle(x)`: `[N, C·r², H, W]` to `[N, C, H·r, W·r]`.
pub fn pixel_shuffle(x: &Tensor, at: &ShuffleAttrs) -> KResult<Tensor> {
    let ([n, ch, h, w], r) = dims(x, "pixel_shuffle", at)?;
    if ch % (r * r) != 0 {
        kbail!(
            "pixel_shuffle: {} channels are not a multiple of upscale_factor² = {}",
            ch,
            r * r
        );
    }
    let c = ch / (r * r);
    let (view, out) = if at.channels_last {
        (vec![n, h, w, c, r, r], vec![n, h * r, w * r, c])
    } else {
        (vec![n, c, r, r, h, w], vec![n, c, h * r, w * r])
    };
    permuted(x, view, &[0, 1, 4, 2, 5, 3], out)
}

/// `pixel_unshuffle(x)`: `[N, C, H, W]` to `[N, C·r², H/r, W/r]`.
pub fn pixel_unshuffle(x: &Tensor, at: &ShuffleAttrs) -> KResult<Tensor> {
    let ([n, c, h, w], r) = dims(x, "pixel_unshuffle", at)?;
    if h % r != 0 || w % r != 0 {
        kbail!(
            "pixel_unshuffle: the height {} and width {} must be multiples of downscale_factor {}",
            h,
            w,
            r
        );
    }
    let (hr, wr) = (h / r, w / r);
    let (view, out) = if at.channels_last {
        (vec![n, hr, r, wr, r, c], vec![n, hr, wr, c * r * r])
    } else {
        (vec![n, c, hr, r, wr, r], vec![n, c * r * r, hr, wr])
    };
    permuted(x, view, &[0, 1, 3, 5, 2, 4], out)
}

/// `pixel_shuffle_grad(out_grad)`: the shuffle undone.
pub fn pixel_shuffle_grad(out_grad: &Tensor, at: &ShuffleAttrs) -> KResult<Tensor> {
    pixel_unshuffle(out_grad, at)
}

/// `pixel_unshuffle_grad(out_grad)`: the unshuffle undone.
pub fn pixel_unshuffle_grad(out_grad: &Tensor, at: &ShuffleAttrs) -> KResult<Tensor> {
    pixel_shuffle(out_grad, at)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition, element by element, on NCHW.
    #[test]
    fn shuffle_moves_channel_blocks_to_pixel_blocks() {
        let (n, c, r, h, w) = (2, 3, 2, 2, 3);
        let x = Tensor::f32(
            &[n, c * r * r, h, w],
            (0..n * c * r * r * h * w).map(|v| v as f32).collect(),
        );
        let at = ShuffleAttrs::new(r as i64, "NCHW").unwrap();
        let out = pixel_shuffle(&x, &at).unwrap();
        assert_eq!(out.shape(), [n, c, h * r, w * r]);
        let (xs, os) = (x.to_f32(), out.to_f32());
        for b in 0..n {
            for ch in 0..c {
                for y in 0..h * r {
                    for xx in 0..w * r {
                        let src = ch * r * r + (y % r) * r + xx % r;
                        let want = xs[((b * c * r * r + src) * h + y / r) * w + xx / r];
                        assert_eq!(os[((b * c + ch) * h * r + y) * w * r + xx], want);
                    }
                }
            }
        }
        assert_eq!(pixel_unshuffle(&out, &at).unwrap(), x);
        let nhwc = ShuffleAttrs::new(r as i64, "NHWC").unwrap();
        let xl = transpose(&x, &[0, 2, 3, 1]).unwrap();
        let ol = pixel_shuffle(&xl, &nhwc).unwrap();
        assert_eq!(transpose(&ol, &[0, 3, 1, 2]).unwrap(), out);
        assert_eq!(pixel_unshuffle(&ol, &nhwc).unwrap(), xl);
    }
}
