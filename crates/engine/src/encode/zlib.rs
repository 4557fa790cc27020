//! zlib streams for PNG image data, compressed in two halves on two cores.
//!
//! A deflate stream may be cut anywhere into pieces compressed independently: every
//! piece but the last ends in a sync flush (its blocks end on a byte with an empty
//! stored block and none is marked final), so the pieces joined are one valid stream,
//! and a decoder reads the same bytes as from an unsplit one. The second half loses
//! the first half as a dictionary, which costs well under 1 % on a screen. The zlib
//! checksum (Adler-32) of the whole is combined from the halves'.

use flate2::{Compress, Compression, FlushCompress, Status};

use super::split;

/// The zlib stream of `data` at `level` (0–9), cut at `cut` (a byte offset; 0 or past
/// the end: unsplit), the halves compressed on two cores when the machine has them.
/// Where it is cut depends on the caller alone, so the bytes do not depend on the
/// machine.
pub fn zlib(data: &[u8], level: u32, cut: usize) -> Result<Vec<u8>, String> {
    let cut = if cut == 0 {
        data.len()
    } else {
        cut.min(data.len())
    };
    let (head, tail) = data.split_at(cut);
    let ((a, adler_a), (b, adler_b)) = split::both(
        data.len(),
        || piece(head, level, tail.is_empty()),
        || piece(tail, level, true),
    );
    let (a, b) = (a?, b?);
    let adler = zlib_rs::adler32::adler32_combine(adler_a, adler_b, tail.len() as u64);
    let mut out = Vec::with_capacity(2 + a.len() + b.len() + 4);
    // CMF: deflate with a 32 KiB window; FLG: no dictionary, check bits.
    out.extend_from_slice(&[0x78, 0x5E]);
    out.extend_from_slice(&a);
    if !tail.is_empty() {
        out.extend_from_slice(&b);
    }
    out.extend_from_slice(&adler.to_be_bytes());
    Ok(out)
}

/// Raw deflate of one piece, ending in a sync flush or (`last`) a final block, and the
/// piece's Adler-32.
fn piece(data: &[u8], level: u32, last: bool) -> (Result<Vec<u8>, String>, u32) {
    let adler = zlib_rs::adler32::adler32(1, data);
    (deflate(data, level, last), adler)
}

fn deflate(data: &[u8], level: u32, last: bool) -> Result<Vec<u8>, String> {
    let mut c = Compress::new(Compression::new(level.min(9)), false);
    let flush = if last {
        FlushCompress::Finish
    } else {
        FlushCompress::Sync
    };
    let mut out = Vec::with_capacity(data.len() / 8 + 64);
    loop {
        if out.len() == out.capacity() {
            out.reserve(out.capacity().max(4096));
        }
        let done = c.total_in() as usize;
        let status = c
            .compress_vec(&data[done..], &mut out, flush)
            .map_err(|e| format!("deflate: {e}"))?;
        let all_in = c.total_in() as usize == data.len();
        // A sync flush is complete when all input is in and output room is left over.
        match status {
            Status::StreamEnd => return Ok(out),
            Status::Ok | Status::BufError if !last && all_in && out.len() < out.capacity() => {
                return Ok(out);
            }
            Status::Ok | Status::BufError => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn inflate(z: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        flate2::read::ZlibDecoder::new(z)
            .read_to_end(&mut out)
            .expect("a valid zlib stream");
        out
    }

    /// Bytes like palette rows: runs, repeats at a distance, some noise.
    fn rows(n: usize) -> Vec<u8> {
        let mut x = 99u32;
        (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                match i % 1500 {
                    0..=900 => 3,
                    901..=1200 => (i / 7 % 16) as u8,
                    _ => x as u8,
                }
            })
            .collect()
    }

    #[test]
    fn a_split_stream_inflates_to_the_same_bytes() {
        let data = rows(1_200_000);
        for cut in [0, 1, 600_000, 1_199_999, 1_200_000, usize::MAX] {
            let z = zlib(&data, 5, cut).unwrap();
            assert_eq!(inflate(&z), data, "cut at {cut}");
        }
    }

    #[test]
    fn splitting_costs_little() {
        let data = rows(1_200_000);
        let whole = zlib(&data, 5, usize::MAX).unwrap().len();
        let halves = zlib(&data, 5, 600_000).unwrap().len();
        assert!(halves * 100 <= whole * 101, "{halves} vs {whole}");
    }

    #[test]
    fn empty_and_tiny_inputs() {
        for data in [&[][..], &[7][..], &[1, 2, 3][..]] {
            assert_eq!(inflate(&zlib(data, 5, 1).unwrap()), data);
        }
    }
}
