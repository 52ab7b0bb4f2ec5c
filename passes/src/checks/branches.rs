//! Routers: `branch.too_few`, `branch.duplicate_label`, `branch.unknown_label` and
//! `branch.unhandled`. (Edges out of routers without a label, and branch edges out of
//! other nodes, are decided during resolution.)

use little_frontend::draft::config_value;
use std::collections::{HashMap, HashSet};

use little_diagnostics::{Code, suggest};
use little_frontend::anchor::Finding;
use little_ir::{EdgeKind, NodeKind};

use crate::db::{SourceFile, Workspace};
use crate::queries::draft_ir;

use super::node::check_node;
use super::resolve::{GraphEdge, resolved_graph};

#[salsa::tracked(returns(ref))]
pub fn branch_findings(db: &dyn salsa::Database, workspace: Workspace, file: SourceFile) -> Vec<Finding> {
    let graph = resolved_graph(db, workspace, file);
    let Some(draft) = draft_ir(db, workspace, file) else { return Vec::new() };
    let mut findings = Vec::new();
    // Branch edges by router, and every (router id, label) an authored edge carries — even
    // an edge that failed to resolve handles its label: that edge has its own diagnostic.
    let mut branches_of: HashMap<u32, Vec<&GraphEdge>> = HashMap::new();
    for edge in graph.edges.iter().filter(|e| e.kind == EdgeKind::Branch) {
        branches_of.entry(edge.from).or_default().push(edge);
    }
    let authored: HashSet<(&str, &str)> =
        graph.labels.iter().map(|(node, label)| (node.as_str(), label.as_str())).collect();
    for (index, node) in graph.nodes.iter().enumerate() {
        if node.nth > 0 || !node.is_executable() || node.kind() != Some(NodeKind::Router) {
            continue;
        }
        let declaration = draft.nodes[index];
        let faulty = &check_node(db, declaration).faulty_config;
        if faulty.iter().any(|p| p.is_empty() || p.starts_with("/branches")) {
            continue; // the schema already reported the branches
        }
        let at = node.anchor().at("config").at("branches");
        let config = declaration.config(db).as_ref().map(config_value);
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
        let mut wired: HashMap<&str, &str> = HashMap::new();
        for &edge in branches_of.get(&(index as u32)).map_or(&[][..], Vec::as_slice) {
            let Some(label) = edge.label() else { continue };
            let label_at = edge.anchor().at("branch").at("label");
            if !distinct.contains(&label) {
                findings.push(
                    Finding::new(
                        Code::BranchUnknownLabel,
                        label_at,
                        format!(
                            "edge `{}` takes branch `{label}`, which router `{}` does not declare",
                            edge.id, node.id
                        ),
                    )
                    .edge(&edge.id)
                    .node(&node.id)
                    .help(suggest::did_you_mean(label, distinct.iter().copied())),
                );
            } else if let Some(first) = wired.get(label) {
                findings.push(
                    Finding::new(
                        Code::BranchDuplicateLabel,
                        label_at,
                        format!("edges `{first}` and `{}` both take branch `{label}` of router `{}`", edge.id, node.id),
                    )
                    .edge(&edge.id)
                    .node(&node.id),
                );
            } else {
                wired.insert(label, &edge.id);
            }
        }
        for (i, label) in declared.iter().enumerate() {
            if declared[..i].contains(label) || authored.contains(&(node.id.as_str(), *label)) {
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
