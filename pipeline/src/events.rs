//! The run event log: JSON Lines, append-only, one event per line.
//!
//! An event is committed when its line, newline included, is on disk: each append is one
//! `write` of the whole line to a file opened with `O_APPEND`, followed by `fsync`. A crash
//! in the middle of a write can only leave a last line without its newline; readers ignore
//! such a torn tail, and the next writer cuts it off before appending. Events carry no
//! wall-clock time: two runs of the same inputs write the same lines (but for the run id).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

pub const SESSION_STARTED: &str = "harness.session.started";
pub const MODEL_CALLED: &str = "harness.model.called";
pub const MODEL_RESPONDED: &str = "harness.model.responded";
pub const MODEL_FAILED: &str = "harness.model.failed";
pub const TOOL_STARTED: &str = "harness.tool_call.started";
pub const TOOL_SUCCEEDED: &str = "harness.tool_call.succeeded";
pub const TOOL_FAILED: &str = "harness.tool_call.failed";
pub const SESSION_COMPLETED: &str = "harness.session.completed";
pub const VERSION_REGISTERED: &str = "WorkflowVersionRegistered";
pub const RUN_FAILED: &str = "RunFailed";

/// The tool events a planner may report (see `planner.rs`).
pub const PLANNER_TOOL_EVENTS: &[&str] = &[TOOL_STARTED, TOOL_SUCCEEDED, TOOL_FAILED];

/// One line of the log.
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

    /// The outer-loop cycle of an event; events written before cycles were recorded are
    /// cycle 1's.
    pub fn cycle(&self) -> u64 {
        self.payload.get("cycle").and_then(Value::as_u64).unwrap_or(1)
    }

    /// The attempt number of a model or tool event.
    pub fn attempt(&self) -> Option<u64> {
        self.payload.get("attempt").and_then(Value::as_u64)
    }
}

/// What reading a log found.
#[derive(Debug, Default)]
pub struct Contents {
    pub events: Vec<Event>,
    /// Length of the committed part: everything up to the last newline.
    pub committed_len: u64,
    /// Bytes of a torn last line (no newline), ignored.
    pub torn_bytes: u64,
}

/// Reads a log; a missing file is an empty log. A committed line that is not an event is
/// an error naming its line: that is not what a crash leaves, so it is never skipped.
pub fn read(path: &Path) -> Result<Contents, String> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Contents::default()),
        Err(e) => return Err(format!("cannot read the event log `{}`: {e}", path.display())),
    };
    let committed_len = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let mut events = Vec::new();
    for (i, line) in bytes[..committed_len].split(|&b| b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let event = serde_json::from_slice::<Value>(line).ok().and_then(Event::from_json).ok_or_else(|| {
            format!(
                "line {} of the event log `{}` is not an event (`{{\"runId\", \"seq\", \"type\", \"payload\"}}`)",
                i + 1,
                path.display()
            )
        })?;
        events.push(event);
    }
    Ok(Contents { events, committed_len: committed_len as u64, torn_bytes: (bytes.len() - committed_len) as u64 })
}

/// A log opened for appending.
pub struct EventLog {
    path: PathBuf,
    file: File,
    pub events: Vec<Event>,
    /// Bytes of a torn last line that opening cut off.
    pub truncated_bytes: u64,
}

impl EventLog {
    /// Opens (creating) a log for this process alone, cutting off a torn last line.
    pub fn open(path: &Path) -> Result<EventLog, String> {
        let cannot = |e: std::io::Error| format!("cannot write the event log `{}`: {e}", path.display());
        let file = OpenOptions::new().create(true).append(true).open(path).map_err(cannot)?;
        lock_exclusively(&file).map_err(|e| match e.kind() {
            std::io::ErrorKind::WouldBlock => {
                format!("the event log `{}` is in use by another `little plan`; wait for it to finish", path.display())
            }
            _ => cannot(e),
        })?;
        let contents = read(path)?;
        if contents.torn_bytes > 0 {
            file.set_len(contents.committed_len).map_err(cannot)?;
            file.sync_all().map_err(cannot)?;
        }
        Ok(EventLog { path: path.to_path_buf(), file, events: contents.events, truncated_bytes: contents.torn_bytes })
    }

    /// The events of one run, in order.
    pub fn run(&self, run_id: &str) -> Vec<&Event> {
        self.events.iter().filter(|e| e.run_id == run_id).collect()
    }

    /// Appends one event of `run_id` and makes it durable before returning.
    pub fn append(&mut self, run_id: &str, kind: &str, payload: Value) -> Result<Event, String> {
        let seq = self.events.iter().filter(|e| e.run_id == run_id).count() as u64 + 1;
        let event = Event { run_id: run_id.to_string(), seq, kind: kind.to_string(), payload };
        let mut line = serde_json::to_string(&event.to_json()).expect("JSON values serialize");
        line.push('\n');
        let cannot = |e: std::io::Error| format!("cannot append to the event log `{}`: {e}", self.path.display());
        // One write of the whole line (O_APPEND): lines of concurrent writers never interleave
        // within a line, and a crash leaves at most this line torn.
        self.file.write_all(line.as_bytes()).map_err(cannot)?;
        self.file.sync_data().map_err(cannot)?;
        self.events.push(event.clone());
        Ok(event)
    }
}

/// An advisory lock held while the file stays open: two writers of one log would number
/// and replay events from different pictures of it.
///
/// A refusal is retried for a moment: a process that forks (to start a planner, say)
/// while the previous writer still had the log open holds the lock too, through the
/// inherited descriptor, until its child execs and the close-on-exec flag drops it.
fn lock_exclusively(file: &File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    const PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);
    let started = std::time::Instant::now();
    loop {
        // SAFETY: flock(2) on a descriptor this `File` owns and keeps open; no memory is shared.
        let result = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if result == 0 {
            return Ok(());
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::WouldBlock || started.elapsed() >= PATIENCE {
            return Err(error);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// One line of `little events` for an event.
pub fn describe(event: &Event) -> String {
    let p = &event.payload;
    let short = |key: &str| p.get(key).and_then(Value::as_str).map(|h| short_hash(h).to_string()).unwrap_or_default();
    // Later cycles are named on every event; cycle 1 only where its session starts.
    let cycle = if event.cycle() > 1 { format!("cycle {} ", event.cycle()) } else { String::new() };
    let attempt = event.attempt().map(|a| format!("{cycle}attempt {a}")).unwrap_or_default();
    let detail = match event.kind.as_str() {
        SESSION_STARTED => format!(
            "role: {}, cycle {}, manifest {}",
            p.get("role").and_then(Value::as_str).unwrap_or("?"),
            event.cycle(),
            short("manifestHash")
        ),
        MODEL_CALLED => attempt,
        MODEL_RESPONDED => {
            let findings = p.get("findings").and_then(Value::as_array).map_or(0, Vec::len);
            let verdict = if p.get("valid").and_then(Value::as_bool) == Some(true) {
                "valid LWIR".to_string()
            } else {
                format!("{findings} finding{}, repair requested", if findings == 1 { "" } else { "s" })
            };
            format!("{attempt}: {verdict}")
        }
        MODEL_FAILED => format!("{attempt}: {}", p.get("reason").and_then(Value::as_str).unwrap_or("?")),
        TOOL_STARTED | TOOL_SUCCEEDED | TOOL_FAILED => format!(
            "{attempt}: {} {} (caller: {})",
            p.get("tool").and_then(Value::as_str).unwrap_or(""),
            p.get("callId").and_then(Value::as_str).unwrap_or(""),
            p.get("caller").and_then(Value::as_str).unwrap_or("model"),
        ),
        SESSION_COMPLETED => format!(
            "{cycle}{} after {} attempt(s)",
            p.get("status").and_then(Value::as_str).unwrap_or("?"),
            p.get("attempts").and_then(Value::as_u64).unwrap_or(0)
        ),
        VERSION_REGISTERED => format!(
            "{cycle}{} ({})",
            p.get("lwirVersionId").and_then(Value::as_str).unwrap_or("?"),
            short("workflowVersionHash")
        ),
        RUN_FAILED => format!("{cycle}cause: {}", p.get("causeCode").and_then(Value::as_str).unwrap_or("?")),
        _ => String::new(),
    };
    if detail.is_empty() { event.kind.clone() } else { format!("{:<28} {detail}", event.kind) }
}

/// `sha256:` and the first 12 hex digits, for people.
fn short_hash(hash: &str) -> &str {
    let end = hash.find(':').map_or(0, |i| i + 1) + 12;
    hash.get(..end).unwrap_or(hash)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("little-events-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("events.jsonl")
    }

    #[test]
    fn appends_number_events_per_run_and_survive_reopening() {
        let path = temp("seq");
        let mut log = EventLog::open(&path).unwrap();
        log.append("a", MODEL_CALLED, json!({"attempt": 1})).unwrap();
        log.append("b", MODEL_CALLED, json!({"attempt": 1})).unwrap();
        let e = log.append("a", MODEL_RESPONDED, json!({"attempt": 1})).unwrap();
        assert_eq!(e.seq, 2);
        drop(log);
        let log = EventLog::open(&path).unwrap();
        assert_eq!(log.run("a").len(), 2);
        assert_eq!(log.run("b")[0].seq, 1);
        assert_eq!(log.truncated_bytes, 0);
    }

    #[test]
    fn a_torn_last_line_is_ignored_by_readers_and_cut_by_writers() {
        let path = temp("torn");
        let mut log = EventLog::open(&path).unwrap();
        log.append("r", SESSION_STARTED, json!({"role": "planner"})).unwrap();
        log.append("r", MODEL_CALLED, json!({"attempt": 1})).unwrap();
        drop(log);
        let good = std::fs::read(&path).unwrap();
        // A crash in the middle of the third line's write.
        let mut torn = good.clone();
        torn.extend_from_slice(br#"{"runId":"r","seq":3,"type":"harness.model.resp"#);
        std::fs::write(&path, &torn).unwrap();

        let contents = read(&path).unwrap();
        assert_eq!(contents.events.len(), 2);
        assert_eq!(contents.torn_bytes, (torn.len() - good.len()) as u64);
        assert_eq!(std::fs::read(&path).unwrap(), torn, "reading never writes");

        let mut log = EventLog::open(&path).unwrap();
        assert_eq!(log.truncated_bytes, contents.torn_bytes);
        assert_eq!(std::fs::read(&path).unwrap(), good, "the torn tail is cut, earlier events kept");
        let e = log.append("r", MODEL_RESPONDED, json!({"attempt": 1})).unwrap();
        assert_eq!(e.seq, 3);
        let events = read(&path).unwrap().events;
        assert_eq!(
            events.iter().map(|e| e.kind.as_str()).collect::<Vec<_>>(),
            [SESSION_STARTED, MODEL_CALLED, MODEL_RESPONDED]
        );
    }

    #[test]
    fn one_writer_at_a_time() {
        let path = temp("lock");
        let first = EventLog::open(&path).unwrap();
        let error = EventLog::open(&path).err().expect("the second writer is refused");
        assert!(error.contains("in use by another"), "{error}");
        assert!(read(&path).is_ok(), "readers are not locked out");
        drop(first);
        assert!(EventLog::open(&path).is_ok());
    }

    #[test]
    fn a_torn_line_that_happens_to_parse_is_still_uncommitted() {
        let path = temp("parses");
        std::fs::write(&path, "{\"runId\":\"r\",\"seq\":1,\"type\":\"x\",\"payload\":{}}").unwrap();
        assert!(read(&path).unwrap().events.is_empty());
    }

    #[test]
    fn a_corrupt_committed_line_is_an_error_with_its_line() {
        let path = temp("corrupt");
        std::fs::write(&path, "{\"runId\":\"r\",\"seq\":1,\"type\":\"x\",\"payload\":{}}\nnot json\n").unwrap();
        let error = read(&path).unwrap_err();
        assert!(error.contains("line 2"), "{error}");
        assert!(EventLog::open(&path).is_err());
    }

    #[test]
    fn describe_names_the_event_and_its_gist() {
        let e = Event {
            run_id: "r".into(),
            seq: 1,
            kind: MODEL_RESPONDED.into(),
            payload: json!({"attempt": 2, "valid": false, "findings": [{}]}),
        };
        assert_eq!(describe(&e), "harness.model.responded      attempt 2: 1 finding, repair requested");
    }

    #[test]
    fn describe_names_a_later_cycle_and_reads_a_missing_cycle_as_the_first() {
        let event = |kind: &str, payload: Value| Event { run_id: "r".into(), seq: 1, kind: kind.into(), payload };
        let legacy = event(SESSION_STARTED, json!({"role": "planner", "manifestHash": "sha256:0123456789abcdef"}));
        assert_eq!(legacy.cycle(), 1);
        assert_eq!(
            describe(&legacy),
            "harness.session.started      role: planner, cycle 1, manifest sha256:0123456789ab"
        );
        let called = event(MODEL_CALLED, json!({"cycle": 3, "attempt": 1}));
        assert_eq!(describe(&called), "harness.model.called         cycle 3 attempt 1");
        let completed = event(SESSION_COMPLETED, json!({"cycle": 2, "status": "succeeded", "attempts": 1}));
        assert_eq!(describe(&completed), "harness.session.completed    cycle 2 succeeded after 1 attempt(s)");
        let first = event(SESSION_COMPLETED, json!({"cycle": 1, "status": "failed", "attempts": 3}));
        assert_eq!(describe(&first), "harness.session.completed    failed after 3 attempt(s)");
    }
}
