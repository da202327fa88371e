//! `pd_op.cast`: a tensor converted to another element type. The conversions themselves are
//! [`crate::exec::data`]'s, shared with every kernel that widens 16-bit floats.

use crate::exec::dtype::DType;
use crate::exec::tensor::Tensor;

/// `pd_op.cast`: converts `x` to `to`. Float→float rounds to nearest even; float→int truncates.
///
/// # Panics
///
/// For a `to` the executor does not hold ([`crate::exec::dtype::computable`]): the executor
/// reads dtypes through [`crate::exec::dtype::parse`], which refuses them.
pub fn cast(x: &Tensor, to: DType) -> Tensor {
    match Tensor::new(x.shape().to_vec(), x.data().cast(to)) {
        Ok(t) => t,
        Err(_) => unreachable!("a cast keeps the element count"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::data::Data;

    #[test]
    fn casts_between_kinds() {
        let t = Tensor::f32(&[4], vec![-1.7, 0.0, 2.5, 3.9]);
        assert_eq!(cast(&t, DType::I64).to_i64_vec(), vec![-1, 0, 2, 3]);
        let b = cast(&t, DType::Bool);
        assert_eq!(b.data(), &Data::Bool(vec![true, false, true, true]));
        let back = cast(&b, DType::F32);
        assert_eq!(back.as_f32().unwrap(), &[1.0, 0.0, 1.0, 1.0]);
        let h = cast(&t, DType::BF16);
        assert_eq!(
            cast(&h, DType::F32).as_f32().unwrap(),
            &[-1.703125, 0.0, 2.5, 3.90625]
        );
        let i = Tensor::i64(&[2], vec![3, -4]);
        assert_eq!(cast(&i, DType::F16).to_f64_vec(), vec![3.0, -4.0]);
    }
}
