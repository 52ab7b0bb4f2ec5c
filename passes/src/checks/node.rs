//! All node-local checks of one node, as one tracked query: an edit inside one node
//! re-runs this query for that node only.

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

#[salsa::tracked(returns(ref))]
pub fn check_node<'db>(db: &'db dyn salsa::Database, workspace: Workspace, node: Node<'db>) -> NodeReport {
    let id = node.id(db).as_str();
    let at = Anchor::node(id, node.nth(db));
    let mut report =
        NodeReport { findings: suppressions::check(id, &at, &node.meta(db).suppress), ..Default::default() };
    let Some(name) = node.family(db) else { return report };
    let name_text = name.text(db);
    let Some(resolved) = family_of(db, workspace, node) else {
        let catalog = &catalog_of(db, workspace.catalog(db)).value;
        report.findings.push(family::unknown(id, &at, name_text, catalog));
        return report;
    };
    report.findings.extend(family::deprecated(id, &at, resolved));
    let config_value = node.config(db).as_deref();
    if let Some(value) = config_value
        && let Some(schema) = config::config_schema(db, workspace.catalog(db), name)
    {
        let (findings, faulty) = config::check(id, &at, &resolved.id, schema, value);
        report.findings.extend(findings);
        report.faulty_config = faulty;
    }
    if let Some(context) = context(db, workspace) {
        report.findings.extend(tenant::check(id, &at, resolved, config_value, &report.faulty_config, context));
    }
    if resolved.semantic == "schedule"
        && let Some(value) = config_value
    {
        let policy = context(db, workspace).and_then(|c| c.min_interval_minutes);
        report.findings.extend(schedule::check(id, &at, value, &report.faulty_config, policy));
    }
    let bindings = node.bindings(db);
    report.findings.extend(packages::check(id, &at, &bindings.packages, context(db, workspace)));
    if resolved.kind == NodeKind::Agent {
        report.findings.extend(agents::check(id, &at, &bindings.agent, binding_rows(db, workspace)));
    }
    report
}
