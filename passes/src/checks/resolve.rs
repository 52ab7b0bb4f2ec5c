//! Resolution of the authored graph (SPEC §2.1): every edge either resolves to two
//! executable nodes and two ports, or is reported once — as its first fault — and
//! then counts for nothing else.

use std::sync::Arc;

use little_diagnostics::{Code, suggest};
use little_frontend::anchor::{Anchor, Finding};
use little_ir::catalog::Family;
use little_ir::draft::{Contracts, Endpoint, Mapping, RetrySettings};
use little_ir::ids;
use little_ir::{EdgeKind, Name, NodeKind};
use rustc_hash::FxHashMap;

use crate::db::{SourceFile, Workspace};
use crate::queries::{FamilyName, Node, draft_ir, family};
use little_frontend::draft::EdgeEntry;

/// Inputs or outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Input,
    Output,
}

impl Direction {
    fn noun(self) -> &'static str {
        match self {
            Direction::Input => "input",
            Direction::Output => "output",
        }
    }
}

/// One node as the graph checks see it.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphNode {
    pub id: Name,
    pub nth: u32,
    /// `None`: the node names no family, or one the catalog lacks (reported per node).
    pub family: Option<Arc<Family>>,
    /// Boxed: few nodes declare contracts.
    pub contracts: Option<Box<Contracts>>,
}

/// A port of a node: the family's, with a contract's types overriding.
#[derive(Clone, Copy, Debug)]
pub struct PortView<'a> {
    pub name: &'a str,
    pub types: &'a [String],
    pub required: bool,
    pub multiple: bool,
    /// Index of the declaring entry in the node's contract, if the contract declares it.
    pub contract_index: Option<usize>,
}

impl GraphNode {
    pub fn kind(&self) -> Option<NodeKind> {
        self.family.as_ref().map(|f| f.kind)
    }

    pub fn is_executable(&self) -> bool {
        self.family.as_ref().is_some_and(|f| !f.visual_only)
    }

    pub fn is_trigger(&self) -> bool {
        self.is_executable() && self.kind() == Some(NodeKind::Trigger)
    }

    pub fn anchor(&self) -> Anchor {
        Anchor::node(&self.id, self.nth)
    }

    fn contract_ports(&self, direction: Direction) -> &[little_ir::draft::ContractPort] {
        match (&self.contracts, direction) {
            (Some(c), Direction::Input) => &c.inputs,
            (Some(c), Direction::Output) => &c.outputs,
            (None, _) => &[],
        }
    }

    fn family_ports(&self, direction: Direction) -> &[little_ir::catalog::Port] {
        match (&self.family, direction) {
            (Some(f), Direction::Input) => &f.inputs,
            (Some(f), Direction::Output) => &f.outputs,
            (None, _) => &[],
        }
    }

    pub fn port(&self, direction: Direction, name: &str) -> Option<PortView<'_>> {
        let family = self.family_ports(direction).iter().find(|p| p.name == name);
        let contract = self.contract_ports(direction).iter().position(|p| p.port == name);
        match (family, contract) {
            (None, None) => None,
            (family, contract) => {
                let declared = contract.map(|i| &self.contract_ports(direction)[i]);
                Some(PortView {
                    name: family.map_or_else(|| declared.unwrap().port.as_str(), |p| p.name.as_str()),
                    types: declared.map_or_else(|| family.unwrap().types.as_slice(), |c| c.types.as_slice()),
                    required: family.is_some_and(|p| p.required),
                    multiple: family.is_some_and(|p| p.multiple),
                    contract_index: contract,
                })
            }
        }
    }

    /// All port names in one direction: the family's, then the contract's own.
    pub fn port_names(&self, direction: Direction) -> Vec<&str> {
        let mut names: Vec<&str> = self.family_ports(direction).iter().map(|p| p.name.as_str()).collect();
        for port in self.contract_ports(direction) {
            if !names.contains(&port.port.as_str()) {
                names.push(&port.port);
            }
        }
        names
    }

    /// The port an endpoint without `port` takes (docs/decisions.md).
    pub fn default_port(&self, direction: Direction) -> Option<&str> {
        let conventional = match direction {
            Direction::Input => "in",
            Direction::Output => "out",
        };
        let names = self.port_names(direction);
        names.iter().copied().find(|n| *n == conventional).or_else(|| names.first().copied())
    }
}

/// An edge that resolved: both ends executable, both ports present.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphEdge {
    pub id: Name,
    pub nth: u32,
    pub from: u32,
    pub from_port: Name,
    pub to: u32,
    pub to_port: Name,
    pub kind: EdgeKind,
    /// The author wrote these ports (rather than leaving them to a default or mapping).
    pub explicit_ports: (bool, bool),
    /// What few edges carry: one pointer, absent for the rest (96 bytes an edge, not 128).
    extras: Option<Box<EdgeExtras>>,
}

/// An edge's contract mapping, branch label and retry settings.
#[derive(Clone, Debug, PartialEq)]
struct EdgeExtras {
    mapping: Option<Mapping>,
    label: Option<String>,
    retry: Option<RetrySettings>,
}

impl GraphEdge {
    pub fn mapping(&self) -> Option<&Mapping> {
        self.extras.as_ref()?.mapping.as_ref()
    }

    pub fn label(&self) -> Option<&str> {
        self.extras.as_ref()?.label.as_deref()
    }

    pub fn retry(&self) -> Option<&RetrySettings> {
        self.extras.as_ref()?.retry.as_ref()
    }

    pub fn anchor(&self) -> Anchor {
        Anchor::edge(&self.id, self.nth)
    }
}

/// The draft's graph after resolution.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ResolvedGraph {
    pub nodes: Vec<GraphNode>,
    pub edges: Vec<GraphEdge>,
    /// Forward and branch connections between existing, non-visual nodes as the author
    /// meant them, faulty ports included: reachability follows intent, so one bad port
    /// is not also a cascade of unreachable nodes.
    pub intents: Vec<(u32, u32)>,
    /// Every (source node id, branch label) that an authored edge carries, resolved or not
    /// (a label on an edge that failed has that edge's own diagnostic), sorted.
    pub labels: Vec<(Name, String)>,
    /// Input ports that a dropped edge was aimed at: not reported as missing.
    pub aimed: Vec<(u32, Name)>,
    /// Nodes entered by an edge from a node that does not exist: what the author meant
    /// to lead there is unknown, so they count as reached.
    pub entered_from_nowhere: Vec<u32>,
    /// Some node's family did not resolve: it might be the trigger, or the bridge.
    pub unresolved_families: bool,
    /// Some executable node declares contracts (SPEC: contract mode).
    pub contract_mode: bool,
    pub findings: Vec<Finding>,
}

impl ResolvedGraph {
    pub fn node(&self, index: u32) -> &GraphNode {
        &self.nodes[index as usize]
    }

    /// Whether a dropped edge was aimed at this input port (`aimed` is sorted).
    pub fn was_aimed_at(&self, node: u32, port: &str) -> bool {
        let start = self.aimed.partition_point(|(n, p)| (*n, p.as_str()) < (node, port));
        self.aimed.get(start).is_some_and(|(n, p)| *n == node && p == port)
    }
}

/// The resolved graph of a draft (empty when the file is not a readable draft). It is
/// built with the lowered draft ([`crate::queries::draft_ir`]), so that the lowered edges
/// are not held beside the resolved ones.
pub fn resolved_graph(db: &dyn salsa::Database, workspace: Workspace, file: SourceFile) -> &ResolvedGraph {
    static EMPTY: std::sync::LazyLock<ResolvedGraph> = std::sync::LazyLock::new(ResolvedGraph::default);
    draft_ir(db, workspace, file).as_ref().map_or(&EMPTY, |draft| &draft.graph)
}

/// Resolves a draft's lowered edges between its nodes.
pub(crate) fn resolve<'db>(
    db: &'db dyn salsa::Database,
    workspace: Workspace,
    nodes: &[Node<'db>],
    nodes_unreadable: bool,
    edges: &[EdgeEntry],
) -> ResolvedGraph {
    let mut graph = ResolvedGraph::default();
    // Each distinct family is looked up once: a draft has a dozen families and up to
    // millions of nodes, and every lookup through the database is a recorded read.
    let catalog = workspace.catalog(db);
    let mut families: FxHashMap<FamilyName<'_>, Option<Arc<Family>>> = FxHashMap::default();
    graph.nodes.reserve(nodes.len());
    for &node in nodes {
        let id = node.id(db).clone();
        let nth = node.nth(db);
        let name = node.family(db);
        let family =
            name.and_then(|name| families.entry(name).or_insert_with(|| family(db, catalog, name).clone()).clone());
        if name.is_some() && family.is_none() {
            graph.unresolved_families = true;
        }
        let contracts = node.contracts(db).valid().cloned().map(Box::new);
        if nth > 0 {
            graph.findings.push(
                Finding::new(
                    Code::GraphDuplicateNodeId,
                    Anchor::node(&id, nth).at("id"),
                    format!("node id `{id}` is used by more than one node"),
                )
                .node(&id)
                .related("first used here", Anchor::node(&id, 0).at("id")),
            );
        }
        if family.as_ref().is_some_and(|f| !f.visual_only) && contracts.is_some() {
            graph.contract_mode = true;
        }
        graph.nodes.push(GraphNode { id, nth, family, contracts });
    }
    if nodes_unreadable {
        return graph;
    }
    // Where each id first appears: edges name their nodes by id.
    let endpoint = |probe: u32| {
        let decl = &edges[probe as usize / 2].decl;
        [&decl.from, &decl.to][probe as usize % 2].as_ref().map_or("", |end| end.node.as_str())
    };
    let firsts = (0..graph.nodes.len() as u32).filter(|&p| graph.nodes[p as usize].nth == 0);
    let found = ids::find_each(firsts, |p| &graph.nodes[p as usize].id, 2 * edges.len(), endpoint);
    graph.edges.reserve_exact(edges.len());
    for (entry, found) in edges.iter().zip(found.chunks_exact(2)) {
        let decl = &entry.decl;
        if let (Some(from), Some(label)) = (&decl.from, &decl.branch_label) {
            graph.labels.push((from.node.clone(), label.clone()));
        }
        let at = Anchor::edge(&decl.id, entry.nth);
        if entry.nth > 0 {
            graph.findings.push(
                Finding::new(
                    Code::GraphDuplicateEdgeId,
                    at.at("id"),
                    format!("edge id `{}` is used by more than one edge", decl.id),
                )
                .edge(&decl.id)
                .related("first used here", Anchor::edge(&decl.id, 0).at("id")),
            );
        }
        let (Some(from), Some(to)) = (&decl.from, &decl.to) else { continue };
        if entry.invalid {
            continue;
        }
        if let Some(edge) = resolve_edge(&mut graph, (found[0], found[1]), &decl.id, entry.nth, &at, from, to, decl) {
            graph.edges.push(edge);
        }
    }
    graph.aimed.sort();
    graph.aimed.dedup();
    graph.labels.sort();
    graph.labels.dedup();
    graph
}

/// Resolves one edge, or reports its first fault and returns `None`.
#[allow(clippy::too_many_arguments)]
fn resolve_edge(
    graph: &mut ResolvedGraph,
    (from_index, to_index): (Option<u32>, Option<u32>),
    id: &str,
    nth: u32,
    at: &Anchor,
    from: &Endpoint,
    to: &Endpoint,
    decl: &little_ir::draft::EdgeDecl,
) -> Option<GraphEdge> {
    if from_index.is_none() || to_index.is_none() {
        let (side, missing) = if from_index.is_none() { ("from", &from.node) } else { ("to", &to.node) };
        let ids = graph.nodes.iter().filter(|n| n.nth == 0).map(|n| n.id.as_str());
        let help = suggest::did_you_mean(missing, ids);
        let both = from_index.is_none() && to_index.is_none();
        let message = if both {
            format!("edge `{id}` connects `{}` to `{}`, and neither node exists", from.node, to.node)
        } else {
            format!(
                "edge `{id}` {} node `{missing}`, which does not exist",
                if side == "from" { "leaves" } else { "enters" }
            )
        };
        graph.findings.push(Finding::new(Code::GraphDanglingEdge, at.at(side).at("node"), message).edge(id).help(help));
        if let Some(to_index) = to_index {
            graph.entered_from_nowhere.push(to_index);
        }
        if let Some(to_index) = to_index
            && let Some(port) =
                to.port.clone().or_else(|| graph.node(to_index).default_port(Direction::Input).map(Name::from))
        {
            graph.aimed.push((to_index, port));
        }
        return None;
    }
    let (from_index, to_index) = (from_index.unwrap(), to_index.unwrap());
    let (source, target) = (graph.node(from_index), graph.node(to_index));
    let progress = decl.kind.is_progress();
    let visual = |n: &GraphNode| n.family.as_ref().is_some_and(|f| f.visual_only);
    if visual(source) || visual(target) {
        let which = if visual(source) { source } else { target };
        graph.findings.push(
            Finding::new(
                Code::GraphEdgeToVisualNode,
                at.clone(),
                format!(
                    "edge `{id}` touches `{}`, a visual-only {} that does not execute; the edge is dropped",
                    which.id,
                    which.kind().map_or("node", |k| k.as_str())
                ),
            )
            .edge(id),
        );
        return None;
    }
    let intent = progress && from_index != to_index;
    if source.family.is_none() || target.family.is_none() {
        // The node's unknown family is its one diagnostic: the edge still counts as wired
        // for reachability and for the input it was aimed at.
        let aimed = target
            .family
            .as_ref()
            .and_then(|_| to.port.clone().or_else(|| target.default_port(Direction::Input).map(Name::from)));
        if intent {
            graph.intents.push((from_index, to_index));
        }
        if let Some(port) = aimed {
            graph.aimed.push((to_index, port));
        }
        return None;
    }
    if target.is_trigger() {
        graph.findings.push(
            Finding::new(
                Code::TriggerInboundEdge,
                at.at("to"),
                format!("edge `{id}` enters trigger `{}`: triggers start a workflow and take no input", target.id),
            )
            .edge(id)
            .node(&target.id),
        );
        return None;
    }
    let mapping = decl.mapping.as_ref();
    let mut faulty = false;
    let mut resolve_port = |graph: &mut ResolvedGraph,
                            endpoint: &Endpoint,
                            node_index: u32,
                            direction: Direction,
                            side: &str|
     -> Option<Name> {
        let node = graph.node(node_index);
        let mapped = mapping.and_then(|m| match direction {
            Direction::Output => m.output.as_deref().map(Name::from),
            Direction::Input => m.input.as_deref().map(Name::from),
        });
        let (name, via_mapping) = match (&endpoint.port, mapped) {
            (Some(port), _) => (port.clone(), false),
            (None, Some(port)) => (port, true),
            (None, None) => match node.default_port(direction) {
                Some(port) => (Name::from(port), false),
                None => {
                    let message = format!(
                        "edge `{id}` {} node `{}`, which has no {} ports",
                        if side == "from" { "leaves" } else { "enters" },
                        node.id,
                        direction.noun()
                    );
                    graph
                        .findings
                        .push(Finding::new(Code::GraphInvalidPort, at.at(side), message).edge(id).node(&node.id));
                    faulty = true;
                    return None;
                }
            },
        };
        if node.port(direction, &name).is_some() {
            return Some(name);
        }
        let names = node.port_names(direction);
        let help = suggest::did_you_mean(&name, names.iter().copied());
        let listing = if names.is_empty() {
            "none".to_string()
        } else {
            names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
        };
        let family = node.family.as_ref().map_or("", |f| f.id.as_str());
        // The input the author meant (not reported missing): the near name, or the only one.
        let meant = (direction == Direction::Input)
            .then(|| {
                suggest::nearest(&name, names.iter().copied()).or(if names.len() == 1 { Some(names[0]) } else { None })
            })
            .flatten()
            .map(str::to_string);
        let (code, anchor) = if via_mapping {
            (
                Code::ContractUnknownPort,
                at.at("mapping").at(if direction == Direction::Output { "output" } else { "input" }),
            )
        } else {
            (Code::GraphInvalidPort, at.at(side).at("port"))
        };
        let message = format!(
            "edge `{id}` names {} port `{name}` of node `{}` (family `{family}`), which does not exist; its {}s: {listing}",
            direction.noun(),
            node.id,
            direction.noun()
        );
        graph.findings.push(Finding::new(code, anchor, message).edge(id).node(&node.id).help(help));
        faulty = true;
        if let Some(meant) = meant {
            graph.aimed.push((node_index, Name::from(meant)));
        }
        None
    };
    let from_port = resolve_port(graph, from, from_index, Direction::Output, "from");
    let to_port = resolve_port(graph, to, to_index, Direction::Input, "to");
    if faulty {
        if intent {
            graph.intents.push((from_index, to_index));
        }
        if let Some(port) = to_port {
            graph.aimed.push((to_index, port));
        }
        return None;
    }
    let (from_port, to_port) = (from_port?, to_port?);
    if progress && from_index == to_index {
        graph.findings.push(
            Finding::new(
                Code::GraphSelfConnection,
                at.clone(),
                format!(
                    "edge `{id}` connects node `{}` to itself; only a `retry` edge may re-enter its own node",
                    from.node
                ),
            )
            .edge(id)
            .node(&from.node),
        );
        return None;
    }
    let source = graph.node(from_index);
    let from_router = source.kind() == Some(NodeKind::Router);
    match decl.kind {
        EdgeKind::Forward if from_router => graph.findings.push(
            Finding::new(
                Code::BranchMissingLabel,
                at.clone(),
                format!("edge `{id}` leaves router `{}` without a branch label: make it `\"kind\": \"branch\"` with `\"branch\": {{ \"label\": … }}`", source.id),
            )
            .edge(id)
            .node(&source.id),
        ),
        EdgeKind::Branch if !from_router => graph.findings.push(
            Finding::new(
                Code::GraphUnsupportedRouter,
                at.at("kind"),
                format!(
                    "edge `{id}` is a branch edge, but node `{}` (family `{}`) is not a router",
                    source.id,
                    source.family.as_ref().map_or("", |f| f.id.as_str())
                ),
            )
            .edge(id)
            .node(&source.id),
        ),
        EdgeKind::Branch if decl.branch_label.is_none() => graph.findings.push(
            Finding::new(Code::BranchMissingLabel, at.clone(), format!("branch edge `{id}` out of router `{}` has no `branch.label`", source.id))
                .edge(id)
                .node(&source.id),
        ),
        _ => {}
    }
    if intent {
        graph.intents.push((from_index, to_index));
    }
    Some(GraphEdge {
        id: Name::from(id),
        nth,
        from: from_index,
        from_port,
        to: to_index,
        to_port,
        kind: decl.kind,
        explicit_ports: (from.port.is_some(), to.port.is_some()),
        extras: (decl.mapping.is_some() || decl.branch_label.is_some() || decl.retry.is_some()).then(|| {
            Box::new(EdgeExtras {
                mapping: decl.mapping.as_deref().cloned(),
                label: decl.branch_label.clone(),
                retry: decl.retry.as_deref().cloned(),
            })
        }),
    })
}
