//! The tools of a session (docs/reference/harness.md#the-built-in-harness-workflowharness100): `bash` in the sandbox, and the plan session's
//! `validate_lwir` and `submit_lwir`, which run `little check --snapshot`'s own checks.
//! A wrong call (an unknown tool, arguments of the wrong shape) is an error the model
//! sees, never a failure of the run.

use little_sandbox::Sandbox;
use serde_json::{Value, json};

use super::observer::Observer;
use super::prompt;
use super::session::{ToolOutcome, Toolbox, Verdict, submission_verdict};
use crate::capabilities::Capabilities;
use crate::register::{Validation, validate};

/// An error result as the model sees it.
pub fn tool_error(message: impl Into<String>) -> ToolOutcome {
    ToolOutcome::Failed(json!({ "message": message.into() }))
}

/// Runs `bash` with `{ command }`: `{ exitCode, stdout, stderr, truncated }`, and `limit`
/// naming the bound the call hit when it hit one (`memory`, `processes`, `cpu`,
/// `file_size`, `scratch`, `memory_store`). When the scratch or a store held more than its
/// bound after the call, the call's newest writes were rolled back, and stderr ends with a
/// line that says so.
pub fn run_bash(sandbox: &Sandbox, arguments: &Value) -> ToolOutcome {
    let Some(command) = arguments.get("command").and_then(Value::as_str) else {
        return tool_error("`bash` takes `{\"command\": \"…\"}`: a string `command` is missing");
    };
    match sandbox.run(command) {
        Ok(output) => {
            let mut stderr = output.stderr;
            if let (Some(limit), Some(rollback)) = (output.limit, output.rollback) {
                if !stderr.is_empty() && !stderr.ends_with('\n') {
                    stderr.push('\n');
                }
                stderr.push_str(&rollback_note(limit, &rollback));
            }
            let mut result = json!({
                "exitCode": output.exit_code,
                "stdout": output.stdout,
                "stderr": stderr,
                "truncated": output.truncated,
            });
            if let Some(limit) = output.limit {
                result["limit"] = json!(limit.as_str());
            }
            ToolOutcome::Succeeded(result)
        }
        Err(message) => tool_error(format!("bash could not start: {message}")),
    }
}

/// What the model reads of a rollback.
fn rollback_note(limit: little_sandbox::Limit, rollback: &little_sandbox::Rollback) -> String {
    let what = match limit {
        little_sandbox::Limit::MemoryStore => "a memory store",
        _ => "the scratch",
    };
    let mib = |bytes: u64| bytes.div_ceil(1 << 20);
    format!(
        "little: {what} held {} MiB after this command, over its bound of {} MiB: the command's newest writes were \
         cut or removed, and it holds {} MiB now\n",
        mib(rollback.found),
        mib(rollback.limit),
        mib(rollback.kept)
    )
}

/// The tools of a plan session.
pub struct PlanToolbox<'a> {
    pub sandbox: Sandbox,
    pub capabilities: &'a Capabilities,
}

/// The LWIR of a `validate_lwir` / `submit_lwir` call, as text to validate. A model may
/// pass the document as a string holding its JSON; that is read too.
pub fn lwir_argument(tool: &str, arguments: &Value) -> Result<String, ToolOutcome> {
    match arguments.get("lwir") {
        Some(lwir @ Value::Object(_)) => Ok(serde_json::to_string_pretty(lwir).expect("JSON values serialize")),
        Some(Value::String(text)) if text.trim_start().starts_with('{') => Ok(text.clone()),
        Some(_) => Err(tool_error(format!("`{tool}`: `lwir` must be the LWIR document as a JSON object"))),
        None => Err(tool_error(format!("`{tool}` takes `{{\"lwir\": {{…}}}}`: `lwir` is missing"))),
    }
}

/// The LWIR of an accepted `submit_lwir` call, validated again (as the registration needs
/// it), under the name diagnostics show for it.
pub fn validate_submission(capabilities: &Capabilities, call_id: &str, arguments: &Value) -> Option<Validation> {
    let text = lwir_argument("submit_lwir", arguments).ok()?;
    Some(validate(capabilities, &submission_path(call_id), text.as_bytes()))
}

/// The name under which a submitted LWIR is shown in diagnostics.
pub fn submission_path(call_id: &str) -> String {
    format!("submitted LWIR (call {call_id})")
}

impl Toolbox for PlanToolbox<'_> {
    fn descriptors(&self) -> Vec<Value> {
        prompt::plan_tools()
    }

    fn run(&mut self, tool: &str, arguments: &Value, _observer: &mut dyn Observer) -> ToolOutcome {
        match tool {
            "bash" => run_bash(&self.sandbox, arguments),
            "validate_lwir" | "submit_lwir" => {
                let text = match lwir_argument(tool, arguments) {
                    Ok(text) => text,
                    Err(error) => return error,
                };
                let validation = validate(self.capabilities, tool, text.as_bytes());
                ToolOutcome::Succeeded(json!({
                    "valid": !validation.blocking(),
                    "findings": validation.findings_json(),
                }))
            }
            other => tool_error(format!(
                "there is no tool `{other}`: the tools are `bash`, `validate_lwir` and `submit_lwir`"
            )),
        }
    }

    fn verdict(&self, tool: &str, result: &Value) -> Verdict {
        submission_verdict("submit_lwir", tool, result)
    }

    fn nudge(&self) -> String {
        "Use the tools: test in `bash`, check with `validate_lwir`, and call `submit_lwir` with the LWIR document when it is ready.".to_string()
    }
}
