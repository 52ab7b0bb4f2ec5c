//! A long-lived workspace for an editor backend: open, edited and closed documents in one
//! database, so that an edit re-runs only the queries it touches, as in the language
//! server (`little_passes::report::diagnostics_report`, `SourceFile::edited`).

use std::collections::BTreeMap;
use std::sync::Arc;

use little_diagnostics::{Encoding, LineIndex};
use little_passes::{Database, SourceFile};
use salsa::{Durability, Setter};
use serde_json::Value;

use little_render::CheckedFile;
use little_render::json::report_json;

use crate::{Documents, Error, guarded, workspace_in};

/// A position in a document: a 0-based line, and a column counted in the workspace's
/// [`Encoding`] (UTF-16 code units for JavaScript strings, characters for Python's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    pub line: u32,
    pub character: u32,
}

/// One edit: the text between `start` and `end` replaced by `text`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    pub start: Position,
    pub end: Position,
    pub text: String,
}

/// What changed in a document: its whole text, or edits applied in order (each against
/// the text the previous one left).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    Text(String),
    Edits(Vec<Edit>),
}

struct Open {
    file: SourceFile,
    text: Arc<str>,
}

/// Documents held open against one set of workspace documents.
pub struct Workspace {
    db: Database,
    workspace: little_passes::Workspace,
    encoding: Encoding,
    open: BTreeMap<String, Open>,
}

impl Workspace {
    /// A workspace against `documents` (which cannot change for its lifetime: open another
    /// workspace for other ones); edits count columns in `encoding`.
    pub fn new(documents: &Documents, encoding: Encoding) -> Result<Workspace, Error> {
        guarded(|| {
            let mut db = Database::default();
            let workspace = workspace_in(&mut db, documents, Durability::HIGH)?;
            Ok(Workspace { db, workspace, encoding, open: BTreeMap::new() })
        })
    }

    /// Opens (or replaces) a document; its report (diagnostics only: `candidate` is null,
    /// see [`Workspace::report`]).
    pub fn open(&mut self, path: &str, text: &str) -> Result<Value, Error> {
        guarded(|| {
            let text: Arc<str> = text.into();
            match self.open.get_mut(path) {
                Some(open) => {
                    open.text = text.clone();
                    open.file.set_text(&mut self.db).to(text);
                }
                None => {
                    let file = SourceFile::edited(&self.db, path.to_string(), text.clone());
                    self.open.insert(path.to_string(), Open { file, text });
                }
            }
            Ok(self.diagnostics(path))
        })
    }

    /// Changes an open document; its report, as [`Workspace::open`] gives it.
    pub fn update(&mut self, path: &str, change: Change) -> Result<Value, Error> {
        guarded(|| {
            let encoding = self.encoding;
            let open = self.open.get_mut(path).ok_or_else(|| not_open(path))?;
            let text = match change {
                Change::Text(text) => text,
                Change::Edits(edits) => apply(&open.text, &edits, encoding).map_err(|m| {
                    Error::new("edit.invalid", format!("cannot apply the edits to `{path}`: {m}"), Some(path))
                })?,
            };
            let text: Arc<str> = text.into();
            open.text = text.clone();
            open.file.set_text(&mut self.db).to(text);
            Ok(self.diagnostics(path))
        })
    }

    /// Closes a document and lets go of what the database holds for it.
    pub fn close(&mut self, path: &str) -> Result<(), Error> {
        guarded(|| {
            let open = self.open.remove(path).ok_or_else(|| not_open(path))?;
            if let Some(last) = open.file.last_outline(&self.db) {
                last.forget();
            }
            little_passes::report::release(&mut self.db, self.workspace, open.file);
            Ok(())
        })
    }

    /// The full report of an open document, its candidate included (which hashes the
    /// whole text: an editor asks for it when it needs it, not on every keystroke).
    pub fn report(&self, path: &str) -> Result<Value, Error> {
        guarded(|| {
            let open = self.open.get(path).ok_or_else(|| not_open(path))?;
            let report = little_passes::report(&self.db, self.workspace, open.file);
            Ok(report_json(&[CheckedFile::of_report(path, &open.text, &report)]))
        })
    }

    /// The text a document has now.
    pub fn text(&self, path: &str) -> Option<&str> {
        self.open.get(path).map(|o| &*o.text)
    }

    /// The open documents, by path.
    pub fn paths(&self) -> Vec<&str> {
        self.open.keys().map(String::as_str).collect()
    }

    fn diagnostics(&self, path: &str) -> Value {
        let open = &self.open[path];
        let report = little_passes::diagnostics_report(&self.db, self.workspace, open.file);
        report_json(&[CheckedFile::of_report(path, &open.text, &report)])
    }
}

fn not_open(path: &str) -> Error {
    Error::new("file.unknown", format!("`{path}` is not open in this workspace"), Some(path))
}

/// Applies edits in order. A position past the end of its line is the line's end, one
/// past the last line the text's end (as in the language server); an edit whose end
/// comes before its start, or that names a line further past the end, is refused (it
/// would otherwise land at the end of the text, where the caller did not mean it).
fn apply(text: &str, edits: &[Edit], encoding: Encoding) -> Result<String, String> {
    let mut text = text.to_string();
    for (n, edit) in edits.iter().enumerate() {
        let index = LineIndex::new(&text);
        let lines = index.line_count() as u64;
        for (which, p) in [("starts", edit.start), ("ends", edit.end)] {
            if u64::from(p.line) > lines {
                return Err(format!(
                    "edit {} {which} at line {} (0-based), but the document has {lines} line{}",
                    n + 1,
                    p.line,
                    if lines == 1 { "" } else { "s" }
                ));
            }
        }
        let at = |p: Position| index.offset(&text, p.line, p.character, encoding) as usize;
        let (start, end) = (at(edit.start), at(edit.end));
        if (edit.end.line, edit.end.character) < (edit.start.line, edit.start.character) {
            return Err(format!(
                "edit {} ends (line {}, character {}) before it starts (line {}, character {})",
                n + 1,
                edit.end.line,
                edit.end.character,
                edit.start.line,
                edit.start.character
            ));
        }
        text.replace_range(start..end.max(start), &edit.text);
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: u32, character: u32) -> Position {
        Position { line, character }
    }

    #[test]
    fn edits_apply_in_order_counting_columns_in_the_encoding() {
        let text = "{\n  \"a\": \"é😀x\"\n}";
        // Column 11 in UTF-16 is after the emoji (two units); in characters it is after `x`.
        let insert = |character| vec![Edit { start: at(1, character), end: at(1, character), text: "!".into() }];
        assert_eq!(apply(text, &insert(11), Encoding::Utf16).unwrap(), "{\n  \"a\": \"é😀!x\"\n}");
        assert_eq!(apply(text, &insert(11), Encoding::Utf32).unwrap(), "{\n  \"a\": \"é😀x!\"\n}");
        // Column 10 in UTF-16 falls inside the emoji: it counts as the emoji's start.
        assert_eq!(apply(text, &insert(10), Encoding::Utf16).unwrap(), "{\n  \"a\": \"é!😀x\"\n}");
        let two = vec![
            Edit { start: at(0, 0), end: at(0, 1), text: "[".into() },
            Edit { start: at(2, 0), end: at(2, 1), text: "]".into() },
        ];
        assert_eq!(apply("{\n1\n}", &two, Encoding::Utf16).unwrap(), "[\n1\n]");
    }

    #[test]
    fn an_edit_on_a_line_past_the_end_is_refused_not_appended() {
        let text = "{\n}\n".repeat(50);
        let far = vec![Edit { start: at(9_999, 0), end: at(9_999, 0), text: "x".into() }];
        let error = apply(&text, &far, Encoding::Utf16).unwrap_err();
        assert!(error.contains("edit 1 starts at line 9999 (0-based), but the document has 101 lines"), "{error}");
        // One past the last line is the end of the text, as in the language server.
        let end = vec![Edit { start: at(101, 0), end: at(101, 0), text: "x".into() }];
        assert!(apply(&text, &end, Encoding::Utf16).unwrap().ends_with("}\nx"));
    }

    #[test]
    fn an_edit_that_ends_before_it_starts_is_refused() {
        let edit = vec![Edit { start: at(1, 0), end: at(0, 0), text: String::new() }];
        assert!(apply("a\nb", &edit, Encoding::Utf16).unwrap_err().contains("edit 1 ends"));
    }
}
