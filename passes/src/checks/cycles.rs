//! `graph.cycle`: loops of forward and branch edges, with the witness of docs/reference/diagnostics.md#the-cycle-witness.
//! [`witnesses`] is the one witness algorithm: LWIR `needs` use it too (`lwir/graph.rs`).
//!
//! A draft without cycles is told apart first ([`is_acyclic`]); components come from
//! petgraph's `kosaraju_scc` (iterative; `tarjan_scc` recurses).
//! The witness is the shortest cycle through the component's smallest node id, found
//! breadth-first over edges sorted by id; among shortest cycles it is the one whose
//! edge-id sequence is smallest.

use std::collections::VecDeque;

use little_diagnostics::{Code, Witness};
use little_frontend::anchor::{Anchor, Finding};
use petgraph::graph::DiGraph;

use crate::db::{SourceFile, Workspace};

use super::adjacency::Adjacency;
use super::resolve::{ResolvedGraph, resolved_graph};

/// A directed graph of named nodes and named edges (drafts and LWIR both lower to it).
pub struct CycleGraph<'a> {
    pub nodes: Vec<&'a str>,
    /// `(from, to, edge id)`.
    pub edges: Vec<(u32, u32, &'a str)>,
}

/// Whether the graph of `count` nodes and these `(from, to)` edges has no cycle: Kahn's
/// algorithm over flat arrays, a few bytes a node. Most drafts have no cycle, and the
/// components and witnesses cost several times more memory than the graph.
///
/// Ready nodes are taken in index order, a sweep, and only a node that becomes ready
/// behind the sweep waits on a stack: most edges of a draft point forward in the order
/// nodes were written, so the counts and lists are read in memory order, not in the
/// scattered order of a depth-first walk (which at a million nodes missed the cache on
/// most steps).
pub fn is_acyclic(count: usize, edges: impl Iterator<Item = (u32, u32)>) -> bool {
    let successors = Adjacency::new(count, edges);
    let mut entering = vec![0u32; count];
    for node in 0..count as u32 {
        for &to in successors.of(node) {
            entering[to as usize] += 1;
        }
    }
    let mut behind = Vec::new();
    let mut done = 0;
    for sweep in 0..count as u32 {
        if entering[sweep as usize] != 0 {
            continue;
        }
        behind.push(sweep);
        while let Some(node) = behind.pop() {
            done += 1;
            for &next in successors.of(node) {
                entering[next as usize] -= 1;
                // Ahead of the sweep, a ready node is taken when the sweep reaches it.
                if entering[next as usize] == 0 && next < sweep {
                    behind.push(next);
                }
            }
        }
    }
    done == count
}

/// Every non-trivial strongly connected component's witness, ordered by the
/// component's smallest node id.
pub fn witnesses(graph: &CycleGraph<'_>) -> Vec<Witness> {
    let mut pg: DiGraph<(), ()> = DiGraph::with_capacity(graph.nodes.len(), graph.edges.len());
    for _ in &graph.nodes {
        pg.add_node(());
    }
    for &(from, to, _) in &graph.edges {
        pg.add_edge(from.into(), to.into(), ());
    }
    let mut self_loop = vec![false; graph.nodes.len()];
    for &(from, to, _) in &graph.edges {
        if from == to {
            self_loop[from as usize] = true;
        }
    }
    let mut component_of = vec![usize::MAX; graph.nodes.len()];
    let mut starts = Vec::new();
    for (c, component) in petgraph::algo::kosaraju_scc(&pg).into_iter().enumerate() {
        if component.len() < 2 && !self_loop[component[0].index()] {
            continue;
        }
        for n in &component {
            component_of[n.index()] = c;
        }
        let smallest =
            component.iter().map(|n| n.index() as u32).min_by_key(|&n| graph.nodes[n as usize]).expect("non-empty");
        starts.push(smallest);
    }
    starts.sort_by_key(|&n| graph.nodes[n as usize]);
    // Outgoing edges of every node, sorted by edge id.
    let mut outgoing = Adjacency::new(graph.nodes.len(), graph.edges.iter().map(|&(from, to, id)| (from, (to, id))));
    // Ties of edge id (LWIR needs have none) go to the smaller target id, so a witness
    // never depends on the authored order.
    for node in 0..graph.nodes.len() as u32 {
        outgoing.of_mut(node).sort_by(|a, b| {
            a.1.cmp(b.1).then_with(|| graph.nodes[a.0 as usize].cmp(graph.nodes[b.0 as usize])).then(a.0.cmp(&b.0))
        });
    }
    starts.into_iter().map(|start| shortest_cycle(graph, &outgoing, &component_of, start)).collect()
}

fn shortest_cycle(
    graph: &CycleGraph<'_>,
    outgoing: &Adjacency<(u32, &str)>,
    component_of: &[usize],
    start: u32,
) -> Witness {
    let component = component_of[start as usize];
    // parent[n] = (previous node, edge id) on the first-found shortest path from start.
    let mut parent: Vec<Option<(u32, usize)>> = vec![None; graph.nodes.len()];
    let mut visited = vec![false; graph.nodes.len()];
    let mut queue = VecDeque::from([start]);
    visited[start as usize] = true;
    let mut closing = None;
    'search: while let Some(node) = queue.pop_front() {
        for (slot, &(next, _)) in outgoing.of(node).iter().enumerate() {
            if component_of[next as usize] != component {
                continue;
            }
            if next == start {
                closing = Some((node, slot));
                break 'search;
            }
            if !visited[next as usize] {
                visited[next as usize] = true;
                parent[next as usize] = Some((node, slot));
                queue.push_back(next);
            }
        }
    }
    let (mut node, slot) = closing.expect("a node of a cycle reaches itself");
    let mut edges = vec![outgoing.of(node)[slot].1];
    let mut nodes = vec![node];
    while node != start {
        let (previous, slot) = parent[node as usize].expect("on the path");
        edges.push(outgoing.of(previous)[slot].1);
        nodes.push(previous);
        node = previous;
    }
    nodes.reverse();
    edges.reverse();
    Witness {
        nodes: nodes.iter().map(|&n| graph.nodes[n as usize].to_string()).collect(),
        edges: edges.iter().map(|e| e.to_string()).collect(),
    }
}

/// The witness as a path: `a -> b -> c -> a`.
pub fn describe(witness: &Witness) -> String {
    let mut path = witness.nodes.join(" -> ");
    if let Some(first) = witness.nodes.first() {
        path.push_str(" -> ");
        path.push_str(first);
    }
    path
}

#[salsa::tracked(returns(ref))]
pub fn cycle_findings(db: &dyn salsa::Database, workspace: Workspace, file: SourceFile) -> Vec<Finding> {
    check(resolved_graph(db, workspace, file))
}

/// [`cycle_findings`]' rule over a resolved graph, for either driver.
pub fn check(graph: &ResolvedGraph) -> Vec<Finding> {
    let progress = graph.edges.iter().filter(|e| e.kind.is_progress());
    if is_acyclic(graph.nodes.len(), progress.map(|e| (e.from, e.to))) {
        return Vec::new();
    }
    let cycle_graph = CycleGraph {
        nodes: graph.nodes.iter().map(|n| n.id.as_str()).collect(),
        edges: graph.edges.iter().filter(|e| e.kind.is_progress()).map(|e| (e.from, e.to, e.id.as_str())).collect(),
    };
    witnesses(&cycle_graph)
        .into_iter()
        .map(|witness| {
            let first_edge = witness.edges.first().cloned().unwrap_or_default();
            let start = &witness.nodes[0];
            let at = graph.edges.iter().find(|e| e.id == first_edge).map_or_else(Anchor::root, |e| e.anchor());
            Finding::new(
                Code::GraphCycle,
                at,
                format!("forward edges close a loop: {} (edges {})", describe(&witness), witness.edges.join(", ")),
            )
            .node(start)
            .edge(&first_edge)
            .witness(witness)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph<'a>(nodes: &[&'a str], edges: &[(u32, u32, &'a str)]) -> CycleGraph<'a> {
        CycleGraph { nodes: nodes.to_vec(), edges: edges.to_vec() }
    }

    #[test]
    fn witness_starts_at_smallest_id_and_is_shortest() {
        // c -> a -> b -> c, plus a longer loop a -> d -> b.
        let g = graph(&["c", "a", "b", "d"], &[(0, 1, "e1"), (1, 2, "e2"), (2, 0, "e3"), (1, 3, "e0"), (3, 2, "e4")]);
        let w = witnesses(&g);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].nodes, ["a", "b", "c"]);
        assert_eq!(w[0].edges, ["e2", "e3", "e1"]);
    }

    #[test]
    fn ties_go_to_the_smaller_edge_id() {
        // Two parallel edges a -> b.
        let g = graph(&["a", "b"], &[(0, 1, "e9"), (0, 1, "e2"), (1, 0, "e5")]);
        let w = witnesses(&g);
        assert_eq!(w[0].edges, ["e2", "e5"]);
    }

    #[test]
    fn one_witness_per_component_in_id_order() {
        let g = graph(&["z", "y", "b", "a"], &[(0, 1, "e1"), (1, 0, "e2"), (2, 3, "e3"), (3, 2, "e4")]);
        let w = witnesses(&g);
        assert_eq!(w.iter().map(|w| w.nodes[0].as_str()).collect::<Vec<_>>(), ["a", "y"]);
    }

    #[test]
    fn acyclic_graph_has_none() {
        let g = graph(&["a", "b", "c"], &[(0, 1, "e1"), (1, 2, "e2"), (0, 2, "e3")]);
        assert!(witnesses(&g).is_empty());
    }

    /// The fast answer agrees with the components on every graph of four nodes (edges
    /// backward and forward in index order, self-loops included).
    #[test]
    fn is_acyclic_agrees_with_the_witnesses() {
        let pairs: Vec<(u32, u32)> = (0..4).flat_map(|a| (0..4).map(move |b| (a, b))).collect();
        let ids: Vec<String> = (0..pairs.len()).map(|i| format!("e{i}")).collect();
        for mask in 0u32..(1 << pairs.len()) {
            let edges: Vec<(u32, u32, &str)> = (0..pairs.len())
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| (pairs[i].0, pairs[i].1, ids[i].as_str()))
                .collect();
            let acyclic = is_acyclic(4, edges.iter().map(|&(from, to, _)| (from, to)));
            assert_eq!(acyclic, witnesses(&graph(&["a", "b", "c", "d"], &edges)).is_empty(), "{edges:?}");
        }
    }

    #[test]
    fn million_node_chain_does_not_overflow() {
        let names: Vec<String> = (0..1_000_000).map(|i| format!("n{i:07}")).collect();
        let ids: Vec<String> = (0..1_000_000).map(|i| format!("e{i:07}")).collect();
        let nodes: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut edges: Vec<(u32, u32, &str)> = (0..999_999u32).map(|i| (i, i + 1, ids[i as usize].as_str())).collect();
        assert!(witnesses(&graph(&nodes, &edges)).is_empty());
        assert!(is_acyclic(nodes.len(), edges.iter().map(|&(from, to, _)| (from, to))));
        // Close the chain: one million-node cycle.
        edges.push((999_999, 0, ids[999_999].as_str()));
        assert!(!is_acyclic(nodes.len(), edges.iter().map(|&(from, to, _)| (from, to))));
        let w = witnesses(&graph(&nodes, &edges));
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].nodes.len(), 1_000_000);
        assert_eq!(w[0].nodes[0], "n0000000");
    }
}
