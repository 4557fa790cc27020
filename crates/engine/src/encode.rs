//! Image scaling and encoding for captures: fast PNG, SIMD JPEG, lossless WebP.

use base64::Engine as _;
use cc_desktop::RgbImage;
use fast_image_resize::{self as fr, PixelType, ResizeAlg, ResizeOptions, Resizer, images::Image};

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Png,
    Jpeg,
    Webp,
}

impl Format {
    /// Parses the wire name.
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "png" => Some(Format::Png),
            "jpeg" | "jpg" => Some(Format::Jpeg),
            "webp" => Some(Format::Webp),
            _ => None,
        }
    }

    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            Format::Png => "png",
            Format::Jpeg => "jpeg",
            Format::Webp => "webp",
        }
    }

    /// The MIME type.
    pub fn mime(self) -> &'static str {
        match self {
            Format::Png => "image/png",
            Format::Jpeg => "image/jpeg",
            Format::Webp => "image/webp",
        }
    }
}

/// Pixels ready to encode: RGB, or one luma byte per pixel (borrowed: encoding never
/// needs its own copy of a frame).
pub struct Pixels<'a> {
    pub width: u32,
    pub height: u32,
    pub gray: bool,
    pub data: &'a [u8],
}

/// Resizes to `width`×`height` (a copy when the size already matches).
pub fn resize(img: RgbImage, width: u32, height: u32) -> Result<RgbImage, String> {
    if img.width == width && img.height == height {
        return Ok(img);
    }
    let src = Image::from_vec_u8(img.width, img.height, img.pixels, PixelType::U8x3)
        .map_err(|e| format!("resize source: {e}"))?;
    let mut dst = Image::new(width.max(1), height.max(1), PixelType::U8x3);
    let alg = ResizeAlg::Convolution(fr::FilterType::Bilinear);
    Resizer::new()
        .resize(&src, &mut dst, &ResizeOptions::new().resize_alg(alg))
        .map_err(|e| format!("resize: {e}"))?;
    Ok(RgbImage {
        width: dst.width(),
        height: dst.height(),
        pixels: dst.into_vec(),
    })
}

/// Converts to luma (ITU-R BT.601 weights, integer math).
pub fn to_gray(rgb: &[u8]) -> Vec<u8> {
    rgb.chunks_exact(3)
        .map(|p| ((p[0] as u32 * 299 + p[1] as u32 * 587 + p[2] as u32 * 114 + 500) / 1000) as u8)
        .collect()
}

/// Encodes pixels.
pub fn encode(px: &Pixels<'_>, format: Format, quality: u8) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(px.data.len() / 4);
    match format {
        Format::Png => {
            let mut enc = png::Encoder::new(&mut out, px.width, px.height);
            enc.set_color(if px.gray {
                png::ColorType::Grayscale
            } else {
                png::ColorType::Rgb
            });
            enc.set_depth(png::BitDepth::Eight);
            enc.set_compression(png::Compression::Fast);
            // `Fast` tries all five row filters per row; `Sub` alone encodes a 1080p
            // screen about 3× faster for a file about 2× larger (still ~1/8 of raw).
            enc.set_filter(png::Filter::Sub);
            let mut w = enc.write_header().map_err(|e| format!("png: {e}"))?;
            w.write_image_data(px.data)
                .map_err(|e| format!("png: {e}"))?;
            w.finish().map_err(|e| format!("png: {e}"))?;
        }
        Format::Jpeg => {
            if px.width > u16::MAX as u32 || px.height > u16::MAX as u32 {
                return Err("jpeg: image larger than 65535 pixels on a side".into());
            }
            let enc = jpeg_encoder::Encoder::new(&mut out, quality.clamp(1, 100));
            let ct = if px.gray {
                jpeg_encoder::ColorType::Luma
            } else {
                jpeg_encoder::ColorType::Rgb
            };
            enc.encode(px.data, px.width as u16, px.height as u16, ct)
                .map_err(|e| format!("jpeg: {e}"))?;
        }
        Format::Webp => {
            let ct = if px.gray {
                image_webp::ColorType::L8
            } else {
                image_webp::ColorType::Rgb8
            };
            image_webp::WebPEncoder::new(&mut out)
                .encode(px.data, px.width, px.height, ct)
                .map_err(|e| format!("webp: {e}"))?;
        }
    }
    Ok(out)
}

/// `data:<mime>;base64,<…>`.
pub fn data_url(format: Format, bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 4 / 3 + 32);
    s.push_str("data:");
    s.push_str(format.mime());
    s.push_str(";base64,");
    base64::engine::general_purpose::STANDARD.encode_string(bytes, &mut s);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checker(w: u32, h: u32) -> RgbImage {
        let mut img = RgbImage::new(w, h);
        for y in 0..h {
            for x in 0..w {
                let i = ((y * w + x) * 3) as usize;
                let v = if (x / 8 + y / 8) % 2 == 0 { 255 } else { 0 };
                img.pixels[i..i + 3].copy_from_slice(&[v, 128, 255 - v]);
            }
        }
        img
    }

    #[test]
    fn png_decodes_to_same_pixels() {
        let img = checker(64, 48);
        let px = Pixels {
            width: 64,
            height: 48,
            gray: false,
            data: &img.pixels,
        };
        let bytes = encode(&px, Format::Png, 85).unwrap();
        let dec = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut r = dec.read_info().unwrap();
        let mut buf = vec![0; r.output_buffer_size().unwrap()];
        let info = r.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (64, 48));
        assert_eq!(&buf[..info.buffer_size()], &img.pixels[..]);
    }

    #[test]
    fn jpeg_and_webp_have_magic() {
        let img = checker(40, 30);
        let px = Pixels {
            width: 40,
            height: 30,
            gray: false,
            data: &img.pixels,
        };
        assert_eq!(&encode(&px, Format::Jpeg, 80).unwrap()[..2], &[0xFF, 0xD8]);
        assert_eq!(&encode(&px, Format::Webp, 80).unwrap()[..4], b"RIFF");
    }

    #[test]
    fn resize_changes_size() {
        let out = resize(checker(100, 50), 50, 25).unwrap();
        assert_eq!(
            (out.width, out.height, out.pixels.len()),
            (50, 25, 50 * 25 * 3)
        );
    }
}
