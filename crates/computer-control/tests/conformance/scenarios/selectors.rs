//! Naming elements (PROTOCOL §4.2) on a canvas narrower than the screen (× 1.5): a
//! selector several elements match is refused, listing candidates whose refs work; a
//! checkbox's ref names it across snapshots for `a11y.activate` and for the pointer
//! tools, each landing at its centre; once its application is gone the ref is
//! `stale_element`, never another element, and nothing moves.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{can, topmost_unchecked, window_node};
use crate::common::{Server, center, find_where, has_state};
use crate::conformance::desk::{App, Desk, serve, window_where};

/// Waits until the element `r` names reads `checked` (or not).
fn checked(s: &mut Server, r: &Value, want: bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let snap = s.ok("a11y.snapshot", json!({"level": "full"}));
        let now = find_where(&snap["tree"], "checkbox", &|n| n["ref"] == *r)
            .unwrap_or_else(|| panic!("the ref {r} names nothing: {snap}"));
        if has_state(now, "checked") == want {
            return;
        }
        assert!(Instant::now() < deadline, "{r} never became checked={want}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

pub fn selectors_and_refs_name_elements_until_they_are_gone<D: Desk>() {
    let mut desk = D::start();
    let mut s = serve(&desk, "info", None);
    s.start_session(json!({"capture": {"default_width": 1280}}));
    if !can(&desk, &mut s, "accessibility") {
        return;
    }
    let window = desk.open(&mut s, App::Checkboxes);

    // Several match: refused, with candidates whose refs name elements.
    let e = s.tool(
        "a11y.activate",
        json!({"selector": {"window": window, "states": ["enabled", "focusable"]}, "method": "pattern"}),
    );
    assert_eq!(e["error"]["code"], "ambiguous_element", "{e}");
    let candidates = e["error"]["data"]["candidates"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(candidates.len() >= 2, "{e}");
    for c in candidates.iter().take(2) {
        let r = s.ok(
            "wait.for",
            json!({"condition": "appears", "ref": c["ref"], "timeout_ms": 5000}),
        );
        assert_eq!(r["saw"]["element"]["ref"], c["ref"], "{r}");
    }

    // A checkbox named by its ref, across snapshots.
    let snap = s.ok("a11y.snapshot", json!({"level": "full"}));
    let cb = topmost_unchecked(&window_node(&snap, &window));
    let eref = cb["ref"].clone();
    let act = s.ok("a11y.activate", json!({"ref": eref, "method": "pattern"}));
    assert_eq!(act["method_used"], "toggle", "{act}");
    assert_eq!(act["ref"], eref, "{act}");
    checked(&mut s, &eref, true);
    s.ok("a11y.snapshot", json!({"level": "skeleton"}));
    s.ok("a11y.activate", json!({"ref": eref, "method": "pattern"}));
    checked(&mut s, &eref, false);

    // The pointer tools aimed at it land at its centre.
    let el = json!({"ref": eref});
    let (x, y) = center(&cb);
    let on_it = |desk: &D| {
        if let Some((px, py)) = desk.pointer() {
            assert!(
                (px - x * 3 / 2).abs() <= 2 && (py - y * 3 / 2).abs() <= 2,
                "pointer at {px},{py} for canvas {x},{y}"
            );
        }
    };
    s.ok("pointer.move", json!({"x": 5, "y": 5}));
    let r = s.ok("pointer.move", json!({"element": el, "steps": 4}));
    assert_eq!(r["element"]["ref"], eref, "{r}");
    on_it(&desk);
    s.ok("pointer.move", json!({"x": 5, "y": 5}));
    let r = s.ok("pointer.scroll", json!({"amount": -1, "element": el}));
    assert_eq!(r["element"]["role"], "checkbox", "{r}");
    on_it(&desk);
    s.ok("pointer.move", json!({"x": 5, "y": 5}));
    let r = s.ok(
        "pointer.drag",
        json!({"from_element": el, "to_element": el, "steps": 2}),
    );
    assert_eq!(r["from_element"]["ref"], eref, "{r}");
    checked(&mut s, &eref, true);
    on_it(&desk);
    s.ok("pointer.click", json!({"element": el}));
    checked(&mut s, &eref, false);

    // The application goes: the ref is stale, and nothing moves.
    s.ok("pointer.move", json!({"x": 5, "y": 5}));
    let listed = window_where(&mut s, "the checkboxes'", |w| w["id"] == window);
    desk.close(&mut s, &listed);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let env = s.tool("pointer.move", json!({"element": el}));
        if env["error"]["code"] == "stale_element" {
            break;
        }
        assert_eq!(env["ok"], false, "moved to a gone element: {env}");
        assert!(
            Instant::now() < deadline,
            "the ref outlived its element: {env}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let here = s.ok("pointer.position", json!({}));
    let on_server = desk.pointer();
    for (tool, args) in [
        ("pointer.scroll", json!({"amount": 1, "element": el})),
        (
            "pointer.drag",
            json!({"from": {"x": 300, "y": 300}, "to_element": el}),
        ),
        ("pointer.click", json!({"element": el})),
        ("a11y.activate", json!({"ref": eref})),
    ] {
        s.fails(tool, args, "stale_element");
    }
    assert_eq!(s.ok("pointer.position", json!({})), here, "nothing moved");
    assert_eq!(desk.pointer(), on_server, "the pointer stayed where it was");
}
