//! OpenAI's `pending_safety_checks` from an agent on MCP (`/mcp` of the HTTP transport,
//! agent token): the call waits for a person; the agent's own token cannot answer
//! (403), the operator's does, and the agent then receives the `computer_call_output`
//! with the checks acknowledged.

use crate::governed_http_support;
use crate::http_support;

use std::time::Duration;

use governed_http_support::{agent, call};
use http_support::{AGENT, OPERATOR, Server, tokens_config};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_operator_acknowledges_openai_safety_checks() {
    let s = Server::start_with(Some(tokens_config()), &[], &[]);
    let a = agent(&s.base, AGENT).await;
    let checks =
        json!([{"id": "cu_sc_9", "code": "sensitive_domain", "message": "A bank's site."}]);
    let args = json!({"type": "computer_call", "call_id": "call_h", "actions": [
        {"type": "move", "x": 700, "y": 500}
    ], "pending_safety_checks": checks});
    let waiting = tokio::spawn(async move { call(&a, "openai_computer", args).await });
    // The confirmation appears for the operator.
    let mut request_id = None;
    for _ in 0..200 {
        let st = s.call(OPERATOR, "system.status", json!({})).await;
        if let Some(id) = st["result"]["pending_confirmation"]["request_id"].as_str() {
            assert!(
                st["result"]["pending_confirmation"]["reason"]
                    .as_str()
                    .unwrap()
                    .contains("sensitive_domain")
            );
            request_id = Some(id.to_string());
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let id = request_id.expect("a pending confirmation");
    // The agent may not answer it.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "session.confirm",
                      "params": {"request_id": id, "approve": true}});
    let (status, _) = s.post_rpc(AGENT, &body).await;
    assert_eq!(status, 403);
    assert!(!waiting.is_finished(), "still waiting for a person");
    // The operator does.
    let (status, answer) = s.post_rpc(OPERATOR, &body).await;
    assert_eq!(status, 200, "{answer}");
    let r = tokio::time::timeout(Duration::from_secs(30), waiting)
        .await
        .expect("answered")
        .expect("task");
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let out = r.structured_content.expect("computer_call_output");
    assert_eq!(out["type"], "computer_call_output");
    assert_eq!(out["call_id"], "call_h");
    assert_eq!(out["acknowledged_safety_checks"], checks);
    let position = s
        .call(AGENT, "tools.call", json!({"tool": "pointer.position"}))
        .await;
    assert_eq!(position["result"]["position"], json!({"x": 700, "y": 500}));
}
