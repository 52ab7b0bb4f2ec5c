//! Reading the files a check runs against (catalog, context, binding rows, snapshot) into a
//! [`Workspace`], with the validation every driver needs: `little check` and `little lsp`
//! share this, so a reader document that cannot be used is refused the same way by both.

use std::path::{Path, PathBuf};

use little_diagnostics::{Diagnostic, Severity};
use little_frontend::anchor::{Finding, Resolver};
use little_frontend::catalog::DEFAULT_CATALOG;
use salsa::Durability;

use crate::db::{Database, SourceFile, Workspace};
use crate::queries::{bindings_of, catalog_of, context_of, outline};

/// The name the embedded catalog goes by in messages.
pub const EMBEDDED_CATALOG: &str = "<embedded catalog>";

/// Where the workspace documents are; `None` is "not given" (the embedded catalog, no
/// context, no rows, no snapshot).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InputPaths {
    pub catalog: Option<PathBuf>,
    pub context: Option<PathBuf>,
    pub bindings: Option<PathBuf>,
    pub snapshot: Option<PathBuf>,
}

/// A file read for checking: its text, or the diagnostic saying it is not UTF-8.
pub enum Loaded {
    Text(String),
    /// The diagnostic, and the text with each invalid byte shown as `?`: offsets are kept, so
    /// the diagnostic's line and column are those of the bad byte.
    NotUtf8(Box<Diagnostic>, String),
}

/// Reads a file's bytes; the error names the file.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))
}

/// Reads a file and decodes it as UTF-8.
pub fn load(path: &Path) -> Result<Loaded, String> {
    Ok(decode(read_bytes(path)?))
}

/// Decodes bytes as UTF-8; where they are not, the diagnostic and a text that keeps offsets.
pub fn decode(bytes: Vec<u8>) -> Loaded {
    // The bytes become the text where they are (a large draft is not copied to be decoded).
    let bytes = match String::from_utf8(bytes) {
        Ok(text) => return Loaded::Text(text),
        Err(error) => error.into_bytes(),
    };
    let diagnostic = little_frontend::json::decode_utf8(&bytes).expect_err("bytes that are not UTF-8");
    let mut text = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        text.push_str(chunk.valid());
        text.extend(std::iter::repeat_n('?', chunk.invalid().len()));
    }
    Loaded::NotUtf8(Box::new(diagnostic), text)
}

/// Builds the workspace, its inputs of the given durability ([`crate::db::BATCH`] for a
/// batch run); a reader document that cannot be used is an error whose message
/// shows every problem, written in `style`: it is never read as "no catalog" or "no rows".
pub fn load_workspace(
    db: &mut Database,
    paths: &InputPaths,
    durability: Durability,
    style: Style,
) -> Result<Workspace, String> {
    let read = |path: &Option<PathBuf>, what: &str| -> Result<Option<InputText>, String> {
        let Some(path) = path else { return Ok(None) };
        Ok(Some(InputText { name: path.display().to_string(), bytes: read_bytes(path)?, what: what.to_string() }))
    };
    let texts = [
        read(&paths.catalog, "catalog")?,
        read(&paths.context, "context")?,
        read(&paths.bindings, "binding rows")?,
        read(&paths.snapshot, "snapshot")?,
    ];
    let [catalog, context, bindings, snapshot] = texts;
    workspace_of(db, InputTexts { catalog, context, bindings, snapshot }, durability, style)
}

/// One workspace document in memory: its name in messages, its bytes, what it is.
pub struct InputText {
    pub name: String,
    pub bytes: Vec<u8>,
    /// "catalog", "context", "binding rows" or "snapshot", for messages.
    pub what: String,
}

/// The workspace documents in memory; `None` is "not given", as in [`InputPaths`].
#[derive(Default)]
pub struct InputTexts {
    pub catalog: Option<InputText>,
    pub context: Option<InputText>,
    pub bindings: Option<InputText>,
    pub snapshot: Option<InputText>,
}

/// [`load_workspace`] of documents in memory.
pub fn workspace_of(
    db: &mut Database,
    texts: InputTexts,
    durability: Durability,
    style: Style,
) -> Result<Workspace, String> {
    let file = |input: InputText| -> Result<SourceFile, String> {
        match decode(input.bytes) {
            Loaded::Text(text) => Ok(SourceFile::with_durability(db, input.name, text.into(), durability)),
            Loaded::NotUtf8(d, _) => Err(format!("{} `{}` is not UTF-8: {}", input.what, input.name, d.message)),
        }
    };
    let catalog = match texts.catalog {
        Some(input) => file(input)?,
        None => SourceFile::with_durability(db, EMBEDDED_CATALOG.to_string(), DEFAULT_CATALOG.into(), durability),
    };
    let context = texts.context.map(file).transpose()?;
    let bindings = texts.bindings.map(file).transpose()?;
    let snapshot = texts.snapshot.map(file).transpose()?;
    let ws = Workspace::builder(catalog, context, bindings, snapshot).durability(durability).new(db);
    match workspace_problems(db, ws, style) {
        None => Ok(ws),
        Some(problems) => Err(problems),
    }
}

/// Writes the diagnostics of one file (its path, its text) as a terminal shows them; the
/// renderers sit above this crate, so a driver hands one in.
pub type RenderDiagnostics = fn(&str, &str, &[Diagnostic]) -> String;

/// How the problems of unusable reader documents are written.
#[derive(Clone, Copy, Debug)]
pub enum Style {
    /// Rendered with their source lines by the given renderer, for a terminal.
    Human(RenderDiagnostics),
    /// One plain line per document, `the context `c.json` cannot be used: c.json:3:5:
    /// message (code)`, for an editor's message.
    Brief,
}

/// Every error of the workspace's reader documents, written in `style`; `None` when all
/// are usable.
pub fn workspace_problems(db: &Database, ws: Workspace, style: Style) -> Option<String> {
    let mut problems: Vec<String> = Vec::new();
    let mut usable = |file: SourceFile, what: &str, findings: &[Finding]| {
        let parsed = outline(db, file);
        let resolved: Vec<Diagnostic> = match &parsed.tree {
            Some(tree) => {
                let resolver = Resolver::new(tree);
                findings.iter().cloned().map(|f| resolver.resolve(f)).collect()
            }
            None => Vec::new(),
        };
        let all: Vec<Diagnostic> =
            parsed.diagnostics.iter().cloned().chain(resolved).filter(|d| d.severity() == Severity::Error).collect();
        let Some(first) = all.first() else { return };
        let (path, text) = (file.path(db), file.text(db));
        problems.push(match style {
            Style::Human(render) => format!("the {what} `{path}` cannot be used:\n{}", render(path, text, &all)),
            Style::Brief => {
                let (line, column) = first
                    .span
                    .as_ref()
                    .map_or((1, 1), |span| little_diagnostics::LineIndex::new(text).line_col(text, span.start));
                let more = match all.len() {
                    1 => String::new(),
                    n => format!(" (and {} more)", n - 1),
                };
                format!(
                    "the {what} `{path}` cannot be used: {path}:{line}:{column}: {} ({}){more}",
                    first.message,
                    first.code.as_str()
                )
            }
        });
    };
    let catalog = ws.catalog(db);
    usable(catalog, "catalog", &catalog_of(db, catalog).findings);
    if let Some(file) = ws.context(db) {
        usable(file, "context", &context_of(db, file).findings);
    }
    if let Some(file) = ws.bindings(db) {
        usable(file, "binding rows", &bindings_of(db, file).findings);
    }
    if let Some(file) = ws.snapshot(db) {
        usable(file, "snapshot", &crate::lwir::binding::snapshot_of(db, file).findings);
    }
    if let Some(message) = crate::checks::config::catalog_schema_problems(db, catalog) {
        problems.push(match style {
            Style::Human(_) => message,
            Style::Brief => message.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" "),
        });
    }
    let separator = if matches!(style, Style::Human(_)) { "" } else { "; " };
    (!problems.is_empty()).then(|| problems.join(separator).trim_end().to_string())
}
