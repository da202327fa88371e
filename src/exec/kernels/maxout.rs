//! `maxout` and `maxout_grad` (`nn.Maxout`): the maximum over consecutive groups of channels.
//!
//! Semantics (Paddle's `MaxOutInferMeta` and CPU functors): `x` is 4-D, `axis` 1 (NCHW) or
//! −1/3 (NHWC) names the channel axis, whose size `C` must be a multiple of `groups`; output
//! channel `c` is the maximum of input channels `c·groups .. (c+1)·groups` (so the output has
//! `C/groups` channels). The gradient goes to the first channel of the group (in channel
//! order) equal to the output, not to every tied one.
//!
//! The channel axis splits the tensor into `outer × C × inner` (inner = H·W for NCHW, 1 for
//! NHWC), so both layouts are one loop over that view.

use crate::exec::error::KResult;
use crate::exec::tensor::Tensor;
use crate::kbail;

/// `groups` and the channel `axis` of a `maxout`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaxoutAttrs {
    pub groups: i64,
    pub axis: i64,
}

/// `(outer, C, inner, groups)` of `x` under `at`.
fn view(x: &[usize], at: &MaxoutAttrs) -> KResult<(usize, usize, usize, usize)> {
    if x.len() != 4 {
        kbail!("maxout needs a 4-D input, got {:?}", x);
    }
    let axis = match at.axis {
        1 => 1,
        -1 | 3 => 3,
        other => kbail!(
            "maxout: axis must be 1 (NCHW) or -1/3 (NHWC), got {}",
            other
        ),
    };
    let c = x[axis];
    if at.groups < 1 || !c.is_multiple_of(at.groups as usize) {
        kbail!(
            "maxout: groups = {} must be positive and divide the {} channels",
            at.groups,
            c
        );
    }
    let outer: usize = x[..axis].iter().product();
    let inner: usize = x[axis + 1..].iter().product();
    Ok((outer, c, inner, at.groups as usize))
}

fn float_input(x: &Tensor) -> KResult<()> {
    if !x.dtype().is_float() {
        kbail!(
            "maxout computes float tensors, got {}",
            x.dtype().attr_name()
        );
    }
    Ok(())
}

fn out_shape(x: &[usize], at: &MaxoutAttrs, groups: usize) -> Vec<usize> {
    let mut s = x.to_vec();
    let axis = if at.axis == 1 { 1 } else { 3 };
    s[axis] /= groups;
    s
}

/// `maxout(x)`.
pub fn maxout(x: &Tensor, at: &MaxoutAttrs) -> KResult<Tensor> {
    float_input(x)?;
    let (outer, c, inner, g) = view(x.shape(), at)?;
    let xs = x.to_f32();
    let oc = c / g;
    let mut out = vec![0.0f32; outer * oc * inner];
    for o in 0..outer {
        for ch in 0..oc {
            for i in 0..inner {
                let mut m = -f32::MAX;
                for k in 0..g {
                    m = m.max(xs[(o * c + ch * g + k) * inner + i]);
                }
                out[(o * oc + ch) * inner + i] = m;
            }
        }
    }
    Tensor::from_f32_as(&out_shape(x.shape(), at, g), out, x.dtype())
}

/// `maxout_grad(x, out, out_grad)`: each `out_grad` element to the first input channel of its
/// group equal to `out`.
pub fn maxout_grad(
    x: &Tensor,
    out: &Tensor,
    out_grad: &Tensor,
    at: &MaxoutAttrs,
) -> KResult<Tensor> {
    float_input(x)?;
    let (outer, c, inner, g) = view(x.shape(), at)?;
    let want = out_shape(x.shape(), at, g);
    if out.shape() != want || out_grad.shape() != want {
        kbail!(
            "out and out_grad have shapes {:?} and {:?}, maxout's output is {:?}",
            out.shape(),
            out_grad.shape(),
            want
        );
    }
    let (xs, os, dy) = (x.to_f32(), out.to_f32(), out_grad.to_f32());
    let oc = c / g;
    let mut dx = vec![0.0f32; xs.len()];
    for o in 0..outer {
        for ch in 0..oc {
            for i in 0..inner {
                let at_out = (o * oc + ch) * inner + i;
                if let Some(k) =
                    (0..g).find(|&k| xs[(o * c + ch * g + k) * inner + i] == os[at_out])
                {
                    dx[(o * c + ch * g + k) * inner + i] += dy[at_out];
                }
            }
        }
    }
    Tensor::from_f32_as(x.shape(), dx, x.dtype())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_of_channels_in_both_layouts() {
        // One sample, 4 channels of 1×2, groups 2: channel pairs (0, 1) and (2, 3).
        let x = Tensor::f32(&[1, 4, 1, 2], vec![1., 5., 3., 5., -1., 0., -2., 0.]);
        let at = MaxoutAttrs { groups: 2, axis: 1 };
        let out = maxout(&x, &at).unwrap();
        assert_eq!(out.shape(), [1, 2, 1, 2]);
        assert_eq!(*out.to_f32(), [3., 5., -1., 0.]);
        let dy = Tensor::f32(&[1, 2, 1, 2], vec![1., 2., 3., 4.]);
        // Ties (5, 5) and (0, 0): the first channel of the pair takes the gradient.
        let dx = maxout_grad(&x, &out, &dy, &at).unwrap();
        assert_eq!(*dx.to_f32(), [0., 2., 1., 0., 3., 4., 0., 0.]);
        let xl = crate::exec::kernels::shape::transpose(&x, &[0, 2, 3, 1]).unwrap();
        let last = MaxoutAttrs {
            groups: 2,
            axis: -1,
        };
        let ol = maxout(&xl, &last).unwrap();
        assert_eq!(
            crate::exec::kernels::shape::transpose(&ol, &[0, 3, 1, 2]).unwrap(),
            out
        );
    }
}
