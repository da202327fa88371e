//! `conv3d` and `conv3d_grad` with Paddle's semantics, as vol2col + `gemm` (`conv2d`'s scheme
//! with a depth dimension).
//!
//! Semantics (Paddle's `conv3d` / `ConvInferMeta`): the filter is `[O, C/groups, KD, KH, KW]`
//! in either data format; `paddings` has 3 elements (`[pd, ph, pw]`, both sides) or 6
//! (`[front, back, top, bottom, left, right]`); `padding_algorithm` `SAME` replaces them by the
//! padding that gives `ceil(in/stride)` outputs and sets the dilations to 1, `VALID` by zeros
//! ([`resolve_padding`], shared with `conv2d`); an output dimension is
//! `(in + before + after − (d·(k−1)+1)) / s + 1`. Output channel block `g` of `O/groups`
//! channels reads input channels block `g`.
//!
//! Per sample and group the input windows become the columns of a `[C/g·KD·KH·KW, OD·OH·OW]`
//! matrix and the convolution is one GEMM with the filter block; the backward is `Wᵀ·dY`
//! scattered back by col2vol, and `dY·colᵀ` accumulated into the filter gradient. NDHWC runs as
//! NCDHW between two transposes; 16-bit tensors are computed in f32 and rounded once, f64 runs
//! in f64.

use gemm::Parallelism;

use crate::exec::error::KResult;
use crate::exec::kernels::conv::{
    buffer, compute_in_f64, from_channels_first, mat, mat_t, resolve_padding, to_channels_first,
    ConvAttrs, ConvScalar,
};
use crate::exec::kernels::matmul::{gemm_acc_into, gemm_into};
use crate::exec::memory;
use crate::exec::tensor::{Data, Tensor};
use crate::kbail;

/// Three positive values of `strides` or `dilations`, one value standing for all three.
fn triple(v: &[i64], key: &str) -> KResult<[usize; 3]> {
    let t = match *v {
        [] => [1; 3],
        [a] => [a; 3],
        [a, b, c] => [a, b, c],
        _ => kbail!("conv3d: {} has {} elements, expected 3", key, v.len()),
    };
    if t.iter().any(|&x| x < 1) {
        kbail!("conv3d: {} must be positive, got {:?}", key, v);
    }
    Ok(t.map(|x| x as usize))
}

/// `[before, after]` per spatial dimension from a 3- or 6-element `paddings`.
fn padding_triples(p: &[i64]) -> KResult<[(i64, i64); 3]> {
    match *p {
        [] => Ok([(0, 0); 3]),
        [d, h, w] => Ok([(d, d), (h, h), (w, w)]),
        [f, b, t, bo, l, r] => Ok([(f, b), (t, bo), (l, r)]),
        _ => kbail!("conv3d: paddings has {} elements, expected 3 or 6", p.len()),
    }
}

/// A 3-D convolution's sizes, in NCDHW terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Geometry3 {
    n: usize,
    c: usize,
    o: usize,
    groups: usize,
    input: [usize; 3],
    k: [usize; 3],
    out: [usize; 3],
    stride: [usize; 3],
    dilation: [usize; 3],
    /// Front, top and left padding (the others only shape the output).
    pad: [usize; 3],
}

impl Geometry3 {
    fn of(x: &[usize], filter: &[usize], at: &ConvAttrs) -> KResult<Geometry3> {
        let (&[n, c, d, h, w], &[o, cg, kd, kh, kw]) = (x, filter) else {
            kbail!(
                "conv3d needs a 5-D input and a 5-D filter, got {:?} and {:?}",
                x,
                filter
            );
        };
        if at.groups < 1 {
            kbail!("conv3d: groups must be positive, got {}", at.groups);
        }
        let groups = at.groups as usize;
        if cg == 0 || c != cg * groups || o % groups != 0 {
            kbail!(
                "conv3d: the input has {} channels and the filter {:?}: with groups = {} it must read {} channels per group and have a multiple of {} output channels",
                c,
                filter,
                groups,
                c / groups,
                groups
            );
        }
        let stride = triple(&at.strides, "strides")?;
        let dil = triple(&at.dilations, "dilations")?;
        let given = padding_triples(&at.paddings)?;
        let (input, k) = ([d, h, w], [kd, kh, kw]);
        let (mut pad, mut dilation, mut out) = ([0; 3], [1; 3], [0; 3]);
        for i in 0..3 {
            let (before, after, dl) = resolve_padding(
                at.padding_algorithm,
                given[i],
                dil[i] as i64,
                input[i],
                k[i],
                stride[i],
            );
            let span = dl * (k[i].max(1) - 1) + 1;
            let padded = input[i] + before + after;
            if k[i] == 0 || padded < span {
                kbail!(
                    "conv3d: the filter {:?} (dilated to {}) does not fit the padded input {:?}",
                    filter,
                    span,
                    x
                );
            }
            pad[i] = before;
            dilation[i] = dl;
            out[i] = (padded - span) / stride[i] + 1;
        }
        Ok(Geometry3 {
            n,
            c,
            o,
            groups,
            input,
            k,
            out,
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

    fn vol(&self) -> usize {
        self.input.iter().product()
    }

    fn out_vol(&self) -> usize {
        self.out.iter().product()
    }

    /// Rows of a group's column matrix: `C/g · KD · KH · KW`.
    fn col_rows(&self) -> usize {
        self.cg() * self.k.iter().product::<usize>()
    }

    /// The input index along dimension `i` read by output position `o` at filter tap `t`,
    /// `None` in the padding.
    fn at(&self, i: usize, o: usize, t: usize) -> Option<usize> {
        let v = (o * self.stride[i] + t * self.dilation[i]) as isize - self.pad[i] as isize;
        (v >= 0 && (v as usize) < self.input[i]).then_some(v as usize)
    }

    /// For every column-matrix entry of a group, the input offset it copies (within the
    /// group's `[C/g, D, H, W]` block), `None` for padding. Both vol2col and col2vol walk it.
    fn each_entry(&self, mut f: impl FnMut(usize, Option<usize>)) {
        let [d, h, w] = self.input;
        let [od, oh, ow] = self.out;
        let mut e = 0;
        for c in 0..self.cg() {
            for a in 0..self.k[0] {
                for b in 0..self.k[1] {
                    for t in 0..self.k[2] {
                        for z in 0..od {
                            let iz = self.at(0, z, a);
                            for y in 0..oh {
                                let iy = self.at(1, y, b);
                                for x in 0..ow {
                                    let src = match (iz, iy, self.at(2, x, t)) {
                                        (Some(iz), Some(iy), Some(ix)) => {
                                            Some(((c * d + iz) * h + iy) * w + ix)
                                        }
                                        _ => None,
                                    };
                                    f(e, src);
                                    e += 1;
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn vol2col<T: ConvScalar>(g: &Geometry3, x: &[T], col: &mut [T]) {
    g.each_entry(|e, src| col[e] = src.map_or(T::default(), |s| x[s]));
}

fn col2vol<T: ConvScalar>(g: &Geometry3, col: &[T], dx: &mut [T]) {
    g.each_entry(|e, src| {
        if let Some(s) = src {
            dx[s] += col[e];
        }
    });
}

fn conv3d_ncdhw<T: ConvScalar>(g: &Geometry3, x: &[T], filter: &[T]) -> Vec<T> {
    let (cg, og, kk, ov, v) = (g.cg(), g.og(), g.col_rows(), g.out_vol(), g.vol());
    let mut out = vec![T::default(); g.n * g.o * ov];
    let mut col = vec![T::default(); kk * ov];
    for n in 0..g.n {
        for grp in 0..g.groups {
            vol2col(g, &x[(n * g.c + grp * cg) * v..][..cg * v], &mut col);
            gemm_into(
                &mut out[(n * g.o + grp * og) * ov..][..og * ov],
                mat(&filter[grp * og * kk..(grp + 1) * og * kk], og, kk),
                mat(&col, kk, ov),
                Parallelism::None,
            );
        }
    }
    out
}

/// The input gradient (`[N, C, D, H, W]`) and the filter gradient (`[O, C/g, KD, KH, KW]`).
fn conv3d_grad_ncdhw<T: ConvScalar>(
    g: &Geometry3,
    x: &[T],
    filter: &[T],
    dy: &[T],
) -> (Vec<T>, Vec<T>) {
    let (cg, og, kk, ov, v) = (g.cg(), g.og(), g.col_rows(), g.out_vol(), g.vol());
    let mut dx = vec![T::default(); g.n * g.c * v];
    let mut dw = vec![T::default(); g.o * kk];
    let mut col = vec![T::default(); kk * ov];
    for n in 0..g.n {
        for grp in 0..g.groups {
            let dys = &dy[(n * g.o + grp * og) * ov..][..og * ov];
            let wg = &filter[grp * og * kk..(grp + 1) * og * kk];
            vol2col(g, &x[(n * g.c + grp * cg) * v..][..cg * v], &mut col);
            gemm_acc_into(
                &mut dw[grp * og * kk..(grp + 1) * og * kk],
                mat(dys, og, ov),
                mat_t(&col, ov, kk),
                Parallelism::None,
            );
            gemm_into(
                &mut col,
                mat_t(wg, kk, og),
                mat(dys, og, ov),
                Parallelism::None,
            );
            col2vol(g, &col, &mut dx[(n * g.c + grp * cg) * v..][..cg * v]);
        }
    }
    (dx, dw)
}

/// `conv3d(input, filter)`, in the input's dtype.
pub fn conv3d(x: &Tensor, filter: &Tensor, at: &ConvAttrs) -> KResult<Tensor> {
    let f64_path = compute_in_f64(x, filter)?;
    let xc = to_channels_first(x, at.channels_last)?;
    let g = Geometry3::of(xc.shape(), filter.shape(), at)?;
    let shape = vec![g.n, g.o, g.out[0], g.out[1], g.out[2]];
    memory::reserve(&"the convolution's output", &shape, 4)?;
    memory::reserve(
        &"the convolution's columns",
        &[g.col_rows(), g.out_vol()],
        4,
    )?;
    let data = if f64_path {
        Data::F64(conv3d_ncdhw(&g, &xc.to_f64_vec(), &filter.to_f64_vec()))
    } else {
        Data::F32(conv3d_ncdhw(&g, &xc.to_f32(), &filter.to_f32()))
    };
    from_channels_first(buffer(shape, data, x.dtype())?, at.channels_last)
}

/// `conv3d_grad(input, filter, out_grad)`: (input gradient in the input's dtype, filter
/// gradient in the filter's).
pub fn conv3d_grad(
    x: &Tensor,
    filter: &Tensor,
    out_grad: &Tensor,
    at: &ConvAttrs,
) -> KResult<(Tensor, Tensor)> {
    let f64_path = compute_in_f64(x, filter)?;
    let xc = to_channels_first(x, at.channels_last)?;
    let dyc = to_channels_first(out_grad, at.channels_last)?;
    let g = Geometry3::of(xc.shape(), filter.shape(), at)?;
    let want = [g.n, g.o, g.out[0], g.out[1], g.out[2]];
    if dyc.shape() != want {
        kbail!(
            "conv3d: out_grad has shape {:?}, the convolution's output is {:?}",
            out_grad.shape(),
            want
        );
    }
    memory::reserve(
        &"the convolution's columns",
        &[g.col_rows(), g.out_vol()],
        4,
    )?;
    let (dx, dw) = if f64_path {
        let (dx, dw) = conv3d_grad_ncdhw(
            &g,
            &xc.to_f64_vec(),
            &filter.to_f64_vec(),
            &dyc.to_f64_vec(),
        );
        (Data::F64(dx), Data::F64(dw))
    } else {
        let (dx, dw) = conv3d_grad_ncdhw(&g, &xc.to_f32(), &filter.to_f32(), &dyc.to_f32());
        (Data::F32(dx), Data::F32(dw))
    };
    Ok((
        from_channels_first(
            buffer(xc.shape().to_vec(), dx, x.dtype())?,
            at.channels_last,
        )?,
        buffer(filter.shape().to_vec(), dw, filter.dtype())?,
    ))
}
