//! The clipboard and launching applications on the virtual desktop, through the real
//! server: ctrl+c / ctrl+v and `clipboard.read` / `clipboard.write` meet on one
//! clipboard; what is read never reaches an event or a log line; `app.launch` is high
//! risk unless the operator lists the app, and a deny rule holds.

use crate::common;
use crate::safety_support;

use common::Server;
use safety_support::*;
use serde_json::{Value, json};

/// Typed in two pieces, so the whole text exists only on the clipboard and in the
/// answer to `clipboard.read`.
const PIECES: [&str; 2] = ["Clip-Copied-", "Secret-4242"];

fn whole() -> String {
    PIECES.concat()
}

fn combo(s: &mut Server, keys: &str) {
    s.ok("keyboard.combo", json!({ "keys": keys }));
}

#[test]
fn copy_paste_read_and_write_meet_on_one_clipboard_and_the_text_stays_out_of_events_and_logs() {
    let mut s = Server::start_capturing_stderr(None, &[], &[("COMPUTER_CONTROL_LOG", "trace")]);
    s.start_session(common::full_canvas());

    // Empty at first: a clear answer, not an error.
    let r = s.ok("clipboard.read", json!({}));
    assert_eq!(r, json!({"text": null, "chars": 0, "owner": null}));

    // ctrl+a, ctrl+c in the name field copies its text.
    s.ok("pointer.click", json!({"x": NAME.0, "y": NAME.1}));
    for p in PIECES {
        s.ok("keyboard.type", json!({ "text": p }));
    }
    combo(&mut s, "ctrl+a");
    combo(&mut s, "ctrl+c");
    let from = s.events.len();
    let r = s.ok("clipboard.read", json!({}));
    assert_eq!(r["text"], whole().as_str());
    assert_eq!(r["chars"], whole().chars().count());
    assert_eq!(r["owner"], "cc-form");
    // The operator sees that it was read, and how long it was, never what.
    let (_, fin) =
        s.wait_event_matching("action.finished", from, |p| p["tool"] == "clipboard.read");
    assert_eq!(
        fin["payload"]["result"],
        json!({"text": "[redacted]", "text_chars": whole().chars().count(), "chars": whole().chars().count(), "owner": "cc-form"}),
        "{fin}"
    );

    // The password field never copies.
    s.ok("pointer.click", json!({"x": PASSWORD.0, "y": PASSWORD.1}));
    let (id, _) = parked(&mut s, "keyboard.type", json!({"text": "Pw-Never-Copied"}));
    confirm(&mut s, &id, true);
    s.wait_event_matching("action.finished", 0, |p| p["request_id"] == id.as_str());
    combo(&mut s, "ctrl+a");
    combo(&mut s, "ctrl+c");
    assert_eq!(s.ok("clipboard.read", json!({}))["text"], whole().as_str());

    // clipboard.write, then ctrl+v over a select-all in the name field.
    let w = s.ok("clipboard.write", json!({"text": "pasted ✓"}));
    assert_eq!(w, json!({"chars": 8}));
    s.ok("pointer.click", json!({"x": NAME.0, "y": NAME.1}));
    combo(&mut s, "ctrl+a");
    combo(&mut s, "ctrl+v");
    assert_eq!(name_value(&mut s), "pasted ✓");
    let r = s.ok("clipboard.read", json!({}));
    assert_eq!(
        (r["text"].clone(), r["owner"].clone()),
        (json!("pasted ✓"), json!("computer-control"))
    );

    // A confirmed read: the envelope the event carries is redacted too.
    s.ok("pointer.click", json!({"x": NAME.0, "y": NAME.1}));
    combo(&mut s, "ctrl+a");
    s.ok("keyboard.press", json!({"key": "backspace"}));
    for p in PIECES {
        s.ok("keyboard.type", json!({ "text": p }));
    }
    combo(&mut s, "ctrl+c");
    configure(
        &mut s,
        json!({"safety": {"rules": [{"match": {"tool": "clipboard.read"}, "effect": "confirm"}]}}),
    );
    let (id, _) = parked(&mut s, "clipboard.read", json!({}));
    confirm(&mut s, &id, true);
    let (_, fin) = s.wait_event_matching("action.finished", 0, |p| p["request_id"] == id.as_str());
    let result = &fin["payload"]["envelope"]["result"];
    assert_eq!(result["text"], "[redacted]", "{fin}");
    assert_eq!(result["text_chars"], whole().chars().count());

    // A batch that reads it, confirmed: its item is redacted in the event as well.
    let batch = json!({"items": [{"tool": "clipboard.read", "arguments": {}}]});
    let (id, _) = parked(&mut s, "batch.execute", batch);
    confirm(&mut s, &id, true);
    let (_, fin) = s.wait_event_matching("action.finished", 0, |p| p["request_id"] == id.as_str());
    let item = &fin["payload"]["envelope"]["result"]["items"][0];
    assert_eq!(item["result"]["text"], "[redacted]", "{fin}");

    // Nowhere else: no event, no log line at trace level.
    s.drain_available();
    let events = serde_json::to_string(&s.events).unwrap();
    assert!(
        !events.contains(&whole()),
        "the clipboard leaked into an event"
    );
    assert!(!events.contains("Pw-Never-Copied"));
    let log = s.stderr_text();
    assert!(log.contains("clipboard.read"), "the log says what ran");
    assert!(!log.contains(&whole()), "the clipboard leaked into the log");
    assert_nothing_held(&mut s);
}

#[test]
fn launching_is_high_risk_unless_the_operator_lists_the_app_and_a_deny_rule_holds() {
    // Observations may run while a confirmation waits, to show that nothing ran.
    let mut s = session(json!({"safety": {"observe_while_confirming": true}}));
    let windows = |s: &mut Server| -> Vec<String> {
        let r = s.ok("window.list", json!({}));
        r["windows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["app_id"].as_str().unwrap().to_string())
            .collect()
    };
    // alt+F4 closes the focused window (the form).
    combo(&mut s, "alt+f4");
    assert_eq!(windows(&mut s), ["cc-list", "cc-display"]);

    // Unlisted: high risk, a person's confirmation before anything runs.
    let (id, r) = parked(&mut s, "app.launch", json!({"app": "cc-form"}));
    assert_eq!(r["risk"], "high");
    assert_eq!(
        windows(&mut s),
        ["cc-list", "cc-display"],
        "nothing ran yet"
    );
    confirm(&mut s, &id, true);
    let (_, fin) = s.wait_event_matching("action.finished", 0, |p| p["request_id"] == id.as_str());
    assert_eq!(fin["payload"]["ok"], true, "{fin}");
    let launched = &fin["payload"]["envelope"]["result"];
    assert_eq!(launched["app"], "cc-form");
    assert!(
        launched["pid"].as_u64().is_some_and(|p| p > 0),
        "{launched}"
    );
    assert_eq!(windows(&mut s), ["cc-form", "cc-list", "cc-display"]);

    // Denied launches stay denied.
    let (id, _) = parked(&mut s, "app.launch", json!({"app": "cc-list"}));
    confirm(&mut s, &id, false);
    s.wait_event_matching("safety.confirmation_resolved", 0, |p| {
        p["request_id"] == id.as_str()
    });
    assert_eq!(windows(&mut s)[0], "cc-form");

    // Listed by the operator: moderate, runs at once; an open window is raised.
    configure(
        &mut s,
        json!({"apps": {"launch_allowed": ["cc-display", "xterm"]}}),
    );
    let r = s.ok("app.launch", json!({"app": "cc-display"}));
    assert_eq!(r["app"], "cc-display");
    assert!(r["window"].is_u64(), "{r}");
    assert_eq!(windows(&mut s)[0], "cc-display");
    // Exactly the listed name.
    parked(&mut s, "app.launch", json!({"app": "cc-displays"}));
    let id = status(&mut s)["pending_confirmation"]["request_id"]
        .as_str()
        .unwrap()
        .to_string();
    confirm(&mut s, &id, false);

    // Anything else is refused clearly, with what the desktop runs.
    let e = s.fails("app.launch", json!({"app": "xterm"}), "invalid_arguments");
    assert!(e["message"].as_str().unwrap().contains("cc-form"), "{e}");
    assert_eq!(e["data"]["issues"][0]["path"], "app");
    let e = s.fails(
        "app.launch",
        json!({"app": "cc-display", "args": ["--x"]}),
        "invalid_arguments",
    );
    assert!(
        e["message"].as_str().unwrap().contains("no arguments"),
        "{e}"
    );

    // A deny rule wins over the allowlist.
    configure(
        &mut s,
        json!({"safety": {"rules": [{"match": {"tool": "app.launch", "argument": {"name": "app", "matcher": "equals", "value": "cc-display"}}, "effect": "deny"}]}}),
    );
    let e = s.fails("app.launch", json!({"app": "cc-display"}), "policy_denied");
    assert_eq!(e["data"]["rule"]["index"], 0, "{e}");
    assert_nothing_held(&mut s);
}

#[test]
fn bad_arguments_are_refused_with_their_paths() {
    let mut s = session(json!({}));
    let paths = |e: &Value| -> Vec<String> {
        e["data"]["issues"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["path"].as_str().unwrap().to_string())
            .collect()
    };
    let e = s.fails("clipboard.write", json!({}), "invalid_arguments");
    assert_eq!(paths(&e), ["text"]);
    let e = s.fails(
        "clipboard.write",
        json!({"text": "x".repeat(100_001)}),
        "invalid_arguments",
    );
    assert_eq!(paths(&e), ["text"]);
    let e = s.fails("clipboard.read", json!({"text": "x"}), "invalid_arguments");
    assert_eq!(paths(&e), ["text"]);
    let e = s.fails("app.launch", json!({"app": ""}), "invalid_arguments");
    assert_eq!(paths(&e), ["app"]);
    let e = s.fails(
        "app.launch",
        json!({"app": "cc-form", "args": "x"}),
        "invalid_arguments",
    );
    assert_eq!(paths(&e), ["args"]);
    let e = s.fails("app.launch", json!({"args": []}), "invalid_arguments");
    assert_eq!(paths(&e), ["app"]);
    // Operator-only: an agent cannot list what it may launch (stdio speaks for the
    // operator, so the key itself is checked here for shape).
    let env = s.call(
        "session.configure",
        json!({"apps": {"launch_allowed": "xterm"}}),
    );
    assert_eq!(env["error"]["code"], "invalid_config", "{env}");
}

/// What an agent put on the clipboard reaches a password field only as typing would:
/// ctrl+v there waits for a person (high risk); elsewhere it is an ordinary combo.
#[test]
fn pasting_into_the_password_field_waits_for_a_person() {
    let mut s = session(json!({}));
    s.ok("clipboard.write", json!({"text": "agent-chosen"}));
    s.ok("pointer.click", json!({"x": PASSWORD.0, "y": PASSWORD.1}));
    for keys in ["ctrl+v", "shift+insert"] {
        let (id, r) = parked(&mut s, "keyboard.combo", json!({ "keys": keys }));
        assert_eq!(r["risk"], "high", "{keys}: {r}");
        confirm(&mut s, &id, false);
    }
    // Approved, it pastes (the field keeps its secret: only its length shows).
    let (id, _) = parked(&mut s, "keyboard.combo", json!({"keys": "ctrl+v"}));
    confirm(&mut s, &id, true);
    let (_, fin) = s.wait_event_matching("action.finished", 0, |p| p["request_id"] == id.as_str());
    assert_eq!(fin["payload"]["ok"], true, "{fin}");
    s.ok("pointer.click", json!({"x": NAME.0, "y": NAME.1}));
    let r = s.ok("keyboard.combo", json!({"keys": "ctrl+v"}));
    assert_eq!(r["keys"], json!(["ctrl", "v"]), "{r}");
    assert_eq!(name_value(&mut s), "agent-chosen");
    assert_nothing_held(&mut s);
}
