//! The screenshot space a vendor's model is shown, and how its points map onto the
//! canvas. Each vocabulary fixes one [`Display`] per session (from the caller's first
//! call, or derived from the canvas then); later calls are read in that space, and a
//! screen whose canvas changed since is refused instead of silently remapped.

use serde::Serialize;

use crate::encode::Fit;

/// The demo's scaling targets (computer-use-demo `MAX_SCALING_TARGETS`), in its order.
const ANTHROPIC_TARGETS: [(u32, u32); 3] = [(1024, 768), (1280, 800), (1366, 768)];
/// Anthropic's documented image budget for the dated tool versions: long edge and area.
const ANTHROPIC_LONG_EDGE: f64 = Fit::MODEL.max_edge as f64;
const ANTHROPIC_AREA: f64 = Fit::MODEL.max_pixels as f64;
/// Gemini's normalized grid: 0–999 on both axes.
pub(crate) const GEMINI_GRID: f64 = 1000.0;

/// A model's screenshot space over the canvas it was fixed against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct Display {
    /// The screenshot's size: the space of every coordinate the model sends.
    pub width: u32,
    pub height: u32,
    /// The canvas it was fixed against (PROTOCOL §4.1).
    pub canvas_width: u32,
    pub canvas_height: u32,
}

/// What is wrong with a point or a declared size, in words for the model's author.
pub(crate) type Problem = String;

impl Display {
    /// A display of `width`×`height` over a canvas. The screenshot is the canvas scaled
    /// uniformly (screen.capture's `scale`), so the declared size must keep the canvas's
    /// aspect (one pixel of rounding allowed) and may not exceed it.
    pub fn declared(width: u32, height: u32, canvas: (u32, u32)) -> Result<Display, Problem> {
        let (cw, ch) = canvas;
        let shown = uniform_height(width, canvas);
        if width == 0 || height == 0 || width > cw || f64::from(width) < 0.1 * f64::from(cw) {
            return Err(format!(
                "a display of {width}x{height} does not fit the {cw}x{ch} canvas \
                 (its width must be between 10% and 100% of the canvas's)"
            ));
        }
        if height.abs_diff(shown) > 1 {
            return Err(format!(
                "a display of {width}x{height} does not keep the {cw}x{ch} canvas's aspect \
                 ({width}x{shown} would)"
            ));
        }
        Ok(Display {
            width,
            height: shown,
            canvas_width: cw,
            canvas_height: ch,
        })
    }

    /// The whole canvas, pixel for pixel.
    pub fn canvas(canvas: (u32, u32)) -> Display {
        Display {
            width: canvas.0,
            height: canvas.1,
            canvas_width: canvas.0,
            canvas_height: canvas.1,
        }
    }

    /// What Anthropic's reference does for a screen of this size: the first of XGA,
    /// WXGA, FWXGA whose aspect is within 0.02 of the screen's and which is narrower
    /// than it. Where none fits (the demo would then send the full screen), the
    /// documented budget instead: scale = min(1, 1568/long edge, √(1.15 MP/area)).
    pub fn anthropic(canvas: (u32, u32)) -> Display {
        let (cw, ch) = canvas;
        let ratio = f64::from(cw) / f64::from(ch.max(1));
        let target = ANTHROPIC_TARGETS
            .iter()
            .find(|(tw, th)| (f64::from(*tw) / f64::from(*th) - ratio).abs() < 0.02 && *tw < cw);
        let width = match target {
            Some((tw, _)) => *tw,
            None => {
                let (w, h) = (f64::from(cw), f64::from(ch));
                let scale = (ANTHROPIC_LONG_EDGE / w.max(h))
                    .min((ANTHROPIC_AREA / (w * h)).sqrt())
                    .min(1.0);
                ((w * scale).floor() as u32).max(1)
            }
        };
        Display {
            width,
            height: uniform_height(width, canvas),
            canvas_width: cw,
            canvas_height: ch,
        }
    }

    /// Image pixels per canvas unit (`screen.capture`'s `scale`).
    pub fn scale(&self) -> f64 {
        f64::from(self.width) / f64::from(self.canvas_width.max(1))
    }

    /// A screenshot point → the canvas, per axis and rounded as Anthropic's demo does
    /// (`round(x / (target/screen))`). Points outside the screenshot are refused.
    pub fn point_to_canvas(self, x: f64, y: f64) -> Result<(i64, i64), Problem> {
        if !(x.is_finite() && y.is_finite())
            || x < 0.0
            || y < 0.0
            || x >= f64::from(self.width)
            || y >= f64::from(self.height)
        {
            return Err(format!(
                "({x}, {y}) lies outside the {}x{} screenshot",
                self.width, self.height
            ));
        }
        let sx = f64::from(self.canvas_width) / f64::from(self.width);
        let sy = f64::from(self.canvas_height) / f64::from(self.height);
        let cx = ((x * sx).round() as i64).min(i64::from(self.canvas_width) - 1);
        let cy = ((y * sy).round() as i64).min(i64::from(self.canvas_height) - 1);
        Ok((cx, cy))
    }

    /// A canvas point → the screenshot (for `cursor_position`).
    pub fn point_from_canvas(self, x: f64, y: f64) -> (i64, i64) {
        let sx = f64::from(self.width) / f64::from(self.canvas_width.max(1));
        let sy = f64::from(self.height) / f64::from(self.canvas_height.max(1));
        ((x * sx).round() as i64, (y * sy).round() as i64)
    }

    /// The same canvas as when it was fixed, or what changed.
    pub fn still_fits(&self, canvas: (u32, u32)) -> Result<(), Problem> {
        if (self.canvas_width, self.canvas_height) == canvas {
            return Ok(());
        }
        Err(format!(
            "the screen changed since this session fixed its {}x{} display over a {}x{} \
             canvas (now {}x{}); its coordinates no longer mean the same place, so start a \
             new session",
            self.width, self.height, self.canvas_width, self.canvas_height, canvas.0, canvas.1
        ))
    }
}

/// The height of a `width`-wide uniform scaling of the canvas, as screen.capture
/// rounds it.
fn uniform_height(width: u32, canvas: (u32, u32)) -> u32 {
    let scale = f64::from(width) / f64::from(canvas.0.max(1));
    ((f64::from(canvas.1) * scale).round() as u32).max(1)
}

/// A Gemini grid value (0–999) → canvas units along an axis of `size`, as Google's
/// reference denormalizes: `int(v / 1000 * size)`.
pub(crate) fn grid_to_canvas(v: f64, size: u32) -> Result<i64, Problem> {
    if !v.is_finite() || !(0.0..GEMINI_GRID).contains(&v) {
        return Err(format!("{v} is not on the 0-999 grid"));
    }
    Ok((v / GEMINI_GRID * f64::from(size)) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anthropic_follows_the_demo_targets_then_the_documented_budget() {
        // The demo's own examples.
        assert_eq!(
            (
                Display::anthropic((1920, 1080)).width,
                Display::anthropic((1920, 1080)).height
            ),
            (1366, 768)
        );
        let d = Display::anthropic((1920, 1200));
        assert_eq!((d.width, d.height), (1280, 800));
        let d = Display::anthropic((1600, 1200));
        assert_eq!((d.width, d.height), (1024, 768));
        // No target fits a 21:9 canvas: the documented budget (long edge ≤ 1568,
        // area ≤ 1.15 MP).
        let d = Display::anthropic((1920, 823));
        assert!(d.width <= 1568 && f64::from(d.width * d.height) <= 1_150_000.0 * 1.01);
        // A canvas already smaller than every target is sent as is.
        let d = Display::anthropic((1024, 768));
        assert_eq!((d.width, d.height), (1024, 768));
    }

    #[test]
    fn points_scale_back_to_the_canvas_per_axis_and_out_of_range_is_refused() {
        let d = Display::anthropic((1920, 1080));
        assert_eq!(d.point_to_canvas(0.0, 0.0), Ok((0, 0)));
        assert_eq!(d.point_to_canvas(683.0, 384.0), Ok((960, 540)));
        assert_eq!(d.point_to_canvas(1365.0, 767.0), Ok((1919, 1079)));
        assert!(d.point_to_canvas(1366.0, 10.0).is_err());
        assert!(d.point_to_canvas(-1.0, 10.0).is_err());
        assert!(d.point_to_canvas(f64::NAN, 10.0).is_err());
        assert_eq!(d.point_from_canvas(960.0, 540.0), (683, 384));
    }

    #[test]
    fn a_declared_display_keeps_the_canvas_aspect_and_stays_inside_it() {
        assert!(Display::declared(1366, 768, (1920, 1080)).is_ok());
        assert!(Display::declared(1024, 768, (1920, 1080)).is_err());
        assert!(Display::declared(3840, 2160, (1920, 1080)).is_err());
        assert!(Display::declared(100, 56, (1920, 1080)).is_err());
        let d = Display::declared(1920, 1080, (1920, 1080)).unwrap();
        assert_eq!(d, Display::canvas((1920, 1080)));
        assert!(d.still_fits((1920, 1080)).is_ok());
        assert!(d.still_fits((1920, 1200)).is_err());
    }

    #[test]
    fn the_gemini_grid_denormalizes_like_the_reference() {
        assert_eq!(grid_to_canvas(0.0, 1920), Ok(0));
        assert_eq!(grid_to_canvas(500.0, 1920), Ok(960));
        assert_eq!(grid_to_canvas(999.0, 1080), Ok(1078));
        assert!(grid_to_canvas(1000.0, 1080).is_err());
        assert!(grid_to_canvas(-1.0, 1080).is_err());
    }
}
