//! A `Workspace` between two keystrokes: the editor's recovery reports the fault being
//! typed and what the intact draft says, nothing more; one far-off typo in a long chain is
//! two diagnostics.

use little_embed::{Change, Documents, Encoding, Workspace};
use serde_json::{Value, json};

fn example(name: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples").join(name)).unwrap()
}

/// The codes of a report's errors and warnings, sorted.
fn codes(report: &Value) -> Vec<String> {
    let mut codes: Vec<String> = report["files"][0]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] != "info")
        .map(|d| d["code"].as_str().unwrap().to_string())
        .collect();
    codes.sort();
    codes
}

fn workspace() -> Workspace {
    let documents = Documents {
        context: Some(example("context.json").into_bytes()),
        bindings: Some(example("bindings.json").into_bytes()),
        ..Documents::default()
    };
    Workspace::new(&documents, Encoding::Utf16).unwrap()
}

#[test]
fn a_bare_word_typed_in_the_first_example_is_the_parse_fault_alone() {
    // The first two characters of the `send` node's config line typed over with `inn`:
    // before, `e1`..`e4` were reported to enter nodes that do not exist.
    let text = example("quarterly-report.json");
    let mut workspace = workspace();
    assert_eq!(codes(&workspace.open("draft.json", &text).unwrap()), Vec::<String>::new());
    let line = r#"      "config": { "sender": "mail_ops""#;
    let broken = text.replacen(line, &format!("inn{}", &line[2..]), 1);
    let report = workspace.update("draft.json", Change::Text(broken)).unwrap();
    assert_eq!(codes(&report), ["parse.invalid_json"], "{report:#}");
    let fixed = workspace.update("draft.json", Change::Text(text)).unwrap();
    assert_eq!(codes(&fixed), Vec::<String>::new());
}

#[test]
fn a_far_typo_in_a_chain_of_ten_thousand_is_two_diagnostics() {
    let id = |i: usize| format!("n{i:04}");
    let mut nodes = vec![json!({ "id": id(0), "family": "trigger.manual" })];
    nodes.extend((1..10_000).map(|i| {
        json!({ "id": id(i), "family": "dataset.retrieve", "config": { "connection": "conn_wh", "query": "select 1" } })
    }));
    let edges: Vec<Value> = (1..10_000)
        .map(|i| {
            let to = if i == 4 { "n99".to_string() } else { id(i) };
            json!({ "id": format!("e{i}"), "from": { "node": id(i - 1) }, "to": { "node": to } })
        })
        .collect();
    let text = json!({
        "format": "workflow-draft/v1", "tenantId": "acme", "workflowId": "wf", "draftId": "d", "revision": 1,
        "catalogVersion": "2026.11", "nodes": nodes, "edges": edges
    })
    .to_string();
    let mut workspace = workspace();
    let report = workspace.open("chain.json", &text).unwrap();
    assert_eq!(codes(&report), ["graph.dangling_edge", "graph.unreachable_node"]);
    let warning = &report["files"][0]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "graph.unreachable_node")
        .unwrap()["message"];
    assert!(
        warning
            .as_str()
            .unwrap()
            .ends_with("and so are the 9995 nodes only it leads to (the first 100 of the 9995 are listed)"),
        "{warning}"
    );
}
