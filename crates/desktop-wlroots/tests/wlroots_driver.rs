//! The wlroots driver on a private headless sway: capture (every output, a scaled one,
//! a negative origin), layout changes, Unicode typing through the uploaded keymap into
//! a real terminal, nothing left held, windows with rectangles and focus.

use cc_test_kit::sway as wlroots_support;

use std::time::Duration;

use cc_desktop::{Driver, DriverEvent, Pace};
use cc_desktop_wlroots::{WlrootsDesktop, WlrootsOptions};
use cc_protocol::{Key, PhysicalRect};
use wlroots_support::Desk;

fn driver(desk: &Desk) -> WlrootsDesktop {
    WlrootsDesktop::connect_with(WlrootsOptions {
        display: Some(desk.path("wayland-1").display().to_string()),
        swaysock: Some(desk.swaysock.clone()),
        // The desk's bus belongs to the desk user; these tests run as root.
        session_bus: Some("unix:path=/nonexistent".into()),
    })
    .expect("connect to the desk")
}

fn rect(x: i32, y: i32, width: u32, height: u32) -> PhysicalRect {
    PhysicalRect {
        x,
        y,
        width,
        height,
    }
}

#[test]
fn capture_shows_the_outputs_and_follows_layout_changes() {
    let desk = Desk::start();
    desk.swaymsg(&["output", "HEADLESS-1", "bg", "#ff0000", "solid_color"]);
    let mut d = driver(&desk);
    let caps = d.capabilities();
    assert!(
        caps.capture && caps.input && caps.windows && !caps.hotkey,
        "{caps:?}"
    );
    let layout = d.layout().unwrap();
    assert_eq!(layout.displays.len(), 1, "{layout:?}");
    assert_eq!(layout.displays[0].rect, rect(0, 0, 1920, 1080));
    assert_eq!(layout.displays[0].name, "HEADLESS-1");
    desk.wait_until("the red background", Duration::from_secs(10), || {
        d.capture(rect(0, 0, 1920, 1080))
            .is_ok_and(|img| img.get(960, 540) == Some([255, 0, 0]))
    });

    // A second output at a negative origin: a layout change, and capture spans both.
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
    desk.swaymsg(&["output", "HEADLESS-2", "bg", "#0000ff", "solid_color"]);
    desk.wait_until("the layout change event", Duration::from_secs(10), || {
        d.poll_events().contains(&DriverEvent::LayoutChanged)
            && d.layout().is_ok_and(|l| l.displays.len() == 2)
    });
    let layout = d.layout().unwrap();
    let second = layout
        .displays
        .iter()
        .find(|x| x.name == "HEADLESS-2")
        .unwrap();
    assert_eq!(second.rect, rect(-1280, 0, 1280, 720), "{layout:?}");
    assert!(
        layout
            .displays
            .iter()
            .any(|x| x.primary && x.name == "HEADLESS-1")
    );
    desk.wait_until(
        "both outputs in one capture",
        Duration::from_secs(10),
        || {
            // (The headless backend draws a software cursor near the layout's origin.)
            let c = d.capture(rect(-1280, 0, 3200, 1080));
            c.is_ok_and(|img| {
                img.width == 3200
                    && img.get(100, 100) == Some([0, 0, 255])
                    && img.get(1280 + 500, 300) == Some([255, 0, 0])
                    && img.get(100, 900) == Some([0, 0, 0])
            })
        },
    );

    // A scaled output: its layout size halves, and capture resamples to it.
    desk.swaymsg(&["output", "HEADLESS-1", "scale", "2"]);
    desk.wait_until("the scaled layout", Duration::from_secs(10), || {
        d.poll_events();
        d.layout().is_ok_and(|l| {
            l.displays
                .iter()
                .any(|x| x.name == "HEADLESS-1" && x.rect.width == 960 && x.rect.height == 540)
        })
    });
    let l = d.layout().unwrap();
    let first = l
        .displays
        .iter()
        .find(|x| x.name == "HEADLESS-1")
        .unwrap()
        .rect;
    let img = d.capture(first).unwrap();
    assert_eq!((img.width, img.height), (960, 540));
    assert_eq!(img.get(480, 270), Some([255, 0, 0]));
}

/// Every capture shows the screen as it is when asked, never an older frame: the frame
/// the driver keeps ready between captures copies the output's next commit. Switching
/// workspaces changes the screen at once (sway's scene, no client involved).
#[test]
fn every_capture_shows_the_screen_as_it_is_now() {
    let mut desk = Desk::start();
    desk.swaymsg(&["output", "HEADLESS-1", "bg", "#ff0000", "solid_color"]);
    desk.spawn("foot", &["--app-id", "cc-fresh"]);
    desk.wait_view("cc-fresh");
    let mut d = driver(&desk);
    let full = rect(0, 0, 1920, 1080);
    let red = Some([255, 0, 0]);
    desk.swaymsg(&["workspace", "2"]);
    desk.wait_until("the red background", Duration::from_secs(10), || {
        d.capture(full).is_ok_and(|img| img.get(960, 540) == red)
    });
    desk.swaymsg(&["workspace", "1"]);
    desk.wait_until("the terminal", Duration::from_secs(10), || {
        d.capture(full)
            .is_ok_and(|img| img.get(960, 540).is_some_and(|p| Some(p) != red))
    });
    for round in 0..5 {
        desk.swaymsg(&["workspace", "2"]);
        let img = d.capture(full).unwrap();
        assert_eq!(img.get(960, 540), red, "round {round}: the empty workspace");
        desk.swaymsg(&["workspace", "1"]);
        let img = d.capture(full).unwrap();
        assert_ne!(img.get(960, 540), red, "round {round}: the terminal");
    }
}

#[test]
fn unicode_typed_into_a_terminal_arrives_exactly_and_nothing_stays_held() {
    let mut desk = Desk::start();
    let out = desk.path("typed.txt");
    desk.spawn(
        "foot",
        &[
            "--app-id",
            "cc-typing",
            "sh",
            "-c",
            &format!("cat > {}", out.display()),
        ],
    );
    let view = desk.wait_view("cc-typing");
    let mut d = driver(&desk);
    let wins = d.windows().unwrap();
    let w = wins
        .iter()
        .find(|w| w.app_id == "cc-typing")
        .expect("listed");
    assert_eq!(w.pid, view["pid"].as_u64().map(|p| p as u32));
    assert!(w.rect.width > 0 && w.rect.height > 0, "{w:?}");
    d.focus_window(w.id).unwrap();
    let text = "héllo wörld 世界 ✓ Ünïcödé, ASCII: {Hello}! ~`\n";
    for c in text.chars() {
        d.type_char(c).unwrap();
    }
    // A chord through the plain layout after the slots: ctrl+d ends cat's input.
    d.key(Key::parse("ctrl").unwrap(), true).unwrap();
    d.key(Key::parse("d").unwrap(), true).unwrap();
    d.key(Key::parse("d").unwrap(), false).unwrap();
    d.key(Key::parse("ctrl").unwrap(), false).unwrap();
    desk.wait_until(
        "the typed text in the file",
        Duration::from_secs(10),
        || std::fs::read_to_string(&out).is_ok_and(|s| s == text),
    );
    assert_eq!(d.held_inputs(), Default::default());
}

#[test]
fn release_all_lets_go_of_held_keys_and_buttons() {
    let mut desk = Desk::start();
    let out = desk.path("held.txt");
    desk.spawn(
        "foot",
        &[
            "--app-id",
            "cc-held",
            "sh",
            "-c",
            &format!("cat > {}", out.display()),
        ],
    );
    desk.wait_view("cc-held");
    let mut d = driver(&desk);
    d.pointer_move(500, 500).unwrap();
    assert_eq!(d.pointer_position().unwrap(), (500, 500));
    d.key(Key::parse("x").unwrap(), true).unwrap();
    d.button(cc_desktop::Button::Right, true).unwrap();
    let held = d.held_inputs();
    assert_eq!(held.keys, ["x"]);
    assert_eq!(held.buttons, [cc_desktop::Button::Right]);
    d.release_all().unwrap();
    assert_eq!(d.held_inputs(), Default::default());
    // A key left down would repeat in the terminal: after the repeat delay the
    // file stops growing at a few characters.
    std::thread::sleep(Duration::from_millis(900));
    d.type_char('\n').unwrap();
    desk.wait_until("the line", Duration::from_secs(5), || {
        std::fs::read_to_string(&out).is_ok_and(|s| s.ends_with('\n'))
    });
    let first = std::fs::read_to_string(&out).unwrap();
    std::thread::sleep(Duration::from_millis(900));
    let later = std::fs::read_to_string(&out).unwrap();
    assert_eq!(first, later, "nothing repeats after release_all");
    assert!(first.len() < 10, "a held key repeated: {first:?}");
}

#[test]
fn bad_input_is_a_clear_error() {
    let desk = Desk::start();
    let mut d = driver(&desk);
    let e = d.type_char('\u{1}').unwrap_err();
    assert!(e.to_string().contains("control character"), "{e}");
    let e = d.focus_window(12345).unwrap_err();
    assert!(
        e.to_string().contains("12345") || e.to_string().contains("con_id"),
        "{e}"
    );
    let e = WlrootsDesktop::connect_with(WlrootsOptions {
        display: Some(desk.path("no-such-socket").display().to_string()),
        ..WlrootsOptions::default()
    })
    .err()
    .expect("no compositor there");
    assert!(e.to_string().contains("no-such-socket"), "{e}");
}

/// Without the compositor's IPC the foreign-toplevel protocol alone lists the windows
/// (on their output's rectangle, no pid) and activating one focuses it.
#[test]
fn without_ipc_windows_come_from_the_foreign_toplevel_protocol() {
    let mut desk = Desk::start();
    desk.spawn("foot", &["--app-id", "cc-first", "cat"]);
    desk.wait_view("cc-first");
    desk.spawn("foot", &["--app-id", "cc-second", "cat"]);
    desk.wait_view("cc-second");
    let mut d = WlrootsDesktop::connect_with(WlrootsOptions {
        display: Some(desk.path("wayland-1").display().to_string()),
        swaysock: None,
        session_bus: Some("unix:path=/nonexistent".into()),
    })
    .expect("connect");
    let mut wins = Vec::new();
    desk.wait_until("both toplevels", Duration::from_secs(10), || {
        wins = d.windows().unwrap_or_default();
        wins.len() == 2
    });
    let first = wins
        .iter()
        .find(|w| w.app_id == "cc-first")
        .unwrap()
        .clone();
    assert_eq!(first.pid, None, "the protocol has no pids");
    assert_eq!(first.rect, rect(0, 0, 1920, 1080), "its output's rectangle");
    assert!(!first.focused, "the second terminal has focus");
    d.focus_window(first.id).unwrap();
    desk.wait_until("the first terminal focused", Duration::from_secs(5), || {
        desk.views()
            .iter()
            .any(|v| v["app_id"] == "cc-first" && v["focused"] == true)
    });
    desk.wait_until(
        "the protocol's activated state",
        Duration::from_secs(5),
        || {
            d.windows()
                .is_ok_and(|ws| ws.iter().any(|w| w.app_id == "cc-first" && w.focused))
        },
    );
}

/// A text announced before it is typed (as `keyboard.type` does) binds what the layout
/// lacks in one keymap; one with more such characters than a keymap has slots is bound
/// batch by batch as typing reaches them (and again when an earlier batch's characters
/// come back); characters typed without being announced still arrive.
#[test]
fn announced_text_with_more_characters_than_slots_arrives_exactly() {
    let mut desk = Desk::start();
    let out = desk.path("many.txt");
    desk.spawn(
        "foot",
        &[
            "--app-id",
            "cc-many",
            "sh",
            "-c",
            &format!("cat > {}", out.display()),
        ],
    );
    desk.wait_view("cc-many");
    let mut d = driver(&desk);
    let many: String = (0..70u32)
        .map(|i| char::from_u32(0x4e00 + i * 7).unwrap())
        .collect();
    let text = format!("{many} é, {many} ü!\n");
    d.prepare_typing(&text, Pace::BackToBack).unwrap();
    for c in text.chars() {
        d.type_char(c).unwrap();
    }
    let unannounced = "✓ ñ\n";
    for c in unannounced.chars() {
        d.type_char(c).unwrap();
    }
    let expected = format!("{text}{unannounced}");
    desk.wait_until(
        "the typed text in the file",
        Duration::from_secs(20),
        || std::fs::read_to_string(&out).is_ok_and(|s| s == expected),
    );
    d.release_all().unwrap();
    assert_eq!(d.held_inputs(), Default::default());
}

/// Typing faster than the compositor reads fills the socket: the driver waits for it
/// to drain instead of failing, and every character arrives.
///
/// Typed as `keyboard.type` types (announced, back to back), a flood far past what the
/// sockets hold arrives whole, with the terminal drawing every character meanwhile.
#[test]
fn typing_faster_than_the_compositor_reads_loses_nothing() {
    let mut desk = Desk::start();
    let out = desk.path("fast.txt");
    desk.spawn(
        "foot",
        &[
            "--app-id",
            "cc-fast",
            "sh",
            "-c",
            &format!("cat > {}", out.display()),
        ],
    );
    desk.wait_view("cc-fast");
    let mut d = driver(&desk);
    let flood = "The quick brown fox jumps over the lazy dog 0123456789!\n".repeat(50);
    // Two floods, each well past what the socket holds, with the terminal (which draws
    // every character) allowed to catch up between them: a loaded machine can leave the
    // terminal itself behind the compositor, which is not what this tests.
    let mut text = String::new();
    for _ in 0..2 {
        d.prepare_typing(&flood, Pace::BackToBack).unwrap();
        for c in flood.chars() {
            d.type_char(c).unwrap();
        }
        text.push_str(&flood);
        desk.wait_until(
            "every character in the file",
            Duration::from_secs(60),
            || std::fs::read_to_string(&out).is_ok_and(|s| s.len() >= text.len()),
        );
    }
    assert_eq!(std::fs::read_to_string(&out).unwrap(), text);
}

/// A compositor on libwayland before 1.23 (this sway) disconnects a client whose socket
/// fills. A terminal that stops reading while a long text is typed (stopped outright
/// here: a machine under load does the same for a moment) survives it and then gets
/// every character: sent one key per write, it was disconnected within a few hundred.
#[test]
fn a_terminal_that_stops_reading_during_a_long_text_survives_and_gets_all_of_it() {
    let mut desk = Desk::start();
    let out = desk.path("paused.txt");
    let pid = desk.spawn(
        "foot",
        &[
            "--app-id",
            "cc-paused",
            "sh",
            "-c",
            &format!("cat > {}", out.display()),
        ],
    );
    desk.wait_view("cc-paused");
    let mut d = driver(&desk);
    let text = "The quick brown fox jumps over the lazy dog 0123456789!\n".repeat(30);
    let signal = |sig: &str| {
        let st = std::process::Command::new("kill")
            .args([sig, &pid.to_string()])
            .status()
            .unwrap();
        assert!(st.success(), "kill {sig} {pid}");
    };
    signal("-STOP");
    d.prepare_typing(&text, Pace::BackToBack).unwrap();
    for c in text.chars() {
        d.type_char(c).unwrap();
    }
    d.sync().unwrap();
    signal("-CONT");
    desk.wait_until(
        "every character in the file",
        Duration::from_secs(30),
        || std::fs::read_to_string(&out).is_ok_and(|s| s.len() >= text.len()),
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), text);
    let state = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    assert!(
        state
            .lines()
            .any(|l| l.starts_with("State:") && !l.contains("zombie")),
        "the terminal was disconnected: {state}"
    );
}
