//! The agent loop of one session: a model call per turn, then the tool calls of its
//! answer one at a time in order, each result sent back as a `tool` message, until the
//! toolbox accepts a submission or a bound is hit. Each call is answered from the
//! recorded history when it holds the call's end, and logged around the real call when
//! it does not.

use std::time::{Duration, Instant};

use little_provider::Progress;
use serde_json::{Value, json};

use super::filesystem::SessionFiles;
use super::observer::Observer;
use super::replay::{History, ModelEnd, divergence, fingerprint, first_difference};
use super::tracked::Tracked;
use crate::Failure;
use crate::capabilities::{canonical_text, hash};
use crate::events::{self, EventLog, Record, ToolEnd};
use crate::host::{CallFailed, Caller, Cancel};

/// Deepest tool arguments a session reads; an LWIR is far shallower, and the event that
/// records them must stay within the log's bound.
const MAX_ARGUMENT_DEPTH: usize = 64;

/// What a session is asked to do.
#[derive(Clone, Debug)]
pub struct SessionSpec {
    /// `planner` or `fixer`: written on every event, so that sessions of several roles can
    /// share a run's log.
    pub role: &'static str,
    pub cycle: u64,
    /// The provider's model id.
    pub model: String,
    pub system: String,
    /// The first user message (the task).
    pub task: String,
    pub max_turns: u32,
    /// Tokens (prompt plus completion, as the provider reports usage) the session may use
    /// (`--max-tokens`); past it the session fails.
    pub max_tokens: Option<u64>,
    /// Refused submissions before the session fails.
    pub max_attempts: u32,
}

/// A tool's answer as the model sees it.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolOutcome {
    Succeeded(Value),
    /// An error the model sees (unknown tool, bad arguments); the run goes on.
    Failed(Value),
}

impl ToolOutcome {
    /// The result, or the error.
    pub fn as_result(&self) -> Result<&Value, &Value> {
        match self {
            ToolOutcome::Succeeded(result) => Ok(result),
            ToolOutcome::Failed(error) => Err(error),
        }
    }
}

/// What a submission's result says, for a toolbox whose tool `submit` submits: `{ valid }`.
pub fn submission_verdict(submit: &str, tool: &str, result: &Value) -> Verdict {
    match result.get("valid").and_then(Value::as_bool) {
        Some(true) if tool == submit => Verdict::Accepted,
        Some(false) if tool == submit => Verdict::Refused,
        _ => Verdict::Other,
    }
}

/// What a successful tool result means to the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// A submission was accepted: the session ends.
    Accepted,
    /// A submission was refused with findings: one attempt used.
    Refused,
    Other,
}

/// The tools a session offers.
pub trait Toolbox {
    /// The function tools, as the request's `tools`.
    fn descriptors(&self) -> Vec<Value>;
    /// Runs one call; `arguments` is a JSON object.
    fn run(&mut self, tool: &str, arguments: &Value, observer: &mut dyn Observer) -> ToolOutcome;
    /// What a successful result of `tool` means (read again from recorded results on replay).
    fn verdict(&self, tool: &str, result: &Value) -> Verdict;
    /// The user message sent when the model answers without calling a tool.
    fn nudge(&self) -> String;
}

/// How a session ended.
#[derive(Clone, Debug)]
pub enum SessionEnd {
    /// A submission was accepted: its call and arguments.
    Submitted { turn: u64, call_id: String, arguments: Value, attempts: u32 },
    /// A bound was hit; `last_refused` holds the arguments of the last refused submission.
    Failed { reason: String, last_refused: Option<Value> },
}

/// Counts of one invocation: what was made for real and what the log answered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SessionStats {
    pub model_calls: u32,
    pub model_replayed: u32,
    pub tool_runs: u32,
    pub tool_replayed: u32,
    pub turns: u64,
    /// Tokens of the session's model calls, replayed ones included (what `--max-tokens` bounds).
    pub tokens: u64,
}

impl SessionStats {
    /// What a failure's message adds when the failure was replayed.
    pub fn replay_note(&self) -> &'static str {
        if self.called_nothing() { " (replayed from the event log; nothing called)" } else { "" }
    }

    /// Whether this invocation answered everything from the log.
    pub fn called_nothing(&self) -> bool {
        self.model_calls == 0 && self.tool_runs == 0
    }
}

/// Runs (or resumes, or replays) a session whose `harness.session.started` is already in
/// the log. `client` may be `None` only when the history holds the whole session. Once
/// `cancel` fires, no call starts and the call in flight is not recorded as ended: the
/// session stops with [`Failure::Cancelled`], its log resumable.
pub fn run(
    log: &mut EventLog,
    spec: &SessionSpec,
    files: &SessionFiles,
    client: Option<&Caller<'_>>,
    cancel: Option<&Cancel>,
    toolbox: &mut dyn Toolbox,
    observer: &mut dyn Observer,
) -> Result<(SessionEnd, SessionStats), Failure> {
    let history = History::of(log.events(), spec.role, spec.cycle);
    let tracked = Tracked::new(files, &history.files).map_err(Failure::Tool)?;
    let mut session = Session { log, spec, history, tracked, client, cancel, observer, stats: SessionStats::default() };
    let end = session.run(toolbox)?;
    Ok((end, session.stats))
}

pub struct Session<'a> {
    log: &'a mut EventLog,
    spec: &'a SessionSpec,
    history: History,
    tracked: Tracked,
    client: Option<&'a Caller<'a>>,
    cancel: Option<&'a Cancel>,
    observer: &'a mut dyn Observer,
    stats: SessionStats,
}

impl Session<'_> {
    /// Stops the session when it was cancelled: nothing more is written.
    fn stop_if_cancelled(&self) -> Result<(), Failure> {
        match self.cancel {
            Some(cancel) if cancel.is_cancelled() => Err(Failure::Cancelled),
            _ => Ok(()),
        }
    }

    fn run(&mut self, toolbox: &mut dyn Toolbox) -> Result<SessionEnd, Failure> {
        if self.history.has_calls() && !self.history.finished() {
            let after = self.history.last_seq;
            self.write(Record::SessionResumed { after_seq: after })?;
        }
        // A finished session replays to its recorded end whatever the bounds are now: a
        // completed one to its accepted submission, a failed one under the bounds it failed by.
        let (max_turns, max_attempts) = match (&self.history.completed, &self.history.failed) {
            (Some(_), _) => (u32::MAX, u32::MAX),
            (None, Some(failed)) => {
                let bound = |key, now| failed.u64(key).and_then(|n| u32::try_from(n).ok()).unwrap_or(now);
                (bound("maxTurns", self.spec.max_turns), bound("maxAttempts", self.spec.max_attempts))
            }
            (None, None) => (self.spec.max_turns, self.spec.max_attempts),
        };
        let max_tokens = match (&self.history.completed, &self.history.failed) {
            (Some(_), _) => None,
            (None, Some(failed)) => failed.u64("maxTokens"),
            (None, None) => self.spec.max_tokens,
        };
        let tools = toolbox.descriptors();
        let mut messages = vec![
            json!({ "role": "system", "content": self.spec.system }),
            json!({ "role": "user", "content": self.spec.task }),
        ];
        let mut attempts = 0u32;
        let mut last_refused = None;
        for turn in 1..=u64::from(max_turns) {
            self.stats.turns = turn;
            let body = json!({
                "model": self.spec.model,
                "messages": messages,
                "tools": tools,
                "tool_choice": "auto",
                "temperature": 0,
            });
            let message = self.model_call(turn, &body)?;
            if let Some(max_tokens) = max_tokens
                && self.stats.tokens > max_tokens
            {
                let reason = format!(
                    "the session used {} tokens (prompt plus completion, as the provider reported them), \
                     more than `--max-tokens` {max_tokens}",
                    self.stats.tokens
                );
                return self.fail(reason, (turn, max_turns, max_attempts), attempts, last_refused);
            }
            let calls = message.get("tool_calls").and_then(Value::as_array).cloned().unwrap_or_default();
            messages.push(message);
            if calls.is_empty() {
                messages.push(json!({ "role": "user", "content": toolbox.nudge() }));
                continue;
            }
            for (i, call) in calls.iter().enumerate() {
                let call_id = format!("{turn}.{}", i + 1);
                let tool = call["function"]["name"].as_str().unwrap_or_default();
                let raw = match &call["function"]["arguments"] {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                };
                let (arguments, end) = self.tool_call(turn, &call_id, tool, &raw, toolbox)?;
                let content = match end.as_result() {
                    Ok(result) => canonical_text(result),
                    Err(error) => canonical_text(&json!({ "error": error })),
                };
                messages.push(json!({ "role": "tool", "tool_call_id": call["id"], "content": content }));
                let ToolOutcome::Succeeded(result) = &end else { continue };
                match toolbox.verdict(tool, result) {
                    Verdict::Accepted => {
                        return Ok(SessionEnd::Submitted { turn, call_id, arguments, attempts: attempts + 1 });
                    }
                    Verdict::Refused => {
                        attempts += 1;
                        last_refused = Some(arguments);
                        if attempts >= max_attempts {
                            let reason = format!(
                                "{attempts} submission{} refused with findings (at most {max_attempts})",
                                if attempts == 1 { " was" } else { "s were" },
                            );
                            return self.fail(reason, (turn, max_turns, max_attempts), attempts, last_refused);
                        }
                    }
                    Verdict::Other => {}
                }
            }
        }
        let reason = format!(
            "no submission was accepted within {max_turns} model call{} (`--max-turns`)",
            if max_turns == 1 { "" } else { "s" }
        );
        self.fail(reason, (u64::from(max_turns), max_turns, max_attempts), attempts, last_refused)
    }

    /// Appends an event of this session.
    fn write(&mut self, record: Record) -> Result<(), Failure> {
        events::write(self.log, events::Session { role: self.spec.role, cycle: self.spec.cycle }, record)
    }

    /// Ends the session as failed at `turn` under the bounds `(turn, max_turns,
    /// max_attempts)`; a replayed failure keeps its recorded reason and appends nothing.
    fn fail(
        &mut self,
        reason: String,
        (turn, max_turns, max_attempts): (u64, u32, u32),
        attempts: u32,
        last_refused: Option<Value>,
    ) -> Result<SessionEnd, Failure> {
        if let Some(failed) = &self.history.failed {
            let reason = failed.str("reason").map_or(reason, str::to_string);
            return Ok(SessionEnd::Failed { reason, last_refused });
        }
        let max_tokens = self.spec.max_tokens;
        self.write(Record::SessionFailed {
            reason: reason.clone(),
            turns: turn,
            attempts,
            max_turns,
            max_attempts,
            max_tokens,
        })?;
        Ok(SessionEnd::Failed { reason, last_refused })
    }

    /// One model call: answered from the log, or made (and logged) for real.
    fn model_call(&mut self, turn: u64, body: &Value) -> Result<Value, Failure> {
        let request_hash = hash(body);
        let request = fingerprint(body);
        match self.history.model_call(turn) {
            Some(recorded) if recorded.request_hash != request_hash => {
                let field = first_difference(&recorded.fingerprint, &request);
                return Err(divergence(
                    self.log.display(),
                    self.log.run_id(),
                    format!("the model request of turn {turn}"),
                    field.as_deref(),
                    recorded.seq,
                ));
            }
            Some(recorded) => match &recorded.end {
                Some(ModelEnd::Responded { message, usage }) => {
                    self.stats.tokens += tokens_of(usage);
                    let message = message.clone();
                    self.stats.model_replayed += 1;
                    self.observer.turn(turn, true);
                    self.observer.message(turn, &message, true);
                    return Ok(message);
                }
                // A call that failed is tried again, announced again.
                Some(ModelEnd::Failed) => {
                    self.stop_if_cancelled()?;
                    self.announce_model_call(turn, &request_hash, request)?
                }
                // The call in flight when the run stopped: already announced.
                None => self.stop_if_cancelled()?,
            },
            None => {
                self.stop_if_cancelled()?;
                self.announce_model_call(turn, &request_hash, request)?
            }
        }
        let Some(client) = self.client else {
            return Err(Failure::Tool(format!(
                "the log records run `{}` as finished, but replaying it needs a model call at turn {turn} \
                 that it does not hold",
                self.log.run_id()
            )));
        };
        self.observer.turn(turn, false);
        let begun = Instant::now();
        let observer = &mut *self.observer;
        let answer = client.complete(body, &mut |progress| match progress {
            Progress::Text(piece) => observer.text(piece),
            Progress::Retrying { try_number, delay, reason } => observer.retrying(try_number, delay, &reason),
            Progress::ToolCall { .. } => {}
        });
        self.stats.model_calls += 1;
        // An answer that came as the session was cancelled is not recorded: the log holds the
        // call as in flight, and a resumed run makes it again.
        self.stop_if_cancelled()?;
        match answer {
            Ok(completion) => {
                self.stats.tokens += tokens_of(&completion.usage);
                let message = normalized_message(completion.message, turn);
                self.write(Record::ModelResponded {
                    turn,
                    message: message.clone(),
                    usage: json!(completion.usage),
                    finish_reason: json!(completion.finish_reason),
                    tries: json!(completion.tries),
                    duration_ms: millis(begun.elapsed()),
                })?;
                self.observer.message(turn, &message, false);
                Ok(message)
            }
            Err(CallFailed::Cancelled) => Err(Failure::Cancelled),
            Err(CallFailed::Failed(reason)) => {
                self.write(Record::ModelFailed { turn, reason: reason.clone() })?;
                Err(Failure::Tool(format!("the model call of turn {turn} failed: {reason}")))
            }
        }
    }

    fn announce_model_call(&mut self, turn: u64, request_hash: &str, request: Value) -> Result<(), Failure> {
        self.write(Record::ModelCalled { turn, request_hash: request_hash.to_string(), request })
    }

    /// One tool call: its recorded end, or run (and logged) for real. Returns the
    /// arguments as recorded and the end.
    fn tool_call(
        &mut self,
        turn: u64,
        call_id: &str,
        tool: &str,
        raw: &str,
        toolbox: &mut dyn Toolbox,
    ) -> Result<(Value, ToolOutcome), Failure> {
        let (arguments, problem) = read_arguments(raw);
        match self.history.tool_call(call_id) {
            Some(recorded)
                if recorded.tool != tool || canonical_text(&recorded.arguments) != canonical_text(&arguments) =>
            {
                let field = if recorded.tool != tool { "tool" } else { "arguments" };
                return Err(divergence(
                    self.log.display(),
                    self.log.run_id(),
                    format!("tool call {call_id} (turn {turn})"),
                    Some(field),
                    recorded.seq,
                ));
            }
            Some(recorded) => {
                if let Some(end) = recorded.end.clone() {
                    self.stats.tool_replayed += 1;
                    self.observer.tool_started(call_id, tool, &arguments, true);
                    self.observer.tool_ended(call_id, tool, end.as_result(), true);
                    return Ok((arguments, end));
                }
                // In flight when the run stopped: run again (at least once), announced already.
                self.stop_if_cancelled()?;
            }
            None => {
                self.stop_if_cancelled()?;
                self.write(Record::ToolStarted {
                    turn,
                    call_id: call_id.to_string(),
                    tool: tool.to_string(),
                    arguments: arguments.clone(),
                })?;
            }
        }
        self.observer.tool_started(call_id, tool, &arguments, false);
        // A resumed session's files are made what its history says before anything runs.
        self.tracked.restore(self.log).map_err(Failure::Tool)?;
        let begun = Instant::now();
        let outcome = match problem {
            Some(problem) => ToolOutcome::Failed(json!({ "message": format!("`{tool}`: {problem}") })),
            None => toolbox.run(tool, &arguments, &mut *self.observer),
        };
        self.stats.tool_runs += 1;
        // A tool that ended as the session was cancelled is left in flight, likewise.
        self.stop_if_cancelled()?;
        let duration = millis(begun.elapsed());
        let files = self.tracked.record(self.log).map_err(Failure::Tool)?;
        let (end, value) = match &outcome {
            ToolOutcome::Succeeded(value) => (ToolEnd::Succeeded, value),
            ToolOutcome::Failed(value) => (ToolEnd::Failed, value),
        };
        self.write(Record::ToolEnded {
            end,
            call_id: call_id.to_string(),
            tool: tool.to_string(),
            value: value.clone(),
            duration_ms: duration,
            files,
        })?;
        self.observer.tool_ended(call_id, tool, outcome.as_result(), false);
        Ok((arguments, outcome))
    }
}

/// A tool call's arguments as recorded: the object they parse to, else the raw text with
/// what is wrong with it.
fn read_arguments(raw: &str) -> (Value, Option<String>) {
    match serde_json::from_str::<Value>(raw) {
        Ok(value @ Value::Object(_)) if events::depth(&value) <= MAX_ARGUMENT_DEPTH => (value, None),
        Ok(Value::Object(_)) => {
            (json!(raw), Some(format!("the arguments are nested deeper than {MAX_ARGUMENT_DEPTH} levels")))
        }
        Ok(_) => (json!(raw), Some("the arguments must be a JSON object".to_string())),
        Err(e) => (json!(raw), Some(format!("the arguments are not JSON: {e}"))),
    }
}

/// The assistant message as the session records and sends it back: the role, the text
/// (`""` when there is none: servers such as llama.cpp's refuse a `null` content, which
/// OpenAI's API allows), and each tool call with an id (a provider that sends none gets
/// `call_<turn>_<n>`).
fn normalized_message(message: Value, turn: u64) -> Value {
    let content = message.get("content").cloned().filter(|c| c.is_string()).unwrap_or(json!(""));
    let mut normalized = json!({ "role": "assistant", "content": content });
    if let Some(calls) = message.get("tool_calls").and_then(Value::as_array).filter(|c| !c.is_empty()) {
        let calls: Vec<Value> = calls
            .iter()
            .enumerate()
            .map(|(i, call)| {
                let id = call
                    .get("id")
                    .and_then(Value::as_str)
                    .filter(|id| !id.is_empty())
                    .map_or_else(|| format!("call_{turn}_{}", i + 1), str::to_string);
                json!({ "id": id, "type": "function", "function": {
                    "name": call["function"]["name"].as_str().unwrap_or_default(),
                    "arguments": match &call["function"]["arguments"] {
                        Value::String(text) => text.clone(),
                        Value::Null => String::new(),
                        other => other.to_string(),
                    },
                } })
            })
            .collect();
        normalized["tool_calls"] = Value::Array(calls);
    }
    normalized
}

/// The tokens a call used as its provider reported them: prompt plus completion, else the
/// total; none when it reported no usage.
fn tokens_of(usage: &Value) -> u64 {
    let field = |key: &str| usage.get(key).and_then(Value::as_u64);
    match (field("prompt_tokens"), field("completion_tokens")) {
        (None, None) => field("total_tokens").unwrap_or(0),
        (prompt, completion) => prompt.unwrap_or(0).saturating_add(completion.unwrap_or(0)),
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_an_object_or_the_raw_text_with_the_reason() {
        assert_eq!(read_arguments(r#"{"command":"ls"}"#), (json!({"command": "ls"}), None));
        let (raw, problem) = read_arguments("[1]");
        assert_eq!(raw, json!("[1]"));
        assert!(problem.unwrap().contains("JSON object"));
        assert!(read_arguments("{\"command\":").1.unwrap().contains("not JSON"));
        let deep = format!("{}1{}", "{\"a\":".repeat(70), "}".repeat(70));
        assert!(read_arguments(&deep).1.unwrap().contains("deeper"));
    }

    #[test]
    fn messages_get_ids_and_string_arguments() {
        let message = normalized_message(
            json!({ "role": "assistant", "content": null, "extra": 1, "tool_calls": [
                { "function": { "name": "bash", "arguments": {"command": "ls"} } },
                { "id": "x", "function": { "name": "bash", "arguments": "{}" } },
            ] }),
            3,
        );
        assert_eq!(
            message,
            json!({ "role": "assistant", "content": "", "tool_calls": [
                { "id": "call_3_1", "type": "function", "function": { "name": "bash", "arguments": "{\"command\":\"ls\"}" } },
                { "id": "x", "type": "function", "function": { "name": "bash", "arguments": "{}" } },
            ] })
        );
    }
}
