//! Later outer-loop cycles (docs/reference/formats.md#definition, the outer-loop file): `little plan --outer-loop FILE`
//! re-plans cycle N ≥ 2 of a run after the runtime's supervise step.
//!
//! The file: `{ "cycleNumber": N, "priorCycles": [{ "cycleNumber", "status", "output",
//! "summary"? }, …] }`, N in `2..=maxOuterCycles`, the prior cycles numbered 1..N-1 in order,
//! `status` a non-empty string, `output` any JSON, `summary` a string; unknown keys are
//! refused (they would change the hash unseen). The manifest's `outerLoopContextHash` is the
//! hash of the canonical JSON of `priorCycles` as written (cycle 1 has no such field).
//!
//! A bad file is a bad argument: a tool failure (exit 2) naming the file, line, column and
//! JSONPath of the first problem.

use std::path::Path;

use little_diagnostics::LineIndex;
use little_frontend::anchor::{Anchor, Resolver};
use little_frontend::json::{JsonTree, NodeIdx};
use serde_json::{Value, json};

use crate::Failure;
use crate::capabilities::hash;
use crate::documents::read_text;

/// A later cycle of the outer loop.
#[derive(Clone, Debug, PartialEq)]
pub struct OuterLoop {
    /// 2..=`max_cycles`.
    pub cycle_number: u64,
    /// The definition's `maxOuterCycles`.
    pub max_cycles: u64,
    /// The prior cycles 1..N-1, as written in the file.
    pub prior_cycles: Value,
}

impl OuterLoop {
    /// The manifest's `outerLoopContextHash`: the hash of the prior cycles' canonical JSON.
    pub fn context_hash(&self) -> String {
        hash(&self.prior_cycles)
    }

    /// The PlanTask's `outerLoopContext`.
    pub fn task_context(&self) -> Value {
        json!({
            "cycleNumber": self.cycle_number,
            "maxCycles": self.max_cycles,
            "isFinalCycle": self.cycle_number == self.max_cycles,
            "priorCycles": self.prior_cycles,
        })
    }
}

/// The cycle of a session: 1 without an outer-loop file.
pub fn cycle_of(outer_loop: Option<&OuterLoop>) -> u64 {
    outer_loop.map_or(1, |o| o.cycle_number)
}

const TOP_KEYS: &[&str] = &["cycleNumber", "priorCycles"];
const CYCLE_KEYS: &[&str] = &["cycleNumber", "status", "output", "summary"];

/// Reads and validates an outer-loop file against the definition's `maxOuterCycles`.
pub fn load_outer_loop(path: &Path, max_outer_cycles: u32) -> Result<OuterLoop, Failure> {
    let text = read_text(path, "outer-loop file")?;
    let display = path.display().to_string();
    let index = LineIndex::new(&text);
    let at = |offset: u32| {
        let (line, column) = index.line_col(&text, offset);
        format!("{display}:{line}:{column}")
    };
    let parsed = little_frontend::json::parse(&text);
    let first_error = parsed.diagnostics.iter().find(|d| d.blocking());
    let tree = match (parsed.tree, first_error) {
        (Some(tree), None) => tree,
        (_, error) => {
            let (place, message) = error.map_or((display.clone(), "not JSON".to_string()), |d| {
                (d.span.as_ref().map_or(display.clone(), |s| at(s.start)), d.message.clone())
            });
            return Err(Failure::Tool(format!("{place}: the outer-loop file is not valid JSON: {message}")));
        }
    };
    let checker = Checker { tree: &tree, resolver: Resolver::new(&tree), at: &at };
    checker.outer_loop(u64::from(max_outer_cycles)).map_err(Failure::Tool)
}

struct Checker<'a> {
    tree: &'a JsonTree,
    resolver: Resolver<'a>,
    at: &'a dyn Fn(u32) -> String,
}

impl Checker<'_> {
    /// An error at `anchor`: `file:line:column: $.path: message`.
    fn error(&self, anchor: &Anchor, message: impl std::fmt::Display) -> String {
        let (path, span) = self.resolver.locate(anchor);
        format!("{}: {path}: {message}", (self.at)(span.start))
    }

    /// The members of an object, refusing unknown keys (with a did-you-mean).
    fn object(
        &self,
        node: NodeIdx,
        anchor: &Anchor,
        allowed: &[&str],
        what: &str,
    ) -> Result<Vec<(String, NodeIdx)>, String> {
        let Some(members) = self.tree.value(node).as_object() else {
            return Err(self.error(
                anchor,
                format!("{what} must be an object, found {} (the file is {SHAPE})", self.tree.type_name(node)),
            ));
        };
        let mut found = Vec::new();
        for member in members {
            if !allowed.contains(&member.key) {
                let hint = little_diagnostics::suggest::did_you_mean(member.key, allowed.iter().copied())
                    .map(|h| format!("; {h}"))
                    .unwrap_or_default();
                return Err(self.error(
                    &anchor.at(member.key),
                    format!("unknown key `{}` in {what}{hint} (the file is {SHAPE})", member.key),
                ));
            }
            found.push((member.key.to_string(), member.value));
        }
        Ok(found)
    }

    fn required(
        &self,
        members: &[(String, NodeIdx)],
        key: &str,
        anchor: &Anchor,
        what: &str,
    ) -> Result<NodeIdx, String> {
        members
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, node)| *node)
            .ok_or_else(|| self.error(anchor, format!("{what} has no `{key}`")))
    }

    fn integer(&self, node: NodeIdx, anchor: &Anchor) -> Result<u64, String> {
        let value = self.tree.value(node);
        value.as_number().and_then(|n| n.parse::<u64>().ok()).ok_or_else(|| {
            let found = value.as_number().map_or_else(|| self.tree.type_name(node).to_string(), |n| format!("`{n}`"));
            self.error(anchor, format!("`cycleNumber` must be a positive integer, found {found}"))
        })
    }

    fn outer_loop(&self, max_cycles: u64) -> Result<OuterLoop, String> {
        let root = Anchor::root();
        let members = self.object(self.tree.root(), &root, TOP_KEYS, "the outer-loop file")?;
        let cycle_anchor = root.at("cycleNumber");
        let cycle_number =
            self.integer(self.required(&members, "cycleNumber", &root, "the outer-loop file")?, &cycle_anchor)?;
        if cycle_number < 2 {
            return Err(self.error(
                &cycle_anchor,
                format!("cycle {cycle_number} is not a later cycle: the first cycle is planned without `--outer-loop`"),
            ));
        }
        if cycle_number > max_cycles {
            return Err(self.error(
                &cycle_anchor,
                format!(
                    "cycle {cycle_number} is past the definition's `maxOuterCycles` ({max_cycles}): \
                     the outer loop has cycles 1..={max_cycles}"
                ),
            ));
        }
        let prior_anchor = root.at("priorCycles");
        let prior_node = self.required(&members, "priorCycles", &root, "the outer-loop file")?;
        let Some(items) = self.tree.value(prior_node).as_array() else {
            return Err(self.error(
                &prior_anchor,
                format!("`priorCycles` must be an array, found {}", self.tree.type_name(prior_node)),
            ));
        };
        if items.len() as u64 != cycle_number - 1 {
            return Err(self.error(
                &prior_anchor,
                format!(
                    "cycle {cycle_number} follows {} prior cycle(s) (1..={}), found {}",
                    cycle_number - 1,
                    cycle_number - 1,
                    items.len()
                ),
            ));
        }
        for (i, &item) in items.iter().enumerate() {
            let anchor = prior_anchor.at(i);
            let what = format!("prior cycle {}", i + 1);
            let fields = self.object(item, &anchor, CYCLE_KEYS, &what)?;
            let number_node = self.required(&fields, "cycleNumber", &anchor, &what)?;
            let number = self.integer(number_node, &anchor.at("cycleNumber"))?;
            if number != i as u64 + 1 {
                return Err(self.error(
                    &anchor.at("cycleNumber"),
                    format!(
                        "prior cycles are numbered 1..={} in order: expected {}, found {number}",
                        items.len(),
                        i + 1
                    ),
                ));
            }
            let status = self.required(&fields, "status", &anchor, &what)?;
            if self.tree.value(status).as_str().is_none_or(str::is_empty) {
                return Err(self.error(
                    &anchor.at("status"),
                    format!("`status` must be a non-empty string, found {}", self.tree.type_name(status)),
                ));
            }
            self.required(&fields, "output", &anchor, &what)?;
            if let Some((_, summary)) = fields.iter().find(|(k, _)| k == "summary")
                && !self.tree.value(*summary).is_string()
            {
                return Err(self.error(
                    &anchor.at("summary"),
                    format!("`summary` must be a string, found {}", self.tree.type_name(*summary)),
                ));
            }
        }
        Ok(OuterLoop { cycle_number, max_cycles, prior_cycles: self.tree.to_serde(prior_node) })
    }
}

const SHAPE: &str = r#"{ "cycleNumber": N, "priorCycles": [{ "cycleNumber", "status", "output", "summary"? }] }"#;
