//! Binary element-wise ops with broadcasting (`add`, `subtract`, `multiply`, `divide`,
//! `elementwise_pow`, `maximum`, `minimum`), their `_grad` ops (and `add_double_grad`), `scale`,
//! `add_n`, and `axpy`.
//! Where `maximum`'s or `minimum`'s operands tie, Paddle splits the gradient, half to each.
//!
//! Dtypes: f32 computes in f32; bf16/f16 are widened to f32, computed, and rounded once at the
//! end (Paddle's CPU kernels compute 16-bit floats through `float` the same way); f64 computes in
//! f64; integers in i64 (division truncates; division by zero gives 0 rather than trapping).
//! Mixed dtypes promote to the wider float (Paddle 3's type promotion for floats).
//!
//! Gradients of broadcasting ops are summed back to each operand's shape with
//! [`reduce_to_shape`]; the `axis` attribute is the legacy alignment (-1 in PIR programs).

use crate::exec::dtype::DType;
use crate::exec::error::KResult;
use crate::exec::kernels::broadcast::{binary_map, reduce_to_shape};
use crate::exec::kernels::cast::cast;
use crate::exec::simd::dispatch;
use crate::exec::tensor::{Data, Tensor};
use crate::kbail;

/// A binary element-wise operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Subtract,
    Multiply,
    Divide,
    Pow,
    Maximum,
    Minimum,
    /// Paddle's `remainder`: the floor modulo (the result has the divisor's sign).
    Remainder,
}

/// The dtype a binary op on `a` and `b` produces.
fn promote(a: DType, b: DType) -> DType {
    use DType::*;
    if a == b {
        return a;
    }
    match (a.is_float(), b.is_float()) {
        (true, false) => a,
        (false, true) => b,
        (false, false) => I64,
        (true, true) if a == F64 || b == F64 => F64,
        (true, true) => F32,
    }
}

fn f32_binary(
    op: BinaryOp,
    a: &[f32],
    sa: &[usize],
    b: &[f32],
    sb: &[usize],
    axis: i64,
) -> KResult<(Vec<usize>, Vec<f32>)> {
    // One monomorphic closure per op so that each inner loop is branch-free and vectorizes.
    match op {
        BinaryOp::Add => binary_map(a, sa, b, sb, axis, |x, y| x + y),
        BinaryOp::Subtract => binary_map(a, sa, b, sb, axis, |x, y| x - y),
        BinaryOp::Multiply => binary_map(a, sa, b, sb, axis, |x, y| x * y),
        BinaryOp::Divide => binary_map(a, sa, b, sb, axis, |x, y| x / y),
        BinaryOp::Pow => binary_map(a, sa, b, sb, axis, |x: f32, y| x.powf(y)),
        BinaryOp::Maximum => binary_map(a, sa, b, sb, axis, |x: f32, y| x.max(y)),
        BinaryOp::Minimum => binary_map(a, sa, b, sb, axis, |x: f32, y| x.min(y)),
        BinaryOp::Remainder => binary_map(a, sa, b, sb, axis, |x: f32, y| x - (x / y).floor() * y),
    }
}

fn f64_op(op: BinaryOp) -> impl Fn(f64, f64) -> f64 + Copy {
    move |x: f64, y: f64| match op {
        BinaryOp::Add => x + y,
        BinaryOp::Subtract => x - y,
        BinaryOp::Multiply => x * y,
        BinaryOp::Divide => x / y,
        BinaryOp::Pow => x.powf(y),
        BinaryOp::Maximum => x.max(y),
        BinaryOp::Minimum => x.min(y),
        BinaryOp::Remainder => x - (x / y).floor() * y,
    }
}

fn i64_op(op: BinaryOp) -> impl Fn(i64, i64) -> i64 + Copy {
    move |x: i64, y: i64| match op {
        BinaryOp::Add => x.wrapping_add(y),
        BinaryOp::Subtract => x.wrapping_sub(y),
        BinaryOp::Multiply => x.wrapping_mul(y),
        BinaryOp::Divide => x.checked_div(y).unwrap_or(0),
        BinaryOp::Pow => {
            if y < 0 {
                0
            } else {
                x.wrapping_pow(y.min(u32::MAX as i64) as u32)
            }
        }
        BinaryOp::Maximum => x.max(y),
        BinaryOp::Minimum => x.min(y),
        BinaryOp::Remainder => match x.checked_rem(y) {
            Some(r) if r != 0 && (r < 0) != (y < 0) => r + y,
            Some(r) => r,
            None => 0,
        },
    }
}

/// `x op y` with Paddle broadcasting.
pub fn binary(op: BinaryOp, x: &Tensor, y: &Tensor, axis: i64) -> KResult<Tensor> {
    let dt = promote(x.dtype(), y.dtype());
    match dt {
        DType::F64 => {
            let (s, v) = binary_map(
                &x.to_f64_vec(),
                x.shape(),
                &y.to_f64_vec(),
                y.shape(),
                axis,
                f64_op(op),
            )?;
            Tensor::new(s, Data::F64(v))
        }
        DType::I64 | DType::I32 | DType::Bool => {
            let (s, v) = binary_map(
                &x.to_i64_vec(),
                x.shape(),
                &y.to_i64_vec(),
                y.shape(),
                axis,
                i64_op(op),
            )?;
            let t = Tensor::new(s, Data::I64(v))?;
            Ok(if dt == DType::I64 { t } else { cast(&t, dt) })
        }
        _ => {
            let (s, v) = f32_binary(op, &x.to_f32(), x.shape(), &y.to_f32(), y.shape(), axis)?;
            Tensor::from_f32_as(&s, v, dt)
        }
    }
}

/// Widens to f32, applies `f` element-wise (vectorized when `f` allows), and rounds back to the
/// input dtype. Integer tensors are computed through f32 as well.
pub fn unary_f32(x: &Tensor, f: impl Fn(f32) -> f32 + Copy) -> KResult<Tensor> {
    let src = x.to_f32();
    let mut out = vec![0.0f32; src.len()];
    dispatch(|| map_loop(&src, &mut out, f));
    let dt = if x.dtype().is_float() {
        x.dtype()
    } else {
        DType::F32
    };
    Tensor::from_f32_as(x.shape(), out, dt)
}

#[inline(always)]
fn map_loop(src: &[f32], out: &mut [f32], f: impl Fn(f32) -> f32) {
    for (o, &x) in out.iter_mut().zip(src) {
        *o = f(x);
    }
}

/// Like [`unary_f32`] for two same-shape operands (e.g. `relu_grad(out, out_grad)`); the result
/// takes the dtype of `a`.
pub fn zip_f32(a: &Tensor, b: &Tensor, f: impl Fn(f32, f32) -> f32 + Copy) -> KResult<Tensor> {
    if a.shape() != b.shape() {
        kbail!(
            "operands must have the same shape, got {:?} and {:?}",
            a.shape(),
            b.shape()
        );
    }
    let (sa, sb) = (a.to_f32(), b.to_f32());
    let mut out = vec![0.0f32; sa.len()];
    dispatch(|| zip_loop(&sa, &sb, &mut out, f));
    let dt = if a.dtype().is_float() {
        a.dtype()
    } else {
        DType::F32
    };
    Tensor::from_f32_as(a.shape(), out, dt)
}

#[inline(always)]
fn zip_loop(a: &[f32], b: &[f32], out: &mut [f32], f: impl Fn(f32, f32) -> f32) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = f(x, y);
    }
}

/// Sums `g` (f32, broadcast shape `g_shape`) back to the shape of `like`, in `like`'s dtype.
fn reduce_like(g: &[f32], g_shape: &[usize], like: &Tensor, axis: i64) -> KResult<Tensor> {
    let v = reduce_to_shape(g, g_shape, like.shape(), axis)?;
    let dt = if like.dtype().is_float() {
        like.dtype()
    } else {
        DType::F32
    };
    Tensor::from_f32_as(like.shape(), v, dt)
}

/// `maximum_grad` / `minimum_grad(x, y, out_grad)`: (dx, dy). The gradient goes to the operand
/// the op chose, half to each where they are equal (Paddle's convention), then is summed over
/// the dims that operand broadcast along.
pub fn extremum_grad(
    x: &Tensor,
    y: &Tensor,
    dout: &Tensor,
    axis: i64,
    maximum: bool,
) -> KResult<(Tensor, Tensor)> {
    let (xf, yf, g) = (x.to_f32(), y.to_f32(), dout.to_f32());
    // The share of the gradient x gets at each element of the broadcast result; y gets the rest.
    let (s, share) = binary_map(&xf, x.shape(), &yf, y.shape(), axis, move |a, b| {
        if a == b {
            0.5
        } else if (a > b) == maximum {
            1.0
        } else {
            0.0f32
        }
    })?;
    let (s, gx) = binary_map(&g, dout.shape(), &share, &s, -1, |g, w| g * w)?;
    let dx = reduce_like(&gx, &s, x, axis)?;
    let (s, gy) = binary_map(&g, dout.shape(), &share, &s, -1, |g, w| g * (1.0 - w))?;
    let dy = reduce_like(&gy, &s, y, axis)?;
    Ok((dx, dy))
}

/// `fmax_grad` (`maximum`) / `fmin_grad`: (dx, dy). Unlike `maximum_grad`, a tie is not split:
/// `x` takes the whole gradient where `x ≥ y` (`x ≤ y` for fmin) or `y` is NaN, `y` the rest
/// (Paddle 3.3.1's convention, recorded in `paddle_loss_index_kernels.json`).
pub fn fextremum_grad(
    x: &Tensor,
    y: &Tensor,
    dout: &Tensor,
    maximum: bool,
) -> KResult<(Tensor, Tensor)> {
    let (xf, yf, g) = (x.to_f32(), y.to_f32(), dout.to_f32());
    let (s, share) = binary_map(&xf, x.shape(), &yf, y.shape(), -1, move |a, b| {
        let x_wins = if maximum { a >= b } else { a <= b };
        if x_wins || b.is_nan() {
            1.0
        } else {
            0.0f32
        }
    })?;
    let (s, gx) = binary_map(&g, dout.shape(), &share, &s, -1, |g, w| g * w)?;
    let dx = reduce_like(&gx, &s, x, -1)?;
    let (s, gy) = binary_map(&g, dout.shape(), &share, &s, -1, |g, w| g * (1.0 - w))?;
    let dy = reduce_like(&gy, &s, y, -1)?;
    Ok((dx, dy))
}

/// `add_grad` / `subtract_grad`: (dx, dy), each summed over the dims its operand broadcast along.
pub fn add_sub_grad(
    x: &Tensor,
    y: &Tensor,
    dout: &Tensor,
    axis: i64,
    subtract: bool,
) -> KResult<(Tensor, Tensor)> {
    let g = dout.to_f32();
    let dx = reduce_like(&g, dout.shape(), x, axis)?;
    let dy = reduce_like(&g, dout.shape(), y, axis)?;
    let dy = if subtract {
        unary_f32(&dy, |v| -v)?
    } else {
        dy
    };
    Ok((dx, dy))
}

/// `add_double_grad(y, grad_out, grad_x_grad, grad_y_grad) {axis}`: `grad_out_grad`, the grad of
/// `add_grad`'s `out_grad` for the grads `ddx`, `ddy` of its results: `ddx + ddy`, broadcast to
/// `grad_out`'s shape (an absent one counts as zero; both absent, there is no result).
pub fn add_double_grad(
    dout: &Tensor,
    ddx: Option<&Tensor>,
    ddy: Option<&Tensor>,
    axis: i64,
) -> KResult<Option<Tensor>> {
    if ddx.is_none() && ddy.is_none() {
        return Ok(None);
    }
    let mut acc = Tensor::try_full(dout.shape(), dout.dtype(), 0.0)?;
    for dd in [ddx, ddy].into_iter().flatten() {
        acc = binary(BinaryOp::Add, &acc, dd, axis)?;
        if acc.shape() != dout.shape() {
            kbail!(
                "add_double_grad: a grad of shape {:?} does not broadcast to out_grad's {:?}",
                dd.shape(),
                dout.shape()
            );
        }
    }
    Ok(Some(acc))
}

/// `multiply_grad`: dx = Σ dout·y, dy = Σ dout·x.
pub fn multiply_grad(
    x: &Tensor,
    y: &Tensor,
    dout: &Tensor,
    axis: i64,
) -> KResult<(Tensor, Tensor)> {
    let (xf, yf, g) = (x.to_f32(), y.to_f32(), dout.to_f32());
    let (s, gy) = binary_map(&g, dout.shape(), &yf, y.shape(), axis, |a, b| a * b)?;
    let dx = reduce_like(&gy, &s, x, axis)?;
    let (s, gx) = binary_map(&g, dout.shape(), &xf, x.shape(), axis, |a, b| a * b)?;
    let dy = reduce_like(&gx, &s, y, axis)?;
    Ok((dx, dy))
}

/// `divide_grad(x, y, out, out_grad)`: dx = Σ dout / y, dy = Σ −dout·out / y.
pub fn divide_grad(
    x: &Tensor,
    y: &Tensor,
    out: &Tensor,
    dout: &Tensor,
    axis: i64,
) -> KResult<(Tensor, Tensor)> {
    let (yf, of, g) = (y.to_f32(), out.to_f32(), dout.to_f32());
    let (s, gx) = binary_map(&g, dout.shape(), &yf, y.shape(), axis, |a, b| a / b)?;
    let dx = reduce_like(&gx, &s, x, axis)?;
    let (s1, go) = binary_map(&g, dout.shape(), &of, out.shape(), -1, |a, b| a * b)?;
    let (s, gy) = binary_map(&go, &s1, &yf, y.shape(), axis, |a, b| -a / b)?;
    let dy = reduce_like(&gy, &s, y, axis)?;
    Ok((dx, dy))
}

/// `elementwise_pow_grad(x, y, out_grad)`: dx = Σ dout·y·x^(y−1), dy = Σ dout·x^y·ln x
/// (Paddle's `ElementwisePowGradDX`/`DY` functors).
pub fn pow_grad(x: &Tensor, y: &Tensor, dout: &Tensor, axis: i64) -> KResult<(Tensor, Tensor)> {
    let (xf, yf, g) = (x.to_f32(), y.to_f32(), dout.to_f32());
    let (s, tx) = binary_map(&xf, x.shape(), &yf, y.shape(), axis, |a: f32, b: f32| {
        b * a.powf(b - 1.0)
    })?;
    let (s, gx) = binary_map(&g, dout.shape(), &tx, &s, -1, |a, b| a * b)?;
    let dx = reduce_like(&gx, &s, x, axis)?;
    let (s, ty) = binary_map(&xf, x.shape(), &yf, y.shape(), axis, |a: f32, b: f32| {
        a.powf(b) * a.ln()
    })?;
    let (s, gy) = binary_map(&g, dout.shape(), &ty, &s, -1, |a, b| a * b)?;
    let dy = reduce_like(&gy, &s, y, axis)?;
    Ok((dx, dy))
}

/// `increment(x) {value}`: `x + value` for a one-element `x` (a step counter), in `x`'s dtype;
/// for an integer `x`, `value` is first truncated to an integer, as Paddle's kernel casts it.
pub fn increment(x: &Tensor, value: f64) -> KResult<Tensor> {
    if x.numel() != 1 {
        kbail!(
            "increment: x must have one element (Paddle's InferMeta), it has shape {:?}",
            x.shape()
        );
    }
    let v = x.to_f64_vec()[0];
    let sum = if x.dtype().is_float() {
        v + value
    } else {
        v + value.trunc()
    };
    Tensor::try_full(x.shape(), x.dtype(), sum)
}

/// `scale`: `x·scale + bias` when `bias_after_scale`, else `(x + bias)·scale`.
pub fn scale(x: &Tensor, scale: f32, bias: f32, bias_after_scale: bool) -> KResult<Tensor> {
    match x.dtype() {
        DType::I64 | DType::I32 => {
            let (s, b) = (scale as f64, bias as f64);
            let v: Vec<f64> = x
                .to_f64_vec()
                .into_iter()
                .map(|v| {
                    if bias_after_scale {
                        v * s + b
                    } else {
                        (v + b) * s
                    }
                })
                .collect();
            Ok(cast(
                &Tensor::new(x.shape().to_vec(), Data::F64(v))?,
                x.dtype(),
            ))
        }
        DType::F64 => {
            let (s, b) = (scale as f64, bias as f64);
            let v: Vec<f64> = x
                .to_f64_vec()
                .into_iter()
                .map(|v| {
                    if bias_after_scale {
                        v * s + b
                    } else {
                        (v + b) * s
                    }
                })
                .collect();
            Tensor::new(x.shape().to_vec(), Data::F64(v))
        }
        _ if bias_after_scale => unary_f32(x, move |v| v * scale + bias),
        _ => unary_f32(x, move |v| (v + bias) * scale),
    }
}

/// `add_n`: the sum of same-shape tensors, accumulated left to right in f32 (f64 for f64).
pub fn add_n(xs: &[&Tensor]) -> KResult<Tensor> {
    let Some(first) = xs.first() else {
        kbail!("add_n needs at least one input");
    };
    let mut acc = (*first).clone();
    for x in &xs[1..] {
        if x.shape() != first.shape() {
            kbail!(
                "add_n inputs must share a shape, got {:?} and {:?}",
                first.shape(),
                x.shape()
            );
        }
    }
    if first.dtype() == DType::F64 {
        for x in &xs[1..] {
            acc = binary(BinaryOp::Add, &acc, x, -1)?;
        }
        return Ok(acc);
    }
    let mut sum = first.to_f32().into_owned();
    for x in &xs[1..] {
        let v = x.to_f32();
        dispatch(|| add_assign_loop(&mut sum, &v));
    }
    let dt = if first.dtype().is_float() {
        first.dtype()
    } else {
        DType::F32
    };
    Tensor::from_f32_as(first.shape(), sum, dt)
}

#[inline(always)]
fn add_assign_loop(acc: &mut [f32], x: &[f32]) {
    for (a, &v) in acc.iter_mut().zip(x) {
        *a += v;
    }
}

#[inline(always)]
fn axpy_loop(alpha: f32, x: &[f32], y: &mut [f32]) {
    for (b, &a) in y.iter_mut().zip(x) {
        *b += alpha * a;
    }
}

/// `y += alpha·x` (no FMA: two roundings, like the fallback), vectorized.
pub fn axpy(alpha: f32, x: &[f32], y: &mut [f32]) {
    assert_eq!(x.len(), y.len(), "axpy: lengths differ");
    dispatch(|| axpy_loop(alpha, x, y));
}

/// Outputs at least this long (f32 elements, 4 MiB) are written with non-temporal stores on
/// AVX-512: they would not fit in cache anyway, and streaming stores skip the read-for-ownership
/// of the destination (a quarter of the memory traffic of an out-of-place add).
const STREAM_MIN: usize = 1 << 20;

/// `out = a + b` over same-length f32 slices, vectorized (the benchmark's streaming add). The
/// results are bitwise those of the fallback: only the kind of store differs.
pub fn add_slices(a: &[f32], b: &[f32], out: &mut [f32]) {
    assert!(
        a.len() == b.len() && b.len() == out.len(),
        "add_slices: lengths differ"
    );
    #[cfg(target_arch = "x86_64")]
    if out.len() >= STREAM_MIN && crate::exec::simd::level() == crate::exec::simd::Level::V4 {
        // SAFETY: the level check guarantees AVX-512F; lengths were checked above.
        unsafe { add_stream_avx512(a, b, out) };
        return;
    }
    dispatch(|| zip_loop(a, b, out, |x, y| x + y));
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn add_stream_avx512(a: &[f32], b: &[f32], out: &mut [f32]) {
    use std::arch::x86_64::{_mm512_add_ps, _mm512_loadu_ps, _mm512_stream_ps, _mm_sfence};
    let n = out.len();
    // Scalar head until the destination is 64-byte aligned (stream stores need it).
    let head = out.as_ptr().align_offset(64).min(n);
    for i in 0..head {
        out[i] = a[i] + b[i];
    }
    let mut i = head;
    while i + 16 <= n {
        // SAFETY: i + 16 <= n for all three slices; out + i is 64-byte aligned.
        unsafe {
            let v = _mm512_add_ps(
                _mm512_loadu_ps(a.as_ptr().add(i)),
                _mm512_loadu_ps(b.as_ptr().add(i)),
            );
            _mm512_stream_ps(out.as_mut_ptr().add(i), v);
        }
        i += 16;
    }
    for j in i..n {
        out[j] = a[j] + b[j];
    }
    _mm_sfence();
}

/// Scalar reference of [`binary`]'s f32 arithmetic, for the tests.
#[cfg(test)]
fn f32_scalar(op: BinaryOp, x: f32, y: f32) -> f32 {
    match op {
        BinaryOp::Add => x + y,
        BinaryOp::Subtract => x - y,
        BinaryOp::Multiply => x * y,
        BinaryOp::Divide => x / y,
        BinaryOp::Pow => x.powf(y),
        BinaryOp::Maximum => x.max(y),
        BinaryOp::Minimum => x.min(y),
        BinaryOp::Remainder => x - (x / y).floor() * y,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::kernels::broadcast::tests::{ravel_broadcast, unravel};
    use crate::exec::rng::Rng;
    use crate::exec::simd::{with_level, Level};
    use crate::exec::tensor::numel;

    fn rand_tensor(rng: &mut Rng, shape: &[usize]) -> Tensor {
        Tensor::f32(
            shape,
            (0..numel(shape)).map(|_| rng.normal() + 0.1).collect(),
        )
    }

    fn bits(t: &Tensor) -> Vec<u64> {
        t.to_f64_vec().iter().map(|v| v.to_bits()).collect()
    }

    const SHAPES: &[(&[usize], &[usize])] = &[
        (&[37], &[37]),
        (&[5, 19], &[19]),
        (&[5, 19], &[5, 1]),
        (&[3, 1, 33], &[4, 1]),
        (&[2, 3, 17], &[]),
        (&[], &[6, 5]),
        (&[1000], &[1000]),
    ];

    #[test]
    fn binary_ops_match_scalar_reference_and_fallback() {
        let mut rng = Rng::new(1);
        for op in [
            BinaryOp::Add,
            BinaryOp::Subtract,
            BinaryOp::Multiply,
            BinaryOp::Divide,
            BinaryOp::Pow,
            BinaryOp::Maximum,
            BinaryOp::Minimum,
            BinaryOp::Remainder,
        ] {
            for &(sa, sb) in SHAPES {
                let a = rand_tensor(&mut rng, sa);
                let b = rand_tensor(&mut rng, sb);
                let got = binary(op, &a, &b, -1).unwrap();
                let fallback = with_level(Level::Scalar, || binary(op, &a, &b, -1).unwrap());
                assert_eq!(bits(&got), bits(&fallback), "{op:?} {sa:?} {sb:?}");
                let (av, bv) = (a.as_f32().unwrap(), b.as_f32().unwrap());
                for (i, &o) in got.as_f32().unwrap().iter().enumerate() {
                    let idx = unravel(i, got.shape());
                    let want = f32_scalar(
                        op,
                        av[ravel_broadcast(&idx, sa)],
                        bv[ravel_broadcast(&idx, sb)],
                    );
                    assert!(
                        o.to_bits() == want.to_bits() || (o.is_nan() && want.is_nan()),
                        "{op:?} {sa:?} {sb:?} {i}"
                    );
                }
            }
        }
    }

    #[test]
    fn random_broadcast_shapes_match_reference() {
        let mut rng = Rng::new(77);
        for _ in 0..200 {
            let rank = rng.below(5);
            let out: Vec<usize> = (0..rank).map(|_| 1 + rng.below(19)).collect();
            // each operand drops some leading dims and sets some dims to 1
            let pick = |rng: &mut Rng| -> Vec<usize> {
                let drop = rng.below(rank + 1);
                out[drop..]
                    .iter()
                    .map(|&d| if rng.below(3) == 0 { 1 } else { d })
                    .collect()
            };
            let (sa, sb) = (pick(&mut rng), pick(&mut rng));
            let a = rand_tensor(&mut rng, &sa);
            let b = rand_tensor(&mut rng, &sb);
            for op in [BinaryOp::Add, BinaryOp::Multiply, BinaryOp::Divide] {
                let got = binary(op, &a, &b, -1).unwrap();
                let fallback = with_level(Level::Scalar, || binary(op, &a, &b, -1).unwrap());
                assert_eq!(bits(&got), bits(&fallback), "{op:?} {sa:?} {sb:?}");
                let (av, bv) = (a.as_f32().unwrap(), b.as_f32().unwrap());
                for (i, &o) in got.as_f32().unwrap().iter().enumerate() {
                    let idx = unravel(i, got.shape());
                    let want = f32_scalar(
                        op,
                        av[ravel_broadcast(&idx, &sa)],
                        bv[ravel_broadcast(&idx, &sb)],
                    );
                    assert_eq!(
                        o.to_bits(),
                        want.to_bits(),
                        "{op:?} {sa:?} {sb:?} at {idx:?}"
                    );
                }
                // the gradient of a broadcasting add sums back to each operand's shape
                let (dx, dy) = add_sub_grad(&a, &b, &got, -1, false).unwrap();
                assert_eq!(dx.shape(), a.shape());
                assert_eq!(dy.shape(), b.shape());
            }
        }
    }

    #[test]
    fn bf16_computes_in_f32_and_rounds_once() {
        let a = cast(&Tensor::f32(&[3], vec![1.0, 0.1, 3.0]), DType::BF16);
        let b = cast(
            &Tensor::f32(&[3], vec![0.00390625, 0.2, 1.0 / 3.0]),
            DType::BF16,
        );
        let got = binary(BinaryOp::Add, &a, &b, -1).unwrap();
        assert_eq!(got.dtype(), DType::BF16);
        let (af, bf) = (a.to_f32(), b.to_f32());
        let want: Vec<f32> = af.iter().zip(bf.iter()).map(|(x, y)| x + y).collect();
        let want = cast(&Tensor::f32(&[3], want), DType::BF16);
        assert_eq!(got, want);
        let mixed = binary(BinaryOp::Multiply, &a, &Tensor::f32(&[3], vec![2.0; 3]), -1).unwrap();
        assert_eq!(mixed.dtype(), DType::F32);
    }

    #[test]
    fn integer_ops_truncate_and_never_trap() {
        let a = Tensor::i64(&[3], vec![7, -7, 1]);
        let b = Tensor::i64(&[3], vec![2, 2, 0]);
        assert_eq!(
            binary(BinaryOp::Divide, &a, &b, -1).unwrap().to_i64_vec(),
            vec![3, -3, 0]
        );
    }

    #[test]
    fn grads_reduce_broadcast_dims() {
        let mut rng = Rng::new(2);
        for &(sa, sb) in SHAPES {
            let x = rand_tensor(&mut rng, sa);
            let y = rand_tensor(&mut rng, sb);
            let out = binary(BinaryOp::Divide, &x, &y, -1).unwrap();
            let g = rand_tensor(&mut rng, out.shape());
            let (xv, yv, gv, ov) = (
                x.as_f32().unwrap(),
                y.as_f32().unwrap(),
                g.as_f32().unwrap(),
                out.as_f32().unwrap(),
            );
            // reference accumulations in f64
            let mut want = [vec![0.0f64; numel(sa)], vec![0.0f64; numel(sb)]];
            let mut want_mul = want.clone();
            let mut want_div = want.clone();
            for i in 0..numel(out.shape()) {
                let idx = unravel(i, out.shape());
                let (ia, ib) = (ravel_broadcast(&idx, sa), ravel_broadcast(&idx, sb));
                want[0][ia] += gv[i] as f64;
                want[1][ib] += gv[i] as f64;
                want_mul[0][ia] += (gv[i] * yv[ib]) as f64;
                want_mul[1][ib] += (gv[i] * xv[ia]) as f64;
                want_div[0][ia] += (gv[i] / yv[ib]) as f64;
                want_div[1][ib] += (-(gv[i] * ov[i]) / yv[ib]) as f64;
            }
            let close = |t: &Tensor, w: &[f64]| {
                let max = w.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                for (a, b) in t.to_f64_vec().iter().zip(w) {
                    assert!(
                        (a - b).abs() <= 1e-5 * b.abs() + 1e-5 * max,
                        "{a} vs {b} ({sa:?} {sb:?})"
                    );
                }
            };
            let (dx, dy) = add_sub_grad(&x, &y, &g, -1, true).unwrap();
            close(&dx, &want[0]);
            close(&dy, &want[1].iter().map(|v| -v).collect::<Vec<_>>());
            let (dx, dy) = multiply_grad(&x, &y, &g, -1).unwrap();
            close(&dx, &want_mul[0]);
            close(&dy, &want_mul[1]);
            let (dx, dy) = divide_grad(&x, &y, &out, &g, -1).unwrap();
            close(&dx, &want_div[0]);
            close(&dy, &want_div[1]);
            let fb = with_level(Level::Scalar, || divide_grad(&x, &y, &out, &g, -1).unwrap());
            assert_eq!(bits(&fb.0), bits(&dx));
            assert_eq!(bits(&fb.1), bits(&dy));
        }
    }

    #[test]
    fn pow_grad_for_square() {
        let x = Tensor::f32(&[2, 3], vec![1.0, -2.0, 0.5, 3.0, -0.25, 4.0]);
        let y = Tensor::f32(&[], vec![2.0]);
        let g = Tensor::f32(&[2, 3], vec![1.0, 1.0, 2.0, 0.5, 1.0, -1.0]);
        let (dx, _) = pow_grad(&x, &y, &g, -1).unwrap();
        assert_eq!(dx.as_f32().unwrap(), &[2.0, -4.0, 2.0, 3.0, -0.5, -8.0]);
    }

    #[test]
    fn streaming_add_matches_fallback() {
        let mut rng = Rng::new(6);
        let n = STREAM_MIN + 37;
        let (a, b) = (rng.normal_vec(n), rng.normal_vec(n));
        // an unaligned destination exercises the scalar head
        let mut o1 = vec![0.0f32; n + 1];
        let mut o2 = vec![0.0f32; n];
        add_slices(&a, &b, &mut o1[1..]);
        with_level(Level::Scalar, || add_slices(&a, &b, &mut o2));
        assert_eq!(&o1[1..], &o2[..]);
        assert_eq!(o2[n - 1], a[n - 1] + b[n - 1]);
    }

    #[test]
    fn scale_add_n_axpy() {
        let x = Tensor::f32(&[3], vec![1.0, 2.0, 3.0]);
        assert_eq!(
            scale(&x, 2.0, 1.0, true).unwrap().as_f32().unwrap(),
            &[3.0, 5.0, 7.0]
        );
        assert_eq!(
            scale(&x, 2.0, 1.0, false).unwrap().as_f32().unwrap(),
            &[4.0, 6.0, 8.0]
        );
        let s = add_n(&[&x, &x, &x]).unwrap();
        assert_eq!(s.as_f32().unwrap(), &[3.0, 6.0, 9.0]);
        let mut rng = Rng::new(4);
        for n in [0, 1, 15, 16, 17, 1031] {
            let a = rng.normal_vec(n);
            let mut y1 = rng.normal_vec(n);
            let mut y2 = y1.clone();
            let want: Vec<f32> = y1.iter().zip(&a).map(|(y, x)| y + 0.3 * x).collect();
            axpy(0.3, &a, &mut y1);
            with_level(Level::Scalar, || axpy(0.3, &a, &mut y2));
            assert_eq!(y1, want);
            assert_eq!(y2, want);
        }
    }
}
