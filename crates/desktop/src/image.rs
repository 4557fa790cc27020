//! The pixel buffer a capture returns.

/// Packed 8-bit RGB, row-major, no padding: what every encoder downstream takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RgbImage {
    /// Columns.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// `width * height * 3` bytes.
    pub pixels: Vec<u8>,
}

impl RgbImage {
    /// A black image.
    pub fn new(width: u32, height: u32) -> Self {
        RgbImage {
            width,
            height,
            pixels: vec![0; width as usize * height as usize * 3],
        }
    }

    /// The pixel at (x, y), or `None` outside.
    pub fn get(&self, x: u32, y: u32) -> Option<[u8; 3]> {
        if x >= self.width || y >= self.height {
            return None;
        }
        let i = (y as usize * self.width as usize + x as usize) * 3;
        Some([self.pixels[i], self.pixels[i + 1], self.pixels[i + 2]])
    }
}
