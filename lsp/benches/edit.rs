//! The cost of a keystroke through the server against the cost of opening: on a
//! 10,000-node draft, the time from `didChange` (one node's config edited) to its
//! `publishDiagnostics`, and from `didOpen` (a fresh document, on a fresh server) to its
//! first `publishDiagnostics`; the outline (`documentSymbol`) of the open draft; and a change
//! that sends the whole text. The editor's targets: a typed edit under 10 ms, a whole-text
//! change at most 30% of an open, the outline under 50 ms.
//! `cargo bench -p little-lsp --bench edit` (docs/benchmarks.md has the figures).

use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use little_lsp::transport::{ClientEnd, Connection, Outgoing};
use lsp_server::{Message, Notification, Request, RequestId};
use lsp_types::Url;
use serde_json::{Value, json};

/// A client on the server's other end.
struct Client {
    connection: ClientEnd,
}

impl Client {
    fn start() -> Client {
        let (server, connection) = Connection::memory();
        std::thread::spawn(move || little_lsp::serve(server, little_passes::Database::default()));
        let client = Client { connection };
        let params = json!({ "processId": null, "rootUri": null, "capabilities": {} });
        client.connection.sender.send(Request::new(RequestId::from(1), "initialize".into(), params).into()).unwrap();
        client.notify("initialized", json!({}));
        client
    }

    fn notify(&self, method: &str, params: Value) {
        self.connection.sender.send(Notification::new(method.to_string(), params).into()).unwrap();
    }

    /// The next message, written out as the server's stdio writer would (a client waits
    /// for the bytes).
    fn receive(&self) -> Outgoing {
        let outgoing = self.connection.receiver.recv().unwrap();
        outgoing.write(&mut std::io::sink()).unwrap();
        outgoing
    }

    /// Waits for the diagnostics of `uri` at `version`.
    fn published(&self, uri: &Url, version: i32) {
        loop {
            if let Outgoing::Message(Message::Notification(n)) = self.receive()
                && n.method == "textDocument/publishDiagnostics"
                && n.params["uri"] == uri.as_str()
                && n.params["version"] == version
            {
                return;
            }
        }
    }

    /// Waits for the answer to request `id`; it is dropped after the clock stops, as the
    /// stdio writer drops what it wrote on a thread of its own.
    fn answer(&self, id: &RequestId) -> Outgoing {
        loop {
            let outgoing = self.receive();
            match &outgoing {
                Outgoing::Answer { id: answered, .. } if answered == id => return outgoing,
                Outgoing::Message(Message::Response(response)) if &response.id == id => return outgoing,
                _ => {}
            }
        }
    }

    fn open(&self, uri: &Url, text: &str) {
        let document = json!({ "uri": uri, "languageId": "json", "version": 1, "text": text });
        self.notify("textDocument/didOpen", json!({ "textDocument": document }));
        self.published(uri, 1);
    }
}

/// The LSP position (UTF-16) of byte `offset`.
fn position(text: &str, offset: usize) -> Value {
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    json!({ "line": text[..offset].matches('\n').count(), "character": text[line_start..offset].encode_utf16().count() })
}

fn keystroke(c: &mut Criterion) {
    const NODES: usize = 10_000;
    let text = little_conformance::generate::draft(NODES, 42);
    let client = Client::start();
    let mut group = c.benchmark_group("lsp_10k");
    group.sample_size(10).sampling_mode(SamplingMode::Flat).measurement_time(Duration::from_secs(20));

    // Each open is timed on a server of its own (started, and warmed on a small draft so
    // the catalog's schemas are compiled, outside the timing). Opening document after
    // document on one server would time a heap that grows with every document kept (in
    // one such run the last samples took 2.6 times the first).
    let warm_up = little_conformance::generate::draft(10, 42);
    group.bench_function("didOpen_to_publish", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                let fresh = Client::start();
                fresh.open(&Url::parse("file:///bench/warm-up.json").unwrap(), &warm_up);
                let uri = Url::parse("file:///bench/opened.json").unwrap();
                let start = Instant::now();
                fresh.open(&uri, &text);
                total += start.elapsed();
            }
            total
        })
    });

    // One document; each edit inserts or removes one digit in one node's query.
    let uri = Url::parse("file:///bench/edited.json").unwrap();
    client.open(&uri, &text);
    let half = text.len() / 2;
    let at = half + text[half..].find("and batch = ").unwrap() + "and batch = ".len();
    let (start, end) = (position(&text, at), position(&text, at + 1));
    let mut version = 1;
    group.bench_function("didChange_to_publish", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                version += 1;
                let change = if version % 2 == 0 {
                    json!({ "range": { "start": start, "end": start }, "text": "9" })
                } else {
                    json!({ "range": { "start": start, "end": end }, "text": "" })
                };
                let params = json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [change] });
                let began = Instant::now();
                client.notify("textDocument/didChange", params);
                client.published(&uri, version);
                total += began.elapsed();
            }
            total
        })
    });

    // The outline of the open document (its target: under 50 ms at 10k nodes), and a change
    // that sends the whole text, as some clients do (at most 30% of an open).
    let mut request_id = 100;
    group.bench_function("documentSymbol", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                request_id += 1;
                let params = json!({ "textDocument": { "uri": uri } });
                let request = Request::new(RequestId::from(request_id), "textDocument/documentSymbol".into(), params);
                let began = Instant::now();
                client.connection.sender.send(request.into()).unwrap();
                let answer = client.answer(&RequestId::from(request_id));
                total += began.elapsed();
                drop(std::hint::black_box(answer));
            }
            total
        })
    });
    let whole = format!("{}9{}", &text[..at], &text[at..]);
    group.bench_function("didChange_whole_text_to_publish", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                version += 1;
                let next = if version % 2 == 0 { whole.as_str() } else { text.as_str() };
                let params =
                    json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "text": next }] });
                let began = Instant::now();
                client.notify("textDocument/didChange", params);
                client.published(&uri, version);
                total += began.elapsed();
            }
            total
        })
    });

    // The same edit without the server, to split the cost: salsa's part (`diagnostics_report` after
    // `set_text`, on a file kept as the server keeps it), and the parse of the whole text alone,
    // which an edit inside one node no longer pays.
    let mut db = little_passes::Database::default();
    let catalog =
        little_passes::SourceFile::new(&db, "catalog".into(), little_frontend::catalog::DEFAULT_CATALOG.into());
    let workspace = little_passes::Workspace::new(&db, catalog, None, None, None);
    let file = little_passes::SourceFile::edited(&db, "draft".into(), text.as_str().into());
    little_passes::report(&db, workspace, file);
    let edited = format!("{}9{}", &text[..at], &text[at..]);
    let mut flip = false;
    group.bench_function("set_text_to_report", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                flip = !flip;
                let next: std::sync::Arc<str> = if flip { edited.as_str().into() } else { text.as_str().into() };
                let began = Instant::now();
                salsa::Setter::to(little_passes::SourceFile::set_text(file, &mut db), next);
                std::hint::black_box(little_passes::diagnostics_report(&db, workspace, file));
                total += began.elapsed();
            }
            total
        })
    });
    // The tree shares the text (as the database's `parse` does): the text is not copied.
    let shared: std::sync::Arc<str> = text.as_str().into();
    group.bench_function("parse_only", |b| {
        b.iter(|| little_frontend::json::parse_shared(std::hint::black_box(shared.clone())))
    });
    group.finish();
}

criterion_group!(benches, keystroke);
criterion_main!(benches);
