//! The pre-commit hooks of `.pre-commit-hooks.yaml`, run by the real `pre-commit` (PyPI)
//! with `pre-commit try-repo` against a git repository of its own: a staged draft with a
//! fault fails the commit and shows the diagnostic; fixed, it passes; other JSON is passed
//! over. Both hooks run the same scenario: `little-check-installed` with this build's
//! `little` on PATH, and `little-check`, which pre-commit builds from a clone of the
//! repository with `cargo install`. That build is given this workspace's target folder
//! (`CARGO_TARGET_DIR`), so it reuses the release build of the dependencies that `cargo
//! install --path .` left there (`.ci/run` installs before it tests) and recompiles the
//! workspace's own crates, whose clone is newer than their outputs. Still minutes, so it
//! runs only when `LITTLE_TEST_PRE_COMMIT_RUST=1` (docs/decisions.md says why).
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

/// How a hook finds `little`.
#[derive(Clone, Copy)]
enum Hook {
    /// `little-check-installed`, with this build's `little` first on PATH.
    Installed,
    /// `little-check`, built by pre-commit from the repository's last commit (a fixed ref,
    /// so that every run reuses the one build) in this workspace's target folder.
    Built,
}

/// The workspace's target folder, where `cargo install --path .` leaves its release build.
/// Absolute, since pre-commit runs cargo in its clone.
fn target_dir() -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| workspace.join("target"), |dir| workspace.join(dir))
}

/// `pre-commit try-repo` of this repository's `hook` on `files` in `dir`: exit code and output.
fn try_repo(pre_commit: &Path, dir: &Path, hook: Hook, files: &[&str]) -> (i32, String) {
    let mut path = std::env::var("PATH").unwrap_or_default();
    let mut command = Command::new(pre_commit);
    command.args(["try-repo", env!("CARGO_MANIFEST_DIR")]);
    match hook {
        Hook::Installed => {
            let little = PathBuf::from(env!("CARGO_BIN_EXE_little"));
            path = format!("{}:{path}", little.parent().unwrap().display());
            command.arg("little-check-installed");
        }
        Hook::Built => {
            let head = Command::new("git")
                .args(["rev-parse", "HEAD"])
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .output()
                .expect("git runs");
            let head = String::from_utf8(head.stdout).unwrap();
            command.args(["little-check", "--ref", head.trim()]);
            command.env("CARGO_TARGET_DIR", target_dir());
        }
    }
    let output = command
        .arg("--files")
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
    staged_draft_scenario(&pre_commit, Hook::Installed);
}

#[test]
fn the_hook_built_from_the_repository_fails_a_fault_and_passes_once_fixed() {
    if std::env::var("LITTLE_TEST_PRE_COMMIT_RUST").as_deref() != Ok("1") {
        eprintln!("skipped: LITTLE_TEST_PRE_COMMIT_RUST is not 1 (the hook builds little in release: minutes)");
        return;
    }
    let Some(pre_commit) = pre_commit() else { return };
    staged_draft_scenario(&pre_commit, Hook::Built);
}

/// A fault fails the hook and shows the diagnostic; fixed, it passes; other JSON alone
/// is nothing to check.
fn staged_draft_scenario(pre_commit: &Path, hook: Hook) {
    let which = match hook {
        Hook::Installed => "installed",
        Hook::Built => "built",
    };
    let dir = std::env::temp_dir().join(format!("little-pre-commit-{}-{which}", std::process::id()));
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

    // The first call installs the hook's environment (for `little-check`, the build).
    let started = std::time::Instant::now();
    let (code, output) = try_repo(pre_commit, &dir, hook, &["flow.json", "package.json"]);
    eprintln!("the {which} hook's first run, its install included: {:.1} s", started.elapsed().as_secs_f64());
    assert_eq!(code, 1, "a fault fails the hook:\n{output}");
    assert!(output.contains("graph.cycle") && output.contains("fetch -> report -> notify -> fetch"), "{output}");
    assert!(!output.contains("parse.unsupported_format"), "other JSON is passed over:\n{output}");

    std::fs::write(dir.join("flow.json"), example("quarterly-report.json")).unwrap();
    git(&dir, &["add", "flow.json"]);
    let (code, output) = try_repo(pre_commit, &dir, hook, &["flow.json", "package.json"]);
    assert_eq!(code, 0, "fixed, it passes:\n{output}");
    assert!(output.contains("Passed"), "{output}");

    let (code, output) = try_repo(pre_commit, &dir, hook, &["package.json"]);
    assert_eq!(code, 0, "no draft among the files: nothing to check:\n{output}");
    let _ = std::fs::remove_dir_all(&dir);
}
