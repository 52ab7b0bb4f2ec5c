//! Port rules on resolved edges: `graph.incompatible_port_types` (unmapped edges),
//! `graph.duplicate_input` and `graph.missing_required_input`.

use little_diagnostics::Code;
use little_frontend::anchor::Finding;
use little_ir::types_overlap;

use crate::db::{SourceFile, Workspace};

use super::adjacency::Adjacency;
use super::resolve::{Direction, ResolvedGraph, resolved_graph};

fn list(types: &[String]) -> String {
    types.join(", ")
}

#[salsa::tracked(returns(ref))]
pub fn port_findings(db: &dyn salsa::Database, workspace: Workspace, file: SourceFile) -> Vec<Finding> {
    check(resolved_graph(db, workspace, file))
}

/// [`port_findings`]' rule over a resolved graph, for either driver.
pub fn check(graph: &ResolvedGraph) -> Vec<Finding> {
    let mut findings = Vec::new();
    let into = Incoming::new(graph);
    for (at, edge) in graph.edges.iter().enumerate().filter(|(_, e)| e.kind.is_progress()) {
        let (source, target) = (graph.node(edge.from), graph.node(edge.to));
        let output = source.port(Direction::Output, &edge.from_port).expect("resolved");
        let input = target.port(Direction::Input, &edge.to_port).expect("resolved");
        let contract_checked = edge.mapping().is_some() && graph.contract_mode;
        // Types an unreadable envelope may declare are unknown: nothing to compare.
        if let (Some(&output_types), Some(&input_types)) = (output.types.known(), input.types.known())
            && !contract_checked
            && !types_overlap(output_types, input_types)
        {
            findings.push(
                Finding::new(
                    Code::GraphIncompatiblePortTypes,
                    edge.anchor(),
                    format!(
                        "edge `{}` connects `{}.{}` ({}) to `{}.{}` ({}): no type in common",
                        edge.id,
                        source.id,
                        edge.from_port,
                        list(output_types),
                        target.id,
                        edge.to_port,
                        list(input_types)
                    ),
                )
                .edge(&edge.id),
            );
        }
        let first = &graph.edges[into.first[at] as usize];
        if into.first[at] as usize != at && !input.multiple {
            findings.push(
                Finding::new(
                    Code::GraphDuplicateInput,
                    edge.anchor().at("to"),
                    format!(
                        "edge `{}` is a second edge into `{}.{}`, which takes one (edge `{}` already enters it)",
                        edge.id, target.id, edge.to_port, first.id
                    ),
                )
                .edge(&edge.id)
                .node(&target.id)
                .related("first edge into the port", first.anchor()),
            );
        }
    }
    for (index, node) in graph.nodes.iter().enumerate() {
        let index = index as u32;
        if node.nth > 0 || !node.is_executable() {
            continue;
        }
        let family = node.family.as_ref().expect("executable");
        for port in family.inputs.iter().filter(|p| p.required) {
            let fed = into.of(index).iter().any(|&e| graph.edges[e as usize].to_port == port.name);
            if !fed && !graph.faulty_edge_could_feed(index, &port.name) {
                findings.push(
                    Finding::new(
                        Code::GraphMissingRequiredInput,
                        node.anchor(),
                        format!(
                            "node `{}` needs an edge into its required input `{}` ({})",
                            node.id,
                            port.name,
                            list(&port.types)
                        ),
                    )
                    .node(&node.id),
                );
            }
        }
    }
    findings
}

/// The progress edges into each node, and for each the first edge into the same port.
/// Built from each node's entering edges sorted by port: a table keyed by (node, port)
/// over a million edges missed the cache on every access.
struct Incoming {
    /// The edges (by position) entering each node, by port then position.
    into: Adjacency<u32>,
    /// For each edge (by position), the first progress edge into its target port (itself
    /// when it is the first); unused for other edges.
    first: Vec<u32>,
}

impl Incoming {
    fn new(graph: &ResolvedGraph) -> Incoming {
        let progress = graph.edges.iter().enumerate().filter(|(_, e)| e.kind.is_progress());
        let mut into = Adjacency::new(graph.nodes.len(), progress.map(|(at, e)| (e.to, at as u32)));
        let mut first = vec![u32::MAX; graph.edges.len()];
        let port = |e: u32| graph.edges[e as usize].to_port.as_str();
        for node in 0..into.nodes() as u32 {
            let entering = into.of_mut(node);
            // The edges are in position order; a stable sort keeps it within a port.
            entering.sort_by(|&a, &b| port(a).cmp(port(b)));
            let mut run = 0;
            for i in 0..entering.len() {
                if port(entering[i]) != port(entering[run]) {
                    run = i;
                }
                first[entering[i] as usize] = entering[run];
            }
        }
        Incoming { into, first }
    }

    /// The progress edges into `node`.
    fn of(&self, node: u32) -> &[u32] {
        self.into.of(node)
    }
}
