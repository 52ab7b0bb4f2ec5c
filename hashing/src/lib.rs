//! RFC 8785 JSON Canonicalization Scheme (JCS) and sha256 identities.
//!
//! The canonical text of a [`Value`] is what every hash in `little` is taken over:
//! object members sorted by the UTF-16 code units of their names, no whitespace,
//! strings escaped as ES6 `JSON.stringify` escapes them, and numbers in ES6 form —
//! except integers beyond ±2^53, which keep their exact digits so that two different
//! documents never share a hash through rounding.

use std::fmt;

mod hash;
mod number;

pub use hash::{sha256_hex, sha256_identity, short_id};
pub use number::{canonical_number, format_es6_number, has_canonical_form};

/// Names the canonical JSON form that identities are computed over.
pub const CANONICALIZER: &str = "little-workflow-canonical-json@alpha";

/// A JSON value for hashing. Numbers keep their JSON lexeme (exact digits).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    /// A JSON number lexeme, e.g. `-12`, `4.50`, `1E30`.
    Number(String),
    String(String),
    Array(Vec<Value>),
    /// Members in source order; canonicalization sorts them.
    Object(Vec<(String, Value)>),
}

/// Why a value has no canonical form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CanonicalError {
    pub message: String,
}

impl CanonicalError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self { message: message.into() }
    }
}

impl fmt::Display for CanonicalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CanonicalError {}

/// The JCS text of `value`.
pub fn canonicalize(value: &Value) -> Result<String, CanonicalError> {
    let mut out = String::new();
    write_canonical(value, &mut out)?;
    Ok(out)
}

/// `sha256:<64 hex>` of the canonical text of `value`.
pub fn canonical_hash(value: &Value) -> Result<String, CanonicalError> {
    hash_canonical(value)
}

/// `sha256:<64 hex>` of the canonical text of any JSON view, streamed into the digest
/// without building the text.
pub fn hash_canonical<'a, J: Json<'a>>(value: J) -> Result<String, CanonicalError> {
    let mut sink = HashSink::default();
    write_canonical(value, &mut sink)?;
    Ok(sink.identity())
}

/// How the canonicalizer sees one JSON value: a scalar, or a container whose children
/// [`Json::view`] has appended to the walker's buffers.
pub enum View<'a> {
    Null,
    Bool(bool),
    /// A JSON number lexeme.
    Number(std::borrow::Cow<'a, str>),
    String(&'a str),
    /// The items were appended to `items`.
    Array,
    /// The members were appended to `members`, in any order; canonicalization sorts them.
    Object,
}

/// A JSON value the canonicalizer can walk: [`Value`], `serde_json::Value`, or a
/// parsed tree of the frontend. One canonicalizer for all of them.
///
/// Children go into buffers the walker owns and reuses, so walking a document does
/// not allocate per container.
pub trait Json<'a>: Copy + 'a {
    fn view(self, items: &mut Vec<Self>, members: &mut Vec<(&'a str, Self)>) -> View<'a>;
}

impl<'a> Json<'a> for &'a Value {
    fn view(self, items: &mut Vec<Self>, members: &mut Vec<(&'a str, Self)>) -> View<'a> {
        match self {
            Value::Null => View::Null,
            Value::Bool(b) => View::Bool(*b),
            Value::Number(n) => View::Number(n.as_str().into()),
            Value::String(s) => View::String(s),
            Value::Array(children) => {
                items.extend(children);
                View::Array
            }
            Value::Object(children) => {
                members.extend(children.iter().map(|(k, v)| (k.as_str(), v)));
                View::Object
            }
        }
    }
}

impl<'a> Json<'a> for &'a serde_json::Value {
    fn view(self, items: &mut Vec<Self>, members: &mut Vec<(&'a str, Self)>) -> View<'a> {
        use serde_json::Value as J;
        match self {
            J::Null => View::Null,
            J::Bool(b) => View::Bool(*b),
            J::Number(n) => View::Number(n.to_string().into()),
            J::String(s) => View::String(s),
            J::Array(children) => {
                items.extend(children);
                View::Array
            }
            J::Object(map) => {
                members.extend(map.iter().map(|(k, v)| (k.as_str(), v)));
                View::Object
            }
        }
    }
}

/// Where canonical text goes: a string, or straight into a digest.
pub trait Sink {
    fn put(&mut self, text: &str);
}

impl Sink for String {
    fn put(&mut self, text: &str) {
        self.push_str(text);
    }
}

/// A sha256 digest fed with canonical text. Canonical text arrives in many tiny pieces
/// (a quote, a key, a comma), so it is buffered and digested a block at a time.
#[derive(Default)]
pub struct HashSink {
    digest: sha2::Sha256,
    buffer: Vec<u8>,
}

const HASH_BUFFER: usize = 8192;

impl Sink for HashSink {
    // Most pieces are a quote, a comma or a short name: appending them is inlined; only
    // a full buffer calls into SHA-256 (which, inlined here, made `put` too large to inline).
    #[inline(always)]
    fn put(&mut self, text: &str) {
        if self.buffer.len() + text.len() <= HASH_BUFFER {
            self.buffer.extend_from_slice(text.as_bytes());
        } else {
            self.flush_and_put(text);
        }
    }
}

impl HashSink {
    #[inline(never)]
    fn flush_and_put(&mut self, text: &str) {
        sha2::Digest::update(&mut self.digest, &self.buffer);
        self.buffer.clear();
        if text.len() > HASH_BUFFER {
            sha2::Digest::update(&mut self.digest, text.as_bytes());
        } else {
            self.buffer.extend_from_slice(text.as_bytes());
        }
    }

    /// `sha256:<64 hex>` of everything put so far.
    pub fn identity(mut self) -> String {
        sha2::Digest::update(&mut self.digest, &self.buffer);
        hash::identity_of_digest(&sha2::Digest::finalize(self.digest))
    }
}

/// Writes the canonical text of `value` to `out`.
///
/// Nesting is walked with an explicit stack, so arbitrarily deep values cannot
/// overflow the thread's stack.
pub fn write_canonical<'a, J: Json<'a>>(value: J, out: &mut impl Sink) -> Result<(), CanonicalError> {
    Walk::default().write(value, out)
}

/// The buffers of [`write_canonical`], kept between values: a hash written as many
/// canonical values (one per node, say) allocates them once.
pub struct Walk<'a, J> {
    /// The children of every open container, innermost last.
    items: Vec<J>,
    members: Vec<(&'a str, J)>,
    stack: Vec<Frame>,
}

/// An open container: its children are `next..end` of the matching buffer.
enum Frame {
    Array { start: usize, next: usize, end: usize },
    Object { start: usize, next: usize, end: usize },
}

impl<J> Default for Walk<'_, J> {
    fn default() -> Self {
        Walk { items: Vec::new(), members: Vec::new(), stack: Vec::new() }
    }
}

impl<'a, J> Walk<'a, J> {
    /// The same buffers, for values of another type or lifetime (they are empty between
    /// values): a hash written from many short-lived trees allocates them once too.
    pub fn recycle<'b, K>(self) -> Walk<'b, K> {
        fn empty<T, U>(mut buffer: Vec<T>) -> Vec<U> {
            buffer.clear();
            // Collecting an empty vector in place keeps its allocation when the layouts agree.
            buffer.into_iter().map(|_| unreachable!("the buffer is empty")).collect()
        }
        Walk { items: empty(self.items), members: empty(self.members), stack: self.stack }
    }
}

impl<'a, J: Json<'a>> Walk<'a, J> {
    /// Writes the canonical text of `value` to `out`, as [`write_canonical`] does.
    pub fn write(&mut self, value: J, out: &mut impl Sink) -> Result<(), CanonicalError> {
        let Walk { items, members, stack } = self;
        // A failed value may leave children behind; none of them belong to this one.
        items.clear();
        members.clear();
        stack.clear();
        walk(value, out, items, members, stack)
    }
}

fn walk<'a, J: Json<'a>>(
    value: J,
    out: &mut impl Sink,
    items: &mut Vec<J>,
    members: &mut Vec<(&'a str, J)>,
    stack: &mut Vec<Frame>,
) -> Result<(), CanonicalError> {
    let mut pending = Some(value);
    loop {
        if let Some(value) = pending.take() {
            let (item_start, member_start) = (items.len(), members.len());
            match value.view(items, members) {
                View::Null => out.put("null"),
                View::Bool(b) => out.put(if b { "true" } else { "false" }),
                View::Number(lexeme) => out.put(&canonical_number(&lexeme)?),
                View::String(s) => write_string(out, s),
                View::Array => {
                    out.put("[");
                    stack.push(Frame::Array { start: item_start, next: item_start, end: items.len() });
                }
                View::Object => {
                    out.put("{");
                    // Stable, so duplicate names (which the parser rejects) keep their order.
                    members[member_start..].sort_by(|(a, _), (b, _)| utf16_order(a, b));
                    stack.push(Frame::Object { start: member_start, next: member_start, end: members.len() });
                }
            }
        }

        let Some(frame) = stack.last_mut() else {
            return Ok(());
        };
        match frame {
            Frame::Array { start, next, end } => {
                if next < end {
                    if next > start {
                        out.put(",");
                    }
                    pending = Some(items[*next]);
                    *next += 1;
                } else {
                    out.put("]");
                    items.truncate(*start);
                    stack.pop();
                }
            }
            Frame::Object { start, next, end } => {
                if next < end {
                    if next > start {
                        out.put(",");
                    }
                    let (name, item) = members[*next];
                    write_string(out, name);
                    out.put(":");
                    pending = Some(item);
                    *next += 1;
                } else {
                    out.put("}");
                    members.truncate(*start);
                    stack.pop();
                }
            }
        }
    }
}

/// Orders two names by their UTF-16 code units, as RFC 8785 sorts members.
///
/// UTF-8 bytes order like code points, and code points order like UTF-16 code units
/// except where a character from U+10000 up (lead byte F0–F4) meets one from U+E000 to
/// U+FFFF (lead byte EE–EF). Such a pair differs first in those lead bytes, so bytes
/// decide unless both bytes at the first difference are at least 0xEE.
pub fn utf16_order(a: &str, b: &str) -> std::cmp::Ordering {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    match x.iter().zip(y).position(|(p, q)| p != q) {
        Some(i) if x[i] >= 0xEE && y[i] >= 0xEE => a.encode_utf16().cmp(b.encode_utf16()),
        Some(i) => x[i].cmp(&y[i]),
        None => x.len().cmp(&y.len()),
    }
}

/// Writes `s` as a JSON string the way ES6 `JSON.stringify` does (RFC 8785 §3.2.2.2):
/// the two-character escapes where JSON has them, `\u00xx` for the other controls,
/// and every other character as literal UTF-8.
pub fn write_string(out: &mut impl Sink, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.put("\"");
    // Every byte that needs escaping is ASCII, so the unescaped runs in between are
    // whole UTF-8 sequences and can be copied as slices.
    let mut run_start = 0;
    for (i, byte) in s.bytes().enumerate() {
        let escape = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            0x0c => "\\f",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x00..=0x1f => "",
            _ => continue,
        };
        out.put(&s[run_start..i]);
        run_start = i + 1;
        if escape.is_empty() {
            let code = [b'\\', b'u', b'0', b'0', HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 0xf)]];
            out.put(std::str::from_utf8(&code).expect("ASCII"));
        } else {
            out.put(escape);
        }
    }
    out.put(&s[run_start..]);
    out.put("\"");
}

impl From<&serde_json::Value> for Value {
    /// Numbers are taken from their `Display` text, which is a JSON number lexeme.
    ///
    /// Converts with an explicit stack, like [`canonicalize`], so depth is unbounded.
    fn from(json: &serde_json::Value) -> Self {
        use serde_json::Value as Json;

        /// A container whose children are being converted.
        enum Partial<'a> {
            Array(std::slice::Iter<'a, Json>, Vec<Value>),
            /// The name of the member whose value is being converted is the `String`.
            Object(serde_json::map::Iter<'a>, Vec<(String, Value)>, String),
        }

        let mut stack: Vec<Partial<'_>> = Vec::new();
        let mut next = json;
        loop {
            // Descend: a scalar is finished at once, a container is opened.
            let mut finished = match next {
                Json::Null => Some(Value::Null),
                Json::Bool(b) => Some(Value::Bool(*b)),
                Json::Number(n) => Some(Value::Number(n.to_string())),
                Json::String(s) => Some(Value::String(s.clone())),
                Json::Array(items) => {
                    stack.push(Partial::Array(items.iter(), Vec::with_capacity(items.len())));
                    None
                }
                Json::Object(map) => {
                    stack.push(Partial::Object(map.iter(), Vec::with_capacity(map.len()), String::new()));
                    None
                }
            };

            // Ascend: hand each finished value to its parent until some container has
            // another child to visit, or the root is finished.
            loop {
                let Some(top) = stack.last_mut() else {
                    return finished.expect("the root is finished when the stack is empty");
                };
                let child = match top {
                    Partial::Array(items, values) => {
                        values.extend(finished.take());
                        items.next()
                    }
                    Partial::Object(members, values, name) => {
                        if let Some(value) = finished.take() {
                            values.push((std::mem::take(name), value));
                        }
                        members.next().map(|(key, child)| {
                            *name = key.clone();
                            child
                        })
                    }
                };
                if let Some(child) = child {
                    next = child;
                    break;
                }
                finished = Some(match stack.pop() {
                    Some(Partial::Array(_, values)) => Value::Array(values),
                    Some(Partial::Object(_, values, _)) => Value::Object(values),
                    None => unreachable!("the stack had a top above"),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(lexeme: &str) -> Value {
        Value::Number(lexeme.to_owned())
    }

    fn string(s: &str) -> Value {
        Value::String(s.to_owned())
    }

    fn object(members: &[(&str, Value)]) -> Value {
        Value::Object(members.iter().map(|(name, value)| ((*name).to_owned(), value.clone())).collect())
    }

    fn canon(value: &Value) -> String {
        canonicalize(value).unwrap()
    }

    /// Takes a nested value apart level by level: the derived `Drop` would recurse.
    fn dismantle(mut value: Value) {
        loop {
            value = match value {
                Value::Array(mut items) => match items.pop() {
                    Some(inner) => inner,
                    None => return,
                },
                Value::Object(mut members) => match members.pop() {
                    Some((_, inner)) => inner,
                    None => return,
                },
                _ => return,
            };
        }
    }

    #[test]
    fn names_sort_by_utf16_code_units() {
        // By code point (and UTF-8 bytes) U+1F600 sorts last; in UTF-16 it is the
        // surrogate pair D83D DE00, which sorts before U+FB01.
        let value = object(&[("\u{FB01}", num("3")), ("\u{1F600}", num("2")), ("\u{e9}", num("1"))]);
        assert_eq!(canon(&value), "{\"\u{e9}\":1,\"\u{1F600}\":2,\"\u{FB01}\":3}");
        assert!("\u{1F600}".as_bytes() > "\u{FB01}".as_bytes());
    }

    #[test]
    fn names_sort_by_code_units_not_locale() {
        let value = object(&[
            ("b", Value::Null),
            ("a", Value::Null),
            ("B", Value::Null),
            ("", Value::Null),
            ("aa", Value::Null),
        ]);
        assert_eq!(canon(&value), r#"{"":null,"B":null,"a":null,"aa":null,"b":null}"#);
    }

    #[test]
    fn duplicate_names_keep_their_order() {
        let value = object(&[("k", num("2")), ("a", Value::Null), ("k", num("1"))]);
        assert_eq!(canon(&value), r#"{"a":null,"k":2,"k":1}"#);
    }

    #[test]
    fn strings_escape_like_json_stringify() {
        let value = string("\"\\/\u{8}\u{c}\n\r\t\u{0}\u{1f}\u{7f}\u{2028}é😀");
        assert_eq!(canon(&value), "\"\\\"\\\\/\\b\\f\\n\\r\\t\\u0000\\u001f\u{7f}\u{2028}é😀\"");
        assert_eq!(canon(&string("")), "\"\"");
        assert_eq!(canon(&string("\u{1b}x")), "\"\\u001bx\"");
    }

    #[test]
    fn scalars_and_containers() {
        let value = Value::Array(vec![
            Value::Null,
            Value::Bool(true),
            Value::Bool(false),
            num("-0"),
            num("1.0"),
            num("1E2"),
            Value::Array(vec![]),
            Value::Object(vec![]),
            object(&[("x", Value::Array(vec![num("1"), object(&[])]))]),
        ]);
        assert_eq!(canon(&value), r#"[null,true,false,0,1,100,[],{},{"x":[1,{}]}]"#);
    }

    #[test]
    fn big_integers_keep_their_digits() {
        let value = Value::Array(vec![num("9007199254740993"), num("-123456789012345678901234567890")]);
        assert_eq!(canon(&value), "[9007199254740993,-123456789012345678901234567890]");
    }

    #[test]
    fn bad_numbers_are_errors() {
        let value = object(&[("a", Value::Array(vec![num("1e400")]))]);
        let error = canonicalize(&value).unwrap_err();
        assert!(error.to_string().contains("1e400"), "{error}");
        assert!(canonical_hash(&value).is_err());
        assert!(canonicalize(&num("NaN")).is_err());
        assert!(canonicalize(&num("Infinity")).is_err());
        assert!(canonicalize(&num("1.")).is_err());
    }

    #[test]
    fn canonical_hash_is_the_identity_of_the_canonical_text() {
        let value = object(&[("b", num("1.0")), ("a", string("x"))]);
        assert_eq!(canonical_hash(&value).unwrap(), sha256_identity(br#"{"a":"x","b":1}"#));
        // Key order and number spelling do not change the hash.
        let same = object(&[("a", string("x")), ("b", num("1"))]);
        assert_eq!(canonical_hash(&value), canonical_hash(&same));
        assert_eq!(canonical_hash(&string("")).unwrap(), sha256_identity(b"\"\""));
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        const DEPTH: usize = 200_000;
        let mut value = Value::Null;
        for _ in 0..DEPTH {
            value = Value::Array(vec![value]);
        }
        let text = canon(&value);
        // Dismantle before asserting: unwinding would drop the value recursively.
        dismantle(value);
        assert!(text == format!("{}null{}", "[".repeat(DEPTH), "]".repeat(DEPTH)));

        let mut value = num("1.0");
        for _ in 0..DEPTH {
            value = Value::Object(vec![("k".to_owned(), value)]);
        }
        let text = canon(&value);
        dismantle(value);
        assert!(text == format!("{}1{}", r#"{"k":"#.repeat(DEPTH), "}".repeat(DEPTH)));
    }

    #[test]
    fn from_serde_json() {
        let json = serde_json::json!({
            "z": [1, -2, 1.5, 18446744073709551615u64, null, true, "s\n"],
            "a": {"nested": {}},
        });
        let value = Value::from(&json);
        assert_eq!(
            value,
            Value::Object(vec![
                (
                    "z".to_owned(),
                    Value::Array(vec![
                        num("1"),
                        num("-2"),
                        num("1.5"),
                        num("18446744073709551615"),
                        Value::Null,
                        Value::Bool(true),
                        string("s\n"),
                    ])
                ),
                ("a".to_owned(), object(&[("nested", Value::Object(vec![]))])),
            ])
        );
        assert_eq!(canon(&value), r#"{"a":{"nested":{}},"z":[1,-2,1.5,18446744073709551615,null,true,"s\n"]}"#);
        // Whatever spelling serde_json's Display picks, the canonical form is ES6.
        assert_eq!(canon(&Value::from(&serde_json::json!(1e30))), "1e+30");
        assert_eq!(canon(&Value::from(&serde_json::json!(-0.0))), "0");
        assert_eq!(Value::from(&serde_json::json!(null)), Value::Null);
        assert_eq!(Value::from(&serde_json::json!([])), Value::Array(vec![]));
    }

    #[test]
    fn from_deep_serde_json() {
        const DEPTH: usize = 200_000;
        let mut json = serde_json::Value::Null;
        for _ in 0..DEPTH {
            json = serde_json::Value::Array(vec![json]);
        }
        let value = Value::from(&json);
        // serde_json's derived Drop recurses too: unwrap it level by level.
        while let serde_json::Value::Array(mut items) = json {
            json = items.pop().unwrap_or_default();
        }
        let text = canon(&value);
        dismantle(value);
        assert!(text == format!("{}null{}", "[".repeat(DEPTH), "]".repeat(DEPTH)));
    }

    #[test]
    fn error_displays_its_message() {
        let error = CanonicalError::new("boom");
        assert_eq!(error.to_string(), "boom");
        let _: &dyn std::error::Error = &error;
    }

    #[test]
    fn canonicalizer_name() {
        assert_eq!(CANONICALIZER, "little-workflow-canonical-json@alpha");
    }
}
