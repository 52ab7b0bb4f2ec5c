//! A recorded session read back from its events (docs/reference/harness.md#replay-and-resume): the model calls by turn and
//! the tool calls by call id, each with its end when it has one. A resumed session asks
//! this history before it calls anything; what it asks must equal what was recorded, or
//! the run stops with `pipeline.replay_divergence`.

use std::collections::BTreeMap;

use little_diagnostics::{Code, Diagnostic};
use serde_json::{Map, Value, json};

use super::session::ToolOutcome;
use crate::capabilities::hash;
use crate::events::{Event, Kind, SessionOf};
use crate::{Failure, Located};

/// How a recorded model call ended.
#[derive(Clone, Debug)]
pub enum ModelEnd {
    Responded {
        message: Value,
        usage: Value,
    },
    /// The provider could not be reached or refused; a resumed session calls again.
    Failed,
}

#[derive(Clone, Debug)]
pub struct RecordedModelCall {
    pub seq: u64,
    pub request_hash: String,
    /// Short hashes of the request's parts ([`fingerprint`]), to name what differs.
    pub fingerprint: Value,
    pub end: Option<ModelEnd>,
}

#[derive(Clone, Debug)]
pub struct RecordedToolCall {
    pub seq: u64,
    pub tool: String,
    pub arguments: Value,
    pub end: Option<ToolOutcome>,
}

/// The recorded events of one session (a run, a cycle, a role).
#[derive(Debug, Default)]
pub struct History {
    /// The last `harness.model.called` of each turn, with its end.
    model_calls: BTreeMap<u64, RecordedModelCall>,
    tool_calls: BTreeMap<String, RecordedToolCall>,
    pub started: Option<Event>,
    pub completed: Option<Event>,
    pub failed: Option<Event>,
    /// The `seq` of the session's last event.
    pub last_seq: u64,
    /// What each recorded call changed in the session's files (`files` of its end), in order.
    pub files: Vec<Value>,
}

impl History {
    /// The session of `role` in `cycle` among a run's events.
    pub fn of(events: &[Event], role: &str, cycle: u64) -> History {
        let mut history = History::default();
        for event in events.iter().filter(|e| e.cycle() == cycle && e.role() == role) {
            history.last_seq = event.seq;
            let turn = event.u64("turn").unwrap_or(0);
            let call_id = || event.str("callId").unwrap_or_default().to_string();
            match event.known() {
                Some(Kind::SessionStarted) => history.started = Some(event.clone()),
                Some(Kind::SessionCompleted) => history.completed = Some(event.clone()),
                Some(Kind::SessionFailed) => history.failed = Some(event.clone()),
                Some(Kind::ModelCalled) => {
                    history.model_calls.insert(
                        turn,
                        RecordedModelCall {
                            seq: event.seq,
                            request_hash: event.str("requestHash").unwrap_or_default().to_string(),
                            fingerprint: event.payload.get("request").cloned().unwrap_or(Value::Null),
                            end: None,
                        },
                    );
                }
                Some(Kind::ModelResponded) => {
                    if let Some(call) = history.model_calls.get_mut(&turn) {
                        call.end = Some(ModelEnd::Responded {
                            message: event.payload.get("message").cloned().unwrap_or(Value::Null),
                            usage: event.payload.get("usage").cloned().unwrap_or(Value::Null),
                        });
                    }
                }
                Some(Kind::ModelFailed) => {
                    if let Some(call) = history.model_calls.get_mut(&turn) {
                        call.end = Some(ModelEnd::Failed);
                    }
                }
                Some(Kind::ToolStarted) => {
                    history.tool_calls.insert(
                        call_id(),
                        RecordedToolCall {
                            seq: event.seq,
                            tool: event.str("tool").unwrap_or_default().to_string(),
                            arguments: event.payload.get("arguments").cloned().unwrap_or(Value::Null),
                            end: None,
                        },
                    );
                }
                Some(kind @ (Kind::ToolSucceeded | Kind::ToolFailed)) => {
                    if let Some(files) = event.payload.get("files") {
                        history.files.push(files.clone());
                    }
                    if let Some(call) = history.tool_calls.get_mut(&call_id()) {
                        let outcome = |key| event.payload.get(key).cloned().unwrap_or(Value::Null);
                        call.end = Some(if kind == Kind::ToolSucceeded {
                            ToolOutcome::Succeeded(outcome("result"))
                        } else {
                            ToolOutcome::Failed(outcome("error"))
                        });
                    }
                }
                _ => {}
            }
        }
        history
    }

    pub fn model_call(&self, turn: u64) -> Option<&RecordedModelCall> {
        self.model_calls.get(&turn)
    }

    pub fn tool_call(&self, call_id: &str) -> Option<&RecordedToolCall> {
        self.tool_calls.get(call_id)
    }

    /// Whether the session completed or failed: it replays from the log alone.
    pub fn finished(&self) -> bool {
        self.completed.is_some() || self.failed.is_some()
    }

    /// Whether anything of the session was recorded besides its start.
    pub fn has_calls(&self) -> bool {
        !self.model_calls.is_empty()
    }
}

/// The first 16 hex digits of a value's hash: enough to tell parts of a request apart.
fn short(value: &Value) -> Value {
    let full = hash(value);
    json!(little_hashing::short_id(&full))
}

/// Short hashes of a request's parts: each top-level field, and `messages` message by
/// message. Recorded with the request hash, so that a divergence can name the first part
/// that differs without the log holding every request whole.
pub fn fingerprint(body: &Value) -> Value {
    let mut parts = Map::new();
    if let Value::Object(fields) = body {
        let mut keys: Vec<&String> = fields.keys().collect();
        keys.sort();
        for key in keys {
            let value = &fields[key];
            let part = match (key.as_str(), value) {
                ("messages", Value::Array(messages)) => Value::Array(messages.iter().map(short).collect()),
                _ => short(value),
            };
            parts.insert(key.clone(), part);
        }
    }
    Value::Object(parts)
}

/// The first part in which two fingerprints differ, as a path into the request
/// (`model`, `tools`, `messages[2]`); `None` when they are equal.
pub fn first_difference(recorded: &Value, now: &Value) -> Option<String> {
    let empty = Map::new();
    let recorded = recorded.as_object().unwrap_or(&empty);
    let now = now.as_object().unwrap_or(&empty);
    let mut keys: Vec<&String> = recorded.keys().chain(now.keys()).collect();
    keys.sort();
    keys.dedup();
    for key in keys {
        match (recorded.get(key), now.get(key)) {
            (Some(Value::Array(a)), Some(Value::Array(b))) => {
                if let Some(i) = (0..a.len().max(b.len())).find(|&i| a.get(i) != b.get(i)) {
                    return Some(format!("{key}[{i}]"));
                }
            }
            (a, b) if a != b => return Some(key.clone()),
            _ => {}
        }
    }
    None
}

/// `pipeline.replay_divergence`: the resumed session asked for something other than what
/// the log holds at this point; nothing was sent or run. `field` is the first part that
/// differs, when the recorded parts tell it.
pub fn divergence(log: &str, run_id: &str, what: String, field: Option<&str>, recorded_seq: u64) -> Failure {
    let (place, path) = match field {
        Some(field) => (format!("first at `{field}`"), format!("$.{field}")),
        None => ("though its recorded parts match (the log's hash of it does not)".to_string(), "$".to_string()),
    };
    let message = format!(
        "{what} differs from the one recorded for run `{run_id}` (event {recorded_seq} of the log), \
         {place}; nothing was sent or run"
    );
    let diagnostic = Diagnostic::new(Code::PipelineReplayDivergence, message).with_path(path).with_help(Some(
        "resume the run with the definition, harness, sandbox and settings it was recorded with, \
         or start a new run with another `--run-id`"
            .to_string(),
    ));
    Failure::Blocked(vec![Located { path: log.to_string(), text: "".into(), diagnostics: vec![diagnostic] }])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_difference_names_the_field_or_the_message() {
        let body = json!({ "model": "m", "messages": [{"role": "system", "content": "a"}, {"role": "user", "content": "t"}], "tools": [] });
        let same = fingerprint(&body);
        assert_eq!(first_difference(&same, &fingerprint(&body.clone())), None);
        let mut other = body.clone();
        other["messages"][1]["content"] = json!("u");
        assert_eq!(first_difference(&same, &fingerprint(&other)).as_deref(), Some("messages[1]"));
        let mut longer = body.clone();
        longer["messages"].as_array_mut().unwrap().push(json!({"role": "user", "content": "x"}));
        assert_eq!(first_difference(&same, &fingerprint(&longer)).as_deref(), Some("messages[2]"));
        let mut model = body.clone();
        model["model"] = json!("n");
        assert_eq!(first_difference(&same, &fingerprint(&model)).as_deref(), Some("model"));
        let mut extra = body;
        extra["seed"] = json!(1);
        assert_eq!(first_difference(&same, &fingerprint(&extra)).as_deref(), Some("seed"));
    }
}
