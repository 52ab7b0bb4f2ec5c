//! Every code a draft can get, injected into generated valid drafts
//! (conformance/src/mutations.rs): the report holds exactly that error or warning code
//! (no cascade), on the node or edge the mutation touched, and a candidate is issued if
//! and only if the code does not block.
//!
//! `every_mutation_injects_exactly_its_code` walks a fixed series of generated drafts, so
//! every mutation is proven on every CI run; `mutations_hold_on_random_drafts` explores
//! (`PROPTEST_CASES=100000` to soak).

use std::collections::BTreeSet;

use little_conformance::mutations::{self, Injected, Mutation};
use little_conformance::strategies::{self, ValidDraft};
use little_conformance::{check_text, check_text_with, codes};
use little_diagnostics::{Code, Severity};
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
    if found != [code] {
        problems.push(format!(
            "codes {:?}, expected exactly [{}]",
            found.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
            code.as_str()
        ));
    }
    if report.candidate.is_some() == code.blocking() {
        problems.push(format!(
            "candidate issued: {}, but the code blocks: {}",
            report.candidate.is_some(),
            code.blocking()
        ));
    }
    let ours = || report.diagnostics.iter().filter(|d| d.code == code);
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
        "mutation `{}` ({}):\n{}\ndiagnostics:\n{}\ndraft:\n{}\ncontext: {:?}\nbindings: {:?}",
        code.as_str(),
        mutation.does,
        problems.join("\n"),
        diagnostics.join("\n"),
        case.text,
        case.setup.context,
        case.setup.bindings
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
fn every_draft_code_has_exactly_one_mutation() {
    let mut seen = BTreeSet::new();
    for mutation in mutations::all() {
        assert!(seen.insert(mutation.code), "two mutations for {}", mutation.code.as_str());
    }
    let missing: Vec<&str> = draft_codes().difference(&seen).map(|c| c.as_str()).collect();
    assert!(missing.is_empty(), "draft codes without a mutation: {missing:?}");
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
                "`{}` applied to only {proven} of {DRAFTS} drafts (want {AT_LEAST})",
                mutation.code.as_str()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
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
