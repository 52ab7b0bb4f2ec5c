//! The LWIR compile pipeline (docs/reference/command-line.md#little-plan): a workflow definition (`workflow-definition/v1`)
//! becomes a hashed, locked WorkflowVersion.
//!
//! - [`capabilities`]: the normalized definition, model slots, the snapshot and the
//!   PlannerManifest (stages 1, 3, 4);
//! - [`documents`]: reading the definition and the input, input validation, the tool
//!   registry check (stages 1–3);
//! - [`plan`]: the stages around the planner session: event log, drift check, registration;
//! - [`harness`]: the built-in planner harness, the agent loop of docs/reference/harness.md (6);
//! - [`external`]: an external planner command, one process an attempt (6);
//! - [`register`]: LWIR validation (through `little check`'s passes), the WorkflowVersion
//!   and the compiler lock (7, 8);
//! - [`events`]: the append-only JSON Lines log; [`planner`]: the external planner's process;
//! - [`outer_loop`]: the outer-loop file of a later cycle (`--outer-loop`);
//! - [`fix`]: `little fix`, a fixer session for a failed `code.run` step (docs/reference/harness.md#the-fixer-session-little-fix);
//! - [`verify`]: `little verify`, the runtime's check of an LWIR against its lock (docs/reference/harness.md#verification-little-verify);
//! - [`show`]: how `little events` describes a log to a person;
//! - [`registry`]: tools from outside the definition (MCP servers), joined to its own.
//! - [`host`]: what a host program gives a session (providers as values, its own model,
//!   cancellation, a hook on each event).

use std::path::Path;
use std::sync::Arc;

use little_diagnostics::Diagnostic;
use little_passes::{Database, SourceFile, Workspace};

pub mod capabilities;
pub mod documents;
pub mod events;
pub mod external;
pub mod fix;
pub mod harness;
pub mod host;
pub mod outer_loop;
pub mod plan;
pub mod planner;
pub mod register;
pub mod registry;
pub mod show;
pub mod verify;

pub use capabilities::Capabilities;
pub use harness::HarnessOptions;
pub use plan::{PlanReport, PlanRequest, Planner, plan, plan_with_registry};
pub use register::Registration;
pub use registry::{OfferedTool, Registry};

/// Where a run's history is kept (`--events`) and how long a database store's lease runs
/// (`--lease`).
#[derive(Clone)]
pub struct Store {
    pub location: little_store::Location,
    pub lease: std::time::Duration,
    /// Where a database run keeps its files on this machine (`None`: the working directory).
    pub work_dir: Option<std::path::PathBuf>,
    /// Hears each event the call appends, as it is written (a host's callback).
    pub on_event: Option<host::EventHook>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("location", &self.location)
            .field("lease", &self.lease)
            .field("work_dir", &self.work_dir)
            .field("on_event", &self.on_event.is_some())
            .finish()
    }
}

impl Store {
    /// The default lease of a database store.
    pub const DEFAULT_LEASE: std::time::Duration = std::time::Duration::from_secs(30);

    /// A file log at `path`.
    pub fn file(path: impl Into<std::path::PathBuf>) -> Store {
        Store {
            location: little_store::Location::File(path.into()),
            lease: Store::DEFAULT_LEASE,
            work_dir: None,
            on_event: None,
        }
    }
}

/// Diagnostics of one document, with its text for rendering.
#[derive(Clone, Debug)]
pub struct Located {
    pub path: String,
    pub text: Arc<str>,
    pub diagnostics: Vec<Diagnostic>,
}

impl From<register::Validation> for Located {
    fn from(v: register::Validation) -> Located {
        Located { path: v.path, text: v.text, diagnostics: v.diagnostics }
    }
}

/// Why a pipeline command stopped.
#[derive(Debug)]
pub enum Failure {
    /// Diagnostics block (exit 1).
    Blocked(Vec<Located>),
    /// The tool could not do its job (exit 2).
    Tool(String),
    /// The run failed (exit 1): a planner session hit a bound. `located` holds the
    /// diagnostics of its last refused submission, if any.
    Failed { reason: String, located: Vec<Located> },
    /// The host cancelled the call: nothing more was written, and the run resumes from its
    /// log (the call in flight made again).
    Cancelled,
}

impl Failure {
    /// Whether a blocked failure holds a diagnostic of `code`.
    pub fn has_code(&self, code: little_diagnostics::Code) -> bool {
        match self {
            Failure::Blocked(located) | Failure::Failed { located, .. } => {
                located.iter().flat_map(|l| &l.diagnostics).any(|d| d.code == code)
            }
            Failure::Tool(_) | Failure::Cancelled => false,
        }
    }
}

/// The workspace LWIR is validated in: the embedded catalog and the definition's snapshot.
pub(crate) fn workspace(db: &Database, snapshot: Option<SourceFile>) -> Workspace {
    let catalog =
        SourceFile::new(db, "<embedded catalog>".to_string(), little_frontend::catalog::DEFAULT_CATALOG.into());
    Workspace::new(db, catalog, None, None, snapshot)
}

/// Stages 1 and 3 for `little snapshot`: the definition's capabilities (its global tools
/// must be registered).
pub fn capabilities(definition: &Path) -> Result<Capabilities, Failure> {
    capabilities_for_cycle(definition, None)
}

/// The capabilities of one outer-loop cycle: with an outer-loop file (cycle N ≥ 2), the
/// manifest carries its `outerLoopContextHash`.
pub fn capabilities_for_cycle(definition: &Path, outer_loop: Option<&Path>) -> Result<Capabilities, Failure> {
    capabilities_with_registry(definition, outer_loop, &Registry::default())
}

/// [`capabilities_for_cycle`] with the definition's tools joined by those of `registry`.
pub fn capabilities_with_registry(
    definition: &Path,
    outer_loop: Option<&Path>,
    registry: &Registry,
) -> Result<Capabilities, Failure> {
    capabilities_of(definition, outer_loop, registry, true)
}

/// The capabilities; `require_global_tools: false` leaves a global tool the registry
/// lacks out of them instead of refusing (for `verify`, where that is drift).
pub(crate) fn capabilities_of(
    definition: &Path,
    outer_loop: Option<&Path>,
    registry: &Registry,
    require_global_tools: bool,
) -> Result<Capabilities, Failure> {
    let db = Database::default();
    let mut loaded = documents::load_definition(&db, definition)?;
    loaded.definition.tools = registry.joined(&loaded.definition.tools)?;
    let outer_loop =
        outer_loop.map(|path| outer_loop::load_outer_loop(path, loaded.definition.max_outer_cycles)).transpose()?;
    if require_global_tools {
        documents::missing_tools(&loaded)?;
    }
    Ok(Capabilities::new(loaded.definition).for_cycle(outer_loop.as_ref()).with_registry(registry))
}

/// [`capabilities`] of a definition's text (named `display` in diagnostics), for callers
/// that hold documents in memory (`embed`).
pub fn capabilities_of_text(display: &str, definition: &str) -> Result<Capabilities, Failure> {
    let db = Database::default();
    let loaded = documents::definition_from_text(&db, display.to_string(), definition.into())?;
    documents::missing_tools(&loaded)?;
    Ok(Capabilities::new(loaded.definition))
}

/// `little lock`: validates an LWIR against a definition, then registers and locks it.
pub fn lock(lwir: &Path, definition: &Path) -> Result<Registration, Failure> {
    lock_with_registry(lwir, definition, &Registry::default())
}

/// [`lock`] with the definition's tools joined by those of `registry`.
pub fn lock_with_registry(lwir: &Path, definition: &Path, registry: &Registry) -> Result<Registration, Failure> {
    let capabilities = capabilities_with_registry(definition, None, registry)?;
    let bytes =
        std::fs::read(lwir).map_err(|e| Failure::Tool(format!("cannot read the LWIR `{}`: {e}", lwir.display())))?;
    lock_bytes(&capabilities, &lwir.display().to_string(), &bytes)
}

/// [`lock`] of an LWIR's bytes (named `display`) against a definition's capabilities.
pub fn lock_bytes(capabilities: &Capabilities, display: &str, lwir: &[u8]) -> Result<Registration, Failure> {
    let validation = register::validate(capabilities, display, lwir);
    if validation.blocking() {
        return Err(Failure::Blocked(vec![validation.into()]));
    }
    register::register(capabilities, &validation).map_err(Failure::Tool)
}
