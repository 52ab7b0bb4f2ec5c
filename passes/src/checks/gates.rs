//! Approval gates: `gate.missing_evidence` and `gate.unknown_evidence` (evidence must be
//! an artifact that a node upstream of the gate declares).

use little_diagnostics::{Code, suggest};
use little_frontend::anchor::Finding;
use little_frontend::draft::config_value;
use little_ir::NodeKind;

use crate::db::{SourceFile, Workspace};
use crate::queries::draft_ir;

use super::node::check_node;
use super::resolve::{ResolvedGraph, resolved_graph};
use super::upstream::{ancestors, ancestry_unknown, predecessors};
use little_ir::draft::Config;

#[salsa::tracked(returns(ref))]
pub fn gate_findings(db: &dyn salsa::Database, workspace: Workspace, file: SourceFile) -> Vec<Finding> {
    let graph = resolved_graph(db, workspace, file);
    let Some(draft) = draft_ir(db, workspace, file) else { return Vec::new() };
    check(graph, |i| draft.nodes[i].config(db), |i| &check_node(db, draft.nodes[i]).faulty_config)
}

/// [`gate_findings`]' rule: `config` and `faulty` give the config of the node at an index
/// and the fields its catalog layer found faulty.
pub fn check<'a>(
    graph: &ResolvedGraph,
    config: impl Fn(usize) -> &'a Option<Config>,
    faulty: impl Fn(usize) -> &'a [String],
) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut predecessor_lists = None;
    for (index, node) in graph.nodes.iter().enumerate() {
        if node.nth > 0 || !node.is_executable() || node.kind() != Some(NodeKind::Gate) {
            continue;
        }
        if faulty(index).iter().any(|p| p.is_empty() || p.starts_with("/evidence")) {
            continue;
        }
        let at = node.anchor().at("config");
        let config = config(index).as_ref().map(config_value);
        let evidence: Vec<Option<&str>> = config
            .as_ref()
            .and_then(|c| c.get("evidence"))
            .and_then(|e| e.as_array())
            .map(|items| items.iter().map(|i| i.as_str()).collect())
            .unwrap_or_default();
        if evidence.is_empty() {
            findings.push(
                Finding::new(
                    Code::GateMissingEvidence,
                    at.clone(),
                    format!(
                        "gate `{}` names no evidence: list the artifacts an approver reviews in `config.evidence`",
                        node.id
                    ),
                )
                .node(&node.id),
            );
            continue;
        }
        let predecessors = predecessor_lists.get_or_insert_with(|| predecessors(graph));
        let upstream = ancestors(predecessors, index as u32);
        // Unknown ancestry, an upstream node of unknown family or whose contracts cannot be
        // read: the artifact may be there. Say nothing; that fault has its diagnostic.
        if ancestry_unknown(graph, &upstream, index as u32)
            || upstream
                .iter()
                .enumerate()
                .any(|(i, &up)| up && (graph.nodes[i].family.is_none() || graph.nodes[i].contracts_unknown()))
        {
            continue;
        }
        let artifacts: Vec<&str> = upstream
            .iter()
            .enumerate()
            .filter(|&(_, &up)| up)
            .flat_map(|(i, _)| {
                graph.nodes[i].declared_contracts().into_iter().flat_map(|c| c.artifacts.iter().map(|a| a.id.as_str()))
            })
            .collect();
        for (i, id) in evidence.iter().enumerate() {
            let Some(id) = id else { continue };
            if !artifacts.contains(id) {
                findings.push(
                    Finding::new(
                        Code::GateUnknownEvidence,
                        at.at("evidence").at(i),
                        format!(
                            "gate `{}` asks for evidence `{id}`, which no node upstream of it declares as an artifact",
                            node.id
                        ),
                    )
                    .node(&node.id)
                    .help(suggest::did_you_mean(id, artifacts.iter().copied())),
                );
            }
        }
    }
    findings
}
