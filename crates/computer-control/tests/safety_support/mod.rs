//! Helpers shared by the safety tests (`safety_*.rs`), on top of `common`.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{Server, find_node};

/// Canvas centre of the "Name" edit of the "Sign in" window.
pub const NAME: (i64, i64) = (496, 185);
/// Canvas centre of the "Password" edit of the "Sign in" window.
pub const PASSWORD: (i64, i64) = (496, 233);
/// A point inside the list of the "Items" window (app `cc-list`).
pub const ITEMS: (i64, i64) = (1027, 300);
/// A point on the bare desktop, outside every window.
pub const DESKTOP: (i64, i64) = (1500, 950);

/// A server with a running session under this session config, on the operator's
/// 1920 canvas (the points above are the screen's pixels).
pub fn session(config: Value) -> Server {
    let mut s = Server::start_with(Some(crate::common::full_canvas()), &[]);
    s.start_session(config);
    s
}

/// `system.status`'s result.
pub fn status(s: &mut Server) -> Value {
    let env = s.call("system.status", json!(null));
    assert_eq!(env["ok"], true, "{env}");
    env["result"].clone()
}

/// The reported session state.
pub fn state(s: &mut Server) -> String {
    status(s)["state"].as_str().unwrap_or_default().to_string()
}

/// `system.status.held`.
pub fn held(s: &mut Server) -> Value {
    status(s)["held"].clone()
}

/// Asserts nothing is held.
pub fn assert_nothing_held(s: &mut Server) {
    assert_eq!(held(s), json!({"keys": [], "buttons": []}));
}

/// A tool call that must fail with `code`; returns the envelope.
pub fn refused(s: &mut Server, tool: &str, args: Value, code: &str) -> Value {
    let env = s.tool(tool, args.clone());
    assert_eq!(env["ok"], false, "{tool} {args} should fail: {env}");
    assert_eq!(env["error"]["code"], code, "{tool} {args}: {env}");
    env
}

/// A call that must park for confirmation; returns `(request_id, result)`.
pub fn parked(s: &mut Server, tool: &str, args: Value) -> (String, Value) {
    let env = s.tool(tool, args.clone());
    assert_eq!(env["ok"], true, "{tool} {args}: {env}");
    let r = env["result"].clone();
    assert_eq!(r["status"], "awaiting_confirmation", "{tool} {args}: {env}");
    (r["request_id"].as_str().unwrap().to_string(), r)
}

/// `session.confirm`; returns the envelope.
pub fn confirm(s: &mut Server, id: &str, approve: bool) -> Value {
    s.call(
        "session.confirm",
        json!({"request_id": id, "approve": approve}),
    )
}

/// `session.configure` that must succeed.
pub fn configure(s: &mut Server, patch: Value) {
    let env = s.call("session.configure", patch.clone());
    assert_eq!(env["ok"], true, "configure {patch}: {env}");
}

/// `control.panic`; returns the result.
pub fn panic(s: &mut Server, on: bool) -> Value {
    let env = s.call("control.panic", json!({ "on": on }));
    assert_eq!(env["ok"], true, "{env}");
    env["result"].clone()
}

/// The value of the "Name" edit, read back through an accessibility snapshot.
pub fn name_value(s: &mut Server) -> String {
    let snap = s.ok("a11y.snapshot", json!({"level": "full"}));
    let node = find_node(&snap["tree"], "edit", "Name").expect("Name edit");
    node["value"].as_str().unwrap_or_default().to_string()
}

/// The node id of an element in a fresh full snapshot, with the snapshot id.
pub fn node(s: &mut Server, role: &str, name: &str) -> (String, u64) {
    let snap = s.ok("a11y.snapshot", json!({"level": "full"}));
    let n = find_node(&snap["tree"], role, name).expect("node");
    (
        snap["snapshot_id"].as_str().unwrap().to_string(),
        n["id"].as_u64().unwrap(),
    )
}

/// Events of this type read so far whose payload has `request_id == id`.
pub fn events_for(s: &Server, kind: &str, id: &str) -> Vec<Value> {
    s.events
        .iter()
        .filter(|e| e["type"] == kind && e["payload"]["request_id"] == id)
        .cloned()
        .collect()
}

/// Index of the first event of this type with `pred` on its payload, from `from`.
pub fn index_of(s: &Server, kind: &str, from: usize, pred: impl Fn(&Value) -> bool) -> usize {
    s.events
        .iter()
        .enumerate()
        .skip(from)
        .find(|(_, e)| e["type"] == kind && pred(&e["payload"]))
        .map(|(i, _)| i)
        .unwrap_or_else(|| panic!("no {kind} event: {:?}", s.events))
}

/// Reads output for `d`, keeping every event.
pub fn settle(s: &mut Server, d: Duration) {
    let deadline = Instant::now() + d;
    while Instant::now() < deadline {
        s.quiet_for(Duration::from_millis(10));
    }
}

/// Parses an RFC 3339 UTC timestamp of the form `2026-01-02T03:04:05.678Z` into
/// milliseconds since the Unix epoch.
pub fn rfc3339_ms(t: &str) -> i64 {
    let b = t.as_bytes();
    assert!(
        t.len() == 24 && t.ends_with('Z'),
        "not RFC 3339 millis: {t}"
    );
    assert_eq!(
        (b[4], b[7], b[10], b[13], b[16], b[19]),
        (b'-', b'-', b'T', b':', b':', b'.'),
        "{t}"
    );
    let n = |r: std::ops::Range<usize>| t[r].parse::<i64>().unwrap();
    let (y, m, d) = (n(0..4), n(5..7), n(8..10));
    // Days from civil (Howard Hinnant's algorithm).
    let y2 = if m <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    ((days * 24 + n(11..13)) * 60 + n(14..16)) * 60_000 + n(17..19) * 1000 + n(20..23)
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}
