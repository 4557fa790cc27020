//! The emergency hotkey on a real X server: pressed by another client, whatever window
//! has focus and whatever the lock keys, it reaches the driver once per press; a grab
//! another client holds is reported, and `set_hotkey` moves the grab.

use cc_test_kit::x11 as x11_support;

use std::time::Duration;

use cc_desktop::{Driver, DriverEvent};
use cc_desktop_x11::X11Desktop;
use cc_protocol::Key;
use x11_support::Desk;

fn hotkeys(d: &mut X11Desktop) -> usize {
    d.poll_events()
        .iter()
        .filter(|e| **e == DriverEvent::Hotkey)
        .count()
}

fn xdotool(desk: &Desk, args: &[&str]) {
    let out = desk.run("xdotool", args);
    assert!(
        out.status.success(),
        "xdotool {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Waits until the hotkey arrived, then checks nothing more comes.
fn expect_one(desk: &Desk, d: &mut X11Desktop) {
    let mut n = 0;
    desk.wait_until("the hotkey arrives", Duration::from_secs(5), || {
        n += hotkeys(d);
        n > 0
    });
    std::thread::sleep(Duration::from_millis(150));
    n += hotkeys(d);
    assert_eq!(n, 1, "one press, one hotkey");
}

fn keys(combo: &str) -> Vec<Key> {
    Key::split_combo(combo)
        .iter()
        .map(|k| Key::parse(k).unwrap())
        .collect()
}

#[test]
fn the_hotkey_arrives_whatever_has_focus() {
    let mut desk = Desk::start();
    let mut d = desk.driver();
    assert!(d.capabilities().hotkey);
    assert!(d.report().hotkey.is_ok());
    assert_eq!(hotkeys(&mut d), 0);

    xdotool(&desk, &["key", "ctrl+alt+F12"]);
    expect_one(&desk, &mut d);

    // With a terminal focused.
    desk.spawn("xterm", &["-geometry", "40x10+100+100"]);
    desk.wait_until("the xterm is focused", Duration::from_secs(20), || {
        d.windows()
            .is_ok_and(|ws| ws.iter().any(|w| w.app_id == "XTerm" && w.focused))
    });
    xdotool(&desk, &["key", "ctrl+alt+F12"]);
    expect_one(&desk, &mut d);

    // With Num Lock and Caps Lock on.
    xdotool(&desk, &["key", "Num_Lock", "Caps_Lock"]);
    xdotool(&desk, &["key", "ctrl+alt+F12"]);
    expect_one(&desk, &mut d);
    xdotool(&desk, &["key", "Num_Lock", "Caps_Lock"]);

    // Held down past the auto-repeat delay: still one.
    xdotool(&desk, &["keydown", "ctrl+alt+F12"]);
    std::thread::sleep(Duration::from_millis(900));
    xdotool(&desk, &["keyup", "F12", "keyup", "alt", "keyup", "ctrl"]);
    expect_one(&desk, &mut d);

    // Other combinations are not the hotkey.
    xdotool(
        &desk,
        &["key", "ctrl+F12", "alt+F12", "F12", "ctrl+alt+F11"],
    );
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(hotkeys(&mut d), 0);
}

/// `XF86Switch_VT_12` on F12: ctrl+alt+F12 switches consoles in the stock keymap.
const SWITCH_VT_12: u32 = 0x1008_fe0c;

#[test]
fn a_grab_held_elsewhere_is_reported_and_set_hotkey_moves_it() {
    let desk = Desk::start();
    let stock = desk.keyboard_mapping();
    assert!(
        stock.contains(&SWITCH_VT_12),
        "the stock keymap switches VTs"
    );
    let mut first = desk.driver();
    // While the hotkey is grabbed, ctrl+alt+F12 no longer switches consoles.
    assert!(!desk.keyboard_mapping().contains(&SWITCH_VT_12));
    assert!(first.capabilities().hotkey);
    // The same combination is already grabbed by the first driver.
    let mut second = desk.driver();
    assert!(!second.capabilities().hotkey, "second grab must fail");
    let why = second.report().hotkey.unwrap_err();
    assert!(why.contains("ctrl+alt+f12"), "{why}");
    // A different combination works for the second driver.
    second.set_hotkey(&keys("ctrl+shift+f11")).unwrap();
    assert!(second.capabilities().hotkey);
    xdotool(&desk, &["key", "ctrl+shift+F11"]);
    expect_one(&desk, &mut second);
    assert_eq!(hotkeys(&mut first), 0);
    // Asking for the taken one fails and says so.
    assert!(second.set_hotkey(&keys("ctrl+alt+f12")).is_err());
    assert!(!second.capabilities().hotkey);
    // Bad combinations are refused.
    assert!(second.set_hotkey(&keys("ctrl+alt")).is_err());
    assert!(second.set_hotkey(&keys("a+b")).is_err());
    // Dropping the first driver releases its grab.
    drop(first);
    let mut third = desk.driver();
    assert!(third.capabilities().hotkey);
    xdotool(&desk, &["key", "ctrl+alt+F12"]);
    expect_one(&desk, &mut third);
    // Every driver gone: the keymap is the stock one again.
    drop(second);
    drop(third);
    assert_eq!(desk.keyboard_mapping(), stock);
    // And the server consumes ctrl+alt+F12 again (its VT-switch action is back): a
    // plain grab of it sees nothing.
    use x11rb::connection::Connection;
    use x11rb::protocol::xproto::{ConnectionExt as _, GrabMode, ModMask};
    let (conn, screen) = x11rb::connect(Some(&desk.display)).unwrap();
    let root = conn.setup().roots[screen].root;
    let f12 = 96; // F12 in Xvfb's stock keymap
    conn.grab_key(
        false,
        root,
        ModMask::ANY,
        f12,
        GrabMode::ASYNC,
        GrabMode::ASYNC,
    )
    .unwrap()
    .check()
    .unwrap();
    xdotool(&desk, &["key", "ctrl+alt+F12"]);
    std::thread::sleep(Duration::from_millis(200));
    let mut presses = 0;
    while let Ok(Some(e)) = conn.poll_for_event() {
        presses += usize::from(matches!(e, x11rb::protocol::Event::KeyPress(_)));
    }
    assert_eq!(
        presses, 0,
        "the stock VT-switch action consumes ctrl+alt+F12"
    );
    xdotool(&desk, &["key", "F12"]);
    std::thread::sleep(Duration::from_millis(200));
    while let Ok(Some(e)) = conn.poll_for_event() {
        presses += usize::from(matches!(e, x11rb::protocol::Event::KeyPress(_)));
    }
    assert_eq!(presses, 1, "plain F12 still reaches a grab");
}
