//! The agent side of the operator-approval tests: an MCP client over Streamable HTTP
//! (the official SDK) on the server's `/mcp`, and a governed click on the virtual
//! desktop's sign-in form whose policy decision is `confirm` (the server is started
//! with [`confirm_clicks_config`]). Everything but [`agent`] works on any MCP session:
//! `mcp.rs`, `mcp_crash.rs` and the governed bench use it over a stdio child, and
//! `mcp_http_restarts.rs` checks every session's hash chain with it.
#![allow(dead_code)]

use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(60);

/// An MCP session.
pub type Agent = RunningService<RoleClient, ()>;

/// The HTTP tokens plus a rule that makes every click a `confirm`.
pub fn confirm_clicks_config(tokens: Value) -> Value {
    let mut c = tokens;
    c["safety"] = json!({"rules": [{"match": {"tool": "pointer.click"}, "effect": "confirm"}]});
    c
}

/// Opens an MCP session on `{base}/mcp` with `token`.
pub async fn agent(base: &str, token: &str) -> Agent {
    // With every workspace feature on, reqwest's rustls comes without a crypto provider
    // (the client library's `rustls` feature installs its own at run time): install ring's
    // once, before any client is built.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let config = StreamableHttpClientTransportConfig::with_uri(format!("{base}/mcp"))
        .auth_header(token.to_string());
    let transport = StreamableHttpClientTransport::from_config(config);
    tokio::time::timeout(TIMEOUT, ().serve(transport))
        .await
        .expect("initialize in time")
        .expect("initialize")
}

/// One tool call.
pub async fn call(c: &Agent, name: &str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    let params = CallToolRequestParams::new(name.to_string()).with_arguments(args);
    tokio::time::timeout(TIMEOUT, c.call_tool(params))
        .await
        .expect("answer in time")
        .expect("a tool result")
}

/// The structured result of a successful call.
pub async fn ok(c: &Agent, name: &str, args: Value) -> Value {
    let r = call(c, name, args).await;
    assert_ne!(r.is_error, Some(true), "{name}: {r:?}");
    r.structured_content.expect("structured content")
}

/// The structured error of a refused call.
pub async fn refused(c: &Agent, name: &str, args: Value) -> Value {
    let r = call(c, name, args).await;
    assert_eq!(r.is_error, Some(true), "{name} succeeded: {r:?}");
    r.structured_content.expect("structured error")
}

/// A governed session with a lease on the form: `(session_id, lease_id)`.
pub async fn session(c: &Agent) -> (String, String) {
    let s = ok(c, "start_session", json!({"objective": "sign in"})).await;
    let sid = s["session"]["sessionId"]
        .as_str()
        .expect("sessionId")
        .to_string();
    let l = ok(
        c,
        "acquire_control_lease",
        json!({"session_id": sid, "kind": "cooperative", "mode": "foreground",
               "ttl_ms": 300_000, "action_budget": 10, "app_ids": ["cc-form"]}),
    )
    .await;
    let lid = l["lease"]["leaseId"].as_str().expect("leaseId").to_string();
    (sid, lid)
}

/// The first node of `(role, name)` in a snapshot's tree.
pub fn find<'a>(n: &'a Value, role: &str, name: &str) -> Option<&'a Value> {
    if n["role"] == role && n["name"] == name {
        return Some(n);
    }
    n["children"]
        .as_array()?
        .iter()
        .find_map(|c| find(c, role, name))
}

/// The form window and the centre of its Submit button, read through plain tools.
pub async fn form(c: &Agent) -> (Value, (i64, i64)) {
    let windows = ok(c, "window_list", json!({})).await;
    let w = windows["windows"]
        .as_array()
        .expect("windows")
        .iter()
        .find(|w| w["app_id"] == "cc-form")
        .expect("the form window")
        .clone();
    let snap = ok(
        c,
        "a11y_snapshot",
        json!({"window": w["id"], "level": "full"}),
    )
    .await;
    let r = &find(&snap["tree"], "button", "Submit").expect("Submit")["rect"];
    let at = |i: usize| r[i].as_i64().expect("rect");
    (w, ((at(0) + at(2)) / 2, (at(1) + at(3)) / 2))
}

/// A governed click on Submit (moved `dx` pixels for another digest), with the
/// status bar's new value as its postcondition. `captured_at` is part of the digest:
/// pass the same one to preview and execute.
pub fn click(
    window: &Value,
    submit: (i64, i64),
    sid: &str,
    lid: &str,
    action: &str,
    dx: i64,
    captured_at: &str,
) -> Value {
    json!({
        "session_id": sid,
        "action_id": action,
        "lease_id": lid,
        "tool": "pointer_click",
        "arguments": {"x": submit.0 + dx, "y": submit.1},
        "mode": "foreground",
        "target": {"platform": "virtual", "appId": "cc-form", "pid": window["pid"],
                   "windowId": window["id"], "bounds": window["rect"],
                   "observationId": "obs-1", "confidence": 1, "capturedAt": captured_at},
        "postcondition": {"kind": "ui_element", "role": "statusbar", "label": "Status",
                          "exists": true,
                          "valueDigest": cc_contract::value_digest("Submitted: ")},
    })
}

/// Now, as a wire timestamp.
pub fn now() -> String {
    cc_contract::format_timestamp(time::OffsetDateTime::now_utc())
}

/// Every event of a governed session, page by page.
pub async fn session_events(c: &Agent, session: &str) -> Vec<cc_contract::SessionEvent> {
    let mut all = Vec::new();
    let mut after = 0u64;
    loop {
        let page = ok(
            c,
            "get_session_events",
            json!({"session_id": session, "after_sequence": after, "limit": 1000}),
        )
        .await;
        let events: Vec<cc_contract::SessionEvent> =
            serde_json::from_value(page["events"].clone()).expect("session events");
        if events.is_empty() {
            return all;
        }
        after = events.last().map(|e| e.sequence).unwrap_or(after);
        all.extend(events);
    }
}

/// The chain, checked here without the kernel's verifier: sequences 1, 2, 3…, each
/// `previousHash` the hash before it, each hash recomputed from the event.
pub fn assert_chain(events: &[cc_contract::SessionEvent]) {
    assert!(!events.is_empty());
    let mut previous = cc_contract::digest::GENESIS_HASH.to_string();
    for (i, e) in events.iter().enumerate() {
        let integrity = e.integrity.as_ref().expect("integrity");
        assert_eq!(e.sequence, i as u64 + 1, "sequence gap at {i}");
        assert_eq!(
            integrity.previous_hash, previous,
            "broken link at {}",
            e.sequence
        );
        assert_eq!(
            integrity.hash,
            cc_contract::event_hash(&previous, e),
            "bad hash at {}",
            e.sequence
        );
        previous = integrity.hash.clone();
    }
}
