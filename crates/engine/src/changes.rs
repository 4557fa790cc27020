//! Where two captures of the same area differ, as a few rectangles: tiles whose pixels
//! changed, grouped into connected boxes. A capture is remembered as one hash per tile
//! ([`Fingerprint`]), not as its pixels: 64 KiB instead of 6 MB at 1080p, which is most
//! of what the server would otherwise keep between captures.

use std::hash::{BuildHasher, Hasher};
use std::sync::LazyLock;

use cc_desktop::RgbImage;
use cc_protocol::PhysicalRect;

/// Tile side in physical pixels: small enough to box a changed word, large enough that
/// a typical change is a handful of boxes.
const TILE: u32 = 16;

/// At most this many boxes; more changes are answered as their bounding box.
pub const MAX_BOXES: usize = 32;

/// One seeded hash for the whole process, so fingerprints taken at different times
/// compare; seeded at random, so no screen content can be chosen to collide.
static TILE_HASH: LazyLock<foldhash::quality::RandomState> = LazyLock::new(Default::default);

/// What is remembered of a capture: its size and a 64-bit hash of each tile's pixels.
/// Two captures with equal fingerprints show the same pixels (up to a 2⁻⁶⁴ chance per
/// tile); unequal tiles are where they differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    width: u32,
    height: u32,
    tiles: Vec<u64>,
}

impl Fingerprint {
    /// Hashes `img` tile by tile, one pass over its rows.
    pub fn of(img: &RgbImage) -> Fingerprint {
        let (w, h) = (img.width as usize, img.height as usize);
        let t = TILE as usize;
        let tw = w.div_ceil(t);
        let row = w * 3;
        let mut tiles = Vec::with_capacity(tw * h.div_ceil(t));
        let mut band: Vec<_> = (0..tw).map(|_| TILE_HASH.build_hasher()).collect();
        for (y, line) in img.pixels.chunks_exact(row.max(1)).take(h).enumerate() {
            for (hasher, part) in band.iter_mut().zip(line.chunks(t * 3)) {
                hasher.write(part);
            }
            if (y + 1) % t == 0 || y + 1 == h {
                for hasher in &mut band {
                    tiles.push(hasher.finish());
                    *hasher = TILE_HASH.build_hasher();
                }
            }
        }
        Fingerprint {
            width: img.width,
            height: img.height,
            tiles,
        }
    }
}

/// The changed rectangles between two captures of `area` (same size), in physical
/// pixels. Empty when nothing changed; one box covering `area` when the sizes differ.
pub fn changed_boxes(
    before: &Fingerprint,
    after: &Fingerprint,
    area: &PhysicalRect,
) -> Vec<PhysicalRect> {
    if (before.width, before.height) != (after.width, after.height)
        || before.tiles.len() != after.tiles.len()
    {
        return vec![*area];
    }
    let (w, h) = (after.width, after.height);
    let (tw, th) = (w.div_ceil(TILE) as usize, h.div_ceil(TILE) as usize);
    let mut dirty: Vec<bool> = before
        .tiles
        .iter()
        .zip(&after.tiles)
        .map(|(a, b)| a != b)
        .collect();
    // Connected groups of dirty tiles (8-neighbourhood), each as its bounding box.
    let mut boxes: Vec<(usize, usize, usize, usize)> = Vec::new();
    let mut stack = Vec::new();
    for start in 0..dirty.len() {
        if !dirty[start] {
            continue;
        }
        dirty[start] = false;
        stack.push(start);
        let (mut x0, mut y0, mut x1, mut y1) = (tw, th, 0, 0);
        while let Some(i) = stack.pop() {
            let (x, y) = (i % tw, i / tw);
            (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x), y1.max(y));
            for ny in y.saturating_sub(1)..=(y + 1).min(th - 1) {
                for nx in x.saturating_sub(1)..=(x + 1).min(tw - 1) {
                    let j = ny * tw + nx;
                    if dirty[j] {
                        dirty[j] = false;
                        stack.push(j);
                    }
                }
            }
        }
        boxes.push((x0, y0, x1, y1));
    }
    if boxes.len() > MAX_BOXES {
        let all = boxes.iter().fold((tw, th, 0, 0), |a, b| {
            (a.0.min(b.0), a.1.min(b.1), a.2.max(b.2), a.3.max(b.3))
        });
        boxes = vec![all];
    }
    let t = TILE as usize;
    boxes
        .into_iter()
        .map(|(x0, y0, x1, y1)| {
            let (px0, py0) = (x0 * t, y0 * t);
            let (px1, py1) = (
                ((x1 + 1) * t).min(w as usize),
                ((y1 + 1) * t).min(h as usize),
            );
            PhysicalRect {
                x: area.x + px0 as i32,
                y: area.y + py0 as i32,
                width: (px1 - px0) as u32,
                height: (py1 - py0) as u32,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const AREA: PhysicalRect = PhysicalRect {
        x: 100,
        y: 50,
        width: 200,
        height: 100,
    };

    fn fp(img: &RgbImage) -> Fingerprint {
        Fingerprint::of(img)
    }

    #[test]
    fn a_fingerprint_tells_equal_images_from_a_one_bit_change_anywhere() {
        // 37×21: tiles cut at the right and bottom edges are hashed too.
        let a = RgbImage::new(37, 21);
        assert_eq!(fp(&a), fp(&a.clone()));
        for i in [0, 47, 48, 3 * 37 * 16, a.pixels.len() - 1] {
            let mut b = a.clone();
            b.pixels[i] ^= 1;
            assert_ne!(fp(&a), fp(&b), "byte {i}");
        }
        // The same bytes at another width are another image.
        let mut wide = RgbImage::new(21, 37);
        wide.pixels.clone_from(&a.pixels);
        assert_ne!(fp(&a), fp(&wide));
    }

    fn paint(img: &mut RgbImage, x0: u32, y0: u32, w: u32, h: u32) {
        for y in y0..y0 + h {
            for x in x0..x0 + w {
                let i = ((y * img.width + x) * 3) as usize;
                img.pixels[i] = 255;
            }
        }
    }

    #[test]
    fn no_change_no_boxes() {
        let a = RgbImage::new(200, 100);
        assert!(changed_boxes(&fp(&a), &fp(&a.clone()), &AREA).is_empty());
    }

    #[test]
    fn two_separate_changes_make_two_tile_aligned_boxes() {
        let a = RgbImage::new(200, 100);
        let mut b = a.clone();
        paint(&mut b, 5, 5, 3, 3);
        paint(&mut b, 150, 70, 40, 20);
        let mut boxes = changed_boxes(&fp(&a), &fp(&b), &AREA);
        boxes.sort_by_key(|r| (r.x, r.y));
        assert_eq!(
            boxes,
            vec![
                PhysicalRect {
                    x: 100,
                    y: 50,
                    width: 16,
                    height: 16
                },
                PhysicalRect {
                    x: 244,
                    y: 114,
                    width: 48,
                    height: 32
                },
            ]
        );
    }

    #[test]
    fn many_changes_become_one_box_and_other_sizes_the_whole_area() {
        let a = RgbImage::new(200, 100);
        let mut b = a.clone();
        for i in 0..6 {
            for j in 0..3 {
                paint(&mut b, i * 33, j * 33, 1, 1);
            }
        }
        assert_eq!(changed_boxes(&fp(&a), &fp(&b), &AREA).len(), 18);
        let wide = RgbImage::new(400, 100);
        let mut c = wide.clone();
        for i in 0..12 {
            for j in 0..3 {
                paint(&mut c, 40 + i * 32, 20 + j * 32, 1, 1);
            }
        }
        assert_eq!(
            changed_boxes(&fp(&wide), &fp(&c), &AREA),
            vec![PhysicalRect {
                x: 132,
                y: 66,
                width: 368,
                height: 80
            }]
        );
        assert_eq!(
            changed_boxes(&fp(&a), &fp(&RgbImage::new(10, 10)), &AREA),
            vec![AREA]
        );
    }
}
