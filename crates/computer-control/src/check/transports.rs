//! The transports area of `check`: stdio always works; the HTTP transports need their
//! default port free (else `--port`).

use std::net::TcpListener;

use serde_json::json;

use super::{Finding, Status};

/// Where `serve --transport http|mcp-http` listens unless told otherwise.
pub const DEFAULT_HTTP: &str = "127.0.0.1:8765";

pub fn finding() -> Finding {
    let available = json!(["stdio", "mcp", "http", "mcp-http"]);
    match TcpListener::bind(DEFAULT_HTTP) {
        Ok(_) => Finding::ok(format!(
            "stdio JSON-RPC and MCP over stdio; HTTP and MCP over HTTP on {DEFAULT_HTTP} (free)"
        )),
        Err(e) => Finding::problem(
            Status::Degraded,
            format!(
                "stdio JSON-RPC and MCP over stdio work; {DEFAULT_HTTP}, the HTTP transports' \
                 default, is taken: {e}"
            ),
            "serve HTTP on another port: serve --transport http --port PORT",
        ),
    }
    .with("available", available)
    .with("http_default", json!(DEFAULT_HTTP))
}
