//! `wait.for` on the virtual desktop: conditions met at once answer what they saw (with
//! refs that work next), unmet ones time out answering what they last saw, the
//! emergency stop pre-empts a wait, and bad arguments are refused before waiting. The
//! virtual desktop changes only through actions, so conditions that need a change
//! from elsewhere are tested on X11 (`x11_wait.rs`).

use crate::common;

use std::time::{Duration, Instant};

use common::{Server, issue_paths};
use serde_json::json;

#[test]
fn met_conditions_answer_what_they_saw() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let r = s.ok(
        "wait.for",
        json!({"condition": "appears", "element": {"role": "button", "name": "Submit"}}),
    );
    assert_eq!(r["met"], true);
    assert_eq!(r["condition"], "appears");
    assert_eq!(
        r["driven_by"], "events",
        "the virtual desktop reports every change"
    );
    assert_eq!(r["saw"]["matches"], 1);
    let el = &r["saw"]["element"];
    assert_eq!(el["name"], "Submit");
    assert!(el["rect"].is_array());
    // The ref it saw names the element in the next call, and a wait on it.
    let act = s.ok("a11y.activate", json!({"ref": el["ref"]}));
    assert_eq!(act["name"], "Submit");
    let r = s.ok(
        "wait.for",
        json!({"condition": "appears", "ref": el["ref"], "element": {"states": ["enabled"]}}),
    );
    assert_eq!(r["saw"]["element"]["name"], "Submit");
    s.fails(
        "wait.for",
        json!({"condition": "appears", "ref": el["ref"], "element": {"states": ["checked"]}, "timeout_ms": 10}),
        "timeout",
    );
    // A list row scrolled out of view is not there to see.
    let gone = s.ok(
        "wait.for",
        json!({"condition": "disappears", "element": {"role": "listitem", "name": "Item 20"}}),
    );
    assert_eq!(gone["saw"]["matches"], 0);
    let win = s.ok(
        "wait.for",
        json!({"condition": "appears", "window": {"title_contains": "item"}}),
    );
    assert_eq!(win["saw"]["windows"][0]["title"], "Items");
    let stable = s.ok("wait.for", json!({"condition": "stable", "stable_ms": 50}));
    assert_eq!(stable["saw"]["still"], true);
    // In a batch, after the action that makes it true.
    let batch = s.ok(
        "batch.execute",
        json!({"items": [
            {"tool": "a11y.activate", "arguments": {"selector": {"role": "checkbox", "name": "Remember me"}}},
            {"tool": "wait.for", "arguments": {"condition": "appears", "element": {"role": "checkbox", "states": ["checked"]}, "timeout_ms": 500}},
        ]}),
    );
    assert_eq!(batch["status"], "completed", "{batch}");
    assert_eq!(
        batch["items"][1]["result"]["saw"]["element"]["name"],
        "Remember me"
    );
}

#[test]
fn unmet_conditions_time_out_saying_what_they_last_saw() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let t = Instant::now();
    let e = s.fails(
        "wait.for",
        json!({"condition": "appears", "element": {"role": "dialog"}, "timeout_ms": 300}),
        "timeout",
    );
    assert!(t.elapsed() >= Duration::from_millis(300));
    assert_eq!(e["data"]["met"], false);
    assert_eq!(e["data"]["last_seen"]["matches"], 0);
    assert!(e["data"]["waited_ms"].as_u64().unwrap() >= 300);
    let e = s.fails(
        "wait.for",
        json!({"condition": "disappears", "element": {"role": "button", "name_contains": "i"}, "timeout_ms": 50}),
        "timeout",
    );
    let still: Vec<&str> = e["data"]["last_seen"]["elements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["name"].as_str().unwrap())
        .collect();
    assert_eq!(still, ["Submit", "Add left display"]);
    let e = s.fails(
        "wait.for",
        json!({"condition": "title_changes", "window": {"title": "Items"}, "timeout_ms": 50}),
        "timeout",
    );
    assert_eq!(e["data"]["last_seen"]["title"], "Items");
    let e = s.fails(
        "wait.for",
        json!({"condition": "changes", "region": {"x": 0, "y": 0, "width": 100, "height": 100}, "timeout_ms": 50}),
        "timeout",
    );
    assert_eq!(e["data"]["last_seen"]["changed"], false);
    // The timeout is truncated to runtime.max_wait_ms.
    s.method_ok(
        "session.configure",
        json!({"runtime": {"max_wait_ms": 100}}),
    );
    let t = Instant::now();
    let e = s.fails(
        "wait.for",
        json!({"condition": "appears", "window": {"title": "nope"}, "timeout_ms": 600000}),
        "timeout",
    );
    assert!(t.elapsed() < Duration::from_secs(5), "{e}");
}

#[test]
fn the_emergency_stop_preempts_a_wait() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let id = s.send(
        "tools.call",
        json!({"tool": "wait.for", "arguments": {"condition": "appears", "window": {"title": "never"}, "timeout_ms": 60000}}),
    );
    s.wait_event_matching("action.started", 0, |p| p["tool"] == "wait.for");
    let t = Instant::now();
    s.method_ok("control.panic", json!({"on": true}));
    let r = s.response(id);
    assert_eq!(r["result"]["error"]["code"], "safety_stopped", "{r}");
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
}

#[test]
fn each_condition_takes_what_it_needs_and_nothing_else() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let cases = [
        (json!({"condition": "appears"}), vec!["element"]),
        (
            json!({"condition": "appears", "ref": "e1", "window": {"id": 1}}),
            vec!["element"],
        ),
        (
            json!({"condition": "appears", "element": {"role": "button"}, "window": {"id": 1}}),
            vec!["element"],
        ),
        (
            json!({"condition": "title_changes", "element": {"role": "button"}}),
            vec!["element", "window"],
        ),
        (
            json!({"condition": "stable", "window": {"id": 1}}),
            vec!["window"],
        ),
        (json!({"condition": "soon"}), vec!["condition"]),
        (
            json!({"condition": "appears", "element": {"window": 3}}),
            vec!["element"],
        ),
        (
            json!({"condition": "stable", "stable_ms": 0}),
            vec!["stable_ms"],
        ),
    ];
    for (args, paths) in cases {
        let e = s.fails("wait.for", args.clone(), "invalid_arguments");
        assert_eq!(issue_paths(&e), paths, "{args}");
    }
    let e = s.fails(
        "wait.for",
        json!({"condition": "changes", "region": {"x": 5000, "y": 0, "width": 10, "height": 10}}),
        "invalid_arguments",
    );
    assert_eq!(issue_paths(&e), ["region"]);
    // A ref the session never issued is stale before any waiting.
    s.fails(
        "wait.for",
        json!({"condition": "disappears", "ref": "e000000000000"}),
        "stale_element",
    );
}
