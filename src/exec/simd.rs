//! Runtime CPU dispatch for the element-wise, cast and reduction kernels.
//!
//! The release binary is built for baseline x86-64 (no `-C target-cpu=native`), yet it must use
//! AVX-512 where the CPU has it. Each kernel is written once as a plain `#[inline(always)]` loop
//! over slices; [`dispatch`] calls it through a trampoline compiled with
//! `#[target_feature(enable = ...)]` for the best level the CPU supports, so LLVM inlines the loop
//! into the trampoline and vectorizes it for that instruction set. The same source compiled at
//! the baseline level is the *scalar fallback* (baseline SSE2 at most, no FMA).
//!
//! Why this shape instead of hand-written intrinsics: the kernels are memory-bound, and a loop that
//! LLVM vectorizes for AVX-512 runs at memory bandwidth. Writing the loop once also means the
//! vector and fallback paths compute the *same expression in the same order*: no FMA contraction
//! (Rust never contracts `a * b + c`), and reductions use a fixed lane-wise order
//! ([`LANES`] partial sums, combined pairwise). So the two paths agree bit for bit, which the tests
//! check by forcing each level with [`with_level`].
//!
//! Architecture invariant: nothing in a dispatched kernel depends on the level except speed.

use std::cell::Cell;
use std::sync::OnceLock;

/// Number of independent partial sums a reduction keeps. 16 f32 = one AVX-512 register; the
/// fallback keeps the same 16 accumulators so that its rounding is identical.
pub const LANES: usize = 16;

/// An instruction-set level a kernel can run at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Baseline target features only (the tested fallback).
    Scalar,
    /// AVX2 + FMA + F16C (x86-64-v3).
    V3,
    /// AVX-512 F/BW/DQ/VL (x86-64-v4).
    V4,
}

fn detect() -> Level {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        if is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512dq")
            && is_x86_feature_detected!("avx512vl")
            && is_x86_feature_detected!("avx2")
            && is_x86_feature_detected!("fma")
            && is_x86_feature_detected!("f16c")
        {
            return Level::V4;
        }
        if is_x86_feature_detected!("avx2")
            && is_x86_feature_detected!("fma")
            && is_x86_feature_detected!("f16c")
        {
            return Level::V3;
        }
    }
    Level::Scalar
}

/// The best level this CPU supports (detected once).
pub fn detected() -> Level {
    static LEVEL: OnceLock<Level> = OnceLock::new();
    *LEVEL.get_or_init(detect)
}

thread_local! {
    static CAP: Cell<Option<Level>> = const { Cell::new(None) };
}

/// The level kernels on this thread run at: the detected level, lowered by [`with_level`].
pub fn level() -> Level {
    let d = detected();
    match CAP.with(Cell::get) {
        Some(cap) if cap < d => cap,
        _ => d,
    }
}

/// Runs `f` with kernels on this thread capped at `cap` (used by tests and benchmarks to compare
/// the vector path with the fallback). A cap above the detected level has no effect.
pub fn with_level<R>(cap: Level, f: impl FnOnce() -> R) -> R {
    let prev = CAP.with(|c| c.replace(Some(cap)));
    struct Restore(Option<Level>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let p = self.0;
            CAP.with(|c| c.set(p));
        }
    }
    let _restore = Restore(prev);
    f()
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c")]
unsafe fn run_v4<R>(f: impl FnOnce() -> R) -> R {
    f()
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn run_v3<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// Runs the kernel body `f` compiled for the current [`level`]. `f` should be a closure that calls
/// `#[inline(always)]` loops, so that they are inlined into (and vectorized for) the trampoline.
#[inline(always)]
pub fn dispatch<R>(f: impl FnOnce() -> R) -> R {
    match level() {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        // SAFETY: `level()` never exceeds the detected level, so the CPU has these features.
        Level::V4 => unsafe { run_v4(f) },
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        // SAFETY: as above.
        Level::V3 => unsafe { run_v3(f) },
        _ => f(),
    }
}

/// Sum of `xs` in the fixed lane-wise order shared by every level: element `i` goes to partial
/// sum `i % LANES`, and the partial sums are added pairwise. Both the vector path and the fallback
/// call this, so they agree bit for bit.
#[inline(always)]
pub fn sum_lanes(xs: &[f32]) -> f32 {
    let mut acc = [0.0f32; LANES];
    let mut chunks = xs.chunks_exact(LANES);
    for c in &mut chunks {
        for j in 0..LANES {
            acc[j] += c[j];
        }
    }
    for (j, &x) in chunks.remainder().iter().enumerate() {
        acc[j] += x;
    }
    combine_lanes(acc)
}

/// Pairwise combination of the [`LANES`] partial sums (a fixed tree).
#[inline(always)]
pub fn combine_lanes(mut acc: [f32; LANES]) -> f32 {
    let mut width = LANES / 2;
    while width > 0 {
        for j in 0..width {
            acc[j] += acc[j + width];
        }
        width /= 2;
    }
    acc[0]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cap_lowers_and_restores() {
        let d = detected();
        with_level(Level::Scalar, || assert_eq!(level(), Level::Scalar));
        assert_eq!(level(), d);
    }

    #[test]
    fn sum_lanes_same_at_every_level() {
        let xs: Vec<f32> = (0..1001)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) * 1e-3)
            .collect();
        let v = dispatch(|| sum_lanes(&xs));
        let s = with_level(Level::Scalar, || dispatch(|| sum_lanes(&xs)));
        assert_eq!(v.to_bits(), s.to_bits());
        let naive: f64 = xs.iter().map(|&x| x as f64).sum();
        assert!((v as f64 - naive).abs() < 1e-4);
    }
}
