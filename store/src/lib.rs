//! The store of a run's history: its events, the lease of its one writer, and the
//! content-addressed blobs of the files its tools wrote, in a JSON Lines file or a
//! PostgreSQL database. It knows nothing about workflows: an event is an envelope
//! (`runId`, `seq`, `type`, `payload`) whose kinds the pipeline gives meaning to.
//!
//! - [`file`]: the JSON Lines log (one writer by `flock`, fsynced appends, torn tails cut),
//!   with its blobs in a folder beside it ([`blobs`]);
//! - [`postgres`]: the same history in a database, shared by many machines: a run is
//!   claimed with a lease whose epoch every append checks in the transaction that writes it;
//! - [`location`]: what `--events` names, and how it is shown (a password never is).
//!
//! Both stores give the same [`RunLog`]; everything above them is written once.

pub mod blobs;
pub mod file;
pub mod location;
pub mod postgres;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Map, Value, json};

pub use location::Location;

/// The longest line an append writes: a provider's response may be 16 MiB, and escaping
/// it as a JSON string can grow it.
pub const MAX_EVENT_BYTES: usize = 48 << 20;

/// The deepest nesting an append writes; the reader (serde_json) reads 128 levels.
pub const MAX_DEPTH: usize = 100;

/// One event of a run, as both stores hold it.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub run_id: String,
    /// 1-based position among the events of its run.
    pub seq: u64,
    pub kind: String,
    pub payload: Value,
}

impl Event {
    pub fn to_json(&self) -> Value {
        json!({ "runId": self.run_id, "seq": self.seq, "type": self.kind, "payload": self.payload })
    }

    /// The event's text, exactly as a file log holds its line (without the newline) and a
    /// database its `body`: `runId` first, keys in the order written, numbers as written.
    pub fn to_text(&self) -> String {
        serde_json::to_string(&self.to_json()).expect("JSON values serialize")
    }

    /// Reads an event's text back; `None` when it is not an event.
    pub fn from_text(text: &[u8]) -> Option<Event> {
        serde_json::from_slice::<Value>(text).ok().and_then(Event::from_json)
    }

    fn from_json(value: Value) -> Option<Event> {
        let Value::Object(mut map) = value else { return None };
        let run_id = map.get("runId")?.as_str()?.to_string();
        let seq = map.get("seq")?.as_u64()?;
        let kind = map.get("type")?.as_str()?.to_string();
        let payload = map.remove("payload").unwrap_or(Value::Object(Map::new()));
        Some(Event { run_id, seq, kind, payload })
    }

    /// A payload field, as a string.
    pub fn str(&self, key: &str) -> Option<&str> {
        self.payload.get(key).and_then(Value::as_str)
    }

    /// A payload field, as an unsigned integer.
    pub fn u64(&self, key: &str) -> Option<u64> {
        self.payload.get(key).and_then(Value::as_u64)
    }
}

/// Why an event cannot be recorded: what the reader could not read back. `None` when it can.
pub fn unrecordable(event: &Event, text: &str) -> Option<String> {
    if depth(&event.payload) > MAX_DEPTH {
        return Some(format!("it is nested deeper than {MAX_DEPTH} levels"));
    }
    if text.len() + 1 > MAX_EVENT_BYTES {
        return Some(format!(
            "it is {} MiB, and an event may be at most {} MiB",
            (text.len() + 1) >> 20,
            MAX_EVENT_BYTES >> 20
        ));
    }
    None
}

/// The nesting depth of a value (a scalar is 0), without recursion.
pub fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((value, level)) = stack.pop() {
        match value {
            Value::Array(items) => {
                deepest = deepest.max(level + 1);
                stack.extend(items.iter().map(|v| (v, level + 1)));
            }
            Value::Object(map) => {
                deepest = deepest.max(level + 1);
                stack.extend(map.values().map(|v| (v, level + 1)));
            }
            _ => {}
        }
    }
    deepest
}

/// How a run is opened for writing.
pub struct OpenOptions<'a> {
    /// How long to wait for another writer of the run to finish.
    pub lock_wait: Duration,
    /// A database store's lease (`--lease`): renewed while the run is open; another worker
    /// may take the run over once it has expired.
    pub lease: Duration,
    /// Told once when the open has to wait.
    pub on_wait: &'a mut dyn FnMut(&str),
    /// Called (on the lease's thread) when another worker took the run over: what this one
    /// has running must stop, since nothing it does can be recorded any more.
    pub on_lost: Option<Box<dyn Fn() + Send + Sync>>,
    /// Where a database run keeps its files on this machine (`.little/runs/<runId>` below
    /// it); `None`: the working directory. A file log keeps them beside itself.
    pub work_dir: Option<PathBuf>,
}

/// A run's history opened by its one writer.
pub trait RunLog: Send {
    /// The store as shown to a person (a database URL without its password).
    fn display(&self) -> &str;

    fn run_id(&self) -> &str;

    /// The run's recorded events, in order.
    fn events(&self) -> &[Event];

    /// The folder on this machine where the run keeps what it works in (its scratch):
    /// `.little/runs/<runId>` beside a file log, in the working directory for a database.
    fn run_dir(&self) -> PathBuf;

    /// Appends an event of the run and makes it durable before returning, unless the
    /// reader could not read it back: `Ok(Err(why))` then, and nothing is written. An
    /// `Err` is a write that failed (the store unreachable past its bound, the run taken
    /// over by another worker).
    fn append_if_recordable(&mut self, kind: &str, payload: Value) -> Result<Result<(), String>, String>;

    /// Appends an event that starts nothing (a model's answer, a tool's end) and returns
    /// before it is durable: it is in the store at once (the file's page cache, the
    /// server's committed transactions), so the writer's own crash does not lose it, and it
    /// is made durable by the next append, which always follows before anything that could
    /// depend on it starts, or by [`RunLog::sync`]. Only the machine's crash (a file log) or
    /// the server's (a database) in between loses it, and then the log holds the call's
    /// start without its end, as after a crash during the call. A turn waits for the disk
    /// twice instead of four times. `Ok(Err(why))` as for an append.
    fn append_unsynced_if_recordable(&mut self, kind: &str, payload: Value) -> Result<Result<(), String>, String>;

    /// Makes the events appended unsynced durable. Dropping the log syncs too, as best it can.
    fn sync(&mut self) -> Result<(), String>;

    /// How many events at the end of [`RunLog::events`] were appended unsynced and are not
    /// yet known to be durable.
    fn unsynced(&self) -> usize;

    /// Stores a file's contents under their `sha256:` identity; durable when it returns.
    fn put_blob(&mut self, bytes: &[u8]) -> Result<String, String>;

    /// The contents stored under an identity, `None` when the store has none.
    fn get_blob(&mut self, digest: &str) -> Result<Option<Vec<u8>>, String>;

    /// Memory stores kept by the store itself (a database), or `None` when they are folders
    /// on this machine (a file log).
    fn shared_memory(&mut self) -> Option<&mut dyn SharedMemory>;

    /// The writer's lease, for a store that has one.
    fn lease(&self) -> Option<Lease>;

    /// What opening found that a person should know (a torn last line cut off).
    fn notes(&self) -> &[String];

    /// The `seq` the next event of the run gets.
    fn next_seq(&self) -> u64 {
        self.events().last().map_or(1, |e| e.seq + 1)
    }

    /// [`RunLog::append_if_recordable`], with an unrecordable event an error.
    fn append(&mut self, kind: &str, payload: Value) -> Result<&Event, String> {
        let appended = self.append_if_recordable(kind, payload)?;
        self.recorded(kind, appended)
    }

    /// [`RunLog::append_unsynced_if_recordable`], with an unrecordable event an error.
    fn append_unsynced(&mut self, kind: &str, payload: Value) -> Result<&Event, String> {
        let appended = self.append_unsynced_if_recordable(kind, payload)?;
        self.recorded(kind, appended)
    }

    /// The event just added, or why it could not be.
    #[doc(hidden)]
    fn recorded(&self, kind: &str, added: Result<(), String>) -> Result<&Event, String> {
        match added {
            Ok(()) => Ok(self.events().last().expect("just added")),
            Err(why) => Err(format!("refused to record a `{kind}` event in the event log `{}`: {why}", self.display())),
        }
    }
}

/// One file of a memory store or of a scratch, as recorded.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FileEntry {
    /// Relative to the store's root, `/`-separated.
    pub path: String,
    /// `sha256:` of the contents, which are a blob.
    pub sha256: String,
    /// The permission bits.
    pub mode: u32,
}

/// What one tool call changed in a memory store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileChange {
    Put(FileEntry),
    Removed(String),
}

/// Memory stores held by the store itself, shared by every run that names them.
pub trait SharedMemory {
    /// A store's files now (`store`: `workflow/<id>`, `org`, `attached/<id>`).
    fn files(&mut self, store: &str) -> Result<Vec<FileEntry>, String>;
    /// Writes a call's changes (their blobs already stored): per file, the last writer wins.
    fn commit(&mut self, store: &str, changes: &[FileChange]) -> Result<(), String>;
}

/// The state of a writer's lease, shared with the thread that renews it.
#[derive(Clone, Debug, Default)]
pub struct Lease {
    lost: Arc<AtomicBool>,
    taken_by: Arc<std::sync::Mutex<Option<String>>>,
}

impl Lease {
    /// Whether another worker took the run over.
    pub fn lost(&self) -> bool {
        self.lost.load(Ordering::SeqCst)
    }

    /// Who took it over, as the store tells it.
    pub fn taken_by(&self) -> Option<String> {
        self.taken_by.lock().ok().and_then(|who| who.clone())
    }

    /// Marks the lease lost (once), saying by whom.
    pub fn mark_lost(&self, by: String) -> bool {
        if let Ok(mut who) = self.taken_by.lock()
            && who.is_none()
        {
            *who = Some(by);
        }
        !self.lost.swap(true, Ordering::SeqCst)
    }
}

/// Opens a run for writing in the store `location` names.
pub fn open_run(location: &Location, run_id: &str, options: OpenOptions<'_>) -> Result<Box<dyn RunLog>, String> {
    match location {
        Location::File(path) => Ok(Box::new(file::EventLog::open(path, run_id, options.lock_wait, options.on_wait)?)),
        Location::Postgres(target) => Ok(Box::new(postgres::PgRunLog::open(target, run_id, options)?)),
    }
}

/// What reading a store found besides its events.
#[derive(Debug, Default)]
pub struct Scan {
    /// Whether the store exists (a file log's file).
    pub exists: bool,
    /// Committed events read.
    pub events: u64,
    /// Bytes of a torn last line (a file log), ignored.
    pub torn_bytes: u64,
}

/// Reads the events of a store in order (of one run, or of every run), each handed to
/// `visit` as it is read, without writing anything.
pub fn scan(
    location: &Location,
    run_id: Option<&str>,
    mut visit: impl FnMut(Event) -> Result<(), String>,
) -> Result<Scan, String> {
    match location {
        Location::File(path) => {
            let scan =
                file::scan(
                    path,
                    |event| {
                        if run_id.is_none_or(|id| event.run_id == id) { visit(event) } else { Ok(()) }
                    },
                )?;
            Ok(Scan { exists: scan.exists, events: scan.events, torn_bytes: scan.torn_bytes })
        }
        Location::Postgres(target) => postgres::scan(target, run_id, &mut visit),
    }
}

/// Hands `visit` each event of a run as it is written, from the first, and returns once
/// `ended` says an event ends the run (or `visit` fails).
pub fn follow(
    location: &Location,
    run_id: &str,
    ended: &dyn Fn(&Event) -> bool,
    visit: &mut dyn FnMut(Event) -> Result<(), String>,
) -> Result<(), String> {
    match location {
        Location::File(path) => file::follow(path, run_id, ended, visit),
        Location::Postgres(target) => postgres::follow(target, run_id, ended, visit),
    }
}

/// The `sha256:` identity of a blob's contents.
pub fn blob_id(bytes: &[u8]) -> String {
    little_hashing::sha256_identity(bytes)
}
