//! `conv2d`, `depthwise_conv2d` and their `_grad`s with Paddle's semantics, as im2col + `gemm`.
//!
//! Semantics (Paddle's `conv2d` / `ConvInferMeta`): the filter is `[O, C/groups, KH, KW]` in
//! either data format; `paddings` has 2 elements (`[ph, pw]`, both sides) or 4 (`[top, bottom,
//! left, right]`); `padding_algorithm` `SAME` replaces them by the padding that gives
//! `ceil(in/stride)` outputs (split as `sum/2` before, the rest after) and sets the dilations
//! to 1, `VALID` by zeros; an output dimension is `(in + before + after − (d·(k−1)+1)) / s + 1`.
//! Output channel block `g` of `O/groups` channels reads input channels block `g`.
//! `depthwise_conv2d` is the same computation with `groups = C` (Paddle picks that op for
//! depthwise layers; the arithmetic is the kernel's business, not the op name's).
//!
//! Why im2col: per sample and group, the input windows become the columns of a
//! `[C/g·KH·KW, OH·OW]` matrix, and the convolution is one GEMM with the filter block
//! `[O/g, C/g·KH·KW]`, so the multiply-adds run in `gemm`'s microkernels (the copy is linear in
//! the output). The backward is two more GEMMs per sample: `Wᵀ·dY` gives the column gradient,
//! scattered back by col2im, and `dY·colᵀ` is accumulated into the filter gradient
//! ([`gemm_acc_into`]). A 1×1 convolution with unit stride and no padding needs no columns:
//! the input is already that matrix. NHWC runs as NCHW between two transposes. 16-bit tensors
//! are widened to f32 and the results rounded once (f32 accumulation, as Paddle's CPU kernels);
//! f64 runs in f64.

use gemm::Parallelism;

use crate::exec::dtype::DType;
use crate::exec::error::KResult;
use crate::exec::kernels::matmul::{gemm_acc_into, gemm_into, GemmScalar, MatRef};
use crate::exec::kernels::shape::transpose;
use crate::exec::memory;
use crate::exec::tensor::{Data, Tensor};
use crate::kbail;

/// How the padding is given (`padding_algorithm`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PaddingAlgorithm {
    /// `paddings` as written.
    Explicit,
    /// The padding that gives `ceil(in / stride)` outputs; dilations become 1.
    Same,
    /// No padding.
    Valid,
}

impl PaddingAlgorithm {
    /// Paddle's spelling (`EXPLICIT`, `SAME`, `VALID`).
    pub fn parse(s: &str) -> KResult<PaddingAlgorithm> {
        Ok(match s {
            "EXPLICIT" | "" => PaddingAlgorithm::Explicit,
            "SAME" => PaddingAlgorithm::Same,
            "VALID" => PaddingAlgorithm::Valid,
            other => kbail!(
                "padding_algorithm `{}` is not EXPLICIT, SAME or VALID",
                other
            ),
        })
    }
}

/// Whether `data_format` is channels-last (`NHWC`); `NCHW` (and Paddle's `AnyLayout`) is not.
pub fn channels_last(data_format: &str) -> KResult<bool> {
    Ok(match data_format {
        "NCHW" | "AnyLayout" | "" => false,
        "NHWC" => true,
        other => kbail!("data_format `{}` is not NCHW or NHWC", other),
    })
}

/// Whether a 3-D `data_format` is channels-last (`NDHWC`); `NCDHW` (and `AnyLayout`) is not.
/// `op` names the op in the error.
pub fn channels_last_3d(data_format: &str, op: &str) -> KResult<bool> {
    Ok(match data_format {
        "NCDHW" | "AnyLayout" | "" => false,
        "NDHWC" => true,
        other => kbail!("{}: data_format `{}` is not NCDHW or NDHWC", op, other),
    })
}

/// The attributes of a `conv2d`/`depthwise_conv2d` (and their `_grad`), as Paddle writes them.
#[derive(Clone, Debug)]
pub struct ConvAttrs {
    pub strides: Vec<i64>,
    pub paddings: Vec<i64>,
    pub dilations: Vec<i64>,
    pub groups: i64,
    pub padding_algorithm: PaddingAlgorithm,
    pub channels_last: bool,
}

/// The padding of one spatial dimension (`before`, `after`) and its dilation, after Paddle's
/// `UpdatePaddingAndDilation`.
pub fn resolve_padding(
    algorithm: PaddingAlgorithm,
    given: (i64, i64),
    dilation: i64,
    input: usize,
    kernel: usize,
    stride: usize,
) -> (usize, usize, usize) {
    match algorithm {
        PaddingAlgorithm::Explicit => (given.0.max(0) as usize, given.1.max(0) as usize, {
            dilation.max(1) as usize
        }),
        PaddingAlgorithm::Valid => (0, 0, dilation.max(1) as usize),
        PaddingAlgorithm::Same => {
            let out = input.div_ceil(stride);
            let sum = ((out.saturating_sub(1)) * stride + kernel).saturating_sub(input);
            (sum / 2, sum - sum / 2, 1)
        }
    }
}

/// `[before, after]` per spatial dimension from a 2- or 4-element `paddings`.
pub fn padding_pairs(paddings: &[i64], what: &str) -> KResult<[(i64, i64); 2]> {
    match *paddings {
        [] => Ok([(0, 0), (0, 0)]),
        [h, w] => Ok([(h, h), (w, w)]),
        [t, b, l, r] => Ok([(t, b), (l, r)]),
        _ => kbail!(
            "{}: paddings has {} elements, expected 2 or 4",
            what,
            paddings.len()
        ),
    }
}

/// Two positive values of a per-dimension attribute (`strides`, `dilations`); `default` when
/// absent, one value for both dimensions.
pub(super) fn pair(v: &[i64], key: &str, default: usize) -> KResult<[usize; 2]> {
    let p = match *v {
        [] => [default as i64; 2],
        [a] => [a, a],
        [a, b] => [a, b],
        _ => kbail!("{} has {} elements, expected 2", key, v.len()),
    };
    if p.iter().any(|&x| x < 1) {
        kbail!("{} must be positive, got {:?}", key, v);
    }
    Ok([p[0] as usize, p[1] as usize])
}

/// A convolution's sizes, all in NCHW terms (`conv_transpose.rs` runs a transposed
/// convolution as the adjoint of the convolution from its output to its input).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Geometry {
    pub n: usize,
    pub c: usize,
    pub h: usize,
    pub w: usize,
    pub o: usize,
    pub groups: usize,
    pub kh: usize,
    pub kw: usize,
    pub oh: usize,
    pub ow: usize,
    pub stride: [usize; 2],
    pub dilation: [usize; 2],
    /// Top and left padding (the bottom and right ones only shape the output).
    pub pad: [usize; 2],
}

impl Geometry {
    /// The sizes of a convolution of an NCHW `x` with an OIHW `filter` under `at`.
    pub fn of(x: &[usize], filter: &[usize], at: &ConvAttrs) -> KResult<Geometry> {
        let (&[n, c, h, w], &[o, cg, kh, kw]) = (x, filter) else {
            kbail!(
                "conv2d needs a 4-D input and a 4-D filter, got {:?} and {:?}",
                x,
                filter
            );
        };
        if at.groups < 1 {
            kbail!("groups must be positive, got {}", at.groups);
        }
        let groups = at.groups as usize;
        if cg == 0 || c != cg * groups || o % groups != 0 {
            kbail!(
                "the input has {} channels and the filter {:?}: with groups = {} it must read {} channels per group and have a multiple of {} output channels",
                c,
                filter,
                groups,
                c / groups.max(1),
                groups
            );
        }
        let stride = pair(&at.strides, "strides", 1)?;
        let dil = pair(&at.dilations, "dilations", 1)?;
        let given = padding_pairs(&at.paddings, "conv2d")?;
        let (mut pad, mut dilation, mut out) = ([0; 2], [1; 2], [0; 2]);
        for i in 0..2 {
            let (input, k) = ([h, w][i], [kh, kw][i]);
            let (before, after, d) = resolve_padding(
                at.padding_algorithm,
                given[i],
                dil[i] as i64,
                input,
                k,
                stride[i],
            );
            let span = d * (k.max(1) - 1) + 1;
            let padded = input + before + after;
            if k == 0 || padded < span {
                kbail!(
                    "the filter {:?} (dilated to {}) does not fit the padded input {:?}",
                    filter,
                    span,
                    x
                );
            }
            pad[i] = before;
            dilation[i] = d;
            out[i] = (padded - span) / stride[i] + 1;
        }
        Ok(Geometry {
            n,
            c,
            h,
            w,
            o,
            groups,
            kh,
            kw,
            oh: out[0],
            ow: out[1],
            stride,
            dilation,
            pad,
        })
    }

    fn cg(&self) -> usize {
        self.c / self.groups
    }

    fn og(&self) -> usize {
        self.o / self.groups
    }

    /// Rows of a group's column matrix: `C/g · KH · KW`.
    fn col_rows(&self) -> usize {
        self.cg() * self.kh * self.kw
    }

    fn ohw(&self) -> usize {
        self.oh * self.ow
    }

    /// Whether the input is already the column matrix (1×1, unit stride, no padding, as many
    /// outputs as inputs).
    fn pointwise(&self) -> bool {
        self.kh == 1
            && self.kw == 1
            && self.stride == [1, 1]
            && self.pad == [0, 0]
            && (self.oh, self.ow) == (self.h, self.w)
    }

    /// Output positions `ox` whose input column `ox·s − pad + j·d` lies in `[0, w)`.
    fn valid_range(out: usize, input: usize, s: usize, pad: usize, off: usize) -> (usize, usize) {
        // ix = ox·s + off − pad ≥ 0  ⇔  ox ≥ ceil((pad − off) / s)
        let lo = if off >= pad {
            0
        } else {
            (pad - off).div_ceil(s)
        };
        // ix < input  ⇔  ox·s < input + pad − off
        let hi = if input + pad <= off {
            0
        } else {
            (input + pad - off).div_ceil(s)
        };
        (lo.min(out), hi.min(out).max(lo.min(out)))
    }
}

/// Numbers im2col copies and col2im adds.
pub(super) trait ConvScalar: GemmScalar + std::ops::AddAssign {}
impl ConvScalar for f32 {}
impl ConvScalar for f64 {}

/// Columns of one sample's group: `col[(c·KH + i)·KW + j][oy·OW + ox] = x[c][oy·s − p + i·d]
/// [ox·s − p + j·d]`, zero outside the input. `x` is the group's `[C/g, H, W]` block.
pub(super) fn im2col<T: ConvScalar>(g: &Geometry, x: &[T], col: &mut [T]) {
    let (h, w, oh, ow) = (g.h, g.w, g.oh, g.ow);
    let (ox_lo_hi, mut row) = (
        (0..g.kw)
            .map(|j| Geometry::valid_range(ow, w, g.stride[1], g.pad[1], j * g.dilation[1]))
            .collect::<Vec<_>>(),
        0,
    );
    for c in 0..g.cg() {
        let plane = &x[c * h * w..(c + 1) * h * w];
        for i in 0..g.kh {
            for (j, &(lo, hi)) in ox_lo_hi.iter().enumerate() {
                let dst = &mut col[row * oh * ow..(row + 1) * oh * ow];
                row += 1;
                for oy in 0..oh {
                    let out = &mut dst[oy * ow..(oy + 1) * ow];
                    let iy = (oy * g.stride[0] + i * g.dilation[0]) as isize - g.pad[0] as isize;
                    if iy < 0 || iy >= h as isize {
                        out.fill(T::default());
                        continue;
                    }
                    let src = &plane[iy as usize * w..(iy as usize + 1) * w];
                    out[..lo].fill(T::default());
                    out[hi..].fill(T::default());
                    let base = j * g.dilation[1];
                    if g.stride[1] == 1 {
                        let start = lo + base - g.pad[1];
                        out[lo..hi].copy_from_slice(&src[start..start + (hi - lo)]);
                    } else {
                        for (ox, o) in out.iter_mut().enumerate().take(hi).skip(lo) {
                            *o = src[ox * g.stride[1] + base - g.pad[1]];
                        }
                    }
                }
            }
        }
    }
}

/// The transpose of [`im2col`]: adds each column entry to the input position it was copied
/// from (`dx` is the group's `[C/g, H, W]` block, added to).
pub(super) fn col2im<T: ConvScalar>(g: &Geometry, col: &[T], dx: &mut [T]) {
    let (h, w, oh, ow) = (g.h, g.w, g.oh, g.ow);
    let mut row = 0;
    for c in 0..g.cg() {
        let plane = &mut dx[c * h * w..(c + 1) * h * w];
        for i in 0..g.kh {
            for j in 0..g.kw {
                let (lo, hi) =
                    Geometry::valid_range(ow, w, g.stride[1], g.pad[1], j * g.dilation[1]);
                let src = &col[row * oh * ow..(row + 1) * oh * ow];
                row += 1;
                for oy in 0..oh {
                    let iy = (oy * g.stride[0] + i * g.dilation[0]) as isize - g.pad[0] as isize;
                    if iy < 0 || iy >= h as isize {
                        continue;
                    }
                    let dst = &mut plane[iy as usize * w..(iy as usize + 1) * w];
                    let base = j * g.dilation[1];
                    for ox in lo..hi {
                        dst[ox * g.stride[1] + base - g.pad[1]] += src[oy * ow + ox];
                    }
                }
            }
        }
    }
}

pub(super) fn mat<T>(data: &[T], rows: usize, cols: usize) -> MatRef<'_, T> {
    MatRef {
        data,
        off: 0,
        rows,
        cols,
        rs: cols,
        cs: 1,
    }
}

pub(super) fn mat_t<T>(data: &[T], rows: usize, cols: usize) -> MatRef<'_, T> {
    // The transpose of a row-major `cols × rows` matrix.
    MatRef {
        data,
        off: 0,
        rows,
        cols,
        rs: 1,
        cs: rows,
    }
}

/// NCHW forward on plain buffers: `out` is `[N, O, OH, OW]`.
pub(super) fn conv2d_nchw<T: ConvScalar>(g: &Geometry, x: &[T], filter: &[T], out: &mut [T]) {
    let (cg, og, kk, ohw) = (g.cg(), g.og(), g.col_rows(), g.ohw());
    let mut col = if g.pointwise() {
        Vec::new()
    } else {
        vec![T::default(); kk * ohw]
    };
    for n in 0..g.n {
        for grp in 0..g.groups {
            let xs = &x[(n * g.c + grp * cg) * g.h * g.w..][..cg * g.h * g.w];
            let cols: &[T] = if g.pointwise() {
                xs
            } else {
                im2col(g, xs, &mut col);
                &col
            };
            let dst = &mut out[(n * g.o + grp * og) * ohw..][..og * ohw];
            let wg = &filter[grp * og * kk..(grp + 1) * og * kk];
            gemm_into(dst, mat(wg, og, kk), mat(cols, kk, ohw), Parallelism::None);
        }
    }
}

/// NCHW input gradient on plain buffers: `Wᵀ·dY` per sample and group, scattered back by
/// col2im into `[N, C, H, W]`.
pub(super) fn conv2d_data_grad_nchw<T: ConvScalar>(g: &Geometry, filter: &[T], dy: &[T]) -> Vec<T> {
    let (cg, og, kk, ohw) = (g.cg(), g.og(), g.col_rows(), g.ohw());
    let mut dx = vec![T::default(); g.n * g.c * g.h * g.w];
    let mut dcol = vec![T::default(); if g.pointwise() { 0 } else { kk * ohw }];
    for n in 0..g.n {
        for grp in 0..g.groups {
            let dys = &dy[(n * g.o + grp * og) * ohw..][..og * ohw];
            let wg = &filter[grp * og * kk..(grp + 1) * og * kk];
            let dxs = &mut dx[(n * g.c + grp * cg) * g.h * g.w..][..cg * g.h * g.w];
            if g.pointwise() {
                gemm_acc_into(dxs, mat_t(wg, kk, og), mat(dys, og, ohw), Parallelism::None);
            } else {
                gemm_into(
                    &mut dcol,
                    mat_t(wg, kk, og),
                    mat(dys, og, ohw),
                    Parallelism::None,
                );
                col2im(g, &dcol, dxs);
            }
        }
    }
    dx
}

/// NCHW filter gradient on plain buffers: `dY·colᵀ` summed over the samples, `[O, C/g, KH, KW]`.
pub(super) fn conv2d_filter_grad_nchw<T: ConvScalar>(g: &Geometry, x: &[T], dy: &[T]) -> Vec<T> {
    let (cg, og, kk, ohw) = (g.cg(), g.og(), g.col_rows(), g.ohw());
    let mut dw = vec![T::default(); g.o * kk];
    let mut col = vec![T::default(); if g.pointwise() { 0 } else { kk * ohw }];
    for n in 0..g.n {
        for grp in 0..g.groups {
            let xs = &x[(n * g.c + grp * cg) * g.h * g.w..][..cg * g.h * g.w];
            let dys = &dy[(n * g.o + grp * og) * ohw..][..og * ohw];
            let cols: &[T] = if g.pointwise() {
                xs
            } else {
                im2col(g, xs, &mut col);
                &col
            };
            gemm_acc_into(
                &mut dw[grp * og * kk..(grp + 1) * og * kk],
                mat(dys, og, ohw),
                mat_t(cols, ohw, kk),
                Parallelism::None,
            );
        }
    }
    dw
}

/// NCHW backward on plain buffers: the input gradient (`[N, C, H, W]`, when asked for) and the
/// filter gradient (`[O, C/g, KH, KW]`).
fn conv2d_grad_nchw<T: ConvScalar>(
    g: &Geometry,
    x: &[T],
    filter: &[T],
    dy: &[T],
    want_dx: bool,
) -> (Option<Vec<T>>, Vec<T>) {
    let dx = want_dx.then(|| conv2d_data_grad_nchw(g, filter, dy));
    (dx, conv2d_filter_grad_nchw(g, x, dy))
}

/// The computation's element type: f64 for f64 tensors, f32 for the other floats.
pub(super) fn compute_in_f64(x: &Tensor, filter: &Tensor) -> KResult<bool> {
    for t in [x, filter] {
        if !t.dtype().is_float() {
            kbail!(
                "conv2d computes float tensors, got {}",
                t.dtype().attr_name()
            );
        }
    }
    Ok(x.dtype() == DType::F64 && filter.dtype() == DType::F64)
}

/// A channels-last tensor (`NHWC`, `NDHWC`) as channels-first (`NCHW`, `NCDHW`); a
/// channels-first one as it is.
pub(super) fn to_channels_first(
    t: &Tensor,
    channels_last: bool,
) -> KResult<std::borrow::Cow<'_, Tensor>> {
    Ok(if channels_last {
        let r = t.shape().len().max(2) as i64;
        let perm: Vec<i64> = [0, r - 1].into_iter().chain(1..r - 1).collect();
        std::borrow::Cow::Owned(transpose(t, &perm)?)
    } else {
        std::borrow::Cow::Borrowed(t)
    })
}

/// A channels-first result back in the layout [`to_channels_first`] was given.
pub(super) fn from_channels_first(t: Tensor, channels_last: bool) -> KResult<Tensor> {
    if channels_last {
        let r = t.shape().len().max(2) as i64;
        let perm: Vec<i64> = std::iter::once(0).chain(2..r).chain([1]).collect();
        transpose(&t, &perm)
    } else {
        Ok(t)
    }
}

pub(super) fn buffer(shape: Vec<usize>, data: Data, like: DType) -> KResult<Tensor> {
    let t = Tensor::new(shape, data)?;
    Ok(if t.dtype() == like {
        t
    } else {
        crate::exec::kernels::cast::cast(&t, like)
    })
}

/// `conv2d(x, filter)` (and `depthwise_conv2d`), in `x`'s dtype.
pub fn conv2d(x: &Tensor, filter: &Tensor, at: &ConvAttrs) -> KResult<Tensor> {
    let f64_path = compute_in_f64(x, filter)?;
    let xc = to_channels_first(x, at.channels_last)?;
    let g = Geometry::of(xc.shape(), filter.shape(), at)?;
    let shape = vec![g.n, g.o, g.oh, g.ow];
    memory::reserve(&"the convolution's output", &shape, 4)?;
    memory::reserve(&"the convolution's columns", &[g.col_rows(), g.ohw()], 4)?;
    let data = if f64_path {
        let mut out = vec![0.0f64; g.n * g.o * g.ohw()];
        conv2d_nchw(&g, &xc.to_f64_vec(), &filter.to_f64_vec(), &mut out);
        Data::F64(out)
    } else {
        let mut out = vec![0.0f32; g.n * g.o * g.ohw()];
        conv2d_nchw(&g, &xc.to_f32(), &filter.to_f32(), &mut out);
        Data::F32(out)
    };
    from_channels_first(buffer(shape, data, x.dtype())?, at.channels_last)
}

/// `conv2d_grad(x, filter, out_grad)`: (input gradient in `x`'s dtype, filter gradient in the
/// filter's). The input gradient is computed only when `want_dx`.
pub fn conv2d_grad(
    x: &Tensor,
    filter: &Tensor,
    out_grad: &Tensor,
    at: &ConvAttrs,
    want_dx: bool,
) -> KResult<(Option<Tensor>, Tensor)> {
    let f64_path = compute_in_f64(x, filter)?;
    let xc = to_channels_first(x, at.channels_last)?;
    let dyc = to_channels_first(out_grad, at.channels_last)?;
    let g = Geometry::of(xc.shape(), filter.shape(), at)?;
    if dyc.shape() != [g.n, g.o, g.oh, g.ow] {
        kbail!(
            "out_grad has shape {:?}, the convolution's output is {:?}",
            out_grad.shape(),
            [g.n, g.o, g.oh, g.ow]
        );
    }
    memory::reserve(
        &"the convolution's columns",
        &[2 * g.col_rows(), g.ohw()],
        4,
    )?;
    let (dx, dw) = if f64_path {
        let (dx, dw) = conv2d_grad_nchw(
            &g,
            &xc.to_f64_vec(),
            &filter.to_f64_vec(),
            &dyc.to_f64_vec(),
            want_dx,
        );
        (dx.map(Data::F64), Data::F64(dw))
    } else {
        let (dx, dw) = conv2d_grad_nchw(&g, &xc.to_f32(), &filter.to_f32(), &dyc.to_f32(), want_dx);
        (dx.map(Data::F32), Data::F32(dw))
    };
    let dx = match dx {
        Some(d) => Some(from_channels_first(
            buffer(xc.shape().to_vec(), d, x.dtype())?,
            at.channels_last,
        )?),
        None => None,
    };
    Ok((dx, buffer(filter.shape().to_vec(), dw, filter.dtype())?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::kernels::testdata::{paddle_case, seq_d, seq_w, seq_x, Close};

    /// The definition, one output element at a time.
    fn reference(g: &Geometry, x: &[f64], w: &[f64]) -> Vec<f64> {
        let (cg, og) = (g.cg(), g.og());
        let mut out = vec![0.0; g.n * g.o * g.oh * g.ow];
        for n in 0..g.n {
            for o in 0..g.o {
                let grp = o / og;
                for oy in 0..g.oh {
                    for ox in 0..g.ow {
                        let mut s = 0.0;
                        for c in 0..cg {
                            for i in 0..g.kh {
                                for j in 0..g.kw {
                                    let iy = (oy * g.stride[0] + i * g.dilation[0]) as isize
                                        - g.pad[0] as isize;
                                    let ix = (ox * g.stride[1] + j * g.dilation[1]) as isize
                                        - g.pad[1] as isize;
                                    if iy < 0 || ix < 0 || iy >= g.h as isize || ix >= g.w as isize
                                    {
                                        continue;
                                    }
                                    let xc = grp * cg + c;
                                    s += x
                                        [((n * g.c + xc) * g.h + iy as usize) * g.w + ix as usize]
                                        * w[((o * cg + c) * g.kh + i) * g.kw + j];
                                }
                            }
                        }
                        out[((n * g.o + o) * g.oh + oy) * g.ow + ox] = s;
                    }
                }
            }
        }
        out
    }

    fn attrs(s: &[i64], p: &[i64], d: &[i64], groups: i64, alg: PaddingAlgorithm) -> ConvAttrs {
        ConvAttrs {
            strides: s.to_vec(),
            paddings: p.to_vec(),
            dilations: d.to_vec(),
            groups,
            padding_algorithm: alg,
            channels_last: false,
        }
    }

    /// Forward against the definition; backward against the definition's adjoint (the
    /// gradient of `sum(out · dy)` is linear in `dy`, so it is checked through finite sums:
    /// `<dx, e> = <conv(e, w), dy>` for unit vectors would be quadratic; instead compare with
    /// the transpose computed from the reference's explicit matrix).
    #[test]
    fn forward_and_backward_match_the_definition() {
        use PaddingAlgorithm::*;
        let cases = [
            (
                [2, 4, 7, 8],
                [6, 4, 3, 3],
                attrs(&[2, 1], &[1, 2, 0, 1], &[1, 2], 1, Explicit),
            ),
            (
                [1, 6, 6, 5],
                [6, 2, 3, 3],
                attrs(&[2, 2], &[], &[1, 1], 3, Same),
            ),
            (
                [2, 3, 5, 5],
                [4, 3, 1, 1],
                attrs(&[1, 1], &[0, 0], &[1, 1], 1, Explicit),
            ),
            (
                [1, 4, 6, 6],
                [8, 1, 3, 3],
                attrs(&[1, 1], &[1, 1], &[1, 1], 4, Explicit),
            ),
            (
                [1, 2, 5, 7],
                [3, 2, 2, 3],
                attrs(&[3, 2], &[9, 9], &[2, 1], 1, Valid),
            ),
        ];
        for (xs, ws, at) in cases {
            let g = Geometry::of(&xs, &ws, &at).unwrap();
            let x: Vec<f64> = seq_x(crate::exec::tensor::numel(&xs));
            let w: Vec<f64> = seq_w(crate::exec::tensor::numel(&ws));
            let want = reference(&g, &x, &w);
            let mut got = vec![0.0f64; want.len()];
            conv2d_nchw(&g, &x, &w, &mut got);
            Close::new(1e-12).all("forward", &got, &want);
            // Backward: dx[k] = Σ dy · ∂out/∂x[k], with ∂out/∂x[k] = reference(e_k) (linear).
            let dy = seq_d(want.len());
            let (dx, dw) = conv2d_grad_nchw(&g, &x, &w, &dy, true);
            let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(p, q)| p * q).sum::<f64>();
            let mut e = vec![0.0; x.len()];
            let dx_want: Vec<f64> = (0..x.len())
                .map(|k| {
                    e[k] = 1.0;
                    let v = dot(&reference(&g, &e, &w), &dy);
                    e[k] = 0.0;
                    v
                })
                .collect();
            Close::new(1e-12).all("x_grad", &dx.unwrap(), &dx_want);
            let mut e = vec![0.0; w.len()];
            let dw_want: Vec<f64> = (0..w.len())
                .map(|k| {
                    e[k] = 1.0;
                    let v = dot(&reference(&g, &x, &e), &dy);
                    e[k] = 0.0;
                    v
                })
                .collect();
            Close::new(1e-12).all("filter_grad", &dw, &dw_want);
        }
    }

    fn paddle_attrs(case: &serde_json::Value) -> ConvAttrs {
        let a = &case["attrs"];
        let ints = |v: &serde_json::Value| -> Vec<i64> {
            match v {
                serde_json::Value::Number(n) => vec![n.as_i64().unwrap(); 2],
                serde_json::Value::Array(items) => items
                    .iter()
                    .flat_map(|i| match i {
                        serde_json::Value::Array(p) => {
                            p.iter().map(|q| q.as_i64().unwrap()).collect::<Vec<_>>()
                        }
                        other => vec![other.as_i64().unwrap()],
                    })
                    .collect(),
                _ => vec![],
            }
        };
        let nhwc = a["data_format"] == "NHWC";
        let (alg, paddings) = match &a["padding"] {
            serde_json::Value::String(s) => (PaddingAlgorithm::parse(s).unwrap(), vec![]),
            v => {
                let p = ints(v);
                // F.conv2d's nested form lists every dimension (batch, channel too).
                let p = if p.len() == 8 {
                    if nhwc {
                        p[2..6].to_vec()
                    } else {
                        p[4..8].to_vec()
                    }
                } else {
                    p
                };
                (PaddingAlgorithm::Explicit, p)
            }
        };
        ConvAttrs {
            strides: ints(&a["stride"]),
            paddings,
            dilations: a.get("dilation").map(ints).unwrap_or_default(),
            groups: a.get("groups").and_then(|g| g.as_i64()).unwrap_or(1),
            padding_algorithm: alg,
            channels_last: nhwc,
        }
    }

    #[test]
    fn matches_paddle() {
        for name in [
            "conv_asym",
            "conv_groups_nhwc_same",
            "conv_depthwise",
            "conv_valid",
        ] {
            let case = paddle_case(name);
            let shape = |k: &str| -> Vec<usize> {
                case[k]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_u64().unwrap() as usize)
                    .collect()
            };
            let (xs, ws) = (shape("x"), shape("w"));
            let at = paddle_attrs(&case);
            let x = Tensor::f32(&xs, seq_x(crate::exec::tensor::numel(&xs)));
            let w = Tensor::f32(&ws, seq_w(crate::exec::tensor::numel(&ws)));
            let out = conv2d(&x, &w, &at).unwrap();
            assert_eq!(out.shape(), shape("out_shape").as_slice(), "{name}");
            let tol = Close::new(1e-5);
            tol.paddle(name, "out", &out, &case);
            let dy = Tensor::f32(out.shape(), seq_d(out.numel()));
            let (dx, dw) = conv2d_grad(&x, &w, &dy, &at, true).unwrap();
            tol.paddle(name, "x_grad", &dx.unwrap(), &case);
            tol.paddle(name, "w_grad", &dw, &case);
        }
    }

    #[test]
    fn bf16_is_the_f32_result_rounded_once() {
        let at = attrs(&[1, 1], &[1, 1], &[1, 1], 1, PaddingAlgorithm::Explicit);
        let x = Tensor::f32(&[1, 2, 4, 4], seq_x(32));
        let w = Tensor::f32(&[3, 2, 3, 3], seq_w(54));
        let xb = crate::exec::kernels::cast::cast(&x, DType::BF16);
        let wb = crate::exec::kernels::cast::cast(&w, DType::BF16);
        let got = conv2d(&xb, &wb, &at).unwrap();
        assert_eq!(got.dtype(), DType::BF16);
        let xf = crate::exec::kernels::cast::cast(&xb, DType::F32);
        let wf = crate::exec::kernels::cast::cast(&wb, DType::F32);
        let want = crate::exec::kernels::cast::cast(&conv2d(&xf, &wf, &at).unwrap(), DType::BF16);
        assert_eq!(got, want);
    }

    #[test]
    fn bad_shapes_are_errors() {
        let at = attrs(&[1, 1], &[0, 0], &[1, 1], 2, PaddingAlgorithm::Explicit);
        let x = Tensor::f32(&[1, 3, 4, 4], vec![0.0; 48]);
        let w = Tensor::f32(&[2, 1, 3, 3], vec![0.0; 18]);
        assert!(conv2d(&x, &w, &at).is_err()); // 3 channels, 2 groups
        let at = attrs(&[1, 1], &[0, 0], &[1, 1], 1, PaddingAlgorithm::Explicit);
        let w = Tensor::f32(&[2, 3, 5, 5], vec![0.0; 150]);
        assert!(conv2d(&x, &w, &at).is_err()); // 5×5 filter on a 4×4 input
        let at = attrs(&[0, 1], &[0, 0], &[1, 1], 1, PaddingAlgorithm::Explicit);
        let w = Tensor::f32(&[2, 3, 1, 1], vec![0.0; 6]);
        assert!(conv2d(&x, &w, &at).is_err()); // stride 0
    }
}
