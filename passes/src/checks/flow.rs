//! Control flow from triggers: `graph.missing_trigger`, `trigger.unwired` and
//! `graph.unreachable_node`. Iterative: no recursion on the depth of a draft.

use little_diagnostics::Code;
use little_frontend::anchor::{Anchor, Finding};

use crate::db::{SourceFile, Workspace};

use super::adjacency::Adjacency;
use super::resolve::resolved_graph;

#[salsa::tracked(returns(ref))]
pub fn flow_findings(db: &dyn salsa::Database, workspace: Workspace, file: SourceFile) -> Vec<Finding> {
    let graph = resolved_graph(db, workspace, file);
    let mut findings = Vec::new();
    let count = graph.nodes.len();
    let successors = Adjacency::new(count, graph.intents.iter().copied());
    let triggers: Vec<u32> =
        (0..count as u32).filter(|&i| graph.node(i).is_trigger() && graph.node(i).nth == 0).collect();
    if triggers.is_empty() {
        // An unresolved family may be the trigger the author meant.
        if !graph.unresolved_families && graph.nodes.iter().any(|n| n.is_executable()) {
            findings.push(Finding::new(
                Code::GraphMissingTrigger,
                Anchor::root().at("nodes"),
                "the draft has no trigger: add a trigger node (e.g. `trigger.manual`) wired to the first step",
            ));
        }
        return findings;
    }
    for &trigger in &triggers {
        if successors.of(trigger).is_empty() {
            let node = graph.node(trigger);
            findings.push(
                Finding::new(
                    Code::TriggerUnwired,
                    node.anchor(),
                    format!("trigger `{}` starts nothing: wire an edge out of it", node.id),
                )
                .node(&node.id),
            );
        }
    }
    let mut reached = vec![false; count];
    let mut stack: Vec<u32> = triggers.clone();
    stack.extend((0..count as u32).filter(|&i| graph.node(i).family.is_none()));
    stack.extend(&graph.entered_from_nowhere);
    for &start in &stack {
        reached[start as usize] = true;
    }
    while let Some(node) = stack.pop() {
        for &next in successors.of(node) {
            if !reached[next as usize] {
                reached[next as usize] = true;
                stack.push(next);
            }
        }
    }
    for (i, node) in graph.nodes.iter().enumerate() {
        if !reached[i] && node.is_executable() && !node.is_trigger() && node.nth == 0 {
            findings.push(
                Finding::new(
                    Code::GraphUnreachableNode,
                    node.anchor(),
                    format!("node `{}` is unreachable: no trigger leads to it over forward or branch edges", node.id),
                )
                .node(&node.id),
            );
        }
    }
    findings
}
