//! The whole check of one document (draft or LWIR) with the embedded catalog, as
//! `little check` runs it: parse, resolve, every validation layer, hashes, and the
//! resolution of every finding to a path, span and line/column.
#![no_main]

use libfuzzer_sys::fuzz_target;
use little_diagnostics::LineIndex;
use little_frontend::catalog::DEFAULT_CATALOG;
use little_passes::{Database, SourceFile, Workspace, report};

const CONTEXT: &str = include_str!("../../examples/context.json");
const BINDINGS: &str = include_str!("../../examples/bindings.json");

fuzz_target!(|bytes: &[u8]| {
    // Bytes that are not UTF-8 stop at decoding, which the `parse` target covers.
    let Ok(text) = std::str::from_utf8(bytes) else { return };
    let db = Database::default();
    let catalog = SourceFile::new(&db, "catalog.json".into(), DEFAULT_CATALOG.into());
    // Odd lengths also run the tenant and binding checks against the example context.
    let (context, bindings) = if text.len() % 2 == 1 {
        (
            Some(SourceFile::new(&db, "context.json".into(), CONTEXT.into())),
            Some(SourceFile::new(&db, "bindings.json".into(), BINDINGS.into())),
        )
    } else {
        (None, None)
    };
    let workspace = Workspace::new(&db, catalog, context, bindings, None);
    let file = SourceFile::new(&db, "draft.json".into(), text.into());
    let file_report = report(&db, workspace, file);
    let index = LineIndex::new(text);
    for diagnostic in &file_report.diagnostics {
        if let Some(span) = &diagnostic.span {
            assert!(span.start <= span.end && span.end as usize <= text.len() + 1, "span {span:?} out of bounds");
            index.line_col(text, span.start);
        }
    }
    // A candidate is issued exactly when nothing blocks (docs/reference/hashes.md).
    assert!(!(file_report.candidate.is_some() && file_report.blocking()), "candidate issued despite a block");
});
