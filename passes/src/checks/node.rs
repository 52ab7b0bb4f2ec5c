//! The node-local passes: each is a tracked query per node, so an edit inside one node
//! re-runs that node's passes only, and an edit to the context or the binding rows
//! re-runs only the passes that read them.

use little_frontend::anchor::{Anchor, Finding};
use little_ir::NodeKind;

use crate::db::Workspace;
use crate::queries::{Node, binding_rows, catalog_of, context, family_of};

use super::{agents, config, family, packages, schedule, suppressions, tenant};

/// What the node-local checks found, and the config fields found faulty.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct NodeReport {
    pub findings: Vec<Finding>,
    pub faulty_config: Vec<String>,
}

/// The catalog layer of one node: its suppress list, its family (unknown, deprecated)
/// and its config against the family's schema. The faulty config fields it finds are
/// what the later node passes skip.
#[salsa::tracked(returns(ref))]
pub fn check_node<'db>(db: &'db dyn salsa::Database, workspace: Workspace, node: Node<'db>) -> NodeReport {
    let id = node.id(db).as_str();
    let at = Anchor::node(id, node.nth(db));
    let mut report =
        NodeReport { findings: suppressions::check(id, &at, &node.meta(db).suppress), ..Default::default() };
    let Some(name) = node.family(db) else { return report };
    let Some(resolved) = family_of(db, workspace, node) else {
        let catalog = &catalog_of(db, workspace.catalog(db)).value;
        report.findings.push(family::unknown(id, &at, name.text(db), catalog));
        return report;
    };
    report.findings.extend(family::deprecated(id, &at, resolved));
    if let Some(value) = node.config(db).as_deref()
        && let Some(schema) = config::config_schema(db, workspace.catalog(db), name)
    {
        let (findings, faulty) = config::check(id, &at, &resolved.id, schema, value);
        report.findings.extend(findings);
        report.faulty_config = faulty;
    }
    report
}

/// The tenant layer of one node (runs only with a context).
#[salsa::tracked(returns(ref))]
pub fn tenant_findings<'db>(db: &'db dyn salsa::Database, workspace: Workspace, node: Node<'db>) -> Vec<Finding> {
    let (Some(context), Some(family)) = (context(db, workspace), family_of(db, workspace, node)) else {
        return Vec::new();
    };
    let faulty = &check_node(db, workspace, node).faulty_config;
    tenant::check(node.id(db), &anchor(db, node), family, node.config(db).as_deref(), faulty, context)
}

/// The schedule layer of one schedule trigger.
#[salsa::tracked(returns(ref))]
pub fn schedule_findings<'db>(db: &'db dyn salsa::Database, workspace: Workspace, node: Node<'db>) -> Vec<Finding> {
    let Some(config) = node.config(db).as_deref() else { return Vec::new() };
    let faulty = &check_node(db, workspace, node).faulty_config;
    let policy = context(db, workspace).and_then(|c| c.min_interval_minutes);
    schedule::check(node.id(db), &anchor(db, node), config, faulty, policy)
}

/// The package layer of one node that binds packages.
#[salsa::tracked(returns(ref))]
pub fn package_findings<'db>(db: &'db dyn salsa::Database, workspace: Workspace, node: Node<'db>) -> Vec<Finding> {
    packages::check(node.id(db), &anchor(db, node), &node.bindings(db).packages, context(db, workspace))
}

/// The agent-binding layer of one agent node.
#[salsa::tracked(returns(ref))]
pub fn agent_findings<'db>(db: &'db dyn salsa::Database, workspace: Workspace, node: Node<'db>) -> Vec<Finding> {
    agents::check(node.id(db), &anchor(db, node), &node.bindings(db).agent, binding_rows(db, workspace))
}

fn anchor(db: &dyn salsa::Database, node: Node<'_>) -> Anchor {
    Anchor::node(node.id(db), node.nth(db))
}

/// Every node pass that applies to `node`, each a memoized query of its own: a node
/// pays only for the layers its kind and the workspace call for.
pub fn node_findings<'db>(db: &'db dyn salsa::Database, workspace: Workspace, node: Node<'db>) -> Vec<&'db [Finding]> {
    let mut layers = vec![check_node(db, workspace, node).findings.as_slice()];
    let Some(family) = family_of(db, workspace, node) else { return layers };
    if context(db, workspace).is_some() {
        layers.push(tenant_findings(db, workspace, node));
    }
    if family.semantic == "schedule" {
        layers.push(schedule_findings(db, workspace, node));
    }
    if !node.bindings(db).packages.is_empty() {
        layers.push(package_findings(db, workspace, node));
    }
    if family.kind == NodeKind::Agent {
        layers.push(agent_findings(db, workspace, node));
    }
    layers
}
