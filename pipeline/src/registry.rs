//! A tool registry from outside the definition: the descriptors that MCP servers list
//! (`--tools-from-mcp`), handed down as plain data, joined to the definition's own
//! `tools` before anything is hashed, so that the same tools give the same hashes however
//! they were found.

use std::collections::BTreeMap;

use little_frontend::definition::ToolDecl;
use serde_json::Value;

use crate::Failure;

/// One tool offered by a source (an MCP server's command).
#[derive(Clone, Debug, PartialEq)]
pub struct OfferedTool {
    /// What offered it, as errors name it: the server's command.
    pub source: String,
    pub id: String,
    pub description: String,
    pub input_schema: Value,
    /// `None`: the source gives no output schema, which a `tool.call` step needs.
    pub output_schema: Option<Value>,
}

/// The tools of every source, in the order they were listed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Registry {
    pub tools: Vec<OfferedTool>,
}

impl Registry {
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The definition's tools with this registry's added. An id offered twice (by two
    /// sources, or by a source and the definition) is an error naming both.
    pub fn joined(&self, inline: &[ToolDecl]) -> Result<Vec<ToolDecl>, Failure> {
        let mut tools = inline.to_vec();
        for (i, offered) in self.tools.iter().enumerate() {
            let earlier = self.tools[..i].iter().find(|t| t.id == offered.id).map(|t| format!("`{}`", t.source));
            let twice = earlier
                .or_else(|| inline.iter().any(|t| t.id == offered.id).then(|| "the definition's `tools`".to_string()));
            if let Some(first) = twice {
                return Err(Failure::Tool(format!(
                    "tool `{}` is offered by {first} and by `{}`: the registry must name each tool once",
                    offered.id, offered.source
                )));
            }
            tools.push(ToolDecl {
                id: offered.id.clone(),
                description: offered.description.clone(),
                input_schema: offered.input_schema.clone(),
                // Hashed as `true` (any output); a `tool.call` step on it is refused by validation.
                output_schema: offered.output_schema.clone().unwrap_or(Value::Bool(true)),
            });
        }
        Ok(tools)
    }

    /// The tools listed without an output schema, each with its source: a `tool.call`
    /// step on one is `pipeline.tool_without_output_schema` (`register::validate`).
    pub fn without_output_schema(&self) -> BTreeMap<String, String> {
        self.tools.iter().filter(|t| t.output_schema.is_none()).map(|t| (t.id.clone(), t.source.clone())).collect()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn offered(source: &str, id: &str, output_schema: Option<Value>) -> OfferedTool {
        OfferedTool {
            source: source.into(),
            id: id.into(),
            description: format!("{id} from {source}"),
            input_schema: json!({ "type": "object" }),
            output_schema,
        }
    }

    #[test]
    fn a_tool_offered_twice_is_refused_naming_both_sources() {
        let inline = [ToolDecl { id: "a".into(), ..ToolDecl::default() }];
        let registry = Registry { tools: vec![offered("one", "b", Some(json!({})))] };
        let joined = registry.joined(&inline).unwrap();
        assert_eq!(joined.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(joined[1].description, "b from one");

        let twice = Registry { tools: vec![offered("one", "b", None), offered("two", "b", None)] };
        let Err(Failure::Tool(message)) = twice.joined(&inline) else { panic!("expected a refusal") };
        assert!(message.contains("`b` is offered by `one` and by `two`"), "{message}");
        let also_inline = Registry { tools: vec![offered("one", "a", None)] };
        let Err(Failure::Tool(message)) = also_inline.joined(&inline) else { panic!("expected a refusal") };
        assert!(message.contains("offered by the definition's `tools` and by `one`"), "{message}");
    }

    #[test]
    fn a_tool_without_an_output_schema_is_hashed_as_any_output_and_named_with_its_source() {
        let registry =
            Registry { tools: vec![offered("srv", "plain", None), offered("srv", "typed", Some(json!({})))] };
        assert_eq!(registry.joined(&[]).unwrap()[0].output_schema, Value::Bool(true));
        assert_eq!(registry.without_output_schema().into_iter().collect::<Vec<_>>(), [("plain".into(), "srv".into())]);
    }
}
