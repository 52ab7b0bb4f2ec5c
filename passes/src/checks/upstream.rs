//! Ancestors over forward and branch connections as the author wired them, faulty ones
//! included ([`ResolvedGraph::connections`]). Iterative: no recursion on the depth of a draft.

use super::adjacency::Adjacency;
use super::resolve::ResolvedGraph;
use crate::unknown::Resolved;

/// Predecessor lists of every node.
pub fn predecessors(graph: &ResolvedGraph) -> Adjacency<u32> {
    let known = graph.connections().filter_map(|c| match c {
        (Resolved::Known(from), Resolved::Known(to)) => Some((to, from)),
        _ => None,
    });
    Adjacency::new(graph.nodes.len(), known)
}

/// Every node that reaches `node` (not `node` itself, unless it lies on a loop).
pub fn ancestors(predecessors: &Adjacency<u32>, node: u32) -> Vec<bool> {
    let mut seen = vec![false; predecessors.nodes()];
    let mut stack = predecessors.of(node).to_vec();
    while let Some(n) = stack.pop() {
        if !seen[n as usize] {
            seen[n as usize] = true;
            stack.extend(predecessors.of(n));
        }
    }
    seen
}

/// Whether part of what leads to `node` is unknown: it, or a node upstream of it, is
/// entered by a connection from an unknown node (one that does not exist), or the draft
/// has unknown edges. Checks about
/// ancestry then say nothing: anything may be upstream.
pub fn ancestry_unknown(graph: &ResolvedGraph, upstream: &[bool], node: u32) -> bool {
    // An unknown edge could lead from anywhere to anything.
    graph.damage.edges || graph.entered_from_unknown().any(|to| to == node || upstream[to as usize])
}
