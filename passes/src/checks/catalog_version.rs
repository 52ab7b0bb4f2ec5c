//! `catalog.stale_version`: the draft names the catalog version it was authored against.

use little_diagnostics::Code;
use little_frontend::anchor::{Anchor, Finding};
use little_ir::draft::Header;

pub fn check(header: &Header, catalog_version: &str) -> Vec<Finding> {
    match &header.catalog_version {
        Some(version) if version != catalog_version => vec![Finding::new(
            Code::CatalogStaleVersion,
            Anchor::root().at("catalogVersion"),
            format!("the draft was authored against catalog `{version}`, but the catalog is `{catalog_version}`"),
        )],
        _ => Vec::new(),
    }
}
