//! The reference pages (`docs/reference/`) name everything a user can meet: every
//! diagnostic code of the registry, every command, option and option value of the binary
//! (read from its own `--help`, so nothing is listed twice), and every event kind of the
//! pipeline. A link between the pages must lead to a file and a heading that exist.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use little_diagnostics::Code;
use little_pipeline::events::Kind;

fn reference_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/reference")
}

fn page(name: &str) -> String {
    let path = reference_dir().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Whether `token` occurs in `text` as a whole word: not inside a longer name or option.
fn names(text: &str, token: &str) -> bool {
    let part_of_name = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.';
    text.match_indices(token).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + token.len()..].chars().next();
        !before.is_some_and(part_of_name) && !after.is_some_and(part_of_name)
    })
}

/// A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to `-`.
fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The headings of a Markdown page outside code blocks: (level, anchor, line index).
fn headings(text: &str) -> Vec<(usize, String, usize)> {
    let mut in_code = false;
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        let level = line.chars().take_while(|&c| c == '#').count();
        if !in_code && level > 0 && line[level..].starts_with(' ') {
            found.push((level, slug(line[level..].trim()), i));
        }
    }
    found
}

/// The text of the section under the heading with `anchor`, down to the next heading of
/// the same or a higher level.
fn section(text: &str, anchor: &str) -> Option<String> {
    let all = headings(text);
    let at = all.iter().position(|(_, a, _)| a == anchor)?;
    let (level, _, start) = all[at];
    let end = all[at + 1..].iter().find(|(l, _, _)| *l <= level).map_or(usize::MAX, |(_, _, line)| *line);
    Some(text.lines().skip(start).take(end - start).collect::<Vec<_>>().join("\n"))
}

/// The targets of the Markdown links of `text`, `](target)`, that are not web addresses.
fn links(text: &str) -> Vec<String> {
    text.match_indices("](")
        .filter_map(|(at, _)| {
            let rest = &text[at + 2..];
            let target = &rest[..rest.find(')')?];
            (!target.starts_with("http")).then(|| target.to_string())
        })
        .collect()
}

/// What the binary's help shows of one command: its subcommands (from `Commands:`), its
/// options (long and short), and the values each option takes (`[possible values: …]`).
struct Help {
    subcommands: Vec<String>,
    options: BTreeSet<String>,
    values: BTreeSet<String>,
}

fn help(args: &[&str]) -> Help {
    let output = Command::new(env!("CARGO_BIN_EXE_little")).args(args).arg("-h").output().expect("little runs");
    assert!(output.status.success(), "little {args:?} -h failed: {}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8(output.stdout).expect("help is UTF-8");
    let mut subcommands = Vec::new();
    let mut options = BTreeSet::new();
    let mut block = "";
    for line in text.lines() {
        if !line.starts_with(' ') {
            block = line.trim_end_matches(':');
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let first = line.split_whitespace().next().unwrap_or("");
        match block {
            "Commands" if indent == 2 => subcommands.push(first.to_string()),
            "Options" if indent <= 6 && first.starts_with('-') => {
                for word in line.split_whitespace().take_while(|w| w.starts_with('-')) {
                    let option = word.trim_end_matches(',');
                    options.insert(option.split(['=', '<']).next().unwrap_or(option).to_string());
                }
            }
            _ => {}
        }
    }
    // Values may wrap onto the next lines: read them from the text with lines joined.
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut values = BTreeSet::new();
    for (at, _) in joined.match_indices("[possible values: ") {
        let rest = &joined[at + "[possible values: ".len()..];
        let list = &rest[..rest.find(']').expect("a closed list of values")];
        values.extend(list.split(", ").map(str::to_string));
    }
    Help { subcommands, options, values }
}

#[test]
fn every_diagnostic_code_has_a_row_with_its_facts_and_explanation_page() {
    let text = page("diagnostics.md");
    let mut wrong = Vec::new();
    for code in Code::ALL {
        let name = code.as_str();
        let row = format!("| `{name}` |");
        let Some(line) = text.lines().find(|line| line.starts_with(&row)) else {
            wrong.push(format!("{name}: no row"));
            continue;
        };
        // | code | severity | blocks | meaning | explanation |
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        let blocks = if code.blocking() { "yes" } else { "no" };
        let link = format!("[page](../../diagnostics/explain/{name}.md)");
        let expected = [row.trim_matches(['|', ' ']), code.severity().as_str(), blocks, code.summary(), &link];
        if cells != expected {
            wrong.push(format!("{name}: the row says {cells:?}, the registry {expected:?}"));
        }
    }
    assert!(wrong.is_empty(), "docs/reference/diagnostics.md disagrees with the code registry:\n{}", wrong.join("\n"));
}

#[test]
fn every_event_kind_has_a_row() {
    let text = page("harness.md");
    let missing: Vec<&str> = Kind::ALL
        .iter()
        .map(|kind| kind.as_str())
        .filter(|kind| !text.lines().any(|line| line.starts_with(&format!("| `{kind}` |"))))
        .collect();
    assert!(missing.is_empty(), "docs/reference/harness.md has no row for the event kinds {missing:?}");
}

#[test]
fn every_command_option_and_value_is_in_its_section() {
    let text = page("command-line.md");
    let top = help(&[]);
    assert!(top.subcommands.len() > 10, "the help lists the commands: {:?}", top.subcommands);
    let mut missing = Vec::new();
    for option in &top.options {
        if !names(&text, option) {
            missing.push(format!("`little {option}`"));
        }
    }
    for command in &top.subcommands {
        let anchor = slug(&format!("little {command}"));
        let Some(own) = section(&text, &anchor) else {
            missing.push(format!("a section `## \\`little {command}\\``"));
            continue;
        };
        // A section may hand options over to another section of the page it links to.
        let mut scope = own.clone();
        for target in links(&own).iter().filter_map(|l| l.strip_prefix('#')) {
            scope.push_str(&section(&text, target).unwrap_or_default());
        }
        if command == "help" {
            continue; // clap's own: `little help COMMAND` is `little COMMAND --help`
        }
        let shown = help(&[command]);
        for option in shown.options.iter().filter(|o| !matches!(o.as_str(), "-h" | "--help")) {
            if !names(&scope, option) {
                missing.push(format!("`{option}` of `little {command}`"));
            }
        }
        for value in &shown.values {
            if !names(&scope, value) {
                missing.push(format!("the value `{value}` of an option of `little {command}`"));
            }
        }
    }
    assert!(missing.is_empty(), "docs/reference/command-line.md does not name: {}", missing.join(", "));
}

#[test]
fn links_between_the_pages_lead_somewhere() {
    let dir = reference_dir();
    let mut broken = Vec::new();
    let mut pages: Vec<PathBuf> =
        std::fs::read_dir(&dir).expect("docs/reference exists").map(|e| e.expect("an entry").path()).collect();
    pages.sort();
    for from in pages.iter().filter(|p| p.extension().is_some_and(|e| e == "md")) {
        let text = std::fs::read_to_string(from).expect("a page reads");
        for link in links(&text) {
            let (file, anchor) = link.split_once('#').unwrap_or((&link, ""));
            let target = if file.is_empty() { from.clone() } else { dir.join(file) };
            let name = from.file_name().unwrap().to_string_lossy();
            if !target.exists() {
                broken.push(format!("{name}: `{link}` (no such file)"));
                continue;
            }
            if !anchor.is_empty() {
                let target_text = std::fs::read_to_string(&target).expect("a page reads");
                if !headings(&target_text).iter().any(|(_, a, _)| a == anchor) {
                    broken.push(format!("{name}: `{link}` (no such heading)"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links in docs/reference: {broken:?}");
}

#[test]
fn a_name_is_found_only_whole() {
    assert!(names("`--max-file-size SIZE`", "--max-file-size"));
    assert!(!names("`--max-file-size SIZE`", "--max-file"));
    assert!(!names("`graph.cycle_x`", "graph.cycle"));
    assert!(names("-o, --output", "-o"));
    assert_eq!(slug("An external planner (`--planner CMD`)"), "an-external-planner---planner-cmd");
}
