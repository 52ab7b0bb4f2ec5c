//! Position-independent locations, and their resolution to paths and spans.
//!
//! The checks must not read byte offsets: an edit that only shifts text would otherwise
//! re-run them. So they locate findings by an [`Anchor`] (an owner — the document, or a
//! node or edge named by its id — and a pointer below it), and the driver resolves anchors
//! against the freshly parsed tree at the very end.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;

use compact_str::CompactString;
use little_diagnostics::{Code, Diagnostic, Related};
use smallvec::SmallVec;

use crate::json::{JsonTree, JsonValue, NodeIdx, path_push_index, path_push_key};

/// One step of a pointer: an object key or an array index. Keys up to 24 bytes are
/// inline, so the lowering builds anchors for every field without allocating.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Seg {
    Key(CompactString),
    Index(u32),
}

impl From<&str> for Seg {
    fn from(key: &str) -> Seg {
        Seg::Key(key.into())
    }
}

impl From<usize> for Seg {
    fn from(index: usize) -> Seg {
        Seg::Index(index as u32)
    }
}

/// What a pointer starts from.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Owner {
    /// The document root.
    Root,
    /// The `nth` node (0 = first) whose `id` is `id`, in `$.nodes`.
    Node { id: CompactString, nth: u32 },
    /// The `nth` edge whose `id` is `id`, in `$.edges`.
    Edge { id: CompactString, nth: u32 },
    /// The `nth` LWIR step whose `id` is `id`, in `$.steps`.
    Step { id: CompactString, nth: u32 },
}

/// A location that survives edits which only move text.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Anchor {
    pub owner: Owner,
    pub pointer: Pointer,
}

/// The segments of an anchor below its owner; most are a few deep, and stay inline.
pub type Pointer = SmallVec<[Seg; 4]>;

impl Anchor {
    pub fn root() -> Anchor {
        Anchor { owner: Owner::Root, pointer: Pointer::new() }
    }

    pub fn node(id: &str, nth: u32) -> Anchor {
        Anchor { owner: Owner::Node { id: id.into(), nth }, pointer: Pointer::new() }
    }

    pub fn edge(id: &str, nth: u32) -> Anchor {
        Anchor { owner: Owner::Edge { id: id.into(), nth }, pointer: Pointer::new() }
    }

    pub fn step(id: &str, nth: u32) -> Anchor {
        Anchor { owner: Owner::Step { id: id.into(), nth }, pointer: Pointer::new() }
    }

    /// Element `index` of the root array `array` (`$.nodes[3]`), built without the copies
    /// that chaining [`Anchor::at`] makes: lowering makes one per node and edge.
    pub fn element(array: &str, index: usize) -> Anchor {
        let mut pointer = Pointer::new();
        pointer.push(Seg::from(array));
        pointer.push(Seg::from(index));
        Anchor { owner: Owner::Root, pointer }
    }

    /// This anchor extended by one segment.
    pub fn at(&self, seg: impl Into<Seg>) -> Anchor {
        let mut pointer = self.pointer.clone();
        pointer.push(seg.into());
        Anchor { owner: self.owner.clone(), pointer }
    }
}

/// Where a reader is looking: an anchor, or a member below it. Readers check every
/// field of every node and almost never report, so the member's anchor is built only for
/// a finding.
#[derive(Clone, Copy, Debug)]
pub enum At<'a> {
    Anchor(&'a Anchor),
    Key(&'a Anchor, &'a str),
}

impl At<'_> {
    pub fn anchor(self) -> Anchor {
        match self {
            At::Anchor(anchor) => anchor.clone(),
            At::Key(parent, key) => parent.at(key),
        }
    }

    /// The document itself (where `$schema` may stand).
    pub fn is_root(self) -> bool {
        matches!(self, At::Anchor(Anchor { owner: Owner::Root, pointer }) if pointer.is_empty())
    }
}

impl<'a> From<&'a Anchor> for At<'a> {
    fn from(anchor: &'a Anchor) -> At<'a> {
        At::Anchor(anchor)
    }
}

impl Anchor {
    /// The member `key` of this anchor, for a reader (see [`At`]).
    pub fn key<'a>(&'a self, key: &'a str) -> At<'a> {
        At::Key(self, key)
    }
}

/// A diagnostic whose location is still an anchor. `diagnostic.path` and `span` are
/// filled by [`Resolver::resolve`]; `related_at[i]` locates `diagnostic.related[i]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Finding {
    pub diagnostic: Diagnostic,
    pub at: Anchor,
    pub related_at: Vec<Anchor>,
}

impl Finding {
    pub fn new(code: Code, at: Anchor, message: impl Into<String>) -> Finding {
        Finding { diagnostic: Diagnostic::new(code, message), at, related_at: Vec::new() }
    }

    pub fn node(mut self, id: &str) -> Finding {
        self.diagnostic.node_id = Some(id.to_string());
        self
    }

    pub fn edge(mut self, id: &str) -> Finding {
        self.diagnostic.edge_id = Some(id.to_string());
        self
    }

    pub fn help(mut self, help: Option<String>) -> Finding {
        self.diagnostic.help = help;
        self
    }

    pub fn related(mut self, message: impl Into<String>, at: Anchor) -> Finding {
        self.diagnostic.related.push(Related { message: message.into(), path: String::new(), span: None });
        self.related_at.push(at);
        self
    }

    pub fn witness(mut self, witness: little_diagnostics::Witness) -> Finding {
        self.diagnostic.witness = Some(witness);
        self
    }
}

/// Resolves anchors against one parsed document (a tree, or an outline). The id tables are built on the first
/// anchor that needs them: a clean draft pays nothing.
pub struct Resolver<'t> {
    tree: &'t JsonTree,
    tables: std::cell::OnceCell<Tables<'t>>,
}

/// Where each `(id, occurrence)` of a node and an edge stands: its tree index and position.
/// (An id is borrowed from the text, or owned when it had to be read from an element.)
type IdTable<'t> = HashMap<(Cow<'t, str>, u32), (NodeIdx, usize)>;

struct Tables<'t> {
    nodes: IdTable<'t>,
    edges: IdTable<'t>,
    steps: IdTable<'t>,
}

impl<'t> Resolver<'t> {
    pub fn new(tree: &'t JsonTree) -> Resolver<'t> {
        Resolver { tree, tables: std::cell::OnceCell::new() }
    }

    fn tables(&self) -> &Tables<'t> {
        self.tables.get_or_init(|| {
            let tree = self.tree;
            let index = |key: &str| {
                let mut map = HashMap::new();
                let mut seen: HashMap<Cow<'t, str>, u32> = HashMap::new();
                let Some(array) = tree.get(tree.root(), key).and_then(|m| tree.value(m.value).as_array()) else {
                    return map;
                };
                for (position, &element) in array.iter().enumerate() {
                    if let Some(id) = tree.element_id(element) {
                        let nth = seen.entry(id.clone()).or_insert(0);
                        map.insert((id, *nth), (element, position));
                        *nth += 1;
                    }
                }
                map
            };
            Tables { nodes: index("nodes"), edges: index("edges"), steps: index("steps") }
        })
    }

    /// The JSONPath and span of an anchor. A pointer that runs past what the document
    /// has (a missing key, say) resolves to the deepest element that exists, which is
    /// where the author has to add the missing part.
    pub fn locate(&self, anchor: &Anchor) -> (String, Range<u32>) {
        let tree = self.tree;
        let mut path = String::from("$");
        let (mut current, mut span) = match &anchor.owner {
            Owner::Root => (tree.root(), tree.span(tree.root())),
            Owner::Node { id, nth } | Owner::Edge { id, nth } | Owner::Step { id, nth } => {
                let tables = self.tables();
                let (table, key) = match &anchor.owner {
                    Owner::Node { .. } => (&tables.nodes, "nodes"),
                    Owner::Edge { .. } => (&tables.edges, "edges"),
                    _ => (&tables.steps, "steps"),
                };
                match table.get(&(Cow::Borrowed(&**id), *nth)) {
                    Some(&(element, position)) => {
                        path_push_key(&mut path, key);
                        path_push_index(&mut path, position);
                        (element, tree.span(element))
                    }
                    None => (tree.root(), tree.span(tree.root())),
                }
            }
        };
        // An outline's element is read on its own, and the walk goes on in it.
        let mut element: Option<JsonTree> = None;
        for seg in &anchor.pointer {
            if element.is_none()
                && let Some(parsed) = self.tree.element(current)
            {
                current = parsed.root();
                element = Some(parsed);
            }
            let tree = element.as_ref().unwrap_or(self.tree);
            let next = match (seg, tree.value(current)) {
                (Seg::Key(key), JsonValue::Object(_)) => tree.get(current, key).map(|m| (m.value, m.key_span.clone())),
                (Seg::Index(i), JsonValue::Array(items)) => items.get(*i as usize).map(|&v| (v, tree.span(v))),
                _ => None,
            };
            let Some((value, _)) = next else { break };
            match seg {
                Seg::Key(key) => path_push_key(&mut path, key),
                Seg::Index(i) => path_push_index(&mut path, *i as usize),
            }
            current = value;
            span = tree.span(value);
        }
        (path, span)
    }

    /// Fills in the path and span of a finding (and of its related locations).
    pub fn resolve(&self, finding: Finding) -> Diagnostic {
        let Finding { mut diagnostic, at, related_at } = finding;
        // A finding inside a node, step or edge is about it, even when its check did not say
        // so (an LWIR step is the node of its topology: `nodeId`).
        match &at.owner {
            Owner::Node { id, .. } | Owner::Step { id, .. } if diagnostic.node_id.is_none() => {
                diagnostic.node_id = Some(id.to_string())
            }
            Owner::Edge { id, .. } if diagnostic.edge_id.is_none() => diagnostic.edge_id = Some(id.to_string()),
            _ => {}
        }
        let (path, span) = self.locate(&at);
        diagnostic.path = Some(path);
        diagnostic.span = Some(span);
        for (related, anchor) in diagnostic.related.iter_mut().zip(&related_at) {
            let (path, span) = self.locate(anchor);
            related.path = path;
            related.span = Some(span);
        }
        diagnostic
    }
}
