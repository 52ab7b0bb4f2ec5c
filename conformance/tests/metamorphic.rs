//! No interaction (docs/reference/diagnostics.md#one-fault-one-diagnostic, docs/decisions.md "unknowns"): two faults in parts of a
//! draft that share no node are reported as exactly the union of their single reports.
//!
//! Two generated valid drafts A and B become one draft, A ∪ B, with every id of B renamed
//! (`b_` + id: nodes, edges and their endpoints, agents and their binding rows, artifacts
//! and the evidence and mappings that name them). That draft checks clean. One mutation
//! (`src/mutations.rs`) is applied to A and another to B, each on its own draft; then the
//! report of A' ∪ B' must hold exactly the diagnostics of A' ∪ B and of A ∪ B' — compared
//! by code, severity, node, edge, message and help (not by span or path, which move when
//! the other part changes).
//!
//! Only mutations local to the nodes and edges they touch take part (`Mutation::whole` is
//! `None`): a fault of the text, of the draft's own fields, or of a document every part
//! shares (the tenant's capabilities, all binding rows) is not a fault of one part. The
//! shared documents are the same in all four drafts: the full context when any part is
//! checked with one, the union of the binding rows, and the catalog with `report.compare`
//! when either mutation needs it.
//!
//! `every_pair_of_local_mutations_is_reported_as_its_union` proves every pair of local
//! mutations on small drafts of a fixed series on every run; the proptest property
//! explores random drafts and mutations (64 cases by default; `PROPTEST_CASES=100000` to
//! soak).

use std::collections::{BTreeSet, HashMap};

use little_conformance::mutations::{self, Mutated, Mutation, Target};
use little_conformance::strategies::{self, ValidDraft, full_context};
use little_conformance::{Setup, check_text};
use little_diagnostics::{Diagnostic, Severity};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use serde_json::{Value, json};

/// The prefix of B's ids.
const PREFIX: &str = "b_";

/// One part of the combined draft: a draft, mutated or not, and its documents.
#[derive(Clone, Debug)]
struct Part {
    draft: Value,
    context: Option<Value>,
    bindings: Option<Value>,
    catalog: Option<Value>,
}

impl Part {
    fn valid(valid: &ValidDraft) -> Part {
        Part {
            draft: valid.draft.clone(),
            context: valid.context.clone(),
            bindings: valid.bindings.clone(),
            catalog: None,
        }
    }

    fn mutated(mutated: &Mutated) -> Part {
        assert!(mutated.text.is_none(), "a local mutation works on the value, not the text");
        Part {
            draft: mutated.draft.clone(),
            context: mutated.context.clone(),
            bindings: mutated.bindings.clone(),
            catalog: mutated.catalog.clone(),
        }
    }

    fn nodes(&self) -> &[Value] {
        self.draft["nodes"].as_array().map_or(&[], Vec::as_slice)
    }

    fn edges(&self) -> &[Value] {
        self.draft["edges"].as_array().map_or(&[], Vec::as_slice)
    }

    fn rows(&self) -> &[Value] {
        self.bindings.as_ref().and_then(|b| b["rows"].as_array()).map_or(&[], Vec::as_slice)
    }

    /// The part with every id of it prefixed: nodes, edges and the nodes they join,
    /// agents and their rows, artifacts and what names them (gate evidence, mappings).
    fn prefixed(&self) -> Part {
        let mut part = self.clone();
        if let Some(nodes) = part.draft["nodes"].as_array_mut() {
            for node in nodes {
                prefix_at(node, &["id"]);
                prefix_at(node, &["agent", "agentId"]);
                if let Some(artifacts) = node.pointer_mut("/contracts/artifacts").and_then(Value::as_array_mut) {
                    artifacts.iter_mut().for_each(|a| prefix_at(a, &["id"]));
                }
                match node.pointer_mut("/config/evidence") {
                    Some(Value::Array(evidence)) => evidence.iter_mut().for_each(prefix),
                    Some(evidence) => prefix(evidence),
                    None => {}
                }
            }
        }
        if let Some(edges) = part.draft["edges"].as_array_mut() {
            for edge in edges {
                prefix_at(edge, &["id"]);
                prefix_at(edge, &["from", "node"]);
                prefix_at(edge, &["to", "node"]);
                if let Some(artifacts) = edge.pointer_mut("/mapping/artifacts").and_then(Value::as_array_mut) {
                    artifacts.iter_mut().for_each(prefix);
                }
            }
        }
        if let Some(rows) = part.bindings.as_mut().and_then(|b| b["rows"].as_array_mut()) {
            rows.iter_mut().for_each(|row| prefix_at(row, &["agentId"]));
        }
        part
    }
}

/// Prefixes a string (anything else is left as it is: a fault may have made it a number).
fn prefix(value: &mut Value) {
    if let Value::String(s) = value {
        *s = format!("{PREFIX}{s}");
    }
}

fn prefix_at(value: &mut Value, path: &[&str]) {
    let mut at = value;
    for key in path {
        match at.get_mut(*key) {
            Some(next) => at = next,
            None => return,
        }
    }
    prefix(at);
}

fn prefixed_target(target: &Target) -> Target {
    match target {
        Target::Draft => Target::Draft,
        Target::Node(id) => Target::Node(format!("{PREFIX}{id}")),
        Target::Edge(id) => Target::Edge(format!("{PREFIX}{id}")),
    }
}

/// The documents all four combined drafts are checked with.
struct Shared {
    context: Option<Value>,
    catalog: Option<Value>,
}

impl Shared {
    /// The full context when any part has one, the catalog with `report.compare` when any
    /// part needs it. A local mutation never changes a context in any other way.
    fn of(parts: &[&Part]) -> Result<Shared, String> {
        let context = parts.iter().find_map(|p| p.context.clone());
        if let Some(other) = parts.iter().filter_map(|p| p.context.as_ref()).find(|c| **c != full_context()) {
            return Err(format!("a local mutation changed the context: {other}"));
        }
        let catalog = parts.iter().find_map(|p| p.catalog.clone());
        if parts.iter().filter_map(|p| p.catalog.as_ref()).any(|c| Some(c) != catalog.as_ref()) {
            return Err("the parts need different catalogs".to_string());
        }
        Ok(Shared { context, catalog })
    }
}

/// A's fields, its nodes then B's, its edges then B's, and both parts' binding rows.
fn combine(a: &Part, b: &Part, shared: &Shared) -> (String, Setup) {
    let mut draft = a.draft.clone();
    draft["nodes"] = Value::Array(a.nodes().iter().chain(b.nodes()).cloned().collect());
    draft["edges"] = Value::Array(a.edges().iter().chain(b.edges()).cloned().collect());
    let bindings = (a.bindings.is_some() || b.bindings.is_some()).then(|| {
        let rows: Vec<Value> = a.rows().iter().chain(b.rows()).cloned().collect();
        json!({ "format": "agent-bindings/v1", "rows": rows })
    });
    let setup = Setup {
        catalog: shared.catalog.as_ref().map(Value::to_string),
        context: shared.context.as_ref().map(Value::to_string),
        bindings: bindings.as_ref().map(Value::to_string),
        snapshot: None,
    };
    (serde_json::to_string_pretty(&draft).expect("serializes"), setup)
}

/// A diagnostic as the property compares it: what it says and what it names, not where
/// in the text (spans and paths move when the other part changes).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Said {
    code: &'static str,
    severity: String,
    node: Option<String>,
    edge: Option<String>,
    message: String,
    help: Option<String>,
}

impl From<&Diagnostic> for Said {
    fn from(d: &Diagnostic) -> Said {
        Said {
            code: d.code.as_str(),
            severity: format!("{:?}", d.severity()),
            node: d.node_id.clone(),
            edge: d.edge_id.clone(),
            message: d.message.clone(),
            help: d.help.clone(),
        }
    }
}

impl std::fmt::Display for Said {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}) node {:?} edge {:?}: {}", self.code, self.severity, self.node, self.edge, self.message)?;
        if let Some(help) = &self.help {
            write!(f, " [help: {help}]")?;
        }
        Ok(())
    }
}

fn said(draft: &(String, Setup)) -> BTreeSet<Said> {
    check_text(&draft.0, &draft.1).diagnostics.iter().map(Said::from).collect()
}

/// Reports already made, by draft and documents (a pair of mutations shares its single
/// reports with the other pairs of either mutation).
#[derive(Default)]
struct Reports(HashMap<String, BTreeSet<Said>>);

impl Reports {
    fn said(&mut self, draft: &(String, Setup)) -> BTreeSet<Said> {
        let (text, setup) = draft;
        let key = format!("{text}\0{:?}\0{:?}\0{:?}", setup.catalog, setup.context, setup.bindings);
        self.0.entry(key).or_insert_with(|| said(draft)).clone()
    }
}

fn list(items: impl IntoIterator<Item = impl std::fmt::Display>) -> String {
    let lines: Vec<String> = items.into_iter().map(|s| format!("  {s}")).collect();
    if lines.is_empty() { "  (none)".to_string() } else { lines.join("\n") }
}

/// A mutation and what it made of a draft.
type Applied = (&'static Mutation, Mutated);

/// The mutations that stay in the part they touch.
fn local() -> Vec<&'static Mutation> {
    mutations::all().iter().filter(|m| m.whole.is_none()).collect()
}

/// A local mutation that applies to `valid` with `seed`, applied: the first in an order
/// shuffled by `order`, so each of those that apply is as likely (one that needs a router
/// or a mapped edge applies to fewer drafts).
fn any_applicable(valid: &ValidDraft, order: u64, seed: u64) -> Option<Applied> {
    let mut local = local();
    let mut state = order | 1;
    for i in (1..local.len()).rev() {
        // xorshift64: a Fisher–Yates shuffle that replays from `order`.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        local.swap(i, (state % (i as u64 + 1)) as usize);
    }
    local.into_iter().find_map(|m| Some((m, m.mutate(valid, seed)?)))
}

/// Checks the property for `m1` applied to A and `m2` to B; `Err` says how it fails.
fn union_holds(
    a: &ValidDraft,
    (m1, a_mutated): &Applied,
    b: &ValidDraft,
    (m2, b_mutated): &Applied,
    reports: &mut Reports,
) -> Result<(), String> {
    let (a0, a1) = (Part::valid(a), Part::mutated(a_mutated));
    let (b0, b1) = (Part::valid(b).prefixed(), Part::mutated(b_mutated).prefixed());
    let shared = Shared::of(&[&a0, &a1, &b0, &b1])?;
    let base = combine(&a0, &b0, &shared);
    let loud: Vec<Said> =
        reports.said(&base).into_iter().filter(|s| s.severity != format!("{:?}", Severity::Info)).collect();
    if !loud.is_empty() {
        return Err(format!("A ∪ B does not check clean:\n{}\ndraft:\n{}", list(&loud), base.0));
    }
    let only_a = reports.said(&combine(&a1, &b0, &shared));
    let only_b = reports.said(&combine(&a0, &b1, &shared));
    let both_draft = combine(&a1, &b1, &shared);
    let both = said(&both_draft);
    let union: BTreeSet<Said> = only_a.union(&only_b).cloned().collect();
    if both == union {
        return Ok(());
    }
    let describe = |m: &Mutation, target: &Target| {
        format!(
            "`{}` ({}), on {target:?}{}",
            m.code.as_str(),
            m.does,
            m.rule
                .map(|r| format!(", docs/reference/diagnostics.md#one-fault-one-diagnostic: {}", r.line()))
                .unwrap_or_default()
        )
    };
    Err(format!(
        "two faults in parts that share no node interact.\n\
         m1 on A: {}\nm2 on B: {}\n\
         reported for A' ∪ B' but by neither single fault:\n{}\n\
         reported for a single fault but not for A' ∪ B':\n{}\n\
         A' ∪ B (m1 alone):\n{}\nA ∪ B' (m2 alone):\n{}\n\
         A' ∪ B' draft:\n{}\ncontext: {:?}\nbindings: {:?}{}",
        describe(m1, &a_mutated.target),
        describe(m2, &prefixed_target(&b_mutated.target)),
        list(both.difference(&union)),
        list(union.difference(&both)),
        list(&only_a),
        list(&only_b),
        both_draft.0,
        both_draft.1.context,
        both_draft.1.bindings,
        if shared.catalog.is_some() { "\ncatalog: the default one and `report.compare`" } else { "" }
    ))
}

fn config() -> ProptestConfig {
    let mut config = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = 64;
    }
    config.failure_persistence =
        Some(Box::new(FileFailurePersistence::Direct("tests/regressions/metamorphic.proptest-regressions")));
    config
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn faults_in_parts_that_share_no_node_are_reported_as_their_union(
        a in strategies::valid_draft(),
        b in strategies::valid_draft(),
        orders in any::<(u64, u64)>(),
        seeds in any::<(u64, u64)>(),
    ) {
        if let (Some(m1), Some(m2)) = (any_applicable(&a, orders.0, seeds.0), any_applicable(&b, orders.1, seeds.1))
            && let Err(message) = union_holds(&a, &m1, &b, &m2, &mut Reports::default())
        {
            prop_assert!(false, "{}", message);
        }
    }
}

/// Renaming B keeps it clean on its own, and the combination of two valid drafts is clean
/// (the property's starting point, on a fixed series).
#[test]
fn a_prefixed_draft_and_a_union_of_two_check_clean() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = strategies::valid_draft();
    let mut drafts = || strategy.new_tree(&mut runner).expect("generates").current();
    for _ in 0..10 {
        let (a, b) = (drafts(), drafts());
        let (a, b) = (Part::valid(&a), Part::valid(&b).prefixed());
        let shared = Shared::of(&[&a, &b]).expect("valid drafts have the full context or none");
        let empty = Part { draft: json!({ "nodes": [], "edges": [] }), context: None, bindings: None, catalog: None };
        let alone = combine(&b, &empty, &shared);
        for (what, draft) in [("B prefixed", alone), ("A ∪ B", combine(&a, &b, &shared))] {
            let loud: Vec<Said> =
                said(&draft).into_iter().filter(|s| s.severity != format!("{:?}", Severity::Info)).collect();
            assert!(loud.is_empty(), "{what} does not check clean:\n{}\n{}", list(&loud), draft.0);
        }
    }
}

/// Every pair of local mutations, each on the smallest drafts of a fixed series it applies
/// to (the first for A, the second for B), so that every pair is proven on every run,
/// whatever the random cases meet.
#[test]
fn every_pair_of_local_mutations_is_reported_as_its_union() {
    use proptest::strategy::ValueTree;
    const SEED: u64 = 0x9E37_79B9;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = strategies::valid_draft();
    // The smallest drafts first: a pair is checked four times.
    let mut series: Vec<ValidDraft> =
        (0..200).map(|_| strategy.new_tree(&mut runner).expect("generates").current()).collect();
    series.sort_by_key(|v| v.draft["nodes"].as_array().map_or(0, Vec::len));
    // For each mutation, the first draft it applies to on A's side and the next on B's.
    let placed: Vec<(usize, Applied, usize, Applied)> = local()
        .into_iter()
        .map(|m| {
            let mut on = series.iter().enumerate().filter_map(|(i, v)| Some((i, (m, m.mutate(v, SEED + i as u64)?))));
            let (i, a) = on.next().unwrap_or_else(|| panic!("`{}` applies to no draft of the series", m.does));
            let (j, b) = on.next().unwrap_or_else(|| panic!("`{}` applies to one draft of the series", m.does));
            (i, a, j, b)
        })
        .collect();
    let mut failures = Vec::new();
    let mut reports = Reports::default();
    for (i, m1, _, _) in &placed {
        for (_, _, j, m2) in &placed {
            if let Err(message) = union_holds(&series[*i], m1, &series[*j], m2, &mut reports) {
                failures.push((format!("  {} / {}", m1.0.does, m2.0.does), message));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} pairs interact (m1 on A / m2 on B):\n{}\n\nthe first:\n{}",
        failures.len(),
        placed.len() * placed.len(),
        failures.iter().map(|(pair, _)| pair.as_str()).collect::<Vec<_>>().join("\n"),
        failures[0].1
    );
}
