//! The wire: messages from the client in, and out either messages or answers whose result
//! is JSON text already. A 10,000-node outline is 4.6 MB of JSON; built as a serde_json
//! `Value` it is 140,000 maps to allocate and free, ten times the cost of writing it out
//! straight from the LSP types, so answers skip the `Value`.

use std::io::{self, BufWriter, Write};
use std::thread;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, bounded, unbounded};
use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response};
use serde_json::value::RawValue;

/// What the server sends.
#[derive(Debug)]
pub enum Outgoing {
    Message(Message),
    /// A successful response whose result was serialized once, from the LSP types.
    Answer {
        id: RequestId,
        result: Box<RawValue>,
    },
}

impl From<Message> for Outgoing {
    fn from(message: Message) -> Outgoing {
        Outgoing::Message(message)
    }
}

impl From<Response> for Outgoing {
    fn from(response: Response) -> Outgoing {
        Outgoing::Message(response.into())
    }
}

impl From<Notification> for Outgoing {
    fn from(notification: Notification) -> Outgoing {
        Outgoing::Message(notification.into())
    }
}

impl From<Request> for Outgoing {
    fn from(request: Request) -> Outgoing {
        Outgoing::Message(request.into())
    }
}

impl Outgoing {
    /// Writes it as the base protocol frames a message: a `Content-Length` header, then the
    /// JSON-RPC text.
    pub fn write(&self, out: &mut impl Write) -> io::Result<()> {
        match self {
            Outgoing::Message(message) => message.write(out),
            Outgoing::Answer { id, result } => {
                #[derive(serde::Serialize)]
                struct Answer<'a> {
                    jsonrpc: &'static str,
                    id: &'a RequestId,
                    result: &'a RawValue,
                }
                let text = serde_json::to_string(&Answer { jsonrpc: "2.0", id, result })?;
                write!(out, "Content-Length: {}\r\n\r\n", text.len())?;
                out.write_all(text.as_bytes())?;
                out.flush()
            }
        }
    }

    /// As a message, for a client in the same process (the tests').
    pub fn into_message(self) -> Message {
        match self {
            Outgoing::Message(message) => message,
            Outgoing::Answer { id, result } => {
                let value = serde_json::from_str(result.get()).expect("an answer's result is JSON");
                Response { id, result: Some(value), error: None }.into()
            }
        }
    }
}

/// The server's end of a connection.
pub struct Connection {
    pub sender: Sender<Outgoing>,
    pub receiver: Receiver<Message>,
}

/// A client's end of a connection in the same process.
pub struct ClientEnd {
    pub sender: Sender<Message>,
    pub receiver: Receiver<Outgoing>,
}

/// The threads that read stdin and write stdout.
pub struct IoThreads {
    reader: thread::JoinHandle<io::Result<()>>,
    writer: thread::JoinHandle<io::Result<()>>,
}

impl IoThreads {
    pub fn join(self) -> io::Result<()> {
        self.reader.join().map_err(|_| io::Error::other("the reader panicked"))??;
        self.writer.join().map_err(|_| io::Error::other("the writer panicked"))?
    }
}

impl Connection {
    /// Over stdin and stdout. What was written is dropped on a thread of its own, so a
    /// large message's freeing does not delay the next.
    pub fn stdio() -> (Connection, IoThreads) {
        let (writer_sender, writer_receiver) = bounded::<Outgoing>(0);
        let (drop_sender, drop_receiver) = unbounded::<Outgoing>();
        let writer = thread::Builder::new()
            .name("little-lsp-writer".into())
            .spawn(move || {
                let dropper = thread::spawn(move || drop_receiver.into_iter().for_each(drop));
                let mut stdout = BufWriter::new(io::stdout().lock());
                let written = writer_receiver.into_iter().try_for_each(|outgoing| {
                    let written = outgoing.write(&mut stdout);
                    let _ = drop_sender.send(outgoing);
                    written
                });
                drop(drop_sender);
                let _ = dropper.join();
                written
            })
            .expect("a thread starts");
        let (reader_sender, reader_receiver) = bounded::<Message>(0);
        let reader = thread::Builder::new()
            .name("little-lsp-reader".into())
            .spawn(move || {
                let mut stdin = io::stdin().lock();
                while let Some(message) = Message::read(&mut stdin)? {
                    let exit = matches!(&message, Message::Notification(n) if n.method == "exit");
                    if reader_sender.send(message).is_err() || exit {
                        break;
                    }
                }
                Ok(())
            })
            .expect("a thread starts");
        (Connection { sender: writer_sender, receiver: reader_receiver }, IoThreads { reader, writer })
    }

    /// The server's end and a client's, in one process.
    pub fn memory() -> (Connection, ClientEnd) {
        let (to_client, from_server) = unbounded();
        let (to_server, from_client) = unbounded();
        (
            Connection { sender: to_client, receiver: from_client },
            ClientEnd { sender: to_server, receiver: from_server },
        )
    }

    fn send(&self, outgoing: impl Into<Outgoing>) {
        // A client that went away ends the server at its next receive.
        let _ = self.sender.send(outgoing.into());
    }

    /// Waits for `initialize`, answering any other request that it is not initialized yet.
    pub fn initialize_start(&self) -> Result<(RequestId, serde_json::Value), String> {
        loop {
            match self.receiver.recv() {
                Ok(Message::Request(request)) if request.method == "initialize" => {
                    return Ok((request.id, request.params));
                }
                Ok(Message::Request(request)) => self.send(Response::new_err(
                    request.id,
                    ErrorCode::ServerNotInitialized as i32,
                    format!("{} before initialize", request.method),
                )),
                Ok(Message::Notification(n)) if n.method != "exit" => {}
                Ok(other) => return Err(format!("expected the initialize request, got {other:?}")),
                Err(_) => return Err("the client went away before initialize".into()),
            }
        }
    }

    /// Answers `initialize` and waits for `initialized`.
    pub fn initialize_finish(&self, id: RequestId, result: serde_json::Value) -> Result<(), String> {
        self.send(Response::new_ok(id, result));
        match self.receiver.recv() {
            Ok(Message::Notification(n)) if n.method == "initialized" => Ok(()),
            Ok(other) => Err(format!("expected the initialized notification, got {other:?}")),
            Err(_) => Err("the client went away before initialized".into()),
        }
    }

    /// When `request` is `shutdown`: answers it, waits for `exit` and says `true`.
    pub fn handle_shutdown(&self, request: &Request) -> Result<bool, String> {
        if request.method != "shutdown" {
            return Ok(false);
        }
        self.send(Response::new_ok(request.id.clone(), ()));
        match self.receiver.recv_timeout(Duration::from_secs(30)) {
            Ok(Message::Notification(Notification { method, .. })) if method == "exit" => Ok(true),
            Ok(other) => Err(format!("expected exit after shutdown, got {other:?}")),
            Err(RecvTimeoutError::Timeout) => Err("no exit within 30 s of shutdown".into()),
            Err(RecvTimeoutError::Disconnected) => Ok(true),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_written_as_the_same_response_a_message_would_be() {
        let result = serde_json::json!({ "name": "nodes", "children": [{ "kind": 19 }] });
        let answer =
            Outgoing::Answer { id: RequestId::from(7), result: serde_json::value::to_raw_value(&result).unwrap() };
        let message = Outgoing::from(Response::new_ok(RequestId::from(7), result));
        let (mut a, mut m) = (Vec::new(), Vec::new());
        answer.write(&mut a).unwrap();
        message.write(&mut m).unwrap();
        let read = |bytes: &[u8]| Message::read(&mut std::io::BufReader::new(bytes)).unwrap().unwrap();
        assert_eq!(format!("{:?}", read(&a)), format!("{:?}", read(&m)));
        assert!(String::from_utf8(a).unwrap().starts_with("Content-Length: "));
        let Message::Response(response) = answer.into_message() else { panic!("a response") };
        assert_eq!(response.result.unwrap()["children"][0]["kind"], 19);
    }
}
