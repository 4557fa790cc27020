//! Pointer, keyboard and wait tools on the virtual desktop, each effect verified by an
//! independent read-back (accessibility values and states, window rects, pixels).

use crate::common;

use std::time::{Duration, Instant};

use common::{Server, center, find_node, issue_paths, window_by_title};
use serde_json::{Value, json};

fn value_of(s: &mut Server, role: &str, name: &str) -> Value {
    s.node(role, name)["value"].clone()
}

fn states_of(s: &mut Server, role: &str, name: &str) -> Vec<String> {
    s.node(role, name)["states"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn pointer_move_reports_and_clamps_the_position() {
    let mut s = Server::start();
    s.start_session(common::full_canvas());
    let r = s.ok("pointer.move", json!({"x": 640, "y": 400}));
    assert_eq!(r, json!({"position": {"x": 640, "y": 400}}));
    let r = s.ok("pointer.move", json!({"x": 100.4, "y": 200.6, "steps": 10}));
    assert_eq!(r["position"], json!({"x": 100, "y": 201}));
    let r = s.ok("pointer.move", json!({"x": -50, "y": 1e6}));
    assert_eq!(r["position"], json!({"x": 0, "y": 1079}));
    let r = s.ok("pointer.move", json!({"x": 1e6, "y": -1e6}));
    assert_eq!(r["position"], json!({"x": 1919, "y": 0}));
    // A click without coordinates happens where the pointer is.
    let r = s.ok("pointer.click", json!({}));
    assert_eq!(r["position"], json!({"x": 1919, "y": 0}));
    assert_eq!(r["button"], "left");
    assert_eq!(r["times"], 1);
}

#[test]
fn clicks_clamped_to_the_edge_land_at_the_edge() {
    let mut s = Server::start();
    s.start_session(common::full_canvas());
    let r = s.ok("pointer.click", json!({"x": -50, "y": 300}));
    assert_eq!(r["position"], json!({"x": 0, "y": 300}));
    let r = s.ok(
        "pointer.click",
        json!({"x": 1e6, "y": 300, "button": "right"}),
    );
    assert_eq!(r["position"], json!({"x": 1919, "y": 300}));
    assert_eq!(r["button"], "right");
    // Landing is real: drag the Sign in window so its checkbox touches the left
    // edge, then a click far left of the canvas (clamped to x=0) toggles it.
    let before = s.node("checkbox", "Remember me");
    let (_, cy) = center(&before);
    let left = before["rect"][0].as_i64().unwrap();
    // Title bar of "Sign in" is at y 120..148; move it left by `left` + 2 pixels so
    // the checkbox straddles x = 0.
    s.ok(
        "pointer.drag",
        json!({"from": {"x": 300, "y": 130}, "to": {"x": 300 - left - 2, "y": 130}}),
    );
    let moved = s.node("checkbox", "Remember me");
    assert!(moved["rect"][0].as_i64().unwrap() < 0, "{moved}");
    assert!(moved["rect"][2].as_i64().unwrap() > 0, "{moved}");
    let r = s.ok("pointer.click", json!({"x": -1e6, "y": cy}));
    assert_eq!(r["position"], json!({"x": 0, "y": cy}));
    assert!(states_of(&mut s, "checkbox", "Remember me").contains(&"checked".to_string()));
}

#[test]
fn clicking_the_checkbox_toggles_it() {
    let mut s = Server::start();
    s.start_session(json!({}));
    assert!(!states_of(&mut s, "checkbox", "Remember me").contains(&"checked".into()));
    let r = s.click_node("checkbox", "Remember me");
    assert_eq!(r["times"], 1);
    let st = states_of(&mut s, "checkbox", "Remember me");
    assert!(
        st.contains(&"checked".into()) && st.contains(&"focused".into()),
        "{st:?}"
    );
    s.click_node("checkbox", "Remember me");
    assert!(!states_of(&mut s, "checkbox", "Remember me").contains(&"checked".into()));
    // A double click (times 2) toggles twice: unchanged; a triple click toggles.
    let (x, y) = center(&s.node("checkbox", "Remember me"));
    s.ok("pointer.click", json!({"x": x, "y": y, "times": 2}));
    assert!(!states_of(&mut s, "checkbox", "Remember me").contains(&"checked".into()));
    s.ok(
        "pointer.click",
        json!({"x": x, "y": y, "times": 3, "hold_ms": 5}),
    );
    assert!(states_of(&mut s, "checkbox", "Remember me").contains(&"checked".into()));
    // Right and middle clicks do not toggle.
    s.ok("pointer.click", json!({"x": x, "y": y, "button": "right"}));
    s.ok("pointer.click", json!({"x": x, "y": y, "button": "middle"}));
    assert!(states_of(&mut s, "checkbox", "Remember me").contains(&"checked".into()));
}

#[test]
fn dragging_a_title_bar_moves_the_window() {
    let mut s = Server::start();
    s.start_session(common::full_canvas());
    let list = s.ok("window.list", json!({}));
    let items = window_by_title(&list, "Items").clone();
    let r = &items["rect"];
    let (x0, y0) = (r["x"].as_i64().unwrap(), r["y"].as_i64().unwrap());
    let from = json!({"x": x0 + 100, "y": y0 + 10});
    let to = json!({"x": x0 + 250, "y": y0 + 90});
    let out = s.ok("pointer.drag", json!({"from": from, "to": to}));
    assert_eq!(out, json!({"from": from, "to": to}));
    let list = s.ok("window.list", json!({}));
    let moved = window_by_title(&list, "Items");
    assert_eq!(moved["id"], items["id"], "ids are stable");
    assert_eq!(moved["rect"]["x"], x0 + 150);
    assert_eq!(moved["rect"]["y"], y0 + 80);
    assert_eq!(moved["rect"]["width"], items["rect"]["width"]);
    assert_eq!(moved["focused"], true, "a press raises the window");
    // The a11y tree agrees.
    let snap = s.snapshot(json!({}));
    let node = find_node(&snap["tree"], "window", "Items").unwrap();
    assert_eq!(node["rect"][0], x0 + 150);
    // Dragging the body of a window does not move it.
    s.ok(
        "pointer.drag",
        json!({"from": {"x": x0 + 160, "y": y0 + 500}, "to": {"x": x0 + 10, "y": y0 + 600}, "steps": 3}),
    );
    let list = s.ok("window.list", json!({}));
    assert_eq!(window_by_title(&list, "Items")["rect"]["x"], x0 + 150);
}

#[test]
fn scrolling_the_list_moves_both_scrollbars() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let (lx, ly) = center(&s.node("list", "Items"));
    assert_eq!(value_of(&mut s, "scrollbar", "Vertical"), "0");
    let r = s.ok("pointer.scroll", json!({"amount": -3, "x": lx, "y": ly}));
    assert_eq!(r, json!({"axis": "vertical", "amount": -3}));
    assert_eq!(
        value_of(&mut s, "scrollbar", "Vertical"),
        "3",
        "negative is down"
    );
    s.ok("pointer.scroll", json!({"amount": 1, "x": lx, "y": ly}));
    assert_eq!(
        value_of(&mut s, "scrollbar", "Vertical"),
        "2",
        "positive is up"
    );
    // The rows followed: Item 3 is now the first visible row.
    let snap = s.snapshot(json!({"level": "full"}));
    let i3 = find_node(&snap["tree"], "listitem", "Item 3").unwrap();
    let i2 = find_node(&snap["tree"], "listitem", "Item 2").unwrap();
    assert!(i3["rect"].is_array() && i2.get("rect").is_none());

    let r = s.ok(
        "pointer.scroll",
        json!({"axis": "horizontal", "amount": 2, "x": lx, "y": ly}),
    );
    assert_eq!(r, json!({"axis": "horizontal", "amount": 2}));
    assert_eq!(
        value_of(&mut s, "scrollbar", "Horizontal"),
        "20",
        "positive is right"
    );
    // Without x/y it scrolls where the pointer is (still over the list).
    s.ok(
        "pointer.scroll",
        json!({"axis": "horizontal", "amount": -1}),
    );
    assert_eq!(value_of(&mut s, "scrollbar", "Horizontal"), "10");
    s.ok("pointer.scroll", json!({"amount": -100}));
    assert_eq!(
        value_of(&mut s, "scrollbar", "Vertical"),
        "12",
        "clamped at the end"
    );
    // Scrolling elsewhere changes nothing.
    s.ok("pointer.scroll", json!({"amount": 5, "x": 10, "y": 10}));
    assert_eq!(value_of(&mut s, "scrollbar", "Vertical"), "12");
}

#[test]
fn typing_combos_and_select_all_replace() {
    let mut s = Server::start();
    s.start_session(json!({}));
    s.click_node("edit", "Name");
    let r = s.ok("keyboard.type", json!({"text": "hello"}));
    assert_eq!(r, json!({"chars": 5, "submit": false}));
    assert_eq!(value_of(&mut s, "edit", "Name"), "hello");
    let r = s.ok("keyboard.combo", json!({"keys": ["ctrl", "a"]}));
    assert_eq!(r, json!({"keys": ["ctrl", "a"]}));
    s.ok("keyboard.type", json!({"text": "bye"}));
    assert_eq!(
        value_of(&mut s, "edit", "Name"),
        "bye",
        "ctrl+a then type replaces"
    );
    // The string form, any case.
    let r = s.ok("keyboard.combo", json!({"keys": "Ctrl+A"}));
    assert_eq!(r["keys"], json!(["ctrl", "a"]));
    s.ok("keyboard.press", json!({"key": "backspace"}));
    assert_eq!(value_of(&mut s, "edit", "Name"), "");
    // Shift produces the shifted character on the virtual layout.
    s.ok("keyboard.combo", json!({"keys": "shift+a"}));
    s.ok("keyboard.press", json!({"key": "b"}));
    assert_eq!(value_of(&mut s, "edit", "Name"), "Ab");
    // Submit presses Enter after the text: the form submits.
    let r = s.ok(
        "keyboard.type",
        json!({"text": "c", "submit": true, "interval_ms": 2}),
    );
    assert_eq!(r, json!({"chars": 1, "submit": true}));
    assert_eq!(value_of(&mut s, "statusbar", "Status"), "Submitted: Abc");
    // Nothing is left held after a combo: typing is plain again.
    s.ok("keyboard.type", json!({"text": "d"}));
    assert_eq!(value_of(&mut s, "edit", "Name"), "Abcd");
}

#[test]
fn typing_arbitrary_unicode_arrives_exactly() {
    let mut s = Server::start();
    s.start_session(json!({}));
    s.click_node("edit", "Name");
    let text = "héllo wörld — 日本語 🎉 e\u{301} ✓";
    let r = s.ok("keyboard.type", json!({"text": text}));
    assert_eq!(r["chars"], text.chars().count());
    assert_eq!(value_of(&mut s, "edit", "Name"), text);
    // a11y.input reads back the same way.
    let snap = s.snapshot(json!({}));
    assert_eq!(
        find_node(&snap["tree"], "edit", "Name").unwrap()["value"],
        text
    );
    // Control-ish and astral characters, and an empty text.
    s.ok("keyboard.combo", json!({"keys": "ctrl+a"}));
    let tricky = "\"quotes\" \\ back\\slash \u{200b}zwsp 𝄞 Ω≈ç√ ﷽";
    s.ok("keyboard.type", json!({"text": tricky}));
    assert_eq!(value_of(&mut s, "edit", "Name"), tricky);
    let r = s.ok("keyboard.type", json!({"text": ""}));
    assert_eq!(r["chars"], 0);
    // 10 000 characters are allowed, 10 001 are not.
    s.ok("keyboard.combo", json!({"keys": "ctrl+a"}));
    let long: String = "é".repeat(10_000);
    assert_eq!(
        s.ok("keyboard.type", json!({"text": long}))["chars"],
        10_000
    );
    // The snapshot may shorten a long value (with an ellipsis), never alter it.
    let v = value_of(&mut s, "edit", "Name");
    let shown = v.as_str().unwrap().trim_end_matches('…');
    assert!(!shown.is_empty() && long.starts_with(shown), "{v}");
    let err = s.fails(
        "keyboard.type",
        json!({"text": "é".repeat(10_001)}),
        "invalid_arguments",
    );
    assert_eq!(issue_paths(&err), vec!["text"]);
}

/// Every key name of PROTOCOL §4, written out from the spec.
fn spec_key_names() -> Vec<String> {
    let mut v: Vec<String> = ('a'..='z').map(String::from).collect();
    v.extend(('0'..='9').map(String::from));
    v.extend((1..=24).map(|n| format!("f{n}")));
    for k in [
        "up",
        "down",
        "left",
        "right",
        "home",
        "end",
        "pgup",
        "pgdn",
        "insert",
        "delete",
        "enter",
        "esc",
        "tab",
        "space",
        "backspace",
        "ctrl",
        "lctrl",
        "rctrl",
        "alt",
        "lalt",
        "ralt",
        "shift",
        "lshift",
        "rshift",
        "apps",
        "capslock",
        "numlock",
        "scrolllock",
        "printscreen",
        "pause",
        ";",
        ",",
        "-",
        ".",
        "/",
        "`",
        "[",
        "\\",
        "]",
        "'",
        "=",
        "numpad_enter",
        "numpad_*",
        "numpad_+",
        "numpad_-",
        "numpad_/",
        "numpad_.",
    ] {
        v.push(k.to_string());
    }
    v.extend((0..=9).map(|d| format!("numpad{d}")));
    v
}

const WIN_FAMILY: [&str; 6] = ["win", "lwin", "rwin", "super", "meta", "cmd"];

#[test]
fn every_key_name_is_accepted_by_keyboard_press() {
    let mut s = Server::start();
    s.start_session(json!({}));
    // Focus the list so keys do little harm (no text field, no button).
    s.click_node("list", "Items");
    for name in spec_key_names() {
        let r = s.ok("keyboard.press", json!({"key": name}));
        assert_eq!(r["key"], json!(name), "canonical name echoed");
        // Case-insensitive.
        let upper = name.to_uppercase();
        if upper != name {
            let r = s.ok("keyboard.press", json!({"key": upper}));
            assert_eq!(r["key"], json!(name), "{upper} is {name}");
        }
    }
    // The win family is high risk alone: it asks first, then runs once approved.
    for name in WIN_FAMILY {
        let r = s.ok("keyboard.press", json!({"key": name}));
        assert_eq!(r["status"], "awaiting_confirmation", "{name}: {r}");
        let id = r["request_id"].as_str().unwrap().to_string();
        s.confirm(&id, true);
        let (_, fin) =
            s.wait_event_matching("action.finished", 0, |p| p["request_id"] == json!(id));
        assert_eq!(fin["payload"]["envelope"]["result"]["key"], json!(name));
    }
    // Nothing stays held: keyboard state is clean (plain typing into the Name field).
    s.click_node("edit", "Name");
    s.ok("keyboard.combo", json!({"keys": "ctrl+a"}));
    s.ok("keyboard.press", json!({"key": "backspace"}));
    s.ok("keyboard.type", json!({"text": "ok"}));
    assert_eq!(value_of(&mut s, "edit", "Name"), "ok");
    // Unknown names are refused.
    for bad in ["f25", "f0", "ctrlx", "é", "numpad_x", "", "a b", "hyper"] {
        let err = s.fails("keyboard.press", json!({"key": bad}), "invalid_arguments");
        assert_eq!(issue_paths(&err), vec!["key"], "{bad}");
    }
}

#[test]
fn combos_refuse_duplicates_and_escalate_risk() {
    let mut s = Server::start();
    s.start_session(json!({}));
    for (keys, path) in [
        (json!(["ctrl", "ctrl", "a"]), "keys[1]"),
        (json!("ctrl+CTRL"), "keys[1]"),
        (json!("shift+a+A"), "keys[2]"),
        (json!(["Escape", "esc"]), "keys[1]"),
        (json!(["ctrl", "nope"]), "keys[1]"),
        (json!([]), "keys"),
        (json!(["ctrl", 5]), "keys[1]"),
    ] {
        let err = s.fails("keyboard.combo", json!({"keys": keys}), "invalid_arguments");
        assert_eq!(issue_paths(&err), vec![path], "{keys}");
    }
    // Sided variants are different keys.
    let r = s.ok("keyboard.combo", json!({"keys": ["lctrl", "ctrl", "c"]}));
    assert_eq!(r["keys"], json!(["lctrl", "ctrl", "c"]));
    // ctrl with alt, or any win key: high risk.
    for keys in [json!("ctrl+alt+t"), json!(["super", "e"])] {
        let r = s.ok("keyboard.combo", json!({"keys": keys}));
        assert_eq!(r["status"], "awaiting_confirmation", "{keys}");
        assert_eq!(r["risk"], "high");
        s.confirm(r["request_id"].as_str().unwrap(), false);
    }
}

#[test]
fn wait_pause_is_truncated_to_max_wait() {
    let mut s = Server::start();
    s.start_session(json!({"runtime": {"max_wait_ms": 50}}));
    let t = Instant::now();
    let r = s.ok("wait.pause", json!({"ms": 600000}));
    assert_eq!(r, json!({"waited_ms": 50}));
    assert!(t.elapsed() < Duration::from_secs(30));
    let r = s.ok("wait.pause", json!({"ms": 20}));
    assert_eq!(r, json!({"waited_ms": 20}));
    let t = Instant::now();
    s.ok("wait.pause", json!({"ms": 40}));
    assert!(t.elapsed() >= Duration::from_millis(40), "it really waits");
    s.fails("wait.pause", json!({"ms": 600001}), "invalid_arguments");
    s.fails("wait.pause", json!({"ms": -1}), "invalid_arguments");
    s.fails("wait.pause", json!({}), "invalid_arguments");
}
