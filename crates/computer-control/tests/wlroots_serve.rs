//! What only a wlroots compositor has, end to end, on a headless sway desk (the
//! scenarios every desktop shares are the conformance suite's, `conformance/`):
//! `check` lists the compositor's protocols, `serve --platform auto` picks the wlroots
//! driver, an Xwayland window is listed and acted on, a rule on a floating window holds
//! over the focused tiled one, the stop key (a compositor binding creating the panic
//! file) stops the session, a missing compositor is explained, and the clipboard's
//! Wayland specifics. The server runs as the desk's user, like everything on the desk.

use crate::common;
use cc_test_kit::sway as wlroots_support;

use common::Server;

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wlroots_support::{Desk, DeskOptions};

const BIN: &str = env!("CARGO_BIN_EXE_computer-control");

fn command(desk: &Desk, args: &[&str]) -> Command {
    let mut cmd = desk.command(BIN);
    cmd.args(args).env("COMPUTER_CONTROL_LOG", "info");
    cmd
}

/// A `serve` process on the desk (stdio JSON-RPC), logging at `level`.
fn serve(desk: &Desk, level: &str) -> Server {
    let mut cmd = command(desk, &["serve"]);
    cmd.env("COMPUTER_CONTROL_LOG", level);
    Server::start_command(cmd)
}

fn state(s: &mut Server) -> String {
    s.status()["state"].as_str().unwrap_or_default().to_string()
}

fn event(s: &mut Server, kind: &str, pred: impl Fn(&Value) -> bool) -> Value {
    s.wait_event_matching(kind, 0, pred).1
}

/// The window whose app id contains `app_id`, from `window.list`, waiting for it.
fn window(s: &mut Server, app_id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let list = s.ok("window.list", json!({}));
        if let Some(w) = list["windows"].as_array().and_then(|ws| {
            ws.iter()
                .find(|w| w["app_id"].as_str().is_some_and(|a| a.contains(app_id)))
        }) {
            return w.clone();
        }
        assert!(Instant::now() < deadline, "no {app_id} window: {list}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn check_and_auto_find_the_wlroots_compositor() {
    let desk = Desk::start();
    let out = command(&desk, &["check", "--json"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["platform"]["backend"], "wlroots", "{v}");
    let protocols = v["platform"]["protocols"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for name in [
        "zwlr_virtual_pointer_manager_v1",
        "zwp_virtual_keyboard_manager_v1",
        "zwlr_screencopy_manager_v1",
        "zxdg_output_manager_v1",
        "zwlr_foreign_toplevel_manager_v1",
    ] {
        let p = protocols.iter().find(|p| p["name"] == name);
        assert_eq!(p.map(|p| &p["present"]), Some(&json!(true)), "{name}: {v}");
    }
    for area in ["platform", "display", "input", "capture", "accessibility"] {
        assert_eq!(v[area]["status"], "ok", "{area}: {v}");
    }
    assert!(
        v["display"]["window_geometry"]
            .as_str()
            .is_some_and(|g| g.contains("sway IPC")),
        "{v}"
    );
    // No global grab on Wayland: the stop is a compositor binding, and check says how.
    assert_eq!(v["hotkey"]["status"], "degraded", "{v}");
    assert!(
        v["hotkey"]["next_step"]
            .as_str()
            .is_some_and(|s| s.contains("bindsym")),
        "{v}"
    );
    let mut s = serve(&desk, "info");
    let started = s.call("session.start", json!({}));
    assert_eq!(started["ok"], true, "{started}");
    assert_eq!(started["result"]["platform"], "wlroots", "{started}");
    assert!(
        s.stderr_text().contains("platform: wlroots"),
        "{}",
        s.stderr_text()
    );
}

/// An X11 client under Xwayland is listed (by its class) and acted on: focused and
/// typed into.
#[test]
fn an_xwayland_window_is_listed_and_acted_on() {
    let mut desk = Desk::start_with(DeskOptions {
        xwayland: true,
        ..DeskOptions::default()
    });
    let file = desk.path("xterm.txt");
    desk.spawn(
        "xterm",
        &[
            "-u8",
            "-e",
            "sh",
            "-c",
            &format!("cat > '{}'", file.display()),
        ],
    );
    let mut s = serve(&desk, "info");
    assert_eq!(s.call("session.start", json!({}))["ok"], true);
    let w = window(&mut s, "XTerm");
    assert!(w["pid"].is_u64(), "{w}");
    s.ok("window.focus", json!({"id": w["id"]}));
    let list = s.ok("window.list", json!({}));
    let focused = list["windows"]
        .as_array()
        .and_then(|ws| ws.iter().find(|x| x["id"] == w["id"]))
        .cloned()
        .unwrap();
    assert_eq!(focused["focused"], true, "{list}");
    std::thread::sleep(Duration::from_millis(300));
    let text = "xwayland héllo\n";
    s.ok("keyboard.type", json!({"text": text}));
    desk.wait_until("the text from xterm", Duration::from_secs(10), || {
        std::fs::read_to_string(&file).is_ok_and(|t| t == text)
    });
}

/// PROTOCOL §5.2 on sway: a floating window over the focused tiled one is what a click
/// there reaches, so a `deny` rule on it holds though the window list puts the focused
/// window first; in the scratchpad it is under no point, and the click lands on the
/// tiled window.
#[test]
fn a_rule_on_a_floating_window_holds_over_the_focused_tiled_one() {
    let mut desk = Desk::start();
    let mut s = serve(&desk, "warn");
    let started = s.call(
        "session.start",
        json!({"capture": {"default_width": 1920}, "safety": {"rules": [
            {"match": {"tool": "pointer.*", "window": {"app": "cc-float"}}, "effect": "deny"},
        ]}}),
    );
    assert_eq!(started["ok"], true, "{started}");
    desk.spawn("foot", &["--app-id", "cc-tiled", "cat"]);
    window(&mut s, "cc-tiled");
    desk.spawn("foot", &["--app-id", "cc-float", "cat"]);
    window(&mut s, "cc-float");
    desk.swaymsg(&["[app_id=cc-float]", "floating", "enable"]);
    desk.swaymsg(&["[app_id=cc-float]", "resize", "set", "600", "400"]);
    desk.swaymsg(&["[app_id=cc-float]", "move", "position", "100", "100"]);
    desk.swaymsg(&["[app_id=cc-tiled]", "focus"]);
    desk.wait_until(
        "the floating terminal in place",
        Duration::from_secs(10),
        || {
            let list = s.ok("window.list", json!({}));
            let ws = list["windows"].as_array().cloned().unwrap_or_default();
            ws.first()
                .is_some_and(|w| w["app_id"] == "cc-tiled" && w["focused"] == true)
                && ws
                    .iter()
                    .any(|w| w["app_id"] == "cc-float" && w["rect"]["x"] == 100)
        },
    );
    let env = s.tool("pointer.click", json!({"x": 300, "y": 300}));
    assert_eq!(env["error"]["code"], "policy_denied", "{env}");
    assert_eq!(env["error"]["data"]["rule"]["index"], 0, "{env}");

    desk.swaymsg(&["[app_id=cc-float]", "move", "scratchpad"]);
    desk.wait_until(
        "the floating terminal hidden",
        Duration::from_secs(10),
        || {
            desk.views()
                .iter()
                .any(|v| v["app_id"] == "cc-float" && v["visible"] == false)
        },
    );
    s.ok("pointer.click", json!({"x": 300, "y": 300}));
}

/// The stop key on Wayland: a compositor binding runs `touch` on the panic file the
/// session watches. Pressed on the desk's keyboard (wtype's own virtual keyboard, not
/// the server's), it stops the session; removing the file releases it.
#[test]
fn the_compositor_stop_key_stops_the_session() {
    let desk = Desk::start();
    let panic_file = desk.path("stop");
    desk.swaymsg(&[
        "bindsym",
        "Ctrl+Alt+F12",
        "exec",
        "touch",
        &panic_file.display().to_string(),
    ]);
    // The panic file is fixed for the process: it comes from the config file.
    let config = desk.path("config.json");
    let body = json!({"safety": {"panic_file": panic_file.display().to_string()}});
    std::fs::write(&config, body.to_string()).unwrap();
    let mut cmd = command(&desk, &["serve", "--config", &config.display().to_string()]);
    cmd.env("COMPUTER_CONTROL_LOG", "info");
    let mut s = Server::start_command(cmd);
    let started = s.call("session.start", json!({}));
    assert_eq!(started["ok"], true, "{started}");
    assert_eq!(state(&mut s), "ready");
    let out = desk
        .command("wtype")
        .args([
            "-M", "ctrl", "-M", "alt", "-k", "F12", "-m", "alt", "-m", "ctrl",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while state(&mut s) != "stopped" {
        assert!(
            Instant::now() < deadline,
            "the stop key did not stop the session"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let ev = event(&mut s, "safety.panic_triggered", |_| true);
    assert_eq!(ev["payload"]["source"], "file", "{ev}");
    let env = s.call(
        "tools.call",
        json!({"tool": "pointer.move", "arguments": {"x": 10, "y": 10}}),
    );
    assert_eq!(env["error"]["code"], "safety_stopped", "{env}");
    std::fs::remove_file(&panic_file).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while state(&mut s) != "ready" {
        assert!(
            Instant::now() < deadline,
            "removing the file did not release the stop"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Without a compositor, `check` says why, and `--platform wlroots` refuses to start
/// with the reason instead of falling back.
#[test]
fn without_a_compositor_check_and_serve_say_why() {
    let dir = std::env::temp_dir().join(format!("cc-wl-none-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = |args: &[&str]| {
        Command::new(BIN)
            .args(args)
            .env_remove("DISPLAY")
            .env_remove("SWAYSOCK")
            .env_remove("COMPUTER_CONTROL_CONFIG")
            .env("XDG_RUNTIME_DIR", &dir)
            .env("WAYLAND_DISPLAY", "no-such-wayland")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let out = run(&["check", "--json"]);
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    // `auto` passes over the compositor it cannot reach, says why, and serves the
    // virtual desktop (no X display either).
    assert_eq!(v["platform"]["backend"], "virtual", "{v}");
    let why = v["platform"]["wayland"].as_str().unwrap_or_default();
    assert!(why.contains("no-such-wayland"), "{v}");
    // Asked for, the compositor's absence is missing, with the reason.
    let out = run(&["check", "--json", "--platform", "wlroots"]);
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["platform"]["status"], "missing", "{v}");
    assert_eq!(v["ready"], false, "{v}");
    let why = v["display"]["reason"].as_str().unwrap_or_default();
    assert!(why.contains("no-such-wayland"), "{why}");
    let out = run(&["serve", "--platform", "wlroots"]);
    assert!(!out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--platform wlroots") && err.contains("no-such-wayland"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The clipboard through data-control, beyond the conformance suite's scenario: Wayland
/// does not say who owns a copy; a copy with no text is read as none; an owner that
/// never hands its text over is given up on with a clear failure, the server going on,
/// and what was read reaches no event and no log line.
#[test]
fn the_clipboard_owner_is_unnamed_and_a_silent_one_is_given_up_on() {
    const THEIRS: &str = "Copied-Elsewhere-Secret-7731";
    let desk = Desk::start();
    let mut s = serve(&desk, "debug");
    let started = s.call("session.start", json!({}));
    assert_eq!(started["ok"], true, "{started}");

    let copy = |args: &[&str]| {
        let st = desk.command("wl-copy").args(args).status().unwrap();
        assert!(st.success(), "wl-copy {args:?}");
    };
    copy(&[THEIRS]);
    let r = s.ok("clipboard.read", json!({}));
    assert_eq!(r["text"], THEIRS);
    assert!(
        r["owner"].is_null(),
        "Wayland does not say who owns it: {r}"
    );
    // Owned, but no text.
    copy(&["--type", "image/png", "not really a png"]);
    let r = s.ok("clipboard.read", json!({}));
    assert!(r["text"].is_null(), "{r}");

    // An owner that never hands its text over: a bounded wait, then a clear failure.
    let mut silent = desk
        .command("wl-copy")
        .args(["--foreground", THEIRS])
        .spawn()
        .unwrap();
    desk.wait_until(
        "wl-copy owns the clipboard",
        Duration::from_secs(10),
        || s.ok("clipboard.read", json!({}))["text"] == THEIRS,
    );
    let stop = |sig: &str| {
        std::process::Command::new("kill")
            .args([sig, &silent.id().to_string()])
            .status()
            .unwrap()
    };
    stop("-STOP");
    let e = s.fails("clipboard.read", json!({}), "driver_failed");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("did not hand it over"),
        "{e}"
    );
    stop("-CONT");
    let _ = silent.kill();
    let _ = silent.wait();
    // The server goes on.
    s.ok("clipboard.write", json!({"text": "after"}));

    crate::conformance::scenarios::clipboard::assert_read_leaks_nowhere(&mut s, THEIRS);
}
