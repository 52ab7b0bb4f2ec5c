//! Port rules on resolved edges: `graph.incompatible_port_types` (unmapped edges),
//! `graph.duplicate_input` and `graph.missing_required_input`.

use rustc_hash::FxHashMap as HashMap;

use little_diagnostics::Code;
use little_frontend::anchor::Finding;
use little_ir::types_overlap;

use crate::db::{SourceFile, Workspace};

use super::resolve::{Direction, GraphEdge, resolved_graph};

fn list(types: &[String]) -> String {
    types.join(", ")
}

#[salsa::tracked(returns(ref))]
pub fn port_findings(db: &dyn salsa::Database, workspace: Workspace, file: SourceFile) -> Vec<Finding> {
    let graph = resolved_graph(db, workspace, file);
    let mut findings = Vec::new();
    let mut first_into: HashMap<(u32, &str), &GraphEdge> =
        HashMap::with_capacity_and_hasher(graph.edges.len(), Default::default());
    for edge in graph.edges.iter().filter(|e| e.kind.is_progress()) {
        let (source, target) = (graph.node(edge.from), graph.node(edge.to));
        let output = source.port(Direction::Output, &edge.from_port).expect("resolved");
        let input = target.port(Direction::Input, &edge.to_port).expect("resolved");
        let contract_checked = edge.mapping().is_some() && graph.contract_mode;
        if !contract_checked && !types_overlap(output.types, input.types) {
            findings.push(
                Finding::new(
                    Code::GraphIncompatiblePortTypes,
                    edge.anchor(),
                    format!(
                        "edge `{}` connects `{}.{}` ({}) to `{}.{}` ({}): no type in common",
                        edge.id,
                        source.id,
                        edge.from_port,
                        list(output.types),
                        target.id,
                        edge.to_port,
                        list(input.types)
                    ),
                )
                .edge(&edge.id),
            );
        }
        match first_into.get(&(edge.to, edge.to_port.as_str())) {
            Some(first) if !input.multiple => findings.push(
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
            ),
            Some(_) => {}
            None => {
                first_into.insert((edge.to, edge.to_port.as_str()), edge);
            }
        }
    }
    for (index, node) in graph.nodes.iter().enumerate() {
        let index = index as u32;
        if node.nth > 0 || !node.is_executable() {
            continue;
        }
        let family = node.family.as_ref().expect("executable");
        for port in family.inputs.iter().filter(|p| p.required) {
            let fed = first_into.contains_key(&(index, port.name.as_str()));
            if !fed && !graph.was_aimed_at(index, &port.name) {
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
