//! `little schema [NAME]`: the JSON Schemas of the document formats, for editors.

mod common;

use common::{little, quiet};

const NAMES: [&str; 14] = [
    "draft",
    "catalog",
    "context",
    "bindings",
    "lwir",
    "definition",
    "snapshot",
    "report",
    "compiled",
    "codes",
    "definition-snapshot",
    "registration",
    "event",
    "plan",
];

#[test]
fn without_a_name_it_lists_every_schema_with_its_format() {
    let (stdout, code) = quiet(little(["schema"]));
    assert_eq!(code, 0);
    let names: Vec<&str> = stdout.lines().map(|l| l.split_whitespace().next().expect("a name")).collect();
    // Then the MCP tools, with their input and output schemas (`little schema mcp`).
    assert_eq!(names, [&NAMES[..], &["mcp"]].concat());
    // One column, as wide as the longest name.
    assert!(stdout.contains("draft               workflow-draft/v1\n"), "{stdout}");
    assert!(stdout.contains("report              little-report/v1 (little check --format json)\n"), "{stdout}");
}

#[test]
fn each_name_prints_the_shipped_schema_file() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for name in NAMES {
        let (stdout, code) = quiet(little(["schema", name]));
        assert_eq!(code, 0, "{name}");
        let file = std::fs::read_to_string(root.join(format!("schemas/{name}.schema.json"))).expect("the file");
        assert_eq!(stdout, file, "{name}");
        let value: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
        assert_eq!(value["$schema"], "https://json-schema.org/draft/2020-12/schema", "{name}");
    }
}

#[test]
fn an_unknown_name_is_a_tool_failure_that_lists_the_names() {
    let run = little(["schema", "drat"]);
    assert_eq!(run.code, 2);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(run.stderr.contains("unknown schema `drat`; did you mean `draft`?"), "{}", run.stderr);
    assert!(run.stderr.contains(&NAMES.join(", ")), "{}", run.stderr);
}

#[test]
fn a_draft_naming_its_schema_checks_clean() {
    let dir = std::env::temp_dir().join(format!("little-schema-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let text =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/clean.json"))
            .expect("the fixture");
    let mut draft: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    draft
        .as_object_mut()
        .expect("an object")
        .insert("$schema".into(), serde_json::json!("https://littleworkflow.dev/schemas/v1/draft.schema.json"));
    let path = dir.join("draft.json");
    std::fs::write(&path, draft.to_string()).expect("written");
    let (stdout, code) =
        quiet(little([std::ffi::OsStr::new("check"), std::ffi::OsStr::new("--deny-warnings"), path.as_os_str()]));
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(code, 0, "{stdout}");
}

#[test]
fn mcp_prints_every_tool_with_an_object_output_schema() {
    let (stdout, code) = quiet(little(["schema", "mcp"]));
    assert_eq!(code, 0);
    let tools: Vec<serde_json::Value> = serde_json::from_str(&stdout).expect("JSON");
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["check", "explain", "codes", "families", "schema", "hash", "compile", "graph", "snapshot", "lock"]
    );
    for tool in &tools {
        assert_eq!(tool["outputSchema"]["type"], "object", "{}", tool["name"]);
        assert_eq!(tool["inputSchema"]["type"], "object", "{}", tool["name"]);
    }
    // The check's output schema is the report schema, inlined.
    assert_eq!(tools[0]["outputSchema"]["title"], "Report");
}
