//! The compile-pipeline commands (`snapshot`, `lock`, `plan`, `events`): arguments and
//! output; the work is `little-pipeline`'s.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

use little_pipeline::{Failure, Located};
use little_render::CheckedFile;
use little_render::human::{self, HumanOptions};
use little_store::Location;

use crate::cli::{EXIT_BLOCKED, EXIT_OK, EXIT_TOOL_FAILURE};

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
    #[command(flatten)]
    mcp: McpRegistryArgs,
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
    #[command(flatten)]
    mcp: McpRegistryArgs,
}

#[derive(clap::Args)]
pub struct PlanArgs {
    /// The workflow definition (`workflow-definition/v1`).
    #[arg(value_name = "DEF")]
    definition: PathBuf,
    /// The run's input (JSON), validated against the definition's input schema.
    #[arg(long, value_name = "IN")]
    input: PathBuf,
    /// The run id; running again with the same id resumes the run from its event log.
    #[arg(long, value_name = "ID")]
    run_id: String,
    /// Where the run's history is kept: an event log (JSON Lines, created when missing,
    /// appended to), or a PostgreSQL database (`postgres://USER@HOST/DB`; `PG*` variables and
    /// `~/.pgpass` fill in what the URL leaves out).
    #[arg(long, value_name = "LOG|URL")]
    events: String,
    /// Submissions refused with findings (built-in harness) or planner attempts
    /// (`--planner`) before the run fails.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=20))]
    max_attempts: u32,
    /// Plan a later outer-loop cycle: a JSON file `{ "cycleNumber": N, "priorCycles": [...] }`
    /// (N in 2..=maxOuterCycles); without it the run's first cycle is planned.
    #[arg(long, value_name = "FILE")]
    outer_loop: Option<PathBuf>,
    /// Write the WorkflowVersion and lock here.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    output: Option<PathBuf>,
    #[command(flatten)]
    harness: HarnessArgs,
    /// An external planner instead of the built-in harness, run as `sh -c CMD` once an
    /// attempt: the PlanTask JSON on stdin, the LWIR on stdout.
    #[arg(long, value_name = "CMD")]
    planner: Option<String>,
    /// With `--planner`: time limit of one attempt (e.g. `90s`, `5m`, `500ms`); the planner
    /// and everything it started are killed past it.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_duration, requires = "planner")]
    timeout: Duration,
    /// `human`: a line saying what was registered, or the diagnostics that block; `json`:
    /// the outcome as one `little-plan/v1` object on stdout (`little schema plan`).
    #[arg(long, value_enum, default_value = "human")]
    format: PlanFormat,
    #[command(flatten)]
    mcp: McpRegistryArgs,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum PlanFormat {
    Human,
    Json,
}

/// Settings of the built-in harness, shared by `plan` and `fix`.
#[derive(clap::Args)]
pub struct HarnessArgs {
    /// The `little.toml` with the model providers (default: the nearest one from the
    /// working directory up).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// How bash runs: `bwrap` (bubblewrap namespaces: no network, only the session's
    /// directories) or `none` (a plain process, scrubbed environment).
    #[arg(long, value_enum, default_value = "bwrap")]
    sandbox: SandboxMode,
    /// Time limit of one bash call; past it the call's processes are killed (exit code 124).
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration)]
    tool_timeout: Duration,
    /// Memory of one bash call's processes together (e.g. `512MiB`, `2G`; default 1GiB, or
    /// `memory` of `[sandbox]` in little.toml).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    max_memory: Option<u64>,
    /// Processes and threads of one bash call at once (default 256, or `processes`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_processes: Option<u64>,
    /// CPU time of each process of a bash call (default: `--tool-timeout`, or `cpu`).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    max_cpu: Option<Duration>,
    /// Size of one file a bash call writes (default: the scratch bound, or `file_size`).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    max_file_size: Option<u64>,
    /// Size of the scratch after a bash call; the call's newest writes past it are rolled
    /// back (default 256MiB, or `scratch`).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    max_scratch: Option<u64>,
    /// Size of each read-write memory store after a bash call, likewise (default 256MiB, or
    /// `memory_store`).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    max_memory_store: Option<u64>,
    /// Model calls a session may make.
    #[arg(long, value_name = "N", default_value_t = 40, value_parser = clap::value_parser!(u32).range(1..=1000))]
    max_turns: u32,
    /// Tokens a session may use, prompt plus completion as the provider reports usage;
    /// past it the session fails (default: no budget).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_tokens: Option<u64>,
    /// Where the memory stores live (`workflow/<id>/`, `org/`).
    #[arg(long, value_name = "DIR", default_value = ".little/memory")]
    memory_root: PathBuf,
    /// How long to wait for another `little` that is writing the same event log.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration_or_zero)]
    lock_wait: Duration,
    /// With a database store: how long this worker's claim on the run lasts unless renewed
    /// (it is renewed while the run goes on); another worker may take the run over once it
    /// has lapsed.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    lease: Duration,
    /// Show nothing of the session as it runs (the default when stderr is not a terminal).
    #[arg(long, conflicts_with = "progress")]
    quiet: bool,
    /// Show the session as it runs even when stderr is not a terminal.
    #[arg(long)]
    progress: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum SandboxMode {
    Bwrap,
    None,
}

impl HarnessArgs {
    fn options(&self) -> little_pipeline::HarnessOptions<'_> {
        little_pipeline::HarnessOptions {
            config: self.config.as_deref(),
            sandbox: match self.sandbox {
                SandboxMode::Bwrap => little_sandbox::Mode::Bwrap,
                SandboxMode::None => little_sandbox::Mode::None,
            },
            tool_timeout: self.tool_timeout,
            max_turns: self.max_turns,
            max_tokens: self.max_tokens,
            memory_root: Some(&self.memory_root),
            bounds: little_provider::SandboxSettings {
                memory: self.max_memory,
                processes: self.max_processes,
                cpu: self.max_cpu,
                file_size: self.max_file_size,
                scratch: self.max_scratch,
                memory_store: self.max_memory_store,
            },
            host: little_pipeline::host::Host::default(),
        }
    }

    /// Progress on stderr: live on a terminal unless quiet, notes always.
    fn progress(&self) -> crate::progress::Progress<std::io::Stderr> {
        let live = self.progress || (!self.quiet && std::io::stderr().is_terminal());
        crate::progress::Progress::new(std::io::stderr(), live)
    }
}

#[derive(clap::Args)]
pub struct FixArgs {
    /// The LWIR whose step failed.
    #[arg(value_name = "LWIR")]
    lwir: PathBuf,
    /// The id of the failed `code.run` step (it must declare `onFailure.fixer`).
    #[arg(long, value_name = "ID")]
    step: String,
    /// What the step's failure printed (a text file; its last 64 KiB are shown to the fixer).
    #[arg(long, value_name = "FILE")]
    error: PathBuf,
    /// The workflow definition the LWIR was planned for.
    #[arg(long, value_name = "DEF")]
    definition: PathBuf,
    /// The run id; running again with the same id resumes the session from its event log.
    #[arg(long, value_name = "ID")]
    run_id: String,
    /// Where the run's history is kept: an event log (JSON Lines, created when missing,
    /// appended to), or a PostgreSQL database (`postgres://USER@HOST/DB`; `PG*` variables and
    /// `~/.pgpass` fill in what the URL leaves out).
    #[arg(long, value_name = "LOG|URL")]
    events: String,
    /// Write the repaired LWIR here instead of printing it.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    output: Option<PathBuf>,
    #[command(flatten)]
    harness: HarnessArgs,
}

#[derive(clap::Args)]
pub struct VerifyArgs {
    /// The LWIR the runtime is about to run.
    #[arg(value_name = "LWIR")]
    lwir: PathBuf,
    /// Its lock (what `little lock -o` or `little plan -o` wrote, or the bare lock).
    #[arg(long, value_name = "LOCK")]
    lock: PathBuf,
    /// The definition as it is now: its capabilities must be the locked ones.
    #[arg(long, value_name = "DEF")]
    definition: Option<PathBuf>,
    #[command(flatten)]
    mcp: McpRegistryArgs,
}

/// Tools from MCP servers, joined to the definition's `tools`.
#[derive(clap::Args)]
struct McpRegistryArgs {
    /// A stdio MCP server whose tools join the definition's registry (`sh -c CMD`, started
    /// and stopped by little; repeatable): each tool's name is its id.
    #[arg(long = "tools-from-mcp", value_name = "CMD")]
    commands: Vec<String>,
    /// How long a server may take to start and to list its tools.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    mcp_timeout: Duration,
}

impl McpRegistryArgs {
    fn registry(&self) -> Result<little_pipeline::Registry, String> {
        little_mcp::client::registry(&self.commands, self.mcp_timeout)
    }
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum EventsFormat {
    Human,
    Json,
}

#[derive(clap::Args)]
pub struct EventsArgs {
    /// The store of `little plan --events`: an event log, or a database URL.
    #[arg(value_name = "LOG|URL")]
    log: String,
    /// Only this run's events (default: every run in the log; a database needs it).
    #[arg(long, value_name = "ID")]
    run_id: Option<String>,
    /// Print each event of the run as it is written, until the run ends (`--run-id` needed);
    /// with `--format json`, one event a line.
    #[arg(long, requires = "run_id")]
    follow: bool,
    #[arg(long, value_enum, default_value = "human")]
    format: EventsFormat,
}

/// `--events`: a path, or a database URL. Read here rather than by clap, whose error for
/// a value it refuses repeats the value, and a URL's password with it.
fn parse_store(text: &str) -> Result<Location, String> {
    Location::parse(text).map_err(|e| format!("`--events`: {e}"))
}

/// `500ms`, `90s`, `5m`, `1h`, or plain seconds; a time limit longer than zero.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let duration = parse_duration_or_zero(text)?;
    if duration.is_zero() {
        return Err("the time limit must be longer than zero".to_string());
    }
    Ok(duration)
}

/// A size above zero: bytes, or with a unit (`512MiB`, `2G`, `64K`; powers of 1024).
fn parse_size(text: &str) -> Result<u64, String> {
    match little_provider::config::parse_size(text) {
        Some(0) => Err("the bound must be more than zero".to_string()),
        Some(size) => Ok(size),
        None => Err(format!("`{text}` is not a size (e.g. 512MiB, 2G, 64K, or a number of bytes)")),
    }
}

/// A duration that may be zero (`--lock-wait 0`: do not wait); the same forms as
/// `little.toml`'s `timeout`.
fn parse_duration_or_zero(text: &str) -> Result<Duration, String> {
    little_provider::config::parse_duration(text)
        .ok_or_else(|| format!("`{text}` is not a duration (e.g. 500ms, 90s, 5m, 1h)"))
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
        Failure::Cancelled => Err("cancelled".to_string()),
        Failure::Failed { reason, located } => {
            write_blocked(&located, out).map_err(write_err)?;
            writeln!(out, "{what}: {reason}").map_err(write_err)?;
            Ok(EXIT_BLOCKED)
        }
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
        write!(
            out,
            "{}",
            human::diagnostics(&CheckedFile::of_diagnostics(&l.path, &l.text, &l.diagnostics), &options)
        )?;
    }
    Ok(())
}

pub fn snapshot(args: SnapshotArgs, out: &mut dyn Write) -> Result<i32, String> {
    let registry = args.mcp.registry()?;
    match little_pipeline::capabilities_with_registry(&args.definition, args.outer_loop.as_deref(), &registry) {
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
    let registry = args.mcp.registry()?;
    match little_pipeline::lock_with_registry(&args.lwir, &args.definition, &registry) {
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
    let planner = match &args.planner {
        Some(command) => little_pipeline::Planner::External { command, timeout: args.timeout },
        None => little_pipeline::Planner::Harness(args.harness.options()),
    };
    let store = little_pipeline::Store {
        location: parse_store(&args.events)?,
        lease: args.harness.lease,
        work_dir: None,
        on_event: None,
    };
    let request = little_pipeline::PlanRequest {
        definition: &args.definition,
        input: &args.input,
        planner,
        run_id: &args.run_id,
        events: &store,
        max_attempts: args.max_attempts,
        outer_loop: args.outer_loop.as_deref(),
        lock_wait: args.harness.lock_wait,
    };
    let mut progress = args.harness.progress();
    let _signals = little_sandbox::signals::KillChildrenOnSignal::install();
    let registry = args.mcp.registry()?;
    let planned = little_pipeline::plan_with_registry(&request, &registry, &mut progress);
    if let Ok(report) = &planned
        && let Some(path) = &args.output
    {
        std::fs::write(path, pretty(&report.registration.document()))
            .map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
    }
    if args.format == PlanFormat::Json {
        return plan_json(planned, &args, out);
    }
    match planned {
        Ok(report) => {
            let how = match (&args.planner, report.planner_runs, report.replayed_attempts) {
                (None, _, _) => session_summary(&report.session),
                (Some(_), 0, _) => "replayed from the event log, planner not run".to_string(),
                (Some(_), runs, 0) => format!("planner ran {runs} time{}", if runs == 1 { "" } else { "s" }),
                (Some(_), runs, replayed) => format!("{replayed} attempt(s) replayed, planner ran {runs} time(s)"),
            };
            let unit = if args.planner.is_some() { "attempt" } else { "submission" };
            writeln!(
                out,
                "run {}: registered {} ({}) from {unit} {}; {how}",
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

/// `little plan --format json`: the outcome as one `little-plan/v1` object, the packages'
/// result or error; exit codes are the human output's.
fn plan_json(
    planned: Result<little_pipeline::PlanReport, Failure>,
    args: &PlanArgs,
    out: &mut dyn Write,
) -> Result<i32, String> {
    use little_embed::planner;
    let result = planned
        .map(|report| planner::plan_result(&args.run_id, &report))
        .map_err(|failure| planner::run_error(failure, &args.events, &args.run_id));
    let code = match &result {
        Ok(_) => EXIT_OK,
        Err(error) if matches!(error.code, "blocked" | "run.failed") => EXIT_BLOCKED,
        Err(_) => EXIT_TOOL_FAILURE,
    };
    let outcome = planner::plan_outcome(result, &args.run_id);
    out.write_all(pretty(&outcome).as_bytes()).map_err(write_err)?;
    Ok(code)
}

/// What a built-in session made for real and what the log answered.
fn session_summary(stats: &little_pipeline::harness::SessionStats) -> String {
    let plural = |n: u32, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    if stats.called_nothing() {
        return format!(
            "replayed from the event log ({}, {}), nothing called",
            plural(stats.model_replayed, "model call"),
            plural(stats.tool_replayed, "tool call")
        );
    }
    let mut text =
        format!("{} and {} made", plural(stats.model_calls, "model call"), plural(stats.tool_runs, "tool call"));
    if stats.model_replayed + stats.tool_replayed > 0 {
        text.push_str(&format!(
            ", {} and {} replayed",
            plural(stats.model_replayed, "model call"),
            plural(stats.tool_replayed, "tool call")
        ));
    }
    text
}

pub fn fix(args: FixArgs, out: &mut dyn Write) -> Result<i32, String> {
    let store = little_pipeline::Store {
        location: parse_store(&args.events)?,
        lease: args.harness.lease,
        work_dir: None,
        on_event: None,
    };
    let request = little_pipeline::fix::FixRequest {
        lwir: &args.lwir,
        step: &args.step,
        error: &args.error,
        definition: &args.definition,
        run_id: &args.run_id,
        events: &store,
        harness: args.harness.options(),
        lock_wait: args.harness.lock_wait,
    };
    let mut progress = args.harness.progress();
    let _signals = little_sandbox::signals::KillChildrenOnSignal::install();
    match little_pipeline::fix::fix(&request, &mut progress) {
        Ok(report) => {
            let summary = format!(
                "run {}: step `{}` fixed, new WorkflowVersion {} ({}); {}",
                args.run_id,
                args.step,
                report.version_id,
                report.version_hash,
                session_summary(&report.session)
            );
            match &args.output {
                Some(path) => {
                    std::fs::write(path, &report.lwir_text)
                        .map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
                    writeln!(out, "{summary}\nrepaired LWIR written to {}", path.display()).map_err(write_err)?;
                }
                None => {
                    out.write_all(report.lwir_text.as_bytes()).map_err(write_err)?;
                    eprintln!("{summary}");
                }
            }
            Ok(EXIT_OK)
        }
        Err(failure) => failed(failure, &format!("run {}", args.run_id), out),
    }
}

pub fn verify(args: VerifyArgs, out: &mut dyn Write) -> Result<i32, String> {
    let registry = args.mcp.registry()?;
    match little_pipeline::verify::verify_with_registry(&args.lwir, &args.lock, args.definition.as_deref(), &registry) {
        Ok(verified) => {
            let scope = if verified.capabilities_checked {
                "its WorkflowVersion and the definition's capabilities match the lock"
            } else {
                "its WorkflowVersion matches the lock (give `--definition` to check capabilities too)"
            };
            writeln!(out, "{}: verified {} ({}): {scope}", args.lwir.display(), verified.id, verified.hash)
                .map_err(write_err)?;
            Ok(EXIT_OK)
        }
        Err(failure) => failed(failure, &format!("{}: not verified", args.lwir.display()), out),
    }
}

pub fn events(args: EventsArgs, out: &mut dyn Write) -> Result<i32, String> {
    let store = parse_store(&args.log)?;
    let shown_as = store.display();
    if let Some(path) = store.file()
        && !path.exists()
    {
        return Err(format!("the event log `{}` does not exist", path.display()));
    }
    let mut shown = 0u64;
    let mut describer = little_pipeline::show::Describer::default();
    let mut runs: Vec<String> = Vec::new();
    let mut current: Option<String> = None;
    let mut human = |event: &little_pipeline::events::Event, out: &mut dyn Write| -> Result<(), String> {
        if current.as_deref() != Some(event.run_id.as_str()) {
            writeln!(out, "run {}", event.run_id).map_err(write_err)?;
            current = Some(event.run_id.clone());
            if !runs.contains(&event.run_id) {
                runs.push(event.run_id.clone());
            }
        }
        writeln!(out, "{:>4}  {}", event.seq, describer.describe(event)).map_err(write_err)?;
        out.flush().map_err(write_err)
    };
    let mut torn_bytes = 0;
    if args.follow {
        let run_id = args.run_id.as_deref().expect("clap requires --run-id with --follow");
        // One event a line as it is written: a reader on the other end acts on each at once.
        little_store::follow(&store, run_id, &little_pipeline::events::ends_run, &mut |event| {
            shown += 1;
            match args.format {
                EventsFormat::Json => {
                    writeln!(out, "{}", event.to_text()).map_err(write_err)?;
                    out.flush().map_err(write_err)
                }
                EventsFormat::Human => human(&event, out),
            }
        })?;
    } else {
        // Events are written out as they are read: a log of any size is shown in bounded memory.
        let scan = match args.format {
            EventsFormat::Json => {
                write!(out, "[").map_err(write_err)?;
                let scan = little_store::scan(&store, args.run_id.as_deref(), |event| {
                    let separator = if shown == 0 { "\n  " } else { ",\n  " };
                    shown += 1;
                    write!(out, "{separator}{}", event.to_text()).map_err(write_err)
                })?;
                writeln!(out, "{}]", if shown == 0 { "" } else { "\n" }).map_err(write_err)?;
                scan
            }
            EventsFormat::Human => little_store::scan(&store, args.run_id.as_deref(), |event| {
                shown += 1;
                human(&event, out)
            })?,
        };
        torn_bytes = scan.torn_bytes;
    }
    if args.format == EventsFormat::Human {
        for run in &runs {
            if let Some(tally) = describer.tally(run) {
                writeln!(
                    out,
                    "run {run}: {} model call(s), {} prompt + {} completion tokens, {} tool call(s)",
                    tally.model_calls, tally.prompt_tokens, tally.completion_tokens, tally.tool_calls
                )
                .map_err(write_err)?;
            }
        }
    }
    if torn_bytes > 0 {
        eprintln!(
            "warning: the last line of `{shown_as}` is torn ({torn_bytes} bytes from an interrupted write) and was ignored"
        );
    }
    if let Some(id) = &args.run_id
        && shown == 0
    {
        return Err(format!("the event log `{shown_as}` has no events of run `{id}`"));
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
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        assert!(parse_duration("5d").is_err());
        assert_eq!(parse_duration_or_zero("0"), Ok(Duration::ZERO));
        assert!(parse_duration("soon").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert!(parse_size("0").unwrap_err().contains("more than zero"));
        assert!(parse_size("big").unwrap_err().contains("is not a size"));
    }
}
