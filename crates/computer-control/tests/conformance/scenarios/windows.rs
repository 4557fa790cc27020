//! Windows on a canvas narrower than the screen (× 1.5): a window is listed, focused
//! (and listed focused), captured in place without a change of focus, a region of it
//! zoomed to the screen's own pixels; a click given relative to it lands in it; once
//! minimized from outside, it is refused for clicks and captures and nothing moves.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{can, topmost_unchecked, window_node};
use crate::common::{Server, center, find_where, has_state};
use crate::conformance::desk::{App, Desk, serve, window_where};

/// The `focused` flag of every listed window, in order.
fn focus(s: &mut Server) -> Vec<Value> {
    let list = s.ok("window.list", json!({}));
    list["windows"]
        .as_array()
        .map(|ws| ws.iter().map(|w| w["focused"].clone()).collect())
        .unwrap_or_default()
}

pub fn a_window_is_listed_focused_captured_and_clicked_relative_to_it<D: Desk>() {
    let mut desk = D::start();
    let mut s = serve(&desk, "info", None);
    s.start_session(json!({"capture": {"default_width": 1280}}));
    if !can(&desk, &mut s, "windows") || !can(&desk, &mut s, "accessibility") {
        return;
    }
    let window = desk.open(&mut s, App::Checkboxes);
    s.ok("window.focus", json!({"id": window}));
    let win = window_where(&mut s, "the focused", |w| {
        w["id"] == window && w["focused"] == true
    });
    assert!(win["pid"].is_u64(), "{win}");
    let rect = win["rect"].clone();
    let g = |k: &str| rect[k].as_i64().unwrap_or_default();

    // The window's own rectangle, as on screen, and no focus changes.
    let focus_before = focus(&mut s);
    let cap = s.ok(
        "screen.capture",
        json!({"window": window, "size": "canvas", "format": "png", "if_changed": false}),
    );
    assert_eq!(cap["window"], window);
    let (x0, y0) = (g("x").max(0), g("y").max(0));
    assert_eq!(cap["region"]["x"], x0, "{cap}");
    assert_eq!(cap["region"]["y"], y0, "{cap}");
    let width = cap["region"]["width"].as_i64().unwrap_or_default();
    assert!(
        (width - ((g("x") + g("width")).min(1280) - x0)).abs() <= 1,
        "{cap} vs {rect}"
    );
    assert_eq!(
        focus_before,
        focus(&mut s),
        "capturing a window changes no focus"
    );

    // Zoom: a region at the screen's own pixels, 1.5 image pixels per canvas unit,
    // one more where the region's edge falls inside a screen pixel.
    let zoom = s.ok(
        "screen.capture",
        json!({"region": {"x": x0, "y": y0, "width": 200, "height": 100}, "size": "native"}),
    );
    let (zw, zh) = (
        zoom["width"].as_u64().unwrap_or_default(),
        zoom["height"].as_u64().unwrap_or_default(),
    );
    assert!(
        (300..=301).contains(&zw) && (150..=151).contains(&zh),
        "{zoom}"
    );
    assert!(
        (zoom["image_scale"].as_f64().unwrap_or_default() - 1.5).abs() < 0.01,
        "{zoom}"
    );

    // A click relative to the window toggles a checkbox there.
    let snap = s.ok("a11y.snapshot", json!({"level": "full"}));
    let cb = topmost_unchecked(&window_node(&snap, &window));
    let (x, y) = center(&cb);
    let clicked = s.ok(
        "pointer.click",
        json!({"x": x - g("x"), "y": y - g("y"), "window": window}),
    );
    assert_eq!(clicked["position"], json!({"x": x, "y": y}));
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let snap = s.ok("a11y.snapshot", json!({"level": "full"}));
        let same = find_where(&snap["tree"], "checkbox", &|n| {
            n["name"] == cb["name"] && n["rect"] == cb["rect"]
        });
        if same.is_some_and(|n| has_state(n, "checked")) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{cb} was not checked by the relative click"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    if let Some((px, py)) = desk.pointer() {
        assert!(
            (px - x * 3 / 2).abs() <= 2 && (py - y * 3 / 2).abs() <= 2,
            "pointer at {px},{py} for canvas {x},{y}"
        );
    }

    // Minimized, the window is not on screen: refused, nothing clicked.
    if !desk.minimize(&window) {
        eprintln!("{}: this desk cannot minimize a window", D::PLATFORM);
        return;
    }
    let before = s.ok("pointer.position", json!({}));
    let on_server = desk.pointer();
    let err = s.fails(
        "pointer.click",
        json!({"x": 5, "y": 5, "window": window}),
        "invalid_arguments",
    );
    let why = err["message"].as_str().unwrap_or_default();
    assert!(why.contains("not on screen"), "{err}");
    assert_eq!(s.ok("pointer.position", json!({})), before, "no move");
    assert_eq!(desk.pointer(), on_server, "the pointer did not move");
    let err = s.fails(
        "screen.capture",
        json!({"window": window}),
        "invalid_arguments",
    );
    let why = err["message"].as_str().unwrap_or_default();
    assert!(why.contains("closed or minimized"), "{err}");
}
