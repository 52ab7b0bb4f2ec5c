//! What one append costs each store: an event of a turn's typical size (a model response
//! of ~600 bytes) appended to a JSON Lines file (written and fsynced) and to PostgreSQL on
//! localhost (the fenced insert, committed), in one run so that the two compare. A turn
//! of the harness appends a handful of events, so this is the store's share of a turn.
//!
//! `turn/…`: a turn's four events as the harness writes them: two synced, two (the ends) not.
//!
//! `LITTLE_TEST_POSTGRES_URL=$(bash scripts/postgres-server.sh start) cargo bench -p little-store --bench append`

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use little_store::{Location, OpenOptions, RunLog, open_run};
use serde_json::json;

fn options<'a>(on_wait: &'a mut dyn FnMut(&str), work_dir: &std::path::Path) -> OpenOptions<'a> {
    OpenOptions {
        lock_wait: Duration::ZERO,
        lease: Duration::from_secs(30),
        on_wait,
        on_lost: None,
        work_dir: Some(work_dir.to_path_buf()),
    }
}

fn payload(turn: u64) -> serde_json::Value {
    json!({
        "cycle": 1, "role": "planner", "turn": turn,
        "requestHash": "sha256:0f9c2a4b8e1d7c3a5b6e9f0a1d2c3b4a5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b",
        "message": { "role": "assistant", "content": "x".repeat(400),
                     "toolCalls": [{ "id": "call_1", "name": "bash", "arguments": "{\"command\":\"true\"}" }] },
        "usage": { "promptTokens": 812, "completionTokens": 64 }
    })
}

fn append(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut stores = vec![("file", Location::parse(dir.path().join("events.jsonl").to_str().unwrap()).unwrap())];
    match std::env::var("LITTLE_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => stores.push(("postgres", Location::parse(&url).unwrap())),
        _ => eprintln!("append/postgres: skipped: LITTLE_TEST_POSTGRES_URL is not set"),
    }
    let mut group = c.benchmark_group("append");
    group.sample_size(50).measurement_time(Duration::from_secs(5));
    for (name, location) in &stores {
        let mut on_wait = |_: &str| {};
        let run_id = format!("bench-append-{}-{}", std::process::id(), name);
        let mut log: Box<dyn RunLog> = open_run(location, &run_id, options(&mut on_wait, dir.path())).unwrap();
        let mut turn = 0;
        group.bench_function(*name, |b| {
            b.iter(|| {
                turn += 1;
                log.append("harness.model.responded", payload(turn)).unwrap();
            })
        });
    }
    group.finish();
}

/// A turn's four events as the harness writes them: the call to the model and the tool's
/// start appended and synced, the answer and the tool's end appended unsynced (made
/// durable by the next), so a turn waits for the disk twice; `…/ends-synced`, every event
/// waited for, as before, for the ratio.
fn turn(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut stores = vec![("file", Location::parse(dir.path().join("turns.jsonl").to_str().unwrap()).unwrap())];
    if let Ok(url) = std::env::var("LITTLE_TEST_POSTGRES_URL")
        && !url.is_empty()
    {
        stores.push(("postgres", Location::parse(&url).unwrap()));
    }
    let mut group = c.benchmark_group("turn");
    group.sample_size(30).measurement_time(Duration::from_secs(6));
    for (name, location) in &stores {
        let mut on_wait = |_: &str| {};
        let run_id = format!("bench-turn-{}-{}", std::process::id(), name);
        let mut log: Box<dyn RunLog> = open_run(location, &run_id, options(&mut on_wait, dir.path())).unwrap();
        let mut turn = 0;
        for ends_synced in [true, false] {
            let variant = if ends_synced { "ends-synced" } else { "ends-unsynced" };
            group.bench_function(format!("{name}/{variant}"), |b| {
                b.iter(|| {
                    turn += 1;
                    let small = json!({ "cycle": 1, "role": "planner", "turn": turn, "requestHash": "sha256:0f9c" });
                    let end = |log: &mut Box<dyn RunLog>, kind: &str, payload: serde_json::Value| {
                        if ends_synced { log.append(kind, payload) } else { log.append_unsynced(kind, payload) }
                            .map(|_| ())
                            .unwrap()
                    };
                    log.append("harness.model.called", small.clone()).unwrap();
                    end(&mut log, "harness.model.responded", payload(turn));
                    log.append("harness.tool_call.started", small.clone()).unwrap();
                    end(&mut log, "harness.tool_call.succeeded", small);
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, append, turn);
criterion_main!(benches);
