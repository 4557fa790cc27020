//! Waiting on conditions on a real X11 desktop with a real GTK application
//! (gtk3-widget-factory), through the server, beyond the conformance suite's waits and
//! selectors: each wait is sent first and the desktop is changed from another client
//! while it waits (xdotool clicks and renames), so what ends it is the desktop's own
//! event (an AT-SPI object event, X Damage), answered as `driven_by: events`.
//! A checkbox's ref outlives snapshots; once its application is gone the ref is
//! `stale_element`. An action that observes settles on X Damage before its capture. The
//! emergency hotkey pre-empts a wait.

use crate::common;
use crate::conformance::scenarios::waits::{met, start_wait};
use cc_test_kit::x11 as x11_support;

use common::has_state;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{Server, center};
use serde_json::{Value, json};
use x11_support::Desk;

const BIN: &str = env!("CARGO_BIN_EXE_computer-control");

fn serve(desk: &Desk) -> Server {
    let mut cmd = Command::new(BIN);
    desk.env(&mut cmd);
    cmd.args(["serve"])
        .env_remove("COMPUTER_CONTROL_CONFIG")
        .env("COMPUTER_CONTROL_LOG", "info");
    Server::start_command(cmd)
}

fn checkbox(s: &mut Server, window: &Value) -> Value {
    let snap = s.ok("a11y.snapshot", json!({"level": "full", "window": window}));
    let mut found = None;
    let mut stack = vec![snap["tree"].clone()];
    while let Some(n) = stack.pop() {
        if n["role"] == "checkbox" && has_state(&n, "visible") && has_state(&n, "enabled") {
            found = Some(n.clone());
            break;
        }
        if let Some(c) = n["children"].as_array() {
            stack.extend(c.iter().rev().cloned());
        }
    }
    found.unwrap_or_else(|| panic!("no visible checkbox in {snap}"))
}

#[test]
fn waits_follow_the_desktops_events_and_refs_outlive_snapshots() {
    let mut desk = Desk::start();
    let mut s = serve(&desk);
    // The operator's 1920 canvas: xdotool below clicks canvas points as the screen's
    // own pixels.
    s.start_session(common::full_canvas());

    // A window appears: the wait runs before the application starts.
    let id = start_wait(
        &mut s,
        json!({"condition": "appears", "window": {"title_contains": "widget-factory"}, "timeout_ms": 60000}),
    );
    let app = desk.spawn("gtk3-widget-factory", &[]);
    let r = met(&mut s, id);
    eprintln!("window appears: {r}");
    assert_eq!(r["driven_by"], "events", "{r}");
    let window = r["saw"]["windows"][0]["id"].clone();
    assert!(window.is_u64(), "{r}");

    // An element appears in its accessibility tree (AT-SPI events).
    let r = s.ok(
        "wait.for",
        json!({"condition": "appears", "element": {"role": "checkbox", "window": window, "states": ["enabled"]}, "timeout_ms": 60000}),
    );
    eprintln!("element appears: {r}");
    // The first waits may poll while the accessibility registry is still starting
    // (it then says so); a later one hears its events (below).
    assert!(r["saw"]["matches"].as_u64().unwrap() >= 1, "{r}");

    // The widget factory animates (a spinner): the whole screen never settles, and
    // the timeout says how long it was last quiet.
    let e = s.fails(
        "wait.for",
        json!({"condition": "stable", "stable_ms": 2000, "timeout_ms": 3000}),
        "timeout",
    );
    eprintln!("whole screen stable: {e}");
    assert_eq!(e["data"]["driven_by"], "events", "{e}");
    assert!(e["data"]["last_seen"]["stable_ms"].as_u64().unwrap() < 2000);

    // A checkbox is named by its ref twice, across snapshots.
    let cb = checkbox(&mut s, &window);
    let eref = cb["ref"].clone();
    let was = has_state(&cb, "checked");
    let act = s.ok("a11y.activate", json!({"ref": eref, "method": "pattern"}));
    assert_eq!(act["method_used"], "toggle", "{act}");
    std::thread::sleep(Duration::from_millis(300));
    let now = checkbox(&mut s, &window);
    assert_eq!(now["ref"], eref, "the same element keeps its ref");
    assert_ne!(has_state(&now, "checked"), was, "{now}");
    s.ok("a11y.snapshot", json!({"level": "skeleton"}));
    s.ok("a11y.activate", json!({"ref": eref, "method": "pattern"}));

    // A region changes because another client clicks in it (X Damage).
    let cb = checkbox(&mut s, &window);
    assert_eq!(has_state(&cb, "checked"), was, "toggled back: {cb}");
    let r4 = cb["rect"].as_array().unwrap().clone();
    let (l, t, rr, b) = (
        r4[0].as_i64().unwrap(),
        r4[1].as_i64().unwrap(),
        r4[2].as_i64().unwrap(),
        r4[3].as_i64().unwrap(),
    );
    let id = start_wait(
        &mut s,
        json!({"condition": "changes", "region": {"x": l, "y": t, "width": rr - l, "height": b - t}, "timeout_ms": 20000}),
    );
    let (x, y) = center(&cb);
    let out = desk.run(
        "xdotool",
        &["mousemove", &x.to_string(), &y.to_string(), "click", "1"],
    );
    assert!(out.status.success());
    let r = met(&mut s, id);
    eprintln!("region changes: {r}");
    assert_eq!(r["driven_by"], "events", "{r}");
    let changed = r["saw"]["changed"].as_array().unwrap();
    assert!(
        changed[0].as_i64().unwrap() >= l && changed[2].as_i64().unwrap() <= rr,
        "{r}"
    );

    // A checkbox state changes because another client clicks it: the AT-SPI state
    // event ends the wait.
    let want = if has_state(&checkbox(&mut s, &window), "checked") {
        json!({"not_states": ["checked"]})
    } else {
        json!({"states": ["checked"]})
    };
    let before = s.fails(
        "wait.for",
        json!({"condition": "appears", "ref": eref, "element": want.clone(), "timeout_ms": 100}),
        "timeout",
    );
    assert_eq!(before["data"]["last_seen"]["matches"], 0);
    let id = start_wait(
        &mut s,
        json!({"condition": "appears", "ref": eref, "element": want, "timeout_ms": 20000}),
    );
    let out = desk.run(
        "xdotool",
        &["mousemove", &x.to_string(), &y.to_string(), "click", "1"],
    );
    assert!(out.status.success());
    let r = met(&mut s, id);
    eprintln!("state appears: {r}");
    assert_eq!(r["driven_by"], "events", "{r}");
    assert_eq!(r["saw"]["element"]["ref"], eref, "{r}");

    // The element the ref names is there (met at once).
    let r = s.ok(
        "wait.for",
        json!({"condition": "appears", "ref": eref, "timeout_ms": 5000}),
    );
    assert_eq!(r["saw"]["element"]["ref"], eref);

    // A title changes (another client renames the window).
    let id = start_wait(
        &mut s,
        json!({"condition": "title_changes", "window": {"id": window}, "timeout_ms": 20000}),
    );
    let wid = window.as_u64().unwrap().to_string();
    let out = desk.run(
        "xdotool",
        &["set_window", "--name", "Renamed by a test", &wid],
    );
    assert!(out.status.success());
    let r = met(&mut s, id);
    eprintln!("title changes: {r}");
    assert_eq!(r["saw"]["to"], "Renamed by a test", "{r}");

    // Its region is still, while the spinner turns elsewhere.
    let region = json!({"x": l - 4, "y": t - 4, "width": rr - l + 8, "height": b - t + 8});
    let r = s.ok(
        "wait.for",
        json!({"condition": "stable", "region": region, "stable_ms": 300, "timeout_ms": 10000}),
    );
    eprintln!("region stable: {r}");
    assert_eq!(r["driven_by"], "events", "{r}");

    // An action that observes the checkbox's region settles on it (X Damage), then
    // captures it.
    let r = s.ok(
        "pointer.click",
        json!({"x": x, "y": y, "observe": {"capture": {"region": region}, "settle_ms": 200}}),
    );
    let o = &r["observation"];
    eprintln!("observe settled: {}", o["settled"]);
    assert_eq!(o["settled"]["stable"], true, "{o}");
    assert_eq!(o["settled"]["driven_by"], "events", "{o}");
    assert_eq!(o["capture"]["width"], rr - l + 8);

    // The application goes: its window disappears, and the ref is stale.
    let id = start_wait(
        &mut s,
        json!({"condition": "disappears", "window": {"id": window}, "timeout_ms": 20000}),
    );
    let out = desk.run("kill", &[&app.to_string()]);
    assert!(out.status.success());
    let r = met(&mut s, id);
    eprintln!("window disappears: {r}");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let env = s.tool("a11y.activate", json!({"ref": eref}));
        if env["error"]["code"] == "stale_element" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the ref outlived its element: {env}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    // The emergency hotkey, pressed by another client, pre-empts a wait at once.
    let id = start_wait(
        &mut s,
        json!({"condition": "appears", "window": {"title": "never"}, "timeout_ms": 60000}),
    );
    let t = Instant::now();
    assert!(
        desk.run("xdotool", &["key", "ctrl+alt+F12"])
            .status
            .success()
    );
    let r = s.response(id);
    assert_eq!(r["result"]["error"]["code"], "safety_stopped", "{r}");
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
}
