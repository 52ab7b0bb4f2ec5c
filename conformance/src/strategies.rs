//! proptest strategies for drafts, written from docs/reference/ and the default catalog alone:
//! nothing here calls into the passes, so a property that uses them tests the passes
//! against an independent reading of the contract.
//!
//! - [`valid_draft`]: random acyclic drafts (3–40 nodes) over the default catalog that
//!   check with no error and no warning, with or without a context: triggers (manual and
//!   schedule), retrievals (some with package bindings), reports (some with contracts
//!   declaring an artifact), notifications, routers with branches, approval gates with an
//!   upstream artifact as evidence (some fed by a mapped edge), agents with binding rows
//!   that accept them, and retries back to an ancestor.
//! - [`cycle_graph`]: small graphs of `dataset.retrieve` nodes behind one trigger, with
//!   arbitrary forward edges (cycles welcome), for the witness oracle.
//! - [`json_value`]: arbitrary JSON values (depth ≤ 6), biased towards draft-like atoms.
//! - [`mutated_draft`]: a valid draft with one value replaced by an arbitrary one.

use std::collections::BTreeSet;

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{Map, Value, json};

/// The tenant of every generated draft.
pub const TENANT: &str = "acme";

/// A draft and the context and binding rows (if any) it is meant to be checked with.
#[derive(Clone, Debug)]
pub struct ValidDraft {
    pub draft: Value,
    pub context: Option<Value>,
    /// Rows accepting every agent of the draft; `None` when it has no agent.
    pub bindings: Option<Value>,
}

impl ValidDraft {
    /// The documents to check the draft with.
    pub fn setup(&self) -> crate::Setup {
        crate::Setup {
            context: self.context_text(),
            bindings: self.bindings.as_ref().map(|b| serde_json::to_string(b).expect("a Value serializes")),
            ..crate::Setup::default()
        }
    }

    /// The draft as pretty JSON text.
    pub fn text(&self) -> String {
        serde_json::to_string_pretty(&self.draft).expect("a Value serializes")
    }

    /// The context as text, for `Setup::context`.
    pub fn context_text(&self) -> Option<String> {
        self.context.as_ref().map(|c| serde_json::to_string(c).expect("a Value serializes"))
    }
}

/// The package that generated retrievals may bind, as the context's registry lists it.
pub const PACKAGE: (&str, &str, &str) =
    ("warehouse-client", "1.4.2", "sha256:ebb70271305d72660e86f3be560045be4aa242a5c65619def7cf21173c2d08d2");

/// The shortest gap between two firings that [`full_context`] allows, in minutes.
pub const MIN_INTERVAL_MINUTES: u32 = 15;

/// A context that grants everything the generated drafts need.
pub fn full_context() -> Value {
    json!({
        "format": "workflow-context/v1", "tenantId": TENANT,
        "capabilities": ["agents", "data.warehouse", "notifications.chat", "notifications.email"],
        "integrations": [
            { "id": "conn_wh", "kind": "warehouse" },
            { "id": "chat_main", "kind": "chat" },
            { "id": "mail_out", "kind": "email" }
        ],
        "packages": [ { "name": PACKAGE.0, "version": PACKAGE.1, "digest": PACKAGE.2 } ],
        "schedulePolicy": { "minIntervalMinutes": MIN_INTERVAL_MINUTES }
    })
}

/// Binding rows with one accepted row per `(agentId, revision)`.
pub fn accepting_rows(agents: &[(String, u64)]) -> Value {
    let rows: Vec<Value> = agents
        .iter()
        .map(|(id, revision)| json!({ "agentId": id, "revision": revision, "status": "accepted" }))
        .collect();
    json!({ "format": "agent-bindings/v1", "rows": rows })
}

/// The contracts of a generated report: its `report` output, declared as artifact `artifact`.
pub fn report_contracts(artifact: &str) -> Value {
    json!({
        "version": "workflow-node-contracts/v1",
        "inputs": [],
        "outputs": [ { "port": "report", "types": ["document"] } ],
        "artifacts": [ { "id": artifact, "port": "report", "types": ["document"] } ]
    })
}

/// The envelope of a draft around `nodes` and `edges`.
pub fn envelope(nodes: Vec<Value>, edges: Vec<Value>) -> Value {
    json!({
        "format": "workflow-draft/v1", "tenantId": TENANT, "workflowId": "wf.generated", "draftId": "drf_gen",
        "revision": 1, "catalogVersion": "2026.11", "nodes": nodes, "edges": edges
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Trigger,
    Dataset,
    Report,
    Chat,
    Email,
    Router,
    Gate,
    Agent,
}

impl Kind {
    fn output(self) -> &'static str {
        match self {
            Kind::Dataset => "dataset",
            Kind::Report => "report",
            _ => "out",
        }
    }

    /// The input port, and whether it takes several edges.
    fn input(self) -> Option<(&'static str, bool)> {
        match self {
            Kind::Trigger => None,
            Kind::Report => Some(("data", false)),
            Kind::Router => Some(("in", false)),
            Kind::Dataset | Kind::Chat | Kind::Email | Kind::Gate | Kind::Agent => Some(("in", true)),
        }
    }

    fn prefix(self) -> &'static str {
        match self {
            Kind::Trigger => "start",
            Kind::Dataset => "fetch",
            Kind::Report => "report",
            Kind::Chat => "chat",
            Kind::Email => "mail",
            Kind::Router => "route",
            Kind::Gate => "gate",
            Kind::Agent => "agent",
        }
    }
}

/// The random choices of one work node; [`build`] turns them into a valid node.
#[derive(Clone, Debug)]
struct WorkChoice {
    kind: u8,
    parent: Index,
    extra: Option<Index>,
    labels: usize,
    branch_targets: Vec<Index>,
    retry: Option<(Index, u32, u64)>,
    title: Option<String>,
    position: Option<(i32, i32)>,
    query: Option<String>,
    /// Reports: declare contracts (an artifact). Retrievals: bind the package.
    /// Gates: feed it by a mapped edge.
    flag: bool,
    /// Agents: the binding's revision.
    revision: u64,
}

fn work_choice() -> impl Strategy<Value = WorkChoice> {
    (
        0u8..100,
        any::<Index>(),
        proptest::option::weighted(0.2, any::<Index>()),
        2usize..=3,
        proptest::collection::vec(any::<Index>(), 3),
        proptest::option::weighted(0.15, (any::<Index>(), 1u32..=20, 0u64..=600_000)),
        proptest::option::of("[A-Za-z][A-Za-z0-9 ]{0,12}"),
        proptest::option::of((-2000i32..2000, -2000i32..2000)),
        proptest::option::of("select [a-z]{1,8} from [a-z]{1,8}"),
        (any::<bool>(), 1u64..=9),
    )
        .prop_map(
            |(kind, parent, extra, labels, branch_targets, retry, title, position, query, (flag, revision))| {
                WorkChoice {
                    kind,
                    parent,
                    extra,
                    labels,
                    branch_targets,
                    retry,
                    title,
                    position,
                    query,
                    flag,
                    revision,
                }
            },
        )
}

/// Valid drafts of 3–40 nodes over the default catalog: 1–2 triggers (the first one
/// `trigger.schedule` or `trigger.manual`, the second manual), then `dataset.retrieve`
/// (some binding a package), `report.generate` (its `data` fed by a retrieval's `dataset`;
/// some declare contracts with an artifact), `notify.chat`, `notify.email`,
/// `router.switch` (2–3 labels, each wired by one branch edge), `gate.approval` (fed by a
/// report with an artifact, which is its evidence; some by a mapped edge) and
/// `agent.task` (with binding rows that accept it). Every edge goes from an earlier node
/// to a later one, every node is entered by an edge from an earlier node (so all are
/// reachable), some retry edges go back to an ancestor or the node itself; optional
/// titles and positions; with or without a context.
pub fn valid_draft() -> impl Strategy<Value = ValidDraft> {
    (1usize..=2, proptest::collection::vec(work_choice(), 1..=38), any::<bool>(), any::<bool>())
        .prop_filter("3 to 40 nodes", |(triggers, work, _, _)| (3..=40).contains(&(triggers + work.len())))
        .prop_map(|(triggers, work, with_context, schedule)| build(triggers, &work, with_context, schedule))
}

struct Placed {
    id: String,
    kind: Kind,
    /// Forward and branch predecessors (indices).
    preds: Vec<usize>,
}

fn build(triggers: usize, work: &[WorkChoice], with_context: bool, schedule: bool) -> ValidDraft {
    let n = triggers + work.len();
    // Kinds: the first work node is a retrieval (every trigger wires to it, and every
    // report has a retrieval before it).
    let mut kinds: Vec<Kind> = vec![Kind::Trigger; triggers];
    for (i, choice) in work.iter().enumerate() {
        kinds.push(if i == 0 {
            Kind::Dataset
        } else {
            match choice.kind {
                0..30 => Kind::Dataset,
                30..48 => Kind::Report,
                48..58 => Kind::Chat,
                58..68 => Kind::Email,
                68..80 => Kind::Router,
                80..90 => Kind::Gate,
                _ => Kind::Agent,
            }
        });
    }
    // Reports that declare an artifact; a gate needs one before it.
    for i in 0..n {
        if kinds[i] == Kind::Gate && !(0..i).any(|p| kinds[p] == Kind::Report && work[p - triggers].flag) {
            kinds[i] = Kind::Dataset;
        }
    }
    // A router needs at least two later nodes with a `multiple` input to branch to.
    for i in (0..n).rev() {
        if kinds[i] == Kind::Router {
            let later = (i + 1..n).filter(|&j| kinds[j].input().is_some_and(|(_, m)| m)).count();
            if later < 2 {
                kinds[i] = Kind::Dataset;
            }
        }
    }
    let kinds = kinds;
    let artifact_of = |i: usize| -> Option<String> {
        (kinds[i] == Kind::Report && work[i - triggers].flag).then(|| format!("art_{i}"))
    };
    let mut placed: Vec<Placed> = (0..n)
        .map(|i| Placed { id: format!("{}_{i}", kinds[i].prefix()), kind: kinds[i], preds: Vec::new() })
        .collect();
    let mut edges: Vec<Value> = Vec::new();
    let mut next_edge = 0usize;
    let mut edge_id = || {
        next_edge += 1;
        format!("e{next_edge}")
    };
    let forward = |placed: &mut Vec<Placed>, edges: &mut Vec<Value>, id: String, from: usize, to: usize| {
        let port = placed[to].kind.input().expect("has an input").0;
        edges.push(json!({
            "id": id,
            "from": { "node": placed[from].id, "port": placed[from].kind.output() },
            "to": { "node": placed[to].id, "port": port }
        }));
        placed[to].preds.push(from);
    };
    // The evidence of each gate: the artifact of the report that feeds it.
    let mut evidence_of: Vec<Option<String>> = vec![None; n];
    // Every trigger wires to the first retrieval.
    for t in 0..triggers {
        forward(&mut placed, &mut edges, edge_id(), t, triggers);
    }
    // Branch edges first (decided by each router), so that their targets are known.
    let mut branch_fed = vec![false; n];
    let mut labels_of: Vec<Vec<String>> = vec![Vec::new(); n];
    for i in triggers..n {
        if kinds[i] != Kind::Router {
            continue;
        }
        let choice = &work[i - triggers];
        let mut candidates: Vec<usize> = (i + 1..n).filter(|&j| kinds[j].input().is_some_and(|(_, m)| m)).collect();
        let count = choice.labels.min(candidates.len());
        for k in 0..count {
            let target = candidates.remove(choice.branch_targets[k].index(candidates.len()));
            let label = ["yes", "no", "maybe"][k].to_string();
            let id = edge_id();
            edges.push(json!({
                "id": id, "kind": "branch", "branch": { "label": label },
                "from": { "node": placed[i].id, "port": "out" },
                "to": { "node": placed[target].id, "port": "in" }
            }));
            placed[target].preds.push(i);
            branch_fed[target] = true;
            labels_of[i].push(label);
        }
    }
    // Every later work node: a primary edge from an earlier node (routers only branch),
    // unless a branch already enters it; sometimes a second input.
    for j in triggers + 1..n {
        let choice = &work[j - triggers];
        let sources: Vec<usize> = match kinds[j] {
            Kind::Report => (0..j).filter(|&i| kinds[i] == Kind::Dataset).collect(),
            _ => (0..j).filter(|&i| kinds[i] != Kind::Router).collect(),
        };
        if kinds[j] == Kind::Gate {
            // Fed by a report with an artifact, which is its evidence (even when a branch
            // also enters it).
            let reports: Vec<usize> = (0..j).filter(|&i| artifact_of(i).is_some()).collect();
            let from = reports[choice.parent.index(reports.len())];
            let artifact = artifact_of(from).expect("declares one");
            let mut edge = json!({
                "id": edge_id(),
                "from": { "node": placed[from].id, "port": "report" },
                "to": { "node": placed[j].id, "port": "in" }
            });
            if choice.flag {
                edge["mapping"] = json!({ "output": "report", "input": "in", "artifacts": [artifact] });
            }
            edges.push(edge);
            placed[j].preds.push(from);
            evidence_of[j] = Some(artifact);
        } else if !branch_fed[j] {
            let from = sources[choice.parent.index(sources.len())];
            forward(&mut placed, &mut edges, edge_id(), from, j);
        }
        if let (Some(extra), Some((_, true))) = (&choice.extra, kinds[j].input()) {
            let from = sources[extra.index(sources.len())];
            if !placed[j].preds.contains(&from) {
                forward(&mut placed, &mut edges, edge_id(), from, j);
            }
        }
    }
    // Retry edges: from a non-router to itself or a non-trigger ancestor with an `in` port.
    for j in triggers..n {
        let Some((target, max_attempts, backoff)) = &work[j - triggers].retry else { continue };
        if kinds[j] == Kind::Router {
            continue;
        }
        let mut ancestors = BTreeSet::new();
        let mut stack = vec![j];
        while let Some(k) = stack.pop() {
            for &p in &placed[k].preds {
                if ancestors.insert(p) {
                    stack.push(p);
                }
            }
        }
        ancestors.insert(j);
        let targets: Vec<usize> =
            ancestors.into_iter().filter(|&a| kinds[a].input().is_some_and(|(port, _)| port == "in")).collect();
        if targets.is_empty() {
            continue;
        }
        let to = targets[target.index(targets.len())];
        edges.push(json!({
            "id": edge_id(), "kind": "retry", "retry": { "maxAttempts": max_attempts, "backoffMs": backoff },
            "from": { "node": placed[j].id, "port": kinds[j].output() },
            "to": { "node": placed[to].id, "port": "in" }
        }));
    }
    let mut agents: Vec<(String, u64)> = Vec::new();
    let nodes: Vec<Value> = (0..n)
        .map(|i| {
            let choice = i.checked_sub(triggers).map(|w| &work[w]);
            let mut node = Map::new();
            node.insert("id".into(), json!(placed[i].id));
            let (family, config) = match kinds[i] {
                Kind::Trigger if i == 0 && schedule => {
                    ("trigger.schedule", json!({ "cron": "0 6 * * 1", "timezone": "Europe/Berlin" }))
                }
                Kind::Trigger => ("trigger.manual", json!({})),
                Kind::Dataset => {
                    let mut config = json!({ "connection": "conn_wh" });
                    if let Some(query) = choice.and_then(|c| c.query.clone()) {
                        config["query"] = json!(query);
                    }
                    if choice.is_some_and(|c| c.flag) {
                        node.insert(
                            "packages".into(),
                            json!([{ "name": PACKAGE.0, "version": PACKAGE.1, "digest": PACKAGE.2 }]),
                        );
                    }
                    ("dataset.retrieve", config)
                }
                Kind::Gate => ("gate.approval", json!({ "evidence": [evidence_of[i]] })),
                Kind::Agent => {
                    let revision = choice.map_or(1, |c| c.revision);
                    node.insert("agent".into(), json!({ "agentId": format!("agt_{i}"), "revision": revision }));
                    agents.push((format!("agt_{i}"), revision));
                    ("agent.task", json!({ "instructions": "Summarize the inputs." }))
                }
                Kind::Report => ("report.generate", json!({ "format": "pdf" })),
                Kind::Chat => ("notify.chat", json!({ "connection": "chat_main", "channel": "#ops" })),
                Kind::Email => ("notify.email", json!({ "sender": "mail_out", "to": ["ops@example.com"] })),
                Kind::Router => {
                    let branches: Vec<Value> = labels_of[i].iter().map(|l| json!({ "label": l })).collect();
                    ("router.switch", json!({ "branches": branches }))
                }
            };
            node.insert("family".into(), json!(family));
            if let Some(title) = choice.and_then(|c| c.title.clone()) {
                node.insert("title".into(), json!(title));
            }
            node.insert("config".into(), config);
            if let Some(artifact) = artifact_of(i) {
                node.insert("contracts".into(), report_contracts(&artifact));
            }
            if let Some((x, y)) = choice.and_then(|c| c.position) {
                node.insert("position".into(), json!({ "x": x, "y": y }));
            }
            Value::Object(node)
        })
        .collect();
    ValidDraft {
        draft: envelope(nodes, edges),
        context: with_context.then(full_context),
        bindings: (!agents.is_empty()).then(|| accepting_rows(&agents)),
    }
}

/// A small graph for the cycle oracle: `nodes` distinct ids (none is `t`, the trigger)
/// and forward edges `(id, from, to)` between them, never from a node to itself.
#[derive(Clone, Debug)]
pub struct CycleCase {
    pub nodes: Vec<String>,
    pub edges: Vec<(String, usize, usize)>,
}

impl CycleCase {
    /// The draft: trigger `t` wired (edge `t0`) to the first node, every node a
    /// `dataset.retrieve`, every edge `dataset` → `in`.
    pub fn draft(&self) -> Value {
        let mut nodes = vec![json!({ "id": "t", "family": "trigger.manual" })];
        nodes.extend(
            self.nodes
                .iter()
                .map(|id| json!({ "id": id, "family": "dataset.retrieve", "config": { "connection": "c" } })),
        );
        let mut edges = vec![
            json!({ "id": "t0", "from": { "node": "t", "port": "out" }, "to": { "node": self.nodes[0], "port": "in" } }),
        ];
        edges.extend(self.edges.iter().map(|(id, from, to)| {
            json!({ "id": id, "from": { "node": self.nodes[*from], "port": "dataset" },
                    "to": { "node": self.nodes[*to], "port": "in" } })
        }));
        envelope(nodes, edges)
    }
}

/// Graphs of 1–7 nodes with up to 16 edges. Node ids come from a pool whose string
/// order differs from the index order; edge ids are distinct numbers written `e<k>` so
/// that `e10` sorts before `e2`.
pub fn cycle_graph() -> impl Strategy<Value = CycleCase> {
    const POOL: &[&str] = &["a", "b", "c", "d", "x", "y", "z", "n1", "n10", "n2", "B", "a0"];
    (1usize..=7).prop_flat_map(|n| {
        let ids = proptest::sample::subsequence(POOL.to_vec(), n).prop_shuffle();
        let edges = proptest::collection::vec((0..n, 0..n), 0..=16);
        let numbers = Just((1u32..=40).collect::<Vec<_>>()).prop_shuffle();
        (ids, edges, numbers).prop_map(|(ids, pairs, numbers)| CycleCase {
            nodes: ids.into_iter().map(str::to_string).collect(),
            edges: pairs
                .into_iter()
                .filter(|(from, to)| from != to)
                .zip(numbers)
                .map(|((from, to), k)| (format!("e{k}"), from, to))
                .collect(),
        })
    })
}

/// Arbitrary JSON values of depth ≤ 6, with atoms that a draft reader finds interesting.
pub fn json_value() -> impl Strategy<Value = Value> {
    let atom = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        prop_oneof![Just(-1i64), Just(0), Just(1), Just(20), Just(21), Just(9_007_199_254_740_993)]
            .prop_map(Value::from),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        ".{0,12}".prop_map(Value::String),
        proptest::sample::select(vec![
            "",
            "in",
            "out",
            "data",
            "dataset",
            "report",
            "forward",
            "branch",
            "retry",
            "trigger.manual",
            "dataset.retrieve",
            "report.generate",
            "router.switch",
            "gate.approval",
            "agent.task",
            "annotation",
            "group",
            "notify.chat",
            "workflow-draft/v1",
            "start_0",
            "fetch_1",
            "e1",
            "e2",
            "acme",
            "2026.11",
            "graph.unreachable_node",
            "graph.cycle",
        ])
        .prop_map(|s| Value::String(s.to_string())),
    ];
    atom.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec(
                (
                    prop_oneof![
                        proptest::sample::select(vec![
                            "id",
                            "family",
                            "from",
                            "to",
                            "node",
                            "port",
                            "kind",
                            "config",
                            "label",
                            "branch",
                            "retry",
                            "maxAttempts",
                            "backoffMs",
                            "members",
                            "suppress",
                            "contracts",
                            "position",
                        ])
                        .prop_map(str::to_string),
                        "[a-z]{0,6}",
                    ],
                    inner
                ),
                0..6
            )
            .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

/// Every path (object keys and array indices) to a value inside `value`, root included.
pub fn value_paths(value: &Value) -> Vec<Vec<PathStep>> {
    let mut out = Vec::new();
    let mut stack = vec![(value, Vec::new())];
    while let Some((v, path)) = stack.pop() {
        match v {
            Value::Object(map) => {
                for (k, child) in map {
                    let mut p = path.clone();
                    p.push(PathStep::Key(k.clone()));
                    stack.push((child, p));
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    let mut p = path.clone();
                    p.push(PathStep::Index(i));
                    stack.push((child, p));
                }
            }
            _ => {}
        }
        out.push(path);
    }
    out.sort();
    out
}

/// One step of a path into a JSON value.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PathStep {
    Key(String),
    Index(usize),
}

/// The value at `path`, mutably.
pub fn value_at_mut<'a>(value: &'a mut Value, path: &[PathStep]) -> &'a mut Value {
    path.iter().fold(value, |v, step| match step {
        PathStep::Key(k) => &mut v[k.as_str()],
        PathStep::Index(i) => &mut v[*i],
    })
}

/// A valid draft with one value (anywhere, the root included) replaced by an arbitrary one;
/// the context of the valid draft is kept.
pub fn mutated_draft() -> impl Strategy<Value = ValidDraft> {
    (valid_draft(), any::<Index>(), json_value()).prop_map(|(mut valid, at, replacement)| {
        let paths = value_paths(&valid.draft);
        let path = &paths[at.index(paths.len())];
        *value_at_mut(&mut valid.draft, path) = replacement;
        valid
    })
}
