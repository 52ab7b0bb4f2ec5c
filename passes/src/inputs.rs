//! Reading the files a check runs against (catalog, context, binding rows, snapshot) into a
//! [`Workspace`], with the validation every driver needs: `little check` and `little lsp`
//! share this, so a reader document that cannot be used is refused the same way by both.

use std::path::{Path, PathBuf};
use std::sync::Arc;

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
    Text(Arc<str>),
    /// The diagnostic, and the text with each invalid byte shown as `?`: offsets are kept, so
    /// the diagnostic's line and column are those of the bad byte.
    NotUtf8(Box<Diagnostic>, Arc<str>),
}

/// Reads a file's bytes; the error names the file.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))
}

/// Reads a file and decodes it as UTF-8, into the shared text the checks hold.
pub fn load(path: &Path) -> Result<Loaded, String> {
    let bytes = read_shared(path)?;
    if std::str::from_utf8(&bytes).is_err() {
        return Ok(decode(&bytes));
    }
    // SAFETY: `str` is `[u8]` known to be UTF-8 (same layout), and these bytes are; the
    // `Arc` is not shared yet, so nothing else sees them change type.
    Ok(Loaded::Text(unsafe { Arc::from_raw(Arc::into_raw(bytes) as *const str) }))
}

/// A file's bytes read straight into the shared memory the checks hold its text in: a
/// large draft is neither copied nor held twice while it is read (reading into a `Vec`
/// and copying into an `Arc` cost a 34 MB copy, and its pages, at 100,000 nodes). A file
/// that is longer than its size said (a pipe, procfs, a file being written) is read on to
/// its end from the same handle, and copied once.
fn read_shared(path: &Path) -> Result<Arc<[u8]>, String> {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    let error = |e: std::io::Error| format!("cannot read `{}`: {e}", path.display());
    let mut file = std::fs::File::open(path).map_err(error)?;
    let len = usize::try_from(file.metadata().map_err(error)?.len()).unwrap_or(0);
    let mut shared = Arc::<[u8]>::new_uninit_slice(len);
    let buffer = Arc::get_mut(&mut shared).expect("a new `Arc` is not shared");
    let mut filled = 0;
    while filled < len {
        let rest = &mut buffer[filled..];
        // SAFETY: read(2) writes at most `rest.len()` bytes at `rest`, memory owned here.
        let read = unsafe { libc::read(file.as_raw_fd(), rest.as_mut_ptr().cast(), rest.len()) };
        match read {
            0 => break,
            n if n > 0 => filled += n as usize,
            _ => match std::io::Error::last_os_error() {
                e if e.kind() == std::io::ErrorKind::Interrupted => {}
                e => return Err(error(e)),
            },
        }
    }
    let mut more = [0u8; 1];
    let extra = if filled == len { file.read(&mut more).map_err(error)? } else { 0 };
    if filled == len && extra == 0 {
        // SAFETY: every byte was written by read(2) above.
        return Ok(unsafe { shared.assume_init() });
    }
    // SAFETY: the first `filled` bytes were written by read(2) above.
    let read = unsafe { std::slice::from_raw_parts(buffer.as_ptr().cast::<u8>(), filled) };
    let mut bytes = Vec::with_capacity(filled + extra);
    bytes.extend_from_slice(read);
    bytes.extend_from_slice(&more[..extra]);
    file.read_to_end(&mut bytes).map_err(error)?;
    Ok(Arc::from(bytes))
}

/// Decodes bytes as UTF-8; where they are not, the diagnostic and a text that keeps offsets.
pub fn decode(bytes: &[u8]) -> Loaded {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Loaded::Text(Arc::from(text));
    }
    let diagnostic = little_frontend::json::decode_utf8(bytes).expect_err("bytes that are not UTF-8");
    let mut text = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        text.push_str(chunk.valid());
        text.extend(std::iter::repeat_n('?', chunk.invalid().len()));
    }
    Loaded::NotUtf8(Box::new(diagnostic), text.into())
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
        match decode(&input.bytes) {
            Loaded::Text(text) => Ok(SourceFile::with_durability(db, input.name, text, durability)),
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

#[cfg(test)]
mod load_tests {
    use super::{Loaded, load};

    fn text(loaded: Loaded) -> String {
        match loaded {
            Loaded::Text(text) => text.to_string(),
            Loaded::NotUtf8(diagnostic, _) => panic!("not UTF-8: {}", diagnostic.message),
        }
    }

    #[test]
    fn a_file_is_read_whole_into_its_text() {
        let dir = std::env::temp_dir().join(format!("little-load-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (big, empty, bad) = (dir.join("big.json"), dir.join("empty.json"), dir.join("bad.json"));
        let content: String = (0..200_000).map(|i| if i % 7 == 0 { 'é' } else { 'a' }).collect();
        std::fs::write(&big, &content).unwrap();
        std::fs::write(&empty, "").unwrap();
        std::fs::write(&bad, b"{\"id\":\"a\xffb\"}").unwrap();
        assert_eq!(text(load(&big).unwrap()), content);
        assert_eq!(text(load(&empty).unwrap()), "");
        match load(&bad).unwrap() {
            Loaded::NotUtf8(diagnostic, text) => {
                assert_eq!(&*text, "{\"id\":\"a?b\"}", "each bad byte is a `?` at its offset");
                assert_eq!(diagnostic.span, Some(8..9), "{diagnostic:?}");
            }
            Loaded::Text(text) => panic!("read as text: {text:?}"),
        }
        let missing = load(&dir.join("missing.json")).err().expect("an error");
        assert!(missing.starts_with("cannot read `") && missing.contains("missing.json"), "{missing}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A file whose size is not known ahead (procfs says 0) is read whole all the same,
    /// and so is a pipe (`little check <(generate)`), whose bytes can be read only once.
    #[test]
    fn a_file_larger_than_its_size_says_is_read_whole() {
        assert_eq!(std::fs::metadata("/proc/self/status").unwrap().len(), 0);
        let status = text(load(std::path::Path::new("/proc/self/status")).unwrap());
        assert!(status.starts_with("Name:") && status.contains("\nPid:"), "{status}");

        let fifo = std::env::temp_dir().join(format!("little-load-fifo-{}", std::process::id()));
        let _ = std::fs::remove_file(&fifo);
        let status = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
        assert!(status.success());
        let content: String = (0..100_000).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
        let writer = {
            let (fifo, content) = (fifo.clone(), content.clone());
            std::thread::spawn(move || std::fs::write(&fifo, content).expect("written into the pipe"))
        };
        let read = text(load(&fifo).unwrap());
        writer.join().unwrap();
        std::fs::remove_file(&fifo).unwrap();
        assert_eq!(read.len(), content.len());
        assert!(read == content, "the pipe's bytes, each once and in order");
    }
}
