//! Desktop changes while the engine waits on a condition: X Damage on the root window
//! (every repaint anywhere on the screen, as rectangles, the way VNC servers follow a
//! screen) and property changes of the root window (the EWMH window list and active
//! window). Nothing is selected outside a wait, so an idle driver receives none of it.

use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use cc_desktop::{Changes, Watching};
use cc_protocol::PhysicalRect;
use x11rb::connection::{Connection, RequestConnection};
use x11rb::protocol::Event;
use x11rb::protocol::damage::{ConnectionExt as _, ReportLevel};
use x11rb::protocol::xfixes::ConnectionExt as _;
use x11rb::protocol::xproto::{ChangeWindowAttributesAux, ConnectionExt as _, EventMask};

use crate::connection::Conn;

/// The damage object of a wait in progress, and what arrived since the last report.
#[derive(Default)]
pub(super) struct Watch {
    /// The server offers Damage (probed once).
    available: Option<bool>,
    /// The damage object while watching.
    damage: Option<u32>,
    pub changes: Changes,
}

/// Damage rectangles kept between two reports at most; past it they merge into one.
const MAX_RECTS: usize = 256;

impl Watch {
    fn probe(&mut self, conn: &Conn) -> bool {
        *self.available.get_or_insert_with(|| {
            let present = |name| {
                conn.conn
                    .extension_information(name)
                    .ok()
                    .flatten()
                    .is_some()
            };
            present(x11rb::protocol::damage::X11_EXTENSION_NAME)
                && present(x11rb::protocol::xfixes::X11_EXTENSION_NAME)
                && conn
                    .conn
                    .xfixes_query_version(5, 0)
                    .ok()
                    .and_then(|c| c.reply().ok())
                    .is_some()
                && conn
                    .conn
                    .damage_query_version(1, 1)
                    .ok()
                    .and_then(|c| c.reply().ok())
                    .is_some()
        })
    }

    /// Starts watching: a damage object on the root window and root property events.
    pub fn start(&mut self, conn: &Conn) -> Watching {
        self.changes = Changes::default();
        let mask = EventMask::STRUCTURE_NOTIFY | EventMask::PROPERTY_CHANGE;
        let props = conn
            .conn
            .change_window_attributes(
                conn.root,
                &ChangeWindowAttributesAux::new().event_mask(mask),
            )
            .is_ok();
        let mut pixels = false;
        if self.damage.is_none() && self.probe(conn) {
            if let Ok(id) = conn.conn.generate_id() {
                pixels = conn
                    .conn
                    .damage_create(id, conn.root, ReportLevel::RAW_RECTANGLES)
                    .is_ok();
                if pixels {
                    self.damage = Some(id);
                }
            }
        } else {
            pixels = self.damage.is_some();
        }
        let _ = conn.flush();
        Watching {
            pixels,
            // The window list and the active window are root properties; a new or
            // renamed window also repaints (its frame, its title).
            windows: props,
            a11y: false,
            still: false,
        }
    }

    /// Stops watching: the damage object goes, root property events are deselected.
    pub fn stop(&mut self, conn: &Conn) {
        if let Some(id) = self.damage.take() {
            let _ = conn.conn.damage_destroy(id);
        }
        let _ = conn.conn.change_window_attributes(
            conn.root,
            &ChangeWindowAttributesAux::new().event_mask(EventMask::STRUCTURE_NOTIFY),
        );
        let _ = conn.flush();
        self.changes = Changes::default();
    }

    /// Takes an event that reports a change; false for the others.
    pub fn on_event(&mut self, conn: &Conn, e: &Event) -> bool {
        match e {
            Event::DamageNotify(n) => {
                if self.damage.is_some() {
                    let a = n.area;
                    let r = PhysicalRect {
                        x: i32::from(a.x),
                        y: i32::from(a.y),
                        width: u32::from(a.width),
                        height: u32::from(a.height),
                    };
                    if self.changes.damaged.len() >= MAX_RECTS {
                        let whole = PhysicalRect {
                            x: i32::MIN / 2,
                            y: i32::MIN / 2,
                            width: u32::MAX / 2,
                            height: u32::MAX / 2,
                        };
                        self.changes.damaged = vec![whole];
                    } else {
                        self.changes.damaged.push(r);
                    }
                }
                true
            }
            Event::PropertyNotify(p) if p.window == conn.root => {
                let a = &conn.atoms;
                if [
                    a._NET_CLIENT_LIST,
                    a._NET_CLIENT_LIST_STACKING,
                    a._NET_ACTIVE_WINDOW,
                ]
                .contains(&p.atom)
                {
                    self.changes.windows = true;
                }
                true
            }
            _ => false,
        }
    }

    /// Blocks until the X connection has something to read or `deadline` passes.
    pub fn block(conn: &Conn, deadline: Instant) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        let fd = conn.conn.stream().as_fd();
        let mut fds = [rustix::event::PollFd::new(
            &fd,
            rustix::event::PollFlags::IN,
        )];
        let left = left.min(Duration::from_secs(1));
        let timeout = rustix::event::Timespec {
            tv_sec: left.as_secs() as i64,
            tv_nsec: i64::from(left.subsec_nanos()),
        };
        // Interrupted or failed: the caller looks at the connection and the clock again.
        let _ = rustix::event::poll(&mut fds, Some(&timeout));
    }
}
