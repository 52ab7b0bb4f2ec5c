//! Tenant checks of one node: `catalog.capability_unavailable` (the family's `requires`)
//! and `catalog.missing_integration` (config fields naming tenant integrations).

use little_diagnostics::{Code, suggest};
use little_frontend::anchor::{Anchor, Finding};
use little_frontend::context::Context;
use little_ir::catalog::Family;

pub fn check(
    node_id: &str,
    at: &Anchor,
    family: &Family,
    config: Option<&serde_json::Value>,
    faulty_config: &[String],
    context: &Context,
) -> Vec<Finding> {
    let mut findings = Vec::new();
    for capability in &family.requires {
        if !context.capabilities.contains(capability) {
            findings.push(
                Finding::new(
                    Code::CatalogCapabilityUnavailable,
                    at.at("family"),
                    format!(
                        "node `{node_id}` uses family `{}`, which requires capability `{capability}` that tenant `{}` does not have",
                        family.id, context.tenant_id
                    ),
                )
                .node(node_id),
            );
        }
    }
    let Some(config) = config else { return findings };
    for integration in &family.integrations {
        // A field the schema already rejected is reported once, by the schema.
        if faulty_config.iter().any(|p| p == &integration.pointer || integration.pointer.starts_with(&format!("{p}/")))
        {
            continue;
        }
        let Some(name) = config.pointer(&integration.pointer).and_then(|v| v.as_str()) else { continue };
        let known = context.integrations.iter().any(|i| i.id == name && i.kind == integration.kind);
        if known {
            continue;
        }
        let mut anchor = at.at("config");
        for key in integration.pointer.split('/').skip(1) {
            anchor = anchor.at(&*key.replace("~1", "/").replace("~0", "~"));
        }
        let same_kind = context.integrations.iter().filter(|i| i.kind == integration.kind).map(|i| i.id.as_str());
        let help = suggest::did_you_mean(name, same_kind);
        findings.push(
            Finding::new(
                Code::CatalogMissingIntegration,
                anchor,
                format!(
                    "node `{node_id}` names integration `{name}`, but tenant `{}` has no {} integration by that id",
                    context.tenant_id, integration.kind
                ),
            )
            .node(node_id)
            .help(help),
        );
    }
    findings
}
