//! The run event log: JSON Lines, append-only, one event per line.
//!
//! An event is committed when its line, newline included, is on disk: each append is one
//! `write` of the whole line to a file opened with `O_APPEND`, followed by `fsync`. A crash
//! in the middle of a write can only leave a last line without its newline; readers report
//! and ignore such a torn tail, and the next writer cuts it off before appending. Anything
//! else that is not an event — a broken line in the middle, a `seq` that does not rise by
//! one, a file that never was a log — is an error naming its line, and a writer leaves
//! such a file as it found it.
//!
//! What is written is always readable: an event deeper than [`crate::MAX_DEPTH`] or longer than
//! [`MAX_EVENT_BYTES`] is refused at `append`, so one run cannot poison a shared log.
//!
//! The blobs of a file log (the files a run's tools wrote) live in `.little/blobs/` beside
//! it ([`crate::blobs`]).

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::blobs::BlobFolder;
use crate::{Event, Lease, MAX_EVENT_BYTES, RunLog, SharedMemory, unrecordable};

/// How every log line begins: `Event::to_json` writes `runId` first. A file that does not
/// begin so was never written by `little`.
const LINE_START: &[u8] = b"{\"runId\":";

/// What reading a log found besides its events.
#[derive(Debug, Default)]
pub struct Scan {
    /// Whether the file exists.
    pub exists: bool,
    /// Length of the committed part: everything up to the last newline.
    pub committed_len: u64,
    /// Bytes of a torn last line (no newline), ignored.
    pub torn_bytes: u64,
    /// Committed events read.
    pub events: u64,
}

/// Reads a log event by event without holding it: `visit` gets each committed event in
/// order. A missing file is an empty log. Checks that the file is a log, that every
/// committed line is an event and that each run's `seq` rises by one from 1.
pub fn scan(path: &Path, mut visit: impl FnMut(Event) -> Result<(), String>) -> Result<Scan, String> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Scan::default()),
        Err(e) => return Err(format!("cannot read the event log `{}`: {e}", path.display())),
    };
    let cannot = |e: std::io::Error| format!("cannot read the event log `{}`: {e}", path.display());
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut scan = Scan { exists: true, ..Scan::default() };
    let mut last_seq: HashMap<String, u64> = HashMap::new();
    let mut line = Vec::new();
    let mut line_number = 0u64;
    loop {
        line.clear();
        line_number += 1;
        // One byte past the longest line an append writes tells an overlong line apart.
        let read = (&mut reader).take(MAX_EVENT_BYTES as u64 + 2).read_until(b'\n', &mut line).map_err(cannot)?;
        if read == 0 {
            break;
        }
        if line_number == 1 && !starts_as_log(&line) {
            return Err(not_a_log(path));
        }
        if line.last() != Some(&b'\n') {
            if line.len() > MAX_EVENT_BYTES + 1 {
                return Err(format!(
                    "line {line_number} of the event log `{}` is longer than {} MiB: not an event",
                    path.display(),
                    MAX_EVENT_BYTES >> 20
                ));
            }
            scan.torn_bytes = line.len() as u64;
            break;
        }
        scan.committed_len += line.len() as u64;
        let text = &line[..line.len() - 1];
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let event = Event::from_text(text).ok_or_else(|| {
            format!(
                "line {line_number} of the event log `{}` is not an event (`{{\"runId\", \"seq\", \"type\", \"payload\"}}`): \
                 the log was changed by something other than `little`",
                path.display()
            )
        })?;
        let expected = last_seq.get(&event.run_id).map_or(1, |seq| seq + 1);
        if event.seq != expected {
            return Err(format!(
                "line {line_number} of the event log `{}`: run `{}` has seq {} where {expected} was expected \
                 (an event was {} — the log was changed by something other than `little`)",
                path.display(),
                event.run_id,
                event.seq,
                if event.seq < expected { "duplicated" } else { "lost" },
            ));
        }
        last_seq.insert(event.run_id.clone(), event.seq);
        scan.events += 1;
        visit(event)?;
    }
    Ok(scan)
}

/// Whether the first line of a file can be the start of a log line (a torn first line
/// may be shorter than the prefix).
fn starts_as_log(first: &[u8]) -> bool {
    let n = first.len().min(LINE_START.len());
    first[..n] == LINE_START[..n] && (first.len() >= LINE_START.len() || first.last() != Some(&b'\n'))
}

fn not_a_log(path: &Path) -> String {
    format!(
        "`{}` is not an event log of `little` (its first line is not an event); it was left as it is: \
         name a new file or an existing log with `--events`",
        path.display()
    )
}

/// What reading a whole log found.
#[derive(Debug, Default)]
pub struct Contents {
    pub events: Vec<Event>,
    /// Length of the committed part: everything up to the last newline.
    pub committed_len: u64,
    /// Bytes of a torn last line (no newline), ignored.
    pub torn_bytes: u64,
}

/// Reads a whole log into memory (tests, small logs); see [`scan`].
pub fn read(path: &Path) -> Result<Contents, String> {
    let mut events = Vec::new();
    let scan = scan(path, |event| {
        events.push(event);
        Ok(())
    })?;
    Ok(Contents { events, committed_len: scan.committed_len, torn_bytes: scan.torn_bytes })
}

/// A log opened for appending the events of one run.
pub struct EventLog {
    path: PathBuf,
    file: File,
    run_id: String,
    /// The run's recorded events, in order.
    pub events: Vec<Event>,
    /// Bytes of a torn last line that opening cut off.
    pub truncated_bytes: u64,
    /// Length of the file: what an append that fails halfway is cut back to.
    len: u64,
    /// How many of the last events are written but not yet synced.
    unsynced: usize,
    display: String,
    blobs: BlobFolder,
    notes: Vec<String>,
}

impl EventLog {
    /// Opens (creating) a log to append events of `run_id`, for this process alone: when
    /// another `little` writes it, waits up to `wait` for it to finish (telling `on_wait`
    /// once), then refuses. Cuts off a torn last line; refuses, untouched, a file that is
    /// not a log.
    pub fn open(path: &Path, run_id: &str, wait: Duration, on_wait: &mut dyn FnMut(&str)) -> Result<EventLog, String> {
        let cannot = |e: std::io::Error| format!("cannot write the event log `{}`: {e}", path.display());
        // Check before creating or locking: a file that is not a log is never opened for writing.
        scan_prefix(path)?;
        let file = OpenOptions::new().create(true).append(true).open(path).map_err(cannot)?;
        lock_exclusively(&file, wait, &mut || {
            on_wait(&format!(
                "the event log `{}` is being written by another `little`; waiting up to {} s for it to finish",
                path.display(),
                wait.as_secs()
            ))
        })
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::WouldBlock => format!(
                "the event log `{}` is still being written by another `little` after {} s; \
                 try again when it has finished",
                path.display(),
                wait.as_secs()
            ),
            _ => cannot(e),
        })?;
        let mut events = Vec::new();
        let scan = scan(path, |event| {
            if event.run_id == run_id {
                events.push(event);
            }
            Ok(())
        })?;
        if scan.torn_bytes > 0 {
            file.set_len(scan.committed_len).map_err(cannot)?;
            file.sync_all().map_err(cannot)?;
        }
        let mut notes = Vec::new();
        if scan.torn_bytes > 0 {
            notes.push(format!(
                "warning: the event log `{}` ended in a torn line ({} bytes, from an interrupted write); it was cut off",
                path.display(),
                scan.torn_bytes
            ));
        }
        Ok(EventLog {
            path: path.to_path_buf(),
            file,
            run_id: run_id.to_string(),
            events,
            truncated_bytes: scan.torn_bytes,
            len: scan.committed_len,
            unsynced: 0,
            display: path.display().to_string(),
            blobs: BlobFolder::beside(path),
            notes,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends the run's next event in one write of its line, synced when `sync` (with the
    /// lines written before it), or `Ok(Err(why))` when the reader could not read it back.
    fn write_event(&mut self, kind: &str, payload: Value, sync: bool) -> Result<Result<(), String>, String> {
        let event = Event { run_id: self.run_id.clone(), seq: self.next_seq(), kind: kind.to_string(), payload };
        let mut line = event.to_text();
        if let Some(why) = unrecordable(&event, &line) {
            return Ok(Err(why));
        }
        line.push('\n');
        // One write of the whole line (O_APPEND): a crash leaves at most this line torn.
        let written =
            self.file.write_all(line.as_bytes()).and_then(|()| if sync { self.file.sync_data() } else { Ok(()) });
        if let Err(e) = written {
            // A full disk may have taken part of the line: cut it so the log stays whole.
            let _ = self.file.set_len(self.len);
            return Err(self.cannot(e));
        }
        self.len += line.len() as u64;
        self.events.push(event);
        self.unsynced = if sync { 0 } else { self.unsynced + 1 };
        Ok(Ok(()))
    }

    fn cannot(&self, e: std::io::Error) -> String {
        format!("cannot append to the event log `{}`: {e}", self.path.display())
    }

    pub fn run_id(&self) -> &str {
        &self.run_id
    }
}

impl Drop for EventLog {
    fn drop(&mut self) {
        // The machine may stop right after the process: what it wrote unsynced is synced now.
        let _ = self.sync();
    }
}

/// `.little/runs/<runId>` in a log's folder: what a run keeps beside its log.
pub fn run_dir(log: &Path, run_id: &str) -> PathBuf {
    let folder = log.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    folder.join(".little").join("runs").join(run_id)
}

impl RunLog for EventLog {
    fn display(&self) -> &str {
        &self.display
    }

    fn run_id(&self) -> &str {
        &self.run_id
    }

    fn events(&self) -> &[Event] {
        &self.events
    }

    fn run_dir(&self) -> PathBuf {
        run_dir(&self.path, &self.run_id)
    }

    fn append_if_recordable(&mut self, kind: &str, payload: Value) -> Result<Result<(), String>, String> {
        self.write_event(kind, payload, true)
    }

    fn append_unsynced_if_recordable(&mut self, kind: &str, payload: Value) -> Result<Result<(), String>, String> {
        self.write_event(kind, payload, false)
    }

    fn sync(&mut self) -> Result<(), String> {
        if self.unsynced > 0 {
            self.file.sync_data().map_err(|e| self.cannot(e))?;
            self.unsynced = 0;
        }
        Ok(())
    }

    fn unsynced(&self) -> usize {
        self.unsynced
    }

    fn put_blob(&mut self, bytes: &[u8]) -> Result<String, String> {
        self.blobs.put(bytes)
    }

    fn get_blob(&mut self, digest: &str) -> Result<Option<Vec<u8>>, String> {
        self.blobs.get(digest)
    }

    fn shared_memory(&mut self) -> Option<&mut dyn SharedMemory> {
        None
    }

    fn lease(&self) -> Option<Lease> {
        None
    }

    fn notes(&self) -> &[String] {
        &self.notes
    }
}

/// Hands `visit` each event of `run_id` as it is appended, from the first, until `ended`
/// says one ends the run. Reads only committed lines (a torn tail is waited out), and
/// waits for a log that does not exist yet.
pub fn follow(
    path: &Path,
    run_id: &str,
    ended: &dyn Fn(&Event) -> bool,
    visit: &mut dyn FnMut(Event) -> Result<(), String>,
) -> Result<(), String> {
    let cannot = |e: std::io::Error| format!("cannot read the event log `{}`: {e}", path.display());
    let mut offset = 0u64;
    let mut line_number = 0u64;
    let mut pending = Vec::new();
    loop {
        let file = match File::open(path) {
            Ok(file) => Some(file),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(cannot(e)),
        };
        if let Some(file) = file {
            use std::io::Seek;
            let mut reader = BufReader::with_capacity(1 << 16, file);
            reader.seek(std::io::SeekFrom::Start(offset)).map_err(cannot)?;
            loop {
                pending.clear();
                let read =
                    (&mut reader).take(MAX_EVENT_BYTES as u64 + 2).read_until(b'\n', &mut pending).map_err(cannot)?;
                if read == 0 || pending.last() != Some(&b'\n') {
                    // Nothing more, or a line still being written: read it whole next time.
                    break;
                }
                line_number += 1;
                if line_number == 1 && !starts_as_log(&pending) {
                    return Err(not_a_log(path));
                }
                offset += pending.len() as u64;
                let text = &pending[..pending.len() - 1];
                if text.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                let event = Event::from_text(text).ok_or_else(|| {
                    format!("line {line_number} of the event log `{}` is not an event", path.display())
                })?;
                if event.run_id != run_id {
                    continue;
                }
                let last = ended(&event);
                visit(event)?;
                if last {
                    return Ok(());
                }
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Refuses a file that exists and does not begin as a log, reading only its first bytes.
fn scan_prefix(path: &Path) -> Result<(), String> {
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("cannot read the event log `{}`: {e}", path.display())),
    };
    let mut head = [0u8; LINE_START.len()];
    let mut filled = 0;
    while filled < head.len() {
        match file.read(&mut head[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) => return Err(format!("cannot read the event log `{}`: {e}", path.display())),
        }
    }
    if filled > 0 && !starts_as_log(&head[..filled]) {
        return Err(not_a_log(path));
    }
    Ok(())
}

/// How long a lock held by no writer (a forked child before its exec) may take to go.
const MOMENT: Duration = Duration::from_millis(500);

/// An advisory lock held while the file stays open: two writers of one log would number
/// and replay events from different pictures of it. Waits up to `wait`, telling `waiting`
/// once when it has to.
fn lock_exclusively(file: &File, wait: Duration, waiting: &mut dyn FnMut()) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let started = Instant::now();
    let mut told = false;
    loop {
        // SAFETY: flock(2) on a descriptor this `File` owns and keeps open; no memory is shared.
        let result = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if result == 0 {
            return Ok(());
        }
        let error = std::io::Error::last_os_error();
        // A moment's contention is waited out even when no wait was asked for: another
        // thread of this process that forks a child holds every descriptor open in the
        // child until its exec closes them, our log's among them.
        if error.kind() != std::io::ErrorKind::WouldBlock || started.elapsed() >= wait.max(MOMENT) {
            return Err(error);
        }
        // A moment's contention (a process that forked while holding the log, before its
        // child's exec dropped the inherited descriptor) is not worth a message.
        if !told && started.elapsed() >= MOMENT && wait > MOMENT {
            waiting();
            told = true;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MAX_DEPTH, depth};
    use serde_json::json;

    const SESSION_STARTED: &str = "harness.session.started";
    const MODEL_CALLED: &str = "harness.model.called";
    const MODEL_RESPONDED: &str = "harness.model.responded";
    const TOOL_STARTED: &str = "harness.tool_call.started";

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("little-events-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("events.jsonl")
    }

    fn open(path: &Path, run: &str) -> Result<EventLog, String> {
        EventLog::open(path, run, Duration::ZERO, &mut |_| {})
    }

    #[test]
    fn appends_number_events_per_run_and_survive_reopening() {
        let path = temp("seq");
        let mut a = open(&path, "a").unwrap();
        a.append(MODEL_CALLED, json!({"turn": 1})).unwrap();
        drop(a);
        let mut b = open(&path, "b").unwrap();
        b.append(MODEL_CALLED, json!({"turn": 1})).unwrap();
        drop(b);
        let mut a = open(&path, "a").unwrap();
        assert_eq!(a.append(MODEL_RESPONDED, json!({"turn": 1})).unwrap().seq, 2);
        drop(a);
        let log = open(&path, "a").unwrap();
        assert_eq!(log.events.len(), 2);
        assert_eq!(log.truncated_bytes, 0);
        assert_eq!(read(&path).unwrap().events.len(), 3);
    }

    #[test]
    fn a_torn_last_line_is_ignored_by_readers_and_cut_by_writers() {
        let path = temp("torn");
        let mut log = open(&path, "r").unwrap();
        log.append(SESSION_STARTED, json!({"role": "planner"})).unwrap();
        log.append(MODEL_CALLED, json!({"turn": 1})).unwrap();
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

        let mut log = open(&path, "r").unwrap();
        assert_eq!(log.truncated_bytes, contents.torn_bytes);
        assert_eq!(std::fs::read(&path).unwrap(), good, "the torn tail is cut, earlier events kept");
        assert_eq!(log.append(MODEL_RESPONDED, json!({"turn": 1})).unwrap().seq, 3);
        let events = read(&path).unwrap().events;
        assert_eq!(
            events.iter().map(|e| e.kind.as_str()).collect::<Vec<_>>(),
            [SESSION_STARTED, MODEL_CALLED, MODEL_RESPONDED]
        );
    }

    #[test]
    fn a_torn_first_line_is_a_log_and_is_cut() {
        let path = temp("torn-first");
        std::fs::write(&path, "{\"runId\":\"r\",\"seq\":1,\"type\":\"x\",\"payload\":{}}").unwrap();
        assert!(read(&path).unwrap().events.is_empty(), "a line without its newline is uncommitted");
        std::fs::write(&path, "{\"run").unwrap();
        let log = open(&path, "r").unwrap();
        assert_eq!(log.truncated_bytes, 5);
        assert_eq!(std::fs::read(&path).unwrap(), b"");
    }

    #[test]
    fn a_file_that_is_not_a_log_is_refused_and_left_as_it_is() {
        for text in ["{\"name\": \"package\", \"version\": \"1.0.0\"}", "{\"a\":1}\n", "hello\n", "[1,2]"] {
            let path = temp("not-a-log");
            std::fs::write(&path, text).unwrap();
            let error = open(&path, "r").err().expect("refused");
            assert!(error.contains("is not an event log"), "{error}");
            assert!(read(&path).is_err(), "{text}");
            assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "left as it was");
        }
    }

    #[test]
    fn one_writer_at_a_time_and_a_second_waits_then_refuses() {
        let path = temp("lock");
        let first = open(&path, "a").unwrap();
        let mut told = Vec::new();
        let started = Instant::now();
        let error = EventLog::open(&path, "b", Duration::from_millis(700), &mut |m| told.push(m.to_string()))
            .err()
            .expect("the second writer is refused");
        assert!(started.elapsed() >= Duration::from_millis(700), "it waited");
        assert!(error.contains("still being written by another"), "{error}");
        assert_eq!(told.len(), 1, "{told:?}");
        assert!(read(&path).is_ok(), "readers are not locked out");
        // A writer that finishes within the wait lets the second one in.
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            drop(first);
        });
        assert!(EventLog::open(&path, "b", Duration::from_secs(20), &mut |_| {}).is_ok());
        release.join().unwrap();
    }

    #[test]
    fn a_corrupt_committed_line_is_an_error_with_its_line() {
        let path = temp("corrupt");
        std::fs::write(&path, "{\"runId\":\"r\",\"seq\":1,\"type\":\"x\",\"payload\":{}}\nnot json\n").unwrap();
        let error = read(&path).unwrap_err();
        assert!(error.contains("line 2"), "{error}");
        assert!(open(&path, "r").is_err());
    }

    #[test]
    fn a_gap_or_a_duplicate_in_seq_is_an_error_with_its_line() {
        let line = |seq: u64| format!("{{\"runId\":\"r\",\"seq\":{seq},\"type\":\"x\",\"payload\":{{}}}}\n");
        let other = "{\"runId\":\"o\",\"seq\":1,\"type\":\"x\",\"payload\":{}}\n";
        for (lines, bad, word) in [
            (vec![line(1), other.to_string(), line(2), line(2)], 4, "duplicated"),
            (vec![line(1), line(3)], 2, "lost"),
            (vec![line(2)], 1, "lost"),
        ] {
            let path = temp("seq-gap");
            std::fs::write(&path, lines.concat()).unwrap();
            let error = read(&path).unwrap_err();
            assert!(error.contains(&format!("line {bad} ")) && error.contains(word), "{error}");
            assert!(open(&path, "r").is_err());
        }
    }

    #[test]
    fn what_is_written_is_always_readable() {
        let path = temp("bounds");
        let mut log = open(&path, "r").unwrap();
        let mut deep = json!(1);
        for _ in 0..126 {
            deep = json!([deep]);
        }
        let error = log.append(TOOL_STARTED, json!({ "arguments": deep })).unwrap_err();
        assert!(error.contains("deeper than"), "{error}");
        let mut fine = json!(1);
        for _ in 0..MAX_DEPTH - 1 {
            fine = json!([fine]);
        }
        log.append(TOOL_STARTED, json!({ "arguments": fine })).unwrap();
        let huge = "x".repeat(MAX_EVENT_BYTES);
        assert!(log.append(TOOL_STARTED, json!({ "arguments": huge })).unwrap_err().contains("MiB"));
        drop(log);
        let contents = read(&path).unwrap();
        assert_eq!(contents.events.len(), 1, "the refused events left nothing behind");
        assert_eq!(depth(&contents.events[0].payload), MAX_DEPTH);
    }

    #[test]
    fn depth_counts_containers() {
        assert_eq!(depth(&json!(1)), 0);
        assert_eq!(depth(&json!({"a": [1, {"b": []}]})), 4);
    }
}
