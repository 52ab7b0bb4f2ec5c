//! The JSON forms: a diagnostic, the `little-report/v1` object `little check --format json`
//! prints (docs/reference/diagnostics.md), and the `little-compiled/v1` document `little
//! compile` writes. Deterministic to the byte, with fields in a fixed order and absent
//! fields omitted.

use little_diagnostics::{ByteRange, Diagnostic, LineIndex, Severity};
use little_passes::project::{Candidate, View, topology_json};
use serde_json::{Map, Value, json};

use crate::CheckedFile;

/// A span as JSON: byte offsets plus 1-based line and character column of the start.
pub fn span_json(text: &str, index: &LineIndex, span: &ByteRange) -> Value {
    let (line, column) = index.line_col(text, span.start);
    json!({ "start": span.start, "end": span.end, "line": line, "column": column })
}

/// One diagnostic as JSON.
pub fn diagnostic_json(diagnostic: &Diagnostic, text: &str, index: &LineIndex) -> Value {
    let mut o = Map::new();
    o.insert("severity".into(), json!(diagnostic.severity().as_str()));
    o.insert("code".into(), json!(diagnostic.code.as_str()));
    o.insert("blocking".into(), json!(diagnostic.blocking()));
    o.insert("message".into(), json!(diagnostic.message));
    if let Some(node) = &diagnostic.node_id {
        o.insert("nodeId".into(), json!(node));
    }
    if let Some(edge) = &diagnostic.edge_id {
        o.insert("edgeId".into(), json!(edge));
    }
    if let Some(path) = &diagnostic.path {
        o.insert("path".into(), json!(path));
    }
    if let Some(span) = &diagnostic.span {
        o.insert("span".into(), span_json(text, index, span));
    }
    if let Some(help) = &diagnostic.help {
        o.insert("help".into(), json!(help));
    }
    if !diagnostic.related.is_empty() {
        let related: Vec<Value> = diagnostic
            .related
            .iter()
            .map(|r| {
                let mut item = Map::new();
                item.insert("message".into(), json!(r.message));
                item.insert("path".into(), json!(r.path));
                if let Some(span) = &r.span {
                    item.insert("span".into(), span_json(text, index, span));
                }
                Value::Object(item)
            })
            .collect();
        o.insert("related".into(), Value::Array(related));
    }
    if let Some(witness) = &diagnostic.witness {
        o.insert("witness".into(), json!({ "nodes": witness.nodes, "edges": witness.edges }));
    }
    Value::Object(o)
}

/// The `files[]` entry of a `little-report/v1`.
pub fn file_json(file: &CheckedFile<'_>) -> Value {
    let mut o = Map::new();
    o.insert("path".into(), json!(file.path));
    o.insert("document".into(), json!(file.document.map(|k| k.as_str())));
    o.insert("diagnostics".into(), diagnostics_json(file));
    o.insert("candidate".into(), file.candidate.map_or(Value::Null, |c| c.to_json()));
    Value::Object(o)
}

/// The diagnostics of a file, in report order.
fn diagnostics_json(file: &CheckedFile<'_>) -> Value {
    let index = LineIndex::new(file.text);
    Value::Array(file.diagnostics.iter().map(|d| diagnostic_json(d, file.text, &index)).collect())
}

/// The `little-report/v1` object of some checked files, with its summary.
pub fn report_json(files: &[CheckedFile<'_>]) -> Value {
    let all = || files.iter().flat_map(|f| f.diagnostics);
    let count = |severity: Severity| all().filter(|d| d.severity() == severity).count();
    json!({
        "format": "little-report/v1",
        "files": files.iter().map(file_json).collect::<Vec<_>>(),
        "summary": {
            "files": files.len(),
            "errors": count(Severity::Error),
            "warnings": count(Severity::Warning),
            "blocking": all().filter(|d| d.blocking()).count(),
        },
    })
}

/// The `little-compiled/v1` document of a draft that compiled.
pub fn compiled_json(candidate: &Candidate, topology: &little_ir::topology::Topology, file: &CheckedFile<'_>) -> Value {
    json!({
        "format": "little-compiled/v1",
        "candidate": little_passes::report::Issued::Draft(candidate.clone()).to_json(),
        "topology": topology_json(topology, View::Full),
        "diagnostics": diagnostics_json(file),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use little_diagnostics::{Code, Related, Witness};

    #[test]
    fn fields_in_fixed_order_and_absent_ones_omitted() {
        let text = "{\n  \"a\": 1\n}";
        let index = LineIndex::new(text);
        let d = Diagnostic::new(Code::GraphCycle, "loop")
            .with_node("a")
            .with_path("$.a")
            .with_span(Some(4..7))
            .with_related(Related { message: "here".into(), path: "$".into(), span: Some(0..1) })
            .with_witness(Witness { nodes: vec!["a".into()], edges: vec![] });
        let out = serde_json::to_string(&diagnostic_json(&d, text, &index)).unwrap();
        assert_eq!(
            out,
            r#"{"severity":"error","code":"graph.cycle","blocking":true,"message":"loop","nodeId":"a","path":"$.a","span":{"start":4,"end":7,"line":2,"column":3},"related":[{"message":"here","path":"$","span":{"start":0,"end":1,"line":1,"column":1}}],"witness":{"nodes":["a"],"edges":[]}}"#
        );
    }
}
