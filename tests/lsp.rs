//! `little lsp` over real stdio: framed messages in, a diagnostic and an answer out, a clean exit.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

fn frame(message: &Value) -> Vec<u8> {
    let body = serde_json::to_vec(message).unwrap();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend(body);
    out
}

fn read_message(reader: &mut impl BufRead) -> Value {
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(n) = line.strip_prefix("Content-Length: ") {
            length = n.parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    serde_json::from_slice(&body).unwrap()
}

#[test]
fn the_server_speaks_over_stdio_and_exits_cleanly() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_little"))
        .args(["lsp", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let draft = include_str!("../examples/broken-wiring.json");
    let messages = [
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "capabilities": {} } }),
        json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }),
        json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": { "textDocument": {
            "uri": "file:///tmp/broken-wiring.json", "languageId": "json", "version": 1, "text": draft } } }),
    ];
    for message in &messages {
        stdin.write_all(&frame(message)).unwrap();
    }
    let initialized = read_message(&mut stdout);
    assert_eq!(initialized["result"]["capabilities"]["positionEncoding"], "utf-16");
    let published = loop {
        let message = read_message(&mut stdout);
        if message["method"] == "textDocument/publishDiagnostics" {
            break message;
        }
    };
    let codes: Vec<&str> =
        published["params"]["diagnostics"].as_array().unwrap().iter().map(|d| d["code"].as_str().unwrap()).collect();
    assert!(codes.contains(&"catalog.unknown_family"), "{codes:?}");
    // An answer the server writes as JSON text straight from the LSP types (the outline).
    let outline = json!({ "jsonrpc": "2.0", "id": 2, "method": "textDocument/documentSymbol",
        "params": { "textDocument": { "uri": "file:///tmp/broken-wiring.json" } } });
    stdin.write_all(&frame(&outline)).unwrap();
    let answer = loop {
        let message = read_message(&mut stdout);
        if message["id"] == 2 {
            break message;
        }
    };
    assert_eq!(answer["jsonrpc"], "2.0");
    let lists: Vec<&str> = answer["result"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(lists, ["nodes", "edges"]);
    let first_node = &answer["result"][0]["children"][0];
    assert!(first_node["name"].is_string() && first_node["range"]["start"]["line"].is_u64(), "{first_node}");
    stdin.write_all(&frame(&json!({ "jsonrpc": "2.0", "id": 3, "method": "shutdown" }))).unwrap();
    stdin.write_all(&frame(&json!({ "jsonrpc": "2.0", "method": "exit" }))).unwrap();
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}
