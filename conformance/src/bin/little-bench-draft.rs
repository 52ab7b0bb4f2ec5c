//! Writes the documents `scripts/bench-batch.sh` checks: a generated draft of N nodes
//! (`little_conformance::generate::draft`), a context that grants everything it uses and
//! binding rows, so that every layer of the check runs.

use std::path::PathBuf;

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(nodes), Some(dir)) = (args.next().and_then(|n| n.parse::<usize>().ok()), args.next()) else {
        eprintln!(
            "usage: little-bench-draft NODES DIR (writes DIR/draft-NODES.json, DIR/context.json, DIR/bindings.json)"
        );
        std::process::exit(2);
    };
    let dir = PathBuf::from(dir);
    let write = |name: &str, text: &str| {
        if let Err(e) = std::fs::write(dir.join(name), text) {
            eprintln!("cannot write `{}`: {e}", dir.join(name).display());
            std::process::exit(2);
        }
    };
    write(&format!("draft-{nodes}.json"), &little_conformance::generate::draft(nodes, 42));
    write("context.json", &little_conformance::generate::accepting_context());
    write("bindings.json", r#"{"format":"agent-bindings/v1","rows":[]}"#);
}
