//! Contract rules (`workflow-node-contracts/v1`) on mapped edges, in contract mode:
//! mapping and port agreement, type overlap, declared artifacts, required inputs.

use little_diagnostics::Code;
use little_frontend::anchor::Finding;
use little_ir::{types_overlap, types_subset};

use crate::db::{SourceFile, Workspace};

use super::resolve::{Direction, ResolvedGraph, resolved_graph};

#[salsa::tracked(returns(ref))]
pub fn contract_findings(db: &dyn salsa::Database, workspace: Workspace, file: SourceFile) -> Vec<Finding> {
    check(resolved_graph(db, workspace, file))
}

/// [`contract_findings`]' rule over a resolved graph, for either driver.
pub fn check(graph: &ResolvedGraph) -> Vec<Finding> {
    let mut findings = Vec::new();
    if !graph.contract_mode {
        return findings;
    }
    let mut mapped_into: std::collections::HashSet<(u32, &str)> = std::collections::HashSet::new();
    for edge in graph.edges.iter().filter(|e| e.kind.is_progress()) {
        let Some(mapping) = edge.mapping() else { continue };
        let (source, target) = (graph.node(edge.from), graph.node(edge.to));
        let at = edge.anchor().at("mapping");
        let mut mismatch = false;
        for (named, actual, explicit, key, side) in [
            (&mapping.output, &edge.from_port, edge.explicit_ports.0, "output", "from"),
            (&mapping.input, &edge.to_port, edge.explicit_ports.1, "input", "to"),
        ] {
            if let Some(named) = named
                && explicit
                && named != actual
            {
                mismatch = true;
                findings.push(
                    Finding::new(
                        Code::ContractMappingPortMismatch,
                        at.at(key),
                        format!("edge `{}` maps {key} `{named}`, but its `{side}` port is `{actual}`", edge.id),
                    )
                    .edge(&edge.id)
                    .related(format!("the edge's `{side}` port"), edge.anchor().at(side).at("port")),
                );
            }
        }
        // A mismatched mapping is still aimed at its input: not also a missing one.
        mapped_into.insert((edge.to, edge.to_port.as_str()));
        if mismatch {
            continue;
        }
        let output = source.port(Direction::Output, &edge.from_port).expect("resolved");
        let input = target.port(Direction::Input, &edge.to_port).expect("resolved");
        let declared = |node: &super::resolve::GraphNode, direction: Direction, index: Option<usize>| {
            let key = if direction == Direction::Output { "outputs" } else { "inputs" };
            index.map(|i| node.anchor().at("contracts").at(key).at(i))
        };
        // Types an unreadable envelope may declare are unknown: nothing to compare.
        if let (Some(&output_types), Some(&input_types)) = (output.types.known(), input.types.known()) {
            if !types_overlap(output_types, input_types) {
                let mut finding = Finding::new(
                    Code::ContractIncompatibleTypes,
                    at.clone(),
                    format!(
                        "edge `{}` maps output `{}` ({}) to input `{}` ({}): no type in common",
                        edge.id,
                        edge.from_port,
                        output_types.join(", "),
                        edge.to_port,
                        input_types.join(", ")
                    ),
                )
                .edge(&edge.id)
                .node(&target.id);
                if let Some(anchor) = declared(source, Direction::Output, output.contract_index) {
                    finding = finding.related("output declared here", anchor);
                }
                if let Some(anchor) = declared(target, Direction::Input, input.contract_index) {
                    finding = finding.related("input declared here", anchor);
                }
                findings.push(finding);
            } else if !types_subset(output_types, input_types) {
                findings.push(
                    Finding::new(
                        Code::ContractPartialTypeOverlap,
                        at.clone(),
                        format!(
                            "edge `{}` maps output `{}` ({}) to input `{}` ({}): the producer may emit a type the input does not accept",
                            edge.id,
                            edge.from_port,
                            output_types.join(", "),
                            edge.to_port,
                            input_types.join(", ")
                        ),
                    )
                    .edge(&edge.id)
                    .node(&target.id),
                );
            }
        }
        for (i, artifact) in mapping.artifacts.iter().enumerate() {
            // Unreadable contracts may declare any artifact; absent ones declare none.
            let undeclared = match &source.contracts {
                None => true,
                Some(contracts) => contracts.known_to_be(|c| c.artifacts.iter().all(|a| &a.id != artifact)),
            };
            if undeclared {
                let known =
                    source.declared_contracts().into_iter().flat_map(|c| c.artifacts.iter().map(|a| a.id.as_str()));
                findings.push(
                    Finding::new(
                        Code::ContractUndeclaredArtifact,
                        at.at("artifacts").at(i),
                        format!(
                            "edge `{}` maps artifact `{artifact}`, which node `{}` does not declare",
                            edge.id, source.id
                        ),
                    )
                    .edge(&edge.id)
                    .node(&source.id)
                    .help(little_diagnostics::suggest::did_you_mean(artifact, known)),
                );
            }
        }
    }
    for (index, node) in graph.nodes.iter().enumerate() {
        let index = index as u32;
        if node.nth > 0 || !node.is_executable() {
            continue;
        }
        let Some(contracts) = node.declared_contracts() else { continue };
        for (i, port) in contracts.inputs.iter().enumerate().filter(|(_, p)| p.required) {
            let mapped = mapped_into.contains(&(index, port.port.as_str()));
            if !mapped && !graph.faulty_edge_could_feed(index, &port.port) {
                findings.push(
                    Finding::new(
                        Code::ContractMissingRequiredInput,
                        node.anchor().at("contracts").at("inputs").at(i),
                        format!(
                            "node `{}` declares required input `{}`, but no mapped edge feeds it",
                            node.id, port.port
                        ),
                    )
                    .node(&node.id),
                );
            }
        }
    }
    findings
}
