//! The GitHub Action (`action.yml`): its shell steps (`scripts/action/*.sh`) run here with
//! the environment GitHub gives a composite action's steps (`GITHUB_ACTION_PATH`,
//! `GITHUB_PATH`, `GITHUB_OUTPUT`, the inputs as `INPUT_*`), against this build's `little`.
//! A faulty draft fails the step with `::error` annotations and a SARIF report; fixed, it
//! passes. The install step is run on a cache hit and without cargo; a cache miss builds
//! little with `cargo install` (minutes), which is not run here.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn little_bin_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_little")).parent().unwrap().to_path_buf()
}

/// A job's folder: the repository checked out, and GitHub's files.
struct Job {
    dir: PathBuf,
}

impl Job {
    fn new(name: &str) -> Job {
        let dir = std::env::temp_dir().join(format!("little-action-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("workspace/flows")).unwrap();
        std::fs::create_dir_all(dir.join("temp")).unwrap();
        Job { dir }
    }

    fn workspace(&self) -> PathBuf {
        self.dir.join("workspace")
    }

    fn put_example(&self, example: &str, as_name: &str) {
        std::fs::copy(manifest_dir().join("examples").join(example), self.workspace().join("flows").join(as_name))
            .unwrap();
    }

    /// Runs one of the action's scripts as GitHub runs a step: in the workspace, with its
    /// variables, `PATH` being `path`.
    fn step(&self, script: &str, path: &str, env: &[(&str, &str)]) -> Output {
        let mut command = Command::new("bash");
        command
            .arg(manifest_dir().join("scripts/action").join(script))
            .current_dir(self.workspace())
            .env_clear()
            .env("PATH", path)
            .env("HOME", &self.dir)
            .env("NO_COLOR", "1")
            .env("CI", "true")
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_WORKSPACE", self.workspace())
            .env("GITHUB_ACTION_PATH", manifest_dir())
            .env("GITHUB_PATH", self.dir.join("github_path"))
            .env("GITHUB_OUTPUT", self.dir.join("github_output"))
            .env("RUNNER_TEMP", self.dir.join("temp"))
            .env("RUNNER_OS", "Linux");
        for (name, value) in env {
            command.env(name, value);
        }
        command.output().expect("bash runs")
    }

    fn file(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.join(name)).unwrap_or_default()
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn path_with_little() -> String {
    format!("{}:/usr/bin:/bin", little_bin_dir().display())
}

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

#[test]
fn a_faulty_draft_fails_the_step_with_annotations_and_a_sarif_report() {
    let job = Job::new("faulty");
    job.put_example("cycle.json", "cycle.json");
    job.put_example("quarterly-report.json", "report.json");
    let output = job.step(
        "check.sh",
        &path_with_little(),
        &[("INPUT_PATHS", "flows"), ("INPUT_ARGS", ""), ("INPUT_SARIF", "out.sarif")],
    );
    let shown = text(&output);
    assert_eq!(output.status.code(), Some(1), "{shown}");
    assert!(shown.contains("::error file=flows/cycle.json,line="), "{shown}");
    assert!(shown.contains("graph.cycle"), "{shown}");
    assert!(!shown.contains("::error file=flows/report.json"), "the intact draft has no error: {shown}");
    let sarif: Value = serde_json::from_str(&std::fs::read_to_string(job.workspace().join("out.sarif")).unwrap())
        .expect("the SARIF report is JSON");
    assert_eq!(sarif["version"], "2.1.0");
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert!(results.iter().any(|r| r["ruleId"] == "graph.cycle"), "{results:?}");
    assert_eq!(job.file("github_output"), "sarif=out.sarif\n");
}

#[test]
fn the_fixed_draft_passes_and_still_writes_sarif() {
    let job = Job::new("fixed");
    job.put_example("quarterly-report.json", "report.json");
    // The inputs' defaults: the whole workspace, `little.sarif`.
    let output = job.step("check.sh", &path_with_little(), &[]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert!(!text(&output).contains("::error"), "{}", text(&output));
    let sarif: Value =
        serde_json::from_str(&std::fs::read_to_string(job.workspace().join("little.sarif")).unwrap()).unwrap();
    // Only what does not block (no context or bindings were given).
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert!(results.iter().all(|r| r["level"] != "error" && r["properties"]["blocking"] == false), "{results:?}");
    assert_eq!(job.file("github_output"), "sarif=little.sarif\n");
}

#[test]
fn extra_arguments_reach_little_check() {
    let job = Job::new("args");
    job.put_example("quarterly-report.json", "report.json");
    let output = job.step(
        "check.sh",
        &path_with_little(),
        &[("INPUT_PATHS", "flows/report.json"), ("INPUT_ARGS", "--context flows/missing.json")],
    );
    let shown = text(&output);
    assert_eq!(output.status.code(), Some(2), "a context that is not there is little's error: {shown}");
    assert!(shown.contains("missing.json"), "{shown}");
}

#[test]
fn a_cached_little_is_put_on_the_path_without_a_build() {
    let job = Job::new("cached");
    let root = job.dir.join("tool-cache/little/v1");
    std::fs::create_dir_all(root.join("bin")).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_little"), root.join("bin/little")).unwrap();
    // No cargo on this PATH: a cache hit must not need it.
    let output = job.step("install.sh", "/usr/bin:/bin", &[("LITTLE_ROOT", root.to_str().unwrap())]);
    let shown = text(&output);
    assert_eq!(output.status.code(), Some(0), "{shown}");
    assert!(shown.contains("from the cache"), "{shown}");
    assert_eq!(job.file("github_path"), format!("{}\n", root.join("bin").display()));
}

#[test]
fn without_cargo_or_a_cache_the_install_step_says_what_is_missing() {
    let job = Job::new("nocargo");
    let root = job.dir.join("tool-cache/little/v1");
    let output = job.step("install.sh", "/usr/bin:/bin", &[("LITTLE_ROOT", root.to_str().unwrap())]);
    let shown = text(&output);
    assert_eq!(output.status.code(), Some(2), "{shown}");
    assert!(shown.contains("::error title=little::cargo is needed"), "{shown}");
    assert_eq!(job.file("github_path"), "", "nothing is put on the PATH");
}

#[test]
fn the_action_runs_both_scripts_with_every_input_they_read() {
    let action = std::fs::read_to_string(manifest_dir().join("action.yml")).unwrap();
    for script in ["install.sh", "check.sh"] {
        assert!(action.contains(&format!("$GITHUB_ACTION_PATH/scripts/action/{script}")), "{script}");
        let body = std::fs::read_to_string(manifest_dir().join("scripts/action").join(script)).unwrap();
        for name in body.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|w| w.starts_with("INPUT_")) {
            assert!(
                action.contains(&format!("{name}: ${{{{ inputs.")),
                "{script} reads {name}, which action.yml does not set"
            );
        }
    }
}
