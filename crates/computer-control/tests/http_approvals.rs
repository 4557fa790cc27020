//! Operator approval of governed `confirm` decisions over HTTP (the real binary, a
//! real HTTP client, the agent over MCP at `/mcp`): only the operator token lists,
//! approves or denies; an approval returns an `exact_action` grant that lets exactly
//! the approved action commit; every refusal is a distinct status with a clear error;
//! decisions reach `/events`.

use crate::governed_http_support;
use crate::http_support;

use std::time::Duration;

use governed_http_support::{agent, click, confirm_clicks_config, form, now, ok, refused, session};
use http_support::{AGENT, OPERATOR, Server, client, tokens_config};
use serde_json::{Value, json};

/// `(status, JSON body)` of a request with `token`.
async fn send(
    s: &Server,
    token: &str,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> (u16, Value) {
    let mut req = match method {
        "GET" => client().get(s.url(path)),
        _ => client().post(s.url(path)),
    }
    .bearer_auth(token);
    if let Some(b) = body {
        req = req
            .header("content-type", "application/json")
            .body(b.to_string());
    }
    let res = req.send().await.expect("request");
    let status = res.status().as_u16();
    let text = res.text().await.expect("body");
    (
        status,
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}")),
    )
}

async fn post(s: &Server, token: &str, path: &str, body: Value) -> (u16, Value) {
    send(s, token, "POST", path, Some(&body.to_string())).await
}

async fn pending(s: &Server) -> Vec<Value> {
    let (status, body) = send(s, OPERATOR, "GET", "/approvals", None).await;
    assert_eq!(status, 200, "{body}");
    body["approvals"].as_array().expect("approvals").clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_approves_a_confirm_action_and_it_commits_once() {
    let s = Server::start_with(Some(confirm_clicks_config(tokens_config())), &[], &[]);
    let a = agent(&s.base, AGENT).await;
    let (sid, lid) = session(&a).await;
    let (window, submit) = form(&a).await;
    let at = now();
    let a1 = click(&window, submit, &sid, &lid, "a1", 0, &at);
    let mut events = s.events(OPERATOR, None).await;

    // The agent's preview waits for the operator; executing now is refused.
    let preview = ok(&a, "preview_action", a1.clone()).await;
    assert_eq!(preview["policy"]["decision"], "confirm", "{preview}");
    assert_eq!(preview["blocker"], "approval_required");
    let e = refused(&a, "execute_action", a1.clone()).await;
    assert_eq!(e["error"], "approval_required", "{e}");

    // The operator's list: what, where, why, until when — no secrets.
    let list = pending(&s).await;
    assert_eq!(list.len(), 1, "{list:?}");
    let p = &list[0];
    assert_eq!(p["sessionId"], sid.as_str());
    assert_eq!(p["actionId"], "a1");
    assert_eq!(p["principalId"], "local-user");
    assert_eq!(p["tool"], "pointer.click");
    assert_eq!(p["actionClass"], "edit_reversible");
    assert_eq!(p["status"], "pending");
    assert_eq!(p["argsDigest"], preview["envelope"]["argsDigest"]);
    assert_eq!(
        p["reasons"][0],
        "rule 0 requires confirmation for pointer.click"
    );
    assert_eq!(p["target"]["appId"], "cc-form");
    assert_eq!(p["target"]["windowTitle"], window["title"]);
    assert_eq!(p["arguments"], json!({"x": submit.0, "y": submit.1}));
    assert!(p["expiresAt"].is_string());

    // The agent may neither list nor decide, and no MCP tool approves anything.
    let tools = a.list_all_tools().await.expect("tools/list");
    assert!(
        tools.iter().all(|t| !t.name.contains("approv")
            && !t.name.contains("grant")
            && !t.name.contains("confirm")),
        "{:?}",
        tools.iter().map(|t| t.name.to_string()).collect::<Vec<_>>()
    );
    assert_eq!(send(&s, AGENT, "GET", "/approvals", None).await.0, 403);
    let body = json!({"session_id": sid, "action_id": "a1"});
    let (status, err) = post(&s, AGENT, "/approvals/approve", body.clone()).await;
    assert_eq!(status, 403, "{err}");
    assert_eq!(err["error"], "forbidden");
    assert_eq!(
        post(&s, AGENT, "/approvals/deny", body.clone()).await.0,
        403
    );
    assert_eq!(pending(&s).await.len(), 1, "nothing was decided");

    // Approve, with the digest the operator saw and a TTL of their choice.
    let (status, approved) = post(
        &s,
        OPERATOR,
        "/approvals/approve",
        json!({"session_id": sid, "action_id": "a1", "args_digest": p["argsDigest"], "ttl_ms": 120_000}),
    )
    .await;
    assert_eq!(status, 200, "{approved}");
    assert_eq!(approved["status"], "approved");
    let grant = &approved["grant"];
    assert_eq!(grant["scope"], "exact_action");
    assert_eq!(grant["remainingUses"], 1);
    assert_eq!(grant["actionDigest"], p["argsDigest"]);
    assert_eq!(grant["sessionId"], sid.as_str());
    assert!(pending(&s).await.is_empty());

    // The agent executes: committed, verified, the grant used.
    let receipt = ok(&a, "execute_action", a1.clone()).await["receipt"].clone();
    assert_eq!(receipt["status"], "committed", "{receipt}");
    assert_eq!(receipt["result"]["verification"]["satisfied"], true);
    let again = click(&window, submit, &sid, &lid, "a2", 0, &at);
    let e = refused(&a, "execute_action", again).await;
    assert_eq!(
        e["error"], "approval_required",
        "a grant is single-use: {e}"
    );

    // A second decision on the same request is refused.
    let (status, err) = post(&s, OPERATOR, "/approvals/approve", body).await;
    assert_eq!(status, 409, "{err}");
    assert_eq!(err["error"], "already_decided");

    // The console learns both through /events.
    let mut seen = Vec::new();
    while !seen.contains(&"governance.approval_resolved".to_string()) {
        let m = events
            .next_event(Duration::from_secs(30))
            .await
            .expect("the decision is announced");
        if let Some(d) = m.data {
            if d["type"] == "governance.approval_resolved" {
                assert_eq!(d["payload"]["status"], "approved");
                assert_eq!(d["payload"]["grantId"], grant["grantId"]);
            }
            seen.push(d["type"].as_str().unwrap_or_default().to_string());
        }
    }
    assert!(
        seen.contains(&"governance.approval_requested".to_string()),
        "{seen:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_are_clear_and_change_nothing() {
    let s = Server::start_with(Some(confirm_clicks_config(tokens_config())), &[], &[]);
    let a = agent(&s.base, AGENT).await;
    let (sid, lid) = session(&a).await;
    let (window, submit) = form(&a).await;
    let at = now();
    ok(
        &a,
        "preview_action",
        click(&window, submit, &sid, &lid, "a1", 0, &at),
    )
    .await;

    // Unknown action or session: 404.
    for body in [
        json!({"session_id": sid, "action_id": "nope"}),
        json!({"session_id": "ses-nope", "action_id": "a1"}),
    ] {
        let (status, err) = post(&s, OPERATOR, "/approvals/approve", body).await;
        assert_eq!(status, 404, "{err}");
        assert_eq!(err["error"], "approval_not_found");
        assert!(
            err["message"].as_str().unwrap().contains("no preview"),
            "{err}"
        );
    }
    // Bad TTLs, bad bodies: 400.
    for ttl in [json!(0), json!(300_001), json!(-5), json!("soon")] {
        let (status, err) = post(
            &s,
            OPERATOR,
            "/approvals/approve",
            json!({"session_id": sid, "action_id": "a1", "ttl_ms": ttl}),
        )
        .await;
        assert_eq!(status, 400, "ttl {ttl}: {err}");
        assert_eq!(err["error"], "invalid_request");
    }
    for body in [
        "not json",
        "{}",
        r#"{"session_id":"s","action_id":"a","extra":1}"#,
    ] {
        let (status, err) = send(&s, OPERATOR, "POST", "/approvals/approve", Some(body)).await;
        assert_eq!(status, 400, "{body}: {err}");
    }
    let (status, err) = post(
        &s,
        OPERATOR,
        "/approvals/deny",
        json!({"session_id": sid, "action_id": "a1", "ttl_ms": 1000}),
    )
    .await;
    assert_eq!(status, 400, "a TTL on a denial: {err}");
    // The digest the operator saw is not the request's: 409, nothing approved.
    let (status, err) = post(
        &s,
        OPERATOR,
        "/approvals/approve",
        json!({"session_id": sid, "action_id": "a1", "args_digest": "0".repeat(64)}),
    )
    .await;
    assert_eq!(status, 409, "{err}");
    assert_eq!(err["error"], "approval_changed");
    // A preview that is not a confirm: 409 not_confirm.
    let observe = json!({"session_id": sid, "action_id": "o1", "tool": "window_list",
                         "arguments": {}, "mode": "foreground"});
    assert_eq!(
        ok(&a, "preview_action", observe).await["policy"]["decision"],
        "allow"
    );
    let (status, err) = post(
        &s,
        OPERATOR,
        "/approvals/approve",
        json!({"session_id": sid, "action_id": "o1"}),
    )
    .await;
    assert_eq!(status, 409, "{err}");
    assert_eq!(err["error"], "not_confirm");
    assert!(err["message"].as_str().unwrap().contains("allow"), "{err}");
    // A preview past its expiry: 410.
    let mut short = click(&window, submit, &sid, &lid, "e1", 1, &at);
    short["expires_in_ms"] = json!(1);
    ok(&a, "preview_action", short).await;
    tokio::time::sleep(Duration::from_millis(5)).await;
    let (status, err) = post(
        &s,
        OPERATOR,
        "/approvals/approve",
        json!({"session_id": sid, "action_id": "e1"}),
    )
    .await;
    assert_eq!(status, 410, "{err}");
    assert_eq!(err["error"], "approval_expired");
    // A paused session: not listed, and 409 session_not_running.
    ok(&a, "pause_session", json!({"session_id": sid})).await;
    assert!(pending(&s).await.is_empty());
    let (status, err) = post(
        &s,
        OPERATOR,
        "/approvals/approve",
        json!({"session_id": sid, "action_id": "a1"}),
    )
    .await;
    assert_eq!(status, 409, "{err}");
    assert_eq!(err["error"], "session_not_running");
    ok(&a, "resume_session", json!({"session_id": sid})).await;
    // Still pending after all that, and still refused to the agent.
    assert_eq!(pending(&s).await.len(), 1);
    let e = refused(
        &a,
        "execute_action",
        click(&window, submit, &sid, &lid, "a1", 0, &at),
    )
    .await;
    assert_eq!(e["error"], "approval_required");

    // Denied: recorded, gone from the list, and execute stays refused.
    let (status, denied) = post(
        &s,
        OPERATOR,
        "/approvals/deny",
        json!({"session_id": sid, "action_id": "a1", "reason": "not this one"}),
    )
    .await;
    assert_eq!(status, 200, "{denied}");
    assert_eq!(denied["status"], "denied");
    assert_eq!(denied["approval"]["reason"], "not this one");
    assert!(pending(&s).await.is_empty());
    let e = refused(
        &a,
        "execute_action",
        click(&window, submit, &sid, &lid, "a1", 0, &at),
    )
    .await;
    assert_eq!(e["error"], "approval_required");
    let journal = ok(&a, "get_session_events", json!({"session_id": sid})).await;
    let types: Vec<&str> = journal["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["type"].as_str())
        .collect();
    assert!(types.contains(&"approval.denied"), "{types:?}");
    assert!(!types.contains(&"action.approved"), "{types:?}");
}
