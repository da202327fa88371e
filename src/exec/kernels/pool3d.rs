//! `pool3d` and `pool3d_grad`: `pool2d`'s max and average pooling over depth, height and width.
//!
//! Semantics (Paddle's `PoolInferMeta` and CPU `Pool3dFunctor`) are `pool2d`'s with a third
//! spatial dimension: `paddings` has 3 elements (both sides) or 6 (`[front, back, top, bottom,
//! left, right]`), `SAME`/`VALID`, `global_pooling`, `adaptive`, `ceil_mode` and `exclusive`
//! act per dimension exactly as there, and an average divides by the product of the three
//! per-dimension window sizes ([`pool::windows`](super::pool::windows) computes each). The max
//! gradient goes to the first element of the window (depth, then row, then column) equal to
//! the maximum. NDHWC runs as NCDHW between two transposes; 16-bit tensors are computed in f32
//! and rounded once.

use crate::exec::error::KResult;
use crate::exec::kernels::conv::resolve_padding;
use crate::exec::kernels::pool::{windows, PoolAttrs, PoolKind};
use crate::exec::kernels::shape::transpose;
use crate::exec::memory;
use crate::exec::tensor::Tensor;
use crate::kbail;

type Windows = Vec<(usize, usize, usize)>;

/// The sizes in NCDHW terms and the windows of each spatial dimension.
struct Plan3 {
    planes: usize,
    input: [usize; 3],
    win: [Windows; 3],
}

/// Three values of a per-dimension attribute, one value standing for all three.
fn triple(v: &[i64], key: &str) -> KResult<[i64; 3]> {
    Ok(match *v {
        [a] => [a; 3],
        [a, b, c] => [a, b, c],
        _ => kbail!("pool3d: {} has {} elements, expected 3", key, v.len()),
    })
}

impl Plan3 {
    fn of(x: &[usize], at: &PoolAttrs) -> KResult<Plan3> {
        let &[n, c, d, h, w] = x else {
            kbail!("pool3d needs a 5-D input, got {:?}", x);
        };
        let input = [d, h, w];
        let mut k = triple(&at.kernel_size, "kernel_size")?;
        if at.global_pooling {
            k = input.map(|v| v as i64);
        }
        let s = triple(&at.strides, "strides")?;
        if k.iter().chain(&s).any(|&v| v < 1) {
            kbail!(
                "pool3d: kernel_size and strides must be positive, got {:?} and {:?}",
                at.kernel_size,
                at.strides
            );
        }
        let given: [(i64, i64); 3] = match *at.paddings {
            [] => [(0, 0); 3],
            [a, b, c] => [(a, a), (b, b), (c, c)],
            [f, bk, t, bt, l, r] => [(f, bk), (t, bt), (l, r)],
            _ => kbail!(
                "pool3d: paddings has {} elements, expected 3 or 6",
                at.paddings.len()
            ),
        };
        let excl = at.exclusive || at.adaptive;
        let mut win: [Windows; 3] = Default::default();
        for i in 0..3 {
            let (inp, kk, ss) = (input[i], k[i] as usize, s[i] as usize);
            let (before, after) = if at.global_pooling || at.adaptive {
                (0, 0)
            } else {
                let (b, a, _) = resolve_padding(at.padding_algorithm, given[i], 1, inp, kk, ss);
                (b, a)
            };
            let out = if at.adaptive {
                if inp == 0 && n * c > 0 {
                    kbail!(
                        "adaptive pooling to {:?} needs a non-empty input, got {:?}",
                        k,
                        x
                    );
                }
                kk
            } else {
                let padded = inp + before + after;
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
            win[i] = windows(inp, kk, ss, before, out, at.adaptive, excl);
        }
        Ok(Plan3 {
            planes: n * c,
            input,
            win,
        })
    }

    fn out_shape(&self, x: &[usize]) -> Vec<usize> {
        vec![
            x[0],
            x[1],
            self.win[0].len(),
            self.win[1].len(),
            self.win[2].len(),
        ]
    }

    fn plane_in(&self) -> usize {
        self.input.iter().product()
    }

    fn plane_out(&self) -> usize {
        self.win.iter().map(Vec::len).product()
    }

    /// Every output position of a plane with its window: (output offset, the three windows).
    fn each(&self, mut f: impl FnMut(usize, [(usize, usize, usize); 3])) {
        let mut o = 0;
        for &wd in &self.win[0] {
            for &wh in &self.win[1] {
                for &ww in &self.win[2] {
                    f(o, [wd, wh, ww]);
                    o += 1;
                }
            }
        }
    }
}

fn forward(p: &Plan3, kind: PoolKind, x: &[f32]) -> Vec<f32> {
    let [_, h, w] = p.input;
    let mut out = vec![0.0f32; p.planes * p.plane_out()];
    for (plane, dst) in x
        .chunks_exact(p.plane_in().max(1))
        .zip(out.chunks_exact_mut(p.plane_out().max(1)))
    {
        p.each(|o, [(d0, d1, dd), (h0, h1, hd), (w0, w1, wd)]| {
            let rows = (d0..d1).flat_map(|z| (h0..h1).map(move |y| (z * h + y) * w));
            dst[o] = match kind {
                PoolKind::Max => rows
                    .flat_map(|r| plane[r + w0..r + w1].iter().copied())
                    .fold(-f32::MAX, f32::max),
                PoolKind::Avg => {
                    let s: f32 = rows.flat_map(|r| plane[r + w0..r + w1].iter()).sum();
                    s / (dd * hd * wd) as f32
                }
            };
        });
    }
    out
}

fn backward(p: &Plan3, kind: PoolKind, x: &[f32], out: &[f32], dy: &[f32]) -> Vec<f32> {
    let [_, h, w] = p.input;
    let (pin, pout) = (p.plane_in().max(1), p.plane_out().max(1));
    let mut dx = vec![0.0f32; x.len()];
    for ((plane, dplane), (o, d)) in x
        .chunks_exact(pin)
        .zip(dx.chunks_exact_mut(pin))
        .zip(out.chunks_exact(pout).zip(dy.chunks_exact(pout)))
    {
        p.each(|oi, [(d0, d1, dd), (h0, h1, hd), (w0, w1, wd)]| {
            let g = d[oi];
            let mut rows = (d0..d1).flat_map(|z| (h0..h1).map(move |y| (z * h + y) * w));
            match kind {
                PoolKind::Max => {
                    let m = o[oi];
                    if let Some(at) = rows.find_map(|r| (r + w0..r + w1).find(|&i| plane[i] == m)) {
                        dplane[at] += g;
                    }
                }
                PoolKind::Avg => {
                    let share = g / (dd * hd * wd) as f32;
                    for r in rows {
                        for v in &mut dplane[r + w0..r + w1] {
                            *v += share;
                        }
                    }
                }
            }
        });
    }
    dx
}

fn ncdhw(t: &Tensor, last: bool) -> KResult<Tensor> {
    if !t.dtype().is_float() {
        kbail!(
            "pool3d computes float tensors, got {}",
            t.dtype().attr_name()
        );
    }
    if last {
        transpose(t, &[0, 4, 1, 2, 3])
    } else {
        Ok(t.clone())
    }
}

fn finish(shape: &[usize], v: Vec<f32>, like: &Tensor, last: bool) -> KResult<Tensor> {
    let t = Tensor::from_f32_as(shape, v, like.dtype())?;
    if last {
        transpose(&t, &[0, 2, 3, 4, 1])
    } else {
        Ok(t)
    }
}

/// `pool3d(x)`.
pub fn pool3d(x: &Tensor, at: &PoolAttrs) -> KResult<Tensor> {
    let xc = ncdhw(x, at.channels_last)?;
    let p = Plan3::of(xc.shape(), at)?;
    let shape = p.out_shape(xc.shape());
    memory::reserve(&"the pooling's output", &shape, 4)?;
    let out = forward(&p, at.kind, &xc.to_f32());
    finish(&shape, out, x, at.channels_last)
}

/// `pool3d_grad(x, out, out_grad)`: the gradient with respect to `x`.
pub fn pool3d_grad(x: &Tensor, out: &Tensor, out_grad: &Tensor, at: &PoolAttrs) -> KResult<Tensor> {
    let xc = ncdhw(x, at.channels_last)?;
    let oc = ncdhw(out, at.channels_last)?;
    let dc = ncdhw(out_grad, at.channels_last)?;
    let p = Plan3::of(xc.shape(), at)?;
    let shape = p.out_shape(xc.shape());
    if oc.shape() != shape || dc.shape() != shape {
        kbail!(
            "out and out_grad have shapes {:?} and {:?}, the pooling's output is {:?}",
            out.shape(),
            out_grad.shape(),
            shape
        );
    }
    let dx = backward(&p, at.kind, &xc.to_f32(), &oc.to_f32(), &dc.to_f32());
    finish(xc.shape(), dx, x, at.channels_last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::kernels::conv::PaddingAlgorithm;
    use crate::exec::kernels::pool::{pool2d, pool2d_grad};
    use crate::exec::kernels::testdata::{seq_d, seq_x, Close};

    /// A depth of one with a 1-deep window is `pool2d`.
    #[test]
    fn one_deep_is_pool2d() {
        for (kind, exclusive, ceil) in [
            (PoolKind::Max, true, true),
            (PoolKind::Avg, false, false),
            (PoolKind::Avg, true, false),
        ] {
            let at3 = PoolAttrs {
                kind,
                kernel_size: vec![1, 3, 2],
                strides: vec![1, 2, 2],
                paddings: vec![0, 0, 1, 1, 0, 1],
                ceil_mode: ceil,
                exclusive,
                adaptive: false,
                global_pooling: false,
                padding_algorithm: PaddingAlgorithm::Explicit,
                channels_last: false,
            };
            let at2 = PoolAttrs {
                kind,
                kernel_size: vec![3, 2],
                strides: vec![2, 2],
                paddings: vec![1, 1, 0, 1],
                ceil_mode: ceil,
                exclusive,
                adaptive: false,
                global_pooling: false,
                padding_algorithm: PaddingAlgorithm::Explicit,
                channels_last: false,
            };
            let x = Tensor::f32(&[2, 3, 1, 5, 6], seq_x(180));
            let x2 = x.clone().reshaped(vec![2, 3, 5, 6]).unwrap();
            let out = pool3d(&x, &at3).unwrap();
            let out2 = pool2d(&x2, &at2).unwrap();
            let s2 = out2.shape().to_vec();
            assert_eq!(out.shape(), [2, 3, 1, s2[2], s2[3]]);
            Close::new(1e-6).all("out", &out.to_f64_vec(), &out2.to_f64_vec());
            let dy = Tensor::f32(out.shape(), seq_d(out.numel()));
            let dx = pool3d_grad(&x, &out, &dy, &at3).unwrap();
            let dy2 = dy.clone().reshaped(s2).unwrap();
            let dx2 = pool2d_grad(&x2, &out2, &dy2, &at2).unwrap();
            Close::new(1e-6).all("x_grad", &dx.to_f64_vec(), &dx2.to_f64_vec());
        }
    }
}
