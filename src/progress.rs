//! What a person sees of a planner session on a terminal (stderr): each turn as it happens,
//! the model's text as it streams, each tool call with its command and how it ended, each
//! refused submission with its finding codes. Notes (warnings) are shown even when quiet.

use std::io::Write;
use std::time::Duration;

use little_pipeline::harness::Observer;
use little_pipeline::show::{first_line, tool_outcome};
use serde_json::Value;

/// Writes a session's progress to `out`; with `live` false only notes are written.
pub struct Progress<W: Write> {
    out: W,
    live: bool,
    /// Whether the last thing written ended its line (streamed text may not).
    at_line_start: bool,
}

impl<W: Write> Progress<W> {
    pub fn new(out: W, live: bool) -> Progress<W> {
        Progress { out, live, at_line_start: true }
    }

    fn line(&mut self, text: &str) {
        if !self.at_line_start {
            let _ = writeln!(self.out);
        }
        let _ = writeln!(self.out, "{text}");
        let _ = self.out.flush();
        self.at_line_start = true;
    }
}

impl<W: Write> Observer for Progress<W> {
    fn note(&mut self, message: &str) {
        self.line(message);
    }

    fn turn(&mut self, turn: u64, replayed: bool) {
        if self.live {
            self.line(&format!("turn {turn}{}", if replayed { " (replayed from the log)" } else { "" }));
        }
    }

    fn text(&mut self, piece: &str) {
        if self.live && !piece.is_empty() {
            if self.at_line_start {
                let _ = write!(self.out, "  ");
            }
            let _ = write!(self.out, "{}", piece.replace('\n', "\n  "));
            let _ = self.out.flush();
            self.at_line_start = piece.ends_with('\n');
        }
    }

    fn message(&mut self, _turn: u64, message: &Value, replayed: bool) {
        // Streamed text was shown as it came; a replayed turn shows its text at once.
        if self.live
            && replayed
            && let Some(text) = message.get("content").and_then(Value::as_str).filter(|t| !t.trim().is_empty())
        {
            self.line(&format!("  {}", first_line(text, 160)));
        }
    }

    fn retrying(&mut self, try_number: u32, delay: Duration, reason: &str) {
        if !self.live {
            return;
        }
        self.line(&format!("  try {try_number} failed ({reason}); retrying in {:.1} s", delay.as_secs_f64()));
    }

    fn tool_started(&mut self, call_id: &str, tool: &str, arguments: &Value, _replayed: bool) {
        if !self.live {
            return;
        }
        let detail = match arguments.get("command").and_then(Value::as_str) {
            Some(command) if tool == "bash" => format!(" $ {}", first_line(command, 120)),
            _ => String::new(),
        };
        self.line(&format!("  [{call_id}] {tool}{detail}"));
    }

    fn tool_ended(&mut self, _call_id: &str, _tool: &str, outcome: Result<&Value, &Value>, _replayed: bool) {
        if !self.live {
            return;
        }
        let cut = outcome.is_ok_and(|result| result.get("truncated").and_then(Value::as_bool) == Some(true));
        let summary = format!("{}{}", tool_outcome(outcome, 160), if cut { ", output cut to 64 KiB" } else { "" });
        self.line(&format!("    → {summary}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_turn_shows_streamed_text_tool_calls_and_refusals() {
        let mut progress = Progress::new(Vec::new(), true);
        progress.turn(1, false);
        progress.text("Let me ");
        progress.text("look.");
        progress.tool_started("1.1", "bash", &json!({"command": "ls -la\necho more"}), false);
        progress.tool_ended("1.1", "bash", Ok(&json!({"exitCode": 2, "truncated": true})), false);
        progress.tool_started("1.2", "submit_lwir", &json!({"lwir": {}}), false);
        let refused =
            json!({"valid": false, "findings": [{"code": "binding.name_mismatch"}, {"code": "template.syntax"}]});
        progress.tool_ended("1.2", "submit_lwir", Ok(&refused), false);
        progress.turn(2, true);
        progress.message(2, &json!({"content": "replayed words"}), true);
        assert_eq!(
            String::from_utf8(progress.out.clone()).unwrap(),
            "turn 1\n  Let me look.\n  [1.1] bash $ ls -la…\n    → exit 2, output cut to 64 KiB\n  [1.2] submit_lwir\n    → refused: binding.name_mismatch, template.syntax\nturn 2 (replayed from the log)\n  replayed words\n"
        );
    }

    #[test]
    fn quiet_shows_only_notes() {
        let mut progress = Progress::new(Vec::new(), false);
        progress.turn(1, false);
        progress.text("hidden");
        progress.note("warning: shown");
        assert_eq!(String::from_utf8(progress.out.clone()).unwrap(), "warning: shown\n");
    }
}
