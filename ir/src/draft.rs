//! The authored draft as typed declarations, without source positions.
//!
//! The frontend lowers JSON into these; anything malformed has already become a
//! diagnostic and is absent (`None`) here, so the checks skip what they cannot read.

use crate::{EdgeKind, Name};

/// The identity and version fields of a draft.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Header {
    pub tenant_id: Option<String>,
    pub workflow_id: Option<String>,
    pub draft_id: Option<String>,
    pub revision: Option<u64>,
    pub catalog_version: Option<String>,
}

/// One declared port of a contract envelope.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ContractPort {
    pub port: String,
    pub types: Vec<String>,
    pub required: bool,
}

/// One declared artifact of a contract envelope.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Artifact {
    pub id: String,
    pub port: String,
    pub types: Vec<String>,
}

/// A valid `workflow-node-contracts/v1` envelope.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Contracts {
    pub inputs: Vec<ContractPort>,
    pub outputs: Vec<ContractPort>,
    pub artifacts: Vec<Artifact>,
}

/// A package the node binds.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PackageBinding {
    pub name: Option<String>,
    pub version: Option<String>,
    pub digest: Option<String>,
}

/// The agent binding an agent node names.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AgentRef {
    pub agent_id: String,
    pub revision: u64,
}

/// A node's config as its canonical JSON text (RFC 8785). Kept as text, not as a value
/// tree: one allocation per node, compared and hashed as bytes (the topology hash writes
/// it as it stands); the checks that read values parse it when they run.
#[derive(Clone, Debug, Eq)]
pub struct Config(std::sync::Arc<str>);

/// The same text shared is equal without reading it. `Arc<str>`'s own `==` compares the
/// bytes even then (std checks pointers first only for sized types), and salsa compares
/// every node's config on each edit, where all but one are shared with the last lowering.
impl PartialEq for Config {
    fn eq(&self, other: &Config) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0) || self.0 == other.0
    }
}

impl std::hash::Hash for Config {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl Config {
    /// Wraps text that is already canonical JSON of an object.
    pub fn from_canonical(text: impl Into<std::sync::Arc<str>>) -> Config {
        Config(text.into())
    }

    /// `{}`: an absent config.
    pub fn empty() -> Config {
        Config::from_canonical("{}")
    }

    pub fn text(&self) -> &str {
        &self.0
    }
}

/// A layout position.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Position {
    pub x: f64,
    pub y: f64,
}

/// One end of an edge; `port` is `None` when the author left it to the default.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Endpoint {
    pub node: Name,
    pub port: Option<Name>,
}

/// A contract mapping on an edge.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Mapping {
    pub output: Option<String>,
    pub input: Option<String>,
    pub artifacts: Vec<String>,
}

/// Retry settings of a retry edge, as authored (range checks are a pass's job).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RetrySettings {
    pub max_attempts: Option<i64>,
    pub backoff_ms: Option<i64>,
}

/// One edge as authored. `from`/`to` are `None` when malformed.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EdgeDecl {
    pub id: Name,
    pub from: Option<Endpoint>,
    pub to: Option<Endpoint>,
    pub kind: EdgeKind,
    /// Boxed, like `retry`: most edges have neither, and a draft has many edges.
    pub mapping: Option<Box<Mapping>>,
    pub branch_label: Option<String>,
    pub retry: Option<Box<RetrySettings>>,
}
