//! Bad input never panics. Every hostile file given to `check` ends in exit 1 or 2 (never
//! 101 or a signal), nothing on stderr says "panicked", and when the fault is in the file
//! the report has a diagnostic with a location in it.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{fixture, little};
use serde_json::{Value, json};

fn fixture_text(name: &str) -> String {
    std::fs::read_to_string(fixture(name)).expect("fixture")
}

fn s(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// A fresh directory for one test, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("little-hostile-{}-{tag}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }

    fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, bytes).expect("write");
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `check --format json` of one file; the run must not panic, must exit 0, 1 or 2, and
/// every diagnostic must carry a location with a 1-based line and column.
fn check(path: &Path, extra: &[&str]) -> (i32, Value) {
    let mut args = vec!["check", "--format", "json"];
    args.extend_from_slice(extra);
    args.push(s(path));
    let run = little(&args);
    assert!(matches!(run.code, 0..=2), "{}: exit {}", path.display(), run.code);
    if run.code == 2 {
        return (2, Value::Null);
    }
    let report: Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{}: stdout is not JSON ({e}):\n{}", path.display(), run.stdout));
    let file = report["files"][0].clone();
    located(&file, path);
    (run.code, file)
}

/// Asserts every diagnostic of a file report has a span with line and column.
fn located(file: &Value, what: &Path) {
    for d in file["diagnostics"].as_array().expect("diagnostics") {
        let span = &d["span"];
        let (line, column) = (span["line"].as_u64(), span["column"].as_u64());
        assert!(
            line.is_some_and(|l| l >= 1) && column.is_some_and(|c| c >= 1) && span["start"].is_u64(),
            "{}: diagnostic without a location: {d}",
            what.display()
        );
    }
}

/// The one diagnostic with `code` (there must be exactly one).
fn only<'a>(file: &'a Value, code: &str) -> &'a Value {
    let all: Vec<&Value> =
        file["diagnostics"].as_array().expect("diagnostics").iter().filter(|d| d["code"] == code).collect();
    assert_eq!(all.len(), 1, "expected one `{code}` in {file:#}");
    all[0]
}

/// The codes of a file's errors and warnings (`info` diagnostics left out).
fn codes(file: &Value) -> Vec<String> {
    file["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| d["severity"] != "info")
        .map(|d| d["code"].as_str().unwrap().to_string())
        .collect()
}

fn line_column(d: &Value) -> (u64, u64) {
    (d["span"]["line"].as_u64().unwrap(), d["span"]["column"].as_u64().unwrap())
}

/// Asserts the file is rejected as not JSON (exit 1, one `parse.invalid_json`, no
/// candidate); returns that diagnostic.
fn not_json(path: &Path) -> Value {
    let (code, file) = check(path, &[]);
    assert_eq!(code, 1, "{}: {file:#}", path.display());
    assert_eq!(codes(&file), ["parse.invalid_json"], "{}", path.display());
    assert_eq!(file["candidate"], Value::Null);
    let human = little(["check", s(path)]);
    assert_eq!(human.code, 1);
    assert!(human.stdout.contains("error[parse.invalid_json]"), "{}", human.stdout);
    file["diagnostics"][0].clone()
}

/// `hash` of a file that is not JSON: exit 2, and it says which file.
fn hash_fails(path: &Path) {
    let run = little(["hash", s(path)]);
    assert_eq!(run.code, 2, "{}: {}", path.display(), run.stdout);
    assert!(run.stderr.contains(s(path)), "{}", run.stderr);
}

/// `{"x": <nested>}` style nesting: `depth` arrays or objects, innermost empty.
fn nested(depth: usize, object: bool) -> String {
    let (open, close) = if object { ("{\"a\":", "}") } else { ("[", "]") };
    let mut text = String::with_capacity(depth * (open.len() + close.len()) + 2);
    for _ in 0..depth.saturating_sub(1) {
        text.push_str(open);
    }
    text.push_str(if object { "{}" } else { "[]" });
    for _ in 0..depth.saturating_sub(1) {
        text.push_str(close);
    }
    text
}

fn with_replaced(name: &str, from: &str, to: &str) -> String {
    let text = fixture_text(name);
    assert_eq!(text.matches(from).count(), 1, "`{from}` must occur once in {name}");
    text.replacen(from, to, 1)
}

// ---------------------------------------------------------------- not JSON at all

#[test]
fn empty_and_whitespace_files() {
    let dir = TempDir::new("empty");
    let empty = dir.write("empty.json", "");
    let d = not_json(&empty);
    assert_eq!(line_column(&d), (1, 1));
    hash_fails(&empty);

    let blank = dir.write("blank.json", "  \n\t\r\n   ");
    let d = not_json(&blank);
    assert_eq!(line_column(&d), (3, 4), "at the end of file: {d}");
    hash_fails(&blank);

    // Whitespace JSON does not allow (a form feed, a no-break space) is a fault where it stands.
    let odd = dir.write("odd.json", "\n\u{c}{}");
    assert_eq!(line_column(&not_json(&odd)), (2, 1));
    let nbsp = dir.write("nbsp.json", "{\u{a0}}");
    assert_eq!(line_column(&not_json(&nbsp)), (1, 2));
}

#[test]
fn truncated_drafts() {
    let dir = TempDir::new("truncated");
    let full = fixture_text("full.json");
    let len = full.len();
    // Ten cuts spread over the file, plus cuts inside a string, an escape-free key, a
    // number and a literal.
    let mut cuts: Vec<usize> = (1..=10).map(|i| i * len / 11).collect();
    cuts.push(full.find("Fetch sales").unwrap() + 3);
    cuts.push(full.find("\"catalogVersion\"").unwrap() + 4);
    cuts.push(full.find("5000").unwrap() + 2);
    cuts.push(full.find("false").unwrap() + 2);
    for cut in cuts {
        let cut = (0..=cut).rev().find(|&c| full.is_char_boundary(c)).unwrap();
        let path = dir.write(&format!("cut-{cut}.json"), &full[..cut]);
        let d = not_json(&path);
        let start = d["span"]["start"].as_u64().unwrap() as usize;
        assert!(start <= cut, "cut at {cut}: the fault is inside the file: {d}");
        hash_fails(&path);
    }

    // Every prefix of the draft, in one run: each is a diagnostic of its own file.
    let mut paths = Vec::new();
    for cut in (0..len.saturating_sub(1)).filter(|&c| full.is_char_boundary(c)) {
        paths.push(dir.write(&format!("prefix-{cut}.json"), &full[..cut]));
    }
    let mut args = vec!["check", "--format", "json"];
    args.extend(paths.iter().map(|p| s(p)));
    let run = little(&args);
    assert_eq!(run.code, 1);
    let report: Value = serde_json::from_str(&run.stdout).expect("JSON report");
    let files = report["files"].as_array().unwrap();
    assert_eq!(files.len(), paths.len());
    for (file, path) in files.iter().zip(&paths) {
        assert_eq!(file["path"], s(path));
        located(file, path);
        assert_eq!(codes(file), ["parse.invalid_json"], "{}", path.display());
    }
}

#[test]
fn top_level_values_that_are_not_objects() {
    let dir = TempDir::new("top");
    for (name, text, found) in [
        ("array.json", "[1, 2, 3]", "array"),
        ("number.json", "42", "number"),
        ("string.json", "\"workflow-draft/v1\"", "string"),
        ("null.json", "null", "null"),
        ("bool.json", "true", "boolean"),
        ("object.json", "{}", "format"),
        ("other.json", "{\"format\": \"workflow-draft/v9\"}", "format"),
    ] {
        let path = dir.write(name, text);
        let (code, file) = check(&path, &[]);
        assert_eq!(code, 1, "{name}: {file:#}");
        let d = only(&file, "parse.unsupported_format");
        assert!(d["path"].as_str().is_some_and(|p| p.starts_with('$')), "{name}: {d}");
        assert!(d["message"].as_str().unwrap().contains(found), "{name}: {d}");
        assert_eq!(file["candidate"], Value::Null);
        // Any JSON document has a hash.
        assert_eq!(little(["hash", s(&path)]).code, 0, "{name}");
    }
}

#[test]
fn binary_garbage_and_control_characters() {
    let dir = TempDir::new("garbage");
    let mut bytes = Vec::new();
    let mut x: u32 = 0x1234_5678;
    for _ in 0..4096 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        bytes.push((x >> 24) as u8);
    }
    let garbage = dir.write("garbage.json", &bytes);
    not_json(&garbage);
    let nul = dir.write("nul.json", with_replaced("clean.json", "Fetch sales", "Fetch\u{0}sales"));
    let d = not_json(&nul);
    assert_eq!(line_column(&d).0, 10, "{d}");
    let tab = dir.write("tab.json", with_replaced("clean.json", "Fetch sales", "Fetch\tsales"));
    not_json(&tab);
    // A folder is searched: the files above that are not JSON are reported, not skipped.
    let folder = little(["check", s(&dir.0), "--format", "json"]);
    assert_eq!(folder.code, 1, "{}", folder.stderr);
    let report: Value = serde_json::from_str(&folder.stdout).unwrap();
    let reported: Vec<&str> = report["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    for name in ["garbage.json", "nul.json", "tab.json"] {
        assert!(reported.iter().any(|p| p.ends_with(name)), "{name} in {reported:?}");
    }
}

// ---------------------------------------------------------------- wrong types

/// The JSONPath the reports use: `.key` for identifiers, `['key']` for other keys, `[i]` for indices.
fn json_path(path: &[Seg]) -> String {
    let mut text = String::from("$");
    for seg in path {
        match seg {
            Seg::Key(k) => little_frontend::json::path_push_key(&mut text, k),
            Seg::Index(i) => text.push_str(&format!("[{i}]")),
        }
    }
    text
}

#[derive(Clone, Debug)]
enum Seg {
    Key(String),
    Index(usize),
}

fn every_path(value: &Value, at: &mut Vec<Seg>, out: &mut Vec<Vec<Seg>>) {
    out.push(at.clone());
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                at.push(Seg::Key(k.clone()));
                every_path(v, at, out);
                at.pop();
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                at.push(Seg::Index(i));
                every_path(v, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

fn slot<'a>(value: &'a mut Value, path: &[Seg]) -> &'a mut Value {
    path.iter().fold(value, |v, seg| match seg {
        Seg::Key(k) => &mut v[k.as_str()],
        Seg::Index(i) => &mut v[*i],
    })
}

fn get<'a>(value: &'a Value, path: &[Seg]) -> &'a Value {
    path.iter().fold(value, |v, seg| match seg {
        Seg::Key(k) => &v[k.as_str()],
        Seg::Index(i) => &v[*i],
    })
}

fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// `inner` is `outer` or below it.
fn within(inner: &str, outer: &str) -> bool {
    inner == outer || (inner.starts_with(outer) && matches!(inner.as_bytes()[outer.len()], b'.' | b'['))
}

/// Checks many files in one run (with the context and bindings that make `full.json`
/// clean); falls back to one run per file to name a file that crashes the batch.
fn check_batch(paths: &[PathBuf]) -> Vec<Value> {
    let context = fixture("context.json");
    let bindings = fixture("bindings.json");
    let mut args = vec!["check", "--format", "json", "--context", s(&context), "--bindings", s(&bindings)];
    args.extend(paths.iter().map(|p| s(p)));
    let output = Command::new(env!("CARGO_BIN_EXE_little")).args(&args).output().expect("runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !matches!(output.status.code(), Some(0 | 1)) || stderr.contains("panicked") {
        for path in paths {
            check(path, &["--context", s(&context), "--bindings", s(&bindings)]);
        }
        panic!("the batch failed ({:?}) but no single file did: {stderr}", output.status);
    }
    let report: Value = serde_json::from_slice(&output.stdout).expect("JSON report");
    report["files"].as_array().expect("files").clone()
}

#[test]
fn wrong_json_types_in_every_field_of_a_draft() {
    let dir = TempDir::new("types");
    let draft: Value = serde_json::from_str(&fixture_text("full.json")).expect("fixture");
    let mut paths = Vec::new();
    every_path(&draft, &mut Vec::new(), &mut paths);
    assert!(paths.len() > 150, "the full draft exercises every field: {}", paths.len());
    let replacements = [json!(null), json!(0), json!("x"), json!([]), json!({}), json!(true)];

    let mut variants = Vec::new();
    for (p, path) in paths.iter().enumerate() {
        for (r, replacement) in replacements.iter().enumerate() {
            let mut variant = draft.clone();
            *slot(&mut variant, path) = replacement.clone();
            let file = dir.write(&format!("v{p:03}-{r}.json"), serde_json::to_string_pretty(&variant).unwrap());
            variants.push((file, path.clone(), replacement.clone()));
        }
    }
    let files: Vec<PathBuf> = variants.iter().map(|v| v.0.clone()).collect();
    let mut reports = Vec::new();
    for chunk in files.chunks(400) {
        reports.extend(check_batch(chunk));
    }
    assert_eq!(reports.len(), variants.len());

    let mut failures = Vec::new();
    for ((file, path, replacement), report) in variants.iter().zip(&reports) {
        assert_eq!(report["path"], s(file));
        located(report, file);
        let original = get(&draft, path);
        let at = json_path(path);
        let diagnostics = report["diagnostics"].as_array().unwrap();
        let blocking = diagnostics.iter().any(|d| d["blocking"] == true);
        assert_eq!(
            report["candidate"].is_null(),
            blocking,
            "{at} = {replacement}: a candidate unless something blocks"
        );
        if type_of(original) == type_of(replacement) {
            continue;
        }
        // A value of another JSON type is reported at or around the element changed.
        if !reported_near(diagnostics, &at) {
            failures.push(format!("{at} = {replacement}: {:?}", codes(report)));
        }
    }
    assert!(failures.is_empty(), "type changes without a diagnostic at the element:\n{}", failures.join("\n"));

    // The structural fields get `draft.invalid_shape` exactly at their path.
    let shape = |at: &str, replacement: &Value| {
        let index = variants.iter().position(|(_, p, r)| json_path(p) == at && r == replacement).expect("variant");
        let report = &reports[index];
        assert!(
            report["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .any(|d| d["code"] == "draft.invalid_shape" && d["path"] == at),
            "{at} = {replacement}: {report:#}"
        );
        assert!(report["candidate"].is_null());
    };
    for at in ["$.nodes", "$.edges", "$.edges[0].from", "$.edges[2].to", "$.nodes[1]", "$.nodes[1].config"] {
        for replacement in [json!(null), json!(0), json!("x"), json!(true)] {
            shape(at, &replacement);
        }
    }
    shape("$.edges[0].from", &json!([]));
    shape("$.nodes", &json!({}));
}

#[test]
fn wrong_json_types_in_context_and_bindings_never_crash() {
    let dir = TempDir::new("readers");
    let full = fixture("full.json");
    let mut jobs = Vec::new();
    for (flag, name) in [("--context", "context.json"), ("--bindings", "bindings.json")] {
        let document: Value = serde_json::from_str(&fixture_text(name)).unwrap();
        let mut paths = Vec::new();
        every_path(&document, &mut Vec::new(), &mut paths);
        for (p, path) in paths.iter().enumerate() {
            for (r, replacement) in
                [json!(null), json!(0), json!("x"), json!([]), json!({}), json!(true)].iter().enumerate()
            {
                let mut variant = document.clone();
                *slot(&mut variant, path) = replacement.clone();
                let file = dir.write(&format!("{name}-{p:03}-{r}"), serde_json::to_string(&variant).unwrap());
                jobs.push((flag, file));
            }
        }
    }
    let workers = std::thread::available_parallelism().map_or(4, |n| n.get()).min(8);
    std::thread::scope(|scope| {
        for worker in 0..workers {
            let jobs = &jobs;
            let full = &full;
            scope.spawn(move || {
                for (flag, file) in jobs.iter().skip(worker).step_by(workers) {
                    let run = little(["check", *flag, s(file), s(full)]);
                    // A reader document is usable (0/1) or fails the run (2), never crashes.
                    assert!(matches!(run.code, 0..=2), "{}: exit {}", file.display(), run.code);
                    if run.code == 2 {
                        assert!(run.stderr.contains(s(file)), "{}: {}", file.display(), run.stderr);
                    }
                }
            });
        }
    });
}

// ---------------------------------------------------------------- size

#[test]
fn five_megabyte_title() {
    let dir = TempDir::new("title");
    let big = "T".repeat(5 * 1024 * 1024);
    let path = dir.write("title.json", with_replaced("full.json", "\"Fetch sales\"", &format!("\"{big}\"")));
    let started = Instant::now();
    let (code, file) = check(&path, &["--bindings", s(&fixture("bindings.json"))]);
    let human = little(["check", "--bindings", s(&fixture("bindings.json")), s(&path)]);
    let elapsed = started.elapsed();
    assert_eq!(code, 0, "{file:#}");
    assert_eq!(human.code, 0);
    assert!(elapsed < Duration::from_secs(10), "two checks of a 5 MB title took {elapsed:?}");
    println!("5 MB title: human report {} bytes, in {elapsed:?}", human.stdout.len());
    assert!(human.stdout.len() < 4096, "{}", human.stdout.len());

    // A fault on the same 5 MB line: the renderer cuts the line around the fault.
    let path = dir.write(
        "title-fault.json",
        with_replaced("full.json", "\"title\": \"Fetch sales\",", &format!("\"title\": \"{big}\", \"titel\": 1,")),
    );
    let (code, file) = check(&path, &["--bindings", s(&fixture("bindings.json"))]);
    assert_eq!(code, 0, "an unknown field is a warning");
    let d = only(&file, "draft.unknown_field");
    assert_eq!(d["path"], "$.nodes[1].titel");
    assert_eq!(line_column(d).0, 17);
    let human = little(["check", "--bindings", s(&fixture("bindings.json")), s(&path)]);
    println!("5 MB title with a fault on its line: human report {} bytes", human.stdout.len());
    assert!(human.stdout.len() < 64 * 1024, "{} bytes", human.stdout.len());
    assert!(human.stdout.contains("warning[draft.unknown_field]"));
}

#[test]
fn five_megabyte_minified_draft_with_a_fault_at_the_end() {
    let dir = TempDir::new("minified");
    let mut draft: Value = serde_json::from_str(&fixture_text("full.json")).unwrap();
    draft["nodes"][1]["config"]["query"] = json!(format!("select {} from sales", "x, ".repeat(5 * 1024 * 1024 / 3)));
    let text = serde_json::to_string(&draft).unwrap();
    let broken = format!("{},}}", &text[..text.len() - 1]);
    assert!(broken.len() > 5 * 1024 * 1024 && !broken.contains('\n'));
    let path = dir.write("minified.json", &broken);

    let started = Instant::now();
    let human = little(["check", s(&path)]);
    assert_eq!(human.code, 1);
    println!("5 MB minified draft: human report {} bytes, in {:?}", human.stdout.len(), started.elapsed());
    assert!(human.stdout.len() < 64 * 1024, "{} bytes", human.stdout.len());
    assert!(human.stdout.contains("error[parse.invalid_json]"), "{}", &human.stdout[..human.stdout.len().min(2000)]);

    let d = not_json(&path);
    assert_eq!(line_column(&d), (1, broken.len() as u64 - 1), "at the trailing comma: {d}");
    hash_fails(&path);
    assert!(started.elapsed() < Duration::from_secs(15), "{:?}", started.elapsed());

    // The same draft without the fault is clean, and its hash is quick too.
    let fine = dir.write("fine.json", &text);
    let (code, file) = check(&fine, &["--bindings", s(&fixture("bindings.json"))]);
    assert_eq!(code, 0, "{file:#}");
    assert_eq!(little(["hash", s(&fine)]).code, 0);
}

#[test]
fn two_hundred_thousand_levels_of_nesting() {
    let dir = TempDir::new("deep");
    for object in [false, true] {
        let text = nested(200_000, object);
        let path = dir.write(if object { "objects.json" } else { "arrays.json" }, &text);
        let d = not_json(&path);
        assert!(d["message"].as_str().unwrap().contains("nesting"), "{d}");
        // The fault is at the bracket that goes past the limit, not at the end.
        let column = line_column(&d).1;
        assert!(column > 500 && column < 6000, "{d}");
        hash_fails(&path);

        // Inside a draft, at the place where the author wrote it.
        let path = dir.write(
            if object { "draft-objects.json" } else { "draft-arrays.json" },
            with_replaced("clean.json", "\"title\": \"Fetch sales\"", &format!("\"title\": {text}")),
        );
        let d = not_json(&path);
        assert_eq!(line_column(&d).0, 10, "{d}");
    }
    // Deep but unclosed, and deep with garbage at the bottom.
    let path = dir.write("unclosed.json", "[".repeat(200_000));
    not_json(&path);
    let path = dir.write("garbage-bottom.json", format!("{}x{}", "[".repeat(300), "]".repeat(300)));
    let d = not_json(&path);
    assert_eq!(line_column(&d), (1, 301));
}

#[test]
fn deep_config_objects() {
    let dir = TempDir::new("config-depth");
    let draft = |levels: usize| {
        with_replaced(
            "clean.json",
            "{ \"id\": \"start\", \"family\": \"trigger.manual\" }",
            &format!(
                "{{ \"id\": \"start\", \"family\": \"trigger.manual\", \"config\": {{ \"inputSchema\": {} }} }}",
                nested(levels, true)
            ),
        )
    };
    // The draft itself takes 4 levels ($, nodes, the node, config): 500 below config is allowed.
    let path = dir.write("500.json", draft(500));
    let (code, file) = check(&path, &[]);
    assert_eq!(code, 0, "{file:#}");
    assert!(file["candidate"]["id"].is_string());
    assert_eq!(little(["hash", s(&path)]).code, 0);
    let compiled = dir.0.join("500.compiled.json");
    assert_eq!(little(["compile", s(&path), "-o", s(&compiled)]).code, 0);
    assert!(compiled.exists());

    let path = dir.write("600.json", draft(600));
    let d = not_json(&path);
    assert!(d["message"].as_str().unwrap().contains("nesting"), "{d}");
    assert_eq!(line_column(&d).0, 9);
    hash_fails(&path);
}

// ---------------------------------------------------------------- bytes and numbers

#[test]
fn invalid_utf8_is_located_at_the_byte() {
    let dir = TempDir::new("utf8");
    let clean = fixture_text("clean.json");
    let at = clean.find("Fetch sales").unwrap() + "Fetch".len();
    let (line, column) = {
        let before = &clean[..at];
        (before.matches('\n').count() + 1, before.rsplit('\n').next().unwrap().chars().count() + 1)
    };
    for (name, bad) in [
        ("ff.json", &b"\xff"[..]),
        ("continuation.json", b"\x80"),
        ("overlong.json", b"\xc0\xaf"),
        ("surrogate.json", b"\xed\xa0\x80"),
        ("short.json", b"\xe2\x82"),
    ] {
        let mut bytes = clean.as_bytes()[..at].to_vec();
        bytes.extend_from_slice(bad);
        bytes.extend_from_slice(&clean.as_bytes()[at..]);
        let path = dir.write(name, &bytes);
        let d = not_json(&path);
        assert_eq!(line_column(&d), (line as u64, column as u64), "{name}: {d}");
        assert_eq!(d["span"]["start"], at, "{name}");
        let human = little(["check", s(&path)]);
        assert!(human.stdout.contains(&format!(":{line}:{column}")), "{name}: {}", human.stdout);
        hash_fails(&path);
    }
    // Columns count characters, not bytes: `é` before the bad byte is one column.
    let accented = with_replaced("clean.json", "Fetch sales", "Fetch café");
    let at = accented.find("café").unwrap() + "café".len();
    let mut bytes = accented.as_bytes()[..at].to_vec();
    bytes.push(0xff);
    bytes.extend_from_slice(&accented.as_bytes()[at..]);
    let column = accented[..at].rsplit('\n').next().unwrap().chars().count() + 1;
    assert_eq!(
        column + "café".len() - "café".chars().count(),
        accented[..at].len() - accented[..at].rfind('\n').unwrap()
    );
    let path = dir.write("accented.json", &bytes);
    let d = not_json(&path);
    assert_eq!(line_column(&d), (10, column as u64), "{d}");
    // A file that ends inside a multi-byte sequence.
    let mut bytes = clean.as_bytes().to_vec();
    bytes.extend_from_slice(b"\xf0\x9f");
    let path = dir.write("ends-inside.json", &bytes);
    let d = not_json(&path);
    assert_eq!(d["span"]["start"], clean.len());
}

#[test]
fn non_finite_numbers() {
    let dir = TempDir::new("nan");
    for (name, literal) in
        [("nan.json", "NaN"), ("inf.json", "Infinity"), ("neg-inf.json", "-Infinity"), ("plus.json", "+1")]
    {
        let text = with_replaced("full.json", "\"rowLimit\": 5000", &format!("\"rowLimit\": {literal}"));
        let at = text.find(literal).unwrap();
        let path = dir.write(name, &text);
        let d = not_json(&path);
        assert_eq!(d["span"]["start"], at, "{name}: {d}");
        assert_eq!(line_column(&d).0, 19, "{name}");
        hash_fails(&path);
    }
}

#[test]
fn surrogate_escapes() {
    let dir = TempDir::new("surrogate");
    for (name, escape) in [
        ("high.json", r"\ud800"),
        ("low.json", r"\udc00"),
        ("reversed.json", r"\ude00\ud83d"),
        ("cut.json", r"\ud83d x"),
    ] {
        let path = dir.write(name, with_replaced("clean.json", "Fetch sales", &format!("Fetch {escape} sales")));
        let d = not_json(&path);
        assert_eq!(line_column(&d).0, 10, "{name}: {d}");
        hash_fails(&path);
    }
    // A proper pair is fine.
    let path = dir.write("pair.json", with_replaced("clean.json", "Fetch sales", r"Fetch \ud83d\ude00 sales"));
    let (code, file) = check(&path, &[]);
    assert_eq!(code, 0, "{file:#}");
}

#[test]
fn duplicate_keys() {
    let dir = TempDir::new("duplicate");
    for (name, from, to, path) in [
        (
            "title.json",
            "\"title\": \"Fetch sales\",",
            "\"title\": \"Fetch sales\", \"title\": \"Other\",",
            "$.nodes[1].title",
        ),
        ("id.json", "{ \"id\": \"start\",", "{ \"id\": \"start\", \"id\": \"begin\",", "$.nodes[0].id"),
        ("nodes.json", "\"edges\": [", "\"nodes\": [], \"edges\": [", "$.nodes"),
        (
            "config.json",
            "\"connection\": \"conn_wh\",",
            "\"connection\": \"conn_wh\", \"connection\": \"conn_other\",",
            "$.nodes[1].config.connection",
        ),
    ] {
        let file = dir.write(name, with_replaced("clean.json", from, to));
        let (code, report) = check(&file, &[]);
        assert_eq!(code, 1, "{name}: a duplicate key blocks: {report:#}");
        let d = only(&report, "parse.duplicate_key");
        assert_eq!(d["path"], path, "{name}");
        assert!(d["related"][0]["span"]["line"].is_u64(), "{name}: the first occurrence is shown: {d}");
        assert_eq!(report["candidate"], Value::Null);
        hash_fails(&file);
    }
}

#[test]
fn integers_beyond_two_to_the_53() {
    let dir = TempDir::new("integers");
    for big in ["9007199254740993", "-9007199254740993", "123456789012345678901234567890"] {
        let path = dir.write(
            "big.json",
            with_replaced(
                "clean.json",
                "\"title\": \"Fetch sales\"",
                &format!("\"position\": {{ \"x\": {big}, \"y\": 0 }}"),
            ),
        );
        let (code, file) = check(&path, &[]);
        assert_eq!(code, 0, "a warning only: {file:#}");
        let d = only(&file, "parse.unsafe_integer");
        assert_eq!(d["severity"], "warning");
        assert_eq!(d["path"], "$.nodes[1].position.x");
        assert!(file["candidate"]["id"].is_string());
        assert_eq!(check(&path, &["--deny-warnings"]).0, 1);
    }
    // The exact digits are hashed: 2^53 + 1 and 2^53 are two documents.
    let a = dir.write("a.json", "[9007199254740993]");
    let b = dir.write("b.json", "[9007199254740992]");
    let hash = |p: &Path| little(["hash", s(p)]).stdout;
    assert_ne!(hash(&a), hash(&b));
    assert!(hash(&a).starts_with("sha256:"));
}

#[test]
fn numbers_beyond_the_range_of_doubles() {
    let dir = TempDir::new("range");
    for (name, number, path) in [
        ("schema.json", "1e400", "$.nodes[0].config.inputSchema.max"),
        ("negative.json", "-1E+999", "$.nodes[0].config.inputSchema.max"),
    ] {
        let file = dir.write(
            name,
            with_replaced(
                "clean.json",
                "{ \"id\": \"start\", \"family\": \"trigger.manual\" }",
                &format!(
                    "{{ \"id\": \"start\", \"family\": \"trigger.manual\", \"config\": {{ \"inputSchema\": {{ \"max\": {number} }} }} }}"
                ),
            ),
        );
        let (code, report) = check(&file, &[]);
        // Never a draft without a candidate and without a reason.
        assert_eq!(code, 1, "{name}: {report:#}");
        assert_eq!(report["candidate"], Value::Null);
        assert!(
            report["diagnostics"].as_array().unwrap().iter().any(|d| d["path"] == path && d["blocking"] == true),
            "{name}: {report:#}"
        );
        let run = little(["hash", s(&file)]);
        assert_eq!(run.code, 2, "{name}: no canonical form");
    }
    // Where the family's schema wants an integer, it is reported there as well.
    let file = dir.write("row-limit.json", with_replaced("full.json", "\"rowLimit\": 5000", "\"rowLimit\": 1e400"));
    let (code, report) =
        check(&file, &["--context", s(&fixture("context.json")), "--bindings", s(&fixture("bindings.json"))]);
    assert_eq!(code, 1, "{report:#}");
    assert!(
        report["diagnostics"].as_array().unwrap().iter().all(|d| d["path"] == "$.nodes[1].config.rowLimit"),
        "{report:#}"
    );
    // Tiny and long numbers that doubles can hold are fine.
    let file = dir
        .write("tiny.json", with_replaced("full.json", "\"x\": 120", "\"x\": 1.000000000000000000000000000001e-300"));
    let (code, report) = check(&file, &["--bindings", s(&fixture("bindings.json"))]);
    assert_eq!(code, 0, "{report:#}");
}

#[test]
fn byte_order_mark() {
    let dir = TempDir::new("bom");
    let clean = fixture_text("clean.json");
    let path = dir.write("bom.json", format!("\u{feff}{clean}"));
    let (code, with_bom) = check(&path, &[]);
    assert_eq!(code, 0, "{with_bom:#}");
    let (_, without) = check(&fixture("clean.json"), &[]);
    assert_eq!(with_bom["candidate"], without["candidate"], "a byte order mark is not content");

    // Locations in a BOM-prefixed file: offsets count the BOM's three bytes.
    let path = dir.write("bom-fault.json", "\u{feff}{\"format\": 1,}");
    let d = not_json(&path);
    assert_eq!(d["span"]["start"], 3 + "{\"format\": 1".len(), "at the trailing comma: {d}");
    assert_eq!(line_column(&d).0, 1);
    // Two BOMs: the second is not whitespace.
    let path = dir.write("two-boms.json", format!("\u{feff}\u{feff}{clean}"));
    not_json(&path);
}

const LWIR: &str = include_str!("../examples/lwir/summarize-ticket.lwir.json");

fn lwir_with_code_step() -> Value {
    let mut lwir: Value = serde_json::from_str(LWIR).expect("example");
    let content = "export async function run({ input }) {\n  return { score: 1 };\n}";
    lwir["permissions"]["tools"] = json!(["helpdesk.getTicket"]);
    let steps = lwir["steps"].as_array_mut().unwrap();
    steps.push(json!({
        "id": "score", "uses": "code.run", "needs": ["summarize"],
        "with": {
            "entrypoint": "score.ts",
            "files": { "score.ts": { "content": content, "sha256": little_hashing::sha256_identity(content.as_bytes()) } },
            "sandbox": { "network": "deny", "env": "deny", "fs": "deny" }
        },
        "output": { "mode": "object", "schema": { "type": "object", "properties": { "score": { "type": "number" } } } },
        "onFailure": { "fixer": { "model": "gpt-4o-mini", "maxAttempts": 3, "system": "Fix it." } }
    }));
    steps.push(json!({
        "id": "lookup", "uses": "tool.call", "needs": ["score"],
        "with": { "tool": "helpdesk.getTicket", "input": { "id": "{{ input.ticketId }}" } },
        "output": { "schema": { "type": "object" } }
    }));
    lwir
}

#[test]
fn truncated_lwir() {
    let dir = TempDir::new("lwir-truncated");
    let full = serde_json::to_string_pretty(&lwir_with_code_step()).unwrap();
    let mut paths = Vec::new();
    for cut in (0..full.len().saturating_sub(1)).filter(|&c| full.is_char_boundary(c)).step_by(7) {
        paths.push(dir.write(&format!("prefix-{cut}.json"), &full[..cut]));
    }
    let mut args = vec!["check", "--format", "json"];
    args.extend(paths.iter().map(|p| s(p)));
    let run = little(&args);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let report: Value = serde_json::from_str(&run.stdout).expect("JSON report");
    for (file, path) in report["files"].as_array().unwrap().iter().zip(&paths) {
        located(file, path);
        assert_eq!(codes(file), ["parse.invalid_json"], "{}", path.display());
    }
}

#[test]
fn wrong_json_types_in_every_field_of_an_lwir() {
    let dir = TempDir::new("lwir-types");
    let lwir = lwir_with_code_step();
    let snapshot = dir.write("snapshot.json", include_str!("../examples/lwir/snapshot.json"));
    let clean = dir.write("clean.json", serde_json::to_string_pretty(&lwir).unwrap());
    let (code, file) = check(&clean, &["--snapshot", s(&snapshot)]);
    // The example's snapshot does not offer the tool: exactly that fault.
    assert_eq!((code, codes(&file)), (1, vec!["binding.tool_not_permitted".to_string()]), "{file:#}");

    let mut paths = Vec::new();
    every_path(&lwir, &mut Vec::new(), &mut paths);
    assert!(paths.len() > 60, "{}", paths.len());
    let replacements = [json!(null), json!(0), json!("x"), json!([]), json!({}), json!(true)];
    let mut variants = Vec::new();
    for (p, path) in paths.iter().enumerate() {
        for (r, replacement) in replacements.iter().enumerate() {
            let mut variant = lwir.clone();
            *slot(&mut variant, path) = replacement.clone();
            let file = dir.write(&format!("v{p:03}-{r}.json"), serde_json::to_string_pretty(&variant).unwrap());
            variants.push((file, path.clone(), replacement.clone()));
        }
    }
    let mut failures = Vec::new();
    for chunk in variants.chunks(300) {
        let mut args = vec!["check", "--format", "json", "--snapshot", s(&snapshot)];
        args.extend(chunk.iter().map(|v| s(&v.0)));
        let run = little(&args);
        assert!(matches!(run.code, 0 | 1) && !run.stderr.contains("panicked"), "{}", run.stderr);
        let report: Value = serde_json::from_str(&run.stdout).expect("JSON report");
        for ((file, path, replacement), report) in chunk.iter().zip(report["files"].as_array().unwrap()) {
            located(report, file);
            let diagnostics = report["diagnostics"].as_array().unwrap();
            let blocking = diagnostics.iter().any(|d| d["blocking"] == true);
            assert_eq!(
                report["candidate"].is_null(),
                blocking,
                "{}: a version unless something blocks",
                file.display()
            );
            let at = json_path(path);
            // Inside a schema, another JSON type may well be another valid schema (`true`,
            // an `enum` entry): JSON Schema's metaschema judges it, not the LWIR shape. A
            // tool's `with.input` is any JSON: the tool's own schema judges it.
            let free_form = path.windows(2).any(|w| match (&w[0], &w[1]) {
                (Seg::Key(k), _) if k == "schema" => true,
                (Seg::Key(a), Seg::Key(b)) => a == "with" && b == "input",
                _ => false,
            });
            if type_of(get(&lwir, path)) == type_of(replacement) || free_form {
                continue;
            }
            if !reported_near(diagnostics, &at) {
                failures.push(format!("{at} = {replacement}: {:?}", codes(report)));
            }
        }
    }
    assert!(failures.is_empty(), "type changes without a diagnostic at the element:\n{}", failures.join("\n"));
}

#[test]
fn a_snapshot_that_cannot_be_read_is_a_tool_failure() {
    let dir = TempDir::new("lwir-snapshot");
    let lwir = dir.write("w.lwir.json", LWIR);
    for (name, text) in [("bad-type.json", r#"{"id": 3}"#), ("not-json.json", "{"), ("array.json", "[]")] {
        let snapshot = dir.write(name, text);
        let run = little(["check", "--snapshot", s(&snapshot), s(&lwir)]);
        assert_eq!(run.code, 2, "{name}: {}", run.stdout);
        assert!(run.stderr.contains("snapshot") && !run.stderr.contains("panicked"), "{}", run.stderr);
    }
}

/// Whether a diagnostic lies at, inside or around the element at `at` (the root counts
/// only for the root).
fn reported_near(diagnostics: &[Value], at: &str) -> bool {
    diagnostics
        .iter()
        .filter_map(|d| d["path"].as_str())
        .any(|p| (p != "$" || at == "$") && (within(p, at) || within(at, p)))
}
