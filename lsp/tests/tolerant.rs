//! A draft between two keystrokes. A fault leaves the parse fault and
//! what the rest of the draft still says, and completion works inside an unclosed string.

mod common;

use common::{Client, Options, position_of, uri};
use lsp_types::Diagnostic;
use serde_json::json;

const BROKEN_WIRING: &str = include_str!("../../examples/broken-wiring.json");

/// The code and line (0-based) of each diagnostic, sorted.
fn codes_and_lines(diagnostics: &[Diagnostic]) -> Vec<(String, u32)> {
    let mut found: Vec<(String, u32)> = diagnostics
        .iter()
        .map(|d| {
            let code = match &d.code {
                Some(lsp_types::NumberOrString::String(code)) => code.clone(),
                other => format!("{other:?}"),
            };
            (code, d.range.start.line)
        })
        .collect();
    found.sort();
    found
}

/// The line (0-based) of the first occurrence of `needle`.
fn line_of(text: &str, needle: &str) -> u32 {
    text[..text.find(needle).expect("in the text")].matches('\n').count() as u32
}

/// What the intact draft says, less the diagnostics on `line` (the one a test breaks),
/// plus the parse fault there.
fn expected_with_fault_on(intact: &[Diagnostic], line: u32) -> Vec<(String, u32)> {
    let mut expected: Vec<(String, u32)> = codes_and_lines(intact).into_iter().filter(|(_, at)| *at != line).collect();
    expected.push(("parse.invalid_json".to_string(), line));
    expected.sort();
    expected
}

#[test]
fn each_fault_leaves_what_the_rest_of_the_draft_says() {
    let mut client = Client::start(Options::default());
    let draft = uri("draft.json");
    let intact = client.open(&draft, BROKEN_WIRING);
    assert!(intact.len() >= 6, "{intact:?}");
    // Each edit breaks the line it is on (element `alert`, or edge `e1`), away from every
    // element that has a diagnostic of its own.
    let alert = r##""channel": "#support" } },"##;
    let e1 = r#"{ "id": "e1", "from": { "node": "hook" }, "to": { "node": "lookup" } },"#;
    // The last number is how many lines after the edit the parser notices the fault.
    let edits: &[(&str, &str, &str, u32)] = &[
        ("an unclosed string", alert, r##""channel": "#supp"##, 0),
        ("an unclosed string with the rest of its line", alert, r##""channel": "#support } },"##, 0),
        ("a missing comma", alert, r##""channel": "#support" } }"##, 1),
        ("a trailing comma", alert, r##""channel": "#support", } },"##, 0),
        ("a missing brace", alert, r##""channel": "#support" },"##, 1),
        ("an unquoted key", e1, r#"{ "id": "e1", from: { "node": "hook" }, "to": { "node": "lookup" } },"#, 0),
        ("a stray word", e1, r#"{ "id": "e1", "from": { "node": "hook" } oops, "to": { "node": "lookup" } },"#, 0),
    ];
    for (version, (what, from, to, later)) in edits.iter().enumerate() {
        let line = line_of(BROKEN_WIRING, from);
        let broken = BROKEN_WIRING.replacen(from, to, 1);
        let found = client.replace(&draft, version as i32 + 2, &broken);
        let mut expected = expected_with_fault_on(&intact, line);
        let fault = expected.iter().position(|(code, _)| code == "parse.invalid_json").unwrap();
        expected[fault].1 += later;
        let fault_said = expected[fault].clone();
        expected.sort();
        // The fault, and nothing the intact draft did not say there (an element the
        // recovery stands for is unknown, which can also silence what depended on it:
        // broken-wiring's dangling edges could enter it).
        let found = codes_and_lines(&found);
        assert!(found.contains(&fault_said), "{what}: {found:#?}");
        assert!(found.iter().all(|said| expected.contains(said)), "{what}: {found:#?}\nexpected within {expected:#?}");
    }
    // Fixed again: exactly what the intact draft said.
    let fixed = client.replace(&draft, 100, BROKEN_WIRING);
    assert_eq!(codes_and_lines(&fixed), codes_and_lines(&intact));
    client.shutdown();
}

#[test]
fn completion_works_inside_an_unclosed_string() {
    let mut client = Client::start(Options::default());
    let draft = uri("draft.json");
    client.open(&draft, BROKEN_WIRING);
    // Typing a family: `"family": "notify.` and nothing after it yet on that line.
    let from = r##""family": "notify.chat", "config": { "connection": "chat_main", "channel": "#support" } },"##;
    let typing = BROKEN_WIRING.replacen(from, r#""family": "notify."#, 1);
    let found = client.replace(&draft, 2, &typing);
    assert!(found.iter().any(|d| d.message.contains("string")), "the parse fault: {found:#?}");
    let at = position_of(&typing, r#""family": "notify."#, r#""family": "notify."#.len(), true);
    let list = client.request("textDocument/completion", json!({ "textDocument": { "uri": draft }, "position": at }));
    let labels: Vec<&str> = list["items"].as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap()).collect();
    assert!(labels.contains(&"notify.chat") && labels.contains(&"notify.email"), "{list}");
    assert!(labels.iter().all(|l| l.starts_with("notify.")), "{labels:?}");
    client.shutdown();
}

#[test]
fn a_fault_no_repair_fits_shows_the_parse_fault_alone() {
    let mut client = Client::start(Options::default());
    let draft = uri("draft.json");
    client.open(&draft, BROKEN_WIRING);
    // A stray letter in the header: no element to stand in for.
    let broken = BROKEN_WIRING.replacen(r#""revision": 2,"#, r#""revision": 2x,"#, 1);
    let found = client.replace(&draft, 2, &broken);
    assert_eq!(codes_and_lines(&found), [("parse.invalid_json".to_string(), 5)]);
    client.shutdown();
}
