//! The salsa database and its inputs.

use std::sync::{Arc, Mutex};

use salsa::Durability;

/// One document's text. The driver decodes bytes (reporting invalid UTF-8) before
/// creating it.
#[salsa::input(debug)]
pub struct SourceFile {
    #[returns(ref)]
    pub path: String,
    /// Shared, so that the driver can keep the text for rendering without a copy.
    #[returns(ref)]
    pub text: Arc<str>,
}

/// What every document is checked against: the catalog, and optionally the tenant
/// context, the binding rows (no rows file is a state of its own, SPEC §1.3) and the
/// definition snapshot of LWIR files.
#[salsa::input(debug)]
pub struct Workspace {
    #[returns(copy)]
    pub catalog: SourceFile,
    #[returns(copy)]
    pub context: Option<SourceFile>,
    #[returns(copy)]
    pub bindings: Option<SourceFile>,
    /// The WorkflowDefinitionSnapshot (seed 000, stage 3) that LWIR files are bound
    /// against; without it the binding checks are skipped (SPEC §6).
    #[returns(copy)]
    pub snapshot: Option<SourceFile>,
}

/// How long a database's inputs stay as they were read.
///
/// A batch run (`little check`, `compile`, `hash`, `graph`) reads each file once and
/// never changes it: its inputs are [`Durability::NEVER_CHANGE`], and salsa then records
/// no dependency on them or on anything derived from them. A file-wide query over a
/// million nodes would otherwise build a dependency set of millions of entries that no
/// later revision reads (docs/decisions.md, "Output"). The language server edits its
/// drafts: it keeps salsa's default, [`Durability::LOW`].
pub const BATCH: Durability = Durability::NEVER_CHANGE;

impl SourceFile {
    /// A file whose fields have the given durability ([`BATCH`] for a batch run).
    pub fn with_durability(db: &dyn salsa::Database, path: String, text: Arc<str>, durability: Durability) -> Self {
        SourceFile::builder(path, text).durability(durability).new(db)
    }
}

/// Names of the queries that executed, for tests and profiling of incrementality.
pub type ExecutionLog = Arc<Mutex<Vec<String>>>;

#[salsa::db]
#[derive(Clone, Default)]
pub struct Database {
    storage: salsa::Storage<Self>,
}

impl Database {
    /// A database that records every query execution (`WillExecute` events) as the
    /// query's debug name and key, e.g. `check_node(Id(402))`.
    pub fn with_execution_log() -> (Database, ExecutionLog) {
        let log = ExecutionLog::default();
        let sink = log.clone();
        let storage = salsa::Storage::new(Some(Box::new(move |event: salsa::Event| {
            if let salsa::EventKind::WillExecute { database_key } = event.kind {
                sink.lock().unwrap().push(format!("{database_key:?}"));
            }
        })));
        (Database { storage }, log)
    }
}

#[salsa::db]
impl salsa::Database for Database {}
