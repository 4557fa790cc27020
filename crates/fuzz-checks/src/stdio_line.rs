//! One stdio line, in process, through the path `transports::stdio` gives it: UTF-8,
//! trimming, JSON-RPC parsing (`jsonrpc::parse`) and dispatch (`jsonrpc::handle_value`)
//! to an engine on the virtual desktop whose sign-in form holds a password.
//!
//! Invariants: exactly one answer per request with an id, carrying that id, and none
//! for a valid notification; the engine still answers `system.status` afterwards; the
//! password never appears in any answer or event.

use std::sync::mpsc;
use std::time::Duration;

use cc_desktop::VirtualDesktop;
use cc_engine::Engine;
use cc_engine::config::ConfigStack;
use computer_control::transports::jsonrpc::{self, PARSE_ERROR};
use serde_json::{Value, json};

/// Typed into the sign-in form's Password field before the line runs.
pub const CANARY: &str = "Qz7-canary-pw-4Xk";

/// How long a line may run before the watchdog engages the emergency stop (what a
/// person would do): a line may legitimately ask for a long wait or a confirmation,
/// and the stop must end both.
const WATCHDOG: Duration = Duration::from_millis(150);

/// A started engine on a fresh virtual desktop with [`CANARY`] in the Password field.
fn engine() -> Engine {
    let mut base = ConfigStack::new();
    base.apply(&json!({"platform": {"name": "virtual"}}))
        .expect("a virtual platform config");
    let engine = Engine::new(Box::new(VirtualDesktop::default()), base);
    let start = engine.start(&json!({"config": {
        "runtime": {"batch_gap_ms": 0, "max_wait_ms": 100},
        "safety": {"confirm_timeout_s": 0.1},
    }}));
    assert!(start.ok, "session.start: {:?}", start.error);
    let snap = engine.call_tool("a11y.snapshot", &json!({"level": "full"}));
    let snap = snap.result.expect("a snapshot of the virtual desktop");
    let node = find_password(&snap["tree"]).expect("the sign-in form's Password field");
    let typed = engine.call_tool(
        "a11y.input",
        &json!({"snapshot_id": snap["snapshot_id"], "node_id": node, "text": CANARY}),
    );
    assert!(typed.ok, "typing the password: {:?}", typed.error);
    engine
}

fn find_password(n: &Value) -> Option<Value> {
    if n["role"] == "edit" && n["name"] == "Password" {
        return Some(n["id"].clone());
    }
    match n {
        Value::Array(items) => items.iter().find_map(find_password),
        _ => n["children"].as_array()?.iter().find_map(find_password),
    }
}

/// What the server owes one message of a request: `Some(id)` for an answer with that
/// id, `None` for a valid notification.
fn owed(msg: &Value) -> Option<Value> {
    let Value::Object(m) = msg else {
        return Some(Value::Null);
    };
    match m.get("id") {
        Some(id @ (Value::Null | Value::String(_) | Value::Number(_))) => Some(id.clone()),
        Some(_) => Some(Value::Null),
        None => {
            let valid = m.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
                && m.get("method").is_some_and(Value::is_string);
            (!valid).then_some(Value::Null)
        }
    }
}

fn assert_response(r: &Value, id: &Value) {
    assert_eq!(&r["id"], id, "answer {r} does not echo id {id}");
    assert_eq!(r["jsonrpc"], "2.0", "answer {r}");
    let (has_result, has_error) = (r.get("result").is_some(), r.get("error").is_some());
    assert!(
        has_result != has_error,
        "answer {r} needs exactly one of result and error"
    );
}

/// The line's answers, checked against what it owes.
fn answers(engine: &Engine, line: &[u8]) -> Vec<Value> {
    let Ok(text) = std::str::from_utf8(line) else {
        return Vec::new(); // answered -32700 by the transport before any parsing
    };
    let text = text.trim();
    if text.is_empty() {
        return Vec::new();
    }
    let msg = match jsonrpc::parse(text) {
        Ok(v) => v,
        Err(e) => {
            let r = e.response();
            assert_eq!(r["error"]["code"], PARSE_ERROR);
            assert!(r["id"].is_null() || r["id"].is_string() || r["id"].is_number());
            return vec![r];
        }
    };
    // As the client reads it: written out, then read back.
    let answer = jsonrpc::handle_value(engine, &msg)
        .map(|a| serde_json::from_slice::<Value>(&a.to_bytes()).expect("an answer is JSON"));
    match (&msg, answer) {
        (Value::Array(items), None) => {
            assert!(!items.is_empty(), "an empty batch must be answered");
            for it in items {
                assert_eq!(owed(it), None, "batch item {it} was owed an answer");
            }
            Vec::new()
        }
        (Value::Array(items), Some(answer)) if items.is_empty() => {
            assert_response(&answer, &Value::Null);
            vec![answer]
        }
        (Value::Array(items), Some(answer)) => {
            let got = answer.as_array().expect("a batch is answered by an array");
            let want: Vec<Value> = items.iter().filter_map(owed).collect();
            assert_eq!(got.len(), want.len(), "batch answers {answer} for {msg}");
            for (r, id) in got.iter().zip(&want) {
                assert_response(r, id);
            }
            got.clone()
        }
        (one, answer) => {
            match (owed(one), &answer) {
                (Some(id), Some(r)) => assert_response(r, &id),
                (None, None) => {}
                (owed, got) => panic!("{one} owed {owed:?}, got {got:?}"),
            }
            answer.into_iter().collect()
        }
    }
}

/// The input is one line of the stdio transport (without its `\n`).
pub fn check(data: &[u8]) {
    if data.contains(&b'\n') {
        return; // two lines
    }
    let engine = engine();
    // From the first event on: typing the password emitted some already.
    let (replayed, sub) = engine.subscribe(65_536, Some(0));
    let (done, finished) = mpsc::channel::<()>();
    let watchdog = {
        let engine = engine.clone();
        std::thread::spawn(move || {
            while let Err(mpsc::RecvTimeoutError::Timeout) = finished.recv_timeout(WATCHDOG) {
                engine.panic(&json!({"on": true}));
            }
        })
    };
    let mut out = answers(&engine, data);
    drop(done);
    watchdog.join().expect("the watchdog");
    let status = engine.call_method("system.status", &json!({}));
    let status = status.expect("system.status is a method");
    assert!(
        status.ok,
        "system.status after the line: {:?}",
        status.error
    );
    out.push(serde_json::to_value(&status).expect("an envelope serializes"));
    engine.stop();
    drop(engine);
    for r in &out {
        let text = r.to_string();
        assert!(
            !text.contains(CANARY),
            "the password is in an answer: {text}"
        );
    }
    for ev in replayed
        .into_iter()
        .chain(std::iter::from_fn(|| sub.rx.try_recv().ok()))
    {
        let text = serde_json::to_string(&ev).expect("an event serializes");
        assert!(
            !text.contains(CANARY),
            "the password is in an event: {text}"
        );
    }
}
