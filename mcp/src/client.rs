//! The client side: an MCP server that `little` starts over stdio (its own process group),
//! asks, and stops. Every wait is bounded; a server that does not start, does not answer
//! in time, or answers with something that is not MCP is an error quoting what it printed.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;

use crate::transport::{Lines, OnFault};

/// What a server may print on stderr that an error quotes.
const STDERR_KEPT: usize = 4096;
/// Longest line a server may send (a tool list with large schemas fits).
const MAX_LINE: usize = 64 << 20;

/// A running MCP server and the session with it.
pub struct Server {
    what: String,
    runtime: tokio::runtime::Runtime,
    session: Option<RunningService<RoleClient, ()>>,
    child: Child,
    stderr: Arc<Mutex<Vec<u8>>>,
    not_mcp: Arc<Mutex<Option<String>>>,
    timeout: Duration,
}

impl Server {
    /// Starts `command` (named `what` in errors) and opens a session within `timeout`.
    pub fn start(mut command: Command, what: &str, timeout: Duration) -> Result<Server, String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the MCP client's runtime: {e}"))?;
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
        let mut child = command.spawn().map_err(|e| format!("the MCP server `{what}` did not start: {e}"))?;
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let mut pipe = child.stderr.take().expect("stderr is piped");
        let kept = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            while let Ok(n @ 1..) = pipe.read(&mut chunk) {
                let mut kept = kept.lock().unwrap_or_else(PoisonError::into_inner);
                let room = STDERR_KEPT.saturating_sub(kept.len());
                kept.extend_from_slice(&chunk[..n.min(room)]);
            }
        });
        let not_mcp = Arc::new(Mutex::new(None));
        let transport = Lines::<RoleClient>::new(
            child.stdout.take().expect("stdout is piped"),
            child.stdin.take().expect("stdin is piped"),
            MAX_LINE,
            OnFault::Stop(Arc::clone(&not_mcp)),
        );
        let mut server = Server { what: what.to_string(), runtime, session: None, child, stderr, not_mcp, timeout };
        let started = server.runtime.block_on(async { tokio::time::timeout(timeout, ().serve(transport)).await });
        match started {
            Ok(Ok(session)) => server.session = Some(session),
            Ok(Err(e)) => return Err(server.failure(&format!("did not open an MCP session ({e})"))),
            Err(_) => return Err(server.failure(&format!("did not answer within {}", seconds(timeout)))),
        }
        Ok(server)
    }

    /// Every tool the server lists, as `tools/list` gives it.
    pub fn tools(&mut self) -> Result<Vec<Value>, String> {
        let session = self.session.as_ref().expect("a started server has a session");
        let listed =
            self.runtime.block_on(async { tokio::time::timeout(self.timeout, session.peer().list_all_tools()).await });
        match listed {
            Ok(Ok(tools)) => Ok(tools.iter().map(|t| serde_json::to_value(t).expect("tools serialize")).collect()),
            Ok(Err(e)) => Err(self.failure(&format!("did not list its tools ({e})"))),
            Err(_) => Err(self.failure(&format!("did not list its tools within {}", seconds(self.timeout)))),
        }
    }

    /// Calls tool `name`: the `CallToolResult` as JSON.
    pub fn call(&mut self, name: &str, arguments: JsonObject) -> Result<Value, String> {
        let session = self.session.as_ref().expect("a started server has a session");
        let mut request = CallToolRequestParams::new(name.to_string());
        request.arguments = Some(arguments);
        let called = self
            .runtime
            .block_on(async { tokio::time::timeout(self.timeout, session.peer().call_tool(request)).await });
        match called {
            Ok(Ok(result)) => Ok(serde_json::to_value(result).expect("results serialize")),
            Ok(Err(e)) => Err(self.failure(&format!("failed the call of `{name}` ({e})"))),
            Err(_) => {
                Err(self.failure(&format!("did not answer the call of `{name}` within {}", seconds(self.timeout))))
            }
        }
    }

    /// An error about the server: what went wrong, why when it exited or spoke no MCP,
    /// and what it printed on stderr.
    fn failure(&mut self, what_happened: &str) -> String {
        let mut message = format!("the MCP server `{}` {what_happened}", self.what);
        if let Some(said) = self.not_mcp.lock().unwrap_or_else(PoisonError::into_inner).take() {
            message += &format!("; it does not speak MCP: {said}");
        }
        // Give an exiting server a moment to be seen as exited, and its stderr to be read.
        std::thread::sleep(Duration::from_millis(50));
        if let Ok(Some(status)) = self.child.try_wait() {
            message += &format!("; it exited ({status})");
        }
        let printed =
            String::from_utf8_lossy(&self.stderr.lock().unwrap_or_else(PoisonError::into_inner)).trim().to_string();
        if !printed.is_empty() {
            message += &format!("; it printed:\n{printed}");
        }
        message
    }
}

impl Drop for Server {
    /// Closes the session (the server's stdin), gives the server a moment to exit, then
    /// kills its process group.
    fn drop(&mut self) {
        if let Some(session) = self.session.take() {
            let _ = self
                .runtime
                .block_on(async { tokio::time::timeout(Duration::from_millis(500), session.cancel()).await });
        }
        for _ in 0..20 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        // SAFETY: kill(2) on the process group this child leads; no memory is involved.
        unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

fn seconds(duration: Duration) -> String {
    format!("{} s", duration.as_secs_f64())
}

/// The tools of the stdio MCP servers `commands` (each run as `sh -c CMD`, one after the
/// other, each stopped once listed), as the pipeline's registry: a tool's name is its id.
pub fn registry(commands: &[String], timeout: Duration) -> Result<little_pipeline::Registry, String> {
    let mut registry = little_pipeline::Registry::default();
    for command in commands {
        let mut shell = Command::new("sh");
        shell.arg("-c").arg(command);
        let mut server = Server::start(shell, command, timeout)?;
        for tool in server.tools()? {
            let text = |key: &str| tool.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
            registry.tools.push(little_pipeline::OfferedTool {
                source: command.clone(),
                id: text("name"),
                description: text("description"),
                input_schema: tool.get("inputSchema").cloned().unwrap_or_else(|| serde_json::json!({})),
                output_schema: tool.get("outputSchema").cloned(),
            });
        }
    }
    Ok(registry)
}
