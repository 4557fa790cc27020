//! Palettes for screen content: an exact one when a frame has at most 256 colours (a
//! flat UI at native size), else a fast quantization to 256 colours (a downscaled
//! screen, whose anti-aliased edges add blends of the same few colours).
//!
//! The quantizer is popularity over a 15-bit histogram (5 bits per channel): screen
//! content puts most pixels in a few hundred flat colours, which the most popular bins
//! hold exactly (a bin's colour is the mean of its pixels); the rare blends map to the
//! nearest of them. No dithering: dither noise costs more bytes than it buys on text.

/// An image as palette indices.
#[derive(Debug, Clone, PartialEq)]
pub struct Indexed {
    /// At most 256 colours.
    pub palette: Vec<[u8; 3]>,
    /// One index per pixel, row-major.
    pub indices: Vec<u8>,
    /// Mean squared error per channel against the source (0 for an exact palette).
    pub mse: f64,
}

use super::split;

const EMPTY: u32 = u32::MAX;

/// The image's own palette when it has at most 256 colours, else `None` (found out as
/// soon as the 257th colour appears).
pub fn exact(rgb: &[u8]) -> Option<Indexed> {
    // Open addressing over 1024 slots: at most 256 are ever filled.
    let mut keys = [EMPTY; 1024];
    let mut slot_index = [0u8; 1024];
    let mut palette: Vec<[u8; 3]> = Vec::with_capacity(256);
    let mut indices = Vec::with_capacity(rgb.len() / 3);
    let n = rgb.len() / 3;
    let mut i = 0;
    while i < n {
        let p = &rgb[3 * i..3 * i + 3];
        let key = rgb24(p);
        let mut slot = (key.wrapping_mul(0x9E37_79B1) >> 22) as usize;
        let index = loop {
            if keys[slot] == key {
                break slot_index[slot];
            }
            if keys[slot] == EMPTY {
                if palette.len() == 256 {
                    return None;
                }
                keys[slot] = key;
                let index = palette.len() as u8;
                slot_index[slot] = index;
                palette.push([p[0], p[1], p[2]]);
                break index;
            }
            slot = (slot + 1) & 1023;
        };
        let run = run_len(rgb, i);
        indices.resize(indices.len() + run, index);
        i += run;
    }
    Some(Indexed {
        palette,
        indices,
        mse: 0.0,
    })
}

/// How many pixels from pixel `i` on (itself included) have its colour. Screen content
/// is mostly long runs of one colour; a block of pixels equal to the block one pixel
/// before it continues the run, which a vector compare finds many pixels at a time.
#[inline]
fn run_len(rgb: &[u8], i: usize) -> usize {
    const BLOCK: usize = 8;
    const SHORT: usize = 4;
    let n = rgb.len() / 3;
    let c = rgb24(&rgb[3 * i..3 * i + 3]);
    let same = |j: usize| rgb24(&rgb[3 * j..3 * j + 3]) == c;
    // Short runs (text, edges) end within a few pixels, found one at a time.
    let mut j = i + 1;
    while j < n && j < i + SHORT && same(j) {
        j += 1;
    }
    if j < i + SHORT {
        return j - i;
    }
    let word = |at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&rgb[at..at + 8]);
        u64::from_ne_bytes(w)
    };
    // Eight pixels are three words; each equal to the words a pixel before.
    while j + BLOCK <= n {
        let (at, before) = (3 * j, 3 * (j - 1));
        let differ = (word(at) ^ word(before))
            | (word(at + 8) ^ word(before + 8))
            | (word(at + 16) ^ word(before + 16));
        if differ != 0 {
            break;
        }
        j += BLOCK;
    }
    while j < n && same(j) {
        j += 1;
    }
    j - i
}

const BINS: usize = 1 << 15;

#[inline]
fn rgb24(p: &[u8]) -> u32 {
    (p[0] as u32) << 16 | (p[1] as u32) << 8 | p[2] as u32
}

/// The 15-bit histogram bin of a 24-bit colour.
#[inline]
fn bin24(c: u32) -> usize {
    ((c >> 9 & 0x7C00) | (c >> 6 & 0x03E0) | (c >> 3 & 0x001F)) as usize
}

/// A channel value of the padding past a palette's last colour: far enough that no
/// colour is nearer to it than to a real one.
const FAR: i32 = 10_000;

/// Palette sizes tried, smallest first: fewer colours make smaller files.
const SIZES: [usize; 4] = [32, 64, 128, 256];

/// The error (mean squared, per channel) below which a smaller palette is as good as a
/// larger one to the eye: about 48 dB PSNR.
pub const NEAR_LOSSLESS_MSE: f64 = 1.0;

/// Beyond this many used histogram bins the content is not flat screen content; only
/// the full palette is tried (the search is bins × 256).
const SEARCH_BINS: usize = 4096;

/// At most 256 colours for any image, as few as keep it near-lossless
/// (a mean squared error of at most 1 per channel), with the error it costs. `None` for images of more than 16
/// million pixels (the histogram's sums would overflow).
pub fn quantize(rgb: &[u8]) -> Option<Indexed> {
    let n = rgb.len() / 3;
    if n >= MAX_PIXELS {
        return None;
    }
    // The two halves of the image are counted on two cores, then added up.
    let (head, tail) = rgb.split_at(n / 2 * 3);
    let (mut hist, tail_hist) = split::both(rgb.len(), || histogram(head), || histogram(tail));
    add(&mut hist, &tail_hist);
    let choice = Choice::new(&hist, n);
    let mut indices = vec![0u8; n];
    let (top, bottom) = indices.split_at_mut(n / 2);
    split::both(
        rgb.len(),
        || index(head, &choice.lut, top),
        || index(tail, &choice.lut, bottom),
    );
    Some(Indexed {
        palette: choice.palette,
        indices,
        mse: choice.mse,
    })
}

/// Images of this many pixels or more are not quantized: the histogram's sums would
/// overflow.
pub(super) const MAX_PIXELS: usize = 1 << 24;

/// Adds histogram `other` into `hist`.
pub(super) fn add(hist: &mut [[u32; 4]], other: &[[u32; 4]]) {
    for (h, t) in hist.iter_mut().zip(other) {
        for k in 0..4 {
            h[k] += t[k];
        }
    }
}

/// A quantized palette chosen from a histogram, and the palette index of every bin.
pub(super) struct Choice {
    pub palette: Vec<[u8; 3]>,
    /// Per 15-bit bin, its palette index.
    pub lut: Vec<u8>,
    pub mse: f64,
}

impl Choice {
    /// The palette of the image whose histogram of `n` pixels is `hist`: its most popular
    /// bins, as few as keep it near-lossless.
    pub fn new(hist: &[[u32; 4]], n: usize) -> Choice {
        let used = ranked(hist);
        let palette = popular(hist, &used);
        // For every bin past a size, its nearest colour within each palette prefix and
        // the error that costs.
        let sizes: &[usize] = if used.len() > SEARCH_BINS {
            &SIZES[3..]
        } else {
            &SIZES
        };
        let mut err = [0u64; 4];
        let mut nearest = vec![[0u8; 4]; used.len()];
        // The palette by channel, padded far away, so that the distances to all 256
        // entries are computed side by side in vector registers.
        let mut channels = [[FAR; 256]; 3];
        for (j, c) in palette.iter().enumerate() {
            for k in 0..3 {
                channels[k][j] = c[k] as i32;
            }
        }
        let mut d = [0u32; 256];
        for (rank, &(count, i)) in used.iter().enumerate() {
            if rank < sizes[0] {
                // A chosen colour maps to itself in every prefix holding it.
                nearest[rank] = [rank as u8; 4];
                continue;
            }
            let m = mean(hist, i).map(|v| v as i32);
            for (j, dj) in d.iter_mut().enumerate() {
                let (r, g, b) = (
                    m[0] - channels[0][j],
                    m[1] - channels[1][j],
                    m[2] - channels[2][j],
                );
                *dj = (r * r + g * g + b * b) as u32;
            }
            // The nearest entry of each prefix (the first of equals), from the nearest
            // of each new stretch of it.
            let (mut best, mut start) = ((u32::MAX, 0usize), 0);
            for (k, &size) in sizes.iter().enumerate() {
                let stretch = &d[start..size];
                let min = stretch.iter().copied().min().unwrap_or(u32::MAX);
                if min < best.0 {
                    let at = stretch.iter().position(|&v| v == min).unwrap_or(0);
                    best = (min, start + at);
                }
                start = size;
                let (cost, index) = if rank < size { (0, rank) } else { best };
                nearest[rank][k] = index as u8;
                err[k] += cost as u64 * count as u64;
            }
        }
        let mse = |k: usize| err[k] as f64 / (n.max(1) as f64 * 3.0);
        let pick = (0..sizes.len())
            .find(|&k| mse(k) <= NEAR_LOSSLESS_MSE)
            .unwrap_or(sizes.len() - 1);
        let size = sizes[pick].min(palette.len());
        let mut lut = vec![0u8; BINS];
        for (rank, &(_, i)) in used.iter().enumerate() {
            lut[i] = nearest[rank][pick];
        }
        Choice {
            palette: palette[..size].to_vec(),
            lut,
            mse: mse(pick),
        }
    }
}

/// The used bins of a histogram as (pixels, bin), the most popular first (of equals,
/// the lower bin).
fn ranked(hist: &[[u32; 4]]) -> Vec<(u32, usize)> {
    let mut used: Vec<(u32, usize)> = hist
        .iter()
        .enumerate()
        .filter(|(_, h)| h[0] > 0)
        .map(|(i, h)| (h[0], i))
        .collect();
    used.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    used
}

/// The mean colour of bin `i`'s pixels.
fn mean(hist: &[[u32; 4]], i: usize) -> [u32; 3] {
    let h = hist[i];
    let c = h[0].max(1);
    [(h[1] + c / 2) / c, (h[2] + c / 2) / c, (h[3] + c / 2) / c]
}

/// The full palette: the mean colours of the 256 most popular of the `used` bins.
fn popular(hist: &[[u32; 4]], used: &[(u32, usize)]) -> Vec<[u8; 3]> {
    used.iter()
        .take(256)
        .map(|&(_, i)| mean(hist, i).map(|v| v as u8))
        .collect()
}

/// The histogram of an image already given its exact palette (the same as
/// [`histogram`] of its pixels, without reading them again).
pub(super) fn histogram_of(ix: &Indexed) -> Vec<[u32; 4]> {
    let mut counts = [0u32; 256];
    for &k in &ix.indices {
        counts[k as usize] += 1;
    }
    let mut hist = vec![[0u32; 4]; BINS];
    for (p, &count) in ix.palette.iter().zip(&counts) {
        let h = &mut hist[bin24(rgb24(p))];
        h[0] += count;
        for k in 0..3 {
            h[k + 1] += p[k] as u32 * count;
        }
    }
    hist
}

/// Per 15-bit bin: the pixel count, then the sums of red, green and blue. Runs of one
/// colour (most of a screen) are added once.
pub(super) fn histogram(rgb: &[u8]) -> Vec<[u32; 4]> {
    histogram_and_runs(rgb, false).0
}

/// The [`histogram`], and (`keep_runs`) the lengths of the runs of one colour in order
/// when they are few enough to be worth keeping (screen content, not noise), so that
/// indexing the pixels does not look for them again.
pub(super) fn histogram_and_runs(rgb: &[u8], keep_runs: bool) -> (Vec<[u32; 4]>, Option<Vec<u32>>) {
    let mut hist = vec![[0u32; 4]; BINS];
    let n = rgb.len() / 3;
    let max_runs = if keep_runs { n / MIN_MEAN_RUN } else { 0 };
    let mut runs = Vec::new();
    let mut i = 0;
    while i < n {
        let run = run_len(rgb, i);
        let c = rgb24(&rgb[3 * i..3 * i + 3]);
        let h = &mut hist[bin24(c)];
        let run32 = run as u32;
        h[0] += run32;
        h[1] += (c >> 16) * run32;
        h[2] += (c >> 8 & 0xFF) * run32;
        h[3] += (c & 0xFF) * run32;
        if keep_runs {
            if runs.len() == max_runs {
                // Too many to be worth keeping: the rest is counted without them.
                return (finish(hist, rgb, i + run), None);
            }
            runs.push(run32);
        }
        i += run;
    }
    (hist, keep_runs.then_some(runs))
}

/// Runs shorter than this on average are not kept (see [`histogram_and_runs`]).
const MIN_MEAN_RUN: usize = 4;

/// `hist` completed from pixel `from` on, without keeping runs.
fn finish(mut hist: Vec<[u32; 4]>, rgb: &[u8], from: usize) -> Vec<[u32; 4]> {
    let rest = histogram(&rgb[3 * from.min(rgb.len() / 3)..]);
    add(&mut hist, &rest);
    hist
}

/// The palette index of every pixel of `rgb` into `out` through the bins' `lut`, the
/// runs of one colour already known (`runs`, as [`histogram_and_runs`] found them).
pub(super) fn index_runs(rgb: &[u8], lut: &[u8], runs: &[u32], out: &mut [u8]) {
    let mut at = 0;
    for &run in runs {
        let run = run as usize;
        if at + run > out.len() || 3 * at + 3 > rgb.len() {
            break;
        }
        out[at..at + run].fill(lut[bin24(rgb24(&rgb[3 * at..3 * at + 3]))]);
        at += run;
    }
}

/// The palette index of every pixel of `rgb` into `out`, through the bins' `lut`.
pub(super) fn index(rgb: &[u8], lut: &[u8], out: &mut [u8]) {
    let n = (rgb.len() / 3).min(out.len());
    let mut i = 0;
    while i < n {
        let run = run_len(rgb, i).min(n - i);
        out[i..i + run].fill(lut[bin24(rgb24(&rgb[3 * i..3 * i + 3]))]);
        i += run;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(n: usize, colour: impl FnMut(usize) -> [u8; 3]) -> Vec<u8> {
        (0..n).flat_map(colour).collect()
    }

    /// `n` pixels of xorshift noise from `seed`.
    fn noise(n: usize, seed: u32) -> Vec<u8> {
        let mut x = seed;
        image(n, |_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            [x as u8, (x >> 8) as u8, (x >> 16) as u8]
        })
    }

    fn dist(a: [u32; 3], b: [u8; 3]) -> u32 {
        let d = |x: u32, y: u8| {
            let v = x as i32 - y as i32;
            (v * v) as u32
        };
        d(a[0], b[0]) + d(a[1], b[1]) + d(a[2], b[2])
    }

    /// The nearest colour of every bin within each palette prefix, one distance at a
    /// time: what the vectorized search must find.
    fn plain_nearest(hist: &[[u32; 4]], sizes: &[usize]) -> Vec<[u8; 4]> {
        let used = ranked(hist);
        let palette = popular(hist, &used);
        let mut nearest = vec![[0u8; 4]; used.len()];
        for (rank, &(_, i)) in used.iter().enumerate() {
            let m = mean(hist, i);
            for (k, &size) in sizes.iter().enumerate() {
                nearest[rank][k] = if rank < size {
                    rank as u8
                } else {
                    let mut best = (u32::MAX, 0);
                    for (j, c) in palette.iter().take(size).enumerate() {
                        if dist(m, *c) < best.0 {
                            best = (dist(m, *c), j);
                        }
                    }
                    best.1 as u8
                };
            }
        }
        nearest
    }

    #[test]
    fn the_vectorized_search_finds_the_nearest_colours() {
        // Histograms of 40, 300 and 3000 used bins (ties of equal counts included).
        let mut x = 4242u32;
        for bins in [40usize, 300, 3000] {
            let mut hist = vec![[0u32; 4]; BINS];
            for _ in 0..bins {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                let bin = (x as usize) % BINS;
                let count = 1 + (x >> 20) % 50;
                let (r, g, b) = (
                    (bin >> 10) as u32 * 8,
                    (bin >> 5 & 31) as u32 * 8,
                    (bin & 31) as u32 * 8,
                );
                hist[bin] = [count, r * count, g * count, b * count];
            }
            let n: u32 = hist.iter().map(|h| h[0]).sum();
            let choice = Choice::new(&hist, n as usize);
            let want = plain_nearest(&hist, &SIZES);
            let k = SIZES
                .iter()
                .position(|&s| s >= choice.palette.len())
                .unwrap_or(3);
            for (rank, &(_, i)) in ranked(&hist).iter().enumerate() {
                assert_eq!(choice.lut[i], want[rank][k], "{bins} bins, rank {rank}");
            }
        }
    }

    #[test]
    fn runs_are_found_across_blocks_and_at_the_end() {
        // Runs of 1 to 40 pixels, each of another colour than the one before.
        let mut rgb = Vec::new();
        for k in 0..200u32 {
            let len = (k * 7 % 40 + 1) as usize;
            let c = if k % 5 == 0 {
                [9, 9, 9]
            } else {
                [k as u8, 3, 200]
            };
            for _ in 0..len {
                rgb.extend_from_slice(&c);
            }
        }
        let n = rgb.len() / 3;
        for i in 0..n {
            let naive = (i..n)
                .take_while(|&j| rgb[3 * j..3 * j + 3] == rgb[3 * i..3 * i + 3])
                .count();
            assert_eq!(run_len(&rgb, i), naive, "pixel {i}");
        }
    }

    #[test]
    fn runs_kept_with_the_histogram_index_as_the_pixels_do() {
        let screen = image(30_000, |i| match i % 300 {
            0..=199 => [250, 250, 250],
            200..=210 => [(i % 7) as u8 * 30, 60, 90],
            _ => [20, 20, 30],
        });
        let noise = noise(30_000, 5);
        let lut: Vec<u8> = (0..BINS).map(|b| (b % 251) as u8).collect();
        for (rgb, kept) in [(&screen, true), (&noise, false)] {
            let (hist, runs) = histogram_and_runs(rgb, true);
            assert_eq!(hist, histogram(rgb));
            assert_eq!(runs.is_some(), kept);
            if let Some(runs) = runs {
                assert_eq!(runs.iter().map(|&r| r as usize).sum::<usize>(), 30_000);
                let (mut plain, mut from_runs) = (vec![0u8; 30_000], vec![0u8; 30_000]);
                index(rgb, &lut, &mut plain);
                index_runs(rgb, &lut, &runs, &mut from_runs);
                assert_eq!(plain, from_runs);
            }
        }
    }

    #[test]
    fn few_colours_give_an_exact_palette() {
        let rgb = image(1000, |i| [(i % 7) as u8 * 30, 5, 200]);
        let ix = exact(&rgb).expect("7 colours");
        assert_eq!(ix.palette.len(), 7);
        let back: Vec<u8> = ix
            .indices
            .iter()
            .flat_map(|&k| ix.palette[k as usize])
            .collect();
        assert_eq!(back, rgb);
    }

    #[test]
    fn the_257th_colour_ends_the_exact_palette() {
        let rgb = image(257, |i| [(i % 256) as u8, (i / 256) as u8, 0]);
        assert!(exact(&rgb).is_none());
        assert!(exact(&rgb[..256 * 3]).is_some());
    }

    #[test]
    fn quantizing_keeps_the_popular_colours_exactly() {
        // Two flat colours with a thin gradient of blends between them.
        let rgb = image(20_000, |i| match i % 100 {
            0..=44 => [250, 250, 250],
            45..=89 => [30, 60, 200],
            k => [(k * 2) as u8, 100, (k * 2) as u8],
        });
        let q = quantize(&rgb).expect("small image");
        assert!(q.palette.len() <= 256);
        assert!(q.palette.contains(&[250, 250, 250]));
        assert!(q.palette.contains(&[30, 60, 200]));
        assert_eq!(q.indices.len(), 20_000);
        assert!(q.mse < 10.0, "{}", q.mse);
    }

    #[test]
    fn noise_costs_a_large_error() {
        let rgb = noise(100_000, 12345);
        let q = quantize(&rgb).expect("small image");
        assert!(q.mse > 50.0, "{}", q.mse);
    }
}
