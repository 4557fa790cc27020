//! One space for what a model sees and where it clicks (PROTOCOL §4.1): a point read
//! off the default capture, clicked as is, lands on what the image showed there; on a
//! canvas narrower than the screen a click at the centre of a checkbox's accessibility
//! rectangle toggles it, and its semantic activation toggles it back.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{can, rect, topmost_unchecked, window_node};
use crate::common::{self, Server, center, find_where, has_state};
use crate::conformance::desk::{App, Desk, serve};

/// A checkbox of the latest snapshot, found again by what the test knows of it.
type Find<'a> = &'a dyn Fn(&mut Server) -> (Value, Value);

/// The default capture as PNG pixels, checked to be the canvas itself: the image is
/// `display_width_px` × `display_height_px` and `to_canvas` is the identity.
pub fn default_image(s: &mut Server) -> (u32, Vec<u8>) {
    let surface = s.status()["surface"].clone();
    let r = s.ok("screen.capture", json!({"format": "png"}));
    assert_eq!(r["size"], "model");
    assert_eq!(
        (&r["width"], &r["height"]),
        (&surface["display_width_px"], &surface["display_height_px"]),
        "the default image is the canvas: {surface}"
    );
    assert_eq!(
        r["to_canvas"],
        json!({"offset_x": 0, "offset_y": 0, "scale_x": 1.0, "scale_y": 1.0})
    );
    assert_eq!(r["canvas"]["scale"], surface["scale"]);
    assert_eq!(r["canvas"]["physical"], surface["physical"]);
    let raw = common::data_url_bytes(r["data_url"].as_str().expect("an image every time"));
    let (w, _, _, px) = common::decode_png(&raw);
    (w, px)
}

/// The image pixels inside `[l, t, r, b]` (image coordinates) that differ.
fn changed_in(a: &[u8], b: &[u8], w: u32, rect: [i64; 4]) -> Vec<(i64, i64)> {
    let h = (a.len() / 3) as i64 / i64::from(w);
    let mut out = Vec::new();
    for y in rect[1].max(0)..rect[3].min(h) {
        for x in rect[0].max(0)..rect[2].min(i64::from(w)) {
            let i = ((y * i64::from(w) + x) * 3) as usize;
            if a[i..i + 3] != b[i..i + 3] {
                out.push((x, y));
            }
        }
    }
    out
}

/// Waits until the checkbox `find` returns reads `checked` (or not).
fn wait_checked(s: &mut Server, find: Find<'_>, checked: bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, node) = find(s);
        if has_state(&node, "checked") == checked {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{node} did not become checked={checked}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Finds, in a fresh snapshot, the checkbox with `like`'s name at `like`'s place
/// (several checkboxes may share a name).
fn same_checkbox(like: Value) -> impl Fn(&mut Server) -> (Value, Value) {
    move |s: &mut Server| {
        let snap = s.snapshot(json!({"level": "full"}));
        let node = find_where(&snap["tree"], "checkbox", &|n| {
            n["name"] == like["name"] && n["rect"] == like["rect"]
        })
        .unwrap_or_else(|| panic!("no checkbox like {like}: {snap}"))
        .clone();
        (snap, node)
    }
}

/// Asserts the display server's pointer is where canvas `(x, y)` maps at `scale`.
fn pointer_at<D: Desk>(desk: &D, (x, y): (i64, i64), scale: f64) {
    if let Some((px, py)) = desk.pointer() {
        assert!(
            (px as f64 - x as f64 * scale).abs() <= 2.0
                && (py as f64 - y as f64 * scale).abs() <= 2.0,
            "pointer at {px},{py} for canvas {x},{y} × {scale}"
        );
    }
}

/// Reads a checkbox's place off the default image, as a model would, and clicks that
/// image point as is. The place is where the image changes when the checkbox is
/// toggled by its accessibility action (no pointer involved); the click, given the
/// image's own coordinates, must toggle the checkbox back.
pub fn a_point_read_off_the_default_image_clicks_what_it_shows<D: Desk>() {
    let mut desk = D::start();
    let mut s = serve(&desk, "info", None);
    let started = s.start_session(json!({}));
    assert_eq!(started["surface"]["display_width_px"], 1430);
    if !can(&desk, &mut s, "accessibility") {
        return;
    }
    let window = desk.open(&mut s, App::Checkboxes);
    let snap = s.snapshot(json!({"level": "full"}));
    let find = same_checkbox(topmost_unchecked(&window_node(&snap, &window)));
    let (snap, node) = find(&mut s);
    assert!(!has_state(&node, "checked"), "{node}");
    let r = rect(&node);
    let around = [r[0] - 4, r[1] - 4, r[2] + 4, r[3] + 4];
    let (w, before) = default_image(&mut s);
    let act = s.ok(
        "a11y.activate",
        json!({"snapshot_id": snap["snapshot_id"], "node_id": node["id"], "method": "pattern"}),
    );
    assert_eq!(act["method_used"], "toggle", "{act}");
    wait_checked(&mut s, &find, true);
    let deadline = Instant::now() + Duration::from_secs(10);
    let changed = loop {
        let (_, after) = default_image(&mut s);
        let changed = changed_in(&before, &after, w, around);
        if !changed.is_empty() {
            break changed;
        }
        assert!(
            Instant::now() < deadline,
            "the image did not change at {around:?}, where {node} is on the canvas"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    // The middle of what changed: the check mark as the image shows it.
    let (xs, ys): (Vec<i64>, Vec<i64>) = changed.iter().copied().unzip();
    let u = (xs.iter().min().unwrap_or(&0) + xs.iter().max().unwrap_or(&0)) / 2;
    let v = (ys.iter().min().unwrap_or(&0) + ys.iter().max().unwrap_or(&0)) / 2;
    let clicked = s.ok("pointer.click", json!({"x": u, "y": v}));
    assert_eq!(clicked["position"], json!({"x": u, "y": v}));
    wait_checked(&mut s, &find, false);
    // The click landed on the checkbox, where the display server put the pointer.
    let r = rect(&find(&mut s).1);
    assert!(
        (r[0]..r[2]).contains(&u) && (r[1]..r[3]).contains(&v),
        "{u},{v} in {r:?}"
    );
    pointer_at(&desk, (u, v), 1920.0 / 1430.0);
}

/// The canvas is not the screen: with `capture.default_width` 1280 on a 1920-pixel
/// screen, a snapshot's rectangles are canvas units on the window (`window.list`'s
/// rectangle holds the checkbox's centre), a click at that centre toggles the
/// checkbox, and `a11y.activate` toggles it back.
pub fn a_click_at_an_accessibility_rect_on_a_narrower_canvas<D: Desk>() {
    let mut desk = D::start();
    let mut s = serve(&desk, "info", None);
    let started = s.start_session(json!({"capture": {"default_width": 1280}}));
    assert_eq!(started["surface"]["display_width_px"], 1280);
    assert_eq!(started["surface"]["display_height_px"], 720);
    if !can(&desk, &mut s, "accessibility") {
        return;
    }
    let window = desk.open(&mut s, App::Checkboxes);
    let listed = super::super::desk::window_where(&mut s, "the checkboxes'", |w| w["id"] == window);
    let snap = s.snapshot(json!({"level": "full"}));
    let cb = topmost_unchecked(&window_node(&snap, &window));
    let find = same_checkbox(cb.clone());
    let (x, y) = center(&cb);
    let wr = &listed["rect"];
    let g = |k: &str| wr[k].as_i64().unwrap_or_default();
    assert!(
        (g("x")..g("x") + g("width")).contains(&x) && (g("y")..g("y") + g("height")).contains(&y),
        "the checkbox {cb} is not on its window {listed}"
    );
    s.ok("pointer.click", json!({"x": x, "y": y}));
    wait_checked(&mut s, &find, true);
    pointer_at(&desk, (x, y), 1.5);
    // Semantic activation, the same accessibility code on every Linux desk.
    let (snap, node) = find(&mut s);
    let act = s.ok(
        "a11y.activate",
        json!({"snapshot_id": snap["snapshot_id"], "node_id": node["id"], "method": "pattern"}),
    );
    assert_eq!(act["method_used"], "toggle", "{act}");
    wait_checked(&mut s, &find, false);
}
