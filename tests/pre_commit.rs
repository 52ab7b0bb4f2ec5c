//! The pre-commit hooks of `.pre-commit-hooks.yaml`, run by the real `pre-commit` (PyPI)
//! with `pre-commit try-repo` against a git repository of its own: a staged draft with a
//! fault fails the commit and shows the diagnostic; fixed, it passes; other JSON is passed
//! over. The hook tested is `little-check-installed` with this build's `little` on PATH
//! (`little-check` builds the same entry from the repository with cargo).
//!
//! `pre-commit` is found through `LITTLE_TEST_PRE_COMMIT` (`.ci/run` installs it in a venv);
//! without it the test says so and passes, except in CI (`CI=true`), where it fails.

use std::path::{Path, PathBuf};
use std::process::Command;

fn pre_commit() -> Option<PathBuf> {
    match std::env::var("LITTLE_TEST_PRE_COMMIT") {
        Ok(path) if !path.is_empty() => Some(PathBuf::from(path)),
        _ if std::env::var("CI").is_ok_and(|ci| ci == "true") => {
            panic!("LITTLE_TEST_PRE_COMMIT is not set, and CI must run the hooks with the real pre-commit")
        }
        _ => {
            eprintln!("skipped: LITTLE_TEST_PRE_COMMIT is not set (a pre-commit from PyPI: pip install pre-commit)");
            None
        }
    }
}

fn git(dir: &Path, args: &[&str]) {
    let output = Command::new("git").args(args).current_dir(dir).output().expect("git runs");
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
}

/// `pre-commit try-repo` of this repository's `hook` on `files` in `dir`: exit code and output.
fn try_repo(pre_commit: &Path, dir: &Path, hook: &str, files: &[&str]) -> (i32, String) {
    let little = PathBuf::from(env!("CARGO_BIN_EXE_little"));
    let path = format!("{}:{}", little.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    let output = Command::new(pre_commit)
        .args(["try-repo", env!("CARGO_MANIFEST_DIR"), hook, "--files"])
        .args(files)
        .current_dir(dir)
        .env("PATH", path)
        .env("PRE_COMMIT_HOME", dir.join(".pre-commit-home"))
        .env("NO_COLOR", "1")
        .output()
        .expect("pre-commit runs");
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.code().unwrap_or(-1), text)
}

#[test]
fn a_staged_draft_with_a_fault_fails_the_hook_and_passes_once_fixed() {
    let Some(pre_commit) = pre_commit() else { return };
    let dir = std::env::temp_dir().join(format!("little-pre-commit-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q"]);
    git(&dir, &["config", "user.email", "test@example.com"]);
    git(&dir, &["config", "user.name", "test"]);
    let example = |name: &str| {
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples").join(name)).unwrap()
    };
    std::fs::write(dir.join("flow.json"), example("cycle.json")).unwrap();
    std::fs::write(dir.join("package.json"), "{\"name\": \"not-a-draft\"}\n").unwrap();
    git(&dir, &["add", "flow.json", "package.json"]);

    let (code, output) = try_repo(&pre_commit, &dir, "little-check-installed", &["flow.json", "package.json"]);
    assert_eq!(code, 1, "a fault fails the hook:\n{output}");
    assert!(output.contains("graph.cycle") && output.contains("fetch -> report -> notify -> fetch"), "{output}");
    assert!(!output.contains("parse.unsupported_format"), "other JSON is passed over:\n{output}");

    std::fs::write(dir.join("flow.json"), example("quarterly-report.json")).unwrap();
    git(&dir, &["add", "flow.json"]);
    let (code, output) = try_repo(&pre_commit, &dir, "little-check-installed", &["flow.json", "package.json"]);
    assert_eq!(code, 0, "fixed, it passes:\n{output}");
    assert!(output.contains("Passed"), "{output}");

    let (code, output) = try_repo(&pre_commit, &dir, "little-check-installed", &["package.json"]);
    assert_eq!(code, 0, "no draft among the files: nothing to check:\n{output}");
    let _ = std::fs::remove_dir_all(&dir);
}
