//! A scripted provider for tests and benchmarks: the real protocol over HTTP/1.1 on a real 127.0.0.1 socket, std only.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// What the server answers to one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// An assistant message; served as SSE chunks (content in pieces of ~7 characters, longer for long content so
    /// that no message takes more than ~1000 chunks; each tool call's arguments in 3 or more pieces keyed by index;
    /// a usage chunk when the request asks for it with `stream_options.include_usage`; then `data: [DONE]`) when
    /// the request has `"stream": true`, else as one `chat.completion` JSON. Usage is made up but deterministic:
    /// prompt tokens = request JSON bytes / 4, completion tokens = message bytes / 4 + 1.
    Message { content: Option<String>, tool_calls: Vec<ToolCall> },
    /// An HTTP status with an OpenAI-style error body `{"error":{"message", "type"}}`, and an optional Retry-After
    /// header (seconds).
    Status { status: u16, message: String, retry_after: Option<u64> },
    /// Start the answer of `Message` (headers and its first chunks; for a request that does not stream, the first
    /// half of its JSON under the whole body's Content-Length) and close the connection in the middle of a line.
    /// Any other reply inside stands for an empty message.
    CutStream(Box<Reply>),
    /// A raw stream body of your choosing: these bytes after the SSE headers, then the connection closes.
    RawStream(Vec<u8>),
    /// Never answer: hold the connection open until the client goes away or the server is dropped.
    Stall,
    /// Answer the reply after the delay (no answer if the server is dropped first).
    Delayed(Duration, Box<Reply>),
    /// Refuse a streaming request with 400 `{"error":{"message":"stream is not supported"}}`; a non-streaming one
    /// gets the reply.
    NoStreaming(Box<Reply>),
}

impl Reply {
    /// A message with this text and no tool calls.
    pub fn text(content: &str) -> Reply {
        Reply::Message { content: Some(content.to_string()), tool_calls: Vec::new() }
    }

    /// A message with tool calls and no text.
    pub fn tool_calls(tool_calls: Vec<ToolCall>) -> Reply {
        Reply::Message { content: None, tool_calls }
    }

    /// An error status without Retry-After.
    pub fn status(status: u16, message: &str) -> Reply {
        Reply::Status { status, message: message.to_string(), retry_after: None }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

impl ToolCall {
    /// A tool call whose arguments are the JSON text of `arguments`.
    pub fn new(id: &str, name: &str, arguments: Value) -> ToolCall {
        ToolCall { id: id.to_string(), name: name.to_string(), arguments: arguments.to_string() }
    }
}

/// One request as the server read it.
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded {
    pub method: String,
    /// The request target as sent, query included.
    pub path: String,
    /// In the order sent; names lowercased.
    pub headers: Vec<(String, String)>,
    /// Null when the body is not JSON.
    pub body: Value,
}

impl Recorded {
    /// The first header of this name (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, value)| value.as_str())
    }

    /// Whether the request asks for a stream.
    pub fn streams(&self) -> bool {
        self.body.get("stream") == Some(&Value::Bool(true))
    }
}

type Handler = dyn Fn(usize, &Recorded) -> Reply + Send + Sync;

struct Shared {
    handler: Box<Handler>,
    requests: Mutex<Vec<Recorded>>,
    arrived: Condvar,
    stopping: AtomicBool,
}

/// A provider on `127.0.0.1:PORT` that answers each chat completions request from a script or a handler.
/// One thread per connection, `Connection: close` after each answer. Only `POST …/chat/completions` is served
/// (and recorded); anything else gets 404.
pub struct ScriptedServer {
    address: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

const MAX_HEAD_BYTES: usize = 64 * 1024;
const MAX_BODY_BYTES: usize = 256 * 1024 * 1024;
/// How often a stalled or delayed connection looks whether the server is being dropped.
const POLL: Duration = Duration::from_millis(20);

impl ScriptedServer {
    /// Serves the replies in order, one per request; a request past the end of the script gets
    /// 500 `{"error":{"message":"the script has no reply for request N"}}` (N counted from 1).
    pub fn start(script: Vec<Reply>) -> ScriptedServer {
        let script = Mutex::new(script.into_iter().map(Some).collect::<Vec<_>>());
        ScriptedServer::with_handler(move |number, _| {
            let mut replies = lock(&script);
            let count = replies.len();
            match replies.get_mut(number).and_then(Option::take) {
                Some(reply) => reply,
                None => Reply::status(
                    500,
                    &format!("the script has no reply for request {} (it has {count} replies)", number + 1),
                ),
            }
        })
    }

    /// Replies computed from each request, numbered from 0 (for long or content-dependent sessions).
    pub fn with_handler(handler: impl Fn(usize, &Recorded) -> Reply + Send + Sync + 'static) -> ScriptedServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("the scripted provider cannot bind 127.0.0.1:0");
        let address = listener.local_addr().expect("a bound listener has an address");
        let shared = Arc::new(Shared {
            handler: Box::new(handler),
            requests: Mutex::new(Vec::new()),
            arrived: Condvar::new(),
            stopping: AtomicBool::new(false),
        });
        let acceptor_shared = Arc::clone(&shared);
        let acceptor = std::thread::Builder::new()
            .name("scripted-provider".into())
            .spawn(move || accept(&listener, &acceptor_shared))
            .expect("the scripted provider cannot start its thread");
        ScriptedServer { address, shared, acceptor: Some(acceptor) }
    }

    /// `http://127.0.0.1:PORT/v1`
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.address.port())
    }

    pub fn port(&self) -> u16 {
        self.address.port()
    }

    /// Every chat completions request received so far, in order (recorded as soon as its body is read).
    pub fn requests(&self) -> Vec<Recorded> {
        lock(&self.shared.requests).clone()
    }

    pub fn request_count(&self) -> usize {
        lock(&self.shared.requests).len()
    }

    /// Blocks until at least `n` requests have arrived or the timeout passes; returns whether they did.
    pub fn wait_for_requests(&self, n: usize, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut requests = lock(&self.shared.requests);
        while requests.len() < n {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            requests = self.shared.arrived.wait_timeout(requests, left).unwrap_or_else(PoisonError::into_inner).0;
        }
        true
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        self.shared.arrived.notify_all();
        // The acceptor blocks in accept(): one connection of our own wakes it to see `stopping`. Should that
        // connection fail, the thread is left behind rather than joined forever.
        let woken = TcpStream::connect_timeout(&self.address, Duration::from_secs(1)).is_ok();
        if let Some(acceptor) = self.acceptor.take()
            && woken
        {
            let _ = acceptor.join();
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn accept(listener: &TcpListener, shared: &Arc<Shared>) {
    for connection in listener.incoming() {
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(connection) = connection else {
            // Out of descriptors or similar: let the moment pass instead of spinning.
            std::thread::sleep(POLL);
            continue;
        };
        let shared = Arc::clone(shared);
        // A thread that cannot start drops the connection, which the client sees as a broken one.
        let _ = std::thread::Builder::new().name("scripted-connection".into()).spawn(move || {
            let _ = serve(connection, &shared);
        });
    }
}

fn serve(mut connection: TcpStream, shared: &Shared) -> io::Result<()> {
    // A client that never finishes its request must not hold the thread forever.
    connection.set_read_timeout(Some(Duration::from_secs(30)))?;
    let request = read_request(&mut connection)?;
    let route = request.path.split('?').next().unwrap_or("");
    if request.method != "POST" || !route.ends_with("/chat/completions") {
        let body = json!({"error": {"message": format!("no route for {} {}", request.method, request.path),
            "type": "not_found_error"}});
        return write_json(&mut connection, 404, &body, None);
    }
    let number = {
        let mut requests = lock(&shared.requests);
        requests.push(request.clone());
        requests.len() - 1
    };
    shared.arrived.notify_all();
    let reply = catch_unwind(AssertUnwindSafe(|| (shared.handler)(number, &request)))
        .unwrap_or_else(|_| Reply::status(500, "the scripted provider's handler panicked"));
    write_reply(&mut connection, reply, &request, number, shared)?;
    connection.flush()?;
    let _ = connection.shutdown(Shutdown::Write);
    Ok(())
}

fn read_request(connection: &mut TcpStream) -> io::Result<Recorded> {
    let mut reader = BufReader::new(connection.try_clone()?);
    let mut head_bytes = 0;
    let mut next_line = |reader: &mut BufReader<TcpStream>| -> io::Result<String> {
        let mut line = Vec::new();
        let read = reader.by_ref().take((MAX_HEAD_BYTES - head_bytes) as u64).read_until(b'\n', &mut line)?;
        head_bytes += read;
        if read == 0 || !line.ends_with(b"\n") {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "the request head ended early or is too long"));
        }
        Ok(String::from_utf8_lossy(&line).trim_end_matches(['\r', '\n']).to_string())
    };
    let request_line = next_line(&mut reader)?;
    let mut words = request_line.split_whitespace();
    let (Some(method), Some(path)) = (words.next(), words.next()) else {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "not an HTTP request line"));
    };
    let (method, path) = (method.to_string(), path.to_string());
    let mut headers = Vec::new();
    loop {
        let line = next_line(&mut reader)?;
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
    }
    let mut recorded = Recorded { method, path, headers, body: Value::Null };
    if recorded.header("expect").is_some_and(|e| e.eq_ignore_ascii_case("100-continue")) {
        connection.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
    }
    let body = if recorded.header("transfer-encoding").is_some_and(|t| t.to_ascii_lowercase().contains("chunked")) {
        read_chunked(&mut reader)?
    } else {
        let length = recorded.header("content-length").and_then(|n| n.parse::<usize>().ok()).unwrap_or(0);
        if length > MAX_BODY_BYTES {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "request body too large"));
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        body
    };
    recorded.body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    Ok(recorded)
}

fn read_chunked(reader: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut size_line = String::new();
        reader.by_ref().take(1024).read_line(&mut size_line)?;
        let size = size_line.trim().split(';').next().unwrap_or("");
        let size = usize::from_str_radix(size, 16)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "bad chunk size"))?;
        if body.len() + size > MAX_BODY_BYTES {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "request body too large"));
        }
        if size == 0 {
            // Trailers, then the blank line.
            loop {
                let mut trailer = String::new();
                if reader.by_ref().take(MAX_HEAD_BYTES as u64).read_line(&mut trailer)? == 0
                    || trailer.trim().is_empty()
                {
                    return Ok(body);
                }
            }
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..])?;
        let mut crlf = [0; 2];
        reader.read_exact(&mut crlf)?;
    }
}

fn write_reply(
    connection: &mut TcpStream,
    reply: Reply,
    request: &Recorded,
    number: usize,
    shared: &Shared,
) -> io::Result<()> {
    match reply {
        Reply::Message { content, tool_calls } => {
            if request.streams() {
                write_event_stream_head(connection)?;
                for chunk in message_chunks(content.as_deref(), &tool_calls, request, number) {
                    write_event(connection, &chunk)?;
                }
                connection.write_all(b"data: [DONE]\n\n")
            } else {
                write_json(connection, 200, &completion(content.as_deref(), &tool_calls, request, number), None)
            }
        }
        Reply::Status { status, message, retry_after } => {
            let body = json!({"error": {"message": message, "type": error_type(status), "code": Value::Null}});
            write_json(connection, status, &body, retry_after)
        }
        Reply::CutStream(inner) => {
            let (content, tool_calls) = match *inner {
                Reply::Message { content, tool_calls } => (content, tool_calls),
                _ => (Some(String::new()), Vec::new()),
            };
            write_cut(connection, content.as_deref(), &tool_calls, request, number)
        }
        Reply::RawStream(bytes) => {
            write_event_stream_head(connection)?;
            connection.write_all(&bytes)
        }
        Reply::Stall => {
            stall(connection, shared);
            Ok(())
        }
        Reply::Delayed(delay, inner) => {
            if wait(delay, shared) {
                write_reply(connection, *inner, request, number, shared)
            } else {
                Ok(())
            }
        }
        Reply::NoStreaming(inner) => {
            if request.streams() {
                let body = json!({"error": {"message": "stream is not supported", "type": "invalid_request_error",
                    "param": "stream", "code": Value::Null}});
                write_json(connection, 400, &body, None)
            } else {
                write_reply(connection, *inner, request, number, shared)
            }
        }
    }
}

/// Sleeps `delay` in steps; false when the server is being dropped meanwhile.
fn wait(delay: Duration, shared: &Shared) -> bool {
    let deadline = Instant::now() + delay;
    loop {
        if shared.stopping.load(Ordering::SeqCst) {
            return false;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return true;
        }
        std::thread::sleep(left.min(POLL));
    }
}

/// Holds the connection, reading and dropping whatever comes, until the client closes it or the server stops.
fn stall(connection: &mut TcpStream, shared: &Shared) {
    if connection.set_read_timeout(Some(POLL)).is_err() {
        return;
    }
    let mut sink = [0u8; 1024];
    while !shared.stopping.load(Ordering::SeqCst) {
        match connection.read(&mut sink) {
            Ok(0) => return,
            Ok(_) => {}
            Err(error) if matches!(error.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {}
            Err(_) => return,
        }
    }
}

fn write_cut(
    connection: &mut TcpStream,
    content: Option<&str>,
    tool_calls: &[ToolCall],
    request: &Recorded,
    number: usize,
) -> io::Result<()> {
    if request.streams() {
        write_event_stream_head(connection)?;
        let chunks = message_chunks(content, tool_calls, request, number);
        // The first chunks whole (at least the role chunk), then half of the next line.
        let whole = (chunks.len() / 2).max(1);
        for chunk in &chunks[..whole] {
            write_event(connection, chunk)?;
        }
        let next = chunks.get(whole).map_or_else(|| "{\"choices\":[]}".to_string(), Value::to_string);
        let line = format!("data: {next}");
        connection.write_all(&line.as_bytes()[..line.len() / 2])
    } else {
        let body = completion(content, tool_calls, request, number).to_string();
        write_head(connection, 200, "application/json", Some(body.len()), None)?;
        connection.write_all(&body.as_bytes()[..body.len() / 2])
    }
}

fn write_head(
    connection: &mut TcpStream,
    status: u16,
    content_type: &str,
    content_length: Option<usize>,
    retry_after: Option<u64>,
) -> io::Result<()> {
    let mut head = format!("HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\n", reason_phrase(status));
    if let Some(length) = content_length {
        head.push_str(&format!("Content-Length: {length}\r\n"));
    }
    if let Some(seconds) = retry_after {
        head.push_str(&format!("Retry-After: {seconds}\r\n"));
    }
    head.push_str("Cache-Control: no-cache\r\nConnection: close\r\n\r\n");
    connection.write_all(head.as_bytes())
}

/// A stream's body ends when the connection closes, as it does for every answer here.
fn write_event_stream_head(connection: &mut TcpStream) -> io::Result<()> {
    write_head(connection, 200, "text/event-stream", None, None)
}

fn write_event(connection: &mut TcpStream, chunk: &Value) -> io::Result<()> {
    connection.write_all(format!("data: {chunk}\n\n").as_bytes())
}

fn write_json(connection: &mut TcpStream, status: u16, body: &Value, retry_after: Option<u64>) -> io::Result<()> {
    let text = body.to_string();
    write_head(connection, status, "application/json", Some(text.len()), retry_after)?;
    connection.write_all(text.as_bytes())
}

fn model_of(request: &Recorded) -> Value {
    request.body.get("model").filter(|model| model.is_string()).cloned().unwrap_or_else(|| json!("scripted"))
}

fn usage(content: Option<&str>, tool_calls: &[ToolCall], request: &Recorded) -> Value {
    let prompt = request.body.to_string().len() / 4;
    let message_bytes = content.map_or(0, str::len)
        + tool_calls.iter().map(|call| call.name.len() + call.arguments.len()).sum::<usize>();
    let completion = message_bytes / 4 + 1;
    json!({"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion})
}

fn finish_reason(tool_calls: &[ToolCall]) -> &'static str {
    if tool_calls.is_empty() { "stop" } else { "tool_calls" }
}

fn completion(content: Option<&str>, tool_calls: &[ToolCall], request: &Recorded, number: usize) -> Value {
    let mut message = json!({"role": "assistant", "content": content});
    if !tool_calls.is_empty() {
        message["tool_calls"] = tool_calls
            .iter()
            .map(|call| {
                json!({"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}})
            })
            .collect();
    }
    json!({
        "id": format!("chatcmpl-scripted-{number}"),
        "object": "chat.completion",
        "created": 1_700_000_000 + number,
        "model": model_of(request),
        "choices": [{"index": 0, "message": message, "logprobs": Value::Null, "finish_reason": finish_reason(tool_calls)}],
        "usage": usage(content, tool_calls, request),
    })
}

/// The `chat.completion.chunk`s of a message, as OpenAI sends them (without the final `[DONE]`).
fn message_chunks(content: Option<&str>, tool_calls: &[ToolCall], request: &Recorded, number: usize) -> Vec<Value> {
    let id = format!("chatcmpl-scripted-{number}");
    let model = model_of(request);
    let chunk = |delta: Value, finish: Option<&str>| {
        json!({
            "id": id, "object": "chat.completion.chunk", "created": 1_700_000_000 + number, "model": model,
            "choices": [{"index": 0, "delta": delta, "logprobs": Value::Null, "finish_reason": finish}],
        })
    };
    let mut chunks = vec![chunk(json!({"role": "assistant", "content": content.map(|_| "")}), None)];
    for piece in pieces(content.unwrap_or(""), 1) {
        if !piece.is_empty() {
            chunks.push(chunk(json!({"content": piece}), None));
        }
    }
    for (index, call) in tool_calls.iter().enumerate() {
        chunks.push(chunk(
            json!({"tool_calls": [{"index": index, "id": call.id, "type": "function",
                "function": {"name": call.name, "arguments": ""}}]}),
            None,
        ));
        for piece in pieces(&call.arguments, 3) {
            chunks.push(chunk(json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}), None));
        }
    }
    chunks.push(chunk(json!({}), Some(finish_reason(tool_calls))));
    let include_usage = request.body.pointer("/stream_options/include_usage") == Some(&Value::Bool(true));
    if include_usage {
        chunks.push(json!({
            "id": id, "object": "chat.completion.chunk", "created": 1_700_000_000 + number, "model": model,
            "choices": [], "usage": usage(content, tool_calls, request),
        }));
    }
    chunks
}

/// `text` cut at character boundaries into at least `at_least` pieces of ~7 characters (longer for long
/// texts, so that a text never takes more than ~1000 pieces).
fn pieces(text: &str, at_least: usize) -> Vec<&str> {
    let boundaries: Vec<usize> = text.char_indices().map(|(at, _)| at).chain([text.len()]).collect();
    let characters = boundaries.len() - 1;
    let piece_length = (characters / 1000 + 1).max(7);
    let count = characters.div_ceil(piece_length).max(at_least).max(1);
    (0..count)
        .map(|i| {
            let start = boundaries[characters * i / count];
            let end = boundaries[characters * (i + 1) / count];
            &text[start..end]
        })
        .collect()
}

fn error_type(status: u16) -> &'static str {
    match status {
        401 | 403 => "authentication_error",
        404 => "not_found_error",
        429 => "rate_limit_error",
        500..=599 => "server_error",
        _ => "invalid_request_error",
    }
}

fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        301 => "Moved Permanently",
        302 => "Found",
        307 => "Temporary Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Payload Too Large",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cover_the_text() {
        assert_eq!(pieces("abcdefghij", 1), ["abcde", "fghij"]);
        assert_eq!(pieces("{}", 3), ["", "{", "}"]);
        assert_eq!(pieces("", 1), [""]);
        let long = "é".repeat(70_000);
        let cut = pieces(&long, 1);
        assert!(cut.len() <= 1000, "{}", cut.len());
        assert_eq!(cut.concat(), long);
    }
}
