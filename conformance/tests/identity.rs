//! Identity properties of docs/reference/hashes.md: what moves `authoredGraphHash` and `topologyHash`.

use little_conformance::{Setup, check_text};
use serde_json::{Value, json};

fn base() -> Value {
    json!({
        "format": "workflow-draft/v1",
        "tenantId": "acme",
        "workflowId": "reports.quarterly",
        "draftId": "drf_7Q2",
        "revision": 12,
        "catalogVersion": "2026.11",
        "nodes": [
            { "id": "start", "family": "trigger.schedule", "title": "Every Monday",
              "config": { "cron": "0 6 * * 1", "timezone": "Europe/Berlin" }, "position": { "x": 0, "y": 0 } },
            { "id": "fetch", "family": "dataset.retrieve", "title": "Fetch sales",
              "config": { "connection": "conn_wh", "query": "select * from sales" }, "position": { "x": 120, "y": 40 } },
            { "id": "report", "family": "report.generate", "title": "Write report", "flags": { "zeta": true, "alpha": false },
              "config": { "format": "pdf" }, "position": { "x": 240, "y": 40 } },
            { "id": "note", "family": "annotation", "text": "Runs every Monday", "position": { "x": 0, "y": 200 } }
        ],
        "edges": [
            { "id": "e1", "from": { "node": "start", "port": "out" }, "to": { "node": "fetch", "port": "in" } },
            { "id": "e2", "from": { "node": "fetch", "port": "dataset" }, "to": { "node": "report", "port": "data" } }
        ]
    })
}

/// `(authoredGraphHash, topologyHash)` of a clean draft.
fn hashes(draft: &Value) -> (String, String) {
    let text = serde_json::to_string_pretty(draft).unwrap();
    let report = check_text(&text, &Setup::default());
    let candidate = report.draft_candidate().cloned().unwrap_or_else(|| panic!("not clean: {:?}", report.diagnostics));
    (candidate.authored_graph_hash, candidate.topology_hash)
}

/// Every object's keys in reverse order, recursively.
fn reverse_keys(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(map.iter().rev().map(|(k, v)| (k.clone(), reverse_keys(v))).collect()),
        Value::Array(items) => Value::Array(items.iter().map(reverse_keys).collect()),
        other => other.clone(),
    }
}

fn edit(draft: &Value, change: impl FnOnce(&mut Value)) -> Value {
    let mut copy = draft.clone();
    change(&mut copy);
    copy
}

#[test]
fn permutations_and_whitespace_change_neither_hash() {
    let draft = base();
    let original = hashes(&draft);
    let permuted = edit(&draft, |d| {
        d["nodes"].as_array_mut().unwrap().reverse();
        d["edges"].as_array_mut().unwrap().reverse();
    });
    assert_eq!(hashes(&permuted), original);
    assert_eq!(hashes(&reverse_keys(&draft)), original);
    let minified = serde_json::to_string(&draft).unwrap();
    let report = check_text(&minified, &Setup::default());
    let candidate = report.draft_candidate().cloned().unwrap();
    assert_eq!((candidate.authored_graph_hash, candidate.topology_hash), original);
}

#[test]
fn moving_or_retitling_changes_only_the_authored_hash() {
    let draft = base();
    let (authored, topology) = hashes(&draft);
    for changed in [
        edit(&draft, |d| d["nodes"][1]["position"]["x"] = json!(999)),
        edit(&draft, |d| d["nodes"][1]["title"] = json!("Fetch all sales")),
        edit(&draft, |d| d["nodes"][3]["text"] = json!("Runs on Mondays")),
    ] {
        let (a, t) = hashes(&changed);
        assert_ne!(a, authored);
        assert_eq!(t, topology);
    }
}

#[test]
fn a_config_edit_changes_both_hashes() {
    let draft = base();
    let (authored, topology) = hashes(&draft);
    let (a, t) = hashes(&edit(&draft, |d| d["nodes"][1]["config"]["query"] = json!("select 1")));
    assert_ne!(a, authored);
    assert_ne!(t, topology);
}

#[test]
fn a_new_revision_of_the_same_content_keeps_the_topology_hash() {
    let draft = base();
    let (_, topology) = hashes(&draft);
    let (_, t) = hashes(&edit(&draft, |d| d["revision"] = json!(13)));
    assert_eq!(t, topology);
}

#[test]
fn hashes_are_well_formed_and_the_candidate_id_derives_from_them() {
    let text = serde_json::to_string(&base()).unwrap();
    let candidate = check_text(&text, &Setup::default()).draft_candidate().cloned().unwrap();
    for hash in [&candidate.authored_graph_hash, &candidate.topology_hash] {
        assert!(hash.starts_with("sha256:") && hash.len() == 71, "{hash}");
    }
    assert!(candidate.id.starts_with("cand_") && candidate.id.len() == 21, "{}", candidate.id);
    assert_eq!(candidate.binding_status, "none");
    // Deterministic: the same text, a fresh database, the same candidate.
    assert_eq!(check_text(&text, &Setup::default()).draft_candidate().cloned().unwrap(), candidate);
}

#[test]
fn streamed_hashes_equal_the_hash_of_the_whole_canonical_document() {
    let draft = base();
    let text = serde_json::to_string_pretty(&draft).unwrap();
    let report = check_text(&text, &Setup::default());
    let candidate = report.draft_candidate().cloned().unwrap();
    // topologyHash: the canonical text of the hashed view of the topology, in one piece.
    let topology = little_conformance::compile_text(&text, &Setup::default()).unwrap();
    let whole = little_passes::project::topology_json(&topology, little_passes::project::View::Hashed);
    assert_eq!(little_hashing::hash_canonical(&whole).unwrap(), candidate.topology_hash);
    // authoredGraphHash: the workflow id and the authored arrays sorted by id.
    let sorted = |key: &str| {
        let mut items = draft[key].as_array().unwrap().clone();
        items.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
        Value::Array(items)
    };
    let subject = json!({ "workflowId": draft["workflowId"], "nodes": sorted("nodes"), "edges": sorted("edges") });
    assert_eq!(little_hashing::hash_canonical(&subject).unwrap(), candidate.authored_graph_hash);
}
