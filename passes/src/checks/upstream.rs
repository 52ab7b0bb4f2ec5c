//! Ancestors over forward and branch edges, as the author wired them (`intents`).
//! Iterative: no recursion on the depth of a draft.

use super::adjacency::Adjacency;
use super::resolve::ResolvedGraph;

/// Predecessor lists of every node.
pub fn predecessors(graph: &ResolvedGraph) -> Adjacency<u32> {
    Adjacency::new(graph.nodes.len(), graph.intents.iter().map(|&(from, to)| (to, from)))
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
/// entered by an edge from a node that does not exist. Checks about ancestry then say
/// nothing, since the dangling edge is the one fault (SPEC §2.1).
pub fn ancestry_unknown(graph: &ResolvedGraph, upstream: &[bool], node: u32) -> bool {
    graph.entered_from_nowhere.iter().any(|&n| n == node || upstream[n as usize])
}
