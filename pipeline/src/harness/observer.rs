//! What a session tells the person watching it, as it happens: the model's text as it
//! streams, each tool call and how it ended, retries, warnings. The harness reports; the
//! command line decides whether and how to show it.

use std::time::Duration;

use serde_json::Value;

/// Receives a session's progress. Every method does nothing by default.
pub trait Observer {
    /// A warning or a note for the user (a torn log line cut, a wait for the log's lock,
    /// an external planner's stderr line).
    fn note(&mut self, _message: &str) {}
    /// A model turn begins; `replayed` when its answer comes from the log.
    fn turn(&mut self, _turn: u64, _replayed: bool) {}
    /// A piece of the model's text as it streams in (calls made for real only).
    fn text(&mut self, _piece: &str) {}
    /// The whole assistant message of a turn, once known (streamed or replayed).
    fn message(&mut self, _turn: u64, _message: &Value, _replayed: bool) {}
    /// A try of a model call failed and will be retried after `delay`.
    fn retrying(&mut self, _try_number: u32, _delay: Duration, _reason: &str) {}
    /// A tool call begins.
    fn tool_started(&mut self, _call_id: &str, _tool: &str, _arguments: &Value, _replayed: bool) {}
    /// A tool call ended: its result, or the error the model sees.
    fn tool_ended(&mut self, _call_id: &str, _tool: &str, _outcome: Result<&Value, &Value>, _replayed: bool) {}
}

/// Shows nothing but notes, which go to `note`.
pub struct Notes<F: FnMut(&str)>(pub F);

impl<F: FnMut(&str)> Observer for Notes<F> {
    fn note(&mut self, message: &str) {
        (self.0)(message)
    }
}
