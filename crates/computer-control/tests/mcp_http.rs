//! MCP over Streamable HTTP behind the HTTP transport's guards, on both endpoints
//! (`--transport mcp-http` and `/mcp` under `--transport http`): no or a wrong bearer
//! token is 401, a foreign `Host` or `Origin` is 403, each of the three tokens (agent,
//! operator, an `http.agents` identity) may open an MCP session; `mcp-http` serves
//! nothing but `/mcp` and `/health`; a bad `http.agents` config stops the start.
//! The governed flows over these endpoints are in `mcp_sdk.rs` (the Python SDK).

use crate::mcp_http_support;

use mcp_http_support::{
    AGENT, AGENT_B_TOKEN, McpHttpServer, OPERATOR, TempDir, serve_command, tokens_config,
};
use serde_json::json;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcp_http test","version":"1"}}}"#;

/// A plain-HTTP client that ignores any proxy settings of the environment.
fn client() -> reqwest::Client {
    // With every workspace feature on, reqwest's rustls comes without a crypto provider
    // (the client library's `rustls` feature installs its own at run time): install ring's
    // once, before any client is built.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client")
}

async fn json_body(r: reqwest::Response) -> serde_json::Value {
    let text = r.text().await.expect("a body");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// POST an initialize to `/mcp` with optional token and extra headers.
async fn initialize(
    s: &McpHttpServer,
    token: Option<&str>,
    headers: &[(&str, String)],
) -> reqwest::Response {
    let mut req = client()
        .post(&s.mcp_url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(INITIALIZE);
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    for (k, v) in headers {
        req = req.header(*k, v);
    }
    req.send().await.expect("a response")
}

async fn guards(transport: &str) {
    let s = McpHttpServer::start(transport);
    let port = s.base.rsplit(':').next().expect("a port").to_string();

    let none = initialize(&s, None, &[]).await;
    assert_eq!(none.status().as_u16(), 401, "{transport}: no token");
    assert!(none.headers().contains_key("www-authenticate"));
    let wrong = initialize(&s, Some("not-a-token-of-this-server"), &[]).await;
    assert_eq!(wrong.status().as_u16(), 401, "{transport}: wrong token");
    let body = json_body(wrong).await;
    assert_eq!(body["error"], "unauthorized");

    let rebinding = [("host", format!("attacker.example:{port}"))];
    let r = initialize(&s, Some(AGENT), &rebinding).await;
    assert_eq!(r.status().as_u16(), 403, "{transport}: foreign Host");
    let foreign = [("origin", "http://attacker.example".to_string())];
    let r = initialize(&s, Some(AGENT), &foreign).await;
    assert_eq!(r.status().as_u16(), 403, "{transport}: foreign Origin");
    let body = json_body(r).await;
    assert_eq!(body["error"], "bad_origin");

    for token in [AGENT, OPERATOR, AGENT_B_TOKEN] {
        let r = initialize(&s, Some(token), &[]).await;
        assert_eq!(r.status().as_u16(), 200, "{transport}: {token}");
        assert!(
            r.headers().contains_key("mcp-session-id"),
            "{transport}: a session for {token}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_http_is_behind_tokens_and_the_host_guard() {
    guards("mcp-http").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_mcp_route_is_behind_tokens_and_the_host_guard() {
    guards("http").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_http_serves_only_mcp_and_health() {
    let s = McpHttpServer::start("mcp-http");
    let c = client();
    let health = c.get(format!("{}/health", s.base)).send().await.unwrap();
    assert_eq!(health.status().as_u16(), 200);
    for path in ["/rpc", "/events", "/"] {
        let r = c
            .get(format!("{}{path}", s.base))
            .header("authorization", format!("Bearer {AGENT}"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 404, "{path}");
    }
    assert!(
        !s.stderr_text().contains("operator console"),
        "{}",
        s.stderr_text()
    );
}

/// Starts a server with `config` that must refuse to start; its stderr.
fn refused_start(transport: &str, config: serde_json::Value) -> String {
    let dir = TempDir::new();
    let path = dir.0.join("config.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let out = serve_command(transport, &dir, &path)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run computer-control");
    assert!(!out.status.success(), "{transport} started with {config}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_reused_agent_token_stops_the_start() {
    for transport in ["mcp-http", "http"] {
        let mut config = tokens_config();
        config["http"]["agents"][0]["token"] = json!(OPERATOR);
        let err = refused_start(transport, config);
        assert!(err.contains("http.agents[0]"), "{err}");
        assert!(err.contains("reuses a token"), "{err}");
    }
}

#[test]
fn an_agents_entry_without_principal_stops_the_start() {
    let mut config = tokens_config();
    config["http"]["agents"] = json!([{"token": "a-token-without-an-identity-0123"}]);
    let err = refused_start("mcp-http", config);
    assert!(err.contains("principal_id"), "{err}");
    let mut config = tokens_config();
    config["http"]["agents"] = json!([{"principal_id": "", "token": "a-token-0123456789abcdef"}]);
    let err = refused_start("mcp-http", config);
    assert!(err.contains("principal_id"), "{err}");
}
