//! The Windows build of the server under Wine on a private Xvfb (`cc_test_kit::wine`),
//! over stdio JSON-RPC as a host drives it: the session reports the Windows driver;
//! Wine's notepad is listed with its executable and focused; a click lands at its edit
//! control's MSAA rectangle; Unicode text typed is read back exactly; a key combo
//! leaves nothing held; the clipboard goes both ways; the capture has the screen's
//! pixels; the emergency stop pre-empts a type, which had typed an exact prefix.

use crate::common::{Server, center, find_where};

use std::time::{Duration, Instant};

use cc_test_kit::wine::WineDesk;
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_computer-control");

fn edit_value(s: &mut Server, window: &Value) -> (Value, String) {
    let snap = s.ok(
        "a11y.snapshot",
        json!({"level": "full", "window": window["id"]}),
    );
    let edit = find_where(&snap["tree"], "edit", &|_| true)
        .unwrap_or_else(|| panic!("no edit control: {snap}"))
        .clone();
    let value = edit["value"].as_str().unwrap_or_default().to_string();
    (edit, value)
}

fn until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_windows_server_drives_wine_notepad_and_stops_mid_type() {
    let desk = WineDesk::start();
    let exe = WineDesk::windows_exe(BIN);
    let mut notepad = desk.server(std::path::Path::new("notepad"), &[]);
    let mut notepad = notepad.spawn().expect("start Wine's notepad");
    let mut cmd = desk.server(&exe, &["serve", "--platform", "windows"]);
    cmd.env("COMPUTER_CONTROL_LOG", "info");
    let mut s = Server::start_command(cmd);
    let started = s.call("session.start", json!({}));
    assert_eq!(started["ok"], true, "{started}");
    let r = &started["result"];
    assert_eq!(r["platform"], "windows", "{r}");
    for cap in ["capture", "input", "accessibility", "hotkey", "clipboard"] {
        assert_eq!(r["capabilities"][cap], true, "{cap}: {r}");
    }

    // The window list names notepad by its executable; focus it.
    let mut window = Value::Null;
    until("notepad's window", || {
        let list = s.ok("window.list", json!({}));
        if let Some(w) = list["windows"]
            .as_array()
            .and_then(|ws| ws.iter().find(|w| w["app_id"] == "notepad.exe"))
        {
            window = w.clone();
        }
        !window.is_null()
    });
    s.ok("window.focus", json!({"id": window["id"]}));
    let list = s.ok("window.list", json!({}));
    let focused = list["windows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["id"] == window["id"]);
    assert_eq!(
        focused.map(|w| w["focused"].clone()),
        Some(json!(true)),
        "{list}"
    );

    // A click at the edit control's MSAA rectangle, then exact Unicode typing.
    let (edit, _) = edit_value(&mut s, &window);
    let (x, y) = center(&edit);
    s.ok("pointer.click", json!({"x": x, "y": y}));
    let text = "héllo wörld 世界 ✓";
    s.ok("keyboard.type", json!({"text": text}));
    until("the typed text", || edit_value(&mut s, &window).1 == text);

    // A combo selects all; nothing stays held (the next type replaces the selection).
    s.ok("keyboard.combo", json!({"keys": "ctrl+a"}));
    s.ok("keyboard.type", json!({"text": "x"}));
    until("the replaced text", || edit_value(&mut s, &window).1 == "x");

    // The clipboard both ways.
    s.ok("clipboard.write", json!({"text": "urklipp ✓"}));
    let read = s.ok("clipboard.read", json!({}));
    assert_eq!(read["text"], "urklipp ✓", "{read}");

    // The capture is the screen's size.
    let cap = s.ok("screen.capture", json!({"format": "png", "size": "canvas"}));
    assert!(cap["width"].as_u64().unwrap_or(0) > 0, "{cap}");

    // The stop stops a long type part way. (The real chord is pressed through Wine's
    // input path in the driver's own test: a chord xdotool sends from the X side
    // reaches notepad as keys but not Wine 8's hotkey table.)
    s.ok("keyboard.combo", json!({"keys": "ctrl+a"}));
    s.ok("keyboard.type", json!({"text": "-"}));
    let long = "abcdefghij".repeat(300);
    let id = s.send(
        "tools.call",
        json!({"tool": "keyboard.type", "arguments": {"text": long, "interval_ms": 5}}),
    );
    std::thread::sleep(Duration::from_millis(700));
    let panic = s.call("control.panic", json!({"on": true}));
    assert_eq!(panic["result"]["state"], "stopped", "{panic}");
    let typed = s.response(id)["result"].clone();
    assert_eq!(typed["error"]["code"], "safety_stopped", "{typed}");
    assert_eq!(s.status()["state"], "stopped");
    s.method_ok("control.panic", json!({"on": false}));
    let got = edit_value(&mut s, &window).1;
    let got = got.strip_prefix('-').unwrap_or_else(|| panic!("{got:?}"));
    assert!(
        !got.is_empty() && got.len() < long.len() && long.starts_with(got),
        "an exact prefix: {} chars",
        got.len()
    );
    let _ = notepad.kill();
    let _ = notepad.wait();
}
