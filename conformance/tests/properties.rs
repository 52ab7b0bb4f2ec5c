//! Properties of `little check` over generated drafts (conformance/src/strategies.rs):
//! validity of generated drafts, determinism, the identities of docs/reference/hashes.md, the cycle witness
//! of docs/reference/diagnostics.md#the-cycle-witness against a brute-force oracle, robustness, and "a candidate iff nothing
//! blocks". Nothing here shares code with the passes.
//!
//! 48 cases per property by default (CI); `PROPTEST_CASES=1000` to soak.

use std::collections::BTreeSet;

use little_conformance::strategies::{self, CycleCase, ValidDraft};
use little_conformance::{Setup, check_text, codes};
use little_diagnostics::Code;
use little_passes::FileReport;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::FileFailurePersistence;
use serde_json::{Value, json};

fn config() -> ProptestConfig {
    let mut config = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = 48;
    }
    config.failure_persistence =
        Some(Box::new(FileFailurePersistence::Direct("tests/regressions/properties.proptest-regressions")));
    config
}

fn setup(valid: &ValidDraft) -> Setup {
    valid.setup()
}

fn check(valid: &ValidDraft) -> FileReport {
    check_text(&valid.text(), &setup(valid))
}

/// `(authoredGraphHash, topologyHash)` of a draft that must be clean.
fn hashes(draft: &Value, setup: &Setup) -> (String, String) {
    let report = check_text(&serde_json::to_string_pretty(draft).unwrap(), setup);
    let candidate = report.draft_candidate().cloned().unwrap_or_else(|| panic!("not clean: {:#?}", report.diagnostics));
    (candidate.authored_graph_hash, candidate.topology_hash)
}

/// The report as the JSON this suite compares byte for byte.
fn projection(report: &FileReport) -> Value {
    let diagnostics: Vec<Value> = report
        .diagnostics
        .iter()
        .map(|d| {
            json!({
                "code": d.code.as_str(), "severity": d.severity().as_str(), "blocking": d.blocking(),
                "message": d.message, "nodeId": d.node_id, "edgeId": d.edge_id, "path": d.path,
                "span": d.span.as_ref().map(|s| [s.start, s.end]), "help": d.help,
                "related": d.related.iter().map(|r| json!({
                    "message": r.message, "path": r.path, "span": r.span.as_ref().map(|s| [s.start, s.end])
                })).collect::<Vec<_>>(),
                "witness": d.witness.as_ref().map(|w| json!({ "nodes": w.nodes, "edges": w.edges })),
            })
        })
        .collect();
    let candidate = report.draft_candidate().map(|c| {
        json!({
            "id": c.id, "workflowId": c.workflow_id, "draftId": c.draft_id, "revision": c.revision,
            "catalogVersion": c.catalog_version, "authoredGraphHash": c.authored_graph_hash,
            "topologyHash": c.topology_hash, "bindingStatus": c.binding_status,
        })
    });
    json!({ "diagnostics": diagnostics, "candidate": candidate })
}

/// Every object's keys in reverse order, recursively.
fn reverse_keys(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(map.iter().rev().map(|(k, v)| (k.clone(), reverse_keys(v))).collect()),
        Value::Array(items) => Value::Array(items.iter().map(reverse_keys).collect()),
        other => other.clone(),
    }
}

/// Every diagnostic points somewhere: a JSONPath and a span. (Text that is not JSON has
/// no element to name: `parse.invalid_json` has a span only.)
fn assert_located(report: &FileReport, text: &str) -> Result<(), TestCaseError> {
    for d in &report.diagnostics {
        let has_path = d.path.is_some() || d.code == Code::ParseInvalidJson;
        prop_assert!(has_path, "{} has no path: {d:#?}\nin {text}", d.code.as_str());
        let span = d.span.clone();
        prop_assert!(span.is_some(), "{} has no span: {d:#?}\nin {text}", d.code.as_str());
        let span = span.unwrap();
        prop_assert!(span.start <= span.end && span.end as usize <= text.len(), "{d:#?} outside the text");
    }
    Ok(())
}

/// The brute-force witnesses of docs/reference/diagnostics.md#the-cycle-witness, ordered by start node id.
fn oracle(case: &CycleCase) -> Vec<(Vec<String>, Vec<String>)> {
    let n = case.nodes.len();
    let mut reach = vec![vec![false; n]; n];
    for (_, from, to) in &case.edges {
        reach[*from][*to] = true;
    }
    for k in 0..n {
        for i in 0..n {
            for j in 0..n {
                if reach[i][k] && reach[k][j] {
                    reach[i][j] = true;
                }
            }
        }
    }
    // The strongly connected component of `i`: itself and every node it reaches that reaches it.
    let components: BTreeSet<BTreeSet<usize>> = (0..n)
        .map(|i| (0..n).filter(|&j| j == i || (reach[i][j] && reach[j][i])).collect::<BTreeSet<usize>>())
        .filter(|component| component.len() >= 2)
        .collect();
    let mut witnesses: Vec<(Vec<String>, Vec<String>)> = components
        .into_iter()
        .map(|component| {
            let start = *component.iter().min_by_key(|&&i| &case.nodes[i]).unwrap();
            let mut cycles: Vec<(Vec<usize>, Vec<String>)> = Vec::new();
            // Every simple cycle through `start`: depth-first over the edges.
            let mut stack: Vec<(Vec<usize>, Vec<String>)> = vec![(vec![start], Vec::new())];
            while let Some((path, edge_ids)) = stack.pop() {
                let last = *path.last().unwrap();
                for (id, from, to) in &case.edges {
                    if *from != last {
                        continue;
                    }
                    let mut ids = edge_ids.clone();
                    ids.push(id.clone());
                    if *to == start {
                        cycles.push((path.clone(), ids));
                    } else if !path.contains(to) {
                        let mut p = path.clone();
                        p.push(*to);
                        stack.push((p, ids));
                    }
                }
            }
            let (nodes, edges) =
                cycles.into_iter().min_by(|a, b| a.1.len().cmp(&b.1.len()).then(a.1.cmp(&b.1))).unwrap();
            (nodes.iter().map(|&i| case.nodes[i].clone()).collect(), edges)
        })
        .collect();
    witnesses.sort_by(|a, b| a.0[0].cmp(&b.0[0]));
    witnesses
}

/// The shrunk case of tests/regressions/cycle_order_by_span.md: both witnesses are the
/// oracle's; the report lists them by span (`n10` at `$.edges[1]` before `b` at
/// `$.edges[3]`), not by start node as docs/reference/diagnostics.md#the-cycle-witness words it.
#[test]
fn regression_cycle_order_by_span() {
    let case = CycleCase {
        nodes: ["b", "n10", "z", "y"].map(String::from).to_vec(),
        edges: [("e1", 1, 3), ("e2", 2, 0), ("e3", 0, 2), ("e4", 3, 1)]
            .map(|(id, from, to)| (id.to_string(), from, to))
            .to_vec(),
    };
    let stored: Value = serde_json::from_str(include_str!("regressions/cycle_order_by_span.json")).unwrap();
    assert_eq!(case.draft(), stored);
    let report = check_text(include_str!("regressions/cycle_order_by_span.json"), &Setup::default());
    let found: Vec<(Vec<String>, Vec<String>)> = report
        .diagnostics
        .iter()
        .filter_map(|d| d.witness.as_ref().map(|w| (w.nodes.clone(), w.edges.clone())))
        .collect();
    let mut expected = oracle(&case);
    assert_eq!(expected[0], (vec!["b".to_string(), "z".to_string()], vec!["e3".to_string(), "e2".to_string()]));
    expected.reverse();
    assert_eq!(found, expected);
}

/// A valid draft with its `nodes` and `edges` shuffled.
fn shuffled() -> impl Strategy<Value = (ValidDraft, Value)> {
    strategies::valid_draft().prop_flat_map(|valid| {
        let nodes = valid.draft["nodes"].as_array().unwrap().clone();
        let edges = valid.draft["edges"].as_array().unwrap().clone();
        (Just(valid), Just(nodes).prop_shuffle(), Just(edges).prop_shuffle()).prop_map(|(valid, nodes, edges)| {
            let mut draft = valid.draft.clone();
            draft["nodes"] = Value::Array(nodes);
            draft["edges"] = Value::Array(edges);
            (valid, draft)
        })
    })
}

/// Draft-like bytes: a valid draft's text with a few bytes replaced, inserted or removed.
fn spliced_bytes() -> impl Strategy<Value = Vec<u8>> {
    (strategies::valid_draft(), proptest::collection::vec((any::<Index>(), 0u8..3, any::<u8>()), 1..6)).prop_map(
        |(valid, edits)| {
            let mut bytes = serde_json::to_vec(&valid.draft).unwrap();
            for (at, op, byte) in edits {
                let i = at.index(bytes.len());
                match op {
                    0 => bytes[i] = byte,
                    1 => bytes.insert(i, byte),
                    _ => {
                        bytes.remove(i);
                    }
                }
            }
            bytes
        },
    )
}

/// Arbitrary values as a whole draft, or inside a draft's envelope.
fn arbitrary_draft() -> impl Strategy<Value = Value> {
    prop_oneof![
        strategies::json_value(),
        (strategies::json_value(), strategies::json_value())
            .prop_map(|(nodes, edges)| strategies::envelope(vec![nodes], vec![edges])),
        strategies::json_value().prop_map(|v| {
            let mut draft = strategies::envelope(Vec::new(), Vec::new());
            draft["nodes"] = v.clone();
            draft["edges"] = v;
            draft
        }),
    ]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn generated_drafts_are_clean_and_get_a_candidate(valid in strategies::valid_draft()) {
        let report = check(&valid);
        prop_assert!(codes(&report).is_empty(), "{:#?}\nin {}", report.diagnostics, valid.text());
        prop_assert!(report.candidate.is_some());
        // No context: the one info diagnostic says so; with one: nothing at all.
        let infos: Vec<&str> = report.diagnostics.iter().map(|d| d.code.as_str()).collect();
        if valid.context.is_some() {
            prop_assert!(infos.is_empty(), "{infos:?}");
        } else {
            prop_assert_eq!(infos, ["request.context_unavailable"]);
        }
    }

    #[test]
    fn checking_twice_gives_the_same_report(valid in strategies::valid_draft()) {
        let (first, second) = (check(&valid), check(&valid));
        prop_assert_eq!(&first.diagnostics, &second.diagnostics);
        prop_assert_eq!(&first.candidate, &second.candidate);
        let bytes = |r: &FileReport| serde_json::to_vec(&projection(r)).unwrap();
        prop_assert_eq!(bytes(&first), bytes(&second));
    }

    #[test]
    fn checking_a_mutated_draft_twice_gives_the_same_bytes(valid in strategies::mutated_draft()) {
        let bytes = |r: &FileReport| serde_json::to_vec(&projection(r)).unwrap();
        prop_assert_eq!(bytes(&check(&valid)), bytes(&check(&valid)));
    }

    #[test]
    fn order_of_arrays_and_keys_changes_neither_hash((valid, permuted) in shuffled()) {
        let setup = setup(&valid);
        let original = hashes(&valid.draft, &setup);
        prop_assert_eq!(&hashes(&permuted, &setup), &original);
        prop_assert_eq!(&hashes(&reverse_keys(&permuted), &setup), &original);
    }

    #[test]
    fn a_position_moves_only_the_authored_hash(valid in strategies::valid_draft(), at in any::<Index>()) {
        let setup = setup(&valid);
        let (authored, topology) = hashes(&valid.draft, &setup);
        let mut moved = valid.draft.clone();
        let nodes = moved["nodes"].as_array_mut().unwrap();
        let i = at.index(nodes.len());
        let x = nodes[i]["position"]["x"].as_i64().map_or(7, |x| x + 1);
        nodes[i]["position"] = json!({ "x": x, "y": 3 });
        let (a, t) = hashes(&moved, &setup);
        prop_assert_ne!(a, authored);
        prop_assert_eq!(t, topology);
    }

    #[test]
    fn a_config_value_moves_both_hashes(valid in strategies::valid_draft(), at in any::<Index>()) {
        let setup = setup(&valid);
        let (authored, topology) = hashes(&valid.draft, &setup);
        let mut edited = valid.draft.clone();
        let nodes = edited["nodes"].as_array_mut().unwrap();
        let fetches: Vec<usize> = (0..nodes.len()).filter(|&i| nodes[i]["family"] == "dataset.retrieve").collect();
        let i = fetches[at.index(fetches.len())];
        let query = nodes[i]["config"]["query"].as_str().map_or("select 1".to_string(), |q| format!("{q} limit 9"));
        nodes[i]["config"]["query"] = json!(query);
        let (a, t) = hashes(&edited, &setup);
        prop_assert_ne!(a, authored);
        prop_assert_ne!(t, topology);
    }

    #[test]
    fn cycle_witnesses_match_the_brute_force_oracle(case in strategies::cycle_graph()) {
        let text = serde_json::to_string_pretty(&case.draft()).unwrap();
        let report = check_text(&text, &Setup::default());
        let others: Vec<&str> = report
            .diagnostics
            .iter()
            .map(|d| d.code)
            .filter(|c| ![Code::GraphCycle, Code::GraphUnreachableNode].contains(c))
            .map(Code::as_str)
            .filter(|c| *c != "request.context_unavailable")
            .collect();
        prop_assert!(others.is_empty(), "{others:?}\nin {text}");
        let found: Vec<(Vec<String>, Vec<String>)> = report
            .diagnostics
            .iter()
            .filter(|d| d.code == Code::GraphCycle)
            .map(|d| {
                let w = d.witness.as_ref().expect("a cycle has a witness");
                (w.nodes.clone(), w.edges.clone())
            })
            .collect();
        let expected = oracle(&case);
        prop_assert_eq!(found.len(), expected.len(), "one graph.cycle per non-trivial SCC\nin {}", text);
        let mut by_start = found.clone();
        by_start.sort_by(|a, b| a.0[0].cmp(&b.0[0]));
        prop_assert_eq!(&by_start, &expected, "witnesses\nin {}", text);
        // docs/reference/diagnostics.md#the-cycle-witness orders cycle findings by start node, but the report is in docs/reference/diagnostics.md order
        // (span, code, message): see tests/regressions/cycle_order_by_span.md.
        let starts: Vec<u32> =
            report.diagnostics.iter().filter(|d| d.code == Code::GraphCycle).map(|d| d.span.clone().unwrap().start).collect();
        prop_assert!(starts.is_sorted(), "graph.cycle diagnostics are not in span order\nin {}", text);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop_oneof![proptest::collection::vec(any::<u8>(), 0..2048), spliced_bytes()]) {
        match little_frontend::json::decode_utf8(&bytes) {
            Ok(text) => assert_located(&check_text(text, &Setup::default()), text)?,
            Err(diagnostic) => prop_assert!(diagnostic.span.is_some(), "{diagnostic:#?}"),
        }
    }

    #[test]
    fn arbitrary_values_never_panic(draft in arbitrary_draft()) {
        let text = serde_json::to_string_pretty(&draft).unwrap();
        assert_located(&check_text(&text, &Setup::default()), &text)?;
    }

    #[test]
    fn mutated_drafts_never_panic_and_get_a_candidate_iff_nothing_blocks(valid in strategies::mutated_draft()) {
        let text = valid.text();
        let report = check(&valid);
        assert_located(&report, &text)?;
        let blocking: Vec<&str> =
            report.diagnostics.iter().filter(|d| d.blocking()).map(|d| d.code.as_str()).collect();
        prop_assert_eq!(report.candidate.is_some(), blocking.is_empty(), "blocking: {:?}\nin {}", blocking, text);
    }
}
