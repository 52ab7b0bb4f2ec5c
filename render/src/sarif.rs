//! `--format sarif`: SARIF 2.1.0 for code-scanning dashboards.
//!
//! One run of one tool (`little`), with a rule per registered code in registry order, and
//! a result per diagnostic. The log is deterministic to the byte: no timestamps, no
//! machine names, objects built in a fixed key order (serde_json keeps insertion order).
//!
//! Choices that GitHub code scanning depends on:
//! - artifact URIs are repository-relative when they can be (see [`artifact_path`]);
//! - columns count Unicode code points (`columnKind: unicodeCodePoints`), as the
//!   diagnostics' own columns do (docs/reference/diagnostics.md), and `endColumn` is exclusive (SARIF §3.30.8);
//! - every result has a region, because code scanning needs `region.startLine`: a
//!   diagnostic without a span (a file-level finding) is placed on line 1;
//! - `partialFingerprints["littleFingerprint/v1"]` hashes the code, the artifact URI, the
//!   JSONPath and the message, never a line or an offset, so re-indenting a draft keeps
//!   every alert matched to its previous run.

use std::path::{Component, Path};

use little_diagnostics::{ByteRange, Code, Diagnostic, LineIndex, Severity};
use serde_json::{Map, Value, json};

use crate::CheckedFile;

pub const SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";
pub const FINGERPRINT_KEY: &str = "littleFingerprint/v1";

/// The SARIF log of one run. `exit_code` is the run's exit status.
pub fn sarif(files: &[CheckedFile<'_>], exit_code: i32) -> Value {
    let rules: Vec<Value> = Code::ALL.iter().map(|&code| rule(code)).collect();
    let mut results = Vec::new();
    for file in files {
        let uri = artifact_path(file.path).uri();
        let index = LineIndex::new(file.text);
        let mut seen: Vec<String> = Vec::new();
        for diagnostic in file.diagnostics {
            results.push(result(diagnostic, &uri, file.text, &index, &mut seen));
        }
    }
    json!({
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "little",
                    "version": env!("CARGO_PKG_VERSION"),
                    "semanticVersion": env!("CARGO_PKG_VERSION"),
                    "rules": rules,
                }
            },
            // A tool failure (exit 2) is reported on stderr and never rendered, so every
            // log that is written describes a run that did its job.
            "invocations": [{ "executionSuccessful": exit_code != 2, "exitCode": exit_code }],
            "columnKind": "unicodeCodePoints",
            "results": results,
        }]
    })
}

/// SARIF's level for a severity.
pub fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// The CamelCase rule name of a code: `graph.duplicate_node_id` → `GraphDuplicateNodeId`.
pub fn rule_name(code: Code) -> String {
    let mut name = String::new();
    for word in code.as_str().split(['.', '_']) {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            name.extend(first.to_uppercase());
            name.push_str(chars.as_str());
        }
    }
    name
}

fn rule(code: Code) -> Value {
    json!({
        "id": code.as_str(),
        "name": rule_name(code),
        "shortDescription": { "text": code.summary() },
        "fullDescription": { "text": code.summary() },
        "help": { "text": code.explanation(), "markdown": code.explanation() },
        "defaultConfiguration": { "level": level(code.severity()) },
        "properties": { "blocking": code.blocking() },
    })
}

/// The message shown for a diagnostic: its message, and its help after a dash.
pub fn message_text(diagnostic: &Diagnostic) -> String {
    match &diagnostic.help {
        Some(help) => format!("{} — {}", diagnostic.message, help),
        None => diagnostic.message.clone(),
    }
}

fn result(diagnostic: &Diagnostic, uri: &str, text: &str, index: &LineIndex, seen: &mut Vec<String>) -> Value {
    let code = diagnostic.code;
    let rule_index = Code::ALL.iter().position(|&c| c == code).expect("every code is registered");
    let mut o = Map::new();
    o.insert("ruleId".into(), json!(code.as_str()));
    o.insert("ruleIndex".into(), json!(rule_index));
    o.insert("level".into(), json!(level(diagnostic.severity())));
    o.insert("message".into(), json!({ "text": message_text(diagnostic) }));

    let primary = match &diagnostic.span {
        Some(span) => region(text, index, span),
        // Code scanning requires a start line; a finding about the whole file gets the first.
        None => json!({ "startLine": 1 }),
    };
    let mut location = Map::new();
    location.insert("physicalLocation".into(), json!({ "artifactLocation": { "uri": uri }, "region": primary }));
    if let Some(path) = &diagnostic.path {
        location.insert("logicalLocations".into(), json!([{ "fullyQualifiedName": path }]));
    }
    o.insert("locations".into(), json!([Value::Object(location)]));

    let related: Vec<Value> = diagnostic
        .related
        .iter()
        .filter_map(|r| r.span.as_ref().map(|span| (r, span)))
        .enumerate()
        .map(|(id, (r, span))| {
            json!({
                "id": id,
                "physicalLocation": { "artifactLocation": { "uri": uri }, "region": region(text, index, span) },
                "logicalLocations": [{ "fullyQualifiedName": r.path }],
                "message": { "text": r.message },
            })
        })
        .collect();
    if !related.is_empty() {
        o.insert("relatedLocations".into(), Value::Array(related));
    }

    o.insert("partialFingerprints".into(), json!({ FINGERPRINT_KEY: fingerprint(diagnostic, uri, seen) }));

    let mut properties = Map::new();
    properties.insert("blocking".into(), json!(diagnostic.blocking()));
    if let Some(node) = &diagnostic.node_id {
        properties.insert("nodeId".into(), json!(node));
    }
    if let Some(edge) = &diagnostic.edge_id {
        properties.insert("edgeId".into(), json!(edge));
    }
    if let Some(witness) = &diagnostic.witness {
        properties.insert("witness".into(), json!({ "nodes": witness.nodes, "edges": witness.edges }));
    }
    o.insert("properties".into(), Value::Object(properties));
    Value::Object(o)
}

/// Start and end as 1-based lines and code-point columns; the end column is exclusive.
fn region(text: &str, index: &LineIndex, span: &ByteRange) -> Value {
    let (start_line, start_column) = index.line_col(text, span.start);
    let (end_line, end_column) = index.line_col(text, span.end.max(span.start));
    json!({ "startLine": start_line, "startColumn": start_column, "endLine": end_line, "endColumn": end_column })
}

/// `sha256` of the code, the artifact URI, the JSONPath and the message, separated by NUL
/// (which none of them contains). Independent of lines and offsets, so stable when a draft
/// is re-indented. The n-th identical diagnostic in one file (n ≥ 2) adds `#n`, so two
/// alerts never share a fingerprint and the numbering follows the deterministic order.
fn fingerprint(diagnostic: &Diagnostic, uri: &str, seen: &mut Vec<String>) -> String {
    let base = format!(
        "{}\0{}\0{}\0{}",
        diagnostic.code.as_str(),
        uri,
        diagnostic.path.as_deref().unwrap_or(""),
        diagnostic.message
    );
    let occurrence = seen.iter().filter(|s| **s == base).count() + 1;
    let input = if occurrence == 1 { base.clone() } else { format!("{base}\0#{occurrence}") };
    seen.push(base);
    little_hashing::sha256_hex(input.as_bytes())
}

/// Where a checked file is, for reports that are read against a repository checkout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArtifactPath {
    /// Relative to the current directory (assumed to be the repository root), with `/`
    /// separators and no leading `./`.
    Relative(String),
    /// An absolute path outside the current directory, with `/` separators.
    Absolute(String),
}

/// The path as given, made repository-relative:
/// - a relative path is kept, with `\` turned into `/` and leading `./` segments removed;
/// - an absolute path under the current directory is made relative to it (lexically: no
///   symlink is resolved, so the answer depends only on the two strings);
/// - any other absolute path stays absolute and becomes a `file://` URI in SARIF, which code
///   scanning cannot place in the repository but which still names the file exactly.
pub fn artifact_path(path: &str) -> ArtifactPath {
    let slashed = path.replace('\\', "/");
    if !is_absolute(&slashed) {
        return ArtifactPath::Relative(strip_dot_prefix(&slashed).to_string());
    }
    if let Ok(cwd) = std::env::current_dir()
        && let Some(relative) = relative_to(Path::new(path), &cwd)
    {
        return ArtifactPath::Relative(relative);
    }
    ArtifactPath::Absolute(slashed)
}

impl ArtifactPath {
    /// The path for display (GitHub annotations' `file=`).
    pub fn display(&self) -> &str {
        match self {
            ArtifactPath::Relative(p) | ArtifactPath::Absolute(p) => p,
        }
    }

    /// A URI reference: percent-encoded relative path, or a `file://` URI.
    pub fn uri(&self) -> String {
        match self {
            ArtifactPath::Relative(p) => percent_encode(p),
            ArtifactPath::Absolute(p) if p.starts_with('/') => format!("file://{}", percent_encode(p)),
            // A Windows drive path, `C:/x`: `file:///C:/x`.
            ArtifactPath::Absolute(p) => format!("file:///{}", percent_encode(p)),
        }
    }
}

fn is_absolute(slashed: &str) -> bool {
    let bytes = slashed.as_bytes();
    slashed.starts_with('/') || (bytes.len() >= 3 && bytes[0].is_ascii_alphabetic() && &bytes[1..3] == b":/")
}

fn strip_dot_prefix(mut path: &str) -> &str {
    while let Some(rest) = path.strip_prefix("./") {
        path = rest.trim_start_matches('/');
    }
    path
}

/// `path` relative to `base` when `path` lies under it, joined with `/`.
fn relative_to(path: &Path, base: &Path) -> Option<String> {
    let rest = path.strip_prefix(base).ok()?;
    let mut parts = Vec::new();
    for component in rest.components() {
        match component {
            Component::Normal(part) => parts.push(part.to_str()?.to_string()),
            Component::CurDir => {}
            _ => return None,
        }
    }
    if parts.is_empty() { None } else { Some(parts.join("/")) }
}

/// Percent-encodes every byte but the unreserved characters of RFC 3986 and `/`, so a path
/// with spaces, `%`, `#`, `?` or a `:` in its first segment is still one URI reference, and
/// a non-ASCII name is encoded as its UTF-8 bytes.
fn percent_encode(path: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(path.len());
    for &b in path.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(HEX[usize::from(b >> 4)] as char);
            out.push(HEX[usize::from(b & 0xf)] as char);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use little_diagnostics::{Related, Witness};

    #[test]
    fn rule_names_are_the_codes_in_camel_case() {
        assert_eq!(rule_name(Code::GraphCycle), "GraphCycle");
        for &code in Code::ALL {
            // The registry's variant names are the CamelCase of the dotted names.
            assert_eq!(rule_name(code), format!("{code:?}"), "{}", code.as_str());
        }
    }

    #[test]
    fn relative_paths_lose_dot_prefixes_and_backslashes() {
        assert_eq!(artifact_path("./examples/cycle.json"), ArtifactPath::Relative("examples/cycle.json".into()));
        assert_eq!(artifact_path(".//a/./b.json"), ArtifactPath::Relative("a/./b.json".into()));
        assert_eq!(artifact_path(r"drafts\q.json"), ArtifactPath::Relative("drafts/q.json".into()));
        assert_eq!(artifact_path("my drafts/a:b#c.json").uri(), "my%20drafts/a%3Ab%23c.json");
    }

    #[test]
    fn absolute_paths_are_made_relative_to_the_current_directory_when_under_it() {
        let cwd = std::env::current_dir().unwrap();
        let inside = cwd.join("examples").join("cycle.json");
        assert_eq!(artifact_path(inside.to_str().unwrap()), ArtifactPath::Relative("examples/cycle.json".into()));
        let outside = "/nonexistent-root-for-little/x y.json";
        if !cwd.starts_with("/nonexistent-root-for-little") {
            assert_eq!(artifact_path(outside).uri(), "file:///nonexistent-root-for-little/x%20y.json");
        }
        assert_eq!(ArtifactPath::Absolute("C:/w/d.json".into()).uri(), "file:///C%3A/w/d.json");
    }

    #[test]
    fn a_result_carries_regions_related_locations_and_the_witness() {
        let text = "{\n  \"a\": \"\u{e9}x\"\n}";
        let d = Diagnostic::new(Code::GraphCycle, "loop")
            .with_path("$.a")
            .with_span(Some(9..14))
            .with_help(Some("did you mean `b`?".into()))
            .with_related(Related { message: "here".into(), path: "$".into(), span: Some(0..1) })
            .with_related(Related { message: "nowhere".into(), path: "$.z".into(), span: None })
            .with_witness(Witness { nodes: vec!["a".into()], edges: vec!["e".into()] });
        let files = [CheckedFile::of_diagnostics("./d.json", text, std::slice::from_ref(&d))];
        let log = sarif(&files, 1);
        let result = &log["runs"][0]["results"][0];
        assert_eq!(result["message"]["text"], "loop — did you mean `b`?");
        assert_eq!(result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], "d.json");
        // `"éx"` starts at column 8 and its closing quote is followed by column 12 (é is one code point).
        assert_eq!(
            result["locations"][0]["physicalLocation"]["region"],
            json!({ "startLine": 2, "startColumn": 8, "endLine": 2, "endColumn": 12 })
        );
        assert_eq!(result["relatedLocations"].as_array().unwrap().len(), 1);
        assert_eq!(result["properties"]["witness"]["edges"][0], "e");
        assert_eq!(log["runs"][0]["invocations"][0]["exitCode"], 1);
    }

    #[test]
    fn identical_diagnostics_get_distinct_fingerprints() {
        let d = Diagnostic::new(Code::DraftUnknownField, "unknown field `x`").with_path("$.x");
        let two = [d.clone(), d];
        let files = [CheckedFile::of_diagnostics("d.json", "{}", &two)];
        let log = sarif(&files, 0);
        let fp = |i: usize| log["runs"][0]["results"][i]["partialFingerprints"][FINGERPRINT_KEY].clone();
        assert_ne!(fp(0), fp(1));
        assert_eq!(
            log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"],
            json!({ "startLine": 1 })
        );
    }
}
