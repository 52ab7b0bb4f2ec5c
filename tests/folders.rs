//! `little check FOLDER`: the drafts below a folder, checked in parallel from one
//! database, give what checking them one by one gives, in a deterministic order; and the
//! limits that keep a CI runner safe.

mod common;

use std::path::{Path, PathBuf};

use common::little;
use serde_json::Value;

/// A folder of `count` generated drafts, every seventh with a fault, plus JSON files that
/// are not drafts (skipped) in nested folders.
fn repository(tag: &str, count: usize) -> PathBuf {
    let root = std::env::temp_dir().join(format!("little-folders-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    for i in 0..count {
        let dir = root.join(format!("team{}", i % 5));
        std::fs::create_dir_all(&dir).unwrap();
        let mut text = little_conformance::generate::draft(20 + i % 30, i as u64);
        if i % 7 == 0 {
            // A typo'd family: one catalog.unknown_family, no cascade.
            text = text.replacen("\"dataset.retrieve\"", "\"dataset.retreive\"", 1);
        }
        std::fs::write(dir.join(format!("draft-{i:03}.json")), text).unwrap();
    }
    std::fs::write(root.join("package.json"), r#"{ "name": "not-a-draft" }"#).unwrap();
    std::fs::write(root.join("team0/settings.json"), "[1, 2, 3]").unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".git/config.json"), "{}").unwrap();
    root
}

fn report(args: &[&str]) -> (i32, Value) {
    let run = little(args);
    (run.code, serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}{}", run.stdout, run.stderr)))
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn a_folder_checks_like_its_files_one_by_one() {
    let root = repository("same", 200);
    let (code, folder) = report(&["check", s(&root), "--format", "json", "--jobs", "2"]);
    assert_eq!(code, 1, "some drafts carry a fault");
    let files = folder["files"].as_array().unwrap();
    assert_eq!(files.len(), 200, "the two non-draft JSON files and .git are skipped");
    // Deterministic order: sorted paths.
    let paths: Vec<&str> = files.iter().map(|f| f["path"].as_str().unwrap()).collect();
    let mut sorted = paths.clone();
    sorted.sort();
    assert_eq!(paths, sorted);
    for file in files {
        let path = file["path"].as_str().unwrap();
        let (_, alone) = report(&["check", path, "--format", "json"]);
        assert_eq!(&alone["files"][0], file, "{path}");
    }
    let faulty = files.iter().filter(|f| f["candidate"].is_null()).count();
    assert_eq!(faulty, (0..200).filter(|i| i % 7 == 0).count());
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn one_job_and_two_jobs_print_the_same_bytes() {
    let root = repository("jobs", 60);
    let one = little(["check", s(&root), "--format", "json", "--jobs", "1"]);
    let two = little(["check", s(&root), "--format", "json", "--jobs", "2"]);
    assert_eq!(one.stdout, two.stdout);
    let human = little(["check", s(&root), "--jobs", "2"]);
    assert!(human.stdout.trim_end().ends_with("60 files: 9 errors, 0 warnings"), "{}", human.stdout);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn limits_are_tool_failures_with_a_clear_message() {
    let root = repository("limits", 3);
    let big = little(["check", s(&root), "--max-file-size", "1K"]);
    assert_eq!(big.code, 2);
    assert!(big.stderr.contains("over the limit") && big.stderr.contains("--max-file-size"), "{}", big.stderr);
    let nodes = little(["check", s(&root), "--max-nodes", "5"]);
    assert_eq!(nodes.code, 2);
    assert!(nodes.stderr.contains("nodes, over the limit of 5 (`--max-nodes`)"), "{}", nodes.stderr);
    let edges = little(["check", s(&root), "--max-edges", "5"]);
    assert_eq!(edges.code, 2);
    assert!(edges.stderr.contains("(`--max-edges`)"), "{}", edges.stderr);
    let bad = little(["check", s(&root), "--max-file-size", "lots"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("is not a size"), "{}", bad.stderr);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_file_named_explicitly_is_checked_whatever_it_is() {
    let root = repository("explicit", 1);
    let run = little(["check", s(&root.join("package.json"))]);
    assert_eq!(run.code, 1);
    assert!(run.stdout.contains("parse.unsupported_format"), "{}", run.stdout);
    std::fs::remove_dir_all(&root).unwrap();
}
