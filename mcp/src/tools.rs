//! The tools of `little mcp`: their descriptors (`tools.json`, with the output schemas of
//! the documents little writes taken from `schemas/`), their arguments, and each call run
//! through `little_embed`, as the CLI would run it.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use little_embed::{Documents, Error};
use serde_json::{Map, Value, json};

use crate::Limits;

/// The tool list as `tools.json` writes it: `{ name, description, inputSchema,
/// outputSchema }`, an output schema that is `{ "$ref": "NAME.schema.json" }` standing
/// for that shipped schema.
const TOOLS: &str = include_str!("../tools.json");

/// The tools as `tools/list` gives them, every `$ref` to a shipped schema replaced by
/// that schema (so that a client needs nothing else to validate a result).
pub fn descriptors() -> &'static [Value] {
    static DESCRIPTORS: OnceLock<Vec<Value>> = OnceLock::new();
    DESCRIPTORS.get_or_init(|| {
        let mut tools: Vec<Value> = serde_json::from_str(TOOLS).expect("tools.json is JSON");
        for tool in &mut tools {
            let schema = &mut tool["outputSchema"];
            if let Some(name) = shipped_ref(schema) {
                *schema = shipped(name);
                continue;
            }
            // A shipped schema inside the output schema: its `$defs` move to the root, where
            // its `#/$defs/…` references point once it is inlined.
            let mut defs = Map::new();
            let mut stack: Vec<&mut Value> = vec![&mut *schema];
            while let Some(node) = stack.pop() {
                if let Some(name) = shipped_ref(node) {
                    *node = shipped(name);
                    if let Some(Value::Object(inner)) = node.as_object_mut().and_then(|m| m.remove("$defs")) {
                        defs.extend(inner);
                    }
                    continue;
                }
                match node {
                    Value::Object(map) => stack.extend(map.values_mut()),
                    Value::Array(items) => stack.extend(items.iter_mut()),
                    _ => {}
                }
            }
            if !defs.is_empty() {
                schema["$defs"] = Value::Object(defs);
            }
        }
        tools
    })
}

/// The shipped schema `name`, without what names it in a registry: a client validates
/// against the tool's own schema.
fn shipped(name: &str) -> Value {
    let mut schema = little_embed::schema(name).expect("tools.json refers to shipped schemas");
    if let Value::Object(map) = &mut schema {
        map.remove("$schema");
        map.remove("$id");
    }
    schema
}

/// `NAME` of a `{ "$ref": "NAME.schema.json" }`.
fn shipped_ref(node: &Value) -> Option<&str> {
    node.as_object().filter(|o| o.len() == 1)?.get("$ref")?.as_str()?.strip_suffix(".schema.json")
}

/// Why a call gives no result: the text of an error result, and what a program reads
/// in its `structuredContent`-less error (`code`, `message`, and a report when one blocks).
#[derive(Debug)]
pub struct Refusal {
    pub code: &'static str,
    pub message: String,
    pub report: Option<Value>,
}

impl Refusal {
    pub fn new(code: &'static str, message: impl Into<String>) -> Refusal {
        Refusal { code, message: message.into(), report: None }
    }
}

impl From<Error> for Refusal {
    fn from(error: Error) -> Refusal {
        Refusal { code: error.code, message: error.message, report: error.report.map(|r| *r) }
    }
}

/// What a successful call gives: its `structuredContent` and the short text a model
/// reads first.
pub struct Answer {
    pub structured: Value,
    pub text: String,
}

/// Where paths may point: the client's roots, or the server's working directory.
#[derive(Clone, Debug)]
pub struct Roots {
    /// Canonical directories; relative paths are read against the first.
    pub dirs: Vec<PathBuf>,
    /// What the rule is, for the refusal: "the client's roots" or "the server's working directory".
    pub from_client: bool,
}

/// Whether a call reads files, and so needs the roots before it runs.
pub fn reads_files(arguments: &Map<String, Value>) -> bool {
    arguments.iter().any(|(key, value)| match (key.as_str(), value.as_str()) {
        ("path", Some(_)) => true,
        ("catalog" | "context" | "bindings" | "snapshot" | "definition", Some(text)) => !is_document_text(text),
        _ => false,
    })
}

/// A reader document given as its text rather than a path: JSON text starts with `{`.
fn is_document_text(value: &str) -> bool {
    value.trim_start().starts_with(['{', '['])
}

/// Runs tool `name` on `arguments`.
pub fn call(name: &str, arguments: &Map<String, Value>, roots: &Roots, limits: &Limits) -> Result<Answer, Refusal> {
    let args = Args { map: arguments, roots, limits };
    match name {
        "check" => {
            let (bytes, path) = args.document()?;
            let report = little_embed::check(&bytes, &path, &args.documents()?)?;
            Ok(Answer { text: report_text(&report), structured: report })
        }
        "explain" => {
            let code = args.required("code")?;
            let page = little_embed::explain(code)?;
            let first = page.lines().find(|l| !l.trim().is_empty()).unwrap_or_default().to_string();
            Ok(Answer {
                text: format!("{first}\n\n(the whole page is the structured result's `page`)"),
                structured: json!({ "code": code, "page": page }),
            })
        }
        "codes" => {
            let codes = little_embed::codes();
            let count = codes.as_array().map_or(0, Vec::len);
            Ok(Answer { text: format!("{count} diagnostic codes"), structured: json!({ "codes": codes }) })
        }
        "families" => {
            let catalog = args.optional_reader("catalog")?;
            let found = little_embed::families(args.string("query")?, catalog.as_deref())?;
            let ids: Vec<&str> =
                found["families"].as_array().into_iter().flatten().filter_map(|f| f["id"].as_str()).collect();
            let shown = ids.iter().take(20).copied().collect::<Vec<_>>().join(", ");
            let more = if ids.len() > 20 { format!(", and {} more", ids.len() - 20) } else { String::new() };
            Ok(Answer { text: format!("{} families: {shown}{more}", ids.len()), structured: found })
        }
        "schema" => {
            let name = args.required("name")?;
            let schema = little_embed::schema(name)?;
            Ok(Answer {
                text: format!("the JSON Schema of `{name}`"),
                structured: json!({ "name": name, "schema": schema }),
            })
        }
        "hash" => {
            let (bytes, _) = args.document()?;
            let hash = little_embed::hash(&bytes)?;
            Ok(Answer { text: hash.clone(), structured: json!({ "hash": hash }) })
        }
        "compile" => {
            let (bytes, path) = args.document()?;
            let compiled = little_embed::compile(&bytes, &path, &args.documents()?)?;
            let id = compiled["candidate"]["id"].as_str().unwrap_or_default();
            Ok(Answer { text: format!("{path}: candidate {id} compiled"), structured: compiled })
        }
        "graph" => {
            let (bytes, path) = args.document()?;
            let mermaid = little_embed::graph(&bytes, &path, &args.documents()?)?;
            Ok(Answer { text: mermaid.clone(), structured: json!({ "mermaid": mermaid }) })
        }
        "snapshot" => {
            let (bytes, _) = args.document()?;
            let snapshot = little_embed::snapshot(&bytes)?;
            Ok(Answer { text: "the WorkflowDefinitionSnapshot of the definition".into(), structured: snapshot })
        }
        "lock" => {
            let (lwir, _) = args.document()?;
            let definition = args.optional_reader("definition")?.ok_or_else(|| missing("definition"))?;
            let registration = little_embed::lock(&lwir, &definition)?;
            let id = registration.pointer("/workflowVersion/id").and_then(Value::as_str).unwrap_or_default();
            Ok(Answer { text: format!("registered and locked: workflow version {id}"), structured: registration })
        }
        other => Err(Refusal::new("tool.unknown", format!("little has no tool `{other}`"))),
    }
}

fn missing(key: &str) -> Refusal {
    Refusal::new("argument.missing", format!("the argument `{key}` is required"))
}

/// A call's arguments, read against the roots and the limits.
struct Args<'a> {
    map: &'a Map<String, Value>,
    roots: &'a Roots,
    limits: &'a Limits,
}

impl Args<'_> {
    fn string(&self, key: &str) -> Result<Option<&str>, Refusal> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(Refusal::new("argument.invalid", format!("the argument `{key}` must be a string"))),
        }
    }

    fn required(&self, key: &str) -> Result<&str, Refusal> {
        self.string(key)?.ok_or_else(|| missing(key))
    }

    /// The document a tool works on, from `text` or `path`, and the name its report gives it.
    fn document(&self) -> Result<(Vec<u8>, String), Refusal> {
        match (self.string("text")?, self.string("path")?) {
            (Some(text), None) => {
                self.within_limit(text.len() as u64, "`text`")?;
                Ok((text.as_bytes().to_vec(), self.string("name")?.unwrap_or("<text>").to_string()))
            }
            (None, Some(path)) => Ok((self.read(path)?, path.to_string())),
            (Some(_), Some(_)) => Err(Refusal::new("argument.invalid", "give `text` or `path`, not both")),
            (None, None) => Err(Refusal::new("argument.missing", "give the document as `text` or as `path`")),
        }
    }

    /// A reader document: its JSON text, or the file a path names.
    fn optional_reader(&self, key: &str) -> Result<Option<Vec<u8>>, Refusal> {
        match self.string(key)? {
            None => Ok(None),
            Some(text) if is_document_text(text) => {
                self.within_limit(text.len() as u64, &format!("`{key}`"))?;
                Ok(Some(text.as_bytes().to_vec()))
            }
            Some(path) => self.read(path).map(Some),
        }
    }

    fn documents(&self) -> Result<Documents, Refusal> {
        Ok(Documents {
            catalog: self.optional_reader("catalog")?,
            context: self.optional_reader("context")?,
            bindings: self.optional_reader("bindings")?,
            snapshot: self.optional_reader("snapshot")?,
        })
    }

    fn within_limit(&self, size: u64, what: &str) -> Result<(), Refusal> {
        if size > self.limits.max_file_size {
            return Err(Refusal::new(
                "input.too_large",
                format!(
                    "{what} is {size} bytes, over the limit of {} (`little mcp --max-file-size`)",
                    self.limits.max_file_size
                ),
            ));
        }
        Ok(())
    }

    /// The bytes of the file `path` names, when it lies inside the roots.
    fn read(&self, path: &str) -> Result<Vec<u8>, Refusal> {
        let real = inside_roots(path, self.roots)?;
        let size = std::fs::metadata(&real)
            .map_err(|e| Refusal::new("path.unreadable", format!("cannot read `{path}`: {e}")))?
            .len();
        self.within_limit(size, &format!("`{path}`"))?;
        std::fs::read(&real).map_err(|e| Refusal::new("path.unreadable", format!("cannot read `{path}`: {e}")))
    }
}

/// `path` resolved (relative to the first root, symlinks followed), when it lies inside
/// one of the roots; otherwise a refusal naming the rule.
pub fn inside_roots(path: &str, roots: &Roots) -> Result<PathBuf, Refusal> {
    let given = Path::new(path);
    let joined = match roots.dirs.first() {
        Some(first) if given.is_relative() => first.join(given),
        _ => given.to_path_buf(),
    };
    let real =
        joined.canonicalize().map_err(|e| Refusal::new("path.unreadable", format!("cannot read `{path}`: {e}")))?;
    if roots.dirs.iter().any(|root| real.starts_with(root)) {
        return Ok(real);
    }
    let rule = if roots.from_client {
        let dirs: Vec<String> = roots.dirs.iter().map(|d| format!("`{}`", d.display())).collect();
        format!("the client's roots ({})", if dirs.is_empty() { "none given".into() } else { dirs.join(", ") })
    } else {
        format!(
            "the server's working directory `{}` (the client declares no roots)",
            roots.dirs.first().map(|d| d.display().to_string()).unwrap_or_default()
        )
    };
    let followed = if real != joined { format!(" (it resolves to `{}`)", real.display()) } else { String::new() };
    Err(Refusal::new(
        "path.outside_roots",
        format!("`{path}`{followed} lies outside {rule}: little reads only files inside them, symlinks followed"),
    ))
}

/// The short text of a check: the counts, the first diagnostics with their line, the
/// candidate or workflow version.
fn report_text(report: &Value) -> String {
    let summary = &report["summary"];
    let mut text =
        format!("{} error(s), {} warning(s), {} blocking", summary["errors"], summary["warnings"], summary["blocking"]);
    for file in report["files"].as_array().into_iter().flatten() {
        let path = file["path"].as_str().unwrap_or_default();
        let diagnostics = file["diagnostics"].as_array().map_or(&[][..], Vec::as_slice);
        for d in diagnostics.iter().take(5) {
            let at = match (&d["span"]["line"], &d["span"]["column"]) {
                (Value::Number(line), Value::Number(column)) => format!("{path}:{line}:{column}"),
                _ => path.to_string(),
            };
            text += &format!(
                "\n{at}: {} {}: {}",
                d["severity"].as_str().unwrap_or_default(),
                d["code"].as_str().unwrap_or_default(),
                d["message"].as_str().unwrap_or_default()
            );
            if let Some(help) = d["help"].as_str() {
                text += &format!(" ({help})");
            }
        }
        if diagnostics.len() > 5 {
            text += &format!("\n… and {} more in the structured result", diagnostics.len() - 5);
        }
        let candidate = &file["candidate"];
        if let Some(id) = candidate["id"].as_str() {
            let what = if candidate.get("topologyHash").is_some() { "candidate" } else { "workflow version" };
            text += &format!("\n{path}: {what} {id}");
        } else if file["document"].is_string() {
            text += &format!("\n{path}: no candidate");
        }
    }
    text
}
