//! [`McpToolClient`]: the official MCP SDK (rmcp) as a [`ToolCaller`], over a child
//! process (stdio) or Streamable HTTP with a bearer token.

use std::future::Future;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::TokioChildProcess;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Map, Value};

use super::result::reply_from_result;
use super::timeouts::McpTimeouts;
use crate::error::ComputerUseError;
use crate::governed::{ToolCaller, ToolListing, ToolReply};
use crate::runtime::RuntimeResult;

/// A connected MCP client of a Part A server.
pub struct McpToolClient {
    service: RunningService<RoleClient, ()>,
    call_timeout: Option<Duration>,
}

impl std::fmt::Debug for McpToolClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpToolClient").finish_non_exhaustive()
    }
}

impl McpToolClient {
    /// Spawns `command` and speaks MCP over its stdin and stdout (the server's stderr is
    /// inherited), with [`McpTimeouts::default`]. The child is killed when the client is
    /// dropped.
    pub async fn spawn(command: tokio::process::Command) -> RuntimeResult<Self> {
        Self::spawn_with(command, McpTimeouts::default()).await
    }

    /// [`Self::spawn`] with explicit timeouts.
    pub async fn spawn_with(
        mut command: tokio::process::Command,
        timeouts: McpTimeouts,
    ) -> RuntimeResult<Self> {
        command.kill_on_drop(true);
        let transport = TokioChildProcess::new(command).map_err(transport_error)?;
        Self::initialize(().serve(transport), timeouts).await
    }

    /// Connects to a Streamable HTTP endpoint (`http://host:port/mcp`, or `https://…` with
    /// the `rustls` feature), with [`McpTimeouts::default`]. `bearer_token` is sent as
    /// `Authorization: Bearer <token>` on every request. Without the `rustls` feature an
    /// `https` URL is refused at once, with an error that names the feature.
    pub async fn connect_http(url: &str, bearer_token: Option<&str>) -> RuntimeResult<Self> {
        Self::connect_http_with(url, bearer_token, McpTimeouts::default()).await
    }

    /// [`Self::connect_http`] with explicit timeouts.
    pub async fn connect_http_with(
        url: &str,
        bearer_token: Option<&str>,
        timeouts: McpTimeouts,
    ) -> RuntimeResult<Self> {
        if !cfg!(feature = "rustls") && is_https(url) {
            return Err(transport_error(format!(
                "{url} is https, and this build has no TLS: enable the `rustls` feature"
            )));
        }
        // reqwest's rustls takes the process's default provider; install ring's unless the
        // host installed one (then `install_default` refuses, which is fine).
        #[cfg(feature = "rustls")]
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
        if let Some(token) = bearer_token {
            config = config.auth_header(token.to_string());
        }
        let transport = StreamableHttpClientTransport::from_config(config);
        Self::initialize(().serve(transport), timeouts).await
    }

    async fn initialize<E: std::fmt::Display>(
        handshake: impl Future<Output = Result<RunningService<RoleClient, ()>, E>>,
        timeouts: McpTimeouts,
    ) -> RuntimeResult<Self> {
        let service = tokio::time::timeout(timeouts.initialize, handshake)
            .await
            .map_err(|_| {
                transport_error(format!(
                    "the server did not initialize within {:?}",
                    timeouts.initialize
                ))
            })?
            .map_err(transport_error)?;
        Ok(Self {
            service,
            call_timeout: timeouts.call,
        })
    }

    /// Waits for `call` within the call timeout, if there is one.
    async fn bounded<T>(
        &self,
        operation: &'static str,
        call: impl Future<Output = Result<T, rmcp::ServiceError>>,
    ) -> RuntimeResult<T> {
        let answer =
            match self.call_timeout {
                Some(limit) => tokio::time::timeout(limit, call).await.map_err(|_| {
                    ComputerUseError::Runtime {
                        operation,
                        code: None,
                        message: format!("no answer from the server within {limit:?}"),
                    }
                })?,
                None => call.await,
            };
        answer.map_err(|e| ComputerUseError::Runtime {
            operation,
            code: None,
            message: format!("the MCP call failed: {e}"),
        })
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
        let result = self.bounded(tool, self.service.call_tool(params)).await?;
        reply_from_result(tool, result)
    }

    async fn list_tools(&self) -> RuntimeResult<ToolListing> {
        let tools = self
            .bounded("tools/list", self.service.list_all_tools())
            .await?;
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
/// Whether `url` names the https scheme (case-insensitive, as URL schemes are).
fn is_https(url: &str) -> bool {
    url.get(..8)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://"))
}

fn transport_error(e: impl std::fmt::Display) -> ComputerUseError {
    ComputerUseError::Runtime {
        operation: "connect",
        code: None,
        message: format!("the MCP connection failed: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_is_recognised_whatever_its_case() {
        assert!(is_https("https://example.org/mcp"));
        assert!(is_https("HTTPS://example.org/mcp"));
        assert!(!is_https("http://127.0.0.1:8765/mcp"));
        assert!(!is_https("http"));
    }

    /// Without TLS in the build, an https endpoint is refused before any connection
    /// with an error that names the feature (nothing listens on the port).
    #[cfg(not(feature = "rustls"))]
    #[tokio::test]
    async fn https_without_the_rustls_feature_says_so() {
        let err = McpToolClient::connect_http("https://127.0.0.1:9/mcp", None)
            .await
            .expect_err("no TLS in this build");
        assert!(err.to_string().contains("`rustls` feature"), "{err}");
    }
}
