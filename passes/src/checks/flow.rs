//! Control flow from triggers: `graph.missing_trigger`, `trigger.unwired` and
//! `graph.unreachable_node`. Iterative: no recursion on the depth of a draft.

use little_diagnostics::Code;
use little_frontend::anchor::{Anchor, Finding};

use crate::db::{SourceFile, Workspace};

use super::adjacency::Adjacency;
use super::resolve::resolved_graph;
use crate::unknown::Resolved;

#[salsa::tracked(returns(ref))]
pub fn flow_findings(db: &dyn salsa::Database, workspace: Workspace, file: SourceFile) -> Vec<Finding> {
    let graph = resolved_graph(db, workspace, file);
    let mut findings = Vec::new();
    let count = graph.nodes.len();
    // A node of unknown kind (its family did not resolve) could be a trigger.
    let kind_unknown = |i: u32| graph.node(i).family.is_none();
    let triggers: Vec<u32> =
        (0..count as u32).filter(|&i| graph.node(i).is_trigger() && graph.node(i).nth == 0).collect();
    if triggers.is_empty() {
        if !(0..count as u32).any(kind_unknown) && graph.nodes.iter().any(|n| n.is_executable()) {
            findings.push(Finding::new(
                Code::GraphMissingTrigger,
                Anchor::root().at("nodes"),
                "the draft has no trigger: add a trigger node (e.g. `trigger.manual`) wired to the first step",
            ));
        }
        return findings;
    }
    // Every connection, faulty ones too, wires its source; one from an unknown node could
    // come from anywhere, so what it enters counts as reached.
    let mut wired = vec![false; count];
    let mut entered_from_unknown = Vec::new();
    let mut pairs = Vec::new();
    for (from, to) in graph.connections() {
        if let Resolved::Known(from) = from {
            wired[from as usize] = true;
        }
        match (from, to) {
            (Resolved::Known(from), Resolved::Known(to)) => pairs.push((from, to)),
            (Resolved::Unknown, Resolved::Known(to)) => entered_from_unknown.push(to),
            _ => {}
        }
    }
    for &trigger in &triggers {
        if !wired[trigger as usize] {
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
    let successors = Adjacency::new(count, pairs.into_iter());
    let starts =
        triggers.iter().copied().chain(entered_from_unknown).chain((0..count as u32).filter(|&i| kind_unknown(i)));
    let reached = reachable(&successors, starts);
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

/// Which nodes `starts` reach over `successors`.
///
/// Reached nodes are expanded in index order, a sweep, and only a node reached behind the
/// sweep waits on a stack: most edges of a draft point forward in the order nodes were
/// written, so the lists are read in memory order, not in the scattered order of a
/// depth-first walk (which at a million nodes missed the cache on most steps).
fn reachable(successors: &Adjacency<u32>, starts: impl Iterator<Item = u32>) -> Vec<bool> {
    let mut reached = vec![false; successors.nodes()];
    for start in starts {
        reached[start as usize] = true;
    }
    let mut behind = Vec::new();
    for sweep in 0..successors.nodes() as u32 {
        if !reached[sweep as usize] {
            continue;
        }
        behind.push(sweep);
        while let Some(node) = behind.pop() {
            for &next in successors.of(node) {
                if !reached[next as usize] {
                    reached[next as usize] = true;
                    // Ahead of the sweep, a reached node is expanded when the sweep gets there.
                    if next < sweep {
                        behind.push(next);
                    }
                }
            }
        }
    }
    reached
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a plain depth-first walk, on every graph of four nodes and every set of
    /// starts: edges that point behind the sweep, chains of them, and loops.
    #[test]
    fn the_sweep_reaches_what_a_walk_reaches() {
        let pairs: Vec<(u32, u32)> = (0..4).flat_map(|a| (0..4).map(move |b| (a, b))).filter(|(a, b)| a != b).collect();
        for mask in 0u32..(1 << pairs.len()) {
            let edges: Vec<(u32, u32)> = (0..pairs.len()).filter(|i| mask & (1 << i) != 0).map(|i| pairs[i]).collect();
            let successors = Adjacency::new(4, edges.iter().copied());
            for starts in 0u32..16 {
                let starts: Vec<u32> = (0..4).filter(|n| starts & (1 << n) != 0).collect();
                let mut walked = vec![false; 4];
                let mut stack = starts.clone();
                while let Some(node) = stack.pop() {
                    if !std::mem::replace(&mut walked[node as usize], true) {
                        stack.extend(successors.of(node));
                    }
                }
                assert_eq!(reachable(&successors, starts.iter().copied()), walked, "{edges:?} from {starts:?}");
            }
        }
    }
}
