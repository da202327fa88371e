//! Criterion benchmarks of the rewrite engine: `rules/grad_merge.rw` (with master_grad and
//! hoist_reduce) on generated data-parallel MLPs of about 10^3, 10^4 and 10^5 ops (10^6 with
//! `IRW_BENCH_1M=1`). `cargo bench --bench rewrite`.

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use irw::gen::{mlp, MlpOptions};
use irw::ir::parse_module;
use irw::SourceFile;
use std::num::NonZeroUsize;
use std::path::PathBuf;

fn sizes() -> Vec<usize> {
    let mut v = vec![60, 600, 6_000];
    if std::env::var_os("IRW_BENCH_1M").is_some() {
        v.push(60_000);
    }
    v
}

fn bench(c: &mut Criterion) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let rules = irw::rules::load(
        &[root.join("rules/grad_merge.rw")],
        &[("k_steps".to_string(), "4".to_string())],
    )
    .expect("the shipped rules load");
    let mut g = c.benchmark_group("rewrite");
    g.sample_size(10);
    for layers in sizes() {
        let opts = MlpOptions {
            allreduce: true,
            ..MlpOptions::with_layers(NonZeroUsize::new(layers).expect("layers > 0"))
        };
        let src = SourceFile::new("mlp.ir", mlp(&opts));
        let m = parse_module(&src).expect("generated programs parse");
        g.throughput(Throughput::Elements(m.num_ops() as u64));
        g.bench_function(BenchmarkId::new("grad_merge", m.num_ops()), |b| {
            b.iter_batched(
                || m.clone(),
                |mut m| irw::rewrite::apply(&mut m, &rules, &Default::default()).expect("applies"),
                BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
