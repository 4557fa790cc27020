//! The scenarios, each a generic function over [`Desk`](super::desk::Desk), written
//! once: `conformance!` in `../mod.rs` makes one test of each per desk.

pub mod clipboard;
pub mod keyboard;
pub mod launch;
pub mod monitors;
pub mod pointer;
pub mod secrets;
pub mod selectors;
pub mod session;
pub mod waits;
pub mod windows;

use serde_json::{Value, json};

use super::desk::Desk;
use crate::common::Server;

/// The tools each capability gates, with arguments that validate (so a refusal is
/// the capability's, not the arguments'), or null for a tool checked in `tools.list`
/// only.
pub fn tools_of(capability: &str) -> Vec<(&'static str, Value)> {
    match capability {
        "capture" => vec![("screen.capture", json!({}))],
        "input" => vec![
            ("pointer.click", json!({"x": 5, "y": 5})),
            ("keyboard.type", json!({"text": "a"})),
        ],
        "accessibility" => vec![
            ("a11y.snapshot", json!({})),
            ("a11y.activate", Value::Null),
            ("a11y.input", Value::Null),
        ],
        "windows" => vec![("window.list", json!({}))],
        "clipboard" => vec![
            ("clipboard.read", json!({})),
            ("clipboard.write", Value::Null),
        ],
        "launch" => vec![("app.launch", json!({"app": "cc-none"}))],
        _ => vec![],
    }
}

/// Whether the desk says it can do `capability`. When it cannot, this checks the
/// refusal instead: `tools.list` marks each tool it gates `available: false` with a
/// reason, and calling one is refused `backend_unavailable`.
pub fn can<D: Desk>(desk: &D, s: &mut Server, capability: &str) -> bool {
    let caps = desk.capabilities();
    assert!(caps[capability].is_boolean(), "{capability}: {caps}");
    if caps[capability] == true {
        return true;
    }
    let list = s.method_ok("tools.list", json!({}));
    for (tool, args) in tools_of(capability) {
        let t = listed(&list, tool);
        assert_eq!(t["available"], false, "{t}");
        assert_says_why(t, capability);
        if !args.is_null() {
            s.fails(tool, args, "backend_unavailable");
        }
    }
    eprintln!("{}: no {capability}; the refusal was checked", D::PLATFORM);
    false
}

/// Asserts that an unavailable tool's `reason` names what is missing.
pub fn assert_says_why(tool: &Value, capability: &str) {
    let word = match capability {
        "windows" => "window",
        "capture" => "captur",
        other => other,
    };
    let why = tool["reason"].as_str().unwrap_or_default();
    assert!(
        why.to_lowercase().contains(word),
        "unavailable without saying {word}: {tool}"
    );
}

/// A tool's entry of `tools.list`.
pub fn listed<'a>(list: &'a Value, tool: &str) -> &'a Value {
    list["tools"]
        .as_array()
        .and_then(|ts| ts.iter().find(|t| t["name"] == tool))
        .unwrap_or_else(|| panic!("{tool} not listed: {list}"))
}

/// Asserts that the server holds nothing (`system.status.held`) and the desk neither.
pub fn assert_nothing_held<D: Desk>(desk: &D, oracle: &dyn super::desk::Oracle, s: &mut Server) {
    assert_eq!(
        s.status()["held"],
        json!({"keys": [], "buttons": []}),
        "the server holds something"
    );
    desk.assert_nothing_held(oracle, s);
}

/// The first event of `kind` whose payload `pred` accepts.
pub fn event(s: &mut Server, kind: &str, pred: impl Fn(&Value) -> bool) -> Value {
    s.wait_event_matching(kind, 0, pred).1
}

/// Whether `have` has everything `want` has: objects the keys given, arrays the same
/// length with each element so, anything else equal.
pub fn contains(have: &Value, want: &Value) -> bool {
    match (have, want) {
        (Value::Object(h), Value::Object(w)) => w
            .iter()
            .all(|(k, v)| h.get(k).is_some_and(|hv| contains(hv, v))),
        (Value::Array(h), Value::Array(w)) => {
            h.len() == w.len() && h.iter().zip(w).all(|(a, b)| contains(a, b))
        }
        _ => have == want,
    }
}

/// The canvas rectangle of a node as `[l, t, r, b]`.
pub fn rect(node: &Value) -> [i64; 4] {
    let r: Vec<i64> = node["rect"]
        .as_array()
        .unwrap_or_else(|| panic!("no rect: {node}"))
        .iter()
        .map(|v| v.as_i64().unwrap_or_default())
        .collect();
    [r[0], r[1], r[2], r[3]]
}

/// The topmost enabled, unchecked, named checkbox with a rect of `window`'s subtree.
/// gtk3-widget-factory's first column is checked, unchecked, then inconsistent
/// (drawn as a dash whatever its state): the topmost unchecked one is the plain one,
/// whose toggle shows.
pub fn topmost_unchecked(window: &Value) -> Value {
    use crate::common::has_state;
    crate::common::nodes(window)
        .into_iter()
        .map(|(_, n)| n)
        .filter(|n| {
            n["role"] == "checkbox"
                && has_state(n, "enabled")
                && !has_state(n, "checked")
                && n["name"].as_str().is_some_and(|t| !t.is_empty())
                && n["rect"].is_array()
        })
        .min_by_key(|n| (n["rect"][1].as_i64(), n["rect"][0].as_i64()))
        .unwrap_or_else(|| panic!("no unchecked checkbox in {window}"))
        .clone()
}

/// The snapshot's window node for `window`.
pub fn window_node(snap: &Value, window: &Value) -> Value {
    crate::common::find_where(&snap["tree"], "window", &|w| w["window_id"] == *window)
        .unwrap_or_else(|| panic!("no window {window} in {snap}"))
        .clone()
}
