//! Every method of PROTOCOL §2 over stdio: its envelope, its events and its error codes,
//! plus the session-config-first defaults of §3.

use crate::common;

use std::time::{Duration, Instant};

use common::{SPEC_TOOLS, Server, find_node, issue_paths, nodes};
use serde_json::{Value, json};

/// Checks the envelope shape of §3: exactly one of result/error, meta complete.
fn assert_envelope(env: &Value, tool: &str) {
    let ok = env["ok"].as_bool().expect("ok is a bool");
    assert_eq!(ok, env["error"].is_null(), "ok and error disagree: {env}");
    assert_eq!(
        ok,
        !env["result"].is_null(),
        "ok and result disagree: {env}"
    );
    assert_eq!(env["meta"]["tool"], json!(tool), "{env}");
    assert!(env["meta"]["duration_ms"].is_u64(), "{env}");
    assert!(env["meta"]["frame"].is_u64(), "{env}");
    assert!(env["meta"]["state"].is_string(), "{env}");
    if !ok {
        assert!(env["error"]["code"].is_string(), "{env}");
        assert!(env["error"]["message"].is_string(), "{env}");
    }
}

/// A high-risk action on the virtual desktop that changes nothing visible: the
/// lone `win` key opens no launcher there.
fn request_confirmation(s: &mut Server) -> String {
    let r = s.ok("keyboard.press", json!({"key": "win"}));
    assert_eq!(r["status"], "awaiting_confirmation", "{r}");
    assert_eq!(r["risk"], "high");
    assert!(r["reason"].as_str().is_some_and(|t| !t.is_empty()));
    let id = r["request_id"].as_str().expect("request_id").to_string();
    assert!(id.starts_with("cfm-"), "{id}");
    id
}

#[test]
fn session_start_bare_and_wrapped_then_already_started() {
    let mut s = Server::start();
    let env = s.call("session.start", json!({"capture": {"default_width": 960}}));
    assert_envelope(&env, "session.start");
    let r = &env["result"];
    assert_eq!(r["state"], "ready");
    assert_eq!(r["platform"], "virtual");
    assert_eq!(r["surface"]["display_width_px"], 960);
    assert_eq!(r["surface"]["display_height_px"], 540);
    assert_eq!(r["capabilities"]["capture"], true);
    let ev = s.wait_event("session.started");
    assert_eq!(ev["payload"], *r, "session.started carries the result");

    let again = s.method_fails("session.start", json!({}), "already_started");
    assert!(again["message"].is_string());
    // The running session is untouched by the refused start.
    assert_eq!(s.status()["surface"]["display_width_px"], 960);

    s.method_ok("session.stop", json!(null));
    let r = s.method_ok(
        "session.start",
        json!({"config": {"capture": {"default_width": 1280}}}),
    );
    assert_eq!(r["surface"]["display_width_px"], 1280);
    assert_eq!(r["surface"]["display_height_px"], 720);
    s.method_ok("session.stop", json!(null));
    // Omitted params: the defaults (the canvas a model takes as it is).
    let r = s.method_ok("session.start", json!(null));
    assert_eq!(r["surface"]["display_width_px"], 1430);
}

#[test]
fn session_start_refuses_invalid_config_and_other_platforms() {
    let mut s = Server::start();
    let cases = [
        (json!({"bogus": {}}), "bogus"),
        (json!({"capture": {"bogus": 1}}), "capture.bogus"),
        (
            json!({"safety": {"rules": [{"match": {"tool": "*", "zzz": 1}, "effect": "deny"}]}}),
            "safety.rules[0].match.zzz",
        ),
        (
            json!({"capture": {"default_width": "wide"}}),
            "capture.default_width",
        ),
        (
            json!({"capture": {"default_width": 0}}),
            "capture.default_width",
        ),
        (
            json!({"a11y": {"include_rects": "maybe"}}),
            "a11y.include_rects",
        ),
        (json!({"runtime": []}), "runtime"),
        (
            json!({"config": {"safety": {"default_rule": "confirm"}}}),
            "safety.default_rule",
        ),
    ];
    for (config, path) in cases {
        let err = s.method_fails("session.start", config.clone(), "invalid_config");
        let paths = issue_paths(&err);
        assert!(
            paths.iter().any(|p| p == path),
            "{config}: expected issue at {path}, got {paths:?}"
        );
    }
    // Every issue at once.
    let err = s.method_fails(
        "session.start",
        json!({"capture": {"bogus": 1, "default_width": -1}, "runtime": {"max_wait_ms": "x"}}),
        "invalid_config",
    );
    let mut paths = issue_paths(&err);
    paths.sort();
    assert_eq!(
        paths,
        vec![
            "capture.bogus",
            "capture.default_width",
            "runtime.max_wait_ms"
        ]
    );
    // The platform is fixed when the server starts.
    for other in [
        json!({"platform": {"name": "x11"}}),
        json!({"platform": {"virtual_displays": [{"id": "9", "x": 0, "y": 0, "width": 800, "height": 600}]}}),
        json!({"http": {"token": "t"}}),
        json!({"capture": {"backend": "shm"}}),
        json!({"governance": {"principal_id": "mallory"}}),
    ] {
        s.method_fails("session.start", other, "invalid_config");
    }
    assert_eq!(s.status()["state"], "idle", "nothing started");
    // Naming the running platform (or auto) is fine.
    let r = s.method_ok("session.start", json!({"platform": {"name": "virtual"}}));
    assert_eq!(r["platform"], "virtual");
    s.method_ok("session.stop", json!(null));
    s.method_ok("session.start", json!({"platform": {"name": "auto"}}));
}

#[test]
fn session_stop_refuses_queued_work_finishes_in_flight_and_is_idempotent() {
    let mut s = Server::start();
    // Without a session: idempotent success.
    let env = s.call("session.stop", json!(null));
    assert_envelope(&env, "session.stop");
    assert_eq!(env["result"]["state"], "idle");

    s.start_session(json!({}));
    let pause = s.send(
        "tools.call",
        json!({"tool": "wait.pause", "arguments": {"ms": 400}}),
    );
    s.wait_event_matching("action.started", 0, |p| p["tool"] == "wait.pause");
    let queued = s.send(
        "tools.call",
        json!({"tool": "pointer.click", "arguments": {"x": 5, "y": 5}}),
    );
    let stop = s.send("session.stop", json!(null));

    let stopped = s.response(stop);
    assert_eq!(stopped["result"]["ok"], true, "{stopped}");
    assert_eq!(stopped["result"]["result"]["state"], "idle");
    // The action in flight ran to its end.
    let paused = s.response(pause);
    assert_eq!(paused["result"]["ok"], true, "{paused}");
    assert_eq!(paused["result"]["result"]["waited_ms"], 400);
    // The queued one never ran.
    let q = s.response(queued);
    assert_eq!(
        q["result"]["error"]["code"], "safety_stopped",
        "queued action after stop: {q}"
    );
    let (i_stop, _) = s.wait_event_from("session.stopped", 0);
    let (i_fin, _) = s.wait_event_matching("action.finished", 0, |p| p["tool"] == "wait.pause");
    assert!(
        i_fin < i_stop,
        "the in-flight action finished before the stop"
    );
    assert!(
        !s.events
            .iter()
            .any(|e| e["type"] == "action.started" && e["payload"]["tool"] == "pointer.click"),
        "the queued click must not start"
    );
    // Later actions: not_started; stop again: still fine.
    s.fails("pointer.click", json!({"x": 1, "y": 1}), "not_started");
    assert_eq!(s.method_ok("session.stop", json!(null))["state"], "idle");
    assert_eq!(s.status()["state"], "idle");
    let stops = s
        .event_types()
        .iter()
        .filter(|t| *t == "session.stopped")
        .count();
    assert_eq!(stops, 1, "only a running session emits session.stopped");
}

/// PROTOCOL §10 over stdio: what is sent after `session.stop`, while the action in
/// flight still runs, is refused at once with `safety_stopped` (as over HTTP), never
/// queued behind it to meet `not_started`: a single action, a JSON-RPC batch of
/// actions, a `tools.call_batch`. A `session.start` sent after the stop waits its turn,
/// and so do the actions sent after it.
#[test]
fn actions_sent_after_session_stop_are_refused_at_once() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let pause = s.send(
        "tools.call",
        json!({"tool": "wait.pause", "arguments": {"ms": 1500}}),
    );
    s.wait_event_matching("action.started", 0, |p| p["tool"] == "wait.pause");
    let stop = s.send("session.stop", json!(null));
    let click = s.send(
        "tools.call",
        json!({"tool": "pointer.click", "arguments": {"x": 5, "y": 5}}),
    );
    let batch = s.send(
        "tools.call_batch",
        json!({"items": [{"tool": "wait.pause", "arguments": {"ms": 0}}]}),
    );
    s.send_raw(
        format!(
            "{}\n",
            json!([
                {"jsonrpc": "2.0", "id": "a", "method": "tools.call",
                 "params": {"tool": "pointer.move", "arguments": {"x": 1, "y": 1}}},
                {"jsonrpc": "2.0", "method": "tools.call",
                 "params": {"tool": "pointer.move", "arguments": {"x": 2, "y": 2}}}
            ])
        )
        .as_bytes(),
    );
    let refused = |r: &Value, tool: &str| {
        assert_eq!(r["result"]["error"]["code"], "safety_stopped", "{r}");
        assert_eq!(r["result"]["meta"]["tool"], tool, "{r}");
    };
    refused(&s.response(click), "pointer.click");
    refused(&s.response(batch), "batch.execute");
    // The batch's one request is answered, its notification is not.
    let arr = s.next_response();
    assert_eq!(arr.as_array().map(Vec::len), Some(1), "{arr}");
    assert_eq!(arr[0]["id"], "a", "{arr}");
    refused(&arr[0], "pointer.move");
    // A new session after the stop, and an action after it, run in order.
    let start = s.send("session.start", json!({}));
    let again = s.send(
        "tools.call",
        json!({"tool": "pointer.move", "arguments": {"x": 3, "y": 3}}),
    );
    assert_eq!(s.response(pause)["result"]["ok"], true);
    assert_eq!(s.response(stop)["result"]["ok"], true);
    assert_eq!(s.response(start)["result"]["ok"], true);
    assert_eq!(s.response(again)["result"]["ok"], true);
    assert!(
        !s.events.iter().any(|e| e["type"] == "action.started"
            && matches!(
                e["payload"]["tool"].as_str(),
                Some("pointer.click" | "batch.execute")
            )),
        "nothing refused may start: {:?}",
        s.event_types()
    );
    s.method_ok("session.stop", json!(null));
}

#[test]
fn session_configure_applies_patches_and_refuses_immutable_keys() {
    let mut s = Server::start();
    s.method_fails(
        "session.configure",
        json!({"runtime": {"batch_gap_ms": 1}}),
        "not_started",
    );
    s.start_session(json!({}));

    // Bare patch.
    let env = s.call("session.configure", json!({"runtime": {"batch_gap_ms": 5}}));
    assert_envelope(&env, "session.configure");
    assert_eq!(env["result"]["state"], "ready");
    assert_eq!(
        env["result"]["applied"],
        json!({"runtime": {"batch_gap_ms": 5}})
    );
    let (i, ev) = s.wait_event_from("session.configured", 0);
    assert_eq!(
        ev["payload"],
        json!({"patch": {"runtime": {"batch_gap_ms": 5}}})
    );

    // Wrapped patch, with a coercion normalized in `applied`.
    let r = s.method_ok(
        "session.configure",
        json!({"patch": {"capture": {"grayscale": "true"}, "a11y": {"default_level": "full"}}}),
    );
    assert_eq!(
        r["applied"],
        json!({"capture": {"grayscale": true}, "a11y": {"default_level": "full"}})
    );
    let (_, ev) = s.wait_event_from("session.configured", i + 1);
    assert_eq!(ev["payload"]["patch"], r["applied"]);
    // It took effect: captures are now grayscale by default.
    let (_, _, _, ct, _) = s.capture_png(json!({"scale": 0.1}));
    assert_eq!(ct, png::ColorType::Grayscale);

    // Immutable keys and sections are refused, naming the key; nothing changes.
    for (patch, path) in [
        (
            json!({"safety": {"emergency_hotkey": "ctrl+f1"}}),
            "safety.emergency_hotkey",
        ),
        (
            json!({"safety": {"panic_file": "/tmp/x"}}),
            "safety.panic_file",
        ),
        (
            json!({"safety": {"visual_indicator": false}}),
            "safety.visual_indicator",
        ),
        (json!({"capture": {"backend": "shm"}}), "capture.backend"),
        (json!({"platform": {"name": "virtual"}}), "platform"),
        (json!({"http": {"token": "x"}}), "http"),
        (json!({"bogus": {"x": 1}}), "bogus"),
        (json!({"runtime": {"bogus": 1}}), "runtime.bogus"),
        (
            json!({"runtime": {"max_wait_ms": -5}}),
            "runtime.max_wait_ms",
        ),
    ] {
        let err = s.method_fails("session.configure", patch.clone(), "invalid_config");
        let paths = issue_paths(&err);
        assert!(
            paths.iter().any(|p| p == path),
            "{patch}: expected {path} in {paths:?}"
        );
        let msg = err["message"].as_str().unwrap_or_default().to_string();
        let root = path.split('.').next().unwrap();
        assert!(
            msg.contains(root) || msg.contains("immutable") || msg.contains("invalid"),
            "message should say what is wrong: {msg}"
        );
    }
    // A mixed patch with one immutable key changes nothing at all.
    s.method_fails(
        "session.configure",
        json!({"runtime": {"batch_gap_ms": 77}, "safety": {"panic_file": "/x"}}),
        "invalid_config",
    );
    let r = s.method_ok(
        "session.configure",
        json!({"capture": {"grayscale": false}}),
    );
    assert_eq!(r["applied"], json!({"capture": {"grayscale": false}}));
    let patches: Vec<Value> = {
        s.wait_event_matching("session.configured", 0, |p| {
            p["patch"] == json!({"capture": {"grayscale": false}})
        });
        s.events
            .iter()
            .filter(|e| e["type"] == "session.configured")
            .map(|e| e["payload"]["patch"].clone())
            .collect()
    };
    assert_eq!(
        patches.len(),
        3,
        "refused patches emit nothing: {patches:?}"
    );
    assert!(!patches.iter().any(|p| p.to_string().contains("77")));
}

#[test]
fn session_confirm_approve_runs_the_action_with_ordered_events() {
    let mut s = Server::start();
    s.start_session(json!({}));
    // Focus the password field, then type into it: high risk.
    s.click_node("edit", "Password");
    let before = s.events.len();
    let r = s.ok("keyboard.type", json!({"text": "s3cret!"}));
    assert_eq!(r["status"], "awaiting_confirmation", "{r}");
    let id = r["request_id"].as_str().unwrap().to_string();
    let (_, req) = s.wait_event_from("safety.confirmation_requested", before);
    let p = &req["payload"];
    assert_eq!(p["request_id"], json!(id));
    assert_eq!(p["tool"], "keyboard.type");
    assert_eq!(p["risk"], "high");
    assert_eq!(p["arguments"]["text"], "[redacted]", "{p}");
    assert_eq!(p["timeout_s"], 30.0);
    assert!(p["expires_at"].as_str().unwrap().ends_with('Z'), "{p}");
    assert!(p["reason"].is_string());

    let env = s.call(
        "session.confirm",
        json!({"request_id": id, "approve": true}),
    );
    assert_envelope(&env, "session.confirm");
    assert_eq!(
        env["result"],
        json!({"request_id": id, "status": "approved"})
    );
    let (i_res, res) = s.wait_event_from("safety.confirmation_resolved", before);
    assert_eq!(res["payload"]["request_id"], json!(id));
    assert_eq!(res["payload"]["approve"], true);
    assert_eq!(res["payload"]["tool"], "keyboard.type");
    let (i_start, start) =
        s.wait_event_matching("action.started", before, |p| p["request_id"] == json!(id));
    assert_eq!(start["payload"]["tool"], "keyboard.type");
    assert_eq!(start["payload"]["arguments"]["text"], "[redacted]");
    let (i_fin, fin) =
        s.wait_event_matching("action.finished", before, |p| p["request_id"] == json!(id));
    assert!(
        i_res < i_start && i_start < i_fin,
        "order: {:?}",
        s.event_types()
    );
    let f = &fin["payload"];
    assert_eq!(f["tool"], "keyboard.type");
    assert_eq!(f["ok"], true);
    assert!(f["error_code"].is_null());
    assert!(f["duration_ms"].is_u64());
    let inner = &f["envelope"];
    assert_eq!(inner["ok"], true, "{f}");
    assert_eq!(inner["result"], json!({"chars": 7, "submit": false}));
    assert_eq!(inner["meta"]["tool"], "keyboard.type");
    // Answered once only.
    s.method_fails(
        "session.confirm",
        json!({"request_id": id, "approve": true}),
        "confirmation_not_found",
    );
    assert_eq!(s.status()["state"], "ready");
    assert!(s.status()["pending_confirmation"].is_null());
    // The secret went nowhere on stdout.
    s.drain_available();
    for l in &s.lines {
        assert!(!format!("{l:?}").contains("s3cret"), "leaked: {l:?}");
    }
}

#[test]
fn session_confirm_deny_not_found_and_bad_params() {
    let mut s = Server::start();
    s.method_fails(
        "session.confirm",
        json!({"request_id": "cfm-000000000000", "approve": true}),
        "not_started",
    );
    s.start_session(json!({}));
    s.method_fails(
        "session.confirm",
        json!({"request_id": "cfm-000000000000", "approve": true}),
        "confirmation_not_found",
    );
    let err = s.method_fails(
        "session.confirm",
        json!({"request_id": 5, "bogus": true}),
        "invalid_arguments",
    );
    let mut paths = issue_paths(&err);
    paths.sort();
    assert_eq!(paths, vec!["approve", "bogus", "request_id"]);

    let id = request_confirmation(&mut s);
    assert_eq!(s.status()["state"], "confirming");
    let r = s.confirm(&id, false);
    assert_eq!(r, json!({"request_id": id, "status": "denied"}));
    let res = s.wait_event("safety.confirmation_resolved");
    assert_eq!(res["payload"]["approve"], false);
    assert!(
        !s.events
            .iter()
            .any(|e| e["type"] == "action.started" && e["payload"]["tool"] == "keyboard.press"),
        "a denied action never starts"
    );
    assert_eq!(s.status()["state"], "ready");
    s.method_fails(
        "session.confirm",
        json!({"request_id": id, "approve": true}),
        "confirmation_not_found",
    );
    // The session goes on.
    s.ok("wait.pause", json!({"ms": 0}));
}

#[test]
fn session_confirm_after_timeout_is_expired() {
    let mut s = Server::start();
    s.start_session(json!({"safety": {"confirm_timeout_s": 0.2}}));
    let id = request_confirmation(&mut s);
    let ev = s.wait_event("safety.confirmation_expired");
    assert_eq!(ev["payload"], json!({"request_id": id}));
    let err = s.method_fails(
        "session.confirm",
        json!({"request_id": id, "approve": true}),
        "confirmation_expired",
    );
    assert!(err["message"].as_str().unwrap().contains(&id));
    let st = s.status();
    assert_eq!(st["state"], "ready");
    assert!(st["pending_confirmation"].is_null());
    assert!(
        !s.events.iter().any(|e| e["type"] == "action.started"),
        "the expired action never ran"
    );
    // Actions run again.
    s.ok("pointer.move", json!({"x": 3, "y": 3}));
}

#[test]
fn pending_confirmation_makes_other_actions_busy_and_shows_in_status() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let id = request_confirmation(&mut s);
    let err = s.fails("pointer.click", json!({"x": 1, "y": 1}), "busy");
    assert_eq!(err["data"]["request_id"], json!(id));
    s.fails("screen.capture", json!({"scale": 0.1}), "busy");
    s.fails("wait.pause", json!({"ms": 0}), "busy");
    let batch = s.call(
        "tools.call_batch",
        json!({"items": [{"tool": "window.list"}]}),
    );
    assert_eq!(batch["error"]["code"], "busy", "{batch}");

    let st = s.status();
    assert_eq!(st["state"], "confirming");
    let p = &st["pending_confirmation"];
    assert_eq!(p["request_id"], json!(id));
    assert_eq!(p["tool"], "keyboard.press");
    assert_eq!(p["risk"], "high");
    assert!(p["reason"].is_string());
    assert!(p["expires_at"].is_string());
    let left = p["expires_in_s"].as_f64().unwrap();
    assert!(left > 0.0 && left <= 30.0, "{p}");

    // With observe_while_confirming, benign observations run; actions stay busy.
    s.method_ok(
        "session.configure",
        json!({"safety": {"observe_while_confirming": true}}),
    );
    s.ok("screen.capture", json!({"scale": 0.1}));
    s.ok("window.list", json!({}));
    s.fails("pointer.move", json!({"x": 1, "y": 1}), "busy");
    s.fails("wait.pause", json!({"ms": 0}), "busy");

    s.confirm(&id, false);
    s.ok("pointer.move", json!({"x": 1, "y": 1}));
}

#[test]
fn control_panic_on_off_and_resume() {
    let mut s = Server::start();
    // Nothing latched and no session: nothing to resume.
    s.method_fails("session.resume", json!(null), "not_started");
    s.start_session(json!({}));
    s.method_fails("control.panic", json!({}), "invalid_arguments");
    s.method_fails("control.panic", json!({"on": "maybe"}), "invalid_arguments");

    // Resume while ready: nothing to do.
    assert_eq!(s.method_ok("session.resume", json!(null))["state"], "ready");

    // A pending confirmation is cancelled by the panic.
    let id = request_confirmation(&mut s);
    let env = s.call("control.panic", json!({"on": true}));
    assert_envelope(&env, "control.panic");
    assert_eq!(env["result"], json!({"panic": true, "state": "stopped"}));
    let (_, ev) = s.wait_event_from("safety.panic_triggered", 0);
    assert_eq!(ev["payload"]["source"], "protocol");
    let (_, res) = s.wait_event_matching("safety.confirmation_resolved", 0, |p| {
        p["request_id"] == json!(id)
    });
    assert_eq!(res["payload"]["approve"], false);
    assert!(res["payload"]["reason"].is_string());

    s.fails("pointer.move", json!({"x": 1, "y": 1}), "safety_stopped");
    s.fails("screen.capture", json!({"scale": 0.1}), "safety_stopped");
    let st = s.status();
    assert_eq!(st["state"], "stopped");
    assert!(st["pending_confirmation"].is_null());
    // Panic on again is harmless.
    assert_eq!(
        s.method_ok("control.panic", json!({"on": "1"})),
        json!({"panic": true, "state": "stopped"})
    );
    assert_eq!(
        s.method_ok("control.panic", json!({"on": false})),
        json!({"panic": false, "state": "ready"})
    );
    s.wait_event("safety.panic_released");
    s.ok("pointer.move", json!({"x": 1, "y": 1}));

    // session.resume also leaves `stopped`.
    s.method_ok("control.panic", json!({"on": true}));
    let before = s.events.len();
    let env = s.call("session.resume", json!(null));
    assert_envelope(&env, "session.resume");
    assert_eq!(env["result"], json!({"state": "ready"}));
    let (_, ev) = s.wait_event_from("session.resumed", before);
    assert_eq!(ev["payload"], json!({"from": "stopped"}));
    s.ok("pointer.move", json!({"x": 2, "y": 2}));
}

#[test]
fn idle_standby_and_resume() {
    let mut s = Server::start();
    s.start_session(json!({"safety": {"idle_timeout_s": 0.2}}));
    let ev = s.wait_event("session.idle");
    assert_eq!(ev["payload"]["after_s"], 0.2);
    assert_eq!(s.status()["state"], "standby");
    s.fails("pointer.move", json!({"x": 1, "y": 1}), "safety_standby");
    // Turn the watchdog off first so a slow machine cannot idle out again before the
    // next call.
    s.method_ok(
        "session.configure",
        json!({"safety": {"idle_timeout_s": 0}}),
    );
    assert_eq!(s.status()["state"], "standby", "configure does not resume");
    let r = s.method_ok("session.resume", json!(null));
    assert_eq!(r["state"], "ready");
    let ev = s.wait_event("session.resumed");
    assert_eq!(ev["payload"], json!({"from": "standby"}));
    s.ok("pointer.move", json!({"x": 1, "y": 1}));
}

#[test]
fn tools_call_envelopes_and_errors() {
    let mut s = Server::start();
    // Unknown tools are unknown with or without a session; known ones need one.
    let env = s.tool("no.such.tool", json!({}));
    assert_envelope(&env, "no.such.tool");
    assert_eq!(env["error"]["code"], "unknown_tool");
    s.fails("session.confirm", json!({}), "unknown_tool");
    s.fails("pointer.click", json!({}), "not_started");
    s.fails("window.list", json!({}), "not_started");
    s.method_fails("tools.call", json!({}), "invalid_arguments");
    s.method_fails("tools.call", json!({"tool": ""}), "invalid_arguments");
    s.method_fails(
        "tools.call",
        json!({"tool": "window.list", "args": {}}),
        "invalid_arguments",
    );

    s.start_session(json!({}));
    let env = s.tool("window.list", json!(null));
    assert_envelope(&env, "window.list");
    assert_eq!(env["ok"], true);
    let env = s.call("tools.call", json!({"tool": "window.list"}));
    assert_eq!(env["ok"], true, "arguments may be omitted: {env}");
    s.fails("nope", json!({}), "unknown_tool");
    let env = s.tool("pointer.click", json!({"x": 1}));
    assert_envelope(&env, "pointer.click");
    assert_eq!(env["error"]["code"], "invalid_arguments");
    assert_eq!(env["meta"]["state"], "ready");
}

#[test]
fn tools_call_batch_is_batch_execute() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let env = s.call(
        "tools.call_batch",
        json!({"items": [
            {"tool": "pointer.move", "arguments": {"x": 10, "y": 20}},
            {"tool": "window.list"}
        ], "gap_ms": 0}),
    );
    assert_envelope(&env, "batch.execute");
    let r = &env["result"];
    assert_eq!(r["status"], "completed");
    let items = r["items"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_envelope(&items[0], "pointer.move");
    assert_eq!(items[0]["result"]["position"], json!({"x": 10, "y": 20}));
    assert_envelope(&items[1], "window.list");
    let ev = s.wait_event("batch.finished");
    assert_eq!(ev["payload"]["status"], "completed");
    let err = s.method_fails(
        "tools.call_batch",
        json!({"items": [], "continue_on_error": "perhaps"}),
        "invalid_arguments",
    );
    let mut paths = issue_paths(&err);
    paths.sort();
    assert_eq!(paths, vec!["continue_on_error", "items"]);
}

#[test]
fn tools_list_works_without_a_session() {
    let mut s = Server::start();
    let env = s.call("tools.list", json!(null));
    assert_envelope(&env, "tools.list");
    let r = &env["result"];
    assert_eq!(r["state"], "idle");
    let tools = r["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, SPEC_TOOLS);
    for t in tools {
        assert!(!t["name"].as_str().unwrap().contains("confirm"), "{t}");
        assert!(t["summary"].as_str().is_some_and(|x| !x.is_empty()), "{t}");
        assert!(
            ["benign", "moderate", "high"].contains(&t["risk"].as_str().unwrap()),
            "{t}"
        );
        let p = &t["parameters"];
        assert_eq!(p["type"], "object", "{t}");
        assert_eq!(p["additionalProperties"], false, "{t}");
        assert!(t["examples"].is_array(), "{t}");
        assert_eq!(
            t["available"], true,
            "everything works on the virtual desktop"
        );
    }
    let risk = |n: &str| {
        tools.iter().find(|t| t["name"] == n).unwrap()["risk"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(risk("screen.capture"), "benign");
    assert_eq!(risk("pointer.click"), "moderate");
    assert_eq!(risk("window.list"), "benign");
    assert!(!env.to_string().contains("session.confirm"));

    s.start_session(json!({}));
    let r = s.method_ok("tools.list", json!({}));
    assert_eq!(r["state"], "ready");
    assert_eq!(r["tools"].as_array().unwrap().len(), SPEC_TOOLS.len());
    let vocabularies: Vec<&str> = r["vocabularies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        vocabularies,
        ["anthropic.computer", "openai.computer", "gemini.computer"]
    );
}

#[test]
fn system_status_without_and_with_a_session() {
    let mut s = Server::start();
    let env = s.call("system.status", json!(null));
    assert_envelope(&env, "system.status");
    let st = &env["result"];
    assert_eq!(st["state"], "idle");
    assert_eq!(st["platform"], "virtual");
    assert_eq!(st["capabilities"]["input"], true);
    assert!(st["started_at"].is_null());
    assert_eq!(st["action_count"], 0);
    assert_eq!(st["frame"], 0);
    assert!(st["pending_confirmation"].is_null());
    for key in ["surface", "pending_confirmation", "started_at"] {
        assert!(st.get(key).is_some(), "status lacks {key}: {st}");
    }

    let started = s.start_session(json!({}));
    let st = s.status();
    assert_eq!(st["state"], "ready");
    assert_eq!(st["surface"], started["surface"]);
    let at = st["started_at"].as_str().unwrap();
    assert!(at.len() >= 20 && at.contains('T'), "{at}");
    s.ok("pointer.move", json!({"x": 1, "y": 1}));
    let cap = s.ok("screen.capture", json!({"scale": 0.1}));
    // Sent again (not `unchanged`), so it is a new frame.
    s.ok("screen.capture", json!({"scale": 0.1, "if_changed": false}));
    let st = s.status();
    assert_eq!(st["action_count"], 3);
    assert_eq!(st["frame"], cap["frame"].as_u64().unwrap() + 1);
    // Refused actions are not counted.
    s.fails("pointer.click", json!({"x": 1}), "invalid_arguments");
    assert_eq!(s.status()["action_count"], 3);
}

#[test]
fn config_defaults_come_before_tool_defaults() {
    let mut s = Server::start();
    s.start_session(json!({"a11y": {"default_level": "skeleton", "include_rects": false}}));
    let snap = s.snapshot(json!({}));
    let all = nodes(&snap["tree"]);
    assert!(all.iter().all(|(d, _)| *d <= 2), "skeleton is depth 2");
    assert!(snap["truncated"].as_bool().unwrap());
    assert!(
        find_node(&snap["tree"], "listitem", "Item 1").is_none(),
        "skeleton cuts the list rows"
    );
    assert!(
        all.iter().all(|(_, n)| n.get("rect").is_none()),
        "include_rects false from the config"
    );
    let started = s.wait_event_matching("action.started", 0, |p| p["tool"] == "a11y.snapshot");
    assert_eq!(started.1["payload"]["arguments"]["level"], "skeleton");
    assert_eq!(started.1["payload"]["arguments"]["include_rects"], false);
    // An explicit argument still wins over the config.
    let snap = s.snapshot(json!({"level": "standard", "include_rects": true}));
    assert!(find_node(&snap["tree"], "listitem", "Item 1").is_some());
    assert!(snap["tree"]["rect"].is_array());
    // Explicit null means the default, which is the config's.
    let snap = s.snapshot(json!({"level": null}));
    assert!(find_node(&snap["tree"], "listitem", "Item 1").is_none());

    // runtime.batch_gap_ms: the gap between items comes from the session config.
    let batch = json!({"items": [
        {"tool": "wait.pause", "arguments": {"ms": 0}},
        {"tool": "wait.pause", "arguments": {"ms": 0}},
        {"tool": "wait.pause", "arguments": {"ms": 0}}
    ]});
    s.method_ok(
        "session.configure",
        json!({"runtime": {"batch_gap_ms": 250}}),
    );
    let t = Instant::now();
    let r = s.ok("batch.execute", batch.clone());
    assert_eq!(r["status"], "completed");
    assert!(
        t.elapsed() >= Duration::from_millis(500),
        "two gaps of 250 ms from the config: {:?}",
        t.elapsed()
    );
    let ev = s.wait_event("batch.finished");
    assert!(ev["payload"]["duration_ms"].as_u64().unwrap() >= 500);
    s.method_ok("session.configure", json!({"runtime": {"batch_gap_ms": 0}}));
    let mut b = batch.clone();
    b["items"] = json!([
        {"tool": "wait.pause", "arguments": {"ms": 0}},
        {"tool": "wait.pause", "arguments": {"ms": 0}},
        {"tool": "wait.pause", "arguments": {"ms": 0}},
        {"tool": "wait.pause", "arguments": {"ms": 0}},
        {"tool": "wait.pause", "arguments": {"ms": 0}}
    ]);
    let (before, _) = s.wait_event_from("batch.finished", 0);
    s.ok("batch.execute", b);
    let (_, ev) = s.wait_event_from("batch.finished", before + 1);
    assert!(
        ev["payload"]["duration_ms"].as_u64().unwrap() < 500,
        "no gap with batch_gap_ms 0: {ev}"
    );
}

#[test]
fn batch_gap_default_from_session_start() {
    let mut s = Server::start();
    s.start_session(json!({"runtime": {"batch_gap_ms": 400}}));
    let t = Instant::now();
    s.ok(
        "batch.execute",
        json!({"items": [{"tool": "window.list"}, {"tool": "window.list"}]}),
    );
    assert!(t.elapsed() >= Duration::from_millis(400));
    let (first, ev) = s.wait_event_from("batch.finished", 0);
    assert!(
        ev["payload"]["duration_ms"].as_u64().unwrap() >= 400,
        "{ev}"
    );
    // An explicit gap_ms wins (measured by the server, so load cannot skew it).
    s.ok(
        "batch.execute",
        json!({"items": [{"tool": "window.list"}, {"tool": "window.list"}], "gap_ms": 0}),
    );
    let (_, ev) = s.wait_event_from("batch.finished", first + 1);
    assert!(ev["payload"]["duration_ms"].as_u64().unwrap() < 400, "{ev}");
}
