//! What only X11 has, end to end (the scenarios every desktop shares are the
//! conformance suite's, `conformance/`): `check` sees the display, `serve` with
//! `--platform auto` picks X11 (and says so); the panic hotkey pressed by another
//! client stops the session and pressed again releases nothing; a hotkey grab held
//! elsewhere is reported, not fatal; a config file's hotkey is held from the server's
//! start.

use crate::common;
use cc_test_kit::x11 as x11_support;

use common::Server;

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use x11_support::Desk;

const BIN: &str = env!("CARGO_BIN_EXE_computer-control");

fn command(desk: &Desk, args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    desk.env(&mut cmd);
    cmd.args(args)
        .env_remove("COMPUTER_CONTROL_CONFIG")
        .env("COMPUTER_CONTROL_LOG", "info");
    cmd
}

/// A `serve` process on the desk (stdio JSON-RPC), logging at `level`.
fn serve(desk: &Desk, level: &str) -> Server {
    let mut cmd = command(desk, &["serve"]);
    cmd.env("COMPUTER_CONTROL_LOG", level);
    Server::start_command(cmd)
}

/// The session's state, from `system.status`.
fn state(s: &mut Server) -> String {
    s.status()["state"].as_str().unwrap_or_default().to_string()
}

#[test]
fn check_reports_the_x11_desktop() {
    let desk = Desk::start();
    let out = command(&desk, &["check", "--json"]).output().unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["platform"]["backend"], "x11", "{v}");
    for k in [
        "platform",
        "display",
        "input",
        "capture",
        "accessibility",
        "hotkey",
    ] {
        assert_eq!(v[k]["status"], "ok", "{k}: {v}");
    }
    let text = command(&desk, &["check"]).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    assert!(
        text.contains("hotkey") && text.contains("ctrl+alt+f12"),
        "{text}"
    );
}

/// `serve` without `--platform` picks X11 on a desk with a display (and says so); the
/// panic hotkey pressed by another client stops the session, and pressed again
/// releases nothing.
#[test]
fn auto_picks_x11_and_the_hotkey_from_another_client_stops_the_session() {
    let desk = Desk::start();
    let mut s = serve(&desk, "info");
    let started = s.call("session.start", json!({}));
    assert_eq!(started["ok"], true, "{started}");
    assert_eq!(started["result"]["platform"], "x11", "{started}");
    assert!(s.stderr_text().contains("platform: x11"));

    // The panic hotkey from another client stops the session; again releases it.
    let out = desk.run("xdotool", &["key", "ctrl+alt+F12"]);
    assert!(out.status.success());
    let deadline = Instant::now() + Duration::from_secs(5);
    while state(&mut s) != "stopped" && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(state(&mut s), "stopped");
    let env = s.call(
        "tools.call",
        json!({"tool": "pointer.move", "arguments": {"x": 10, "y": 10}}),
    );
    assert_eq!(env["error"]["code"], "safety_stopped", "{env}");
    // Pressed again it releases nothing: any client of the display (a terminal the
    // agent opened) can send the chord. The stop is the operator's to release; on
    // stdio that is the host.
    desk.run("xdotool", &["key", "ctrl+alt+F12"]);
    let marker = s.call("system.status", json!(null));
    assert_eq!(marker["result"]["state"], "stopped", "{marker}");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(state(&mut s), "stopped");
    let env = s.call(
        "tools.call",
        json!({"tool": "pointer.move", "arguments": {"x": 10, "y": 10}}),
    );
    assert_eq!(env["error"]["code"], "safety_stopped", "{env}");
    s.method_ok("control.panic", json!({"on": false}));
    assert_eq!(state(&mut s), "ready");
    s.ok("pointer.move", json!({"x": 10, "y": 10}));
}

/// PROTOCOL §5.4: when another client holds the hotkey's grab, `check` says so (with
/// the reason) and a session still starts, reporting `capabilities.hotkey` false.
#[test]
fn a_hotkey_held_elsewhere_is_reported_by_check_and_the_session() {
    use cc_desktop::Driver;
    let desk = Desk::start();
    let holder = desk.driver();
    assert!(holder.capabilities().hotkey, "the holder has the grab");

    let out = command(&desk, &["check", "--json"]).output().unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["hotkey"]["status"], "degraded", "{v}");
    let why = v["hotkey"]["reason"].as_str().unwrap_or_default();
    assert!(why.contains("another client holds it"), "{why}");
    assert!(v["hotkey"]["next_step"].is_string(), "{v}");
    assert_eq!(v["display"]["status"], "ok", "{v}");
    let text = command(&desk, &["check"]).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    let line = text
        .lines()
        .find(|l| l.contains(" hotkey "))
        .unwrap_or_default();
    assert!(line.starts_with("degraded"), "{text}");

    let mut s = serve(&desk, "info");
    let started = s.call("session.start", json!({}));
    assert_eq!(started["ok"], true, "{started}");
    assert_eq!(
        started["result"]["capabilities"]["hotkey"], false,
        "{started}"
    );
    assert_eq!(
        started["result"]["capabilities"]["input"], true,
        "{started}"
    );
    drop(holder);
}

/// PROTOCOL §5.4: the hotkey a config file names is the server's from its start, not
/// from the first `session.start`: pressed before any session, it engages the stop
/// (which only the operator releases). A session naming another chord holds that one
/// while it runs; once it ends, the file's chord is the server's again.
#[test]
fn the_config_files_hotkey_is_held_from_the_servers_start() {
    let desk = Desk::start();
    let config = desk.path("hotkey-config.json");
    std::fs::write(
        &config,
        json!({"safety": {"emergency_hotkey": "ctrl+alt+f11"}}).to_string(),
    )
    .unwrap();
    let mut cmd = command(&desk, &["serve", "--config", config.to_str().unwrap()]);
    cmd.env("COMPUTER_CONTROL_LOG", "info");
    let mut s = Server::start_command(cmd);
    // Answered: the engine (and its grab) is up.
    assert_eq!(state(&mut s), "idle");

    let hotkey = |s: &mut Server, from: usize, kind: &str| {
        s.wait_event_matching(kind, from, |p| p["source"] == "hotkey")
            .0
    };
    assert!(
        desk.run("xdotool", &["key", "ctrl+alt+F11"])
            .status
            .success()
    );
    let on = hotkey(&mut s, 0, "safety.panic_triggered");
    let env = s.call("session.start", json!({}));
    assert_eq!(env["ok"], true, "{env}");
    assert_eq!(env["result"]["state"], "stopped", "{env}");
    let refused = s.tool("pointer.move", json!({"x": 10, "y": 10}));
    assert_eq!(refused["error"]["code"], "safety_stopped", "{refused}");
    s.method_ok("control.panic", json!({"on": false}));
    let off = s
        .wait_event_matching("safety.panic_released", on, |_| true)
        .0;
    assert_eq!(state(&mut s), "ready");
    s.method_ok("session.stop", json!(null));

    // A session naming its own chord holds it while it runs ...
    s.start_session(json!({"config": {"safety": {"emergency_hotkey": "ctrl+alt+f10"}}}));
    assert!(
        desk.run("xdotool", &["key", "ctrl+alt+F10"])
            .status
            .success()
    );
    let on = hotkey(&mut s, off, "safety.panic_triggered");
    s.method_ok("control.panic", json!({"on": false}));
    let off = s
        .wait_event_matching("safety.panic_released", on, |_| true)
        .0;
    s.method_ok("session.stop", json!(null));
    // ... and after it the file's chord is the server's again, session or not.
    assert!(
        desk.run("xdotool", &["key", "ctrl+alt+F11"])
            .status
            .success()
    );
    hotkey(&mut s, off, "safety.panic_triggered");
    let env = s.call("session.start", json!({}));
    assert_eq!(env["result"]["state"], "stopped", "{env}");
}
