//! `safety.visual_indicator` on X11, read back from the X server over a connection of
//! the test's own: while the emergency stop is on, a red banner across the top of the
//! screen says only the operator can release it; while an agent's input is injected, a
//! small amber one says an agent acts; both take no input (the pointer's window beneath
//! them is whatever is under the banner), and both go away when their reason does.
//! Turned off in the config, nothing is drawn.

use crate::common;
use cc_test_kit::x11 as x11_support;

use common::Server;

use std::process::Command;
use std::time::Duration;

use serde_json::json;
use x11_support::Desk;
use x11rb::connection::Connection as _;
use x11rb::protocol::shape::{ConnectionExt as _, SK};
use x11rb::protocol::xproto::{AtomEnum, ConnectionExt as _, ImageFormat, MapState};

const BIN: &str = env!("CARGO_BIN_EXE_computer-control");

fn serve(desk: &Desk) -> Server {
    let mut cmd = Command::new(BIN);
    desk.env(&mut cmd);
    cmd.args(["serve", "--platform", "x11"])
        .env_remove("COMPUTER_CONTROL_CONFIG")
        .env("COMPUTER_CONTROL_LOG", "info");
    Server::start_command(cmd)
}

/// One banner as the X server knows it.
#[derive(Debug)]
struct Banner {
    window: u32,
    name: String,
    x: i16,
    y: i16,
    width: u16,
    height: u16,
    /// Rectangles of its input region: none means clicks pass through.
    input_rects: usize,
}

/// Every mapped indicator window on the desk's screen.
fn banners(desk: &Desk) -> Vec<Banner> {
    let (conn, screen) = desk.x_connection();
    let root = conn.setup().roots[screen].root;
    let tree = conn.query_tree(root).unwrap().reply().unwrap();
    let mut out = Vec::new();
    for w in tree.children {
        let Ok(attrs) = conn.get_window_attributes(w).unwrap().reply() else {
            continue;
        };
        if !attrs.override_redirect || attrs.map_state != MapState::VIEWABLE {
            continue;
        }
        let class = conn
            .get_property(false, w, AtomEnum::WM_CLASS, AtomEnum::STRING, 0, 256)
            .unwrap()
            .reply()
            .map(|r| r.value)
            .unwrap_or_default();
        if !String::from_utf8_lossy(&class).contains("computer-control-indicator") {
            continue;
        }
        let name = conn
            .get_property(false, w, AtomEnum::WM_NAME, AtomEnum::STRING, 0, 256)
            .unwrap()
            .reply()
            .map(|r| String::from_utf8_lossy(&r.value).into_owned())
            .unwrap_or_default();
        // Windows come and go while the tree is read: one gone since is skipped.
        let Ok(geo) = conn.get_geometry(w).unwrap().reply() else {
            continue;
        };
        let Ok(input) = conn.shape_get_rectangles(w, SK::INPUT).unwrap().reply() else {
            continue;
        };
        out.push(Banner {
            window: w,
            name,
            x: geo.x,
            y: geo.y,
            width: geo.width,
            height: geo.height,
            input_rects: input.rectangles.len(),
        });
    }
    out
}

/// The screen's pixel at (x, y) as (r, g, b), read by the X server.
fn pixel(desk: &Desk, x: i16, y: i16) -> (u8, u8, u8) {
    let (conn, screen) = desk.x_connection();
    let root = conn.setup().roots[screen].root;
    let img = conn
        .get_image(ImageFormat::Z_PIXMAP, root, x, y, 1, 1, !0)
        .unwrap()
        .reply()
        .unwrap();
    // Xvfb's 24-bit TrueColor: BGRX bytes.
    (img.data[2], img.data[1], img.data[0])
}

/// Where the X server says the pointer is over, after moving it to (x, y): the
/// window that would receive a click there.
fn window_under(desk: &Desk, x: i16, y: i16) -> u32 {
    let (conn, screen) = desk.x_connection();
    let root = conn.setup().roots[screen].root;
    conn.warp_pointer(x11rb::NONE, root, 0, 0, 0, 0, x, y)
        .unwrap();
    conn.flush().unwrap();
    conn.query_pointer(root).unwrap().reply().unwrap().child
}

#[test]
fn the_stop_shows_a_click_through_banner_until_the_operator_releases_it() {
    let desk = Desk::start();
    let mut s = serve(&desk);
    let started = s.call("session.start", json!({}));
    assert_eq!(started["ok"], true, "{started}");
    assert!(banners(&desk).is_empty(), "{:?}", banners(&desk));

    let panic = s.call("control.panic", json!({"on": true}));
    assert_eq!(panic["result"]["state"], "stopped", "{panic}");
    desk.wait_until("the stop banner", Duration::from_secs(10), || {
        banners(&desk).iter().any(|b| b.name.contains("STOPPED"))
    });
    let shown = banners(&desk);
    assert_eq!(shown.len(), 1, "one banner per monitor: {shown:?}");
    let b = &shown[0];
    assert!(b.name.contains("only the operator can release it"), "{b:?}");
    assert_eq!((b.x, b.y, b.width), (0, 0, 1920), "across the top: {b:?}");
    assert_eq!(b.input_rects, 0, "takes no input: {b:?}");
    // The person sees it: the screen's pixels at its edge are its red.
    let (r, g, bl) = pixel(&desk, 2, 2);
    assert!(r > 0xb0 && g < 0x40 && bl < 0x40, "({r}, {g}, {bl})");
    // A click there goes to what is beneath, never to the banner.
    let under = window_under(&desk, 960, (b.height / 2) as i16);
    assert_ne!(under, b.window, "the pointer's window is the banner");

    // An agent's release is refused over its channels elsewhere; here the host (the
    // operator's channel on stdio) releases, and the banner goes.
    let released = s.call("control.panic", json!({"on": false}));
    assert_eq!(released["result"]["state"], "ready", "{released}");
    desk.wait_until("the stop banner to go", Duration::from_secs(10), || {
        banners(&desk).is_empty()
    });
}

#[test]
fn an_agent_acting_shows_a_discreet_banner_only_while_its_input_runs() {
    let desk = Desk::start();
    let mut s = serve(&desk);
    let started = s.call("session.start", json!({}));
    assert_eq!(started["ok"], true, "{started}");
    // About three seconds of typing into the root window (nothing listens).
    let id = s.send(
        "tools.call",
        json!({"tool": "keyboard.type", "arguments": {"text": "x".repeat(100), "interval_ms": 30}}),
    );
    desk.wait_until("the acting banner", Duration::from_secs(10), || {
        banners(&desk)
            .iter()
            .any(|b| b.name.contains("an agent is acting"))
    });
    let shown = banners(&desk);
    let b = &shown[0];
    assert!(b.width < 1920 && b.y == 0, "small, at the top: {b:?}");
    assert_eq!(b.input_rects, 0, "takes no input: {b:?}");
    let typed = s.response(id)["result"].clone();
    assert_eq!(typed["ok"], true, "{typed}");
    desk.wait_until("the acting banner to go", Duration::from_secs(10), || {
        banners(&desk).is_empty()
    });
}

#[test]
fn turned_off_in_the_config_nothing_is_drawn() {
    let desk = Desk::start();
    let mut s = serve(&desk);
    let started = s.call(
        "session.start",
        json!({"config": {"safety": {"visual_indicator": false}}}),
    );
    assert_eq!(started["ok"], true, "{started}");
    s.ok("keyboard.type", json!({"text": "abc", "interval_ms": 30}));
    let panic = s.call("control.panic", json!({"on": true}));
    assert_eq!(panic["result"]["state"], "stopped", "{panic}");
    // The worker shows the stop on its next tick (20 ms); ten of them pass.
    std::thread::sleep(Duration::from_millis(200));
    assert!(banners(&desk).is_empty(), "{:?}", banners(&desk));
    let released = s.call("control.panic", json!({"on": false}));
    assert_eq!(released["result"]["state"], "ready", "{released}");
}

/// Whether an RGB pixel is the acting banner's amber.
fn amber(px: &[u8]) -> bool {
    px[0] > 0xe0 && (0x90..0xc0).contains(&px[1]) && px[2] < 0x40
}

#[test]
fn a_capture_right_after_an_action_shows_the_desktop_not_the_acting_banner() {
    let desk = Desk::start();
    let mut s = serve(&desk);
    // The whole screen at full size, so the capture's top rows are the banner's place.
    let started = s.call("session.start", json!({"capture": {"default_width": 1920}}));
    assert_eq!(started["ok"], true, "{started}");
    // Three seconds of typing: the banner is up, and the screen shows it.
    let id = s.send(
        "tools.call",
        json!({"tool": "keyboard.type", "arguments": {"text": "x".repeat(100), "interval_ms": 30}}),
    );
    desk.wait_until("the acting banner", Duration::from_secs(10), || {
        banners(&desk)
            .iter()
            .any(|b| b.name.contains("an agent is acting"))
    });
    let b = banners(&desk).remove(0);
    let (bx, by) = (b.x + 4, b.y + 2);
    desk.wait_until("the banner's pixels", Duration::from_secs(10), || {
        let (r, g, bl) = pixel(&desk, bx, by);
        amber(&[r, g, bl])
    });
    let typed = s.response(id)["result"].clone();
    assert_eq!(typed["ok"], true, "{typed}");
    // Actions in a burst, each followed at once by a capture: none shows the banner.
    for i in 0..5 {
        s.ok("pointer.click", json!({"x": 900 + i, "y": 600}));
        let shot = s.ok(
            "screen.capture",
            json!({"size": "canvas", "format": "png", "if_changed": false}),
        );
        let url = shot["data_url"].as_str().expect("an image").to_string();
        let (w, _, _, px) = common::decode_png(&common::data_url_bytes(&url));
        assert_eq!(w, 1920, "the full-size screen");
        let at = (usize::try_from(by).unwrap() * 1920 + usize::try_from(bx).unwrap()) * 3;
        assert!(
            !amber(&px[at..at + 3]),
            "capture {i} shows the acting banner at ({bx}, {by})"
        );
    }
    // And the banner does not stay once the actions are over.
    desk.wait_until("the acting banner to go", Duration::from_secs(10), || {
        banners(&desk).is_empty()
    });
}
