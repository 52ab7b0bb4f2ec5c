//! One mutation per draft code: each injects exactly one fault into a generated valid
//! draft ([`crate::strategies::valid_draft`]) and says what `little check` must report —
//! the code, the node or edge it is about, and (from the code) whether it blocks.
//!
//! Like the strategies, this module is written from SPEC.md and docs/decisions.md alone:
//! it never calls into the passes. A mutation that needs something the draft lacks (a
//! router, a gate, a mapped edge) either adds it, clean, or returns `None`.

use std::collections::BTreeSet;

use little_diagnostics::Code;
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
    /// The node (or edge) that at least one diagnostic of `code` names.
    pub node: Option<String>,
    pub edge: Option<String>,
}

/// A fault of one code.
pub struct Mutation {
    pub code: Code,
    /// What the mutation does, for failure messages.
    pub does: &'static str,
    apply: fn(&mut Draft, &mut Pick) -> Option<Target>,
}

impl Mutation {
    /// Injects the fault, choosing where with `seed`; `None` when the draft has no place
    /// for it.
    pub fn inject(&self, valid: &ValidDraft, seed: u64) -> Option<Injected> {
        let mut draft = Draft {
            value: valid.draft.clone(),
            context: valid.context.clone(),
            bindings: valid.bindings.clone(),
            text: None,
        };
        let mut pick = Pick(seed.max(1));
        let target = (self.apply)(&mut draft, &mut pick)?;
        let setup = Setup {
            context: draft.context.as_ref().map(|c| c.to_string()),
            bindings: draft.bindings.as_ref().map(|b| b.to_string()),
            ..Setup::default()
        };
        let text = draft.text.take().unwrap_or_else(|| serde_json::to_string_pretty(&draft.value).expect("serializes"));
        let (node, edge) = match target {
            Target::Draft => (None, None),
            Target::Node(id) => (Some(id), None),
            Target::Edge(id) => (None, Some(id)),
        };
        Some(Injected { text, setup, code: self.code, node, edge })
    }
}

/// What a mutation's diagnostic is about.
enum Target {
    Draft,
    Node(String),
    Edge(String),
}

/// The draft being mutated, with the documents it is checked with.
struct Draft {
    value: Value,
    context: Option<Value>,
    bindings: Option<Value>,
    /// Set by mutations that work on the text (a parse fault has no JSON value).
    text: Option<String>,
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

/// Every mutation, one per code a draft can get (parse and shape faults included).
pub fn all() -> &'static [Mutation] {
    MUTATIONS
}

macro_rules! mutation {
    ($code:ident, $does:literal, $apply:expr) => {
        Mutation { code: Code::$code, does: $does, apply: $apply }
    };
}

static MUTATIONS: &[Mutation] = &[
    mutation!(ParseInvalidJson, "cut the text short", |d, pick| {
        let text = serde_json::to_string_pretty(&d.value).unwrap();
        let at = 1 + pick.below(text.len() - 2);
        d.text = Some(text[..at].to_string());
        Some(Target::Draft)
    }),
    mutation!(ParseDuplicateKey, "write a node's id twice", |d, pick| {
        let id = pick.one(&d.ids_of(&ALL_FAMILIES))?;
        let text = serde_json::to_string_pretty(&d.value).unwrap();
        let needle = format!("\"id\": \"{id}\"");
        let at = text.find(&needle)? + needle.len();
        d.text = Some(format!("{}, {}{}", &text[..at], needle, &text[at..]));
        Some(Target::Draft)
    }),
    mutation!(ParseUnsafeInteger, "place a node at x = 2^53 + 1", |d, pick| {
        let id = pick.one(&d.ids_of(&ALL_FAMILIES))?;
        d.node_mut(&id)["position"] = json!({ "x": 9_007_199_254_740_993u64, "y": 0 });
        Some(Target::Draft)
    }),
    mutation!(ParseUnsupportedFormat, "set `format` to a version that does not exist", |d, _| {
        d.value["format"] = json!("workflow-draft/v2");
        Some(Target::Draft)
    }),
    mutation!(RequestMissingIdentity, "remove or empty one identity field", |d, pick| {
        match pick.below(4) {
            0 => d.value["tenantId"] = json!(""),
            1 => drop(d.value.as_object_mut().unwrap().shift_remove("workflowId")),
            2 => drop(d.value.as_object_mut().unwrap().shift_remove("draftId")),
            _ => drop(d.value.as_object_mut().unwrap().shift_remove("revision")),
        }
        Some(Target::Draft)
    }),
    mutation!(RequestTenantMismatch, "check against another tenant's context", |d, _| {
        d.ensure_context();
        d.value["tenantId"] = json!("globex");
        Some(Target::Draft)
    }),
    mutation!(DraftInvalidShape, "give a node a numeric title", |d, pick| {
        let id = pick.one(&d.ids_of(&ALL_FAMILIES))?;
        d.node_mut(&id)["title"] = json!(42);
        Some(Target::Node(id))
    }),
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
    }),
    mutation!(CatalogUnknownFamily, "misspell a node's family", |d, pick| {
        let id = pick.one(&d.ids_of(&ALL_FAMILIES))?;
        let family = d.family(&id)?.to_string();
        d.node_mut(&id)["family"] = json!(format!("{}x", family));
        Some(Target::Node(id))
    }),
    mutation!(CatalogInvalidConfig, "make a retrieval's connection a number", |d, pick| {
        let id = pick.one(&d.ids_of(&["dataset.retrieve"]))?;
        d.node_mut(&id)["config"]["connection"] = json!(42);
        Some(Target::Node(id))
    }),
    mutation!(CatalogCapabilityUnavailable, "take the warehouse capability from the tenant", |d, _| {
        d.ensure_context();
        let caps = d.context.as_mut().unwrap()["capabilities"].as_array_mut().unwrap();
        caps.retain(|c| c != "data.warehouse");
        Some(Target::Node(d.ids_of(&["dataset.retrieve"])[0].clone()))
    }),
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
    }),
    mutation!(GraphInvalidPort, "misspell the input port of an edge", |d, pick| {
        let i = pick.one(&d.edges_of_kind("forward"))?;
        if d.edges()[i].get("mapping").is_some() {
            return None;
        }
        let port = d.edges()[i]["to"]["port"].as_str()?.to_string();
        d.edges_mut()[i]["to"]["port"] = json!(format!("{port}x"));
        Some(Target::Edge(d.edge_id(i)))
    }),
    mutation!(GraphSelfConnection, "wire a retrieval to itself", |d, pick| {
        let id = pick.one(&d.ids_of(&["dataset.retrieve"]))?;
        let edge = d.forward_edge(&id, "dataset", &id, "in");
        Some(d.add_edge(edge))
    }),
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
    }),
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
    }),
    mutation!(GraphUnsupportedRouter, "label a forward edge out of a retrieval as a branch", |d, pick| {
        let i = pick.one(&d.edges_of_kind("forward"))?;
        let from = d.edges()[i]["from"]["node"].as_str()?.to_string();
        if d.family(&from) != Some("dataset.retrieve") {
            return None;
        }
        d.edges_mut()[i]["kind"] = json!("branch");
        d.edges_mut()[i]["branch"] = json!({ "label": "yes" });
        Some(Target::Edge(d.edge_id(i)))
    }),
    mutation!(GraphEdgeToVisualNode, "wire a retrieval to a note", |d, pick| {
        let fetch = pick.one(&d.ids_of(&["dataset.retrieve"]))?;
        d.nodes_mut().push(json!({ "id": "note_new", "family": "annotation", "text": "hand-off" }));
        let edge = d.forward_edge(&fetch, "dataset", "note_new", "in");
        Some(d.add_edge(edge))
    }),
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
    }),
    mutation!(ContractPartialTypeOverlap, "let the report emit JSON too where the gate takes documents", |d, pick| {
        let (i, report, gate) = pick.one(&d.mapped_edges())?;
        set_gate_input_types(d, &gate, json!(["document"]))?;
        d.node_mut(&report)["contracts"]["outputs"][0]["types"] = json!(["document", "json"]);
        Some(Target::Edge(d.edge_id(i)))
    }),
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
    }),
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
    }),
    mutation!(BranchUnknownLabel, "add a branch with a label the router does not declare", |d, pick| {
        edge_out_of_a_router(d, pick, Some("perhaps"))
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
    }),
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
