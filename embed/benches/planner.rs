//! `plan` in process against `little plan` as a process, for the same 3-turn session
//! against the scripted provider on 127.0.0.1 (look around with bash, validate, submit):
//! the difference is little's start-up (exec, loading, reading little.toml) per run.
//!
//! - `planner/in-process/3-turns`: `little_embed::planner::plan` of a fresh run;
//! - `planner/process/3-turns`: `little plan` of a fresh run, spawned and waited for
//!   (the binary of `$LITTLE_BIN`, else `target/release/little`; skipped, saying so, when
//!   neither exists).
//!
//! `cargo build --release --bin little && cargo bench -p little-embed --bench planner`

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use little_embed::planner::{self, HarnessSettings, Hooks, PlanCall, Provider};
use little_provider::testing::{Recorded, Reply, ScriptedServer, ToolCall};
use serde_json::{Value, json};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/support-summarize-ticket").join(name)
}

fn server() -> ScriptedServer {
    let lwir: Value = serde_json::from_str(&std::fs::read_to_string(example("lwir.json")).unwrap()).unwrap();
    let turns = [
        Reply::tool_calls(vec![ToolCall::new("c1", "bash", json!({ "command": "echo hello > note.txt && ls" }))]),
        Reply::tool_calls(vec![ToolCall::new("c2", "validate_lwir", json!({ "lwir": lwir }))]),
        Reply::tool_calls(vec![ToolCall::new("c3", "submit_lwir", json!({ "lwir": lwir }))]),
    ];
    let turn_of = |request: &Recorded| {
        request.body["messages"].as_array().map_or(0, |m| m.iter().filter(|m| m["role"] == "assistant").count())
    };
    ScriptedServer::with_handler(move |_, request| turns[turn_of(request)].clone())
}

static RUN: AtomicU64 = AtomicU64::new(0);

fn fresh_run() -> String {
    format!("bench_{}_{}", std::process::id(), RUN.fetch_add(1, Ordering::SeqCst))
}

fn bench(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("little-planner-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let server = server();
    // A log per run, so that no run reads the ones before it.
    let events = |run_id: &str| dir.join(format!("{run_id}.jsonl"));
    let call = |run_id: String| PlanCall {
        definition: example("definition.json"),
        input: example("input.json"),
        events: events(&run_id).display().to_string(),
        run_id,
        max_attempts: 3,
        outer_loop: None,
        harness: HarnessSettings {
            providers: vec![Provider {
                id: "openai".into(),
                base_url: server.base_url(),
                api_key: None,
                stream: true,
                timeout: Duration::from_secs(60),
            }],
            bwrap: false,
            memory_root: Some(dir.join("memory")),
            ..HarnessSettings::default()
        },
    };
    let first = planner::plan(&call(fresh_run()), &Hooks::default()).unwrap();
    assert_eq!(first["session"]["modelCalls"], 3);

    let mut group = c.benchmark_group("planner");
    group.measurement_time(Duration::from_secs(10)).sample_size(20);
    group.bench_function("in-process/3-turns", |b| {
        b.iter_batched(
            || call(fresh_run()),
            |call| planner::plan(&call, &Hooks::default()).unwrap(),
            BatchSize::PerIteration,
        )
    });

    let bin = std::env::var_os("LITTLE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/release/little"));
    if bin.exists() {
        let config = dir.join("little.toml");
        std::fs::write(&config, format!("[providers.openai]\nbase_url = \"{}\"\n", server.base_url())).unwrap();
        let command = |run_id: &str| {
            let mut command = std::process::Command::new(&bin);
            command
                .arg("plan")
                .arg(example("definition.json"))
                .arg("--input")
                .arg(example("input.json"))
                .args(["--run-id", run_id, "--sandbox", "none", "--quiet"])
                .arg("--events")
                .arg(events(run_id))
                .arg("--config")
                .arg(&config)
                .arg("--memory-root")
                .arg(dir.join("memory"))
                .stdout(std::process::Stdio::null());
            command
        };
        assert!(command(&fresh_run()).status().unwrap().success(), "`little plan` registers");
        group.bench_function("process/3-turns", |b| {
            b.iter_batched(
                || command(&fresh_run()),
                |mut command| assert!(command.status().unwrap().success()),
                BatchSize::PerIteration,
            )
        });
    } else {
        eprintln!("planner/process: {} does not exist; build it (cargo build --release --bin little)", bin.display());
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench);
criterion_main!(benches);
