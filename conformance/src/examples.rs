//! The repository's bundled examples and the documents each is checked with, shared by
//! the tests that compare `little_embed` with the CLI and hold little's output to its
//! schemas; and a validator for each schema of `schemas/`.

use little_frontend::schemas::schema;

/// Every example (drafts and LWIR), paths from the repository's root, with the options
/// `little check` is given for it in the README.
pub const EXAMPLES: &[(&str, &[&str])] = &[
    ("examples/quarterly-report.json", &["--context", "examples/context.json", "--bindings", "examples/bindings.json"]),
    ("examples/broken-wiring.json", &["--context", "examples/context.json"]),
    ("examples/broken-wiring.json", &[]),
    (
        "examples/contract-mismatch.json",
        &["--context", "examples/context.json", "--bindings", "examples/bindings.json"],
    ),
    ("examples/cycle.json", &["--context", "examples/context.json"]),
    ("examples/graph-demo.json", &[]),
    ("examples/support-triage.json", &["--context", "examples/context.json"]),
    ("examples/lwir/summarize-ticket.lwir.json", &["--snapshot", "examples/lwir/snapshot.json"]),
    ("examples/lwir/faulty-plan.lwir.json", &["--snapshot", "examples/lwir/snapshot.json"]),
    ("examples/lwir/summarize-ticket.lwir.json", &[]),
];

/// The schema `name` of `schemas/`, compiled as little compiles schemas. Panics (these are
/// tests) when there is no such schema or it does not compile.
pub fn schema_validator(name: &str) -> jsonschema::Validator {
    let schema = schema(name).unwrap_or_else(|| panic!("no schema `{name}`"));
    let value: serde_json::Value = serde_json::from_str(schema.text).expect("a schema is JSON");
    little_passes::checks::config::validator(&value).unwrap_or_else(|e| panic!("schema `{name}` compiles: {e}"))
}
