//! The batch driver (no database: `little check`, `compile`, `hash`, `graph`) and the
//! database's queries (the editor, the packages' `Workspace`) call the same rule
//! functions: on generated drafts, every bundled example, every explanation page's
//! examples and the fixtures, they give the same report (diagnostics, hashes, candidate)
//! and the same compiled topology. (The mutation suite compares them on every mutation.)

use std::path::Path;

use little_conformance::generate::{accepting_context, draft};
use little_conformance::pages::examples;
use little_conformance::{Setup, batch_check_text, batch_differs, check_text};
use little_diagnostics::Code;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every difference between the drivers on `cases`, named.
fn differences<'a>(cases: impl IntoIterator<Item = (String, &'a str, Setup)>) -> Vec<String> {
    let mut checked = 0;
    let found: Vec<String> = cases
        .into_iter()
        .filter_map(|(name, text, setup)| {
            checked += 1;
            batch_differs(text, &setup).map(|d| format!("{name}: {d}"))
        })
        .collect();
    assert!(checked > 0, "no case was checked");
    found
}

#[test]
fn generated_drafts_get_the_same_report_and_topology() {
    let with_context = Setup {
        context: Some(accepting_context()),
        bindings: Some(r#"{"format":"agent-bindings/v1","rows":[]}"#.into()),
        ..Setup::default()
    };
    let texts: Vec<(usize, u64, String)> = [0usize, 1, 2, 3, 17, 200, 1_000, 5_000]
        .into_iter()
        .flat_map(|nodes| (0..2u64).map(move |seed| (nodes, seed)))
        .map(|(nodes, seed)| (nodes, seed, draft(nodes, seed)))
        .collect();
    let cases = texts.iter().flat_map(|(nodes, seed, text)| {
        [("without context", Setup::default()), ("with context and rows", with_context.clone())]
            .into_iter()
            .map(move |(how, setup)| (format!("{nodes} nodes, seed {seed}, {how}"), text.as_str(), setup))
    });
    let found = differences(cases);
    assert!(found.is_empty(), "{}", found.join("\n\n"));
    // The comparison is not vacuous: the batch driver issues the candidate the drafts earn.
    let (report, topology) = batch_check_text(&draft(1_000, 7), &Setup::default()).expect("a draft");
    assert!(report.draft_candidate().is_some() && topology.is_some());
}

#[test]
fn bundled_examples_get_the_same_report_and_topology() {
    let examples = root().join("examples");
    let setups = [
        ("no context", Setup::default()),
        (
            "context and rows",
            Setup {
                context: Some(read(&examples.join("context.json"))),
                bindings: Some(read(&examples.join("bindings.json"))),
                ..Setup::default()
            },
        ),
    ];
    let mut files: Vec<_> = std::fs::read_dir(&examples)
        .expect("examples/")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    for fixture in std::fs::read_dir(root().join("conformance/tests/fixtures")).expect("fixtures") {
        files.push(fixture.expect("an entry").path());
    }
    files.push(examples.join("support-summarize-ticket/definition.json"));
    files.sort();
    let texts: Vec<(String, String)> = files.iter().map(|p| (p.display().to_string(), read(p))).collect();
    let cases = texts.iter().flat_map(|(name, text)| {
        setups.iter().map(move |(how, setup)| (format!("{name} ({how})"), text.as_str(), setup.clone()))
    });
    let found = differences(cases);
    assert!(found.is_empty(), "{}", found.join("\n\n"));
    let demo = read(&examples.join("quarterly-report.json"));
    assert_eq!(batch_check_text(&demo, &Setup::default()).map(|(r, _)| r), Some(check_text(&demo, &Setup::default())));
}

#[test]
fn explanation_page_examples_get_the_same_report() {
    let pages: Vec<(Code, little_conformance::pages::PageExamples)> =
        Code::ALL.iter().filter_map(|&code| Some((code, examples(code.explanation()).ok()?))).collect();
    let cases = pages.iter().flat_map(|(code, page)| {
        [("failing", &page.failing), ("fixed", &page.fixed)].into_iter().map(move |(which, example)| {
            (format!("{} ({which})", code.as_str()), example.document.as_str(), example.setup())
        })
    });
    let found = differences(cases);
    assert!(found.is_empty(), "{}", found.join("\n\n"));
}
