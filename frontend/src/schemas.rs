//! The JSON Schemas (draft 2020-12) of the document formats, shipped in `schemas/` and
//! printed by `little schema NAME`, so that a JSON editor completes and validates a
//! document without the server. They describe what the readers accept; where a reader
//! only warns (an unknown key is `draft.unknown_field`), the schema still says
//! `additionalProperties: false`, and editors show that as a warning too.

/// One shipped schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DocumentSchema {
    /// The name `little schema` takes; for documents `little` reads, the
    /// [`DocumentKind`](crate::DocumentKind) name.
    pub name: &'static str,
    /// What the document is, as its `format` (or `apiVersion`) names it.
    pub document: &'static str,
    /// The schema text, as in `schemas/NAME.schema.json`.
    pub text: &'static str,
    /// Whether little writes this document (an output, described exactly) rather than
    /// reads it.
    pub written: bool,
}

macro_rules! schemas {
    (reads: $( $name:literal => $document:literal ),* ; writes: $( $out:literal => $written:literal ),* $(,)?) => {
        /// Every shipped schema: the documents little reads, in the order of docs/reference/formats.md#reading-any-document's
        /// table, then the ones it writes.
        pub const SCHEMAS: &[DocumentSchema] = &[ $(
            DocumentSchema {
                name: $name,
                document: $document,
                text: include_str!(concat!("../../schemas/", $name, ".schema.json")),
                written: false,
            },
        )* $(
            DocumentSchema {
                name: $out,
                document: $written,
                text: include_str!(concat!("../../schemas/", $out, ".schema.json")),
                written: true,
            },
        )* ];
    };
}

schemas! {
    reads:
    "draft" => "workflow-draft/v1",
    "catalog" => "workflow-catalog/v1",
    "context" => "workflow-context/v1",
    "bindings" => "agent-bindings/v1",
    "lwir" => "littleworkflow.dev/v0.1 Workflow (LWIR)",
    "definition" => "workflow-definition/v1",
    "snapshot" => "WorkflowDefinitionSnapshot (what `little snapshot` writes)";
    writes:
    "report" => "little-report/v1 (little check --format json)",
    "compiled" => "little-compiled/v1 (little compile)",
    "codes" => "the diagnostic codes (the packages' codes())",
    "definition-snapshot" => "the WorkflowDefinitionSnapshot little snapshot writes",
    "registration" => "WorkflowVersion and compiler lock (little lock)",
    "event" => "an event of a run's history (little events --format json)",
    "plan" => "little-plan/v1 (little plan --format json)",
}

/// The schema named `name`.
pub fn schema(name: &str) -> Option<&'static DocumentSchema> {
    SCHEMAS.iter().find(|s| s.name == name)
}

/// The schema of a document kind `little` reads.
pub fn schema_of(kind: crate::DocumentKind) -> &'static DocumentSchema {
    schema(kind.as_str()).expect("every document kind has a schema")
}

/// The key a document may carry at its top level to name its schema for editors.
/// Readers accept it without a `draft.unknown_field` warning and give it no meaning.
pub const SCHEMA_KEY: &str = "$schema";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DocumentKind;

    #[test]
    fn every_document_kind_has_a_schema_naming_its_format() {
        for kind in [
            DocumentKind::Draft,
            DocumentKind::Catalog,
            DocumentKind::Context,
            DocumentKind::Bindings,
            DocumentKind::Lwir,
            DocumentKind::Definition,
        ] {
            let schema = schema_of(kind);
            let value: serde_json::Value = serde_json::from_str(schema.text).expect("a schema is JSON");
            let id = value["$id"].as_str().expect("a schema has an `$id`");
            assert!(id.ends_with(&format!("/{}.schema.json", schema.name)), "{id}");
        }
        assert!(schema("nope").is_none());
    }

    #[test]
    fn every_written_schema_is_exact_and_named_by_its_file() {
        let written: Vec<&str> = SCHEMAS.iter().filter(|s| s.written).map(|s| s.name).collect();
        assert_eq!(written, ["report", "compiled", "codes", "definition-snapshot", "registration", "event", "plan"]);
        for schema in SCHEMAS.iter().filter(|s| s.written) {
            let value: serde_json::Value = serde_json::from_str(schema.text).expect("a schema is JSON");
            let id = value["$id"].as_str().expect("a schema has an `$id`");
            assert!(id.ends_with(&format!("/{}.schema.json", schema.name)), "{id}");
            // Exact: every object that lists properties closes them.
            let mut stack = vec![("$".to_string(), &value)];
            while let Some((path, node)) = stack.pop() {
                match node {
                    serde_json::Value::Object(map) => {
                        if map.contains_key("properties") {
                            let closed = map.get("additionalProperties").is_some_and(|a| a != &serde_json::json!(true));
                            assert!(closed, "{}: {path} lists properties but leaves others open", schema.name);
                        }
                        stack.extend(map.iter().map(|(k, v)| (format!("{path}.{k}"), v)));
                    }
                    serde_json::Value::Array(items) => {
                        stack.extend(items.iter().enumerate().map(|(i, v)| (format!("{path}[{i}]"), v)))
                    }
                    _ => {}
                }
            }
        }
    }
}
