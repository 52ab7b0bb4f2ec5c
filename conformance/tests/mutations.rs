//! Every code a draft can get, injected into generated valid drafts
//! (conformance/src/mutations.rs): the report holds exactly one error or warning, of that
//! code (no cascade), on the node or edge the mutation touched, and a candidate is issued
//! if and only if the code does not block. A mutation whose one fault is reported at each
//! node it touches says so (`Mutation::several`); its report holds only its code.
//!
//! Every line of docs/reference/diagnostics.md#one-fault-one-diagnostic is proven by at least one mutation tagged with it
//! (`Mutation::rule`), and the README lists every mutation.
//!
//! `every_mutation_injects_exactly_its_code` walks a fixed series of generated drafts, so
//! every mutation is proven on every CI run; `mutations_hold_on_random_drafts` explores
//! (`PROPTEST_CASES=100000` to soak).

use std::collections::BTreeSet;

use little_conformance::mutations::{self, Injected, Mutation, Rule};
use little_conformance::strategies::{self, ValidDraft};
use little_conformance::{Setup, check_text, check_text_with, codes};
use little_diagnostics::{Code, Diagnostic, Severity};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{FileFailurePersistence, TestRunner};

/// What the report of an injected draft must be; `Err` says how it differs.
fn verify(mutation: &Mutation, case: &Injected) -> Result<(), String> {
    let report = check_text(&case.text, &case.setup);
    let found = codes(&report);
    let code = case.code;
    let mut problems = Vec::new();
    // Batch inputs (no dependencies recorded) and editable ones report the same.
    if check_text_with(&case.text, &case.setup, salsa::Durability::LOW) != report {
        problems.push("an editable database (the language server's) reports differently".to_string());
    }
    if let Some(difference) = little_conformance::batch_differs(&case.text, &case.setup) {
        problems.push(difference);
    }
    if found != [code] {
        problems.push(format!(
            "codes {:?}, expected exactly [{}]",
            found.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
            code.as_str()
        ));
    }
    let loud: Vec<&Diagnostic> =
        report.diagnostics.iter().filter(|d| matches!(d.severity(), Severity::Error | Severity::Warning)).collect();
    if mutation.several.is_none() && loud.len() != 1 {
        problems.push(format!("{} errors and warnings, expected exactly one", loud.len()));
    }
    if report.candidate.is_some() == code.blocking() {
        problems.push(format!(
            "candidate issued: {}, but the code blocks: {}",
            report.candidate.is_some(),
            code.blocking()
        ));
    }
    // With one diagnostic, it is the one that names the element; with several (a shared
    // document's fault), one of them does.
    let ours = || loud.iter().filter(|d| d.code == code);
    if let Some(node) = &case.node
        && !ours().any(|d| d.node_id.as_ref() == Some(node))
    {
        problems.push(format!("no {} diagnostic names node `{node}`", code.as_str()));
    }
    if let Some(edge) = &case.edge
        && !ours().any(|d| d.edge_id.as_ref() == Some(edge))
    {
        problems.push(format!("no {} diagnostic names edge `{edge}`", code.as_str()));
    }
    if problems.is_empty() {
        return Ok(());
    }
    let diagnostics: Vec<String> = report
        .diagnostics
        .iter()
        .map(|d| format!("  {} {:?} {:?}: {}", d.code.as_str(), d.node_id, d.edge_id, d.message))
        .collect();
    Err(format!(
        "mutation `{}` ({}){}:\n{}\ndiagnostics:\n{}\ndraft:\n{}\ncontext: {:?}\nbindings: {:?}{}",
        code.as_str(),
        mutation.does,
        mutation
            .rule
            .map(|r| format!(", docs/reference/diagnostics.md#one-fault-one-diagnostic: {}", r.line()))
            .unwrap_or_default(),
        problems.join("\n"),
        diagnostics.join("\n"),
        case.text,
        case.setup.context,
        case.setup.bindings,
        if case.setup.catalog.is_some() { "\ncatalog: the default one and `report.compare`" } else { "" }
    ))
}

/// The codes a draft can get: every error and warning outside the LWIR, definition and pipeline layers.
fn draft_codes() -> BTreeSet<Code> {
    const NOT_DRAFT: [&str; 6] = ["lwir.", "schema.", "template.", "binding.", "pipeline.", "definition."];
    Code::ALL
        .iter()
        .copied()
        .filter(|c| c.severity() != Severity::Info && !NOT_DRAFT.iter().any(|p| c.as_str().starts_with(p)))
        .collect()
}

#[test]
fn every_draft_code_has_a_mutation_and_no_two_do_the_same() {
    let mut does = BTreeSet::new();
    for mutation in mutations::all() {
        assert!(does.insert(mutation.does), "two mutations {:?}", mutation.does);
        assert!(draft_codes().contains(&mutation.code), "`{}` is not a draft code", mutation.code.as_str());
    }
    let seen: BTreeSet<Code> = mutations::all().iter().map(|m| m.code).collect();
    let missing: Vec<&str> = draft_codes().difference(&seen).map(|c| c.as_str()).collect();
    assert!(missing.is_empty(), "draft codes without a mutation: {missing:?}");
}

#[test]
fn every_line_of_spec_2_1_has_a_mutation() {
    let missing: Vec<&str> = Rule::ALL
        .iter()
        .filter(|rule| !mutations::all().iter().any(|m| m.rule == Some(**rule)))
        .map(|rule| rule.line())
        .collect();
    assert!(
        missing.is_empty(),
        "lines of docs/reference/diagnostics.md#one-fault-one-diagnostic no mutation proves: {missing:#?}"
    );
}

/// The README's list of mutations, as it must read.
fn readme_table() -> String {
    let mut table = String::from("| code | what the mutation does | no-cascade rule proven |\n|---|---|---|\n");
    for m in mutations::all() {
        let rule = m.rule.map_or(String::new(), |r| r.name().to_string());
        table.push_str(&format!("| `{}` | {} | {} |\n", m.code.as_str(), m.does, rule));
    }
    table
}

#[test]
fn the_readme_lists_every_mutation() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).expect("README.md");
    let table = readme_table();
    assert!(readme.contains(&table), "the README's list of mutations is not (replace it with):\n{table}");
    for rule in Rule::ALL {
        let row = format!("| {} | {} |", rule.name(), rule.line());
        assert!(readme.contains(&row), "the README's legend lacks the row `{row}`");
    }
}

/// The family the several-input mutations add checks clean where they put it: a fault
/// found with it is the mutation's.
#[test]
fn the_comparison_family_checks_clean() {
    let mut proven = 0;
    for valid in drafts(20) {
        let mut draft = valid.draft.clone();
        let Some(fetch) =
            draft["nodes"].as_array().unwrap().iter().find(|n| n["family"] == "dataset.retrieve").cloned()
        else {
            continue;
        };
        let fetch = fetch["id"].as_str().unwrap();
        draft["nodes"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({ "id": "compare_new", "family": "report.compare", "config": {} }));
        for (id, port) in [("c1", "baseline"), ("c2", "current")] {
            draft["edges"].as_array_mut().unwrap().push(serde_json::json!({
                "id": id, "from": { "node": fetch, "port": "dataset" }, "to": { "node": "compare_new", "port": port }
            }));
        }
        let setup = Setup { catalog: Some(mutations::catalog_with_compare().to_string()), ..valid.setup() };
        let report = check_text(&serde_json::to_string_pretty(&draft).unwrap(), &setup);
        assert_eq!(codes(&report), [], "{:#?}", report.diagnostics);
        proven += 1;
    }
    assert!(proven > 0);
}

/// Generated drafts in a fixed order (proptest's deterministic runner).
fn drafts(count: usize) -> Vec<ValidDraft> {
    let mut runner = TestRunner::deterministic();
    let strategy = strategies::valid_draft();
    (0..count).map(|_| strategy.new_tree(&mut runner).expect("generates").current()).collect()
}

#[test]
fn every_mutation_injects_exactly_its_code() {
    const DRAFTS: usize = 40;
    const AT_LEAST: usize = 5;
    let drafts = drafts(DRAFTS);
    let mut failures = Vec::new();
    for mutation in mutations::all() {
        let mut proven = 0;
        for (i, valid) in drafts.iter().enumerate() {
            let Some(case) = mutation.inject(valid, 0x9E37_79B9 + i as u64) else { continue };
            match verify(mutation, &case) {
                Ok(()) => proven += 1,
                Err(message) => {
                    failures.push(message);
                    break;
                }
            }
        }
        if proven < AT_LEAST && failures.is_empty() {
            failures.push(format!(
                "`{}` ({}) applied to only {proven} of {DRAFTS} drafts (want {AT_LEAST})",
                mutation.code.as_str(),
                mutation.does
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A mutation marked as reported several times is, on some draft of the series: the mark
/// does not outlive its reason.
#[test]
fn a_mutation_marked_several_is_reported_several_times() {
    let drafts = drafts(40);
    let stale: Vec<&str> = mutations::all()
        .iter()
        .filter(|m| m.several.is_some())
        .filter(|m| {
            !drafts.iter().enumerate().any(|(i, valid)| {
                m.inject(valid, 0x9E37_79B9 + i as u64).is_some_and(|case| {
                    let report = check_text(&case.text, &case.setup);
                    report.diagnostics.iter().filter(|d| d.code == m.code).count() > 1
                })
            })
        })
        .map(|m| m.does)
        .collect();
    assert!(stale.is_empty(), "marked `several` but reported once on every draft: {stale:?}");
}

fn config() -> ProptestConfig {
    let mut config = ProptestConfig::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = 64;
    }
    config.failure_persistence =
        Some(Box::new(FileFailurePersistence::Direct("tests/regressions/mutations.proptest-regressions")));
    config
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn mutations_hold_on_random_drafts(
        valid in strategies::valid_draft(),
        which in any::<prop::sample::Index>(),
        seed in any::<u64>(),
    ) {
        let mutation = which.get(mutations::all());
        if let Some(case) = mutation.inject(&valid, seed)
            && let Err(message) = verify(mutation, &case)
        {
            prop_assert!(false, "{}", message);
        }
    }
}
