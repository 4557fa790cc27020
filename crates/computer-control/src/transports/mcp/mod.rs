//! The MCP transport over the official SDK: one handler ([`McpServer`]) served over
//! stdio (`serve --transport mcp`, [`serve_stdio`]) and over Streamable HTTP
//! (`--transport mcp-http`, and `/mcp` under `--transport http`, see [`streamable`]).
//! What runs beside it (the operator channel) is the composition root's choice.

mod approval_wait;
mod check_tool;
mod outputs;
mod portable;
mod presentation;
mod progress;
mod results;
mod schemas;
mod server;
pub mod streamable;

use anyhow::Context;
use rmcp::ServiceExt;

pub use server::McpServer;

/// The MCP session on stdin/stdout, to its end; governed tools act for the host's
/// configured principal. When both are pipes (as every MCP host starts a server), they
/// are read and written by the runtime's reactor on descriptions of their own, not on
/// tokio's blocking pool: a thread hand-off fewer each way per message, which on an
/// idle machine is most of a call's cost (docs/PERFORMANCE.md).
pub async fn serve_stdio(server: McpServer) -> anyhow::Result<()> {
    let running = server
        .serve(rmcp::transport::stdio_pipes())
        .await
        .map_err(|e| anyhow::anyhow!("MCP initialize: {e}"))?;
    running.waiting().await.context("MCP service")?;
    Ok(())
}
