//! `catalog.invalid_config`: a node's config against its family's JSON Schema.
//!
//! Schemas are compiled once per family (a tracked query), never fetch anything, and
//! match `pattern`s with a linear-time regex engine: configs and catalogs are untrusted.

use std::sync::Arc;

use jsonschema::paths::LocationSegment;
use little_diagnostics::Code;
use little_frontend::anchor::{Anchor, Finding};

use crate::db::SourceFile;
use crate::queries::{FamilyName, family};

/// A compiled config schema, or why the catalog's schema does not compile.
#[derive(Clone)]
pub struct CompiledSchema(pub Result<Arc<jsonschema::Validator>, String>);

impl PartialEq for CompiledSchema {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (Ok(a), Ok(b)) => Arc::ptr_eq(a, b),
            (Err(a), Err(b)) => a == b,
            _ => false,
        }
    }
}

impl std::fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Ok(_) => f.write_str("CompiledSchema(ok)"),
            Err(e) => write!(f, "CompiledSchema({e})"),
        }
    }
}

pub fn compile(schema: &serde_json::Value) -> CompiledSchema {
    CompiledSchema(validator(schema).map(Arc::new).map_err(|e| e.to_string()))
}

/// `schema` compiled in the dialect little reads every JSON Schema in: draft 2020-12,
/// regexes in linear time, no network fetch of a `$ref`.
pub fn validator(schema: &serde_json::Value) -> Result<jsonschema::Validator, jsonschema::ValidationError<'static>> {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .with_pattern_options(jsonschema::PatternOptions::regex())
        .build(schema)
}

/// The compiled config schema of a family; `None` when the family has none.
#[salsa::tracked(returns(ref), no_eq)]
pub fn config_schema<'db>(
    db: &'db dyn salsa::Database,
    catalog: SourceFile,
    name: FamilyName<'db>,
) -> Option<CompiledSchema> {
    let family = family(db, catalog, name).as_ref()?;
    family.config_schema.as_ref().map(compile)
}

/// Findings for one node's config, and the JSON pointers of the faulty fields (which
/// later checks that read the config skip).
pub fn check(
    node_id: &str,
    at: &Anchor,
    family_id: &str,
    schema: &CompiledSchema,
    config: &serde_json::Value,
) -> (Vec<Finding>, Vec<String>) {
    let Ok(validator) = &schema.0 else { return (Vec::new(), Vec::new()) };
    let mut findings = Vec::new();
    let mut faulty = Vec::new();
    for error in validator.iter_errors(config) {
        let pointer = error.instance_path().as_str().to_string();
        let mut anchor = at.at("config");
        for segment in error.instance_path().segments() {
            anchor = match segment {
                LocationSegment::Property(key) => anchor.at(&*key),
                LocationSegment::Index(i) => anchor.at(i),
            };
        }
        let place = if pointer.is_empty() { String::new() } else { format!(" at `{pointer}`") };
        findings.push(
            Finding::new(
                Code::CatalogInvalidConfig,
                anchor,
                format!("config of node `{node_id}` does not match family `{family_id}`{place}: {error}"),
            )
            .node(node_id),
        );
        faulty.push(pointer);
    }
    faulty.sort();
    faulty.dedup();
    (findings, faulty)
}

/// Config schemas of the catalog that do not compile, as one message (a catalog fault:
/// the driver fails the run rather than blame the nodes).
pub fn catalog_schema_problems(db: &dyn salsa::Database, catalog: SourceFile) -> Option<String> {
    // The embedded catalog's schemas compile (the test below): a run on it compiles only
    // the schemas of the families its nodes name, when they first name them.
    if **catalog.text(db) == *little_frontend::catalog::DEFAULT_CATALOG {
        return None;
    }
    let families = &crate::queries::catalog_of(db, catalog).value.families;
    let problems: Vec<String> = families
        .iter()
        .filter_map(|f| {
            let schema = f.config_schema.as_ref()?;
            compile(schema)
                .0
                .err()
                .map(|e| format!("  family `{}`: its configSchema is not a valid JSON Schema: {e}", f.id))
        })
        .collect();
    (!problems.is_empty())
        .then(|| format!("the catalog `{}` cannot be used:\n{}\n", catalog.path(db), problems.join("\n")))
}

#[cfg(test)]
mod tests {
    use little_frontend::catalog::{DEFAULT_CATALOG, read_catalog};

    /// What lets a run on the embedded catalog skip compiling every schema up front.
    #[test]
    fn every_schema_of_the_embedded_catalog_compiles() {
        let tree = little_frontend::json::parse(DEFAULT_CATALOG).tree.expect("the embedded catalog is JSON");
        let catalog = read_catalog(&tree).0;
        let schemas: Vec<_> =
            catalog.families.iter().filter_map(|f| Some((&f.id, f.config_schema.as_ref()?))).collect();
        assert!(schemas.len() > 5, "the embedded catalog has config schemas");
        for (id, schema) in schemas {
            assert!(super::compile(schema).0.is_ok(), "family `{id}`'s config schema does not compile");
        }
    }
}
