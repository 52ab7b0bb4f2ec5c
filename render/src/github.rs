//! `--format github`: GitHub Actions workflow annotations.
//!
//! One workflow command per diagnostic, `::error` for errors, `::warning` for warnings and
//! `::notice` for info. The file is the repository-relative path SARIF uses
//! ([`crate::sarif::artifact_path`]). A diagnostic without a span names only its file. A
//! span on one line gives `line`, `col`, `endLine` and `endColumn` (exclusive, as in
//! SARIF); a span over several lines gives only `line` and `endLine`, since GitHub takes
//! columns only for single-line annotations.

use std::fmt::Write as _;

use little_diagnostics::{LineIndex, Severity};

use crate::CheckedFile;
use crate::sarif::{artifact_path, message_text};

/// One `::error file=…,line=…,col=…,title=CODE::message` line per diagnostic.
pub fn annotations(files: &[CheckedFile<'_>]) -> String {
    let mut out = String::new();
    for file in files {
        let path = artifact_path(file.path);
        let index = LineIndex::new(file.text);
        for diagnostic in file.diagnostics {
            let command = match diagnostic.severity() {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Info => "notice",
            };
            let mut properties = vec![("file", path.display().to_string())];
            if let Some(span) = &diagnostic.span {
                let (line, col) = index.line_col(file.text, span.start);
                let (end_line, end_col) = index.line_col(file.text, span.end.max(span.start));
                properties.push(("line", line.to_string()));
                if line == end_line {
                    properties.push(("col", col.to_string()));
                }
                properties.push(("endLine", end_line.to_string()));
                if line == end_line {
                    properties.push(("endColumn", end_col.to_string()));
                }
            }
            properties.push(("title", diagnostic.code.as_str().to_string()));
            let properties: Vec<String> =
                properties.into_iter().map(|(key, value)| format!("{key}={}", escape_property(&value))).collect();
            let _ = writeln!(out, "::{command} {}::{}", properties.join(","), escape_data(&message_text(diagnostic)));
        }
    }
    out
}

/// Escapes a command's message: `%`, CR and LF.
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// Escapes a property value: as data, plus `:` and `,`, which delimit the properties.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;
    use little_diagnostics::{Code, Diagnostic};

    #[test]
    fn messages_and_properties_are_escaped() {
        assert_eq!(escape_data("a, b: 100%\r\nnext"), "a, b: 100%25%0D%0Anext");
        assert_eq!(escape_property("a, b: 100%\nnext"), "a%2C b%3A 100%25%0Anext");
        let text = "{\n  \"x\": 1\n}";
        let diagnostics = [
            Diagnostic::new(Code::DraftUnknownField, "unknown field `x`, line one:\nline two")
                .with_span(Some(4..10))
                .with_help(Some("did you mean `y`?".into())),
            Diagnostic::new(Code::RequestContextUnavailable, "no context"),
            Diagnostic::new(Code::GraphCycle, "loop").with_span(Some(0..14)),
        ];
        let files = [CheckedFile::of_diagnostics(r".\drafts\a,b:c.json", text, &diagnostics)];
        assert_eq!(
            annotations(&files),
            "::warning file=drafts/a%2Cb%3Ac.json,line=2,col=3,endLine=2,endColumn=9,title=draft.unknown_field::\
             unknown field `x`, line one:%0Aline two — did you mean `y`?\n\
             ::notice file=drafts/a%2Cb%3Ac.json,title=request.context_unavailable::no context\n\
             ::error file=drafts/a%2Cb%3Ac.json,line=1,endLine=3,title=graph.cycle::loop\n"
        );
    }
}
