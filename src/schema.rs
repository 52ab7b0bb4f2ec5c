//! `little schema [NAME]`: the JSON Schema of a document format, for editors.

use std::io::Write;

use little_frontend::schemas::{SCHEMAS, schema};

/// The name under which `little schema` prints the MCP tools (as `tools/list` gives them).
const MCP: &str = "mcp";

/// Prints the schema `name`, or lists every schema when there is no name. An unknown
/// name is an error (exit 2) that lists the names.
pub fn run(name: Option<&str>, out: &mut dyn Write) -> Result<(), String> {
    let write_error = |e: std::io::Error| format!("cannot write: {e}");
    let Some(name) = name else {
        let width = SCHEMAS.iter().map(|s| s.name.len()).max().unwrap_or(0);
        for schema in SCHEMAS {
            writeln!(out, "{:<width$} {}", schema.name, schema.document).map_err(write_error)?;
        }
        writeln!(out, "{MCP:<width$} the tools of `little mcp`: input and output schemas").map_err(write_error)?;
        return Ok(());
    };
    if name == MCP {
        let tools = serde_json::to_string_pretty(&little_mcp::tools_json()).expect("JSON values serialize");
        return writeln!(out, "{tools}").map_err(write_error);
    }
    let Some(schema) = schema(name) else {
        let names: Vec<&str> = SCHEMAS.iter().map(|s| s.name).chain([MCP]).collect();
        let help = little_diagnostics::suggest::did_you_mean(name, names.iter().copied())
            .map(|h| format!("; {h}"))
            .unwrap_or_default();
        return Err(format!("unknown schema `{name}`{help}; little has schemas for: {}", names.join(", ")));
    };
    out.write_all(schema.text.as_bytes()).map_err(write_error)
}
