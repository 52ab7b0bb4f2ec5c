//! The strict JSON parser: spans, syntax errors, duplicate keys, unsafe integers, depth.

use std::time::{Duration, Instant};

use little_diagnostics::{Code, Severity};
use little_frontend::json::{
    JsonTree, JsonValue, MAX_DEPTH, NodeIdx, decode_utf8, parse, path_push_index, path_push_key,
};

/// Parses text that must be JSON without findings.
fn ok(text: &str) -> JsonTree {
    let parsed = parse(text);
    assert!(parsed.diagnostics.is_empty(), "unexpected diagnostics for {text:?}: {:#?}", parsed.diagnostics);
    parsed.tree.expect("a tree")
}

/// Parses text that must not be JSON: exactly one `parse.invalid_json`, no tree.
fn err(text: &str) -> (String, std::ops::Range<u32>) {
    let parsed = parse(text);
    assert!(parsed.tree.is_none(), "expected no tree for {text:?}");
    assert_eq!(parsed.diagnostics.len(), 1, "expected one diagnostic for {text:?}: {:#?}", parsed.diagnostics);
    let d = &parsed.diagnostics[0];
    assert_eq!(d.code, Code::ParseInvalidJson);
    (d.message.clone(), d.span.clone().expect("a span"))
}

fn member_value(tree: &JsonTree, object: NodeIdx, key: &str) -> NodeIdx {
    tree.get(object, key).unwrap_or_else(|| panic!("no `{key}`")).value
}

#[test]
fn spans_of_keys_and_values_are_byte_offsets() {
    let text = r#"{"a": [1, "é", true], "ü": null}"#;
    let tree = ok(text);
    let root = tree.root();
    assert_eq!(root, 0);
    assert_eq!(tree.node(root).span, 0..34);
    assert_eq!(tree.type_name(root), "object");

    let a = tree.get(root, "a").unwrap();
    assert_eq!(a.key_span, 1..4);
    assert_eq!(tree.node(a.value).span, 6..21);
    let items = tree.node(a.value).value.as_array().unwrap().to_vec();
    assert_eq!(items.len(), 3);
    assert_eq!(tree.node(items[0]).span, 7..8);
    assert_eq!(tree.node(items[0]).value.as_number(), Some("1"));
    // "é" is two bytes: the string spans quote, two bytes, quote.
    assert_eq!(tree.node(items[1]).span, 10..14);
    assert_eq!(tree.node(items[1]).value.as_str(), Some("é"));
    assert_eq!(tree.node(items[2]).span, 16..20);
    assert_eq!(tree.node(items[2]).value.as_bool(), Some(true));

    let u = tree.get(root, "ü").unwrap();
    assert_eq!(u.key_span, 23..27);
    assert_eq!(tree.node(u.value).span, 29..33);
    assert!(tree.node(u.value).value.is_null());
    assert_eq!(&text[29..33], "null");

    assert!(tree.get(root, "missing").is_none());
    assert!(tree.get(a.value, "a").is_none(), "get on an array is None");
    assert_eq!(tree.type_name(a.value), "array");
    assert_eq!(tree.type_name(items[0]), "number");
    assert_eq!(tree.type_name(items[1]), "string");
    assert_eq!(tree.type_name(items[2]), "boolean");
    assert_eq!(tree.type_name(u.value), "null");
    assert_eq!(tree.len(), 6);
    assert!(!tree.is_empty());
}

#[test]
fn scalars_at_the_root_and_whitespace() {
    let tree = ok(" \t\r\n-12.5e+3 \n");
    assert_eq!(tree.node(0).value, JsonValue::Number("-12.5e+3"));
    assert_eq!(tree.node(0).span, 4..12);

    for (text, value) in [
        ("true", JsonValue::Bool(true)),
        ("false", JsonValue::Bool(false)),
        ("null", JsonValue::Null),
        ("0", JsonValue::Number("0")),
        ("-0", JsonValue::Number("-0")),
        ("1E400", JsonValue::Number("1E400")),
        ("[]", JsonValue::Array(&[])),
        (r#""""#, JsonValue::String("")),
    ] {
        assert_eq!(ok(text).node(0).value, value, "{text}");
    }
    assert!(ok("{}").node(0).value.as_object().is_some_and(|members| members.is_empty()));
    let tree = ok("[ ]");
    assert_eq!(tree.node(0).span, 0..3);
    let tree = ok("{ \n}");
    assert_eq!(tree.node(0).span, 0..4);
}

#[test]
fn string_escapes_are_decoded() {
    let tree = ok(r#""a\"b\\c\/d\be\ff\ng\rh\ti\u0041\u00e9\ud83d\ude00 ü""#);
    assert_eq!(tree.node(0).value.as_str(), Some("a\"b\\c/d\u{8}e\u{c}f\ng\rh\tiAé😀 ü"));
    // DEL and non-ASCII may appear raw.
    let tree = ok("\"\u{7f}€\"");
    assert_eq!(tree.node(0).value.as_str(), Some("\u{7f}€"));
    // Escaped keys are decoded too, and their spans cover the escapes.
    let tree = ok(r#"{"a\u0062": 1}"#);
    let member = tree.get(0, "ab").unwrap();
    assert_eq!(member.key_span, 1..10);
}

#[test]
fn bom_is_skipped_and_spans_stay_offsets_into_the_text() {
    let text = "\u{FEFF}{\"a\": 1}";
    let tree = ok(text);
    assert_eq!(tree.node(0).span, 3..11);
    let a = tree.get(0, "a").unwrap();
    assert_eq!(a.key_span, 4..7);
    assert_eq!(tree.node(a.value).span, 9..10);
    // Only a leading BOM is skipped.
    assert_eq!(err("[\u{FEFF}1]"), ("expected a JSON value, found U+FEFF".to_owned(), 1..4));
    assert_eq!(err("\u{FEFF}"), ("expected a JSON value, found end of file".to_owned(), 3..3));
}

#[test]
fn syntax_errors_name_what_was_expected_and_found() {
    let cases: &[(&str, &str, std::ops::Range<u32>)] = &[
        ("", "expected a JSON value, found end of file", 0..0),
        (" \n\t ", "expected a JSON value, found end of file", 4..4),
        (r#"{"a": 1]"#, "expected `,` or `}` after an object member, found `]`", 7..8),
        ("[1 2]", "expected `,` or `]` after an array element, found `2`", 3..4),
        ("[1 é]", "expected `,` or `]` after an array element, found `é`", 3..5),
        ("[1, 2", "unexpected end of file: expected `,` or `]` after an array element", 5..5),
        ("[1,", "unexpected end of file: expected a JSON value", 3..3),
        (r#"{"a":"#, "unexpected end of file: expected a JSON value", 5..5),
        ("[", "unexpected end of file: expected a JSON value", 1..1),
        ("{", "unexpected end of file: expected a string key or `}`", 1..1),
        (r#"{"a" 1}"#, "expected `:` after an object key, found `1`", 5..6),
        (
            r#"{"a":1,2}"#,
            "expected a string key after `,`, found `2`: object keys must be strings in double quotes",
            7..8,
        ),
        ("[1] x", "trailing characters after the JSON value", 4..5),
        (r#"{"a":1}}"#, "trailing characters after the JSON value", 7..8),
        ("]", "expected a JSON value, found `]`", 0..1),
        ("[,1]", "expected a JSON value, found `,`", 1..2),
        ("01", "leading zeros are not allowed in numbers", 0..1),
        ("[-007]", "leading zeros are not allowed in numbers", 2..3),
        ("-", "unexpected end of file: expected a digit after `-`", 1..1),
        ("-a", "expected a digit after `-`, found `a`", 1..2),
        ("1.", "unexpected end of file: expected a digit after the decimal point", 2..2),
        ("1.e5", "expected a digit after the decimal point, found `e`", 2..3),
        ("1e", "unexpected end of file: expected a digit in the exponent", 2..2),
        ("[1e+x]", "expected a digit in the exponent, found `x`", 4..5),
        ("+1", "expected a JSON value, found `+`: numbers must not start with `+`", 0..1),
        (".5", "expected a JSON value, found `.`: numbers must start with a digit", 0..1),
        ("NaN", "`NaN` is not JSON: numbers must be finite digits", 0..3),
        ("[Infinity]", "`Infinity` is not JSON: numbers must be finite digits", 1..9),
        ("-Infinity", "`-Infinity` is not JSON: numbers must be finite digits", 0..9),
        ("True", "`True` is not JSON: the only literals are `true`, `false` and `null`", 0..4),
        ("tru", "expected a JSON value, found `tru`", 0..3),
        ("nulls", "expected a JSON value, found `nulls`", 0..5),
        ("// c\n1", "comments are not allowed in JSON", 0..2),
        ("[1 /* c */]", "comments are not allowed in JSON", 3..5),
        ("1 // c", "comments are not allowed in JSON", 2..4),
        ("[1,]", "trailing comma before `]`: JSON does not allow trailing commas", 2..3),
        (r#"{"a":1 , }"#, "trailing comma before `}`: JSON does not allow trailing commas", 7..8),
        ("{'a':1}", "single quotes are not allowed: JSON strings use double quotes `\"`", 1..2),
        ("['a']", "single quotes are not allowed: JSON strings use double quotes `\"`", 1..2),
        ("{a:1}", "expected a string key or `}`, found `a`: object keys must be strings in double quotes", 1..2),
        (
            r#""a\xb""#,
            "invalid escape `\\x` in string: JSON escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX",
            2..4,
        ),
        (
            r#""\é""#,
            "invalid escape `\\é` in string: JSON escapes are \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX",
            1..4,
        ),
        (r#""\u12G4""#, "invalid escape `\\u12` in string: `\\u` must be followed by four hex digits, found `G`", 1..6),
        ("\"a\nb\"", "control character U+000A in string: escape it as `\\n`", 2..3),
        ("\"\t\"", "control character U+0009 in string: escape it as `\\t`", 1..2),
        ("\"\u{1}\"", "control character U+0001 in string: escape it as `\\u0001`", 1..2),
        (r#""\ud800""#, "lone surrogate `\\ud800` in string", 1..7),
        (r#""x\uDC00""#, "lone surrogate `\\uDC00` in string", 2..8),
        (r#""\ud800\u0041""#, "lone surrogate `\\ud800` in string", 1..7),
        (r#""\ud800\ud800""#, "lone surrogate `\\ud800` in string", 1..7),
        (r#""abc"#, "unexpected end of file: expected `\"` to close the string that starts at byte 0", 4..4),
        (r#"{"k": "abc"#, "unexpected end of file: expected `\"` to close the string that starts at byte 6", 10..10),
        (r#""abc\"#, "unexpected end of file: expected an escape character after `\\`", 5..5),
        ("\u{a0}1", "expected a JSON value, found U+00A0", 0..2),
    ];
    for (text, message, span) in cases {
        let (got_message, got_span) = err(text);
        assert_eq!((got_message.as_str(), got_span), (*message, span.clone()), "for {text:?}");
    }
}

#[test]
fn a_syntax_error_drops_earlier_findings() {
    let (message, span) = err(r#"{"a":1,"a":9007199254740993,"#);
    assert_eq!(message, "unexpected end of file: expected a string key after `,`");
    assert_eq!(span, 28..28);
}

#[test]
fn depth_limit_is_exact() {
    let deepest = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    let tree = ok(&deepest);
    assert_eq!(tree.len(), MAX_DEPTH);
    // Conversions of the deepest tree work (and are iterative).
    let _ = tree.to_serde(tree.root());
    let _ = tree.to_hashing_value(tree.root());

    let too_deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
    assert_eq!(err(&too_deep), ("nesting deeper than 512 levels".to_owned(), 512..513));
    // An empty container counts too.
    let too_deep = format!("{}{{}}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    assert_eq!(err(&too_deep), ("nesting deeper than 512 levels".to_owned(), 512..513));
}

#[test]
fn deep_arrays_fail_fast_without_overflowing_the_stack() {
    let n = 200_000;
    let text = format!("{}{}", "[".repeat(n), "]".repeat(n));
    let started = Instant::now();
    let (message, span) = err(&text);
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(message, "nesting deeper than 512 levels");
    assert_eq!(span, 512..513);
    assert_eq!(&text[512..513], "[");

    // Unterminated, too.
    let text = "[".repeat(n);
    assert_eq!(err(&text).1, 512..513);
}

#[test]
fn deep_objects_fail_fast_without_overflowing_the_stack() {
    let n = 200_000;
    let text = format!("{}1{}", r#"{"a":"#.repeat(n), "}".repeat(n));
    let started = Instant::now();
    let (message, span) = err(&text);
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(message, "nesting deeper than 512 levels");
    let at = 512 * 5;
    assert_eq!(span, at..at + 1);
    assert_eq!(&text[at as usize..at as usize + 1], "{");
}

#[test]
fn duplicate_keys_keep_the_first_and_point_at_it() {
    let text = r#"{"nodes": [{"id": "a", "kind": 1, "id": "b"}]}"#;
    let parsed = parse(text);
    let tree = parsed.tree.expect("duplicates still give a tree");
    assert_eq!(parsed.diagnostics.len(), 1);
    let d = &parsed.diagnostics[0];
    assert_eq!(d.code, Code::ParseDuplicateKey);
    assert_eq!(d.severity(), Severity::Error);
    assert_eq!(d.message, "key `id` appears twice in this object");
    let second = text.rfind(r#""id""#).unwrap() as u32;
    let first = text.find(r#""id""#).unwrap() as u32;
    assert_eq!(d.span, Some(second..second + 4));
    assert_eq!(d.path.as_deref(), Some("$.nodes[0].id"));
    assert_eq!(d.related.len(), 1);
    assert_eq!(d.related[0].message, "first occurrence");
    assert_eq!(d.related[0].span, Some(first..first + 4));
    assert_eq!(d.related[0].path, "$.nodes[0].id");

    // The tree keeps the first occurrence only.
    let nodes = member_value(&tree, 0, "nodes");
    let node = tree.node(nodes).value.as_array().unwrap()[0];
    let members = tree.node(node).value.as_object().unwrap();
    let keys: Vec<&str> = members.iter().map(|m| m.key).collect();
    assert_eq!(keys, ["id", "kind"]);
    let id = member_value(&tree, node, "id");
    assert_eq!(tree.node(id).value.as_str(), Some("a"));
    assert_eq!(tree.to_serde(0), serde_json::json!({"nodes": [{"id": "a", "kind": 1}]}));
}

#[test]
fn duplicate_keys_three_times_and_in_large_objects() {
    let parsed = parse(r#"{"a b": 1, "a b": 2, "a b": 3}"#);
    let messages: Vec<&str> = parsed.diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        messages,
        ["key `a b` appears twice in this object", "key `a b` appears more than twice in this object"]
    );
    for d in &parsed.diagnostics {
        assert_eq!(d.path.as_deref(), Some("$['a b']"));
        assert_eq!(d.related[0].span, Some(1..6));
    }
    assert_eq!(parsed.diagnostics[0].span, Some(11..16));
    assert_eq!(parsed.diagnostics[1].span, Some(21..26));
    let tree = parsed.tree.unwrap();
    assert_eq!(tree.to_serde(0), serde_json::json!({"a b": 1}));

    // More than a handful of members: found all the same, reported in source order.
    let mut text = String::from("[0, {");
    for i in 0..100 {
        text.push_str(&format!("\"k{}\": {i}, ", i % 40));
    }
    text.push_str("\"last\": true}]");
    let parsed = parse(&text);
    assert_eq!(parsed.diagnostics.len(), 60);
    let starts: Vec<u32> = parsed.diagnostics.iter().map(|d| d.span.as_ref().unwrap().start).collect();
    assert!(starts.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(parsed.diagnostics[0].path.as_deref(), Some("$[1].k0"));
    assert_eq!(parsed.diagnostics[0].message, "key `k0` appears twice in this object");
    assert_eq!(parsed.diagnostics[40].message, "key `k0` appears more than twice in this object");
    let first_k0 = text.find("\"k0\"").unwrap() as u32;
    assert!(
        parsed
            .diagnostics
            .iter()
            .filter(|d| d.message.contains("`k0`"))
            .all(|d| d.related[0].span == Some(first_k0..first_k0 + 4))
    );
    let tree = parsed.tree.unwrap();
    let object = tree.node(0).value.as_array().unwrap()[1];
    let members = tree.node(object).value.as_object().unwrap();
    assert_eq!(members.len(), 41);
    let k7 = member_value(&tree, object, "k7");
    assert_eq!(tree.node(k7).value.as_number(), Some("7"));
}

#[test]
fn unsafe_integers_warn_and_keep_their_lexeme() {
    let text = r#"{"a": [9007199254740992, 9007199254740993, -9007199254740993, 12345678901234567890, 9007199254740993.0, 1e300, -9007199254740992]}"#;
    let parsed = parse(text);
    let tree = parsed.tree.expect("a tree");
    let messages: Vec<(&str, Option<&str>, u32)> = parsed
        .diagnostics
        .iter()
        .map(|d| {
            assert_eq!(d.code, Code::ParseUnsafeInteger);
            assert_eq!(d.severity(), Severity::Warning);
            (d.message.as_str(), d.path.as_deref(), d.span.as_ref().unwrap().start)
        })
        .collect();
    let at = |lexeme: &str| text.find(lexeme).unwrap() as u32;
    assert_eq!(
        messages,
        [
            (
                "integer 9007199254740993 is outside ±2^53: readers that use doubles will round it",
                Some("$.a[1]"),
                at(" 9007199254740993,") + 1
            ),
            (
                "integer -9007199254740993 is outside ±2^53: readers that use doubles will round it",
                Some("$.a[2]"),
                at("-9007199254740993")
            ),
            (
                "integer 12345678901234567890 is outside ±2^53: readers that use doubles will round it",
                Some("$.a[3]"),
                at("12345678901234567890")
            ),
        ]
    );
    let span = parsed.diagnostics[2].span.clone().unwrap();
    assert_eq!(&text[span.start as usize..span.end as usize], "12345678901234567890");
    let a = member_value(&tree, 0, "a");
    let third = tree.node(a).value.as_array().unwrap()[3];
    assert_eq!(tree.node(third).value.as_number(), Some("12345678901234567890"));

    // At the root, and a very long integer is shortened in the message.
    let parsed = parse(&"9".repeat(100));
    assert_eq!(parsed.diagnostics.len(), 1);
    assert_eq!(parsed.diagnostics[0].path.as_deref(), Some("$"));
    assert_eq!(
        parsed.diagnostics[0].message,
        format!("integer {}… (100 digits) is outside ±2^53: readers that use doubles will round it", "9".repeat(24))
    );
    assert_eq!(parsed.diagnostics[0].span, Some(0..100));
}

#[test]
fn five_megabyte_strings_parse() {
    let body = "x".repeat(5 * 1024 * 1024);
    let text = format!(r#"{{"blob": "{body}"}}"#);
    let tree = ok(&text);
    let blob = tree.get(0, "blob").unwrap();
    assert_eq!(tree.node(blob.value).value.as_str(), Some(body.as_str()));
    assert_eq!(tree.node(blob.value).span, 9..9 + body.len() as u32 + 2);

    let escaped = "ab\\n€".repeat(1024 * 1024);
    let text = format!(r#"["{escaped}"]"#);
    let tree = ok(&text);
    let item = tree.node(0).value.as_array().unwrap()[0];
    assert_eq!(tree.node(item).value.as_str(), Some("ab\n€".repeat(1024 * 1024).as_str()));
}

#[test]
fn decode_utf8_reports_the_first_bad_byte() {
    assert_eq!(decode_utf8("{\"a\": \"é\"}".as_bytes()).unwrap(), "{\"a\": \"é\"}");

    let d = decode_utf8(b"{\"a\": \"\xff\"}").unwrap_err();
    assert_eq!(d.code, Code::ParseInvalidJson);
    assert!(d.message.contains("invalid UTF-8"), "{}", d.message);
    assert_eq!(d.span, Some(7..8));

    // A valid lead byte followed by a bad continuation: the lead byte is the fault.
    let d = decode_utf8(b"[\"ab\xc3(\"]").unwrap_err();
    assert!(d.message.contains("invalid UTF-8"));
    assert_eq!(d.span, Some(4..5));

    // A sequence cut off by the end of the file.
    let d = decode_utf8(b"\"\xe2\x82").unwrap_err();
    assert!(d.message.contains("invalid UTF-8"));
    assert_eq!(d.span, Some(1..2));
}

const SAMPLE: &str = r#"{
  "format": "little-draft/v1",
  "nodes": [
    {"id": "trigger", "config": {"cron": "0 * * * *", "tz": "Europe/Zürich"}},
    {"id": "n\u00e9", "weights": [0, -1, 2.50, 1e3, -0.0, 18446744073709551615, 18446744073709551616, -0, -9223372036854775808]}
  ],
  "empty": {"a": [], "o": {}},
  "flags": [true, false, null],
  "escaped": "line\nbreak \"quoted\" \ud83d\ude00"
}"#;

/// The sample's tree; its three integers beyond ±2^53 warn.
fn sample() -> JsonTree {
    let parsed = parse(SAMPLE);
    let codes: Vec<Code> = parsed.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, [Code::ParseUnsafeInteger; 3]);
    parsed.tree.expect("a tree")
}

#[test]
fn to_serde_matches_serde_json() {
    let tree = sample();
    let ours = tree.to_serde(tree.root());
    let theirs: serde_json::Value = serde_json::from_str(SAMPLE).unwrap();
    assert_eq!(ours, theirs);
    // Member order is the document's.
    assert_eq!(serde_json::to_string(&ours).unwrap(), serde_json::to_string(&theirs).unwrap());
    // Integers stay integers; a subtree converts on its own.
    let nodes = member_value(&tree, 0, "nodes");
    let second = tree.node(nodes).value.as_array().unwrap()[1];
    let weights = tree.to_serde(member_value(&tree, second, "weights"));
    assert!(weights[0].is_u64() || weights[0].is_i64());
    assert_eq!(weights[1].as_i64(), Some(-1));
    assert_eq!(weights[2].as_f64(), Some(2.5));
    assert_eq!(weights[5].as_u64(), Some(u64::MAX));
    assert_eq!(weights[6].as_f64(), Some(18446744073709551616.0));
    assert!(weights[7].as_f64().is_some_and(|z| z == 0.0 && z.is_sign_negative()));
    assert_eq!(weights[8].as_i64(), Some(i64::MIN));
    // A number too large for f64 has no serde_json number: it keeps its lexeme.
    let tree = ok("[1e400, -1E+999, 1e-400]");
    assert_eq!(tree.to_serde(0), serde_json::json!(["1e400", "-1E+999", 0.0]));
}

#[test]
fn to_hashing_value_keeps_lexemes_and_order() {
    use little_hashing::Value;
    let tree = ok(r#"{"b": [1.50, -0, 1E30, "s\u0041", null, true], "a": {"z": {}, "y": []}}"#);
    let expected = Value::Object(vec![
        (
            "b".to_owned(),
            Value::Array(vec![
                Value::Number("1.50".to_owned()),
                Value::Number("-0".to_owned()),
                Value::Number("1E30".to_owned()),
                Value::String("sA".to_owned()),
                Value::Null,
                Value::Bool(true),
            ]),
        ),
        (
            "a".to_owned(),
            Value::Object(vec![("z".to_owned(), Value::Object(vec![])), ("y".to_owned(), Value::Array(vec![]))]),
        ),
    ]);
    assert_eq!(tree.to_hashing_value(tree.root()), expected);
    let a = member_value(&tree, 0, "a");
    assert_eq!(
        tree.to_hashing_value(a),
        Value::Object(vec![("z".to_owned(), Value::Object(vec![])), ("y".to_owned(), Value::Array(vec![])),])
    );

    // The sample round-trips: same structure as serde_json's reading, exact lexemes.
    let tree = sample();
    let hashed = tree.to_hashing_value(0);
    let Value::Object(members) = &hashed else { panic!("an object") };
    let keys: Vec<&str> = members.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["format", "nodes", "empty", "flags", "escaped"]);
    assert_eq!(members[4].1, Value::String("line\nbreak \"quoted\" 😀".to_owned()));
}

#[test]
fn paths_escape_keys_that_are_not_identifiers() {
    let mut path = String::from("$");
    path_push_key(&mut path, "nodes");
    path_push_index(&mut path, 1);
    path_push_key(&mut path, "_map_2");
    assert_eq!(path, "$.nodes[1]._map_2");

    for (key, expected) in [
        ("a b", "$['a b']"),
        ("it's", r"$['it\'s']"),
        (r"back\slash", r"$['back\\slash']"),
        ("1st", "$['1st']"),
        ("", "$['']"),
        ("é", "$['é']"),
        ("a-b", "$['a-b']"),
        ("A_z9", "$.A_z9"),
    ] {
        let mut path = String::from("$");
        path_push_key(&mut path, key);
        assert_eq!(path, expected, "for {key:?}");
    }

    // Diagnostics use the same escaping.
    let parsed = parse(r#"{"it's": [{"x": 1, "x": 2}]}"#);
    assert_eq!(parsed.diagnostics[0].path.as_deref(), Some(r"$['it\'s'][0].x"));
}

#[test]
fn json_value_helpers() {
    let tree = ok(r#"{"s": "x", "b": false, "n": 3, "a": [1], "o": {"k": null}}"#);
    let v = |k| tree.node(member_value(&tree, 0, k)).value;
    assert_eq!(v("s").as_str(), Some("x"));
    assert!(v("s").is_string() && !v("s").is_number());
    assert_eq!(v("b").as_bool(), Some(false));
    assert!(v("b").is_bool());
    assert_eq!(v("n").as_number(), Some("3"));
    assert!(v("n").is_number());
    assert_eq!(v("a").as_array().map(<[_]>::len), Some(1));
    assert!(v("a").is_array());
    assert_eq!(v("o").as_object().and_then(|m| m.iter().next()).map(|m| m.key), Some("k"));
    assert!(v("o").is_object());
    assert_eq!(v("o").type_name(), "object");
    assert!(v("s").as_array().is_none() && v("a").as_object().is_none());
}
