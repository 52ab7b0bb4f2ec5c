//! `--jobs`: one draft checked on one thread or on several gives the same report, byte
//! for byte, in every format, on every bundled example and on generated drafts large
//! enough that every task of the batch driver runs (the node layers in several runs) and
//! that the outline is parsed on several threads.

mod common;

use std::path::Path;

use common::{examples, little};
use little_conformance::generate::{accepting_context, draft};
use little_frontend::reparse::DraftOutline;

/// The outputs of `little check FILE --format FORMAT --jobs N` for N = 1, 2, 4, equal.
fn same_on_any_thread_count(file: &Path, extra: &[&str]) {
    for format in ["json", "human", "sarif"] {
        let run = |jobs: &str| {
            let mut args = vec!["check", "--format", format, "--jobs", jobs];
            args.extend_from_slice(extra);
            args.push(file.to_str().expect("a UTF-8 path"));
            let run = little(&args);
            (run.code, run.stdout)
        };
        let one = run("1");
        assert!(!one.1.is_empty(), "{} printed nothing", file.display());
        for jobs in ["2", "4"] {
            assert!(run(jobs) == one, "{} --format {format}: --jobs {jobs} differs from --jobs 1", file.display());
        }
    }
}

#[test]
fn every_bundled_example_gets_the_same_report_on_any_thread_count() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let context = dir.join("context.json").display().to_string();
    let bindings = dir.join("bindings.json").display().to_string();
    for name in examples() {
        let file = dir.join(&name);
        same_on_any_thread_count(&file, &[]);
        same_on_any_thread_count(&file, &["--context", &context, "--bindings", &bindings]);
    }
}

#[test]
fn generated_drafts_get_the_same_report_on_any_thread_count() {
    let dir = std::env::temp_dir().join(format!("little-cli-jobs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let context = dir.join("context.json");
    std::fs::write(&context, accepting_context()).expect("written");
    let context = context.display().to_string();
    for (nodes, seed) in [(3, 1), (5_000, 2), (12_000, 3), (20_000, 4)] {
        let file = dir.join(format!("draft-{nodes}.json"));
        let text = draft(nodes, seed);
        // On several threads, the outline of these drafts is parsed in parallel, not whole.
        assert!(DraftOutline::parse_split(&text.as_str().into(), 2).is_some(), "{nodes} nodes: parsed whole");
        std::fs::write(&file, text).expect("written");
        same_on_any_thread_count(&file, &[]);
        same_on_any_thread_count(&file, &["--context", &context]);
        // A draft with faults: the findings of every task are merged in the same order.
        let broken =
            draft(nodes, seed).replace(r#""port":"in"}"#, r#""port":"nope"}"#).replace("notify.email", "notify.mail");
        std::fs::write(&file, broken).expect("written");
        same_on_any_thread_count(&file, &["--context", &context]);
    }
    std::fs::remove_dir_all(&dir).expect("removed");
}
