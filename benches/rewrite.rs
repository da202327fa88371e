//! Criterion benchmarks of the rewrite engine on generated data-parallel MLPs of about 10^3,
//! 10^4 and 10^5 ops (10^6 with `IRW_BENCH_1M=1`): `rules/grad_merge.rw` with hoist_reduce on
//! f32 programs (`grad_merge`) and with master_grad too on bf16 ones (`grad_merge_bf16`), and
//! `rules/canonicalize.rw`, the e-graph (`canonicalize`). `cargo bench --bench rewrite`.

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use irw::generate::{mlp, Dtype, MlpOptions};
use irw::parse_module;
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

fn load(file: &str, params: &[(&str, &str)]) -> irw::RuleSet {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let params: Vec<(String, String)> = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    irw::load_rules(&[root.join(file)], &params).expect("the shipped rules load")
}

fn bench(c: &mut Criterion) {
    let grad_merge = load("rules/grad_merge.rw", &[("k_steps", "4")]);
    let canonicalize = load("rules/canonicalize.rw", &[]);
    let mut g = c.benchmark_group("rewrite");
    g.sample_size(10);
    for layers in sizes() {
        for (label, dtype, rules) in [
            ("grad_merge", Dtype::F32, &grad_merge),
            ("grad_merge_bf16", Dtype::Bf16, &grad_merge),
            ("canonicalize", Dtype::F32, &canonicalize),
        ] {
            let opts = MlpOptions {
                allreduce: true,
                dtype,
                ..MlpOptions::with_layers(NonZeroUsize::new(layers).expect("layers > 0"))
            };
            let src = SourceFile::new("mlp.ir", mlp(&opts));
            let m = parse_module(&src).expect("generated programs parse");
            g.throughput(Throughput::Elements(m.num_ops() as u64));
            g.bench_function(BenchmarkId::new(label, m.num_ops()), |b| {
                b.iter_batched(
                    || m.clone(),
                    |mut m| irw::rewrite(&mut m, rules, &Default::default()).expect("applies"),
                    BatchSize::LargeInput,
                )
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
