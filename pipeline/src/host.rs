//! What a host program (`embed`, the npm and Python packages) gives a session besides the
//! command line's settings: providers as values, a model it answers itself, a
//! cancellation, and a hook that hears each event as it is written.

use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use little_provider::{Client, Completion, Progress, ProviderConfig, ProviderError};
use little_store::{Event, Lease, RunLog, SharedMemory};
use serde_json::Value;

/// A provider given as a value: its table and its key, held in memory only (never in a
/// message, a log line or an event; its `Debug` says only whether there is one).
#[derive(Clone)]
pub struct GivenProvider {
    pub config: ProviderConfig,
    pub key: Option<String>,
}

impl fmt::Debug for GivenProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GivenProvider").field("config", &self.config).field("has_key", &self.key.is_some()).finish()
    }
}

/// A model the host answers itself: it gets each request (the Chat Completions body,
/// `messages` and `tools` in it) and returns the assistant message, as a provider would.
/// A replayed call never reaches it.
pub trait HostModel: Send + Sync {
    /// `Ok` holds `{ content?, tool_calls?, usage? }` (`tool_calls` as the API writes them;
    /// `arguments` a string or an object); `Err` is why the call failed.
    fn complete(&self, provider_id: &str, body: &Value) -> Result<Value, String>;
}

/// Whoever answers a session's model calls: a provider's client, or the host.
pub enum Caller<'a> {
    Provider(Client),
    Host { model: &'a dyn HostModel, provider_id: String },
}

/// Why a model call gave no answer.
pub enum CallFailed {
    Cancelled,
    /// Why, as the log records it.
    Failed(String),
}

impl Caller<'_> {
    pub fn complete(&self, body: &Value, progress: &mut dyn FnMut(Progress<'_>)) -> Result<Completion, CallFailed> {
        match self {
            Caller::Provider(client) => client.complete(body, progress).map_err(|error| match error {
                ProviderError::Cancelled => CallFailed::Cancelled,
                other => CallFailed::Failed(other.to_string()),
            }),
            Caller::Host { model, provider_id } => {
                let answer = model
                    .complete(provider_id, body)
                    .map_err(|reason| CallFailed::Failed(format!("the host's model function failed: {reason}")))?;
                if !answer.is_object() {
                    return Err(CallFailed::Failed(
                        "the host's model function returned something other than an object".to_string(),
                    ));
                }
                let usage = answer.get("usage").cloned().unwrap_or(Value::Null);
                let finish_reason = answer.get("finish_reason").and_then(Value::as_str).map(str::to_string);
                Ok(Completion { message: answer, usage, finish_reason, tries: 1, streamed: false })
            }
        }
    }

    /// Ends the call in flight when `cancel` fires (a provider's connection is shut down;
    /// a host's function is the host's to stop).
    pub fn end_on(&self, cancel: &Cancel) {
        if let Caller::Provider(client) = self {
            let canceller = client.canceller();
            cancel.on_cancel(Box::new(move || canceller.cancel()));
        }
    }
}

type Hook = Box<dyn FnOnce() + Send>;

/// Cancels a session from another thread: the model call or bash call in flight is ended,
/// no further call starts, and the log is left as a crash would leave it (the call in flight
/// announced, its end not written), so that the run resumes. Clones share one state.
#[derive(Clone, Default)]
pub struct Cancel {
    inner: Arc<CancelState>,
}

#[derive(Default)]
struct CancelState {
    cancelled: AtomicBool,
    hooks: Mutex<Vec<Hook>>,
}

impl fmt::Debug for Cancel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cancel").field("cancelled", &self.is_cancelled()).finish()
    }
}

impl Cancel {
    pub fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::SeqCst);
        let hooks = std::mem::take(&mut *self.inner.hooks.lock().unwrap_or_else(PoisonError::into_inner));
        for hook in hooks {
            hook();
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst)
    }

    /// A sandbox abort that this cancellation fires: the bash call in flight is killed at
    /// once (its process group, cgroup and namespace alone, not other sessions' calls).
    pub fn sandbox_abort(&self) -> little_sandbox::Abort {
        let abort = little_sandbox::Abort::new();
        let fired = abort.clone();
        self.on_cancel(Box::new(move || fired.abort()));
        abort
    }

    /// Runs `hook` on cancellation (at once when it already happened).
    pub fn on_cancel(&self, hook: Hook) {
        let mut hooks = self.inner.hooks.lock().unwrap_or_else(PoisonError::into_inner);
        if self.is_cancelled() {
            drop(hooks);
            hook();
        } else {
            hooks.push(hook);
        }
    }
}

/// What a host gives the built-in harness; the command line gives none of it.
#[derive(Clone, Copy, Default)]
pub struct Host<'a> {
    /// Providers by id, used instead of `little.toml`'s when given.
    pub providers: &'a [GivenProvider],
    /// Answers every model call of the session instead of a provider.
    pub model: Option<&'a dyn HostModel>,
    pub cancel: Option<&'a Cancel>,
}

impl fmt::Debug for Host<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Host")
            .field("providers", &self.providers)
            .field("model", &self.model.is_some())
            .field("cancel", &self.cancel)
            .finish()
    }
}

impl Host<'_> {
    pub fn cancelled(&self) -> bool {
        self.cancel.is_some_and(Cancel::is_cancelled)
    }
}

/// Hears every event of a run as it is appended (in the store: durable, or for an event that
/// ends a call, durable with the next), on the writer's thread.
pub type EventHook = Arc<dyn Fn(&Event) + Send + Sync>;

/// A run's log that tells a hook of each event it appends.
pub(crate) struct Heard {
    pub(crate) log: Box<dyn RunLog>,
    pub(crate) hook: EventHook,
}

impl Heard {
    /// Tells the hook of the event just appended, if one was.
    fn tell(&self, appended: &Result<(), String>) {
        if appended.is_ok()
            && let Some(event) = self.log.events().last()
        {
            (self.hook)(event);
        }
    }
}

impl RunLog for Heard {
    fn display(&self) -> &str {
        self.log.display()
    }

    fn run_id(&self) -> &str {
        self.log.run_id()
    }

    fn events(&self) -> &[Event] {
        self.log.events()
    }

    fn run_dir(&self) -> PathBuf {
        self.log.run_dir()
    }

    fn append_if_recordable(&mut self, kind: &str, payload: Value) -> Result<Result<(), String>, String> {
        let appended = self.log.append_if_recordable(kind, payload)?;
        self.tell(&appended);
        Ok(appended)
    }

    fn append_unsynced_if_recordable(&mut self, kind: &str, payload: Value) -> Result<Result<(), String>, String> {
        let appended = self.log.append_unsynced_if_recordable(kind, payload)?;
        self.tell(&appended);
        Ok(appended)
    }

    fn sync(&mut self) -> Result<(), String> {
        self.log.sync()
    }

    fn unsynced(&self) -> usize {
        self.log.unsynced()
    }

    fn put_blob(&mut self, bytes: &[u8]) -> Result<String, String> {
        self.log.put_blob(bytes)
    }

    fn get_blob(&mut self, digest: &str) -> Result<Option<Vec<u8>>, String> {
        self.log.get_blob(digest)
    }

    fn shared_memory(&mut self) -> Option<&mut dyn SharedMemory> {
        self.log.shared_memory()
    }

    fn lease(&self) -> Option<Lease> {
        self.log.lease()
    }

    fn notes(&self) -> &[String] {
        self.log.notes()
    }
}
