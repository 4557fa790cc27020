//! The monitor layout on a real X server: `xrandr --setmonitor` splits the screen into
//! two monitors, the driver reports `LayoutChanged` once and the new rectangles, and
//! captures and pointer moves land on the right monitor. X has no pixels at negative
//! root coordinates, so a monitor defined there is clipped away (documented).

use cc_test_kit::x11 as x11_support;

use std::time::Duration;

use cc_desktop::{Driver, DriverEvent};
use cc_desktop_x11::X11Desktop;
use cc_protocol::PhysicalRect;
use x11_support::Desk;

fn r(x: i32, y: i32, w: u32, h: u32) -> PhysicalRect {
    PhysicalRect {
        x,
        y,
        width: w,
        height: h,
    }
}

fn xrandr(desk: &Desk, args: &[&str]) {
    let out = desk.run("xrandr", args);
    assert!(
        out.status.success(),
        "xrandr {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Polls until the driver reports a layout change (and exactly one event for it).
fn wait_layout_changed(desk: &Desk, d: &mut X11Desktop) {
    let mut seen = 0;
    desk.wait_until("LayoutChanged", Duration::from_secs(5), || {
        seen += d
            .poll_events()
            .iter()
            .filter(|e| **e == DriverEvent::LayoutChanged)
            .count();
        seen > 0
    });
    std::thread::sleep(Duration::from_millis(100));
    let again = d
        .poll_events()
        .iter()
        .filter(|e| **e == DriverEvent::LayoutChanged)
        .count();
    assert_eq!(seen + again, 1, "one change, one event");
}

#[test]
fn setmonitor_splits_the_screen_into_two_displays() {
    let desk = Desk::start();
    let mut d = desk.driver();
    let before = d.layout().unwrap();
    assert_eq!(before.displays.len(), 1);
    assert_eq!(before.displays[0].rect, r(0, 0, 1920, 1080));
    assert!(before.displays[0].primary);
    assert!(d.poll_events().is_empty());

    xrandr(&desk, &[]); // RandR fills in its outputs on the first full query
    xrandr(
        &desk,
        &["--setmonitor", "LEFT", "960/254x1080/286+0+0", "screen"],
    );
    xrandr(
        &desk,
        &["--setmonitor", "RIGHT", "960/254x1080/286+960+0", "none"],
    );
    wait_layout_changed(&desk, &mut d);
    let after = d.layout().unwrap();
    assert!(after.generation > before.generation);
    let rects: Vec<(String, PhysicalRect)> = after
        .displays
        .iter()
        .map(|m| (m.name.clone(), m.rect))
        .collect();
    assert_eq!(
        rects,
        [
            ("LEFT".to_string(), r(0, 0, 960, 1080)),
            ("RIGHT".to_string(), r(960, 0, 960, 1080))
        ]
    );
    assert_eq!(after.displays.iter().filter(|m| m.primary).count(), 1);

    // Each display's capture is its part of the screen; the pointer lands on it.
    let whole = d.capture(r(0, 0, 1920, 1080)).unwrap();
    for m in &after.displays {
        let img = d.capture(m.rect).unwrap();
        assert_eq!((img.width, img.height), (m.rect.width, m.rect.height));
        assert_eq!(img.get(5, 7), whole.get(m.rect.x as u32 + 5, 7));
        let (cx, cy) = (m.rect.x + 480, 540);
        d.pointer_move(cx, cy).unwrap();
        assert_eq!(d.pointer_position().unwrap(), (cx, cy));
        assert!(m.rect.contains(cx, cy));
    }

    // A monitor left of the screen has no pixels on X: it is clipped away.
    xrandr(
        &desk,
        &["--setmonitor", "NEG", "800/200x1080/286+-800+0", "none"],
    );
    std::thread::sleep(Duration::from_millis(700));
    d.poll_events();
    let neg = d.layout().unwrap();
    assert_eq!(
        neg.displays
            .iter()
            .map(|m| m.name.as_str())
            .collect::<Vec<_>>(),
        ["LEFT", "RIGHT"]
    );
    // One that straddles the edge keeps its on-screen part.
    xrandr(
        &desk,
        &["--setmonitor", "EDGE", "400/100x300/100+-100+50", "none"],
    );
    wait_layout_changed(&desk, &mut d);
    let edge = d.layout().unwrap();
    let e = edge.displays.iter().find(|m| m.name == "EDGE").unwrap();
    assert_eq!(e.rect, r(0, 50, 300, 300));
    assert!(d.capture(e.rect).is_ok());

    // Back to one monitor: one more change.
    for name in ["LEFT", "RIGHT", "NEG", "EDGE"] {
        xrandr(&desk, &["--delmonitor", name]);
    }
    wait_layout_changed(&desk, &mut d);
    let back = d.layout().unwrap();
    assert_eq!(back.displays.len(), 1);
    assert_eq!(back.displays[0].rect, r(0, 0, 1920, 1080));
}
