//! The transports area of `check`: stdio always works; the HTTP transports need their
//! default port free (else `--port`).

use std::net::TcpListener;

use serde_json::json;

use super::{Finding, Status};
use crate::transports::{DEFAULT_HOST, DEFAULT_PORT};

/// Whether the HTTP transports' default address is free, and which transports exist.
pub fn finding() -> Finding {
    let available = json!(["stdio", "mcp", "http", "mcp-http"]);
    let default_http = format!("{DEFAULT_HOST}:{DEFAULT_PORT}");
    match TcpListener::bind((DEFAULT_HOST, DEFAULT_PORT)) {
        Ok(_) => Finding::ok(format!(
            "stdio JSON-RPC and MCP over stdio; HTTP and MCP over HTTP on {default_http} (free)"
        )),
        Err(e) => Finding::problem(
            Status::Degraded,
            format!(
                "stdio JSON-RPC and MCP over stdio work; {default_http}, the HTTP transports' \
                 default, is taken: {e}"
            ),
            "serve HTTP on another port: serve --transport http --port PORT",
        ),
    }
    .with("available", available)
    .with("http_default", json!(default_http))
}
