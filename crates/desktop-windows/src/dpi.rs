//! Coordinates across monitors of different scale, without a desktop.
//!
//! The driver declares itself per-monitor DPI aware (v2), so every Win32 coordinate it
//! reads or writes is a physical pixel of the virtual screen, which is what the engine
//! calls physical. Two conversions remain and live here, where they are tested:
//! SendInput's absolute pointer coordinates, normalised to 0..=65535 over the virtual
//! screen, and the logical coordinates a process gets when the system refused the
//! awareness (an older Windows, a policy, a host that set it first): each monitor then
//! scales by its own DPI around its own origin.

use cc_protocol::PhysicalRect;

/// The DPI at which one logical pixel is one physical pixel.
pub const BASE_DPI: u32 = 96;

/// One monitor as the system reports it in physical pixels, with its effective DPI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Monitor {
    pub rect: PhysicalRect,
    pub dpi: u32,
}

impl Monitor {
    /// The scale in percent (100, 125, 150…), as display settings show it.
    pub fn scale_percent(&self) -> u32 {
        self.dpi.max(1) * 100 / BASE_DPI
    }

    /// The monitor's rectangle as a DPI-unaware process sees it: same origin, size
    /// divided by the scale.
    pub fn logical_rect(&self) -> PhysicalRect {
        PhysicalRect {
            x: self.rect.x,
            y: self.rect.y,
            width: scale(self.rect.width as i64, BASE_DPI, self.dpi) as u32,
            height: scale(self.rect.height as i64, BASE_DPI, self.dpi) as u32,
        }
    }
}

fn scale(v: i64, num: u32, den: u32) -> i64 {
    let den = den.max(1) as i64;
    (v * num as i64).div_euclid(den)
}

/// The SendInput absolute coordinates (`MOUSEEVENTF_ABSOLUTE | MOUSEEVENTF_VIRTUALDESK`)
/// that land on physical pixel (`x`, `y`) of the virtual screen `screen`. Windows maps a
/// normalised `n` back to `origin + n * size / 65536`, rounding down; the smallest `n`
/// that maps to the pixel is taken, so the pointer lands on it exactly. `None` outside.
pub fn absolute(screen: PhysicalRect, x: i32, y: i32) -> Option<(i32, i32)> {
    if !screen.contains(x, y) {
        return None;
    }
    let axis = |v: i32, origin: i32, size: u32| -> i32 {
        let offset = (v as i64 - origin as i64) * 65536;
        let size = size.max(1) as i64;
        ((offset + size - 1) / size).min(65535) as i32
    };
    Some((
        axis(x, screen.x, screen.width),
        axis(y, screen.y, screen.height),
    ))
}

/// Where Windows puts the pointer for absolute coordinates (`dx`, `dy`): the inverse of
/// [`absolute`].
pub fn from_absolute(screen: PhysicalRect, dx: i32, dy: i32) -> (i32, i32) {
    let axis = |n: i32, origin: i32, size: u32| -> i32 {
        (origin as i64 + (n as i64 * size as i64) / 65536) as i32
    };
    (
        axis(dx, screen.x, screen.width),
        axis(dy, screen.y, screen.height),
    )
}

/// A logical point of a DPI-unaware process → the physical pixel: found on the monitor
/// whose logical rectangle holds it. `None` when no monitor does.
pub fn logical_to_physical(monitors: &[Monitor], x: i32, y: i32) -> Option<(i32, i32)> {
    let m = monitors.iter().find(|m| m.logical_rect().contains(x, y))?;
    let px = m.rect.x as i64 + scale((x - m.rect.x) as i64, m.dpi, BASE_DPI);
    let py = m.rect.y as i64 + scale((y - m.rect.y) as i64, m.dpi, BASE_DPI);
    Some((px as i32, py as i32))
}

/// A physical pixel → the logical point a DPI-unaware process uses for it. `None` when
/// no monitor holds it.
pub fn physical_to_logical(monitors: &[Monitor], x: i32, y: i32) -> Option<(i32, i32)> {
    let m = monitors.iter().find(|m| m.rect.contains(x, y))?;
    let lx = m.rect.x as i64 + scale((x - m.rect.x) as i64, BASE_DPI, m.dpi);
    let ly = m.rect.y as i64 + scale((y - m.rect.y) as i64, BASE_DPI, m.dpi);
    Some((lx as i32, ly as i32))
}

/// The virtual screen: the bounding box of every monitor.
pub fn virtual_screen(monitors: &[Monitor]) -> Option<PhysicalRect> {
    let mut it = monitors.iter();
    let first = it.next()?.rect;
    Some(it.fold(first, |acc, m| acc.union(&m.rect)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rect(x: i32, y: i32, width: u32, height: u32) -> PhysicalRect {
        PhysicalRect {
            x,
            y,
            width,
            height,
        }
    }

    /// A 4K laptop panel at 150 % left of a 1080p monitor at 100 %, the second placed
    /// above the first's top edge: negative coordinates, mixed DPI.
    fn mixed() -> Vec<Monitor> {
        vec![
            Monitor {
                rect: rect(-3840, 0, 3840, 2160),
                dpi: 144,
            },
            Monitor {
                rect: rect(0, -200, 1920, 1080),
                dpi: 96,
            },
        ]
    }

    #[test]
    fn every_pixel_round_trips_through_absolute_coordinates() {
        let screen = virtual_screen(&mixed()).unwrap();
        assert_eq!(screen, rect(-3840, -200, 5760, 2360));
        for x in (screen.x..screen.x + screen.width as i32).step_by(7) {
            let (dx, _) = absolute(screen, x, 0).unwrap();
            assert!((0..=65535).contains(&dx));
            assert_eq!(from_absolute(screen, dx, 0).0, x, "x {x}");
        }
        for y in screen.y..screen.y + screen.height as i32 {
            let (_, dy) = absolute(screen, -1, y).unwrap();
            assert_eq!(from_absolute(screen, 0, dy).1, y, "y {y}");
        }
        // The last pixel of each edge stays inside the normalised range.
        let last = absolute(screen, 1919, 2159).unwrap();
        assert_eq!(from_absolute(screen, last.0, last.1), (1919, 2159));
    }

    #[test]
    fn points_off_every_monitor_have_no_absolute_coordinates() {
        let screen = rect(0, 0, 1280, 1024);
        assert_eq!(absolute(screen, 1280, 0), None);
        assert_eq!(absolute(screen, -1, 0), None);
        assert_eq!(absolute(screen, 0, 1024), None);
        assert_eq!(absolute(screen, 0, 0), Some((0, 0)));
    }

    #[test]
    fn logical_points_scale_around_their_own_monitor() {
        let ms = mixed();
        assert_eq!(ms[0].scale_percent(), 150);
        assert_eq!(ms[0].logical_rect(), rect(-3840, 0, 2560, 1440));
        // The middle of the scaled panel, logically, is its physical middle.
        assert_eq!(
            logical_to_physical(&ms, -3840 + 1280, 720),
            Some((-3840 + 1920, 1080))
        );
        // The 100 % monitor is the identity.
        assert_eq!(logical_to_physical(&ms, 100, -150), Some((100, -150)));
        assert_eq!(physical_to_logical(&ms, 100, -150), Some((100, -150)));
        assert_eq!(
            physical_to_logical(&ms, -3840 + 1920, 1080),
            Some((-3840 + 1280, 720))
        );
        // Beyond the scaled panel's logical width there is no monitor.
        assert_eq!(logical_to_physical(&ms, -1000, 2000), None);
        assert_eq!(physical_to_logical(&ms, 5000, 5000), None);
    }

    #[test]
    fn physical_to_logical_and_back_stays_within_one_physical_pixel() {
        let ms = mixed();
        for x in (-3840..0).step_by(13) {
            let (lx, ly) = physical_to_logical(&ms, x, 999).unwrap();
            let (px, py) = logical_to_physical(&ms, lx, ly).unwrap();
            assert!((px - x).abs() <= 1 && (py - 999).abs() <= 1, "{x}");
        }
    }

    #[test]
    fn an_empty_layout_has_no_virtual_screen() {
        assert_eq!(virtual_screen(&[]), None);
        // A zero DPI reported by a broken driver is not a division by zero.
        let m = Monitor {
            rect: rect(0, 0, 10, 10),
            dpi: 0,
        };
        assert_eq!(m.scale_percent(), 1);
        let _ = m.logical_rect();
    }
}
