//! The MCP server's goal (docs/benchmarks.md): a `check` of the bundled example through
//! `little mcp` (a running server; the time the client waits, request written to result
//! read) within 2× of the in-process call, with the CLI process beside them.
//!
//! - `mcp/in_process`: `little_embed::check` of `examples/quarterly-report.json`;
//! - `mcp/call`: the same `check` (`text`) through a running `little mcp`, from the `rmcp`
//!   client over its stdio;
//! - `mcp/cli_process`: `little check --format json examples/quarterly-report.json`, a
//!   process a check.
//!
//! The server is `LITTLE_BIN` (default: the workspace's `target/release/little`; build it
//! with `cargo build --release --bin little`): `bash mcp/bench.sh` does both.

use std::hint::black_box;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use little_embed::Documents;
use little_mcp::client::Server;
use serde_json::{Map, Value, json};

const EXAMPLE: &str = "examples/quarterly-report.json";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn little() -> PathBuf {
    std::env::var_os("LITTLE_BIN").map(PathBuf::from).unwrap_or_else(|| {
        let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), PathBuf::from);
        target.join("release/little")
    })
}

fn bench(c: &mut Criterion) {
    let text = std::fs::read_to_string(root().join(EXAMPLE)).unwrap();
    let documents = Documents::default();
    let in_process = little_embed::check(text.as_bytes(), EXAMPLE, &documents).unwrap();

    let mut command = Command::new(little());
    command.arg("mcp").current_dir(root());
    let mut server = Server::start(command, "little mcp", Duration::from_secs(30)).expect("little mcp starts");
    let arguments: Map<String, Value> = json!({ "text": text, "name": EXAMPLE }).as_object().unwrap().clone();
    let answered = server.call("check", arguments.clone()).unwrap();
    assert_eq!(answered["structuredContent"], in_process, "the server's report is the in-process one");

    let mut group = c.benchmark_group("mcp");
    group.measurement_time(Duration::from_secs(8)).sample_size(50);
    group.bench_function("in_process", |b| {
        b.iter(|| little_embed::check(black_box(text.as_bytes()), EXAMPLE, &documents).unwrap())
    });
    group.bench_function("call", |b| b.iter(|| server.call("check", black_box(arguments.clone())).unwrap()));
    group.bench_function("cli_process", |b| {
        b.iter(|| {
            let out = Command::new(little())
                .args(["check", "--format", "json", EXAMPLE])
                .current_dir(root())
                .output()
                .unwrap();
            assert!(out.status.success());
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
