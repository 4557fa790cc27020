//! `window.list`, `window.focus` and `batch.execute` on the virtual desktop.

use crate::common;

use common::{Server, find_node, issue_paths, window_by_title};
use serde_json::{Value, json};

fn checked(s: &mut Server) -> bool {
    s.node("checkbox", "Remember me")["states"]
        .as_array()
        .unwrap()
        .contains(&json!("checked"))
}

fn checkbox_center(s: &mut Server) -> (i64, i64) {
    common::center(&s.node("checkbox", "Remember me"))
}

#[test]
fn window_list_describes_every_window() {
    let mut s = Server::start();
    s.start_session(common::full_canvas());
    let r = s.ok("window.list", json!({}));
    let ws = r["windows"].as_array().unwrap();
    assert_eq!(ws.len(), 3);
    let titles: Vec<&str> = ws.iter().map(|w| w["title"].as_str().unwrap()).collect();
    assert_eq!(titles, ["Sign in", "Items", "Displays"]);
    let apps: Vec<&str> = ws.iter().map(|w| w["app_id"].as_str().unwrap()).collect();
    assert_eq!(apps, ["cc-form", "cc-list", "cc-display"]);
    let mut ids: Vec<u64> = ws.iter().map(|w| w["id"].as_u64().unwrap()).collect();
    ids.dedup();
    assert_eq!(ids.len(), 3, "ids are distinct");
    for w in ws {
        assert_eq!(w["pid"], s.pid(), "the virtual desktop lives in the server");
        assert_eq!(w["display"], "0");
        for k in ["x", "y", "width", "height"] {
            assert!(w["rect"][k].is_i64(), "{w}");
        }
        assert!(w["rect"]["width"].as_i64().unwrap() > 0);
    }
    assert_eq!(
        window_by_title(&r, "Sign in")["rect"],
        json!({"x": 120, "y": 120, "width": 640, "height": 440})
    );
    let focused: Vec<&Value> = ws.iter().filter(|w| w["focused"] == true).collect();
    assert_eq!(focused.len(), 1);
    assert_eq!(focused[0]["title"], "Sign in");
    // The a11y tree names the same windows with the same rects.
    let snap = s.snapshot(json!({}));
    for w in ws {
        let n = find_node(&snap["tree"], "window", w["title"].as_str().unwrap()).unwrap();
        assert_eq!(n["window_id"], w["id"]);
        let rc = &w["rect"];
        let (x, y) = (rc["x"].as_i64().unwrap(), rc["y"].as_i64().unwrap());
        let (wd, ht) = (
            rc["width"].as_i64().unwrap(),
            rc["height"].as_i64().unwrap(),
        );
        assert_eq!(n["rect"], json!([x, y, x + wd, y + ht]));
    }
    s.fails("window.list", json!({"all": true}), "invalid_arguments");
}

#[test]
fn window_focus_raises_and_focuses() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let before = s.ok("window.list", json!({}));
    let displays = window_by_title(&before, "Displays")["id"].clone();
    let r = s.ok("window.focus", json!({"id": displays}));
    assert_eq!(r, json!({"id": displays}));
    let after = s.ok("window.list", json!({}));
    let ws = after["windows"].as_array().unwrap();
    assert_eq!(ws[0]["title"], "Displays", "raised to the top");
    assert_eq!(ws[0]["focused"], true);
    assert_eq!(ws.iter().filter(|w| w["focused"] == true).count(), 1);
    // Ids are stable while the windows live.
    for w in before["windows"].as_array().unwrap() {
        let title = w["title"].as_str().unwrap();
        assert_eq!(window_by_title(&after, title)["id"], w["id"]);
    }
    // Keyboard input now goes to the focused window: space presses its button.
    s.ok("keyboard.press", json!({"key": "space"}));
    let ev = s.wait_event("session.configured");
    assert_eq!(
        ev["payload"]["surface"]["displays"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    // Unknown ids are bad arguments.
    let err = s.fails("window.focus", json!({"id": 12345}), "invalid_arguments");
    assert_eq!(issue_paths(&err), vec!["id"]);
    s.fails("window.focus", json!({}), "invalid_arguments");
    s.fails("window.focus", json!({"id": -1}), "invalid_arguments");
}

#[test]
fn batch_completes_with_envelopes_and_event() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let (x, y) = checkbox_center(&mut s);
    let r = s.ok(
        "batch.execute",
        json!({"items": [
            {"tool": "pointer.click", "arguments": {"x": x, "y": y}},
            {"tool": "wait.pause", "arguments": {"ms": 1}},
            {"tool": "window.list"}
        ], "gap_ms": 0}),
    );
    assert_eq!(r["status"], "completed");
    let items = r["items"].as_array().unwrap();
    assert_eq!(items.len(), 3);
    for (it, tool) in items
        .iter()
        .zip(["pointer.click", "wait.pause", "window.list"])
    {
        assert_eq!(it["ok"], true, "{it}");
        assert!(it["error"].is_null());
        assert_eq!(it["meta"]["tool"], tool);
        assert!(it["meta"]["duration_ms"].is_u64());
    }
    assert_eq!(items[0]["result"]["position"], json!({"x": x, "y": y}));
    assert_eq!(items[1]["result"], json!({"waited_ms": 1}));
    assert_eq!(items[2]["result"]["windows"].as_array().unwrap().len(), 3);
    let ev = s.wait_event("batch.finished");
    let p = &ev["payload"];
    assert_eq!(p["status"], "completed");
    assert!(p["duration_ms"].is_u64());
    let tools: Vec<&str> = p["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["pointer.click", "wait.pause", "window.list"]);
    assert!(checked(&mut s), "the click really happened");
    // Each item is an action with its own events.
    let started = s
        .events
        .iter()
        .filter(|e| e["type"] == "action.started")
        .count();
    assert!(started >= 3);
}

#[test]
fn batch_aborts_on_error_or_continues() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let (x, y) = checkbox_center(&mut s);
    let failing = json!({"tool": "window.focus", "arguments": {"id": 999}});
    let click = json!({"tool": "pointer.click", "arguments": {"x": x, "y": y}});
    let r = s.ok(
        "batch.execute",
        json!({"items": [{"tool": "wait.pause", "arguments": {"ms": 0}}, failing, click], "gap_ms": 0}),
    );
    assert_eq!(r["status"], "aborted");
    let items = r["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "nothing after the failed item ran");
    assert_eq!(items[0]["ok"], true);
    assert_eq!(items[1]["ok"], false);
    assert_eq!(items[1]["error"]["code"], "invalid_arguments");
    assert!(!checked(&mut s));
    let ev = s.wait_event("batch.finished");
    assert_eq!(ev["payload"]["status"], "aborted");
    assert_eq!(ev["payload"]["items"][1]["error_code"], "invalid_arguments");

    let r = s.ok(
        "batch.execute",
        json!({"items": [failing, click], "continue_on_error": true, "gap_ms": 0}),
    );
    assert_eq!(r["status"], "completed");
    let items = r["items"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(
        (items[0]["ok"].clone(), items[1]["ok"].clone()),
        (json!(false), json!(true))
    );
    assert!(checked(&mut s), "continue_on_error ran the click");
}

#[test]
fn batch_validates_every_item_before_running_anything() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let (x, y) = checkbox_center(&mut s);
    let err = s.fails(
        "batch.execute",
        json!({"items": [
            {"tool": "pointer.click", "arguments": {"x": x, "y": y}},
            {"tool": "pointer.click", "arguments": {"x": "left", "times": 9}},
            {"tool": "no.such"},
            {"tool": "batch.execute", "arguments": {"items": [{"tool": "window.list"}]}},
            {"tool": "window.list", "bogus": 1}
        ]}),
        "invalid_arguments",
    );
    let paths = issue_paths(&err);
    for p in [
        "items[1].arguments.x",
        "items[1].arguments.times",
        "items[2].tool",
        "items[3].tool",
        "items[4].bogus",
    ] {
        assert!(paths.iter().any(|q| q == p), "missing {p} in {paths:?}");
    }
    assert!(!checked(&mut s), "nothing ran");
    s.fails("batch.execute", json!({"items": []}), "invalid_arguments");
    s.fails("batch.execute", json!({}), "invalid_arguments");
    s.fails(
        "batch.execute",
        json!({"items": [{"tool": "window.list"}], "gap_ms": 60001}),
        "invalid_arguments",
    );
}

#[test]
fn batch_with_a_high_risk_item_waits_for_one_confirmation() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let (x, y) = checkbox_center(&mut s);
    let r = s.ok(
        "batch.execute",
        json!({"items": [
            {"tool": "pointer.click", "arguments": {"x": x, "y": y}},
            {"tool": "keyboard.press", "arguments": {"key": "win"}},
            {"tool": "window.list"}
        ], "gap_ms": 0}),
    );
    assert_eq!(r["status"], "awaiting_confirmation");
    assert_eq!(r["risk"], "high");
    let id = r["request_id"].as_str().unwrap().to_string();
    s.confirm(&id, true);
    let ev = s.wait_event("batch.finished");
    // The approved batch is one action carrying the request id; every item ran
    // after the approval, none before it.
    let (i_res, _) = s.wait_event_matching("safety.confirmation_resolved", 0, |p| {
        p["request_id"] == json!(id)
    });
    let (i_batch, _) = s.wait_event_matching("action.started", 0, |p| {
        p["tool"] == "batch.execute" && p["request_id"] == json!(id)
    });
    assert!(i_res < i_batch);
    let runs: Vec<usize> = s
        .events
        .iter()
        .enumerate()
        .filter(|(_, e)| {
            e["type"] == "action.started"
                && ["pointer.click", "keyboard.press", "window.list"]
                    .contains(&e["payload"]["tool"].as_str().unwrap())
        })
        .map(|(i, _)| i)
        .collect();
    assert_eq!(runs.len(), 3, "{:?}", s.event_types());
    assert!(runs.iter().all(|i| *i > i_res), "{:?}", s.event_types());
    let (_, fin) = s.wait_event_matching("action.finished", 0, |p| {
        p["tool"] == "batch.execute" && p["request_id"] == json!(id)
    });
    assert_eq!(fin["payload"]["envelope"]["result"]["status"], "completed");
    assert_eq!(ev["payload"]["status"], "completed", "{ev}");
    assert_eq!(ev["payload"]["items"].as_array().unwrap().len(), 3);
    assert!(checked(&mut s), "the whole batch ran");
}
