//! The no-cascade rules of docs/reference/diagnostics.md#one-fault-one-diagnostic, case by case: each fault is reported once, as
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
    // The plain edge is `branch.missing_label`, and its label is unknown: it could be
    // `small`, which is not also reported unhandled.
    assert_eq!(check(&plain), [Code::BranchMissingLabel]);
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

/// A router with branches `big` and `small`, fed by the trigger, its `big` edge into `a`
/// and `small` edge (`e3`) replaced by `third`.
fn router_draft(third: Value) -> Value {
    let router = json!({ "id": "route", "family": "router.switch",
        "config": { "branches": [ { "label": "big" }, { "label": "small" } ] } });
    let big = json!({ "id": "e2", "kind": "branch", "branch": { "label": "big" }, "from": { "node": "route" }, "to": { "node": "a" } });
    draft(json!([start(), router, fetch("a"), fetch("b")]), json!([edge("e1", "start", "route"), big, third]))
}

#[test]
fn a_faulty_label_leaves_no_declared_label_unhandled() {
    let small = json!({ "id": "e3", "kind": "branch", "branch": { "label": "small" }, "from": { "node": "route" }, "to": { "node": "b" } });
    assert_eq!(check(&router_draft(small.clone())), []);
    let with_label = |label: Value| {
        let mut e = small.clone();
        e["branch"]["label"] = label;
        e
    };
    let mut missing = small.clone();
    missing.as_object_mut().unwrap().remove("branch");
    let mut forward = missing.clone();
    forward.as_object_mut().unwrap().remove("kind");
    for (third, code) in [
        (missing, Code::BranchMissingLabel),
        (forward, Code::BranchMissingLabel),
        (with_label(json!("smal")), Code::BranchUnknownLabel),
        (with_label(json!("zzzz")), Code::BranchUnknownLabel),
    ] {
        let report = check_text(&router_draft(third.clone()).to_string(), &Setup::default());
        assert_eq!(codes(&report), [code], "{third}");
        assert_eq!(report.diagnostics.iter().filter(|d| d.code == code).count(), 1, "{third}");
    }
}

#[test]
fn an_edge_that_failed_elsewhere_takes_its_label_or_any() {
    // `e3` enters a port `b` lacks: its one fault. Its declared label `small` is taken;
    // an undeclared one is not blamed on it, and is unknown.
    let faulty = |label: &str| json!({ "id": "e3", "kind": "branch", "branch": { "label": label }, "from": { "node": "route" }, "to": { "node": "b", "port": "zzzz" } });
    assert_eq!(check(&router_draft(faulty("small"))), [Code::GraphInvalidPort]);
    assert_eq!(check(&router_draft(faulty("nope"))), [Code::GraphInvalidPort]);
}

#[test]
fn an_edge_between_triggers_is_inbound_and_still_wires_its_source() {
    let d = draft(
        json!([start(), { "id": "other", "family": "trigger.manual" }, fetch("fetch")]),
        json!([edge("e1", "start", "fetch"), edge("e2", "other", "start")]),
    );
    assert_eq!(check(&d), [Code::TriggerInboundEdge]);
    // Into a trigger from a node that is not one: the same single fault.
    let d =
        draft(json!([start(), fetch("fetch")]), json!([edge("e1", "start", "fetch"), edge("e2", "fetch", "start")]));
    assert_eq!(check(&d), [Code::TriggerInboundEdge]);
}

/// A report with `contracts`, feeding a gate through a mapped edge with an artifact the
/// gate takes as evidence.
fn contract_draft(contracts: Value) -> Value {
    let report = json!({ "id": "report", "family": "report.generate", "contracts": contracts });
    let gate = json!({ "id": "approve", "family": "gate.approval", "config": { "evidence": ["weekly"] } });
    draft(
        json!([start(), fetch("fetch"), report, gate]),
        json!([edge("e1", "start", "fetch"),
               { "id": "e2", "from": { "node": "fetch", "port": "dataset" }, "to": { "node": "report", "port": "data" } },
               { "id": "e3", "from": { "node": "report", "port": "summary" }, "to": { "node": "approve", "port": "in" },
                 "mapping": { "output": "summary", "input": "in", "artifacts": ["weekly"] } }]),
    )
}

#[test]
fn an_unreadable_envelope_declares_anything() {
    let readable = json!({ "version": "workflow-node-contracts/v1", "inputs": [],
        "outputs": [{ "port": "summary", "types": ["document"] }],
        "artifacts": [{ "id": "weekly", "port": "summary", "types": ["document"] }] });
    assert_eq!(check(&contract_draft(readable.clone())), []);
    let mut unknown_version = readable.clone();
    unknown_version["version"] = json!("workflow-node-contracts/v2");
    let mut inputs_not_an_array = readable.clone();
    inputs_not_an_array["inputs"] = json!({ "port": "data" });
    let mut artifact_on_no_output = readable.clone();
    artifact_on_no_output["artifacts"][0]["port"] = json!("rows");
    let mut port_without_types = readable.clone();
    port_without_types["outputs"][0].as_object_mut().unwrap().remove("types");
    // Its port `summary`, the mapped artifact `weekly` and the gate's evidence may all be
    // what the author declared: only the envelope is reported.
    for contracts in
        [unknown_version, inputs_not_an_array, artifact_on_no_output, port_without_types, json!("v1"), json!([])]
    {
        assert_eq!(check(&contract_draft(contracts.clone())), [Code::ContractInvalidEnvelope], "{contracts}");
    }
}

/// The default catalog with `report.compare`, whose two inputs are both required.
fn catalog_with_compare() -> String {
    let mut catalog: Value = serde_json::from_str(little_frontend::catalog::DEFAULT_CATALOG).unwrap();
    catalog["families"].as_array_mut().unwrap().push(json!({
        "id": "report.compare", "kind": "action", "semantic": "report-generation",
        "ports": {
            "inputs": [ { "name": "baseline", "types": ["any"], "required": true },
                        { "name": "current", "types": ["any"], "required": true } ],
            "outputs": [ { "name": "report", "types": ["document"] } ] },
        "configSchema": { "type": "object" }
    }));
    catalog.to_string()
}

#[test]
fn a_misspelt_input_port_could_have_fed_any_required_input_of_its_node() {
    let into_report = |port: &str| json!({ "id": "e2", "from": { "node": "fetch", "port": "dataset" }, "to": { "node": "report", "port": port } });
    for port in ["dat", "zzzz"] {
        let d = draft(
            json!([start(), fetch("fetch"), report("report")]),
            json!([edge("e1", "start", "fetch"), into_report(port)]),
        );
        assert_eq!(check(&d), [Code::GraphInvalidPort], "{port}");
    }
    // Two required inputs, one edge misspelt near or far, and the other fed or not: the
    // edge could have fed either, so neither is reported.
    let setup = Setup { catalog: Some(catalog_with_compare()), ..Setup::default() };
    let compare = json!({ "id": "cmp", "family": "report.compare" });
    let into = |id: &str, port: &str| json!({ "id": id, "from": { "node": "fetch", "port": "dataset" }, "to": { "node": "cmp", "port": port } });
    for port in ["baselin", "zzzz"] {
        for fed in [true, false] {
            let mut edges = vec![edge("e1", "start", "fetch"), into("e2", port)];
            if fed {
                edges.push(into("e3", "current"));
            }
            let d = draft(json!([start(), fetch("fetch"), compare.clone()]), json!(edges));
            assert_eq!(codes(&check_text(&d.to_string(), &setup)), [Code::GraphInvalidPort], "{port}, fed: {fed}");
        }
    }
    // With no faulty edge into it, both unfed inputs are reported.
    let d = draft(json!([start(), fetch("fetch"), compare]), json!([edge("e1", "start", "fetch")]));
    let report = check_text(&d.to_string(), &setup);
    assert_eq!(report.diagnostics.iter().filter(|d| d.code == Code::GraphMissingRequiredInput).count(), 2);
}

#[test]
fn a_node_id_misspelt_near_stands_for_that_node_and_a_far_one_for_none() {
    // `e2` enters `mial`, near `mail`: `mail` counts as entered, so it is not unreachable.
    let mail = json!({ "id": "mail", "family": "notify.email", "config": { "sender": "m", "to": ["a@example.com"] } });
    let into = |to: &str| json!([edge("e1", "start", "fetch"), edge("e2", "fetch", to)]);
    let d = draft(json!([start(), fetch("fetch"), mail.clone()]), into("mial"));
    assert_eq!(check(&d), [Code::GraphDanglingEdge]);
    // `ghost` is near nothing: the edge leads nowhere known, and `mail` is unreachable
    // (an unknown target that could be any node would let one typo hide every
    // unreachable node of the draft).
    let d = draft(json!([start(), fetch("fetch"), mail]), into("ghost"));
    assert_eq!(check(&d), [Code::GraphDanglingEdge, Code::GraphUnreachableNode]);
}
