//! Retry edges: `retry.invalid_config` (`maxAttempts` 1..=20, `backoffMs` >= 0) and
//! `retry.not_backward` (a retry re-enters the node itself or one of its ancestors).

use little_diagnostics::Code;
use little_frontend::anchor::Finding;
use little_ir::EdgeKind;

use crate::db::{SourceFile, Workspace};

use super::resolve::{ResolvedGraph, resolved_graph};
use super::upstream::{ancestors, ancestry_unknown, predecessors};

pub const MAX_ATTEMPTS: std::ops::RangeInclusive<i64> = 1..=20;

#[salsa::tracked(returns(ref))]
pub fn retry_findings(db: &dyn salsa::Database, workspace: Workspace, file: SourceFile) -> Vec<Finding> {
    check(resolved_graph(db, workspace, file))
}

/// [`retry_findings`]' rule over a resolved graph, for either driver.
pub fn check(graph: &ResolvedGraph) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut predecessor_lists = None;
    for edge in graph.edges.iter().filter(|e| e.kind == EdgeKind::Retry) {
        let at = edge.anchor();
        match edge.retry() {
            None => findings.push(
                Finding::new(
                    Code::RetryInvalidConfig,
                    at.clone(),
                    format!(
                        "retry edge `{}` needs `retry: {{ \"maxAttempts\": 1..=20, \"backoffMs\": ≥ 0 }}`",
                        edge.id
                    ),
                )
                .edge(&edge.id),
            ),
            Some(retry) => {
                match retry.max_attempts {
                    Some(n) if MAX_ATTEMPTS.contains(&n) => {}
                    Some(n) => findings.push(
                        Finding::new(
                            Code::RetryInvalidConfig,
                            at.at("retry").at("maxAttempts"),
                            format!("retry edge `{}` allows {n} attempts; `maxAttempts` must be 1 to 20", edge.id),
                        )
                        .edge(&edge.id),
                    ),
                    None => findings.push(
                        Finding::new(
                            Code::RetryInvalidConfig,
                            at.at("retry"),
                            format!("retry edge `{}` needs `maxAttempts` (1 to 20)", edge.id),
                        )
                        .edge(&edge.id),
                    ),
                }
                if let Some(ms) = retry.backoff_ms
                    && ms < 0
                {
                    findings.push(
                        Finding::new(
                            Code::RetryInvalidConfig,
                            at.at("retry").at("backoffMs"),
                            format!("retry edge `{}` has a negative backoff ({ms} ms)", edge.id),
                        )
                        .edge(&edge.id),
                    );
                }
            }
        }
        if edge.from == edge.to {
            continue;
        }
        let predecessors = predecessor_lists.get_or_insert_with(|| predecessors(graph));
        let upstream = ancestors(predecessors, edge.from);
        if !upstream[edge.to as usize] && !ancestry_unknown(graph, &upstream, edge.from) {
            let (source, target) = (graph.node(edge.from), graph.node(edge.to));
            findings.push(
                Finding::new(
                    Code::RetryNotBackward,
                    at.at("to"),
                    format!(
                        "retry edge `{}` goes from `{}` to `{}`, which does not come before it; a retry re-enters the node itself or one of its ancestors",
                        edge.id, source.id, target.id
                    ),
                )
                .edge(&edge.id),
            );
        }
    }
    findings
}
