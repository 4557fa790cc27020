//! The product on a headless GNOME Shell, end to end: `check` names GNOME and what it
//! offers, `serve --platform auto` picks the GNOME driver, and the cases the X11 and
//! wlroots suites hold hold here: a click at a checkbox's accessibility rectangle
//! toggles it, Unicode typed into a terminal arrives exactly (through the session
//! clipboard where no key types it), a panic pre-empts a long type and leaves nothing
//! held, a password's text leaks nowhere, and a monitor added while serving
//! reconfigures the session and stales older frames. The server runs as the desk's user.

use crate::common;

use common::{Server, center, find_where, has_state};

use std::process::Command;
use std::time::{Duration, Instant};

use cc_test_kit::gnome::{GnomeDesk, GnomeDeskOptions};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_computer-control");

fn command(desk: &GnomeDesk, args: &[&str]) -> Command {
    let mut cmd = desk.command(BIN);
    cmd.args(args).env("COMPUTER_CONTROL_LOG", "info");
    cmd
}

/// A `serve` process on the desk (stdio JSON-RPC), logging at `level`, its session
/// started.
fn serve(desk: &GnomeDesk, level: &str) -> Server {
    let mut cmd = command(desk, &["serve"]);
    cmd.env("COMPUTER_CONTROL_LOG", level);
    let mut s = Server::start_command(cmd);
    let started = s.call("session.start", json!({"a11y": {"max_name_len": 4096}}));
    assert_eq!(started["ok"], true, "{started}");
    assert_eq!(started["result"]["platform"], "gnome", "{started}");
    s
}

fn event(s: &mut Server, kind: &str, pred: impl Fn(&Value) -> bool) -> Value {
    s.wait_event_matching(kind, 0, pred).1
}

/// The window whose app id contains `app_id`, mapped, from `window.list`.
fn window(s: &mut Server, app_id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let list = s.ok("window.list", json!({}));
        if let Some(w) = list["windows"].as_array().and_then(|ws| {
            ws.iter().find(|w| {
                w["app_id"].as_str().is_some_and(|a| a.contains(app_id))
                    && w["rect"]["width"].as_u64().is_some_and(|v| v > 0)
            })
        }) {
            return w.clone();
        }
        assert!(Instant::now() < deadline, "no {app_id} window: {list}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The desk's typing oracle, focused: a terminal whose input lands in the returned file.
fn terminal(desk: &mut GnomeDesk, s: &mut Server, app_id: &str) -> std::path::PathBuf {
    let file = desk.oracle_terminal(app_id);
    let w = window(s, app_id);
    s.ok("window.focus", json!({"id": w["id"]}));
    std::thread::sleep(Duration::from_millis(300));
    file
}

#[test]
fn check_names_gnome_and_what_is_missing() {
    let desk = GnomeDesk::start();
    let out = command(&desk, &["check", "--json"]).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["platform"]["backend"], "gnome", "{v}");
    for area in ["platform", "display", "input", "capture", "accessibility"] {
        assert_eq!(v[area]["status"], "ok", "{area}: {v}");
    }
    assert_eq!(v["hotkey"]["status"], "degraded", "{v}");
    drop(desk);
    // Without the extension: degraded display, saying how to install it.
    let bare = GnomeDesk::start_with(GnomeDeskOptions { extension: false });
    let out = command(&bare, &["check", "--json"]).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["platform"]["backend"], "gnome", "{v}");
    assert_eq!(v["display"]["status"], "degraded", "{v}");
    assert!(
        v["display"]["next_step"]
            .as_str()
            .is_some_and(|s| s.contains("--gnome-extension")),
        "{v}"
    );
    // PipeWire missing (another runtime directory): GNOME cannot capture, and check
    // says so rather than passing the desktop.
    let mut cmd = command(&bare, &["check", "--json", "--platform", "gnome"]);
    cmd.env("XDG_RUNTIME_DIR", "/nonexistent");
    let v: Value = serde_json::from_slice(&cmd.output().unwrap().stdout).unwrap();
    assert_eq!(v["capture"]["status"], "missing", "{v}");
    assert!(
        v["capture"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("PipeWire")),
        "{v}"
    );
}

/// A click at a checkbox's accessibility rectangle lands on it: GTK's surface-relative
/// extents are placed with the surface rectangle the shell extension reports.
#[test]
fn a_click_at_a_gtk_checkbox_rect_toggles_it() {
    let mut desk = GnomeDesk::start();
    desk.spawn("gtk3-demo", &["--run=sizegroup"]);
    let mut s = serve(&desk, "info");
    let w = window(&mut s, "gtk3-demo");
    let scoped = json!({"level": "full", "window": w["id"]});
    let deadline = Instant::now() + Duration::from_secs(30);
    let checkbox = loop {
        let snap = s.ok("a11y.snapshot", scoped.clone());
        if let Some(c) = find_where(&snap["tree"], "checkbox", &|n| has_state(n, "enabled")) {
            break c.clone();
        }
        assert!(Instant::now() < deadline, "no checkbox: {snap}");
        std::thread::sleep(Duration::from_millis(200));
    };
    let was = has_state(&checkbox, "checked");
    let (x, y) = center(&checkbox);
    s.ok("pointer.click", json!({"x": x, "y": y}));
    let name = checkbox["name"].clone();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let again = s.ok("a11y.snapshot", scoped.clone());
        if find_where(&again["tree"], "checkbox", &|n| {
            n["name"] == name && has_state(n, "checked") != was
        })
        .is_some()
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the click at {checkbox} did not toggle it: {again}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn unicode_typed_into_a_terminal_arrives_exactly() {
    let mut desk = GnomeDesk::start();
    let mut s = serve(&desk, "info");
    let file = terminal(&mut desk, &mut s, "cc-typing");
    let text = "héllo wörld 世界 ✓\n";
    s.ok("keyboard.type", json!({"text": text}));
    let arrived = desk.try_wait(Duration::from_secs(20), || {
        std::fs::read_to_string(&file).is_ok_and(|t| t == text)
    });
    assert!(arrived, "{:?}", std::fs::read_to_string(&file));
}

/// A panic during a long `keyboard.type` answers it `safety_stopped`; what arrived is
/// an exact prefix, and nothing stays held (a key left down would repeat).
#[test]
fn panic_preempts_a_long_type_and_leaves_nothing_held() {
    let mut desk = GnomeDesk::start();
    let mut s = serve(&desk, "info");
    let file = terminal(&mut desk, &mut s, "cc-long");
    let text = "abcdé世✓ghi\n".repeat(300);
    let id = s.send(
        "tools.call",
        json!({"tool": "keyboard.type", "arguments": {"text": text, "interval_ms": 1}}),
    );
    desk.wait_until("the first typed line", Duration::from_secs(30), || {
        std::fs::read_to_string(&file).is_ok_and(|t| !t.is_empty())
    });
    let panic = s.call("control.panic", json!({"on": true}));
    assert_eq!(panic["result"]["state"], "stopped", "{panic}");
    let typed = s.response(id)["result"].clone();
    assert_eq!(typed["error"]["code"], "safety_stopped", "{typed}");
    std::thread::sleep(Duration::from_millis(300));
    let got = std::fs::read_to_string(&file).unwrap();
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
    let status = s.status().to_string();
    assert!(
        !status.contains("\"buttons\":[\"") && !status.contains("\"keys\":[\""),
        "nothing held: {status}"
    );
}

/// A password typed into a real GTK entry: confirmation first, redacted in every event
/// and log line, and no snapshot carries the password's value.
#[test]
fn a_password_never_leaks() {
    const SECRET: &str = "Hunter2-Gnome-Secret";
    let mut desk = GnomeDesk::start();
    desk.spawn("gtk3-demo", &["--run=entry_buffer"]);
    let mut s = serve(&desk, "trace");
    let is_password = |n: &Value| has_state(n, "password");
    let w = window(&mut s, "gtk3-demo");
    s.ok("window.focus", json!({"id": w["id"]}));
    std::thread::sleep(Duration::from_millis(300));
    let scoped = json!({"level": "full", "window": w["id"]});
    let deadline = Instant::now() + Duration::from_secs(30);
    let pw = loop {
        let snap = s.ok("a11y.snapshot", scoped.clone());
        if let Some(p) = find_where(&snap["tree"], "edit", &is_password) {
            break p.clone();
        }
        assert!(Instant::now() < deadline, "no password entry: {snap}");
        std::thread::sleep(Duration::from_millis(200));
    };
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
    event(&mut s, "action.finished", |p| p["request_id"] == id);
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
    assert!(!s.stderr_text().contains(SECRET), "the logs leaked it");
}

/// A monitor added while serving: `session.configured` with both displays, and a frame
/// from before is stale.
#[test]
fn a_second_monitor_reconfigures_and_stales_frames() {
    let desk = GnomeDesk::start();
    let mut s = serve(&desk, "info");
    let f1 = s.ok("screen.capture", json!({"scale": 0.1}))["frame"]
        .as_u64()
        .unwrap();
    s.ok("pointer.move", json!({"x": 100, "y": 100, "frame": f1}));
    let _monitor =
        cc_test_kit::gnome_monitor::VirtualMonitor::add(&desk.bus, &desk.path("pipewire-0"))
            .unwrap();
    event(&mut s, "session.configured", |p| {
        p["surface"]["displays"].as_array().map(Vec::len) == Some(2)
    });
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
