//! PROTOCOL §5.2 window rules on a real X11 desk with openbox: a pointer action is
//! judged on the window the X server would deliver it to. A terminal the agent
//! maximized then minimized stays in openbox's client list, topmost, at its old
//! full-screen rectangle: it must not shadow the window beneath, so a `deny` rule on
//! that window still denies and a `confirm` rule still asks. A menu (an
//! override-redirect window no window manager lists) over an allowed window is what a
//! click there reaches, so an allowlist does not let the click through; a window moved
//! or covered by a maximized one is judged where it is now.

use crate::common;
use cc_test_kit::x11 as x11_support;

use common::Server;
use serde_json::{Value, json};
use x11_support::Desk;

use cc_protocol::PhysicalRect;

/// `serve --platform x11` (stdio) on the desk, and a session whose canvas is the
/// screen's own pixels, with `safety`.
fn session(desk: &Desk, safety: Value) -> Server {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_computer-control"));
    desk.env(&mut cmd);
    cmd.args(["serve", "--platform", "x11"])
        .env_remove("COMPUTER_CONTROL_CONFIG")
        .env("COMPUTER_CONTROL_LOG", "warn");
    let mut s = Server::start_command(cmd);
    let started = s.call(
        "session.start",
        json!({"capture": {"default_width": 1280}, "safety": safety}),
    );
    assert_eq!(started["ok"], true, "{started}");
    assert_eq!(
        started["result"]["surface"]["display_width_px"], 1280,
        "{started}"
    );
    s
}

fn centre(r: PhysicalRect) -> (i32, i32) {
    (r.x + r.width as i32 / 2, r.y + r.height as i32 / 2)
}

fn click(s: &mut Server, (x, y): (i32, i32)) -> Value {
    s.tool("pointer.click", json!({"x": x, "y": y}))
}

fn denied(env: &Value, rule: Value, what: &str) {
    assert_eq!(env["ok"], false, "{what} ran: {env}");
    assert_eq!(env["error"]["code"], "policy_denied", "{what}: {env}");
    assert_eq!(env["error"]["data"]["rule"], rule, "{what}: {env}");
}

#[test]
fn a_minimized_window_shadows_no_window_rule() {
    let mut desk = Desk::start_sized(1280, 800);
    let guarded = desk.xterm("guarded", "50x15+40+60");
    let careful = desk.xterm("careful", "50x15+700+60");
    let shadow = desk.xterm("shadow", "30x8+500+500");
    desk.maximize(shadow);
    desk.minimize(shadow);
    let on_guarded = centre(desk.listed(guarded).unwrap().rect);
    let on_careful = centre(desk.listed(careful).unwrap().rect);

    let mut s = session(
        &desk,
        json!({"rules": [
            {"match": {"tool": "pointer.*", "window": {"title": "guarded"}}, "effect": "deny"},
            {"match": {"tool": "pointer.click", "window": {"title": "careful"}}, "effect": "confirm"},
        ]}),
    );
    // The premise: the window list keeps the minimized terminal first, over both.
    let listed = s.ok("window.list", json!({}));
    let first = &listed["windows"][0];
    assert_eq!(first["id"], shadow, "{listed}");
    let g = |k: &str| first["rect"][k].as_i64().unwrap() as i32;
    let listed_rect = PhysicalRect {
        x: g("x"),
        y: g("y"),
        width: g("width") as u32,
        height: g("height") as u32,
    };
    for (x, y) in [on_guarded, on_careful] {
        assert!(listed_rect.contains(x, y), "({x},{y}): {listed}");
    }

    let env = click(&mut s, on_guarded);
    assert_eq!(
        env["error"]["code"], "policy_denied",
        "a click on guarded: {env}"
    );
    assert_eq!(env["error"]["data"]["rule"]["index"], 0, "{env}");
    let env = s.tool(
        "pointer.drag",
        json!({"from": {"x": on_careful.0, "y": on_careful.1},
               "to": {"x": on_guarded.0, "y": on_guarded.1}}),
    );
    assert_eq!(
        env["error"]["code"], "policy_denied",
        "a drag onto guarded: {env}"
    );

    let env = click(&mut s, on_careful);
    assert_eq!(env["ok"], true, "{env}");
    assert_eq!(
        env["result"]["status"], "awaiting_confirmation",
        "the confirm rule on careful asks: {env}"
    );
    let id = env["result"]["request_id"].as_str().unwrap().to_string();
    let answer = s.confirm(&id, false);
    assert_eq!(answer["status"], "denied", "{answer}");
}

#[test]
fn a_menu_over_an_allowed_window_is_judged_as_itself() {
    let mut desk = Desk::start_sized(1280, 800);
    let open = desk.xterm("open", "50x15+40+60");
    let mut s = session(
        &desk,
        json!({"default_rule": "deny", "rules": [
            {"match": {"tool": "pointer.click", "window": {"title": "open"}}, "effect": "allow"},
        ]}),
    );
    let rect = desk.listed(open).unwrap().rect;
    let at = centre(rect);
    s.ok("pointer.click", json!({"x": at.0, "y": at.1}));

    // A menu no window manager lists, mapped over the allowed window: a click there
    // reaches the menu, which no rule allows.
    let menu_rect = PhysicalRect {
        x: at.0 - 60,
        y: at.1 - 30,
        width: 120,
        height: 60,
    };
    let menu = desk.override_redirect(menu_rect, "cc-menu", "", None, false);
    denied(
        &click(&mut s, at),
        json!("default_rule"),
        "a click on the menu",
    );
    // A click-through overlay is not what the click reaches.
    menu.unmap();
    let _overlay = desk.override_redirect(menu_rect, "cc-overlay", "", None, true);
    s.ok("pointer.click", json!({"x": at.0, "y": at.1}));

    // Moved: judged where it is now; where it was is the bare desktop.
    let moved = desk.move_window(open, 700, 400);
    let now = centre(moved);
    s.ok("pointer.click", json!({"x": now.0, "y": now.1}));
    denied(&click(&mut s, at), json!("default_rule"), "where it was");

    // Covered by a maximized terminal, the window is not what a click reaches.
    let cover = desk.xterm("cover", "30x8+100+100");
    desk.maximize(cover);
    denied(
        &click(&mut s, now),
        json!("default_rule"),
        "a covered window",
    );
}
