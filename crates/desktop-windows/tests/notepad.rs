//! One Wine desktop per test binary run, so the steps run in one test, in order:
//! Wine's notepad is the second-process application the driver drives.

use std::time::{Duration, Instant};

use cc_desktop::{
    Button, Driver, DriverError, DriverEvent, Indicator, Launched, RawNode, SemanticAction,
};
use cc_desktop_windows::capture_path::CapturePath;
use cc_desktop_windows::{TreeSource, WindowsDesktop};
use cc_protocol::{Key, Role};

fn until<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn find(nodes: &[RawNode], role: Role) -> Option<RawNode> {
    nodes.iter().find_map(|n| {
        if n.role == role {
            Some(n.clone())
        } else {
            find(&n.children, role)
        }
    })
}

fn combo(d: &mut WindowsDesktop, names: &str) {
    let keys: Vec<Key> = Key::split_combo(names)
        .iter()
        .map(|k| Key::parse(k).unwrap())
        .collect();
    for k in &keys {
        d.key(*k, true).unwrap();
    }
    for k in keys.iter().rev() {
        d.key(*k, false).unwrap();
    }
}

#[test]
fn the_driver_drives_wine_notepad() {
    let mut d = WindowsDesktop::open().expect("a desktop");
    let caps = d.capabilities();
    assert!(caps.capture && caps.input && caps.windows && caps.clipboard && caps.launch);
    assert!(caps.hotkey, "the default hotkey is registered");
    let report = d.report();
    // Wine 8 registers no CUIAutomation: the tree source is MSAA, and the report says
    // why with the HRESULT (REGDB_E_CLASSNOTREG) and what that leaves out.
    match &report.tree_source {
        TreeSource::Msaa { why } => assert!(why.contains("0x80040154"), "{why}"),
        TreeSource::UiAutomation => panic!("Wine 8 has no UI Automation"),
    }
    assert_eq!(d.tree_source(), &report.tree_source);
    assert!(report.tree_source.missing().is_some());
    // Wine 8 has no Desktop Duplication: the driver falls back to GDI and says why.
    assert_eq!(
        report.capture.path,
        CapturePath::Gdi,
        "{:?}",
        report.capture
    );
    assert!(
        report
            .capture
            .fallback_reason
            .as_deref()
            .is_some_and(|why| why.contains("Desktop Duplication")),
        "{:?}",
        report.capture
    );

    // Layout and capture: one 1280x1024 monitor, exact size, RGB.
    let layout = d.layout().unwrap();
    assert_eq!(layout.displays.len(), 1);
    let screen = layout.displays[0].rect;
    assert_eq!((screen.width, screen.height), (1280, 1024));

    // Launch notepad and find its window by pid, with the executable as app id.
    let pid = match d.launch("notepad", &[]).unwrap() {
        Launched::Started { pid, .. } => pid,
        Launched::Refused(why) => panic!("notepad refused: {why}"),
    };
    let win = until("notepad's window", || {
        d.windows()
            .unwrap()
            .into_iter()
            .find(|w| w.pid == Some(pid))
    });
    assert_eq!(win.app_id, "notepad.exe");
    d.focus_window(win.id).unwrap();
    assert!(
        d.windows()
            .unwrap()
            .iter()
            .any(|w| w.id == win.id && w.focused)
    );
    let centre = (
        win.rect.x + win.rect.width as i32 / 2,
        win.rect.y + win.rect.height as i32 / 2,
    );
    assert_eq!(
        d.window_at(centre.0, centre.1).unwrap().map(|w| w.id),
        Some(win.id)
    );

    // The edit control through MSAA, clicked at its rectangle.
    let tree = d.a11y_tree(Some(win.id), 200).unwrap();
    let edit = find(&tree, Role::Edit).expect("notepad's edit control");
    let r = edit.rect.expect("the edit's rectangle");
    let (x, y) = (r.x + 20, r.y + 20);
    d.pointer_move(x, y).unwrap();
    assert_eq!(d.pointer_position().unwrap(), (x, y));
    d.button(Button::Left, true).unwrap();
    d.button(Button::Left, false).unwrap();

    // Unicode typing, read back exactly.
    let text = "héllo 世界 ✓ 😀";
    for c in text.chars() {
        d.type_char(c).unwrap();
    }
    until("the typed text", || {
        let info = d.a11y_element(&edit.handle).unwrap()?;
        (info.value.as_deref() == Some(text)).then_some(())
    });

    // A key combo: select all, nothing held afterwards.
    combo(&mut d, "ctrl+a");
    assert!(d.held_inputs().keys.is_empty());

    // The clipboard, both ways.
    d.clipboard_write("från urklipp ✓").unwrap();
    let read = d.clipboard_read().unwrap();
    assert_eq!(read.text.as_deref(), Some("från urklipp ✓"));

    // The value interface replaces the text.
    d.a11y_set_text(&edit.handle, "set through MSAA").unwrap();
    let info = d.a11y_element(&edit.handle).unwrap().unwrap();
    assert_eq!(info.value.as_deref(), Some("set through MSAA"));
    assert!(info.settable_text);

    // The emergency chord, pressed for real, reaches the driver.
    let _ = d.poll_events();
    combo(&mut d, "ctrl+alt+f12");
    until("the hotkey", || {
        d.poll_events().contains(&DriverEvent::Hotkey).then_some(())
    });

    // The indicator shows and goes, and never enters the window list.
    d.set_indicator(Indicator::Acting).unwrap();
    assert!(
        d.windows()
            .unwrap()
            .iter()
            .all(|w| w.pid != Some(std::process::id()))
    );
    d.set_indicator(Indicator::Off).unwrap();

    // A capture of notepad's edit area is the white of an empty-ish edit control.
    let shot = d.capture(r).unwrap();
    assert_eq!((shot.width, shot.height), (r.width, r.height));
    assert_eq!(shot.pixels.len(), (r.width * r.height * 3) as usize);

    // A gone element is None, not an error.
    let gone = cc_desktop::ElementHandle("hwnd:1".into());
    assert_eq!(d.a11y_element(&gone).unwrap(), None);
    let bad = cc_desktop::ElementHandle("nonsense".into());
    assert_eq!(d.a11y_element(&bad).unwrap(), None);
    // A UI Automation handle on a system without UI Automation is refused with the
    // reason, read, acted on or written alike; a malformed one names nothing.
    let uia = cc_desktop::ElementHandle(format!("uia:{:x}:2a.1", win.id));
    for refused in [
        d.a11y_element(&uia).map(|_| ()),
        d.a11y_perform(&uia, SemanticAction::Invoke),
        d.a11y_set_text(&uia, "x"),
    ] {
        match refused {
            Err(DriverError::Unavailable(why)) => assert!(why.contains("0x80040154"), "{why}"),
            other => panic!("{other:?}"),
        }
    }
    let malformed = cc_desktop::ElementHandle("uia:zz:1".into());
    assert_eq!(d.a11y_element(&malformed).unwrap(), None);
    assert!(matches!(
        d.launch("C:\\x.exe", &[]).unwrap(),
        Launched::Refused(_)
    ));
    assert!(d.focus_window(1).is_err());
}
