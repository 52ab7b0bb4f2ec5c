//! The node-local passes: each is a tracked query per node, so an edit inside one node
//! re-runs that node's passes only, and an edit to the context or the binding rows
//! re-runs only the passes that read them.

use little_frontend::anchor::{Anchor, Finding};
use little_frontend::draft::config_value;
use little_ir::NodeKind;

use crate::queries::{Node, binding_rows, catalog_of, context, family_of};

use super::{agents, config, family, packages, schedule, suppressions, tenant};

/// What the node-local checks found, the config fields found faulty, and which of the
/// later node layers apply (so the file-wide query that gathers them reads this one
/// query per node, not the family and bindings again).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct NodeReport {
    pub findings: Vec<Finding>,
    pub faulty_config: Vec<String>,
    pub layers: Layers,
}

/// The node layers beyond the catalog layer that a node's family and bindings call for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Layers {
    /// Known family: the tenant layer runs when there is a context.
    pub tenant: bool,
    pub schedule: bool,
    pub packages: bool,
    pub agent: bool,
}

/// The catalog layer of one node: its suppress list, its family (unknown, deprecated)
/// and its config against the family's schema. The faulty config fields it finds are
/// what the later node passes skip.
#[salsa::tracked(returns(ref))]
pub fn check_node<'db>(db: &'db dyn salsa::Database, node: Node<'db>) -> NodeReport {
    let workspace = node.workspace(db);
    let id = node.id(db).as_str();
    let at = Anchor::node(id, node.nth(db));
    let mut report =
        NodeReport { findings: suppressions::check(id, &at, node.meta(db).suppress()), ..Default::default() };
    let Some(name) = node.family(db) else { return report };
    let Some(resolved) = family_of(db, node) else {
        let catalog = &catalog_of(db, workspace.catalog(db)).value;
        report.findings.push(family::unknown(id, &at, name.text(db), catalog));
        return report;
    };
    report.layers = Layers {
        tenant: true,
        schedule: resolved.semantic == "schedule",
        packages: !node.bindings(db).packages().is_empty(),
        agent: resolved.kind == NodeKind::Agent,
    };
    report.findings.extend(family::deprecated(id, &at, resolved));
    if let Some(text) = node.config(db)
        && let Some(schema) = config::config_schema(db, workspace.catalog(db), name)
    {
        let (findings, faulty) = config::check(id, &at, &resolved.id, schema, &config_value(text));
        report.findings.extend(findings);
        report.faulty_config = faulty;
    }
    report
}

/// The tenant layer of one node (runs only with a context).
#[salsa::tracked(returns(ref))]
pub fn tenant_findings<'db>(db: &'db dyn salsa::Database, node: Node<'db>) -> Vec<Finding> {
    let workspace = node.workspace(db);
    let (Some(context), Some(family)) = (context(db, workspace), family_of(db, node)) else {
        return Vec::new();
    };
    let faulty = &check_node(db, node).faulty_config;
    let config = node.config(db).as_ref().map(config_value);
    tenant::check(node.id(db), &anchor(db, node), family, config.as_ref(), faulty, context)
}

/// The schedule layer of one schedule trigger.
#[salsa::tracked(returns(ref))]
pub fn schedule_findings<'db>(db: &'db dyn salsa::Database, node: Node<'db>) -> Vec<Finding> {
    let workspace = node.workspace(db);
    let Some(config) = node.config(db).as_ref().map(config_value) else { return Vec::new() };
    let faulty = &check_node(db, node).faulty_config;
    let policy = context(db, workspace).and_then(|c| c.min_interval_minutes);
    schedule::check(node.id(db), &anchor(db, node), &config, faulty, policy)
}

/// The package layer of one node that binds packages.
#[salsa::tracked(returns(ref))]
pub fn package_findings<'db>(db: &'db dyn salsa::Database, node: Node<'db>) -> Vec<Finding> {
    let workspace = node.workspace(db);
    packages::check(node.id(db), &anchor(db, node), node.bindings(db).packages(), context(db, workspace))
}

/// The agent-binding layer of one agent node.
#[salsa::tracked(returns(ref))]
pub fn agent_findings<'db>(db: &'db dyn salsa::Database, node: Node<'db>) -> Vec<Finding> {
    let workspace = node.workspace(db);
    agents::check(node.id(db), &anchor(db, node), node.bindings(db).agent(), binding_rows(db, workspace))
}

fn anchor(db: &dyn salsa::Database, node: Node<'_>) -> Anchor {
    Anchor::node(node.id(db), node.nth(db))
}

/// Every node pass that applies to `node`, each a memoized query of its own: a node
/// pays only for the layers its kind and the workspace call for. `has_context` is read
/// once per file by the caller.
pub fn node_findings<'db>(db: &'db dyn salsa::Database, node: Node<'db>, has_context: bool) -> Vec<&'db [Finding]> {
    let report = check_node(db, node);
    let mut layers = vec![report.findings.as_slice()];
    let applies = report.layers;
    if applies.tenant && has_context {
        layers.push(tenant_findings(db, node));
    }
    if applies.schedule {
        layers.push(schedule_findings(db, node));
    }
    if applies.packages {
        layers.push(package_findings(db, node));
    }
    if applies.agent {
        layers.push(agent_findings(db, node));
    }
    layers
}
