//! Naming elements as a model would (PROTOCOL §4.2): by selector (role, name, text,
//! states), by a reference that outlives snapshots, or by node id; ambiguity, absence
//! and staleness are refused with their own codes, never retargeted; a password field
//! named any way is still high risk, and its text leaks nowhere.

use crate::common;

use common::{Server, find_node};
use serde_json::{Value, json};

fn checked(s: &mut Server, name: &str) -> bool {
    let n = s.node("checkbox", name);
    n["states"]
        .as_array()
        .unwrap()
        .iter()
        .any(|x| x == "checked")
}

#[test]
fn a_selector_acts_and_its_ref_names_the_element_across_snapshots() {
    let mut s = Server::start();
    s.start_session(json!({}));
    assert!(!checked(&mut s, "Remember me"));
    let r = s.ok(
        "a11y.activate",
        json!({"selector": {"role": "checkbox", "name": "remember ME"}}),
    );
    assert_eq!(r["method_used"], "toggle");
    assert_eq!(r["role"], "checkbox");
    assert_eq!(r["name"], "Remember me");
    assert!(r.get("node_id").is_none(), "no node named it: {r}");
    let eref = r["ref"].as_str().unwrap().to_string();
    assert!(checked(&mut s, "Remember me"));

    // Two snapshots later the same ref still names it, and the snapshot shows it.
    s.snapshot(json!({"level": "skeleton"}));
    let snap = s.snapshot(json!({"level": "full"}));
    let node = find_node(&snap["tree"], "checkbox", "Remember me").unwrap();
    assert_eq!(node["ref"], eref.as_str());
    let again = s.ok("a11y.activate", json!({"ref": eref}));
    assert_eq!(again["ref"], eref.as_str());
    assert!(!checked(&mut s, "Remember me"), "toggled back");

    // Refs are unique per element, and the desktop root has none.
    let mut refs: Vec<&str> = common::nodes(&snap["tree"])
        .iter()
        .filter_map(|(_, n)| n["ref"].as_str())
        .collect();
    let n = refs.len();
    assert_eq!(n + 1, snap["node_count"].as_u64().unwrap() as usize);
    refs.sort_unstable();
    refs.dedup();
    assert_eq!(refs.len(), n, "refs are unique");

    // a11y.input by selector on text, then by ref.
    let typed = s.ok(
        "a11y.input",
        json!({"selector": {"role": "edit", "name": "Name", "window": 4194305}, "text": "Ada"}),
    );
    assert_eq!(typed["method_used"], "value");
    assert_eq!(s.node("edit", "Name")["value"], "Ada");
    let by_text = s.ok(
        "a11y.activate",
        json!({"selector": {"role": "edit", "text": "ada"}, "method": "pointer"}),
    );
    assert_eq!(by_text["ref"], typed["ref"]);
    s.ok("a11y.input", json!({"ref": typed["ref"], "text": "Grace"}));
    assert_eq!(s.node("edit", "Name")["value"], "Grace");
}

#[test]
fn ambiguous_absent_and_stale_are_refused_never_guessed() {
    let mut s = Server::start();
    s.start_session(json!({}));
    // Three visible buttons: refused, each candidate listed with a ref that works.
    let e = s.fails(
        "a11y.activate",
        json!({"selector": {"role": "button"}}),
        "ambiguous_element",
    );
    let data = &e["data"];
    assert_eq!(data["count"], 3, "{e}");
    let names: Vec<&str> = data["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Submit", "Clear", "Add left display"]);
    let clear = data["candidates"][1].clone();
    assert!(
        clear["rect"].is_array() && clear["window_id"].is_u64(),
        "{clear}"
    );
    let r = s.ok("a11y.activate", json!({"ref": clear["ref"]}));
    assert_eq!(r["name"], "Clear");
    // index picks one on purpose; past the matches it is refused.
    let r = s.ok(
        "a11y.activate",
        json!({"selector": {"role": "button", "index": 0}}),
    );
    assert_eq!(r["name"], "Submit");
    s.fails(
        "a11y.activate",
        json!({"selector": {"role": "button", "index": 3}}),
        "ambiguous_element",
    );
    // Hidden rows do not match unless asked for.
    s.fails(
        "a11y.activate",
        json!({"selector": {"role": "listitem", "name": "Item 20"}}),
        "element_not_found",
    );
    let hidden = s.ok(
        "a11y.activate",
        json!({"selector": {"role": "listitem", "name": "Item 20", "include_hidden": true}, "method": "pattern"}),
    );
    assert_eq!(hidden["method_used"], "select", "{hidden}");
    let e = s.fails(
        "a11y.input",
        json!({"selector": {"role": "dialog"}, "text": "x"}),
        "element_not_found",
    );
    assert_eq!(e["data"]["selector"]["role"], "dialog");
    // A ref this session never saw, and one from an earlier session: stale.
    s.fails(
        "a11y.activate",
        json!({"ref": "e000000000000"}),
        "stale_element",
    );
    let old = clear["ref"].clone();
    s.method_ok("session.stop", json!({}));
    s.start_session(json!({}));
    let e = s.fails("a11y.activate", json!({"ref": old}), "stale_element");
    assert!(e["message"].as_str().unwrap().contains("snapshot"), "{e}");
}

#[test]
fn naming_the_element_is_validated_before_anything_runs() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let issues = |e: &Value| common::issue_paths(e);
    let e = s.fails("a11y.activate", json!({}), "invalid_arguments");
    assert_eq!(issues(&e), ["ref"]);
    let e = s.fails(
        "a11y.activate",
        json!({"ref": "e1", "selector": {"role": "button"}}),
        "invalid_arguments",
    );
    assert_eq!(issues(&e), ["selector"]);
    let e = s.fails("a11y.activate", json!({"node_id": 3}), "invalid_arguments");
    assert_eq!(issues(&e), ["snapshot_id"]);
    let e = s.fails(
        "a11y.activate",
        json!({"selector": {"window": 4194305}}),
        "invalid_arguments",
    );
    assert_eq!(issues(&e), ["selector"], "a selector must narrow something");
    let e = s.fails(
        "a11y.activate",
        json!({"selector": {"role": "knob", "states": ["shiny"]}}),
        "invalid_arguments",
    );
    assert_eq!(issues(&e), ["selector.role", "selector.states[0]"]);
    // The old way still works, and is still bound to the latest snapshot.
    let snap = s.snapshot(json!({}));
    let cb = find_node(&snap["tree"], "checkbox", "Remember me").unwrap()["id"].clone();
    s.snapshot(json!({}));
    s.fails(
        "a11y.activate",
        json!({"snapshot_id": snap["snapshot_id"], "node_id": cb}),
        "stale_snapshot",
    );
}

/// The gate resolves a selector or a ref before judging: typing into the password
/// field named either way asks a person first, and the text appears in no event.
#[test]
fn a_password_field_named_by_selector_or_ref_is_high_risk() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let secret = "hunter2-selector";
    let pending = s.ok(
        "a11y.input",
        json!({"selector": {"role": "edit", "states": ["password"]}, "text": secret}),
    );
    assert_eq!(pending["status"], "awaiting_confirmation", "{pending}");
    assert_eq!(pending["risk"], "high");
    let id = pending["request_id"].as_str().unwrap().to_string();
    s.confirm(&id, true);
    let (_, fin) = s.wait_event_matching("action.finished", 0, |p| p["request_id"] == id.as_str());
    assert_eq!(fin["payload"]["ok"], true, "{fin}");
    let eref = fin["payload"]["envelope"]["result"]["ref"].clone();
    assert!(eref.is_string(), "{fin}");
    let again = s.ok("a11y.input", json!({"ref": eref, "text": secret}));
    assert_eq!(again["status"], "awaiting_confirmation", "{again}");
    s.confirm(again["request_id"].as_str().unwrap(), false);
    s.quiet_for(std::time::Duration::from_millis(100));
    let events = serde_json::to_string(&s.events).unwrap();
    assert!(!events.contains(secret));
    let snap = s.snapshot(json!({"level": "full"}));
    assert!(!snap.to_string().contains(secret));
}

/// `pointer.click` aimed at an element clicks its centre; the gate judges the point it
/// resolves to, so a rule about the element's window applies as it would to x and y.
#[test]
fn a_click_aimed_at_an_element_is_judged_where_it_lands() {
    let mut s = Server::start();
    s.start_session(json!({"safety": {"rules": [
        {"match": {"tool": "pointer.*", "window": {"app": "cc-list"}}, "effect": "deny"},
    ]}}));
    let r = s.ok(
        "pointer.click",
        json!({"element": {"selector": {"role": "checkbox", "name": "Remember me"}}}),
    );
    assert_eq!(r["element"]["name"], "Remember me", "{r}");
    let cb = s.node("checkbox", "Remember me");
    assert!(
        cb["states"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x == "checked")
    );
    assert_eq!(r["element"]["ref"], cb["ref"]);
    let (x, y) = common::center(&cb);
    assert_eq!(r["position"], json!({"x": x, "y": y}));
    // By ref, twice.
    s.ok("pointer.click", json!({"element": {"ref": cb["ref"]}}));
    s.ok(
        "pointer.click",
        json!({"element": {"ref": cb["ref"]}, "times": 1}),
    );
    assert!(
        s.node("checkbox", "Remember me")["states"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x == "checked")
    );
    // A list row lies in the denied window: refused, nothing clicked.
    let e = s.fails(
        "pointer.click",
        json!({"element": {"selector": {"role": "listitem", "name": "Item 3"}}}),
        "policy_denied",
    );
    assert_eq!(e["data"]["rule"]["index"], 0, "{e}");
    // Refusals of the element and of its arguments.
    s.fails(
        "pointer.click",
        json!({"element": {"selector": {"role": "dialog"}}}),
        "element_not_found",
    );
    let e = s.fails(
        "pointer.click",
        json!({"x": 1, "y": 1, "element": {"ref": cb["ref"]}}),
        "invalid_arguments",
    );
    assert_eq!(common::issue_paths(&e), ["element"]);
    let e = s.fails("pointer.click", json!({"element": {}}), "invalid_arguments");
    assert_eq!(common::issue_paths(&e), ["element.ref"]);
}

fn position(s: &mut Server) -> Value {
    s.ok("pointer.position", json!({}))["position"].clone()
}

fn window_rect(s: &mut Server, app: &str) -> Value {
    let list = s.ok("window.list", json!({}));
    list["windows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["app_id"] == app)
        .unwrap_or_else(|| panic!("no {app} window in {list}"))["rect"]
        .clone()
}

/// `pointer.move`, `pointer.scroll` and `pointer.drag` aim at elements as
/// `pointer.click` does: the element's centre, read back from the desktop.
#[test]
fn move_scroll_and_drag_aim_at_the_centre_of_an_element() {
    let mut s = Server::start();
    s.start_session(common::full_canvas());
    let cb = s.node("checkbox", "Remember me");
    let (cx, cy) = common::center(&cb);

    // Move, by selector in steps, then by ref: the pointer is at the centre.
    let r = s.ok(
        "pointer.move",
        json!({"element": {"selector": {"role": "checkbox", "name": "Remember me"}}, "steps": 5}),
    );
    assert_eq!(r["position"], json!({"x": cx, "y": cy}), "{r}");
    assert_eq!(
        r["element"],
        json!({"ref": cb["ref"], "role": "checkbox", "name": "Remember me"})
    );
    assert_eq!(position(&mut s), json!({"x": cx, "y": cy}));
    s.ok("pointer.move", json!({"x": 5, "y": 5}));
    let r = s.ok("pointer.move", json!({"element": {"ref": cb["ref"]}}));
    assert_eq!(position(&mut s), json!({"x": cx, "y": cy}), "{r}");
    assert!(!common::has_state(
        &s.node("checkbox", "Remember me"),
        "checked"
    ));

    // Scroll at the list by selector: the list scrolled, the pointer is over it.
    let list = s.node("list", "Items");
    let r = s.ok(
        "pointer.scroll",
        json!({"amount": -3, "element": {"selector": {"role": "list", "name": "Items"}}}),
    );
    assert_eq!(r["element"]["ref"], list["ref"], "{r}");
    assert_eq!(
        (r["axis"].clone(), r["amount"].clone()),
        (json!("vertical"), json!(-3))
    );
    assert_eq!(s.node("scrollbar", "Vertical")["value"], "3");
    let (lx, ly) = common::center(&list);
    assert_eq!(position(&mut s), json!({"x": lx, "y": ly}));

    // Drag from the checkbox to itself: pressed and released on it, so it toggles.
    let r = s.ok(
        "pointer.drag",
        json!({"from_element": {"ref": cb["ref"]}, "to_element": {"selector": {"role": "checkbox", "name": "Remember me"}}, "steps": 3}),
    );
    assert_eq!(r["from"], json!({"x": cx, "y": cy}), "{r}");
    assert_eq!(r["to"], json!({"x": cx, "y": cy}), "{r}");
    assert_eq!(r["from_element"]["ref"], cb["ref"]);
    assert_eq!(r["to_element"]["name"], "Remember me");
    assert!(common::has_state(
        &s.node("checkbox", "Remember me"),
        "checked"
    ));
    // From the checkbox to a point away from it: released elsewhere, no toggle.
    let r = s.ok(
        "pointer.drag",
        json!({"from_element": {"ref": cb["ref"]}, "to": {"x": 1500, "y": 950}}),
    );
    assert_eq!(r["to"], json!({"x": 1500, "y": 950}), "{r}");
    assert!(r.get("to_element").is_none(), "{r}");
    assert!(common::has_state(
        &s.node("checkbox", "Remember me"),
        "checked"
    ));
    assert_eq!(position(&mut s), json!({"x": 1500, "y": 950}));

    // From a point on the list window's title bar to an element: the window moved by
    // exactly the distance to the element's centre.
    let cb = s.node("checkbox", "Remember me");
    let (cx, cy) = common::center(&cb);
    let before = window_rect(&mut s, "cc-list");
    let (fx, fy) = (
        before["x"].as_i64().unwrap() + 100,
        before["y"].as_i64().unwrap() + 10,
    );
    let r = s.ok(
        "pointer.drag",
        json!({"from": {"x": fx, "y": fy}, "to_element": {"ref": cb["ref"]}}),
    );
    assert_eq!(r["to"], json!({"x": cx, "y": cy}), "{r}");
    let after = window_rect(&mut s, "cc-list");
    assert_eq!(
        (after["x"].as_i64().unwrap(), after["y"].as_i64().unwrap()),
        (
            before["x"].as_i64().unwrap() + cx - fx,
            before["y"].as_i64().unwrap() + cy - fy
        ),
        "{before} → {after}"
    );
}

/// Every refusal of an aimed `pointer.move`, `pointer.scroll` and `pointer.drag`:
/// the arguments, then a stale, absent or ambiguous element; none moves the pointer,
/// presses a button or scrolls.
#[test]
fn aimed_pointer_tools_refuse_bad_elements_and_do_nothing() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let cb = s.node("checkbox", "Remember me");
    let item = s.node("listitem", "Item 3");
    let paths = |s: &mut Server, tool: &str, args: Value| {
        let e = s.fails(tool, args, "invalid_arguments");
        common::issue_paths(&e)
    };
    let el = json!({"ref": cb["ref"]});
    for tool in ["pointer.move", "pointer.scroll"] {
        let mut a = json!({"x": 10, "y": 10, "element": el});
        if tool == "pointer.scroll" {
            a["amount"] = json!(1);
        }
        assert_eq!(paths(&mut s, tool, a.clone()), ["element"], "{tool}");
        a.as_object_mut().unwrap().remove("x");
        assert_eq!(paths(&mut s, tool, a.clone()), ["x", "element"], "{tool}");
        a.as_object_mut().unwrap().remove("y");
        a["window"] = json!(1);
        assert_eq!(paths(&mut s, tool, a.clone()), ["window"], "{tool}");
        a.as_object_mut().unwrap().remove("window");
        a["element"] = json!({});
        assert_eq!(paths(&mut s, tool, a.clone()), ["element.ref"], "{tool}");
        a["element"] = json!({"ref": cb["ref"], "selector": {"role": "button"}});
        assert_eq!(
            paths(&mut s, tool, a.clone()),
            ["element.selector"],
            "{tool}"
        );
        // The issue names the field that is missing, as for the element tools.
        a["element"] = json!({"node_id": 3});
        assert_eq!(
            paths(&mut s, tool, a.clone()),
            ["element.snapshot_id"],
            "{tool}"
        );
        a["element"] = json!({"selector": {"window": 4194305}});
        assert_eq!(paths(&mut s, tool, a), ["element.selector"], "{tool}");
    }
    // pointer.move must be aimed somewhere.
    assert_eq!(paths(&mut s, "pointer.move", json!({"steps": 2})), ["x"]);
    let to = json!({"x": 10, "y": 10});
    for (args, want) in [
        (
            json!({"from": to, "from_element": el, "to": to}),
            vec!["from_element"],
        ),
        (
            json!({"from": to, "to": to, "to_element": el}),
            vec!["to_element"],
        ),
        (json!({"to": to}), vec!["from"]),
        (json!({"from_element": el}), vec!["to"]),
        (
            json!({"from_element": el, "to_element": el, "window": 1}),
            vec!["window"],
        ),
        (
            json!({"from_element": {}, "to": to}),
            vec!["from_element.ref"],
        ),
        (
            json!({"from": to, "to_element": {"snapshot_id": "snap-1"}}),
            vec!["to_element.node_id"],
        ),
    ] {
        assert_eq!(paths(&mut s, "pointer.drag", args.clone()), want, "{args}");
    }

    // A ref made stale: its window is closed.
    let windows = s.ok("window.list", json!({}));
    let list_id = windows["windows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["app_id"] == "cc-list")
        .unwrap()["id"]
        .clone();
    s.ok("window.focus", json!({"id": list_id}));
    s.ok("keyboard.combo", json!({"keys": ["alt", "F4"]}));
    s.ok("pointer.move", json!({"x": 7, "y": 9}));
    let here = json!({"x": 7, "y": 9});
    let stale = json!({"ref": item["ref"]});
    let absent = json!({"selector": {"role": "dialog"}});
    let many = json!({"selector": {"role": "button"}});
    for (element, code) in [
        (&stale, "stale_element"),
        (&absent, "element_not_found"),
        (&many, "ambiguous_element"),
    ] {
        let e = s.fails("pointer.move", json!({"element": element}), code);
        if code == "stale_element" {
            assert_eq!(e["data"]["ref"], item["ref"], "{e}");
        }
        s.fails(
            "pointer.scroll",
            json!({"amount": 3, "element": element}),
            code,
        );
        // A bad far end is found before anything is pressed: the checkbox stays as
        // it was.
        s.fails(
            "pointer.drag",
            json!({"from_element": el, "to_element": element}),
            code,
        );
        s.fails(
            "pointer.drag",
            json!({"from_element": element, "to": {"x": 900, "y": 500}}),
            code,
        );
        assert_eq!(position(&mut s), here, "{code}: the pointer did not move");
    }
    assert!(!common::has_state(
        &s.node("checkbox", "Remember me"),
        "checked"
    ));
}

/// The gate judges the point an element resolves to, for every aimed pointer tool: a
/// rule denying a region refuses an element there named by selector as it refuses
/// its coordinates, and nothing moves.
#[test]
fn a_region_denied_by_a_rule_refuses_an_element_there_through_each_pointer_tool() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let item = s.node("listitem", "Item 3");
    let (ix, iy) = common::center(&item);
    let region = json!({"x": ix - 5, "y": iy - 5, "width": 10, "height": 10});
    let rule = json!({"match": {"tool": "pointer.*", "argument": {"name": "x", "matcher": "in_region", "value": region}}, "effect": "deny"});
    s.method_ok("session.configure", json!({"safety": {"rules": [rule]}}));
    s.ok("pointer.move", json!({"x": 7, "y": 9}));
    let here = json!({"x": 7, "y": 9});
    let sel = json!({"selector": {"role": "listitem", "name": "Item 3"}});
    for (tool, args) in [
        ("pointer.click", json!({"element": sel})),
        ("pointer.move", json!({"element": sel})),
        ("pointer.scroll", json!({"amount": -2, "element": sel})),
        ("pointer.drag", json!({"from": here, "to_element": sel})),
        (
            "pointer.drag",
            json!({"from_element": sel, "to": {"x": 1500, "y": 950}}),
        ),
        ("pointer.move", json!({"x": ix, "y": iy})),
    ] {
        let e = s.fails(tool, args.clone(), "policy_denied");
        assert_eq!(e["data"]["rule"]["index"], 0, "{tool} {args}: {e}");
        assert_eq!(position(&mut s), here, "{tool} {args} moved the pointer");
    }
    assert_eq!(s.node("scrollbar", "Vertical")["value"], "0");
    assert!(!common::has_state(
        &s.node("listitem", "Item 3"),
        "selected"
    ));
    // Just outside the region, the same tools run.
    let sel = json!({"selector": {"role": "listitem", "name": "Item 4"}});
    s.ok("pointer.move", json!({"element": sel}));
    s.ok("pointer.scroll", json!({"amount": -1, "element": sel}));
}
