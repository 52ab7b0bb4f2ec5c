//! `little verify LWIR --lock LOCK [--definition DEF]` (docs/reference/harness.md#verification-little-verify): the runtime's check
//! before it runs a step. The LWIR's WorkflowVersion must equal the lock's; with the
//! definition, the lock's capability manifest must equal what the definition gives now —
//! a changed tool descriptor, model slot or memory store is `pipeline.capability_drift`
//! at the lock's field that no longer holds.

use std::path::Path;
use std::sync::Arc;

use little_diagnostics::Code;
use little_frontend::anchor::{Anchor, Finding, Resolver};
use serde_json::Value;

use crate::documents::read_text;
use crate::register::capability_manifest;
use crate::{Failure, Located};

/// A verified LWIR: its WorkflowVersion id and hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    pub id: String,
    pub hash: String,
    /// Whether the capability manifest was compared too.
    pub capabilities_checked: bool,
}

pub fn verify(lwir: &Path, lock: &Path, definition: Option<&Path>) -> Result<Verified, Failure> {
    verify_with_registry(lwir, lock, definition, &crate::Registry::default())
}

/// [`verify`] with the definition's tools joined by those of `registry` (the tools MCP
/// servers offer now).
pub fn verify_with_registry(
    lwir: &Path,
    lock: &Path,
    definition: Option<&Path>,
    registry: &crate::Registry,
) -> Result<Verified, Failure> {
    let lock_text = read_text(lock, "lock")?;
    let lock_tree = little_frontend::json::parse(&lock_text)
        .tree
        .ok_or_else(|| Failure::Tool(format!("the lock `{}` is not JSON", lock.display())))?;
    let lock_document = lock_tree.to_serde(lock_tree.root());
    // `little lock -o` writes `{ workflowVersion, lock }`; a bare lock is read too.
    let (lock_value, lock_anchor) = match lock_document.get("lock") {
        Some(inner) if inner.is_object() => (inner.clone(), Anchor::root().at("lock")),
        _ => (lock_document.clone(), Anchor::root()),
    };
    let locked_hash = lock_value.get("workflowVersionHash").and_then(Value::as_str).ok_or_else(|| {
        Failure::Tool(format!("`{}` is not a compiler lock: it has no `workflowVersionHash`", lock.display()))
    })?;

    // The WorkflowVersion is `little check`'s: the hash of the LWIR's canonical JSON.
    let lwir_text = read_text(lwir, "LWIR")?;
    let tree = little_frontend::json::parse(&lwir_text)
        .tree
        .ok_or_else(|| Failure::Tool(format!("the LWIR `{}` is not JSON", lwir.display())))?;
    let version = little_passes::lwir::version_of_tree(&tree, false)
        .ok_or_else(|| Failure::Tool(format!("the LWIR `{}` has no canonical form", lwir.display())))?;
    if version.hash != locked_hash {
        return Err(Failure::Failed {
            reason: format!(
                "the LWIR's WorkflowVersion is {} ({}), the lock's is {locked_hash}: \
                 the LWIR was changed after it was locked, or belongs to another lock",
                version.id, version.hash
            ),
            located: Vec::new(),
        });
    }

    let Some(definition) = definition else {
        return Ok(Verified { id: version.id, hash: version.hash, capabilities_checked: false });
    };
    let capabilities = crate::capabilities_of(definition, None, registry, false)?;
    let now = capability_manifest(&capabilities);
    let locked = lock_value.get("capabilityManifest").cloned().unwrap_or(Value::Null);
    let drifted = tool_differences(&locked, &now).unwrap_or_else(|| differences(&locked, &now));
    if drifted.is_empty() {
        return Ok(Verified { id: version.id, hash: version.hash, capabilities_checked: true });
    }
    let resolver = Resolver::new(&lock_tree);
    let diagnostics = drifted
        .into_iter()
        .map(|(segments, locked, now)| {
            let mut anchor = lock_anchor.at("capabilityManifest");
            for segment in &segments {
                anchor = match segment {
                    Segment::Key(key) => anchor.at(key.as_str()),
                    Segment::Index(index) => anchor.at(*index),
                };
            }
            let field = segments.iter().map(Segment::to_string).collect::<String>();
            let tool = match segments.as_slice() {
                [Segment::Key(tools), Segment::Index(i), ..] if tools == "tools" => {
                    lock_value["capabilityManifest"]["tools"][*i]["id"].as_str().map(|id| (id, segments.last()))
                }
                _ => None,
            };
            let message = match tool {
                Some((id, Some(Segment::Key(key)))) if key == "id" => format!(
                    "the lock grants tool `{id}`, which the tool registry no longer offers (`capabilityManifest{field}`)"
                ),
                Some((id, Some(Segment::Key(key)))) => format!(
                    "tool `{id}` changed since the lock: its {} (`capabilityManifest{field}` was {}, is now {})",
                    changed_part(key),
                    show(&locked),
                    show(&now)
                ),
                _ => format!(
                    "the definition's capabilities changed since the lock: `capabilityManifest{field}` was {}, is now {}",
                    show(&locked),
                    show(&now)
                ),
            };
            let help = "plan and lock the workflow again with the current definition, or restore the definition it was locked with";
            resolver.resolve(Finding::new(Code::PipelineCapabilityDrift, anchor, message).help(Some(help.to_string())))
        })
        .collect();
    Err(Failure::Blocked(vec![Located { path: lock.display().to_string(), text: Arc::clone(&lock_text), diagnostics }]))
}

/// What a tool's changed hash covers.
fn changed_part(key: &str) -> &'static str {
    match key {
        "inputSchemaHash" => "input schema",
        "outputSchemaHash" => "output schema",
        // The descriptor hash alone: the schemas are the same, so the description changed.
        "descriptorHash" => "description",
        _ => "descriptor",
    }
}

/// The differences of two manifests with their tools matched by id rather than position:
/// a locked tool that is gone is one difference at its `id`, a changed one its changed
/// hashes (the descriptor's only when neither schema's changed). `None` when the tools
/// are not both lists of objects with ids.
fn tool_differences(locked: &Value, now: &Value) -> Option<Vec<(Vec<Segment>, Value, Value)>> {
    let ids = |tools: &Value| -> Option<Vec<(String, Value)>> {
        tools.as_array()?.iter().map(|t| Some((t.get("id")?.as_str()?.to_string(), t.clone()))).collect()
    };
    let (before, after) = (ids(&locked["tools"])?, ids(&now["tools"])?);
    let mut found = Vec::new();
    for (i, (id, tool)) in before.iter().enumerate() {
        let at = |key: &str| vec![Segment::Key("tools".into()), Segment::Index(i), Segment::Key(key.into())];
        let Some((_, current)) = after.iter().find(|(other, _)| other == id) else {
            found.push((at("id"), Value::String(id.clone()), Value::Null));
            continue;
        };
        let changed: Vec<&str> = ["inputSchemaHash", "outputSchemaHash"]
            .into_iter()
            .filter(|key| tool.get(*key) != current.get(*key))
            .collect();
        let changed = if changed.is_empty() && tool != current { vec!["descriptorHash"] } else { changed };
        for key in changed {
            found.push((
                at(key),
                tool.get(key).cloned().unwrap_or(Value::Null),
                current.get(key).cloned().unwrap_or(Value::Null),
            ));
        }
    }
    // A tool added since the lock is no drift: the lock grants only what it lists.
    let without_tools = |manifest: &Value| {
        let mut manifest = manifest.clone();
        if let Some(map) = manifest.as_object_mut() {
            map.remove("tools");
        }
        manifest
    };
    // In document order: the fields before `tools`, the tools, the fields after.
    let order: Vec<&String> = locked.as_object().map(|m| m.keys().collect()).unwrap_or_default();
    let tools_at = order.iter().position(|k| *k == "tools").unwrap_or(order.len());
    let (before, after): (Vec<_>, Vec<_>) =
        differences(&without_tools(locked), &without_tools(now)).into_iter().partition(|(at, _, _)| match at.first() {
            Some(Segment::Key(key)) => order.iter().position(|k| *k == key).is_some_and(|i| i < tools_at),
            _ => false,
        });
    Some(before.into_iter().chain(found).chain(after).collect())
}

/// One step into a JSON value.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Segment {
    Key(String),
    Index(usize),
}

impl std::fmt::Display for Segment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Segment::Key(key) => write!(f, ".{key}"),
            Segment::Index(index) => write!(f, "[{index}]"),
        }
    }
}

/// The innermost places where two values differ, in document order: a tool whose
/// descriptor changed is named by its `descriptorHash`, not as the whole manifest.
fn differences(locked: &Value, now: &Value) -> Vec<(Vec<Segment>, Value, Value)> {
    let mut found = Vec::new();
    let mut stack = vec![(Vec::new(), locked, now)];
    while let Some((at, a, b)) = stack.pop() {
        if a == b {
            continue;
        }
        let mut children = Vec::new();
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                let mut keys: Vec<&String> = x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))).collect();
                keys.dedup();
                for key in keys {
                    let mut path = at.clone();
                    path.push(Segment::Key(key.clone()));
                    children.push((path, x.get(key).unwrap_or(&Value::Null), y.get(key).unwrap_or(&Value::Null)));
                }
            }
            // Arrays of the same length compare element by element; otherwise an element
            // was added or removed, and the array is the difference.
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
                for (i, (p, q)) in x.iter().zip(y).enumerate() {
                    let mut path = at.clone();
                    path.push(Segment::Index(i));
                    children.push((path, p, q));
                }
            }
            _ => {
                found.push((at, a.clone(), b.clone()));
                continue;
            }
        }
        // Reversed onto the stack, so they come off in document order.
        stack.extend(children.into_iter().rev());
    }
    found
}

fn show(value: &Value) -> String {
    match value {
        Value::Null => "absent".to_string(),
        Value::String(s) => format!("`{s}`"),
        other => format!("`{other}`"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn differences_are_the_innermost_fields_in_order() {
        let locked = json!({ "a": 1, "tools": [{ "id": "t", "descriptorHash": "x" }, { "id": "u" }], "m": ["p"] });
        let now =
            json!({ "a": 1, "tools": [{ "id": "t", "descriptorHash": "y" }, { "id": "u" }], "m": ["p", "q"], "n": 2 });
        let found: Vec<String> = differences(&locked, &now)
            .into_iter()
            .map(|(at, _, _)| at.iter().map(Segment::to_string).collect())
            .collect();
        assert_eq!(found, [".tools[0].descriptorHash", ".m", ".n"]);
        assert!(differences(&locked, &locked).is_empty());
    }

    #[test]
    fn tools_are_matched_by_id_and_name_the_field_that_changed() {
        let tool = |id: &str, d: &str, i: &str| json!({ "id": id, "descriptorHash": d, "inputSchemaHash": i, "outputSchemaHash": "o" });
        let locked =
            json!({ "a": 1, "tools": [tool("t", "d1", "i1"), tool("u", "d2", "i2"), tool("v", "d3", "i3")], "z": 1 });
        let now =
            json!({ "a": 2, "tools": [tool("u", "d9", "i9"), tool("v", "d4", "i3"), tool("w", "d5", "i5")], "z": 2 });
        let found: Vec<String> = tool_differences(&locked, &now)
            .unwrap()
            .into_iter()
            .map(|(at, _, _)| at.iter().map(Segment::to_string).collect())
            .collect();
        // `t` is gone; `u`'s input schema changed (its descriptor with it); only `v`'s
        // description changed; `w` is new, which the lock does not grant.
        assert_eq!(found, [".a", ".tools[0].id", ".tools[1].inputSchemaHash", ".tools[2].descriptorHash", ".z"]);
        assert_eq!(changed_part("descriptorHash"), "description");
    }
}
