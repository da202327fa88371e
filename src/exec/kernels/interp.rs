//! `nearest_interp`, `bilinear_interp` and `bicubic_interp` (and their grads) on NCHW images:
//! each output pixel reads one input pixel (nearest), blends the four around a source point
//! (bilinear) or the sixteen around it with Keys' cubic weights (bicubic, [`cubic_taps`]).
//!
//! Each op runs the algorithm its `interp_method` attribute names, as Paddle's CPU kernel
//! does. Everything else is in where an output row or column is taken from:
//!
//! - the output size: a `size_tensor` list overrides all; otherwise a `scale` (the
//!   `scale_tensor` operand, else the attribute when it holds two values) multiplies the input
//!   size, truncated, and an `out_size` operand, else `out_h`/`out_w`, gives it when there is
//!   no scale (an `out_size` overrides a scale's size but keeps its ratio);
//! - the ratio from output to input coordinates: `(in−1)/(out−1)` with `align_corners`, else
//!   `1/scale` when a scale is given, else `in/out`;
//! - the source of output index `k`: for nearest `⌊ratio·k⌋` (`⌊ratio·k + 0.5⌋` with
//!   `align_corners`); for bilinear `ratio·(k+0.5) − 0.5` clamped at 0 when `align_mode` is 0
//!   without `align_corners` (half-pixel centers), else `ratio·k`.
//!
//! Paddle computes ratios and weights in f32 and half-pixel sources in f64 before truncating;
//! the kernel does the same, since a different rounding moves a truncated index by one. The
//! grads add each `out_grad` element, times the weight the forward gave it, to the pixels it was
//! read from. An output the size of the input is the input (and the grad `out_grad`).

use crate::exec::error::KResult;
use crate::exec::tensor::Tensor;
use crate::kbail;

/// The algorithm, from `interp_method`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Nearest,
    Bilinear,
    Bicubic,
}

/// The attributes and size operands of an `*_interp` op.
#[derive(Clone, Debug, PartialEq)]
pub struct InterpAttrs {
    pub method: Method,
    pub out_h: i64,
    pub out_w: i64,
    pub scale: Vec<f32>,
    pub align_corners: bool,
    pub align_mode: i64,
    /// The `out_size` operand's values.
    pub out_size: Option<Vec<i64>>,
    /// The `size_tensor` operand's values, one per tensor.
    pub size_tensor: Option<Vec<i64>>,
    /// The `scale_tensor` operand's values.
    pub scale_tensor: Option<Vec<f32>>,
}

impl InterpAttrs {
    /// `interp_method` and `data_format` as the op spells them.
    pub fn method(interp_method: &str, data_format: &str) -> KResult<Method> {
        if data_format != "NCHW" {
            kbail!(
                "interp: data_format `{}` is not one the executor runs (NCHW)",
                data_format
            );
        }
        Ok(match interp_method {
            "nearest" => Method::Nearest,
            "bilinear" => Method::Bilinear,
            "bicubic" => Method::Bicubic,
            other => kbail!(
                "interp: interp_method `{}` is not one the executor runs (nearest, bilinear or bicubic)",
                other
            ),
        })
    }
}

/// Where each output index along one axis reads: the low and high input indices and the
/// weight of the high one (nearest reads `lo` alone, with weight 0).
struct Axis {
    lo: Vec<usize>,
    hi: Vec<usize>,
    frac: Vec<f32>,
}

fn two<T: Copy>(v: &[T], what: &str) -> KResult<(T, T)> {
    match v {
        [h, w, ..] => Ok((*h, *w)),
        _ => kbail!("interp: {} must hold 2 values, holds {}", what, v.len()),
    }
}

/// The output's height and width and the two scales (`-1`: none), as Paddle resolves them.
fn out_size(in_h: usize, in_w: usize, at: &InterpAttrs) -> KResult<(usize, usize, f32, f32)> {
    let (mut sh, mut sw) = (-1f32, -1f32);
    let (oh, ow) = if let Some(s) = &at.size_tensor {
        two(s, "size_tensor")?
    } else {
        let scale = match &at.scale_tensor {
            Some(s) if s.len() == 1 => Some((s[0], s[0])),
            Some(s) => Some(two(s, "scale_tensor")?),
            None if at.scale.len() > 1 => Some((at.scale[0], at.scale[1])),
            None => None,
        };
        let (mut oh, mut ow) = (at.out_h, at.out_w);
        if let Some((h, w)) = scale {
            if h <= 0.0 || w <= 0.0 {
                kbail!("interp: scale ({}, {}) must be positive", h, w);
            }
            (sh, sw) = (h, w);
            oh = (in_h as f32 * h) as i64;
            ow = (in_w as f32 * w) as i64;
        }
        if let Some(s) = &at.out_size {
            (oh, ow) = two(s, "out_size")?;
        }
        (oh, ow)
    };
    if oh <= 0 || ow <= 0 {
        kbail!("interp: output size ({}, {}) must be positive", oh, ow);
    }
    Ok((oh as usize, ow as usize, sh, sw))
}

/// The ratio from output to input coordinates along one axis, in f32 as Paddle computes it.
fn ratio(inn: usize, out: usize, scale: f32, align_corners: bool) -> f32 {
    if out <= 1 {
        0f32
    } else if align_corners {
        (inn as f32 - 1.0) / (out as f32 - 1.0)
    } else if scale > 0.0 {
        (1.0 / scale as f64) as f32
    } else {
        inn as f32 / out as f32
    }
}

/// The sources of one axis of `out` indices over `inn` input ones.
fn axis(inn: usize, out: usize, scale: f32, at: &InterpAttrs) -> KResult<Axis> {
    let ratio = ratio(inn, out, scale, at.align_corners);
    let half_pixel = at.align_mode == 0 && !at.align_corners;
    let mut a = Axis {
        lo: Vec::with_capacity(out),
        hi: Vec::with_capacity(out),
        frac: Vec::with_capacity(out),
    };
    for k in 0..out {
        let at_k = ratio * k as f32;
        let (lo, frac) = match at.method {
            Method::Nearest if at.align_corners => (((at_k as f64) + 0.5) as i64, 0.0),
            Method::Nearest => (at_k as i64, 0.0),
            // Bicubic reads its own sources ([`cubic_taps`]); this axis is unused for it.
            Method::Bilinear | Method::Bicubic => {
                let src = ratio as f64 * (k as f64 + 0.5) - 0.5;
                let lo = if half_pixel { src as i64 } else { at_k as i64 }.max(0);
                let frac = if half_pixel {
                    (src as f32).max(0.0) - lo as f32
                } else {
                    at_k - lo as f32
                };
                (lo, frac)
            }
        };
        // A size from `out_size` with the ratio of a different scale can point past the input,
        // where Paddle would read out of bounds.
        if lo < 0 || lo as usize >= inn {
            kbail!(
                "interp: output index {} reads input index {}, outside 0..{}",
                k,
                lo,
                inn
            );
        }
        let lo = lo as usize;
        a.lo.push(lo);
        a.hi.push((lo + 1).min(inn - 1));
        a.frac.push(frac);
    }
    Ok(a)
}

/// The four input indices (clamped into the input) and their weights that output index `k`
/// of a bicubic axis blends: Keys' cubic convolution with `A = −0.75` around the source
/// `ratio·k` (`align_corners`) or `ratio·(k+0.5) − 0.5`, computed in the tensor's precision
/// (`f32` unless `wide`), as Paddle's `BicubicInterpolation` does.
fn cubic_taps(
    inn: usize,
    out: usize,
    ratio: f32,
    align_corners: bool,
    wide: bool,
) -> Vec<([usize; 4], [f64; 4])> {
    (0..out)
        .map(|k| {
            let src = if align_corners {
                (ratio * k as f32) as f64
            } else {
                ratio as f64 * (k as f64 + 0.5) - 0.5
            };
            let src = if wide { src } else { src as f32 as f64 };
            let base = src.floor();
            let t = src - base;
            let t = if wide { t } else { t as f32 as f64 };
            let base = base as i64;
            let idx =
                std::array::from_fn(|i| (base - 1 + i as i64).clamp(0, inn as i64 - 1) as usize);
            (idx, cubic_weights(t, wide))
        })
        .collect()
}

/// Keys' weights for the taps at distances `1+t`, `t`, `1−t`, `2−t`.
fn cubic_weights(t: f64, wide: bool) -> [f64; 4] {
    const A: f64 = -0.75;
    let near = |x: f64| ((A + 2.0) * x - (A + 3.0)) * x * x + 1.0;
    let far = |x: f64| ((A * x - 5.0 * A) * x + 8.0 * A) * x - 4.0 * A;
    let w = [far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)];
    if wide {
        w
    } else {
        w.map(|v| v as f32 as f64)
    }
}

/// `bicubic_interp`: per plane, four taps along each axis; f64 tensors run in f64, the rest in
/// f32. With `dout`, the transpose: each `dout` element times each tap's weight product is
/// added to the input pixel the tap reads.
fn bicubic(x: &Tensor, dout: Option<&Tensor>, at: &InterpAttrs) -> KResult<Tensor> {
    let &[n, c, h, w] = x.shape() else {
        kbail!(
            "interp: input must have rank 4 (NCHW), has shape {:?}",
            x.shape()
        );
    };
    let (oh, ow, sh, sw) = out_size(h, w, at)?;
    crate::exec::memory::reserve(&"the interpolated image", &[n, c, oh, ow], 8)?;
    if let Some(d) = dout {
        if d.shape() != [n, c, oh, ow] {
            kbail!(
                "interp_grad: output_grad {:?} is not the shape of the output {:?}",
                d.shape(),
                [n, c, oh, ow]
            );
        }
    }
    if (oh, ow) == (h, w) {
        return Ok(dout.unwrap_or(x).clone());
    }
    let wide = x.dtype() == crate::exec::dtype::DType::F64;
    let ys = cubic_taps(
        h,
        oh,
        ratio(h, oh, sh, at.align_corners),
        at.align_corners,
        wide,
    );
    let xs = cubic_taps(
        w,
        ow,
        ratio(w, ow, sw, at.align_corners),
        at.align_corners,
        wide,
    );
    let round = |v: f64| if wide { v } else { v as f32 as f64 };
    match dout {
        None => {
            let v = x.to_f64_vec();
            let mut out = Vec::with_capacity(n * c * oh * ow);
            for plane in v.chunks_exact(h * w).take(n * c) {
                for (yi, yw) in &ys {
                    for (xi, xw) in &xs {
                        // Four blends along the row, then one down the column, as Paddle.
                        let mut acc = 0.0;
                        for (&r, &wy) in yi.iter().zip(yw) {
                            let mut row = 0.0;
                            for (&q, &wx) in xi.iter().zip(xw) {
                                row = round(row + round(plane[r * w + q] * wx));
                            }
                            acc = round(acc + round(row * wy));
                        }
                        out.push(acc);
                    }
                }
            }
            crate::exec::kernels::conv::buffer(
                vec![n, c, oh, ow],
                if wide {
                    crate::exec::tensor::Data::F64(out)
                } else {
                    crate::exec::tensor::Data::F32(out.iter().map(|&v| v as f32).collect())
                },
                x.dtype(),
            )
        }
        Some(d) => {
            let g = d.to_f64_vec();
            let mut dx = vec![0f64; n * c * h * w];
            for (plane, gp) in dx.chunks_exact_mut(h * w).zip(g.chunks_exact(oh * ow)) {
                for (k, (yi, yw)) in ys.iter().enumerate() {
                    for (l, (xi, xw)) in xs.iter().enumerate() {
                        let go = gp[k * ow + l];
                        for (&r, &wy) in yi.iter().zip(yw) {
                            for (&q, &wx) in xi.iter().zip(xw) {
                                let p = &mut plane[r * w + q];
                                *p = round(*p + round(round(go * wy) * wx));
                            }
                        }
                    }
                }
            }
            crate::exec::kernels::conv::buffer(
                x.shape().to_vec(),
                if wide {
                    crate::exec::tensor::Data::F64(dx)
                } else {
                    crate::exec::tensor::Data::F32(dx.iter().map(|&v| v as f32).collect())
                },
                d.dtype(),
            )
        }
    }
}

/// The input's dims, the output's height and width, and the sources of both axes.
fn plan(x: &[usize], at: &InterpAttrs) -> KResult<([usize; 4], usize, usize, Axis, Axis)> {
    let &[n, c, h, w] = x else {
        kbail!("interp: input must have rank 4 (NCHW), has shape {:?}", x);
    };
    let (oh, ow, sh, sw) = out_size(h, w, at)?;
    crate::exec::memory::reserve(&"the interpolated image", &[n, c, oh, ow], 4)?;
    Ok((
        [n, c, h, w],
        oh,
        ow,
        axis(h, oh, sh, at)?,
        axis(w, ow, sw, at)?,
    ))
}

/// `pd_op.nearest_interp` / `pd_op.bilinear_interp(x, out_size, size_tensor, scale_tensor)`.
pub fn interp(x: &Tensor, at: &InterpAttrs) -> KResult<Tensor> {
    if at.method == Method::Bicubic {
        return bicubic(x, None, at);
    }
    let ([n, c, h, w], oh, ow, ya, xa) = plan(x.shape(), at)?;
    if (oh, ow) == (h, w) {
        return Ok(x.clone());
    }
    let v = x.to_f32();
    let mut out = Vec::with_capacity(n * c * oh * ow);
    for plane in v.chunks_exact(h * w).take(n * c) {
        for k in 0..oh {
            let (yn, ys, dn) = (ya.lo[k] * w, ya.hi[k] * w, ya.frac[k]);
            for l in 0..ow {
                let (xw, xe, dw) = (xa.lo[l], xa.hi[l], xa.frac[l]);
                out.push(match at.method {
                    Method::Nearest | Method::Bicubic => plane[yn + xw],
                    Method::Bilinear => {
                        let (ds, de) = (1.0 - dn, 1.0 - dw);
                        plane[yn + xw] * ds * de
                            + plane[ys + xw] * dn * de
                            + plane[yn + xe] * ds * dw
                            + plane[ys + xe] * dn * dw
                    }
                });
            }
        }
    }
    Tensor::from_f32_as(&[n, c, oh, ow], out, x.dtype())
}

/// `*_interp_grad(x, out_size, size_tensor, scale_tensor, output_grad)`: `x`'s gradient.
pub fn interp_grad(x: &Tensor, dout: &Tensor, at: &InterpAttrs) -> KResult<Tensor> {
    if at.method == Method::Bicubic {
        return bicubic(x, Some(dout), at);
    }
    let ([n, c, h, w], oh, ow, ya, xa) = plan(x.shape(), at)?;
    if dout.shape() != [n, c, oh, ow] {
        kbail!(
            "interp_grad: output_grad {:?} is not the shape of the output {:?}",
            dout.shape(),
            [n, c, oh, ow]
        );
    }
    if (oh, ow) == (h, w) {
        return Ok(dout.clone());
    }
    let g = dout.to_f32();
    let mut dx = vec![0f32; n * c * h * w];
    for (plane, gp) in dx.chunks_exact_mut(h * w).zip(g.chunks_exact(oh * ow)) {
        for k in 0..oh {
            let (yn, ys, dn) = (ya.lo[k] * w, ya.hi[k] * w, ya.frac[k]);
            for l in 0..ow {
                let (xw, xe, dw) = (xa.lo[l], xa.hi[l], xa.frac[l]);
                let go = gp[k * ow + l];
                match at.method {
                    Method::Nearest | Method::Bicubic => plane[yn + xw] += go,
                    Method::Bilinear => {
                        let (ds, de) = (1.0 - dn, 1.0 - dw);
                        plane[yn + xw] += go * ds * de;
                        plane[ys + xw] += go * dn * de;
                        plane[yn + xe] += go * ds * dw;
                        plane[ys + xe] += go * dn * dw;
                    }
                }
            }
        }
    }
    Tensor::from_f32_as(x.shape(), dx, dout.dtype())
}
