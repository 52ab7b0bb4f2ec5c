//! The editor's error recovery: one arbitrary edit inside an element of a
//! pretty-printed draft, checked as the language server checks it (an edited file,
//! recovered when it is not JSON): no panic, every span within the edited text, and every
//! element on lines the edit did not touch still read and checked
//! (`little_conformance::recovery::check_edit`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use little_conformance::recovery::{Edit, check_edit, draft, edited_report, elements};

fuzz_target!(|bytes: &[u8]| {
    let [element, at, length, rest @ ..] = bytes else { return };
    let Ok(inserted) = std::str::from_utf8(rest) else { return };
    let text = draft(6);
    let spans = elements(&text);
    let span = &spans[*element as usize % spans.len()];
    let start = span.start + *at as usize % span.len();
    let end = (start + *length as usize % 16).min(span.end);
    let edit = Edit { removed: start..end, inserted: inserted.chars().take(16).collect() };
    let edited = edit.apply(&text);
    for diagnostic in &edited_report(&edited).diagnostics {
        if let Some(span) = &diagnostic.span {
            assert!(span.start <= span.end && span.end as usize <= edited.len(), "span {span:?} out of bounds");
        }
    }
    if let Err(message) = check_edit(&text, &edit) {
        panic!("{message}");
    }
});
