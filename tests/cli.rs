//! The commands of the `little` binary, run as a user runs them (docs/reference/command-line.md): exit codes,
//! what goes to stdout and stderr, and the files `compile` writes.

mod common;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{Run, fixture, little};
use serde_json::Value;

/// A fresh, empty directory of this test process.
fn temp_dir(tag: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("little-cli-{}-{tag}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn json(run: &Run) -> Value {
    serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}\nstderr:\n{}", run.stdout, run.stderr))
}

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn is_sha256(value: &Value) -> bool {
    value.as_str().and_then(|s| s.strip_prefix("sha256:")).is_some_and(|hex| is_hex(hex, 64))
}

/// The `cand_<16 hex>` id printed by the human report.
fn human_candidate(stdout: &str) -> String {
    let at = stdout.find("candidate cand_").unwrap_or_else(|| panic!("no candidate line in:\n{stdout}"));
    let id = &stdout[at + "candidate ".len()..at + "candidate cand_".len() + 16];
    assert!(is_hex(&id["cand_".len()..], 16), "candidate id `{id}` is not cand_<16 hex>");
    id.to_string()
}

/// The codes of a file's errors and warnings (`info` diagnostics left out).
fn codes(file: &Value) -> Vec<&str> {
    file["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| d["severity"] != "info")
        .map(|d| d["code"].as_str().expect("code"))
        .collect()
}

fn diagnostic<'a>(file: &'a Value, code: &str) -> &'a Value {
    let diagnostics = file["diagnostics"].as_array().expect("diagnostics");
    diagnostics.iter().find(|d| d["code"] == code).unwrap_or_else(|| panic!("no `{code}` in {file:#}"))
}

fn s(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

// ---------------------------------------------------------------- check

#[test]
fn check_clean_draft_issues_a_candidate() {
    let clean = fixture("clean.json");
    let run = little(["check", s(&clean)]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let id = human_candidate(&run.stdout);
    assert!(run.stdout.contains("1 file: 0 errors, 0 warnings"), "{}", run.stdout);
    assert!(run.stdout.contains("no context given"), "the report must say tenant checks did not run:\n{}", run.stdout);

    let run = little(["check", "--format", "json", s(&clean)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = json(&run);
    assert_eq!(report["format"], "little-report/v1");
    assert_eq!(report["summary"], serde_json::json!({ "files": 1, "errors": 0, "warnings": 0, "blocking": 0 }));
    let file = &report["files"][0];
    assert_eq!(file["path"], s(&clean));
    assert_eq!(file["document"], "draft");
    assert_eq!(codes(file), Vec::<&str>::new());
    let candidate = &file["candidate"];
    assert_eq!(candidate["id"], id.as_str(), "human and JSON reports name the same candidate");
    assert_eq!(candidate["workflowId"], "sales.weekly_report");
    assert_eq!(candidate["draftId"], "drf_1A");
    assert_eq!(candidate["revision"], 1);
    assert_eq!(candidate["catalogVersion"], "2026.11");
    assert!(is_sha256(&candidate["authoredGraphHash"]), "{candidate}");
    assert!(is_sha256(&candidate["topologyHash"]), "{candidate}");
    assert_eq!(candidate["bindingStatus"], "none", "no agent node: nothing to bind");
    assert_eq!(candidate["kind"], "draftCandidate", "it says which candidate it is");
    let keys: Vec<&str> = candidate.as_object().expect("object").keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "kind",
            "id",
            "workflowId",
            "draftId",
            "revision",
            "catalogVersion",
            "authoredGraphHash",
            "topologyHash",
            "bindingStatus"
        ]
    );
}

#[test]
fn check_output_is_byte_identical_across_runs() {
    let files = [fixture("clean.json"), fixture("cycle.json"), fixture("full.json"), fixture("warning.json")];
    for format in ["human", "json"] {
        let args = |files: &[PathBuf]| {
            let mut args = vec!["check".to_string(), "--format".to_string(), format.to_string()];
            args.extend(files.iter().map(|f| s(f).to_string()));
            args
        };
        let first = little(args(&files));
        let second = little(args(&files));
        assert_eq!(first.code, 1);
        assert_eq!(first.code, second.code);
        assert_eq!(first.stdout, second.stdout, "{format} output differs between two runs");
        assert_eq!(first.stderr, second.stderr);
    }
}

#[test]
fn reordering_keys_and_whitespace_changes_no_identity() {
    let ids = |name: &str| {
        let run = little(["check", "--format", "json", s(&fixture(name))]);
        assert_eq!(run.code, 0, "{}", run.stdout);
        json(&run)["files"][0]["candidate"].clone()
    };
    assert_eq!(ids("clean.json"), ids("clean_reordered.json"));
}

#[test]
fn reordering_arrays_keeps_the_authored_hash_and_moving_a_node_keeps_the_topology_hash() {
    let dir = temp_dir("reorder");
    let mut draft: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("full.json")).expect("fixture")).expect("JSON");
    let candidate = |draft: &Value, name: &str| {
        let path = dir.join(name);
        std::fs::write(&path, serde_json::to_string_pretty(draft).expect("JSON")).expect("write");
        let run = little([
            "check",
            "--format",
            "json",
            "--context",
            s(&fixture("context.json")),
            "--bindings",
            s(&fixture("bindings.json")),
            s(&path),
        ]);
        assert_eq!(run.code, 0, "{}", run.stdout);
        json(&run)["files"][0]["candidate"].clone()
    };
    let original = candidate(&draft, "original.json");
    assert_eq!(original["bindingStatus"], "accepted");
    draft["nodes"].as_array_mut().expect("nodes").reverse();
    draft["edges"].as_array_mut().expect("edges").reverse();
    let reversed = candidate(&draft, "reversed.json");
    assert_eq!(original, reversed, "reordering arrays changes nothing");

    draft["nodes"][7]["position"] = serde_json::json!({ "x": 300, "y": 90 });
    assert_eq!(draft["nodes"][7]["id"], "fetch");
    draft["nodes"][7]["title"] = serde_json::json!("Fetch the sales");
    let moved = candidate(&draft, "moved.json");
    assert_ne!(moved["authoredGraphHash"], original["authoredGraphHash"]);
    assert_eq!(moved["topologyHash"], original["topologyHash"], "layout and titles are not topology");

    draft["nodes"][7]["config"]["rowLimit"] = serde_json::json!(10);
    let changed = candidate(&draft, "changed.json");
    assert_ne!(changed["topologyHash"], original["topologyHash"], "a config value is topology");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn check_with_context_and_bindings() {
    let run = little([
        "check",
        "--format",
        "json",
        "--context",
        s(&fixture("context.json")),
        "--bindings",
        s(&fixture("bindings.json")),
        s(&fixture("full.json")),
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let report = json(&run);
    let file = &report["files"][0];
    assert_eq!(file["diagnostics"], serde_json::json!([]));
    assert!(file.get("notes").is_none(), "with a context every tenant check runs: {file}");
    assert_eq!(file["candidate"]["bindingStatus"], "accepted");
    assert_eq!(file["candidate"]["revision"], 12);
}

#[test]
fn check_blocking_draft_exits_1_without_candidate() {
    let cycle = fixture("cycle.json");
    let run = little(["check", s(&cycle)]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(run.stdout.contains("error[graph.cycle]"), "{}", run.stdout);
    assert!(run.stdout.contains("no candidate"), "{}", run.stdout);
    assert!(!run.stdout.contains("cand_"), "{}", run.stdout);

    let run = little(["check", "--format", "json", s(&cycle)]);
    assert_eq!(run.code, 1);
    let report = json(&run);
    let file = &report["files"][0];
    assert_eq!(file["candidate"], Value::Null);
    assert_eq!(codes(file), ["graph.cycle"]);
    let diagnostic = diagnostic(file, "graph.cycle");
    assert_eq!(diagnostic["severity"], "error");
    assert_eq!(diagnostic["blocking"], true);
    assert_eq!(diagnostic["path"], "$.edges[3]");
    assert_eq!(diagnostic["span"]["line"], 51);
    assert_eq!(diagnostic["span"]["column"], 5);
    assert_eq!(diagnostic["witness"]["nodes"], serde_json::json!(["email", "fetch", "summarize"]));
    assert_eq!(report["summary"], serde_json::json!({ "files": 1, "errors": 1, "warnings": 0, "blocking": 1 }));
}

#[test]
fn warnings_do_not_block_unless_denied() {
    for (name, code) in [("warning.json", "draft.unknown_field"), ("full.json", "agent.binding_status_unavailable")] {
        let path = fixture(name);
        let run = little(["check", "--format", "json", s(&path)]);
        assert_eq!(run.code, 0, "{name}: {}", run.stdout);
        let report = json(&run);
        assert_eq!(codes(&report["files"][0]), [code], "{name}");
        assert_eq!(diagnostic(&report["files"][0], code)["severity"], "warning");
        assert_eq!(report["summary"]["warnings"], 1);
        assert_eq!(report["summary"]["blocking"], 0);
        assert!(report["files"][0]["candidate"]["id"].is_string(), "a warning does not withhold the candidate");

        let denied = little(["check", "--deny-warnings", "--format", "json", s(&path)]);
        assert_eq!(denied.code, 1, "{name}: --deny-warnings turns the warning into exit 1");
        assert_eq!(denied.stdout, run.stdout, "--deny-warnings changes the exit code only");
        let human = little(["check", "--deny-warnings", s(&path)]);
        assert_eq!(human.code, 1);
        assert!(human.stdout.contains(&format!("warning[{code}]")), "{}", human.stdout);
    }
    let bound = little(["check", "--bindings", s(&fixture("bindings.json")), s(&fixture("full.json"))]);
    assert_eq!(bound.code, 0, "{}", bound.stdout);
    assert!(bound.stdout.contains("0 errors, 0 warnings"), "{}", bound.stdout);
}

#[test]
fn check_several_files() {
    let files = [fixture("clean.json"), fixture("cycle.json"), fixture("warning.json")];
    let mut args = vec!["check", "--format", "json"];
    args.extend(files.iter().map(|f| s(f)));
    let run = little(&args);
    assert_eq!(run.code, 1, "one blocking file makes the run exit 1");
    let report = json(&run);
    let reported: Vec<&str> =
        report["files"].as_array().expect("files").iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(reported, files.iter().map(|f| s(f)).collect::<Vec<_>>(), "files are reported in the order given");
    assert!(report["files"][0]["candidate"].is_object());
    assert_eq!(report["files"][1]["candidate"], Value::Null);
    assert!(report["files"][2]["candidate"].is_object());
    assert_eq!(report["summary"], serde_json::json!({ "files": 3, "errors": 1, "warnings": 1, "blocking": 1 }));

    let human = little(["check", s(&files[0]), s(&files[2])]);
    assert_eq!(human.code, 0);
    assert!(human.stdout.contains("2 files: 0 errors, 1 warning"), "{}", human.stdout);
    assert_eq!(human.stdout.matches("candidate cand_").count(), 2, "{}", human.stdout);
}

#[test]
fn check_missing_file_is_a_tool_failure_naming_it() {
    let dir = temp_dir("missing");
    let missing = dir.join("no-such-draft.json");
    for args in [vec!["check", s(&missing)], vec!["check", s(&fixture("clean.json")), s(&missing)]] {
        let run = little(&args);
        assert_eq!(run.code, 2, "{args:?}");
        assert!(run.stderr.contains(s(&missing)), "the message names the file: {}", run.stderr);
        assert!(run.stdout.is_empty(), "no partial report on a tool failure: {}", run.stdout);
    }
    let run = little(["check", s(&dir)]);
    assert_eq!(run.code, 2, "a folder without drafts leaves nothing to check: {}", run.stdout);
    assert!(run.stderr.contains(s(&dir)), "{}", run.stderr);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn bad_arguments_are_tool_failures() {
    let clean = fixture("clean.json");
    for args in [
        vec!["check", "--bogus", s(&clean)],
        vec!["check"],
        vec!["check", "--format", "svg", s(&clean)],
        vec!["check", "--format", "xml", s(&clean)],
        vec!["check", "--context", s(&clean)],
        vec!["compile", s(&clean)],
        vec!["explain"],
        vec!["hash"],
        vec!["hash", s(&clean), s(&clean)],
        vec!["frobnicate"],
        vec![],
    ] {
        let run = little(&args);
        // `little explain` without a code may list every code; anything else must fail.
        if args == ["explain"] && run.code == 0 {
            assert!(run.stdout.contains("graph.cycle"), "{}", run.stdout);
            continue;
        }
        assert_eq!(run.code, 2, "{args:?}: {}{}", run.stdout, run.stderr);
        assert!(!run.stderr.is_empty(), "{args:?}: a tool failure says why");
    }
    let unknown = little(["check", "--format", "xml", s(&clean)]);
    assert_eq!(unknown.code, 2);
    assert!(unknown.stderr.contains("xml"), "clap names the rejected value: {}", unknown.stderr);
    for flag in ["--help", "--version"] {
        let run = little([flag]);
        assert_eq!(run.code, 0, "{flag}: {}", run.stderr);
        assert!(!run.stdout.is_empty());
    }
}

// ---------------------------------------------------------------- readers

#[test]
fn malformed_context_fails_the_run_with_its_location() {
    let dir = temp_dir("context");
    let context = dir.join("tenant-context.json");
    std::fs::write(&context, "{\n  \"format\": \"workflow-context/v1\",\n  \"tenantId\": \"acme\",,\n}\n")
        .expect("write");
    let run = little(["check", "--context", s(&context), s(&fixture("clean.json"))]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(run.stderr.contains(s(&context)), "names the file: {}", run.stderr);
    assert!(run.stderr.contains(":3:22"), "shows line:column of the fault: {}", run.stderr);
    assert!(run.stderr.contains("parse.invalid_json"), "{}", run.stderr);

    // A context that is JSON but not a context document is unusable too.
    for (name, text) in [
        ("array.json", "[]"),
        ("draft.json", &std::fs::read_to_string(fixture("clean.json")).expect("fixture")),
        ("empty.json", ""),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write");
        let run = little(["check", "--context", s(&path), s(&fixture("clean.json"))]);
        assert_eq!(run.code, 2, "{name}: {}", run.stdout);
        assert!(run.stderr.contains(s(&path)), "{name}: {}", run.stderr);
    }
    let missing = dir.join("absent-context.json");
    let run = little(["check", "--context", s(&missing), s(&fixture("clean.json"))]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains(s(&missing)), "{}", run.stderr);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn bindings_that_cannot_be_read_fail_the_run_and_are_never_no_rows() {
    let dir = temp_dir("bindings");
    let missing = dir.join("absent-bindings.json");
    let full = fixture("full.json");
    let run = little(["check", "--bindings", s(&missing), s(&full)]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(run.stdout.is_empty(), "no report as if there were no rows: {}", run.stdout);
    assert!(run.stderr.contains(s(&missing)), "{}", run.stderr);

    let malformed = dir.join("bindings.json");
    std::fs::write(&malformed, "{ \"format\": \"agent-bindings/v1\", \"rows\": [ { \"agentId\": \"agt_writer\" ]")
        .expect("write");
    let run = little(["check", "--bindings", s(&malformed), s(&full)]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(run.stderr.contains(s(&malformed)) && run.stderr.contains(":1:"), "{}", run.stderr);

    let compiled = dir.join("out.json");
    let run = little(["compile", s(&full), "-o", s(&compiled), "--bindings", s(&missing)]);
    assert_eq!(run.code, 2);
    assert!(!compiled.exists(), "a failed reader fails compilation");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn catalog_with_an_invalid_config_schema_fails_the_run() {
    let dir = temp_dir("catalog");
    let mut catalog: Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("frontend/catalog/default.json"))
            .expect("default catalog"),
    )
    .expect("JSON");
    let family = &mut catalog["families"][0];
    assert_eq!(family["id"], "trigger.manual");
    let good = dir.join("good-catalog.json");
    std::fs::write(&good, serde_json::to_string_pretty(&catalog).expect("JSON")).expect("write");
    let run = little(["check", "--catalog", s(&good), s(&fixture("clean.json"))]);
    assert_eq!(run.code, 0, "the default catalog, given as a file, works: {}{}", run.stdout, run.stderr);

    catalog["families"][0]["configSchema"] = serde_json::json!({ "type": "objekt", "minLength": "three" });
    let bad = dir.join("bad-catalog.json");
    std::fs::write(&bad, serde_json::to_string_pretty(&catalog).expect("JSON")).expect("write");
    let run = little(["check", "--catalog", s(&bad), s(&fixture("clean.json"))]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(run.stderr.contains(s(&bad)), "names the catalog: {}", run.stderr);
    assert!(run.stderr.contains("trigger.manual") && run.stderr.contains("configSchema"), "{}", run.stderr);
    let _ = std::fs::remove_dir_all(dir);
}

// ---------------------------------------------------------------- compile

#[test]
fn compile_writes_candidate_and_topology_when_clean() {
    let dir = temp_dir("compile");
    let out = dir.join("compiled.json");
    let clean = fixture("clean.json");
    let run = little(["compile", s(&clean), "-o", s(&out)]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let compiled: Value = serde_json::from_str(&std::fs::read_to_string(&out).expect("written")).expect("JSON");
    assert!(compiled["candidate"].is_object(), "{compiled}");
    assert!(compiled["topology"].is_object(), "{compiled}");
    let checked = json(&little(["check", "--format", "json", s(&clean)]));
    assert_eq!(compiled["candidate"], checked["files"][0]["candidate"], "compile and check agree");
    assert_eq!(compiled["topology"]["workflowId"], "sales.weekly_report");
    assert!(run.stdout.contains(compiled["candidate"]["id"].as_str().unwrap()), "{}", run.stdout);

    // Deterministic: compiling again writes the same bytes.
    let again = dir.join("again.json");
    assert_eq!(little(["compile", s(&clean), "--output", s(&again)]).code, 0);
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&again).unwrap());

    let with_context = dir.join("full.json");
    let run = little([
        "compile",
        s(&fixture("full.json")),
        "-o",
        s(&with_context),
        "--context",
        s(&fixture("context.json")),
        "--bindings",
        s(&fixture("bindings.json")),
    ]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let compiled: Value = serde_json::from_str(&std::fs::read_to_string(&with_context).unwrap()).unwrap();
    assert_eq!(compiled["candidate"]["bindingStatus"], "accepted");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn compile_writes_nothing_when_blocked() {
    let dir = temp_dir("blocked");
    let out = dir.join("compiled.json");
    let run = little(["compile", s(&fixture("cycle.json")), "-o", s(&out)]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(!out.exists(), "nothing is written for a blocked draft");
    assert!(run.stdout.contains("graph.cycle"), "the reason is shown: {}", run.stdout);

    let not_json = dir.join("draft.json");
    std::fs::write(&not_json, "{ \"format\": ").unwrap();
    let run = little(["compile", s(&not_json), "-o", s(&out)]);
    assert_eq!(run.code, 1, "a draft that is not JSON blocks: {}{}", run.stdout, run.stderr);
    assert!(!out.exists());

    let unwritable = dir.join("no-such-dir").join("compiled.json");
    let run = little(["compile", s(&fixture("clean.json")), "-o", s(&unwritable)]);
    assert_eq!(run.code, 2, "an output that cannot be written is a tool failure");
    assert!(run.stderr.contains(s(&unwritable)), "{}", run.stderr);
    let _ = std::fs::remove_dir_all(dir);
}

// ---------------------------------------------------------------- explain

#[test]
fn explain_prints_the_page() {
    let run = little(["explain", "graph.cycle"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.starts_with("# graph.cycle\n"), "{}", run.stdout);
    assert!(run.stdout.contains("## Failing example"), "{}", run.stdout);
    assert!(run.stdout.contains("## Fixed example"), "{}", run.stdout);
}

#[test]
fn explain_unknown_code_suggests_the_nearest() {
    for (typo, nearest) in [("graph.cycel", "graph.cycle"), ("parse.invalid_jsn", "parse.invalid_json")] {
        let run = little(["explain", typo]);
        assert_eq!(run.code, 2, "{typo}");
        assert!(run.stdout.is_empty());
        assert!(run.stderr.contains(typo), "{}", run.stderr);
        assert!(run.stderr.contains(&format!("`{nearest}`")), "{typo} should suggest {nearest}: {}", run.stderr);
    }
    let run = little(["explain", "zzzz"]);
    assert_eq!(run.code, 2);
}

#[test]
fn every_code_has_a_page() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("diagnostics/explain");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("explain pages")
        .map(|entry| entry.expect("entry").file_name().to_string_lossy().into_owned())
        .filter_map(|name| name.strip_suffix(".md").map(str::to_string))
        .filter(|name| name != "README")
        .collect();
    names.sort();
    let registry: Vec<&str> = little_diagnostics::Code::ALL.iter().map(|c| c.as_str()).collect();
    let mut sorted_registry = registry.clone();
    sorted_registry.sort();
    assert_eq!(names, sorted_registry, "one page per registered code, and no page without a code");
    assert!(names.len() > 60, "{names:?}");
    for name in &names {
        let run = little(["explain", name]);
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        assert!(run.stdout.starts_with(&format!("# {name}\n")), "{name}: {}", run.stdout);
        assert!(run.stdout.contains("## Failing example"), "{name}");
        assert!(run.stdout.contains("## Fixed example"), "{name}");
        let page = std::fs::read_to_string(dir.join(format!("{name}.md"))).expect("page");
        assert_eq!(run.stdout.trim_end(), page.trim_end(), "{name}: the binary prints the page in the repository");
    }
}

// ---------------------------------------------------------------- hash

fn hash_of(path: &Path) -> String {
    let run = little(["hash", s(path)]);
    assert_eq!(run.code, 0, "{}: {}", path.display(), run.stderr);
    let line = run.stdout.strip_suffix('\n').expect("one line");
    assert!(line.strip_prefix("sha256:").is_some_and(|hex| is_hex(hex, 64)), "`{line}` is not sha256:<64 hex>");
    line.to_string()
}

#[test]
fn hash_ignores_key_order_and_whitespace() {
    assert_eq!(hash_of(&fixture("clean.json")), hash_of(&fixture("clean_reordered.json")));

    let dir = temp_dir("hash");
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write");
        path
    };
    let a = write("a.json", r#"{"b": [1, 2.50, "\u0041"], "a": {"y": null, "x": true}}"#);
    let b = write("b.json", "{\n\t\"a\" : { \"x\" : true , \"y\" : null },\n\t\"b\" : [ 1.0 , 25e-1 , \"A\" ]\n}\n");
    assert_eq!(hash_of(&a), hash_of(&b), "RFC 8785: same document, same hash");
    let c = write("c.json", r#"{"b": [1, 2.5, "A"], "a": {"y": null, "x": false}}"#);
    assert_ne!(hash_of(&a), hash_of(&c), "a different value hashes differently");
    let d = write("d.json", r#"{"b": [2.5, 1, "A"], "a": {"y": null, "x": true}}"#);
    assert_ne!(hash_of(&a), hash_of(&d), "array order is part of the document");
    let bom = write("bom.json", &format!("\u{feff}{}", std::fs::read_to_string(&a).unwrap()));
    assert_eq!(hash_of(&a), hash_of(&bom), "a byte order mark is not content");
    for (name, text) in
        [("n.json", "null"), ("t.json", "true"), ("num.json", "-0"), ("s.json", "\"\""), ("arr.json", "[]")]
    {
        hash_of(&write(name, text));
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn hash_of_invalid_json_is_a_tool_failure() {
    let dir = temp_dir("hash-bad");
    for (name, text) in [
        ("trailing-comma.json", "{\"a\": 1,}"),
        ("empty.json", ""),
        ("two-values.json", "{} {}"),
        ("duplicate.json", "{\"a\": 1, \"a\": 2}"),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let run = little(["hash", s(&path)]);
        assert_eq!(run.code, 2, "{name}: {}", run.stdout);
        assert!(run.stdout.is_empty(), "{name}: {}", run.stdout);
        assert!(run.stderr.contains(s(&path)), "{name}: {}", run.stderr);
    }
    let run = little(["hash", s(&dir.join("absent.json"))]);
    assert_eq!(run.code, 2);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn an_lwir_is_checked_and_its_candidate_is_its_workflow_version() {
    let lwir = "examples/lwir/summarize-ticket.lwir.json";
    let snapshot = "examples/lwir/snapshot.json";
    let run = little(["check", "--format", "json", "--snapshot", snapshot, lwir]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let file = &json(&run)["files"][0];
    assert_eq!(file["document"], "lwir");
    assert_eq!(file["diagnostics"], Value::Array(Vec::new()));
    let candidate = &file["candidate"];
    assert!(is_sha256(&candidate["hash"]), "{candidate}");
    let hash = candidate["hash"].as_str().unwrap();
    assert_eq!(candidate["id"], format!("wfver_{}", &hash["sha256:".len().."sha256:".len() + 16]));
    assert_eq!(candidate["canonicalizer"], "little-workflow-canonical-json@alpha");
    assert_eq!(candidate["kind"], "workflowVersion", "it says which candidate it is");
    // The WorkflowVersion is the hash of the document's canonical JSON: `little hash` agrees.
    let hashed = little(["hash", lwir]);
    assert!(hashed.stdout.contains(hash), "{}", hashed.stdout);
    // The human report names it.
    let human = little(["check", "--snapshot", snapshot, lwir]);
    assert!(
        human.stdout.contains(&format!("workflow version {}", candidate["id"].as_str().unwrap())),
        "{}",
        human.stdout
    );
    // `compile` is for drafts: an LWIR is a usage error, not a blocked draft.
    let dir = temp_dir("lwir-compile");
    let compiled = little(["compile", lwir, "-o", dir.join("out.json").to_str().unwrap()]);
    assert_eq!(compiled.code, 2);
    assert!(compiled.stderr.contains("is an LWIR"), "{}", compiled.stderr);
    // A faulty plan blocks: exit 1, no candidate.
    let faulty = little(["check", "--format", "json", "--snapshot", snapshot, "examples/lwir/faulty-plan.lwir.json"]);
    assert_eq!(faulty.code, 1);
    assert_eq!(json(&faulty)["files"][0]["candidate"], Value::Null);
}
