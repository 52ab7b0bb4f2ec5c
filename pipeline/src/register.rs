//! The last steps of `little plan` (docs/reference/command-line.md#little-plan): validating an LWIR against the definition's snapshot
//! (with `little check`'s own passes), registering it as a WorkflowVersion and locking it.

use std::sync::Arc;

use little_diagnostics::{Code, Diagnostic, LineIndex};
use little_frontend::DocumentKind;
use little_frontend::anchor::{Finding, Resolver};
use little_frontend::lwir::StepCall;
use little_passes::{Database, SourceFile};
use serde_json::{Value, json};

use crate::capabilities::{Capabilities, hash};

/// The LWIR text a planner produced (or a user gave), and what validating it found.
#[derive(Clone, Debug)]
pub struct Validation {
    pub path: String,
    pub text: Arc<str>,
    pub diagnostics: Vec<Diagnostic>,
}

impl Validation {
    pub fn blocking(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::blocking)
    }

    /// The findings in the stable JSON shape of docs/reference/diagnostics.md (what a planner reads to repair).
    pub fn findings_json(&self) -> Vec<Value> {
        let index = LineIndex::new(&self.text);
        self.diagnostics.iter().map(|d| little_render::json::diagnostic_json(d, &self.text, &index)).collect()
    }
}

/// Validates LWIR bytes against the snapshot: every LWIR check of `little check
/// --snapshot`, binding checks included. Bytes that are not UTF-8 get the parse error.
pub fn validate(capabilities: &Capabilities, path: &str, bytes: &[u8]) -> Validation {
    let text: Arc<str> = match little_frontend::json::decode_utf8(bytes) {
        Ok(text) => text.into(),
        Err(diagnostic) => {
            return Validation {
                path: path.to_string(),
                text: String::from_utf8_lossy(bytes).into_owned().into(),
                diagnostics: vec![diagnostic],
            };
        }
    };
    let db = Database::default();
    let snapshot = SourceFile::new(&db, "<definition snapshot>".to_string(), capabilities.snapshot_text().into());
    let workspace = crate::workspace(&db, Some(snapshot));
    let file = SourceFile::new(&db, path.to_string(), text.clone());
    let report = little_passes::report(&db, workspace, file);
    let mut diagnostics = report.diagnostics;
    let untyped = untyped_tool_calls(capabilities, &db, file);
    if !untyped.is_empty() {
        diagnostics.extend(untyped);
        little_diagnostics::sort(&mut diagnostics);
    }
    if let Some(kind) = report.document
        && kind != DocumentKind::Lwir
    {
        diagnostics.push(
            Diagnostic::new(
                Code::ParseUnsupportedFormat,
                format!(
                    "expected an LWIR document (`\"apiVersion\": \"{}\"`), found a {} document",
                    little_frontend::LWIR_API_VERSION,
                    kind.as_str()
                ),
            )
            .with_path("$"),
        );
        little_diagnostics::sort(&mut diagnostics);
    }
    Validation { path: path.to_string(), text, diagnostics }
}

/// `pipeline.tool_without_output_schema`: each `tool.call` step whose tool a registry
/// source lists without an output schema, at the step's `with.tool`.
fn untyped_tool_calls(capabilities: &Capabilities, db: &Database, file: SourceFile) -> Vec<Diagnostic> {
    let untyped = &capabilities.tools_without_output_schema;
    if untyped.is_empty() {
        return Vec::new();
    }
    let (Some(lwir), Some(tree)) =
        (little_passes::lwir::lwir_ir(db, file), little_passes::queries::whole_tree(db, file))
    else {
        return Vec::new();
    };
    let resolver = Resolver::new(tree);
    let mut found = Vec::new();
    for step in &lwir.steps {
        let decl = step.decl(db);
        let StepCall::ToolCall { tool: Some(tool) } = &decl.call else { continue };
        let Some(source) = untyped.get(tool) else { continue };
        let finding = Finding::new(
            Code::PipelineToolWithoutOutputSchema,
            step.anchor(db).at("with").at("tool"),
            format!(
                "step `{}` calls `{tool}`, which the MCP server `{source}` lists without an output schema: \
                 the step's output could not be checked against the tool's",
                decl.id
            ),
        )
        .help(Some(format!(
            "give `{tool}` an output schema in its server, declare it with one in the definition's `tools`, \
             or get this step's output another way"
        )));
        found.push(resolver.resolve(finding));
    }
    found
}

/// A registered LWIR: its WorkflowVersion and its compiler lock.
#[derive(Clone, Debug, PartialEq)]
pub struct Registration {
    pub workflow_version: Value,
    pub lock: Value,
}

impl Registration {
    /// `wfver_<16 hex>`.
    pub fn id(&self) -> &str {
        self.workflow_version["id"].as_str().unwrap_or_default()
    }

    pub fn hash(&self) -> &str {
        self.workflow_version["hash"].as_str().unwrap_or_default()
    }

    /// The document `little lock` prints and `little plan -o` writes.
    pub fn document(&self) -> Value {
        json!({ "workflowVersion": self.workflow_version, "lock": self.lock })
    }
}

fn slot_json(slot: &crate::capabilities::Slot) -> Value {
    json!({ "id": slot.id, "providerId": slot.model.provider_id, "modelId": slot.model.model_id })
}

fn sorted_slots(capabilities: &Capabilities) -> Vec<&crate::capabilities::Slot> {
    let mut slots: Vec<&crate::capabilities::Slot> = capabilities.slots.iter().collect();
    slots.sort_by(|a, b| a.id.cmp(&b.id));
    slots
}

/// A global tool as the lock pins it: the hashes of its descriptor and schemas.
fn tool_lock(tool: &little_frontend::definition::ToolDecl) -> Value {
    json!({
        "id": tool.id,
        "descriptorHash": hash(&Capabilities::tool_json(tool)),
        "inputSchemaHash": hash(&tool.input_schema),
        "outputSchemaHash": hash(&tool.output_schema),
    })
}

/// What the runtime must provide for a definition: the lock's `capabilityManifest`,
/// which `little verify` compares with what the definition gives now.
pub fn capability_manifest(capabilities: &Capabilities) -> Value {
    json!({
        "workflowDefinitionHash": capabilities.definition_hash,
        "workerConfig": capabilities.snapshot["workerConfig"],
        "modelSlots": sorted_slots(capabilities).into_iter().map(slot_json).collect::<Vec<_>>(),
        "tools": capabilities.global_tools.iter().map(tool_lock).collect::<Vec<_>>(),
        "memoryStoreIds": capabilities.manifest["memoryStoreIds"],
    })
}

/// Registers a validated LWIR (nothing blocks) and locks it to the definition.
pub fn register(capabilities: &Capabilities, validation: &Validation) -> Result<Registration, String> {
    debug_assert!(!validation.blocking());
    // The WorkflowVersion is `little check`'s (one definition of the LWIR's identity),
    // taken from the same parse as the `lwir` the version carries.
    let tree = little_frontend::json::parse(&validation.text).tree.ok_or("the LWIR is not JSON")?;
    let version = little_passes::lwir::version_of_tree(&tree, true).ok_or("the LWIR has no canonical form")?;
    let canonical = version.canonical_json.clone().ok_or("the LWIR's canonical JSON was not built")?;
    let lwir_hash = version.hash.clone();
    let short = little_hashing::short_id(&lwir_hash).to_string();
    let lwir = tree.to_serde(tree.root());
    let workflow_version = json!({
        "id": version.id,
        "hash": lwir_hash,
        "canonicalizer": version.canonicalizer,
        "canonicalJson": canonical,
        "lwir": lwir,
    });

    let permitted = |key: &str| -> Vec<String> {
        let mut names: Vec<String> = lwir["permissions"][key]
            .as_array()
            .map(|items| items.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default();
        names.sort();
        names.dedup();
        names
    };
    let used_models = permitted("models");
    let model_slots: Vec<Value> =
        sorted_slots(capabilities).into_iter().filter(|s| used_models.contains(&s.id)).map(slot_json).collect();
    let used_tools = permitted("tools");
    let tools: Vec<Value> =
        capabilities.global_tools.iter().filter(|t| used_tools.contains(&t.id)).map(tool_lock).collect();
    let snapshot = &capabilities.snapshot;
    let capability_manifest = capability_manifest(capabilities);
    let requested_output = capabilities.requested_output();
    let remaining: Vec<Value> = validation
        .diagnostics
        .iter()
        .map(|d| {
            json!({ "code": d.code.as_str(), "severity": d.severity().as_str(), "path": d.path, "message": d.message })
        })
        .collect();
    let validation_record = json!({
        "lwirHash": lwir_hash,
        "snapshotHash": hash(snapshot),
        "diagnostics": remaining,
    });
    let lock = json!({
        "workflowVersionId": format!("wfv_{short}"),
        "workflowVersionHash": lwir_hash,
        "lwirVersionId": format!("wfver_{short}"),
        "lwirHash": lwir_hash,
        "workflowDefinitionHash": capabilities.definition_hash,
        "inputSchemaHash": snapshot["inputSchemaHash"],
        "requestedOutput": requested_output,
        "requestedOutputHash": hash(&requested_output),
        "capabilityManifest": capability_manifest,
        "capabilityManifestHash": hash(&capability_manifest),
        "modelSlots": model_slots,
        "tools": tools,
        "validationHash": hash(&validation_record),
    });
    Ok(Registration { workflow_version, lock })
}
