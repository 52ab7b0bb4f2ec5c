//! `catalog.unknown_family` and `catalog.deprecated_family`.

use little_diagnostics::{Code, suggest};
use little_frontend::anchor::{Anchor, Finding};
use little_ir::catalog::{Catalog, Family};

/// The finding for a node whose family the catalog lacks.
pub fn unknown(node_id: &str, at: &Anchor, name: &str, catalog: &Catalog) -> Finding {
    let help = suggest::did_you_mean(name, catalog.families.iter().map(|f| f.id.as_str()));
    Finding::new(
        Code::CatalogUnknownFamily,
        at.at("family"),
        format!("node `{node_id}` uses family `{name}`, which catalog `{}` does not have", catalog.version),
    )
    .node(node_id)
    .help(help)
}

pub fn deprecated(node_id: &str, at: &Anchor, family: &Family) -> Option<Finding> {
    family.deprecated.then(|| {
        Finding::new(
            Code::CatalogDeprecatedFamily,
            at.at("family"),
            format!("node `{node_id}` uses family `{}`, which the catalog marks deprecated", family.id),
        )
        .node(node_id)
    })
}
