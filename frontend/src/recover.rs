//! Error recovery for the editor: a draft that is not JSON, repaired in place until it
//! parses, so that what the fault did not touch can still be read and checked.
//!
//! Every repair keeps the text's length and writes ASCII over ASCII (or over whole
//! characters), so each byte offset of the repaired text is the same byte of the
//! original: the spans of everything read from it are the original's, with no offset map.
//! The repairs, at the first fault each time (rust-analyzer's resilience, for JSON):
//!
//! * a string still open at the end of its line (JSON strings cannot hold a raw newline,
//!   so that is where an unclosed string ends): the line break becomes its `"`;
//! * a control character or a bad escape inside a string: a space;
//! * a trailing comma, or a comma where a key or value was expected: a space;
//! * a missing `,`, `:`, `}` or `]`: written into the whitespace before the point where it
//!   was needed (a pretty-printed draft always has some);
//! * anything else inside an element of `nodes` or `edges`: that element, from its `{` to
//!   where the next element or the array's end begins (found by indentation), becomes
//!   `{"id": …}` with the id it was written with, so edges to it still resolve.
//!
//! What a repair wrote is [`Recovery::damaged`]: the caller treats those parts as unknown
//! (their findings are the fault's echoes). A fault that none of these repairs fits (at
//! the top level, or in a draft not laid out over lines) is left as it is: no recovery.

use std::ops::Range;

use crate::json::{self, FaultSite};
use crate::reparse::ELEMENT_ARRAYS;

/// A repaired text and the byte ranges the repairs wrote or stood for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recovery {
    /// The same length as the original, and UTF-8.
    pub repaired: String,
    /// Sorted by start: each repair's range (a closed string's whole span, a replaced
    /// element's whole span).
    pub damaged: Vec<Range<u32>>,
}

/// At most this many repairs: a text with more faults than this is not being typed but
/// is something else, and each repair costs a parse.
pub const MAX_REPAIRS: usize = 32;

/// Repairs `text` until it is JSON; `None` when it is JSON already or a fault cannot be
/// repaired.
pub fn recover(text: &str) -> Option<Recovery> {
    let mut bytes = text.as_bytes().to_vec();
    let mut damaged = Vec::new();
    for _ in 0..=MAX_REPAIRS {
        let current = std::str::from_utf8(&bytes).ok()?;
        let Some(site) = json::fault_site(current) else {
            if damaged.is_empty() {
                return None;
            }
            damaged.sort_by_key(|r: &Range<u32>| (r.start, r.end));
            let repaired = String::from_utf8(bytes).ok()?;
            return Some(Recovery { repaired, damaged });
        };
        let original = text.as_bytes();
        let repair = targeted(&mut bytes, original, &site)
            .or_else(|| close_before_sibling(&mut bytes, original, &site))
            .or_else(|| replace_element(&mut bytes, original, &site))?;
        damaged.push(repair);
    }
    None
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// A repair for the fault's own kind; `None` when none fits. Layout is read from the
/// `original` text.
fn targeted(bytes: &mut [u8], original: &[u8], site: &FaultSite) -> Option<Range<u32>> {
    let at = site.span.start as usize;
    let pos = site.pos as usize;
    // Inside a string (the parser stops at its opening quote).
    if bytes.get(pos) == Some(&b'"') && at > pos && at < bytes.len() {
        return Some(match bytes[at] {
            b'\n' | b'\r' => {
                bytes[at] = b'"';
                site.pos..at as u32 + 1
            }
            _ => {
                // A control character, or the `\` of a bad escape.
                bytes[at] = b' ';
                at as u32..at as u32 + 1
            }
        });
    }
    if site.message.starts_with("trailing comma") || bytes.get(pos) == Some(&b',') {
        // A comma where a key or value was expected (after `[`, `{`, `:` or another
        // comma) is dropped too.
        let at = if bytes.get(pos) == Some(&b',') { pos } else { at };
        bytes[at] = b' ';
        return Some(at as u32..at as u32 + 1);
    }
    let inner = site.open.last()?;
    let found = bytes.get(pos).copied();
    let value_expected = site.message.contains("expected a JSON value") || site.message.contains("a string key");
    if value_expected && let Some(b @ (b'}' | b']')) = found {
        // A closer where a key or value was to begin: stray, dropped, unless it is laid
        // out as the closer of an open container (a value is missing before it then).
        if laid_out_as_closer(original, site, b) {
            return None;
        }
        bytes[pos] = b' ';
        return Some(site.pos..site.pos + 1);
    }
    let closer = if inner.object { b'}' } else { b']' };
    let after_element = site.message.contains("after an array element");
    let after_member = site.message.contains("after an object member");
    if found.is_none() {
        // The end of the file: close what is open, if it was after a value.
        if !(after_element || after_member) {
            return None;
        }
        let closers: Vec<u8> = site.open.iter().rev().map(|c| if c.object { b'}' } else { b']' }).collect();
        let end = last_content(bytes, bytes.len())? + 1;
        if bytes.len() - end < closers.len() {
            return None;
        }
        bytes[end..end + closers.len()].copy_from_slice(&closers);
        return Some(end as u32..(end + closers.len()) as u32);
    }
    let found = found?;
    let write = |bytes: &mut [u8], before: usize, what: u8| -> Option<Range<u32>> {
        let spot = whitespace_before(bytes, before)?;
        bytes[spot] = what;
        Some(spot as u32..spot as u32 + 1)
    };
    if after_element && found == b':' {
        // A key inside an array. Indented past the array's line, it is the first member
        // of an element whose `{` was left out; else the array ended before the comma
        // that precedes it.
        let key_end = last_content(bytes, pos)?;
        let key_start = bytes[..key_end].iter().rposition(|&b| b == b'"')?;
        if bytes[key_end] != b'"' {
            return None;
        }
        if line_indentation(original, key_start) > line_indentation(original, inner.start as usize) {
            return write(bytes, key_start, b'{');
        }
        let comma = last_content(bytes, key_start)?;
        return (bytes[comma] == b',').then(|| write(bytes, comma, b']')).flatten();
    }
    if after_element || after_member {
        return match found {
            // The other kind of closer. Laid out as the closer of the container it
            // closes (first on a line indented as that container's), this container's own
            // was left out; else it is stray, and dropped.
            b'}' | b']' if found != closer => {
                if laid_out_as_closer(original, site, found) {
                    write(bytes, pos, closer)
                } else {
                    bytes[pos] = b' ';
                    Some(site.pos..site.pos + 1)
                }
            }
            b'"' | b'{' | b'[' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n' if after_element || found == b'"' => {
                write(bytes, pos, b',')
            }
            _ => None,
        };
    }
    if site.message.contains("`:` after an object key") {
        return write(bytes, pos, b':');
    }
    if site.message.contains("a string key after `,`") && matches!(found, b'{' | b'[' | b']') {
        // The object ended before that comma and its `}` was left out.
        let comma = last_content(bytes, pos)?;
        return (bytes[comma] == b',').then(|| write(bytes, comma, b'}')).flatten();
    }
    None
}

/// A fault at a `{` that, by the layout of the `original` text, begins the next element
/// of an open array: what is open inside that array's current element was left unclosed
/// (the state of an element being typed), so its closers and a `,` go into the whitespace
/// before it. The element keeps what was typed in it, for completion.
fn close_before_sibling(bytes: &mut [u8], original: &[u8], site: &FaultSite) -> Option<Range<u32>> {
    let pos = site.pos as usize;
    if bytes.get(pos) != Some(&b'{') {
        return None;
    }
    let indent = indentation(original, pos)?;
    let element = (1..site.open.len().saturating_sub(1))
        .rev()
        .find(|&i| !site.open[i].object && indentation(original, site.open[i + 1].start as usize) == Some(indent))?;
    let mut closers: Vec<u8> =
        site.open[element + 1..].iter().rev().map(|c| if c.object { b'}' } else { b']' }).collect();
    closers.push(b',');
    let run_start = last_content(bytes, pos).map_or(0, |at| at + 1);
    if pos - run_start < closers.len() {
        return None;
    }
    bytes[run_start..run_start + closers.len()].copy_from_slice(&closers);
    Some(run_start as u32..(run_start + closers.len()) as u32)
}

/// Whether the closer `found` at the fault opens its line, indented as the line of the
/// innermost open container it would close.
fn laid_out_as_closer(original: &[u8], site: &FaultSite, found: u8) -> bool {
    let own = site.open.iter().rev().find(|c| c.object == (found == b'}'));
    indentation(original, site.pos as usize)
        .is_some_and(|at| own.is_some_and(|c| line_indentation(original, c.start as usize) == at))
}

/// The index of the last byte before `before` that is not whitespace.
fn last_content(bytes: &[u8], before: usize) -> Option<usize> {
    bytes[..before].iter().rposition(|&b| !is_ws(b))
}

/// A whitespace byte in the run just before `before`: its first space or tab if there is
/// one (so lines stay lines, and the rest of the run is left for a later repair), else
/// its first byte, a line break.
fn whitespace_before(bytes: &[u8], before: usize) -> Option<usize> {
    let run_start = last_content(bytes, before).map_or(0, |at| at + 1);
    let mut run = run_start..before;
    run.clone().find(|&i| matches!(bytes[i], b' ' | b'\t')).or_else(|| run.next())
}

/// Replaces the element of `nodes` or `edges` that the fault is in by `{"id": …}`. Its
/// extent is judged by the layout of the `original` text (a closed string's line break is
/// a `"` in `bytes`).
fn replace_element(bytes: &mut [u8], original: &[u8], site: &FaultSite) -> Option<Range<u32>> {
    let [root, array, ..] = site.open[..] else { return None };
    if !root.object || array.object || !ELEMENT_ARRAYS.contains(&site.root_key.as_deref()?) {
        return None;
    }
    let start = match site.open.get(2) {
        Some(element) if element.object => element.start as usize,
        // An earlier fault closed the element (a stray `}`): find its start by layout.
        _ => element_start_by_layout(original, array.start as usize, site.span.start as usize)?,
    };
    let indent = indentation(original, start)?;
    let array_indent = line_indentation(original, array.start as usize);
    let next = next_at_indent(original, start, site.span.start as usize, indent, array_indent)?;
    let end = match next {
        Next::Closer(at) => at + 1,
        Next::Sibling(at) => end_before_separator(bytes, start, at)?,
    };
    let original = &bytes[start..end];
    let replacement = match written_id(original) {
        Some(id) if id.len() + 10 <= original.len() => format!("{{\"id\":\"{id}\"}}"),
        _ if original.len() >= 2 => "{}".to_owned(),
        _ => return None,
    };
    for b in &mut bytes[start..end] {
        if !matches!(*b, b'\n' | b'\r') {
            *b = b' ';
        }
    }
    bytes[start..start + replacement.len()].copy_from_slice(replacement.as_bytes());
    Some(start as u32..end as u32)
}

/// Where the line holding `at` starts.
fn line_start(bytes: &[u8], at: usize) -> usize {
    bytes[..at].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)
}

/// How far the line holding `at` is indented.
fn line_indentation(bytes: &[u8], at: usize) -> usize {
    bytes[line_start(bytes, at)..].iter().take_while(|&&b| matches!(b, b' ' | b'\t')).count()
}

/// How far the line holding `at` is indented, when `at` is its first non-blank byte.
fn indentation(bytes: &[u8], at: usize) -> Option<usize> {
    let indent = line_indentation(bytes, at);
    (line_start(bytes, at) + indent == at).then_some(indent)
}

/// The start of the element of the array at `array` that holds `fault`, by layout: the
/// last line before the fault that opens with `{` at the indentation of the array's
/// first element.
fn element_start_by_layout(bytes: &[u8], array: usize, fault: usize) -> Option<usize> {
    let first_line = bytes[array..].iter().position(|&b| b == b'\n')? + array + 1;
    let first = first_line + bytes[first_line..].iter().position(|&b| !is_ws(b))?;
    let indent = indentation(bytes, first).filter(|_| bytes[first] == b'{')?;
    let mut line = line_start(bytes, fault.min(bytes.len()));
    loop {
        let at = line + indent;
        if at < bytes.len() && bytes[at] == b'{' && indentation(bytes, at) == Some(indent) {
            return Some(at);
        }
        if line <= first_line {
            return None;
        }
        line = line_start(bytes, line - 1);
    }
}

/// What ends an element, found by layout.
enum Next {
    /// Its own `}`, at this offset.
    Closer(usize),
    /// The next element's `{` or the array's `]`, at this offset.
    Sibling(usize),
}

/// What ends the element that starts at `start` (indented `indent`), judged by layout
/// from the line of the fault on: its own `}` on a line indented as it is, the next
/// element's `{` so indented, or the array's `]` indented as the array's line.
fn next_at_indent(bytes: &[u8], start: usize, fault: usize, indent: usize, array_indent: usize) -> Option<Next> {
    let fault = fault.min(bytes.len());
    let mut line = line_start(bytes, fault);
    // The fault's own line counts only when the fault opens it with a brace or bracket
    // (else the edit may have broken its layout).
    let opens = bytes[line..fault].iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r'));
    if !(opens && matches!(bytes.get(fault), Some(b'{' | b'}' | b']'))) {
        line = bytes[fault..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |i| fault + i + 1);
    }
    while line < bytes.len() {
        let line_end = bytes[line..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |i| line + i);
        if let Some(first) = bytes[line..line_end].iter().position(|&b| !matches!(b, b' ' | b'\t' | b'\r')) {
            let at = line + first;
            if at > start {
                match bytes[at] {
                    b'}' if first == indent => return Some(Next::Closer(at)),
                    b'{' if first == indent => return Some(Next::Sibling(at)),
                    b']' if first == array_indent => return Some(Next::Sibling(at)),
                    // A key of the root: the array's end was lost.
                    b'"' if first < indent => return None,
                    _ => {}
                }
            }
        }
        line = line_end + 1;
    }
    None
}

/// The end of what lies between `start` and `next`, without the `,` that separates it
/// from `next`.
fn end_before_separator(bytes: &[u8], start: usize, next: usize) -> Option<usize> {
    let last = last_content(bytes, next)?;
    let end = if bytes[last] == b',' { last_content(bytes, last)? + 1 } else { last + 1 };
    (end > start).then_some(end)
}

/// The id an element was written with: the first `"id": "…"` in it, when that is a plain
/// string (no escapes, at most 200 bytes).
fn written_id(element: &[u8]) -> Option<&str> {
    let mut from = 0;
    while let Some(found) = find(&element[from..], b"\"id\"") {
        let mut at = from + found + 4;
        from = at;
        while element.get(at).is_some_and(|&b| is_ws(b)) {
            at += 1;
        }
        if element.get(at) != Some(&b':') {
            continue;
        }
        at += 1;
        while element.get(at).is_some_and(|&b| is_ws(b)) {
            at += 1;
        }
        if element.get(at) != Some(&b'"') {
            continue;
        }
        let rest = &element[at + 1..];
        let close = rest.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
        if rest[close] != b'"' || close == 0 || close > 200 {
            return None;
        }
        return std::str::from_utf8(&rest[..close]).ok();
    }
    None
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DRAFT: &str = r#"{
  "format": "workflow-draft/v1",
  "nodes": [
    {
      "id": "a",
      "family": "x.y",
      "config": { "k": 1 }
    },
    {
      "id": "b",
      "title": "Two"
    }
  ],
  "edges": []
}
"#;

    /// Recovers `DRAFT` with `from` replaced by `to`: the repaired text, which must parse.
    fn recovered(from: &str, to: &str) -> Recovery {
        assert!(DRAFT.contains(from), "{from}");
        let broken = DRAFT.replacen(from, to, 1);
        assert!(json::parse(&broken).tree.is_none(), "the edit breaks the draft");
        let recovery = recover(&broken).expect("recovered");
        assert_eq!(recovery.repaired.len(), broken.len());
        assert!(json::parse(&recovery.repaired).tree.is_some(), "{}", recovery.repaired);
        recovery
    }

    fn damaged_text(recovery: &Recovery, broken: &str) -> Vec<String> {
        recovery.damaged.iter().map(|r| broken[r.start as usize..r.end as usize].to_string()).collect()
    }

    #[test]
    fn valid_json_needs_no_recovery() {
        assert_eq!(recover(DRAFT), None);
    }

    #[test]
    fn an_unclosed_string_ends_at_its_line() {
        let r = recovered("\"Two\"", "\"Tw");
        assert!(r.repaired.contains("\"title\": \"Tw\""), "{}", r.repaired);
        assert_eq!(damaged_text(&r, &DRAFT.replacen("\"Two\"", "\"Tw", 1)), ["\"Tw\n"]);
        // One closed where a comma followed: the comma joins the string, a comma is supplied.
        let r = recovered("\"x.y\",", "\"x.y,");
        assert!(r.repaired.contains("\"family\": \"x.y,\""), "{}", r.repaired);
        assert_eq!(r.damaged.len(), 2);
    }

    #[test]
    fn a_missing_comma_colon_or_trailing_comma_is_mended_in_place() {
        let r = recovered("\"a\",", "\"a\"");
        assert!(r.repaired.contains("\"id\": \"a\"\n,     \"family\""), "{}", r.repaired);
        recovered("\"id\": \"b\"", "\"id\" \"b\"");
        let r = recovered("\"Two\"", "\"Two\",");
        assert!(r.repaired.contains("\"title\": \"Two\" \n"), "{}", r.repaired);
    }

    #[test]
    fn a_missing_closer_goes_before_the_comma_or_at_the_end() {
        // The first node's `}`.
        let r = recovered("    },\n    {", "    ,\n    {");
        assert!(r.repaired.contains("}\n}   ,\n    {"), "{}", r.repaired);
        // The nodes' `]`.
        recovered("  ],\n  \"edges\"", "  ,\n  \"edges\"");
        // The root's `}` at the end.
        let r = recovered("[]\n}\n", "[]\n");
        assert!(r.repaired.ends_with("[]}"), "{:?}", r.repaired);
    }

    #[test]
    fn anything_else_in_an_element_replaces_it_by_its_id() {
        let broken = DRAFT.replacen("\"family\": \"x.y\"", "family: x.y", 1);
        let r = recover(&broken).expect("recovered");
        let tree = json::parse(&r.repaired).tree.expect("parses");
        let nodes = tree.value(tree.get(tree.root(), "nodes").unwrap().value).as_array().unwrap().to_vec();
        assert_eq!(nodes.len(), 2);
        let first = tree.value(nodes[0]).as_object().unwrap();
        assert_eq!(first.len(), 1);
        assert_eq!(tree.value(first.get("id").unwrap().value).as_str(), Some("a"));
        assert_eq!(tree.value(tree.get(nodes[1], "title").unwrap().value).as_str(), Some("Two"));
        assert_eq!(r.damaged.len(), 1);
        assert!(broken[r.damaged[0].start as usize..].starts_with("{\n      \"id\": \"a\""));
    }

    #[test]
    fn a_fault_at_the_top_level_that_fits_no_repair_is_not_recovered() {
        let broken = DRAFT.replacen("\"format\"", "format", 1);
        assert_eq!(recover(&broken), None);
        assert_eq!(recover("{\"nodes\": [{\"id\": \"a\" x}]}"), None, "not laid out over lines");
    }
}
