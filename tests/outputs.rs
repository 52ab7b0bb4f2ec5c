//! Every output format, byte for byte, on every bundled example, every explanation page's
//! failing and fixed example, and the conformance fixtures: `check` in human, JSON, SARIF
//! and GitHub form, `graph` as DOT and Mermaid, `compile`'s document, `snapshot` of a
//! definition, and reader documents that cannot be used. The renderers are kept
//! byte-identical by comparing with the files in `tests/golden/`, which were written by
//! the binary before the renderers were gathered into one crate; `LITTLE_BLESS_GOLDEN=1`
//! rewrites them (a change of output is then a reviewed diff).
//!
//! SVG is left out: its bytes are Graphviz's, drawn from the DOT compared here. A SARIF
//! log repeats every rule's explanation page, so its golden entry is its SHA-256 and its
//! results (the rules are the `sarif__rules` snapshot).

mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use common::{Run, little_in};

const FORMATS: [&str; 8] = ["human", "json", "sarif", "github", "dot", "mermaid", "compile", "snapshot"];

/// One document to render, and the options it is checked with (paths relative to `dir`).
struct Case {
    dir: PathBuf,
    document: String,
    options: Vec<String>,
}

/// The output of every format for `cases`, one text per format.
fn render_all(cases: &[Case]) -> Vec<(String, String)> {
    let mut texts: Vec<(String, String)> = FORMATS.iter().map(|f| (f.to_string(), String::new())).collect();
    for case in cases {
        for (format, text) in &mut texts {
            let mut args: Vec<String> = match format.as_str() {
                "human" => vec!["check".into(), case.document.clone()],
                "json" | "sarif" | "github" => {
                    vec!["check".into(), case.document.clone(), "--format".into(), format.clone()]
                }
                "dot" | "mermaid" => vec!["graph".into(), case.document.clone(), "--format".into(), format.clone()],
                "compile" => vec!["compile".into(), case.document.clone(), "-o".into(), "compiled.out.json".into()],
                _ if is_definition(&case.dir.join(&case.document)) => {
                    vec!["snapshot".into(), case.document.clone()]
                }
                _ => continue,
            };
            if format != "snapshot" {
                args.extend(case.options.iter().cloned());
            }
            let run = little_in(&case.dir, &args);
            entry(text, &args, &run, format);
            let written = case.dir.join("compiled.out.json");
            if let Ok(document) = std::fs::read_to_string(&written) {
                let _ = writeln!(text, "--- written\n{document}");
                std::fs::remove_file(written).unwrap();
            }
        }
    }
    texts
}

fn is_definition(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|text| text.contains("\"workflow-definition/v1\""))
}

fn entry(text: &mut String, args: &[String], run: &Run, format: &str) {
    let _ = writeln!(text, "### little {}\nexit {}", args.join(" "), run.code);
    if format == "sarif" && run.code != 2 {
        let log: serde_json::Value = serde_json::from_str(&run.stdout).expect("SARIF is JSON");
        let results = serde_json::to_string_pretty(&log["runs"][0]["results"]).unwrap();
        let _ = writeln!(
            text,
            "--- stdout: {} bytes, {}\n--- results\n{results}",
            run.stdout.len(),
            little_hashing::sha256_hex(run.stdout.as_bytes())
        );
    } else {
        let _ = write!(text, "--- stdout\n{}", run.stdout);
    }
    let _ = write!(text, "--- stderr\n{}", run.stderr);
}

/// Compares `texts` with `tests/golden/<set>.<format>.txt`, or writes them when blessing.
fn compare(set: &str, texts: &[(String, String)]) {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let bless = std::env::var_os("LITTLE_BLESS_GOLDEN").is_some();
    for (format, text) in texts {
        let path = golden.join(format!("{set}.{format}.txt"));
        if bless {
            std::fs::create_dir_all(&golden).unwrap();
            std::fs::write(&path, text).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if *text != expected {
            let line = text.lines().zip(expected.lines()).position(|(a, b)| a != b).unwrap_or(0);
            let around = |s: &str| s.lines().skip(line.saturating_sub(3)).take(8).collect::<Vec<_>>().join("\n");
            panic!(
                "{} differs from the output at line {}:\nnow:\n{}\ngolden:\n{}",
                path.display(),
                line + 1,
                around(text),
                around(&expected)
            );
        }
    }
}

#[test]
fn examples_render_as_before() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let setup = ["--context", "examples/context.json", "--bindings", "examples/bindings.json"].map(String::from);
    let mut cases: Vec<Case> = common::examples()
        .into_iter()
        .flat_map(|name| {
            let document = format!("examples/{name}");
            [
                Case { dir: root.clone(), document: document.clone(), options: setup.to_vec() },
                Case { dir: root.clone(), document, options: Vec::new() },
            ]
        })
        .collect();
    for name in ["faulty-plan", "summarize-ticket"] {
        let document = format!("examples/lwir/{name}.lwir.json");
        let options = vec!["--snapshot".into(), "examples/lwir/snapshot.json".into()];
        cases.push(Case { dir: root.clone(), document: document.clone(), options });
        cases.push(Case { dir: root.clone(), document, options: Vec::new() });
    }
    for name in ["definition.json", "lwir.json"] {
        let document = format!("examples/support-summarize-ticket/{name}");
        cases.push(Case { dir: root.clone(), document, options: Vec::new() });
    }
    for name in ["langflow-rag-answer.json", "n8n-invoice-triage.json"] {
        cases.push(Case {
            dir: root.clone(),
            document: format!("conformance/tests/fixtures/{name}"),
            options: Vec::new(),
        });
    }
    // Reader documents that cannot be used: not JSON, and of the wrong kind.
    let draft = "examples/cycle.json".to_string();
    for options in [
        ["--catalog", "examples/cycle.json"],
        ["--context", "examples/bindings.json"],
        ["--bindings", "examples/support-summarize-ticket/planner.sh"],
        ["--snapshot", "examples/context.json"],
    ] {
        cases.push(Case { dir: root.clone(), document: draft.clone(), options: options.map(String::from).to_vec() });
    }
    compare("examples", &render_all(&cases));
}

#[test]
fn explanation_page_examples_render_as_before() {
    let dir = common::fresh_dir("little-outputs", "pages");
    let mut cases = Vec::new();
    for code in little_diagnostics::Code::ALL {
        let examples = little_conformance::pages::examples(code.explanation())
            .unwrap_or_else(|e| panic!("{}: {e}", code.as_str()));
        for (which, example) in [("failing", &examples.failing), ("fixed", &examples.fixed)] {
            let base = format!("{}.{which}", code.as_str());
            let mut options = Vec::new();
            let write = |suffix: &str, text: &str| {
                let name = format!("{base}{suffix}.json");
                std::fs::write(dir.join(&name), text).unwrap();
                name
            };
            let document = write("", &example.document);
            for (option, text) in
                [("--context", &example.context), ("--bindings", &example.bindings), ("--snapshot", &example.snapshot)]
            {
                if let Some(text) = text {
                    options.push(option.to_string());
                    options.push(write(&format!(".{}", &option[2..]), text));
                }
            }
            cases.push(Case { dir: dir.clone(), document, options });
        }
    }
    compare("pages", &render_all(&cases));
    std::fs::remove_dir_all(dir).unwrap();
}
