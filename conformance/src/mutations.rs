//! Mutations of generated valid drafts ([`crate::strategies::valid_draft`]): each injects
//! exactly one fault and says what `little check` must report — the code, the node or edge
//! it is about, and (from the code) whether it blocks. Every code a draft can get has at
//! least one; a code has several when its fault comes in forms the reference tells apart (a
//! label missing or misspelt, each unreadable contract envelope, a port misspelt near or
//! far), and every line of docs/reference/diagnostics.md#one-fault-one-diagnostic ("which fault is reported") is proven by the
//! mutations tagged with its [`Rule`].
//!
//! Like the strategies, this module is written from docs/reference/ and docs/decisions.md alone:
//! it never calls into the passes. A mutation that needs something the draft lacks (a
//! router, a gate, a mapped edge) either adds it, clean, or returns `None`.

use std::collections::BTreeSet;

use little_diagnostics::Code;
use little_frontend::catalog::DEFAULT_CATALOG;
use serde_json::{Value, json};

use crate::Setup;
use crate::strategies::{MIN_INTERVAL_MINUTES, PACKAGE, ValidDraft, full_context};

/// A draft with one fault, and what checking it must report.
#[derive(Clone, Debug)]
pub struct Injected {
    pub text: String,
    pub setup: Setup,
    /// The one error or warning code the report must hold.
    pub code: Code,
    /// The node (or edge) that the diagnostic names.
    pub node: Option<String>,
    pub edge: Option<String>,
}

/// The line of docs/reference/diagnostics.md#one-fault-one-diagnostic ("Which fault is reported (no cascades)") a mutation proves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rule {
    /// An edge whose endpoint node or port does not resolve is reported once, as that
    /// fault (`graph.dangling_edge`, `graph.invalid_port`, `catalog.unknown_family` for
    /// its node), and counts for nothing else.
    UnresolvedEdge,
    /// An edge that touches a visual-only node is `graph.edge_to_visual_node`, a warning,
    /// and is dropped before any other check sees it.
    VisualNodeEdge,
    /// An edge into a trigger is `trigger.inbound_edge`, whatever its port.
    EdgeIntoTrigger,
    /// A forward or branch edge from a node to itself is `graph.self_connection`, not a cycle.
    SelfConnection,
    /// A non-branch edge out of a router is `branch.missing_label`; a branch edge out of a
    /// node that is not a router is `graph.unsupported_router`.
    RouterEdges,
    /// With no trigger at all, `graph.missing_trigger` is reported and reachability is not.
    NoTrigger,
    /// A config that fails its family's schema is `catalog.invalid_config`, and the checks
    /// that read that config skip the faulty field.
    InvalidConfig,
    /// Nodes that are not an array, or a node without an id or family, is
    /// `draft.invalid_shape`; checks that need the missing part skip it.
    InvalidShape,
    /// A mapped edge is type-checked by the contract rules only, an unmapped one by the
    /// port rules only.
    MappedEdges,
}

impl Rule {
    /// The nine lines, in the reference's order.
    pub const ALL: [Rule; 9] = [
        Rule::UnresolvedEdge,
        Rule::VisualNodeEdge,
        Rule::EdgeIntoTrigger,
        Rule::SelfConnection,
        Rule::RouterEdges,
        Rule::NoTrigger,
        Rule::InvalidConfig,
        Rule::InvalidShape,
        Rule::MappedEdges,
    ];

    /// A short name, for the README's list of mutations.
    pub fn name(self) -> &'static str {
        match self {
            Rule::UnresolvedEdge => "unresolved endpoint",
            Rule::VisualNodeEdge => "visual-only node",
            Rule::EdgeIntoTrigger => "edge into a trigger",
            Rule::SelfConnection => "self-connection",
            Rule::RouterEdges => "router edges",
            Rule::NoTrigger => "no trigger",
            Rule::InvalidConfig => "invalid config",
            Rule::InvalidShape => "invalid shape",
            Rule::MappedEdges => "mapped edges",
        }
    }

    /// The line, shortened, for tables and failure messages.
    pub fn line(self) -> &'static str {
        match self {
            Rule::UnresolvedEdge => "an edge whose endpoint does not resolve is that fault only",
            Rule::VisualNodeEdge => "an edge touching a visual-only node is a warning, and dropped",
            Rule::EdgeIntoTrigger => "an edge into a trigger is `trigger.inbound_edge`, whatever its port",
            Rule::SelfConnection => "an edge from a node to itself is `graph.self_connection`, not a cycle",
            Rule::RouterEdges => {
                "a non-branch edge out of a router is `branch.missing_label`; a branch out of a non-router is `graph.unsupported_router`"
            }
            Rule::NoTrigger => "with no trigger, `graph.missing_trigger` and no reachability",
            Rule::InvalidConfig => {
                "a config that fails its schema is `catalog.invalid_config`; its readers skip the field"
            }
            Rule::InvalidShape => "nodes not an array, or a node without id or family, is `draft.invalid_shape`",
            Rule::MappedEdges => "a mapped edge is typed by contract rules only, an unmapped one by port rules only",
        }
    }
}

/// A fault of one code.
pub struct Mutation {
    pub code: Code,
    /// What the mutation does: says which mutation failed, and names it in the README.
    /// No two mutations do the same.
    pub does: &'static str,
    /// The line of docs/reference/diagnostics.md#one-fault-one-diagnostic it proves, if any.
    pub rule: Option<Rule>,
    /// Why the report may hold several diagnostics (all of `code`), when it may: one fault
    /// of a document every node shares, reported at each node it touches. `None`: exactly
    /// one error or warning.
    pub several: Option<&'static str>,
    /// Why the fault is not local to the nodes and edges it touches, when it is not: it
    /// changes the text, the draft's own fields, or a document all parts share in a way
    /// no other part can keep (the metamorphic suite combines only local faults).
    pub whole: Option<&'static str>,
    apply: fn(&mut Draft, &mut Pick) -> Option<Target>,
}

/// A mutated draft, with the documents it is checked with and what the fault is about.
#[derive(Clone, Debug)]
pub struct Mutated {
    pub draft: Value,
    /// The text, when the mutation works on it (a parse fault has no JSON value).
    pub text: Option<String>,
    pub context: Option<Value>,
    pub bindings: Option<Value>,
    /// The catalog, when the default one does not have a family the mutation uses.
    pub catalog: Option<Value>,
    pub target: Target,
}

impl Mutated {
    /// The draft's text: the mutation's own, or the value pretty-printed.
    pub fn text(&self) -> String {
        self.text.clone().unwrap_or_else(|| serde_json::to_string_pretty(&self.draft).expect("serializes"))
    }

    /// The documents to check the draft with.
    pub fn setup(&self) -> Setup {
        Setup {
            catalog: self.catalog.as_ref().map(|c| c.to_string()),
            context: self.context.as_ref().map(|c| c.to_string()),
            bindings: self.bindings.as_ref().map(|b| b.to_string()),
            ..Setup::default()
        }
    }
}

impl Mutation {
    /// Applies the fault to a copy of `valid`, choosing where with `seed`; `None` when the
    /// draft has no place for it.
    pub fn mutate(&self, valid: &ValidDraft, seed: u64) -> Option<Mutated> {
        let mut draft = Draft {
            value: valid.draft.clone(),
            context: valid.context.clone(),
            bindings: valid.bindings.clone(),
            catalog: None,
            text: None,
        };
        let mut pick = Pick(seed.max(1));
        let target = (self.apply)(&mut draft, &mut pick)?;
        Some(Mutated {
            draft: draft.value,
            text: draft.text,
            context: draft.context,
            bindings: draft.bindings,
            catalog: draft.catalog,
            target,
        })
    }

    /// Injects the fault: the text and setup to check, and what the report must hold.
    pub fn inject(&self, valid: &ValidDraft, seed: u64) -> Option<Injected> {
        let mutated = self.mutate(valid, seed)?;
        let (node, edge) = match &mutated.target {
            Target::Draft => (None, None),
            Target::Node(id) => (Some(id.clone()), None),
            Target::Edge(id) => (None, Some(id.clone())),
        };
        Some(Injected { text: mutated.text(), setup: mutated.setup(), code: self.code, node, edge })
    }

    const fn rule(mut self, rule: Rule) -> Self {
        self.rule = Some(rule);
        self
    }

    const fn several(mut self, why: &'static str) -> Self {
        self.several = Some(why);
        self
    }

    const fn whole(mut self, why: &'static str) -> Self {
        self.whole = Some(why);
        self
    }
}

/// What a mutation's diagnostic is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// The draft as a whole (no node or edge named).
    Draft,
    Node(String),
    Edge(String),
}

/// The draft being mutated, with the documents it is checked with.
struct Draft {
    value: Value,
    context: Option<Value>,
    bindings: Option<Value>,
    catalog: Option<Value>,
    /// Set by mutations that work on the text (a parse fault has no JSON value).
    text: Option<String>,
}

/// The default catalog with one more family, `report.compare`: an action with two
/// required inputs, `baseline` and `current` (what a report takes), and a `report` output.
pub fn catalog_with_compare() -> Value {
    let mut catalog: Value = serde_json::from_str(DEFAULT_CATALOG).expect("the default catalog is JSON");
    catalog["families"].as_array_mut().expect("families").push(json!({
        "id": "report.compare",
        "kind": "action",
        "semantic": "report-generation",
        "workerSlot": true,
        "ports": {
            "inputs": [
                { "name": "baseline", "types": ["tabular-data", "document"], "required": true },
                { "name": "current", "types": ["tabular-data", "document"], "required": true }
            ],
            "outputs": [ { "name": "report", "types": ["document"] } ]
        },
        "configSchema": { "type": "object", "additionalProperties": false, "properties": {} }
    }));
    catalog
}

/// A deterministic chooser (xorshift64), so that a case replays from its seed.
struct Pick(u64);

impl Pick {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }

    fn one<T: Clone>(&mut self, items: &[T]) -> Option<T> {
        (!items.is_empty()).then(|| items[self.below(items.len())].clone())
    }
}

impl Draft {
    fn nodes(&self) -> &Vec<Value> {
        self.value["nodes"].as_array().expect("generated drafts have nodes")
    }

    fn nodes_mut(&mut self) -> &mut Vec<Value> {
        self.value["nodes"].as_array_mut().expect("generated drafts have nodes")
    }

    fn edges(&self) -> &Vec<Value> {
        self.value["edges"].as_array().expect("generated drafts have edges")
    }

    fn edges_mut(&mut self) -> &mut Vec<Value> {
        self.value["edges"].as_array_mut().expect("generated drafts have edges")
    }

    fn family(&self, id: &str) -> Option<&str> {
        self.nodes().iter().find(|n| n["id"] == id).and_then(|n| n["family"].as_str())
    }

    /// Ids of the nodes of these families, in draft order.
    fn ids_of(&self, families: &[&str]) -> Vec<String> {
        self.nodes()
            .iter()
            .filter(|n| n["family"].as_str().is_some_and(|f| families.contains(&f)))
            .map(|n| n["id"].as_str().expect("generated ids are strings").to_string())
            .collect()
    }

    fn node(&self, id: &str) -> &Value {
        self.nodes().iter().find(|n| n["id"] == id).expect("the node exists")
    }

    fn node_mut(&mut self, id: &str) -> &mut Value {
        self.nodes_mut().iter_mut().find(|n| n["id"] == id).expect("the node exists")
    }

    /// Indices of the edges of one kind (`forward` when absent).
    fn edges_of_kind(&self, kind: &str) -> Vec<usize> {
        (0..self.edges().len()).filter(|&i| self.edges()[i]["kind"].as_str().unwrap_or("forward") == kind).collect()
    }

    fn edge_id(&self, i: usize) -> String {
        self.edges()[i]["id"].as_str().expect("generated ids are strings").to_string()
    }

    /// An edge id no edge has.
    fn fresh_edge_id(&self) -> String {
        format!("e{}", self.edges().len() + 1000)
    }

    fn add_edge(&mut self, edge: Value) -> Target {
        let id = edge["id"].as_str().expect("has an id").to_string();
        self.edges_mut().push(edge);
        Target::Edge(id)
    }

    fn forward_edge(&self, from: &str, from_port: &str, to: &str, to_port: &str) -> Value {
        json!({ "id": self.fresh_edge_id(), "from": { "node": from, "port": from_port }, "to": { "node": to, "port": to_port } })
    }

    /// A branch edge labelled `label` from a router's `out` to a node's `in`.
    fn branch_edge(&self, router: &str, to: &str, label: &str) -> Value {
        let mut edge = self.forward_edge(router, "out", to, "in");
        edge["kind"] = json!("branch");
        edge["branch"] = json!({ "label": label });
        edge
    }

    /// The node's output port in generated drafts.
    fn output_of(&self, id: &str) -> &'static str {
        match self.family(id) {
            Some("dataset.retrieve") => "dataset",
            Some("report.generate") => "report",
            _ => "out",
        }
    }

    /// Transitive predecessors over forward and branch edges.
    fn ancestors(&self, id: &str) -> BTreeSet<String> {
        self.reach(id, "to", "from")
    }

    /// Transitive successors over forward and branch edges.
    fn descendants(&self, id: &str) -> BTreeSet<String> {
        self.reach(id, "from", "to")
    }

    /// Every node reached from `id` by following edges whose `here` end is a node reached
    /// so far, to their `there` end.
    fn reach(&self, id: &str, here: &str, there: &str) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![id.to_string()];
        while let Some(node) = stack.pop() {
            for edge in self.edges() {
                if edge["kind"] != "retry"
                    && edge[here]["node"] == node.as_str()
                    && let Some(next) = edge[there]["node"].as_str()
                    && seen.insert(next.to_string())
                {
                    stack.push(next.to_string());
                }
            }
        }
        seen
    }

    /// Nodes with a `multiple` input `in` (they may take one more edge).
    fn open_inputs(&self) -> Vec<String> {
        self.ids_of(&["dataset.retrieve", "notify.chat", "notify.email", "gate.approval", "agent.task"])
    }

    fn ensure_context(&mut self) {
        if self.context.is_none() {
            self.context = Some(full_context());
        }
    }

    /// Appends an agent fed by the first retrieval; its binding is accepted by the rows.
    fn add_agent(&mut self, id: &str, revision: u64) {
        let fetch = self.ids_of(&["dataset.retrieve"])[0].clone();
        self.nodes_mut().push(json!({
            "id": id, "family": "agent.task", "agent": { "agentId": format!("agt_{id}"), "revision": revision }
        }));
        let edge = self.forward_edge(&fetch, "dataset", id, "in");
        self.edges_mut().push(edge);
        let row = json!({ "agentId": format!("agt_{id}"), "revision": revision, "status": "accepted" });
        match &mut self.bindings {
            Some(rows) => rows["rows"].as_array_mut().expect("rows").push(row),
            None => self.bindings = Some(json!({ "format": "agent-bindings/v1", "rows": [row] })),
        }
    }

    /// An agent of the draft, or a new one.
    fn some_agent(&mut self, pick: &mut Pick) -> String {
        match pick.one(&self.ids_of(&["agent.task"])) {
            Some(id) => id,
            None => {
                self.add_agent("agent_new", 1);
                "agent_new".to_string()
            }
        }
    }

    /// Gate-fed mapped edges: `(edge index, report id, gate id)`.
    fn mapped_edges(&self) -> Vec<(usize, String, String)> {
        (0..self.edges().len())
            .filter(|&i| self.edges()[i].get("mapping").is_some())
            .map(|i| {
                let e = &self.edges()[i];
                (i, e["from"]["node"].as_str().unwrap().to_string(), e["to"]["node"].as_str().unwrap().to_string())
            })
            .collect()
    }
}

/// Every mutation: at least one per code a draft can get (parse and shape faults
/// included), in the order of the codes.
pub fn all() -> &'static [Mutation] {
    MUTATIONS
}

macro_rules! mutation {
    ($code:ident, $does:literal, $apply:expr) => {
        Mutation { code: Code::$code, does: $does, rule: None, several: None, whole: None, apply: $apply }
    };
}

/// Why a fault of the text is not local: it has no JSON value to combine.
const TEXT: &str = "a fault of the text";
/// Why a fault of the draft's own fields is not local: every part shares them.
const DRAFT_FIELDS: &str = "changes the draft's own fields, which every part shares";

static MUTATIONS: &[Mutation] = &[
    mutation!(ParseInvalidJson, "cut the text short", |d, pick| {
        let text = serde_json::to_string_pretty(&d.value).unwrap();
        let at = 1 + pick.below(text.len() - 2);
        d.text = Some(text[..at].to_string());
        Some(Target::Draft)
    })
    .whole(TEXT),
    mutation!(ParseDuplicateKey, "write a node's id twice", |d, pick| {
        let id = pick.one(&d.ids_of(&ALL_FAMILIES))?;
        let text = serde_json::to_string_pretty(&d.value).unwrap();
        let needle = format!("\"id\": \"{id}\"");
        let at = text.find(&needle)? + needle.len();
        d.text = Some(format!("{}, {}{}", &text[..at], needle, &text[at..]));
        Some(Target::Draft)
    })
    .whole(TEXT),
    mutation!(ParseUnsafeInteger, "place a node at x = 2^53 + 1", |d, pick| {
        let id = pick.one(&d.ids_of(&ALL_FAMILIES))?;
        d.node_mut(&id)["position"] = json!({ "x": 9_007_199_254_740_993u64, "y": 0 });
        Some(Target::Draft)
    })
    .whole(TEXT),
    mutation!(ParseUnsupportedFormat, "set `format` to a version that does not exist", |d, _| {
        d.value["format"] = json!("workflow-draft/v2");
        Some(Target::Draft)
    })
    .whole(DRAFT_FIELDS),
    mutation!(RequestMissingIdentity, "remove or empty one identity field", |d, pick| {
        match pick.below(4) {
            0 => d.value["tenantId"] = json!(""),
            1 => drop(d.value.as_object_mut().unwrap().shift_remove("workflowId")),
            2 => drop(d.value.as_object_mut().unwrap().shift_remove("draftId")),
            _ => drop(d.value.as_object_mut().unwrap().shift_remove("revision")),
        }
        Some(Target::Draft)
    })
    .whole(DRAFT_FIELDS),
    mutation!(RequestTenantMismatch, "check against another tenant's context", |d, _| {
        d.ensure_context();
        d.value["tenantId"] = json!("globex");
        Some(Target::Draft)
    })
    .whole(DRAFT_FIELDS),
    mutation!(DraftInvalidShape, "give a node a numeric title", |d, pick| {
        let id = pick.one(&d.ids_of(&ALL_FAMILIES))?;
        d.node_mut(&id)["title"] = json!(42);
        Some(Target::Node(id))
    }),
    mutation!(DraftInvalidShape, "remove a node's family", |d, pick| {
        let id = pick.one(&d.ids_of(&ALL_FAMILIES))?;
        d.node_mut(&id).as_object_mut()?.shift_remove("family");
        Some(Target::Node(id))
    })
    .rule(Rule::InvalidShape),
    mutation!(DraftInvalidShape, "add a retrieval without an id", |d, _| {
        d.nodes_mut().push(json!({ "family": "dataset.retrieve", "config": { "connection": "conn_wh" } }));
        Some(Target::Draft)
    })
    .rule(Rule::InvalidShape),
    mutation!(DraftInvalidShape, "write `nodes` as an object keyed by id", |d, _| {
        let nodes: serde_json::Map<String, Value> =
            d.nodes().iter().map(|n| (n["id"].as_str().unwrap_or_default().to_string(), n.clone())).collect();
        d.value["nodes"] = Value::Object(nodes);
        Some(Target::Draft)
    })
    .rule(Rule::InvalidShape)
    .whole("every node of every part is in `nodes`"),
    mutation!(DraftUnknownField, "add a key the format does not define to a node or an edge", |d, pick| {
        if pick.below(2) == 0 {
            let id = pick.one(&d.ids_of(&ALL_FAMILIES))?;
            d.node_mut(&id)["colour"] = json!("teal");
            Some(Target::Node(id))
        } else {
            let i = pick.below(d.edges().len());
            d.edges_mut()[i]["colour"] = json!("teal");
            Some(Target::Edge(d.edge_id(i)))
        }
    }),
    mutation!(DraftInvalidSuppression, "suppress a blocking code", |d, pick| {
        let id = pick.one(&d.ids_of(&ALL_FAMILIES))?;
        d.node_mut(&id)["suppress"] = json!(["graph.cycle"]);
        Some(Target::Node(id))
    }),
    mutation!(DraftUnknownSuppression, "suppress a misspelt code", |d, pick| {
        let id = pick.one(&d.ids_of(&ALL_FAMILIES))?;
        d.node_mut(&id)["suppress"] = json!(["graph.unreachable_nod"]);
        Some(Target::Node(id))
    }),
    mutation!(CatalogStaleVersion, "author against last month's catalog", |d, _| {
        d.value["catalogVersion"] = json!("2026.10");
        Some(Target::Draft)
    })
    .whole(DRAFT_FIELDS),
    mutation!(CatalogUnknownFamily, "misspell a node's family", |d, pick| {
        let id = pick.one(&d.ids_of(&ALL_FAMILIES))?;
        let family = d.family(&id)?.to_string();
        d.node_mut(&id)["family"] = json!(format!("{}x", family));
        Some(Target::Node(id))
    })
    .rule(Rule::UnresolvedEdge),
    mutation!(CatalogInvalidConfig, "make a retrieval's connection a number", |d, pick| {
        d.ensure_context(); // so that the integration check would read it
        let id = pick.one(&d.ids_of(&["dataset.retrieve"]))?;
        d.node_mut(&id)["config"]["connection"] = json!(42);
        Some(Target::Node(id))
    })
    .rule(Rule::InvalidConfig),
    mutation!(CatalogInvalidConfig, "make a schedule's cron a number", |d, _| {
        d.ensure_context(); // so that the schedule policy would read it
        Some(Target::Node(schedule_trigger(d, json!({ "cron": 6, "timezone": "Europe/Berlin" }))))
    })
    .rule(Rule::InvalidConfig),
    mutation!(CatalogInvalidConfig, "write a router's branches as one string", |d, pick| {
        let router = pick.one(&d.ids_of(&["router.switch"]))?;
        d.node_mut(&router)["config"]["branches"] = json!("yes, no");
        Some(Target::Node(router))
    })
    .rule(Rule::InvalidConfig),
    mutation!(CatalogInvalidConfig, "write a gate's evidence as one string", |d, pick| {
        let gate = pick.one(&d.ids_of(&["gate.approval"]))?;
        let evidence = d.node(&gate)["config"]["evidence"][0].clone();
        d.node_mut(&gate)["config"]["evidence"] = evidence;
        Some(Target::Node(gate))
    })
    .rule(Rule::InvalidConfig),
    mutation!(CatalogCapabilityUnavailable, "take the warehouse capability from the tenant", |d, _| {
        d.ensure_context();
        let caps = d.context.as_mut().unwrap()["capabilities"].as_array_mut().unwrap();
        caps.retain(|c| c != "data.warehouse");
        Some(Target::Node(d.ids_of(&["dataset.retrieve"])[0].clone()))
    })
    .several("the tenant lacks the capability once, and every retrieval requires it: each is reported")
    .whole("takes a capability from the context every part shares"),
    mutation!(CatalogMissingIntegration, "point a retrieval at a connection the tenant lacks", |d, pick| {
        d.ensure_context();
        let id = pick.one(&d.ids_of(&["dataset.retrieve"]))?;
        d.node_mut(&id)["config"]["connection"] = json!("conn_lake");
        Some(Target::Node(id))
    }),
    mutation!(CatalogDeprecatedFamily, "use the deprecated `dataset.query` for a retrieval", |d, pick| {
        let id = pick.one(&d.ids_of(&["dataset.retrieve"]))?;
        let node = d.node_mut(&id);
        node["family"] = json!("dataset.query");
        node["config"] = json!({ "connection": "conn_wh" });
        Some(Target::Node(id))
    }),
    mutation!(PackageMalformedBinding, "bind a package with a two-part version", |d, pick| {
        let id = pick.one(&d.ids_of(&["dataset.retrieve"]))?;
        d.node_mut(&id)["packages"] = json!([{ "name": PACKAGE.0, "version": "1.4", "digest": PACKAGE.2 }]);
        Some(Target::Node(id))
    }),
    mutation!(PackageUnknown, "bind a package the registry does not have", |d, pick| {
        d.ensure_context();
        let id = pick.one(&d.ids_of(&["dataset.retrieve"]))?;
        d.node_mut(&id)["packages"] = json!([{ "name": "warehouse-clint", "version": PACKAGE.1, "digest": PACKAGE.2 }]);
        Some(Target::Node(id))
    }),
    mutation!(PackageStaleBinding, "bind an older version of the registry's package", |d, pick| {
        d.ensure_context();
        let id = pick.one(&d.ids_of(&["dataset.retrieve"]))?;
        d.node_mut(&id)["packages"] = json!([{ "name": PACKAGE.0, "version": "1.4.1", "digest": PACKAGE.2 }]);
        Some(Target::Node(id))
    }),
    mutation!(GraphDuplicateNodeId, "add a note that reuses a node's id", |d, pick| {
        let id = pick.one(&d.ids_of(&ALL_FAMILIES))?;
        d.nodes_mut().push(json!({ "id": id, "family": "annotation", "text": "a second node with this id" }));
        Some(Target::Node(id))
    }),
    mutation!(GraphDuplicateEdgeId, "give one edge another edge's id", |d, pick| {
        if d.edges().len() < 2 {
            return None;
        }
        let (a, b) = (pick.below(d.edges().len()), pick.below(d.edges().len()));
        if a == b {
            return None;
        }
        let id = d.edge_id(a);
        d.edges_mut()[b]["id"] = json!(id);
        Some(Target::Edge(id))
    }),
    mutation!(GraphDanglingEdge, "start an edge at a node that does not exist", |d, pick| {
        // Not a trigger's edge (the trigger would be unwired, a fault of its own).
        let i = pick.one(&d.edges_of_kind("forward"))?;
        let from = d.edges()[i]["from"]["node"].as_str()?.to_string();
        if d.family(&from).is_some_and(|f| f.starts_with("trigger.")) {
            return None;
        }
        d.edges_mut()[i]["from"]["node"] = json!("ghost");
        Some(Target::Edge(d.edge_id(i)))
    })
    .rule(Rule::UnresolvedEdge),
    mutation!(GraphDanglingEdge, "start an edge at a near misspelling of its source's id", |d, pick| {
        // `fetch_3` → `fetch-3`: one edit from its node, two or more from any other id, so
        // it stands for that node (docs/decisions.md), which stays wired.
        let i = pick.one(&d.edges_of_kind("forward"))?;
        let from = d.edges()[i]["from"]["node"].as_str()?.replacen('_', "-", 1);
        d.edges_mut()[i]["from"]["node"] = json!(from);
        Some(Target::Edge(d.edge_id(i)))
    })
    .rule(Rule::UnresolvedEdge),
    mutation!(GraphDanglingEdge, "end an edge at a near misspelling of its target's id", |d, pick| {
        // The target stands for its node: it stays reached and its input fed.
        let i = pick.one(&d.edges_of_kind("forward"))?;
        let to = d.edges()[i]["to"]["node"].as_str()?.replacen('_', "-", 1);
        d.edges_mut()[i]["to"]["node"] = json!(to);
        Some(Target::Edge(d.edge_id(i)))
    })
    .rule(Rule::UnresolvedEdge),
    mutation!(GraphDanglingEdge, "add an edge into a node that does not exist", |d, pick| {
        let from = pick.one(&d.ids_of(&ALL_EXECUTABLE))?;
        let edge = json!({ "id": d.fresh_edge_id(), "from": { "node": from }, "to": { "node": "ghost" } });
        Some(d.add_edge(edge))
    })
    .rule(Rule::UnresolvedEdge),
    mutation!(GraphInvalidPort, "misspell the input port of an edge", |d, pick| {
        let i = pick.one(&d.edges_of_kind("forward"))?;
        if d.edges()[i].get("mapping").is_some() {
            return None;
        }
        let port = d.edges()[i]["to"]["port"].as_str()?.to_string();
        d.edges_mut()[i]["to"]["port"] = json!(format!("{port}x"));
        Some(Target::Edge(d.edge_id(i)))
    })
    .rule(Rule::UnresolvedEdge),
    mutation!(GraphInvalidPort, "misspell a report's `data` input by one letter (`datx`)", |d, pick| {
        misspelt_report_input(d, pick, "datx")
    })
    .rule(Rule::UnresolvedEdge),
    mutation!(GraphInvalidPort, "misspell a report's `data` input beyond recognition (`zzzz`)", |d, pick| {
        misspelt_report_input(d, pick, "zzzz")
    })
    .rule(Rule::UnresolvedEdge),
    mutation!(
        GraphInvalidPort,
        "add a two-input comparison and misspell one of its inputs by one letter",
        |d, pick| { misspelt_comparison(d, pick, false) }
    )
    .rule(Rule::UnresolvedEdge),
    mutation!(
        GraphInvalidPort,
        "add a two-input comparison and misspell one of its inputs beyond recognition",
        |d, pick| { misspelt_comparison(d, pick, true) }
    )
    .rule(Rule::UnresolvedEdge),
    mutation!(GraphSelfConnection, "wire a retrieval to itself", |d, pick| {
        let id = pick.one(&d.ids_of(&["dataset.retrieve"]))?;
        let edge = d.forward_edge(&id, "dataset", &id, "in");
        Some(d.add_edge(edge))
    })
    .rule(Rule::SelfConnection),
    mutation!(GraphIncompatiblePortTypes, "feed a report from a trigger's event", |d, pick| {
        let report = pick.one(&d.ids_of(&["report.generate"]))?;
        let trigger = pick.one(&d.ids_of(&["trigger.manual", "trigger.schedule"]))?;
        let i = (0..d.edges().len()).find(|&i| d.edges()[i]["to"]["node"] == report.as_str())?;
        d.edges_mut()[i]["from"] = json!({ "node": trigger, "port": "out" });
        let id = d.edge_id(i);
        // The report and what follows it lose ancestors: drop the retries that re-entered them.
        let mut after = d.descendants(&report);
        after.insert(report);
        d.edges_mut()
            .retain(|e| e["kind"] != "retry" || !e["from"]["node"].as_str().is_some_and(|f| after.contains(f)));
        Some(Target::Edge(id))
    })
    .rule(Rule::MappedEdges),
    mutation!(GraphDuplicateInput, "feed a report's single `data` input twice", |d, pick| {
        let report = pick.one(&d.ids_of(&["report.generate"]))?;
        let fetch = d.ids_of(&["dataset.retrieve"])[0].clone();
        let edge = d.forward_edge(&fetch, "dataset", &report, "data");
        Some(d.add_edge(edge))
    }),
    mutation!(GraphMissingRequiredInput, "move a report's feed to a contract port, leaving `data` unfed", |d, pick| {
        let report = pick.one(&d.ids_of(&["report.generate"]))?;
        let i = (0..d.edges().len()).find(|&i| d.edges()[i]["to"]["node"] == report.as_str())?;
        d.edges_mut()[i]["to"]["port"] = json!("aux");
        let node = d.node_mut(&report);
        match node.get_mut("contracts") {
            Some(contracts) => contracts["inputs"] = json!([{ "port": "aux", "types": ["any"] }]),
            None => {
                node["contracts"] = json!({
                    "version": "workflow-node-contracts/v1", "inputs": [{ "port": "aux", "types": ["any"] }],
                    "outputs": [], "artifacts": []
                })
            }
        }
        Some(Target::Node(report))
    }),
    mutation!(GraphMissingTrigger, "turn every trigger into a chat notification", |d, _| {
        for id in d.ids_of(&["trigger.manual", "trigger.schedule"]) {
            let node = d.node_mut(&id);
            node["family"] = json!("notify.chat");
            node["config"] = json!({ "connection": "chat_main", "channel": "#ops" });
        }
        Some(Target::Draft)
    })
    .rule(Rule::NoTrigger)
    .whole("a draft has no trigger only if no part has one"),
    mutation!(GraphUnsupportedRouter, "label a forward edge out of a retrieval as a branch", |d, pick| {
        let i = pick.one(&d.edges_of_kind("forward"))?;
        let from = d.edges()[i]["from"]["node"].as_str()?.to_string();
        if d.family(&from) != Some("dataset.retrieve") {
            return None;
        }
        d.edges_mut()[i]["kind"] = json!("branch");
        d.edges_mut()[i]["branch"] = json!({ "label": "yes" });
        Some(Target::Edge(d.edge_id(i)))
    })
    .rule(Rule::RouterEdges),
    mutation!(GraphEdgeToVisualNode, "wire a retrieval to a note", |d, pick| {
        let fetch = pick.one(&d.ids_of(&["dataset.retrieve"]))?;
        d.nodes_mut().push(json!({ "id": "note_new", "family": "annotation", "text": "hand-off" }));
        let edge = d.forward_edge(&fetch, "dataset", "note_new", "in");
        Some(d.add_edge(edge))
    })
    .rule(Rule::VisualNodeEdge),
    mutation!(GraphEdgeToVisualNode, "wire a note to a retrieval", |d, pick| {
        let fetch = pick.one(&d.ids_of(&["dataset.retrieve"]))?;
        d.nodes_mut().push(json!({ "id": "note_new", "family": "annotation", "text": "hand-off" }));
        let edge = d.forward_edge("note_new", "out", &fetch, "in");
        Some(d.add_edge(edge))
    })
    .rule(Rule::VisualNodeEdge),
    mutation!(GraphUnreachableNode, "add a retrieval that no edge enters", |d, _| {
        d.nodes_mut()
            .push(json!({ "id": "fetch_new", "family": "dataset.retrieve", "config": { "connection": "conn_wh" } }));
        Some(Target::Node("fetch_new".to_string()))
    }),
    mutation!(GraphCycle, "wire a node back to one of its ancestors", |d, pick| {
        let open = d.open_inputs();
        let candidates: Vec<(String, String)> = d
            .ids_of(&ALL_EXECUTABLE)
            .into_iter()
            .filter(|id| d.family(id) != Some("router.switch")) // routers only branch
            .collect::<Vec<_>>()
            .into_iter()
            .flat_map(|id| {
                let ancestors = d.ancestors(&id);
                open.iter().filter(|a| ancestors.contains(*a)).map(|a| (id.clone(), a.clone())).collect::<Vec<_>>()
            })
            .collect();
        let (from, to) = pick.one(&candidates)?;
        let edge = d.forward_edge(&from, d.output_of(&from), &to, "in");
        d.add_edge(edge);
        Some(Target::Draft)
    }),
    mutation!(ContractInvalidEnvelope, "declare a retrieval's contracts in an unknown version", |d, pick| {
        let id = pick.one(&d.ids_of(&["dataset.retrieve"]))?;
        d.node_mut(&id)["contracts"] =
            json!({ "version": "workflow-node-contracts/v2", "inputs": [], "outputs": [], "artifacts": [] });
        Some(Target::Node(id))
    }),
    mutation!(
        ContractInvalidEnvelope,
        "write the contracts of a report feeding a gate by a mapped edge in an unknown version",
        |d, pick| { unreadable_envelope(d, pick, Side::Report, Unreadable::Version) }
    ),
    mutation!(
        ContractInvalidEnvelope,
        "write the contracts of a report feeding a gate by a mapped edge without a version",
        |d, pick| { unreadable_envelope(d, pick, Side::Report, Unreadable::NoVersion) }
    ),
    mutation!(
        ContractInvalidEnvelope,
        "write the contracts of a report feeding a gate by a mapped edge as a string",
        |d, pick| { unreadable_envelope(d, pick, Side::Report, Unreadable::NotObject) }
    ),
    mutation!(
        ContractInvalidEnvelope,
        "write the contracts of a report feeding a gate by a mapped edge with `inputs` an object",
        |d, pick| { unreadable_envelope(d, pick, Side::Report, Unreadable::InputsNotArray) }
    ),
    mutation!(
        ContractInvalidEnvelope,
        "write the contracts of a report feeding a gate by a mapped edge with an input port without types",
        |d, pick| { unreadable_envelope(d, pick, Side::Report, Unreadable::PortWithoutTypes) }
    ),
    mutation!(
        ContractInvalidEnvelope,
        "write the contracts of a report feeding a gate by a mapped edge with an input port whose types are one string",
        |d, pick| { unreadable_envelope(d, pick, Side::Report, Unreadable::TypesNotStrings) }
    ),
    mutation!(
        ContractInvalidEnvelope,
        "write the contracts of a report feeding a gate by a mapped edge with an input port declared twice",
        |d, pick| { unreadable_envelope(d, pick, Side::Report, Unreadable::DuplicatePort) }
    ),
    mutation!(
        ContractInvalidEnvelope,
        "write the contracts of a report feeding a gate by a mapped edge with an artifact on an undeclared output",
        |d, pick| { unreadable_envelope(d, pick, Side::Report, Unreadable::ArtifactOffOutput) }
    ),
    mutation!(
        ContractInvalidEnvelope,
        "give a gate entered by a mapped edge contracts in an unknown version",
        |d, pick| { unreadable_envelope(d, pick, Side::Gate, Unreadable::Version) }
    ),
    mutation!(
        ContractInvalidEnvelope,
        "give a gate entered by a mapped edge contracts without a version",
        |d, pick| { unreadable_envelope(d, pick, Side::Gate, Unreadable::NoVersion) }
    ),
    mutation!(ContractInvalidEnvelope, "give a gate entered by a mapped edge contracts as a string", |d, pick| {
        unreadable_envelope(d, pick, Side::Gate, Unreadable::NotObject)
    }),
    mutation!(
        ContractInvalidEnvelope,
        "give a gate entered by a mapped edge contracts with `inputs` an object",
        |d, pick| { unreadable_envelope(d, pick, Side::Gate, Unreadable::InputsNotArray) }
    ),
    mutation!(
        ContractInvalidEnvelope,
        "give a gate entered by a mapped edge contracts with an input port without types",
        |d, pick| { unreadable_envelope(d, pick, Side::Gate, Unreadable::PortWithoutTypes) }
    ),
    mutation!(
        ContractInvalidEnvelope,
        "give a gate entered by a mapped edge contracts with an input port whose types are one string",
        |d, pick| { unreadable_envelope(d, pick, Side::Gate, Unreadable::TypesNotStrings) }
    ),
    mutation!(
        ContractInvalidEnvelope,
        "give a gate entered by a mapped edge contracts with an input port declared twice",
        |d, pick| { unreadable_envelope(d, pick, Side::Gate, Unreadable::DuplicatePort) }
    ),
    mutation!(
        ContractInvalidEnvelope,
        "give a gate entered by a mapped edge contracts with an artifact on an undeclared output",
        |d, pick| { unreadable_envelope(d, pick, Side::Gate, Unreadable::ArtifactOffOutput) }
    ),
    mutation!(ContractMappingPortMismatch, "map a second output while the edge leaves the first", |d, pick| {
        let (i, report, _) = pick.one(&d.mapped_edges())?;
        d.node_mut(&report)["contracts"]["outputs"]
            .as_array_mut()?
            .push(json!({ "port": "summary", "types": ["document"] }));
        d.edges_mut()[i]["mapping"]["output"] = json!("summary");
        Some(Target::Edge(d.edge_id(i)))
    }),
    mutation!(ContractUnknownPort, "map into an input the gate does not have", |d, pick| {
        let (i, _, _) = pick.one(&d.mapped_edges())?;
        let edge = &mut d.edges_mut()[i];
        edge["to"].as_object_mut()?.shift_remove("port");
        edge["mapping"]["input"] = json!("inbox");
        Some(Target::Edge(d.edge_id(i)))
    }),
    mutation!(ContractIncompatibleTypes, "let the gate's contract accept only images", |d, pick| {
        let (i, _, gate) = pick.one(&d.mapped_edges())?;
        set_gate_input_types(d, &gate, json!(["image"]))?;
        Some(Target::Edge(d.edge_id(i)))
    })
    .rule(Rule::MappedEdges),
    mutation!(ContractPartialTypeOverlap, "let the report emit JSON too where the gate takes documents", |d, pick| {
        let (i, report, gate) = pick.one(&d.mapped_edges())?;
        set_gate_input_types(d, &gate, json!(["document"]))?;
        d.node_mut(&report)["contracts"]["outputs"][0]["types"] = json!(["document", "json"]);
        Some(Target::Edge(d.edge_id(i)))
    })
    .rule(Rule::MappedEdges),
    mutation!(ContractMissingRequiredInput, "require a contract input that only unmapped edges feed", |d, pick| {
        if d.ids_of(&["report.generate"]).iter().all(|r| d.node(r).get("contracts").is_none()) {
            return None; // contract mode is on only when a node declares contracts
        }
        let id = pick.one(&d.ids_of(&["dataset.retrieve"]))?;
        d.node_mut(&id)["contracts"] = json!({
            "version": "workflow-node-contracts/v1",
            "inputs": [{ "port": "in", "required": true, "types": ["any"] }], "outputs": [], "artifacts": []
        });
        Some(Target::Node(id))
    }),
    mutation!(ContractUndeclaredArtifact, "map an artifact the report does not declare", |d, pick| {
        let (i, _, _) = pick.one(&d.mapped_edges())?;
        d.edges_mut()[i]["mapping"]["artifacts"] = json!(["art_missing"]);
        Some(Target::Edge(d.edge_id(i)))
    }),
    mutation!(TriggerUnwired, "add a manual trigger wired to nothing", |d, _| {
        d.nodes_mut().push(json!({ "id": "start_new", "family": "trigger.manual" }));
        Some(Target::Node("start_new".to_string()))
    }),
    mutation!(TriggerInboundEdge, "wire a retrieval into a trigger", |d, pick| {
        let fetch = pick.one(&d.ids_of(&["dataset.retrieve"]))?;
        let trigger = pick.one(&d.ids_of(&["trigger.manual", "trigger.schedule"]))?;
        let edge = d.forward_edge(&fetch, "dataset", &trigger, "in");
        Some(d.add_edge(edge))
    })
    .rule(Rule::EdgeIntoTrigger),
    mutation!(TriggerInboundEdge, "add a manual trigger whose only edge enters another trigger", |d, pick| {
        let trigger = pick.one(&d.ids_of(&["trigger.manual", "trigger.schedule"]))?;
        d.nodes_mut().push(json!({ "id": "start_new", "family": "trigger.manual" }));
        let edge = d.forward_edge("start_new", "out", &trigger, "in");
        Some(d.add_edge(edge))
    })
    .rule(Rule::EdgeIntoTrigger),
    mutation!(TriggerInvalidSchedule, "give a schedule four cron fields", |d, _| {
        Some(Target::Node(schedule_trigger(d, json!({ "cron": "0 6 * *", "timezone": "Europe/Berlin" }))))
    }),
    mutation!(TriggerInvalidTimezone, "misspell a schedule's timezone", |d, _| {
        Some(Target::Node(schedule_trigger(d, json!({ "cron": "0 6 * * 1", "timezone": "Europe/Berlim" }))))
    }),
    mutation!(TriggerScheduleTooFrequent, "fire every five minutes under a fifteen-minute policy", |d, _| {
        const { assert!(MIN_INTERVAL_MINUTES > 5) };
        d.ensure_context();
        Some(Target::Node(schedule_trigger(d, json!({ "cron": "*/5 * * * *", "timezone": "UTC" }))))
    }),
    mutation!(BranchMissingLabel, "add a plain forward edge out of a router", |d, pick| {
        edge_out_of_a_router(d, pick, None)
    })
    .rule(Rule::RouterEdges),
    mutation!(BranchMissingLabel, "remove the label of a router's branch edge", |d, pick| {
        let i = branch_of_a_router(d, pick)?;
        d.edges_mut()[i]["branch"].as_object_mut()?.shift_remove("label");
        Some(Target::Edge(d.edge_id(i)))
    }),
    mutation!(BranchMissingLabel, "turn a router's branch edge into a plain forward edge", |d, pick| {
        let i = branch_of_a_router(d, pick)?;
        let edge = d.edges_mut()[i].as_object_mut()?;
        edge.shift_remove("kind");
        edge.shift_remove("branch");
        Some(Target::Edge(d.edge_id(i)))
    })
    .rule(Rule::RouterEdges),
    mutation!(BranchUnknownLabel, "add a branch with a label the router does not declare", |d, pick| {
        edge_out_of_a_router(d, pick, Some("perhaps"))
    }),
    mutation!(BranchUnknownLabel, "misspell the label of a router's branch edge by one letter", |d, pick| {
        let i = branch_of_a_router(d, pick)?;
        let label = d.edges()[i]["branch"]["label"].as_str()?.to_string();
        let last = if label.ends_with('x') { 'y' } else { 'x' };
        let near = format!("{}{last}", &label[..label.len() - 1]);
        d.edges_mut()[i]["branch"]["label"] = json!(near);
        Some(Target::Edge(d.edge_id(i)))
    }),
    mutation!(BranchUnknownLabel, "relabel a router's branch edge with an unrelated word (`zzzz`)", |d, pick| {
        let i = branch_of_a_router(d, pick)?;
        d.edges_mut()[i]["branch"]["label"] = json!("zzzz");
        Some(Target::Edge(d.edge_id(i)))
    }),
    mutation!(BranchDuplicateLabel, "wire a router's first label a second time", |d, pick| {
        edge_out_of_a_router(d, pick, Some("yes"))
    }),
    mutation!(BranchTooFew, "add a router with a single branch", |d, pick| {
        let from = pick.one(&d.ids_of(&["dataset.retrieve"]))?;
        let to = pick.one(&d.open_inputs())?;
        if d.ancestors(&from).contains(&to) || from == to {
            return None;
        }
        d.nodes_mut().push(
            json!({ "id": "route_new", "family": "router.switch", "config": { "branches": [{ "label": "only" }] } }),
        );
        let feed = d.forward_edge(&from, "dataset", "route_new", "in");
        d.edges_mut().push(feed);
        let branch = d.branch_edge("route_new", &to, "only");
        d.edges_mut().push(branch);
        Some(Target::Node("route_new".to_string()))
    }),
    mutation!(BranchUnhandled, "declare a router label that no edge carries", |d, pick| {
        let router = pick.one(&d.ids_of(&["router.switch"]))?;
        d.node_mut(&router)["config"]["branches"].as_array_mut()?.push(json!({ "label": "later" }));
        Some(Target::Node(router))
    }),
    mutation!(GateMissingEvidence, "add a gate that names no evidence", |d, pick| {
        let from = pick.one(&d.ids_of(&["dataset.retrieve"]))?;
        d.nodes_mut().push(json!({ "id": "gate_new", "family": "gate.approval", "config": { "approvers": ["ops"] } }));
        let edge = d.forward_edge(&from, "dataset", "gate_new", "in");
        d.edges_mut().push(edge);
        Some(Target::Node("gate_new".to_string()))
    }),
    mutation!(GateUnknownEvidence, "add a gate whose evidence no upstream node produces", |d, pick| {
        let from = pick.one(&d.ids_of(&["dataset.retrieve"]))?;
        d.nodes_mut()
            .push(json!({ "id": "gate_new", "family": "gate.approval", "config": { "evidence": ["art_nowhere"] } }));
        let edge = d.forward_edge(&from, "dataset", "gate_new", "in");
        d.edges_mut().push(edge);
        Some(Target::Node("gate_new".to_string()))
    }),
    mutation!(RetryInvalidConfig, "retry a retrieval zero times", |d, pick| {
        let id = pick.one(&d.ids_of(&["dataset.retrieve"]))?;
        let mut edge = d.forward_edge(&id, "dataset", &id, "in");
        edge["kind"] = json!("retry");
        edge["retry"] = json!({ "maxAttempts": 0, "backoffMs": 1000 });
        Some(d.add_edge(edge))
    }),
    mutation!(RetryNotBackward, "retry forward, into a node that is not an ancestor", |d, pick| {
        let from = pick.one(&d.ids_of(&["dataset.retrieve"]))?;
        let ancestors = d.ancestors(&from);
        let targets: Vec<String> =
            d.open_inputs().into_iter().filter(|t| *t != from && !ancestors.contains(t)).collect();
        let to = pick.one(&targets)?;
        let mut edge = d.forward_edge(&from, "dataset", &to, "in");
        edge["kind"] = json!("retry");
        edge["retry"] = json!({ "maxAttempts": 3, "backoffMs": 1000 });
        Some(d.add_edge(edge))
    }),
    mutation!(AgentMissingBinding, "remove an agent's binding", |d, pick| {
        let id = d.some_agent(pick);
        d.node_mut(&id).as_object_mut()?.shift_remove("agent");
        Some(Target::Node(id))
    }),
    mutation!(AgentBindingMissingRow, "bind an agent revision that has no row", |d, pick| {
        let id = d.some_agent(pick);
        d.node_mut(&id)["agent"]["revision"] = json!(99);
        Some(Target::Node(id))
    }),
    mutation!(AgentBindingNotAccepted, "mark an agent's row pending", |d, pick| {
        let id = d.some_agent(pick);
        let agent = d.node_mut(&id)["agent"]["agentId"].clone();
        for row in d.bindings.as_mut()?["rows"].as_array_mut()? {
            if row["agentId"] == agent {
                row["status"] = json!("pending");
            }
        }
        Some(Target::Node(id))
    }),
    mutation!(AgentBindingStatusUnavailable, "check a draft with an agent without binding rows", |d, pick| {
        d.some_agent(pick);
        d.bindings = None;
        Some(Target::Node(d.ids_of(&["agent.task"])[0].clone()))
    })
    .whole("drops the binding rows every part shares"),
];

/// Every family of the generated drafts.
const ALL_FAMILIES: [&str; 10] = [
    "trigger.manual",
    "trigger.schedule",
    "dataset.retrieve",
    "report.generate",
    "notify.chat",
    "notify.email",
    "router.switch",
    "gate.approval",
    "agent.task",
    "annotation",
];

const ALL_EXECUTABLE: [&str; 7] = [
    "dataset.retrieve",
    "report.generate",
    "notify.chat",
    "notify.email",
    "router.switch",
    "gate.approval",
    "agent.task",
];

/// Gives the gate a contract whose `in` takes `types` (mapped edges are typed by contracts).
fn set_gate_input_types(d: &mut Draft, gate: &str, types: Value) -> Option<()> {
    let node = d.node_mut(gate);
    node["contracts"] = json!({
        "version": "workflow-node-contracts/v1", "inputs": [{ "port": "in", "types": types }], "outputs": [], "artifacts": []
    });
    // Only mapped edges may enter the gate: an unmapped one would be port-checked against
    // the new types, a second fault.
    let all_mapped = d
        .edges()
        .iter()
        .filter(|e| e["to"]["node"] == gate && e["kind"] != "retry")
        .all(|e| e.get("mapping").is_some());
    all_mapped.then_some(())
}

/// The first trigger, turned into a schedule trigger with `config`.
fn schedule_trigger(d: &mut Draft, config: Value) -> String {
    let id = d.ids_of(&["trigger.manual", "trigger.schedule"])[0].clone();
    let node = d.node_mut(&id);
    node["family"] = json!("trigger.schedule");
    node["config"] = config;
    id
}

/// An edge from a router of the draft to a node with a `multiple` input that does not
/// precede it (so no cycle closes): a branch labelled `label`, or a plain forward edge.
fn edge_out_of_a_router(d: &mut Draft, pick: &mut Pick, label: Option<&str>) -> Option<Target> {
    let router = pick.one(&d.ids_of(&["router.switch"]))?;
    let ancestors = d.ancestors(&router);
    let targets: Vec<String> = d.open_inputs().into_iter().filter(|t| *t != router && !ancestors.contains(t)).collect();
    let to = pick.one(&targets)?;
    let edge = match label {
        Some(label) => d.branch_edge(&router, &to, label),
        None => d.forward_edge(&router, "out", &to, "in"),
    };
    Some(d.add_edge(edge))
}

/// A branch edge out of a router (every generated branch edge leaves one): its index.
fn branch_of_a_router(d: &Draft, pick: &mut Pick) -> Option<usize> {
    let branches: Vec<usize> = d
        .edges_of_kind("branch")
        .into_iter()
        .filter(|&i| d.edges()[i]["from"]["node"].as_str().and_then(|f| d.family(f)) == Some("router.switch"))
        .filter(|&i| d.edges()[i]["branch"]["label"].is_string())
        .collect();
    pick.one(&branches)
}

/// Misspells `data` as `port` on an unmapped edge into a report (the report's one required
/// input, which that edge alone feeds).
fn misspelt_report_input(d: &mut Draft, pick: &mut Pick, port: &str) -> Option<Target> {
    let feeds: Vec<usize> = d
        .edges_of_kind("forward")
        .into_iter()
        .filter(|&i| {
            let edge = &d.edges()[i];
            edge.get("mapping").is_none()
                && edge["to"]["port"] == "data"
                && edge["to"]["node"].as_str().and_then(|n| d.family(n)) == Some("report.generate")
        })
        .collect();
    let i = pick.one(&feeds)?;
    d.edges_mut()[i]["to"]["port"] = json!(port);
    Some(Target::Edge(d.edge_id(i)))
}

/// Adds `compare_new`, a `report.compare` (two required inputs, each fed by its own edge
/// from a retrieval, so no cycle closes), and misspells the port of one of those edges:
/// by one letter, or (`far`) as an unrelated word.
fn misspelt_comparison(d: &mut Draft, pick: &mut Pick, far: bool) -> Option<Target> {
    let fetches = d.ids_of(&["dataset.retrieve"]);
    let (baseline, current) = (pick.one(&fetches)?, pick.one(&fetches)?);
    d.catalog = Some(catalog_with_compare());
    d.nodes_mut().push(json!({ "id": "compare_new", "family": "report.compare", "config": {} }));
    let mut fed = Vec::new();
    for (from, port) in [(baseline, "baseline"), (current, "current")] {
        let edge = d.forward_edge(&from, "dataset", "compare_new", port);
        fed.push(edge["id"].as_str().expect("has an id").to_string());
        d.edges_mut().push(edge);
    }
    let which = pick.below(2);
    let misspelt = match (which, far) {
        (_, true) => "zzzz",
        (0, false) => "baselinx",
        _ => "currenx",
    };
    let i = d.edges().iter().position(|e| e["id"] == fed[which].as_str())?;
    d.edges_mut()[i]["to"]["port"] = json!(misspelt);
    Some(Target::Edge(fed.swap_remove(which)))
}

/// Which end of a gate-fed mapped edge gets the unreadable envelope.
#[derive(Clone, Copy)]
enum Side {
    /// The report the edge leaves (its envelope declares the mapped output and artifacts).
    Report,
    /// The gate the edge enters (given an envelope declaring its input).
    Gate,
}

/// The ways a `contracts` envelope cannot be read (the explanation page of
/// `contract.invalid_envelope`): each is one fault of the envelope.
#[derive(Clone, Copy)]
enum Unreadable {
    /// `version` is not `workflow-node-contracts/v1`.
    Version,
    /// No `version`.
    NoVersion,
    /// The envelope is not an object.
    NotObject,
    /// `inputs` is not an array.
    InputsNotArray,
    /// An input port without `types`.
    PortWithoutTypes,
    /// An input port whose `types` is not a list.
    TypesNotStrings,
    /// An input port declared twice.
    DuplicatePort,
    /// An artifact on a port that `outputs` does not declare.
    ArtifactOffOutput,
}

/// Makes the envelope on one end of a gate-fed mapped edge (with artifacts) unreadable.
fn unreadable_envelope(d: &mut Draft, pick: &mut Pick, side: Side, form: Unreadable) -> Option<Target> {
    let mapped: Vec<(usize, String, String)> = d
        .mapped_edges()
        .into_iter()
        .filter(|(i, _, _)| d.edges()[*i]["mapping"]["artifacts"].as_array().is_some_and(|a| !a.is_empty()))
        .collect();
    let (_, report, gate) = pick.one(&mapped)?;
    let id = match side {
        Side::Report => report,
        Side::Gate => gate,
    };
    let mut envelope = match side {
        Side::Report => d.node(&id).get("contracts")?.clone(),
        Side::Gate => json!({
            "version": "workflow-node-contracts/v1",
            "inputs": [{ "port": "in", "types": ["any"] }], "outputs": [], "artifacts": []
        }),
    };
    match form {
        Unreadable::Version => envelope["version"] = json!("workflow-node-contracts/v2"),
        Unreadable::NoVersion => drop(envelope.as_object_mut()?.shift_remove("version")),
        Unreadable::NotObject => envelope = json!("workflow-node-contracts/v1"),
        Unreadable::InputsNotArray => envelope["inputs"] = json!({ "port": "in", "types": ["any"] }),
        Unreadable::PortWithoutTypes => envelope["inputs"].as_array_mut()?.push(json!({ "port": "extra" })),
        Unreadable::TypesNotStrings => {
            envelope["inputs"].as_array_mut()?.push(json!({ "port": "extra", "types": "document" }))
        }
        Unreadable::DuplicatePort => {
            let inputs = envelope["inputs"].as_array_mut()?;
            inputs.push(json!({ "port": "extra", "types": ["any"] }));
            inputs.push(json!({ "port": "extra", "types": ["any"] }));
        }
        Unreadable::ArtifactOffOutput => envelope["artifacts"]
            .as_array_mut()?
            .push(json!({ "id": format!("art_{id}_off"), "port": "nowhere", "types": ["document"] })),
    }
    d.node_mut(&id)["contracts"] = envelope;
    Some(Target::Node(id))
}
