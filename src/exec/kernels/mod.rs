//! The numeric kernels, one concept per file. Each works on [`Tensor`](super::Tensor)s (or plain
//! slices for the hot paths), follows Paddle's documented operator semantics, and returns a
//! [`KernelError`](super::KernelError) instead of panicking on inputs a program controls.

pub mod activation;
pub mod adaptive;
pub mod amp;
pub mod batch_norm;
pub mod bilinear_form;
pub mod broadcast;
pub mod cast;
pub mod coalesce;
pub mod collective;
pub mod conv;
pub mod conv3d;
pub mod conv_transpose;
pub mod ctc;
pub mod cumsum;
pub mod dropout;
pub mod einsum;
pub mod elementwise;
pub mod flatten;
pub mod gather_scatter;
pub mod gemm_epilogue;
pub mod group_norm;
pub mod index;
pub mod index_put;
pub mod interp;
pub mod join;
pub mod layer_norm;
pub mod loss;
pub mod matmul;
pub mod maxout;
pub mod norm;
pub mod optimizer;
pub mod pad;
pub mod pick;
pub mod piecewise;
pub mod pixel_shuffle;
pub mod pool;
pub mod pool3d;
pub mod prelu;
pub mod reduce;
pub mod reorder;
pub mod repeat;
pub mod rnn;
pub mod shape;
pub mod softmax;
pub mod spectral_norm;
pub mod topk;
pub mod trig;
pub mod unfold;

#[cfg(test)]
pub(crate) mod testdata;
#[cfg(test)]
mod tests;

/// `axis` as an index into a shape of `rank` dimensions (negative counts from the end); out of
/// range, the error names `op`.
fn axis_of(axis: i64, rank: usize, op: &str) -> crate::exec::error::KResult<usize> {
    let r = rank as i64;
    if r == 0 || axis < -r || axis >= r {
        crate::kbail!("{}: axis {} is out of range for rank {}", op, axis, r);
    }
    Ok(axis.rem_euclid(r) as usize)
}

/// The dtype of a result computed in floating point from an operand of dtype `d`: `d` itself
/// when it is a float, else f32.
fn float_dtype(d: crate::exec::dtype::DType) -> crate::exec::dtype::DType {
    if d.is_float() {
        d
    } else {
        crate::exec::dtype::DType::F32
    }
}
