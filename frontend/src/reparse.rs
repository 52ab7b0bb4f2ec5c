//! A draft's outline after an edit inside one of its elements: only that element is
//! parsed and read again.
//!
//! An editor's keystroke changes a few bytes of one node or edge. The outline of the
//! edited text differs from the last one only in that element's span and id and in the
//! spans after it; its findings differ only inside the element; the elements read differ
//! only in that one. So when the bytes that changed lie inside one elided element, and
//! the new text there parses as exactly one value, the last outline is patched instead
//! of the whole text being parsed again. Anything else (an edit across elements, in the
//! header, or one that leaves the element unparsable) parses the whole text.
//!
//! Why the patch is what the whole parse gives: the text before the element is the same,
//! so the parser reaches the element in the same state; a JSON value parsed from a
//! position depends only on the text from there to its end, and the element's end is
//! followed by the same byte as before (`,`, `]` or whitespace), which ends any value;
//! after it, the text is the same again. `tests/reparse.rs` checks it against the whole
//! parse for edits of every kind.

use std::sync::Arc;

use little_diagnostics::Diagnostic;

use crate::draft::DraftElements;
use crate::json::{self, ElementParser, JsonTree, JsonValue, NodeIdx};
use crate::{DocumentKind, document_kind};

/// The root arrays whose elements an outline keeps as spans only: a draft's nodes and
/// edges.
pub const ELEMENT_ARRAYS: &[&str] = &["nodes", "edges"];

/// A file's outline ([`json::parse_outline`]) with its findings and, for a draft, the
/// elements read while it was parsed.
#[derive(Clone, Debug)]
pub struct DraftOutline {
    pub text: Arc<str>,
    pub tree: Option<JsonTree>,
    pub diagnostics: Vec<Diagnostic>,
    /// `None` when the document is not a draft.
    pub elements: Option<Arc<DraftElements>>,
    /// What the recovery of a draft that is not JSON stands for ([`DraftOutline::parse_tolerant`]):
    /// the parts a repair wrote, each widened to the element of `nodes` or `edges` that
    /// holds it. Empty when the text parsed.
    pub damaged: Vec<std::ops::Range<u32>>,
}

impl DraftOutline {
    /// Parses `text` whole, reading a draft's elements while the parser holds each.
    pub fn parse(text: Arc<str>) -> DraftOutline {
        DraftOutline::parse_with(text, DraftElements::default())
    }

    /// [`DraftOutline::parse`], the elements read into `elements` (which may know damage).
    fn parse_with(text: Arc<str>, mut elements: DraftElements) -> DraftOutline {
        let parsed = json::parse_outline_visiting(text.clone(), ELEMENT_ARRAYS, &mut |seen| elements.visit(seen));
        let draft = matches!(parsed.tree.as_ref().map(document_kind), Some(Ok(DocumentKind::Draft)));
        DraftOutline {
            text,
            tree: parsed.tree,
            diagnostics: parsed.diagnostics,
            elements: draft.then(|| Arc::new(elements)),
            damaged: Vec::new(),
        }
    }

    /// [`DraftOutline::parse`], for the editor: a draft that is not JSON is repaired
    /// ([`crate::recover`]) and outlined from the repaired text, which has the same length,
    /// so every span is the original's. Its findings are the fault's and the repaired
    /// draft's away from the damage; `damaged` says where that is. A text that cannot be
    /// repaired, or whose repair is not a draft, gets the strict outline (no tree).
    pub fn parse_tolerant(text: Arc<str>) -> DraftOutline {
        let strict = DraftOutline::parse(text.clone());
        if strict.tree.is_some() {
            return strict;
        }
        let Some(recovery) = crate::recover::recover(&text) else { return strict };
        // The elements on the damage are unknown: not read, their arrays marked.
        let elements = DraftElements::default().with_damage(recovery.damaged.clone());
        let repaired = DraftOutline::parse_with(Arc::from(recovery.repaired), elements);
        let (Some(tree), Some(_)) = (&repaired.tree, &repaired.elements) else { return strict };
        let damaged = fit_to_elements(tree, recovery.damaged);
        let mut diagnostics = strict.diagnostics;
        let away =
            repaired.diagnostics.into_iter().filter(|d| !d.span.as_ref().is_some_and(|s| echoes_damage(&damaged, s)));
        diagnostics.extend(away);
        json::in_source_order(&mut diagnostics);
        DraftOutline { text, tree: repaired.tree, diagnostics, elements: repaired.elements, damaged }
    }

    /// Makes this the outline of `text`, parsing only the element of `nodes` or `edges`
    /// that holds every byte the edit changed. Returns `false`, and leaves `self` as it
    /// was, when there is no such element or the new text there is not one value: the
    /// caller then parses `text` whole.
    pub fn edit(&mut self, text: &Arc<str>) -> bool {
        self.patch(text, false)
    }

    /// [`DraftOutline::edit`], for the editor: when the new text of the element is not one
    /// value, the element alone is the damage (the text around it is as it was, so the
    /// parser reaches it as before, and the backward reading of `crate::gap` stops in it):
    /// it is mended in place and made unknown, as the whole recovery
    /// ([`DraftOutline::parse_tolerant`]) would, and only what is built on its part of the
    /// draft is checked again. A recovered outline is patched only where its one damaged
    /// element is edited again.
    pub fn edit_tolerant(&mut self, text: &Arc<str>) -> bool {
        self.patch(text, true)
    }

    fn patch(&mut self, text: &Arc<str>, tolerant: bool) -> bool {
        if !tolerant && !self.damaged.is_empty() {
            // A recovered outline is the repaired text's: the edit is against the original.
            return false;
        }
        let (Some(tree), Some(elements)) = (&mut self.tree, &mut self.elements) else {
            return false;
        };
        let (old, new) = (self.text.as_bytes(), text.as_bytes());
        if u32::try_from(new.len()).is_err() {
            return false;
        }
        let prefix = common_prefix(old, new);
        let suffix = common_suffix(&old[prefix..], &new[prefix..]);
        let changed = prefix as u32..(old.len() - suffix) as u32;
        let Some((key, array, index, item)) = element_holding(tree, changed) else {
            return false;
        };
        let old_span = tree.span(item);
        if !self.damaged.is_empty() && self.damaged != [old_span.clone()] {
            return false;
        }
        let delta = new.len() as i64 - old.len() as i64;
        let new_span = old_span.start..(i64::from(old_span.end) + delta) as u32;
        if !text.is_char_boundary(new_span.end as usize) {
            return false;
        }
        let mut path = String::from("$");
        json::path_push_key(&mut path, key);
        json::path_push_index(&mut path, index);
        let mut parser = ElementParser::new(text);
        // The element sits in the root object and its array.
        let (found, damaged) = match parser.reparse(new_span.clone(), 2, &path) {
            Some((element, found)) => {
                if !Arc::make_mut(elements).replace(key, array, index, element) {
                    return false;
                }
                tree.replace_elided(text.clone(), item, element, old_span.end);
                (found, Vec::new())
            }
            None if !tolerant => return false,
            None => {
                let (start, end) = (new_span.start as usize, new_span.end as usize);
                let Some(mended) = crate::recover::mend_element(&new[start..end]) else { return false };
                let mut repaired = new.to_vec();
                repaired[start..end].copy_from_slice(&mended);
                let Ok(repaired) = String::from_utf8(repaired) else { return false };
                let repaired: Arc<str> = Arc::from(repaired);
                let mut parser = ElementParser::new(&repaired);
                let Some((element, _)) = parser.reparse(new_span.clone(), 2, &path) else { return false };
                if !Arc::make_mut(elements).replace_unknown(key, array, index) {
                    return false;
                }
                tree.replace_elided(repaired.clone(), item, element, old_span.end);
                // The parse fault, where the parser of the whole text finds it.
                let fault = json::parse_outline(text.clone(), ELEMENT_ARRAYS).diagnostics;
                (fault, vec![new_span.clone()])
            }
        };
        let moved = |at: &mut u32| json::shift_after(at, old_span.end, delta);
        // The last fault, if any, was this element's: it goes with the element's findings.
        self.diagnostics.retain(|d| {
            d.code != little_diagnostics::Code::ParseInvalidJson
                && !d.span.as_ref().is_some_and(|s| old_span.contains(&s.start))
        });
        for diagnostic in &mut self.diagnostics {
            let related = diagnostic.related.iter_mut().filter_map(|r| r.span.as_mut());
            for span in diagnostic.span.iter_mut().chain(related) {
                moved(&mut span.start);
                moved(&mut span.end);
            }
        }
        self.diagnostics.extend(found);
        json::in_source_order(&mut self.diagnostics);
        self.damaged = damaged;
        self.text = text.clone();
        true
    }
}

/// Each damaged range fitted to the elements of `nodes` or `edges`: widened to the
/// element that holds it, or narrowed to the one element it holds (a stretch between two
/// elements kept, with its separators), sorted and without repeats. (So that an edit of a
/// recovered draft's one damaged element can be patched.)
fn fit_to_elements(tree: &JsonTree, damaged: Vec<std::ops::Range<u32>>) -> Vec<std::ops::Range<u32>> {
    let mut widened: Vec<std::ops::Range<u32>> = damaged
        .into_iter()
        .map(|range| match element_holding(tree, range.clone()) {
            Some((_, _, _, item)) => tree.span(item),
            None => only_element_within(tree, &range).unwrap_or(range),
        })
        .collect();
    widened.sort_by_key(|r| (r.start, r.end));
    widened.dedup();
    widened
}

/// The span of the one element of `nodes` or `edges` that lies within `range`, if exactly
/// one does.
fn only_element_within(tree: &JsonTree, range: &std::ops::Range<u32>) -> Option<std::ops::Range<u32>> {
    let within: Vec<std::ops::Range<u32>> = ELEMENT_ARRAYS
        .iter()
        .filter_map(|&key| tree.value(tree.get(tree.root(), key)?.value).as_array())
        .flat_map(|items| {
            let first = items.partition_point(|&item| tree.span(item).start < range.start);
            items[first..].iter().map(|&item| tree.span(item)).take_while(|span| span.end <= range.end)
        })
        .collect();
    (within.len() == 1).then(|| within[0].clone())
}

/// Whether a finding at `span` is an echo of what a recovery repaired: it lies on a
/// damaged part (a finding about a container around it, the draft itself, still stands).
pub fn echoes_damage(damaged: &[std::ops::Range<u32>], span: &std::ops::Range<u32>) -> bool {
    damaged.iter().any(|d| {
        let overlaps = span.start < d.end.max(d.start + 1) && d.start < span.end.max(span.start + 1);
        let around = span.start <= d.start && d.end <= span.end && *span != *d;
        overlaps && !around
    })
}

/// The elided element of `nodes` or `edges` whose span holds `changed`: its array's key
/// and node, its index and its node.
fn element_holding(tree: &JsonTree, changed: std::ops::Range<u32>) -> Option<(&'static str, NodeIdx, usize, NodeIdx)> {
    ELEMENT_ARRAYS.iter().find_map(|&key| {
        let array = tree.get(tree.root(), key)?.value;
        let items = tree.value(array).as_array()?;
        let index = items.partition_point(|&item| tree.span(item).end < changed.end);
        let &item = items.get(index)?;
        let span = tree.span(item);
        (span.start <= changed.start && tree.value(item) == JsonValue::Elided).then_some((key, array, index, item))
    })
}

/// The length of the longest common prefix, compared a block at a time.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 256;
    let mut at = 0;
    while at + BLOCK <= a.len().min(b.len()) && a[at..at + BLOCK] == b[at..at + BLOCK] {
        at += BLOCK;
    }
    at + a[at..].iter().zip(&b[at..]).take_while(|(x, y)| x == y).count()
}

/// The length of the longest common suffix, compared a block at a time.
fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    const BLOCK: usize = 256;
    let (mut a, mut b) = (a, b);
    let mut length = 0;
    while a.len().min(b.len()) >= BLOCK && a[a.len() - BLOCK..] == b[b.len() - BLOCK..] {
        (a, b) = (&a[..a.len() - BLOCK], &b[..b.len() - BLOCK]);
        length += BLOCK;
    }
    length + a.iter().rev().zip(b.iter().rev()).take_while(|(x, y)| x == y).count()
}
