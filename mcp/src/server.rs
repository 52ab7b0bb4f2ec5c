//! The MCP server: tools (`tools.rs`) run on tokio's blocking threads, one call a
//! thread, a panic caught there; resources under `little://`; the client's roots asked
//! for when a call reads a file (by a `roots/list` request in a session that began with
//! `initialize`, by an input request in a 2026-07-28 session).

// Roots are deprecated in the 2026-07-28 protocol (SEP-2577), yet they are how the coding
// agents of today tell a server which folders it may read.
#![allow(deprecated)]

use std::path::PathBuf;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, InputRequest, InputRequests,
    InputRequiredResult, ListResourcesResult, ListRootsResult, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ResourceContents,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

use crate::Limits;
use crate::tools::{self, Answer, Refusal, Roots};

/// The key of the roots input request in a 2026-07-28 session.
const ROOTS_INPUT: &str = "roots";

pub struct LittleServer {
    pub limits: Limits,
    /// The working directory, the one root of a client without roots.
    pub cwd: PathBuf,
}

impl ServerHandler for LittleServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities: ServerCapabilities =
            serde_json::from_value(json!({ "tools": {}, "resources": {} })).expect("capabilities deserialize");
        let mut info = ServerConfig::new(capabilities);
        info.server_info = rmcp::model::Implementation::new("little", env!("CARGO_PKG_VERSION"));
        info.instructions = Some(
            "little checks agent workflows (drafts, LWIR, definitions) before they run: call `check` with a \
             document's `text` or `path` and read the diagnostics; `explain` a code for its page; `families` \
             lists what a node may be."
                .into(),
        );
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools: Vec<Tool> = tools::descriptors()
            .iter()
            .map(|tool| serde_json::from_value(tool.clone()).expect("tools.json describes tools"))
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !tools::descriptors().iter().any(|t| t["name"] == *request.name) {
            return Err(ErrorData::invalid_params(format!("little has no tool `{}`", request.name), None));
        }
        let arguments = request.arguments.clone().unwrap_or_default();
        let roots = if tools::reads_files(&arguments) {
            match self.roots(&request, &context).await {
                Ok(Some(roots)) => roots,
                Ok(None) => return Ok(ask_for_roots()),
                Err(refusal) => return Ok(error_result(refusal).into()),
            }
        } else {
            Roots { dirs: vec![self.cwd.clone()], from_client: false }
        };
        let limits = self.limits;
        let name = request.name.to_string();
        Ok(run_tool(move || tools::call(&name, &arguments, &roots, &limits)).await.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let resources = crate::resources::list()
            .into_iter()
            .map(|r| serde_json::from_value(r).expect("resources deserialize"))
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let Some((text, mime)) = crate::resources::read(&request.uri) else {
            return Err(ErrorData::resource_not_found(
                format!("little has no resource `{}`; `resources/list` lists them", request.uri),
                None,
            ));
        };
        let contents: ResourceContents =
            serde_json::from_value(json!({ "uri": request.uri, "mimeType": mime, "text": text }))
                .expect("resource contents deserialize");
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}

impl LittleServer {
    /// Where this call may read: the client's roots when it has them (`None`: ask for
    /// them first), else the working directory.
    async fn roots(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<Option<Roots>, Refusal> {
        let has_roots = context.client_capabilities().is_some_and(|c| c.roots.is_some());
        if !has_roots {
            return Ok(Some(Roots { dirs: vec![self.cwd.clone()], from_client: false }));
        }
        let inline = context.protocol_version().is_none_or(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        let listed: ListRootsResult = if inline {
            let Some(answer) = request.input_responses.as_ref().and_then(|r| r.get(ROOTS_INPUT)) else {
                return Ok(None);
            };
            serde_json::from_value(answer.clone())
                .map_err(|e| Refusal::new("roots.invalid", format!("the client's roots are not a roots list: {e}")))?
        } else {
            let asked = context.peer.list_roots().await;
            asked.map_err(|e| Refusal::new("roots.unavailable", format!("the client did not list its roots: {e}")))?
        };
        let dirs = listed.roots.iter().filter_map(|root| directory_of(&root.uri)).collect();
        Ok(Some(Roots { dirs, from_client: true }))
    }
}

/// Runs a tool's work on a blocking thread: its result, or its refusal, or its panic, as a
/// tool result. A panic fails this call only; the server lives on.
async fn run_tool(work: impl FnOnce() -> Result<Answer, Refusal> + Send + 'static) -> CallToolResult {
    match tokio::task::spawn_blocking(work).await {
        Ok(Ok(answer)) => success_result(answer),
        Ok(Err(refusal)) => error_result(refusal),
        Err(join) => error_result(Refusal::new("internal", format!("little failed: {join}; this is a bug in little"))),
    }
}

/// The directory a `file://` root names, canonical when it exists.
fn directory_of(uri: &str) -> Option<PathBuf> {
    let path = uri.strip_prefix("file://")?;
    let path = path.strip_prefix("localhost").unwrap_or(path);
    let path = PathBuf::from(percent_decoded(path)?);
    Some(path.canonicalize().unwrap_or(path))
}

fn percent_decoded(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn ask_for_roots() -> CallToolResponse {
    let list: InputRequest =
        serde_json::from_value(json!({ "method": "roots/list" })).expect("a roots/list request deserializes");
    let requests: InputRequests = [(ROOTS_INPUT.to_string(), list)].into_iter().collect();
    InputRequiredResult::from_input_requests(requests).into()
}

fn text_block(text: String) -> ContentBlock {
    serde_json::from_value(json!({ "type": "text", "text": text })).expect("a text block deserializes")
}

fn success_result(answer: Answer) -> CallToolResult {
    // Not `CallToolResult::structured`, which would write the whole result again as text.
    let mut result = CallToolResult::success(vec![text_block(answer.text)]);
    result.structured_content = Some(answer.structured);
    result
}

/// An error result: the message a model reads, then the error as JSON for a program
/// (`code`, `message`, and the report of what blocks when something does).
fn error_result(refusal: Refusal) -> CallToolResult {
    let mut error = json!({ "code": refusal.code, "message": refusal.message });
    if let Some(report) = refusal.report {
        error["report"] = report;
    }
    let message = format!("error ({}): {}", refusal.code, refusal.message);
    CallToolResult::error(vec![text_block(message), text_block(Value::to_string(&json!({ "error": error })))])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_in_a_tool_is_an_error_result_and_the_next_call_runs() {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).build().unwrap();
        let panicked = runtime.block_on(run_tool(|| panic!("a bug")));
        assert_eq!(panicked.is_error, Some(true));
        let text = serde_json::to_value(&panicked.content).unwrap()[0]["text"].as_str().unwrap().to_string();
        assert!(text.starts_with("error (internal): little failed:") && text.contains("a bug"), "{text}");
        let next = runtime.block_on(run_tool(|| Ok(Answer { structured: json!({ "ok": true }), text: "ok".into() })));
        assert_eq!(next.is_error, Some(false));
        assert_eq!(next.structured_content, Some(json!({ "ok": true })));
    }

    #[test]
    fn a_file_root_is_its_decoded_directory() {
        assert_eq!(directory_of("file:///no/such%20dir"), Some(PathBuf::from("/no/such dir")));
        assert_eq!(directory_of("https://example.com/"), None);
    }
}
