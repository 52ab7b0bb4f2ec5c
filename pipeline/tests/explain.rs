//! The `pipeline.*` explanation pages, proven: each failing example (a definition and a
//! ```` ```json input ```` block) gets exactly its code from `little plan`'s stages, and
//! each fixed example gets none.

mod common;

use common::{Scratch, blocked_codes, registered};
use little_conformance::pages::{Example, examples};
use little_diagnostics::Code;
use little_passes::Database;
use little_pipeline::Failure;
use little_pipeline::documents::{load_definition, load_input, missing_tools};

fn input_of(example: &Example) -> &str {
    example
        .extra
        .iter()
        .find(|(info, _)| info == "json input")
        .map(|(_, block)| block.as_str())
        .expect("a ```json input block")
}

/// The codes of the stages before the planner (definition, input, registry), from the
/// first stage that stops the run, as `little plan` stops there.
fn pre_planner_codes(scratch: &Scratch, example: &Example) -> Vec<Code> {
    scratch.write("definition.json", &example.document);
    scratch.write("input.json", input_of(example));
    let db = Database::default();
    let codes = |failure: Failure| match failure {
        Failure::Blocked(located) => located.iter().flat_map(|l| &l.diagnostics).map(|d| d.code).collect(),
        Failure::Tool(message) => panic!("tool failure: {message}"),
        Failure::Failed { reason, .. } => panic!("failed: {reason}"),
        Failure::Cancelled => panic!("cancelled"),
    };
    let loaded = match load_definition(&db, &scratch.path("definition.json")) {
        Ok(loaded) => loaded,
        Err(failure) => return codes(failure),
    };
    if let Err(failure) = load_input(&db, &scratch.path("input.json"), &loaded.definition) {
        return codes(failure);
    }
    match missing_tools(&loaded) {
        Ok(()) => Vec::new(),
        Err(failure) => codes(failure),
    }
}

fn exactly(code: Code, found: &[Code]) -> bool {
    !found.is_empty() && found.iter().all(|c| *c == code)
}

#[test]
fn input_schema_error_and_missing_tool_pages() {
    for code in [Code::PipelineInputSchemaError, Code::PipelineMissingTool] {
        let pages = examples(code.explanation()).unwrap();
        let scratch = Scratch::new(&format!("page-{}", code.as_str()));
        let failing = pre_planner_codes(&scratch, &pages.failing);
        assert!(exactly(code, &failing), "{}: failing example got {failing:?}", code.as_str());
        let fixed = pre_planner_codes(&scratch, &pages.fixed);
        assert!(fixed.is_empty(), "{}: fixed example got {fixed:?}", code.as_str());
    }
}

#[test]
fn missing_tool_points_at_the_name_with_a_suggestion() {
    let pages = examples(Code::PipelineMissingTool.explanation()).unwrap();
    let scratch = Scratch::new("page-missing-tool-detail");
    scratch.write("definition.json", &pages.failing.document);
    let db = Database::default();
    let loaded = load_definition(&db, &scratch.path("definition.json")).unwrap();
    let Err(Failure::Blocked(located)) = missing_tools(&loaded) else { panic!("expected blocked") };
    let d = &located[0].diagnostics[0];
    assert_eq!(d.path.as_deref(), Some("$.globalTools[0]"));
    assert_eq!(d.help.as_deref(), Some("did you mean `helpdesk.getTicket`?"));
}

/// The drift page: the run starts with the fixed definition; resuming with the failing one
/// is exactly `pipeline.capability_drift` (the planner does not run); resuming with the
/// fixed one again replays the recorded session. The planner's LWIR must validate, so this
/// test also needs the LWIR checks.
#[test]
fn capability_drift_page() {
    let pages = examples(Code::PipelineCapabilityDrift.explanation()).unwrap();
    let scratch = Scratch::new("page-drift");
    let planner = scratch.good_planner();
    scratch.write("fixed.json", &pages.fixed.document);
    scratch.write("failing.json", &pages.failing.document);
    scratch.write("input.json", input_of(&pages.fixed));
    assert_eq!(input_of(&pages.fixed), input_of(&pages.failing));
    let run = |definition: &str| {
        scratch.plan_with(&planner, "run_7f3", definition, "input.json", std::time::Duration::from_secs(60), 3)
    };
    registered(run("fixed.json"));
    assert_eq!(blocked_codes(run("failing.json")), [Code::PipelineCapabilityDrift]);
    assert_eq!(scratch.runs("good").len(), 1);
    let replayed = registered(run("fixed.json"));
    assert_eq!(replayed.planner_runs, 0);
}

#[test]
fn drift_shows_the_fields_that_drifted_at_the_system_prompt() {
    let pages = examples(Code::PipelineCapabilityDrift.explanation()).unwrap();
    let scratch = Scratch::new("page-drift-detail");
    // A planner that fails fast: only the recorded session start matters here.
    let planner = scratch.planner("fast", "exit 1");
    scratch.write("fixed.json", &pages.fixed.document);
    scratch.write("failing.json", &pages.failing.document);
    scratch.write("input.json", input_of(&pages.fixed));
    let run = |definition: &str| {
        scratch.plan_with(&planner, "run_7f3", definition, "input.json", std::time::Duration::from_secs(60), 3)
    };
    assert!(matches!(run("fixed.json"), Err(Failure::Tool(_))));
    let Err(Failure::Blocked(located)) = run("failing.json") else { panic!("expected drift") };
    let d = &located[0].diagnostics[0];
    assert_eq!(d.code, Code::PipelineCapabilityDrift);
    assert_eq!(d.path.as_deref(), Some("$.planner.system"));
    let fields: Vec<&str> = d.message.lines().skip(1).map(|l| l.split(':').next().unwrap()).collect();
    assert_eq!(fields, ["systemPromptHash", "workflowDefinitionHash"], "{}", d.message);
}

/// The divergence page: the run is recorded with the fixed example's command (the
/// sandbox it names), then resumed with the failing one's: exactly
/// `pipeline.replay_divergence`, nothing sent; the fixed command replays without the model.
#[test]
fn replay_divergence_page() {
    let pages = examples(Code::PipelineReplayDivergence.explanation()).unwrap();
    let scratch = Scratch::new("page-divergence");
    let sandbox_of = |example: &Example| {
        let command = example
            .extra
            .iter()
            .find(|(info, _)| info == "sh command")
            .map(|(_, block)| block.clone())
            .expect("a ```sh command block");
        assert!(command.contains("--run-id run_7f3"), "{command}");
        if command.contains("--sandbox none") { little_sandbox::Mode::None } else { little_sandbox::Mode::Bwrap }
    };
    assert_eq!(input_of(&pages.fixed), input_of(&pages.failing));
    assert_eq!(pages.fixed.document, pages.failing.document, "only the command differs");
    scratch.write("definition.json", &pages.fixed.document);
    scratch.write("input.json", input_of(&pages.fixed));
    let server = common::model::scripted(vec![common::model::submit("s1", common::model::good_lwir())]);
    let config = scratch.provider(&server.base_url(), true);
    let run = |sandbox| {
        let mut options = scratch.harness_options(&config);
        options.sandbox = sandbox;
        scratch.plan_builtin("run_7f3", options, 3)
    };
    registered(run(sandbox_of(&pages.fixed)));
    assert_eq!(blocked_codes(run(sandbox_of(&pages.failing))), [Code::PipelineReplayDivergence]);
    let replayed = registered(run(sandbox_of(&pages.fixed)));
    assert_eq!((replayed.session.model_calls, replayed.session.model_replayed), (0, 1));
    assert_eq!(server.request_count(), 1);
}

/// The tool-without-output-schema page: the example's tools, as a server's `tools/list`
/// gives them, are the registry; the failing LWIR is refused at `lock` with exactly the
/// code at the step's tool, naming the server; the fixed registry locks it.
#[test]
fn tool_without_output_schema_page() {
    let pages = examples(Code::PipelineToolWithoutOutputSchema.explanation()).unwrap();
    let scratch = Scratch::new("page-untyped-tool");
    let block = |example: &Example, info: &str| -> String {
        example.extra.iter().find(|(i, _)| i == info).map(|(_, b)| b.clone()).unwrap_or_else(|| panic!("{info}"))
    };
    let lock = |example: &Example| {
        scratch.write("lwir.json", &example.document);
        scratch.write("definition.json", &block(example, "json definition"));
        let listed: Vec<serde_json::Value> = serde_json::from_str(&block(example, "json tools")).unwrap();
        let tools = listed
            .iter()
            .map(|tool| little_pipeline::OfferedTool {
                source: "python3 helpdesk.py".into(),
                id: tool["name"].as_str().unwrap().into(),
                description: tool["description"].as_str().unwrap().into(),
                input_schema: tool["inputSchema"].clone(),
                output_schema: tool.get("outputSchema").cloned(),
            })
            .collect();
        let registry = little_pipeline::Registry { tools };
        little_pipeline::lock_with_registry(&scratch.path("lwir.json"), &scratch.path("definition.json"), &registry)
    };
    let Err(Failure::Blocked(located)) = lock(&pages.failing) else { panic!("expected the LWIR refused") };
    let diagnostics: Vec<_> = located.iter().flat_map(|l| &l.diagnostics).filter(|d| d.blocking()).collect();
    assert_eq!(diagnostics.iter().map(|d| d.code).collect::<Vec<_>>(), [Code::PipelineToolWithoutOutputSchema]);
    assert_eq!(diagnostics[0].path.as_deref(), Some("$.steps[0].with.tool"));
    assert!(
        diagnostics[0].message.contains(
            "step `lookup` calls `helpdesk.getTicket`, which the MCP server `python3 helpdesk.py` lists without an output schema"
        ),
        "{}",
        diagnostics[0].message
    );
    let locked = lock(&pages.fixed).unwrap_or_else(|f| panic!("the fixed example is refused: {f:?}"));
    assert_eq!(locked.lock["capabilityManifest"]["tools"][0]["id"], "helpdesk.getTicket");
}
