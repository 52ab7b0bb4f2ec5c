//! Snapshots of `little check` on every bundled example, human and JSON.

mod common;

use common::{examples, quiet};

fn little(args: &[&str]) -> (String, i32) {
    quiet(common::little(args))
}

#[test]
fn examples_render_as_snapshotted() {
    let expected_exit =
        |name: &str| if ["quarterly-report.json", "support-triage.json"].contains(&name) { 0 } else { 1 };
    for name in examples() {
        let path = format!("examples/{name}");
        let stem = name.trim_end_matches(".json");
        let setup = ["--context", "examples/context.json", "--bindings", "examples/bindings.json"];
        let (human, code) = little(&[&["check", &path][..], &setup].concat());
        assert_eq!(code, expected_exit(&name), "{name}:\n{human}");
        insta::assert_snapshot!(format!("{stem}.human"), human);
        let (json, code) = little(&[&["check", &path, "--format", "json"][..], &setup].concat());
        assert_eq!(code, expected_exit(&name));
        insta::assert_snapshot!(format!("{stem}.json"), json);
        // Byte-identical on a second run.
        assert_eq!(little(&[&["check", &path, "--format", "json"][..], &setup].concat()).0, json);
    }
}

#[test]
fn without_context_and_rows_the_report_says_what_was_not_checked() {
    let (human, code) = little(&["check", "examples/quarterly-report.json"]);
    assert_eq!(code, 0, "{human}");
    assert!(human.contains("info[request.context_unavailable]"), "{human}");
    assert!(human.contains("agent.binding_status_unavailable"), "{human}");
    insta::assert_snapshot!("quarterly-report.no-context.human", human);
    let (json, _) = little(&["check", "examples/quarterly-report.json", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["files"][0]["candidate"]["bindingStatus"], "unknown");
}

#[test]
fn lwir_examples_render_as_snapshotted() {
    let snapshot = ["--snapshot", "examples/lwir/snapshot.json"];
    for (name, exit) in [("faulty-plan", 1), ("summarize-ticket", 0)] {
        let path = format!("examples/lwir/{name}.lwir.json");
        let (human, code) = little(&[&["check", &path][..], &snapshot].concat());
        assert_eq!(code, exit, "{name}:\n{human}");
        insta::assert_snapshot!(format!("lwir-{name}.human"), human);
        let (json, code) = little(&[&["check", &path, "--format", "json"][..], &snapshot].concat());
        assert_eq!(code, exit);
        insta::assert_snapshot!(format!("lwir-{name}.json"), json);
    }
    // Without the snapshot the binding checks are skipped, and the report says so.
    let (human, code) = little(&["check", "examples/lwir/summarize-ticket.lwir.json"]);
    assert_eq!(code, 0, "{human}");
    assert!(human.contains("info[binding.snapshot_unavailable]"), "{human}");
}
