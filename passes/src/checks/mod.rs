//! The checks, one rule family per file. Node-local checks run per node (`node.rs`
//! gathers them into one tracked query per node); graph checks read the resolved graph
//! (`resolve.rs`) and each is its own tracked query.

pub mod adjacency;
pub mod agents;
pub mod branches;
pub mod catalog_version;
pub mod config;
pub mod contracts;
pub mod cycles;
pub mod family;
pub mod flow;
pub mod gates;
pub mod node;
pub mod packages;
pub mod ports;
pub mod request;
pub mod resolve;
pub mod retries;
pub mod schedule;
pub mod suppressions;
pub mod tenant;
pub mod upstream;
