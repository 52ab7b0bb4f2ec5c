//! Every capability of `little lsp`, through an in-process client.

mod common;

use common::{Client, Options, SUPPORT_TRIAGE, position, position_of, uri};
use serde_json::{Value, json};

/// A draft whose node `history` names an unknown family, after a non-ASCII title on the
/// same line (2-byte, 3-byte and 4-byte characters: UTF-8 and UTF-16 columns differ).
fn faulty() -> String {
    SUPPORT_TRIAGE
        .replace(r#""title": "Customer history","#, r#""title": "Grüße → 𝄞", "family": "dataset.retreive","#)
        .replace(r#"{ "id": "history", "family": "dataset.retrieve","#, r#"{ "id": "history","#)
}

fn diagnostics_at_the_right_range(encodings: &[&str], utf16: bool) {
    let mut client = Client::start(Options { encodings, ..Options::default() });
    let expected = if utf16 { "utf-16" } else { "utf-8" };
    assert_eq!(client.initialize_result["capabilities"]["positionEncoding"], expected);
    let text = faulty();
    let uri = uri("draft.json");
    let diagnostics = client.open(&uri, &text);
    let unknown: Vec<_> = diagnostics
        .iter()
        .filter(|d| d.code == Some(lsp_types::NumberOrString::String("catalog.unknown_family".into())))
        .collect();
    assert_eq!(unknown.len(), 1, "{diagnostics:#?}");
    let d = unknown[0];
    let start = text.find(r#""dataset.retreive""#).unwrap();
    let end = start + r#""dataset.retreive""#.len();
    assert_eq!(
        serde_json::to_value(d.range).unwrap(),
        json!({ "start": position(&text, start, utf16), "end": position(&text, end, utf16) })
    );
    assert_eq!(d.severity, Some(lsp_types::DiagnosticSeverity::ERROR));
    assert_eq!(d.source.as_deref(), Some("little"));
    assert_eq!(d.code_description.as_ref().unwrap().href.as_str(), "https://little.dev/explain/catalog.unknown_family");
    assert!(d.message.contains("help: did you mean `dataset.retrieve`?"), "{}", d.message);

    // Fix it with an incremental edit: the diagnostic is gone in version 2.
    let typo = text.find("retreive").unwrap();
    let change = json!({
        "range": { "start": position(&text, typo, utf16), "end": position(&text, typo + "retreive".len(), utf16) },
        "text": "retrieve",
    });
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri, "version": 2 }, "contentChanges": [change] }),
    );
    let after = client.diagnostics(&uri, Some(2));
    assert!(after.iter().all(|d| d.severity != Some(lsp_types::DiagnosticSeverity::ERROR)), "{after:#?}");
    // The server's text is the fixed text: the symbols show the fixed family.
    let symbols = client.request("textDocument/documentSymbol", json!({ "textDocument": { "uri": uri } }));
    assert_eq!(symbols[0]["children"][1]["detail"], "dataset.retrieve");
    client.shutdown();
}

#[test]
fn utf16_columns_when_the_client_offers_no_utf8() {
    diagnostics_at_the_right_range(&["utf-16"], true);
    diagnostics_at_the_right_range(&[], true);
}

#[test]
fn utf8_columns_when_the_client_offers_them() {
    diagnostics_at_the_right_range(&["utf-16", "utf-8"], false);
}

#[test]
fn related_information_points_at_the_first_declaration() {
    let mut client = Client::start(Options::default());
    let text = SUPPORT_TRIAGE.replace(r#"{ "id": "mail","#, r#"{ "id": "page","#);
    let uri = uri("dup.json");
    let diagnostics = client.open(&uri, &text);
    let duplicate = diagnostics
        .iter()
        .find(|d| d.code == Some(lsp_types::NumberOrString::String("graph.duplicate_node_id".into())))
        .expect("a duplicate id diagnostic");
    let related = duplicate.related_information.as_ref().expect("related information");
    assert_eq!(related[0].message, "first used here");
    assert_eq!(related[0].location.uri, uri);
    let first = text.find(r#""page""#).unwrap();
    assert_eq!(serde_json::to_value(related[0].location.range.start).unwrap(), position(&text, first, true));
    client.shutdown();
}

#[test]
fn definition_of_an_edge_endpoint_and_of_an_lwir_need() {
    let mut client = Client::start(Options::default());
    let draft = uri("draft.json");
    client.open(&draft, SUPPORT_TRIAGE);
    // `"to": { "node": "history" }` of e1 goes to the node `history`.
    let at = position_of(SUPPORT_TRIAGE, r#""to": { "node": "history" }"#, r#""to": { "node": "h"#.len(), true);
    let location =
        client.request("textDocument/definition", json!({ "textDocument": { "uri": draft }, "position": at }));
    let target = SUPPORT_TRIAGE.find(r#""history""#).unwrap();
    assert_eq!(location["uri"], draft.as_str());
    assert_eq!(location["range"]["start"], position(SUPPORT_TRIAGE, target, true));
    // Not an endpoint: no definition.
    let at = position_of(SUPPORT_TRIAGE, r#""tenantId""#, 2, true);
    let none = client.request("textDocument/definition", json!({ "textDocument": { "uri": draft }, "position": at }));
    assert_eq!(none, Value::Null);

    let lwir_text = r#"{
  "apiVersion": "littleworkflow.dev/v0.1",
  "kind": "Workflow",
  "steps": [
    { "id": "fetch", "uses": "tool.call", "needs": [], "with": { "tool": "t", "input": {} } },
    { "id": "summarize", "uses": "ai.generate", "needs": ["fetch"], "with": { "model": "m", "prompt": "p" } }
  ]
}"#;
    let lwir = uri("plan.lwir.json");
    client.open(&lwir, lwir_text);
    let at = position_of(lwir_text, r#"["fetch"]"#, 3, true);
    let location =
        client.request("textDocument/definition", json!({ "textDocument": { "uri": lwir }, "position": at }));
    assert_eq!(location["range"]["start"], position(lwir_text, lwir_text.find(r#""fetch""#).unwrap(), true));
    // LWIR files get their diagnostics too: a need that names no step.
    let dangling = lwir_text.replace(r#"["fetch"]"#, r#"["fetcj"]"#);
    let diagnostics = client.replace(&lwir, 2, &dangling);
    let need = diagnostics
        .iter()
        .find(|d| d.code == Some(lsp_types::NumberOrString::String("graph.dangling_edge".into())))
        .unwrap_or_else(|| panic!("{diagnostics:#?}"));
    let start = dangling.find(r#""fetcj""#).unwrap();
    assert_eq!(serde_json::to_value(need.range.start).unwrap(), position(&dangling, start, true));
    client.replace(&lwir, 3, lwir_text);
    let symbols = client.request("textDocument/documentSymbol", json!({ "textDocument": { "uri": lwir } }));
    assert_eq!(symbols[0]["name"], "steps");
    assert_eq!(symbols[0]["children"][1]["name"], "summarize");
    assert_eq!(symbols[0]["children"][1]["detail"], "ai.generate");
    client.shutdown();
}

#[test]
fn hover_on_a_family_and_on_a_diagnostic() {
    let mut client = Client::start(Options::default());
    let text = faulty();
    let uri = uri("draft.json");
    client.open(&uri, &text);
    let at = position_of(&text, r#""router.switch""#, 3, true);
    let hover = client.request("textDocument/hover", json!({ "textDocument": { "uri": uri }, "position": at }));
    let value = hover["contents"]["value"].as_str().unwrap();
    assert!(value.starts_with("**router.switch**: router node, semantic `branch`"), "{value}");
    assert!(value.contains("Inputs:\n- `in`: any"), "{value}");
    assert!(value.contains("- `branches`: array, required"), "{value}");
    // On the faulty family: the explanation page of the code.
    let at = position_of(&text, r#""dataset.retreive""#, 3, true);
    let hover = client.request("textDocument/hover", json!({ "textDocument": { "uri": uri }, "position": at }));
    let value = hover["contents"]["value"].as_str().unwrap();
    assert!(value.contains(little_diagnostics::Code::CatalogUnknownFamily.explanation()), "{value}");
    client.shutdown();
}

#[test]
fn symbols_outline_nodes_and_edges() {
    let mut client = Client::start(Options::default());
    let uri = uri("draft.json");
    client.open(&uri, SUPPORT_TRIAGE);
    let symbols = client.request("textDocument/documentSymbol", json!({ "textDocument": { "uri": uri } }));
    let names = |i: usize| -> Vec<String> {
        symbols[i]["children"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(symbols[0]["name"], "nodes");
    assert_eq!(names(0), ["ticket", "history", "route", "page", "digest", "mail"]);
    assert_eq!(symbols[1]["name"], "edges");
    assert_eq!(names(1), ["e1", "e2", "e3", "e4", "e5", "e6"]);
    assert_eq!(symbols[1]["children"][1]["detail"], "history → route");
    let id = SUPPORT_TRIAGE.find(r#""route""#).unwrap();
    assert_eq!(symbols[0]["children"][2]["selectionRange"]["start"], position(SUPPORT_TRIAGE, id, true));
    client.shutdown();
}

fn labels(list: &Value) -> Vec<String> {
    list["items"].as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap().to_string()).collect()
}

#[test]
fn completion_where_names_are_expected() {
    let mut client = Client::start(Options::default());
    let uri = uri("draft.json");
    client.open(&uri, SUPPORT_TRIAGE);
    let mut complete = |needle: &str, skip: usize| {
        let at = position_of(SUPPORT_TRIAGE, needle, skip, true);
        client.request("textDocument/completion", json!({ "textDocument": { "uri": uri }, "position": at }))
    };
    let families = complete(r#""trigger.webhook""#, 1);
    assert!(labels(&families).contains(&"dataset.retrieve".to_string()));
    assert!(labels(&families).contains(&"router.switch".to_string()));
    // The edit replaces the whole string's contents.
    let start = SUPPORT_TRIAGE.find(r#""trigger.webhook""#).unwrap();
    let edit = &families["items"][0]["textEdit"]["range"];
    assert_eq!(edit["start"], position(SUPPORT_TRIAGE, start + 1, true));
    assert_eq!(edit["end"], position(SUPPORT_TRIAGE, start + 16, true));

    // What was typed before the cursor (`h`) filters: ids that start with it, then ids
    // that contain it.
    let nodes = complete(r#""to": { "node": "history" }"#, r#""to": { "node": "h"#.len());
    assert_eq!(labels(&nodes), ["history"]);
    let nodes = complete(r#""to": { "node": "history" }"#, r#""to": { "node": ""#.len());
    assert_eq!(labels(&nodes), ["ticket", "history", "route", "page", "digest", "mail"]);
    // `"port": "dataset"` out of `history` (dataset.retrieve): its outputs.
    let ports = complete(r#""port": "dataset""#, r#""port": "d"#.len());
    assert_eq!(labels(&ports), ["dataset"]);
    // `"to": { "node": "digest", "port": "data" }`: report.generate's inputs.
    let inputs = complete(r#""port": "data" }"#, r#""port": "d"#.len());
    assert!(labels(&inputs).contains(&"data".to_string()), "{inputs}");
    let branches = complete(r#""label": "urgent" }, "from""#, r#""label": "u"#.len());
    assert_eq!(labels(&branches), ["urgent", "routine"]);
    // Elsewhere, nothing.
    assert_eq!(complete(r#""New ticket""#, 2), Value::Null);
    client.shutdown();
}

/// Applies LSP text edits (UTF-16 positions) to a text.
fn apply(text: &str, edits: &[Value]) -> String {
    let offset = |p: &Value| {
        let index = little_diagnostics::LineIndex::new(text);
        index.offset(
            text,
            p["line"].as_u64().unwrap() as u32,
            p["character"].as_u64().unwrap() as u32,
            little_diagnostics::Encoding::Utf16,
        ) as usize
    };
    let mut out = text.to_string();
    let mut edits: Vec<&Value> = edits.iter().collect();
    edits.sort_by_key(|e| std::cmp::Reverse(offset(&e["range"]["start"])));
    for edit in edits {
        out.replace_range(
            offset(&edit["range"]["start"])..offset(&edit["range"]["end"]),
            edit["newText"].as_str().unwrap(),
        );
    }
    out
}

#[test]
fn code_actions_apply_the_did_you_mean() {
    let mut client = Client::start(Options::default());
    let uri = uri("draft.json");
    // A family typo (a value) and an unknown node field (a key) on one draft.
    let text = faulty().replace(r#""title": "Urgent?""#, r#""titel": "Urgent?""#);
    let diagnostics = client.open(&uri, &text);
    assert!(diagnostics.iter().any(|d| d.message.contains("did you mean `title`?")), "{diagnostics:#?}");
    let whole = json!({ "start": { "line": 0, "character": 0 }, "end": position(&text, text.len(), true) });
    let actions = client.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": uri }, "range": whole, "context": { "diagnostics": [] } }),
    );
    let actions = actions.as_array().unwrap();
    let titles: Vec<&str> = actions.iter().map(|a| a["title"].as_str().unwrap()).collect();
    assert_eq!(titles, ["Replace with `dataset.retrieve`", "Replace with `title`"]);
    assert_eq!(actions[0]["kind"], "quickfix");
    assert_eq!(actions[0]["diagnostics"][0]["code"], "catalog.unknown_family");
    let edits: Vec<Value> =
        actions.iter().flat_map(|a| a["edit"]["changes"][uri.as_str()].as_array().unwrap().clone()).collect();
    let fixed = apply(&text, &edits);
    assert_eq!(
        fixed,
        SUPPORT_TRIAGE
            .replace(r#""title": "Customer history","#, r#""title": "Grüße → 𝄞", "family": "dataset.retrieve","#)
            .replace(r#"{ "id": "history", "family": "dataset.retrieve","#, r#"{ "id": "history","#)
    );
    let after = client.replace(&uri, 2, &fixed);
    assert!(after.iter().all(|d| !d.message.contains("did you mean")), "{after:#?}");
    // A range away from any fault gets no action.
    let first_line = json!({ "start": { "line": 0, "character": 0 }, "end": { "line": 0, "character": 1 } });
    let none = client.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": uri }, "range": first_line, "context": { "diagnostics": [] } }),
    );
    assert_eq!(none, json!([]));
    client.shutdown();
}

#[test]
fn closing_clears_and_unknown_requests_fail_cleanly() {
    let mut client = Client::start(Options::default());
    let uri = uri("draft.json");
    assert!(!client.open(&uri, &faulty()).is_empty());
    client.notify("textDocument/didClose", json!({ "textDocument": { "uri": uri } }));
    assert!(client.diagnostics(&uri, None).is_empty());
    let response = client.request_raw(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri }, "position": { "line": 0, "character": 0 } }),
    );
    assert_eq!(response.error.unwrap().code, lsp_server::ErrorCode::InvalidParams as i32);
    let response = client.request_raw("little/unknown", json!({}));
    assert_eq!(response.error.unwrap().code, lsp_server::ErrorCode::MethodNotFound as i32);
    client.shutdown();
}

#[test]
fn an_empty_file_gets_its_diagnostic_at_0_0() {
    // An empty file claims no format: it is little's by the `files` setting.
    let mut client = Client::start(Options {
        initialization_options: Some(json!({ "files": ["**/empty*.json"] })),
        ..Options::default()
    });
    for text in ["", "   ", "\n"] {
        let name = format!("empty{}.json", text.len());
        let diagnostics = client.open(&uri(&name), text);
        assert_eq!(diagnostics.len(), 1, "{text:?}: {diagnostics:#?}");
        let range = diagnostics[0].range;
        let lines = text.split('\n').count() as u32;
        assert!(
            range.start.line < lines && range.end.line < lines,
            "{text:?}: {range:?} on a line that does not exist"
        );
        if text.is_empty() {
            assert_eq!((range.start, range.end), (lsp_types::Position::new(0, 0), lsp_types::Position::new(0, 0)));
        }
    }
    client.shutdown();
}

#[test]
fn completion_is_filtered_capped_and_marks_deprecated_families_last() {
    // 300 retrievals: more node ids than a completion list carries.
    let mut nodes = vec![json!({ "id": "start", "family": "trigger.manual" })];
    let mut edges = Vec::new();
    for i in 0..300 {
        nodes.push(json!({ "id": format!("n{i}"), "family": "dataset.retrieve", "config": { "connection": "c" } }));
        edges.push(json!({ "id": format!("e{i}"), "from": { "node": "start" }, "to": { "node": format!("n{i}") } }));
    }
    let draft = serde_json::to_string_pretty(&json!({
        "format": "workflow-draft/v1", "tenantId": "acme", "workflowId": "w", "draftId": "d", "revision": 1,
        "catalogVersion": "2026.11", "nodes": nodes, "edges": edges
    }))
    .unwrap();
    let mut client = Client::start(Options::default());
    let uri = uri("many.json");
    client.open(&uri, &draft);
    let mut complete = |needle: &str, skip: usize| {
        let at = position_of(&draft, needle, skip, true);
        client.request("textDocument/completion", json!({ "textDocument": { "uri": uri }, "position": at }))
    };
    let all = complete(r#""node": "n17""#, r#""node": ""#.len());
    assert_eq!(all["isIncomplete"], true);
    assert_eq!(labels(&all).len(), little_lsp::features::COMPLETION_CAP);
    // `n17` typed: `n17` first, then `n170` … `n179`; complete.
    let typed = complete(r#""node": "n17""#, r#""node": "n17"#.len());
    assert_eq!(typed["isIncomplete"], false);
    let expected: Vec<String> = std::iter::once("n17".to_string()).chain((170..180).map(|i| format!("n{i}"))).collect();
    assert_eq!(labels(&typed), expected);
    // Families: `dataset.query` is deprecated: tagged so, and after every other match.
    let families = complete(r#""family": "dataset.retrieve""#, r#""family": "dataset."#.len());
    assert_eq!(labels(&families), ["dataset.retrieve", "dataset.query"]);
    assert_eq!(families["items"][1]["tags"], json!([1]));
    assert_eq!(families["items"][1]["deprecated"], true);
    assert!(families["items"][0].get("tags").is_none_or(Value::is_null));
    client.shutdown();
}

#[test]
fn only_little_s_documents_get_diagnostics_and_answers() {
    let mut client = Client::start(Options {
        initialization_options: Some(json!({ "files": ["**/workflows/**/*.json"] })),
        ..Options::default()
    });
    // Other JSON files: nothing at all, even broken or commented ones.
    for (name, text) in [
        ("package.json", "{ \"name\": \"app\", \"version\": \"1.0.0\" }"),
        ("schema.json", "{ \"$schema\": \"https://json-schema.org/draft/2020-12/schema\", \"format\": \"date-time\" }"),
        ("tsconfig.json", "{\n  // comments\n  \"compilerOptions\": { \"strict\": true, },\n}"),
    ] {
        let other = uri(name);
        assert_eq!(client.open(&other, text), [], "{name}");
        let symbols = client.request("textDocument/documentSymbol", json!({ "textDocument": { "uri": other } }));
        assert_eq!(symbols, Value::Null, "{name}");
    }
    // A file that claims a little format but cannot be parsed still gets its errors.
    let broken = uri("broken.json");
    let diagnostics = client.open(&broken, "{ \"format\": \"workflow-draft/v1\", \"nodes\": [ { \"id\": \"a ");
    assert!(diagnostics.iter().any(|d| d.code == Some(lsp_types::NumberOrString::String("parse.invalid_json".into()))));
    // So does another version of a little format, and a file the `files` globs name.
    assert!(!client.open(&uri("v2.json"), "{ \"format\": \"workflow-draft/v2\" }").is_empty());
    assert!(!client.open(&uri("workflows/team/plain.json"), "{ \"name\": \"x\" }").is_empty());
    // A draft that stops claiming a little format loses its diagnostics.
    let draft = uri("draft.json");
    assert!(!client.open(&draft, "{ \"format\": \"workflow-draft/v1\" }").is_empty());
    assert_eq!(client.replace(&draft, 2, "{ \"name\": \"x\" }"), []);
    client.shutdown();
}
