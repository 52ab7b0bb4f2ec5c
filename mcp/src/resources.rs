//! The server's resources: the JSON Schemas (`little://schemas/NAME`), the explanation
//! pages (`little://explain/CODE`) and the embedded catalog (`little://catalog`).

use serde_json::{Value, json};

/// Every resource, as `resources/list` gives it.
pub fn list() -> Vec<Value> {
    let mut resources = vec![json!({
        "uri": "little://catalog",
        "name": "catalog",
        "description": "The embedded catalog of node families (`workflow-catalog/v1`), what a check uses when no catalog is given.",
        "mimeType": "application/json",
    })];
    for name in little_embed::schema_names() {
        resources.push(json!({
            "uri": format!("little://schemas/{name}"),
            "name": format!("schema {name}"),
            "description": format!("The JSON Schema of `{name}` (`little schema {name}`)."),
            "mimeType": "application/schema+json",
        }));
    }
    for code in little_embed::codes().as_array().into_iter().flatten() {
        let code = code["code"].as_str().unwrap_or_default();
        resources.push(json!({
            "uri": format!("little://explain/{code}"),
            "name": format!("explain {code}"),
            "description": format!("The explanation page of `{code}` (`little explain {code}`)."),
            "mimeType": "text/markdown",
        }));
    }
    resources
}

/// The text of the resource `uri` and its MIME type, if little has it.
pub fn read(uri: &str) -> Option<(String, &'static str)> {
    let path = uri.strip_prefix("little://")?;
    if path == "catalog" {
        return Some((little_embed::embedded_catalog().to_string(), "application/json"));
    }
    if let Some(name) = path.strip_prefix("schemas/") {
        let schema = little_embed::schema(name).ok()?;
        return Some((
            serde_json::to_string_pretty(&schema).expect("JSON values serialize"),
            "application/schema+json",
        ));
    }
    let code = path.strip_prefix("explain/")?;
    little_embed::explain(code).ok().map(|page| (page, "text/markdown"))
}
