//! A monitor layout change (PROTOCOL §4.1): the session re-reads its surface and emits
//! `session.configured` with the new displays; a frame captured before the change is
//! then `stale_frame` and moves nothing, and a frame captured after it is accepted.

use serde_json::json;

use super::{contains, event};
use crate::common::Server;
use crate::conformance::desk::{Desk, serve};

/// A new capture's frame number.
fn frame(s: &mut Server) -> u64 {
    s.ok("screen.capture", json!({"scale": 0.1}))["frame"]
        .as_u64()
        .unwrap_or_else(|| panic!("a capture without a frame"))
}

pub fn a_monitor_change_reconfigures_and_stales_older_frames<D: Desk>() {
    let mut desk = D::start();
    let mut s = serve(&desk, "info", None);
    // The operator's canvas of 1920: canvas units are the screen's pixels.
    let started = s.start_session(json!({"capture": {"default_width": 1920}}));
    let displays = &started["surface"]["displays"];
    assert_eq!(displays.as_array().map(Vec::len), Some(1), "{displays}");
    let f1 = frame(&mut s);
    s.ok("pointer.move", json!({"x": 100, "y": 100, "frame": f1}));
    if let Some(p) = desk.pointer() {
        assert_eq!(p, (100, 100), "the display server's pointer");
    }

    let Some(change) = desk.add_monitor(&mut s) else {
        eprintln!("{}: this desk cannot change its monitors", D::PLATFORM);
        return;
    };
    let ev = event(&mut s, "session.configured", |p| {
        contains(&p["surface"], &change.surface)
    });
    let surface = ev["payload"]["surface"].clone();
    assert_eq!(s.status()["surface"], surface);

    let here = s.ok("pointer.position", json!({}));
    let on_server = desk.pointer();
    let stale = s.tool("pointer.move", json!({"x": 500, "y": 500, "frame": f1}));
    assert_eq!(stale["error"]["code"], "stale_frame", "{stale}");
    assert_eq!(stale["error"]["data"]["frame"], f1, "{stale}");
    assert_eq!(
        s.ok("pointer.position", json!({})),
        here,
        "the pointer stayed"
    );
    assert_eq!(desk.pointer(), on_server, "the pointer stayed");

    let f2 = frame(&mut s);
    assert!(f2 > f1);
    s.ok("pointer.move", json!({"x": 500, "y": 500, "frame": f2}));
    // Where the display server puts canvas (500, 500) on the new surface.
    if let Some((px, py)) = desk.pointer() {
        let scale = surface["scale"].as_f64().unwrap_or(1.0);
        let ox = surface["physical"]["x"].as_i64().unwrap_or_default();
        let oy = surface["physical"]["y"].as_i64().unwrap_or_default();
        let (ex, ey) = (ox as f64 + 500.0 * scale, oy as f64 + 500.0 * scale);
        assert!(
            (px as f64 - ex).abs() <= 1.0 && (py as f64 - ey).abs() <= 1.0,
            "pointer at {px},{py}, canvas (500, 500) is {ex},{ey}"
        );
    }
}
