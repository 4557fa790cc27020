//! The X11 desktop driver: the real desktop on an X11 server: RandR monitors, MIT-SHM capture, XTest input,
//! EWMH windows, a passive-grab panic hotkey, and accessibility over AT-SPI.
//!
//! Everything is pure Rust (x11rb, zbus): no Xlib, no helper processes. Coordinates
//! are root-window pixels, which is what the engine calls physical pixels.

#![warn(missing_docs)]

mod capture;
mod changes;
mod clipboard;
mod connection;
mod hotkey;
mod indicator;
mod input;
mod keymap;
mod randr;
mod reach;
mod shm;
mod under_point;
mod windows;

use cc_protocol::{Key, PhysicalRect};
use x11rb::connection::Connection;
use x11rb::protocol::Event;
use x11rb::protocol::xkb::{self, ConnectionExt as _};
use x11rb::protocol::xproto::KEY_RELEASE_EVENT;
use x11rb::protocol::xtest::ConnectionExt as _;

pub use capture::CaptureMethod;
use cc_desktop::{
    Axis, Button, Capabilities, Changes, ClipboardContent, Driver, DriverError, DriverEvent,
    ElementHandle, ElementInfo, HeldInputs, Indicator, Launched, Layout, RawNode, RgbImage,
    SemanticAction, Watching, WindowInfo,
};
use cc_desktop_atspi as atspi;
use std::time::{Duration, Instant};

/// The X11 backend for the binary's platform selection.
pub const PLATFORM: cc_desktop::Platform = cc_desktop::Platform {
    name: "x11",
    open: open_env,
    detect: detect_env,
    reach: reach::reach_env,
};

fn open_env() -> Result<Box<dyn Driver>, DriverError> {
    let dpy = std::env::var("DISPLAY").unwrap_or_default();
    X11Desktop::connect(None)
        .map(|d| Box::new(d) as Box<dyn Driver>)
        .map_err(|e| DriverError::Unavailable(format!("cannot use $DISPLAY={dpy:?}: {e}")))
}

/// X11 when `$DISPLAY` reaches a server that can take input (XTest).
fn detect_env() -> Result<Box<dyn Driver>, String> {
    let display = std::env::var("DISPLAY").unwrap_or_default();
    if display.trim().is_empty() {
        return Err("no $DISPLAY".into());
    }
    let d = X11Desktop::connect(None).map_err(|e| format!("$DISPLAY={display}: {e}"))?;
    if !d.capabilities().input {
        return Err(format!("$DISPLAY={display} has no XTest extension"));
    }
    Ok(Box::new(d))
}

/// The default emergency hotkey (PROTOCOL §5.4), grabbed at connect.
pub const DEFAULT_HOTKEY: &str = "ctrl+alt+f12";

/// What `computer-control check` reports about an X display, so an operator sees
/// why a tool would be unavailable before a session starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct X11Report {
    /// The display name connected to.
    pub display: String,
    /// XTest: without it there is no input (and `--platform auto` stays virtual).
    pub xtest: bool,
    /// MIT-SHM capture is in use (else core GetImage, several times slower).
    pub shm: bool,
    /// RandR change notifications.
    pub randr: bool,
    /// RandR 1.5 monitors (else the whole screen is one display).
    pub randr_monitors: bool,
    /// XKB (detectable auto-repeat for the hotkey, keymap notifications).
    pub xkb: bool,
    /// Displays in the layout now.
    pub monitors: usize,
    /// An EWMH window manager runs (window list, activation).
    pub window_manager: bool,
    /// The emergency hotkey grab, or why it failed.
    pub hotkey: Result<(), String>,
    /// The accessibility bus, or why it is unavailable.
    pub accessibility: Result<(), String>,
    /// Keycodes free for binding characters the layout lacks.
    pub spare_keycodes: usize,
}

/// Where to connect: the X display and the session bus that leads to the
/// accessibility bus. `None` means the environment (`$DISPLAY`,
/// `$DBUS_SESSION_BUS_ADDRESS`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct X11Options {
    /// The X display (`:1`); `None`: `$DISPLAY`.
    pub display: Option<String>,
    /// The session bus address; `None`: `$DBUS_SESSION_BUS_ADDRESS`.
    pub session_bus: Option<String>,
    /// Capture through core `GetImage` only (what a remote display gets anyway).
    pub disable_shm: bool,
    /// Read accessibility trees object by object even where a toolkit offers the
    /// bulk cache: the path toolkits without a cache take, exercised by tests.
    #[doc(hidden)]
    pub a11y_walk_only: bool,
}

/// The driver for a real X11 desktop.
pub struct X11Desktop {
    conn: connection::Conn,
    capture: capture::Capture,
    monitors: randr::Monitors,
    keymap: keymap::Keymap,
    held: input::Held,
    hotkey: hotkey::Hotkey,
    a11y: atspi::A11y,
    banners: indicator::Banners,
    /// Damage and window-list events while the engine waits on a condition.
    watch: changes::Watch,
    /// Accessibility events are heard (a wait asked for them and the bus agreed).
    a11y_watch: bool,
    /// Desktop events read off the connection during a wait, for `poll_events`.
    queued: Vec<DriverEvent>,
    /// A RandR or keyboard mapping event was read during a wait.
    layout_event: bool,
    mapping_changed: bool,
    clipboard: clipboard::Clipboard,
}

fn default_hotkey() -> Vec<Key> {
    Key::split_combo(DEFAULT_HOTKEY)
        .iter()
        .filter_map(|k| Key::parse(k).ok())
        .collect()
}

impl X11Desktop {
    /// Connects to `display` (or `$DISPLAY`), reads the layout and the keyboard
    /// mapping, grabs the default hotkey and joins the accessibility bus. Fails only
    /// when no X server answers; what is missing (XTest, SHM, the bus, the hotkey) is
    /// reported by [`Driver::capabilities`] and [`X11Desktop::report`].
    pub fn connect(display: Option<&str>) -> Result<X11Desktop, DriverError> {
        X11Desktop::connect_with(X11Options {
            display: display.map(str::to_string),
            ..X11Options::default()
        })
    }

    /// Like [`X11Desktop::connect`], with the session bus given explicitly (several
    /// desktops in one process, as in tests).
    pub fn connect_with(opts: X11Options) -> Result<X11Desktop, DriverError> {
        let conn = connection::Conn::open(opts.display.as_deref())?;
        if conn.ext.xkb {
            // Holding a key must not look like many presses (hotkey toggling), and
            // XKB-aware clients get XKB map notifications instead of MappingNotify.
            let flag = xkb::PerClientFlag::DETECTABLE_AUTO_REPEAT;
            let _ = conn
                .conn
                .xkb_per_client_flags(
                    xkb::ID::USE_CORE_KBD.into(),
                    flag,
                    flag,
                    0u32.into(),
                    0u32.into(),
                    0u32.into(),
                )
                .map(|c| c.reply());
            let events = xkb::EventType::NEW_KEYBOARD_NOTIFY | xkb::EventType::MAP_NOTIFY;
            let parts =
                xkb::MapPart::KEY_TYPES | xkb::MapPart::KEY_SYMS | xkb::MapPart::MODIFIER_MAP;
            let _ = conn.conn.xkb_select_events(
                xkb::ID::USE_CORE_KBD.into(),
                0u16.into(),
                events,
                parts,
                parts,
                &xkb::SelectEventsAux::new(),
            );
        }
        let monitors = randr::Monitors::new(&conn)?;
        let mut keymap = keymap::Keymap::read(&conn)?;
        let mut hotkey = hotkey::Hotkey::default();
        let _ = hotkey.set(&conn, &mut keymap, &default_hotkey());
        conn.flush()?;
        Ok(X11Desktop {
            capture: capture::Capture::new(!opts.disable_shm),
            monitors,
            keymap,
            held: input::Held::default(),
            hotkey,
            a11y: atspi::A11y::new(opts.session_bus, at_spi_bus(&conn), opts.a11y_walk_only),
            banners: indicator::Banners::default(),
            watch: changes::Watch::default(),
            a11y_watch: false,
            queued: Vec::new(),
            layout_event: false,
            mapping_changed: false,
            clipboard: clipboard::Clipboard::default(),
            conn,
        })
    }

    /// Everything `computer-control check` prints about this display.
    pub fn report(&mut self) -> X11Report {
        let monitors = self.monitors.refresh(&self.conn).map(|l| l.displays.len());
        X11Report {
            display: self.conn.display.clone(),
            xtest: self.conn.ext.xtest,
            shm: self.capture.shm_active(&self.conn),
            randr: self.conn.ext.randr,
            randr_monitors: self.conn.ext.randr_monitors,
            xkb: self.conn.ext.xkb,
            monitors: monitors.unwrap_or(0),
            window_manager: windows::has_window_manager(&self.conn),
            hotkey: match (&self.hotkey.error, self.hotkey.active()) {
                (_, true) => Ok(()),
                (Some(e), false) => Err(e.clone()),
                (None, false) => Err("not grabbed".into()),
            },
            accessibility: if self.a11y.available() {
                Ok(())
            } else {
                Err(self
                    .a11y
                    .error
                    .clone()
                    .unwrap_or_else(|| "no accessibility bus".into()))
            },
            spare_keycodes: self.keymap.spare_count(),
        }
    }

    /// Which path the last capture took (shared memory or core GetImage).
    pub fn last_capture_method(&self) -> Option<CaptureMethod> {
        self.capture.last_method
    }

    /// Shows `state`'s banners on the monitors as last read (no round trip: the
    /// layout is re-read by `poll_events`, which shows them anew when it changed).
    fn show_banners(&mut self, state: Indicator) -> Result<(), DriverError> {
        let monitors: Vec<PhysicalRect> = self
            .monitors
            .layout()
            .displays
            .iter()
            .map(|d| d.rect)
            .collect();
        let shown = self.banners.show(&self.conn, &monitors, state);
        if shown.is_err() {
            self.banners.clear(&self.conn);
        }
        shown
    }

    fn need_input(&self) -> Result<(), DriverError> {
        if self.conn.ext.xtest {
            Ok(())
        } else {
            Err(DriverError::Unavailable(format!(
                "the X server {} has no XTest extension",
                self.conn.display
            )))
        }
    }

    /// The accessibility side, first pointed at the bus address the X display
    /// publishes when a (re)connection is due.
    fn a11y(&mut self) -> &mut atspi::A11y {
        if !self.a11y.settled() {
            self.a11y.x_address = at_spi_bus(&self.conn);
        }
        &mut self.a11y
    }

    fn xwindows(&self) -> Result<Vec<atspi::Toplevel>, DriverError> {
        windows::list(&self.conn)
    }
}

/// The accessibility bus address that `at-spi-bus-launcher` publishes on the root
/// window of its display (`AT_SPI_BUS`), as libatspi reads it.
fn at_spi_bus(conn: &connection::Conn) -> Option<String> {
    use x11rb::protocol::xproto::{AtomEnum, ConnectionExt as _};
    let r = conn
        .conn
        .get_property(
            false,
            conn.root,
            conn.atoms.AT_SPI_BUS,
            AtomEnum::ANY,
            0,
            4096,
        )
        .ok()?
        .reply()
        .ok()?;
    let s = String::from_utf8_lossy(&r.value)
        .trim_end_matches('\0')
        .to_string();
    (r.format == 8 && !s.is_empty()).then_some(s)
}

impl Driver for X11Desktop {
    fn platform(&self) -> &'static str {
        "x11"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            capture: true,
            input: self.conn.ext.xtest,
            accessibility: self.a11y.available(),
            windows: true,
            hotkey: self.hotkey.active(),
            clipboard: true,
            launch: true,
        }
    }

    fn layout(&mut self) -> Result<Layout, DriverError> {
        self.monitors.refresh(&self.conn)
    }

    fn capture(&mut self, rect: PhysicalRect) -> Result<RgbImage, DriverError> {
        self.banners.before_capture(&self.conn);
        self.capture.capture(&self.conn, rect)
    }

    fn pointer_position(&mut self) -> Result<(i32, i32), DriverError> {
        self.held.pointer(&self.conn)
    }

    fn pointer_move(&mut self, x: i32, y: i32) -> Result<(), DriverError> {
        self.need_input()?;
        self.held.motion(&self.conn, x, y)
    }

    fn button(&mut self, button: Button, down: bool) -> Result<(), DriverError> {
        self.need_input()?;
        self.held.button(&self.conn, button, down)
    }

    fn scroll(&mut self, axis: Axis, positive: bool) -> Result<(), DriverError> {
        self.need_input()?;
        self.held.scroll(&self.conn, axis, positive)
    }

    fn key(&mut self, key: Key, down: bool) -> Result<(), DriverError> {
        self.need_input()?;
        self.held.key(&self.conn, &mut self.keymap, key, down)
    }

    fn type_char(&mut self, c: char) -> Result<(), DriverError> {
        self.need_input()?;
        self.held.type_char(&self.conn, &mut self.keymap, c)
    }

    fn release_all(&mut self) -> Result<(), DriverError> {
        let released = self.held.release_all(&self.conn, &mut self.keymap);
        // Spares used moments ago are restored by `poll_events` once clients caught up.
        let restored = self.keymap.restore(&self.conn, false).map(|_| ());
        released.and(restored)
    }

    fn held_inputs(&mut self) -> HeldInputs {
        self.held.snapshot()
    }

    fn windows(&mut self) -> Result<Vec<WindowInfo>, DriverError> {
        Ok(self.xwindows()?.into_iter().map(|w| w.info).collect())
    }

    fn window_shown(&mut self, id: u64) -> Result<Option<WindowInfo>, DriverError> {
        let Some(w) = self.windows()?.into_iter().find(|w| w.id == id) else {
            return Ok(None);
        };
        // A window manager keeps a minimized (iconic) client listed, unmapped.
        Ok(windows::viewable(&self.conn, id)?.then_some(w))
    }

    fn window_at(&mut self, x: i32, y: i32) -> Result<Option<WindowInfo>, DriverError> {
        under_point::window_at(&self.conn, x, y)
    }

    fn focus_window(&mut self, id: u64) -> Result<(), DriverError> {
        windows::focus(&self.conn, id)
    }

    fn focused_is_password(&mut self) -> Result<bool, DriverError> {
        let wins = self.xwindows()?;
        self.a11y().focused_is_password(&wins)
    }

    fn a11y_tree(
        &mut self,
        window: Option<u64>,
        max_nodes: usize,
    ) -> Result<Vec<RawNode>, DriverError> {
        let wins = self.xwindows()?;
        if let Some(id) = window
            && !wins.iter().any(|w| w.info.id == id)
        {
            return Err(DriverError::Failed(format!("no window {id:#x}")));
        }
        self.a11y().tree(&wins, window, max_nodes)
    }

    fn a11y_element(&mut self, handle: &ElementHandle) -> Result<Option<ElementInfo>, DriverError> {
        let wins = self.xwindows()?;
        self.a11y().element(&wins, handle)
    }

    fn a11y_perform(
        &mut self,
        handle: &ElementHandle,
        action: SemanticAction,
    ) -> Result<(), DriverError> {
        self.a11y().perform(handle, action)
    }

    fn a11y_set_text(&mut self, handle: &ElementHandle, text: &str) -> Result<(), DriverError> {
        self.a11y().set_text(handle, text)
    }

    fn set_hotkey(&mut self, keys: &[Key]) -> Result<(), DriverError> {
        self.hotkey.set(&self.conn, &mut self.keymap, keys)
    }

    fn set_indicator(&mut self, state: Indicator) -> Result<(), DriverError> {
        if state == self.banners.state() {
            return Ok(());
        }
        self.show_banners(state)
    }

    fn clipboard_read(&mut self) -> Result<ClipboardContent, DriverError> {
        self.clipboard.read(&self.conn)
    }

    fn clipboard_write(&mut self, text: &str) -> Result<(), DriverError> {
        self.clipboard.write(&self.conn, text)
    }

    /// Starts the program on this display (`DISPLAY` set to it), detached.
    fn launch(&mut self, app: &str, args: &[String]) -> Result<Launched, DriverError> {
        let cmd = match cc_desktop::launch::resolve(app, args) {
            Ok(c) => c,
            Err(why) => return Ok(Launched::Refused(why)),
        };
        let pid = cc_desktop::launch::spawn(&cmd, &[("DISPLAY", self.conn.display.as_str())])?;
        Ok(Launched::Started { pid, window: None })
    }

    fn poll_events(&mut self) -> Vec<DriverEvent> {
        self.drain();
        if std::mem::take(&mut self.mapping_changed) {
            self.keymap.invalidate();
            if self.keymap.refresh_if_stale(&self.conn).is_ok() {
                self.hotkey
                    .after_mapping_change(&self.conn, &mut self.keymap);
            }
        }
        let layout_event = std::mem::take(&mut self.layout_event);
        let mut out = std::mem::take(&mut self.queued);
        if self.monitors.poll(&self.conn, layout_event) {
            out.push(DriverEvent::LayoutChanged);
            // Banners follow the monitors (made anew for the new layout).
            let state = self.banners.state();
            let _ = self.show_banners(state);
        }
        // A lingering acting banner goes when its time is up; a window raised since
        // must not cover a banner.
        self.banners.tick(&self.conn);
        // Spare keycodes bound while typing go back once nothing uses them.
        let _ = self.keymap.restore(&self.conn, false);
        out
    }

    fn watch_changes(&mut self, on: bool) -> Watching {
        if !on {
            self.watch.stop(&self.conn);
            self.a11y_watch = self.a11y().watch(false);
            return Watching::default();
        }
        let mut w = self.watch.start(&self.conn);
        self.a11y_watch = self.a11y().watch(true);
        w.a11y = self.a11y_watch;
        w
    }

    fn wait_changes(&mut self, timeout: Duration) -> Changes {
        let deadline = Instant::now() + timeout;
        let mut a11y = false;
        loop {
            self.drain();
            let hotkey = self.queued.contains(&DriverEvent::Hotkey);
            if hotkey || a11y || !self.watch.changes.is_empty() || Instant::now() >= deadline {
                break;
            }
            if self.a11y_watch {
                // Accessibility events come on D-Bus, the rest on the X connection:
                // listen to the bus in short turns and look at X between them.
                let turn = deadline
                    .saturating_duration_since(Instant::now())
                    .min(Duration::from_millis(5));
                a11y = self.a11y.wait_event(turn);
            } else {
                changes::Watch::block(&self.conn, deadline);
            }
        }
        let mut out = std::mem::take(&mut self.watch.changes);
        out.a11y |= a11y;
        out
    }
}

impl X11Desktop {
    /// Reads every event the connection holds: changes for a wait, the hotkey and
    /// RandR and keyboard mapping notifications for `poll_events`.
    fn drain(&mut self) {
        // Selection requests for what we own are answered first, every time.
        for event in self.clipboard.drain(&self.conn) {
            if self.watch.on_event(&self.conn, &event) {
                continue;
            }
            if randr::Monitors::is_layout_event(&event) {
                self.layout_event = true;
            }
            if matches!(
                event,
                Event::MappingNotify(_) | Event::XkbMapNotify(_) | Event::XkbNewKeyboardNotify(_)
            ) {
                self.mapping_changed = true;
            }
            if self.hotkey.on_event(&event) && !self.queued.contains(&DriverEvent::Hotkey) {
                self.queued.push(DriverEvent::Hotkey);
            }
        }
    }
}

impl Drop for X11Desktop {
    /// Lets go of everything this driver changed on the shared server: held keys and
    /// buttons, bound spare keycodes, the hotkey grab and the shared memory segment.
    fn drop(&mut self) {
        for code in self.held.held_codes() {
            let _ = self.conn.conn.xtest_fake_input(
                KEY_RELEASE_EVENT,
                code,
                0,
                self.conn.root,
                0,
                0,
                0,
            );
        }
        let _ = self.held.release_all(&self.conn, &mut self.keymap);
        let _ = self.keymap.restore(&self.conn, true);
        self.hotkey.release(&self.conn, &mut self.keymap);
        self.capture.close(&self.conn);
        self.clipboard.close(&self.conn);
        let _ = self.conn.conn.flush();
        // Give the server a moment to process before the socket closes.
        let _ = self.conn.sync();
    }
}
