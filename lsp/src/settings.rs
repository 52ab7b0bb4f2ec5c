//! Where the workspace documents come from: `little.toml` at the workspace root, overridden
//! key by key by the client's settings (`initializationOptions`, then each
//! `workspace/didChangeConfiguration`).

use std::path::{Path, PathBuf};

use little_passes::inputs::InputPaths;
use serde_json::Value;

/// The file at the workspace root that names the workspace documents.
pub const SETTINGS_FILE: &str = "little.toml";

/// Where a diagnostic code's `codeDescription` points unless `explainUrl` says otherwise;
/// `{code}` is replaced by the code, e.g. `graph.dangling_edge`.
pub const DEFAULT_EXPLAIN_URL: &str = "https://little.dev/explain/{code}";

const KEYS: [&str; 5] = ["catalog", "context", "bindings", "snapshot", "explainUrl"];

/// One layer of settings; `None` leaves the key to the layer below.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    pub catalog: Option<PathBuf>,
    pub context: Option<PathBuf>,
    pub bindings: Option<PathBuf>,
    pub snapshot: Option<PathBuf>,
    pub explain_url: Option<String>,
}

impl Settings {
    /// `over`'s keys where it has them, `self`'s otherwise.
    pub fn overridden_by(&self, over: &Settings) -> Settings {
        Settings {
            catalog: over.catalog.clone().or_else(|| self.catalog.clone()),
            context: over.context.clone().or_else(|| self.context.clone()),
            bindings: over.bindings.clone().or_else(|| self.bindings.clone()),
            snapshot: over.snapshot.clone().or_else(|| self.snapshot.clone()),
            explain_url: over.explain_url.clone().or_else(|| self.explain_url.clone()),
        }
    }

    pub fn input_paths(&self) -> InputPaths {
        InputPaths {
            catalog: self.catalog.clone(),
            context: self.context.clone(),
            bindings: self.bindings.clone(),
            snapshot: self.snapshot.clone(),
        }
    }

    /// The settings files, for watching.
    pub fn files(&self) -> Vec<&Path> {
        [&self.catalog, &self.context, &self.bindings, &self.snapshot]
            .into_iter()
            .flatten()
            .map(PathBuf::as_path)
            .collect()
    }

    pub fn explain_url(&self, code: &str) -> String {
        self.explain_url.as_deref().unwrap_or(DEFAULT_EXPLAIN_URL).replace("{code}", code)
    }

    /// Client settings: `{ "catalog": "…", … }`, or the same under `"little"` (how VS Code
    /// sections them). `null` is no settings. Relative paths are taken from `root`.
    pub fn from_json(value: &Value, root: Option<&Path>) -> Result<Settings, String> {
        let value = value.get("little").unwrap_or(value);
        let object = match value {
            Value::Null => return Ok(Settings::default()),
            Value::Object(object) => object,
            other => return Err(format!("the settings must be an object, not {}", type_name(other))),
        };
        let mut pairs = Vec::new();
        for (key, value) in object {
            match value {
                Value::Null => {}
                Value::String(text) => pairs.push((key.as_str(), text.as_str())),
                other => return Err(format!("the setting `{key}` must be a string, not {}", type_name(other))),
            }
        }
        Settings::from_pairs(&pairs, root, "the client's settings")
    }

    /// `little.toml`: top-level string keys `catalog`, `context`, `bindings`, `snapshot`
    /// (paths relative to the file's folder) and `explainUrl`.
    pub fn from_toml(text: &str, root: &Path) -> Result<Settings, String> {
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| format!("{SETTINGS_FILE}: {e}"))?;
        let mut pairs = Vec::new();
        for (key, value) in &table {
            match value.as_str() {
                Some(text) => pairs.push((key.as_str(), text)),
                None => return Err(format!("{SETTINGS_FILE}: `{key}` must be a string, not {}", value.type_str())),
            }
        }
        Settings::from_pairs(&pairs, Some(root), SETTINGS_FILE)
    }

    fn from_pairs(pairs: &[(&str, &str)], root: Option<&Path>, source: &str) -> Result<Settings, String> {
        let mut settings = Settings::default();
        let path = |text: &str| match root {
            Some(root) if Path::new(text).is_relative() => root.join(text),
            _ => PathBuf::from(text),
        };
        for &(key, text) in pairs {
            match key {
                "catalog" => settings.catalog = Some(path(text)),
                "context" => settings.context = Some(path(text)),
                "bindings" => settings.bindings = Some(path(text)),
                "snapshot" => settings.snapshot = Some(path(text)),
                "explainUrl" => settings.explain_url = Some(text.to_string()),
                unknown => {
                    let help = little_diagnostics::suggest::did_you_mean(unknown, KEYS)
                        .map(|h| format!("; {h}"))
                        .unwrap_or_default();
                    return Err(format!(
                        "{source}: unknown setting `{unknown}`{help} (known: {})",
                        KEYS.map(|k| format!("`{k}`")).join(", ")
                    ));
                }
            }
        }
        Ok(settings)
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_settings_override_the_toml_key_by_key() {
        let root = Path::new("/ws");
        let toml = Settings::from_toml("catalog = \"cat.json\"\ncontext = \"/abs/ctx.json\"\n", root).unwrap();
        assert_eq!(toml.catalog.as_deref(), Some(Path::new("/ws/cat.json")));
        assert_eq!(toml.context.as_deref(), Some(Path::new("/abs/ctx.json")));
        let client = Settings::from_json(&serde_json::json!({"little": {"context": "c2.json"}}), Some(root)).unwrap();
        let merged = toml.overridden_by(&client);
        assert_eq!(merged.catalog.as_deref(), Some(Path::new("/ws/cat.json")));
        assert_eq!(merged.context.as_deref(), Some(Path::new("/ws/c2.json")));
        assert_eq!(merged.explain_url("a.b"), "https://little.dev/explain/a.b");
    }

    #[test]
    fn bad_settings_say_what_is_wrong() {
        let error = Settings::from_json(&serde_json::json!({"catalgo": "x"}), None).unwrap_err();
        assert!(error.contains("unknown setting `catalgo`; did you mean `catalog`?"), "{error}");
        let error = Settings::from_json(&serde_json::json!({"catalog": 3}), None).unwrap_err();
        assert!(error.contains("`catalog` must be a string, not a number"), "{error}");
        let error = Settings::from_toml("catalog = [", Path::new("/")).unwrap_err();
        assert!(error.starts_with("little.toml:"), "{error}");
    }
}
