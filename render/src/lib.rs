//! Every output format of `little`, over one view of a checked file ([`CheckedFile`]): a
//! module per format, each with its tests beside it. Human reports (`human`), the
//! `little-report/v1` and `little-compiled/v1` JSON (`json`), SARIF (`sarif`), GitHub
//! annotations (`github`) and the pictures of a draft's topology (`graph`). The command
//! line, the library the packages wrap and the pipeline print through these and nothing
//! else, so one format is written in one place.

pub mod github;
pub mod graph;
pub mod human;
pub mod json;
pub mod sarif;

use little_diagnostics::Diagnostic;
use little_frontend::DocumentKind;
use little_passes::{FileReport, Issued};

/// One checked file, as every format sees it: where it is, the text its diagnostics'
/// spans refer to, what kind of document it is, the diagnostics in report order and what
/// the check issued. A renderer of diagnostics alone (an unusable reader document, a
/// definition the pipeline refused) leaves the kind and the candidate out.
#[derive(Clone, Copy)]
pub struct CheckedFile<'a> {
    /// The path as given (on the command line, or by a host program).
    pub path: &'a str,
    pub text: &'a str,
    pub document: Option<DocumentKind>,
    pub diagnostics: &'a [Diagnostic],
    pub candidate: Option<&'a Issued>,
}

impl<'a> CheckedFile<'a> {
    /// The view of a file's report.
    pub fn of_report(path: &'a str, text: &'a str, report: &'a FileReport) -> Self {
        CheckedFile {
            path,
            text,
            document: report.document,
            diagnostics: &report.diagnostics,
            candidate: report.candidate.as_ref(),
        }
    }

    /// The view of diagnostics about a file that was not checked as a whole.
    pub fn of_diagnostics(path: &'a str, text: &'a str, diagnostics: &'a [Diagnostic]) -> Self {
        CheckedFile { path, text, document: None, diagnostics, candidate: None }
    }

    /// Whether a diagnostic blocks the file.
    pub fn blocking(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::blocking)
    }
}
