//! A keystroke that leaves a 10,000-node draft not JSON (the editor's recovery: a bare word
//! typed before a node's `config`) against one that keeps it JSON (a digit typed into a
//! node's query), each from the intact draft, on a file kept as the language server keeps
//! it (`SourceFile::edited`): `set_text` and the report, the salsa part of an edit.
//! `cargo bench -p little-conformance --bench recovery` (docs/benchmarks.md has the figures).

use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use little_conformance::generate::draft;
use little_diagnostics::{Code, Severity};
use little_frontend::catalog::DEFAULT_CATALOG;
use little_passes::{Database, SourceFile, Workspace, report};
use salsa::Setter;

fn keystrokes(c: &mut Criterion) {
    const NODES: usize = 10_000;
    let intact = draft(NODES, 42);
    let marker = "\"query\":\"";
    let at = intact[intact.len() / 2..].find(marker).expect("a retrieval past the middle") + intact.len() / 2;
    let valid = format!("{}9{}", &intact[..at + marker.len()], &intact[at + marker.len()..]);
    let config = intact[..at].rfind("\"config\":").expect("the retrieval's config");
    let broken = format!("{}inn {}", &intact[..config], &intact[config..]);

    let mut db = Database::default();
    let catalog = SourceFile::new(&db, "catalog.json".into(), DEFAULT_CATALOG.into());
    let workspace = Workspace::new(&db, catalog, None, None, None);
    let file = SourceFile::edited(&db, "draft.json".into(), intact.as_str().into());
    let faults = |report: &little_passes::FileReport| -> Vec<Code> {
        report.diagnostics.iter().filter(|d| d.severity() != Severity::Info).map(|d| d.code).collect()
    };
    assert_eq!(faults(&report(&db, workspace, file)), []);
    file.set_text(&mut db).to(broken.as_str().into());
    assert_eq!(faults(&report(&db, workspace, file)), [Code::ParseInvalidJson], "the recovery says the fault alone");

    let mut group = c.benchmark_group("keystroke_10k");
    group.sample_size(20).sampling_mode(SamplingMode::Flat).measurement_time(Duration::from_secs(10));
    for (name, edited) in [("valid_edit", &valid), ("broken_edit", &broken)] {
        group.bench_function(name, |b| {
            b.iter_custom(|iterations| {
                let mut total = Duration::ZERO;
                for _ in 0..iterations {
                    // Back to the intact draft, outside the timing.
                    file.set_text(&mut db).to(intact.as_str().into());
                    report(&db, workspace, file);
                    let next: std::sync::Arc<str> = edited.as_str().into();
                    let began = Instant::now();
                    file.set_text(&mut db).to(next);
                    std::hint::black_box(report(&db, workspace, file));
                    total += began.elapsed();
                }
                total
            })
        });
    }
    group.finish();
}

criterion_group!(benches, keystrokes);
criterion_main!(benches);
