//! Ancestors over forward and branch edges, as the author wired them (`intents`).
//! Iterative: no recursion on the depth of a draft.

use super::resolve::ResolvedGraph;

/// Predecessor lists of every node.
pub fn predecessors(graph: &ResolvedGraph) -> Vec<Vec<u32>> {
    let mut predecessors = vec![Vec::new(); graph.nodes.len()];
    for &(from, to) in &graph.intents {
        predecessors[to as usize].push(from);
    }
    predecessors
}

/// Every node that reaches `node` (not `node` itself, unless it lies on a loop).
pub fn ancestors(predecessors: &[Vec<u32>], node: u32) -> Vec<bool> {
    let mut seen = vec![false; predecessors.len()];
    let mut stack = predecessors[node as usize].clone();
    while let Some(n) = stack.pop() {
        if !seen[n as usize] {
            seen[n as usize] = true;
            stack.extend(&predecessors[n as usize]);
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
