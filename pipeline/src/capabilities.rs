//! Stages 1, 3 and 4 of the pipeline (ARCHITECTURE.md numbers them): the normalized definition and its hash, the model
//! slots, the WorkflowDefinitionSnapshot and the PlannerManifest.
//!
//! Every hash is `sha256:` of the RFC 8785 canonical JSON of the value named, except the
//! system prompt's, which is the hash of its UTF-8 text (like a `code.run` file's).

use std::collections::BTreeMap;

use little_frontend::definition::{Definition, ModelDecl, ModelRef, Skill, ToolDecl};
use serde_json::{Map, Value, json};

/// The harness of planner and worker sessions (docs/reference/harness.md).
pub const HARNESS_ID: &str = "workflowHarness@1.0.0";

/// Suffixes that tell apart two model slots derived from one model name.
const ANIMALS: &[&str] = &[
    "otter", "heron", "lynx", "ibex", "koala", "panda", "raven", "tapir", "bison", "crane", "dingo", "egret", "ferret",
    "gecko", "hyena", "jackal", "kiwi", "lemur", "marten", "newt", "ocelot", "puffin", "quail", "robin", "stoat",
    "toucan", "vole", "walrus", "yak", "zebra",
];

/// `sha256:` of the canonical JSON of a `serde_json` value.
pub fn hash(value: &Value) -> String {
    // A serde_json number is always finite, so every serde_json value has a canonical form.
    little_hashing::hash_canonical(value).expect("serde_json values are canonicalizable")
}

/// The canonical JSON text of a `serde_json` value.
pub fn canonical_text(value: &Value) -> String {
    little_hashing::canonicalize(&little_hashing::Value::from(value)).expect("serde_json values are canonicalizable")
}

/// An execution model slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slot {
    pub id: String,
    pub model: ModelRef,
    pub description: String,
}

/// A free slot id for `model_id`: the name itself when free (the first model with a name
/// wins it), else the name with the first animal suffix not yet taken.
fn free_slot_id(model_id: &str, taken: &[&str]) -> String {
    if !taken.contains(&model_id) {
        return model_id.to_string();
    }
    (1..)
        .flat_map(|round: usize| {
            ANIMALS.iter().map(move |animal| {
                if round == 1 { format!("{model_id}-{animal}") } else { format!("{model_id}-{animal}-{round}") }
            })
        })
        .find(|candidate| !taken.contains(&candidate.as_str()))
        .expect("the candidates never run out")
}

/// The execution model slots, in the definition's order.
pub fn model_slots(models: &[ModelDecl]) -> Vec<Slot> {
    let mut slots: Vec<Slot> = Vec::with_capacity(models.len());
    for model in models {
        let taken: Vec<&str> = slots.iter().map(|s| s.id.as_str()).collect();
        let id = free_slot_id(&model.model.model_id, &taken);
        slots.push(Slot { id, model: model.model.clone(), description: model.description.clone() });
    }
    slots
}

/// The planner's slot: the execution slot of the same provider and model when there is
/// one, else a slot id derived the same way, apart from the execution slots.
pub fn planner_slot_id(planner: &ModelRef, slots: &[Slot]) -> String {
    if let Some(slot) = slots.iter().find(|s| &s.model == planner) {
        return slot.id.clone();
    }
    let taken: Vec<&str> = slots.iter().map(|s| s.id.as_str()).collect();
    free_slot_id(&planner.model_id, &taken)
}

fn skills_json(skills: &[Skill]) -> Value {
    let mut sorted: Vec<&Skill> = skills.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    Value::Array(
        sorted
            .into_iter()
            .map(|s| json!({ "name": s.name, "description": s.description, "content": s.content }))
            .collect(),
    )
}

fn tool_json(tool: &ToolDecl) -> Value {
    json!({
        "id": tool.id,
        "description": tool.description,
        "inputSchema": tool.input_schema,
        "outputSchema": tool.output_schema,
    })
}

fn memory_json(definition: &Definition) -> Value {
    let mut attached: Vec<_> = definition.memory.attached.iter().collect();
    attached.sort_by(|a, b| a.id.cmp(&b.id));
    json!({
        "workflow": definition.memory.workflow.as_str(),
        "org": definition.memory.org.as_str(),
        "attached": attached.iter().map(|m| json!({ "id": m.id, "access": m.access.as_str() })).collect::<Vec<_>>(),
    })
}

/// The normalized definition that `workflowDefinitionHash` covers: every field, defaults
/// filled in, sets sorted (tools, global tools, skills, attached memory); `models` keeps
/// its order, which decides the slot names. `format` is left out (it is constant).
pub fn normalized_definition(definition: &Definition) -> Value {
    let mut tools: Vec<&ToolDecl> = definition.tools.iter().collect();
    tools.sort_by(|a, b| a.id.cmp(&b.id));
    let mut global_tools = definition.global_tools.clone();
    global_tools.sort();
    json!({
        "id": definition.id,
        "description": definition.description,
        "inputSchema": definition.input_schema,
        "outputSchema": definition.output_schema,
        "models": definition.models.iter().map(|m| json!({
            "providerId": m.model.provider_id, "modelId": m.model.model_id, "description": m.description,
        })).collect::<Vec<_>>(),
        "tools": tools.into_iter().map(tool_json).collect::<Vec<_>>(),
        "globalTools": global_tools,
        "planner": {
            "model": { "providerId": definition.planner.model.provider_id, "modelId": definition.planner.model.model_id },
            "system": definition.planner.system,
            "skills": skills_json(&definition.planner.skills),
        },
        "worker": { "skills": skills_json(&definition.worker_skills) },
        "memory": memory_json(definition),
        "maxOuterCycles": definition.max_outer_cycles,
    })
}

/// The output the workflow must produce: the AI SDK output mode and the schema.
/// `array` for an array schema, `enum` for a top-level `enum`, `no-schema` for a schema
/// that accepts anything (`true` or `{}`), `object` otherwise.
pub fn requested_output(schema: &Value) -> Value {
    let mode = match schema {
        Value::Bool(true) => "no-schema",
        Value::Object(map) if map.is_empty() => "no-schema",
        Value::Object(map) if map.get("type").and_then(Value::as_str) == Some("array") => "array",
        Value::Object(map) if map.contains_key("enum") && !map.contains_key("properties") => "enum",
        _ => "object",
    };
    json!({ "mode": mode, "schema": schema })
}

/// Everything derived from one definition before a planner runs.
#[derive(Clone, Debug)]
pub struct Capabilities {
    pub definition: Definition,
    pub definition_hash: String,
    pub slots: Vec<Slot>,
    pub planner_slot_id: String,
    /// The WorkflowDefinitionSnapshot, fields in the order of docs/reference/formats.md#snapshot.
    pub snapshot: Value,
    /// The global tools' descriptors, sorted by id (only those the registry has).
    pub global_tools: Vec<ToolDecl>,
    /// The PlannerManifest (docs/reference/formats.md#snapshot) and its hash.
    pub manifest: Value,
    pub manifest_hash: String,
    /// The tools a registry source lists without an output schema (id → the source): a
    /// `tool.call` step may not call one, since its output could not be checked.
    pub tools_without_output_schema: BTreeMap<String, String>,
}

impl Capabilities {
    pub fn new(definition: Definition) -> Capabilities {
        let definition_hash = hash(&normalized_definition(&definition));
        let slots = model_slots(&definition.models);
        let planner_slot_id = planner_slot_id(&definition.planner.model, &slots);
        let mut global_tools: Vec<ToolDecl> = definition
            .global_tools
            .iter()
            .filter_map(|name| definition.tools.iter().find(|t| &t.id == name).cloned())
            .collect();
        global_tools.sort_by(|a, b| a.id.cmp(&b.id));
        let mut global_names = definition.global_tools.clone();
        global_names.sort();

        let system_hash = little_hashing::sha256_identity(definition.planner.system.as_bytes());
        let skills_hash = hash(&skills_json(&definition.planner.skills));
        let snapshot = json!({
            "id": definition.id,
            "description": definition.description,
            "inputSchemaHash": hash(&definition.input_schema),
            "outputSchemaHash": hash(&definition.output_schema),
            "modelSlots": slots.iter().map(|s| json!({
                "id": s.id, "providerId": s.model.provider_id, "modelId": s.model.model_id, "description": s.description,
            })).collect::<Vec<_>>(),
            "plannerConfig": {
                "modelSlotId": planner_slot_id,
                "harnessId": HARNESS_ID,
                "systemHash": system_hash,
                "skillsHash": skills_hash,
            },
            "workerConfig": { "harnessId": HARNESS_ID, "skillsHash": hash(&skills_json(&definition.worker_skills)) },
            "globalTools": global_names,
            "memoryConfig": memory_json(&definition),
        });

        let manifest = json!({
            "harnessId": HARNESS_ID,
            "plannerModelSlotId": planner_slot_id,
            "systemPromptHash": system_hash,
            "skillsHash": skills_hash,
            "workflowDefinitionHash": definition_hash,
            "globalToolsHash": hash(&Value::Array(global_tools.iter().map(tool_json).collect())),
            "memoryStoreIds": memory_store_ids(&definition),
        });
        let manifest_hash = hash(&manifest);
        Capabilities {
            definition,
            definition_hash,
            slots,
            planner_slot_id,
            snapshot,
            global_tools,
            manifest,
            manifest_hash,
            tools_without_output_schema: BTreeMap::new(),
        }
    }

    /// The capabilities with what `registry` says of its tools that the descriptors do not
    /// (which have no output schema); the hashes are unchanged.
    pub fn with_registry(mut self, registry: &crate::Registry) -> Capabilities {
        self.tools_without_output_schema = registry.without_output_schema();
        self
    }

    /// The capabilities of a later outer-loop cycle: the manifest gains
    /// `outerLoopContextHash` (so each cycle's manifest hash differs); cycle 1 has none.
    pub fn for_cycle(mut self, outer_loop: Option<&crate::outer_loop::OuterLoop>) -> Capabilities {
        if let Some(outer_loop) = outer_loop {
            self.manifest["outerLoopContextHash"] = json!(outer_loop.context_hash());
            self.manifest_hash = hash(&self.manifest);
        }
        self
    }

    /// The descriptor of a global tool, as the planner's task and the lock carry it.
    pub fn tool_json(tool: &ToolDecl) -> Value {
        tool_json(tool)
    }

    /// The snapshot as the text `little check --snapshot` reads.
    pub fn snapshot_text(&self) -> String {
        serde_json::to_string_pretty(&self.snapshot).expect("JSON values serialize") + "\n"
    }

    /// The requested output of the definition.
    pub fn requested_output(&self) -> Value {
        requested_output(&self.definition.output_schema)
    }
}

/// The memory stores a session mounts: `workflow:<definition id>` and `org` unless their
/// access is `none`, and `attached:<id>` for each attached store that is not `none`; sorted.
pub fn memory_store_ids(definition: &Definition) -> Vec<String> {
    use little_frontend::definition::Access;
    let mut ids = Vec::new();
    if definition.memory.workflow != Access::None {
        ids.push(format!("workflow:{}", definition.id));
    }
    if definition.memory.org != Access::None {
        ids.push("org".to_string());
    }
    for store in &definition.memory.attached {
        if store.access != Access::None {
            ids.push(format!("attached:{}", store.id));
        }
    }
    ids.sort();
    ids
}

/// The fields of two manifests that differ, as `(field, stored, current)`, in the
/// manifest's field order; fields present on one side only are included.
pub fn manifest_diff(stored: &Value, current: &Value) -> Vec<(String, Value, Value)> {
    let empty = Map::new();
    let stored = stored.as_object().unwrap_or(&empty);
    let current = current.as_object().unwrap_or(&empty);
    let mut keys: Vec<&String> = current.keys().collect();
    keys.extend(stored.keys().filter(|k| !current.contains_key(*k)));
    keys.into_iter()
        .filter_map(|key| {
            let (a, b) =
                (stored.get(key).cloned().unwrap_or(Value::Null), current.get(key).cloned().unwrap_or(Value::Null));
            (a != b).then(|| (key.clone(), a, b))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(provider: &str, name: &str) -> ModelDecl {
        ModelDecl {
            model: ModelRef { provider_id: provider.into(), model_id: name.into() },
            description: String::new(),
        }
    }

    #[test]
    fn slot_ids_come_from_model_names_and_the_first_wins() {
        let slots = model_slots(&[
            model("openai", "gpt-5"),
            model("azure", "gpt-5"),
            model("openai", "gpt-4o-mini"),
            model("other", "gpt-5"),
        ]);
        let ids: Vec<&str> = slots.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["gpt-5", "gpt-5-otter", "gpt-4o-mini", "gpt-5-heron"]);
    }

    #[test]
    fn a_suffixed_name_that_is_taken_moves_on() {
        let slots = model_slots(&[model("a", "m-otter"), model("a", "m"), model("b", "m")]);
        let ids: Vec<&str> = slots.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["m-otter", "m", "m-heron"]);
    }

    #[test]
    fn every_animal_taken_starts_a_second_round() {
        let models: Vec<ModelDecl> = (0..ANIMALS.len() + 2).map(|_| model("p", "m")).collect();
        let slots = model_slots(&models);
        assert_eq!(slots[ANIMALS.len() + 1].id, "m-otter-2");
        let mut ids: Vec<&str> = slots.iter().map(|s| s.id.as_str()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), models.len());
    }

    #[test]
    fn the_planner_shares_a_matching_execution_slot() {
        let slots = model_slots(&[model("openai", "gpt-5"), model("openai", "gpt-4o-mini")]);
        let planner = ModelRef { provider_id: "openai".into(), model_id: "gpt-5".into() };
        assert_eq!(planner_slot_id(&planner, &slots), "gpt-5");
        let other = ModelRef { provider_id: "azure".into(), model_id: "gpt-5".into() };
        assert_eq!(planner_slot_id(&other, &slots), "gpt-5-otter");
        assert_eq!(planner_slot_id(&other, &[]), "gpt-5");
    }

    fn capabilities_of(text: &str) -> Capabilities {
        let tree = little_frontend::json::parse(text).tree.expect("JSON");
        let (definition, findings) = little_frontend::definition::read_definition(&tree);
        assert!(findings.is_empty(), "{findings:?}");
        Capabilities::new(definition)
    }

    const DEFINITION: &str = r#"{"format": "workflow-definition/v1", "id": "w", "description": "d",
      "inputSchema": {"type": "object", "required": ["a"]}, "outputSchema": {"type": "object"},
      "models": [{"providerId": "p", "modelId": "m", "description": ""}],
      "tools": [{"id": "t2", "description": "", "inputSchema": {}, "outputSchema": {}},
                {"id": "t1", "description": "", "inputSchema": {}, "outputSchema": {}}],
      "globalTools": ["t2", "t1"],
      "planner": {"model": {"providerId": "p", "modelId": "m"}, "system": "s",
                  "skills": [{"name": "b"}, {"name": "a", "content": "x"}]}}"#;

    #[test]
    fn identities_ignore_layout_order_of_sets_and_explicit_defaults() {
        let base = capabilities_of(DEFINITION);
        let same = capabilities_of(
            &DEFINITION
                .replace(r#""globalTools": ["t2", "t1"]"#, r#""globalTools": ["t1", "t2"], "maxOuterCycles": 1"#)
                .replace(r#""description": "d","#, r#""memory": {"workflow": "rw", "org": "ro"}, "description": "d","#)
                .replace('\n', " "),
        );
        assert_eq!(base.definition_hash, same.definition_hash);
        assert_eq!(base.manifest_hash, same.manifest_hash);
        assert_eq!(base.snapshot, same.snapshot);
        assert_eq!(base.snapshot["globalTools"], json!(["t1", "t2"]));
    }

    #[test]
    fn each_manifest_field_follows_its_part_of_the_definition() {
        let base = capabilities_of(DEFINITION);
        let changed = |from: &str, to: &str| {
            let other = capabilities_of(&DEFINITION.replace(from, to));
            let diff = manifest_diff(&base.manifest, &other.manifest);
            diff.into_iter().map(|(field, _, _)| field).collect::<Vec<_>>()
        };
        assert_eq!(changed(r#""system": "s""#, r#""system": "t""#), ["systemPromptHash", "workflowDefinitionHash"]);
        assert_eq!(changed(r#""content": "x""#, r#""content": "y""#), ["skillsHash", "workflowDefinitionHash"]);
        assert_eq!(
            changed(r#"{"id": "t1", "description": """#, r#"{"id": "t1", "description": "new""#),
            ["workflowDefinitionHash", "globalToolsHash"]
        );
        assert_eq!(
            changed(r#""description": "d""#, r#""description": "e""#),
            ["workflowDefinitionHash"],
            "the description is in the definition, not in the planner's capabilities"
        );
        assert_eq!(
            changed(r#""globalTools": ["t2", "t1"],"#, r#""globalTools": ["t2", "t1"], "memory": {"org": "none"},"#),
            ["workflowDefinitionHash", "memoryStoreIds"]
        );
        assert_eq!(changed(r#""globalTools": ["t2", "t1"]"#, r#""globalTools": ["t2"]"#).len(), 2);
    }

    #[test]
    fn requested_output_modes() {
        assert_eq!(requested_output(&json!({"type": "object"}))["mode"], "object");
        assert_eq!(requested_output(&json!({"type": "array"}))["mode"], "array");
        assert_eq!(requested_output(&json!({"enum": ["a"]}))["mode"], "enum");
        assert_eq!(requested_output(&json!(true))["mode"], "no-schema");
        assert_eq!(requested_output(&json!({}))["mode"], "no-schema");
    }

    #[test]
    fn manifest_diff_lists_changed_and_one_sided_fields() {
        let a = json!({"x": 1, "y": 2, "gone": 3});
        let b = json!({"x": 1, "y": 5, "new": 4});
        let diff = manifest_diff(&a, &b);
        let keys: Vec<&str> = diff.iter().map(|(k, _, _)| k.as_str()).collect();
        assert_eq!(keys, ["y", "new", "gone"]);
    }
}
