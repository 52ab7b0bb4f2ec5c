//! Projection of a checked draft into the compiled topology, its hashes (docs/reference/hashes.md)
//! and the candidate.

use std::collections::HashMap;
use std::sync::Arc;

use little_frontend::draft::{NodeBindings, NodeMeta, config_value};
use little_frontend::json::{ElementParser, JsonTree, JsonValue, NodeIdx};

use little_frontend::json::TreeValue;
use little_hashing::{HashSink, Sink, Walk, hash_canonical, write_canonical, write_string};
use little_ir::draft::{Config, Contracts, Header, Mapping, PackageBinding, RetrySettings};
use little_ir::topology::{ExecutionFlags, NodeIndex, TopoNode, Topology, Transition, TransitionEnd};
use serde_json::{Map, json};

use crate::checks::resolve::{GraphEdge, ResolvedGraph, resolved_graph};
use crate::db::{SourceFile, Workspace};
use crate::prefetch;
use crate::queries::{draft_ir, outline};
use crate::rules::{NodeFields, TrackedNode};

/// `authoredGraphHash`: the workflow id, and the nodes and edges exactly as authored
/// (unknown fields and layout included), each array sorted by id. Streamed from the
/// draft's outline into the digest, one element read at a time.
#[salsa::tracked(returns(ref))]
pub fn authored_graph_hash(db: &dyn salsa::Database, file: SourceFile) -> Option<String> {
    authored_hash(outline(db, file).tree.as_ref()?)
}

/// [`authored_graph_hash`] of a draft's outline, for either driver, on this thread.
pub fn authored_hash(tree: &JsonTree) -> Option<String> {
    let hash = AuthoredHash::new(tree);
    let mut feed = hash.feed();
    for part in 0..hash.parts() {
        feed.take(&hash, part, hash.write_part(part));
    }
    feed.finish(&hash)
}

/// How many elements one part of the authored hash holds: enough that a part outweighs
/// taking it, few enough that the parts written ahead of the digest stay small.
const ELEMENTS_A_PART: usize = 4096;

/// The subject's arrays, in canonical (sorted) order of their keys.
const AUTHORED_ARRAYS: [&str; 2] = ["edges", "nodes"];

/// `authoredGraphHash` in parts: the elements of `edges`, then of `nodes`, each array in
/// authored order ([`authored_order`]), cut into runs whose canonical texts may be written
/// on several threads ([`AuthoredHash::write_part`]) and are fed to the one digest in
/// order ([`AuthoredFeed`]). The canonical text is the one [`authored_hash`] has always
/// streamed: only where it is written changed.
pub struct AuthoredHash<'t> {
    tree: &'t JsonTree,
    /// Each array's elements (none when it is absent or not an array).
    items: [&'t [NodeIdx]; 2],
    /// Each array's elements in authored order, sorted by the first part that needs them.
    orders: [std::sync::OnceLock<Vec<NodeIdx>>; 2],
    /// Each part: its array, and its range of that array's order.
    parts: Vec<(usize, std::ops::Range<usize>)>,
}

impl<'t> AuthoredHash<'t> {
    /// The parts of a draft's authored hash (nothing is sorted or written yet).
    pub fn new(tree: &'t JsonTree) -> AuthoredHash<'t> {
        let items = AUTHORED_ARRAYS.map(|key| {
            let member = tree.get(tree.root(), key).map(|m| m.value);
            member.and_then(|idx| tree.value(idx).as_array()).unwrap_or(&[])
        });
        let parts = (0..2)
            .flat_map(|array| {
                let count = items[array].len();
                (0..count.div_ceil(ELEMENTS_A_PART))
                    .map(move |part| (array, part * ELEMENTS_A_PART..count.min((part + 1) * ELEMENTS_A_PART)))
            })
            .collect();
        AuthoredHash { tree, items, orders: Default::default(), parts }
    }

    /// How many parts there are.
    pub fn parts(&self) -> usize {
        self.parts.len()
    }

    /// A digest that takes the parts' texts in any order and reads them in order.
    pub fn feed(&self) -> AuthoredFeed {
        AuthoredFeed {
            sink: HashSink::default(),
            waiting: vec![None; self.parts.len()],
            next: 0,
            opened: 0,
            failed: false,
        }
    }

    /// The canonical text of part `part`: its elements, each after a comma unless it is
    /// its array's first. `None` when one has no canonical form (the hash has none).
    pub fn write_part(&self, part: usize) -> Option<String> {
        let (array, range) = self.parts[part].clone();
        let tree = self.tree;
        let order = self.orders[array].get_or_init(|| authored_order(tree, self.items[array]));
        let order = &order[range.clone()];
        let bytes: usize = order.iter().map(|&item| tree.span(item).len()).sum();
        let mut text = String::with_capacity(bytes + order.len());
        let mut walk: Walk<'static, TreeValue<'static>> = Walk::default();
        let mut elements = ElementParser::new(tree.text());
        for (n, &item) in order.iter().enumerate() {
            if let Some(&ahead) = order.get(n + prefetch::AHEAD) {
                let ahead = tree.span(ahead);
                prefetch::bytes(&tree.text().as_bytes()[ahead.start as usize..ahead.end as usize], 4);
            }
            if range.start + n > 0 {
                text.push(',');
            }
            let value = match tree.value(item) {
                JsonValue::Elided => {
                    let element = elements.parse(tree.span(item));
                    TreeValue { tree: element, idx: element.root() }
                }
                _ => TreeValue { tree, idx: item },
            };
            let mut element_walk = std::mem::take(&mut walk).recycle();
            element_walk.write(value, &mut text).ok()?;
            walk = element_walk.recycle();
        }
        Some(text)
    }
}

/// The digest of an [`AuthoredHash`], fed its parts' texts as they are written, in any
/// order: each is read as soon as the parts before it were, so that only the parts
/// written ahead of their turn are held.
pub struct AuthoredFeed {
    sink: HashSink,
    /// The parts written whose turn has not come (`Some(None)`: a part without a text).
    waiting: Vec<Option<Option<String>>>,
    /// The next part to read.
    next: usize,
    /// How many of the arrays have been opened.
    opened: usize,
    failed: bool,
}

impl AuthoredFeed {
    /// Takes part `part`'s text, and reads every part whose turn has come.
    pub fn take(&mut self, hash: &AuthoredHash<'_>, part: usize, text: Option<String>) {
        self.waiting[part] = Some(text);
        while let Some(text) = self.waiting.get_mut(self.next).and_then(Option::take) {
            let (array, _) = hash.parts[self.next];
            self.open_through(array);
            match text {
                Some(text) => self.sink.put(&text),
                None => self.failed = true,
            }
            self.next += 1;
        }
    }

    /// Opens the arrays up to `array`: `{"edges":[`, then `],"nodes":[`.
    fn open_through(&mut self, array: usize) {
        while self.opened <= array {
            self.sink.put(if self.opened == 0 { "{" } else { "]," });
            write_string(&mut self.sink, AUTHORED_ARRAYS[self.opened]);
            self.sink.put(":[");
            self.opened += 1;
        }
    }

    /// The hash, once every part was taken; `None` when one had no canonical form.
    pub fn finish(mut self, hash: &AuthoredHash<'_>) -> Option<String> {
        assert_eq!(self.next, hash.parts.len(), "every part of the authored hash is fed before it is finished");
        if self.failed {
            return None;
        }
        self.open_through(AUTHORED_ARRAYS.len() - 1);
        self.sink.put("],\"workflowId\":");
        let tree = hash.tree;
        match tree.get(tree.root(), "workflowId").map(|m| m.value) {
            Some(idx) => Walk::default().write(TreeValue { tree, idx }, &mut self.sink).ok()?,
            None => self.sink.put("null"),
        }
        self.sink.put("}");
        Some(self.sink.identity())
    }
}

/// Elements sort by id; elements without a string id sort after them by their canonical
/// text, so the order never depends on where they stood.
fn authored_order(tree: &JsonTree, items: &[NodeIdx]) -> Vec<NodeIdx> {
    let mut with_id = Vec::with_capacity(items.len());
    let mut without_id = Vec::new();
    for &item in items {
        match tree.element_id(item) {
            Some(id) => with_id.push((id, item)),
            None => {
                let mut text = String::new();
                let _ = match tree.element(item) {
                    Some(element) => write_canonical(TreeValue { tree: &element, idx: element.root() }, &mut text),
                    None => write_canonical(TreeValue { tree, idx: item }, &mut text),
                };
                without_id.push((text, item));
            }
        }
    }
    let by_id = text_order(&with_id, |(id, _)| id).into_iter().map(|i| with_id[i as usize].1);
    let by_text = text_order(&without_id, |(text, _)| text).into_iter().map(|i| without_id[i as usize].1);
    by_id.chain(by_text).collect()
}

/// The positions of `items` in byte order of their text keys, stably (equal keys keep
/// their order): callers read the items through it.
///
/// Sorting a million ids by comparing them follows two pointers per comparison, each a
/// cache miss once the ids no longer fit in the cache: the sort grew faster than the
/// draft. This sorts compact (16-byte prefix, position) pairs instead, and reads the whole
/// keys only to break ties between equal prefixes. The items are not moved: following the
/// permutation's cycles to move them in place is a chain of dependent cache misses at a
/// million (a tenth of the growth from 100,000 nodes), while reading them in this order
/// issues independent loads. A prefix is padded with zero bytes, the smallest byte, so
/// two different prefixes order as their keys do.
fn text_order<T>(items: &[T], key: impl Fn(&T) -> &str) -> Vec<u32> {
    fn prefix(text: &str) -> [u8; 16] {
        let mut bytes = [0u8; 16];
        let n = text.len().min(16);
        bytes[..n].copy_from_slice(&text.as_bytes()[..n]);
        bytes
    }
    let mut keyed: Vec<([u8; 16], u32)> =
        items.iter().enumerate().map(|(i, item)| (prefix(key(item)), i as u32)).collect();
    keyed.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0).then_with(|| key(&items[a.1 as usize]).cmp(key(&items[b.1 as usize]))).then(a.1.cmp(&b.1))
    });
    keyed.into_iter().map(|(_, i)| i).collect()
}

#[cfg(test)]
mod sort_tests {
    /// Against the standard library's stable sort, on keys that share long prefixes and
    /// repeat (so that ties of prefix, and of whole keys, are both broken right).
    #[test]
    fn text_order_is_a_stable_sort_by_key() {
        let items: Vec<(String, usize)> = (0..500)
            .map(|i| (format!("a_very_long_shared_prefix_{}", (i * 7919) % 97), i))
            .chain((0..50).map(|i| (format!("{}", (i * 31) % 7), 500 + i)))
            .chain([("".to_string(), 999)])
            .collect();
        let mut expected = items.clone();
        expected.sort_by(|a, b| a.0.cmp(&b.0));
        let sorted: Vec<_> =
            super::text_order(&items, |(key, _)| key).into_iter().map(|i| items[i as usize].clone()).collect();
        assert_eq!(sorted, expected);
    }
}

#[cfg(test)]
mod authored_tests {
    use std::sync::Arc;

    use little_frontend::reparse::{DraftOutline, ELEMENT_ARRAYS};

    use super::{AuthoredHash, ELEMENTS_A_PART, authored_hash};

    /// A draft of `count` nodes and as many edges, a few of each without an id, written
    /// out of id order.
    fn draft(count: usize) -> String {
        let node = |i: usize| match i % 97 {
            0 => format!(r#"{{"title":"no id {i}","config":{{"b":[1,{{"z":"\u00e9","a":null}}],"a":true}}}}"#),
            _ => format!(
                r#"{{"id":"n{}","family":"agent.llm","config":{{"k":{i},"s":"x\ty"}},"position":{{"y":1,"x":2}}}}"#,
                (i * 7919) % count
            ),
        };
        let edge = |i: usize| match i % 89 {
            0 => format!(r#"{{"from":{{"node":"n{i}"}},"n":{i}}}"#),
            _ => format!(
                r#"{{"id":"e{}","to":{{"node":"n1"}},"from":{{"node":"n{i}","port":"out"}}}}"#,
                (i * 104_729) % count
            ),
        };
        let nodes: Vec<String> = (0..count).map(node).collect();
        let edges: Vec<String> = (0..count).map(edge).collect();
        format!(
            r#"{{"format":"workflow-draft/v1","workflowId":"w","nodes":[{}],"edges":[{}]}}"#,
            nodes.join(",\n"),
            edges.join(", ")
        )
    }

    /// The hash as its definition reads: the subject built as a JSON value (each array
    /// sorted by id, elements without one after them by their canonical text) and hashed
    /// whole.
    fn by_definition(text: &str) -> String {
        let draft: serde_json::Value = serde_json::from_str(text).expect("a draft");
        let sorted = |key: &str| {
            let mut items: Vec<(Option<String>, String, serde_json::Value)> = draft[key]
                .as_array()
                .expect("an array")
                .iter()
                .map(|item| {
                    let id = item.get("id").and_then(|id| id.as_str()).map(str::to_owned);
                    let mut canonical = String::new();
                    little_hashing::write_canonical(item, &mut canonical).expect("canonical");
                    (id, canonical, item.clone())
                })
                .collect();
            items.sort_by(|a, b| match (&a.0, &b.0) {
                (Some(x), Some(y)) => x.cmp(y),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => a.1.cmp(&b.1),
            });
            serde_json::Value::Array(items.into_iter().map(|(_, _, item)| item).collect())
        };
        let subject = serde_json::json!({
            "edges": sorted("edges"),
            "nodes": sorted("nodes"),
            "workflowId": draft["workflowId"],
        });
        little_hashing::hash_canonical(&subject).expect("a hash")
    }

    /// The authored hash in parts, written in any order, is the hash of its definition,
    /// with one part or many, and whichever part is fed first.
    #[test]
    fn the_authored_hash_in_parts_is_the_hash_of_the_whole_subject() {
        for count in [1, 5, ELEMENTS_A_PART, ELEMENTS_A_PART + 1, 3 * ELEMENTS_A_PART + 17] {
            let text = draft(count);
            let outline = DraftOutline::parse(Arc::from(text.as_str()));
            let tree = outline.tree.as_ref().expect("a tree");
            let expected = by_definition(&text);
            assert_eq!(authored_hash(tree).as_deref(), Some(expected.as_str()), "{count} elements, in order");
            let hash = AuthoredHash::new(tree);
            assert_eq!(hash.parts(), 2 * count.div_ceil(ELEMENTS_A_PART), "{count} elements");
            let mut feed = hash.feed();
            for part in (0..hash.parts()).rev() {
                feed.take(&hash, part, hash.write_part(part));
            }
            assert_eq!(feed.finish(&hash).as_deref(), Some(expected.as_str()), "{count} elements, backwards");
        }
        // The same with the elements kept in the tree (not elided) as an editor's may be.
        let text = draft(ELEMENT_ARRAYS.len() * 3);
        let tree = little_frontend::json::parse(&text).tree.expect("a tree");
        assert_eq!(authored_hash(&tree), Some(by_definition(&text)));
    }
}

/// The executable nodes of a draft in topology order: first occurrences of ids whose
/// family executes, sorted by id. Both the hash and the compiled topology use it.
fn executable_nodes(graph: &ResolvedGraph) -> Vec<u32> {
    let nodes: Vec<(&str, u32)> = (0..graph.nodes.len() as u32)
        .filter(|&i| graph.node(i).nth == 0 && graph.node(i).is_executable())
        .map(|i| (graph.node(i).id.as_str(), i))
        .collect();
    text_order(&nodes, |(id, _)| id).into_iter().map(|at| nodes[at as usize].1).collect()
}

/// The resolved edges of a draft in topology order: first occurrences, sorted by id.
/// Every resolved edge joins two executable nodes.
fn executable_edges(graph: &ResolvedGraph) -> Vec<&GraphEdge> {
    let edges: Vec<&GraphEdge> = graph.edges.iter().filter(|e| e.nth == 0).collect();
    text_order(&edges, |e| &e.id).into_iter().map(|at| edges[at as usize]).collect()
}

/// The compiled topology of a draft (what `little compile` writes), whether or not
/// something blocks; `None` when the draft lacks its identity.
#[salsa::tracked(returns(ref))]
pub fn compiled_topology(db: &dyn salsa::Database, workspace: Workspace, file: SourceFile) -> Option<Arc<Topology>> {
    let draft = draft_ir(db, workspace, file).as_ref()?;
    let graph = resolved_graph(db, workspace, file);
    let authored = authored_graph_hash(db, file).clone()?;
    build_topology(&draft.header, &TrackedNode::all(db, &draft.nodes), graph, authored).map(Arc::new)
}

/// Builds the executable topology: visual-only and unresolved nodes removed, nodes and
/// transitions sorted by id, transitions referring to nodes by dense index.
pub fn build_topology(
    header: &Header,
    draft_nodes: &[impl NodeFields],
    graph: &ResolvedGraph,
    authored_hash: String,
) -> Option<Topology> {
    let order = executable_nodes(graph);
    let mut dense: HashMap<u32, NodeIndex> = HashMap::with_capacity(order.len());
    let mut nodes = Vec::with_capacity(order.len());
    for (slot, &position) in order.iter().enumerate() {
        dense.insert(position, NodeIndex(slot as u32));
        let graph_node = graph.node(position);
        let node = &draft_nodes[position as usize];
        let family = graph_node.family.as_ref().expect("executable");
        let meta = node.meta();
        let bindings = node.bindings();
        nodes.push(TopoNode {
            id: graph_node.id.to_string(),
            family: family.id.clone(),
            kind: family.kind,
            semantic: family.semantic.clone(),
            title: meta.title.as_deref().map(str::to_string),
            description: meta.description().map(str::to_string),
            flags: ExecutionFlags { worker_slot: family.worker_slot, authored: meta.flags().to_vec() },
            config: Arc::new(
                node.config().as_ref().map_or_else(|| serde_json::Value::Object(Map::new()), config_value),
            ),
            contracts: graph_node.declared_contracts().cloned(),
            packages: bindings.packages().to_vec(),
            agent: match bindings.agent() {
                little_frontend::draft::AgentDecl::Present(agent) => Some(agent.clone()),
                _ => None,
            },
        });
    }
    let transitions = executable_edges(graph)
        .into_iter()
        .map(|e| Transition {
            id: e.id.to_string(),
            from: TransitionEnd { node: dense[&e.from], port: e.from_port.to_string() },
            to: TransitionEnd { node: dense[&e.to], port: e.to_port.to_string() },
            kind: e.kind,
            retry: e.retry().cloned(),
            branch_label: e.label().map(str::to_string),
            mapping: e.mapping().cloned(),
        })
        .collect();
    let positioned: Vec<(&str, little_ir::draft::Position)> =
        draft_nodes.iter().filter(|n| n.nth() == 0).filter_map(|n| Some((n.id().as_str(), (*n.position())?))).collect();
    let layout: Vec<(String, little_ir::draft::Position)> = text_order(&positioned, |(id, _)| id)
        .into_iter()
        .map(|at| (positioned[at as usize].0.to_string(), positioned[at as usize].1))
        .collect();
    Some(Topology {
        workflow_id: header.workflow_id.clone()?,
        draft_id: header.draft_id.clone()?,
        revision: header.revision?,
        catalog_version: header.catalog_version.clone()?,
        authored_graph_hash: authored_hash,
        nodes,
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
    /// Less the excluded projections of docs/reference/hashes.md: what `topologyHash` covers.
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

/// `topologyHash` (docs/reference/hashes.md): the canonical text of the hashed view of the topology
/// (`topology_json(…, View::Hashed)` of the compiled topology), written straight from the
/// lowered nodes and the resolved graph into the digest, member by member in canonical
/// order: checking a draft never builds its topology. The conformance test
/// `streamed_hashes_equal_the_hash_of_the_whole_canonical_document` holds the two views
/// to one hash.
pub fn topology_hash(header: &Header, draft_nodes: &[impl NodeFields], graph: &ResolvedGraph) -> Option<String> {
    let workflow_id = header.workflow_id.as_ref()?;
    let catalog_version = header.catalog_version.as_ref()?;
    let mut sink = HashSink::default();
    let out = &mut sink;
    let finite = "lowered JSON holds only finite numbers";
    let field = |out: &mut HashSink, first: bool, key: &str| {
        out.put(if first { "{" } else { "," });
        write_string(out, key);
        out.put(":");
    };
    let value = |out: &mut HashSink, v: &serde_json::Value| write_canonical(v, out).expect(finite);
    // Keys in canonical (UTF-16 sorted) order at every level.
    field(out, true, "catalogVersion");
    write_string(out, catalog_version);
    out.put(",\"nodes\":[");
    // The lowered fields are read in source order, where salsa's structs stand one after
    // the other, and then in id order from this compact table, whose entries (and the
    // configs they point to) can be prefetched.
    let fields: Vec<(&Option<Config>, &NodeBindings, &NodeMeta)> =
        draft_nodes.iter().map(|node| (node.config(), node.bindings(), node.meta())).collect();
    let order = executable_nodes(graph);
    for (i, &position) in order.iter().enumerate() {
        if let Some(&far) = order.get(i + 2 * prefetch::AHEAD) {
            prefetch::value(&fields[far as usize]);
            prefetch::value(graph.node(far));
        }
        if let Some(&near) = order.get(i + prefetch::AHEAD)
            && let Some(config) = fields[near as usize].0
        {
            prefetch::bytes(config.text().as_bytes(), 2);
        }
        if i > 0 {
            out.put(",");
        }
        let graph_node = graph.node(position);
        let (config, bindings, meta) = fields[position as usize];
        let family = graph_node.family.as_ref().expect("executable");
        field(out, true, "agent");
        match bindings.agent() {
            little_frontend::draft::AgentDecl::Present(a) => {
                value(out, &json!({ "agentId": a.agent_id, "revision": a.revision }))
            }
            _ => out.put("null"),
        }
        field(out, false, "config");
        match config {
            // Already canonical.
            Some(config) => out.put(config.text()),
            None => out.put("{}"),
        }
        field(out, false, "contracts");
        match graph_node.declared_contracts() {
            Some(c) => value(out, &contracts_json(c)),
            None => out.put("null"),
        }
        field(out, false, "family");
        write_string(out, &family.id);
        field(out, false, "flags");
        let flags = meta.flags();
        if flags.is_empty() {
            out.put("{}");
        } else {
            let flags: Map<String, serde_json::Value> = flags.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
            value(out, &serde_json::Value::Object(flags));
        }
        field(out, false, "id");
        write_string(out, &graph_node.id);
        field(out, false, "kind");
        write_string(out, family.kind.as_str());
        field(out, false, "packages");
        if bindings.packages().is_empty() {
            out.put("[]");
        } else {
            value(out, &packages_json(bindings.packages()));
        }
        field(out, false, "semantic");
        write_string(out, &family.semantic);
        out.put("}");
    }
    out.put("],\"transitions\":[");
    let edges = executable_edges(graph);
    for (i, t) in edges.iter().enumerate() {
        if let Some(far) = edges.get(i + 2 * prefetch::AHEAD) {
            prefetch::value(*far);
        }
        if let Some(near) = edges.get(i + prefetch::AHEAD) {
            prefetch::value(graph.node(near.from));
            prefetch::value(graph.node(near.to));
        }
        if i > 0 {
            out.put(",");
        }
        field(out, true, "from");
        write_end(out, &graph.node(t.from).id, &t.from_port);
        field(out, false, "id");
        write_string(out, &t.id);
        field(out, false, "kind");
        write_string(out, t.kind.as_str());
        field(out, false, "mapping");
        match t.mapping() {
            Some(m) => value(out, &mapping_json(m)),
            None => out.put("null"),
        }
        field(out, false, "retry");
        match t.retry() {
            Some(r) => value(out, &retry_json(r)),
            None => out.put("null"),
        }
        field(out, false, "to");
        write_end(out, &graph.node(t.to).id, &t.to_port);
        out.put("}");
    }
    out.put("],\"workflowId\":");
    write_string(out, workflow_id);
    out.put("}");
    Some(sink.identity())
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
    /// `None` when the draft lacks its identity (already a blocking diagnostic).
    pub fn new(
        header: &Header,
        authored_graph_hash: String,
        topology_hash: String,
        binding_status: &str,
    ) -> Option<Candidate> {
        let mut candidate = Candidate {
            id: String::new(),
            workflow_id: header.workflow_id.clone()?,
            draft_id: header.draft_id.clone()?,
            revision: header.revision?,
            catalog_version: header.catalog_version.clone()?,
            authored_graph_hash,
            topology_hash,
            binding_status: binding_status.to_string(),
        };
        let hash = hash_canonical(&candidate.to_json()).expect("finite");
        candidate.id = format!("cand_{}", little_hashing::short_id(&hash));
        Some(candidate)
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
