//! Image scaling and encoding for captures: the size a model takes ([`Fit`]), and the
//! format that costs least for the content — a PNG with an exact or quantized palette
//! for screen content, JPEG for photographic content — or the one asked for.

mod fit;
mod palette;
mod pipeline;
mod resize;
mod split;
mod worker;
mod zlib;

use base64::Engine as _;

pub use fit::Fit;
pub use palette::{Indexed, exact, quantize};
pub use pipeline::encode_resized;
pub use resize::resize;

/// An output format. `Auto` is a choice the encoder makes; what it chose is in
/// [`Encoded::format`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The cheapest for the content: a palette PNG for screen content (exact when the
    /// frame has at most 256 colours, quantized otherwise), JPEG when a palette would
    /// lose too much (photographs, video).
    Auto,
    /// Lossless: a palette PNG when the frame has at most 256 colours, else RGB.
    Png,
    /// Lossy, for photographic content.
    Jpeg,
    /// Lossless WebP.
    Webp,
}

impl Format {
    /// Parses the wire name.
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "auto" => Some(Format::Auto),
            "png" => Some(Format::Png),
            "jpeg" | "jpg" => Some(Format::Jpeg),
            "webp" => Some(Format::Webp),
            _ => None,
        }
    }

    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::Png => "png",
            Format::Jpeg => "jpeg",
            Format::Webp => "webp",
        }
    }

    /// The MIME type (`Auto` has none until encoded: PNG's is given).
    pub fn mime(self) -> &'static str {
        match self {
            Format::Auto | Format::Png => "image/png",
            Format::Jpeg => "image/jpeg",
            Format::Webp => "image/webp",
        }
    }
}

/// Above this mean squared error per channel (about 33 dB PSNR) a quantized palette
/// visibly bands photographic content, and `Auto` takes JPEG instead.
pub const AUTO_MAX_MSE: f64 = 30.0;

/// What [`encode`] produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Encoded {
    /// The format of `bytes` (never `Auto`).
    pub format: Format,
    /// The encoded image.
    pub bytes: Vec<u8>,
    /// Colours in the PNG's palette, when it has one.
    pub palette: Option<usize>,
    /// Whether pixels were changed beyond resizing (a quantized palette or JPEG).
    pub lossy: bool,
}

/// Pixels ready to encode: RGB, or one luma byte per pixel (borrowed: encoding never
/// needs its own copy of a frame).
pub struct Pixels<'a> {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// One luma byte per pixel rather than three RGB bytes.
    pub gray: bool,
    /// The pixels, row by row, without padding.
    pub data: &'a [u8],
}

/// Converts to luma (ITU-R BT.601 weights, integer math).
pub fn to_gray(rgb: &[u8]) -> Vec<u8> {
    rgb.chunks_exact(3)
        .map(|p| ((p[0] as u32 * 299 + p[1] as u32 * 587 + p[2] as u32 * 114 + 500) / 1000) as u8)
        .collect()
}

/// Refuses pixels whose length is not their size's.
fn check_length(px: &Pixels<'_>) -> Result<(), String> {
    let expected = px.width as usize * px.height as usize * if px.gray { 1 } else { 3 };
    if px.data.len() != expected {
        return Err(format!(
            "encode: {} bytes for a {}x{} image",
            px.data.len(),
            px.width,
            px.height
        ));
    }
    Ok(())
}

/// Encodes pixels in `format` (`Auto`: the cheapest for the content).
pub fn encode(px: &Pixels<'_>, format: Format, quality: u8) -> Result<Encoded, String> {
    check_length(px)?;
    let lossless = |bytes: Vec<u8>, format: Format| Encoded {
        format,
        bytes,
        palette: None,
        lossy: false,
    };
    match format {
        Format::Png | Format::Auto if px.gray => Ok(lossless(png_plain(px)?, Format::Png)),
        Format::Png => match exact(px.data) {
            Some(ix) => png_indexed(px, &ix, false),
            None => Ok(lossless(png_plain(px)?, Format::Png)),
        },
        Format::Auto => {
            if let Some(ix) = exact(px.data) {
                return png_indexed(px, &ix, false);
            }
            match quantize(px.data) {
                Some(ix) if ix.mse <= AUTO_MAX_MSE => png_indexed(px, &ix, true),
                _ => Ok(Encoded {
                    lossy: true,
                    ..lossless(jpeg(px, quality)?, Format::Jpeg)
                }),
            }
        }
        Format::Jpeg => Ok(Encoded {
            lossy: true,
            ..lossless(jpeg(px, quality)?, Format::Jpeg)
        }),
        Format::Webp => {
            let ct = if px.gray {
                image_webp::ColorType::L8
            } else {
                image_webp::ColorType::Rgb8
            };
            let mut out = Vec::with_capacity(px.data.len() / 4);
            image_webp::WebPEncoder::new(&mut out)
                .encode(px.data, px.width, px.height, ct)
                .map_err(|e| format!("webp: {e}"))?;
            Ok(lossless(out, Format::Webp))
        }
    }
}

/// RGB or grayscale PNG, lossless.
fn png_plain(px: &Pixels<'_>) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(px.data.len() / 4);
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
    Ok(out)
}

/// A palette PNG: 1, 2, 4 or 8 bits per pixel as the palette allows, rows unfiltered
/// (filters predict neighbouring values, which palette indices are not).
fn png_indexed(px: &Pixels<'_>, ix: &Indexed, lossy: bool) -> Result<Encoded, String> {
    let (width, height) = (px.width as usize, px.height as usize);
    let bits = bits(ix.palette.len());
    let mut filtered = Vec::with_capacity(filtered_len(width, height, bits));
    for r in ix.indices.chunks(width.max(1)) {
        filtered_row(r, bits, &mut filtered);
    }
    // A large image is compressed in bands of rows on two cores; where they are cut
    // depends on the size alone, so the bytes do not depend on the machine.
    let cuts: Vec<usize> = if filtered.len() >= split::MIN_SPLIT {
        let row = filtered.len() / height.max(1);
        let bounds = band_rows(height);
        bounds[1..bounds.len() - 1]
            .iter()
            .map(|r| r * row)
            .collect()
    } else {
        Vec::new()
    };
    let idat = zlib::zlib(
        &filtered,
        palette_level(px.width as u64 * px.height as u64),
        &cuts,
    )?;
    indexed_png(px.width, px.height, &ix.palette, idat, lossy)
}

/// Row bounds of the bands a large palette image is made and compressed in: enough
/// that two cores taking them as they come finish close together even when one part of
/// the screen has more detail, few enough that cutting the deflate stream costs little.
/// Empty bands of a very short image are left out.
fn band_rows(height: usize) -> Vec<usize> {
    let mut bounds: Vec<usize> = (0..=BANDS).map(|k| height * k / BANDS).collect();
    bounds.dedup();
    bounds
}

/// Bands of a large palette image.
const BANDS: usize = 4;

/// Bits per index of a palette of `colours`: 1, 2, 4 or 8.
fn bits(colours: usize) -> usize {
    match colours {
        0..=2 => 1,
        3..=4 => 2,
        5..=16 => 4,
        _ => 8,
    }
}

/// Bytes of the filtered rows of a `width`×`height` palette image at `bits` per index.
fn filtered_len(width: usize, height: usize, bits: usize) -> usize {
    (width.div_ceil(8 / bits) + 1) * height
}

/// Appends one row of palette indices to PNG image data: its filter type, 0 (none),
/// then the indices packed at `bits` each, the row starting on a byte.
fn filtered_row(indices: &[u8], bits: usize, out: &mut Vec<u8>) {
    out.push(0);
    if bits == 8 {
        out.extend_from_slice(indices);
        return;
    }
    for chunk in indices.chunks(8 / bits) {
        let mut b = 0u8;
        for (i, &v) in chunk.iter().enumerate() {
            b |= v << (8 - bits * (i + 1));
        }
        out.push(b);
    }
}

/// The PNG file of a palette image whose compressed image data is `idat`.
fn indexed_png(
    width: u32,
    height: u32,
    palette: &[[u8; 3]],
    idat: Vec<u8>,
    lossy: bool,
) -> Result<Encoded, String> {
    let depth = match bits(palette.len()) {
        1 => png::BitDepth::One,
        2 => png::BitDepth::Two,
        4 => png::BitDepth::Four,
        _ => png::BitDepth::Eight,
    };
    let mut out = Vec::with_capacity(idat.len() + 1024);
    let mut enc = png::Encoder::new(&mut out, width, height);
    enc.set_color(png::ColorType::Indexed);
    enc.set_depth(depth);
    enc.set_palette(palette.concat());
    let mut w = enc.write_header().map_err(|e| format!("png: {e}"))?;
    w.write_chunk(png::chunk::IDAT, &idat)
        .map_err(|e| format!("png: {e}"))?;
    w.finish().map_err(|e| format!("png: {e}"))?;
    Ok(Encoded {
        format: Format::Png,
        bytes: out,
        palette: Some(palette.len()),
        lossy,
    })
}

/// zlib (zlib-rs) level of a palette PNG of `pixels` pixels. Index rows of screen
/// content repeat at distances a run-length coder misses (text, icons): on a 1080p
/// desktop downscaled to 1430×804, level 1 gives 69 kB, level 2 48 kB, level 5 45 kB
/// for about 1.8 ms of CPU time, level 6 44 kB for 1 ms more. Model-sized images take
/// level 5; larger ones (a full-size capture asked for by argument) level 2, to stay
/// as fast as the RGB path.
fn palette_level(pixels: u64) -> u32 {
    if pixels <= Fit::MODEL.max_pixels * 5 / 4 {
        5
    } else {
        2
    }
}

fn jpeg(px: &Pixels<'_>, quality: u8) -> Result<Vec<u8>, String> {
    if px.width > u16::MAX as u32 || px.height > u16::MAX as u32 {
        return Err("jpeg: image larger than 65535 pixels on a side".into());
    }
    let mut out = Vec::with_capacity(px.data.len() / 8);
    let enc = jpeg_encoder::Encoder::new(&mut out, quality.clamp(1, 100));
    let ct = if px.gray {
        jpeg_encoder::ColorType::Luma
    } else {
        jpeg_encoder::ColorType::Rgb
    };
    enc.encode(px.data, px.width as u16, px.height as u16, ct)
        .map_err(|e| format!("jpeg: {e}"))?;
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
    use cc_desktop::RgbImage;

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

    /// A many-coloured image (a gradient over the checker).
    fn gradient(w: u32, h: u32) -> RgbImage {
        let mut img = checker(w, h);
        for (i, p) in img.pixels.chunks_exact_mut(3).enumerate() {
            p[1] = (i % 251) as u8;
        }
        img
    }

    fn decode(bytes: &[u8]) -> (png::ColorType, u32, u32, Vec<u8>) {
        let mut dec = png::Decoder::new(std::io::Cursor::new(bytes));
        dec.set_transformations(png::Transformations::EXPAND);
        let mut r = dec.read_info().unwrap();
        let ct = r.info().color_type;
        let mut buf = vec![0; r.output_buffer_size().unwrap()];
        let info = r.next_frame(&mut buf).unwrap();
        buf.truncate(info.buffer_size());
        (ct, info.width, info.height, buf)
    }

    fn px(img: &RgbImage) -> Pixels<'_> {
        Pixels {
            width: img.width,
            height: img.height,
            gray: false,
            data: &img.pixels,
        }
    }

    #[test]
    fn png_decodes_to_same_pixels() {
        let img = gradient(64, 48);
        let e = encode(&px(&img), Format::Png, 85).unwrap();
        assert_eq!((e.format, e.palette, e.lossy), (Format::Png, None, false));
        let (ct, w, h, buf) = decode(&e.bytes);
        assert_eq!((ct, w, h), (png::ColorType::Rgb, 64, 48));
        assert_eq!(buf, img.pixels);
    }

    #[test]
    fn few_colours_make_an_exact_palette_png_at_the_smallest_depth() {
        for (img, colours) in [(checker(61, 9), 2), (checker(64, 48), 2)] {
            for format in [Format::Png, Format::Auto] {
                let e = encode(&px(&img), format, 85).unwrap();
                assert_eq!(
                    (e.format, e.palette, e.lossy),
                    (Format::Png, Some(colours), false)
                );
                let (ct, w, h, buf) = decode(&e.bytes);
                assert_eq!((ct, w, h), (png::ColorType::Indexed, img.width, img.height));
                assert_eq!(buf, img.pixels, "lossless");
            }
        }
    }

    #[test]
    fn auto_quantizes_screen_content_and_takes_jpeg_for_noise() {
        let img = gradient(64, 48);
        let e = encode(&px(&img), Format::Auto, 85).unwrap();
        assert_eq!((e.format, e.lossy), (Format::Png, true));
        assert!(e.palette.unwrap() <= 256);
        let (ct, w, h, _) = decode(&e.bytes);
        assert_eq!((ct, w, h), (png::ColorType::Indexed, 64, 48));

        let mut x = 7u32;
        let mut noise = RgbImage::new(128, 128);
        for v in noise.pixels.iter_mut() {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            *v = x as u8;
        }
        let e = encode(&px(&noise), Format::Auto, 85).unwrap();
        assert_eq!((e.format, e.lossy), (Format::Jpeg, true));
        assert_eq!(&e.bytes[..2], &[0xFF, 0xD8]);
    }

    #[test]
    fn gray_is_a_grayscale_png_and_a_wrong_length_is_refused() {
        let img = gradient(40, 30);
        let gray = to_gray(&img.pixels);
        let p = Pixels {
            width: 40,
            height: 30,
            gray: true,
            data: &gray,
        };
        let e = encode(&p, Format::Auto, 85).unwrap();
        let (ct, _, _, buf) = decode(&e.bytes);
        assert_eq!((ct, buf), (png::ColorType::Grayscale, gray.clone()));
        let short = Pixels { width: 41, ..p };
        assert!(
            encode(&short, Format::Png, 85)
                .unwrap_err()
                .contains("41x30")
        );
    }

    #[test]
    fn jpeg_and_webp_have_magic() {
        let img = checker(40, 30);
        let e = encode(&px(&img), Format::Jpeg, 80).unwrap();
        assert_eq!((&e.bytes[..2], e.format), (&[0xFF, 0xD8][..], Format::Jpeg));
        let e = encode(&px(&img), Format::Webp, 80).unwrap();
        assert_eq!((&e.bytes[..4], e.format), (&b"RIFF"[..], Format::Webp));
    }

    /// The palette's colours of every index.
    fn expand(ix: &Indexed) -> Vec<u8> {
        ix.indices
            .iter()
            .flat_map(|&k| ix.palette[k as usize])
            .collect()
    }

    #[test]
    fn a_large_palette_png_compressed_in_halves_decodes_to_the_quantized_pixels() {
        // Larger than one split and odd on both sides, with more than 256 colours.
        let img = gradient(1431, 805);
        let e = encode(&px(&img), Format::Auto, 85).unwrap();
        assert_eq!((e.format, e.lossy), (Format::Png, true));
        let ix = quantize(&img.pixels).unwrap();
        let (ct, w, h, buf) = decode(&e.bytes);
        assert_eq!((ct, w, h), (png::ColorType::Indexed, 1431, 805));
        assert_eq!(buf, expand(&ix));

        // The same indices through the `png` crate's own (unsplit) encoder.
        let mut unsplit = Vec::new();
        let mut enc = png::Encoder::new(&mut unsplit, 1431, 805);
        enc.set_color(png::ColorType::Indexed);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_palette(ix.palette.concat());
        let mut wr = enc.write_header().unwrap();
        wr.write_image_data(&ix.indices).unwrap();
        wr.finish().unwrap();
        assert_eq!(decode(&unsplit).3, buf);
    }

    #[test]
    fn one_pixel_and_one_row_images() {
        for (w, h) in [(1, 1), (1, 3), (1500, 1), (1, 1500)] {
            let img = gradient(w, h);
            for format in [Format::Auto, Format::Png] {
                let e = encode(&px(&img), format, 85).unwrap();
                let (_, dw, dh, buf) = decode(&e.bytes);
                assert_eq!((dw, dh), (w, h));
                if !e.lossy {
                    assert_eq!(buf, img.pixels, "{w}x{h} {format:?}");
                }
            }
        }
    }

    #[test]
    fn resize_changes_size() {
        let out = resize(&checker(100, 50), 50, 25).unwrap();
        assert_eq!(
            (out.width, out.height, out.pixels.len()),
            (50, 25, 50 * 25 * 3)
        );
    }
}
