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

/// Whether a declared schema is usable by the checks that read it.
pub fn is_valid(schema: &SchemaDecl) -> bool {
    schema_problem(&schema.value).is_none()
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

/// `input.schema` and `output.schema` of the workflow.
#[salsa::tracked(returns(ref))]
pub fn header_schema_findings(db: &dyn salsa::Database, file: SourceFile) -> Vec<Finding> {
    let Some(lwir) = lwir_ir(db, file) else { return Vec::new() };
    let header = &lwir.header;
    [("input", &header.input_schema), ("output", &header.output_schema)]
        .into_iter()
        .filter_map(|(key, schema)| {
            schema_finding(schema.as_ref()?, &Anchor::root().at(key).at("schema"), &format!("`{key}.schema`"))
        })
        .collect()
}
