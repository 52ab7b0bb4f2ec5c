//! Every format over the same checked file (the bundled `examples/broken-wiring.json`
//! with the embedded catalog), snapshotted: what one view of a checked file looks like
//! in each. The binary's byte-for-byte goldens are `tests/outputs.rs` at the root.

use little_frontend::catalog::DEFAULT_CATALOG;
use little_passes::{Database, FileReport, SourceFile, Workspace, db::BATCH, report};
use little_render::{CheckedFile, github, graph, human, json, sarif};

const PATH: &str = "examples/broken-wiring.json";

fn draft() -> String {
    std::fs::read_to_string(format!("{}/../{PATH}", env!("CARGO_MANIFEST_DIR"))).expect("the bundled example")
}

/// The draft checked in a batch database, and the database (for the pictures).
fn checked(text: &str) -> (Database, Workspace, SourceFile, FileReport) {
    let db = Database::default();
    let catalog = SourceFile::with_durability(&db, "<embedded catalog>".into(), DEFAULT_CATALOG.into(), BATCH);
    let ws = Workspace::builder(catalog, None, None, None).durability(BATCH).new(&db);
    let file = SourceFile::with_durability(&db, PATH.into(), text.into(), BATCH);
    let report = report(&db, ws, file);
    (db, ws, file, report)
}

#[test]
fn every_format_of_one_checked_file() {
    let text = draft();
    let (db, ws, source, report) = checked(&text);
    let file = CheckedFile::of_report(PATH, &text, &report);
    assert!(file.blocking(), "the example has blocking faults");

    insta::assert_snapshot!("human", human::report(&[file], &human::HumanOptions::default()));
    insta::assert_snapshot!("json", serde_json::to_string_pretty(&json::report_json(&[file])).unwrap());
    let log = sarif::sarif(&[file], 1);
    insta::assert_snapshot!("sarif_results", serde_json::to_string_pretty(&log["runs"][0]["results"]).unwrap());
    insta::assert_snapshot!("github", github::annotations(&[file]));
    insta::assert_snapshot!("dot", graph::draw(&db, ws, source, &file, graph::Picture::Dot).unwrap());
    insta::assert_snapshot!("mermaid", graph::draw(&db, ws, source, &file, graph::Picture::Mermaid).unwrap());
}

#[test]
fn the_human_summary_counts_every_file() {
    let text = draft();
    let (_db, _ws, _source, report) = checked(&text);
    let file = CheckedFile::of_report(PATH, &text, &report);
    let clean = CheckedFile::of_diagnostics("other.json", "{}", &[]);
    let out = human::report(&[file, clean], &human::HumanOptions::default());
    let count = |severity| report.diagnostics.iter().filter(|d| d.severity() == severity).count();
    let (errors, warnings) = (count(little_diagnostics::Severity::Error), count(little_diagnostics::Severity::Warning));
    assert!(errors > 1 && warnings == 1, "the example has faults of both kinds");
    assert!(out.ends_with(&format!("2 files: {errors} errors, 1 warning\n")), "{out}");
    assert!(out.contains(&format!("{PATH}: no candidate: a diagnostic blocks\n")), "{out}");
}
