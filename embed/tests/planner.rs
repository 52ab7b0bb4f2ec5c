//! The planner pipeline in process against the scripted provider over a real socket: a
//! provider given as a value (no little.toml, no variable, the key in no event), the
//! callback hearing every event in order, cancellation mid-call leaving a log that a second
//! call resumes, a host model function called once a turn and never on replay, and
//! `verify` of what `plan` locked.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use little_embed::planner::{self, Cancel, HarnessSettings, Hooks, HostModel, PlanCall, Provider};
use little_provider::testing::{Recorded, Reply, ScriptedServer, ToolCall};
use serde_json::{Value, json};

const KEY: &str = "sk-embed-given-KEY-5521";

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/support-summarize-ticket").join(name)
}

fn lwir() -> Value {
    serde_json::from_str(&std::fs::read_to_string(example("lwir.json")).unwrap()).unwrap()
}

/// Three turns: look around, validate, submit.
fn turns() -> Vec<Reply> {
    vec![
        Reply::Message {
            content: Some("Looking around first.".into()),
            tool_calls: vec![ToolCall::new("c1", "bash", json!({ "command": "echo hello > note.txt && ls" }))],
        },
        Reply::tool_calls(vec![ToolCall::new("c2", "validate_lwir", json!({ "lwir": lwir() }))]),
        Reply::tool_calls(vec![ToolCall::new("c3", "submit_lwir", json!({ "lwir": lwir() }))]),
    ]
}

fn turn_of(request: &Recorded) -> usize {
    request.body["messages"].as_array().map_or(0, |m| m.iter().filter(|m| m["role"] == "assistant").count()) + 1
}

/// Answers turn N with the Nth reply; the first request of `stall` is never answered.
fn server(stall: Option<usize>) -> ScriptedServer {
    let stalled = AtomicBool::new(false);
    let turns = turns();
    ScriptedServer::with_handler(move |_, request| {
        let turn = turn_of(request);
        if stall == Some(turn) && !stalled.swap(true, Ordering::SeqCst) {
            return Reply::Stall;
        }
        turns[turn - 1].clone()
    })
}

struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let dir = std::env::temp_dir().join(format!("little-embed-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }

    fn call(&self, base_url: &str, run_id: &str) -> PlanCall {
        PlanCall {
            definition: example("definition.json"),
            input: example("input.json"),
            run_id: run_id.to_string(),
            events: self.0.join("events.jsonl").display().to_string(),
            max_attempts: 3,
            outer_loop: None,
            harness: HarnessSettings {
                providers: vec![Provider {
                    id: "openai".into(),
                    base_url: base_url.to_string(),
                    api_key: Some(KEY.into()),
                    stream: true,
                    timeout: Duration::from_secs(60),
                }],
                bwrap: false,
                memory_root: Some(self.0.join("memory")),
                lock_wait: Duration::ZERO,
                ..HarnessSettings::default()
            },
        }
    }

    fn events(&self, run_id: &str) -> Vec<Value> {
        planner::events(&self.0.join("events.jsonl").display().to_string(), Some(run_id)).unwrap()
    }
}

/// The errors of an event against the event schema (`little schema event`), from which
/// the packages' event types are generated.
fn unlike_the_schema(event: &Value) -> Vec<String> {
    thread_local! {
        static VALIDATOR: jsonschema::Validator = little_conformance::examples::schema_validator("event");
    }
    VALIDATOR.with(|v| v.iter_errors(event).map(|e| format!("{}: {e}", e.instance_path())).collect())
}

impl Drop for Dir {
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        // Every event the test's sessions wrote follows the schema.
        let log = self.0.join("events.jsonl");
        if log.exists() {
            for event in planner::events(&log.display().to_string(), None).unwrap() {
                let errors = unlike_the_schema(&event);
                assert!(errors.is_empty(), "{errors:#?}\n{event:#}");
            }
        }
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn hearing() -> (Arc<Mutex<Vec<Value>>>, planner::OnEvent) {
    let heard = Arc::new(Mutex::new(Vec::new()));
    let sink = heard.clone();
    (heard, Arc::new(move |event: &Value| sink.lock().unwrap().push(event.clone())))
}

#[test]
fn a_provider_given_as_a_value_plans_and_the_callback_hears_every_event_in_order() {
    let dir = Dir::new("value");
    let server = server(None);
    let (heard, on_event) = hearing();
    let result =
        planner::plan(&dir.call(&server.base_url(), "run_v"), &Hooks { on_event: Some(on_event), ..Hooks::default() })
            .unwrap();
    let locked = little_embed::lock(
        &std::fs::read(example("lwir.json")).unwrap(),
        &std::fs::read(example("definition.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(result["registration"], locked, "the same registration as `little lock` of the LWIR");
    assert_eq!(result["session"]["modelCalls"], 3);

    let heard = heard.lock().unwrap().clone();
    for event in &heard {
        let errors = unlike_the_schema(event);
        assert!(errors.is_empty(), "what the callback hears follows the schema too: {errors:#?}\n{event:#}");
    }
    let stored: Vec<Value> = heard.iter().filter(|e| e.get("seq").is_some()).cloned().collect();
    assert_eq!(stored, dir.events("run_v"), "every stored event, in order, as written");
    let text: String = heard
        .iter()
        .filter(|e| e["type"] == planner::MODEL_TEXT)
        .map(|e| e["payload"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Looking around first.", "the model's text, as it streamed");
    let responded = stored.iter().find(|e| e["type"] == "harness.model.responded").unwrap();
    assert_eq!(responded["payload"]["message"]["content"], "Looking around first.", "stored whole, once");
    for request in server.requests() {
        assert_eq!(request.header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    }
    let log = std::fs::read_to_string(dir.0.join("events.jsonl")).unwrap();
    assert!(!log.contains(KEY), "the key is in no event");
}

#[test]
fn cancelling_mid_call_ends_it_and_a_second_call_resumes_the_run() {
    let dir = Dir::new("cancel");
    let server = server(Some(2));
    let cancel = Cancel::default();
    let result = std::thread::scope(|scope| {
        let call = dir.call(&server.base_url(), "run_c");
        let cancel = &cancel;
        let running = scope.spawn(move || planner::plan(&call, &Hooks { cancel: Some(cancel), ..Hooks::default() }));
        assert!(server.wait_for_requests(2, Duration::from_secs(30)), "turn 2 was asked");
        cancel.cancel();
        running.join().unwrap()
    });
    let error = result.unwrap_err();
    assert_eq!(error.code, "cancelled", "{error:?}");
    let kinds: Vec<String> = dir.events("run_c").iter().map(|e| e["type"].as_str().unwrap().to_string()).collect();
    assert_eq!(kinds.last().map(String::as_str), Some("harness.model.called"), "turn 2 left in flight: {kinds:?}");
    assert!(!kinds.iter().any(|k| k == "RunFailed" || k == "harness.model.failed"), "{kinds:?}");

    let resumed = planner::plan(&dir.call(&server.base_url(), "run_c"), &Hooks::default()).unwrap();
    assert_eq!(resumed["session"]["modelCallsReplayed"], 1, "turn 1 answered from the log");
    assert_eq!(resumed["session"]["modelCalls"], 2, "turn 2 made again, then turn 3");
    let uninterrupted = Dir::new("cancel-whole");
    let whole = planner::plan(&uninterrupted.call(&server.base_url(), "run_c"), &Hooks::default()).unwrap();
    assert_eq!(resumed["registration"], whole["registration"]);
}

/// A model the test answers itself, counting its calls by turn.
struct Scripted {
    turns: Vec<Value>,
    calls: AtomicUsize,
    providers: Mutex<Vec<String>>,
}

impl HostModel for Scripted {
    fn complete(&self, provider_id: &str, body: &Value) -> Result<Value, String> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.providers.lock().unwrap().push(provider_id.to_string());
        let turn = body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "assistant").count();
        Ok(self.turns[turn].clone())
    }
}

#[test]
fn a_host_model_is_called_once_a_turn_and_never_on_replay() {
    let dir = Dir::new("host");
    let call = |id: &str, name: &str, arguments: Value| {
        json!({ "role": "assistant", "content": null, "tool_calls": [
            { "id": id, "type": "function", "function": { "name": name, "arguments": arguments } }
        ] })
    };
    let model = Scripted {
        turns: vec![
            call("h1", "bash", json!({ "command": "true" })),
            call("h2", "validate_lwir", json!({ "lwir": lwir() })),
            call("h3", "submit_lwir", json!({ "lwir": lwir() })),
        ],
        calls: AtomicUsize::new(0),
        providers: Mutex::new(Vec::new()),
    };
    // No provider at all: the host answers.
    let mut plan_call = dir.call("http://127.0.0.1:9/v1", "run_h");
    plan_call.harness.providers.clear();
    let hooks = Hooks { model: Some(&model), ..Hooks::default() };
    let first = planner::plan(&plan_call, &hooks).unwrap();
    assert_eq!(model.calls.load(Ordering::SeqCst), 3);
    assert_eq!(*model.providers.lock().unwrap(), ["openai", "openai", "openai"]);
    let again = planner::plan(&plan_call, &hooks).unwrap();
    assert_eq!(model.calls.load(Ordering::SeqCst), 3, "replay never calls the host");
    assert_eq!(first["registration"], again["registration"]);
    assert_eq!(again["session"]["modelCallsReplayed"], 3);
}

#[test]
fn verify_in_process_checks_what_plan_locked() {
    let dir = Dir::new("verify");
    let server = server(None);
    let planned = planner::plan(&dir.call(&server.base_url(), "run_w"), &Hooks::default()).unwrap();
    let lock = dir.0.join("lock.json");
    std::fs::write(&lock, planned["registration"].to_string()).unwrap();
    let verified = planner::verify(&example("lwir.json"), &lock, Some(&example("definition.json"))).unwrap();
    assert_eq!(verified["lwirVersionId"], planned["lwirVersionId"]);
    assert_eq!(verified["workflowVersionHash"], planned["workflowVersionHash"]);
    assert_eq!(verified["capabilitiesChecked"], true);

    let changed = dir.0.join("changed.json");
    let mut other = lwir();
    other["steps"][0]["id"] = json!("renamed");
    std::fs::write(&changed, other.to_string()).unwrap();
    let error = planner::verify(&changed, &lock, None).unwrap_err();
    assert_eq!(error.code, "verify.failed", "{error:?}");
}

#[test]
fn a_run_that_fails_carries_its_cause_code() {
    let dir = Dir::new("failed");
    let server = ScriptedServer::with_handler(|_, _| Reply::text("I will not call a tool."));
    let mut call = dir.call(&server.base_url(), "run_f");
    call.harness.max_turns = 2;
    let error = planner::plan(&call, &Hooks::default()).unwrap_err();
    assert_eq!(error.code, "run.failed", "{error:?}");
    assert_eq!(error.cause.as_deref(), Some("planner_session_failed"));
    assert!(error.message.contains("--max-turns"), "{}", error.message);
}

#[test]
fn past_its_token_budget_a_session_fails_with_its_reason() {
    let dir = Dir::new("tokens");
    let server = server(None);
    let mut call = dir.call(&server.base_url(), "run_t");
    // The scripted provider reports a request's bytes / 4 as its prompt tokens: the first
    // turn alone is over a hundred.
    call.harness.max_tokens = Some(100);
    let error = planner::plan(&call, &Hooks::default()).unwrap_err();
    assert_eq!(error.code, "run.failed", "{error:?}");
    assert_eq!(error.cause.as_deref(), Some("planner_session_failed"));
    assert!(error.message.contains("more than `--max-tokens` 100"), "{}", error.message);
    assert_eq!(server.request_count(), 1, "no call after the budget is spent");
    let events = dir.events("run_t");
    let failed = events.iter().find(|e| e["type"] == "harness.session.failed").unwrap();
    assert_eq!(failed["payload"]["maxTokens"], 100);
    // Replayed, it fails the same way under the budget it failed by, calling nothing.
    call.harness.max_tokens = None;
    let again = planner::plan(&call, &Hooks::default()).unwrap_err();
    assert!(again.message.contains("more than `--max-tokens` 100"), "{}", again.message);
    assert_eq!(server.request_count(), 1);
}
