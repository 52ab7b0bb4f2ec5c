//! `little plan` (docs/reference/command-line.md#little-plan): every stage of the pipeline, every step recorded in the run's event log
//! and replayed from it on resume.
//!
//! The planner session (stage 6) is the built-in harness ([`crate::harness`]) or an
//! external planner command ([`crate::external`]); a run keeps the kind it started with.
//! A run whose PlannerManifest hash differs from the recorded one stops with
//! `pipeline.capability_drift`; a completed session is never run again, and a registered
//! run appends nothing.
//!
//! Each outer-loop cycle of a run (`--outer-loop`, see [`crate::outer_loop`]) is a session
//! of its own: every event carries its `cycle`, and all of the above reads only the events
//! of the requested cycle (an event without `cycle` is cycle 1's).

use std::path::Path;
use std::time::Duration;

use little_diagnostics::Code;
use little_frontend::anchor::{Anchor, Finding, Resolver};
use little_passes::Database;
use serde_json::{Map, Value, json};

use crate::capabilities::{Capabilities, hash, manifest_diff};
use crate::documents::{LoadedDefinition, load_definition, load_input, missing_tools};
use crate::events::{self, Event, EventLog, Kind, Record, Session, SessionOf};
use crate::harness::filesystem::{SessionFiles, check_component};
use crate::harness::session::{SessionSpec, SessionStats, Toolbox};
use crate::harness::tools::{PlanToolbox, validate_submission};
use crate::harness::{HarnessOptions, Observer, prompt, runner};
use crate::outer_loop::{OuterLoop, cycle_of, load_outer_loop};
use crate::register::{Registration, Validation, register};
use crate::{Failure, Located, Store, external};

/// Who plans.
#[derive(Clone, Debug)]
pub enum Planner<'a> {
    /// The built-in harness: the agent loop with the definition's planner model.
    Harness(HarnessOptions<'a>),
    /// An external command (`--planner CMD`), run as `sh -c CMD` once an attempt, killed
    /// past `timeout`.
    External { command: &'a str, timeout: Duration },
}

impl Planner<'_> {
    /// How a session start records the planner kind: a run resumes with the kind it began with.
    fn kind(&self) -> &'static str {
        match self {
            Planner::Harness(_) => "builtin",
            Planner::External { .. } => "external",
        }
    }
}

/// What `little plan` was asked to do.
#[derive(Clone, Debug)]
pub struct PlanRequest<'a> {
    pub definition: &'a Path,
    pub input: &'a Path,
    pub planner: Planner<'a>,
    pub run_id: &'a str,
    pub events: &'a crate::Store,
    /// Submissions (built-in) or attempts (external) that may be refused.
    pub max_attempts: u32,
    /// The outer-loop file of a later cycle (`--outer-loop`); `None` plans cycle 1.
    pub outer_loop: Option<&'a Path>,
    /// How long to wait for another `little` writing the same log.
    pub lock_wait: Duration,
}

/// A registered run.
#[derive(Debug)]
pub struct PlanReport {
    pub registration: Registration,
    /// External planner: processes started in this invocation.
    pub planner_runs: u32,
    /// External planner: attempts fast-forwarded from the log.
    pub replayed_attempts: u32,
    /// The attempt (external) or the submission (built-in) whose LWIR was registered.
    pub attempt: u64,
    /// Built-in harness: calls made and replayed in this invocation.
    pub session: SessionStats,
}

pub(crate) const ROLE: &str = "planner";

/// Runs (or resumes) the pipeline.
pub fn plan(request: &PlanRequest<'_>, observer: &mut dyn Observer) -> Result<PlanReport, Failure> {
    plan_with_registry(request, &crate::Registry::default(), observer)
}

/// [`plan`] with the definition's tools joined by those of `registry` (MCP servers').
pub fn plan_with_registry(
    request: &PlanRequest<'_>,
    registry: &crate::Registry,
    observer: &mut dyn Observer,
) -> Result<PlanReport, Failure> {
    let run_id = request.run_id;
    check_component("run id", run_id).map_err(Failure::Tool)?;
    let db = Database::default();
    let mut loaded = load_definition(&db, request.definition)?;
    loaded.definition.tools = registry.joined(&loaded.definition.tools)?;
    // A bad outer-loop file is a bad argument: refused before the log is touched.
    let outer_loop =
        request.outer_loop.map(|path| load_outer_loop(path, loaded.definition.max_outer_cycles)).transpose()?;
    let cycle = cycle_of(outer_loop.as_ref());
    let mut log = open_log(request.events, run_id, request.lock_wait, observer)?;

    // Stage 2, then the registry half of stage 3.
    let input = match load_input(&db, request.input, &loaded.definition) {
        Ok(input) => input,
        Err(failure @ Failure::Blocked(_)) => {
            return Err(run_failed(&mut *log, Session { role: ROLE, cycle }, "input_schema_error", failure));
        }
        Err(failure) => return Err(failure),
    };
    if let Err(failure) = missing_tools(&loaded) {
        return Err(run_failed(&mut *log, Session { role: ROLE, cycle }, "missing_tool", failure));
    }
    // Stages 3 and 4.
    let capabilities =
        Capabilities::new(loaded.definition.clone()).for_cycle(outer_loop.as_ref()).with_registry(registry);
    let input_hash = hash(&input.value);

    // Stage 5: drift check against this cycle's recorded session (each outer-loop cycle of a
    // run has a session of its own; events without a cycle are cycle 1's).
    let session_starts = |log: &EventLog| -> Vec<Event> {
        log.events().iter().filter(|e| e.known() == Some(Kind::SessionStarted) && e.role() == ROLE).cloned().collect()
    };
    let all_started = session_starts(&*log);
    let started = all_started.iter().find(|e| e.cycle() == cycle).cloned();
    // A run id names one input, whichever cycle recorded it.
    let another_input = |recorded: &Event| {
        Failure::Tool(format!(
            "run `{run_id}` was started with another input (`{}` hashes to {input_hash}, the run's input to {}); \
             a run id names one definition and one input: use a new `--run-id`",
            input.path,
            recorded.str("inputHash").unwrap_or("nothing"),
        ))
    };
    if let Some(started) = &started {
        if started.str("manifestHash") != Some(capabilities.manifest_hash.as_str()) {
            let failure = drift(&loaded, &capabilities, started, run_id, cycle);
            return Err(run_failed(&mut *log, Session { role: ROLE, cycle }, "capability_drift", failure));
        }
        if started.str("inputHash") != Some(input_hash.as_str()) {
            return Err(another_input(started));
        }
        // Logs from before the built-in harness recorded no kind: theirs was external.
        let recorded_kind = started.str("planner").unwrap_or("external");
        if recorded_kind != request.planner.kind() {
            return Err(Failure::Tool(match recorded_kind {
                "external" => format!(
                    "run `{run_id}` was started with an external planner (`--planner`); resume it with `--planner`, \
                     or start a new run with another `--run-id`"
                ),
                _ => format!(
                    "run `{run_id}` was started with the built-in harness; resume it without `--planner`, \
                     or start a new run with another `--run-id`"
                ),
            }));
        }
    } else if let Some(other) = all_started.iter().find(|e| e.str("inputHash") != Some(input_hash.as_str())) {
        return Err(another_input(other));
    }

    // Stage 6: the planner session, replayed where the log has it.
    match &request.planner {
        Planner::Harness(options) => {
            let run = HarnessRun { request, options, capabilities: &capabilities, cycle, input: &input.value };
            run.plan(&mut *log, &input_hash, outer_loop.as_ref(), observer)
        }
        Planner::External { command, timeout } => {
            if started.is_none() {
                let mut details = Map::new();
                details.insert("inputHash".into(), json!(input_hash));
                let started = started_record(&capabilities, "external", details);
                events::write(&mut *log, Session { role: ROLE, cycle }, started)?;
            }
            let completed = log
                .events()
                .iter()
                .any(|e| e.known() == Some(Kind::SessionCompleted) && e.role() == ROLE && e.cycle() == cycle);
            let attempts = external::run_attempts(
                &mut *log,
                &capabilities,
                &input.value,
                outer_loop.as_ref(),
                cycle,
                command,
                *timeout,
                request.max_attempts,
                completed,
                observer,
            )?;
            let Some((attempt, validation)) = attempts.outcome else {
                // No valid LWIR within the attempts: the session failed with the last findings.
                let Some(previous) = attempts.previous else {
                    return Err(Failure::Tool(format!(
                        "run `{run_id}` has a completed planner session without any response"
                    )));
                };
                if !completed {
                    let session = Session { role: ROLE, cycle };
                    events::write(&mut *log, session, Record::AttemptsExhausted { attempts: previous.0 })?;
                    let message = format!("no valid LWIR after {} attempt(s)", previous.0);
                    events::write(&mut *log, session, Record::RunFailed { cause: "lwir_validation_error", message })?;
                }
                return Err(Failure::Blocked(vec![external::last_refused(&capabilities, &previous)]));
            };
            let mut extra = Map::new();
            extra.insert("attempts".into(), json!(attempt));
            let registration = finish(&mut *log, &capabilities, cycle, &validation, extra)?;
            Ok(PlanReport {
                registration,
                planner_runs: attempts.planner_runs,
                replayed_attempts: attempts.replayed_attempts,
                attempt,
                session: SessionStats::default(),
            })
        }
    }
}

/// A plan session of the built-in harness.
struct HarnessRun<'r> {
    request: &'r PlanRequest<'r>,
    options: &'r HarnessOptions<'r>,
    capabilities: &'r Capabilities,
    cycle: u64,
    input: &'r Value,
}

impl HarnessRun<'_> {
    fn plan(
        &self,
        log: &mut EventLog,
        input_hash: &str,
        outer_loop: Option<&OuterLoop>,
        observer: &mut dyn Observer,
    ) -> Result<PlanReport, Failure> {
        let definition = &self.capabilities.definition;
        let model =
            json!({ "providerId": definition.planner.model.provider_id, "modelId": definition.planner.model.model_id });
        let mut details = Map::new();
        details.insert("inputHash".into(), json!(input_hash));
        details.insert("model".into(), model);
        let setup = runner::Setup {
            session: Session { role: ROLE, cycle: self.cycle },
            options: self.options,
            definition,
            skills: &definition.planner.skills,
            provider_id: &definition.planner.model.provider_id,
            started: started_record(self.capabilities, "builtin", details),
            failed_cause: "planner_session_failed",
            name: "the planner session",
        };
        let capabilities = self.capabilities;
        let (max_turns, max_attempts) = (self.options.max_turns, self.request.max_attempts);
        let max_tokens = self.options.max_tokens;
        let task = prompt::plan_task(capabilities, self.input, outer_loop);
        let cycle = self.cycle;
        let build = Box::new(move |files: &SessionFiles| {
            let spec = SessionSpec {
                role: ROLE,
                cycle,
                model: definition.planner.model.model_id.clone(),
                system: prompt::plan_system(capabilities, files),
                task,
                max_turns,
                max_tokens,
                max_attempts,
            };
            let toolbox: Box<dyn Toolbox> = Box::new(PlanToolbox { sandbox: files.sandbox.clone(), capabilities });
            Ok((spec, toolbox))
        });
        let refused = |arguments: &Value| validate_submission(capabilities, "last", arguments).map(Located::from);
        let submitted = runner::run(log, setup, observer, build, &refused)?;
        let validation =
            validate_submission(self.capabilities, &submitted.call_id, &submitted.arguments).ok_or_else(|| {
                Failure::Tool(format!(
                    "the accepted submission {} of run `{}` holds no LWIR",
                    submitted.call_id,
                    log.run_id()
                ))
            })?;
        let mut extra = Map::new();
        extra.insert("turns".into(), json!(submitted.turn));
        extra.insert("attempts".into(), json!(submitted.attempts));
        extra.insert("callId".into(), json!(submitted.call_id));
        let registration = finish(log, self.capabilities, self.cycle, &validation, extra)?;
        Ok(PlanReport {
            registration,
            planner_runs: 0,
            replayed_attempts: 0,
            attempt: u64::from(submitted.attempts),
            session: submitted.stats,
        })
    }
}

/// Opens a run's log for appending, telling the user of a wait for its lock and of a torn
/// last line cut off.
pub(crate) fn open_log(
    store: &Store,
    run_id: &str,
    wait: Duration,
    observer: &mut dyn Observer,
) -> Result<Box<EventLog>, Failure> {
    let options = little_store::OpenOptions {
        lock_wait: wait,
        lease: store.lease,
        on_wait: &mut |m| observer.note(m),
        // Nothing a worker whose run was taken over does can be recorded: what it has
        // running is stopped at once.
        on_lost: Some(Box::new(little_sandbox::kill_registered_groups)),
        work_dir: store.work_dir.clone(),
    };
    let mut log = little_store::open_run(&store.location, run_id, options).map_err(Failure::Tool)?;
    if let Some(hook) = &store.on_event {
        log = Box::new(crate::host::Heard { log, hook: hook.clone() });
    }
    for note in log.notes() {
        observer.note(note);
    }
    Ok(log)
}

/// `harness.session.started` of a plan session, with what resuming it checks.
fn started_record(capabilities: &Capabilities, planner: &'static str, details: Map<String, Value>) -> Record {
    Record::SessionStarted {
        planner,
        manifest_hash: capabilities.manifest_hash.clone(),
        manifest: capabilities.manifest.clone(),
        details,
    }
}

/// Appends `RunFailed` for a failure before or around the session, and passes the failure on.
pub(crate) fn run_failed(log: &mut EventLog, session: Session, cause: &'static str, failure: Failure) -> Failure {
    let message = match &failure {
        // A cancelled run has not failed: it resumes.
        Failure::Cancelled => return failure,
        Failure::Blocked(located) => {
            located.iter().flat_map(|l| &l.diagnostics).map(|d| d.message.clone()).collect::<Vec<_>>().join("; ")
        }
        Failure::Tool(message) | Failure::Failed { reason: message, .. } => message.clone(),
    };
    match events::write(log, session, Record::RunFailed { cause, message }) {
        Ok(()) => failure,
        Err(e) => e,
    }
}

/// Stages 7 and 8 after an accepted LWIR: registered and locked, the session's completion
/// and the registration appended unless recorded. A replayed LWIR that no longer validates
/// (the checks changed since it was recorded) is refused, never locked.
fn finish(
    log: &mut EventLog,
    capabilities: &Capabilities,
    cycle: u64,
    validation: &Validation,
    extra: Map<String, Value>,
) -> Result<Registration, Failure> {
    if validation.blocking() {
        return Err(Failure::Blocked(vec![Located::from(validation.clone())]));
    }
    let registration = register(capabilities, validation).map_err(Failure::Tool)?;
    let of_cycle = |log: &EventLog, kind: Kind| {
        log.events().iter().any(|e| {
            e.known() == Some(kind) && e.cycle() == cycle && (kind != Kind::SessionCompleted || e.role() == ROLE)
        })
    };
    let session = Session { role: ROLE, cycle };
    if !of_cycle(log, Kind::SessionCompleted) {
        let mut details = Map::new();
        details.insert("lwirHash".into(), json!(registration.hash()));
        details.extend(extra);
        events::write(log, session, Record::SessionCompleted { details })?;
    }
    if !of_cycle(log, Kind::VersionRegistered) {
        let registered = Record::VersionRegistered {
            workflow_version_id: registration.lock["workflowVersionId"].clone(),
            workflow_version_hash: registration.lock["workflowVersionHash"].clone(),
            lwir_version_id: registration.id().to_string(),
            lock_hash: hash(&registration.lock),
        };
        events::write(log, session, registered)?;
    }
    Ok(registration)
}

/// Where in the definition each manifest field comes from.
fn manifest_field_anchor(field: &str) -> Anchor {
    let root = Anchor::root();
    match field {
        "plannerModelSlotId" => root.at("planner").at("model"),
        "systemPromptHash" => root.at("planner").at("system"),
        "skillsHash" => root.at("planner").at("skills"),
        "globalToolsHash" => root.at("globalTools"),
        "memoryStoreIds" => root.at("memory"),
        _ => root,
    }
}

/// `pipeline.capability_drift`, at the definition field that drifted, with every drifted
/// manifest field shown as recorded → now.
fn drift(loaded: &LoadedDefinition, capabilities: &Capabilities, started: &Event, run_id: &str, cycle: u64) -> Failure {
    let stored = started.payload.get("manifest").cloned().unwrap_or(Value::Null);
    let diff = manifest_diff(&stored, &capabilities.manifest);
    let show = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Null => "(absent)".to_string(),
        other => other.to_string(),
    };
    let lines: Vec<String> = diff.iter().map(|(field, a, b)| format!("{field}: {} → {}", show(a), show(b))).collect();
    let field = diff
        .iter()
        .map(|(f, _, _)| f.as_str())
        .find(|f| *f != "workflowDefinitionHash")
        .or(diff.first().map(|(f, _, _)| f.as_str()))
        .unwrap_or("");
    let message = format!(
        "the planner manifest of cycle {cycle} changed since run `{run_id}` started it (recorded {}, now {}):\n{}",
        started.str("manifestHash").unwrap_or("nothing"),
        capabilities.manifest_hash,
        if lines.is_empty() { "(the recorded event has no manifest to compare)".to_string() } else { lines.join("\n") }
    );
    let tree = little_frontend::json::parse(&loaded.text).tree.expect("the definition parsed before");
    let help = if field == "outerLoopContextHash" {
        format!(
            "give the outer-loop file (`--outer-loop`) cycle {cycle} started with, or start a new run with another `--run-id`"
        )
    } else {
        "restore the definition the run started with, or start a new run with another `--run-id`".to_string()
    };
    let finding = Finding::new(Code::PipelineCapabilityDrift, manifest_field_anchor(field), message).help(Some(help));
    let diagnostic = Resolver::new(&tree).resolve(finding);
    Failure::Blocked(vec![Located {
        path: loaded.path.clone(),
        text: loaded.text.clone(),
        diagnostics: vec![diagnostic],
    }])
}
