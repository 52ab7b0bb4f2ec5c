//! The WorkflowDefinitionSnapshot (docs/reference/formats.md#snapshot) that LWIR files are bound against
//! (docs/reference/formats.md#lwir). It has no `format` field: a file given with `--snapshot` is read as one.
//! A snapshot with a fault is a tool failure, never "no snapshot" (docs/decisions.md).

use crate::anchor::{Anchor, Finding};
use crate::json::{JsonTree, Members};
use crate::lwir::LWIR_CODES;
use crate::reader::{Reader, member};

const KEYS: &[&str] = &[
    "id",
    "description",
    "inputSchemaHash",
    "outputSchemaHash",
    "modelSlots",
    "plannerConfig",
    "workerConfig",
    "globalTools",
    "memoryConfig",
];
const SLOT_KEYS: &[&str] = &["id", "providerId", "modelId", "description"];
const PLANNER_KEYS: &[&str] = &["modelSlotId", "harnessId", "systemHash", "skillsHash"];
const WORKER_KEYS: &[&str] = &["harnessId", "skillsHash"];
const MEMORY_KEYS: &[&str] = &["workflow", "org", "attached"];

/// One execution model slot.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ModelSlot {
    pub id: String,
    pub provider_id: String,
    pub model_id: String,
    pub description: String,
}

/// What the binding checks read of a snapshot (the rest is read for its shape only).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Snapshot {
    pub id: String,
    pub input_schema_hash: String,
    pub output_schema_hash: String,
    pub model_slots: Vec<ModelSlot>,
    pub global_tools: Vec<String>,
}

/// Reads a snapshot; every missing field or wrong type is a finding.
pub fn read_snapshot(tree: &JsonTree) -> (Snapshot, Vec<Finding>) {
    let mut reader = Reader::new(tree, LWIR_CODES);
    let mut snapshot = Snapshot::default();
    let root = Anchor::root();
    let Some(top) = reader.object(tree.root(), &root, "a WorkflowDefinitionSnapshot") else {
        return (snapshot, reader.findings);
    };
    reader.unknown_keys(top, &root, "the snapshot", KEYS);
    let what = "the snapshot";
    snapshot.id = required_string(&mut reader, top, &root, what, "id");
    required_string(&mut reader, top, &root, what, "description");
    snapshot.input_schema_hash = required_string(&mut reader, top, &root, what, "inputSchemaHash");
    snapshot.output_schema_hash = required_string(&mut reader, top, &root, what, "outputSchemaHash");
    for (key, at) in
        [("inputSchemaHash", root.at("inputSchemaHash")), ("outputSchemaHash", root.at("outputSchemaHash"))]
    {
        let hash = if key == "inputSchemaHash" { &snapshot.input_schema_hash } else { &snapshot.output_schema_hash };
        if !hash.is_empty() && !is_identity(hash) {
            reader.invalid(&at, format!("`{key}` must be `sha256:` and 64 lowercase hex digits, found `{hash}`"));
        }
    }
    match member(top, "modelSlots") {
        None => reader.missing(&root, what, "modelSlots"),
        Some(idx) => {
            let at = root.at("modelSlots");
            for (i, &item) in reader.array(idx, &at, "`modelSlots`").unwrap_or(&[]).iter().enumerate() {
                let at = at.at(i);
                let Some(slot) = reader.object(item, &at, "a model slot") else { continue };
                reader.unknown_keys(slot, &at, "a model slot", SLOT_KEYS);
                let what = "a model slot";
                snapshot.model_slots.push(ModelSlot {
                    id: required_string(&mut reader, slot, &at, what, "id"),
                    provider_id: required_string(&mut reader, slot, &at, what, "providerId"),
                    model_id: required_string(&mut reader, slot, &at, what, "modelId"),
                    description: required_string(&mut reader, slot, &at, what, "description"),
                });
            }
        }
    }
    for (key, keys) in [("plannerConfig", PLANNER_KEYS), ("workerConfig", WORKER_KEYS)] {
        let Some(idx) = member(top, key) else {
            reader.missing(&root, what, key);
            continue;
        };
        let at = root.at(key);
        if let Some(members) = reader.object(idx, &at, format_args!("`{key}`")) {
            reader.unknown_keys(members, &at, format_args!("`{key}`"), keys);
            for field in keys {
                required_string(&mut reader, members, &at, &format!("`{key}`"), field);
            }
        }
    }
    match member(top, "globalTools") {
        None => reader.missing(&root, what, "globalTools"),
        Some(idx) => {
            snapshot.global_tools = reader.strings(idx, &root.at("globalTools"), "`globalTools`").unwrap_or_default()
        }
    }
    match member(top, "memoryConfig") {
        None => reader.missing(&root, what, "memoryConfig"),
        Some(idx) => read_memory(&mut reader, idx),
    }
    (snapshot, reader.findings)
}

fn read_memory(reader: &mut Reader<'_>, idx: crate::json::NodeIdx) {
    let at = Anchor::root().at("memoryConfig");
    let Some(members) = reader.object(idx, &at, "`memoryConfig`") else { return };
    reader.unknown_keys(members, &at, "`memoryConfig`", MEMORY_KEYS);
    for key in ["workflow", "org"] {
        let access = required_string(reader, members, &at, "`memoryConfig`", key);
        if !access.is_empty() && !matches!(access.as_str(), "rw" | "ro" | "none") {
            reader.invalid(&at.at(key), format!("`memoryConfig.{key}` must be `rw`, `ro` or `none`, found `{access}`"));
        }
    }
    match member(members, "attached") {
        None => reader.missing(&at, "`memoryConfig`", "attached"),
        Some(v) => {
            reader.array(v, &at.at("attached"), "`memoryConfig.attached`");
        }
    }
}

/// A required string member; empty when missing or of another type (reported).
fn required_string(reader: &mut Reader<'_>, members: Members<'_>, at: &Anchor, what: &str, key: &str) -> String {
    match member(members, key) {
        None => {
            reader.missing(at, what, key);
            String::new()
        }
        Some(idx) => reader.string(idx, &at.at(key), format_args!("`{key}`")).unwrap_or_default().to_string(),
    }
}

fn is_identity(hash: &str) -> bool {
    hash.strip_prefix("sha256:")
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
}
