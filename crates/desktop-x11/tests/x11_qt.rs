//! Accessibility of real Qt5 applications (Debian's `qtbase5-examples`) on a private
//! desktop. The driver is connected first and the Qt applications are started after,
//! without any variable that forces Qt's accessibility bridge on: what exposes their
//! trees is the accessibility bus the driver started and enabled. Snapshots list the
//! widgets with their names, rectangles where the widgets are (a pointer click at a
//! rectangle's centre lands on that button) and the top-level bound to its X11
//! window; semantic actions and text by node work on Qt's Action and EditableText.
//!
//! Qt answers `Cache.GetItems` in the legacy format, always empty: the test checks
//! that reply live, and `tree.rs`'s unit tests check that exactly this reply makes the
//! driver walk the tree.

use cc_test_kit::x11 as x11_support;

use std::time::Duration;

use cc_desktop::{Button, Driver, ElementHandle, ElementInfo, RawNode, SemanticAction, WindowInfo};
use cc_desktop_x11::X11Desktop;
use cc_protocol::{PhysicalRect, Role, StateFlag};
use x11_support::{Desk, all, contains, find};

const SECOND: Duration = Duration::from_secs(1);

type Ref = (String, zbus::zvariant::OwnedObjectPath);
/// One item of the legacy cache format: object, application, parent, children,
/// interfaces, name, role, description, states.
type LegacyItem = (
    Ref,
    Ref,
    Ref,
    Vec<Ref>,
    Vec<String>,
    String,
    u32,
    String,
    Vec<u32>,
);

fn centre(r: PhysicalRect) -> (i32, i32) {
    (r.x + r.width as i32 / 2, r.y + r.height as i32 / 2)
}

/// One D-Bus method call on the bus at `address`, by the test's own client (not the
/// driver's), its reply message.
fn dbus_call<B>(
    address: &str,
    dest: &str,
    path: &str,
    iface: &str,
    method: &str,
    body: &B,
) -> zbus::Message
where
    B: serde::Serialize + zbus::zvariant::DynamicType,
{
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    rt.block_on(async {
        let conn = zbus::connection::Builder::address(address)
            .expect("a bus address")
            .build()
            .await
            .unwrap_or_else(|e| panic!("connect to {address}: {e}"));
        conn.call_method(Some(dest), path, Some(iface), method, body)
            .await
            .unwrap_or_else(|e| panic!("{iface}.{method} on {dest}: {e}"))
    })
}

/// True when a name has an owner on the desk's session bus.
fn has_owner(desk: &Desk, name: &str) -> bool {
    dbus_call(
        &desk.bus,
        "org.freedesktop.DBus",
        "/org/freedesktop/DBus",
        "org.freedesktop.DBus",
        "NameHasOwner",
        &(name,),
    )
    .body()
    .deserialize::<bool>()
    .expect("a boolean")
}

/// The window of an application (by its `app_id`), once it is mapped.
fn window_of(desk: &Desk, d: &mut X11Desktop, app_id: &str) -> WindowInfo {
    let mut found = None;
    // Listed and shown: a window manager lists a client as it starts managing it,
    // before its frame is placed and mapped (its rectangle is then the root's corner).
    desk.wait_until(&format!("the {app_id} window, shown"), 30 * SECOND, || {
        found = d
            .windows()
            .ok()
            .and_then(|ws| ws.into_iter().find(|w| w.app_id == app_id))
            .and_then(|w| d.window_shown(w.id).ok().flatten());
        found.is_some()
    });
    found.expect("found")
}

/// Waits until the snapshot of `window` holds a node of `role` named `name`, and
/// returns that snapshot.
fn accessible_tree(
    desk: &Desk,
    d: &mut X11Desktop,
    window: u64,
    role: Role,
    name: &str,
) -> Vec<RawNode> {
    let mut tree = Vec::new();
    desk.wait_until(
        &format!("{role:?} {name:?} in the accessibility tree"),
        30 * SECOND,
        || {
            tree = d.a11y_tree(Some(window), 5000).unwrap_or_default();
            find(&tree, role, Some(name)).is_some()
        },
    );
    tree
}

fn node<'a>(tree: &'a [RawNode], role: Role, name: &str) -> &'a RawNode {
    find(tree, role, Some(name)).unwrap_or_else(|| panic!("no {role:?} {name:?}"))
}

fn element(d: &mut X11Desktop, h: &ElementHandle) -> ElementInfo {
    d.a11y_element(h)
        .expect("element read")
        .expect("element exists")
}

fn click(d: &mut X11Desktop, r: PhysicalRect) {
    let (x, y) = centre(r);
    d.pointer_move(x, y).unwrap();
    d.button(Button::Left, true).unwrap();
    d.button(Button::Left, false).unwrap();
}

#[test]
fn a_qt_calculator_is_exposed_and_its_buttons_are_where_the_snapshot_says() {
    let mut desk = Desk::start();
    // Nothing on this desk has asked for the accessibility bus yet.
    assert!(
        !has_owner(&desk, "org.a11y.Bus"),
        "the accessibility bus is not up yet"
    );

    // The driver first: it starts the accessibility bus and enables it.
    let mut d = desk.driver();
    assert!(d.capabilities().accessibility);
    assert!(has_owner(&desk, "org.a11y.Bus"));
    let enabled = dbus_call(
        &desk.bus,
        "org.a11y.Bus",
        "/org/a11y/bus",
        "org.freedesktop.DBus.Properties",
        "Get",
        &("org.a11y.Status", "IsEnabled"),
    );
    let enabled: zbus::zvariant::OwnedValue = enabled.body().deserialize().expect("a variant");
    assert_eq!(bool::try_from(enabled), Ok(true));

    // Then the Qt application, with nothing in its environment forcing Qt on.
    desk.spawn_qt_example("widgets/calculator/calculator");
    let win = window_of(&desk, &mut d, "calculator");
    let tree = accessible_tree(&desk, &mut d, win.id, Role::Button, "=");

    // The top-level: Qt calls a plain top-level widget a filler; it is a window.
    assert_eq!(tree.len(), 1, "one top-level");
    let top = &tree[0];
    assert_eq!(top.role, Role::Window);
    assert_eq!(top.name, "Calculator");
    assert_eq!(top.window_id, Some(win.id));
    let top_rect = top.rect.expect("the top-level has a rect");
    assert!(
        contains(win.rect, top_rect),
        "{top_rect:?} in {:?}",
        win.rect
    );
    // Its element re-read says the same (the identity check compares these).
    let info = element(&mut d, &top.handle);
    assert_eq!(
        (info.role, info.name.as_str(), info.window_id),
        (Role::Window, "Calculator", Some(win.id))
    );

    // The known widgets, with their names, inside the window.
    let names = [
        "0",
        "1",
        "2",
        "3",
        "4",
        "5",
        "6",
        "7",
        "8",
        "9",
        ".",
        "±",
        "+",
        "-",
        "×",
        "÷",
        "=",
        "Sqrt",
        "x²",
        "1/x",
        "Backspace",
        "Clear",
        "Clear All",
        "MC",
        "MR",
        "MS",
        "M+",
    ];
    for name in names {
        let b = node(&tree, Role::Button, name);
        let r = b.rect.unwrap_or_else(|| panic!("{name} has no rect"));
        assert!(
            contains(top_rect, r),
            "{name} at {r:?} outside {top_rect:?}"
        );
        assert!(b.states.contains(&StateFlag::Visible), "{name}");
        assert!(b.states.contains(&StateFlag::Enabled), "{name}");
    }
    assert_eq!(
        all(&tree).iter().filter(|n| n.role == Role::Button).count(),
        names.len()
    );
    let display = all(&tree)
        .into_iter()
        .find(|n| n.role == Role::Edit)
        .expect("the display")
        .clone();
    assert_eq!(display.value.as_deref(), Some("0"));
    let dr = display.rect.expect("the display has a rect");
    assert!(contains(top_rect, dr));
    // The keypad's geometry as the snapshot gives it: 7 8 9 on one row, 4 under 7.
    let r7 = node(&tree, Role::Button, "7").rect.unwrap();
    let r8 = node(&tree, Role::Button, "8").rect.unwrap();
    let r4 = node(&tree, Role::Button, "4").rect.unwrap();
    assert_eq!(r7.y, r8.y);
    assert!(r8.x > r7.x);
    assert_eq!(r4.x, r7.x);
    assert!(r4.y > r7.y);
    assert!(
        dr.y + dr.height as i32 <= r7.y,
        "the display is above the keypad"
    );

    // The rectangles are where the buttons are: a pointer click at the centre of
    // "8" types an 8.
    click(&mut d, r8);
    desk.wait_until("the display shows 8", 10 * SECOND, || {
        element(&mut d, &display.handle).value.as_deref() == Some("8")
    });

    // "7" by node, through Qt's Action interface.
    let seven = node(&tree, Role::Button, "7").handle.clone();
    let info = element(&mut d, &seven);
    assert_eq!(info.actions, [SemanticAction::Invoke]);
    assert_eq!(info.window_id, Some(win.id));
    d.a11y_perform(&seven, SemanticAction::Invoke).unwrap();
    desk.wait_until("the display shows 87", 10 * SECOND, || {
        element(&mut d, &display.handle).value.as_deref() == Some("87")
    });

    // Qt's bulk cache: the legacy reply shape, and empty, so the tree above was read
    // object by object (tree.rs's unit tests decode exactly this reply).
    let app = display
        .handle
        .0
        .split('|')
        .next()
        .expect("bus name")
        .to_string();
    let a11y: String = dbus_call(
        &desk.bus,
        "org.a11y.Bus",
        "/org/a11y/bus",
        "org.a11y.Bus",
        "GetAddress",
        &(),
    )
    .body()
    .deserialize()
    .expect("an address");
    let reply = dbus_call(
        &a11y,
        &app,
        "/org/a11y/atspi/cache",
        "org.a11y.atspi.Cache",
        "GetItems",
        &(),
    );
    assert_eq!(
        reply.body().signature().to_string(),
        "a((so)(so)(so)a(so)assusau)"
    );
    let items: Vec<LegacyItem> = reply.body().deserialize().expect("legacy cache items");
    assert!(items.is_empty(), "{} items", items.len());
}

#[test]
fn qt_line_edits_take_text_and_qt_checkboxes_toggle() {
    let mut desk = Desk::start();
    let mut d = desk.driver();
    assert!(d.capabilities().accessibility);
    desk.spawn_qt_example("widgets/lineedits/lineedits");
    desk.spawn_qt_example("gallery/gallery");

    // A line edit through EditableText, read back.
    let win = window_of(&desk, &mut d, "lineedits");
    let tree = accessible_tree(&desk, &mut d, win.id, Role::Edit, "Echo");
    assert_eq!(tree.len(), 1);
    assert_eq!(
        (tree[0].role, tree[0].window_id),
        (Role::Window, Some(win.id))
    );
    for name in ["Echo", "Validator", "Alignment", "Input mask", "Access"] {
        assert!(
            find(&tree, Role::Pane, Some(name)).is_some(),
            "group {name}"
        );
        let e = node(&tree, Role::Edit, name);
        assert_eq!(e.value.as_deref(), Some(""), "{name}");
        assert!(e.states.contains(&StateFlag::Editable), "{name}");
        assert!(contains(win.rect, e.rect.expect("rect")), "{name}");
    }
    assert!(find(&tree, Role::Combobox, Some("Normal")).is_some());
    let echo = node(&tree, Role::Edit, "Echo").handle.clone();
    let info = element(&mut d, &echo);
    assert!(info.settable_text);
    assert_eq!(info.window_id, Some(win.id));
    let text = "set by node: ünïcödé 日本";
    d.a11y_set_text(&echo, text).unwrap();
    assert_eq!(element(&mut d, &echo).value.as_deref(), Some(text));
    // The neighbour is untouched.
    let validator = node(&tree, Role::Edit, "Validator").handle.clone();
    assert_eq!(element(&mut d, &validator).value.as_deref(), Some(""));

    // The gallery: a checkbox toggled by node disables the other widgets; a pointer
    // click at its rectangle's centre enables them again.
    let win = window_of(&desk, &mut d, "gallery");
    let tree = accessible_tree(&desk, &mut d, win.id, Role::Checkbox, "Disable widgets");
    assert_eq!(tree.len(), 1);
    assert_eq!(
        (tree[0].role, tree[0].window_id),
        (Role::Dialog, Some(win.id))
    );
    for name in [
        "Default Push Button",
        "Flat Push Button",
        "Command Link Button",
    ] {
        assert!(find(&tree, Role::Button, Some(name)).is_some(), "{name}");
    }
    for name in ["Radio button 1", "Radio button 2", "Radio button 3"] {
        assert!(
            find(&tree, Role::Radiobutton, Some(name)).is_some(),
            "{name}"
        );
    }
    // A password line edit is marked and its text never read.
    let password = all(&tree)
        .into_iter()
        .find(|n| n.states.contains(&StateFlag::Password))
        .expect("the password line edit")
        .clone();
    assert_eq!(
        (password.role, password.value.as_deref()),
        (Role::Edit, None)
    );
    for n in all(&tree) {
        if let Some(r) = n.rect {
            assert!(contains(win.rect, r), "{:?} {:?} at {r:?}", n.role, n.name);
        }
    }

    // Focus in the password line edit (a pointer click on its rectangle) is seen.
    assert!(!d.focused_is_password().unwrap());
    click(
        &mut d,
        password.rect.expect("the password field has a rect"),
    );
    desk.wait_until("the password field has focus", 10 * SECOND, || {
        d.focused_is_password().unwrap_or(false)
    });

    let disable = node(&tree, Role::Checkbox, "Disable widgets").clone();
    let button = node(&tree, Role::Button, "Default Push Button")
        .handle
        .clone();
    let info = element(&mut d, &disable.handle);
    assert_eq!(info.actions, [SemanticAction::Toggle]);
    assert!(!info.states.contains(&StateFlag::Checked));
    assert!(
        element(&mut d, &button)
            .states
            .contains(&StateFlag::Enabled)
    );
    d.a11y_perform(&disable.handle, SemanticAction::Toggle)
        .unwrap();
    desk.wait_until("the widgets are disabled", 10 * SECOND, || {
        element(&mut d, &disable.handle)
            .states
            .contains(&StateFlag::Checked)
            && !element(&mut d, &button)
                .states
                .contains(&StateFlag::Enabled)
    });
    click(&mut d, disable.rect.expect("the checkbox has a rect"));
    desk.wait_until("the widgets are enabled again", 10 * SECOND, || {
        !element(&mut d, &disable.handle)
            .states
            .contains(&StateFlag::Checked)
            && element(&mut d, &button)
                .states
                .contains(&StateFlag::Enabled)
    });
}
