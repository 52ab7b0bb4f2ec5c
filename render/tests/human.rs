//! Golden tests of the human renderer (colour off, so the output is plain ASCII).

use little_diagnostics::{Code, Diagnostic, LineIndex, Related, Witness};
use little_render::CheckedFile;
use little_render::human::{self, HumanOptions};

const DRAFT: &str = r#"{
  "format": "workflow-draft/v1",
  "nodes": [
    { "id": "fetch", "family": "http.get" },
    { "id": "write", "family": "sheet.write" }
  ],
  "edges": [
    { "id": "e1", "from": { "node": "fetch" }, "to": { "node": "write" } },
    { "id": "e2", "from": { "node": "write" }, "to": { "node": "ghost" } }
  ],
  "edgs": []
}
"#;

fn render_human(path: &str, source: &str, diagnostics: &[Diagnostic], options: &HumanOptions) -> String {
    human::diagnostics(&CheckedFile::of_diagnostics(path, source, diagnostics), options)
}

fn plain() -> HumanOptions {
    HumanOptions::default()
}

/// The byte range of the `nth` (0-based) occurrence of `needle` in `text`.
fn find(text: &str, needle: &str, nth: usize) -> std::ops::Range<u32> {
    let start = text.match_indices(needle).nth(nth).expect("needle in text").0;
    start as u32..(start + needle.len()) as u32
}

fn render(source: &str, diagnostics: &[Diagnostic]) -> String {
    render_human("drafts/q.json", source, diagnostics, &plain())
}

#[test]
fn default_options() {
    let options = HumanOptions::default();
    assert!(!options.color);
    assert_eq!(options.max_line_chars, 160);
}

#[test]
fn simple_error_with_label() {
    let diagnostic = Diagnostic::new(Code::GraphDanglingEdge, "edge `e2` targets node `ghost`, which does not exist")
        .with_edge("e2")
        .with_path("$.edges[1].to.node")
        .with_span(Some(find(DRAFT, "\"ghost\"", 0)));
    insta::assert_snapshot!("simple_error", render(DRAFT, &[diagnostic]));
}

#[test]
fn warning_with_help() {
    let diagnostic = Diagnostic::new(Code::DraftUnknownField, "unknown field `edgs`")
        .with_path("$.edgs")
        .with_span(Some(find(DRAFT, "\"edgs\"", 0)))
        .with_help(Some("did you mean `edges`?".to_owned()));
    insta::assert_snapshot!("warning_with_help", render(DRAFT, &[diagnostic]));
}

#[test]
fn related_span() {
    let source = "{\n  \"id\": \"a\",\n  \"family\": \"x\",\n  \"id\": \"b\"\n}\n";
    let diagnostic = Diagnostic::new(Code::ParseDuplicateKey, "key `id` appears twice in this object")
        .with_path("$.id")
        .with_span(Some(find(source, "\"id\"", 1)))
        .with_related(Related {
            message: "first occurrence".to_owned(),
            path: "$.id".to_owned(),
            span: Some(find(source, "\"id\"", 0)),
        })
        .with_related(Related {
            message: "output declared here".to_owned(),
            path: "$.nodes[1].contracts.outputs[0]".to_owned(),
            span: None,
        });
    insta::assert_snapshot!("related_span", render(source, &[diagnostic]));
}

#[test]
fn without_span() {
    let diagnostics = [
        Diagnostic::new(Code::RequestMissingIdentity, "the draft has no `tenantId`")
            .with_path("$.tenantId")
            .with_help(Some("add the tenant the draft belongs to".to_owned())),
        Diagnostic::new(Code::ParseDuplicateKey, "key `id` appears twice").with_related(Related {
            message: "first occurrence".to_owned(),
            path: "$.nodes[0].id".to_owned(),
            span: Some(find(DRAFT, "\"id\"", 1)),
        }),
    ];
    insta::assert_snapshot!("without_span", render(DRAFT, &diagnostics));
}

#[test]
fn witness_note() {
    let diagnostic = Diagnostic::new(Code::GraphCycle, "forward edges close a loop through `a`")
        .with_node("a")
        .with_path("$.nodes[0]")
        .with_span(Some(find(DRAFT, "{ \"id\": \"fetch\", \"family\": \"http.get\" }", 0)))
        .with_witness(Witness {
            nodes: vec!["a".into(), "b".into(), "c".into()],
            edges: vec!["e4".into(), "e9".into(), "e2".into()],
        })
        .with_help(Some("break the loop with a retry edge".to_owned()));
    let needs = Diagnostic::new(Code::GraphCycle, "steps need each other")
        .with_witness(Witness { nodes: vec!["s1".into(), "s2".into()], edges: vec![] });
    insta::assert_snapshot!("witness_note", render(DRAFT, &[diagnostic, needs]));
}

#[test]
fn multi_byte_line() {
    let source = "{\n  \"name\": \"r\u{e9}sum\u{e9} \u{65e5}\u{672c}\u{8a9e} \u{1f600}\", \"bad\": tru\n}\n";
    let span = find(source, "tru", 0);
    let diagnostic = Diagnostic::new(Code::ParseInvalidJson, "expected a value").with_span(Some(span.clone()));
    let out = render(source, &[diagnostic]);
    // Columns count characters: the `t` is the 34th character of line 2.
    let (line, column) = LineIndex::new(source).line_col(source, span.start);
    assert_eq!((line, column), (2, 34));
    assert!(out.contains("drafts/q.json:2:34"), "{out}");
    insta::assert_snapshot!("multi_byte_line", out);
}

#[test]
fn multiline_span() {
    let diagnostic = Diagnostic::new(Code::DraftInvalidShape, "`nodes` has the wrong shape")
        .with_path("$.nodes")
        .with_span(Some(find(DRAFT, "[\n    { \"id\": \"fetch\"", 0).start..find(DRAFT, "  ],", 0).end - 1));
    insta::assert_snapshot!("multiline_span", render(DRAFT, &[diagnostic]));
}

#[test]
fn label_inside_a_multiline_label() {
    let nodes = find(DRAFT, "[\n    { \"id\": \"fetch\"", 0).start..find(DRAFT, "  ],", 0).end - 1;
    let diagnostic = Diagnostic::new(Code::GraphMissingTrigger, "the draft has no trigger")
        .with_path("$.nodes")
        .with_span(Some(nodes))
        .with_related(Related {
            message: "not a trigger".to_owned(),
            path: "$.nodes[1].family".to_owned(),
            span: Some(find(DRAFT, "\"sheet.write\"", 0)),
        });
    let out = render(DRAFT, &[diagnostic]);
    // One source group: the file header appears once.
    assert_eq!(out.matches("drafts/q.json").count(), 1, "{out}");
    insta::assert_snapshot!("label_inside_a_multiline_label", out);
}

/// A 5 MB draft on one line, the fault at column 1048576.
fn minified() -> (String, std::ops::Range<u32>) {
    let mut source = String::from("{\"format\":\"workflow-draft/v1\",\"nodes\":[");
    let mut i = 0;
    while source.len() < 1_048_575 - 40 {
        source.push_str(&format!("{{\"id\":\"n{i}\",\"family\":\"f\"}},"));
        i += 1;
    }
    while source.len() < 1_048_575 {
        source.push(' ');
    }
    let start = source.len() as u32;
    source.push_str("{\"id\":\"ghost\",\"family\":\"nope\"},");
    let end = source.len() as u32;
    while source.len() < 5_000_000 {
        source.push_str(&format!("{{\"id\":\"n{i}\",\"family\":\"f\"}},"));
        i += 1;
    }
    source.push_str("{\"id\":\"last\"}]}");
    (source, start..end)
}

#[test]
fn five_megabyte_single_line() {
    let (source, span) = minified();
    assert!(source.len() > 5_000_000 && !source.contains('\n'));
    let diagnostic = Diagnostic::new(
        Code::CatalogUnknownFamily,
        "node `ghost` names family `nope`, which the catalog does not have",
    )
    .with_node("ghost")
    .with_path("$.nodes[26000]")
    .with_span(Some(span.clone()))
    .with_related(Related {
        message: "the draft's format".to_owned(),
        path: "$.format".to_owned(),
        span: Some(find(&source, "\"workflow-draft/v1\"", 0)),
    })
    .with_related(Related {
        message: "last node".to_owned(),
        path: "$.nodes[-1]".to_owned(),
        span: Some(find(&source, "{\"id\":\"last\"}", 0)),
    });
    let out = render(&source, &[diagnostic]);
    assert_eq!(LineIndex::new(&source).line_col(&source, span.start), (1, 1_048_576));
    assert!(out.len() < 4000, "{} bytes:\n{out}", out.len());
    assert!(out.contains("at line 1, column 1048576"), "{out}");
    assert!(out.contains("drafts/q.json:1:1048576"), "{out}");
    insta::assert_snapshot!("five_megabyte_single_line", out);
}

#[test]
fn five_megabyte_single_line_report_stays_small() {
    let (source, span) = minified();
    let diagnostic = Diagnostic::new(Code::CatalogUnknownFamily, "unknown family").with_span(Some(span));
    let out = render(&source, &[diagnostic]);
    assert!(out.len() < 2000, "{} bytes:\n{out}", out.len());
    // A span over the whole line is shown by its two ends.
    let whole = Diagnostic::new(Code::DraftInvalidShape, "everything").with_span(Some(0..source.len() as u32));
    let out = render(&source, &[whole]);
    assert!(out.len() < 2000, "{} bytes:\n{out}", out.len());
    assert!(out.contains("drafts/q.json:1:1 "), "{out}");
}

#[test]
fn span_at_eof() {
    let source = "{\n  \"nodes\": [\n";
    let end = source.len() as u32;
    let eof = Diagnostic::new(Code::ParseInvalidJson, "unexpected end of input").with_span(Some(end..end));
    let unterminated = "{\"nodes\": [";
    let end2 = unterminated.len() as u32;
    let eof2 = Diagnostic::new(Code::ParseInvalidJson, "unexpected end of input").with_span(Some(end2..end2));
    let out = render(source, &[eof]);
    assert!(out.contains("drafts/q.json:3:1"), "{out}");
    let out2 = render(unterminated, &[eof2]);
    assert!(out2.contains("drafts/q.json:1:12"), "{out2}");
    insta::assert_snapshot!("span_at_eof", format!("{out}{out2}"));
}

#[test]
fn crlf_line_endings() {
    let source = DRAFT.replace('\n', "\r\n");
    let span = find(&source, "\"ghost\"", 0);
    assert_eq!(LineIndex::new(&source).line_col(&source, span.start), (9, 64));
    let diagnostics = [
        Diagnostic::new(Code::GraphDanglingEdge, "edge `e2` targets node `ghost`, which does not exist")
            .with_edge("e2")
            .with_span(Some(span)),
        Diagnostic::new(Code::DraftInvalidShape, "`edges` has the wrong shape")
            .with_span(Some(find(&source, "[\r\n    { \"id\": \"e1\"", 0).start..find(&source, "  ],", 1).end - 1)),
    ];
    let out = render(&source, &diagnostics);
    assert!(!out.contains('\r'), "{out:?}");
    assert!(out.contains("drafts/q.json:9:64"), "{out}");
    insta::assert_snapshot!("crlf_line_endings", out);
}

#[test]
fn long_line_with_labels_far_apart() {
    let mut source = String::from("{\"id\":\"a\",\"pad\":\"");
    source.push_str(&"\u{e9}".repeat(10_000));
    source.push_str("\",\"id\":\"b\"}\n");
    let diagnostic = Diagnostic::new(Code::ParseDuplicateKey, "key `id` appears twice in this object")
        .with_span(Some(find(&source, "\"id\"", 1)))
        .with_related(Related {
            message: "first occurrence".to_owned(),
            path: "$.id".to_owned(),
            span: Some(find(&source, "\"id\"", 0)),
        });
    let options = HumanOptions { color: false, max_line_chars: 40 };
    let out = render_human("drafts/q.json", &source, &[diagnostic], &options);
    assert!(out.contains("at line 1, column 10020"), "{out}");
    assert!(out.contains("drafts/q.json:1:10020"), "{out}");
    insta::assert_snapshot!("long_line_with_labels_far_apart", out);
}

#[test]
fn colour_uses_ansi_and_unicode() {
    let diagnostic = Diagnostic::new(Code::GraphDanglingEdge, "dangling").with_span(Some(find(DRAFT, "\"ghost\"", 0)));
    let options = HumanOptions { color: true, ..HumanOptions::default() };
    let out = render_human("drafts/q.json", DRAFT, std::slice::from_ref(&diagnostic), &options);
    assert!(out.contains('\u{1b}') && out.contains('\u{256d}'), "{out}");
    let out = render(DRAFT, &[diagnostic]);
    assert!(out.is_ascii(), "{out}");
}
