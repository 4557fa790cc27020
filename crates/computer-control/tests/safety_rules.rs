//! PROTOCOL §5.2 end to end: tool globs, argument matchers, the window matcher,
//! effects and their precedence, allowlist mode, runtime replacement of the rules.

use crate::safety_support;

use safety_support::*;
use serde_json::{Value, json};

fn rules(r: Value) -> Value {
    json!({"safety": {"rules": r}})
}

fn rule(tool: &str, effect: &str) -> Value {
    json!({"match": {"tool": tool}, "effect": effect})
}

fn arg_rule(tool: &str, name: &str, matcher: &str, value: Value, effect: &str) -> Value {
    json!({"match": {"tool": tool, "argument": {"name": name, "matcher": matcher, "value": value}}, "effect": effect})
}

#[test]
fn tool_globs_are_case_sensitive_and_denials_name_the_rule() {
    let mut s = session(rules(json!([
        rule("keyboard.*", "deny"),
        rule("Pointer.*", "deny"),
        rule("window.lis?", "deny"),
    ])));
    let env = refused(
        &mut s,
        "keyboard.press",
        json!({"key": "a"}),
        "policy_denied",
    );
    assert_eq!(env["error"]["data"]["rule"]["index"], 0, "{env}");
    assert_eq!(
        env["error"]["data"]["rule"]["rule"],
        rule("keyboard.*", "deny"),
        "data.rule carries the rule as configured: {env}"
    );
    refused(
        &mut s,
        "keyboard.type",
        json!({"text": "x"}),
        "policy_denied",
    );
    // `Pointer.*` does not match `pointer.move`: the glob is case-sensitive.
    s.ok("pointer.move", json!({"x": 10, "y": 10}));
    let env = refused(&mut s, "window.list", json!({}), "policy_denied");
    assert_eq!(env["error"]["data"]["rule"]["index"], 2);
    s.ok("screen.capture", json!({"scale": 0.1}));
}

#[test]
fn argument_matchers_equals_glob_contains_regex_dotted_paths() {
    let mut s = session(rules(json!([
        arg_rule("pointer.drag", "from.x", "equals", json!(11), "deny"),
        arg_rule("keyboard.type", "text", "glob", json!("*.exe"), "deny"),
        arg_rule("keyboard.type", "text", "contains", json!("RM -RF"), "deny"),
        arg_rule("keyboard.type", "text", "regex", json!("^\\d{4}$"), "deny"),
        arg_rule("keyboard.press", "key", "equals", json!("f5"), "deny"),
    ])));
    // equals on a dotted path, numerically (11 == 11.0); other values pass.
    let env = refused(
        &mut s,
        "pointer.drag",
        json!({"from": {"x": 11.0, "y": 900}, "to": {"x": 40, "y": 900}}),
        "policy_denied",
    );
    assert_eq!(env["error"]["data"]["rule"]["index"], 0);
    s.ok(
        "pointer.drag",
        json!({"from": {"x": 12, "y": 11}, "to": {"x": 40, "y": 11}, "steps": 2}),
    );
    // glob, contains (case-insensitive substring), regex on the text.
    let env = refused(
        &mut s,
        "keyboard.type",
        json!({"text": "setup.exe"}),
        "policy_denied",
    );
    assert_eq!(env["error"]["data"]["rule"]["index"], 1);
    let env = refused(
        &mut s,
        "keyboard.type",
        json!({"text": "sudo rm -rf /"}),
        "policy_denied",
    );
    assert_eq!(env["error"]["data"]["rule"]["index"], 2);
    let env = refused(
        &mut s,
        "keyboard.type",
        json!({"text": "1234"}),
        "policy_denied",
    );
    assert_eq!(env["error"]["data"]["rule"]["index"], 3);
    s.ok("keyboard.type", json!({"text": "12345 setup.txt"}));
    refused(
        &mut s,
        "keyboard.press",
        json!({"key": "f5"}),
        "policy_denied",
    );
    s.ok("keyboard.press", json!({"key": "f6"}));
}

#[test]
fn contains_is_modifier_aware_on_key_lists() {
    let mut s = session(rules(json!([
        arg_rule("keyboard.combo", "keys", "contains", json!("win"), "deny"),
        arg_rule("keyboard.combo", "keys", "contains", json!("CTRL"), "deny"),
        arg_rule("keyboard.combo", "keys", "contains", json!("alt"), "deny"),
    ])));
    for (keys, index) in [
        (json!(["lwin", "r"]), 0),
        (json!(["rwin", "e"]), 0),
        (json!(["super", "e"]), 0),
        (json!(["meta", "x"]), 0),
        (json!("shift+win+s"), 0),
        (json!(["rctrl", "c"]), 1),
        (json!(["lctrl", "v"]), 1),
        (json!("ctrl+z"), 1),
        (json!(["lalt", "tab"]), 2),
        (json!(["ralt", "f4"]), 2),
    ] {
        let env = refused(
            &mut s,
            "keyboard.combo",
            json!({ "keys": keys }),
            "policy_denied",
        );
        assert_eq!(
            env["error"]["data"]["rule"]["index"], index,
            "{keys}: {env}"
        );
    }
    // Not a modifier of those families: runs.
    s.ok("keyboard.combo", json!({"keys": ["shift", "a"]}));
    assert_nothing_held(&mut s);
}

#[test]
fn in_region_matches_where_pointer_actions_land() {
    let region = json!({"x": 800, "y": 100, "width": 500, "height": 600});
    let mut s = session(rules(json!([arg_rule(
        "pointer.*",
        "x",
        "in_region",
        region,
        "deny"
    )])));
    refused(
        &mut s,
        "pointer.click",
        json!({"x": ITEMS.0, "y": ITEMS.1}),
        "policy_denied",
    );
    refused(
        &mut s,
        "pointer.move",
        json!({"x": 800, "y": 100}),
        "policy_denied",
    );
    s.ok("pointer.move", json!({"x": 799, "y": 100}));
    // The far end of a drag counts too.
    refused(
        &mut s,
        "pointer.drag",
        json!({"from": {"x": 1500, "y": 900}, "to": {"x": 900, "y": 300}}),
        "policy_denied",
    );
    // A pointer action without a point lands where the pointer is.
    s.ok("pointer.move", json!({"x": 1000, "y": 50}));
    s.ok("pointer.scroll", json!({"amount": 1}));
    configure(&mut s, json!({"safety": {"rules": []}}));
    s.ok("pointer.move", json!({"x": ITEMS.0, "y": ITEMS.1}));
    configure(
        &mut s,
        rules(json!([arg_rule(
            "pointer.*",
            "x",
            "in_region",
            json!({"x": 800, "y": 100, "width": 500, "height": 600}),
            "deny"
        )])),
    );
    refused(
        &mut s,
        "pointer.scroll",
        json!({"amount": -1}),
        "policy_denied",
    );
    refused(&mut s, "pointer.click", json!({}), "policy_denied");
}

#[test]
fn window_matcher_uses_the_window_under_the_pointer_or_focused() {
    let mut s = session(rules(json!([
        {"match": {"tool": "pointer.*", "window": {"app": "cc-list"}}, "effect": "deny"},
        {"match": {"tool": "keyboard.*", "window": {"app": "cc-form", "title": "Sign*"}}, "effect": "deny"},
    ])));
    // Pointer tools: the window under the point.
    let env = refused(
        &mut s,
        "pointer.click",
        json!({"x": ITEMS.0, "y": ITEMS.1}),
        "policy_denied",
    );
    assert_eq!(env["error"]["data"]["rule"]["index"], 0);
    s.ok("pointer.click", json!({"x": DESKTOP.0, "y": DESKTOP.1}));
    s.ok("pointer.move", json!({"x": NAME.0, "y": NAME.1}));
    // Keyboard tools: the focused window ("Sign in" is focused at start).
    let env = refused(
        &mut s,
        "keyboard.press",
        json!({"key": "a"}),
        "policy_denied",
    );
    assert_eq!(env["error"]["data"]["rule"]["index"], 1);
    let windows = s.ok("window.list", json!({}));
    let items = windows["windows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["app_id"] == "cc-list")
        .unwrap()["id"]
        .clone();
    s.ok("window.focus", json!({ "id": items }));
    // Now "Items" has the focus: keys are allowed, the pointer over it still is not.
    s.ok("keyboard.press", json!({"key": "down"}));
    s.ok("keyboard.type", json!({"text": "x"}));
    refused(
        &mut s,
        "pointer.scroll",
        json!({"x": ITEMS.0, "y": ITEMS.1, "amount": 1}),
        "policy_denied",
    );
}

/// Windows are read only for the tools a window rule names; a rule naming every tool
/// judges even a pause by the window it lands in (the focused one, "Sign in" at start).
#[test]
fn a_window_rule_for_every_tool_judges_a_pause_too() {
    let mut s = session(rules(json!([
        {"match": {"tool": "*", "window": {"title": "Sign*"}}, "effect": "deny"},
    ])));
    refused(&mut s, "wait.pause", json!({"ms": 0}), "policy_denied");
    let mut s = session(rules(json!([
        {"match": {"tool": "pointer.*", "window": {"title": "Sign*"}}, "effect": "deny"},
    ])));
    s.ok("wait.pause", json!({"ms": 0}));
}

#[test]
fn window_focus_and_accessibility_tools_land_in_their_target_window() {
    let mut s = session(rules(json!([
        {"match": {"tool": "*", "window": {"title": "items"}}, "effect": "deny"},
    ])));
    let windows = s.ok("window.list", json!({}));
    let id_of = |app: &str| {
        windows["windows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["app_id"] == app)
            .unwrap()["id"]
            .clone()
    };
    // The title glob is case-insensitive; window.focus lands in the window it focuses.
    refused(
        &mut s,
        "window.focus",
        json!({"id": id_of("cc-list")}),
        "policy_denied",
    );
    s.ok("window.focus", json!({"id": id_of("cc-display")}));
    s.ok("window.focus", json!({"id": id_of("cc-form")}));
    // a11y.activate lands in the element's window, not the focused one.
    let (snap, item) = node(&mut s, "listitem", "Item 2");
    refused(
        &mut s,
        "a11y.activate",
        json!({"snapshot_id": snap, "node_id": item}),
        "policy_denied",
    );
    let (snap, remember) = node(&mut s, "checkbox", "Remember me");
    s.ok(
        "a11y.activate",
        json!({"snapshot_id": snap, "node_id": remember}),
    );
}

#[test]
fn deny_wins_then_confirm_then_allow_then_default() {
    let mut s = session(rules(json!([
        rule("keyboard.press", "allow"),
        rule("keyboard.press", "confirm"),
        rule("keyboard.press", "deny"),
        rule("pointer.move", "allow"),
        rule("pointer.move", "confirm"),
        rule("window.list", "allow"),
        rule("keyboard.combo", "allow"),
    ])));
    let env = refused(
        &mut s,
        "keyboard.press",
        json!({"key": "a"}),
        "policy_denied",
    );
    assert_eq!(env["error"]["data"]["rule"]["index"], 2, "deny wins: {env}");
    // confirm beats allow, whatever the risk.
    let (id, r) = parked(&mut s, "pointer.move", json!({"x": 5, "y": 5}));
    assert_eq!(r["risk"], "moderate");
    assert!(r["reason"].as_str().unwrap().contains("rule 4"), "{r}");
    assert_eq!(confirm(&mut s, &id, false)["result"]["status"], "denied");
    s.ok("window.list", json!({}));
    // An allow never exempts a high-risk action from confirmation.
    let (id, r) = parked(&mut s, "keyboard.combo", json!({"keys": ["win", "r"]}));
    assert_eq!(r["risk"], "high");
    confirm(&mut s, &id, false);
    // default_rule allow: an unmatched tool runs.
    s.ok("pointer.click", json!({"x": DESKTOP.0, "y": DESKTOP.1}));
}

#[test]
fn allowlist_mode_denies_what_no_rule_allows() {
    let mut s = session(json!({"safety": {"default_rule": "deny", "rules": [
        rule("pointer.move", "allow"),
        rule("screen.*", "confirm"),
    ]}}));
    s.ok("pointer.move", json!({"x": 5, "y": 5}));
    let env = refused(&mut s, "window.list", json!({}), "policy_denied");
    assert_eq!(env["error"]["data"]["rule"], "default_rule", "{env}");
    refused(&mut s, "wait.pause", json!({"ms": 0}), "policy_denied");
    // A confirm rule counts as listed: it asks rather than refuses.
    let (id, _) = parked(&mut s, "screen.capture", json!({"scale": 0.1}));
    confirm(&mut s, &id, false);
    // A batch is allowed only if every item is.
    let env = refused(
        &mut s,
        "batch.execute",
        json!({"items": [
            {"tool": "pointer.move", "arguments": {"x": 1, "y": 1}},
            {"tool": "wait.pause", "arguments": {"ms": 0}}
        ]}),
        "policy_denied",
    );
    assert_eq!(env["error"]["data"]["rule"], "default_rule", "{env}");
    let r = s.ok(
        "batch.execute",
        json!({"items": [{"tool": "pointer.move", "arguments": {"x": 1, "y": 1}}], "gap_ms": 0}),
    );
    assert_eq!(r["status"], "completed");
}

#[test]
fn a_denied_batch_item_refuses_the_whole_batch_before_anything_runs() {
    let mut s = session(rules(json!([arg_rule(
        "keyboard.type",
        "text",
        "contains",
        json!("forbidden"),
        "deny"
    )])));
    let env = refused(
        &mut s,
        "batch.execute",
        json!({"items": [
            {"tool": "keyboard.type", "arguments": {"text": "fine"}},
            {"tool": "keyboard.type", "arguments": {"text": "forbidden"}}
        ], "gap_ms": 0}),
        "policy_denied",
    );
    assert_eq!(env["error"]["data"]["item"], 1, "{env}");
    assert_eq!(env["error"]["data"]["rule"]["index"], 0, "{env}");
    assert_eq!(name_value(&mut s), "", "nothing ran");
}

#[test]
fn rules_are_replaced_at_runtime() {
    let mut s = session(rules(json!([rule("pointer.move", "deny")])));
    refused(
        &mut s,
        "pointer.move",
        json!({"x": 1, "y": 1}),
        "policy_denied",
    );
    configure(
        &mut s,
        json!({"safety": {"rules": [rule("wait.*", "deny")]}}),
    );
    let configured = s.wait_event("session.configured");
    assert_eq!(
        configured["payload"]["patch"]["safety"]["rules"][0]["match"]["tool"], "wait.*",
        "{configured}"
    );
    // The old rule is gone, the new one applies at once.
    s.ok("pointer.move", json!({"x": 1, "y": 1}));
    refused(&mut s, "wait.pause", json!({"ms": 0}), "policy_denied");
    configure(&mut s, json!({"safety": {"rules": []}}));
    s.ok("wait.pause", json!({"ms": 0}));
}
