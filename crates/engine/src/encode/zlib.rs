//! zlib streams for PNG image data, compressed in pieces on two cores.
//!
//! A deflate stream may be cut anywhere into pieces compressed independently: every
//! piece but the last ends in a sync flush (its blocks end on a byte with an empty
//! stored block and none is marked final), so the pieces joined are one valid stream,
//! and a decoder reads the same bytes as from an unsplit one. Each piece loses the
//! ones before it as a dictionary, which costs well under 1 % on a screen cut in four.
//! The zlib checksum (Adler-32) of the whole is combined from the pieces'.

use flate2::{Compress, Compression, FlushCompress, Status};

use super::split;

/// The zlib stream of `data` at `level` (0–9), cut at the byte offsets `cuts`
/// (ascending; those at the ends are ignored) into pieces compressed independently, the
/// first half of them here and the rest on a second core when the machine has one.
/// Where it is cut depends on the caller alone, so the bytes do not depend on the
/// machine.
pub fn zlib(data: &[u8], level: u32, cuts: &[usize]) -> Result<Vec<u8>, String> {
    let mut bounds = vec![0];
    for &c in cuts {
        if c > bounds[bounds.len() - 1] && c < data.len() {
            bounds.push(c);
        }
    }
    bounds.push(data.len());
    let count = bounds.len() - 1;
    let compress = |pieces: std::ops::Range<usize>| -> Result<Vec<Piece>, String> {
        pieces
            .map(|k| {
                let slice = &data[bounds[k]..bounds[k + 1]];
                let (bytes, adler) = piece(slice, level, k + 1 == count);
                Ok((bytes?, adler, slice.len()))
            })
            .collect()
    };
    let mid = count / 2;
    let (a, b) = if count == 1 {
        (Ok(Vec::new()), compress(0..1))
    } else {
        split::both(data.len(), || compress(0..mid), || compress(mid..count))
    };
    let mut pieces = a?;
    pieces.extend(b?);
    Ok(join(&pieces))
}

/// Raw deflate of a piece of a stream, its Adler-32 and its length.
pub(super) type Piece = (Vec<u8>, u32, usize);

/// One zlib stream of raw deflate pieces, each with its Adler-32 and input length, in
/// order: every piece but the last ended in a sync flush, the last in a final block.
/// Empty pieces after the first add nothing.
pub(super) fn join(pieces: &[Piece]) -> Vec<u8> {
    let mut out = Vec::with_capacity(6 + pieces.iter().map(|p| p.0.len()).sum::<usize>());
    // CMF: deflate with a 32 KiB window; FLG: no dictionary, check bits.
    out.extend_from_slice(&[0x78, 0x5E]);
    let mut adler = 1;
    for (k, (bytes, piece_adler, len)) in pieces.iter().enumerate() {
        if k == 0 {
            adler = *piece_adler;
        } else if *len > 0 {
            adler = zlib_rs::adler32::adler32_combine(adler, *piece_adler, *len as u64);
        } else {
            continue;
        }
        out.extend_from_slice(bytes);
    }
    out.extend_from_slice(&adler.to_be_bytes());
    out
}

/// Raw deflate of one piece, ending in a sync flush or (`last`) a final block, and the
/// piece's Adler-32.
pub(super) fn piece(data: &[u8], level: u32, last: bool) -> (Result<Vec<u8>, String>, u32) {
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
            let z = zlib(&data, 5, &[cut]).unwrap();
            assert_eq!(inflate(&z), data, "cut at {cut}");
        }
        for cuts in [
            &[300_000, 600_000, 900_000][..],
            &[0, 5, 5, 1_199_999],
            &[7, 3],
        ] {
            let z = zlib(&data, 5, cuts).unwrap();
            assert_eq!(inflate(&z), data, "cuts at {cuts:?}");
        }
    }

    #[test]
    fn splitting_costs_little() {
        let data = rows(1_200_000);
        let whole = zlib(&data, 5, &[]).unwrap().len();
        let halves = zlib(&data, 5, &[600_000]).unwrap().len();
        assert!(halves * 100 <= whole * 101, "{halves} vs {whole}");
        let quarters = zlib(&data, 5, &[300_000, 600_000, 900_000]).unwrap().len();
        assert!(quarters * 100 <= whole * 101, "{quarters} vs {whole}");
    }

    #[test]
    fn empty_and_tiny_inputs() {
        for data in [&[][..], &[7][..], &[1, 2, 3][..]] {
            assert_eq!(inflate(&zlib(data, 5, &[1]).unwrap()), data);
        }
    }
}
