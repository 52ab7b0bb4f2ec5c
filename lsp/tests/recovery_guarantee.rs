//! The language server between two keystrokes, on the project's first example in its own
//! layout: the fault being typed and what the intact draft says, nothing more; and one
//! far-off typo in a chain of 10,000 nodes as two diagnostics.

mod common;

use common::{Client, Options, uri};
use lsp_types::{Diagnostic, NumberOrString};
use serde_json::{Value, json};

const QUARTERLY_REPORT: &str = include_str!("../../examples/quarterly-report.json");

/// The codes of the diagnostics that are not hints or information, sorted.
fn codes(diagnostics: &[Diagnostic]) -> Vec<String> {
    let mut codes: Vec<String> = diagnostics
        .iter()
        .filter(|d| {
            !matches!(
                d.severity,
                Some(lsp_types::DiagnosticSeverity::INFORMATION | lsp_types::DiagnosticSeverity::HINT)
            )
        })
        .map(|d| match &d.code {
            Some(NumberOrString::String(code)) => code.clone(),
            other => format!("{other:?}"),
        })
        .collect();
    codes.sort();
    codes
}

#[test]
fn a_bare_word_typed_in_the_first_example_is_the_parse_fault_and_what_was_there() {
    let mut client = Client::start(Options::default());
    let draft = uri("quarterly-report.json");
    let intact = client.open(&draft, QUARTERLY_REPORT);
    // The first two characters of the `send` node's config line typed over with `inn`:
    // before, `e1`..`e4` were reported to enter nodes that do not exist.
    let line = r#"      "config": { "sender": "mail_ops""#;
    let broken = QUARTERLY_REPORT.replacen(line, &format!("inn{}", &line[2..]), 1);
    let found = client.replace(&draft, 2, &broken);
    let mut expected = codes(&intact);
    expected.push("parse.invalid_json".to_string());
    expected.sort();
    assert_eq!(codes(&found), expected, "{found:#?}");
    let fault = found.iter().find(|d| d.message.contains("expected")).expect("the parse fault");
    let line_of_edit = QUARTERLY_REPORT[..QUARTERLY_REPORT.find(line).unwrap()].matches('\n').count() as u32;
    assert_eq!(fault.range.start.line, line_of_edit);
    assert_eq!(codes(&client.replace(&draft, 3, QUARTERLY_REPORT)), codes(&intact));
    client.shutdown();
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
    let text = serde_json::to_string_pretty(&json!({
        "format": "workflow-draft/v1", "tenantId": "acme", "workflowId": "wf", "draftId": "d", "revision": 1,
        "catalogVersion": "2026.11", "nodes": nodes, "edges": edges
    }))
    .unwrap();
    let mut client = Client::start(Options::default());
    let found = client.open(&uri("chain.json"), &text);
    assert_eq!(codes(&found), ["graph.dangling_edge", "graph.unreachable_node"]);
    let warning = found.iter().find(|d| d.message.contains("unreachable")).unwrap();
    assert!(
        warning.message.ends_with("and so are the 9995 nodes only it leads to (the first 100 of the 9995 are listed)"),
        "{}",
        warning.message
    );
    assert_eq!(warning.related_information.as_ref().map(Vec::len), Some(100));
    client.shutdown();
}
