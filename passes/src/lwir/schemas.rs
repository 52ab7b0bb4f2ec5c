//! `schema.invalid`: every `schema` of an LWIR must itself be a JSON Schema (draft
//! 2020-12, checked against its metaschema, nothing fetched) that compiles.

use jsonschema::paths::LocationSegment;
use little_diagnostics::Code;
use little_frontend::anchor::{Anchor, Finding};
use little_frontend::lwir::SchemaDecl;

use crate::db::SourceFile;

use super::lwir_ir;

/// Why a schema is not a valid JSON Schema: the pointer below it and a message.
pub fn schema_problem(schema: &serde_json::Value) -> Option<(Vec<String>, String)> {
    if let Err(error) = jsonschema::draft202012::meta::validate(schema) {
        let pointer = error
            .instance_path()
            .segments()
            .map(|s| match s {
                LocationSegment::Property(key) => key.to_string(),
                LocationSegment::Index(i) => i.to_string(),
            })
            .collect();
        return Some((pointer, error.to_string()));
    }
    // The metaschema passes, yet a schema may still not compile (a `$ref` that does not
    // resolve, a `pattern` that is not a regex).
    match crate::checks::config::compile(schema).0 {
        Ok(_) => None,
        Err(message) => Some((Vec::new(), message)),
    }
}

/// The finding for one schema at `at`, if it is not a valid JSON Schema.
pub fn schema_finding(schema: &SchemaDecl, at: &Anchor, what: &str) -> Option<Finding> {
    let (pointer, message) = schema_problem(&schema.value)?;
    let mut anchor = at.clone();
    for segment in &pointer {
        anchor = match segment.parse::<usize>() {
            // An index only where the schema has an array at that place.
            Ok(i) if pointer_is_array(&schema.value, &anchor, at) => anchor.at(i),
            _ => anchor.at(segment.as_str()),
        };
    }
    Some(Finding::new(Code::SchemaInvalid, anchor, format!("{what} is not a valid JSON Schema: {message}")))
}

/// Whether the value at `anchor` (below `base`, which holds `root`) is an array.
fn pointer_is_array(root: &serde_json::Value, anchor: &Anchor, base: &Anchor) -> bool {
    let mut value = root;
    for seg in &anchor.pointer[base.pointer.len()..] {
        let next = match (seg, value) {
            (little_frontend::anchor::Seg::Key(k), serde_json::Value::Object(map)) => map.get(&**k),
            (little_frontend::anchor::Seg::Index(i), serde_json::Value::Array(items)) => items.get(*i as usize),
            _ => None,
        };
        match next {
            Some(v) => value = v,
            None => return false,
        }
    }
    value.is_array()
}

/// The findings about `input.schema` and `output.schema`, and whether each is usable.
#[derive(Debug, PartialEq, Default)]
pub struct HeaderSchemas {
    pub findings: Vec<Finding>,
    pub input_valid: bool,
    pub output_valid: bool,
}

/// `input.schema` and `output.schema` of the workflow, each checked once per edit (the
/// template and binding checks read the verdict).
#[salsa::tracked(returns(ref))]
pub fn header_schemas(db: &dyn salsa::Database, file: SourceFile) -> HeaderSchemas {
    let mut out = HeaderSchemas::default();
    let Some(lwir) = lwir_ir(db, file) else { return out };
    let header = &lwir.header;
    for (key, schema) in [("input", &header.input_schema), ("output", &header.output_schema)] {
        let Some(schema) = schema else { continue };
        let finding = schema_finding(schema, &Anchor::root().at(key).at("schema"), &format!("`{key}.schema`"));
        let valid = finding.is_none();
        out.findings.extend(finding);
        match key {
            "input" => out.input_valid = valid,
            _ => out.output_valid = valid,
        }
    }
    out
}
