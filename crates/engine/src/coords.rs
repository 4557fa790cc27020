//! The coordinate contract (PROTOCOL §4.1): one canvas over the whole desktop, one
//! uniform factor to physical pixels, clamping at the edges.

use cc_desktop::Layout;
use cc_protocol::{DisplayInfo, PhysicalRect, Rect, Surface};

use crate::config::CanvasWidth;
use crate::encode::Fit;

/// The canvas of one layout at one canvas width.
#[derive(Debug, Clone, PartialEq)]
pub struct Canvas {
    pub surface: Surface,
    /// The width the configuration asked for, so a reconfigured width is noticed even
    /// when `auto` resolves to the same number.
    pub asked: CanvasWidth,
}

/// The rectangle around every display, `None` for a desktop without one.
fn bounding_box(layout: &Layout) -> Option<PhysicalRect> {
    layout
        .displays
        .iter()
        .map(|d| d.rect)
        .reduce(|a, b| a.union(&b))
}

/// The canvas height at `width` over `physical`: the physical aspect ratio kept.
fn height_at(physical: &PhysicalRect, width: u32) -> u32 {
    let scale = physical.width.max(1) as f64 / width.max(1) as f64;
    ((physical.height as f64 / scale).round() as u32).max(1)
}

/// The widest canvas whose full-size image a model takes as it is (within
/// [`Fit::MODEL`]: 1568 px on the long edge, 1.15 MP), never wider than the desktop:
/// so the default capture is the canvas and a point read off it needs no mapping.
pub fn auto_width(layout: &Layout) -> u32 {
    let Some(physical) = bounding_box(layout) else {
        return 1;
    };
    let fits = |w: u32| {
        let h = height_at(&physical, w);
        w.max(h) <= Fit::MODEL.max_edge && w as u64 * h as u64 <= Fit::MODEL.max_pixels
    };
    let widest = physical.width.clamp(1, Fit::MODEL.max_edge);
    (1..=widest).rev().find(|w| fits(*w)).unwrap_or(1)
}

impl Canvas {
    /// Builds the canvas the configuration asks for: the operator's width, or the
    /// [`auto_width`] of this layout.
    pub fn configured(layout: &Layout, width: CanvasWidth) -> Canvas {
        let px = match width {
            CanvasWidth::Auto => auto_width(layout),
            CanvasWidth::Px(n) => n,
        };
        Canvas {
            asked: width,
            ..Canvas::new(layout, px)
        }
    }

    /// Builds the canvas for `layout` at `canvas_width` pixels wide.
    pub fn new(layout: &Layout, canvas_width: u32) -> Canvas {
        let physical = bounding_box(layout).unwrap_or(PhysicalRect {
            x: 0,
            y: 0,
            width: canvas_width.max(1),
            height: canvas_width.max(1),
        });
        let canvas_width = canvas_width.max(1);
        let scale = physical.width.max(1) as f64 / canvas_width as f64;
        let canvas_height = height_at(&physical, canvas_width);
        let displays = layout
            .displays
            .iter()
            .map(|d| {
                let x0 = ((d.rect.x - physical.x) as f64 / scale).round() as i32;
                let y0 = ((d.rect.y - physical.y) as f64 / scale).round() as i32;
                let x1 = ((d.rect.x - physical.x) as f64 + d.rect.width as f64) / scale;
                let y1 = ((d.rect.y - physical.y) as f64 + d.rect.height as f64) / scale;
                DisplayInfo {
                    id: d.id.clone(),
                    name: d.name.clone(),
                    canvas: Rect {
                        x: x0,
                        y: y0,
                        width: x1.round() as i32 - x0,
                        height: y1.round() as i32 - y0,
                    },
                    primary: d.primary,
                }
            })
            .collect();
        Canvas {
            surface: Surface {
                display_width_px: canvas_width,
                display_height_px: canvas_height,
                physical,
                scale,
                displays,
            },
            asked: CanvasWidth::Px(canvas_width),
        }
    }

    /// Clamps a canvas point into the canvas.
    pub fn clamp(&self, x: f64, y: f64) -> (i32, i32) {
        let w = self.surface.display_width_px as f64 - 1.0;
        let h = self.surface.display_height_px as f64 - 1.0;
        (
            x.round().clamp(0.0, w) as i32,
            y.round().clamp(0.0, h) as i32,
        )
    }

    /// Maps a (clamped) canvas point to physical pixels.
    pub fn to_physical(&self, x: f64, y: f64) -> (i32, i32) {
        let (cx, cy) = self.clamp(x, y);
        let s = &self.surface;
        let px = s.physical.x as f64 + (cx as f64 + 0.5) * s.scale;
        let py = s.physical.y as f64 + (cy as f64 + 0.5) * s.scale;
        let max_x = s.physical.x as i64 + s.physical.width as i64 - 1;
        let max_y = s.physical.y as i64 + s.physical.height as i64 - 1;
        (
            (px.floor() as i64).clamp(s.physical.x as i64, max_x) as i32,
            (py.floor() as i64).clamp(s.physical.y as i64, max_y) as i32,
        )
    }

    /// Maps a physical pixel to the canvas unit that holds its centre, so the pixel
    /// [`Canvas::to_physical`] chose for a canvas point maps back to that point at any
    /// scale, not only a whole one.
    pub fn to_canvas(&self, x: i32, y: i32) -> (i32, i32) {
        let s = &self.surface;
        (
            ((x - s.physical.x) as f64 + 0.5).div_euclid(s.scale) as i32,
            ((y - s.physical.y) as f64 + 0.5).div_euclid(s.scale) as i32,
        )
    }

    /// Maps a physical rect to `[left, top, right, bottom]` on the canvas.
    pub fn rect_from_physical(&self, r: &PhysicalRect) -> [i32; 4] {
        let s = &self.surface;
        let l = ((r.x - s.physical.x) as f64 / s.scale).round() as i32;
        let t = ((r.y - s.physical.y) as f64 / s.scale).round() as i32;
        let rr = ((r.x - s.physical.x) as f64 + r.width as f64) / s.scale;
        let bb = ((r.y - s.physical.y) as f64 + r.height as f64) / s.scale;
        [l, t, rr.round() as i32, bb.round() as i32]
    }

    /// Maps a canvas rect (clamped to the canvas) to a physical rect.
    pub fn rect_to_physical(&self, r: &Rect) -> PhysicalRect {
        let s = &self.surface;
        let x0 = (r.x.max(0) as f64).min(s.display_width_px as f64);
        let y0 = (r.y.max(0) as f64).min(s.display_height_px as f64);
        let x1 = ((r.x as i64 + r.width as i64).max(0) as f64).min(s.display_width_px as f64);
        let y1 = ((r.y as i64 + r.height as i64).max(0) as f64).min(s.display_height_px as f64);
        let px0 = (s.physical.x as f64 + x0 * s.scale).floor() as i32;
        let py0 = (s.physical.y as f64 + y0 * s.scale).floor() as i32;
        let px1 = (s.physical.x as f64 + x1 * s.scale).ceil() as i32;
        let py1 = (s.physical.y as f64 + y1 * s.scale).ceil() as i32;
        PhysicalRect {
            x: px0,
            y: py0,
            width: (px1 - px0).max(0) as u32,
            height: (py1 - py0).max(0) as u32,
        }
    }

    /// The display whose canvas rect holds a canvas point (for `window.list.display`).
    pub fn display_at(&self, x: i32, y: i32) -> Option<&DisplayInfo> {
        self.surface
            .displays
            .iter()
            .find(|d| d.canvas.contains(x, y))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cc_desktop::PhysicalDisplay;

    fn layout(displays: &[(i32, i32, u32, u32)]) -> Layout {
        Layout {
            displays: displays
                .iter()
                .enumerate()
                .map(|(i, &(x, y, w, h))| PhysicalDisplay {
                    id: i.to_string(),
                    name: format!("D{i}"),
                    rect: PhysicalRect {
                        x,
                        y,
                        width: w,
                        height: h,
                    },
                    primary: i == 0,
                })
                .collect(),
            generation: 1,
        }
    }

    #[test]
    fn identity_when_canvas_equals_physical() {
        let c = Canvas::new(&layout(&[(0, 0, 1920, 1080)]), 1920);
        assert_eq!(c.surface.display_height_px, 1080);
        assert_eq!(c.surface.scale, 1.0);
        assert_eq!(c.to_physical(100.0, 200.0), (100, 200));
        assert_eq!(c.to_canvas(100, 200), (100, 200));
    }

    #[test]
    fn scaled_canvas_keeps_aspect_and_maps_back() {
        let c = Canvas::new(&layout(&[(0, 0, 3840, 2160)]), 1920);
        assert_eq!(c.surface.display_height_px, 1080);
        assert_eq!(c.surface.scale, 2.0);
        assert_eq!(c.to_physical(10.0, 10.0), (21, 21));
        assert_eq!(c.to_canvas(21, 21), (10, 10));
    }

    #[test]
    fn negative_origin_second_display() {
        let c = Canvas::new(&layout(&[(0, 0, 1920, 1080), (-1280, 0, 1280, 1024)]), 1600);
        let s = &c.surface;
        assert_eq!(
            s.physical,
            PhysicalRect {
                x: -1280,
                y: 0,
                width: 3200,
                height: 1080
            }
        );
        assert_eq!(s.scale, 2.0);
        assert_eq!(s.display_height_px, 540);
        assert_eq!(
            s.displays[0].canvas,
            Rect {
                x: 640,
                y: 0,
                width: 960,
                height: 540
            }
        );
        assert_eq!(
            s.displays[1].canvas,
            Rect {
                x: 0,
                y: 0,
                width: 640,
                height: 512
            }
        );
        // Canvas (0,0) is the left monitor's corner, at a negative physical x.
        assert_eq!(c.to_physical(0.0, 0.0), (-1279, 1));
        assert_eq!(c.to_physical(640.0, 0.0), (1, 1));
    }

    #[test]
    fn auto_is_the_largest_canvas_a_model_takes_as_it_is() {
        // 1430 × 804 = 1 149 720 pixels; 1431 would be 1431 × 805 = 1 151 955.
        let c = Canvas::configured(&layout(&[(0, 0, 1920, 1080)]), CanvasWidth::Auto);
        let s = &c.surface;
        assert_eq!((s.display_width_px, s.display_height_px), (1430, 804));
        assert_eq!(Fit::MODEL.size(1430, 804, 1.0), (1430, 804));
        assert_eq!(c.asked, CanvasWidth::Auto);
        // Canvas (327, 277) is the physical pixel under it (1920 / 1430 apart), and
        // every canvas point maps back to itself.
        assert_eq!(c.to_physical(327.0, 277.0), (439, 372));
        for x in 0..1430 {
            let (px, py) = c.to_physical(x as f64, (x % 804) as f64);
            assert_eq!(c.to_canvas(px, py), (x, x % 804), "{x}");
        }
        // A desk that already fits keeps its own size: never larger than the screen.
        for (w, h) in [(1280, 800), (1024, 768), (640, 480)] {
            let s = Canvas::configured(&layout(&[(0, 0, w, h)]), CanvasWidth::Auto).surface;
            assert_eq!(
                (s.display_width_px, s.display_height_px, s.scale),
                (w, h, 1.0)
            );
        }
        // The long edge binds on a wide desk, the pixel budget on a 4K one, the
        // height on a portrait one.
        let wide = Canvas::configured(&layout(&[(0, 0, 5120, 1440)]), CanvasWidth::Auto);
        assert_eq!(wide.surface.display_width_px, 1568);
        let uhd = Canvas::configured(&layout(&[(0, 0, 3840, 2160)]), CanvasWidth::Auto);
        assert_eq!(
            (uhd.surface.display_width_px, uhd.surface.display_height_px),
            (1430, 804)
        );
        let tall = Canvas::configured(&layout(&[(0, 0, 1080, 1920)]), CanvasWidth::Auto).surface;
        assert!(tall.display_height_px <= 1568, "{tall:?}");
        assert!(tall.display_width_px as u64 * tall.display_height_px as u64 <= 1_150_000);
        let one_more = height_at(&tall.physical, tall.display_width_px + 1);
        assert!(
            one_more > 1568 || (tall.display_width_px as u64 + 1) * one_more as u64 > 1_150_000,
            "{tall:?}"
        );
    }

    #[test]
    fn a_configured_width_wins_over_auto() {
        let c = Canvas::configured(&layout(&[(0, 0, 1920, 1080)]), CanvasWidth::Px(1920));
        assert_eq!(c.surface.display_width_px, 1920);
        assert_eq!(c.surface.scale, 1.0);
        assert_eq!(c.asked, CanvasWidth::Px(1920));
    }

    #[test]
    fn clamps_into_canvas() {
        let c = Canvas::new(&layout(&[(0, 0, 1920, 1080)]), 1920);
        assert_eq!(c.clamp(-50.0, 5000.0), (0, 1079));
        assert_eq!(c.to_physical(1e9, -1e9), (1919, 0));
    }
}
