//! Newline-delimited JSON-RPC over a pair of byte streams (stdio, or a child's pipes), for
//! either side. The SDK's own stdio transport drops a line it cannot parse without a word
//! and waits on tokio's blocking pool for each read; this one answers a line that is not
//! JSON, too deep or too long with a JSON-RPC error (carrying the request's id when it can
//! be found), and reads and writes on two plain threads.

use std::io::{BufRead, BufReader, Read, Write};
use std::marker::PhantomData;

use rmcp::service::{RxJsonRpcMessage, ServiceRole, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};

/// JSON-RPC's codes for a line that is not JSON, and for JSON that is not a request.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;

/// One side of a connection: messages read by a thread from `read`, written by another to
/// `write`.
pub struct Lines<R: ServiceRole> {
    incoming: tokio::sync::mpsc::UnboundedReceiver<RxJsonRpcMessage<R>>,
    outgoing: std::sync::mpsc::Sender<Vec<u8>>,
    _role: PhantomData<fn() -> R>,
}

impl<R: ServiceRole> Lines<R> {
    /// Starts the two threads. A line longer than `max_line` bytes, or not a message, is
    /// a fault, handled as `on_fault` says.
    pub fn new(
        read: impl Read + Send + 'static,
        write: impl Write + Send + 'static,
        max_line: usize,
        on_fault: OnFault,
    ) -> Lines<R> {
        let (outgoing, to_write) = std::sync::mpsc::channel::<Vec<u8>>();
        let (deliver, incoming) = tokio::sync::mpsc::unbounded_channel();
        std::thread::spawn(move || write_lines(write, to_write));
        let on_fault = match on_fault {
            OnFault::Answer => Fault::Answer(outgoing.clone()),
            OnFault::Stop(seen) => Fault::Stop(seen),
        };
        std::thread::spawn(move || read_lines::<R>(read, max_line, deliver, on_fault));
        Lines { incoming, outgoing, _role: PhantomData }
    }
}

/// What a faulty line does.
pub enum OnFault {
    /// A server's duty: answer it with a JSON-RPC error and read on.
    Answer,
    /// A client's choice: stop reading a peer that does not speak MCP, keeping what it said.
    Stop(std::sync::Arc<std::sync::Mutex<Option<String>>>),
}

enum Fault {
    Answer(std::sync::mpsc::Sender<Vec<u8>>),
    Stop(std::sync::Arc<std::sync::Mutex<Option<String>>>),
}

fn write_lines(mut write: impl Write, lines: std::sync::mpsc::Receiver<Vec<u8>>) {
    while let Ok(line) = lines.recv() {
        if write.write_all(&line).and_then(|()| write.flush()).is_err() {
            return;
        }
    }
}

fn read_lines<R: ServiceRole>(
    read: impl Read,
    max_line: usize,
    deliver: tokio::sync::mpsc::UnboundedSender<RxJsonRpcMessage<R>>,
    on_fault: Fault,
) {
    let mut read = BufReader::with_capacity(1 << 16, read);
    let mut line = Vec::new();
    loop {
        line.clear();
        let (complete, too_long) = match read_line(&mut read, &mut line, max_line) {
            Ok(read) => read,
            Err(_) => return,
        };
        if !complete && line.is_empty() && !too_long {
            return;
        }
        let fault = if too_long {
            Some((PARSE_ERROR, format!("the message is longer than {max_line} bytes, the limit"), None))
        } else {
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<RxJsonRpcMessage<R>>(text) {
                Ok(message) => {
                    if deliver.send(message).is_err() {
                        return;
                    }
                    None
                }
                Err(e) => Some(fault_of(text, &e)),
            }
        };
        match (fault, &on_fault) {
            (None, _) => {}
            (Some((code, message, id)), Fault::Answer(answers)) => {
                let answer = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } });
                let mut bytes = serde_json::to_vec(&answer).expect("JSON values serialize");
                bytes.push(b'\n');
                if answers.send(bytes).is_err() {
                    return;
                }
            }
            (Some((_, message, _)), Fault::Stop(seen)) => {
                let shown: String = String::from_utf8_lossy(&line).chars().take(200).collect();
                *seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner) =
                    Some(format!("{message}: `{}`", shown.trim_end()));
                return;
            }
        }
        if !complete {
            return;
        }
    }
}

/// Reads up to and including the next `\n` into `line`, keeping at most `max_line` bytes:
/// (whether a `\n` ended it, whether it was longer than `max_line`).
fn read_line(read: &mut impl BufRead, line: &mut Vec<u8>, max_line: usize) -> std::io::Result<(bool, bool)> {
    let mut too_long = false;
    loop {
        let buffer = read.fill_buf()?;
        if buffer.is_empty() {
            return Ok((false, too_long));
        }
        let (taken, ended) = match memchr(buffer) {
            Some(at) => (at + 1, true),
            None => (buffer.len(), false),
        };
        if !too_long && line.len() + taken > max_line {
            too_long = true;
            *line = Vec::new();
        }
        if !too_long {
            line.extend_from_slice(&buffer[..taken]);
        }
        read.consume(taken);
        if ended {
            return Ok((true, too_long));
        }
    }
}

fn memchr(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

/// The error a faulty line gets: not JSON (or nested deeper than serde reads) is a parse
/// error, JSON that is no message an invalid request; with the line's top-level `id` when
/// it has one, so that the caller's request is answered rather than left waiting.
fn fault_of(text: &[u8], error: &serde_json::Error) -> (i64, String, Option<Value>) {
    let id = top_level_id(text);
    match error.classify() {
        serde_json::error::Category::Data => {
            (INVALID_REQUEST, format!("the message is not a JSON-RPC request little understands: {error}"), id)
        }
        _ => (PARSE_ERROR, format!("the message is not JSON little can read: {error}"), id),
    }
}

/// The value of the `id` member of the top-level object in `text`, when it is a number or
/// a string, found by a scan that keeps only the depth (so any nesting is read without
/// recursion).
fn top_level_id(text: &[u8]) -> Option<Value> {
    let mut depth = 0usize;
    let mut i = 0;
    let mut expect_key = false;
    while i < text.len() {
        match text[i] {
            b'"' => {
                let end = string_end(text, i)?;
                if depth == 1 && expect_key {
                    let key = &text[i + 1..end];
                    let mut j = skip_space(text, end + 1);
                    if text.get(j) != Some(&b':') {
                        return None;
                    }
                    j = skip_space(text, j + 1);
                    if key == b"id" {
                        return id_at(text, j);
                    }
                    expect_key = false;
                    i = j;
                    continue;
                }
                i = end + 1;
                continue;
            }
            b'{' => {
                depth += 1;
                expect_key = depth == 1;
            }
            b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b',' if depth == 1 => expect_key = true,
            _ => {}
        }
        i += 1;
    }
    None
}

fn skip_space(text: &[u8], mut i: usize) -> usize {
    while text.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// The index of the quote that closes the string opening at `start`.
fn string_end(text: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < text.len() {
        match text[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

fn id_at(text: &[u8], at: usize) -> Option<Value> {
    let end = match text.get(at)? {
        b'"' => string_end(text, at)? + 1,
        b'-' | b'0'..=b'9' => {
            at + text[at..].iter().take_while(|b| matches!(b, b'-' | b'0'..=b'9' | b'.' | b'e' | b'E' | b'+')).count()
        }
        _ => return None,
    };
    serde_json::from_slice(&text[at..end]).ok()
}

impl<R: ServiceRole> Transport<R> for Lines<R> {
    type Error = std::io::Error;

    fn send(&mut self, item: TxJsonRpcMessage<R>) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let sent = serde_json::to_vec(&item).map_err(std::io::Error::other).and_then(|mut bytes| {
            bytes.push(b'\n');
            self.outgoing
                .send(bytes)
                .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the peer is gone"))
        });
        std::future::ready(sent)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<R>>> + Send {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.incoming.close();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_top_level_id_is_found_past_any_nesting() {
        let deep = format!(
            r#"{{"jsonrpc":"2.0","params":{{"x":{}{}}},"id":7,"method":"tools/call"}}"#,
            "[".repeat(200_000),
            "]".repeat(200_000)
        );
        assert_eq!(top_level_id(deep.as_bytes()), Some(json!(7)));
        assert_eq!(top_level_id(br#"{"a":{"id":1},"id":"r-2"}"#), Some(json!("r-2")));
        assert_eq!(top_level_id(br#"{"a":"\"id\":3"}"#), None);
        assert_eq!(top_level_id(b"not json"), None);
    }

    #[test]
    fn a_line_over_the_limit_is_skipped_whole() {
        let mut input = std::io::Cursor::new(b"0123456789\nok\n".to_vec());
        let mut line = Vec::new();
        assert_eq!(read_line(&mut input, &mut line, 4).unwrap(), (true, true));
        line.clear();
        assert_eq!(read_line(&mut input, &mut line, 4).unwrap(), (true, false));
        assert_eq!(line, b"ok\n");
    }
}
