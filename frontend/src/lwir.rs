//! Lowering of an LWIR document (`apiVersion: littleworkflow.dev/v0.1`,
//! docs/reference/formats.md#lwir) into position-free declarations.
//!
//! The reader checks the JSON shape only: required fields, JSON types, unknown keys and
//! the kind-specific fields of `with`. The rules (hashes, entrypoints, fixers, schemas,
//! templates, `needs`, bindings) are checks of `little-passes`. Unknown keys are
//! `lwir.invalid_shape`: an LWIR is machine-written and locked by its hash, so a key with
//! no meaning is a fault for the planner to repair, not a warning (docs/decisions.md).

use std::collections::HashMap;

use little_diagnostics::Code;

use crate::anchor::{Anchor, Finding};
use crate::json::{JsonTree, NodeIdx, TreeValue};
use crate::reader::{Reader, ShapeCodes, member};

pub const LWIR_KIND: &str = "Workflow";
pub const STEP_KINDS: &[&str] = &["ai.generate", "code.run", "tool.call"];

pub const LWIR_CODES: ShapeCodes =
    ShapeCodes { invalid_shape: Code::LwirInvalidShape, unknown_field: Code::LwirInvalidShape };

const TOP_KEYS: &[&str] = &["apiVersion", "kind", "metadata", "input", "output", "permissions", "steps"];
const METADATA_KEYS: &[&str] = &["name", "version", "description"];
const PERMISSION_KEYS: &[&str] = &["models", "tools", "secrets", "network"];
const STEP_KEYS: &[&str] = &["id", "uses", "needs", "with", "output", "onFailure"];
const OUTPUT_KEYS: &[&str] = &["mode", "schema"];
const AI_GENERATE_KEYS: &[&str] = &["model", "prompt", "system"];
const CODE_RUN_KEYS: &[&str] = &["entrypoint", "files", "sandbox"];
const TOOL_CALL_KEYS: &[&str] = &["tool", "input"];
const FILE_KEYS: &[&str] = &["content", "sha256"];
const SANDBOX_KEYS: &[&str] = &["network", "env", "fs"];

/// An embedded JSON Schema: its value and, for the workflow's `input` and `output` (which
/// the binding checks compare), the `sha256:` of its canonical JSON.
#[derive(Clone, Debug, PartialEq)]
pub struct SchemaDecl {
    pub value: serde_json::Value,
    /// `None` for step schemas, and when the schema has no canonical form (a number
    /// beyond doubles).
    pub hash: Option<String>,
}

/// `permissions`; a list is `None` when it is missing or malformed (already reported).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Permissions {
    /// Each readable entry with its index in the array.
    pub models: Option<Vec<(u32, String)>>,
    pub tools: Option<Vec<(u32, String)>>,
}

/// Everything of an LWIR outside its steps.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct LwirHeader {
    pub name: Option<String>,
    pub input_schema: Option<SchemaDecl>,
    pub output_schema: Option<SchemaDecl>,
    pub permissions: Permissions,
}

/// One file of a `code.run` step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeFile {
    pub name: String,
    pub content: Option<String>,
    pub sha256: Option<String>,
}

/// The kind-specific part of a step, as far as it could be read.
#[derive(Clone, Debug, PartialEq)]
pub enum StepCall {
    AiGenerate {
        model: Option<String>,
    },
    CodeRun {
        entrypoint: Option<String>,
        files: Option<Vec<CodeFile>>,
    },
    ToolCall {
        tool: Option<String>,
    },
    /// `uses` names no LWIR kind (the pass reports it with a suggestion).
    Unknown(String),
    /// `uses` is missing or not a string (already reported).
    Unreadable,
}

impl StepCall {
    pub fn kind(&self) -> Option<&'static str> {
        match self {
            StepCall::AiGenerate { .. } => Some("ai.generate"),
            StepCall::CodeRun { .. } => Some("code.run"),
            StepCall::ToolCall { .. } => Some("tool.call"),
            StepCall::Unknown(_) | StepCall::Unreadable => None,
        }
    }
}

/// One step with a readable id. `nth` counts earlier steps with the same id.
#[derive(Clone, Debug, PartialEq)]
pub struct StepDecl {
    pub id: String,
    pub nth: u32,
    pub call: StepCall,
    /// The readable entries of `needs` with their index (empty when omitted).
    pub needs: Vec<(u32, String)>,
    /// `with` as authored (templates are looked for in it); `None` when malformed.
    pub with: Option<serde_json::Value>,
    pub output_schema: Option<SchemaDecl>,
    /// `onFailure` as authored: the fixer check judges its whole shape.
    pub on_failure: Option<serde_json::Value>,
    /// The reader reported a wrong shape in this step: checks that read it skip it.
    pub malformed: bool,
}

/// A lowered LWIR: what every check reads.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct LoweredLwir {
    pub header: LwirHeader,
    pub steps: Vec<StepDecl>,
    /// `steps` was missing or not an array.
    pub steps_unreadable: bool,
    pub findings: Vec<Finding>,
}

/// Lowers an LWIR whose `apiVersion` has already been recognised.
pub fn lower_lwir(tree: &JsonTree) -> LoweredLwir {
    let mut reader = Reader::new(tree, LWIR_CODES);
    let mut lwir = LoweredLwir::default();
    let root = Anchor::root();
    let Some(top) = reader.object(tree.root(), &root, "an LWIR document") else {
        lwir.steps_unreadable = true;
        lwir.findings = reader.findings;
        return lwir;
    };
    reader.unknown_keys(top, &root, "the LWIR document", TOP_KEYS);
    match member(top, "kind") {
        None => reader.missing(&root, "the LWIR document", "kind"),
        Some(idx) => {
            if let Some(kind) = reader.string(idx, &root.at("kind"), "`kind`")
                && kind != LWIR_KIND
            {
                reader.invalid(&root.at("kind"), format!("`kind` must be `{LWIR_KIND}`, found `{kind}`"));
            }
        }
    }
    lwir.header.name = read_metadata(&mut reader, top);
    lwir.header.input_schema = read_io(&mut reader, top, "input");
    lwir.header.output_schema = read_io(&mut reader, top, "output");
    lwir.header.permissions = read_permissions(&mut reader, top);

    match member(top, "steps") {
        None => {
            reader.missing(&root, "the LWIR document", "steps");
            lwir.steps_unreadable = true;
        }
        Some(idx) => match reader.array(idx, &root.at("steps"), "`steps`") {
            None => lwir.steps_unreadable = true,
            Some(items) => {
                let mut seen: HashMap<&str, u32> = HashMap::with_capacity(items.len());
                for (i, &item) in items.iter().enumerate() {
                    let id = tree.get(item, "id").and_then(|m| tree.value(m.value).as_str());
                    let at = match id {
                        Some(id) => {
                            let nth = seen.entry(id).or_insert(0);
                            *nth += 1;
                            Anchor::step(id, *nth - 1)
                        }
                        None => root.at("steps").at(i),
                    };
                    if let Some(step) = read_step(&mut reader, item, &at) {
                        lwir.steps.push(step);
                    }
                }
            }
        },
    }
    crate::draft::out_of_range_numbers(tree, tree.root(), Anchor::root(), &mut reader.findings);
    lwir.findings = reader.findings;
    lwir
}

/// `metadata`: the name (the definition id it binds to); version and description are text.
fn read_metadata(reader: &mut Reader<'_>, top: crate::json::Members<'_>) -> Option<String> {
    let root = Anchor::root();
    let Some(idx) = member(top, "metadata") else {
        reader.missing(&root, "the LWIR document", "metadata");
        return None;
    };
    let at = root.at("metadata");
    let members = reader.object(idx, &at, "`metadata`")?;
    reader.unknown_keys(members, &at, "`metadata`", METADATA_KEYS);
    for key in ["version", "description"] {
        if let Some(value) = member(members, key) {
            reader.string(value, &at.at(key), format_args!("`metadata.{key}`"));
        }
    }
    match member(members, "name") {
        None => {
            reader.missing(&at, "`metadata`", "name");
            None
        }
        Some(value) => reader.name(value, &at.at("name"), "`metadata.name`").map(str::to_string),
    }
}

/// `input` or `output` of the workflow: `{ schema }`.
fn read_io(reader: &mut Reader<'_>, top: crate::json::Members<'_>, key: &str) -> Option<SchemaDecl> {
    let root = Anchor::root();
    let Some(idx) = member(top, key) else {
        reader.missing(&root, "the LWIR document", key);
        return None;
    };
    let at = root.at(key);
    let members = reader.object(idx, &at, format_args!("`{key}`"))?;
    reader.unknown_keys(members, &at, format_args!("`{key}`"), &["schema"]);
    read_schema(reader, members, &at, &format!("`{key}`"), true)
}

/// The `schema` member of `members`: a required JSON object.
fn read_schema(
    reader: &mut Reader<'_>,
    members: crate::json::Members<'_>,
    at: &Anchor,
    what: &str,
    hashed: bool,
) -> Option<SchemaDecl> {
    let Some(idx) = member(members, "schema") else {
        reader.missing(at, what, "schema");
        return None;
    };
    reader.object(idx, &at.at("schema"), format_args!("{what}.schema"))?;
    let tree = reader.tree;
    let hash = if hashed { little_hashing::hash_canonical(TreeValue { tree, idx }).ok() } else { None };
    Some(SchemaDecl { value: tree.to_serde(idx), hash })
}

fn read_permissions(reader: &mut Reader<'_>, top: crate::json::Members<'_>) -> Permissions {
    let root = Anchor::root();
    let mut permissions = Permissions::default();
    let Some(idx) = member(top, "permissions") else {
        reader.missing(&root, "the LWIR document", "permissions");
        return permissions;
    };
    let at = root.at("permissions");
    let Some(members) = reader.object(idx, &at, "`permissions`") else { return permissions };
    reader.unknown_keys(members, &at, "`permissions`", PERMISSION_KEYS);
    for key in PERMISSION_KEYS {
        let what = format!("`permissions.{key}`");
        let list = match member(members, key) {
            Some(value) => indexed_strings(reader, value, &at.at(*key), &what),
            // `secrets` and `network` may be omitted; models and tools say what is granted.
            None if matches!(*key, "models" | "tools") => {
                reader.missing(&at, "`permissions`", key);
                None
            }
            None => None,
        };
        match *key {
            "models" => permissions.models = list,
            "tools" => permissions.tools = list,
            _ => {}
        }
    }
    permissions
}

fn read_step(reader: &mut Reader<'_>, item: NodeIdx, at: &Anchor) -> Option<StepDecl> {
    let first_finding = reader.findings.len();
    let members = reader.object(item, at, "a step")?;
    reader.unknown_keys(members, at, "a step", STEP_KEYS);
    let id = match member(members, "id") {
        None => {
            reader.missing(at, "a step", "id");
            return None;
        }
        Some(idx) => reader.name(idx, &at.at("id"), "a step's `id`")?.to_string(),
    };
    let nth = match &at.owner {
        crate::anchor::Owner::Step { nth, .. } => *nth,
        _ => 0,
    };
    let uses = match member(members, "uses") {
        None => {
            reader.missing(at, format_args!("step `{id}`"), "uses");
            None
        }
        Some(idx) => reader.string(idx, &at.at("uses"), "`uses`"),
    };
    let needs = match member(members, "needs") {
        None => Vec::new(),
        Some(idx) => indexed_strings(reader, idx, &at.at("needs"), "`needs`").unwrap_or_default(),
    };
    let with_at = at.at("with");
    let with_members = match member(members, "with") {
        None => {
            reader.missing(at, format_args!("step `{id}`"), "with");
            None
        }
        Some(idx) => reader.object(idx, &with_at, "`with`").map(|m| (idx, m)),
    };
    let call = match (uses, with_members) {
        (None, _) => StepCall::Unreadable,
        (Some(kind), _) if !STEP_KINDS.contains(&kind) => StepCall::Unknown(kind.to_string()),
        (Some(kind), None) => empty_call(kind),
        (Some(kind), Some((_, with))) => read_call(reader, kind, with, &with_at),
    };
    let output_schema = match member(members, "output") {
        None => {
            reader.missing(at, format_args!("step `{id}`"), "output");
            None
        }
        Some(idx) => {
            let output_at = at.at("output");
            match reader.object(idx, &output_at, "a step's `output`") {
                None => None,
                Some(output) => {
                    reader.unknown_keys(output, &output_at, "a step's `output`", OUTPUT_KEYS);
                    if let Some(mode) = member(output, "mode") {
                        reader.string(mode, &output_at.at("mode"), "`output.mode`");
                    }
                    read_schema(reader, output, &output_at, "a step's `output`", false)
                }
            }
        }
    };
    let tree = reader.tree;
    Some(StepDecl {
        id,
        nth,
        call,
        needs,
        with: with_members.map(|(idx, _)| tree.to_serde(idx)),
        output_schema,
        on_failure: member(members, "onFailure").map(|idx| tree.to_serde(idx)),
        malformed: reader.findings.len() > first_finding,
    })
}

fn empty_call(kind: &str) -> StepCall {
    match kind {
        "ai.generate" => StepCall::AiGenerate { model: None },
        "code.run" => StepCall::CodeRun { entrypoint: None, files: None },
        _ => StepCall::ToolCall { tool: None },
    }
}

/// The kind-specific fields of `with` (docs/reference/formats.md#lwir).
fn read_call(reader: &mut Reader<'_>, kind: &str, with: crate::json::Members<'_>, at: &Anchor) -> StepCall {
    let required_string = |reader: &mut Reader<'_>, key: &str| -> Option<String> {
        match member(with, key) {
            None => {
                reader.missing(at, format_args!("`with` of a `{kind}` step"), key);
                None
            }
            Some(idx) => reader.string(idx, &at.at(key), format_args!("`with.{key}`")).map(str::to_string),
        }
    };
    match kind {
        "ai.generate" => {
            reader.unknown_keys(with, at, "`with` of an `ai.generate` step", AI_GENERATE_KEYS);
            let model = required_string(reader, "model");
            required_string(reader, "prompt");
            if let Some(idx) = member(with, "system") {
                reader.string(idx, &at.at("system"), "`with.system`");
            }
            StepCall::AiGenerate { model }
        }
        "code.run" => {
            reader.unknown_keys(with, at, "`with` of a `code.run` step", CODE_RUN_KEYS);
            let entrypoint = required_string(reader, "entrypoint");
            let files = match member(with, "files") {
                None => {
                    reader.missing(at, "`with` of a `code.run` step", "files");
                    None
                }
                Some(idx) => read_files(reader, idx, &at.at("files")),
            };
            match member(with, "sandbox") {
                None => reader.missing(at, "`with` of a `code.run` step", "sandbox"),
                Some(idx) => read_sandbox(reader, idx, &at.at("sandbox")),
            }
            StepCall::CodeRun { entrypoint, files }
        }
        _ => {
            reader.unknown_keys(with, at, "`with` of a `tool.call` step", TOOL_CALL_KEYS);
            let tool = required_string(reader, "tool");
            if member(with, "input").is_none() {
                reader.missing(at, "`with` of a `tool.call` step", "input");
            }
            StepCall::ToolCall { tool }
        }
    }
}

fn read_files(reader: &mut Reader<'_>, idx: NodeIdx, at: &Anchor) -> Option<Vec<CodeFile>> {
    let members = reader.object(idx, at, "`with.files`")?;
    let mut files = Vec::with_capacity(members.len());
    for file in members {
        let file_at = at.at(file.key);
        let what = format!("file `{}`", file.key);
        // A malformed file still has its name (the entrypoint may name it).
        let Some(fields) = reader.object(file.value, &file_at, &what) else {
            files.push(CodeFile { name: file.key.to_string(), content: None, sha256: None });
            continue;
        };
        reader.unknown_keys(fields, &file_at, &what, FILE_KEYS);
        let text = |reader: &mut Reader<'_>, key: &str| match member(fields, key) {
            None => {
                reader.missing(&file_at, &what, key);
                None
            }
            Some(v) => reader.string(v, &file_at.at(key), format_args!("`{key}` of {what}")).map(str::to_string),
        };
        let content = text(reader, "content");
        let sha256 = text(reader, "sha256");
        files.push(CodeFile { name: file.key.to_string(), content, sha256 });
    }
    Some(files)
}

fn read_sandbox(reader: &mut Reader<'_>, idx: NodeIdx, at: &Anchor) {
    let Some(members) = reader.object(idx, at, "`with.sandbox`") else { return };
    reader.unknown_keys(members, at, "`with.sandbox`", SANDBOX_KEYS);
    for key in SANDBOX_KEYS {
        match member(members, key) {
            None => reader.missing(at, "`with.sandbox`", key),
            Some(value) => {
                if let Some(policy) = reader.string(value, &at.at(*key), format_args!("`sandbox.{key}`"))
                    && !matches!(policy, "allow" | "deny")
                {
                    reader
                        .invalid(&at.at(*key), format!("`sandbox.{key}` must be `allow` or `deny`, found `{policy}`"));
                }
            }
        }
    }
}

/// An array of strings, each readable one with its index; wrong items are reported.
fn indexed_strings(reader: &mut Reader<'_>, idx: NodeIdx, at: &Anchor, what: &str) -> Option<Vec<(u32, String)>> {
    let items = reader.array(idx, at, what)?;
    let mut out = Vec::with_capacity(items.len());
    for (i, &item) in items.iter().enumerate() {
        if let Some(s) = reader.string(item, &at.at(i), format_args!("each of {what}")) {
            out.push((i as u32, s.to_string()));
        }
    }
    Some(out)
}
