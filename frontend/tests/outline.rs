//! Outlines: a document parsed with the elements of some root arrays kept as spans only,
//! each read on its own later. Everything read through an outline must be what the whole
//! tree says.

use little_frontend::json::{ElementParser, JsonTree, JsonValue, parse, parse_outline};

const ARRAYS: &[&str] = &["nodes", "edges"];

/// Documents that put elements of every shape where an outline elides them, and the same
/// arrays where it must not.
const DOCUMENTS: &[&str] = &[
    r#"{"format":"workflow-draft/v1","nodes":[{"id":"a","config":{"k":[1,{"x":"y"}]}},{"id":"b"}],"edges":[{"id":"e","from":{"node":"a"}}]}"#,
    // Escaped ids, elements without ids or of other types, empty elements and arrays.
    r#"{"nodes":[{"id":"\u0061b"},{"title":"no id"},{"id":7},3,"text",null,[1,[2]],{}],"edges":[]}"#,
    // Findings inside elements: a duplicate key and an unsafe integer.
    r#"{"nodes":[{"id":"a","id":"b","n":9007199254740993}],"edges":[{"id":"e","to":{"node":"a","node":"c"}}]}"#,
    // Arrays of those names that are not the root's members, and a root member that is not an array.
    r#"{"x":{"nodes":[{"id":"deep"}]},"edges":{"nodes":[1]},"nodes":[[{"id":"nested"}]]}"#,
    // Whitespace, non-ASCII text and a byte order mark.
    "\u{FEFF}{ \"nodes\" : [ { \"id\" : \"é\" , \"title\" : \"ü ✓\" } ,\n  { \"id\" : \"z\" } ] }",
    // Keys that appear twice at the root: the first array is the one kept.
    r#"{"nodes":[{"id":"first"}],"nodes":[{"id":"second"}]}"#,
    "[1,2,3]",
    r#""nodes""#,
];

#[test]
fn an_outline_reads_as_the_whole_tree() {
    for text in DOCUMENTS {
        let full = parse(text);
        let outline = parse_outline(text.to_string().into(), ARRAYS);
        assert_eq!(outline.diagnostics, full.diagnostics, "{text}");
        let (full, outline) = (full.tree.expect("JSON"), outline.tree.expect("JSON"));
        // Converting an outline reads each elided element on its own.
        assert_eq!(outline.to_serde(outline.root()), full.to_serde(full.root()), "{text}");
        assert_eq!(outline.to_hashing_value(outline.root()), full.to_hashing_value(full.root()), "{text}");
    }
}

#[test]
fn elided_elements_keep_their_spans_and_plain_ids() {
    for text in DOCUMENTS {
        let full = parse(text).tree.expect("JSON");
        let outline = parse_outline(text.to_string().into(), ARRAYS).tree.expect("JSON");
        let (Some(full_root), Some(outline_root)) =
            (full.value(full.root()).as_object(), outline.value(outline.root()).as_object())
        else {
            assert!(outline.element(outline.root()).is_none());
            continue;
        };
        for (full_member, outline_member) in full_root.iter().zip(outline_root.iter()) {
            assert_eq!(full_member.key_span, outline_member.key_span);
            let (full_items, outline_items) = match (full.value(full_member.value), outline.value(outline_member.value))
            {
                (JsonValue::Array(f), JsonValue::Array(o)) => (f, o),
                _ => continue,
            };
            let elided = ARRAYS.contains(&full_member.key);
            for (&f, &o) in full_items.iter().zip(outline_items) {
                assert_eq!(full.span(f), outline.span(o), "{text}");
                assert_eq!(outline.value(o) == JsonValue::Elided, elided, "{text}");
                // The plain id is kept; an escaped one is read from the element.
                let raw_id = full.get(f, "id").filter(|m| {
                    let span = full.span(m.value);
                    full.value(m.value).as_str().is_some_and(|id| id.len() == span.len() - 2)
                });
                let expected = raw_id.and_then(|m| full.value(m.value).as_str()).filter(|_| elided);
                assert_eq!(outline.elided_id(o), expected, "{text}");
            }
        }
    }
}

#[test]
fn the_element_parser_reads_one_element_after_another() {
    let text: std::sync::Arc<str> = DOCUMENTS[1].into();
    let full = parse(&text).tree.unwrap();
    let outline = parse_outline(text.clone(), ARRAYS).tree.unwrap();
    let nodes =
        |tree: &JsonTree| tree.value(tree.get(tree.root(), "nodes").unwrap().value).as_array().unwrap().to_vec();
    let mut parser = ElementParser::new(outline.text());
    for (f, o) in nodes(&full).into_iter().zip(nodes(&outline)) {
        let element = parser.parse(outline.span(o));
        assert_eq!(element.span(element.root()), full.span(f));
        assert_eq!(element.to_serde(element.root()), full.to_serde(f));
    }
}

#[test]
fn an_outline_of_text_that_is_not_json_is_the_same_error() {
    for text in [r#"{"nodes":[{"id":"a"},{"id":}]}"#, r#"{"nodes":[{"id":"a"}"#, r#"{"nodes":[1,]}"#] {
        let outline = parse_outline(text.into(), ARRAYS);
        assert!(outline.tree.is_none());
        assert_eq!(outline.diagnostics, parse(text).diagnostics, "{text}");
    }
}

/// A draft lowers to the same declarations and findings from its outline as from its
/// tree, and every finding resolves to the same place through either.
#[test]
fn a_draft_lowers_alike_from_its_outline() {
    use little_frontend::anchor::Resolver;
    use little_frontend::draft::{DraftElements, lower_draft, lower_draft_from};
    use little_frontend::json::parse_outline_visiting;
    let examples = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples")).unwrap();
    let mut drafts: Vec<String> = examples
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .map(|path| std::fs::read_to_string(path).unwrap())
        .filter(|text| text.contains("workflow-draft/v1"))
        .collect();
    assert!(drafts.len() >= 4, "the examples have drafts");
    drafts.extend([
        // Wrong shapes inside elements, repeated and escaped ids, numbers out of range.
        r#"{"format":"workflow-draft/v1","nodes":[{"id":"a","family":7,"colour":1},{"id":"a","position":{"x":1e400,"y":0}},{"id":"\u0062","colour":2},{"family":"x"},5],
            "edges":[{"id":"e","from":{"node":"a"},"to":{"node":"b","port":3}},{"id":"e","from":{},"to":{"node":"a"}},[]]}"#.to_string(),
        r#"{"format":"workflow-draft/v1","nodes":{},"edges":7}"#.to_string(),
        // A duplicate root key: the first array is the one read.
        r#"{"format":"workflow-draft/v1","nodes":[{"id":"a","colour":1}],"nodes":[{"id":"b"},{"id":"c"}],"edges":[]}"#
            .to_string(),
    ]);
    for text in &drafts {
        let tree = parse(text).tree.unwrap();
        let outline = parse_outline(text.as_str().into(), ARRAYS).tree.unwrap();
        let (from_tree, from_outline) = (lower_draft(&tree), lower_draft(&outline));
        // And read while the outline is parsed, each element once.
        let mut elements = DraftElements::default();
        let visited = parse_outline_visiting(text.as_str().into(), ARRAYS, &mut |seen| elements.visit(seen));
        let from_visit = lower_draft_from(&visited.tree.unwrap(), elements);
        let sorted = |mut findings: Vec<little_frontend::anchor::Finding>| {
            findings.sort_by(|x, y| x.at.cmp(&y.at).then(x.diagnostic.message.cmp(&y.diagnostic.message)));
            findings
        };
        for lowered in [&from_outline, &from_visit] {
            assert_eq!(lowered.nodes, from_tree.nodes);
            assert_eq!(lowered.edges, from_tree.edges);
            assert_eq!(sorted(lowered.findings.clone()), sorted(from_tree.findings.clone()), "{text}");
        }
        let a = sorted(from_tree.findings);
        let (by_tree, by_outline) = (Resolver::new(&tree), Resolver::new(&outline));
        for finding in a {
            assert_eq!(by_outline.resolve(finding.clone()), by_tree.resolve(finding));
        }
    }
}
