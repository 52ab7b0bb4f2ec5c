//! An edited draft's outline, patched where only one element changed, against the
//! outline of the edited text parsed whole: spans, ids, findings and the elements read
//! must all be the same, and an edit that cannot be patched must leave it untouched.

use little_frontend::draft::{LoweredDraft, lower_draft_from};
use little_frontend::json::{JsonTree, JsonValue};
use little_frontend::reparse::DraftOutline;

/// Drafts whose elements carry findings of every kind (a duplicate key, an unsafe
/// integer, a number out of range, unknown keys, escaped and missing ids, elements that
/// are not objects), around the elements the edits fall in, so that their spans move.
const DRAFTS: &[&str] = &[
    r#"{"format":"workflow-draft/v1","workflowId":"w","nodes":[
  {"id":"start","family":"trigger.manual","config":{}},
  {"id":"a","family":"agent.llm","config":{"prompt":"héllo","n":9007199254740993},"title":"A ✓"},
  {"id":"b","id":"b2","family":"action.http","config":{"url":"x","big":1e400}},
  {"id":"\u0063","family":"action.http","extra":true},
  7,
  {"family":"agent.llm","config":{"k":[1,{"x":"y"}]}},
  {"id":"a","family":"agent.llm"}
],"edges":[
  {"id":"e1","from":{"node":"start","port":"out"},"to":{"node":"a","port":"in"}},
  {"id":"e2","from":{"node":"a","port":"out"},"to":{"node":"b","port":"in","port":"x"}},
  "not an edge",
  {"id":"e3","kind":"retry","from":{"node":"b"},"to":{"node":"a"},"n":12345678901234567890}
],"title":"after the arrays"}"#,
    "\u{FEFF}{ \"format\" : \"workflow-draft/v1\" , \"nodes\" : [ { \"id\" : \"é\" , \"title\" : \"ü\" } ,\n  { \"id\" : \"z\" } ] , \"edges\" : [ ] }",
    r#"{"format":"workflow-draft/v1","nodes":[{"id":"first"}],"nodes":[{"id":"second"},{"id":"third"}],"edges":[{"id":"e"}]}"#,
];

/// What is written at the places edited.
const PIECES: &[&str] = &[
    "9",
    "\"",
    "{",
    "}",
    "[",
    "]",
    ",",
    " ",
    "\\",
    "é",
    "\"x\":1,",
    ",\"y\":[1,2]",
    "1e400",
    "99999999999999999999",
    "\"id\":\"q\",",
    "\"id\":",
    "null",
    "{}",
    "\\u0041",
    "\"id\":\"a\",\"id\":\"b\",",
];

/// Every node reachable from the root, in order: its span, its value and, for objects,
/// each key and the key's span. (A tree's key table is not compared: a whole parse lists
/// the keys of elided elements too, which nothing reads.)
fn describe(tree: &JsonTree) -> Vec<String> {
    let mut lines = Vec::new();
    let mut stack = vec![tree.root()];
    while let Some(i) = stack.pop() {
        let span = tree.span(i);
        let value = match tree.value(i) {
            JsonValue::Array(items) => {
                stack.extend(items.iter().rev());
                format!("array of {}", items.len())
            }
            JsonValue::Object(members) => {
                let mut keys = String::new();
                for member in members.iter() {
                    keys += &format!(" {}@{:?}", member.key, member.key_span);
                }
                stack.extend(members.iter().map(|m| m.value).collect::<Vec<_>>().into_iter().rev());
                format!("object{keys}")
            }
            JsonValue::Elided => format!("element, id {:?}", tree.elided_id(i)),
            other => format!("{other:?}"),
        };
        lines.push(format!("{span:?} {value}"));
    }
    lines
}

fn lowered(outline: &DraftOutline) -> LoweredDraft {
    let elements = outline.elements.clone().expect("a draft's elements");
    lower_draft_from(outline.tree.as_ref().expect("JSON"), std::sync::Arc::unwrap_or_clone(elements))
}

/// `patched` is the outline of its text, as a whole parse of it gives.
fn assert_same(patched: &DraftOutline, what: &str) {
    let whole = DraftOutline::parse(patched.text.clone());
    let (tree, whole_tree) = (patched.tree.as_ref().unwrap(), whole.tree.as_ref().expect("JSON when patched"));
    assert_eq!(describe(tree), describe(whole_tree), "{what}");
    assert_eq!(tree.text(), whole_tree.text(), "{what}");
    assert_eq!(patched.diagnostics, whole.diagnostics, "{what}");
    assert_eq!(lowered(patched), lowered(&whole), "{what}");
}

/// A small deterministic generator (xorshift), so that a failure replays.
struct Random(u64);

impl Random {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// A random edit of `text`: a piece inserted, a few characters deleted, or both.
fn random_edit(text: &str, random: &mut Random) -> String {
    let boundary = |random: &mut Random| loop {
        let at = random.below(text.len() + 1);
        if text.is_char_boundary(at) {
            return at;
        }
    };
    let start = boundary(random);
    let end = match random.below(3) {
        0 => start,
        _ => (start + 1 + random.below(6)).min(text.len()),
    };
    let end = (end..=text.len()).find(|&e| text.is_char_boundary(e)).unwrap_or(text.len());
    // Half the edits write text that keeps most places valid (inside strings and
    // numbers, or between tokens); the rest, anything.
    let piece = match random.below(4) {
        0 if end > start => "",
        0 | 1 => ["9", "é", "a", " "][random.below(4)],
        _ => PIECES[random.below(PIECES.len())],
    };
    format!("{}{piece}{}", &text[..start], &text[end..])
}

#[test]
fn a_patched_outline_is_the_whole_parse_of_the_edited_text() {
    let mut random = Random(0x005e_ed1e_771e);
    let mut patched = 0;
    for draft in DRAFTS {
        let mut outline = DraftOutline::parse(draft.to_string().into());
        assert_same(&outline, draft);
        // Edits one after another on one outline, as an editor makes them; from the draft
        // again every few edits, before random edits have broken what they fall in.
        for step in 0..1500 {
            if step % 8 == 0 {
                outline = DraftOutline::parse(draft.to_string().into());
            }
            let text = random_edit(&outline.text, &mut random);
            let before = (outline.text.clone(), outline.tree.clone(), outline.diagnostics.clone());
            if outline.edit(&text.clone().into()) {
                patched += 1;
                assert_same(&outline, &format!("step {step}: {text}"));
            } else {
                assert_eq!((outline.text.clone(), outline.tree.clone(), outline.diagnostics.clone()), before);
                // The caller parses the edited text whole; go on from it while it is a draft.
                let whole = DraftOutline::parse(text.into());
                if whole.elements.is_some() {
                    outline = whole;
                }
            }
        }
    }
    // Enough edits fell inside one element and stayed JSON to mean something.
    assert!(patched > 500, "only {patched} edits were patched");
}

#[test]
fn an_edit_inside_one_element_is_patched_and_others_are_not() {
    let draft = DRAFTS[0];
    let edits: &[(&str, &str, bool)] = &[
        // A config value, a key, a whole member: inside one node.
        (r#""prompt":"héllo""#, r#""prompt":"héllo there""#, true),
        (r#""url":"x""#, r#""uri":"x","url":"y""#, true),
        (r#""id":"e2""#, r#""id":"e22""#, true),
        // An id that gains an escape: the outline no longer keeps it.
        (r#""id":"start""#, r#""id":"st\u0061rt""#, true),
        // A finding that appears inside an element, and one that goes.
        (r#""id":"a","family":"agent.llm"}"#, r#""id":"a","id":"a","family":"agent.llm"}"#, true),
        (r#","big":1e400"#, "", true),
        // The header, across two elements, an element's bounds, and a new element.
        (r#""workflowId":"w""#, r#""workflowId":"v""#, false),
        (r#""title":"A ✓"},"#, r#""title":"A ✓"}, "#, false),
        ("\n  7,", "\n  7,8,", false),
        (r#"{"id":"e1""#, r#"{"id":"e0"},{"id":"e1""#, false),
        // An edit that breaks the element: the whole parse reports it.
        (r#""prompt":"héllo""#, r#""prompt":"héllo"#, false),
    ];
    for &(from, to, patches) in edits {
        let mut outline = DraftOutline::parse(draft.to_string().into());
        let text = draft.replacen(from, to, 1);
        assert_ne!(text, draft, "{from} is in the draft");
        assert_eq!(outline.edit(&text.into()), patches, "{from} -> {to}");
        if patches {
            assert_same(&outline, to);
        }
    }
}

/// An element may nest only as deep as the document allows around it: the element
/// parsed on its own counts the root object and the array it sits in.
#[test]
fn an_element_nested_past_the_limit_is_not_patched() {
    let depth = little_frontend::json::MAX_DEPTH - 2;
    let element = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let draft = format!(r#"{{"format":"workflow-draft/v1","nodes":[{element},{{"id":"a"}}]}}"#);
    let mut outline = DraftOutline::parse(draft.clone().into());
    assert!(outline.diagnostics.is_empty() && outline.tree.is_some(), "{:?}", outline.diagnostics);
    let deeper = draft.replacen("[]", "[[]]", 1);
    assert!(DraftOutline::parse(deeper.clone().into()).tree.is_none(), "the whole parse rejects it");
    assert!(!outline.edit(&deeper.into()));
}
