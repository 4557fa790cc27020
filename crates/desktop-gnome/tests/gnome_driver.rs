//! The GNOME driver on a private headless gnome-shell: the layout, a capture from the
//! kept stream, keys and pasted Unicode reaching a terminal, windows with rectangles
//! from the extension (and what is missing without it), and nothing held after.

use std::time::Duration;

use cc_desktop::{Driver, DriverError};
use cc_protocol::{Key, PhysicalRect};
use cc_test_kit::gnome::{GnomeDesk, GnomeDeskOptions};

fn full() -> PhysicalRect {
    PhysicalRect {
        x: 0,
        y: 0,
        width: 1920,
        height: 1080,
    }
}

#[test]
fn layout_capture_windows_and_typing() {
    let mut desk = GnomeDesk::start();
    let mut d = desk.driver();
    let caps = d.capabilities();
    assert!(
        caps.input && caps.capture && caps.windows && caps.clipboard,
        "{caps:?}"
    );
    let layout = d.layout().unwrap();
    assert_eq!(layout.displays.len(), 1);
    assert_eq!(layout.displays[0].rect, full());
    let img = d.capture(full()).expect("a capture of the whole screen");
    assert_eq!((img.width, img.height), (1920, 1080));
    assert!(
        img.pixels.iter().any(|p| *p != 0),
        "the shell's frame is not all black"
    );

    let file = desk.oracle_terminal("cc-oracle");
    let mut win = None;
    desk.wait_until("the terminal's window", Duration::from_secs(30), || {
        win = d
            .windows()
            .unwrap()
            .into_iter()
            .find(|w| w.app_id.contains("cc-oracle") && w.rect.width > 0);
        win.is_some()
    });
    let win = win.unwrap();
    d.focus_window(win.id).unwrap();
    let (cx, cy) = (
        win.rect.x + win.rect.width as i32 / 2,
        win.rect.y + win.rect.height as i32 / 2,
    );
    assert_eq!(d.window_at(cx, cy).unwrap().map(|w| w.id), Some(win.id));
    // The first keys after a session start must not be lost, and characters outside
    // the layout arrive through the clipboard; the user's clipboard comes back.
    d.clipboard_write("the user's own").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    for c in "héllo 世界 ✓\n".chars() {
        d.type_char(c).unwrap();
    }
    let typed = || std::fs::read_to_string(&file).unwrap_or_default();
    let wait = desk.try_wait(Duration::from_secs(20), || typed() == "héllo 世界 ✓\n");
    assert!(wait, "typed {:?}; windows {:?}", typed(), d.windows());
    assert_eq!(
        d.clipboard_read().unwrap().text.as_deref(),
        Some("the user's own")
    );
    // Held keys and buttons are released by the stop.
    d.key(Key::parse("shift").unwrap(), true).unwrap();
    d.pointer_move(cx, cy).unwrap();
    d.button(cc_desktop::Button::Left, true).unwrap();
    assert_eq!(d.held_inputs().keys.len(), 1);
    d.release_all().unwrap();
    assert_eq!(d.held_inputs(), Default::default());
    assert!(matches!(
        d.pointer_move(5000, 5000),
        Err(DriverError::Failed(m)) if m.contains("no monitor")
    ));
}

#[test]
fn without_the_extension_there_are_no_windows_but_input_and_capture_work() {
    let desk = GnomeDesk::start_with(GnomeDeskOptions { extension: false });
    let mut d = desk.driver();
    let caps = d.capabilities();
    assert!(caps.input && caps.capture && !caps.windows, "{caps:?}");
    match d.windows() {
        Err(DriverError::Unavailable(m)) => {
            assert!(m.contains("computer-control setup --gnome-extension"))
        }
        other => panic!("{other:?}"),
    }
    let shot = d.capture(full());
    assert!(shot.is_ok(), "{:?}", shot.err());
    let report = cc_desktop_gnome::GnomeDesktop::probe(&cc_desktop_gnome::GnomeOptions {
        session_bus: Some(desk.bus.clone()),
        pipewire: Some(desk.path("pipewire-0")),
    })
    .unwrap();
    assert!(report.remote_desktop && report.screen_cast, "{report:?}");
    assert_eq!(report.unusable(), None, "{report:?}");
    assert_eq!(report.outputs, 1);
    assert!(report.extension.is_err(), "{report:?}");
}
