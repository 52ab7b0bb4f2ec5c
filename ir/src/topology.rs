//! The compiled executable topology (the target of compilation).

use crate::draft::{AgentRef, Contracts, Mapping, PackageBinding, RetrySettings};
use crate::{EdgeKind, NodeKind};

/// A dense index into [`Topology::nodes`]: transitions refer to nodes by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeIndex(pub u32);

/// Execution flags of a node.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ExecutionFlags {
    /// Catalog-derived: the node occupies a worker slot. Excluded from the topology hash.
    pub worker_slot: bool,
    /// Authored boolean flags (`flags`), sorted by name.
    pub authored: Vec<(String, bool)>,
}

/// One executable node.
#[derive(Clone, Debug, PartialEq)]
pub struct TopoNode {
    pub id: String,
    pub family: String,
    pub kind: NodeKind,
    pub semantic: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub flags: ExecutionFlags,
    pub config: std::sync::Arc<serde_json::Value>,
    pub contracts: Option<Contracts>,
    pub packages: Vec<PackageBinding>,
    pub agent: Option<AgentRef>,
}

/// One end of a transition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransitionEnd {
    pub node: NodeIndex,
    pub port: String,
}

/// One executable transition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transition {
    pub id: String,
    pub from: TransitionEnd,
    pub to: TransitionEnd,
    pub kind: EdgeKind,
    pub retry: Option<RetrySettings>,
    pub branch_label: Option<String>,
    pub mapping: Option<Mapping>,
}

/// The compiled topology, nodes and transitions sorted by id.
#[derive(Clone, Debug, PartialEq)]
pub struct Topology {
    pub workflow_id: String,
    pub draft_id: String,
    pub revision: u64,
    pub catalog_version: String,
    pub authored_graph_hash: String,
    pub nodes: Vec<TopoNode>,
    pub transitions: Vec<Transition>,
    /// Positions of every authored node that has one, visual ones included, by node id.
    pub layout: Vec<(String, crate::draft::Position)>,
}

impl Topology {
    pub fn node(&self, index: NodeIndex) -> &TopoNode {
        &self.nodes[index.0 as usize]
    }
}
