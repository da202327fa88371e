//! Shape and constant ops: `full`, `full_like`, `full_int_array`, `full_with_tensor`,
//! `assign_value`, `arange`, `shape`/`shape64`, `numel`, `reshape`, `squeeze`, `unsqueeze`, `transpose`,
//! `slice`, `slice_grad`, `set_value_with_tensor_`.
//!
//! `squeeze` drops the listed axes that have size 1 (every size-1 axis when none are listed) and
//! ignores listed axes of another size, as Paddle does; `unsqueeze` inserts its axes one after the
//! other, each counted in the shape grown so far. Their grads are reshapes back to `x`'s shape.
//! `slice_grad` is `out_grad` written into zeros at the slice, whose offsets come from slicing
//! the input's element numbers with the same arguments.
//!
//! `reshape` follows Paddle: `0` copies the input's dimension at that position and one `-1` is
//! inferred. `set_value_with_tensor_` writes `values` (broadcast) into the slice of `x` given by
//! `starts/ends/steps` on `axes`; with no axes it overwrites the whole tensor, which is how
//! gradient merge zeroes its buffers.

use crate::exec::dtype::DType;
use crate::exec::error::KResult;
use crate::exec::kernels::broadcast::expand;
use crate::exec::kernels::cast::cast;
use crate::exec::tensor::{numel, Data, Tensor};
use crate::kbail;

/// Converts Paddle's i64 dims (no `-1` allowed) to sizes.
pub fn dims(shape: &[i64]) -> KResult<Vec<usize>> {
    shape
        .iter()
        .map(|&d| {
            usize::try_from(d).map_err(|_| {
                crate::exec::KernelError::new(format!("negative dimension {d} in shape {shape:?}"))
            })
        })
        .collect()
}

/// `pd_op.full(shape, value, dtype)`.
pub fn full(shape: &[i64], value: f64, dtype: DType) -> KResult<Tensor> {
    Tensor::try_full(&dims(shape)?, dtype, value)
}

/// `pd_op.full_like(x, value, dtype)`: `dtype` `None` (Paddle's `Undefined`) keeps `x`'s.
pub fn full_like(x: &Tensor, value: f64, dtype: Option<DType>) -> Tensor {
    Tensor::full(x.shape(), dtype.unwrap_or(x.dtype()), value)
}

/// `pd_op.assign_value(_)`: the constant the op's `shape` and `values` attributes spell out
/// (`paddle.to_tensor` of an array in a static program), `values` already in the op's dtype.
pub fn assign_value(shape: &[i64], values: Data) -> KResult<Tensor> {
    let dims = dims(shape)?;
    let n: usize = dims.iter().product();
    if values.len() != n {
        kbail!(
            "assign_value: {} values for shape {:?} ({} elements)",
            values.len(),
            shape,
            n
        );
    }
    Tensor::new(dims, values)
}

/// `pd_op.full_int_array(value, dtype)`: a 1-D tensor holding the list.
pub fn full_int_array(values: &[i64], dtype: DType) -> Tensor {
    cast(&Tensor::i64(&[values.len()], values.to_vec()), dtype)
}

/// The shape `reshape` produces for `x_shape` and the requested `shape`.
fn reshape_shape(x_shape: &[usize], shape: &[i64]) -> KResult<Vec<usize>> {
    let mut out = Vec::with_capacity(shape.len());
    let mut infer = None;
    for (i, &d) in shape.iter().enumerate() {
        match d {
            -1 if infer.is_none() => {
                infer = Some(i);
                out.push(1);
            }
            -1 => kbail!("reshape: more than one -1 in {:?}", shape),
            0 => match x_shape.get(i) {
                Some(&s) => out.push(s),
                None => kbail!(
                    "reshape: 0 at position {} but the input has rank {}",
                    i,
                    x_shape.len()
                ),
            },
            d if d > 0 => out.push(d as usize),
            d => kbail!("reshape: invalid dimension {} in {:?}", d, shape),
        }
    }
    let total = numel(x_shape);
    if let Some(i) = infer {
        let rest = numel(&out);
        if rest == 0 || !total.is_multiple_of(rest) {
            kbail!(
                "reshape: cannot infer -1 in {:?} for {} elements",
                shape,
                total
            );
        }
        out[i] = total / rest;
    }
    if numel(&out) != total {
        kbail!(
            "reshape: {:?} has {} elements, the input {:?} has {}",
            out,
            numel(&out),
            x_shape,
            total
        );
    }
    Ok(out)
}

/// `pd_op.reshape(x, shape)`.
pub fn reshape(x: &Tensor, shape: &[i64]) -> KResult<Tensor> {
    let s = reshape_shape(x.shape(), shape)?;
    x.clone().reshaped(s)
}

fn permute<T: Copy>(v: &[T], shape: &[usize], perm: &[usize]) -> Vec<T> {
    let rank = shape.len();
    let mut in_strides = vec![1usize; rank];
    for d in (0..rank.saturating_sub(1)).rev() {
        in_strides[d] = in_strides[d + 1] * shape[d + 1];
    }
    let out_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
    let strides: Vec<usize> = perm.iter().map(|&p| in_strides[p]).collect();
    let n = v.len();
    let mut out = Vec::with_capacity(n);
    if n == 0 {
        return out;
    }
    let mut idx = vec![0usize; rank];
    let mut off = 0usize;
    for _ in 0..n {
        out.push(v[off]);
        let mut d = rank;
        while d > 0 {
            d -= 1;
            idx[d] += 1;
            off += strides[d];
            if idx[d] < out_shape[d] {
                break;
            }
            off -= strides[d] * out_shape[d];
            idx[d] = 0;
        }
    }
    out
}

/// `pd_op.transpose(x, perm)` (negative entries count from the end).
pub fn transpose(x: &Tensor, perm: &[i64]) -> KResult<Tensor> {
    let rank = x.shape().len();
    if perm.len() != rank {
        kbail!(
            "transpose: perm {:?} has {} entries for a tensor of rank {}",
            perm,
            perm.len(),
            rank
        );
    }
    let mut seen = vec![false; rank];
    let mut p = Vec::with_capacity(rank);
    for &a in perm {
        let r = rank as i64;
        if a < -r || a >= r || seen[a.rem_euclid(r) as usize] {
            kbail!("transpose: {:?} is not a permutation of 0..{}", perm, rank);
        }
        seen[a.rem_euclid(r) as usize] = true;
        p.push(a.rem_euclid(r) as usize);
    }
    let s = x.shape();
    let out_shape: Vec<usize> = p.iter().map(|&i| s[i]).collect();
    let data = match x.data() {
        Data::F32(v) => Data::F32(permute(v, s, &p)),
        Data::BF16(v) => Data::BF16(permute(v, s, &p)),
        Data::F16(v) => Data::F16(permute(v, s, &p)),
        Data::F64(v) => Data::F64(permute(v, s, &p)),
        Data::I64(v) => Data::I64(permute(v, s, &p)),
        Data::I32(v) => Data::I32(permute(v, s, &p)),
        Data::Bool(v) => Data::Bool(permute(v, s, &p)),
        Data::U8(v) => Data::U8(permute(v, s, &p)),
    };
    Tensor::new(out_shape, data)
}

/// `pd_op.slice(x, starts, ends) {axes, decrease_axis}`: rows `starts[k]..ends[k]` of axis
/// `axes[k]` (negative positions count from the end, clamped to the axis as Paddle does); the
/// axes in `decrease_axis` (of size 1 after slicing) are dropped from the result's shape.
pub fn slice(
    x: &Tensor,
    axes: &[i64],
    starts: &[i64],
    ends: &[i64],
    decrease: &[i64],
) -> KResult<Tensor> {
    let shape = x.shape().to_vec();
    let rank = shape.len();
    if starts.len() != axes.len() || ends.len() != axes.len() {
        kbail!(
            "slice: {} axes but {} starts and {} ends",
            axes.len(),
            starts.len(),
            ends.len()
        );
    }
    let mut region: Vec<(usize, usize)> = shape.iter().map(|&d| (0, d)).collect();
    let r = rank as i64;
    for (k, &a) in axes.iter().enumerate() {
        if a < -r || a >= r {
            kbail!("slice: axis {} out of range for rank {}", a, rank);
        }
        let ax = a.rem_euclid(r) as usize;
        let dim = shape[ax] as i64;
        let norm = |v: i64| (if v < 0 { v + dim } else { v }).clamp(0, dim);
        let (s, e) = (norm(starts[k]), norm(ends[k]));
        region[ax] = (s as usize, (e - s).max(0) as usize);
    }
    let mut out_shape = Vec::with_capacity(rank);
    for (d, &(_, n)) in region.iter().enumerate() {
        let dropped = decrease
            .iter()
            .any(|&a| a.rem_euclid(r.max(1)) as usize == d);
        if dropped && n != 1 {
            kbail!("slice: decreased axis {} has {} elements, not 1", d, n);
        }
        if !dropped {
            out_shape.push(n);
        }
    }
    let mut strides = vec![1usize; rank];
    for d in (0..rank.saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    let count = numel(&region.iter().map(|r| r.1).collect::<Vec<_>>());
    let mut offsets = Vec::with_capacity(count);
    let mut idx = vec![0usize; rank];
    for _ in 0..count {
        offsets.push(
            (0..rank)
                .map(|d| (region[d].0 + idx[d]) * strides[d])
                .sum::<usize>(),
        );
        let mut d = rank;
        while d > 0 {
            d -= 1;
            idx[d] += 1;
            if idx[d] < region[d].1 {
                break;
            }
            idx[d] = 0;
        }
    }
    fn pick<T: Copy>(v: &[T], offsets: &[usize]) -> Vec<T> {
        offsets.iter().map(|&o| v[o]).collect()
    }
    let data = match x.data() {
        Data::F32(v) => Data::F32(pick(v, &offsets)),
        Data::BF16(v) => Data::BF16(pick(v, &offsets)),
        Data::F16(v) => Data::F16(pick(v, &offsets)),
        Data::F64(v) => Data::F64(pick(v, &offsets)),
        Data::I64(v) => Data::I64(pick(v, &offsets)),
        Data::I32(v) => Data::I32(pick(v, &offsets)),
        Data::Bool(v) => Data::Bool(pick(v, &offsets)),
        Data::U8(v) => Data::U8(pick(v, &offsets)),
    };
    Tensor::new(out_shape, data)
}

/// Slice description of `set_value_with_tensor_`.
#[derive(Clone, Debug, Default)]
pub struct SliceSpec {
    pub axes: Vec<i64>,
    pub starts: Vec<i64>,
    pub ends: Vec<i64>,
    pub steps: Vec<i64>,
}

/// `set_value_with_tensor_(x, values, starts, ends, steps)`: returns `x` with the slice replaced by
/// `values` (broadcast to the slice, cast to `x`'s dtype).
pub fn set_value_with_tensor(x: &Tensor, values: &Tensor, spec: &SliceSpec) -> KResult<Tensor> {
    let shape = x.shape().to_vec();
    let rank = shape.len();
    // Paddle's kernel is instantiated for ranks 1 to 6 only.
    if !(1..=6).contains(&rank) {
        kbail!("set_value: `x` has rank {rank}; Paddle's kernel takes ranks 1 to 6");
    }
    // Per dimension: (start, step, count).
    let mut region: Vec<(i64, i64, usize)> = shape.iter().map(|&d| (0, 1, d)).collect();
    if spec.starts.len() != spec.axes.len() || spec.ends.len() != spec.axes.len() {
        kbail!(
            "set_value: {} axes but {} starts and {} ends",
            spec.axes.len(),
            spec.starts.len(),
            spec.ends.len()
        );
    }
    for (k, &a) in spec.axes.iter().enumerate() {
        let r = rank as i64;
        if a < -r || a >= r {
            kbail!("set_value: axis {} out of range for rank {}", a, rank);
        }
        let ax = a.rem_euclid(r) as usize;
        let dim = shape[ax] as i64;
        let step = spec.steps.get(k).copied().unwrap_or(1);
        if step == 0 {
            kbail!("set_value: step 0 on axis {}", a);
        }
        let norm = |v: i64, lo: i64, hi: i64| {
            let v = if v < 0 { v + dim } else { v };
            v.clamp(lo, hi)
        };
        let (start, end) = if step > 0 {
            (norm(spec.starts[k], 0, dim), norm(spec.ends[k], 0, dim))
        } else {
            (
                norm(spec.starts[k], -1, dim - 1),
                norm(spec.ends[k], -1, dim - 1),
            )
        };
        let count = if step > 0 {
            ((end - start).max(0) + step - 1) / step
        } else {
            ((start - end).max(0) + (-step) - 1) / (-step)
        };
        region[ax] = (start, step, count as usize);
    }
    let rshape: Vec<usize> = region.iter().map(|r| r.2).collect();
    // Values may omit the size-1 (decreased) axes: broadcasting handles both spellings once the
    // size-1 region dims are dropped from the target.
    let squeezed: Vec<usize> = rshape.iter().copied().filter(|&d| d != 1).collect();
    let v = cast(values, x.dtype());
    let vshape: Vec<usize> = v.shape().iter().copied().filter(|&d| d != 1).collect();
    let fill = |out: &mut Data| -> KResult<()> {
        macro_rules! go {
            ($dst:expr, $src:expr) => {{
                let vals = expand($src, &vshape, &squeezed, -1)?;
                let mut strides = vec![1usize; rank];
                for d in (0..rank.saturating_sub(1)).rev() {
                    strides[d] = strides[d + 1] * shape[d + 1];
                }
                let mut idx = vec![0usize; rank];
                for val in vals {
                    let off: i64 = (0..rank)
                        .map(|d| (region[d].0 + idx[d] as i64 * region[d].1) * strides[d] as i64)
                        .sum();
                    $dst[off as usize] = val;
                    let mut d = rank;
                    while d > 0 {
                        d -= 1;
                        idx[d] += 1;
                        if idx[d] < rshape[d] {
                            break;
                        }
                        idx[d] = 0;
                    }
                }
                Ok(())
            }};
        }
        match (out, v.data()) {
            (Data::F32(d), Data::F32(s)) => go!(d, s),
            (Data::BF16(d), Data::BF16(s)) => go!(d, s),
            (Data::F16(d), Data::F16(s)) => go!(d, s),
            (Data::F64(d), Data::F64(s)) => go!(d, s),
            (Data::I64(d), Data::I64(s)) => go!(d, s),
            (Data::I32(d), Data::I32(s)) => go!(d, s),
            (Data::Bool(d), Data::Bool(s)) => go!(d, s),
            (Data::U8(d), Data::U8(s)) => go!(d, s),
            _ => unreachable!("values were cast to x's dtype"),
        }
    };
    let mut out = x.clone();
    if numel(&rshape) > 0 {
        fill(out.data_mut())?;
    }
    Ok(out)
}

#[cfg(test)]
mod slice_tests {
    use super::*;

    #[test]
    fn slice_takes_rows_and_drops_decreased_axes() {
        let x = Tensor::f32(&[4, 2], (0..8).map(|v| v as f32).collect());
        let s = slice(&x, &[0], &[1], &[3], &[]).unwrap();
        assert_eq!(s.shape(), &[2, 2]);
        assert_eq!(s.to_f64_vec(), vec![2.0, 3.0, 4.0, 5.0]);
        let s = slice(&x, &[1], &[-1], &[2], &[1]).unwrap();
        assert_eq!(s.shape(), &[4]);
        assert_eq!(s.to_f64_vec(), vec![1.0, 3.0, 5.0, 7.0]);
        // Past the end clamps; a wrong decrease is an error.
        assert_eq!(slice(&x, &[0], &[2], &[99], &[]).unwrap().shape(), &[2, 2]);
        assert!(slice(&x, &[0], &[0], &[2], &[0]).is_err());
        assert!(slice(&x, &[5], &[0], &[1], &[]).is_err());
    }
}

/// `pd_op.full_with_tensor(value, shape) {dtype}`: `shape` filled with the one element of
/// `value`.
pub fn full_with_tensor(value: &Tensor, shape: &[i64], dtype: DType) -> KResult<Tensor> {
    if value.numel() != 1 {
        kbail!(
            "full_with_tensor: value must have one element, has shape {:?}",
            value.shape()
        );
    }
    Tensor::try_full(&dims(shape)?, dtype, value.to_f64_vec()[0])
}

/// `pd_op.arange(start, end, step) {dtype}`: `start + i·step` for `i` in `0..ceil((end −
/// start) / step)`, computed in the output dtype's domain (integers exactly).
pub fn arange(start: &Tensor, end: &Tensor, step: &Tensor, dtype: DType) -> KResult<Tensor> {
    let one = |t: &Tensor, what: &str| -> KResult<f64> {
        if t.numel() != 1 {
            kbail!(
                "arange: {} must have one element, has shape {:?}",
                what,
                t.shape()
            );
        }
        Ok(t.to_f64_vec()[0])
    };
    let (a, b, s) = (one(start, "start")?, one(end, "end")?, one(step, "step")?);
    if s == 0.0 || !s.is_finite() || !a.is_finite() || !b.is_finite() {
        kbail!(
            "arange: start {}, end {}, step {} give no finite range",
            a,
            b,
            s
        );
    }
    let n = ((b - a) / s).ceil().max(0.0);
    if n > 1e12 {
        kbail!("arange: {} elements is too many", n);
    }
    let n = n as usize;
    crate::exec::memory::reserve(&"the arange result", &[n], dtype.size())?;
    let data = match dtype {
        DType::I64 | DType::I32 => {
            let (a, s) = (a as i64, s as i64);
            cast(
                &Tensor::i64(&[n], (0..n as i64).map(|i| a + i * s).collect()),
                dtype,
            )
            .into_data()
        }
        DType::F64 => Data::F64((0..n).map(|i| a + i as f64 * s).collect()),
        d if d.is_float() => {
            let (a, s) = (a as f32, s as f32);
            let t = Tensor::f32(&[n], (0..n).map(|i| a + i as f32 * s).collect());
            cast(&t, d).into_data()
        }
        d => kbail!("arange: dtype {} is not supported", d.attr_name()),
    };
    Tensor::new(vec![n], data)
}

/// `pd_op.shape(input)` (int32) and `pd_op.shape64(input)` (int64): the dimensions.
pub fn shape_of(x: &Tensor, dtype: DType) -> Tensor {
    let dims: Vec<i64> = x.shape().iter().map(|&d| d as i64).collect();
    cast(&Tensor::i64(&[dims.len()], dims), dtype)
}

/// `pd_op.numel(x)`: the number of elements, an int64 0-d tensor whatever `x`'s dtype.
pub fn numel_of(x: &Tensor) -> Tensor {
    Tensor::i64(&[], vec![x.numel() as i64])
}

/// The shape `squeeze(axes)` gives `shape`.
fn squeeze_shape(shape: &[usize], axes: &[i64]) -> KResult<Vec<usize>> {
    let r = shape.len() as i64;
    let mut drop = vec![false; shape.len()];
    if axes.is_empty() {
        for (d, &n) in shape.iter().enumerate() {
            drop[d] = n == 1;
        }
    }
    for &a in axes {
        if a < -r || a >= r.max(1) {
            kbail!("squeeze: axis {} out of range for rank {}", a, r);
        }
        if r == 0 {
            continue;
        }
        let d = a.rem_euclid(r) as usize;
        drop[d] = shape[d] == 1;
    }
    Ok(shape
        .iter()
        .zip(&drop)
        .filter(|(_, &dr)| !dr)
        .map(|(&n, _)| n)
        .collect())
}

/// `pd_op.squeeze(x, axis)`.
pub fn squeeze(x: &Tensor, axes: &[i64]) -> KResult<Tensor> {
    let s = squeeze_shape(x.shape(), axes)?;
    x.clone().reshaped(s)
}

/// The shape `unsqueeze(axes)` gives `shape`.
fn unsqueeze_shape(shape: &[usize], axes: &[i64]) -> KResult<Vec<usize>> {
    let mut out = shape.to_vec();
    for &a in axes {
        let r = out.len() as i64;
        let pos = if a < 0 { a + r + 1 } else { a };
        if pos < 0 || pos > r {
            kbail!("unsqueeze: axis {} out of range for rank {}", a, r);
        }
        out.insert(pos as usize, 1);
    }
    Ok(out)
}

/// `pd_op.unsqueeze(x, axis)`.
pub fn unsqueeze(x: &Tensor, axes: &[i64]) -> KResult<Tensor> {
    let s = unsqueeze_shape(x.shape(), axes)?;
    x.clone().reshaped(s)
}

/// `squeeze_grad`/`unsqueeze_grad`/`reshape_grad`: `out_grad` in `x`'s shape.
pub fn reshape_like(dout: &Tensor, x_shape: &[usize]) -> KResult<Tensor> {
    if dout.numel() != numel(x_shape) {
        kbail!(
            "out_grad of shape {:?} cannot take x's shape {:?}",
            dout.shape(),
            x_shape
        );
    }
    dout.clone().reshaped(x_shape.to_vec())
}

/// `pd_op.slice_grad(input, out_grad, starts, ends) {axes, decrease_axis}`: zeros shaped like
/// `input`, with `out_grad` at the slice.
pub fn slice_grad(
    input: &Tensor,
    dout: &Tensor,
    axes: &[i64],
    starts: &[i64],
    ends: &[i64],
    decrease: &[i64],
) -> KResult<Tensor> {
    let n = input.numel();
    let ids = Tensor::i64(input.shape(), (0..n as i64).collect());
    let offsets = slice(&ids, axes, starts, ends, decrease)?;
    if offsets.numel() != dout.numel() {
        kbail!(
            "slice_grad: out_grad has shape {:?}, the slice {:?}",
            dout.shape(),
            offsets.shape()
        );
    }
    let mut idx = vec![crate::exec::kernels::pick::ZERO; n];
    for (k, &o) in offsets.to_i64_vec().iter().enumerate() {
        idx[o as usize] = k;
    }
    let dt = if dout.dtype() == input.dtype() {
        dout.clone()
    } else {
        cast(dout, input.dtype())
    };
    Tensor::new(
        input.shape().to_vec(),
        crate::exec::kernels::pick::pick(dt.data(), &idx),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reshape_rules() {
        assert_eq!(reshape_shape(&[2, 3, 4], &[0, -1]).unwrap(), vec![2, 12]);
        assert_eq!(
            reshape_shape(&[2, 3, 4], &[4, 0, 2]).unwrap(),
            vec![4, 3, 2]
        );
        assert!(reshape_shape(&[2, 3], &[-1, -1]).is_err());
        assert!(reshape_shape(&[2, 3], &[4, -1]).is_err());
        assert!(reshape_shape(&[6], &[]).is_err());
        assert_eq!(reshape_shape(&[1], &[]).unwrap(), Vec::<usize>::new());
    }

    #[test]
    fn transpose_matches_index_formula() {
        let shape = [2usize, 3, 5];
        let x = Tensor::f32(&shape, (0..30).map(|v| v as f32).collect());
        let t = transpose(&x, &[2, 0, 1]).unwrap();
        assert_eq!(t.shape(), &[5, 2, 3]);
        let v = t.as_f32().unwrap();
        for a in 0..5 {
            for b in 0..2 {
                for c in 0..3 {
                    assert_eq!(v[a * 6 + b * 3 + c], (b * 15 + c * 5 + a) as f32);
                }
            }
        }
        assert!(transpose(&x, &[0, 0, 1]).is_err());
    }

    #[test]
    fn set_value_whole_and_slices() {
        let x = Tensor::f32(&[2, 3], vec![1.0; 6]);
        let z = set_value_with_tensor(&x, &Tensor::f32(&[1], vec![0.0]), &SliceSpec::default())
            .unwrap();
        assert_eq!(z.as_f32().unwrap(), &[0.0; 6]);
        let spec = SliceSpec {
            axes: vec![1],
            starts: vec![1],
            ends: vec![3],
            steps: vec![1],
        };
        let s = set_value_with_tensor(&x, &Tensor::f32(&[2, 2], vec![5.0, 6.0, 7.0, 8.0]), &spec)
            .unwrap();
        assert_eq!(s.as_f32().unwrap(), &[1.0, 5.0, 6.0, 1.0, 7.0, 8.0]);
        let spec = SliceSpec {
            axes: vec![0, 1],
            starts: vec![-1, 2],
            ends: vec![2, -4],
            steps: vec![1, -2],
        };
        let s = set_value_with_tensor(&x, &Tensor::f32(&[], vec![9.0]), &spec).unwrap();
        assert_eq!(s.as_f32().unwrap(), &[1.0, 1.0, 1.0, 9.0, 1.0, 9.0]);
        let i = set_value_with_tensor(
            &Tensor::i64(&[2], vec![3, 4]),
            &Tensor::f32(&[1], vec![0.0]),
            &SliceSpec::default(),
        )
        .unwrap();
        assert_eq!(i.to_i64_vec(), vec![0, 0]);
    }

    #[test]
    fn constants() {
        assert_eq!(
            full(&[2], 0.5, DType::F32).unwrap().as_f32().unwrap(),
            &[0.5, 0.5]
        );
        assert!(full(&[-1], 0.5, DType::F32).is_err());
        let x = Tensor::f32(&[3], vec![0.0; 3]);
        assert_eq!(full_like(&x, 1.0, Some(DType::BF16)).dtype(), DType::BF16);
        assert_eq!(
            full_int_array(&[8, 16], DType::I64).to_i64_vec(),
            vec![8, 16]
        );
    }

    #[test]
    fn squeeze_unsqueeze_follow_paddle() {
        assert_eq!(squeeze_shape(&[1, 3, 1, 2], &[]).unwrap(), vec![3, 2]);
        assert_eq!(squeeze_shape(&[1, 3, 1, 2], &[-2]).unwrap(), vec![1, 3, 2]);
        // a listed axis of another size stays
        assert_eq!(squeeze_shape(&[1, 3], &[1]).unwrap(), vec![1, 3]);
        assert!(squeeze_shape(&[1, 3], &[2]).is_err());
        assert_eq!(
            unsqueeze_shape(&[3, 2], &[0, -1]).unwrap(),
            vec![1, 3, 2, 1]
        );
        assert_eq!(unsqueeze_shape(&[3], &[1, 1]).unwrap(), vec![3, 1, 1]);
        assert!(unsqueeze_shape(&[3], &[3]).is_err());
        let x = Tensor::f32(&[2, 1, 3], (0..6).map(|v| v as f32).collect());
        let s = squeeze(&x, &[1]).unwrap();
        assert_eq!(s.shape(), &[2, 3]);
        assert_eq!(reshape_like(&s, x.shape()).unwrap(), x);
    }

    #[test]
    fn slice_grad_scatters_into_zeros() {
        let x = Tensor::f32(&[3, 4], vec![0.0; 12]);
        let g = Tensor::f32(&[2], vec![5.0, 6.0]);
        // rows 1..3 of column 2, the column axis decreased
        let d = slice_grad(&x, &g, &[0, 1], &[1, 2], &[3, 3], &[1]).unwrap();
        let mut want = vec![0.0f32; 12];
        want[6] = 5.0;
        want[10] = 6.0;
        assert_eq!(d.as_f32().unwrap(), want.as_slice());
        assert!(slice_grad(&x, &Tensor::f32(&[3], vec![0.0; 3]), &[0], &[1], &[3], &[]).is_err());
    }

    #[test]
    fn arange_shape_and_full_with_tensor() {
        let f = |v: f64| Tensor::full(&[1], DType::F64, v);
        let a = arange(&f(0.0), &f(5.0), &f(2.0), DType::I64).unwrap();
        assert_eq!(a.to_i64_vec(), vec![0, 2, 4]);
        let a = arange(&f(1.0), &f(0.0), &f(-0.25), DType::F32).unwrap();
        assert_eq!(a.to_f64_vec(), vec![1.0, 0.75, 0.5, 0.25]);
        assert!(arange(&f(0.0), &f(1.0), &f(0.0), DType::F32).is_err());
        let s = shape_of(&Tensor::f32(&[2, 3], vec![0.0; 6]), DType::I32);
        assert_eq!((s.dtype(), s.to_i64_vec()), (DType::I32, vec![2, 3]));
        let t = full_with_tensor(&Tensor::f32(&[1], vec![1.5]), &[2, 2], DType::BF16).unwrap();
        assert_eq!(t.to_f64_vec(), vec![1.5; 4]);
    }
}
