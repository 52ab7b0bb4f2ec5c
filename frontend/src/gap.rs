//! Where an edit broke the arrays `nodes` or `edges`, found without reading the layout:
//! the elements before the fault read forwards, the elements after it read backwards from
//! the end of the text, and the stretch between them (the gap) is the damage.
//!
//! An edit corrupts only the text it touched, so the parser reading from the start is
//! right up to the edit, and a reader going backwards from the end is right down to it,
//! whatever the layout (one key a line or several, an element over several lines, one
//! element a line, the whole draft on one line, CRLF). Each side may read a little way
//! into the damage before it notices (an inserted `}` closes an element early, and the
//! rest of it follows as something else): an element at either border of the gap that is
//! not cleanly separated from it (by a `,` and the brace of an element) or has no `id`
//! is taken into the gap, and so is the last one before a gap that opens as an element in
//! which no `id` can be read (the tail of the element before it, split off by `}, {`). What lies in the gap is unknown to the
//! checks (`crate::recover`), never absent: the ids written in it are kept.

use std::ops::Range;
use std::sync::Arc;

use crate::json::{self, ClosedElement};
use crate::reparse::ELEMENT_ARRAYS;

/// The damage inside one element array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Gap {
    /// From just after the last element kept before it (or the array's `[`) to the first
    /// element kept after it (or the array's `]`).
    pub span: Range<usize>,
    /// Whether an element is kept before it, and after it (each needs a `,`).
    pub after_element: bool,
    pub before_element: bool,
    /// The ids written in it at the depth of an element's members, in order.
    pub ids: Vec<String>,
}

/// The gap of a text that is not JSON because of damage inside `nodes` or `edges`; `None`
/// when the text is JSON or the damage is not found inside one element array.
pub(crate) fn find(text: &str) -> Option<Gap> {
    let shared: Arc<str> = Arc::from(text);
    let (closed, site) = json::fault_site_after_elements(&shared, ELEMENT_ARRAYS);
    let site = site?;
    let bytes = text.as_bytes();
    let backward = Backward::read(bytes);
    let [root, array, ..] = backward.open[..] else { return None };
    if !root.object || array.object {
        return None;
    }
    let close = array.close;
    // The array the backward reading stopped in is the last element array the forward
    // reading opened before its `]`.
    let fault_array = match &site.open[..] {
        [root, array, ..] if root.object && !array.object => {
            site.root_key.as_deref().filter(|key| ELEMENT_ARRAYS.contains(key)).map(|_| array.start as usize)
        }
        _ => None,
    };
    let open = closed.iter().map(|e| e.array_start as usize).chain(fault_array).filter(|&start| start < close).max()?;
    // (It may stop at the `[` itself, when the first element is damaged.)
    if backward.stop < open {
        return None;
    }
    let mut before: Vec<&ClosedElement> = closed.iter().filter(|e| e.array_start as usize == open).collect();
    // Read from the end, `after` is in reverse text order: its last is the first after the gap.
    let mut after: Vec<Range<usize>> = backward.elements;
    let first_after = |after: &Vec<Range<usize>>| after.last().map_or(close, |r| r.start);
    before.retain(|e| (e.span.end as usize) <= first_after(&after));
    loop {
        let start = before.last().map_or(open + 1, |e| e.span.end as usize);
        let end = first_after(&after);
        let ids = ids_in(&bytes[start..end]);
        let last_before = before.last().map(|e| e.span.start as usize..e.span.end as usize);
        if let Some(last) = last_before
            && (!cleanly_before(bytes, &last)
                || !has_id(text, &last)
                || headless_rest_of(text, &last, &bytes[start..end], &ids))
        {
            before.pop();
            continue;
        }
        if let Some(first) = after.last()
            && (!cleanly_after(bytes, first) || !has_id(text, first))
        {
            after.pop();
            continue;
        }
        // Damage that reaches into the next root member is not inside one array.
        if mentions_an_element_array(&bytes[start..end]) {
            return None;
        }
        return Some(Gap {
            span: start..end,
            after_element: !before.is_empty(),
            before_element: !after.is_empty(),
            ids,
        });
    }
}

/// Whether `element` is followed by `,` and then not by a member (a string and `:`), which
/// would be the rest of it after a `}` the edit inserted, unless that member is an `id` (the
/// next element, its `{` deleted) (whitespace aside).
fn cleanly_before(bytes: &[u8], element: &Range<usize>) -> bool {
    let comma = skip_ws(bytes, element.end);
    if bytes.get(comma) != Some(&b',') {
        return false;
    }
    let next = skip_ws(bytes, comma + 1);
    if bytes.get(next) != Some(&b'"') {
        return true;
    }
    let end = string_end(bytes, next);
    let member = bytes[end - 1] == b'"' && end > next + 1 && bytes.get(skip_ws(bytes, end)) == Some(&b':');
    !member || &bytes[next..end] == b"\"id\""
}

/// Whether `element` is preceded by neither `:` nor `[`, which would make it a value
/// inside the damaged element rather than an element (whitespace aside).
fn cleanly_after(bytes: &[u8], element: &Range<usize>) -> bool {
    bytes[..element.start].iter().rposition(|&b| !is_ws(b)).is_some_and(|at| !matches!(bytes[at], b':' | b'['))
}

/// Whether the gap is the rest of the element before it, which the edit split off: after
/// its `,` the gap opens either as an element in which no id can be read (an inserted
/// `}, {`; the `id` is written first) or as something that is not an element (an inserted
/// `},` before a string whose opening quote the edit took, or with a quote of its own),
/// and the keys written there are none of those of the element before it (a quote the
/// edit typed may pair the strings after it the other way: both pairings are read). A
/// neighbour whose `{` and `"id": "` the edit took also opens so, but it shares keys such
/// as `family` with the element before it.
fn headless_rest_of(text: &str, before: &Range<usize>, gap: &[u8], ids: &[String]) -> bool {
    let comma = skip_ws(gap, 0);
    if gap.get(comma) != Some(&b',') || !ids.is_empty() {
        return false;
    }
    let opening = skip_ws(gap, comma + 1);
    let keys = match gap.get(opening) {
        // At any depth: a broken quote upsets the depth of what follows it.
        Some(b'{') => keys_in(gap),
        Some(b) if !matches!(b, b'[' | b'}' | b']' | b',') => {
            // A quote may be a string's end or its start: read the members both ways.
            let tail = &gap[opening..];
            let mut keys = members_keys(tail);
            if let Some(quote) = tail.iter().position(|&b| matches!(b, b'"' | b'\n' | b'\r'))
                && tail[quote] == b'"'
            {
                keys.extend(members_keys(&tail[quote + 1..]));
            }
            keys
        }
        _ => return false,
    };
    let Some(tree) = json::parse(&text[before.clone()]).tree else { return false };
    let Some(members) = tree.value(tree.root()).as_object() else { return false };
    !keys.is_empty() && !members.iter().any(|m| keys.contains(&m.key.as_bytes()))
}

/// The keys of the object whose members `bytes` continues (at its own depth, up to the
/// `}` that closes it).
fn members_keys(bytes: &[u8]) -> Vec<&[u8]> {
    let mut keys = Vec::new();
    let mut depth = 0usize;
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' if depth == 0 => break,
            b'}' | b']' => depth -= 1,
            b'"' => {
                let end = string_end(bytes, at);
                if depth == 0 && end > at + 1 && bytes[end - 1] == b'"' && bytes.get(skip_ws(bytes, end)) == Some(&b':')
                {
                    keys.push(&bytes[at + 1..end - 1]);
                }
                at = end;
                continue;
            }
            _ => {}
        }
        at += 1;
    }
    keys
}

/// The keys (strings closed on their line, then `:`) written in `bytes`, at any depth.
fn keys_in(bytes: &[u8]) -> Vec<&[u8]> {
    let mut keys = Vec::new();
    let mut at = 0;
    while let Some(quote) = bytes[at..].iter().position(|&b| b == b'"') {
        let (start, end) = (at + quote, string_end(bytes, at + quote));
        if end > start + 1 && bytes[end - 1] == b'"' && bytes.get(skip_ws(bytes, end)) == Some(&b':') {
            keys.push(&bytes[start + 1..end - 1]);
        }
        at = end;
    }
    keys
}

/// Whether the element at `span` (which parsed) is an object with an `id` member.
fn has_id(text: &str, span: &Range<usize>) -> bool {
    let parsed = json::parse(&text[span.clone()]);
    parsed.tree.is_some_and(|tree| tree.get(tree.root(), "id").is_some())
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

fn skip_ws(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).copied().is_some_and(is_ws) {
        at += 1;
    }
    at
}

/// Whether `"nodes"` or `"edges"` is written as a key in `bytes`.
fn mentions_an_element_array(bytes: &[u8]) -> bool {
    ELEMENT_ARRAYS.iter().any(|key| {
        let quoted = format!("\"{key}\"");
        bytes
            .windows(quoted.len())
            .enumerate()
            .any(|(at, w)| w == quoted.as_bytes() && bytes.get(skip_ws(bytes, at + quoted.len())) == Some(&b':'))
    })
}

/// The ids written in a stretch of damaged elements: each `"id": "…"` at the depth of an
/// element's members, read tolerantly (a string ends at its quote or its line; brackets
/// and braces count alike; a key `id"` whose opening quote was deleted counts), when its
/// value is a plain string of at most 200 bytes.
pub(crate) fn ids_in(bytes: &[u8]) -> Vec<String> {
    let mut ids = Vec::new();
    let mut depth = 0usize;
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => {
                let bare_key = at >= 2
                    && &bytes[at - 2..at] == b"id"
                    && (at == 2 || !(bytes[at - 3].is_ascii_alphanumeric() || matches!(bytes[at - 3], b'_' | b'"')));
                let end = if bare_key { at + 1 } else { string_end(bytes, at) };
                if depth == 1
                    && (bare_key || &bytes[at..end] == b"\"id\"")
                    && let Some(id) = id_value(bytes, end)
                {
                    ids.push(id);
                }
                at = end;
                continue;
            }
            _ => {}
        }
        at += 1;
    }
    ids
}

/// The id after a key that ends at `key_end`: `: "…"`, a plain string of at most 200 bytes.
fn id_value(bytes: &[u8], key_end: usize) -> Option<String> {
    let colon = skip_ws(bytes, key_end);
    (bytes.get(colon) == Some(&b':')).then_some(())?;
    let value = skip_ws(bytes, colon + 1);
    (bytes.get(value) == Some(&b'"')).then_some(())?;
    let end = string_end(bytes, value);
    let closed = end > value + 1 && bytes[end - 1] == b'"';
    let inner = &bytes[value + 1..end.max(value + 2) - 1];
    let plain = closed && !inner.is_empty() && inner.len() <= 200 && !inner.iter().any(|&b| b == b'\\' || b < 0x20);
    plain.then(|| std::str::from_utf8(inner).ok().map(str::to_string)).flatten()
}

/// The end of the string that opens at `at` (just past its closing quote), or the end of
/// its line when it is not closed there.
fn string_end(bytes: &[u8], at: usize) -> usize {
    let mut i = at + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            b'\n' | b'\r' => return i,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// A container the backward reading is inside: where its closer is.
#[derive(Clone, Copy, Debug)]
struct Open {
    close: usize,
    object: bool,
}

/// What the backward reading expects next, inside a container (read from its end).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    /// Just after the closer: the opener (empty) or the last value.
    First,
    /// A value, after a `,`.
    Value,
    /// After a value: in an array, `,` or the opener; in an object, `:`.
    AfterValue,
    /// In an object, after `:`: the key.
    Key,
    /// In an object, after a key: `,` or the opener.
    AfterKey,
}

/// A JSON text read backwards from its end, as far as it is JSON.
struct Backward {
    /// The byte that did not fit (0 when everything did).
    stop: usize,
    /// The containers open there, outermost first.
    open: Vec<Open>,
    /// The elements completed inside the root member array open there (the second open
    /// container, when the first is an object), from the last.
    elements: Vec<Range<usize>>,
}

impl Backward {
    fn read(bytes: &[u8]) -> Backward {
        let mut open: Vec<Open> = Vec::new();
        let mut expect: Vec<Expect> = Vec::new();
        let mut elements = Vec::new();
        let mut root_done = false;
        let mut at = bytes.len();
        while at > 0 {
            let i = at - 1;
            let b = bytes[i];
            if is_ws(b) {
                at = i;
                continue;
            }
            let state = expect.last().copied();
            let wants_value = match state {
                None => !root_done,
                Some(state) => matches!(state, Expect::First | Expect::Value),
            };
            let object = open.last().is_some_and(|top| top.object);
            // Where the value that ends here starts, and its last byte.
            let (start, last) = match b {
                b'}' | b']' if wants_value => {
                    open.push(Open { close: i, object: b == b'}' });
                    expect.push(Expect::First);
                    if open.len() == 2 && open[0].object && !open[1].object {
                        elements.clear();
                    }
                    at = i;
                    continue;
                }
                b'{' | b'[' => {
                    let fits = !open.is_empty()
                        && object == (b == b'{')
                        && matches!(
                            (object, state),
                            (_, Some(Expect::First))
                                | (true, Some(Expect::AfterKey))
                                | (false, Some(Expect::AfterValue))
                        );
                    if !fits {
                        break;
                    }
                    let closed = open.pop().expect("a container");
                    expect.pop();
                    (i, closed.close)
                }
                b'"' => {
                    let Some(start) = string_start(bytes, i) else { break };
                    if state == Some(Expect::Key) {
                        *expect.last_mut().expect("an object") = Expect::AfterKey;
                        at = start;
                        continue;
                    }
                    if !wants_value {
                        break;
                    }
                    (start, i)
                }
                b',' => {
                    match (object, state) {
                        (false, Some(Expect::AfterValue)) | (true, Some(Expect::AfterKey)) => {}
                        _ => break,
                    }
                    *expect.last_mut().expect("a container") = Expect::Value;
                    at = i;
                    continue;
                }
                b':' if object && state == Some(Expect::AfterValue) => {
                    *expect.last_mut().expect("an object") = Expect::Key;
                    at = i;
                    continue;
                }
                _ if wants_value && is_scalar_byte(b) => {
                    let start = bytes[..i].iter().rposition(|&c| !is_scalar_byte(c)).map_or(0, |p| p + 1);
                    if !is_scalar(&bytes[start..=i]) {
                        break;
                    }
                    (start, i)
                }
                _ => break,
            };
            // The value fills its container's slot (or is the root).
            if open.len() == 2 && open[0].object && !open[1].object {
                elements.push(start..last + 1);
            }
            match expect.last_mut() {
                None => root_done = true,
                Some(slot) => *slot = Expect::AfterValue,
            }
            at = start;
        }
        Backward { stop: at.saturating_sub(1), open, elements }
    }
}

/// Whether a byte can belong to a number or a literal.
fn is_scalar_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.')
}

/// Whether `token` is `true`, `false`, `null` or a JSON number.
fn is_scalar(token: &[u8]) -> bool {
    if matches!(token, b"true" | b"false" | b"null") {
        return true;
    }
    let mut at = 0;
    let digits = |at: &mut usize| {
        let from = *at;
        while token.get(*at).is_some_and(u8::is_ascii_digit) {
            *at += 1;
        }
        *at > from
    };
    if token.first() == Some(&b'-') {
        at += 1;
    }
    if token.get(at) == Some(&b'0') {
        at += 1;
    } else if !digits(&mut at) {
        return false;
    }
    if token.get(at) == Some(&b'.') {
        at += 1;
        if !digits(&mut at) {
            return false;
        }
    }
    if matches!(token.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(token.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        if !digits(&mut at) {
            return false;
        }
    }
    at == token.len()
}

/// The opening quote of the string whose closing quote is at `close`: the nearest `"`
/// before it that no odd run of backslashes escapes; `None` when a control character (a
/// line break) comes first, which no string holds.
fn string_start(bytes: &[u8], close: usize) -> Option<usize> {
    let mut i = close;
    while i > 0 {
        i -= 1;
        match bytes[i] {
            b if b < 0x20 => return None,
            b'"' => {
                let backslashes = bytes[..i].iter().rev().take_while(|&&b| b == b'\\').count();
                if backslashes % 2 == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backward_reading_finds_the_elements_after_the_damage() {
        let text = r#"{"a": [{"id": "x", "k": {"n": "A\""}}, {"id": "y" x, "t": [1]}, {"id": "s[1]", "b": {"l": -1.5e3}}, {"id": "z"}]}"#;
        let backward = Backward::read(text.as_bytes());
        let at = |needle: &str| text.find(needle).unwrap();
        assert_eq!(backward.stop, at(" x,") + 1);
        assert_eq!(backward.open.iter().map(|o| o.object).collect::<Vec<_>>(), [true, false, true]);
        let found: Vec<&str> = backward.elements.iter().map(|r| &text[r.clone()]).collect();
        assert_eq!(found, [r#"{"id": "z"}"#, r#"{"id": "s[1]", "b": {"l": -1.5e3}}"#]);
    }

    #[test]
    fn the_gap_lies_between_the_elements_read_from_either_end() {
        let text = r#"{"nodes": [{"id": "a"}, {"id": "b", "c": {"k": 1}} oops}, {"id": "d"}], "edges": []}"#;
        let gap = find(text).expect("a gap");
        assert_eq!(&text[gap.span.clone()], r#", {"id": "b", "c": {"k": 1}} oops}, "#);
        assert_eq!(gap.ids, ["b"]);
        assert!(gap.after_element && gap.before_element);
    }

    #[test]
    fn an_element_closed_early_by_the_edit_is_taken_into_the_gap() {
        // A `}` typed into `b` closes it before its `family`: read forwards, `{"id": "b"}`
        // is whole, but what follows it is not an element.
        let text = r#"{"nodes": [{"id": "a"}, {"id": "b"}, "family": "x"}, {"id": "d"}]}"#;
        let gap = find(text).expect("a gap");
        assert_eq!(&text[gap.span.clone()], r#", {"id": "b"}, "family": "x"}, "#);
        // Split in two by `}, {`: the second half has no id, so the first is the edited one.
        let text = r#"{"nodes": [{"id": "a"}, {"id": "b"}, {"family": "x" 1}, {"id": "d"}]}"#;
        let gap = find(text).expect("a gap");
        assert_eq!(&text[gap.span.clone()], r#", {"id": "b"}, {"family": "x" 1}, "#);
        // Split by `},` typed before a string whose opening quote the edit took: the rest
        // shares no key with the first part, so the first part is the edited element.
        let text = r#"{"nodes": [{"id": "a"}, {"id": "b", "t":1},x", "family": "y"}, {"id": "d"}]}"#;
        let gap = find(text).expect("a gap");
        assert_eq!(&text[gap.span.clone()], r#", {"id": "b", "t":1},x", "family": "y"}, "#);
        assert_eq!(gap.ids, ["b"]);
        // … and with a quote typed after the `},`, which pairs the strings the other way.
        let text = r#"{"nodes": [{"id": "a"}, {"id": "b"},""family": "y"}, {"id": "d"}]}"#;
        let gap = find(text).expect("a gap");
        assert_eq!(&text[gap.span.clone()], r#", {"id": "b"},""family": "y"}, "#);
    }

    #[test]
    fn a_neighbour_whose_head_the_edit_took_leaves_the_element_before_it_whole() {
        // `c`'s `{"id": "` deleted: its rest shares `family` with `b`, which is kept.
        let text = r#"{"nodes": [{"id": "b", "family": "x"}, c", "family": "y"}, {"id": "d"}]}"#;
        let gap = find(text).expect("a gap");
        assert_eq!(&text[gap.span.clone()], r#", c", "family": "y"}, "#);
    }

    #[test]
    fn damage_outside_the_element_arrays_has_no_gap() {
        assert_eq!(find(r#"{"format": x, "nodes": [{"id": "a"}]}"#), None);
        assert_eq!(find(r#"{"nodes": [{"id": "a"}]}"#), None, "JSON");
    }
}
