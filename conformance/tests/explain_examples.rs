//! Every explanation page holds a failing and a fixed example. For every code a draft or
//! an LWIR can get, the failing document gets exactly that code (no other error or
//! warning) and the fixed one gets none: no false positive, no cascade.

use little_conformance::pages::{Example, examples};
use little_conformance::{check_text, codes};
use little_diagnostics::Code;

/// Codes whose examples are not documents `little check` reads (the planner pipeline's
/// runs): their pages are checked by the pipeline's own suite.
fn is_pipeline_side(code: Code) -> bool {
    code.as_str().starts_with("pipeline.")
}

fn names(codes: &[Code]) -> Vec<&'static str> {
    codes.iter().map(|c| c.as_str()).collect()
}

#[test]
fn every_code_has_a_page_with_both_examples() {
    for &code in Code::ALL {
        let page = code.explanation();
        assert!(
            page.starts_with(&format!("# {}\n", code.as_str())),
            "{}: page must start with its title",
            code.as_str()
        );
        let severity = if code.blocking() {
            format!("**{}**, blocking.", code.severity())
        } else {
            format!("**{}**, not blocking.", code.severity())
        };
        assert!(page.contains(&severity), "{}: page must say `{severity}`", code.as_str());
        assert!(page.contains(code.summary()), "{}: page must carry the registry summary", code.as_str());
        examples(page).unwrap_or_else(|e| panic!("{}: {e}", code.as_str()));
    }
}

#[test]
fn failing_examples_get_exactly_their_code_and_fixed_ones_get_none() {
    let mut failures = Vec::new();
    for &code in Code::ALL {
        if is_pipeline_side(code) {
            continue;
        }
        let pages = examples(code.explanation()).expect("checked above");
        // Errors and warnings, and the page's own code when it is an `info` one.
        let observed = |example: &Example| {
            let report = check_text(&example.document, &example.setup());
            let mut found = codes(&report);
            if code.severity() == little_diagnostics::Severity::Info
                && report.diagnostics.iter().any(|d| d.code == code)
            {
                found.push(code);
            }
            found
        };
        let failing = observed(&pages.failing);
        let fixed = observed(&pages.fixed);
        if failing != [code] {
            failures.push(format!("{}: failing example got {:?}", code.as_str(), names(&failing)));
        }
        if !fixed.is_empty() {
            failures.push(format!("{}: fixed example got {:?}", code.as_str(), names(&fixed)));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
