//! Every did-you-mean of every explanation page's failing example gets a fix, and applying
//! it makes that diagnostic go away.

use little_conformance::{Setup, check_text, pages};
use little_diagnostics::Code;

#[test]
fn every_did_you_mean_on_the_pages_is_fixed_by_its_code_action() {
    let mut fixed = 0;
    for &code in Code::ALL {
        let Ok(examples) = pages::examples(code.explanation()) else { continue };
        let failing = examples.failing;
        if !failing.extra.is_empty() {
            continue;
        }
        let setup = Setup {
            catalog: None,
            context: failing.context.clone(),
            bindings: failing.bindings.clone(),
            snapshot: failing.snapshot.clone(),
        };
        let text = &failing.document;
        let report = check_text(text, &setup);
        let tree = little_frontend::json::parse(text).tree;
        for diagnostic in
            report.diagnostics.iter().filter(|d| d.help.as_deref().is_some_and(|h| h.starts_with("did you mean `")))
        {
            let tree = tree.as_ref().expect("a diagnostic with help comes from a parsed document");
            let fix = little_lsp::analysis::fix(tree, diagnostic)
                .unwrap_or_else(|| panic!("{}: no fix for {diagnostic:?}", code.as_str()));
            let mut edited = text.clone();
            edited.replace_range(fix.span.start as usize..fix.span.end as usize, &fix.replacement);
            let after = check_text(&edited, &setup);
            assert!(
                !after.diagnostics.iter().any(|d| d.code == diagnostic.code && d.message == diagnostic.message),
                "{}: the fix `{}` left {diagnostic:?}",
                code.as_str(),
                fix.replacement
            );
            fixed += 1;
        }
    }
    assert!(fixed >= 5, "only {fixed} did-you-mean diagnostics on the pages");
}
