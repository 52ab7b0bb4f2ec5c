//! Conformance of `little` against SPEC.md: the examples of every explanation page are
//! checked (the failing one gets exactly its code, the fixed one gets nothing), and the
//! generated suites of later issues build on the same helpers.

pub mod generate;
pub mod mutations;
pub mod pages;
pub mod strategies;

use little_diagnostics::{Code, Severity};
use little_frontend::catalog::DEFAULT_CATALOG;
use little_ir::topology::Topology;
use little_passes::project::compiled_topology;
use little_passes::{Database, FileReport, SourceFile, Workspace, report};

/// Documents to check one draft with.
#[derive(Clone, Debug, Default)]
pub struct Setup {
    pub catalog: Option<String>,
    pub context: Option<String>,
    pub bindings: Option<String>,
    /// The WorkflowDefinitionSnapshot that LWIR documents are bound against.
    pub snapshot: Option<String>,
}

/// Checks one draft (or LWIR) text in a fresh database.
pub fn check_text(draft: &str, setup: &Setup) -> FileReport {
    with_draft(draft, setup, |db, workspace, file| report(db, workspace, file))
}

/// The compiled topology of one draft text, in a fresh database.
pub fn compile_text(draft: &str, setup: &Setup) -> Option<std::sync::Arc<Topology>> {
    with_draft(draft, setup, |db, workspace, file| compiled_topology(db, workspace, file).clone())
}

fn with_draft<T>(draft: &str, setup: &Setup, run: impl FnOnce(&Database, Workspace, SourceFile) -> T) -> T {
    let db = Database::default();
    let catalog =
        SourceFile::new(&db, "catalog.json".into(), setup.catalog.as_deref().unwrap_or(DEFAULT_CATALOG).into());
    let context = setup.context.as_deref().map(|text| SourceFile::new(&db, "context.json".into(), text.into()));
    let bindings = setup.bindings.as_deref().map(|text| SourceFile::new(&db, "bindings.json".into(), text.into()));
    let snapshot = setup.snapshot.as_deref().map(|text| SourceFile::new(&db, "snapshot.json".into(), text.into()));
    let workspace = Workspace::new(&db, catalog, context, bindings, snapshot);
    let file = SourceFile::new(&db, "draft.json".into(), draft.into());
    run(&db, workspace, file)
}

/// The distinct error and warning codes of a report, sorted.
pub fn codes(report: &FileReport) -> Vec<Code> {
    let mut codes: Vec<Code> = report
        .diagnostics
        .iter()
        .filter(|d| matches!(d.severity(), Severity::Error | Severity::Warning))
        .map(|d| d.code)
        .collect();
    codes.sort();
    codes.dedup();
    codes
}
