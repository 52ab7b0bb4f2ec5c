//! `little plan` end to end with scripted planners: success, repair, no repair, a hang;
//! resume and replay; drift; identities; the event log's crash safety.

mod common;

use std::time::Duration;

use common::{Scratch, blocked_codes, registered};
use little_diagnostics::Code;
use little_pipeline::Failure;
use little_pipeline::events;

const STAGES: [&str; 5] = [
    events::SESSION_STARTED,
    events::MODEL_CALLED,
    events::MODEL_RESPONDED,
    events::SESSION_COMPLETED,
    events::VERSION_REGISTERED,
];

#[test]
fn a_planner_that_succeeds_at_once_registers_its_lwir() {
    let s = Scratch::new("once");
    let report = registered(s.plan(&s.good_planner(), "run_once"));
    assert_eq!(report.planner_runs, 1);
    assert_eq!(report.attempt, 1);
    assert_eq!(s.runs("good"), ["attempt 1"]);
    assert_eq!(s.event_types("run_once"), STAGES);
    let version = &report.registration.workflow_version;
    assert!(version["id"].as_str().unwrap().starts_with("wfver_"));
    assert_eq!(version["canonicalizer"], "little-workflow-canonical-json@alpha");
    // The WorkflowVersion's hash is the hash of its canonical JSON, which is the LWIR's.
    let canonical = version["canonicalJson"].as_str().unwrap();
    assert_eq!(version["hash"], little_hashing::sha256_identity(canonical.as_bytes()));
    let lwir: serde_json::Value = serde_json::from_str(&s.read("lwir.json")).unwrap();
    assert_eq!(version["hash"], little_hashing::hash_canonical(&lwir).unwrap());
    let lock = &report.registration.lock;
    assert_eq!(lock["lwirHash"], version["hash"]);
    assert_eq!(
        lock["modelSlots"],
        serde_json::json!([{ "id": "gpt-4o-mini", "providerId": "openai", "modelId": "gpt-4o-mini" }])
    );
    assert_eq!(lock["tools"], serde_json::json!([]));
}

#[test]
fn a_planner_repairs_its_lwir_from_the_findings() {
    let s = Scratch::new("repair");
    let report = registered(s.plan(&s.repairing_planner(), "run_repair"));
    assert_eq!(report.attempt, 2);
    assert_eq!(s.runs("repair"), ["attempt 1", "attempt 2"]);
    let log = events::read(&s.path("events.jsonl")).unwrap().events;
    let first = log.iter().find(|e| e.kind == events::MODEL_RESPONDED).unwrap();
    assert_eq!(first.payload["valid"], false);
    let codes: Vec<&str> =
        first.payload["findings"].as_array().unwrap().iter().map(|f| f["code"].as_str().unwrap()).collect();
    assert_eq!(codes, ["binding.model_not_permitted"]);
    assert_eq!(
        s.event_types("run_repair"),
        [
            events::SESSION_STARTED,
            events::MODEL_CALLED,
            events::MODEL_RESPONDED,
            events::MODEL_CALLED,
            events::MODEL_RESPONDED,
            events::SESSION_COMPLETED,
            events::VERSION_REGISTERED
        ]
    );
}

#[test]
fn a_planner_that_never_repairs_fails_after_the_bounded_attempts() {
    let s = Scratch::new("never");
    let planner = s.planner("never", r#"sed 's/"gpt-4o-mini"/"gpt-4o"/g' "$dir/lwir.json""#);
    let result = s.plan_with(&planner, "run_never", "definition.json", "input.json", Duration::from_secs(60), 2);
    assert_eq!(blocked_codes(result), [Code::BindingModelNotPermitted]);
    assert_eq!(s.runs("never"), ["attempt 1", "attempt 2"]);
    let types = s.event_types("run_never");
    assert_eq!(&types[types.len() - 2..], [events::SESSION_COMPLETED, events::RUN_FAILED]);
    // Resuming a failed session replays the failure without running the planner.
    let again = s.plan_with(&planner, "run_never", "definition.json", "input.json", Duration::from_secs(60), 5);
    assert_eq!(blocked_codes(again), [Code::BindingModelNotPermitted]);
    assert_eq!(s.runs("never").len(), 2);
}

#[test]
fn a_hanging_planner_is_killed_at_the_time_limit_and_resumes_in_flight() {
    let s = Scratch::new("hang");
    let planner = s.planner("hang", "sleep 30");
    let started = std::time::Instant::now();
    let result = s.plan_with(&planner, "run_hang", "definition.json", "input.json", Duration::from_millis(400), 3);
    let Err(Failure::Tool(message)) = result else { panic!("expected a tool failure") };
    assert!(message.contains("did not finish attempt 1 within 400ms"), "{message}");
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(s.event_types("run_hang"), [events::SESSION_STARTED, events::MODEL_CALLED, events::MODEL_FAILED]);
    // The failed attempt is still in flight: a resume runs it again (and only it).
    let report = registered(s.plan(&s.good_planner(), "run_hang"));
    assert_eq!(report.planner_runs, 1);
    assert_eq!(s.runs("good"), ["attempt 1"]);
}

#[test]
fn resuming_a_completed_run_does_not_run_the_planner() {
    let s = Scratch::new("resume");
    let planner = s.good_planner();
    let first = registered(s.plan(&planner, "run_7f3"));
    let second = registered(s.plan(&planner, "run_7f3"));
    assert_eq!(s.runs("good").len(), 1, "the planner ran once");
    assert_eq!(second.planner_runs, 0);
    assert_eq!(second.replayed_attempts, 1);
    assert_eq!(first.registration, second.registration);
    assert_eq!(s.event_types("run_7f3"), STAGES, "nothing appended by the replay");
}

#[test]
fn a_run_killed_mid_session_reruns_only_the_in_flight_attempt() {
    let s = Scratch::new("killed");
    let planner = s.repairing_planner();
    registered(s.plan(&planner, "run_k"));
    // Cut the log after the second `harness.model.called`: the process died during attempt 2.
    let text = s.read("events.jsonl");
    let lines: Vec<&str> = text.lines().collect();
    let second_call = lines.iter().enumerate().filter(|(_, l)| l.contains(events::MODEL_CALLED)).nth(1).unwrap().0;
    s.write("events.jsonl", &(lines[..=second_call].join("\n") + "\n"));
    std::fs::remove_file(s.path("repair.marker")).unwrap();

    let report = registered(s.plan(&planner, "run_k"));
    assert_eq!(s.runs("repair"), ["attempt 2"], "attempt 1 was fast-forwarded");
    assert_eq!(report.replayed_attempts, 1);
    assert_eq!(report.attempt, 2);
    let types = s.event_types("run_k");
    assert_eq!(
        types.iter().filter(|t| *t == events::MODEL_CALLED).count(),
        2,
        "the in-flight call is not re-announced"
    );
    assert_eq!(types.last().unwrap(), events::VERSION_REGISTERED);
}

#[test]
fn a_torn_last_line_is_cut_and_the_run_resumes() {
    let s = Scratch::new("torn");
    let planner = s.good_planner();
    let first = registered(s.plan(&planner, "run_t"));
    let good = std::fs::read(s.path("events.jsonl")).unwrap();
    let mut torn = good.clone();
    torn.extend_from_slice(b"{\"runId\":\"run_t\",\"seq\":6,\"type\":\"RunSta");
    std::fs::write(s.path("events.jsonl"), &torn).unwrap();
    let second = registered(s.plan(&planner, "run_t"));
    assert_eq!(first.registration, second.registration);
    assert_eq!(std::fs::read(s.path("events.jsonl")).unwrap(), good);
    assert_eq!(s.runs("good").len(), 1);
}

fn with_tool(definition: &str, output_type: &str) -> String {
    definition.replace(
        r#""tools": [],
  "globalTools": [],"#,
        &format!(
            r#""tools": [{{ "id": "helpdesk.getTicket", "description": "Fetch a ticket.",
    "inputSchema": {{ "type": "object", "properties": {{ "ticketId": {{ "type": "string" }} }} }},
    "outputSchema": {{ "type": "object", "properties": {{ "subject": {{ "type": "{output_type}" }} }} }} }}],
  "globalTools": ["helpdesk.getTicket"],"#
        ),
    )
}

#[test]
fn a_changed_tool_schema_between_runs_is_capability_drift() {
    let s = Scratch::new("drift");
    let definition = common::example("definition.json");
    s.write("definition.json", &with_tool(&definition, "string"));
    let planner = s.good_planner();
    registered(s.plan(&planner, "run_d"));
    s.write("definition.json", &with_tool(&definition, "integer"));
    let result = s.plan(&planner, "run_d");
    let Err(Failure::Blocked(located)) = result else { panic!("expected drift") };
    let d = &located[0].diagnostics[0];
    assert_eq!(d.code, Code::PipelineCapabilityDrift);
    assert_eq!(d.path.as_deref(), Some("$.globalTools"));
    assert!(d.message.contains("globalToolsHash: sha256:"), "{}", d.message);
    assert!(d.message.contains("workflowDefinitionHash: sha256:"), "{}", d.message);
    assert!(!d.message.contains("systemPromptHash"), "{}", d.message);
    assert_eq!(s.runs("good").len(), 1, "the planner did not run again");
    assert_eq!(s.event_types("run_d").last().unwrap(), events::RUN_FAILED);
    // Restored, the run replays.
    s.write("definition.json", &with_tool(&definition, "string"));
    assert_eq!(registered(s.plan(&planner, "run_d")).planner_runs, 0);
}

#[test]
fn same_definition_input_and_planner_give_the_same_version_every_run() {
    let a = Scratch::new("ident-a");
    let b = Scratch::new("ident-b");
    let ra = registered(a.plan(&a.repairing_planner(), "run_a"));
    let rb = registered(b.plan(&b.repairing_planner(), "run_b"));
    assert_eq!(ra.registration, rb.registration);
    assert_eq!(ra.registration.lock["workflowVersionId"], rb.registration.lock["workflowVersionId"]);
    // The logs differ only in the run id and the time each event was written (`at`, which
    // nothing reads back).
    let timeless = |text: String| -> Vec<serde_json::Value> {
        text.lines()
            .map(|line| {
                let mut event: serde_json::Value = serde_json::from_str(line).unwrap();
                let at = event["payload"].as_object_mut().unwrap().remove("at");
                assert!(at.is_some_and(|at| at.as_str().is_some_and(|at| at.ends_with('Z'))), "{line}");
                event
            })
            .collect()
    };
    assert_eq!(timeless(a.read("events.jsonl").replace("run_a", "run_b")), timeless(b.read("events.jsonl")));
}

#[test]
fn byte_identical_lwir_from_different_inputs_collapse_to_one_version() {
    let s = Scratch::new("collapse");
    s.write("other-input.json", r#"{ "ticketId": "T-1", "transcript": "The app crashes on login." }"#);
    let planner = s.good_planner();
    let one = registered(s.plan(&planner, "run_1"));
    let two =
        registered(s.plan_with(&planner, "run_2", "definition.json", "other-input.json", Duration::from_secs(60), 3));
    assert_eq!(one.registration.id(), two.registration.id());
    assert_eq!(one.registration.hash(), two.registration.hash());
}

#[test]
fn a_run_id_names_one_input() {
    let s = Scratch::new("input-change");
    s.write("other-input.json", r#"{ "ticketId": "T-1", "transcript": "x" }"#);
    let planner = s.good_planner();
    registered(s.plan(&planner, "run_i"));
    let result = s.plan_with(&planner, "run_i", "definition.json", "other-input.json", Duration::from_secs(60), 3);
    let Err(Failure::Tool(message)) = result else { panic!("expected a tool failure") };
    assert!(message.contains("another input"), "{message}");
}

#[test]
fn an_invalid_input_stops_before_the_planner_with_its_paths() {
    let s = Scratch::new("input");
    s.write("input.json", r#"{ "ticketId": 4821 }"#);
    let planner = s.good_planner();
    let Err(Failure::Blocked(located)) = s.plan(&planner, "run_bad") else { panic!("expected blocked") };
    let found: Vec<(Code, &str)> =
        located[0].diagnostics.iter().map(|d| (d.code, d.path.as_deref().unwrap_or(""))).collect();
    assert_eq!(found, [(Code::PipelineInputSchemaError, "$"), (Code::PipelineInputSchemaError, "$.ticketId")]);
    assert!(s.runs("good").is_empty());
    assert_eq!(s.event_types("run_bad"), [events::RUN_FAILED]);
}

#[test]
fn planner_events_reported_on_stderr_are_logged_in_the_attempt() {
    let s = Scratch::new("tool-events");
    let planner = s.planner(
        "tools",
        r#"echo 'little-event {"type":"harness.tool_call.started","callId":"c1","tool":"bash","input":{"command":"node test.js"}}' >&2
echo 'little-event {"type":"harness.tool_call.succeeded","callId":"c1","tool":"bash","output":{"exitCode":0}}' >&2
cat "$dir/lwir.json""#,
    );
    registered(s.plan(&planner, "run_tools"));
    let types = s.event_types("run_tools");
    assert_eq!(
        types,
        [
            events::SESSION_STARTED,
            events::MODEL_CALLED,
            events::TOOL_STARTED,
            events::TOOL_SUCCEEDED,
            events::MODEL_RESPONDED,
            events::SESSION_COMPLETED,
            events::VERSION_REGISTERED
        ]
    );
    let log = events::read(&s.path("events.jsonl")).unwrap();
    let started = log.events.iter().find(|e| e.kind == events::TOOL_STARTED).unwrap();
    assert_eq!(started.payload["attempt"], 1);
    assert_eq!(started.payload["caller"], "model");
    assert_eq!(started.payload["input"]["command"], "node test.js");
}

#[test]
fn a_planner_that_exits_with_an_error_is_a_tool_failure() {
    let s = Scratch::new("crash");
    let planner = s.planner("crash", "echo 'no API key' >&2; exit 4");
    let Err(Failure::Tool(message)) = s.plan(&planner, "run_c") else { panic!("expected a tool failure") };
    assert!(message.contains("attempt 1") && message.contains("no API key"), "{message}");
}

#[test]
fn a_recorded_lwir_that_no_longer_validates_is_never_locked() {
    let s = Scratch::new("tampered");
    let planner = s.good_planner();
    registered(s.plan(&planner, "run_x"));
    // Keep the session open (drop the last two events) and tamper with the recorded output.
    let text = s.read("events.jsonl");
    let lines: Vec<&str> = text.lines().collect();
    let kept = lines[..lines.len() - 2].join("\n").replace(r#"\"gpt-4o-mini\""#, r#"\"gpt-4o\""#);
    s.write("events.jsonl", &(kept + "\n"));
    assert_eq!(blocked_codes(s.plan(&planner, "run_x")), [Code::BindingModelNotPermitted]);
    assert_eq!(s.runs("good").len(), 1, "replayed, not re-planned");
    assert_eq!(s.event_types("run_x").last().unwrap(), events::MODEL_RESPONDED);
}
