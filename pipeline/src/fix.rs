//! `little fix` (SPEC §7.5): a fixer session (`kind: "fix_step"`) for a failed `code.run`
//! step that declares `onFailure.fixer`. The same harness as a plan session — events,
//! replay, sandbox — with the fixer's model slot, its `system` and at most its
//! `maxAttempts` refused submissions; the tools are `bash` and `submit_fix { files }`.
//! A submission is the LWIR with the step's files replaced, checked by `little check`'s
//! own passes; the accepted one is the session's `fixedSource`, and a new WorkflowVersion.

use std::path::Path;
use std::time::Duration;

use little_sandbox::Sandbox;
use serde_json::{Map, Value, json};

use crate::capabilities::{Capabilities, HARNESS_ID, hash, manifest_diff};
use crate::documents::read_text;
use crate::events;
use crate::harness::filesystem::{self, check_component};
use crate::harness::replay::History;
use crate::harness::session::{
    self, SessionEnd, SessionSpec, SessionStats, ToolOutcome, Toolbox, Verdict, submission_verdict,
};
use crate::harness::tools::{run_bash, tool_error};
use crate::harness::{HarnessOptions, Observer, prompt};
use crate::register::{Validation, validate};
use crate::{Failure, Located};

pub(crate) const ROLE: &str = "fixer";

/// The part of an error file a fixer is shown: its end, where the failure is.
const ERROR_KEPT: usize = 64 * 1024;

/// What `little fix` was asked to do.
#[derive(Clone, Debug)]
pub struct FixRequest<'a> {
    pub lwir: &'a Path,
    pub step: &'a str,
    pub error: &'a Path,
    pub definition: &'a Path,
    pub run_id: &'a str,
    pub events: &'a Path,
    pub harness: HarnessOptions<'a>,
    pub lock_wait: Duration,
}

/// A repaired LWIR.
#[derive(Debug)]
pub struct FixReport {
    /// The LWIR with the step's files replaced, pretty-printed.
    pub lwir_text: String,
    /// `{ NAME: { content, sha256 } }` of the step.
    pub fixed_source: Value,
    /// The new WorkflowVersion's id and hash.
    pub version_id: String,
    pub version_hash: String,
    pub session: SessionStats,
}

/// The step to fix, read from a valid LWIR.
struct FailedStep {
    index: usize,
    entrypoint: String,
    files: Map<String, Value>,
    output_schema: Value,
    fixer_slot: String,
    fixer_system: String,
    max_attempts: u32,
}

pub fn fix(request: &FixRequest<'_>, observer: &mut dyn Observer) -> Result<FixReport, Failure> {
    let run_id = request.run_id;
    check_component("run id", run_id).map_err(Failure::Tool)?;
    let capabilities = crate::capabilities(request.definition)?;
    let lwir_text = read_text(request.lwir, "LWIR")?;
    let validation = validate(&capabilities, &request.lwir.display().to_string(), lwir_text.as_bytes());
    if validation.blocking() {
        return Err(Failure::Blocked(vec![Located::from(validation)]));
    }
    let lwir: Value = serde_json::from_str(&lwir_text)
        .map_err(|e| Failure::Tool(format!("cannot read the LWIR `{}`: {e}", request.lwir.display())))?;
    let step = failed_step(&lwir, request.step)?;
    let slot = capabilities.slots.iter().find(|s| s.id == step.fixer_slot).ok_or_else(|| {
        Failure::Tool(format!(
            "the fixer of step `{}` names the model slot `{}`, which the definition does not have (slots: {})",
            request.step,
            step.fixer_slot,
            capabilities.slots.iter().map(|s| format!("`{}`", s.id)).collect::<Vec<_>>().join(", ")
        ))
    })?;
    let (error_text, error_cut) = read_error(request.error)?;

    let manifest = json!({
        "harnessId": HARNESS_ID,
        "fixerModelSlotId": slot.id,
        "systemPromptHash": little_hashing::sha256_identity(step.fixer_system.as_bytes()),
        "workflowDefinitionHash": capabilities.definition_hash,
        "lwirHash": hash(&lwir),
        "stepId": request.step,
        "errorHash": little_hashing::sha256_identity(error_text.as_bytes()),
    });
    let manifest_hash = hash(&manifest);

    let mut log = crate::plan::open_log(request.events, run_id, request.lock_wait, observer)?;
    let history = History::of(&log.events, ROLE, 1);
    if let Some(started) = &history.started
        && started.str("manifestHash") != Some(manifest_hash.as_str())
    {
        let stored = started.payload.get("manifest").cloned().unwrap_or(Value::Null);
        let fields: Vec<String> = manifest_diff(&stored, &manifest).into_iter().map(|(f, _, _)| f).collect();
        return Err(Failure::Tool(format!(
            "run `{run_id}` was started to fix another failure ({} changed since); \
             resume it with the LWIR, step, error and definition it started with, or use a new `--run-id`",
            fields.join(", ")
        )));
    }
    let client = if history.finished() {
        None
    } else {
        Some(request.harness.client(&slot.model.provider_id).map_err(Failure::Tool)?)
    };
    let files = filesystem::prepare(
        filesystem::scratch_dir(request.events, run_id, 1),
        &request.harness,
        &capabilities.definition,
        &capabilities.definition.worker_skills,
    )
    .map_err(Failure::Tool)?;
    write_step_files(&files.scratch, &step.files).map_err(Failure::Tool)?;
    if client.is_some() {
        files.note_unenforced(observer);
    }
    if history.started.is_none() {
        log.append(
            events::SESSION_STARTED,
            json!({
                "role": ROLE,
                "cycle": 1,
                "harnessId": HARNESS_ID,
                "planner": "builtin",
                "step": request.step,
                "manifestHash": manifest_hash,
                "manifest": manifest,
                "model": { "providerId": slot.model.provider_id, "modelId": slot.model.model_id },
                "unenforcedBounds": files.unenforced_bounds(),
            }),
        )
        .map_err(Failure::Tool)?;
    }

    let mut system = String::new();
    if !step.fixer_system.is_empty() {
        system.push_str(&step.fixer_system);
        system.push_str("\n\n");
    }
    system.push_str(&format!(
        "# How this session works (workflowHarness@1.0.0, fix_step)
The `code.run` step `{step}` of the workflow `{id}` failed. The task in the first user message holds its files, its entrypoint, the error, and the schema its output must satisfy. The files are also in your scratch directory `{scratch}`.
Tools:
- `bash` runs one command in `{scratch}` (no network). Reproduce the failure, fix it, and test the fix there.
- `submit_fix` submits the repaired files of the step as `{{\"files\": {{\"NAME\": \"content\", ...}}}}`: every file of the step, the entrypoint among them. If the repaired step does not pass the workflow's checks you get the findings; at most {max} submissions may be refused.
",
        step = request.step,
        id = capabilities.definition.id,
        scratch = files.workdir.display(),
        max = step.max_attempts,
    ));
    prompt::push_shared(&mut system, &capabilities, &capabilities.definition.worker_skills, &files);
    let task = json!({
        "kind": "fix_step",
        "workflowId": capabilities.definition.id,
        "stepId": request.step,
        "entrypoint": step.entrypoint,
        "files": step.files.iter().map(|(name, file)| (name.clone(), file["content"].clone())).collect::<Map<_, _>>(),
        "error": error_text,
        "errorTruncated": error_cut,
        "outputSchema": step.output_schema,
    });
    let spec = SessionSpec {
        role: ROLE,
        cycle: 1,
        model: slot.model.model_id.clone(),
        system,
        task: serde_json::to_string_pretty(&task).expect("JSON values serialize"),
        max_turns: request.harness.max_turns,
        max_attempts: step.max_attempts,
    };
    let mut toolbox =
        FixToolbox { sandbox: files.sandbox.clone(), capabilities: &capabilities, lwir: &lwir, step_index: step.index };
    let (end, stats) = match session::run(&mut log, &spec, client.as_ref(), &mut toolbox, observer) {
        Ok(ended) => ended,
        // A divergence is recorded, so that `little events` shows why the run stopped.
        Err(failure) if failure.has_code(little_diagnostics::Code::PipelineReplayDivergence) => {
            return Err(crate::plan::run_failed(&mut log, 1, "replay_divergence", failure));
        }
        Err(failure) => return Err(failure),
    };
    match end {
        SessionEnd::Submitted { turn, call_id, arguments, attempts } => {
            let (repaired, validation) = toolbox.repaired(&arguments).map_err(|_| {
                Failure::Tool(format!("the accepted submission {call_id} of run `{run_id}` holds no files"))
            })?;
            if validation.blocking() {
                return Err(Failure::Blocked(vec![Located::from(validation)]));
            }
            let fixed_source = repaired["steps"][step.index]["with"]["files"].clone();
            let version_hash = hash(&repaired);
            if history.completed.is_none() {
                log.append(
                    events::SESSION_COMPLETED,
                    json!({
                        "role": ROLE,
                        "cycle": 1,
                        "status": "succeeded",
                        "turns": turn,
                        "attempts": attempts,
                        "callId": call_id,
                        "fixedSource": fixed_source,
                        "lwirHash": version_hash,
                    }),
                )
                .map_err(Failure::Tool)?;
            }
            Ok(FixReport {
                lwir_text: validation.text.to_string(),
                fixed_source,
                version_id: format!("wfver_{}", little_hashing::short_id(&version_hash)),
                version_hash,
                session: stats,
            })
        }
        SessionEnd::Failed { reason, last_refused } => {
            if !log
                .events
                .iter()
                .any(|e| e.kind == events::RUN_FAILED && e.str("causeCode") == Some("fixer_session_failed"))
            {
                log.append(
                    events::RUN_FAILED,
                    json!({ "causeCode": "fixer_session_failed", "message": reason, "cycle": 1 }),
                )
                .map_err(Failure::Tool)?;
            }
            let located = last_refused
                .and_then(|arguments| toolbox.repaired(&arguments).ok())
                .map(|(_, validation)| Located::from(validation))
                .into_iter()
                .collect();
            let reason = format!("the fixer session failed: {reason}{}", stats.replay_note());
            Err(Failure::Failed { reason, located })
        }
    }
}

/// The step of a valid LWIR that `little fix` repairs.
fn failed_step(lwir: &Value, id: &str) -> Result<FailedStep, Failure> {
    let steps = lwir["steps"].as_array().map(Vec::as_slice).unwrap_or_default();
    let Some(index) = steps.iter().position(|s| s["id"] == id) else {
        let ids: Vec<&str> = steps.iter().filter_map(|s| s["id"].as_str()).collect();
        let help = little_diagnostics::suggest::did_you_mean(id, ids.iter().copied())
            .map(|help| format!(" ({help})"))
            .unwrap_or_default();
        return Err(Failure::Tool(format!("the LWIR has no step `{id}`{help}")));
    };
    let step = &steps[index];
    if step["uses"] != "code.run" {
        return Err(Failure::Tool(format!(
            "step `{id}` uses `{}`: only `code.run` steps have a fixer",
            step["uses"].as_str().unwrap_or("?")
        )));
    }
    let fixer = &step["onFailure"]["fixer"];
    if !fixer.is_object() {
        return Err(Failure::Tool(format!("step `{id}` declares no `onFailure.fixer`: it cannot be fixed")));
    }
    Ok(FailedStep {
        index,
        entrypoint: step["with"]["entrypoint"].as_str().unwrap_or_default().to_string(),
        files: step["with"]["files"].as_object().cloned().unwrap_or_default(),
        output_schema: step["output"]["schema"].clone(),
        fixer_slot: fixer["model"].as_str().unwrap_or_default().to_string(),
        fixer_system: fixer["system"].as_str().unwrap_or_default().to_string(),
        max_attempts: fixer["maxAttempts"].as_u64().map_or(3, |n| n.clamp(1, 10) as u32),
    })
}

/// The error file, cut to its last 64 KiB (at a character boundary) when longer.
fn read_error(path: &Path) -> Result<(String, bool), Failure> {
    let text = read_text(path, "error file")?;
    if text.len() <= ERROR_KEPT {
        return Ok((text.to_string(), false));
    }
    let mut start = text.len() - ERROR_KEPT;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    Ok((text[start..].to_string(), true))
}

/// The step's files in the scratch, for the fixer to run; names that would leave the
/// scratch are refused.
fn write_step_files(scratch: &Path, files: &Map<String, Value>) -> Result<(), String> {
    for (name, file) in files {
        let relative = Path::new(name);
        let safe = relative.components().all(|c| matches!(c, std::path::Component::Normal(_)));
        if !safe {
            return Err(format!("the step's file name `{name}` would leave the scratch directory"));
        }
        let path = scratch.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("cannot create `{}`: {e}", parent.display()))?;
        }
        let content = file["content"].as_str().unwrap_or_default();
        std::fs::write(&path, content).map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
    }
    Ok(())
}

/// The tools of a fix session.
struct FixToolbox<'a> {
    sandbox: Sandbox,
    capabilities: &'a Capabilities,
    lwir: &'a Value,
    step_index: usize,
}

impl FixToolbox<'_> {
    /// The LWIR with the step's files replaced by a `submit_fix` call's, and its validation.
    fn repaired(&self, arguments: &Value) -> Result<(Value, Validation), ToolOutcome> {
        let Some(Value::Object(files)) = arguments.get("files") else {
            return Err(tool_error("`submit_fix` takes `{\"files\": {\"NAME\": \"content\", …}}`: `files` is missing"));
        };
        let mut replaced = Map::new();
        for (name, content) in files {
            // A file given as `{ content }` (the LWIR's own shape) is read too.
            let content = content.get("content").unwrap_or(content);
            let entry = match content {
                Value::String(text) => {
                    json!({ "content": text, "sha256": little_hashing::sha256_identity(text.as_bytes()) })
                }
                // Not text: kept as given, so that the LWIR checks name it.
                other => json!({ "content": other }),
            };
            replaced.insert(name.clone(), entry);
        }
        let mut lwir = self.lwir.clone();
        lwir["steps"][self.step_index]["with"]["files"] = Value::Object(replaced);
        let text = serde_json::to_string_pretty(&lwir).expect("JSON values serialize");
        let validation = validate(self.capabilities, "repaired LWIR", text.as_bytes());
        Ok((lwir, validation))
    }
}

impl Toolbox for FixToolbox<'_> {
    fn descriptors(&self) -> Vec<Value> {
        vec![
            prompt::bash_tool(),
            prompt::function(
                "submit_fix",
                "Submit the repaired files of the step. Accepted: the session ends. Refused: returns {valid: false, findings}.",
                json!({
                    "type": "object",
                    "properties": { "files": {
                        "type": "object",
                        "description": "Every file of the step, name to content.",
                        "additionalProperties": { "type": "string" },
                    } },
                    "required": ["files"],
                }),
            ),
        ]
    }

    fn run(&mut self, tool: &str, arguments: &Value, _observer: &mut dyn Observer) -> ToolOutcome {
        match tool {
            "bash" => run_bash(&self.sandbox, arguments),
            "submit_fix" => match self.repaired(arguments) {
                Ok((_, validation)) => ToolOutcome::Succeeded(json!({
                    "valid": !validation.blocking(),
                    "findings": validation.findings_json(),
                })),
                Err(error) => error,
            },
            other => tool_error(format!("there is no tool `{other}`: the tools are `bash` and `submit_fix`")),
        }
    }

    fn verdict(&self, tool: &str, result: &Value) -> Verdict {
        submission_verdict("submit_fix", tool, result)
    }

    fn nudge(&self) -> String {
        "Use the tools: reproduce and fix the failure with `bash`, then call `submit_fix` with every file of the step."
            .to_string()
    }
}
