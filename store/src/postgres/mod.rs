//! The store in a PostgreSQL database, shared by the workers of many machines.
//!
//! The schema `little` ([`schema`]) holds each event as the text a file log would hold
//! (`body`, never `jsonb`, which would reorder keys and reformat numbers), keyed by
//! `(run_id, seq)`; the runs' leases; content-addressed blobs; and memory files.
//!
//! One writer a run, fenced: opening claims the run's lease (a new epoch when it takes over
//! an expired one), a thread renews it every third of its length, and every append checks,
//! in the transaction that writes it, that the run's epoch is still this writer's. An
//! append whose connection breaks is retried on a new connection for a bounded time, and
//! is idempotent: an event found committed with the same text was this append's.

mod connect;
pub mod schema;
mod target;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use postgres::fallible_iterator::FallibleIterator;
use postgres::{Client, Statement};
use serde_json::Value;

pub use connect::{connect, describe};
pub use target::{SslMode, Target};

use crate::{Event, FileChange, FileEntry, Lease, OpenOptions, RunLog, Scan, SharedMemory, unrecordable};

/// How long a write keeps trying to reach the database before it fails.
pub const RETRY_BOUND: Duration = Duration::from_secs(30);

/// The channel whose notifications carry the run id of each event written.
const CHANNEL: &str = "little_events";

/// An append's first try, one statement and its own transaction: the run's row locked and
/// its epoch compared, the event inserted only when the epoch is this writer's and the
/// run's last event is the one before it, the followers told. `$7` is the transaction's
/// `synchronous_commit`: `off` for an event appended unsynced (committed without waiting
/// for the server's disk, made durable by the next synchronous commit, which flushes the
/// log of every transaction before it). One round trip where the careful path of a retry
/// takes several.
const APPEND_FENCED: &str = "WITH fence AS (
         SELECT epoch, owner_host, owner_pid FROM little.runs WHERE run_id = $1 FOR UPDATE
     ), commit_mode AS (
         SELECT set_config('synchronous_commit', $7, true)
     ), inserted AS (
         INSERT INTO little.events (run_id, seq, kind, body)
         SELECT $1, $2, $3, $4 FROM fence, commit_mode
         WHERE fence.epoch = $5
           AND coalesce((SELECT max(seq) FROM little.events WHERE run_id = $1), 0) = $2::bigint - 1
         RETURNING 1
     ), told AS (
         SELECT pg_notify($6, left($1, 1000)) FROM inserted
     )
     SELECT epoch, owner_host, owner_pid, (SELECT count(*) FROM inserted), (SELECT count(*) FROM told)
     FROM fence";

/// Why a database operation failed: the connection (worth a new one), or the answer.
enum Failure {
    Broken(String),
    Final(String),
}

impl Failure {
    fn of(error: postgres::Error) -> Failure {
        let said = describe(&error);
        match error.code() {
            // Connection exceptions, the server shutting down or restarting, and a
            // transaction that lost a serialization conflict or a deadlock: worth trying again.
            Some(code) if ["08", "57P", "40001", "40P01"].iter().any(|c| code.code().starts_with(c)) => {
                Failure::Broken(said)
            }
            Some(_) => Failure::Final(said),
            None => Failure::Broken(said),
        }
    }
}

impl From<postgres::Error> for Failure {
    fn from(error: postgres::Error) -> Failure {
        Failure::of(error)
    }
}

/// A connection to the database that is made again when it broke, for a bounded time.
struct Connection {
    target: Target,
    client: Option<Live>,
    bound: Duration,
}

/// A live connection and the statements prepared on it. A statement run by its text is
/// parsed and described by the server first, a round trip of its own each time; the
/// statements of every turn are prepared once a connection.
struct Live {
    client: Client,
    statements: BTreeMap<&'static str, Statement>,
}

impl Live {
    fn new(client: Client) -> Live {
        Live { client, statements: BTreeMap::new() }
    }

    /// `sql` prepared on this connection, once.
    fn prepared(&mut self, sql: &'static str) -> Result<Statement, postgres::Error> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.client.prepare(sql)?;
        self.statements.insert(sql, statement.clone());
        Ok(statement)
    }
}

impl Connection {
    /// Runs `op` on a live connection; a broken connection is replaced and `op` run again
    /// (told by its argument that it is a retry) until `bound` has passed.
    fn run<T>(&mut self, what: &str, mut op: impl FnMut(&mut Live, bool) -> Result<T, Failure>) -> Result<T, String> {
        if let Some(why) = self.target.why_unusable() {
            return Err(why.to_string());
        }
        let started = Instant::now();
        let mut retry = false;
        let mut pause = Duration::from_millis(50);
        loop {
            let outcome = match self.client.as_mut() {
                Some(client) => op(client, retry),
                None => match connect::connect_or_why(&self.target) {
                    Ok(client) => {
                        let live = self.client.insert(Live::new(client));
                        op(live, retry)
                    }
                    Err((why, lasting)) => Err(if lasting { Failure::Final(why) } else { Failure::Broken(why) }),
                },
            };
            match outcome {
                Ok(value) => return Ok(value),
                Err(Failure::Final(why)) => {
                    return Err(format!("cannot {what} in the event store `{}`: {why}", self.target.display()));
                }
                Err(Failure::Broken(why)) => {
                    self.client = None;
                    retry = true;
                    if started.elapsed() + pause > self.bound {
                        return Err(format!(
                            "cannot {what} in the event store `{}`: the database could not be reached for {} s: {why}",
                            self.target.display(),
                            self.bound.as_secs()
                        ));
                    }
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_secs(2));
                }
            }
        }
    }
}

/// Who holds a run, as the database says.
struct Holder {
    epoch: i64,
    host: String,
    pid: i32,
    until: String,
    seconds_left: f64,
}

impl Holder {
    fn who(&self) -> String {
        format!("the worker on `{}` with pid {} (epoch {})", self.host, self.pid, self.epoch)
    }
}

fn holder(client: &mut Client, run_id: &str) -> Result<Option<Holder>, postgres::Error> {
    let row = client.query_opt(
        "SELECT epoch, owner_host, owner_pid, \
                to_char(lease_until AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), \
                extract(epoch FROM lease_until - now())::float8 \
         FROM little.runs WHERE run_id = $1",
        &[&run_id],
    )?;
    Ok(row.map(|row| Holder {
        epoch: row.get(0),
        host: row.get(1),
        pid: row.get(2),
        until: row.get(3),
        seconds_left: row.get(4),
    }))
}

/// This machine's name, for the lease's owner.
fn host_name() -> String {
    let mut buffer = [0u8; 256];
    // SAFETY: gethostname writes at most `len` bytes into the buffer it is given.
    let result = unsafe { libc::gethostname(buffer.as_mut_ptr().cast(), buffer.len()) };
    if result != 0 {
        return "unknown".to_string();
    }
    let end = buffer.iter().position(|b| *b == 0).unwrap_or(buffer.len());
    String::from_utf8_lossy(&buffer[..end]).into_owned()
}

/// What the lease's thread needs to tell the session the run was taken over.
type OnLost = Arc<dyn Fn() + Send + Sync>;

/// A run opened for writing in a database.
pub struct PgRunLog {
    connection: Connection,
    shown: String,
    run_id: String,
    epoch: i64,
    events: Vec<Event>,
    /// How many events at the end of `events` were committed unsynced and are not yet
    /// known to be durable: a retry after the server's crash writes them again.
    unsynced: usize,
    lease: Lease,
    on_lost: Option<OnLost>,
    /// Dropping the sender stops the renewer.
    renewer: Option<(mpsc::Sender<()>, JoinHandle<()>)>,
    notes: Vec<String>,
    /// Where the run keeps its files (`None`: the working directory).
    work_dir: Option<PathBuf>,
}

impl PgRunLog {
    /// Claims `run_id` (waiting up to `lock_wait` for a live lease of another worker), then
    /// reads its events and starts renewing the lease.
    pub fn open(target: &Target, run_id: &str, options: OpenOptions<'_>) -> Result<PgRunLog, String> {
        let shown = target.display();
        let mut client = connect::connect(target)?;
        schema::migrate(&mut client, target)?;
        let cannot = |e: postgres::Error| {
            format!("cannot open the run `{run_id}` in the event store `{shown}`: {}", describe(&e))
        };
        let host = host_name();
        let pid = std::process::id() as i32;
        let lease_seconds = options.lease.as_secs_f64().max(1.0);
        let started = Instant::now();
        let mut told = false;
        let epoch = loop {
            let claimed = client
                .query_opt(
                    "INSERT INTO little.runs AS r (run_id, epoch, owner_host, owner_pid, lease_until) \
                     VALUES ($1, 1, $2, $3, now() + $4::float8 * interval '1 second') \
                     ON CONFLICT (run_id) DO UPDATE SET epoch = r.epoch + 1, owner_host = EXCLUDED.owner_host, \
                         owner_pid = EXCLUDED.owner_pid, lease_until = EXCLUDED.lease_until \
                     WHERE r.lease_until <= now() \
                     RETURNING epoch",
                    &[&run_id, &host, &pid, &lease_seconds],
                )
                .map_err(cannot)?;
            if let Some(row) = claimed {
                break row.get::<_, i64>(0);
            }
            let Some(held) = holder(&mut client, run_id).map_err(cannot)? else { continue };
            let waited = started.elapsed();
            if waited >= options.lock_wait {
                return Err(format!(
                    "the run `{run_id}` in the event store `{shown}` is being written by {}, whose lease ends at {} \
                     (in {:.0} s){}; try again when it has finished, or once its lease has expired",
                    held.who(),
                    held.until,
                    held.seconds_left.max(0.0).ceil(),
                    if options.lock_wait.is_zero() {
                        String::new()
                    } else {
                        format!(", after waiting {} s", options.lock_wait.as_secs())
                    }
                ));
            }
            if !told {
                (options.on_wait)(&format!(
                    "the run `{run_id}` in the event store `{shown}` is being written by {}; waiting up to {} s for it to finish",
                    held.who(),
                    options.lock_wait.as_secs()
                ));
                told = true;
            }
            std::thread::sleep((options.lock_wait - waited).min(Duration::from_millis(200)));
        };
        let events = match load(&mut client, target, run_id) {
            Ok(events) => events,
            Err(why) => {
                // Not kept for its whole lease by a run nobody can write.
                let _ = client.execute(
                    "UPDATE little.runs SET lease_until = now() WHERE run_id = $1 AND epoch = $2",
                    &[&run_id, &epoch],
                );
                return Err(why);
            }
        };
        let lease = Lease::default();
        let on_lost: Option<OnLost> = options.on_lost.map(Arc::from);
        let renewer =
            spawn_renewer(target.clone(), run_id.to_string(), epoch, options.lease, lease.clone(), on_lost.clone());
        Ok(PgRunLog {
            connection: Connection { target: target.clone(), client: Some(Live::new(client)), bound: RETRY_BOUND },
            shown,
            run_id: run_id.to_string(),
            epoch,
            events,
            unsynced: 0,
            lease,
            on_lost,
            renewer: Some(renewer),
            notes: target.notes().to_vec(),
            work_dir: options.work_dir,
        })
    }

    /// The epoch of this writer's lease: 1 for the run's first writer, one more at each takeover.
    pub fn epoch(&self) -> i64 {
        self.epoch
    }

    /// How long a write keeps trying to reach the database (tests shorten it).
    pub fn set_retry_bound(&mut self, bound: Duration) {
        self.connection.bound = bound;
    }

    /// Marks the lease lost and tells the session, once.
    fn lost(&self, by: String) {
        if self.lease.mark_lost(by)
            && let Some(on_lost) = &self.on_lost
        {
            on_lost();
        }
    }

    /// Appends the run's next event, committed synchronously when `sync`, or
    /// `Ok(Err(why))` when the reader could not read it back.
    fn write_event(&mut self, kind: &str, payload: Value, sync: bool) -> Result<Result<(), String>, String> {
        let event = Event { run_id: self.run_id.clone(), seq: self.next_seq(), kind: kind.to_string(), payload };
        let body = event.to_text();
        if let Some(why) = unrecordable(&event, &body) {
            return Ok(Err(why));
        }
        if self.lease.lost() {
            return Err(self.refused(&self.lease.taken_by().unwrap_or_else(|| "another worker".to_string())));
        }
        let (run_id, epoch, seq) = (self.run_id.clone(), self.epoch, event.seq as i64);
        let commit_mode = if sync { "on" } else { "off" };
        // The unsynced events before this one: the server may have lost them in a crash.
        let unsynced = &self.events[self.events.len() - self.unsynced..];
        let mut taken_by = None;
        let outcome = self.connection.run("append an event", |live, retry| {
            if !retry {
                let statement = live.prepared(APPEND_FENCED)?;
                let row = live
                    .client
                    .query_opt(&statement, &[&run_id, &seq, &kind, &body, &epoch, &CHANNEL, &commit_mode])?;
                return match row {
                    Some(row) if row.get::<_, i64>(3) == 1 => Ok(()),
                    // This writer's epoch, but the event before this one is not there (a
                    // server that lost its last commits, behind a pooler that kept the
                    // connection): the careful path writes what is missing.
                    Some(row) if row.get::<_, i64>(0) == epoch => {
                        Err(Failure::Broken("the run's last event is not the one before this append".to_string()))
                    }
                    Some(row) => {
                        let (other, host, pid): (i64, String, i32) = (row.get(0), row.get(1), row.get(2));
                        taken_by = Some(format!("the worker on `{host}` with pid {pid} (epoch {other})"));
                        Err(Failure::Final("taken over".to_string()))
                    }
                    None => {
                        taken_by = Some("nobody: its lease was removed".to_string());
                        Err(Failure::Final("taken over".to_string()))
                    }
                };
            }
            let mut tx = live.client.transaction()?;
            // The run's row locked: no other append of the run is in flight, not even this
            // writer's last try, should the server still be finishing it.
            let row = tx.query_opt(
                "SELECT epoch, owner_host, owner_pid FROM little.runs WHERE run_id = $1 FOR UPDATE",
                &[&run_id],
            )?;
            // The last try may have committed before its connection broke, and a server
            // that crashed may have lost unsynced commits: each pending event is either
            // there, exactly, or written now, in order.
            let pending: Vec<(i64, &str, String)> =
                unsynced.iter().chain([&event]).map(|e| (e.seq as i64, e.kind.as_str(), e.to_text())).collect();
            let first = pending[0].0;
            let found = tx.query(
                "SELECT seq, body FROM little.events WHERE run_id = $1 AND seq >= $2 ORDER BY seq",
                &[&run_id, &first],
            )?;
            for (row, (seq, _, body)) in found.iter().zip(&pending) {
                if row.get::<_, i64>(0) != *seq || row.get::<_, &str>(1) != body.as_str() {
                    return Err(Failure::Final(format!(
                        "the run `{run_id}` already has another event at seq {}",
                        row.get::<_, i64>(0)
                    )));
                }
            }
            if found.len() > pending.len() {
                let seq: i64 = found[pending.len()].get(0);
                return Err(Failure::Final(format!("the run `{run_id}` already has another event at seq {seq}")));
            }
            if found.len() == pending.len() {
                return Ok(());
            }
            match row {
                Some(row) if row.get::<_, i64>(0) == epoch => {}
                Some(row) => {
                    let (other, host, pid): (i64, String, i32) = (row.get(0), row.get(1), row.get(2));
                    taken_by = Some(format!("the worker on `{host}` with pid {pid} (epoch {other})"));
                    return Err(Failure::Final("taken over".to_string()));
                }
                None => {
                    taken_by = Some("nobody: its lease was removed".to_string());
                    return Err(Failure::Final("taken over".to_string()));
                }
            }
            for (seq, kind, body) in &pending[found.len()..] {
                tx.execute(
                    "INSERT INTO little.events (run_id, seq, kind, body) VALUES ($1, $2, $3, $4)",
                    &[&run_id, seq, kind, body],
                )?;
            }
            // Followers read again on any notification; the run id (cut to fit the 8000 bytes a
            // payload may hold) only says which run moved.
            tx.execute("SELECT pg_notify($1, left($2, 1000))", &[&CHANNEL, &run_id])?;
            tx.commit()?;
            Ok(())
        });
        if let Some(by) = taken_by {
            let refused = self.refused(&by);
            self.lost(by);
            return Err(refused);
        }
        outcome?;
        self.events.push(event);
        self.unsynced = if sync { 0 } else { self.unsynced + 1 };
        Ok(Ok(()))
    }

    fn refused(&self, by: &str) -> String {
        format!(
            "the run `{}` in the event store `{}` was taken over by {by}: this worker's lease (epoch {}) is lost, \
             so it stops; nothing more it does is recorded",
            self.run_id, self.shown, self.epoch
        )
    }
}

/// Reads a run's events, checking that their `seq` rises by one from 1.
fn load(client: &mut Client, target: &Target, run_id: &str) -> Result<Vec<Event>, String> {
    let rows = client.query("SELECT seq, body FROM little.events WHERE run_id = $1 ORDER BY seq", &[&run_id]).map_err(
        |e| format!("cannot read the run `{run_id}` in the event store `{}`: {}", target.display(), describe(&e)),
    )?;
    let mut events = Vec::with_capacity(rows.len());
    for row in rows {
        let seq: i64 = row.get(0);
        let body: &str = row.get(1);
        events.push(checked_event(target, run_id, seq, body, events.len() as u64 + 1)?);
    }
    Ok(events)
}

/// An event's row read back: its text must be an event of the run at the `seq` expected.
fn checked_event(target: &Target, run_id: &str, seq: i64, body: &str, expected: u64) -> Result<Event, String> {
    let changed = |what: String| {
        format!(
            "the event store `{}`: run `{run_id}` {what} — the events were changed by something other than `little`",
            target.display()
        )
    };
    let event = Event::from_text(body.as_bytes())
        .ok_or_else(|| changed(format!("has a row (seq {seq}) that is not an event")))?;
    if event.run_id != run_id || event.seq as i64 != seq {
        return Err(changed(format!("has a row (seq {seq}) whose text is of another run or seq")));
    }
    if event.seq != expected {
        return Err(changed(format!(
            "has seq {seq} where {expected} was expected (an event was {})",
            if event.seq < expected { "duplicated" } else { "lost" }
        )));
    }
    Ok(event)
}

fn spawn_renewer(
    target: Target,
    run_id: String,
    epoch: i64,
    length: Duration,
    lease: Lease,
    on_lost: Option<OnLost>,
) -> (mpsc::Sender<()>, JoinHandle<()>) {
    let (stop, stopped) = mpsc::channel::<()>();
    let seconds = length.as_secs_f64().max(1.0);
    let every = Duration::from_secs_f64(seconds / 3.0);
    let handle = std::thread::spawn(move || {
        let mut client: Option<Client> = None;
        loop {
            match stopped.recv_timeout(every) {
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                _ => return,
            }
            if client.is_none() {
                // Unreachable for now: the appends will say so; try again at the next turn.
                client = connect::connect(&target).ok();
            }
            let Some(live) = client.as_mut() else { continue };
            let renewed = live.execute(
                "UPDATE little.runs SET lease_until = now() + $3::float8 * interval '1 second' \
                 WHERE run_id = $1 AND epoch = $2",
                &[&run_id, &epoch, &seconds],
            );
            match renewed {
                Ok(1) => {}
                Ok(_) => {
                    let by = match holder(live, &run_id) {
                        Ok(Some(held)) => held.who(),
                        _ => "another worker".to_string(),
                    };
                    if lease.mark_lost(by)
                        && let Some(on_lost) = &on_lost
                    {
                        on_lost();
                    }
                    return;
                }
                Err(_) => client = None,
            }
        }
    });
    (stop, handle)
}

impl Drop for PgRunLog {
    fn drop(&mut self) {
        // Unsynced events are made durable while the lease is still this writer's.
        let _ = self.sync();
        if let Some((stop, handle)) = self.renewer.take() {
            drop(stop);
            let _ = handle.join();
        }
        // Let a waiting worker in at once; only while the lease is still this writer's. A
        // broken connection gets one quick new try; failing that, the lease just expires.
        if self.lease.lost() {
            return;
        }
        let release = |client: &mut Client| {
            client
                .execute(
                    "UPDATE little.runs SET lease_until = now() WHERE run_id = $1 AND epoch = $2",
                    &[&self.run_id, &self.epoch],
                )
                .is_ok()
        };
        if self.connection.client.as_mut().is_some_and(|live| release(&mut live.client)) {
            return;
        }
        let mut quick = self.connection.target.clone();
        quick.connect_timeout = quick.connect_timeout.min(Duration::from_secs(2));
        if let Ok(mut client) = connect::connect(&quick) {
            release(&mut client);
        }
    }
}

impl RunLog for PgRunLog {
    fn display(&self) -> &str {
        &self.shown
    }

    fn run_id(&self) -> &str {
        &self.run_id
    }

    fn events(&self) -> &[Event] {
        &self.events
    }

    fn run_dir(&self) -> PathBuf {
        let here =
            self.work_dir.clone().unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")));
        here.join(".little").join("runs").join(&self.run_id)
    }

    fn append_if_recordable(&mut self, kind: &str, payload: Value) -> Result<Result<(), String>, String> {
        self.write_event(kind, payload, true)
    }

    fn append_unsynced_if_recordable(&mut self, kind: &str, payload: Value) -> Result<Result<(), String>, String> {
        self.write_event(kind, payload, false)
    }

    fn sync(&mut self) -> Result<(), String> {
        if self.unsynced == 0 {
            return Ok(());
        }
        // A transaction that writes nothing does not wait for the disk: the lease's row
        // rewritten by its owner does, and flushes every commit before it. The events
        // themselves are checked by the append after a broken connection, not here.
        let (run_id, epoch) = (self.run_id.clone(), self.epoch);
        let touched = self.connection.run("sync the run's events", |live, _| {
            let statement = live.prepared("UPDATE little.runs SET epoch = epoch WHERE run_id = $1 AND epoch = $2")?;
            Ok(live.client.execute(&statement, &[&run_id, &epoch])?)
        })?;
        if touched == 0 {
            let refused = self.refused("another worker");
            self.lost("another worker".to_string());
            return Err(refused);
        }
        self.unsynced = 0;
        Ok(())
    }

    fn unsynced(&self) -> usize {
        self.unsynced
    }

    fn put_blob(&mut self, bytes: &[u8]) -> Result<String, String> {
        let digest = crate::blob_id(bytes);
        self.connection.run("store a blob", |live, _| {
            let statement = live
                .prepared("INSERT INTO little.blobs (sha256, bytes) VALUES ($1, $2) ON CONFLICT (sha256) DO NOTHING")?;
            live.client.execute(&statement, &[&digest, &bytes])?;
            Ok(())
        })?;
        Ok(digest)
    }

    fn get_blob(&mut self, digest: &str) -> Result<Option<Vec<u8>>, String> {
        let hex = digest.strip_prefix("sha256:").filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()));
        if hex.is_none() {
            return Err(format!("`{digest}` is not a blob's identity (`sha256:` and 64 hex digits)"));
        }
        self.connection.run("read a blob", |live, _| {
            let statement = live.prepared("SELECT bytes FROM little.blobs WHERE sha256 = $1")?;
            let row = live.client.query_opt(&statement, &[&digest])?;
            Ok(row.map(|row| row.get::<_, Vec<u8>>(0)))
        })
    }

    fn shared_memory(&mut self) -> Option<&mut dyn SharedMemory> {
        Some(self)
    }

    fn lease(&self) -> Option<Lease> {
        Some(self.lease.clone())
    }

    fn notes(&self) -> &[String] {
        &self.notes
    }
}

impl SharedMemory for PgRunLog {
    fn files(&mut self, store: &str) -> Result<Vec<FileEntry>, String> {
        self.connection.run("read a memory store", |live, _| {
            let rows = live.client.query(
                "SELECT path, sha256, mode FROM little.memory_files WHERE store = $1 ORDER BY path",
                &[&store],
            )?;
            Ok(rows
                .iter()
                .map(|row| FileEntry { path: row.get(0), sha256: row.get(1), mode: row.get::<_, i32>(2) as u32 })
                .collect())
        })
    }

    fn commit(&mut self, store: &str, changes: &[FileChange]) -> Result<(), String> {
        // Upserts and deletes: running the whole commit again after a broken connection
        // leaves what running it once would.
        self.connection.run("write a memory store", |live, _| {
            let mut tx = live.client.transaction()?;
            for change in changes {
                match change {
                    FileChange::Put(entry) => {
                        tx.execute(
                            "INSERT INTO little.memory_files (store, path, sha256, mode) VALUES ($1, $2, $3, $4) \
                             ON CONFLICT (store, path) DO UPDATE SET sha256 = EXCLUDED.sha256, mode = EXCLUDED.mode",
                            &[&store, &entry.path, &entry.sha256, &(entry.mode as i32)],
                        )?;
                    }
                    FileChange::Removed(path) => {
                        tx.execute("DELETE FROM little.memory_files WHERE store = $1 AND path = $2", &[&store, path])?;
                    }
                }
            }
            tx.commit()?;
            Ok(())
        })
    }
}

/// Reads the events of one run (by `seq`) or of every run (in the order they were
/// written), without writing anything. A database without the schema has no events.
pub fn scan(
    target: &Target,
    run_id: Option<&str>,
    visit: &mut dyn FnMut(Event) -> Result<(), String>,
) -> Result<Scan, String> {
    let mut client = connect::connect(target)?;
    let cannot = |e: postgres::Error| format!("cannot read the event store `{}`: {}", target.display(), describe(&e));
    let Some(version) = schema::version(&mut client, target)? else { return Ok(Scan::default()) };
    if version > schema::VERSION {
        return Err(format!(
            "the event store `{}` has version {version} of the `little` schema, newer than this `little` knows \
             (version {}): use a newer `little` with it",
            target.display(),
            schema::VERSION
        ));
    }
    schema::check_tables(&mut client, target)?;
    let mut scan = Scan { exists: true, ..Scan::default() };
    let mut last_seq: BTreeMap<String, u64> = BTreeMap::new();
    let mut tx = client.transaction().map_err(cannot)?;
    let portal = match run_id {
        Some(id) => tx.bind("SELECT run_id, seq, body FROM little.events WHERE run_id = $1 ORDER BY seq", &[&id]),
        None => tx.bind("SELECT run_id, seq, body FROM little.events ORDER BY id", &[]),
    }
    .map_err(cannot)?;
    loop {
        let rows = tx.query_portal(&portal, 1000).map_err(cannot)?;
        if rows.is_empty() {
            break;
        }
        for row in rows {
            let (run, seq, body): (String, i64, String) = (row.get(0), row.get(1), row.get(2));
            let expected = last_seq.get(&run).map_or(1, |s| s + 1);
            let event = checked_event(target, &run, seq, &body, expected)?;
            last_seq.insert(run, event.seq);
            scan.events += 1;
            visit(event)?;
        }
    }
    Ok(scan)
}

/// Hands `visit` each event of `run_id` as it is written, from the first, until `ended`
/// says one ends the run: listens for the notification of each append, and reads again at
/// least every second should one be missed. Waits for a run (or a schema) not there yet.
pub fn follow(
    target: &Target,
    run_id: &str,
    ended: &dyn Fn(&Event) -> bool,
    visit: &mut dyn FnMut(Event) -> Result<(), String>,
) -> Result<(), String> {
    let mut connection = Connection { target: target.clone(), client: None, bound: RETRY_BOUND };
    let mut next: u64 = 1;
    let mut listening = false;
    loop {
        let rows = connection.run("follow a run", |live, retry| {
            let client = &mut live.client;
            if retry || !listening {
                client.batch_execute(&format!("LISTEN {CHANNEL}"))?;
                listening = true;
            }
            if client.query_one("SELECT to_regclass('little.events') IS NOT NULL", &[])?.get::<_, bool>(0) {
                let rows = client.query(
                    "SELECT seq, body FROM little.events WHERE run_id = $1 AND seq >= $2 ORDER BY seq",
                    &[&run_id, &(next as i64)],
                )?;
                Ok(rows.iter().map(|row| (row.get::<_, i64>(0), row.get::<_, String>(1))).collect::<Vec<_>>())
            } else {
                Ok(Vec::new())
            }
        })?;
        for (seq, body) in rows {
            let event = checked_event(target, run_id, seq, &body, next)?;
            next += 1;
            let last = ended(&event);
            visit(event)?;
            if last {
                return Ok(());
            }
        }
        let broken = match connection.client.as_mut() {
            Some(live) => {
                let mut notifications = live.client.notifications();
                // Wait for one, or a second; then take whatever else is already there.
                let waited = notifications.timeout_iter(Duration::from_secs(1)).next();
                while let Ok(Some(_)) = notifications.iter().next() {}
                waited.is_err()
            }
            None => false,
        };
        if broken {
            connection.client = None;
            listening = false;
        }
    }
}
