//! A clipped drawing surface over the RGB framebuffer, in physical coordinates.
//!
//! It implements embedded-graphics' `DrawTarget` (for text, circles and lines) and has
//! fast solid fills of its own, because rectangles are most of what the desktop draws.

use std::convert::Infallible;

use embedded_graphics::mono_font::{MonoFont, MonoTextStyle};
use embedded_graphics::pixelcolor::Rgb888;
use embedded_graphics::prelude::*;
use embedded_graphics::primitives::Rectangle;
use embedded_graphics::text::{Baseline, Text};

/// A colour as packed RGB bytes.
pub(super) type Rgb = [u8; 3];

/// A half-open physical rectangle in 64-bit coordinates, so nothing overflows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Area {
    pub x0: i64,
    pub y0: i64,
    pub x1: i64,
    pub y1: i64,
}

impl Area {
    /// From origin and size.
    pub(super) fn new(x: i64, y: i64, w: i64, h: i64) -> Area {
        Area {
            x0: x,
            y0: y,
            x1: x + w.max(0),
            y1: y + h.max(0),
        }
    }

    fn intersect(self, o: Area) -> Area {
        Area {
            x0: self.x0.max(o.x0),
            y0: self.y0.max(o.y0),
            x1: self.x1.min(o.x1).max(self.x0.max(o.x0)),
            y1: self.y1.min(o.y1).max(self.y0.max(o.y0)),
        }
    }

    fn is_empty(self) -> bool {
        self.x1 <= self.x0 || self.y1 <= self.y0
    }

    /// Shrunk by `d` on every side.
    pub(super) fn inset(self, d: i64) -> Area {
        Area::new(
            self.x0 + d,
            self.y0 + d,
            self.x1 - self.x0 - 2 * d,
            self.y1 - self.y0 - 2 * d,
        )
    }
}

/// The framebuffer seen through a clip rectangle.
pub(super) struct Canvas<'a> {
    buf: &'a mut [u8],
    /// The framebuffer's extent in physical coordinates.
    frame: Area,
    /// Where drawing is allowed (always inside `frame`).
    clip: Area,
}

impl<'a> Canvas<'a> {
    /// A canvas over a whole framebuffer whose top-left pixel is at `frame.(x0, y0)`.
    pub(super) fn new(buf: &'a mut [u8], frame: Area) -> Canvas<'a> {
        Canvas {
            buf,
            frame,
            clip: frame,
        }
    }

    /// A canvas further clipped to `area`.
    pub(super) fn clipped(&mut self, area: Area) -> Canvas<'_> {
        Canvas {
            buf: self.buf,
            frame: self.frame,
            clip: self.clip.intersect(area),
        }
    }

    /// True when nothing can be drawn.
    pub(super) fn is_empty(&self) -> bool {
        self.clip.is_empty()
    }

    /// Fills a rectangle (clipped) with one colour.
    pub(super) fn fill(&mut self, area: Area, c: Rgb) {
        let a = self.clip.intersect(area);
        if a.is_empty() {
            return;
        }
        let stride = (self.frame.x1 - self.frame.x0) as usize * 3;
        let left = (a.x0 - self.frame.x0) as usize * 3;
        let right = (a.x1 - self.frame.x0) as usize * 3;
        // One row of the colour, then a plain copy per row.
        let pattern: Vec<u8> = c.iter().copied().cycle().take(right - left).collect();
        for y in a.y0..a.y1 {
            let row = (y - self.frame.y0) as usize * stride;
            if let Some(span) = self.buf.get_mut(row + left..row + right) {
                span.copy_from_slice(&pattern);
            }
        }
    }

    /// Draws a rectangle's outline, `t` pixels thick, inside the rectangle.
    pub(super) fn frame_rect(&mut self, a: Area, t: i64, c: Rgb) {
        let (w, h) = (a.x1 - a.x0, a.y1 - a.y0);
        self.fill(Area::new(a.x0, a.y0, w, t), c);
        self.fill(Area::new(a.x0, a.y1 - t, w, t), c);
        self.fill(Area::new(a.x0, a.y0, t, h), c);
        self.fill(Area::new(a.x1 - t, a.y0, t, h), c);
    }

    /// Draws text with its top-left at (x, y). Characters the font lacks become hollow
    /// boxes, so every character still takes exactly one cell.
    pub(super) fn text(&mut self, x: i64, y: i64, s: &str, font: &MonoFont<'_>, c: Rgb) {
        let cw = i64::from(font.character_size.width);
        let ch = i64::from(font.character_size.height);
        let style = MonoTextStyle::new(font, rgb(c));
        let mut cx = x;
        for glyph in s.chars() {
            if cx >= self.clip.x1 {
                break;
            }
            if cx + cw > self.clip.x0 && y + ch > self.clip.y0 && y < self.clip.y1 {
                if in_font(glyph) {
                    if let (Ok(px), Ok(py)) = (i32::try_from(cx), i32::try_from(y)) {
                        let mut b = [0u8; 4];
                        let t = Text::with_baseline(
                            glyph.encode_utf8(&mut b),
                            Point::new(px, py),
                            style,
                            Baseline::Top,
                        );
                        let _ = t.draw(self);
                    }
                } else {
                    self.frame_rect(Area::new(cx + 1, y + 2, cw - 2, ch - 4), 1, c);
                }
            }
            cx += cw;
        }
    }
}

/// The printable characters of ISO 8859-1, which the fonts cover.
fn in_font(c: char) -> bool {
    matches!(u32::from(c), 0x20..=0x7e | 0xa0..=0xff)
}

/// Converts packed bytes into an embedded-graphics colour.
pub(super) fn rgb(c: Rgb) -> Rgb888 {
    Rgb888::new(c[0], c[1], c[2])
}

impl Dimensions for Canvas<'_> {
    fn bounding_box(&self) -> Rectangle {
        let clamp = |v: i64| v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
        let (x0, y0) = (clamp(self.clip.x0), clamp(self.clip.y0));
        let w = (self.clip.x1 - self.clip.x0).clamp(0, i64::from(u32::MAX)) as u32;
        let h = (self.clip.y1 - self.clip.y0).clamp(0, i64::from(u32::MAX)) as u32;
        Rectangle::new(Point::new(x0, y0), Size::new(w, h))
    }
}

impl DrawTarget for Canvas<'_> {
    type Color = Rgb888;
    type Error = Infallible;

    fn draw_iter<I>(&mut self, pixels: I) -> Result<(), Infallible>
    where
        I: IntoIterator<Item = Pixel<Rgb888>>,
    {
        let stride = (self.frame.x1 - self.frame.x0) as usize * 3;
        for Pixel(p, c) in pixels {
            let (x, y) = (i64::from(p.x), i64::from(p.y));
            if x < self.clip.x0 || x >= self.clip.x1 || y < self.clip.y0 || y >= self.clip.y1 {
                continue;
            }
            let i = (y - self.frame.y0) as usize * stride + (x - self.frame.x0) as usize * 3;
            if let Some(px) = self.buf.get_mut(i..i + 3) {
                px.copy_from_slice(&[c.r(), c.g(), c.b()]);
            }
        }
        Ok(())
    }

    fn fill_solid(&mut self, area: &Rectangle, color: Rgb888) -> Result<(), Infallible> {
        let a = Area::new(
            i64::from(area.top_left.x),
            i64::from(area.top_left.y),
            i64::from(area.size.width),
            i64::from(area.size.height),
        );
        self.fill(a, [color.r(), color.g(), color.b()]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use embedded_graphics::mono_font::iso_8859_1::FONT_9X15;

    #[test]
    fn fills_respect_the_clip_and_the_frame() {
        let frame = Area::new(-10, -10, 20, 20);
        let mut buf = vec![0u8; 20 * 20 * 3];
        let mut c = Canvas::new(&mut buf, frame);
        c.fill(
            Area::new(i64::from(i32::MIN), -5, i64::from(u32::MAX) * 4, 5),
            [1, 2, 3],
        );
        let mut inner = c.clipped(Area::new(0, 0, 3, 3));
        inner.fill(Area::new(-100, -100, 1000, 1000), [9, 9, 9]);
        assert_eq!(&buf[(5 * 20) * 3..(5 * 20) * 3 + 3], &[1, 2, 3]);
        assert_eq!(&buf[(10 * 20 + 10) * 3..(10 * 20 + 10) * 3 + 3], &[9, 9, 9]);
        assert_eq!(&buf[(13 * 20 + 13) * 3..(13 * 20 + 13) * 3 + 3], &[0, 0, 0]);
    }

    #[test]
    fn text_draws_glyphs_and_boxes_without_panicking() {
        let frame = Area::new(0, 0, 60, 20);
        let mut a = vec![0u8; 60 * 20 * 3];
        let mut b = vec![0u8; 60 * 20 * 3];
        Canvas::new(&mut a, frame).text(0, 0, "é日", &FONT_9X15, [255, 255, 255]);
        Canvas::new(&mut b, frame).text(0, 0, "e日", &FONT_9X15, [255, 255, 255]);
        assert_ne!(a, b, "the accent is drawn");
        assert!(a.iter().any(|&v| v != 0));
        let mut c = vec![0u8; 60 * 20 * 3];
        Canvas::new(&mut c, frame).text(i64::from(i32::MAX) + 5, -3, "x", &FONT_9X15, [1, 1, 1]);
        Canvas::new(&mut c, frame).text(-3, i64::from(i32::MIN) - 9, "x", &FONT_9X15, [1, 1, 1]);
        assert!(c.iter().all(|&v| v == 0));
    }
}
