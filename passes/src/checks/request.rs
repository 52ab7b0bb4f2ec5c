//! `request.tenant_mismatch`: a draft is compiled for the tenant of the context, and
//! `request.context_unavailable` when there is none to compile it for.
//! (`request.missing_identity` is found while lowering the header.)

use little_diagnostics::Code;
use little_frontend::anchor::{Anchor, Finding};
use little_frontend::context::Context;
use little_ir::draft::Header;

pub fn check(header: &Header, context: Option<&Context>) -> Vec<Finding> {
    let Some(context) = context else {
        return vec![Finding::new(
            Code::RequestContextUnavailable,
            Anchor::root().at("tenantId"),
            "no context given: the tenant checks (tenant, capabilities, integrations, package registry, schedule policy) were not run; pass `--context`",
        )];
    };
    let Some(tenant) = &header.tenant_id else { return Vec::new() };
    if *tenant == context.tenant_id {
        return Vec::new();
    }
    vec![Finding::new(
        Code::RequestTenantMismatch,
        Anchor::root().at("tenantId"),
        format!("the draft belongs to tenant `{tenant}`, but it is compiled for tenant `{}`", context.tenant_id),
    )]
}
