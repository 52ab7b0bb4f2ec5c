//! Typed reading of JSON with findings for every wrong shape.
//!
//! Each document reader (draft, catalog, context, binding rows) walks the tree through
//! a [`Reader`]: a wrong type becomes an `invalid shape` finding with its anchor, an unknown
//! key becomes an `unknown field` finding, and the caller gets `None` and skips the part.

use std::fmt::Display;

use little_diagnostics::{Code, suggest};

use crate::anchor::{At, Finding};
use crate::json::{JsonTree, JsonValue, Members, NodeIdx};

/// Which codes a reader reports with (drafts and LWIR have their own).
#[derive(Clone, Copy, Debug)]
pub struct ShapeCodes {
    pub invalid_shape: Code,
    pub unknown_field: Code,
}

pub const DRAFT_CODES: ShapeCodes =
    ShapeCodes { invalid_shape: Code::DraftInvalidShape, unknown_field: Code::DraftUnknownField };

pub struct Reader<'t> {
    pub tree: &'t JsonTree,
    pub codes: ShapeCodes,
    pub findings: Vec<Finding>,
}

impl<'t> Reader<'t> {
    pub fn new(tree: &'t JsonTree, codes: ShapeCodes) -> Reader<'t> {
        Reader { tree, codes, findings: Vec::new() }
    }

    pub fn value(&self, idx: NodeIdx) -> JsonValue<'t> {
        self.tree.value(idx)
    }

    /// Reports a wrong shape at `at`.
    pub fn invalid<'a>(&mut self, at: impl Into<At<'a>>, message: String) {
        self.findings.push(Finding::new(self.codes.invalid_shape, at.into().anchor(), message));
    }

    fn expected<'a>(&mut self, idx: NodeIdx, at: impl Into<At<'a>>, what: impl Display, expected: &str) {
        let found = self.tree.type_name(idx);
        self.invalid(at, format!("{what} must be {expected}, found {found}"));
    }

    /// The members of an object, or a finding.
    pub fn object<'a>(&mut self, idx: NodeIdx, at: impl Into<At<'a>>, what: impl Display) -> Option<Members<'t>> {
        match self.tree.value(idx) {
            JsonValue::Object(members) => Some(members),
            _ => {
                self.expected(idx, at, what, "an object");
                None
            }
        }
    }

    /// The items of an array, or a finding.
    pub fn array<'a>(&mut self, idx: NodeIdx, at: impl Into<At<'a>>, what: impl Display) -> Option<&'t [NodeIdx]> {
        match self.tree.value(idx) {
            JsonValue::Array(items) => Some(items),
            _ => {
                self.expected(idx, at, what, "an array");
                None
            }
        }
    }

    pub fn string<'a>(&mut self, idx: NodeIdx, at: impl Into<At<'a>>, what: impl Display) -> Option<&'t str> {
        match self.tree.value(idx) {
            JsonValue::String(s) => Some(s),
            _ => {
                self.expected(idx, at, what, "a string");
                None
            }
        }
    }

    /// A string that must not be empty.
    pub fn name<'a>(&mut self, idx: NodeIdx, at: impl Into<At<'a>>, what: impl Display) -> Option<&'t str> {
        let at = at.into();
        let s = self.string(idx, at, &what)?;
        if s.is_empty() {
            self.invalid(at, format!("{what} must not be empty"));
            return None;
        }
        Some(s)
    }

    pub fn boolean<'a>(&mut self, idx: NodeIdx, at: impl Into<At<'a>>, what: impl Display) -> Option<bool> {
        match self.tree.value(idx) {
            JsonValue::Bool(b) => Some(b),
            _ => {
                self.expected(idx, at, what, "a boolean");
                None
            }
        }
    }

    /// An integer (no fraction, no exponent) that fits i64.
    pub fn integer<'a>(&mut self, idx: NodeIdx, at: impl Into<At<'a>>, what: impl Display) -> Option<i64> {
        match self.tree.value(idx) {
            JsonValue::Number(lexeme) => match lexeme.parse::<i64>() {
                Ok(n) => Some(n),
                Err(_) => {
                    self.invalid(at, format!("{what} must be an integer, found `{lexeme}`"));
                    None
                }
            },
            _ => {
                self.expected(idx, at, what, "an integer");
                None
            }
        }
    }

    pub fn number<'a>(&mut self, idx: NodeIdx, at: impl Into<At<'a>>, what: impl Display) -> Option<f64> {
        match self.tree.value(idx) {
            JsonValue::Number(lexeme) => lexeme.parse::<f64>().ok(),
            _ => {
                self.expected(idx, at, what, "a number");
                None
            }
        }
    }

    /// An array of strings; wrong items are reported and skipped.
    pub fn strings<'a>(&mut self, idx: NodeIdx, at: impl Into<At<'a>>, what: impl Display) -> Option<Vec<String>> {
        let at = at.into();
        let items = self.array(idx, at, &what)?;
        let mut out = Vec::with_capacity(items.len());
        for (i, &item) in items.iter().enumerate() {
            match self.tree.value(item) {
                JsonValue::String(s) => out.push(s.to_string()),
                // Described only when wrong: lowering reads millions of these.
                _ => self.expected(item, &at.anchor().at(i), format_args!("each of {what}"), "a string"),
            }
        }
        Some(out)
    }

    /// Reports every key of `members` that is not in `known` (with did-you-mean).
    pub fn unknown_keys<'a>(
        &mut self,
        members: Members<'_>,
        at: impl Into<At<'a>>,
        what: impl Display,
        known: &[&str],
    ) {
        // A blocking unknown field (LWIR) is a fault to repair; a warning (drafts) is kept.
        let consequence = if self.codes.unknown_field.blocking() {
            "the format defines no such field"
        } else {
            "it is kept in the authored hash but has no meaning"
        };
        // `$schema` at the top level names the document's JSON Schema for editors.
        let at = at.into();
        let top_level = at.is_root();
        for member in members {
            if top_level && member.key == crate::schemas::SCHEMA_KEY {
                continue;
            }
            if !known.contains(&member.key) {
                let help = suggest::did_you_mean(member.key, known.iter().copied());
                self.findings.push(
                    Finding::new(
                        self.codes.unknown_field,
                        at.anchor().at(member.key),
                        format!("unknown field `{}` in {what}; {consequence}", member.key),
                    )
                    .help(help),
                );
            }
        }
    }

    /// Reports a missing required key.
    pub fn missing<'a>(&mut self, at: impl Into<At<'a>>, what: impl Display, key: &str) {
        self.invalid(at, format!("{what} lacks the required field `{key}`"));
    }
}

/// The value of `key` among `members`.
pub fn member(members: Members<'_>, key: &str) -> Option<NodeIdx> {
    members.get(key).map(|m| m.value)
}
