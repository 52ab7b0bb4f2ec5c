//! The frontend of `little`: strict JSON with spans, document recognition, and the
//! readers that lower each document into typed, position-free declarations.

pub mod anchor;
pub mod catalog;
pub mod context;
pub mod definition;
pub mod draft;
mod gap;
pub mod json;
pub mod lwir;
pub mod parallel;
pub mod reader;
pub mod recover;
pub mod reparse;
pub mod schemas;
pub mod snapshot;

use little_diagnostics::Code;

use anchor::{Anchor, Finding};
use json::JsonTree;

/// The kinds of document `little` reads, recognised by `format` (or `apiVersion`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DocumentKind {
    Draft,
    Catalog,
    Context,
    Bindings,
    Lwir,
    Definition,
}

impl DocumentKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DocumentKind::Draft => "draft",
            DocumentKind::Catalog => "catalog",
            DocumentKind::Context => "context",
            DocumentKind::Bindings => "bindings",
            DocumentKind::Lwir => "lwir",
            DocumentKind::Definition => "definition",
        }
    }
}

pub const LWIR_API_VERSION: &str = "littleworkflow.dev/v0.1";
pub const DEFINITION_FORMAT: &str = "workflow-definition/v1";

const FORMATS: &[(&str, DocumentKind)] = &[
    (draft::DRAFT_FORMAT, DocumentKind::Draft),
    (catalog::CATALOG_FORMAT, DocumentKind::Catalog),
    (context::CONTEXT_FORMAT, DocumentKind::Context),
    (context::BINDINGS_FORMAT, DocumentKind::Bindings),
    (DEFINITION_FORMAT, DocumentKind::Definition),
];

/// Whether a `format` value claims to be one of little's documents, in any version
/// (`workflow-draft/v2` does: it is little's, just not a version little reads).
pub fn claims_format(format: &str) -> bool {
    let family = |f: &str| f.split_once('/').map_or(f, |(family, _)| family).to_string();
    FORMATS.iter().any(|(f, _)| family(f) == family(format) && format.contains('/'))
}

/// Whether an `apiVersion` value claims to be an LWIR, in any version.
pub fn claims_api_version(api_version: &str) -> bool {
    let family = |v: &str| v.split_once('/').map_or(v, |(family, _)| family).to_string();
    family(api_version) == family(LWIR_API_VERSION) && api_version.contains('/')
}

/// Which document a parsed file is, or `parse.unsupported_format` saying why not.
pub fn document_kind(tree: &JsonTree) -> Result<DocumentKind, Box<Finding>> {
    let root = tree.root();
    let unsupported =
        |at: Anchor, message: String| Err(Box::new(Finding::new(Code::ParseUnsupportedFormat, at, message)));
    if !tree.value(root).is_object() {
        return unsupported(
            Anchor::root(),
            format!("expected a JSON object with a `format` field, found {}", tree.type_name(root)),
        );
    }
    if let Some(api) = tree.get(root, "apiVersion") {
        return match tree.value(api.value).as_str() {
            Some(LWIR_API_VERSION) => Ok(DocumentKind::Lwir),
            _ => unsupported(
                Anchor::root().at("apiVersion"),
                format!("unsupported `apiVersion`: expected `{LWIR_API_VERSION}`"),
            ),
        };
    }
    let Some(format) = tree.get(root, "format") else {
        return unsupported(
            Anchor::root(),
            "the document has no `format` field: expected e.g. `\"format\": \"workflow-draft/v1\"`".to_string(),
        );
    };
    let at = Anchor::root().at("format");
    let Some(name) = tree.value(format.value).as_str() else {
        return unsupported(at, format!("`format` must be a string, found {}", tree.type_name(format.value)));
    };
    if let Some(&(_, kind)) = FORMATS.iter().find(|(f, _)| *f == name) {
        return Ok(kind);
    }
    let help = little_diagnostics::suggest::did_you_mean(name, FORMATS.iter().map(|(f, _)| *f));
    Err(Box::new(
        Finding::new(
            Code::ParseUnsupportedFormat,
            at,
            format!(
                "unsupported format `{}`: little reads {}",
                little_diagnostics::suggest::excerpt(name),
                FORMATS.iter().map(|(f, _)| format!("`{f}`")).collect::<Vec<_>>().join(", ")
            ),
        )
        .help(help),
    ))
}
