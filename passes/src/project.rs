//! Projection of a checked draft into the compiled topology, its hashes (SPEC §4)
//! and the candidate.

use std::collections::HashMap;
use std::sync::Arc;

use little_frontend::json::{JsonTree, JsonValue, NodeIdx};
use std::borrow::Cow;

use little_frontend::json::TreeValue;
use little_hashing::{HashSink, Sink, Value, canonical_hash, write_canonical, write_string};
use little_ir::draft::{Contracts, Mapping, PackageBinding, RetrySettings};
use little_ir::topology::{ExecutionFlags, NodeIndex, TopoNode, Topology, Transition, TransitionEnd};
use serde_json::{Map, json};

use crate::checks::resolve::ResolvedGraph;
use crate::db::SourceFile;
use crate::queries::{DraftIr, parse};

/// `authoredGraphHash`: the workflow id, and the nodes and edges exactly as authored
/// (unknown fields and layout included), each array sorted by id. Streamed from the
/// parsed tree into the digest.
#[salsa::tracked(returns(ref))]
pub fn authored_graph_hash(db: &dyn salsa::Database, file: SourceFile) -> Option<String> {
    let tree = parse(db, file).tree.as_ref()?;
    let root = tree.root();
    let member = |key: &str| tree.get(root, key).map(|m| m.value);
    let mut sink = HashSink::default();
    // The subject's keys, written in canonical (sorted) order.
    for (i, key) in ["edges", "nodes"].into_iter().enumerate() {
        let mut items: Vec<((bool, Cow<'_, str>), NodeIdx)> = member(key)
            .and_then(|idx| tree.value(idx).as_array())
            .unwrap_or(&[])
            .iter()
            .map(|&item| (sort_key(tree, item), item))
            .collect();
        items.sort_by(|a, b| a.0.cmp(&b.0));
        sink.put(if i == 0 { "{" } else { "," });
        write_string(&mut sink, key);
        sink.put(":[");
        for (n, (_, item)) in items.into_iter().enumerate() {
            if n > 0 {
                sink.put(",");
            }
            write_canonical(TreeValue { tree, idx: item }, &mut sink).ok()?;
        }
        sink.put("]");
    }
    sink.put(",\"workflowId\":");
    match member("workflowId") {
        Some(idx) => write_canonical(TreeValue { tree, idx }, &mut sink).ok()?,
        None => sink.put("null"),
    }
    sink.put("}");
    Some(sink.identity())
}

/// Elements sort by id; elements without a string id sort after them by their canonical
/// text, so the order never depends on where they stood.
fn sort_key(tree: &JsonTree, item: NodeIdx) -> (bool, Cow<'_, str>) {
    match tree.get(item, "id").map(|m| tree.value(m.value)) {
        Some(JsonValue::String(id)) => (false, Cow::Borrowed(&**id)),
        _ => {
            let mut text = String::new();
            let _ = write_canonical(TreeValue { tree, idx: item }, &mut text);
            (true, Cow::Owned(text))
        }
    }
}

/// Builds the executable topology: visual-only and unresolved nodes removed, nodes and
/// transitions sorted by id, transitions referring to nodes by dense index.
pub fn build_topology(
    db: &dyn salsa::Database,
    draft: &DraftIr<'_>,
    graph: &ResolvedGraph,
    authored_hash: String,
) -> Option<Topology> {
    let header = &draft.header;
    let mut nodes: Vec<(TopoNode, u32)> = Vec::new();
    for (position, &node) in draft.nodes.iter().enumerate() {
        let graph_node = &graph.nodes[position];
        if graph_node.nth > 0 || !graph_node.is_executable() {
            continue;
        }
        let family = graph_node.family.as_ref().expect("executable");
        let meta = node.meta(db);
        let bindings = node.bindings(db);
        nodes.push((
            TopoNode {
                id: graph_node.id.clone(),
                family: family.id.clone(),
                kind: family.kind,
                semantic: family.semantic.clone(),
                title: meta.title.clone(),
                description: meta.description.clone(),
                flags: ExecutionFlags { worker_slot: family.worker_slot, authored: meta.flags.clone() },
                config: node.config(db).clone().unwrap_or_else(|| Arc::new(serde_json::Value::Object(Map::new()))),
                contracts: graph_node.contracts.clone(),
                packages: bindings.packages.clone(),
                agent: match &bindings.agent {
                    little_frontend::draft::AgentDecl::Present(agent) => Some(agent.clone()),
                    _ => None,
                },
            },
            position as u32,
        ));
    }
    nodes.sort_by(|a, b| a.0.id.cmp(&b.0.id));
    let dense: HashMap<u32, NodeIndex> =
        nodes.iter().enumerate().map(|(i, (_, p))| (*p, NodeIndex(i as u32))).collect();
    let mut transitions: Vec<Transition> = graph
        .edges
        .iter()
        .filter(|e| e.nth == 0)
        .filter_map(|e| {
            Some(Transition {
                id: e.id.clone(),
                from: TransitionEnd { node: *dense.get(&e.from)?, port: e.from_port.clone() },
                to: TransitionEnd { node: *dense.get(&e.to)?, port: e.to_port.clone() },
                kind: e.kind,
                retry: e.retry.clone(),
                branch_label: e.label.clone(),
                mapping: e.mapping.clone(),
            })
        })
        .collect();
    transitions.sort_by(|a, b| a.id.cmp(&b.id));
    let mut layout: Vec<(String, little_ir::draft::Position)> = draft
        .nodes
        .iter()
        .filter(|n| n.nth(db) == 0)
        .filter_map(|n| Some((n.id(db).clone(), (*n.position(db))?)))
        .collect();
    layout.sort_by(|a, b| a.0.cmp(&b.0));
    Some(Topology {
        workflow_id: header.workflow_id.clone()?,
        draft_id: header.draft_id.clone()?,
        revision: header.revision?,
        catalog_version: header.catalog_version.clone()?,
        authored_graph_hash: authored_hash,
        nodes: nodes.into_iter().map(|(n, _)| n).collect(),
        transitions,
        layout,
    })
}

fn contracts_json(c: &Contracts) -> serde_json::Value {
    let ports = |ports: &[little_ir::draft::ContractPort]| {
        ports.iter().map(|p| json!({ "port": p.port, "types": p.types, "required": p.required })).collect::<Vec<_>>()
    };
    json!({
        "version": little_frontend::draft::CONTRACTS_VERSION,
        "inputs": ports(&c.inputs),
        "outputs": ports(&c.outputs),
        "artifacts": c.artifacts.iter().map(|a| json!({ "id": a.id, "port": a.port, "types": a.types })).collect::<Vec<_>>(),
    })
}

fn packages_json(packages: &[PackageBinding]) -> serde_json::Value {
    packages.iter().map(|p| json!({ "name": p.name, "version": p.version, "digest": p.digest })).collect()
}

fn mapping_json(m: &Mapping) -> serde_json::Value {
    json!({ "output": m.output, "input": m.input, "artifacts": m.artifacts })
}

fn retry_json(r: &RetrySettings) -> serde_json::Value {
    json!({ "maxAttempts": r.max_attempts, "backoffMs": r.backoff_ms })
}

/// Which parts of the topology a JSON view includes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// Everything: what `little compile` writes.
    Full,
    /// Less the excluded projections of SPEC §4: what `topologyHash` covers.
    Hashed,
}

/// One node of the topology as JSON.
fn node_json(n: &TopoNode, view: View) -> serde_json::Value {
    let full = view == View::Full;
    let mut o = Map::new();
    o.insert("id".into(), json!(n.id));
    o.insert("family".into(), json!(n.family));
    o.insert("kind".into(), json!(n.kind.as_str()));
    o.insert("semantic".into(), json!(n.semantic));
    if full {
        o.insert("title".into(), json!(n.title));
        o.insert("description".into(), json!(n.description));
    }
    let mut flags = Map::new();
    for (name, value) in &n.flags.authored {
        flags.insert(name.clone(), json!(value));
    }
    if full {
        flags.insert("workerSlot".into(), json!(n.flags.worker_slot));
    }
    o.insert("flags".into(), serde_json::Value::Object(flags));
    o.insert("config".into(), (*n.config).clone());
    o.insert("contracts".into(), n.contracts.as_ref().map_or(serde_json::Value::Null, contracts_json));
    o.insert("packages".into(), packages_json(&n.packages));
    o.insert(
        "agent".into(),
        n.agent.as_ref().map_or(serde_json::Value::Null, |a| json!({ "agentId": a.agent_id, "revision": a.revision })),
    );
    serde_json::Value::Object(o)
}

/// One transition of the topology as JSON.
fn transition_json(topology: &Topology, t: &Transition, view: View) -> serde_json::Value {
    let mut o = Map::new();
    o.insert("id".into(), json!(t.id));
    o.insert("from".into(), json!({ "node": topology.node(t.from.node).id, "port": t.from.port }));
    o.insert("to".into(), json!({ "node": topology.node(t.to.node).id, "port": t.to.port }));
    o.insert("kind".into(), json!(t.kind));
    o.insert("retry".into(), t.retry.as_ref().map_or(serde_json::Value::Null, retry_json));
    if view == View::Full {
        o.insert("branch".into(), t.branch_label.as_ref().map_or(serde_json::Value::Null, |l| json!({ "label": l })));
    }
    o.insert("mapping".into(), t.mapping.as_ref().map_or(serde_json::Value::Null, mapping_json));
    serde_json::Value::Object(o)
}

/// The topology as JSON.
pub fn topology_json(topology: &Topology, view: View) -> serde_json::Value {
    let mut o = Map::new();
    o.insert("workflowId".into(), json!(topology.workflow_id));
    o.insert("catalogVersion".into(), json!(topology.catalog_version));
    if view == View::Full {
        o.insert("draftId".into(), json!(topology.draft_id));
        o.insert("revision".into(), json!(topology.revision));
        o.insert("authoredGraphHash".into(), json!(topology.authored_graph_hash));
        let layout: Map<String, serde_json::Value> =
            topology.layout.iter().map(|(id, p)| (id.clone(), json!({ "x": p.x, "y": p.y }))).collect();
        o.insert("layout".into(), serde_json::Value::Object(layout));
    }
    o.insert("nodes".into(), topology.nodes.iter().map(|n| node_json(n, view)).collect());
    o.insert("transitions".into(), topology.transitions.iter().map(|t| transition_json(topology, t, view)).collect());
    serde_json::Value::Object(o)
}

/// `topologyHash` (SPEC §4): the canonical text of `topology_json(…, View::Hashed)`,
/// written straight into the digest, member by member in canonical order, so that no
/// copy of the topology or of any config is built. `streamed_hashes_equal_the_hash_of_the_whole_canonical_document`
/// (conformance) holds it to the JSON view.
pub fn topology_hash(topology: &Topology) -> String {
    let mut out = HashSink::default();
    let finite = "topology JSON holds only finite numbers";
    let out = &mut out;
    let field = |out: &mut HashSink, first: bool, key: &str| {
        out.put(if first { "{" } else { "," });
        write_string(out, key);
        out.put(":");
    };
    let value = |out: &mut HashSink, v: &serde_json::Value| write_canonical(v, out).expect(finite);
    // Keys in canonical (UTF-16 sorted) order at every level.
    field(out, true, "catalogVersion");
    write_string(out, &topology.catalog_version);
    out.put(",\"nodes\":[");
    for (i, n) in topology.nodes.iter().enumerate() {
        if i > 0 {
            out.put(",");
        }
        field(out, true, "agent");
        match &n.agent {
            Some(a) => value(out, &json!({ "agentId": a.agent_id, "revision": a.revision })),
            None => out.put("null"),
        }
        field(out, false, "config");
        value(out, &n.config);
        field(out, false, "contracts");
        match &n.contracts {
            Some(c) => value(out, &contracts_json(c)),
            None => out.put("null"),
        }
        field(out, false, "family");
        write_string(out, &n.family);
        field(out, false, "flags");
        if n.flags.authored.is_empty() {
            out.put("{}");
        } else {
            let flags: Map<String, serde_json::Value> =
                n.flags.authored.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
            value(out, &serde_json::Value::Object(flags));
        }
        field(out, false, "id");
        write_string(out, &n.id);
        field(out, false, "kind");
        write_string(out, n.kind.as_str());
        field(out, false, "packages");
        value(out, &packages_json(&n.packages));
        field(out, false, "semantic");
        write_string(out, &n.semantic);
        out.put("}");
    }
    out.put("],\"transitions\":[");
    for (i, t) in topology.transitions.iter().enumerate() {
        if i > 0 {
            out.put(",");
        }
        field(out, true, "from");
        write_end(out, &topology.node(t.from.node).id, &t.from.port);
        field(out, false, "id");
        write_string(out, &t.id);
        field(out, false, "kind");
        write_string(out, t.kind.as_str());
        field(out, false, "mapping");
        match &t.mapping {
            Some(m) => value(out, &mapping_json(m)),
            None => out.put("null"),
        }
        field(out, false, "retry");
        match &t.retry {
            Some(r) => value(out, &retry_json(r)),
            None => out.put("null"),
        }
        field(out, false, "to");
        write_end(out, &topology.node(t.to.node).id, &t.to.port);
        out.put("}");
    }
    out.put("],\"workflowId\":");
    write_string(out, &topology.workflow_id);
    out.put("}");
    std::mem::take(out).identity()
}

/// `{"node":…,"port":…}` of a transition end, canonical.
fn write_end(out: &mut HashSink, node: &str, port: &str) {
    out.put("{\"node\":");
    write_string(out, node);
    out.put(",\"port\":");
    write_string(out, port);
    out.put("}");
}

/// The issued candidate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub id: String,
    pub workflow_id: String,
    pub draft_id: String,
    pub revision: u64,
    pub catalog_version: String,
    pub authored_graph_hash: String,
    pub topology_hash: String,
    pub binding_status: String,
}

impl Candidate {
    /// The candidate's id is the first 16 hex digits of the hash of its other fields.
    pub fn new(topology: &Topology, topology_hash: String, binding_status: &str) -> Candidate {
        let mut candidate = Candidate {
            id: String::new(),
            workflow_id: topology.workflow_id.clone(),
            draft_id: topology.draft_id.clone(),
            revision: topology.revision,
            catalog_version: topology.catalog_version.clone(),
            authored_graph_hash: topology.authored_graph_hash.clone(),
            topology_hash,
            binding_status: binding_status.to_string(),
        };
        let hash = canonical_hash(&Value::from(&candidate.to_json())).expect("finite");
        candidate.id = format!("cand_{}", little_hashing::short_id(&hash));
        candidate
    }

    pub fn to_json(&self) -> serde_json::Value {
        let mut o = Map::new();
        if !self.id.is_empty() {
            o.insert("id".into(), json!(self.id));
        }
        o.insert("workflowId".into(), json!(self.workflow_id));
        o.insert("draftId".into(), json!(self.draft_id));
        o.insert("revision".into(), json!(self.revision));
        o.insert("catalogVersion".into(), json!(self.catalog_version));
        o.insert("authoredGraphHash".into(), json!(self.authored_graph_hash));
        o.insert("topologyHash".into(), json!(self.topology_hash));
        o.insert("bindingStatus".into(), json!(self.binding_status));
        serde_json::Value::Object(o)
    }
}
