//! Image sizes that models accept without resampling them again: the largest size of
//! the same aspect ratio within a long-edge limit and a pixel budget.

/// Limits an image must fit in. A zero field is no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fit {
    /// The longest side, in pixels (Anthropic: 1568).
    pub max_edge: u32,
    /// Total pixels (Anthropic: about 1.15 megapixels).
    pub max_pixels: u64,
}

impl Fit {
    /// Anthropic's documented limits for image input: at most 1568 px on the long edge
    /// and about 1.15 megapixels; larger images are scaled down by the API, so sending
    /// them costs bandwidth and time and moves the model's coordinates.
    pub const MODEL: Fit = Fit {
        max_edge: 1568,
        max_pixels: 1_150_000,
    };

    /// No limit.
    pub const NONE: Fit = Fit {
        max_edge: 0,
        max_pixels: 0,
    };

    /// The factor (≤ 1) that brings `width`×`height` within the limits.
    pub fn factor(&self, width: u32, height: u32) -> f64 {
        let (w, h) = (width.max(1) as f64, height.max(1) as f64);
        let mut f: f64 = 1.0;
        if self.max_edge > 0 {
            f = f.min(self.max_edge as f64 / w.max(h));
        }
        if self.max_pixels > 0 {
            f = f.min((self.max_pixels as f64 / (w * h)).sqrt());
        }
        f.min(1.0)
    }

    /// `width`×`height` scaled by `scale` (≤ 1) and then brought within the limits,
    /// aspect ratio kept, each side at least 1 and rounded down so the result never
    /// exceeds a limit.
    pub fn size(&self, width: u32, height: u32, scale: f64) -> (u32, u32) {
        let s = scale.clamp(f64::MIN_POSITIVE, 1.0);
        let (sw, sh) = (width as f64 * s, height as f64 * s);
        let f = self.factor(sw.round().max(1.0) as u32, sh.round().max(1.0) as u32);
        let (mut w, mut h) = (
            ((sw * f).round() as u32).max(1),
            ((sh * f).round() as u32).max(1),
        );
        let over = |w: u32, h: u32| {
            (self.max_edge > 0 && w.max(h) > self.max_edge)
                || (self.max_pixels > 0 && w as u64 * h as u64 > self.max_pixels)
        };
        if over(w, h) {
            w = ((sw * f).floor() as u32).max(1);
            h = ((sh * f).floor() as u32).max(1);
        }
        (w, h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_1080p_screen_fits_anthropics_limits() {
        let (w, h) = Fit::MODEL.size(1920, 1080, 1.0);
        assert!(w <= 1568 && h <= 1568);
        assert!(w as u64 * h as u64 <= 1_150_000, "{w}x{h}");
        assert_eq!((w, h), (1430, 804));
    }

    #[test]
    fn the_long_edge_binds_on_wide_screens() {
        let (w, h) = Fit::MODEL.size(3840, 600, 1.0);
        assert_eq!((w, h), (1568, 245));
        let (w, h) = Fit::MODEL.size(600, 3840, 1.0);
        assert_eq!((w, h), (245, 1568));
    }

    #[test]
    fn small_images_and_no_limit_keep_their_size() {
        assert_eq!(Fit::MODEL.size(640, 360, 1.0), (640, 360));
        assert_eq!(Fit::NONE.size(3840, 2160, 1.0), (3840, 2160));
        assert_eq!(Fit::NONE.size(1920, 1080, 0.5), (960, 540));
        assert_eq!(Fit::MODEL.size(1920, 1080, 0.25), (480, 270));
        assert_eq!(Fit::MODEL.size(1, 1, 0.1), (1, 1));
    }

    #[test]
    fn the_peers_budget_gives_their_size() {
        // computer-use-mcp's 1.15 × 2^20 pixels on a 1920×1080 screen.
        let peer = Fit {
            max_edge: 1568,
            max_pixels: 1_205_862,
        };
        assert_eq!(peer.size(1920, 1080, 1.0), (1464, 823));
    }
}
