//! How `little events` shows a log to a person: a line per event with its gist (turns,
//! tool calls with their command, exit code and duration, tokens, resumes, why a run
//! failed), and a closing tally per run. It reads events one at a time, as the log is
//! streamed, keeping only what later lines of the same run refer back to.

use std::collections::HashMap;

use serde_json::Value;

use crate::events::{Event, Kind, SessionOf};

/// Per-run state while describing a log: tool calls' commands, token counts.
#[derive(Default)]
pub struct Describer {
    /// The shown command (or tool) of each started tool call, by run and call id.
    calls: HashMap<(String, String), String>,
    tallies: HashMap<String, Tally>,
}

/// What a run's model calls and tools added up to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub model_calls: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub tool_calls: u64,
}

impl Describer {
    /// One line for an event: its type, then its gist.
    pub fn describe(&mut self, event: &Event) -> String {
        let p = &event.payload;
        let text = |key: &str| p.get(key).and_then(Value::as_str).unwrap_or("?");
        let number = |key: &str| p.get(key).and_then(Value::as_u64);
        // Later cycles are named on every event; cycle 1 only where its session starts.
        let cycle = if event.cycle() > 1 { format!("cycle {} ", event.cycle()) } else { String::new() };
        let role = if event.role() == "planner" { String::new() } else { format!("{} ", event.role()) };
        let turn = number("turn").map(|t| format!("{cycle}{role}turn {t}")).unwrap_or_default();
        let attempt = event.attempt().map(|a| format!("{cycle}attempt {a}")).unwrap_or_default();
        let key = |event: &Event| (event.run_id.clone(), text("callId").to_string());
        let detail = match event.known() {
            Some(Kind::SessionStarted) => {
                let model = p
                    .get("model")
                    .and_then(|m| m.get("modelId"))
                    .and_then(Value::as_str)
                    .map(|m| format!(" on {m}"))
                    .unwrap_or_default();
                let planner = match p.get("planner").and_then(Value::as_str) {
                    Some("builtin") => format!("built-in harness{model}"),
                    Some(other) => other.to_string(),
                    None if event.role() == "fixer" => format!("built-in harness{model}, step {}", text("step")),
                    None => "external".to_string(),
                };
                let unenforced: Vec<&str> = p
                    .get("unenforcedBounds")
                    .and_then(Value::as_array)
                    .map(|bounds| bounds.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let unenforced = if unenforced.is_empty() {
                    String::new()
                } else {
                    format!(", bounds not held here: {}", unenforced.join(", "))
                };
                format!(
                    "{} ({planner}), cycle {}, manifest {}{unenforced}",
                    event.role(),
                    event.cycle(),
                    short(text("manifestHash"))
                )
            }
            Some(Kind::SessionResumed) => {
                format!("{cycle}{role}resumed after event {}", number("afterSeq").unwrap_or(0))
            }
            Some(Kind::ModelCalled) if p.get("turn").is_some() => turn,
            Some(Kind::ModelCalled) => attempt,
            Some(Kind::ModelResponded) if p.get("turn").is_some() => {
                let tally = self.tallies.entry(event.run_id.clone()).or_default();
                tally.model_calls += 1;
                let usage = p.get("usage").unwrap_or(&Value::Null);
                let tokens = |key: &str| usage.get(key).and_then(Value::as_u64);
                let mut parts = Vec::new();
                let calls = p["message"].get("tool_calls").and_then(Value::as_array).map_or(0, Vec::len);
                parts.push(match calls {
                    0 => "text only".to_string(),
                    1 => "1 tool call".to_string(),
                    n => format!("{n} tool calls"),
                });
                if let (Some(input), Some(output)) = (tokens("prompt_tokens"), tokens("completion_tokens")) {
                    tally.prompt_tokens += input;
                    tally.completion_tokens += output;
                    parts.push(format!("{input} + {output} tokens"));
                }
                if let Some(ms) = number("durationMs") {
                    parts.push(format!("{ms} ms"));
                }
                if let Some(tries) = number("tries").filter(|t| *t > 1) {
                    parts.push(format!("{tries} tries"));
                }
                format!("{turn}: {}", parts.join(", "))
            }
            Some(Kind::ModelResponded) => {
                let findings = p.get("findings").and_then(Value::as_array).map_or(0, Vec::len);
                let verdict = if p.get("valid").and_then(Value::as_bool) == Some(true) {
                    "valid LWIR".to_string()
                } else {
                    format!("{findings} finding{}, repair requested", if findings == 1 { "" } else { "s" })
                };
                format!("{attempt}: {verdict}")
            }
            Some(Kind::ModelFailed) if p.get("turn").is_some() => format!("{turn}: {}", text("reason")),
            Some(Kind::ModelFailed) => format!("{attempt}: {}", text("reason")),
            // An external planner's reported calls: by attempt.
            Some(Kind::ToolStarted | Kind::ToolSucceeded | Kind::ToolFailed) if event.attempt().is_some() => {
                format!(
                    "{attempt}: {} {} (caller: {})",
                    p.get("tool").and_then(Value::as_str).unwrap_or(""),
                    p.get("callId").and_then(Value::as_str).unwrap_or(""),
                    p.get("caller").and_then(Value::as_str).unwrap_or("model"),
                )
            }
            Some(Kind::ToolStarted) => {
                self.tallies.entry(event.run_id.clone()).or_default().tool_calls += 1;
                let tool = text("tool");
                let shown = match p["arguments"].get("command").and_then(Value::as_str) {
                    Some(command) if tool == "bash" => format!("bash $ {}", first_line(command, 100)),
                    _ => tool.to_string(),
                };
                self.calls.insert(key(event), shown.clone());
                format!("{} {shown}", text("callId"))
            }
            Some(Kind::ToolSucceeded | Kind::ToolFailed) => {
                let shown = self.calls.remove(&key(event)).unwrap_or_else(|| text("tool").to_string());
                let outcome = match event.known() {
                    Some(Kind::ToolFailed) => Err(p.get("error").unwrap_or(&Value::Null)),
                    _ => Ok(p.get("result").unwrap_or(&Value::Null)),
                };
                let outcome = tool_outcome(outcome, 100);
                let duration = number("durationMs").map(|ms| format!(", {ms} ms")).unwrap_or_default();
                format!("{} {shown}: {outcome}{duration}", text("callId"))
            }
            Some(Kind::SessionCompleted) => {
                let mut parts = vec![text("status").to_string()];
                if let Some(turns) = number("turns") {
                    parts.push(format!("{turns} turn{}", if turns == 1 { "" } else { "s" }));
                }
                if let Some(attempts) = number("attempts") {
                    parts.push(format!("{attempts} attempt(s)"));
                }
                format!("{cycle}{role}{}", parts.join(", "))
            }
            Some(Kind::SessionFailed) => format!("{cycle}{role}{}", text("reason")),
            Some(Kind::VersionRegistered) => {
                format!("{cycle}{} ({})", text("lwirVersionId"), short(text("workflowVersionHash")))
            }
            Some(Kind::RunFailed) => {
                format!("{cycle}cause: {}: {}", text("causeCode"), first_line(text("message"), 100))
            }
            _ => String::new(),
        };
        if detail.is_empty() { event.kind.clone() } else { format!("{:<28} {detail}", event.kind) }
    }

    /// What the run's built-in sessions added up to, when it has model calls.
    pub fn tally(&self, run_id: &str) -> Option<Tally> {
        self.tallies.get(run_id).copied().filter(|t| t.model_calls > 0 || t.tool_calls > 0)
    }
}

/// `sha256:` and the first 12 hex digits, for people.
fn short(hash: &str) -> &str {
    let end = hash.find(':').map_or(0, |i| i + 1) + 12;
    hash.get(..end).unwrap_or(hash)
}

/// How a tool call ended, in a few words: `exit 0` (with `, limit BOUND` when a bash call
/// hit a bound), `valid`, `refused: CODES`, `done`, or `error: MESSAGE` (its first line, at
/// most `width` characters).
pub fn tool_outcome(outcome: Result<&Value, &Value>, width: usize) -> String {
    match outcome {
        Err(error) => {
            format!("error: {}", first_line(error.get("message").and_then(Value::as_str).unwrap_or("?"), width))
        }
        Ok(result) => {
            match (result.get("exitCode").and_then(Value::as_i64), result.get("valid").and_then(Value::as_bool)) {
                (Some(code), _) => match result.get("limit").and_then(Value::as_str) {
                    Some(limit) => format!("exit {code}, limit {limit}"),
                    None => format!("exit {code}"),
                },
                (None, Some(true)) => "valid".to_string(),
                (None, Some(false)) => format!("refused: {}", finding_codes(result).join(", ")),
                (None, None) => "done".to_string(),
            }
        }
    }
}

/// The finding codes of a submission's result, in order.
pub fn finding_codes(result: &Value) -> Vec<&str> {
    result
        .get("findings")
        .and_then(Value::as_array)
        .map(|findings| findings.iter().filter_map(|f| f.get("code").and_then(Value::as_str)).collect())
        .unwrap_or_default()
}

/// The first line of a text, at most `width` characters, marked when cut.
pub fn first_line(text: &str, width: usize) -> String {
    let first = text.lines().next().unwrap_or_default();
    let cut: String = first.chars().take(width).collect();
    if cut.len() < text.trim_end().len() { format!("{cut}…") } else { cut }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events;
    use serde_json::json;

    fn event(seq: u64, kind: &str, payload: Value) -> Event {
        Event { run_id: "r".into(), seq, kind: kind.into(), payload }
    }

    #[test]
    fn a_built_in_session_reads_as_turns_tool_calls_and_tokens() {
        let mut d = Describer::default();
        let lines: Vec<String> = [
            event(1, events::SESSION_STARTED, json!({"role": "planner", "cycle": 1, "planner": "builtin", "model": {"modelId": "gpt-5"}, "manifestHash": "sha256:0123456789abcdef"})),
            event(2, events::MODEL_CALLED, json!({"role": "planner", "turn": 1})),
            event(3, events::MODEL_RESPONDED, json!({"turn": 1, "message": {"tool_calls": [{}]}, "usage": {"prompt_tokens": 900, "completion_tokens": 40}, "durationMs": 640})),
            event(4, events::TOOL_STARTED, json!({"turn": 1, "callId": "1.1", "tool": "bash", "arguments": {"command": "ls -la\nmore"}})),
            event(5, events::TOOL_SUCCEEDED, json!({"callId": "1.1", "tool": "bash", "result": {"exitCode": 0}, "durationMs": 12})),
            event(6, events::SESSION_RESUMED, json!({"afterSeq": 5})),
            event(7, events::TOOL_STARTED, json!({"turn": 2, "callId": "2.1", "tool": "submit_lwir", "arguments": {"lwir": {}}})),
            event(8, events::TOOL_SUCCEEDED, json!({"callId": "2.1", "tool": "submit_lwir", "result": {"valid": false, "findings": [{"code": "binding.name_mismatch"}]}, "durationMs": 3})),
            event(9, events::RUN_FAILED, json!({"causeCode": "replay_divergence", "message": "the model request of turn 3 differs"})),
        ]
        .iter()
        .map(|e| d.describe(e))
        .collect();
        assert_eq!(
            lines,
            [
                "harness.session.started      planner (built-in harness on gpt-5), cycle 1, manifest sha256:0123456789ab",
                "harness.model.called         turn 1",
                "harness.model.responded      turn 1: 1 tool call, 900 + 40 tokens, 640 ms",
                "harness.tool_call.started    1.1 bash $ ls -la…",
                "harness.tool_call.succeeded  1.1 bash $ ls -la…: exit 0, 12 ms",
                "harness.session.resumed      resumed after event 5",
                "harness.tool_call.started    2.1 submit_lwir",
                "harness.tool_call.succeeded  2.1 submit_lwir: refused: binding.name_mismatch, 3 ms",
                "RunFailed                    cause: replay_divergence: the model request of turn 3 differs",
            ]
        );
        assert_eq!(
            d.tally("r"),
            Some(Tally { model_calls: 1, prompt_tokens: 900, completion_tokens: 40, tool_calls: 2 })
        );
    }

    #[test]
    fn a_bound_hit_and_bounds_not_held_are_shown() {
        let mut d = Describer::default();
        let started = event(
            1,
            events::SESSION_STARTED,
            json!({"role": "planner", "planner": "builtin", "manifestHash": "sha256:0123456789abcdef", "unenforcedBounds": ["memory", "processes"]}),
        );
        assert_eq!(
            d.describe(&started),
            "harness.session.started      planner (built-in harness), cycle 1, manifest sha256:0123456789ab, bounds not held here: memory, processes"
        );
        d.describe(&event(2, events::TOOL_STARTED, json!({"turn": 1, "callId": "1.1", "tool": "bash", "arguments": {"command": "head -c 4G /dev/zero | tail"}})));
        let ended = event(
            3,
            events::TOOL_SUCCEEDED,
            json!({"callId": "1.1", "tool": "bash", "result": {"exitCode": 137, "limit": "memory"}, "durationMs": 900}),
        );
        assert_eq!(
            d.describe(&ended),
            "harness.tool_call.succeeded  1.1 bash $ head -c 4G /dev/zero | tail: exit 137, limit memory, 900 ms"
        );
    }

    #[test]
    fn an_external_planner_reads_as_attempts() {
        let mut d = Describer::default();
        let e = event(1, events::MODEL_RESPONDED, json!({"attempt": 2, "valid": false, "findings": [{}]}));
        assert_eq!(d.describe(&e), "harness.model.responded      attempt 2: 1 finding, repair requested");
        let called = event(2, events::MODEL_CALLED, json!({"cycle": 3, "attempt": 1}));
        assert_eq!(d.describe(&called), "harness.model.called         cycle 3 attempt 1");
        let legacy =
            event(1, events::SESSION_STARTED, json!({"role": "planner", "manifestHash": "sha256:0123456789abcdef"}));
        assert_eq!(
            d.describe(&legacy),
            "harness.session.started      planner (external), cycle 1, manifest sha256:0123456789ab"
        );
        assert_eq!(d.tally("r"), None);
    }
}
