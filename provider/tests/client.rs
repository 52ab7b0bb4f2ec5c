//! The client against the scripted provider over a real socket: streaming, fallbacks, retries, bounds and errors.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Once;
use std::time::{Duration, Instant};

use little_provider::testing::{Reply, ScriptedServer, ToolCall};
use little_provider::{Client, Completion, Progress, ProviderConfig, ProviderError, RetryPolicy};
use serde_json::{Value, json};

const STREAM_KEY_VARIABLE: &str = "LITTLE_PROVIDER_TEST_STREAM_KEY";
const STREAM_KEY: &str = "sk-stream-test-0001";
const SECRET_KEY_VARIABLE: &str = "LITTLE_PROVIDER_TEST_SECRET_KEY";
const SECRET_KEY: &str = "sk-live-DO-NOT-PRINT-7f3a9c";
const UNSET_VARIABLE: &str = "LITTLE_PROVIDER_TEST_NEVER_SET_4d1e";

/// Sets this binary's key variables once, before any test touches the network or the environment: every test that
/// needs them calls this first, so no other thread reads the environment while it is written.
fn set_keys() {
    static KEYS: Once = Once::new();
    KEYS.call_once(|| {
        // SAFETY: all tests call this before anything else, so the other threads wait in `call_once`.
        unsafe {
            std::env::set_var(STREAM_KEY_VARIABLE, STREAM_KEY);
            std::env::set_var(SECRET_KEY_VARIABLE, SECRET_KEY);
        }
    });
}

fn fast() -> RetryPolicy {
    RetryPolicy { max_tries: 5, base_delay: Duration::from_millis(1), max_delay: Duration::from_millis(5) }
}

fn client(base_url: &str) -> Client {
    set_keys();
    Client::new(&ProviderConfig::new("scripted", base_url)).unwrap().with_policy(fast())
}

fn request() -> Value {
    json!({
        "model": "gpt-test",
        "messages": [{"role": "user", "content": "What is the weather in Paris and in Oslo?"}],
        "tools": [{"type": "function", "function": {"name": "weather", "parameters": {"type": "object"}}}],
        "temperature": 0.25,
    })
}

fn answer() -> Reply {
    Reply::Message {
        content: Some("Let me look that up for both cities, one moment.".into()),
        tool_calls: vec![
            ToolCall::new("call_a", "weather", json!({"city": "Paris", "unit": "celsius"})),
            ToolCall::new("call_b", "weather_report", json!({"city": "Oslo", "days": [1, 2, 3]})),
        ],
    }
}

fn expected_message() -> Value {
    json!({
        "role": "assistant",
        "content": "Let me look that up for both cities, one moment.",
        "tool_calls": [
            {"id": "call_a", "type": "function",
             "function": {"name": "weather", "arguments": "{\"city\":\"Paris\",\"unit\":\"celsius\"}"}},
            {"id": "call_b", "type": "function",
             "function": {"name": "weather_report", "arguments": "{\"city\":\"Oslo\",\"days\":[1,2,3]}"}},
        ],
    })
}

/// Every progress event, as text.
#[derive(Default)]
struct Events {
    texts: Vec<String>,
    tool_calls: Vec<(usize, String)>,
    retries: Vec<(u32, Duration, String)>,
}

impl Events {
    fn record(&mut self) -> impl FnMut(Progress<'_>) + '_ {
        |progress| match progress {
            Progress::Text(text) => self.texts.push(text.to_string()),
            Progress::ToolCall { index, name } => self.tool_calls.push((index, name.to_string())),
            Progress::Retrying { try_number, delay, reason } => self.retries.push((try_number, delay, reason)),
        }
    }
}

fn complete(client: &Client, events: &mut Events) -> Result<Completion, ProviderError> {
    client.complete(&request(), &mut events.record())
}

#[test]
fn a_stream_is_assembled_and_the_request_carries_the_key_and_stream_fields() {
    set_keys();
    let server = ScriptedServer::start(vec![answer()]);
    let mut config = ProviderConfig::new("scripted", &server.base_url());
    config.api_key_env = Some(STREAM_KEY_VARIABLE.into());
    let client = Client::new(&config).unwrap();
    let mut events = Events::default();
    let completion = complete(&client, &mut events).unwrap();

    assert_eq!(completion.message, expected_message());
    assert!(completion.streamed);
    assert_eq!(completion.tries, 1);
    assert_eq!(completion.finish_reason.as_deref(), Some("tool_calls"));
    let usage = &completion.usage;
    let (prompt, answer) = (usage["prompt_tokens"].as_u64().unwrap(), usage["completion_tokens"].as_u64().unwrap());
    assert!(prompt > 0 && answer > 0);
    assert_eq!(usage["total_tokens"].as_u64(), Some(prompt + answer));

    assert!(events.texts.len() > 3, "the content came in pieces: {:?}", events.texts);
    assert_eq!(events.texts.concat(), completion.message["content"].as_str().unwrap());
    assert_eq!(events.tool_calls, [(0, "weather".to_string()), (1, "weather_report".to_string())]);
    assert!(events.retries.is_empty());

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let sent = &requests[0];
    assert_eq!((sent.method.as_str(), sent.path.as_str()), ("POST", "/v1/chat/completions"));
    assert_eq!(sent.header("authorization"), Some(format!("Bearer {STREAM_KEY}").as_str()));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(sent.body["stream"], json!(true));
    assert_eq!(sent.body["stream_options"], json!({"include_usage": true}));
    let mut rest = sent.body.clone();
    let fields = rest.as_object_mut().unwrap();
    fields.remove("stream");
    fields.remove("stream_options");
    assert_eq!(rest, request());
}

#[test]
fn without_streaming_the_same_message_comes_whole_and_no_stream_key_is_sent() {
    let server = ScriptedServer::start(vec![answer()]);
    let mut config = ProviderConfig::new("scripted", &server.base_url());
    config.stream = false;
    let client = Client::new(&config).unwrap();
    let mut events = Events::default();
    let completion = complete(&client, &mut events).unwrap();

    assert_eq!(completion.message, expected_message());
    assert!(!completion.streamed);
    assert_eq!(completion.finish_reason.as_deref(), Some("tool_calls"));
    assert!(completion.usage["total_tokens"].as_u64().unwrap() > 0);
    let sent = &server.requests()[0];
    assert_eq!(sent.body, request(), "sent as is");
    assert_eq!(sent.header("authorization"), None, "no key, no header");
}

#[test]
fn a_provider_that_refuses_streams_is_asked_again_without_and_never_again_with() {
    let server = ScriptedServer::start(vec![Reply::NoStreaming(Box::new(answer())), answer(), answer()]);
    let client = client(&server.base_url());
    let first = complete(&client, &mut Events::default()).unwrap();
    assert_eq!(first.message, expected_message());
    assert!(!first.streamed);
    assert_eq!(first.tries, 2);
    let second = complete(&client, &mut Events::default()).unwrap();
    assert!(!second.streamed);
    assert_eq!(second.tries, 1);

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].body["stream"], json!(true));
    assert_eq!(requests[1].body, request());
    assert_eq!(requests[2].body, request());
}

#[test]
fn an_event_stream_closed_before_any_data_is_asked_again_without_streaming() {
    // llama.cpp's Python server with tools and `tool_choice` auto: 200, then nothing.
    let server = ScriptedServer::start(vec![Reply::RawStream(Vec::new()), answer(), answer()]);
    let client = client(&server.base_url());
    let first = complete(&client, &mut Events::default()).unwrap();
    assert_eq!(first.message, expected_message());
    assert!(!first.streamed);
    let second = complete(&client, &mut Events::default()).unwrap();
    assert!(!second.streamed, "the provider is not asked to stream again");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].body["stream"], json!(true));
    assert_eq!(requests[1].body, request());
    assert_eq!(requests[2].body, request());
}

#[test]
fn a_429_with_retry_after_waits_that_long_and_then_succeeds() {
    let server = ScriptedServer::start(vec![
        Reply::Status { status: 429, message: "Rate limit reached".into(), retry_after: Some(1) },
        Reply::text("at last"),
    ]);
    let client = client(&server.base_url());
    let mut events = Events::default();
    let started = Instant::now();
    let completion = complete(&client, &mut events).unwrap();
    assert!(started.elapsed() >= Duration::from_millis(950), "{:?}", started.elapsed());
    assert_eq!(completion.tries, 2);
    assert_eq!(completion.message["content"], "at last");
    assert_eq!(events.retries.len(), 1);
    let (try_number, delay, reason) = &events.retries[0];
    assert_eq!((*try_number, *delay), (1, Duration::from_secs(1)));
    assert!(reason.contains("429") && reason.contains("Rate limit reached"), "{reason}");
}

#[test]
fn five_503s_exhaust_the_tries_and_a_sixth_reply_stays_unused() {
    let unavailable = || Reply::status(503, "The engine is currently overloaded");
    let server = ScriptedServer::start((0..6).map(|_| unavailable()).collect());
    let client = client(&server.base_url());
    let mut events = Events::default();
    let error = complete(&client, &mut events).unwrap_err();
    let ProviderError::Exhausted { tries, last } = &error else { panic!("{error:?}") };
    assert_eq!(*tries, 5);
    assert!(last.contains("503") && last.contains("overloaded"), "{last}");
    assert!(error.to_string().contains(&server.base_url()), "{error}");
    assert_eq!(server.request_count(), 5);
    assert_eq!(events.retries.iter().map(|r| r.0).collect::<Vec<_>>(), [1, 2, 3, 4]);
    assert!(events.retries.iter().all(|r| r.1 <= Duration::from_millis(5)));
}

#[test]
fn a_401_is_not_retried_and_the_key_is_never_shown() {
    set_keys();
    let server = ScriptedServer::start(vec![
        Reply::status(401, &format!("Incorrect API key provided: {SECRET_KEY}.")),
        Reply::text("unused"),
    ]);
    let mut config = ProviderConfig::new("scripted", &server.base_url());
    config.api_key_env = Some(SECRET_KEY_VARIABLE.into());
    let client = Client::new(&config).unwrap().with_policy(fast());
    let error = complete(&client, &mut Events::default()).unwrap_err();
    assert!(matches!(&error, ProviderError::Unauthorized { status: 401, .. }), "{error:?}");
    assert_eq!(server.request_count(), 1);
    assert_eq!(server.requests()[0].header("authorization"), Some(format!("Bearer {SECRET_KEY}").as_str()));
    let shown = error.to_string();
    assert!(shown.contains("Incorrect API key provided"), "{shown}");
    for text in [shown, format!("{error:?}"), format!("{client:?}")] {
        assert!(!text.contains(SECRET_KEY), "{text}");
        assert!(!text.contains("DO-NOT-PRINT"), "{text}");
    }
}

#[test]
fn another_4xx_is_rejected_at_once_with_the_providers_message() {
    let server = ScriptedServer::start(vec![Reply::status(400, "Invalid value for 'temperature'"), Reply::text("x")]);
    let error = complete(&client(&server.base_url()), &mut Events::default()).unwrap_err();
    assert_eq!(error, ProviderError::Rejected { status: 400, message: "Invalid value for 'temperature'".into() });
    assert!(error.to_string().contains("Invalid value for 'temperature'"));
    assert_eq!(server.request_count(), 1);
}

#[test]
fn a_cut_stream_is_tried_again_and_the_retry_voids_the_text_shown() {
    let server = ScriptedServer::start(vec![Reply::CutStream(Box::new(answer())), answer()]);
    let mut events = Events::default();
    let mut after_retry = String::new();
    let completion = client(&server.base_url())
        .complete(&request(), &mut |progress| {
            if let Progress::Text(text) = &progress {
                after_retry.push_str(text);
            }
            if let Progress::Retrying { .. } = &progress {
                after_retry.clear();
            }
            events.record()(progress);
        })
        .unwrap();
    assert_eq!(completion.message, expected_message());
    assert_eq!(completion.tries, 2);
    assert_eq!(server.request_count(), 2);
    assert_eq!(events.retries.len(), 1);
    assert!(events.retries[0].2.contains("cut"), "{}", events.retries[0].2);
    assert!(!events.texts.is_empty());
    assert_eq!(after_retry, completion.message["content"].as_str().unwrap());
}

#[test]
fn streams_cut_every_time_exhaust_the_tries() {
    let server = ScriptedServer::start((0..5).map(|_| Reply::CutStream(Box::new(answer()))).collect());
    let error = complete(&client(&server.base_url()), &mut Events::default()).unwrap_err();
    let ProviderError::Exhausted { tries: 5, last } = &error else { panic!("{error:?}") };
    assert!(last.contains("cut before `data: [DONE]`"), "{last}");
    assert_eq!(server.request_count(), 5);
}

#[test]
fn a_json_body_cut_short_is_tried_again() {
    let server = ScriptedServer::start(vec![Reply::CutStream(Box::new(answer())), answer()]);
    let mut config = ProviderConfig::new("scripted", &server.base_url());
    config.stream = false;
    let client = Client::new(&config).unwrap().with_policy(fast());
    let completion = complete(&client, &mut Events::default()).unwrap();
    assert_eq!((completion.tries, completion.streamed), (2, false));
    assert_eq!(completion.message, expected_message());
}

#[test]
fn a_malformed_data_line_is_not_retried() {
    let body = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\ndata: {\"choices\": [oops\n\ndata: [DONE]\n\n";
    let server = ScriptedServer::start(vec![Reply::RawStream(body.to_vec()), Reply::text("unused")]);
    let error = complete(&client(&server.base_url()), &mut Events::default()).unwrap_err();
    let ProviderError::Malformed(what) = &error else { panic!("{error:?}") };
    assert!(what.contains("not JSON") && what.contains("[oops"), "{what}");
    assert_eq!(server.request_count(), 1);
}

#[test]
fn an_error_inside_a_stream_is_the_providers_message() {
    let body =
        b"data: {\"error\":{\"message\":\"The model `nope` does not exist\",\"type\":\"invalid_request_error\"}}\n\n";
    let server = ScriptedServer::start(vec![Reply::RawStream(body.to_vec()), Reply::text("unused")]);
    let error = complete(&client(&server.base_url()), &mut Events::default()).unwrap_err();
    assert_eq!(error, ProviderError::Rejected { status: 200, message: "The model `nope` does not exist".into() });
    assert_eq!(server.request_count(), 1);
}

#[test]
fn a_stream_with_comments_crlf_and_no_content_is_an_empty_message() {
    let body = b": ping\r\nevent: message\r\ndata:{\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"},\"finish_reason\":\"stop\"}]}\r\n\r\ndata: [DONE]\r\n\r\n";
    let server = ScriptedServer::start(vec![Reply::RawStream(body.to_vec())]);
    let completion = complete(&client(&server.base_url()), &mut Events::default()).unwrap();
    assert_eq!(completion.message, json!({"role": "assistant", "content": null}));
    assert_eq!(completion.usage, Value::Null);
    assert_eq!(completion.finish_reason.as_deref(), Some("stop"));
}

#[test]
fn a_host_that_refuses_connections_is_reported_quickly_with_its_url() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let base_url = format!("http://127.0.0.1:{port}/v1");
    let mut events = Events::default();
    let started = Instant::now();
    let error = complete(&client(&base_url), &mut events).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    assert!(matches!(error, ProviderError::Unreachable { .. }), "{error:?}");
    let shown = error.to_string();
    assert_eq!(
        shown,
        format!("cannot reach the provider at {base_url}/chat/completions: the host refused the connection (5 tries)")
    );
    assert_eq!(events.retries.len(), 4);
    assert!(events.retries[0].2.starts_with(&base_url), "the retry names the URL: {}", events.retries[0].2);
}

#[test]
fn a_stream_over_16_mib_is_refused() {
    // One data line longer than the limit, and many chunks adding up to more than it.
    let mut one_line = b"data: {\"choices\":[{\"delta\":{\"content\":\"".to_vec();
    one_line.resize(17 * 1024 * 1024, b'a');
    let piece = "b".repeat(64 * 1024);
    let chunk = format!("data: {}\n\n", json!({"choices": [{"index": 0, "delta": {"content": piece}}]}));
    let many_chunks = chunk.repeat(17 * 16).into_bytes();
    let server = ScriptedServer::start(vec![Reply::RawStream(one_line), Reply::RawStream(many_chunks)]);
    let client = client(&server.base_url());
    assert_eq!(complete(&client, &mut Events::default()).unwrap_err(), ProviderError::TooLarge);
    let mut shown = 0usize;
    let error = client
        .complete(&request(), &mut |progress| {
            if let Progress::Text(text) = progress {
                shown += text.len();
            }
        })
        .unwrap_err();
    assert_eq!(error, ProviderError::TooLarge);
    assert!(shown <= little_provider::MAX_RESPONSE_BYTES, "{shown}");
    assert!(shown > 15 * 1024 * 1024, "read up to the limit: {shown}");
    assert_eq!(server.request_count(), 2);
}

#[test]
fn a_whole_answer_over_16_mib_is_refused() {
    let server = ScriptedServer::start(vec![Reply::text(&"x".repeat(17 * 1024 * 1024)), Reply::text("unused")]);
    let mut config = ProviderConfig::new("scripted", &server.base_url());
    config.stream = false;
    let client = Client::new(&config).unwrap().with_policy(fast());
    assert_eq!(complete(&client, &mut Events::default()).unwrap_err(), ProviderError::TooLarge);
    assert_eq!(server.request_count(), 1);
}

#[test]
fn a_slow_provider_times_out() {
    let server = ScriptedServer::start(vec![Reply::Delayed(Duration::from_secs(3), Box::new(Reply::text("late")))]);
    let mut config = ProviderConfig::new("scripted", &server.base_url());
    config.timeout = Duration::from_millis(500);
    let client = Client::new(&config).unwrap().with_policy(RetryPolicy { max_tries: 1, ..fast() });
    let started = Instant::now();
    let error = complete(&client, &mut Events::default()).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    assert_eq!(error, ProviderError::Timeout { after: Duration::from_millis(500) });
    assert!(error.to_string().contains("timed out after 0.5s"), "{error}");
}

#[test]
fn every_try_timing_out_is_a_timeout() {
    let server = ScriptedServer::start(vec![Reply::Stall, Reply::Stall]);
    let mut config = ProviderConfig::new("scripted", &server.base_url());
    config.timeout = Duration::from_millis(300);
    let client = Client::new(&config).unwrap().with_policy(RetryPolicy { max_tries: 2, ..fast() });
    let mut events = Events::default();
    let error = complete(&client, &mut events).unwrap_err();
    assert_eq!(error, ProviderError::Timeout { after: Duration::from_millis(300) });
    assert_eq!(server.request_count(), 2);
    assert!(events.retries[0].2.contains("timed out after 0.3s"), "{:?}", events.retries);
}

#[test]
fn an_unset_key_variable_is_missing_key() {
    let mut config = ProviderConfig::new("openai", "https://api.openai.com/v1");
    config.api_key_env = Some(UNSET_VARIABLE.into());
    let error = Client::new(&config).unwrap_err();
    assert_eq!(error, ProviderError::MissingKey { provider: "openai".into(), variable: UNSET_VARIABLE.into() });
    assert!(error.to_string().contains(UNSET_VARIABLE));
}

/// A one-shot HTTP server that answers whatever comes with these bytes: for answers the scripted provider
/// does not give, as other servers do.
fn raw_server(response: Vec<u8>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let (mut connection, _) = listener.accept().unwrap();
        let mut request = Vec::new();
        let mut buffer = [0; 4096];
        // Head and a small JSON body: read until the body's closing brace.
        while !request.ends_with(b"}") {
            let Ok(read @ 1..) = connection.read(&mut buffer) else { break };
            request.extend_from_slice(&buffer[..read]);
        }
        let _ = connection.write_all(&response);
    });
    format!("http://127.0.0.1:{port}/v1")
}

#[test]
fn a_json_answer_to_a_streaming_request_is_taken_whole() {
    let body = json!({"object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "whole"}, "finish_reason": "stop"}]})
    .to_string();
    let head = format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n", body.len());
    let url = raw_server((head + &body).into_bytes());
    let completion = complete(&client(&url), &mut Events::default()).unwrap();
    assert_eq!(completion.message, json!({"role": "assistant", "content": "whole"}));
    assert!(!completion.streamed);
    assert_eq!(completion.usage, Value::Null);
}

#[test]
fn an_html_page_is_malformed_not_retried() {
    let url = raw_server(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n<html><body>Welcome to nginx!</body></html>"
            .to_vec(),
    );
    let error = complete(&client(&url), &mut Events::default()).unwrap_err();
    assert!(matches!(error, ProviderError::Malformed(_)), "{error:?}");
}

#[test]
fn a_redirect_is_reported_with_where_it_leads() {
    let url = raw_server(
        b"HTTP/1.1 308 Permanent Redirect\r\nLocation: https://example.invalid/v1/chat/completions\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            .to_vec(),
    );
    let error = complete(&client(&url), &mut Events::default()).unwrap_err();
    let ProviderError::Rejected { status: 308, message } = &error else { panic!("{error:?}") };
    assert!(message.contains("https://example.invalid/v1/chat/completions"), "{message}");
}

#[test]
fn one_client_serves_several_threads() {
    fn shareable<T: Send + Sync>(_: &T) {}
    let server = ScriptedServer::with_handler(|number, _| Reply::text(&format!("answer {number}")));
    let client = client(&server.base_url());
    shareable(&client);
    let mut contents: Vec<String> = std::thread::scope(|scope| {
        let calls: Vec<_> = (0..4)
            .map(|_| scope.spawn(|| complete(&client, &mut Events::default()).unwrap().message["content"].clone()))
            .collect();
        calls.into_iter().map(|call| call.join().unwrap().as_str().unwrap().to_string()).collect()
    });
    contents.sort();
    assert_eq!(contents, ["answer 0", "answer 1", "answer 2", "answer 3"]);
}

/// The peak memory of a process that refuses two 64 MiB streams (one line, and many chunks) stays near one
/// limit's worth: it runs as a child of this test so that nothing else in it counts.
#[cfg(target_os = "linux")]
#[test]
fn refusing_a_huge_stream_holds_at_most_the_limit() {
    const CHILD_URL: &str = "LITTLE_PROVIDER_TEST_MEMORY_CHILD_URL";
    if let Ok(url) = std::env::var(CHILD_URL) {
        let client = Client::new(&ProviderConfig::new("scripted", &url)).unwrap().with_policy(fast());
        for _ in 0..2 {
            assert_eq!(client.complete(&request(), &mut |_| {}).unwrap_err(), ProviderError::TooLarge);
        }
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let peak = status.lines().find_map(|line| line.strip_prefix("VmHWM:")).unwrap();
        println!("PEAK {}", peak.trim().trim_end_matches("kB").trim());
        return;
    }
    let huge = 64 * 1024 * 1024;
    let mut one_line = b"data: {\"choices\":[{\"delta\":{\"content\":\"".to_vec();
    one_line.resize(huge, b'a');
    let chunk = format!("data: {}\n\n", json!({"choices": [{"index": 0, "delta": {"content": "b".repeat(65536)}}]}));
    let many_chunks = chunk.repeat(huge / chunk.len()).into_bytes();
    let server = ScriptedServer::start(vec![Reply::RawStream(one_line), Reply::RawStream(many_chunks)]);
    let test_name = "refusing_a_huge_stream_holds_at_most_the_limit";
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([test_name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_URL, server.base_url())
        .output()
        .unwrap();
    let output = String::from_utf8_lossy(&child.stdout);
    assert!(child.status.success(), "{output}{}", String::from_utf8_lossy(&child.stderr));
    let peak_kib: usize = output.lines().find_map(|line| line.split("PEAK ").nth(1)).unwrap().parse().unwrap();
    assert_eq!(server.request_count(), 2);
    // A client that held a whole 64 MiB body, or the limit twice over, would pass 48 MiB.
    assert!(peak_kib < 48 * 1024, "peak {peak_kib} KiB");
    println!("the child's peak: {peak_kib} KiB");
}

/// A cancelled call ends at once, its connection shut down rather than left to the timeout,
/// and the client makes no call after it.
#[test]
fn a_cancelled_call_ends_at_once_and_the_client_stays_cancelled() {
    let server = ScriptedServer::start(vec![Reply::Stall, answer()]);
    let mut config = ProviderConfig::new("scripted", &server.base_url());
    config.timeout = Duration::from_secs(60);
    let client = Client::with_key(&config, Some("sk-given-as-a-value-123".into())).with_policy(fast());
    let canceller = client.canceller();
    let began = Instant::now();
    std::thread::scope(|scope| {
        let call = scope.spawn(|| client.complete(&request(), &mut |_| {}));
        assert!(server.wait_for_requests(1, Duration::from_secs(10)), "the call reached the server");
        canceller.cancel();
        assert_eq!(call.join().unwrap(), Err(ProviderError::Cancelled));
    });
    assert!(began.elapsed() < Duration::from_secs(30), "ended by the cancel, not the timeout");
    assert_eq!(client.complete(&request(), &mut |_| {}), Err(ProviderError::Cancelled));
    assert_eq!(server.request_count(), 1, "nothing is sent after the cancel");
    let sent = &server.requests()[0];
    assert_eq!(sent.header("authorization"), Some("Bearer sk-given-as-a-value-123"));
}
