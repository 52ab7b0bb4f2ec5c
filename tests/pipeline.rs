//! The compile-pipeline commands end to end: `little snapshot`, `lock`, `plan`, `events`,
//! on the worked example `examples/support-summarize-ticket/`.

mod common;

use std::path::{Path, PathBuf};

use common::{Run, little, little_in};
use serde_json::Value;

const EXAMPLE: &str = "examples/support-summarize-ticket";

fn example(name: &str) -> PathBuf {
    common::worked_example(name)
}

fn scratch(name: &str) -> PathBuf {
    common::fresh_dir("little-cli-pipeline", name)
}

fn json(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}\n{}", run.stdout, run.stderr))
}

/// `little plan` with the worked example's own planner script.
fn plan_args(dir: &Path, run_id: &str, extra: &[&str]) -> Vec<String> {
    common::external_plan_args(dir, &format!("sh '{}'", example("planner.sh").display()), run_id, extra)
}

#[test]
fn snapshot_prints_the_seed_fields_and_check_reads_it() {
    let run = little(["snapshot", &format!("{EXAMPLE}/definition.json")]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let snapshot = json(&run);
    let keys: Vec<&str> = snapshot.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "id",
            "description",
            "inputSchemaHash",
            "outputSchemaHash",
            "modelSlots",
            "plannerConfig",
            "workerConfig",
            "globalTools",
            "memoryConfig"
        ]
    );
    let slots: Vec<&str> =
        snapshot["modelSlots"].as_array().unwrap().iter().map(|s| s["id"].as_str().unwrap()).collect();
    assert_eq!(slots, ["gpt-5", "gpt-4o-mini"]);
    assert_eq!(snapshot["plannerConfig"]["modelSlotId"], "gpt-5");
    // The input schema hash is the hash of the canonical schema, as `little hash` computes it.
    let dir = scratch("snapshot");
    let definition: Value =
        serde_json::from_str(&std::fs::read_to_string(example("definition.json")).unwrap()).unwrap();
    std::fs::write(dir.join("schema.json"), definition["inputSchema"].to_string()).unwrap();
    let hashed = little(["hash", &dir.join("schema.json").display().to_string()]);
    assert_eq!(hashed.stdout.trim(), snapshot["inputSchemaHash"]);

    // `little check --snapshot` binds the example's LWIR against the printed snapshot.
    std::fs::write(dir.join("snapshot.json"), &run.stdout).unwrap();
    let snapshot_path = dir.join("snapshot.json").display().to_string();
    let check = little(["check", &format!("{EXAMPLE}/lwir.json"), "--snapshot", &snapshot_path]);
    assert_eq!(check.code, 0, "{}", check.stdout);
    assert!(check.stdout.contains("workflow version wfver_"), "{}", check.stdout);
    std::fs::write(
        dir.join("renamed.json"),
        std::fs::read_to_string(example("lwir.json"))
            .unwrap()
            .replace(r#""name": "support.summarize-ticket""#, r#""name": "support.summarise-ticket""#),
    )
    .unwrap();
    let renamed = little(["check", &dir.join("renamed.json").display().to_string(), "--snapshot", &snapshot_path]);
    assert_eq!(renamed.code, 1);
    assert!(renamed.stdout.contains("binding.name_mismatch"), "{}", renamed.stdout);

    let manifest = json(&little(["snapshot", "--manifest", &format!("{EXAMPLE}/definition.json")]));
    assert_eq!(manifest["manifest"]["harnessId"], "workflowHarness@1.0.0");
    assert!(manifest["manifestHash"].as_str().unwrap().starts_with("sha256:"));
}

#[test]
fn a_definition_with_a_wrong_shape_is_reported_by_check_and_refused_by_snapshot() {
    let dir = scratch("bad-definition");
    let text = std::fs::read_to_string(example("definition.json"))
        .unwrap()
        .replace(r#""maxOuterCycles": 1"#, r#""maxOuterCycles": "one""#);
    let path = dir.join("definition.json").display().to_string();
    std::fs::write(&path, text).unwrap();
    let check = little(["check", &path, "--format", "json"]);
    assert_eq!(check.code, 1);
    let report = json(&check);
    let diagnostics = report["files"][0]["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1);
    assert_eq!(diagnostics[0]["code"], "definition.invalid_shape");
    assert_eq!(diagnostics[0]["path"], "$.maxOuterCycles");
    let snapshot = little(["snapshot", &path]);
    assert_eq!(snapshot.code, 1);
    assert!(snapshot.stdout.contains("definition.invalid_shape"), "{}", snapshot.stdout);

    let clean = little(["check", &format!("{EXAMPLE}/definition.json")]);
    assert_eq!(clean.code, 0, "{}", clean.stdout);
    assert!(!clean.stdout.contains("no candidate"), "{}", clean.stdout);
}

#[test]
fn an_invalid_input_exits_1_with_its_paths_and_the_log_says_why() {
    let dir = scratch("bad-input");
    std::fs::write(dir.join("input.json"), r#"{ "ticketId": 4821, "transcript": "x" }"#).unwrap();
    let mut args = plan_args(&dir, "run_bad", &[]);
    args[3] = dir.join("input.json").display().to_string();
    let run = little(&args);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stdout.contains("error[pipeline.input_schema_error]"), "{}", run.stdout);
    assert!(run.stdout.contains("$.ticketId"), "{}", run.stdout);
    let events = little(["events", &dir.join("events.jsonl").display().to_string()]);
    assert_eq!(
        events.stdout,
        "run run_bad\n   1  RunFailed                    cause: input_schema_error: the input does not match the \
         definition's input schema at `$.ticketId`: 4821 is not of type \"string\"\n"
    );
}

#[test]
fn a_hanging_planner_is_exit_2_with_a_clear_error() {
    let dir = scratch("hang");
    let mut args = plan_args(&dir, "run_h", &["--timeout", "300ms"]);
    args[5] = "sleep 30".into();
    let run = little(&args);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("did not finish attempt 1 within 300ms (`--timeout`); it was killed"),
        "{}",
        run.stderr
    );
}

#[test]
fn events_ignores_a_torn_last_line_with_a_warning() {
    let dir = scratch("events-torn");
    let log = dir.join("events.jsonl");
    std::fs::write(
        &log,
        "{\"runId\":\"r\",\"seq\":1,\"type\":\"harness.session.started\",\"payload\":{\"role\":\"planner\",\"manifestHash\":\"sha256:0123456789abcdef\"}}\n{\"runId\":\"r\",\"seq\":2,\"type\":\"harness.mo",
    )
    .unwrap();
    let run = little(["events", &log.display().to_string()]);
    assert_eq!(run.code, 0);
    assert_eq!(
        run.stdout,
        "run r\n   1  harness.session.started      planner (external), cycle 1, manifest sha256:0123456789ab\n"
    );
    assert!(run.stderr.contains("torn"), "{}", run.stderr);
    let as_json = json(&little(["events", &log.display().to_string(), "--format", "json"]));
    assert_eq!(as_json.as_array().unwrap().len(), 1);
    assert_eq!(little(["events", &log.display().to_string(), "--run-id", "other"]).code, 2);
}

// The tests below register LWIR, so they need the LWIR checks of `little check`.

#[test]
fn plan_walks_through_the_worked_example_and_resumes_without_the_planner() {
    let dir = scratch("walkthrough");
    let lock_path = dir.join("lock.json");
    let run = little_in(&dir, plan_args(&dir, "run_7f3", &["-o", &lock_path.display().to_string()]));
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("registered wfver_"), "{}", run.stdout);
    assert!(run.stdout.contains("from attempt 2; planner ran 2 times"), "{}", run.stdout);
    let document: Value = serde_json::from_str(&std::fs::read_to_string(&lock_path).unwrap()).unwrap();

    let events = little(["events", &dir.join("events.jsonl").display().to_string(), "--run-id", "run_7f3"]);
    let types: Vec<&str> = events.stdout.lines().skip(1).map(|l| l.split_whitespace().nth(1).unwrap()).collect();
    assert_eq!(
        types,
        [
            "harness.session.started",
            "harness.model.called",
            "harness.tool_call.started",
            "harness.tool_call.succeeded",
            "harness.model.responded",
            "harness.model.called",
            "harness.tool_call.started",
            "harness.tool_call.succeeded",
            "harness.model.responded",
            "harness.session.completed",
            "WorkflowVersionRegistered"
        ]
    );

    let again = little_in(&dir, plan_args(&dir, "run_7f3", &["-o", &lock_path.display().to_string()]));
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(again.stdout.contains("replayed from the event log, planner not run"), "{}", again.stdout);
    let replayed: Value = serde_json::from_str(&std::fs::read_to_string(&lock_path).unwrap()).unwrap();
    assert_eq!(document, replayed);

    // `little lock` on the same LWIR gives the same version and lock.
    let locked =
        little(["lock", &format!("{EXAMPLE}/lwir.json"), "--definition", &format!("{EXAMPLE}/definition.json")]);
    assert_eq!(locked.code, 0, "{}", locked.stdout);
    assert_eq!(json(&locked), document);
}

#[test]
fn lock_is_content_addressed_and_refuses_what_blocks() {
    let dir = scratch("lock");
    let text = std::fs::read_to_string(example("lwir.json")).unwrap();
    let value: Value = serde_json::from_str(&text).unwrap();
    // Reformatted (compact), the same LWIR is the same WorkflowVersion.
    std::fs::write(dir.join("compact.json"), value.to_string()).unwrap();
    let definition = example("definition.json").display().to_string();
    let a = json(&little(["lock", &example("lwir.json").display().to_string(), "--definition", &definition]));
    let b = json(&little(["lock", &dir.join("compact.json").display().to_string(), "--definition", &definition]));
    assert_eq!(a["workflowVersion"]["id"], b["workflowVersion"]["id"]);
    assert_eq!(a["lock"], b["lock"]);
    let lock = &a["lock"];
    let keys: Vec<&str> = lock.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "workflowVersionId",
            "workflowVersionHash",
            "lwirVersionId",
            "lwirHash",
            "workflowDefinitionHash",
            "inputSchemaHash",
            "requestedOutput",
            "requestedOutputHash",
            "capabilityManifest",
            "capabilityManifestHash",
            "modelSlots",
            "tools",
            "validationHash"
        ]
    );

    std::fs::write(dir.join("bad.json"), text.replace(r#""gpt-4o-mini""#, r#""gpt-4o""#)).unwrap();
    let refused = little(["lock", &dir.join("bad.json").display().to_string(), "--definition", &definition]);
    assert_eq!(refused.code, 1);
    assert!(refused.stdout.contains("binding.model_not_permitted"), "{}", refused.stdout);
    assert!(refused.stdout.contains("not registered"), "{}", refused.stdout);
}

#[test]
fn a_later_outer_loop_cycle_is_planned_shown_and_its_manifest_printed() {
    let dir = scratch("outer-loop");
    let definition = dir.join("definition.json");
    std::fs::write(
        &definition,
        std::fs::read_to_string(example("definition.json"))
            .unwrap()
            .replace(r#""maxOuterCycles": 1"#, r#""maxOuterCycles": 2"#),
    )
    .unwrap();
    let cycle2 = dir.join("cycle2.json");
    let prior = serde_json::json!([{ "cycleNumber": 1, "status": "failed", "output": null, "summary": "no severity" }]);
    std::fs::write(&cycle2, serde_json::json!({ "cycleNumber": 2, "priorCycles": prior }).to_string()).unwrap();
    let (definition, cycle2) = (definition.display().to_string(), cycle2.display().to_string());

    let manifest = json(&little(["snapshot", &definition, "--manifest", "--outer-loop", &cycle2]));
    assert_eq!(manifest["manifest"]["outerLoopContextHash"], little_hashing::hash_canonical(&prior).unwrap());
    let first = json(&little(["snapshot", &definition, "--manifest"]));
    assert!(first["manifest"].get("outerLoopContextHash").is_none());
    assert_ne!(first["manifestHash"], manifest["manifestHash"]);
    assert_eq!(little(["snapshot", &definition, "--outer-loop", &cycle2]).code, 2, "only with --manifest");

    let with_definition = |extra: &[&str]| {
        let mut args = plan_args(&dir, "run_oc", extra);
        args[1] = definition.clone();
        args
    };
    assert_eq!(little_in(&dir, with_definition(&[])).code, 0);
    let run = little_in(&dir, with_definition(&["--outer-loop", &cycle2]));
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("planner ran 2 times"), "cycle 2 is a session of its own: {}", run.stdout);
    let events = little(["events", &dir.join("events.jsonl").display().to_string()]).stdout;
    let sessions: Vec<&str> = events.lines().filter(|l| l.contains("harness.session.started")).collect();
    assert_eq!(sessions.len(), 2, "{events}");
    assert!(sessions[0].contains("planner (external), cycle 1, manifest "), "{events}");
    assert!(sessions[1].contains("planner (external), cycle 2, manifest "), "{events}");
    assert!(events.contains("cycle 2 attempt 1: 1 finding, repair requested"), "{events}");

    // A cycle past maxOuterCycles is a bad argument: exit 2, the log untouched.
    let cycle3 = dir.join("cycle3.json");
    std::fs::write(&cycle3, r#"{ "cycleNumber": 3, "priorCycles": [] }"#).unwrap();
    let before = std::fs::read(dir.join("events.jsonl")).unwrap();
    let refused = little_in(&dir, with_definition(&["--outer-loop", &cycle3.display().to_string()]));
    assert_eq!(refused.code, 2, "{}", refused.stdout);
    assert!(
        refused.stderr.contains(":1:18: $.cycleNumber: cycle 3 is past the definition's `maxOuterCycles` (2)"),
        "{}",
        refused.stderr
    );
    assert_eq!(std::fs::read(dir.join("events.jsonl")).unwrap(), before);
}

#[test]
fn plan_format_json_prints_the_outcome_registered_refused_or_drifted_as_its_schema_says() {
    let validator = little_conformance::examples::schema_validator("plan");
    let outcome = |run: &Run| {
        let value = json(run);
        let errors: Vec<String> =
            validator.iter_errors(&value).map(|e| format!("{}: {e}", e.instance_path())).collect();
        assert!(errors.is_empty(), "{errors:#?}\n{value:#}");
        assert_eq!(value["format"], "little-plan/v1");
        value
    };
    let dir = scratch("plan-json");
    let definition = dir.join("definition.json");
    std::fs::copy(example("definition.json"), &definition).unwrap();
    let lock_path = dir.join("lock.json");
    let mut args = plan_args(&dir, "run_j", &["--format", "json", "-o", &lock_path.display().to_string()]);
    args[1] = definition.display().to_string();

    let run = little_in(&dir, &args);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let registered = outcome(&run);
    assert_eq!(registered["outcome"], "registered");
    assert_eq!(registered["runId"], "run_j");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&lock_path).unwrap()).unwrap();
    assert_eq!(registered["registration"], written, "the registration `-o` writes");
    assert_eq!(registered["lwirVersionId"], written["workflowVersion"]["id"]);
    assert_eq!(registered["workflowVersionId"], written["lock"]["workflowVersionId"]);

    // A refused input: the run failed, with its cause and the diagnostic as a report.
    std::fs::write(dir.join("bad-input.json"), r#"{ "ticketId": 4821, "transcript": "x" }"#).unwrap();
    let mut bad = args.clone();
    bad[3] = dir.join("bad-input.json").display().to_string();
    bad[7] = "run_bad".into();
    let run = little_in(&dir, &bad);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let refused = outcome(&run);
    assert_eq!((&refused["outcome"], &refused["code"]), (&"failed".into(), &"run.failed".into()), "{refused:#}");
    assert_eq!(refused["causeCode"], "input_schema_error");
    let diagnostic = &refused["report"]["files"][0]["diagnostics"][0];
    assert_eq!(diagnostic["code"], "pipeline.input_schema_error", "{refused:#}");
    assert_eq!(diagnostic["path"], "$.ticketId", "{refused:#}");

    // Drift: the planner's system prompt changed since the run was planned.
    let mut changed: Value = serde_json::from_str(&std::fs::read_to_string(&definition).unwrap()).unwrap();
    changed["planner"]["system"] = "Something else.".into();
    std::fs::write(&definition, changed.to_string()).unwrap();
    let run = little_in(&dir, &args);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    let drifted = outcome(&run);
    assert_eq!(drifted["code"], "run.failed", "{drifted:#}");
    assert_eq!(drifted["causeCode"], "capability_drift", "{drifted:#}");
    assert_eq!(drifted["report"]["files"][0]["diagnostics"][0]["code"], "pipeline.capability_drift", "{drifted:#}");

    // What little cannot do is exit 2, and still one object.
    let mut missing = args.clone();
    missing[3] = dir.join("missing.json").display().to_string();
    missing[7] = "run_missing".into();
    let run = little_in(&dir, &missing);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(outcome(&run)["code"], "failed");
}
