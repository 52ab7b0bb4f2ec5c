//! The no-cascade rules of SPEC §2.1, case by case: each fault is reported once, as
//! itself, and counts for nothing else.

use little_conformance::{Setup, check_text, codes};
use little_diagnostics::Code;
use serde_json::{Value, json};

fn draft(nodes: Value, edges: Value) -> Value {
    json!({
        "format": "workflow-draft/v1", "tenantId": "acme", "workflowId": "wf", "draftId": "d", "revision": 1,
        "catalogVersion": "2026.11", "nodes": nodes, "edges": edges
    })
}

fn edge(id: &str, from: &str, to: &str) -> Value {
    json!({ "id": id, "from": { "node": from }, "to": { "node": to } })
}

fn check(draft: &Value) -> Vec<Code> {
    codes(&check_text(&serde_json::to_string_pretty(draft).unwrap(), &Setup::default()))
}

fn context() -> String {
    json!({
        "format": "workflow-context/v1", "tenantId": "acme",
        "capabilities": ["data.warehouse", "notifications.chat"],
        "integrations": [ { "id": "conn_wh", "kind": "warehouse" }, { "id": "chat", "kind": "chat" } ]
    })
    .to_string()
}

fn start() -> Value {
    json!({ "id": "start", "family": "trigger.manual" })
}

fn fetch(id: &str) -> Value {
    json!({ "id": id, "family": "dataset.retrieve", "config": { "connection": "conn_wh" } })
}

fn report(id: &str) -> Value {
    json!({ "id": id, "family": "report.generate" })
}

#[test]
fn a_dangling_edge_is_one_diagnostic_and_its_input_is_not_missing() {
    // `ghost` does not exist; the edge was the only one into report's required `data`
    // input: neither that input nor the report's reachability is reported.
    let d = draft(
        json!([start(), fetch("fetch"), report("report")]),
        json!([edge("e1", "start", "fetch"),
               { "id": "e2", "from": { "node": "ghost", "port": "dataset" }, "to": { "node": "report", "port": "data" } }]),
    );
    assert_eq!(check(&d), [Code::GraphDanglingEdge]);
}

#[test]
fn a_dangling_edge_gets_no_type_check_and_no_duplicate_input() {
    let d = draft(
        json!([start(), fetch("fetch"), report("report")]),
        json!([edge("e1", "start", "fetch"),
               { "id": "e2", "from": { "node": "fetch", "port": "dataset" }, "to": { "node": "report", "port": "data" } },
               { "id": "e3", "from": { "node": "ghost" }, "to": { "node": "report", "port": "data" } }]),
    );
    assert_eq!(check(&d), [Code::GraphDanglingEdge]);
}

#[test]
fn an_edge_to_a_visual_node_is_dropped_with_a_warning_only() {
    let d = draft(
        json!([start(), fetch("fetch"), { "id": "note", "family": "annotation", "text": "hi" }]),
        json!([edge("e1", "start", "fetch"), edge("e2", "fetch", "note")]),
    );
    assert_eq!(check(&d), [Code::GraphEdgeToVisualNode]);
}

#[test]
fn an_edge_into_a_trigger_is_inbound_whatever_its_port() {
    for port in [json!(null), json!("in"), json!("nonsense")] {
        let mut e = json!({ "id": "e2", "from": { "node": "fetch", "port": "dataset" }, "to": { "node": "start" } });
        if !port.is_null() {
            e["to"]["port"] = port;
        }
        let d = draft(json!([start(), fetch("fetch")]), json!([edge("e1", "start", "fetch"), e]));
        assert_eq!(check(&d), [Code::TriggerInboundEdge]);
    }
}

#[test]
fn a_self_connection_is_not_a_cycle_and_a_retry_to_itself_is_allowed() {
    let looped =
        json!({ "id": "e2", "from": { "node": "fetch", "port": "dataset" }, "to": { "node": "fetch", "port": "in" } });
    let d = draft(json!([start(), fetch("fetch")]), json!([edge("e1", "start", "fetch"), looped.clone()]));
    assert_eq!(check(&d), [Code::GraphSelfConnection]);
    let mut retry = looped;
    retry["kind"] = json!("retry");
    retry["retry"] = json!({ "maxAttempts": 3, "backoffMs": 1000 });
    let d = draft(json!([start(), fetch("fetch")]), json!([edge("e1", "start", "fetch"), retry]));
    assert_eq!(check(&d), []);
}

#[test]
fn router_edges_must_be_branches_and_branches_must_leave_routers() {
    let router = json!({ "id": "route", "family": "router.switch",
        "config": { "branches": [ { "label": "big" }, { "label": "small" } ] } });
    let branch = |id: &str, to: &str, label: &str| json!({ "id": id, "kind": "branch", "branch": { "label": label }, "from": { "node": "route" }, "to": { "node": to } });
    let nodes = json!([start(), router, fetch("a"), fetch("b")]);
    let clean = draft(
        nodes.clone(),
        json!([edge("e1", "start", "route"), branch("e2", "a", "big"), branch("e3", "b", "small")]),
    );
    assert_eq!(check(&clean), []);
    let plain =
        draft(nodes.clone(), json!([edge("e1", "start", "route"), branch("e2", "a", "big"), edge("e3", "route", "b")]));
    // The plain edge is `branch.missing_label`; `small` counts as unhandled.
    assert_eq!(check(&plain), [Code::BranchMissingLabel, Code::BranchUnhandled]);
    let mut from_action = clean.clone();
    from_action["edges"][0] = json!({ "id": "e1", "kind": "branch", "branch": { "label": "go" }, "from": { "node": "start" }, "to": { "node": "route" } });
    assert_eq!(check(&from_action), [Code::GraphUnsupportedRouter]);
}

#[test]
fn without_a_trigger_reachability_is_not_reported() {
    let d = draft(json!([fetch("a"), fetch("b")]), json!([]));
    assert_eq!(check(&d), [Code::GraphMissingTrigger]);
}

#[test]
fn an_unknown_family_silences_its_edges_and_what_follows_them() {
    // A typo'd trigger: no missing trigger, no unreachable node, no dangling edge.
    let d = draft(
        json!([{ "id": "start", "family": "trigger.manaul" }, fetch("fetch"), fetch("more")]),
        json!([edge("e1", "start", "fetch"), { "id": "e2", "from": { "node": "fetch", "port": "dataset" }, "to": { "node": "more" } }]),
    );
    assert_eq!(check(&d), [Code::CatalogUnknownFamily]);
}

#[test]
fn an_edge_from_an_unknown_family_still_feeds_its_required_input() {
    let d = draft(
        json!([start(), { "id": "fetch", "family": "dataset.retreive", "config": { "connection": "conn_wh" } }, report("report")]),
        json!([edge("e1", "start", "fetch"),
               { "id": "e2", "from": { "node": "fetch", "port": "dataset" }, "to": { "node": "report", "port": "data" } }]),
    );
    assert_eq!(check(&d), [Code::CatalogUnknownFamily]);
}

#[test]
fn an_invalid_config_field_is_not_checked_again() {
    // The connection is not a string: the schema says so; the integration check skips it.
    let d = draft(
        json!([start(), { "id": "fetch", "family": "dataset.retrieve", "config": { "connection": 42 } }]),
        json!([edge("e1", "start", "fetch")]),
    );
    let report = check_text(&d.to_string(), &Setup { context: Some(context()), ..Setup::default() });
    assert_eq!(codes(&report), [Code::CatalogInvalidConfig]);
    // Branches that fail the schema are not also counted or matched.
    let d = draft(
        json!([start(), { "id": "route", "family": "router.switch", "config": { "branches": "big, small" } }, fetch("a")]),
        json!([edge("e1", "start", "route"), { "id": "e2", "kind": "branch", "branch": { "label": "big" }, "from": { "node": "route" }, "to": { "node": "a" } }]),
    );
    assert_eq!(check(&d), [Code::CatalogInvalidConfig]);
    // Evidence of the wrong type likewise.
    let d = draft(
        json!([start(), { "id": "gate", "family": "gate.approval", "config": { "evidence": "report" } }]),
        json!([edge("e1", "start", "gate")]),
    );
    assert_eq!(check(&d), [Code::CatalogInvalidConfig]);
}

#[test]
fn a_node_without_id_or_family_is_a_shape_fault_only() {
    let d = draft(
        json!([start(), fetch("fetch"), { "family": "dataset.retrieve" }, { "id": "x" }]),
        json!([edge("e1", "start", "fetch")]),
    );
    assert_eq!(check(&d), [Code::DraftInvalidShape]);
    let d = draft(json!({ "start": start() }), json!([edge("e1", "start", "fetch")]));
    assert_eq!(check(&d), [Code::DraftInvalidShape]);
}

#[test]
fn mapped_edges_follow_contract_rules_and_unmapped_edges_port_rules() {
    let producer = json!({ "id": "fetch", "family": "dataset.retrieve", "config": { "connection": "conn_wh" },
        "contracts": { "version": "workflow-node-contracts/v1", "inputs": [],
            "outputs": [ { "port": "dataset", "types": ["tabular-data"] } ],
            "artifacts": [ { "id": "sales", "port": "dataset", "types": ["tabular-data"] } ] } });
    let consumer = json!({ "id": "report", "family": "report.generate",
        "contracts": { "version": "workflow-node-contracts/v1",
            "inputs": [ { "port": "data", "types": ["image"] } ], "outputs": [], "artifacts": [] } });
    let nodes = json!([start(), producer, consumer]);
    let mapped = json!({ "id": "e2", "from": { "node": "fetch", "port": "dataset" }, "to": { "node": "report", "port": "data" },
        "mapping": { "output": "dataset", "input": "data", "artifacts": ["sales"] } });
    let d = draft(nodes.clone(), json!([edge("e1", "start", "fetch"), mapped.clone()]));
    assert_eq!(check(&d), [Code::ContractIncompatibleTypes]);
    let mut unmapped = mapped;
    unmapped.as_object_mut().unwrap().remove("mapping");
    let d = draft(nodes, json!([edge("e1", "start", "fetch"), unmapped]));
    assert_eq!(check(&d), [Code::GraphIncompatiblePortTypes]);
}

#[test]
fn suppressions_silence_only_non_blocking_codes_on_their_node() {
    let lonely = json!({ "id": "lonely", "family": "dataset.retrieve", "config": { "connection": "conn_wh" },
        "suppress": ["graph.unreachable_node"] });
    let d = draft(json!([start(), fetch("fetch"), lonely]), json!([edge("e1", "start", "fetch")]));
    assert_eq!(check(&d), []);
    let mut d = d;
    d["nodes"][2]["suppress"] = json!(["graph.cycle"]);
    assert_eq!(check(&d), [Code::DraftInvalidSuppression, Code::GraphUnreachableNode]);
    d["nodes"][2]["suppress"] = json!(["graph.unreachable_nod"]);
    let report = check_text(&d.to_string(), &Setup::default());
    assert_eq!(codes(&report), [Code::DraftUnknownSuppression, Code::GraphUnreachableNode]);
    let help = report.diagnostics.iter().find(|x| x.code == Code::DraftUnknownSuppression).unwrap().help.clone();
    assert_eq!(help.as_deref(), Some("did you mean `graph.unreachable_node`?"));
}

#[test]
fn a_misspelt_input_port_counts_as_feeding_the_input_it_meant() {
    // `datax` is not a port of the report, but `data` is near: the edge was meant for
    // it, so `data` is not also reported missing (found by tests/mutations.rs).
    let d = draft(
        json!([start(), fetch("fetch"), report("report")]),
        json!([edge("e1", "start", "fetch"),
               { "id": "e2", "from": { "node": "fetch", "port": "dataset" }, "to": { "node": "report", "port": "datax" } }]),
    );
    assert_eq!(check(&d), [Code::GraphInvalidPort]);
}

#[test]
fn behind_a_dangling_edge_ancestry_is_unknown_so_gates_and_retries_say_nothing() {
    // `e2` leaves a node that does not exist, so what precedes `report` is unknown: the
    // gate's evidence and the retry from `mail` back to `fetch` may well be upstream
    // (found by tests/mutations.rs).
    let contracts = json!({ "version": "workflow-node-contracts/v1", "inputs": [],
        "outputs": [{ "port": "report", "types": ["document"] }],
        "artifacts": [{ "id": "weekly", "port": "report", "types": ["document"] }] });
    let d = draft(
        json!([start(), fetch("fetch"),
               { "id": "report", "family": "report.generate", "contracts": contracts },
               { "id": "approve", "family": "gate.approval", "config": { "evidence": ["weekly"] } },
               { "id": "mail", "family": "notify.email", "config": { "sender": "m", "to": ["a@example.com"] } }]),
        json!([edge("e1", "start", "fetch"),
               { "id": "e2", "from": { "node": "ghost", "port": "dataset" }, "to": { "node": "report", "port": "data" } },
               { "id": "e3", "from": { "node": "report", "port": "report" }, "to": { "node": "approve" } },
               edge("e4", "approve", "mail"),
               { "id": "e5", "kind": "retry", "retry": { "maxAttempts": 2, "backoffMs": 0 },
                 "from": { "node": "mail" }, "to": { "node": "fetch" } }]),
    );
    assert_eq!(check(&d), [Code::GraphDanglingEdge]);
}

/// Three edges into one single input: the second and the third are each reported once,
/// as a duplicate of the first authored (whatever the ids), and the input is fed.
#[test]
fn every_later_edge_into_a_single_input_names_the_first() {
    let into_data = |id: &str, from: &str| json!({ "id": id, "from": { "node": from, "port": "dataset" }, "to": { "node": "report", "port": "data" } });
    let d = draft(
        json!([start(), fetch("f1"), fetch("f2"), fetch("f3"), report("report")]),
        json!([
            edge("s1", "start", "f1"),
            edge("s2", "start", "f2"),
            edge("s3", "start", "f3"),
            into_data("e3", "f3"),
            into_data("e1", "f1"),
            into_data("e2", "f2")
        ]),
    );
    let report = check_text(&serde_json::to_string_pretty(&d).unwrap(), &Setup::default());
    let duplicates: Vec<&str> =
        report.diagnostics.iter().filter(|d| d.code == Code::GraphDuplicateInput).map(|d| d.message.as_str()).collect();
    assert_eq!(duplicates.len(), 2, "{duplicates:?}");
    assert!(duplicates[0].starts_with("edge `e1`") && duplicates[1].starts_with("edge `e2`"), "{duplicates:?}");
    assert!(duplicates.iter().all(|m| m.contains("(edge `e3` already enters it)")), "{duplicates:?}");
    assert!(!codes(&report).contains(&Code::GraphMissingRequiredInput));
}
