//! A long session of hundreds of mixed, pipelined calls: afterwards every stdout line is
//! a JSON-RPC 2.0 object (a response or an `event` notification), event `seq` rises by
//! exactly 1, and nothing else ever reached stdout.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use common::{Out, Server};
use serde_json::{Value, json};

fn is_rfc3339(s: &str) -> bool {
    // 2026-01-02T03:04:05.678Z (or with an offset).
    s.len() >= 20
        && s.as_bytes()[4] == b'-'
        && s.as_bytes()[7] == b'-'
        && s.as_bytes()[10] == b'T'
        && s.as_bytes()[13] == b':'
        && (s.ends_with('Z') || s[19..].contains('+') || s[19..].contains('-'))
}

#[test]
fn hundreds_of_mixed_calls_leave_a_clean_stdout() {
    let mut s = Server::start();
    s.start_session(json!({"runtime": {"batch_gap_ms": 0}}));
    let list = s.ok("window.list", json!({}));
    let items_window = list["windows"][1]["id"].clone();
    let mut sent: BTreeMap<u64, String> = BTreeMap::new();
    let mut send = |s: &mut Server, method: &str, params: Value| {
        let id = s.send(method, params);
        sent.insert(id, method.to_string());
        id
    };
    for i in 0..60u64 {
        // Pipelined: nothing waits for an answer inside one round.
        let x = (i * 37) % 1920;
        let y = (i * 53) % 1080;
        send(
            &mut s,
            "tools.call",
            json!({"tool": "pointer.move", "arguments": {"x": x, "y": y}}),
        );
        send(
            &mut s,
            "tools.call",
            json!({"tool": "pointer.click", "arguments": {"x": 1000, "y": 200 + (i % 8) * 32}}),
        );
        send(
            &mut s,
            "tools.call",
            json!({"tool": "pointer.scroll", "arguments": {"amount": if i % 2 == 0 { -2 } else { 1 }, "x": 1000, "y": 250}}),
        );
        send(&mut s, "system.status", json!(null));
        if i % 5 == 0 {
            let fmt = ["png", "jpeg", "webp"][(i / 5 % 3) as usize];
            send(
                &mut s,
                "tools.call",
                json!({"tool": "screen.capture", "arguments": {"format": fmt, "scale": 0.1 + (i % 3) as f64 * 0.05}}),
            );
        }
        if i % 6 == 0 {
            send(
                &mut s,
                "tools.call",
                json!({"tool": "a11y.snapshot", "arguments": {"level": "full"}}),
            );
            send(
                &mut s,
                "tools.call",
                json!({"tool": "window.focus", "arguments": {"id": items_window}}),
            );
        }
        if i % 7 == 0 {
            send(
                &mut s,
                "tools.call",
                json!({"tool": "keyboard.type", "arguments": {"text": format!("round {i} — ✓")}}),
            );
            send(
                &mut s,
                "tools.call",
                json!({"tool": "keyboard.combo", "arguments": {"keys": "ctrl+a"}}),
            );
        }
        if i % 9 == 0 {
            send(
                &mut s,
                "tools.call_batch",
                json!({"items": [
                    {"tool": "wait.pause", "arguments": {"ms": 1}},
                    {"tool": "window.list"},
                    {"tool": "keyboard.press", "arguments": {"key": "down"}}
                ]}),
            );
            let level = ["skeleton", "standard", "full"][(i % 3) as usize];
            send(
                &mut s,
                "session.configure",
                json!({"a11y": {"default_level": level}}),
            );
        }
        if i % 11 == 0 {
            // Errors of every layer, interleaved.
            send(
                &mut s,
                "tools.call",
                json!({"tool": "pointer.click", "arguments": {"x": "NaN", "y": 1}}),
            );
            send(&mut s, "tools.call", json!({"tool": "no.such.tool"}));
            send(&mut s, "no.such.method", json!({}));
            s.send_raw(b"{broken json\n");
            s.send_raw(b"\n");
            s.notify("tools.list", json!({}));
        }
        if i % 13 == 0 {
            send(&mut s, "control.panic", json!({"on": true}));
            send(
                &mut s,
                "tools.call",
                json!({"tool": "pointer.move", "arguments": {"x": 1, "y": 1}}),
            );
            send(&mut s, "control.panic", json!({"on": false}));
        }
        if i % 17 == 0 {
            // A confirmation round trip: raise, then deny from the harness side.
            let id = s.send(
                "tools.call",
                json!({"tool": "keyboard.press", "arguments": {"key": "win"}}),
            );
            let r = s.response(id);
            let rid = r["result"]["result"]["request_id"]
                .as_str()
                .unwrap()
                .to_string();
            let c = s.request(
                "session.confirm",
                json!({"request_id": rid, "approve": i % 2 == 0}),
            );
            assert_eq!(c["result"]["ok"], true, "{c}");
        }
    }
    // Collect every answer owed.
    let ids: Vec<u64> = sent.keys().copied().collect();
    assert!(ids.len() >= 300, "only {} calls", ids.len());
    for id in &ids {
        let r = s.response(*id);
        assert_eq!(r["jsonrpc"], "2.0");
        let method = &sent[id];
        if method != "no.such.method" {
            assert!(r.get("result").is_some(), "{method}: {r}");
        }
    }
    let parse_errors = s.quiet_for(std::time::Duration::from_millis(100));
    assert!(
        parse_errors.iter().all(|r| r["error"]["code"] == -32700),
        "{parse_errors:?}"
    );
    let stop = s.request("session.stop", json!(null));
    assert_eq!(stop["result"]["ok"], true);
    let (status, lines) = s.finish();
    assert!(status.success());

    // Every line is a JSON-RPC 2.0 object.
    let mut seqs = Vec::new();
    let mut response_ids = Vec::new();
    let mut kinds = BTreeSet::new();
    for l in &lines {
        let v = match l {
            Out::Json(v) => v,
            Out::NotJson(t) => panic!("non-protocol stdout line: {t:?}"),
        };
        let o = v
            .as_object()
            .unwrap_or_else(|| panic!("not an object: {v}"));
        assert_eq!(o.get("jsonrpc"), Some(&json!("2.0")), "{v}");
        if o.get("method") == Some(&json!("event")) {
            assert!(o.get("id").is_none(), "events are notifications: {v}");
            let p = &o["params"];
            let keys: BTreeSet<&str> = p.as_object().unwrap().keys().map(|k| k.as_str()).collect();
            assert_eq!(
                keys,
                BTreeSet::from(["type", "payload", "seq", "at"]),
                "{v}"
            );
            assert!(p["payload"].is_object(), "{v}");
            assert!(is_rfc3339(p["at"].as_str().unwrap()), "{v}");
            kinds.insert(p["type"].as_str().unwrap().to_string());
            seqs.push(p["seq"].as_u64().unwrap());
        } else {
            assert!(o.contains_key("id"), "{v}");
            assert!(
                o.contains_key("result") ^ o.contains_key("error"),
                "exactly one of result/error: {v}"
            );
            if let Some(r) = o.get("result") {
                assert!(r["ok"].is_boolean() && r["meta"].is_object(), "{v}");
            } else {
                assert!(o["error"]["code"].is_i64() && o["error"]["message"].is_string());
            }
            response_ids.push(o["id"].clone());
        }
    }
    assert!(!seqs.is_empty());
    assert_eq!(seqs[0], 1, "the first event of the server is seq 1");
    for w in seqs.windows(2) {
        assert_eq!(
            w[1],
            w[0] + 1,
            "seq must rise by exactly 1: {} then {}",
            w[0],
            w[1]
        );
    }
    for k in [
        "session.started",
        "action.started",
        "action.finished",
        "batch.finished",
        "session.configured",
        "safety.panic_triggered",
        "safety.panic_released",
        "safety.confirmation_requested",
        "safety.confirmation_resolved",
        "session.stopped",
    ] {
        assert!(kinds.contains(k), "no {k} event in the long session");
    }
    // Every request id was answered exactly once.
    for id in &ids {
        let n = response_ids.iter().filter(|r| **r == json!(id)).count();
        assert_eq!(n, 1, "id {id} answered {n} times");
    }
    let started = lines
        .iter()
        .filter(|l| matches!(l, Out::Json(v) if v["params"]["type"] == "action.started"))
        .count();
    let finished = lines
        .iter()
        .filter(|l| matches!(l, Out::Json(v) if v["params"]["type"] == "action.finished"))
        .count();
    assert_eq!(started, finished, "every started action finished");
}
