//! `little_embed`, the library the npm and Python packages wrap, against the CLI: the same
//! report for every bundled example, the same snapshot and lock; a workspace session; and
//! errors as values for bad input.

mod common;

use std::path::Path;

use common::little;
use little_conformance::examples::EXAMPLES;
use little_embed::{Change, Documents, Edit, Encoding, Position, Workspace};
use serde_json::Value;

fn read(path: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

fn cli_json(args: &[&str]) -> Value {
    let run = little(args);
    assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap()
}

fn documents(options: &[&str]) -> Documents {
    let mut documents = Documents::default();
    for pair in options.chunks(2) {
        let bytes = Some(read(pair[1]));
        match pair[0] {
            "--catalog" => documents.catalog = bytes,
            "--context" => documents.context = bytes,
            "--bindings" => documents.bindings = bytes,
            "--snapshot" => documents.snapshot = bytes,
            other => panic!("{other}"),
        }
    }
    documents
}

#[test]
fn every_example_reports_what_little_check_prints() {
    for (path, options) in EXAMPLES {
        let mut args = vec!["check", path, "--format", "json"];
        args.extend_from_slice(options);
        let expected = cli_json(&args);
        let report = little_embed::check(&read(path), path, &documents(options)).unwrap();
        assert_eq!(report, expected, "{path} {options:?}");
    }
}

#[test]
fn compile_snapshot_and_lock_give_what_the_cli_writes() {
    let out = std::env::temp_dir().join(format!("little-embed-{}-compiled.json", std::process::id()));
    let run = little([
        "compile",
        "examples/quarterly-report.json",
        "-o",
        out.to_str().unwrap(),
        "--context",
        "examples/context.json",
        "--bindings",
        "examples/bindings.json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let docs = documents(&["--context", "examples/context.json", "--bindings", "examples/bindings.json"]);
    let compiled =
        little_embed::compile(&read("examples/quarterly-report.json"), "examples/quarterly-report.json", &docs)
            .unwrap();
    assert_eq!(compiled, written);

    let blocked = little_embed::compile(&read("examples/cycle.json"), "cycle.json", &Documents::default()).unwrap_err();
    assert_eq!(blocked.code, "blocked");
    let report = blocked.report.unwrap();
    assert!(report["files"][0]["diagnostics"].as_array().unwrap().iter().any(|d| d["code"] == "graph.cycle"));

    let definition = "examples/support-summarize-ticket/definition.json";
    let snapshot = cli_json(&["snapshot", definition]);
    assert_eq!(little_embed::snapshot(&read(definition)).unwrap(), snapshot);
    let lwir = "examples/support-summarize-ticket/lwir.json";
    let lock = cli_json(&["lock", lwir, "--definition", definition]);
    assert_eq!(little_embed::lock(&read(lwir), &read(definition)).unwrap(), lock);
    let faulty = little_embed::lock(&read("examples/lwir/faulty-plan.lwir.json"), &read(definition)).unwrap_err();
    assert_eq!((faulty.code, faulty.path.as_deref()), ("blocked", Some("lwir")));
}

#[test]
fn explain_codes_hash_and_schema_are_the_cli_s() {
    assert_eq!(little_embed::explain("graph.cycle").unwrap(), little(["explain", "graph.cycle"]).stdout);
    let unknown = little_embed::explain("graph.cycel").unwrap_err();
    assert_eq!(unknown.code, "code.unknown");
    assert!(unknown.message.contains("did you mean `graph.cycle`?"), "{}", unknown.message);
    let codes = little_embed::codes();
    assert_eq!(codes.as_array().unwrap().len(), little(["explain"]).stdout.lines().count());
    assert_eq!(codes[0]["code"], "parse.invalid_json");
    let path = "examples/quarterly-report.json";
    assert_eq!(little_embed::hash(&read(path)).unwrap(), little(["hash", path]).stdout.trim());
    assert_eq!(little_embed::hash(b"{ \"a\": ").unwrap_err().code, "json.invalid");
    let schema: Value = serde_json::from_str(&little(["schema", "draft"]).stdout).unwrap();
    assert_eq!(little_embed::schema("draft").unwrap(), schema);
    assert_eq!(little_embed::schema("drafts").unwrap_err().code, "schema.unknown");
}

#[test]
fn a_workspace_document_is_opened_broken_fixed_and_closed() {
    let options = ["--context", "examples/context.json", "--bindings", "examples/bindings.json"];
    let mut workspace = Workspace::new(&documents(&options), Encoding::Utf16).unwrap();
    let text = String::from_utf8(read("examples/quarterly-report.json")).unwrap();
    let codes = |report: &Value| -> Vec<String> {
        report["files"][0]["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["severity"] != "info")
            .map(|d| d["code"].as_str().unwrap().to_string())
            .collect()
    };
    let opened = workspace.open("demo.json", &text).unwrap();
    assert_eq!(codes(&opened), Vec::<String>::new());
    // Type a fault: the first family gets an `x`, by an edit at its position.
    let (line, column) = text
        .lines()
        .enumerate()
        .find_map(|(i, l)| l.find("\"family\": \"").map(|c| (i as u32, (c + "\"family\": \"".len()) as u32)))
        .unwrap();
    let at = Position { line, character: column };
    let typed = workspace.update("demo.json", Change::Edits(vec![Edit { start: at, end: at, text: "x".into() }]));
    assert_eq!(codes(&typed.unwrap()), ["catalog.unknown_family"]);
    let end = Position { line, character: column + 1 };
    let fixed = workspace.update("demo.json", Change::Edits(vec![Edit { start: at, end, text: String::new() }]));
    assert_eq!(codes(&fixed.unwrap()), Vec::<String>::new());
    assert_eq!(workspace.text("demo.json"), Some(text.as_str()));
    // The full report has the candidate the CLI gives the same text.
    let full = workspace.report("demo.json").unwrap();
    let mut args = vec!["check", "examples/quarterly-report.json", "--format", "json"];
    args.extend_from_slice(&options);
    let cli = cli_json(&args);
    assert!(cli["files"][0]["candidate"].is_object());
    assert_eq!(full["files"][0]["candidate"], cli["files"][0]["candidate"]);
    workspace.close("demo.json").unwrap();
    assert!(workspace.paths().is_empty());
    let closed = workspace.update("demo.json", Change::Text(text)).unwrap_err();
    assert_eq!((closed.code, closed.path.as_deref()), ("file.unknown", Some("demo.json")));
}

#[test]
fn bad_input_is_a_report_or_an_error_value() {
    // Not UTF-8: a report with its diagnostic, as the CLI gives.
    let report = little_embed::check(b"{\"format\": \"\xff\"}", "bytes.json", &Documents::default()).unwrap();
    assert_eq!(report["files"][0]["diagnostics"][0]["code"], "parse.invalid_json");
    // 200,000-deep nesting and a 50 MB string: reports, no overflow.
    let deep = format!("{}{}", "[".repeat(200_000), "]".repeat(200_000));
    let report = little_embed::check(deep.as_bytes(), "deep.json", &Documents::default()).unwrap();
    assert!(report["summary"]["errors"].as_u64().unwrap() >= 1);
    let long = format!("{{\"format\": \"{}\"}}", "x".repeat(50 << 20));
    let report = little_embed::check(long.as_bytes(), "long.json", &Documents::default()).unwrap();
    assert_eq!(report["files"][0]["diagnostics"][0]["code"], "parse.unsupported_format");
    // A catalog that is not JSON: an error naming the option.
    let documents = Documents { catalog: Some(b"not json".to_vec()), ..Documents::default() };
    let error = little_embed::check(&read("examples/graph-demo.json"), "demo.json", &documents).unwrap_err();
    assert_eq!((error.code, error.path.as_deref()), ("input.invalid", Some("catalog")));
    assert!(Workspace::new(&documents, Encoding::Utf16).is_err());
}
