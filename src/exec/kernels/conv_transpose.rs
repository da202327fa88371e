//! `conv2d_transpose`, `depthwise_conv2d_transpose` and their `_grad`s with Paddle's semantics.
//!
//! A transposed convolution is the adjoint (the input gradient) of the convolution that maps
//! its *output* back to its input with the same filter, strides, paddings, dilations and
//! groups. So it runs on [`conv`](super::conv)'s machinery with the roles exchanged: the
//! forward is that convolution's input gradient (`Wᵀ·x` per sample and group, scattered by
//! col2im), the input gradient is that convolution's forward applied to `out_grad`, and the
//! filter gradient is its filter gradient with `out_grad` as the input and `x` as the output
//! gradient. One code path therefore serves every attribute the convolution has, and a
//! transposed convolution agrees with Paddle's exactly where the convolution does.
//!
//! Semantics (Paddle's `Conv2dTransposeInferMeta` and its CPU kernel): `x` is `[N, C, H, W]`
//! (or NHWC), the filter `[C, O/groups, KH, KW]` in either data format, the output has `O`
//! channels. `paddings` has 2 or 4 elements and `padding_algorithm` `SAME`/`VALID` replaces
//! them as for a convolution, computed on `x`'s spatial size (`SAME` also sets the dilations
//! to one). An output dimension is `(in − 1)·s − before − after + d·(k − 1) + 1`, then: the
//! `output_size` operand, when it has values, gives it instead and must lie in
//! `[that, that + s)`; else `output_padding`, when given, is added and must lie in
//! `[0, max(s, d))`. Either way the convolution from the output must give back `in` positions
//! (Paddle's col2im refuses otherwise), which rules out the output paddings of a stride or more
//! that a larger dilation would admit. `depthwise_conv2d_transpose` is the same with
//! `groups = C`.

use crate::exec::error::KResult;
use crate::exec::kernels::conv::{
    buffer, compute_in_f64, conv2d_data_grad_nchw, conv2d_filter_grad_nchw, conv2d_nchw,
    from_channels_first, padding_pairs, pair, resolve_padding, to_channels_first, ConvAttrs,
    Geometry,
};
use crate::exec::memory;
use crate::exec::tensor::{Data, Tensor};
use crate::kbail;

/// The attributes (and the `output_size` operand's values) of a `conv2d_transpose`.
#[derive(Clone, Debug)]
pub struct ConvTransposeAttrs {
    /// Strides, paddings, dilations, groups, padding algorithm and layout, read as for a
    /// convolution.
    pub conv: ConvAttrs,
    /// Added to each inferred output dimension (empty: none).
    pub output_padding: Vec<i64>,
    /// The output's spatial size (empty: inferred).
    pub output_size: Vec<i64>,
}

/// The convolution (from the transposed convolution's output to its input) whose adjoint the
/// transposed convolution is, for an NCHW `x` and a `[C, O/g, KH, KW]` filter.
fn geometry(x: &[usize], filter: &[usize], at: &ConvTransposeAttrs) -> KResult<Geometry> {
    let (&[n, c, h, w], &[fc, og, kh, kw]) = (x, filter) else {
        kbail!(
            "conv2d_transpose needs a 4-D input and a 4-D filter, got {:?} and {:?}",
            x,
            filter
        );
    };
    if at.conv.groups < 1 {
        kbail!("groups must be positive, got {}", at.conv.groups);
    }
    let groups = at.conv.groups as usize;
    if fc != c || c % groups != 0 || og == 0 {
        kbail!(
            "conv2d_transpose: the input has {} channels and the filter is {:?}: the filter must be [{}, out_channels/groups, kh, kw] with {} divisible by groups = {}",
            c,
            filter,
            c,
            c,
            groups
        );
    }
    let stride = pair(&at.conv.strides, "strides", 1)?;
    let dil = pair(&at.conv.dilations, "dilations", 1)?;
    let given = padding_pairs(&at.conv.paddings, "conv2d_transpose")?;
    let pick = |v: &[i64], key: &str| -> KResult<Option<[i64; 2]>> {
        Ok(match *v {
            [] => None,
            [a] => Some([a, a]),
            [a, b] => Some([a, b]),
            _ => kbail!("{} has {} elements, expected 2", key, v.len()),
        })
    };
    let output_size = pick(&at.output_size, "output_size")?;
    let output_padding = pick(&at.output_padding, "output_padding")?;
    let (mut pad, mut dilation, mut out) = ([0; 2], [1; 2], [0; 2]);
    for i in 0..2 {
        let (input, k, s) = ([h, w][i], [kh, kw][i], stride[i]);
        let (before, after, d) = resolve_padding(
            at.conv.padding_algorithm,
            given[i],
            dil[i] as i64,
            input,
            k,
            s,
        );
        let span = d * (k.max(1) - 1) + 1;
        let inferred = (input.max(1) - 1) * s + span;
        if k == 0 || input == 0 || inferred <= before + after {
            kbail!(
                "conv2d_transpose: the input {:?} with the filter {:?} and paddings {}+{} has no output positions",
                x,
                filter,
                before,
                after
            );
        }
        let inferred = inferred - before - after;
        let size = match (output_size, output_padding) {
            (Some(os), _) => {
                let want = os[i];
                if want < inferred as i64 || want >= (inferred + s) as i64 {
                    kbail!(
                        "conv2d_transpose: output_size {:?} must lie in [{}, {}) in dimension {} (the inferred size, plus less than the stride)",
                        at.output_size,
                        inferred,
                        inferred + s,
                        i
                    );
                }
                want as usize
            }
            (None, Some(op)) => {
                if op[i] < 0 || op[i] >= s.max(d) as i64 {
                    kbail!(
                        "conv2d_transpose: output_padding {:?} must lie in [0, {}) in dimension {} (less than the stride or the dilation)",
                        at.output_padding,
                        s.max(d),
                        i
                    );
                }
                inferred + op[i] as usize
            }
            (None, None) => inferred,
        };
        if (size + before + after - span) / s + 1 != input {
            kbail!(
                "conv2d_transpose: an output of {} in dimension {} does not convolve back to the input's {} positions (stride {}, dilation {}, paddings {}+{})",
                size,
                i,
                input,
                s,
                d,
                before,
                after
            );
        }
        pad[i] = before;
        dilation[i] = d;
        out[i] = size;
    }
    Ok(Geometry {
        n,
        c: og * groups,
        h: out[0],
        w: out[1],
        o: c,
        groups,
        kh,
        kw,
        oh: h,
        ow: w,
        stride,
        dilation,
        pad,
    })
}

/// `conv2d_transpose(x, filter)` (and `depthwise_conv2d_transpose`), in `x`'s dtype.
pub fn conv2d_transpose(x: &Tensor, filter: &Tensor, at: &ConvTransposeAttrs) -> KResult<Tensor> {
    let f64_path = compute_in_f64(x, filter)?;
    let xc = to_channels_first(x, at.conv.channels_last)?;
    let g = geometry(xc.shape(), filter.shape(), at)?;
    let shape = vec![g.n, g.c, g.h, g.w];
    memory::reserve(&"the transposed convolution's output", &shape, 4)?;
    memory::reserve(
        &"the transposed convolution's columns",
        &[g.c / g.groups * g.kh * g.kw, g.oh * g.ow],
        4,
    )?;
    let data = if f64_path {
        Data::F64(conv2d_data_grad_nchw(
            &g,
            &filter.to_f64_vec(),
            &xc.to_f64_vec(),
        ))
    } else {
        Data::F32(conv2d_data_grad_nchw(&g, &filter.to_f32(), &xc.to_f32()))
    };
    from_channels_first(buffer(shape, data, x.dtype())?, at.conv.channels_last)
}

/// `conv2d_transpose_grad(x, filter, out_grad)`: (input gradient in `x`'s dtype, filter
/// gradient in the filter's).
pub fn conv2d_transpose_grad(
    x: &Tensor,
    filter: &Tensor,
    out_grad: &Tensor,
    at: &ConvTransposeAttrs,
) -> KResult<(Tensor, Tensor)> {
    let f64_path = compute_in_f64(x, filter)?;
    let xc = to_channels_first(x, at.conv.channels_last)?;
    let dyc = to_channels_first(out_grad, at.conv.channels_last)?;
    let g = geometry(xc.shape(), filter.shape(), at)?;
    if dyc.shape() != [g.n, g.c, g.h, g.w] {
        kbail!(
            "out_grad has shape {:?}, the transposed convolution's output is {:?}",
            out_grad.shape(),
            [g.n, g.c, g.h, g.w]
        );
    }
    memory::reserve(
        &"the transposed convolution's columns",
        &[g.c / g.groups * g.kh * g.kw, g.oh * g.ow],
        4,
    )?;
    let (dx, dw) = if f64_path {
        let (xs, ws, dys) = (xc.to_f64_vec(), filter.to_f64_vec(), dyc.to_f64_vec());
        let mut dx = vec![0.0f64; xs.len()];
        conv2d_nchw(&g, &dys, &ws, &mut dx);
        (
            Data::F64(dx),
            Data::F64(conv2d_filter_grad_nchw(&g, &dys, &xs)),
        )
    } else {
        let (xs, ws, dys) = (xc.to_f32(), filter.to_f32(), dyc.to_f32());
        let mut dx = vec![0.0f32; xs.len()];
        conv2d_nchw(&g, &dys, &ws, &mut dx);
        (
            Data::F32(dx),
            Data::F32(conv2d_filter_grad_nchw(&g, &dys, &xs)),
        )
    };
    let dx = from_channels_first(
        buffer(xc.shape().to_vec(), dx, x.dtype())?,
        at.conv.channels_last,
    )?;
    Ok((dx, buffer(filter.shape().to_vec(), dw, filter.dtype())?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::kernels::conv::{conv2d, conv2d_grad, PaddingAlgorithm};
    use crate::exec::kernels::testdata::{seq_d, seq_w, seq_x, Close};

    fn attrs(s: &[i64], p: &[i64], d: &[i64], groups: i64, op: &[i64]) -> ConvTransposeAttrs {
        ConvTransposeAttrs {
            conv: ConvAttrs {
                strides: s.to_vec(),
                paddings: p.to_vec(),
                dilations: d.to_vec(),
                groups,
                padding_algorithm: PaddingAlgorithm::Explicit,
                channels_last: false,
            },
            output_padding: op.to_vec(),
            output_size: vec![],
        }
    }

    fn dot(a: &Tensor, b: &Tensor) -> f64 {
        a.to_f64_vec()
            .iter()
            .zip(b.to_f64_vec())
            .map(|(p, q)| p * q)
            .sum()
    }

    /// `<conv2d_transpose(x, W), y> = <x, conv2d(y, W)>`: the transposed convolution is the
    /// adjoint of the convolution with the same attributes, and its grads are that
    /// convolution's forward and filter gradient.
    #[test]
    fn is_the_adjoint_of_the_convolution() {
        for (xs, ws, at) in [
            (
                [2, 4, 3, 4],
                [4, 3, 3, 3],
                attrs(&[2, 1], &[1, 0, 2, 1], &[1, 2], 1, &[1, 0]),
            ),
            (
                [1, 6, 4, 3],
                [6, 1, 2, 3],
                attrs(&[3, 2], &[0, 1], &[1, 1], 3, &[]),
            ),
            (
                [1, 4, 5, 5],
                [4, 1, 3, 3],
                attrs(&[1, 1], &[1, 1], &[1, 1], 4, &[]),
            ),
        ] {
            let f64s =
                |shape: &[usize], v: Vec<f64>| Tensor::new(shape.to_vec(), Data::F64(v)).unwrap();
            let x = f64s(&xs, seq_x(crate::exec::tensor::numel(&xs)));
            let w = f64s(&ws, seq_w(crate::exec::tensor::numel(&ws)));
            let out = conv2d_transpose(&x, &w, &at).unwrap();
            let y = f64s(out.shape(), seq_d(out.numel()));
            let back = conv2d(&y, &w, &at.conv).unwrap();
            assert_eq!(back.shape(), x.shape());
            let (lhs, rhs) = (dot(&out, &y), dot(&x, &back));
            assert!(
                (lhs - rhs).abs() <= 1e-10 * lhs.abs().max(1.0),
                "{lhs} vs {rhs}"
            );
            let (dx, dw) = conv2d_transpose_grad(&x, &w, &y, &at).unwrap();
            Close::new(1e-12).all("x_grad", &dx.to_f64_vec(), &back.to_f64_vec());
            // The conv's filter gradient with input y and output gradient x.
            let (_, cw) = conv2d_grad(&y, &w, &x, &at.conv, false).unwrap();
            Close::new(1e-12).all("filter_grad", &dw.to_f64_vec(), &cw.to_f64_vec());
        }
    }

    #[test]
    fn output_size_and_padding_are_checked() {
        let x = Tensor::f32(&[1, 2, 3, 3], seq_x(18));
        let w = Tensor::f32(&[2, 3, 3, 3], seq_w(54));
        let mut at = attrs(&[2, 2], &[0, 0], &[1, 1], 1, &[]);
        assert_eq!(conv2d_transpose(&x, &w, &at).unwrap().shape(), [1, 3, 7, 7]);
        at.output_size = vec![8, 7];
        assert_eq!(conv2d_transpose(&x, &w, &at).unwrap().shape(), [1, 3, 8, 7]);
        at.output_size = vec![9, 9];
        assert!(conv2d_transpose(&x, &w, &at).is_err());
        at.output_size = vec![];
        at.output_padding = vec![2, 2];
        assert!(conv2d_transpose(&x, &w, &at).is_err());
        // Below max(stride, dilation) but past the stride: no convolution gives back 3.
        let at = attrs(&[1, 1], &[0, 0], &[3, 3], 1, &[2, 2]);
        assert!(conv2d_transpose(&x, &w, &at).is_err());
    }
}
