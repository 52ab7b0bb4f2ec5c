//! The JSON parser on arbitrary bytes: UTF-8 decoding, parsing, and the conversions every
//! later stage makes of a tree (hashing value, serde value, canonical form, line/column);
//! and the outline of the same text, which must report the same and read the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use little_diagnostics::LineIndex;
use little_frontend::json::{decode_utf8, parse, parse_outline};

fuzz_target!(|bytes: &[u8]| {
    let text = match decode_utf8(bytes) {
        Ok(text) => text,
        Err(diagnostic) => {
            let span = diagnostic.span.expect("a UTF-8 fault has a span");
            assert!((span.start as usize) < bytes.len(), "UTF-8 fault outside the input");
            return;
        }
    };
    let parsed = parse(text);
    let outline = parse_outline(text.into(), &["nodes", "edges"]);
    assert_eq!(outline.diagnostics, parsed.diagnostics, "the outline reports what the parse reports");
    assert_eq!(outline.tree.is_some(), parsed.tree.is_some());
    let index = LineIndex::new(text);
    for diagnostic in &parsed.diagnostics {
        let span = diagnostic.span.clone().expect("a parser diagnostic has a span");
        assert!(span.start <= span.end, "reversed span {span:?}");
        assert!(span.end as usize <= text.len() + 1, "span {span:?} past the end ({} bytes)", text.len());
        index.line_col(text, span.start);
    }
    let Some(tree) = parsed.tree else {
        assert!(!parsed.diagnostics.is_empty(), "no tree and no diagnostic");
        return;
    };
    for i in 0..tree.len() {
        let span = tree.span(i as _);
        assert!(span.start <= span.end && span.end as usize <= text.len(), "node span {span:?} out of bounds");
        assert!(text.is_char_boundary(span.start as usize) && text.is_char_boundary(span.end as usize));
    }
    let _ = little_hashing::canonicalize(&tree.to_hashing_value(tree.root()));
    let whole = tree.to_serde(tree.root());
    let outline = outline.tree.expect("a tree");
    assert_eq!(outline.to_serde(outline.root()), whole, "the outline reads as the tree");
});
