//! The visual indicator: banners the X server keeps on top of every window so the
//! person at the desk sees that the emergency stop is on, or that an agent's input is
//! being injected right now.
//!
//! Each banner is an override-redirect window (no window manager decorates, moves or
//! lists it) whose input region is empty (Shape extension): every click and scroll
//! passes through to the window beneath, so the banner can neither take an agent's
//! click nor be clicked by the person. Its text is drawn once into the window's
//! background pixmap, so the server repaints it on exposure without our help.

use std::time::{Duration, Instant};

use x11rb::connection::Connection;
use x11rb::protocol::shape::{self, ConnectionExt as _};
use x11rb::protocol::xproto::{
    AtomEnum, ChangeGCAux, Char2b, ClipOrdering, ConfigureWindowAux, ConnectionExt as _,
    CreateGCAux, CreateWindowAux, Gcontext, Pixmap, PropMode, Rectangle, StackMode, Window,
    WindowClass,
};
use x11rb::wrapper::ConnectionExt as _;

use cc_desktop::{DriverError, Indicator};
use cc_protocol::PhysicalRect;

use crate::connection::{Conn, cerr, xerr};

/// The class of the banner windows (`WM_CLASS`), for anyone inspecting the display.
pub const CLASS: &[u8] = b"computer-control-indicator\0computer-control-indicator\0";

/// Fonts tried in order: the larger ones come with `xfonts-base`; `fixed` is built
/// into every X server.
const FONTS: [&[u8]; 4] = [b"10x20", b"9x15bold", b"9x15", b"fixed"];

/// How one state looks.
struct Look {
    text: &'static str,
    background: (u16, u16, u16),
    foreground: (u16, u16, u16),
    height: u16,
    /// The whole width of the monitor, or just around the text.
    full_width: bool,
}

fn look(state: Indicator) -> Option<Look> {
    match state {
        Indicator::Off => None,
        Indicator::Stopped => Some(Look {
            text: "STOPPED - the emergency stop is on; only the operator can release it",
            background: (0xc6c6, 0x2828, 0x2828),
            foreground: (0xffff, 0xffff, 0xffff),
            height: 32,
            full_width: true,
        }),
        Indicator::Acting => Some(Look {
            text: "computer-control: an agent is acting",
            background: (0xf9f9, 0xa8a8, 0x2525),
            foreground: (0x1010, 0x1010, 0x1010),
            height: 20,
            full_width: false,
        }),
    }
}

/// The banners: made once per state and monitor layout, then mapped and unmapped.
///
/// Showing a banner made before is two requests (map, raise) and hiding it one
/// (unmap); neither waits for a reply, so an action pays no round trip for its banner.
/// Only the first banner of a state on a layout is made with round trips (its colours,
/// font and text extents). An acting banner stays up for [`LINGER`] after the action
/// that raised it, so a burst of actions keeps one banner on the screen instead of
/// flashing one per action (a person sees that input is being driven; a banner up for
/// the 0.1 ms of a click would be invisible), and is taken down at once before a
/// capture ([`Banners::before_capture`]) or when the stop shows instead.
#[derive(Default)]
pub(super) struct Banners {
    /// Banners made for the layout in `made_for`, by state; mapped only if shown.
    made: Vec<(Indicator, Vec<Window>)>,
    /// The monitors the banners in `made` were placed on.
    made_for: Vec<PhysicalRect>,
    /// What was asked for last.
    state: Indicator,
    /// What is mapped now: `state`, or an acting banner until `hide_at`.
    shown: Indicator,
    /// When a lingering acting banner goes.
    hide_at: Option<Instant>,
    /// When they were last raised.
    raised: Option<Instant>,
}

/// How often the banners are raised above windows stacked since.
const RAISE_EVERY: Duration = Duration::from_millis(250);

/// How long an acting banner stays up after the action that raised it.
pub const LINGER: Duration = Duration::from_millis(500);

impl Banners {
    /// Shows `state` on every monitor of `monitors` (replacing what was shown; an
    /// acting banner asked off lingers, see [`Banners`]).
    pub fn show(
        &mut self,
        conn: &Conn,
        monitors: &[PhysicalRect],
        state: Indicator,
    ) -> Result<(), DriverError> {
        if self.made_for != monitors {
            self.clear(conn);
            self.made_for = monitors.to_vec();
        }
        self.state = state;
        if state == Indicator::Off {
            match self.shown {
                Indicator::Acting => self.hide_at = Some(Instant::now() + LINGER),
                Indicator::Stopped => self.unmap_shown(conn),
                Indicator::Off => {}
            }
            return conn.conn.flush().map_err(cerr("flush"));
        }
        self.hide_at = None;
        if self.shown == state {
            return Ok(());
        }
        let Some(look) = look(state) else {
            return Ok(());
        };
        if !conn.ext.shape {
            return Err(DriverError::Unavailable(
                "no Shape extension: a banner would take clicks meant for the desktop".into(),
            ));
        }
        if !self.made.iter().any(|(s, _)| *s == state) {
            let mut windows = Vec::with_capacity(monitors.len());
            for m in monitors {
                match banner(conn, m, &look) {
                    Ok(w) => windows.push(w),
                    Err(e) => {
                        for w in windows {
                            let _ = conn.conn.destroy_window(w);
                        }
                        return Err(e);
                    }
                }
            }
            self.made.push((state, windows));
        }
        self.unmap_shown(conn);
        for &w in self.windows(state) {
            conn.conn.map_window(w).map_err(cerr("MapWindow"))?;
            conn.conn
                .configure_window(w, &ConfigureWindowAux::new().stack_mode(StackMode::ABOVE))
                .map_err(cerr("ConfigureWindow"))?;
        }
        self.shown = state;
        self.raised = Some(Instant::now());
        conn.conn.flush().map_err(cerr("flush"))
    }

    /// Called from `poll_events`: takes a lingering acting banner down once its time
    /// is up, and keeps the banners above windows raised since (one request each, a
    /// few times a second at most).
    pub fn tick(&mut self, conn: &Conn) {
        if self.hide_at.is_some_and(|t| Instant::now() >= t) {
            self.unmap_shown(conn);
            let _ = conn.conn.flush();
        }
        if self.shown == Indicator::Off || self.raised.is_some_and(|t| t.elapsed() < RAISE_EVERY) {
            return;
        }
        for &w in self.windows(self.shown) {
            let _ = conn
                .conn
                .configure_window(w, &ConfigureWindowAux::new().stack_mode(StackMode::ABOVE));
        }
        let _ = conn.conn.flush();
        self.raised = Some(Instant::now());
    }

    /// Takes a lingering acting banner down before the screen is read, so a capture
    /// shows the desktop, not the banner of an action that is over. The unmap goes
    /// out ahead of the capture's requests on the same connection, so the server
    /// handles it first: no round trip.
    pub fn before_capture(&mut self, conn: &Conn) {
        if self.shown != self.state {
            self.unmap_shown(conn);
        }
    }

    /// What was asked for last.
    pub fn state(&self) -> Indicator {
        self.state
    }

    /// Removes every banner (made ones too): the layout changed or the driver ends.
    pub fn clear(&mut self, conn: &Conn) {
        for (_, windows) in self.made.drain(..) {
            for w in windows {
                let _ = conn.conn.destroy_window(w);
            }
        }
        let _ = conn.conn.flush();
        self.made_for.clear();
        self.state = Indicator::Off;
        self.shown = Indicator::Off;
        self.hide_at = None;
    }

    fn windows(&self, state: Indicator) -> &[Window] {
        self.made
            .iter()
            .find(|(s, _)| *s == state)
            .map_or(&[], |(_, w)| w.as_slice())
    }

    /// Unmaps what is shown (queued, not flushed).
    fn unmap_shown(&mut self, conn: &Conn) {
        for &w in self.windows(self.shown) {
            let _ = conn.conn.unmap_window(w);
        }
        self.shown = Indicator::Off;
        self.hide_at = None;
    }
}

/// Opens the first font of [`FONTS`] the server has.
fn open_font(conn: &Conn) -> Result<u32, DriverError> {
    for name in FONTS {
        let id = conn
            .conn
            .generate_id()
            .map_err(|e| DriverError::Failed(e.to_string()))?;
        let opened = conn.conn.open_font(id, name).map_err(cerr("OpenFont"))?;
        if opened.check().is_ok() {
            return Ok(id);
        }
    }
    Err(DriverError::Unavailable(
        "the X server has no core font for the banner's text".into(),
    ))
}

/// Creates one banner at the top centre of `monitor`, unmapped.
fn banner(conn: &Conn, monitor: &PhysicalRect, look: &Look) -> Result<Window, DriverError> {
    let c = &conn.conn;
    let screen = c
        .setup()
        .roots
        .iter()
        .find(|s| s.root == conn.root)
        .ok_or_else(|| DriverError::Failed("the root window has no screen".into()))?;
    let pixel = |(r, g, b): (u16, u16, u16)| -> Result<u32, DriverError> {
        Ok(c.alloc_color(screen.default_colormap, r, g, b)
            .map_err(cerr("AllocColor"))?
            .reply()
            .map_err(xerr("AllocColor"))?
            .pixel)
    };
    let (bg, fg) = (pixel(look.background)?, pixel(look.foreground)?);
    let font = open_font(conn)?;
    let text: Vec<u8> = look.text.bytes().collect();
    let extents = c
        .query_text_extents(
            font,
            &text
                .iter()
                .map(|&b| Char2b { byte1: 0, byte2: b })
                .collect::<Vec<_>>(),
        )
        .map_err(cerr("QueryTextExtents"))?
        .reply()
        .map_err(xerr("QueryTextExtents"))?;
    let text_w = u16::try_from(extents.overall_width.max(0)).unwrap_or(u16::MAX);
    let ascent = u16::try_from(extents.font_ascent.max(0)).unwrap_or(0);
    let descent = u16::try_from(extents.font_descent.max(0)).unwrap_or(0);
    let monitor_w = u16::try_from(monitor.width).unwrap_or(u16::MAX);
    let height = look.height.max(ascent + descent + 4);
    let width = if look.full_width {
        monitor_w
    } else {
        text_w.saturating_add(24).min(monitor_w)
    };
    let x = monitor.x + i32::from((monitor_w - width) / 2);
    let x = i16::try_from(x).unwrap_or(i16::MAX);
    let y = i16::try_from(monitor.y).unwrap_or(i16::MAX);

    // The text, drawn once into the background pixmap.
    let pixmap: Pixmap = c
        .generate_id()
        .map_err(|e| DriverError::Failed(e.to_string()))?;
    c.create_pixmap(screen.root_depth, pixmap, conn.root, width, height)
        .map_err(cerr("CreatePixmap"))?;
    let gc: Gcontext = c
        .generate_id()
        .map_err(|e| DriverError::Failed(e.to_string()))?;
    c.create_gc(
        gc,
        pixmap,
        &CreateGCAux::new().foreground(bg).background(bg).font(font),
    )
    .map_err(cerr("CreateGC"))?;
    c.poly_fill_rectangle(
        pixmap,
        gc,
        &[Rectangle {
            x: 0,
            y: 0,
            width,
            height,
        }],
    )
    .map_err(cerr("PolyFillRectangle"))?;
    c.change_gc(gc, &ChangeGCAux::new().foreground(fg))
        .map_err(cerr("ChangeGC"))?;
    let tx = i16::try_from(width.saturating_sub(text_w) / 2).unwrap_or(0);
    let ty = i16::try_from((height + ascent - descent) / 2).unwrap_or(0);
    c.image_text8(pixmap, gc, tx, ty, &text)
        .map_err(cerr("ImageText8"))?;
    // The ImageText background is the GC's: the banner's colour.
    let _ = c.free_gc(gc);
    let _ = c.close_font(font);

    let w: Window = c
        .generate_id()
        .map_err(|e| DriverError::Failed(e.to_string()))?;
    c.create_window(
        screen.root_depth,
        w,
        conn.root,
        x,
        y,
        width,
        height,
        0,
        WindowClass::INPUT_OUTPUT,
        screen.root_visual,
        &CreateWindowAux::new()
            .override_redirect(1)
            .background_pixmap(pixmap)
            .border_pixel(bg),
    )
    .map_err(cerr("CreateWindow"))?;
    let _ = c.free_pixmap(pixmap);
    c.change_property8(
        PropMode::REPLACE,
        w,
        AtomEnum::WM_CLASS,
        AtomEnum::STRING,
        CLASS,
    )
    .map_err(cerr("ChangeProperty"))?;
    c.change_property8(
        PropMode::REPLACE,
        w,
        AtomEnum::WM_NAME,
        AtomEnum::STRING,
        look.text.as_bytes(),
    )
    .map_err(cerr("ChangeProperty"))?;
    // An empty input region: clicks go to whatever is beneath.
    c.shape_rectangles(
        shape::SO::SET,
        shape::SK::INPUT,
        ClipOrdering::UNSORTED,
        w,
        0,
        0,
        &[],
    )
    .map_err(cerr("ShapeRectangles"))?;
    Ok(w)
}
