//! The catalog of node families, as the checks read it.

use crate::NodeKind;

/// A port a family or contract declares.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Port {
    pub name: String,
    pub types: Vec<String>,
    pub required: bool,
    pub multiple: bool,
}

impl Port {
    /// The port a family without `ports` gets in each direction.
    pub fn any(name: &str) -> Port {
        Port { name: name.to_string(), types: vec![crate::ANY_TYPE.to_string()], required: false, multiple: false }
    }
}

/// A config field (JSON pointer) that names a tenant integration of a kind.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct IntegrationRef {
    pub pointer: String,
    pub kind: String,
}

/// One node family of the catalog.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Family {
    pub id: String,
    pub kind: NodeKind,
    pub semantic: String,
    pub visual_only: bool,
    pub requires: Vec<String>,
    pub inputs: Vec<Port>,
    pub outputs: Vec<Port>,
    /// JSON Schema 2020-12 for the node's `config`; `None` accepts any object.
    pub config_schema: Option<serde_json::Value>,
    pub integrations: Vec<IntegrationRef>,
    pub worker_slot: bool,
    pub deprecated: bool,
}

/// The whole catalog: its version and its families in authored order.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Catalog {
    pub version: String,
    pub families: Vec<Family>,
}

impl Catalog {
    pub fn family(&self, id: &str) -> Option<&Family> {
        self.families.iter().find(|f| f.id == id)
    }
}
