//! The coordinate contract (PROTOCOL §4.1): one canvas over the whole desktop, one
//! uniform factor to physical pixels, clamping at the edges.

use cc_desktop::Layout;
use cc_protocol::{DisplayInfo, PhysicalRect, Rect, Surface};

/// The canvas of one layout at one canvas width.
#[derive(Debug, Clone, PartialEq)]
pub struct Canvas {
    pub surface: Surface,
}

impl Canvas {
    /// Builds the canvas for `layout` at `canvas_width` pixels wide.
    pub fn new(layout: &Layout, canvas_width: u32) -> Canvas {
        let mut bbox: Option<PhysicalRect> = None;
        for d in &layout.displays {
            bbox = Some(match bbox {
                None => d.rect,
                Some(b) => b.union(&d.rect),
            });
        }
        let physical = bbox.unwrap_or(PhysicalRect {
            x: 0,
            y: 0,
            width: canvas_width.max(1),
            height: canvas_width.max(1),
        });
        let canvas_width = canvas_width.max(1);
        let scale = physical.width.max(1) as f64 / canvas_width as f64;
        let canvas_height = ((physical.height as f64 / scale).round() as u32).max(1);
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

    /// Maps a physical point to the canvas.
    pub fn to_canvas(&self, x: i32, y: i32) -> (i32, i32) {
        let s = &self.surface;
        (
            ((x - s.physical.x) as f64 / s.scale).floor() as i32,
            ((y - s.physical.y) as f64 / s.scale).floor() as i32,
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
    fn clamps_into_canvas() {
        let c = Canvas::new(&layout(&[(0, 0, 1920, 1080)]), 1920);
        assert_eq!(c.clamp(-50.0, 5000.0), (0, 1079));
        assert_eq!(c.to_physical(1e9, -1e9), (1919, 0));
    }
}
