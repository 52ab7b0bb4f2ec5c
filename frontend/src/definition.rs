//! Reading a workflow definition (`workflow-definition/v1`): what `little plan` compiles
//! into a WorkflowVersion (docs/reference/formats.md#definition). Every wrong shape is a `definition.invalid_shape`
//! finding at its anchor; defaults are filled in here, so that every later stage (and
//! every hash) sees one normalized definition.

use little_diagnostics::Code;
use serde_json::Value;

use crate::anchor::{Anchor, Finding};
use crate::json::{JsonTree, NodeIdx};
use crate::reader::{Reader, ShapeCodes, member};

/// A definition's format is strict: an unknown key is an error too (it would otherwise
/// be silently left out of the definition hash).
pub const DEFINITION_CODES: ShapeCodes =
    ShapeCodes { invalid_shape: Code::DefinitionInvalidShape, unknown_field: Code::DefinitionInvalidShape };

/// A model: the provider and the model name (`modelId` names the slot).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct ModelRef {
    pub provider_id: String,
    pub model_id: String,
}

/// An execution model the planner may choose for a step.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct ModelDecl {
    pub model: ModelRef,
    pub description: String,
}

/// A tool descriptor of the registry the workflow runs with.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ToolDecl {
    pub id: String,
    pub description: String,
    pub input_schema: Value,
    pub output_schema: Value,
}

/// A skill: its name, its one-line description (the frontmatter) and its body.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Skill {
    pub name: String,
    pub description: String,
    pub content: String,
}

/// Access to a memory store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    ReadWrite,
    ReadOnly,
    None,
}

impl Access {
    pub const NAMES: [&'static str; 3] = ["rw", "ro", "none"];

    pub fn parse(name: &str) -> Option<Access> {
        match name {
            "rw" => Some(Access::ReadWrite),
            "ro" => Some(Access::ReadOnly),
            "none" => Some(Access::None),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Access::ReadWrite => "rw",
            Access::ReadOnly => "ro",
            Access::None => "none",
        }
    }
}

/// An attached memory store.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AttachedMemory {
    pub id: String,
    pub access: Access,
}

/// Which memory the harness sessions see (workflow `rw`, org `ro` by default: docs/reference/formats.md#definition).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MemoryConfig {
    pub workflow: Access,
    pub org: Access,
    pub attached: Vec<AttachedMemory>,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig { workflow: Access::ReadWrite, org: Access::ReadOnly, attached: Vec::new() }
    }
}

/// The planner: its own model, system prompt and skills.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct PlannerDecl {
    pub model: ModelRef,
    pub system: String,
    pub skills: Vec<Skill>,
}

/// A normalized definition: defaults filled in, wrong parts left out (with findings).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Definition {
    pub id: String,
    pub description: String,
    pub input_schema: Value,
    pub output_schema: Value,
    pub models: Vec<ModelDecl>,
    pub tools: Vec<ToolDecl>,
    pub global_tools: Vec<String>,
    pub planner: PlannerDecl,
    pub worker_skills: Vec<Skill>,
    pub memory: MemoryConfig,
    pub max_outer_cycles: u32,
}

/// The anchors of the schemas a definition embeds, for `schema.invalid` findings.
pub fn schema_anchors(definition: &Definition) -> Vec<(Anchor, &Value)> {
    let root = Anchor::root();
    let mut out =
        vec![(root.at("inputSchema"), &definition.input_schema), (root.at("outputSchema"), &definition.output_schema)];
    for (i, tool) in definition.tools.iter().enumerate() {
        let at = root.at("tools").at(i);
        out.push((at.at("inputSchema"), &tool.input_schema));
        out.push((at.at("outputSchema"), &tool.output_schema));
    }
    out
}

const TOP_KEYS: &[&str] = &[
    "format",
    "id",
    "description",
    "inputSchema",
    "outputSchema",
    "models",
    "tools",
    "globalTools",
    "planner",
    "worker",
    "memory",
    "maxOuterCycles",
];

pub const MAX_OUTER_CYCLES: i64 = 100;

struct DefinitionReader<'t> {
    reader: Reader<'t>,
}

impl<'t> DefinitionReader<'t> {
    /// Unknown keys are `definition.invalid_shape`: the format is strict, since an unknown
    /// key would drop out of the definition hash without a word.
    fn strict_keys(&mut self, members: crate::json::Members<'_>, at: &Anchor, what: &str, known: &[&str]) {
        self.reader.unknown_keys(members, at, what, known);
    }

    /// A required non-empty string field.
    fn required_name(&mut self, members: crate::json::Members<'_>, at: &Anchor, what: &str, key: &str) -> String {
        match member(members, key) {
            Some(v) => self.reader.name(v, &at.at(key), format_args!("`{key}`")).unwrap_or_default().to_string(),
            None => {
                self.reader.missing(at, what, key);
                String::new()
            }
        }
    }

    /// An optional string field (default empty).
    fn text(&mut self, members: crate::json::Members<'_>, at: &Anchor, key: &str) -> String {
        member(members, key)
            .and_then(|v| self.reader.string(v, &at.at(key), format_args!("`{key}`")))
            .unwrap_or_default()
            .to_string()
    }

    /// A required schema: an object or a boolean (JSON Schema 2020-12).
    fn schema(&mut self, members: crate::json::Members<'_>, at: &Anchor, what: &str, key: &str) -> Value {
        let tree = self.reader.tree;
        match member(members, key) {
            Some(v) if tree.value(v).is_object() || tree.value(v).is_bool() => tree.to_serde(v),
            Some(v) => {
                let found = tree.type_name(v);
                self.reader.invalid(
                    &at.at(key),
                    format!("`{key}` must be a JSON Schema (an object or a boolean), found {found}"),
                );
                Value::Bool(true)
            }
            None => {
                self.reader.missing(at, what, key);
                Value::Bool(true)
            }
        }
    }

    fn model_ref(
        &mut self,
        idx: NodeIdx,
        at: &Anchor,
        what: &str,
        extra: &[&str],
    ) -> Option<(ModelRef, crate::json::Members<'t>)> {
        let members = self.reader.object(idx, at, what)?;
        let mut known = vec!["providerId", "modelId"];
        known.extend_from_slice(extra);
        self.strict_keys(members, at, what, &known);
        let provider_id = self.required_name(members, at, what, "providerId");
        let model_id = self.required_name(members, at, what, "modelId");
        Some((ModelRef { provider_id, model_id }, members))
    }

    fn skills(&mut self, idx: NodeIdx, at: &Anchor) -> Vec<Skill> {
        let Some(items) = self.reader.array(idx, at, "`skills`") else { return Vec::new() };
        let mut skills = Vec::new();
        for (i, &item) in items.iter().enumerate() {
            let at = at.at(i);
            let Some(members) = self.reader.object(item, &at, "a skill") else { continue };
            self.strict_keys(members, &at, "a skill", &["name", "description", "content"]);
            let name = self.required_name(members, &at, "a skill", "name");
            let description = self.text(members, &at, "description");
            let content = self.text(members, &at, "content");
            if skills.iter().any(|s: &Skill| s.name == name) && !name.is_empty() {
                self.reader.invalid(&at.at("name"), format!("skill `{name}` is declared twice"));
                continue;
            }
            skills.push(Skill { name, description, content });
        }
        skills
    }

    fn access(&mut self, members: crate::json::Members<'_>, at: &Anchor, key: &str, default: Access) -> Access {
        let Some(v) = member(members, key) else { return default };
        let Some(name) = self.reader.string(v, &at.at(key), format_args!("`{key}`")) else { return default };
        Access::parse(name).unwrap_or_else(|| {
            self.reader.invalid(&at.at(key), format!("`{key}` must be `rw`, `ro` or `none`, found `{name}`"));
            default
        })
    }
}

/// Reads a definition document; the caller has checked its `format`.
pub fn read_definition(tree: &JsonTree) -> (Definition, Vec<Finding>) {
    let mut r = DefinitionReader { reader: Reader::new(tree, DEFINITION_CODES) };
    let mut definition = Definition { max_outer_cycles: 1, ..Definition::default() };
    let root = Anchor::root();
    let Some(top) = r.reader.object(tree.root(), &root, "a definition") else {
        return (definition, r.reader.findings);
    };
    r.strict_keys(top, &root, "the definition", TOP_KEYS);
    definition.id = r.required_name(top, &root, "the definition", "id");
    definition.description = r.text(top, &root, "description");
    definition.input_schema = r.schema(top, &root, "the definition", "inputSchema");
    definition.output_schema = r.schema(top, &root, "the definition", "outputSchema");

    match member(top, "models") {
        Some(v) => {
            if let Some(items) = r.reader.array(v, &root.at("models"), "`models`") {
                for (i, &item) in items.iter().enumerate() {
                    let at = root.at("models").at(i);
                    if let Some((model, members)) = r.model_ref(item, &at, "a model", &["description"]) {
                        let description = r.text(members, &at, "description");
                        definition.models.push(ModelDecl { model, description });
                    }
                }
            }
        }
        None => r.reader.missing(&root, "the definition", "models"),
    }

    if let Some(v) = member(top, "tools")
        && let Some(items) = r.reader.array(v, &root.at("tools"), "`tools`")
    {
        for (i, &item) in items.iter().enumerate() {
            let at = root.at("tools").at(i);
            let Some(members) = r.reader.object(item, &at, "a tool") else { continue };
            r.strict_keys(members, &at, "a tool", &["id", "description", "inputSchema", "outputSchema"]);
            let id = r.required_name(members, &at, "a tool", "id");
            let description = r.text(members, &at, "description");
            let input_schema = r.schema(members, &at, "a tool", "inputSchema");
            let output_schema = r.schema(members, &at, "a tool", "outputSchema");
            if !id.is_empty() && definition.tools.iter().any(|t| t.id == id) {
                r.reader.invalid(&at.at("id"), format!("tool `{id}` is declared twice"));
                continue;
            }
            definition.tools.push(ToolDecl { id, description, input_schema, output_schema });
        }
    }

    if let Some(v) = member(top, "globalTools")
        && let Some(items) = r.reader.array(v, &root.at("globalTools"), "`globalTools`")
    {
        for (i, &item) in items.iter().enumerate() {
            let at = root.at("globalTools").at(i);
            if let Some(name) = r.reader.name(item, &at, "each of `globalTools`") {
                if definition.global_tools.iter().any(|t| t == name) {
                    r.reader.invalid(&at, format!("global tool `{name}` is listed twice"));
                    continue;
                }
                definition.global_tools.push(name.to_string());
            }
        }
    }

    match member(top, "planner") {
        Some(v) => {
            let at = root.at("planner");
            if let Some(members) = r.reader.object(v, &at, "`planner`") {
                r.strict_keys(members, &at, "`planner`", &["model", "system", "skills"]);
                match member(members, "model") {
                    Some(m) => {
                        if let Some((model, _)) = r.model_ref(m, &at.at("model"), "the planner's `model`", &[]) {
                            definition.planner.model = model;
                        }
                    }
                    None => r.reader.missing(&at, "`planner`", "model"),
                }
                definition.planner.system = r.text(members, &at, "system");
                if let Some(s) = member(members, "skills") {
                    definition.planner.skills = r.skills(s, &at.at("skills"));
                }
            }
        }
        None => r.reader.missing(&root, "the definition", "planner"),
    }

    if let Some(v) = member(top, "worker") {
        let at = root.at("worker");
        if let Some(members) = r.reader.object(v, &at, "`worker`") {
            r.strict_keys(members, &at, "`worker`", &["skills"]);
            if let Some(s) = member(members, "skills") {
                definition.worker_skills = r.skills(s, &at.at("skills"));
            }
        }
    }

    if let Some(v) = member(top, "memory") {
        let at = root.at("memory");
        if let Some(members) = r.reader.object(v, &at, "`memory`") {
            r.strict_keys(members, &at, "`memory`", &["workflow", "org", "attached"]);
            definition.memory.workflow = r.access(members, &at, "workflow", Access::ReadWrite);
            definition.memory.org = r.access(members, &at, "org", Access::ReadOnly);
            if let Some(a) = member(members, "attached")
                && let Some(items) = r.reader.array(a, &at.at("attached"), "`attached`")
            {
                for (i, &item) in items.iter().enumerate() {
                    let at = at.at("attached").at(i);
                    let Some(fields) = r.reader.object(item, &at, "an attached memory store") else { continue };
                    r.strict_keys(fields, &at, "an attached memory store", &["id", "access"]);
                    let id = r.required_name(fields, &at, "an attached memory store", "id");
                    let access = r.access(fields, &at, "access", Access::ReadOnly);
                    if !id.is_empty() && definition.memory.attached.iter().any(|m| m.id == id) {
                        r.reader.invalid(&at.at("id"), format!("memory store `{id}` is attached twice"));
                        continue;
                    }
                    definition.memory.attached.push(AttachedMemory { id, access });
                }
            }
        }
    }

    if let Some(v) = member(top, "maxOuterCycles") {
        let at = root.at("maxOuterCycles");
        match r.reader.integer(v, &at, "`maxOuterCycles`") {
            Some(n) if (1..=MAX_OUTER_CYCLES).contains(&n) => definition.max_outer_cycles = n as u32,
            Some(n) => {
                r.reader.invalid(&at, format!("`maxOuterCycles` must be between 1 and {MAX_OUTER_CYCLES}, found {n}"))
            }
            None => {}
        }
    }
    (definition, r.reader.findings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> (Definition, Vec<(String, String)>) {
        let parsed = crate::json::parse(text);
        let tree = parsed.tree.expect("valid JSON");
        let (definition, findings) = read_definition(&tree);
        let resolver = crate::anchor::Resolver::new(&tree);
        let located = findings
            .into_iter()
            .map(|f| {
                let d = resolver.resolve(f);
                (d.path.unwrap_or_default(), d.message)
            })
            .collect();
        (definition, located)
    }

    const MINIMAL: &str = r#"{
      "format": "workflow-definition/v1", "id": "w", "inputSchema": {"type": "object"}, "outputSchema": true,
      "models": [{"providerId": "openai", "modelId": "gpt-5", "description": "d"}],
      "planner": {"model": {"providerId": "openai", "modelId": "gpt-5"}}
    }"#;

    #[test]
    fn defaults_are_filled_in() {
        let (d, findings) = read(MINIMAL);
        assert!(findings.is_empty(), "{findings:?}");
        assert_eq!(d.id, "w");
        assert_eq!(d.memory, MemoryConfig::default());
        assert_eq!(d.max_outer_cycles, 1);
        assert_eq!(d.output_schema, Value::Bool(true));
        assert_eq!(d.planner.model.model_id, "gpt-5");
        assert!(d.tools.is_empty() && d.global_tools.is_empty() && d.worker_skills.is_empty());
    }

    #[test]
    fn wrong_shapes_are_located() {
        let text = MINIMAL
            .replace(r#""id": "w""#, r#""id": 3, "plannr": {}, "maxOuterCycles": 0"#)
            .replace(r#""modelId": "gpt-5", "description": "d""#, r#""modelId": "gpt-5", "description": 1"#);
        let (_, findings) = read(&text);
        let paths: Vec<&str> = findings.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["$.plannr", "$.id", "$.models[0].description", "$.maxOuterCycles"], "{findings:?}");
        assert!(findings[0].1.contains("unknown field `plannr`"));
    }

    #[test]
    fn a_top_level_schema_key_is_for_editors_but_nowhere_else() {
        let text =
            MINIMAL.replacen('{', r#"{"$schema": "https://littleworkflow.dev/schemas/v1/definition.schema.json", "#, 1);
        assert!(read(&text).1.is_empty());
        let nested = MINIMAL.replace(r#""id": "w""#, r#""id": "w", "planner2": {"$schema": "x"}"#);
        assert_eq!(read(&nested).1.len(), 1, "an unknown key is still one finding");
    }

    #[test]
    fn missing_required_fields_point_at_their_parent() {
        let (_, findings) = read(r#"{"format": "workflow-definition/v1", "planner": {"system": "s"}}"#);
        let messages: Vec<&str> = findings.iter().map(|(_, m)| m.as_str()).collect();
        for key in ["id", "inputSchema", "outputSchema", "models", "model"] {
            assert!(messages.iter().any(|m| m.ends_with(&format!("`{key}`"))), "{key}: {messages:?}");
        }
    }

    #[test]
    fn duplicates_and_bad_access_are_reported() {
        let text = MINIMAL.replace(
            r#""outputSchema": true,"#,
            r#""outputSchema": true, "globalTools": ["a", "a"], "memory": {"org": "write"},
               "tools": [{"id": "a", "inputSchema": {}, "outputSchema": {}}, {"id": "a", "inputSchema": {}, "outputSchema": 5}],"#,
        );
        let (d, findings) = read(&text);
        let paths: Vec<&str> = findings.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            ["$.tools[1].outputSchema", "$.tools[1].id", "$.globalTools[1]", "$.memory.org"],
            "{findings:?}"
        );
        assert_eq!(d.global_tools, ["a"]);
        assert_eq!(d.tools.len(), 1);
    }
}
