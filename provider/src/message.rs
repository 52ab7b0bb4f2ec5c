//! The assistant message of an answer: assembled from stream deltas, or normalized from one chat.completion.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::client::Progress;
use crate::error::cut;

/// What an answer comes to, before the client adds how it was fetched.
#[derive(Debug)]
pub(crate) struct Answer {
    pub message: Value,
    pub usage: Value,
    pub finish_reason: Option<String>,
}

/// The provider's own error inside a body (`{"error": {...}}` or `{"error": "..."}`).
pub(crate) struct EmbeddedError {
    pub message: String,
    /// The provider says it is overloaded or rate-limited, so a later try may succeed.
    pub retryable: bool,
}

/// The `error` member of a body, when it has one.
pub(crate) fn embedded_error(body: &Value) -> Option<EmbeddedError> {
    let error = body.get("error").filter(|e| !e.is_null())?;
    let message = error_message(error).unwrap_or_else(|| cut(&error.to_string(), 500));
    let kind = |field: &str| match error.get(field) {
        Some(Value::String(text)) => text.to_ascii_lowercase(),
        Some(Value::Number(number)) => number.to_string(),
        _ => String::new(),
    };
    let (kind, code) = (kind("type"), kind("code"));
    let retryable = ["rate_limit", "overloaded", "server_error", "timeout"]
        .iter()
        .any(|word| kind.contains(word) || code.contains(word))
        || code.parse::<u16>().is_ok_and(|status| status == 429 || status >= 500);
    Some(EmbeddedError { message, retryable })
}

/// The human message of an error body: `{"error":{"message"}}`, `{"error":"..."}` or `{"message"}`, cut to 500 characters.
pub(crate) fn error_message(error: &Value) -> Option<String> {
    let text = match error {
        Value::String(text) => text.as_str(),
        Value::Object(fields) => match fields.get("message").or_else(|| fields.get("error")) {
            Some(Value::String(text)) => text.as_str(),
            Some(nested @ Value::Object(_)) => return error_message(nested),
            _ => return None,
        },
        _ => return None,
    };
    Some(cut(text.trim(), 500))
}

/// A whole `chat.completion` object, normalized to the shape of a streamed answer.
pub(crate) fn from_completion(body: &Value) -> Result<Answer, String> {
    let choice = match body.get("choices") {
        Some(Value::Array(choices)) => {
            choices.iter().find(|c| c.get("index").is_none_or(|i| i.as_u64() == Some(0))).or(choices.first())
        }
        _ => None,
    };
    let Some(choice) = choice else {
        return Err(format!("the answer has no choices: {}", cut(&body.to_string(), 200)));
    };
    let Some(message) = choice.get("message").filter(|m| m.is_object()) else {
        return Err(format!("the answer's first choice has no message: {}", cut(&choice.to_string(), 200)));
    };
    let content = match message.get("content") {
        Some(Value::String(text)) => Some(text.clone()),
        // Some servers send content parts, as in requests: only the text is the message.
        Some(Value::Array(parts)) => {
            Some(parts.iter().filter_map(|part| part.get("text").and_then(Value::as_str)).collect::<String>())
        }
        _ => None,
    };
    let tool_calls = match message.get("tool_calls") {
        Some(Value::Array(calls)) => calls
            .iter()
            .map(|call| {
                let function = call.get("function");
                let text = |value: Option<&Value>| match value {
                    Some(Value::String(text)) => text.clone(),
                    None | Some(Value::Null) => String::new(),
                    // A server that sends arguments as a JSON object: the protocol's string is its text.
                    Some(other) => other.to_string(),
                };
                ToolCallText {
                    id: text(call.get("id")),
                    name: text(function.and_then(|f| f.get("name"))),
                    arguments: text(function.and_then(|f| f.get("arguments"))),
                }
            })
            .collect(),
        _ => Vec::new(),
    };
    Ok(Answer {
        message: assistant_message(content, &tool_calls),
        usage: usage_of(body),
        finish_reason: choice.get("finish_reason").and_then(Value::as_str).map(str::to_string),
    })
}

fn usage_of(body: &Value) -> Value {
    body.get("usage").filter(|usage| usage.is_object()).cloned().unwrap_or(Value::Null)
}

struct ToolCallText {
    id: String,
    name: String,
    arguments: String,
}

fn assistant_message(content: Option<String>, tool_calls: &[ToolCallText]) -> Value {
    let mut message = Map::new();
    message.insert("role".into(), json!("assistant"));
    message.insert("content".into(), content.map_or(Value::Null, Value::String));
    if !tool_calls.is_empty() {
        let calls = tool_calls
            .iter()
            .map(|call| {
                json!({
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                })
            })
            .collect();
        message.insert("tool_calls".into(), Value::Array(calls));
    }
    Value::Object(message)
}

/// The chunks of a stream, put together as they arrive.
#[derive(Default)]
pub(crate) struct StreamAssembly {
    /// `None` until a content piece arrives, so that a tool-call-only answer has `content: null`.
    content: Option<String>,
    tool_calls: BTreeMap<usize, PartialToolCall>,
    finish_reason: Option<String>,
    usage: Value,
    /// The index of the tool call that the last piece went to, for servers that leave `index` out.
    last_tool_call: Option<usize>,
}

#[derive(Default)]
struct PartialToolCall {
    id: String,
    name: String,
    arguments: String,
    /// Whether `Progress::ToolCall` went out: once a piece that is not part of the name arrives.
    announced: bool,
}

impl StreamAssembly {
    /// Adds one `chat.completion.chunk` (its `error` member is the caller's business).
    pub fn add_chunk(&mut self, chunk: &Value, progress: &mut dyn FnMut(Progress<'_>)) {
        if let Some(usage) = chunk.get("usage").filter(|usage| usage.is_object()) {
            self.usage = usage.clone();
        }
        let Some(Value::Array(choices)) = chunk.get("choices") else { return };
        // With n > 1 the choices interleave; the answer is the first one.
        for choice in choices.iter().filter(|c| c.get("index").is_none_or(|i| i.as_u64() == Some(0))) {
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish_reason = Some(reason.to_string());
            }
            let Some(delta) = choice.get("delta").or_else(|| choice.get("message")) else { continue };
            if let Some(Value::String(piece)) = delta.get("content") {
                self.content.get_or_insert_with(String::new).push_str(piece);
                if !piece.is_empty() {
                    progress(Progress::Text(piece));
                }
            }
            if let Some(Value::Array(pieces)) = delta.get("tool_calls") {
                for piece in pieces {
                    self.add_tool_call_piece(piece, progress);
                }
            }
        }
    }

    fn add_tool_call_piece(&mut self, piece: &Value, progress: &mut dyn FnMut(Progress<'_>)) {
        let id = piece.get("id").and_then(Value::as_str).filter(|id| !id.is_empty());
        let index = match piece.get("index").and_then(Value::as_u64) {
            Some(index) => usize::try_from(index).unwrap_or(usize::MAX),
            None => {
                // No index: a new id starts a new call, anything else continues the last one.
                let known = id.and_then(|id| self.tool_calls.iter().find(|(_, c)| c.id == id).map(|(i, _)| *i));
                match (known, id, self.last_tool_call) {
                    (Some(index), _, _) => index,
                    (None, None, Some(last)) => last,
                    _ => self.tool_calls.keys().next_back().map_or(0, |last| last.saturating_add(1)),
                }
            }
        };
        if self.last_tool_call.is_some_and(|last| last != index) {
            self.announce_all(progress);
        }
        self.last_tool_call = Some(index);
        let call = self.tool_calls.entry(index).or_default();
        if let Some(id) = id
            && call.id.is_empty()
        {
            call.id = id.to_string();
        }
        let function = piece.get("function");
        let name_piece = function.and_then(|f| f.get("name")).and_then(Value::as_str);
        if let Some(name) = name_piece {
            call.name.push_str(name);
        }
        match function.and_then(|f| f.get("arguments")) {
            Some(Value::String(arguments)) => call.arguments.push_str(arguments),
            None | Some(Value::Null) => {}
            Some(other) => call.arguments.push_str(&other.to_string()),
        }
        let name_may_go_on = name_piece.is_some() && function.and_then(|f| f.get("arguments")).is_none();
        if !name_may_go_on {
            announce(index, call, progress);
        }
    }

    fn announce_all(&mut self, progress: &mut dyn FnMut(Progress<'_>)) {
        for (index, call) in &mut self.tool_calls {
            announce(*index, call, progress);
        }
    }

    /// The message once the stream said `[DONE]`.
    pub fn finish(mut self, progress: &mut dyn FnMut(Progress<'_>)) -> Answer {
        self.announce_all(progress);
        let tool_calls: Vec<ToolCallText> = std::mem::take(&mut self.tool_calls)
            .into_values()
            .map(|call| ToolCallText { id: call.id, name: call.name, arguments: call.arguments })
            .collect();
        Answer {
            message: assistant_message(self.content, &tool_calls),
            usage: self.usage,
            finish_reason: self.finish_reason,
        }
    }
}

fn announce(index: usize, call: &mut PartialToolCall, progress: &mut dyn FnMut(Progress<'_>)) {
    if !call.announced && !call.name.is_empty() {
        call.announced = true;
        progress(Progress::ToolCall { index, name: &call.name });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assemble(chunks: &[Value]) -> (Answer, Vec<String>) {
        let mut events = Vec::new();
        let mut record = |p: Progress<'_>| match p {
            Progress::Text(t) => events.push(format!("text {t}")),
            Progress::ToolCall { index, name } => events.push(format!("call {index} {name}")),
            Progress::Retrying { .. } => events.push("retrying".into()),
        };
        let mut assembly = StreamAssembly::default();
        for chunk in chunks {
            assembly.add_chunk(chunk, &mut record);
        }
        let answer = assembly.finish(&mut record);
        (answer, events)
    }

    #[test]
    fn names_in_pieces_are_announced_once_whole() {
        let (answer, events) = assemble(&[
            json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"get_"}}]}}]}),
            json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"weather"}}]}}]}),
            json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]}),
        ]);
        assert_eq!(events, ["call 0 get_weather"]);
        assert_eq!(answer.message["tool_calls"][0]["function"]["name"], "get_weather");
        assert_eq!(answer.message["content"], Value::Null);
    }

    #[test]
    fn pieces_without_index_follow_their_id() {
        let (answer, _) = assemble(&[
            json!({"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{\"x\""}}]}}]}),
            json!({"choices":[{"delta":{"tool_calls":[{"function":{"arguments":":1}"}}]}}]}),
            json!({"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"g","arguments":{"y":2}}}]}}]}),
        ]);
        let calls = answer.message["tool_calls"].as_array().unwrap();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0]["function"]["arguments"], "{\"x\":1}");
        assert_eq!(calls[1]["function"]["arguments"], "{\"y\":2}");
    }

    #[test]
    fn other_choices_are_ignored() {
        let (answer, _) = assemble(&[
            json!({"choices":[{"index":1,"delta":{"content":"no"}},{"index":0,"delta":{"content":"yes"}}]}),
        ]);
        assert_eq!(answer.message["content"], "yes");
    }

    #[test]
    fn completion_arguments_as_object_become_text() {
        let answer = from_completion(&json!({"choices":[{"message":{"role":"assistant","content":null,"extra":1,
            "tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":{"a":1}},"x":2}]},
            "finish_reason":"tool_calls"}]}))
        .unwrap();
        assert_eq!(
            answer.message,
            json!({"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]})
        );
        assert_eq!(answer.usage, Value::Null);
        assert_eq!(answer.finish_reason.as_deref(), Some("tool_calls"));
    }

    #[test]
    fn error_bodies() {
        let e = embedded_error(&json!({"error":{"message":"slow down","type":"rate_limit_error"}})).unwrap();
        assert!(e.retryable);
        assert_eq!(e.message, "slow down");
        let e = embedded_error(&json!({"error":"bad model"})).unwrap();
        assert!(!e.retryable);
        assert_eq!(e.message, "bad model");
        assert!(embedded_error(&json!({"error":null})).is_none());
    }
}
