//! The typed intermediate representation of `little`.
//!
//! Two layers live here, both free of source positions:
//! - [`draft`]: the authored draft, lowered from JSON into typed declarations
//!   (what the checks read). Positions stay in the parsed JSON tree, reached through
//!   position-independent anchors, so moving text never changes these values.
//! - [`topology`]: the compiled executable topology, with visual-only
//!   families removed and node references interned as dense indices.

/// An id or port name. Up to 24 bytes are stored inline, which covers nearly every id
/// and port: a draft of a million nodes keeps millions of them.
pub type Name = compact_str::CompactString;

pub mod catalog;
pub mod draft;
pub mod ids;
pub mod topology;

/// How a family behaves at run time (the catalog's `kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    Trigger,
    Agent,
    Action,
    Router,
    Gate,
    Annotation,
    Group,
}

impl NodeKind {
    pub const NAMES: &'static [&'static str] = &["trigger", "agent", "action", "router", "gate", "annotation", "group"];

    pub fn parse(name: &str) -> Option<NodeKind> {
        Some(match name {
            "trigger" => NodeKind::Trigger,
            "agent" => NodeKind::Agent,
            "action" => NodeKind::Action,
            "router" => NodeKind::Router,
            "gate" => NodeKind::Gate,
            "annotation" => NodeKind::Annotation,
            "group" => NodeKind::Group,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        NodeKind::NAMES[self as usize]
    }
}

/// The kind of a transition (`forward` by default).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EdgeKind {
    Forward,
    Branch,
    Retry,
}

impl EdgeKind {
    pub fn parse(name: &str) -> Option<EdgeKind> {
        Some(match name {
            "forward" => EdgeKind::Forward,
            "branch" => EdgeKind::Branch,
            "retry" => EdgeKind::Retry,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Forward => "forward",
            EdgeKind::Branch => "branch",
            EdgeKind::Retry => "retry",
        }
    }

    /// Forward and branch edges carry control onward; retry edges re-enter a node.
    pub fn is_progress(self) -> bool {
        !matches!(self, EdgeKind::Retry)
    }
}

/// The type `any` overlaps every type.
pub const ANY_TYPE: &str = "any";

/// Whether two type sets share a type (`any` overlaps everything).
pub fn types_overlap(a: &[String], b: &[String]) -> bool {
    a.iter().any(|t| t == ANY_TYPE) || b.iter().any(|t| t == ANY_TYPE) || a.iter().any(|t| b.contains(t))
}

/// Whether every type a producer may emit is accepted by the consumer.
pub fn types_subset(producer: &[String], consumer: &[String]) -> bool {
    consumer.iter().any(|t| t == ANY_TYPE)
        || (!producer.iter().any(|t| t == ANY_TYPE) && producer.iter().all(|t| consumer.contains(t)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(types: &[&str]) -> Vec<String> {
        types.iter().map(|t| t.to_string()).collect()
    }

    #[test]
    fn any_overlaps_everything() {
        assert!(types_overlap(&set(&["any"]), &set(&["image"])));
        assert!(types_overlap(&set(&["image"]), &set(&["any"])));
        assert!(!types_overlap(&set(&["tabular-data"]), &set(&["image"])));
        assert!(!types_overlap(&set(&[]), &set(&["image"])));
    }

    #[test]
    fn subset_respects_any() {
        assert!(types_subset(&set(&["a"]), &set(&["a", "b"])));
        assert!(!types_subset(&set(&["a", "c"]), &set(&["a", "b"])));
        assert!(types_subset(&set(&["any"]), &set(&["any"])));
        assert!(!types_subset(&set(&["any"]), &set(&["a"])));
    }

    #[test]
    fn kind_names_round_trip() {
        for name in NodeKind::NAMES {
            assert_eq!(NodeKind::parse(name).unwrap().as_str(), *name);
        }
    }
}
