//! The planner as a child process.
//!
//! `little plan --planner CMD` runs `sh -c CMD` once per attempt, in the current
//! directory. The PlanTask JSON goes to its stdin; it writes the LWIR to stdout and exits
//! 0. Environment: `LITTLE_RUN_ID`, `LITTLE_ATTEMPT`, `LITTLE_MAX_ATTEMPTS`, `LITTLE_CYCLE`.
//! Tool events: a stderr line
//! `little-event {"type": "harness.tool_call.started", "callId": "c1", "tool": "bash", ...}`
//! is handed on as it arrives (types: `harness.tool_call.started`, `.succeeded`,
//! `.failed`); every other stderr line is passed through to little's stderr.
//!
//! The process is `little_sandbox::supervise`'s: a process group of its own that is killed
//! when the planner exits (what it left running would hold the pipes open) and at the time
//! limit, after which the call returns within about a second whatever still holds the
//! pipes; `PR_SET_PDEATHSIG`, so the planner dies with `little`; the group registered for
//! the signal handler of `little plan`. Every stream is bounded: stdout (the LWIR) at
//! [`MAX_OUTPUT`] (more is reported, not kept), stderr lines cut at 64 KiB and only the
//! last few kept. The supervisor hands stdout over as text: bytes that are not UTF-8 arrive
//! as U+FFFD.
//!
//! A planner's grandchildren do not die with `little` when it is killed outright
//! (`SIGKILL`: no handler runs, and `PR_SET_PDEATHSIG` reaches only the leader). So the
//! planner records its process group, session and start time, before it runs anything, in
//! a side file of the run ([`ProcessRecord`]); the next `little plan` of the run kills what
//! is left of that group. A process that leaves the group (`setsid`) is out of reach.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use little_sandbox::supervise::{BeforeExec, ProcStat};
use serde_json::{Value, json};

/// The prefix of a tool-event line on the planner's stderr.
pub const EVENT_PREFIX: &str = "little-event ";

/// The most a planner may write on stdout (the LWIR).
pub const MAX_OUTPUT: usize = 16 << 20;

/// The longest stderr line the supervisor hands over; a longer one arrives cut here (less
/// a character split by the cut).
const MAX_LINE: usize = 64 * 1024;

/// Lines of stderr kept for an error message.
const STDERR_TAIL: usize = 10;

/// How one planner process ended.
#[derive(Debug)]
pub enum Ended {
    /// Its exit code, or 128 + the signal that killed it.
    Exited(i32),
    TimedOut,
}

/// What one planner process produced.
#[derive(Debug)]
pub struct PlannerOutput {
    pub ended: Ended,
    /// The LWIR (lossy UTF-8); empty when the planner wrote more than [`MAX_OUTPUT`] bytes.
    pub stdout: String,
    /// The planner wrote more than [`MAX_OUTPUT`] bytes on stdout: they were not kept.
    pub oversized: bool,
    /// The last lines of stderr that were not events (for error messages).
    pub stderr_tail: Vec<String>,
}

/// What the planner reported, line by line.
#[derive(Debug)]
pub enum Report<'a> {
    /// A tool event: its type and its fields (`type` removed).
    Event(&'a str, Value),
    /// A line of stderr that is not an event.
    Stderr(&'a str),
    /// A warning about a line (a malformed or overlong event line).
    Warning(String),
}

/// Runs the planner once. `on_report` receives each event, stderr line and warning as it
/// arrives; an `Err` from it ends the attempt: the planner's group is killed, and the
/// `Err` is returned once the process is gone.
pub fn run(
    command: &str,
    task: &[u8],
    env: &[(&str, String)],
    timeout: Duration,
    record: Option<&ProcessRecord>,
    on_report: &mut dyn FnMut(Report<'_>) -> Result<(), String>,
) -> Result<PlannerOutput, String> {
    let mut process = Command::new("sh");
    process.arg("-c").arg(command).envs(env.iter().map(|(k, v)| (*k, v.as_str())));
    // The side file, opened here: the planner writes its own record into it before exec.
    let recording = match record.map(ProcessRecord::prepare).transpose() {
        Ok(file) => file,
        Err(error) => {
            on_report(Report::Warning(format!(
                "warning: {error}; if `little` is killed, what the planner started is not ended by the next run"
            )))?;
            None
        }
    };
    let mut tail: Vec<String> = Vec::new();
    let mut fatal: Option<String> = None;
    let mut on_line = |line: &str| {
        if fatal.is_some() {
            return; // the attempt is over; its group is being killed
        }
        let result = match line.strip_prefix(EVENT_PREFIX) {
            Some(json) => match parse_event(json) {
                Some((kind, fields)) => on_report(Report::Event(&kind, fields)),
                None if line.len() + 4 > MAX_LINE => on_report(Report::Warning(format!(
                    "warning: ignored a planner event line longer than {} KiB (an event line may be at most that): {}…",
                    MAX_LINE >> 10,
                    preview(line)
                ))),
                None => on_report(Report::Warning(format!(
                    "warning: ignored a planner event line that is not {{\"type\": \"harness.tool_call.started|succeeded|failed\", …}}: {}",
                    preview(line)
                ))),
            },
            None => {
                tail.push(line.to_string());
                if tail.len() > STDERR_TAIL {
                    tail.remove(0);
                }
                on_report(Report::Stderr(line))
            }
        };
        if let Err(error) = result {
            fatal = Some(error);
            // The planner would go on working (and writing) for nothing: end it now. The
            // supervisor sees it exit and returns.
            if let Some((record, (file, _))) = record.zip(recording.as_ref()) {
                record.kill_running(file);
            }
        }
    };
    let output = little_sandbox::supervise::run_supervised_with_stderr_lines(
        process,
        Some(task.to_vec()),
        timeout,
        // Four bytes more than allowed: a cut never drops a character below the bound.
        MAX_OUTPUT + 4,
        &mut on_line,
        recording.as_ref().map(|(_, hook)| hook as &BeforeExec),
    );
    if let (Some(record), Some((file, _))) = (record, recording) {
        record.clear(&file);
    }
    let output = output.map_err(|e| format!("cannot start the planner `sh -c {command:?}`: {e}"))?;
    if let Some(error) = fatal {
        return Err(error);
    }
    let oversized = output.stdout.len() > MAX_OUTPUT;
    let ended = if output.timed_out { Ended::TimedOut } else { Ended::Exited(output.exit_code) };
    let stdout = if oversized { String::new() } else { output.stdout };
    Ok(PlannerOutput { ended, stdout, oversized, stderr_tail: tail })
}

/// At most 200 bytes of a line, for a warning.
fn preview(line: &str) -> &str {
    let mut end = line.len().min(200);
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    &line[..end]
}

/// A tool event line: an object whose `type` is one of the planner tool events.
fn parse_event(json: &str) -> Option<(String, Value)> {
    let Value::Object(mut fields) = serde_json::from_str::<Value>(json).ok()? else { return None };
    let kind = fields.remove("type")?.as_str()?.to_string();
    crate::events::PLANNER_TOOL_EVENTS.contains(&kind.as_str()).then_some((kind, Value::Object(fields)))
}

/// The side file `<log dir>/.little/runs/<runId>/processes`: the process group of the
/// run's planner while it runs, as one JSON line `{"log", "pgid", "sid", "startTime"}`
/// (`startTime`: field 22 of `/proc/PID/stat`, which tells a live leader from a process
/// that got its pid later). Not in the event log: events carry no pids (a log is a
/// function of the inputs). `log` is the canonical path of the event log, so that a run of
/// the same id in another log of the same folder never kills this one's processes (it may
/// overwrite the record with its own planner's, which costs only the cleanup).
#[derive(Clone, Debug)]
pub struct ProcessRecord {
    path: PathBuf,
    log: String,
}

/// One recorded process group.
#[derive(Debug, PartialEq, Eq)]
struct Recorded {
    pgid: i32,
    sid: i32,
    start_time: u64,
}

impl ProcessRecord {
    /// The record of a run whose folder is `run_dir`, in the store `log` (a file log's
    /// path, canonical where it can be, or a database as shown).
    pub fn new(run_dir: &Path, log: &str) -> ProcessRecord {
        let path = run_dir.join("processes");
        let log = std::fs::canonicalize(log).map_or_else(|_| log.to_string(), |p| p.to_string_lossy().into_owned());
        ProcessRecord { path, log }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Kills what is left of a process group recorded by an earlier `little` of this run
    /// and log, then clears the record. Call it holding the log's lock (no other `little`
    /// runs this run then). A group is killed when its leader is alive with the recorded
    /// start time; or, the leader gone (killed with `little` by `PR_SET_PDEATHSIG`), when
    /// members of the group remain in the recorded session that started after the leader
    /// (the group's id cannot be given to another process while they live). A leader's pid
    /// held by a process of another start time means the group is gone: nothing is killed.
    /// Returns the group killed.
    pub fn kill_leftover(&self) -> Result<Option<i32>, String> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot read `{}`: {e}", self.path.display())),
        };
        let Some((log, recorded)) = parse_record(&text) else {
            // Torn or foreign: nothing safe to act on.
            let _ = std::fs::remove_file(&self.path);
            return Ok(None);
        };
        if log != self.log {
            return Ok(None);
        }
        let killed = match ProcStat::of(recorded.pgid) {
            Some(leader) if leader.start_time == recorded.start_time => {
                kill(-recorded.pgid);
                kill(recorded.pgid); // in case it left its group
                true
            }
            Some(_) => false,
            None => {
                let members = group_members(&recorded);
                if !members.is_empty() {
                    kill(-recorded.pgid);
                }
                !members.is_empty()
            }
        };
        std::fs::remove_file(&self.path).map_err(|e| format!("cannot clear `{}`: {e}", self.path.display()))?;
        Ok(killed.then_some(recorded.pgid))
    }

    /// Opens the side file for the next planner, and the hook by which the planner writes
    /// its record into it between fork and exec.
    fn prepare(&self) -> Result<(File, impl Fn() -> io::Result<()> + Sync + use<>), String> {
        let cannot = |e: io::Error| format!("cannot record the planner's processes in `{}`: {e}", self.path.display());
        if let Some(folder) = self.path.parent() {
            std::fs::create_dir_all(folder).map_err(cannot)?;
        }
        let file =
            OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&self.path).map_err(cannot)?;
        let fd = file.as_raw_fd();
        let prefix = format!("{{\"log\":{},\"pgid\":", json!(self.log)).into_bytes();
        // `record_self` makes only async-signal-safe system calls (getpid, getsid, open,
        // read, close, writev) and allocates nothing; `prefix` and `fd` outlive the spawn
        // (the file is open until `clear`).
        let hook = move || {
            record_self(fd, &prefix);
            Ok(())
        };
        Ok((file, hook))
    }

    /// Kills the running planner's group, read back from its record (while the caller has
    /// not reaped it, so its pid is still its own).
    fn kill_running(&self, file: &File) {
        let mut buf = vec![0u8; 8192];
        let Ok(n) = file.read_at(&mut buf, 0) else { return };
        let Some((log, recorded)) = std::str::from_utf8(&buf[..n]).ok().and_then(parse_record) else { return };
        if log == self.log && ProcStat::of(recorded.pgid).is_some_and(|s| s.start_time == recorded.start_time) {
            kill(-recorded.pgid);
        }
    }

    /// Removes the record once its planner and its group are gone.
    fn clear(&self, file: &File) {
        let _ = file.set_len(0);
        let _ = std::fs::remove_file(&self.path);
    }
}

fn parse_record(text: &str) -> Option<(String, Recorded)> {
    let value: Value = serde_json::from_str(text.trim()).ok()?;
    let int = |key: &str| value.get(key).and_then(Value::as_i64).and_then(|n| i32::try_from(n).ok());
    // A group id is never 0 or 1 (kill(2) would take them as our own group or init's); a
    // session id is 0 when the session's leader is outside our PID namespace (a container
    // started without a new session), and the same 0 then for every member.
    let recorded = Recorded {
        pgid: int("pgid").filter(|&n| n > 1)?,
        sid: int("sid").filter(|&n| n >= 0)?,
        start_time: value.get("startTime").and_then(Value::as_u64)?,
    };
    Some((value.get("log")?.as_str()?.to_string(), recorded))
}

/// The live members of a recorded group whose leader is gone.
fn group_members(recorded: &Recorded) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| {
            ProcStat::of(pid).is_some_and(|s| {
                s.pgrp == recorded.pgid && s.sid == recorded.sid && s.start_time >= recorded.start_time
            })
        })
        .collect()
}

fn kill(target: i32) {
    // Never 0, -1 or 1 (a whole group of our own, everything, init).
    if target.unsigned_abs() > 1 {
        // SAFETY: kill(2) has no memory-safety preconditions.
        unsafe {
            libc::kill(target, libc::SIGKILL);
        }
    }
}

/// In the planner between fork and exec (async-signal-safe, no allocation): writes
/// `prefix` + `PGID,"sid":SID,"startTime":T}\n` to `fd`. The supervisor made the child the
/// leader of its own group (`setpgid(0, 0)`) before this runs, so its group is its pid.
/// Failing to record leaves the file empty; the planner runs anyway.
fn record_self(fd: RawFd, prefix: &[u8]) {
    let mut stat = [0u8; 1024];
    let mut len = 0;
    // SAFETY: plain system calls on a NUL-terminated literal path and on stack buffers.
    unsafe {
        let proc_fd = libc::open(c"/proc/self/stat".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if proc_fd < 0 {
            return;
        }
        while len < stat.len() {
            let n = libc::read(proc_fd, stat[len..].as_mut_ptr().cast(), stat.len() - len);
            if n <= 0 {
                break;
            }
            len += n as usize;
        }
        libc::close(proc_fd);
    }
    let Some(own) = ProcStat::parse(&stat[..len]) else { return };
    // SAFETY: getpid(2) and getsid(2) have no preconditions.
    let (pid, sid) = unsafe { (libc::getpid(), libc::getsid(0)) };
    let mut tail = [0u8; 96];
    let mut at = 0;
    let mut put = |bytes: &[u8]| {
        tail[at..at + bytes.len()].copy_from_slice(bytes);
        at += bytes.len();
    };
    let mut digits = [0u8; 20];
    put(decimal(u64::try_from(pid).unwrap_or(0), &mut digits));
    put(b",\"sid\":");
    put(decimal(u64::try_from(sid).unwrap_or(0), &mut digits));
    put(b",\"startTime\":");
    put(decimal(own.start_time, &mut digits));
    put(b"}\n");
    let parts = [
        libc::iovec { iov_base: prefix.as_ptr() as *mut _, iov_len: prefix.len() },
        libc::iovec { iov_base: tail.as_ptr() as *mut _, iov_len: at },
    ];
    // SAFETY: two iovecs over live buffers; one write, so a reader sees all of it or none
    // of the tail (and refuses a torn record).
    unsafe {
        libc::writev(fd, parts.as_ptr(), 2);
    }
}

/// `n` in decimal, in the end of `buf` (no allocation).
fn decimal(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[at..];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn quiet_run(command: &str, timeout: Duration) -> (PlannerOutput, Vec<(String, Value)>) {
        let mut events = Vec::new();
        let output = run(command, b"{\"kind\":\"plan\"}", &[("LITTLE_ATTEMPT", "2".into())], timeout, None, &mut |r| {
            if let Report::Event(k, v) = r {
                events.push((k.to_string(), v));
            }
            Ok(())
        })
        .unwrap();
        (output, events)
    }

    #[test]
    fn stdin_reaches_stdout_and_events_are_collected() {
        let (output, events) = quiet_run(
            r#"echo 'little-event {"type":"harness.tool_call.started","callId":"c1","tool":"bash"}' >&2; echo noise >&2; echo 'little-event {"type":"bogus"}' >&2; cat; echo " $LITTLE_ATTEMPT""#,
            Duration::from_secs(20),
        );
        assert!(matches!(output.ended, Ended::Exited(0)));
        assert_eq!(output.stdout, "{\"kind\":\"plan\"} 2\n");
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].0, "harness.tool_call.started");
        assert_eq!(events[0].1["callId"], "c1");
        assert_eq!(output.stderr_tail, ["noise"]);
    }

    #[test]
    fn a_hanging_planner_and_its_children_are_killed_at_the_limit() {
        let started = Instant::now();
        let (output, _) = quiet_run("sleep 30; echo late", Duration::from_millis(300));
        assert!(matches!(output.ended, Ended::TimedOut));
        assert!(output.stdout.is_empty());
        assert!(started.elapsed() < Duration::from_secs(20), "killed, not waited for");
    }

    #[test]
    fn background_children_do_not_keep_an_attempt_open() {
        let started = Instant::now();
        let (output, _) = quiet_run("sleep 30 & echo done", Duration::from_secs(20));
        assert!(matches!(output.ended, Ended::Exited(0)));
        assert_eq!(output.stdout, "done\n");
        assert!(started.elapsed() < Duration::from_secs(10), "not waited for the background sleep");
    }

    #[test]
    fn an_exit_status_is_reported() {
        let (output, _) = quiet_run("echo broken >&2; exit 3", Duration::from_secs(20));
        assert!(matches!(output.ended, Ended::Exited(3)));
        assert_eq!(output.stderr_tail, ["broken"]);
    }

    #[test]
    fn stdout_past_the_bound_is_counted_not_kept() {
        let (output, _) = quiet_run(&format!("head -c {} /dev/zero", MAX_OUTPUT + 1), Duration::from_secs(60));
        assert!(output.oversized);
        assert!(output.stdout.is_empty());
        let (output, _) = quiet_run(&format!("head -c {MAX_OUTPUT} /dev/zero"), Duration::from_secs(60));
        assert!(!output.oversized);
        assert_eq!(output.stdout.len(), MAX_OUTPUT);
    }

    #[test]
    fn a_record_holds_a_group_above_one_and_any_session_id_from_zero() {
        let record = |pgid: i64, sid: i64| format!(r#"{{"log":"/l","pgid":{pgid},"sid":{sid},"startTime":7}}"#);
        // Session 0: its leader is outside our PID namespace (a container without setsid).
        assert_eq!(parse_record(&record(42, 0)), Some(("/l".into(), Recorded { pgid: 42, sid: 0, start_time: 7 })));
        assert!(parse_record(&record(42, 9)).is_some());
        for (pgid, sid) in [(0, 9), (1, 9), (-5, 9), (42, -1)] {
            assert_eq!(parse_record(&record(pgid, sid)), None, "pgid {pgid}, sid {sid}");
        }
    }

    #[test]
    fn decimals_are_written_without_allocating() {
        let mut digits = [0u8; 20];
        assert_eq!(decimal(0, &mut digits), b"0");
        assert_eq!(decimal(u64::MAX, &mut digits), b"18446744073709551615");
    }
}
