//! `check` of one 1,000,000-node draft (issue 7), and of the 100,000-node draft in the same
//! run, so that the growth from one to the other is a ratio of one run: time, on one core.
//! Ten samples each (about two minutes for the million): run it on purpose,
//! `cargo bench -p little-conformance --bench large`; peak memory is measured on the CLI
//! (docs/benchmarks.md).

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use little_conformance::generate::draft;
use little_conformance::{Setup, check_text};

fn growth(c: &mut Criterion) {
    // As `little check` runs (db::keep_freed_memory).
    little_passes::db::keep_freed_memory();
    let setup = Setup::default();
    let mut group = c.benchmark_group("growth");
    group.sample_size(10).sampling_mode(SamplingMode::Flat);
    for (nodes, seconds) in [(100_000usize, 20), (1_000_000, 150)] {
        let text = draft(nodes, 42);
        group.throughput(Throughput::Elements(nodes as u64)).measurement_time(Duration::from_secs(seconds));
        group.bench_with_input(BenchmarkId::from_parameter(nodes), &text, |b, text| {
            b.iter(|| check_text(black_box(text), &setup))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1));
    targets = growth
}
criterion_main!(benches);
