//! Routers: `branch.too_few`, `branch.duplicate_label`, `branch.unknown_label` and
//! `branch.unhandled`. (Edges out of routers without a label, and branch edges out of
//! other nodes, are decided during resolution.)

use little_frontend::draft::config_value;
use std::collections::HashMap;

use little_diagnostics::{Code, suggest};
use little_frontend::anchor::Finding;
use little_ir::{EdgeKind, NodeKind};

use crate::db::{SourceFile, Workspace};
use crate::queries::draft_ir;

use super::node::check_node;
use super::resolve::{FaultyEdge, GraphEdge, ResolvedGraph, resolved_graph};
use crate::unknown::Resolved;
use little_ir::draft::Config;

#[salsa::tracked(returns(ref))]
pub fn branch_findings(db: &dyn salsa::Database, workspace: Workspace, file: SourceFile) -> Vec<Finding> {
    let graph = resolved_graph(db, workspace, file);
    let Some(draft) = draft_ir(db, workspace, file) else { return Vec::new() };
    check(graph, |i| draft.nodes[i].config(db), |i| &check_node(db, draft.nodes[i]).faulty_config)
}

/// [`branch_findings`]' rule: `config` and `faulty` give the config of the node at an
/// index and the fields its catalog layer found faulty.
pub fn check<'a>(
    graph: &ResolvedGraph,
    config: impl Fn(usize) -> &'a Option<Config>,
    faulty: impl Fn(usize) -> &'a [String],
) -> Vec<Finding> {
    let mut findings = Vec::new();
    // The forward and branch edges out of each router, sound and faulty, in authored order.
    let is_router = |i: u32| graph.node(i).kind() == Some(NodeKind::Router);
    let mut out_of: HashMap<u32, Vec<&GraphEdge>> = HashMap::new();
    for edge in graph.edges.iter().filter(|e| e.kind.is_progress() && is_router(e.from)) {
        out_of.entry(edge.from).or_default().push(edge);
    }
    let mut faulty_out_of: HashMap<u32, Vec<&FaultyEdge>> = HashMap::new();
    for edge in &graph.faulty {
        if let Resolved::Known(from) = edge.from
            && is_router(from)
            && edge.kind.could_be(|k| k.is_progress())
        {
            faulty_out_of.entry(from).or_default().push(edge);
        }
    }
    for (index, node) in graph.nodes.iter().enumerate() {
        if node.nth > 0 || !node.is_executable() || node.kind() != Some(NodeKind::Router) {
            continue;
        }
        if faulty(index).iter().any(|p| p.is_empty() || p.starts_with("/branches")) {
            continue; // the schema already reported the branches
        }
        let at = node.anchor().at("config").at("branches");
        let config = config(index).as_ref().map(config_value);
        let declared: Vec<&str> = config
            .as_ref()
            .and_then(|c| c.get("branches"))
            .and_then(|b| b.as_array())
            .map(|items| items.iter().filter_map(|b| b.get("label").and_then(|l| l.as_str())).collect())
            .unwrap_or_default();
        let mut distinct: Vec<&str> = Vec::new();
        for (i, label) in declared.iter().enumerate() {
            if distinct.contains(label) {
                findings.push(
                    Finding::new(
                        Code::BranchDuplicateLabel,
                        at.at(i).at("label"),
                        format!("router `{}` declares branch `{label}` twice", node.id),
                    )
                    .node(&node.id),
                );
            } else {
                distinct.push(label);
            }
        }
        if distinct.len() < 2 {
            findings.push(
                Finding::new(
                    Code::BranchTooFew,
                    at.clone(),
                    format!(
                        "router `{}` declares {} distinct branch{}: a router chooses between at least two",
                        node.id,
                        distinct.len(),
                        if distinct.len() == 1 { "" } else { "es" }
                    ),
                )
                .node(&node.id),
            );
        }
        // Each edge's label, resolved against the router's: missing or undeclared, it is
        // unknown (reported once) and could be any of them.
        let mut labels: Vec<Resolved<&str>> = Vec::new();
        let mut wired: HashMap<&str, &str> = HashMap::new();
        for &edge in out_of.get(&(index as u32)).map_or(&[][..], Vec::as_slice) {
            let label = match edge.label() {
                // A forward edge, or a branch without a label: `branch.missing_label`,
                // reported where the edge is resolved.
                None => Resolved::Unknown,
                // A label on an edge that is not a branch (`branch.missing_label` too): the
                // one it names if the router declares it, unknown otherwise.
                Some(label) if edge.kind != EdgeKind::Branch => {
                    if distinct.contains(&label) {
                        Resolved::Known(label)
                    } else {
                        Resolved::Unknown
                    }
                }
                Some(label) if !distinct.contains(&label) => {
                    findings.push(
                        Finding::new(
                            Code::BranchUnknownLabel,
                            edge.anchor().at("branch").at("label"),
                            format!(
                                "edge `{}` takes branch `{label}`, which router `{}` does not declare",
                                edge.id, node.id
                            ),
                        )
                        .edge(&edge.id)
                        .node(&node.id)
                        .help(suggest::did_you_mean(label, distinct.iter().copied())),
                    );
                    Resolved::Unknown
                }
                Some(label) => {
                    if let Some(first) = wired.get(label) {
                        findings.push(
                            Finding::new(
                                Code::BranchDuplicateLabel,
                                edge.anchor().at("branch").at("label"),
                                format!(
                                    "edges `{first}` and `{}` both take branch `{label}` of router `{}`",
                                    edge.id, node.id
                                ),
                            )
                            .edge(&edge.id)
                            .node(&node.id),
                        );
                    } else {
                        wired.insert(label, &edge.id);
                    }
                    Resolved::Known(label)
                }
            };
            labels.push(label);
        }
        // A faulty edge is not blamed for its label: one the router declares it takes, any
        // other is unknown.
        for &edge in faulty_out_of.get(&(index as u32)).map_or(&[][..], Vec::as_slice) {
            labels.push(match edge.label.as_deref() {
                Some(label) if distinct.contains(&label) => Resolved::Known(label),
                _ => Resolved::Unknown,
            });
        }
        for (i, label) in declared.iter().enumerate() {
            // An unknown edge could take any branch.
            if graph.damage.edges
                || declared[..i].contains(label)
                || labels.iter().any(|taken| taken.could_be(|t| t == label))
            {
                continue;
            }
            findings.push(
                Finding::new(
                    Code::BranchUnhandled,
                    at.at(i),
                    format!("router `{}` declares branch `{label}`, but no edge takes it", node.id),
                )
                .node(&node.id),
            );
        }
    }
    findings
}
