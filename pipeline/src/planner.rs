//! The planner as a child process.
//!
//! `little plan --planner CMD` runs `sh -c CMD` once per attempt, in the current
//! directory, in a process group of its own. The PlanTask JSON goes to its stdin; it
//! writes the LWIR to stdout and exits 0. Environment: `LITTLE_RUN_ID`, `LITTLE_ATTEMPT`,
//! `LITTLE_MAX_ATTEMPTS`. Tool events: a stderr line
//! `little-event {"type": "harness.tool_call.started", "callId": "c1", "tool": "bash", ...}`
//! is recorded in the event log as it arrives (types: `harness.tool_call.started`,
//! `.succeeded`, `.failed`); every other stderr line is passed through to little's stderr.
//! When the time limit is crossed the whole process group is killed; when the planner
//! exits, whatever it left running in its group is killed too.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The prefix of a tool-event line on the planner's stderr.
pub const EVENT_PREFIX: &str = "little-event ";

/// How one planner process ended.
#[derive(Debug)]
pub enum Ended {
    Exited(ExitStatus),
    TimedOut,
}

/// What one planner process produced.
#[derive(Debug)]
pub struct PlannerOutput {
    pub ended: Ended,
    pub stdout: Vec<u8>,
    /// The last lines of stderr that were not events (for error messages).
    pub stderr_tail: Vec<String>,
}

const STDERR_TAIL: usize = 10;

enum Message {
    Line(String),
    Stdout(std::io::Result<Vec<u8>>),
}

/// Runs the planner once. `on_event` receives each tool event (type, fields) as it is
/// reported; `on_warning` each malformed event line.
pub fn run(
    command: &str,
    task: &[u8],
    env: &[(&str, String)],
    timeout: Duration,
    mut on_event: impl FnMut(&str, Value) -> Result<(), String>,
    mut on_stderr: impl FnMut(&str),
) -> Result<PlannerOutput, String> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start the planner `sh -c {command:?}`: {e}"))?;
    let deadline = Instant::now() + timeout;
    let (sender, receiver) = mpsc::channel();

    let mut stdin = child.stdin.take().expect("piped");
    let task = task.to_vec();
    // A planner that does not read its task and exits closes the pipe: that is its business.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&task);
    });
    let mut stdout = child.stdout.take().expect("piped");
    let out_sender = sender.clone();
    let out_reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let result = stdout.read_to_end(&mut bytes).map(|_| bytes);
        let _ = out_sender.send(Message::Stdout(result));
    });
    let stderr = child.stderr.take().expect("piped");
    let err_reader = std::thread::spawn(move || {
        for line in BufReader::new(stderr).split(b'\n') {
            let Ok(line) = line else { break };
            if sender.send(Message::Line(String::from_utf8_lossy(&line).into_owned())).is_err() {
                break;
            }
        }
    });

    let mut stdout_bytes = None;
    let mut tail: Vec<String> = Vec::new();
    let mut status = None;
    let mut timed_out = false;
    let mut handle = |message: Message, tail: &mut Vec<String>, stdout_bytes: &mut Option<_>| -> Result<(), String> {
        match message {
            Message::Stdout(result) => *stdout_bytes = Some(result),
            Message::Line(line) => match line.strip_prefix(EVENT_PREFIX) {
                Some(json) => match parse_event(json) {
                    Some((kind, fields)) => on_event(&kind, fields)?,
                    None => on_stderr(&format!(
                        "warning: ignored a planner event line that is not {{\"type\": \"harness.tool_call.started|succeeded|failed\", …}}: {line}"
                    )),
                },
                None => {
                    on_stderr(&line);
                    tail.push(line);
                    if tail.len() > STDERR_TAIL {
                        tail.remove(0);
                    }
                }
            },
        }
        Ok(())
    };
    loop {
        if status.is_none() {
            status = child.try_wait().map_err(|e| format!("cannot wait for the planner: {e}"))?;
            if status.is_some() {
                // The attempt is over: what the planner left running in the background would
                // hold its pipes open (and the reads with them), so it ends too.
                kill_group(&child);
            }
        }
        if status.is_some() && stdout_bytes.is_some() {
            break;
        }
        let now = Instant::now();
        if now >= deadline {
            kill_group(&child);
            timed_out = true;
            break;
        }
        let slice = (deadline - now).min(Duration::from_millis(20));
        match receiver.recv_timeout(slice) {
            Ok(message) => handle(message, &mut tail, &mut stdout_bytes)?,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                if status.is_none() {
                    std::thread::sleep(slice);
                }
            }
        }
    }
    let status = child.wait().map_err(|e| format!("cannot wait for the planner: {e}"))?;
    let _ = writer.join();
    let _ = out_reader.join();
    let _ = err_reader.join();
    // Lines that arrived after the exit was seen.
    while let Ok(message) = receiver.try_recv() {
        handle(message, &mut tail, &mut stdout_bytes)?;
    }
    let stdout = match stdout_bytes {
        Some(Ok(bytes)) => bytes,
        Some(Err(e)) => return Err(format!("cannot read the planner's output: {e}")),
        None => Vec::new(),
    };
    let ended = if timed_out { Ended::TimedOut } else { Ended::Exited(status) };
    Ok(PlannerOutput { ended, stdout, stderr_tail: tail })
}

/// A tool event line: an object whose `type` is one of the planner tool events.
fn parse_event(json: &str) -> Option<(String, Value)> {
    let Value::Object(mut fields) = serde_json::from_str::<Value>(json).ok()? else { return None };
    let kind = fields.remove("type")?.as_str()?.to_string();
    crate::events::PLANNER_TOOL_EVENTS.contains(&kind.as_str()).then_some((kind, Value::Object(fields)))
}

/// Kills the planner and everything it started (its process group).
fn kill_group(child: &std::process::Child) {
    let Ok(pid) = i32::try_from(child.id()) else { return };
    // SAFETY: kill(2) with a negative pid signals the process group the child leads
    // (`process_group(0)` above); it touches no memory.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quiet_run(command: &str, timeout: Duration) -> (PlannerOutput, Vec<(String, Value)>) {
        let mut events = Vec::new();
        let output = run(
            command,
            b"{\"kind\":\"plan\"}",
            &[("LITTLE_ATTEMPT", "2".into())],
            timeout,
            |k, v| {
                events.push((k.to_string(), v));
                Ok(())
            },
            |_| {},
        )
        .unwrap();
        (output, events)
    }

    #[test]
    fn stdin_reaches_stdout_and_events_are_collected() {
        let (output, events) = quiet_run(
            r#"echo 'little-event {"type":"harness.tool_call.started","callId":"c1","tool":"bash"}' >&2; echo noise >&2; echo 'little-event {"type":"bogus"}' >&2; cat; echo " $LITTLE_ATTEMPT""#,
            Duration::from_secs(20),
        );
        assert!(matches!(output.ended, Ended::Exited(s) if s.success()));
        assert_eq!(String::from_utf8(output.stdout).unwrap(), "{\"kind\":\"plan\"} 2\n");
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
        assert!(matches!(output.ended, Ended::Exited(s) if s.success()));
        assert_eq!(output.stdout, b"done\n");
        assert!(started.elapsed() < Duration::from_secs(10), "not waited for the background sleep");
    }

    #[test]
    fn an_exit_status_is_reported() {
        let (output, _) = quiet_run("echo broken >&2; exit 3", Duration::from_secs(20));
        assert!(matches!(output.ended, Ended::Exited(s) if s.code() == Some(3)));
        assert_eq!(output.stderr_tail, ["broken"]);
    }
}
