//! The batch driver: a file checked once, without a database (`little check`, `compile`,
//! `hash`, `graph`, the packages' one-shot `check`). It calls the same rule functions as
//! the queries (`rules`, `checks/`, `project`, `report::gather`), on plain lowered data:
//! no tracked structs, no memos, no part of the lowering handed out through a lock. Only
//! an LWIR file, whose checks read the snapshot through queries, is left to the database
//! (`check` returns `None` for it). docs/benchmarks.md has what this saves.

use std::sync::{Arc, OnceLock};

use little_frontend::anchor::Finding;
use little_frontend::context::{BindingRow, Context};
use little_frontend::draft::{self, ContractsDecl, NodeBindings, NodeDecl, NodeMeta};
use little_frontend::json::JsonTree;
use little_frontend::reparse::DraftOutline;
use little_frontend::{DocumentKind, catalog, context};
use little_ir::Name;
use little_ir::catalog::{Catalog, Family};
use little_ir::draft::{Config, Header, Position};
use little_ir::topology::Topology;
use rustc_hash::FxHashMap;

use crate::checks::config::{CompiledSchema, compile};
use crate::checks::node::{NodeReport, catalog_layer, later_layers};
use crate::checks::resolve::{ResolvedGraph, resolve};
use crate::checks::{branches, contracts, cycles, flow, gates, ports, retries};
use crate::project::{AuthoredHash, authored_hash, build_topology, topology_hash};
use crate::report::{DraftParts, FileReport, Issued, gather, issue, resolve_report};
use crate::rules::{NodeFields, NodeInWorkspace};

/// What every file of a batch run is checked against: the catalog, with each family's
/// config schema compiled the first time a node names the family, the context and the
/// binding rows.
pub struct BatchInputs<'a> {
    catalog: &'a Catalog,
    context: Option<&'a Context>,
    rows: Option<&'a [BindingRow]>,
    /// The catalog's families as the checks hold them, and where each id first stands.
    families: Vec<Arc<Family>>,
    by_id: FxHashMap<&'a str, u32>,
    schemas: Vec<OnceLock<Option<CompiledSchema>>>,
}

impl<'a> BatchInputs<'a> {
    pub fn new(catalog: &'a Catalog, context: Option<&'a Context>, rows: Option<&'a [BindingRow]>) -> BatchInputs<'a> {
        let mut by_id = FxHashMap::default();
        for (at, family) in catalog.families.iter().enumerate() {
            // The first family of an id is the catalog's (`Catalog::family`).
            by_id.entry(family.id.as_str()).or_insert(at as u32);
        }
        BatchInputs {
            catalog,
            context,
            rows,
            families: catalog.families.iter().cloned().map(Arc::new).collect(),
            by_id,
            schemas: catalog.families.iter().map(|_| OnceLock::new()).collect(),
        }
    }

    fn family_index(&self, name: Option<&Name>) -> Option<u32> {
        self.by_id.get(name?.as_str()).copied()
    }

    fn schema(&self, family: u32) -> Option<&CompiledSchema> {
        let family = family as usize;
        self.schemas[family].get_or_init(|| self.families[family].config_schema.as_ref().map(compile)).as_ref()
    }
}

/// One lowered node in the batch run, its family looked up.
struct BatchNode<'a> {
    decl: &'a NodeDecl,
    family: Option<u32>,
    inputs: &'a BatchInputs<'a>,
}

impl NodeFields for BatchNode<'_> {
    fn id(&self) -> &Name {
        &self.decl.id
    }
    fn nth(&self) -> u32 {
        self.decl.nth
    }
    fn config(&self) -> &Option<Config> {
        &self.decl.config
    }
    fn contracts(&self) -> &ContractsDecl {
        &self.decl.contracts
    }
    fn bindings(&self) -> &NodeBindings {
        &self.decl.bindings
    }
    fn meta(&self) -> &NodeMeta {
        &self.decl.meta
    }
    fn position(&self) -> &Option<Position> {
        &self.decl.position
    }
}

impl NodeInWorkspace for BatchNode<'_> {
    fn family_name(&self) -> Option<&str> {
        self.decl.family.as_deref()
    }
    fn family(&self) -> Option<&Arc<Family>> {
        self.family.map(|at| &self.inputs.families[at as usize])
    }
    fn config_schema(&self) -> Option<&CompiledSchema> {
        self.inputs.schema(self.family?)
    }
    fn catalog(&self) -> &Catalog {
        self.inputs.catalog
    }
}

/// A draft checked by the batch driver: what `compile` and `graph` read besides the report.
pub struct CheckedDraft {
    pub header: Header,
    pub nodes: Vec<NodeDecl>,
    pub graph: ResolvedGraph,
}

impl CheckedDraft {
    /// The compiled topology (`little compile`), whether or not something blocks; `None`
    /// when the draft lacks its identity. `tree` is the draft's outline.
    pub fn topology(&self, tree: &JsonTree) -> Option<Topology> {
        build_topology(&self.header, &self.nodes, &self.graph, authored_hash(tree)?)
    }
}

/// A file checked by the batch driver.
pub struct Checked {
    pub report: FileReport,
    /// The draft's checked parts, when the file is a draft.
    pub draft: Option<CheckedDraft>,
}

/// A file's outline, as the batch driver reads it: on one thread parsed whole, a draft's
/// elements lowered while the parser holds each; on `jobs > 1` threads a draft's elements
/// parsed and lowered side by side ([`DraftOutline::parse_on`]). The same outline on any
/// number.
pub fn outline(text: Arc<str>, jobs: usize) -> DraftOutline {
    DraftOutline::parse_on(text, jobs)
}

/// Checks one file from its outline, as [`crate::report`] does through the database, and
/// to the same report, on `jobs` threads (the report is the same on any number); `None`
/// for an LWIR file (left to the database).
pub fn check(inputs: &BatchInputs<'_>, mut outline: DraftOutline, jobs: usize) -> Option<Checked> {
    let kind = outline.tree.as_ref().map(little_frontend::document_kind);
    if matches!(kind, Some(Ok(DocumentKind::Lwir))) {
        return None;
    }
    let elements = outline.elements.take();
    let mut checked_draft = None;
    let report =
        resolve_report(&outline.diagnostics, outline.tree.as_ref(), &outline.damaged, kind.as_ref(), true, |kind| {
            let tree = outline.tree.as_ref().expect("a document kind is read from a tree");
            match kind {
                DocumentKind::Draft => {
                    let elements = elements.map(Arc::unwrap_or_clone).unwrap_or_default();
                    let (findings, candidate, draft) = check_draft(inputs, tree, elements, jobs);
                    checked_draft = Some(draft);
                    (findings, candidate.map(Issued::Draft))
                }
                DocumentKind::Catalog => (catalog::read_catalog(tree).1, None),
                DocumentKind::Context => (context::read_context(tree).1, None),
                DocumentKind::Bindings => (context::read_bindings(tree).1, None),
                DocumentKind::Definition => {
                    let (definition, mut findings) = little_frontend::definition::read_definition(tree);
                    findings.extend(crate::definition::schema_findings(&definition));
                    (findings, None)
                }
                DocumentKind::Lwir => unreachable!("left to the database above"),
            }
        });
    Some(Checked { report, draft: checked_draft })
}

/// The resolved graph, the findings of the checks that read only it, and (on more than
/// one thread) the topology hash, computed before anyone knows whether it is needed.
type GraphDone = (ResolvedGraph, [Vec<Finding>; 5], Option<Option<String>>);

/// What one task of a draft's check gives (see [`check_draft`]).
enum Done {
    Graph(Box<GraphDone>),
    /// A part of the authored hash, fed to its digest.
    Authored,
    /// The catalog layer and the later layers of a run of nodes.
    Nodes(Vec<(NodeReport, Vec<Finding>)>),
}

/// How many nodes one task checks: enough that a task outweighs taking it, few enough
/// that the threads finish together.
const NODES_A_TASK: usize = 2048;

/// A draft's findings, its candidate, and what it was checked as. On `jobs` threads
/// (scoped, this one among them), the independent parts run side by side, each thread
/// taking the next task of a fixed list: the graph (resolved from the lowered edges, which
/// it then drops, then the checks that read only it, then the topology hash), the parts of
/// the authored hash (it reads only the text; [`AuthoredHash`]), and the node layers, a
/// run of nodes a task. Each result has its place in the list, so the findings are
/// gathered in the same order whatever the thread count. On one thread both hashes wait
/// until nothing blocks, as they always did.
fn check_draft(
    inputs: &BatchInputs<'_>,
    tree: &JsonTree,
    elements: draft::DraftElements,
    jobs: usize,
) -> (Vec<Finding>, Option<crate::project::Candidate>, CheckedDraft) {
    let mut lowered = draft::lower_draft_from(tree, elements);
    // Each edge is held once: the graph's task takes the lowered edges and drops them once
    // the graph is resolved from them, before the rest of its work.
    let edges = std::sync::Mutex::new(std::mem::take(&mut lowered.edges));
    let nodes: Vec<BatchNode<'_>> = lowered
        .nodes
        .iter()
        .map(|decl| BatchNode { decl, family: inputs.family_index(decl.family.as_ref()), inputs })
        .collect();
    let runs: Vec<&[BatchNode<'_>]> = nodes.chunks(NODES_A_TASK).collect();
    let speculate = jobs > 1;
    let authored = speculate.then(|| AuthoredHash::new(tree));
    let authored_parts = authored.as_ref().map_or(0, AuthoredHash::parts);
    let authored_feed = authored.as_ref().map(|hash| std::sync::Mutex::new(hash.feed()));
    let task_count = 1 + authored_parts + runs.len();
    let run_task = |task: usize| -> Done {
        match task {
            0 => {
                let edges = std::mem::take(&mut *edges.lock().expect("the lowered edges"));
                let graph =
                    resolve(&nodes, |node| node.family().cloned(), lowered.nodes_unreadable, lowered.damage, &edges);
                drop(edges);
                let layers = [
                    ports::check(&graph),
                    contracts::check(&graph),
                    flow::check(&graph),
                    cycles::check(&graph),
                    retries::check(&graph),
                ];
                // The hash reads only the lowered nodes and the graph, and is defined on any
                // draft (a blocked one's is thrown away), so it need not wait for the findings.
                let topology = speculate.then(|| topology_hash(&lowered.header, &nodes, &graph));
                Done::Graph(Box::new((graph, layers, topology)))
            }
            task if task <= authored_parts => {
                let (hash, feed) = (authored.as_ref().expect("parts"), authored_feed.as_ref().expect("parts"));
                let part = task - 1;
                let text = hash.write_part(part);
                feed.lock().expect("the authored digest").take(hash, part, text);
                Done::Authored
            }
            task => {
                let run = runs[task - 1 - authored_parts];
                Done::Nodes(
                    run.iter()
                        .map(|node| {
                            let report = catalog_layer(node);
                            let later = later_layers(node, &report, inputs.context, inputs.rows);
                            (report, later)
                        })
                        .collect(),
                )
            }
        }
    };
    let mut done = run_tasks(task_count, jobs, run_task).into_iter();
    let Some(Done::Graph(graph)) = done.next() else { unreachable!("the graph is the first task") };
    let (graph, [ports, contracts, flow, cycles, retries], topology) = *graph;
    let authored = authored.map(|hash| {
        let feed = authored_feed.expect("a digest for the parts").into_inner().expect("the authored digest");
        feed.finish(&hash)
    });
    let checked: Vec<(NodeReport, Vec<Finding>)> = done
        .filter_map(|task| match task {
            Done::Authored => None,
            Done::Nodes(checked) => Some(checked),
            Done::Graph(_) => unreachable!("the graph is the first task"),
        })
        .flatten()
        .collect();
    let config = |i: usize| &lowered.nodes[i].config;
    let faulty = |i: usize| checked[i].0.faulty_config.as_slice();
    let graph_layers = [
        ports,
        contracts,
        flow,
        cycles,
        branches::check(&graph, config, faulty),
        gates::check(&graph, config, faulty),
        retries,
    ];
    let parts = DraftParts {
        lowering: &lowered.findings,
        header: &lowered.header,
        catalog_version: &inputs.catalog.version,
        context: inputs.context,
        rows_given: inputs.rows.is_some(),
        graph: &graph,
        nodes: &nodes,
    };
    let node_layers = checked.iter().flat_map(|(report, later)| [&report.findings[..], &later[..]]);
    let findings = gather(parts, node_layers, graph_layers.each_ref().map(Vec::as_slice));
    let candidate = issue(&findings, &lowered.header, &graph, inputs.rows.is_some(), || {
        let authored = authored.unwrap_or_else(|| authored_hash(tree));
        (authored, topology.unwrap_or_else(|| topology_hash(&lowered.header, &nodes, &graph)))
    });
    drop(nodes);
    let draft = CheckedDraft { header: lowered.header, nodes: lowered.nodes, graph };
    (findings, candidate, draft)
}

/// Runs tasks `0..count` on `jobs` threads (this one among them), each thread taking the
/// next task not yet taken; the results in task order.
fn run_tasks<T: Send>(count: usize, jobs: usize, run: impl Fn(usize) -> T + Sync) -> Vec<T> {
    if jobs <= 1 || count <= 1 {
        return (0..count).map(run).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let task = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if task >= count {
                return done;
            }
            done.push((task, run(task)));
        }
    };
    let mut results: Vec<(usize, T)> = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..jobs.min(count)).map(|_| scope.spawn(work)).collect();
        let mut results = work();
        for helper in helpers {
            results.extend(helper.join().expect("a check task panicked"));
        }
        results
    });
    results.sort_unstable_by_key(|&(task, _)| task);
    results.into_iter().map(|(_, result)| result).collect()
}
