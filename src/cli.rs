//! Commands of the `little` binary. Exit codes (docs/reference/command-line.md): 0 nothing blocks, 1 something
//! blocks (or a warning under `--deny-warnings`), 2 the tool could not do its job.

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand, ValueEnum};
use little_diagnostics::{Code, Diagnostic, Severity};
use little_passes::inputs::{InputPaths, Loaded, Style, load_workspace};
use little_passes::{Database, FileReport, SourceFile, Workspace, report};
use little_render::human::{self, HumanOptions};
use little_render::{CheckedFile, github, graph, json, sarif};

pub const EXIT_OK: i32 = 0;
pub const EXIT_BLOCKED: i32 = 1;
pub const EXIT_TOOL_FAILURE: i32 = 2;

#[derive(Parser)]
#[command(name = "little", version, about = "A compiler and static analyzer for agent workflows")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Human,
    Json,
    /// SARIF 2.1.0, for code-scanning dashboards.
    Sarif,
    /// GitHub Actions workflow annotations.
    Github,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum GraphFormat {
    Dot,
    Mermaid,
    Svg,
}

#[derive(clap::Args)]
struct Inputs {
    /// Catalog of node families (default: the embedded catalog).
    #[arg(long, value_name = "FILE")]
    catalog: Option<PathBuf>,
    /// Tenant context (`workflow-context/v1`); without it tenant checks are skipped.
    #[arg(long, value_name = "FILE")]
    context: Option<PathBuf>,
    /// Agent binding rows (`agent-bindings/v1`); without them binding status is unknown.
    #[arg(long, value_name = "FILE")]
    bindings: Option<PathBuf>,
    /// WorkflowDefinitionSnapshot that LWIR files are bound against (docs/reference/formats.md#snapshot);
    /// without it the binding checks are skipped.
    #[arg(long, value_name = "FILE")]
    snapshot: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Check drafts and print their diagnostics.
    Check {
        /// Files, or folders to search for drafts and LWIR files.
        #[arg(required = true, value_name = "PATH")]
        files: Vec<PathBuf>,
        #[command(flatten)]
        inputs: Inputs,
        #[arg(long, value_enum, default_value = "human")]
        format: Format,
        /// Exit 1 on warnings too.
        #[arg(long)]
        deny_warnings: bool,
        #[command(flatten)]
        limits: Limits,
        /// Threads to check with (default: the machine's cores): files at once, and the
        /// parts of one draft side by side. The report is the same on any number.
        #[arg(long, value_name = "N")]
        jobs: Option<usize>,
        /// Skip named JSON files that are not drafts or LWIR, as below a folder, and pass
        /// when none is left (for hooks that hand over every staged JSON file).
        #[arg(long)]
        skip_other_json: bool,
    },
    /// Write the compiled topology and candidate of a draft when nothing blocks.
    Compile {
        #[arg(value_name = "FILE")]
        file: PathBuf,
        #[arg(short = 'o', long = "output", value_name = "OUT")]
        output: PathBuf,
        #[command(flatten)]
        inputs: Inputs,
    },
    /// Explain a diagnostic code; without one, list every code.
    Explain { code: Option<String> },
    /// Print the JSON Schema of a document format, for editors; without a name, list them.
    Schema { name: Option<String> },
    /// Print the sha256 of the canonical (RFC 8785) form of any JSON document.
    Hash {
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
    /// Draw the executable topology, with cycles and faulty nodes and edges marked.
    Graph {
        #[arg(value_name = "FILE")]
        file: PathBuf,
        #[command(flatten)]
        inputs: Inputs,
        #[arg(long, value_enum, default_value = "dot")]
        format: GraphFormat,
    },
    /// Print the WorkflowDefinitionSnapshot of a definition (the `--snapshot` file of `check`).
    Snapshot(crate::pipeline::SnapshotArgs),
    /// Register an LWIR against its definition: the WorkflowVersion and the compiler lock.
    Lock(crate::pipeline::LockArgs),
    /// Plan a workflow: validate, snapshot, run the planner session (the built-in harness
    /// or `--planner`), register, lock.
    Plan(crate::pipeline::PlanArgs),
    /// Run a fixer session for a failed `code.run` step: the step's files repaired, a new LWIR.
    Fix(crate::pipeline::FixArgs),
    /// The runtime's check before it runs an LWIR: its WorkflowVersion and capabilities
    /// against its lock.
    Verify(crate::pipeline::VerifyArgs),
    /// Print the event sequence of planning runs.
    Events(crate::pipeline::EventsArgs),
    /// Run the language server on stdin and stdout (settings come from the client or
    /// `little.toml`; see the README).
    Lsp {
        /// Accepted for clients that pass it; stdio is the only transport.
        #[arg(long)]
        stdio: bool,
    },
    /// Serve the compiler's tools to coding agents over MCP on stdin and stdout (docs/mcp.md).
    Mcp {
        /// Largest document a call may give as text or name by path, in bytes (suffixes K, M, G).
        #[arg(long, value_name = "SIZE", default_value = "256M", value_parser = parse_size)]
        max_file_size: u64,
    },
    /// Print a completion script for a shell (e.g. `little completions bash >
    /// /etc/bash_completion.d/little`).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), e.g. `little man > little.1`.
    Man,
}

/// `little man`: one page, the commands' options included (a page a subcommand would need
/// installing eleven files to be read).
fn manual(out: &mut dyn Write) -> std::io::Result<()> {
    let command = <Cli as clap::CommandFactory>::command();
    let mut page = Vec::new();
    clap_mangen::Man::new(command.clone()).render(&mut page)?;
    for sub in command.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = format!("little {}", sub.get_name());
        writeln!(page, ".SH \"{}\"", name.to_uppercase())?;
        let man = clap_mangen::Man::new(sub.clone().bin_name(name));
        let mut section = Vec::new();
        man.render_synopsis_section(&mut section)?;
        man.render_description_section(&mut section)?;
        man.render_options_section(&mut section)?;
        // The command's own parts are subsections of its section.
        let section = String::from_utf8_lossy(&section).replace(".SH ", ".SS ");
        page.extend_from_slice(section.as_bytes());
    }
    out.write_all(&page)
}

/// A failure of the tool itself (exit 2), with what the user needs to fix it.
struct ToolError(String);

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        ToolError(message)
    }
}

pub fn run(args: Vec<OsString>, out: &mut dyn Write) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => {
            let code = if error.use_stderr() { EXIT_TOOL_FAILURE } else { EXIT_OK };
            let _ = error.print();
            return code;
        }
    };
    if !matches!(cli.command, Command::Lsp { .. } | Command::Mcp { .. }) {
        little_passes::db::keep_freed_memory();
    }
    let result = match cli.command {
        Command::Check { files, inputs, format, deny_warnings, limits, jobs, skip_other_json } => {
            let jobs = jobs.unwrap_or_else(cores);
            let options = CheckOptions { format, deny_warnings, limits, jobs, skip_other_json };
            check(&files, &inputs, options, out)
        }
        Command::Compile { file, output, inputs } => compile(&file, &output, &inputs, out),
        Command::Explain { code: Some(code) } => explain(&code, out),
        Command::Explain { code: None } => list_codes(out),
        Command::Schema { name } => crate::schema::run(name.as_deref(), out).map(|()| EXIT_OK).map_err(ToolError),
        Command::Hash { file } => hash(&file, out),
        Command::Graph { file, inputs, format } => graph(&file, &inputs, format, out),
        Command::Snapshot(args) => crate::pipeline::snapshot(args, out).map_err(ToolError),
        Command::Lock(args) => crate::pipeline::lock(args, out).map_err(ToolError),
        Command::Plan(args) => crate::pipeline::plan(args, out).map_err(ToolError),
        Command::Fix(args) => crate::pipeline::fix(args, out).map_err(ToolError),
        Command::Verify(args) => crate::pipeline::verify(args, out).map_err(ToolError),
        Command::Events(args) => crate::pipeline::events(args, out).map_err(ToolError),
        Command::Lsp { stdio: _ } => little_lsp::run_stdio().map(|()| EXIT_OK).map_err(ToolError),
        Command::Mcp { max_file_size } => {
            little_mcp::serve_stdio(little_mcp::Limits { max_file_size }).map(|()| EXIT_OK).map_err(ToolError)
        }
        Command::Completions { shell } => {
            // Written whole into memory first: the generator panics on a failed write (a
            // closed pipe), and a closed pipe is no reason to panic.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut <Cli as clap::CommandFactory>::command(), "little", &mut script);
            out.write_all(&script).map(|()| EXIT_OK).map_err(|e| ToolError(format!("cannot write the script: {e}")))
        }
        Command::Man => {
            manual(out).map(|()| EXIT_OK).map_err(|e| ToolError(format!("cannot write the manual page: {e}")))
        }
    };
    match result {
        Ok(code) => code,
        Err(ToolError(message)) => {
            eprintln!("error: {message}");
            EXIT_TOOL_FAILURE
        }
    }
}

/// The machine's cores: how many threads a check uses unless `--jobs` says.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

fn load(path: &Path) -> Result<Loaded, ToolError> {
    Ok(little_passes::inputs::load(path)?)
}

fn display(path: &Path) -> String {
    path.display().to_string()
}

/// Builds the workspace; a reader document that cannot be used fails the run (exit 2):
/// it is never read as "no catalog" or "no rows".
fn workspace(db: &mut Database, inputs: &Inputs) -> Result<Workspace, ToolError> {
    let paths = InputPaths {
        catalog: inputs.catalog.clone(),
        context: inputs.context.clone(),
        bindings: inputs.bindings.clone(),
        snapshot: inputs.snapshot.clone(),
    };
    Ok(load_workspace(db, &paths, little_passes::db::BATCH, Style::Human(human::plain))?)
}

/// One checked file: its report and its text (for rendering spans).
struct Checked {
    path: String,
    text: std::sync::Arc<str>,
    report: FileReport,
    /// What `compile` and `graph` read beyond the report (kept only when they ask).
    kept: Option<Kept>,
}

/// A checked file's document kind and, for a draft, its outline and its checked parts.
struct Kept {
    kind: Option<Result<little_frontend::DocumentKind, Box<little_frontend::anchor::Finding>>>,
    draft: Option<(little_frontend::json::JsonTree, little_passes::batch::CheckedDraft)>,
}

impl Kept {
    /// The compiled topology of a draft, whether or not something blocks.
    fn topology(&self) -> Option<little_ir::topology::Topology> {
        self.draft.as_ref().and_then(|(tree, draft)| draft.topology(tree))
    }
}

impl Checked {
    /// The file as the renderers see it.
    fn view(&self) -> CheckedFile<'_> {
        CheckedFile::of_report(&self.path, &self.text, &self.report)
    }
}

/// Limits that keep a shared CI runner safe: crossing one is a tool failure (exit 2).
#[derive(clap::Args, Clone, Copy)]
struct Limits {
    /// Largest file to read, in bytes (suffixes K, M, G for KiB, MiB, GiB).
    #[arg(long, value_name = "SIZE", default_value = "256M", value_parser = parse_size)]
    max_file_size: u64,
    /// Most nodes one draft may have.
    #[arg(long, value_name = "N", default_value_t = 2_000_000)]
    max_nodes: usize,
    /// Most edges one draft may have.
    #[arg(long, value_name = "N", default_value_t = 4_000_000)]
    max_edges: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_file_size: 256 << 20, max_nodes: 2_000_000, max_edges: 4_000_000 }
    }
}

fn parse_size(text: &str) -> Result<u64, String> {
    let (digits, shift) = match text.trim().to_ascii_uppercase().trim_end_matches("IB").trim_end_matches('B') {
        t if t.ends_with('K') => (t[..t.len() - 1].to_string(), 10),
        t if t.ends_with('M') => (t[..t.len() - 1].to_string(), 20),
        t if t.ends_with('G') => (t[..t.len() - 1].to_string(), 30),
        t => (t.to_string(), 0),
    };
    let n: u64 = digits.trim().parse().map_err(|_| format!("`{text}` is not a size (e.g. 1048576, 512K, 256M, 1G)"))?;
    n.checked_mul(1 << shift).ok_or_else(|| format!("`{text}` is too large"))
}

/// A file's report, and what `compile` and `graph` read beyond it.
type FileChecked = (FileReport, Option<Kept>);

/// A file read, waiting to be checked.
struct Pending {
    path: String,
    discovered: bool,
    text: std::sync::Arc<str>,
    not_utf8: Option<Diagnostic>,
}

/// Reads every file (in order, on this thread), then checks them on `jobs` threads and
/// returns the reports in the order of `candidates`. Discovered files that are not drafts
/// or LWIR are left out. The batch driver checks each file (no database); an LWIR file is
/// checked through the database, on a handle of the thread's own. `keep` keeps what
/// `compile` and `graph` read beyond the report.
fn check_files(
    db: &Database,
    ws: Workspace,
    candidates: &[crate::discover::Candidate],
    limits: Limits,
    jobs: usize,
    keep: bool,
) -> Result<Vec<Checked>, ToolError> {
    let mut loaded = Vec::with_capacity(candidates.len());
    for candidate in candidates {
        let path = &candidate.path;
        let size =
            std::fs::metadata(path).map_err(|e| ToolError(format!("cannot read `{}`: {e}", path.display())))?.len();
        if size > limits.max_file_size {
            return Err(ToolError(format!(
                "`{}` is {size} bytes, over the limit of {} (`--max-file-size`)",
                path.display(),
                limits.max_file_size
            )));
        }
        let (text, not_utf8) = match load(path)? {
            Loaded::Text(text) => (text, None),
            Loaded::NotUtf8(diagnostic, text) => (text, Some(*diagnostic)),
        };
        loaded.push(Pending { path: display(path), discovered: candidate.discovered, text, not_utf8 });
    }
    let inputs = little_passes::batch::BatchInputs::new(
        &little_passes::queries::catalog_of(db, ws.catalog(db)).value,
        little_passes::queries::context(db, ws),
        little_passes::queries::binding_rows(db, ws),
    );
    // The threads go to files when there are several, and into the one draft otherwise.
    let threads_a_file = (jobs / loaded.len().max(1)).max(1);
    let progress = Progress::new(loaded.len());
    let check_one = |db: &Database, item: &Pending| -> Result<Option<FileChecked>, ToolError> {
        if let Some(diagnostic) = &item.not_utf8 {
            progress.advance();
            let report = FileReport { document: None, diagnostics: vec![diagnostic.clone()], candidate: None };
            return Ok(Some((report, None)));
        }
        let outline = little_passes::batch::outline(item.text.clone(), threads_a_file);
        enforce_limits(outline.tree.as_ref(), &item.path, limits)?;
        let kind = outline.tree.as_ref().map(little_frontend::document_kind);
        // Below a folder: drafts and LWIR, and files that are not JSON at all (a broken
        // draft must not pass unseen); other JSON is not ours.
        use little_frontend::DocumentKind::{Draft, Lwir};
        if item.discovered && !matches!(kind, None | Some(Ok(Draft | Lwir))) {
            progress.advance();
            return Ok(None);
        }
        let tree = (keep && matches!(kind, Some(Ok(Draft)))).then(|| outline.tree.clone()).flatten();
        let (report, draft) = match little_passes::batch::check(&inputs, outline, threads_a_file) {
            Some(checked) => (checked.report, checked.draft),
            None => {
                let file =
                    SourceFile::with_durability(db, item.path.clone(), item.text.clone(), little_passes::db::BATCH);
                (report(db, ws, file), None)
            }
        };
        progress.advance();
        let kept = keep.then(|| Kept { kind, draft: tree.zip(draft) });
        Ok(Some((report, kept)))
    };
    let jobs = jobs.clamp(1, loaded.len().max(1));
    let mut results: Vec<Option<Result<Option<FileChecked>, ToolError>>> = (0..loaded.len()).map(|_| None).collect();
    if jobs == 1 {
        // On this thread: glibc gives a spawned thread its own arena, which grows by
        // `mprotect` a page range at a time (about 6% of a 100,000-node check).
        for (i, item) in loaded.iter().enumerate() {
            results[i] = Some(check_one(db, item));
        }
    } else {
        check_in_parallel(db, &loaded, jobs, &check_one, &mut results);
    }
    progress.finish();
    let mut checked = Vec::new();
    for (item, result) in loaded.into_iter().zip(results) {
        if let Some((report, kept)) = result.expect("every file was checked")? {
            checked.push(Checked { path: item.path, text: item.text, report, kept });
        }
    }
    Ok(checked)
}

/// Checks `loaded` on `jobs` threads, each with its own clone of the database.
fn check_in_parallel<T: Sync, R: Send>(
    db: &Database,
    loaded: &[T],
    jobs: usize,
    check_one: &(impl Fn(&Database, &T) -> R + Sync),
    results: &mut [Option<R>],
) {
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..jobs)
            .map(|job| {
                let db = db.clone();
                scope.spawn(move || {
                    // Round-robin, so that large and small files spread over the jobs.
                    (job..loaded.len()).step_by(jobs).map(|i| (i, check_one(&db, &loaded[i]))).collect::<Vec<_>>()
                })
            })
            .collect();
        for worker in workers {
            for (i, result) in worker.join().expect("a check job panicked") {
                results[i] = Some(result);
            }
        }
    });
}

/// A file named on the command line.
fn one(path: &Path) -> crate::discover::Candidate {
    crate::discover::Candidate { path: path.to_path_buf(), discovered: false }
}

/// The node and edge caps, checked on the parsed tree before any pass runs.
fn enforce_limits(tree: Option<&little_frontend::json::JsonTree>, path: &str, limits: Limits) -> Result<(), ToolError> {
    let Some(tree) = tree else { return Ok(()) };
    for (key, cap, flag) in [("nodes", limits.max_nodes, "--max-nodes"), ("edges", limits.max_edges, "--max-edges")] {
        let count = tree.get(tree.root(), key).and_then(|m| tree.value(m.value).as_array()).map_or(0, <[_]>::len);
        if count > cap {
            return Err(ToolError(format!("`{path}` has {count} {key}, over the limit of {cap} (`{flag}`)")));
        }
    }
    Ok(())
}

/// A progress line on stderr while many files are checked on a terminal.
struct Progress {
    total: usize,
    done: std::sync::atomic::AtomicUsize,
    shown: bool,
}

impl Progress {
    const MIN_FILES: usize = 20;

    fn new(total: usize) -> Progress {
        let shown = total >= Self::MIN_FILES && std::io::stderr().is_terminal();
        Progress { total, done: std::sync::atomic::AtomicUsize::new(0), shown }
    }

    fn advance(&self) {
        let done = self.done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        if self.shown {
            let width = 30;
            let filled = done * width / self.total;
            eprint!("\r[{}{}] {done}/{} files", "#".repeat(filled), " ".repeat(width - filled), self.total);
        }
    }

    fn finish(&self) {
        if self.shown {
            eprint!("\r{}\r", " ".repeat(60));
        }
    }
}

/// How `little check` checks and reports.
struct CheckOptions {
    format: Format,
    deny_warnings: bool,
    limits: Limits,
    jobs: usize,
    skip_other_json: bool,
}

fn check(paths: &[PathBuf], inputs: &Inputs, options: CheckOptions, out: &mut dyn Write) -> Result<i32, ToolError> {
    let CheckOptions { format, deny_warnings, limits, jobs, skip_other_json } = options;
    let mut db = Database::default();
    let ws = workspace(&mut db, inputs)?;
    let mut candidates = crate::discover::expand(paths).map_err(ToolError)?;
    if skip_other_json {
        for candidate in &mut candidates {
            candidate.discovered = true;
        }
    }
    let checked = check_files(&db, ws, &candidates, limits, jobs, false)?;
    if checked.is_empty() && skip_other_json {
        eprintln!("no drafts or LWIR files among the {} file(s) given: nothing to check", paths.len());
        return Ok(EXIT_OK);
    }
    if checked.is_empty() {
        let searched: Vec<String> = paths.iter().map(|p| format!("`{}`", p.display())).collect();
        return Err(ToolError(format!("found no drafts or LWIR files below {}", searched.join(", "))));
    }
    let files: Vec<CheckedFile<'_>> = checked.iter().map(Checked::view).collect();
    let warnings = files.iter().flat_map(|f| f.diagnostics).filter(|d| d.severity() == Severity::Warning).count();
    let blocking = files.iter().flat_map(|f| f.diagnostics).filter(|d| d.blocking()).count();
    let exit = if blocking > 0 || (deny_warnings && warnings > 0) { EXIT_BLOCKED } else { EXIT_OK };
    let written = match format {
        Format::Json => {
            writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&json::report_json(&files)).expect("JSON values serialize")
            )
        }
        Format::Human => {
            let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            write!(out, "{}", human::report(&files, &HumanOptions { color, ..HumanOptions::default() }))
        }
        Format::Sarif => {
            writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&sarif::sarif(&files, exit)).expect("JSON values serialize")
            )
        }
        Format::Github => write!(out, "{}", github::annotations(&files)),
    };
    written.map_err(|e| ToolError(format!("cannot write the report: {e}")))?;
    // The process ends here: tearing the database down would only cost time.
    std::mem::forget(db);
    Ok(exit)
}

fn compile(file: &Path, output: &Path, inputs: &Inputs, out: &mut dyn Write) -> Result<i32, ToolError> {
    let mut db = Database::default();
    let ws = workspace(&mut db, inputs)?;
    let checked = check_files(&db, ws, &[one(file)], Limits::default(), cores(), true)?;
    let checked = &checked[0];
    let options = HumanOptions { color: false, ..HumanOptions::default() };
    let write_err = |e: std::io::Error| ToolError(format!("cannot write: {e}"));
    if checked.report.document == Some(little_frontend::DocumentKind::Lwir) {
        return Err(ToolError(format!(
            "`{}` is an LWIR: `compile` writes a draft's topology; check an LWIR with `little check` \
             (its WorkflowVersion is the report's candidate)",
            checked.path
        )));
    }
    let topology = checked.kept.as_ref().and_then(Kept::topology);
    let (Some(candidate), Some(topology)) = (checked.report.draft_candidate(), topology) else {
        write!(out, "{}", human::diagnostics(&checked.view(), &options)).map_err(write_err)?;
        writeln!(out, "{}: not compiled: a diagnostic blocks", checked.path).map_err(write_err)?;
        return Ok(EXIT_BLOCKED);
    };
    let document = json::compiled_json(candidate, &topology, &checked.view());
    let text = serde_json::to_string_pretty(&document).expect("JSON values serialize") + "\n";
    std::fs::write(output, text).map_err(|e| ToolError(format!("cannot write `{}`: {e}", output.display())))?;
    writeln!(out, "{}: candidate {} written to {}", checked.path, candidate.id, output.display()).map_err(write_err)?;
    Ok(EXIT_OK)
}

fn graph(path: &Path, inputs: &Inputs, format: GraphFormat, out: &mut dyn Write) -> Result<i32, ToolError> {
    let mut db = Database::default();
    let ws = workspace(&mut db, inputs)?;
    let checked = check_files(&db, ws, &[one(path)], Limits::default(), cores(), true)?;
    let checked = &checked[0];
    let Some(kept) = checked.kept.as_ref() else {
        return Err(ToolError(format!("`{}` is not UTF-8", path.display())));
    };
    let picture = match format {
        GraphFormat::Dot => graph::Picture::Dot,
        GraphFormat::Mermaid => graph::Picture::Mermaid,
        GraphFormat::Svg => graph::Picture::Svg,
    };
    let topology = kept.topology().map(std::sync::Arc::new);
    let drawing =
        graph::draw_checked(&checked.path, topology, kept.kind.as_ref(), &checked.report.diagnostics, picture)
            .map_err(ToolError)?;
    write!(out, "{drawing}").map_err(|e| ToolError(format!("cannot write: {e}")))?;
    Ok(EXIT_OK)
}

fn explain(name: &str, out: &mut dyn Write) -> Result<i32, ToolError> {
    let Some(code) = Code::from_name(name) else {
        let help = Code::nearest(name).map(|c| format!("; did you mean `{}`?", c.as_str())).unwrap_or_default();
        return Err(ToolError(format!("unknown diagnostic code `{name}`{help} (`little explain` lists every code)")));
    };
    write!(out, "{}", code.explanation()).map_err(|e| ToolError(format!("cannot write: {e}")))?;
    Ok(EXIT_OK)
}

fn list_codes(out: &mut dyn Write) -> Result<i32, ToolError> {
    for code in Code::ALL {
        let blocking = if code.blocking() { "blocking" } else { "not blocking" };
        writeln!(out, "{:<36} {:<8} {:<13} {}", code.as_str(), code.severity().as_str(), blocking, code.summary())
            .map_err(|e| ToolError(format!("cannot write: {e}")))?;
    }
    Ok(EXIT_OK)
}

fn hash(path: &Path, out: &mut dyn Write) -> Result<i32, ToolError> {
    let text = match load(path)? {
        Loaded::Text(text) => text,
        Loaded::NotUtf8(d, _) => return Err(ToolError(format!("`{}` is not UTF-8: {}", path.display(), d.message))),
    };
    let parsed = little_frontend::json::parse(&text);
    let errors: Vec<Diagnostic> =
        parsed.diagnostics.iter().filter(|d| d.severity() == Severity::Error).cloned().collect();
    let Some(tree) = parsed.tree.filter(|_| errors.is_empty()) else {
        let rendered = human::plain(&display(path), &text, &errors);
        return Err(ToolError(format!("`{}` is not valid JSON:\n{}", path.display(), rendered.trim_end())));
    };
    let root = little_frontend::json::TreeValue { tree: &tree, idx: tree.root() };
    let hash = little_hashing::hash_canonical(root)
        .map_err(|e| ToolError(format!("`{}` cannot be canonicalized: {e}", path.display())))?;
    writeln!(out, "{hash}").map_err(|e| ToolError(format!("cannot write: {e}")))?;
    Ok(EXIT_OK)
}
