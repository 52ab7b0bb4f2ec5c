//! The external planner (`little plan --planner CMD`, docs/reference/harness.md#an-external-planner---planner-cmd): the process protocol,
//! one process an attempt, the task on stdin and the LWIR on stdout, replayed an attempt
//! at a time. An attempt with `harness.model.responded` is fast-forwarded (its recorded
//! output and findings reused); an attempt with `harness.model.called` and no response (a
//! crash, a kill, a timeout) is the one in flight and runs again.
//!
//! The tool events a planner reports are recorded with the harness's own `runId`, `seq`,
//! `cycle`, `attempt`, `role` and `caller` (docs/reference/harness.md#event-kinds), and a harness `callId`
//! `a<attempt>.<n>`; the planner's call id, which pairs its started and ended events, is
//! kept as `plannerCallId`. An event the log could not read back (too deep, too large) is
//! refused with a warning and the run goes on; a failed write ends the run. A planner's
//! stdout past [`planner::MAX_OUTPUT`] fails its attempt (`harness.model.failed`), and
//! nothing of it is recorded.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{Value, json};

use crate::capabilities::{Capabilities, hash};
use crate::events::{self, EventLog, Kind, Record, Session, SessionOf};
use crate::harness::Observer;
use crate::outer_loop::OuterLoop;
use crate::planner::{self, Ended, ProcessRecord, Report};
use crate::register::{Validation, validate};
use crate::{Failure, Located};

/// What the attempts of an external planner came to.
pub struct Attempts {
    /// The valid LWIR and its attempt, or `None` when the attempts ran out.
    pub outcome: Option<(u64, Validation)>,
    /// The last refused attempt: its number, output and findings.
    pub previous: Option<(u64, String, Value)>,
    pub planner_runs: u32,
    pub replayed_attempts: u32,
}

/// The fields of a planner's event that are the harness's own (docs/reference/harness.md#event-kinds): a planner's
/// values for them are dropped (its `callId` is kept as `plannerCallId`).
const HARNESS_FIELDS: &[&str] =
    &["runId", "seq", "cycle", "turn", "callId", "caller", "attempt", "role", "plannerCallId"];

/// The harness's call ids of one attempt's reported tool calls: `a<attempt>.<n>`, `n`
/// counting the planner's distinct call ids in order of first appearance. An attempt run
/// again (it was in flight) goes on from the calls its earlier run recorded, so a call id
/// names one call in the run's cycle. An event without a call id is a call of its own.
struct CallIds {
    attempt: u64,
    next: u64,
    seen: HashMap<String, u64>,
}

impl CallIds {
    fn new(attempt: u64, recorded: &[events::Event]) -> CallIds {
        let prefix = format!("a{attempt}.");
        let earlier = recorded
            .iter()
            .filter(|e| e.attempt() == Some(attempt) && events::PLANNER_TOOL_EVENTS.contains(&e.kind.as_str()))
            .filter_map(|e| e.str("callId")?.strip_prefix(&prefix)?.parse::<u64>().ok())
            .max()
            .unwrap_or(0);
        CallIds { attempt, next: earlier + 1, seen: HashMap::new() }
    }

    /// The payload of a reported event: the planner's fields but the harness's, then the
    /// harness's own values.
    fn payload(&mut self, fields: Value, cycle: u64) -> Value {
        let Value::Object(mut fields) = fields else { return json!({}) };
        let planner_call = fields.remove("callId");
        let mut payload = serde_json::Map::new();
        payload.extend(fields.into_iter().filter(|(key, _)| !HARNESS_FIELDS.contains(&key.as_str())));
        let n = match &planner_call {
            Some(id) => {
                let next = &mut self.next;
                *self.seen.entry(id.to_string()).or_insert_with(|| {
                    *next += 1;
                    *next - 1
                })
            }
            None => {
                self.next += 1;
                self.next - 1
            }
        };
        payload.insert("role".into(), json!(crate::plan::ROLE));
        payload.insert("attempt".into(), json!(self.attempt));
        payload.insert("caller".into(), json!("model"));
        payload.insert("cycle".into(), json!(cycle));
        payload.insert("callId".into(), json!(format!("a{}.{n}", self.attempt)));
        if let Some(id) = planner_call {
            payload.insert("plannerCallId".into(), id);
        }
        Value::Object(payload)
    }
}

#[allow(clippy::too_many_arguments)]
pub fn run_attempts(
    log: &mut EventLog,
    capabilities: &Capabilities,
    input: &Value,
    outer_loop: Option<&OuterLoop>,
    cycle: u64,
    command: &str,
    timeout: Duration,
    max_attempts: u32,
    completed: bool,
    observer: &mut dyn Observer,
) -> Result<Attempts, Failure> {
    let run_id = log.run_id().to_string();
    let session = Session { role: crate::plan::ROLE, cycle };
    // A planner group that an earlier `little` of this run left running (it was killed
    // outright: no handler ran) goes before anything else runs or replays.
    let record = ProcessRecord::new(&log.run_dir(), log.display());
    match record.kill_leftover() {
        Ok(Some(pgid)) => observer.note(&format!(
            "killed the planner processes an earlier `little plan` of run `{run_id}` left running (process group {pgid})"
        )),
        Ok(None) => {}
        Err(e) => observer.note(&format!("warning: {e}")),
    }
    let recorded: Vec<events::Event> =
        log.events().iter().filter(|e| e.cycle() == cycle && e.role() == crate::plan::ROLE).cloned().collect();
    let mut planner_runs = 0;
    let mut replayed_attempts = 0;
    let mut previous: Option<(u64, String, Value)> = None;
    let mut attempt: u64 = 1;
    loop {
        let responded =
            recorded.iter().find(|e| e.known() == Some(Kind::ModelResponded) && e.attempt() == Some(attempt));
        if let Some(responded) = responded {
            replayed_attempts += 1;
            let output = responded.str("output").unwrap_or_default().to_string();
            if responded.payload.get("valid").and_then(Value::as_bool) == Some(true) {
                let validation = validate(capabilities, &attempt_path(attempt), output.as_bytes());
                return Ok(Attempts {
                    outcome: Some((attempt, validation)),
                    previous,
                    planner_runs,
                    replayed_attempts,
                });
            }
            previous = Some((attempt, output, responded.payload.get("findings").cloned().unwrap_or(json!([]))));
            attempt += 1;
            continue;
        }
        if completed || attempt > u64::from(max_attempts) {
            return Ok(Attempts { outcome: None, previous, planner_runs, replayed_attempts });
        }
        let task = task_json(capabilities, input, outer_loop, attempt, max_attempts, previous.as_ref());
        let in_flight = recorded.iter().any(|e| e.known() == Some(Kind::ModelCalled) && e.attempt() == Some(attempt));
        if !in_flight {
            events::write(log, session, Record::AttemptCalled { attempt, task_hash: hash(&task) })?;
        }
        let task_text = serde_json::to_string(&task).expect("JSON values serialize");
        let env = [
            ("LITTLE_RUN_ID", run_id.clone()),
            ("LITTLE_ATTEMPT", attempt.to_string()),
            ("LITTLE_MAX_ATTEMPTS", max_attempts.to_string()),
            ("LITTLE_CYCLE", cycle.to_string()),
        ];
        planner_runs += 1;
        let mut calls = CallIds::new(attempt, &recorded);
        let output = planner::run(command, task_text.as_bytes(), &env, timeout, Some(&record), &mut |report| {
            match report {
                Report::Event(kind, fields) => {
                    let Some(known) = Kind::parse(kind) else { return Ok(()) };
                    let Value::Object(payload) = calls.payload(fields, cycle) else { return Ok(()) };
                    // What the log could not read back is refused (docs/reference/harness.md#event-kinds: nothing a planner
                    // says can break the log): a warning, and the run goes on. A failed write is
                    // the log's failure, and ends the run.
                    if let Err(why) =
                        events::write_reported(log, session, Record::PlannerTool { kind: known, payload })?
                    {
                        observer.note(&format!(
                            "warning: a planner `{kind}` event of attempt {attempt} was not recorded: {why}"
                        ));
                    }
                    Ok(())
                }
                Report::Stderr(line) => {
                    observer.note(&format!("planner: {line}"));
                    Ok(())
                }
                Report::Warning(warning) => {
                    observer.note(&warning);
                    Ok(())
                }
            }
        })
        .map_err(Failure::Tool)?;
        let failure = match &output.ended {
            Ended::TimedOut => Some((
                format!("timed out after {}", show_duration(timeout)),
                format!(
                    "the planner did not finish attempt {attempt} within {} (`--timeout`); it was killed. \
                     Resuming run `{run_id}` runs this attempt again",
                    show_duration(timeout)
                ),
            )),
            Ended::Exited(code) if *code != 0 => {
                let tail = output.stderr_tail.join("\n");
                Some((
                    format!("exited with code {code}"),
                    format!(
                        "the planner failed on attempt {attempt} (exit code {code}){}",
                        if tail.is_empty() { String::new() } else { format!(":\n{tail}") }
                    ),
                ))
            }
            Ended::Exited(_) if output.oversized => Some((
                format!("wrote more than {} MiB on stdout", planner::MAX_OUTPUT >> 20),
                format!(
                    "the planner wrote more than {} MiB on stdout in attempt {attempt}: an LWIR may be at most that. \
                     Nothing of it was kept or recorded; resuming run `{run_id}` runs this attempt again",
                    planner::MAX_OUTPUT >> 20
                ),
            )),
            Ended::Exited(_) => None,
        };
        if let Some((reason, message)) = failure {
            events::write(log, session, Record::AttemptFailed { attempt, reason })?;
            return Err(Failure::Tool(message));
        }
        let validation = validate(capabilities, &attempt_path(attempt), output.stdout.as_bytes());
        let valid = !validation.blocking();
        let responded = Record::AttemptResponded {
            attempt,
            output: validation.text.to_string(),
            output_hash: little_hashing::sha256_identity(output.stdout.as_bytes()),
            valid,
            findings: Value::Array(validation.findings_json()),
        };
        events::write(log, session, responded)?;
        if valid {
            return Ok(Attempts { outcome: Some((attempt, validation)), previous, planner_runs, replayed_attempts });
        }
        previous = Some((attempt, validation.text.to_string(), Value::Array(validation.findings_json())));
        attempt += 1;
    }
}

/// The diagnostics of the last refused attempt, when the attempts ran out.
pub fn last_refused(capabilities: &Capabilities, previous: &(u64, String, Value)) -> Located {
    Located::from(validate(capabilities, &attempt_path(previous.0), previous.1.as_bytes()))
}

/// The name under which a planner's output is shown in diagnostics.
fn attempt_path(attempt: u64) -> String {
    format!("planner output (attempt {attempt})")
}

pub fn show_duration(duration: Duration) -> String {
    if duration.subsec_millis() == 0 {
        format!("{}s", duration.as_secs())
    } else {
        format!("{}ms", duration.as_millis())
    }
}

/// The PlanTask (docs/reference/harness.md#an-external-planner---planner-cmd; `kind`, `workflowSnapshot`, `input`), with what a planner
/// outside the SDK needs besides: the schemas and tool descriptors the snapshot only
/// hashes, its system prompt and skills, the attempt, and for a repair the previous
/// attempt's output and findings; for a later outer-loop cycle its
/// `outerLoopContext`. No run id (it is in `LITTLE_RUN_ID`): the task is a function of the
/// definition, the input, the prior cycles and the previous attempts only.
pub fn task_json(
    capabilities: &Capabilities,
    input: &Value,
    outer_loop: Option<&OuterLoop>,
    attempt: u64,
    max_attempts: u32,
    previous: Option<&(u64, String, Value)>,
) -> Value {
    let definition = &capabilities.definition;
    let mut task = json!({
        "kind": "plan",
        "workflowSnapshot": capabilities.snapshot,
        "input": input,
        "attempt": attempt,
        "maxAttempts": max_attempts,
        "inputSchema": definition.input_schema,
        "outputSchema": definition.output_schema,
        "tools": capabilities.global_tools.iter().map(Capabilities::tool_json).collect::<Vec<_>>(),
        "planner": {
            "system": definition.planner.system,
            "skills": definition.planner.skills.iter().map(|s| json!({
                "name": s.name, "description": s.description, "content": s.content,
            })).collect::<Vec<_>>(),
        },
    });
    if let Some(outer_loop) = outer_loop {
        task["outerLoopContext"] = outer_loop.task_context();
    }
    if let Some((attempt, output, findings)) = previous {
        task["repair"] = json!({ "attempt": attempt, "output": output, "findings": findings });
    }
    task
}
