//! Suppressions (docs/reference/formats.md#draft): a node's `suppress` list silences non-blocking codes on it.

use little_diagnostics::Code;
use little_frontend::anchor::{Anchor, Finding};

/// Findings about the suppress list itself.
pub fn check(node_id: &str, at: &Anchor, suppress: &[String]) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (i, name) in suppress.iter().enumerate() {
        let at = at.at("suppress").at(i);
        match Code::from_name(name) {
            Some(code) if code.blocking() => findings.push(
                Finding::new(
                    Code::DraftInvalidSuppression,
                    at,
                    format!("`{name}` blocks the candidate and cannot be suppressed; fix the fault instead"),
                )
                .node(node_id),
            ),
            Some(_) => {}
            None => findings.push(
                Finding::new(Code::DraftUnknownSuppression, at, format!("`{name}` is not a diagnostic code"))
                    .node(node_id)
                    .help(Code::nearest(name).map(|c| format!("did you mean `{}`?", c.as_str()))),
            ),
        }
    }
    findings
}

/// Whether `finding` is silenced by the suppress list of the node it concerns.
pub fn is_suppressed<'a>(finding: &Finding, suppress_of: impl Fn(&str) -> Option<&'a [String]>) -> bool {
    let code = finding.diagnostic.code;
    if code.blocking() {
        return false;
    }
    let Some(node) = &finding.diagnostic.node_id else { return false };
    suppress_of(node).is_some_and(|list| list.iter().any(|c| c == code.as_str()))
}
