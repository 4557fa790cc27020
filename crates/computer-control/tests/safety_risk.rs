//! Risk (PROTOCOL §4, §5.3.1): base risks, combo escalation with aliases, typing into
//! a password field, confirm rules, and the confirmation threshold.

use crate::common;
use crate::safety_support;

use common::Server;
use safety_support::*;
use serde_json::json;

#[test]
fn base_risks_are_those_of_the_tool_table() {
    let mut s = Server::start();
    let list = s.call("tools.list", json!(null));
    let tools = list["result"]["tools"].as_array().unwrap().clone();
    let risk = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no {name}"))["risk"]
            .clone()
    };
    for (tool, expected) in [
        ("screen.capture", "benign"),
        ("pointer.move", "moderate"),
        ("pointer.position", "benign"),
        ("pointer.click", "moderate"),
        ("pointer.drag", "moderate"),
        ("pointer.scroll", "moderate"),
        ("keyboard.press", "moderate"),
        ("keyboard.combo", "moderate"),
        ("keyboard.type", "moderate"),
        ("wait.pause", "benign"),
        ("a11y.snapshot", "benign"),
        ("a11y.activate", "moderate"),
        ("a11y.input", "moderate"),
        ("window.list", "benign"),
        ("window.focus", "moderate"),
        ("clipboard.read", "moderate"),
        ("clipboard.write", "moderate"),
        ("app.launch", "high"),
    ] {
        assert_eq!(risk(tool), expected, "{tool}");
    }
    // Below the default threshold (high), none of them asks.
    s.start_session(json!({}));
    s.ok("pointer.click", json!({"x": DESKTOP.0, "y": DESKTOP.1}));
    s.ok("keyboard.press", json!({"key": "a"}));
}

#[test]
fn combos_escalate_to_high_with_every_alias() {
    let mut s = session(json!({}));
    for keys in [
        json!(["win", "r"]),
        json!(["lwin", "d"]),
        json!(["rwin", "e"]),
        json!(["super", "e"]),
        json!(["meta", "x"]),
        json!(["cmd", "q"]),
        json!("ctrl+alt+t"),
        json!(["lctrl", "ralt", "delete"]),
        json!(["rctrl", "lalt", "f1"]),
    ] {
        let (id, r) = parked(&mut s, "keyboard.combo", json!({ "keys": keys }));
        assert_eq!(r["risk"], "high", "{keys}: {r}");
        assert!(r["reason"].as_str().unwrap().contains("high"), "{r}");
        assert_eq!(confirm(&mut s, &id, false)["result"]["status"], "denied");
    }
    for keys in [
        json!(["ctrl", "c"]),
        json!(["alt", "tab"]),
        json!(["ctrl", "shift", "esc"]),
        json!(["shift", "alt", "a"]),
    ] {
        s.ok("keyboard.combo", json!({ "keys": keys }));
    }
    // A lone shell key is as risky as a shell combo.
    let (id, r) = parked(&mut s, "keyboard.press", json!({"key": "lwin"}));
    assert_eq!(r["risk"], "high");
    confirm(&mut s, &id, false);
    // So are shell keys held during a pointer action; shift or ctrl alone are not.
    for (tool, args) in [
        (
            "pointer.click",
            json!({"x": 5, "y": 5, "modifiers": ["super"]}),
        ),
        (
            "pointer.scroll",
            json!({"amount": 1, "modifiers": "ctrl+alt"}),
        ),
        (
            "pointer.drag",
            json!({"from": {"x": 5, "y": 5}, "to": {"x": 9, "y": 9}, "modifiers": ["win"]}),
        ),
    ] {
        let (id, r) = parked(&mut s, tool, args.clone());
        assert_eq!(r["risk"], "high", "{tool} {args}: {r}");
        confirm(&mut s, &id, false);
    }
    s.ok(
        "pointer.click",
        json!({"x": 5, "y": 5, "modifiers": ["shift"]}),
    );
    s.ok("pointer.scroll", json!({"amount": -1, "modifiers": "ctrl"}));
    assert_nothing_held(&mut s);
}

#[test]
fn typing_into_the_password_field_is_high() {
    let mut s = session(json!({}));
    // Focus on "Name": moderate, runs.
    s.ok("keyboard.type", json!({"text": "alice"}));
    // Tab from Name to Password: high.
    s.ok("keyboard.press", json!({"key": "tab"}));
    let (id, r) = parked(&mut s, "keyboard.type", json!({"text": "pw"}));
    assert_eq!(r["risk"], "high", "{r}");
    confirm(&mut s, &id, false);
    // Back to Name by clicking it: moderate again.
    s.ok("pointer.click", json!({"x": NAME.0, "y": NAME.1}));
    s.ok("keyboard.type", json!({"text": "!"}));
    assert_eq!(name_value(&mut s), "alice!");
    // Clicking the password field: high again.
    s.ok("pointer.click", json!({"x": PASSWORD.0, "y": PASSWORD.1}));
    let (id, r) = parked(
        &mut s,
        "keyboard.type",
        json!({"text": "pw", "submit": true}),
    );
    assert_eq!(r["risk"], "high");
    confirm(&mut s, &id, false);
    // a11y.input into the password node is high too; into Name it is not.
    let (snap, pw) = node(&mut s, "edit", "Password");
    let (id, r) = parked(
        &mut s,
        "a11y.input",
        json!({"snapshot_id": snap, "node_id": pw, "text": "pw"}),
    );
    assert_eq!(r["risk"], "high");
    confirm(&mut s, &id, false);
    let (snap, name) = node(&mut s, "edit", "Name");
    s.ok(
        "a11y.input",
        json!({"snapshot_id": snap, "node_id": name, "text": "bob"}),
    );
    assert_eq!(name_value(&mut s), "bob");
}

#[test]
fn a_confirm_rule_raises_any_action_to_confirmation() {
    let mut s = session(json!({"safety": {"rules": [
        {"match": {"tool": "screen.capture"}, "effect": "confirm"},
        {"match": {"tool": "wait.pause"}, "effect": "confirm"},
    ]}}));
    let (id, r) = parked(&mut s, "screen.capture", json!({"scale": 0.1}));
    assert_eq!(r["risk"], "benign", "the risk stays what it is: {r}");
    assert!(r["reason"].as_str().unwrap().contains("rule 0"), "{r}");
    confirm(&mut s, &id, false);
    let (id, _) = parked(&mut s, "wait.pause", json!({"ms": 0}));
    confirm(&mut s, &id, false);
    s.ok("window.list", json!({}));
}

#[test]
fn the_threshold_is_configurable() {
    let mut s = session(json!({"safety": {"confirm_threshold": "moderate"}}));
    let (id, r) = parked(&mut s, "pointer.move", json!({"x": 3, "y": 3}));
    assert_eq!(r["risk"], "moderate");
    assert!(
        r["reason"].as_str().unwrap().contains("threshold moderate"),
        "{r}"
    );
    confirm(&mut s, &id, false);
    s.ok("window.list", json!({}));
    configure(&mut s, json!({"safety": {"confirm_threshold": "benign"}}));
    let (id, _) = parked(&mut s, "window.list", json!({}));
    confirm(&mut s, &id, false);
    configure(&mut s, json!({"safety": {"confirm_threshold": "high"}}));
    s.ok("pointer.move", json!({"x": 3, "y": 3}));
}

#[test]
fn a_batch_takes_the_risk_of_its_riskiest_item() {
    let mut s = session(json!({}));
    let (id, r) = parked(
        &mut s,
        "batch.execute",
        json!({"items": [
            {"tool": "pointer.move", "arguments": {"x": 1, "y": 1}},
            {"tool": "keyboard.combo", "arguments": {"keys": ["ctrl", "alt", "t"]}}
        ]}),
    );
    assert_eq!(r["risk"], "high");
    confirm(&mut s, &id, false);
    let r = s.ok(
        "batch.execute",
        json!({"items": [{"tool": "pointer.move", "arguments": {"x": 1, "y": 1}}], "gap_ms": 0}),
    );
    assert_eq!(r["status"], "completed");
}
