//! What the editor features read from one parsed document: the element under the cursor,
//! the nodes, edges and steps, and the fixes that did-you-mean help proposes. Everything
//! here works on the JSON tree (byte offsets); the server converts to LSP positions.

use std::ops::Range;

use little_diagnostics::Diagnostic;
use little_frontend::json::{JsonTree, JsonValue, NodeIdx};
use little_ir::catalog::{Catalog, Family, Port};

/// One step from a container to the element below it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part<'t> {
    Key(&'t str),
    Index(usize),
}

/// The elements that contain an offset, outermost first.
pub struct Cursor<'t> {
    pub parts: Vec<Part<'t>>,
    /// `nodes[i]` is the element reached by `parts[..i]` (so `nodes[0]` is the root).
    pub nodes: Vec<NodeIdx>,
    /// The cursor is on the key of the last member, not on its value.
    pub on_key: bool,
}

impl Cursor<'_> {
    pub fn target(&self) -> NodeIdx {
        *self.nodes.last().expect("the root is always there")
    }
}

fn contains(span: &Range<u32>, offset: u32) -> bool {
    span.start <= offset && offset < span.end
}

/// The chain of elements around `offset` (a loop, not recursion: documents nest deep).
pub fn cursor_at(tree: &JsonTree, offset: u32) -> Cursor<'_> {
    let mut cursor = Cursor { parts: Vec::new(), nodes: vec![tree.root()], on_key: false };
    loop {
        let current = cursor.target();
        let next = match tree.value(current) {
            JsonValue::Object(members) => members.iter().find_map(|m| {
                if contains(&m.key_span, offset) {
                    Some((Part::Key(m.key), m.value, true))
                } else {
                    contains(&tree.span(m.value), offset).then_some((Part::Key(m.key), m.value, false))
                }
            }),
            JsonValue::Array(items) => items
                .iter()
                .enumerate()
                .find(|&(_, &item)| contains(&tree.span(item), offset))
                .map(|(i, &item)| (Part::Index(i), item, false)),
            _ => None,
        };
        let Some((part, node, on_key)) = next else { return cursor };
        cursor.parts.push(part);
        cursor.nodes.push(node);
        if on_key {
            cursor.on_key = true;
            return cursor;
        }
    }
}

/// The string at `node`, if it is one.
pub fn string(tree: &JsonTree, node: NodeIdx) -> Option<&str> {
    tree.value(node).as_str()
}

/// A member's string value.
pub fn member_string<'t>(tree: &'t JsonTree, object: NodeIdx, key: &str) -> Option<&'t str> {
    tree.get(object, key).and_then(|m| string(tree, m.value))
}

/// The elements of a root array such as `$.nodes` or `$.steps`.
pub fn elements<'t>(tree: &'t JsonTree, key: &str) -> &'t [NodeIdx] {
    tree.get(tree.root(), key).and_then(|m| tree.value(m.value).as_array()).unwrap_or(&[])
}

/// The first element of `$.<key>` whose `id` is `id`: the element and its `id` value.
pub fn find_by_id(tree: &JsonTree, key: &str, id: &str) -> Option<(NodeIdx, NodeIdx)> {
    elements(tree, key).iter().find_map(|&element| {
        let member = tree.get(element, "id")?;
        (string(tree, member.value) == Some(id)).then_some((element, member.value))
    })
}

/// The distinct ids of `$.<key>`, in document order.
pub fn ids<'t>(tree: &'t JsonTree, key: &str) -> Vec<&'t str> {
    let mut ids: Vec<&str> = Vec::new();
    for &element in elements(tree, key) {
        if let Some(id) = member_string(tree, element, "id")
            && !ids.contains(&id)
        {
            ids.push(id);
        }
    }
    ids
}

/// What the cursor stands on, for the features that care.
#[derive(Debug, PartialEq, Eq)]
pub enum Spot<'t> {
    /// `$.nodes[i].family`.
    Family { node: NodeIdx, name: &'t str },
    /// `$.nodes[i].id`.
    NodeId { node: NodeIdx },
    /// `$.edges[i].from.node` or `to.node`.
    NodeRef { id: &'t str },
    /// `$.edges[i].from.port` (output) or `to.port` (input).
    Port { edge: NodeIdx, output: bool },
    /// `$.edges[i].branch.label`.
    BranchLabel { edge: NodeIdx },
    /// `$.steps[i].needs[j]` (LWIR).
    Need { id: &'t str },
}

/// The spot at the cursor, when the cursor is on a string value there.
pub fn spot<'t>(tree: &'t JsonTree, cursor: &Cursor<'t>) -> Option<Spot<'t>> {
    if cursor.on_key {
        return None;
    }
    let text = string(tree, cursor.target())?;
    let nodes = &cursor.nodes;
    use Part::{Index, Key};
    Some(match cursor.parts.as_slice() {
        [Key("nodes"), Index(_), Key("family")] => Spot::Family { node: nodes[2], name: text },
        [Key("nodes"), Index(_), Key("id")] => Spot::NodeId { node: nodes[2] },
        [Key("edges"), Index(_), Key("from" | "to"), Key("node")] => Spot::NodeRef { id: text },
        [Key("edges"), Index(_), Key(end @ ("from" | "to")), Key("port")] => {
            Spot::Port { edge: nodes[2], output: *end == "from" }
        }
        [Key("edges"), Index(_), Key("branch"), Key("label")] => Spot::BranchLabel { edge: nodes[2] },
        [Key("steps"), Index(_), Key("needs"), Index(_)] => Spot::Need { id: text },
        _ => return None,
    })
}

/// The family of the node whose id an edge end names.
pub fn family_of_end<'c>(tree: &JsonTree, catalog: &'c Catalog, edge: NodeIdx, end: &str) -> Option<&'c Family> {
    let from = tree.get(edge, end)?.value;
    let id = member_string(tree, from, "node")?;
    let (node, _) = find_by_id(tree, "nodes", id)?;
    catalog.family(member_string(tree, node, "family")?)
}

/// The branch labels a router node declares in `config.branches[].label`.
pub fn branch_labels(tree: &JsonTree, node: NodeIdx) -> Vec<&str> {
    let Some(config) = tree.get(node, "config") else { return Vec::new() };
    let Some(branches) = tree.get(config.value, "branches").and_then(|m| tree.value(m.value).as_array()) else {
        return Vec::new();
    };
    branches.iter().filter_map(|&b| member_string(tree, b, "label")).collect()
}

fn ports_markdown(title: &str, ports: &[Port]) -> String {
    if ports.is_empty() {
        return format!("{title}: none\n\n");
    }
    let mut out = format!("{title}:\n");
    for port in ports {
        let mut notes = Vec::new();
        if port.required {
            notes.push("required");
        }
        if port.multiple {
            notes.push("multiple");
        }
        let notes = if notes.is_empty() { String::new() } else { format!(" ({})", notes.join(", ")) };
        out.push_str(&format!("- `{}`: {}{notes}\n", port.name, port.types.join(" | ")));
    }
    out.push('\n');
    out
}

/// The hover text of a family: kind, semantic, ports with their types, config fields.
pub fn family_markdown(family: &Family) -> String {
    let mut out = format!("**{}**: {} node, semantic `{}`", family.id, family.kind.as_str(), family.semantic);
    if family.deprecated {
        out.push_str(" (deprecated)");
    }
    if family.visual_only {
        out.push_str(" (visual only, never executed)");
    }
    out.push_str("\n\n");
    out.push_str(&ports_markdown("Inputs", &family.inputs));
    out.push_str(&ports_markdown("Outputs", &family.outputs));
    out.push_str(&config_summary(family.config_schema.as_ref()));
    if !family.requires.is_empty() {
        out.push_str(&format!(
            "\nRequires: {}\n",
            family.requires.iter().map(|r| format!("`{r}`")).collect::<Vec<_>>().join(", ")
        ));
    }
    out
}

/// The top-level fields of a config schema: name, type, whether required.
fn config_summary(schema: Option<&serde_json::Value>) -> String {
    let Some(schema) = schema else { return "Config: any object\n".to_string() };
    let required: Vec<&str> =
        schema.get("required").and_then(|r| r.as_array()).into_iter().flatten().filter_map(|v| v.as_str()).collect();
    let Some(properties) = schema.get("properties").and_then(|p| p.as_object()).filter(|p| !p.is_empty()) else {
        return "Config: no declared fields\n".to_string();
    };
    let mut out = String::from("Config:\n");
    for (name, field) in properties {
        let kind = match field.get("type") {
            Some(serde_json::Value::String(t)) => t.clone(),
            Some(serde_json::Value::Array(types)) => {
                types.iter().filter_map(|t| t.as_str()).collect::<Vec<_>>().join(" | ")
            }
            _ if field.get("enum").is_some() => "enum".to_string(),
            _ => "any".to_string(),
        };
        let needed = if required.contains(&name.as_str()) { ", required" } else { "" };
        out.push_str(&format!("- `{name}`: {kind}{needed}\n"));
    }
    if schema.get("additionalProperties") == Some(&serde_json::Value::Bool(false)) {
        out.push_str("\nNo other fields.\n");
    }
    out
}

/// A did-you-mean fix: replace `span` (a JSON string, quotes included) with `replacement`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    pub span: Range<u32>,
    pub replacement: String,
    pub title: String,
}

/// The name a `did you mean `x`?` help proposes.
fn suggestion(help: &str) -> Option<&str> {
    let rest = help.strip_prefix("did you mean `")?;
    rest.strip_suffix("`?")
}

/// The fix of a diagnostic whose help is a did-you-mean: the faulty string (a value, or the
/// key of an unknown field) becomes the suggestion.
pub fn fix(tree: &JsonTree, diagnostic: &Diagnostic) -> Option<Fix> {
    let name = suggestion(diagnostic.help.as_deref()?)?;
    let span = diagnostic.span.clone()?;
    let unknown_field = diagnostic.code.as_str().ends_with(".unknown_field");
    let target = if unknown_field {
        // Unknown fields are anchored at the member's value: the key is what is wrong.
        member_with_value_span(tree, &span)?
    } else {
        let cursor = cursor_at(tree, span.start);
        let node = cursor.nodes.iter().rev().copied().find(|&n| tree.span(n) == span)?;
        string(tree, node)?;
        span
    };
    let replacement = serde_json::to_string(name).expect("strings serialize");
    Some(Fix { span: target, title: format!("Replace with `{name}`"), replacement })
}

/// The key span of the object member whose value spans `span`.
fn member_with_value_span(tree: &JsonTree, span: &Range<u32>) -> Option<Range<u32>> {
    let cursor = cursor_at(tree, span.start);
    for (i, &node) in cursor.nodes.iter().enumerate().skip(1) {
        if tree.span(node) == *span
            && let Part::Key(key) = cursor.parts[i - 1]
        {
            return tree.get(cursor.nodes[i - 1], key).map(|m| m.key_span.clone());
        }
    }
    None
}
