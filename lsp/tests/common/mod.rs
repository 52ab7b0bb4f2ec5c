//! An in-process LSP client: the server runs on a thread over `transport::Connection::memory`.

#![allow(dead_code)]

use std::path::Path;
use std::time::Duration;

use little_lsp::transport::{ClientEnd, Connection};
use little_passes::Database;
use lsp_server::{Message, Notification, Request, RequestId, Response};
use lsp_types::{Diagnostic, PublishDiagnosticsParams, Url};
use serde_json::{Value, json};

pub const SUPPORT_TRIAGE: &str = include_str!("../../../examples/support-triage.json");

const TIMEOUT: Duration = Duration::from_secs(120);

pub struct Client {
    connection: ClientEnd,
    server: Option<std::thread::JoinHandle<Result<(), String>>>,
    next_id: i32,
    /// Requests the server sent (answered with `null`, or with `configuration`).
    pub server_requests: Vec<Request>,
    /// `window/showMessage` texts.
    pub messages: Vec<String>,
    /// What `workspace/configuration` answers, when set.
    pub configuration: Option<Value>,
    pub initialize_result: Value,
}

#[derive(Default)]
pub struct Options<'a> {
    pub encodings: &'a [&'a str],
    pub initialization_options: Option<Value>,
    pub root: Option<&'a Path>,
    pub db: Database,
    /// The client cannot register file watchers (as Neovim 0.7).
    pub no_watch_registration: bool,
}

impl Client {
    pub fn start(options: Options<'_>) -> Client {
        let (server_side, client_side) = Connection::memory();
        let db = options.db;
        let watch_registration = !options.no_watch_registration;
        let server = std::thread::spawn(move || little_lsp::serve(server_side, db));
        let mut client = Client {
            connection: client_side,
            server: Some(server),
            next_id: 0,
            server_requests: Vec::new(),
            messages: Vec::new(),
            configuration: None,
            initialize_result: Value::Null,
        };
        let mut params = json!({
            "processId": null,
            "rootUri": options.root.map(|r| Url::from_directory_path(r).unwrap()),
            "capabilities": {
                "general": { "positionEncodings": options.encodings },
                "workspace": { "didChangeWatchedFiles": { "dynamicRegistration": watch_registration }, "configuration": true },
            },
        });
        if let Some(init) = options.initialization_options {
            params["initializationOptions"] = init;
        }
        client.initialize_result = client.request("initialize", params);
        client.notify("initialized", json!({}));
        client
    }

    pub fn notify(&self, method: &str, params: Value) {
        self.connection.sender.send(Notification::new(method.to_string(), params).into()).unwrap();
    }

    /// The next message that is not a request of the server (those are answered here).
    fn next(&mut self) -> Message {
        loop {
            let message =
                self.connection.receiver.recv_timeout(TIMEOUT).expect("the server answers in time").into_message();
            match message {
                Message::Request(request) => {
                    let result = match request.method.as_str() {
                        "workspace/configuration" => json!([self.configuration.clone().unwrap_or(Value::Null)]),
                        _ => Value::Null,
                    };
                    self.connection.sender.send(Response::new_ok(request.id.clone(), result).into()).unwrap();
                    self.server_requests.push(request);
                }
                Message::Notification(n) if n.method == "window/showMessage" => {
                    self.messages.push(n.params["message"].as_str().unwrap_or_default().to_string());
                }
                other => return other,
            }
        }
    }

    /// Sends a request and waits for its response: the result, or the error as `{"error": …}`.
    pub fn request_raw(&mut self, method: &str, params: Value) -> Response {
        let id = self.send_request(method, params);
        self.response(id)
    }

    /// Sends a request without waiting for its response.
    pub fn send_request(&mut self, method: &str, params: Value) -> RequestId {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        self.connection.sender.send(Request::new(id.clone(), method.to_string(), params).into()).unwrap();
        id
    }

    /// Waits for the response to request `id` (other messages are skipped).
    pub fn response(&mut self, id: RequestId) -> Response {
        loop {
            if let Message::Response(response) = self.next()
                && response.id == id
            {
                return response;
            }
        }
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let response = self.request_raw(method, params);
        assert!(response.error.is_none(), "{method} failed: {:?}", response.error);
        response.result.unwrap_or(Value::Null)
    }

    /// Waits for the diagnostics of `uri` at `version` (`None`: a publish without version).
    pub fn diagnostics(&mut self, uri: &Url, version: Option<i32>) -> Vec<Diagnostic> {
        loop {
            if let Message::Notification(n) = self.next()
                && n.method == "textDocument/publishDiagnostics"
            {
                let params: PublishDiagnosticsParams = serde_json::from_value(n.params).unwrap();
                if &params.uri == uri && params.version == version {
                    return params.diagnostics;
                }
            }
        }
    }

    /// Waits for a publish of `uri` at `version` whose diagnostics satisfy `wanted`, skipping
    /// the others: a file watcher reports a save as several events (truncate, write, close),
    /// and the server re-checks on each, so a publish may come from a half-written file.
    pub fn diagnostics_until(
        &mut self,
        uri: &Url,
        version: Option<i32>,
        wanted: impl Fn(&[Diagnostic]) -> bool,
    ) -> Vec<Diagnostic> {
        loop {
            let diagnostics = self.diagnostics(uri, version);
            if wanted(&diagnostics) {
                return diagnostics;
            }
        }
    }

    /// The version of `uri`'s next publish.
    pub fn published_version(&mut self, uri: &Url) -> Option<i32> {
        loop {
            if let Message::Notification(n) = self.next()
                && n.method == "textDocument/publishDiagnostics"
            {
                let params: PublishDiagnosticsParams = serde_json::from_value(n.params).unwrap();
                if &params.uri == uri {
                    return params.version;
                }
            }
        }
    }

    /// Opens a document (version 1) and waits for its diagnostics.
    pub fn open(&mut self, uri: &Url, text: &str) -> Vec<Diagnostic> {
        self.send_open(uri, text);
        self.diagnostics(uri, Some(1))
    }

    /// Opens a document (version 1) without waiting for anything.
    pub fn send_open(&mut self, uri: &Url, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "json", "version": 1, "text": text } }),
        );
    }

    /// Inserts `text` at the LSP position `at`, as an incremental change, without waiting.
    pub fn send_insert(&mut self, uri: &Url, version: i32, at: &Value, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({
                "textDocument": { "uri": uri, "version": version },
                "contentChanges": [{ "range": { "start": at, "end": at }, "text": text }],
            }),
        );
    }

    /// Replaces the whole text.
    pub fn replace(&mut self, uri: &Url, version: i32, text: &str) -> Vec<Diagnostic> {
        self.send_replace(uri, version, text);
        self.diagnostics(uri, Some(version))
    }

    /// Replaces the whole text without waiting for anything (waiting for this document's
    /// publish would skip another document's, which its workers may send first).
    pub fn send_replace(&mut self, uri: &Url, version: i32, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "text": text }] }),
        );
    }

    pub fn shutdown(mut self) {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let result = self.server.take().unwrap().join().expect("the server does not panic");
        assert_eq!(result, Ok(()));
    }
}

pub fn uri(name: &str) -> Url {
    Url::parse(&format!("file:///work/{name}")).unwrap()
}

/// The 0-based line and column (in UTF-8 bytes or UTF-16 units) of byte `offset`, computed
/// here from the text alone.
pub fn position(text: &str, offset: usize, utf16: bool) -> Value {
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line = text[..offset].matches('\n').count();
    let prefix = &text[line_start..offset];
    let character = if utf16 { prefix.encode_utf16().count() } else { prefix.len() };
    json!({ "line": line, "character": character })
}

/// The position just inside the first occurrence of `needle` (plus `skip` bytes).
pub fn position_of(text: &str, needle: &str, skip: usize, utf16: bool) -> Value {
    let offset = text.find(needle).unwrap_or_else(|| panic!("`{needle}` is in the text")) + skip;
    position(text, offset, utf16)
}
