//! `little plan`: stages 1 to 8 of seed 000, every step recorded in the run's event log
//! and replayed from it on resume.
//!
//! Resume rules: an attempt with a `harness.model.responded` event is fast-forwarded
//! (its recorded output and findings are reused, the planner is not run); an attempt
//! with `harness.model.called` and no response (a crash, a kill, a timeout) is the
//! in-flight one and runs again; a completed session is never re-run. A run whose
//! PlannerManifest hash differs from the recorded one stops with
//! `pipeline.capability_drift`.
//!
//! Each outer-loop cycle of a run (`--outer-loop`, see [`crate::outer_loop`]) is a session
//! of its own: every event carries its `cycle`, and all of the above reads only the events
//! of the requested cycle (an event without `cycle` is cycle 1's).

use std::path::Path;
use std::time::Duration;

use little_diagnostics::Code;
use little_frontend::anchor::{Anchor, Finding, Resolver};
use little_passes::Database;
use serde_json::{Value, json};

use crate::capabilities::{Capabilities, hash, manifest_diff};
use crate::documents::{LoadedDefinition, load_definition, load_input, missing_tools};
use crate::events::{self, Event, EventLog};
use crate::outer_loop::{OuterLoop, cycle_of, load_outer_loop};
use crate::planner::{self, Ended};
use crate::register::{Registration, Validation, register, validate};
use crate::{Failure, Located};

/// What `little plan` was asked to do.
#[derive(Clone, Debug)]
pub struct PlanRequest<'a> {
    pub definition: &'a Path,
    pub input: &'a Path,
    /// Run as `sh -c PLANNER`.
    pub planner: &'a str,
    pub run_id: &'a str,
    pub events: &'a Path,
    pub timeout: Duration,
    pub max_attempts: u32,
    /// The outer-loop file of a later cycle (`--outer-loop`); `None` plans cycle 1.
    pub outer_loop: Option<&'a Path>,
}

/// A registered run.
#[derive(Debug)]
pub struct PlanReport {
    pub registration: Registration,
    /// How many times the planner process was started in this invocation.
    pub planner_runs: u32,
    /// Attempts fast-forwarded from the log.
    pub replayed_attempts: u32,
    /// The attempt whose LWIR was registered.
    pub attempt: u64,
}

const ROLE: &str = "planner";

/// Runs (or resumes) the pipeline. `note` receives messages for the user's stderr: the
/// planner's own stderr lines, a cut torn log line.
pub fn plan(request: &PlanRequest<'_>, note: &mut dyn FnMut(&str)) -> Result<PlanReport, Failure> {
    let run_id = request.run_id;
    let db = Database::default();
    let loaded = load_definition(&db, request.definition)?;
    // A bad outer-loop file is a bad argument: refused before the log is touched.
    let outer_loop =
        request.outer_loop.map(|path| load_outer_loop(path, loaded.definition.max_outer_cycles)).transpose()?;
    let cycle = cycle_of(outer_loop.as_ref());
    let mut log = EventLog::open(request.events).map_err(Failure::Tool)?;
    if log.truncated_bytes > 0 {
        note(&format!(
            "warning: the event log `{}` ended in a torn line ({} bytes, from an interrupted write); it was cut off",
            request.events.display(),
            log.truncated_bytes
        ));
    }
    let fail = |log: &mut EventLog, cause: &str, failure: Failure| -> Failure {
        let message = match &failure {
            Failure::Blocked(located) => {
                located.iter().flat_map(|l| &l.diagnostics).map(|d| d.message.clone()).collect::<Vec<_>>().join("; ")
            }
            Failure::Tool(message) => message.clone(),
        };
        match log.append(run_id, events::RUN_FAILED, json!({ "causeCode": cause, "message": message, "cycle": cycle }))
        {
            Ok(_) => failure,
            Err(e) => Failure::Tool(e),
        }
    };

    // Stage 2, then the registry half of stage 3.
    let input = match load_input(&db, request.input, &loaded.definition) {
        Ok(input) => input,
        Err(failure @ Failure::Blocked(_)) => return Err(fail(&mut log, "input_schema_error", failure)),
        Err(failure) => return Err(failure),
    };
    if let Err(failure) = missing_tools(&loaded) {
        return Err(fail(&mut log, "missing_tool", failure));
    }
    // Stages 3 and 4.
    let capabilities = Capabilities::new(loaded.definition.clone()).for_cycle(outer_loop.as_ref());
    let input_hash = hash(&input.value);

    // Stage 5: drift check against this cycle's recorded session (each outer-loop cycle of a
    // run has a session of its own; events without a cycle are cycle 1's).
    let all_started: Vec<Event> = log
        .run(run_id)
        .into_iter()
        .filter(|e| e.kind == events::SESSION_STARTED && e.str("role") == Some(ROLE))
        .cloned()
        .collect();
    let recorded: Vec<Event> = log.run(run_id).into_iter().filter(|e| e.cycle() == cycle).cloned().collect();
    let started = recorded.iter().find(|e| e.kind == events::SESSION_STARTED && e.str("role") == Some(ROLE));
    // A run id names one input, whichever cycle recorded it.
    let another_input = |recorded: &Event| {
        Failure::Tool(format!(
            "run `{run_id}` was started with another input (`{}` hashes to {input_hash}, the run's input to {}); \
             a run id names one definition and one input: use a new `--run-id`",
            input.path,
            recorded.str("inputHash").unwrap_or("nothing"),
        ))
    };
    match started {
        Some(started) => {
            if started.str("manifestHash") != Some(capabilities.manifest_hash.as_str()) {
                let failure = drift(&loaded, &capabilities, started, run_id, cycle);
                return Err(fail(&mut log, "capability_drift", failure));
            }
            if started.str("inputHash") != Some(input_hash.as_str()) {
                return Err(another_input(started));
            }
        }
        None => {
            if let Some(other) = all_started.iter().find(|e| e.str("inputHash") != Some(input_hash.as_str())) {
                return Err(another_input(other));
            }
            log.append(
                run_id,
                events::SESSION_STARTED,
                json!({
                    "role": ROLE,
                    "cycle": cycle,
                    "manifestHash": capabilities.manifest_hash,
                    "manifest": capabilities.manifest,
                    "inputHash": input_hash,
                }),
            )
            .map_err(Failure::Tool)?;
        }
    }

    // Stage 6: the planner session, replayed where the log has it.
    let completed = recorded.iter().find(|e| e.kind == events::SESSION_COMPLETED && e.str("role") == Some(ROLE));
    let mut planner_runs = 0;
    let mut replayed_attempts = 0;
    let mut previous: Option<(u64, String, Value)> = None;
    let mut outcome: Option<(u64, Validation)> = None;
    let mut attempt: u64 = 1;
    loop {
        let responded = recorded.iter().find(|e| e.kind == events::MODEL_RESPONDED && e.attempt() == Some(attempt));
        if let Some(responded) = responded {
            replayed_attempts += 1;
            let output = responded.str("output").unwrap_or_default().to_string();
            if responded.payload.get("valid").and_then(Value::as_bool) == Some(true) {
                let validation = validate(&capabilities, &attempt_path(attempt), output.as_bytes());
                outcome = Some((attempt, validation));
                break;
            }
            previous = Some((attempt, output, responded.payload.get("findings").cloned().unwrap_or(json!([]))));
            attempt += 1;
            continue;
        }
        if completed.is_some() || attempt > u64::from(request.max_attempts) {
            break;
        }
        let task = task_json(
            &capabilities,
            &input.value,
            outer_loop.as_ref(),
            attempt,
            request.max_attempts,
            previous.as_ref(),
        );
        let in_flight = recorded.iter().any(|e| e.kind == events::MODEL_CALLED && e.attempt() == Some(attempt));
        if !in_flight {
            log.append(
                run_id,
                events::MODEL_CALLED,
                json!({ "role": ROLE, "cycle": cycle, "attempt": attempt, "taskHash": hash(&task) }),
            )
            .map_err(Failure::Tool)?;
        }
        let task_text = serde_json::to_string(&task).expect("JSON values serialize");
        let env = [
            ("LITTLE_RUN_ID", run_id.to_string()),
            ("LITTLE_ATTEMPT", attempt.to_string()),
            ("LITTLE_MAX_ATTEMPTS", request.max_attempts.to_string()),
            ("LITTLE_CYCLE", cycle.to_string()),
        ];
        planner_runs += 1;
        let output = planner::run(
            request.planner,
            task_text.as_bytes(),
            &env,
            request.timeout,
            |kind, fields| {
                let mut payload = serde_json::Map::new();
                payload.insert("attempt".into(), json!(attempt));
                payload.insert("caller".into(), json!("model"));
                payload.insert("cycle".into(), json!(cycle));
                if let Value::Object(fields) = fields {
                    payload.extend(fields);
                }
                log.append(run_id, kind, Value::Object(payload)).map(|_| ())
            },
            |line| note(&format!("planner: {line}")),
        )
        .map_err(Failure::Tool)?;
        let failure = match &output.ended {
            Ended::TimedOut => Some((
                format!("timed out after {}", show_duration(request.timeout)),
                format!(
                    "the planner did not finish attempt {attempt} within {} (`--timeout`); it was killed. \
                     Resuming run `{run_id}` runs this attempt again",
                    show_duration(request.timeout)
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
                run_id,
                events::MODEL_FAILED,
                json!({ "role": ROLE, "cycle": cycle, "attempt": attempt, "reason": reason }),
            )
            .map_err(Failure::Tool)?;
            return Err(Failure::Tool(message));
        }
        let validation = validate(&capabilities, &attempt_path(attempt), &output.stdout);
        let valid = !validation.blocking();
        log.append(
            run_id,
            events::MODEL_RESPONDED,
            json!({
                "role": ROLE,
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
            outcome = Some((attempt, validation));
            break;
        }
        previous = Some((attempt, validation.text.to_string(), Value::Array(validation.findings_json())));
        attempt += 1;
    }

    let Some((attempt, validation)) = outcome else {
        // No valid LWIR within the attempts: the session failed with the last findings.
        let Some((last, output, _)) = previous else {
            return Err(Failure::Tool(format!("run `{run_id}` has a completed planner session without any response")));
        };
        if completed.is_none() {
            log.append(
                run_id,
                events::SESSION_COMPLETED,
                json!({ "role": ROLE, "cycle": cycle, "status": "failed", "attempts": last }),
            )
            .map_err(Failure::Tool)?;
            log.append(
                run_id,
                events::RUN_FAILED,
                json!({
                    "causeCode": "lwir_validation_error",
                    "message": format!("no valid LWIR after {last} attempt(s)"),
                    "cycle": cycle,
                }),
            )
            .map_err(Failure::Tool)?;
        }
        let validation = validate(&capabilities, &attempt_path(last), output.as_bytes());
        return Err(Failure::Blocked(vec![Located::from(validation)]));
    };

    // Stages 7 and 8: the LWIR validated, registered and locked. A replayed LWIR that no
    // longer validates (the checks changed since it was recorded) is refused, never locked.
    if validation.blocking() {
        return Err(Failure::Blocked(vec![Located::from(validation)]));
    }
    let registration = register(&capabilities, &validation).map_err(Failure::Tool)?;
    if completed.is_none() {
        log.append(
            run_id,
            events::SESSION_COMPLETED,
            json!({
                "role": ROLE,
                "cycle": cycle,
                "status": "succeeded",
                "attempts": attempt,
                "lwirHash": registration.hash(),
            }),
        )
        .map_err(Failure::Tool)?;
    }
    if !recorded.iter().any(|e| e.kind == events::VERSION_REGISTERED) {
        log.append(
            run_id,
            events::VERSION_REGISTERED,
            json!({
                "workflowVersionId": registration.lock["workflowVersionId"],
                "workflowVersionHash": registration.lock["workflowVersionHash"],
                "lwirVersionId": registration.id(),
                "canonicalizer": little_hashing::CANONICALIZER,
                "lockHash": hash(&registration.lock),
                "cycle": cycle,
            }),
        )
        .map_err(Failure::Tool)?;
    }
    Ok(PlanReport { registration, planner_runs, replayed_attempts, attempt })
}

/// The name under which a planner's output is shown in diagnostics.
fn attempt_path(attempt: u64) -> String {
    format!("planner output (attempt {attempt})")
}

fn show_duration(duration: Duration) -> String {
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
