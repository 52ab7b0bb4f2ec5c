//! `request.tenant_mismatch`: a draft is compiled for the tenant of the context.
//! (`request.missing_identity` is found while lowering the header.)

use little_diagnostics::Code;
use little_frontend::anchor::{Anchor, Finding};
use little_frontend::context::Context;
use little_ir::draft::Header;

pub fn check(header: &Header, context: Option<&Context>) -> Vec<Finding> {
    let (Some(tenant), Some(context)) = (&header.tenant_id, context) else { return Vec::new() };
    if *tenant == context.tenant_id {
        return Vec::new();
    }
    vec![Finding::new(
        Code::RequestTenantMismatch,
        Anchor::root().at("tenantId"),
        format!("the draft belongs to tenant `{tenant}`, but it is compiled for tenant `{}`", context.tenant_id),
    )]
}
