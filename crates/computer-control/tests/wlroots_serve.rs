//! The product on a headless sway desk, end to end: `check` lists the compositor's
//! protocols, `serve --platform auto` picks the wlroots driver, and the X11 suite's
//! cases hold there: a click at a checkbox's accessibility rectangle toggles it, Unicode
//! typed into a terminal arrives exactly, a panic pre-empts a long type and leaves
//! nothing held, a password's text leaks nowhere, a second output at a negative origin
//! reconfigures the session and stales older frames, an Xwayland window is listed and
//! acted on, a rule on a floating window holds over the focused tiled one, and the
//! stop key (a compositor binding creating the panic file) stops the
//! session. The server runs as the desk's user, like everything on the desk.

use crate::common;
use cc_test_kit::sway as wlroots_support;

use common::{Server, center};
use common::{find_where, has_state};

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

/// A terminal running `cat > FILE`, focused.
fn terminal(desk: &mut Desk, s: &mut Server, app_id: &str, file: &std::path::Path) -> Value {
    desk.spawn(
        "foot",
        &[
            "--app-id",
            app_id,
            "sh",
            "-c",
            &format!("cat > '{}'", file.display()),
        ],
    );
    let w = window(s, app_id);
    s.ok("window.focus", json!({"id": w["id"]}));
    // The shell starts `cat` once the terminal maps.
    std::thread::sleep(Duration::from_millis(300));
    w
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
    let r = &started["result"];
    assert_eq!(r["platform"], "wlroots", "{r}");
    let caps = &r["capabilities"];
    assert_eq!(caps["input"], true, "{caps}");
    assert_eq!(caps["accessibility"], true, "{caps}");
    assert_eq!(caps["hotkey"], false, "{caps}");
    // The default canvas is the largest a model takes as it is.
    assert_eq!(r["surface"]["display_width_px"], 1430);
    assert!(
        s.stderr_text().contains("platform: wlroots"),
        "{}",
        s.stderr_text()
    );
    let cap = s.ok("screen.capture", json!({"format": "png", "size": "canvas"}));
    assert_eq!(cap["width"], 1430);
    // The default image is that canvas.
    let cap = s.ok("screen.capture", json!({}));
    assert_eq!(cap["width"], 1430);
}

/// A click at a checkbox's accessibility rectangle lands on it: GTK's window-relative
/// extents are placed on the layout with the compositor's window geometry.
#[test]
fn a_click_at_a_gtk_checkbox_rect_toggles_it() {
    let mut desk = Desk::start();
    desk.spawn("gtk3-widget-factory", &[]);
    let mut s = serve(&desk, "info");
    let started = s.call("session.start", json!({}));
    assert_eq!(started["ok"], true, "{started}");
    let w = window(&mut s, "widget-factory");
    // Floating and moved: the window is not at the origin, and has a shadow margin.
    desk.swaymsg(&[
        &format!("[con_id={}]", w["id"]),
        "floating",
        "enable,",
        "move",
        "position",
        "200",
        "150",
    ]);
    std::thread::sleep(Duration::from_millis(500));
    let scoped = json!({"level": "full", "window": w["id"]});
    let unchecked = |n: &Value| has_state(n, "enabled") && !has_state(n, "checked");
    let deadline = Instant::now() + Duration::from_secs(30);
    let (snap, checkbox) = loop {
        let snap = s.ok("a11y.snapshot", scoped.clone());
        if let Some(c) = find_where(&snap["tree"], "checkbox", &unchecked) {
            let c = c.clone();
            break (snap, c);
        }
        assert!(Instant::now() < deadline, "no checkbox: {snap}");
        std::thread::sleep(Duration::from_millis(200));
    };
    let view = desk.wait_view("widget-factory");
    let (x, y) = center(&checkbox);
    let content = &view["rect"];
    // The view is in the compositor's pixels, the rect on the canvas.
    let scale = started["result"]["surface"]["scale"].as_f64().unwrap();
    let (px, py) = ((x as f64 * scale) as i64, (y as f64 * scale) as i64);
    eprintln!(
        "window node {} view {} checkbox {}",
        snap["tree"]["rect"], content, checkbox["rect"]
    );
    assert!(
        px > content["x"].as_i64().unwrap() && py > content["y"].as_i64().unwrap(),
        "the rect is on the window, not at the surface origin: {checkbox} {view}"
    );
    s.ok("pointer.click", json!({"x": x, "y": y}));
    let name = checkbox["name"].clone();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let again = s.ok("a11y.snapshot", scoped.clone());
        if find_where(&again["tree"], "checkbox", &|n| {
            n["name"] == name && has_state(n, "checked")
        })
        .is_some()
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the click did not toggle {name}: before {snap} after {again}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // Semantic activation goes through the same AT-SPI code as on X11: it toggles back.
    let snap = s.ok("a11y.snapshot", scoped.clone());
    let checked = find_where(&snap["tree"], "checkbox", &|n| {
        n["name"] == name && has_state(n, "checked")
    })
    .unwrap()
    .clone();
    let act = s.ok(
        "a11y.activate",
        json!({"snapshot_id": snap["snapshot_id"], "node_id": checked["id"], "method": "pattern"}),
    );
    assert_eq!(act["method_used"], "toggle", "{act}");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let again = s.ok("a11y.snapshot", scoped.clone());
        let after = find_where(&again["tree"], "checkbox", &|n| n["name"] == name).unwrap();
        if !has_state(after, "checked") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "activation did not toggle: {after}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn unicode_typed_into_a_terminal_arrives_exactly() {
    let mut desk = Desk::start();
    let file = desk.path("typed.txt");
    let mut s = serve(&desk, "info");
    assert_eq!(s.call("session.start", json!({}))["ok"], true);
    terminal(&mut desk, &mut s, "cc-typing", &file);
    let text = "héllo wörld 世界 ✓\n";
    s.ok("keyboard.type", json!({"text": text}));
    desk.wait_until("the text in the file", Duration::from_secs(10), || {
        std::fs::read_to_string(&file).is_ok_and(|t| t == text)
    });
}

/// A panic during a long `keyboard.type` answers it `safety_stopped`; what arrived is
/// an exact prefix, and nothing stays held: a key left down would repeat in the
/// terminal, so the file must not grow once the panic returned.
#[test]
fn panic_preempts_a_long_type_and_leaves_nothing_held() {
    let mut desk = Desk::start();
    let file = desk.path("long.txt");
    let mut s = serve(&desk, "info");
    assert_eq!(s.call("session.start", json!({}))["ok"], true);
    terminal(&mut desk, &mut s, "cc-long", &file);
    // 9 900 characters: under keyboard.type's limit of 10 000.
    let text = "abcdé世✓ghi\n".repeat(900);
    let id = s.send(
        "tools.call",
        json!({"tool": "keyboard.type", "arguments": {"text": text, "interval_ms": 1}}),
    );
    desk.wait_until("the first typed line", Duration::from_secs(20), || {
        std::fs::read_to_string(&file).is_ok_and(|t| !t.is_empty())
    });
    let panic = s.call("control.panic", json!({"on": true}));
    assert_eq!(panic["result"]["state"], "stopped", "{panic}");
    let typed = s.response(id)["result"].clone();
    assert_eq!(typed["error"]["code"], "safety_stopped", "{typed}");
    std::thread::sleep(Duration::from_millis(300));
    let got = std::fs::read_to_string(&file).unwrap();
    // Past the terminal's key-repeat delay (600 ms) a held key would have repeated.
    std::thread::sleep(Duration::from_millis(1200));
    let later = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        got, later,
        "the terminal kept receiving keys after the panic"
    );
    assert!(
        !got.is_empty() && got.len() < text.len(),
        "{} bytes",
        got.len()
    );
    assert!(text.starts_with(&got), "typed exactly a prefix: {got:?}");
    // A button held for 10 s is down when the panic comes, and up after it.
    s.call("control.panic", json!({"on": false}));
    let id = s.send(
        "tools.call",
        json!({"tool": "pointer.click", "arguments": {"x": 1900, "y": 1060, "hold_ms": 10000}}),
    );
    event(&mut s, "action.started", |p| p["tool"] == "pointer.click");
    std::thread::sleep(Duration::from_millis(300));
    let panic = s.call("control.panic", json!({"on": true}));
    assert_eq!(panic["result"]["state"], "stopped", "{panic}");
    let held = s.response(id)["result"].clone();
    assert_eq!(held["error"]["code"], "safety_stopped", "{held}");
    let status = s.status();
    assert!(
        !status.to_string().contains("\"buttons\":[\"")
            && !status.to_string().contains("\"keys\":[\""),
        "nothing held: {status}"
    );
}

/// A second output added at a negative origin: `session.configured` with both
/// displays, the surface's physical box moves left, and a frame from before is stale.
#[test]
fn a_second_output_at_a_negative_origin_reconfigures_and_stales_frames() {
    let desk = Desk::start();
    let mut s = serve(&desk, "info");
    let started = s.call("session.start", json!({}));
    assert_eq!(started["ok"], true, "{started}");
    assert_eq!(
        started["result"]["surface"]["displays"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    let f1 = s.ok("screen.capture", json!({"scale": 0.1}))["frame"]
        .as_u64()
        .unwrap();
    s.ok("pointer.move", json!({"x": 100, "y": 100, "frame": f1}));
    desk.swaymsg(&["create_output"]);
    desk.swaymsg(&[
        "output",
        "HEADLESS-2",
        "mode",
        "1280x720",
        "position",
        "-1280",
        "0",
    ]);
    let ev = event(&mut s, "session.configured", |p| {
        p["surface"]["displays"].as_array().map(Vec::len) == Some(2)
            && p["surface"]["physical"]["x"] == -1280
    });
    let surface = &ev["payload"]["surface"];
    assert_eq!(
        surface["physical"],
        json!({"x": -1280, "y": 0, "width": 3200, "height": 1080}),
        "{surface}"
    );
    let stale = s.call(
        "tools.call",
        json!({"tool": "pointer.move", "arguments": {"x": 500, "y": 500, "frame": f1}}),
    );
    assert_eq!(stale["error"]["code"], "stale_frame", "{stale}");
    let cap = s.ok("screen.capture", json!({"scale": 0.1}));
    let f2 = cap["frame"].as_u64().unwrap();
    assert!(f2 > f1);
    s.ok("pointer.move", json!({"x": 500, "y": 500, "frame": f2}));
}

/// A password typed into a real GTK entry: confirmation first, then redacted in every
/// event and log line, and no snapshot carries the password's value.
#[test]
fn a_password_never_leaks() {
    const SECRET: &str = "Hunter2-Wayland-Secret";
    let mut desk = Desk::start();
    desk.spawn("gtk3-demo", &["--run=entry_buffer"]);
    let mut s = serve(&desk, "trace");
    let started = s.call("session.start", json!({"a11y": {"max_name_len": 4096}}));
    assert_eq!(started["ok"], true, "{started}");
    let is_password = |n: &Value| has_state(n, "password");
    let deadline = Instant::now() + Duration::from_secs(30);
    let window_id = loop {
        let snap = s.ok("a11y.snapshot", json!({"level": "full"}));
        let owner = snap["tree"]["children"].as_array().and_then(|tops| {
            tops.iter()
                .find(|w| w["window_id"].is_u64() && find_where(w, "edit", &is_password).is_some())
        });
        if let Some(w) = owner {
            break w["window_id"].clone();
        }
        assert!(Instant::now() < deadline, "no password entry: {snap}");
        std::thread::sleep(Duration::from_millis(200));
    };
    s.ok("window.focus", json!({"id": window_id}));
    std::thread::sleep(Duration::from_millis(300));
    let scoped = json!({"level": "full", "window": window_id});
    let snap = s.ok("a11y.snapshot", scoped.clone());
    let pw = find_where(&snap["tree"], "edit", &is_password)
        .unwrap()
        .clone();
    let (x, y) = center(&pw);
    let click = s.call(
        "tools.call",
        json!({"tool": "pointer.click", "arguments": {"x": x, "y": y}}),
    );
    if click["result"]["status"] == "awaiting_confirmation" {
        let id = click["result"]["request_id"].clone();
        let ok = s.call(
            "session.confirm",
            json!({"request_id": id, "approve": true}),
        );
        assert_eq!(ok["ok"], true, "{ok}");
        event(&mut s, "action.finished", |p| p["request_id"] == id);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let snap = s.ok("a11y.snapshot", scoped.clone());
        if find_where(&snap["tree"], "edit", &is_password).is_some_and(|n| has_state(n, "focused"))
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the password entry never took focus: {snap}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let typed = s.call(
        "tools.call",
        json!({"tool": "keyboard.type", "arguments": {"text": SECRET}}),
    );
    assert_eq!(
        typed["result"]["status"], "awaiting_confirmation",
        "{typed}"
    );
    let id = typed["result"]["request_id"].clone();
    let asked = event(&mut s, "safety.confirmation_requested", |p| {
        p["request_id"] == id
    });
    assert_eq!(
        asked["payload"]["arguments"]["text"], "[redacted]",
        "{asked}"
    );
    let ok = s.call(
        "session.confirm",
        json!({"request_id": id, "approve": true}),
    );
    assert_eq!(ok["ok"], true, "{ok}");
    let fin = event(&mut s, "action.finished", |p| p["request_id"] == id);
    assert_eq!(
        fin["payload"]["envelope"]["result"]["chars"],
        SECRET.len(),
        "{fin}"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let snap = s.ok("a11y.snapshot", scoped.clone());
        let pw = find_where(&snap["tree"], "edit", &is_password).unwrap();
        assert!(pw.get("value").is_none_or(Value::is_null), "{pw}");
        assert!(!pw.to_string().contains(SECRET), "{pw}");
        if find_where(&snap["tree"], "edit", &|n| {
            !is_password(n) && n["value"] == SECRET
        })
        .is_some()
        {
            break;
        }
        assert!(Instant::now() < deadline, "the text never arrived: {snap}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let status = s.call("system.status", json!({}));
    assert!(!status.to_string().contains(SECRET), "{status}");
    s.call("session.stop", json!({}));
    std::thread::sleep(Duration::from_millis(200));
    for e in s.events.iter().map(Value::to_string) {
        assert!(!e.contains(SECRET), "an event leaked it: {e}");
    }
    let logs = s.stderr_text();
    assert!(
        logs.contains("TRACE") || logs.contains("DEBUG"),
        "trace logging on"
    );
    assert!(!logs.contains(SECRET), "the logs leaked it");
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

/// `app.launch` starts a Wayland client on this compositor (once the stdio host's
/// session lists it), and `tools.list` and the capabilities say so.
#[test]
fn app_launch_starts_a_client_on_the_compositor() {
    let desk = Desk::start();
    let mut s = serve(&desk, "info");
    let started = s.call("session.start", json!({}));
    assert_eq!(started["ok"], true, "{started}");
    let caps = &started["result"]["capabilities"];
    assert_eq!(caps["launch"], true, "{caps}");
    assert_eq!(caps["clipboard"], true, "{caps}");
    let list = s.call("tools.list", json!({}));
    for name in ["app.launch", "clipboard.read", "clipboard.write"] {
        let t = list["result"]["tools"]
            .as_array()
            .and_then(|ts| ts.iter().find(|t| t["name"] == name))
            .unwrap_or_else(|| panic!("{name} not listed: {list}"));
        assert_eq!(t["available"], true, "{t}");
    }

    let env = s.call(
        "session.configure",
        json!({"apps": {"launch_allowed": ["foot"]}}),
    );
    assert_eq!(env["ok"], true, "{env}");
    // `foot` is a desktop entry here (Debian's foot.desktop): its shell starts.
    let r = s.ok("app.launch", json!({"app": "foot"}));
    let w = window(&mut s, "foot");
    assert_eq!(w["pid"], r["pid"], "{w}");
    // It is this compositor's client: a command typed into its shell runs.
    let out = desk.path("launched.txt");
    s.ok("window.focus", json!({"id": w["id"]}));
    std::thread::sleep(Duration::from_millis(500));
    s.ok(
        "keyboard.type",
        json!({"text": format!("echo launched here > '{}'\n", out.display())}),
    );
    desk.wait_until("the command's file", Duration::from_secs(20), || {
        std::fs::read_to_string(&out).is_ok_and(|t| t == "launched here\n")
    });
}

/// The clipboard through data-control: what `clipboard.write` puts there is what
/// `wl-paste` reads and what a terminal pastes; `clipboard.read` reads what `wl-copy`
/// put there, refuses a copy marked as a password, gives up on an owner that never
/// hands its text over, and what it read reaches no event and no log line.
#[test]
fn the_clipboard_is_shared_with_wayland_clients_and_leaks_nowhere() {
    const OURS: &str = "héllo 世界 written-4417";
    const THEIRS: &str = "Copied-Elsewhere-Secret-7731";
    let mut desk = Desk::start();
    let mut s = serve(&desk, "debug");
    let started = s.call("session.start", json!({}));
    assert_eq!(started["ok"], true, "{started}");

    s.ok("clipboard.write", json!({"text": OURS}));
    let pasted = desk
        .command("wl-paste")
        .arg("--no-newline")
        .output()
        .unwrap();
    assert!(pasted.status.success(), "{pasted:?}");
    assert_eq!(String::from_utf8_lossy(&pasted.stdout), OURS);
    let r = s.ok("clipboard.read", json!({}));
    assert_eq!(r["text"], OURS);
    assert_eq!(r["owner"], "computer-control");

    // A terminal pastes it (ctrl+shift+v in foot): the compositor hands our text to an
    // ordinary client.
    let file = desk.path("pasted.txt");
    terminal(&mut desk, &mut s, "cc-paste", &file);
    s.ok("clipboard.write", json!({"text": "pasted line\n"}));
    s.ok("keyboard.combo", json!({"keys": "ctrl+shift+v"}));
    desk.wait_until("the pasted line", Duration::from_secs(20), || {
        std::fs::read_to_string(&file).is_ok_and(|t| t == "pasted line\n")
    });

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

    // A password manager's mark: refused, the text never received.
    copy(&["--type", "x-kde-passwordManagerHint", "secret"]);
    let e = s.fails("clipboard.read", json!({}), "policy_denied");
    assert_eq!(e["data"]["rule"], "secret_clipboard", "{e}");
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

    s.drain_available();
    let events = serde_json::to_string(&s.events).unwrap();
    assert!(events.contains("clipboard.read"));
    // What was read from another client (the agent's own `clipboard.write` text is
    // its argument, shown like any other).
    assert!(
        !events.contains(THEIRS),
        "the clipboard leaked into an event"
    );
    let log = s.stderr_text();
    assert!(log.contains("clipboard.read"), "the log says what ran");
    assert!(!log.contains(THEIRS), "the clipboard leaked into the log");
}
