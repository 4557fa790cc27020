//! `POST /rpc`, `/health`, `/frame` and `/whoami` over real HTTP (PROTOCOL §1): the
//! stdio JSON-RPC semantics, batches, notifications (204) and the 10 MiB body limit.

use crate::http_support;

use http_support::{AGENT, OPERATOR, Server, client};
use serde_json::{Value, json};

fn req(id: Value, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn note(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

#[tokio::test]
async fn single_requests_and_protocol_errors() {
    let s = Server::start();
    let start = s.call(AGENT, "session.start", json!({})).await;
    assert_eq!(start["ok"], true, "{start}");
    assert_eq!(start["result"]["state"], "ready");

    let r = s
        .rpc(
            AGENT,
            "tools.call",
            json!({"tool": "wait.pause", "arguments": {"ms": 0}}),
        )
        .await;
    assert_eq!(r["id"], 1);
    assert_eq!(r["result"]["ok"], true, "{r}");
    assert_eq!(r["result"]["result"]["waited_ms"], 0);

    // Application outcomes stay inside the envelope.
    let r = s
        .call(AGENT, "tools.call", json!({"tool": "no.such"}))
        .await;
    assert_eq!(r["error"]["code"], "unknown_tool");

    let (st, r) = s
        .post_rpc(AGENT, &req(json!(7), "no.such.method", json!({})))
        .await;
    assert_eq!(
        (st, r["id"].clone(), r["error"]["code"].clone()),
        (200, json!(7), json!(-32601))
    );
    let (_, r) = s
        .post_rpc(AGENT, &req(json!("a"), "system.status", json!([1])))
        .await;
    assert_eq!(r["error"]["code"], -32602);
    assert_eq!(r["id"], "a");
    let (_, r) = s
        .post_rpc(AGENT, &json!({"id": 1, "method": "system.status"}))
        .await;
    assert_eq!(r["error"]["code"], -32600);

    // Not JSON at all: a parse error with id null (HTTP 200, as a JSON-RPC answer).
    let res = client()
        .post(s.url("/rpc"))
        .bearer_auth(AGENT)
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    let r: Value = serde_json::from_slice(&res.bytes().await.unwrap()).unwrap();
    assert_eq!(r["error"]["code"], -32700);
    assert_eq!(r["id"], Value::Null);

    // Only POST.
    let res = client()
        .get(s.url("/rpc"))
        .bearer_auth(AGENT)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 405);
}

#[tokio::test]
async fn batches_and_notifications() {
    let s = Server::start();
    s.call(AGENT, "session.start", json!({})).await;

    // A batch answers every request, in order, and nothing for its notifications.
    let batch = json!([
        req(json!(1), "system.status", json!({})),
        note(
            "tools.call",
            json!({"tool": "wait.pause", "arguments": {"ms": 0}})
        ),
        req(
            json!(2),
            "tools.call",
            json!({"tool": "wait.pause", "arguments": {"ms": 1}})
        ),
        req(json!(3), "nope", json!({})),
    ]);
    let (st, r) = s.post_rpc(AGENT, &batch).await;
    assert_eq!(st, 200);
    let ids: Vec<Value> = r
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["id"].clone())
        .collect();
    assert_eq!(ids, vec![json!(1), json!(2), json!(3)]);
    assert_eq!(r[1]["result"]["result"]["waited_ms"], 1);
    assert_eq!(r[2]["error"]["code"], -32601);

    // A notification runs and gets 204 No Content, with an empty body.
    let before = s.call(AGENT, "system.status", json!({})).await["result"]["action_count"]
        .as_u64()
        .unwrap();
    let res = client()
        .post(s.url("/rpc"))
        .bearer_auth(AGENT)
        .body(
            note(
                "tools.call",
                json!({"tool": "wait.pause", "arguments": {"ms": 0}}),
            )
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 204);
    assert!(res.bytes().await.unwrap().is_empty());
    // A batch of notifications only: 204 too.
    let (st, _) = s
        .post_rpc(
            AGENT,
            &json!([
                note(
                    "tools.call",
                    json!({"tool": "wait.pause", "arguments": {"ms": 0}})
                ),
                note(
                    "tools.call",
                    json!({"tool": "wait.pause", "arguments": {"ms": 0}})
                ),
            ]),
        )
        .await;
    assert_eq!(st, 204);
    let after = s.call(AGENT, "system.status", json!({})).await["result"]["action_count"]
        .as_u64()
        .unwrap();
    assert_eq!(after, before + 3, "the notifications ran");

    let (st, r) = s.post_rpc(AGENT, &json!([])).await;
    assert_eq!((st, r["error"]["code"].clone()), (200, json!(-32600)));
}

#[tokio::test]
async fn body_limit_is_10_mib() {
    const LIMIT: usize = 10 * 1024 * 1024;
    let s = Server::start();
    let head = req(json!(1), "system.status", json!({})).to_string();
    // Exactly at the limit (JSON allows trailing whitespace): accepted.
    let mut at = head.clone().into_bytes();
    at.resize(LIMIT, b' ');
    let res = client()
        .post(s.url("/rpc"))
        .bearer_auth(AGENT)
        .body(at)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    let r: Value = serde_json::from_slice(&res.bytes().await.unwrap()).unwrap();
    assert_eq!(r["result"]["ok"], true, "{r}");
    // One byte more: 413, with a JSON-RPC error body.
    let mut over = head.into_bytes();
    over.resize(LIMIT + 1, b' ');
    let res = client()
        .post(s.url("/rpc"))
        .bearer_auth(AGENT)
        .body(over)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 413);
    let r: Value = serde_json::from_slice(&res.bytes().await.unwrap()).unwrap();
    assert_eq!(r["error"]["code"], -32600, "{r}");
    // The server goes on answering.
    assert_eq!(s.health().await["ok"], true);
}

#[tokio::test]
async fn health_whoami_and_frame() {
    let s = Server::start();
    let h = s.health().await;
    for k in [
        "ok",
        "state",
        "buffered",
        "buffered_bytes",
        "subscribers",
        "dropped",
        "last_seq",
        "connections",
    ] {
        assert!(h.get(k).is_some(), "{k} missing in {h}");
    }
    assert_eq!(h["state"], "idle");

    for (token, role) in [(AGENT, "agent"), (OPERATOR, "operator")] {
        let res = client()
            .get(s.url("/whoami"))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        let v: Value = serde_json::from_slice(&res.bytes().await.unwrap()).unwrap();
        assert_eq!(v["role"], role);
    }

    // Before any capture: 204.
    let res = client()
        .get(s.url("/frame"))
        .bearer_auth(OPERATOR)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 204);
    s.call(AGENT, "session.start", json!({})).await;
    let cap = s
        .call(
            AGENT,
            "tools.call",
            json!({"tool": "screen.capture", "arguments": {"format": "png", "scale": 0.25}}),
        )
        .await;
    assert_eq!(cap["ok"], true, "{cap}");
    let frame = cap["result"]["frame"].as_u64().unwrap();
    let res = client()
        .get(s.url("/frame"))
        .bearer_auth(OPERATOR)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    let h = res.headers().clone();
    assert_eq!(h["content-type"], "image/png");
    assert_eq!(h["x-frame"].to_str().unwrap(), frame.to_string());
    assert_eq!(h["x-frame-region"], "0,0,1430,804");
    assert_eq!(h["x-frame-size"], "358x201");
    let bytes = res.bytes().await.unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(bytes.len() as u64, cap["result"]["bytes"].as_u64().unwrap());
    // Unchanged since: 304.
    let res = client()
        .get(s.url("/frame"))
        .bearer_auth(AGENT)
        .header("if-none-match", h["etag"].clone())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 304);

    let h = s.health().await;
    assert_eq!(h["state"], "ready");
    assert!(h["buffered"].as_u64().unwrap() >= 3, "{h}");
}
