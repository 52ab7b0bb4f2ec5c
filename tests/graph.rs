//! `little graph`: the executable topology drawn as DOT, Mermaid and SVG, with
//! the cycle witness and the faulty nodes and edges marked, run as a user runs it.

mod common;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use common::Run;

const DEMO: &str = "examples/graph-demo.json";
const SETUP: [&str; 4] = ["--context", "examples/context.json", "--bindings", "examples/bindings.json"];

fn little(args: &[&str]) -> Run {
    common::little(args)
}

fn graph(format: &str) -> Run {
    let run = little(&[&["graph", DEMO, "--format", format][..], &SETUP].concat());
    assert_eq!(run.code, 0, "stderr:\n{}", run.stderr);
    assert!(run.stderr.is_empty(), "{}", run.stderr);
    run
}

/// Whether Graphviz's `dot` is installed here (CI installs it: `.ci/run`).
fn has_dot() -> bool {
    Command::new("dot").arg("-V").output().is_ok_and(|o| o.status.success())
}

fn dot_to_svg(dot: &str) -> Output {
    let mut child = Command::new("dot")
        .arg("-Tsvg")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("dot runs");
    child.stdin.take().unwrap().write_all(dot.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// The DOT statement line of the edge `from -> to`.
fn dot_edge<'a>(dot: &'a str, from: &str, to: &str) -> &'a str {
    let head = format!("  \"{from}\" -> \"{to}\" [");
    dot.lines().find(|l| l.starts_with(&head)).unwrap_or_else(|| panic!("no edge {from} -> {to} in:\n{dot}"))
}

/// The DOT statement line of the node `id`.
fn dot_node<'a>(dot: &'a str, id: &str) -> &'a str {
    let head = format!("  \"{id}\" [");
    dot.lines().find(|l| l.starts_with(&head)).unwrap_or_else(|| panic!("no node {id} in:\n{dot}"))
}

#[test]
fn dot_of_a_draft_with_a_cycle_branches_and_a_retry() {
    let dot = graph("dot").stdout;
    insta::assert_snapshot!("graph-demo.dot", dot);
    // The witness of the cycle (approve -> mail -> review, edges e7, e9, e6): red and bold.
    for (from, to) in [("approve", "mail"), ("mail", "review"), ("review", "approve")] {
        let edge = dot_edge(&dot, from, to);
        assert!(edge.contains("color=red") && edge.contains("penwidth=2"), "{edge}");
    }
    for id in ["approve", "mail", "review"] {
        let node = dot_node(&dot, id);
        assert!(node.contains("color=red") && node.contains("penwidth=2"), "{node}");
    }
    // Edges off the cycle stay black; the branch labels and the dashed retry are drawn.
    let e5 = dot_edge(&dot, "digest", "review");
    assert!(!e5.contains("color="), "{e5}");
    assert!(dot_edge(&dot, "route", "page.on-call").contains("label=\"urgent\""));
    assert!(dot_edge(&dot, "route", "digest").contains("label=\"routine\""));
    let retry = dot_edge(&dot, "page.on-call", "history");
    assert!(retry.contains("style=dashed") && retry.contains("label=\"retry ×3\""), "{retry}");
    // Shapes by kind; a title with quotes is escaped.
    assert!(dot_node(&dot, "ticket").contains("shape=invhouse"));
    assert!(dot_node(&dot, "route").contains("shape=diamond"));
    assert!(dot_node(&dot, "approve").contains("shape=hexagon"));
    assert!(dot_node(&dot, "review").contains("style=rounded"));
    assert!(dot_node(&dot, "history").contains(r#"label="history\nCustomer \"history\"\n(dataset.retrieve)""#));
    // A warning is orange; the dangling edge, not in the topology, is listed.
    assert!(dot_node(&dot, "audit").contains("color=orange"));
    assert!(dot.contains("edge e10: graph.dangling_edge"), "{dot}");
    // The visual-only annotation is not drawn.
    assert!(!dot.contains("\"note\""), "{dot}");
}

#[test]
fn mermaid_of_a_draft_with_a_cycle_branches_and_a_retry() {
    let mermaid = graph("mermaid").stdout;
    insta::assert_snapshot!("graph-demo.mermaid", mermaid);
    assert!(mermaid.starts_with("flowchart TD\n"));
    // Ids that hold dots and dashes are mapped to n0, n1… in topology order.
    assert!(mermaid.contains("  n5[\"page.on-call<br/>(notify.chat)\"]\n"), "{mermaid}");
    assert!(mermaid.contains("  n8([\"ticket<br/>New ticket<br/>(trigger.webhook)\"])\n"), "{mermaid}");
    assert!(mermaid.contains("  n7{\"route<br/>Urgent?<br/>(router.switch)\"}\n"), "{mermaid}");
    assert!(mermaid.contains("  n0{{\"approve<br/>(gate.approval)\"}}\n"), "{mermaid}");
    assert!(mermaid.contains("Customer #quot;history#quot;"), "{mermaid}");
    assert!(mermaid.contains("  n7 -->|\"urgent\"| n5\n"), "{mermaid}");
    assert!(mermaid.contains("  n5 -.->|\"retry ×3\"| n3\n"), "{mermaid}");
    // The witness: nodes approve, mail, review; links e6, e7, e9 (5, 6 and 8 in link order).
    assert!(mermaid.contains("  class n0,n4,n6 cycle\n"), "{mermaid}");
    assert!(mermaid.contains("  linkStyle 5,6,8 stroke:#d00,color:#d00,stroke-width:3px\n"), "{mermaid}");
    assert!(mermaid.contains("classDef cycle stroke:#d00"), "{mermaid}");
    assert!(mermaid.contains("  class n1 warn\n"), "{mermaid}");
}

#[test]
fn output_is_byte_identical_across_runs() {
    for format in ["dot", "mermaid"] {
        assert_eq!(graph(format).stdout, graph(format).stdout, "{format}");
    }
}

#[test]
fn a_node_named_by_an_error_is_red_without_a_context() {
    // Without the context and rows the draft still draws; the gate without evidence is red.
    let run = little(&["graph", DEMO]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let approve = dot_node(&run.stdout, "approve");
    assert!(approve.contains("gate.missing_evidence"), "{approve}");
}

#[test]
fn graphviz_renders_the_dot_text() {
    if !has_dot() {
        eprintln!("skipped: Graphviz's `dot` is not installed");
        return;
    }
    for file in [DEMO, "examples/cycle.json", "examples/support-triage.json", "examples/quarterly-report.json"] {
        let run = little(&["graph", file]);
        assert_eq!(run.code, 0, "{file}: {}", run.stderr);
        let output = dot_to_svg(&run.stdout);
        assert!(output.status.success(), "{file}: {}", String::from_utf8_lossy(&output.stderr));
        assert!(output.stderr.is_empty(), "{file}: {}", String::from_utf8_lossy(&output.stderr));
        assert!(String::from_utf8_lossy(&output.stdout).contains("<svg"), "{file}");
    }
}

#[test]
fn svg_format_runs_graphviz_end_to_end() {
    if !has_dot() {
        eprintln!("skipped: Graphviz's `dot` is not installed");
        return;
    }
    let svg = graph("svg").stdout;
    assert!(svg.contains("<svg"), "{svg}");
    assert!(svg.trim_end().ends_with("</svg>"), "{svg}");
    // The witness is drawn red and bold; the branch label is there.
    assert!(svg.contains("stroke=\"red\" stroke-width=\"2\""), "{svg}");
    assert!(svg.contains(">urgent</text>"), "{svg}");
}

#[test]
fn svg_without_graphviz_says_how_to_get_it() {
    let output = Command::new(env!("CARGO_BIN_EXE_little"))
        .args(["graph", DEMO, "--format", "svg"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("NO_COLOR", "1")
        .env("PATH", "")
        .output()
        .expect("the binary runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("`--format svg` needs Graphviz's `dot` on PATH"), "{stderr}");
    assert!(stderr.contains("--format dot"), "{stderr}");
}

#[test]
fn a_file_that_is_not_a_draft_has_no_topology_to_draw() {
    let dir = std::env::temp_dir().join(format!("little-graph-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let broken = dir.join("broken.json");
    std::fs::write(&broken, "{ \"format\": ").unwrap();
    let no_identity = dir.join("no-identity.json");
    std::fs::write(&no_identity, r#"{ "format": "workflow-draft/v1", "nodes": [], "edges": [] }"#).unwrap();
    let cases = [
        ("examples/context.json".to_string(), "it is a context document, not a draft"),
        ("frontend/catalog/default.json".to_string(), "it is a catalog document, not a draft"),
        (broken.display().to_string(), "it is not valid JSON"),
        (no_identity.display().to_string(), "the draft has no `"),
    ];
    for format in ["dot", "mermaid", "svg"] {
        for (file, why) in &cases {
            let run = little(&["graph", file, "--format", format]);
            assert_eq!(run.code, 2, "{file}: {}", run.stdout);
            assert!(run.stdout.is_empty(), "{file}: {}", run.stdout);
            assert!(run.stderr.contains(&format!("`{file}` has no topology to draw: ")), "{}", run.stderr);
            assert!(run.stderr.contains(why), "{file}: {}", run.stderr);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_file_is_a_tool_failure() {
    let run = little(&["graph", "examples/no-such-draft.json"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("cannot read `examples/no-such-draft.json`"), "{}", run.stderr);
}
