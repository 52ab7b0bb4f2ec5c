//! `check` of one 1,000,000-node draft (issue 7): time, on one core, for the growth from
//! 100,000 nodes (`benches/check.rs`). Ten samples of about 30 s each: run it on purpose,
//! `cargo bench -p little-conformance --bench large`; peak memory is measured on the CLI
//! (docs/benchmarks.md).

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use little_conformance::generate::draft;
use little_conformance::{Setup, check_text};

fn million(c: &mut Criterion) {
    const NODES: usize = 1_000_000;
    let text = draft(NODES, 42);
    let setup = Setup::default();
    let mut group = c.benchmark_group("check");
    group
        .throughput(Throughput::Elements(NODES as u64))
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .measurement_time(Duration::from_secs(300));
    group.bench_with_input(BenchmarkId::from_parameter(NODES), &text, |b, text| {
        b.iter(|| check_text(black_box(text), &setup))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1));
    targets = million
}
criterion_main!(benches);
