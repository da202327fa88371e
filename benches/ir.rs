//! Criterion benchmarks of the IR foundation: parse, verify and print generated MLP programs of
//! about 10^3, 10^4, 10^5 and (with `IRW_BENCH_1M=1`) 10^6 ops.
//!
//! `cargo bench --bench ir`. The end-to-end table with peak memory is `benches/scaling.sh`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use irw::generate::{mlp, MlpOptions};
use irw::verify_module;
use irw::SourceFile;
use irw::{parse_module, print_module};
use std::num::NonZeroUsize;

/// Layer counts giving about 10^3 .. 10^6 ops (main + startup, ~17 ops per layer).
fn sizes() -> Vec<usize> {
    let mut v = vec![60, 600, 6_000];
    if std::env::var_os("IRW_BENCH_1M").is_some() {
        v.push(60_000);
    }
    v
}

fn program(layers: usize) -> SourceFile {
    let opts = MlpOptions::with_layers(NonZeroUsize::new(layers).expect("layers > 0"));
    SourceFile::new(format!("mlp{layers}.ir"), mlp(&opts))
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("ir");
    g.sample_size(10);
    for layers in sizes() {
        let src = program(layers);
        let m = parse_module(&src).expect("generated programs parse");
        let ops = m.num_ops() as u64;
        g.throughput(Throughput::Elements(ops));
        g.bench_with_input(BenchmarkId::new("parse", ops), &src, |b, s| {
            b.iter(|| parse_module(s).expect("parses"))
        });
        g.bench_with_input(BenchmarkId::new("verify", ops), &m, |b, m| {
            b.iter(|| verify_module(m).is_ok())
        });
        g.bench_with_input(BenchmarkId::new("print", ops), &m, |b, m| {
            b.iter(|| print_module(m).len())
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
