//! The Rust side of the host-language packages' goals (docs/benchmarks.md): what a
//! binding's call costs beyond it is the binding's overhead.
//!
//! - `embed/check/quarterly-report`: `little_embed::check` of the bundled example with its
//!   context and binding rows, as `check()` of the npm and Python packages runs it;
//! - `embed/update/10000` against `embed/check/10000`: a one-node edit (a retrieval's
//!   `query`) through `Workspace::update` on an open 10,000-node draft, against a fresh
//!   check of the same draft.
//!
//! `cargo bench -p little-embed --bench embed`

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use little_embed::{Change, Documents, Edit, Encoding, Position, Workspace};

fn read(path: &str) -> Vec<u8> {
    std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)).unwrap()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("embed");
    group.measurement_time(Duration::from_secs(8)).sample_size(30);
    let documents = Documents {
        context: Some(read("examples/context.json")),
        bindings: Some(read("examples/bindings.json")),
        ..Documents::default()
    };
    let example = read("examples/quarterly-report.json");
    let report = little_embed::check(&example, "quarterly-report.json", &documents).unwrap();
    assert_eq!(report["summary"]["blocking"], 0);
    group.bench_function("check/quarterly-report", |b| {
        b.iter(|| little_embed::check(black_box(&example), "quarterly-report.json", &documents).unwrap())
    });

    let text = little_conformance::generate::draft(10_000, 42);
    let none = Documents::default();
    group.bench_function("check/10000", |b| b.iter(|| little_embed::check(text.as_bytes(), "draft.json", &none)));
    // The `query` of the retrieval nearest the middle of the text, edited in place: two
    // edits that undo each other, as a person types a character and deletes it.
    let marker = "\"query\":\"";
    let at = text[text.len() / 2..].find(marker).unwrap() + text.len() / 2 + marker.len();
    let line = text[..at].matches('\n').count() as u32;
    let character = (at - text[..at].rfind('\n').map_or(0, |n| n + 1)) as u32;
    let start = Position { line, character };
    let typed = Edit { start, end: start, text: "x".into() };
    let erased = Edit { start, end: Position { line, character: character + 1 }, text: String::new() };
    let mut workspace = Workspace::new(&none, Encoding::Utf16).unwrap();
    let opened = workspace.open("draft.json", &text).unwrap();
    assert_eq!(opened["summary"]["errors"], 0);
    let mut flip = false;
    group.bench_function("update/10000", |b| {
        b.iter(|| {
            flip = !flip;
            let edit = if flip { typed.clone() } else { erased.clone() };
            workspace.update("draft.json", Change::Edits(vec![edit])).unwrap()
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(2));
    targets = bench
}
criterion_main!(benches);
