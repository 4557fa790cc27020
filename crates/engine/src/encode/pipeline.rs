//! The default image of a capture (`Format::Auto` at a model's size) in one pass over
//! two threads, which meet once. Each resizes and surveys the colours of one half of
//! the rows (the helper thread the bottom half); the calling thread then agrees on the
//! palette, and both filter and compress bands of rows, each taking the next band
//! left, so a half with more detail or a core slowed by other work does not hold the
//! other back. Splitting each stage over its own thread, as the stages do when called
//! one by one, cost a thread start and a join per stage (about 0.16 ms each on a
//! virtual machine), and a fixed split waited for the slower half.
//!
//! The bytes are those of [`resize`](super::resize) then [`encode`](super::encode): an
//! exact palette is found in each half and merged in the order a whole-image pass finds
//! it, histograms add up, and the bands are those a whole-image pass compresses.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};

use cc_desktop::RgbImage;

use super::palette::{self, Choice, Indexed};
use super::resize::Resize;
use super::{AUTO_MAX_MSE, Encoded, Format, Pixels, split, zlib};

/// `img` resized to `width`×`height` (not resized at its own size) and encoded in
/// `format`, as [`resize`](super::resize) then [`encode`](super::encode) would, the
/// default format on two threads when the image is large enough to gain from them.
pub fn encode_resized(
    img: &RgbImage,
    width: u32,
    height: u32,
    format: Format,
    quality: u8,
) -> Result<Encoded, String> {
    let (width, height) = (width.max(1), height.max(1));
    let bytes = width as usize * height as usize * 3;
    let worth_two = height >= 2 && bytes >= split::MIN_SPLIT && split::cores() >= 2;
    if format == Format::Auto
        && worth_two
        && let Some(done) = two_threads(img, width, height, quality)?
    {
        return Ok(done);
    }
    let resized;
    let data = if (width, height) == (img.width, img.height) {
        &img.pixels
    } else {
        resized = super::resize(img, width, height)?;
        &resized.pixels
    };
    super::encode(
        &Pixels {
            width,
            height,
            gray: false,
            data,
        },
        format,
        quality,
    )
}

/// What a half of the image holds: its exact palette, or (more than 256 colours) its
/// histogram.
enum Survey {
    Exact(Indexed),
    Histogram(Vec<[u32; 4]>),
}

impl Survey {
    fn of(rgb: &[u8]) -> Survey {
        match palette::exact(rgb) {
            Some(ix) => Survey::Exact(ix),
            None => Survey::Histogram(palette::histogram(rgb)),
        }
    }

    fn into_histogram(self) -> Vec<[u32; 4]> {
        match self {
            Survey::Exact(ix) => palette::histogram_of(&ix),
            Survey::Histogram(h) => h,
        }
    }
}

/// How a half's pixels become the image's palette indices.
enum Mapping {
    /// Its exact palette's indices, renumbered into the image's palette.
    Renumber(Vec<u8>, Vec<u8>),
    /// Each pixel through the quantized palette's table of bins.
    Bins(Arc<Vec<u8>>),
}

/// The calling thread's word to the helper once both halves are surveyed.
enum Plan<'a> {
    /// Take bands to compress until none is left.
    Compress(Arc<Bands<'a>>),
    /// The image goes out as JPEG (or failed): nothing more to do.
    Stop,
}

/// One band's compressed rows (raw deflate, or the rows themselves when the image is
/// compressed whole), Adler-32 and input length.
use zlib::Piece;

/// A half's RGB rows: the source's own (an image encoded at its own size), or resized
/// by the thread that surveys them (each thread fills its own half's memory).
enum Rows<'a> {
    Source(&'a [u8]),
    Resized(Vec<u8>),
}

impl std::ops::Deref for Rows<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Rows::Source(rgb) => rgb,
            Rows::Resized(rgb) => rgb,
        }
    }
}

impl<'a> Rows<'a> {
    /// Rows `from..to` of the image, `img` resized by `plan` (or as it is).
    fn make(
        img: &'a RgbImage,
        plan: Option<&Resize<'_>>,
        from: usize,
        to: usize,
    ) -> Result<Rows<'a>, String> {
        let row = img.width as usize * 3;
        match plan {
            None => Ok(Rows::Source(&img.pixels[from * row..to * row])),
            Some(p) => {
                let mut rgb = buffer((to - from) * p.width as usize * 3);
                p.rows(from as u32, &mut rgb)?;
                Ok(Rows::Resized(rgb))
            }
        }
    }

    /// Gives resized rows' memory back for the next image.
    fn recycle(self) {
        if let Rows::Resized(rgb) = self {
            let mut idle = BUFFERS.lock().unwrap_or_else(|e| e.into_inner());
            if idle.len() < MAX_IDLE_BUFFERS {
                idle.push(rgb);
            }
        }
    }
}

/// Memory for a half's resized rows, kept between images: zeroing a new 1.7 MB (half
/// of a model-sized image) costs about as much as a tenth of resizing into it.
static BUFFERS: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// Buffers kept: the two halves of one image.
const MAX_IDLE_BUFFERS: usize = 2;

/// `len` bytes to resize into: a kept buffer (its old bytes are all overwritten) or a
/// new one.
fn buffer(len: usize) -> Vec<u8> {
    let kept = BUFFERS.lock().unwrap_or_else(|e| e.into_inner()).pop();
    let mut rgb = kept.unwrap_or_default();
    rgb.truncate(len);
    rgb.resize(len, 0);
    rgb
}

/// The image's rows after the palette is agreed: bands to filter and compress, taken
/// by whichever thread is free (a band with more detail takes longer to compress, and
/// either core may be slowed by other work), each band within one half.
struct Bands<'a> {
    /// The RGB rows of the top and the bottom half.
    halves: [Rows<'a>; 2],
    mappings: [Mapping; 2],
    width: usize,
    /// The first row of the bottom half.
    cut: usize,
    /// Row bounds of the bands.
    bounds: Vec<usize>,
    bits: usize,
    level: u32,
    /// Whether each band is compressed on its own (else its rows come back as they are).
    compress: bool,
    next: AtomicUsize,
    pieces: Mutex<Vec<Option<Result<Piece, String>>>>,
}

impl Bands<'_> {
    /// Filters and compresses bands until none is left.
    fn work(&self) {
        loop {
            let k = self.next.fetch_add(1, Ordering::Relaxed);
            if k + 1 >= self.bounds.len() {
                return;
            }
            let piece = self.band(k);
            let mut pieces = self.pieces.lock().unwrap_or_else(|e| e.into_inner());
            pieces[k] = Some(piece);
        }
    }

    fn band(&self, k: usize) -> Result<Piece, String> {
        let (r0, r1) = (self.bounds[k], self.bounds[k + 1]);
        let half = usize::from(r0 >= self.cut);
        let first = if half == 1 { self.cut } else { 0 };
        let rows = (r0 - first)..(r1 - first);
        let rgb = &self.halves[half][rows.start * self.width * 3..rows.end * self.width * 3];
        let out = filtered(rgb, rows, self.width, &self.mappings[half], self.bits);
        let len = out.len();
        if !self.compress {
            return Ok((out, 0, len));
        }
        let last = k + 2 == self.bounds.len();
        let (bytes, adler) = zlib::piece(&out, self.level, last);
        Ok((bytes?, adler, len))
    }

    /// The image data once every band is done.
    fn idat(self) -> Result<Vec<u8>, String> {
        let [top, bottom] = self.halves;
        top.recycle();
        bottom.recycle();
        let pieces = self.pieces.into_inner().unwrap_or_else(|e| e.into_inner());
        let pieces = pieces
            .into_iter()
            .map(|p| p.unwrap_or_else(|| Err("encode: a band was not compressed".into())))
            .collect::<Result<Vec<Piece>, String>>()?;
        if self.compress {
            Ok(zlib::join(&pieces))
        } else {
            let rows: Vec<u8> = pieces.into_iter().flat_map(|p| p.0).collect();
            zlib::zlib(&rows, self.level, &[])
        }
    }
}

/// The two-thread pass; `None` when the helper thread cannot be started (the caller
/// then encodes on its own thread).
fn two_threads(
    img: &RgbImage,
    width: u32,
    height: u32,
    quality: u8,
) -> Result<Option<Encoded>, String> {
    let (w, h) = (width as usize, height as usize);
    let cut = h / 2;
    let same = (width, height) == (img.width, img.height);
    let plan = if same {
        None
    } else {
        Some(Resize::new(img, width, height)?)
    };
    if same && img.pixels.len() != w * h * 3 {
        return Err(format!(
            "encode: {} bytes for a {}x{} image",
            img.pixels.len(),
            width,
            height
        ));
    }
    let level = super::palette_level(w as u64 * h as u64);
    let plan = plan.as_ref();
    let outcome = std::thread::scope(|s| -> Result<Option<Outcome<'_>>, String> {
        let (to_main, from_helper) = mpsc::channel::<(Survey, Rows<'_>)>();
        let (to_helper, from_main) = mpsc::channel::<Plan<'_>>();
        let helper = std::thread::Builder::new()
            .name("cc-encode".into())
            .spawn_scoped(s, move || -> Result<(), String> {
                let rows = Rows::make(img, plan, cut, h)?;
                if to_main.send((Survey::of(&rows), rows)).is_ok()
                    && let Ok(Plan::Compress(bands)) = from_main.recv()
                {
                    bands.work();
                }
                Ok(())
            });
        let Ok(helper) = helper else {
            return Ok(None);
        };
        let join = |helper: std::thread::ScopedJoinHandle<'_, _>| match helper.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        let top = Rows::make(img, plan, 0, cut)?;
        let mine = Survey::of(&top);
        let Ok((theirs, bottom)) = from_helper.recv() else {
            // The helper failed before its survey: its error says why.
            return join(helper).map(|_| None);
        };
        let agreed = agree(mine, theirs, w * h);
        let Some((palette, lossy, my_mapping, their_mapping)) = agreed else {
            let _ = to_helper.send(Plan::Stop);
            join(helper)?;
            return Ok(Some(Outcome::Jpeg(top, bottom)));
        };
        let bits = super::bits(palette.len());
        // Cut where a whole-image pass cuts it: into bands when it is large.
        let compress = super::filtered_len(w, h, bits) >= split::MIN_SPLIT;
        let bounds = super::band_rows(h);
        let bands = Arc::new(Bands {
            halves: [top, bottom],
            mappings: [my_mapping, their_mapping],
            width: w,
            cut,
            pieces: Mutex::new((1..bounds.len()).map(|_| None).collect()),
            bounds,
            bits,
            level,
            compress,
            next: AtomicUsize::new(0),
        });
        let _ = to_helper.send(Plan::Compress(bands.clone()));
        bands.work();
        join(helper)?;
        let bands = Arc::into_inner(bands)
            .ok_or_else(|| "encode: the helper thread kept its bands".to_string())?;
        Ok(Some(Outcome::Png(palette, lossy, bands.idat()?)))
    })?;
    match outcome {
        None => Ok(None),
        Some(Outcome::Png(palette, lossy, idat)) => {
            super::indexed_png(width, height, &palette, idat, lossy).map(Some)
        }
        Some(Outcome::Jpeg(top, bottom)) => {
            let data = [&top[..], &bottom[..]].concat();
            top.recycle();
            bottom.recycle();
            let px = Pixels {
                width,
                height,
                gray: false,
                data: &data,
            };
            Ok(Some(Encoded {
                format: Format::Jpeg,
                bytes: super::jpeg(&px, quality)?,
                palette: None,
                lossy: true,
            }))
        }
    }
}

enum Outcome<'a> {
    /// Palette, whether quantized, image data.
    Png(Vec<[u8; 3]>, bool, Vec<u8>),
    /// The halves' rows, to go out as JPEG.
    Jpeg(Rows<'a>, Rows<'a>),
}

/// The image's palette from its halves' surveys (`n` pixels in all), whether it is
/// lossy, and how each half maps to it; `None` when a palette would lose too much
/// (the image goes out as JPEG).
fn agree(top: Survey, bottom: Survey, n: usize) -> Option<(Vec<[u8; 3]>, bool, Mapping, Mapping)> {
    let (top, bottom) = match (top, bottom) {
        (Survey::Exact(t), Survey::Exact(b)) => match merge(t, b) {
            Ok(agreed) => return Some(agreed),
            Err((t, b)) => (Survey::Exact(t), Survey::Exact(b)),
        },
        pair => pair,
    };
    if n >= palette::MAX_PIXELS {
        return None;
    }
    let mut hist = top.into_histogram();
    palette::add(&mut hist, &bottom.into_histogram());
    let choice = Choice::new(&hist, n);
    if choice.mse > AUTO_MAX_MSE {
        return None;
    }
    let lut = Arc::new(choice.lut);
    Some((
        choice.palette,
        true,
        Mapping::Bins(lut.clone()),
        Mapping::Bins(lut),
    ))
}

/// The exact palette of the whole image from its halves' (the top's colours, then the
/// bottom's new ones, as one pass over the whole finds them), or the halves back when
/// together they have more than 256 colours.
#[allow(clippy::type_complexity)]
fn merge(
    top: Indexed,
    bottom: Indexed,
) -> Result<(Vec<[u8; 3]>, bool, Mapping, Mapping), (Indexed, Indexed)> {
    let mut palette = top.palette.clone();
    let mut renumber = Vec::with_capacity(bottom.palette.len());
    for c in &bottom.palette {
        match palette.iter().position(|p| p == c) {
            Some(k) => renumber.push(k as u8),
            None if palette.len() < 256 => {
                renumber.push(palette.len() as u8);
                palette.push(*c);
            }
            None => return Err((top, bottom)),
        }
    }
    let identity = (0..=255).collect();
    Ok((
        palette,
        false,
        Mapping::Renumber(top.indices, identity),
        Mapping::Renumber(bottom.indices, renumber),
    ))
}

/// A band's PNG image data before compression: each row's filter type (none) and its
/// palette indices at `bits` each. `rgb` holds the band's pixels, which are `rows` of
/// its half.
fn filtered(
    rgb: &[u8],
    rows: std::ops::Range<usize>,
    width: usize,
    mapping: &Mapping,
    bits: usize,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(super::filtered_len(width, rows.len(), bits));
    match mapping {
        Mapping::Bins(lut) if bits == 8 => {
            for row in rgb.chunks_exact(width * 3) {
                out.push(0);
                let start = out.len();
                out.resize(start + width, 0);
                palette::index(row, lut, &mut out[start..]);
            }
        }
        Mapping::Bins(lut) => {
            let mut indices = vec![0u8; width];
            for row in rgb.chunks_exact(width * 3) {
                palette::index(row, lut, &mut indices);
                super::filtered_row(&indices, bits, &mut out);
            }
        }
        Mapping::Renumber(indices, renumber) => {
            let mut row_indices = vec![0u8; width];
            let band = &indices[rows.start * width..rows.end * width];
            for row in band.chunks_exact(width) {
                for (o, &k) in row_indices.iter_mut().zip(row) {
                    *o = renumber[k as usize];
                }
                super::filtered_row(&row_indices, bits, &mut out);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(w: u32, h: u32, colour: impl Fn(u32, u32) -> [u8; 3]) -> RgbImage {
        let mut img = RgbImage::new(w, h);
        for y in 0..h {
            for x in 0..w {
                let i = ((y * w + x) * 3) as usize;
                img.pixels[i..i + 3].copy_from_slice(&colour(x, y));
            }
        }
        img
    }

    /// Screen-like: flat areas, text-like strokes and a band of blends.
    fn screen(x: u32, y: u32) -> [u8; 3] {
        if x % 41 < 2 || y.is_multiple_of(29) {
            [20, 20, 30]
        } else if y % 200 < 40 {
            [(x % 256) as u8, 120, (255 - x % 256) as u8]
        } else {
            [240, 240, 245]
        }
    }

    fn noise(x: u32, y: u32) -> [u8; 3] {
        let mut v = x.wrapping_mul(0x9E37_79B9) ^ y.wrapping_mul(0x85EB_CA6B);
        v ^= v >> 15;
        v = v.wrapping_mul(0x2C1B_3C6D);
        v ^= v >> 12;
        [v as u8, (v >> 8) as u8, (v >> 16) as u8]
    }

    /// `colours` flat colours in vertical stripes, offset by `base`.
    fn stripes(colours: u32, base: u32) -> impl Fn(u32, u32) -> [u8; 3] {
        move |x, _| {
            let k = base + x * colours / 1920;
            [(k * 7) as u8, (k * 13 / 3) as u8, (k / 2) as u8]
        }
    }

    /// The reference: resize, then encode, each on its own.
    fn reference(img: &RgbImage, w: u32, h: u32) -> Encoded {
        let small = super::super::resize(img, w, h).unwrap();
        super::super::encode(
            &Pixels {
                width: w,
                height: h,
                gray: false,
                data: &small.pixels,
            },
            Format::Auto,
            85,
        )
        .unwrap()
    }

    #[test]
    fn the_same_bytes_as_resize_then_encode() {
        let top_flat = |x: u32, y: u32| {
            if y < 540 {
                [250, 250, 250]
            } else {
                screen(x, y)
            }
        };
        let bottom_flat = |x: u32, y: u32| if y >= 540 { [9, 9, 9] } else { screen(x, y) };
        // Two halves of 200 colours each, 56 of them shared: 344 in all.
        let split_colours = |x: u32, y: u32| stripes(200, if y < 540 { 0 } else { 144 })(x, y);
        let cases: Vec<(&str, RgbImage, u32, u32, Option<bool>)> = vec![
            (
                "screen, quantized",
                image(1920, 1080, screen),
                1430,
                804,
                Some(true),
            ),
            (
                "screen at its own size",
                image(700, 500, screen),
                700,
                500,
                None,
            ),
            (
                "few colours, exact",
                image(1920, 1080, stripes(12, 0)),
                1920,
                1080,
                Some(false),
            ),
            ("flat top", image(1920, 1080, top_flat), 1430, 804, None),
            (
                "flat bottom",
                image(1920, 1080, bottom_flat),
                1430,
                804,
                None,
            ),
            (
                "exact halves, too many together",
                image(1920, 1080, split_colours),
                1920,
                1080,
                Some(true),
            ),
            (
                "two colours, rows not cut",
                image(600, 400, stripes(2, 0)),
                600,
                400,
                Some(false),
            ),
            ("noise, JPEG", image(800, 600, noise), 640, 480, Some(true)),
            ("small: one thread", image(200, 100, screen), 150, 75, None),
            ("odd sizes", image(1001, 777, screen), 999, 555, None),
        ];
        for (what, img, w, h, lossy) in cases {
            let want = reference(&img, w, h);
            let got = encode_resized(&img, w, h, Format::Auto, 85).unwrap();
            assert!(
                got == want,
                "{what}: {:?} vs {:?}",
                (got.format, got.bytes.len(), got.palette),
                (want.format, want.bytes.len(), want.palette)
            );
            if let Some(lossy) = lossy {
                assert_eq!(got.lossy, lossy, "{what}");
            }
        }
    }

    #[test]
    fn other_formats_and_bad_sources() {
        let img = image(640, 480, screen);
        for format in [Format::Png, Format::Jpeg, Format::Webp] {
            let small = super::super::resize(&img, 320, 240).unwrap();
            let want = super::super::encode(
                &Pixels {
                    width: 320,
                    height: 240,
                    gray: false,
                    data: &small.pixels,
                },
                format,
                85,
            )
            .unwrap();
            assert_eq!(encode_resized(&img, 320, 240, format, 85).unwrap(), want);
        }
        let mut short = image(640, 480, screen);
        short.pixels.pop();
        for (w, h) in [(640, 480), (320, 240)] {
            let err = encode_resized(&short, w, h, Format::Auto, 85).unwrap_err();
            assert!(err.contains("640x480"), "{err}");
        }
    }
}
