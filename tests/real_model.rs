//! `little plan` against a real model: the worked example planned by whatever answers at
//! `LITTLE_MODEL_BASE_URL` (an OpenAI-compatible server; `scripts/model-server.sh start`
//! serves SmolLM2-135M through llama.cpp and prints its URL). Without that variable the
//! test prints one line saying it did not run, and passes.
//!
//! A small model writes clumsy tool calls and rarely a valid LWIR, so the test asserts what
//! must hold whatever it writes: the model was really called and answered with token
//! counts; the session ended within its bounds (registered, exit 0; or failed with
//! `harness.session.failed` and `RunFailed`, exit 1; never exit 2, never a panic); and a
//! resume of the same run, with the provider unreachable, replays the whole session from
//! the log without a request and without appending anything. The figures of each model
//! call are printed (`cargo test --test real_model -- --nocapture` shows them) and, when
//! `LITTLE_REAL_MODEL_LOG` names a file, appended to it: `.ci/run` shows them from there
//! rather than running the model twice.

mod common;

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use common::{Run, little_in};
use serde_json::Value;

const VARIABLE: &str = "LITTLE_MODEL_BASE_URL";

/// A file the test's record is appended to, as well as printed.
const LOG_VARIABLE: &str = "LITTLE_REAL_MODEL_LOG";

/// Prints a line of the test's record (and appends it to the file [`LOG_VARIABLE`] names).
macro_rules! say {
    ($($arg:tt)*) => { say_line(format!($($arg)*)) };
}

fn say_line(line: String) {
    println!("{line}");
    if let Some(path) = std::env::var_os(LOG_VARIABLE).filter(|path| !path.is_empty()) {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&path).unwrap();
        writeln!(file, "{line}").unwrap();
    }
}

/// `LITTLE_MODEL_STREAM=false` writes `stream = false` in little.toml; by default the
/// session streams, as docs/reference/harness.md#the-built-in-harness-workflowharness100 says. scripts/model-server.sh's server refuses streaming
/// with tools (HTTP 400), so there the harness falls back to plain requests (the first
/// model call then counts 2 tries).
const STREAM_VARIABLE: &str = "LITTLE_MODEL_STREAM";

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/support-summarize-ticket").join(name)
}

/// A fresh folder for one session's files (log, scratch, memory, little.toml).
fn workdir(name: &str) -> PathBuf {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!("little-real-model-{}-{nanos}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    dir
}

/// The provider id of the example's planner model (`openai`).
fn planner_provider() -> String {
    let text = std::fs::read_to_string(example("definition.json")).expect("the example definition");
    let definition: Value = serde_json::from_str(&text).expect("the definition is JSON");
    definition["planner"]["model"]["providerId"].as_str().expect("planner.model.providerId").to_string()
}

fn write_config(path: &Path, provider: &str, base_url: &str, stream: bool) {
    let text = format!("[providers.{provider}]\nbase_url = \"{base_url}\"\nstream = {stream}\ntimeout = \"300s\"\n");
    std::fs::write(path, text).expect("little.toml written");
}

/// A loopback URL where nothing listens: a port the OS handed out and took back.
fn dead_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let port = listener.local_addr().expect("its address").port();
    drop(listener);
    format!("http://127.0.0.1:{port}/v1")
}

/// Whether bubblewrap is installed and can make namespaces here (some containers forbid it).
fn bwrap_available() -> bool {
    std::process::Command::new("bwrap")
        .args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-all", "true"])
        .output()
        .is_ok_and(|out| out.status.success())
}

fn plan(dir: &Path, run_id: &str, sandbox: &str, max_turns: &str, extra: &[&str]) -> Run {
    let mut args: Vec<String> = vec![
        "plan".into(),
        example("definition.json").display().to_string(),
        "--input".into(),
        example("input.json").display().to_string(),
        "--run-id".into(),
        run_id.into(),
        "--events".into(),
        dir.join("events.jsonl").display().to_string(),
        "--max-turns".into(),
        max_turns.into(),
        "--max-attempts".into(),
        "2".into(),
        "--tool-timeout".into(),
        "10s".into(),
        "--sandbox".into(),
        sandbox.into(),
        "--progress".into(),
    ];
    args.extend(extra.iter().map(|a| a.to_string()));
    little_in(dir, &args)
}

fn events(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("events.jsonl")).expect("the event log");
    text.lines().map(|line| serde_json::from_str(line).expect("every log line is JSON")).collect()
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

fn tokens(usage: &Value, key: &str) -> u64 {
    usage[key].as_u64().unwrap_or(0)
}

fn show(label: &str, run: &Run) {
    say!("--- {label}: exit {}", run.code);
    for line in run.stderr.lines() {
        say!("  stderr| {line}");
    }
    for line in run.stdout.lines() {
        say!("  stdout| {line}");
    }
}

/// Prints each model call's figures and checks that every one was answered with tokens.
fn figures(label: &str, events: &[Value]) {
    let responded = of_type(events, "harness.model.responded");
    let mut total_ms = 0;
    let (mut prompt, mut completion) = (0, 0);
    for e in &responded {
        let p = &e["payload"];
        let ms = p["durationMs"].as_u64().expect("durationMs");
        total_ms += ms;
        prompt += tokens(&p["usage"], "prompt_tokens");
        completion += tokens(&p["usage"], "completion_tokens");
        let calls: Vec<&str> = p["message"]["tool_calls"]
            .as_array()
            .map(|calls| calls.iter().filter_map(|c| c["function"]["name"].as_str()).collect())
            .unwrap_or_default();
        say!(
            "real_model: {label} turn {}: {:.2} s, {} prompt + {} completion tokens, finish {}, tool calls [{}]",
            p["turn"],
            ms as f64 / 1000.0,
            tokens(&p["usage"], "prompt_tokens"),
            tokens(&p["usage"], "completion_tokens"),
            p["finishReason"],
            calls.join(", ")
        );
        assert!(
            tokens(&p["usage"], "prompt_tokens") > 0 && tokens(&p["usage"], "completion_tokens") > 0,
            "a real model call reports the tokens it used: {e}"
        );
    }
    let n = responded.len().max(1) as f64;
    say!(
        "real_model: {label}: {} model call(s), {:.2} s per call on average, {prompt} prompt + {completion} completion tokens, {} tool call(s)",
        responded.len(),
        total_ms as f64 / 1000.0 / n,
        of_type(events, "harness.tool_call.started").len()
    );
}

/// What holds after a session, whatever the model wrote: it was called and answered, and
/// the session ended within its bounds.
fn ended_within_bounds(label: &str, run: &Run, events: &[Value], max_turns: usize) {
    assert!(
        run.code == 0 || run.code == 1,
        "{label}: a session ends registered (0) or failed (1), whatever the model writes; got {}:\n{}\n{}",
        run.code,
        run.stdout,
        run.stderr
    );
    let called = of_type(events, "harness.model.called");
    let responded = of_type(events, "harness.model.responded");
    assert!(!called.is_empty() && !responded.is_empty(), "{label}: the model was called and answered");
    assert_eq!(called.len(), responded.len(), "{label}: every model call was answered");
    assert!(responded.len() <= max_turns, "{label}: at most --max-turns {max_turns} model calls");
    assert!(of_type(events, "harness.model.failed").is_empty(), "{label}: no model call failed");
    let registered = of_type(events, "WorkflowVersionRegistered");
    if run.code == 0 {
        assert_eq!(registered.len(), 1, "{label}: exit 0 registers the LWIR");
        assert_eq!(of_type(events, "harness.session.completed").len(), 1);
        assert!(run.stdout.contains("registered wfver_"), "{}", run.stdout);
        say!("real_model: {label}: outcome: registered ({})", run.stdout.trim());
    } else {
        assert!(registered.is_empty(), "{label}: a failed run registers nothing");
        let failed = of_type(events, "harness.session.failed");
        assert_eq!(failed.len(), 1, "{label}: exit 1 records harness.session.failed");
        assert_eq!(of_type(events, "RunFailed").len(), 1, "{label}: exit 1 records RunFailed");
        say!("real_model: {label}: outcome: session failed: {}", failed[0]["payload"]["reason"]);
    }
}

#[test]
fn a_real_model_plans_within_its_bounds_and_the_resume_replays_without_it() {
    let Some(base_url) = std::env::var(VARIABLE).ok().filter(|url| !url.trim().is_empty()) else {
        say!("real_model: not run: {VARIABLE} is not set (`scripts/model-server.sh start` prints a base URL)");
        return;
    };
    let sandbox = if bwrap_available() {
        "bwrap"
    } else {
        say!("real_model: bubblewrap is missing or cannot run here; the session runs with --sandbox none");
        "none"
    };
    let stream = std::env::var(STREAM_VARIABLE).map_or(true, |v| v != "false" && v != "0");
    say!("real_model: running against {base_url} (sandbox {sandbox}, stream {stream})");
    let provider = planner_provider();
    let dir = workdir("bwrap");
    write_config(&dir.join("little.toml"), &provider, &base_url, stream);

    // The session, with little.toml found in the working directory.
    let lock = dir.join("lock.json").display().to_string();
    let first = plan(&dir, "run_real", sandbox, "4", &["-o", &lock]);
    show("plan", &first);
    let log = events(&dir);
    figures("plan", &log);
    ended_within_bounds("plan", &first, &log, 4);
    let started = of_type(&log, "harness.session.started");
    assert_eq!(started[0]["payload"]["model"]["modelId"], "gpt-5", "the definition's planner model id is sent as is");

    let shown = little_in(&dir, ["events", "events.jsonl"]);
    show("little events", &shown);
    assert_eq!(shown.code, 0);
    assert!(shown.stdout.contains("harness.model.responded"), "{}", shown.stdout);

    if first.code == 0 {
        // The registered LWIR passes the runtime's check against its lock.
        let document: Value = serde_json::from_str(&std::fs::read_to_string(&lock).expect("the lock")).expect("JSON");
        let lwir = dir.join("registered.lwir.json");
        std::fs::write(&lwir, document["workflowVersion"]["lwir"].to_string()).expect("LWIR written");
        let verified = little_in(
            &dir,
            [
                "verify".to_string(),
                lwir.display().to_string(),
                "--lock".into(),
                lock.clone(),
                "--definition".into(),
                example("definition.json").display().to_string(),
            ],
        );
        show("verify", &verified);
        assert_eq!(verified.code, 0);
    }

    // The resume, with the provider unreachable: every call is answered from the log.
    let dead = dir.join("dead.toml");
    write_config(&dead, &provider, &dead_url(), stream);
    let before = std::fs::read(dir.join("events.jsonl")).expect("the log");
    let again = plan(&dir, "run_real", sandbox, "4", &["--config", &dead.display().to_string()]);
    show("resume (provider unreachable)", &again);
    assert_eq!(again.code, first.code, "the replay ends as the session did");
    assert_eq!(std::fs::read(dir.join("events.jsonl")).expect("the log"), before, "the replay appends nothing");
    let turns = of_type(&log, "harness.model.responded").len();
    assert_eq!(
        again.stderr.matches("(replayed from the log)").count(),
        turns,
        "every turn is replayed:\n{}",
        again.stderr
    );
    if again.code == 0 {
        assert!(again.stdout.contains("nothing called"), "{}", again.stdout);
    }
    say!("real_model: resume: exit {}, the log unchanged, {turns} turn(s) replayed, no request", again.code);
    let _ = std::fs::remove_dir_all(&dir);

    // One short session with bash as a plain process.
    let dir = workdir("none");
    write_config(&dir.join("little.toml"), &provider, &base_url, stream);
    let plain = plan(&dir, "run_real_none", "none", "2", &[]);
    show("plan --sandbox none", &plain);
    let log = events(&dir);
    figures("plan --sandbox none", &log);
    ended_within_bounds("plan --sandbox none", &plain, &log, 2);
    let _ = std::fs::remove_dir_all(&dir);
}
