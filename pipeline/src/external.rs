//! The external planner (`little plan --planner CMD`, SPEC §7.1): the §5 process protocol,
//! one process an attempt, the task on stdin and the LWIR on stdout, replayed an attempt
//! at a time. An attempt with `harness.model.responded` is fast-forwarded (its recorded
//! output and findings reused); an attempt with `harness.model.called` and no response (a
//! crash, a kill, a timeout) is the one in flight and runs again.

use std::time::Duration;

use serde_json::{Value, json};

use crate::capabilities::{Capabilities, hash};
use crate::events::{self, EventLog};
use crate::harness::Observer;
use crate::outer_loop::OuterLoop;
use crate::planner::{self, Ended};
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

/// The fields of a planner's event that are the harness's own (SPEC §7.2): a planner's
/// values for them are dropped.
const HARNESS_FIELDS: &[&str] = &["runId", "seq", "cycle", "turn", "callId", "caller", "attempt", "role"];

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
    let recorded: Vec<events::Event> =
        log.events.iter().filter(|e| e.cycle() == cycle && e.role() == crate::plan::ROLE).cloned().collect();
    let mut planner_runs = 0;
    let mut replayed_attempts = 0;
    let mut previous: Option<(u64, String, Value)> = None;
    let mut attempt: u64 = 1;
    loop {
        let responded = recorded.iter().find(|e| e.kind == events::MODEL_RESPONDED && e.attempt() == Some(attempt));
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
        let in_flight = recorded.iter().any(|e| e.kind == events::MODEL_CALLED && e.attempt() == Some(attempt));
        if !in_flight {
            log.append(
                events::MODEL_CALLED,
                json!({ "role": crate::plan::ROLE, "cycle": cycle, "attempt": attempt, "taskHash": hash(&task) }),
            )
            .map_err(Failure::Tool)?;
        }
        let task_text = serde_json::to_string(&task).expect("JSON values serialize");
        let env = [
            ("LITTLE_RUN_ID", run_id.clone()),
            ("LITTLE_ATTEMPT", attempt.to_string()),
            ("LITTLE_MAX_ATTEMPTS", max_attempts.to_string()),
            ("LITTLE_CYCLE", cycle.to_string()),
        ];
        planner_runs += 1;
        let output = planner::run(
            command,
            task_text.as_bytes(),
            &env,
            timeout,
            |kind, fields| {
                let mut payload = serde_json::Map::new();
                if let Value::Object(fields) = fields {
                    payload.extend(fields.into_iter().filter(|(key, _)| !HARNESS_FIELDS.contains(&key.as_str())));
                }
                payload.insert("role".into(), json!(crate::plan::ROLE));
                payload.insert("attempt".into(), json!(attempt));
                payload.insert("caller".into(), json!("model"));
                payload.insert("cycle".into(), json!(cycle));
                log.append(kind, Value::Object(payload)).map(|_| ())
            },
            |line| observer.note(&format!("planner: {line}")),
        )
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
            Ended::Exited(status) if !status.success() => {
                let tail = output.stderr_tail.join("\n");
                Some((
                    format!("exited with {status}"),
                    format!(
                        "the planner failed on attempt {attempt} ({status}){}",
                        if tail.is_empty() { String::new() } else { format!(":\n{tail}") }
                    ),
                ))
            }
            Ended::Exited(_) => None,
        };
        if let Some((reason, message)) = failure {
            log.append(
                events::MODEL_FAILED,
                json!({ "role": crate::plan::ROLE, "cycle": cycle, "attempt": attempt, "reason": reason }),
            )
            .map_err(Failure::Tool)?;
            return Err(Failure::Tool(message));
        }
        let validation = validate(capabilities, &attempt_path(attempt), &output.stdout);
        let valid = !validation.blocking();
        log.append(
            events::MODEL_RESPONDED,
            json!({
                "role": crate::plan::ROLE,
                "cycle": cycle,
                "attempt": attempt,
                "output": &*validation.text,
                "outputHash": little_hashing::sha256_identity(&output.stdout),
                "valid": valid,
                "findings": validation.findings_json(),
            }),
        )
        .map_err(Failure::Tool)?;
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

/// The PlanTask of seed 000 (`kind`, `workflowSnapshot`, `input`), with what a planner
/// outside the SDK needs besides: the schemas and tool descriptors the snapshot only
/// hashes, its system prompt and skills, the attempt, and for a repair the previous
/// attempt's output and findings; for a later outer-loop cycle the seed's
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
