//! The top of the pipeline: gathers every layer's findings for one file, applies the
//! suppressions, and issues the candidate (with both hashes) when nothing blocks.

use little_diagnostics::Diagnostic;
use little_frontend::DocumentKind;
use little_frontend::anchor::{Finding, Resolver};
use little_ir::NodeKind;
use salsa::Setter;

use little_frontend::context::Context;
use little_frontend::json::JsonTree;
use little_ir::draft::Header;

use crate::checks::node::node_findings;
use crate::checks::resolve::ResolvedGraph;
use crate::checks::resolve::resolved_graph;
use crate::checks::{
    agents, branches, catalog_version, contracts, cycles, flow, gates, ports, request, retries, suppressions,
};
use crate::db::{SourceFile, Workspace};
use crate::lwir::{WorkflowVersion, check_lwir};
use crate::project::{Candidate, authored_graph_hash, topology_hash};
use crate::queries::{NODE_CHUNK, binding_rows, catalog_of, context, document_kind, draft_ir, outline};
use crate::rules::{NodeFields, TrackedNode};

/// Everything the checks of one draft produced, still anchored (position-free).
#[derive(Debug, PartialEq)]
pub struct DraftOutcome {
    pub findings: Vec<Finding>,
    pub candidate: Option<Candidate>,
}

/// The executable agent nodes of a draft (first occurrences), whose binding status the
/// candidate reports.
fn agent_ids(graph: &crate::checks::resolve::ResolvedGraph) -> Vec<&str> {
    graph
        .nodes
        .iter()
        .filter(|n| n.nth == 0 && n.is_executable() && n.kind() == Some(NodeKind::Agent))
        .map(|n| n.id.as_str())
        .collect()
}

/// Every finding of one draft, suppressions applied, sorted. Separate from the candidate
/// (whose hashes read the whole text), so that an edit that changes no finding stops here:
/// the language server reads only this.
#[salsa::tracked(returns(ref))]
pub fn draft_findings(db: &dyn salsa::Database, workspace: Workspace, file: SourceFile) -> Vec<Finding> {
    let Some(draft) = draft_ir(db, workspace, file) else { return Vec::new() };
    let catalog = &catalog_of(db, workspace.catalog(db)).value;
    let context = context(db, workspace);
    let has_context = context.is_some();
    let node_layers = draft.nodes.iter().flat_map(|&node| node_findings(db, node, has_context));
    let graph = resolved_graph(db, workspace, file);
    let graph_layers = [
        ports::port_findings(db, workspace, file).as_slice(),
        contracts::contract_findings(db, workspace, file),
        flow::flow_findings(db, workspace, file),
        cycles::cycle_findings(db, workspace, file),
        branches::branch_findings(db, workspace, file),
        gates::gate_findings(db, workspace, file),
        retries::retry_findings(db, workspace, file),
    ];
    let parts = DraftParts {
        lowering: &draft.findings,
        header: &draft.header,
        catalog_version: &catalog.version,
        context,
        rows_given: binding_rows(db, workspace).is_some(),
        graph,
        nodes: &TrackedNode::all(db, &draft.nodes),
    };
    gather(parts, node_layers, graph_layers)
}

/// What a draft's findings are gathered from besides its node and graph layers.
pub struct DraftParts<'a, N> {
    /// What lowering found.
    pub lowering: &'a [Finding],
    pub header: &'a Header,
    pub catalog_version: &'a str,
    pub context: Option<&'a Context>,
    /// Whether binding rows were given.
    pub rows_given: bool,
    pub graph: &'a ResolvedGraph,
    /// The draft's nodes, in authored order (their suppress lists).
    pub nodes: &'a [N],
}

/// Every finding of one draft in the report's order, suppressions applied, sorted: the
/// one gathering both drivers share. `node_layers` are the node layers' findings, node
/// by node; `graph_layers` the graph checks', in the order ports, contracts, flow,
/// cycles, branches, gates, retries.
pub fn gather<'a, N: NodeFields>(
    parts: DraftParts<'_, N>,
    node_layers: impl IntoIterator<Item = &'a [Finding]>,
    graph_layers: [&[Finding]; 7],
) -> Vec<Finding> {
    let mut findings = Vec::new();
    findings.extend(parts.lowering.iter().cloned());
    findings.extend(request::check(parts.header, parts.context));
    findings.extend(catalog_version::check(parts.header, parts.catalog_version));
    for layer in node_layers {
        findings.extend(layer.iter().cloned());
    }
    findings.extend(parts.graph.findings.iter().cloned());
    for layer in graph_layers {
        findings.extend(layer.iter().cloned());
    }
    if !parts.rows_given {
        findings.extend(agents::status_unavailable(&agent_ids(parts.graph)));
    }

    // Suppressions silence non-blocking findings on the node that lists them.
    // (Only read when something could be suppressed: most drafts never pay for it.)
    if findings.iter().any(|f| !f.diagnostic.blocking() && f.diagnostic.node_id.is_some()) {
        let suppressing: std::collections::HashMap<&str, &[String]> = parts
            .nodes
            .iter()
            .filter(|n| n.nth() == 0 && !n.meta().suppress().is_empty())
            .map(|n| (n.id().as_str(), n.meta().suppress()))
            .collect();
        findings.retain(|f| !suppressions::is_suppressed(f, |id| suppressing.get(id).copied()));
    }
    findings.sort_by(|a, b| a.at.cmp(&b.at).then_with(|| a.diagnostic.code.cmp(&b.diagnostic.code)));
    findings.dedup();
    findings
}

#[salsa::tracked(returns(ref))]
pub fn check_draft(db: &dyn salsa::Database, workspace: Workspace, file: SourceFile) -> DraftOutcome {
    let findings = draft_findings(db, workspace, file).clone();
    let mut outcome = DraftOutcome { findings, candidate: None };
    let Some(draft) = draft_ir(db, workspace, file) else { return outcome };
    let graph = resolved_graph(db, workspace, file);
    let rows_given = binding_rows(db, workspace).is_some();
    outcome.candidate = issue(&outcome.findings, &draft.header, graph, rows_given, || {
        (
            authored_graph_hash(db, file).clone(),
            topology_hash(&draft.header, &TrackedNode::all(db, &draft.nodes), graph),
        )
    });
    outcome
}

/// The candidate of a draft when none of its findings blocks; `hashes` gives the
/// authored and the topology hash (read only then).
pub fn issue(
    findings: &[Finding],
    header: &Header,
    graph: &ResolvedGraph,
    rows_given: bool,
    hashes: impl FnOnce() -> (Option<String>, Option<String>),
) -> Option<Candidate> {
    if findings.iter().any(|f| f.diagnostic.blocking()) {
        return None;
    }
    let status = match (agent_ids(graph).is_empty(), rows_given) {
        (true, _) => "none",
        (false, false) => "unknown",
        (false, true) => "accepted",
    };
    match hashes() {
        (Some(authored), Some(topology)) => Candidate::new(header, authored, topology, status),
        _ => None,
    }
}

/// What a clean file issues: a draft's candidate, or an LWIR's WorkflowVersion (docs/reference/formats.md#lwir).
/// Both are the report's `candidate`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Issued {
    Draft(Candidate),
    Lwir(WorkflowVersion),
}

impl Issued {
    pub fn id(&self) -> &str {
        match self {
            Issued::Draft(candidate) => &candidate.id,
            Issued::Lwir(version) => &version.id,
        }
    }

    /// As a report (and a compiled document) holds it: the candidate's fields after its
    /// `kind`, which says which of the two it is.
    pub fn to_json(&self) -> serde_json::Value {
        let (kind, fields) = match self {
            Issued::Draft(candidate) => (Issued::DRAFT, candidate.to_json()),
            Issued::Lwir(version) => (Issued::LWIR, version.to_json()),
        };
        let mut object = serde_json::Map::new();
        object.insert("kind".into(), kind.into());
        if let serde_json::Value::Object(fields) = fields {
            object.extend(fields);
        }
        serde_json::Value::Object(object)
    }

    /// The `kind` of a draft's candidate.
    pub const DRAFT: &str = "draftCandidate";
    /// The `kind` of an LWIR's WorkflowVersion.
    pub const LWIR: &str = "workflowVersion";

    /// The draft candidate, if this is one.
    pub fn draft(&self) -> Option<&Candidate> {
        match self {
            Issued::Draft(candidate) => Some(candidate),
            Issued::Lwir(_) => None,
        }
    }

    /// The WorkflowVersion, if this is one.
    pub fn workflow_version(&self) -> Option<&WorkflowVersion> {
        match self {
            Issued::Lwir(version) => Some(version),
            Issued::Draft(_) => None,
        }
    }
}

/// What `little check` shows for one file: resolved, sorted diagnostics and the outcome.
#[derive(Debug, PartialEq)]
pub struct FileReport {
    pub document: Option<DocumentKind>,
    pub diagnostics: Vec<Diagnostic>,
    pub candidate: Option<Issued>,
}

impl FileReport {
    pub fn blocking(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::blocking)
    }

    /// The draft candidate, when the file is a clean draft.
    pub fn draft_candidate(&self) -> Option<&Candidate> {
        self.candidate.as_ref().and_then(Issued::draft)
    }
}

/// Checks one file and resolves every finding to a path and span in its text.
pub fn report(db: &dyn salsa::Database, workspace: Workspace, file: SourceFile) -> FileReport {
    report_with(db, workspace, file, true)
}

/// [`report`] without the candidate (always `None`): the diagnostics alone, which do not
/// need the hashes of the whole text. The language server's path.
pub fn diagnostics_report(db: &dyn salsa::Database, workspace: Workspace, file: SourceFile) -> FileReport {
    report_with(db, workspace, file, false)
}

/// Lets go of what a checked file holds: its text emptied, and the queries that hold
/// most of it (its outline and tree, its lowered draft, its nodes and their checks'
/// results, its findings) run once more. salsa keeps a query's last result until the
/// query runs again, which for a file no longer read would be never. The language server
/// does it with a document it closes.
pub fn release(db: &mut crate::Database, workspace: Workspace, file: SourceFile) {
    let chunks = draft_ir(db, workspace, file).as_ref().map_or(0, |d| d.nodes.len().div_ceil(NODE_CHUNK));
    file.set_text(db).to(std::sync::Arc::from(""));
    outline(db, file);
    crate::queries::parse(db, file);
    document_kind(db, file);
    draft_ir(db, workspace, file);
    // No draft now: each chunk creates no node, so the nodes it created are dropped, and
    // their checks' results with them.
    for chunk in 0..chunks as u32 {
        crate::queries::node_chunk(db, workspace, file, chunk);
    }
    crate::queries::draft_nodes(db, workspace, file);
    resolved_graph(db, workspace, file);
    crate::queries::edge_decls(db, file);
    draft_findings(db, workspace, file);
}

fn report_with(db: &dyn salsa::Database, workspace: Workspace, file: SourceFile, candidate: bool) -> FileReport {
    let parsed = outline(db, file);
    let kind = document_kind(db, file).as_ref();
    resolve_report(&parsed.diagnostics, parsed.tree.as_ref(), &parsed.damaged, kind, candidate, |kind| match kind {
        DocumentKind::Draft if candidate => {
            let outcome = check_draft(db, workspace, file);
            (outcome.findings.clone(), outcome.candidate.clone().map(Issued::Draft))
        }
        DocumentKind::Lwir => {
            let outcome = check_lwir(db, workspace, file);
            (outcome.findings.clone(), outcome.version.clone().map(Issued::Lwir))
        }
        DocumentKind::Draft => (draft_findings(db, workspace, file).clone(), None),
        DocumentKind::Catalog => (crate::queries::catalog_of(db, file).findings.clone(), None),
        DocumentKind::Context => (crate::queries::context_of(db, file).findings.clone(), None),
        DocumentKind::Bindings => (crate::queries::bindings_of(db, file).findings.clone(), None),
        DocumentKind::Definition => (crate::definition::definition_of(db, file).findings.clone(), None),
    })
}

/// A file's report from its outline (`parse` its diagnostics, the tree, what a recovery
/// repaired), its document kind, and `check`, which gives a document's findings and what
/// it issues: every finding resolved to a path and span, sorted. Both drivers end here.
pub fn resolve_report(
    parse: &[Diagnostic],
    tree: Option<&JsonTree>,
    damaged: &[std::ops::Range<u32>],
    kind: Option<&Result<DocumentKind, Box<Finding>>>,
    candidate: bool,
    check: impl FnOnce(DocumentKind) -> (Vec<Finding>, Option<Issued>),
) -> FileReport {
    let mut report = FileReport { document: None, diagnostics: parse.to_vec(), candidate: None };
    let Some(tree) = tree else {
        little_diagnostics::sort(&mut report.diagnostics);
        return report;
    };
    let resolver = Resolver::new(tree);
    match kind.expect("parsed") {
        Err(finding) => report.diagnostics.push(resolver.resolve((**finding).clone())),
        Ok(kind) => {
            report.document = Some(*kind);
            let (findings, issued) = check(*kind);
            report.candidate = issued;
            // On a recovered draft, what lies on the damage is the fault's echo.
            let resolved = findings.into_iter().map(|f| resolver.resolve(f));
            report.diagnostics.extend(
                resolved
                    .filter(|d| !d.span.as_ref().is_some_and(|s| little_frontend::reparse::echoes_damage(damaged, s))),
            );
        }
    }
    little_diagnostics::sort(&mut report.diagnostics);
    // A candidate only when nothing blocks, parse diagnostics (a duplicate key) included,
    // which the draft's own checks do not see.
    if report.blocking() || !candidate {
        report.candidate = None;
    }
    report
}
