//! `little check` on a chain of 10,000 nodes whose edge into node 4 names a node near no
//! id: one `graph.dangling_edge` and one `graph.unreachable_node` with the count, not one
//! warning for every node after the typo.

mod common;

use common::{fresh_dir, little_in};
use serde_json::{Value, json};

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
    let draft = json!({
        "format": "workflow-draft/v1", "tenantId": "acme", "workflowId": "wf", "draftId": "d", "revision": 1,
        "catalogVersion": "2026.11", "nodes": nodes, "edges": edges
    });
    let dir = fresh_dir("unreachable-regions", "chain");
    std::fs::write(dir.join("chain.json"), serde_json::to_string_pretty(&draft).unwrap()).unwrap();
    let run = little_in(&dir, ["check", "chain.json", "--format", "json"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    let diagnostics = report["files"][0]["diagnostics"].as_array().unwrap();
    let mut codes: Vec<&str> =
        diagnostics.iter().filter(|d| d["severity"] != "info").map(|d| d["code"].as_str().unwrap()).collect();
    codes.sort();
    assert_eq!(codes, ["graph.dangling_edge", "graph.unreachable_node"]);
    let warning = diagnostics.iter().find(|d| d["code"] == "graph.unreachable_node").unwrap();
    let message = warning["message"].as_str().unwrap();
    assert!(message.starts_with("node `n0004` is unreachable"), "{message}");
    assert!(
        message.ends_with("and so are the 9995 nodes only it leads to (the first 100 of the 9995 are listed)"),
        "{message}"
    );
    // The human form says it once.
    let human = little_in(&dir, ["check", "chain.json"]);
    assert_eq!(human.stdout.matches("graph.unreachable_node").count(), 1, "{}", human.stdout);
}
