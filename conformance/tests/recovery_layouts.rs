//! The guarantee of the editor's recovery in every layout (`little_conformance::recovery::
//! check_guarantee`): one edit inside one element that leaves a draft not JSON yields the
//! parse fault, diagnostics on the edited element, and diagnostics the intact draft had at
//! the same place, nothing else. The drafts of `guarantee_drafts` in each layout of
//! `little_conformance::layouts`, random edits of typing (structural characters, bare
//! words, quotes, line breaks): 256 cases a layout, `PROPTEST_CASES` for more; the soak
//! that counts failures over many cases is `examples/recovery_soak.rs`.

use little_conformance::layouts::{LAYOUTS, Layout, lay_out};
use little_conformance::recovery::{Edit, check_guarantee, element_spans, guarantee_drafts};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

/// The pieces an edit inserts: JSON's structural characters, quotes, line breaks, bare
/// words.
const PIECES: &[&str] =
    &["\"", "\"", ",", ",", ":", "{", "}", "[", "]", "\n", " ", "a", "1", "\\", "null", "\"x\"", "inn", "oops", "'"];

/// A draft laid out in `layout`, and an edit inside one of its elements.
fn case(layout: Layout) -> impl Strategy<Value = (String, Edit)> {
    let drafts = guarantee_drafts();
    (
        0..drafts.len(),
        any::<prop::sample::Index>(),
        any::<prop::sample::Index>(),
        0usize..12,
        prop::collection::vec(prop::sample::select(PIECES), 0..6),
    )
        .prop_map(move |(draft, element, at, length, pieces)| {
            let text = lay_out(&drafts[draft].1, layout);
            let spans = element_spans(&text);
            let span = spans[element.index(spans.len())].clone();
            let mut start = span.start + at.index(span.len());
            while !text.is_char_boundary(start) {
                start -= 1;
            }
            let mut end = (start + length).min(span.end);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            (text, Edit { removed: start..end, inserted: pieces.concat() })
        })
}

fn config() -> ProptestConfig {
    let mut config = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = 256;
    }
    config.failure_persistence =
        Some(Box::new(FileFailurePersistence::Direct("tests/regressions/recovery_layouts.proptest-regressions")));
    config
}

macro_rules! each_layout {
    ($($name:ident: $layout:expr,)*) => {
        proptest! {
            #![proptest_config(config())]
            $(
                #[test]
                fn $name((text, edit) in case($layout)) {
                    if let Err(message) = check_guarantee(&text, &edit) {
                        prop_assert!(false, "{}", message);
                    }
                }
            )*
        }
    };
}

each_layout! {
    the_guarantee_holds_pretty_printed_with_2_spaces: Layout::Pretty("  "),
    the_guarantee_holds_pretty_printed_with_4_spaces: Layout::Pretty("    "),
    the_guarantee_holds_pretty_printed_with_tabs: Layout::Pretty("\t"),
    the_guarantee_holds_compact_as_the_examples: Layout::Compact,
    the_guarantee_holds_one_element_a_line: Layout::ElementPerLine,
    the_guarantee_holds_on_one_line: Layout::OneLine,
    the_guarantee_holds_minified: Layout::Minified,
    the_guarantee_holds_with_crlf_line_ends: Layout::Crlf,
}

#[test]
fn every_layout_is_covered() {
    assert_eq!(LAYOUTS.len(), 8);
}

/// The case this guarantee was written for: in `examples/quarterly-report.json`, the first
/// two characters of the `send` node's config line typed over with `inn`. Before, four
/// untouched nodes were reported missing (`graph.dangling_edge` on `e1`..`e4`).
#[test]
fn a_bare_word_in_the_first_example_reports_the_fault_alone() {
    let text = include_str!("../../examples/quarterly-report.json");
    let line = r#"      "config": { "sender": "mail_ops""#;
    let at = text.find(line).expect("the send node's config line");
    let edit = Edit { removed: at..at + 2, inserted: "inn".into() };
    check_guarantee(text, &edit).unwrap_or_else(|message| panic!("{message}"));
    let report = little_conformance::recovery::edited_report(&edit.apply(text));
    let codes: Vec<&str> = report.diagnostics.iter().map(|d| d.code.as_str()).collect();
    let intact = little_conformance::recovery::edited_report(text);
    let mut expected: Vec<&str> = intact.diagnostics.iter().map(|d| d.code.as_str()).collect();
    expected.push("parse.invalid_json");
    expected.sort();
    let mut sorted = codes.clone();
    sorted.sort();
    assert_eq!(sorted, expected, "{:#?}", report.diagnostics);
}

/// Found by the soak (100,000 cases a layout; 2 failures in `pretty-2`, both this case,
/// minimised): the last edge's closing brace typed over with a comma and an opener or a
/// value. The recovery dropped the stray comma and closed `edges` after what was typed, so
/// the `[` and the array's own `]` read as one more edge, an array, touching the repairs
/// but holding none: `draft.invalid_shape` (an edge must be an object) beside the parse
/// fault, on text the edit did not all write. Such an element is unknown, as the edit's.
#[test]
fn an_opener_typed_over_the_last_edges_brace_is_not_an_edge_of_its_own() {
    let drafts = guarantee_drafts();
    for (name, _) in [("quarterly-report", 0), ("langflow", 1)] {
        let draft = &drafts.iter().find(|(n, _)| *n == name).expect("a guarantee draft").1;
        let text = lay_out(draft, Layout::Pretty("  "));
        let edges_close = text.rfind("\n  ]").expect("`edges` closes last");
        let brace = text[..edges_close].rfind('}').expect("the last edge's `}`");
        for typed in [",,[", ",\n\n [", ",,1", ",,\"x\"", ",,null"] {
            let edit = Edit { removed: brace..brace + 1, inserted: typed.into() };
            check_guarantee(&text, &edit).unwrap_or_else(|message| panic!("{name}, {typed:?}: {message}"));
            let report = little_conformance::recovery::edited_report(&edit.apply(&text));
            assert!(
                !report.diagnostics.iter().any(|d| d.code.as_str() == "draft.invalid_shape"),
                "{name}, {typed:?}: {:#?}",
                report.diagnostics
            );
        }
    }
}
