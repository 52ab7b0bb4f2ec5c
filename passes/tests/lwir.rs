//! LWIR checks beyond the explanation pages: the graph codes of `needs`, what is not
//! reported as a consequence of another fault, the WorkflowVersion, and incrementality.

use little_diagnostics::{Code, Diagnostic, Severity};
use little_frontend::catalog::DEFAULT_CATALOG;
use little_passes::lwir::{check_lwir_text, workflow_version};
use little_passes::{Database, FileReport, SourceFile, Workspace, report};
use salsa::Setter;
use serde_json::{Value, json};

const WORKED_EXAMPLE: &str = include_str!("lwir/summarize.lwir.json");
const SNAPSHOT: &str = include_str!("lwir/summarize.snapshot.json");

fn worked_example() -> Value {
    serde_json::from_str(WORKED_EXAMPLE).unwrap()
}

/// An `ai.generate` step reading `prompt`, needing `needs`, declaring `summary`.
fn step(id: &str, needs: &[&str], prompt: &str) -> Value {
    json!({
        "id": id, "uses": "ai.generate", "needs": needs,
        "with": { "model": "gpt-4o-mini", "prompt": prompt },
        "output": { "mode": "object", "schema": {
            "type": "object", "required": ["summary"], "properties": { "summary": { "type": "string" } } } }
    })
}

fn with_steps(steps: Vec<Value>) -> String {
    let mut lwir = worked_example();
    lwir["steps"] = Value::Array(steps);
    serde_json::to_string_pretty(&lwir).unwrap()
}

fn check(text: &str, snapshot: Option<&str>) -> FileReport {
    check_lwir_text(text, snapshot).report
}

/// Errors and warnings (the `binding.snapshot_unavailable` info is not a fault).
fn faults(report: &FileReport) -> Vec<&Diagnostic> {
    report.diagnostics.iter().filter(|d| d.severity() != Severity::Info).collect()
}

fn codes(report: &FileReport) -> Vec<Code> {
    faults(report).iter().map(|d| d.code).collect()
}

#[test]
fn the_worked_example_is_clean_and_gets_its_workflow_version() {
    let checked = check_lwir_text(WORKED_EXAMPLE, Some(SNAPSHOT));
    assert!(checked.report.diagnostics.is_empty(), "{:?}", checked.report.diagnostics);
    assert!(checked.snapshot_errors.is_empty());
    let version = checked.version.expect("nothing blocks");
    let text = version.canonical_json.as_deref().unwrap();
    assert!(text.starts_with(r#"{"apiVersion":"littleworkflow.dev/v0.1","input":"#), "{text}");
    assert_eq!(version.hash, little_hashing::sha256_identity(text.as_bytes()));
    assert_eq!(version.id, format!("wfver_{}", &version.hash["sha256:".len().."sha256:".len() + 16]));
    assert_eq!(version.canonicalizer, "little-workflow-canonical-json@alpha");
    // The report's candidate is the same version (without the text).
    let candidate = checked.report.candidate.as_ref().and_then(|c| c.workflow_version()).unwrap();
    assert_eq!((&candidate.id, &candidate.hash), (&version.id, &version.hash));
}

#[test]
fn the_workflow_version_ignores_whitespace_and_key_order_but_not_content() {
    let original = workflow_version(WORKED_EXAMPLE).unwrap();
    let compact = serde_json::to_string(&worked_example()).unwrap();
    // serde_json sorts keys: another order and no whitespace.
    assert_eq!(workflow_version(&compact).unwrap().hash, original.hash);
    let edited = WORKED_EXAMPLE.replace("1-2 sentence", "one-sentence");
    assert_ne!(workflow_version(&edited).unwrap().hash, original.hash);
}

#[test]
fn without_a_snapshot_the_report_says_the_binding_checks_were_skipped() {
    let report = check(WORKED_EXAMPLE, None);
    let [info] = report.diagnostics.as_slice() else { panic!("{:?}", report.diagnostics) };
    assert_eq!(info.code, Code::BindingSnapshotUnavailable);
    assert_eq!(info.path.as_deref(), Some("$.metadata.name"));
    assert!(!info.blocking());
    assert!(report.candidate.is_some(), "an info does not block");
}

#[test]
fn a_duplicate_step_id_is_one_graph_duplicate_node_id() {
    let text = with_steps(vec![step("summarize", &[], "a"), step("summarize", &[], "b")]);
    let report = check(&text, None);
    assert_eq!(codes(&report), [Code::GraphDuplicateNodeId]);
    let d = faults(&report)[0];
    assert_eq!(d.path.as_deref(), Some("$.steps[1].id"));
    assert_eq!(d.related[0].path, "$.steps[0].id");
    assert!(report.candidate.is_none());
}

#[test]
fn an_unknown_need_is_a_dangling_edge_with_a_suggestion() {
    let text = with_steps(vec![step("summarize", &[], "a"), step("classify", &["sumarize"], "b")]);
    let report = check(&text, None);
    assert_eq!(codes(&report), [Code::GraphDanglingEdge]);
    let d = faults(&report)[0];
    assert_eq!(d.path.as_deref(), Some("$.steps[1].needs[0]"));
    assert_eq!(d.help.as_deref(), Some("did you mean `summarize`?"));
}

#[test]
fn a_loop_of_needs_is_one_cycle_whose_witness_starts_at_the_smallest_id() {
    // c needs b, b needs a, a needs c: a -> b -> c -> a.
    let text = with_steps(vec![
        step("c", &["b"], "{{ steps.b.output.summary }}"),
        step("b", &["a"], "{{ steps.a.output.summary }}"),
        step("a", &["c"], "{{ steps.c.output.summary }}"),
    ]);
    let report = check(&text, None);
    assert_eq!(codes(&report), [Code::GraphCycle], "templates inside the loop are not reported again");
    let d = faults(&report)[0];
    let witness = d.witness.as_ref().unwrap();
    assert_eq!(witness.nodes, ["a", "b", "c"]);
    assert!(witness.edges.is_empty(), "needs have no ids");
    // On the need that closes the loop into the witness's second step: b needs a.
    assert_eq!(d.path.as_deref(), Some("$.steps[1].needs[0]"));
    assert_eq!(d.node_id.as_deref(), Some("a"));
}

#[test]
fn a_step_that_needs_itself_is_a_cycle_of_one() {
    let report = check(&with_steps(vec![step("a", &["a"], "x")]), None);
    assert_eq!(codes(&report), [Code::GraphCycle]);
    assert_eq!(faults(&report)[0].witness.as_ref().unwrap().nodes, ["a"]);
}

#[test]
fn a_dangling_need_is_not_reported_again_by_the_templates_of_its_step() {
    // The typo in `needs` also makes `summarize` not upstream, and a template naming the
    // typo'd step does not exist: both follow from the one dangling need.
    let text = with_steps(vec![
        step("summarize", &[], "a"),
        step("classify", &["sumarize"], "{{ steps.summarize.output.summary }} {{ steps.sumarize.output.summary }}"),
    ]);
    assert_eq!(codes(&check(&text, None)), [Code::GraphDanglingEdge]);
}

#[test]
fn template_faults_carry_suggestions() {
    let text = with_steps(vec![
        step("summarize", &[], "{{ input.ticketid }}"),
        step("classify", &["summarize"], "{{ steps.sumarize.output.summary }} {{ steps.summarize.output.sumary }}"),
    ]);
    let report = check(&text, None);
    let found: Vec<(Code, Option<&str>)> = faults(&report).iter().map(|d| (d.code, d.help.as_deref())).collect();
    // Both templates of `classify` stand on one string: same span, so ordered by code (docs/reference/diagnostics.md).
    assert_eq!(
        found,
        [
            (Code::TemplateUnknownField, Some("did you mean `ticketId`?")),
            (Code::TemplateUnknownField, Some("did you mean `summary`?")),
            (Code::TemplateUnknownReference, Some("did you mean `summarize`?")),
        ]
    );
}

#[test]
fn a_malformed_step_gets_only_its_shape_finding() {
    // No prompt, and a model outside the permissions: the binding pass skips the step.
    let mut bad = step("summarize", &[], "x");
    bad["with"] = json!({ "model": "gpt-5" });
    let report = check(&with_steps(vec![bad]), Some(SNAPSHOT));
    assert_eq!(codes(&report), [Code::LwirInvalidShape]);
    assert_eq!(faults(&report)[0].path.as_deref(), Some("$.steps[0].with"));
}

#[test]
fn unknown_fields_are_shape_faults_with_a_suggestion() {
    let mut lwir = worked_example();
    lwir["step"] = json!([]);
    let report = check(&serde_json::to_string(&lwir).unwrap(), None);
    assert_eq!(codes(&report), [Code::LwirInvalidShape]);
    assert_eq!(faults(&report)[0].help.as_deref(), Some("did you mean `steps`?"));
}

#[test]
fn a_fixer_model_outside_the_permissions_is_a_step_model_fault() {
    let content = "export async function run() { return { summary: 'x' }; }";
    let mut code = code_step(content);
    code["onFailure"] = json!({ "fixer": { "model": "gpt-5", "maxAttempts": 3, "system": "Fix it." } });
    let report = check(&with_steps(vec![code.clone()]), Some(SNAPSHOT));
    assert_eq!(codes(&report), [Code::BindingStepModelNotAllowed]);
    assert_eq!(faults(&report)[0].path.as_deref(), Some("$.steps[0].onFailure.fixer.model"));
    // Out of range attempts: the fixer's own fault only.
    let mut bad = code;
    bad["onFailure"]["fixer"]["maxAttempts"] = json!(11);
    assert_eq!(codes(&check(&with_steps(vec![bad]), Some(SNAPSHOT))), [Code::LwirInvalidFixer]);
}

#[test]
fn code_files_are_not_scanned_for_templates() {
    let content = "const x = {{ not a template }};";
    let code = code_step(content);
    assert_eq!(codes(&check(&with_steps(vec![code]), None)), []);
}

#[test]
fn an_edit_inside_one_step_reruns_only_that_steps_checks() {
    let steps = |edited: &str| {
        with_steps((0..50).map(|i| step(&format!("s{i:02}"), &[], if i == 25 { edited } else { "x" })).collect())
    };
    let (mut db, log) = Database::with_execution_log();
    let catalog = SourceFile::new(&db, "catalog.json".into(), DEFAULT_CATALOG.into());
    let workspace = Workspace::new(&db, catalog, None, None, None);
    let file = SourceFile::new(&db, "w.lwir.json".into(), steps("x").into());
    assert!(codes(&report(&db, workspace, file)).is_empty());
    let count = |log: &little_passes::db::ExecutionLog, query: &str| {
        log.lock().unwrap().iter().filter(|e| e.starts_with(&format!("{query}("))).count()
    };
    assert_eq!(count(&log, "step_findings"), 50);
    log.lock().unwrap().clear();
    file.set_text(&mut db).to(steps("{{ input.ticketId }}").into());
    assert!(codes(&report(&db, workspace, file)).is_empty());
    assert_eq!(count(&log, "step_findings"), 1, "only the edited step");
    assert_eq!(count(&log, "template_findings"), 1, "only the edited step's templates");
}

#[test]
fn the_pipeline_entry_point_reports_a_faulty_snapshot() {
    let checked = check_lwir_text(WORKED_EXAMPLE, Some(r#"{ "id": "support.summarize-ticket" }"#));
    assert!(!checked.snapshot_errors.is_empty());
    assert!(checked.snapshot_errors.iter().all(|d| d.code == Code::LwirInvalidShape && d.span.is_some()));
    let not_json = check_lwir_text(WORKED_EXAMPLE, Some("{"));
    assert_eq!(not_json.snapshot_errors[0].code, Code::ParseInvalidJson);
}

/// A `code.run` step `score` with one file holding `content`, its hash right.
fn code_step(content: &str) -> Value {
    json!({
        "id": "score", "uses": "code.run",
        "with": {
            "entrypoint": "score.ts",
            "files": { "score.ts": { "content": content, "sha256": little_hashing::sha256_identity(content.as_bytes()) } },
            "sandbox": { "network": "deny", "env": "deny", "fs": "deny" }
        },
        "output": { "schema": { "type": "object" } }
    })
}
