//! The window under a point on a real X server with openbox, as the X server itself
//! decides it (`Driver::window_at`). A terminal maximized then minimized stays in the
//! window manager's client list, topmost, at its full-screen rectangle, yet is under
//! no point; maximized it covers what lies below; one sent to another workspace is
//! gone from the screen too. A window moved is found where it is now.
//! An override-redirect window is found over everything, a click-through one is passed
//! through, and a popup naming its owner stands for its owner's application and title.

use cc_test_kit::x11 as x11_support;

use cc_desktop::Driver;
use cc_desktop_x11::X11Desktop;
use cc_protocol::PhysicalRect;
use x11_support::Desk;

fn centre(r: PhysicalRect) -> (i32, i32) {
    (r.x + r.width as i32 / 2, r.y + r.height as i32 / 2)
}

fn id_at(d: &mut X11Desktop, (x, y): (i32, i32)) -> Option<u64> {
    d.window_at(x, y).expect("window_at").map(|w| w.id)
}

#[test]
fn a_minimized_window_is_under_no_point() {
    let mut desk = Desk::start_sized(1280, 800);
    let below = desk.xterm("below", "60x20+100+100");
    let shadow = desk.xterm("shadow", "40x10+700+500");
    let mut d = desk.driver();
    let at = centre(desk.listed(below).expect("listed").rect);
    assert_eq!(id_at(&mut d, at), Some(below));

    let full = desk.maximize(shadow);
    assert!(full.contains(at.0, at.1), "{full:?}");
    assert_eq!(id_at(&mut d, at), Some(shadow), "maximized, it covers");

    desk.minimize(shadow);
    // The window manager still lists it topmost, over the point, where it was.
    let listed = d.windows().unwrap();
    assert_eq!(listed[0].id, shadow, "{listed:?}");
    assert!(listed[0].rect.contains(at.0, at.1), "{listed:?}");
    assert_eq!(d.window_shown(shadow).unwrap(), None);
    // A click there reaches the terminal below, and beside it the bare root.
    let w = d.window_at(at.0, at.1).unwrap().expect("a window");
    assert_eq!((w.id, w.title.as_str()), (below, "below"));
    assert_eq!(w, *listed.iter().find(|w| w.id == below).unwrap());
    assert_eq!(id_at(&mut d, (1200, 750)), None);

    // A maximized window on another workspace is unmapped as well.
    let other = desk.xterm("elsewhere", "40x10+700+500");
    desk.maximize(other);
    assert_eq!(id_at(&mut d, at), Some(other));
    let out = desk.run("wmctrl", &["-i", "-r", &format!("{other:#x}"), "-t", "1"]);
    assert!(out.status.success());
    desk.wait_until(
        "the window left the workspace",
        std::time::Duration::from_secs(10),
        || !desk.viewable(other),
    );
    assert_eq!(id_at(&mut d, at), Some(below));
}

#[test]
fn a_moved_window_is_found_where_it_is_now() {
    let mut desk = Desk::start_sized(1280, 800);
    let win = desk.xterm("moving", "40x10+100+100");
    let mut d = desk.driver();
    let before = centre(desk.listed(win).expect("listed").rect);
    assert_eq!(id_at(&mut d, before), Some(win));
    let moved = desk.move_window(win, 700, 400);
    assert!(!moved.contains(before.0, before.1), "{moved:?}");
    assert_eq!(id_at(&mut d, centre(moved)), Some(win));
    assert_eq!(id_at(&mut d, before), None);
}

#[test]
fn override_redirect_windows_are_under_the_point_unless_click_through() {
    let mut desk = Desk::start_sized(1280, 800);
    let below = desk.xterm("below", "60x20+100+100");
    let mut d = desk.driver();
    let r = desk.listed(below).expect("listed").rect;
    let over = PhysicalRect {
        x: r.x + 20,
        y: r.y + 40,
        width: 200,
        height: 100,
    };
    let at = centre(over);

    // A popup no window manager lists: found with what it carries itself.
    let popup = desk.override_redirect(over, "cc-popup", "a popup", None, false);
    assert!(d.windows().unwrap().iter().all(|w| w.id != popup.id));
    let w = d.window_at(at.0, at.1).unwrap().expect("a window");
    assert_eq!(w.id, popup.id);
    assert_eq!(w.app_id, "cc-popup");
    assert_eq!(w.title, "a popup");
    assert_eq!(w.rect, over);
    assert!(!w.focused);
    popup.unmap();
    assert_eq!(id_at(&mut d, at), Some(below), "unmapped, it is gone");

    // A click-through window is passed through, as the pointer passes through it.
    let through = desk.override_redirect(over, "cc-through", "through", None, true);
    assert!(desk.viewable(through.id));
    assert_eq!(id_at(&mut d, at), Some(below));

    // A menu naming its owner stands for the owner's application and title.
    let elsewhere = PhysicalRect {
        x: 900,
        y: 600,
        width: 150,
        height: 80,
    };
    let menu = desk.override_redirect(elsewhere, "cc-menu", "", Some(below), false);
    let w = d
        .window_at(centre(elsewhere).0, centre(elsewhere).1)
        .unwrap()
        .expect("a window");
    let owner = desk.listed(below).unwrap();
    assert_eq!(w.id, menu.id);
    assert_eq!((w.app_id, w.title), (owner.app_id, owner.title));
    assert_eq!(w.rect, elsewhere);
}

#[test]
fn the_drivers_own_banners_are_under_no_point() {
    let mut desk = Desk::start_sized(1280, 800);
    let below = desk.xterm("below", "40x10+300+300");
    desk.maximize(below);
    let mut d = desk.driver();
    // The stop banner spans the top of the screen, above every window, and takes no
    // input: a click on it reaches the terminal beneath.
    d.set_indicator(cc_desktop::Indicator::Stopped)
        .expect("the indicator");
    for x in [5, 320, 640, 960, 1275] {
        assert_eq!(id_at(&mut d, (x, 10)), Some(below), "({x},10)");
    }
    d.set_indicator(cc_desktop::Indicator::Off).unwrap();
}
