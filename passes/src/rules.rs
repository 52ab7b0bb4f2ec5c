//! What the rule functions read of a node, whichever driver hands it over: the batch
//! driver's plain lowered node ([`NodeDecl`]) or the database's tracked [`Node`], each
//! field of which salsa records as read. One rule, one function, two drivers.

use std::sync::Arc;

use little_frontend::draft::{ContractsDecl, NodeBindings, NodeDecl, NodeMeta};
use little_ir::Name;
use little_ir::catalog::{Catalog, Family};
use little_ir::draft::{Config, Position};

use crate::checks::config::CompiledSchema;
use crate::queries::{Node, catalog_of, family_of};

/// A node's authored fields, as lowered. A rule reads only those it needs, so that the
/// database records only those as read.
pub trait NodeFields {
    fn id(&self) -> &Name;
    fn nth(&self) -> u32;
    fn config(&self) -> &Option<Config>;
    fn contracts(&self) -> &ContractsDecl;
    fn bindings(&self) -> &NodeBindings;
    fn meta(&self) -> &NodeMeta;
    fn position(&self) -> &Option<Position>;
}

/// A node in the workspace it is checked against: its family looked up in the catalog.
pub trait NodeInWorkspace: NodeFields {
    /// The family the node names, as written; `None` when it names none.
    fn family_name(&self) -> Option<&str>;
    /// That family, when the catalog has it.
    fn family(&self) -> Option<&Arc<Family>>;
    /// The family's compiled config schema, when it has one.
    fn config_schema(&self) -> Option<&CompiledSchema>;
    /// The whole catalog (read only to suggest a family for one it lacks).
    fn catalog(&self) -> &Catalog;
}

impl NodeFields for NodeDecl {
    fn id(&self) -> &Name {
        &self.id
    }
    fn nth(&self) -> u32 {
        self.nth
    }
    fn config(&self) -> &Option<Config> {
        &self.config
    }
    fn contracts(&self) -> &ContractsDecl {
        &self.contracts
    }
    fn bindings(&self) -> &NodeBindings {
        &self.bindings
    }
    fn meta(&self) -> &NodeMeta {
        &self.meta
    }
    fn position(&self) -> &Option<Position> {
        &self.position
    }
}

/// A tracked node read through the database: each field read is a recorded dependency.
#[derive(Clone, Copy)]
pub struct TrackedNode<'db> {
    pub db: &'db dyn salsa::Database,
    pub node: Node<'db>,
}

impl<'db> TrackedNode<'db> {
    pub fn new(db: &'db dyn salsa::Database, node: Node<'db>) -> TrackedNode<'db> {
        TrackedNode { db, node }
    }

    /// The nodes of a draft, read through `db`.
    pub fn all(db: &'db dyn salsa::Database, nodes: &[Node<'db>]) -> Vec<TrackedNode<'db>> {
        nodes.iter().map(|&node| TrackedNode { db, node }).collect()
    }
}

impl NodeFields for TrackedNode<'_> {
    fn id(&self) -> &Name {
        self.node.id(self.db)
    }
    fn nth(&self) -> u32 {
        self.node.nth(self.db)
    }
    fn config(&self) -> &Option<Config> {
        self.node.config(self.db)
    }
    fn contracts(&self) -> &ContractsDecl {
        self.node.contracts(self.db)
    }
    fn bindings(&self) -> &NodeBindings {
        self.node.bindings(self.db)
    }
    fn meta(&self) -> &NodeMeta {
        self.node.meta(self.db)
    }
    fn position(&self) -> &Option<Position> {
        self.node.position(self.db)
    }
}

impl NodeInWorkspace for TrackedNode<'_> {
    fn family_name(&self) -> Option<&str> {
        self.node.family(self.db).map(|name| name.text(self.db).as_str())
    }
    fn family(&self) -> Option<&Arc<Family>> {
        family_of(self.db, self.node)
    }
    fn config_schema(&self) -> Option<&CompiledSchema> {
        let name = self.node.family(self.db)?;
        crate::checks::config::config_schema(self.db, self.node.workspace(self.db).catalog(self.db), name).as_ref()
    }
    fn catalog(&self) -> &Catalog {
        &catalog_of(self.db, self.node.workspace(self.db).catalog(self.db)).value
    }
}
