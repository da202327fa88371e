//! `pool2d` and `pool2d_grad` with Paddle's semantics: max and average pooling, `ceil_mode`,
//! `exclusive`, `adaptive`, `global_pooling`, `padding_algorithm`, NCHW and NHWC.
//!
//! Semantics (Paddle's `PoolInferMeta` and its CPU `Pool2dFunctor`): `global_pooling` makes the
//! window the whole plane; `paddings` has 2 or 4 elements as for a convolution, `SAME`/`VALID`
//! replace them, and `global_pooling` or `adaptive` drop them. An output dimension is the
//! kernel size when `adaptive` (then `kernel_size` is the output size and window `i` spans
//! `[⌊i·in/out⌋, ⌈(i+1)·in/out⌉)`, never empty, so an average to an output larger than the
//! input reads some input elements in several windows, as Paddle does; a max there is refused,
//! see [`Plan::refuse_max_growth`]), else `(in − k + before + after) / s + 1`, with `s − 1`
//! added before dividing under `ceil_mode`. A window starts at `i·s − before`, ends at
//! `min(start + k, in + before)`, and is then clipped to the input. An average divides by the
//! clipped window's size when `exclusive` or `adaptive`, else by the window's size before
//! clipping to the input (so padding counts, but a `ceil_mode` window past the padding does
//! not). The max gradient goes to the first element of the window (row-major) equal to the
//! maximum, as Paddle's `MaxPool2dGradFunctor` does, not to every tied one.
//!
//! The loops are per output element over its window: pooling reads each input a few times and
//! does no multiply-adds, so there is nothing for a GEMM to do. 16-bit tensors are computed in
//! f32 and rounded once.

use crate::exec::dtype::DType;
use crate::exec::error::KResult;
use crate::exec::kernels::conv::{channels_last, padding_pairs, resolve_padding, PaddingAlgorithm};
use crate::exec::kernels::shape::transpose;
use crate::exec::memory;
use crate::exec::tensor::{Data, Tensor};
use crate::kbail;

/// Max or average.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolKind {
    Max,
    Avg,
}

/// The attributes of a `pool2d` (and `pool2d_grad`).
#[derive(Clone, Debug)]
pub struct PoolAttrs {
    pub kind: PoolKind,
    pub kernel_size: Vec<i64>,
    pub strides: Vec<i64>,
    pub paddings: Vec<i64>,
    pub ceil_mode: bool,
    pub exclusive: bool,
    pub adaptive: bool,
    pub global_pooling: bool,
    pub padding_algorithm: PaddingAlgorithm,
    pub channels_last: bool,
}

impl PoolAttrs {
    /// Paddle's `pooling_type` (`max`, `avg`) and `data_format`.
    pub fn kind_and_layout(pooling_type: &str, data_format: &str) -> KResult<(PoolKind, bool)> {
        let kind = match pooling_type {
            "max" => PoolKind::Max,
            "avg" => PoolKind::Avg,
            other => kbail!("pooling_type `{}` is not max or avg", other),
        };
        Ok((kind, channels_last(data_format)?))
    }
}

/// One output dimension's windows: `(start, end, divisor)` per output position, clipped to the
/// input.
pub(super) fn windows(
    input: usize,
    k: usize,
    s: usize,
    before: usize,
    out: usize,
    adaptive: bool,
    exclusive: bool,
) -> Vec<(usize, usize, usize)> {
    (0..out)
        .map(|i| {
            if adaptive {
                let start = i * input / out;
                let end = ((i + 1) * input).div_ceil(out);
                (start, end, end - start)
            } else {
                let start = (i * s) as isize - before as isize;
                let end = (start + k as isize).min((input + before) as isize);
                let unclipped = (end - start).max(0) as usize;
                let (cs, ce) = (start.max(0) as usize, (end.max(0) as usize).min(input));
                let ce = ce.max(cs);
                (cs, ce, if exclusive { ce - cs } else { unclipped })
            }
        })
        .collect()
}

/// A pooling's sizes in NCHW terms and its windows per spatial dimension.
struct Plan {
    n: usize,
    c: usize,
    h: usize,
    w: usize,
    rows: Vec<(usize, usize, usize)>,
    cols: Vec<(usize, usize, usize)>,
}

impl Plan {
    fn of(x: &[usize], at: &PoolAttrs) -> KResult<Plan> {
        let &[n, c, h, w] = x else {
            kbail!("pool2d needs a 4-D input, got {:?}", x);
        };
        let mut k = match *at.kernel_size {
            [a] => [a, a],
            [a, b] => [a, b],
            _ => kbail!(
                "kernel_size has {} elements, expected 2",
                at.kernel_size.len()
            ),
        };
        if at.global_pooling {
            k = [h as i64, w as i64];
        }
        if k.iter().any(|&v| v < 1) {
            kbail!("kernel_size must be positive, got {:?}", at.kernel_size);
        }
        let s = match *at.strides {
            [] => [1, 1],
            [a] => [a, a],
            [a, b] => [a, b],
            _ => kbail!("strides has {} elements, expected 2", at.strides.len()),
        };
        if s.iter().any(|&v| v < 1) {
            kbail!("strides must be positive, got {:?}", at.strides);
        }
        let given = padding_pairs(&at.paddings, "pool2d")?;
        let mut dims = [(0usize, 0usize, 0usize); 2];
        for i in 0..2 {
            let (input, kk, ss) = ([h, w][i], k[i] as usize, s[i] as usize);
            let (before, after) = if at.global_pooling || at.adaptive {
                (0, 0)
            } else {
                let (b, a, _) = resolve_padding(at.padding_algorithm, given[i], 1, input, kk, ss);
                (b, a)
            };
            let out = if at.adaptive {
                kk
            } else {
                let padded = input + before + after;
                if padded < kk {
                    kbail!(
                        "the pooling window {:?} does not fit the padded input {:?}",
                        k,
                        x
                    );
                }
                let extra = if at.ceil_mode { ss - 1 } else { 0 };
                (padded - kk + extra) / ss + 1
            };
            dims[i] = (before, kk, out);
        }
        if at.adaptive && (h == 0 || w == 0) && n * c > 0 {
            kbail!(
                "adaptive pooling to {:?} needs a non-empty input, got {:?}",
                k,
                x
            );
        }
        let excl = at.exclusive || at.adaptive;
        let rows = windows(
            h,
            dims[0].1,
            s[0] as usize,
            dims[0].0,
            dims[0].2,
            at.adaptive,
            excl,
        );
        let cols = windows(
            w,
            dims[1].1,
            s[1] as usize,
            dims[1].0,
            dims[1].2,
            at.adaptive,
            excl,
        );
        Ok(Plan {
            n,
            c,
            h,
            w,
            rows,
            cols,
        })
    }

    fn out_shape(&self) -> Vec<usize> {
        vec![self.n, self.c, self.rows.len(), self.cols.len()]
    }

    /// Adaptive max pooling to an output larger than the input: Paddle 3.3.1's CPU `pool2d`
    /// leaves `-FLT_MAX` in most of that output instead of pooling (its own
    /// `AdaptiveMaxPool2D` runs `max_pool2d_with_index` there), so irw has no numbers to match.
    fn refuse_max_growth(&self, x: &[usize], at: &PoolAttrs) -> KResult<()> {
        if at.adaptive
            && at.kind == PoolKind::Max
            && (self.rows.len() > self.h || self.cols.len() > self.w)
        {
            kbail!(
                "pool2d: adaptive max pooling to {:?} from the smaller {:?} is not run: Paddle's \
                 CPU kernel gives -FLT_MAX windows there, not a pooling \
                 (max_pool2d_with_index pools it)",
                [self.rows.len(), self.cols.len()],
                x
            );
        }
        Ok(())
    }
}

/// NCHW forward on a plain buffer.
fn forward(p: &Plan, kind: PoolKind, x: &[f32]) -> Vec<f32> {
    let (oh, ow) = (p.rows.len(), p.cols.len());
    let mut out = vec![0.0f32; p.n * p.c * oh * ow];
    for (plane, dst) in x.chunks_exact(p.h * p.w).zip(out.chunks_exact_mut(oh * ow)) {
        for (oy, &(r0, r1, rd)) in p.rows.iter().enumerate() {
            for (ox, &(c0, c1, cd)) in p.cols.iter().enumerate() {
                let v = match kind {
                    PoolKind::Max => {
                        let mut m = -f32::MAX;
                        for y in r0..r1 {
                            for &v in &plane[y * p.w + c0..y * p.w + c1] {
                                m = m.max(v);
                            }
                        }
                        m
                    }
                    PoolKind::Avg => {
                        let mut s = 0.0f32;
                        for y in r0..r1 {
                            for &v in &plane[y * p.w + c0..y * p.w + c1] {
                                s += v;
                            }
                        }
                        s / (rd * cd) as f32
                    }
                };
                dst[oy * ow + ox] = v;
            }
        }
    }
    out
}

/// NCHW backward on plain buffers.
fn backward(p: &Plan, kind: PoolKind, x: &[f32], out: &[f32], dy: &[f32]) -> Vec<f32> {
    let (oh, ow) = (p.rows.len(), p.cols.len());
    let mut dx = vec![0.0f32; x.len()];
    for ((plane, dplane), (o, d)) in x
        .chunks_exact(p.h * p.w)
        .zip(dx.chunks_exact_mut(p.h * p.w))
        .zip(out.chunks_exact(oh * ow).zip(dy.chunks_exact(oh * ow)))
    {
        for (oy, &(r0, r1, rd)) in p.rows.iter().enumerate() {
            for (ox, &(c0, c1, cd)) in p.cols.iter().enumerate() {
                let g = d[oy * ow + ox];
                match kind {
                    PoolKind::Max => {
                        let m = o[oy * ow + ox];
                        'find: for y in r0..r1 {
                            for xx in c0..c1 {
                                if plane[y * p.w + xx] == m {
                                    dplane[y * p.w + xx] += g;
                                    break 'find;
                                }
                            }
                        }
                    }
                    PoolKind::Avg => {
                        let share = g / (rd * cd) as f32;
                        for y in r0..r1 {
                            for v in &mut dplane[y * p.w + c0..y * p.w + c1] {
                                *v += share;
                            }
                        }
                    }
                }
            }
        }
    }
    dx
}

fn nchw(t: &Tensor, last: bool) -> KResult<Tensor> {
    if !t.dtype().is_float() {
        kbail!(
            "pool2d computes float tensors, got {}",
            t.dtype().attr_name()
        );
    }
    if last {
        transpose(t, &[0, 3, 1, 2])
    } else {
        Ok(t.clone())
    }
}

fn finish(shape: Vec<usize>, v: Vec<f32>, like: &Tensor, last: bool) -> KResult<Tensor> {
    let t = Tensor::from_f32_as(&shape, v, like.dtype())?;
    if last {
        transpose(&t, &[0, 2, 3, 1])
    } else {
        Ok(t)
    }
}

/// `pool2d(x)`.
pub fn pool2d(x: &Tensor, at: &PoolAttrs) -> KResult<Tensor> {
    let xc = nchw(x, at.channels_last)?;
    let p = Plan::of(xc.shape(), at)?;
    p.refuse_max_growth(xc.shape(), at)?;
    let shape = p.out_shape();
    memory::reserve(&"the pooling's output", &shape, 4)?;
    let out = forward(&p, at.kind, &xc.to_f32());
    finish(shape, out, x, at.channels_last)
}

/// `pool2d_grad(x, out, out_grad)`: the gradient with respect to `x`.
pub fn pool2d_grad(x: &Tensor, out: &Tensor, out_grad: &Tensor, at: &PoolAttrs) -> KResult<Tensor> {
    let xc = nchw(x, at.channels_last)?;
    let oc = nchw(out, at.channels_last)?;
    let dc = nchw(out_grad, at.channels_last)?;
    let p = Plan::of(xc.shape(), at)?;
    p.refuse_max_growth(xc.shape(), at)?;
    if oc.shape() != p.out_shape() || dc.shape() != p.out_shape() {
        kbail!(
            "out and out_grad have shapes {:?} and {:?}, the pooling's output is {:?}",
            out.shape(),
            out_grad.shape(),
            p.out_shape()
        );
    }
    let dx = backward(&p, at.kind, &xc.to_f32(), &oc.to_f32(), &dc.to_f32());
    finish(xc.shape().to_vec(), dx, x, at.channels_last)
}

/// The attributes of a `max_pool2d_with_index` (and its grad): NCHW, `paddings` one per
/// spatial dimension (both sides), no padding algorithm.
#[derive(Clone, Debug)]
pub struct MaxPoolWithIndexAttrs {
    pub kernel_size: Vec<i64>,
    pub strides: Vec<i64>,
    pub paddings: Vec<i64>,
    pub global_pooling: bool,
    pub adaptive: bool,
    pub ceil_mode: bool,
}

impl MaxPoolWithIndexAttrs {
    /// The windows, as `pool2d`'s max pooling has them.
    fn plan(&self, x: &[usize]) -> KResult<Plan> {
        if x.len() != 4 {
            kbail!(
                "max_pool2d_with_index needs a 4-D (NCHW) input, got {:?}",
                x
            );
        }
        if self.kernel_size.len() != 2 || self.paddings.len() != 2 || self.strides.len() != 2 {
            kbail!(
                "max_pool2d_with_index takes 2 kernel sizes, strides and paddings (one per spatial dimension), got {:?}, {:?} and {:?}",
                self.kernel_size,
                self.strides,
                self.paddings
            );
        }
        Plan::of(
            x,
            &PoolAttrs {
                kind: PoolKind::Max,
                kernel_size: self.kernel_size.clone(),
                strides: self.strides.clone(),
                paddings: self.paddings.clone(),
                ceil_mode: self.ceil_mode,
                exclusive: true,
                adaptive: self.adaptive,
                global_pooling: self.global_pooling,
                padding_algorithm: PaddingAlgorithm::Explicit,
                channels_last: false,
            },
        )
    }
}

/// `max_pool2d_with_index(x)`: the max pooling and, per output, the position `y·W + x` within
/// its input plane of the first (row-major) element that is strictly larger than all before
/// it, as an int32 `mask`. A window with nothing above `−f32::MAX` in it (a `ceil_mode`
/// window past the input and its padding, or one of `−inf`s) gives `−f32::MAX` and position
/// `−1`, as Paddle's CPU kernel does.
pub fn max_pool2d_with_index(x: &Tensor, at: &MaxPoolWithIndexAttrs) -> KResult<(Tensor, Tensor)> {
    let xc = nchw(x, false)?;
    let p = at.plan(xc.shape())?;
    if p.h * p.w > i32::MAX as usize {
        kbail!(
            "max_pool2d_with_index: a {}x{} plane has positions past the int32 mask",
            p.h,
            p.w
        );
    }
    let shape = p.out_shape();
    memory::reserve(&"the pooling's output and mask", &shape, 8)?;
    let (oh, ow) = (p.rows.len(), p.cols.len());
    let xs = xc.to_f32();
    let mut out = vec![0.0f32; p.n * p.c * oh * ow];
    let mut mask = vec![0i32; out.len()];
    for ((plane, dst), idx) in xs
        .chunks_exact(p.h * p.w)
        .zip(out.chunks_exact_mut(oh * ow))
        .zip(mask.chunks_exact_mut(oh * ow))
    {
        for (oy, &(r0, r1, _)) in p.rows.iter().enumerate() {
            for (ox, &(c0, c1, _)) in p.cols.iter().enumerate() {
                let (mut m, mut at) = (-f32::MAX, -1i64);
                for y in r0..r1 {
                    for xx in c0..c1 {
                        let v = plane[y * p.w + xx];
                        if m < v {
                            (m, at) = (v, (y * p.w + xx) as i64);
                        }
                    }
                }
                dst[oy * ow + ox] = m;
                idx[oy * ow + ox] = at as i32;
            }
        }
    }
    Ok((
        finish(shape.clone(), out, x, false)?,
        Tensor::new(shape, Data::I32(mask))?,
    ))
}

/// `max_pool2d_with_index_grad(x, mask, out_grad)`: each `out_grad` element added to the input
/// position its `mask` entry names. A position of `−1` (a window that read nothing) passes no
/// gradient: the output was a constant. (Paddle's CPU kernel adds it one element before the
/// plane instead; no real window produces it.)
pub fn max_pool2d_with_index_grad(
    x: &Tensor,
    mask: &Tensor,
    out_grad: &Tensor,
    at: &MaxPoolWithIndexAttrs,
) -> KResult<Tensor> {
    let xc = nchw(x, false)?;
    let p = at.plan(xc.shape())?;
    if mask.shape() != p.out_shape() || out_grad.shape() != p.out_shape() {
        kbail!(
            "mask and out_grad have shapes {:?} and {:?}, the pooling's output is {:?}",
            mask.shape(),
            out_grad.shape(),
            p.out_shape()
        );
    }
    if !matches!(mask.dtype(), DType::I32 | DType::I64) {
        kbail!(
            "max_pool2d_with_index_grad: the mask must be integer positions, got {}",
            mask.dtype().attr_name()
        );
    }
    let plane = p.h * p.w;
    let (oh, ow) = (p.rows.len(), p.cols.len());
    let mut dx = vec![0.0f32; xc.numel()];
    let (idx, dy) = (mask.to_i64_vec(), out_grad.to_f32());
    for ((dplane, idx), dy) in dx
        .chunks_exact_mut(plane)
        .zip(idx.chunks_exact(oh * ow))
        .zip(dy.chunks_exact(oh * ow))
    {
        for (&i, &g) in idx.iter().zip(dy) {
            match usize::try_from(i) {
                Ok(i) if i < plane => dplane[i] += g,
                _ if i == -1 => {}
                _ => kbail!(
                    "max_pool2d_with_index_grad: mask position {} is outside the {}x{} input plane",
                    i,
                    p.h,
                    p.w
                ),
            }
        }
    }
    finish(xc.shape().to_vec(), dx, x, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::kernels::testdata::{paddle_case, seq_d, seq_x, Close};
    use serde_json::Value;

    fn ints(v: &Value) -> Vec<i64> {
        match v {
            Value::Number(n) => vec![n.as_i64().unwrap(); 2],
            Value::Array(a) => a.iter().map(|x| x.as_i64().unwrap()).collect(),
            _ => vec![],
        }
    }

    /// The attributes `paddle.nn.functional`'s pooling functions give `pool2d`.
    fn attrs_of(case: &Value) -> PoolAttrs {
        let a = &case["attrs"];
        let kind = case["kind"].as_str().unwrap();
        let adaptive = kind == "amax" || kind == "aavg";
        let ks = if adaptive {
            ints(&a["output_size"])
        } else {
            ints(&a["kernel_size"])
        };
        PoolAttrs {
            kind: if kind.ends_with("max") {
                PoolKind::Max
            } else {
                PoolKind::Avg
            },
            strides: if adaptive {
                vec![1, 1]
            } else {
                a.get("stride").map(ints).unwrap_or_else(|| ks.clone())
            },
            kernel_size: ks,
            paddings: a.get("padding").map(ints).unwrap_or_default(),
            ceil_mode: a
                .get("ceil_mode")
                .and_then(|v| v.as_bool())
                .unwrap_or(false),
            exclusive: a.get("exclusive").and_then(|v| v.as_bool()).unwrap_or(true),
            adaptive,
            global_pooling: false,
            padding_algorithm: PaddingAlgorithm::Explicit,
            channels_last: a.get("data_format").and_then(|v| v.as_str()) == Some("NHWC"),
        }
    }

    fn shape(v: &Value) -> Vec<usize> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as usize)
            .collect()
    }

    #[test]
    fn matches_paddle() {
        for name in [
            "max_ceil_pad",
            "avg_inclusive_pad",
            "avg_exclusive_pad_ceil",
            "avg_nhwc",
            "adaptive_avg",
            "adaptive_max",
            "global_avg",
        ] {
            let case = paddle_case(name);
            let xs = shape(&case["x"]);
            let at = attrs_of(&case);
            let x = Tensor::f32(&xs, seq_x(crate::exec::tensor::numel(&xs)));
            let out = pool2d(&x, &at).unwrap();
            assert_eq!(out.shape(), shape(&case["out_shape"]).as_slice(), "{name}");
            let tol = Close::new(1e-6);
            tol.paddle(name, "out", &out, &case);
            let dy = Tensor::f32(out.shape(), seq_d(out.numel()));
            tol.paddle(
                name,
                "x_grad",
                &pool2d_grad(&x, &out, &dy, &at).unwrap(),
                &case,
            );
        }
    }

    #[test]
    fn global_pooling_is_the_plane_mean() {
        let x = Tensor::f32(&[2, 3, 4, 5], seq_x(120));
        let at = PoolAttrs {
            kind: PoolKind::Avg,
            kernel_size: vec![1, 1],
            strides: vec![1, 1],
            paddings: vec![3, 3],
            ceil_mode: false,
            exclusive: false,
            adaptive: false,
            global_pooling: true,
            padding_algorithm: PaddingAlgorithm::Explicit,
            channels_last: false,
        };
        let out = pool2d(&x, &at).unwrap();
        assert_eq!(out.shape(), &[2, 3, 1, 1]);
        Close::new(1e-6).paddle("global_avg", "out", &out, &paddle_case("global_avg"));
    }

    #[test]
    fn max_gradient_goes_to_the_first_tie() {
        let case = paddle_case("max_ties");
        let x = Tensor::f32(&[1, 1, 4, 4], vec![0.0; 16]);
        let at = PoolAttrs {
            kind: PoolKind::Max,
            kernel_size: vec![2, 2],
            strides: vec![2, 2],
            paddings: vec![0, 0],
            ceil_mode: false,
            exclusive: true,
            adaptive: false,
            global_pooling: false,
            padding_algorithm: PaddingAlgorithm::Explicit,
            channels_last: false,
        };
        let out = pool2d(&x, &at).unwrap();
        let dy = Tensor::f32(out.shape(), seq_d(4));
        Close::new(0.0).paddle(
            "max_ties",
            "x_grad",
            &pool2d_grad(&x, &out, &dy, &at).unwrap(),
            &case,
        );
    }

    /// SAME pads to ceil(in/s) outputs; VALID drops the padding.
    #[test]
    fn padding_algorithms() {
        let x = Tensor::f32(&[1, 1, 5, 5], seq_x(25));
        let mut at = PoolAttrs {
            kind: PoolKind::Max,
            kernel_size: vec![2, 2],
            strides: vec![2, 2],
            paddings: vec![1, 1],
            ceil_mode: false,
            exclusive: true,
            adaptive: false,
            global_pooling: false,
            padding_algorithm: PaddingAlgorithm::Same,
            channels_last: false,
        };
        assert_eq!(pool2d(&x, &at).unwrap().shape(), &[1, 1, 3, 3]);
        at.padding_algorithm = PaddingAlgorithm::Valid;
        assert_eq!(pool2d(&x, &at).unwrap().shape(), &[1, 1, 2, 2]);
        at.kernel_size = vec![0, 2];
        assert!(pool2d(&x, &at).is_err());
    }
}
