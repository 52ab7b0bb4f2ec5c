//! The compile-pipeline commands (`snapshot`, `lock`, `plan`, `events`): arguments and
//! output; the work is `little-pipeline`'s.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

use little_diagnostics::render::{HumanOptions, render_human};
use little_pipeline::{Failure, Located};

use crate::cli::{EXIT_BLOCKED, EXIT_OK};

#[derive(clap::Args)]
pub struct SnapshotArgs {
    /// A workflow definition (`workflow-definition/v1`).
    #[arg(value_name = "DEF")]
    definition: PathBuf,
    /// Print the PlannerManifest and its hash instead.
    #[arg(long)]
    manifest: bool,
    /// With `--manifest`: the manifest of a later outer-loop cycle (see `little plan --outer-loop`).
    #[arg(long, value_name = "FILE", requires = "manifest")]
    outer_loop: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct LockArgs {
    /// The LWIR document to register.
    #[arg(value_name = "LWIR")]
    lwir: PathBuf,
    /// The workflow definition it was planned for.
    #[arg(long, value_name = "DEF")]
    definition: PathBuf,
    /// Write the WorkflowVersion and lock here instead of printing them.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    output: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct PlanArgs {
    /// The workflow definition (`workflow-definition/v1`).
    #[arg(value_name = "DEF")]
    definition: PathBuf,
    /// The run's input (JSON), validated against the definition's input schema.
    #[arg(long, value_name = "IN")]
    input: PathBuf,
    /// The planner, run as `sh -c CMD`: the PlanTask JSON on stdin, the LWIR on stdout.
    #[arg(long, value_name = "CMD")]
    planner: String,
    /// The run id; running again with the same id resumes the run from its event log.
    #[arg(long, value_name = "ID")]
    run_id: String,
    /// The event log (JSON Lines), created when missing, appended to.
    #[arg(long, value_name = "LOG")]
    events: PathBuf,
    /// Time limit of one planner attempt (e.g. `90s`, `5m`, `500ms`); the planner is killed past it.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_duration)]
    timeout: Duration,
    /// Planner attempts (the first and its repairs) before the run fails.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=20))]
    max_attempts: u32,
    /// Plan a later outer-loop cycle: a JSON file `{ "cycleNumber": N, "priorCycles": [...] }`
    /// (N in 2..=maxOuterCycles); without it the run's first cycle is planned.
    #[arg(long, value_name = "FILE")]
    outer_loop: Option<PathBuf>,
    /// Write the WorkflowVersion and lock here.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    output: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum EventsFormat {
    Human,
    Json,
}

#[derive(clap::Args)]
pub struct EventsArgs {
    /// The event log of `little plan --events`.
    #[arg(value_name = "LOG")]
    log: PathBuf,
    /// Only this run's events (default: every run in the log).
    #[arg(long, value_name = "ID")]
    run_id: Option<String>,
    #[arg(long, value_enum, default_value = "human")]
    format: EventsFormat,
}

/// `90s`, `5m`, `500ms`, or plain seconds.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (digits, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => text.split_at(i),
        None => (text, "s"),
    };
    let n: u64 = digits.parse().map_err(|_| format!("`{text}` is not a duration (e.g. 500ms, 90s, 5m)"))?;
    let duration = match unit {
        "ms" => Duration::from_millis(n),
        "s" => Duration::from_secs(n),
        "m" => Duration::from_secs(n.saturating_mul(60)),
        _ => return Err(format!("`{text}` is not a duration (units: ms, s, m)")),
    };
    if duration.is_zero() {
        return Err("the time limit must be longer than zero".to_string());
    }
    Ok(duration)
}

fn write_err(e: std::io::Error) -> String {
    format!("cannot write: {e}")
}

fn pretty(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).expect("JSON values serialize") + "\n"
}

/// Exit code and output of a failure: diagnostics are rendered (exit 1), a tool failure
/// is returned as the error (exit 2).
fn failed(failure: Failure, what: &str, out: &mut dyn Write) -> Result<i32, String> {
    match failure {
        Failure::Tool(message) => Err(message),
        Failure::Blocked(located) => {
            write_blocked(&located, out).map_err(write_err)?;
            writeln!(out, "{what}: a diagnostic blocks").map_err(write_err)?;
            Ok(EXIT_BLOCKED)
        }
    }
}

fn write_blocked(located: &[Located], out: &mut dyn Write) -> std::io::Result<()> {
    let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let options = HumanOptions { color, ..HumanOptions::default() };
    for l in located {
        write!(out, "{}", render_human(&l.path, &l.text, &l.diagnostics, &options))?;
    }
    Ok(())
}

pub fn snapshot(args: SnapshotArgs, out: &mut dyn Write) -> Result<i32, String> {
    match little_pipeline::capabilities_for_cycle(&args.definition, args.outer_loop.as_deref()) {
        Ok(capabilities) => {
            let text = if args.manifest {
                pretty(&serde_json::json!({
                    "manifest": capabilities.manifest,
                    "manifestHash": capabilities.manifest_hash,
                }))
            } else {
                capabilities.snapshot_text()
            };
            out.write_all(text.as_bytes()).map_err(write_err)?;
            Ok(EXIT_OK)
        }
        Err(failure) => failed(failure, &format!("{}: no snapshot", args.definition.display()), out),
    }
}

pub fn lock(args: LockArgs, out: &mut dyn Write) -> Result<i32, String> {
    match little_pipeline::lock(&args.lwir, &args.definition) {
        Ok(registration) => {
            let text = pretty(&registration.document());
            match &args.output {
                Some(path) => {
                    std::fs::write(path, text).map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
                    writeln!(
                        out,
                        "{}: registered {} (lock written to {})",
                        args.lwir.display(),
                        registration.id(),
                        path.display()
                    )
                    .map_err(write_err)?;
                }
                None => out.write_all(text.as_bytes()).map_err(write_err)?,
            }
            Ok(EXIT_OK)
        }
        Err(failure) => failed(failure, &format!("{}: not registered", args.lwir.display()), out),
    }
}

pub fn plan(args: PlanArgs, out: &mut dyn Write) -> Result<i32, String> {
    let request = little_pipeline::PlanRequest {
        definition: &args.definition,
        input: &args.input,
        planner: &args.planner,
        run_id: &args.run_id,
        events: &args.events,
        timeout: args.timeout,
        max_attempts: args.max_attempts,
        outer_loop: args.outer_loop.as_deref(),
    };
    let mut note = |line: &str| eprintln!("{line}");
    match little_pipeline::plan(&request, &mut note) {
        Ok(report) => {
            if let Some(path) = &args.output {
                std::fs::write(path, pretty(&report.registration.document()))
                    .map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
            }
            let how = match (report.planner_runs, report.replayed_attempts) {
                (0, _) => "replayed from the event log, planner not run".to_string(),
                (runs, 0) => format!("planner ran {runs} time{}", if runs == 1 { "" } else { "s" }),
                (runs, replayed) => format!("{replayed} attempt(s) replayed, planner ran {runs} time(s)"),
            };
            writeln!(
                out,
                "run {}: registered {} ({}) from attempt {}; {how}",
                args.run_id,
                report.registration.id(),
                report.registration.hash(),
                report.attempt
            )
            .map_err(write_err)?;
            if let Some(path) = &args.output {
                writeln!(out, "lock written to {}", path.display()).map_err(write_err)?;
            }
            Ok(EXIT_OK)
        }
        Err(failure) => failed(failure, &format!("run {}", args.run_id), out),
    }
}

pub fn events(args: EventsArgs, out: &mut dyn Write) -> Result<i32, String> {
    let contents = little_pipeline::events::read(&args.log)?;
    if !args.log.exists() {
        return Err(format!("the event log `{}` does not exist", args.log.display()));
    }
    if contents.torn_bytes > 0 {
        eprintln!(
            "warning: the last line of `{}` is torn ({} bytes from an interrupted write) and was ignored",
            args.log.display(),
            contents.torn_bytes
        );
    }
    let events: Vec<&little_pipeline::events::Event> =
        contents.events.iter().filter(|e| args.run_id.as_deref().is_none_or(|id| e.run_id == id)).collect();
    if let Some(id) = &args.run_id
        && events.is_empty()
    {
        return Err(format!("the event log `{}` has no events of run `{id}`", args.log.display()));
    }
    match args.format {
        EventsFormat::Json => {
            let list: Vec<serde_json::Value> = events.iter().map(|e| e.to_json()).collect();
            out.write_all(pretty(&serde_json::Value::Array(list)).as_bytes()).map_err(write_err)?;
        }
        EventsFormat::Human => {
            let mut current: Option<&str> = None;
            for event in events {
                if current != Some(event.run_id.as_str()) {
                    writeln!(out, "run {}", event.run_id).map_err(write_err)?;
                    current = Some(&event.run_id);
                }
                writeln!(out, "{:>4}  {}", event.seq, little_pipeline::events::describe(event)).map_err(write_err)?;
            }
        }
    }
    Ok(EXIT_OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("7"), Ok(Duration::from_secs(7)));
        assert!(parse_duration("0s").is_err());
        assert!(parse_duration("5h").is_err());
        assert!(parse_duration("soon").is_err());
    }
}
