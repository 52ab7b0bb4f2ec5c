//! The scripted provider as a program, for tests in other languages (the npm and Python
//! packages): `scripted-provider SCRIPT.json [REQUESTS.jsonl]` serves on 127.0.0.1, prints
//! its base URL on stdout, records each request it reads as a line of REQUESTS.jsonl
//! (`{ turn, authorization, body }`), and stops when its stdin closes.
//!
//! The script is `{ "turns": [REPLY, …], "stallOnce": TURN? }`: turn N (the assistant
//! messages a request carries, plus one) is answered by the Nth reply, so a resumed run
//! that asks a turn again gets the same answer; with `stallOnce`, the first request of that
//! turn is never answered. A REPLY is `{ "text"?: "…", "toolCalls"?: [{ "id", "name",
//! "arguments": {…} }] }`, one of them at least.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use little_provider::testing::{Recorded, Reply, ScriptedServer, ToolCall};
use serde_json::{Value, json};

fn reply_of(value: &Value) -> Result<Reply, String> {
    let content = value.get("text").and_then(Value::as_str).map(str::to_string);
    let calls = match value.get("toolCalls") {
        None => Vec::new(),
        Some(calls) => calls.as_array().ok_or_else(|| format!("`toolCalls` is not an array: {value}"))?.clone(),
    };
    if content.is_none() && calls.is_empty() {
        return Err(format!("a reply needs `text` or `toolCalls`: {value}"));
    }
    let tool_calls = calls
        .iter()
        .map(|call| {
            let text =
                |key: &str| call.get(key).and_then(Value::as_str).ok_or_else(|| format!("a tool call needs `{key}`"));
            Ok(ToolCall::new(text("id")?, text("name")?, call.get("arguments").cloned().unwrap_or(json!({}))))
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(Reply::Message { content, tool_calls })
}

fn turn_of(request: &Recorded) -> usize {
    request.body["messages"].as_array().map_or(0, |m| m.iter().filter(|m| m["role"] == "assistant").count()) + 1
}

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let script_path = args.next().ok_or("usage: scripted-provider SCRIPT.json [REQUESTS.jsonl]")?;
    let requests_path = args.next();
    let text = std::fs::read_to_string(&script_path).map_err(|e| format!("{script_path}: {e}"))?;
    let script: Value = serde_json::from_str(&text).map_err(|e| format!("{script_path}: {e}"))?;
    let turns = script["turns"]
        .as_array()
        .ok_or(format!("{script_path}: no `turns`"))?
        .iter()
        .map(reply_of)
        .collect::<Result<Vec<_>, _>>()?;
    let stall_once = script.get("stallOnce").and_then(Value::as_u64).map(|t| t as usize);
    let stalled = AtomicBool::new(false);
    let log = Arc::new(Mutex::new(match &requests_path {
        Some(path) => Some(std::fs::File::create(path).map_err(|e| format!("{path}: {e}"))?),
        None => None,
    }));
    let record = log.clone();
    let server = ScriptedServer::with_handler(move |_, request| {
        let turn = turn_of(request);
        if let Some(file) = record.lock().unwrap().as_mut() {
            let line = json!({ "turn": turn, "authorization": request.header("authorization"), "body": request.body });
            let _ = writeln!(file, "{line}");
            let _ = file.flush();
        }
        if stall_once == Some(turn) && !stalled.swap(true, Ordering::SeqCst) {
            return Reply::Stall;
        }
        turns
            .get(turn - 1)
            .cloned()
            .unwrap_or_else(|| Reply::status(500, &format!("no reply scripted for turn {turn}")))
    });
    println!("{}", server.base_url());
    std::io::stdout().flush().map_err(|e| e.to_string())?;
    // Serves until whoever started it closes our stdin (or dies).
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    drop(server);
    Ok(())
}
