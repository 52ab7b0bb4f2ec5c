//! The WorkflowVersion of an LWIR (docs/reference/hashes.md#workflowversion-and-lock-ids):
//! `sha256(canonicalJson(LWIR))`, id `wfver_` + its first 16 hex digits.

use little_frontend::json::{JsonTree, TreeValue};
use little_hashing::{CANONICALIZER, HashSink, write_canonical};

use crate::db::{Database, SourceFile, Workspace};
use crate::queries::{outline, whole_tree};
use crate::report::{FileReport, report};

use super::binding::snapshot_of;

/// A registered LWIR's identity. `canonical_json` is filled only on request (the report
/// streams the hash without building the text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkflowVersion {
    pub id: String,
    pub hash: String,
    pub canonicalizer: &'static str,
    pub canonical_json: Option<String>,
}

impl WorkflowVersion {
    /// `{ id, hash, canonicalizer }`, and `canonicalJson` when it was built.
    pub fn to_json(&self) -> serde_json::Value {
        let mut o = serde_json::Map::new();
        o.insert("id".into(), self.id.clone().into());
        o.insert("hash".into(), self.hash.clone().into());
        o.insert("canonicalizer".into(), self.canonicalizer.into());
        if let Some(text) = &self.canonical_json {
            o.insert("canonicalJson".into(), text.clone().into());
        }
        serde_json::Value::Object(o)
    }
}

/// The WorkflowVersion of a parsed LWIR, whatever its findings; `None` when a number has
/// no canonical form. With `with_text`, the canonical JSON text is kept.
pub fn version_of_tree(tree: &JsonTree, with_text: bool) -> Option<WorkflowVersion> {
    let root = TreeValue { tree, idx: tree.root() };
    let (hash, canonical_json) = if with_text {
        let mut text = String::new();
        write_canonical(root, &mut text).ok()?;
        (little_hashing::sha256_identity(text.as_bytes()), Some(text))
    } else {
        let mut sink = HashSink::default();
        write_canonical(root, &mut sink).ok()?;
        (sink.identity(), None)
    };
    Some(WorkflowVersion {
        id: format!("wfver_{}", little_hashing::short_id(&hash)),
        hash,
        canonicalizer: CANONICALIZER,
        canonical_json,
    })
}

/// The WorkflowVersion (with its canonical JSON) of an LWIR text, when it is JSON; this
/// does not check it (see [`check_lwir_text`]).
pub fn workflow_version(lwir: &str) -> Option<WorkflowVersion> {
    let parsed = little_frontend::json::parse(lwir);
    version_of_tree(parsed.tree.as_ref()?, true)
}

/// What the compile pipeline needs of one LWIR: the full check report (every finding,
/// resolved to paths and spans) and, when nothing blocks, the WorkflowVersion with its
/// canonical JSON.
#[derive(Debug)]
pub struct LwirCheck {
    pub report: FileReport,
    pub version: Option<WorkflowVersion>,
    /// Errors of the snapshot text itself (not JSON, a missing field, a wrong type),
    /// located in the snapshot. The CLI refuses such a snapshot (exit 2); a caller should too.
    pub snapshot_errors: Vec<little_diagnostics::Diagnostic>,
}

/// Checks an LWIR text against an optional snapshot text in a fresh database.
pub fn check_lwir_text(lwir: &str, snapshot: Option<&str>) -> LwirCheck {
    let db = Database::default();
    let catalog = SourceFile::new(&db, "<embedded catalog>".into(), little_frontend::catalog::DEFAULT_CATALOG.into());
    let snapshot = snapshot.map(|text| SourceFile::new(&db, "snapshot.json".into(), text.into()));
    let workspace = Workspace::new(&db, catalog, None, None, snapshot);
    let file = SourceFile::new(&db, "workflow.lwir.json".into(), lwir.into());
    let report = report(&db, workspace, file);
    // The canonical text from the tree the check already parsed.
    let version = match report.candidate {
        Some(_) => whole_tree(&db, file).and_then(|tree| version_of_tree(tree, true)),
        None => None,
    };
    let snapshot_errors = snapshot.map(|file| snapshot_errors(&db, file)).unwrap_or_default();
    LwirCheck { report, version, snapshot_errors }
}

/// The parse and reader errors of a snapshot file, resolved against its text.
pub fn snapshot_errors(db: &dyn salsa::Database, file: SourceFile) -> Vec<little_diagnostics::Diagnostic> {
    let mut errors = outline(db, file).diagnostics.clone();
    if let Some(tree) = whole_tree(db, file) {
        let resolver = little_frontend::anchor::Resolver::new(tree);
        errors.extend(snapshot_of(db, file).findings.iter().cloned().map(|f| resolver.resolve(f)));
    }
    errors.retain(|d| d.severity() == little_diagnostics::Severity::Error);
    little_diagnostics::sort(&mut errors);
    errors
}
