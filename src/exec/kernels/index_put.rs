//! `index_put(x, indices, value) {accumulate}` and its grad: `x[indices] = value` (or `+=`),
//! with NumPy's advanced indexing by a list of index tensors, as Paddle 3.3.1 runs it.
//!
//! Semantics (Paddle's `IndexPutKernel`, recorded in
//! `tests/exec_fixtures/paddle_volume_interp_index_kernels.json`): `k` integer index tensors
//! broadcast to a common shape `B` and name, for each element of `B`, one position of `x`'s
//! first `k` dimensions (negative indices count from the end); one bool tensor instead names
//! the positions where it is true, in row-major order (its shape is a prefix of `x`'s). The
//! indexed part has shape `B + x.shape[k..]`, and `value` broadcasts to it (aligned on the
//! right). Without `accumulate` the writes happen in index order, so a position named twice keeps
//! the last value; with it every value is added. The grad: `x_grad` is `out_grad` with the
//! written positions zeroed unless `accumulate`; `value_grad` reads `out_grad` at every indexed
//! position (a repeated position gives each of its values the gradient, even overwritten ones,
//! as Paddle does) and sums it down to `value`'s shape.
//!
//! The forward computes in f64 and rounds once to `x`'s dtype (exact for every float and for
//! integers below 2⁵³); the grad computes in f32, as the other scatters' grads.

use crate::exec::dtype::DType;
use crate::exec::error::KResult;
use crate::exec::kernels::broadcast::{broadcast_shape, expand, reduce_to_shape};
use crate::exec::tensor::{numel, Data, Tensor};
use crate::kbail;

/// The offsets into `x` of the indexed part, row-major over its shape `B + x.shape[k..]`.
struct Indexed {
    offsets: Vec<usize>,
    shape: Vec<usize>,
}

/// Per indexed element of `B`, the index into each of `x`'s first `k` dimensions.
fn coordinates(x: &[usize], indices: &[&Tensor], op: &str) -> KResult<(Vec<Vec<i64>>, Vec<usize>)> {
    if indices.is_empty() {
        kbail!("{}: indices is empty", op);
    }
    if indices.iter().any(|t| t.dtype() == DType::Bool) {
        let [mask] = indices else {
            kbail!(
                "{}: a bool index must be the only index, got {} indices",
                op,
                indices.len()
            );
        };
        let m = mask.shape();
        if m.len() > x.len() || m != &x[..m.len()] {
            kbail!(
                "{}: the bool index {:?} is not a prefix of x's shape {:?}",
                op,
                m,
                x
            );
        }
        let bits = mask.to_i64_vec();
        let mut coords = vec![Vec::new(); m.len()];
        for (e, _) in bits.iter().enumerate().filter(|(_, &b)| b != 0) {
            let mut rest = e;
            for d in (0..m.len()).rev() {
                coords[d].push((rest % m[d]) as i64);
                rest /= m[d];
            }
        }
        let n = coords.first().map_or(0, Vec::len);
        return Ok((coords, vec![n]));
    }
    if indices.len() > x.len() {
        kbail!(
            "{}: {} index tensors for x of rank {}",
            op,
            indices.len(),
            x.len()
        );
    }
    for t in indices {
        if !matches!(t.dtype(), DType::I64 | DType::I32) {
            kbail!(
                "{}: indices must be int32, int64 or bool, got {}",
                op,
                t.dtype().attr_name()
            );
        }
    }
    let mut b: Vec<usize> = indices[0].shape().to_vec();
    for t in &indices[1..] {
        b = broadcast_shape(&b, t.shape(), -1)
            .map_err(|e| crate::exec::KernelError::new(format!("{op}: indices: {}", e.message)))?;
    }
    let coords = indices
        .iter()
        .map(|t| expand(&t.to_i64_vec(), t.shape(), &b, -1))
        .collect::<KResult<Vec<_>>>()?;
    Ok((coords, b))
}

fn indexed(x: &[usize], indices: &[&Tensor], op: &str) -> KResult<Indexed> {
    let (coords, b) = coordinates(x, indices, op)?;
    let k = coords.len();
    let rest: usize = x[k..].iter().product();
    let mut shape = b.clone();
    shape.extend_from_slice(&x[k..]);
    crate::exec::memory::reserve(&"the indexed positions", &shape, 8)?;
    let mut offsets = Vec::with_capacity(numel(&shape));
    for e in 0..numel(&b) {
        let mut base = 0usize;
        for (d, c) in coords.iter().enumerate() {
            let (i, n) = (c[e], x[d] as i64);
            if i < -n || i >= n {
                kbail!(
                    "{}: index {} is out of range [{}, {}) for dimension {}",
                    op,
                    i,
                    -n,
                    n,
                    d
                );
            }
            base = base * x[d] + (if i < 0 { i + n } else { i }) as usize;
        }
        offsets.extend((0..rest).map(|r| base * rest + r));
    }
    Ok(Indexed { offsets, shape })
}

fn check_value(x: &Tensor, value: &Tensor, ix: &Indexed, op: &str) -> KResult<()> {
    if value.dtype() != x.dtype() {
        kbail!(
            "{}: value is {}, x is {}",
            op,
            value.dtype().attr_name(),
            x.dtype().attr_name()
        );
    }
    let fits = value.shape().len() <= ix.shape.len()
        && broadcast_shape(value.shape(), &ix.shape, -1).is_ok_and(|b| b == ix.shape);
    if !fits {
        kbail!(
            "{}: value {:?} does not broadcast to the indexed shape {:?}",
            op,
            value.shape(),
            ix.shape
        );
    }
    Ok(())
}

/// `pd_op.index_put(x, indices, value) {accumulate}`.
pub fn index_put(
    x: &Tensor,
    indices: &[&Tensor],
    value: &Tensor,
    accumulate: bool,
) -> KResult<Tensor> {
    let op = "index_put";
    if x.dtype() == DType::Bool {
        kbail!("{}: x is bool, the executor puts numbers", op);
    }
    let ix = indexed(x.shape(), indices, op)?;
    check_value(x, value, &ix, op)?;
    let v = expand(&value.to_f64_vec(), value.shape(), &ix.shape, -1)?;
    let mut out = x.to_f64_vec();
    for (&o, &val) in ix.offsets.iter().zip(&v) {
        if accumulate {
            out[o] += val;
        } else {
            out[o] = val;
        }
    }
    let t = Tensor::new(x.shape().to_vec(), Data::F64(out))?;
    Ok(if x.dtype() == DType::F64 {
        t
    } else {
        crate::exec::kernels::cast::cast(&t, x.dtype())
    })
}

/// `pd_op.index_put_grad(x, indices, value, out_grad) {accumulate}`: `(x_grad, value_grad)`.
pub fn index_put_grad(
    x: &Tensor,
    indices: &[&Tensor],
    value: &Tensor,
    dout: &Tensor,
    accumulate: bool,
) -> KResult<(Tensor, Tensor)> {
    let op = "index_put_grad";
    let ix = indexed(x.shape(), indices, op)?;
    check_value(x, value, &ix, op)?;
    if dout.shape() != x.shape() {
        kbail!(
            "{}: out_grad has shape {:?}, x has {:?}",
            op,
            dout.shape(),
            x.shape()
        );
    }
    let g = dout.to_f32();
    let picked: Vec<f32> = ix.offsets.iter().map(|&o| g[o]).collect();
    let dv = reduce_to_shape(&picked, &ix.shape, value.shape(), -1)?;
    let mut dx = g.into_owned();
    if !accumulate {
        for &o in &ix.offsets {
            dx[o] = 0.0;
        }
    }
    Ok((
        Tensor::from_f32_as(x.shape(), dx, x.dtype())?,
        Tensor::from_f32_as(value.shape(), dv, value.dtype())?,
    ))
}
