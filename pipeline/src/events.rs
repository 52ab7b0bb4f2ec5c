//! The events of a run, typed: [`Kind`] names each kind the pipeline reads, and
//! [`Record`] is each event it writes, with one place ([`write`]) that turns a record into
//! the payload the log holds and appends it through the run's store (`little_store`: a JSON
//! Lines file or a PostgreSQL database). Payloads are written exactly as they always were,
//! key for key, so every log written before still reads and replays.

use serde_json::{Map, Value, json};

pub use little_store::file::{Contents, read};
pub use little_store::{Event, MAX_DEPTH, MAX_EVENT_BYTES, RunLog, depth};

use crate::Failure;

/// A run's history opened by its writer, whichever store holds it.
pub type EventLog = dyn RunLog;

/// The kinds of event a run's log holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    SessionStarted,
    SessionResumed,
    ModelCalled,
    ModelResponded,
    ModelFailed,
    ToolStarted,
    ToolSucceeded,
    ToolFailed,
    SessionCompleted,
    SessionFailed,
    VersionRegistered,
    RunFailed,
}

impl Kind {
    pub const ALL: [Kind; 12] = [
        Kind::SessionStarted,
        Kind::SessionResumed,
        Kind::ModelCalled,
        Kind::ModelResponded,
        Kind::ModelFailed,
        Kind::ToolStarted,
        Kind::ToolSucceeded,
        Kind::ToolFailed,
        Kind::SessionCompleted,
        Kind::SessionFailed,
        Kind::VersionRegistered,
        Kind::RunFailed,
    ];

    /// The `type` the log holds.
    pub const fn as_str(self) -> &'static str {
        match self {
            Kind::SessionStarted => "harness.session.started",
            Kind::SessionResumed => "harness.session.resumed",
            Kind::ModelCalled => "harness.model.called",
            Kind::ModelResponded => "harness.model.responded",
            Kind::ModelFailed => "harness.model.failed",
            Kind::ToolStarted => "harness.tool_call.started",
            Kind::ToolSucceeded => "harness.tool_call.succeeded",
            Kind::ToolFailed => "harness.tool_call.failed",
            Kind::SessionCompleted => "harness.session.completed",
            Kind::SessionFailed => "harness.session.failed",
            Kind::VersionRegistered => "WorkflowVersionRegistered",
            Kind::RunFailed => "RunFailed",
        }
    }

    /// The kind of a `type`, `None` for one the pipeline does not know.
    pub fn parse(text: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|kind| kind.as_str() == text)
    }

    /// Whether an event of this kind records the end of a call (a model's answer or
    /// failure, a tool's result) rather than starting anything. Such an event is appended
    /// without waiting for the disk and made durable by the next event, which is always
    /// one that starts something or ends the session: a turn waits for the disk twice
    /// rather than four times. `little`'s own crash loses nothing; a crash of the machine
    /// (or the database server) in between leaves the log as a crash during the call would.
    pub const fn starts_nothing(self) -> bool {
        matches!(self, Kind::ModelResponded | Kind::ModelFailed | Kind::ToolSucceeded | Kind::ToolFailed)
    }

    /// The kind of an event.
    pub fn of(event: &Event) -> Option<Kind> {
        Kind::parse(&event.kind)
    }
}

pub const SESSION_STARTED: &str = Kind::SessionStarted.as_str();
pub const SESSION_RESUMED: &str = Kind::SessionResumed.as_str();
pub const MODEL_CALLED: &str = Kind::ModelCalled.as_str();
pub const MODEL_RESPONDED: &str = Kind::ModelResponded.as_str();
pub const MODEL_FAILED: &str = Kind::ModelFailed.as_str();
pub const TOOL_STARTED: &str = Kind::ToolStarted.as_str();
pub const TOOL_SUCCEEDED: &str = Kind::ToolSucceeded.as_str();
pub const TOOL_FAILED: &str = Kind::ToolFailed.as_str();
pub const SESSION_COMPLETED: &str = Kind::SessionCompleted.as_str();
pub const SESSION_FAILED: &str = Kind::SessionFailed.as_str();
pub const VERSION_REGISTERED: &str = Kind::VersionRegistered.as_str();
pub const RUN_FAILED: &str = Kind::RunFailed.as_str();

/// The tool events an external planner may report (see `planner.rs`).
pub const PLANNER_TOOL_EVENTS: &[&str] = &[TOOL_STARTED, TOOL_SUCCEEDED, TOOL_FAILED];

/// The session an event belongs to: written on each of its events, so that sessions of
/// several roles and outer-loop cycles can share a run's log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Session {
    /// `planner` or `fixer`.
    pub role: &'static str,
    pub cycle: u64,
}

/// How a tool call ended, as recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolEnd {
    /// `harness.tool_call.succeeded { result }`.
    Succeeded,
    /// `harness.tool_call.failed { error }`.
    Failed,
}

/// An event the pipeline writes. The built-in harness's model calls are by `turn`; an
/// external planner's by `attempt` (one process an attempt).
#[derive(Clone, Debug)]
pub enum Record {
    /// A session's start: what resuming it checks (`manifestHash`, `inputHash`, the planner
    /// kind), and `details`, the role's own fields in the order they are written.
    SessionStarted {
        planner: &'static str,
        manifest_hash: String,
        manifest: Value,
        details: Map<String, Value>,
    },
    SessionResumed {
        after_seq: u64,
    },
    ModelCalled {
        turn: u64,
        request_hash: String,
        request: Value,
    },
    ModelResponded {
        turn: u64,
        message: Value,
        usage: Value,
        finish_reason: Value,
        tries: Value,
        duration_ms: u64,
    },
    ModelFailed {
        turn: u64,
        reason: String,
    },
    AttemptCalled {
        attempt: u64,
        task_hash: String,
    },
    AttemptResponded {
        attempt: u64,
        output: String,
        output_hash: String,
        valid: bool,
        findings: Value,
    },
    AttemptFailed {
        attempt: u64,
        reason: String,
    },
    ToolStarted {
        turn: u64,
        call_id: String,
        tool: String,
        arguments: Value,
    },
    /// A tool call's end; `files` is what it changed in the session's files, when anything.
    ToolEnded {
        end: ToolEnd,
        call_id: String,
        tool: String,
        value: Value,
        duration_ms: u64,
        files: Option<Value>,
    },
    /// A tool event an external planner reported: its fields, the harness's own set
    /// already (`external.rs`).
    PlannerTool {
        kind: Kind,
        payload: Map<String, Value>,
    },
    /// A session's successful end; `details` in the order they are written.
    SessionCompleted {
        details: Map<String, Value>,
    },
    /// An external planner's session that ran out of attempts.
    AttemptsExhausted {
        attempts: u64,
    },
    SessionFailed {
        reason: String,
        turns: u64,
        attempts: u32,
        max_turns: u32,
        max_attempts: u32,
        /// Written only when the session had a token budget.
        max_tokens: Option<u64>,
    },
    VersionRegistered {
        workflow_version_id: Value,
        workflow_version_hash: Value,
        lwir_version_id: String,
        lock_hash: String,
    },
    RunFailed {
        cause: &'static str,
        message: String,
    },
}

impl Record {
    pub fn kind(&self) -> Kind {
        match self {
            Record::SessionStarted { .. } => Kind::SessionStarted,
            Record::SessionResumed { .. } => Kind::SessionResumed,
            Record::ModelCalled { .. } | Record::AttemptCalled { .. } => Kind::ModelCalled,
            Record::ModelResponded { .. } | Record::AttemptResponded { .. } => Kind::ModelResponded,
            Record::ModelFailed { .. } | Record::AttemptFailed { .. } => Kind::ModelFailed,
            Record::ToolStarted { .. } => Kind::ToolStarted,
            Record::ToolEnded { end: ToolEnd::Succeeded, .. } => Kind::ToolSucceeded,
            Record::ToolEnded { end: ToolEnd::Failed, .. } => Kind::ToolFailed,
            Record::PlannerTool { kind, .. } => *kind,
            Record::SessionCompleted { .. } | Record::AttemptsExhausted { .. } => Kind::SessionCompleted,
            Record::SessionFailed { .. } => Kind::SessionFailed,
            Record::VersionRegistered { .. } => Kind::VersionRegistered,
            Record::RunFailed { .. } => Kind::RunFailed,
        }
    }

    /// The payload as the log holds it, for an event of `session`.
    pub fn payload(self, session: Session) -> Value {
        let Session { role, cycle } = session;
        // The harness's own calls write their role and cycle last.
        let of_session = |mut payload: Value| {
            payload["role"] = json!(role);
            payload["cycle"] = json!(cycle);
            payload
        };
        match self {
            Record::SessionStarted { planner, manifest_hash, manifest, details } => {
                let mut payload = Map::new();
                payload.insert("role".into(), json!(role));
                payload.insert("cycle".into(), json!(cycle));
                payload.insert("harnessId".into(), json!(crate::capabilities::HARNESS_ID));
                payload.insert("planner".into(), json!(planner));
                let mut details = details.into_iter();
                // A fixer names its step before its manifest.
                let mut rest = Vec::new();
                for (key, value) in details.by_ref() {
                    if key == "step" {
                        payload.insert(key, value);
                    } else {
                        rest.push((key, value));
                    }
                }
                payload.insert("manifestHash".into(), json!(manifest_hash));
                payload.insert("manifest".into(), manifest);
                payload.extend(rest);
                Value::Object(payload)
            }
            Record::SessionResumed { after_seq } => of_session(json!({ "afterSeq": after_seq })),
            Record::ModelCalled { turn, request_hash, request } => {
                of_session(json!({ "turn": turn, "requestHash": request_hash, "request": request }))
            }
            Record::ModelResponded { turn, message, usage, finish_reason, tries, duration_ms } => of_session(json!({
                "turn": turn,
                "message": message,
                "usage": usage,
                "finishReason": finish_reason,
                "tries": tries,
                "durationMs": duration_ms,
            })),
            Record::ModelFailed { turn, reason } => of_session(json!({ "turn": turn, "reason": reason })),
            Record::AttemptCalled { attempt, task_hash } => {
                json!({ "role": role, "cycle": cycle, "attempt": attempt, "taskHash": task_hash })
            }
            Record::AttemptResponded { attempt, output, output_hash, valid, findings } => json!({
                "role": role,
                "cycle": cycle,
                "attempt": attempt,
                "output": output,
                "outputHash": output_hash,
                "valid": valid,
                "findings": findings,
            }),
            Record::AttemptFailed { attempt, reason } => {
                json!({ "role": role, "cycle": cycle, "attempt": attempt, "reason": reason })
            }
            Record::ToolStarted { turn, call_id, tool, arguments } => of_session(
                json!({ "turn": turn, "callId": call_id, "tool": tool, "arguments": arguments, "caller": "model" }),
            ),
            Record::ToolEnded { end, call_id, tool, value, duration_ms, files } => {
                let field = match end {
                    ToolEnd::Succeeded => "result",
                    ToolEnd::Failed => "error",
                };
                let mut payload = json!({ "callId": call_id, "tool": tool, field: value, "durationMs": duration_ms });
                if let Some(files) = files {
                    payload["files"] = files;
                }
                of_session(payload)
            }
            Record::PlannerTool { payload, .. } => Value::Object(payload),
            Record::SessionCompleted { details } => {
                let mut payload = Map::new();
                payload.insert("role".into(), json!(role));
                payload.insert("cycle".into(), json!(cycle));
                payload.insert("status".into(), json!("succeeded"));
                payload.extend(details);
                Value::Object(payload)
            }
            Record::AttemptsExhausted { attempts } => {
                json!({ "role": role, "cycle": cycle, "status": "failed", "attempts": attempts })
            }
            Record::SessionFailed { reason, turns, attempts, max_turns, max_attempts, max_tokens } => {
                let mut payload = json!({
                    "reason": reason,
                    "turns": turns,
                    "attempts": attempts,
                    "maxTurns": max_turns,
                    "maxAttempts": max_attempts,
                });
                if let Some(max_tokens) = max_tokens {
                    payload["maxTokens"] = json!(max_tokens);
                }
                of_session(payload)
            }
            Record::VersionRegistered { workflow_version_id, workflow_version_hash, lwir_version_id, lock_hash } => {
                json!({
                    "workflowVersionId": workflow_version_id,
                    "workflowVersionHash": workflow_version_hash,
                    "lwirVersionId": lwir_version_id,
                    "canonicalizer": little_hashing::CANONICALIZER,
                    "lockHash": lock_hash,
                    "cycle": cycle,
                })
            }
            Record::RunFailed { cause, message } => json!({ "causeCode": cause, "message": message, "cycle": cycle }),
        }
    }
}

/// Appends a record of `session` to the run's log: the one place events are written. An
/// event that starts nothing is appended unsynced, made durable by the next one (see
/// [`Kind::starts_nothing`]).
pub fn write(log: &mut EventLog, session: Session, record: Record) -> Result<(), Failure> {
    let kind = record.kind();
    let payload = stamped(record.payload(session));
    let written = if kind.starts_nothing() {
        log.append_unsynced(kind.as_str(), payload)
    } else {
        log.append(kind.as_str(), payload)
    };
    written.map(|_| ()).map_err(Failure::Tool)
}

/// [`write`] for what an external planner reports: an event the log could not read back
/// is `Ok(Err(why))`, and nothing is written; a failed write is an `Err`.
pub fn write_reported(log: &mut EventLog, session: Session, record: Record) -> Result<Result<(), String>, String> {
    let kind = record.kind();
    log.append_if_recordable(kind.as_str(), stamped(record.payload(session)))
}

/// A payload with the wall-clock time it is written, last: `at`, RFC 3339 in UTC to the
/// millisecond. Nothing reads it back: replay compares requests, never times.
fn stamped(mut payload: Value) -> Value {
    if let Value::Object(fields) = &mut payload {
        fields.insert("at".into(), json!(now_rfc3339()));
    }
    payload
}

/// Now, as `2026-01-31T09:30:00.123Z`.
pub fn now_rfc3339() -> String {
    chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now())
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// What the pipeline reads of any event: its session's cycle, role and attempt.
pub trait SessionOf {
    /// The outer-loop cycle of an event; events written before cycles were recorded are
    /// cycle 1's.
    fn cycle(&self) -> u64;
    /// The session role (`planner`, `fixer`); events written before roles were recorded
    /// are the planner's.
    fn role(&self) -> &str;
    /// The attempt number of an external planner's event.
    fn attempt(&self) -> Option<u64>;
    /// The event's kind, `None` for one the pipeline does not know.
    fn known(&self) -> Option<Kind>;
}

impl SessionOf for Event {
    fn cycle(&self) -> u64 {
        self.u64("cycle").unwrap_or(1)
    }

    fn role(&self) -> &str {
        self.str("role").unwrap_or("planner")
    }

    fn attempt(&self) -> Option<u64> {
        self.u64("attempt")
    }

    fn known(&self) -> Option<Kind> {
        Kind::of(self)
    }
}

/// Whether an event ends a run: what `little events --follow` waits for.
pub fn ends_run(event: &Event) -> bool {
    match Kind::of(event) {
        Some(Kind::VersionRegistered | Kind::RunFailed) => true,
        Some(Kind::SessionCompleted) => event.role() == "fixer",
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc3339_in_utc() {
        let at = now_rfc3339();
        assert_eq!(at.len(), "2026-01-31T09:30:00.123Z".len(), "{at}");
        assert!(at.ends_with('Z') && at.as_bytes()[10] == b'T', "{at}");
        assert!(chrono::DateTime::parse_from_rfc3339(&at).is_ok(), "{at}");
    }

    #[test]
    fn every_kind_reads_back_as_itself() {
        for kind in Kind::ALL {
            assert_eq!(Kind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(Kind::parse("harness.something.else"), None);
    }

    #[test]
    fn payloads_keep_the_order_logs_were_always_written_in() {
        let session = Session { role: "planner", cycle: 2 };
        let text = |record: Record| serde_json::to_string(&record.payload(session)).unwrap();
        assert_eq!(
            text(Record::ModelCalled { turn: 1, request_hash: "sha256:a".into(), request: json!({}) }),
            r#"{"turn":1,"requestHash":"sha256:a","request":{},"role":"planner","cycle":2}"#
        );
        assert_eq!(
            text(Record::AttemptCalled { attempt: 3, task_hash: "sha256:t".into() }),
            r#"{"role":"planner","cycle":2,"attempt":3,"taskHash":"sha256:t"}"#
        );
        let mut details = Map::new();
        details.insert("inputHash".into(), json!("sha256:i"));
        details.insert("step".into(), json!("s"));
        assert_eq!(
            text(Record::SessionStarted {
                planner: "builtin",
                manifest_hash: "sha256:m".into(),
                manifest: json!({}),
                details
            }),
            format!(
                r#"{{"role":"planner","cycle":2,"harnessId":"{}","planner":"builtin","step":"s","manifestHash":"sha256:m","manifest":{{}},"inputHash":"sha256:i"}}"#,
                crate::capabilities::HARNESS_ID
            )
        );
        assert_eq!(
            text(Record::RunFailed { cause: "missing_tool", message: "m".into() }),
            r#"{"causeCode":"missing_tool","message":"m","cycle":2}"#
        );
    }
}
