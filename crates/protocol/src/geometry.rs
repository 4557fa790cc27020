//! The coordinate contract's shapes (PROTOCOL §4.1).

use serde::{Deserialize, Serialize};

/// A point on the canvas (integers: the model's pixel grid).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Point {
    /// Canvas pixels from the left.
    pub x: i32,
    /// Canvas pixels from the top.
    pub y: i32,
}

/// A rectangle on the canvas.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rect {
    /// Left edge.
    pub x: i32,
    /// Top edge.
    pub y: i32,
    /// Width (signed: the arithmetic of canvas points and offsets stays in `i32`).
    pub width: i32,
    /// Height, as `width`.
    pub height: i32,
}

impl Rect {
    /// True when the point lies inside (right and bottom edges excluded).
    pub fn contains(&self, x: i32, y: i32) -> bool {
        x >= self.x && y >= self.y && x < self.x + self.width && y < self.y + self.height
    }
}

/// A rectangle in physical pixels of the virtual screen (may have a negative origin).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhysicalRect {
    /// Left edge; negative left of the primary monitor.
    pub x: i32,
    /// Top edge; negative above the primary monitor.
    pub y: i32,
    /// Width in physical pixels.
    pub width: u32,
    /// Height in physical pixels.
    pub height: u32,
}

impl PhysicalRect {
    /// True when the physical point lies inside.
    pub fn contains(&self, x: i32, y: i32) -> bool {
        x >= self.x
            && y >= self.y
            && (x as i64) < self.x as i64 + self.width as i64
            && (y as i64) < self.y as i64 + self.height as i64
    }

    /// The smallest rectangle holding both.
    pub fn union(&self, o: &PhysicalRect) -> PhysicalRect {
        let x0 = self.x.min(o.x);
        let y0 = self.y.min(o.y);
        let x1 = (self.x as i64 + self.width as i64).max(o.x as i64 + o.width as i64);
        let y1 = (self.y as i64 + self.height as i64).max(o.y as i64 + o.height as i64);
        PhysicalRect {
            x: x0,
            y: y0,
            width: (x1 - x0 as i64) as u32,
            height: (y1 - y0 as i64) as u32,
        }
    }
}

/// One monitor as the model sees it: its place on the canvas.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DisplayInfo {
    /// The monitor's id, as `display` arguments name it.
    pub id: String,
    /// The platform's output name (`HDMI-1`).
    pub name: String,
    /// Where the monitor is on the canvas.
    pub canvas: Rect,
    /// The primary monitor.
    pub primary: bool,
}

/// The whole observable surface: the canvas, the physical desktop it covers and the one
/// factor between them (`physical = physical_origin + canvas × scale`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Surface {
    /// Canvas width: the image a model receives.
    pub display_width_px: u32,
    /// Canvas height.
    pub display_height_px: u32,
    /// The physical desktop the canvas covers.
    pub physical: PhysicalRect,
    /// Physical pixels per canvas pixel.
    pub scale: f64,
    /// Each monitor's place on the canvas.
    pub displays: Vec<DisplayInfo>,
}
