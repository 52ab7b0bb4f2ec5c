//! Agent bindings of one node (docs/reference/formats.md#context): missing binding, missing row, not accepted.
//! With no binding reader, the draft-level `agent.binding_status_unavailable` is raised
//! by the report (once per draft), not here.

use little_diagnostics::Code;
use little_frontend::anchor::{Anchor, Finding};
use little_frontend::context::{BindingRow, BindingStatus};
use little_frontend::draft::AgentDecl;

/// With no binding reader: one warning for the draft, on its first agent node.
pub fn status_unavailable(agents: &[&str]) -> Option<Finding> {
    let first = agents.first()?;
    Some(
        Finding::new(
            Code::AgentBindingStatusUnavailable,
            Anchor::node(first, 0).at("agent"),
            format!(
                "no binding reader was given, so the status of {} agent binding{} is unknown; pass `--bindings` to check them",
                agents.len(),
                if agents.len() == 1 { "" } else { "s" }
            ),
        )
        .node(first),
    )
}

pub fn check(node_id: &str, at: &Anchor, agent: &AgentDecl, rows: Option<&[BindingRow]>) -> Vec<Finding> {
    let agent = match agent {
        AgentDecl::Absent => {
            return vec![
                Finding::new(
                    Code::AgentMissingBinding,
                    at.clone(),
                    format!("agent node `{node_id}` names no agent binding: add `\"agent\": {{ \"agentId\": …, \"revision\": … }}`"),
                )
                .node(node_id),
            ];
        }
        // Already reported as a shape fault.
        AgentDecl::Invalid => return Vec::new(),
        AgentDecl::Present(agent) => agent,
    };
    let Some(rows) = rows else { return Vec::new() };
    match rows.iter().find(|r| r.agent_id == agent.agent_id && r.revision == agent.revision) {
        None => vec![
            Finding::new(
                Code::AgentBindingMissingRow,
                at.at("agent"),
                format!(
                    "the binding reader has no row for agent `{}` revision {} (node `{node_id}`)",
                    agent.agent_id, agent.revision
                ),
            )
            .node(node_id),
        ],
        Some(row) if row.status != BindingStatus::Accepted => vec![
            Finding::new(
                Code::AgentBindingNotAccepted,
                at.at("agent"),
                format!(
                    "agent `{}` revision {} of node `{node_id}` is {}, not accepted",
                    agent.agent_id,
                    agent.revision,
                    row.status.as_str()
                ),
            )
            .node(node_id),
        ],
        Some(_) => Vec::new(),
    }
}
