//! Through the server, a keystroke costs what it touches: salsa's execution log of a
//! one-node config edit in a 10,000-node draft.

mod common;

use common::{Client, Options, position, uri};
use little_diagnostics::Severity;
use little_passes::Database;
use serde_json::json;

fn executions(log: &little_passes::db::ExecutionLog, query: &str) -> usize {
    log.lock().unwrap().iter().filter(|e| e.starts_with(&format!("{query}("))).count()
}

/// Where one node's query text can be edited: just after `and batch = ` in the middle.
fn middle_query(text: &str) -> usize {
    let half = text.len() / 2;
    half + text[half..].find("and batch = ").expect("the generated draft has retrievals") + "and batch = ".len()
}

#[test]
fn editing_one_config_reruns_that_nodes_checks_only() {
    let (db, log) = Database::with_execution_log();
    let mut client = Client::start(Options { db, ..Options::default() });
    let text = little_conformance::generate::draft(10_000, 7);
    let draft = uri("big.json");
    let opened = client.open(&draft, &text);
    assert!(opened.iter().all(|d| d.severity != Some(lsp_types::DiagnosticSeverity::ERROR)), "{opened:#?}");
    assert!(executions(&log, "check_node") >= 9_000, "the open checked every node");
    let expected = little_conformance::check_text(&text, &Default::default());
    assert!(expected.diagnostics.iter().all(|d| d.severity() != Severity::Error));

    log.lock().unwrap().clear();
    let at = position(&text, middle_query(&text), true);
    client.send_insert(&draft, 2, &at, "9");
    let edited = client.diagnostics(&draft, Some(2));
    assert_eq!(edited.len(), opened.len());
    let ran = log.lock().unwrap().clone();
    assert_eq!(executions(&log, "check_node"), 1, "{ran:?}");
    // Neither the graph layers nor the candidate's hashes of the whole text: the server
    // publishes diagnostics, which do not need them.
    for query in [
        "port_findings",
        "contract_findings",
        "flow_findings",
        "cycle_findings",
        "family",
        "authored_graph_hash",
        "check_draft",
    ] {
        assert_eq!(executions(&log, query), 0, "{query} re-ran: {ran:?}");
    }
    // Nothing ran once per node: the whole edit is a handful of executions.
    assert!(ran.len() < 20, "{ran:?}");
    client.shutdown();
}

#[test]
fn edits_in_quick_succession_publish_in_order_and_end_on_the_last() {
    let mut client = Client::start(Options::default());
    let text = little_conformance::generate::draft(2_000, 3);
    let draft = uri("big.json");
    client.send_open(&draft, &text);
    let at = position(&text, middle_query(&text), true);
    for version in 2..=4 {
        client.send_insert(&draft, version, &at, "1");
    }
    // Versions published never go back, and the last edit is published.
    let mut seen = Vec::new();
    while seen.last() != Some(&4) {
        let version = client.published_version(&draft);
        seen.extend(version);
    }
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
    client.shutdown();
}

#[test]
fn a_request_overtaken_by_an_edit_answers_content_modified() {
    let mut client = Client::start(Options::default());
    let text = little_conformance::generate::draft(10_000, 5);
    let draft = uri("big.json");
    client.send_open(&draft, &text);
    // The hover needs the whole check of a fresh 10,000-node draft; the edit that follows
    // at once cancels it (salsa unwinds every query a clone starts while an input is set).
    let hover = json!({ "textDocument": { "uri": draft }, "position": position(&text, middle_query(&text), true) });
    let id = client.send_request("textDocument/hover", hover);
    let at = position(&text, middle_query(&text), true);
    client.send_insert(&draft, 2, &at, "9");
    let response = client.response(id);
    assert_eq!(response.error.map(|e| e.code), Some(lsp_server::ErrorCode::ContentModified as i32));
    // The server goes on: version 2 is checked and published.
    assert!(
        client.diagnostics(&draft, Some(2)).iter().all(|d| d.severity != Some(lsp_types::DiagnosticSeverity::ERROR))
    );
    client.shutdown();
}

/// Closing a document lets go of its queries' results: they run once more on an empty
/// text (salsa would otherwise keep the last ones for as long as the server runs), and
/// reopening the document checks it afresh.
#[test]
fn closing_a_document_runs_its_queries_on_nothing() {
    let (db, log) = Database::with_execution_log();
    let mut client = Client::start(Options { db, ..Options::default() });
    let text = little_conformance::generate::draft(200, 7);
    let draft = uri("closed.json");
    let opened = client.open(&draft, &text);
    client.send_insert(&draft, 2, &position(&text, middle_query(&text), true), "9");
    assert_eq!(client.diagnostics(&draft, Some(2)).len(), opened.len());

    log.lock().unwrap().clear();
    client.notify("textDocument/didClose", json!({ "textDocument": { "uri": draft } }));
    assert!(client.diagnostics(&draft, None).is_empty(), "closing clears the document's diagnostics");
    let ran = log.lock().unwrap().clone();
    let queries = ["outline", "parse", "document_kind", "draft_ir", "node_chunk", "draft_nodes", "resolved_graph"];
    for query in queries.into_iter().chain(["draft_findings"]) {
        assert_eq!(executions(&log, query), 1, "{query} did not run on the emptied file: {ran:?}");
    }
    assert_eq!(client.open(&draft, &text).len(), opened.len());
    client.shutdown();
}
