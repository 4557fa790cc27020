//! The coordinate contract (PROTOCOL §4.1): one canvas over every display (negative
//! origins too), clamping, and `frame` citations refused after a layout change.

use crate::common;

use common::{Server, center, crop_rgb, issue_paths, window_by_title};
use serde_json::{Value, json};

/// Primary 1920x1080 at the origin and a 1280x1024 monitor left of it; a 1600 wide
/// canvas makes the factor exactly 2.
fn two_displays() -> Value {
    json!({
        "platform": {"virtual_displays": [
            {"id": "0", "name": "MAIN", "x": 0, "y": 0, "width": 1920, "height": 1080, "primary": true},
            {"id": "1", "name": "LEFT", "x": -1280, "y": 0, "width": 1280, "height": 1024}
        ]},
        "capture": {"default_width": 1600}
    })
}

#[test]
fn two_displays_share_one_canvas() {
    let mut s = Server::start_with(Some(two_displays()), &[]);
    let started = s.start_session(json!({}));
    let surface = &started["surface"];
    assert_eq!(surface["display_width_px"], 1600);
    assert_eq!(surface["display_height_px"], 540);
    assert_eq!(
        surface["physical"],
        json!({"x": -1280, "y": 0, "width": 3200, "height": 1080})
    );
    assert_eq!(surface["scale"], 2.0);
    assert_eq!(
        surface["displays"],
        json!([
            {"id": "0", "name": "MAIN", "canvas": {"x": 640, "y": 0, "width": 960, "height": 540}, "primary": true},
            {"id": "1", "name": "LEFT", "canvas": {"x": 0, "y": 0, "width": 640, "height": 512}, "primary": false}
        ])
    );
    assert_eq!(s.status()["surface"], *surface);
    let ev = s.wait_event("session.started");
    assert_eq!(ev["payload"]["surface"], *surface);

    // Windows live on the primary display: canvas = (physical − origin) / 2.
    let list = s.ok("window.list", json!({}));
    let form = window_by_title(&list, "Sign in");
    assert_eq!(
        form["rect"],
        json!({"x": 700, "y": 60, "width": 320, "height": 220})
    );
    assert_eq!(form["display"], "0");

    // Clicking a canvas point really lands on that element (through the negative
    // physical origin): the checkbox toggles.
    let (x, y) = center(&s.node("checkbox", "Remember me"));
    assert!(
        x > 640,
        "the checkbox is on the primary display's part of the canvas"
    );
    s.ok("pointer.click", json!({"x": x, "y": y}));
    let n = s.node("checkbox", "Remember me");
    assert!(n["states"].as_array().unwrap().contains(&json!("checked")));

    // Clamping on the combined canvas.
    let r = s.ok("pointer.move", json!({"x": -50, "y": 1e6}));
    assert_eq!(r["position"], json!({"x": 0, "y": 539}));
    let r = s.ok("pointer.move", json!({"x": 1e9, "y": -3}));
    assert_eq!(r["position"], json!({"x": 1599, "y": 0}));
}

#[test]
fn display_captures_are_the_displays_part_of_the_canvas() {
    let mut s = Server::start_with(Some(two_displays()), &[]);
    s.start_session(json!({}));
    let (full_r, fw, fh, _, full) = s.capture_png(json!({}));
    assert_eq!((fw, fh), (1600, 540));
    assert_eq!(
        full_r["canvas"],
        json!({"display_width_px": 1600, "display_height_px": 540,
               "physical": {"x": -1280, "y": 0, "width": 3200, "height": 1080},
               "scale": 2.0})
    );
    let (r, w, h, _, main) = s.capture_png(json!({"display": "0"}));
    assert_eq!((w, h), (960, 540));
    assert_eq!(
        r["region"],
        json!({"x": 640, "y": 0, "width": 960, "height": 540})
    );
    // The same pixels as the full capture's crop, up to resampling at the seam
    // (the full image's filter also sees the neighbouring display).
    let want = crop_rgb(&full, fw, 640, 0, 960, 540);
    let diff: u64 = main
        .iter()
        .zip(&want)
        .map(|(a, b)| (*a as i64 - *b as i64).unsigned_abs())
        .sum();
    assert!(
        diff * 10 / (main.len() as u64) < 10,
        "mean abs diff {}",
        diff / main.len() as u64
    );
    let (r, w, h, _, left) = s.capture_png(json!({"display": "1", "scale": 0.5}));
    assert_eq!((w, h), (320, 256));
    assert_eq!(
        r["region"],
        json!({"x": 0, "y": 0, "width": 640, "height": 512})
    );
    assert_eq!(r["image_scale"], 0.5);
    assert_eq!(left.len(), 320 * 256 * 3);
    let err = s.fails(
        "screen.capture",
        json!({"display": "2"}),
        "invalid_arguments",
    );
    assert_eq!(issue_paths(&err), vec!["display"]);
}

#[test]
fn a_layout_change_makes_older_frames_stale() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let f1 = s.ok("screen.capture", json!({"scale": 0.1}))["frame"]
        .as_u64()
        .unwrap();
    // Citing a current frame is fine.
    s.ok("pointer.move", json!({"x": 10, "y": 10, "frame": f1}));
    let (bx, by) = center(&s.node("button", "Add left display"));
    s.ok("pointer.click", json!({"x": bx, "y": by, "frame": f1}));
    let ev = s.wait_event("session.configured");
    let surface = &ev["payload"]["surface"];
    assert_eq!(surface["displays"].as_array().unwrap().len(), 2, "{ev}");
    assert_eq!(surface["physical"]["x"], -1280);
    assert_eq!(s.status()["surface"], *surface);
    // The automatic canvas is derived again: 3200 × 1080 is shown 1568 × 529.
    assert_eq!(
        (&surface["display_width_px"], &surface["display_height_px"]),
        (&json!(1568), &json!(529)),
        "{surface}"
    );

    // Every coordinate action citing the old frame is refused, and does nothing.
    let before = s.ok("window.list", json!({}));
    let err = s.fails(
        "pointer.click",
        json!({"x": 100, "y": 100, "frame": f1}),
        "stale_frame",
    );
    assert_eq!(err["data"]["frame"], f1);
    s.fails(
        "pointer.move",
        json!({"x": 1, "y": 1, "frame": f1}),
        "stale_frame",
    );
    s.fails(
        "pointer.drag",
        json!({"from": {"x": 900, "y": 80}, "to": {"x": 950, "y": 200}, "frame": f1}),
        "stale_frame",
    );
    s.fails(
        "pointer.scroll",
        json!({"amount": 1, "frame": f1}),
        "stale_frame",
    );
    assert_eq!(s.ok("window.list", json!({})), before, "nothing moved");

    // A frame taken after the change is fine.
    let f2 = s.ok("screen.capture", json!({"scale": 0.1}))["frame"]
        .as_u64()
        .unwrap();
    assert!(f2 > f1);
    s.ok("pointer.click", json!({"x": 5, "y": 5, "frame": f2}));
    // A frame number never issued is a bad argument, not a stale one.
    for never in [f2 + 1, f2 + 1000, 0] {
        let err = s.fails(
            "pointer.click",
            json!({"x": 5, "y": 5, "frame": never}),
            "invalid_arguments",
        );
        assert_eq!(issue_paths(&err), vec!["frame"], "frame {never}");
    }
    s.fails(
        "pointer.click",
        json!({"x": 5, "y": 5, "frame": -1}),
        "invalid_arguments",
    );
}

#[test]
fn reconfiguring_the_canvas_width_is_a_layout_change() {
    let mut s = Server::start();
    s.start_session(json!({}));
    let f1 = s.ok("screen.capture", json!({"scale": 0.1}))["frame"]
        .as_u64()
        .unwrap();
    let r = s.method_ok(
        "session.configure",
        json!({"capture": {"default_width": 960}}),
    );
    assert_eq!(r["applied"], json!({"capture": {"default_width": 960}}));
    // The next action sees the new canvas.
    let r = s.ok("pointer.move", json!({"x": 5000, "y": 5000}));
    assert_eq!(r["position"], json!({"x": 959, "y": 539}));
    let (_, ev) = s.wait_event_matching("session.configured", 0, |p| p.get("surface").is_some());
    assert_eq!(ev["payload"]["surface"]["display_width_px"], 960);
    s.fails(
        "pointer.move",
        json!({"x": 1, "y": 1, "frame": f1}),
        "stale_frame",
    );
    let (_, w, h, _, _) = s.capture_png(json!({}));
    assert_eq!((w, h), (960, 540));
}
