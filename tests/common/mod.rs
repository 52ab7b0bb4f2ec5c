//! What the binary's integration tests share: running `little`, and the fixtures.

#![allow(dead_code)] // each test file uses its own part

pub mod model;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What one run of the binary produced.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `little` with colour off, and fails the test on a panic or a signal.
pub fn little<I, S>(args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    little_in(Path::new(env!("CARGO_MANIFEST_DIR")), args)
}

/// [`little`], run in `dir`.
pub fn little_in<I, S>(dir: &Path, args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let output = Command::new(env!("CARGO_BIN_EXE_little"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("the little binary runs");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let code = output.status.code().unwrap_or_else(|| panic!("little was killed by a signal; stderr:\n{stderr}"));
    assert!(!stderr.contains("panicked"), "little panicked:\n{stderr}");
    assert_ne!(code, 101, "little panicked:\n{stderr}");
    Run { code, stdout: String::from_utf8_lossy(&output.stdout).into_owned(), stderr }
}

/// stdout and exit code of a run that must print nothing on stderr.
pub fn quiet(run: Run) -> (String, i32) {
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    (run.stdout, run.code)
}

/// Every example draft in examples/ (not the context or binding rows), sorted.
pub fn examples() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("examples/")
        .map(|e| e.expect("an entry").file_name().into_string().expect("UTF-8 name"))
        .filter(|n| n.ends_with(".json") && n != "context.json" && n != "bindings.json")
        .collect();
    names.sort();
    names
}

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// A file of the worked example of the compile pipeline (`examples/support-summarize-ticket/`).
pub fn worked_example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/support-summarize-ticket").join(name)
}

/// `little plan` of the worked example with the external planner `planner` (a shell
/// command), run `run_id`, its log `events.jsonl` in `dir`, and `extra`.
pub fn external_plan_args(dir: &Path, planner: &str, run_id: &str, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = vec![
        "plan".into(),
        worked_example("definition.json").display().to_string(),
        "--input".into(),
        worked_example("input.json").display().to_string(),
        "--planner".into(),
        planner.into(),
        "--run-id".into(),
        run_id.into(),
        "--events".into(),
        dir.join("events.jsonl").display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args
}

/// A fresh folder under the temporary directory for one test: `<prefix>-<pid>-<name>`.
pub fn fresh_dir(prefix: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("{prefix}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
