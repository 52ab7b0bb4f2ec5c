//! `graph.unreachable_node` once per unreachable region, at its heads: one missing or
//! misspelt edge is one warning with a count, not one warning per node after it.

use little_conformance::{Setup, check_text, codes};
use little_diagnostics::{Code, Diagnostic};
use serde_json::{Value, json};

fn draft(nodes: Value, edges: Value) -> String {
    json!({
        "format": "workflow-draft/v1", "tenantId": "acme", "workflowId": "wf", "draftId": "d", "revision": 1,
        "catalogVersion": "2026.11", "nodes": nodes, "edges": edges
    })
    .to_string()
}

fn fetch(id: &str) -> Value {
    json!({ "id": id, "family": "dataset.retrieve", "config": { "connection": "conn_wh", "query": "select 1" } })
}

fn edge(id: &str, from: &str, to: &str) -> Value {
    json!({ "id": id, "from": { "node": from }, "to": { "node": to } })
}

fn unreachable(report: &[Diagnostic]) -> Vec<&Diagnostic> {
    report.iter().filter(|d| d.code == Code::GraphUnreachableNode).collect()
}

/// The text each related location of `diagnostic` points at, in `text`.
fn related_ids<'t>(text: &'t str, diagnostic: &Diagnostic) -> Vec<&'t str> {
    diagnostic
        .related
        .iter()
        .map(|r| {
            let span = r.span.clone().expect("a related location");
            let element = &text[span.start as usize..span.end as usize];
            element.split('"').nth(3).expect("an element with an id first")
        })
        .collect()
}

#[test]
fn a_region_cut_off_by_a_dangling_edge_is_one_warning_at_its_head() {
    // start → a → b, b → "zz" (no such node), c → d: `c` and `d` are unreachable.
    let start = json!({ "id": "start", "family": "trigger.manual" });
    let text = draft(
        json!([start, fetch("a"), fetch("b"), fetch("c"), fetch("d")]),
        json!([edge("e1", "start", "a"), edge("e2", "a", "b"), edge("e3", "b", "zz"), edge("e4", "c", "d")]),
    );
    let report = check_text(&text, &Setup::default());
    assert_eq!(codes(&report), [Code::GraphDanglingEdge, Code::GraphUnreachableNode], "{:#?}", report.diagnostics);
    let [warning] = unreachable(&report.diagnostics)[..] else { panic!() };
    assert_eq!(
        warning.message,
        "node `c` is unreachable: no trigger leads to it over forward or branch edges, and so is the 1 node only it leads to"
    );
    assert_eq!(related_ids(&text, warning), ["d"]);
    // No help naming `e3`: that would make two faults in parts that share no node
    // interact (conformance/tests/metamorphic.rs).
    assert_eq!(warning.help, None);
}

#[test]
fn each_head_is_one_warning_and_a_node_two_heads_lead_to_is_listed_once() {
    // c → e and d → e: heads `c` and `d`; `e` is listed under `c`, the first. A ring that
    // nothing enters (x → y → x) is one warning at `x`.
    let start = json!({ "id": "start", "family": "trigger.manual" });
    let text = draft(
        json!([start, fetch("a"), fetch("c"), fetch("d"), fetch("e"), fetch("x"), fetch("y")]),
        json!([
            edge("e1", "start", "a"),
            edge("e2", "c", "e"),
            edge("e3", "d", "e"),
            edge("e4", "x", "y"),
            edge("e5", "y", "x")
        ]),
    );
    let report = check_text(&text, &Setup::default());
    let warnings = unreachable(&report.diagnostics);
    let heads: Vec<&str> = warnings.iter().map(|w| w.message.split('`').nth(1).unwrap()).collect();
    assert_eq!(heads, ["c", "d", "x"], "{:#?}", report.diagnostics);
    assert!(warnings[0].message.ends_with("edges"), "`e` is not `c`'s alone: {}", warnings[0].message);
    assert_eq!(related_ids(&text, warnings[0]), ["e"]);
    assert_eq!(related_ids(&text, warnings[1]), Vec::<&str>::new());
    assert!(warnings[2].message.ends_with("and so is the 1 node only it leads to"), "{}", warnings[2].message);
}

/// A chain of `count` nodes (a manual trigger, then retrievals), the edge into node 4
/// naming `n99`, beyond did-you-mean distance of any id.
pub fn chain_with_a_far_typo(count: usize) -> String {
    let id = |i: usize| format!("n{i:04}");
    let mut nodes = vec![json!({ "id": id(0), "family": "trigger.manual" })];
    nodes.extend((1..count).map(|i| fetch(&id(i))));
    let edges: Vec<Value> = (1..count)
        .map(|i| edge(&format!("e{i}"), &id(i - 1), &if i == 4 { "n99".to_string() } else { id(i) }))
        .collect();
    draft(json!(nodes), json!(edges))
}

#[test]
fn a_far_typo_in_a_chain_of_ten_thousand_is_two_diagnostics() {
    let report = check_text(&chain_with_a_far_typo(10_000), &Setup::default());
    assert_eq!(codes(&report), [Code::GraphDanglingEdge, Code::GraphUnreachableNode]);
    let [warning] = unreachable(&report.diagnostics)[..] else { panic!() };
    assert!(warning.message.starts_with("node `n0004` is unreachable"), "{}", warning.message);
    assert!(
        warning.message.ends_with("and so are the 9995 nodes only it leads to (the first 100 of the 9995 are listed)"),
        "{}",
        warning.message
    );
    assert_eq!(warning.related.len(), 100);
}
