//! A vendor vocabulary on a real X11 desktop: Anthropic's computer tool, shown the
//! 1920x1080 screen as 1366x768 (its reference's FWXGA), clicks a checkbox of
//! gtk3-widget-factory at the point read off the scaled screenshot; the click lands on
//! the X server where the reference's rounding puts it, and the checkbox is checked.

use crate::common;
use cc_test_kit::x11 as x11_support;

use common::{find_where, has_state, unchecked_checkbox};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{Server, center};
use serde_json::json;
use x11_support::Desk;

#[test]
fn anthropic_clicks_a_gtk_checkbox_read_off_the_scaled_screenshot() {
    let mut desk = Desk::start();
    let window_id = {
        let mut d = desk.driver();
        desk.widget_factory(&mut d)
    };
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_computer-control"));
    desk.env(&mut cmd);
    cmd.args(["serve", "--platform", "x11"])
        .env_remove("COMPUTER_CONTROL_CONFIG")
        .env("COMPUTER_CONTROL_LOG", "warn");
    let mut s = Server::start_command(cmd);
    // The operator's canvas of 1920, so the reference's scaling is that of a
    // 1920×1080 screen.
    let started = s.call("session.start", json!({"capture": {"default_width": 1920}}));
    assert_eq!(started["ok"], true, "{started}");
    let surface = &started["result"]["surface"];
    assert_eq!(
        (&surface["display_width_px"], &surface["display_height_px"]),
        (&json!(1920), &json!(1080))
    );

    // The model's first look: 1366x768.
    let shot = s.ok("anthropic.computer", json!({"action": "screenshot"}));
    let data = shot["content"][0]["source"]["data"].as_str().unwrap();
    use base64::Engine as _;
    let png = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap();
    let (w, h, _, _) = common::decode_png(&png);
    assert_eq!((w, h), (1366, 768));

    let snap = s.ok("a11y.snapshot", json!({"level": "full"}));
    let window = find_where(&snap["tree"], "window", &|w| w["window_id"] == window_id).unwrap();
    let cb = unchecked_checkbox(window);
    let (cx, cy) = center(&cb);
    // Where the model sees it, and where the reference scales it back.
    let (mx, my) = (
        (cx as f64 * 1366.0 / 1920.0).round(),
        (cy as f64 * 768.0 / 1080.0).round(),
    );
    let (bx, by) = (
        (mx * 1920.0 / 1366.0).round() as i64,
        (my * 1080.0 / 768.0).round() as i64,
    );
    let r = s.ok(
        "anthropic.computer",
        json!({"action": "left_click", "coordinate": [mx as i64, my as i64]}),
    );
    assert_eq!(r["is_error"], false);
    let (px, py) = desk.pointer();
    assert_eq!((i64::from(px), i64::from(py)), (bx, by), "on the X server");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let snap = s.ok("a11y.snapshot", json!({"level": "full"}));
        let now = find_where(&snap["tree"], "checkbox", &|n| {
            n["name"] == cb["name"] && n["rect"] == cb["rect"]
        })
        .cloned()
        .unwrap_or_default();
        if has_state(&now, "checked") {
            break;
        }
        assert!(Instant::now() < deadline, "{cb} was not checked");
        std::thread::sleep(Duration::from_millis(100));
    }
    let p = s.ok("anthropic.computer", json!({"action": "cursor_position"}));
    assert_eq!(
        p["content"][0]["text"],
        format!("X={},Y={}", mx as i64, my as i64)
    );
}
