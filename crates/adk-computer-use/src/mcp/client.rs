//! [`McpToolClient`]: the official MCP SDK (rmcp) as a [`ToolCaller`], over a child
//! process (stdio) or Streamable HTTP with a bearer token.

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::TokioChildProcess;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Map, Value};

use super::result::reply_from_result;
use crate::error::ComputerUseError;
use crate::governed::{ToolCaller, ToolListing, ToolReply};
use crate::runtime::RuntimeResult;

/// A connected MCP client of a Part A server.
pub struct McpToolClient {
    service: RunningService<RoleClient, ()>,
}

impl std::fmt::Debug for McpToolClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpToolClient").finish_non_exhaustive()
    }
}

impl McpToolClient {
    /// Spawns `command` and speaks MCP over its stdin and stdout (the server's stderr is
    /// inherited). The child is killed when the client is dropped.
    pub async fn spawn(command: tokio::process::Command) -> RuntimeResult<Self> {
        let transport = TokioChildProcess::new(command).map_err(transport_error)?;
        let service = ().serve(transport).await.map_err(transport_error)?;
        Ok(Self { service })
    }

    /// Connects to a Streamable HTTP endpoint (`http://host:port/mcp`). `bearer_token` is
    /// sent as `Authorization: Bearer <token>` on every request.
    pub async fn connect_http(url: &str, bearer_token: Option<&str>) -> RuntimeResult<Self> {
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
        if let Some(token) = bearer_token {
            config = config.auth_header(token.to_string());
        }
        let transport = StreamableHttpClientTransport::from_config(config);
        let service = ().serve(transport).await.map_err(transport_error)?;
        Ok(Self { service })
    }

    /// Closes the session (and ends a child server by closing its stdin).
    pub async fn close(self) -> RuntimeResult<()> {
        self.service
            .cancel()
            .await
            .map(|_| ())
            .map_err(transport_error)
    }
}

impl ToolCaller for McpToolClient {
    async fn call_tool(
        &self,
        tool: &'static str,
        arguments: Map<String, Value>,
    ) -> RuntimeResult<ToolReply> {
        let params = CallToolRequestParams::new(tool).with_arguments(arguments);
        let result =
            self.service
                .call_tool(params)
                .await
                .map_err(|e| ComputerUseError::Runtime {
                    operation: tool,
                    code: None,
                    message: format!("the MCP call failed: {e}"),
                })?;
        reply_from_result(tool, result)
    }

    async fn list_tools(&self) -> RuntimeResult<ToolListing> {
        let tools = self
            .service
            .list_all_tools()
            .await
            .map_err(|e| ComputerUseError::Runtime {
                operation: "tools/list",
                code: None,
                message: format!("the MCP call failed: {e}"),
            })?;
        let server = self
            .service
            .peer_info()
            .and_then(|info| serde_json::to_value(&*info).ok())
            .unwrap_or(Value::Null);
        Ok(ToolListing {
            tools: tools.iter().map(|t| t.name.to_string()).collect(),
            server,
        })
    }
}

/// A failure to reach the server at all: no contract code.
fn transport_error(e: impl std::fmt::Display) -> ComputerUseError {
    ComputerUseError::Runtime {
        operation: "connect",
        code: None,
        message: format!("the MCP connection failed: {e}"),
    }
}
