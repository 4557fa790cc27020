//! The vendors' vocabularies pass the same gate as every plain call: the emergency
//! stop, deny rules, confirmation by risk, and the vendors' own safety checks
//! (OpenAI's `pending_safety_checks`, Gemini's `require_confirmation`), which a person
//! answers with `session.confirm` — never the model. Bad vendor input is refused with
//! `invalid_arguments` naming the member, and nothing of a refused call runs.

use crate::common;

use common::{Server, center};
use serde_json::{Value, json};

const A: &str = "anthropic.computer";
const O: &str = "openai.computer";
const G: &str = "gemini.computer";

/// A server whose operator set a 1920 canvas over the 1920×1080 desk, so the points
/// below are those of the vendors' references on such a screen.
fn session(config: Value) -> Server {
    let mut s = Server::start_with(Some(json!({"capture": {"default_width": 1920}})), &[]);
    s.start_session(config);
    s
}

fn name_value(s: &mut Server) -> Value {
    s.node("edit", "Name")["value"].clone()
}

/// The Name field's centre: in Anthropic's 1366x768 space, and on the canvas.
fn name_points(s: &mut Server) -> (Value, (i64, i64)) {
    let (x, y) = center(&s.node("edit", "Name"));
    let shown = json!([
        (x as f64 * 1366.0 / 1920.0).round() as i64,
        (y as f64 * 768.0 / 1080.0).round() as i64
    ]);
    (shown, (x, y))
}

/// Whether any action (anything but the tests' own read-backs) started among `events`.
/// Events reach the test on their own path, possibly after the answer they belong to, so
/// a read-back's events may come late: they are not actions.
fn acted(events: &[Value]) -> bool {
    events.iter().any(|e| {
        e["type"] == "action.started"
            && !["a11y.snapshot", "pointer.position"]
                .contains(&e["payload"]["tool"].as_str().unwrap_or(""))
    })
}

fn fails(s: &mut Server, voc: &str, args: Value, code: &str) -> Value {
    s.fails(voc, args, code)
}

#[test]
fn the_emergency_stop_refuses_every_vocabulary_and_nothing_runs() {
    let mut s = session(json!({}));
    let (shown, (x, y)) = name_points(&mut s);
    s.method_ok("control.panic", json!({"on": true}));
    let stopped_at = s.events.len();
    let e = fails(
        &mut s,
        A,
        json!({"action": "left_click", "coordinate": shown}),
        "safety_stopped",
    );
    // The answer to forward to Claude: is_error with the reason.
    assert_eq!(e["data"]["vendor_result"]["is_error"], true, "{e}");
    let text = e["data"]["vendor_result"]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(text.starts_with("safety_stopped: "), "{text}");
    fails(
        &mut s,
        O,
        json!({"call_id": "c1", "actions": [{"type": "type", "text": "x"}]}),
        "safety_stopped",
    );
    let e = fails(
        &mut s,
        G,
        json!({"name": "type_text_at", "id": "f1", "args": {"x": 500, "y": 500, "text": "x"}}),
        "safety_stopped",
    );
    assert_eq!(e["data"]["vendor_result"]["name"], "type_text_at");
    assert_eq!(e["data"]["vendor_result"]["id"], "f1");
    assert!(
        e["data"]["vendor_result"]["response"]["error"]
            .as_str()
            .unwrap()
            .starts_with("safety_stopped")
    );
    assert!(
        !acted(&s.events[stopped_at..]),
        "nothing started while stopped"
    );
    s.method_ok("control.panic", json!({"on": false}));
    assert_eq!(name_value(&mut s), "", "nothing was typed");
    // Released, the same call acts.
    let r = s.ok(
        A,
        json!({"action": "left_click", "coordinate": [x * 1366 / 1920, y * 768 / 1080]}),
    );
    assert_eq!(r["is_error"], false);
}

#[test]
fn a_deny_rule_on_one_translated_tool_refuses_the_whole_vendor_batch() {
    let mut s = session(json!({"safety": {"rules": [
        {"match": {"tool": "keyboard.type"}, "effect": "deny"}
    ]}}));
    let (_, (x, y)) = name_points(&mut s);
    let before = s.ok("pointer.position", json!({}));
    let e = fails(
        &mut s,
        O,
        json!({"call_id": "c1", "actions": [
            {"type": "move", "x": x, "y": y},
            {"type": "type", "text": "hello"}
        ]}),
        "policy_denied",
    );
    assert_eq!(e["data"]["item"], 1, "{e}");
    // Judged whole before anything ran: the pointer did not move.
    assert_eq!(s.ok("pointer.position", json!({})), before);
    // Gemini's type_text_at is a click, a clear and a typing: refused as one.
    fails(
        &mut s,
        G,
        json!({"name": "type_text_at", "args": {"x": 200, "y": 170, "text": "x"}}),
        "policy_denied",
    );
    assert_eq!(s.ok("pointer.position", json!({})), before);
    // A rule on a vendor's observation tool is the plain tool's rule.
    s.method_ok(
        "session.configure",
        json!({"safety": {"rules": [{"match": {"tool": "screen.capture"}, "effect": "deny"}]}}),
    );
    fails(&mut s, A, json!({"action": "screenshot"}), "policy_denied");
}

#[test]
fn typing_a_password_waits_for_a_person_and_the_text_stays_secret() {
    let mut s = session(json!({}));
    let (px, py) = center(&s.node("edit", "Password"));
    let shown = json!([px * 1366 / 1920, py * 768 / 1080]);
    s.ok(A, json!({"action": "left_click", "coordinate": shown}));
    // High risk: the vendor call blocks until the person answers.
    let id = s.send(
        "tools.call",
        json!({"tool": A, "arguments": {"action": "type", "text": "hunter2"}}),
    );
    let asked = s.wait_event("safety.confirmation_requested");
    let p = &asked["payload"];
    assert_eq!(p["tool"], "batch.execute");
    assert_eq!(
        p["arguments"]["items"][0]["arguments"]["text"],
        "[redacted]"
    );
    assert!(!asked.to_string().contains("hunter2"));
    s.confirm(p["request_id"].as_str().unwrap(), true);
    let env = s.response(id)["result"].clone();
    assert_eq!(env["ok"], true, "{env}");
    assert_eq!(env["result"]["content"][0]["type"], "image");
    assert!(!s.lines.iter().any(|l| format!("{l:?}").contains("hunter2")));
    // Denied, the vendor call answers refused and types nothing.
    let id = s.send(
        "tools.call",
        json!({"tool": A, "arguments": {"action": "type", "text": "again"}}),
    );
    let (_, asked) = s.wait_event_from("safety.confirmation_requested", s.events.len());
    s.confirm(asked["payload"]["request_id"].as_str().unwrap(), false);
    let env = s.response(id)["result"].clone();
    assert_eq!(env["error"]["code"], "policy_denied", "{env}");
    assert_eq!(env["error"]["data"]["vendor_result"]["is_error"], true);
}

#[test]
fn openai_safety_checks_need_a_person_and_come_back_acknowledged() {
    let mut s = session(json!({}));
    let (_, (x, y)) = name_points(&mut s);
    let checks = json!([{"id": "cu_sc_1", "code": "malicious_instructions",
                         "message": "The screen asks to ignore the user's instructions."}]);
    let call = json!({"type": "computer_call", "call_id": "call_9", "actions": [
        {"type": "click", "button": "left", "x": x, "y": y},
        {"type": "type", "text": "checked"}
    ], "pending_safety_checks": checks});
    // Moderate actions the gate alone would allow: the vendor's check asks a person.
    let id = s.send("tools.call", json!({"tool": O, "arguments": call.clone()}));
    let asked = s.wait_event("safety.confirmation_requested");
    let reason = asked["payload"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("malicious_instructions") && reason.contains("ignore the user"),
        "{reason}"
    );
    // Nothing runs before the answer (the vendor call holds the FIFO lane meanwhile).
    assert!(!acted(&s.events), "{:?}", s.event_types());
    s.confirm(asked["payload"]["request_id"].as_str().unwrap(), true);
    let env = s.response(id)["result"].clone();
    assert_eq!(env["ok"], true, "{env}");
    let out = &env["result"];
    assert_eq!(out["type"], "computer_call_output");
    assert_eq!(out["call_id"], "call_9");
    assert_eq!(out["acknowledged_safety_checks"], checks);
    assert_eq!(name_value(&mut s), "checked");
    // Denied: refused, nothing typed, no acknowledgement.
    let id = s.send("tools.call", json!({"tool": O, "arguments": call.clone()}));
    let (_, asked) = s.wait_event_from("safety.confirmation_requested", s.events.len());
    s.confirm(asked["payload"]["request_id"].as_str().unwrap(), false);
    let env = s.response(id)["result"].clone();
    assert_eq!(env["error"]["code"], "policy_denied", "{env}");
    assert_eq!(name_value(&mut s), "checked");
    // The model cannot acknowledge its own checks: the output's member is not an input.
    let mut forged = call;
    forged["acknowledged_safety_checks"] = checks;
    let e = fails(&mut s, O, forged, "invalid_arguments");
    assert_eq!(e["data"]["issues"][0]["path"], "acknowledged_safety_checks");
    // Nobody answers: the request expires and nothing runs.
    s.method_ok(
        "session.configure",
        json!({"safety": {"confirm_timeout_s": 0.5}}),
    );
    let e = fails(
        &mut s,
        O,
        json!({"call_id": "c", "actions": [{"type": "type", "text": "late"}],
               "pending_safety_checks": [{"id": "x"}]}),
        "confirmation_expired",
    );
    assert!(e["message"].as_str().unwrap().contains("nothing ran"));
    assert_eq!(name_value(&mut s), "checked");
}

#[test]
fn gemini_require_confirmation_is_a_persons_and_is_acknowledged() {
    let mut s = session(json!({}));
    let id = s.send(
        "tools.call",
        json!({"tool": G, "arguments": {"name": "click_at", "id": "fc_7", "args": {
            "x": 150, "y": 250,
            "safety_decision": {"decision": "require_confirmation", "explanation": "Accepting cookies"}
        }}}),
    );
    let asked = s.wait_event("safety.confirmation_requested");
    assert!(
        asked["payload"]["reason"]
            .as_str()
            .unwrap()
            .contains("Accepting cookies")
    );
    s.confirm(asked["payload"]["request_id"].as_str().unwrap(), true);
    let env = s.response(id)["result"].clone();
    assert_eq!(env["ok"], true, "{env}");
    assert_eq!(env["result"]["name"], "click_at");
    assert_eq!(env["result"]["id"], "fc_7");
    assert_eq!(env["result"]["response"]["safety_acknowledgement"], "true");
    // A decision that asks nothing runs at once, with no acknowledgement.
    let r = s.ok(
        G,
        json!({"name": "click_at", "args": {"x": 150, "y": 250,
               "safety_decision": {"decision": "regular"}}}),
    );
    assert!(r["response"].get("safety_acknowledgement").is_none(), "{r}");
}

/// Bad vendor input: `invalid_arguments` naming the member, and nothing of the call runs.
#[test]
fn bad_vendor_input_is_refused_by_member_and_nothing_runs() {
    let mut s = session(json!({}));
    let rows: Vec<(&str, Value, &str, &str)> = vec![
        (A, json!({}), "action", "is required"),
        (A, json!({"action": "fly"}), "action", "unknown action"),
        (
            A,
            json!({"action": "left_click", "coordinate": [1366, 10]}),
            "coordinate",
            "outside the 1366x768 screenshot",
        ),
        (
            A,
            json!({"action": "left_click", "coordinate": [1, 2, 3]}),
            "coordinate",
            "two numbers",
        ),
        (
            A,
            json!({"action": "left_click", "coordinate": [10, 10], "text": "shift+nosuchkey"}),
            "text",
            "unknown key name",
        ),
        (
            A,
            json!({"action": "left_click", "text": "shift", "key": "ctrl"}),
            "key",
            "not both",
        ),
        (A, json!({"action": "type"}), "text", "is required"),
        (
            A,
            json!({"action": "type", "text": "x", "coordinate": [1, 1]}),
            "coordinate",
            "type takes no coordinate",
        ),
        (
            A,
            json!({"action": "key", "text": "ctrl+nosuchkey"}),
            "text",
            "unknown key name",
        ),
        (
            A,
            json!({"action": "scroll", "scroll_direction": "sideways", "scroll_amount": 1}),
            "scroll_direction",
            "up, down, left or right",
        ),
        (
            A,
            json!({"action": "scroll", "scroll_direction": "up", "scroll_amount": 1.5}),
            "scroll_amount",
            "whole number",
        ),
        (
            A,
            json!({"action": "wait", "duration": 301}),
            "duration",
            "between 0 and 300",
        ),
        (
            A,
            json!({"action": "zoom", "region": [100, 100, 50, 200]}),
            "region",
            "x0 < x1",
        ),
        (
            A,
            json!({"action": "left_click_drag", "coordinate": [5, 5]}),
            "start_coordinate",
            "is required",
        ),
        (
            A,
            json!({"action": "left_mouse_up"}),
            "action",
            "without a left_mouse_down",
        ),
        (
            A,
            json!({"action": "screenshot", "bogus": 1}),
            "bogus",
            "unknown member",
        ),
        (O, json!({"call_id": "c"}), "actions", "is required"),
        (O, json!({"actions": []}), "actions", "1 to 100"),
        (
            O,
            json!({"actions": [{"type": "teleport"}]}),
            "actions[0].type",
            "unknown action",
        ),
        (
            O,
            json!({"actions": [{"type": "click", "x": 5, "y": 5, "button": "back"}]}),
            "actions[0].button",
            "not supported",
        ),
        (
            O,
            json!({"actions": [{"type": "click", "x": 5, "y": 5, "keys": ["HYPER"]}]}),
            "actions[0].keys[0]",
            "unknown key name",
        ),
        (
            O,
            json!({"actions": [{"type": "move", "x": 5, "y": 5, "keys": ["SHIFT"]}]}),
            "actions[0].keys",
            "move",
        ),
        (
            O,
            json!({"actions": [{"type": "drag", "path": [{"x": 1, "y": 1}]}]}),
            "actions[0].path",
            "at least two",
        ),
        (
            O,
            json!({"actions": [{"type": "keypress", "keys": ["HYPER"]}]}),
            "actions[0].keys[0]",
            "unknown key name",
        ),
        (
            O,
            json!({"actions": [{"type": "move", "x": 5000, "y": 5}]}),
            "actions[0].x",
            "outside",
        ),
        (
            O,
            json!({"type": "message", "actions": [{"type": "wait"}]}),
            "type",
            "computer_call",
        ),
        (
            O,
            json!({"actions": [{"type": "wait"}], "pending_safety_checks": [{"code": "x"}]}),
            "pending_safety_checks[0].id",
            "is required",
        ),
        (G, json!({"args": {}}), "name", "is required"),
        (
            G,
            json!({"name": "navigate", "args": {"url": "https://example.com"}}),
            "name",
            "browser function",
        ),
        (
            G,
            json!({"name": "search", "args": {}}),
            "name",
            "browser function",
        ),
        (
            G,
            json!({"name": "key_down", "args": {"key": "shift"}}),
            "name",
            "held",
        ),
        (
            G,
            json!({"name": "click_at", "args": {"x": 1000, "y": 5}}),
            "args.x",
            "0-999 grid",
        ),
        (
            G,
            json!({"name": "click_at", "args": {"x": 5}}),
            "args.y",
            "is required",
        ),
        (
            G,
            json!({"name": "click_at", "args": [1, 2]}),
            "args",
            "must be an object",
        ),
        (
            G,
            json!({"name": "scroll_at", "args": {"x": 5, "y": 5, "direction": "in"}}),
            "args.direction",
            "up, down",
        ),
        (
            G,
            json!({"name": "key_combination", "args": {"keys": "Control+"}}),
            "args.keys",
            "chord",
        ),
        (
            G,
            json!({"name": "fly", "args": {}}),
            "name",
            "unknown function",
        ),
        (
            G,
            json!({"name": "mouse_up", "args": {"x": 5, "y": 5}}),
            "name",
            "without a mouse_down",
        ),
    ];
    let before = s.ok("pointer.position", json!({}));
    for (voc, args, path, message) in rows {
        let e = fails(&mut s, voc, args.clone(), "invalid_arguments");
        let issue = &e["data"]["issues"][0];
        assert_eq!(issue["path"], path, "{voc} {args}: {e}");
        assert!(
            issue["message"].as_str().unwrap().contains(message),
            "{voc} {args}: {e}"
        );
    }
    // A bad action late in an OpenAI batch refuses the whole batch before anything runs.
    let (_, (x, y)) = name_points(&mut s);
    fails(
        &mut s,
        O,
        json!({"actions": [{"type": "click", "x": x, "y": y}, {"type": "type", "text": "a"}, {"type": "nope"}]}),
        "invalid_arguments",
    );
    assert_eq!(s.ok("pointer.position", json!({})), before);
    assert_eq!(name_value(&mut s), "");
    assert!(!acted(&s.events), "nothing ran");
}

#[test]
fn the_display_is_fixed_for_the_session() {
    let mut s = session(json!({}));
    // Declared on the first call (the tool definition's size, the canvas's aspect).
    let r = s.ok(
        A,
        json!({"action": "screenshot", "display_width_px": 1280, "display_height_px": 720}),
    );
    let data = r["content"][0]["source"]["data"].as_str().unwrap();
    use base64::Engine as _;
    let png = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap();
    let (w, h, _, _) = common::decode_png(&png);
    assert_eq!((w, h), (1280, 720));
    // Later calls speak the same space; another size is refused, not remapped.
    let e = fails(
        &mut s,
        A,
        json!({"action": "screenshot", "display_width_px": 1366, "display_height_px": 768}),
        "invalid_arguments",
    );
    assert!(
        e["message"].as_str().unwrap().contains("fixed at 1280x720"),
        "{e}"
    );
    s.ok(A, json!({"action": "mouse_move", "coordinate": [640, 360]}));
    assert_eq!(
        s.ok("pointer.position", json!({}))["position"],
        json!({"x": 960, "y": 540})
    );
    // A size that breaks the canvas's aspect is refused on a first call.
    let e = fails(
        &mut s,
        O,
        json!({"actions": [{"type": "screenshot"}], "display_width": 1024, "display_height": 768}),
        "invalid_arguments",
    );
    assert!(e["message"].as_str().unwrap().contains("aspect"), "{e}");
    // A new session starts afresh.
    s.method_ok("session.stop", json!({}));
    s.start_session(json!({}));
    let r = s.ok(A, json!({"action": "cursor_position"}));
    assert_eq!(r["content"][0]["text"], "X=683,Y=384");
}

/// A capture budget too small for the session's display is an error, never an image
/// whose points would land elsewhere.
#[test]
fn a_screenshot_that_misses_the_display_is_refused() {
    let mut s = session(json!({"capture": {"max_area": 500000}}));
    let e = fails(&mut s, A, json!({"action": "screenshot"}), "driver_failed");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("not this session's 1366x768"),
        "{e}"
    );
    assert_eq!(e["data"]["vendor_result"]["is_error"], true);
}

/// A screen change after the session fixed its display is refused, not remapped.
#[test]
fn a_changed_screen_is_refused_until_a_new_session() {
    let mut s = session(json!({}));
    s.ok(A, json!({"action": "screenshot"}));
    s.click_node("button", "Add left display");
    s.wait_event("session.configured");
    let e = fails(
        &mut s,
        A,
        json!({"action": "left_click", "coordinate": [10, 10]}),
        "stale_frame",
    );
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("start a new session"),
        "{e}"
    );
    // Gemini never fixed one in this session: it starts on the new canvas.
    s.ok(G, json!({"name": "take_screenshot", "args": {}}));
    s.method_ok("session.stop", json!({}));
    s.start_session(json!({}));
    s.ok(A, json!({"action": "screenshot"}));
}

/// Idle standby refuses vendor calls like plain ones, until a person resumes.
#[test]
fn idle_standby_refuses_vendor_calls() {
    let mut s = session(json!({"safety": {"idle_timeout_s": 0.3}}));
    s.wait_event("session.idle");
    let e = fails(
        &mut s,
        G,
        json!({"name": "take_screenshot"}),
        "safety_standby",
    );
    assert_eq!(e["data"]["vendor_result"]["name"], "take_screenshot");
    fails(
        &mut s,
        O,
        json!({"actions": [{"type": "screenshot"}]}),
        "safety_standby",
    );
    s.method_ok("session.resume", json!({}));
    s.ok(A, json!({"action": "screenshot"}));
}
