//! The native half of the npm package `@little-stack/compiler`: `little_embed` for node.
//!
//! Every function returns either the JSON text of its result (which the JavaScript half,
//! `index.cjs`, parses) or a [`Failure`] object, the `little_embed::Error` that the
//! JavaScript half throws as a `LittleError`; a panic in this glue is caught too, so none
//! reaches node. The functions that end in `Async` run on libuv's thread pool and return
//! a Promise. A [`NativeWorkspace`] keeps its state behind an `Arc<Mutex<…>>` so that a pool
//! thread can use it, and serves its calls in the order they were made (see [`Ordered`]).

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, mpsc};

use little_embed::planner::{Cancel, HostModel};
use little_embed::{Change, Documents, Edit, Encoding, Error, Position};
use napi::bindgen_prelude::{AsyncTask, Buffer, Either};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, Status, Task};
use napi_derive::napi;
use serde_json::Value;

/// A `little_embed::Error`, for the JavaScript half to throw as a `LittleError`.
#[napi(object)]
pub struct Failure {
    pub code: String,
    pub message: String,
    pub path: Option<String>,
    /// With `blocked`: the JSON text of the `little-report/v1` of what blocks.
    pub report: Option<String>,
    /// With `run.failed`: the cause code of the run's `RunFailed`.
    pub cause: Option<String>,
}

/// JSON text, or why there is none.
type Outcome = Either<String, Failure>;

fn failure(error: Error) -> Failure {
    Failure {
        code: error.code.to_string(),
        message: error.message,
        path: error.path,
        report: error.report.map(|report| report.to_string()),
        cause: error.cause,
    }
}

fn outcome(result: Result<Value, Error>) -> Outcome {
    match result {
        Ok(value) => Either::A(value.to_string()),
        Err(error) => Either::B(failure(error)),
    }
}

/// Runs `call`, a panic becoming an `internal` failure (little_embed catches its own; this
/// covers the glue).
fn guarded(call: impl FnOnce() -> Outcome) -> Outcome {
    std::panic::catch_unwind(AssertUnwindSafe(call)).unwrap_or_else(|_| Either::B(internal()))
}

fn internal() -> Failure {
    failure(Error::new("internal", "little's node binding failed; this is a bug in little", None))
}

/// A document as the JavaScript half passes it: text, or bytes.
type Input = Either<String, Buffer>;

fn bytes(input: Input) -> Vec<u8> {
    match input {
        Either::A(text) => text.into_bytes(),
        Either::B(buffer) => buffer.to_vec(),
    }
}

/// The documents a check runs against (`undefined` for "not given").
#[napi(object)]
pub struct NativeDocuments {
    pub catalog: Option<Either<String, Buffer>>,
    pub context: Option<Either<String, Buffer>>,
    pub bindings: Option<Either<String, Buffer>>,
    pub snapshot: Option<Either<String, Buffer>>,
}

fn documents(documents: Option<NativeDocuments>) -> Documents {
    let Some(d) = documents else { return Documents::default() };
    Documents {
        catalog: d.catalog.map(bytes),
        context: d.context.map(bytes),
        bindings: d.bindings.map(bytes),
        snapshot: d.snapshot.map(bytes),
    }
}

#[napi(catch_unwind)]
pub fn check(text: Either<String, Buffer>, path: String, docs: Option<NativeDocuments>) -> Either<String, Failure> {
    let (text, docs) = (bytes(text), documents(docs));
    guarded(|| outcome(little_embed::check(&text, &path, &docs)))
}

#[napi(catch_unwind)]
pub fn compile(text: Either<String, Buffer>, path: String, docs: Option<NativeDocuments>) -> Either<String, Failure> {
    let (text, docs) = (bytes(text), documents(docs));
    guarded(|| outcome(little_embed::compile(&text, &path, &docs)))
}

/// `check` or `compile` on the thread pool.
pub struct CheckTask {
    text: Vec<u8>,
    path: String,
    docs: Documents,
    compile: bool,
}

impl Task for CheckTask {
    type Output = Outcome;
    type JsValue = Outcome;

    fn compute(&mut self) -> napi::Result<Outcome> {
        let call = if self.compile { little_embed::compile } else { little_embed::check };
        Ok(guarded(|| outcome(call(&self.text, &self.path, &self.docs))))
    }

    fn resolve(&mut self, _: Env, output: Outcome) -> napi::Result<Outcome> {
        Ok(output)
    }
}

#[napi(catch_unwind, ts_return_type = "Promise<string | Failure>")]
pub fn check_async(text: Either<String, Buffer>, path: String, docs: Option<NativeDocuments>) -> AsyncTask<CheckTask> {
    AsyncTask::new(CheckTask { text: bytes(text), path, docs: documents(docs), compile: false })
}

#[napi(catch_unwind, ts_return_type = "Promise<string | Failure>")]
pub fn compile_async(
    text: Either<String, Buffer>,
    path: String,
    docs: Option<NativeDocuments>,
) -> AsyncTask<CheckTask> {
    AsyncTask::new(CheckTask { text: bytes(text), path, docs: documents(docs), compile: true })
}

#[napi(catch_unwind)]
pub fn explain(code: String) -> Either<String, Failure> {
    guarded(|| outcome(little_embed::explain(&code).map(Value::String)))
}

#[napi(catch_unwind)]
pub fn codes() -> Either<String, Failure> {
    guarded(|| outcome(Ok(little_embed::codes())))
}

#[napi(catch_unwind)]
pub fn hash(text: Either<String, Buffer>) -> Either<String, Failure> {
    let text = bytes(text);
    guarded(|| outcome(little_embed::hash(&text).map(Value::String)))
}

#[napi(catch_unwind)]
pub fn schema(name: String) -> Either<String, Failure> {
    guarded(|| outcome(little_embed::schema(&name)))
}

#[napi(catch_unwind)]
pub fn schema_names() -> Vec<String> {
    little_embed::schema_names().into_iter().map(str::to_string).collect()
}

#[napi(catch_unwind)]
pub fn snapshot(definition: Either<String, Buffer>) -> Either<String, Failure> {
    let definition = bytes(definition);
    guarded(|| outcome(little_embed::snapshot(&definition)))
}

#[napi(catch_unwind)]
pub fn lock(lwir: Either<String, Buffer>, definition: Either<String, Buffer>) -> Either<String, Failure> {
    let (lwir, definition) = (bytes(lwir), bytes(definition));
    guarded(|| outcome(little_embed::lock(&lwir, &definition)))
}

/// A value that calls reach in the order they were made, from the main thread or the
/// pool: each call takes a ticket when it is made (on the main thread, so in program
/// order) and waits for its turn. Edits are positions in the text the previous edit left,
/// so two `updateAsync` calls must not run in the order the pool happens to pick them, and
/// a synchronous call made after an asynchronous one must see its edit.
///
/// It cannot deadlock: libuv's pool runs tasks in the order they were queued, tickets
/// are taken in the same order, so the holder of the ticket being served is running or
/// done whenever a later one waits.
struct Ordered<T> {
    state: Mutex<Turn<T>>,
    turn: Condvar,
    next: AtomicU64,
}

struct Turn<T> {
    value: T,
    serving: u64,
}

impl<T> Ordered<T> {
    fn new(value: T) -> Ordered<T> {
        Ordered { state: Mutex::new(Turn { value, serving: 0 }), turn: Condvar::new(), next: AtomicU64::new(0) }
    }

    fn ticket(&self) -> u64 {
        self.next.fetch_add(1, Ordering::SeqCst)
    }

    fn lock(&self) -> MutexGuard<'_, Turn<T>> {
        // A call never panics while it holds the lock (each is guarded), so a poisoned
        // lock still holds a consistent value.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs `call` on the value when `ticket`'s turn comes, then passes the turn on (also
    /// when `call` panics).
    fn with<R>(&self, ticket: u64, call: impl FnOnce(&mut T) -> R) -> std::thread::Result<R> {
        let mut turn = self.lock();
        while turn.serving != ticket {
            turn = self.turn.wait(turn).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        let result = std::panic::catch_unwind(AssertUnwindSafe(|| call(&mut turn.value)));
        turn.serving += 1;
        drop(turn);
        self.turn.notify_all();
        result
    }
}

type Shared = Arc<Ordered<little_embed::Workspace>>;

/// An edit: the text between two LSP positions (0-based lines, UTF-16 columns) replaced.
#[napi(object)]
pub struct NativeEdit {
    pub start_line: u32,
    pub start_character: u32,
    pub end_line: u32,
    pub end_character: u32,
    pub text: String,
}

fn change(change: Either<String, Vec<NativeEdit>>) -> Change {
    match change {
        Either::A(text) => Change::Text(text),
        Either::B(edits) => Change::Edits(
            edits
                .into_iter()
                .map(|e| Edit {
                    start: Position { line: e.start_line, character: e.start_character },
                    end: Position { line: e.end_line, character: e.end_character },
                    text: e.text,
                })
                .collect(),
        ),
    }
}

/// One call on a workspace.
enum Call {
    Open(String, String),
    Update(String, Change),
    Close(String),
    Report(String),
    Text(String),
    Paths,
}

impl Call {
    fn run(self, workspace: &mut little_embed::Workspace) -> Outcome {
        let result = match self {
            Call::Open(path, text) => workspace.open(&path, &text),
            Call::Update(path, change) => workspace.update(&path, change),
            Call::Close(path) => workspace.close(&path).map(|()| Value::Null),
            Call::Report(path) => workspace.report(&path),
            Call::Text(path) => Ok(workspace.text(&path).map_or(Value::Null, |t| Value::String(t.to_string()))),
            Call::Paths => Ok(Value::from(workspace.paths())),
        };
        outcome(result)
    }
}

fn run(shared: &Shared, ticket: u64, call: Call) -> Outcome {
    shared.with(ticket, |workspace| call.run(workspace)).unwrap_or_else(|_| Either::B(internal()))
}

/// A workspace call on the thread pool.
pub struct WorkspaceTask {
    shared: Shared,
    ticket: u64,
    call: Option<Call>,
}

impl Task for WorkspaceTask {
    type Output = Outcome;
    type JsValue = Outcome;

    fn compute(&mut self) -> napi::Result<Outcome> {
        let call = self.call.take().expect("a task computes once");
        Ok(run(&self.shared, self.ticket, call))
    }

    fn resolve(&mut self, _: Env, output: Outcome) -> napi::Result<Outcome> {
        Ok(output)
    }
}

/// A long-lived workspace of open documents (`little_embed::Workspace`, columns in UTF-16).
#[napi]
pub struct NativeWorkspace {
    shared: Shared,
}

/// A workspace against `docs`, or why there cannot be one.
#[napi(catch_unwind)]
pub fn new_workspace(docs: Option<NativeDocuments>) -> Either<NativeWorkspace, Failure> {
    let docs = documents(docs);
    let made = std::panic::catch_unwind(|| little_embed::Workspace::new(&docs, Encoding::Utf16));
    match made {
        Ok(Ok(workspace)) => Either::A(NativeWorkspace { shared: Arc::new(Ordered::new(workspace)) }),
        Ok(Err(error)) => Either::B(failure(error)),
        Err(_) => Either::B(internal()),
    }
}

#[napi]
impl NativeWorkspace {
    fn now(&self, call: Call) -> Outcome {
        run(&self.shared, self.shared.ticket(), call)
    }

    fn later(&self, call: Call) -> AsyncTask<WorkspaceTask> {
        let ticket = self.shared.ticket();
        AsyncTask::new(WorkspaceTask { shared: self.shared.clone(), ticket, call: Some(call) })
    }

    #[napi(catch_unwind)]
    pub fn open(&self, path: String, text: String) -> Either<String, Failure> {
        self.now(Call::Open(path, text))
    }

    #[napi(catch_unwind)]
    pub fn update(&self, path: String, edits: Either<String, Vec<NativeEdit>>) -> Either<String, Failure> {
        self.now(Call::Update(path, change(edits)))
    }

    #[napi(catch_unwind)]
    pub fn close(&self, path: String) -> Either<String, Failure> {
        self.now(Call::Close(path))
    }

    #[napi(catch_unwind)]
    pub fn report(&self, path: String) -> Either<String, Failure> {
        self.now(Call::Report(path))
    }

    #[napi(catch_unwind)]
    pub fn text(&self, path: String) -> Either<String, Failure> {
        self.now(Call::Text(path))
    }

    #[napi(catch_unwind)]
    pub fn paths(&self) -> Either<String, Failure> {
        self.now(Call::Paths)
    }

    #[napi(catch_unwind, ts_return_type = "Promise<string | Failure>")]
    pub fn open_async(&self, path: String, text: String) -> AsyncTask<WorkspaceTask> {
        self.later(Call::Open(path, text))
    }

    #[napi(catch_unwind, ts_return_type = "Promise<string | Failure>")]
    pub fn update_async(&self, path: String, edits: Either<String, Vec<NativeEdit>>) -> AsyncTask<WorkspaceTask> {
        self.later(Call::Update(path, change(edits)))
    }

    #[napi(catch_unwind, ts_return_type = "Promise<string | Failure>")]
    pub fn report_async(&self, path: String) -> AsyncTask<WorkspaceTask> {
        self.later(Call::Report(path))
    }
}

// ---------------------------------------------------------------------------------------
// The planner pipeline: plan, fix, verify and events. A plan or fix session runs on a
// thread of its own (it may last minutes: libuv's small pool is left to the checks) and
// settles a promise; events reach JavaScript through a threadsafe function, in order.

/// Hears each event as JSON text.
type EventCallback = ThreadsafeFunction<String, (), String, Status, false>;
/// Asked for a model answer: `{ id, providerId, request }` as JSON text; the JavaScript
/// half answers with [`NativeRun::answer`].
type ModelCallback = ThreadsafeFunction<String, (), String, Status, false>;

/// The host model's requests waiting for their answer, by id.
type Waiting = Arc<Mutex<BTreeMap<u32, mpsc::Sender<Result<String, String>>>>>;

/// One planner call's handle: it cancels the call and carries the host model's answers back.
#[napi]
pub struct NativeRun {
    cancel: Cancel,
    answers: Waiting,
    next: Arc<AtomicU32>,
}

impl Default for NativeRun {
    fn default() -> Self {
        Self::new()
    }
}

#[napi]
impl NativeRun {
    #[napi(constructor)]
    pub fn new() -> NativeRun {
        NativeRun { cancel: Cancel::default(), answers: Arc::default(), next: Arc::default() }
    }

    /// Ends the call: the model call in flight is cut, nothing more is written.
    #[napi]
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// The host model's answer to request `id`: the message as JSON text, or why it failed.
    #[napi]
    pub fn answer(&self, id: u32, ok: bool, text: String) {
        let waiting = self.answers.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&id);
        if let Some(waiting) = waiting {
            let _ = waiting.send(if ok { Ok(text) } else { Err(text) });
        }
    }
}

/// The host model: each request goes to JavaScript, and the answer comes back through
/// [`NativeRun::answer`]; a cancellation stops the wait.
struct JsModel {
    ask: ModelCallback,
    answers: Waiting,
    next: Arc<AtomicU32>,
    cancel: Cancel,
}

impl HostModel for JsModel {
    fn complete(&self, provider_id: &str, body: &Value) -> Result<Value, String> {
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        let (send, receive) = mpsc::channel();
        self.answers.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(id, send);
        let asked = serde_json::json!({ "id": id, "providerId": provider_id, "request": body }).to_string();
        if self.ask.call(asked, ThreadsafeFunctionCallMode::NonBlocking) != Status::Ok {
            return Err("the model function could not be called (node is shutting down)".to_string());
        }
        loop {
            match receive.recv_timeout(std::time::Duration::from_millis(50)) {
                Ok(Ok(text)) => return serde_json::from_str(&text).map_err(|e| format!("its answer is not JSON: {e}")),
                Ok(Err(reason)) => return Err(reason),
                Err(mpsc::RecvTimeoutError::Timeout) if self.cancel.is_cancelled() => {
                    return Err("cancelled".to_string());
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err("no answer came".to_string()),
            }
        }
    }
}

enum PlannerCall {
    Plan(little_embed::planner::PlanCall),
    Fix(little_embed::planner::FixCall),
}

fn start_session(
    env: &Env,
    run: &NativeRun,
    call: Result<PlannerCall, Error>,
    on_event: Option<EventCallback>,
    model: Option<ModelCallback>,
) -> napi::Result<napi::bindgen_prelude::Object<'static>> {
    let (deferred, promise) = env.create_deferred()?;
    let cancel = run.cancel.clone();
    let model = model.map(|ask| JsModel {
        ask,
        answers: run.answers.clone(),
        next: run.next.clone(),
        cancel: run.cancel.clone(),
    });
    std::thread::Builder::new()
        .name("little-planner".into())
        .spawn(move || {
            let outcome = guarded(|| {
                let call = match call {
                    Ok(call) => call,
                    Err(error) => return outcome(Err(error)),
                };
                let on_event = on_event.map(|tsfn| {
                    let tsfn = Arc::new(tsfn);
                    let hook: little_embed::planner::OnEvent = Arc::new(move |event: &Value| {
                        // Blocking: an event is never dropped, whatever the queue holds.
                        tsfn.call(event.to_string(), ThreadsafeFunctionCallMode::Blocking);
                    });
                    hook
                });
                let hooks = little_embed::planner::Hooks {
                    on_event,
                    cancel: Some(&cancel),
                    model: model.as_ref().map(|m| m as &dyn HostModel),
                };
                outcome(match &call {
                    PlannerCall::Plan(call) => little_embed::planner::plan(call, &hooks),
                    PlannerCall::Fix(call) => little_embed::planner::fix(call, &hooks),
                })
            });
            deferred.resolve(move |_| Ok(outcome));
        })
        .map_err(|e| napi::Error::from_reason(format!("cannot start the planner's thread: {e}")))?;
    // SAFETY of the lifetime: the promise object is handed straight back to JavaScript.
    Ok(unsafe {
        std::mem::transmute::<napi::bindgen_prelude::Object<'_>, napi::bindgen_prelude::Object<'static>>(promise)
    })
}

fn options_of(text: &str) -> Result<Value, Error> {
    serde_json::from_str(text).map_err(|e| Error::new("input.invalid", format!("the options are not JSON: {e}"), None))
}

/// `little plan` in process: `options` as JSON text.
#[napi(ts_return_type = "Promise<string | Failure>")]
pub fn plan_async(
    env: Env,
    run: &NativeRun,
    options: String,
    on_event: Option<EventCallback>,
    model: Option<ModelCallback>,
) -> napi::Result<napi::bindgen_prelude::Object<'static>> {
    let call = options_of(&options).and_then(|o| little_embed::planner::PlanCall::from_json(&o)).map(PlannerCall::Plan);
    start_session(&env, run, call, on_event, model)
}

/// `little fix` in process.
#[napi(ts_return_type = "Promise<string | Failure>")]
pub fn fix_async(
    env: Env,
    run: &NativeRun,
    options: String,
    on_event: Option<EventCallback>,
    model: Option<ModelCallback>,
) -> napi::Result<napi::bindgen_prelude::Object<'static>> {
    let call = options_of(&options).and_then(|o| little_embed::planner::FixCall::from_json(&o)).map(PlannerCall::Fix);
    start_session(&env, run, call, on_event, model)
}

/// `little verify` (quick: it reads three files and hashes one).
#[napi(catch_unwind)]
pub fn verify(lwir: String, lock: String, definition: Option<String>) -> Either<String, Failure> {
    guarded(|| {
        outcome(little_embed::planner::verify(
            std::path::Path::new(&lwir),
            std::path::Path::new(&lock),
            definition.as_deref().map(std::path::Path::new),
        ))
    })
}

/// The events of a store on the pool (a database may be slow to answer).
pub struct EventsTask {
    store: String,
    run_id: Option<String>,
}

impl Task for EventsTask {
    type Output = Outcome;
    type JsValue = Outcome;

    fn compute(&mut self) -> napi::Result<Outcome> {
        Ok(guarded(|| outcome(little_embed::planner::events(&self.store, self.run_id.as_deref()).map(Value::Array))))
    }

    fn resolve(&mut self, _: Env, output: Outcome) -> napi::Result<Outcome> {
        Ok(output)
    }
}

#[napi(catch_unwind, ts_return_type = "Promise<string | Failure>")]
pub fn events_async(store: String, run_id: Option<String>) -> AsyncTask<EventsTask> {
    AsyncTask::new(EventsTask { store, run_id })
}
