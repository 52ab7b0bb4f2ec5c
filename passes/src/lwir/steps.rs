//! The rules of one step: its kind (`lwir.unknown_step_kind`), its code files
//! (`lwir.code_hash_mismatch`, `lwir.missing_entrypoint`), its fixer (`lwir.invalid_fixer`)
//! and its output schema (`schema.invalid`). Per step, so an edit re-runs only its step.

use little_diagnostics::{Code, suggest};
use little_frontend::anchor::{Anchor, Finding};
use little_frontend::lwir::{STEP_KINDS, StepCall};

use super::Step;
use super::schemas::schema_finding;

/// A step's findings, and whether its output schema can be read by templates.
#[derive(Debug, PartialEq)]
pub struct StepCheck {
    pub findings: Vec<Finding>,
    pub output_schema_valid: bool,
}

pub const FIXER_ATTEMPTS: std::ops::RangeInclusive<i64> = 1..=10;

#[salsa::tracked(returns(ref))]
pub fn step_findings<'db>(db: &'db dyn salsa::Database, step: Step<'db>) -> StepCheck {
    let decl = step.decl(db);
    let at = step.anchor(db);
    let mut findings = Vec::new();
    match &decl.call {
        StepCall::Unknown(kind) => findings.push(
            Finding::new(
                Code::LwirUnknownStepKind,
                at.at("uses"),
                format!(
                    "step `{}` uses `{kind}`, which is not an LWIR step kind: expected {}",
                    decl.id,
                    STEP_KINDS.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                ),
            )
            .node(&decl.id)
            .help(suggest::did_you_mean(kind, STEP_KINDS.iter().copied())),
        ),
        StepCall::CodeRun { entrypoint, files: Some(files) } => {
            for file in files {
                let (Some(content), Some(sha256)) = (&file.content, &file.sha256) else { continue };
                let actual = little_hashing::sha256_identity(content.as_bytes());
                if *sha256 != actual {
                    findings.push(
                        Finding::new(
                            Code::LwirCodeHashMismatch,
                            at.at("with").at("files").at(file.name.as_str()).at("sha256"),
                            format!(
                                "file `{}` of step `{}` has sha256 `{sha256}`, but its content hashes to `{actual}`",
                                file.name, decl.id
                            ),
                        )
                        .node(&decl.id),
                    );
                }
            }
            if let Some(entrypoint) = entrypoint
                && !files.iter().any(|f| f.name == *entrypoint)
            {
                let names = files.iter().map(|f| format!("`{}`", f.name)).collect::<Vec<_>>();
                let has = if names.is_empty() { "no files".to_string() } else { format!("files {}", names.join(", ")) };
                findings.push(
                    Finding::new(
                        Code::LwirMissingEntrypoint,
                        at.at("with").at("entrypoint"),
                        format!(
                            "the entrypoint `{entrypoint}` of step `{}` is not one of its files (it has {has})",
                            decl.id
                        ),
                    )
                    .node(&decl.id)
                    .help(suggest::did_you_mean(entrypoint, files.iter().map(|f| f.name.as_str()))),
                );
            }
        }
        _ => {}
    }
    if let Some(on_failure) = &decl.on_failure {
        findings.extend(fixer_findings(&decl.id, &decl.call, on_failure, &at.at("onFailure")));
    }
    let mut output_schema_valid = decl.output_schema.is_some();
    if let Some(schema) = &decl.output_schema
        && let Some(finding) =
            schema_finding(schema, &at.at("output").at("schema"), &format!("the output schema of step `{}`", decl.id))
    {
        output_schema_valid = false;
        findings.push(finding.node(&decl.id));
    }
    StepCheck { findings, output_schema_valid }
}

/// `onFailure: { fixer: { model, maxAttempts, system } }`, only on `code.run` steps.
fn fixer_findings(id: &str, call: &StepCall, on_failure: &serde_json::Value, at: &Anchor) -> Vec<Finding> {
    let fault = |anchor: Anchor, message: String| Finding::new(Code::LwirInvalidFixer, anchor, message).node(id);
    match call {
        // The kind is unknown or unreadable (already reported): nothing to judge it by.
        StepCall::Unknown(_) | StepCall::Unreadable => return Vec::new(),
        StepCall::CodeRun { .. } => {}
        other => {
            return vec![fault(
                at.clone(),
                format!(
                    "step `{id}` is `{}`: only `code.run` steps can have an `onFailure` fixer",
                    other.kind().unwrap_or_default()
                ),
            )];
        }
    }
    let Some(members) = on_failure.as_object() else {
        return vec![fault(at.clone(), "`onFailure` must be an object `{ \"fixer\": { … } }`".into())];
    };
    let mut findings: Vec<Finding> = members
        .keys()
        .filter(|k| *k != "fixer")
        .map(|k| fault(at.at(k.as_str()), format!("unknown field `{k}` in `onFailure`: it takes only `fixer`")))
        .collect();
    let Some(fixer) = members.get("fixer") else {
        findings.push(fault(at.clone(), "`onFailure` lacks the required field `fixer`".into()));
        return findings;
    };
    let at = at.at("fixer");
    let Some(fields) = fixer.as_object() else {
        findings.push(fault(at, "`onFailure.fixer` must be an object".into()));
        return findings;
    };
    const KEYS: &[&str] = &["model", "maxAttempts", "system"];
    for key in fields.keys().filter(|k| !KEYS.contains(&k.as_str())) {
        findings.push(
            fault(at.at(key.as_str()), format!("unknown field `{key}` in the fixer"))
                .help(suggest::did_you_mean(key, KEYS.iter().copied())),
        );
    }
    for key in ["model", "system"] {
        match fields.get(key) {
            None => findings.push(fault(at.clone(), format!("the fixer lacks the required field `{key}`"))),
            Some(serde_json::Value::String(s)) if key == "model" && s.is_empty() => {
                findings.push(fault(at.at(key), "the fixer's `model` must name a model slot".into()))
            }
            Some(serde_json::Value::String(_)) => {}
            Some(_) => findings.push(fault(at.at(key), format!("the fixer's `{key}` must be a string"))),
        }
    }
    match fields.get("maxAttempts") {
        None => findings.push(fault(at.clone(), "the fixer lacks the required field `maxAttempts`".into())),
        Some(n) => {
            if !n.as_i64().is_some_and(|n| FIXER_ATTEMPTS.contains(&n)) {
                findings.push(fault(
                    at.at("maxAttempts"),
                    format!("the fixer's `maxAttempts` must be an integer from 1 to 10, found `{n}`"),
                ));
            }
        }
    }
    findings
}

/// The model of a well-formed fixer, for the binding checks.
pub fn fixer_model(on_failure: &serde_json::Value) -> Option<&str> {
    on_failure.get("fixer")?.get("model")?.as_str()
}
