//! Reading the pipeline's documents: the definition (stage 1), the run input and its
//! validation against the input schema (stage 2), and the global tools' presence in the
//! registry (stage 3).

use std::path::Path;
use std::sync::Arc;

use jsonschema::paths::LocationSegment;
use little_diagnostics::{Code, Diagnostic, Severity};
use little_frontend::DocumentKind;
use little_frontend::anchor::{Anchor, Finding, Resolver};
use little_frontend::definition::Definition;
use little_passes::definition::definition_of;
use little_passes::queries::{document_kind, outline, whole_tree};
use little_passes::{Database, SourceFile};

use crate::{Failure, Located};

/// A document's text, read as UTF-8.
pub fn read_text(path: &Path, what: &str) -> Result<Arc<str>, Failure> {
    let bytes =
        std::fs::read(path).map_err(|e| Failure::Tool(format!("cannot read the {what} `{}`: {e}", path.display())))?;
    match little_frontend::json::decode_utf8(&bytes) {
        Ok(text) => Ok(text.into()),
        Err(d) => Err(Failure::Tool(format!("the {what} `{}` is not UTF-8: {}", path.display(), d.message))),
    }
}

fn blocked(path: &str, text: Arc<str>, mut diagnostics: Vec<Diagnostic>) -> Failure {
    little_diagnostics::sort(&mut diagnostics);
    Failure::Blocked(vec![Located { path: path.to_string(), text, diagnostics }])
}

/// A loaded definition: its text (for spans) and the normalized definition.
pub struct LoadedDefinition {
    pub path: String,
    pub text: Arc<str>,
    pub definition: Definition,
    /// Warnings and infos that did not block (e.g. `parse.unsafe_integer`).
    pub diagnostics: Vec<Diagnostic>,
}

/// Reads a definition; any blocking diagnostic (not JSON, another format, a wrong shape,
/// an invalid schema) refuses it with the diagnostics.
pub fn load_definition(db: &Database, path: &Path) -> Result<LoadedDefinition, Failure> {
    definition_from_text(db, path.display().to_string(), read_text(path, "definition")?)
}

/// [`load_definition`] of a definition's text, named `display` in diagnostics.
pub fn definition_from_text(db: &Database, display: String, text: Arc<str>) -> Result<LoadedDefinition, Failure> {
    let file = SourceFile::new(db, display.clone(), text.clone());
    let report = little_passes::report(db, crate::workspace(db, None), file);
    let mut diagnostics = report.diagnostics;
    if report.document.is_some() && report.document != Some(DocumentKind::Definition) {
        let found = report.document.map_or("", |k| k.as_str());
        diagnostics.push(
            Diagnostic::new(
                Code::ParseUnsupportedFormat,
                format!("expected a definition (`\"format\": \"workflow-definition/v1\"`), found a {found} document"),
            )
            .with_path("$"),
        );
    }
    if diagnostics.iter().any(Diagnostic::blocking) {
        return Err(blocked(&display, text, diagnostics));
    }
    debug_assert!(matches!(document_kind(db, file), Some(Ok(DocumentKind::Definition))));
    let definition = definition_of(db, file).value.clone();
    Ok(LoadedDefinition { path: display, text, definition, diagnostics })
}

/// Stage 3's registry check: every global tool must be a tool of the definition.
pub fn missing_tools(loaded: &LoadedDefinition) -> Result<(), Failure> {
    let definition = &loaded.definition;
    let registered: Vec<&str> = definition.tools.iter().map(|t| t.id.as_str()).collect();
    let findings: Vec<Finding> = definition
        .global_tools
        .iter()
        .enumerate()
        .filter(|(_, name)| !registered.contains(&name.as_str()))
        .map(|(i, name)| {
            let help = little_diagnostics::suggest::did_you_mean(name, registered.iter().copied());
            Finding::new(
                Code::PipelineMissingTool,
                Anchor::root().at("globalTools").at(i),
                format!("global tool `{name}` is not in the tool registry (the definition's `tools`)"),
            )
            .help(help)
        })
        .collect();
    if findings.is_empty() {
        return Ok(());
    }
    let tree = little_frontend::json::parse(&loaded.text).tree.expect("the definition parsed before");
    let resolver = Resolver::new(&tree);
    Err(blocked(&loaded.path, loaded.text.clone(), findings.into_iter().map(|f| resolver.resolve(f)).collect()))
}

/// The run input, parsed.
pub struct LoadedInput {
    pub path: String,
    pub text: Arc<str>,
    pub value: serde_json::Value,
}

/// Reads the input and validates it against the input schema (every violation, each at
/// the path of the failing value).
pub fn load_input(db: &Database, path: &Path, definition: &Definition) -> Result<LoadedInput, Failure> {
    let text = read_text(path, "input")?;
    let display = path.display().to_string();
    let file = SourceFile::new(db, display.clone(), text.clone());
    let errors: Vec<Diagnostic> =
        outline(db, file).diagnostics.iter().filter(|d| d.severity() == Severity::Error).cloned().collect();
    let Some(tree) = whole_tree(db, file).filter(|_| errors.is_empty()) else {
        return Err(blocked(&display, text, errors));
    };
    let value = tree.to_serde(tree.root());
    let little_passes::checks::config::CompiledSchema(validator) =
        little_passes::checks::config::compile(&definition.input_schema);
    let validator = validator.map_err(|e| Failure::Tool(format!("the input schema does not compile: {e}")))?;
    let resolver = Resolver::new(tree);
    let diagnostics: Vec<Diagnostic> = validator
        .iter_errors(&value)
        .map(|error| {
            let mut anchor = Anchor::root();
            for segment in error.instance_path().segments() {
                anchor = match segment {
                    LocationSegment::Property(key) => anchor.at(&*key),
                    LocationSegment::Index(i) => anchor.at(i),
                };
            }
            let (path, _) = resolver.locate(&anchor);
            resolver.resolve(Finding::new(
                Code::PipelineInputSchemaError,
                anchor,
                format!("the input does not match the definition's input schema at `{path}`: {error}"),
            ))
        })
        .collect();
    if !diagnostics.is_empty() {
        return Err(blocked(&display, text, diagnostics));
    }
    Ok(LoadedInput { path: display, text, value })
}
