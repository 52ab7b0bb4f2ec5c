//! Control flow from triggers: `graph.missing_trigger`, `trigger.unwired` and
//! `graph.unreachable_node`. Iterative: no recursion on the depth of a draft.

use little_diagnostics::Code;
use little_frontend::anchor::{Anchor, Finding};

use crate::db::{SourceFile, Workspace};

use super::adjacency::Adjacency;
use super::resolve::{ResolvedGraph, resolved_graph};
use crate::unknown::Resolved;

#[salsa::tracked(returns(ref))]
pub fn flow_findings(db: &dyn salsa::Database, workspace: Workspace, file: SourceFile) -> Vec<Finding> {
    check(resolved_graph(db, workspace, file))
}

/// [`flow_findings`]' rule over a resolved graph, for either driver.
pub fn check(graph: &ResolvedGraph) -> Vec<Finding> {
    let mut findings = Vec::new();
    let count = graph.nodes.len();
    // A node of unknown kind (its family did not resolve) could be a trigger.
    let kind_unknown = |i: u32| graph.node(i).family.is_none();
    let triggers: Vec<u32> =
        (0..count as u32).filter(|&i| graph.node(i).is_trigger() && graph.node(i).nth == 0).collect();
    if triggers.is_empty() {
        // An unknown node could be a trigger too.
        let could_be_trigger = graph.damage.nodes || (0..count as u32).any(kind_unknown);
        if !could_be_trigger && graph.nodes.iter().any(|n| n.is_executable()) {
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
    // An unknown edge could leave any trigger and enter any node.
    if graph.damage.edges {
        return findings;
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
    let unreachable: Vec<bool> = graph
        .nodes
        .iter()
        .enumerate()
        .map(|(i, node)| !reached[i] && node.is_executable() && !node.is_trigger() && node.nth == 0)
        .collect();
    for (head, only, shared) in Regions::of(&successors, &unreachable).groups() {
        let node = graph.node(head);
        let mut message =
            format!("node `{}` is unreachable: no trigger leads to it over forward or branch edges", node.id);
        match only.len() {
            0 => {}
            1 => message.push_str(", and so is the 1 node only it leads to"),
            n => message.push_str(&format!(", and so are the {n} nodes only it leads to")),
        }
        let listed = only.len() + shared.len();
        if listed > RELATED_LISTED {
            message.push_str(&format!(" (the first {RELATED_LISTED} of the {listed} are listed)"));
        }
        let mut finding = Finding::new(Code::GraphUnreachableNode, node.anchor(), message).node(&node.id);
        let only = only.iter().map(|&n| (n, "unreachable too: only this node leads here"));
        let shared = shared.iter().map(|&n| (n, "unreachable too: this node and others lead here"));
        for (other, why) in only.chain(shared).take(RELATED_LISTED) {
            finding = finding.related(why, graph.node(other).anchor());
        }
        findings.push(finding);
    }
    findings
}

/// At most this many nodes of a region are listed with its head: a terminal shows each as
/// a label on the source, and ten thousand of them would bury the one fault again.
const RELATED_LISTED: usize = 100;

/// The unreachable nodes grouped by what leads to them: the heads (unreachable nodes that
/// no other unreachable node leads to; in a ring of them that nothing else enters, its
/// first), and for every other unreachable node the head that leads to it when only one
/// does. Each node is labelled at most twice (one head, then several), so this is linear
/// at any size, where a walk from each head was quadratic.
struct Regions {
    /// In node order.
    heads: Vec<u32>,
    /// Per node: the head that leads to it, [`SEVERAL`], or [`NONE`].
    head_of: Vec<u32>,
    /// Per node: the first head that reached it (what a node several heads lead to is
    /// listed under).
    first_head: Vec<u32>,
}

const NONE: u32 = u32::MAX;
const SEVERAL: u32 = u32::MAX - 1;

impl Regions {
    fn of(successors: &Adjacency<u32>, unreachable: &[bool]) -> Regions {
        let count = unreachable.len();
        let mut entered = vec![false; count];
        for from in (0..count as u32).filter(|&n| unreachable[n as usize]) {
            for &to in successors.of(from) {
                if to != from && unreachable[to as usize] {
                    entered[to as usize] = true;
                }
            }
        }
        let heads = (0..count as u32).filter(|&n| unreachable[n as usize] && !entered[n as usize]).collect();
        let mut regions = Regions { heads, head_of: vec![NONE; count], first_head: vec![NONE; count] };
        // In reverse, so that the first head's region is walked first (the queue is a
        // stack): a node several heads lead to is listed under the first of them.
        let mut queue = Vec::new();
        for head in regions.heads.clone().into_iter().rev() {
            regions.label(&mut queue, head, head, head);
        }
        regions.spread(successors, unreachable, &mut queue);
        // Rings that no head leads into: each takes its first node as its head.
        let mut from = 0;
        while let Some(head) =
            (from..count as u32).find(|&n| unreachable[n as usize] && regions.head_of[n as usize] == NONE)
        {
            let at = regions.heads.partition_point(|&h| h < head);
            regions.heads.insert(at, head);
            regions.label(&mut queue, head, head, head);
            regions.spread(successors, unreachable, &mut queue);
            from = head + 1;
        }
        regions
    }

    /// Notes that `head` (or [`SEVERAL`]) leads to `node`, `first` the first head that
    /// reached what leads there; queues it when that changed its label.
    fn label(&mut self, queue: &mut Vec<u32>, node: u32, head: u32, first: u32) {
        let slot = &mut self.head_of[node as usize];
        *slot = match *slot {
            NONE => head,
            current if current == head || current == SEVERAL => return,
            _ => SEVERAL,
        };
        if self.first_head[node as usize] == NONE {
            self.first_head[node as usize] = first;
        }
        queue.push(node);
    }

    /// Carries the labels of the queued nodes to the unreachable nodes they lead to.
    fn spread(&mut self, successors: &Adjacency<u32>, unreachable: &[bool], queue: &mut Vec<u32>) {
        while let Some(node) = queue.pop() {
            let (head, first) = (self.head_of[node as usize], self.first_head[node as usize]);
            for &next in successors.of(node) {
                if unreachable[next as usize] && self.heads.binary_search(&next).is_err() {
                    self.label(queue, next, head, first);
                }
            }
        }
    }

    /// Per head, in order: the other unreachable nodes only it leads to, and those that
    /// several heads lead to and it reached first, each in node order.
    fn groups(&self) -> Vec<(u32, Vec<u32>, Vec<u32>)> {
        let mut groups: Vec<(u32, Vec<u32>, Vec<u32>)> =
            self.heads.iter().map(|&head| (head, Vec::new(), Vec::new())).collect();
        let group = |head: u32| self.heads.binary_search(&head).ok();
        for node in 0..self.head_of.len() as u32 {
            let head = self.head_of[node as usize];
            if head == NONE || head == node {
                continue;
            }
            if head == SEVERAL {
                if let Some(at) = group(self.first_head[node as usize]) {
                    groups[at].2.push(node);
                }
            } else if let Some(at) = group(head) {
                groups[at].1.push(node);
            }
        }
        groups
    }
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
