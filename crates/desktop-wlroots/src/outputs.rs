//! The monitor layout from `wl_output` and `xdg_output`: each output's place and size in
//! the compositor's layout (logical pixels, which this driver calls physical: it is the
//! space the virtual pointer moves in), and a generation that advances on every change.

use cc_desktop::{Layout, PhysicalDisplay};
use cc_protocol::PhysicalRect;

use crate::client::State;

/// The part two rectangles share, if any.
pub fn intersect(a: PhysicalRect, b: PhysicalRect) -> Option<PhysicalRect> {
    let x0 = a.x.max(b.x);
    let y0 = a.y.max(b.y);
    let x1 = (i64::from(a.x) + i64::from(a.width)).min(i64::from(b.x) + i64::from(b.width));
    let y1 = (i64::from(a.y) + i64::from(a.height)).min(i64::from(b.y) + i64::from(b.height));
    (x1 > i64::from(x0) && y1 > i64::from(y0)).then(|| PhysicalRect {
        x: x0,
        y: y0,
        width: (x1 - i64::from(x0)) as u32,
        height: (y1 - i64::from(y0)) as u32,
    })
}

/// The displays the events describe, sorted by position; an output without its
/// layout position yet (no `xdg_output`) is placed by its mode and scale at the origin.
pub fn displays(state: &State) -> Vec<PhysicalDisplay> {
    let mut out: Vec<PhysicalDisplay> = state
        .outputs
        .values()
        .filter_map(|o| {
            let (x, y, w, h) = o.logical.unwrap_or_else(|| {
                let s = o.scale.max(1);
                (0, 0, o.mode.0 / s, o.mode.1 / s)
            });
            let rect = PhysicalRect {
                x,
                y,
                width: u32::try_from(w).ok().filter(|&w| w > 0)?,
                height: u32::try_from(h).ok().filter(|&h| h > 0)?,
            };
            let name = if o.name.is_empty() {
                format!("OUTPUT-{}", o.wl.id().protocol_id())
            } else {
                o.name.clone()
            };
            Some(PhysicalDisplay {
                id: name.clone(),
                name,
                rect,
                primary: false,
            })
        })
        .collect();
    out.sort_by_key(|d| (d.rect.y, d.rect.x, d.name.clone()));
    // The output at the layout's origin is primary (sway puts the first output there),
    // else the first.
    let primary = out
        .iter()
        .position(|d| d.rect.x == 0 && d.rect.y == 0)
        .unwrap_or(0);
    if let Some(d) = out.get_mut(primary) {
        d.primary = true;
    }
    out
}

use wayland_client::Proxy as _;

/// The layout as last read, with its generation.
#[derive(Debug, Default)]
pub struct Monitors {
    current: Vec<PhysicalDisplay>,
    generation: u64,
}

impl Monitors {
    /// Re-reads the displays; true when they differ from the last reading (the
    /// generation advanced).
    pub fn update(&mut self, state: &State) -> bool {
        let now = displays(state);
        if now == self.current {
            return false;
        }
        self.current = now;
        self.generation += 1;
        true
    }

    /// The layout as last read.
    pub fn layout(&self) -> Layout {
        Layout {
            displays: self.current.clone(),
            generation: self.generation,
        }
    }

    /// The bounding box of every display (the virtual pointer's extent).
    pub fn bounds(&self) -> Option<PhysicalRect> {
        let mut it = self.current.iter().map(|d| d.rect);
        let first = it.next()?;
        let (mut x0, mut y0) = (i64::from(first.x), i64::from(first.y));
        let (mut x1, mut y1) = (x0 + i64::from(first.width), y0 + i64::from(first.height));
        for r in it {
            x0 = x0.min(i64::from(r.x));
            y0 = y0.min(i64::from(r.y));
            x1 = x1.max(i64::from(r.x) + i64::from(r.width));
            y1 = y1.max(i64::from(r.y) + i64::from(r.height));
        }
        Some(PhysicalRect {
            x: x0 as i32,
            y: y0 as i32,
            width: (x1 - x0) as u32,
            height: (y1 - y0) as u32,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(x: i32, y: i32, width: u32, height: u32) -> PhysicalRect {
        PhysicalRect {
            x,
            y,
            width,
            height,
        }
    }

    #[test]
    fn intersection_of_overlapping_and_disjoint_rectangles() {
        assert_eq!(
            intersect(r(0, 0, 100, 100), r(50, -20, 100, 100)),
            Some(r(50, 0, 50, 80))
        );
        assert_eq!(intersect(r(0, 0, 10, 10), r(10, 0, 10, 10)), None);
        assert_eq!(
            intersect(r(-1280, 0, 1280, 720), r(-1300, 10, 2000, 10)),
            Some(r(-1280, 10, 1280, 10))
        );
    }
}
