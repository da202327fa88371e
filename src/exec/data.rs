//! The typed element buffer of a tensor ([`Data`]), and conversions between element types:
//! what `pd_op.cast` does, and the widening/narrowing every 16-bit kernel does.
//!
//! f32 → bf16 rounds to nearest, ties to even, with the integer trick (add `0x7FFF` plus the
//! lowest kept bit, then truncate), which LLVM vectorizes; NaN stays a quiet NaN with its sign
//! (the trick alone could round a NaN with a low payload to infinity). `half`'s own slice
//! conversion for bf16 is a scalar loop; for f16 it uses F16C when the CPU has it, so f16 goes
//! through `half`.
//!
//! Float → integer casts truncate toward zero (C++ `static_cast`); NaN becomes 0 and
//! out-of-range values saturate (C++ leaves these undefined); integer → `uint8` wraps modulo 256
//! as C++'s conversion does. Anything → bool is `x != 0`.
//!
//! Below [`super::tensor`] (a tensor is a shape over a `Data`) and the kernels, which convert
//! through it.

use half::slice::HalfFloatSliceExt;
use half::{bf16, f16};

use crate::exec::dtype::DType;
use crate::exec::simd::dispatch;

/// The typed element buffer of a [`Tensor`](super::tensor::Tensor).
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    F32(Vec<f32>),
    BF16(Vec<bf16>),
    F16(Vec<f16>),
    F64(Vec<f64>),
    I64(Vec<i64>),
    I32(Vec<i32>),
    Bool(Vec<bool>),
    /// `uint8`: masks (dropout) and reserve spaces (batch_norm) Paddle's backward reads.
    U8(Vec<u8>),
}

impl Data {
    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            Data::F32(v) => v.len(),
            Data::BF16(v) => v.len(),
            Data::F16(v) => v.len(),
            Data::F64(v) => v.len(),
            Data::I64(v) => v.len(),
            Data::I32(v) => v.len(),
            Data::Bool(v) => v.len(),
            Data::U8(v) => v.len(),
        }
    }

    /// `NaN`, `inf` or nothing: whether the buffer holds a value that is not a finite number,
    /// a NaN named before an infinity. Each float type is tested in its own precision (an f64
    /// beyond f32's range is finite); integers are always finite.
    pub fn non_finite(&self) -> Option<&'static str> {
        fn scan<T: Copy>(
            v: &[T],
            nan: impl Fn(T) -> bool,
            inf: impl Fn(T) -> bool,
        ) -> Option<&'static str> {
            let mut any_inf = false;
            for &x in v {
                if nan(x) {
                    return Some("NaN");
                }
                any_inf |= inf(x);
            }
            any_inf.then_some("inf")
        }
        match self {
            Data::F32(v) => scan(v, f32::is_nan, f32::is_infinite),
            Data::F64(v) => scan(v, f64::is_nan, f64::is_infinite),
            Data::BF16(v) => scan(v, bf16::is_nan, bf16::is_infinite),
            Data::F16(v) => scan(v, f16::is_nan, f16::is_infinite),
            Data::I64(_) | Data::I32(_) | Data::Bool(_) | Data::U8(_) => None,
        }
    }

    /// Elements `a..b`, as a new buffer of the same element type (`a <= b <= len`).
    pub fn range(&self, a: usize, b: usize) -> Data {
        match self {
            Data::F32(v) => Data::F32(v[a..b].to_vec()),
            Data::BF16(v) => Data::BF16(v[a..b].to_vec()),
            Data::F16(v) => Data::F16(v[a..b].to_vec()),
            Data::F64(v) => Data::F64(v[a..b].to_vec()),
            Data::I64(v) => Data::I64(v[a..b].to_vec()),
            Data::I32(v) => Data::I32(v[a..b].to_vec()),
            Data::Bool(v) => Data::Bool(v[a..b].to_vec()),
            Data::U8(v) => Data::U8(v[a..b].to_vec()),
        }
    }

    /// Copies `src` over the elements from `at` on (a buffer of the same element type, and
    /// `at + src.len() <= len`); false, changing nothing, otherwise.
    pub fn overwrite(&mut self, at: usize, src: &Data) -> bool {
        fn copy<T: Copy>(dst: &mut [T], at: usize, src: &[T]) -> bool {
            match dst.get_mut(at..at + src.len()) {
                Some(d) => {
                    d.copy_from_slice(src);
                    true
                }
                None => false,
            }
        }
        match (self, src) {
            (Data::F32(d), Data::F32(s)) => copy(d, at, s),
            (Data::BF16(d), Data::BF16(s)) => copy(d, at, s),
            (Data::F16(d), Data::F16(s)) => copy(d, at, s),
            (Data::F64(d), Data::F64(s)) => copy(d, at, s),
            (Data::I64(d), Data::I64(s)) => copy(d, at, s),
            (Data::I32(d), Data::I32(s)) => copy(d, at, s),
            (Data::Bool(d), Data::Bool(s)) => copy(d, at, s),
            (Data::U8(d), Data::U8(s)) => copy(d, at, s),
            _ => false,
        }
    }

    /// The buffer with its consecutive blocks of `block` elements in reverse order (a
    /// tensor's rows reversed, `block` the elements of a row; `block > 0`).
    pub fn reverse_blocks(&self, block: usize) -> Data {
        fn rev<T: Copy>(v: &[T], block: usize) -> Vec<T> {
            v.chunks(block).rev().flatten().copied().collect()
        }
        match self {
            Data::F32(v) => Data::F32(rev(v, block)),
            Data::BF16(v) => Data::BF16(rev(v, block)),
            Data::F16(v) => Data::F16(rev(v, block)),
            Data::F64(v) => Data::F64(rev(v, block)),
            Data::I64(v) => Data::I64(rev(v, block)),
            Data::I32(v) => Data::I32(rev(v, block)),
            Data::Bool(v) => Data::Bool(rev(v, block)),
            Data::U8(v) => Data::U8(rev(v, block)),
        }
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of the buffer.
    pub fn bytes(&self) -> u64 {
        let elem = match self {
            Data::F64(_) | Data::I64(_) => 8,
            Data::F32(_) | Data::I32(_) => 4,
            Data::BF16(_) | Data::F16(_) => 2,
            Data::Bool(_) | Data::U8(_) => 1,
        };
        self.len() as u64 * elem
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        match self {
            Data::F32(_) => DType::F32,
            Data::BF16(_) => DType::BF16,
            Data::F16(_) => DType::F16,
            Data::F64(_) => DType::F64,
            Data::I64(_) => DType::I64,
            Data::I32(_) => DType::I32,
            Data::Bool(_) => DType::Bool,
            Data::U8(_) => DType::U8,
        }
    }
}

/// Round-to-nearest-even f32 → bf16 bits (NaN → quiet NaN).
#[inline(always)]
fn bf16_bits_from_f32(x: f32) -> u16 {
    let b = x.to_bits();
    let rounded = (b.wrapping_add(0x7FFF + ((b >> 16) & 1)) >> 16) as u16;
    let quiet_nan = ((b >> 16) | 0x0040) as u16;
    if (b & 0x7FFF_FFFF) > 0x7F80_0000 {
        quiet_nan
    } else {
        rounded
    }
}

/// Round-to-nearest-even f32 → bf16.
#[inline(always)]
pub fn bf16_from_f32(x: f32) -> bf16 {
    bf16::from_bits(bf16_bits_from_f32(x))
}

/// Exact bf16 → f32.
#[inline(always)]
fn f32_from_bf16(x: bf16) -> f32 {
    f32::from_bits((x.to_bits() as u32) << 16)
}

#[inline(always)]
fn f32_to_bf16_loop(src: &[f32], dst: &mut [bf16]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = bf16_from_f32(s);
    }
}

#[inline(always)]
fn bf16_to_f32_loop(src: &[bf16], dst: &mut [f32]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = f32_from_bf16(s);
    }
}

/// Vectorized f32 → bf16 (round to nearest even). `dst` must be as long as `src`.
pub fn f32_to_bf16_slice(src: &[f32], dst: &mut [bf16]) {
    assert_eq!(src.len(), dst.len());
    dispatch(|| f32_to_bf16_loop(src, dst));
}

/// Vectorized bf16 → f32. `dst` must be as long as `src`.
fn bf16_to_f32_slice(src: &[bf16], dst: &mut [f32]) {
    assert_eq!(src.len(), dst.len());
    dispatch(|| bf16_to_f32_loop(src, dst));
}

/// f32 → bf16 into a new vector.
fn f32_to_bf16_vec(src: &[f32]) -> Vec<bf16> {
    let mut out = vec![bf16::ZERO; src.len()];
    f32_to_bf16_slice(src, &mut out);
    out
}

/// bf16 → f32 into a new vector.
fn bf16_to_f32_vec(src: &[bf16]) -> Vec<f32> {
    let mut out = vec![0.0; src.len()];
    bf16_to_f32_slice(src, &mut out);
    out
}

/// f32 → f16 (round to nearest even, F16C when available).
fn f32_to_f16_vec(src: &[f32]) -> Vec<f16> {
    let mut out = vec![f16::ZERO; src.len()];
    out.convert_from_f32_slice(src);
    out
}

/// f16 → f32 (exact, F16C when available).
fn f16_to_f32_vec(src: &[f16]) -> Vec<f32> {
    let mut out = vec![0.0; src.len()];
    src.convert_to_f32_slice(&mut out);
    out
}

#[inline(always)]
fn map_loop<S: Copy, D>(src: &[S], f: impl Fn(S) -> D) -> Vec<D> {
    src.iter().map(|&x| f(x)).collect()
}

fn map<S: Copy, D>(src: &[S], f: impl Fn(S) -> D) -> Vec<D> {
    dispatch(|| map_loop(src, f))
}

/// The values as f32, whatever the dtype.
fn widen_to_f32(data: &Data) -> Vec<f32> {
    match data {
        Data::F32(v) => v.clone(),
        Data::BF16(v) => bf16_to_f32_vec(v),
        Data::F16(v) => f16_to_f32_vec(v),
        Data::F64(v) => map(v, |x| x as f32),
        Data::I64(v) => map(v, |x| x as f32),
        Data::I32(v) => map(v, |x| x as f32),
        Data::Bool(v) => map(v, |x| if x { 1.0 } else { 0.0 }),
        Data::U8(v) => map(v, |x| x as f32),
    }
}

/// The values as f64, whatever the dtype.
fn widen_to_f64(data: &Data) -> Vec<f64> {
    match data {
        Data::F64(v) => v.clone(),
        Data::I64(v) => map(v, |x| x as f64),
        Data::I32(v) => map(v, |x| x as f64),
        Data::Bool(v) => map(v, |x| if x { 1.0 } else { 0.0 }),
        Data::U8(v) => map(v, |x| x as f64),
        other => map(&widen_to_f32(other), |x| x as f64),
    }
}

impl Data {
    /// The elements converted to `to`. Float→float rounds to nearest even; float→int truncates
    /// toward zero (NaN 0, out of range saturated); anything → bool is `x != 0`.
    ///
    /// # Panics
    ///
    /// For a `to` the executor does not hold (`crate::exec::dtype::computable`): the executor
    /// reads dtypes through `crate::exec::dtype::parse`, which refuses them.
    pub fn cast(&self, to: DType) -> Data {
        if self.dtype() == to {
            return self.clone();
        }
        let d = self;
        match to {
            DType::F32 => Data::F32(widen_to_f32(d)),
            DType::F64 => Data::F64(widen_to_f64(d)),
            DType::BF16 => match d {
                Data::F64(v) => Data::BF16(map(v, bf16::from_f64)),
                _ => Data::BF16(f32_to_bf16_vec(&widen_to_f32(d))),
            },
            DType::F16 => match d {
                Data::F64(v) => Data::F16(map(v, f16::from_f64)),
                _ => Data::F16(f32_to_f16_vec(&widen_to_f32(d))),
            },
            DType::I64 => Data::I64(match d {
                Data::I32(v) => map(v, |x| x as i64),
                Data::Bool(v) => map(v, |x| x as i64),
                Data::U8(v) => map(v, |x| x as i64),
                _ => map(&widen_to_f64(d), |x| x as i64),
            }),
            DType::I32 => Data::I32(match d {
                Data::I64(v) => map(v, |x| x as i32),
                Data::Bool(v) => map(v, |x| x as i32),
                Data::U8(v) => map(v, |x| x as i32),
                _ => map(&widen_to_f64(d), |x| x as i32),
            }),
            DType::Bool => Data::Bool(match d {
                Data::I64(v) => map(v, |x| x != 0),
                Data::I32(v) => map(v, |x| x != 0),
                Data::U8(v) => map(v, |x| x != 0),
                _ => map(&widen_to_f64(d), |x| x != 0.0),
            }),
            DType::U8 => Data::U8(match d {
                Data::I64(v) => map(v, |x| x as u8),
                Data::I32(v) => map(v, |x| x as u8),
                Data::Bool(v) => map(v, |x| x as u8),
                _ => map(&widen_to_f64(d), |x| x as u8),
            }),
            DType::I16 | DType::I8 | DType::C64 | DType::C128 => {
                unreachable!("{}", crate::exec::dtype::not_held(to))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::rng::Rng;
    use crate::exec::simd::{with_level, Level};

    #[test]
    fn non_finite_tests_each_type_in_its_own_precision_and_names_nan_first() {
        assert_eq!(Data::F64(vec![1e300, -1e300]).non_finite(), None);
        assert_eq!(
            Data::F32(vec![1.0, f32::INFINITY, f32::NAN]).non_finite(),
            Some("NaN")
        );
        assert_eq!(
            Data::F32(vec![f32::NEG_INFINITY, 2.0]).non_finite(),
            Some("inf")
        );
        assert_eq!(Data::BF16(vec![bf16::INFINITY]).non_finite(), Some("inf"));
        assert_eq!(Data::F16(vec![f16::NAN]).non_finite(), Some("NaN"));
        assert_eq!(Data::I64(vec![i64::MAX]).non_finite(), None);
    }

    /// Reference RNE computed in f64 arithmetic: pick the nearer of the two bf16 neighbours,
    /// the even one on a tie.
    fn bf16_reference(x: f32) -> u16 {
        if x.is_nan() {
            return ((x.to_bits() >> 16) | 0x40) as u16;
        }
        let lo = (x.to_bits() >> 16) as u16; // truncation: toward zero in magnitude
        let hi = lo.wrapping_add(1);
        let lo_v = f32::from_bits((lo as u32) << 16) as f64;
        // Rounding past the largest finite bf16 goes to infinity; for the distance, the
        // neighbour above it counts as 2^128 (IEEE's rule).
        let hi_v = if hi & 0x7FFF == 0x7F80 {
            2f64.powi(128).copysign(x as f64)
        } else {
            f32::from_bits((hi as u32) << 16) as f64
        };
        let xv = x as f64;
        let (dl, dh) = ((xv - lo_v).abs(), (hi_v - xv).abs());
        if x.is_infinite() || dl < dh || (dl == dh && lo.is_multiple_of(2)) {
            lo
        } else {
            hi
        }
    }

    #[test]
    fn bf16_rne_matches_reference_on_edge_cases() {
        let mut cases = vec![
            0.0f32,
            -0.0,
            1.0,
            0.1,
            f32::MAX,
            f32::MIN,
            f32::MIN_POSITIVE,
            1e-40,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::from_bits(0x7F80_0001), // signalling NaN with a low payload
            f32::from_bits(0xFF80_0001),
            f32::from_bits(0x3F80_8000), // exact tie, even below
            f32::from_bits(0x3F81_8000), // exact tie, odd below
            f32::from_bits(0x3F80_8001),
            f32::from_bits(0x3F80_7FFF),
        ];
        let mut rng = Rng::new(7);
        for _ in 0..10_000 {
            cases.push(f32::from_bits(rng.next_u32()));
        }
        for &x in &cases {
            let got = bf16_bits_from_f32(x);
            let want = bf16_reference(x);
            assert_eq!(got, want, "x = {x:e} ({:#010x})", x.to_bits());
            if x.is_nan() {
                assert!(f32_from_bf16(bf16::from_bits(got)).is_nan());
            }
        }
        assert_eq!(f32_from_bf16(bf16_from_f32(0.1)) as f64, 0.10009765625f64);
    }

    #[test]
    fn vector_and_fallback_conversions_agree() {
        let mut rng = Rng::new(11);
        for n in [0usize, 1, 15, 16, 17, 63, 1000] {
            let xs: Vec<f32> = (0..n).map(|_| f32::from_bits(rng.next_u32())).collect();
            let v = f32_to_bf16_vec(&xs);
            let s = with_level(Level::Scalar, || f32_to_bf16_vec(&xs));
            let bits = |a: &[bf16]| a.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&v), bits(&s));
            let want: Vec<u16> = xs.iter().map(|&x| bf16_reference(x)).collect();
            assert_eq!(bits(&v), want);
            let back = bf16_to_f32_vec(&v);
            let back_s = with_level(Level::Scalar, || bf16_to_f32_vec(&v));
            let fbits = |a: &[f32]| a.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(fbits(&back), fbits(&back_s));
        }
    }

    #[test]
    fn f16_matches_half_scalar() {
        let mut rng = Rng::new(3);
        let xs: Vec<f32> = (0..999).map(|_| rng.normal() * 1000.0).collect();
        let v = f32_to_f16_vec(&xs);
        for (a, &x) in v.iter().zip(&xs) {
            assert_eq!(a.to_bits(), f16::from_f32(x).to_bits());
        }
    }
}
