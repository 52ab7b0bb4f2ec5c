//! A tool registry from outside the definition: the descriptors that MCP servers list
//! (`--tools-from-mcp`), handed down as plain data, joined to the definition's own
//! `tools` before anything is hashed, so that the same tools give the same hashes however
//! they were found.

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
                // Hashed as `true` (any output); a `tool.call` step on it is refused first.
                output_schema: offered.output_schema.clone().unwrap_or(Value::Bool(true)),
            });
        }
        Ok(tools)
    }

    /// Refuses an LWIR whose `tool.call` step calls a tool its source lists without an
    /// output schema: the step's output could not be checked against it.
    pub fn outputs_for_steps(&self, lwir: &[u8]) -> Result<(), Failure> {
        let Ok(document) = serde_json::from_slice::<Value>(lwir) else { return Ok(()) };
        for step in document["steps"].as_array().into_iter().flatten() {
            if step["uses"] != "tool.call" {
                continue;
            }
            let Some(tool) = step["with"]["tool"].as_str() else { continue };
            if let Some(offered) = self.tools.iter().find(|t| t.id == tool && t.output_schema.is_none()) {
                return Err(Failure::Tool(format!(
                    "step `{}` calls `{tool}`, which `{}` lists without an output schema: a `tool.call` step needs the \
                     tool's output schema; give the tool one in its server, or declare it in the definition's `tools`",
                    step["id"].as_str().unwrap_or_default(),
                    offered.source
                )));
            }
        }
        Ok(())
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
    fn a_tool_call_step_needs_its_tools_output_schema() {
        let registry =
            Registry { tools: vec![offered("srv", "plain", None), offered("srv", "typed", Some(json!({})))] };
        assert_eq!(registry.joined(&[]).unwrap()[0].output_schema, Value::Bool(true));
        let lwir = |tool: &str| {
            serde_json::to_vec(&json!({ "steps": [
                { "id": "s1", "uses": "ai.generate", "with": { "tool": "plain" } },
                { "id": "s2", "uses": "tool.call", "with": { "tool": tool } },
            ] }))
            .unwrap()
        };
        assert!(registry.outputs_for_steps(&lwir("typed")).is_ok());
        let Err(Failure::Tool(message)) = registry.outputs_for_steps(&lwir("plain")) else {
            panic!("expected a refusal")
        };
        assert!(message.contains("step `s2` calls `plain`, which `srv` lists without an output schema"), "{message}");
    }
}
