//! The MCP transport over the official SDK: one handler ([`McpServer`]) served over
//! stdio (`serve --transport mcp`) and over Streamable HTTP (`--transport mcp-http`,
//! and `/mcp` under `--transport http`, see [`streamable`]).

pub mod kernels;
mod outputs;
mod results;
mod schemas;
mod server;
pub mod streamable;

use anyhow::Context;
use rmcp::ServiceExt;

pub use kernels::Kernels;
pub use server::McpServer;

/// Serves MCP on stdin/stdout until the client closes it; governed tools act for the
/// host's configured principal.
pub fn serve_stdio(server: McpServer) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("tokio runtime")?;
    rt.block_on(async move {
        let running = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| anyhow::anyhow!("MCP initialize: {e}"))?;
        running.waiting().await.context("MCP service")?;
        anyhow::Ok(())
    })
}
