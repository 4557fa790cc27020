//! The default image of a capture (`Format::Auto` at a model's size) in one pass on
//! two cores. The image is cut into bands of rows; the calling thread and a kept
//! helper thread each take the next band left, resize it and survey its colours; the
//! calling thread agrees on the palette; then both take bands again to filter and
//! compress. Neither waits for the other except for a band the other has started, so
//! a helper that starts late (a virtual machine's idle vCPU can take milliseconds to
//! wake) or a band with more detail does not hold the image back: at worst the calling
//! thread does it all. Splitting each stage over its own new thread, as the stages
//! called one by one do, cost a thread start and a join per stage (about 0.16 ms each
//! on a virtual machine) and waited for the slower half.
//!
//! The bytes are those of [`resize`](super::resize) then [`encode`](super::encode): the
//! bands are those a whole-image pass compresses, the exact palettes of the bands are
//! merged in the order a whole-image pass finds the colours, and histograms add up.

use std::ops::Range;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use cc_desktop::RgbImage;

use super::palette::{self, Choice, Indexed};
use super::resize::Resize;
use super::zlib::{self, Piece};
use super::{AUTO_MAX_MSE, Encoded, Format, Pixels, split, to_gray, worker};

/// `img` resized to `width`×`height` (not resized at its own size), made gray when
/// asked, and encoded in `format`, as [`resize`](super::resize), [`to_gray`] and
/// [`encode`](super::encode) would one after the other; the default format in one pass
/// on two cores when the image is large enough to gain.
pub fn encode_resized(
    img: &Arc<RgbImage>,
    width: u32,
    height: u32,
    gray: bool,
    format: Format,
    quality: u8,
) -> Result<Encoded, String> {
    let (width, height) = (width.max(1), height.max(1));
    let bytes = width as usize * height as usize * 3;
    let worth_two = height >= 2 && bytes >= split::MIN_SPLIT && split::cores() >= 2;
    if format == Format::Auto && !gray && worth_two {
        return one_pass(img, width, height, quality);
    }
    let resized;
    let rgb = if (width, height) == (img.width, img.height) {
        &img.pixels
    } else {
        resized = super::resize(img, width, height)?;
        &resized.pixels
    };
    let luma;
    let data = if gray {
        luma = to_gray(rgb);
        &luma
    } else {
        rgb
    };
    super::encode(
        &Pixels {
            width,
            height,
            gray,
            data,
        },
        format,
        quality,
    )
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// An item's result, once done.
type Slot<T> = Option<Result<T, String>>;

/// Items (bands) done by whichever thread takes them first.
struct Work<T> {
    next: AtomicUsize,
    /// How many are done, and their results.
    done: Mutex<(usize, Vec<Slot<T>>)>,
    all_done: Condvar,
}

impl<T> Work<T> {
    fn new(items: usize) -> Work<T> {
        Work {
            next: AtomicUsize::new(0),
            done: Mutex::new((0, (0..items).map(|_| None).collect())),
            all_done: Condvar::new(),
        }
    }

    /// Does item after item (`f(k)` for item `k`) until none is left to take.
    fn run(&self, f: impl Fn(usize) -> Result<T, String>) {
        let items = lock(&self.done).1.len();
        loop {
            let k = self.next.fetch_add(1, Ordering::Relaxed);
            if k >= items {
                return;
            }
            // A panic is a failed band, never a band that the other thread waits for.
            let result = std::panic::catch_unwind(AssertUnwindSafe(|| f(k)))
                .unwrap_or_else(|_| Err("encode: a band panicked".into()));
            let mut done = lock(&self.done);
            done.1[k] = Some(result);
            done.0 += 1;
            if done.0 == items {
                self.all_done.notify_all();
            }
        }
    }

    /// The results, once every item is done (those the other thread took included).
    fn results(&self) -> Result<Vec<T>, String> {
        let mut done = lock(&self.done);
        while done.0 < done.1.len() {
            done = self.all_done.wait(done).unwrap_or_else(|e| e.into_inner());
        }
        done.1
            .iter_mut()
            .map(|r| {
                r.take()
                    .unwrap_or_else(|| Err("encode: a band was taken twice".into()))
            })
            .collect()
    }
}

/// A band's RGB rows: the source's own (an image encoded at its own size), or resized
/// by the thread that surveyed them.
enum Rows {
    Source(Arc<RgbImage>, Range<usize>),
    Resized(Vec<u8>),
}

impl Rows {
    fn rgb(&self) -> &[u8] {
        match self {
            Rows::Source(img, range) => &img.pixels[range.clone()],
            Rows::Resized(rgb) => rgb,
        }
    }

    /// Gives resized rows' memory back for the next image.
    fn recycle(self) {
        if let Rows::Resized(rgb) = self {
            let mut idle = lock(&BUFFERS);
            if idle.len() < MAX_IDLE_BUFFERS {
                idle.push(rgb);
            }
        }
    }
}

/// Memory for bands of resized rows, kept between images: zeroing new memory costs
/// about a tenth of resizing into it.
static BUFFERS: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// Buffers kept: the bands of one image.
const MAX_IDLE_BUFFERS: usize = 4;

/// `len` bytes to resize into: a kept buffer (its old bytes are all overwritten) or a
/// new one.
fn buffer(len: usize) -> Vec<u8> {
    let mut rgb = lock(&BUFFERS).pop().unwrap_or_default();
    rgb.truncate(len);
    rgb.resize(len, 0);
    rgb
}

/// What a band of the image holds: its exact palette, or (more than 256 colours) its
/// histogram.
enum Survey {
    Exact(Indexed),
    /// The histogram, and the runs of one colour when worth keeping.
    Histogram(Vec<[u32; 4]>, Option<Vec<u32>>),
}

impl Survey {
    fn of(rgb: &[u8]) -> Survey {
        match palette::exact(rgb) {
            Some(ix) => Survey::Exact(ix),
            None => {
                let (hist, runs) = palette::histogram_and_runs(rgb, true);
                Survey::Histogram(hist, runs)
            }
        }
    }

    /// The histogram, and the runs when known.
    fn into_histogram(self) -> (Vec<[u32; 4]>, Option<Vec<u32>>) {
        match self {
            Survey::Exact(ix) => (palette::histogram_of(&ix), None),
            Survey::Histogram(h, runs) => (h, runs),
        }
    }
}

/// How a band's pixels become the image's palette indices.
enum Mapping {
    /// Its exact palette's indices, renumbered into the image's palette.
    Renumber(Vec<u8>, Vec<u8>),
    /// Each pixel through the quantized palette's table of bins (each run of one colour
    /// once, when its runs are known).
    Bins(Arc<Vec<u8>>, Option<Vec<u32>>),
}

/// The second stage, once the palette is agreed.
enum Stage {
    /// Not agreed yet.
    Waiting,
    /// Filter and compress these bands.
    Compress(Arc<Bands>),
    /// Nothing more to do (the image goes out as JPEG, or failed).
    Stop,
}

/// One image in the making, shared by the calling thread and the helper.
struct Pass {
    img: Arc<RgbImage>,
    width: u32,
    height: u32,
    /// Row bounds of the bands.
    bounds: Vec<usize>,
    surveys: Work<(Rows, Survey)>,
    stage: Mutex<Stage>,
    agreed: Condvar,
}

impl Pass {
    /// Band `k` resized (or taken as it is) and surveyed.
    fn survey(&self, k: usize) -> Result<(Rows, Survey), String> {
        let (from, to) = (self.bounds[k], self.bounds[k + 1]);
        let rows = if (self.width, self.height) == (self.img.width, self.img.height) {
            let row = self.width as usize * 3;
            Rows::Source(self.img.clone(), from * row..to * row)
        } else {
            let plan = Resize::new(&self.img, self.width, self.height)?;
            let mut rgb = buffer((to - from) * self.width as usize * 3);
            plan.rows(from as u32, &mut rgb)?;
            Rows::Resized(rgb)
        };
        let survey = Survey::of(rows.rgb());
        Ok((rows, survey))
    }

    /// Tells the helper what comes next.
    fn decide(&self, stage: Stage) {
        *lock(&self.stage) = stage;
        self.agreed.notify_all();
    }

    /// The helper's part: bands to survey while any is left, then bands to compress.
    fn help(&self) {
        self.surveys.run(|k| self.survey(k));
        let bands = {
            let mut stage = lock(&self.stage);
            loop {
                match &*stage {
                    Stage::Waiting => {
                        stage = self.agreed.wait(stage).unwrap_or_else(|e| e.into_inner());
                    }
                    Stage::Compress(bands) => break bands.clone(),
                    Stage::Stop => return,
                }
            }
        };
        bands.work.run(|k| bands.band(k));
    }
}

/// Stops the helper from waiting for a decision the calling thread never makes (it
/// returned an error or panicked).
struct Decided<'a>(&'a Pass);

impl Drop for Decided<'_> {
    fn drop(&mut self) {
        let mut stage = lock(&self.0.stage);
        if matches!(*stage, Stage::Waiting) {
            *stage = Stage::Stop;
            self.0.agreed.notify_all();
        }
    }
}

/// The bands to filter and compress once the palette is agreed.
struct Bands {
    rows: Vec<Rows>,
    mappings: Vec<Mapping>,
    width: usize,
    bits: usize,
    level: u32,
    /// Whether each band is compressed on its own (else its rows come back as they are).
    compress: bool,
    work: Work<Piece>,
}

impl Bands {
    fn band(&self, k: usize) -> Result<Piece, String> {
        let out = filtered(self.rows[k].rgb(), self.width, &self.mappings[k], self.bits);
        let len = out.len();
        if !self.compress {
            return Ok((out, 0, len));
        }
        let last = k + 1 == self.rows.len();
        let (bytes, adler) = zlib::piece(&out, self.level, last);
        Ok((bytes?, adler, len))
    }
}

/// The one-pass encoding (see the module's documentation).
fn one_pass(img: &Arc<RgbImage>, width: u32, height: u32, quality: u8) -> Result<Encoded, String> {
    let (w, h) = (width as usize, height as usize);
    if (width, height) == (img.width, img.height) {
        super::check_length(&Pixels {
            width,
            height,
            gray: false,
            data: &img.pixels,
        })?;
    }
    let bounds = super::band_rows(h);
    let pass = Arc::new(Pass {
        img: img.clone(),
        width,
        height,
        surveys: Work::new(bounds.len() - 1),
        bounds,
        stage: Mutex::new(Stage::Waiting),
        agreed: Condvar::new(),
    });
    let decided = Decided(&pass);
    let helper = pass.clone();
    // When no helper can run, this thread takes every band.
    worker::hand_off(Box::new(move || helper.help()));
    pass.surveys.run(|k| pass.survey(k));
    let (rows, surveys): (Vec<Rows>, Vec<Survey>) = pass.surveys.results()?.into_iter().unzip();
    let Some((palette, lossy, mappings)) = agree(surveys, w * h) else {
        pass.decide(Stage::Stop);
        let data: Vec<u8> = rows.iter().flat_map(|r| r.rgb()).copied().collect();
        rows.into_iter().for_each(Rows::recycle);
        let px = Pixels {
            width,
            height,
            gray: false,
            data: &data,
        };
        return Ok(Encoded {
            format: Format::Jpeg,
            bytes: super::jpeg(&px, quality)?,
            palette: None,
            lossy: true,
        });
    };
    let bits = super::bits(palette.len());
    let level = super::palette_level(w as u64 * h as u64);
    // Cut where a whole-image pass cuts it: into bands when it is large.
    let compress = super::filtered_len(w, h, bits) >= split::MIN_SPLIT;
    let bands = Arc::new(Bands {
        work: Work::new(rows.len()),
        rows,
        mappings,
        width: w,
        bits,
        level,
        compress,
    });
    pass.decide(Stage::Compress(bands.clone()));
    drop(decided);
    bands.work.run(|k| bands.band(k));
    let pieces = bands.work.results()?;
    let idat = if compress {
        zlib::join(&pieces)
    } else {
        let rows: Vec<u8> = pieces.into_iter().flat_map(|p| p.0).collect();
        zlib::zlib(&rows, level, &[])?
    };
    // The helper may still hold the bands (it found none left): their rows are then
    // freed with its last reference instead of kept.
    if let Some(bands) = Arc::into_inner(bands) {
        bands.rows.into_iter().for_each(Rows::recycle);
    }
    super::indexed_png(width, height, &palette, idat, lossy)
}

/// The image's palette from its bands' surveys (`n` pixels in all), whether it is
/// lossy, and how each band maps to it; `None` when a palette would lose too much
/// (the image goes out as JPEG).
fn agree(surveys: Vec<Survey>, n: usize) -> Option<(Vec<[u8; 3]>, bool, Vec<Mapping>)> {
    let surveys = if surveys.iter().all(|s| matches!(s, Survey::Exact(_))) {
        let exact = surveys
            .into_iter()
            .filter_map(|s| match s {
                Survey::Exact(ix) => Some(ix),
                Survey::Histogram(..) => None,
            })
            .collect();
        match merge(exact) {
            Ok((palette, mappings)) => return Some((palette, false, mappings)),
            Err(exact) => exact.into_iter().map(Survey::Exact).collect(),
        }
    } else {
        surveys
    };
    if n >= palette::MAX_PIXELS {
        return None;
    }
    let (histograms, runs): (Vec<_>, Vec<_>) =
        surveys.into_iter().map(Survey::into_histogram).unzip();
    let mut histograms = histograms.into_iter();
    let mut hist = histograms.next()?;
    for other in histograms {
        palette::add(&mut hist, &other);
    }
    let choice = Choice::new(&hist, n);
    if choice.mse > AUTO_MAX_MSE {
        return None;
    }
    let lut = Arc::new(choice.lut);
    let mappings = runs
        .into_iter()
        .map(|runs| Mapping::Bins(lut.clone(), runs))
        .collect();
    Some((choice.palette, true, mappings))
}

/// The image's exact palette and how each band's indices map to it.
type Merged = (Vec<[u8; 3]>, Vec<Mapping>);

/// The exact palette of the whole image from its bands' (each band's new colours in
/// turn, as one pass over the whole finds them), or the bands back when together they
/// have more than 256 colours.
fn merge(bands: Vec<Indexed>) -> Result<Merged, Vec<Indexed>> {
    let mut palette: Vec<[u8; 3]> = Vec::with_capacity(256);
    let mut renumbers = Vec::with_capacity(bands.len());
    for band in &bands {
        let mut renumber = Vec::with_capacity(band.palette.len());
        for c in &band.palette {
            match palette.iter().position(|p| p == c) {
                Some(k) => renumber.push(k as u8),
                None if palette.len() < 256 => {
                    renumber.push(palette.len() as u8);
                    palette.push(*c);
                }
                None => return Err(bands),
            }
        }
        renumbers.push(renumber);
    }
    let mappings = bands
        .into_iter()
        .zip(renumbers)
        .map(|(band, renumber)| Mapping::Renumber(band.indices, renumber))
        .collect();
    Ok((palette, mappings))
}

/// A band's PNG image data before compression: each row's filter type (none) and its
/// palette indices at `bits` each.
fn filtered(rgb: &[u8], width: usize, mapping: &Mapping, bits: usize) -> Vec<u8> {
    let rows = rgb.len() / (width * 3).max(1);
    let mut out = Vec::with_capacity(super::filtered_len(width, rows, bits));
    match mapping {
        Mapping::Bins(lut, Some(runs)) => {
            let mut indices = vec![0u8; rows * width];
            palette::index_runs(rgb, lut, runs, &mut indices);
            for row in indices.chunks_exact(width) {
                super::filtered_row(row, bits, &mut out);
            }
        }
        Mapping::Bins(lut, None) if bits == 8 => {
            for row in rgb.chunks_exact(width * 3) {
                out.push(0);
                let start = out.len();
                out.resize(start + width, 0);
                palette::index(row, lut, &mut out[start..]);
            }
        }
        Mapping::Bins(lut, None) => {
            let mut indices = vec![0u8; width];
            for row in rgb.chunks_exact(width * 3) {
                palette::index(row, lut, &mut indices);
                super::filtered_row(&indices, bits, &mut out);
            }
        }
        Mapping::Renumber(indices, renumber) => {
            let mut row_indices = vec![0u8; width];
            for row in indices.chunks_exact(width) {
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
            let img = Arc::new(img);
            let want = reference(&img, w, h);
            let got = encode_resized(&img, w, h, false, Format::Auto, 85).unwrap();
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
        let img = Arc::new(image(640, 480, screen));
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
            assert_eq!(
                encode_resized(&img, 320, 240, false, format, 85).unwrap(),
                want
            );
        }
        // Gray, resized or at its own size: luma of the resized pixels, encoded.
        for (w, h) in [(320, 240), (640, 480)] {
            let small = super::super::resize(&img, w, h).unwrap();
            let luma = to_gray(&small.pixels);
            let want = super::super::encode(
                &Pixels {
                    width: w,
                    height: h,
                    gray: true,
                    data: &luma,
                },
                Format::Auto,
                85,
            )
            .unwrap();
            assert_eq!(
                encode_resized(&img, w, h, true, Format::Auto, 85).unwrap(),
                want
            );
        }
        let mut short = image(640, 480, screen);
        short.pixels.pop();
        let short = Arc::new(short);
        for (w, h) in [(640, 480), (320, 240)] {
            let err = encode_resized(&short, w, h, false, Format::Auto, 85).unwrap_err();
            assert!(err.contains("640x480"), "{err}");
        }
    }
}
