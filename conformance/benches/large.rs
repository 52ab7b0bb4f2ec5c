//! `check` of one 1,000,000-node draft, and of the 100,000-node draft in the same
//! run, so that the growth from one to the other is a ratio of one run: time, on one core.
//! Ten samples each (about three minutes for the million): run it on purpose,
//! `cargo bench -p little-conformance --bench large`; peak memory is measured on the CLI
//! (docs/benchmarks.md).
//!
//! Throughput is in bytes of draft: the generated ids, titles and queries carry the node's
//! number, so a node of the million-node draft is 2% longer than one of the 100,000-node
//! draft (346.2 against 339.4 bytes), and parsing and hashing are work per byte. Equal
//! throughput at both sizes is growth linear in the draft.
//!
//! Each size is measured in a process of its own, as `little check` runs one: the
//! benchmark runs itself once per size. In one process, the million was measured on the
//! heap the 100,000-node checks and criterion's analysis of them had left behind, and took
//! 2% longer than alone (4.74 s against 4.64 s, docs/benchmarks.md): a figure of the
//! harness, not of the draft.

use std::hint::black_box;
use std::process::Command;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};
use little_conformance::generate::draft;
use little_conformance::{Setup, check_text};

/// The sizes, and how long each is measured (ten samples).
const SIZES: [(usize, u64); 2] = [(100_000, 20), (1_000_000, 150)];

/// Set in the process that measures one size: its node count.
const NODES_VAR: &str = "LITTLE_BENCH_GROWTH_NODES";

fn main() {
    let Ok(nodes) = std::env::var(NODES_VAR) else {
        let this = std::env::current_exe().expect("the benchmark's own path");
        for (nodes, _) in SIZES {
            let status = Command::new(&this)
                .args(std::env::args_os().skip(1))
                .env(NODES_VAR, nodes.to_string())
                .status()
                .expect("the benchmark runs itself");
            assert!(status.success(), "measuring {nodes} nodes failed: {status}");
        }
        return;
    };
    let nodes: usize = nodes.parse().expect("a node count");
    let (_, seconds) = SIZES.into_iter().find(|&(n, _)| n == nodes).expect("one of the sizes");
    // As `little check` runs (db::keep_freed_memory).
    little_passes::db::keep_freed_memory();
    let setup = Setup::default();
    let mut criterion = Criterion::default().warm_up_time(Duration::from_secs(1)).configure_from_args();
    let mut group = criterion.benchmark_group("growth");
    group.sample_size(10).sampling_mode(SamplingMode::Flat);
    let text = draft(nodes, 42);
    group.throughput(Throughput::Bytes(text.len() as u64)).measurement_time(Duration::from_secs(seconds));
    group.bench_with_input(BenchmarkId::from_parameter(nodes), &text, |b, text| {
        b.iter(|| check_text(black_box(text), &setup))
    });
    group.finish();
    criterion.final_summary();
}
