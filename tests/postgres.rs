//! Runs on many machines: `little plan` with its history in a real PostgreSQL server, each
//! worker in a folder of its own that shares nothing with the others but the database,
//! against a scripted model on 127.0.0.1. A worker killed or stopped anywhere costs only the
//! call in flight; whoever finishes the run sees the files the first one's bash wrote; a run
//! never has two writers; and what the database holds exports as the file log would.
//!
//! The server's URL is `LITTLE_TEST_POSTGRES_URL` (`.ci/run` starts one with
//! `scripts/postgres-server.sh`). Without it these tests say so and pass, except in CI
//! (`CI=true`), where a missing server fails them.

mod common;

use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command};
use std::time::Duration;

use common::model::{
    Case, Leftovers, bad_lwir, bash, field_of, good_lwir, of_type, scripted, sigkill, sleeping, stalling_once, submit,
    turns, unique, wait_until,
};
use little_provider::testing::{Reply, ScriptedServer};
use serde_json::{Value, json};

/// The test server's URL, or `None` (and a note) outside CI when there is none.
fn database(test: &str) -> Option<String> {
    match std::env::var("LITTLE_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var("CI").is_ok_and(|ci| ci == "true") => {
            panic!("{test}: LITTLE_TEST_POSTGRES_URL is not set, and CI must test against PostgreSQL")
        }
        _ => {
            eprintln!("{test}: skipped: LITTLE_TEST_POSTGRES_URL is not set (scripts/postgres-server.sh start)");
            None
        }
    }
}

/// A run id no other test (of this process or another) uses.
fn run_id(name: &str) -> String {
    format!("pg-{name}-{}", unique())
}

/// Every event of the run once: `seq` from 1 rising by one, each turn announced and
/// answered once, each tool call started and ended once.
fn assert_each_event_once(lines: &[Value], run: &str) {
    for (i, event) in lines.iter().enumerate() {
        assert_eq!(event["runId"], run);
        assert_eq!(event["seq"], json!(i + 1), "seq must rise by one: {event}");
    }
    for (kind, field) in [
        ("harness.model.called", "turn"),
        ("harness.model.responded", "turn"),
        ("harness.tool_call.started", "callId"),
        ("harness.tool_call.succeeded", "callId"),
    ] {
        let mut values = field_of(lines, kind, field);
        let count = values.len();
        values.sort();
        values.dedup();
        assert_eq!(values.len(), count, "a {kind} is recorded twice: {:?}", field_of(lines, kind, field));
    }
    assert_eq!(
        field_of(lines, "harness.tool_call.started", "callId"),
        field_of(lines, "harness.tool_call.succeeded", "callId"),
        "each started call ended once, in order"
    );
    assert_eq!(of_type(lines, "WorkflowVersionRegistered").len(), 1);
}

/// Registered: exit 0 and the lock `little lock` gives the example's LWIR.
fn assert_registered(case: &Case, run: &common::Run) {
    assert_eq!(run.code, 0, "stdout:\n{}\nstderr:\n{}", run.stdout, run.stderr);
    let written: Value = serde_json::from_str(&case.read("lock.json")).expect("plan -o wrote the lock");
    assert_eq!(written, case.locked());
}

/// The events less what differs between two runs of one script (how long calls took).
fn untimed(lines: &[Value]) -> Vec<Value> {
    lines
        .iter()
        .map(|event| {
            let mut event = event.clone();
            if let Some(payload) = event["payload"].as_object_mut() {
                // Times differ between two runs; replay compares requests, never times.
                payload.remove("durationMs");
                payload.remove("at");
            }
            event
        })
        .collect()
}

/// An event's text with its `"at":"…"` member taken out (keys keep their order).
fn without_at(line: &str) -> String {
    match line.find(",\"at\":\"") {
        Some(start) => {
            let value = start + ",\"at\":\"".len();
            let end = value + line[value..].find('"').expect("a closed string");
            format!("{}{}", &line[..start], &line[end + 1..])
        }
        None => line.to_string(),
    }
}

/// A folder of its own for one worker of `run`, its `little.toml` naming `server`.
fn worker(name: &str, url: &str, run: &str, server: &ScriptedServer) -> Case {
    let case = Case::on_store(name, url, run);
    case.provider(&server.base_url(), "");
    case
}

/// `bash` writes a file, a submission is refused, the repair is accepted.
fn whole_session() -> Vec<Reply> {
    vec![
        bash("w1", "echo drafted > draft.txt; mkdir -p notes; printf 'a\\nb' > notes/n.md"),
        submit("w2", bad_lwir()),
        submit("w3", good_lwir()),
    ]
}

#[test]
fn a_whole_session_in_the_database_registers_as_lock_does_exports_as_a_file_and_replays_anywhere() {
    let Some(url) = database("whole session") else { return };
    let run = run_id("whole");
    let server = scripted(whole_session());
    let first = worker("pg-whole-first", &url, &run, &server);
    let planned = first.plan_to_lock();
    assert_registered(&first, &planned);
    assert_eq!(turns(&server), [1, 2, 3]);
    let lines = first.lines();
    assert_each_event_once(&lines, &run);

    // The same script with a file log writes, event for event, what the database exports.
    let file_server = scripted(whole_session());
    let mut file = Case::new("pg-whole-file");
    file.run = run.clone();
    file.provider(&file_server.base_url(), "");
    assert_registered(&file, &file.plan_to_lock());
    assert_eq!(untimed(&lines), untimed(&file.lines()), "the database holds what a file log holds");
    let text = std::fs::read_to_string(file.log()).unwrap();
    let exported =
        first.little(&["events".into(), url.clone(), "--run-id".into(), run.clone(), "--format".into(), "json".into()]);
    // The export is a JSON array, an event's text a line.
    let exported_lines: Vec<&str> =
        exported.stdout.lines().map(|l| l.trim_start().trim_end_matches(',')).filter(|l| l.starts_with('{')).collect();
    assert_eq!(exported_lines.len(), lines.len());
    for ((line, event), exported_line) in text.lines().zip(&lines).zip(&exported_lines) {
        let recorded: Value = serde_json::from_str(line).unwrap();
        if recorded["payload"].get("durationMs").is_none() {
            // Byte for byte but for the time each run wrote its event at.
            assert_eq!(without_at(exported_line), without_at(line), "an event's text is kept byte for byte");
        }
        assert_eq!(recorded["type"], event["type"]);
    }

    // Another machine, the provider gone: the finished run replays without a call.
    drop(server);
    let elsewhere = Case::on_store("pg-whole-elsewhere", &url, &run);
    elsewhere.provider("http://127.0.0.1:9/v1", "");
    let again = elsewhere.plan_to_lock();
    assert_registered(&elsewhere, &again);
    assert!(again.stdout.contains("nothing called"), "{}", again.stdout);
    assert_eq!(elsewhere.lines(), lines, "nothing appended");
    assert!(!elsewhere.scratch().join("draft.txt").exists(), "no tool ran there");
}

/// A worker of `case` that has started, with a short lease so that another may take over
/// soon. Under bubblewrap, as by default: bash sees the same paths on every machine, so the
/// requests a resumed session rebuilds are the recorded ones (without a sandbox the prompt
/// names the folder's real paths, and a run resumes only where they are the same).
fn spawn_worker(case: &Case) -> Child {
    case.spawn_plan(&["--lease", "2s"])
}

/// Another worker finishes the run: it waits for the lease to lapse, then resumes.
fn finish_elsewhere(case: &Case) -> common::Run {
    let lock = case.path("lock.json").display().to_string();
    case.plan(&["-o", &lock, "--lease", "2s", "--lock-wait", "60s"])
}

/// A shell condition true until `seconds` from now: a command that sleeps on the first
/// worker and not on the one that runs it again after that moment (nothing else tells the
/// two sandboxes apart).
fn until(seconds: u64) -> (String, std::time::SystemTime) {
    let deadline = std::time::SystemTime::now() + Duration::from_secs(seconds);
    let epoch = deadline.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    (format!("[ $(date +%s) -lt {epoch} ]"), deadline)
}

fn wait_past(deadline: std::time::SystemTime) {
    while std::time::SystemTime::now() <= deadline + Duration::from_millis(1100) {
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_worker_killed_in_a_model_call_is_finished_by_another_that_calls_only_that_again() {
    let Some(url) = database("kill in a model call") else { return };
    let run = run_id("kill-model");
    let server = stalling_once(
        vec![bash("m1", "echo one > first.marker"), bash("m2", "cat first.marker > seen"), submit("m3", good_lwir())],
        2,
    );
    let first = worker("pg-kill-model-a", &url, &run, &server);
    let child = spawn_worker(&first);
    assert!(server.wait_for_requests(2, Duration::from_secs(30)), "turn 2 was never requested");
    sigkill(child);
    assert_eq!(first.lines().last().unwrap()["type"], "harness.model.called");

    let second = worker("pg-kill-model-b", &url, &run, &server);
    let finished = finish_elsewhere(&second);
    assert_registered(&second, &finished);
    assert_eq!(turns(&server), [1, 2, 2, 3], "turn 2 again, then turn 3; turn 1 never again");
    assert_eq!(
        std::fs::read_to_string(second.scratch().join("seen")).unwrap(),
        "one\n",
        "the first worker's file is here"
    );
    assert!(!first.scratch().join("seen").exists());
    assert_each_event_once(&second.lines(), &run);
}

#[test]
fn a_worker_killed_in_a_bash_call_is_finished_by_another_that_runs_only_that_call_again() {
    let Some(url) = database("kill in a bash call") else { return };
    let run = run_id("kill-bash");
    let token = format!("300.{}", unique());
    let _leftovers = Leftovers(vec![token.clone()]);
    let (early, deadline) = until(15);
    let slow = format!("echo once >> ran; cat first.marker > seen; if {early}; then sleep {token}; fi");
    let server = scripted(vec![bash("k1", "echo one >> first.marker"), bash("k2", &slow), submit("k3", good_lwir())]);
    let first = worker("pg-kill-bash-a", &url, &run, &server);
    let child = spawn_worker(&first);
    assert!(wait_until(Duration::from_secs(15), || !sleeping(&token).is_empty()), "turn 2's bash never slept");
    sigkill(child);
    assert!(wait_until(Duration::from_secs(5), || sleeping(&token).is_empty()), "the sandbox died with its worker");
    assert_eq!(first.lines().last().unwrap()["type"], "harness.tool_call.started");
    wait_past(deadline);

    let second = worker("pg-kill-bash-b", &url, &run, &server);
    let finished = finish_elsewhere(&second);
    assert_registered(&second, &finished);
    assert_eq!(turns(&server), [1, 2, 3], "no model call was made again");
    let read = |case: &Case, name: &str| std::fs::read_to_string(case.scratch().join(name)).unwrap_or_default();
    assert_eq!(read(&first, "ran"), "once\n");
    assert_eq!(read(&second, "ran"), "once\n", "the call in flight ran again, once, on the recorded scratch");
    assert_eq!(
        read(&second, "first.marker"),
        "one\n",
        "the call before it did not run again: its file came from the store"
    );
    assert_eq!(read(&second, "seen"), "one\n", "bash on the second worker read what the first one's wrote");
    assert_each_event_once(&second.lines(), &run);
}

#[test]
fn a_worker_killed_between_two_calls_is_finished_by_another_from_the_last_recorded_end() {
    let Some(url) = database("kill between calls") else { return };
    let run = run_id("kill-between");
    let server = stalling_once(
        vec![bash("b1", "echo one > first.marker"), bash("b2", "cat first.marker > seen"), submit("b3", good_lwir())],
        2,
    );
    let first = worker("pg-kill-between-a", &url, &run, &server);
    let child = spawn_worker(&first);
    assert!(server.wait_for_requests(2, Duration::from_secs(30)), "turn 2 was never requested");
    sigkill(child);
    // What a kill just after turn 1's end was committed leaves: turn 2 never announced.
    let lines = first.lines();
    assert_eq!(lines.last().unwrap()["type"], "harness.model.called");
    let last = lines.len() - 1;
    psql(&url, &format!("DELETE FROM little.events WHERE run_id = '{run}' AND seq > {last}"));
    let before = first.lines();
    assert_eq!(before.len(), last);

    let second = worker("pg-kill-between-b", &url, &run, &server);
    let finished = finish_elsewhere(&second);
    assert_registered(&second, &finished);
    assert_eq!(turns(&server), [1, 2, 2, 3]);
    assert_eq!(std::fs::read_to_string(second.scratch().join("seen")).unwrap(), "one\n");
    let lines = second.lines();
    assert_each_event_once(&lines, &run);
    assert_eq!(lines[..last], before[..], "what was recorded before the kill is kept");
}

#[test]
fn a_stopped_worker_whose_lease_lapsed_is_taken_over_and_writes_nothing_more() {
    let Some(url) = database("stopped worker") else { return };
    let run = run_id("stopped");
    let token = format!("300.{}", unique());
    let _leftovers = Leftovers(vec![token.clone()]);
    let (early, deadline) = until(15);
    let slow = format!("echo ran >> ran; if {early}; then sleep {token}; fi");
    let server = scripted(vec![bash("s1", "echo one > first.marker"), bash("s2", &slow), submit("s3", good_lwir())]);
    let first = worker("pg-stopped-a", &url, &run, &server);
    let mut child = spawn_worker(&first);
    assert!(wait_until(Duration::from_secs(15), || !sleeping(&token).is_empty()), "turn 2's bash never slept");
    signal(&child, "STOP");
    wait_past(deadline);

    let second = worker("pg-stopped-b", &url, &run, &server);
    let finished = finish_elsewhere(&second);
    assert_registered(&second, &finished);
    let lines = second.lines();
    assert_each_event_once(&lines, &run);

    signal(&child, "CONT");
    let status = wait_for(&mut child, Duration::from_secs(30));
    let stderr = read_stderr(&mut child);
    assert_eq!(status.code(), Some(2), "the first worker stops with exit 2: {stderr}");
    assert!(stderr.contains("taken over"), "it says why: {stderr}");
    assert!(wait_until(Duration::from_secs(5), || sleeping(&token).is_empty()), "its tool call was killed");
    assert_eq!(second.lines(), lines, "the first worker wrote nothing after the takeover");
}

#[test]
fn eight_workers_started_at_once_make_one_session_and_the_others_replay_it() {
    let Some(url) = database("eight workers") else { return };
    let run = run_id("eight");
    let server = scripted(vec![bash("e1", "echo one > first.marker"), submit("e2", good_lwir())]);
    let cases: Vec<Case> = (0..8).map(|i| worker(&format!("pg-eight-{i}"), &url, &run, &server)).collect();
    let children: Vec<Child> = cases.iter().map(|case| case.spawn_plan(&["--lock-wait", "120s"])).collect();
    let mut sessions = 0;
    for (case, child) in cases.iter().zip(children) {
        let run = common::model::finished(child.wait_with_output().unwrap());
        assert_eq!(run.code, 0, "{}", run.stderr);
        if !run.stdout.contains("nothing called") {
            sessions += 1;
        }
        assert!(run.stdout.contains("registered"), "{}: {}", case.dir.display(), run.stdout);
    }
    assert_eq!(sessions, 1, "one worker ran the session");
    assert_eq!(turns(&server), [1, 2], "each turn was asked once");
    assert_each_event_once(&cases[0].lines(), &run);
}

#[test]
fn fifty_runs_at_once_on_one_database_each_keep_their_own_events() {
    let Some(url) = database("fifty runs") else { return };
    let server = scripted(vec![bash("f1", "echo one > first.marker"), submit("f2", good_lwir())]);
    let cases: Vec<Case> =
        (0..50).map(|i| worker(&format!("pg-fifty-{i}"), &url, &run_id(&format!("fifty{i}")), &server)).collect();
    let children: Vec<Child> = cases.iter().map(|case| case.spawn_plan(&["--sandbox", "none"])).collect();
    for (case, child) in cases.iter().zip(children) {
        let run = common::model::finished(child.wait_with_output().unwrap());
        assert_eq!(run.code, 0, "{}: {}", case.run, run.stderr);
    }
    for case in &cases {
        let lines = case.lines();
        assert_each_event_once(&lines, &case.run);
        assert_eq!(of_type(&lines, "harness.model.called").len(), 2, "{}", case.run);
    }
}

#[test]
fn follow_prints_each_event_as_it_is_written_and_returns_at_the_end() {
    let Some(url) = database("follow") else { return };
    let run = run_id("follow");
    let server = stalling_once(vec![bash("o1", "true"), submit("o2", good_lwir())], 2);
    let case = worker("pg-follow", &url, &run, &server);
    let mut follower = case
        .command(&[
            "events".into(),
            url.clone(),
            "--run-id".into(),
            run.clone(),
            "--follow".into(),
            "--format".into(),
            "json".into(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let child = spawn_worker(&case);
    assert!(server.wait_for_requests(2, Duration::from_secs(30)));
    sigkill(child);
    let finished = finish_elsewhere(&case);
    assert_registered(&case, &finished);
    let status = wait_for(&mut follower, Duration::from_secs(30));
    assert!(status.success(), "{}", read_stderr(&mut follower));
    let mut out = String::new();
    std::io::Read::read_to_string(follower.stdout.as_mut().unwrap(), &mut out).unwrap();
    let followed: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(followed, case.lines(), "every event once, in order, one a line");
}

#[test]
fn a_bad_database_is_exit_2_with_a_clear_message_and_never_the_password() {
    let Some(url) = database("bad input") else { return };
    let secret = format!("pw{}", unique());
    let port = free_port();
    let with_password = |url: &str| -> String {
        // postgres://user:password@host... → the same with another password.
        let (scheme, rest) = url.split_once("://").unwrap();
        let (credentials, host) = rest.split_once('@').unwrap();
        let user = credentials.split(':').next().unwrap();
        format!("{scheme}://{user}:{secret}@{host}")
    };
    for (store, expect) in [
        (with_password(&url), "password"),
        (format!("postgres://me:{secret}@127.0.0.1:{port}/db"), "127.0.0.1"),
        (format!("postgres://me:{secret}@[::1"), "URL"),
        (format!("postgres://me:{secret}@127.0.0.1:{port}/db?sslmode=sometimes"), "sslmode"),
    ] {
        let case_for = Case::on_store("pg-bad-one", &store, &run_id("bad"));
        case_for.provider("http://127.0.0.1:9/v1", "");
        let run = case_for.plan(&["--sandbox", "none"]);
        assert_eq!(run.code, 2, "{store}: {}", run.stderr);
        assert!(run.stderr.contains(expect), "{store}: {}", run.stderr);
        assert!(
            !run.stderr.contains(&secret) && !run.stdout.contains(&secret),
            "the password is shown: {}",
            run.stderr
        );
        assert!(!run.stderr.contains("panicked"));
    }
}

// ---------------------------------------------------------------------------------------

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Runs SQL against the test database with `psql`.
fn psql(url: &str, sql: &str) {
    let output = Command::new("psql").args([url, "-v", "ON_ERROR_STOP=1", "-qc", sql]).output().expect("psql runs");
    assert!(output.status.success(), "psql: {}", String::from_utf8_lossy(&output.stderr));
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill").args([&format!("-{name}"), &child.id().to_string()]).status().unwrap();
    assert!(status.success());
}

fn wait_for(child: &mut Child, timeout: Duration) -> std::process::ExitStatus {
    let ended = wait_until(timeout, || child.try_wait().unwrap().is_some());
    if !ended {
        let _ = child.kill();
        panic!("the process did not end within {timeout:?}");
    }
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), None, "ended by a signal: {status:?}");
    status
}

fn read_stderr(child: &mut Child) -> String {
    let mut text = String::new();
    if let Some(stderr) = child.stderr.as_mut() {
        let _ = std::io::Read::read_to_string(stderr, &mut text);
    }
    text
}
