//! A scripted model for the built-in harness: a provider over a real socket whose answer
//! to a request is chosen by the request's turn (its assistant messages, plus one), so a
//! resumed session that sends a turn again gets that turn's answer again.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use little_provider::testing::{Recorded, Reply, ScriptedServer, ToolCall};
use serde_json::{Value, json};

/// The turn a request asks for: the assistant messages it carries, plus one.
pub fn turn_of(request: &Recorded) -> usize {
    request.body["messages"].as_array().map_or(0, |m| m.iter().filter(|m| m["role"] == "assistant").count()) + 1
}

/// Answers turn N with `turns[N-1]`; a turn past the script gets a 500.
pub fn scripted(turns: Vec<Reply>) -> ScriptedServer {
    ScriptedServer::with_handler(move |_, request| {
        let turn = turn_of(request);
        turns
            .get(turn - 1)
            .cloned()
            .unwrap_or_else(|| Reply::status(500, &format!("no reply scripted for turn {turn}")))
    })
}

/// As [`scripted`], but the first request of `stall_turn` is never answered (a model call
/// in flight when the test kills `little`).
pub fn stalling_once(turns: Vec<Reply>, stall_turn: usize) -> ScriptedServer {
    let stalled = Arc::new(AtomicBool::new(false));
    ScriptedServer::with_handler(move |_, request| {
        let turn = turn_of(request);
        if turn == stall_turn && !stalled.swap(true, Ordering::SeqCst) {
            return Reply::Stall;
        }
        turns
            .get(turn - 1)
            .cloned()
            .unwrap_or_else(|| Reply::status(500, &format!("no reply scripted for turn {turn}")))
    })
}

pub fn call(id: &str, tool: &str, arguments: Value) -> ToolCall {
    ToolCall::new(id, tool, arguments)
}

pub fn bash(id: &str, command: &str) -> Reply {
    Reply::tool_calls(vec![call(id, "bash", json!({ "command": command }))])
}

/// The worked example's LWIR.
pub fn good_lwir() -> Value {
    serde_json::from_str(&super::example("lwir.json")).unwrap()
}

/// The worked example's LWIR naming a model that is not a slot (`binding.model_not_permitted`).
pub fn bad_lwir() -> Value {
    serde_json::from_str(&super::example("lwir.json").replace("\"gpt-4o-mini\"", "\"gpt-4o\"")).unwrap()
}

pub fn submit(id: &str, lwir: Value) -> Reply {
    Reply::tool_calls(vec![call(id, "submit_lwir", json!({ "lwir": lwir }))])
}

/// The tool messages of a request, in order: (tool_call_id, parsed content).
pub fn tool_messages(request: &Recorded) -> Vec<(String, Value)> {
    request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            let content = m["content"].as_str().unwrap();
            (m["tool_call_id"].as_str().unwrap().to_string(), serde_json::from_str(content).unwrap())
        })
        .collect()
}
