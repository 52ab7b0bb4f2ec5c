//! `little graph`: the executable topology as a picture (DOT, Mermaid, or SVG through Graphviz),
//! for the CLI and the MCP server's `graph` tool.
//!
//! The picture is the compiled topology (`compiled_topology`), drawn even when something
//! blocks: visual-only nodes and dropped edges are not in it. Nodes and transitions come
//! in topology order (sorted by id), so the same draft always gives the same text.
//!
//! Marks, from the diagnostics of the draft:
//! - a node or edge that an error names is red; the nodes and edges of a cycle's witness
//!   (docs/reference/diagnostics.md#the-cycle-witness) are red and bold; one that only a warning names is orange.
//! - a diagnostic that names an edge marks the edge (the node it also names is context);
//!   when that edge is not drawn (a dangling edge, say), the node it names is marked.
//! - what cannot be shown on the picture (an edge that was dropped, a finding about the
//!   whole draft) is listed: in DOT as the graph's label and in comments, in Mermaid as
//!   comments.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;

use little_diagnostics::{Code, Diagnostic, Severity};
use little_frontend::DocumentKind;
use little_ir::topology::{Topology, Transition};
use little_ir::{EdgeKind, NodeKind};
use little_passes::project::compiled_topology;
use little_passes::queries::document_kind;
use little_passes::{Database, SourceFile, Workspace};

use crate::CheckedFile;

/// The kinds of picture `little graph` draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Picture {
    Dot,
    Mermaid,
    /// DOT rendered by Graphviz.
    Svg,
}

/// The draft's topology as a picture, with the nodes and edges of the checked file's
/// diagnostics marked; the topology is read from the database the file was checked in
/// (`source` is the file there).
pub fn draw(
    db: &Database,
    workspace: Workspace,
    source: SourceFile,
    file: &CheckedFile<'_>,
    picture: Picture,
) -> Result<String, String> {
    let topology = compiled_topology(db, workspace, source).clone();
    draw_checked(source.path(db), topology, document_kind(db, source).as_ref(), file.diagnostics, picture)
}

/// [`draw`] of a file checked already (by the batch driver, without a database): its
/// compiled topology (`None` when it has none) and its document kind (`None` when it is
/// not JSON).
pub fn draw_checked(
    path: &str,
    topology: Option<Arc<Topology>>,
    kind: Option<&Result<DocumentKind, Box<little_frontend::anchor::Finding>>>,
    diagnostics: &[Diagnostic],
    picture: Picture,
) -> Result<String, String> {
    let scene = Scene::new(drawable(path, topology, kind, diagnostics)?, diagnostics);
    match picture {
        Picture::Dot => Ok(scene.dot()),
        Picture::Mermaid => Ok(scene.mermaid()),
        Picture::Svg => render_svg(&scene.dot()),
    }
}

/// The topology to draw, or why there is none.
fn drawable(
    path: &str,
    topology: Option<Arc<Topology>>,
    kind: Option<&Result<DocumentKind, Box<little_frontend::anchor::Finding>>>,
    diagnostics: &[Diagnostic],
) -> Result<Arc<Topology>, String> {
    if let Some(topology) = topology {
        return Ok(topology);
    }
    let first_error = || {
        diagnostics
            .iter()
            .find(|d| d.severity() == Severity::Error)
            .map(|d| format!("{} ({})", d.message, d.code.as_str()))
    };
    let reason = match kind {
        None => format!("it is not valid JSON: {}", first_error().unwrap_or_else(|| "it does not parse".into())),
        Some(Err(finding)) => finding.diagnostic.message.clone(),
        Some(Ok(DocumentKind::Lwir)) => "it is an LWIR workflow, not a draft (`workflow-draft/v1`)".into(),
        Some(Ok(kind)) if *kind != DocumentKind::Draft => {
            format!("it is a {} document, not a draft (`workflow-draft/v1`)", kind.as_str())
        }
        Some(Ok(_)) => diagnostics
            .iter()
            .find(|d| d.code == Code::RequestMissingIdentity)
            .map(|d| d.message.clone())
            .or_else(first_error)
            .unwrap_or_else(|| "the draft lacks its identity (workflowId, draftId, revision, catalogVersion)".into()),
    };
    Err(format!("`{path}` has no topology to draw: {reason}; `little check` shows every finding"))
}

/// Renders DOT text to SVG with Graphviz's `dot`.
fn render_svg(dot: &str) -> Result<String, String> {
    let spawned =
        Command::new("dot").arg("-Tsvg").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(
                "`--format svg` needs Graphviz's `dot` on PATH: install graphviz (e.g. `apt-get install graphviz`), \
                        or use `--format dot`"
                    .into(),
            );
        }
        Err(e) => return Err(format!("cannot run Graphviz's `dot`: {e}")),
    };
    // Write on a thread while this one reads, so that neither pipe fills up and blocks.
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let input = dot.as_bytes().to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut svg = Vec::new();
    let read = child.stdout.take().expect("stdout is piped").read_to_end(&mut svg);
    let status = child.wait().map_err(|e| format!("cannot run Graphviz's `dot`: {e}"))?;
    let written = writer.join().expect("the writer thread does not panic");
    let errors = errors.join().expect("the reader thread does not panic");
    if !status.success() {
        return Err(format!("Graphviz's `dot -Tsvg` failed ({status}): {}", errors.trim()));
    }
    read.map_err(|e| format!("cannot read the output of Graphviz's `dot`: {e}"))?;
    written.map_err(|e| format!("cannot write to Graphviz's `dot`: {e}"))?;
    String::from_utf8(svg).map_err(|_| "Graphviz's `dot` wrote SVG that is not UTF-8".into())
}

/// How an element is marked; the strongest mark wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Mark {
    Warning,
    Fault,
    Cycle,
}

/// The topology with the marks and notes the diagnostics put on it.
struct Scene {
    topology: Arc<Topology>,
    node_marks: Vec<Option<Mark>>,
    node_notes: Vec<Vec<String>>,
    edge_marks: Vec<Option<Mark>>,
    edge_notes: Vec<Vec<String>>,
    /// Findings that no drawn element carries: `edge e7: code: message`.
    elsewhere: Vec<String>,
}

impl Scene {
    fn new(topology: Arc<Topology>, diagnostics: &[Diagnostic]) -> Scene {
        let nodes: HashMap<&str, usize> = topology.nodes.iter().enumerate().map(|(i, n)| (n.id.as_str(), i)).collect();
        let edges: HashMap<&str, usize> =
            topology.transitions.iter().enumerate().map(|(i, t)| (t.id.as_str(), i)).collect();
        let mut scene = Scene {
            node_marks: vec![None; topology.nodes.len()],
            node_notes: vec![Vec::new(); topology.nodes.len()],
            edge_marks: vec![None; topology.transitions.len()],
            edge_notes: vec![Vec::new(); topology.transitions.len()],
            elsewhere: Vec::new(),
            topology: topology.clone(),
        };
        fn put(marks: &mut [Option<Mark>], notes: &mut [Vec<String>], at: usize, mark: Mark, note: &str) {
            marks[at] = marks[at].max(Some(mark));
            if !notes[at].iter().any(|n| n == note) {
                notes[at].push(note.to_string());
            }
        }
        for d in diagnostics {
            let mark = match d.severity() {
                Severity::Error => Mark::Fault,
                Severity::Warning => Mark::Warning,
                Severity::Info => continue,
            };
            let note = one_line(&format!("{}: {}", d.code.as_str(), d.message));
            let node = d.node_id.as_deref().and_then(|id| nodes.get(id).copied());
            match (d.edge_id.as_deref(), node) {
                (Some(id), _) if edges.contains_key(id) => {
                    put(&mut scene.edge_marks, &mut scene.edge_notes, edges[id], mark, &note);
                }
                (Some(id), node) => {
                    scene.elsewhere.push(format!("edge {id}: {note}"));
                    if let Some(at) = node {
                        put(&mut scene.node_marks, &mut scene.node_notes, at, mark, &note);
                    }
                }
                (None, Some(at)) => put(&mut scene.node_marks, &mut scene.node_notes, at, mark, &note),
                (None, None) => match &d.node_id {
                    Some(id) => scene.elsewhere.push(format!("node {id}: {note}")),
                    None => scene.elsewhere.push(note.clone()),
                },
            }
            if let Some(witness) = &d.witness {
                for &at in witness.nodes.iter().filter_map(|id| nodes.get(id.as_str())) {
                    put(&mut scene.node_marks, &mut scene.node_notes, at, Mark::Cycle, &note);
                }
                for &at in witness.edges.iter().filter_map(|id| edges.get(id.as_str())) {
                    put(&mut scene.edge_marks, &mut scene.edge_notes, at, Mark::Cycle, &note);
                }
            }
        }
        scene
    }

    /// The lines of a node's label: its id, its title when it has one, its family.
    fn node_lines(&self, index: usize) -> Vec<String> {
        let node = &self.topology.nodes[index];
        let mut lines = vec![node.id.clone()];
        lines.extend(node.title.as_deref().map(one_line));
        lines.push(format!("({})", node.family));
        lines
    }

    fn edge_label(t: &Transition) -> Option<String> {
        match t.kind {
            EdgeKind::Branch => t.branch_label.as_deref().map(one_line),
            EdgeKind::Retry => Some(match t.retry.as_ref().and_then(|r| r.max_attempts) {
                Some(n) => format!("retry ×{n}"),
                None => "retry".into(),
            }),
            EdgeKind::Forward => None,
        }
    }

    fn header(&self) -> [String; 2] {
        let t = &self.topology;
        [
            format!(
                "little graph: the executable topology of {} (draft {}, revision {}, catalog {})",
                one_line(&t.workflow_id),
                one_line(&t.draft_id),
                t.revision,
                one_line(&t.catalog_version)
            ),
            "red: an error; red and bold: the witness of a cycle; orange: a warning; dashed: a retry".into(),
        ]
    }

    fn dot(&self) -> String {
        let t = &self.topology;
        let mut out = String::new();
        for line in self.header() {
            out += &format!("// {line}\n");
        }
        out += &format!("digraph {} {{\n", dot_string(&t.workflow_id));
        out += "  graph [fontname=\"Helvetica\"];\n";
        out += "  node [fontname=\"Helvetica\", fontsize=11];\n";
        out += "  edge [fontname=\"Helvetica\", fontsize=10];\n";
        if !self.elsewhere.is_empty() {
            let mut label = String::from("not on the picture:\\l");
            for line in &self.elsewhere {
                out += &format!("  // not on the picture: {line}\n");
                label += &dot_escape(line);
                label += "\\l";
            }
            out += &format!("  graph [label=\"{label}\", labelloc=b, labeljust=l, fontcolor=red, fontsize=10];\n");
        }
        for (i, node) in t.nodes.iter().enumerate() {
            let lines: Vec<String> = self.node_lines(i).iter().map(|l| dot_escape(l)).collect();
            let mut attrs = vec![format!("label=\"{}\"", lines.join("\\n"))];
            attrs.push(
                match node.kind {
                    NodeKind::Trigger => "shape=invhouse",
                    NodeKind::Agent => "shape=box, style=rounded",
                    NodeKind::Action => "shape=box",
                    NodeKind::Router => "shape=diamond",
                    NodeKind::Gate => "shape=hexagon",
                    NodeKind::Annotation => "shape=note",
                    NodeKind::Group => "shape=folder",
                }
                .into(),
            );
            attrs.extend(dot_mark(self.node_marks[i]));
            attrs.push(dot_tooltip(&node.id, &self.node_notes[i]));
            out += &format!("  {} [{}];\n", dot_string(&node.id), attrs.join(", "));
        }
        let backward = backward_edges(t);
        for (i, transition) in t.transitions.iter().enumerate() {
            let mut attrs = Vec::new();
            if let Some(label) = Self::edge_label(transition) {
                attrs.push(format!("label={}", dot_string(&label)));
            }
            if transition.kind == EdgeKind::Retry {
                attrs.push("style=dashed".into());
            }
            if backward[i] {
                attrs.push("constraint=false".into());
            }
            attrs.extend(dot_mark(self.edge_marks[i]));
            let ports = format!("{}: {} → {}", transition.id, transition.from.port, transition.to.port);
            attrs.push(dot_tooltip(&ports, &self.edge_notes[i]));
            out += &format!(
                "  {} -> {} [{}];\n",
                dot_string(&t.node(transition.from.node).id),
                dot_string(&t.node(transition.to.node).id),
                attrs.join(", ")
            );
        }
        out += "}\n";
        out
    }

    fn mermaid(&self) -> String {
        let t = &self.topology;
        let mut out = String::from("flowchart TD\n");
        for line in self.header() {
            out += &format!("  %% {line}\n");
        }
        for line in &self.elsewhere {
            out += &format!("  %% not on the picture: {line}\n");
        }
        for (i, node) in t.nodes.iter().enumerate() {
            let lines: Vec<String> = self.node_lines(i).iter().map(|l| mermaid_escape(l)).collect();
            let label = format!("\"{}\"", lines.join("<br/>"));
            let (open, close) = match node.kind {
                NodeKind::Trigger => ("([", "])"),
                NodeKind::Agent => ("(", ")"),
                NodeKind::Router => ("{", "}"),
                NodeKind::Gate => ("{{", "}}"),
                NodeKind::Action | NodeKind::Annotation | NodeKind::Group => ("[", "]"),
            };
            out += &format!("  n{i}{open}{label}{close}\n");
        }
        for transition in &t.transitions {
            let arrow = if transition.kind == EdgeKind::Retry { "-.->" } else { "-->" };
            let label =
                Self::edge_label(transition).map(|l| format!("|\"{}\"|", mermaid_escape(&l))).unwrap_or_default();
            out += &format!("  n{} {arrow}{label} n{}\n", transition.from.node.0, transition.to.node.0);
        }
        let classes = [(Mark::Cycle, "cycle"), (Mark::Fault, "fault"), (Mark::Warning, "warn")];
        let mut defined = false;
        for (mark, class) in classes {
            let nodes: Vec<String> =
                (0..t.nodes.len()).filter(|&i| self.node_marks[i] == Some(mark)).map(|i| format!("n{i}")).collect();
            if nodes.is_empty() {
                continue;
            }
            if !defined {
                out += "  classDef cycle stroke:#d00,color:#d00,stroke-width:3px\n";
                out += "  classDef fault stroke:#d00,color:#d00\n";
                out += "  classDef warn stroke:#e80,color:#e80\n";
                defined = true;
            }
            out += &format!("  class {} {class}\n", nodes.join(","));
        }
        for mark in [Mark::Cycle, Mark::Fault, Mark::Warning] {
            let links: Vec<String> =
                (0..t.transitions.len()).filter(|&i| self.edge_marks[i] == Some(mark)).map(|i| i.to_string()).collect();
            if !links.is_empty() {
                out += &format!("  linkStyle {} {}\n", links.join(","), mermaid_link_style(mark));
            }
        }
        out
    }
}

/// The edges that point back against the flow: every retry edge, and each forward or
/// branch edge that closes a loop in a depth-first walk from the triggers (nodes and edges
/// in id order). DOT ranks the picture without them (`constraint=false`), so it reads
/// from the triggers down however the draft loops.
fn backward_edges(t: &Topology) -> Vec<bool> {
    let mut backward: Vec<bool> = t.transitions.iter().map(|e| e.kind == EdgeKind::Retry).collect();
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); t.nodes.len()];
    for (i, e) in t.transitions.iter().enumerate() {
        if !backward[i] {
            out[e.from.node.0 as usize].push(i);
        }
    }
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        New,
        Open,
        Done,
    }
    let mut state = vec![State::New; t.nodes.len()];
    let triggers = (0..t.nodes.len()).filter(|&n| t.nodes[n].kind == NodeKind::Trigger);
    let rest = (0..t.nodes.len()).filter(|&n| t.nodes[n].kind != NodeKind::Trigger);
    for root in triggers.chain(rest) {
        if state[root] != State::New {
            continue;
        }
        state[root] = State::Open;
        // (node, index of its next outgoing edge to follow)
        let mut stack = vec![(root, 0usize)];
        while let Some(top) = stack.last_mut() {
            let (node, next) = *top;
            let Some(&edge) = out[node].get(next) else {
                state[node] = State::Done;
                stack.pop();
                continue;
            };
            top.1 += 1;
            let to = t.transitions[edge].to.node.0 as usize;
            match state[to] {
                State::New => {
                    state[to] = State::Open;
                    stack.push((to, 0));
                }
                State::Open => backward[edge] = true,
                State::Done => {}
            }
        }
    }
    backward
}

fn dot_mark(mark: Option<Mark>) -> Vec<String> {
    match mark {
        None => Vec::new(),
        Some(Mark::Warning) => vec!["color=orange".into(), "fontcolor=orange".into()],
        Some(Mark::Fault) => vec!["color=red".into(), "fontcolor=red".into()],
        Some(Mark::Cycle) => vec!["color=red".into(), "fontcolor=red".into(), "penwidth=2".into()],
    }
}

fn mermaid_link_style(mark: Mark) -> &'static str {
    match mark {
        Mark::Warning => "stroke:#e80,color:#e80",
        Mark::Fault => "stroke:#d00,color:#d00",
        Mark::Cycle => "stroke:#d00,color:#d00,stroke-width:3px",
    }
}

/// A tooltip (SVG hover text): what the element is, then the findings about it.
fn dot_tooltip(what: &str, notes: &[String]) -> String {
    let lines: Vec<String> = std::iter::once(what).chain(notes.iter().map(String::as_str)).map(dot_escape).collect();
    format!("tooltip=\"{}\"", lines.join("\\n"))
}

/// A DOT quoted string.
fn dot_string(text: &str) -> String {
    format!("\"{}\"", dot_escape(text))
}

/// Text for inside a DOT quoted string: backslashes and quotes escaped, line breaks as
/// `\n`, other control characters dropped (DOT escapes are only backslash sequences).
fn dot_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out += "\\\\",
            '"' => out += "\\\"",
            '\n' => out += "\\n",
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Text for inside a Mermaid `"…"` label: every character Mermaid or the HTML label could
/// read as markup written as an entity code (`#quot;`, `#35;`…), line breaks as `<br/>`.
fn mermaid_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out += "#quot;",
            '#' => out += "#35;",
            '<' => out += "#lt;",
            '>' => out += "#gt;",
            '&' => out += "#amp;",
            '`' => out += "#96;",
            '\n' => out += "<br/>",
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Text on one line (for comments and single-line labels): line breaks become spaces.
fn one_line(text: &str) -> String {
    text.chars().map(|c| if c == '\n' || c == '\r' { ' ' } else { c }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_escapes_quotes_backslashes_and_line_breaks() {
        assert_eq!(dot_escape("a \"b\" \\n\nc\u{7}"), "a \\\"b\\\" \\\\n\\nc");
        assert_eq!(dot_string("x.y-z"), "\"x.y-z\"");
    }

    #[test]
    fn mermaid_escapes_markup_as_entity_codes() {
        assert_eq!(mermaid_escape("say \"hi\" #1 <b>&`"), "say #quot;hi#quot; #35;1 #lt;b#gt;#amp;#96;");
        assert_eq!(mermaid_escape("a\nb"), "a<br/>b");
    }
}
