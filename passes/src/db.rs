//! The salsa database and its inputs.

use std::sync::{Arc, Mutex, PoisonError};

use little_frontend::reparse::DraftOutline;

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
    /// Set on the files an editor changes ([`SourceFile::edited`]): their last outline,
    /// so that an edit inside one element of a draft parses only that element again.
    #[default]
    #[returns(ref)]
    pub last_outline: Option<Arc<LastOutline>>,
}

/// A file's last outline, kept for its next edit ([`DraftOutline::edit`]). Only a cache:
/// the outline it gives is the one a whole parse gives (`frontend/tests/reparse.rs`), so
/// the query that reads it stays a function of the text.
#[derive(Default)]
pub struct LastOutline(Mutex<Option<DraftOutline>>);

impl std::fmt::Debug for LastOutline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LastOutline")
    }
}

impl LastOutline {
    /// The outline of `text`: the last one patched when the edit allows, else parsed
    /// whole; a draft's is kept for the next edit.
    pub fn next(&self, text: &Arc<str>) -> DraftOutline {
        let mut last = self.0.lock().unwrap_or_else(PoisonError::into_inner).take();
        let outline = if last.as_mut().is_some_and(|last| last.edit_tolerant(text)) {
            last.expect("the outline just patched")
        } else {
            // An edited draft is recovered when it is not JSON (the editor's view of it).
            DraftOutline::parse_tolerant(text.clone())
        };
        if outline.elements.is_some() {
            *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(outline.clone());
        }
        outline
    }

    /// Drops the outline kept: its file is no longer edited.
    pub fn forget(&self) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take();
    }
}

/// What every document is checked against: the catalog, and optionally the tenant
/// context, the binding rows (no rows file is a state of its own, docs/reference/formats.md#context) and the
/// definition snapshot of LWIR files.
#[salsa::input(debug)]
pub struct Workspace {
    #[returns(copy)]
    pub catalog: SourceFile,
    #[returns(copy)]
    pub context: Option<SourceFile>,
    #[returns(copy)]
    pub bindings: Option<SourceFile>,
    /// The WorkflowDefinitionSnapshot (docs/reference/formats.md#snapshot) that LWIR files are bound
    /// against; without it the binding checks are skipped (docs/reference/formats.md#lwir).
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

/// Has the allocator keep what a batch run frees, for the run's next allocations.
///
/// glibc maps each block above 32 MiB afresh and unmaps it when it is freed, so every
/// such block of a large check (the outline's arenas, the elements read, the graph, the
/// sorts) is page-faulted in again page by page: at a million nodes a tenth of a check
/// was the kernel's. Kept in the heap, freed blocks are reused, for 1% more peak memory
/// (docs/benchmarks.md). A batch run exits when it is done; the language server, which
/// lives long and should give memory back, does not call this.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets allocator parameters; glibc applies them under its own
    // lock, and a refused value (a return of 0) leaves the default in place.
    unsafe {
        libc::mallopt(libc::M_MMAP_MAX, 0);
        libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
    }
}

impl SourceFile {
    /// A file whose fields have the given durability ([`BATCH`] for a batch run).
    pub fn with_durability(db: &dyn salsa::Database, path: String, text: Arc<str>, durability: Durability) -> Self {
        SourceFile::builder(path, text).durability(durability).new(db)
    }

    /// A file an editor changes: it keeps its last outline for the next edit.
    pub fn edited(db: &dyn salsa::Database, path: String, text: Arc<str>) -> Self {
        SourceFile::builder(path, text).last_outline(Some(Arc::default())).new(db)
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
