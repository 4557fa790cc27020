//! Accessibility over AT-SPI on a real desktop: a snapshot of gtk3-widget-factory
//! lists its widgets with rectangles that match the screen and a top-level bound to
//! its X11 window; semantic actions and text by node work and read back; password
//! fields are marked and never read; stale handles are gone, not errors.

use cc_test_kit::x11 as x11_support;

use std::time::{Duration, Instant};

use cc_desktop::{Driver, ElementHandle, RawNode, SemanticAction};
use cc_desktop_x11::X11Desktop;
use cc_protocol::{PhysicalRect, Role, StateFlag};
use x11_support::{Desk, all, contains, find};

const SECOND: Duration = Duration::from_secs(1);

fn states(d: &mut X11Desktop, h: &ElementHandle) -> Vec<StateFlag> {
    d.a11y_element(h).unwrap().expect("element exists").states
}

/// Switches the widget factory to its third page through the header's "Page 3" radio
/// (Action interface); returns that radio.
fn show_page_3(d: &mut X11Desktop, tree: &[RawNode]) -> RawNode {
    let page3 = find(tree, Role::Radiobutton, Some("Page 3"))
        .expect("the Page 3 switcher")
        .clone();
    d.a11y_perform(&page3.handle, SemanticAction::Toggle)
        .unwrap();
    page3
}

#[test]
fn a_snapshot_lists_the_widgets_where_they_are() {
    let mut desk = Desk::start();
    let mut d = desk.driver();
    assert!(d.capabilities().accessibility);
    let id = desk.widget_factory(&mut d);
    // A second application without accessibility: its window is not in the tree.
    desk.spawn("xterm", &["-geometry", "30x5+1500+900"]);
    desk.wait_until("the xterm window", 20 * SECOND, || {
        d.windows()
            .is_ok_and(|ws| ws.iter().any(|w| w.app_id == "XTerm"))
    });
    let win = d
        .windows()
        .unwrap()
        .into_iter()
        .find(|w| w.id == id)
        .unwrap();

    let t = Instant::now();
    let tree = d.a11y_tree(None, 10_000).unwrap();
    let snapshot_ms = t.elapsed().as_secs_f64() * 1000.0;
    let nodes = all(&tree).len();
    eprintln!("snapshot: {nodes} nodes in {snapshot_ms:.1} ms");
    assert_eq!(tree.len(), 1, "one accessible top-level on screen");
    let top = &tree[0];
    assert_eq!(top.role, Role::Window);
    assert_eq!(top.window_id, Some(id));
    assert_eq!(
        top.name, win.title,
        "an unnamed top-level takes its window title"
    );
    assert_eq!(top.rect, Some(win.rect));
    assert!(nodes > 100, "{nodes} nodes");

    // Known widgets of the first page.
    let checkboxes: Vec<&RawNode> = all(&tree)
        .into_iter()
        .filter(|n| n.role == Role::Checkbox && n.name == "checkbutton")
        .collect();
    assert_eq!(checkboxes.len(), 6);
    assert_eq!(
        checkboxes
            .iter()
            .filter(|n| n.states.contains(&StateFlag::Checked))
            .count(),
        2
    );
    for name in ["Minimize", "Maximize", "Close"] {
        assert!(find(&tree, Role::Button, Some(name)).is_some(), "{name}");
    }
    for name in ["Page 1", "Page 2", "Page 3"] {
        assert!(
            find(&tree, Role::Radiobutton, Some(name)).is_some(),
            "{name}"
        );
    }
    for name in ["page 1", "page 2", "page 3"] {
        assert!(find(&tree, Role::Tabitem, Some(name)).is_some(), "{name}");
    }
    let sliders = all(&tree)
        .into_iter()
        .filter(|n| n.role == Role::Slider)
        .count();
    assert!(sliders >= 5, "{sliders} sliders");

    // Every visible node's rectangle lies inside the window; hidden nodes have none.
    let wr = win.rect;
    for n in all(&tree) {
        if let Some(r) = n.rect {
            assert!(
                contains(wr, r),
                "{:?} {:?} at {r:?} outside {wr:?}",
                n.role,
                n.name
            );
            assert!(n.states.contains(&StateFlag::Visible));
        }
        if !n.states.contains(&StateFlag::Visible) {
            assert_eq!(n.rect, None);
        }
        // Whatever can be aimed at has a rectangle: every visible node with a name, or
        // one that takes focus (only unnamed layout boxes go without).
        if n.states.contains(&StateFlag::Visible)
            && (!n.name.is_empty() || n.states.contains(&StateFlag::Focusable))
        {
            assert!(n.rect.is_some(), "{:?} {:?} has no rect", n.role, n.name);
        }
    }
    let boxes = all(&tree)
        .into_iter()
        .filter(|n| n.states.contains(&StateFlag::Visible) && n.rect.is_none())
        .count();
    assert!(
        boxes > 0,
        "the factory's unnamed layout boxes carry no rect"
    );

    // The rectangles are where the pixels are: toggling a checkbox semantically
    // changes pixels inside its rectangle and none in the strip right of it.
    // (The last one: the one before it is drawn "inconsistent" whatever its state.)
    let cb = checkboxes
        .iter()
        .rev()
        .find(|n| n.states.contains(&StateFlag::Enabled) && !n.states.contains(&StateFlag::Checked))
        .copied()
        .unwrap()
        .clone();
    let r = cb.rect.unwrap();
    let strip = PhysicalRect {
        x: r.x + r.width as i32,
        y: r.y,
        width: 8,
        height: r.height,
    };
    let (inside0, strip0) = (d.capture(r).unwrap(), d.capture(strip).unwrap());
    let info = d.a11y_element(&cb.handle).unwrap().unwrap();
    assert_eq!(info.actions, [SemanticAction::Toggle]);
    assert_eq!(info.window_id, Some(id));
    assert_eq!(
        (info.role, info.name.as_str()),
        (Role::Checkbox, "checkbutton")
    );
    d.a11y_perform(&cb.handle, SemanticAction::Toggle).unwrap();
    desk.wait_until("the checkbox is checked", 10 * SECOND, || {
        states(&mut d, &cb.handle).contains(&StateFlag::Checked)
    });
    desk.wait_until("the check mark is drawn in the rect", 10 * SECOND, || {
        d.capture(r).is_ok_and(|now| now != inside0)
    });
    assert!(
        d.capture(strip).unwrap() == strip0,
        "nothing changes beside it"
    );

    // Scoped to the window: the same tree; an unknown window is an error.
    let scoped = d.a11y_tree(Some(id), 10_000).unwrap();
    assert_eq!(scoped.len(), 1);
    assert_eq!(scoped[0].window_id, Some(id));
    assert!(d.a11y_tree(Some(0x7777_7777), 100).is_err());
    let xterm = d
        .windows()
        .unwrap()
        .into_iter()
        .find(|w| w.app_id == "XTerm")
        .unwrap();
    assert!(d.a11y_tree(Some(xterm.id), 100).unwrap().is_empty());

    // The node budget holds.
    for cap in [1, 2, 10, 57] {
        let capped = d.a11y_tree(None, cap).unwrap();
        assert_eq!(all(&capped).len(), cap, "cap {cap}");
    }
}

#[test]
fn actions_and_text_by_node() {
    let mut desk = Desk::start();
    let mut d = desk.driver();
    let id = desk.widget_factory(&mut d);
    let tree = d.a11y_tree(Some(id), 10_000).unwrap();

    // Text through EditableText, read back.
    let entry = all(&tree)
        .into_iter()
        .find(|n| {
            n.role == Role::Edit
                && n.value.as_deref() == Some("")
                && n.states.contains(&StateFlag::Enabled)
        })
        .unwrap()
        .clone();
    let info = d.a11y_element(&entry.handle).unwrap().unwrap();
    assert!(info.settable_text);
    let text = "set by node: ünïcödé 日本 🎉";
    d.a11y_set_text(&entry.handle, text).unwrap();
    assert_eq!(
        d.a11y_element(&entry.handle)
            .unwrap()
            .unwrap()
            .value
            .as_deref(),
        Some(text)
    );

    // A number through Value.
    let slider = all(&tree)
        .into_iter()
        .find(|n| {
            n.role == Role::Slider
                && n.value.as_deref() == Some("50")
                && n.states.contains(&StateFlag::Enabled)
        })
        .unwrap()
        .clone();
    assert!(
        d.a11y_element(&slider.handle)
            .unwrap()
            .unwrap()
            .settable_text
    );
    d.a11y_set_text(&slider.handle, "75").unwrap();
    assert_eq!(
        d.a11y_element(&slider.handle)
            .unwrap()
            .unwrap()
            .value
            .as_deref(),
        Some("75")
    );
    assert!(d.a11y_set_text(&slider.handle, "not a number").is_err());

    // Select a tab through its list's Selection.
    let tab2 = find(&tree, Role::Tabitem, Some("page 2")).unwrap().clone();
    let info = d.a11y_element(&tab2.handle).unwrap().unwrap();
    assert!(
        info.actions.contains(&SemanticAction::Select),
        "{:?}",
        info.actions
    );
    assert!(!info.states.contains(&StateFlag::Selected));
    d.a11y_perform(&tab2.handle, SemanticAction::Select)
        .unwrap();
    desk.wait_until("page 2 is selected", 10 * SECOND, || {
        states(&mut d, &tab2.handle).contains(&StateFlag::Selected)
    });

    // Invoke a button: the header's "Page 3" switcher is a radio (toggle); a plain
    // button offers invoke.
    let page3 = show_page_3(&mut d, &tree);
    desk.wait_until("page 3 is shown", 10 * SECOND, || {
        states(&mut d, &page3.handle).contains(&StateFlag::Checked)
    });
    // The stack animates to the page: wait until its widgets are on screen.
    let mut after = Vec::new();
    desk.wait_until("page 3's Lock button is on screen", 10 * SECOND, || {
        after = d.a11y_tree(Some(id), 10_000).unwrap_or_default();
        find(&after, Role::Button, Some("Lock")).is_some_and(|n| n.rect.is_some())
    });
    let lock = find(&after, Role::Button, Some("Lock")).unwrap().clone();
    let info = d.a11y_element(&lock.handle).unwrap().unwrap();
    assert_eq!(info.actions, [SemanticAction::Invoke]);
    d.a11y_perform(&lock.handle, SemanticAction::Invoke)
        .unwrap();

    // What an element does not offer fails, without touching the pointer.
    let before = d.pointer_position().unwrap();
    assert!(
        d.a11y_perform(&lock.handle, SemanticAction::Toggle)
            .is_err()
    );
    let label = all(&after)
        .into_iter()
        .find(|n| n.role == Role::Text)
        .unwrap()
        .clone();
    assert!(
        d.a11y_perform(&label.handle, SemanticAction::Invoke)
            .is_err()
    );
    assert!(d.a11y_set_text(&label.handle, "x").is_err());
    assert_eq!(d.pointer_position().unwrap(), before);

    // Junk handles are errors; handles of a quit application are gone.
    for junk in ["", "|", "nobus", ":1.2|", ":1.2|rel/path", "a b|/x"] {
        let h = ElementHandle(junk.into());
        assert!(d.a11y_element(&h).is_err(), "{junk}");
        assert!(
            d.a11y_perform(&h, SemanticAction::Invoke).is_err(),
            "{junk}"
        );
        assert!(d.a11y_set_text(&h, "x").is_err(), "{junk}");
    }
    let gone = ElementHandle(format!(
        "{}|/org/a11y/atspi/accessible/999999",
        entry.handle.0.split('|').next().unwrap()
    ));
    assert_eq!(d.a11y_element(&gone).unwrap(), None);
    let pid = d
        .windows()
        .unwrap()
        .into_iter()
        .find(|w| w.id == id)
        .and_then(|w| w.pid)
        .unwrap();
    let _ = std::process::Command::new("kill")
        .arg(pid.to_string())
        .status();
    desk.wait_until("the application's elements are gone", 10 * SECOND, || {
        matches!(d.a11y_element(&entry.handle), Ok(None))
    });
    assert!(
        d.a11y_perform(&entry.handle, SemanticAction::Invoke)
            .is_err()
    );
}

#[test]
fn password_fields_are_marked_and_never_read() {
    let mut desk = Desk::start();
    let mut d = desk.driver();
    desk.spawn("gtk3-demo", &["--run=entry_buffer"]);
    let mut tree = Vec::new();
    let has_password = |top: &RawNode| {
        all(std::slice::from_ref(top))
            .iter()
            .any(|n| n.states.contains(&StateFlag::Password))
    };
    desk.wait_until(
        "the entry_buffer demo's window is accessible",
        30 * SECOND,
        || {
            tree = d.a11y_tree(None, 10_000).unwrap_or_default();
            tree.iter()
                .any(|top| has_password(top) && top.window_id.is_some())
        },
    );
    // gtk3-demo opens its main window too: raise the demo's window, then read the
    // rectangles again (the window manager may still have been placing it).
    let owner = tree
        .iter()
        .find(|top| has_password(top))
        .and_then(|top| top.window_id)
        .expect("the password field's window");
    d.focus_window(owner).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let tree = d.a11y_tree(Some(owner), 10_000).unwrap();
    let pw = all(&tree)
        .into_iter()
        .find(|n| n.states.contains(&StateFlag::Password))
        .unwrap()
        .clone();
    assert_eq!(pw.role, Role::Edit);
    assert_eq!(pw.value, None);
    // The demo's plain entry shares the password's buffer (that is the demo's point).
    let plain = all(&tree)
        .into_iter()
        .find(|n| {
            n.role == Role::Edit
                && !n.states.contains(&StateFlag::Password)
                && n.rect.is_some_and(|r| {
                    let p = pw.rect.unwrap();
                    (r.y - p.y).abs() < 200 && (r.x - p.x).abs() < 400
                })
        })
        .unwrap()
        .clone();
    let p = pw.rect.unwrap();
    let center = |r: PhysicalRect| (r.x + r.width as i32 / 2, r.y + r.height as i32 / 2);
    let (x, y) = center(p);
    d.pointer_move(x, y).unwrap();
    d.button(cc_desktop::Button::Left, true).unwrap();
    d.button(cc_desktop::Button::Left, false).unwrap();
    desk.wait_until("the password field has focus", 10 * SECOND, || {
        states(&mut d, &pw.handle).contains(&StateFlag::Focused)
    });
    assert!(d.focused_is_password().unwrap());
    let secret = "hunter2-Sekr3t";
    for c in secret.chars() {
        d.type_char(c).unwrap();
    }
    desk.wait_until("the shared buffer holds the secret", 10 * SECOND, || {
        d.a11y_element(&plain.handle)
            .ok()
            .flatten()
            .and_then(|i| i.value)
            .as_deref()
            == Some(secret)
    });
    let info = d.a11y_element(&pw.handle).unwrap().unwrap();
    assert_eq!(info.value, None);
    assert!(info.states.contains(&StateFlag::Password));
    assert!(info.settable_text);
    let again = d.a11y_tree(None, 10_000).unwrap();
    let pw_again = all(&again)
        .into_iter()
        .find(|n| n.handle == pw.handle)
        .unwrap();
    assert_eq!(pw_again.value, None);
    assert!(!format!("{pw_again:?}{info:?}").contains(secret));

    // Focus on the plain entry: not a password.
    let (x, y) = center(plain.rect.unwrap());
    d.pointer_move(x, y).unwrap();
    d.button(cc_desktop::Button::Left, true).unwrap();
    d.button(cc_desktop::Button::Left, false).unwrap();
    desk.wait_until("the plain entry has focus", 10 * SECOND, || {
        states(&mut d, &plain.handle).contains(&StateFlag::Focused)
    });
    assert!(!d.focused_is_password().unwrap());
}

/// What must agree between the cache and the walk: handle, role, name, rect, window.
type Shape = (String, Role, String, Option<PhysicalRect>, Option<u64>);

#[test]
fn the_walk_for_toolkits_without_a_cache_reads_the_same_tree() {
    let mut desk = Desk::start();
    let mut d = desk.driver();
    let id = desk.widget_factory(&mut d);
    let mut walker = cc_desktop_x11::X11Desktop::connect_with(cc_desktop_x11::X11Options {
        display: Some(desk.display.clone()),
        session_bus: Some(desk.bus.clone()),
        a11y_walk_only: true,
        ..Default::default()
    })
    .unwrap();
    let shape = |t: &[RawNode]| -> Vec<Shape> {
        all(t)
            .into_iter()
            .map(|n| {
                (
                    n.handle.0.clone(),
                    n.role,
                    n.name.clone(),
                    n.rect,
                    n.window_id,
                )
            })
            .collect()
    };
    let cached = d.a11y_tree(Some(id), 10_000).unwrap();
    let t = Instant::now();
    let walked = walker.a11y_tree(Some(id), 10_000).unwrap();
    eprintln!(
        "walk: {} nodes in {:.1} ms",
        all(&walked).len(),
        t.elapsed().as_secs_f64() * 1000.0
    );
    // The same nodes with the same facts. The walk may list a few more hidden ones:
    // GTK creates some accessibles only when their children are first asked for,
    // and the cache lists siblings by index where the walk keeps the child order.
    let walked_shape = shape(&walked);
    let cached_shape = shape(&cached);
    for n in &cached_shape {
        assert!(walked_shape.contains(n), "walk misses {n:?}");
    }
    for n in &walked_shape {
        assert!(
            cached_shape.contains(n) || n.3.is_none(),
            "walk adds a visible {n:?}"
        );
    }
    assert!(walked_shape.len() - cached_shape.len() < 20);
    let capped = walker.a11y_tree(None, 25).unwrap();
    assert_eq!(all(&capped).len(), 25);
}

/// Every node's (handle, role, name, rect), for comparing two snapshots.
fn layout(tree: &[RawNode]) -> Vec<(String, Role, String, Option<PhysicalRect>)> {
    let mut v: Vec<_> = all(tree)
        .into_iter()
        .map(|n| (n.handle.0.clone(), n.role, n.name.clone(), n.rect))
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// A snapshot sends the requests of the previous one ahead, with the bulk read. After
/// the window moves and after the page changes, a driver that has taken snapshots
/// before must see exactly what a fresh driver (nothing to send ahead) sees: the
/// answers sent ahead are read during the snapshot, never kept from an earlier one.
#[test]
fn a_repeated_snapshot_sees_what_a_fresh_one_sees() {
    let mut desk = Desk::start();
    let mut d = desk.driver();
    let id = desk.widget_factory(&mut d);
    let snap = |d: &mut X11Desktop| d.a11y_tree(Some(id), 10_000).unwrap();
    // Equal to a fresh driver's snapshot, once the screen is still (the stack animates
    // between pages).
    let agree = |d: &mut X11Desktop, what: &str| {
        let mut last = (Vec::new(), Vec::new());
        let still = Instant::now() + 20 * SECOND;
        while Instant::now() < still {
            let warm = layout(&snap(d));
            let fresh = layout(&desk.driver().a11y_tree(Some(id), 10_000).unwrap());
            if warm == fresh && warm == layout(&snap(d)) {
                return warm;
            }
            last = (warm, fresh);
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("{what}: the repeated snapshot differs from a fresh one: {last:#?}");
    };
    let first = snap(&mut d);
    let before = agree(&mut d, "at start");
    let top_before = first[0].rect.expect("the window's rect");

    // Move the window: every rectangle moves with it.
    let out = desk.run(
        "xdotool",
        &[
            "windowmove",
            &id.to_string(),
            &(top_before.x + 61).to_string(),
            &(top_before.y + 37).to_string(),
        ],
    );
    assert!(out.status.success(), "xdotool windowmove: {out:?}");
    desk.wait_until("the window moved", 10 * SECOND, || {
        snap(&mut d)[0].rect != Some(top_before)
    });
    let moved = agree(&mut d, "after the move");
    let top_after = snap(&mut d)[0].rect.unwrap();
    let (dx, dy) = (top_after.x - top_before.x, top_after.y - top_before.y);
    assert!((dx, dy) != (0, 0));
    let old: std::collections::HashMap<_, _> = before.iter().map(|n| (n.0.clone(), n.3)).collect();
    let mut shifted = 0;
    for n in &moved {
        if let (Some(Some(a)), Some(b)) = (old.get(&n.0), n.3) {
            assert_eq!(
                (b.x - a.x, b.y - a.y, b.width, b.height),
                (dx, dy, a.width, a.height),
                "{:?} {:?}",
                n.1,
                n.2
            );
            shifted += 1;
        }
    }
    assert!(shifted > 50, "{shifted} rectangles compared");

    // Change the page: the new page's widgets have their rectangles, the old page's are
    // gone, and a fresh driver agrees.
    let tree = snap(&mut d);
    show_page_3(&mut d, &tree);
    desk.wait_until("page 3's Lock button is on screen", 10 * SECOND, || {
        find(&snap(&mut d), Role::Button, Some("Lock")).is_some_and(|n| n.rect.is_some())
    });
    let page = agree(&mut d, "on page 3");
    assert!(
        !page
            .iter()
            .any(|n| n.1 == Role::Checkbox && n.2 == "checkbutton"),
        "page 1's checkboxes are gone"
    );

    // Requests are remembered per scope: a snapshot of the whole desktop in between
    // (its own scope) changes nothing in the window's.
    let desktop = layout(&d.a11y_tree(None, 10_000).unwrap());
    assert!(desktop.len() >= page.len());
    assert_eq!(agree(&mut d, "after a desktop snapshot"), page);
}
