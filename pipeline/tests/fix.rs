//! `little fix` (docs/reference/harness.md#the-fixer-session-little-fix) and `little verify` (docs/reference/harness.md#verification-little-verify): a fixer session against a scripted
//! model repairs a failed `code.run` step (a refused submission first), the repaired LWIR
//! is a new WorkflowVersion that `little check` agrees with, a second run replays; and the
//! runtime's check of an LWIR against its lock.

mod common;

use common::model::{bash, call, good_lwir, scripted, tool_messages};
use common::{Scratch, Silent};
use little_diagnostics::Code;
use little_pipeline::Failure;
use little_pipeline::events;
use little_pipeline::fix::{FixReport, FixRequest, fix};
use little_pipeline::verify::verify;
use little_provider::testing::Reply;
use serde_json::{Value, json};

const BROKEN: &str = "export async function run({ input }) {\n  return { score: input.signals.length / 10 };\n}\n";
const FIXED: &str =
    "export async function run({ input }) {\n  return { score: (input.signals ?? []).length / 10 };\n}\n";

/// The example LWIR with a `code.run` step that declares a fixer.
fn lwir_with_code_step() -> Value {
    let mut lwir = good_lwir();
    lwir["steps"].as_array_mut().unwrap().push(json!({
        "id": "score",
        "uses": "code.run",
        "needs": ["summarize"],
        "with": {
            "entrypoint": "score.js",
            "files": { "score.js": { "content": BROKEN, "sha256": little_hashing::sha256_identity(BROKEN.as_bytes()) } },
            "sandbox": { "network": "deny", "env": "deny", "fs": "deny" },
        },
        "output": { "mode": "object", "schema": { "type": "object", "properties": { "score": { "type": "number" } } } },
        "onFailure": { "fixer": { "model": "gpt-4o-mini", "maxAttempts": 2, "system": "Fix the code so it returns its schema." } },
    }));
    lwir
}

fn setup(s: &Scratch) {
    s.write("failed.lwir.json", &serde_json::to_string_pretty(&lwir_with_code_step()).unwrap());
    s.write(
        "error.txt",
        "TypeError: Cannot read properties of undefined (reading 'length')\n    at run (score.js:2:30)\n",
    );
}

fn run_fix(s: &Scratch, config: &std::path::Path, step: &str) -> Result<FixReport, Failure> {
    let (lwir, error, definition, log) = (
        s.path("failed.lwir.json"),
        s.path("error.txt"),
        s.path("definition.json"),
        little_pipeline::Store::file(s.path("events.jsonl")),
    );
    let mut harness = s.harness_options(config);
    harness.sandbox = little_sandbox::Mode::None;
    let request = FixRequest {
        lwir: &lwir,
        step,
        error: &error,
        definition: &definition,
        run_id: "fix_1",
        events: &log,
        harness,
        lock_wait: std::time::Duration::ZERO,
    };
    fix(&request, &mut Silent)
}

#[test]
fn a_fixer_session_repairs_the_step_and_the_lwir_is_a_new_version() {
    let s = Scratch::new("fix");
    setup(&s);
    let server = scripted(vec![
        bash("f1", "cat score.js"),
        // Every file but the entrypoint: refused by the LWIR checks.
        Reply::tool_calls(vec![call("f2", "submit_fix", json!({ "files": { "helper.js": "export {}" } }))]),
        Reply::tool_calls(vec![call("f3", "submit_fix", json!({ "files": { "score.js": FIXED } }))]),
    ]);
    let config = s.provider(&server.base_url(), true);
    let report = run_fix(&s, &config, "score").unwrap_or_else(|f| panic!("{f:?}"));

    let sha = little_hashing::sha256_identity(FIXED.as_bytes());
    assert_eq!(report.fixed_source, json!({ "score.js": { "content": FIXED, "sha256": sha } }));
    // The repaired LWIR is what `little check` calls a valid LWIR with that version.
    let repaired: Value = serde_json::from_str(&report.lwir_text).unwrap();
    assert_eq!(repaired["steps"][1]["with"]["files"], report.fixed_source);
    assert_eq!(report.version_hash, little_hashing::hash_canonical(&repaired).unwrap());
    assert_ne!(report.version_hash, little_hashing::hash_canonical(&lwir_with_code_step()).unwrap());
    s.write("fixed.lwir.json", &report.lwir_text);
    let lock = little_pipeline::lock(&s.path("fixed.lwir.json"), &s.path("definition.json")).unwrap();
    assert_eq!(lock.hash(), report.version_hash);

    // The fixer's model, system and task.
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].body["model"], "gpt-4o-mini");
    let system = requests[0].body["messages"][0]["content"].as_str().unwrap();
    assert!(system.starts_with("Fix the code so it returns its schema."), "{system}");
    let tools: Vec<&str> =
        requests[0].body["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert_eq!(tools, ["bash", "submit_fix"]);
    let task: Value = serde_json::from_str(requests[0].body["messages"][1]["content"].as_str().unwrap()).unwrap();
    assert_eq!(task["kind"], "fix_step");
    assert_eq!(task["files"]["score.js"], BROKEN);
    assert!(task["error"].as_str().unwrap().starts_with("TypeError"));
    assert_eq!(task["outputSchema"]["properties"]["score"]["type"], "number");
    // bash saw the step's files in its scratch; the refused submission's findings came back.
    let results = tool_messages(&requests[2]);
    assert!(results[0].1["stdout"].as_str().unwrap().contains("input.signals.length"));
    let codes: Vec<&str> =
        results[1].1["findings"].as_array().unwrap().iter().map(|f| f["code"].as_str().unwrap()).collect();
    assert!(codes.contains(&"lwir.missing_entrypoint"), "{codes:?}");

    let log = s.events("fix_1");
    let completed = log.iter().find(|e| e.kind == events::SESSION_COMPLETED).unwrap();
    assert_eq!(completed.payload["role"], "fixer");
    assert_eq!(completed.payload["fixedSource"], report.fixed_source);
    assert_eq!(completed.payload["attempts"], 2);

    // A second run replays: nothing sent, the same repaired LWIR.
    drop(server);
    let again = run_fix(&s, &config, "score").unwrap_or_else(|f| panic!("{f:?}"));
    assert_eq!(again.lwir_text, report.lwir_text);
    assert_eq!((again.session.model_calls, again.session.tool_runs), (0, 0));
    assert_eq!(s.events("fix_1").len(), log.len());
}

#[test]
fn only_a_code_run_step_with_a_fixer_can_be_fixed() {
    let s = Scratch::new("fix-refused");
    setup(&s);
    let server = scripted(vec![]);
    let config = s.provider(&server.base_url(), true);
    let message = |step: &str| match run_fix(&s, &config, step) {
        Err(Failure::Tool(message)) => message,
        other => panic!("{step}: {other:?}"),
    };
    assert!(message("scroe").contains("no step `scroe` (did you mean `score`?)"), "{}", message("scroe"));
    assert!(message("summarize").contains("uses `ai.generate`"), "{}", message("summarize"));
    let mut lwir = lwir_with_code_step();
    lwir["steps"][1].as_object_mut().unwrap().remove("onFailure");
    s.write("failed.lwir.json", &serde_json::to_string_pretty(&lwir).unwrap());
    assert!(message("score").contains("declares no `onFailure.fixer`"), "{}", message("score"));
    assert_eq!(server.request_count(), 0);
    assert!(!s.path("events.jsonl").exists(), "nothing was recorded");
}

#[test]
fn a_fixer_that_never_gets_it_right_fails_at_its_max_attempts() {
    let s = Scratch::new("fix-attempts");
    setup(&s);
    let refused = || Reply::tool_calls(vec![call("r", "submit_fix", json!({ "files": { "other.js": "" } }))]);
    let server = scripted(vec![refused(), refused(), refused()]);
    let config = s.provider(&server.base_url(), true);
    let Err(Failure::Failed { reason, located }) = run_fix(&s, &config, "score") else { panic!("expected failure") };
    assert!(reason.contains("2 submissions were refused"), "{reason}");
    assert!(located.iter().flat_map(|l| &l.diagnostics).any(|d| d.code == Code::LwirMissingEntrypoint));
    assert_eq!(server.request_count(), 2, "maxAttempts of the fixer");
}

fn with_tool(definition: &str, description: &str) -> String {
    definition.replace(
        r#""tools": [],
  "globalTools": [],"#,
        &format!(
            r#""tools": [{{ "id": "helpdesk.getTicket", "description": "{description}",
    "inputSchema": {{ "type": "object" }}, "outputSchema": {{ "type": "object" }} }}],
  "globalTools": ["helpdesk.getTicket"],"#
        ),
    )
}

#[test]
fn verify_checks_the_version_and_the_capabilities_against_the_lock() {
    let s = Scratch::new("verify");
    let definition = common::example("definition.json");
    s.write("definition.json", &with_tool(&definition, "Fetch a ticket."));
    let registration = little_pipeline::lock(&s.path("lwir.json"), &s.path("definition.json")).unwrap();
    s.write("lock.json", &serde_json::to_string_pretty(&registration.document()).unwrap());
    s.write("bare-lock.json", &serde_json::to_string_pretty(&registration.lock).unwrap());
    let (lwir, lock, def) = (s.path("lwir.json"), s.path("lock.json"), s.path("definition.json"));

    let verified = verify(&lwir, &lock, None).unwrap_or_else(|f| panic!("{f:?}"));
    assert_eq!(verified.hash, registration.hash());
    assert!(!verified.capabilities_checked);
    assert!(verify(&lwir, &lock, Some(&def)).unwrap().capabilities_checked);
    assert!(verify(&lwir, &s.path("bare-lock.json"), Some(&def)).is_ok());

    // Reformatted, the LWIR is the same version; changed, it is not.
    let value: Value = serde_json::from_str(&s.read("lwir.json")).unwrap();
    s.write("compact.json", &serde_json::to_string(&value).unwrap());
    assert!(verify(&s.path("compact.json"), &lock, Some(&def)).is_ok());
    s.write("changed.json", &s.read("lwir.json").replace("1-2 sentence", "3 sentence"));
    let Err(Failure::Failed { reason, .. }) = verify(&s.path("changed.json"), &lock, None) else {
        panic!("a changed LWIR is not verified")
    };
    assert!(reason.contains(registration.hash()), "{reason}");

    // A changed tool descriptor is capability drift at the lock's field.
    s.write("definition.json", &with_tool(&definition, "Fetch a ticket and its history."));
    let Err(Failure::Blocked(located)) = verify(&lwir, &lock, Some(&def)) else { panic!("expected drift") };
    let diagnostics: Vec<_> = located.iter().flat_map(|l| &l.diagnostics).collect();
    let paths: Vec<&str> = diagnostics.iter().map(|d| d.path.as_deref().unwrap()).collect();
    assert!(diagnostics.iter().all(|d| d.code == Code::PipelineCapabilityDrift));
    assert_eq!(
        paths,
        ["$.lock.capabilityManifest.workflowDefinitionHash", "$.lock.capabilityManifest.tools[0].descriptorHash"]
    );
    assert!(diagnostics[1].span.is_some(), "located in the lock file");
}
