//! Error recovery for the editor: a draft that is not JSON, repaired in place until it
//! parses, so that what the fault did not touch can still be read and checked.
//!
//! Every repair keeps the text's length and writes ASCII over ASCII (or over whole
//! characters), so each byte offset of the repaired text is the same byte of the
//! original: the spans of everything read from it are the original's, with no offset map.
//!
//! First, whatever the layout, the damage is placed inside `nodes` or `edges`
//! ([`crate::gap`]: the elements before it read forwards, those after it backwards). That
//! stretch is all the recovery touches: repaired as an array of its own when the repairs
//! below make it one, else written over as one `{"id": …}` per id read in it. Either way
//! it is the recovery's damage, and every element in it is *unknown* to the checks
//! (`draft::DraftElements`): present, its id kept, its content anything.
//!
//! The repairs, at the first fault each time (rust-analyzer's resilience, for JSON):
//!
//! * a string still open at the end of its line (JSON strings cannot hold a raw newline,
//!   so that is where an unclosed string ends): the line break becomes its `"`;
//! * a control character or a bad escape inside a string: a space;
//! * a trailing comma, or a comma where a key or value was expected: a space;
//! * a missing `,`, `:`, `}` or `]`: written into the whitespace before the point where it
//!   was needed (a pretty-printed draft always has some);
//! * for a fault [`crate::gap`] does not place (in the header, say), anything else inside
//!   `nodes` or `edges`: the damaged stretch that holds it, between the intact elements
//!   around it (found by layout, [`Layout`]), becomes `{"id": …}` with the id it was
//!   written with. The repairs at the parser's faults can nest intact elements in the
//!   damage with no fault inside them, so when one is lost the damaged stretches are
//!   replaced first and the faults repaired again.
//!
//! What a repair wrote is [`Recovery::damaged`]: the caller treats those parts, widened to
//! the elements that hold them, as unknown (their findings are the fault's echoes). A
//! fault that none of these repairs fits is left as it is: no recovery.

use std::collections::BTreeSet;
use std::ops::Range;
use std::sync::Arc;

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
///
/// The repairs are made at the parser's faults, one at a time. Read by layout first
/// ([`Layout`]), the elements of `nodes` and `edges` that are laid out whole and parse on
/// their own are what an edit did not touch, and the stretches between them that hold
/// anything else are the damage: a fault no repair fits has its stretch replaced. Those
/// repairs can still nest intact elements in the damage (an opener the edit inserted, a
/// key closed and given one of them as its value) with no fault inside them; then the
/// damaged stretches are replaced first and the faults repaired again, and the recovery
/// that keeps more intact elements is the one returned.
pub fn recover(text: &str) -> Option<Recovery> {
    // Spans are `u32`: a larger text is refused by the parser, and not repaired.
    if u32::try_from(text.len()).is_err() {
        return None;
    }
    match crate::gap::find(text) {
        Some(gap) => mend(text, &gap).or_else(|| recover_by_layout(text)),
        None => recover_by_layout(text),
    }
}

/// Mends the damage of `gap`, which becomes the recovery's one damaged range: repaired in
/// place when the repairs at its own faults make it a run of elements (so what is being
/// typed there stays in the tree, for the editor's completion and hovers), else written
/// over as one element per id read in it (`{"id":"…"}`, or `{}` when none fits).
fn mend(text: &str, gap: &crate::gap::Gap) -> Option<Recovery> {
    let (start, end) = (gap.span.start, gap.span.end);
    let mut bytes = text.as_bytes().to_vec();
    let written = mend_in_place(&text.as_bytes()[start..end], gap).or_else(|| written_over(end - start, gap))?;
    bytes[start..end].copy_from_slice(&written);
    let repaired = String::from_utf8(bytes).ok()?;
    let damaged = std::iter::once(start as u32..end as u32).collect();
    Some(Recovery { repaired, damaged })
}

/// The text of one element of `nodes` or `edges` that an edit left unreadable, mended to
/// one object of the same length: repaired in place when the repairs at its faults make it
/// one, else `{"id":"…"}` with the first id read in it, or `{}`; `None` when it is too short.
pub(crate) fn mend_element(element: &[u8]) -> Option<Vec<u8>> {
    let gap = crate::gap::Gap {
        span: 0..element.len(),
        after_element: false,
        before_element: false,
        ids: crate::gap::ids_in(element).into_iter().take(1).collect(),
    };
    let one_object = |bytes: &[u8]| {
        let text = std::str::from_utf8(bytes).ok();
        text.and_then(|text| json::parse(text).tree).is_some_and(|tree| tree.value(tree.root()).is_object())
    };
    match mend_in_place(element, &gap) {
        Some(mended) if one_object(&mended) => Some(mended),
        _ => written_over(element.len(), &gap),
    }
}

/// The gap's text repaired as the elements of an array of its own, its separators from
/// the elements around it kept; `None` when that does not come to a run of objects.
fn mend_in_place(gap_text: &[u8], gap: &crate::gap::Gap) -> Option<Vec<u8>> {
    let first = gap_text.iter().position(|&b| !is_ws(b))?;
    let last = gap_text.iter().rposition(|&b| !is_ws(b))?;
    // The separators stay out of the array (`[` and `]` take their places), so that no
    // repair writes over them.
    // A separator the edit deleted is written into the whitespace at that end.
    let (from, comma_before) = match (gap.after_element, gap_text[first]) {
        (true, b',') => (first + 1, None),
        (true, _) => (first, Some(first.checked_sub(1)?)),
        (false, _) => (0, None),
    };
    // (At the end, the whitespace stays in the array: a string left open at its line is
    // closed by its line break; the `,` goes after what the repairs leave.)
    let (to, comma_after) = match (gap.before_element, gap_text[last]) {
        (true, b',') if last >= from => (last, false),
        (true, _) => (gap_text.len(), true),
        (false, _) => (gap_text.len(), false),
    };
    if from > to {
        return None;
    }
    let mut array = Vec::with_capacity(to - from + 2);
    array.push(b'[');
    array.extend_from_slice(&gap_text[from..to]);
    array.push(b']');
    let array = String::from_utf8(array).ok()?;
    let repaired = match json::fault_site(&array) {
        None => array,
        Some(_) => {
            let shared: Arc<str> = Arc::from(array.as_str());
            repair(&array, &mut Layout::read(&shared), false)?.0.repaired
        }
    };
    let tree = json::parse(&repaired).tree?;
    let items = tree.value(tree.root()).as_array()?;
    if items.is_empty() || !items.iter().all(|&item| tree.value(item).is_object()) {
        return None;
    }
    // The repairs may have closed the array before its end (whitespace after it): the `]`
    // is not the gap's, and goes.
    let mut bytes = repaired.into_bytes();
    let close = bytes.iter().rposition(|&b| !is_ws(b))?;
    if bytes.first() != Some(&b'[') || bytes[close] != b']' {
        return None;
    }
    bytes[close] = b' ';
    let mut mended = gap_text.to_vec();
    mended[from..to].copy_from_slice(&bytes[1..1 + (to - from)]);
    if let Some(at) = comma_before {
        mended[at] = b',';
    }
    if comma_after {
        let at = mended.iter().rposition(|&b| !is_ws(b))? + 1;
        *mended.get_mut(at)? = b',';
    }
    Some(mended)
}

/// `length` bytes standing for the gap's elements: one `{"id":"…"}` for each id read in
/// it (as many as fit), or `{}`, with the separators the elements around it need.
fn written_over(length: usize, gap: &crate::gap::Gap) -> Option<Vec<u8>> {
    let mut ids: Vec<&str> = gap.ids.iter().map(String::as_str).collect();
    loop {
        let elements: Vec<String> = match ids.is_empty() {
            true => vec!["{}".to_string()],
            false => ids.iter().map(|id| format!("{{\"id\":\"{id}\"}}")).collect(),
        };
        let written = format!(
            "{}{}{}",
            if gap.after_element { "," } else { "" },
            elements.join(","),
            if gap.before_element { "," } else { "" }
        );
        if written.len() <= length {
            let mut bytes = vec![b' '; length];
            bytes[..written.len()].copy_from_slice(written.as_bytes());
            return Some(bytes);
        }
        // With no id left, `{}` is tried last.
        ids.pop()?;
    }
}

/// The recovery of a text as the layout of a pretty-printed draft shows it, for a fault
/// that [`crate::gap`] does not place inside one element array (in the header, say).
pub(crate) fn recover_by_layout(text: &str) -> Option<Recovery> {
    if u32::try_from(text.len()).is_err() {
        return None;
    }
    json::fault_site(text)?;
    let shared: Arc<str> = Arc::from(text);
    let mut layout = Layout::read(&shared);
    let at_faults = repair(text, &mut layout, false);
    if layout.laid_out.is_empty() {
        return at_faults.map(|(recovery, _)| recovery);
    }
    let kept = at_faults.as_ref().map(|(recovery, elements)| layout.kept(recovery, elements));
    if kept == Some(layout.count_intact()) {
        return at_faults.map(|(recovery, _)| recovery);
    }
    let by_layout = repair(text, &mut layout, true);
    let better = match (kept, by_layout.as_ref().map(|(recovery, elements)| layout.kept(recovery, elements))) {
        (Some(first), Some(second)) => second > first,
        (_, second) => second.is_some(),
    };
    if better { by_layout } else { at_faults }.map(|(recovery, _)| recovery)
}

/// Repairs `text` fault by fault; with `upfront`, every damaged stretch of `layout` is
/// replaced first. Returns the recovery and the spans of the repaired text's elements.
fn repair(text: &str, layout: &mut Layout, upfront: bool) -> Option<(Recovery, Vec<Range<u32>>)> {
    let original = text.as_bytes();
    let mut bytes = original.to_vec();
    let mut damaged = Vec::new();
    let mut replaced = BTreeSet::new();
    if upfront {
        // Each stretch is a fault as a repair is: a text with more is something else.
        let regions = layout.regions();
        if regions.len() > MAX_REPAIRS {
            return None;
        }
        for region in regions {
            damaged.push(replace_region(&mut bytes, original, &region)?);
            replaced.insert(region.span.start);
        }
    }
    for _ in 0..=MAX_REPAIRS {
        let current = std::str::from_utf8(&bytes).ok()?;
        let site = match json::fault_site_or_elements(current, ELEMENT_ARRAYS) {
            Ok(_) if damaged.is_empty() => return None,
            Ok(elements) => {
                damaged.sort_by_key(|r: &Range<u32>| (r.start, r.end));
                let repaired = String::from_utf8(bytes).ok()?;
                return Some((Recovery { repaired, damaged }, elements));
            }
            Err(site) => site,
        };
        let repair =
            match targeted(&mut bytes, original, &site).or_else(|| close_before_sibling(&mut bytes, original, &site)) {
                Some(repair) => repair,
                None => match layout.region_before(site.pos as usize, &replaced) {
                    Some(region) => {
                        replaced.insert(region.span.start);
                        replace_region(&mut bytes, original, &region)?
                    }
                    None => replace_element(&mut bytes, original, &site)?,
                },
            };
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

/// Replaces the element of `nodes` or `edges` that the fault is in by `{"id": …}`, when
/// [`Layout`] found no damaged stretch for the fault (an array not laid out one element
/// a line or more). Its extent is judged by the layout of the `original` text (a closed
/// string's line break is a `"` in `bytes`).
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

/// The element arrays of a pretty-printed draft as its layout shows them, read from the
/// text as it came, before any repair.
///
/// An array is a root member `"nodes": [` or `"edges": [` ending a line at the
/// indentation of the root's members, up to the `]` alone on a line at that indentation
/// that is followed by the root's next member or its final `}`. Its elements are laid
/// out at one indentation (the most common of its lines that open with `{`): an element
/// opens a line there with `{`, and ends on that line (its brackets balanced there) or
/// where a line there is its `}` (`laid_out`). One that parses on its own is intact: an
/// edit on other lines cannot have touched it, and a recovery must keep it, as an
/// element, where it is. What lies between intact elements, other than the one comma that
/// separates them, is damage: a [`Region`].
///
/// Whether an element parses is asked only when needed (near a fault, or of an element
/// a recovery did not keep), so that reading the layout of a large draft costs a scan of
/// its lines, not a parse of each element.
struct Layout<'t> {
    bytes: &'t [u8],
    /// Each array's inside: from just after its `[` to its `]`. Sorted.
    arrays: Vec<Range<usize>>,
    /// The elements laid out whole, each with its array. Sorted.
    laid_out: Vec<(Range<usize>, usize)>,
    /// Whether each of `laid_out` parses on its own, once known.
    intact: Vec<Option<bool>>,
    parser: json::ElementParser<'t>,
}

/// A damaged stretch of an element array: from the end of the intact element before it
/// (or the array's `[`) to the start of the one after it (or the array's `]`).
#[derive(Clone, Debug)]
struct Region {
    span: Range<usize>,
    /// Whether an intact element precedes it (else the `[` does).
    after_element: bool,
    /// Whether an intact element follows it (else the `]` does).
    before_element: bool,
}

/// A line that is not blank: how far it is indented (spaces and tabs), its content
/// without the indentation and trailing whitespace, and where the next line starts.
#[derive(Clone, Copy, Debug)]
struct Line {
    indent: usize,
    start: usize,
    end: usize,
    next: usize,
}

/// The lines of `bytes[from..to]` that are not blank (`from` starts a line).
fn lines(bytes: &[u8], from: usize, to: usize) -> impl Iterator<Item = Line> + '_ {
    let mut at = from;
    std::iter::from_fn(move || {
        while at < to {
            let line = at;
            let end = memchr::memchr(b'\n', &bytes[at..to]).map_or(to, |i| at + i);
            at = end + 1;
            let indent = bytes[line..end].iter().take_while(|&&b| matches!(b, b' ' | b'\t')).count();
            let start = line + indent;
            if let Some(last) = bytes[start..end].iter().rposition(|&b| !is_ws(b)) {
                return Some(Line { indent, start, end: start + last + 1, next: at.min(to) });
            }
        }
        None
    })
}

impl<'t> Layout<'t> {
    fn read(text: &'t Arc<str>) -> Layout<'t> {
        let bytes = text.as_bytes();
        let mut layout = Layout {
            bytes,
            arrays: Vec::new(),
            laid_out: Vec::new(),
            intact: Vec::new(),
            parser: json::ElementParser::new(text),
        };
        let mut all = lines(bytes, 0, bytes.len());
        // The root's `{` alone on its line (after a byte order mark, if any), then its
        // members' indentation.
        let Some(root) = all.next() else { return layout };
        let open = root.start + if bytes[root.start..].starts_with("\u{FEFF}".as_bytes()) { 3 } else { 0 };
        let Some(first) = all.next().filter(|_| bytes.get(open) == Some(&b'{') && open + 1 == root.end) else {
            return layout;
        };
        let members = first.indent;
        // Each array once (the parser keeps the first of two), and no scan for the end
        // of one when an earlier one found none.
        let mut found = [false; ELEMENT_ARRAYS.len()];
        let mut at = root.next;
        while let Some(line) = lines(bytes, at, bytes.len()).next() {
            at = line.next;
            let Some((key, open)) = array_key(bytes, line, members).filter(|&(key, _)| !found[key]) else { continue };
            let Some((close, delimiters)) = array_lines(bytes, line.next, members) else { break };
            found[key] = true;
            layout.read_array(open + 1..close.start, &delimiters);
            at = close.next;
        }
        layout.intact = vec![None; layout.laid_out.len()];
        layout
    }

    /// Reads the elements laid out in the array whose inside is `inside`, from the lines
    /// in it that open with `{` or `}`.
    fn read_array(&mut self, inside: Range<usize>, delimiters: &[Line]) {
        let bytes = self.bytes;
        // The elements' indentation: the most common of the lines that open with `{`
        // (the shallowest of those as common).
        let mut counts: Vec<(usize, usize)> = Vec::new();
        for line in delimiters.iter().filter(|l| bytes[l.start] == b'{') {
            match counts.iter_mut().find(|(indent, _)| *indent == line.indent) {
                Some((_, n)) => *n += 1,
                None => counts.push((line.indent, 1)),
            }
        }
        let Some(&(indent, _)) = counts.iter().max_by_key(|&&(indent, n)| (n, std::cmp::Reverse(indent))) else {
            return;
        };
        let array = self.arrays.len();
        self.arrays.push(inside.clone());
        let mut opened = None;
        for line in delimiters.iter().filter(|l| l.indent == indent) {
            match bytes[line.start] {
                b'{' => {
                    // A whole element on its line, or the first line of one.
                    let end = match bytes[line.end - 1] {
                        b',' => last_content(bytes, line.end - 1).map_or(line.start, |at| at + 1),
                        _ => line.end,
                    };
                    opened = if end > line.start + 1 && bytes[end - 1] == b'}' && balanced(&bytes[line.start..end]) {
                        self.laid_out.push((line.start..end, array));
                        None
                    } else {
                        Some(line.start)
                    };
                }
                b'}' => {
                    // Its `}`, and a comma after it at most.
                    let rest = &bytes[line.start + 1..line.end];
                    let alone =
                        rest.iter().all(|&b| is_ws(b) || b == b',') && rest.iter().filter(|&&b| b == b',').count() <= 1;
                    if let Some(from) = opened.take()
                        && alone
                    {
                        self.laid_out.push((from..line.start + 1, array));
                    }
                }
                _ => {}
            }
        }
    }

    /// The indices of `laid_out` in array `array`.
    fn elements_of(&self, array: usize) -> (usize, usize) {
        (self.laid_out.partition_point(|(_, a)| *a < array), self.laid_out.partition_point(|(_, a)| *a <= array))
    }

    /// Whether the `i`th element laid out parses on its own (as one value, in two
    /// containers, as an element of the root's array).
    fn is_intact(&mut self, i: usize) -> bool {
        if let Some(known) = self.intact[i] {
            return known;
        }
        let span = &self.laid_out[i].0;
        let intact = self.parser.reparse(span.start as u32..span.end as u32, 2, "$").is_some();
        self.intact[i] = Some(intact);
        intact
    }

    /// How many of the elements laid out are intact.
    fn count_intact(&mut self) -> usize {
        (0..self.laid_out.len()).filter(|&i| self.is_intact(i)).count()
    }

    /// The damaged stretch of array `array` that ends at the intact element `next` (an
    /// index of `laid_out`; `None`: at the array's `]`), and the index of the intact
    /// element before it.
    fn gap(&mut self, array: usize, next: Option<usize>) -> (Region, Option<usize>) {
        let inside = self.arrays[array].clone();
        let (first, last) = self.elements_of(array);
        let prev = (first..next.unwrap_or(last)).rev().find(|&i| self.is_intact(i));
        let from = prev.map_or(inside.start, |i| self.laid_out[i].0.end);
        let to = next.map_or(inside.end, |i| self.laid_out[i].0.start);
        let region = Region { span: from..to, after_element: prev.is_some(), before_element: next.is_some() };
        (region, prev)
    }

    /// Whether a region holds nothing but the comma that separates the elements around it.
    fn is_damaged(&self, region: &Region) -> bool {
        let gap = &self.bytes[region.span.clone()];
        let commas = gap.iter().filter(|&&b| b == b',').count();
        gap.iter().any(|&b| !is_ws(b) && b != b',')
            || commas != usize::from(region.after_element && region.before_element)
    }

    /// The damaged stretch to replace for a fault at `at` that no repair fits: the
    /// nearest at or before it (in its array or an earlier one) not yet `replaced`.
    fn region_before(&mut self, at: usize, replaced: &BTreeSet<usize>) -> Option<Region> {
        let mut array = self.arrays.partition_point(|r| r.start <= at).checked_sub(1)?;
        // The first intact element that does not end before `at`.
        let (_, last) = self.elements_of(array);
        let first = self.laid_out.partition_point(|(span, a)| *a < array || (*a == array && span.end <= at));
        let mut next = (first..last).find(|&i| self.is_intact(i));
        loop {
            let (region, prev) = self.gap(array, next);
            if self.is_damaged(&region) && !replaced.contains(&region.span.start) {
                return Some(region);
            }
            match prev {
                Some(prev) => next = Some(prev),
                None => {
                    array = array.checked_sub(1)?;
                    next = None;
                }
            }
        }
    }

    /// Every damaged stretch.
    fn regions(&mut self) -> Vec<Region> {
        let mut regions = Vec::new();
        for array in 0..self.arrays.len() {
            let mut next = None;
            loop {
                let (region, prev) = self.gap(array, next);
                if self.is_damaged(&region) {
                    regions.push(region);
                }
                let Some(prev) = prev else { break };
                next = Some(prev);
            }
        }
        regions.sort_by_key(|r| r.span.start);
        regions
    }

    /// How many intact elements `recovery` keeps: each still one of the repaired text's
    /// `elements` (of `nodes` or `edges`) with the same span, and no repair on it. (One
    /// kept is known to be intact: it parsed as an element, its bytes the text's.)
    fn kept(&mut self, recovery: &Recovery, elements: &[Range<u32>]) -> usize {
        let mut spans = elements.to_vec();
        spans.sort_by_key(|r| r.start);
        // The damage (sorted by start), and the furthest any of it reaches up to each.
        let reach: Vec<u32> = recovery
            .damaged
            .iter()
            .scan(0, |furthest, d| {
                *furthest = d.end.max(d.start + 1).max(*furthest);
                Some(*furthest)
            })
            .collect();
        let mut kept = 0;
        for i in 0..self.laid_out.len() {
            let span = &self.laid_out[i].0;
            let span = span.start as u32..span.end as u32;
            let at = spans.partition_point(|r| r.start < span.start);
            let before = recovery.damaged.partition_point(|d| d.start < span.end);
            let untouched = before == 0 || reach[before - 1] <= span.start;
            if spans.get(at) == Some(&span) && untouched {
                self.intact[i] = Some(true);
                kept += 1;
            }
        }
        kept
    }
}

/// Whether the brackets and braces of one line (outside its strings) balance.
fn balanced(line: &[u8]) -> bool {
    let mut depth = 0i64;
    let mut in_string = false;
    let mut escaped = false;
    for &b in line {
        match (in_string, b) {
            (true, _) if escaped => escaped = false,
            (true, b'\\') => escaped = true,
            (true, b'"') | (false, b'"') => in_string = !in_string,
            (false, b'{' | b'[') => depth += 1,
            (false, b'}' | b']') => depth -= 1,
            _ => {}
        }
    }
    depth == 0 && !in_string
}

/// A root member `"nodes": [` or `"edges": [` that ends its line, at the members'
/// indentation: which of [`ELEMENT_ARRAYS`], and where its `[` is.
fn array_key(bytes: &[u8], line: Line, members: usize) -> Option<(usize, usize)> {
    if line.indent != members || bytes[line.end - 1] != b'[' {
        return None;
    }
    let text = &bytes[line.start..line.end - 1];
    let key = ELEMENT_ARRAYS.iter().position(|key| {
        text.len() > key.len() + 2
            && text[0] == b'"'
            && text[key.len() + 1] == b'"'
            && &text[1..=key.len()] == key.as_bytes()
    })?;
    let rest = &text[ELEMENT_ARRAYS[key].len() + 2..];
    let colon = rest.iter().position(|&b| !is_ws(b))?;
    (rest[colon] == b':' && rest[colon + 1..].iter().all(|&b| is_ws(b))).then_some((key, line.end - 1))
}

/// The line of the `]` of an array whose lines begin at `from`, and the lines before it,
/// indented past the members, that open with `{` or `}`. The `]` is alone on a line at
/// the members' indentation (a comma after it), followed by the end, the root's final
/// `}`, or the other element array. A line an edit left so (a `]` there, then a key) is
/// taken only when no such line follows.
fn array_lines(bytes: &[u8], from: usize, members: usize) -> Option<(Line, Vec<Line>)> {
    let mut delimiters = Vec::new();
    let mut any_member = None;
    let mut all = lines(bytes, from, bytes.len()).peekable();
    while let Some(line) = all.next() {
        let first = bytes[line.start];
        if line.indent > members && matches!(first, b'{' | b'}') {
            delimiters.push(line);
        }
        let rest = &bytes[line.start + 1..line.end];
        if line.indent != members || first != b']' || !rest.iter().all(|&b| is_ws(b) || b == b',') {
            continue;
        }
        let Some(&next) = all.peek() else { return Some((line, delimiters)) };
        let root_end =
            bytes[next.start] == b'}' && next.end == next.start + 1 && bytes[next.next..].iter().all(|&b| is_ws(b));
        if root_end || array_key(bytes, next, members).is_some() {
            return Some((line, delimiters));
        }
        if any_member.is_none() && next.indent == members && bytes[next.start] == b'"' {
            any_member = Some((line, delimiters.len()));
        }
    }
    let (line, before) = any_member?;
    delimiters.truncate(before);
    Some((line, delimiters))
}

/// Replaces a damaged stretch by layout: blanked (its line breaks kept), with the element
/// it held, if it held anything, written back as `{"id": …}` (the first id written in it)
/// and the commas that separate it from the intact elements around it.
fn replace_region(bytes: &mut [u8], original: &[u8], region: &Region) -> Option<Range<u32>> {
    let Range { start, end } = region.span;
    let was = &original[start..end];
    let content = was.iter().position(|&b| !is_ws(b) && b != b',');
    let elements: Vec<String> = match content {
        Some(_) => {
            written_id(was).map(|id| format!("{{\"id\":\"{id}\"}}")).into_iter().chain(["{}".to_owned()]).collect()
        }
        None => vec![String::new()],
    };
    let piece = elements.iter().find_map(|element| {
        let mut piece = String::new();
        if region.after_element && (!element.is_empty() || region.before_element) {
            piece.push(',');
        }
        piece.push_str(element);
        if region.before_element && !element.is_empty() {
            piece.push(',');
        }
        (piece.len() <= end - start).then_some(piece)
    })?;
    // Where the element was, as near as it fits.
    let lead = usize::from(piece.starts_with(','));
    let at = content.map_or(start, |i| (start + i).saturating_sub(lead).max(start)).min(end - piece.len());
    for b in &mut bytes[start..end] {
        if !matches!(*b, b'\n' | b'\r') {
            *b = b' ';
        }
    }
    bytes[at..at + piece.len()].copy_from_slice(piece.as_bytes());
    // What it held and what was written.
    let last = was.iter().rposition(|&b| !is_ws(b) && b != b',').map_or(at + piece.len(), |i| start + i + 1);
    let first = content.map_or(at, |i| start + i);
    Some(first.min(at) as u32..last.max(at + piece.len()) as u32)
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
        let recovery = recover_by_layout(&broken).expect("recovered");
        assert_eq!(recovery.repaired.len(), broken.len());
        assert!(json::parse(&recovery.repaired).tree.is_some(), "{}", recovery.repaired);
        recovery
    }

    fn damaged_text(recovery: &Recovery, broken: &str) -> Vec<String> {
        recovery.damaged.iter().map(|r| broken[r.start as usize..r.end as usize].to_string()).collect()
    }

    #[test]
    fn valid_json_needs_no_recovery() {
        assert_eq!(recover_by_layout(DRAFT), None);
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
        let r = recover_by_layout(&broken).expect("recovered");
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

    /// Three nodes and two edges, as a pretty-printer lays them out: the edits of issue
    /// 19's property (`little_conformance::recovery`) break one element and must leave
    /// every other read, where it is.
    const LAID_OUT: &str = r#"{
  "format": "workflow-draft/v1",
  "nodes": [
    {
      "id": "a",
      "family": "x.y",
      "config": {
        "k": 1
      }
    },
    {
      "id": "b",
      "title": "Two"
    },
    {
      "id": "c",
      "config": {
        "k": [
          1
        ]
      }
    }
  ],
  "edges": [
    {
      "id": "e1",
      "from": {
        "node": "a"
      }
    },
    {
      "id": "e2",
      "from": {
        "node": "b"
      }
    }
  ]
}
"#;

    /// The text of each element of `LAID_OUT` (from the `{` that opens its line to the
    /// `}` that does), by id.
    fn laid_out_elements() -> Vec<(&'static str, &'static str)> {
        let mut found = Vec::new();
        let mut start = None;
        let mut at = 0;
        for line in LAID_OUT.split_inclusive('\n') {
            match line.trim_end() {
                "    {" => start = Some(at + 4),
                "    }" | "    }," => {
                    let text = &LAID_OUT[start.take().expect("opened")..at + 5];
                    let id = text.split('"').nth(3).expect("an id");
                    found.push((id, text));
                }
                _ => {}
            }
            at += line.len();
        }
        found
    }

    /// Recovers `LAID_OUT` with `from` replaced by `to`, and checks that every element but
    /// `edited` is still an element of its array with the span it has in the broken text,
    /// its bytes unchanged and no repair on it. Returns the repaired text.
    fn keeps_the_others(from: &str, to: &str, edited: &str) -> String {
        let (_, text) = laid_out_elements().into_iter().find(|(id, _)| *id == edited).expect("the edited element");
        assert!(text.contains(from), "the edit is inside {edited}: {from:?}");
        let broken = LAID_OUT.replacen(from, to, 1);
        assert!(json::parse(&broken).tree.is_none(), "the edit breaks the draft");
        let recovery = recover_by_layout(&broken).unwrap_or_else(|| panic!("recovered:\n{broken}"));
        assert_eq!(recovery.repaired.len(), broken.len());
        let tree = json::parse(&recovery.repaired).tree.unwrap_or_else(|| panic!("parses:\n{}", recovery.repaired));
        let spans: Vec<Range<u32>> = ["nodes", "edges"]
            .iter()
            .filter_map(|&key| tree.value(tree.get(tree.root(), key)?.value).as_array())
            .flatten()
            .map(|&item| tree.span(item))
            .collect();
        for (id, text) in laid_out_elements().into_iter().filter(|(id, _)| *id != edited) {
            let start = broken.find(text).expect("an untouched element is in the broken text") as u32;
            let span = start..start + text.len() as u32;
            assert!(spans.contains(&span), "{id} is still an element at {span:?}:\n{}", recovery.repaired);
            assert_eq!(&recovery.repaired[span.start as usize..span.end as usize], text);
            assert!(!recovery.damaged.iter().any(|d| d.start < span.end && span.start < d.end), "{id} not damaged");
        }
        recovery.repaired
    }

    #[test]
    fn a_split_line_that_looks_like_a_root_member_leaves_the_others() {
        // The rest of a line pushed to the start of the next: `"Two"` reads as a root key,
        // and no end of the element was found by layout, so nothing was recovered.
        let repaired = keeps_the_others("\"title\": ", "\\,,[\n", "b");
        assert!(repaired.contains("{\"id\":\"b\"}"), "{repaired}");
    }

    #[test]
    fn an_element_closed_as_the_array_leaves_the_others() {
        // `}` turned into a `]` at the array's indentation: the array ended there, and the
        // elements after it were keys expected at the root, a fault nothing repaired.
        keeps_the_others("\"Two\"\n    }", "\"Two\"\n  ]", "b");
        keeps_the_others("\"a\"\n      }\n    }", "\"a\"\n      }\n  ]", "e1");
    }

    #[test]
    fn an_element_that_lost_its_opening_leaves_the_one_before() {
        // With no element open at the fault, the element replaced was the last whose `{`
        // opens a line before it: the intact one before.
        keeps_the_others("{\n      \"id\": \"c\"", "\nid\": \"c\"", "c");
        keeps_the_others("{\n      \"id\": \"e2\"", "\n\"", "e2");
    }

    #[test]
    fn a_member_that_lost_its_value_leaves_the_next_element() {
        // `"title"  },`: a `:` is written, the `}` dropped as a stray closer, and the
        // element ran on into the next, which was replaced with it.
        keeps_the_others(": \"Two\"\n  ", "", "b");
        keeps_the_others(" \"a\"\n      }\n", "", "e1");
    }

    #[test]
    fn an_element_closer_turned_key_nests_nothing() {
        // `  "},`: its closer became a key closed at its line, a `:` was written, and the
        // next element became that key's value, with no fault inside it.
        keeps_the_others("\"Two\"\n    }", "\"Two\"\n  \"}", "b");
        keeps_the_others("\"b\"\n      }\n    }", "\"b\"\n      }\n  \"}", "e2");
    }

    #[test]
    fn an_opener_typed_into_an_element_leaves_the_others() {
        // A `[` or `{` where a key or value was: the parser stops on the edited line with
        // no repair that fits, and the rest of that line, pushed to the next, begins too
        // shallow to find the element's end by; or the element's own `{` turned `[`, so
        // no element was open to replace.
        keeps_the_others("\"id\": \"c\"", "\"id\"[\n \"c\"", "c");
        keeps_the_others("\n      \"title\"", "\n     [{1,\n\"title\"", "b");
        keeps_the_others("{\n      \"id\": \"c\"", "[d\": \"c\"", "c");
        keeps_the_others("{\n      \"id\": \"e1\"", "[d\": \"e1\"", "e1");
    }

    #[test]
    fn a_line_laid_out_as_the_end_of_the_array_is_not_taken_for_it() {
        // A `]` and a key left at the root members' indentation inside an element: the
        // array's end is the `]` followed by the next array (or the root's end).
        keeps_the_others("\"title\": \"Two\"", "\"title\": \"Two\",\n  ]\n  \"x\": 1", "b");
        keeps_the_others("\"node\": \"a\"\n      }", "\"node\": \"a\"\n  ]\n  \"x\": 1", "e1");
    }

    #[test]
    fn a_fault_at_the_top_level_that_fits_no_repair_is_not_recovered() {
        let broken = DRAFT.replacen("\"format\"", "format", 1);
        assert_eq!(recover_by_layout(&broken), None);
        assert_eq!(recover_by_layout("{\"nodes\": [{\"id\": \"a\" x}]}"), None, "not laid out over lines");
    }
}
