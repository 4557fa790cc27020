//! MCP over Streamable HTTP: the SDK's tower service, mounted by the HTTP transport at
//! `/mcp` (under `--transport http`, and alone under `--transport mcp-http`).
//!
//! It sits behind the HTTP transport's own guards — the Host/Origin check on the bound
//! port and the bearer tokens — so the SDK's loopback-only Host list is switched off
//! instead of being kept as a second, port-blind copy of the same rule.

use std::sync::Arc;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use super::McpServer;

/// The Streamable HTTP service: one [`McpServer`] clone per MCP session, all sharing
/// the process's engine and kernels. Open streams end with the process (the HTTP
/// transport stops waiting for them after its shutdown grace period).
pub fn service(server: McpServer) -> StreamableHttpService<McpServer, LocalSessionManager> {
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .with_max_request_body_bytes(crate::transports::MAX_MESSAGE);
    StreamableHttpService::new(
        move || Ok(server.for_http()),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}
