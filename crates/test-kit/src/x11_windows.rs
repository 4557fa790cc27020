//! Windows a test arranges on the X11 desk the way a person (or an agent with a
//! terminal) would: terminals opened, maximized, minimized and moved through
//! the window manager; and windows no window manager manages (override-redirect
//! popups, click-through ones), made over a connection of the test's own.

use std::time::Duration;

use cc_desktop::{Driver, WindowInfo};
use cc_desktop_x11::X11Desktop;
use cc_protocol::PhysicalRect;
use x11rb::connection::Connection as _;
use x11rb::protocol::shape::{self, ConnectionExt as _};
use x11rb::protocol::xproto::{
    AtomEnum, ConnectionExt as _, CreateWindowAux, MapState, PropMode, WindowClass,
};
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

use crate::x11::Desk;

const WAIT: Duration = Duration::from_secs(20);

/// A window of the test's own: it lives as long as this value (its connection).
pub struct OwnWindow {
    /// Its X window id.
    pub id: u64,
    conn: RustConnection,
}

impl OwnWindow {
    /// Takes it off the screen (it stays alive).
    pub fn unmap(&self) {
        let w = u32::try_from(self.id).expect("an X window id");
        self.conn.unmap_window(w).expect("unmap");
        self.conn.sync().expect("sync");
    }
}

impl Desk {
    /// A driver without the accessibility bus, to read the window list.
    fn window_reader(&self) -> X11Desktop {
        X11Desktop::connect(Some(&self.display)).expect("connect to the desk")
    }

    /// The window manager's entry for a window, as the driver lists it.
    pub fn listed(&self, id: u64) -> Option<WindowInfo> {
        let mut d = self.window_reader();
        d.windows().ok()?.into_iter().find(|w| w.id == id)
    }

    /// True when the X server has the window mapped, its ancestors too.
    pub fn viewable(&self, id: u64) -> bool {
        let (conn, _) = self.x_connection();
        let w = u32::try_from(id).expect("an X window id");
        conn.get_window_attributes(w)
            .ok()
            .and_then(|c| c.reply().ok())
            .is_some_and(|a| a.map_state == MapState::VIEWABLE)
    }

    /// Starts an xterm titled `title` at `geometry` (`COLSxROWS+X+Y`) and waits until
    /// the window manager lists it on screen; its window id.
    pub fn xterm(&mut self, title: &str, geometry: &str) -> u64 {
        self.spawn("xterm", &["-T", title, "-geometry", geometry]);
        let mut d = self.window_reader();
        let mut id = 0;
        self.wait_until(&format!("xterm {title:?} is on screen"), WAIT, || {
            let Some(w) = d
                .windows()
                .ok()
                .and_then(|ws| ws.into_iter().find(|w| w.title == title))
            else {
                return false;
            };
            id = w.id;
            self.viewable(id)
        });
        id
    }

    fn wmctrl(&self, args: &[&str]) {
        let out = self.run("wmctrl", args);
        assert!(
            out.status.success(),
            "wmctrl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The root window's size.
    fn screen_size(&self) -> (u32, u32) {
        let (conn, screen) = self.x_connection();
        let s = &conn.setup().roots[screen];
        (u32::from(s.width_in_pixels), u32::from(s.height_in_pixels))
    }

    /// Maximizes a window through the window manager (`wmctrl`) and waits until its
    /// frame covers the whole screen (the desk has no panels); its rectangle then.
    pub fn maximize(&self, id: u64) -> PhysicalRect {
        let hex = format!("{id:#x}");
        self.wmctrl(&["-i", "-r", &hex, "-b", "add,maximized_vert,maximized_horz"]);
        let (width, height) = self.screen_size();
        let screen = PhysicalRect {
            x: 0,
            y: 0,
            width,
            height,
        };
        self.wait_until("the window is maximized", WAIT, || {
            self.listed(id).is_some_and(|w| w.rect == screen)
        });
        screen
    }

    /// Minimizes a window (`xdotool windowminimize`, an ICCCM iconify request the
    /// window manager honours) and waits until it is off the screen and listed where
    /// it was (openbox animates the frame towards its icon, then puts it back).
    pub fn minimize(&self, id: u64) {
        let before = self.listed(id).expect("a listed window").rect;
        let out = self.run("xdotool", &["windowminimize", &id.to_string()]);
        assert!(out.status.success(), "xdotool windowminimize");
        let deadline = std::time::Instant::now() + WAIT;
        loop {
            let now = self.listed(id).map(|w| w.rect);
            if !self.viewable(id) && now == Some(before) {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "not minimized where it was: viewable {}, listed at {now:?}, was {before:?}",
                self.viewable(id)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Moves a window's frame to `(x, y)` through the window manager (`wmctrl -e`)
    /// and waits until the driver lists it moved; its rectangle then.
    pub fn move_window(&self, id: u64, x: i32, y: i32) -> PhysicalRect {
        let before = self.listed(id).expect("a listed window").rect;
        self.wmctrl(&[
            "-i",
            "-r",
            &format!("{id:#x}"),
            "-e",
            &format!("0,{x},{y},-1,-1"),
        ]);
        let mut rect = before;
        self.wait_until("the window has moved", WAIT, || {
            rect = self.listed(id).map_or(before, |w| w.rect);
            rect.x != before.x || rect.y != before.y
        });
        rect
    }

    /// Maps an override-redirect window (no window manager frames, moves or lists it:
    /// what menus and tooltips are) at `rect`, with `WM_CLASS` `class` and title
    /// `title`; `transient_for` names its owner (`WM_TRANSIENT_FOR`) and
    /// `click_through` empties its input shape, so the pointer passes through it.
    pub fn override_redirect(
        &self,
        rect: PhysicalRect,
        class: &str,
        title: &str,
        transient_for: Option<u64>,
        click_through: bool,
    ) -> OwnWindow {
        let (conn, screen) = self.x_connection();
        let root = conn.setup().roots[screen].root;
        let w = conn.generate_id().expect("an id");
        conn.create_window(
            x11rb::COPY_DEPTH_FROM_PARENT,
            w,
            root,
            i16::try_from(rect.x).expect("x"),
            i16::try_from(rect.y).expect("y"),
            u16::try_from(rect.width).expect("width"),
            u16::try_from(rect.height).expect("height"),
            0,
            WindowClass::INPUT_OUTPUT,
            x11rb::COPY_FROM_PARENT,
            &CreateWindowAux::new()
                .override_redirect(1)
                .background_pixel(0x00ff_8800),
        )
        .expect("create window");
        let class_value = format!("{class}\0{class}\0").into_bytes();
        conn.change_property8(
            PropMode::REPLACE,
            w,
            AtomEnum::WM_CLASS,
            AtomEnum::STRING,
            &class_value,
        )
        .expect("WM_CLASS");
        conn.change_property8(
            PropMode::REPLACE,
            w,
            AtomEnum::WM_NAME,
            AtomEnum::STRING,
            title.as_bytes(),
        )
        .expect("WM_NAME");
        if let Some(owner) = transient_for {
            let owner = u32::try_from(owner).expect("an X window id");
            conn.change_property32(
                PropMode::REPLACE,
                w,
                AtomEnum::WM_TRANSIENT_FOR,
                AtomEnum::WINDOW,
                &[owner],
            )
            .expect("WM_TRANSIENT_FOR");
        }
        if click_through {
            conn.shape_rectangles(
                shape::SO::SET,
                shape::SK::INPUT,
                x11rb::protocol::xproto::ClipOrdering::UNSORTED,
                w,
                0,
                0,
                &[],
            )
            .expect("empty input shape");
        }
        conn.map_window(w).expect("map");
        conn.sync().expect("sync");
        let id = u64::from(w);
        self.wait_until("the override-redirect window is mapped", WAIT, || {
            self.viewable(id)
        });
        OwnWindow { id, conn }
    }
}
