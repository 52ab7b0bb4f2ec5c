//! Workflow definitions (`workflow-definition/v1`): the reader's shape findings and the
//! validity of every schema the definition embeds (`schema.invalid`).

use little_diagnostics::Code;
use little_frontend::DocumentKind;
use little_frontend::anchor::Finding;
use little_frontend::definition::{Definition, read_definition, schema_anchors};

use crate::db::SourceFile;
use crate::queries::{Read, read_document};

/// The normalized definition and every finding about it.
#[salsa::tracked(returns(ref))]
pub fn definition_of(db: &dyn salsa::Database, file: SourceFile) -> Read<Definition> {
    let mut read = read_document(db, file, DocumentKind::Definition, read_definition);
    let schema_findings = schema_findings(&read.value);
    read.findings.extend(schema_findings);
    read
}

/// `schema.invalid` for each embedded schema that does not compile (JSON Schema 2020-12,
/// nothing fetched, linear-time patterns: the same compiler as catalog config schemas).
pub fn schema_findings(definition: &Definition) -> Vec<Finding> {
    schema_anchors(definition)
        .into_iter()
        .filter_map(|(at, schema)| {
            let error = crate::checks::config::compile(schema).0.err()?;
            let what = match at.pointer.last() {
                Some(little_frontend::anchor::Seg::Key(key)) => format!("`{key}`"),
                _ => "the schema".to_string(),
            };
            Some(Finding::new(Code::SchemaInvalid, at, format!("{what} is not a valid JSON Schema: {error}")))
        })
        .collect()
}
