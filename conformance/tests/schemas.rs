//! The JSON Schemas of `schemas/` (printed by `little schema NAME`) against the readers:
//! each is a valid 2020-12 schema with a description on every property; every document
//! of the repository validates against its format's schema unless little reports a shape
//! fault in it; and wrong documents are rejected where they are wrong.

use std::path::{Path, PathBuf};

use little_conformance::examples::schema_validator as validator;
use little_conformance::pages::examples;
use little_conformance::strategies::{mutated_draft, valid_draft};
use little_conformance::{Setup, check_text, codes, generate};
use little_diagnostics::Code;
use little_frontend::catalog::DEFAULT_CATALOG;
use little_frontend::schemas::{SCHEMAS, schema};
use proptest::prelude::*;
use serde_json::{Value, json};

const META: &str = "https://json-schema.org/draft/2020-12/schema";

/// Draft codes that report what the draft schema also says: a document little reports
/// one of them for must fail the schema, and a document that fails the schema must get
/// at least one of them (or `contract.invalid_envelope`, which the schema only partly
/// expresses: an artifact on an undeclared output passes the schema).
const SCHEMA_CODES: &[Code] = &[
    Code::DraftInvalidShape,
    Code::DraftUnknownField,
    Code::RequestMissingIdentity,
    Code::DraftInvalidSuppression,
    Code::DraftUnknownSuppression,
    Code::PackageMalformedBinding,
    Code::RetryInvalidConfig,
];

/// LWIR codes whose failing examples the LWIR schema rejects.
const LWIR_SCHEMA_CODES: &[Code] =
    &[Code::LwirInvalidShape, Code::LwirUnknownStepKind, Code::LwirInvalidFixer, Code::SchemaInvalid];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `instance path: message` of every error, empty when the document is valid.
fn errors(validator: &jsonschema::Validator, document: &Value) -> Vec<String> {
    validator.iter_errors(document).map(|e| format!("{}: {e}", e.instance_path())).collect()
}

/// The schema a document follows, by its `format` or `apiVersion`.
fn schema_name(document: &Value) -> Option<&'static str> {
    if document.get("apiVersion").is_some() {
        return Some("lwir");
    }
    Some(match document.get("format")?.as_str()? {
        "workflow-draft/v1" => "draft",
        "workflow-catalog/v1" => "catalog",
        "workflow-context/v1" => "context",
        "agent-bindings/v1" => "bindings",
        "workflow-definition/v1" => "definition",
        _ => return None,
    })
}

#[test]
fn every_schema_is_a_valid_2020_12_schema_with_an_id_title_and_description() {
    assert_eq!(SCHEMAS.len(), 14);
    for schema in SCHEMAS {
        let value: Value = serde_json::from_str(schema.text).expect("a schema is JSON");
        jsonschema::draft202012::meta::validate(&value)
            .unwrap_or_else(|e| panic!("{} is not a valid 2020-12 schema: {e}", schema.name));
        assert_eq!(value["$schema"], META, "{}", schema.name);
        assert_eq!(
            value["$id"],
            format!("https://littleworkflow.dev/schemas/v1/{}.schema.json", schema.name),
            "{}",
            schema.name
        );
        assert!(value["title"].is_string() && value["description"].is_string(), "{}", schema.name);
        // The shipped file is the embedded text.
        let file = std::fs::read_to_string(root().join(format!("schemas/{}.schema.json", schema.name)))
            .expect("schemas/NAME.schema.json");
        assert_eq!(file, schema.text, "{}", schema.name);
        validator(schema.name);
    }
}

#[test]
fn every_property_has_a_description_and_every_object_a_title() {
    for schema in SCHEMAS {
        let value: Value = serde_json::from_str(schema.text).expect("JSON");
        let mut stack = vec![("$".to_string(), &value)];
        while let Some((path, node)) = stack.pop() {
            match node {
                Value::Object(map) => {
                    if let Some(Value::Object(properties)) = map.get("properties") {
                        for (key, property) in properties {
                            let described =
                                property.get("description").and_then(Value::as_str).is_some_and(|d| !d.is_empty());
                            assert!(described, "{}: {path}.properties.{key} has no description", schema.name);
                        }
                        assert!(
                            map.contains_key("title"),
                            "{}: {path} declares properties without a title",
                            schema.name
                        );
                    }
                    // Conditions (`if`/`then`/`else`) restate properties to select a case;
                    // editors describe a field from its declaration, which is checked.
                    let declarations = map.iter().filter(|(k, _)| !matches!(k.as_str(), "if" | "then" | "else"));
                    stack.extend(declarations.map(|(k, v)| (format!("{path}.{k}"), v)));
                }
                Value::Array(items) => stack.extend(items.iter().enumerate().map(|(i, v)| (format!("{path}[{i}]"), v))),
                _ => {}
            }
        }
    }
}

#[test]
fn suppress_offers_exactly_the_non_blocking_codes() {
    let draft: Value = serde_json::from_str(schema("draft").unwrap().text).unwrap();
    let offered: Vec<&str> = draft["$defs"]["node"]["properties"]["suppress"]["items"]["enum"]
        .as_array()
        .expect("an enum of codes")
        .iter()
        .map(|c| c.as_str().expect("a code"))
        .collect();
    let non_blocking: Vec<&str> = Code::ALL.iter().filter(|c| !c.blocking()).map(|c| c.as_str()).collect();
    assert_eq!(offered, non_blocking, "the draft schema's `suppress` enum follows the registry");
}

/// One document of the repository, with what to check it with.
struct Sample {
    label: String,
    document: String,
    schema: &'static str,
    setup: Setup,
    /// The explanation page's code, for failing examples.
    failing: Option<Code>,
}

fn sample(
    label: String,
    document: &str,
    schema: Option<&'static str>,
    setup: Setup,
    failing: Option<Code>,
) -> Option<Sample> {
    let value: Value = serde_json::from_str(document).ok()?;
    let schema = schema.or_else(|| schema_name(&value))?;
    Some(Sample { label, document: document.to_string(), schema, setup, failing })
}

fn repository_samples() -> Vec<Sample> {
    let mut samples = Vec::new();
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in ["examples", "tests/fixtures", "conformance/tests/regressions"] {
        for entry in std::fs::read_dir(root().join(dir)).expect(dir) {
            let path = entry.expect("entry").path();
            if path.extension().is_some_and(|e| e == "json") {
                files.push(path);
            }
        }
    }
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable");
        let label = path.strip_prefix(root()).unwrap_or(&path).display().to_string();
        let schema = schema_name(&serde_json::from_str(&text).expect("JSON"));
        samples.push(Sample {
            label,
            document: text,
            schema: schema.expect("a known format"),
            setup: Setup::default(),
            failing: None,
        });
    }
    samples.push(Sample {
        label: "frontend/catalog/default.json".into(),
        document: DEFAULT_CATALOG.into(),
        schema: "catalog",
        setup: Setup::default(),
        failing: None,
    });
    for &code in Code::ALL {
        let pages = examples(code.explanation()).expect("every page has examples");
        for (which, example, failing) in [("failing", &pages.failing, Some(code)), ("fixed", &pages.fixed, None)] {
            let label = format!("{}.md {which}", code.as_str());
            let setup = example.setup();
            samples.extend(sample(format!("{label} document"), &example.document, None, setup.clone(), failing));
            for (block, text, name) in [
                ("context", &example.context, "context"),
                ("bindings", &example.bindings, "bindings"),
                ("snapshot", &example.snapshot, "snapshot"),
            ] {
                if let Some(text) = text {
                    samples.extend(sample(format!("{label} {block}"), text, Some(name), Setup::default(), None));
                }
            }
        }
    }
    for (nodes, seed) in [(3, 1), (12, 2), (40, 3), (250, 4), (1000, 5)] {
        samples.push(Sample {
            label: format!("generate::draft({nodes}, {seed})"),
            document: generate::draft(nodes, seed),
            schema: "draft",
            setup: Setup::default(),
            failing: None,
        });
    }
    samples
}

#[test]
fn every_repository_document_validates_unless_little_reports_a_shape_fault() {
    let validators: Vec<(&str, jsonschema::Validator)> = SCHEMAS.iter().map(|s| (s.name, validator(s.name))).collect();
    let samples = repository_samples();
    assert!(samples.len() > 150, "only {} samples", samples.len());
    let mut checked = std::collections::BTreeMap::<&str, usize>::new();
    let mut failures = Vec::new();
    for sample in &samples {
        let validator = &validators.iter().find(|(n, _)| *n == sample.schema).expect("a validator").1;
        let value: Value = serde_json::from_str(&sample.document).expect("JSON");
        let errors = errors(validator, &value);
        *checked.entry(sample.schema).or_default() += 1;
        let expect_rejected = match sample.schema {
            "draft" => {
                let found = codes(&check_text(&sample.document, &sample.setup));
                let shape = found.iter().any(|c| SCHEMA_CODES.contains(c));
                if !errors.is_empty() && !shape && !found.contains(&Code::ContractInvalidEnvelope) {
                    failures.push(format!("{}: the schema rejects what little accepts: {errors:?}", sample.label));
                }
                shape
            }
            "lwir" => sample.failing.is_some_and(|c| LWIR_SCHEMA_CODES.contains(&c)),
            "definition" => sample.failing == Some(Code::DefinitionInvalidShape),
            _ => false,
        };
        if expect_rejected && errors.is_empty() {
            failures.push(format!("{}: little reports a shape fault that the schema accepts", sample.label));
        }
        if !expect_rejected && !errors.is_empty() && sample.schema != "draft" {
            failures.push(format!("{}: rejected by the {} schema: {errors:?}", sample.label, sample.schema));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every format little reads has documents in the repository (what it writes is held
    // to its schema by embed's tests/output_schemas.rs).
    for schema in SCHEMAS.iter().filter(|s| !s.written) {
        assert!(checked.get(schema.name).is_some_and(|n| *n > 0), "no sample of {}", schema.name);
    }
}

/// The first valid document of each kind, to break.
fn base(name: &str) -> Value {
    let text = match name {
        "draft" => std::fs::read_to_string(root().join("tests/fixtures/full.json")).unwrap(),
        "catalog" => DEFAULT_CATALOG.to_string(),
        "context" => std::fs::read_to_string(root().join("examples/context.json")).unwrap(),
        "bindings" => std::fs::read_to_string(root().join("examples/bindings.json")).unwrap(),
        "lwir" => examples(Code::LwirCodeHashMismatch.explanation()).unwrap().fixed.document,
        "snapshot" => examples(Code::BindingModelNotPermitted.explanation()).unwrap().fixed.snapshot.unwrap(),
        "definition" => examples(Code::PipelineMissingTool.explanation()).unwrap().fixed.document,
        _ => unreachable!(),
    };
    serde_json::from_str(&text).unwrap()
}

/// Replaces (or, with `Value::Null` as a marker, removes) what `pointer` names.
fn broken(name: &str, pointer: &str, replacement: Option<Value>) -> Value {
    let mut document = base(name);
    let (parent, key) = pointer.rsplit_once('/').expect("a pointer");
    let parent = document.pointer_mut(parent).unwrap_or_else(|| panic!("{name}: no {parent}"));
    match (parent, replacement) {
        (Value::Object(map), Some(v)) => {
            map.insert(key.to_string(), v);
        }
        (Value::Object(map), None) => {
            assert!(map.shift_remove(key).is_some(), "{name}: no {pointer}");
        }
        (Value::Array(items), Some(v)) => items[key.parse::<usize>().unwrap()] = v,
        _ => panic!("{name}: cannot break {pointer}"),
    }
    document
}

#[test]
fn wrong_documents_are_rejected_where_they_are_wrong() {
    // (schema, pointer, replacement or removal, instance path the error names)
    let cases: Vec<(&str, &str, Option<Value>, &str)> = vec![
        ("draft", "/format", Some(json!("workflow-draft/v2")), "/format"),
        ("draft", "/revision", Some(json!(-1)), "/revision"),
        ("draft", "/revision", Some(json!("12")), "/revision"),
        ("draft", "/tenantId", Some(json!("")), "/tenantId"),
        ("draft", "/nodes", None, ""),
        ("draft", "/nodes", Some(json!({})), "/nodes"),
        ("draft", "/nodes/0/family", None, "/nodes/0"),
        ("draft", "/nodes/0/colour", Some(json!("red")), "/nodes/0"),
        ("draft", "/nodes/0/flags", Some(json!({ "disabled": "yes" })), "/nodes/0/flags/disabled"),
        ("draft", "/nodes/0/suppress", Some(json!(["graph.cycle"])), "/nodes/0/suppress/0"),
        ("draft", "/nodes/0/position", Some(json!({ "x": 1 })), "/nodes/0/position"),
        ("draft", "/nodes/0/agent", Some(json!({ "agentId": "a", "revision": -3 })), "/nodes/0/agent/revision"),
        (
            "draft",
            "/nodes/0/packages",
            Some(json!([{ "name": "p", "version": "1.4", "digest": "sha256:00" }])),
            "/nodes/0/packages/0/version",
        ),
        (
            "draft",
            "/nodes/0/contracts",
            Some(json!({ "version": "workflow-node-contracts/v9" })),
            "/nodes/0/contracts/version",
        ),
        ("draft", "/edges/0/kind", Some(json!("sideways")), "/edges/0/kind"),
        ("draft", "/edges/0/kind", Some(json!("retry")), "/edges/0"),
        ("draft", "/edges/0/retry", Some(json!({ "maxAttempts": 21 })), "/edges/0/retry/maxAttempts"),
        ("draft", "/edges/0/retry", Some(json!({ "maxAttempts": 2, "backoffMs": -1 })), "/edges/0/retry/backoffMs"),
        ("draft", "/edges/0/from", Some(json!({ "port": "out" })), "/edges/0/from"),
        ("catalog", "/families/0/kind", Some(json!("widget")), "/families/0/kind"),
        ("catalog", "/families/0/configSchema", Some(json!({ "type": "objekt" })), "/families/0/configSchema/type"),
        (
            "catalog",
            "/families/0/ports",
            Some(json!({ "inputs": [{ "types": ["any"] }] })),
            "/families/0/ports/inputs/0",
        ),
        (
            "catalog",
            "/families/0/integrations",
            Some(json!([{ "pointer": "connection", "kind": "warehouse" }])),
            "/families/0/integrations/0/pointer",
        ),
        ("catalog", "/version", None, ""),
        ("context", "/schedulePolicy", Some(json!({ "minIntervalMinutes": -5 })), "/schedulePolicy/minIntervalMinutes"),
        ("context", "/integrations", Some(json!([{ "id": "conn_wh" }])), "/integrations/0"),
        ("context", "/tenantId", None, ""),
        ("bindings", "/rows", Some(json!([{ "agentId": "a", "revision": 1, "status": "approved" }])), "/rows/0/status"),
        ("bindings", "/rows", Some(json!([{ "agentId": "a", "status": "accepted" }])), "/rows/0"),
        ("lwir", "/apiVersion", Some(json!("littleworkflow.dev/v1")), "/apiVersion"),
        ("lwir", "/kind", Some(json!("Job")), "/kind"),
        ("lwir", "/steps/0/uses", Some(json!("ai.chat")), "/steps/0/uses"),
        ("lwir", "/steps/0/with/sandbox", Some(json!({ "network": "maybe" })), "/steps/0/with/sandbox/network"),
        (
            "lwir",
            "/steps/0/with/files",
            Some(json!({ "a.ts": { "content": "", "sha256": "md5:0" } })),
            "/steps/0/with/files/a.ts/sha256",
        ),
        (
            "lwir",
            "/steps/0/onFailure",
            Some(json!({ "fixer": { "model": "m", "maxAttempts": 11 } })),
            "/steps/0/onFailure/fixer/maxAttempts",
        ),
        ("lwir", "/steps/0/with/entrypoint", None, "/steps/0/with"),
        ("lwir", "/output/schema", Some(json!({ "type": "enum" })), "/output/schema/type"),
        ("definition", "/maxOuterCycles", Some(json!(0)), "/maxOuterCycles"),
        ("definition", "/memory", Some(json!({ "workflow": "write" })), "/memory/workflow"),
        ("definition", "/planner", Some(json!({ "system": "no model" })), "/planner"),
        ("definition", "/id", None, ""),
        ("snapshot", "/inputSchemaHash", Some(json!("md5:abc")), "/inputSchemaHash"),
        ("snapshot", "/memoryConfig", Some(json!({ "org": "write" })), "/memoryConfig/org"),
        ("snapshot", "/modelSlots", Some(json!([{ "providerId": "openai", "modelId": "gpt-5" }])), "/modelSlots/0"),
    ];
    for (name, _, _, _) in &cases {
        let valid = base(name);
        assert_eq!(errors(&validator(name), &valid), Vec::<String>::new(), "the base {name} is valid");
    }
    for (name, pointer, replacement, at) in cases {
        let document = broken(name, pointer, replacement.clone());
        let errors = errors(&validator(name), &document);
        assert!(
            errors.iter().any(|e| e.split_once(": ").is_some_and(|(path, _)| path == at)),
            "{name} with {pointer} = {replacement:?}: expected an error at `{at}`, got {errors:?}"
        );
    }
}

#[test]
fn fixers_only_on_code_run_steps() {
    let mut lwir = base("lwir");
    let fixer = lwir["steps"][0]["onFailure"].clone();
    assert!(fixer.is_object(), "the base LWIR's first step has a fixer");
    lwir["steps"][0]["uses"] = json!("ai.generate");
    lwir["steps"][0]["with"] = json!({ "model": "gpt-4o-mini", "prompt": "Hi" });
    let found = errors(&validator("lwir"), &lwir);
    assert!(found.iter().any(|e| e.starts_with("/steps/0/uses")), "{found:?}");
    lwir["steps"][0].as_object_mut().unwrap().shift_remove("onFailure");
    assert_eq!(errors(&validator("lwir"), &lwir), Vec::<String>::new());
}

#[test]
fn a_top_level_schema_key_is_no_unknown_field_but_elsewhere_it_is() {
    let mut draft = base("draft");
    draft
        .as_object_mut()
        .unwrap()
        .insert("$schema".into(), json!("https://littleworkflow.dev/schemas/v1/draft.schema.json"));
    assert_eq!(errors(&validator("draft"), &draft), Vec::<String>::new());
    let found = codes(&check_text(&draft.to_string(), &Setup::default()));
    assert!(!found.contains(&Code::DraftUnknownField), "{found:?}");
    draft["nodes"][0]["$schema"] = json!("x");
    let found = codes(&check_text(&draft.to_string(), &Setup::default()));
    assert!(found.contains(&Code::DraftUnknownField), "{found:?}");
    assert!(!errors(&validator("draft"), &draft).is_empty());
}

#[test]
fn a_negative_agent_revision_is_a_shape_fault_for_little_and_the_schema() {
    let mut draft = base("draft");
    let agent_node = draft["nodes"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|n| n.get("agent").is_some())
        .expect("the full fixture has an agent node");
    agent_node["agent"]["revision"] = json!(-1);
    let found = codes(&check_text(&draft.to_string(), &Setup::default()));
    assert!(found.contains(&Code::DraftInvalidShape), "{found:?}");
    assert!(!errors(&validator("draft"), &draft).is_empty());
}

fn proptest_config() -> ProptestConfig {
    let mut config = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = 48;
    }
    config.failure_persistence = None;
    config
}

proptest! {
    #![proptest_config(proptest_config())]

    /// Generated valid drafts, and their contexts, pass their schemas.
    #[test]
    fn generated_valid_drafts_pass_the_schema(valid in valid_draft()) {
        let found = errors(&validator("draft"), &valid.draft);
        prop_assert!(found.is_empty(), "{found:?}");
        if let Some(context) = &valid.context {
            let found = errors(&validator("context"), context);
            prop_assert!(found.is_empty(), "{found:?}");
        }
    }

    /// What the draft schema rejects, little reports as a shape fault: the schema never
    /// flags a draft that little accepts without a word.
    #[test]
    fn what_the_schema_rejects_little_reports(mutated in mutated_draft()) {
        let found = errors(&validator("draft"), &mutated.draft);
        let setup = Setup { context: mutated.context_text(), ..Setup::default() };
        let report = check_text(&mutated.text(), &setup);
        let not_a_draft = report.diagnostics.iter().any(|d| d.code == Code::ParseUnsupportedFormat);
        let reported = codes(&report);
        let shape = reported.iter().any(|c| SCHEMA_CODES.contains(c) || *c == Code::ContractInvalidEnvelope);
        prop_assert!(found.is_empty() || shape || not_a_draft, "schema: {found:?}; little: {reported:?}");
    }
}
