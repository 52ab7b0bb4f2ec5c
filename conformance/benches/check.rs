//! Throughput of `little check` on generated drafts (docs/benchmarks.md).
//!
//! - `check/N`: the full pipeline of one draft of N nodes in a fresh database (parse,
//!   lower, every check, hashes, candidate), as `check_text` runs it, teardown included.
//! - `incremental/config_edit_10000`: one long-lived database holding a 10,000-node
//!   draft; every iteration sets the text to the other of two versions that differ in one
//!   node's config value, then reports again.
//! - `incremental/full_check_10000`: the same draft checked from scratch, for comparison.
//! - `layers/{without_context,with_context}/100000`: the 100,000-node draft without a
//!   context (the tenant, registry and schedule-policy passes do not run) and with a
//!   context and binding rows that accept everything (every pass runs).
//!
//! `cargo bench -p little-conformance --bench check`

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use little_conformance::generate::{accepting_context, draft};
use little_conformance::{Setup, check_text, codes};
use little_frontend::catalog::DEFAULT_CATALOG;
use little_passes::{Database, SourceFile, Workspace, report};
use salsa::Setter;

const SEED: u64 = 42;

fn check(c: &mut Criterion) {
    // As `little check` runs (db::keep_freed_memory); the benchmarks below run after this.
    little_passes::db::keep_freed_memory();
    let mut group = c.benchmark_group("check");
    for nodes in [1_000usize, 10_000, 100_000] {
        let text = draft(nodes, SEED);
        let setup = Setup::default();
        assert!(check_text(&text, &setup).candidate.is_some(), "the generated draft is valid");
        group.throughput(Throughput::Elements(nodes as u64));
        if nodes >= 100_000 {
            group.sample_size(10).sampling_mode(SamplingMode::Flat).measurement_time(Duration::from_secs(30));
        } else {
            group.sample_size(20).sampling_mode(SamplingMode::Auto).measurement_time(Duration::from_secs(8));
        }
        group.bench_with_input(BenchmarkId::from_parameter(nodes), &text, |b, text| {
            b.iter(|| check_text(black_box(text), &setup))
        });
    }
    group.finish();
}

fn layers(c: &mut Criterion) {
    const NODES: usize = 100_000;
    let text = draft(NODES, SEED);
    let with = Setup { context: Some(accepting_context()), ..Setup::default() };
    let report = check_text(&text, &with);
    assert!(codes(&report).is_empty() && report.candidate.is_some(), "{:?}", &report.diagnostics[..1]);
    let mut group = c.benchmark_group("layers");
    group
        .throughput(Throughput::Elements(NODES as u64))
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .measurement_time(Duration::from_secs(30));
    for (name, setup) in [("without_context", Setup::default()), ("with_context", with)] {
        group.bench_with_input(BenchmarkId::new(name, NODES), &text, |b, text| {
            b.iter(|| check_text(black_box(text), &setup))
        });
    }
    group.finish();
}

/// The same 10,000-node draft, with the `query` of the retrieval nearest the middle of
/// the text changed: a one-node config edit.
fn two_versions(nodes: usize) -> (String, String) {
    let original = draft(nodes, SEED);
    let marker = "\"query\":\"";
    let at = original[original.len() / 2..].find(marker).expect("a retrieval past the middle") + original.len() / 2;
    let mut edited = original.clone();
    edited.insert_str(at + marker.len(), "/* edited */ ");
    (original, edited)
}

fn incremental(c: &mut Criterion) {
    const NODES: usize = 10_000;
    let (original, edited) = two_versions(NODES);
    let mut group = c.benchmark_group("incremental");
    group.throughput(Throughput::Elements(NODES as u64)).sample_size(20).measurement_time(Duration::from_secs(8));

    let mut db = Database::default();
    let catalog = SourceFile::new(&db, "catalog.json".into(), DEFAULT_CATALOG.into());
    let workspace = Workspace::new(&db, catalog, None, None, None);
    let file = SourceFile::new(&db, "draft.json".into(), original.as_str().into());
    let first = report(&db, workspace, file);
    assert!(first.candidate.is_some() && codes(&first).is_empty(), "the generated draft is valid");
    let hash_of = |r: &little_passes::FileReport| r.draft_candidate().map(|c| c.topology_hash.clone());
    file.set_text(&mut db).to(edited.as_str().into());
    assert_ne!(hash_of(&report(&db, workspace, file)), hash_of(&first), "the edit reaches the topology");

    // Alternate: the next text is always the other version. The clone is made outside
    // the timing; setting it (and dropping the replaced text) is inside.
    let mut flip = false;
    group.bench_function(BenchmarkId::new("config_edit", NODES), |b| {
        b.iter_batched(
            || {
                flip = !flip;
                if flip { original.clone() } else { edited.clone() }
            },
            |text| {
                file.set_text(&mut db).to(text.as_str().into());
                report(&db, workspace, file)
            },
            BatchSize::PerIteration,
        )
    });
    let setup = Setup::default();
    group
        .bench_function(BenchmarkId::new("full_check", NODES), |b| b.iter(|| check_text(black_box(&original), &setup)));
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(2));
    targets = check, incremental, layers
}
criterion_main!(benches);
