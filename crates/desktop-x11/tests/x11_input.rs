//! Input on a real X server, checked through what the applications did: a GTK3
//! checkbox toggles under a click, Unicode arrives exactly in a GTK entry and in a
//! terminal, combos, scroll and drags have their effects, and nothing stays held.

use cc_test_kit::x11 as x11_support;

use std::time::{Duration, Instant};

use cc_desktop::{Axis, Button, Driver, ElementHandle, HeldInputs, RawNode};
use cc_desktop_x11::X11Desktop;
use cc_protocol::{Key, PhysicalRect, Role, StateFlag};
use x11_support::{Desk, all, file_is};

const SECOND: Duration = Duration::from_secs(1);

fn key(name: &str) -> Key {
    Key::parse(name).unwrap()
}

fn tap(d: &mut X11Desktop, name: &str) {
    d.key(key(name), true).unwrap();
    d.key(key(name), false).unwrap();
}

fn combo(d: &mut X11Desktop, names: &[&str]) {
    for n in names {
        d.key(key(n), true).unwrap();
    }
    for n in names.iter().rev() {
        d.key(key(n), false).unwrap();
    }
}

fn center(r: PhysicalRect) -> (i32, i32) {
    (r.x + r.width as i32 / 2, r.y + r.height as i32 / 2)
}

fn click_at(d: &mut X11Desktop, (x, y): (i32, i32)) {
    d.pointer_move(x, y).unwrap();
    assert_eq!(d.pointer_position().unwrap(), (x, y));
    d.button(Button::Left, true).unwrap();
    d.button(Button::Left, false).unwrap();
}

fn type_str(d: &mut X11Desktop, text: &str) {
    for c in text.chars() {
        d.type_char(c).unwrap();
    }
}

fn tree(d: &mut X11Desktop, window: u64) -> Vec<RawNode> {
    d.a11y_tree(Some(window), 5000).unwrap()
}

/// The first node matching `pred`.
fn pick(d: &mut X11Desktop, window: u64, pred: impl Fn(&RawNode) -> bool) -> RawNode {
    let t = tree(d, window);
    all(&t)
        .into_iter()
        .find(|n| pred(n))
        .cloned()
        .expect("a matching node")
}

fn states(d: &mut X11Desktop, h: &ElementHandle) -> Vec<StateFlag> {
    d.a11y_element(h).unwrap().expect("element exists").states
}

fn value(d: &mut X11Desktop, h: &ElementHandle) -> Option<String> {
    d.a11y_element(h).unwrap().and_then(|i| i.value)
}

fn wait_value(desk: &Desk, d: &mut X11Desktop, h: &ElementHandle, want: &str) {
    let mut last = None;
    let start = Instant::now();
    while start.elapsed() < 10 * SECOND {
        last = value(d, h);
        if last.as_deref() == Some(want) {
            return;
        }
        std::thread::sleep(Duration::from_millis(30));
    }
    let _ = desk;
    panic!("value is {last:?}, expected {want:?}");
}

fn enabled_edit(n: &RawNode) -> bool {
    n.role == Role::Edit
        && n.states.contains(&StateFlag::Enabled)
        && n.states.contains(&StateFlag::Editable)
        && n.value.as_deref() == Some("")
        && n.rect.is_some()
}

fn enabled_slider(n: &RawNode) -> bool {
    n.role == Role::Slider
        && n.states.contains(&StateFlag::Enabled)
        && n.value.as_deref() == Some("50")
        && n.rect.is_some_and(|r| r.width > r.height)
}

#[test]
fn a_click_toggles_a_gtk_checkbox() {
    let mut desk = Desk::start();
    let mut d = desk.driver();
    let win = desk.widget_factory(&mut d);
    let cb = pick(&mut d, win, |n| {
        n.role == Role::Checkbox
            && n.states.contains(&StateFlag::Enabled)
            && !n.states.contains(&StateFlag::Checked)
    });
    let r = cb.rect.expect("checkbox rect");
    // Click the box itself (left part of the rect), as a person would.
    let t = Instant::now();
    click_at(&mut d, (r.x + 8, r.y + r.height as i32 / 2));
    let click_ms = t.elapsed().as_secs_f64() * 1000.0;
    desk.wait_until("the checkbox is checked", 10 * SECOND, || {
        states(&mut d, &cb.handle).contains(&StateFlag::Checked)
    });
    click_at(&mut d, center(r));
    desk.wait_until("the checkbox is unchecked", 10 * SECOND, || {
        !states(&mut d, &cb.handle).contains(&StateFlag::Checked)
    });
    assert_eq!(d.held_inputs(), HeldInputs::default());
    eprintln!("click (move+press+release) {click_ms:.2} ms");
}

const UNICODE: &str = "Ünïcödé héllo — 日本語 🎉 ß ñ € ✓ Ω ﬁ e\u{301} ABC xyz 0123 !@#$%^&*()_+{}|:\"<>?~`-=[]\\;',./";

#[test]
fn unicode_and_combos_reach_a_gtk_entry() {
    let mut desk = Desk::start();
    let mut d = desk.driver();
    let win = desk.widget_factory(&mut d);
    let before = desk.keyboard_mapping();
    let entry = pick(&mut d, win, enabled_edit);
    click_at(&mut d, center(entry.rect.unwrap()));
    desk.wait_until("the entry has focus", 10 * SECOND, || {
        states(&mut d, &entry.handle).contains(&StateFlag::Focused)
    });
    let t = Instant::now();
    type_str(&mut d, UNICODE);
    let per_char = t.elapsed().as_secs_f64() * 1000.0 / UNICODE.chars().count() as f64;
    wait_value(&desk, &mut d, &entry.handle, UNICODE);
    eprintln!("type_char: {per_char:.2} ms per character (mixed text)");

    // ctrl+a selects all, typing replaces it; shift+Home selects back to the start.
    combo(&mut d, &["ctrl", "a"]);
    type_str(&mut d, "plain");
    wait_value(&desk, &mut d, &entry.handle, "plain");
    combo(&mut d, &["shift", "home"]);
    tap(&mut d, "backspace");
    wait_value(&desk, &mut d, &entry.handle, "");
    assert_eq!(d.held_inputs(), HeldInputs::default());

    // The spare keycodes bound for the text are restored once typing is over.
    std::thread::sleep(Duration::from_millis(300));
    d.poll_events();
    d.release_all().unwrap();
    assert_eq!(desk.keyboard_mapping(), before, "keyboard mapping restored");
}

#[test]
fn unicode_reaches_a_terminal_exactly() {
    let mut desk = Desk::start();
    let mut d = desk.driver();
    let file = desk.path("typed.txt");
    let script = format!("cat > '{}'", file.display());
    desk.spawn(
        "xterm",
        &["-u8", "-geometry", "80x20+50+50", "-e", "sh", "-c", &script],
    );
    let mut id = 0;
    desk.wait_until("the xterm window", 20 * SECOND, || {
        d.windows().is_ok_and(|ws| {
            ws.iter()
                .find(|w| w.app_id == "XTerm")
                .map(|w| id = w.id)
                .is_some()
        })
    });
    d.focus_window(id).unwrap();
    let w = d
        .windows()
        .unwrap()
        .into_iter()
        .find(|w| w.id == id)
        .unwrap();
    assert!(w.focused);
    click_at(&mut d, center(w.rect));
    // Give the terminal a moment to start `cat` (its pty is open once it maps).
    std::thread::sleep(Duration::from_millis(300));
    let text = format!("{UNICODE}\nsecond line\ttab\n");
    type_str(&mut d, &text);
    combo(&mut d, &["ctrl", "d"]);
    let mut ok = false;
    let start = Instant::now();
    while start.elapsed() < 10 * SECOND {
        if file_is(&file, &text) {
            ok = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        ok,
        "the file holds {:?}",
        std::fs::read_to_string(&file).unwrap_or_default()
    );
}

#[test]
fn scroll_and_drag_move_a_gtk_slider() {
    let mut desk = Desk::start();
    let mut d = desk.driver();
    let win = desk.widget_factory(&mut d);
    let slider = pick(&mut d, win, enabled_slider);
    let r = slider.rect.unwrap();
    let (cx, cy) = center(r);
    d.pointer_move(cx, cy).unwrap();
    for _ in 0..3 {
        d.scroll(Axis::Vertical, false).unwrap();
    }
    desk.wait_until("scrolling down moved the slider", 10 * SECOND, || {
        value(&mut d, &slider.handle).as_deref() != Some("50")
    });
    let down = value(&mut d, &slider.handle);
    for _ in 0..3 {
        d.scroll(Axis::Vertical, true).unwrap();
    }
    wait_value(&desk, &mut d, &slider.handle, "50");
    for _ in 0..2 {
        d.scroll(Axis::Horizontal, true).unwrap();
    }
    desk.wait_until("scrolling right moved the slider", 10 * SECOND, || {
        value(&mut d, &slider.handle).as_deref() != Some("50")
    });
    eprintln!("after 3 notches down: {down:?}");

    // Drag the knob (at 50 %: the centre) to the far right: the value goes up to 100.
    d.pointer_move(cx, cy).unwrap();
    let start_value: f64 = value(&mut d, &slider.handle).unwrap().parse().unwrap();
    d.button(Button::Left, true).unwrap();
    assert_eq!(d.held_inputs().buttons, [Button::Left]);
    let (tx, _) = ((r.x + r.width as i32 + 40), cy);
    for i in 1..=12 {
        d.pointer_move(cx + (tx - cx) * i / 12, cy).unwrap();
        std::thread::sleep(Duration::from_millis(10));
    }
    d.button(Button::Left, false).unwrap();
    desk.wait_until("dragging moved the slider up", 10 * SECOND, || {
        value(&mut d, &slider.handle)
            .and_then(|v| v.parse::<f64>().ok())
            .is_some_and(|v| v > start_value + 20.0)
    });
    assert_eq!(d.held_inputs(), HeldInputs::default());
}

#[test]
fn dragging_a_title_bar_moves_the_window() {
    let mut desk = Desk::start();
    let mut d = desk.driver();
    desk.spawn("xterm", &["-geometry", "40x10+300+300"]);
    // Wait until openbox has framed, placed and focused it (the rect stays put).
    let mut w = None;
    let mut last = None;
    desk.wait_until(
        "the xterm window is framed and focused",
        20 * SECOND,
        || {
            let now = d
                .windows()
                .ok()
                .and_then(|ws| ws.into_iter().find(|w| w.app_id == "XTerm" && w.focused));
            let stable = now.is_some() && now.as_ref().map(|w| w.rect) == last;
            last = now.as_ref().map(|w| w.rect);
            w = now;
            std::thread::sleep(Duration::from_millis(100));
            stable
        },
    );
    let w = w.unwrap();
    // The frame's title bar is above the client area: a few pixels below the top.
    let (x0, y0) = (w.rect.x + 30, w.rect.y + 6);
    d.pointer_move(x0, y0).unwrap();
    d.button(Button::Left, true).unwrap();
    for i in 1..=20 {
        d.pointer_move(x0 + 10 * i, y0 + 5 * i).unwrap();
        std::thread::sleep(Duration::from_millis(10));
    }
    d.button(Button::Left, false).unwrap();
    desk.wait_until("the window moved by (200, 100)", 10 * SECOND, || {
        d.windows().is_ok_and(|ws| {
            ws.iter()
                .any(|m| m.id == w.id && m.rect.x == w.rect.x + 200 && m.rect.y == w.rect.y + 100)
        })
    });
}

#[test]
fn release_all_leaves_no_key_or_button_down() {
    let desk = Desk::start();
    let mut d = desk.driver();
    d.pointer_move(1800, 1000).unwrap();
    d.key(key("shift"), true).unwrap();
    d.key(key("ctrl"), true).unwrap();
    d.key(key("x"), true).unwrap();
    // A key the layout lacks goes down on a spare keycode and stays pinned there.
    d.key(key("f24"), true).unwrap();
    d.button(Button::Right, true).unwrap();
    let held = d.held_inputs();
    assert_eq!(held.keys, ["ctrl", "f24", "shift", "x"]);
    assert_eq!(held.buttons, [Button::Right]);
    assert_eq!(desk.inputs_down().0, 4, "four keys down before");
    d.release_all().unwrap();
    assert_eq!(d.held_inputs(), HeldInputs::default());
    let (keys, buttons) = desk.inputs_down();
    assert_eq!(keys, 0, "no key down after release_all");
    assert_eq!(buttons, 0, "no button down: {buttons:#x}");
    // Releasing twice is harmless.
    d.release_all().unwrap();
}

/// A click reads the pointer back from the round trip that closed it; the next look,
/// or one after someone else moved the pointer, asks the server again.
#[test]
fn the_pointer_read_after_a_click_is_where_it_is() {
    let desk = Desk::start();
    let mut d = desk.driver();
    d.pointer_move(300, 200).unwrap();
    d.button(Button::Left, true).unwrap();
    d.button(Button::Left, false).unwrap();
    assert_eq!(d.pointer_position().unwrap(), (300, 200));
    // Another client moves it: the driver sees the move, not its own last click.
    let out = desk.run("xdotool", &["mousemove", "500", "400"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(d.pointer_position().unwrap(), (500, 400));
    // Moved right after a click: the first look may still be the click's own read
    // (taken within 100 ms of it), the next one asks.
    d.button(Button::Left, true).unwrap();
    d.button(Button::Left, false).unwrap();
    let out = desk.run("xdotool", &["mousemove", "10", "20"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first = d.pointer_position().unwrap();
    assert!([(500, 400), (10, 20)].contains(&first), "{first:?}");
    assert_eq!(d.pointer_position().unwrap(), (10, 20), "asked again");
    // A scroll closes the same way.
    d.scroll(Axis::Vertical, false).unwrap();
    assert_eq!(d.pointer_position().unwrap(), (10, 20));
}
