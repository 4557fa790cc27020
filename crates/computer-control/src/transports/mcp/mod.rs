//! The MCP transport over the official SDK: one handler ([`McpServer`]) served over
//! stdio (`serve --transport mcp`) and over Streamable HTTP (`--transport mcp-http`,
//! and `/mcp` under `--transport http`, see [`streamable`]).

mod check_tool;
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

/// The operator channel beside MCP over stdio (`--operator-listen`): what it serves
/// over. The engine and kernels are the ones the [`McpServer`] uses, so an operator's
/// approval is found by the agent's next `execute_action`.
pub struct StdioOperator {
    pub engine: cc_engine::Engine,
    pub kernels: std::sync::Arc<Kernels>,
    pub listen: crate::transports::http::operator::Listen,
}

/// Serves MCP on stdin/stdout until the client closes it; governed tools act for the
/// host's configured principal. With `operator`, the operator channel is bound first
/// (a busy port fails the start before any MCP message) and served beside it until
/// stdin closes or SIGINT/SIGTERM arrives; nothing but MCP ever goes to stdout.
pub fn serve_stdio(server: McpServer, operator: Option<StdioOperator>) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("tokio runtime")?;
    let Some(op) = operator else {
        return rt.block_on(mcp_stdio(server));
    };
    let r = rt.block_on(async move {
        let channel = crate::transports::http::operator::Channel::bind(&op.listen).await?;
        let until = async {
            tokio::select! {
                r = mcp_stdio(server) => r,
                _ = crate::transports::http::shutdown_signal() => Ok(()),
            }
        };
        crate::transports::http::operator::beside_stdio(&op.engine, op.kernels, channel, until)
            .await
    });
    // An operator's open event stream must not hold the exit.
    rt.shutdown_timeout(std::time::Duration::from_secs(1));
    r
}

/// The MCP session on stdin/stdout, to its end.
async fn mcp_stdio(server: McpServer) -> anyhow::Result<()> {
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| anyhow::anyhow!("MCP initialize: {e}"))?;
    running.waiting().await.context("MCP service")?;
    Ok(())
}
