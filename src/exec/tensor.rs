//! A dense, contiguous, row-major tensor with an owned buffer per dtype.
//!
//! Why so simple: the programs irw checks are small training steps where correctness of the
//! semantics matters more than memory layout tricks, and every kernel can then work on plain
//! slices (which is what makes them easy to vectorize and to test against a scalar reference).
//! Views, strides and aliasing are the interpreter's business, not the tensor's.
//!
//! Every tensor's buffer is counted against its run's memory limit while it lives
//! ([`super::memory`]): constructors and `clone` add its bytes to the budget in force, `drop`
//! subtracts them from that budget.
//!
//! 16-bit floats are stored as `half` values but never computed with directly: kernels widen them
//! to f32 with [`Tensor::to_f32`], compute, and round back with [`Tensor::from_f32_as`], which is
//! how Paddle's CPU kernels accumulate (its `MPTypeTrait` is `float` for both).

use std::borrow::Cow;
use std::sync::Arc;

use half::f16;

use super::data::bf16_from_f32;
pub use super::data::Data;
use super::dtype::{self, DType};
use super::error::{KResult, KernelError};
use super::memory::{self, Budget};

/// A dense row-major tensor. A 0-d tensor (shape `[]`) holds one element.
pub struct Tensor {
    shape: Vec<usize>,
    data: Data,
    /// The bytes this tensor added to the live count of `budget` (subtracted again on drop).
    counted: u64,
    /// The budget in force when the tensor was made ([`memory::current`]).
    budget: Arc<Budget>,
}

/// Number of elements of a shape (1 for `[]`); `usize::MAX` when the product overflows, which
/// no buffer can match (so [`Tensor::new`] refuses such a shape).
pub fn numel(shape: &[usize]) -> usize {
    shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .unwrap_or(usize::MAX)
}

impl Clone for Tensor {
    fn clone(&self) -> Tensor {
        Tensor::make(self.shape.clone(), self.data.clone())
    }
}

impl std::fmt::Debug for Tensor {
    /// The buffer and its count; not the budget (shared by every tensor of a run).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tensor")
            .field("shape", &self.shape)
            .field("data", &self.data)
            .field("counted", &self.counted)
            .finish()
    }
}

impl PartialEq for Tensor {
    fn eq(&self, other: &Tensor) -> bool {
        self.shape == other.shape && self.data == other.data
    }
}

impl Drop for Tensor {
    fn drop(&mut self) {
        self.budget.release(self.counted);
    }
}

impl Tensor {
    /// The one place a tensor comes into being: counts its buffer.
    fn make(shape: Vec<usize>, data: Data) -> Tensor {
        let counted = data.bytes();
        let budget = memory::current();
        budget.charge(counted);
        Tensor {
            shape,
            data,
            counted,
            budget,
        }
    }

    /// Builds a tensor, checking that the buffer length matches the shape.
    pub fn new(shape: Vec<usize>, data: Data) -> KResult<Tensor> {
        if numel(&shape) != data.len() {
            crate::kbail!(
                "shape {:?} needs {} elements, buffer has {}",
                shape,
                numel(&shape),
                data.len()
            );
        }
        Ok(Tensor::make(shape, data))
    }

    /// An f32 tensor (panics only if the caller passes a mismatched buffer; use [`Tensor::new`]
    /// for data that comes from a user).
    pub fn f32(shape: &[usize], values: Vec<f32>) -> Tensor {
        assert_eq!(
            numel(shape),
            values.len(),
            "f32 tensor: shape and buffer disagree"
        );
        Tensor::make(shape.to_vec(), Data::F32(values))
    }

    /// An i64 tensor (same contract as [`Tensor::f32`]).
    pub fn i64(shape: &[usize], values: Vec<i64>) -> Tensor {
        assert_eq!(
            numel(shape),
            values.len(),
            "i64 tensor: shape and buffer disagree"
        );
        Tensor::make(shape.to_vec(), Data::I64(values))
    }

    /// [`Tensor::full`] for a program-controlled shape: refused (before anything is allocated)
    /// when the shape overflows or the tensor would pass the memory limit.
    pub fn try_full(shape: &[usize], dtype: DType, value: f64) -> KResult<Tensor> {
        if !dtype::computable(dtype) {
            crate::kbail!(
                "dtype {} is not supported by the executor",
                dtype.attr_name()
            );
        }
        let article = if dtype.attr_name().starts_with('i') {
            "an"
        } else {
            "a"
        };
        memory::reserve(
            &format_args!("{article} {} tensor", dtype.attr_name()),
            shape,
            dtype.size(),
        )?;
        Ok(Tensor::full(shape, dtype, value))
    }

    /// A tensor filled with `value`, converted to `dtype` the way Paddle's `full` does (floats
    /// rounded to the nearest representable value, integers truncated toward zero). For sizes
    /// the executor already holds; [`Tensor::try_full`] for sizes a program asks for.
    ///
    /// # Panics
    ///
    /// For a dtype the executor does not hold (`dtype::computable`): the executor reads
    /// dtypes through `dtype::parse`, which refuses them, and [`Tensor::try_full`] returns an
    /// error instead.
    pub fn full(shape: &[usize], dtype: DType, value: f64) -> Tensor {
        let n = numel(shape);
        let data = match dtype {
            DType::F32 => Data::F32(vec![value as f32; n]),
            DType::BF16 => Data::BF16(vec![bf16_from_f32(value as f32); n]),
            DType::F16 => Data::F16(vec![f16::from_f64(value); n]),
            DType::F64 => Data::F64(vec![value; n]),
            DType::I64 => Data::I64(vec![value as i64; n]),
            DType::I32 => Data::I32(vec![value as i32; n]),
            DType::Bool => Data::Bool(vec![value != 0.0; n]),
            DType::U8 => Data::U8(vec![value as u8; n]),
            DType::I16 | DType::I8 | DType::C64 | DType::C128 => {
                unreachable!("{}", dtype::not_held(dtype))
            }
        };
        Tensor::make(shape.to_vec(), data)
    }

    /// Rounds f32 values to `dtype` (the inverse of [`Tensor::to_f32`]).
    pub fn from_f32_as(shape: &[usize], values: Vec<f32>, dtype: DType) -> KResult<Tensor> {
        let t = Tensor::new(shape.to_vec(), Data::F32(values))?;
        Ok(if dtype == DType::F32 {
            t
        } else {
            Tensor::new(shape.to_vec(), t.data.cast(dtype))?
        })
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    pub fn dtype(&self) -> DType {
        self.data.dtype()
    }

    pub fn data(&self) -> &Data {
        &self.data
    }

    pub fn data_mut(&mut self) -> &mut Data {
        &mut self.data
    }

    pub fn into_data(mut self) -> Data {
        // The buffer leaves the tensor: it is no longer counted (`drop` subtracts `counted`).
        std::mem::replace(&mut self.data, Data::F32(Vec::new()))
    }

    pub fn numel(&self) -> usize {
        self.data.len()
    }

    /// Same buffer, new shape (the element count must agree).
    pub fn reshaped(self, shape: Vec<usize>) -> KResult<Tensor> {
        Tensor::new(shape, self.into_data())
    }

    /// The f32 buffer if this is an f32 tensor.
    pub fn as_f32(&self) -> Option<&[f32]> {
        match &self.data {
            Data::F32(v) => Some(v),
            _ => None,
        }
    }

    /// The values widened (or narrowed, for f64/ints) to f32: borrowed for f32 tensors, converted
    /// with the vectorized casts otherwise.
    pub fn to_f32(&self) -> Cow<'_, [f32]> {
        match &self.data {
            Data::F32(v) => Cow::Borrowed(v),
            _ => match self.data.cast(DType::F32) {
                Data::F32(v) => Cow::Owned(v),
                _ => unreachable!("cast to F32 yields F32 data"),
            },
        }
    }

    /// The values as f64 (exact for every dtype but i64 beyond 2^53).
    pub fn to_f64_vec(&self) -> Vec<f64> {
        match &self.data {
            Data::F32(v) => v.iter().map(|&x| x as f64).collect(),
            Data::BF16(v) => v.iter().map(|&x| x.to_f64()).collect(),
            Data::F16(v) => v.iter().map(|&x| x.to_f64()).collect(),
            Data::F64(v) => v.clone(),
            Data::I64(v) => v.iter().map(|&x| x as f64).collect(),
            Data::I32(v) => v.iter().map(|&x| x as f64).collect(),
            Data::Bool(v) => v.iter().map(|&x| if x { 1.0 } else { 0.0 }).collect(),
            Data::U8(v) => v.iter().map(|&x| x as f64).collect(),
        }
    }

    /// The values as i64 (floats truncated toward zero), for shape and axis operands.
    pub fn to_i64_vec(&self) -> Vec<i64> {
        match &self.data {
            Data::I64(v) => v.clone(),
            Data::I32(v) => v.iter().map(|&x| x as i64).collect(),
            Data::Bool(v) => v.iter().map(|&x| x as i64).collect(),
            Data::U8(v) => v.iter().map(|&x| x as i64).collect(),
            _ => self.to_f64_vec().into_iter().map(|x| x as i64).collect(),
        }
    }

    /// The single value of a one-element tensor (shape `[]` or `[1]`), as f32.
    pub fn scalar_f32(&self) -> KResult<f32> {
        if self.numel() != 1 {
            return Err(KernelError::new(format!(
                "expected a one-element tensor, got shape {:?}",
                self.shape
            )));
        }
        Ok(self.to_f64_vec()[0] as f32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_checks_length() {
        assert!(Tensor::new(vec![2, 3], Data::F32(vec![0.0; 5])).is_err());
        let t = Tensor::new(vec![], Data::I64(vec![7])).unwrap();
        assert_eq!(t.numel(), 1);
        assert_eq!(t.scalar_f32().unwrap(), 7.0);
    }

    #[test]
    fn full_converts_per_dtype() {
        let t = Tensor::full(&[2], DType::BF16, 0.1);
        assert_eq!(t.to_f64_vec(), vec![0.10009765625, 0.10009765625]);
        let t = Tensor::full(&[1], DType::I64, -2.7);
        assert_eq!(t.to_i64_vec(), vec![-2]);
        let t = Tensor::full(&[3], DType::Bool, 1.0);
        assert_eq!(t.dtype(), DType::Bool);
    }
}
