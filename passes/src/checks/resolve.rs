//! Resolution of the authored graph (docs/reference/diagnostics.md#one-fault-one-diagnostic): every edge either resolves to two
//! executable nodes and two ports (a sound edge), or is reported once — as its first
//! fault — and becomes a faulty edge whose unresolved parts are unknown
//! ([`crate::unknown`]): no check blames it again, and every check that asks whether
//! something is there (wired, reached, fed, handled) counts it.

use std::sync::Arc;

use little_diagnostics::{Code, suggest};
use little_frontend::anchor::{Anchor, Finding};
use little_frontend::draft::ContractsDecl;
use little_ir::catalog::Family;
use little_ir::draft::{Contracts, Endpoint, Mapping, RetrySettings};
use little_ir::ids;
use little_ir::{EdgeKind, Name, NodeKind};

use crate::rules::NodeFields;
use crate::unknown::Resolved;
use little_frontend::draft::{Damage, EdgeEntry};

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
    /// `None`: the node names no family, or one the catalog lacks (reported per node): its
    /// kind is unknown.
    pub family: Option<Arc<Family>>,
    /// `None`: it declares none; unknown: its envelope cannot be read (reported by the
    /// reader), so it declares anything. Boxed: few nodes declare contracts.
    pub contracts: Option<Resolved<Box<Contracts>>>,
}

/// A port of a node: the family's, with a contract's types overriding.
#[derive(Clone, Copy, Debug)]
pub struct PortView<'a> {
    pub name: &'a str,
    /// Unknown on a node whose contracts cannot be read: they may override any port's types.
    pub types: Resolved<&'a [String]>,
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

    /// The contracts it declares, when they could be read.
    pub fn declared_contracts(&self) -> Option<&Contracts> {
        self.contracts.as_ref()?.known().map(|c| &**c)
    }

    /// Its contracts cannot be read: they may declare any port, type or artifact.
    pub fn contracts_unknown(&self) -> bool {
        self.contracts.as_ref().is_some_and(Resolved::is_unknown)
    }

    fn contract_ports(&self, direction: Direction) -> &[little_ir::draft::ContractPort] {
        match (self.declared_contracts(), direction) {
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

    pub fn port<'a>(&'a self, direction: Direction, name: &'a str) -> Option<PortView<'a>> {
        let family = self.family_ports(direction).iter().find(|p| p.name == name);
        if self.contracts_unknown() {
            // Unreadable contracts may declare this port, and any types for it; a port they
            // add could take several edges.
            return Some(PortView {
                name,
                types: Resolved::Unknown,
                required: family.is_some_and(|p| p.required),
                multiple: family.is_none_or(|p| p.multiple),
                contract_index: None,
            });
        }
        let contract = self.contract_ports(direction).iter().position(|p| p.port == name);
        match (family, contract) {
            (None, None) => None,
            (family, contract) => {
                let declared = contract.map(|i| &self.contract_ports(direction)[i]);
                Some(PortView {
                    name: family.map_or_else(|| declared.unwrap().port.as_str(), |p| p.name.as_str()),
                    types: Resolved::Known(
                        declared.map_or_else(|| family.unwrap().types.as_slice(), |c| c.types.as_slice()),
                    ),
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

/// An authored edge that has its one diagnostic (or enters or leaves a node whose family
/// is unknown): what of it resolved. No check blames it again; every check that asks
/// whether something is there (wired, reached, fed, handled) counts it, each unknown part
/// matching anything ([`crate::unknown`]).
#[derive(Clone, Debug, PartialEq)]
pub struct FaultyEdge {
    /// Unknown when the node does not exist (and no node's id is near the one written) or
    /// the endpoint is missing.
    pub from: Resolved<u32>,
    pub to: Resolved<u32>,
    /// The input it enters; unknown when that does not resolve, so it could be any.
    pub to_port: Resolved<Name>,
    /// Unknown when the authored kind is not a kind.
    pub kind: Resolved<EdgeKind>,
    /// The branch label it carries, as authored (the router's check resolves it).
    pub label: Option<String>,
}

/// The draft's graph after resolution.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ResolvedGraph {
    pub nodes: Vec<GraphNode>,
    /// The sound edges: what the checks that blame an edge (types, duplicates, labels,
    /// cycles, retries) read.
    pub edges: Vec<GraphEdge>,
    /// The faulty edges, in authored order.
    pub faulty: Vec<FaultyEdge>,
    /// Faulty edges by the node they enter, `(node, position in faulty)`, sorted.
    faulty_into: Vec<(u32, u32)>,
    /// Some executable node declares contracts, readable or not (contract mode: docs/reference/formats.md#draft).
    pub contract_mode: bool,
    /// Which arrays hold unknown elements (a recovered draft): an unknown node could be
    /// any node an edge names, an unknown edge could connect any two nodes with any label.
    pub damage: Damage,
    pub findings: Vec<Finding>,
}

impl ResolvedGraph {
    pub fn node(&self, index: u32) -> &GraphNode {
        &self.nodes[index as usize]
    }

    /// Every forward or branch connection the author wired, sound or faulty, as
    /// `(from, to)`: wiring, reachability and ancestry follow what the author meant.
    pub fn connections(&self) -> impl Iterator<Item = (Resolved<u32>, Resolved<u32>)> + '_ {
        let sound = self
            .edges
            .iter()
            .filter(|e| e.kind.is_progress())
            .map(|e| (Resolved::Known(e.from), Resolved::Known(e.to)));
        let faulty = self.faulty.iter().filter(|e| e.kind.could_be(|k| k.is_progress())).map(|e| (e.from, e.to));
        sound.chain(faulty)
    }

    /// The nodes a connection from an unknown node enters (only faulty edges have an unknown
    /// end, so this reads only them).
    pub fn entered_from_unknown(&self) -> impl Iterator<Item = u32> + '_ {
        self.faulty.iter().filter(|e| e.kind.could_be(|k| k.is_progress())).filter_map(|e| match (e.from, e.to) {
            (Resolved::Unknown, Resolved::Known(to)) => Some(to),
            _ => None,
        })
    }

    /// Whether a faulty edge could feed this input: docs/reference/diagnostics.md#one-fault-one-diagnostic, the input an edge that
    /// failed was aimed at is not reported missing (and an unknown port could be any).
    pub fn faulty_edge_could_feed(&self, node: u32, port: &str) -> bool {
        if self.damage.edges {
            return true;
        }
        let start = self.faulty_into.partition_point(|&(n, _)| n < node);
        self.faulty_into[start..]
            .iter()
            .take_while(|&&(n, _)| n == node)
            .any(|&(_, e)| self.faulty[e as usize].to_port.could_be(|p| p == port))
    }
}

/// The graph query lives with the lowering it takes its edges from.
pub use crate::queries::resolved_graph;

/// Resolves a draft's lowered edges between its nodes, for either driver. `family` gives
/// a node's family in the catalog (each driver looks a draft's dozen families up once).
pub fn resolve<N: NodeFields>(
    nodes: &[N],
    mut family: impl FnMut(&N) -> Option<Arc<Family>>,
    nodes_unreadable: bool,
    damage: Damage,
    edges: &[EdgeEntry],
) -> ResolvedGraph {
    let mut graph = ResolvedGraph { damage, ..ResolvedGraph::default() };
    graph.nodes.reserve(nodes.len());
    for node in nodes {
        let id = node.id().clone();
        let nth = node.nth();
        let family = family(node);
        let contracts = match node.contracts() {
            ContractsDecl::Absent => None,
            ContractsDecl::Invalid => Some(Resolved::Unknown),
            ContractsDecl::Valid(contracts) => Some(Resolved::Known(contracts.clone())),
        };
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
        match resolve_edge(&mut graph, (found[0], found[1]), entry, &at) {
            Outcome::Sound(edge) => graph.edges.push(edge),
            Outcome::Faulty(edge) => graph.faulty.push(edge),
            Outcome::Dropped => {}
        }
    }
    graph.faulty_into =
        graph.faulty.iter().enumerate().filter_map(|(at, e)| Some((*e.to.known()?, at as u32))).collect();
    graph.faulty_into.sort_unstable();
    graph
}

/// What became of one authored edge.
enum Outcome {
    Sound(GraphEdge),
    Faulty(FaultyEdge),
    /// It touches a visual-only node: dropped before any other check sees it (docs/reference/diagnostics.md#one-fault-one-diagnostic).
    Dropped,
}

/// Resolves one edge, or reports its first fault and keeps what of it resolved.
fn resolve_edge(
    graph: &mut ResolvedGraph,
    (from_index, to_index): (Option<u32>, Option<u32>),
    entry: &EdgeEntry,
    at: &Anchor,
) -> Outcome {
    let decl = &entry.decl;
    let id = decl.id.as_str();
    let faulty = |from: Option<u32>, to: Option<u32>, to_port: Resolved<Name>| {
        Outcome::Faulty(FaultyEdge {
            from: from.into(),
            to: to.into(),
            to_port,
            kind: if entry.invalid { Resolved::Unknown } else { Resolved::Known(decl.kind) },
            label: decl.branch_label.clone(),
        })
    };
    let aimed = |graph: &ResolvedGraph, to: Option<u32>| {
        to.map_or(Resolved::Unknown, |to| aimed_port(graph.node(to), decl.to.as_ref()))
    };
    let (Some(from), Some(to)) = (&decl.from, &decl.to) else {
        // A missing endpoint is a shape fault the reader reported.
        return faulty(from_index, to_index, aimed(graph, to_index));
    };
    if entry.invalid {
        // So is a malformed kind.
        return faulty(from_index, to_index, aimed(graph, to_index));
    }
    if from_index.is_none() || to_index.is_none() {
        let (side, missing) = if from_index.is_none() { ("from", &from.node) } else { ("to", &to.node) };
        let ids = || graph.nodes.iter().filter(|n| n.nth == 0).map(|n| n.id.as_str());
        let help = suggest::did_you_mean(missing, ids());
        // A node id misspelt near an existing one stands for it, as the help says; any
        // other missing node is unknown.
        let meant = |name: &str| {
            let near = suggest::nearest(name, ids())?;
            graph.nodes.iter().position(|n| n.nth == 0 && n.id == near).map(|i| i as u32)
        };
        let (from_meant, to_meant) = (from_index.or_else(|| meant(&from.node)), to_index.or_else(|| meant(&to.node)));
        if graph.damage.nodes {
            // An unknown node could be the one named: the edge is not dangling. Its source
            // stays unknown (what it enters counts as reached); a target near an id
            // stands for that node, as it does in the intact draft.
            return faulty(from_index, to_meant, aimed(graph, to_meant));
        }
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
        return faulty(from_meant, to_meant, aimed(graph, to_meant));
    }
    let (from_index, to_index) = (from_index.unwrap(), to_index.unwrap());
    let (source, target) = (graph.node(from_index), graph.node(to_index));
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
        return Outcome::Dropped;
    }
    let unknown_family = source.family.is_none() || target.family.is_none();
    if !unknown_family && target.is_trigger() {
        graph.findings.push(
            Finding::new(
                Code::TriggerInboundEdge,
                at.at("to"),
                format!("edge `{id}` enters trigger `{}`: triggers start a workflow and take no input", target.id),
            )
            .edge(id)
            .node(&target.id),
        );
        return faulty(Some(from_index), Some(to_index), Resolved::Unknown);
    }
    let mapping = decl.mapping.as_ref();
    let resolve_port = |graph: &mut ResolvedGraph,
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
        None
    };
    if unknown_family {
        // The node's unknown family is its one diagnostic; a port named on the other,
        // known, node is still checked, since that fault is the edge's own.
        let (source_known, target_known) =
            (graph.node(from_index).family.is_some(), graph.node(to_index).family.is_some());
        if source_known {
            resolve_port(graph, from, from_index, Direction::Output, "from");
        }
        let to_port = match target_known {
            true => resolve_port(graph, to, to_index, Direction::Input, "to").into(),
            false => aimed(graph, Some(to_index)),
        };
        return faulty(Some(from_index), Some(to_index), to_port);
    }
    let from_port = resolve_port(graph, from, from_index, Direction::Output, "from");
    let to_port = resolve_port(graph, to, to_index, Direction::Input, "to");
    let (from_port, to_port) = match (from_port, to_port) {
        (Some(from_port), Some(to_port)) => (from_port, to_port),
        // The port that did not resolve is unknown: it could be any of the node's inputs.
        (_, to_port) => return faulty(Some(from_index), Some(to_index), to_port.into()),
    };
    if decl.kind.is_progress() && from_index == to_index {
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
        return faulty(Some(from_index), Some(to_index), Resolved::Known(to_port));
    }
    let source = graph.node(from_index);
    let from_router = source.kind() == Some(NodeKind::Router);
    // The label's own faults; the router's check takes a missing label as unknown.
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
    Outcome::Sound(GraphEdge {
        id: Name::from(id),
        nth: entry.nth,
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

/// The input an edge that failed elsewhere enters: the port it names, or the node's
/// default input when it names none; unknown when the node has no such input (or its
/// family is unknown), so that it could be any.
fn aimed_port(node: &GraphNode, endpoint: Option<&Endpoint>) -> Resolved<Name> {
    if node.family.is_none() {
        return Resolved::Unknown;
    }
    let name = match endpoint.and_then(|e| e.port.as_ref()) {
        Some(port) => port.as_str(),
        None => match node.default_port(Direction::Input) {
            Some(port) => port,
            None => return Resolved::Unknown,
        },
    };
    match node.port(Direction::Input, name) {
        Some(port) => Resolved::Known(Name::from(port.name)),
        None => Resolved::Unknown,
    }
}
