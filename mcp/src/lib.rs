//! `little` over the Model Context Protocol, on the official Rust SDK (`rmcp`): `little mcp`,
//! the compiler as a stdio server for coding agents, and the client that reads a tool
//! registry from MCP servers. The only crate with an async runtime: its entry points are
//! plain functions that run one.

pub mod client;
mod resources;
mod server;
mod tools;
mod transport;

use rmcp::ServiceExt;

pub use tools::descriptors;

/// The CLI's size limits, applied to every text and file a call reads.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Largest document, in bytes (a `text`, a file, a reader document).
    pub max_file_size: u64,
}

/// The tools of `little mcp` as `tools/list` gives them (`little schema mcp`).
pub fn tools_json() -> serde_json::Value {
    serde_json::Value::Array(descriptors().to_vec())
}

/// Serves MCP on stdin and stdout until the client closes stdin.
pub fn serve_stdio(limits: Limits) -> Result<(), String> {
    let cwd = std::env::current_dir().map_err(|e| format!("cannot read the working directory: {e}"))?;
    let cwd = cwd.canonicalize().unwrap_or(cwd);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the MCP server's runtime: {e}"))?;
    runtime.block_on(async move {
        // A line may carry a document at the size limit, escaped (twice its bytes at most
        // for the text little reads, and the request around it).
        let max_line =
            usize::try_from(limits.max_file_size.saturating_mul(2)).unwrap_or(usize::MAX).saturating_add(1 << 20);
        let transport = transport::Lines::<rmcp::RoleServer>::new(
            std::io::stdin(),
            std::io::stdout(),
            max_line,
            transport::OnFault::Answer,
        );
        let server = server::LittleServer { limits, cwd };
        let running = server.serve(transport).await.map_err(|e| format!("the MCP session did not start: {e}"))?;
        running.waiting().await.map_err(|e| format!("the MCP server stopped: {e}"))?;
        Ok(())
    })
}
