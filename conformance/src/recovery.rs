//! The property of the editor's error recovery: one arbitrary edit inside an
//! element of a pretty-printed draft never panics, and every element on lines the edit
//! did not touch is still read and checked. Shared by the proptest
//! (`tests/recovery.rs`) and the `recover` fuzz target.
//!
//! Every element of the draft carries an unknown key, `colour`, so that reading and
//! checking it yields one `draft.unknown_field` on that key's value: an element is "still read
//! and checked" when that finding is still reported, at the key's place in the edited text.

use std::ops::Range;
use std::sync::Arc;

use little_diagnostics::Code;
use little_frontend::catalog::DEFAULT_CATALOG;
use little_passes::{Database, SourceFile, Workspace, report};
use serde_json::json;

/// A pretty-printed draft of `nodes` nodes in a chain (a manual trigger, then
/// retrievals), each node and edge with an unknown `colour` key.
pub fn draft(nodes: usize) -> String {
    let mut list = vec![json!({ "id": "n0", "family": "trigger.manual", "colour": "blue" })];
    let mut edges = Vec::new();
    for i in 1..nodes.max(2) {
        list.push(json!({
            "id": format!("n{i}"), "family": "dataset.retrieve", "title": format!("Step {i}"),
            "config": { "connection": "conn_wh", "query": "select 1" }, "colour": "blue"
        }));
        edges.push(json!({
            "id": format!("e{i}"), "from": { "node": format!("n{}", i - 1) }, "to": { "node": format!("n{i}") },
            "colour": "blue"
        }));
    }
    serde_json::to_string_pretty(&json!({
        "format": "workflow-draft/v1", "tenantId": "acme", "workflowId": "w", "draftId": "d", "revision": 1,
        "catalogVersion": "2026.11", "nodes": list, "edges": edges
    }))
    .expect("a draft serializes")
}

/// The byte spans of the draft's elements (nodes, then edges), each from its `{` to its
/// `}`: in a pretty-printed draft, the lines indented four spaces that open and close one.
pub fn elements(draft: &str) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let mut start = None;
    let mut at = 0;
    for line in draft.split_inclusive('\n') {
        match line.trim_end() {
            "    {" => start = Some(at + 4),
            "    }" | "    }," => spans.push(start.take().expect("an element opened")..at + 5),
            _ => {}
        }
        at += line.len();
    }
    spans
}

/// One edit: `removed` bytes of `draft` replaced by `inserted`.
#[derive(Clone, Debug)]
pub struct Edit {
    pub removed: Range<usize>,
    pub inserted: String,
}

impl Edit {
    /// The edited text.
    pub fn apply(&self, draft: &str) -> String {
        let mut text = draft.to_string();
        text.replace_range(self.removed.clone(), &self.inserted);
        text
    }
}

/// The report of `text` checked as the editor checks it: an edited file (recovered when
/// it is not JSON), the embedded catalog.
pub fn edited_report(text: &str) -> little_passes::FileReport {
    let db = Database::default();
    let catalog = SourceFile::new(&db, "catalog.json".into(), DEFAULT_CATALOG.into());
    let workspace = Workspace::new(&db, catalog, None, None, None);
    let file = SourceFile::edited(&db, "draft.json".into(), Arc::from(text));
    report(&db, workspace, file)
}

/// The report of `edited` checked as the editor checks a keystroke: `intact` opened and
/// checked first, then its text set to `edited` (the last outline patched where the edit
/// allows, `little_passes::db::LastOutline`).
pub fn edited_report_after(intact: &str, edited: &str) -> little_passes::FileReport {
    use salsa::Setter;
    let mut db = Database::default();
    let catalog = SourceFile::new(&db, "catalog.json".into(), DEFAULT_CATALOG.into());
    let workspace = Workspace::new(&db, catalog, None, None, None);
    let file = SourceFile::edited(&db, "draft.json".into(), Arc::from(intact));
    report(&db, workspace, file);
    file.set_text(&mut db).to(Arc::from(edited));
    report(&db, workspace, file)
}

/// Checks the edited draft as the editor does (an edited file, recovered when it is not
/// JSON) and returns why the property fails, if it does.
pub fn check_edit(draft: &str, edit: &Edit) -> Result<(), String> {
    let edited = edit.apply(draft);
    let found = edited_report(&edited);
    // The lines the edit touched, as byte ranges of the original: from the start of the
    // line where it begins to the end of the line where it ends.
    let line_start = draft[..edit.removed.start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = draft[edit.removed.end..].find('\n').map_or(draft.len(), |i| edit.removed.end + i);
    let delta = edit.inserted.len() as i64 - edit.removed.len() as i64;
    let unknown_fields: Vec<u32> = found
        .diagnostics
        .iter()
        .filter(|d| d.code == Code::DraftUnknownField)
        .filter_map(|d| d.span.as_ref().map(|s| s.start))
        .collect();
    for element in elements(draft) {
        if element.end >= line_start && element.start <= line_end {
            continue;
        }
        // The finding lies on the key's value.
        let key = element.start
            + draft[element.clone()].find("\"colour\": ").expect("every element has a colour")
            + "\"colour\": ".len();
        let moved = if key > edit.removed.start { (key as i64 + delta) as u32 } else { key as u32 };
        if !unknown_fields.contains(&moved) {
            let codes: Vec<String> =
                found.diagnostics.iter().map(|d| format!("{} {:?}", d.code.as_str(), d.span)).collect();
            return Err(format!(
                "the element at {element:?} (untouched) is no longer checked: no draft.unknown_field at byte {moved}; \
                 the edit {edit:?} gives {codes:#?}\n{edited}"
            ));
        }
    }
    Ok(())
}

/// The drafts the guarantee is held to in every layout: `examples/quarterly-report.json`
/// (an element over several lines, contracts, an agent, a gate), the chain of [`draft`],
/// and drafts shaped as tools export them (`tests/fixtures/`: an n8n import with escaped
/// and non-ASCII strings, a Langflow import with long ids and non-ASCII in ids), by name.
pub fn guarantee_drafts() -> Vec<(&'static str, serde_json::Value)> {
    let parse = |text: &str| serde_json::from_str(text).expect("a fixture is JSON");
    vec![
        ("quarterly-report", parse(include_str!("../../examples/quarterly-report.json"))),
        ("chain", parse(&draft(6))),
        ("n8n", parse(include_str!("../tests/fixtures/n8n-invoice-triage.json"))),
        ("langflow", parse(include_str!("../tests/fixtures/langflow-rag-answer.json"))),
    ]
}

/// The byte spans of the elements of `nodes` and `edges` of a text that is JSON, in order.
pub fn element_spans(text: &str) -> Vec<Range<usize>> {
    let tree = little_frontend::json::parse(text).tree.expect("the intact draft is JSON");
    ["nodes", "edges"]
        .iter()
        .filter_map(|&key| tree.value(tree.get(tree.root(), key)?.value).as_array())
        .flatten()
        .map(|&item| {
            let span = tree.span(item);
            span.start as usize..span.end as usize
        })
        .collect()
}

/// The guarantee of the editor's recovery, for one edit inside one element of `intact`
/// that leaves it not JSON: every diagnostic of the edited draft (checked as the editor
/// checks it) is the parse fault, lies on the edited element, or is one the intact draft
/// had at the same place (its code and span, moved by the edit). Returns why not, if not.
/// An edit that leaves JSON is a new draft, not a recovery: nothing to hold.
pub fn check_guarantee(intact: &str, edit: &Edit) -> Result<(), String> {
    check_guarantee_against(intact, &edited_report(intact), edit)
}

/// [`check_guarantee`], with the intact draft's report already made (a soak makes it once
/// a draft).
pub fn check_guarantee_against(
    intact: &str,
    intact_report: &little_passes::FileReport,
    edit: &Edit,
) -> Result<(), String> {
    let edited = edit.apply(intact);
    if little_frontend::json::parse(&edited).tree.is_some() {
        return Ok(());
    }
    let element = element_spans(intact)
        .into_iter()
        .find(|span| span.start <= edit.removed.start && edit.removed.end <= span.end)
        .ok_or_else(|| format!("the edit {edit:?} is inside no element"))?;
    let delta = edit.inserted.len() as i64 - edit.removed.len() as i64;
    let moved = |at: u32| -> u32 {
        let at = at as usize;
        if at <= edit.removed.start {
            at as u32
        } else if at >= edit.removed.end {
            (at as i64 + delta) as u32
        } else {
            edit.removed.start as u32
        }
    };
    let edited_element = element.start as u32..(element.end as i64 + delta) as u32;
    let had: Vec<(Code, Option<Range<u32>>)> = intact_report
        .diagnostics
        .iter()
        .map(|d| (d.code, d.span.as_ref().map(|s| moved(s.start)..moved(s.end))))
        .collect();
    // Opened broken, and typed from the intact draft (one element patched).
    for found in [edited_report(&edited), edited_report_after(intact, &edited)] {
        holds(&found, &had, &edited_element, edit, &edited)?;
    }
    Ok(())
}

/// Whether every diagnostic of `found` is the parse fault, on `edited_element`, or in
/// `had`; why not, if not.
fn holds(
    found: &little_passes::FileReport,
    had: &[(Code, Option<Range<u32>>)],
    edited_element: &Range<u32>,
    edit: &Edit,
    edited: &str,
) -> Result<(), String> {
    for diagnostic in &found.diagnostics {
        let on_the_edit =
            diagnostic.span.as_ref().is_some_and(|s| edited_element.start <= s.start && s.end <= edited_element.end);
        if diagnostic.code == Code::ParseInvalidJson
            || on_the_edit
            || had.contains(&(diagnostic.code, diagnostic.span.clone()))
        {
            continue;
        }
        return Err(format!(
            "{} {:?} ({}) is not a diagnostic of the intact draft there, and not on the edited element \
             {edited_element:?}; the edit {edit:?} gives\n{edited}",
            diagnostic.code.as_str(),
            diagnostic.span,
            diagnostic.message
        ));
    }
    Ok(())
}
