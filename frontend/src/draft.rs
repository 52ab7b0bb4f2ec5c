//! Lowering of a `workflow-draft/v1` document into typed declarations (docs/reference/formats.md#draft).
//!
//! Everything here is position-free: findings carry anchors, declarations carry no spans.

use std::ops::Range;

use little_diagnostics::Code;
use little_ir::draft::{
    AgentRef, Artifact, Config, ContractPort, Contracts, EdgeDecl, Endpoint, Header, Mapping, PackageBinding, Position,
    RetrySettings,
};
use little_ir::ids::occurrences;
use little_ir::{EdgeKind, Name};

use crate::anchor::{Anchor, Finding, Owner};
use crate::json::{ElementParser, ElementSeen, JsonTree, JsonValue, NodeIdx, TreeValue};
use crate::reader::{DRAFT_CODES, Reader, ShapeCodes, member};

pub const DRAFT_FORMAT: &str = "workflow-draft/v1";
pub const CONTRACTS_VERSION: &str = "workflow-node-contracts/v1";

const TOP_KEYS: &[&str] =
    &["format", "tenantId", "workflowId", "draftId", "revision", "catalogVersion", "nodes", "edges"];
const NODE_KEYS: &[&str] = &[
    "id",
    "family",
    "title",
    "description",
    "config",
    "flags",
    "contracts",
    "packages",
    "agent",
    "position",
    "text",
    "members",
    "suppress",
];
const EDGE_KEYS: &[&str] = &["id", "from", "to", "kind", "mapping", "branch", "retry"];

/// A node's `contracts`, as far as it could be read.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum ContractsDecl {
    #[default]
    Absent,
    /// Present but not a valid envelope (already reported): unknown to the checks, which
    /// take it to declare anything.
    Invalid,
    /// Boxed: few nodes declare contracts, and every node carries this.
    Valid(Box<Contracts>),
}

impl ContractsDecl {
    pub fn valid(&self) -> Option<&Contracts> {
        match self {
            ContractsDecl::Valid(c) => Some(c),
            _ => None,
        }
    }
}

/// A node's `agent`, as far as it could be read.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub enum AgentDecl {
    #[default]
    Absent,
    Invalid,
    Present(AgentRef),
}

/// One node with a readable id. `nth` counts earlier nodes with the same id.
///
/// The parts are grouped by who reads them, so that an edit to one part re-runs only
/// the checks that read it (each group becomes one tracked field in the database).
#[derive(Clone, Debug, PartialEq)]
pub struct NodeDecl {
    pub id: Name,
    pub nth: u32,
    pub family: Option<Name>,
    /// The config object; `None` when it is malformed (absent reads as `{}`).
    pub config: Option<Config>,
    pub contracts: ContractsDecl,
    pub bindings: NodeBindings,
    pub meta: NodeMeta,
    pub position: Option<Position>,
}

/// What a node binds: packages and an agent. Most nodes bind neither, so this is one
/// pointer, absent for them (8 bytes a node, not 56).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct NodeBindings(Option<Box<Bound>>);

#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
struct Bound {
    packages: Vec<PackageBinding>,
    agent: AgentDecl,
}

impl NodeBindings {
    pub fn packages(&self) -> &[PackageBinding] {
        self.0.as_ref().map_or(&[], |b| &b.packages)
    }

    pub fn agent(&self) -> &AgentDecl {
        self.0.as_ref().map_or(&AgentDecl::Absent, |b| &b.agent)
    }

    fn bound(&mut self) -> &mut Bound {
        self.0.get_or_insert_with(Box::default)
    }
}

/// Authored sentences, flags, group members and suppressions. Most nodes have a title
/// and none of the rest, which is boxed: such a node carries 24 bytes here, not 120.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct NodeMeta {
    pub title: Option<Box<str>>,
    pub more: Option<Box<MoreMeta>>,
}

/// What few nodes carry besides a title.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct MoreMeta {
    pub description: Option<String>,
    pub flags: Vec<(String, bool)>,
    pub members: Vec<String>,
    pub suppress: Vec<String>,
}

impl NodeMeta {
    pub fn description(&self) -> Option<&str> {
        self.more.as_ref()?.description.as_deref()
    }

    /// The authored flags, sorted by name.
    pub fn flags(&self) -> &[(String, bool)] {
        self.more.as_ref().map_or(&[], |m| &m.flags)
    }

    /// The codes the node suppresses.
    pub fn suppress(&self) -> &[String] {
        self.more.as_ref().map_or(&[], |m| &m.suppress)
    }
}

/// One edge with a readable id. `nth` counts earlier edges with the same id.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EdgeEntry {
    pub decl: EdgeDecl,
    pub nth: u32,
    /// The edge's `kind` was malformed: it is skipped by the graph checks.
    pub invalid: bool,
}

/// A lowered draft: what every check reads.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct LoweredDraft {
    pub header: Header,
    pub nodes: Vec<NodeDecl>,
    pub edges: Vec<EdgeEntry>,
    /// `nodes` was missing or not an array.
    pub nodes_unreadable: bool,
    /// Which arrays hold unknown elements (an editor's recovery of a draft that is not JSON).
    pub damage: Damage,
    pub findings: Vec<Finding>,
}

/// Whether `nodes` and `edges` hold elements a recovery stands for (`crate::recover`):
/// unknown, so not lowered. What they were is anything: an unknown node could bear any id
/// an edge names and be any kind of node; an unknown edge could lead from any node to any
/// node with any label. The checks take them so (passes: `Damage` on the resolved graph).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Damage {
    pub nodes: bool,
    pub edges: bool,
}

impl Damage {
    pub fn any(self) -> bool {
        self.nodes || self.edges
    }
}

/// Lowers a draft whose `format` has already been recognised, from its tree or from its
/// outline ([`crate::json::parse_outline`]), whose elements are read one at a time.
pub fn lower_draft(tree: &JsonTree) -> LoweredDraft {
    lower_draft_from(tree, DraftElements::default())
}

/// [`lower_draft`] with the elements its outline parse read already (any it did not read
/// are read here).
pub fn lower_draft_from(tree: &JsonTree, pre: DraftElements) -> LoweredDraft {
    lower_draft_stamped(tree, pre).0
}

/// The [`Stamp`] of each node and each edge read, in the order of `nodes` and `edges`.
#[derive(Clone, Debug, Default)]
pub struct Stamps {
    pub nodes: Vec<Stamp>,
    pub edges: Vec<Stamp>,
}

/// [`lower_draft_from`], and the stamps of what it read.
pub fn lower_draft_stamped(tree: &JsonTree, mut pre: DraftElements) -> (LoweredDraft, Stamps) {
    let mut reader = Reader::new(tree, DRAFT_CODES);
    let mut draft = LoweredDraft::default();
    let mut stamps = Stamps::default();
    let root_at = Anchor::root();
    let Some(top) = reader.object(tree.root(), &root_at, "a draft") else {
        draft.nodes_unreadable = true;
        draft.findings = reader.findings;
        return (draft, stamps);
    };
    reader.unknown_keys(top, &root_at, "the draft", TOP_KEYS);
    draft.header = read_header(&mut reader, top);
    let mut elements = ElementParser::new(tree.text());

    match member(top, "nodes") {
        None => {
            reader.missing(&root_at, "the draft", "nodes");
            draft.nodes_unreadable = true;
        }
        Some(idx) => match reader.array(idx, root_at.key("nodes"), "`nodes`") {
            None => draft.nodes_unreadable = true,
            Some(items) => {
                let nodes = read_array(
                    &mut reader,
                    &mut elements,
                    &pre.damaged,
                    "nodes",
                    idx,
                    items,
                    pre.nodes.take(),
                    read_node,
                    |n| &n.id,
                    |n, nth| n.nth = nth,
                );
                (draft.nodes, stamps.nodes) = (nodes.read, nodes.stamps);
                draft.damage.nodes = nodes.unknown;
            }
        },
    }

    if let Some(idx) = member(top, "edges")
        && let Some(items) = reader.array(idx, root_at.key("edges"), "`edges`")
    {
        let edges = pre.edges.take();
        let edges = read_array(
            &mut reader,
            &mut elements,
            &pre.damaged,
            "edges",
            idx,
            items,
            edges,
            read_edge,
            |e| &e.decl.id,
            |e, nth| e.nth = nth,
        );
        (draft.edges, stamps.edges) = (edges.read, edges.stamps);
        draft.damage.edges = edges.unknown;
    }
    out_of_range_numbers(tree, tree.root(), Anchor::root(), &mut reader.findings);
    draft.findings = reader.findings;
    (draft, stamps)
}

/// A number beyond the range of doubles (`1e400`) is valid JSON, but it has no canonical
/// form (RFC 8785), so the draft could not be hashed: it is reported where it stands, so
/// that a draft never ends up with neither a candidate nor a diagnostic saying why.
/// (RFC 8259 §6 lets an implementation limit the range of numbers it accepts.)
pub(crate) fn out_of_range_numbers(tree: &JsonTree, root: NodeIdx, at: Anchor, findings: &mut Vec<Finding>) {
    use crate::json::JsonValue;
    let out_of_range = |i: NodeIdx| tree.value(i).as_number().is_some_and(|n| !little_hashing::has_canonical_form(n));
    // A subtree's nodes follow its root in the arena: only those are looked at (the
    // outline parse shows an element at the end of the document parsed so far).
    if !(root..tree.len() as NodeIdx).any(out_of_range) {
        return;
    }
    let mut stack = vec![(root, at)];
    while let Some((idx, at)) = stack.pop() {
        match tree.value(idx) {
            JsonValue::Number(n) if out_of_range(idx) => findings.push(Finding::new(
                Code::ParseInvalidJson,
                at,
                format!("number `{n}` is outside the range of IEEE-754 doubles: it has no canonical JSON form"),
            )),
            JsonValue::Array(items) => stack.extend(items.iter().enumerate().rev().map(|(i, &v)| (v, at.at(i)))),
            JsonValue::Object(members) => stack.extend(members.iter().rev().map(|m| (m.value, at.at(m.key)))),
            _ => {}
        }
    }
}

fn read_header(reader: &mut Reader<'_>, top: crate::json::Members<'_>) -> Header {
    let root = Anchor::root();
    let identity = |reader: &mut Reader<'_>, key: &str| -> Option<String> {
        let Some(idx) = member(top, key) else {
            reader.findings.push(Finding::new(
                Code::RequestMissingIdentity,
                root.clone(),
                format!("the draft has no `{key}`: a draft must name its tenant, workflow, draft and revision"),
            ));
            return None;
        };
        let at = root.at(key);
        let value = reader.string(idx, &at, format_args!("`{key}`"))?;
        if value.trim().is_empty() {
            reader.findings.push(Finding::new(Code::RequestMissingIdentity, at, format!("`{key}` is empty")));
            return None;
        }
        Some(value.to_string())
    };
    let tenant_id = identity(reader, "tenantId");
    let workflow_id = identity(reader, "workflowId");
    let draft_id = identity(reader, "draftId");
    let revision = match member(top, "revision") {
        None => {
            reader.findings.push(Finding::new(
                Code::RequestMissingIdentity,
                root.clone(),
                "the draft has no `revision`: a draft must name its tenant, workflow, draft and revision",
            ));
            None
        }
        Some(idx) => {
            let at = root.at("revision");
            match reader.integer(idx, &at, "`revision`") {
                Some(n) if n >= 0 => Some(n as u64),
                Some(n) => {
                    reader.invalid(&at, format!("`revision` must not be negative, found {n}"));
                    None
                }
                None => None,
            }
        }
    };
    let catalog_version = match member(top, "catalogVersion") {
        None => {
            reader.missing(&root, "the draft", "catalogVersion");
            None
        }
        Some(idx) => reader.name(idx, root.key("catalogVersion"), "`catalogVersion`").map(str::to_string),
    };
    Header { tenant_id, workflow_id, draft_id, revision, catalog_version }
}

fn read_node(reader: &mut Reader<'_>, idx: NodeIdx, index: usize) -> Option<NodeDecl> {
    let positional = Anchor::element("nodes", index);
    let members = reader.object(idx, &positional, "a node")?;
    let Some(id_idx) = member(members, "id") else {
        reader.missing(&positional, "this node", "id");
        return None;
    };
    let id = Name::from(reader.name(id_idx, positional.key("id"), "a node's `id`")?);
    let mut node = NodeDecl {
        id: id.clone(),
        nth: 0,
        family: None,
        config: Some(Config::empty()),
        contracts: ContractsDecl::Absent,
        bindings: NodeBindings::default(),
        meta: NodeMeta::default(),
        position: None,
    };
    // Findings inside a node are anchored to its array slot first, then rebased onto
    // its id (which survives reordering); `lower_draft` patches in the occurrence count.
    let base = positional;
    let first_finding = reader.findings.len();
    reader.unknown_keys(members, &base, format_args!("node `{id}`"), NODE_KEYS);
    match member(members, "family") {
        None => reader.missing(&base, format_args!("node `{id}`"), "family"),
        Some(f) => node.family = reader.name(f, base.key("family"), "a node's `family`").map(Name::from),
    }
    let mut more = MoreMeta::default();
    if let Some(t) = member(members, "title") {
        node.meta.title = reader.string(t, base.key("title"), "`title`").map(Box::from);
    }
    if let Some(t) = member(members, "description") {
        more.description = reader.string(t, base.key("description"), "`description`").map(str::to_string);
    }
    if let Some(t) = member(members, "text") {
        reader.string(t, base.key("text"), "`text`");
    }
    if let Some(c) = member(members, "config") {
        // A number without a canonical form (`1e400`) is reported as a parse fault;
        // the config is then unreadable rather than checked in a changed form.
        node.config = reader.object(c, base.key("config"), "`config`").and_then(|_| canonical_config(reader.tree, c));
    }
    if let Some(f) = member(members, "flags")
        && let Some(flags) = reader.object(f, base.key("flags"), "`flags`")
    {
        for flag in flags {
            if let Some(b) = reader.boolean(flag.value, &base.at("flags").at(flag.key), "a flag") {
                more.flags.push((flag.key.to_string(), b));
            }
        }
        more.flags.sort();
    }
    if let Some(c) = member(members, "contracts") {
        node.contracts = read_contracts(reader, c, &base.at("contracts"));
    }
    if let Some(p) = member(members, "packages")
        && let Some(items) = reader.array(p, base.key("packages"), "`packages`")
    {
        for (i, &item) in items.iter().enumerate() {
            if let Some(binding) = read_package(reader, item, &base.at("packages").at(i)) {
                node.bindings.bound().packages.push(binding);
            }
        }
    }
    if let Some(a) = member(members, "agent") {
        node.bindings.bound().agent =
            read_agent(reader, a, &base.at("agent")).map_or(AgentDecl::Invalid, AgentDecl::Present);
    }
    if let Some(p) = member(members, "position") {
        node.position = read_position(reader, p, &base.at("position"));
    }
    if let Some(m) = member(members, "members") {
        more.members = reader.strings(m, base.key("members"), "`members`").unwrap_or_default();
    }
    if let Some(s) = member(members, "suppress") {
        more.suppress = reader.strings(s, base.key("suppress"), "`suppress`").unwrap_or_default();
    }
    if more != MoreMeta::default() {
        node.meta.more = Some(Box::new(more));
    }
    for finding in &mut reader.findings[first_finding..] {
        finding.at = rebase(&finding.at, &base, Anchor::node(&id, UNCOUNTED));
    }
    Some(node)
}

/// The canonical text of a config object, or `None` if a number in it has no canonical form.
fn canonical_config(tree: &JsonTree, idx: NodeIdx) -> Option<Config> {
    let mut text = String::with_capacity(tree.span(idx).len());
    little_hashing::write_canonical(TreeValue { tree, idx }, &mut text).ok()?;
    Some(Config::from_canonical(text))
}

/// A config as a `serde_json` value, for the checks that validate or read it.
pub fn config_value(config: &Config) -> serde_json::Value {
    // serde_json recurses, but stops at 128 levels; deeper configs (the parser allows
    // 512) take the parser's iterative path.
    serde_json::from_str(config.text()).unwrap_or_else(|_| {
        let tree = crate::json::parse(config.text()).tree.expect("canonical JSON parses");
        tree.to_serde(tree.root())
    })
}

/// The elements of one array read, with their findings, before their ids are
/// counted: what [`read_array`] builds from a tree or an outline, and what
/// [`DraftElements`] builds while the outline is parsed (and patches after an edit).
#[derive(Clone, Debug)]
struct ArrayRead<T> {
    /// The array's node in the tree (a duplicate root key's array is another node).
    array: NodeIdx,
    /// The index in the array of the first element seen: 0, but for a run of elements
    /// read apart from those before it ([`ArrayRead::append`]).
    first: u32,
    /// The elements read, in order; an element that could not be read has none.
    read: Vec<T>,
    /// The elements that could not be read, ascending.
    unread: Vec<u32>,
    /// Per element seen, the end of its findings in `findings` (each begins where the
    /// last ended).
    ends: Vec<u32>,
    findings: Vec<Finding>,
    /// Numbers out of the range of doubles inside elements read on their own, each with
    /// its element, in order.
    numbers: Vec<(u32, Finding)>,
    /// Per element read, its [`Stamp`].
    stamps: Vec<Stamp>,
    /// The elements that are unknown (they lie on a recovery's damage), ascending.
    unknown: Vec<u32>,
}

/// Says which read an element read is: every array read whole, and every element read
/// again after an edit, takes a number no read took before. So an element whose stamp
/// is as it was is the value it was, and the passes skip nodes whose stamps all are.
pub type Stamp = u64;

/// A stamp no read took before.
pub fn fresh_stamp() -> Stamp {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// One array's elements read and counted: the elements, with their stamps.
pub(crate) struct ArrayFinished<T> {
    pub read: Vec<T>,
    pub stamps: Vec<Stamp>,
    /// Some element is unknown.
    pub unknown: bool,
}

/// How one element is read: from a tree, at a node, as element `index`.
type ReadElement<T> = fn(&mut Reader<'_>, NodeIdx, usize) -> Option<T>;

impl<T> ArrayRead<T> {
    fn new(array: NodeIdx) -> Self {
        ArrayRead::starting_at(array, 0)
    }

    /// An array read from its element `first` on.
    fn starting_at(array: NodeIdx, first: usize) -> Self {
        ArrayRead {
            array,
            first: first as u32,
            read: Vec::new(),
            unread: Vec::new(),
            ends: Vec::new(),
            findings: Vec::new(),
            numbers: Vec::new(),
            stamps: Vec::new(),
            unknown: Vec::new(),
        }
    }

    /// Counts the next element as unknown: seen, not read, no findings.
    fn add_unknown(&mut self) {
        let index = self.next_index() as u32;
        self.unread.push(index);
        self.unknown.push(index);
        self.ends.push(self.findings.len() as u32);
    }

    /// Makes element `index` unknown (an edit left it unreadable): no longer read, no
    /// findings of its own.
    fn replace_unknown(&mut self, index: usize) {
        self.set(index, None, Vec::new());
        let at = self.unknown.partition_point(|&u| (u as usize) < index);
        if self.unknown.get(at) != Some(&(index as u32)) {
            self.unknown.insert(at, index as u32);
        }
        let (from, to) = (
            self.numbers.partition_point(|(i, _)| (*i as usize) < index),
            self.numbers.partition_point(|(i, _)| (*i as usize) <= index),
        );
        self.numbers.drain(from..to);
    }

    /// How many elements were seen.
    fn seen(&self) -> usize {
        self.ends.len()
    }

    /// The index in the array of the next element.
    fn next_index(&self) -> usize {
        self.first as usize + self.seen()
    }

    /// Adds the elements of `run`, the run of this array that follows the elements seen
    /// (read apart, on another thread): what reading them here would have given, all
    /// read elements under one stamp. `false`, and nothing added, when `run` is not that.
    fn append(&mut self, run: ArrayRead<T>) -> bool {
        if run.array != self.array || run.first as usize != self.next_index() {
            return false;
        }
        let offset = self.findings.len() as u32;
        self.ends.extend(run.ends.iter().map(|end| end + offset));
        self.findings.extend(run.findings);
        self.read.extend(run.read);
        self.unread.extend(run.unread);
        self.numbers.extend(run.numbers);
        self.unknown.extend(run.unknown);
        match self.stamps.first() {
            Some(&stamp) => self.stamps.extend(std::iter::repeat_n(stamp, run.stamps.len())),
            None => self.stamps = run.stamps,
        }
        true
    }

    /// Reads the next element of the array `key`, at `node` of `tree`. `elided`: the
    /// outline does not keep the element, so the document's own number check will not see it.
    fn add(&mut self, tree: &JsonTree, node: NodeIdx, key: &str, elided: bool, read: ReadElement<T>) {
        let index = self.next_index();
        let mut reader = Reader { tree, codes: DRAFT_CODES, findings: std::mem::take(&mut self.findings) };
        match read(&mut reader, node, index) {
            Some(element) => {
                // One stamp for the whole array read at once.
                let stamp = self.stamps.first().copied().unwrap_or_else(fresh_stamp);
                self.read.push(element);
                self.stamps.push(stamp);
            }
            None => self.unread.push(index as u32),
        }
        self.findings = reader.findings;
        self.ends.push(self.findings.len() as u32);
        if elided {
            self.numbers.extend(element_numbers(tree, node, key, index).map(|f| (index as u32, f)));
        }
    }

    /// Reads element `index` again, now at `node` of `tree` (an edit changed only it).
    fn replace(&mut self, index: usize, tree: &JsonTree, node: NodeIdx, key: &str, read: ReadElement<T>) {
        let mut reader = Reader { tree, codes: DRAFT_CODES, findings: Vec::new() };
        let element = read(&mut reader, node, index);
        self.set(index, element, reader.findings);
        if let Ok(at) = self.unknown.binary_search(&(index as u32)) {
            self.unknown.remove(at);
        }
        let (from, to) = (
            self.numbers.partition_point(|(i, _)| (*i as usize) < index),
            self.numbers.partition_point(|(i, _)| (*i as usize) <= index),
        );
        let numbers: Vec<_> = element_numbers(tree, node, key, index).map(|f| (index as u32, f)).collect();
        self.numbers.splice(from..to, numbers);
    }

    /// Element `index` is now `element` (`None`: not read), with `findings`.
    fn set(&mut self, index: usize, element: Option<T>, findings: Vec<Finding>) {
        let (start, end) = (if index == 0 { 0 } else { self.ends[index - 1] }, self.ends[index]);
        let grown = findings.len() as i64 - i64::from(end - start);
        self.findings.splice(start as usize..end as usize, findings);
        for end in &mut self.ends[index..] {
            *end = (i64::from(*end) + grown) as u32;
        }
        let unread_at = self.unread.partition_point(|&u| (u as usize) < index);
        let at = index - unread_at;
        let was_read = self.unread.get(unread_at) != Some(&(index as u32));
        match (was_read, element) {
            (true, Some(element)) => {
                self.read[at] = element;
                self.stamps[at] = fresh_stamp();
            }
            (true, None) => {
                self.read.remove(at);
                self.unread.insert(unread_at, index as u32);
                // Every element after it moved: none is where it was read (those before
                // it are).
                self.stamps.remove(at);
                self.stamps[at..].fill(fresh_stamp());
            }
            (false, Some(element)) => {
                self.read.insert(at, element);
                self.unread.remove(unread_at);
                self.stamps.insert(at, 0);
                self.stamps[at..].fill(fresh_stamp());
            }
            (false, None) => {}
        }
    }

    /// Counts the occurrences of the ids (all at once: see `little_ir::ids`), gives each
    /// element and its findings its count, and hands the findings to `out`.
    fn finish(
        mut self,
        id: impl Fn(&T) -> &str,
        set_nth: impl Fn(&mut T, u32),
        out: &mut Vec<Finding>,
    ) -> ArrayFinished<T> {
        let counts = occurrences(self.read.len(), |at| id(&self.read[at as usize]));
        let (mut unread, mut counts) = (self.unread.iter().peekable(), counts.into_iter());
        let (mut at, mut start) = (0, 0);
        for (index, &end) in self.ends.iter().enumerate() {
            if unread.next_if_eq(&&(index as u32)).is_none() {
                let nth = counts.next().expect("a count for each element read");
                set_nth(&mut self.read[at], nth);
                patch_nth(&mut self.findings[start as usize..end as usize], nth);
                at += 1;
            }
            start = end;
        }
        out.append(&mut self.findings);
        out.extend(self.numbers.into_iter().map(|(_, finding)| finding));
        ArrayFinished { read: self.read, stamps: self.stamps, unknown: !self.unknown.is_empty() }
    }
}

/// The numbers out of range inside element `index` of the array `key`, read on its own.
fn element_numbers(tree: &JsonTree, node: NodeIdx, key: &str, index: usize) -> std::vec::IntoIter<Finding> {
    let mut numbers = Vec::new();
    out_of_range_numbers(tree, node, Anchor::element(key, index), &mut numbers);
    numbers.into_iter()
}

/// A draft's nodes and edges, read while its outline is parsed
/// ([`crate::json::parse_outline_visiting`]), each element while the parser holds it
/// whole: the lowering then need not parse them again ([`lower_draft_from`]).
#[derive(Clone, Debug, Default)]
pub struct DraftElements {
    nodes: Option<ArrayRead<NodeDecl>>,
    edges: Option<ArrayRead<EdgeEntry>>,
    /// What a recovery stands for, sorted: an element that overlaps it is unknown.
    damaged: Vec<Range<u32>>,
}

impl DraftElements {
    /// The elements of a recovered draft, whose damage is `damaged` (`crate::recover`).
    pub fn with_damage(mut self, damaged: Vec<Range<u32>>) -> DraftElements {
        self.damaged = damaged;
        self
    }

    /// Reads one element the outline parse shows.
    pub fn visit(&mut self, seen: ElementSeen<'_>) {
        fn add<T>(slot: &mut Option<ArrayRead<T>>, seen: ElementSeen<'_>, unknown: bool, read: ReadElement<T>) {
            // Of two arrays under one root key, the tree keeps the first.
            let state = slot.get_or_insert_with(|| ArrayRead::starting_at(seen.array_node, seen.index));
            if state.array == seen.array_node {
                match unknown {
                    true => state.add_unknown(),
                    false => state.add(seen.tree, seen.node, seen.array, true, read),
                }
            }
        }
        let unknown = on_damage(&self.damaged, seen.tree, seen.node);
        match seen.array {
            "nodes" => add(&mut self.nodes, seen, unknown, read_node),
            "edges" => add(&mut self.edges, seen, unknown, read_edge),
            _ => {}
        }
    }

    /// No elements read yet, with room for `nodes.1` elements of the array `nodes.0` and
    /// `edges.1` of `edges.0`: the arrays whose runs are to be appended.
    pub(crate) fn reserved(nodes: Option<(NodeIdx, usize)>, edges: Option<(NodeIdx, usize)>) -> DraftElements {
        fn reserved<T>((array, count): (NodeIdx, usize)) -> ArrayRead<T> {
            let mut state = ArrayRead::new(array);
            state.read.reserve_exact(count);
            state.stamps.reserve_exact(count);
            state.ends.reserve_exact(count);
            state
        }
        DraftElements { nodes: nodes.map(reserved), edges: edges.map(reserved), damaged: Vec::new() }
    }

    /// Adds the elements of `run`, read apart from those read here (another run of the
    /// outline's elements, on another thread), as if they had been read here after them.
    /// `false` when `run` does not continue what was read here: `self` is then partly
    /// appended to and no longer the elements of any outline.
    pub(crate) fn append(&mut self, run: DraftElements) -> bool {
        fn append<T>(slot: &mut Option<ArrayRead<T>>, run: Option<ArrayRead<T>>) -> bool {
            match (slot, run) {
                (_, None) => true,
                (Some(state), Some(run)) => state.append(run),
                (slot @ None, Some(run)) => {
                    let starts = run.first == 0;
                    *slot = Some(run);
                    starts
                }
            }
        }
        self.damaged.is_empty()
            && run.damaged.is_empty()
            && append(&mut self.nodes, run.nodes)
            && append(&mut self.edges, run.edges)
    }

    /// Makes element `index` of the array `key` (at `array` in the outline) unknown: an
    /// edit left it unreadable, and a recovery stands for it. `false`, and nothing changed,
    /// when these are not that array's elements.
    pub fn replace_unknown(&mut self, key: &str, array: NodeIdx, index: usize) -> bool {
        fn unknown<T>(state: Option<&mut ArrayRead<T>>, array: NodeIdx, index: usize) -> bool {
            match state {
                Some(state) if state.array == array && index < state.seen() => {
                    state.replace_unknown(index);
                    true
                }
                _ => false,
            }
        }
        match key {
            "nodes" => unknown(self.nodes.as_mut(), array, index),
            "edges" => unknown(self.edges.as_mut(), array, index),
            _ => false,
        }
    }

    /// Reads element `index` of the array `key` (at `array` in the outline) again, now the
    /// root of `tree` (an edit changed only it). `false`, and nothing changed, when these
    /// are not that array's elements (of two arrays under one key, they are the first's).
    pub fn replace(&mut self, key: &str, array: NodeIdx, index: usize, tree: &JsonTree) -> bool {
        fn replace<T>(
            state: Option<&mut ArrayRead<T>>,
            array: NodeIdx,
            index: usize,
            tree: &JsonTree,
            key: &str,
            read: ReadElement<T>,
        ) -> bool {
            match state {
                Some(state) if state.array == array && index < state.seen() => {
                    state.replace(index, tree, tree.root(), key, read);
                    true
                }
                _ => false,
            }
        }
        match key {
            "nodes" => replace(self.nodes.as_mut(), array, index, tree, key, read_node),
            "edges" => replace(self.edges.as_mut(), array, index, tree, key, read_edge),
            _ => false,
        }
    }
}

/// Reads the elements of `nodes` or `edges` (at `array` in the tree), unless `pre` has
/// read them already, and counts their ids. An elided element is parsed on its own.
#[allow(clippy::too_many_arguments)]
fn read_array<T>(
    reader: &mut Reader<'_>,
    elements: &mut ElementParser<'_>,
    damaged: &[Range<u32>],
    key: &str,
    array: NodeIdx,
    items: &[NodeIdx],
    pre: Option<ArrayRead<T>>,
    read: ReadElement<T>,
    id: impl Fn(&T) -> &str,
    set_nth: impl Fn(&mut T, u32),
) -> ArrayFinished<T> {
    let state = match pre.filter(|pre| pre.array == array && pre.seen() == items.len()) {
        Some(pre) => pre,
        None => {
            let mut state = ArrayRead::new(array);
            state.read.reserve_exact(items.len());
            for &item in items {
                if on_damage(damaged, reader.tree, item) {
                    state.add_unknown();
                } else if reader.tree.value(item) == JsonValue::Elided {
                    let tree = elements.parse(reader.tree.span(item));
                    state.add(tree, tree.root(), key, true, read);
                } else {
                    state.add(reader.tree, item, key, false, read);
                }
            }
            state
        }
    };
    state.finish(id, set_nth, &mut reader.findings)
}

/// Whether an element overlaps what a recovery stands for, or is not an object and
/// touches it: the recovery can make an element of what the edit typed and a closer that
/// followed (a `[` typed after a comma it dropped, closed by the array's own `]`), which no
/// repair lies inside; an element of the intact draft is an object.
fn on_damage(damaged: &[Range<u32>], tree: &JsonTree, item: NodeIdx) -> bool {
    let span = tree.span(item);
    let object = matches!(tree.value(item), JsonValue::Object(_) | JsonValue::Elided);
    damaged
        .iter()
        .any(|d| (span.start < d.end && d.start < span.end) || (!object && span.start <= d.end && d.start <= span.end))
}

/// Sets the occurrence count of findings rebased onto an id before it was known.
fn patch_nth(findings: &mut [Finding], occurrence: u32) {
    for finding in findings {
        if let Owner::Node { nth, .. } | Owner::Edge { nth, .. } = &mut finding.at.owner
            && *nth == UNCOUNTED
        {
            *nth = occurrence;
        }
    }
}

/// The occurrence count of an owner whose count is not known yet.
const UNCOUNTED: u32 = u32::MAX;

/// Replaces the prefix `from` of `anchor` by `to`.
fn rebase(anchor: &Anchor, from: &Anchor, to: Anchor) -> Anchor {
    let mut pointer = to.pointer;
    pointer.extend(anchor.pointer[from.pointer.len()..].iter().cloned());
    Anchor { owner: to.owner, pointer }
}

fn read_contracts(reader: &mut Reader<'_>, idx: NodeIdx, at: &Anchor) -> ContractsDecl {
    // Shape faults inside the envelope are `contract.invalid_envelope`; unknown keys stay
    // `draft.unknown_field`.
    let codes = ShapeCodes { invalid_shape: Code::ContractInvalidEnvelope, unknown_field: reader.codes.unknown_field };
    let mut sub = Reader::new(reader.tree, codes);
    let contracts = read_envelope(&mut sub, idx, at);
    let invalid = sub.findings.iter().any(|f| f.diagnostic.code == Code::ContractInvalidEnvelope);
    reader.findings.append(&mut sub.findings);
    match contracts {
        Some(c) if !invalid => ContractsDecl::Valid(Box::new(c)),
        _ => ContractsDecl::Invalid,
    }
}

fn read_envelope(reader: &mut Reader<'_>, idx: NodeIdx, at: &Anchor) -> Option<Contracts> {
    let members = reader.object(idx, at, "`contracts`")?;
    reader.unknown_keys(members, at, "the contract envelope", &["version", "inputs", "outputs", "artifacts"]);
    match member(members, "version") {
        None => reader.invalid(at, format!("the contract envelope lacks `version` (`{CONTRACTS_VERSION}`)")),
        Some(v) => {
            if let Some(version) = reader.string(v, at.key("version"), "`version`")
                && version != CONTRACTS_VERSION
            {
                reader.invalid(
                    at.key("version"),
                    format!("unsupported contract version `{version}`: expected `{CONTRACTS_VERSION}`"),
                );
            }
        }
    }
    let mut contracts = Contracts::default();
    for (key, list) in [("inputs", &mut contracts.inputs), ("outputs", &mut contracts.outputs)] {
        let Some(items_idx) = member(members, key) else { continue };
        let Some(items) = reader.array(items_idx, at.key(key), format_args!("`{key}`")) else { continue };
        for (i, &item) in items.iter().enumerate() {
            let item_at = at.at(key).at(i);
            let Some(fields) = reader.object(item, &item_at, "a contract port") else { continue };
            reader.unknown_keys(fields, &item_at, "a contract port", &["port", "types", "required"]);
            let port = match member(fields, "port") {
                Some(p) => reader.name(p, item_at.key("port"), "`port`").map(str::to_string),
                None => {
                    reader.missing(&item_at, "a contract port", "port");
                    None
                }
            };
            let types = match member(fields, "types") {
                Some(t) => reader.strings(t, item_at.key("types"), "`types`"),
                None => {
                    reader.missing(&item_at, "a contract port", "types");
                    None
                }
            };
            let required = member(fields, "required")
                .and_then(|r| reader.boolean(r, item_at.key("required"), "`required`"))
                .unwrap_or(false);
            if let (Some(port), Some(types)) = (port, types) {
                if list.iter().any(|p: &ContractPort| p.port == port) {
                    reader.invalid(item_at.key("port"), format!("port `{port}` is declared twice in `{key}`"));
                }
                list.push(ContractPort { port, types, required });
            }
        }
    }
    if let Some(items_idx) = member(members, "artifacts")
        && let Some(items) = reader.array(items_idx, at.key("artifacts"), "`artifacts`")
    {
        for (i, &item) in items.iter().enumerate() {
            let item_at = at.at("artifacts").at(i);
            let Some(fields) = reader.object(item, &item_at, "an artifact") else { continue };
            reader.unknown_keys(fields, &item_at, "an artifact", &["id", "port", "types"]);
            let field = |reader: &mut Reader<'_>, key: &str| match member(fields, key) {
                Some(v) => reader.name(v, item_at.key(key), format_args!("`{key}`")).map(str::to_string),
                None => {
                    reader.missing(&item_at, "an artifact", key);
                    None
                }
            };
            let id = field(reader, "id");
            let port = field(reader, "port");
            let types = member(fields, "types").and_then(|t| reader.strings(t, item_at.key("types"), "`types`"));
            if let (Some(id), Some(port)) = (id, port) {
                if !contracts.outputs.iter().any(|o| o.port == port) {
                    reader.invalid(
                        item_at.key("port"),
                        format!("artifact `{id}` names port `{port}`, which the envelope's `outputs` do not declare"),
                    );
                }
                contracts.artifacts.push(Artifact { id, port, types: types.unwrap_or_default() });
            }
        }
    }
    Some(contracts)
}

fn read_package(reader: &mut Reader<'_>, idx: NodeIdx, at: &Anchor) -> Option<PackageBinding> {
    let fields = reader.object(idx, at, "a package binding")?;
    reader.unknown_keys(fields, at, "a package binding", &["name", "version", "digest"]);
    // A missing or mistyped part is the package pass's `package.malformed_binding`,
    // not a draft shape error: keep what can be read.
    let text = |key: &str| member(fields, key).and_then(|v| reader.tree.value(v).as_str()).map(str::to_string);
    Some(PackageBinding { name: text("name"), version: text("version"), digest: text("digest") })
}

fn read_agent(reader: &mut Reader<'_>, idx: NodeIdx, at: &Anchor) -> Option<AgentRef> {
    let fields = reader.object(idx, at, "`agent`")?;
    reader.unknown_keys(fields, at, "`agent`", &["agentId", "revision"]);
    let agent_id = match member(fields, "agentId") {
        Some(v) => reader.name(v, at.key("agentId"), "`agentId`"),
        None => {
            reader.missing(at, "`agent`", "agentId");
            None
        }
    };
    let revision = match member(fields, "revision") {
        Some(v) => match reader.integer(v, at.key("revision"), "`revision`") {
            Some(n) if n >= 0 => Some(n),
            Some(n) => {
                reader.invalid(at.key("revision"), format!("an agent's `revision` must not be negative, found {n}"));
                None
            }
            None => None,
        },
        None => {
            reader.missing(at, "`agent`", "revision");
            None
        }
    };
    Some(AgentRef { agent_id: agent_id?.to_string(), revision: revision? as u64 })
}

fn read_position(reader: &mut Reader<'_>, idx: NodeIdx, at: &Anchor) -> Option<Position> {
    let fields = reader.object(idx, at, "`position`")?;
    reader.unknown_keys(fields, at, "`position`", &["x", "y"]);
    let mut coordinate = |key: &str| match member(fields, key) {
        Some(v) => reader.number(v, at.key(key), format_args!("`{key}`")),
        None => {
            reader.missing(at, "`position`", key);
            None
        }
    };
    let x = coordinate("x");
    let y = coordinate("y");
    Some(Position { x: x?, y: y? })
}

/// How findings name an edge; written only when a finding needs it.
#[derive(Clone, Copy)]
struct EdgeName<'a>(&'a str);

impl std::fmt::Display for EdgeName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "edge `{}`", self.0)
    }
}

fn read_edge(reader: &mut Reader<'_>, idx: NodeIdx, index: usize) -> Option<EdgeEntry> {
    let base = Anchor::element("edges", index);
    let members = reader.object(idx, &base, "an edge")?;
    let Some(id_idx) = member(members, "id") else {
        reader.missing(&base, "this edge", "id");
        return None;
    };
    let id = Name::from(reader.name(id_idx, base.key("id"), "an edge's `id`")?);
    let first_finding = reader.findings.len();
    let what = EdgeName(&id);
    reader.unknown_keys(members, &base, what, EDGE_KEYS);
    let endpoint = |reader: &mut Reader<'_>, key: &str| -> Option<Endpoint> {
        let at = base.at(key);
        let Some(v) = member(members, key) else {
            reader.missing(&base, what, key);
            return None;
        };
        let fields = reader.object(v, &at, format_args!("`{key}`"))?;
        reader.unknown_keys(fields, &at, format_args!("`{key}` of {what}"), &["node", "port"]);
        let node = match member(fields, "node") {
            Some(n) => reader.name(n, at.key("node"), "`node`").map(Name::from),
            None => {
                reader.missing(&at, format_args!("`{key}` of {what}"), "node");
                None
            }
        };
        let port = match member(fields, "port") {
            Some(p) => Some(Name::from(reader.name(p, at.key("port"), "`port`")?)),
            None => None,
        };
        Some(Endpoint { node: node?, port })
    };
    let from = endpoint(reader, "from");
    let to = endpoint(reader, "to");
    let mut invalid = false;
    let kind = match member(members, "kind") {
        None => EdgeKind::Forward,
        Some(k) => match reader.string(k, base.key("kind"), "`kind`") {
            Some(name) => EdgeKind::parse(name).unwrap_or_else(|| {
                reader.invalid(
                    base.key("kind"),
                    format!("unknown edge kind `{name}`: expected `forward`, `branch` or `retry`"),
                );
                invalid = true;
                EdgeKind::Forward
            }),
            None => {
                invalid = true;
                EdgeKind::Forward
            }
        },
    };
    let mapping = member(members, "mapping").and_then(|m| {
        let at = base.at("mapping");
        let fields = reader.object(m, &at, "`mapping`")?;
        reader.unknown_keys(fields, &at, "`mapping`", &["output", "input", "artifacts"]);
        let output =
            member(fields, "output").and_then(|v| reader.name(v, at.key("output"), "`output`")).map(str::to_string);
        let input =
            member(fields, "input").and_then(|v| reader.name(v, at.key("input"), "`input`")).map(str::to_string);
        let artifacts = member(fields, "artifacts")
            .and_then(|v| reader.strings(v, at.key("artifacts"), "`artifacts`"))
            .unwrap_or_default();
        Some(Mapping { output, input, artifacts })
    });
    let branch_label = member(members, "branch").and_then(|b| {
        let at = base.at("branch");
        let fields = reader.object(b, &at, "`branch`")?;
        reader.unknown_keys(fields, &at, "`branch`", &["label"]);
        member(fields, "label").and_then(|l| reader.name(l, at.key("label"), "`label`")).map(str::to_string)
    });
    let retry = member(members, "retry").and_then(|r| {
        let at = base.at("retry");
        let fields = reader.object(r, &at, "`retry`")?;
        reader.unknown_keys(fields, &at, "`retry`", &["maxAttempts", "backoffMs"]);
        let max_attempts =
            member(fields, "maxAttempts").and_then(|v| reader.integer(v, at.key("maxAttempts"), "`maxAttempts`"));
        let backoff_ms =
            member(fields, "backoffMs").and_then(|v| reader.integer(v, at.key("backoffMs"), "`backoffMs`"));
        Some(RetrySettings { max_attempts, backoff_ms })
    });
    for finding in &mut reader.findings[first_finding..] {
        finding.at = rebase(&finding.at, &base, Anchor::edge(&id, UNCOUNTED));
    }
    Some(EdgeEntry {
        decl: EdgeDecl { id, from, to, kind, mapping: mapping.map(Box::new), branch_label, retry: retry.map(Box::new) },
        nth: 0,
        invalid,
    })
}

#[cfg(test)]
mod config_text {
    use super::*;

    fn config_of(text: &str) -> Option<Config> {
        let tree = crate::json::parse(text).tree.expect("JSON");
        canonical_config(&tree, tree.root())
    }

    #[test]
    fn a_config_is_kept_as_canonical_text_and_read_back_as_the_same_value() {
        let config = config_of(r#"{ "b": [1.50e+1, "x\u0041"], "a": {"z": null, "y": true} }"#).unwrap();
        assert_eq!(config.text(), r#"{"a":{"y":true,"z":null},"b":[15,"xA"]}"#);
        assert_eq!(config_value(&config), serde_json::json!({"a": {"y": true, "z": null}, "b": [15, "xA"]}));
    }

    #[test]
    fn a_config_deeper_than_serde_json_reads_is_read_without_recursion_limits() {
        // 400 levels: beyond serde_json (128), within the parser (512).
        let depth = 200;
        let text = format!("{}1{}", "{\"k\":[".repeat(depth), "]}".repeat(depth));
        let config = config_of(&text).unwrap();
        let mut value = &config_value(&config);
        for _ in 0..depth {
            value = &value["k"][0];
        }
        assert_eq!(value, &serde_json::json!(1));
    }

    #[test]
    fn a_number_without_a_canonical_form_leaves_the_config_unreadable() {
        assert_eq!(config_of(r#"{"limit": 1e400}"#), None);
    }
}

#[cfg(test)]
mod visit_tests {
    use super::*;
    use crate::json::parse_outline_visiting;

    /// The elements read during the outline parse are the ones the lowering takes: the
    /// array's node and count match the outline's, so nothing is read twice.
    #[test]
    fn the_outline_parse_reads_each_element_once() {
        let text = r#"{"format":"workflow-draft/v1","nodes":[{"id":"a"},{"id":"b"},7],"nodes":[{"id":"z"}],"edges":[{"id":"e"}]}"#;
        let mut elements = DraftElements::default();
        let outline = parse_outline_visiting(text.into(), &["nodes", "edges"], &mut |seen| elements.visit(seen));
        let tree = outline.tree.unwrap();
        let array_of = |key| tree.get(tree.root(), key).unwrap().value;
        let nodes = elements.nodes.as_ref().unwrap();
        assert_eq!((nodes.array, nodes.seen(), nodes.read.len()), (array_of("nodes"), 3, 2));
        let edges = elements.edges.as_ref().unwrap();
        assert_eq!((edges.array, edges.seen()), (array_of("edges"), 1));
        let lowered = lower_draft_from(&tree, elements);
        assert_eq!(lowered.nodes.iter().map(|n| n.id.as_str()).collect::<Vec<_>>(), ["a", "b"]);
    }
}

#[cfg(test)]
impl DraftElements {
    /// These elements as text to compare two reads by, each stamp written as whether it is
    /// its array's first (stamps are fresh numbers: two reads never share one).
    pub(crate) fn described(&self) -> String {
        fn unstamped<T: Clone>(state: &Option<ArrayRead<T>>) -> Option<ArrayRead<T>> {
            let mut state = state.clone()?;
            let first = state.stamps.first().copied();
            state.stamps.iter_mut().for_each(|stamp| *stamp = u64::from(Some(*stamp) != first));
            Some(state)
        }
        let copy = DraftElements {
            nodes: unstamped(&self.nodes),
            edges: unstamped(&self.edges),
            damaged: self.damaged.clone(),
        };
        format!("{copy:#?}")
    }
}
