//! `wait.for` follows the desktop (PROTOCOL §4.3): each wait is sent first and the desk
//! changed from outside the server while it waits, so what ends it is the desktop's own
//! event: a window appears, its accessibility tree fills, it disappears once its
//! application is gone; the emergency stop pre-empts a wait at once. A desk that
//! changes only through the server's actions says so (`Desk::spawn_checkboxes`).

use std::time::Duration;

use serde_json::{Value, json};

use super::can;
use crate::common::{self, Server};
use crate::conformance::desk::{Desk, serve};

/// A wait's own bound: 5 s under the test client's (`common::TIMEOUT`), so a wait a
/// slow desk does not meet still answers, with what it saw last and how often it looked.
const WAIT_MS: u64 = common::TIMEOUT.as_secs() * 1000 - 5_000;

/// Sends a `wait.for` and returns its request id once the worker runs it.
pub fn start_wait(s: &mut Server, arguments: Value) -> u64 {
    let from = s.events.len();
    let id = s.send(
        "tools.call",
        json!({"tool": "wait.for", "arguments": arguments}),
    );
    s.wait_event_matching("action.started", from, |p| p["tool"] == "wait.for");
    // The wait subscribes to events right after it starts.
    std::thread::sleep(Duration::from_millis(300));
    id
}

/// The answer to a `wait.for` that must have been met.
pub fn met(s: &mut Server, id: u64) -> Value {
    let r = s.response(id);
    let env = &r["result"];
    assert_eq!(env["ok"], true, "{env}");
    assert_eq!(env["result"]["met"], true, "{env}");
    env["result"].clone()
}

pub fn waits_follow_the_desktops_changes<D: Desk>() {
    let mut desk = D::start();
    let mut s = serve(&desk, "info", None);
    s.start_session(common::full_canvas());
    if !can(&desk, &mut s, "windows") || !can(&desk, &mut s, "accessibility") {
        return;
    }
    // The emergency stop pre-empts a wait.
    let id = start_wait(
        &mut s,
        json!({"condition": "appears", "window": {"title": "never"}, "timeout_ms": 60000}),
    );
    let panic = s.call("control.panic", json!({"on": true}));
    assert_eq!(panic["result"]["state"], "stopped", "{panic}");
    let r = s.response(id);
    assert_eq!(r["result"]["error"]["code"], "safety_stopped", "{r}");
    s.method_ok("control.panic", json!({"on": false}));

    // A window appears: the wait runs before the application starts.
    let Some(selector) = desk.spawn_checkboxes() else {
        eprintln!(
            "{}: this desktop changes only through the server's actions",
            D::PLATFORM
        );
        return;
    };
    let id = start_wait(
        &mut s,
        json!({"condition": "appears", "window": selector, "timeout_ms": WAIT_MS}),
    );
    let r = met(&mut s, id);
    assert_eq!(r["driven_by"], D::WINDOW_WAITS, "{r}");
    let window = r["saw"]["windows"][0]["id"].clone();
    assert!(window.is_u64(), "{r}");

    // An element appears in its accessibility tree.
    let r = s.ok(
        "wait.for",
        json!({"condition": "appears", "element": {"role": "checkbox", "window": window, "states": ["enabled"]}, "timeout_ms": WAIT_MS}),
    );
    assert!(r["saw"]["matches"].as_u64().unwrap_or_default() >= 1, "{r}");

    // The application goes: its window disappears.
    let listed =
        crate::conformance::desk::window_where(&mut s, "the waited", |w| w["id"] == window);
    let id = start_wait(
        &mut s,
        json!({"condition": "disappears", "window": {"id": window}, "timeout_ms": WAIT_MS}),
    );
    desk.close(&mut s, &listed);
    let r = met(&mut s, id);
    assert_eq!(r["condition"], "disappears", "{r}");
}
