//! The built-in planner harness end to end (docs/reference/harness.md): `little plan` as a child process
//! against a scripted model over a real socket, bash under bubblewrap. A SIGKILL during a
//! model call, during a bash call and between two calls costs only the call in flight; a
//! finished run is replayed without the provider; provider failures reach the command
//! line as docs/reference/harness.md says, without the API key; bash cannot reach what it must not; and
//! `little events` and `--progress` show the session.

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::model::{
    Case, Leftovers, RUN, bad_lwir, bash, bash_call, call, failing_first, field_of, good_lwir, of_type, processes_with,
    requests_of, scripted, sigkill, sleeping, stalling_once, submit, tool_result, turn_of, turns, unique, wait_until,
};
use little_provider::testing::{Reply, ScriptedServer};
use serde_json::{Value, json};

/// Every event of the run once: `seq` rises by one from 1, each model turn is announced
/// and answered once, each tool call started and ended once, and the session resumed
/// `resumes` times.
fn assert_each_event_once(case: &Case, resumes: usize) {
    let lines = case.lines();
    for (i, event) in lines.iter().enumerate() {
        assert_eq!(event["runId"], RUN);
        assert_eq!(event["seq"], json!(i + 1), "seq must rise by one: {event}");
    }
    for (kind, field) in [
        ("harness.model.called", "turn"),
        ("harness.model.responded", "turn"),
        ("harness.tool_call.started", "callId"),
        ("harness.tool_call.succeeded", "callId"),
    ] {
        let mut values = field_of(&lines, kind, field);
        let count = values.len();
        values.sort();
        values.dedup();
        assert_eq!(values.len(), count, "a {kind} is recorded twice: {:?}", field_of(&lines, kind, field));
    }
    assert_eq!(
        field_of(&lines, "harness.tool_call.started", "callId"),
        field_of(&lines, "harness.tool_call.succeeded", "callId"),
        "each started call ended once, in order"
    );
    assert_eq!(of_type(&lines, "harness.session.resumed").len(), resumes);
    assert_eq!(of_type(&lines, "WorkflowVersionRegistered").len(), 1);
}

/// The run registered the example's LWIR: exit 0, and the document `-o lock.json` wrote is
/// the one `little lock` gives that LWIR (same WorkflowVersion id, hash and lock).
fn assert_registered_like_lock(case: &Case, run: &common::Run) {
    assert_eq!(run.code, 0, "stdout:\n{}\nstderr:\n{}", run.stdout, run.stderr);
    let written: Value = serde_json::from_str(&case.read("lock.json")).expect("plan -o wrote the lock");
    let locked = case.locked();
    assert_eq!(written, locked);
    let id = locked["workflowVersion"]["id"].as_str().unwrap();
    assert!(run.stdout.contains(&format!("registered {id}")), "{}", run.stdout);
    let registered = of_type(&case.lines(), "WorkflowVersionRegistered")[0]["payload"].clone();
    assert_eq!(registered["lwirVersionId"], id);
    assert_eq!(registered["workflowVersionId"], locked["lock"]["workflowVersionId"]);
}

// ---------------------------------------------------------------------------------------
// Crashes.

/// Turn 1 and turn 2 each append to a marker in the scratch (turn 2 validates an LWIR
/// too); turn 3 submits.
fn three_turns() -> Vec<Reply> {
    vec![
        bash("a1", "echo one >> first.marker"),
        Reply::tool_calls(vec![
            bash_call("a2", "echo two >> second.marker"),
            call("a3", "validate_lwir", json!({ "lwir": bad_lwir() })),
        ]),
        submit("a4", good_lwir()),
    ]
}

/// Kills `little plan` while turn 2's model call is in flight, then resumes it.
fn killed_during_a_model_call(name: &str) -> (Case, ScriptedServer, common::Run) {
    let case = Case::new(name);
    let server = stalling_once(three_turns(), 2);
    case.provider(&server.base_url(), "");
    let child = case.spawn_plan(&[]);
    assert!(server.wait_for_requests(2, Duration::from_secs(30)), "turn 2 was never requested");
    sigkill(child);
    assert_eq!(turns(&server), [1, 2]);
    assert_eq!(case.kinds().last().unwrap(), "harness.model.called", "turn 2 is announced before it goes out");

    let resumed = case.plan_to_lock();
    (case, server, resumed)
}

#[test]
fn a_kill_during_a_model_call_resumes_with_that_call_alone() {
    let (case, server, resumed) = killed_during_a_model_call("kill-model");
    assert_registered_like_lock(&case, &resumed);
    assert!(
        resumed.stdout.contains("2 model calls and 3 tool calls made, 1 model call and 1 tool call replayed"),
        "{}",
        resumed.stdout
    );

    // Turn 2 was asked once more, then turn 3; turn 1 never again.
    assert_eq!(turns(&server), [1, 2, 2, 3]);
    let turn_two = requests_of(&server, 2);
    assert_eq!(turn_two[0].body, turn_two[1].body, "the resumed request is the one that was in flight");
    assert_eq!(case.scratch_file("first.marker"), "one\n", "turn 1's bash did not run again");
    assert_eq!(case.scratch_file("second.marker"), "two\n");

    assert_each_event_once(&case, 1);
    let kinds = case.kinds();
    let expected = [
        "harness.session.started",
        "harness.model.called",
        "harness.model.responded",
        "harness.tool_call.started",
        "harness.tool_call.succeeded",
        "harness.model.called",
        // The kill, then the resume: turn 2's call was announced already.
        "harness.session.resumed",
        "harness.model.responded",
        "harness.tool_call.started",
        "harness.tool_call.succeeded",
        "harness.tool_call.started",
        "harness.tool_call.succeeded",
        "harness.model.called",
        "harness.model.responded",
        "harness.tool_call.started",
        "harness.tool_call.succeeded",
        "harness.session.completed",
        "WorkflowVersionRegistered",
    ];
    assert_eq!(kinds, expected);
    assert_eq!(field_of(&case.lines(), "harness.session.resumed", "afterSeq"), ["6"]);
}

#[test]
fn a_kill_during_a_bash_call_runs_that_call_again_and_nothing_before_it() {
    let case = Case::new("kill-bash");
    let token = format!("300.{}", unique());
    let _leftovers = Leftovers(vec![token.clone()]);
    // `once` lives in the workflow's memory store, which a resume leaves as it is; the
    // scratch is made what the history recorded, so the killed call's `run` is taken back.
    let slow = format!(
        "echo run >> marker; cat first.marker >> marker; \
         [ -f /mnt/memory/workflow/once ] || {{ touch /mnt/memory/workflow/once; sleep {token}; }}"
    );
    let server = scripted(vec![bash("b1", "echo one >> first.marker"), bash("b2", &slow), submit("b3", good_lwir())]);
    case.provider(&server.base_url(), "");
    let child = case.spawn_plan(&[]);
    assert!(
        wait_until(Duration::from_secs(30), || !sleeping(&token).is_empty()),
        "the second bash call never started its sleep"
    );
    assert_eq!(case.scratch_file("marker"), "run\none\n");
    sigkill(child);
    // --die-with-parent: bubblewrap and everything in its namespace die with `little`.
    assert!(
        wait_until(Duration::from_secs(5), || processes_with(&token).is_empty()),
        "the sandbox outlived the killed little: {:?}",
        processes_with(&token)
    );
    assert_eq!(case.kinds().last().unwrap(), "harness.tool_call.started", "the call was announced before it ran");
    assert_eq!(turns(&server), [1, 2]);

    let resumed = case.plan_to_lock();
    assert_registered_like_lock(&case, &resumed);
    assert_eq!(
        case.scratch_file("marker"),
        "run\none\n",
        "the call in flight ran again, once, on the recorded scratch"
    );
    assert_eq!(case.scratch_file("first.marker"), "one\n", "the call before it did not");
    assert_eq!(turns(&server), [1, 2, 3], "no model call was made again");
    assert_each_event_once(&case, 1);
    let lines = case.lines();
    assert_eq!(tool_result(&lines, "2.1")["exitCode"], 0);
    assert_eq!(field_of(&lines, "harness.tool_call.started", "callId"), ["1.1", "2.1", "3.1"]);
}

/// A session planned in process (`little_embed::planner`, what the packages call) and
/// cancelled while its bash call sleeps: the call is killed at once (its processes alone),
/// the session returns `cancelled` with the call announced and not ended, and `little plan`
/// resumes the log, running that call again.
fn cancelled_during_a_bash_call(name: &str, bwrap: bool) {
    let case = Case::new(name);
    let token = format!("30.{}", unique());
    let _leftovers = Leftovers(vec![token.clone()]);
    // `once` marks the first run of the call: in the workflow's memory store under
    // bubblewrap, in the case's folder without a sandbox (a resume keeps both).
    let slow = format!(
        "echo run >> marker; cat first.marker >> marker; M=/mnt/memory/workflow; [ -d \"$M\" ] || M='{}'; \
         [ -f \"$M/once\" ] || {{ touch \"$M/once\"; sleep {token}; }}",
        case.dir.display()
    );
    let server = scripted(vec![bash("c1", "echo one >> first.marker"), bash("c2", &slow), submit("c3", good_lwir())]);
    case.provider(&server.base_url(), "");
    let call = little_embed::planner::PlanCall {
        definition: case.path("definition.json"),
        input: case.path("input.json"),
        run_id: case.run.clone(),
        events: case.events.clone(),
        max_attempts: 3,
        outer_loop: None,
        harness: little_embed::planner::HarnessSettings {
            config: Some(case.path("little.toml")),
            bwrap,
            memory_root: Some(case.path("memory")),
            lock_wait: Duration::ZERO,
            ..Default::default()
        },
    };
    let cancel = little_embed::planner::Cancel::default();
    let hooks = little_embed::planner::Hooks { cancel: Some(&cancel), ..Default::default() };
    let (outcome, took) = std::thread::scope(|scope| {
        let running = scope.spawn(|| little_embed::planner::plan(&call, &hooks));
        assert!(
            wait_until(Duration::from_secs(30), || !sleeping(&token).is_empty()),
            "the bash call never started its sleep"
        );
        let asked = Instant::now();
        cancel.cancel();
        let outcome = running.join().unwrap();
        (outcome, asked.elapsed())
    });
    assert!(took < Duration::from_secs(5), "the cancelled session took {took:?} to return");
    assert!(processes_with(&token).is_empty(), "a process of the cancelled call is left: {:?}", processes_with(&token));
    assert_eq!(outcome.unwrap_err().code, "cancelled");
    assert_eq!(case.kinds().last().unwrap(), "harness.tool_call.started", "the call is left in flight");
    assert!(!case.kinds().iter().any(|kind| kind == "RunFailed"), "{:?}", case.kinds());

    let lock = case.path("lock.json").display().to_string();
    let sandbox = if bwrap { "bwrap" } else { "none" };
    let resumed = case.plan(&["-o", &lock, "--sandbox", sandbox]);
    assert_registered_like_lock(&case, &resumed);
    assert_eq!(case.scratch_file("marker"), "run\none\n", "the call ran again, once, on the recorded scratch");
    assert_eq!(case.scratch_file("first.marker"), "one\n", "the call before it did not");
    assert_eq!(tool_result(&case.lines(), "2.1")["exitCode"], 0);
    assert_eq!(turns(&server), [1, 2, 3], "no model call was made again");
    assert_each_event_once(&case, 1);
}

#[test]
fn a_session_cancelled_during_a_bash_call_ends_it_at_once_and_little_plan_resumes() {
    cancelled_during_a_bash_call("cancel-bash", true);
}

#[test]
fn without_a_sandbox_too_a_cancelled_bash_call_ends_at_once() {
    cancelled_during_a_bash_call("cancel-bash-none", false);
}

#[test]
fn a_resume_whose_scratch_is_gone_rebuilds_it_from_the_history_first() {
    let case = Case::new("scratch-rebuilt");
    let token = format!("300.{}", unique());
    let _leftovers = Leftovers(vec![token.clone()]);
    let slow = format!(
        "cat first.marker notes/second.marker > seen; \
         [ -f /mnt/memory/workflow/once ] || {{ touch /mnt/memory/workflow/once; sleep {token}; }}"
    );
    let server = scripted(vec![
        Reply::tool_calls(vec![
            bash_call("r1", "echo one > first.marker; mkdir notes; echo two > notes/second.marker"),
            bash_call("r2", "chmod 700 first.marker; rm -f gone; echo x > gone; rm gone"),
        ]),
        bash("r3", &slow),
        submit("r4", good_lwir()),
    ]);
    case.provider(&server.base_url(), "");
    let child = case.spawn_plan(&[]);
    assert!(wait_until(Duration::from_secs(30), || !sleeping(&token).is_empty()), "turn 2's bash never slept");
    sigkill(child);
    // As if the run went on on another machine: nothing of its scratch is here.
    std::fs::remove_dir_all(case.scratch()).unwrap();

    let resumed = case.plan_to_lock();
    assert_registered_like_lock(&case, &resumed);
    assert_eq!(case.scratch_file("seen"), "one\ntwo\n", "the call in flight saw what turn 1 wrote");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(case.scratch().join("first.marker")).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700, "the mode is restored too");
    assert_eq!(turns(&server), [1, 2, 3], "nothing but the call in flight was made again");
    let lines = case.lines();
    let files = &of_type(&lines, "harness.tool_call.succeeded")[0]["payload"]["files"]["scratch"];
    assert!(files["put"]["first.marker"]["sha256"].as_str().unwrap().starts_with("sha256:"), "{files}");
    assert_eq!(files["put"]["notes/second.marker"]["mode"], 0o644);
    let second = &of_type(&lines, "harness.tool_call.succeeded")[1]["payload"]["files"]["scratch"];
    assert_eq!(second["put"]["first.marker"]["mode"], 0o700, "a changed mode is a change: {second}");
    assert!(second.get("removed").is_none(), "a file written and removed within a call is no change: {second}");
    assert_each_event_once(&case, 1);
}

#[test]
fn a_kill_between_two_calls_resumes_after_the_last_recorded_end() {
    let case = Case::new("kill-between");
    let server = scripted(three_turns());
    case.provider(&server.base_url(), "");
    let first = case.plan(&[]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let whole = case.lines();

    // What a kill right after the first `harness.tool_call.succeeded` was fsynced leaves.
    let text = case.read("events.jsonl");
    let keep = whole.iter().position(|e| e["type"] == "harness.tool_call.succeeded").unwrap() + 1;
    let cut: String = text.split_inclusive('\n').take(keep).collect();
    case.write("events.jsonl", &cut);

    let resumed = case.plan_to_lock();
    assert_registered_like_lock(&case, &resumed);
    assert_eq!(turns(&server), [1, 2, 3, 2, 3], "exactly the remaining turns were requested");
    let turn_two = requests_of(&server, 2);
    assert_eq!(turn_two[0].body, turn_two[1].body, "turn 1's recorded result was sent back as it was");
    let turn_three = requests_of(&server, 3);
    assert_eq!(turn_three[0].body, turn_three[1].body, "the resumed session asks what the whole one asked");
    assert_eq!(case.scratch_file("first.marker"), "one\n", "the first bash did not run again");
    assert_eq!(
        case.scratch_file("second.marker"),
        "two\n",
        "the cut took turn 2's record, and the resume its write: turn 2 ran on the scratch turn 1 left"
    );
    assert_each_event_once(&case, 1);
    let lines = case.lines();
    assert_eq!(lines[..keep], whole[..keep], "what was recorded before the cut is kept");
    assert_eq!(lines[keep]["type"], "harness.session.resumed");
    assert_eq!(lines[keep]["payload"]["afterSeq"], json!(keep));
}

#[test]
fn a_finished_run_is_replayed_without_the_provider_and_runs_no_tool() {
    let case = Case::new("finished");
    let server = scripted(vec![bash("f1", "echo ran >> marker"), submit("f2", good_lwir())]);
    case.provider(&server.base_url(), "");
    let first = case.plan(&[]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let log = std::fs::read(case.log()).unwrap();
    drop(server); // Its port now refuses: any request would fail the run.

    let again = case.plan_to_lock();
    assert_registered_like_lock(&case, &again);
    assert!(
        again.stdout.contains("replayed from the event log (2 model calls, 2 tool calls), nothing called"),
        "{}",
        again.stdout
    );
    assert_eq!(case.scratch_file("marker"), "ran\n", "bash did not run again");
    let now = std::fs::read(case.log()).unwrap();
    assert!(now == log, "appended:\n{}", String::from_utf8_lossy(now.get(log.len()..).unwrap_or_default()));
}

#[test]
fn a_second_little_on_a_log_being_written_waits_or_is_refused() {
    let case = Case::new("second-writer");
    let server = stalling_once(vec![submit("w1", good_lwir())], 1);
    case.provider(&server.base_url(), "");
    let first = case.spawn_plan(&[]);
    assert!(server.wait_for_requests(1, Duration::from_secs(30)), "turn 1 was never requested");
    let log = case.read("events.jsonl");

    let second = case.plan(&["--lock-wait", "0"]);
    assert_eq!(second.code, 2, "{}", second.stderr);
    assert!(second.stderr.contains("is still being written by another `little`"), "{}", second.stderr);
    assert_eq!(case.read("events.jsonl"), log, "the second wrote nothing");
    assert_eq!(server.request_count(), 1, "the second sent nothing");

    // Once the first is gone, the run resumes.
    sigkill(first);
    let resumed = case.plan_to_lock();
    assert_registered_like_lock(&case, &resumed);
    assert_eq!(turns(&server), [1, 1]);
}

#[test]
fn past_max_turns_or_max_attempts_the_run_fails_with_exit_1() {
    let case = Case::new("max-turns");
    let server = scripted(vec![Reply::text("thinking"); 3]);
    case.provider(&server.base_url(), "");
    let run = case.plan(&["--max-turns", "2"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("no submission was accepted within 2 model calls (`--max-turns`)"), "{}", run.stdout);
    assert_eq!(server.request_count(), 2);
    assert_eq!(case.kinds()[case.kinds().len() - 2..], ["harness.session.failed", "RunFailed"]);

    let case = Case::new("max-attempts");
    let server = scripted(vec![submit("m1", bad_lwir()), submit("m2", good_lwir())]);
    case.provider(&server.base_url(), "");
    let run = case.plan(&["--max-attempts", "1"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("binding.model_not_permitted"), "the last findings are shown: {}", run.stdout);
    assert!(run.stdout.contains("1 submission was refused with findings"), "{}", run.stdout);
    assert_eq!(server.request_count(), 1);
}

// ---------------------------------------------------------------------------------------
// Provider failures.

#[test]
fn a_429_with_retry_after_is_retried_inside_one_model_call() {
    let case = Case::new("429");
    let busy = Reply::Status { status: 429, message: "Rate limit reached".into(), retry_after: Some(1) };
    let server = failing_first(vec![busy], vec![submit("r1", good_lwir())]);
    case.provider(&server.base_url(), "");
    let started = Instant::now();
    let run = case.plan_to_lock();
    assert_registered_like_lock(&case, &run);
    assert!(started.elapsed() >= Duration::from_secs(1), "Retry-After: 1 was honoured");
    assert_eq!(turns(&server), [1, 1]);
    let lines = case.lines();
    assert_eq!(of_type(&lines, "harness.model.called").len(), 1);
    assert_eq!(field_of(&lines, "harness.model.responded", "tries"), ["2"]);
}

#[test]
fn five_503s_fail_the_run_with_exit_2_and_harness_model_failed() {
    let case = Case::new("503");
    let down = Reply::status(503, "The server is overloaded");
    let server = failing_first(vec![down; 5], vec![submit("s1", good_lwir())]);
    case.provider(&server.base_url(), "");
    let run = case.plan(&[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(server.request_count(), 5, "at most 5 tries");
    assert!(run.stderr.contains("the model call of turn 1 failed"), "{}", run.stderr);
    assert!(run.stderr.contains("after 5 tries"), "{}", run.stderr);
    assert!(run.stderr.contains("HTTP 503: The server is overloaded"), "{}", run.stderr);
    let lines = case.lines();
    assert_eq!(of_type(&lines, "harness.model.called").len(), 1);
    let failed = field_of(&lines, "harness.model.failed", "reason");
    assert_eq!(failed.len(), 1);
    assert!(failed[0].contains("503"), "{}", failed[0]);
    assert!(of_type(&lines, "harness.model.responded").is_empty());
}

#[test]
fn a_401_is_not_retried_shows_the_message_and_never_the_key() {
    let mut case = Case::new("401");
    let secret = format!("sk-e2e-{}-Zq7Xw", unique());
    // The provider echoes the key, as some do: the client must not pass it on.
    let message = format!("Incorrect API key provided: {secret}. Find your key in the dashboard.");
    let server = failing_first(vec![Reply::status(401, &message)], vec![submit("k1", good_lwir())]);
    case.provider(&server.base_url(), "api_key_env = \"LITTLE_E2E_API_KEY\"\n");
    case.env("LITTLE_E2E_API_KEY", &secret);
    let started = Instant::now();
    let run = case.plan(&[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(started.elapsed() < Duration::from_secs(5), "a 401 is not retried");
    assert_eq!(server.request_count(), 1);
    assert_eq!(server.requests()[0].header("authorization"), Some(format!("Bearer {secret}").as_str()));
    assert!(run.stderr.contains("HTTP 401"), "{}", run.stderr);
    assert!(run.stderr.contains("Incorrect API key provided"), "{}", run.stderr);
    let log = case.read("events.jsonl");
    assert!(log.contains("harness.model.failed"), "{log}");
    for (what, text) in [("stdout", &run.stdout), ("stderr", &run.stderr), ("the log", &log)] {
        assert!(!text.contains(&secret), "the key is in {what}:\n{text}");
    }
}

#[test]
fn a_retried_error_that_echoes_the_key_does_not_show_it() {
    let mut case = Case::new("echoed-key");
    let secret = format!("sk-e2e-{}-Rt5mQ", unique());
    let busy =
        Reply::Status { status: 429, message: format!("Rate limit reached for key {secret}"), retry_after: Some(0) };
    let server = failing_first(vec![busy], vec![submit("e1", good_lwir())]);
    case.provider(&server.base_url(), "api_key_env = \"LITTLE_E2E_API_KEY\"\n");
    case.env("LITTLE_E2E_API_KEY", &secret);
    let run = case.plan(&["--progress"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(server.request_count(), 2);
    assert!(run.stderr.contains("try 1 failed"), "the retry is told: {}", run.stderr);
    assert!(run.stderr.contains("Rate limit reached for key"), "{}", run.stderr);
    let log = case.read("events.jsonl");
    for (what, text) in [("stdout", &run.stdout), ("stderr", &run.stderr), ("the log", &log)] {
        assert!(!text.contains(&secret), "the key is in {what}:\n{text}");
    }
}

#[test]
fn a_stream_cut_mid_chunk_is_retried_and_the_run_registers() {
    let case = Case::new("cut");
    let cut = Reply::CutStream(Box::new(submit("c1", good_lwir())));
    let server = failing_first(vec![cut], vec![submit("c1", good_lwir())]);
    case.provider(&server.base_url(), "");
    let run = case.plan_to_lock();
    assert_registered_like_lock(&case, &run);
    assert_eq!(turns(&server), [1, 1]);
    let lines = case.lines();
    assert_eq!(of_type(&lines, "harness.model.called").len(), 1);
    assert_eq!(field_of(&lines, "harness.model.responded", "tries"), ["2"]);
    assert_eq!(field_of(&lines, "harness.tool_call.started", "callId"), ["1.1"], "the cut answer's call was not run");
}

#[test]
fn a_host_that_refuses_connections_is_exit_2_naming_the_url() {
    let case = Case::new("refused");
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    case.provider(&format!("http://127.0.0.1:{port}/v1"), "");
    let started = Instant::now();
    let run = case.plan(&[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    // Five tries with backoff (0.25 + 0.5 + 1 + 2 s at least, at most twice that).
    assert!(started.elapsed() < Duration::from_secs(15), "{:?}", started.elapsed());
    let url = format!("http://127.0.0.1:{port}/v1/chat/completions");
    assert!(run.stderr.contains(&format!("cannot reach the provider at {url}")), "{}", run.stderr);
    assert!(run.stderr.contains("refused the connection"), "{}", run.stderr);
    let error = run.stderr.lines().find(|l| l.starts_with("error: ")).unwrap();
    assert_eq!(error.matches(&url).count(), 1, "the URL is named once: {error}");
    assert_eq!(field_of(&case.lines(), "harness.model.failed", "turn"), ["1"]);
}

#[test]
fn a_provider_missing_from_little_toml_is_exit_2_naming_the_table_and_writes_nothing() {
    let case = Case::new("no-table");
    case.write("little.toml", "[providers.other]\nbase_url = \"http://127.0.0.1:9/v1\"\n");
    let run = case.plan(&[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("the provider `openai` has no table in little.toml"), "{}", run.stderr);
    assert!(run.stderr.contains("[providers.openai]\nbase_url = "), "{}", run.stderr);
    assert!(run.stderr.contains("(the file has [providers.other])"), "{}", run.stderr);
    assert_eq!(case.read("events.jsonl"), "", "nothing was written to the log");
    assert!(!case.scratch().exists(), "no scratch was made");
}

#[test]
fn a_missing_little_toml_is_exit_2_saying_what_to_create_and_writes_nothing() {
    let case = Case::new("no-toml");
    for folder in case.dir.ancestors() {
        assert!(!folder.join("little.toml").exists(), "a little.toml above the test folder: {}", folder.display());
    }
    let run = case.little(&case.plan_args_without_config(&[]));
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("no `little.toml` in"), "{}", run.stderr);
    assert!(run.stderr.contains("[providers.openai]\nbase_url = "), "{}", run.stderr);
    assert_eq!(case.read("events.jsonl"), "", "nothing was written to the log");
}

// ---------------------------------------------------------------------------------------
// The sandbox, through the harness.

/// `NAME=yes` when the command succeeds, `NAME=no` when it fails (its output dropped).
const TRY: &str = "t() { n=$1; shift; if \"$@\" >/dev/null 2>&1; then echo \"$n=yes\"; else echo \"$n=no\"; fi; }\n";

/// The value a probe printed for `name` (`yes`, `no`, or a line's rest).
fn probe<'a>(stdout: &'a str, name: &str) -> &'a str {
    let prefix = format!("{name}=");
    stdout
        .lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("the probe printed no `{name}`:\n{stdout}"))
}

/// The variable names in the `env` output between `--env` and `--end`.
fn env_names(stdout: &str) -> Vec<String> {
    let listed = stdout.split("--env\n").nth(1).and_then(|rest| rest.split("--end").next()).unwrap_or_default();
    let mut names: Vec<String> = listed.lines().filter_map(|l| l.split_once('=')).map(|(n, _)| n.to_string()).collect();
    names.sort();
    names
}

#[test]
fn bash_under_bubblewrap_reaches_only_the_scratch_and_the_stores() {
    let mut case = Case::new("sandbox");
    let secret = format!("sk-e2e-{}-Hd93k", unique());
    let home_secret = format!("HOME-SECRET-{}", unique());
    case.write("home/secret.txt", &home_secret);
    case.env("HOME", case.path("home").to_str().unwrap());
    case.env("LITTLE_E2E_API_KEY", &secret);
    case.write("beside.txt", "beside the log\n");
    let org_lesson = format!("ORG-LESSON-{}", unique());
    case.write("memory/org/org.txt", &format!("{org_lesson}\n"));
    let tmp_name = format!("little-e2e-probe-{}", unique());
    let [lone, double, session] = [(); 3].map(|()| format!("1000.{}", unique()));
    let _leftovers = Leftovers(vec![lone.clone(), double.clone(), session.clone()]);

    // Where each bash process should be gone: when turn 2 is asked, turn 1's calls ended.
    let left_over: Arc<Mutex<Option<Vec<i32>>>> = Arc::default();
    let seen = Arc::clone(&left_over);
    let tokens = [lone.clone(), double.clone(), session.clone()];
    let port = Arc::new(Mutex::new(0u16));
    let script_port = Arc::clone(&port);
    let dir = case.dir.display().to_string();
    let home = case.path("home").display().to_string();
    let tmp = tmp_name.clone();
    let server = ScriptedServer::with_handler(move |_, request| match turn_of(request) {
        1 => {
            let port = *script_port.lock().unwrap();
            let probe = format!(
                "{TRY}\
                 t net bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}'\n\
                 t read_home cat {home}/secret.txt\n\
                 t read_beside cat {dir}/beside.txt\n\
                 t read_log cat {dir}/events.jsonl\n\
                 t write_usr touch /usr/{tmp}\n\
                 t write_etc touch /etc/{tmp}\n\
                 t write_opt touch /opt/{tmp}\n\
                 t write_log_dir touch {dir}/probe\n\
                 t write_root touch /{tmp}\n\
                 t write_mnt touch /mnt/{tmp}\n\
                 t write_tmp touch /tmp/{tmp}\n\
                 t write_scratch touch /mnt/scratch/own/probe\n\
                 t write_workflow sh -c 'echo kept > /mnt/memory/workflow/lesson.txt'\n\
                 t append_org sh -c 'echo more >> /mnt/memory/org/org.txt'\n\
                 t write_org touch /mnt/memory/org/new.txt\n\
                 echo \"org=$(cat /mnt/memory/org/org.txt)\"\n\
                 echo \"home=$HOME\"\n\
                 echo --env; env; echo --end\n\
                 sleep {lone} &\n\
                 ( sleep {double} & )\n\
                 setsid sleep {session} >/dev/null 2>&1 </dev/null &\n\
                 echo probed"
            );
            Reply::tool_calls(vec![bash_call("p1", &probe), bash_call("p2", "head -c 10000000 /dev/zero | tr '\\0' a")])
        }
        2 => {
            *seen.lock().unwrap() = Some(tokens.iter().flat_map(|t| processes_with(t)).collect());
            submit("p3", good_lwir())
        }
        turn => Reply::status(500, &format!("no reply scripted for turn {turn}")),
    });
    *port.lock().unwrap() = server.port();
    case.provider(&server.base_url(), "api_key_env = \"LITTLE_E2E_API_KEY\"\n");

    let run = case.plan(&[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines = case.lines();
    let result = tool_result(&lines, "1.1");
    let stdout = result["stdout"].as_str().unwrap();
    assert_eq!(result["exitCode"], 0, "{result}");
    assert!(stdout.ends_with("probed\n"), "{stdout}");

    assert_eq!(probe(stdout, "net"), "no", "bash reached the provider's port");
    assert_eq!(probe(stdout, "read_home"), "no", "bash read $HOME");
    assert_eq!(probe(stdout, "read_beside"), "no", "bash read a file beside the log");
    assert_eq!(probe(stdout, "read_log"), "no", "bash read the log");
    // The host's directories are read-only; the log's folder is not there at all.
    for place in ["write_usr", "write_etc", "write_opt", "write_log_dir"] {
        assert_eq!(probe(stdout, place), "no", "{place}");
    }
    assert!(!case.path("probe").exists());
    // `/`, `/mnt` and `/tmp` are the sandbox's own tmpfs: a write there works and stays there.
    assert_eq!(probe(stdout, "write_tmp"), "yes");
    for dir in ["/", "/mnt", "/tmp", "/usr", "/etc", "/opt"] {
        let path = std::path::Path::new(dir).join(&tmp_name);
        assert!(!path.exists(), "{} appeared on the host", path.display());
    }
    // The scratch and the rw store are written through.
    assert_eq!(probe(stdout, "write_scratch"), "yes");
    assert!(case.scratch().join("probe").exists());
    assert_eq!(probe(stdout, "write_workflow"), "yes");
    assert_eq!(case.read("memory/workflow/support.summarize-ticket/lesson.txt"), "kept\n");
    // The ro store is read, not written.
    assert_eq!(probe(stdout, "org"), org_lesson);
    assert_eq!(probe(stdout, "append_org"), "no");
    assert_eq!(probe(stdout, "write_org"), "no");
    assert_eq!(case.read("memory/org/org.txt"), format!("{org_lesson}\n"));
    assert!(!case.path("memory/org/new.txt").exists());
    // The environment: nothing of the caller's.
    assert_eq!(probe(stdout, "home"), "/mnt/scratch/own");
    assert_eq!(env_names(stdout), ["HOME", "LANG", "PATH", "PWD", "SHLVL", "_"], "{stdout}");
    let log = case.read("events.jsonl");
    assert!(!log.contains(&secret), "the API key reached bash or the log");
    assert!(!log.contains("LITTLE_E2E_API_KEY"));
    assert!(!log.contains(&home_secret));

    // Processes left behind died with the call: gone before the next model call.
    assert_eq!(left_over.lock().unwrap().clone(), Some(vec![]), "processes outlived their bash call");

    // 10 MB of output comes back as its first 64 KiB.
    let big = tool_result(&lines, "1.2");
    assert_eq!(big["exitCode"], 0);
    assert_eq!(big["truncated"], true);
    let kept = big["stdout"].as_str().unwrap();
    assert_eq!(kept.len(), 64 * 1024);
    assert!(kept.bytes().all(|b| b == b'a'));
    assert_eq!(tool_result(&lines, "1.1")["truncated"], false);
}

#[test]
fn a_bash_call_past_tool_timeout_is_exit_code_124_promptly() {
    let case = Case::new("timeout");
    let token = format!("30.{}", unique());
    let _leftovers = Leftovers(vec![token.clone()]);
    let server = scripted(vec![bash("t1", &format!("sleep {token}")), submit("t2", good_lwir())]);
    case.provider(&server.base_url(), "");
    let started = Instant::now();
    let run = case.plan(&["--tool-timeout", "1s"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    let lines = case.lines();
    assert_eq!(tool_result(&lines, "1.1")["exitCode"], 124);
    let duration = of_type(&lines, "harness.tool_call.succeeded")[0]["payload"]["durationMs"].as_u64().unwrap();
    assert!((1000..5000).contains(&duration), "{duration} ms");
    assert!(processes_with(&token).is_empty(), "the timed-out sleep is still running");
}

#[test]
fn bash_without_a_sandbox_gets_a_scrubbed_environment_in_the_scratch() {
    let mut case = Case::new("none");
    let secret = format!("sk-e2e-{}-Nn41p", unique());
    case.write("home/secret.txt", "home");
    case.env("HOME", case.path("home").to_str().unwrap());
    case.env("LITTLE_E2E_API_KEY", &secret);
    // The probe names the server's own port, known once it is bound.
    let port = Arc::new(Mutex::new(0u16));
    let script_port = Arc::clone(&port);
    let home = case.path("home").display().to_string();
    let server = ScriptedServer::with_handler(move |_, request| match turn_of(request) {
        1 => {
            let port = *script_port.lock().unwrap();
            bash(
                "n1",
                &format!(
                    "{TRY}t net bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}'\n\
                     t read_home cat {home}/secret.txt\n\
                     echo \"home=$HOME\"; echo \"pwd=$(pwd)\"\n\
                     echo --env; env; echo --end"
                ),
            )
        }
        _ => submit("n2", good_lwir()),
    });
    *port.lock().unwrap() = server.port();
    case.provider(&server.base_url(), "api_key_env = \"LITTLE_E2E_API_KEY\"\n");
    let run = case.plan(&["--sandbox", "none"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let result = tool_result(&case.lines(), "1.1");
    let stdout = result["stdout"].as_str().unwrap();
    let scratch = case.scratch().canonicalize().unwrap().display().to_string();
    assert_eq!(probe(stdout, "home"), scratch);
    assert_eq!(probe(stdout, "pwd"), scratch);
    assert_eq!(env_names(stdout), ["HOME", "LANG", "PATH", "PWD", "SHLVL", "_"], "{stdout}");
    assert!(!stdout.contains(&secret));
    // No isolation: what bubblewrap stops, a plain process does (the probes can tell).
    assert_eq!(probe(stdout, "net"), "yes");
    assert_eq!(probe(stdout, "read_home"), "yes");
}

// ---------------------------------------------------------------------------------------
// What a person sees.

#[test]
fn little_events_shows_the_crash_and_resume_and_json_is_the_log() {
    let (case, _server, resumed) = killed_during_a_model_call("events");
    assert_eq!(resumed.code, 0, "{}", resumed.stderr);
    let log = case.log().display().to_string();

    let human = case.little(&["events".into(), log.clone()]);
    assert_eq!(human.code, 0, "{}", human.stderr);
    let out = &human.stdout;
    assert!(out.starts_with(&format!("run {RUN}\n")), "{out}");
    for line in [
        "   1  harness.session.started      planner (built-in harness on gpt-5), cycle 1, manifest sha256:",
        "   2  harness.model.called         turn 1\n",
        "   3  harness.model.responded      turn 1: 1 tool call, ",
        "   4  harness.tool_call.started    1.1 bash $ echo one >> first.marker\n",
        "   5  harness.tool_call.succeeded  1.1 bash $ echo one >> first.marker: exit 0, ",
        "   6  harness.model.called         turn 2\n",
        "   7  harness.session.resumed      resumed after event 6\n",
        "  10  harness.tool_call.succeeded  2.1 bash $ echo two >> second.marker: exit 0, ",
        "  11  harness.tool_call.started    2.2 validate_lwir\n",
        "  12  harness.tool_call.succeeded  2.2 validate_lwir: refused: binding.model_not_permitted, ",
        "   8  harness.model.responded      turn 2: 2 tool calls, ",
        "  16  harness.tool_call.succeeded  3.1 submit_lwir: valid, ",
        "  18  WorkflowVersionRegistered    ",
    ] {
        assert!(out.contains(line), "missing {line:?} in:\n{out}");
    }
    let responded =
        of_type(&case.lines(), "harness.model.responded").iter().map(|e| e["payload"].clone()).collect::<Vec<_>>();
    let tokens = |key: &str| responded.iter().map(|p| p["usage"][key].as_u64().unwrap()).sum::<u64>();
    let first = &responded[0]["usage"];
    assert!(
        out.contains(&format!(
            "turn 1: 1 tool call, {} + {} tokens, {} ms",
            first["prompt_tokens"], first["completion_tokens"], responded[0]["durationMs"]
        )),
        "{out}"
    );
    assert!(
        out.ends_with(&format!(
            "run {RUN}: 3 model call(s), {} prompt + {} completion tokens, 4 tool call(s)\n",
            tokens("prompt_tokens"),
            tokens("completion_tokens")
        )),
        "{out}"
    );
    // Each tool call's line ends with its duration.
    for e in of_type(&case.lines(), "harness.tool_call.succeeded") {
        let p = &e["payload"];
        assert!(out.contains(&format!("{} ms\n", p["durationMs"])), "{out}");
    }

    let json = case.little(&["events".into(), log, "--format".into(), "json".into()]);
    assert_eq!(json.code, 0, "{}", json.stderr);
    let array: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(array, Value::Array(case.lines()));
}

/// Turn 1 says something and runs bash, turn 2 submits an LWIR that is refused, turn 3
/// the good one.
fn shown_session() -> Vec<Reply> {
    vec![
        Reply::Message {
            content: Some("Let me look around first.".into()),
            tool_calls: vec![bash_call("v1", "echo hi")],
        },
        submit("v2", bad_lwir()),
        Reply::tool_calls(vec![call("v3", "submit_lwir", json!({ "lwir": good_lwir() }))]),
    ]
}

#[test]
fn progress_shows_turns_streamed_text_tool_calls_and_refusals_on_stderr() {
    let case = Case::new("progress");
    let server = scripted(shown_session());
    case.provider(&server.base_url(), "");
    let run = case.plan(&["--progress"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let err = &run.stderr;
    for shown in [
        "turn 1\n  Let me look around first.\n  [1.1] bash $ echo hi\n    → exit 0\n",
        "turn 2\n  [2.1] submit_lwir\n    → refused: binding.model_not_permitted\n",
        "turn 3\n  [3.1] submit_lwir\n    → valid\n",
    ] {
        assert!(err.contains(shown), "missing {shown:?} in:\n{err}");
    }
    assert!(!run.stdout.contains("turn 1"), "progress goes to stderr:\n{}", run.stdout);
    assert!(run.stdout.contains("registered"), "{}", run.stdout);
}

#[test]
fn quiet_and_a_non_terminal_show_nothing_of_the_session() {
    let case = Case::new("no-terminal");
    let server = scripted(shown_session());
    case.provider(&server.base_url(), "");
    let run = case.plan(&[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "", "stderr is not a terminal: nothing is shown");
    assert_eq!(server.request_count(), 3);
}

#[test]
fn on_a_terminal_the_session_is_shown_unless_quiet() {
    if std::process::Command::new("script").arg("--version").output().is_err() {
        eprintln!("note: skipped: `script` (util-linux) is not installed to give little a terminal");
        return;
    }
    for (name, extra, shown) in [("terminal", &[][..], true), ("quiet", &["--quiet"][..], false)] {
        let case = Case::new(name);
        let server = scripted(shown_session());
        case.provider(&server.base_url(), "");
        let run = case.plan_on_a_terminal(extra);
        assert_eq!(run.code, 0, "{}", run.stdout);
        assert_eq!(server.request_count(), 3);
        assert!(run.stdout.contains("registered"), "{}", run.stdout);
        for line in ["turn 1", "[1.1] bash $ echo hi", "→ exit 0", "→ refused: binding.model_not_permitted"] {
            assert_eq!(run.stdout.contains(line), shown, "{name}: {line:?} in:\n{}", run.stdout);
        }
    }
}
