//! `little fix` (docs/reference/harness.md#the-fixer-session-little-fix): a fixer session (`kind: "fix_step"`) for a failed `code.run`
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
use crate::events::{self, Record, Session};
use crate::harness::filesystem::{SessionFiles, check_component};
use crate::harness::replay::History;
use crate::harness::session::{SessionSpec, SessionStats, ToolOutcome, Toolbox, Verdict, submission_verdict};
use crate::harness::tools::{run_bash, tool_error};
use crate::harness::{HarnessOptions, Observer, prompt, runner};
use crate::register::{Validation, validate};
use crate::{Failure, Located};

pub(crate) const ROLE: &str = "fixer";

/// A fix run has one session, the fixer's, in cycle 1.
const SESSION: Session = Session { role: ROLE, cycle: 1 };

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
    pub events: &'a crate::Store,
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
    let history = History::of(log.events(), ROLE, SESSION.cycle);
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
    let mut details = Map::new();
    details.insert("step".into(), json!(request.step));
    details.insert("model".into(), json!({ "providerId": slot.model.provider_id, "modelId": slot.model.model_id }));
    let setup = runner::Setup {
        session: SESSION,
        options: &request.harness,
        definition: &capabilities.definition,
        skills: &capabilities.definition.worker_skills,
        provider_id: &slot.model.provider_id,
        started: Record::SessionStarted { planner: "builtin", manifest_hash, manifest, details },
        failed_cause: "fixer_session_failed",
        name: "the fixer session",
    };
    let (capabilities, lwir) = (&capabilities, &lwir);
    let model_id = slot.model.model_id.clone();
    let max_turns = request.harness.max_turns;
    let max_tokens = request.harness.max_tokens;
    let build = Box::new(|files: &SessionFiles| {
        write_step_files(&files.scratch, &step.files).map_err(Failure::Tool)?;
        let spec = SessionSpec {
            role: ROLE,
            cycle: SESSION.cycle,
            model: model_id,
            system: fix_system(request.step, &step, capabilities, files),
            task: fix_task(request.step, &step, capabilities, &error_text, error_cut),
            max_turns,
            max_tokens,
            max_attempts: step.max_attempts,
        };
        let toolbox: Box<dyn Toolbox> =
            Box::new(FixToolbox { sandbox: files.sandbox.clone(), capabilities, lwir, step_index: step.index });
        Ok((spec, toolbox))
    });
    let refused =
        |arguments: &Value| repaired(capabilities, lwir, step.index, arguments).ok().map(|(_, v)| Located::from(v));
    let submitted = runner::run(&mut *log, setup, observer, build, &refused)?;
    let runner::Submitted { turn, call_id, arguments, attempts, stats } = submitted;
    let (repaired, validation) = repaired(capabilities, lwir, step.index, &arguments)
        .map_err(|_| Failure::Tool(format!("the accepted submission {call_id} of run `{run_id}` holds no files")))?;
    if validation.blocking() {
        return Err(Failure::Blocked(vec![Located::from(validation)]));
    }
    let fixed_source = repaired["steps"][step.index]["with"]["files"].clone();
    let version_hash = hash(&repaired);
    if History::of(log.events(), ROLE, SESSION.cycle).completed.is_none() {
        let mut details = Map::new();
        details.insert("turns".into(), json!(turn));
        details.insert("attempts".into(), json!(attempts));
        details.insert("callId".into(), json!(call_id));
        details.insert("fixedSource".into(), fixed_source.clone());
        details.insert("lwirHash".into(), json!(version_hash));
        events::write(&mut *log, SESSION, Record::SessionCompleted { details })?;
    }
    Ok(FixReport {
        lwir_text: validation.text.to_string(),
        fixed_source,
        version_id: format!("wfver_{}", little_hashing::short_id(&version_hash)),
        version_hash,
        session: stats,
    })
}

/// The fixer's system prompt: the step's own `system`, then how the session works.
fn fix_system(step_id: &str, step: &FailedStep, capabilities: &Capabilities, files: &SessionFiles) -> String {
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
        step = step_id,
        id = capabilities.definition.id,
        scratch = files.workdir.display(),
        max = step.max_attempts,
    ));
    prompt::push_shared(&mut system, capabilities, &capabilities.definition.worker_skills, files);
    system
}

/// The fixer's task: the step's files, its entrypoint, the error and the output schema.
fn fix_task(step_id: &str, step: &FailedStep, capabilities: &Capabilities, error: &str, error_cut: bool) -> String {
    let task = json!({
        "kind": "fix_step",
        "workflowId": capabilities.definition.id,
        "stepId": step_id,
        "entrypoint": step.entrypoint,
        "files": step.files.iter().map(|(name, file)| (name.clone(), file["content"].clone())).collect::<Map<_, _>>(),
        "error": error,
        "errorTruncated": error_cut,
        "outputSchema": step.output_schema,
    });
    serde_json::to_string_pretty(&task).expect("JSON values serialize")
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

/// The LWIR with the step's files replaced by a `submit_fix` call's, and its validation.
fn repaired(
    capabilities: &Capabilities,
    lwir: &Value,
    step_index: usize,
    arguments: &Value,
) -> Result<(Value, Validation), ToolOutcome> {
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
    let mut lwir = lwir.clone();
    lwir["steps"][step_index]["with"]["files"] = Value::Object(replaced);
    let text = serde_json::to_string_pretty(&lwir).expect("JSON values serialize");
    let validation = validate(capabilities, "repaired LWIR", text.as_bytes());
    Ok((lwir, validation))
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
            "submit_fix" => match repaired(self.capabilities, self.lwir, self.step_index, arguments) {
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
