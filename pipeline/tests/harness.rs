//! The built-in harness against a scripted model over a real socket: a session that runs
//! bash in its scratch, reads a memory file and a skill, validates, submits an LWIR that
//! is refused, repairs it from the findings and is registered; what the provider received;
//! replay of a finished run without the provider; bounds; divergence.

mod common;

use common::model::{bad_lwir, bash, call, good_lwir, scripted, submit, tool_messages};
use common::{Scratch, registered};
use little_diagnostics::Code;
use little_pipeline::Failure;
use little_pipeline::events;
use little_provider::testing::Reply;
use serde_json::{Value, json};

/// The example definition with a skill, so the prompt and the scratch carry one.
fn with_skill(s: &Scratch) {
    let mut definition: Value = serde_json::from_str(&s.read("definition.json")).unwrap();
    definition["planner"]["skills"] = json!([{
        "name": "lwir-basics",
        "description": "How LWIR steps are written.",
        "content": "Use ai.generate for summaries. SKILL-BODY-7431",
    }]);
    s.write("definition.json", &serde_json::to_string_pretty(&definition).unwrap());
    std::fs::create_dir_all(s.path("memory/workflow/support.summarize-ticket")).unwrap();
    s.write("memory/workflow/support.summarize-ticket/lessons.md", "LESSON-5512: slot ids are model ids\n");
}

/// Turn 1 looks around, turn 2 validates a faulty LWIR, turn 3 submits it (refused),
/// turn 4 submits the repaired one.
fn session_script() -> Vec<Reply> {
    vec![
        bash(
            "c1",
            "echo drafted > draft.txt && cat /mnt/memory/workflow/lessons.md && cat .agents/skills/lwir-basics/SKILL.md && pwd",
        ),
        Reply::tool_calls(vec![call("c2", "validate_lwir", json!({ "lwir": bad_lwir() }))]),
        submit("c3", bad_lwir()),
        submit("c4", good_lwir()),
    ]
}

fn full_session(stream: bool) {
    let s = Scratch::new(if stream { "harness-stream" } else { "harness-plain" });
    with_skill(&s);
    let server = scripted(session_script());
    let config = s.provider(&server.base_url(), stream);
    let report = registered(s.plan_builtin("run_h", s.harness_options(&config), 3));

    // Registered with the WorkflowVersion `little lock` gives the same LWIR.
    let lock = little_pipeline::lock(&s.path("lwir.json"), &s.path("definition.json")).unwrap();
    assert_eq!(report.registration.workflow_version, lock.workflow_version);
    assert_eq!(report.registration.lock, lock.lock);
    assert_eq!(report.attempt, 2, "the second submission was accepted");
    assert_eq!(report.session.model_calls, 4);
    assert_eq!(report.session.tool_runs, 4);

    // What the provider received.
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    for request in &requests {
        assert_eq!(request.body["model"], "gpt-5");
        assert_eq!(request.streams(), stream);
        let tools: Vec<&str> =
            request.body["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
        assert_eq!(tools, ["bash", "validate_lwir", "submit_lwir"]);
        assert_eq!(request.body["tool_choice"], "auto");
        assert_eq!(request.body["temperature"], 0);
    }
    let system = requests[0].body["messages"][0]["content"].as_str().unwrap();
    assert!(system.starts_with("You design support-ticket workflows."), "{system}");
    assert!(system.contains("- name: lwir-basics\n  description: How LWIR steps are written."), "{system}");
    assert!(!system.contains("SKILL-BODY-7431"), "skill bodies are read from the filesystem, not the prompt");
    assert!(system.contains("`/mnt/memory/workflow/` (workflow, read-write)"), "{system}");
    assert!(system.contains("`/mnt/memory/org/` (org, read-only)"), "{system}");
    let task: Value = serde_json::from_str(requests[0].body["messages"][1]["content"].as_str().unwrap()).unwrap();
    assert_eq!(task["kind"], "plan");
    assert_eq!(task["input"]["ticketId"], "T-4821");

    // The bash result: run in the scratch, with the memory file and the skill body.
    let results = tool_messages(&requests[3]);
    assert_eq!(results.len(), 3);
    let (id, bash) = &results[0];
    assert_eq!(id, "c1");
    assert_eq!(bash["exitCode"], 0);
    let stdout = bash["stdout"].as_str().unwrap();
    assert!(stdout.contains("LESSON-5512"), "{stdout}");
    assert!(stdout.contains("SKILL-BODY-7431"), "{stdout}");
    assert!(stdout.trim_end().ends_with("/mnt/scratch/own"), "{stdout}");
    assert_eq!(std::fs::read_to_string(s.scratch_dir("run_h").join("draft.txt")).unwrap(), "drafted\n");
    // The findings of validate_lwir and of the refused submission.
    for (id, result) in &results[1..] {
        assert_eq!(result["valid"], false, "{id}");
        let codes: Vec<&str> =
            result["findings"].as_array().unwrap().iter().map(|f| f["code"].as_str().unwrap()).collect();
        assert_eq!(codes, ["binding.model_not_permitted"], "{id}");
    }

    // The log: the event sequence of docs/reference/harness.md, each call announced before it ended.
    let kinds: Vec<String> = s.events("run_h").into_iter().map(|e| e.kind).collect();
    let mut expected = vec![events::SESSION_STARTED];
    for _ in 0..4 {
        expected.extend([events::MODEL_CALLED, events::MODEL_RESPONDED, events::TOOL_STARTED, events::TOOL_SUCCEEDED]);
    }
    expected.extend([events::SESSION_COMPLETED, events::VERSION_REGISTERED]);
    assert_eq!(kinds, expected);
    let log = s.events("run_h");
    let started = log.iter().find(|e| e.kind == events::TOOL_STARTED).unwrap();
    assert_eq!(started.payload["caller"], "model");
    assert_eq!(started.payload["callId"], "1.1");
    let called = log.iter().find(|e| e.kind == events::MODEL_CALLED).unwrap();
    let mut sent = requests[0].body.clone();
    let sent = sent.as_object_mut().unwrap();
    sent.remove("stream");
    sent.remove("stream_options");
    assert_eq!(
        called.payload["requestHash"],
        little_hashing::hash_canonical(&Value::Object(sent.clone())).unwrap(),
        "the request hash is of the request less its transport fields"
    );

    // A second run of the finished run id: no request (the provider is gone), no tool.
    drop(server);
    std::fs::remove_file(s.scratch_dir("run_h").join("draft.txt")).unwrap();
    let again = registered(s.plan_builtin("run_h", s.harness_options(&config), 3));
    assert_eq!(again.registration.workflow_version, lock.workflow_version);
    assert_eq!((again.session.model_calls, again.session.tool_runs), (0, 0));
    assert_eq!((again.session.model_replayed, again.session.tool_replayed), (4, 4));
    assert!(!s.scratch_dir("run_h").join("draft.txt").exists(), "bash did not run again");
    assert_eq!(s.events("run_h").len(), expected.len(), "nothing appended");
    // A finished session replays to its recorded end whatever the bounds are now.
    let mut tight = s.harness_options(&config);
    tight.max_turns = 1;
    let replayed = registered(s.plan_builtin("run_h", tight, 1));
    assert_eq!(replayed.registration.workflow_version, lock.workflow_version);
    assert_eq!(s.events("run_h").len(), expected.len(), "nothing appended");
}

#[test]
fn a_streamed_session_repairs_from_findings_and_registers() {
    full_session(true);
}

#[test]
fn a_session_without_streaming_does_the_same() {
    full_session(false);
}

#[test]
fn a_model_that_never_submits_fails_at_max_turns() {
    let s = Scratch::new("harness-turns");
    let server = scripted(vec![Reply::text("thinking"); 5]);
    let config = s.provider(&server.base_url(), true);
    let mut options = s.harness_options(&config);
    options.max_turns = 3;
    let Err(Failure::Failed { reason, located }) = s.plan_builtin("run_t", options.clone(), 3) else {
        panic!("expected a failed session")
    };
    assert!(reason.contains("within 3 model calls"), "{reason}");
    assert!(located.is_empty());
    assert_eq!(server.request_count(), 3);
    // The model was nudged to use its tools after each text-only answer.
    let last = &server.requests()[2].body["messages"];
    assert_eq!(last.as_array().unwrap().iter().filter(|m| m["role"] == "user").count(), 3);
    let kinds: Vec<String> = s.events("run_t").into_iter().map(|e| e.kind).collect();
    assert_eq!(kinds[kinds.len() - 2..], [events::SESSION_FAILED, events::RUN_FAILED]);
    // Replayed, even with a larger bound now: the same failure, nothing sent, nothing appended.
    let length = kinds.len();
    options.max_turns = 10;
    let Err(Failure::Failed { reason: again, .. }) = s.plan_builtin("run_t", options, 3) else {
        panic!("the failure is replayed")
    };
    assert_eq!(again, format!("{reason} (replayed from the event log; nothing called)"));
    assert_eq!(server.request_count(), 3);
    assert_eq!(s.events("run_t").len(), length);
}

#[test]
fn refused_submissions_past_max_attempts_fail_with_the_last_findings() {
    let s = Scratch::new("harness-attempts");
    let server = scripted(vec![submit("a", bad_lwir()), submit("b", bad_lwir()), submit("c", good_lwir())]);
    let config = s.provider(&server.base_url(), true);
    let Err(Failure::Failed { reason, located }) = s.plan_builtin("run_a", s.harness_options(&config), 2) else {
        panic!("expected a failed session")
    };
    assert!(reason.contains("2 submissions were refused"), "{reason}");
    let codes: Vec<Code> = located.iter().flat_map(|l| &l.diagnostics).map(|d| d.code).collect();
    assert_eq!(codes, [Code::BindingModelNotPermitted]);
    assert_eq!(server.request_count(), 2);
}

#[test]
fn wrong_tool_calls_are_errors_the_model_sees() {
    let s = Scratch::new("harness-wrong");
    let server = scripted(vec![
        Reply::tool_calls(vec![
            call("x1", "rm_rf", json!({})),
            little_provider::testing::ToolCall { id: "x2".into(), name: "bash".into(), arguments: "{not json".into() },
            call("x3", "bash", json!({ "cmd": "ls" })),
            call("x4", "submit_lwir", json!({ "lwir": 5 })),
        ]),
        submit("x5", good_lwir()),
    ]);
    let config = s.provider(&server.base_url(), true);
    registered(s.plan_builtin("run_w", s.harness_options(&config), 3));
    let errors: Vec<String> = tool_messages(&server.requests()[1])
        .into_iter()
        .map(|(_, content)| content["error"]["message"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(errors.len(), 4);
    assert!(errors[0].contains("there is no tool `rm_rf`"), "{}", errors[0]);
    assert!(errors[1].contains("not JSON"), "{}", errors[1]);
    assert!(errors[2].contains("`command` is missing"), "{}", errors[2]);
    assert!(errors[3].contains("`lwir` must be the LWIR document"), "{}", errors[3]);
    let failed = s.events("run_w").into_iter().filter(|e| e.kind == events::TOOL_FAILED).count();
    assert_eq!(failed, 4);
}

#[test]
fn a_resume_with_another_sandbox_is_a_divergence_naming_the_system_message() {
    let s = Scratch::new("harness-diverge");
    let server = scripted(vec![submit("d1", good_lwir())]);
    let config = s.provider(&server.base_url(), true);
    registered(s.plan_builtin("run_d", s.harness_options(&config), 3));
    let mut options = s.harness_options(&config);
    options.sandbox = little_sandbox::Mode::None;
    let Err(failure @ Failure::Blocked(_)) = s.plan_builtin("run_d", options, 3) else { panic!("expected divergence") };
    let Failure::Blocked(located) = failure else { unreachable!() };
    let diagnostics: Vec<_> = located.iter().flat_map(|l| &l.diagnostics).collect();
    assert_eq!(diagnostics.len(), 1);
    let d = diagnostics[0];
    assert_eq!(d.code, Code::PipelineReplayDivergence);
    assert_eq!(d.path.as_deref(), Some("$.messages[0]"));
    assert!(d.message.contains("turn 1") && d.message.contains("event 2 of the log"), "{}", d.message);
    assert_eq!(server.request_count(), 1, "nothing was sent");
    let last = s.events("run_d").pop().unwrap();
    assert_eq!((last.kind.as_str(), last.str("causeCode")), (events::RUN_FAILED, Some("replay_divergence")));
}
