//! Settings from `initializationOptions`, `didChangeConfiguration`, `workspace/configuration`
//! and `little.toml`; watched settings files; settings that cannot be used.

mod common;

use common::{Client, Options, SUPPORT_TRIAGE, uri};
use lsp_types::NumberOrString;
use serde_json::json;

const CONTEXT: &str = include_str!("../../examples/context.json");

fn has(diagnostics: &[lsp_types::Diagnostic], code: &str) -> bool {
    diagnostics.iter().any(|d| d.code == Some(NumberOrString::String(code.to_string())))
}

/// A context for another tenant: the draft (tenant `acme`) gets `request.tenant_mismatch`.
fn other_tenant() -> String {
    CONTEXT.replacen(r#""tenantId": "acme""#, r#""tenantId": "globex""#, 1)
}

#[test]
fn initialization_options_name_the_context_and_a_watched_change_rechecks() {
    let dir = tempfile::tempdir().unwrap();
    let context = dir.path().join("ctx.json");
    std::fs::write(&context, other_tenant()).unwrap();
    let mut client = Client::start(Options {
        initialization_options: Some(json!({ "context": "ctx.json" })),
        root: Some(dir.path()),
        ..Options::default()
    });
    let draft = uri("draft.json");
    assert!(has(&client.open(&draft, SUPPORT_TRIAGE), "request.tenant_mismatch"));
    // The server asked to watch the context and little.toml.
    let registration = client.server_requests.iter().find(|r| r.method == "client/registerCapability").unwrap();
    let watchers = &registration.params["registrations"][0]["registerOptions"]["watchers"];
    let globs: Vec<&str> = watchers.as_array().unwrap().iter().map(|w| w["globPattern"].as_str().unwrap()).collect();
    assert_eq!(globs, [dir.path().join("little.toml").to_str().unwrap(), context.to_str().unwrap()]);

    std::fs::write(&context, CONTEXT).unwrap();
    let changed = lsp_types::Url::from_file_path(&context).unwrap();
    client.notify("workspace/didChangeWatchedFiles", json!({ "changes": [{ "uri": changed, "type": 2 }] }));
    assert!(!has(&client.diagnostics(&draft, Some(1)), "request.tenant_mismatch"));
    client.shutdown();
}

#[test]
fn little_toml_is_read_and_client_settings_override_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("other.json"), other_tenant()).unwrap();
    std::fs::write(dir.path().join("acme.json"), CONTEXT).unwrap();
    std::fs::write(dir.path().join("little.toml"), "context = \"other.json\"\n").unwrap();
    let mut client = Client::start(Options { root: Some(dir.path()), ..Options::default() });
    let draft = uri("draft.json");
    assert!(has(&client.open(&draft, SUPPORT_TRIAGE), "request.tenant_mismatch"));
    client.notify("workspace/didChangeConfiguration", json!({ "settings": { "little": { "context": "acme.json" } } }));
    assert!(!has(&client.diagnostics(&draft, Some(1)), "request.tenant_mismatch"));
    // Back to the toml's context once the client's setting is gone; then the toml changes.
    client.notify("workspace/didChangeConfiguration", json!({ "settings": { "little": { "context": null } } }));
    assert!(has(&client.diagnostics(&draft, Some(1)), "request.tenant_mismatch"));
    std::fs::write(dir.path().join("little.toml"), "context = \"acme.json\"\n").unwrap();
    let toml = lsp_types::Url::from_file_path(dir.path().join("little.toml")).unwrap();
    client.notify("workspace/didChangeWatchedFiles", json!({ "changes": [{ "uri": toml, "type": 2 }] }));
    assert!(!has(&client.diagnostics(&draft, Some(1)), "request.tenant_mismatch"));
    client.shutdown();
}

#[test]
fn a_bad_catalog_is_shown_on_the_file_and_checking_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("catalog.json");
    std::fs::write(&catalog, r#"{ "format": "workflow-catalog/v1", "version": 3, "families": [] }"#).unwrap();
    let mut client = Client::start(Options {
        initialization_options: Some(json!({ "catalog": catalog })),
        root: Some(dir.path()),
        ..Options::default()
    });
    let catalog_uri = lsp_types::Url::from_file_path(&catalog).unwrap();
    let on_catalog = client.diagnostics(&catalog_uri, None);
    assert!(!on_catalog.is_empty());
    assert!(on_catalog.iter().all(|d| d.severity == Some(lsp_types::DiagnosticSeverity::ERROR)));
    assert!(
        client.messages.iter().any(|m| m.contains("cannot be used") && m.contains("catalog.json")),
        "{:?}",
        client.messages
    );
    // The draft is still checked, against the embedded catalog: no unknown family.
    let draft = uri("draft.json");
    let diagnostics = client.open(&draft, SUPPORT_TRIAGE);
    assert!(!has(&diagnostics, "catalog.unknown_family"), "{diagnostics:#?}");

    // A missing file and a setting that is not a string: messages, no crash.
    client.notify("workspace/didChangeConfiguration", json!({ "settings": { "context": "nowhere.json" } }));
    client.notify("workspace/didChangeConfiguration", json!({ "settings": { "catalgo": 1 } }));
    let diagnostics = client.diagnostics(&draft, Some(1));
    assert!(!has(&diagnostics, "catalog.unknown_family"));
    let _ = client.request("textDocument/documentSymbol", json!({ "textDocument": { "uri": draft } }));
    assert!(
        client.messages.iter().any(|m| m.contains("cannot read") && m.contains("nowhere.json")),
        "{:?}",
        client.messages
    );
    assert!(client.messages.iter().any(|m| m.contains("unknown setting `catalgo`")), "{:?}", client.messages);
    client.shutdown();
}

#[test]
fn a_misspelt_setting_is_a_warning_and_the_others_apply() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ctx.json"), other_tenant()).unwrap();
    let mut client = Client::start(Options {
        initialization_options: Some(json!({ "catalgo": "catalog.json", "context": "ctx.json" })),
        root: Some(dir.path()),
        ..Options::default()
    });
    // The context applies although another key is misspelt.
    assert!(has(&client.open(&uri("draft.json"), SUPPORT_TRIAGE), "request.tenant_mismatch"));
    let warning = client.messages.iter().find(|m| m.contains("catalgo")).expect("a message about the key");
    assert!(warning.contains("unknown setting `catalgo`; did you mean `catalog`?"), "{warning}");
    client.shutdown();
}

#[test]
fn settings_problems_are_one_plain_line_naming_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ctx.json"), other_tenant()).unwrap();
    std::fs::write(dir.path().join("bad.json"), "{ \"format\": \"workflow-context/v1\",\n  \"tenantId\": 7 }").unwrap();
    // A little.toml with a syntax error after a good line, and a table little plan reads.
    std::fs::write(
        dir.path().join("little.toml"),
        "context = \"ctx.json\"\n[providers.openai]\nbase_url = \"http://x\"\nexplainUrl = = 3\n",
    )
    .unwrap();
    let mut client = Client::start(Options { root: Some(dir.path()), ..Options::default() });
    let _ = client.open(&uri("draft.json"), SUPPORT_TRIAGE);
    let toml = dir.path().join("little.toml");
    let message = client.messages.iter().find(|m| m.contains("little.toml")).expect("a message about little.toml");
    assert!(message.starts_with(&format!("little: {}:4:", toml.display())), "{message}");
    assert!(!message.contains('\n'), "one line: {message}");
    // A context that cannot be used: one line naming the file, line and column.
    client.notify("workspace/didChangeConfiguration", json!({ "settings": { "context": "bad.json" } }));
    let _ = client.diagnostics(&uri("draft.json"), Some(1));
    let bad = dir.path().join("bad.json");
    let message = client.messages.iter().find(|m| m.contains("bad.json")).expect("a message about bad.json");
    assert!(message.contains(&format!("{}:2:", bad.display())) && !message.contains('\n'), "{message}");
    client.shutdown();
}

#[test]
fn configuration_is_pulled_when_the_client_only_says_it_changed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("other.json"), other_tenant()).unwrap();
    let mut client = Client::start(Options { root: Some(dir.path()), ..Options::default() });
    let draft = uri("draft.json");
    assert!(!has(&client.open(&draft, SUPPORT_TRIAGE), "request.tenant_mismatch"));
    client.configuration = Some(json!({ "context": "other.json" }));
    client.notify("workspace/didChangeConfiguration", json!({ "settings": null }));
    assert!(has(&client.diagnostics(&draft, Some(1)), "request.tenant_mismatch"));
    client.shutdown();
}

#[test]
fn without_client_watchers_the_server_watches_the_settings_files_itself() {
    let dir = tempfile::tempdir().unwrap();
    let context = dir.path().join("ctx.json");
    std::fs::write(&context, other_tenant()).unwrap();
    std::fs::write(dir.path().join("little.toml"), "context = \"ctx.json\"\n").unwrap();
    let mut client =
        Client::start(Options { root: Some(dir.path()), no_watch_registration: true, ..Options::default() });
    let draft = uri("draft.json");
    assert!(has(&client.open(&draft, SUPPORT_TRIAGE), "request.tenant_mismatch"));
    assert!(client.server_requests.iter().all(|r| r.method != "client/registerCapability"));
    // Saved as editors save: a new file renamed over the old one.
    let saved = dir.path().join("ctx.json.tmp");
    std::fs::write(&saved, CONTEXT).unwrap();
    std::fs::rename(&saved, &context).unwrap();
    // Each waits until the server has re-read the file (or the client's timeout fails it).
    client.diagnostics_until(&draft, Some(1), |d| !has(d, "request.tenant_mismatch"));
    // And again: the watch survived the rename.
    std::fs::write(&context, other_tenant()).unwrap();
    client.diagnostics_until(&draft, Some(1), |d| has(d, "request.tenant_mismatch"));
    client.shutdown();
}

#[test]
fn an_open_settings_file_counts_as_the_editor_has_it() {
    let dir = tempfile::tempdir().unwrap();
    let context = dir.path().join("ctx.json");
    std::fs::write(&context, other_tenant()).unwrap();
    let mut client = Client::start(Options {
        initialization_options: Some(json!({ "context": "ctx.json" })),
        root: Some(dir.path()),
        ..Options::default()
    });
    let draft = uri("draft.json");
    assert!(has(&client.open(&draft, SUPPORT_TRIAGE), "request.tenant_mismatch"));
    // The context opened in the editor and fixed there, not saved: the draft sees it at once.
    let context_uri = lsp_types::Url::from_file_path(&context).unwrap();
    client.send_open(&context_uri, &other_tenant());
    client.send_replace(&context_uri, 2, CONTEXT);
    // (The draft's publish for the copy as opened may come first, or not at all.)
    client.diagnostics_until(&draft, Some(1), |d| !has(d, "request.tenant_mismatch"));
    // Half typed (not JSON): the draft keeps the last usable context.
    client.send_insert(&context_uri, 3, &json!({ "line": 0, "character": 0 }), "{{");
    // Closed unsaved: the file on disk counts again.
    client.notify("textDocument/didClose", json!({ "textDocument": { "uri": context_uri } }));
    client.diagnostics_until(&draft, Some(1), |d| has(d, "request.tenant_mismatch"));
    client.shutdown();
}
