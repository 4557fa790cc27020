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
    let mut last_key = EMPTY;
    let mut last_index = 0u8;
    for p in rgb.chunks_exact(3) {
        let key = (p[0] as u32) << 16 | (p[1] as u32) << 8 | p[2] as u32;
        if key != last_key {
            let mut slot = (key.wrapping_mul(0x9E37_79B1) >> 22) as usize;
            loop {
                if keys[slot] == key {
                    last_index = slot_index[slot];
                    break;
                }
                if keys[slot] == EMPTY {
                    if palette.len() == 256 {
                        return None;
                    }
                    keys[slot] = key;
                    last_index = palette.len() as u8;
                    slot_index[slot] = last_index;
                    palette.push([p[0], p[1], p[2]]);
                    break;
                }
                slot = (slot + 1) & 1023;
            }
            last_key = key;
        }
        indices.push(last_index);
    }
    Some(Indexed {
        palette,
        indices,
        mse: 0.0,
    })
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

fn dist(a: [u32; 3], b: [u8; 3]) -> u32 {
    let d = |x: u32, y: u8| {
        let v = x as i32 - y as i32;
        (v * v) as u32
    };
    d(a[0], b[0]) + d(a[1], b[1]) + d(a[2], b[2])
}

/// Palette sizes tried, smallest first: fewer colours make smaller files.
const SIZES: [usize; 4] = [32, 64, 128, 256];

/// The error (mean squared, per channel) below which a smaller palette is as good as a
/// larger one to the eye: about 48 dB PSNR.
pub const NEAR_LOSSLESS_MSE: f64 = 1.0;

/// Beyond this many used histogram bins the content is not flat screen content; only
/// the full palette is tried (the search is bins × 256).
const SEARCH_BINS: usize = 4096;

/// At most 256 colours for any image, as few as keep it near-lossless
/// ([`NEAR_LOSSLESS_MSE`]), with the error it costs. `None` for images of more than 16
/// million pixels (the histogram's sums would overflow).
pub fn quantize(rgb: &[u8]) -> Option<Indexed> {
    let n = rgb.len() / 3;
    if n >= 1 << 24 {
        return None;
    }
    // The two halves of the image are counted on two cores, then added up.
    let (head, tail) = rgb.split_at(n / 2 * 3);
    let (mut hist, tail_hist) = split::both(rgb.len(), || histogram(head), || histogram(tail));
    for (h, t) in hist.iter_mut().zip(&tail_hist) {
        for k in 0..4 {
            h[k] += t[k];
        }
    }
    let mut used: Vec<(u32, usize)> = hist
        .iter()
        .enumerate()
        .filter(|(_, h)| h[0] > 0)
        .map(|(i, h)| (h[0], i))
        .collect();
    used.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mean = |i: usize| {
        let h = hist[i];
        let c = h[0].max(1);
        [(h[1] + c / 2) / c, (h[2] + c / 2) / c, (h[3] + c / 2) / c]
    };
    let palette: Vec<[u8; 3]> = used
        .iter()
        .take(256)
        .map(|&(_, i)| mean(i).map(|v| v as u8))
        .collect();
    // For every bin past a size, its nearest colour within each palette prefix and
    // the error that costs.
    let sizes: &[usize] = if used.len() > SEARCH_BINS {
        &SIZES[3..]
    } else {
        &SIZES
    };
    let mut err = [0u64; 4];
    let mut nearest = vec![[0u8; 4]; used.len()];
    for (rank, &(count, i)) in used.iter().enumerate() {
        let m = mean(i);
        let mut best = (u32::MAX, 0usize);
        let mut prefix = 0;
        for (j, c) in palette.iter().enumerate() {
            if j == sizes[prefix] {
                nearest[rank][prefix] = best.1 as u8;
                err[prefix] += best.0 as u64 * count as u64;
                prefix += 1;
            }
            if rank < sizes[prefix] && j == rank {
                // A chosen colour maps to itself in every prefix holding it.
                best = (0, j);
                break;
            }
            let d = dist(m, *c);
            if d < best.0 {
                best = (d, j);
            }
        }
        while prefix < sizes.len() {
            nearest[rank][prefix] = best.1 as u8;
            err[prefix] += best.0 as u64 * count as u64;
            prefix += 1;
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
    let mut indices = vec![0u8; n];
    let (top, bottom) = indices.split_at_mut(n / 2);
    split::both(
        rgb.len(),
        || index(head, &lut, top),
        || index(tail, &lut, bottom),
    );
    Some(Indexed {
        palette: palette[..size].to_vec(),
        indices,
        mse: mse(pick),
    })
}

/// Per 15-bit bin: the pixel count, then the sums of red, green and blue. Runs of one
/// colour (most of a screen) are added once.
fn histogram(rgb: &[u8]) -> Vec<[u32; 4]> {
    let mut hist = vec![[0u32; 4]; BINS];
    let mut add = |c: u32, run: u32| {
        let h = &mut hist[bin24(c)];
        h[0] += run;
        h[1] += (c >> 16) * run;
        h[2] += (c >> 8 & 0xFF) * run;
        h[3] += (c & 0xFF) * run;
    };
    let mut pixels = rgb.chunks_exact(3).map(rgb24);
    if let Some(first) = pixels.next() {
        let (mut cur, mut run) = (first, 1u32);
        for c in pixels {
            if c == cur {
                run += 1;
            } else {
                add(cur, run);
                (cur, run) = (c, 1);
            }
        }
        add(cur, run);
    }
    hist
}

/// The palette index of every pixel of `rgb` into `out`, through the bins' `lut`.
fn index(rgb: &[u8], lut: &[u8], out: &mut [u8]) {
    let (mut last, mut last_index) = (u32::MAX, 0u8);
    for (c, o) in rgb.chunks_exact(3).map(rgb24).zip(out) {
        if c != last {
            (last, last_index) = (c, lut[bin24(c)]);
        }
        *o = last_index;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(n: usize, colour: impl FnMut(usize) -> [u8; 3]) -> Vec<u8> {
        (0..n).flat_map(colour).collect()
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
        let mut x = 12345u32;
        let rgb = image(100_000, |_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            [x as u8, (x >> 8) as u8, (x >> 16) as u8]
        });
        let q = quantize(&rgb).expect("small image");
        assert!(q.mse > 50.0, "{}", q.mse);
    }
}
