//! The window under a point on a headless sway (`Driver::window_at`): the tree's
//! visible views in sway's own stacking. A floating terminal over the focused tiled
//! one is what a click there reaches, though the window list puts the focused one
//! first; in the scratchpad or on another workspace it is under no point, though sway
//! still reports a rectangle for it; a fullscreen view covers the floating ones.

use cc_test_kit::sway as wlroots_support;

use std::time::Duration;

use cc_desktop::Driver;
use cc_desktop_wlroots::{WlrootsDesktop, WlrootsOptions};
use wlroots_support::Desk;

fn driver(desk: &Desk) -> WlrootsDesktop {
    WlrootsDesktop::connect_with(WlrootsOptions {
        display: Some(desk.path("wayland-1").display().to_string()),
        swaysock: Some(desk.swaysock.clone()),
        // The desk's bus belongs to the desk user; these tests run as root.
        session_bus: Some("unix:path=/nonexistent".into()),
    })
    .expect("connect to the desk")
}

fn app_at(d: &mut WlrootsDesktop, (x, y): (i32, i32)) -> Option<String> {
    d.window_at(x, y).expect("window_at").map(|w| w.app_id)
}

/// Waits until sway reports the view of `app` as (not) visible.
fn wait_visible(desk: &Desk, app: &str, visible: bool) {
    desk.wait_until(
        &format!("{app} visible: {visible}"),
        Duration::from_secs(10),
        || {
            desk.views()
                .iter()
                .any(|v| v["app_id"] == app && v["visible"] == visible)
        },
    );
}

#[test]
fn the_window_at_a_point_follows_sways_stacking() {
    let mut desk = Desk::start();
    desk.spawn("foot", &["--app-id", "cc-tiled", "cat"]);
    desk.wait_view("cc-tiled");
    desk.spawn("foot", &["--app-id", "cc-float", "cat"]);
    desk.wait_view("cc-float");
    desk.swaymsg(&["[app_id=cc-float]", "floating", "enable"]);
    desk.swaymsg(&["[app_id=cc-float]", "resize", "set", "600", "400"]);
    desk.swaymsg(&["[app_id=cc-float]", "move", "position", "100", "100"]);
    desk.swaymsg(&["[app_id=cc-tiled]", "focus"]);
    let mut d = driver(&desk);
    let at = (300, 300);
    desk.wait_until(
        "the floating terminal in place",
        Duration::from_secs(10),
        || {
            d.windows().is_ok_and(|ws| {
                ws.iter()
                    .any(|w| w.app_id == "cc-float" && w.rect.x == 100 && w.rect.y == 100)
                    && ws.iter().any(|w| w.app_id == "cc-tiled" && w.focused)
            })
        },
    );
    // The list puts the focused tiled terminal first, over the point too.
    let listed = d.windows().unwrap();
    assert_eq!(listed[0].app_id, "cc-tiled", "{listed:?}");
    assert!(listed[0].rect.contains(at.0, at.1), "{listed:?}");
    assert_eq!(app_at(&mut d, at).as_deref(), Some("cc-float"));
    assert_eq!(app_at(&mut d, (1800, 900)).as_deref(), Some("cc-tiled"));

    // In the scratchpad: hidden, under no point.
    desk.swaymsg(&["[app_id=cc-float]", "move", "scratchpad"]);
    wait_visible(&desk, "cc-float", false);
    assert_eq!(app_at(&mut d, at).as_deref(), Some("cc-tiled"));

    // On another workspace: listed with a rectangle over the point, under none.
    let workspaces: serde_json::Value =
        serde_json::from_str(&desk.swaymsg(&["-t", "get_workspaces"])).unwrap();
    let here = workspaces
        .as_array()
        .and_then(|ws| ws.iter().find(|w| w["focused"] == true))
        .and_then(|w| w["name"].as_str())
        .expect("a focused workspace")
        .to_string();
    desk.swaymsg(&["[app_id=cc-float]", "scratchpad", "show"]);
    wait_visible(&desk, "cc-float", true);
    desk.swaymsg(&["[app_id=cc-float]", "move", "position", "100", "100"]);
    desk.swaymsg(&[
        "[app_id=cc-float]",
        "move",
        "container",
        "to",
        "workspace",
        "9",
    ]);
    wait_visible(&desk, "cc-float", false);
    let float = d
        .windows()
        .unwrap()
        .into_iter()
        .find(|w| w.app_id == "cc-float")
        .expect("still listed");
    assert!(float.rect.contains(at.0, at.1), "{float:?}");
    assert_eq!(app_at(&mut d, at).as_deref(), Some("cc-tiled"));

    // Back, then covered by the tiled terminal made fullscreen.
    desk.swaymsg(&[
        "[app_id=cc-float]",
        "move",
        "container",
        "to",
        "workspace",
        &here,
    ]);
    wait_visible(&desk, "cc-float", true);
    desk.swaymsg(&["[app_id=cc-float]", "move", "position", "100", "100"]);
    assert_eq!(app_at(&mut d, at).as_deref(), Some("cc-float"));
    desk.swaymsg(&["[app_id=cc-tiled]", "fullscreen", "enable"]);
    desk.wait_until(
        "the fullscreen terminal on top",
        Duration::from_secs(10),
        || app_at(&mut d, at).as_deref() == Some("cc-tiled"),
    );
}
