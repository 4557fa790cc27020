//! The product on a real X11 desktop, end to end: `check` sees the display, `serve`
//! with `--platform auto` picks X11 (and says so), and a session captures, snapshots
//! and acts on gtk3-widget-factory; the panic hotkey pressed by another client stops
//! the session and pressed again releases it. A panic pre-empts a long type and leaves
//! nothing down on the X server; a RandR change reconfigures the session and makes
//! older frames stale; a hotkey grab held elsewhere is reported, not fatal; on a canvas
//! narrower than the screen, a click at a checkbox's canvas rectangle toggles it; text
//! typed into a GTK password entry waits for a person and leaks nowhere. A window is
//! captured in place without being raised, a region zoomed to the screen's own pixels,
//! a click given relative to a window lands in it, and a minimized window is refused.
//! The pointer tools aimed at a GTK element by ref land at its centre, and refuse it
//! once its application is gone.

use crate::common;
use cc_test_kit::x11 as x11_support;

use common::{Server, center};
use common::{find_where, has_state, unchecked_checkbox};

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

/// The first event of `kind` whose payload `pred` accepts.
fn event(s: &mut Server, kind: &str, pred: impl Fn(&Value) -> bool) -> Value {
    s.wait_event_matching(kind, 0, pred).1
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

#[test]
fn a_session_on_x11_observes_acts_and_panics() {
    let mut desk = Desk::start();
    {
        let mut d = desk.driver();
        desk.widget_factory(&mut d);
    }
    let mut s = serve(&desk, "info");
    let started = s.call("session.start", json!({}));
    assert_eq!(started["ok"], true, "{started}");
    let r = &started["result"];
    assert_eq!(r["platform"], "x11", "{r}");
    let caps = &r["capabilities"];
    assert_eq!(caps["input"], true, "{caps}");
    assert_eq!(caps["accessibility"], true, "{caps}");
    assert_eq!(caps["hotkey"], true, "{caps}");
    // The default canvas is the largest a model takes as it is.
    assert_eq!(r["surface"]["display_width_px"], 1430);
    assert!(s.stderr_text().contains("platform: x11"));

    let t = Instant::now();
    let cap = s.ok("screen.capture", json!({"format": "png", "size": "canvas"}));
    eprintln!("screen.capture png end to end: {:?}", t.elapsed());
    assert_eq!(cap["width"], 1430);
    // The default image is that canvas.
    let cap = s.ok("screen.capture", json!({}));
    assert_eq!(
        (cap["width"].as_u64(), cap["height"].as_u64()),
        (Some(1430), Some(804))
    );

    let snap = s.ok("a11y.snapshot", json!({"level": "full"}));
    // One root for the desktop; the application's window under it, bound to X11.
    let window = find_where(&snap["tree"], "window", &|_| true).unwrap();
    assert!(window["window_id"].is_u64(), "{window}");
    let checkbox = find_where(window, "checkbox", &|n| {
        has_state(n, "enabled") && !has_state(n, "checked")
    })
    .unwrap()
    .clone();
    let act = s.ok(
        "a11y.activate",
        json!({"snapshot_id": snap["snapshot_id"], "node_id": checkbox["id"], "method": "pattern"}),
    );
    assert_eq!(act["method_used"], "toggle");

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

/// PROTOCOL §5.4 on X11: a panic sent while a long `keyboard.type` runs into a
/// terminal answers the type `safety_stopped`. The terminal received an exact part of
/// the text, and the X server has no key and no button down afterwards; likewise after
/// a panic during a click that holds its button.
#[test]
fn panic_preempts_a_long_type_and_leaves_no_key_down() {
    let mut desk = Desk::start();
    let file = desk.path("typed.txt");
    let script = format!("cat > '{}'", file.display());
    desk.spawn(
        "xterm",
        &["-u8", "-geometry", "80x20+50+50", "-e", "sh", "-c", &script],
    );
    let mut s = serve(&desk, "info");
    let started = s.call("session.start", json!({}));
    assert_eq!(started["ok"], true, "{started}");
    let deadline = Instant::now() + Duration::from_secs(20);
    let xterm = loop {
        let list = s.ok("window.list", json!({}));
        if let Some(w) = list["windows"]
            .as_array()
            .and_then(|ws| ws.iter().find(|w| w["app_id"] == "XTerm"))
        {
            break w.clone();
        }
        assert!(Instant::now() < deadline, "no xterm window: {list}");
        std::thread::sleep(Duration::from_millis(100));
    };
    s.ok("window.focus", json!({"id": xterm["id"]}));
    let r = &xterm["rect"];
    let (cx, cy) = (
        r["x"].as_i64().unwrap() + r["width"].as_i64().unwrap() / 2,
        r["y"].as_i64().unwrap() + r["height"].as_i64().unwrap() / 2,
    );
    s.ok("pointer.click", json!({"x": cx, "y": cy}));
    // Give the terminal a moment to start `cat` (its pty is open once it maps).
    std::thread::sleep(Duration::from_millis(300));

    let text = "abcdefghi\n".repeat(1000);
    let id = s.send(
        "tools.call",
        json!({"tool": "keyboard.type", "arguments": {"text": text, "interval_ms": 1}}),
    );
    // A whole line has reached `cat`: the type is under way.
    desk.wait_until("the first typed line", Duration::from_secs(20), || {
        std::fs::read_to_string(&file).is_ok_and(|t| !t.is_empty())
    });
    let panic = s.call("control.panic", json!({"on": true}));
    assert_eq!(panic["result"]["state"], "stopped", "{panic}");
    let typed = s.response(id)["result"].clone();
    assert_eq!(typed["ok"], false, "{typed}");
    assert_eq!(typed["error"]["code"], "safety_stopped", "{typed}");
    assert_eq!(desk.inputs_down(), (0, 0), "keys, buttons down");

    // What arrived is an exact prefix of the text, and not all of it.
    std::thread::sleep(Duration::from_millis(300));
    let got = std::fs::read_to_string(&file).unwrap();
    assert!(
        !got.is_empty() && got.len() < text.len(),
        "{} bytes",
        got.len()
    );
    assert!(text.starts_with(&got), "typed exactly a prefix: {got:?}");
    let fin = event(&mut s, "action.finished", |p| p["tool"] == "keyboard.type");
    assert_eq!(fin["payload"]["error_code"], "safety_stopped", "{fin}");

    // A key is down for moments only; a button held for 10 s is down for sure when the
    // panic comes, and must be up after it.
    let released = s.call("control.panic", json!({"on": false}));
    assert_eq!(released["result"]["state"], "ready", "{released}");
    let id = s.send(
        "tools.call",
        json!({"tool": "pointer.click", "arguments": {"x": 1900, "y": 1060, "hold_ms": 10000}}),
    );
    desk.wait_until(
        "the held button on the server",
        Duration::from_secs(10),
        || desk.inputs_down().1 != 0,
    );
    let panic = s.call("control.panic", json!({"on": true}));
    assert_eq!(panic["result"]["state"], "stopped", "{panic}");
    let held = s.response(id)["result"].clone();
    assert_eq!(held["error"]["code"], "safety_stopped", "{held}");
    assert_eq!(desk.inputs_down(), (0, 0), "keys, buttons down");
}

/// PROTOCOL §4.1 on X11: `xrandr --setmonitor` splitting the screen in two makes the
/// session re-read its surface and emit `session.configured` with both displays. A
/// frame captured before the change is then `stale_frame` (the pointer stays put),
/// and a frame captured after it is accepted.
#[test]
fn a_randr_change_reconfigures_the_session_and_stales_older_frames() {
    let desk = Desk::start();
    let mut s = serve(&desk, "info");
    // The operator's canvas of 1920: canvas units are the screen's pixels.
    let started = s.call("session.start", json!({"capture": {"default_width": 1920}}));
    assert_eq!(started["ok"], true, "{started}");
    let displays = &started["result"]["surface"]["displays"];
    assert_eq!(displays.as_array().map(Vec::len), Some(1), "{displays}");
    let f1 = s.ok("screen.capture", json!({"scale": 0.1}))["frame"]
        .as_u64()
        .unwrap();
    s.ok("pointer.move", json!({"x": 100, "y": 100, "frame": f1}));

    for args in [
        &[][..],
        &["--setmonitor", "LEFT", "960/254x1080/286+0+0", "screen"],
        &["--setmonitor", "RIGHT", "960/254x1080/286+960+0", "none"],
    ] {
        let out = desk.run("xrandr", args);
        assert!(out.status.success(), "xrandr {args:?}: {out:?}");
    }
    // One event per layout the server saw; the last one has both monitors.
    let ev = event(&mut s, "session.configured", |p| {
        p["surface"]["displays"].as_array().map(Vec::len) == Some(2)
    });
    let surface = ev["payload"]["surface"].clone();
    let canvases: Vec<(&str, &Value)> = surface["displays"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["name"].as_str().unwrap_or_default(), &d["canvas"]))
        .collect();
    assert_eq!(
        canvases,
        [
            (
                "LEFT",
                &json!({"x": 0, "y": 0, "width": 960, "height": 1080})
            ),
            (
                "RIGHT",
                &json!({"x": 960, "y": 0, "width": 960, "height": 1080})
            ),
        ],
        "{surface}"
    );
    assert_eq!(
        s.call("system.status", json!({}))["result"]["surface"],
        surface
    );

    let stale = s.call(
        "tools.call",
        json!({"tool": "pointer.move", "arguments": {"x": 500, "y": 500, "frame": f1}}),
    );
    assert_eq!(stale["error"]["code"], "stale_frame", "{stale}");
    assert_eq!(desk.pointer(), (100, 100), "the pointer stayed");
    let f2 = s.ok("screen.capture", json!({"scale": 0.1}))["frame"]
        .as_u64()
        .unwrap();
    assert!(f2 > f1);
    s.ok("pointer.move", json!({"x": 500, "y": 500, "frame": f2}));
    assert_eq!(desk.pointer(), (500, 500));
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

/// The canvas is not the screen: with `capture.default_width` 1280 on a 1920-pixel
/// screen, a snapshot's rectangles are in canvas units, and a click at the centre of a
/// checkbox's canvas rectangle toggles that checkbox, as a new snapshot reads back.
#[test]
fn a_click_at_a_checkboxs_canvas_rect_toggles_it_on_a_scaled_canvas() {
    let mut desk = Desk::start();
    let window_id = {
        let mut d = desk.driver();
        desk.widget_factory(&mut d)
    };
    let mut s = serve(&desk, "info");
    let started = s.call("session.start", json!({"capture": {"default_width": 1280}}));
    assert_eq!(started["ok"], true, "{started}");
    assert_eq!(started["result"]["surface"]["display_width_px"], 1280);
    assert_eq!(started["result"]["surface"]["display_height_px"], 720);

    // Several checkboxes share a name: the one clicked is the one at the same place.
    let same_checkbox = |snap: &Value, like: &Value| -> Value {
        find_where(&snap["tree"], "checkbox", &|n| {
            n["name"] == like["name"] && n["rect"] == like["rect"]
        })
        .unwrap_or_else(|| panic!("no checkbox like {like}: {snap}"))
        .clone()
    };
    let snap = s.ok("a11y.snapshot", json!({"level": "full"}));
    let window = find_where(&snap["tree"], "window", &|w| w["window_id"] == window_id).unwrap();
    let wr = window["rect"].as_array().unwrap().clone();
    // The widget factory's window is about 1366 px wide on the screen: about 911 canvas units.
    let width = wr[2].as_i64().unwrap() - wr[0].as_i64().unwrap();
    assert!(
        (850..=960).contains(&width),
        "window width in canvas units: {wr:?}"
    );
    let cb = unchecked_checkbox(window);
    let (x, y) = center(&cb);
    s.ok("pointer.click", json!({"x": x, "y": y}));
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let snap = s.ok("a11y.snapshot", json!({"level": "full"}));
        if has_state(&same_checkbox(&snap, &cb), "checked") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{cb} was not checked by the click"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // On the screen, the pointer is where the canvas point maps: × 1.5.
    let (px, py) = desk.pointer();
    assert!(
        (i64::from(px) - x * 3 / 2).abs() <= 2 && (i64::from(py) - y * 3 / 2).abs() <= 2,
        "pointer at {px},{py} for canvas {x},{y}"
    );
}

/// The pointer tools aimed at a GTK checkbox by ref, on a canvas narrower than the
/// screen (× 1.5): each lands at the element's centre on the X server, a drag from
/// the checkbox onto itself and a click toggle it, and once the application is gone
/// the ref is `stale_element` with the pointer left where it was.
#[test]
fn pointer_tools_aimed_at_a_gtk_element_land_at_its_centre() {
    let mut desk = Desk::start();
    let window_id = {
        let mut d = desk.driver();
        desk.widget_factory(&mut d)
    };
    let app = *desk.pids().last().expect("the widget factory's pid");
    let mut s = serve(&desk, "info");
    let started = s.call("session.start", json!({"capture": {"default_width": 1280}}));
    assert_eq!(started["ok"], true, "{started}");
    let snap = s.ok("a11y.snapshot", json!({"level": "full"}));
    let window = find_where(&snap["tree"], "window", &|w| w["window_id"] == window_id).unwrap();
    let cb = unchecked_checkbox(window);
    let el = json!({"ref": cb["ref"]});
    let (x, y) = center(&cb);
    let on_screen = |desk: &Desk| {
        let (px, py) = desk.pointer();
        assert!(
            (i64::from(px) - x * 3 / 2).abs() <= 2 && (i64::from(py) - y * 3 / 2).abs() <= 2,
            "pointer at {px},{py} for canvas {x},{y}"
        );
    };
    let checked = |s: &mut Server, want: bool| {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let snap = s.ok("a11y.snapshot", json!({"level": "full"}));
            let now = find_where(&snap["tree"], "checkbox", &|n| n["ref"] == cb["ref"])
                .is_some_and(|n| has_state(n, "checked"));
            if now == want {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{cb} never became checked={want}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    };

    s.ok("pointer.move", json!({"x": 5, "y": 5}));
    let r = s.ok("pointer.move", json!({"element": el, "steps": 4}));
    assert_eq!(r["element"]["ref"], cb["ref"], "{r}");
    on_screen(&desk);
    s.ok("pointer.move", json!({"x": 5, "y": 5}));
    let r = s.ok("pointer.scroll", json!({"amount": -1, "element": el}));
    assert_eq!(r["element"]["role"], "checkbox", "{r}");
    on_screen(&desk);
    s.ok("pointer.move", json!({"x": 5, "y": 5}));
    let r = s.ok(
        "pointer.drag",
        json!({"from_element": el, "to_element": el, "steps": 2}),
    );
    assert_eq!(r["from_element"]["ref"], cb["ref"], "{r}");
    checked(&mut s, true);
    on_screen(&desk);
    s.ok("pointer.click", json!({"element": el}));
    checked(&mut s, false);

    // The application goes: the ref is stale, and nothing moves.
    s.ok("pointer.move", json!({"x": 5, "y": 5}));
    let here = desk.pointer();
    let out = desk.run("kill", &[&app.to_string()]);
    assert!(out.status.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let env = s.tool("pointer.move", json!({"element": el}));
        if env["error"]["code"] == "stale_element" {
            break;
        }
        assert_eq!(env["ok"], false, "moved to a gone element: {env}");
        assert!(
            Instant::now() < deadline,
            "the ref outlived its element: {env}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    for (tool, args) in [
        ("pointer.scroll", json!({"amount": 1, "element": el})),
        (
            "pointer.drag",
            json!({"from": {"x": 300, "y": 300}, "to_element": el}),
        ),
        ("pointer.click", json!({"element": el})),
    ] {
        s.fails(tool, args, "stale_element");
    }
    assert_eq!(desk.pointer(), here, "the pointer stayed where it was");
}

/// Window-scoped capture and coordinates on X11, on a canvas narrower than the screen
/// (× 1.5): the widget factory's window is captured where it is, with an xterm raised
/// over part of it and kept on top; a region is zoomed to the screen's own pixels; a
/// click relative to the window toggles a checkbox; a minimized window is refused.
#[test]
fn a_window_is_captured_in_place_and_clicked_relative_to_it_on_x11() {
    let mut desk = Desk::start();
    let window_id = {
        let mut d = desk.driver();
        desk.widget_factory(&mut d)
    };
    let mut s = serve(&desk, "info");
    let started = s.call("session.start", json!({"capture": {"default_width": 1280}}));
    assert_eq!(started["ok"], true, "{started}");
    let listed = s.ok("window.list", json!({}));
    let win = listed["windows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["id"] == window_id)
        .unwrap_or_else(|| panic!("no window {window_id}: {listed}"))
        .clone();
    let rect = win["rect"].clone();
    let g = |k: &str| rect[k].as_i64().unwrap();

    // The window's own rectangle, as on screen, not raised and not focused.
    let focus_before: Vec<Value> = listed["windows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["focused"].clone())
        .collect();
    let cap = s.ok(
        "screen.capture",
        json!({"window": window_id, "size": "canvas", "format": "png", "if_changed": false}),
    );
    assert_eq!(cap["window"], window_id);
    let x0 = g("x").max(0);
    let y0 = g("y").max(0);
    assert_eq!(cap["region"]["x"], x0, "{cap}");
    assert_eq!(cap["region"]["y"], y0, "{cap}");
    assert!(
        (cap["region"]["width"].as_i64().unwrap() - (g("x") + g("width")).min(1280) + x0).abs()
            <= 1,
        "{cap} vs {rect}"
    );
    let after = s.ok("window.list", json!({}));
    let focus_after: Vec<Value> = after["windows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["focused"].clone())
        .collect();
    assert_eq!(
        focus_before, focus_after,
        "capturing a window changes no focus"
    );

    // Zoom: a region at the screen's own pixels, 1.5 image pixels per canvas unit.
    let zoom = s.ok(
        "screen.capture",
        json!({"region": {"x": x0, "y": y0, "width": 200, "height": 100}, "size": "native"}),
    );
    // The region's physical pixels, whole: 1.5 × 200 by 1.5 × 100, one more where the
    // region's edge falls inside a screen pixel.
    let (zw, zh) = (
        zoom["width"].as_u64().unwrap(),
        zoom["height"].as_u64().unwrap(),
    );
    assert!(
        (300..=301).contains(&zw) && (150..=151).contains(&zh),
        "{zoom}"
    );
    assert!(
        (zoom["image_scale"].as_f64().unwrap() - 1.5).abs() < 0.01,
        "{zoom}"
    );

    // A click relative to the window toggles a checkbox there.
    let snap = s.ok("a11y.snapshot", json!({"level": "full"}));
    let window = find_where(&snap["tree"], "window", &|w| w["window_id"] == window_id).unwrap();
    let cb = unchecked_checkbox(window);
    let (x, y) = center(&cb);
    let clicked = s.ok(
        "pointer.click",
        json!({"x": x - g("x"), "y": y - g("y"), "window": window_id}),
    );
    assert_eq!(clicked["position"], json!({"x": x, "y": y}));
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let snap = s.ok("a11y.snapshot", json!({"level": "full"}));
        let same = find_where(&snap["tree"], "checkbox", &|n| {
            n["name"] == cb["name"] && n["rect"] == cb["rect"]
        });
        if same.is_some_and(|n| has_state(n, "checked")) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{cb} was not checked by the relative click"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let (px, py) = desk.pointer();
    assert!(
        (i64::from(px) - x * 3 / 2).abs() <= 2 && (i64::from(py) - y * 3 / 2).abs() <= 2,
        "pointer at {px},{py} for canvas {x},{y}"
    );

    // Minimized, the window is not on screen: refused, nothing clicked.
    let out = desk.run("xdotool", &["windowminimize", &window_id.to_string()]);
    assert!(out.status.success(), "{out:?}");
    // The window manager unmaps it and keeps it in its client list (window.list still
    // shows it, so the agent can focus it again).
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let info = desk.run("xwininfo", &["-id", &window_id.to_string()]);
        if String::from_utf8_lossy(&info.stdout).contains("IsUnMapped") {
            break;
        }
        assert!(Instant::now() < deadline, "the window was not minimized");
        std::thread::sleep(Duration::from_millis(100));
    }
    let before = desk.pointer();
    let err = s.fails(
        "pointer.click",
        json!({"x": 5, "y": 5, "window": window_id}),
        "invalid_arguments",
    );
    assert!(
        err["message"].as_str().unwrap().contains("not on screen"),
        "{err}"
    );
    assert_eq!(desk.pointer(), before, "the pointer did not move");
    let err = s.fails(
        "screen.capture",
        json!({"window": window_id}),
        "invalid_arguments",
    );
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("closed or minimized"),
        "{err}"
    );
}

/// Secrets on X11, with a real GTK password entry (gtk3-demo's `entry_buffer`): typing
/// into it waits for a person, the text is redacted in the confirmation request,
/// `action.started` and the logs (at trace level), it does arrive (the demo's plain
/// entry shares the password's buffer), and no snapshot carries the password's value.
#[test]
fn typing_into_a_gtk_password_entry_asks_first_and_never_leaks() {
    const SECRET: &str = "Hunter2-X11-Secret";
    let mut desk = Desk::start();
    desk.spawn("gtk3-demo", &["--run=entry_buffer"]);
    let mut s = serve(&desk, "trace");
    let started = s.call("session.start", json!({"a11y": {"max_name_len": 4096}}));
    assert_eq!(started["ok"], true, "{started}");
    let is_password = |n: &Value| has_state(n, "password");
    // The demo's window (gtk3-demo opens its main window too).
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
    // Clicking a password field is itself high risk: approve it as a person would.
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
    let focused = |s: &mut Server| {
        let snap = s.ok("a11y.snapshot", scoped.clone());
        find_where(&snap["tree"], "edit", &is_password).is_some_and(|n| has_state(n, "focused"))
    };
    while !focused(&mut s) {
        assert!(
            Instant::now() < deadline,
            "the password entry never took focus"
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
    let began = event(&mut s, "action.started", |p| p["request_id"] == id);
    assert_eq!(
        began["payload"]["arguments"]["text"], "[redacted]",
        "{began}"
    );

    // Snapshots never carry it from the password field, though the plain entry (its
    // buffer is the password's, by the demo's design) shows that it arrived.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let snap = s.ok("a11y.snapshot", scoped.clone());
        let pw = find_where(&snap["tree"], "edit", &is_password).unwrap();
        assert!(pw.get("value").is_none_or(Value::is_null), "{pw}");
        assert!(!pw.to_string().contains(SECRET), "{pw}");
        let plain = find_where(&snap["tree"], "edit", &|n| {
            !is_password(n) && n["value"] == SECRET
        });
        if plain.is_some() {
            break;
        }
        assert!(Instant::now() < deadline, "the text never arrived: {snap}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let status = s.call("system.status", json!({}));
    assert!(!status.to_string().contains(SECRET), "{status}");
    // Every event so far, and every log line, is clean.
    s.call("session.stop", json!({}));
    std::thread::sleep(Duration::from_millis(200));
    let events: Vec<String> = s.events.iter().map(Value::to_string).collect();
    assert!(!events.is_empty());
    for e in &events {
        assert!(!e.contains(SECRET), "an event leaked it: {e}");
    }
    let logs = s.stderr_text();
    assert!(
        logs.contains("TRACE") || logs.contains("DEBUG"),
        "trace logging on"
    );
    assert!(!logs.contains(SECRET), "the logs leaked it");
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
