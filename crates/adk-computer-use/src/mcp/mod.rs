//! [`ComputerUseMcpRuntime`]: the governed runtime as an MCP client of a Part A server
//! (`computer-control serve --transport mcp`, or the upstream computer-use-mcp server).
//!
//! It is [`GovernedRuntime`] over [`McpToolClient`], so it repeats the binding checks at
//! its own call boundary (see [`crate::governed`]): it keeps the exact envelope returned
//! by `preview_action`, and a direct `execute_action` is refused if any field of the
//! envelope changed after the preview, even when the action id still matches.

mod client;
mod result;
mod timeouts;

pub use client::McpToolClient;
pub use timeouts::McpTimeouts;

use crate::governed::{GovernedRuntime, RuntimeOptions};
use crate::runtime::RuntimeResult;

/// The MCP runtime.
pub type ComputerUseMcpRuntime = GovernedRuntime<McpToolClient>;

impl GovernedRuntime<McpToolClient> {
    /// Spawns a server process and drives it over stdio.
    pub async fn spawn(
        command: tokio::process::Command,
        options: RuntimeOptions,
    ) -> RuntimeResult<Self> {
        Ok(Self::with_caller(
            McpToolClient::spawn(command).await?,
            options,
        ))
    }

    /// Connects to a server over Streamable HTTP, with a bearer token if given.
    pub async fn connect_http(
        url: &str,
        bearer_token: Option<&str>,
        options: RuntimeOptions,
    ) -> RuntimeResult<Self> {
        Ok(Self::with_caller(
            McpToolClient::connect_http(url, bearer_token).await?,
            options,
        ))
    }
}
