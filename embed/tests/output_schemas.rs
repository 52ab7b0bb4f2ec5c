//! What little writes, held to the schemas of `schemas/` that say so (`written`): every
//! bundled example's report, its compiled document or the report that blocks it, a
//! workspace's reports, the code list, a snapshot, a registration, a session's events and
//! what `little plan --format json` prints validate against
//! their schema, which closes every object. The packages' type declarations are generated
//! from these schemas (`bindings/typegen`), so this is what makes them exact: a field
//! little adds or drops fails here before any declaration goes stale.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use little_conformance::examples::{EXAMPLES, schema_validator};
use little_embed::{Change, Documents, Encoding, Workspace};
use little_frontend::schemas::{SCHEMAS, schema};
use serde_json::{Value, json};

fn read(path: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)).expect(path)
}

fn documents(options: &[&str]) -> Documents {
    let mut documents = Documents::default();
    for pair in options.chunks(2) {
        let bytes = Some(read(pair[1]));
        match pair[0] {
            "--context" => documents.context = bytes,
            "--bindings" => documents.bindings = bytes,
            "--snapshot" => documents.snapshot = bytes,
            other => panic!("{other}"),
        }
    }
    documents
}

/// The schema of one of little's outputs.
fn validator(name: &str) -> jsonschema::Validator {
    assert!(schema(name).is_some_and(|s| s.written), "`{name}` is not the schema of an output");
    schema_validator(name)
}

/// `instance path: message` of every error.
fn errors(validator: &jsonschema::Validator, document: &Value) -> Vec<String> {
    validator.iter_errors(document).map(|e| format!("{}: {e}", e.instance_path())).collect()
}

/// A definition with a global tool and an attached memory store, and an LWIR that
/// permits the tool: the parts of a snapshot and a lock the bundled example leaves empty.
fn definition_with_a_tool() -> (Vec<u8>, Vec<u8>) {
    let mut definition: Value =
        serde_json::from_slice(&read("examples/support-summarize-ticket/definition.json")).unwrap();
    definition["tools"] = json!([{
        "id": "helpdesk.getTicket",
        "description": "Fetch a ticket.",
        "inputSchema": { "type": "object", "properties": { "ticketId": { "type": "string" } } },
        "outputSchema": { "type": "object", "properties": { "subject": { "type": "string" } } },
    }]);
    definition["globalTools"] = json!(["helpdesk.getTicket"]);
    definition["memory"]["attached"] = json!([{ "id": "kb", "access": "ro" }]);
    let mut lwir: Value = serde_json::from_slice(&read("examples/support-summarize-ticket/lwir.json")).unwrap();
    lwir["permissions"]["tools"] = json!(["helpdesk.getTicket"]);
    (serde_json::to_vec(&definition).unwrap(), serde_json::to_vec(&lwir).unwrap())
}

/// Every output little gives for the bundled examples, each with the schema it follows.
fn outputs() -> Vec<(String, &'static str, Value)> {
    let mut out = Vec::new();
    for (path, options) in EXAMPLES {
        let label = format!("{path} {}", options.join(" "));
        let documents = documents(options);
        let report = little_embed::check(&read(path), path, &documents).expect("checked");
        let document = report["files"][0]["document"].clone();
        out.push((format!("check {label}"), "report", report));
        if document == "draft" {
            match little_embed::compile(&read(path), path, &documents) {
                Ok(compiled) => out.push((format!("compile {label}"), "compiled", compiled)),
                Err(error) => {
                    assert_eq!(error.code, "blocked", "{label}: {}", error.message);
                    out.push((format!("compile {label} (blocked)"), "report", *error.report.expect("its report")));
                }
            }
        }
    }
    out.push(("codes()".into(), "codes", little_embed::codes()));
    let definition = read("examples/support-summarize-ticket/definition.json");
    let lwir = read("examples/support-summarize-ticket/lwir.json");
    out.push(("snapshot".into(), "definition-snapshot", little_embed::snapshot(&definition).expect("a snapshot")));
    out.push(("lock".into(), "registration", little_embed::lock(&lwir, &definition).expect("registered")));
    let (definition, lwir) = definition_with_a_tool();
    out.push((
        "snapshot with a tool".into(),
        "definition-snapshot",
        little_embed::snapshot(&definition).expect("a snapshot"),
    ));
    out.push(("lock with a tool".into(), "registration", little_embed::lock(&lwir, &definition).expect("registered")));

    let mut workspace =
        Workspace::new(&documents(&["--context", "examples/context.json"]), Encoding::Utf16).expect("a workspace");
    let text = String::from_utf8(read("examples/broken-wiring.json")).unwrap();
    out.push(("workspace open".into(), "report", workspace.open("a.json", &text).expect("opened")));
    let fixed = String::from_utf8(read("examples/quarterly-report.json")).unwrap();
    out.push(("workspace update".into(), "report", workspace.update("a.json", Change::Text(fixed)).expect("updated")));
    out.push(("workspace report".into(), "report", workspace.report("a.json").expect("a report")));
    // Events as real sessions wrote them: one of each kind and shape (built-in planner and
    // fixer, external planner, failures, a resume, a token budget), picked from the logs of
    // the pipeline's and the planner's tests, which hold every event they write to the
    // schema as well (pipeline/tests/common, embed/tests/planner.rs).
    let log = String::from_utf8(read("embed/tests/fixtures/events.jsonl")).unwrap();
    for (n, line) in log.lines().enumerate() {
        out.push((format!("events.jsonl:{}", n + 1), "event", serde_json::from_str(line).expect("an event")));
    }
    out.extend(plan_outcomes());
    out
}

/// A model that submits the worked example's LWIR at once.
struct Submits;

impl little_embed::planner::HostModel for Submits {
    fn complete(&self, _provider: &str, _body: &Value) -> Result<Value, String> {
        let lwir: Value = serde_json::from_slice(&read("examples/support-summarize-ticket/lwir.json")).unwrap();
        Ok(json!({ "role": "assistant", "content": null, "tool_calls": [{
            "id": "s1", "type": "function", "function": { "name": "submit_lwir", "arguments": { "lwir": lwir } }
        }] }))
    }
}

/// What `little plan --format json` prints for a run that registers, one whose input is
/// refused and one whose file cannot be read (`little_embed::planner::plan_outcome`).
fn plan_outcomes() -> Vec<(String, &'static str, Value)> {
    use little_embed::planner::{self, HarnessSettings, Hooks, PlanCall, plan_outcome};
    // Each test that reads the outputs plans in a folder of its own.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!("little-embed-plan-outcomes-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/support-summarize-ticket");
    std::fs::write(dir.join("bad-input.json"), r#"{ "ticketId": 4821, "transcript": "x" }"#).unwrap();
    let call = |run_id: &str, input: PathBuf| PlanCall {
        definition: example.join("definition.json"),
        input,
        run_id: run_id.into(),
        events: dir.join("events.jsonl").display().to_string(),
        max_attempts: 3,
        outer_loop: None,
        harness: HarnessSettings {
            bwrap: false,
            memory_root: Some(dir.join("memory")),
            lock_wait: std::time::Duration::ZERO,
            ..HarnessSettings::default()
        },
    };
    let hooks = Hooks { model: Some(&Submits), ..Hooks::default() };
    let mut out = Vec::new();
    for (label, run_id, input) in [
        ("plan registered", "run_ok", example.join("input.json")),
        ("plan refused input", "run_bad", dir.join("bad-input.json")),
        ("plan unreadable input", "run_gone", dir.join("missing.json")),
    ] {
        let result = planner::plan(&call(run_id, input), &hooks);
        out.push((label.to_string(), "plan", plan_outcome(result, run_id)));
    }
    assert_eq!(out[0].2["outcome"], "registered", "{:#}", out[0].2);
    assert_eq!(out[1].2["causeCode"], "input_schema_error", "{:#}", out[1].2);
    assert_eq!(out[2].2["code"], "failed", "{:#}", out[2].2);
    let _ = std::fs::remove_dir_all(&dir);
    out
}

#[test]
fn every_output_of_every_example_validates_against_its_schema() {
    let outputs = outputs();
    assert!(outputs.len() > 20, "only {} outputs", outputs.len());
    let mut failures = Vec::new();
    let mut seen = BTreeSet::new();
    for schema in SCHEMAS.iter().filter(|s| s.written) {
        let validator = validator(schema.name);
        for (label, _, output) in outputs.iter().filter(|(_, name, _)| *name == schema.name) {
            seen.insert(schema.name);
            let errors = errors(&validator, output);
            if !errors.is_empty() {
                failures.push(format!("{label}: rejected by the `{}` schema: {errors:#?}", schema.name));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let written: BTreeSet<&str> = SCHEMAS.iter().filter(|s| s.written).map(|s| s.name).collect();
    assert_eq!(seen, written, "every written schema has outputs to hold it to");
}

/// Every key a schema declares, by the object (a `$defs` entry or a titled object) that
/// declares it.
fn declared(schema: &Value) -> Vec<(String, String)> {
    let mut keys = Vec::new();
    let mut stack = vec![schema];
    while let Some(node) = stack.pop() {
        match node {
            Value::Object(map) => {
                if let Some(Value::Object(properties)) = map.get("properties") {
                    let owner = map.get("title").and_then(Value::as_str).unwrap_or("?").to_string();
                    keys.extend(properties.keys().map(|k| (owner.clone(), k.clone())));
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    keys
}

/// Every key of every object in a value.
fn keys_in(value: &Value, into: &mut BTreeSet<String>) {
    let mut stack = vec![value];
    while let Some(node) = stack.pop() {
        match node {
            Value::Object(map) => {
                into.extend(map.keys().cloned());
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
}

#[test]
fn every_key_a_schema_declares_occurs_in_some_output() {
    // A schema that declares a key little never writes (an optional field misspelt, a
    // field little dropped) would still validate every output: each key a type declares
    // must occur in the outputs of a schema that declares that type (a type recurs in
    // schemas: `Diagnostic` is in the report's and the compiled document's).
    let outputs = outputs();
    let written = SCHEMAS.iter().filter(|s| s.written);
    let mut keys_of = Vec::new();
    for schema in written {
        let mut keys = BTreeSet::new();
        for (_, _, output) in outputs.iter().filter(|(_, name, _)| *name == schema.name) {
            keys_in(output, &mut keys);
        }
        let value: Value = serde_json::from_str(schema.text).unwrap();
        keys_of.push((schema.name, declared(&value), keys));
    }
    for (name, declared, _) in &keys_of {
        let unseen: Vec<String> = declared
            .iter()
            .filter(|(owner, key)| {
                !keys_of.iter().any(|(_, others, keys)| others.iter().any(|(o, _)| o == owner) && keys.contains(key))
            })
            .map(|(owner, key)| format!("{owner}.{key}"))
            .collect();
        assert!(unseen.is_empty(), "`{name}` declares keys no output has: {unseen:?}");
    }
}

/// The value with the member at `pointer` removed, or `extra` added beside it.
fn edited(value: &Value, pointer: &str, extra: bool) -> Value {
    let mut value = value.clone();
    let (parent, key) = pointer.rsplit_once('/').expect("a member pointer");
    let object = value.pointer_mut(parent).and_then(Value::as_object_mut).unwrap_or_else(|| panic!("{pointer}"));
    if extra {
        object.insert("extra".into(), json!(1));
    } else {
        assert!(object.remove(key).is_some(), "{pointer} is there");
    }
    value
}

#[test]
fn a_missing_or_extra_field_anywhere_is_rejected() {
    let outputs = outputs();
    let find = |label: &str| &outputs.iter().find(|(l, _, _)| l.starts_with(label)).expect(label).2;
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "check examples/cycle.json",
            "report",
            &[
                "/format",
                "/summary/blocking",
                "/files/0/candidate",
                "/files/0/document",
                "/files/0/diagnostics/0/severity",
                "/files/0/diagnostics/0/blocking",
                "/files/0/diagnostics/0/span/column",
                "/files/0/diagnostics/0/witness/edges",
            ],
        ),
        ("check examples/quarterly-report.json", "report", &["/files/0/candidate/topologyHash"]),
        ("check examples/lwir/summarize-ticket.lwir.json", "report", &["/files/0/candidate/canonicalizer"]),
        (
            "compile examples/quarterly-report.json",
            "compiled",
            &[
                "/candidate/bindingStatus",
                "/topology/layout",
                "/topology/nodes/0/agent",
                "/topology/nodes/0/flags/workerSlot",
                "/topology/transitions/0/from/port",
                "/topology/transitions/0/branch",
            ],
        ),
        ("codes()", "codes", &["/0/summary"]),
        (
            "snapshot with a tool",
            "definition-snapshot",
            &["/memoryConfig/attached/0/access", "/plannerConfig/skillsHash"],
        ),
        (
            "lock with a tool",
            "registration",
            &[
                "/workflowVersion/canonicalJson",
                "/lock/tools/0/descriptorHash",
                "/lock/capabilityManifest/memoryStoreIds",
            ],
        ),
    ];
    for (label, name, pointers) in cases {
        let validator = validator(name);
        let output = find(label);
        assert!(errors(&validator, output).is_empty(), "{label}");
        for pointer in *pointers {
            let missing = edited(output, pointer, false);
            assert!(!errors(&validator, &missing).is_empty(), "{label}: the `{name}` schema accepts {pointer} missing");
            // `flags` is the one object open to more keys (the authored flags, booleans).
            if !pointer.contains("/flags/") {
                let extra = edited(output, pointer, true);
                assert!(
                    !errors(&validator, &extra).is_empty(),
                    "{label}: the `{name}` schema accepts an extra key beside {pointer}"
                );
            }
        }
    }
}
