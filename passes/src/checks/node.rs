//! The node-local passes: each is a tracked query per node, so an edit inside one node
//! re-runs that node's passes only, and an edit to the context or the binding rows
//! re-runs only the passes that read them.

use little_frontend::anchor::{Anchor, Finding};
use little_frontend::draft::config_value;
use little_ir::NodeKind;

use little_frontend::context::{BindingRow, Context};

use crate::queries::{Node, binding_rows, context};
use crate::rules::{NodeFields, NodeInWorkspace, TrackedNode};

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
    catalog_layer(&TrackedNode::new(db, node))
}

/// [`check_node`]'s rule, for either driver.
pub fn catalog_layer(node: &impl NodeInWorkspace) -> NodeReport {
    let id = node.id().as_str();
    let at = Anchor::node(id, node.nth());
    let mut report =
        NodeReport { findings: suppressions::check(id, &at, node.meta().suppress()), ..Default::default() };
    let Some(name) = node.family_name() else { return report };
    let Some(resolved) = node.family() else {
        report.findings.push(family::unknown(id, &at, name, node.catalog()));
        return report;
    };
    report.layers = Layers {
        tenant: true,
        schedule: resolved.semantic == "schedule",
        packages: !node.bindings().packages().is_empty(),
        agent: resolved.kind == NodeKind::Agent,
    };
    report.findings.extend(family::deprecated(id, &at, resolved));
    if let Some(text) = node.config()
        && let Some(schema) = node.config_schema()
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
    let Some(context) = context(db, node.workspace(db)) else { return Vec::new() };
    tenant_layer(&TrackedNode::new(db, node), context, || &check_node(db, node).faulty_config)
}

/// [`tenant_findings`]' rule: `faulty` gives the config fields the catalog layer found faulty.
pub fn tenant_layer<'a>(
    node: &impl NodeInWorkspace,
    context: &Context,
    faulty: impl FnOnce() -> &'a [String],
) -> Vec<Finding> {
    let Some(family) = node.family() else { return Vec::new() };
    let faulty = faulty();
    let config = node.config().as_ref().map(config_value);
    tenant::check(node.id(), &anchor(node), family, config.as_ref(), faulty, context)
}

/// The schedule layer of one schedule trigger.
#[salsa::tracked(returns(ref))]
pub fn schedule_findings<'db>(db: &'db dyn salsa::Database, node: Node<'db>) -> Vec<Finding> {
    let workspace = node.workspace(db);
    schedule_layer(
        &TrackedNode::new(db, node),
        || &check_node(db, node).faulty_config,
        || context(db, workspace).and_then(|c| c.min_interval_minutes),
    )
}

/// [`schedule_findings`]' rule: `policy` gives the context's shortest interval, if any.
pub fn schedule_layer<'a>(
    node: &impl NodeFields,
    faulty: impl FnOnce() -> &'a [String],
    policy: impl FnOnce() -> Option<u64>,
) -> Vec<Finding> {
    let Some(config) = node.config().as_ref().map(config_value) else { return Vec::new() };
    let faulty = faulty();
    schedule::check(node.id(), &anchor(node), &config, faulty, policy())
}

/// The package layer of one node that binds packages.
#[salsa::tracked(returns(ref))]
pub fn package_findings<'db>(db: &'db dyn salsa::Database, node: Node<'db>) -> Vec<Finding> {
    package_layer(&TrackedNode::new(db, node), context(db, node.workspace(db)))
}

/// [`package_findings`]' rule.
pub fn package_layer(node: &impl NodeFields, context: Option<&Context>) -> Vec<Finding> {
    packages::check(node.id(), &anchor(node), node.bindings().packages(), context)
}

/// The agent-binding layer of one agent node.
#[salsa::tracked(returns(ref))]
pub fn agent_findings<'db>(db: &'db dyn salsa::Database, node: Node<'db>) -> Vec<Finding> {
    agent_layer(&TrackedNode::new(db, node), binding_rows(db, node.workspace(db)))
}

/// [`agent_findings`]' rule.
pub fn agent_layer(node: &impl NodeFields, rows: Option<&[BindingRow]>) -> Vec<Finding> {
    agents::check(node.id(), &anchor(node), node.bindings().agent(), rows)
}

fn anchor(node: &impl NodeFields) -> Anchor {
    Anchor::node(node.id(), node.nth())
}

/// Every later node layer that applies to a node, in [`node_findings`]' order, without a
/// database: the batch driver's. `report` is the node's catalog layer.
pub fn later_layers(
    node: &impl NodeInWorkspace,
    report: &NodeReport,
    context: Option<&Context>,
    rows: Option<&[BindingRow]>,
) -> Vec<Finding> {
    let applies = report.layers;
    let mut findings = Vec::new();
    if applies.tenant
        && let Some(context) = context
    {
        findings.extend(tenant_layer(node, context, || &report.faulty_config));
    }
    if applies.schedule {
        findings.extend(schedule_layer(
            node,
            || &report.faulty_config,
            || context.and_then(|c| c.min_interval_minutes),
        ));
    }
    if applies.packages {
        findings.extend(package_layer(node, context));
    }
    if applies.agent {
        findings.extend(agent_layer(node, rows));
    }
    findings
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
