//! `little` in process: the functions and the long-lived [`Workspace`] that the npm and
//! Python packages (`bindings/node`, `bindings/python`) wrap; their reports are the
//! `little-report/v1` objects `little check --format json` prints (`little_render::json`). Documents come in as
//! bytes or text and results go out as JSON values, through the same database and passes
//! as the CLI and the language server; the planner pipeline (`plan`, `fix`, `verify`,
//! `events`) runs in process too ([`planner`]). Every failure is an [`Error`] value; a panic is
//! caught at each entry point and becomes an `internal` error, so none reaches a host.

pub mod planner;
mod workspace;

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use little_diagnostics::{Code, Severity};
use little_passes::inputs::{InputText, InputTexts, Loaded, decode, workspace_of};
use little_passes::project::compiled_topology;
use little_passes::{Database, FileReport, SourceFile};
use little_pipeline::{Failure, Located};
use little_render::CheckedFile;
use little_render::json::{compiled_json, report_json};
use salsa::Durability;
use serde_json::{Value, json};

pub use little_diagnostics::Encoding;
pub use workspace::{Change, Edit, Position, Workspace};

/// Why a call could not give its result.
#[derive(Clone, Debug, PartialEq)]
pub struct Error {
    /// Stable, for programs: `input.invalid` (a catalog, context, binding rows, snapshot or
    /// definition that cannot be used), `json.invalid`, `code.unknown`, `schema.unknown`,
    /// `document.kind` (a document of another kind than the call takes), `blocked`
    /// (diagnostics block: [`Error::report`] holds them), `file.unknown` (a workspace path
    /// that is not open), `edit.invalid`, `internal` (a bug in little); from the planner
    /// calls ([`planner`]): `run.failed` (the run recorded `RunFailed`: [`Error::cause`] is its
    /// cause code), `cancelled`, `verify.failed`, `failed` (the pipeline could not do its job).
    pub code: &'static str,
    pub message: String,
    /// What it is about: an option (`catalog`, `definition`), a file path, an edit.
    pub path: Option<String>,
    /// With `blocked`: the `little-report/v1` of the documents that block.
    pub report: Option<Box<Value>>,
    /// With `run.failed`: the cause code of the run's `RunFailed` event
    /// (`planner_session_failed`, `capability_drift`, `input_schema_error`, …).
    pub cause: Option<String>,
}

impl Error {
    pub fn new(code: &'static str, message: impl Into<String>, path: Option<&str>) -> Error {
        Error { code, message: message.into(), path: path.map(str::to_string), report: None, cause: None }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Runs one entry point; a panic becomes an `internal` error instead of unwinding into
/// the host.
fn guarded<T>(call: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
    std::panic::catch_unwind(AssertUnwindSafe(call)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(Error::new("internal", format!("little failed: {what}; this is a bug in little"), None))
    })
}

/// The documents a check runs against, as their bytes; `None` is "not given" (the
/// embedded catalog, no context, no binding rows, no snapshot).
#[derive(Clone, Debug, Default)]
pub struct Documents {
    pub catalog: Option<Vec<u8>>,
    pub context: Option<Vec<u8>>,
    pub bindings: Option<Vec<u8>>,
    pub snapshot: Option<Vec<u8>>,
}

/// Builds the database's workspace from `documents`: one that cannot be used is an
/// `input.invalid` error naming the option, never read as "none".
fn workspace_in(
    db: &mut Database,
    documents: &Documents,
    durability: Durability,
) -> Result<little_passes::Workspace, Error> {
    let input = |bytes: &Option<Vec<u8>>, option: &str, what: &str| {
        bytes.clone().map(|bytes| InputText { name: option.to_string(), bytes, what: what.to_string() })
    };
    let texts = InputTexts {
        catalog: input(&documents.catalog, "catalog", "catalog"),
        context: input(&documents.context, "context", "context"),
        bindings: input(&documents.bindings, "bindings", "binding rows"),
        snapshot: input(&documents.snapshot, "snapshot", "snapshot"),
    };
    workspace_of(db, texts, durability, little_passes::inputs::Style::Human(little_render::human::plain)).map_err(
        |message| {
            // The message starts by naming the document: "the catalog `catalog` cannot be used".
            let option = ["catalog", "context", "binding rows", "snapshot"]
                .into_iter()
                .zip(["catalog", "context", "bindings", "snapshot"])
                .find(|(what, _)| message.starts_with(&format!("the {what}")) || message.starts_with(what))
                .map(|(_, option)| option);
            Error::new("input.invalid", message, option)
        },
    )
}

/// A document entered into a database: its file (none when it is not UTF-8), and the text
/// its positions refer to.
struct Entered {
    file: Option<SourceFile>,
    text: Arc<str>,
    not_utf8: Option<little_diagnostics::Diagnostic>,
}

impl Entered {
    fn new(db: &Database, path: &str, bytes: &[u8], durability: Durability) -> Entered {
        match decode(bytes) {
            Loaded::Text(text) => {
                let file = SourceFile::with_durability(db, path.to_string(), text.clone(), durability);
                Entered { file: Some(file), text, not_utf8: None }
            }
            Loaded::NotUtf8(diagnostic, text) => Entered { file: None, text, not_utf8: Some(*diagnostic) },
        }
    }

    fn report(&self, db: &Database, ws: little_passes::Workspace) -> FileReport {
        match (self.file, &self.not_utf8) {
            (Some(file), _) => little_passes::report(db, ws, file),
            (None, diagnostic) => {
                FileReport { document: None, diagnostics: diagnostic.iter().cloned().collect(), candidate: None }
            }
        }
    }
}

/// One document checked in a fresh batch database, as `little check` checks a file: the
/// database and workspace (for what else a caller reads of it), the document, its report.
fn check_one(
    text: &[u8],
    path: &str,
    documents: &Documents,
) -> Result<(Database, little_passes::Workspace, Entered, FileReport), Error> {
    let mut db = Database::default();
    let ws = workspace_in(&mut db, documents, little_passes::db::BATCH)?;
    let entered = Entered::new(&db, path, text, little_passes::db::BATCH);
    let report = entered.report(&db, ws);
    Ok((db, ws, entered, report))
}

/// `little check` of one document (a draft or an LWIR): the `little-report/v1` object
/// that `little check --format json PATH` prints for it.
pub fn check(text: &[u8], path: &str, documents: &Documents) -> Result<Value, Error> {
    guarded(|| {
        let mut db = Database::default();
        let ws = workspace_in(&mut db, documents, little_passes::db::BATCH)?;
        let entered = Entered::new(&db, path, text, little_passes::db::BATCH);
        // The batch driver, as `little check` runs; an LWIR through the database.
        let batch = entered.file.and_then(|_| {
            let inputs = little_passes::batch::BatchInputs::new(
                &little_passes::queries::catalog_of(&db, ws.catalog(&db)).value,
                little_passes::queries::context(&db, ws),
                little_passes::queries::binding_rows(&db, ws),
            );
            let jobs = std::thread::available_parallelism().map_or(1, usize::from);
            little_passes::batch::check(&inputs, little_passes::batch::outline(entered.text.clone(), jobs), jobs)
        });
        let report = match batch {
            Some(checked) => checked.report,
            None => entered.report(&db, ws),
        };
        Ok(report_json(&[CheckedFile::of_report(path, &entered.text, &report)]))
    })
}

/// `little compile` of one draft: the `little-compiled/v1` document (candidate, topology,
/// diagnostics). A draft a diagnostic blocks is a `blocked` error carrying its report.
pub fn compile(text: &[u8], path: &str, documents: &Documents) -> Result<Value, Error> {
    guarded(|| {
        let (db, ws, entered, report) = check_one(text, path, documents)?;
        if report.document == Some(little_frontend::DocumentKind::Lwir) {
            return Err(Error::new(
                "document.kind",
                format!(
                    "`{path}` is an LWIR: compile takes a draft; check an LWIR (its WorkflowVersion is the report's candidate)"
                ),
                Some(path),
            ));
        }
        let topology = entered.file.and_then(|file| compiled_topology(&db, ws, file).clone());
        let checked = CheckedFile::of_report(path, &entered.text, &report);
        let (Some(candidate), Some(topology)) = (report.draft_candidate(), topology) else {
            return Err(blocked(format!("{path}: not compiled: a diagnostic blocks"), report_json(&[checked]), path));
        };
        Ok(compiled_json(candidate, &topology, &checked))
    })
}

fn blocked(message: String, report: Value, path: &str) -> Error {
    Error { code: "blocked", message, path: Some(path.to_string()), report: Some(Box::new(report)), cause: None }
}

/// The page of one code, as `little explain CODE` prints it.
pub fn explain(name: &str) -> Result<String, Error> {
    guarded(|| match Code::from_name(name) {
        Some(code) => Ok(code.explanation().to_string()),
        None => {
            let help = Code::nearest(name).map(|c| format!("; did you mean `{}`?", c.as_str())).unwrap_or_default();
            Err(Error::new("code.unknown", format!("unknown diagnostic code `{name}`{help}"), None))
        }
    })
}

/// Every code: `[{ code, severity, blocking, summary }]`, in `little explain`'s order.
pub fn codes() -> Value {
    Value::Array(
        Code::ALL
            .iter()
            .map(|c| {
                json!({ "code": c.as_str(), "severity": c.severity().as_str(), "blocking": c.blocking(), "summary": c.summary() })
            })
            .collect(),
    )
}

/// `sha256:` of the RFC 8785 canonical form of a JSON document, as `little hash` prints it.
pub fn hash(text: &[u8]) -> Result<String, Error> {
    guarded(|| {
        let text = little_frontend::json::decode_utf8(text)
            .map_err(|d| Error::new("json.invalid", format!("the document is not UTF-8: {}", d.message), None))?;
        let parsed = little_frontend::json::parse(text);
        let first_error = parsed.diagnostics.iter().find(|d| d.severity() == Severity::Error);
        let (Some(tree), None) = (parsed.tree.as_ref(), first_error) else {
            let message = first_error.map_or("not JSON".to_string(), |d| d.message.clone());
            return Err(Error::new("json.invalid", format!("the document is not valid JSON: {message}"), None));
        };
        let root = little_frontend::json::TreeValue { tree, idx: tree.root() };
        little_hashing::hash_canonical(root)
            .map_err(|e| Error::new("json.invalid", format!("the document cannot be canonicalized: {e}"), None))
    })
}

/// The JSON Schema of a document format (`little schema NAME`).
pub fn schema(name: &str) -> Result<Value, Error> {
    guarded(|| match little_frontend::schemas::schema(name) {
        Some(schema) => Ok(serde_json::from_str(schema.text).expect("the bundled schemas are JSON")),
        None => {
            let names: Vec<&str> = little_frontend::schemas::SCHEMAS.iter().map(|s| s.name).collect();
            let help = little_diagnostics::suggest::did_you_mean(name, names.iter().copied())
                .map(|h| format!("; {h}"))
                .unwrap_or_default();
            Err(Error::new(
                "schema.unknown",
                format!("unknown schema `{name}`{help}; little has schemas for: {}", names.join(", ")),
                None,
            ))
        }
    })
}

/// The names of the document formats [`schema`] knows.
pub fn schema_names() -> Vec<&'static str> {
    little_frontend::schemas::SCHEMAS.iter().map(|s| s.name).collect()
}

fn text_of<'a>(bytes: &'a [u8], option: &str) -> Result<&'a str, Error> {
    little_frontend::json::decode_utf8(bytes)
        .map_err(|d| Error::new("input.invalid", format!("the {option} is not UTF-8: {}", d.message), Some(option)))
}

fn failure(failure: Failure, option: &str) -> Error {
    match failure {
        Failure::Tool(message) => Error::new("input.invalid", message, Some(option)),
        Failure::Cancelled => Error::new("cancelled", "the call was cancelled", None),
        Failure::Blocked(located) | Failure::Failed { located, .. } => {
            let first = located.iter().flat_map(|l| &l.diagnostics).find(|d| d.blocking());
            let message = match first {
                Some(d) => format!("{option}: {} ({})", d.message, d.code.as_str()),
                None => format!("{option}: a diagnostic blocks"),
            };
            blocked(message, located_report(&located), option)
        }
    }
}

fn located_report(located: &[Located]) -> Value {
    let reports: Vec<FileReport> = located
        .iter()
        .map(|l| FileReport { document: None, diagnostics: l.diagnostics.clone(), candidate: None })
        .collect();
    let checked: Vec<CheckedFile<'_>> =
        located.iter().zip(&reports).map(|(l, report)| CheckedFile::of_report(&l.path, &l.text, report)).collect();
    report_json(&checked)
}

/// The WorkflowDefinitionSnapshot of a definition (`little snapshot`), with the hashes
/// the planner pipeline locks.
pub fn snapshot(definition: &[u8]) -> Result<Value, Error> {
    guarded(|| {
        let text = text_of(definition, "definition")?;
        let capabilities =
            little_pipeline::capabilities_of_text("definition", text).map_err(|f| failure(f, "definition"))?;
        Ok(serde_json::from_str(&capabilities.snapshot_text()).expect("the snapshot is JSON"))
    })
}

/// Validates an LWIR against a definition, then registers and locks it (`little lock`):
/// the registration document.
pub fn lock(lwir: &[u8], definition: &[u8]) -> Result<Value, Error> {
    guarded(|| {
        let text = text_of(definition, "definition")?;
        let capabilities =
            little_pipeline::capabilities_of_text("definition", text).map_err(|f| failure(f, "definition"))?;
        let registration = little_pipeline::lock_bytes(&capabilities, "lwir", lwir).map_err(|f| failure(f, "lwir"))?;
        Ok(registration.document())
    })
}

/// `little graph --format mermaid` of one draft: the Mermaid text of its executable
/// topology, with the diagnostics' nodes and edges marked. A document with no topology to
/// draw is a `document.kind` error saying why.
pub fn graph(text: &[u8], path: &str, documents: &Documents) -> Result<String, Error> {
    guarded(|| {
        let (db, ws, entered, report) = check_one(text, path, documents)?;
        let Some(file) = entered.file else {
            return Err(Error::new("document.kind", format!("`{path}` is not UTF-8"), Some(path)));
        };
        let checked = CheckedFile::of_report(path, &entered.text, &report);
        little_render::graph::draw(&db, ws, file, &checked, little_render::graph::Picture::Mermaid)
            .map_err(|message| Error::new("document.kind", message, Some(path)))
    })
}

/// The catalog's families whose id, kind or semantic contains `query` (every family
/// without one), as an agent needs them to write a node that checks: id, kind, semantic,
/// ports with their types, and the config schema's required and known fields. The
/// embedded catalog when `catalog` is `None`; one that cannot be used is `input.invalid`.
pub fn families(query: Option<&str>, catalog: Option<&[u8]>) -> Result<Value, Error> {
    guarded(|| {
        let mut db = Database::default();
        let documents = Documents { catalog: catalog.map(<[u8]>::to_vec), ..Documents::default() };
        let ws = workspace_in(&mut db, &documents, little_passes::db::BATCH)?;
        let read = little_passes::queries::catalog_of(&db, ws.catalog(&db));
        let query = query.map(str::to_lowercase).unwrap_or_default();
        let matches = |family: &little_ir::catalog::Family| {
            [family.id.as_str(), family.kind.as_str(), family.semantic.as_str()]
                .iter()
                .any(|field| field.to_lowercase().contains(&query))
        };
        let ports = |ports: &[little_ir::catalog::Port]| -> Vec<Value> {
            ports
                .iter()
                .map(|p| json!({ "name": p.name, "types": p.types, "required": p.required, "multiple": p.multiple }))
                .collect()
        };
        let families: Vec<Value> = read
            .value
            .families
            .iter()
            .filter(|family| matches(family))
            .map(|family| {
                let schema = family.config_schema.as_ref();
                let required = schema.and_then(|s| s.get("required")).cloned().unwrap_or_else(|| json!([]));
                let fields: Vec<&String> = schema
                    .and_then(|s| s.get("properties"))
                    .and_then(Value::as_object)
                    .map_or(Vec::new(), |p| p.keys().collect());
                json!({
                    "id": family.id,
                    "kind": family.kind.as_str(),
                    "semantic": family.semantic,
                    "inputs": ports(&family.inputs),
                    "outputs": ports(&family.outputs),
                    "configRequired": required,
                    "configFields": fields,
                    "deprecated": family.deprecated,
                })
            })
            .collect();
        Ok(json!({ "catalogVersion": read.value.version, "families": families }))
    })
}

/// The text of the catalog little checks against when none is given.
pub fn embedded_catalog() -> &'static str {
    little_frontend::catalog::DEFAULT_CATALOG
}
