//! The scripted provider seen from a plain socket: the protocol it speaks, its script, its records, and its drop.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use little_provider::testing::{Reply, ScriptedServer, ToolCall};
use little_provider::{Client, ProviderConfig, ProviderError, RetryPolicy};
use serde_json::{Value, json};

struct Answer {
    status: u16,
    head: String,
    body: String,
}

/// Sends raw bytes and reads the answer to its end (every answer closes the connection).
fn exchange(port: u16, request: &[u8]) -> Answer {
    let mut connection = TcpStream::connect(("127.0.0.1", port)).unwrap();
    connection.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    connection.write_all(request).unwrap();
    let mut answer = String::new();
    connection.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    Answer { status, head: head.to_string(), body: body.to_string() }
}

fn post(port: u16, body: &Value) -> Answer {
    let body = body.to_string();
    let request = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    exchange(port, request.as_bytes())
}

fn data_lines(body: &str) -> Vec<&str> {
    body.lines().filter_map(|line| line.strip_prefix("data: ")).collect()
}

#[test]
fn a_message_streams_in_pieces_as_openai_sends_them() {
    let content = "The quick brown fox jumps over the lazy dog";
    let server = ScriptedServer::start(vec![Reply::Message {
        content: Some(content.into()),
        tool_calls: vec![ToolCall::new("call_1", "search", json!({"query": "foxes", "limit": 3}))],
    }]);
    let request = json!({"model": "m", "messages": [], "stream": true, "stream_options": {"include_usage": true}});
    let answer = post(server.port(), &request);
    assert_eq!(answer.status, 200);
    assert!(answer.head.contains("Content-Type: text/event-stream"), "{}", answer.head);
    assert!(answer.head.contains("Connection: close"));
    let lines = data_lines(&answer.body);
    assert_eq!(lines.last(), Some(&"[DONE]"));
    let chunks: Vec<Value> = lines[..lines.len() - 1].iter().map(|line| serde_json::from_str(line).unwrap()).collect();
    let deltas: Vec<&Value> = chunks.iter().filter_map(|chunk| chunk.pointer("/choices/0/delta")).collect();
    let pieces: Vec<&str> =
        deltas.iter().filter_map(|delta| delta["content"].as_str()).filter(|p| !p.is_empty()).collect();
    assert_eq!(pieces.concat(), content);
    assert!(pieces.iter().all(|piece| piece.chars().count() <= 7), "{pieces:?}");
    let arguments: Vec<&str> = deltas
        .iter()
        .filter_map(|delta| delta.pointer("/tool_calls/0/function/arguments").and_then(Value::as_str))
        .filter(|piece| !piece.is_empty())
        .collect();
    assert!(arguments.len() >= 3, "{arguments:?}");
    assert_eq!(arguments.concat(), r#"{"query":"foxes","limit":3}"#);
    let usage = &chunks.last().unwrap()["usage"];
    assert_eq!(chunks.last().unwrap()["choices"], json!([]));
    assert_eq!(
        usage["total_tokens"].as_u64(),
        Some(usage["prompt_tokens"].as_u64().unwrap() + usage["completion_tokens"].as_u64().unwrap())
    );
    assert_eq!(
        chunks.iter().filter_map(|c| c.pointer("/choices/0/finish_reason")?.as_str()).collect::<Vec<_>>(),
        ["tool_calls"]
    );

    // Without include_usage there is no usage chunk, as with OpenAI.
    let server = ScriptedServer::start(vec![Reply::text("hi")]);
    let answer = post(server.port(), &json!({"model": "m", "messages": [], "stream": true}));
    assert!(!answer.body.contains("usage"), "{}", answer.body);
}

#[test]
fn a_request_without_stream_gets_one_completion_object() {
    let server = ScriptedServer::start(vec![Reply::text("whole")]);
    let answer = post(server.port(), &json!({"model": "m", "messages": []}));
    assert_eq!(answer.status, 200);
    assert!(answer.head.contains("Content-Type: application/json"));
    let body: Value = serde_json::from_str(&answer.body).unwrap();
    assert_eq!(body["object"], "chat.completion");
    assert_eq!(body["model"], "m");
    assert_eq!(body["choices"][0]["message"], json!({"role": "assistant", "content": "whole"}));
    assert_eq!(body["choices"][0]["finish_reason"], "stop");
    assert!(body["usage"]["prompt_tokens"].as_u64().unwrap() > 0);
}

#[test]
fn statuses_carry_an_openai_error_body_and_retry_after() {
    let server =
        ScriptedServer::start(vec![Reply::Status { status: 429, message: "slow down".into(), retry_after: Some(7) }]);
    let answer = post(server.port(), &json!({}));
    assert_eq!(answer.status, 429);
    assert!(answer.head.contains("Retry-After: 7"), "{}", answer.head);
    let body: Value = serde_json::from_str(&answer.body).unwrap();
    assert_eq!(body["error"]["message"], "slow down");
    assert_eq!(body["error"]["type"], "rate_limit_error");
}

#[test]
fn past_the_script_a_request_gets_500_naming_it() {
    let server = ScriptedServer::start(vec![Reply::text("one")]);
    assert_eq!(post(server.port(), &json!({})).status, 200);
    let answer = post(server.port(), &json!({}));
    assert_eq!(answer.status, 500);
    let body: Value = serde_json::from_str(&answer.body).unwrap();
    assert_eq!(body["error"]["message"], "the script has no reply for request 2 (it has 1 replies)");
    assert_eq!(server.request_count(), 2);
}

#[test]
fn only_posts_to_chat_completions_are_served_and_recorded() {
    let server = ScriptedServer::start(vec![Reply::text("one")]);
    let get = exchange(server.port(), b"GET /v1/chat/completions HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(get.status, 404);
    let elsewhere = exchange(server.port(), b"POST /v1/embeddings HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}");
    assert_eq!(elsewhere.status, 404);
    assert_eq!(server.request_count(), 0);
    assert_eq!(post(server.port(), &json!({})).status, 200, "the script's first reply is still there");
}

#[test]
fn chunked_bodies_and_expect_continue_are_read() {
    let server = ScriptedServer::start(vec![Reply::text("ok")]);
    let request = b"POST /v1/chat/completions?api-version=1 HTTP/1.1\r\nHost: x\r\nX-Custom: Yes\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n3\r\n 1}\r\n0\r\n\r\n";
    let answer = exchange(server.port(), request);
    assert!(answer.head.starts_with("HTTP/1.1 100 Continue"), "{}", answer.head);
    assert!(answer.body.contains("HTTP/1.1 200 OK"), "{}", answer.body);
    let recorded = &server.requests()[0];
    assert_eq!(recorded.method, "POST");
    assert_eq!(recorded.path, "/v1/chat/completions?api-version=1");
    assert_eq!(recorded.body, json!({"a": 1}));
    assert_eq!(recorded.header("x-custom"), Some("Yes"));
    assert!(recorded.headers.iter().any(|(name, _)| name == "x-custom"), "names lowercased");
}

#[test]
fn a_handler_sees_each_request_and_its_number() {
    let server = ScriptedServer::with_handler(|number, request| {
        let said = request.body.pointer("/messages/0/content").and_then(Value::as_str).unwrap_or("");
        Reply::text(&format!("{number}: {}", said.to_uppercase()))
    });
    let client = Client::new(&ProviderConfig::new("scripted", &server.base_url())).unwrap();
    for (number, word) in ["hello", "again"].iter().enumerate() {
        let body = json!({"model": "m", "messages": [{"role": "user", "content": word}]});
        let completion = client.complete(&body, &mut |_| {}).unwrap();
        assert_eq!(completion.message["content"], format!("{number}: {}", word.to_uppercase()));
    }
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn wait_for_requests_waits_for_them_or_the_timeout() {
    let server = ScriptedServer::start(vec![Reply::Delayed(Duration::from_millis(200), Box::new(Reply::text("x")))]);
    let started = Instant::now();
    assert!(!server.wait_for_requests(1, Duration::from_millis(100)));
    assert!(started.elapsed() >= Duration::from_millis(100));
    let port = server.port();
    let call = std::thread::spawn(move || post(port, &json!({"n": 1})).status);
    assert!(server.wait_for_requests(1, Duration::from_secs(5)));
    assert_eq!(server.requests()[0].body, json!({"n": 1}), "recorded before the reply");
    assert_eq!(call.join().unwrap(), 200);
}

#[test]
fn dropping_the_server_ends_a_stalled_call() {
    let server = ScriptedServer::start(vec![Reply::Stall]);
    let client = Client::new(&ProviderConfig::new("scripted", &server.base_url())).unwrap().with_policy(RetryPolicy {
        max_tries: 2,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(1),
    });
    let call = std::thread::spawn(move || client.complete(&json!({"messages": []}), &mut |_| {}));
    assert!(server.wait_for_requests(1, Duration::from_secs(5)));
    std::thread::sleep(Duration::from_millis(100));
    assert!(!call.is_finished(), "the stall holds the call");
    let dropped = Instant::now();
    drop(server);
    let error = call.join().unwrap().unwrap_err();
    assert!(dropped.elapsed() < Duration::from_secs(5), "{:?}", dropped.elapsed());
    assert!(matches!(error, ProviderError::Exhausted { .. } | ProviderError::Unreachable { .. }), "{error:?}");
}
