//! The public RFC 8785 test vectors (copied into `tests/jcs/`, see its NOTICE.md).

use std::fs;
use std::path::{Path, PathBuf};

use little_hashing::{Value, canonical_number, canonicalize, format_es6_number};

fn vectors_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/jcs")
}

#[test]
fn every_input_gives_its_output_byte_for_byte() {
    let input_dir = vectors_dir().join("input");
    let mut names: Vec<_> = fs::read_dir(&input_dir)
        .expect("tests/jcs/input is readable")
        .map(|entry| entry.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names.len(), 6, "the six RFC 8785 vectors: {names:?}");

    for name in names {
        let input = fs::read_to_string(input_dir.join(&name)).unwrap();
        let expected = fs::read(vectors_dir().join("output").join(&name)).unwrap();
        let value = parse_json(&input).unwrap_or_else(|e| panic!("{name:?}: {e}"));
        let canonical = canonicalize(&value).unwrap_or_else(|e| panic!("{name:?}: {e}"));
        assert!(
            canonical.as_bytes() == expected,
            "{name:?}:\n got: {canonical}\nwant: {}",
            String::from_utf8_lossy(&expected)
        );
    }
}

#[test]
fn every_es6_number_line_formats_exactly() {
    let text = fs::read_to_string(vectors_dir().join("es6-numbers-100000.txt")).unwrap();
    let mut count = 0;
    for (index, line) in text.lines().enumerate() {
        count += 1;
        let (hex, expected) = line.split_once(',').unwrap_or_else(|| panic!("line {}: no comma: {line:?}", index + 1));
        // The published file writes the bit pattern without leading zeros ("0", "1").
        let bits = u64::from_str_radix(hex, 16).unwrap_or_else(|e| panic!("line {}: bad hex {hex:?}: {e}", index + 1));
        let x = f64::from_bits(bits);
        assert_eq!(format_es6_number(x).as_deref(), Some(expected), "line {}: {hex}", index + 1);
        // The ES6 text is itself a lexeme that canonicalizes to itself (integers beyond
        // 2^53 among them are written with their exact digits already).
        assert_eq!(canonical_number(expected).as_deref(), Ok(expected), "line {}: {hex}", index + 1);
    }
    assert_eq!(count, 100_000);
}

/// A small JSON parser for the test inputs that keeps number lexemes exact (serde_json
/// without `arbitrary_precision` would round them). Recursive: the inputs are tiny.
fn parse_json(text: &str) -> Result<Value, String> {
    let mut parser = Parser { bytes: text.as_bytes(), pos: 0 };
    let value = parser.value()?;
    parser.skip_whitespace();
    if parser.pos != parser.bytes.len() {
        return Err(parser.error("trailing characters"));
    }
    Ok(value)
}

struct Parser<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, what: &str) -> String {
        format!("{what} at byte {}", self.pos)
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), String> {
        self.skip_whitespace();
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(&format!("expected `{}`", char::from(byte))))
        }
    }

    fn literal(&mut self, word: &str, value: Value) -> Result<Value, String> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.error("unknown literal"))
        }
    }

    fn value(&mut self) -> Result<Value, String> {
        self.skip_whitespace();
        match self.peek() {
            Some(b'n') => self.literal("null", Value::Null),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'"') => self.string().map(Value::String),
            Some(b'[') => self.array(),
            Some(b'{') => self.object(),
            Some(b'-' | b'0'..=b'9') => Ok(self.number()),
            _ => Err(self.error("expected a value")),
        }
    }

    /// Takes the number's characters; `canonicalize` validates the lexeme itself.
    fn number(&mut self) -> Value {
        let start = self.pos;
        while matches!(self.peek(), Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')) {
            self.pos += 1;
        }
        let lexeme = std::str::from_utf8(&self.bytes[start..self.pos]).unwrap();
        Value::Number(lexeme.to_owned())
    }

    fn array(&mut self) -> Result<Value, String> {
        self.expect(b'[')?;
        let mut items = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Value::Array(items));
        }
        loop {
            items.push(self.value()?);
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.error("expected `,` or `]`")),
            }
        }
    }

    fn object(&mut self) -> Result<Value, String> {
        self.expect(b'{')?;
        let mut members = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Value::Object(members));
        }
        loop {
            self.skip_whitespace();
            let name = self.string()?;
            self.expect(b':')?;
            members.push((name, self.value()?));
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Value::Object(members));
                }
                _ => return Err(self.error("expected `,` or `}`")),
            }
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.expect(b'"')?;
        let mut out = Vec::new();
        loop {
            let Some(byte) = self.peek() else {
                return Err(self.error("unterminated string"));
            };
            self.pos += 1;
            match byte {
                b'"' => return String::from_utf8(out).map_err(|e| e.to_string()),
                b'\\' => {
                    let escape = self.peek().ok_or_else(|| self.error("bad escape"))?;
                    self.pos += 1;
                    let ch = match escape {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.unicode_escape()?,
                        _ => return Err(self.error("bad escape")),
                    };
                    out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
                }
                0x00..=0x1f => return Err(self.error("control character in string")),
                _ => out.push(byte),
            }
        }
    }

    /// The code point of `\uXXXX` (the `\u` already read), joining a surrogate pair.
    fn unicode_escape(&mut self) -> Result<char, String> {
        let first = self.hex4()?;
        let code = if (0xD800..0xDC00).contains(&first) {
            if !self.bytes[self.pos..].starts_with(b"\\u") {
                return Err(self.error("lone high surrogate"));
            }
            self.pos += 2;
            let second = self.hex4()?;
            if !(0xDC00..0xE000).contains(&second) {
                return Err(self.error("bad low surrogate"));
            }
            0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
        } else {
            first
        };
        char::from_u32(code).ok_or_else(|| self.error("lone surrogate"))
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self
            .bytes
            .get(self.pos..self.pos + 4)
            .and_then(|d| std::str::from_utf8(d).ok())
            .ok_or_else(|| self.error("short \\u escape"))?;
        let code = u32::from_str_radix(digits, 16).map_err(|_| self.error("bad \\u escape"))?;
        self.pos += 4;
        Ok(code)
    }
}

#[test]
fn the_test_parser_keeps_lexemes_and_decodes_escapes() {
    let value = parse_json(r#" {"a\ud83d\ude02\u00e9": [1.50, -0, 1E400, "\u000f"]} "#).unwrap();
    assert_eq!(
        value,
        Value::Object(vec![(
            "a\u{1F602}\u{e9}".to_owned(),
            Value::Array(vec![
                Value::Number("1.50".to_owned()),
                Value::Number("-0".to_owned()),
                Value::Number("1E400".to_owned()),
                Value::String("\u{f}".to_owned()),
            ])
        )])
    );
    assert!(parse_json("[1,]").is_err());
    assert!(parse_json(r#""\ud83d""#).is_err());
    assert!(parse_json("{} x").is_err());
}
