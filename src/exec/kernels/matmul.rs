//! `matmul`, `matmul_grad` and `matmul_double_grad` with Paddle's semantics, on the `gemm` crate.
//!
//! Semantics (Paddle's `matmul_v2`): a 1-D `x` of length K is a `[1, K]` row and a 1-D `y` a
//! `[K, 1]` column, the added dimension is removed from the result (so 1-D·1-D is a 0-d scalar);
//! `transpose_x`/`transpose_y` swap the last two dimensions (ignored for 1-D operands); leading
//! (batch) dimensions broadcast. The gradient reduces over the batch dimensions an operand was
//! broadcast along.
//!
//! Why `gemm`: its f32 microkernels reach ~200 GFLOP/s on one AVX-512 core and it dispatches on
//! the CPU at run time (feature `x86-v4`), so the default release build is fast. Transposes are
//! free: they are just strides. 16-bit operands are widened to f32 and the f32 result rounded
//! once (f32 accumulation, like oneDNN's bf16 GEMM that Paddle uses on CPU).

use gemm::Parallelism;

use crate::exec::dtype::DType;
use crate::exec::error::KResult;
use crate::exec::kernels::broadcast::{broadcast_shape, reduce_to_shape, Plan};
use crate::exec::tensor::{numel, Data, Tensor};
use crate::kbail;

/// A strided matrix view into a buffer: element (i, j) is at `off + i·rs + j·cs`.
#[derive(Clone, Copy, Debug)]
pub struct MatRef<'a, T> {
    pub data: &'a [T],
    pub off: usize,
    pub rows: usize,
    pub cols: usize,
    pub rs: usize,
    pub cs: usize,
}

impl<'a, T> MatRef<'a, T> {
    fn check(&self) -> bool {
        self.rows == 0
            || self.cols == 0
            || self.off + (self.rows - 1) * self.rs + (self.cols - 1) * self.cs < self.data.len()
    }
}

/// `dst (m×n, row-major, contiguous) = a (m×k) · b (k×n)` for f32 or f64 through `gemm`.
pub fn gemm_into<T: GemmScalar>(
    dst: &mut [T],
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    par: Parallelism,
) {
    gemm_with(dst, a, b, par, false);
}

/// `dst += a · b`: [`gemm_into`] adding to what `dst` holds (a sum of products over a batch,
/// such as a convolution's filter gradient, without a temporary per term).
pub fn gemm_acc_into<T: GemmScalar>(
    dst: &mut [T],
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    par: Parallelism,
) {
    gemm_with(dst, a, b, par, true);
}

fn gemm_with<T: GemmScalar>(
    dst: &mut [T],
    a: MatRef<'_, T>,
    b: MatRef<'_, T>,
    par: Parallelism,
    accumulate: bool,
) {
    let (m, k, n) = (a.rows, a.cols, b.cols);
    assert!(
        a.cols == b.rows && dst.len() == m * n && a.check() && b.check(),
        "gemm_into: bad shapes"
    );
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if !accumulate {
            dst.iter_mut().for_each(|d| *d = T::default());
        }
        return;
    }
    // SAFETY: the views were bounds-checked above; dst is m×n contiguous and does not alias.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            n as isize,
            accumulate,
            a.data.as_ptr().add(a.off),
            a.cs as isize,
            a.rs as isize,
            b.data.as_ptr().add(b.off),
            b.cs as isize,
            b.rs as isize,
            if accumulate { T::ONE } else { T::default() },
            T::ONE,
            false,
            false,
            false,
            par,
        );
    }
}

/// Element types `gemm_into` multiplies.
pub trait GemmScalar: Copy + Default + 'static {
    const ONE: Self;
}

impl GemmScalar for f32 {
    const ONE: f32 = 1.0;
}

impl GemmScalar for f64 {
    const ONE: f64 = 1.0;
}

/// Operand layout after Paddle's 1-D promotion.
struct Operand {
    batch: Vec<usize>,
    /// stored rows × cols of each matrix
    rows: usize,
    cols: usize,
}

fn operand(shape: &[usize], is_x: bool) -> Operand {
    match shape.len() {
        0 => Operand {
            batch: vec![],
            rows: 1,
            cols: 1,
        },
        1 if is_x => Operand {
            batch: vec![],
            rows: 1,
            cols: shape[0],
        },
        1 => Operand {
            batch: vec![],
            rows: shape[0],
            cols: 1,
        },
        r => Operand {
            batch: shape[..r - 2].to_vec(),
            rows: shape[r - 2],
            cols: shape[r - 1],
        },
    }
}

/// Batched f32/f64 matmul on already-promoted (≥ 2-D view) operands; returns
/// (batch shape, m, n, buffer).
#[allow(clippy::too_many_arguments)]
fn batched<T: GemmScalar>(
    x: &[T],
    xs: &[usize],
    y: &[T],
    ys: &[usize],
    tx: bool,
    ty: bool,
    par: Parallelism,
) -> KResult<(Vec<usize>, usize, usize, Vec<T>)> {
    let (ox, oy) = (operand(xs, true), operand(ys, false));
    let (tx, ty) = (tx && xs.len() >= 2, ty && ys.len() >= 2);
    let (m, kx) = if tx {
        (ox.cols, ox.rows)
    } else {
        (ox.rows, ox.cols)
    };
    let (ky, n) = if ty {
        (oy.cols, oy.rows)
    } else {
        (oy.rows, oy.cols)
    };
    if kx != ky {
        kbail!(
            "matmul: inner dimensions differ ({} vs {}) for shapes {:?} and {:?} (transpose_x={}, transpose_y={})",
            kx, ky, xs, ys, tx, ty
        );
    }
    let batch = broadcast_shape(&ox.batch, &oy.batch, -1)?;
    let nb = numel(&batch);
    // m × n from m × k and k × n: with k = 1, a huge result from small operands.
    let out_dims: Vec<usize> = batch.iter().copied().chain([m, n]).collect();
    crate::exec::memory::reserve(&"the matmul result", &out_dims, size_of::<T>())?;
    let mut out = vec![T::default(); nb * m * n];
    if out.is_empty() {
        return Ok((batch, m, n, out));
    }
    let (xsz, ysz) = (ox.rows * ox.cols, oy.rows * oy.cols);
    // Matrix index of each batch entry in x and y (broadcast), via the shared odometer.
    let pad = |b: &[usize]| {
        let mut p = vec![1; batch.len() - b.len()];
        p.extend_from_slice(b);
        p
    };
    let (px, py) = (pad(&ox.batch), pad(&oy.batch));
    let mut pairs = Vec::with_capacity(nb);
    if batch.is_empty() {
        pairs.push((0, 0));
    } else {
        let plan = Plan::new(&batch, &[&px, &py]);
        let inner = plan.inner();
        let (sx, sy) = (
            plan.strides[0][plan.dims.len() - 1],
            plan.strides[1][plan.dims.len() - 1],
        );
        plan.for_each_run(|off| {
            for i in 0..inner {
                pairs.push((off[0] + i * sx, off[1] + i * sy));
            }
        });
    }
    for (b, &(ix, iy)) in pairs.iter().enumerate() {
        let a = if tx {
            MatRef {
                data: x,
                off: ix * xsz,
                rows: m,
                cols: kx,
                rs: 1,
                cs: ox.cols,
            }
        } else {
            MatRef {
                data: x,
                off: ix * xsz,
                rows: m,
                cols: kx,
                rs: ox.cols,
                cs: 1,
            }
        };
        let bm = if ty {
            MatRef {
                data: y,
                off: iy * ysz,
                rows: kx,
                cols: n,
                rs: 1,
                cs: oy.cols,
            }
        } else {
            MatRef {
                data: y,
                off: iy * ysz,
                rows: kx,
                cols: n,
                rs: oy.cols,
                cs: 1,
            }
        };
        gemm_into(&mut out[b * m * n..(b + 1) * m * n], a, bm, par);
    }
    Ok((batch, m, n, out))
}

fn result_shape(batch: &[usize], m: usize, n: usize, xr: usize, yr: usize) -> Vec<usize> {
    let mut s = batch.to_vec();
    if xr >= 2 {
        s.push(m);
    }
    if yr >= 2 {
        s.push(n);
    }
    s
}

fn out_dtype(x: DType, y: DType) -> DType {
    if x == DType::F64 || y == DType::F64 {
        DType::F64
    } else if x == y && x.is_float() {
        x
    } else {
        DType::F32
    }
}

/// `pd_op.matmul(x, y, transpose_x, transpose_y)`, single-threaded.
pub fn matmul(x: &Tensor, y: &Tensor, tx: bool, ty: bool) -> KResult<Tensor> {
    matmul_par(x, y, tx, ty, Parallelism::None)
}

/// [`matmul`] with an explicit `gemm` parallelism.
fn matmul_par(x: &Tensor, y: &Tensor, tx: bool, ty: bool, par: Parallelism) -> KResult<Tensor> {
    let (xr, yr) = (x.shape().len(), y.shape().len());
    if xr == 0 || yr == 0 {
        kbail!(
            "matmul operands must have at least one dimension, got {:?} and {:?}",
            x.shape(),
            y.shape()
        );
    }
    let dt = out_dtype(x.dtype(), y.dtype());
    if dt == DType::F64 {
        let (b, m, n, v) = batched(
            &x.to_f64_vec(),
            x.shape(),
            &y.to_f64_vec(),
            y.shape(),
            tx,
            ty,
            par,
        )?;
        return Tensor::new(result_shape(&b, m, n, xr, yr), Data::F64(v));
    }
    let (b, m, n, v) = batched(&x.to_f32(), x.shape(), &y.to_f32(), y.shape(), tx, ty, par)?;
    Tensor::from_f32_as(&result_shape(&b, m, n, xr, yr), v, dt)
}

/// `pd_op.matmul_double_grad(x, y, grad_out, grad_x_grad, grad_y_grad, transpose_x,
/// transpose_y)` → `(x_grad, y_grad, grad_out_grad)`: the grads of `matmul_grad`'s operands for
/// `ddx`, `ddy`, the grads of its results. `matmul_grad` is bilinear, so each is a `matmul` or
/// a `matmul_grad` with one operand replaced: `x_grad` pairs `ddy` with `dout`
/// (`⟨xᵀ·dout, ddy⟩ = ⟨x·ddy, dout⟩`), `y_grad` pairs `ddx` with it, and
/// `grad_out_grad = ddx·y + x·ddy`; batch broadcasting and transposes follow from theirs. An
/// absent `ddx`/`ddy` counts as zero.
pub fn matmul_double_grad(
    x: &Tensor,
    y: &Tensor,
    dout: &Tensor,
    ddx: Option<&Tensor>,
    ddy: Option<&Tensor>,
    tx: bool,
    ty: bool,
) -> KResult<(Tensor, Tensor, Tensor)> {
    let zeros = |t: &Tensor| Tensor::try_full(t.shape(), t.dtype(), 0.0);
    let same = |d: &Tensor, like: &Tensor, name: &str| -> KResult<()> {
        if d.shape() != like.shape() {
            kbail!(
                "matmul_double_grad: {} has shape {:?}, its operand {:?}",
                name,
                d.shape(),
                like.shape()
            );
        }
        Ok(())
    };
    let x_grad = match ddy {
        Some(ddy) => {
            same(ddy, y, "grad_y_grad")?;
            matmul_grad(x, ddy, dout, tx, ty)?.0
        }
        None => zeros(x)?,
    };
    let y_grad = match ddx {
        Some(ddx) => {
            same(ddx, x, "grad_x_grad")?;
            matmul_grad(ddx, y, dout, tx, ty)?.1
        }
        None => zeros(y)?,
    };
    let terms = [
        ddx.map(|d| matmul(d, y, tx, ty)),
        ddy.map(|d| matmul(x, d, tx, ty)),
    ];
    let mut ddout: Option<Tensor> = None;
    for t in terms.into_iter().flatten() {
        let t = t?;
        ddout = Some(match ddout {
            None => t,
            Some(acc) => crate::exec::kernels::elementwise::binary(
                crate::exec::kernels::elementwise::BinaryOp::Add,
                &acc,
                &t,
                -1,
            )?,
        });
    }
    let ddout = match ddout {
        Some(d) => d.reshaped(dout.shape().to_vec())?,
        None => zeros(dout)?,
    };
    Ok((x_grad, y_grad, ddout))
}

/// The ≥ 2-D view of an operand (1-D x → [1, K], 1-D y → [K, 1]).
fn promoted(shape: &[usize], is_x: bool) -> Vec<usize> {
    match shape.len() {
        1 if is_x => vec![1, shape[0]],
        1 => vec![shape[0], 1],
        _ => shape.to_vec(),
    }
}

/// `pd_op.matmul_grad(x, y, out_grad, transpose_x, transpose_y)` → (x_grad, y_grad), each in its
/// operand's shape and dtype.
pub fn matmul_grad(
    x: &Tensor,
    y: &Tensor,
    dout: &Tensor,
    tx: bool,
    ty: bool,
) -> KResult<(Tensor, Tensor)> {
    let (xr, yr) = (x.shape().len(), y.shape().len());
    if xr == 0 || yr == 0 {
        kbail!("matmul_grad operands must have at least one dimension");
    }
    let (px, py) = (promoted(x.shape(), true), promoted(y.shape(), false));
    let (tx, ty) = (tx && xr >= 2, ty && yr >= 2);
    let (ox, oy) = (operand(&px, true), operand(&py, false));
    let m = if tx { ox.cols } else { ox.rows };
    let n = if ty { oy.rows } else { oy.cols };
    let batch = broadcast_shape(&ox.batch, &oy.batch, -1)?;
    let mut pg = batch.clone();
    pg.extend([m, n]);
    if numel(&pg) != dout.numel() {
        kbail!(
            "matmul_grad: out_grad has shape {:?}, expected {:?}",
            dout.shape(),
            pg
        );
    }
    let (xv, yv, gv) = (x.to_f32(), y.to_f32(), dout.to_f32());
    let p = Parallelism::None;
    // Stored-layout gradients (see the module docs for the four cases).
    let (dx, dxs) = {
        let (b, r, c, v) = match (tx, ty) {
            (false, false) => batched(&gv, &pg, &yv, &py, false, true, p)?,
            (true, false) => batched(&yv, &py, &gv, &pg, false, true, p)?,
            (false, true) => batched(&gv, &pg, &yv, &py, false, false, p)?,
            (true, true) => batched(&yv, &py, &gv, &pg, true, true, p)?,
        };
        let mut s = b;
        s.extend([r, c]);
        (v, s)
    };
    let (dy, dys) = {
        let (b, r, c, v) = match (tx, ty) {
            (false, false) => batched(&xv, &px, &gv, &pg, true, false, p)?,
            (true, false) => batched(&xv, &px, &gv, &pg, false, false, p)?,
            (false, true) => batched(&gv, &pg, &xv, &px, true, false, p)?,
            (true, true) => batched(&gv, &pg, &xv, &px, true, true, p)?,
        };
        let mut s = b;
        s.extend([r, c]);
        (v, s)
    };
    let dx = reduce_to_shape(&dx, &dxs, &px, -1)?;
    let dy = reduce_to_shape(&dy, &dys, &py, -1)?;
    let fdt = |d: DType| if d.is_float() { d } else { DType::F32 };
    Ok((
        Tensor::from_f32_as(x.shape(), dx, fdt(x.dtype()))?,
        Tensor::from_f32_as(y.shape(), dy, fdt(y.dtype()))?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::kernels::broadcast::tests::{ravel_broadcast, unravel};
    use crate::exec::rng::Rng;

    /// Naive reference on the promoted shapes, f64 accumulation; returns (shape, values).
    fn reference(x: &Tensor, y: &Tensor, tx: bool, ty: bool) -> (Vec<usize>, Vec<f64>) {
        let (xs, ys) = (x.shape().to_vec(), y.shape().to_vec());
        let (px, py) = (promoted(&xs, true), promoted(&ys, false));
        let (tx, ty) = (tx && xs.len() >= 2, ty && ys.len() >= 2);
        let (xv, yv) = (x.to_f64_vec(), y.to_f64_vec());
        let (xb, yb) = (&px[..px.len() - 2], &py[..py.len() - 2]);
        let batch = broadcast_shape(xb, yb, -1).unwrap();
        let (xr, xc) = (px[px.len() - 2], px[px.len() - 1]);
        let (yr, yc) = (py[py.len() - 2], py[py.len() - 1]);
        let (m, k) = if tx { (xc, xr) } else { (xr, xc) };
        let n = if ty { yr } else { yc };
        let mut out = vec![];
        for b in 0..numel(&batch) {
            let idx = unravel(b, &batch);
            let (bx, by) = (ravel_broadcast(&idx, xb), ravel_broadcast(&idx, yb));
            for i in 0..m {
                for j in 0..n {
                    let mut s = 0.0;
                    for l in 0..k {
                        let a = if tx {
                            xv[bx * xr * xc + l * xc + i]
                        } else {
                            xv[bx * xr * xc + i * xc + l]
                        };
                        let c = if ty {
                            yv[by * yr * yc + j * yc + l]
                        } else {
                            yv[by * yr * yc + l * yc + j]
                        };
                        s += a * c;
                    }
                    out.push(s);
                }
            }
        }
        (result_shape(&batch, m, n, xs.len(), ys.len()), out)
    }

    fn rand(rng: &mut Rng, shape: &[usize]) -> Tensor {
        Tensor::f32(shape, rng.normal_vec(numel(shape)))
    }

    fn close(got: &[f64], want: &[f64], what: &str) {
        let max = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for (a, b) in got.iter().zip(want) {
            assert!(
                (a - b).abs() <= 1e-5 * b.abs() + 1e-5 * max,
                "{what}: {a} vs {b}"
            );
        }
    }

    const CASES: &[(&[usize], &[usize], bool, bool)] = &[
        (&[7, 13], &[13, 5], false, false),
        (&[13, 7], &[13, 5], true, false),
        (&[7, 13], &[5, 13], false, true),
        (&[13, 7], &[5, 13], true, true),
        (&[2, 3, 4, 9], &[9, 6], false, false),
        (&[3, 1, 4, 9], &[2, 9, 6], false, false),
        (&[9], &[9, 4], false, false),
        (&[4, 9], &[9], false, false),
        (&[9], &[9], false, false),
        (&[2, 5, 9], &[9], true, false),
        (&[33, 65], &[65, 17], false, false),
    ];

    #[test]
    fn forward_matches_naive_reference() {
        let mut rng = Rng::new(31);
        for &(xs, ys, tx, ty) in CASES {
            let (tx, ty) = (tx, ty);
            // for case (&[2,5,9], &[9], true, false) the transposed x is [.., 9, 5] x [9]: fix shapes
            let xs_v: Vec<usize> = if xs == [2, 5, 9] && tx {
                vec![2, 9, 5]
            } else {
                xs.to_vec()
            };
            let (x, y) = (rand(&mut rng, &xs_v), rand(&mut rng, ys));
            let got = matmul(&x, &y, tx, ty).unwrap();
            let (shape, want) = reference(&x, &y, tx, ty);
            assert_eq!(got.shape(), shape.as_slice(), "{xs:?} {ys:?}");
            close(&got.to_f64_vec(), &want, &format!("{xs:?}x{ys:?}"));
        }
        assert!(matmul(
            &rand(&mut rng, &[3, 4]),
            &rand(&mut rng, &[5, 2]),
            false,
            false
        )
        .is_err());
    }

    #[test]
    fn grads_match_finite_structure() {
        // dL/dx for L = sum(matmul(x, y) * g) is computed by the naive reference per element:
        // d/dx_{e} = sum over outputs of g * d out / d x_e, obtained by probing with unit vectors.
        let mut rng = Rng::new(5);
        for &(xs, ys, tx, ty) in CASES {
            let xs_v: Vec<usize> = if xs == [2, 5, 9] && tx {
                vec![2, 9, 5]
            } else {
                xs.to_vec()
            };
            if numel(&xs_v) * numel(ys) > 40_000 {
                continue;
            }
            let (x, y) = (rand(&mut rng, &xs_v), rand(&mut rng, ys));
            let out = matmul(&x, &y, tx, ty).unwrap();
            let g = rand(&mut rng, out.shape());
            let (dx, dy) = matmul_grad(&x, &y, &g, tx, ty).unwrap();
            assert_eq!(dx.shape(), x.shape());
            assert_eq!(dy.shape(), y.shape());
            let gv = g.to_f64_vec();
            // matmul is linear in each operand: dL/dx_e = <g, matmul(e_x, y)>.
            let probe = |which: usize, e: usize| -> f64 {
                let (mut xp, mut yp) = (vec![0.0f32; x.numel()], vec![0.0f32; y.numel()]);
                if which == 0 {
                    xp[e] = 1.0;
                    yp.copy_from_slice(y.as_f32().unwrap());
                } else {
                    xp.copy_from_slice(x.as_f32().unwrap());
                    yp[e] = 1.0;
                }
                let (_, o) = reference(
                    &Tensor::f32(x.shape(), xp),
                    &Tensor::f32(y.shape(), yp),
                    tx,
                    ty,
                );
                o.iter().zip(&gv).map(|(a, b)| a * b).sum()
            };
            let want_dx: Vec<f64> = (0..x.numel()).map(|e| probe(0, e)).collect();
            let want_dy: Vec<f64> = (0..y.numel()).map(|e| probe(1, e)).collect();
            close(
                &dx.to_f64_vec(),
                &want_dx,
                &format!("dx {xs:?} {ys:?} {tx} {ty}"),
            );
            close(
                &dy.to_f64_vec(),
                &want_dy,
                &format!("dy {xs:?} {ys:?} {tx} {ty}"),
            );
        }
    }

    #[test]
    fn bf16_rounds_the_f32_product_once() {
        use crate::exec::kernels::cast::cast;
        let mut rng = Rng::new(8);
        let (x, y) = (rand(&mut rng, &[5, 7]), rand(&mut rng, &[7, 3]));
        let (xb, yb) = (cast(&x, DType::BF16), cast(&y, DType::BF16));
        let got = matmul(&xb, &yb, false, false).unwrap();
        assert_eq!(got.dtype(), DType::BF16);
        let f = matmul(&cast(&xb, DType::F32), &cast(&yb, DType::F32), false, false).unwrap();
        assert_eq!(got, cast(&f, DType::BF16));
    }
}
