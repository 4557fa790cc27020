//! The monitor layout from RandR (`RRGetMonitors`, so `xrandr --setmonitor` splits
//! count), its generation, and the notifications that say it changed.

use std::time::{Duration, Instant};

use cc_protocol::PhysicalRect;
use x11rb::protocol::Event;
use x11rb::protocol::randr::{ConnectionExt as _, NotifyMask};
use x11rb::protocol::xproto::{ChangeWindowAttributesAux, ConnectionExt as _, EventMask};

use super::connection::{Conn, cerr, xerr};
use cc_desktop::{DriverError, Layout, PhysicalDisplay};

/// How often `poll_events` re-reads the monitors even without a notification (some
/// servers do not announce `RRSetMonitor`).
const RECHECK: Duration = Duration::from_millis(500);

/// The layout last read and its generation.
pub(super) struct Monitors {
    displays: Vec<PhysicalDisplay>,
    generation: u64,
    /// The generation `poll_events` last reported.
    reported: u64,
    checked: Instant,
}

impl Monitors {
    /// Reads the layout and asks the server for change notifications.
    pub fn new(conn: &Conn) -> Result<Monitors, DriverError> {
        if conn.ext.randr {
            conn.conn
                .randr_select_input(
                    conn.root,
                    NotifyMask::SCREEN_CHANGE | NotifyMask::CRTC_CHANGE | NotifyMask::OUTPUT_CHANGE,
                )
                .map_err(cerr("RRSelectInput"))?;
        }
        conn.conn
            .change_window_attributes(
                conn.root,
                &ChangeWindowAttributesAux::new().event_mask(EventMask::STRUCTURE_NOTIFY),
            )
            .map_err(cerr("select root events"))?;
        let displays = read(conn)?;
        Ok(Monitors {
            displays,
            generation: 1,
            reported: 1,
            checked: Instant::now(),
        })
    }

    /// Re-reads the monitors; a different layout advances the generation.
    pub fn refresh(&mut self, conn: &Conn) -> Result<Layout, DriverError> {
        let now = read(conn)?;
        self.checked = Instant::now();
        if now != self.displays {
            self.displays = now;
            self.generation += 1;
        }
        Ok(self.layout())
    }

    pub fn layout(&self) -> Layout {
        Layout {
            displays: self.displays.clone(),
            generation: self.generation,
        }
    }

    /// True for the events that may mean the layout changed.
    pub fn is_layout_event(event: &Event) -> bool {
        matches!(
            event,
            Event::RandrScreenChangeNotify(_) | Event::RandrNotify(_) | Event::ConfigureNotify(_)
        )
    }

    /// Called from `poll_events`: re-reads after a notification or every
    /// [`RECHECK`]; true once per change of generation.
    pub fn poll(&mut self, conn: &Conn, notified: bool) -> bool {
        if notified || self.checked.elapsed() >= RECHECK {
            let _ = self.refresh(conn);
        }
        if self.generation != self.reported {
            self.reported = self.generation;
            return true;
        }
        false
    }
}

/// The part of `r` inside the root window (X has no pixels at negative coordinates:
/// a monitor defined there with `RRSetMonitor` is clipped, or dropped if wholly out).
fn clip(r: PhysicalRect, w: u16, h: u16) -> Option<PhysicalRect> {
    let x0 = i64::from(r.x).max(0);
    let y0 = i64::from(r.y).max(0);
    let x1 = (i64::from(r.x) + i64::from(r.width)).min(i64::from(w));
    let y1 = (i64::from(r.y) + i64::from(r.height)).min(i64::from(h));
    (x1 > x0 && y1 > y0).then(|| PhysicalRect {
        x: x0 as i32,
        y: y0 as i32,
        width: (x1 - x0) as u32,
        height: (y1 - y0) as u32,
    })
}

/// The monitors now: RandR 1.5 monitors (active ones, clipped to the screen), else
/// the whole screen.
fn read(conn: &Conn) -> Result<Vec<PhysicalDisplay>, DriverError> {
    let mut out = Vec::new();
    let (root_w, root_h) = conn.root_size()?;
    if conn.ext.randr_monitors {
        let reply = conn
            .conn
            .randr_get_monitors(conn.root, true)
            .map_err(cerr("RRGetMonitors"))?
            .reply()
            .map_err(xerr("RRGetMonitors"))?;
        let names: Vec<_> = reply
            .monitors
            .iter()
            .map(|m| conn.conn.get_atom_name(m.name).ok())
            .collect();
        for (i, (m, cookie)) in reply.monitors.iter().zip(names).enumerate() {
            let rect = PhysicalRect {
                x: i32::from(m.x),
                y: i32::from(m.y),
                width: u32::from(m.width),
                height: u32::from(m.height),
            };
            let Some(rect) = clip(rect, root_w, root_h) else {
                continue;
            };
            let name = cookie
                .and_then(|c| c.reply().ok())
                .map(|r| String::from_utf8_lossy(&r.name).into_owned())
                .unwrap_or_else(|| format!("MONITOR-{}", i + 1));
            out.push(PhysicalDisplay {
                id: i.to_string(),
                name,
                rect,
                primary: m.primary,
            });
        }
    }
    if out.is_empty() {
        let (w, h) = (root_w, root_h);
        out.push(PhysicalDisplay {
            id: "0".into(),
            name: "screen".into(),
            rect: PhysicalRect {
                x: 0,
                y: 0,
                width: u32::from(w),
                height: u32::from(h),
            },
            primary: true,
        });
    }
    // Exactly one primary: the server may mark none.
    if !out.iter().any(|d| d.primary)
        && let Some(first) = out.first_mut()
    {
        first.primary = true;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(x: i32, y: i32, w: u32, h: u32) -> PhysicalRect {
        PhysicalRect {
            x,
            y,
            width: w,
            height: h,
        }
    }

    #[test]
    fn monitors_are_clipped_to_the_root() {
        assert_eq!(
            clip(r(0, 0, 960, 1080), 1920, 1080),
            Some(r(0, 0, 960, 1080))
        );
        assert_eq!(clip(r(-800, 0, 800, 1080), 1920, 1080), None);
        assert_eq!(
            clip(r(-100, 50, 300, 2000), 1920, 1080),
            Some(r(0, 50, 200, 1030))
        );
        assert_eq!(
            clip(r(1900, 0, 100, 100), 1920, 1080),
            Some(r(1900, 0, 20, 100))
        );
        assert_eq!(clip(r(2000, 0, 100, 100), 1920, 1080), None);
    }
}
