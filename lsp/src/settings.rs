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

const KEYS: [&str; 6] = ["catalog", "context", "bindings", "snapshot", "explainUrl", "files"];

/// One layer of settings; `None` leaves the key to the layer below.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    pub catalog: Option<PathBuf>,
    pub context: Option<PathBuf>,
    pub bindings: Option<PathBuf>,
    pub snapshot: Option<PathBuf>,
    pub explain_url: Option<String>,
    /// Globs (absolute: relative ones are taken from the settings' folder) of the files
    /// the server checks whatever their `format` says (`crate::ownership`).
    pub files: Option<Vec<String>>,
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
            files: over.files.clone().or_else(|| self.files.clone()),
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

    /// The `files` globs, none when unset.
    pub fn file_globs(&self) -> &[String] {
        self.files.as_deref().unwrap_or(&[])
    }

    pub fn explain_url(&self, code: &str) -> String {
        self.explain_url.as_deref().unwrap_or(DEFAULT_EXPLAIN_URL).replace("{code}", code)
    }

    /// Client settings: `{ "catalog": "…", … }`, or the same under `"little"` (how VS Code
    /// sections them). `null` is no settings. Relative paths are taken from `root`.
    pub fn from_json(value: &Value, root: Option<&Path>) -> Read {
        const SOURCE: &str = "the client's settings";
        let value = value.get("little").unwrap_or(value);
        let object = match value {
            Value::Null => return Read::default(),
            Value::Object(object) => object,
            other => {
                return Read::error(format!(
                    "{SOURCE}: they must be an object, not {}; they are ignored",
                    type_name(other)
                ));
            }
        };
        let mut read = Read::default();
        for (key, value) in object {
            match value {
                Value::Null => {}
                Value::String(text) => read.take(SOURCE, key, text, root),
                Value::Array(items) if key == "files" => {
                    let globs: Option<Vec<&str>> = items.iter().map(Value::as_str).collect();
                    match globs {
                        Some(globs) => read.take_files(&globs, root),
                        None => read.problems.push(Problem::error(format!(
                            "{SOURCE}: `files` must be an array of glob strings; it is ignored"
                        ))),
                    }
                }
                other if KEYS.contains(&key.as_str()) => read.problems.push(Problem::error(format!(
                    "{SOURCE}: `{key}` must be a string, not {}; it is ignored",
                    type_name(other)
                ))),
                _ => read.unknown(SOURCE, key),
            }
        }
        read
    }

    /// `little.toml` at `path`: top-level string keys `catalog`, `context`, `bindings`,
    /// `snapshot` (paths relative to the file's folder) and `explainUrl`, and `files` (an
    /// array of globs, relative to the file's folder); the `providers`
    /// tables belong to `little plan`. Problems name the file, line and column.
    pub fn from_toml(text: &str, path: &Path) -> Read {
        let root = path.parent().unwrap_or(Path::new("/"));
        let index = little_diagnostics::LineIndex::new(text);
        let at = |offset: usize| {
            let (line, column) = index.line_col(text, offset as u32);
            format!("{}:{line}:{column}", path.display())
        };
        let table = match toml::de::DeTable::parse(text) {
            Ok(table) => table,
            Err(e) => {
                let offset = e.span().map_or(0, |span| span.start);
                return Read::error(format!("{}: {}; the file is ignored", at(offset), one_line(e.message())));
            }
        };
        let mut read = Read::default();
        for (key, value) in table.get_ref() {
            let (name, source) = (key.get_ref().as_ref(), at(key.span().start));
            match value.get_ref() {
                toml::de::DeValue::String(text) => read.take(&source, name, text, Some(root)),
                toml::de::DeValue::Array(items) if name == "files" => {
                    let globs: Option<Vec<&str>> = items.iter().map(|i| i.get_ref().as_str()).collect();
                    match globs {
                        Some(globs) => read.take_files(&globs, Some(root)),
                        None => read.problems.push(Problem::error(format!(
                            "{source}: `files` must be an array of glob strings; it is ignored"
                        ))),
                    }
                }
                _ if OTHER_TABLES.contains(&name) => {}
                other if KEYS.contains(&name) => read.problems.push(Problem::error(format!(
                    "{source}: `{name}` must be a string, not {}; it is ignored",
                    other.type_str()
                ))),
                _ => read.unknown(&source, name),
            }
        }
        read
    }
}

/// Top-level tables of `little.toml` that other commands read.
const OTHER_TABLES: [&str; 2] = ["providers", "sandbox"];

/// How much a settings problem costs: a warning leaves everything else in force; an
/// error means a setting the user meant is not applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Warning,
    Error,
}

/// One problem with the settings, as one plain line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub level: Level,
    pub message: String,
}

impl Problem {
    fn error(message: String) -> Problem {
        Problem { level: Level::Error, message }
    }
}

/// Settings read from one source, and what was wrong in it: a wrong key is left out and
/// the others apply.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Read {
    pub settings: Settings,
    pub problems: Vec<Problem>,
}

impl Read {
    fn error(message: String) -> Read {
        Read { settings: Settings::default(), problems: vec![Problem::error(message)] }
    }

    fn take(&mut self, source: &str, key: &str, text: &str, root: Option<&Path>) {
        let path = || match root {
            Some(root) if Path::new(text).is_relative() => root.join(text),
            _ => PathBuf::from(text),
        };
        let settings = &mut self.settings;
        match key {
            "catalog" => settings.catalog = Some(path()),
            "context" => settings.context = Some(path()),
            "bindings" => settings.bindings = Some(path()),
            "snapshot" => settings.snapshot = Some(path()),
            "explainUrl" => settings.explain_url = Some(text.to_string()),
            "files" => self.take_files(&[text], root),
            _ => self.unknown(source, key),
        }
    }

    fn take_files(&mut self, globs: &[&str], root: Option<&Path>) {
        let absolute = |glob: &str| match root {
            Some(root) if Path::new(glob).is_relative() => root.join(glob).to_string_lossy().into_owned(),
            _ => glob.to_string(),
        };
        self.settings.files = Some(globs.iter().map(|g| absolute(g)).collect());
    }

    fn unknown(&mut self, source: &str, key: &str) {
        let help = little_diagnostics::suggest::did_you_mean(key, KEYS).map(|h| format!("; {h}")).unwrap_or_default();
        self.problems.push(Problem {
            level: Level::Warning,
            message: format!(
                "{source}: unknown setting `{key}`{help}; it is ignored (known: {})",
                KEYS.map(|k| format!("`{k}`")).join(", ")
            ),
        });
    }
}

/// A message on one line: a parser's multi-line message joined with `; `.
fn one_line(message: &str) -> String {
    message.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("; ")
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
        let toml =
            Settings::from_toml("catalog = \"cat.json\"\ncontext = \"/abs/ctx.json\"\n", Path::new("/ws/little.toml"));
        assert_eq!(toml.problems, []);
        let toml = toml.settings;
        assert_eq!(toml.catalog.as_deref(), Some(Path::new("/ws/cat.json")));
        assert_eq!(toml.context.as_deref(), Some(Path::new("/abs/ctx.json")));
        let client =
            Settings::from_json(&serde_json::json!({"little": {"context": "c2.json"}}), Some(Path::new("/ws")));
        let merged = toml.overridden_by(&client.settings);
        assert_eq!(merged.catalog.as_deref(), Some(Path::new("/ws/cat.json")));
        assert_eq!(merged.context.as_deref(), Some(Path::new("/ws/c2.json")));
        assert_eq!(merged.explain_url("a.b"), "https://little.dev/explain/a.b");
    }

    #[test]
    fn an_unknown_key_is_a_warning_and_the_rest_apply() {
        let read = Settings::from_json(&serde_json::json!({"catalgo": "x", "context": "c.json"}), None);
        assert_eq!(read.settings.context.as_deref(), Some(Path::new("c.json")));
        assert_eq!(read.problems.len(), 1);
        assert_eq!(read.problems[0].level, Level::Warning);
        assert!(
            read.problems[0].message.contains("unknown setting `catalgo`; did you mean `catalog`?"),
            "{:?}",
            read.problems
        );
        let read = Settings::from_json(&serde_json::json!({"catalog": 3, "context": "c.json"}), None);
        assert_eq!((read.problems[0].level, read.settings.catalog), (Level::Error, None));
        assert!(read.problems[0].message.contains("`catalog` must be a string, not a number"), "{:?}", read.problems);
        assert!(read.settings.context.is_some());
    }

    #[test]
    fn toml_problems_are_one_line_with_file_line_and_column() {
        let path = Path::new("/ws/little.toml");
        let read = Settings::from_toml(
            "catalog = \"cat.json\"\ncontxt = \"c.json\"\n[providers.openai]\nbase_url = \"u\"\n",
            path,
        );
        assert_eq!(read.settings.catalog.as_deref(), Some(Path::new("/ws/cat.json")));
        assert_eq!(read.problems.len(), 1, "the providers table is little plan's: {:?}", read.problems);
        assert!(
            read.problems[0]
                .message
                .starts_with("/ws/little.toml:2:1: unknown setting `contxt`; did you mean `context`?")
        );
        let read = Settings::from_toml("catalog = [\n", path);
        assert_eq!(read.problems.len(), 1);
        let message = &read.problems[0].message;
        assert!(message.starts_with("/ws/little.toml:") && !message.contains('\n'), "{message}");
        let read = Settings::from_toml("context = 3\n", path);
        assert!(
            read.problems[0].message.starts_with("/ws/little.toml:1:1: `context` must be a string, not integer"),
            "{:?}",
            read.problems
        );
    }
}
