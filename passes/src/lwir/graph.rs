//! `needs` as edges of the topology graph (docs/reference/formats.md#lwir): `graph.duplicate_node_id` for a step
//! id used twice, `graph.dangling_edge` for a need that names no step, and `graph.cycle`
//! with the witness of docs/reference/diagnostics.md#the-cycle-witness, computed by the one witness function drafts use
//! (`checks::cycles::witnesses`). Needs have no ids, so a witness's `edges` is empty.

use std::collections::HashMap;

use little_diagnostics::{Code, suggest};
use little_frontend::anchor::{Anchor, Finding};

use crate::checks::cycles::{CycleGraph, describe, witnesses};
use crate::db::SourceFile;

use super::lwir_ir;

/// The steps as a graph: which steps each step needs, resolved.
#[derive(Debug, PartialEq, Default)]
pub struct LwirGraph {
    /// Step ids in authored order (duplicates included).
    pub ids: Vec<String>,
    /// For each step, the first occurrences of the steps it needs (deduplicated).
    pub needs: Vec<Vec<u32>>,
    /// For each step, whether one of its needs names no step (its upstream is unknown).
    pub dangling: Vec<bool>,
    /// For each step, the ids named by its dangling needs.
    pub dangling_names: Vec<Vec<String>>,
    pub findings: Vec<Finding>,
}

impl LwirGraph {
    /// The first step with `id`.
    pub fn index_of(&self, id: &str) -> Option<u32> {
        self.ids.iter().position(|s| s == id).map(|i| i as u32)
    }

    /// Whether `target` is in the transitive `needs` of `step` (breadth-first, iterative).
    pub fn is_upstream(&self, step: u32, target: u32) -> bool {
        let mut seen = vec![false; self.ids.len()];
        let mut queue: std::collections::VecDeque<u32> = self.needs[step as usize].iter().copied().collect();
        while let Some(next) = queue.pop_front() {
            if next == target {
                return true;
            }
            if !std::mem::replace(&mut seen[next as usize], true) {
                queue.extend(self.needs[next as usize].iter().copied());
            }
        }
        false
    }
}

#[salsa::tracked(returns(ref))]
pub fn lwir_graph(db: &dyn salsa::Database, file: SourceFile) -> LwirGraph {
    let mut graph = LwirGraph::default();
    let Some(lwir) = lwir_ir(db, file) else { return graph };
    let mut first: HashMap<&str, u32> = HashMap::with_capacity(lwir.steps.len());
    for (i, &step) in lwir.steps.iter().enumerate() {
        let id = step.id(db);
        graph.ids.push(id.clone());
        if step.nth(db) == 0 {
            first.insert(id.as_str(), i as u32);
        } else {
            graph.findings.push(
                Finding::new(
                    Code::GraphDuplicateNodeId,
                    step.anchor(db).at("id"),
                    format!("step id `{id}` is used by more than one step"),
                )
                .node(id)
                .related("first used here", Anchor::step(id, 0).at("id")),
            );
        }
    }
    for &step in &lwir.steps {
        let decl = step.decl(db);
        let mut needs = Vec::with_capacity(decl.needs.len());
        let mut dangling = Vec::new();
        for (index, need) in &decl.needs {
            match first.get(need.as_str()) {
                Some(&target) => {
                    if !needs.contains(&target) {
                        needs.push(target);
                    }
                }
                None => {
                    dangling.push(need.clone());
                    graph.findings.push(
                        Finding::new(
                            Code::GraphDanglingEdge,
                            step.anchor(db).at("needs").at(*index as usize),
                            format!("step `{}` needs `{need}`, but no step has that id", decl.id),
                        )
                        .node(&decl.id)
                        .help(suggest::did_you_mean(need, graph.ids.iter().map(String::as_str))),
                    );
                }
            }
        }
        graph.needs.push(needs);
        graph.dangling.push(!dangling.is_empty());
        graph.dangling_names.push(dangling);
    }
    // Edges run from the needed step to the step that needs it, between first occurrences
    // (a duplicate is reported once, as a duplicate).
    let is_first: Vec<bool> = lwir.steps.iter().map(|s| s.nth(db) == 0).collect();
    let cycle_graph = CycleGraph {
        nodes: graph.ids.iter().map(String::as_str).collect(),
        edges: graph
            .needs
            .iter()
            .enumerate()
            .filter(|(step, _)| is_first[*step])
            .flat_map(|(step, needs)| needs.iter().map(move |&need| (need, step as u32, "")))
            .collect(),
    };
    for mut witness in witnesses(&cycle_graph) {
        witness.edges.clear();
        // The finding stands on the need that closes the loop into the witness's second
        // step (or the step's own need of itself).
        let start = witness.nodes[0].clone();
        let closer = witness.nodes.get(1).unwrap_or(&start).clone();
        let closer_step = lwir.steps.iter().find(|s| s.nth(db) == 0 && *s.id(db) == closer).expect("a step");
        let index = closer_step.decl(db).needs.iter().find(|(_, n)| *n == start).map_or(0, |(i, _)| *i);
        graph.findings.push(
            Finding::new(
                Code::GraphCycle,
                closer_step.anchor(db).at("needs").at(index as usize),
                format!("`needs` close a loop: {}", describe(&witness)),
            )
            .node(&start)
            .witness(witness),
        );
    }
    graph
}
