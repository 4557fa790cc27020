//! Confirmation, PROTOCOL §5.3, point by point (the 300 s memory of expired ids is
//! proved with a manual clock in the engine's own tests).

use crate::common;
use crate::safety_support;

use std::time::{Duration, Instant};

use safety_support::*;
use serde_json::json;

const WIN_R: &str = r#"{"keys": ["win", "r"]}"#;

fn win_r() -> serde_json::Value {
    serde_json::from_str(WIN_R).unwrap()
}

fn is_cfm_id(id: &str) -> bool {
    id.len() == 16
        && id.starts_with("cfm-")
        && id[4..]
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
}

/// §5.3.1 and §5.3.3: the parked answer, the requested event, the status, then the
/// approval and its events in order, the last one with the whole envelope.
#[test]
fn request_approve_and_events_in_order() {
    let mut s = session(json!({"safety": {"confirm_timeout_s": 30}}));
    let before = now_ms();
    let (id, r) = parked(&mut s, "keyboard.combo", win_r());
    assert!(is_cfm_id(&id), "{id}");
    assert_eq!(r["risk"], "high");
    assert!(r["reason"].is_string());
    let (ri, requested) = s.wait_event_from("safety.confirmation_requested", 0);
    let p = &requested["payload"];
    assert_eq!(p["request_id"], id.as_str());
    assert_eq!(p["tool"], "keyboard.combo");
    assert_eq!(p["arguments"]["keys"], json!(["win", "r"]));
    assert_eq!(p["risk"], "high");
    assert_eq!(p["reason"], r["reason"]);
    assert_eq!(p["timeout_s"], 30.0);
    // expires_at: RFC 3339 wall clock, about now + 30 s.
    let expires = rfc3339_ms(p["expires_at"].as_str().unwrap());
    assert!(
        (before + 29_000..=now_ms() + 31_000).contains(&expires),
        "expires_at {} is not now + 30 s",
        p["expires_at"]
    );
    // The status shows it, and the state is `confirming`.
    let st = status(&mut s);
    assert_eq!(st["state"], "confirming");
    let pc = &st["pending_confirmation"];
    assert_eq!(pc["request_id"], id.as_str());
    assert_eq!(pc["tool"], "keyboard.combo");
    assert_eq!(pc["risk"], "high");
    assert_eq!(pc["expires_at"], p["expires_at"]);
    let left = pc["expires_in_s"].as_f64().unwrap();
    assert!((25.0..=30.0).contains(&left), "{left}");
    // §5.3.3: the answer comes at once.
    let t = Instant::now();
    let answer = confirm(&mut s, &id, true);
    assert!(t.elapsed() < Duration::from_secs(2));
    assert_eq!(answer["ok"], true, "{answer}");
    assert_eq!(
        answer["result"],
        json!({"request_id": id, "status": "approved"})
    );
    let (fi, fin) =
        s.wait_event_matching("action.finished", ri, |p| p["request_id"] == id.as_str());
    let resolved = index_of(&s, "safety.confirmation_resolved", ri, |p| {
        p["request_id"] == id.as_str()
    });
    let started = index_of(&s, "action.started", ri, |p| p["request_id"] == id.as_str());
    assert!(
        ri < resolved && resolved < started && started < fi,
        "{:?}",
        s.event_types()
    );
    assert_eq!(s.events[resolved]["payload"]["approve"], true);
    assert_eq!(s.events[resolved]["payload"]["tool"], "keyboard.combo");
    assert_eq!(s.events[started]["payload"]["tool"], "keyboard.combo");
    let f = &fin["payload"];
    assert_eq!(f["ok"], true);
    assert_eq!(f["tool"], "keyboard.combo");
    let env = &f["envelope"];
    assert_eq!(env["ok"], true, "{env}");
    assert_eq!(env["result"]["keys"], json!(["win", "r"]), "{env}");
    assert_eq!(env["meta"]["tool"], "keyboard.combo");
    assert!(env["meta"]["duration_ms"].is_number());
    assert_eq!(state(&mut s), "ready");
    assert!(status(&mut s)["pending_confirmation"].is_null());
    assert_nothing_held(&mut s);
}

/// §5.3.1: ids are fresh every time.
#[test]
fn ids_are_cfm_and_12_hex_and_unique() {
    let mut s = session(json!({}));
    let mut seen = std::collections::HashSet::new();
    for _ in 0..20 {
        let (id, _) = parked(&mut s, "keyboard.combo", win_r());
        assert!(is_cfm_id(&id), "{id}");
        assert!(seen.insert(id.clone()), "{id} reused");
        confirm(&mut s, &id, false);
    }
}

/// §5.3.2: everything is busy while a confirmation is pending.
#[test]
fn busy_while_pending() {
    let mut s = session(json!({}));
    let (id, _) = parked(&mut s, "keyboard.combo", win_r());
    for (tool, args) in [
        ("pointer.move", json!({"x": 1, "y": 1})),
        ("screen.capture", json!({"scale": 0.1})),
        ("a11y.snapshot", json!({})),
        ("wait.pause", json!({"ms": 0})),
        ("keyboard.combo", win_r()),
        (
            "batch.execute",
            json!({"items": [{"tool": "window.list", "arguments": {}}]}),
        ),
    ] {
        let env = refused(&mut s, tool, args, "busy");
        assert_eq!(env["error"]["data"]["request_id"], id.as_str(), "{env}");
    }
    // Exactly one request: the busy calls asked for nothing.
    let n = s
        .event_types()
        .iter()
        .filter(|t| *t == "safety.confirmation_requested")
        .count();
    assert_eq!(n, 1);
    assert_eq!(confirm(&mut s, &id, false)["result"]["status"], "denied");
    s.ok("pointer.move", json!({"x": 1, "y": 1}));
}

/// §5.3.2: with `observe_while_confirming`, benign observations still run; nothing
/// else does, and an observation never replaces the pending request.
#[test]
fn observe_while_confirming_lets_observations_run() {
    let mut s = session(
        json!({"safety": {"observe_while_confirming": true, "rules": [
            {"match": {"tool": "window.list"}, "effect": "confirm"}
        ]}}),
    );
    let (id, _) = parked(&mut s, "keyboard.combo", win_r());
    s.ok("screen.capture", json!({"scale": 0.1}));
    s.ok("a11y.snapshot", json!({"level": "skeleton"}));
    let r = s.ok(
        "batch.execute",
        json!({"items": [{"tool": "screen.capture", "arguments": {"scale": 0.1}}], "gap_ms": 0}),
    );
    assert_eq!(r["status"], "completed");
    refused(&mut s, "wait.pause", json!({"ms": 0}), "busy");
    refused(&mut s, "pointer.move", json!({"x": 1, "y": 1}), "busy");
    // An observation that itself needs a confirmation is busy, not a second request.
    refused(&mut s, "window.list", json!({}), "busy");
    assert_eq!(
        status(&mut s)["pending_confirmation"]["request_id"],
        id.as_str()
    );
    assert_eq!(confirm(&mut s, &id, true)["result"]["status"], "approved");
}

/// §5.3.3: a denial runs nothing; an answered id is gone.
#[test]
fn deny_and_unknown_ids() {
    let mut s = session(json!({}));
    let (id, _) = parked(&mut s, "keyboard.combo", win_r());
    let answer = confirm(&mut s, &id, false);
    assert_eq!(
        answer["result"],
        json!({"request_id": id, "status": "denied"})
    );
    let (_, resolved) = s.wait_event_matching("safety.confirmation_resolved", 0, |p| {
        p["request_id"] == id.as_str()
    });
    assert_eq!(resolved["payload"]["approve"], false);
    for again in [true, false] {
        let env = confirm(&mut s, &id, again);
        assert_eq!(env["error"]["code"], "confirmation_not_found", "{env}");
    }
    let env = confirm(&mut s, "cfm-000000000000", true);
    assert_eq!(env["error"]["code"], "confirmation_not_found");
    settle(&mut s, Duration::from_millis(100));
    assert!(events_for(&s, "action.started", &id).is_empty());
    assert!(
        !s.event_types().contains(&"action.started".to_string()),
        "{:?}",
        s.event_types()
    );
    // Bad params are invalid_arguments.
    let env = s.call("session.confirm", json!({"request_id": id}));
    assert_eq!(env["error"]["code"], "invalid_arguments");
}

/// §5.3.4: the timeout denies, says so, and the id is then `confirmation_expired`.
#[test]
fn timeout_auto_denies_and_the_id_is_remembered_as_expired() {
    let mut s = session(json!({"safety": {"confirm_timeout_s": 0.3}}));
    let t = Instant::now();
    let (id, _) = parked(&mut s, "keyboard.combo", win_r());
    let (_, expired) = s.wait_event_matching("safety.confirmation_expired", 0, |p| {
        p["request_id"] == id.as_str()
    });
    let waited = t.elapsed();
    assert!(
        waited >= Duration::from_millis(280),
        "expired early: {waited:?}"
    );
    assert!(waited < Duration::from_secs(3), "expired late: {waited:?}");
    assert_eq!(expired["payload"], json!({"request_id": id}));
    let env = confirm(&mut s, &id, true);
    assert_eq!(env["error"]["code"], "confirmation_expired", "{env}");
    assert_eq!(state(&mut s), "ready");
    assert!(events_for(&s, "safety.confirmation_resolved", &id).is_empty());
    assert!(events_for(&s, "action.started", &id).is_empty());
    s.ok("pointer.move", json!({"x": 2, "y": 2}));
}

/// §5.3.5: one confirmation for the whole batch; once approved every item runs, the
/// triggering one included, and the batch reports as one approved action.
#[test]
fn one_confirmation_for_a_whole_batch() {
    let mut s = session(json!({}));
    let (id, r) = parked(
        &mut s,
        "batch.execute",
        json!({"items": [
            {"tool": "keyboard.type", "arguments": {"text": "ab"}},
            {"tool": "keyboard.combo", "arguments": {"keys": ["win", "r"]}},
            {"tool": "keyboard.combo", "arguments": {"keys": ["ctrl", "alt", "t"]}},
            {"tool": "keyboard.type", "arguments": {"text": "cd"}}
        ], "gap_ms": 0}),
    );
    assert_eq!(r["risk"], "high");
    let (ri, req) = s.wait_event_from("safety.confirmation_requested", 0);
    assert_eq!(req["payload"]["tool"], "batch.execute");
    assert_eq!(
        req["payload"]["arguments"]["items"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
    // Nothing ran before the approval (a run's events would precede the answer).
    assert!(!s.event_types().contains(&"action.started".to_string()));
    confirm(&mut s, &id, true);
    let (fi, fin) =
        s.wait_event_matching("action.finished", ri, |p| p["request_id"] == id.as_str());
    let n = s
        .event_types()
        .iter()
        .filter(|t| *t == "safety.confirmation_requested")
        .count();
    assert_eq!(n, 1, "one confirmation for all items");
    let started = index_of(&s, "action.started", ri, |p| p["request_id"] == id.as_str());
    let resolved = index_of(&s, "safety.confirmation_resolved", ri, |p| {
        p["request_id"] == id.as_str()
    });
    assert!(resolved < started && started < fi);
    let batch_done = index_of(&s, "batch.finished", started, |_| true);
    assert!(batch_done < fi);
    let env = &fin["payload"]["envelope"];
    assert_eq!(fin["payload"]["tool"], "batch.execute");
    assert_eq!(env["result"]["status"], "completed", "{env}");
    let items = env["result"]["items"].as_array().unwrap();
    assert_eq!(items.len(), 4);
    assert!(items.iter().all(|i| i["ok"] == true), "{env}");
    // Each item ran, as its own action between the batch's start and finish.
    let item_runs = s.events[started + 1..fi]
        .iter()
        .filter(|e| e["type"] == "action.finished")
        .count();
    assert_eq!(item_runs, 4);
    assert_eq!(name_value(&mut s), "abcd");
}

/// §5.3.5: each item is re-gated: a deny rule added after the approval stops it.
#[test]
fn a_deny_rule_added_after_approval_stops_the_batch() {
    let mut s = session(json!({}));
    let (id, _) = parked(
        &mut s,
        "batch.execute",
        json!({"items": [
            {"tool": "keyboard.combo", "arguments": {"keys": ["win", "r"]}},
            {"tool": "wait.pause", "arguments": {"ms": 600}},
            {"tool": "keyboard.type", "arguments": {"text": "late"}},
            {"tool": "keyboard.type", "arguments": {"text": "later"}}
        ], "gap_ms": 0}),
    );
    confirm(&mut s, &id, true);
    s.wait_event_matching("action.started", 0, |p| p["tool"] == "wait.pause");
    configure(
        &mut s,
        json!({"safety": {"rules": [{"match": {"tool": "keyboard.type"}, "effect": "deny"}]}}),
    );
    let (_, fin) = s.wait_event_matching("action.finished", 0, |p| p["request_id"] == id.as_str());
    let env = &fin["payload"]["envelope"];
    assert_eq!(env["result"]["status"], "aborted", "{env}");
    let items = env["result"]["items"].as_array().unwrap();
    assert_eq!(items.len(), 3, "stopped at the first denied item: {env}");
    assert_eq!(items[1]["ok"], true);
    assert_eq!(items[2]["error"]["code"], "policy_denied");
    configure(&mut s, json!({"safety": {"rules": []}}));
    assert_eq!(name_value(&mut s), "", "no item typed");
}

/// §5.3.5: a panic mid-batch interrupts the running item and stops the rest.
#[test]
fn a_panic_mid_batch_stops_the_remaining_items() {
    let mut s = session(json!({}));
    let (id, _) = parked(
        &mut s,
        "batch.execute",
        json!({"items": [
            {"tool": "keyboard.combo", "arguments": {"keys": ["win", "r"]}},
            {"tool": "wait.pause", "arguments": {"ms": 5000}},
            {"tool": "keyboard.type", "arguments": {"text": "never"}}
        ], "gap_ms": 0}),
    );
    confirm(&mut s, &id, true);
    s.wait_event_matching("action.started", 0, |p| p["tool"] == "wait.pause");
    let t = Instant::now();
    panic(&mut s, true);
    let (_, fin) = s.wait_event_matching("action.finished", 0, |p| p["request_id"] == id.as_str());
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "the pause was not interrupted"
    );
    let env = &fin["payload"]["envelope"];
    assert_eq!(env["result"]["status"], "aborted", "{env}");
    let items = env["result"]["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{env}");
    assert_eq!(items[1]["error"]["code"], "safety_stopped");
    panic(&mut s, false);
    assert_eq!(name_value(&mut s), "");
    assert_nothing_held(&mut s);
}

/// §5.3.6: a panic cancels the pending request.
#[test]
fn panic_cancels_a_pending_request() {
    let mut s = session(json!({}));
    let (id, _) = parked(&mut s, "keyboard.combo", win_r());
    panic(&mut s, true);
    let (ri, resolved) = s.wait_event_matching("safety.confirmation_resolved", 0, |p| {
        p["request_id"] == id.as_str()
    });
    assert_eq!(resolved["payload"]["approve"], false);
    assert!(resolved["payload"]["reason"].is_string(), "{resolved}");
    let (pi, _) = s.wait_event_from("safety.panic_triggered", 0);
    assert!(ri < pi);
    assert!(status(&mut s)["pending_confirmation"].is_null());
    assert_eq!(
        confirm(&mut s, &id, true)["error"]["code"],
        "confirmation_not_found"
    );
    panic(&mut s, false);
    settle(&mut s, Duration::from_millis(50));
    assert!(events_for(&s, "action.started", &id).is_empty());
}

/// §5.3.6: `session.stop` cancels the pending request, then the session ends.
#[test]
fn session_stop_cancels_a_pending_request() {
    let mut s = session(json!({}));
    let (id, _) = parked(&mut s, "keyboard.combo", win_r());
    let stop = s.call("session.stop", json!(null));
    assert_eq!(stop["result"]["state"], "idle");
    let (ri, resolved) = s.wait_event_matching("safety.confirmation_resolved", 0, |p| {
        p["request_id"] == id.as_str()
    });
    assert_eq!(resolved["payload"]["approve"], false);
    assert!(
        resolved["payload"]["reason"]
            .as_str()
            .unwrap()
            .contains("stop"),
        "{resolved}"
    );
    let (si, _) = s.wait_event_from("session.stopped", 0);
    assert!(ri < si);
    assert!(events_for(&s, "action.started", &id).is_empty());
}

/// Answers racing the deadline: each request gets exactly one outcome, and the
/// answer to `session.confirm` agrees with it.
#[test]
fn confirm_racing_the_expiry_has_exactly_one_outcome() {
    const TIMEOUT_MS: u64 = 60;
    const RUNS: usize = 100;
    let mut s = session(
        json!({"safety": {"confirm_timeout_s": TIMEOUT_MS as f64 / 1000.0, "rules": [
            {"match": {"tool": "wait.pause"}, "effect": "confirm"}
        ]}}),
    );
    let mut answers = Vec::with_capacity(RUNS);
    for i in 0..RUNS {
        let (id, _) = parked(&mut s, "wait.pause", json!({"ms": 0}));
        let parked_at = Instant::now();
        // Sweep the answer across the deadline: from 20 ms early to 20 ms late.
        let offset = TIMEOUT_MS as i64 - 20 + (i as i64 % 41);
        let at = parked_at + Duration::from_millis(offset.max(0) as u64);
        while Instant::now() < at {
            std::thread::sleep(Duration::from_micros(200));
        }
        let approve = i % 2 == 0;
        let env = confirm(&mut s, &id, approve);
        let outcome = if env["ok"] == true {
            env["result"]["status"].as_str().unwrap().to_string()
        } else {
            env["error"]["code"].as_str().unwrap().to_string()
        };
        answers.push((id, approve, outcome));
        // Make sure the pending request is gone before the next one (an approved
        // action is queued; the next call runs after it).
        if s.tool("window.list", json!({}))["ok"] != true {
            panic!("left busy: {:?}", answers.last());
        }
    }
    settle(&mut s, Duration::from_millis(200));
    let (mut expired_n, mut resolved_n) = (0, 0);
    for (id, approve, outcome) in &answers {
        let resolved = events_for(&s, "safety.confirmation_resolved", id);
        let expired = events_for(&s, "safety.confirmation_expired", id);
        assert_eq!(
            resolved.len() + expired.len(),
            1,
            "{id}: resolved {resolved:?}, expired {expired:?}, answer {outcome}"
        );
        let started = events_for(&s, "action.started", id);
        match outcome.as_str() {
            "approved" | "denied" => {
                assert_eq!(resolved.len(), 1, "{id} {outcome}");
                assert_eq!(resolved[0]["payload"]["approve"], *approve);
                assert_eq!(*approve, outcome == "approved");
                assert_eq!(started.len(), usize::from(*approve), "{id}");
                resolved_n += 1;
            }
            "confirmation_expired" => {
                assert_eq!(expired.len(), 1, "{id}");
                assert!(started.is_empty(), "{id}: an expired request ran");
                expired_n += 1;
            }
            other => panic!("{id}: unexpected answer {other}"),
        }
    }
    eprintln!("race: {resolved_n} resolved, {expired_n} expired of {RUNS}");
    assert_eq!(resolved_n + expired_n, RUNS);
}

/// An approved capture's image reaches the harness in `action.finished`: the whole
/// envelope, its `data_url` included, as the one who asked receives nothing else.
#[test]
fn an_approved_capture_carries_its_image_in_action_finished() {
    let mut s = session(json!({"safety": {"rules": [
        {"match": {"tool": "screen.capture"}, "effect": "confirm"}
    ]}}));
    let (id, _) = parked(&mut s, "screen.capture", json!({"scale": 0.25}));
    confirm(&mut s, &id, true);
    let (_, fin) = s.wait_event_matching("action.finished", 0, |p| p["request_id"] == id.as_str());
    let result = &fin["payload"]["envelope"]["result"];
    let url = result["data_url"].as_str().expect("data_url");
    let png = common::data_url_bytes(url);
    assert_eq!(
        png.len() as u64,
        result["bytes"].as_u64().unwrap(),
        "{result}"
    );
    assert!(png.starts_with(b"\x89PNG"));
}
