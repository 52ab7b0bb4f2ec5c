//! The binding pass: the LWIR against the WorkflowDefinitionSnapshot
//! (`--snapshot`). Without a snapshot the checks are skipped and one
//! `binding.snapshot_unavailable` (info) says so, as `request.context_unavailable` does
//! for drafts.

use little_diagnostics::{Code, suggest};
use little_frontend::anchor::{Anchor, Finding};
use little_frontend::lwir::StepCall;
use little_frontend::snapshot::{Snapshot, read_snapshot};

use crate::db::{SourceFile, Workspace};
use crate::queries::{Read, whole_tree};

use super::steps::{fixer_model, step_findings};
use super::{lwir_ir, schemas};

/// A snapshot file, read; a file that is not JSON reads as an empty snapshot with no
/// findings (its parse diagnostics say why).
#[salsa::tracked(returns(ref))]
pub fn snapshot_of(db: &dyn salsa::Database, file: SourceFile) -> Read<Snapshot> {
    match whole_tree(db, file) {
        Some(tree) => {
            let (value, findings) = read_snapshot(tree);
            Read { value, findings }
        }
        None => Read { value: Snapshot::default(), findings: Vec::new() },
    }
}

#[salsa::tracked(returns(ref))]
pub fn binding_findings(db: &dyn salsa::Database, workspace: Workspace, file: SourceFile) -> Vec<Finding> {
    let Some(lwir) = lwir_ir(db, file) else { return Vec::new() };
    let Some(snapshot_file) = workspace.snapshot(db) else {
        return vec![Finding::new(
            Code::BindingSnapshotUnavailable,
            Anchor::root().at("metadata").at("name"),
            "no definition snapshot was given (`--snapshot`), so the binding checks did not run: name, \
             schema hashes, permitted models and tools",
        )];
    };
    let snapshot = &snapshot_of(db, snapshot_file).value;
    let header = &lwir.header;
    let mut findings = Vec::new();

    if let Some(name) = &header.name
        && *name != snapshot.id
    {
        findings.push(Finding::new(
            Code::BindingNameMismatch,
            Anchor::root().at("metadata").at("name"),
            format!("`metadata.name` is `{name}`, but the definition's id is `{}`", snapshot.id),
        ));
    }
    let valid = schemas::header_schemas(db, file);
    for (key, schema, valid, expected, code) in [
        (
            "input",
            &header.input_schema,
            valid.input_valid,
            &snapshot.input_schema_hash,
            Code::BindingInputSchemaMismatch,
        ),
        (
            "output",
            &header.output_schema,
            valid.output_valid,
            &snapshot.output_schema_hash,
            Code::BindingOutputSchemaMismatch,
        ),
    ] {
        // An invalid schema is already `schema.invalid`; a number with no canonical form
        // is already `parse.invalid_json`.
        let Some(schema) = schema.as_ref().filter(|_| valid) else { continue };
        let Some(hash) = &schema.hash else { continue };
        if hash != expected {
            findings.push(Finding::new(
                code,
                Anchor::root().at(key).at("schema"),
                format!(
                    "`{key}.schema` is not the definition's {key} schema: its canonical hash is `{hash}`, \
                     the snapshot's `{key}SchemaHash` is `{expected}`"
                ),
            ));
        }
    }
    let slots: Vec<&str> = snapshot.model_slots.iter().map(|s| s.id.as_str()).collect();
    for (index, model) in header.permissions.models.iter().flatten() {
        if !slots.contains(&model.as_str()) {
            findings.push(
                Finding::new(
                    Code::BindingModelNotPermitted,
                    Anchor::root().at("permissions").at("models").at(*index as usize),
                    format!("`permissions.models` grants `{model}`, which is not a model slot of the definition"),
                )
                .help(suggest::did_you_mean(model, slots.iter().copied())),
            );
        }
    }
    for (index, tool) in header.permissions.tools.iter().flatten() {
        if !snapshot.global_tools.contains(tool) {
            findings.push(
                Finding::new(
                    Code::BindingToolNotPermitted,
                    Anchor::root().at("permissions").at("tools").at(*index as usize),
                    format!("`permissions.tools` grants `{tool}`, which is not a global tool of the definition"),
                )
                .help(suggest::did_you_mean(tool, snapshot.global_tools.iter().map(String::as_str))),
            );
        }
    }

    // Step models and tools against the LWIR's own permissions (when those were readable).
    let granted = |list: &Option<Vec<(u32, String)>>| -> Option<Vec<String>> {
        list.as_ref().map(|l| l.iter().map(|(_, s)| s.clone()).collect())
    };
    let (models, tools) = (granted(&header.permissions.models), granted(&header.permissions.tools));
    for &step in &lwir.steps {
        let decl = step.decl(db);
        if decl.malformed {
            continue;
        }
        let at = step.anchor(db);
        let mut uses_model = |model: &str, anchor: Anchor, what: &str| {
            if let Some(models) = &models
                && !models.iter().any(|m| m == model)
            {
                findings.push(
                    Finding::new(
                        Code::BindingStepModelNotAllowed,
                        anchor,
                        format!("{what} of step `{}` is `{model}`, which `permissions.models` does not grant", decl.id),
                    )
                    .node(&decl.id)
                    .help(suggest::did_you_mean(model, models.iter().map(String::as_str))),
                );
            }
        };
        match &decl.call {
            StepCall::AiGenerate { model: Some(model) } => uses_model(model, at.at("with").at("model"), "the model"),
            StepCall::CodeRun { .. } => {
                // A fixer runs a model too; a fixer with faults is `lwir.invalid_fixer` only.
                let fixer_ok =
                    !step_findings(db, step).findings.iter().any(|f| f.diagnostic.code == Code::LwirInvalidFixer);
                if let Some(model) = decl.on_failure.as_ref().and_then(fixer_model).filter(|_| fixer_ok) {
                    uses_model(model, at.at("onFailure").at("fixer").at("model"), "the fixer's model");
                }
            }
            StepCall::ToolCall { tool: Some(tool) } => {
                if let Some(tools) = &tools
                    && !tools.contains(tool)
                {
                    findings.push(
                        Finding::new(
                            Code::BindingStepToolNotAllowed,
                            at.at("with").at("tool"),
                            format!("step `{}` calls `{tool}`, which `permissions.tools` does not grant", decl.id),
                        )
                        .node(&decl.id)
                        .help(suggest::did_you_mean(tool, tools.iter().map(String::as_str))),
                    );
                }
            }
            _ => {}
        }
    }
    findings
}
