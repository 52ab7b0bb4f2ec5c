//! A strict RFC 8259 JSON parser that keeps a byte span for every key and value.
//!
//! The parser makes one pass over the text with an explicit stack, so nesting depth
//! never turns into native recursion; documents nested deeper than [`MAX_DEPTH`] are
//! rejected. The result is a flat arena ([`JsonTree`]) whose root is node 0: dropping
//! it never recurses either.
//!
//! What [`parse`] reports:
//!
//! * a syntax error: exactly one `parse.invalid_json` diagnostic at the first fault
//!   and no tree (diagnostics found before the fault are dropped: a file that is not
//!   JSON gets one finding, not a mix);
//! * a key that appears twice in one object: `parse.duplicate_key` on the second
//!   occurrence, with a related location at the first; the tree keeps the first
//!   occurrence only, so every reader sees the same document;
//! * an integer outside ±2^53: `parse.unsafe_integer`; its lexeme is kept exactly.
//!
//! Spans are byte offsets into the text given to [`parse`], even when it starts with
//! a UTF-8 byte order mark (which is skipped).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Range;
use std::sync::Arc;

use little_diagnostics::{Code, Diagnostic, Related};

/// The index of a node in a [`JsonTree`].
pub type NodeIdx = u32;

/// The deepest nesting of arrays and objects that [`parse`] accepts.
pub const MAX_DEPTH: usize = 512;

/// A parsed JSON document: a flat arena of nodes whose root is index 0.
///
/// Compact, because a draft's tree is kept for as long as the draft is open: a node is
/// 20 bytes; a string without escapes and a number are read from the document's text
/// (which the tree shares), other strings from one arena; the items of every array and
/// the members of every object live in two shared vectors, each container's run
/// contiguous. A million-node draft is a few allocations, not millions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonTree {
    text: Arc<str>,
    nodes: Vec<Slot>,
    items: Vec<NodeIdx>,
    members: Vec<Entry>,
    /// Strings written with escapes, unescaped.
    strings: String,
    /// Every distinct key of the document, once: drafts repeat a few dozen keys hundreds
    /// of thousands of times, and a member names its key by index.
    keys: Vec<Box<str>>,
    /// Some element is elided: this is an outline ([`parse_outline`]), not the whole tree.
    elided: bool,
}

/// One node: its span and its value, whose payload (`a`, `b`) is an offset and a length
/// into the arena its tag names.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Slot {
    start: u32,
    end: u32,
    tag: Tag,
    a: u32,
    b: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tag {
    Null,
    False,
    True,
    /// The lexeme is the span's text.
    Number,
    /// A string without escapes: its text is the span's, quotes excluded.
    RawString,
    /// A string with escapes: the unescaped text is `strings[a..a + b]`.
    String,
    /// The items are `items[a..a + b]`.
    Array,
    /// The members are `members[a..a + b]`.
    Object,
    /// An element of an outline's array, kept as its span only (see [`parse_outline`]);
    /// `a..b` is the text of its `id` when that is a string without escapes, else `0..0`.
    Elided,
}

/// One value of the document and the bytes it spans (quotes and brackets included).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonNode<'t> {
    pub value: JsonValue<'t>,
    pub span: Range<u32>,
}

/// A JSON value, borrowed from its tree. Containers refer to their children by index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonValue<'t> {
    Null,
    Bool(bool),
    /// The number exactly as written, e.g. `-1.50e+3`.
    Number(&'t str),
    String(&'t str),
    Array(&'t [NodeIdx]),
    /// Members in document order; keys are unique (later duplicates are dropped).
    Object(Members<'t>),
    /// An element an outline keeps as its span only: [`JsonTree::element`] parses it.
    Elided,
}

/// One member of an object as the arena keeps it (16 bytes): its key is an index into
/// the tree's key table.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    key: u32,
    key_span: Range<u32>,
    value: NodeIdx,
}

/// The members of one object, in document order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Members<'t> {
    entries: &'t [Entry],
    keys: &'t [Box<str>],
}

impl<'t> IntoIterator for Members<'t> {
    type Item = Member<'t>;
    type IntoIter = MembersIter<'t>;

    fn into_iter(self) -> MembersIter<'t> {
        self.iter()
    }
}

/// The members of an object, in document order.
#[derive(Clone, Debug)]
pub struct MembersIter<'t> {
    entries: std::slice::Iter<'t, Entry>,
    keys: &'t [Box<str>],
}

impl<'t> MembersIter<'t> {
    fn member(&self, entry: &'t Entry) -> Member<'t> {
        Member { key: &self.keys[entry.key as usize], key_span: entry.key_span.clone(), value: entry.value }
    }
}

impl<'t> Iterator for MembersIter<'t> {
    type Item = Member<'t>;

    fn next(&mut self) -> Option<Member<'t>> {
        let entry = self.entries.next()?;
        Some(self.member(entry))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.entries.size_hint()
    }
}

impl<'t> DoubleEndedIterator for MembersIter<'t> {
    fn next_back(&mut self) -> Option<Member<'t>> {
        let entry = self.entries.next_back()?;
        Some(self.member(entry))
    }
}

impl ExactSizeIterator for MembersIter<'_> {}

/// One member of an object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member<'t> {
    pub key: &'t str,
    /// The key's bytes, quotes included.
    pub key_span: Range<u32>,
    pub value: NodeIdx,
}

impl<'t> Members<'t> {
    pub fn iter(&self) -> MembersIter<'t> {
        MembersIter { entries: self.entries.iter(), keys: self.keys }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The member whose key is `key`.
    pub fn get(&self, key: &str) -> Option<Member<'t>> {
        self.iter().find(|m| m.key == key)
    }
}

/// What [`parse`] returns: the tree, unless the text is not JSON, and the findings.
#[derive(Clone, Debug)]
pub struct Parsed {
    pub tree: Option<JsonTree>,
    pub diagnostics: Vec<Diagnostic>,
}

impl<'t> JsonValue<'t> {
    /// The type's name as messages spell it: `object`, `array`, `string`, `number`,
    /// `boolean` or `null`.
    pub fn type_name(&self) -> &'static str {
        match self {
            JsonValue::Null => "null",
            JsonValue::Bool(_) => "boolean",
            JsonValue::Number(_) => "number",
            JsonValue::String(_) => "string",
            JsonValue::Array(_) => "array",
            JsonValue::Object(_) => "object",
            JsonValue::Elided => "element",
        }
    }

    pub fn as_str(&self) -> Option<&'t str> {
        match self {
            JsonValue::String(s) => Some(*s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            JsonValue::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The number's lexeme.
    pub fn as_number(&self) -> Option<&'t str> {
        match self {
            JsonValue::Number(n) => Some(*n),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&'t [NodeIdx]> {
        match self {
            JsonValue::Array(items) => Some(*items),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<Members<'t>> {
        match self {
            JsonValue::Object(members) => Some(*members),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, JsonValue::Null)
    }

    pub fn is_bool(&self) -> bool {
        matches!(self, JsonValue::Bool(_))
    }

    pub fn is_number(&self) -> bool {
        matches!(self, JsonValue::Number(_))
    }

    pub fn is_string(&self) -> bool {
        matches!(self, JsonValue::String(_))
    }

    pub fn is_array(&self) -> bool {
        matches!(self, JsonValue::Array(_))
    }

    pub fn is_object(&self) -> bool {
        matches!(self, JsonValue::Object(_))
    }
}

impl JsonTree {
    /// The root node: always index 0.
    pub fn root(&self) -> NodeIdx {
        0
    }

    /// The node at `i`. Panics if `i` is not a node of this tree.
    pub fn node(&self, i: NodeIdx) -> JsonNode<'_> {
        JsonNode { value: self.value(i), span: self.span(i) }
    }

    /// The value of the node at `i`.
    pub fn value(&self, i: NodeIdx) -> JsonValue<'_> {
        let slot = &self.nodes[i as usize];
        let (a, b) = (slot.a as usize, slot.b as usize);
        match slot.tag {
            Tag::Null => JsonValue::Null,
            Tag::False => JsonValue::Bool(false),
            Tag::True => JsonValue::Bool(true),
            Tag::Number => JsonValue::Number(&self.text[slot.start as usize..slot.end as usize]),
            Tag::RawString => JsonValue::String(&self.text[slot.start as usize + 1..slot.end as usize - 1]),
            Tag::String => JsonValue::String(&self.strings[a..a + b]),
            Tag::Array => JsonValue::Array(&self.items[a..a + b]),
            Tag::Object => JsonValue::Object(Members { entries: &self.members[a..a + b], keys: &self.keys }),
            Tag::Elided => JsonValue::Elided,
        }
    }

    /// The document's text.
    pub fn text(&self) -> &Arc<str> {
        &self.text
    }

    /// The element at `i` of an outline, parsed on its own; `None` when the node is not
    /// elided (it is then read in this tree). Its spans are the document's.
    pub fn element(&self, i: NodeIdx) -> Option<JsonTree> {
        let slot = &self.nodes[i as usize];
        if slot.tag != Tag::Elided {
            return None;
        }
        let mut parser = ElementParser::new(&self.text);
        parser.parse(slot.start..slot.end);
        parser.into_tree()
    }

    /// The string `id` of an array element: the one the outline kept, else read from the
    /// element (parsed on its own if elided).
    pub fn element_id(&self, i: NodeIdx) -> Option<Cow<'_, str>> {
        fn id_in(tree: &JsonTree, i: NodeIdx) -> Option<&str> {
            tree.get(i, "id").and_then(|m| tree.value(m.value).as_str())
        }
        if let Some(id) = self.elided_id(i) {
            return Some(Cow::Borrowed(id));
        }
        match self.element(i) {
            Some(element) => id_in(&element, element.root()).map(|id| Cow::Owned(id.to_owned())),
            None => id_in(self, i).map(Cow::Borrowed),
        }
    }

    /// This outline after an edit that changed only the elided element `i`, which once
    /// ended at `old_end` and is now `element` (parsed on its own from `text`, the edited
    /// document): its span and id are the element's, and every span after it moves by
    /// the edit's length. What the whole parse of `text` would outline, read for read.
    pub(crate) fn replace_elided(&mut self, text: Arc<str>, i: NodeIdx, element: &JsonTree, old_end: u32) {
        let delta = i64::from(element.span(element.root()).end) - i64::from(old_end);
        let shift = |at: &mut u32| shift_after(at, old_end, delta);
        for slot in &mut self.nodes {
            shift(&mut slot.start);
            shift(&mut slot.end);
            if slot.tag == Tag::Elided && slot.a != 0 {
                shift(&mut slot.a);
                shift(&mut slot.b);
            }
        }
        for member in &mut self.members {
            shift(&mut member.key_span.start);
            shift(&mut member.key_span.end);
        }
        let id = plain_id(&element.nodes, &element.members, &element.keys, element.root());
        let span = element.span(element.root());
        let slot = &mut self.nodes[i as usize];
        (slot.start, slot.end, slot.a, slot.b) = (span.start, span.end, id.0, id.1);
        self.text = text;
    }

    /// The span of the `id` of the object at `i` when it is a string without escapes,
    /// else `(0, 0)`: what an outline keeps of an element it elides.
    pub(crate) fn plain_id(&self, i: NodeIdx) -> (u32, u32) {
        plain_id(&self.nodes, &self.members, &self.keys, i)
    }

    /// Gives the elided element `i` the id `id` (a [`JsonTree::plain_id`] of its text).
    pub(crate) fn set_elided_id(&mut self, i: NodeIdx, id: (u32, u32)) {
        let slot = &mut self.nodes[i as usize];
        if slot.tag == Tag::Elided {
            (slot.a, slot.b) = id;
        }
    }

    /// Whether this is an outline with elided elements rather than the whole tree.
    pub fn is_outline(&self) -> bool {
        self.elided
    }

    /// The `id` of an elided element, when the outline kept it (a string without escapes).
    pub fn elided_id(&self, i: NodeIdx) -> Option<&str> {
        let slot = &self.nodes[i as usize];
        (slot.tag == Tag::Elided && slot.a != 0).then(|| &self.text[slot.a as usize..slot.b as usize])
    }

    /// The span of the node at `i`.
    pub fn span(&self, i: NodeIdx) -> Range<u32> {
        let slot = &self.nodes[i as usize];
        slot.start..slot.end
    }

    /// The number of nodes in the arena. This counts the values of dropped duplicate
    /// members too, which no container refers to.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Never true for a tree that [`parse`] returned: a document has a root.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The member `key` of the object at `object`; `None` if there is no such member
    /// or the node is not an object.
    pub fn get(&self, object: NodeIdx, key: &str) -> Option<Member<'_>> {
        self.value(object).as_object()?.get(key)
    }

    /// The type's name of the node at `i`, as messages spell it.
    pub fn type_name(&self, i: NodeIdx) -> &'static str {
        self.value(i).type_name()
    }

    /// The subtree at `i` as a hashing value. Numbers keep their lexeme.
    pub fn to_hashing_value(&self, i: NodeIdx) -> little_hashing::Value {
        use little_hashing::Value;
        self.convert(
            i,
            |value| match value {
                JsonValue::Null => Value::Null,
                JsonValue::Bool(b) => Value::Bool(*b),
                JsonValue::Number(n) => Value::Number(n.to_string()),
                JsonValue::String(s) => Value::String(s.to_string()),
                JsonValue::Array(_) | JsonValue::Object(_) | JsonValue::Elided => unreachable!("converted apart"),
            },
            Value::Array,
            |members, values| Value::Object(members.iter().map(|m| m.key.to_string()).zip(values).collect()),
        )
    }

    /// The subtree at `i` as a `serde_json` value.
    ///
    /// Numbers: an integer lexeme (no fraction, no exponent) that fits `i64` or `u64`
    /// becomes that integer (except `-0`, which stays `-0.0` as serde_json reads it);
    /// any other number becomes the nearest `f64`. A number too
    /// large for `f64` (e.g. `1e400`) has no `serde_json` number, so it becomes a
    /// string holding its lexeme rather than being silently changed to infinity or null.
    pub fn to_serde(&self, i: NodeIdx) -> serde_json::Value {
        use serde_json::Value;
        self.convert(
            i,
            |value| match value {
                JsonValue::Null => Value::Null,
                JsonValue::Bool(b) => Value::Bool(*b),
                JsonValue::Number(n) => serde_number(n),
                JsonValue::String(s) => Value::String(s.to_string()),
                JsonValue::Array(_) | JsonValue::Object(_) | JsonValue::Elided => unreachable!("converted apart"),
            },
            Value::Array,
            |members, values| {
                let mut map = serde_json::Map::with_capacity(members.len());
                for (member, value) in members.iter().zip(values) {
                    map.insert(member.key.to_string(), value);
                }
                Value::Object(map)
            },
        )
    }

    /// Converts a subtree bottom-up with an explicit stack: `leaf` makes scalars,
    /// `array` and `object` assemble containers from their converted children. An
    /// outline's elided element is parsed and converted on its own (it holds none).
    fn convert<V>(
        &self,
        root: NodeIdx,
        mut leaf: impl FnMut(&JsonValue) -> V,
        mut array: impl FnMut(Vec<V>) -> V,
        mut object: impl FnMut(Members<'_>, std::vec::Drain<'_, V>) -> V,
    ) -> V {
        self.convert_with(root, &mut leaf, &mut array, &mut object)
    }

    fn convert_with<V>(
        &self,
        root: NodeIdx,
        leaf: &mut impl FnMut(&JsonValue) -> V,
        array: &mut impl FnMut(Vec<V>) -> V,
        object: &mut impl FnMut(Members<'_>, std::vec::Drain<'_, V>) -> V,
    ) -> V {
        enum Task {
            Visit(NodeIdx),
            Build(NodeIdx),
        }
        let mut tasks = vec![Task::Visit(root)];
        let mut done: Vec<V> = Vec::new();
        while let Some(task) = tasks.pop() {
            match task {
                Task::Visit(i) => match self.value(i) {
                    JsonValue::Array(items) => {
                        tasks.push(Task::Build(i));
                        tasks.extend(items.iter().rev().map(|&c| Task::Visit(c)));
                    }
                    JsonValue::Object(members) => {
                        tasks.push(Task::Build(i));
                        tasks.extend(members.iter().rev().map(|m| Task::Visit(m.value)));
                    }
                    JsonValue::Elided => {
                        let element = self.element(i).expect("an elided element");
                        done.push(element.convert_with(element.root(), leaf, array, object));
                    }
                    value => done.push(leaf(&value)),
                },
                Task::Build(i) => match self.value(i) {
                    JsonValue::Array(items) => {
                        let values = done.split_off(done.len() - items.len());
                        done.push(array(values));
                    }
                    JsonValue::Object(members) => {
                        // Drained, not split off: the members go into a map, not a vector.
                        let start = done.len() - members.len();
                        let built = object(members, done.drain(start..));
                        done.push(built);
                    }
                    _ => unreachable!("only containers are built"),
                },
            }
        }
        done.pop().expect("the root was converted")
    }
}

fn serde_number(lexeme: &str) -> serde_json::Value {
    let integer = !lexeme.bytes().any(|b| matches!(b, b'.' | b'e' | b'E'));
    // `-0` stays a (negative zero) float, as serde_json reads it.
    if integer && lexeme != "-0" {
        if let Ok(n) = lexeme.parse::<i64>() {
            return n.into();
        }
        if let Ok(n) = lexeme.parse::<u64>() {
            return n.into();
        }
    }
    match lexeme.parse::<f64>().ok().and_then(serde_json::Number::from_f64) {
        Some(n) => serde_json::Value::Number(n),
        None => serde_json::Value::String(lexeme.to_owned()),
    }
}

/// Appends `.key` if `key` is an identifier (`[A-Za-z_][A-Za-z0-9_]*`), else `['key']`
/// with `'` and `\` escaped by a backslash.
pub fn path_push_key(path: &mut String, key: &str) {
    let mut bytes = key.bytes();
    let identifier = bytes.next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if identifier {
        path.push('.');
        path.push_str(key);
    } else {
        path.push_str("['");
        for c in key.chars() {
            if c == '\'' || c == '\\' {
                path.push('\\');
            }
            path.push(c);
        }
        path.push_str("']");
    }
}

/// Appends `[i]`.
pub fn path_push_index(path: &mut String, i: usize) {
    let _ = write!(path, "[{i}]");
}

/// Checks that `bytes` are UTF-8. Otherwise returns a `parse.invalid_json` diagnostic
/// spanning the first byte that is not.
#[allow(clippy::result_large_err)] // the signature is shared with the driver
pub fn decode_utf8(bytes: &[u8]) -> Result<&str, Diagnostic> {
    std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        let message = match e.error_len() {
            Some(_) => format!(
                "invalid UTF-8: byte 0x{:02X} at offset {at} does not continue a valid \
                 sequence; JSON text must be UTF-8",
                bytes[at]
            ),
            None => format!(
                "invalid UTF-8: the file ends inside a multi-byte sequence starting at \
                 offset {at}; JSON text must be UTF-8"
            ),
        };
        let at = u32::try_from(at).unwrap_or(u32::MAX);
        Diagnostic::new(Code::ParseInvalidJson, message).with_span(Some(at..at.saturating_add(1)))
    })
}

/// Parses `text` as one JSON document.
pub fn parse(text: &str) -> Parsed {
    parse_shared(Arc::from(text))
}

/// Parses `text` as one JSON document; the tree shares the text rather than copying it.
pub fn parse_shared(text: Arc<str>) -> Parsed {
    parse_with(text, &[], None)
}

/// Parses `text` as one JSON document, but keeps the elements of the root object's arrays
/// named in `arrays` as their spans only ([`JsonValue::Elided`]): each is read on its own
/// when needed ([`JsonTree::element`], [`ElementParser`]). The findings are those of
/// [`parse_shared`]. A draft's outline is a few bytes an element where its tree is
/// hundreds, and nothing needs the whole tree at once.
pub fn parse_outline(text: Arc<str>, arrays: &[&str]) -> Parsed {
    parse_with(text, arrays, None)
}

/// An element of an outline being parsed, shown to [`parse_outline_visiting`]'s visitor
/// just before it is dropped: the document parsed so far holds it whole.
pub struct ElementSeen<'t> {
    /// The root member whose array holds it, and that array's node.
    pub array: &'t str,
    pub array_node: NodeIdx,
    /// Its position in the array.
    pub index: usize,
    pub tree: &'t JsonTree,
    pub node: NodeIdx,
}

/// [`parse_outline`], showing each elided element to `visit` while it is still whole, so
/// that it can be read without being parsed again. (An element of a root member that a
/// later duplicate key drops is shown too; the first of two arrays is the one kept.)
pub fn parse_outline_visiting(text: Arc<str>, arrays: &[&str], visit: &mut dyn FnMut(ElementSeen<'_>)) -> Parsed {
    parse_with(text, arrays, Some(visit))
}

fn parse_with(text: Arc<str>, elide: &[&str], visit: Option<&mut dyn FnMut(ElementSeen<'_>)>) -> Parsed {
    if u32::try_from(text.len()).is_err() {
        let diagnostic =
            Diagnostic::new(Code::ParseInvalidJson, "the file is larger than 4 GiB, the most little reads")
                .with_span(Some(0..0));
        return Parsed { tree: None, diagnostics: vec![diagnostic] };
    }
    let mut parser = Parser::new(&text);
    parser.elide = elide;
    if let Some(visit) = visit {
        parser.visit = Some((visit, text.clone()));
    }
    match parser.run() {
        Ok(()) => {
            let mut diagnostics = std::mem::take(&mut parser.diagnostics);
            in_source_order(&mut diagnostics);
            // (The arenas keep the spare capacity they grew by: it is never written, so it
            // is not resident, and shrinking them cost a copy for no smaller peak.)
            let mut tree = parser.lend_arenas(&text);
            tree.elided = parser.elided;
            Parsed { tree: Some(tree), diagnostics }
        }
        Err(fault) => Parsed {
            tree: None,
            diagnostics: vec![Diagnostic::new(Code::ParseInvalidJson, fault.message).with_span(Some(fault.span))],
        },
    }
}

/// An outline's skeleton ([`parse_skeleton`]): the tree, with every element of the named
/// arrays elided and no id kept, the findings outside those elements, and the elements.
pub(crate) struct Skeleton {
    pub tree: JsonTree,
    pub diagnostics: Vec<Diagnostic>,
    pub elements: Vec<SkippedElement>,
}

/// An element that the skeleton parse skipped: which of the arrays holds it (an index into
/// the names given), that array's node, its index there, and its node in the skeleton.
#[derive(Clone, Debug)]
pub(crate) struct SkippedElement {
    pub array: usize,
    pub array_node: NodeIdx,
    pub index: usize,
    pub node: NodeIdx,
    pub span: Range<u32>,
}

/// [`parse_outline`] but for the elements of the root's arrays named in `arrays`, which are
/// skipped, not parsed: each ends where the bracket that opens it is closed, counted
/// outside strings, and nothing in it is checked (the caller parses each on its own). So
/// the skeleton is the outline only once every element is found to be one value there.
/// `None` when the text is not JSON outside those elements, when an element is neither an
/// array nor an object or has no end, or when the text is over 4 GiB.
pub(crate) fn parse_skeleton(text: &Arc<str>, arrays: &[&str]) -> Option<Skeleton> {
    u32::try_from(text.len()).ok()?;
    let mut parser = Parser::new(text);
    parser.elide = arrays;
    parser.skip_elements = true;
    parser.run().ok()?;
    let mut diagnostics = std::mem::take(&mut parser.diagnostics);
    in_source_order(&mut diagnostics);
    let elements = std::mem::take(&mut parser.skipped);
    let mut tree = parser.lend_arenas(text);
    tree.elided = parser.elided;
    Some(Skeleton { tree, diagnostics, elements })
}

/// Where the array or object that opens at `start` ends (just past its closing bracket):
/// brackets are counted outside strings, a string ends at its first `"` not escaped, and
/// nothing else is looked at or checked. `None` when it does not end.
///
/// The bytes are read sixteen at a time ([`structural_mask`]), and only the quotes,
/// backslashes and brackets among them are looked at one by one: most of a draft's bytes
/// are none of these, and the scan is the one part of the parallel outline that runs on
/// one thread.
fn container_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    // Bytes before this are escaped (the byte after a backslash in a string).
    let mut resume = start;
    let mut block = start;
    while block < bytes.len() {
        let mut mask = structural_mask(&bytes[block..]);
        while mask != 0 {
            let at = block + mask.trailing_zeros() as usize;
            mask &= mask - 1;
            if at < resume {
                continue;
            }
            match (in_string, bytes[at]) {
                (_, b'"') => in_string = !in_string,
                (true, b'\\') => resume = at + 2,
                (false, b'{' | b'[') => depth += 1,
                (false, b'}' | b']') => {
                    depth = depth.checked_sub(1)?;
                    if depth == 0 {
                        return Some(at + 1);
                    }
                }
                _ => {}
            }
        }
        block += 16;
    }
    None
}

/// Which of the first 16 bytes of `bytes` (fewer at its end) are a quote, a backslash or
/// a bracket: bit `i` for byte `i`.
#[inline]
fn structural_mask(bytes: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if let Some(block) = bytes.first_chunk::<16>() {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of x86_64; the load reads the 16 bytes of `block`.
        unsafe {
            let chunk = _mm_loadu_si128(block.as_ptr().cast());
            let quote = _mm_cmpeq_epi8(chunk, _mm_set1_epi8(b'"' as i8));
            let backslash = _mm_cmpeq_epi8(chunk, _mm_set1_epi8(b'\\' as i8));
            // `[` and `]` are `{` and `}` without the 0x20 bit; no other byte becomes
            // either with it set.
            let folded = _mm_or_si128(chunk, _mm_set1_epi8(0x20));
            let open = _mm_cmpeq_epi8(folded, _mm_set1_epi8(b'{' as i8));
            let close = _mm_cmpeq_epi8(folded, _mm_set1_epi8(b'}' as i8));
            let any = _mm_or_si128(_mm_or_si128(quote, backslash), _mm_or_si128(open, close));
            return _mm_movemask_epi8(any) as u32;
        }
    }
    let mut mask = 0;
    for (i, &byte) in bytes.iter().take(16).enumerate() {
        if matches!(byte, b'"' | b'\\' | b'{' | b'}' | b'[' | b']') {
            mask |= 1 << i;
        }
    }
    mask
}

#[cfg(test)]
mod container_end_tests {
    use super::container_end;

    /// The scan as it was written first, a byte at a time: the reference.
    fn byte_by_byte(bytes: &[u8], start: usize) -> Option<usize> {
        let mut depth = 0usize;
        let mut at = start;
        while let Some(&byte) = bytes.get(at) {
            match byte {
                b'"' => {
                    at += 1;
                    loop {
                        at += bytes.get(at..)?.iter().position(|&b| b == b'"' || b == b'\\')?;
                        if bytes[at] == b'"' {
                            break;
                        }
                        at += 2;
                    }
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    depth = depth.checked_sub(1)?;
                    if depth == 0 {
                        return Some(at + 1);
                    }
                }
                _ => {}
            }
            at += 1;
        }
        None
    }

    /// On every start of texts made of the bytes that matter (brackets, quotes,
    /// backslashes) among others, at every length around the 16-byte blocks, the scan
    /// ends where the byte-by-byte one does.
    #[test]
    fn the_block_scan_ends_where_the_byte_scan_does() {
        let alphabet = b"{}[]\"\\\"a \x7b\x5bz{\x7f\xfb\xdb";
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..20_000 {
            let len = (next() % 70) as usize;
            let mut bytes: Vec<u8> = (0..len).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]).collect();
            // Often a container that does end, with strings and escapes inside.
            if next() % 2 == 0 {
                bytes.insert(0, b'{');
                bytes.push(b'}');
            }
            for start in 0..bytes.len() {
                assert_eq!(container_end(&bytes, start), byte_by_byte(&bytes, start), "{:?} from {start}", bytes);
            }
        }
        let element = br#"{"id":"a\\","t":"\"}]","k":[1,{"b":"]}"}]} , {"id":"b"}"#;
        let end = element.windows(3).position(|w| w == b" , ").expect("the element's end");
        assert_eq!(container_end(element, 0), Some(end));
    }
}

/// Where a text stops being JSON, as [`crate::recover`] needs it: the fault's span, the
/// parser's position there, and the containers open there, outermost first.
pub(crate) struct FaultSite {
    pub span: Range<u32>,
    pub message: String,
    pub pos: u32,
    pub open: Vec<OpenContainer>,
    /// The key of the root object's member being parsed, when the root is an object.
    pub root_key: Option<String>,
}

/// A container open at a fault: whether it is an object, and where it starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OpenContainer {
    pub object: bool,
    pub start: u32,
}

/// The first syntax fault of `text`, or `None` when it is JSON.
pub(crate) fn fault_site(text: &str) -> Option<FaultSite> {
    fault_site_or_elements(text, &[]).err()
}

/// The first syntax fault of `text`, or, when it is JSON, the spans of the elements of
/// the root object's arrays named in `arrays`, array by array. Parsed as an outline
/// ([`parse_outline`]): the elements are dropped as they close.
pub(crate) fn fault_site_or_elements(text: &str, arrays: &[&str]) -> Result<Vec<Range<u32>>, FaultSite> {
    let mut parser = Parser::new(text);
    parser.elide = arrays;
    let Err(fault) = parser.run() else {
        let root = &parser.nodes[0];
        let members = match root.tag {
            Tag::Object => &parser.object_members[root.a as usize..(root.a + root.b) as usize],
            _ => &[],
        };
        let spans = arrays
            .iter()
            .filter_map(|&key| members.iter().find(|m| &*parser.key_table[m.key as usize] == key))
            .map(|member| &parser.nodes[member.value as usize])
            .filter(|array| array.tag == Tag::Array)
            .flat_map(|array| &parser.items[array.a as usize..(array.a + array.b) as usize])
            .map(|&item| parser.nodes[item as usize].start..parser.nodes[item as usize].end)
            .collect();
        return Ok(spans);
    };
    Err(site_of(&parser, fault))
}

/// Where the parser stopped at `fault`: the containers open and the root's current key.
fn site_of(parser: &Parser<'_>, fault: Fault) -> FaultSite {
    let open = parser
        .frames
        .iter()
        .map(|frame| OpenContainer {
            object: frame.kind == Kind::Object,
            start: parser.nodes[frame.node as usize].start,
        })
        .collect();
    let root_key = match parser.frames.first() {
        Some(root) if root.kind == Kind::Object => {
            // The root's members end where the first object inside it began its own.
            let end = parser.frames[1..]
                .iter()
                .find(|frame| frame.kind == Kind::Object)
                .map_or(parser.members.len(), |frame| frame.start);
            let current = end.checked_sub(1).filter(|&at| at >= root.start);
            current.map(|at| parser.key_table[parser.members[at].key as usize].to_string())
        }
        _ => None,
    };
    FaultSite { span: fault.span, message: fault.message, pos: parser.pos as u32, open, root_key }
}

/// An element of `nodes` or `edges` that closed before a text's first fault: its array's
/// `[`, and its span.
pub(crate) struct ClosedElement {
    pub array_start: u32,
    pub span: Range<u32>,
}

/// The first syntax fault of `text` (`None` when it is JSON) and the elements of the root
/// object's arrays named in `arrays` that closed before it, in order.
pub(crate) fn fault_site_after_elements(
    text: &Arc<str>,
    arrays: &'static [&'static str],
) -> (Vec<ClosedElement>, Option<FaultSite>) {
    let mut closed = Vec::new();
    let mut visit = |seen: ElementSeen<'_>| {
        if arrays.contains(&seen.array) {
            let array_start = seen.tree.span(seen.array_node).start;
            closed.push(ClosedElement { array_start, span: seen.tree.span(seen.node) });
        }
    };
    let mut parser = Parser::new(text);
    parser.elide = arrays;
    parser.visit = Some((&mut visit, text.clone()));
    let site = match parser.run() {
        Ok(()) => None,
        Err(fault) => Some(site_of(&parser, fault)),
    };
    drop(parser);
    (closed, site)
}

/// Parses elements of one document on their own, the arenas and the key table reused
/// from one element to the next: lowering a draft's outline reads every element this way.
pub struct ElementParser<'a> {
    text: &'a Arc<str>,
    parser: Parser<'a>,
    tree: Option<JsonTree>,
}

impl<'a> ElementParser<'a> {
    pub fn new(text: &'a Arc<str>) -> ElementParser<'a> {
        ElementParser { text, parser: Parser::new(text), tree: None }
    }

    /// The element that spans `span`: an elided element of an outline of this text.
    pub fn parse(&mut self, span: Range<u32>) -> &JsonTree {
        self.start(span, 0, "$");
        // The document parsed with this element in it, so the element parses on its own.
        self.parser.run().unwrap_or_else(|fault| panic!("an elided element did not parse again: {}", fault.message));
        self.tree.insert(self.parser.lend_arenas(self.text))
    }

    /// The value that spans exactly `span` of a text that has not been parsed whole, with
    /// its findings (spans are the document's, JSONPaths start at `path`); `None` if no
    /// one value spans it. `depth` is the number of containers around it, so that the
    /// value meets the document's nesting limit.
    pub fn reparse(&mut self, span: Range<u32>, depth: usize, path: &str) -> Option<(&JsonTree, Vec<Diagnostic>)> {
        self.start(span.clone(), depth, path);
        let parsed = self.parser.run();
        let mut diagnostics = std::mem::take(&mut self.parser.diagnostics);
        in_source_order(&mut diagnostics);
        let tree = self.tree.insert(self.parser.lend_arenas(self.text));
        (parsed.is_ok() && tree.span(tree.root()) == span).then_some((tree, diagnostics))
    }

    /// Readies the parser for a value at `span`, its arenas emptied but kept.
    fn start(&mut self, span: Range<u32>, depth: usize, path: &str) {
        let parser = &mut self.parser;
        if let Some(tree) = self.tree.take() {
            parser.take_back(tree);
        }
        parser.nodes.clear();
        parser.items.clear();
        parser.object_members.clear();
        parser.strings.clear();
        parser.diagnostics.clear();
        // A value that did not parse leaves its containers open.
        parser.frames.clear();
        parser.children.clear();
        parser.members.clear();
        parser.depth_base = depth;
        parser.path_base.clear();
        parser.path_base.push_str(path);
        let end = span.end as usize;
        (parser.text, parser.bytes, parser.pos) =
            (&self.text[..end], &self.text.as_bytes()[..end], span.start as usize);
    }

    fn into_tree(self) -> Option<JsonTree> {
        self.tree
    }
}

/// A syntax error: where and what.
struct Fault {
    span: Range<u32>,
    message: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Array,
    Object,
}

/// An open container. `start` indexes the parser's `children` (arrays) or `members`
/// (objects) scratch stack, where the container's entries so far live.
struct Frame {
    kind: Kind,
    node: NodeIdx,
    start: usize,
}

/// Bytes that end the fast scan of a string: `"`, `\` and control characters.
static STRING_STOP: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        table[i] = true;
        i += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

const MAX_SAFE: &str = "9007199254740992";

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    nodes: Vec<Slot>,
    /// The tree's arenas (see [`JsonTree`]).
    items: Vec<NodeIdx>,
    object_members: Vec<Entry>,
    strings: String,
    frames: Vec<Frame>,
    children: Vec<NodeIdx>,
    members: Vec<Entry>,
    diagnostics: Vec<Diagnostic>,
    /// The tree's key table, and the index of each key in it: equal keys have one index.
    key_table: Vec<Box<str>>,
    keys: HashMap<&'a str, u32, BuildHasherDefault<Fnv>>,
    /// Keys written with escapes (rare), by their unescaped text.
    escaped_keys: HashMap<Box<str>, u32>,
    /// The root arrays whose elements are elided (see [`parse_outline`]).
    elide: &'a [&'a str],
    /// Where the arenas stood when the element being parsed began, if it is to be elided.
    element: Option<ElementMark>,
    /// Some element was elided.
    elided: bool,
    /// Who is shown each element before it is elided, and the text its tree shares.
    visit: Option<(Visitor<'a>, Arc<str>)>,
    /// The text of the last tree lent ([`Parser::lend_arenas`]), given back with its arenas.
    lent_text: Option<Arc<str>>,
    /// The elements to elide are skipped, not parsed ([`parse_skeleton`]), and listed here.
    skip_elements: bool,
    skipped: Vec<SkippedElement>,
    /// Where the value parsed sits in its document, for an element parsed on its own
    /// ([`ElementParser::reparse`]): the containers around it, and its JSONPath.
    depth_base: usize,
    path_base: String,
}

/// What an outline parse shows each elided element to.
type Visitor<'a> = &'a mut dyn FnMut(ElementSeen<'_>);

/// The arenas' lengths when an elided element began: its subtree is what follows.
struct ElementMark {
    node: NodeIdx,
    /// Which of the arrays to elide holds it.
    array: usize,
    items: usize,
    members: usize,
    strings: usize,
}

/// FNV-1a: keys are short, and this map is on the parser's hot path.
#[derive(Default)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn write(&mut self, bytes: &[u8]) {
        let mut hash = if self.0 == 0 { 0xcbf2_9ce4_8422_2325 } else { self.0 };
        for &b in bytes {
            hash = (hash ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = hash;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Self {
        let pos = if text.starts_with('\u{FEFF}') { 3 } else { 0 };
        Parser {
            text,
            bytes: text.as_bytes(),
            pos,
            nodes: Vec::new(),
            items: Vec::new(),
            object_members: Vec::new(),
            strings: String::new(),
            frames: Vec::new(),
            children: Vec::new(),
            members: Vec::new(),
            diagnostics: Vec::new(),
            key_table: Vec::new(),
            keys: HashMap::default(),
            escaped_keys: HashMap::new(),
            elide: &[],
            element: None,
            elided: false,
            visit: None,
            lent_text: None,
            skip_elements: false,
            skipped: Vec::new(),
            depth_base: 0,
            path_base: String::from("$"),
        }
    }

    fn run(&mut self) -> Result<(), Fault> {
        'value: loop {
            // A value is expected at `pos`.
            self.skip_ws();
            let start = self.pos;
            let Some(&byte) = self.bytes.get(start) else {
                return Err(self.unexpected_value());
            };
            match byte {
                _ if self.skip_elements && self.element.is_some() => self.skip_element(start, byte)?,
                b'{' => {
                    self.check_depth()?;
                    let idx = self.open_node(start);
                    self.pos += 1;
                    self.skip_ws();
                    match self.peek() {
                        Some(b'}') => {
                            self.pos += 1;
                            self.close_node(idx, Tag::Object, self.object_members.len(), 0);
                        }
                        Some(b'"') => {
                            self.frames.push(Frame { kind: Kind::Object, node: idx, start: self.members.len() });
                            self.member_key()?;
                            continue 'value;
                        }
                        _ => return Err(self.unexpected_key("a string key or `}`")),
                    }
                }
                b'[' => {
                    self.check_depth()?;
                    let idx = self.open_node(start);
                    self.pos += 1;
                    self.skip_ws();
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                        self.close_node(idx, Tag::Array, self.items.len(), 0);
                    } else {
                        self.frames.push(Frame { kind: Kind::Array, node: idx, start: self.children.len() });
                        self.children.push(self.next_idx());
                        self.begin_element();
                        continue 'value;
                    }
                }
                b'"' => match self.string()? {
                    Cow::Borrowed(_) => self.leaf(start, Tag::RawString, 0, 0),
                    Cow::Owned(s) => {
                        let at = self.strings.len();
                        self.strings.push_str(&s);
                        self.leaf(start, Tag::String, at, s.len());
                    }
                },
                b'-' | b'0'..=b'9' => self.number()?,
                b't' if self.literal("true") => self.leaf(start, Tag::True, 0, 0),
                b'f' if self.literal("false") => self.leaf(start, Tag::False, 0, 0),
                b'n' if self.literal("null") => self.leaf(start, Tag::Null, 0, 0),
                _ => return Err(self.unexpected_value()),
            }

            // A value ended at `pos`: close containers until one expects more.
            loop {
                if self.element.is_some() && self.frames.len() == 2 {
                    self.end_element();
                }
                self.skip_ws();
                let Some(frame) = self.frames.last() else {
                    if self.pos < self.bytes.len() {
                        let (_, span) = self.describe(self.pos);
                        return Err(self.comment(self.pos).unwrap_or(Fault {
                            span,
                            message: "trailing characters after the JSON value".to_owned(),
                        }));
                    }
                    return Ok(());
                };
                match (frame.kind, self.peek()) {
                    (Kind::Array, Some(b',')) => {
                        let comma = self.pos;
                        self.pos += 1;
                        self.skip_ws();
                        if self.peek() == Some(b']') {
                            return Err(trailing_comma(comma, ']'));
                        }
                        self.children.push(self.next_idx());
                        self.begin_element();
                        continue 'value;
                    }
                    (Kind::Array, Some(b']')) => {
                        self.pos += 1;
                        let frame = self.frames.pop().expect("an open array");
                        let at = self.items.len();
                        self.items.extend(self.children.drain(frame.start..));
                        self.close_node(frame.node, Tag::Array, at, self.items.len() - at);
                    }
                    (Kind::Array, _) => {
                        return Err(self.unexpected("`,` or `]` after an array element"));
                    }
                    (Kind::Object, Some(b',')) => {
                        let comma = self.pos;
                        self.pos += 1;
                        self.skip_ws();
                        match self.peek() {
                            Some(b'"') => {
                                self.member_key()?;
                                continue 'value;
                            }
                            Some(b'}') => return Err(trailing_comma(comma, '}')),
                            _ => return Err(self.unexpected_key("a string key after `,`")),
                        }
                    }
                    (Kind::Object, Some(b'}')) => {
                        self.pos += 1;
                        self.close_object();
                    }
                    (Kind::Object, _) => {
                        return Err(self.unexpected("`,` or `}` after an object member"));
                    }
                }
            }
        }
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    #[inline]
    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    /// The index the next node will get.
    #[inline]
    fn next_idx(&self) -> NodeIdx {
        self.nodes.len() as NodeIdx
    }

    fn check_depth(&self) -> Result<(), Fault> {
        if self.depth_base + self.frames.len() >= MAX_DEPTH {
            let at = self.pos as u32;
            return Err(Fault { span: at..at + 1, message: format!("nesting deeper than {MAX_DEPTH} levels") });
        }
        Ok(())
    }

    /// Marks the value about to be parsed as an element to elide, if it is one: an
    /// element of a root array that `elide` names.
    #[inline]
    fn begin_element(&mut self) {
        if self.elide.is_empty() || self.frames.len() != 2 || self.frames[0].kind != Kind::Object {
            return;
        }
        // The root's member being parsed is the last one on the scratch stack.
        let key = &self.key_table[self.members.last().expect("the root's current member").key as usize];
        if let Some(array) = self.elide.iter().position(|&name| name == &**key) {
            self.element = Some(ElementMark {
                node: self.next_idx(),
                array,
                items: self.items.len(),
                members: self.object_members.len(),
                strings: self.strings.len(),
            });
        }
    }

    /// Drops the subtree of the element that just ended, keeping its span (and its id's).
    fn end_element(&mut self) {
        let mark = self.element.take().expect("an element being parsed");
        let id = plain_id(&self.nodes, &self.object_members, &self.key_table, mark.node);
        if self.visit.is_some() {
            self.show_element(mark.node);
        }
        self.nodes.truncate(mark.node as usize + 1);
        self.items.truncate(mark.items);
        self.object_members.truncate(mark.members);
        self.strings.truncate(mark.strings);
        let slot = &mut self.nodes[mark.node as usize];
        (slot.tag, slot.a, slot.b) = (Tag::Elided, id.0, id.1);
        self.elided = true;
    }

    /// Skips the element that starts at `start` with `byte` ([`parse_skeleton`]), leaving
    /// it elided without an id, and lists it.
    fn skip_element(&mut self, start: usize, byte: u8) -> Result<(), Fault> {
        let mark = self.element.take().expect("an element to skip");
        let end = match byte {
            b'{' | b'[' => container_end(self.bytes, start),
            _ => None,
        };
        let Some(end) = end else {
            let at = start as u32;
            return Err(Fault { span: at..at + 1, message: "an element the skeleton parse cannot skip".to_owned() });
        };
        self.pos = end;
        let span = start as u32..end as u32;
        self.nodes.push(Slot { start: span.start, end: span.end, tag: Tag::Elided, a: 0, b: 0 });
        let array = &self.frames[1];
        let index = self.children.len() - array.start - 1;
        self.skipped.push(SkippedElement { array: mark.array, array_node: array.node, index, node: mark.node, span });
        self.elided = true;
        Ok(())
    }

    /// Shows the element that just ended to the visitor, lending it the arenas as a tree.
    fn show_element(&mut self, node: NodeIdx) {
        let Some((visit, text)) = self.visit.take() else { return };
        let tree = self.lend_arenas(&text);
        let array = &self.frames[1];
        let (array_node, index) = (array.node, self.children.len() - array.start - 1);
        let key = self.members.last().expect("the root's current member").key as usize;
        visit(ElementSeen { array: &tree.keys[key], array_node, index, tree: &tree, node });
        self.take_back(tree);
        self.visit = Some((visit, text));
    }

    /// The arenas as a tree over `text`; they are empty here until [`Parser::take_back`].
    fn lend_arenas(&mut self, text: &Arc<str>) -> JsonTree {
        // The text given back with the last tree lent is moved, not counted again: a
        // count per element is two atomic writes to one cache line that the threads of a
        // parallel outline all write.
        let text = match self.lent_text.take() {
            Some(lent) if Arc::ptr_eq(&lent, text) => lent,
            _ => text.clone(),
        };
        JsonTree {
            text,
            nodes: std::mem::take(&mut self.nodes),
            items: std::mem::take(&mut self.items),
            members: std::mem::take(&mut self.object_members),
            strings: std::mem::take(&mut self.strings),
            keys: std::mem::take(&mut self.key_table),
            elided: false,
        }
    }

    /// The arenas of a tree made by [`Parser::lend_arenas`], back (allocations and all).
    fn take_back(&mut self, tree: JsonTree) {
        let JsonTree { text, nodes, items, members, strings, keys, elided: _ } = tree;
        (self.nodes, self.items, self.object_members, self.strings, self.key_table) =
            (nodes, items, members, strings, keys);
        self.lent_text = Some(text);
    }

    /// Adds a container whose value and end are filled in when it closes.
    fn open_node(&mut self, start: usize) -> NodeIdx {
        let idx = self.next_idx();
        let start = start as u32;
        self.nodes.push(Slot { start, end: start, tag: Tag::Null, a: 0, b: 0 });
        idx
    }

    /// Sets a container's value (its run in an arena) and its end.
    fn close_node(&mut self, idx: NodeIdx, tag: Tag, at: usize, len: usize) {
        let node = &mut self.nodes[idx as usize];
        (node.tag, node.a, node.b) = (tag, at as u32, len as u32);
        node.end = self.pos as u32;
    }

    /// Adds a scalar that spans `start..pos`.
    fn leaf(&mut self, start: usize, tag: Tag, at: usize, len: usize) {
        self.nodes.push(Slot { start: start as u32, end: self.pos as u32, tag, a: at as u32, b: len as u32 });
    }

    /// Consumes `word` if it is at `pos` and not followed by more of a word.
    fn literal(&mut self, word: &str) -> bool {
        let end = self.pos + word.len();
        if self.bytes[self.pos..].starts_with(word.as_bytes()) && !self.bytes.get(end).is_some_and(|&b| is_word_byte(b))
        {
            self.pos = end;
            true
        } else {
            false
        }
    }

    /// Parses the key at `pos` (a `"`) and its `:`, and opens the member.
    fn member_key(&mut self) -> Result<(), Fault> {
        let start = self.pos;
        let key = self.string()?;
        let key = self.key_index(key);
        let key_span = start as u32..self.pos as u32;
        self.skip_ws();
        if self.peek() != Some(b':') {
            return Err(self.unexpected("`:` after an object key"));
        }
        self.pos += 1;
        self.members.push(Entry { key, key_span, value: self.next_idx() });
        Ok(())
    }

    /// The index of `key` in the key table, added on first sight. Equal text, escaped or
    /// not, is one index: duplicate keys are found by index.
    fn key_index(&mut self, key: Cow<'a, str>) -> u32 {
        if let Some(&index) = self.keys.get(&*key) {
            return index;
        }
        if let Some(&index) = self.escaped_keys.get(&*key) {
            if let Cow::Borrowed(key) = key {
                self.keys.insert(key, index);
            }
            return index;
        }
        let index = u32::try_from(self.key_table.len()).expect("fewer keys than bytes");
        self.key_table.push(Box::from(&*key));
        match key {
            Cow::Borrowed(key) => self.keys.insert(key, index),
            Cow::Owned(key) => self.escaped_keys.insert(key.into_boxed_str(), index),
        };
        index
    }

    /// Closes the object on top of the stack, reporting and dropping duplicate keys.
    fn close_object(&mut self) {
        let frame = self.frames.last().expect("an open object");
        let (node, start) = (frame.node, frame.start);
        let duplicates = find_duplicates(&self.members[start..]);
        let at = self.object_members.len();
        if duplicates.is_empty() {
            self.object_members.extend(self.members.drain(start..));
        } else {
            let object_path = self.path(self.frames.len() - 1);
            let mut dropped = vec![false; self.members.len() - start];
            let mut seen_twice = Vec::new();
            for &(first, dup) in &duplicates {
                dropped[dup] = true;
                let first = &self.members[start + first];
                let second = &self.members[start + dup];
                let mut path = object_path.clone();
                let key = &self.key_table[second.key as usize];
                path_push_key(&mut path, key);
                let how = if seen_twice.contains(&first.key_span.start) {
                    "more than twice"
                } else {
                    seen_twice.push(first.key_span.start);
                    "twice"
                };
                let diagnostic = Diagnostic::new(
                    Code::ParseDuplicateKey,
                    format!("key `{}` appears {how} in this object", snippet(key, 60)),
                )
                .with_span(Some(second.key_span.clone()))
                .with_related(Related {
                    message: "first occurrence".to_owned(),
                    path: path.clone(),
                    span: Some(first.key_span.clone()),
                })
                .with_path(path);
                self.diagnostics.push(diagnostic);
            }
            let kept = self.members.drain(start..).zip(dropped).filter(|(_, dropped)| !dropped);
            self.object_members.extend(kept.map(|(m, _)| m));
        }
        self.frames.pop();
        self.close_node(node, Tag::Object, at, self.object_members.len() - at);
    }

    /// The JSONPath of the value being parsed inside `frames[..depth]`.
    fn path(&self, depth: usize) -> String {
        // Each frame's current entry is the last one before the next frame's entries.
        let mut current = vec![0usize; self.frames.len()];
        let (mut children_end, mut members_end) = (self.children.len(), self.members.len());
        for (i, frame) in self.frames.iter().enumerate().rev() {
            match frame.kind {
                Kind::Array => {
                    current[i] = children_end - 1 - frame.start;
                    children_end = frame.start;
                }
                Kind::Object => {
                    current[i] = members_end - 1;
                    members_end = frame.start;
                }
            }
        }
        let mut path = self.path_base.clone();
        for (frame, &current) in self.frames[..depth].iter().zip(&current) {
            match frame.kind {
                Kind::Array => path_push_index(&mut path, current),
                Kind::Object => path_push_key(&mut path, &self.key_table[self.members[current].key as usize]),
            }
        }
        path
    }

    /// The string at `pos` (a `"`), unescaped: borrowed from the text when it has no escapes.
    fn string(&mut self) -> Result<Cow<'a, str>, Fault> {
        let bytes = self.bytes;
        let mut i = self.pos + 1;
        let mut chunk = i;
        let mut owned: Option<String> = None;
        loop {
            while i < bytes.len() && !STRING_STOP[bytes[i] as usize] {
                i += 1;
            }
            match bytes.get(i) {
                Some(b'"') => {
                    let tail = &self.text[chunk..i];
                    self.pos = i + 1;
                    return Ok(match owned {
                        None => Cow::Borrowed(tail),
                        Some(mut s) => {
                            s.push_str(tail);
                            Cow::Owned(s)
                        }
                    });
                }
                Some(b'\\') => {
                    let s = owned.get_or_insert_with(String::new);
                    s.push_str(&self.text[chunk..i]);
                    i = self.escape(i, s)?;
                    chunk = i;
                }
                Some(&control) => {
                    let at = i as u32;
                    let escape = match control {
                        b'\x08' => "\\b".to_owned(),
                        b'\x0C' => "\\f".to_owned(),
                        b'\n' => "\\n".to_owned(),
                        b'\r' => "\\r".to_owned(),
                        b'\t' => "\\t".to_owned(),
                        c => format!("\\u{c:04x}"),
                    };
                    return Err(Fault {
                        span: at..at + 1,
                        message: format!("control character U+{control:04X} in string: escape it as `{escape}`"),
                    });
                }
                None => {
                    return Err(Fault {
                        span: self.eof_span(),
                        message: format!(
                            "unexpected end of file: expected `\"` to close the string \
                             that starts at byte {}",
                            self.pos
                        ),
                    });
                }
            }
        }
    }

    /// Decodes the escape at `at` (a `\`) into `out`; returns the offset after it.
    fn escape(&self, at: usize, out: &mut String) -> Result<usize, Fault> {
        let decoded = match self.bytes.get(at + 1) {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\x08',
            Some(b'f') => '\x0C',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                let unit = self.hex4(at)?;
                let (c, end) = match unit {
                    0xD800..=0xDBFF => {
                        let low = (self.bytes.get(at + 6) == Some(&b'\\') && self.bytes.get(at + 7) == Some(&b'u'))
                            .then(|| self.hex4(at + 6).ok())
                            .flatten()
                            .filter(|low| (0xDC00..=0xDFFF).contains(low));
                        let Some(low) = low else {
                            return Err(lone_surrogate(self.text, at));
                        };
                        let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                        (char::from_u32(code).expect("a valid surrogate pair"), at + 12)
                    }
                    0xDC00..=0xDFFF => return Err(lone_surrogate(self.text, at)),
                    _ => (char::from_u32(unit).expect("not a surrogate"), at + 6),
                };
                out.push(c);
                return Ok(end);
            }
            Some(_) => {
                let c = self.text[at + 1..].chars().next().expect("a char");
                let end = at + 1 + c.len_utf8();
                let shown =
                    if is_visible(c) { format!("`\\{c}`") } else { format!("`\\` followed by U+{:04X}", c as u32) };
                return Err(Fault {
                    span: at as u32..end as u32,
                    message: format!(
                        "invalid escape {shown} in string: JSON escapes are \
                         \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX"
                    ),
                });
            }
            None => {
                return Err(Fault {
                    span: self.eof_span(),
                    message: "unexpected end of file: expected an escape character after `\\`".to_owned(),
                });
            }
        };
        out.push(decoded);
        Ok(at + 2)
    }

    /// Reads the four hex digits of the `\u` escape at `at`.
    fn hex4(&self, at: usize) -> Result<u32, Fault> {
        let mut unit = 0;
        for i in at + 2..at + 6 {
            let digit = self.bytes.get(i).and_then(|&b| (b as char).to_digit(16));
            match digit {
                Some(d) => unit = unit * 16 + d,
                None => {
                    let (found, span) = self.describe(i);
                    return Err(Fault {
                        span: at as u32..span.end,
                        message: format!(
                            "invalid escape `{}` in string: `\\u` must be followed by four \
                             hex digits, found {found}",
                            &self.text[at..i]
                        ),
                    });
                }
            }
        }
        Ok(unit)
    }

    fn number(&mut self) -> Result<(), Fault> {
        let bytes = self.bytes;
        let start = self.pos;
        let mut i = start;
        if bytes[i] == b'-' {
            i += 1;
        }
        match bytes.get(i) {
            Some(b'0') => {
                i += 1;
                if bytes.get(i).is_some_and(u8::is_ascii_digit) {
                    let at = i as u32 - 1;
                    return Err(Fault {
                        span: at..at + 1,
                        message: "leading zeros are not allowed in numbers".to_owned(),
                    });
                }
            }
            Some(b'1'..=b'9') => {
                i += 1;
                while bytes.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
            }
            _ => {
                if bytes[i..].starts_with(b"Infinity") {
                    return Err(Fault {
                        span: start as u32..(i + 8) as u32,
                        message: "`-Infinity` is not JSON: numbers must be finite digits".to_owned(),
                    });
                }
                return Err(self.expected_at(i, "a digit after `-`"));
            }
        }
        let mut integer = true;
        if bytes.get(i) == Some(&b'.') {
            integer = false;
            i += 1;
            if !bytes.get(i).is_some_and(u8::is_ascii_digit) {
                return Err(self.expected_at(i, "a digit after the decimal point"));
            }
            while bytes.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
        }
        if let Some(b'e' | b'E') = bytes.get(i) {
            integer = false;
            i += 1;
            if let Some(b'+' | b'-') = bytes.get(i) {
                i += 1;
            }
            if !bytes.get(i).is_some_and(u8::is_ascii_digit) {
                return Err(self.expected_at(i, "a digit in the exponent"));
            }
            while bytes.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
        }
        self.pos = i;
        let lexeme = &self.text[start..i];
        if integer {
            let digits = lexeme.trim_start_matches('-');
            if digits.len() > MAX_SAFE.len() || (digits.len() == MAX_SAFE.len() && digits > MAX_SAFE) {
                let shown = if lexeme.len() > 40 {
                    format!("{}… ({} digits)", &lexeme[..24], digits.len())
                } else {
                    lexeme.to_owned()
                };
                let diagnostic = Diagnostic::new(
                    Code::ParseUnsafeInteger,
                    format!("integer {shown} is outside ±2^53: readers that use doubles will round it"),
                )
                .with_span(Some(start as u32..i as u32))
                .with_path(self.path(self.frames.len()));
                self.diagnostics.push(diagnostic);
            }
        }
        self.leaf(start, Tag::Number, 0, 0);
        Ok(())
    }

    fn eof_span(&self) -> Range<u32> {
        let end = self.bytes.len() as u32;
        end..end
    }

    /// How to name what is at `at` in a message, and its span.
    fn describe(&self, at: usize) -> (String, Range<u32>) {
        match self.text.get(at..).and_then(|rest| rest.chars().next()) {
            None => ("end of file".to_owned(), self.eof_span()),
            Some(c) => {
                let shown = if is_visible(c) { format!("`{c}`") } else { format!("U+{:04X}", c as u32) };
                (shown, at as u32..(at + c.len_utf8()) as u32)
            }
        }
    }

    /// "expected …, found …" at `at`.
    fn expected_at(&self, at: usize, expected: &str) -> Fault {
        if let Some(fault) = self.comment(at) {
            return fault;
        }
        let (found, span) = self.describe(at);
        let message = if at >= self.bytes.len() {
            format!("unexpected end of file: expected {expected}")
        } else {
            format!("expected {expected}, found {found}")
        };
        Fault { span, message }
    }

    /// "expected …, found …" at `pos`.
    fn unexpected(&self, expected: &str) -> Fault {
        self.expected_at(self.pos, expected)
    }

    /// The fault when the culprit at `at` is the start of a comment.
    fn comment(&self, at: usize) -> Option<Fault> {
        match self.bytes.get(at..at + 2) {
            Some(b"//" | b"/*") => {
                Some(Fault { span: at as u32..at as u32 + 2, message: "comments are not allowed in JSON".to_owned() })
            }
            _ => None,
        }
    }

    /// Where a value was expected but none starts.
    fn unexpected_value(&self) -> Fault {
        let at = self.pos;
        let Some(&byte) = self.bytes.get(at) else {
            let document_empty = self.nodes.is_empty();
            return Fault {
                span: self.eof_span(),
                message: if document_empty {
                    "expected a JSON value, found end of file".to_owned()
                } else {
                    "unexpected end of file: expected a JSON value".to_owned()
                },
            };
        };
        if is_word_byte(byte) {
            let end = self.word_end(at);
            let word = &self.text[at..end];
            let span = at as u32..end as u32;
            let message = match word {
                "NaN" | "Infinity" => {
                    format!("`{word}` is not JSON: numbers must be finite digits")
                }
                "True" | "False" | "None" | "Null" | "TRUE" | "FALSE" | "NULL" | "undefined" | "nil" => {
                    format!("`{word}` is not JSON: the only literals are `true`, `false` and `null`")
                }
                _ => format!("expected a JSON value, found `{}`", snippet(word, 40)),
            };
            return Fault { span, message };
        }
        match byte {
            b'\'' => self.single_quote(at),
            b'+' => Fault {
                span: at as u32..at as u32 + 1,
                message: "expected a JSON value, found `+`: numbers must not start with `+`".to_owned(),
            },
            b'.' => Fault {
                span: at as u32..at as u32 + 1,
                message: "expected a JSON value, found `.`: numbers must start with a digit".to_owned(),
            },
            _ => self.expected_at(at, "a JSON value"),
        }
    }

    /// Where an object key was expected but no `"` is at `pos`.
    fn unexpected_key(&self, expected: &str) -> Fault {
        let at = self.pos;
        match self.peek() {
            Some(b'\'') => self.single_quote(at),
            Some(b) if is_word_byte(b) => {
                let end = self.word_end(at);
                Fault {
                    span: at as u32..end as u32,
                    message: format!(
                        "expected {expected}, found `{}`: object keys must be strings in \
                         double quotes",
                        snippet(&self.text[at..end], 40)
                    ),
                }
            }
            _ => self.expected_at(at, expected),
        }
    }

    fn single_quote(&self, at: usize) -> Fault {
        Fault {
            span: at as u32..at as u32 + 1,
            message: "single quotes are not allowed: JSON strings use double quotes `\"`".to_owned(),
        }
    }

    fn word_end(&self, mut at: usize) -> usize {
        while self.bytes.get(at).is_some_and(|&b| is_word_byte(b)) {
            at += 1;
        }
        at
    }
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Whether `c` can be shown between backticks as it is.
fn is_visible(c: char) -> bool {
    !(c.is_control() || c.is_whitespace() || c == '\u{FEFF}')
}

/// `s` for a message: at most `max` chars, invisible characters as `\u{…}`.
fn snippet(s: &str, max: usize) -> String {
    let mut out = String::new();
    for (n, c) in s.chars().enumerate() {
        if n == max {
            out.push('…');
            break;
        }
        if is_visible(c) || c == ' ' {
            out.push(c);
        } else {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
    out
}

/// Parse findings in the order of where they start: duplicate keys are found when their
/// object closes, after what lies inside it. Stable, so findings at one place keep the
/// order they were found in.
pub(crate) fn in_source_order(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by_key(|d| d.span.as_ref().map(|s| s.start));
}

/// Moves an offset at or after `end` (where an edited stretch ended) by the edit's `delta`.
pub(crate) fn shift_after(at: &mut u32, end: u32, delta: i64) {
    if *at >= end {
        *at = (i64::from(*at) + delta) as u32;
    }
}

/// The span of an object's `id` when it is a string without escapes, else `(0, 0)`: what
/// an outline keeps of an elided element ([`JsonTree::elided_id`]).
fn plain_id(nodes: &[Slot], members: &[Entry], keys: &[Box<str>], node: NodeIdx) -> (u32, u32) {
    let slot = &nodes[node as usize];
    if slot.tag != Tag::Object {
        return (0, 0);
    }
    let members = &members[slot.a as usize..(slot.a + slot.b) as usize];
    match members.iter().find(|m| &*keys[m.key as usize] == "id").map(|m| &nodes[m.value as usize]) {
        Some(value) if value.tag == Tag::RawString => (value.start + 1, value.end - 1),
        _ => (0, 0),
    }
}

fn trailing_comma(comma: usize, close: char) -> Fault {
    Fault {
        span: comma as u32..comma as u32 + 1,
        message: format!("trailing comma before `{close}`: JSON does not allow trailing commas"),
    }
}

fn lone_surrogate(text: &str, at: usize) -> Fault {
    Fault { span: at as u32..(at + 6) as u32, message: format!("lone surrogate `{}` in string", &text[at..at + 6]) }
}

/// Pairs `(first, later)` of member indices whose keys are equal, `later` ascending.
fn find_duplicates(members: &[Entry]) -> Vec<(usize, usize)> {
    let mut duplicates = Vec::new();
    if members.len() <= 16 {
        for later in 1..members.len() {
            if let Some(first) = members[..later].iter().position(|m| m.key == members[later].key) {
                duplicates.push((first, later));
            }
        }
    } else {
        let mut order: Vec<u32> = (0..members.len() as u32).collect();
        // Equal keys have one index in the key table: sorting by index groups them.
        order.sort_unstable_by_key(|&i| (members[i as usize].key, i));
        let mut run_first = order[0] as usize;
        for pair in order.windows(2) {
            let (prev, next) = (pair[0] as usize, pair[1] as usize);
            if members[prev].key == members[next].key {
                duplicates.push((run_first, next));
            } else {
                run_first = next;
            }
        }
        duplicates.sort_unstable_by_key(|&(_, later)| later);
    }
    duplicates
}

/// One value of a tree, as the canonicalizer of `little-hashing` walks it: hashes are
/// streamed straight from the parsed tree, with no intermediate copy.
#[derive(Clone, Copy)]
pub struct TreeValue<'a> {
    pub tree: &'a JsonTree,
    pub idx: NodeIdx,
}

impl<'a> little_hashing::Json<'a> for TreeValue<'a> {
    fn view(self, items: &mut Vec<Self>, members: &mut Vec<(&'a str, Self)>) -> little_hashing::View<'a> {
        use little_hashing::View;
        let at = |idx: NodeIdx| TreeValue { tree: self.tree, idx };
        match self.tree.value(self.idx) {
            JsonValue::Null => View::Null,
            JsonValue::Bool(b) => View::Bool(b),
            JsonValue::Number(n) => View::Number(n.into()),
            JsonValue::String(s) => View::String(s),
            JsonValue::Array(children) => {
                items.extend(children.iter().map(|&i| at(i)));
                View::Array
            }
            JsonValue::Object(children) => {
                members.extend(children.iter().map(|m| (m.key, at(m.value))));
                View::Object
            }
            JsonValue::Elided => unreachable!("outlines are hashed element by element"),
        }
    }
}

#[cfg(test)]
mod size {
    /// A guard on the arena: a node is its span, a tag and an arena run.
    #[test]
    fn a_node_is_20_bytes() {
        assert_eq!(std::mem::size_of::<super::Slot>(), 20);
    }

    /// And a member is its key's index, its key's span and its value.
    #[test]
    fn a_member_is_16_bytes() {
        assert_eq!(std::mem::size_of::<super::Entry>(), 16);
    }
}
