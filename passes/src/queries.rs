//! The queries that turn source text into what the checks read.
//!
//! `outline` and `parse` are the only queries that see byte offsets. Everything
//! downstream is position-free, so an edit that only moves text re-runs the parse and
//! the lowering, whose unchanged results then stop the re-execution (salsa backdating).

use std::sync::{Arc, Mutex};

use little_diagnostics::Diagnostic;
use little_frontend::anchor::Finding;
use little_frontend::context::{BindingRow, Context};
use little_frontend::draft::{
    ContractsDecl, Damage, DraftElements, EdgeEntry, LoweredDraft, NodeBindings, NodeDecl, NodeMeta, Stamp,
};
use little_frontend::json::JsonTree;
use little_frontend::reparse::DraftOutline;
use little_frontend::{DocumentKind, catalog, context, draft, json};
use little_ir::Name;
use little_ir::catalog::{Catalog, Family};
use little_ir::draft::{Config, Header, Position};

use crate::checks::resolve::{ResolvedGraph, resolve};
use crate::db::{SourceFile, Workspace};
use crate::rules::TrackedNode;

/// A parsed file: the tree (absent when the text is not JSON) and the parse findings.
#[derive(Debug, PartialEq)]
pub struct ParsedFile {
    pub tree: Option<JsonTree>,
    pub diagnostics: Vec<Diagnostic>,
}

#[salsa::tracked(returns(ref), no_eq)]
pub fn parse(db: &dyn salsa::Database, file: SourceFile) -> ParsedFile {
    // A recovered draft's tree is its repaired text's (the outline's text), so that the
    // editor's requests read what its checks read.
    let text = match outline(db, file) {
        outline if !outline.damaged.is_empty() => outline.tree.as_ref().map(|t| t.text().clone()),
        _ => None,
    };
    let parsed = json::parse_shared(text.unwrap_or_else(|| file.text(db).clone()));
    ParsedFile { tree: parsed.tree, diagnostics: parsed.diagnostics }
}

/// A file's outline ([`outline`]).
#[derive(Debug)]
pub struct Outline {
    pub tree: Option<JsonTree>,
    pub diagnostics: Vec<Diagnostic>,
    /// The parts of an edited draft that is not JSON that its recovery stands for
    /// ([`DraftOutline::parse_tolerant`]); empty when it parsed.
    pub damaged: Vec<std::ops::Range<u32>>,
    /// A draft's elements, read while the outline was parsed, until `lowering` takes them.
    elements: Handoff<Arc<DraftElements>>,
}

impl Outline {
    /// Whether a finding at `span` lies on what a recovery repaired (see `damaged`).
    pub fn echoes_damage(&self, span: &std::ops::Range<u32>) -> bool {
        little_frontend::reparse::echoes_damage(&self.damaged, span)
    }

    /// The draft's elements the outline parse read, for [`lowering`]: a memo cannot be
    /// moved out of, and keeping them here too would hold every element twice. (An edited
    /// file's last outline shares them: they are copied then.) Once taken, none: the
    /// lowering then reads each element again from its span.
    pub fn take_elements(&self) -> DraftElements {
        Arc::unwrap_or_clone(self.elements.take_or_else(Arc::default))
    }
}

/// A value that one query hands to the one reader that builds on it: a memo cannot be
/// moved out of, and keeping it in both would hold it twice. Taking it says how to get it
/// again, so that a reader that finds it taken (a reader of another workspace, or one
/// whose first run was cancelled) reads the same value, copied or computed anew: the
/// order in which the queries run changes what is copied, never what is read.
#[derive(Debug)]
pub struct Handoff<T>(Mutex<Option<T>>);

impl<T> Handoff<T> {
    pub fn new(value: T) -> Handoff<T> {
        Handoff(Mutex::new(Some(value)))
    }

    /// A handoff with nothing in it: every reader gets the value again.
    pub fn none() -> Handoff<T> {
        Handoff(Mutex::new(None))
    }

    /// The value, the first time; after that, what `again` gives.
    pub fn take_or_else(&self, again: impl FnOnce() -> T) -> T {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take().unwrap_or_else(again)
    }

    /// Lets the value go: its reader did not run, because what it built on the last one
    /// was kept (an equal part), and nothing else will take it.
    pub fn release(&self) {
        drop(self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take());
    }
}

/// A parsed file whose draft elements are kept as spans ([`json::parse_outline`]): what
/// the checks of a draft, its hashes and the report read, one element at a time. Its
/// findings are `parse`'s. A draft's elements are lowered while the parser holds each one
/// (`DraftElements`), so that a draft is not parsed again to be lowered; `parse`'s whole
/// tree is built only for the editor's requests on a draft, so a checked draft's tree is
/// never held at once. A file an editor changes keeps its last outline, which an edit
/// inside one element patches ([`DraftOutline::edit`]).
#[salsa::tracked(returns(ref), no_eq)]
pub fn outline(db: &dyn salsa::Database, file: SourceFile) -> Outline {
    let text = file.text(db);
    let outline = match file.last_outline(db) {
        Some(last) => last.next(text),
        None => DraftOutline::parse(text.clone()),
    };
    Outline {
        tree: outline.tree,
        diagnostics: outline.diagnostics,
        damaged: outline.damaged,
        elements: outline.elements.map_or_else(Handoff::none, Handoff::new),
    }
}

/// The whole tree of a file, for the readers of every document but a draft and for the
/// editor's requests: the outline's when it elided nothing (every document but a draft),
/// so that such a file is parsed once; else the file parsed anew.
pub fn whole_tree(db: &dyn salsa::Database, file: SourceFile) -> Option<&JsonTree> {
    match outline(db, file).tree.as_ref() {
        Some(tree) if tree.is_outline() => parse(db, file).tree.as_ref(),
        tree => tree,
    }
}

/// Which document a file is; `None` when it is not JSON at all.
#[salsa::tracked(returns(ref))]
pub fn document_kind(db: &dyn salsa::Database, file: SourceFile) -> Option<Result<DocumentKind, Box<Finding>>> {
    outline(db, file).tree.as_ref().map(little_frontend::document_kind)
}

/// One authored node. Its id and occurrence count are its identity within its chunk
/// ([`node_chunk`]), so salsa matches it across edits however the nodes inside a chunk are
/// reordered; each group of fields is tracked on its own. The workspace it is checked
/// against is part of its identity too, so that the node layers are queries of the node
/// alone: a query of two keys interns the pair, one more table entry per node.
#[salsa::tracked(debug)]
pub struct Node<'db> {
    #[returns(copy)]
    pub workspace: Workspace,
    #[returns(ref)]
    pub id: Name,
    #[returns(copy)]
    pub nth: u32,
    /// Interned once here, so per-node queries look families up without hashing text.
    #[tracked]
    #[returns(copy)]
    pub family: Option<FamilyName<'db>>,
    /// Canonical text: the topology hash writes it as it stands.
    #[tracked]
    #[returns(ref)]
    pub config: Option<Config>,
    #[tracked]
    #[returns(ref)]
    pub contracts: ContractsDecl,
    #[tracked]
    #[returns(ref)]
    pub bindings: NodeBindings,
    #[tracked]
    #[returns(ref)]
    pub meta: NodeMeta,
    #[tracked]
    #[returns(ref)]
    pub position: Option<Position>,
}

/// How many nodes one [`node_chunk`] creates.
pub const NODE_CHUNK: usize = 4096;

/// A draft lowered once, its parts handed out once each ([`Handoff`]): each chunk of
/// nodes to its [`chunk_decls`], the edges to [`edge_decls`], the findings to
/// [`draft_ir`]; a reader that finds its part taken reads it from [`lowered_again`].
#[derive(Debug)]
pub struct Lowering {
    header: Header,
    shape: Shape,
    chunks: Vec<Handoff<Part<NodeDecl>>>,
    edges: Handoff<Part<EdgeEntry>>,
    findings: Handoff<Vec<Finding>>,
}

/// How a draft's nodes are laid out: in how many chunks, and whether `nodes` could be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub chunks: u32,
    pub nodes_unreadable: bool,
    /// Which arrays hold unknown elements (a recovered draft).
    pub damage: Damage,
}

/// Whether a part's elements are as the last lowering read them: the same elements, read
/// by the same read ([`Stamp`]), with the same occurrence counts of their ids (an id
/// changed in another part can change them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartStamp {
    len: u32,
    newest: Stamp,
    /// (index in the part, count) of each element whose id occurred before it.
    repeated: Vec<(u32, u32)>,
}

impl PartStamp {
    /// `stamps` are the elements' own, `None` when they are not known (a part that is new).
    fn of<T>(items: &[T], stamps: Option<&[Stamp]>, nth: impl Fn(&T) -> u32) -> PartStamp {
        PartStamp {
            len: items.len() as u32,
            // A stamp is never taken twice, and a newer one is larger: the largest changes
            // whenever any element of the part was read again.
            newest: stamps.map_or_else(draft::fresh_stamp, |stamps| stamps.iter().copied().max().unwrap_or(0)),
            repeated: items.iter().enumerate().filter(|(_, n)| nth(n) > 0).map(|(i, n)| (i as u32, nth(n))).collect(),
        }
    }
}

/// Part of a draft as lowered (a chunk of its nodes, or its edges), until the query that
/// builds on it takes it. Equal to the last revision's when its stamp is, so that salsa
/// re-runs nothing built on a part an edit did not touch: no `node_chunk` re-creates its
/// thousands of nodes, and the graph is not resolved again.
#[derive(Debug)]
pub struct Part<T> {
    stamp: PartStamp,
    items: Handoff<Vec<T>>,
}

impl<T> Part<T> {
    fn new(items: Vec<T>, stamps: Option<&[Stamp]>, nth: impl Fn(&T) -> u32) -> Part<T> {
        Part { stamp: PartStamp::of(&items, stamps, nth), items: Handoff::new(items) }
    }
}

impl<T> PartialEq for Part<T> {
    fn eq(&self, other: &Part<T>) -> bool {
        self.stamp == other.stamp
    }
}

/// A draft's lowering, from the elements its outline read while it was parsed.
#[salsa::tracked(returns(ref), no_eq)]
pub fn lowering(db: &dyn salsa::Database, file: SourceFile) -> Option<Lowering> {
    let outline = outline(db, file);
    let elements = outline.take_elements().with_damage(outline.damaged.clone());
    let (lowered, stamps) = draft::lower_draft_stamped(outline.tree.as_ref()?, elements);
    let mut nodes = lowered.nodes.into_iter();
    let chunks: Vec<_> = (0..nodes.len().div_ceil(NODE_CHUNK))
        .map(|chunk| {
            let decls: Vec<NodeDecl> = nodes.by_ref().take(NODE_CHUNK).collect();
            let start = chunk * NODE_CHUNK;
            let own = stamps.nodes.get(start..start + decls.len());
            Handoff::new(Part::new(decls, own, |n| n.nth))
        })
        .collect();
    let edge_stamps = (stamps.edges.len() == lowered.edges.len()).then_some(&stamps.edges[..]);
    Some(Lowering {
        header: lowered.header,
        shape: Shape {
            chunks: chunks.len() as u32,
            nodes_unreadable: lowered.nodes_unreadable,
            damage: lowered.damage,
        },
        chunks,
        edges: Handoff::new(Part::new(lowered.edges, edge_stamps, |e| e.nth)),
        findings: Handoff::new(lowered.findings),
    })
}

/// The draft lowered again from its outline, for a reader whose part of [`lowering`] was
/// taken: each element is parsed again from its span. Alike, read for read.
#[salsa::tracked(returns(ref), no_eq)]
pub fn lowered_again(db: &dyn salsa::Database, file: SourceFile) -> Option<LoweredDraft> {
    let outline = outline(db, file);
    let elements = DraftElements::default().with_damage(outline.damaged.clone());
    outline.tree.as_ref().map(|tree| draft::lower_draft_from(tree, elements))
}

/// The shape of a draft's lowering; `None` when the file is not a readable draft.
#[salsa::tracked(returns(copy))]
pub fn shape(db: &dyn salsa::Database, file: SourceFile) -> Option<Shape> {
    if !matches!(document_kind(db, file), Some(Ok(DocumentKind::Draft))) {
        return None;
    }
    lowering(db, file).as_ref().map(|lowering| lowering.shape)
}

/// Chunk `chunk` of a draft's nodes as lowered ([`Part`]). Taken again, it is lowered
/// again, with a stamp no earlier part has (what builds on it runs again).
#[salsa::tracked(returns(ref))]
pub fn chunk_decls(db: &dyn salsa::Database, file: SourceFile, chunk: u32) -> Option<Part<NodeDecl>> {
    let part = lowering(db, file).as_ref()?.chunks.get(chunk as usize)?;
    Some(part.take_or_else(|| Part::new(chunk_again(db, file, chunk), None, |n| n.nth)))
}

/// A draft's edges as lowered ([`Part`]); taken again, as [`chunk_decls`].
#[salsa::tracked(returns(ref))]
pub fn edge_decls(db: &dyn salsa::Database, file: SourceFile) -> Option<Part<EdgeEntry>> {
    let part = &lowering(db, file).as_ref()?.edges;
    Some(part.take_or_else(|| Part::new(edges_again(db, file), None, |e| e.nth)))
}

/// Chunk `chunk` of the nodes of [`lowered_again`].
fn chunk_again(db: &dyn salsa::Database, file: SourceFile, chunk: u32) -> Vec<NodeDecl> {
    let again = lowered_again(db, file).as_ref().map_or(&[][..], |lowered| &lowered.nodes[..]);
    let start = (chunk as usize * NODE_CHUNK).min(again.len());
    again[start..(start + NODE_CHUNK).min(again.len())].to_vec()
}

/// The edges of [`lowered_again`].
fn edges_again(db: &dyn salsa::Database, file: SourceFile) -> Vec<EdgeEntry> {
    lowered_again(db, file).as_ref().map_or_else(Vec::new, |again| again.edges.clone())
}

/// Chunk `chunk` of a draft's nodes, as tracked structs. A chunk a query: salsa keeps, for
/// the query that creates tracked structs, two maps of their identities, and one query
/// creating a million nodes made each a table of a million entries that every creation
/// missed the cache in (about 4% of a check at a million, against 2% at 100,000). It
/// reads its nodes from [`chunk_decls`] alone, so an edit elsewhere does not re-run it.
#[salsa::tracked(returns(ref))]
pub fn node_chunk<'db>(
    db: &'db dyn salsa::Database,
    workspace: Workspace,
    file: SourceFile,
    chunk: u32,
) -> Vec<Node<'db>> {
    let Some(part) = chunk_decls(db, file, chunk) else { return Vec::new() };
    let decls = part.items.take_or_else(|| chunk_again(db, file, chunk));
    // A draft names a dozen families across up to millions of nodes: each is interned once.
    let mut interned: rustc_hash::FxHashMap<Name, FamilyName<'_>> = rustc_hash::FxHashMap::default();
    decls
        .into_iter()
        .map(|n| {
            let family = n
                .family
                .map(|name| *interned.entry(name).or_insert_with_key(|name| FamilyName::new(db, name.as_str())));
            Node::new(db, workspace, n.id, n.nth, family, n.config, n.contracts, n.bindings, n.meta, n.position)
        })
        .collect()
}

/// A draft's nodes, to be checked against `workspace`, in authored order. Only their
/// ids: a change inside one node leaves it equal.
#[salsa::tracked(returns(ref))]
pub fn draft_nodes(db: &dyn salsa::Database, workspace: Workspace, file: SourceFile) -> Vec<Node<'_>> {
    let chunks = shape(db, file).map_or(0, |shape| shape.chunks);
    (0..chunks).flat_map(|chunk| node_chunk(db, workspace, file, chunk).iter().copied()).collect()
}

/// The resolved graph of a draft (empty when the file is not a readable draft): its
/// edges resolved between its nodes. The lowered edges are not kept, only the graph
/// resolved from them, which is what every later layer reads (one copy of each edge, not
/// two). It re-runs only when a node's id, family or contracts, or an edge, changed.
#[salsa::tracked(returns(ref))]
pub fn resolved_graph<'db>(db: &'db dyn salsa::Database, workspace: Workspace, file: SourceFile) -> ResolvedGraph {
    let Some(shape) = shape(db, file) else { return ResolvedGraph::default() };
    let nodes = draft_nodes(db, workspace, file);
    let edges = match edge_decls(db, file) {
        Some(part) => part.items.take_or_else(|| edges_again(db, file)),
        None => edges_again(db, file),
    };
    // Each distinct family is looked up once: a draft has a dozen families and up to
    // millions of nodes, and every lookup through the database is a recorded read.
    let catalog = workspace.catalog(db);
    let mut families: rustc_hash::FxHashMap<FamilyName<'db>, Option<Arc<Family>>> = Default::default();
    let family_of = |node: &TrackedNode<'db>| {
        let name = node.node.family(db)?;
        families.entry(name).or_insert_with(|| family(db, catalog, name).clone()).clone()
    };
    resolve(&TrackedNode::all(db, nodes), family_of, shape.nodes_unreadable, shape.damage, &edges)
}

/// A lowered draft: its header, its nodes and what lowering found. Only ids of nodes, so
/// a change inside one node leaves it equal.
#[derive(Debug, PartialEq, salsa::SalsaValue)]
pub struct DraftIr<'db> {
    pub header: Header,
    pub nodes: Vec<Node<'db>>,
    pub nodes_unreadable: bool,
    pub findings: Vec<Finding>,
}

/// The lowered draft, its nodes to be checked against `workspace`; `None` when the file
/// is not a readable draft.
#[salsa::tracked(returns(ref))]
pub fn draft_ir(db: &dyn salsa::Database, workspace: Workspace, file: SourceFile) -> Option<DraftIr<'_>> {
    let shape = shape(db, file)?;
    let lowering = lowering(db, file).as_ref()?;
    let nodes = draft_nodes(db, workspace, file).clone();
    // A part whose stamp is as it was keeps what was built on it, and salsa keeps the
    // part's new lowering, which nothing took: a second copy, let go here, once the
    // queries that take parts have had theirs.
    resolved_graph(db, workspace, file);
    for chunk in 0..shape.chunks {
        if let Some(part) = chunk_decls(db, file, chunk) {
            part.items.release();
        }
    }
    if let Some(part) = edge_decls(db, file) {
        part.items.release();
    }
    let findings = lowering
        .findings
        .take_or_else(|| lowered_again(db, file).as_ref().expect("a draft lowered once lowers again").findings.clone());
    Some(DraftIr { header: lowering.header.clone(), nodes, nodes_unreadable: shape.nodes_unreadable, findings })
}

/// A reader document (catalog, context, rows) and the findings about it.
#[derive(Debug, PartialEq)]
pub struct Read<T> {
    pub value: T,
    /// Findings about the document itself (resolved against its own text).
    pub findings: Vec<Finding>,
}

pub(crate) fn read_document<T: Default>(
    db: &dyn salsa::Database,
    file: SourceFile,
    expected: DocumentKind,
    read: impl FnOnce(&JsonTree) -> (T, Vec<Finding>),
) -> Read<T> {
    let Some(tree) = whole_tree(db, file) else {
        return Read { value: T::default(), findings: Vec::new() };
    };
    match document_kind(db, file) {
        Some(Ok(kind)) if *kind == expected => {
            let (value, findings) = read(tree);
            Read { value, findings }
        }
        Some(Ok(kind)) => Read {
            value: T::default(),
            findings: vec![Finding::new(
                little_diagnostics::Code::ParseUnsupportedFormat,
                little_frontend::anchor::Anchor::root().at("format"),
                format!("expected a {} document, found a {} document", expected.as_str(), kind.as_str()),
            )],
        },
        Some(Err(finding)) => Read { value: T::default(), findings: vec![(**finding).clone()] },
        None => Read { value: T::default(), findings: Vec::new() },
    }
}

#[salsa::tracked(returns(ref))]
pub fn catalog_of(db: &dyn salsa::Database, file: SourceFile) -> Read<Catalog> {
    read_document(db, file, DocumentKind::Catalog, catalog::read_catalog)
}

#[salsa::tracked(returns(ref))]
pub fn context_of(db: &dyn salsa::Database, file: SourceFile) -> Read<Context> {
    read_document(db, file, DocumentKind::Context, context::read_context)
}

#[salsa::tracked(returns(ref))]
pub fn bindings_of(db: &dyn salsa::Database, file: SourceFile) -> Read<Vec<BindingRow>> {
    read_document(db, file, DocumentKind::Bindings, context::read_bindings)
}

/// The tenant context, when one is given.
pub fn context(db: &dyn salsa::Database, workspace: Workspace) -> Option<&Context> {
    workspace.context(db).map(|file| &context_of(db, file).value)
}

/// The binding rows, when a reader is given.
pub fn binding_rows(db: &dyn salsa::Database, workspace: Workspace) -> Option<&[BindingRow]> {
    workspace.bindings(db).map(|file| bindings_of(db, file).value.as_slice())
}

/// A family name, interned so that per-family queries can take it as a key.
#[salsa::interned(debug)]
pub struct FamilyName<'db> {
    #[returns(ref)]
    pub text: String,
}

/// One family of the catalog. A catalog edit re-runs only the nodes whose family changed.
#[salsa::tracked(returns(ref))]
pub fn family<'db>(db: &'db dyn salsa::Database, catalog: SourceFile, name: FamilyName<'db>) -> Option<Arc<Family>> {
    catalog_of(db, catalog).value.family(name.text(db)).cloned().map(Arc::new)
}

/// The family of a node, if the node names one its workspace's catalog has.
pub fn family_of<'db>(db: &'db dyn salsa::Database, node: Node<'db>) -> Option<&'db Arc<Family>> {
    family(db, node.workspace(db).catalog(db), node.family(db)?).as_ref()
}
