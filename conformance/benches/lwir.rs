//! Throughput of `little check` on generated LWIR chains (`little_conformance::lwir`).
//!
//! - `lwir/check/N`: one LWIR of N steps in a fresh database (parse, lower, every check,
//!   the WorkflowVersion), as `check_lwir_text` runs it.
//! - `lwir/prompt_edit/1000`: a long-lived database holding a 1,000-step LWIR; every
//!   iteration sets the text to the other of two versions differing in one step's prompt.
//!
//! `cargo bench -p little-conformance --bench lwir`

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use little_conformance::lwir::chain;
use little_frontend::catalog::DEFAULT_CATALOG;
use little_passes::lwir::check_lwir_text;
use little_passes::{Database, SourceFile, Workspace, report};
use salsa::Setter;

fn check(c: &mut Criterion) {
    let mut group = c.benchmark_group("lwir/check");
    group.sample_size(20).measurement_time(Duration::from_secs(8));
    for steps in [100usize, 1_000] {
        let text = chain(steps, |i| format!("step {i}"));
        assert!(check_lwir_text(&text, None).version.is_some(), "the generated LWIR is clean");
        group.throughput(Throughput::Elements(steps as u64));
        group.bench_with_input(BenchmarkId::from_parameter(steps), &text, |b, text| {
            b.iter(|| check_lwir_text(black_box(text), None))
        });
    }
    group.finish();
}

fn incremental(c: &mut Criterion) {
    const STEPS: usize = 1_000;
    let versions = [
        chain(STEPS, |i| format!("step {i}")),
        chain(STEPS, |i| format!("step {i}{}", if i == 500 { "!" } else { "" })),
    ];
    let mut db = Database::default();
    let catalog = SourceFile::new(&db, "catalog.json".into(), DEFAULT_CATALOG.into());
    let workspace = Workspace::new(&db, catalog, None, None, None);
    let file = SourceFile::new(&db, "w.lwir.json".into(), versions[0].as_str().into());
    assert!(report(&db, workspace, file).candidate.is_some());
    let mut next = 1;
    let mut group = c.benchmark_group("lwir/prompt_edit");
    group.sample_size(20).measurement_time(Duration::from_secs(8));
    group.bench_function(BenchmarkId::from_parameter(STEPS), |b| {
        b.iter(|| {
            file.set_text(&mut db).to(versions[next].as_str().into());
            next = 1 - next;
            black_box(report(&db, workspace, file))
        })
    });
    group.finish();
}

criterion_group!(benches, check, incremental);
criterion_main!(benches);
