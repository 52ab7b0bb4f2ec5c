//! Conformance of `little` against its reference (docs/reference/): the examples of every explanation page are
//! checked (the failing one gets exactly its code, the fixed one gets nothing), and the
//! generated suites of later issues build on the same helpers.

pub mod examples;
pub mod generate;
pub mod layouts;
pub mod lwir;
pub mod mutations;
pub mod pages;
pub mod recovery;
pub mod strategies;

use little_diagnostics::{Code, Severity};
use little_frontend::catalog::DEFAULT_CATALOG;
use little_ir::topology::Topology;
use little_passes::db::BATCH;
use little_passes::project::compiled_topology;
use little_passes::{Database, FileReport, SourceFile, Workspace, report};
use salsa::Durability;

/// Documents to check one draft with.
#[derive(Clone, Debug, Default)]
pub struct Setup {
    pub catalog: Option<String>,
    pub context: Option<String>,
    pub bindings: Option<String>,
    /// The WorkflowDefinitionSnapshot that LWIR documents are bound against.
    pub snapshot: Option<String>,
}

/// Checks one draft (or LWIR) text in a fresh database, as `little check` does: with
/// batch inputs ([`little_passes::db::BATCH`]), on which salsa records no dependencies.
pub fn check_text(draft: &str, setup: &Setup) -> FileReport {
    check_text_with(draft, setup, BATCH)
}

/// Checks one text in a fresh database whose inputs have the given durability;
/// `Durability::LOW` is how the language server holds the drafts it edits.
pub fn check_text_with(draft: &str, setup: &Setup, durability: Durability) -> FileReport {
    with_draft(draft, setup, durability, |db, workspace, file| report(db, workspace, file))
}

/// The compiled topology of one draft text, in a fresh database.
pub fn compile_text(draft: &str, setup: &Setup) -> Option<std::sync::Arc<Topology>> {
    with_draft(draft, setup, BATCH, |db, workspace, file| compiled_topology(db, workspace, file).clone())
}

/// Checks one text with the batch driver (no database), as `little check` does; `None`
/// for an LWIR (which the batch driver leaves to the database). The topology is the one
/// `little compile` writes.
pub fn batch_check_text(text: &str, setup: &Setup) -> Option<(FileReport, Option<Topology>)> {
    batch_check_text_on(text, setup, 1)
}

/// [`batch_check_text`] on `jobs` threads.
pub fn batch_check_text_on(text: &str, setup: &Setup, jobs: usize) -> Option<(FileReport, Option<Topology>)> {
    let tree = |text: &str| little_frontend::json::parse(text).tree.expect("a setup document is JSON");
    let catalog = little_frontend::catalog::read_catalog(&tree(setup.catalog.as_deref().unwrap_or(DEFAULT_CATALOG))).0;
    let context = setup.context.as_deref().map(|text| little_frontend::context::read_context(&tree(text)).0);
    let rows = setup.bindings.as_deref().map(|text| little_frontend::context::read_bindings(&tree(text)).0);
    let inputs = little_passes::batch::BatchInputs::new(&catalog, context.as_ref(), rows.as_deref());
    let outline = little_passes::batch::outline(text.into(), jobs);
    let tree = outline.tree.clone();
    let checked = little_passes::batch::check(&inputs, outline, jobs)?;
    let topology = checked.draft.as_ref().zip(tree.as_ref()).and_then(|(draft, tree)| draft.topology(tree));
    Some((checked.report, topology))
}

/// How the batch driver's report and topology of one text differ from the database's,
/// if they do.
pub fn batch_differs(text: &str, setup: &Setup) -> Option<String> {
    let (report, topology) = batch_check_text(text, setup)?;
    if batch_check_text_on(text, setup, 3).is_none_or(|(r, t)| r != report || t != topology) {
        return Some("the batch driver reports differently on three threads".into());
    }
    let expected = check_text(text, setup);
    if report != expected {
        return Some(format!("the batch driver reports\n{report:#?}\nthe database\n{expected:#?}"));
    }
    let expected = compile_text(text, setup).map(|t| (*t).clone());
    (topology != expected).then(|| format!("the batch driver compiles\n{topology:#?}\nthe database\n{expected:#?}"))
}

fn with_draft<T>(
    draft: &str,
    setup: &Setup,
    durability: Durability,
    run: impl FnOnce(&Database, Workspace, SourceFile) -> T,
) -> T {
    let db = Database::default();
    let file = |path: &str, text: &str| SourceFile::with_durability(&db, path.into(), text.into(), durability);
    let catalog = file("catalog.json", setup.catalog.as_deref().unwrap_or(DEFAULT_CATALOG));
    let context = setup.context.as_deref().map(|text| file("context.json", text));
    let bindings = setup.bindings.as_deref().map(|text| file("bindings.json", text));
    let snapshot = setup.snapshot.as_deref().map(|text| file("snapshot.json", text));
    let workspace = Workspace::builder(catalog, context, bindings, snapshot).durability(durability).new(&db);
    let draft = file("draft.json", draft);
    run(&db, workspace, draft)
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
