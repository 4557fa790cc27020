//! The coordinate contract's shapes (PROTOCOL §4.1).

use serde::{Deserialize, Serialize};

/// A point on the canvas (integers: the model's pixel grid).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Point {
    pub x: i32,
    pub y: i32,
}

/// A rectangle on the canvas.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rect {
    pub x: i32,
    pub y: i32,
    pub width: i32,
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
    pub x: i32,
    pub y: i32,
    pub width: u32,
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
    pub id: String,
    pub name: String,
    pub canvas: Rect,
    pub primary: bool,
}

/// The whole observable surface: the canvas, the physical desktop it covers and the one
/// factor between them (`physical = physical_origin + canvas × scale`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Surface {
    pub display_width_px: u32,
    pub display_height_px: u32,
    pub physical: PhysicalRect,
    pub scale: f64,
    pub displays: Vec<DisplayInfo>,
}
