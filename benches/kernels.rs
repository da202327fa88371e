//! Kernel benchmarks: f32 GEMM 1024³ on one thread (FLOP/s) and streaming element-wise kernels
//! over 16 M f32 (bytes/s), at the CPU's detected SIMD level and at the scalar fallback.
//!
//! Criterion's `thrpt` line gives the figures: for matmul the "elements" are floating-point
//! operations (2·M·N·K), for the streaming kernels the bytes moved (3 arrays × 4 bytes per element:
//! read x, read y, write y/out). A one-line summary per kernel is also printed to stderr.

use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use gemm::Parallelism;
use irw::kernels::f32_to_bf16_slice;
use irw::kernels::Rng;
use irw::kernels::{add_slices, axpy};
use irw::kernels::{detected, with_level, Level};
use irw::kernels::{gemm_into, MatRef};

const N_MM: usize = 1024;
const N_STREAM: usize = 16 << 20;

fn summary(name: &str, unit: &str, work: f64, mut f: impl FnMut()) {
    f();
    let reps = 10;
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed().as_secs_f64());
    }
    eprintln!(
        "summary: {name}: {:.1} {unit} (best of {reps})",
        work / best / 1e9
    );
}

/// The core's f32 FMA peak, measured: 12 independent AVX-512 FMA chains (enough to cover the
/// latency on current x86 cores). Reported next to the GEMM figure, since the two differ by CPU
/// (Sapphire Rapids: 2 × 512-bit FMA per cycle; Zen 4: 512-bit ops on 256-bit units).
#[cfg(target_arch = "x86_64")]
fn fma_peak_gflops() -> Option<f64> {
    use std::arch::x86_64::*;
    #[target_feature(enable = "avx512f")]
    unsafe fn chains(iters: usize) -> f32 {
        let mut acc = [_mm512_set1_ps(0.0); 12];
        let m = _mm512_set1_ps(0.999_999);
        let a = _mm512_set1_ps(1e-7);
        for _ in 0..iters {
            for r in acc.iter_mut() {
                *r = _mm512_fmadd_ps(*r, m, a);
            }
        }
        let mut s = _mm512_set1_ps(0.0);
        for r in acc {
            s = _mm512_add_ps(s, r);
        }
        _mm512_reduce_add_ps(s)
    }
    if detected() != Level::V4 {
        return None;
    }
    let iters = 20_000_000;
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let t = Instant::now();
        // SAFETY: AVX-512F was detected.
        black_box(unsafe { chains(iters) });
        best = best.min(t.elapsed().as_secs_f64());
    }
    Some((iters * 12 * 16 * 2) as f64 / best / 1e9)
}

#[cfg(not(target_arch = "x86_64"))]
fn fma_peak_gflops() -> Option<f64> {
    None
}

fn bench_matmul(c: &mut Criterion) {
    if let Some(p) = fma_peak_gflops() {
        eprintln!("summary: measured f32 FMA peak of one core: {p:.1} GFLOP/s");
    }
    let mut rng = Rng::new(1);
    let a = rng.normal_vec(N_MM * N_MM);
    let b = rng.normal_vec(N_MM * N_MM);
    let mut dst = vec![0.0f32; N_MM * N_MM];
    let flops = 2.0 * (N_MM as f64).powi(3);
    let mut run = || {
        let am = MatRef {
            data: &a,
            off: 0,
            rows: N_MM,
            cols: N_MM,
            rs: N_MM,
            cs: 1,
        };
        let bm = MatRef {
            data: &b,
            off: 0,
            rows: N_MM,
            cols: N_MM,
            rs: N_MM,
            cs: 1,
        };
        gemm_into(&mut dst, am, bm, Parallelism::None);
        black_box(&dst);
    };
    eprintln!("SIMD level detected: {:?}", detected());
    summary("matmul f32 1024^3, 1 thread", "GFLOP/s", flops, &mut run);
    let mut g = c.benchmark_group("matmul");
    g.throughput(Throughput::Elements(flops as u64));
    g.sample_size(20);
    g.bench_function("f32_1024_1thread", |bch| bch.iter(&mut run));
    g.finish();
}

fn bench_stream(c: &mut Criterion) {
    let mut rng = Rng::new(2);
    let x = rng.normal_vec(N_STREAM);
    let y0 = rng.normal_vec(N_STREAM);
    let mut y = y0.clone();
    let mut out = vec![0.0f32; N_STREAM];
    let mut bf = vec![half::bf16::ZERO; N_STREAM];
    let bytes = (3 * 4 * N_STREAM) as f64;
    for (lvl, tag) in [(Level::V4, "simd"), (Level::Scalar, "fallback")] {
        with_level(lvl, || {
            summary(&format!("add 16M f32 ({tag})"), "GB/s", bytes, || {
                add_slices(&x, &y0, &mut out)
            });
            summary(&format!("axpy 16M f32 ({tag})"), "GB/s", bytes, || {
                axpy(1e-3, &x, &mut y)
            });
            // f32 -> bf16 moves 6 bytes per element
            summary(
                &format!("f32->bf16 16M ({tag})"),
                "GB/s",
                (6 * N_STREAM) as f64,
                || f32_to_bf16_slice(&x, &mut bf),
            );
        });
    }
    let mut g = c.benchmark_group("stream_16M_f32");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.sample_size(20);
    g.bench_function("add", |b| {
        b.iter(|| add_slices(black_box(&x), black_box(&y0), &mut out))
    });
    g.bench_function("axpy", |b| b.iter(|| axpy(1e-3, black_box(&x), &mut y)));
    g.bench_function("add_fallback", |b| {
        b.iter(|| {
            with_level(Level::Scalar, || {
                add_slices(black_box(&x), black_box(&y0), &mut out)
            })
        })
    });
    g.finish();
    let mut g = c.benchmark_group("cast_16M");
    g.throughput(Throughput::Bytes((6 * N_STREAM) as u64));
    g.sample_size(20);
    g.bench_function("f32_to_bf16", |b| {
        b.iter(|| f32_to_bf16_slice(black_box(&x), &mut bf))
    });
    g.finish();
}

criterion_group!(benches, bench_matmul, bench_stream);
criterion_main!(benches);
