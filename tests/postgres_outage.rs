//! A database that goes away in the middle of a run: restarted, or down for ten seconds,
//! while a worker's bash call runs. The worker retries its writes within their bound and
//! finishes, or exits 2 cleanly and a resume finishes; either way every event is recorded
//! once. A test binary of its own: it restarts the server the other PostgreSQL tests use,
//! and cargo runs test binaries one at a time.
//!
//! Needs `LITTLE_TEST_POSTGRES_URL` and the server of `scripts/postgres-server.sh` (which it
//! restarts); without them it says so and passes, except in CI, where it fails.

mod common;

use std::process::Command;
use std::time::Duration;

use common::model::{Case, bash, field_of, good_lwir, of_type, scripted, submit, unique, wait_until};
use serde_json::{Value, json};

fn database() -> Option<String> {
    match std::env::var("LITTLE_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var("CI").is_ok_and(|ci| ci == "true") => {
            panic!("LITTLE_TEST_POSTGRES_URL is not set, and CI must test against PostgreSQL")
        }
        _ => {
            eprintln!("skipped: LITTLE_TEST_POSTGRES_URL is not set (scripts/postgres-server.sh start)");
            None
        }
    }
}

/// `scripts/postgres-server.sh ARGS`, which must succeed.
fn server(args: &[&str]) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/postgres-server.sh");
    let output = Command::new("bash").arg(script).args(args).output().expect("bash runs");
    assert!(output.status.success(), "postgres-server.sh {args:?}: {}", String::from_utf8_lossy(&output.stderr));
}

fn assert_each_event_once(lines: &[Value], run: &str) {
    for (i, event) in lines.iter().enumerate() {
        assert_eq!(event["runId"], run);
        assert_eq!(event["seq"], json!(i + 1), "seq must rise by one: {event}");
    }
    for (kind, field) in [("harness.model.called", "turn"), ("harness.tool_call.started", "callId")] {
        let mut values = field_of(lines, kind, field);
        let count = values.len();
        values.sort();
        values.dedup();
        assert_eq!(values.len(), count, "a {kind} is recorded twice");
    }
    assert_eq!(of_type(lines, "WorkflowVersionRegistered").len(), 1);
}

/// The password of a `scheme://user:password@host/…` URL.
fn password_of(url: &str) -> Option<&str> {
    let credentials = url.split_once("://")?.1.split_once('@')?.0;
    credentials.split_once(':').map(|(_, password)| password).filter(|p| !p.is_empty())
}

/// Runs a session whose second bash call sleeps while `outage` happens to the database;
/// the worker finishes, or fails with exit 2 and a resume finishes.
fn survives(name: &str, outage: impl FnOnce()) {
    let Some(url) = database() else { return };
    let run = format!("pg-{name}-{}", unique());
    let server_script = scripted(vec![
        bash("o1", "echo one > first.marker"),
        bash("o2", "sleep 4; cat first.marker > seen"),
        submit("o3", good_lwir()),
    ]);
    let case = Case::on_store(&format!("pg-{name}"), &url, &run);
    case.provider(&server_script.base_url(), "");
    let child = case.spawn_plan(&["--sandbox", "none"]);
    assert!(wait_until(Duration::from_secs(30), || server_script.request_count() >= 2), "turn 2 was never requested");
    outage();
    let output = child.wait_with_output().unwrap();
    let first = common::model::finished(output);
    assert!(first.code == 0 || first.code == 2, "exit {}: {}", first.code, first.stderr);
    eprintln!(
        "{name}: the worker exited {}{}",
        first.code,
        first.stderr.lines().last().map(|l| format!(": {l}")).unwrap_or_default()
    );
    if let Some(password) = password_of(&url) {
        assert!(!first.stderr.contains(password), "the password is shown: {}", first.stderr);
    }
    if first.code == 2 {
        let lock = case.path("lock.json").display().to_string();
        let resumed = case.plan(&["-o", &lock, "--sandbox", "none", "--lock-wait", "60s"]);
        assert_eq!(resumed.code, 0, "the resume finishes: {}", resumed.stderr);
    }
    assert_eq!(std::fs::read_to_string(case.scratch().join("seen")).unwrap(), "one\n");
    assert_each_event_once(&case.lines(), &run);
}

#[test]
fn a_database_restarted_in_the_middle_of_a_session_loses_nothing_and_doubles_nothing() {
    survives("restart", || server(&["restart"]));
    survives("down", || server(&["pause", "10"]));
}
