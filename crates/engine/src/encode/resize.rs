//! Resizing a capture to the size a model takes, the top and bottom halves of the
//! result on two cores.

use std::sync::Mutex;

use cc_desktop::RgbImage;
use fast_image_resize::{self as fr, PixelType, ResizeAlg, ResizeOptions, Resizer, images::Image};

use super::split;

/// Resizes to `width`×`height` (a copy when the size already matches): bilinear
/// interpolation down to half size (four source pixels per output pixel, which keeps
/// one-pixel lines and text strokes), a bilinear convolution below that (every source
/// pixel counts, so thin lines do not vanish).
///
/// A large result is made in two halves of rows, each from the source rows it covers
/// (and their neighbours, as unsplit); the halves are the same pixels an unsplit resize
/// gives.
pub fn resize(img: &RgbImage, width: u32, height: u32) -> Result<RgbImage, String> {
    if img.width == width && img.height == height {
        return Ok(img.clone());
    }
    let plan = Resize::new(img, width, height)?;
    let (width, height) = (plan.width, plan.height);
    let row = width as usize * 3;
    let mut pixels = vec![0u8; row * height as usize];
    let cut = if pixels.len() >= split::MIN_SPLIT {
        height / 2
    } else {
        0
    };
    let (top, bottom) = pixels.split_at_mut(row * cut as usize);
    let (a, b) = split::both(
        pixels_len(width, height),
        || plan.rows(0, top),
        || plan.rows(cut, bottom),
    );
    a?;
    b?;
    Ok(RgbImage {
        width,
        height,
        pixels,
    })
}

fn pixels_len(width: u32, height: u32) -> usize {
    width as usize * height as usize * 3
}

/// Resizers not in use. A resizer keeps the buffer of its first pass (about 2 MB for
/// half of a 1080p capture), which a new one would allocate and zero again: about a
/// tenth of a resize's time.
static RESIZERS: Mutex<Vec<Resizer>> = Mutex::new(Vec::new());

/// Idle resizers kept: one per core that resizes a half at the same time.
const MAX_IDLE_RESIZERS: usize = 2;

/// A resize of one image to one size, made a band of rows at a time.
pub(super) struct Resize<'a> {
    img: &'a RgbImage,
    pub width: u32,
    pub height: u32,
    alg: ResizeAlg,
}

impl<'a> Resize<'a> {
    /// Checks the source and chooses the filter (see [`resize`]).
    pub fn new(img: &'a RgbImage, width: u32, height: u32) -> Result<Resize<'a>, String> {
        let (width, height) = (width.max(1), height.max(1));
        let expected = img.width as usize * img.height as usize * 3;
        if img.pixels.len() != expected || img.width == 0 || img.height == 0 {
            return Err(format!(
                "resize source: {} bytes for a {}x{} image",
                img.pixels.len(),
                img.width,
                img.height
            ));
        }
        let factor = (width as f64 / img.width as f64).min(height as f64 / img.height as f64);
        let alg = if factor >= 0.5 {
            ResizeAlg::Interpolation(fr::FilterType::Bilinear)
        } else {
            ResizeAlg::Convolution(fr::FilterType::Bilinear)
        };
        Ok(Resize {
            img,
            width,
            height,
            alg,
        })
    }

    /// Rows `y0..` of the result into `out` (as many rows as it holds): the source is
    /// cropped to the band those rows cover, which keeps every row's position, weights
    /// and neighbours as in the whole image.
    pub fn rows(&self, y0: u32, out: &mut [u8]) -> Result<(), String> {
        let (img, width, height) = (self.img, self.width, self.height);
        let n = (out.len() / (width as usize * 3)) as u32;
        if n == 0 {
            return Ok(());
        }
        let src = fr::images::ImageRef::new(img.width, img.height, &img.pixels, PixelType::U8x3)
            .map_err(|e| format!("resize source: {e}"))?;
        let mut dst = Image::from_slice_u8(width, n, out, PixelType::U8x3)
            .map_err(|e| format!("resize: {e}"))?;
        let scale = img.height as f64 / height as f64;
        let top = y0 as f64 * scale;
        // The last band ends exactly at the source's bottom (its product may round past it).
        let band = if y0 + n >= height {
            img.height as f64 - top
        } else {
            (n as f64 * scale).min(img.height as f64 - top)
        };
        let options =
            ResizeOptions::new()
                .resize_alg(self.alg)
                .crop(0.0, top, img.width as f64, band);
        let mut resizer = RESIZERS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop()
            .unwrap_or_default();
        let done = resizer
            .resize(&src, &mut dst, &options)
            .map_err(|e| format!("resize: {e}"));
        let mut idle = RESIZERS.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < MAX_IDLE_RESIZERS {
            idle.push(resizer);
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Text-like content: sharp edges, thin lines, gradients.
    fn screen(w: u32, h: u32) -> RgbImage {
        let mut img = RgbImage::new(w, h);
        for y in 0..h {
            for x in 0..w {
                let i = ((y * w + x) * 3) as usize;
                let line = x % 37 == 0 || y % 23 == 0;
                let v = if line {
                    0
                } else {
                    ((x * 7 + y * 3) % 256) as u8
                };
                img.pixels[i..i + 3].copy_from_slice(&[v, (y % 256) as u8, 255 - v]);
            }
        }
        img
    }

    /// The unsplit resize, as it was before halves.
    fn whole(img: &RgbImage, width: u32, height: u32, alg: ResizeAlg) -> Vec<u8> {
        let mut out = vec![0u8; pixels_len(width, height)];
        let plan = Resize::new(img, width, height).unwrap();
        assert_eq!(plan.alg, alg);
        plan.rows(0, &mut out).unwrap();
        out
    }

    #[test]
    fn halves_are_the_pixels_of_an_unsplit_resize() {
        let bilinear = ResizeAlg::Interpolation(fr::FilterType::Bilinear);
        let convolution = ResizeAlg::Convolution(fr::FilterType::Bilinear);
        for (sw, sh, w, h, alg) in [
            (1920, 1080, 1430, 804, bilinear),
            (1920, 1080, 1464, 823, bilinear),
            (2560, 1440, 1363, 767, bilinear),
            (1366, 768, 1366, 767, bilinear),
            (1001, 999, 777, 555, bilinear),
            (3840, 2160, 1429, 803, convolution),
        ] {
            let img = screen(sw, sh);
            let split = resize(&img, w, h).unwrap();
            assert_eq!((split.width, split.height), (w, h));
            assert!(
                split.pixels == whole(&img, w, h, alg),
                "{sw}x{sh} -> {w}x{h} differs from the unsplit resize"
            );
        }
    }

    #[test]
    fn odd_and_tiny_sizes() {
        let img = screen(101, 77);
        for (w, h) in [(1, 1), (3, 1), (1, 5), (51, 39), (100, 76)] {
            let out = resize(&img, w, h).unwrap();
            assert_eq!(
                (out.width, out.height, out.pixels.len()),
                (w, h, pixels_len(w, h))
            );
        }
        let one = screen(1, 1);
        assert_eq!(resize(&one, 1, 1).unwrap(), one);
        assert_eq!(resize(&one, 3, 2).unwrap().pixels.len(), 18);
    }

    #[test]
    fn a_source_of_the_wrong_length_is_refused() {
        let mut img = screen(10, 10);
        img.pixels.pop();
        assert!(resize(&img, 5, 5).unwrap_err().contains("10x10"));
    }
}
