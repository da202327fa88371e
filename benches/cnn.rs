//! Kernel benchmarks of convolutional models at a ResNet-block size: `conv2d` 3×3, 64 → 64
//! channels, padding 1, on N = 8 images of 56×56 (forward, and backward with both gradients),
//! and `batch_norm` in training mode on the same activations (forward, and backward), one thread.
//!
//! Throughput: for the convolution the "elements" are floating-point operations (forward
//! 2·N·O·OH·OW·C·KH·KW; backward twice that, the input and the filter gradient); for batch norm
//! the bytes the kernel must at least move (forward: read x, write y; backward: read x and dy,
//! write dx), as its arithmetic is a few operations per element. A one-line summary per kernel
//! is printed to stderr.

use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use irw::executor::Tensor;
use irw::kernels::Rng;
use irw::kernels::{batch_norm, batch_norm_grad, BatchNormAttrs};
use irw::kernels::{conv2d, conv2d_grad, ConvAttrs, PaddingAlgorithm};

const N: usize = 8;
const C: usize = 64;
const HW: usize = 56;

fn summary(name: &str, unit: &str, work: f64, reps: usize, mut f: impl FnMut()) {
    f();
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed().as_secs_f64());
    }
    eprintln!(
        "summary: {name}: {:.1} {unit} ({:.1} ms, best of {reps})",
        work / best / 1e9,
        best * 1e3
    );
}

fn bench_conv(c: &mut Criterion) {
    let mut rng = Rng::new(3);
    let x = Tensor::f32(&[N, C, HW, HW], rng.normal_vec(N * C * HW * HW));
    let w = Tensor::f32(&[C, C, 3, 3], rng.normal_vec(C * C * 9));
    let at = ConvAttrs {
        strides: vec![1, 1],
        paddings: vec![1, 1],
        dilations: vec![1, 1],
        groups: 1,
        padding_algorithm: PaddingAlgorithm::Explicit,
        channels_last: false,
    };
    let dy = Tensor::f32(&[N, C, HW, HW], rng.normal_vec(N * C * HW * HW));
    let fwd = 2.0 * (N * C * HW * HW * C * 9) as f64;
    let label = "conv2d 3x3 64->64 N=8 56x56";
    summary(&format!("{label} forward"), "GFLOP/s", fwd, 3, || {
        black_box(conv2d(&x, &w, &at).expect("conv2d"));
    });
    summary(
        &format!("{label} backward"),
        "GFLOP/s",
        2.0 * fwd,
        3,
        || {
            black_box(conv2d_grad(&x, &w, &dy, &at, true).expect("conv2d_grad"));
        },
    );
    let mut g = c.benchmark_group("conv2d");
    g.sample_size(10);
    g.throughput(Throughput::Elements(fwd as u64));
    g.bench_function("forward_n8_c64_56x56_3x3", |b| {
        b.iter(|| black_box(conv2d(&x, &w, &at).expect("conv2d")))
    });
    g.throughput(Throughput::Elements(2 * fwd as u64));
    g.bench_function("backward_n8_c64_56x56_3x3", |b| {
        b.iter(|| black_box(conv2d_grad(&x, &w, &dy, &at, true).expect("conv2d_grad")))
    });
    g.finish();
}

fn bench_batch_norm(c: &mut Criterion) {
    let mut rng = Rng::new(4);
    let n = N * C * HW * HW;
    let x = Tensor::f32(&[N, C, HW, HW], rng.normal_vec(n));
    let dy = Tensor::f32(&[N, C, HW, HW], rng.normal_vec(n));
    let p = |v: f32| Tensor::f32(&[C], vec![v; C]);
    let (mean, var, scale, bias) = (p(0.0), p(1.0), p(1.0), p(0.0));
    let at = BatchNormAttrs {
        is_test: false,
        momentum: 0.9,
        epsilon: 1e-5,
        channels_last: false,
        use_global_stats: false,
        trainable_statistics: false,
    };
    let o = batch_norm(&x, &mean, &var, &scale, &bias, &at).expect("batch_norm");
    let (fwd_bytes, bwd_bytes) = ((2 * 4 * n) as f64, (3 * 4 * n) as f64);
    let label = "batch_norm train N=8 C=64 56x56";
    summary(&format!("{label} forward"), "GB/s", fwd_bytes, 5, || {
        black_box(batch_norm(&x, &mean, &var, &scale, &bias, &at).expect("batch_norm"));
    });
    let grad = || {
        batch_norm_grad(
            &x,
            &scale,
            &mean,
            &var,
            &o.saved_mean,
            &o.saved_variance,
            &dy,
            &at,
        )
        .expect("batch_norm_grad")
    };
    summary(&format!("{label} backward"), "GB/s", bwd_bytes, 5, || {
        black_box(grad());
    });
    let mut g = c.benchmark_group("batch_norm");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(fwd_bytes as u64));
    g.bench_function("forward_n8_c64_56x56", |b| {
        b.iter(|| black_box(batch_norm(&x, &mean, &var, &scale, &bias, &at).expect("bn")))
    });
    g.throughput(Throughput::Bytes(bwd_bytes as u64));
    g.bench_function("backward_n8_c64_56x56", |b| b.iter(|| black_box(grad())));
    g.finish();
}

criterion_group!(benches, bench_conv, bench_batch_norm);
criterion_main!(benches);
