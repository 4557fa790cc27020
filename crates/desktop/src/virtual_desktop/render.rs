//! The cached framebuffer: re-rendered only when the scene changed, copied on capture.
//!
//! The desktop background (per-display gradients, black gaps) is its own layer, rebuilt
//! only when the layout changes; a re-render copies it and paints the windows on top.

use cc_protocol::PhysicalRect;
use embedded_graphics::mono_font::iso_8859_1::FONT_10X20;

use super::canvas::{Area, Canvas, Rgb};
use super::paint;
use super::scene::Scene;
use crate::{DriverError, PhysicalDisplay, RgbImage};

/// Top and bottom colours of each display's background, by position in the layout.
const BACKDROPS: [(Rgb, Rgb); 3] = [
    ([0x3d, 0x6d, 0x8c], [0x22, 0x42, 0x5a]),
    ([0x4a, 0x72, 0x60], [0x29, 0x46, 0x39]),
    ([0x6a, 0x5d, 0x86], [0x3c, 0x33, 0x52]),
];

/// Pixels of the layout's bounding box, and the scene they show.
pub(super) struct Framebuffer {
    bbox: PhysicalRect,
    backdrop_for: Vec<PhysicalDisplay>,
    backdrop: Vec<u8>,
    pixels: Vec<u8>,
    shown: Option<Scene>,
}

fn frame_area(b: PhysicalRect) -> Area {
    Area::new(
        i64::from(b.x),
        i64::from(b.y),
        i64::from(b.width),
        i64::from(b.height),
    )
}

fn lerp(a: u8, b: u8, num: i64, den: i64) -> u8 {
    let (a, b) = (i64::from(a), i64::from(b));
    (a + (b - a) * num / den.max(1)).clamp(0, 255) as u8
}

impl Framebuffer {
    /// An empty framebuffer; the first capture renders.
    pub(super) fn new() -> Framebuffer {
        Framebuffer {
            bbox: PhysicalRect {
                x: 0,
                y: 0,
                width: 0,
                height: 0,
            },
            backdrop_for: Vec::new(),
            backdrop: Vec::new(),
            pixels: Vec::new(),
            shown: None,
        }
    }

    /// Brings the pixels up to date with the scene (a no-op when nothing changed).
    pub(super) fn update(&mut self, scene: &Scene) {
        if self.shown.as_ref() == Some(scene) {
            return;
        }
        if self.backdrop_for != scene.displays || self.shown.is_none() {
            self.bbox = scene.bbox();
            self.build_backdrop(&scene.displays);
            self.backdrop_for = scene.displays.clone();
        }
        self.pixels.clear();
        self.pixels.extend_from_slice(&self.backdrop);
        let mut canvas = Canvas::new(&mut self.pixels, frame_area(self.bbox));
        paint::paint_scene(&mut canvas, scene);
        self.shown = Some(scene.clone());
    }

    fn build_backdrop(&mut self, displays: &[PhysicalDisplay]) {
        let len = self.bbox.width as usize * self.bbox.height as usize * 3;
        self.backdrop.clear();
        self.backdrop.resize(len, 0);
        let mut canvas = Canvas::new(&mut self.backdrop, frame_area(self.bbox));
        for (i, d) in displays.iter().enumerate() {
            let (top, bottom) = BACKDROPS[i % BACKDROPS.len()];
            let r = frame_area(d.rect);
            let h = r.y1 - r.y0;
            for row in 0..h {
                let c = [
                    lerp(top[0], bottom[0], row, h),
                    lerp(top[1], bottom[1], row, h),
                    lerp(top[2], bottom[2], row, h),
                ];
                canvas.fill(Area::new(r.x0, r.y0 + row, r.x1 - r.x0, 1), c);
            }
            let mut dc = canvas.clipped(r);
            dc.text(
                r.x0 + 16,
                r.y0 + 12,
                &d.name,
                &FONT_10X20,
                [0x9f, 0xb8, 0xc8],
            );
        }
    }

    /// Copies a physical rectangle, clamped to the bounding box.
    pub(super) fn capture(&self, rect: PhysicalRect) -> Result<RgbImage, DriverError> {
        let want = frame_area(rect);
        let have = frame_area(self.bbox);
        let (x0, y0) = (want.x0.max(have.x0), want.y0.max(have.y0));
        let (x1, y1) = (want.x1.min(have.x1), want.y1.min(have.y1));
        if x1 <= x0 || y1 <= y0 {
            return Err(DriverError::Failed(format!(
                "capture rectangle {}x{} at ({}, {}) is outside the desktop",
                rect.width, rect.height, rect.x, rect.y
            )));
        }
        let (w, h) = ((x1 - x0) as usize, (y1 - y0) as usize);
        let stride = self.bbox.width as usize * 3;
        let mut out = Vec::with_capacity(w * h * 3);
        if w * 3 == stride {
            let start = (y0 - have.y0) as usize * stride;
            out.extend_from_slice(self.pixels.get(start..start + h * stride).unwrap_or(&[]));
        } else {
            for y in y0..y1 {
                let start = (y - have.y0) as usize * stride + (x0 - have.x0) as usize * 3;
                out.extend_from_slice(self.pixels.get(start..start + w * 3).unwrap_or(&[]));
            }
        }
        out.resize(w * h * 3, 0);
        Ok(RgbImage {
            width: w as u32,
            height: h as u32,
            pixels: out,
        })
    }
}

#[cfg(test)]
mod tests {

    use cc_protocol::Role;

    use super::super::testkit::*;
    use crate::{Button, Driver};

    /// The same script on any desktop.
    fn script(d: &mut super::super::VirtualDesktop) {
        click_on(d, Role::Edit, "Name");
        type_str(d, "Zoë 日本");
        click_on(d, Role::Checkbox, "Remember me");
        click_on(d, Role::Listitem, "Item 5");
        click_with(d, Button::Right, 50, 50);
    }

    #[test]
    fn capture_is_sized_clamped_and_deterministic() {
        let mut a = desk();
        let mut b = desk();
        script(&mut a);
        script(&mut b);
        let fa = a.capture(rect(0, 0, 1920, 1080)).unwrap();
        assert_eq!(
            (fa.width, fa.height, fa.pixels.len()),
            (1920, 1080, 1920 * 1080 * 3)
        );
        assert_eq!(fa, b.capture(rect(0, 0, 1920, 1080)).unwrap());
        let part = a.capture(rect(100, 200, 30, 40)).unwrap();
        assert_eq!((part.width, part.height), (30, 40));
        assert_eq!(part.get(0, 0), fa.get(100, 200));
        assert_eq!(part.get(29, 39), fa.get(129, 239));
        let clamped = a.capture(rect(1900, 1070, 100, 100)).unwrap();
        assert_eq!((clamped.width, clamped.height), (20, 10));
        assert!(a.capture(rect(1920, 0, 10, 10)).is_err());
        assert!(a.capture(rect(-10, -10, 10, 10)).is_err());
        assert!(a.capture(rect(0, 0, 0, 0)).is_err());
        // Pointer motion alone changes no pixel (no cursor is drawn).
        a.pointer_move(700, 700).unwrap();
        assert_eq!(a.capture(rect(0, 0, 1920, 1080)).unwrap(), fa);
    }
}
