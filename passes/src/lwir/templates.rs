//! Templates, `{{ EXPR }}` in any string under a step's `with` (docs/reference/formats.md#lwir):
//! `template.syntax`, `template.unknown_reference`, `template.not_upstream` and
//! `template.unknown_field`, one finding at most per template.
//!
//! `with.files` of `code.run` is not scanned: file contents are code pinned by their
//! sha256, which the runtime does not rewrite (docs/decisions.md).

use little_diagnostics::{Code, suggest};
use little_frontend::anchor::{Anchor, Finding};
use little_frontend::lwir::StepCall;
use serde_json::Value;

use crate::db::SourceFile;

use super::graph::lwir_graph;
use super::steps::step_findings;
use super::{Step, lwir_ir, schemas};

/// A parsed template expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reference<'s> {
    Input { fields: Vec<&'s str> },
    Step { id: &'s str, fields: Vec<&'s str> },
}

/// One `{{ … }}` of a string: the expression, or why it is malformed.
pub fn templates(text: &str) -> Vec<Result<(&str, Reference<'_>), String>> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        let after = &rest[open + 2..];
        let Some(close) = after.find("}}") else {
            out.push(Err("`{{` has no closing `}}`".to_string()));
            break;
        };
        let inner = &after[..close];
        rest = &after[close + 2..];
        out.push(parse_expression(inner.trim()).map(|r| (inner.trim(), r)));
    }
    out
}

const FORMS: &str = "expected `input.FIELD…` or `steps.ID.output.FIELD…`";

fn parse_expression(expr: &str) -> Result<Reference<'_>, String> {
    if expr.contains("{{") {
        return Err(format!("`{{{{ {expr} }}}}` opens a template inside a template"));
    }
    let segments: Vec<&str> = expr.split('.').collect();
    let valid = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if let Some(bad) = segments.iter().find(|s| !valid(s)) {
        let what = if bad.is_empty() { "an empty name".to_string() } else { format!("`{bad}`") };
        return Err(format!("`{{{{ {expr} }}}}` is not a reference ({what} is not a name): {FORMS}"));
    }
    match segments.as_slice() {
        ["input", fields @ ..] => Ok(Reference::Input { fields: fields.to_vec() }),
        ["steps", id, "output", fields @ ..] => Ok(Reference::Step { id, fields: fields.to_vec() }),
        ["steps", id, ..] => Err(format!("`{{{{ {expr} }}}}` must read `steps.{id}.output…`: {FORMS}")),
        _ => Err(format!("`{{{{ {expr} }}}}` is not a reference: {FORMS}")),
    }
}

/// The first field of `fields` that `schema` rules out (docs/reference/formats.md#lwir: an object schema that
/// lists `properties` and does not set `additionalProperties` to `true` or a schema),
/// with the fields it declares there.
pub fn unknown_field(schema: &Value, fields: &[&str]) -> Option<(usize, Vec<String>)> {
    let mut current = schema;
    for (i, field) in fields.iter().enumerate() {
        let object = current.as_object()?;
        if let (Ok(_), Some(items)) = (field.parse::<usize>(), object.get("items")) {
            current = items;
            continue;
        }
        let properties = object.get("properties")?.as_object()?;
        if let Some(next) = properties.get(*field) {
            current = next;
            continue;
        }
        if matches!(object.get("additionalProperties"), Some(Value::Bool(true) | Value::Object(_))) {
            return None;
        }
        return Some((i, properties.keys().cloned().collect()));
    }
    None
}

/// Every string under `with` (anchored below `base`) that holds a `{{`, walked with an
/// explicit stack in document order.
fn template_strings<'v>(with: &'v Value, base: &Anchor, skip_files: bool) -> Vec<(Anchor, &'v str)> {
    let mut out = Vec::new();
    let mut stack: Vec<(Anchor, &'v Value, bool)> = vec![(base.clone(), with, true)];
    while let Some((at, value, top)) = stack.pop() {
        match value {
            Value::String(s) if s.contains("{{") => out.push((at, s.as_str())),
            Value::Array(items) => stack.extend(items.iter().enumerate().rev().map(|(i, v)| (at.at(i), v, false))),
            Value::Object(map) => stack.extend(
                map.iter()
                    .rev()
                    .filter(|(key, _)| !(skip_files && top && *key == "files"))
                    .map(|(key, v)| (at.at(key.as_str()), v, false)),
            ),
            _ => {}
        }
    }
    out
}

#[salsa::tracked(returns(ref))]
pub fn template_findings<'db>(db: &'db dyn salsa::Database, file: SourceFile, step: Step<'db>) -> Vec<Finding> {
    let decl = step.decl(db);
    let Some(with) = &decl.with else { return Vec::new() };
    let Some(lwir) = lwir_ir(db, file) else { return Vec::new() };
    let graph = lwir_graph(db, file);
    let input_valid = schemas::header_schemas(db, file).input_valid;
    let Some(me) = lwir.steps.iter().position(|s| *s == step) else { return Vec::new() };
    let base = step.anchor(db).at("with");
    let mut findings = Vec::new();
    let skip_files = matches!(decl.call, StepCall::CodeRun { .. });
    for (at, text) in template_strings(with, &base, skip_files) {
        for template in templates(text) {
            let finding = match template {
                Err(message) => Some(Finding::new(Code::TemplateSyntax, at.clone(), message)),
                Ok((expr, reference)) => {
                    check_reference(db, lwir, graph, input_valid, me as u32, expr, &reference, &at)
                }
            };
            findings.extend(finding.map(|f| f.node(&decl.id)));
        }
    }
    findings
}

#[allow(clippy::too_many_arguments)] // one template's whole context, read once per step
fn check_reference<'db>(
    db: &'db dyn salsa::Database,
    lwir: &super::LwirIr<'db>,
    graph: &super::graph::LwirGraph,
    input_valid: bool,
    me: u32,
    expr: &str,
    reference: &Reference<'_>,
    at: &Anchor,
) -> Option<Finding> {
    let (schema, fields, whose) = match reference {
        Reference::Input { fields } => {
            let schema = lwir.header.input_schema.as_ref().filter(|_| input_valid)?;
            (&schema.value, fields, "the workflow's input schema".to_string())
        }
        Reference::Step { id, fields } => {
            let Some(target) = graph.index_of(id) else {
                // A need naming the same missing step is already `graph.dangling_edge`.
                if graph.dangling_names[me as usize].iter().any(|n| n == id) {
                    return None;
                }
                return Some(
                    Finding::new(
                        Code::TemplateUnknownReference,
                        at.clone(),
                        format!("`{{{{ {expr} }}}}` reads step `{id}`, but no step has that id"),
                    )
                    .help(suggest::did_you_mean(id, graph.ids.iter().map(String::as_str))),
                );
            };
            // A step with a dangling need has an unknown upstream: not judged.
            if graph.dangling[me as usize] {
                return None;
            }
            if !graph.is_upstream(me, target) {
                let reader = &graph.ids[me as usize];
                return Some(Finding::new(
                    Code::TemplateNotUpstream,
                    at.clone(),
                    format!(
                        "`{{{{ {expr} }}}}` reads step `{id}`, which is not in the `needs` of `{reader}` \
                         (directly or transitively): its output may not exist yet"
                    ),
                ));
            }
            let target_step = lwir.steps[target as usize];
            if !step_findings(db, target_step).output_schema_valid {
                return None;
            }
            let schema = target_step.decl(db).output_schema.as_ref()?;
            (&schema.value, fields, format!("the output schema of step `{id}`"))
        }
    };
    let (position, declared) = unknown_field(schema, fields)?;
    let field = fields[position];
    let listed = declared.iter().map(|d| format!("`{d}`")).collect::<Vec<_>>().join(", ");
    Some(
        Finding::new(
            Code::TemplateUnknownField,
            at.clone(),
            format!("`{{{{ {expr} }}}}` reads field `{field}`, which {whose} does not declare (it declares {listed})"),
        )
        .help(suggest::did_you_mean(field, declared.iter().map(String::as_str))),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions_parse_into_references() {
        let found = templates("a {{ input.ticketId }} b {{steps.x-1.output.summary.text}}");
        assert_eq!(found[0], Ok(("input.ticketId", Reference::Input { fields: vec!["ticketId"] })));
        assert_eq!(
            found[1],
            Ok(("steps.x-1.output.summary.text", Reference::Step { id: "x-1", fields: vec!["summary", "text"] }))
        );
    }

    #[test]
    fn malformed_templates_are_errors() {
        for text in [
            "{{ input.a",
            "{{ summary }}",
            "{{ steps.a.summary }}",
            "{{ input..a }}",
            "{{ input.a | upper }}",
            "{{ {{ input.a }}",
        ] {
            assert!(templates(text).iter().any(Result::is_err), "{text}");
        }
        assert!(templates("no templates }} here").is_empty());
    }

    #[test]
    fn fields_follow_properties_and_additional_properties() {
        let closed = serde_json::json!({ "type": "object", "properties": { "a": { "properties": { "b": {} } } } });
        assert_eq!(unknown_field(&closed, &["c"]), Some((0, vec!["a".to_string()])));
        assert_eq!(unknown_field(&closed, &["a", "c"]), Some((1, vec!["b".to_string()])));
        assert_eq!(unknown_field(&closed, &["a", "b", "anything"]), None);
        let open = serde_json::json!({ "properties": { "a": {} }, "additionalProperties": true });
        assert_eq!(unknown_field(&open, &["c"]), None);
        let schema_open =
            serde_json::json!({ "properties": { "a": {} }, "additionalProperties": { "type": "string" } });
        assert_eq!(unknown_field(&schema_open, &["c"]), None);
        assert_eq!(unknown_field(&serde_json::json!({ "type": "object" }), &["c"]), None);
    }
}
