//! The same draft in the layouts people and tools write it in: pretty-printed (2 and 4
//! spaces, tabs), compact as `examples/` (several keys a line, an element over several
//! lines), one element a line, the whole draft on one line, minified, and CRLF line ends.
//! The editor's recovery must hold its property in each (`crate::recovery`).

use serde_json::Value;
use serde_json::ser::{PrettyFormatter, Serializer};

/// A way of writing a draft out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Pretty-printed with this indentation, one key a line.
    Pretty(&'static str),
    /// As `examples/`: the root's members a line each, an element over several lines with
    /// its scalars together on its first line and each nested value on a line of its own.
    Compact,
    /// The root's members a line each, and each element of `nodes` and `edges` on one line.
    ElementPerLine,
    /// Everything on one line, with a space after each `:` and `,`.
    OneLine,
    /// Everything on one line, no space at all.
    Minified,
    /// Pretty-printed with 2 spaces and `\r\n` line ends.
    Crlf,
}

/// Every layout, each with a name for reports.
pub const LAYOUTS: &[(&str, Layout)] = &[
    ("pretty-2", Layout::Pretty("  ")),
    ("pretty-4", Layout::Pretty("    ")),
    ("pretty-tab", Layout::Pretty("\t")),
    ("compact", Layout::Compact),
    ("element-per-line", Layout::ElementPerLine),
    ("one-line", Layout::OneLine),
    ("minified", Layout::Minified),
    ("crlf", Layout::Crlf),
];

/// `draft` (an object) written out in `layout`.
pub fn lay_out(draft: &Value, layout: Layout) -> String {
    match layout {
        Layout::Pretty(indent) => pretty(draft, indent),
        Layout::Crlf => pretty(draft, "  ").replace('\n', "\r\n"),
        Layout::Minified => draft.to_string(),
        Layout::OneLine => spaced(draft),
        Layout::ElementPerLine | Layout::Compact => by_lines(draft, layout),
    }
}

fn pretty(value: &Value, indent: &str) -> String {
    let mut out = Vec::new();
    let mut serializer = Serializer::with_formatter(&mut out, PrettyFormatter::with_indent(indent.as_bytes()));
    serde::Serialize::serialize(value, &mut serializer).expect("a value serializes");
    out.push(b'\n');
    String::from_utf8(out).expect("UTF-8")
}

/// On one line, with `": "` and `", "` between parts: the minified text with a space
/// after each `:` and `,` that is not inside a string.
fn spaced(value: &Value) -> String {
    let minified = value.to_string();
    let mut out = String::with_capacity(minified.len() * 5 / 4);
    let (mut in_string, mut escaped) = (false, false);
    for c in minified.chars() {
        out.push(c);
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            ':' | ',' if !in_string => out.push(' '),
            _ => {}
        }
    }
    out
}

/// The root's members a line each; `nodes` and `edges` an element a line
/// ([`Layout::ElementPerLine`]) or over several ([`Layout::Compact`]).
fn by_lines(draft: &Value, layout: Layout) -> String {
    let members = draft.as_object().expect("a draft is an object");
    let mut lines = Vec::new();
    for (key, value) in members {
        let key_text = Value::from(key.as_str()).to_string();
        match value.as_array() {
            Some(items) if matches!(key.as_str(), "nodes" | "edges") && !items.is_empty() => {
                let elements: Vec<String> = items
                    .iter()
                    .map(|item| match layout {
                        Layout::Compact => compact_element(item),
                        _ => format!("    {}", spaced(item)),
                    })
                    .collect();
                lines.push(format!("  {key_text}: [\n{}\n  ]", elements.join(",\n")));
            }
            _ => lines.push(format!("  {key_text}: {}", spaced(value))),
        }
    }
    format!("{{\n{}\n}}\n", lines.join(",\n"))
}

/// An element as `examples/` write one: `{ ` and its scalar members on the first line,
/// each member whose value is an object or array on a line of its own, ` }` at the end.
fn compact_element(element: &Value) -> String {
    let Some(members) = element.as_object() else { return format!("    {}", spaced(element)) };
    let member = |key: &String, value: &Value| format!("{}: {}", Value::from(key.as_str()), spaced(value));
    let scalars: Vec<String> =
        members.iter().filter(|(_, v)| !(v.is_object() || v.is_array())).map(|(k, v)| member(k, v)).collect();
    let nested: Vec<String> =
        members.iter().filter(|(_, v)| v.is_object() || v.is_array()).map(|(k, v)| member(k, v)).collect();
    let mut lines = Vec::new();
    if !scalars.is_empty() {
        lines.push(scalars.join(", "));
    }
    lines.extend(nested);
    format!("    {{ {} }}", lines.join(",\n      "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_layout_writes_the_same_value() {
        let draft: Value = serde_json::from_str(include_str!("../../examples/quarterly-report.json")).unwrap();
        for &(name, layout) in LAYOUTS {
            let text = lay_out(&draft, layout);
            let back: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
            assert_eq!(back, draft, "{name}");
        }
        let lines = |layout| lay_out(&draft, layout).lines().count();
        assert_eq!(lines(Layout::OneLine), 1);
        assert_eq!(lines(Layout::Minified), 1);
        // 6 nodes and 4 edges a line each, the root's 8 members, its braces.
        assert_eq!(lines(Layout::ElementPerLine), 6 + 4 + 8 + 2 + 2);
        assert!(lines(Layout::Compact) > lines(Layout::ElementPerLine));
        assert!(lay_out(&draft, Layout::Crlf).contains("\r\n"));
        assert!(lay_out(&draft, Layout::Pretty("\t")).contains("\n\t\t{"));
    }
}
