//! The emergency stop, PROTOCOL §5.4: the protocol trigger, the watched panic file
//! (never deleted), pre-emption of the action in flight within a bounded time, and
//! nothing left held. (The hotkey is tested at engine level with a driver that
//! presses it.)

use crate::common;
use crate::safety_support;

use std::time::{Duration, Instant};

use common::Server;
use safety_support::*;
use serde_json::json;

#[test]
fn control_panic_on_and_off() {
    let mut s = session(json!({}));
    let r = panic(&mut s, true);
    assert_eq!(r, json!({"panic": true, "state": "stopped"}));
    let t = s.wait_event("safety.panic_triggered");
    assert_eq!(t["payload"], json!({"source": "protocol"}));
    for (tool, args) in [
        ("pointer.move", json!({"x": 1, "y": 1})),
        ("screen.capture", json!({"scale": 0.1})),
        ("wait.pause", json!({"ms": 0})),
        (
            "batch.execute",
            json!({"items": [{"tool": "window.list", "arguments": {}}]}),
        ),
    ] {
        let env = refused(&mut s, tool, args, "safety_stopped");
        assert_eq!(env["meta"]["state"], "stopped");
    }
    // Pressing it again changes nothing and says nothing.
    panic(&mut s, true);
    let r = panic(&mut s, false);
    assert_eq!(r, json!({"panic": false, "state": "ready"}));
    let rel = s.wait_event("safety.panic_released");
    assert_eq!(rel["payload"], json!({"source": "protocol"}));
    s.ok("pointer.move", json!({"x": 1, "y": 1}));
    // session.resume also leaves `stopped`.
    panic(&mut s, true);
    let r = s.call("session.resume", json!(null));
    assert_eq!(r["result"]["state"], "ready");
    let (_, resumed) = s.wait_event_from("session.resumed", 0);
    assert_eq!(resumed["payload"], json!({"from": "stopped"}));
    settle(&mut s, Duration::from_millis(50));
    let types = s.event_types();
    let count = |k: &str| types.iter().filter(|t| *t == k).count();
    assert_eq!(count("safety.panic_triggered"), 2, "{types:?}");
    assert_eq!(count("safety.panic_released"), 2, "{types:?}");
    // Without a session the stop still latches: it is the server's, not the session's.
    s.call("session.stop", json!(null));
    let env = s.call("control.panic", json!({"on": true}));
    assert_eq!(env["result"], json!({"panic": true, "state": "idle"}));
    let started = s.call("session.start", json!(null));
    assert_eq!(started["result"]["state"], "stopped");
    refused(
        &mut s,
        "pointer.move",
        json!({"x": 1, "y": 1}),
        "safety_stopped",
    );
    let r = panic(&mut s, false);
    assert_eq!(r, json!({"panic": false, "state": "ready"}));
    s.ok("pointer.move", json!({"x": 1, "y": 1}));
}

/// The panic pre-empts a 10 000-character type: `safety_stopped` at once, a fraction
/// of the text typed, nothing held.
#[test]
fn panic_preempts_a_long_type_and_releases_everything() {
    // Long names so the read-back value is whole (not cut with an ellipsis).
    let mut s = session(json!({"a11y": {"max_name_len": 4096}}));
    let text: String = "abcdefghij".repeat(1000);
    let id = s.send(
        "tools.call",
        json!({"tool": "keyboard.type", "arguments": {"text": text, "interval_ms": 1}}),
    );
    s.wait_event_matching("action.started", 0, |p| p["tool"] == "keyboard.type");
    std::thread::sleep(Duration::from_millis(300));
    let sent = Instant::now();
    let p = s.send("control.panic", json!({"on": true}));
    let typed = s.response(id);
    let latency = sent.elapsed();
    let p = s.response(p);
    assert_eq!(p["result"]["result"]["state"], "stopped");
    let env = &typed["result"];
    assert_eq!(env["ok"], false, "{env}");
    assert_eq!(env["error"]["code"], "safety_stopped", "{env}");
    eprintln!("panic to interrupted response: {latency:?}");
    // The spec bound is 50 ms; the test only guards against "ran on" (the measured
    // number is in docs/PERFORMANCE.md).
    assert!(latency < Duration::from_millis(1000), "{latency:?}");
    assert_nothing_held(&mut s);
    panic(&mut s, false);
    let value = name_value(&mut s);
    assert!(!value.is_empty(), "typing had started");
    assert!(value.len() < 5000, "{} characters arrived", value.len());
    assert!(
        text.starts_with(&value),
        "typed exactly a prefix: {value:?}"
    );
    // The finish event says how it ended.
    let (_, fin) = s.wait_event_matching("action.finished", 0, |p| p["tool"] == "keyboard.type");
    assert_eq!(fin["payload"]["error_code"], "safety_stopped");
}

/// A drag holding its button is interrupted and the button released; `held` shows the
/// button while it is down.
#[test]
fn an_interrupted_drag_leaves_no_button_held() {
    let mut s = session(json!({}));
    let id = s.send(
        "tools.call",
        json!({"tool": "pointer.drag", "arguments": {
            "from": {"x": DESKTOP.0, "y": DESKTOP.1},
            "to": {"x": DESKTOP.0 + 200, "y": DESKTOP.1},
            "hold_ms": 5000
        }}),
    );
    s.wait_event_matching("action.started", 0, |p| p["tool"] == "pointer.drag");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let h = held(&mut s);
        if h["buttons"] == json!(["left"]) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the button never showed as held: {h}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let sent = Instant::now();
    panic(&mut s, true);
    let env = s.response(id)["result"].clone();
    assert!(sent.elapsed() < Duration::from_secs(1));
    assert_eq!(env["error"]["code"], "safety_stopped", "{env}");
    assert_nothing_held(&mut s);
}

/// The panic file is watched: creating it stops the session without any call,
/// removing it releases; it stops an action in flight; it is never deleted.
#[test]
fn the_panic_file_is_watched_and_never_deleted() {
    let dir = common::tempfile_dir::TempDir::new();
    let file = dir.0.join("EMERGENCY_STOP");
    let path = file.to_str().unwrap().to_string();
    let mut s = Server::start_with(Some(json!({"safety": {"panic_file": path}})), &[]);
    s.start_session(json!({}));
    s.ok("pointer.move", json!({"x": 1, "y": 1}));
    std::fs::write(&file, b"stop").unwrap();
    let t = s.wait_event("safety.panic_triggered");
    assert_eq!(t["payload"], json!({"source": "file"}));
    assert_eq!(state(&mut s), "stopped");
    refused(
        &mut s,
        "pointer.move",
        json!({"x": 1, "y": 1}),
        "safety_stopped",
    );
    // While the file exists, nothing else releases the stop.
    assert_eq!(
        panic(&mut s, false),
        json!({"panic": true, "state": "stopped"})
    );
    assert_eq!(
        s.call("session.resume", json!(null))["result"]["state"],
        "stopped"
    );
    assert!(
        !s.event_types()
            .contains(&"safety.panic_released".to_string())
    );
    assert!(file.exists());
    std::fs::remove_file(&file).unwrap();
    let r = s.wait_event("safety.panic_released");
    assert_eq!(r["payload"], json!({"source": "file"}));
    s.ok("pointer.move", json!({"x": 2, "y": 2}));
    // It pre-empts an action in flight too.
    let id = s.send(
        "tools.call",
        json!({"tool": "keyboard.type", "arguments": {"text": "y".repeat(5000), "interval_ms": 1}}),
    );
    s.wait_event_matching("action.started", 0, |p| p["tool"] == "keyboard.type");
    let created = Instant::now();
    std::fs::write(&file, b"stop").unwrap();
    let env = s.response(id)["result"].clone();
    assert_eq!(env["error"]["code"], "safety_stopped", "{env}");
    assert!(created.elapsed() < Duration::from_secs(1));
    assert_nothing_held(&mut s);
    // Stop and exit: the file the server did not create is still there.
    s.call("session.stop", json!(null));
    assert!(file.exists(), "deleted by session.stop");
    let (status, _) = s.finish();
    assert!(status.success());
    assert!(file.exists(), "deleted at exit");
}

/// A session that starts while the panic file exists is stopped from its first call.
#[test]
fn a_session_started_under_a_panic_file_is_stopped_at_once() {
    let dir = common::tempfile_dir::TempDir::new();
    let file = dir.0.join("STOP");
    std::fs::write(&file, b"").unwrap();
    let mut s = Server::start();
    s.start_session(json!({"safety": {"panic_file": file.to_str().unwrap()}}));
    refused(
        &mut s,
        "pointer.move",
        json!({"x": 1, "y": 1}),
        "safety_stopped",
    );
    let t = s.wait_event("safety.panic_triggered");
    assert_eq!(t["payload"]["source"], "file");
    std::fs::remove_file(&file).unwrap();
    s.wait_event("safety.panic_released");
    s.ok("pointer.move", json!({"x": 1, "y": 1}));
    // The path is fixed for the session: it cannot be changed at runtime.
    let env = s.call("session.configure", json!({"safety": {"panic_file": ""}}));
    assert_eq!(env["error"]["code"], "invalid_config");
}

/// The stop is the server's: ending the session and starting another keeps it, and
/// only a release by a person (here the stdio host) lets actions run again.
#[test]
fn the_stop_outlives_session_stop_and_start() {
    let mut s = session(json!({}));
    panic(&mut s, true);
    s.call("session.stop", json!(null));
    let started = s.call("session.start", json!(null));
    assert_eq!(started["result"]["state"], "stopped", "{started}");
    assert_eq!(state(&mut s), "stopped");
    refused(
        &mut s,
        "pointer.move",
        json!({"x": 1, "y": 1}),
        "safety_stopped",
    );
    // Released by the host: the session says it resumed.
    let r = panic(&mut s, false);
    assert_eq!(r, json!({"panic": false, "state": "ready"}));
    let (_, resumed) = s.wait_event_from("session.resumed", 0);
    assert_eq!(resumed["payload"], json!({"from": "stopped"}));
    s.ok("pointer.move", json!({"x": 1, "y": 1}));
}

/// A stop raised by a panic file that a session named holds after that session ends,
/// refuses every other release while the file exists, and ends when it is removed.
#[test]
fn a_file_raised_stop_holds_across_sessions_until_the_file_goes() {
    let dir = common::tempfile_dir::TempDir::new();
    let file = dir.0.join("STOP");
    let mut s = Server::start();
    s.start_session(json!({"safety": {"panic_file": file.to_str().unwrap()}}));
    std::fs::write(&file, b"").unwrap();
    s.wait_event("safety.panic_triggered");
    s.call("session.stop", json!(null));
    // The new session watches no file of its own; the old one still holds the stop.
    s.start_session(json!({}));
    assert_eq!(state(&mut s), "stopped");
    assert_eq!(panic(&mut s, false)["panic"], true);
    assert_eq!(
        s.call("session.resume", json!(null))["result"]["state"],
        "stopped"
    );
    refused(
        &mut s,
        "pointer.move",
        json!({"x": 1, "y": 1}),
        "safety_stopped",
    );
    std::fs::remove_file(&file).unwrap();
    let r = s.wait_event("safety.panic_released");
    assert_eq!(r["payload"], json!({"source": "file"}));
    s.ok("pointer.move", json!({"x": 1, "y": 1}));
}

/// Removing the panic file releases only a stop the file raised: an operator's stop
/// stays on when a file comes and goes.
#[test]
fn removing_the_file_does_not_release_an_operator_stop() {
    let dir = common::tempfile_dir::TempDir::new();
    let file = dir.0.join("STOP");
    let path = file.to_str().unwrap().to_string();
    let mut s = Server::start_with(Some(json!({"safety": {"panic_file": path}})), &[]);
    s.start_session(json!({}));
    panic(&mut s, true);
    std::fs::write(&file, b"").unwrap();
    settle(&mut s, Duration::from_millis(100));
    std::fs::remove_file(&file).unwrap();
    settle(&mut s, Duration::from_millis(100));
    assert_eq!(state(&mut s), "stopped");
    assert!(
        !s.event_types()
            .contains(&"safety.panic_released".to_string())
    );
    assert_eq!(panic(&mut s, false)["panic"], false);
}
