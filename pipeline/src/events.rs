//! The events of a run (what each kind records: `harness/session.rs`, `plan.rs`,
//! `external.rs`, `fix.rs`), written through the run's store (`little_store`): a JSON
//! Lines file or a PostgreSQL database.

pub use little_store::file::{Contents, read};
pub use little_store::{Event, MAX_DEPTH, MAX_EVENT_BYTES, RunLog, depth};

/// A run's history opened by its writer, whichever store holds it.
pub type EventLog = dyn RunLog;

pub const SESSION_STARTED: &str = "harness.session.started";
pub const SESSION_RESUMED: &str = "harness.session.resumed";
pub const MODEL_CALLED: &str = "harness.model.called";
pub const MODEL_RESPONDED: &str = "harness.model.responded";
pub const MODEL_FAILED: &str = "harness.model.failed";
pub const TOOL_STARTED: &str = "harness.tool_call.started";
pub const TOOL_SUCCEEDED: &str = "harness.tool_call.succeeded";
pub const TOOL_FAILED: &str = "harness.tool_call.failed";
pub const SESSION_COMPLETED: &str = "harness.session.completed";
pub const SESSION_FAILED: &str = "harness.session.failed";
pub const VERSION_REGISTERED: &str = "WorkflowVersionRegistered";
pub const RUN_FAILED: &str = "RunFailed";

/// The tool events an external planner may report (see `planner.rs`).
pub const PLANNER_TOOL_EVENTS: &[&str] = &[TOOL_STARTED, TOOL_SUCCEEDED, TOOL_FAILED];

/// What the pipeline reads of any event: its session's cycle, role and attempt.
pub trait SessionOf {
    /// The outer-loop cycle of an event; events written before cycles were recorded are
    /// cycle 1's.
    fn cycle(&self) -> u64;
    /// The session role (`planner`, `fixer`); events written before roles were recorded
    /// are the planner's.
    fn role(&self) -> &str;
    /// The attempt number of an external planner's event.
    fn attempt(&self) -> Option<u64>;
}

impl SessionOf for Event {
    fn cycle(&self) -> u64 {
        self.u64("cycle").unwrap_or(1)
    }

    fn role(&self) -> &str {
        self.str("role").unwrap_or("planner")
    }

    fn attempt(&self) -> Option<u64> {
        self.u64("attempt")
    }
}

/// Whether an event ends a run: what `little events --follow` waits for.
pub fn ends_run(event: &Event) -> bool {
    event.kind == VERSION_REGISTERED
        || event.kind == RUN_FAILED
        || (event.kind == SESSION_COMPLETED && event.role() == "fixer")
}
