//! One harness session from its log to its end, for every role: the provider's client
//! (none for a finished session, which replays from the log alone), the session's files
//! (memory stores from the store when it keeps them), its start recorded once, the loop,
//! and the run's failure recorded once, whether the session diverged from its log or
//! failed. A plan session and a fix session differ only in what they give it.

use little_diagnostics::Code;
use little_frontend::definition::{Definition, Skill};
use serde_json::Value;

use super::filesystem::{self, SessionFiles};
use super::replay::History;
use super::session::{self, SessionEnd, SessionSpec, SessionStats, Toolbox};
use super::{HarnessOptions, Observer, tracked};
use crate::events::{self, EventLog, Kind, Record, Session, SessionOf};
use crate::{Failure, Located};

/// What a role gives the runner.
pub struct Setup<'a> {
    pub session: Session,
    pub options: &'a HarnessOptions<'a>,
    pub definition: &'a Definition,
    /// The skills the session's scratch holds.
    pub skills: &'a [Skill],
    /// The provider of the session's model.
    pub provider_id: &'a str,
    /// The session's start, written when the log has none.
    pub started: Record,
    /// The `RunFailed` cause of a session that hit a bound (`planner_session_failed`, …).
    pub failed_cause: &'static str,
    /// How a failure names the session (`the planner session`).
    pub name: &'static str,
}

/// What a role builds once the session's files exist: the spec and its tools.
pub type Build<'b> = dyn FnOnce(&SessionFiles) -> Result<(SessionSpec, Box<dyn Toolbox + 'b>), Failure> + 'b;

/// A session that ended with an accepted submission.
pub struct Submitted {
    pub turn: u64,
    pub call_id: String,
    pub arguments: Value,
    pub attempts: u32,
    pub stats: SessionStats,
}

/// Runs (or resumes, or replays) the session `setup` describes. A session that hit a
/// bound is `Failure::Failed` with the diagnostics `refused` gives its last refused
/// submission, its `RunFailed` recorded once.
pub fn run(
    log: &mut EventLog,
    setup: Setup<'_>,
    observer: &mut dyn Observer,
    build: Box<Build<'_>>,
    refused: &dyn Fn(&Value) -> Option<Located>,
) -> Result<Submitted, Failure> {
    let Session { role, cycle } = setup.session;
    let history = History::of(log.events(), role, cycle);
    // A finished session needs neither a provider nor a sandbox: it replays from the log.
    let client =
        if history.finished() { None } else { Some(setup.options.caller(setup.provider_id).map_err(Failure::Tool)?) };
    let cancel = setup.options.host.cancel;
    if let (Some(client), Some(cancel)) = (&client, cancel) {
        client.end_on(cancel);
    }
    let memory_root = tracked::memory_root(log, setup.options, setup.definition).map_err(Failure::Tool)?;
    let mut files = filesystem::prepare(
        filesystem::scratch_dir(&log.run_dir(), cycle),
        &memory_root,
        setup.options,
        setup.definition,
        setup.skills,
    )
    .map_err(Failure::Tool)?;
    if let Some(cancel) = cancel {
        files.sandbox.abort = Some(cancel.sandbox_abort());
    }
    if client.is_some() {
        files.note_unenforced(observer);
    }
    let (spec, mut toolbox) = build(&files)?;
    if history.started.is_none() {
        let mut started = setup.started;
        // A bound the sandbox cannot hold here is said where the session's record begins.
        if let Record::SessionStarted { details, .. } = &mut started {
            details.insert("unenforcedBounds".into(), serde_json::json!(files.unenforced_bounds()));
        }
        events::write(log, setup.session, started)?;
    }
    let (end, stats) = match session::run(log, &spec, &files, client.as_ref(), cancel, toolbox.as_mut(), observer) {
        Ok(ended) => ended,
        // A divergence is recorded, so that `little events` shows why the run stopped.
        Err(failure) if failure.has_code(Code::PipelineReplayDivergence) => {
            return Err(crate::plan::run_failed(log, setup.session, "replay_divergence", failure));
        }
        Err(failure) => return Err(failure),
    };
    match end {
        SessionEnd::Submitted { turn, call_id, arguments, attempts } => {
            Ok(Submitted { turn, call_id, arguments, attempts, stats })
        }
        SessionEnd::Failed { reason, last_refused } => {
            let recorded = log.events().iter().any(|e| {
                e.known() == Some(Kind::RunFailed)
                    && e.cycle() == cycle
                    && e.str("causeCode") == Some(setup.failed_cause)
            });
            if !recorded {
                events::write(
                    log,
                    setup.session,
                    Record::RunFailed { cause: setup.failed_cause, message: reason.clone() },
                )?;
            }
            let located = last_refused.as_ref().and_then(refused).into_iter().collect();
            let reason = format!("{} failed: {reason}{}", setup.name, stats.replay_note());
            Err(Failure::Failed { reason, located })
        }
    }
}
