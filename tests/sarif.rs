//! `little check --format sarif` and `--format github` on the bundled examples: snapshots,
//! validation against the SARIF 2.1.0 schema (shipped in `tests/sarif-schema/`, no network),
//! stable fingerprints, and the exit status recorded in the log.

mod common;

use std::path::{Path, PathBuf};

use common::{examples, quiet};
use little_diagnostics::Code;
use serde_json::Value;

const SETUP: [&str; 4] = ["--context", "examples/context.json", "--bindings", "examples/bindings.json"];
const FINGERPRINT: &str = "littleFingerprint/v1";

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `little` in `dir` with colour off: its stdout and exit code.
fn little_in(dir: &Path, args: &[&str]) -> (String, i32) {
    quiet(common::little_in(dir, args))
}

fn little(args: &[&str]) -> (String, i32) {
    little_in(manifest_dir(), args)
}

fn sarif_of(args: &[&str]) -> (Value, String, i32) {
    let (out, code) = little(args);
    (serde_json::from_str(&out).expect("SARIF is JSON"), out, code)
}

fn check_args<'a>(path: &'a str, format: &'a str) -> Vec<&'a str> {
    [&["check", path, "--format", format][..], &SETUP].concat()
}

/// The SARIF 2.1.0 schema of the OASIS standard (draft-04), see tests/sarif-schema/NOTICE.md.
fn validator() -> jsonschema::Validator {
    let text = std::fs::read_to_string(manifest_dir().join("tests/sarif-schema/sarif-schema-2.1.0.json")).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::draft4::options().should_validate_formats(true).build(&schema).expect("the SARIF schema compiles")
}

fn assert_valid(validator: &jsonschema::Validator, log: &Value, what: &str) {
    let errors: Vec<String> = validator.iter_errors(log).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "{what}: SARIF does not match the 2.1.0 schema:\n{}", errors.join("\n"));
}

fn results(log: &Value) -> &Vec<Value> {
    log["runs"][0]["results"].as_array().expect("results")
}

fn fingerprints(log: &Value) -> Vec<String> {
    results(log).iter().map(|r| r["partialFingerprints"][FINGERPRINT].as_str().unwrap().to_string()).collect()
}

/// The log without the rule list, which does not depend on the input (snapshotted once).
fn without_rules(log: &Value) -> Value {
    let mut log = log.clone();
    let count = log["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap().len();
    log["runs"][0]["tool"]["driver"]["rules"] = Value::String(format!("<{count} rules, see sarif__rules.snap>"));
    log
}

#[test]
fn examples_render_as_snapshotted_sarif_and_annotations() {
    let validator = validator();
    for name in examples() {
        let path = format!("examples/{name}");
        let stem = name.trim_end_matches(".json");
        let (log, out, code) = sarif_of(&check_args(&path, "sarif"));
        assert_valid(&validator, &log, &name);
        assert_eq!(log["runs"][0]["invocations"][0]["exitCode"], code, "{name}");
        assert_eq!(log["runs"][0]["invocations"][0]["executionSuccessful"], true, "{name}");
        insta::assert_json_snapshot!(format!("{stem}.sarif"), without_rules(&log));
        // Byte-identical on a second run.
        assert_eq!(little(&check_args(&path, "sarif")).0, out, "{name}");

        let (annotations, github_code) = little(&check_args(&path, "github"));
        assert_eq!(github_code, code, "{name}");
        assert_eq!(annotations.lines().count(), results(&log).len(), "{name}");
        insta::assert_snapshot!(format!("{stem}.github"), annotations);
    }
}

#[test]
fn rules_are_the_registry_in_order() {
    let (log, _, _) = sarif_of(&check_args("examples/cycle.json", "sarif"));
    let driver = &log["runs"][0]["tool"]["driver"];
    assert_eq!(driver["name"], "little");
    assert_eq!(driver["version"], env!("CARGO_PKG_VERSION"));
    let rules = driver["rules"].as_array().unwrap();
    let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    let registry: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(ids, registry);
    for (rule, code) in rules.iter().zip(Code::ALL) {
        assert_eq!(rule["help"]["text"], code.explanation(), "{}", code.as_str());
        assert_eq!(rule["help"]["markdown"], code.explanation(), "{}", code.as_str());
        assert_eq!(rule["properties"]["blocking"], code.blocking(), "{}", code.as_str());
    }
    // The explanation pages are tested where they live; the snapshot keeps the rest.
    let elided: Vec<Value> = rules
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r["help"] = Value::String(format!("<explanation page of {}>", r["id"].as_str().unwrap()));
            r
        })
        .collect();
    insta::assert_json_snapshot!("rules", elided);
}

#[test]
fn every_result_names_a_registered_rule_by_id_and_index() {
    let mut args = vec!["check"];
    let paths: Vec<String> = examples().iter().map(|n| format!("examples/{n}")).collect();
    args.extend(paths.iter().map(String::as_str));
    args.extend(["--format", "sarif"]);
    args.extend(SETUP);
    let (log, _, code) = sarif_of(&args);
    assert_eq!(code, 1);
    assert_valid(&validator(), &log, "all examples at once");
    let rules = log["runs"][0]["tool"]["driver"]["rules"].as_array().unwrap();
    assert!(!results(&log).is_empty());
    for result in results(&log) {
        let id = result["ruleId"].as_str().unwrap();
        let code = Code::from_name(id).unwrap_or_else(|| panic!("`{id}` is not a registered code"));
        let index = result["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], id);
        let level = match code.severity() {
            little_diagnostics::Severity::Error => "error",
            little_diagnostics::Severity::Warning => "warning",
            little_diagnostics::Severity::Info => "note",
        };
        assert_eq!(result["level"], level, "{id}");
    }
}

#[test]
fn the_exit_status_is_recorded_in_the_invocation() {
    let validator = validator();
    for (args, expected) in [
        (vec!["check", "examples/quarterly-report.json", "--format", "sarif"], 0),
        (vec!["check", "examples/quarterly-report.json", "--format", "sarif", "--deny-warnings"], 1),
        (check_args("examples/cycle.json", "sarif"), 1),
        (check_args("examples/support-triage.json", "sarif"), 0),
    ] {
        let (log, _, code) = sarif_of(&args);
        assert_valid(&validator, &log, &format!("{args:?}"));
        assert_eq!(code, expected, "{args:?}");
        assert_eq!(log["runs"][0]["invocations"][0]["exitCode"], code, "{args:?}");
        assert_eq!(log["runs"][0]["invocations"][0]["executionSuccessful"], true);
    }
}

/// A fresh directory under the system's temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("little-sarif-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("examples")).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The document pretty-printed, shifted right by three spaces and moved down two lines:
/// the same JSON value, with every element on another line and column.
fn reindent(text: &str) -> String {
    let value: Value = serde_json::from_str(text).unwrap();
    let pretty = serde_json::to_string_pretty(&value).unwrap();
    let shifted: Vec<String> = pretty.lines().map(|line| format!("   {line}")).collect();
    format!("\n\n{}\n", shifted.join("\n"))
}

fn start_lines(log: &Value) -> Vec<u64> {
    results(log)
        .iter()
        .map(|r| r["locations"][0]["physicalLocation"]["region"]["startLine"].as_u64().unwrap())
        .collect()
}

#[test]
fn fingerprints_survive_a_second_run_and_a_reindented_copy() {
    let tmp = TempDir::new("reindent");
    let context = manifest_dir().join("examples/context.json");
    let bindings = manifest_dir().join("examples/bindings.json");
    let (context, bindings) = (context.to_str().unwrap(), bindings.to_str().unwrap());
    let mut moved_lines = false;
    for name in ["broken-wiring.json", "contract-mismatch.json", "cycle.json"] {
        let path = format!("examples/{name}");
        let (first, _, code) = sarif_of(&check_args(&path, "sarif"));
        assert_eq!(code, 1, "{name} is a faulty draft");
        assert!(!results(&first).is_empty(), "{name}");
        let (second, _, _) = sarif_of(&check_args(&path, "sarif"));
        assert_eq!(fingerprints(&first), fingerprints(&second), "{name}: second run");

        // The same draft, re-indented, checked from another directory under the same
        // relative path: the same alerts, on other lines.
        let original = std::fs::read_to_string(manifest_dir().join(&path)).unwrap();
        std::fs::write(tmp.0.join(&path), reindent(&original)).unwrap();
        let args = ["check", &path, "--format", "sarif", "--context", context, "--bindings", bindings];
        let (out, code) = little_in(&tmp.0, &args);
        let copy: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(code, 1);
        assert_eq!(fingerprints(&copy), fingerprints(&first), "{name}: re-indented copy");
        moved_lines |= start_lines(&copy) != start_lines(&first);

        // An absolute path under the current directory is reported relative to it.
        let absolute = manifest_dir().join(&path);
        let (by_absolute, _, _) = sarif_of(&check_args(absolute.to_str().unwrap(), "sarif"));
        assert_eq!(fingerprints(&by_absolute), fingerprints(&first), "{name}: absolute path");
        let uri = &results(&by_absolute)[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"];
        assert_eq!(uri, &Value::String(path.clone()));
    }
    assert!(moved_lines, "re-indenting moved no result to another line: the test proves nothing");
}

#[test]
fn the_validator_rejects_a_broken_log() {
    let validator = validator();
    let (log, _, _) = sarif_of(&check_args("examples/cycle.json", "sarif"));
    assert_valid(&validator, &log, "cycle");
    let mut broken = log.clone();
    broken["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0.into();
    assert!(!validator.is_valid(&broken));
    let mut broken = log;
    broken["runs"][0]["results"][0]["level"] = "fatal".into();
    assert!(!validator.is_valid(&broken));
}

#[test]
fn a_file_that_is_not_utf8_is_a_located_result() {
    let tmp = TempDir::new("file-level");
    std::fs::write(tmp.0.join("examples/latin1.json"), b"{\"a\": \"caf\xe9\"}").unwrap();
    let args = ["check", "./examples/latin1.json", "--format", "sarif"];
    let (out, code) = little_in(&tmp.0, &args);
    assert_eq!(code, 1);
    let log: Value = serde_json::from_str(&out).unwrap();
    assert_valid(&validator(), &log, "latin1");
    let location = &results(&log)[0]["locations"][0]["physicalLocation"];
    assert_eq!(location["artifactLocation"]["uri"], "examples/latin1.json");
    assert_eq!(location["region"]["startLine"], 1);
    let (annotations, _) = little_in(&tmp.0, &["check", "./examples/latin1.json", "--format", "github"]);
    assert!(annotations.starts_with("::error file=examples/latin1.json,"), "{annotations}");
    insta::assert_json_snapshot!("latin1.sarif", without_rules(&log));
    insta::assert_snapshot!("latin1.github", annotations);
}

#[test]
fn without_context_an_info_finding_is_a_note() {
    let (log, _, code) = sarif_of(&["check", "examples/quarterly-report.json", "--format", "sarif"]);
    assert_eq!(code, 0);
    assert_valid(&validator(), &log, "no context");
    assert!(results(&log).iter().any(|r| r["ruleId"] == "request.context_unavailable" && r["level"] == "note"));
    let (annotations, _) = little(&["check", "examples/quarterly-report.json", "--format", "github"]);
    assert!(annotations.starts_with("::notice file=examples/quarterly-report.json,"), "{annotations}");
    insta::assert_json_snapshot!("quarterly-report.no-context.sarif", without_rules(&log));
    insta::assert_snapshot!("quarterly-report.no-context.github", annotations);
}
