//! Edits of a draft, one after another on one outline as an editor makes them: after each,
//! an outline patched in place (`DraftOutline::edit`) must be the whole parse of the
//! edited text (spans, ids, findings, the elements read), and an edit it declines must
//! leave it as it was.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use little_frontend::draft::{LoweredDraft, lower_draft_from};
use little_frontend::json::{JsonTree, JsonValue};
use little_frontend::reparse::DraftOutline;

const DRAFT: &str = r#"{"format":"workflow-draft/v1","workflowId":"w","nodes":[
  {"id":"start","family":"trigger.manual","config":{}},
  {"id":"a","family":"agent.llm","config":{"prompt":"héllo","n":9007199254740993},"title":"A ✓"},
  {"id":"b","id":"b2","family":"action.http","config":{"url":"x","big":1e400}},
  {"id":"\u0063","family":"action.http","extra":true},
  7,
  {"id":"a","family":"agent.llm"}
],"edges":[
  {"id":"e1","from":{"node":"start","port":"out"},"to":{"node":"a","port":"in"}},
  "not an edge",
  {"id":"e3","kind":"retry","from":{"node":"b"},"to":{"node":"a","port":"in","port":"x"}}
]}"#;

fn describe(tree: &JsonTree) -> Vec<String> {
    let mut lines = Vec::new();
    let mut stack = vec![tree.root()];
    while let Some(i) = stack.pop() {
        let value = match tree.value(i) {
            JsonValue::Array(items) => {
                stack.extend(items.iter().rev());
                format!("array {}", items.len())
            }
            JsonValue::Object(members) => {
                let keys: Vec<String> = members.iter().map(|m| format!("{}@{:?}", m.key, m.key_span)).collect();
                stack.extend(members.iter().map(|m| m.value).collect::<Vec<_>>().into_iter().rev());
                format!("object {keys:?}")
            }
            JsonValue::Elided => format!("element {:?}", tree.elided_id(i)),
            other => format!("{other:?}"),
        };
        lines.push(format!("{:?} {value}", tree.span(i)));
    }
    lines
}

fn lowered(outline: &DraftOutline) -> Option<LoweredDraft> {
    let elements = Arc::unwrap_or_clone(outline.elements.clone()?);
    Some(lower_draft_from(outline.tree.as_ref()?, elements))
}

fuzz_target!(|bytes: &[u8]| {
    let mut outline = DraftOutline::parse(DRAFT.into());
    // Each edit: two bytes of position, one of length removed, one of length inserted,
    // then the inserted bytes.
    let mut rest = bytes;
    while rest.len() >= 4 {
        let text = outline.text.as_bytes();
        let at = u16::from_le_bytes([rest[0], rest[1]]) as usize % (text.len() + 1);
        let removed = (rest[2] as usize % 8).min(text.len() - at);
        let inserted = (rest[3] as usize % 16).min(rest.len() - 4);
        let piece = &rest[4..4 + inserted];
        rest = &rest[4 + inserted..];
        let mut edited = text[..at].to_vec();
        edited.extend_from_slice(piece);
        edited.extend_from_slice(&text[at + removed..]);
        let Ok(edited) = String::from_utf8(edited) else { continue };
        let edited: Arc<str> = edited.into();
        let before = (outline.tree.clone(), outline.diagnostics.clone());
        if outline.edit(&edited) {
            let whole = DraftOutline::parse(edited.clone());
            let (tree, whole_tree) = (outline.tree.as_ref().unwrap(), whole.tree.as_ref().expect("patched means JSON"));
            assert_eq!(describe(tree), describe(whole_tree));
            assert_eq!(outline.diagnostics, whole.diagnostics);
            assert_eq!(lowered(&outline), lowered(&whole));
        } else {
            assert_eq!((outline.tree.clone(), outline.diagnostics.clone()), before, "a declined edit changes nothing");
            let whole = DraftOutline::parse(edited);
            if whole.elements.is_some() {
                outline = whole;
            }
        }
    }
});
