//! Accessibility tools (PROTOCOL §4.2): snapshot levels and caps, vocabulary, canvas
//! rects, password handling, snapshot ids, activation, input and identity re-checks.

use crate::common;

use std::collections::HashSet;

use common::{Server, center, find_node, issue_paths, nodes, window_by_title};
use serde_json::{Value, json};

const ROLES: [&str; 34] = [
    "window",
    "dialog",
    "pane",
    "group",
    "button",
    "checkbox",
    "radiobutton",
    "edit",
    "combobox",
    "list",
    "listitem",
    "menu",
    "menubar",
    "menuitem",
    "tab",
    "tabitem",
    "text",
    "image",
    "hyperlink",
    "slider",
    "scrollbar",
    "spinner",
    "progressbar",
    "toolbar",
    "statusbar",
    "tree",
    "treeitem",
    "table",
    "row",
    "cell",
    "header",
    "document",
    "separator",
    "custom",
];

const STATES: [&str; 9] = [
    "focused",
    "focusable",
    "enabled",
    "checked",
    "selected",
    "expanded",
    "editable",
    "password",
    "visible",
];

fn states(n: &Value) -> Vec<&str> {
    n["states"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect()
}

/// An activation's or input's answer without the element's identity (`ref`, `role`,
/// `name`), which every answer carries.
fn acted(r: &Value) -> Value {
    let mut r = r.clone();
    let m = r.as_object_mut().unwrap();
    let eref = m.remove("ref").unwrap();
    assert!(eref.as_str().is_some_and(|e| e.starts_with('e')), "{eref}");
    assert!(m.remove("role").unwrap().is_string());
    assert!(m.remove("name").unwrap().is_string());
    r
}

fn node_id(snap: &Value, role: &str, name: &str) -> u64 {
    find_node(&snap["tree"], role, name).unwrap_or_else(|| panic!("no {role} {name:?}"))["id"]
        .as_u64()
        .unwrap()
}

/// Checks the caps of one snapshot: depth, node count, name length, node_count.
fn check_caps(snap: &Value, depth: usize, max_nodes: usize, name_len: usize) {
    let all = nodes(&snap["tree"]);
    assert_eq!(snap["node_count"], all.len(), "node_count counts the tree");
    assert!(all.len() <= max_nodes, "{} nodes > {max_nodes}", all.len());
    let deepest = all.iter().map(|(d, _)| *d).max().unwrap();
    assert!(deepest <= depth, "depth {deepest} > {depth}");
    for (_, n) in &all {
        let len = n["name"].as_str().unwrap().chars().count();
        assert!(len <= name_len, "name {} longer than {name_len}", n["name"]);
    }
    let ids: HashSet<u64> = all.iter().map(|(_, n)| n["id"].as_u64().unwrap()).collect();
    assert_eq!(ids.len(), all.len(), "node ids are unique");
}

#[test]
fn snapshot_levels_and_caps() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let sk = s.snapshot(json!({"level": "skeleton"}));
    check_caps(&sk, 2, 80, 32);
    assert_eq!(sk["truncated"], true, "skeleton cuts the list rows");
    assert!(find_node(&sk["tree"], "listitem", "Item 1").is_none());
    // The layout label is longer than 32 characters: shortened with an ellipsis.
    let label = nodes(&sk["tree"])
        .into_iter()
        .find(|(_, n)| n["name"].as_str().unwrap().starts_with("1 display"))
        .unwrap()
        .1
        .clone();
    assert_eq!(label["name"].as_str().unwrap().chars().count(), 32);
    assert!(label["name"].as_str().unwrap().ends_with('…'));

    let st = s.snapshot(json!({"level": "standard"}));
    check_caps(&st, 4, 400, 64);
    assert!(find_node(&st["tree"], "listitem", "Item 20").is_some());
    assert!(
        find_node(&st["tree"], "text", "1 display, desktop 1920x1080 at (0,0)").is_some(),
        "standard names are not shortened below 64"
    );
    let full = s.snapshot(json!({"level": "full"}));
    check_caps(&full, 12, 2000, 256);
    assert_eq!(full["truncated"], false, "the whole desktop fits");
    assert_eq!(full["node_count"], 38);
    assert!(full["generated_at"].as_str().unwrap().contains('T'));
    // The default level is standard.
    let d = s.snapshot(json!({}));
    assert_eq!(d["node_count"], st["node_count"]);

    // depth / max_nodes override the level.
    let capped = s.snapshot(json!({"level": "full", "max_nodes": 5}));
    assert_eq!(capped["node_count"], 5);
    assert_eq!(capped["truncated"], true);
    check_caps(&capped, 12, 5, 256);
    let shallow = s.snapshot(json!({"level": "full", "depth": 1}));
    check_caps(&shallow, 1, 2000, 256);
    assert_eq!(shallow["truncated"], true);
    assert_eq!(
        shallow["node_count"], 4,
        "the desktop and its three windows"
    );
    let deep = s.snapshot(json!({"level": "skeleton", "depth": 3}));
    assert!(find_node(&deep["tree"], "listitem", "Item 1").is_some());
    for bad in [
        json!({"depth": 0}),
        json!({"depth": 41}),
        json!({"max_nodes": 0}),
        json!({"level": "huge"}),
    ] {
        s.fails("a11y.snapshot", bad, "invalid_arguments");
    }
}

#[test]
fn vocabulary_window_ids_and_window_scope() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let snap = s.snapshot(json!({"level": "full"}));
    let list = s.ok("window.list", json!({}));
    let ids: Vec<u64> = list["windows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["id"].as_u64().unwrap())
        .collect();
    let mut seen = Vec::new();
    for (_, n) in nodes(&snap["tree"]) {
        let role = n["role"].as_str().unwrap();
        assert!(ROLES.contains(&role), "role {role} not in the vocabulary");
        for st in states(n) {
            assert!(STATES.contains(&st), "state {st} not in the vocabulary");
        }
        assert!(n["id"].is_u64() && n["name"].is_string(), "{n}");
        if role == "window" {
            let wid = n["window_id"]
                .as_u64()
                .expect("window nodes carry window_id");
            assert!(ids.contains(&wid), "{wid} not in window.list {ids:?}");
            let w = window_by_title(&list, n["name"].as_str().unwrap());
            assert_eq!(w["id"], wid);
            seen.push(wid);
        } else {
            assert!(
                n.get("window_id").is_none(),
                "only windows carry window_id: {n}"
            );
        }
        if let Some(r) = n.get("rect") {
            let r: Vec<i64> = r
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_i64().unwrap())
                .collect();
            assert_eq!(r.len(), 4);
            assert!(r[0] <= r[2] && r[1] <= r[3], "{n}");
        }
    }
    seen.sort();
    let mut all = ids.clone();
    all.sort();
    assert_eq!(seen, all, "every window is in the tree");
    // Roles of the sign-in form.
    let form = find_node(&snap["tree"], "window", "Sign in").unwrap();
    let roles: Vec<&str> = form["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "text",
            "edit",
            "text",
            "edit",
            "checkbox",
            "button",
            "button",
            "statusbar"
        ]
    );
    assert!(states(find_node(&snap["tree"], "edit", "Name").unwrap()).contains(&"editable"));

    // Scoped to one window: the window is the root.
    let items = window_by_title(&list, "Items")["id"].as_u64().unwrap();
    let scoped = s.snapshot(json!({"window": items, "level": "full"}));
    assert_eq!(scoped["tree"]["role"], "window");
    assert_eq!(scoped["tree"]["name"], "Items");
    assert_eq!(scoped["tree"]["window_id"], items);
    assert!(find_node(&scoped["tree"], "edit", "Name").is_none());
    assert!(find_node(&scoped["tree"], "listitem", "Item 20").is_some());
    assert_eq!(scoped["node_count"], nodes(&scoped["tree"]).len());
    // A window that does not exist is a bad argument.
    let err = s.fails("a11y.snapshot", json!({"window": 7}), "invalid_arguments");
    assert_eq!(issue_paths(&err), vec!["window"]);
}

#[test]
fn password_field_never_shows_a_value() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let secret = "hunter2-Sekr3t";
    let pw = s.node("edit", "Password");
    let st = states(&pw);
    assert!(
        st.contains(&"password") && st.contains(&"editable"),
        "{st:?}"
    );
    assert!(pw.get("value").is_none(), "{pw}");
    // Type into it (high risk: approve), then look again.
    s.click_node("edit", "Password");
    let r = s.ok("keyboard.type", json!({"text": secret}));
    let id = r["request_id"]
        .as_str()
        .expect("password typing asks first")
        .to_string();
    s.confirm(&id, true);
    s.wait_event_matching("action.finished", 0, |p| p["request_id"] == json!(id));
    for level in ["skeleton", "standard", "full"] {
        let snap = s.snapshot(json!({"level": level}));
        let pw = find_node(&snap["tree"], "edit", "Password").unwrap();
        assert!(pw.get("value").is_none(), "{level}: {pw}");
        assert!(states(pw).contains(&"focused"));
        assert!(!snap.to_string().contains(secret));
    }
    // a11y.input into it is high risk too; approved, the value is still hidden.
    let snap = s.snapshot(json!({}));
    let node = node_id(&snap, "edit", "Password");
    let r = s.ok(
        "a11y.input",
        json!({"snapshot_id": snap["snapshot_id"], "node_id": node, "text": "other-Secret9"}),
    );
    assert_eq!(r["status"], "awaiting_confirmation");
    assert_eq!(r["risk"], "high");
    let id = r["request_id"].as_str().unwrap().to_string();
    let (_, req) = s.wait_event_matching("safety.confirmation_requested", 0, |p| {
        p["request_id"] == json!(id)
    });
    assert_eq!(req["payload"]["arguments"]["text"], "[redacted]");
    s.confirm(&id, true);
    let (_, fin) = s.wait_event_matching("action.finished", 0, |p| p["request_id"] == json!(id));
    assert_eq!(fin["payload"]["envelope"]["result"]["method_used"], "value");
    assert!(s.node("edit", "Password").get("value").is_none());
    // Nowhere on stdout.
    s.drain_available();
    for l in &s.lines {
        let t = format!("{l:?}");
        assert!(
            !t.contains(secret) && !t.contains("other-Secret9"),
            "leaked: {t}"
        );
    }
}

#[test]
fn rects_are_canvas_coordinates() {
    let mut full = Server::start();
    full.start_session(common::full_canvas());
    let a = full.snapshot(json!({"level": "full"}));
    let wa = full.ok("window.list", json!({}));
    let mut half = Server::start();
    half.start_session(json!({"capture": {"default_width": 960}}));
    let b = half.snapshot(json!({"level": "full"}));
    let wb = half.ok("window.list", json!({}));
    let na = nodes(&a["tree"]);
    let nb = nodes(&b["tree"]);
    assert_eq!(na.len(), nb.len());
    let mut compared = 0;
    for ((_, x), (_, y)) in na.iter().zip(&nb) {
        assert_eq!(x["name"], y["name"]);
        match (x.get("rect"), y.get("rect")) {
            (Some(rx), Some(ry)) => {
                for (p, q) in rx.as_array().unwrap().iter().zip(ry.as_array().unwrap()) {
                    let (p, q) = (p.as_i64().unwrap(), q.as_i64().unwrap());
                    assert!((p - 2 * q).abs() <= 1, "{} halves: {rx} vs {ry}", x["name"]);
                }
                compared += 1;
            }
            (None, None) => {}
            other => panic!("rect presence differs: {other:?}"),
        }
    }
    assert!(compared > 20);
    for (x, y) in wa["windows"]
        .as_array()
        .unwrap()
        .iter()
        .zip(wb["windows"].as_array().unwrap())
    {
        for k in ["x", "y", "width", "height"] {
            let (p, q) = (
                x["rect"][k].as_i64().unwrap(),
                y["rect"][k].as_i64().unwrap(),
            );
            assert!((p - 2 * q).abs() <= 1, "window {k}: {p} vs {q}");
        }
    }
    // The halved rects are the ones to click on: the checkbox toggles.
    half.click_node("checkbox", "Remember me");
    assert!(states(&half.node("checkbox", "Remember me")).contains(&"checked"));
    let desktop = &b["tree"]["rect"];
    assert_eq!(*desktop, json!([0, 0, 960, 540]));
    drop(full);
}

#[test]
fn snapshot_ids_are_unique_across_sessions_and_restarts() {
    let mut ids = HashSet::new();
    let mut old = String::new();
    for _server in 0..2 {
        let mut s = Server::start();
        for _session in 0..2 {
            s.start_session(json!({}));
            for _ in 0..2 {
                let id = s.snapshot(json!({"level": "skeleton"}))["snapshot_id"]
                    .as_str()
                    .unwrap()
                    .to_string();
                assert!(id.starts_with("snap-"), "{id}");
                assert!(ids.insert(id.clone()), "{id} reissued");
                if !old.is_empty() {
                    // Any earlier id (other snapshot, session or server) is stale.
                    let e = s.tool("a11y.activate", json!({"snapshot_id": old, "node_id": 1}));
                    assert_eq!(e["error"]["code"], "stale_snapshot", "{e}");
                }
                old = id;
            }
            s.method_ok("session.stop", json!(null));
        }
    }
    assert_eq!(ids.len(), 8);
}

#[test]
fn only_the_latest_snapshot_is_accepted() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let first = s.snapshot(json!({}));
    let id1 = first["snapshot_id"].clone();
    let node = node_id(&first, "checkbox", "Remember me");
    let second = s.snapshot(json!({}));
    let err = s.fails(
        "a11y.activate",
        json!({"snapshot_id": id1, "node_id": node}),
        "stale_snapshot",
    );
    assert!(err["message"].as_str().unwrap().contains("snapshot"));
    s.fails(
        "a11y.input",
        json!({"snapshot_id": id1, "node_id": node_id(&first, "edit", "Name"), "text": "x"}),
        "stale_snapshot",
    );
    s.fails(
        "a11y.activate",
        json!({"snapshot_id": "snap-doesnotexist", "node_id": 0}),
        "stale_snapshot",
    );
    assert!(!states(&s.node("checkbox", "Remember me")).contains(&"checked"));
    // The node ids of the latest one work (node() took a newer snapshot: take one more).
    let third = s.snapshot(json!({}));
    assert_ne!(third["snapshot_id"], second["snapshot_id"]);
    let r = s.ok(
        "a11y.activate",
        json!({"snapshot_id": third["snapshot_id"], "node_id": node_id(&third, "checkbox", "Remember me")}),
    );
    assert_eq!(r["method_used"], "toggle");
    // A node id the snapshot does not have.
    let err = s.fails(
        "a11y.activate",
        json!({"snapshot_id": third["snapshot_id"], "node_id": 9999}),
        "invalid_arguments",
    );
    assert_eq!(issue_paths(&err), vec!["node_id"]);
}

#[test]
fn activate_auto_pattern_and_pointer() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let snap = s.snapshot(json!({"level": "full"}));
    let sid = snap["snapshot_id"].clone();
    // auto on a checkbox toggles it.
    let cb = node_id(&snap, "checkbox", "Remember me");
    let r = s.ok("a11y.activate", json!({"snapshot_id": sid, "node_id": cb}));
    assert_eq!(acted(&r), json!({"node_id": cb, "method_used": "toggle"}));
    // pattern on a button invokes it (the Name field kept the focus).
    s.ok("keyboard.type", json!({"text": "Ada"}));
    let submit = node_id(&snap, "button", "Submit");
    let r = s.ok(
        "a11y.activate",
        json!({"snapshot_id": sid, "node_id": submit, "method": "pattern"}),
    );
    assert_eq!(r["method_used"], "invoke");
    // pattern on an element without semantic actions fails and never clicks.
    let pw = node_id(&snap, "edit", "Password");
    let env = s.tool(
        "a11y.activate",
        json!({"snapshot_id": sid, "node_id": pw, "method": "pattern"}),
    );
    assert_eq!(env["ok"], false, "{env}");
    assert!(
        env["error"]["message"]
            .as_str()
            .unwrap()
            .contains("pattern")
    );
    let after = s.snapshot(json!({"level": "full"}));
    let pwn = find_node(&after["tree"], "edit", "Password").unwrap();
    assert!(
        !states(pwn).contains(&"focused"),
        "the failed pattern did not click"
    );
    assert!(states(find_node(&after["tree"], "edit", "Name").unwrap()).contains(&"focused"));
    assert!(
        states(find_node(&after["tree"], "checkbox", "Remember me").unwrap()).contains(&"checked")
    );
    assert_eq!(
        find_node(&after["tree"], "statusbar", "Status").unwrap()["value"],
        "Submitted: Ada"
    );

    // pointer clicks the element's centre, whatever it offers.
    let sid = after["snapshot_id"].clone();
    let item3 = find_node(&after["tree"], "listitem", "Item 3")
        .unwrap()
        .clone();
    let r = s.ok(
        "a11y.activate",
        json!({"snapshot_id": sid, "node_id": item3["id"], "method": "pointer"}),
    );
    assert_eq!(r["method_used"], "pointer");
    let (cx, cy) = center(&item3);
    let pos = &r["position"];
    assert!(
        (pos["x"].as_i64().unwrap() - cx).abs() <= 1,
        "{r} vs {item3}"
    );
    assert!(
        (pos["y"].as_i64().unwrap() - cy).abs() <= 1,
        "{r} vs {item3}"
    );
    let snap = s.snapshot(json!({"level": "full"}));
    assert!(states(find_node(&snap["tree"], "listitem", "Item 3").unwrap()).contains(&"selected"));
    // auto on a list item selects it, even one scrolled out of view.
    let item = node_id(&snap, "listitem", "Item 15");
    assert!(
        find_node(&snap["tree"], "listitem", "Item 15")
            .unwrap()
            .get("rect")
            .is_none()
    );
    let r = s.ok(
        "a11y.activate",
        json!({"snapshot_id": snap["snapshot_id"], "node_id": item}),
    );
    assert_eq!(r["method_used"], "select");
    let last = s.snapshot(json!({"level": "full"}));
    let i15 = find_node(&last["tree"], "listitem", "Item 15").unwrap();
    assert!(states(i15).contains(&"selected") && i15["rect"].is_array());
    assert!(!states(find_node(&last["tree"], "listitem", "Item 3").unwrap()).contains(&"selected"));
    s.fails(
        "a11y.activate",
        json!({"snapshot_id": last["snapshot_id"], "node_id": 0, "method": "poke"}),
        "invalid_arguments",
    );
}

#[test]
fn a11y_input_sets_and_reads_back() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let snap = s.snapshot(json!({}));
    let name = node_id(&snap, "edit", "Name");
    let text = "Ada Lovelace — 数学 🧮";
    let r = s.ok(
        "a11y.input",
        json!({"snapshot_id": snap["snapshot_id"], "node_id": name, "text": text}),
    );
    assert_eq!(acted(&r), json!({"node_id": name, "method_used": "value"}));
    assert_eq!(s.node("edit", "Name")["value"], text);
    // Replaces, does not append.
    let snap = s.snapshot(json!({}));
    s.ok(
        "a11y.input",
        json!({"snapshot_id": snap["snapshot_id"], "node_id": node_id(&snap, "edit", "Name"), "text": "Grace"}),
    );
    assert_eq!(s.node("edit", "Name")["value"], "Grace");
    // An element without a value interface is clicked and typed into.
    let snap = s.snapshot(json!({}));
    let cb = node_id(&snap, "checkbox", "Remember me");
    let r = s.ok(
        "a11y.input",
        json!({"snapshot_id": snap["snapshot_id"], "node_id": cb, "text": "xy"}),
    );
    assert_eq!(r["method_used"], "pointer_type");
    assert_eq!(r["chars"], 2);
    let err = s.fails(
        "a11y.input",
        json!({"snapshot_id": snap["snapshot_id"], "node_id": cb}),
        "invalid_arguments",
    );
    assert_eq!(issue_paths(&err), vec!["text"]);
}

#[test]
fn a_changed_element_is_stale_never_acted_on() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let snap = s.snapshot(json!({}));
    let btn = find_node(&snap["tree"], "button", "Add left display")
        .unwrap()
        .clone();
    // Click it by pointer: it adds a display and renames itself.
    let (x, y) = center(&btn);
    s.ok("pointer.click", json!({"x": x, "y": y}));
    let ev = s.wait_event("session.configured");
    assert_eq!(
        ev["payload"]["surface"]["displays"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    // The old node (same element, new name) must not be activated.
    let err = s.fails(
        "a11y.activate",
        json!({"snapshot_id": snap["snapshot_id"], "node_id": btn["id"]}),
        "stale_snapshot",
    );
    assert!(
        err["message"].as_str().unwrap().contains("snapshot"),
        "{err}"
    );
    assert_eq!(
        s.status()["surface"]["displays"].as_array().unwrap().len(),
        2,
        "the display was not removed"
    );
    // A fresh snapshot sees the new name and may act.
    let snap = s.snapshot(json!({}));
    let id = node_id(&snap, "button", "Remove left display");
    let r = s.ok(
        "a11y.activate",
        json!({"snapshot_id": snap["snapshot_id"], "node_id": id}),
    );
    assert_eq!(r["method_used"], "invoke");
    let (_, ev) = s.wait_event_matching("session.configured", 0, |p| {
        p["surface"]["displays"]
            .as_array()
            .is_some_and(|d| d.len() == 1)
    });
    assert_eq!(ev["payload"]["surface"]["physical"]["x"], 0);
}
