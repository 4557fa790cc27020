//! The idle watchdog (PROTOCOL §5.5), the session state machine (§5.1) and
//! `session.stop` (§10).

use crate::common;
use crate::safety_support;

use std::time::{Duration, Instant};

use common::Server;
use safety_support::*;
use serde_json::json;

fn count(s: &Server, kind: &str) -> usize {
    s.event_types().iter().filter(|t| *t == kind).count()
}

#[test]
fn idle_emits_once_then_standby_until_resume() {
    // From before the server starts: its idle clock cannot start earlier, while a start
    // slowed by a loaded machine would eat into a bound measured from after it.
    let t = Instant::now();
    let mut s = session(json!({"safety": {"idle_timeout_s": 0.3}}));
    let idle = s.wait_event("session.idle");
    assert!(
        t.elapsed() >= Duration::from_millis(250),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(idle["payload"], json!({"after_s": 0.3}));
    assert_eq!(state(&mut s), "standby");
    let env = refused(
        &mut s,
        "pointer.move",
        json!({"x": 1, "y": 1}),
        "safety_standby",
    );
    assert_eq!(env["meta"]["state"], "standby");
    refused(
        &mut s,
        "screen.capture",
        json!({"scale": 0.1}),
        "safety_standby",
    );
    // Once: no second idle event however long it stays idle.
    settle(&mut s, Duration::from_millis(700));
    assert_eq!(count(&s, "session.idle"), 1);
    let r = s.call("session.resume", json!(null));
    assert_eq!(r["result"]["state"], "ready");
    let resumed = s.wait_event("session.resumed");
    assert_eq!(resumed["payload"], json!({"from": "standby"}));
    s.ok("pointer.move", json!({"x": 1, "y": 1}));
    // Idle again later: a new episode, a new event.
    s.wait_event_from("session.idle", s.events.len());
    assert_eq!(count(&s, "session.idle"), 2);
    assert_eq!(state(&mut s), "standby");
}

#[test]
fn actions_keep_the_session_awake() {
    let mut s = session(json!({"safety": {"idle_timeout_s": 0.4}}));
    for _ in 0..8 {
        std::thread::sleep(Duration::from_millis(100));
        s.ok("pointer.move", json!({"x": 3, "y": 3}));
    }
    settle(&mut s, Duration::from_millis(50));
    assert_eq!(count(&s, "session.idle"), 0);
    // Refused calls are not activity.
    configure(
        &mut s,
        json!({"safety": {"rules": [{"match": {"tool": "*"}, "effect": "deny"}]}}),
    );
    for _ in 0..6 {
        std::thread::sleep(Duration::from_millis(100));
        s.tool("pointer.move", json!({"x": 3, "y": 3}));
    }
    s.wait_event("session.idle");
}

#[test]
fn idle_action_none_only_reports() {
    let mut s = session(json!({"safety": {"idle_timeout_s": 0.2, "idle_action": "none"}}));
    s.wait_event("session.idle");
    assert_eq!(state(&mut s), "ready");
    settle(&mut s, Duration::from_millis(500));
    assert_eq!(count(&s, "session.idle"), 1, "once per idle episode");
    s.ok("pointer.move", json!({"x": 1, "y": 1}));
    // Resume in ready changes nothing.
    let r = s.call("session.resume", json!(null));
    assert_eq!(r["result"]["state"], "ready");
    assert_eq!(count(&s, "session.resumed"), 0);
}

#[test]
fn a_pending_confirmation_is_never_put_into_standby() {
    let mut s = session(json!({"safety": {"idle_timeout_s": 0.2, "confirm_timeout_s": 30}}));
    let (id, _) = parked(&mut s, "keyboard.combo", json!({"keys": ["win", "r"]}));
    settle(&mut s, Duration::from_millis(800));
    assert_eq!(count(&s, "session.idle"), 0);
    assert_eq!(state(&mut s), "confirming");
    // Still answerable, and the approved action runs.
    assert_eq!(confirm(&mut s, &id, true)["result"]["status"], "approved");
    let (_, fin) = s.wait_event_matching("action.finished", 0, |p| p["request_id"] == id.as_str());
    assert_eq!(fin["payload"]["ok"], true);
    // Afterwards idleness counts again.
    s.wait_event("session.idle");
}

#[test]
fn standby_and_stop_in_the_state_machine() {
    let mut s = Server::start();
    // idle: no session.
    assert_eq!(state(&mut s), "idle");
    refused(
        &mut s,
        "pointer.move",
        json!({"x": 1, "y": 1}),
        "not_started",
    );
    assert_eq!(
        s.call("session.resume", json!(null))["error"]["code"],
        "not_started"
    );
    // idle -> ready.
    s.start_session(json!({"safety": {"idle_timeout_s": 0.2}}));
    assert_eq!(state(&mut s), "ready");
    assert_eq!(
        s.call("session.start", json!({}))["error"]["code"],
        "already_started"
    );
    // ready -> standby -> (panic) stopped -> ready.
    s.wait_event("session.idle");
    assert_eq!(state(&mut s), "standby");
    panic(&mut s, true);
    assert_eq!(state(&mut s), "stopped");
    panic(&mut s, false);
    assert_eq!(state(&mut s), "ready");
    // any -> idle.
    let r = s.call("session.stop", json!(null));
    assert_eq!(r["result"]["state"], "idle");
    s.wait_event("session.stopped");
    assert_eq!(state(&mut s), "idle");
    refused(
        &mut s,
        "pointer.move",
        json!({"x": 1, "y": 1}),
        "not_started",
    );
    // Stop again is harmless; a new session starts fresh.
    assert_eq!(
        s.call("session.stop", json!(null))["result"]["state"],
        "idle"
    );
    s.start_session(json!({}));
    assert_eq!(state(&mut s), "ready");
}

/// §10: queued actions are refused at once, the one in flight runs to its end, then
/// the session ends.
#[test]
fn session_stop_lets_the_action_in_flight_finish_and_refuses_the_queue() {
    let mut s = session(json!({}));
    let running = s.send(
        "tools.call",
        json!({"tool": "wait.pause", "arguments": {"ms": 800}}),
    );
    s.wait_event_matching("action.started", 0, |p| p["tool"] == "wait.pause");
    let queued: Vec<u64> = (0..3)
        .map(|i| {
            s.send(
                "tools.call",
                json!({"tool": "pointer.move", "arguments": {"x": i, "y": i}}),
            )
        })
        .collect();
    let t = Instant::now();
    let stop = s.send("session.stop", json!(null));
    for q in queued {
        let env = s.response(q)["result"].clone();
        assert_eq!(env["error"]["code"], "safety_stopped", "{env}");
    }
    assert!(
        t.elapsed() < Duration::from_millis(600),
        "queued calls were not refused at once"
    );
    let env = s.response(running)["result"].clone();
    assert_eq!(
        env["ok"], true,
        "the action in flight was not pre-empted: {env}"
    );
    assert_eq!(env["result"]["waited_ms"], 800);
    let stop = s.response(stop)["result"].clone();
    assert_eq!(stop["result"], json!({"state": "idle"}));
    let (stopped, _) = s.wait_event_from("session.stopped", 0);
    let finished = index_of(&s, "action.finished", 0, |p| p["tool"] == "wait.pause");
    assert!(finished < stopped, "{:?}", s.event_types());
    // No pointer.move ever started.
    assert!(
        !s.events
            .iter()
            .any(|e| e["type"] == "action.started" && e["payload"]["tool"] == "pointer.move")
    );
    refused(
        &mut s,
        "pointer.move",
        json!({"x": 1, "y": 1}),
        "not_started",
    );
}

/// Standby is the server's too: a new session starts in it, and only
/// `session.resume` (a person's call) leaves it.
#[test]
fn standby_outlives_session_stop_and_start() {
    let mut s = session(json!({"safety": {"idle_timeout_s": 0.2}}));
    s.wait_event("session.idle");
    assert_eq!(state(&mut s), "standby");
    s.call("session.stop", json!(null));
    let started = s.call("session.start", json!(null));
    assert_eq!(started["result"]["state"], "standby", "{started}");
    refused(
        &mut s,
        "pointer.move",
        json!({"x": 1, "y": 1}),
        "safety_standby",
    );
    let r = s.call("session.resume", json!(null));
    assert_eq!(r["result"]["state"], "ready");
    s.ok("pointer.move", json!({"x": 1, "y": 1}));
}
