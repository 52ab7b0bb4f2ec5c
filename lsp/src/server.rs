//! The main loop. It owns the database and applies every edit in order; diagnostics and
//! requests run on worker threads from clones of the database. Setting an input cancels
//! the clones' work in flight (salsa waits for them to let go), so a cancelled diagnostics
//! job is started again for the newest text and a cancelled request answers
//! `ContentModified`.

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender, select};
use little_diagnostics::{Encoding, LineIndex};
use little_passes::{Database, SourceFile, Workspace};
use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::Notification as _;
use lsp_types::request::Request as _;
use lsp_types::{
    DidChangeConfigurationParams, DidChangeTextDocumentParams, DidChangeWatchedFilesParams,
    DidChangeWatchedFilesRegistrationOptions, DidCloseTextDocumentParams, DidOpenTextDocumentParams, FileSystemWatcher,
    GlobPattern, InitializeParams, MessageType, PositionEncodingKind, PublishDiagnosticsParams, Registration,
    RegistrationParams, ShowMessageParams, Unregistration, UnregistrationParams, Url, notification, request,
};
use salsa::Setter;

use crate::features;
use crate::settings::{SETTINGS_FILE, Settings};
use crate::transport::{Connection, Outgoing};
use little_passes::inputs::{InputText, InputTexts, Style};

/// What a worker tells the main loop.
enum Done {
    /// A diagnostics job was cancelled by an edit: check `uri` again unless it is closed or
    /// a later check (`generation`) has started since.
    Cancelled { uri: Url, generation: u64 },
}

/// An open document.
struct Document {
    file: SourceFile,
    version: i32,
    text: Arc<str>,
    index: Arc<LineIndex>,
    /// Counts the checks started, so that a cancelled one is redone only if it was the last.
    generation: u64,
}

/// Everything a worker needs, detached from the main loop.
pub(crate) struct Snapshot {
    /// The document is one of little's (`crate::ownership`); others get no answers.
    pub owned: bool,
    pub db: Database,
    pub workspace: Workspace,
    pub file: SourceFile,
    pub text: Arc<str>,
    pub index: Arc<LineIndex>,
    pub uri: Url,
    pub version: i32,
    pub encoding: Encoding,
    pub settings: Arc<Settings>,
}

const WATCH_REGISTRATION: &str = "little-settings-files";

struct Server {
    sender: Sender<Outgoing>,
    db: Database,
    encoding: Encoding,
    root: Option<PathBuf>,
    /// The client's layer of settings (initializationOptions, then each change).
    client_settings: Settings,
    /// The settings in force: `little.toml` overridden by the client's.
    settings: Arc<Settings>,
    workspace: Workspace,
    documents: BTreeMap<Url, Document>,
    /// Settings files that got diagnostics, to clear them when the settings are usable.
    settings_diagnostics: Vec<Url>,
    watch_dynamically: bool,
    /// The files watched now (so a settings change re-registers only when they differ).
    watched: Vec<String>,
    pull_configuration: bool,
    configuration_request: Option<RequestId>,
    next_request: i32,
    done_sender: Sender<Done>,
    done: Receiver<Done>,
    /// Where the server watches the settings files itself, for a client that cannot
    /// register watchers (Neovim 0.7): the watcher, the files, and the channel its thread
    /// reports a change on.
    own_watch: Option<notify::RecommendedWatcher>,
    own_watched: Vec<PathBuf>,
    changed_sender: Sender<()>,
    changed: Receiver<()>,
}

/// Serves one client on `connection` until it exits, with `db` as the database (tests
/// pass one that logs executions).
pub fn serve(connection: Connection, db: Database) -> Result<(), String> {
    let (id, params) = connection.initialize_start()?;
    let params: InitializeParams = serde_json::from_value(params).map_err(|e| format!("bad initialize: {e}"))?;
    let offers_utf8 = params
        .capabilities
        .general
        .as_ref()
        .and_then(|g| g.position_encodings.as_ref())
        .is_some_and(|kinds| kinds.contains(&PositionEncodingKind::UTF8));
    let encoding = if offers_utf8 { Encoding::Utf8 } else { Encoding::Utf16 };
    let result = lsp_types::InitializeResult {
        capabilities: features::capabilities(encoding),
        server_info: Some(lsp_types::ServerInfo {
            name: "little".to_string(),
            version: Some(env!("CARGO_PKG_VERSION").to_string()),
        }),
    };
    connection.initialize_finish(id, serde_json::to_value(result).expect("results serialize"))?;

    #[allow(deprecated)] // root_path and root_uri are what most clients still send
    let root = params
        .workspace_folders
        .as_ref()
        .and_then(|folders| folders.first())
        .map(|folder| folder.uri.clone())
        .or(params.root_uri.clone())
        .and_then(|uri| uri.to_file_path().ok())
        .or_else(|| params.root_path.clone().map(PathBuf::from));
    let workspace_capabilities = params.capabilities.workspace.as_ref();
    let watch_dynamically = workspace_capabilities
        .and_then(|w| w.did_change_watched_files.as_ref())
        .and_then(|w| w.dynamic_registration)
        .unwrap_or(false);
    let pull_configuration = workspace_capabilities.and_then(|w| w.configuration).unwrap_or(false);
    let (done_sender, done) = crossbeam_channel::unbounded();
    let (changed_sender, changed) = crossbeam_channel::unbounded();
    let workspace = little_passes::inputs::load_workspace(
        &mut db.clone(),
        &Default::default(),
        salsa::Durability::LOW,
        Style::Brief,
    )
    .expect("the embedded catalog is usable");
    let mut server = Server {
        sender: connection.sender.clone(),
        db,
        encoding,
        root,
        client_settings: Settings::default(),
        settings: Arc::new(Settings::default()),
        workspace,
        documents: BTreeMap::new(),
        settings_diagnostics: Vec::new(),
        watch_dynamically,
        watched: Vec::new(),
        pull_configuration,
        configuration_request: None,
        next_request: 0,
        done_sender,
        done,
        own_watch: None,
        own_watched: Vec::new(),
        changed_sender,
        changed,
    };
    if let Some(options) = params.initialization_options.as_ref() {
        let read = Settings::from_json(options, server.root.as_deref());
        server.client_settings = server.report_problems(read);
    }
    server.apply_settings();
    server.request_configuration();
    server.run(&connection)
}

impl Server {
    fn run(&mut self, connection: &Connection) -> Result<(), String> {
        loop {
            select! {
                recv(connection.receiver) -> message => {
                    let Ok(message) = message else { return Ok(()) };
                    match message {
                        Message::Request(request) => {
                            if connection.handle_shutdown(&request)? {
                                return Ok(());
                            }
                            self.on_request(request);
                        }
                        Message::Notification(notification) => {
                            if notification.method == notification::Exit::METHOD {
                                return Ok(());
                            }
                            self.on_notification(notification);
                        }
                        Message::Response(response) => self.on_response(response),
                    }
                }
                recv(self.changed) -> _ => {
                    // One reload for a burst of events (an editor's save is several).
                    while self.changed.try_recv().is_ok() {}
                    self.apply_settings();
                }
                recv(self.done) -> done => match done {
                    Ok(Done::Cancelled { uri, generation }) => {
                        if self.documents.get(&uri).is_some_and(|d| d.generation == generation) {
                            self.check(&uri);
                        }
                    }
                    Err(_) => unreachable!("the server holds a sender"),
                },
            }
        }
    }

    fn send(&self, message: impl Into<Outgoing>) {
        // A client that went away ends the loop on the next receive.
        let _ = self.sender.send(message.into());
    }

    fn show(&self, kind: MessageType, message: String) {
        let params = ShowMessageParams { typ: kind, message };
        self.send(Notification::new(notification::ShowMessage::METHOD.to_string(), params));
    }

    fn send_request(&mut self, method: &str, params: impl serde::Serialize) -> RequestId {
        self.next_request += 1;
        let id = RequestId::from(format!("little-{}", self.next_request));
        self.send(Request::new(id.clone(), method.to_string(), params));
        id
    }

    fn on_notification(&mut self, notification: Notification) {
        let method = notification.method.as_str();
        let params = notification.params;
        match method {
            notification::DidOpenTextDocument::METHOD => {
                let Ok(params) = serde_json::from_value::<DidOpenTextDocumentParams>(params) else { return };
                let document = params.text_document;
                let text: Arc<str> = document.text.into();
                let path = document.uri.to_file_path().map_or(document.uri.to_string(), |p| p.display().to_string());
                let file = SourceFile::edited(&self.db, path, text.clone());
                let index = Arc::new(LineIndex::new(&text));
                self.documents.insert(
                    document.uri.clone(),
                    Document { file, version: document.version, text, index, generation: 0 },
                );
                self.check(&document.uri);
                self.settings_document_changed(&document.uri);
            }
            notification::DidChangeTextDocument::METHOD => {
                let Ok(params) = serde_json::from_value::<DidChangeTextDocumentParams>(params) else { return };
                let encoding = self.encoding;
                let Some(document) = self.documents.get_mut(&params.text_document.uri) else { return };
                let mut text = document.text.to_string();
                let mut index = document.index.clone();
                for change in params.content_changes {
                    match change.range {
                        Some(range) => {
                            let at =
                                |p: lsp_types::Position| index.offset(&text, p.line, p.character, encoding) as usize;
                            let (start, end) = (at(range.start), at(range.end));
                            text.replace_range(start..end.max(start), &change.text);
                        }
                        None => text = change.text,
                    }
                    index = Arc::new(LineIndex::new(&text));
                }
                let text: Arc<str> = text.into();
                document.version = params.text_document.version;
                document.text = text.clone();
                document.index = index;
                // Cancels the workers' clones and waits for them to let go.
                document.file.set_text(&mut self.db).to(text);
                self.check(&params.text_document.uri);
                self.settings_document_changed(&params.text_document.uri);
            }
            notification::DidCloseTextDocument::METHOD => {
                let Ok(params) = serde_json::from_value::<DidCloseTextDocumentParams>(params) else { return };
                if let Some(document) = self.documents.remove(&params.text_document.uri) {
                    self.release(document.file);
                    // The file on disk counts again.
                    self.settings_document_changed(&params.text_document.uri);
                    self.publish(params.text_document.uri, Vec::new(), None);
                }
            }
            notification::DidChangeConfiguration::METHOD => {
                let Ok(params) = serde_json::from_value::<DidChangeConfigurationParams>(params) else { return };
                if params.settings.is_null() || params.settings.as_object().is_some_and(|o| o.is_empty()) {
                    // The client only says something changed: ask what.
                    self.request_configuration();
                    return;
                }
                self.take_client_settings(&params.settings);
            }
            notification::DidChangeWatchedFiles::METHOD => {
                let Ok(params) = serde_json::from_value::<DidChangeWatchedFilesParams>(params) else { return };
                let watched = self.watched_paths();
                if params.changes.iter().any(|c| c.uri.to_file_path().is_ok_and(|p| watched.contains(&p))) {
                    self.apply_settings();
                }
            }
            _ => {}
        }
    }

    fn take_client_settings(&mut self, value: &serde_json::Value) {
        let read = Settings::from_json(value, self.root.as_deref());
        self.client_settings = self.report_problems(read);
        self.apply_settings();
    }

    /// Shows each problem of some settings (one line each) and gives the settings that apply.
    fn report_problems(&self, read: crate::settings::Read) -> Settings {
        for problem in &read.problems {
            let kind = match problem.level {
                crate::settings::Level::Warning => MessageType::WARNING,
                crate::settings::Level::Error => MessageType::ERROR,
            };
            self.show(kind, format!("little: {}", problem.message));
        }
        read.settings
    }

    fn request_configuration(&mut self) {
        if self.pull_configuration {
            let params = lsp_types::ConfigurationParams {
                items: vec![lsp_types::ConfigurationItem { scope_uri: None, section: Some("little".to_string()) }],
            };
            self.configuration_request = Some(self.send_request(request::WorkspaceConfiguration::METHOD, params));
        }
    }

    fn on_response(&mut self, response: Response) {
        if self.configuration_request.as_ref() != Some(&response.id) {
            return;
        }
        self.configuration_request = None;
        if let Some(value) = response.result.as_ref().and_then(|r| r.as_array()).and_then(|items| items.first())
            && !value.is_null()
        {
            let value = value.clone();
            self.take_client_settings(&value);
        }
    }

    /// `little.toml` at the root and the files the settings name.
    fn watched_paths(&self) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = self.root.iter().map(|root| root.join(SETTINGS_FILE)).collect();
        paths.extend(self.settings.files().into_iter().map(Path::to_path_buf));
        paths
    }

    /// Reads `little.toml`, merges the client's settings over it and rebuilds the workspace;
    /// then every open document is checked again. Settings that cannot be used are shown
    /// (and the reader documents get their diagnostics); the previous workspace stays.
    fn apply_settings(&mut self) {
        let toml_settings = match self.root.as_ref().map(|root| root.join(SETTINGS_FILE)) {
            Some(path) if path.is_file() => match std::fs::read_to_string(&path) {
                Ok(text) => self.report_problems(Settings::from_toml(&text, &path)),
                Err(e) => {
                    self.show(MessageType::ERROR, format!("little: {}: cannot read it: {e}", path.display()));
                    Settings::default()
                }
            },
            _ => Settings::default(),
        };
        self.settings = Arc::new(toml_settings.overridden_by(&self.client_settings));
        self.register_watchers();
        for uri in std::mem::take(&mut self.settings_diagnostics) {
            self.publish(uri, Vec::new(), None);
        }
        match self.load_workspace() {
            Ok(workspace) => self.workspace = workspace,
            Err(problems) => {
                // One line; the files themselves get the diagnostics.
                self.show(
                    MessageType::ERROR,
                    format!("little: {problems}; checking goes on with the previous settings"),
                );
                self.publish_settings_diagnostics();
            }
        }
        let uris: Vec<Url> = self.documents.keys().cloned().collect();
        for uri in uris {
            self.check(&uri);
        }
    }

    /// The workspace the settings name, each document's text taken from the editor when it
    /// is open there (an edited, unsaved context counts at once) and from disk otherwise.
    fn load_workspace(&mut self) -> Result<Workspace, String> {
        let settings = self.settings.clone();
        let input = |path: &Option<PathBuf>, what: &str| -> Result<Option<InputText>, String> {
            let Some(path) = path else { return Ok(None) };
            let bytes = match self.open_text(path) {
                Some(text) => text.as_bytes().to_vec(),
                None => little_passes::inputs::read_bytes(path)?,
            };
            Ok(Some(InputText { name: path.display().to_string(), bytes, what: what.to_string() }))
        };
        let texts = InputTexts {
            catalog: input(&settings.catalog, "catalog")?,
            context: input(&settings.context, "context")?,
            bindings: input(&settings.bindings, "binding rows")?,
            snapshot: input(&settings.snapshot, "snapshot")?,
        };
        little_passes::inputs::workspace_of(&mut self.db, texts, salsa::Durability::LOW, Style::Brief)
    }

    /// The editor's text of the open document at `path`.
    fn open_text(&self, path: &Path) -> Option<Arc<str>> {
        self.documents.iter().find(|(uri, _)| uri.to_file_path().is_ok_and(|p| p == path)).map(|(_, d)| d.text.clone())
    }

    /// After an open document changed: if it is one of the settings' files, the workspace is
    /// built again with its new text and the other documents are checked against it. A copy
    /// that cannot be used (half typed) leaves the previous workspace: the document shows
    /// its own errors.
    fn settings_document_changed(&mut self, uri: &Url) {
        let Ok(path) = uri.to_file_path() else { return };
        if !self.settings.files().contains(&path.as_path()) {
            return;
        }
        if let Ok(workspace) = self.load_workspace() {
            self.workspace = workspace;
            let others: Vec<Url> = self.documents.keys().filter(|u| *u != uri).cloned().collect();
            for other in others {
                self.check(&other);
            }
        }
    }

    /// The errors of each reader document (catalog, context, binding rows), on that file.
    fn publish_settings_diagnostics(&mut self) {
        let settings = self.settings.clone();
        for path in [&settings.catalog, &settings.context, &settings.bindings].into_iter().flatten() {
            let (Ok(text), Ok(uri)) = (std::fs::read_to_string(path), Url::from_file_path(path)) else { continue };
            let text: Arc<str> = text.into();
            let file = SourceFile::new(&self.db, path.display().to_string(), text.clone());
            let report = little_passes::report(&self.db, self.workspace, file);
            let index = LineIndex::new(&text);
            let diagnostics: Vec<lsp_types::Diagnostic> = report
                .diagnostics
                .iter()
                .filter(|d| d.severity() == little_diagnostics::Severity::Error)
                .map(|d| features::to_lsp(d, &uri, &text, &index, self.encoding, &self.settings))
                .collect();
            if !diagnostics.is_empty() {
                self.settings_diagnostics.push(uri.clone());
                self.publish(uri, diagnostics, None);
            }
        }
    }

    fn register_watchers(&mut self) {
        if !self.watch_dynamically {
            self.watch_itself();
            return;
        }
        let globs: Vec<String> = self.watched_paths().iter().map(|p| p.display().to_string()).collect();
        if globs == self.watched {
            return;
        }
        if !self.watched.is_empty() {
            let params = UnregistrationParams {
                unregisterations: vec![Unregistration {
                    id: WATCH_REGISTRATION.to_string(),
                    method: notification::DidChangeWatchedFiles::METHOD.to_string(),
                }],
            };
            self.send_request(request::UnregisterCapability::METHOD, params);
        }
        self.watched = globs.clone();
        let watchers =
            globs.into_iter().map(|glob| FileSystemWatcher { glob_pattern: GlobPattern::String(glob), kind: None });
        let options = DidChangeWatchedFilesRegistrationOptions { watchers: watchers.collect() };
        let params = RegistrationParams {
            registrations: vec![Registration {
                id: WATCH_REGISTRATION.to_string(),
                method: notification::DidChangeWatchedFiles::METHOD.to_string(),
                register_options: Some(serde_json::to_value(options).expect("options serialize")),
            }],
        };
        self.send_request(request::RegisterCapability::METHOD, params);
    }

    /// Watches the folders of the settings files (editors save by renaming, which a watch
    /// on the file itself would lose) and reports a change to one of the files.
    fn watch_itself(&mut self) {
        let paths = self.watched_paths();
        if paths == self.own_watched {
            return;
        }
        self.own_watched = paths.clone();
        self.own_watch = None;
        if paths.is_empty() {
            return;
        }
        let sender = self.changed_sender.clone();
        let wanted = paths.clone();
        let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            let Ok(event) = event else { return };
            let writes = matches!(
                event.kind,
                notify::EventKind::Create(_)
                    | notify::EventKind::Modify(_)
                    | notify::EventKind::Remove(_)
                    | notify::EventKind::Access(notify::event::AccessKind::Close(notify::event::AccessMode::Write))
            );
            if writes && event.paths.iter().any(|p| wanted.contains(p)) {
                let _ = sender.send(());
            }
        });
        let mut watcher = match watcher {
            Ok(watcher) => watcher,
            Err(e) => {
                self.show(MessageType::WARNING, format!("little: cannot watch the settings files: {e}"));
                return;
            }
        };
        let mut folders: Vec<&Path> = paths.iter().filter_map(|p| p.parent()).collect();
        folders.sort();
        folders.dedup();
        for folder in folders {
            if let Err(e) = notify::Watcher::watch(&mut watcher, folder, notify::RecursiveMode::NonRecursive) {
                self.show(MessageType::WARNING, format!("little: cannot watch `{}`: {e}", folder.display()));
            }
        }
        self.own_watch = Some(watcher);
    }

    fn publish(&self, uri: Url, diagnostics: Vec<lsp_types::Diagnostic>, version: Option<i32>) {
        let params = PublishDiagnosticsParams { uri, diagnostics, version };
        self.send(Notification::new(notification::PublishDiagnostics::METHOD.to_string(), params));
    }

    fn snapshot(&self, uri: &Url) -> Option<Snapshot> {
        let document = self.documents.get(uri)?;
        let path = uri.to_file_path().ok();
        let owned = crate::ownership::owned(path.as_deref(), &document.text, self.settings.file_globs());
        Some(Snapshot {
            owned,
            db: self.db.clone(),
            workspace: self.workspace,
            file: document.file,
            text: document.text.clone(),
            index: document.index.clone(),
            uri: uri.clone(),
            version: document.version,
            encoding: self.encoding,
            settings: self.settings.clone(),
        })
    }

    /// Checks one open document on a worker and publishes its diagnostics.
    /// Lets go of what a closed document's file holds (its outline, nodes, graph and
    /// per-node checks: tens of megabytes for a large draft), which salsa would otherwise
    /// keep for as long as the server runs.
    fn release(&mut self, file: SourceFile) {
        if let Some(last) = file.last_outline(&self.db) {
            last.forget();
        }
        // Cancels the workers' clones and waits for them to let go.
        little_passes::report::release(&mut self.db, self.workspace, file);
    }

    fn check(&mut self, uri: &Url) {
        let Some(snapshot) = self.snapshot(uri) else { return };
        if !snapshot.owned {
            // Not one of little's documents: nothing to say (and what was said, withdrawn).
            self.publish(uri.clone(), Vec::new(), Some(snapshot.version));
            return;
        }
        let Some(document) = self.documents.get_mut(uri) else { return };
        document.generation += 1;
        let generation = document.generation;
        let sender = self.sender.clone();
        let done = self.done_sender.clone();
        std::thread::spawn(move || {
            let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| {
                salsa::Cancelled::catch(AssertUnwindSafe(|| features::diagnostics(&snapshot)))
            }));
            match outcome {
                Ok(Ok(diagnostics)) => {
                    let params = PublishDiagnosticsParams {
                        uri: snapshot.uri.clone(),
                        diagnostics,
                        version: Some(snapshot.version),
                    };
                    let _ = sender
                        .send(Notification::new(notification::PublishDiagnostics::METHOD.to_string(), params).into());
                    // The clone is dropped only now: an edit waits for it, so this version's
                    // diagnostics always go out before the next version's.
                    drop(snapshot);
                }
                Ok(Err(_cancelled)) => {
                    let uri = snapshot.uri.clone();
                    drop(snapshot);
                    let _ = done.send(Done::Cancelled { uri, generation });
                }
                Err(_panic) => {
                    let message = format!("little: checking {} failed; this is a bug in little", snapshot.uri);
                    let params = ShowMessageParams { typ: MessageType::ERROR, message };
                    let _ =
                        sender.send(Notification::new(notification::ShowMessage::METHOD.to_string(), params).into());
                }
            }
        });
    }

    fn on_request(&mut self, request: Request) {
        let uri = request.params.get("textDocument").and_then(|d| d.get("uri")).and_then(|u| u.as_str());
        let snapshot = uri.and_then(|u| Url::parse(u).ok()).and_then(|u| self.snapshot(&u));
        let known = features::handles(&request.method);
        let sender = self.sender.clone();
        let Some(snapshot) = snapshot.filter(|_| known) else {
            let response = if known {
                Response::new_err(request.id, ErrorCode::InvalidParams as i32, "the document is not open".to_string())
            } else {
                Response::new_err(
                    request.id,
                    ErrorCode::MethodNotFound as i32,
                    format!("unknown method {}", request.method),
                )
            };
            self.send(response);
            return;
        };
        if !snapshot.owned {
            self.send(Response::new_ok(request.id, serde_json::Value::Null));
            return;
        }
        std::thread::spawn(move || {
            let Request { id, method, params } = request;
            let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| {
                salsa::Cancelled::catch(AssertUnwindSafe(|| features::answer(&snapshot, &method, params)))
            }));
            let response: Outgoing = match outcome {
                Ok(Ok(Ok(result))) => Outgoing::Answer { id, result },
                Ok(Ok(Err(message))) => Response::new_err(id, ErrorCode::InvalidParams as i32, message).into(),
                Ok(Err(_cancelled)) => {
                    Response::new_err(id, ErrorCode::ContentModified as i32, "the document changed".to_string()).into()
                }
                Err(_panic) => {
                    Response::new_err(id, ErrorCode::InternalError as i32, format!("{method} failed")).into()
                }
            };
            let _ = sender.send(response);
            drop(snapshot);
        });
    }
}
