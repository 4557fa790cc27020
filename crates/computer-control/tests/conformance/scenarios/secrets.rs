//! Secrets (PROTOCOL §6) with a real password entry: typing into it waits for a
//! person; the text is redacted in the confirmation request, `action.started` and the
//! logs (at trace level); it does arrive; no snapshot carries the entry's value; and a
//! capture with `capture.redact_sensitive` shows the entry black, as it does not
//! without.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{can, event, rect};
use crate::common::{Server, center, find_where, has_state};
use crate::conformance::desk::{App, Desk, serve};

const SECRET: &str = "Hunter2-Conformance-Secret";

/// The canvas pixels of `region`, losslessly.
fn pixels(s: &mut Server, region: &Value) -> Vec<u8> {
    s.capture_png(json!({"region": region})).4
}

pub fn a_password_asks_first_and_leaks_nowhere<D: Desk>() {
    let mut desk = D::start();
    let mut s = serve(&desk, "trace", None);
    s.start_session(json!({"a11y": {"max_name_len": 4096}}));
    if !can(&desk, &mut s, "accessibility") {
        return;
    }
    let is_password = |n: &Value| has_state(n, "password");
    let window = desk.open(&mut s, App::PasswordForm);
    s.ok("window.focus", json!({"id": window}));
    std::thread::sleep(Duration::from_millis(300));
    let scoped = json!({"level": "full", "window": window});
    // A person clicks the entry where it is now; a window the compositor still placed
    // after the snapshot may move it, so one more click where it then shows.
    let click_entry = |s: &mut Server| {
        let snap = s.ok("a11y.snapshot", scoped.clone());
        let pw = find_where(&snap["tree"], "edit", &is_password)
            .unwrap_or_else(|| panic!("no password entry: {snap}"))
            .clone();
        let (x, y) = center(&pw);
        // Clicking a password field may itself be high risk: approve it as a person would.
        let click = s.tool("pointer.click", json!({"x": x, "y": y}));
        if click["result"]["status"] == "awaiting_confirmation" {
            let id = click["result"]["request_id"].clone();
            let ok = s.call(
                "session.confirm",
                json!({"request_id": id, "approve": true}),
            );
            assert_eq!(ok["ok"], true, "{ok}");
            event(s, "action.finished", |p| p["request_id"] == id);
        }
        pw
    };
    let mut pw = click_entry(&mut s);
    let mut clicked_again = false;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let snap = s.ok("a11y.snapshot", scoped.clone());
        if find_where(&snap["tree"], "edit", &is_password).is_some_and(|n| has_state(n, "focused"))
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the password entry never took focus: {snap}"
        );
        if !clicked_again && Instant::now() + Duration::from_secs(5) > deadline {
            clicked_again = true;
            pw = click_entry(&mut s);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    // Inside the entry, away from its border.
    let r = rect(&pw);
    let region =
        json!({"x": r[0] + 3, "y": r[1] + 3, "width": r[2] - r[0] - 6, "height": r[3] - r[1] - 6});
    let before = pixels(&mut s, &region);
    assert!(before.iter().any(|&b| b != 0), "the entry is black already");

    let typed = s.tool("keyboard.type", json!({"text": SECRET}));
    assert_eq!(
        typed["result"]["status"], "awaiting_confirmation",
        "{typed}"
    );
    let id = typed["result"]["request_id"].clone();
    let asked = event(&mut s, "safety.confirmation_requested", |p| {
        p["request_id"] == id
    });
    assert_eq!(
        asked["payload"]["arguments"]["text"], "[redacted]",
        "{asked}"
    );
    let ok = s.call(
        "session.confirm",
        json!({"request_id": id, "approve": true}),
    );
    assert_eq!(ok["ok"], true, "{ok}");
    let fin = event(&mut s, "action.finished", |p| p["request_id"] == id);
    assert_eq!(
        fin["payload"]["envelope"]["result"]["chars"],
        SECRET.len(),
        "{fin}"
    );
    let began = event(&mut s, "action.started", |p| p["request_id"] == id);
    assert_eq!(
        began["payload"]["arguments"]["text"], "[redacted]",
        "{began}"
    );

    // No snapshot carries it from the password entry, though it arrived.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let snap = s.ok("a11y.snapshot", scoped.clone());
        let pw = find_where(&snap["tree"], "edit", &is_password)
            .unwrap_or_else(|| panic!("the password entry went: {snap}"));
        assert!(pw.get("value").is_none_or(Value::is_null), "{pw}");
        assert!(!pw.to_string().contains(SECRET), "{pw}");
        let after = pixels(&mut s, &region);
        if desk.password_arrived(&snap, SECRET, &before, &after) {
            break;
        }
        assert!(Instant::now() < deadline, "the text never arrived: {snap}");
        std::thread::sleep(Duration::from_millis(100));
    }
    // The operator's redaction blacks the entry out of captures.
    let env = s.call(
        "session.configure",
        json!({"capture": {"redact_sensitive": true}}),
    );
    assert_eq!(env["ok"], true, "{env}");
    let redacted = pixels(&mut s, &region);
    assert!(
        !redacted.is_empty() && redacted.iter().all(|&b| b == 0),
        "the password entry shows in a redacting capture"
    );

    let status = s.call("system.status", json!({}));
    assert!(!status.to_string().contains(SECRET), "{status}");
    // Every event so far, and every log line, is clean.
    s.call("session.stop", json!({}));
    std::thread::sleep(Duration::from_millis(200));
    s.drain_available();
    let events: Vec<String> = s.events.iter().map(Value::to_string).collect();
    assert!(!events.is_empty());
    for e in &events {
        assert!(!e.contains(SECRET), "an event leaked it: {e}");
    }
    let logs = s.stderr_text();
    assert!(
        logs.contains("TRACE") || logs.contains("DEBUG"),
        "trace logging on"
    );
    assert!(!logs.contains(SECRET), "the logs leaked it");
}
