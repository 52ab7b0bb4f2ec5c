//! The LWIR compile pipeline of seed 000: a workflow definition (`workflow-definition/v1`)
//! becomes a hashed, locked WorkflowVersion.
//!
//! - [`capabilities`]: the normalized definition, model slots, the snapshot and the
//!   PlannerManifest (stages 1, 3, 4);
//! - [`documents`]: reading the definition and the input, input validation, the tool
//!   registry check (stages 1–3);
//! - [`plan`]: the planner session with its event log, drift check and replay (5, 6);
//! - [`register`]: LWIR validation (through `little check`'s passes), the WorkflowVersion
//!   and the compiler lock (7, 8);
//! - [`events`]: the append-only JSON Lines log; [`planner`]: the planner child process;
//! - [`outer_loop`]: the outer-loop file of a later cycle (`--outer-loop`).

use std::path::Path;
use std::sync::Arc;

use little_diagnostics::Diagnostic;
use little_passes::{Database, SourceFile, Workspace};

pub mod capabilities;
pub mod documents;
pub mod events;
pub mod outer_loop;
pub mod plan;
pub mod planner;
pub mod register;

pub use capabilities::Capabilities;
pub use plan::{PlanReport, PlanRequest, plan};
pub use register::Registration;

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
    let db = Database::default();
    let loaded = documents::load_definition(&db, definition)?;
    let outer_loop =
        outer_loop.map(|path| outer_loop::load_outer_loop(path, loaded.definition.max_outer_cycles)).transpose()?;
    documents::missing_tools(&loaded)?;
    Ok(Capabilities::new(loaded.definition).for_cycle(outer_loop.as_ref()))
}

/// `little lock`: validates an LWIR against a definition, then registers and locks it.
pub fn lock(lwir: &Path, definition: &Path) -> Result<Registration, Failure> {
    let capabilities = capabilities(definition)?;
    let bytes =
        std::fs::read(lwir).map_err(|e| Failure::Tool(format!("cannot read the LWIR `{}`: {e}", lwir.display())))?;
    let validation = register::validate(&capabilities, &lwir.display().to_string(), &bytes);
    if validation.blocking() {
        return Err(Failure::Blocked(vec![validation.into()]));
    }
    register::register(&capabilities, &validation).map_err(Failure::Tool)
}
